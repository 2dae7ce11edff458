"""Corpus mode through a local Ray (analysis/corpus.py): 20 documents, one empty and one broken
line, a run killed part-way and resumed; every output checked."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """18 documents cut from the shipped examples (reference: their first two sentences), an
    empty one and a line that is not JSON."""
    paragraphs = [p for f in sorted((ROOT / "examples").glob("*.txt"))
                  for p in f.read_text(encoding="utf-8").split("\n") if len(p.split()) > 12]
    path = tmp_path_factory.mktemp("corpus") / "in.jsonl"
    lines = []
    for n in range(18):
        text = "\n".join(paragraphs[(n + j) % len(paragraphs)] for j in range(4))
        lines.append(json.dumps({"id": f"d{n}", "text": text, "reference": paragraphs[n % len(paragraphs)]}))
    lines.insert(5, json.dumps({"id": "empty", "text": "  "}))
    lines.insert(11, "{not json")
    path.write_text("\n".join(lines) + "\n")
    return path


def command(corpus: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "analysis", "corpus", str(corpus), "--out", str(out), "--stats",
            "--importance", "gradient", "--workers", "2", "--unit-tokens", "300"]


@pytest.fixture(scope="module")
def resumed(corpus, tmp_path_factory):
    """The corpus run killed after two shards, then run again to the end: (DIR, ids kept by the
    killed run, what the second run printed)."""
    out = tmp_path_factory.mktemp("run") / "out"
    env = {**os.environ, "RAY_DEDUP_LOGS": "0"}
    first = subprocess.Popen(command(corpus, out), cwd=ROOT, env=env, start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and len(list((out / "shards").glob("summaries-*.jsonl"))) < 2:
        time.sleep(0.2)
    os.killpg(first.pid, signal.SIGKILL)  # interrupted: the driver and its local Ray, at once
    first.wait()
    kept = {json.loads(line)["id"] for p in (out / "shards").glob("summaries-*.jsonl")
            for line in p.read_text().splitlines()}
    assert 0 < len(kept) < 20 and not list((out / "shards").glob("*.tmp"))  # whole shards only

    done = subprocess.run(command(corpus, out), cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return out, kept, json.loads(done.stdout)


def test_corpus_run_interrupted_then_resumed(resumed):
    out, kept, printed = resumed
    assert printed["run"]["documents_this_run"] == 20 - len(kept)  # the finished ones were skipped
    timing = printed["timing"]  # issue 73: the killed run's timing is kept beside the second's
    assert timing["runs"] == 2 and printed["run"] in printed["runs"] and printed["runs"][-1] == printed["run"]
    assert printed["run"]["documents_this_run"] < timing["documents"] <= 20
    assert timing["seconds"] > printed["run"]["seconds"] and timing["time_to_first_result_s"] > 0

    rows = [json.loads(line) for line in (out / "summaries.jsonl").read_text().splitlines()]
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)) == 20
    ok = [r for r in rows if "error" not in r]
    assert len(ok) == 18 and all(len(r["selected"]) == 3 and len(r["scores"]) == len(r["sentences"]) for r in ok)
    report = json.loads((out / "report.json").read_text())
    assert sorted(f["id"] for f in report["failures"]) == ["empty", "line-12"]
    assert "empty" in next(f["reason"] for f in report["failures"] if f["id"] == "empty")
    assert sum(report["selected_position_histogram"]) == 3 * 18 and 0 <= report["lead_share"] <= 1
    r1 = report["rouge"]["rouge1"]
    assert report["rouge"]["documents"] == 18 and r1["ci95"][0] <= r1["difference"] <= r1["ci95"][1]

    heads = pd.read_parquet(out / "heads.parquet")
    assert heads["layer"].dtype == "int8" and heads["cls"].dtype == "float16"
    assert len(heads) == 18 * (6 * 12 + 2 * 8) and heads["id"].nunique() == 18
    bert = report["heads"]["bert"]["stats"]
    assert len(bert["cls"]["mean"]) == 6 and len(bert["cls"]["mean"][0]) == 12
    assert "importance_gradient" in bert and "selected" in report["heads"]["inter"]["stats"]
    mean_cls = heads[heads["part"] == "bert"].groupby(["layer", "head"])["cls"].mean().to_numpy().reshape(6, 12)
    assert abs(mean_cls - pd.DataFrame(bert["cls"]["mean"]).to_numpy()).max() < 1e-3


def test_corpus_page_opens_results_and_a_document(corpus, resumed, summarizer, monkeypatch):
    from helpers import charts, new_app

    monkeypatch.setenv("MICROSCOPE_CORPUS_ROOT", str(resumed[0].parent))  # a command-line run in the server's folder
    at = new_app()
    at.switch_page("pages/corpus.py").run()
    at.selectbox(key="corpus_run").set_value(resumed[0].name).run()
    assert not at.exception and not at.error
    assert [m.value for m in at.metric][:3] == ["20", "18", "2"]
    assert [c.key for c in charts(at)] == ["corpus_positions", "corpus_heads"] and len(at.dataframe) == 2
    at.selectbox(key="corpus_stat").set_value("entropy").run()
    assert "entropy" in charts(at)[1].proto.spec
    # issue 73: a browser of the corpus, each document's ROUGE beside Lead-3 and the oracle, worst first
    table = at.dataframe[-1].value
    diffs = table["model − Lead (ROUGE mean)"].tolist()
    assert len(diffs) == 18 and diffs == sorted(diffs) and "oracle R-1/2/L" in table.columns
    report = json.loads((resumed[0] / "report.json").read_text())
    per = {d["id"]: d for d in report["rouge"]["per_document"]}
    worst = per[table["id"][0]]
    assert worst["model_minus_lead"] == min(d["model_minus_lead"] for d in per.values())
    assert all(0 < len(d["oracle_sentences"]) <= 3 and d["oracle_sentences"] == sorted(d["oracle_sentences"])
               for d in per.values())
    assert at.selectbox(key="corpus_doc").options[0].startswith(f"{table['id'][0]} (model − Lead")
    assert [m.value for m in at.metric][4] == str(report["timing"]["documents_per_s"])  # every run's, not 0
    at.selectbox(key="corpus_doc").set_value("d3").run()
    next(b for b in at.button if b.label == "Open").click().run()
    d3 = next(json.loads(line) for line in corpus.read_text().splitlines() if line.startswith('{"id": "d3"'))
    assert not at.exception and at.text_area(key="document").value == d3["text"]
    assert at.session_state["params"]["text"] == d3["text"]  # summarized (AppTest stays on the page it ran)
    assert at.text_area(key="reference").value == d3["reference"]  # its reference comes along (issue 60)
    at.switch_page("pages/summary.py").run()
    assert [c.key for c in charts(at)] == ["score_bars", "quality_overlap"] and len(at.dataframe[0].value) == 3


def test_a_bad_line_is_said_in_words(tmp_path):
    """Issue 34: failures read "JSONDecodeError" instead of what is wrong with the line."""
    from analysis.corpus import read_input

    path = tmp_path / "docs.jsonl"
    path.write_bytes(b'{"id": "a", "text": "Fine."}\n{"id": "b", "text": \n\xff\xfe\n[1, 2]\n')
    errors = [d["error"] for d in read_input(path, set()) if "error" in d]
    assert errors[0].startswith("line 2: not valid JSON (") and errors[1] == "line 3: not UTF-8 text"
    assert errors[2].startswith("line 4: expected") and not any("Error" in e for e in errors)


def test_the_batched_path_gives_the_one_document_results(summarizer):
    """``summarize_batch`` (the workers' path on a GPU: every window of every document padded into
    batches) equals ``summarize_one``: the same selections, scores to float32 rounding, head
    statistics to the float16 the one-document path's trace stores attention in; an empty
    document is its error, in its place. And ``attention_stats`` on the device equals
    ``bert_stats`` on a trace."""
    import numpy as np
    import torch

    from analysis.corpus import summarize_batch, summarize_one
    from analysis.heads import attention_stats, bert_stats

    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").glob("*.txt"))]
    docs = [{"id": str(i), "text": t} for i, t in enumerate(texts + [texts[0][:700]])]
    docs.insert(2, {"id": "empty", "text": "  "})
    batched = summarize_batch(summarizer, docs, 3, True, True)
    assert batched[2] == ({"id": "empty", "error": "The document is empty: paste or upload some text."}, [])
    assert len(summarizer.encode(texts[0], None).window_starts) == 2  # a two-window document among them
    for doc, (out, rows) in zip(docs, batched):
        if doc["id"] == "empty":
            continue
        want, want_rows = summarize_one(summarizer, doc, 3, True, True, False)
        assert out["selected"] == want["selected"] and out["summary"] == want["summary"]
        assert np.allclose(np.array(out["scores"], float), np.array(want["scores"], float), atol=1e-5, equal_nan=True)
        assert [(r["part"], r["layer"], r["head"]) for r in rows] == [(r["part"], r["layer"], r["head"]) for r in want_rows]
        for r, w in zip(rows, want_rows):
            assert r.keys() == w.keys() and all(abs(r[n] - w[n]) < 1e-3 for n in r if n not in ("id", "part"))
    trace = summarizer.trace(texts[1])
    a = bert_stats(trace)
    b = attention_stats(torch.from_numpy(trace.bert_attention), trace.tokens, trace.token_sentence)
    assert a.keys() == b.keys() and all(np.allclose(a[n], b[n], atol=1e-6) for n in a)
