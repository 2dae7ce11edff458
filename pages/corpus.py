"""Corpus: summaries and head statistics over many documents (analysis/corpus.py, on Ray):
open a results directory, or run a small corpus from an uploaded JSONL."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import streamlit as st

from pages import state
from pages.common import ROOT, plot, start_session
from viz.common import markdown_text, preview
from viz.corpus import mean_spread_heatmap, position_histogram

RUNS = Path("/tmp/microscope_corpus")  # small corpora run from the app
MAX_DOCS = 200

start_session()
st.title("Corpus")
st.markdown("What the summarizer and its heads do **over many documents**: the share of summaries that just "
            "take the lead, where the chosen sentences sit, ROUGE against Lead-3 with confidence intervals, "
            "and every head's statistics averaged over the corpus. Large corpora run from the command line "
            "(`python -m analysis corpus IN.jsonl --out DIR --stats`, locally or on a Ray cluster); open their "
            "results directory here, or run up to 200 documents from a JSONL file.")


def run_small(data: bytes) -> Path:
    """Run analysis.corpus on an uploaded JSONL in a subprocess (its own Ray), with a progress bar
    fed by the shards it writes; returns the results directory."""
    lines = [line for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    out = RUNS / hashlib.sha256(data).hexdigest()[:16]
    out.mkdir(parents=True, exist_ok=True)
    (out / "input.jsonl").write_text("\n".join(lines[:MAX_DOCS]) + "\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "analysis", "corpus", str(out / "input.jsonl"), "--out", str(out), "--stats",
           "--workers", "1"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    bar = st.progress(0.0, text="Starting Ray and the model…")
    n = min(len(lines), MAX_DOCS)
    while proc.poll() is None:
        done = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in (out / "shards").glob("summaries-*.jsonl"))
        bar.progress(min(done / n, 1.0), text=f"{done} of {n} documents")
        time.sleep(1)
    if proc.returncode != 0:
        raise RuntimeError((proc.stderr.read() or "").strip().splitlines()[-1:] or ["the corpus run failed"])
    bar.progress(1.0, text=f"{n} documents done")
    return out


c1, c2 = st.columns(2)
upload = c2.file_uploader(f"…or run a JSONL corpus (up to {MAX_DOCS} documents)", type=["jsonl"], key="corpus_upload",
                          help='One {"id": ..., "text": ..., "reference": ...} per line; "reference" is optional.')
if upload is not None and c2.button("Run the corpus", type="primary"):
    try:  # before the directory box is drawn, so it can show the new results
        st.session_state["corpus_dir"] = str(run_small(upload.getvalue()))
    except (RuntimeError, OSError) as e:
        st.error(f"The corpus run failed: {e}")
directory = c1.text_input("Results directory on the server", key=state.keep("corpus_dir"),
                          placeholder="/path/to/DIR (with report.json)")

report_path = Path(directory).expanduser() / "report.json" if directory else None
if report_path is None:
    st.stop()
if not report_path.is_file():
    st.error(f"No report.json in {markdown_text(directory)}: run `python -m analysis corpus IN.jsonl --out DIR` first.")
    st.stop()
report = json.loads(report_path.read_text(encoding="utf-8"))
run = report.get("run", {})
m = st.columns(5)
m[0].metric("Documents", f"{report['documents']:,}")
m[1].metric("Summarized", f"{report['summarized']:,}")
m[2].metric("Failures", len(report["failures"]))
m[3].metric("Summary = lead", "–" if report["lead_share"] is None else f"{report['lead_share']:.0%}",
            help=f"Share of documents whose summary is exactly the first {report['k']} scored sentences.")
m[4].metric("Documents/s (last run)", run.get("documents_per_s") or "–")

if report.get("rouge"):
    r = report["rouge"]
    st.subheader(f"ROUGE against the references ({r['documents']} documents)")
    rows = [{"metric": key, "model": v["model"], f"Lead-{report['k']}": v[f"lead{report['k']}"],
             "difference": v["difference"], "95% interval": f"{v['ci95'][0]:+.2f} to {v['ci95'][1]:+.2f}"}
            for key, v in r.items() if isinstance(v, dict)]
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.caption("F1 × 100 (rouge-score, stemmed); the interval is a bootstrap over documents of the per-document "
               "difference. Lead = the first sentences of each document.")

if report["selected_position_histogram"]:
    plot(position_histogram(report["selected_position_histogram"]), key="corpus_positions")

heads = report.get("heads")
if heads:
    st.subheader("Heads over the corpus")
    part = st.radio("Encoder", list(heads), format_func={"bert": "BERT", "inter": "Sentence encoder"}.get,
                    horizontal=True, key=state.keep("corpus_part"))
    stats = heads[part]["stats"]
    name = st.selectbox("Statistic", list(stats), key=state.keep("corpus_stat"))
    plot(mean_spread_heatmap(stats[name]["mean"], stats[name]["std"], name.replace("_", " "),
                             "BERT" if part == "bert" else "Sentence encoder"), key="corpus_heads")
    st.caption(f"Mean over {heads[part]['documents']:,} documents; hover for the spread (standard deviation).")

st.subheader("Documents")
summaries = [json.loads(line) for line in (report_path.parent / "summaries.jsonl").read_text(encoding="utf-8").splitlines() if line]
ok = [d for d in summaries if "error" not in d]
table = pd.DataFrame([{"id": d["id"], "selected": ", ".join(str(i + 1) for i in d["selected"]),
                       "is lead": d["selected"] == d.get("lead"), "first sentence": preview(d["sentences"][0], 80)}
                      for d in ok])
st.dataframe(table, hide_index=True)
if report["failures"]:
    st.caption("Failures: " + "; ".join(markdown_text(f"{f['id']}: {f['reason']}") for f in report["failures"][:20]))


def source_text(doc_id: str, doc: dict) -> str:
    """The document as it was in the input, else its sentences joined."""
    path = Path(report.get("input", ""))
    if path.is_file():
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                if isinstance(row, dict) and str(row.get("id")) == doc_id and isinstance(row.get("text"), str):
                    return row["text"]
    return "\n".join(doc["sentences"])


def open_document(doc_id: str):
    doc = next(d for d in ok if d["id"] == doc_id)
    st.session_state["document"] = source_text(doc_id, doc)
    st.session_state["example"] = None
    st.session_state["k"] = report["k"]
    state.request_summarize()


if ok:
    c = st.columns([3, 1])
    pick = c[0].selectbox("Open a document in the single-document views", [d["id"] for d in ok], key="corpus_doc")
    if c[1].button("Open", on_click=open_document, args=(pick,)):
        st.switch_page("pages/summary.py")
