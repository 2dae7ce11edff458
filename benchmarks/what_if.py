"""What-if speed: a comparison (A and its edited copy B) and activation patching, × a summarize,
measured side by side in one process.

    python -m benchmarks.what_if [--runs 5] [--json OUT]

For each shipped example (one and two BERT windows): the lead sentence (first scored one) moved to
the end; median seconds of ``summarize(A)``, ``compare(A, B)``, ``patch`` of that sentence
without BERT heads (position row, sentence vector, every BERT and encoder layer and encoder head)
and with every BERT head too; each as a ratio to the summarize. Targets (issue 27): compare ≤ 2.5×,
patching without the BERT heads ≤ 10×, all BERT heads ≤ 40×.
"""
from __future__ import annotations

import argparse
import statistics
import time

from benchmarks.common import ROOT, write_json

DOCS = ("bbc_insurance_bosses", "bbc_call_centres")


def median_s(f, runs: int) -> float:
    f()  # warm-up
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)

    import torch

    from analysis.compare import compare
    from analysis.edits import apply_edits
    from analysis.patching import patch
    from model.summarizer import Summarizer

    s = Summarizer.load(device="cpu")
    rows = {}
    for name in DOCS:
        a = (ROOT / "examples" / f"{name}.txt").read_text(encoding="utf-8")
        lead = next(i for i, x in enumerate(s.summarize(a).scores) if x is not None)
        b = apply_edits(a, [f"move:{lead + 1}:end"], s)
        with torch.inference_mode():
            t = {"summarize": median_s(lambda: s.summarize(a), args.runs),
                 "compare": median_s(lambda: compare(s, a, b), args.runs),
                 "patch_no_bert_heads": median_s(lambda: patch(s, a, b, lead, bert_heads=False), args.runs),
                 "patch_all_bert_heads": median_s(lambda: patch(s, a, b, lead), args.runs)}
        rows[name] = {"windows": len(s.encode(a, None).window_starts), **{f"{k}_s": round(v, 4) for k, v in t.items()},
                      **{f"{k}_ratio": round(v / t["summarize"], 2) for k, v in t.items() if k != "summarize"}}
    print(f"median of {args.runs} runs, {torch.get_num_threads()} threads; × = time / summarize")
    print(f"{'document':22} {'windows':>7} {'summarize s':>11} {'compare ×':>9} {'patch ×':>8} {'+ BERT heads ×':>14}")
    for name, r in rows.items():
        print(f"{name:22} {r['windows']:>7} {r['summarize_s']:>11} {r['compare_ratio']:>9} "
              f"{r['patch_no_bert_heads_ratio']:>8} {r['patch_all_bert_heads_ratio']:>14}")
    worst = lambda k: max(r[k] for r in rows.values())  # noqa: E731
    result = {"runs": args.runs, "rows": rows, "compare_ratio": worst("compare_ratio"),
              "patch_ratio": worst("patch_no_bert_heads_ratio"), "patch_bert_heads_ratio": worst("patch_all_bert_heads_ratio")}
    write_json("what_if", result, args.json)
    return result


if __name__ == "__main__":
    main()
