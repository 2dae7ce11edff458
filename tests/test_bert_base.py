"""The paper's BertSumExt at its size: a PreSumm checkpoint with random weights at BERT-base shape
(written at test time by benchmarks/presumm_fixture.py), through the loader, parity with
transformers, the command lines, and every page of the app (AppTest; Chromium: test_browser.py)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from model.load import ModelSpec, parse_model_spec, read_model_specs, read_state_dict
from model.hooks import names, record
from model.summarizer import Summarizer

ROOT = Path(__file__).resolve().parents[1]
ARTICLE = (ROOT / "examples" / "bbc_call_centres.txt").read_text(encoding="utf-8")
SHORT = ("The oil price rose again on Monday in London. Analysts said the growth was a surprise to them. "
         "He said that it was news for the market and for the banks. The end came late on a Friday evening.")

pytestmark = pytest.mark.slow


def test_presumm_checkpoint_loads_at_bert_base_size(presumm_base, presumm_model):
    backbone, checkpoint = presumm_base
    m = presumm_model
    assert m.size()[:2] == (12, 12) and m.model.bert.config.hidden_size == 768
    assert m.model.bert.config.intermediate_size == 3072 and m.weights == "trained"
    ext = m.model.ext_layer.config
    assert (ext.layers, ext.heads, ext.d_ff) == (2, 8, 2048)  # heads from PreSumm's opt.ext_heads
    assert m.trained_tokens == 512                             # from opt.max_pos
    ckpt, meta = read_state_dict(checkpoint)  # through the restricted unpickler: PreSumm's optimizer class is not here
    assert meta == {"inter_heads": "8", "trained_tokens": "512", "encoder": "bert"}
    ours = m.model.state_dict()
    for k in ("ext_layer.transformer_inter.1.self_attn.linear_query.weight", "ext_layer.wo.weight",
              "ext_layer.transformer_inter.0.feed_forward.layer_norm.bias"):
        assert torch.equal(ours[k], ckpt[k])
    assert torch.equal(ours["bert.encoder.layer.11.attention.self.key.weight"],
                       ckpt["bert.model.encoder.layer.11.attention.self.key.weight"])  # the checkpoint's BERT, not the backbone's


def test_bert_base_matches_transformers(presumm_base, presumm_model):
    """Our BERT vs transformers.BertModel on the checkpoint's BERT-base weights: every layer's
    attention and the top hidden states, a padded batch of two."""
    transformers = pytest.importorskip("transformers")
    ref = transformers.BertModel.from_pretrained(presumm_base[0], attn_implementation="eager").eval()
    ours = presumm_model.model.bert
    missing, unexpected = ref.load_state_dict(ours.state_dict(), strict=False)
    assert not unexpected and all(k.startswith("pooler.") or k.endswith("position_ids") for k in missing)
    enc = presumm_model.encode(ARTICLE, 1)
    T = 300
    ids = torch.tensor(enc.input_ids[:T])[None].repeat(2, 1)
    segs = torch.tensor(enc.segment_ids[:T])[None].repeat(2, 1)
    mask = torch.ones(2, T, dtype=torch.long)
    mask[1, 200:] = 0
    with torch.no_grad(), record(presumm_model.model, names(presumm_model.model, r"bert\.\d+\.attn\.pattern")) as rec:
        h = ours(ids, segs, mask)
        out = ref(input_ids=ids, token_type_ids=segs, attention_mask=mask, output_attentions=True)
    real = mask.bool()
    assert (h - out.last_hidden_state)[real].abs().max().item() < 1e-4
    assert len(out.attentions) == 12
    for i, a in enumerate(out.attentions):
        assert (rec[f"bert.{i}.attn.pattern"][0][0] - a[0]).abs().max().item() < 1e-5
        assert (rec[f"bert.{i}.attn.pattern"][0][1, :, :200] - a[1, :, :200]).abs().max().item() < 1e-5


def test_trace_at_bert_base_size(presumm_model):
    tr = presumm_model.trace(ARTICLE)
    T, S = len(tr.tokens), len(tr.input_sentences)
    assert tr.bert_attention.shape == (12, 12, T, T) and tr.bert_query.shape == (12, 12, T, 64)
    assert tr.inter_attention.shape == (2, 8, S, S) and tr.sentence_vectors.shape == (S, 768)
    assert np.allclose(tr.bert_attention.astype(np.float32).sum(-1), 1, atol=2e-2)
    # BertSum was trained on the first 512 tokens: the sentences of later windows are marked
    later = {int(i) for i in tr.input_sentences[tr.windows[1][0]:]}
    assert len(tr.windows) == 2 and set(tr.summary.past_training) == later


def test_800_position_variant_reads_800_token_windows(tmp_path):
    """PreSumm's longer variant: an 800-row position table (rows past 512 copied from row 511)
    and opt.max_pos = 800. Two layers keep it quick: the shape that matters is the table."""
    from benchmarks.presumm_fixture import write

    m = Summarizer.load(*write(tmp_path, layers=2, max_pos=800), device="cpu")
    assert m.max_tokens == 800 and m.trained_tokens == 800
    table = m.model.bert.embeddings.position_embeddings.weight
    assert table.shape == (800, 768) and torch.equal(table[700], table[511])
    tr = m.trace(ARTICLE)
    assert 512 < len(tr.tokens) <= 800  # the first window: up to 800 tokens
    assert set(tr.summary.past_training) == {int(i) for i in tr.input_sentences[tr.windows[1][0]:]}


# --- models named at start ---------------------------------------------------------------------

def test_model_spec_parsing(tmp_path):
    assert parse_model_spec("paper=/m/bert,/m/ext.pt") == ModelSpec("paper", Path("/m/bert"), Path("/m/ext.pt"))
    assert parse_model_spec(" plain = rel/bert ", base=tmp_path) == ModelSpec("plain", tmp_path / "rel/bert", None)
    for bad in ("no-equals", "=dir", "name=", "name=,ckpt"):
        with pytest.raises(ValueError, match="NAME=BACKBONE_DIR"):
            parse_model_spec(bad)
    toml = tmp_path / "models.toml"
    toml.write_text('[models.paper]\nbackbone = "bert"\ncheckpoint = "ext.pt"\n[models.plain]\nbackbone = "/abs/bert"\n')
    assert read_model_specs(toml) == [ModelSpec("paper", tmp_path / "bert", tmp_path / "ext.pt"),
                                      ModelSpec("plain", Path("/abs/bert"))]
    toml.write_text("[models.x]\ncheckpoint = 3\n")
    with pytest.raises(ValueError, match=r"\[models.x\] needs backbone"):
        read_model_specs(toml)
    toml.write_text("[models\n")
    with pytest.raises(ValueError, match="models.toml"):
        read_model_specs(toml)


def test_a_spec_names_its_problem_without_reading_weights(presumm_base, tmp_path):
    backbone, checkpoint = presumm_base
    assert ModelSpec("ok", backbone, checkpoint).problem() is None
    assert "not a BERT directory" in ModelSpec("x", tmp_path).problem()
    assert "no such checkpoint" in ModelSpec("x", backbone, tmp_path / "missing.pt").problem()


# --- command lines ---------------------------------------------------------------------------

def test_cli_summarize_and_trace(presumm_base, tmp_path, capsys):
    from model.__main__ import main

    backbone, checkpoint = presumm_base
    doc = tmp_path / "a.txt"
    doc.write_text(ARTICLE)
    args = ["--backbone", str(backbone), "--checkpoint", str(checkpoint), "--device", "cpu"]
    assert main(["summarize", str(doc), "--json", *args]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["selected"]) == 3 and out["past_training"]
    assert main(["trace", str(doc), "--out", str(tmp_path / "t.npz"), *args]) == 0
    assert np.load(tmp_path / "t.npz")["bert_attention"].shape[:2] == (12, 12)


def test_cli_analysis_with_a_named_model(presumm_base, tmp_path, capsys):
    from analysis.__main__ import main

    backbone, checkpoint = presumm_base
    doc = tmp_path / "a.txt"
    doc.write_text(SHORT)
    spec = f"paper={backbone},{checkpoint}"
    assert main(["explain", str(doc), "--model", spec]) == 0
    assert len(json.loads(capsys.readouterr().out)["sentences"]) == 4
    assert main(["heads", str(doc), "--model", spec, "--compare-backbone"]) == 0  # every head ablated too
    heads = json.loads(capsys.readouterr().out)
    assert np.array(heads["bert"]["importance"]["ablation"]).shape == (12, 12)
    assert np.array(heads["backbone"]["difference"]["entropy"]).shape == (12, 12)  # its own backbone's, not MiniLM's
    assert main(["explain", str(doc), "--model", "broken=/nonexistent"]) == 1
    assert "not a BERT directory" in capsys.readouterr().err


# --- the app -----------------------------------------------------------------------------------

@pytest.fixture
def app_with(presumm_base, monkeypatch, presumm_model):
    """AppTest of app.py started as ``streamlit run app.py -- --model paper=… --model broken=…``."""
    backbone, checkpoint = presumm_base
    monkeypatch.setattr(sys, "argv", ["app.py", "--model", f"paper={backbone},{checkpoint}",
                                      "--model", f"broken={backbone},{backbone / 'missing.pt'}"])
    from ui.resources import get_model

    get_model.clear()


def test_every_page_at_bert_base_size(app_with):
    from helpers import charts, new_app, spec, summarize

    at = new_app()
    assert at.selectbox(key="weights").value == "paper"      # the model named at start is the default
    assert "paper" in at.selectbox(key="weights").options and "broken" in at.selectbox(key="weights").options
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert "12 layers × 12 heads" in sidebar and "M parameters" in sidebar
    assert "broken" in sidebar and "no such checkpoint file" in sidebar  # listed with its reason
    summarize(at, ARTICLE)
    assert not at.error
    at.switch_page("pages/bert_attention.py").run()
    at.selectbox(key="bert_layer").set_value(11).run()
    first = json.loads(spec(charts(at)[0]))
    assert [b["label"] for m in first["layout"]["updatemenus"] if m["name"] == "head" for b in m["buttons"]] == \
        ["mean"] + [str(h) for h in range(1, 13)]
    assert [b["label"] for m in first["layout"]["updatemenus"] if m["name"] == "layer" for b in m["buttons"]] == \
        [str(l) for l in range(1, 13)]
    at.segmented_control(key="bert_view").set_value("All layers × heads").run()
    overview = json.loads(spec(charts(at)[0]))
    assert [d["type"] for d in overview["data"]] == ["heatmap"] and len(overview["data"][0]["y"]) == 12 * 32
    assert overview["layout"]["xaxis"]["ticktext"] == [f"H{h}" for h in range(1, 13)]  # 144 tiles of 32 × 32 bins
    for page in ("pages/summary.py", "pages/why.py", "pages/sentence_encoder.py", "pages/masks_positions.py",
                 "pages/learn.py", "pages/heads.py", "pages/corpus.py"):
        at.switch_page(page).run()
        assert not at.exception and not at.error, (page, at.exception, at.error)
        assert page == "pages/corpus.py" or charts(at), page


def test_heads_page_at_bert_base_size(app_with):
    from helpers import charts, new_app, spec, summarize

    at = summarize(new_app(), SHORT)
    at.switch_page("pages/heads.py").run()
    assert '"12"' in spec(charts(at)[0])
    at.segmented_control(key="heads_view").set_value("Importance").run()
    at.button(key="heads_run").click().run()  # 144 BERT heads ablated
    assert not at.exception and "Spearman" in spec(charts(at)[0])
    at.segmented_control(key="heads_view").set_value("What fine-tuning changed").run()
    assert not at.exception and [c.key for c in charts(at)] == ["heads_difference"]


def test_a_broken_model_is_one_line_and_the_others_still_work(app_with):
    from helpers import new_app, summarize_button

    at = new_app()
    at.selectbox(key="weights").set_value("broken").run()
    assert any("no such checkpoint file" in e.value for e in at.error) and not at.exception
    at.text_area(key="document").set_value(SHORT)
    summarize_button(at).click().run()
    assert not at.exception and any("cannot be used" in e.value for e in at.error)
    at.selectbox(key="weights").set_value("paper").run()
    summarize_button(at).click().run()
    assert not at.exception and not at.error


def test_two_models_side_by_side(app_with, presumm_model, summarizer):
    from ui.models import shipped_weights
    from helpers import charts, new_app, spec, summarize

    at = summarize(new_app(), SHORT)
    shipped = shipped_weights()[0]
    at.selectbox(key="summary_other").set_value(shipped).run()
    assert not at.exception and [h.value for h in at.header][:2] == ["paper", shipped]
    chart = json.loads(spec(next(c for c in charts(at) if c.key == "summary_side_by_side")))
    a, b = presumm_model.summarize(SHORT), summarizer.summarize(SHORT)
    assert [d["name"] for d in chart["data"]] == ["paper", shipped]
    shown = [np.frombuffer(__import__("base64").b64decode(d["x"]["bdata"]), np.float32) for d in chart["data"]]
    assert np.allclose(shown[0], a.scores, atol=1e-5) and np.allclose(shown[1], b.scores, atol=1e-5)
    at.switch_page("pages/heads.py").run()
    at.selectbox(key="heads_other").set_value(shipped).run()
    maps = {c.key: json.loads(spec(c)) for c in charts(at)}
    assert len(maps["heads_stat_map"]["data"][0]["y"]) == 12
    assert len(maps["heads_other_stat_map"]["data"][0]["y"]) == 6  # MiniLM's 6 layers


def test_a_corpus_worker_loads_the_named_model(presumm_base):
    """``python -m analysis corpus … --model NAME=DIR,CKPT``: each Ray actor loads that backbone and
    checkpoint (here one actor, called as Ray Data calls it), statistics over 144 BERT heads."""
    from analysis.corpus import Worker

    backbone, checkpoint = presumm_base
    worker = Worker(str(backbone), str(checkpoint), 3, True, True, False)
    assert worker.summarizer.size()[:2] == (12, 12)
    out = worker({"unit": [json.dumps([{"id": "a", "text": SHORT}])]})
    summary, heads = json.loads(json.loads(out["summaries"][0])[0]), json.loads(out["heads"][0])
    assert summary["id"] == "a" and len(summary["selected"]) == 3
    assert len({(r["layer"], r["head"]) for r in heads if r["part"] == "bert"}) == 144
