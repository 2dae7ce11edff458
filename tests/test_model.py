"""Model core: shapes and invariants on tiny random configs, parity with transformers and
with a plain transcription of PreSumm's math, checkpoint loading, capture under threads, CLI."""
from __future__ import annotations

import argparse
import json
import math
import threading
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from model.bert import BertModel, extended_mask
from model.inter_encoder import InterEncoderConfig, TransformerInterEncoder, sinusoidal_table
from model.hooks import names, record
from helpers import DOC, WORDS, tiny_backbone
from model.summarizer import EmptyDocumentError, Summarizer, pool_sentences, select

SAMPLE = Path(__file__).parent / "data" / "sample.txt"
@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Summarizer:
    d = tiny_backbone(tmp_path_factory.mktemp("tiny"))
    return Summarizer.load(d, inter=InterEncoderConfig(d_model=16, layers=2, heads=4, d_ff=32), device="cpu")


@pytest.fixture(scope="module")
def minilm() -> Summarizer:
    return Summarizer.load(device="cpu")


# --- shapes and invariants -------------------------------------------------------------

def test_trace_shapes(tiny):
    tr = tiny.trace(DOC)
    T, S = len(tr.tokens), len(tr.input_sentences)
    cfg, icfg = tiny.model.bert.config, tiny.model.ext_layer.config
    L, H, D = cfg.num_hidden_layers, cfg.num_attention_heads, cfg.hidden_size
    assert tr.bert_attention.shape == (L, H, T, T) and tr.bert_attention.dtype == np.float16
    for qkv in (tr.bert_query, tr.bert_key, tr.bert_value):
        assert qkv.shape == (L, H, T, D // H)
    assert tr.inter_attention.shape == (icfg.layers, icfg.heads, S, S)
    assert tr.token_sentence.shape == tr.segment_ids.shape == (T,)
    assert tr.token_mask.shape == tr.extended_mask.shape == (T,)
    assert tr.cls_mask.shape == tr.inter_mask.shape == (S,)
    assert tr.position_embeddings.shape == tr.token_type_embeddings.shape == (T, D)
    assert tr.sentence_vectors.shape == tr.sentence_pe.shape == (S, D)
    assert len(tr.summary.scores) == len(tr.summary.sentences)
    assert all(isinstance(v, np.ndarray) for v in tr.arrays().values())  # NumPy only: viz needs no torch


def test_masks_as_applied(tiny):
    tr = tiny.trace(DOC)
    assert tr.token_mask.all() and (tr.extended_mask == 0).all()  # one document: nothing padded
    assert tr.cls_mask.all() and not tr.inter_mask.any()
    assert np.array_equal(tr.inter_mask, ~tr.cls_mask)


@pytest.mark.parametrize("which", ["bert_attention", "inter_attention"])
def test_attention_rows_sum_to_one(tiny, which):
    a = torch.from_numpy(getattr(tiny.trace(DOC), which)).float()
    assert torch.allclose(a.sum(-1), torch.ones(a.shape[:-1]), atol=2e-3)
    assert (a >= 0).all()


def test_padded_keys_get_zero_weight(tiny):
    """A batch with padding: BERT's additive mask and the inter encoder's boolean mask
    must give padded keys (tokens / sentences) zero attention."""
    bert, ext = tiny.model.bert, tiny.model.ext_layer
    ids = torch.randint(5, 20, (2, 12))
    mask = torch.ones(2, 12, dtype=torch.long)
    mask[1, 7:] = 0
    bert_points, inter_points = names(tiny.model, r"bert\.\d+\.attn\.pattern"), names(tiny.model, r"inter\.\d+\.attn\.pattern")
    assert len(bert_points) == len(bert.encoder.layer) and len(inter_points) == len(ext.transformer_inter)
    cls_mask = torch.tensor([[True] * 5, [True, True, True, False, False]])
    with torch.no_grad(), record(tiny.model, bert_points + inter_points) as rec:
        bert(ids, torch.zeros_like(ids), mask)
        scores = ext(torch.randn(2, 5, 16), cls_mask)
    for n in bert_points:
        p = rec[n][0]  # [B, H, T, T]
        assert p[1, :, :, 7:].abs().max() < 1e-6 and p[0].min() > 0
    for n in inter_points:
        assert rec[n][0][1, :, :, 3:].abs().max() == 0
    assert (scores[1, 3:] == 0).all() and (scores[0] > 0).all()
    assert torch.equal(extended_mask(mask)[1, 0, 0], torch.tensor([0.0] * 7 + [-10000.0] * 5))


def test_pe_rows_follow_the_formula(tiny):
    tr = tiny.trace(DOC)
    S, D = tr.sentence_pe.shape
    ref = torch.tensor([[math.sin(p / 10000 ** (i / D)) if i % 2 == 0 else math.cos(p / 10000 ** ((i - 1) / D))
                         for i in range(D)] for p in range(S)])
    assert torch.allclose(torch.from_numpy(tr.sentence_pe), ref, atol=1e-5)
    assert torch.allclose(torch.from_numpy(tr.pe_table[:S]), ref, atol=1e-5)


def test_segments_alternate_and_cls_positions_start_sentences(tiny):
    tr = tiny.trace(DOC)
    rank = {int(s): r for r, s in enumerate(tr.input_sentences)}
    assert [int(s) for s in tr.segment_ids] == [rank[int(s)] % 2 for s in tr.token_sentence]
    starts = [0] + [t for t in range(1, len(tr.tokens)) if tr.token_sentence[t] != tr.token_sentence[t - 1]]
    assert starts == list(tr.cls_positions)
    assert all(tr.tokens[c] == "[CLS]" for c in tr.cls_positions)
    assert all(tr.tokens[c - 1] == "[SEP]" for c in tr.cls_positions[1:]) and tr.tokens[-1] == "[SEP]"


def test_position_and_segment_rows_are_the_tables_rows(tiny):
    tr, emb = tiny.trace(DOC), tiny.model.bert.embeddings
    T = len(tr.tokens)
    assert torch.equal(torch.from_numpy(tr.position_embeddings), emb.position_embeddings.weight[:T].detach())
    assert torch.equal(torch.from_numpy(tr.token_type_embeddings), emb.token_type_embeddings.weight[torch.from_numpy(tr.segment_ids)].detach())


# --- preprocessing and selection ------------------------------------------------------------

def test_short_sentences_are_shown_not_scored(tiny):
    s = tiny.summarize(DOC)
    assert s.sentences[-1] == "The end." and s.too_short == (len(s.sentences) - 1,)
    assert s.scores[-1] is None and all(x is not None for x in s.scores[:-1])
    assert s.too_short[0] not in s.selected


def test_only_short_sentences_are_still_scored(tiny):
    s = tiny.summarize("Hello there. Bye now.")
    assert s.too_short == () and all(x is not None for x in s.scores)


@pytest.mark.parametrize("text", ["", "   \n\t  "])
def test_empty_document_is_a_clear_error(tiny, text):
    with pytest.raises(EmptyDocumentError, match="empty"):
        tiny.summarize(text)


@pytest.fixture(scope="module")
def bertsum(tiny) -> Summarizer:
    """The same model limited to BertSum's single window."""
    return Summarizer(tiny.model, tiny.tokenizer, tiny.device, tiny.weights, tiny.backbone, max_windows=1)


LONG = " ".join(f"The oil price rose {i} times in the news on a day." for i in range(40))


def test_size_limit_is_a_clear_error(tiny):
    small = Summarizer(tiny.model, tiny.tokenizer, tiny.device, tiny.weights, tiny.backbone, max_chars=1000)
    with pytest.raises(ValueError, match="2,000 characters; the limit is 1,000"):
        small.summarize("x" * 2000)


def test_control_characters_and_nul_bytes_are_blanked(tiny):
    text = "The oil price\x00 rose again on Monday.\r\nAnalysts said\x07 growth was a surprise."
    s = tiny.summarize(text)
    assert s.sentences == ("The oil price  rose again on Monday.", "Analysts said  growth was a surprise.")
    assert [len(text[a:b]) for a, b in s.spans] == [len(x) for x in s.sentences]


def test_length_limit_reports_what_was_cut(bertsum):
    s, enc = bertsum.summarize(LONG), bertsum.encode(LONG)
    assert len(enc.tokens) <= bertsum.max_tokens and s.truncated and s.tokens_cut > 0
    assert all(s.scores[i] is None for i in s.truncated)
    assert set(s.truncated) | set(enc.input_sentences) == set(range(len(s.sentences)))


def test_one_sentence_longer_than_the_window_is_cut_not_dropped(bertsum):
    s, enc = bertsum.summarize("oil " * 200), bertsum.encode("oil " * 200)
    assert len(enc.tokens) == bertsum.max_tokens and enc.tokens[-1] == "[SEP]"
    assert s.truncated == (0,) and s.tokens_cut == 200 - (bertsum.max_tokens - 2) and s.scores[0] is not None


def test_long_document_is_read_whole_in_windows(tiny):
    enc, s = tiny.encode(LONG, None), tiny.summarize(LONG)
    assert len(enc.window_starts) > 2 and not s.truncated and s.tokens_cut == 0
    assert all(x is not None for x in s.scores)
    for w in range(len(enc.window_starts)):
        a, b = enc.window(w)
        assert b - a <= tiny.max_tokens and enc.tokens[a] == "[CLS]" and enc.tokens[b - 1] == "[SEP]"
        assert enc.segment_ids[a] == 0  # every window starts like a BertSum input
    tr = tiny.trace(LONG, window=2)
    a, b = enc.window(2)
    assert tr.tokens == enc.tokens[a:b] and tr.bert_attention.shape[-1] == b - a
    assert tr.inter_attention.shape[-1] == len(enc.input_sentences) == len(tr.sentence_vectors)
    lo, hi = tr.windows[2]
    assert list(tr.input_sentences[lo:hi]) == sorted(set(tr.token_sentence.tolist()))
    with pytest.raises(ValueError, match="window 99"):
        tiny.trace(LONG, window=99)


def test_a_sentence_longer_than_a_window_is_split_into_parts(tiny):
    enc, s = tiny.encode("oil " * 300, None), tiny.summarize("oil " * 300)
    assert enc.input_sentences == (0, 0, 0) and len(enc.window_starts) == 3
    assert sum(t == "oil" for t in enc.tokens) == 300 and s.scores[0] is not None and not s.truncated


def test_windowed_scores_equal_bertsum_forward_for_one_window(tiny):
    """One window: the window-by-window path and BertSumExt.forward give the same scores."""
    enc = tiny.encode(DOC)
    x = tiny.window_inputs(enc, 0, len(enc.tokens))
    with torch.no_grad():
        assert torch.allclose(tiny.score(enc)[None], tiny.model(**x), atol=1e-6)


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_sentence_pooling_on_a_padded_batch(pooling):
    """Each sentence's vector is its [CLS] row or the mean of its rows [CLS] … [SEP], never
    reaching into padding or the next sentence; padded sentence slots are zero."""
    top = torch.randn(2, 9, 4)  # [B, T, D]
    tokens = torch.tensor([[1] * 9, [1] * 6 + [0] * 3])  # document 1 has 6 tokens
    cls = torch.tensor([[0, 2, 5], [0, 4, 0]])  # [B, S]
    real = torch.tensor([[True, True, True], [True, True, False]])
    got = pool_sentences(top, tokens, cls, real, pooling)  # [B, S, D]
    spans = {(0, 0): (0, 2), (0, 1): (2, 5), (0, 2): (5, 9), (1, 0): (0, 4), (1, 1): (4, 6)}
    for (b, s), (a, e) in spans.items():
        want = top[b, a] if pooling == "cls" else top[b, a:e].mean(0)
        assert torch.allclose(got[b, s], want, atol=1e-6)
    assert not got[1, 2].any()


def test_pooling_and_scale_come_from_checkpoint_metadata(tiny, backbone_dir, tmp_path):
    sd = presumm_state_dict(tiny.model.bert, tiny.model.ext_layer, "presumm")
    save_file(sd, tmp_path / "c.safetensors", metadata={"sentence_pooling": "mean", "sentence_scale": "2.5"})
    s = Summarizer.load(backbone_dir, tmp_path / "c.safetensors", device="cpu")
    enc = s.encode(DOC)
    x = s.window_inputs(enc, 0, len(enc.tokens))
    with torch.no_grad():
        top = s.model.bert(x["input_ids"], x["segment_ids"], x["attention_mask"])[0]  # [T, D]
        first = top[enc.cls_positions[0]:enc.cls_positions[1]].mean(0)
        assert torch.allclose(s.model.sentence_vectors(**x)[0, 0], 2.5 * first, atol=1e-5)
    assert s.summarize(DOC).pooling == "mean" and tiny.summarize(DOC).pooling == "cls"


@pytest.mark.parametrize("block,expected", [(True, (0, 2)), (False, (0, 1))])
def test_trigram_blocking(block, expected):
    sents = ("the cat sat on the mat", "yes the cat sat down", "dogs bark loudly at night")
    assert select([0.9, 0.8, 0.1], sents, 2, block) == expected


def test_selection_is_top_k_in_document_order():
    assert select([0.1, None, 0.9, 0.5, 0.7], tuple("abcde"), 3, False) == (2, 3, 4)


# --- equivalence ------------------------------------------------------------------------------

def test_bert_matches_transformers(minilm):
    """Our BERT vs transformers.BertModel with the same MiniLM weights, padded batch."""
    transformers = pytest.importorskip("transformers")
    from model.load import default_backbone_dir

    ref = transformers.BertModel.from_pretrained(default_backbone_dir(), attn_implementation="eager").eval()
    ours = minilm.model.bert
    missing, unexpected = ref.load_state_dict(ours.state_dict(), strict=False)  # the shipped fine-tuned layers too
    assert not unexpected and all(k.startswith("pooler.") or k.endswith("position_ids") for k in missing)
    ids = torch.tensor(minilm.tokenizer.ids(minilm.encode(SAMPLE.read_text()).tokens[:200]))[None].repeat(2, 1)
    segs = (torch.arange(200) // 30 % 2)[None].repeat(2, 1)
    mask = torch.ones(2, 200, dtype=torch.long)
    mask[1, 150:] = 0
    with torch.no_grad(), record(minilm.model, names(minilm.model, r"bert\.\d+\.attn\.pattern")) as rec:
        h = ours(ids, segs, mask)
        out = ref(input_ids=ids, token_type_ids=segs, attention_mask=mask, output_attentions=True)
    real = mask.bool()
    err_h = (h - out.last_hidden_state)[real].abs().max().item()
    err_a = max((rec[f"bert.{i}.attn.pattern"][0] - a)[0].abs().max().item() for i, a in enumerate(out.attentions))
    err_a_pad = max((rec[f"bert.{i}.attn.pattern"][0] - a)[1, :, :150].abs().max().item()
                    for i, a in enumerate(out.attentions))
    print(f"parity vs transformers: hidden {err_h:.2e}, attention {max(err_a, err_a_pad):.2e}")
    assert err_h < 1e-5 and err_a < 1e-5 and err_a_pad < 1e-5


def reference_inter_encoder(ext: TransformerInterEncoder, x: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
    """PreSumm's ExtTransformerEncoder written out plainly for one document, head by head."""
    P = {k: v.double() for k, v in ext.state_dict().items()}
    S, D = x.shape
    H = ext.config.heads
    dh = D // H

    def ln(v, name, eps=1e-6):
        mu, var = v.mean(-1, keepdim=True), v.var(-1, unbiased=False, keepdim=True)
        return (v - mu) / torch.sqrt(var + eps) * P[name + ".weight"] + P[name + ".bias"]

    def lin(v, name):
        return v @ P[name + ".weight"].T + P[name + ".bias"]

    def gelu(v):
        return 0.5 * v * (1 + torch.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))

    pe = torch.tensor([[math.sin(p / 10000 ** (i / D)) if i % 2 == 0 else math.cos(p / 10000 ** ((i - 1) / D))
                        for i in range(D)] for p in range(S)], dtype=torch.double)
    h = x.double() * real[:, None] + pe
    for layer in range(ext.config.layers):
        n = f"transformer_inter.{layer}."
        inp = ln(h, n + "layer_norm") if layer else h
        q = lin(inp, n + "self_attn.linear_query") / math.sqrt(dh)
        k, v = lin(inp, n + "self_attn.linear_keys"), lin(inp, n + "self_attn.linear_values")
        heads = []
        for j in range(H):
            sl = slice(j * dh, (j + 1) * dh)
            logits = q[:, sl] @ k[:, sl].T
            logits[:, ~real] = -1e18
            heads.append(torch.softmax(logits, -1) @ v[:, sl])
        out = lin(torch.cat(heads, -1), n + "self_attn.final_linear") + h
        ff = lin(gelu(lin(ln(out, n + "feed_forward.layer_norm"), n + "feed_forward.w_1")), n + "feed_forward.w_2")
        h = ff + out
    return torch.sigmoid(lin(ln(h, "layer_norm"), "wo"))[:, 0] * real


@pytest.mark.parametrize("layers,heads,real", [(1, 1, 5), (2, 4, 5), (3, 2, 3)])
def test_inter_encoder_matches_plain_transcription(layers, heads, real):
    torch.manual_seed(layers * 10 + heads)
    ext = TransformerInterEncoder(InterEncoderConfig(d_model=16, layers=layers, heads=heads, d_ff=24)).eval()
    for p in ext.parameters():
        torch.nn.init.normal_(p, std=0.3)  # non-trivial LayerNorm and biases too
    x = torch.randn(5, 16)
    mask = torch.arange(5) < real
    with torch.no_grad():
        ours = ext(x[None], mask[None])[0]
    assert torch.allclose(ours.double(), reference_inter_encoder(ext, x, mask), atol=1e-6)


def test_captured_attention_is_softmax_of_captured_q_k(minilm):
    tr = minilm.trace(SAMPLE.read_text())
    q, k = (torch.from_numpy(x).float() for x in (tr.bert_query, tr.bert_key))  # [L, H, T, dh]
    recomputed = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + torch.from_numpy(tr.extended_mask), -1)
    assert (recomputed - torch.from_numpy(tr.bert_attention).float()).abs().max() < 2e-2  # Q, K stored in fp16
    v = torch.from_numpy(tr.bert_value).float()
    assert torch.isfinite(v).all()


# --- checkpoints ---------------------------------------------------------------------------

def presumm_state_dict(bert: BertModel, head: TransformerInterEncoder, style: str) -> dict[str, torch.Tensor]:
    sd = {f"bert.model.{k}": torch.randn_like(v) for k, v in bert.state_dict().items()}
    prefix = "ext_layer." if style == "presumm" else "encoder."
    sd.update({prefix + k: torch.randn_like(v) for k, v in head.state_dict().items()})
    if style == "bertsum":  # pytorch_pretrained_bert 0.4 named LayerNorm parameters gamma/beta
        sd = {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v
              for k, v in sd.items()}
    return sd


@pytest.fixture(scope="module")
def backbone_dir(tmp_path_factory):
    return tiny_backbone(tmp_path_factory.mktemp("bb"))


@pytest.mark.parametrize("style", ["presumm", "bertsum"])
def test_presumm_checkpoint_loads(tiny, backbone_dir, tmp_path, style):
    sd = presumm_state_dict(tiny.model.bert, tiny.model.ext_layer, style)
    path = tmp_path / "model_step_1000.pt"
    torch.save({"model": sd, "opt": argparse.Namespace(ext_layers=2, ext_heads=4), "optims": []}, path)
    s = Summarizer.load(backbone_dir, path, device="cpu", inter=tiny.model.ext_layer.config)
    assert s.weights == "trained"
    loaded = s.model.state_dict()
    key = "ext_layer.transformer_inter.1.feed_forward.w_1.weight"
    src = "ext_layer." if style == "presumm" else "encoder."
    assert torch.equal(loaded[key], sd[key.replace("ext_layer.", src)])
    ln = "bert.encoder.layer.0.output.LayerNorm.weight"
    assert torch.equal(loaded[ln], sd["bert.model.encoder.layer.0.output.LayerNorm." + ("weight" if style == "presumm" else "gamma")])
    assert s.summarize(DOC).weights == "trained"


def test_sentence_positions_past_those_trained_repeat_the_last_trained_row(tiny, backbone_dir, tmp_path):
    """Metadata ``position_rows`` = R: sentence i gets sinusoid row min(i, R - 1) (studies/positions.py
    measured why); without it every sentence its own row."""
    sd = presumm_state_dict(tiny.model.bert, tiny.model.ext_layer, "presumm")
    save_file(sd, tmp_path / "c.safetensors", metadata={"inter_heads": "4", "position_rows": "3"})
    m = Summarizer.load(backbone_dir, tmp_path / "c.safetensors", device="cpu")
    table = m.model.ext_layer.pos_emb.pe[0, :6]  # the checkpoint's table (PreSumm saves it)
    assert torch.equal(m.model.ext_layer.pos_emb(6), table[[0, 1, 2, 2, 2, 2]])
    assert torch.equal(m.model.ext_layer.pos_emb(2), table[:2])
    tr = m.trace(DOC)
    assert np.array_equal(tr.sentence_pe, table[[0, 1, 2, 2, 2, 2]][:len(tr.input_sentences)].numpy())
    assert torch.equal(tiny.model.ext_layer.pos_emb(6), sinusoidal_table(6, 16))  # no metadata: no clamp


def test_the_shipped_weights_clamp_past_row_27(minilm):
    tr = minilm.trace((Path(__file__).parents[1] / "examples" / "bbc_call_centres.txt").read_text())
    pe = tr.sentence_pe
    assert len(pe) > 30 and np.array_equal(pe[27:], np.repeat(pe[26:27], len(pe) - 27, 0))
    assert not np.array_equal(pe[25], pe[26])


def test_checkpoint_head_sizes_come_from_shapes(tiny, backbone_dir, tmp_path):
    sd = presumm_state_dict(tiny.model.bert, tiny.model.ext_layer, "presumm")
    save_file(sd, tmp_path / "c.safetensors", metadata={"inter_heads": "4"})
    cfg = Summarizer.load(backbone_dir, tmp_path / "c.safetensors", device="cpu").model.ext_layer.config
    assert (cfg.layers, cfg.heads, cfg.d_ff) == (2, 4, 32)


@pytest.mark.parametrize("damage,message", [
    (lambda sd: sd.pop("ext_layer.wo.weight"), "missing key 'wo.weight'"),
    (lambda sd: sd.pop("bert.model.encoder.layer.1.attention.self.key.bias"), "missing key 'encoder.layer.1.attention.self.key.bias'"),
    (lambda sd: sd.update({"ext_layer.wo.weight": torch.zeros(1, 7)}), r"'wo.weight' has shape \(1, 7\), the model expects \(1, 16\)"),
    (lambda sd: sd.update({"bert.model.encoder.layer.0.intermediate.dense.weight": torch.zeros(3, 3)}), "'encoder.layer.0.intermediate.dense.weight' has shape"),
])
def test_bad_checkpoint_names_the_key(tiny, backbone_dir, tmp_path, damage, message):
    sd = presumm_state_dict(tiny.model.bert, tiny.model.ext_layer, "presumm")
    damage(sd)
    torch.save({"model": sd}, tmp_path / "bad.pt")
    with pytest.raises(ValueError, match=message):
        Summarizer.load(backbone_dir, tmp_path / "bad.pt", device="cpu", inter=tiny.model.ext_layer.config)


@pytest.mark.parametrize("key,kind", [("linear1.weight", "classifier"), ("rnn.weight_ih_l0", "RNN")])
def test_bertsums_other_scorers_are_refused_naming_the_key(tiny, backbone_dir, tmp_path, key, kind):
    sd = {f"bert.model.{k}": v for k, v in tiny.model.bert.state_dict().items()} | {f"encoder.{key}": torch.zeros(1, 16)}
    torch.save({"model": sd}, tmp_path / "bertsum_classifier.pt")
    with pytest.raises(ValueError, match=f"BertSum {kind} scorer \\(key '{key}'\\)"):
        Summarizer.load(backbone_dir, tmp_path / "bertsum_classifier.pt", device="cpu")


def test_not_a_checkpoint_is_a_clear_error(backbone_dir, tmp_path):
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"this is not a checkpoint")
    with pytest.raises(ValueError, match="not a loadable PyTorch checkpoint"):
        Summarizer.load(backbone_dir, junk, device="cpu")


def test_pickled_code_is_not_executed(tiny, backbone_dir, tmp_path):
    """A PreSumm-style checkpoint whose other entries pickle code (os.system) and classes that
    do not exist here (PreSumm's optimizer): the tensors load, nothing runs."""
    import os
    import sys
    import types

    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    optimizers = types.ModuleType("models.optimizers")  # PreSumm's module, present only while saving
    Optimizer = type("Optimizer", (), {"__module__": "models.optimizers"})
    optimizers.Optimizer = Optimizer
    sys.modules.update({"models": types.ModuleType("models"), "models.optimizers": optimizers})
    try:
        sd = presumm_state_dict(tiny.model.bert, tiny.model.ext_layer, "presumm")
        torch.save({"model": sd, "opt": argparse.Namespace(lr=1), "optims": [Optimizer()], "evil": Evil()},
                   tmp_path / "presumm.pt")
    finally:
        del sys.modules["models"], sys.modules["models.optimizers"]
    s = Summarizer.load(backbone_dir, tmp_path / "presumm.pt", device="cpu", inter=tiny.model.ext_layer.config)
    assert s.weights == "trained" and not marker.exists()
    assert torch.equal(s.model.state_dict()["ext_layer.wo.weight"], sd["ext_layer.wo.weight"])


# --- concurrency -----------------------------------------------------------------------------

def test_threads_get_their_own_traces(minilm):
    docs = [f"Document {n} is about topic number {n} and nothing else at all. " * (1 + n % 5)
            + " ".join(WORDS[: 3 + n]) + "." for n in range(40)]
    expected = {n: minilm.trace(d) for n, d in enumerate(docs[:4])}
    results, errors = {}, []

    def work(ids):
        try:
            for n in ids:
                results[n] = minilm.trace(docs[n])
        except Exception as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(range(t, 40, 4),)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 40
    for n, tr in results.items():
        assert tr.summary.sentences == minilm.encode(docs[n]).sentences
        assert tr.tokens == minilm.encode(docs[n]).tokens
        T = len(tr.tokens)
        assert tr.bert_attention.shape[-1] == T and tr.bert_query.shape[2] == T
        assert tr.inter_attention.shape[-1] == len(tr.input_sentences)
    for n, tr in expected.items():
        assert np.allclose(tr.bert_attention.astype(np.float32), results[n].bert_attention.astype(np.float32), atol=1e-3)
    for module in minilm.model.modules():  # hooks were removed
        assert not module._forward_hooks


# --- command line ------------------------------------------------------------------------------

def test_cli_summarize_json(capsys):
    from model.__main__ import main

    assert main(["summarize", str(SAMPLE), "--k", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"sentences", "scores", "selected", "summary", "device", "truncated", "head"} <= out.keys()
    assert len(out["scores"]) == len(out["sentences"]) and len(out["selected"]) == 2
    assert out["selected"] == sorted(out["selected"])
    assert out["summary"] == " ".join(out["sentences"][i] for i in out["selected"])


def test_cli_jsonl(tmp_path, capsys):
    from model.__main__ import main

    inp = tmp_path / "in.jsonl"
    docs = [{"id": "a", "text": SAMPLE.read_text()}, {"id": "b", "text": DOC}, {"id": "c", "text": "   "},
            {"id": "d", "body": "no text"}, [1, 2]]
    inp.write_text("\n".join(json.dumps(d) for d in docs) + "\n{not json\n")
    assert main(["summarize", "--jsonl", str(inp), "--no-trigram-block"]) == 0
    captured = capsys.readouterr()
    lines = [json.loads(x) for x in captured.out.splitlines()]
    assert [x["id"] for x in lines] == ["a", "b", "c", "d", 5, 6]  # issue 73: a document keeps its own id
    assert [x["line"] for x in lines] == [1, 2, 3, 4, 5, 6]
    assert len(lines[0]["selected"]) == 3 and "empty" in lines[2]["error"] and '"text"' in lines[3]["error"]
    assert all("Error" not in x.get("error", "") for x in lines)  # no exception class names, words
    assert "6/6" in captured.err  # progress bar


def test_cli_trace_npz(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "t.npz"
    subprocess.run([sys.executable, "-m", "model", "trace", str(SAMPLE), "--out", str(out)], check=True,
                   cwd=Path(__file__).parents[1], capture_output=True)
    z = np.load(out)
    for key in ("tokens", "bert_attention", "inter_attention", "token_mask", "extended_mask", "cls_mask",
                "inter_mask", "segment_ids", "position_embeddings", "token_type_embeddings", "sentence_pe", "pe_table"):
        assert key in z.files, key
    T = len(z["tokens"])
    assert z["bert_attention"].shape == (6, 12, T, T) and z["pe_table"].shape[1] == 384


def test_cli_errors_are_one_line(tmp_path, capsys):
    from model.__main__ import main

    (tmp_path / "empty.txt").write_text("")
    assert main(["summarize", str(tmp_path / "empty.txt")]) == 1
    assert main(["summarize", str(tmp_path / "missing.txt")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(e.startswith("error: ") for e in err)


def test_five_thousand_word_document_is_summarised_whole(minilm):
    examples = sorted((Path(__file__).parents[1] / "examples").glob("*.txt")) + [SAMPLE]
    paragraphs = [p for f in examples for p in f.read_text().split("\n") if p.strip()]
    text, n = [], 0
    while sum(len(p.split()) for p in text) < 5000:  # distinct sentences: number the paragraphs
        text.append(f"Part {n} of the file. " + paragraphs[n % len(paragraphs)])
        n += 1
    text = "\n".join(text)
    s, enc = minilm.summarize(text), minilm.encode(text, None)
    assert len(text.split()) >= 5000 and len(enc.window_starts) >= 10
    assert not s.truncated and s.tokens_cut == 0 and len(s.selected) == 3
    assert all(s.scores[i] is not None for i in range(len(s.sentences)) if i not in s.too_short)
    last = minilm.trace(text, window=len(enc.window_starts) - 1)
    assert last.tokens == enc.tokens[enc.window_starts[-1]:]


CHINESE = ("北京时间周二，中国国家统计局发布了最新的经济数据。数据显示，第三季度国内生产总值同比增长百分之五！"
           "这是一个好消息吗？专家表示谨慎乐观。")
OTHER_LANGUAGES = {"HANGUL": "서울에서 열린 회의에서 정부는 새로운 경제 정책을 발표했다. 전문가들은 긍정적으로 평가했다.",
                   "CYRILLIC": "Правительство объявило о новых мерах поддержки экономики. Эксперты оценили их осторожно.",
                   "ARABIC": "أعلنت الحكومة عن إجراءات جديدة لدعم الاقتصاد. وقد رحب الخبراء بهذه الخطوة."}


def test_languages_the_model_cannot_read_are_said_and_chinese_splits_on_its_full_stops(summarizer):
    """Issue 34: Chinese was one sentence of [UNK]s, Korean jamo, Russian and Arabic single letters,
    each summarized with confident scores and no word. Now: split on 。！？, and a note (CLI JSON too)."""
    from model.text import split_sentences

    assert [CHINESE[a:b] for a, b in split_sentences(CHINESE)][1:3] == [
        "数据显示，第三季度国内生产总值同比增长百分之五！", "这是一个好消息吗？"]
    summary = summarizer.summarize(CHINESE, k=1)
    assert len(summary.sentences) == 4 and summary.reading.script == "CJK"
    assert summary.reading.unreadable > 0.5 and "reads English" in summary.to_json()["reading"]["note"]
    for script, text in OTHER_LANGUAGES.items():
        r = summarizer.summarize(text, k=1).reading
        assert r.script == script and r.latin == 0 and r.unreadable > 0.5 and script.title() in r.note, script
    english = summarizer.summarize("The cat sat on the mat all day. Dr. Smith said it was sunny in London.", k=1)
    assert english.reading.note is None and english.to_json()["reading"]["latin_letters"] == 1.0
    mixed = "Der Bundestag hat am Freitag über das neue Gesetz abgestimmt. Die Opposition kritisierte es scharf."
    assert summarizer.summarize(mixed, k=1).reading.note is None  # too short to tell: no note


GERMAN = ("Die Bundesregierung hat am Mittwoch beschlossen, die Förderung für Elektroautos zu verlängern. "
          "Der Wirtschaftsminister sagte, dass die Nachfrage nach wie vor hoch sei und die Industrie mehr Zeit brauche. "
          "Kritiker bemängeln, dass das Programm vor allem Besserverdienenden zugute komme. Die Opposition forderte "
          "stattdessen einen Ausbau des öffentlichen Nahverkehrs in ländlichen Regionen.")


def test_a_latin_text_that_is_not_english_is_said_in_plain_output_too(summarizer, tmp_path, capsys):
    """Issue 73: German was summarized with exit status 0 and no word; Chinese's note was only in the JSON."""
    from model.__main__ import main

    r = summarizer.summarize(GERMAN, k=1).reading
    assert r.latin == 1.0 and r.english < 0.1 and "does not look like English" in r.note
    for example in (Path(__file__).parents[1] / "examples").glob("bbc_*.txt"):  # English news: no note
        assert summarizer.summarize(example.read_text(encoding="utf-8")).reading.note is None, example.name
    for text in (GERMAN, CHINESE):
        (tmp_path / "doc.txt").write_text(text, encoding="utf-8")
        assert main(["summarize", str(tmp_path / "doc.txt"), "--k", "1"]) == 0
        captured = capsys.readouterr()
        assert captured.err.startswith("note: This model reads English") and captured.out.strip()


def test_run_with_cache_holds_every_point_stacked_per_layer(summarizer):
    """Issue 73 (TransformerLens's run_with_cache): one call gives the summary and every hook point's
    value; stacked, BERT's attention is the Trace's; the sentence encoder's last residual scores the
    summary; a pattern keeps only the points it names."""
    from helpers import LONG

    summary, cache = summarizer.run_with_cache(LONG)
    trace = summarizer.trace(LONG)
    L, H, _ = summarizer.size()
    pattern = cache.stack("attn.pattern")  # [L, 1, H, T, T], window 0
    assert pattern.shape[:3] == (L, 1, H) and pattern.dtype == np.float32
    assert np.allclose(pattern[:, 0], trace.bert_attention.astype(np.float32), atol=1e-3)
    assert len(cache.windows("bert.0.attn.pattern")) == len(summarizer.encode(LONG, None).window_starts) == 2
    assert cache.stack("resid_post", "inter").shape[0] == 2 and "inter.ln_final" in cache
    assert summary.scores == summarizer.summarize(LONG).scores
    _, some = summarizer.run_with_cache(LONG, pattern=r"bert\.\d+\.attn\.z")
    assert sorted(some.keys()) == [f"bert.{l}.attn.z" for l in range(L)]
    with pytest.raises(KeyError, match="no inter layer"):
        some.stack("attn.z", "inter")
