"""What explaining costs next to summarizing: plain ``summarize`` vs ``analysis.explain``.

    python -m benchmarks.explain [--runs 7] [--tokens 512] [--json OUT]

On a document of whole example sentences up to ~``--tokens`` WordPieces (one BERT window),
alternating in one process, median of ``--runs``: plain ``summarize``; ``explain`` of the
selected sentences (statuses, position ablations, word attributions: one forward with the
graph kept + one backward per sentence, in bfloat16 where the CPU has it, and a float32
forward for the scores) from the text as the CLI does, and given the document's Trace as the
Why page does (its float32 sentence vectors: no second forward), and all in float32;
``explain`` of every scored sentence; attention rollout + sentence draw over the captured
Trace. Targets: selected ≤ 3× plain, rollout ≤ 0.2× plain. Prints a table and writes JSON.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import torch

from analysis.explain import explain, rollout, sentence_draw
from benchmarks.common import write_json
from benchmarks.model import document
from model.summarizer import Summarizer

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--tokens", type=int, default=512)
    p.add_argument("--k", type=int, default=3)
    p.add_argument("--json", default=str(ROOT / "benchmarks/results/explain.json"))
    args = p.parse_args(argv)

    s = Summarizer.load(device="cpu")
    text = document(s, args.tokens)
    trace = s.trace(text, k=args.k)
    n_scored = sum(x is not None for x in trace.summary.scores)
    jobs = {
        "plain": lambda: s.summarize(text, k=args.k),
        "explain_selected": lambda: explain(s, text, k=args.k),
        "explain_selected_traced": lambda: explain(s, text, k=args.k, trace=trace),
        "explain_all": lambda: explain(s, text, k=args.k, sentences="all"),
        "explain_selected_float32": lambda: explain(s, text, k=args.k, precision="float32"),
        "rollout": lambda: sentence_draw(trace, rollout(trace)),
    }
    times: dict[str, list[float]] = {name: [] for name in jobs}
    for f in jobs.values():  # warm-up
        f()
    for _ in range(args.runs):  # alternate so every job sees the same machine state
        for name, f in jobs.items():
            t = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t)
    med = {name: statistics.median(ts) * 1000 for name, ts in times.items()}
    result = {
        "tokens": len(trace.tokens), "sentences": len(trace.summary.sentences), "scored": n_scored,
        "k": args.k, "runs": args.runs, "torch_threads": torch.get_num_threads(),
        "ms": {name: round(v, 1) for name, v in med.items()},
        "ratio": {name: round(v / med["plain"], 3) for name, v in med.items() if name != "plain"},
        "targets": {"explain_selected": 3.0, "explain_selected_traced": 3.0, "rollout": 0.2},
        "precision": explain(s, text, k=args.k)["precision"],
    }
    print(f"{result['tokens']} tokens, {n_scored} scored sentences, k={args.k}, median of {args.runs} "
          f"alternating runs, {result['torch_threads']} threads")
    print(f"gradients in {result['precision']} (explain_selected_float32: the same in float32)")
    print(f"{'job':24} {'ms':>8} {'× plain':>8} {'target':>7}")
    for name, v in med.items():
        ratio = "1" if name == "plain" else f"{result['ratio'][name]:.2f}"
        print(f"{name:24} {v:8.1f} {ratio:>8} {result['targets'].get(name, ''):>7}")
    write_json(Path(args.json).stem, result, args.json)
    return result


if __name__ == "__main__":
    main()
