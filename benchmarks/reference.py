"""What a reference summary costs the server (issue 68): ``analysis.quality.quality`` (ROUGE beside
Lead-k and the oracle, the overlap and where each reference sentence comes from) over an example's
sentences, with references of growing length up to MAX_REFERENCE_CHARS (past it the app refuses one in a
sentence), in CPU seconds (the median of ``--runs``): the measurement behind the limit.

    python -m benchmarks.reference [--runs 3]
"""
from __future__ import annotations

import argparse
import statistics
import time

from analysis.quality import MAX_REFERENCE_CHARS, quality
from benchmarks.common import ROOT, write_json
from model.text import split_sentences


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args(argv)
    text = (ROOT / "examples" / "bbc_call_centres.txt").read_text(encoding="utf-8")
    sentences = [text[a:b] for a, b in split_sentences(text)]
    rows = {}
    for n in (1_000, 5_000, MAX_REFERENCE_CHARS):
        reference = (text * (n // len(text) + 1))[:n]
        runs = []
        for _ in range(args.runs):
            t = time.process_time()
            quality(sentences, [0, 1, 2], reference, 3)
            runs.append(time.process_time() - t)
        rows[n] = round(statistics.median(runs), 3)
        print(f"reference of {n:>6,} characters: {rows[n]:.3f} CPU-s", flush=True)
    result = {"limit_chars": MAX_REFERENCE_CHARS, "cpu_s_by_chars": rows, "sentences": len(sentences)}
    write_json("reference", result)
    return result


if __name__ == "__main__":
    main()
