"""Issue 17, which heads matter: head statistics against a hand-made example, switching a head
off against independent implementations (transformers' BERT with the head's slice zeroed, the
sentence encoder with the head's output weights zeroed, ``--mask-heads`` with a whole layer off),
batched ablation against one head at a time, the gradient against a finite difference, the
JSON, the figures and the Heads page."""
from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import math

import numpy as np
import pytest
import torch
from safetensors import safe_open

from analysis import heads as AH
from conftest import synthetic_trace
from model.inter_encoder import InterEncoderConfig
from model.hooks import record
from model.summarizer import DEFAULT_CHECKPOINT, Summarizer
from helpers import SHORT, charts, new_app, spec, summarize
from helpers import DOC, tiny_backbone

LONG_DOC = " ".join(f"Part {n}. " + DOC for n in range(4))  # several 128-token windows of the tiny BERT


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return tiny_backbone(tmp_path_factory.mktemp("tiny_heads"), layers=3, heads=4, hidden=16)


@pytest.fixture(scope="module")
def tiny(tiny_dir) -> Summarizer:
    return Summarizer.load(tiny_dir, inter=InterEncoderConfig(d_model=16, layers=2, heads=4, d_ff=32), device="cpu")


# --- statistics ------------------------------------------------------------------------------

def hand_trace():
    """Two sentences, 7 tokens: [CLS] a , [SEP] [CLS] b [SEP]; one layer, three heads with known rows."""
    tokens = ("[CLS]", "a", ",", "[SEP]", "[CLS]", "b", "[SEP]")
    T = len(tokens)
    a = np.zeros((1, 3, T, T), dtype=np.float32)
    a[0, 0, :, 0] = 1.0                      # head 1: everything on the first [CLS]
    a[0, 1, 0, 0] = 1.0                      # head 2: the previous token (token 0: itself)
    for i in range(1, T):
        a[0, 1, i, i - 1] = 1.0
    a[0, 2] = 1.0 / T                        # head 3: uniform
    base = synthetic_trace(n_sent=2, short=(), L=1, H=3)
    return dataclasses.replace(base, tokens=tokens, token_sentence=np.array([0, 0, 0, 0, 1, 1, 1]),
                               bert_attention=a.astype(np.float16))


def test_bert_stats_on_a_hand_made_example():
    s = AH.bert_stats(hand_trace())
    T = 7
    expect = {  # per head: hand-computed mean over the 7 query rows
        "cls": [1.0, 3 / T, 2 / T],               # head 2: rows 0, 1 and 5 point at a [CLS]
        "sep": [0.0, 1 / T, 2 / T],               # head 2: row 4 points at [SEP] 3
        "punctuation": [0.0, 1 / T, 1 / T],       # head 2: row 3 points at ","
        "previous": [1 / 6, 1.0, 1 / T],          # over the 6 rows with a previous token; head 1: row 1
        "next": [0.0, 0.0, 1 / T],
        "same_sentence": [4 / T, 6 / T, (4 * 4 / T + 3 * 3 / T) / T],  # head 2: all but row 4
        "entropy": [0.0, 0.0, math.log(T)],
    }
    for name, values in expect.items():
        assert np.allclose(s[name][0], values, atol=2e-3), (name, s[name][0], values)
    assert np.allclose(s["other_sentences"], 1 - s["same_sentence"])
    assert all(v.shape == (1, 3) and v.dtype == np.float32 for v in s.values())


def test_punctuation_tokens():
    assert all(AH.is_punctuation(t) for t in (",", ".", "'", "##.", "…", "\u201c", "--", "$"))
    assert not any(AH.is_punctuation(t) for t in ("[CLS]", "[SEP]", "a", "##s", "3", "", "##"))


def test_inter_stats_on_a_hand_made_example():
    tr = synthetic_trace(n_sent=4, short=(), k=1)
    a = np.zeros((1, 2, 4, 4), dtype=np.float32)
    a[0, 0] = np.eye(4)                       # head 1: itself
    a[0, 1] = 0.25                            # head 2: uniform
    tr = dataclasses.replace(tr, inter_attention=a.astype(np.float16))
    s = AH.inter_stats(tr)
    assert np.allclose(s["same_sentence"][0], [1, 0.25]) and np.allclose(s["entropy"][0], [0, math.log(4)], atol=1e-3)
    assert np.allclose(s["earlier"][0], [0, (0 + 1 + 2 + 3) * 0.25 / 4]) and np.allclose(s["later"][0], s["earlier"][0])
    assert np.allclose(s["selected"][0], [0.25, 0.25])  # one of 4 selected: itself for 1 row of 4
    assert np.allclose(s["same_sentence"] + s["earlier"] + s["later"], 1, atol=1e-3)


# --- switching heads off ------------------------------------------------------------------------

def test_switching_off_a_bert_head_equals_transformers_with_its_slice_zeroed(tiny, tiny_dir):
    """Ours with head_mask vs transformers.BertModel (eager) with a hook zeroing the head's columns
    of its self-attention output. (transformers 5 dropped BertModel's ``head_mask`` argument.)"""
    transformers = pytest.importorskip("transformers")
    ref = transformers.BertModel.from_pretrained(tiny_dir, attn_implementation="eager").eval()
    ours = tiny.model.bert
    ref.load_state_dict(ours.state_dict(), strict=False)
    dh = ours.config.hidden_size // ours.config.num_attention_heads
    ids = torch.randint(5, 30, (1, 20))
    segs, mask = torch.zeros_like(ids), torch.ones_like(ids)
    for layer, head in [(0, 0), (1, 3), (2, 1)]:
        def zero(module, args, out, sl=slice(head * dh, (head + 1) * dh)):
            ctx = out[0].clone()
            ctx[..., sl] = 0
            return (ctx, *out[1:])

        gates = torch.ones(3, 4)
        gates[layer, head] = 0
        handle = ref.encoder.layer[layer].attention.self.register_forward_hook(zero)
        with torch.no_grad():
            expected = ref(input_ids=ids, token_type_ids=segs, attention_mask=mask).last_hidden_state
            got = ours(ids, segs, mask, head_mask=gates)
            plain = ours(ids, segs, mask)
        handle.remove()
        assert (got - expected).abs().max() < 1e-5 and (got - plain).abs().max() > 1e-3


def test_switching_off_an_inter_head_equals_zeroing_its_output_weights(tiny):
    """A head's context enters only through its columns of final_linear: zero them instead."""
    ext = tiny.model.ext_layer
    x, mask = torch.randn(1, 5, 16), torch.ones(1, 5, dtype=torch.bool)
    dh = 16 // ext.config.heads
    for layer, head in [(0, 2), (1, 0)]:
        gates = torch.ones(2, 4)
        gates[layer, head] = 0
        zeroed = copy.deepcopy(ext)
        with torch.no_grad():
            zeroed.transformer_inter[layer].self_attn.final_linear.weight[:, head * dh:(head + 1) * dh] = 0
            assert torch.allclose(ext(x, mask, gates), zeroed(x, mask), atol=1e-6)
            assert not torch.allclose(ext(x, mask, gates), ext(x, mask), atol=1e-4)


def test_cli_mask_heads_whole_layer_equals_a_zero_attention_output(tiny_dir, tmp_path, capsys):
    """``--mask-heads`` every head of BERT layer 1: the layer's attention sub-block is then
    LayerNorm(dense bias + residual); scores equal the model with that layer's context zeroed."""
    from model.__main__ import main

    doc = tmp_path / "doc.txt"
    doc.write_text(DOC)
    spec_ = ",".join(f"bert:1.{h}" for h in range(1, 5)) + ",inter:2.3"
    assert main(["summarize", str(doc), "--backbone", str(tiny_dir), "--device", "cpu", "--json",
                 "--mask-heads", spec_]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["masked_heads"] == {"bert": [[0, h] for h in range(4)], "inter": [[1, 2]]}

    s = Summarizer.load(tiny_dir, device="cpu")  # what the CLI loaded (the untrained scorer is seeded)
    att = s.model.bert.encoder.layer[0].attention
    handle = att.self.register_forward_hook(lambda m, args, out: torch.zeros_like(out))
    inter_gates = torch.ones(s.model.ext_layer.config.layers, s.model.ext_layer.config.heads)
    inter_gates[1, 2] = 0
    with torch.no_grad(), record(s.model, ["bert.embed", "bert.0.ln1"]) as rec:
        enc = s.encode(DOC)
        scores = s.score_vectors(s.sentence_vectors(enc)[0], inter_gates)[0]
    handle.remove()
    expected = s.summary(enc, scores).scores
    assert np.allclose([x for x in out["scores"] if x is not None], [x for x in expected if x is not None], atol=1e-6)
    x = rec["bert.embed"][0]  # the residual into layer 1
    ln = att.output.LayerNorm
    assert torch.allclose(rec["bert.0.ln1"][0], ln(att.output.dense.bias + x), atol=1e-6)


def test_batched_ablation_equals_one_head_at_a_time(tiny):
    enc = tiny.encode(LONG_DOC, None)
    assert len(enc.window_starts) >= 3
    for batch in (1, 3):
        base, scores = AH.ablation_scores(tiny, enc, batch=batch)
        with torch.inference_mode():
            assert np.allclose(base, tiny.score(enc).double().numpy(), atol=1e-6)
            for part, layer, head in [("bert", 0, 0), ("bert", 1, 2), ("bert", 2, 3), ("inter", 0, 1), ("inter", 1, 3)]:
                one = tiny.score(enc, [(part, layer, head)]).double().numpy()
                assert np.allclose(scores[part][layer, head], one, atol=1e-6), (batch, part, layer, head)


def test_ablation_summary_fields(tiny):
    calls = []
    abl = AH.importance_ablation(tiny, LONG_DOC, k=2, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1][0] == calls[-1][1] and len(calls) > 3
    enc = tiny.encode(LONG_DOC, None)
    for part, (n_layers, n_heads) in AH.shapes(tiny).items():
        assert abl.importance[part].shape == abl.selection_changed[part].shape == (n_layers, n_heads)
        layer, head = np.unravel_index(abl.importance[part].argmax(), abl.importance[part].shape)
        with torch.inference_mode():
            after = tiny.summarize(LONG_DOC, 2, mask_heads=[(part, int(layer), int(head))])
        assert after.selected == tuple(abl.selected_after[part][layer][head])
        assert abl.selection_changed[part][layer, head] == (after.selected != abl.selected)
        before = tiny.summary(enc, abl.base_scores)
        delta = [a - b for a, b in zip(after.scores, before.scores) if a is not None]
        assert math.isclose(abl.mean_abs_change[part][layer, head], np.abs(delta).mean(), abs_tol=1e-6)


def test_gradient_matches_a_finite_difference(tiny):
    """∂L/∂ξ_h (one backward) against (L(1 + ε) - L(1 - ε)) / 2ε, in float64."""
    s = copy.copy(tiny)
    s.model = copy.deepcopy(tiny.model).double()
    enc = s.encode(LONG_DOC, None)
    grad_bert, grad_inter = AH.gate_gradients(s, enc, k=2)
    with torch.inference_mode():
        _, parts = AH.selected_parts(s, enc, s.score(enc), 2, True)

        def objective(part, layer, head, value):
            gates = {p: torch.ones(shape, dtype=torch.float64) for p, shape in AH.shapes(s).items()}
            gates[part][layer, head] = value
            return float(s.score_vectors(s.sentence_vectors(enc, gates["bert"])[0], gates["inter"])[0][parts].sum())

        eps = 1e-5
        for part, layer, head, g in [("bert", 1, 2, grad_bert), ("bert", 0, 0, grad_bert), ("inter", 1, 1, grad_inter)]:
            fd = (objective(part, layer, head, 1 + eps) - objective(part, layer, head, 1 - eps)) / (2 * eps)
            assert math.isclose(g[layer, head], fd, rel_tol=1e-5, abs_tol=1e-9), (part, layer, head, g[layer, head], fd)
    assert np.allclose(AH.importance_gradient(tiny, LONG_DOC, 2)[0], np.abs(grad_bert), rtol=1e-3, atol=1e-6)


def test_the_gradient_holds_one_window_s_graph_at_a_time(tiny, monkeypatch):
    """A long document's gradient never keeps two windows' graphs at once (issue 34: 99,000
    characters took 7 GB): each window's forward with a graph is followed by its backward."""
    enc = tiny.encode(LONG_DOC, None)
    assert len(enc.window_starts) >= 3
    pending, most, grad = [0], [0], torch.autograd.grad

    def count(*_):
        if torch.is_grad_enabled():
            pending[0] += 1
            most[0] = max(most[0], pending[0])

    def backward(*a, **kw):
        pending[0] = 0
        return grad(*a, **kw)

    monkeypatch.setattr(torch.autograd, "grad", backward)
    handle = tiny.model.bert.register_forward_hook(count)
    try:
        AH.gate_gradients(tiny, enc, k=2)
    finally:
        handle.remove()
    assert most[0] == 1


def test_agreement():
    rng = np.random.default_rng(0)
    a = rng.random((6, 12))
    b = a + 0.3 * rng.random((6, 12))
    scipy_stats = pytest.importorskip("scipy.stats")
    assert math.isclose(AH.agreement(a, b)["spearman"], scipy_stats.spearmanr(a.ravel(), b.ravel())[0], rel_tol=1e-9)
    ties = np.array([1.0, 1, 2, 3, 3, 3])
    assert math.isclose(AH.agreement(ties, -ties)["spearman"], -1.0)
    assert math.isclose(AH.agreement(ties, np.arange(6.0))["spearman"], scipy_stats.spearmanr(ties, np.arange(6))[0])
    assert AH.agreement(a, a)["top5_overlap"] == 1.0 and AH.agreement(a, -a)["top5_overlap"] == 0.0
    assert AH.ranking({"bert": np.array([[0.0, 3]]), "inter": np.array([[2.0]])}, 2) == [("bert", 0, 1), ("inter", 0, 0)]


# --- the JSON and the figures ------------------------------------------------------------------------

def test_heads_json(summarizer, tmp_path):
    doc = tmp_path / "doc.txt"
    doc.write_text(SHORT)
    p = argparse.ArgumentParser()
    AH.add_arguments(p)
    args = p.parse_args([])
    args.file, args.k, args.block, args.device = str(doc), 3, True, "cpu"
    out = json.loads(json.dumps(AH.cli(args, summarizer)))
    for part, (n_layers, n_heads) in (("bert", (6, 12)), ("inter", (2, 8))):
        grids = [*out[part]["stats"].values(), *out[part]["importance"].values(), out[part]["selection_changed"]]
        assert all(np.array(g).shape == (n_layers, n_heads) for g in grids)
        assert np.array(out[part]["selection_changed"]).dtype == bool
    assert set(out["bert"]["stats"]) == set(AH.BERT_STATS) and set(out["inter"]["stats"]) == set(AH.INTER_STATS)
    assert len(out["top"]) == 5 and out["top"][0]["ablation"] == max(
        max(max(row) for row in out[p]["importance"]["ablation"]) for p in ("bert", "inter"))
    assert -1 <= out["agreement"]["all"]["spearman"] <= 1 and out["selected"]
    top = out["top"][0]  # its "selected_after" is what --mask-heads gives
    with torch.inference_mode():
        after = summarizer.summarize(SHORT, mask_heads=[(top["part"], top["layer"], top["head"])])
    assert list(after.selected) == top["selected_after"]


def test_python_m_analysis_heads(tmp_path, capsys):
    """The command line end to end (gradient only: the ablation is tested above)."""
    pytest.importorskip("analysis.explain")  # analysis/__main__.py loads every command's module
    from analysis.__main__ import main

    doc = tmp_path / "doc.txt"
    doc.write_text(SHORT)
    assert main(["heads", str(doc), "--json", "--no-ablation", "--k", "2", "--device", "cpu"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["bert"]["importance"]["ablation"] is None and np.array(out["bert"]["importance"]["gradient"]).shape == (6, 12)
    assert len(out["selected"]) == 2 and out["window"] == 0 and "agreement" not in out
    assert main(["heads", str(doc), "--window", "2"]) == 1  # one window only: a one-line error
    assert "window 1 does not exist" in capsys.readouterr().err


def test_figures_are_typed_arrays_with_one_based_labels():
    from viz import heads as VH

    rng = np.random.default_rng(0)
    g, a = rng.random((6, 12)), rng.random((6, 12))
    figs = [VH.head_map(g, "t"), VH.head_map(g - a, "d", diverging=True), VH.importance_maps(g, a, changed=a > 0.5, agreement=AH.agreement(g, a)),
            VH.importance_maps(g, None), VH.difference_maps(g, a, "x"),
            VH.score_comparison(np.array(["a", "b"], dtype=object), np.array([0.1, 0.2]), np.array([0.3, 0.1]), title="t")]
    numeric = {"heatmap": ("z",), "bar": ("x",), "scatter": ("x", "y")}
    for fig in figs:
        for trace in fig.data:
            for attr in numeric[trace.type]:
                v = getattr(trace, attr)
                assert isinstance(v, np.ndarray) and v.dtype == np.float32, (trace.type, attr, type(v))
    hm = figs[0].data[0]
    assert list(hm.x) == [str(h) for h in range(1, 13)] and list(hm.y) == [str(layer) for layer in range(1, 7)]
    assert "Spearman" in figs[2].layout.title.text and len(figs[2].data) >= 4
    assert figs[1].data[0].zmid == 0  # a difference map: centred on 0


# --- the page ------------------------------------------------------------------------------------------

def test_heads_page(summarizer):
    text = SHORT + "\nThis line makes the document this test's own."  # (the exact ablation of SHORT may be cached:
    at = summarize(new_app(), text)                                      # the Why page's test computes it)
    at.switch_page("pages/heads.py").run()
    assert not at.exception
    top = at.selectbox(key="heads_pick").value                          # opens on the most important head
    assert [c.key for c in charts(at)] == ["heads_stat_map", "heads_inter_stat_map",
                                           "heads_token_map" if top[0] == "bert" else "heads_inter_map"]
    assert '"1","2","3","4","5","6"' in spec(charts(at)[0])             # layers 1-based
    assert len(at.dataframe) == 2 and len(at.main.get("download_button")) == 2
    at.selectbox(key="heads_stat").set_value("entropy").run()
    assert "entropy" in spec(charts(at)[0])
    at.selectbox(key="heads_pick").set_value(("inter", 1, 3)).run()   # choosing a head opens its map
    assert [c.key for c in charts(at)][-1] == "heads_inter_map" and "layer 2, head 4" in spec(charts(at)[-1])

    at.segmented_control(key="heads_view").set_value("Importance").run()
    assert [c.key for c in charts(at)][:2] == ["heads_importance_bert", "heads_importance_inter"]
    at.button(key="heads_run").click().run()                          # the exact ablation, with a progress bar
    assert not at.exception and "Spearman" in spec(charts(at)[0]) and len(at.metric) == 3
    assert len(at.dataframe) == 1 and len(at.dataframe[0].value) == 5

    at.segmented_control(key="heads_view").set_value("Switch heads off").run()
    at.button(key="heads_top5").click().run()
    off = at.multiselect(key="heads_off").value
    assert len(off) == 5 and not at.exception
    assert [c.key for c in charts(at)] == ["heads_scores"] and len(at.metric) == 3
    with torch.inference_mode():
        expected = summarizer.summarize(text, mask_heads=off)
    shown = "".join(h.proto.body for h in at.get("html"))
    assert all(f"<b>{i + 1}.</b>" in shown for i in expected.selected)

    at.segmented_control(key="heads_view").set_value("What fine-tuning changed").run()
    assert not at.exception and [c.key for c in charts(at)] == ["heads_difference"]
    changes = at.dataframe[0].value                                   # layers below the fine-tuned ones are the backbone's
    with safe_open(DEFAULT_CHECKPOINT, "pt") as f:
        first = min(int(i) for i in f.metadata()["finetuned_layers"].split(","))  # 0-based
    assert first > 0 and (changes[[f"mean |Δ| layer {i}" for i in range(1, first + 1)]] == 0).all().all()
    assert (changes["mean |Δ| layer 6"] > 0).all()

    at.segmented_control(key="heads_view").set_value("Statistics").run()
    at.selectbox(key="heads_pick").set_value(("bert", 4, 2)).run()
    at.button(key="heads_open_bert").click().run()                    # open on the BERT attention page
    assert not at.exception and at.session_state["bert_layer"] == 4 and at.session_state["bert_head"] == 2
    assert "layer 5, head 3" in spec(charts(at)[0])


def test_heads_page_with_the_untrained_scorer_says_importance_is_not_meaningful(summarizer):
    from ui.models import UNTRAINED

    at = new_app()
    at.selectbox(key="weights").set_value(UNTRAINED).run()
    at = summarize(at, SHORT)
    at.switch_page("pages/heads.py").run()
    at.segmented_control(key="heads_view").set_value("Importance").run()
    assert not at.exception and "untrained" in at.warning[-1].value
    at.segmented_control(key="heads_view").set_value("What fine-tuning changed").run()
    assert not at.exception and "unmodified backbone" in at.info[0].value and not charts(at)
