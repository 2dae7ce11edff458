"""Corpus mode on Ray against a plain loop, side by side on the same documents.

    python -m benchmarks.corpus [--n 200] [--data ../shared/data] [--full 2000] [--json OUT]

1. plain: ``Summarizer.summarize`` over the documents in one process, a Python loop, with one
   torch thread (what one Ray worker gets: the baseline of the ratios) and with torch's default
   threads (both cores: the best one process does here);
2. Ray, 1 worker and 2 workers (one torch thread each): ``analysis.corpus.run`` into a fresh
   directory (time from the call, Ray start-up and model loading included; also the rate after
   the first result, and the time to it);
then documents/s of each, the ratios to plain, each run's peak worker RSS. ``--full N`` then
runs N documents with ``--stats`` on 2 workers and reports that run (its report.json).
Documents: CNN/DM validation articles in their fixed order (training.data.split_order), the
held-out part (cnndm_val[2000:]), with their highlights as references.
"""
from __future__ import annotations

import argparse
import gzip
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import write_json
from training.data import DEFAULT_DATA, VALID_END, split_order


def write_corpus(data: Path, n: int, path: Path) -> list[str]:
    with gzip.open(data / "cnndm_val.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    order = split_order(len(rows))[VALID_END:VALID_END + n]
    with open(path, "w", encoding="utf-8") as f:
        for j in order:
            f.write(json.dumps({"id": f"cnndm_val-{j}", "text": rows[j]["article"], "reference": rows[j]["highlights"]}) + "\n")
    return [rows[j]["article"] for j in order]


def plain(texts: list[str], threads: int | None = None) -> dict:
    import torch

    from model.summarizer import Summarizer

    default = torch.get_num_threads()
    torch.set_num_threads(threads or default)
    t0 = time.perf_counter()
    s = Summarizer.load(device="cpu")
    t1 = time.perf_counter()
    for t in texts:
        s.summarize(t)
    t2 = time.perf_counter()
    used = torch.get_num_threads()
    torch.set_num_threads(default)
    return {"docs_per_s": round(len(texts) / (t2 - t1), 3), "seconds_with_load": round(t2 - t0, 1),
            "torch_threads": used, "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def on_ray(path: Path, workers: int, stats: bool = False) -> dict:
    import ray

    from analysis.corpus import run

    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        report = run(str(path), out, stats=stats, workers=workers)
        seconds = time.perf_counter() - t0
    ray.shutdown()  # the next run starts its own local Ray, as the command line does
    r = report["run"]
    after_first = r["seconds"] - r["time_to_first_result_s"]  # 0 when every result came in one batch
    steady = (r["documents_this_run"] - 1) / after_first if after_first > 0 else float("nan")
    return {"workers": workers, "docs_per_s": r["documents_per_s"], "steady_docs_per_s": round(steady, 3),
            "seconds_incl_ray_start": round(seconds, 1),
            "time_to_first_result_s": r["time_to_first_result_s"], "peak_worker_rss_mb": r["peak_worker_rss_mb"],
            "report": {k: v for k, v in report.items() if k not in ("heads", "failures", "input")}}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=200, help="documents for the side-by-side runs")
    p.add_argument("--full", type=int, default=0, help="then one run of this many documents with --stats")
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench_corpus_"))
    texts = write_corpus(Path(args.data), args.n, tmp / "in.jsonl")
    result = {"documents": len(texts), "plain": plain(texts, 1), "plain_all_threads": plain(texts)}
    for w in (1, 2):
        result[f"ray_{w}"] = on_ray(tmp / "in.jsonl", w)
        result[f"ray_{w}_vs_plain"] = round(result[f"ray_{w}"]["docs_per_s"] / result["plain"]["docs_per_s"], 2)
    result["ray_2_vs_plain_all_threads"] = round(result["ray_2"]["docs_per_s"] / result["plain_all_threads"]["docs_per_s"], 2)
    print(f"{args.n} CNN/DM documents: plain loop {result['plain']['docs_per_s']} docs/s with 1 torch thread, "
          f"{result['plain_all_threads']['docs_per_s']} with {result['plain_all_threads']['torch_threads']}; "
          f"Ray 1 worker {result['ray_1']['docs_per_s']} ({result['ray_1_vs_plain']}x), "
          f"2 workers {result['ray_2']['docs_per_s']} ({result['ray_2_vs_plain']}x; "
          f"{result['ray_2_vs_plain_all_threads']}x the all-threads loop; {result['ray_2']['steady_docs_per_s']} after the "
          f"first result); first result after {result['ray_2']['time_to_first_result_s']} s; peak worker RSS "
          f"{result['ray_2']['peak_worker_rss_mb']} MB", file=sys.stderr)
    if args.full:
        write_corpus(Path(args.data), args.full, tmp / "full.jsonl")
        result["full"] = on_ray(tmp / "full.jsonl", 2, stats=True)
        print(f"{args.full} documents with --stats, 2 workers: {json.dumps(result['full'])}", file=sys.stderr)
    write_json("corpus", result, args.json)
    return result


if __name__ == "__main__":
    main()
