"""Context mixing (analysis/mixing.py) against straightforward, unchunked transcriptions of the
papers' formulas on a tiny BERT run by transformers.BertModel; the decomposition and row
invariants; switched-off heads; the faithfulness scoreboard on the shipped model; the CLI."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from analysis import mixing as M

from analysis import decomposition as DC

from analysis import faithfulness as FA
from model.inter_encoder import InterEncoderConfig
from model.summarizer import Summarizer
from helpers import DOC, tiny_backbone


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Summarizer:
    """A tiny random BertSumExt with random LayerNorm gains and biases (γ, β ≠ 1, 0), so the
    decomposition's γ and β are exercised."""
    d = tiny_backbone(tmp_path_factory.mktemp("tiny_mixing"), layers=2, heads=4, hidden=32)
    s = Summarizer.load(d, inter=InterEncoderConfig(d_model=32, layers=2, heads=4, d_ff=64), device="cpu")
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in s.model.named_parameters():
            if "LayerNorm" in name or "layer_norm" in name:
                p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.3 * torch.randn(p.shape, generator=g))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
    return s


def hf_run(s: Summarizer, enc):
    """transformers.BertModel with our weights: hidden states, attention and each layer's
    attention-block output (BertSelfOutput, after its LayerNorm), recorded by a plain hook."""
    from transformers import BertConfig as HFConfig, BertModel as HFBert

    c = s.model.bert.config
    hf = HFBert(HFConfig(vocab_size=c.vocab_size, hidden_size=c.hidden_size, num_hidden_layers=c.num_hidden_layers,
                         num_attention_heads=c.num_attention_heads, intermediate_size=c.intermediate_size,
                         max_position_embeddings=c.max_position_embeddings, layer_norm_eps=c.layer_norm_eps,
                         attn_implementation="eager")).eval()
    hf.load_state_dict(s.model.bert.state_dict(), strict=False)
    a, b = enc.window(0)
    ids = torch.tensor([enc.input_ids[a:b]])
    outs = []
    hooks = [l.attention.output.register_forward_hook(lambda m, i, o: outs.append(o[0].detach()))
             for l in hf.encoder.layer]
    with torch.no_grad():
        r = hf(input_ids=ids, token_type_ids=torch.tensor([enc.segment_ids[a:b]]),
               attention_mask=torch.ones_like(ids), output_hidden_states=True, output_attentions=True)
    for h in hooks:
        h.remove()
    return hf, [h[0] for h in r.hidden_states], [x[0] for x in r.attentions], outs


def reference_layer(x, A, W_V, b_V, W_O, b_O, gamma, beta, eps, y):
    """The papers' formulas, written out: every α^h_ij f^h(x_j) as a [H, T, T, D] tensor."""
    H, T, _ = A.shape
    D = x.shape[1]
    dh = D // H
    v = (x @ W_V.T + b_V).view(T, H, dh)
    f = torch.stack([v[:, h] @ W_O[:, h * dh:(h + 1) * dh].T for h in range(H)])  # [H, T, D]
    weighted = A[..., None] * f[:, None]  # [H, T_i, T_j, D]
    norm_head, norm_layer = weighted.norm(dim=-1), weighted.sum(0).norm(dim=-1)
    pre = weighted.sum(0) + torch.diag_embed(torch.ones(T))[..., None] * x[None]  # + δ_ij x_i
    u = pre.sum(1) + b_O
    sigma = (u.var(-1, unbiased=False) + eps).sqrt()
    Tv = gamma * (pre - pre.mean(-1, keepdim=True)) / sigma[:, None, None]  # T_i(x_j) [T, T, D]
    bias = gamma * (b_O - b_O.mean()) / sigma[:, None] + beta
    C = (y.abs().sum(-1)[:, None] - (y[:, None] - Tv).abs().sum(-1)).clamp_min(0)
    C = C / C.sum(-1, keepdim=True)
    own = Tv[range(T), range(T)]
    ctx = Tv.sum(1) - own
    ratio = ctx.norm(dim=-1) / (ctx.norm(dim=-1) + own.norm(dim=-1))
    return norm_head, norm_layer, Tv, bias, C, ratio


@torch.no_grad()
def test_bert_measures_equal_the_papers_formulas(tiny):
    enc = tiny.encode(DOC, None)
    hf, hidden, att, outs = hf_run(tiny, enc)
    mix = M.mixing(tiny, enc)
    composed = None
    for l, layer in enumerate(hf.encoder.layer):
        sa, so = layer.attention.self, layer.attention.output
        nh, nl, Tv, bias, C, ratio = reference_layer(
            hidden[l], att[l], sa.value.weight, sa.value.bias, so.dense.weight, so.dense.bias,
            so.LayerNorm.weight, so.LayerNorm.bias, so.LayerNorm.eps, outs[l])
        assert np.allclose(mix.norm_head[l], nh.numpy(), atol=2e-3, rtol=2e-3)  # stored as float16
        assert np.allclose(mix.norm_layer[l], nl.numpy(), atol=1e-5, rtol=1e-4)
        # ‖y‖₁ − ‖y − T‖₁ is a difference of near-equal float32 sums: 5e-5 (measured ≤ 2.2e-5)
        assert np.allclose(mix.alti_layer[l], C.numpy(), atol=5e-5)
        assert np.allclose(mix.mixing_ratio_tokens[l], ratio.numpy(), atol=1e-5)
        # ALTI's decomposition: Σ_j T_i(x_j) is the LayerNorm's output less its bias term
        assert torch.allclose(Tv.sum(1), outs[l] - bias, atol=1e-5)
        composed = C if composed is None else C @ composed
    assert np.allclose(mix.alti_input, composed.numpy(), atol=5e-5)
    assert np.allclose(mix.mixing_ratio, mix.mixing_ratio_tokens.mean(1))


@torch.no_grad()
def test_decomposition_of_our_blocks_matches_the_layernorm_output(tiny):
    """Σ_j T_i(x_j) built from ``Decomposed`` (scale · (Σ_j Σ_h α g + gx)) = y − bias, and y is the
    model's own LayerNorm output, to 1e-5."""
    enc = tiny.encode(DOC, None)
    _, _, _, outs = hf_run(tiny, enc)
    cap = M.capture(tiny, enc)
    for l in range(len(cap.alpha)):
        _, block = M.bert_block(tiny, cap, l)
        total = block.scale[:, None] * (torch.einsum("hij,hjd->id", block.alpha, block.g) + block.gx)
        assert torch.allclose(block.y, outs[l], atol=1e-5)
        assert torch.allclose(total, block.y - block.bias, atol=1e-5)


@torch.no_grad()
def test_sentence_encoder_alti_equals_the_formula(tiny):
    """Pre-LN: y_i = x_i + attention_i, T_i(x_j) = Σ_h α^h_ij f^h(LN x_j) + δ_ij x_i, exactly; the
    attention output from the module itself."""
    enc = tiny.encode(DOC, None)
    cap, mix = M.capture(tiny, enc), M.mixing(tiny, enc)
    ext = tiny.model.ext_layer
    composed = None
    for l, layer in enumerate(ext.transformer_inter):
        x = cap.inter_x[l]
        h = layer.layer_norm(x) if l else x
        att = layer.self_attn
        with torch.no_grad():
            y = x + att(h[None], torch.zeros(1, len(x), dtype=torch.bool))[0]
            H, S, D = att.heads, len(x), x.shape[1]
            dh = D // H
            q = (h @ att.linear_query.weight.T + att.linear_query.bias).view(S, H, dh).transpose(0, 1) / dh ** 0.5
            k = (h @ att.linear_keys.weight.T + att.linear_keys.bias).view(S, H, dh).transpose(0, 1)
            A = torch.softmax(q @ k.transpose(1, 2), -1)
            assert torch.allclose(A, cap.inter_alpha[l], atol=1e-6)
            v = (h @ att.linear_values.weight.T + att.linear_values.bias).view(S, H, dh)
            W = att.final_linear.weight
            f = torch.stack([v[:, i] @ W[:, i * dh:(i + 1) * dh].T for i in range(H)])
            Tv = (A[..., None] * f[:, None]).sum(0) + torch.diag_embed(torch.ones(S))[..., None] * x[None]
            assert torch.allclose(Tv.sum(1) + att.final_linear.bias, y, atol=1e-5)
            C = (y.abs().sum(-1)[:, None] - (y[:, None] - Tv).abs().sum(-1)).clamp_min(0)
            C = C / C.sum(-1, keepdim=True)
        assert np.allclose(mix.inter_alti_layer[l], C.numpy(), atol=1e-5)
        composed = C if composed is None else C @ composed
    assert np.allclose(mix.inter_alti, composed.numpy(), atol=1e-5)


def test_value_zeroing_equals_rerunning_the_layer(tiny):
    """Mohebbi et al.: transformers' layer run again (float64) with token j's value vectors zeroed
    by a hook; cosine distance to the original output, rows normalised."""
    enc = tiny.encode(DOC, None)
    hf, hidden, _, _ = hf_run(tiny, enc)
    hf = hf.double()
    l = 1
    layer = hf.encoder.layer[l]
    x = hidden[l].double()[None]
    with torch.no_grad():
        original = layer(x)[0][0] if isinstance(layer(x), tuple) else layer(x)[0]
        T = x.shape[1]
        ref = torch.zeros(T, T, dtype=torch.float64)
        for j in range(T):
            def zero(m, i, o, j=j):
                o = o.clone()
                o[:, j] = 0
                return o
            h = layer.attention.self.value.register_forward_hook(zero)
            out = layer(x)
            out = out[0] if isinstance(out, tuple) else out
            h.remove()
            ref[:, j] = 1 - F.cosine_similarity(out[0], original, dim=-1)
    C, total = M.value_zeroing(tiny, enc, l)
    assert np.allclose(total, ref.sum(-1).numpy(), rtol=1e-6, atol=1e-12)
    assert np.allclose(C, (ref / ref.sum(-1, keepdim=True)).numpy(), atol=1e-8)
    Ci, ti = M.value_zeroing(tiny, enc, "inter:1")
    assert Ci.shape == (len(enc.cls_positions),) * 2 and np.allclose(Ci.sum(1), 1)


def test_rows_sum_to_one_and_a_switched_off_head_contributes_nothing(tiny):
    enc = tiny.encode(DOC, None)
    off = (("bert", 1, 2), ("inter", 0, 1))
    mix = M.mixing(tiny, enc, mask_heads=off)
    assert np.allclose(mix.alti_layer.sum(-1), 1, atol=1e-5) and np.allclose(mix.alti_input.sum(-1), 1, atol=1e-5)
    assert np.allclose(mix.inter_alti.sum(-1), 1, atol=1e-5)
    assert not mix.norm_head[1, 2].any() and not mix.inter_norm_head[0, 1].any()
    assert mix.norm_head[1, 1].any() and mix.inter_norm_head[0, 0].any()
    on = M.mixing(tiny, enc)
    assert np.allclose(on.norm_head[0], mix.norm_head[0])  # layer 1 is before the switched-off head
    assert not np.allclose(on.alti_layer[1], mix.alti_layer[1])
    T = len(mix.tokens)
    assert mix.norm_head.shape == (2, 4, T, T) and mix.mixing_ratio.shape == (2,)
    assert ((mix.mixing_ratio > 0) & (mix.mixing_ratio < 1)).all()


def test_score_traces_back_to_the_windows_tokens(tiny):
    """ALTI of a sentence's score over the input tokens of its window: a share, summing to the
    composed row's mass on the window's parts (1 when the document is one window)."""
    enc = tiny.encode(DOC, None)
    mix = M.mixing(tiny, enc)
    for p in range(len(mix.parts)):
        r = mix.score_to_tokens(p)
        assert r.shape == (len(mix.tokens),) and (r >= 0).all() and abs(r.sum() - 1) < 1e-4


@torch.no_grad()
def test_chunked_equals_unchunked(tiny):
    enc = tiny.encode(DOC, None)
    cap = M.capture(tiny, enc)
    _, block = M.bert_block(tiny, cap, 0)
    whole, rows = DC.alti(block, chunk_bytes=1 << 40), DC.alti(block, chunk_bytes=1)
    assert torch.allclose(whole, rows, atol=1e-6)


def test_deleting_by_alti_beats_random(summarizer):
    """The scoreboard on the shipped model: deleting ALTI's top tokens lowers a selected
    sentence's score more than deleting random ones (all content tokens), and keeping only them
    keeps more of it; comprehensiveness at a fraction equals a direct rerun without those tokens."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "examples" / "bbc_call_centres.txt").read_text()
    s = summarizer.summarize(text)
    board = FA.faithfulness(summarizer, text, s.selected[0], orders=10, fractions=(0.2, 0.4))
    allt = board["scopes"]["all"]
    assert allt["alti"]["aopc_comprehensiveness"] > allt["random"]["aopc_comprehensiveness"] + \
        2 * allt["random"]["aopc_comprehensiveness_std"]
    assert allt["alti"]["aopc_sufficiency"] < allt["random"]["aopc_sufficiency"]
    assert set(allt) == {"attention", "rollout", "alti", "gradient", "random"}
    assert "other" in board["scopes"] and board["verdict"]
    # one cell by hand: the text with ALTI's top 20% content tokens gone, scored again
    enc = summarizer.encode(text, summarizer.max_windows)
    cap = M.capture(summarizer, enc)
    imp = FA.importances(summarizer, cap, M.mixing(summarizer, cap), s.selected[0])
    a, b = enc.window(0)
    content = np.flatnonzero([t not in ("[CLS]", "[SEP]") for t in enc.tokens[a:b]])
    top = content[np.argsort(-imp["alti"][content], kind="stable")][:round(0.2 * len(content))]
    keep = np.ones(b - a, dtype=bool)
    keep[top] = False
    part = list(enc.input_sentences).index(s.selected[0])
    direct = FA.deleted_scores(summarizer, cap, part, keep[None])[0]
    assert abs((board["score"] - direct) - allt["alti"]["comprehensiveness"][0]) < 1e-5


def test_cli_writes_the_npz_and_the_scoreboard(tiny, tmp_path, capsys):
    from analysis.__main__ import main

    doc = tmp_path / "a.txt"
    doc.write_text(DOC)
    out = tmp_path / "mixing.npz"
    main(["mixing", str(doc), "--backbone", str(tiny_backbone(tmp_path / "bb", layers=2, heads=4, hidden=32)),
          "--sentence", "1", "--value-zeroing", "2", "--orders", "10", "--out", str(out), "--json"])
    result = json.loads(capsys.readouterr().out)
    z = np.load(out)
    T = len(z["tokens"])
    assert z["norm_head"].shape == (2, 4, T, T) and z["alti_input"].shape == (T, T)
    assert z["norm_layer"].shape == (2, T, T) and z["mixing_ratio"].shape == (2,)
    assert z["value_zeroing"].shape == (T, T) and z["value_zeroing_total"].shape == (T,)
    assert z["inter_alti"].ndim == 2 and z["input_ids"].shape == (T,)
    sb = result["scoreboard"]
    assert sb["sentence"] == 1 and "value_zeroing" in sb["scopes"]["all"]
    assert len(sb["scopes"]["all"]["random"]["comprehensiveness"]) == len(sb["fractions"])


def test_sep_head_is_the_strongest_contrast_among_heads_that_look_at_sep():
    """Learn's [SEP] head (issue 41): among heads with at least half the largest attention on
    [SEP], the largest attention ÷ contribution factor. Head 0: 90 % on [SEP], [SEP] brings 45 %
    (2×); head 1: 50 % vs 10 % (5×), the one to show; head 2: 10 % vs 0.1 % (100×) but it barely
    looks at [SEP]. The largest difference (head 0) is not the strongest contrast."""
    from types import SimpleNamespace

    from analysis.mixing import sep_head

    tokens = ["[CLS]", "a", "b", "[SEP]"]

    def rows(on_sep):  # [H, T, T]: every row puts on_sep[h] on [SEP], the rest evenly on the others
        m = np.array([[[(1 - p) / 3] * 3 + [p]] * 4 for p in on_sep], dtype=np.float32)
        return m[None]  # [1, H, T, T]

    attention, norm = rows([0.9, 0.5, 0.1]), rows([0.45, 0.1, 0.001])
    mix = SimpleNamespace(tokens=tokens, norm_head=norm, value_norm=np.ones((1, 3, 4), np.float32))
    found = sep_head(attention, mix)
    assert (found["layer"], found["head"]) == (0, 1) and found["candidates"] == 2
    assert abs(found["attention_on_sep"] - 0.5) < 1e-6 and abs(found["contribution_of_sep"] - 0.1) < 1e-6
