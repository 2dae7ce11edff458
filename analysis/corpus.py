"""Corpus mode: summaries and head statistics over many documents, on Ray Data.

    python -m analysis corpus IN.jsonl --out DIR [--k 3] [--stats] [--importance gradient]
                                       [--faithfulness] [--address RAY_ADDRESS] [--limit N] [--workers N]

IN.jsonl holds one ``{"id", "text"[, "reference"]}`` per line (``reference``: a string, or a
list of sentences). DIR gets
- ``summaries.jsonl``: per document the CLI's summary JSON + ``id`` (or ``id`` + ``error``);
- ``heads.parquet`` (with ``--stats``/``--importance``): one row per document × head, compact
  dtypes (int8 layer/head, float16 values, categorical id/part);
- ``report.json``: per-head mean and spread of every statistic, the histogram of selected
  positions, the share of summaries that are exactly the lead, ROUGE vs Lead-k and the greedy oracle
  with bootstrap 95% intervals and per document (when references exist), documents/s and time to
  the first result of this run and of every run before it (``runs``, ``timing``), failures;
  with ``--faithfulness``, the scoreboard of analysis/mixing.py for each document's highest-scoring
  selected sentence, and per method its mean AOPC comprehensiveness / sufficiency with bootstrap
  95% intervals over documents, and the paired differences to random and to raw attention.

How it runs: ``ray.init()`` starts a local Ray on this machine, or ``--address``/``RAY_ADDRESS``
joins a cluster. The driver streams the input and packs the documents still to do into units
of about ``--unit-tokens`` WordPieces (estimated from characters); Ray Data maps them over a
pool of ``--workers`` actors (``Worker``: the model loaded once per actor, one torch thread),
each reducing a document's attention to statistics before anything leaves the worker. Results
are written as they come, one shard per unit, atomically (temporary file, then rename), so an
interrupted run loses no finished document and a rerun with the same ``--out`` skips them.
"""
from __future__ import annotations

import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Iterator

import numpy as np

NEEDS_MODEL = False  # analysis/__main__.py: the workers load it, not the driver
CHARS_PER_TOKEN = 4.5  # WordPieces ≈ characters / 4.5 in English news (for packing units)
CHUNK_DOCS = 1000  # documents per Ray dataset: bounds the driver's memory; each chunk starts its actors anew


# ---------------------------------------------------------------- input

def read_input(path: str | Path, done: set[str], limit: int | None = None,
               seen: dict[str, int] | None = None) -> Iterator[dict]:
    """Documents of IN.jsonl not in ``done``, as {"id", "text", "reference"}; a line that is not
    a JSON object with a text comes out as {"id", "error"} and the run goes on. An id seen before
    becomes ``id#2``, ``id#3``, … (in line order, so a rerun names them the same): every
    document is counted, and opened, as itself. ``seen`` (if given) gets how many documents use
    each id as written."""
    seen = {} if seen is None else seen
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            if limit is not None and n > limit:
                return
            if not raw.strip():
                continue
            try:
                doc = json.loads(raw.decode("utf-8"))
                if not isinstance(doc, dict) or not isinstance(doc.get("text"), str):
                    raise ValueError('expected {"id": ..., "text": "..."}')
                doc_id = str(doc.get("id", f"line-{n}"))
                seen[doc_id] = seen.get(doc_id, 0) + 1
                doc_id = doc_id if seen[doc_id] == 1 else f"{doc_id}#{seen[doc_id]}"
            except UnicodeDecodeError:
                why = "not UTF-8 text"
            except json.JSONDecodeError as e:
                why = f"not valid JSON ({e.msg.lower()} at character {e.pos + 1})"
            except ValueError as e:
                why = str(e)[:200]
            except RecursionError:
                why = "nested too deeply to be a document"
            else:
                why = None
            if why is not None:
                doc_id = f"line-{n}"
                if doc_id not in done:
                    yield {"id": doc_id, "error": f"line {n}: {why}"}
                continue
            if doc_id not in done:
                ref = doc.get("reference")
                yield {"id": doc_id, "text": doc["text"], "reference": ref if isinstance(ref, (str, list)) else None}


def chunks(items: Iterator[list[dict]], docs: int) -> Iterator[list[list[dict]]]:
    """Consecutive units holding about ``docs`` documents together."""
    chunk, n = [], 0
    for unit in items:
        chunk.append(unit)
        n += len(unit)
        if n >= docs:
            yield chunk
            chunk, n = [], 0
    if chunk:
        yield chunk


def units(docs: Iterator[dict], tokens: int) -> Iterator[list[dict]]:
    """Pack documents into units of about ``tokens`` WordPieces (a long document is a unit alone)."""
    unit, size = [], 0
    for d in docs:
        n = len(d.get("text", "")) / CHARS_PER_TOKEN
        if unit and size + n > tokens:
            yield unit
            unit, size = [], 0
        unit.append(d)
        size += n
    if unit:
        yield unit


# ---------------------------------------------------------------- the worker (one per Ray actor)

def lead(summary, k: int) -> tuple[int, ...]:
    """The first k scored sentences: what a score that only falls with position would select."""
    return tuple(i for i, s in enumerate(summary.scores) if s is not None)[:k]


def summarize_one(summarizer, doc: dict, k: int, block: bool, stats: bool, importance: bool,
                  faithfulness: bool = False) -> tuple[dict, list[dict]]:
    """One document → (its summary JSON + id, its head rows). Attention is reduced to
    statistics here; no trace leaves this function."""
    from analysis.heads import bert_stats, importance_gradient, inter_stats

    if stats:
        trace = summarizer.trace(doc["text"], k, block)
        summary = trace.summary
        parts = {"bert": bert_stats(trace), "inter": inter_stats(trace)}
        del trace
    else:
        summary, parts = summarizer.summarize(doc["text"], k, block), {"bert": {}, "inter": {}}
    if importance:
        grads = dict(zip(("bert", "inter"), importance_gradient(summarizer, doc["text"], k, block)))
        for part, g in grads.items():
            parts[part] = {**parts[part], "importance_gradient": np.asarray(g, dtype=np.float32)}
    rows = head_rows(doc["id"], parts)
    out = {"id": doc["id"], **summary.to_json(), "lead": list(lead(summary, k))}
    if faithfulness and summary.selected:
        from analysis.faithfulness import faithfulness as scoreboard

        best = max(summary.selected, key=lambda i: summary.scores[i])
        board = scoreboard(summarizer, doc["text"], best)
        out["faithfulness"] = {"sentence": best, "score": board["score"], "scopes": {
            scope: {m: [v["aopc_comprehensiveness"], v["aopc_sufficiency"]] for m, v in entry.items()}
            for scope, entry in board["scopes"].items()}}
    if doc.get("reference") is not None:
        out["reference"] = doc["reference"]
    return out, rows


def head_rows(doc_id: str, parts: dict) -> list[dict]:
    """{part: {statistic: [L, H]}} → one row per head."""
    rows = []
    for part, named in parts.items():
        if not named:
            continue
        L, H = next(iter(named.values())).shape
        for layer in range(L):
            for head in range(H):
                rows.append({"id": doc_id, "part": part, "layer": layer, "head": head,
                             **{name: float(v[layer, head]) for name, v in named.items()}})
    return rows


BATCH_ATTENTION_BYTES = 12 * 2 ** 20  # the batched path: one layer's attention [B, H, T, T] within this on a CPU


def _padded(rows: list, width: int, value, device):
    import torch

    return torch.tensor([list(r) + [value] * (width - len(r)) for r in rows], device=device)


def summarize_batch(summarizer, docs: list[dict], k: int, block: bool, stats: bool) -> list[tuple[dict, list[dict]]]:
    """``summarize_one`` (without importance and the scoreboard) for many documents at once, the
    corpus's path on a GPU: every BERT window of every document, sorted by length and padded into
    batches (one layer's attention within ``batch_bytes``), then the sentence encoder over all
    documents padded to the longest. Head statistics are reduced on the device from the batch's
    attention (first window, as ``trace`` captures it). Same results as one document at a time
    (tests/test_corpus.py)."""
    import torch

    from analysis.device import batch_bytes
    from analysis.heads import attention_stats, inter_stats_of
    from model.hooks import names, record

    s, dev = summarizer, summarizer.device
    results: list = [None] * len(docs)
    encs = {}
    for i, doc in enumerate(docs):
        try:
            encs[i] = s.encode(doc["text"], s.max_windows)
        except ValueError as e:  # empty, too long, ...: recorded, the run goes on
            results[i] = ({"id": doc["id"], "error": str(e)}, [])
    H = s.size()[1]
    patterns = names(s.model, r"bert\.\d+\.attn\.pattern")
    windows = sorted(((i, w) for i, e in encs.items() for w in range(len(e.window_starts))),
                     key=lambda iw: -(lambda a, b: b - a)(*encs[iw[0]].window(iw[1])))
    budget = batch_bytes(dev, BATCH_ATTENTION_BYTES)
    vectors, bert_parts = {}, {}
    with torch.inference_mode(), s.autocast():
        n = 0
        while n < len(windows):
            T = (lambda a, b: b - a)(*encs[windows[n][0]].window(windows[n][1]))  # the longest: sorted
            chunk = windows[n:n + max(1, budget // (H * T * T * 4))]
            n += len(chunk)
            spans = [encs[i].window(w) for i, w in chunk]
            cls = [[c - a for c in encs[i].cls_positions if a <= c < b] for (i, _), (a, b) in zip(chunk, spans)]
            S = max(map(len, cls))
            inputs = dict(input_ids=_padded([encs[i].input_ids[a:b] for (i, _), (a, b) in zip(chunk, spans)], T, 0, dev),
                          segment_ids=_padded([encs[i].segment_ids[a:b] for (i, _), (a, b) in zip(chunk, spans)], T, 0, dev),
                          attention_mask=_padded([[1] * (b - a) for a, b in spans], T, 0, dev),
                          cls_positions=_padded(cls, S, 0, dev), cls_mask=_padded([[True] * len(c) for c in cls], S, False, dev))
            want = stats and any(w == 0 for _, w in chunk)
            with record(s.model, patterns if want else ()) as rec:
                vecs = s.model.sentence_vectors(**inputs)  # [B, S, D]
            for b_, ((i, w), c, (a, b)) in enumerate(zip(chunk, cls, spans)):
                vectors[i, w] = vecs[b_, :len(c)]
                if want and w == 0:
                    A = torch.stack([rec[n][0][b_, :, :b - a, :b - a] for n in patterns])
                    bert_parts[i] = attention_stats(A, encs[i].tokens[a:b], encs[i].token_sentence[a:b])
        order = list(encs)
        S = max((len(encs[i].cls_positions) for i in order), default=0)
        inter = names(s.model, r"inter\.\d+\.attn\.pattern")
        if order:
            D = next(iter(vectors.values())).shape[-1]
            sents = torch.zeros(len(order), S, D, device=dev, dtype=next(iter(vectors.values())).dtype)
            mask = torch.zeros(len(order), S, dtype=torch.bool, device=dev)
            for r, i in enumerate(order):
                v = torch.cat([vectors[i, w] for w in range(len(encs[i].window_starts))])  # [S_i, D]
                sents[r, :len(v)], mask[r, :len(v)] = v, True
            with record(s.model, inter if stats else ()) as rec:
                scores = s.score_vectors(sents, mask=mask).float().cpu().numpy()  # [B, S]: one copy back
            att = (torch.stack([rec[n][0] for n in inter], 1).float().cpu().numpy()
                   if stats else None)  # [B, L2, H2, S, S]
    for r, i in enumerate(order):
        enc = encs[i]
        S_i = len(enc.cls_positions)
        summary = s.summary(enc, scores[r, :S_i].tolist(), k, block)
        parts = {"bert": bert_parts.get(i, {}), "inter": {}}
        if stats:
            parts["inter"] = inter_stats_of(att[r, :, :, :S_i, :S_i], enc.input_sentences, summary.selected)
        out = {"id": docs[i]["id"], **summary.to_json(), "lead": list(lead(summary, k))}
        if docs[i].get("reference") is not None:
            out["reference"] = docs[i]["reference"]
        results[i] = (out, head_rows(docs[i]["id"], parts))
    return results


class Worker:
    """Ray Data's stateful callable: the model loads once per actor; each call gets one unit. On a
    GPU (``device`` "cuda") a unit goes through ``summarize_batch`` (but for ``--importance`` and
    ``--faithfulness``, per document); on a CPU one document at a time, one torch thread."""

    def __init__(self, backbone: str | None, checkpoint: str | None, k: int, block: bool, stats: bool,
                 importance: bool, faithfulness: bool = False, device: str = "cpu", precision: str = "float32"):
        import torch

        from model.summarizer import Summarizer

        if device == "cpu":
            torch.set_num_threads(1)  # one core per actor: actors, not threads, use the machine
        self.summarizer = Summarizer.load(backbone, checkpoint, device=device, precision=precision)
        self.args = (k, block, stats, importance, faithfulness)
        self.batched = device != "cpu" and not importance and not faithfulness

    def __call__(self, batch: dict) -> dict:
        summaries, heads = [], []
        for unit in batch["unit"]:
            docs = json.loads(unit)
            todo = [d for d in docs if "error" not in d]
            if self.batched:
                done = iter(summarize_batch(self.summarizer, todo, *self.args[:3]))
            for doc in docs:
                if "error" in doc:
                    summaries.append(json.dumps(doc))
                    continue
                if self.batched:
                    out, rows = next(done)
                else:
                    try:
                        out, rows = summarize_one(self.summarizer, doc, *self.args)
                    except ValueError as e:  # empty, too long, ...: recorded, the run goes on
                        out, rows = {"id": doc["id"], "error": str(e)}, []
                summaries.append(json.dumps(out, ensure_ascii=False))
                heads.extend(rows)
        import resource

        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # this actor's peak RSS so far
        return {"summaries": [json.dumps(summaries)], "heads": [json.dumps(heads)], "peak_mb": [peak_mb]}


# ---------------------------------------------------------------- output, written as results come

def write_atomic(path: Path, write) -> None:
    tmp = path.with_name(path.name + ".tmp")
    write(tmp)
    os.replace(tmp, path)


def heads_frame(rows: list[dict]):
    """Head rows → a DataFrame with compact dtypes."""
    import pandas as pd

    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df["id"] = df["id"].astype("category")
    df["part"] = df["part"].astype("category")
    df[["layer", "head"]] = df[["layer", "head"]].astype(np.int8)
    values = [c for c in df.columns if c not in ("id", "part", "layer", "head")]
    df[values] = df[values].astype(np.float16)
    return df


def write_shard(out: Path, n: int, summaries: list[str], heads: list[dict]) -> None:
    shards = out / "shards"
    if heads:
        write_atomic(shards / f"heads-{n:06d}.parquet", lambda p: heads_frame(heads).to_parquet(p, index=False))
    # the summaries shard last: it marks the unit done (a rerun reads the done ids from it)
    write_atomic(shards / f"summaries-{n:06d}.jsonl", lambda p: p.write_text("\n".join(summaries) + "\n"))


def done_ids(out: Path) -> set[str]:
    ids = set()
    for p in sorted((out / "shards").glob("summaries-*.jsonl")):
        ids |= {json.loads(line)["id"] for line in p.read_text(encoding="utf-8").splitlines() if line}
    return ids


def next_shard(out: Path) -> int:
    return 1 + max((int(p.stem.split("-")[1]) for p in (out / "shards").glob("summaries-*.jsonl")), default=-1)


# ---------------------------------------------------------------- the run

def run(input_path: str, out: str | Path, k: int = 3, block: bool = True, stats: bool = False,
        importance: str | None = None, address: str | None = None, limit: int | None = None,
        workers: int | None = None, unit_tokens: int = 2000, checkpoint: str | None = None,
        progress=None, backbone: str | None = None, faithfulness: bool = False, device: str | None = None,
        precision: str = "float32") -> dict:
    """Summarize (and measure heads over) a JSONL corpus with Ray Data; returns the report.
    ``progress(done, total, docs_per_s)`` is called as results arrive (the app's progress bar).
    ``device`` None: "cuda" when the cluster has GPUs (one actor per GPU, ``num_gpus=1`` each),
    else "cpu" (one actor per CPU)."""
    import ray

    out = Path(out)
    (out / "shards").mkdir(parents=True, exist_ok=True)
    done = done_ids(out)
    ids: dict[str, int] = {}
    total = sum(1 for _ in read_input(input_path, done, limit, ids))  # one cheap pass: the progress total, the ids
    t0, first, finished, peak_mb, record = time.perf_counter(), None, 0, 0.0, None
    address = address or os.environ.get("RAY_ADDRESS")
    if total:
        if not ray.is_initialized():
            # no address: "local", a new Ray on this machine; None would join whatever cluster a file in
            # /tmp/ray names, also one whose head has gone (then: "num_cpus must not be provided")
            ray.init(address=address or "local", include_dashboard=False, log_to_driver=False,
                     logging_level=logging.WARNING,
                     **({} if address else {"num_cpus": os.cpu_count(), "object_store_memory": 512 * 2 ** 20}))
        ray.data.DataContext.get_current().enable_progress_bars = False  # ours: tqdm / the app's bar
        logging.getLogger("ray.data").setLevel(logging.WARNING)
        gpus = int(ray.cluster_resources().get("GPU", 0))
        device = device or ("cuda" if gpus else "cpu")
        if device == "cuda" and not gpus:
            raise ValueError("--device cuda: the Ray cluster has no GPU")
        per_actor = {"num_gpus": 1, "num_cpus": 1} if device == "cuda" else {"num_cpus": 1}
        workers = workers or max(1, gpus if device == "cuda" else int(ray.cluster_resources().get("CPU", 1)))
        shard = next_shard(out)
        (out / "runs").mkdir(exist_ok=True)
        record = out / "runs" / f"run-{time.strftime('%Y%m%d-%H%M%S')}-{shard:05d}.json"
        # the input streams through in chunks of CHUNK_DOCS documents: the driver never holds more
        for chunk in chunks(units(read_input(input_path, done, limit), unit_tokens), CHUNK_DOCS):
            ds = ray.data.from_items([{"unit": json.dumps(u, ensure_ascii=False)} for u in chunk],
                                     override_num_blocks=len(chunk))
            ds = ds.map_batches(Worker, fn_constructor_args=(backbone, checkpoint, k, block, stats, importance == "gradient",
                                                                   faithfulness, device, precision),
                                batch_size=1, concurrency=workers, **per_actor)
            for row in ds.iter_rows():
                summaries, heads = json.loads(row["summaries"]), json.loads(row["heads"])
                peak_mb = max(peak_mb, float(row["peak_mb"]))
                write_shard(out, shard, summaries, heads)
                shard += 1
                finished += len(summaries)
                first = first or time.perf_counter() - t0
                timing(record, finished, t0, first, workers, address, peak_mb, device, precision)
                if progress:
                    progress(finished, total, finished / (time.perf_counter() - t0))
    report = merge(out, input_path, k, {i: n for i, n in ids.items() if n > 1})
    report["run"] = timing(record, finished, t0, first, workers, address, peak_mb, device, precision)
    # a resumed run keeps the earlier runs' timings (a killed one's too): every run that summarized something
    report["runs"] = done_runs = run_records(out)
    seconds = sum(r["seconds"] for r in done_runs)
    report["timing"] = {"runs": len(done_runs), "documents": sum(r["documents_this_run"] for r in done_runs),
                        "seconds": round(seconds, 1),
                        "documents_per_s": round(sum(r["documents_this_run"] for r in done_runs) / seconds, 3)
                        if seconds else None,
                        "time_to_first_result_s": done_runs[0]["time_to_first_result_s"] if done_runs else None}
    write_atomic(out / "report.json", lambda p: p.write_text(json.dumps(report, indent=1)))
    return report


def run_records(out: Path) -> list[dict]:
    """Every run's timing in ``out`` (``runs/*.json``, rewritten after each shard: a run that was
    killed keeps what it did), oldest first, those that summarized something."""
    records = []
    for p in sorted((out / "runs").glob("run-*.json")):
        try:
            r = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(r, dict) and isinstance(r.get("seconds"), (int, float)) and r.get("documents_this_run"):
            records.append(r)
    return records


def timing(path: Path | None, finished: int, t0: float, first: float | None, workers, address, peak_mb: float,
           device, precision) -> dict:
    """This run's timing so far; written (atomically) to ``path`` when given."""
    elapsed = time.perf_counter() - t0
    r = {"documents_this_run": finished, "seconds": round(elapsed, 1),
         "documents_per_s": round(finished / elapsed, 3) if finished else None,
         "time_to_first_result_s": round(first, 1) if first else None,
         "workers": workers, "address": address or "local", "peak_worker_rss_mb": round(peak_mb),
         "device": device, "precision": precision}
    if path is not None:
        write_atomic(path, lambda p: p.write_text(json.dumps(r)))
    return r


def merge(out: Path, input_path: str, k: int, duplicate_ids: dict[str, int]) -> dict:
    """Shards → summaries.jsonl, heads.parquet and the report's aggregates (``duplicate_ids``: the
    ids more than one document uses, which read_input renamed id#2, id#3, …)."""
    import pandas as pd

    lines = [line for p in sorted((out / "shards").glob("summaries-*.jsonl"))
             for line in p.read_text(encoding="utf-8").splitlines() if line]
    docs = [json.loads(line) for line in lines]
    # in input order, whichever order the shards were written in (a resumed run, a lost worker):
    # the file and the bootstrap intervals below are then the same as one uninterrupted run's
    position = {d["id"]: n for n, d in enumerate(read_input(input_path, set()))}
    order = sorted(range(len(docs)), key=lambda i: position.get(docs[i]["id"], len(position)))
    lines, docs = [lines[i] for i in order], [docs[i] for i in order]
    write_atomic(out / "summaries.jsonl", lambda p: p.write_text("\n".join(lines) + "\n"))
    ok = [d for d in docs if "error" not in d]
    report = {"input": str(Path(input_path).resolve()), "k": k, "documents": len(docs), "summarized": len(ok),
              "failures": [{"id": d["id"], "reason": d["error"]} for d in docs if "error" in d],
              "duplicate_ids": duplicate_ids}
    positions = [i for d in ok for i in d["selected"]]
    report["selected_position_histogram"] = np.bincount(positions, minlength=10).tolist() if positions else []
    report["lead_share"] = round(float(np.mean([d["selected"] == d["lead"] for d in ok])), 4) if ok else None
    # the aggregates last, each on its own: one that fails (a library missing, a bad value) is said in
    # the report, and the summaries above and the other aggregates are kept
    report["not_computed"] = {}

    def aggregate(name: str, compute):
        try:
            report[name] = compute()
        except Exception as e:  # noqa: BLE001  said in the report, not lost in a traceback
            report[name] = None
            report["not_computed"][name] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"

    aggregate("rouge", lambda: rouge_vs_lead(ok, k))
    aggregate("faithfulness", lambda: faithfulness_report(ok))
    parts = sorted((out / "shards").glob("heads-*.parquet"))
    if parts:
        def heads_report():
            heads = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
            heads["id"], heads["part"] = heads["id"].astype("category"), heads["part"].astype("category")
            write_atomic(out / "heads.parquet", lambda p: heads.to_parquet(p, index=False))
            return head_aggregates(heads)
        aggregate("heads", heads_report)
    return report


def head_aggregates(heads) -> dict:
    """Per part and statistic: the mean and the standard deviation over documents, layers × heads."""
    out = {}
    values = [c for c in heads.columns if c not in ("id", "part", "layer", "head")]
    for part, df in heads.groupby("part", observed=True):
        L, H = int(df["layer"].max()) + 1, int(df["head"].max()) + 1
        g = df.groupby(["layer", "head"])[values]
        mean, std = g.mean(), g.std(ddof=0)
        out[str(part)] = {"documents": int(df["id"].nunique()), "stats": {
            name: {"mean": mean[name].astype(float).to_numpy().reshape(L, H).round(5).tolist(),
                   "std": std[name].astype(float).to_numpy().reshape(L, H).round(5).tolist()}
            for name in values if df[name].notna().any()}}
    return out


def rouge_vs_lead(docs: list[dict], k: int) -> dict | None:
    """ROUGE of the summaries, of Lead-k (the first k sentences) and of the greedy oracle (the k
    sentences training labelled, training/oracle.py) against the references: the means, the
    per-document difference model − Lead-k with a bootstrap 95% interval, and ``per_document``
    (each document's three ROUGE triples, its oracle's sentences, and model − Lead-k as the mean of
    the three ROUGE F1s: the Corpus page sorts by it)."""
    from training.metrics import KEYS, bootstrap_ci, rouge_per_doc
    from training.oracle import greedy_selection

    docs = [d for d in docs if d.get("reference")]
    if not docs:
        return None
    refs = [[r] if isinstance(r, str) else list(r) for r in (d["reference"] for d in docs)]
    oracles = [greedy_selection(list(d["sentences"]), r, k) for d, r in zip(docs, refs)]
    model = rouge_per_doc([[d["sentences"][i] for i in d["selected"]] for d in docs], refs)  # [N, 3]
    lead_k = rouge_per_doc([d["sentences"][:k] for d in docs], refs)
    oracle = rouge_per_doc([[d["sentences"][i] for i in o] for d, o in zip(docs, oracles)], refs)
    out = {"documents": len(docs)}
    for j, key in enumerate(KEYS):
        mean, low, high = bootstrap_ci(model[:, j] - lead_k[:, j])
        out[key] = {"model": round(float(model[:, j].mean()), 2), f"lead{k}": round(float(lead_k[:, j].mean()), 2),
                    "oracle": round(float(oracle[:, j].mean()), 2),
                    "difference": round(mean, 2), "ci95": [round(low, 2), round(high, 2)]}
    triple = lambda row: dict(zip(KEYS, (round(float(x), 2) for x in row)))  # noqa: E731
    out["per_document"] = [{"id": d["id"], "model": triple(m), f"lead{k}": triple(ld), "oracle": triple(o),
                            "oracle_sentences": list(sel), "model_minus_lead": round(float((m - ld).mean()), 2)}
                           for d, m, ld, o, sel in zip(docs, model, lead_k, oracle, oracles)]
    return out


def faithfulness_report(docs: list[dict]) -> dict | None:
    """The scoreboards over documents: per scope and method the mean AOPC comprehensiveness,
    sufficiency and their difference (comprehensiveness − sufficiency, higher = more faithful)
    with bootstrap 95% intervals, the paired difference of that gap to random's and to raw
    attention's, and the most faithful method with its paired margin over the runner-up."""
    from training.metrics import bootstrap_ci

    docs = [d for d in docs if d.get("faithfulness")]
    if not docs:
        return None
    ci = lambda x: [round(v, 4) for v in bootstrap_ci(x)]  # noqa: E731  mean, low, high
    out = {"documents": len(docs), "metric": "AOPC over deleted fractions 0.1-0.5 (analysis/mixing.py)"}
    for scope in ("all", "other"):
        rows = [d["faithfulness"]["scopes"][scope] for d in docs if scope in d["faithfulness"]["scopes"]]
        methods = [m for m in rows[0] if all(m in r for r in rows)] if rows else []
        if not methods:
            continue
        gap = {m: np.array([r[m][0] - r[m][1] for r in rows]) for m in methods}
        entry = {m: {"comprehensiveness": ci([r[m][0] for r in rows]), "sufficiency": ci([r[m][1] for r in rows]),
                     "gap": ci(gap[m]), "gap_minus_random": ci(gap[m] - gap["random"]),
                     **({"gap_minus_attention": ci(gap[m] - gap["attention"])} if "attention" in gap else {})}
                 for m in methods}
        ranked = sorted((m for m in methods if m != "random"), key=lambda m: -gap[m].mean())
        entry["best"] = {"method": ranked[0], "runner_up": ranked[1] if len(ranked) > 1 else None,
                         "margin": ci(gap[ranked[0]] - gap[ranked[1]]) if len(ranked) > 1 else None}
        out[scope] = entry
    return out


# ---------------------------------------------------------------- command line (python -m analysis corpus)

def add_arguments(p) -> None:
    p.add_argument("--out", required=True, help="results directory (a rerun with the same one resumes)")
    p.add_argument("--stats", action="store_true", help="head statistics per document (Clark et al. 2019)")
    p.add_argument("--importance", choices=["gradient"], help="head importance per document (Michel et al. 2019 §4)")
    p.add_argument("--faithfulness", action="store_true",
                   help="the faithfulness scoreboard (analysis/mixing.py) of each document's top selected sentence")
    p.add_argument("--address", help="join this Ray cluster (default: RAY_ADDRESS, else a local Ray)")
    p.add_argument("--limit", type=int, help="only the first N lines of the input")
    p.add_argument("--workers", type=int, help="model actors (default: one per GPU of the cluster, else one per CPU)")
    p.add_argument("--unit-tokens", type=int, default=2000, help="WordPieces per unit of work (default 2000)")


def cli(args, summarizer=None) -> dict:
    from tqdm import tqdm

    bar = tqdm(desc="corpus", unit="doc", file=sys.stderr)

    def progress(done, total, rate):
        bar.total = total
        bar.update(done - bar.n)
        bar.set_postfix(docs_per_s=f"{rate:.2f}")

    backbone, checkpoint = args.backbone, args.checkpoint
    if args.model:  # NAME=DIR[,CKPT], as the app names models
        from model.load import parse_model_spec

        spec = parse_model_spec(args.model)
        if spec.problem():
            raise ValueError(spec.problem())
        backbone, checkpoint = str(spec.backbone), spec.checkpoint and str(spec.checkpoint)
    report = run(args.file, args.out, args.k, args.block, args.stats, args.importance, args.address, args.limit,
                 args.workers, args.unit_tokens, checkpoint, progress, backbone, args.faithfulness, args.device,
                 args.precision)
    bar.close()
    printed = {k: v for k, v in report.items() if k != "heads"}  # the per-head tables: DIR/report.json
    if printed.get("rouge"):
        printed["rouge"] = {k: v for k, v in printed["rouge"].items() if k != "per_document"}  # (there too)
    return printed
