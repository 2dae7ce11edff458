"""Head statistics and head importance (analysis/heads.py): time and memory beside a plain summarize.

    python -m benchmarks.heads [--runs 7] [--ablation-runs 3] [--batches 0 1 2 6 12] [--json OUT]

On a ~470-token document (benchmarks.model.document(summarizer, 512)), in one process, each
measurement alternating with a plain ``summarize`` of the same text: the ratio of the medians
(wall time), of the fastest runs (the least disturbed on a shared machine: a 60 ms summarize
is slowed far more by another process's burst than a 3 s ablation) and of the median CPU
times. Measured: head statistics from a captured Trace (``bert_stats`` + ``inter_stats``), the
gradient importance (one forward + backward), the exact ablation of all 72 + 16 heads at each
batch size (ablations per forward; 0 = ``auto_batch``, what the app and the CLI use).

Peak memory: each call once in a fresh child process (the model loaded and warmed on a short
text; for the statistics, the Trace captured): the resident high-water mark is reset
(/proc/self/clear_refs), and VmHWM after the call - VmRSS before it is the peak the call added.
The plain summarize is measured the same way, for scale. Each twice: as the app runs, and with
glibc's mmap threshold fixed (``live_peak_mb``: freed tensors return to the OS, so the mark
is the live peak, without the allocator's retention).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from benchmarks.common import write_json

ROOT = Path(__file__).resolve().parents[1]
WARM = "The council met on Monday to talk about the budget. It agreed to meet again next week."


def setup():
    from benchmarks.model import document
    from model.summarizer import Summarizer

    s = Summarizer.load(device="cpu")
    return s, document(s, 512)


def operation(s, text: str, what: str, batch: int = 0):
    """The measured call: "plain", "stats" (from a Trace captured here, once), "gradient", "ablation"."""
    from analysis import heads as AH

    if what == "stats":
        trace = s.trace(text)
        return lambda: (AH.bert_stats(trace), AH.inter_stats(trace))
    return {"plain": lambda: s.summarize(text),
            "gradient": lambda: AH.importance_gradient(s, text),
            "ablation": lambda: AH.importance_ablation(s, text, batch=batch or None)}[what]


def status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak() -> bool:
    """Linux: reset this process's resident high-water mark (VmHWM) to its current size."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def child(what: str, batch: int) -> None:
    """In a fresh process: the model loaded and warmed on a short text, then the resident peak
    one call adds: VmHWM after it - VmRSS before it (the mark reset just before; where it cannot
    be reset, ru_maxrss after - before, which misses a peak below the warm-up's). MB, as JSON."""
    s, text = setup()
    s.summarize(WARM)
    op = operation(s, text, what, batch)
    if reset_peak():
        before = status_mb("VmRSS")
        op()
        after, how = status_mb("VmHWM"), "VmHWM - VmRSS"
    else:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        op()
        after, how = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "ru_maxrss delta"
    print(json.dumps({"peak_added_mb": round(after - before, 1), "rss_before_mb": round(before, 1), "how": how}))


def peak_in_child(what: str, batch: int = 0) -> dict:
    """``peak_added_mb`` as the app runs; ``live_peak_mb`` with glibc's mmap threshold fixed at
    128 KiB, so every freed tensor goes back to the OS and the mark is the live peak (by default
    glibc raises the threshold after the first large free and keeps later freed tensors in its
    heap: the resident peak then includes that retention)."""
    def run(env):
        out = subprocess.run([sys.executable, "-m", "benchmarks.heads", "--child", what, "--batch", str(batch)],
                             cwd=ROOT, capture_output=True, text=True, check=True, env={**os.environ, **env})
        return json.loads(out.stdout.strip().splitlines()[-1])

    live = run({"MALLOC_MMAP_THRESHOLD_": "131072"})
    return {**run({}), "live_peak_mb": live["peak_added_mb"]}


def alternate(plain, op, runs: int) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """Run ``plain`` and ``op`` by turns (both see the same machine state): (wall s, CPU s) of each."""
    plain(), op()  # warm-up
    a, b = [], []
    for _ in range(runs):
        for f, out in ((plain, a), (op, b)):
            t, c = time.perf_counter(), time.process_time()
            f()
            out.append((time.perf_counter() - t, time.process_time() - c))
    return a, b


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=7, help="alternating runs for the statistics and the gradient")
    p.add_argument("--ablation-runs", type=int, default=3)
    p.add_argument("--batches", type=int, nargs="+", default=[0, 1, 2, 6, 12],
                   help="ablations per forward to try (0: analysis.heads.auto_batch, the default)")
    p.add_argument("--json", default=str(ROOT / "benchmarks/results/heads.json"))
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--batch", type=int, default=0, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.child, args.batch)
        return {}

    from analysis import heads as AH

    s, text = setup()
    enc = s.encode(text, None)
    ops = {what: operation(s, text, what) for what in ("plain", "stats", "gradient")}
    rows = {}

    def note(name, runs, op):
        plain, t = alternate(ops["plain"], op, runs)
        med = lambda xs, i: statistics.median(x[i] for x in xs)  # noqa: E731
        low = lambda xs: min(x[0] for x in xs)  # noqa: E731
        rows[name] = {"ms": round(med(t, 0) * 1000, 1), "plain_ms": round(med(plain, 0) * 1000, 1),
                      "ratio": round(med(t, 0) / med(plain, 0), 3), "ratio_of_min": round(low(t) / low(plain), 3),
                      "cpu_ratio": round(med(t, 1) / med(plain, 1), 3), "runs": runs}

    note("stats", args.runs, ops["stats"])
    note("gradient", args.runs, ops["gradient"])
    name = lambda b: f"ablation_batch{b or f'_auto_{AH.auto_batch(s, enc)}'}"  # noqa: E731
    for b in args.batches:
        note(name(b), args.ablation_runs, operation(s, text, "ablation", b))

    memory = {"stats": peak_in_child("stats"),
              "plain": peak_in_child("plain"), "gradient": peak_in_child("gradient"),
              **{name(b): peak_in_child("ablation", b) for b in args.batches}}
    for name, m in memory.items():
        rows.setdefault(name, {})["memory"] = m
    plain_ms = statistics.median(r["plain_ms"] for r in rows.values() if "plain_ms" in r)
    result = {"tokens": len(enc.tokens), "sentences": len(enc.input_sentences), "heads": 6 * 12 + 2 * 8,
              "torch_threads": torch.get_num_threads(), "plain_ms": plain_ms,
              "targets": {"stats": "<= 0.1x plain", "gradient": "<= 3x plain", "ablation": "<= 15x plain"},
              "rows": rows}
    print(f"{result['tokens']} tokens, {result['sentences']} sentences, {result['torch_threads']} torch threads; "
          f"each row alternates with a plain summarize (median ms)")
    print(f"{'measurement':18} {'ms':>8} {'plain ms':>8} {'× plain':>7} {'× (min)':>7} {'× (CPU)':>7}  peak memory")
    for name, r in rows.items():
        mem = r["memory"]
        mem_s = f"+{mem['peak_added_mb']} MB resident, live +{mem['live_peak_mb']} MB ({mem['how']})"
        print(f"{name:18} {r.get('ms', ''):>8} {r.get('plain_ms', ''):>8} {r.get('ratio', ''):>7} "
              f"{r.get('ratio_of_min', ''):>7} {r.get('cpu_ratio', ''):>7}  {mem_s}")
    write_json(Path(args.json).stem, result, args.json)
    return result


if __name__ == "__main__":
    main()
