"""Corpus: summaries and head statistics over many documents (analysis/corpus.py, on Ray):
open a results directory, or run a small corpus from an uploaded JSONL."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import pandas as pd
import streamlit as st

from analysis import heads as AH
from ui import a11y, state
from ui.figures import plot
from ui.legacy import start_session
from ui.models import default_model, model_arguments
from ui.widgets import ROOT
from ui.corpus_runs import MAX_DOCS, UPLOAD, check_upload, corpus_root, folder, new_upload, prune, runs
from ui.store import private_file
from viz.common import markdown_text, preview
from viz.corpus import mean_spread_heatmap, position_histogram

@st.cache_resource(show_spinner=False)
def run_queue() -> dict:
    """Runs started from browsers, one at a time by default (env MICROSCOPE_CORPUS_RUNS): each
    starts its own Ray and model, ~2 GB, on the same machine as the app."""
    return {"slots": threading.Semaphore(int(os.environ.get("MICROSCOPE_CORPUS_RUNS", 1))), "waiting": [],
            "running": 0, "lock": threading.Lock()}


def run_small(lines: list[str]) -> str:
    """Run analysis.corpus on uploaded lines in a subprocess (its own Ray, its session folders in a
    temporary folder removed after), after the runs queued before it; a progress bar is fed by
    the shards it writes. Returns the run's name (``upload:TOKEN``: this session's own)."""
    queue, me = run_queue(), object()
    with queue["lock"]:
        queue["waiting"].append(me)
    note = st.empty()
    try:
        while not queue["slots"].acquire(timeout=1):
            with queue["lock"]:
                ahead = queue["running"] + queue["waiting"].index(me)
            note.info(f"Queued: {ahead} corpus run{'s' if ahead != 1 else ''} ahead of this one "
                      "(the server runs one at a time).")
    finally:
        with queue["lock"]:
            queue["waiting"].remove(me)
    with queue["lock"]:
        queue["running"] += 1
    note.empty()
    ray_tmp = None
    try:
        ray_tmp = tempfile.mkdtemp(prefix="msr")  # short: Ray's socket paths must stay under 108 characters
        corpus_root().mkdir(parents=True, exist_ok=True)
        prune()
        text = "\n".join(lines) + "\n"
        name, out = new_upload()
        private_file(out / "input.jsonl")  # 0600 before a byte of it is written
        (out / "input.jsonl").write_text(text, encoding="utf-8")
        cmd = [sys.executable, "-m", "analysis", "corpus", str(out / "input.jsonl"), "--out", str(out), "--stats",
               "--workers", "1", *model_arguments(st.session_state.get("weights") or default_model())]
        log = out / "run.log"  # a file, not a pipe: a long run's progress output would fill a pipe and block it
        private_file(log)
        with open(log, "w") as err:  # umask 077: every file and folder the run (and Ray's workers) makes is private
            proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, umask=0o077,
                                    env={**os.environ, "RAY_TMPDIR": ray_tmp})
        bar = st.progress(0.0, text="Starting Ray and the model…")
        try:
            while proc.poll() is None:
                done = sum(len(p.read_text(encoding="utf-8").splitlines())
                           for p in (out / "shards").glob("summaries-*.jsonl"))
                bar.progress(min(done / len(lines), 1.0), text=f"{done} of {len(lines)} documents")
                time.sleep(1)
        finally:
            if proc.poll() is None:  # the page went away: stop the run
                proc.kill()
            proc.wait()
            bar.empty()
        if proc.returncode != 0:  # the log stays on the server: it may name paths
            raise RuntimeError("its log is kept on the server")
        return name
    finally:
        with queue["lock"]:
            queue["running"] -= 1
        queue["slots"].release()
        if ray_tmp:
            shutil.rmtree(ray_tmp, ignore_errors=True)


start_session()
st.title("Corpus")
st.markdown("What the summarizer and its heads do **over many documents**: the share of summaries that just "
            "take the lead, where the chosen sentences sit, ROUGE against Lead-3 with confidence intervals, "
            "and every head's statistics averaged over the corpus. Large corpora run from the command line "
            "(`python -m analysis corpus IN.jsonl --out DIR --stats`, locally or on a Ray cluster) with `--out` in "
            "this server's corpus folder; they appear here. Or run up to 200 documents from a JSONL file.")

c1, c2 = st.columns(2)
upload = c2.file_uploader(f"…or run a JSONL corpus (up to {MAX_DOCS} documents)", type=["jsonl"], key="corpus_upload",
                          help='One {"id": ..., "text": ..., "reference": ...} per line; "reference" is optional.')
OWN = "corpus_own"  # this session's uploaded runs (their names): listed here, and to nobody else
own = st.session_state.setdefault(OWN, [])
if str(st.session_state.get("corpus_run", "")).startswith(UPLOAD) and st.session_state["corpus_run"] not in own:
    own.append(st.session_state["corpus_run"])  # a link to an upload (its unguessable name): opened, as a story's
if upload is not None and c2.button("Run the corpus", type="primary"):
    try:  # before the run picker is drawn, so it can show the new results
        st.session_state["corpus_run"] = run_small(check_upload(upload.getvalue()))
        own.append(st.session_state["corpus_run"])
    except ValueError as e:
        st.error(f"{markdown_text(e)}. Nothing was run.")
    except (RuntimeError, OSError) as e:
        st.error(f"The corpus run failed: {markdown_text(e)}")
available = runs(own)
if st.session_state.get("corpus_run") not in available:
    if st.session_state.get("corpus_run"):
        st.warning("This view's corpus run is not on this server (an upload is kept 7 days): showing the example.")
    state.forget("corpus_run")


def run_label(name: str) -> str:
    if not name.startswith(UPLOAD):
        return name
    made = time.strftime("%d %b %H:%M", time.localtime(available[name].stat().st_mtime))
    return f"Your upload of {made} (only you see it; its link opens it)"


name = c1.selectbox("Corpus run", list(available), key=state.keep("corpus_run"), format_func=run_label,
                    help="The example, your uploads and the runs made on this server's command line "
                         "(MICROSCOPE_CORPUS_ROOT). Another visitor's upload is never listed.")
directory = folder(name)
report_path = directory / "report.json"
try:
    report = json.loads(report_path.read_text(encoding="utf-8"))
    summaries = [json.loads(line) for line in (directory / "summaries.jsonl").read_text(encoding="utf-8").splitlines()
                 if line]
    missing = [key for key in ("documents", "summarized", "failures", "k") if key not in report]
    if missing:
        raise KeyError(missing[0])
except (OSError, ValueError, KeyError, TypeError) as e:
    why = next(w for t, w in ((json.JSONDecodeError, "a line is not valid JSON"), (OSError, "a file is missing or "
               "unreadable"), (KeyError, "an entry is missing"), (Exception, "a value is not what the app expects"))
               if isinstance(e, t))
    st.error(f"This run's results cannot be read ({why}): it is incomplete or from another version of the app. "
             "Pick another run.")
    st.stop()
run = report.get("run", {})
m = st.columns(5)
m[0].metric("Documents", f"{report['documents']:,}")
m[1].metric("Summarized", f"{report['summarized']:,}")
m[2].metric("Failures", len(report["failures"]))
m[3].metric("Summary = lead", "–" if report["lead_share"] is None else f"{report['lead_share']:.0%}",
            help=f"Share of documents whose summary is exactly the first {report['k']} scored sentences.")
timing = report.get("timing") or {}  # every run of this folder (a resumed run keeps the earlier ones')
m[4].metric("Documents/s", timing.get("documents_per_s") or run.get("documents_per_s") or "–",
            help=f"Over the {timing['runs']} run{'s' if timing['runs'] != 1 else ''} that summarized documents "
                 f"({timing['documents']:,} documents in {timing['seconds']:,} s)." if timing.get("runs") else None)

for name, why in (report.get("not_computed") or {}).items():  # an aggregate that failed: said, the rest shown
    st.warning(f"This run's {markdown_text(name)} could not be computed ({markdown_text(why)}); its summaries "
               "are all here.")
if report.get("rouge"):
    r = report["rouge"]
    st.header(f"ROUGE against the references ({r['documents']} documents)")
    rows = [{"metric": key, "model": v["model"], f"Lead-{report['k']}": v[f"lead{report['k']}"],
             **({"greedy oracle": v["oracle"]} if "oracle" in v else {}),
             "model − Lead": v["difference"], "95% interval": f"{v['ci95'][0]:+.2f} to {v['ci95'][1]:+.2f}"}
            for key, v in r.items() if isinstance(v, dict)]
    a11y.dataframe(pd.DataFrame(rows), "ROUGE against the references", hide_index=True)
    st.caption("F1 × 100 (rouge-score, stemmed); the interval is a bootstrap over documents of the per-document "
               "difference. Lead = the first sentences of each document; the greedy oracle = the sentences "
               "training labelled (greedy ROUGE-1 + ROUGE-2 against the reference: a near-best, not the best).")

if report["selected_position_histogram"]:
    plot(position_histogram(report["selected_position_histogram"]), key="corpus_positions")

heads = report.get("heads")
if heads:
    st.header("Heads over the corpus")
    part = st.radio("Encoder", list(heads), format_func={"bert": "BERT", "inter": "Sentence encoder"}.get,
                    horizontal=True, key=state.keep("corpus_part"))
    stats = heads[part]["stats"]
    described = {**AH.INTER_STATS, **AH.BERT_STATS} if part == "bert" else {**AH.BERT_STATS, **AH.INTER_STATS}
    said = lambda n: described.get(n, AH.SHORT.get(n, n.replace("_", " ")))  # noqa: E731
    name = st.selectbox("Statistic", list(stats), key=state.keep("corpus_stat"), format_func=said)
    plot(mean_spread_heatmap(stats[name]["mean"], stats[name]["std"], said(name),
                             "BERT" if part == "bert" else "Sentence encoder"), key="corpus_heads")
    st.caption(f"Mean over {heads[part]['documents']:,} documents; hover for the spread (standard deviation).")

st.header("Documents")
ok = [d for d in summaries if "error" not in d]
if report.get("duplicate_ids"):
    st.caption("Ids used by more than one document, opened as id#2, id#3, …: " + markdown_text(", ".join(
        f"{i} (×{n})" for i, n in list(report["duplicate_ids"].items())[:20])))
by_id = {row["id"]: row for row in (report.get("rouge") or {}).get("per_document", [])}
lead_key = f"lead{report['k']}"
ok.sort(key=lambda d: by_id[d["id"]]["model_minus_lead"] if d["id"] in by_id else float("inf"))  # worst first
table = pd.DataFrame([{"id": d["id"], "selected": ", ".join(str(i + 1) for i in d["selected"]),
                       **({"model − Lead (ROUGE mean)": by_id[d["id"]]["model_minus_lead"],
                           "model R-1/2/L": "/".join(f"{x:.1f}" for x in by_id[d["id"]]["model"].values()),
                           f"Lead-{report['k']} R-1/2/L": "/".join(f"{x:.1f}" for x in by_id[d["id"]][lead_key].values()),
                           "oracle R-1/2/L": "/".join(f"{x:.1f}" for x in by_id[d["id"]]["oracle"].values()),
                           "oracle picks": ", ".join(str(i + 1) for i in by_id[d["id"]]["oracle_sentences"])}
                          if d["id"] in by_id else {}),
                       "is lead": d["selected"] == d.get("lead"), "first sentence": preview(d["sentences"][0], 80)}
                      for d in ok])
a11y.dataframe(table, "Documents", hide_index=True)
if by_id:
    st.caption("Sorted by how much the model's summary beats Lead (the mean of ROUGE-1, -2 and -L F1 of the model "
               "minus Lead's), where it loses most first; click a column to sort by it. Open any document below in "
               "every page.")
if report["failures"]:
    st.caption("Failures: " + "; ".join(markdown_text(f"{f['id']}: {f['reason']}") for f in report["failures"][:20]))


def source_text(doc_id: str, doc: dict) -> str:
    """The document as it was in the run's input (ids made unique as the run did): the file its
    report names (a command-line run's IN.jsonl; relative: in the run's folder), else its sentences joined."""
    from analysis.corpus import read_input

    path = directory / report.get("input", "input.jsonl")
    if path.is_file():
        for row in read_input(path, set()):
            if row["id"] == doc_id and "text" in row:
                return row["text"]
    return "\n".join(doc["sentences"])


def source_reference(doc_id: str) -> str:
    """The document's reference summary in the run's input ("" if it has none)."""
    from analysis.corpus import read_input

    path = directory / report.get("input", "input.jsonl")
    if path.is_file():
        for row in read_input(path, set()):
            if row["id"] == doc_id:
                ref = row.get("reference") or ""
                return "\n".join(ref) if isinstance(ref, list) else str(ref)
    return ""


def open_document(doc_id: str):
    doc = next(d for d in ok if d["id"] == doc_id)
    st.session_state["document"] = source_text(doc_id, doc)
    st.session_state["reference"] = source_reference(doc_id)  # the Summary page scores it against its reference
    st.session_state["example"] = None
    st.session_state["k"] = report["k"]
    state.request_summarize()


if ok:
    c = st.columns([3, 1])
    pick = c[0].selectbox("Open a document in the single-document views", [d["id"] for d in ok], key="corpus_doc",
                          format_func=lambda i: f"{i} (model − Lead {by_id[i]['model_minus_lead']:+.1f})" if i in by_id
                          else str(i))
    if c[1].button("Open", on_click=open_document, args=(pick,)):
        st.switch_page("pages/summary.py")
