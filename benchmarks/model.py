"""Model speed and weight: plain summarize vs summarize + full capture, side by side.

    python -m benchmarks.model [--runs 15] [--sizes 128 256 512] [--no-base] [--json OUT]

For each document length: median latency of ``summarize`` (no capture) and of ``trace``
(summarize + every capture), run alternately in one process; their ratio; the trace's size;
the share of the physical floor (forward FLOPs / measured matmul throughput). Then the same
with the paper's model at BERT-base size (a PreSumm checkpoint with random weights, loaded as the
app loads it: benchmarks.common.bert_base_fixture). Prints a table and writes JSON.
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import time
from pathlib import Path

import torch

from benchmarks.common import bert_base_fixture
from model.bert import BertConfig
from model.summarizer import Summarizer

ROOT = Path(__file__).resolve().parents[1]


def document(summarizer: Summarizer, n_tokens: int) -> str:
    """Whole sentences of the shipped examples, up to about n_tokens WordPieces."""
    text = " ".join(p.read_text() for p in sorted((ROOT / "examples").glob("*.txt"))) or \
        (ROOT / "tests/data/sample.txt").read_text()
    enc = summarizer.encode(text, None)
    last_token = {}  # sentence → index of its [SEP]
    for pos, i in enumerate(enc.token_sentence):
        last_token[i] = pos
    return " ".join(enc.sentences[i] for i, end in last_token.items() if end < n_tokens)


def forward_flops(cfg: BertConfig, T: int) -> float:
    """Multiply-adds × 2 of BERT's matmuls: Q/K/V/O projections, QKᵀ and ·V, the FFN."""
    D, F = cfg.hidden_size, cfg.intermediate_size
    per_layer = 2 * (4 * T * D * D + 2 * T * T * D + 2 * T * D * F)
    return cfg.num_hidden_layers * per_layer


def matmul_flops_per_s(n: int = 1024, reps: int = 10) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * n ** 3 * reps / (time.perf_counter() - t)


def median_ms(times: list[float]) -> float:
    return statistics.median(times) * 1000


def measure(summarizer: Summarizer, text: str, runs: int, peak: float) -> dict:
    plain, captured = [], []
    summarizer.summarize(text), summarizer.trace(text)  # warm-up
    for _ in range(runs):  # alternate so both see the same machine state
        t = time.perf_counter()
        summarizer.summarize(text)
        plain.append(time.perf_counter() - t)
        t = time.perf_counter()
        trace = summarizer.trace(text)
        captured.append(time.perf_counter() - t)
    T = len(trace.tokens)
    floor_ms = forward_flops(summarizer.model.bert.config, T) / peak * 1000
    return {"tokens": T, "sentences": len(trace.input_sentences),
            "plain_ms": round(median_ms(plain), 1), "capture_ms": round(median_ms(captured), 1),
            "capture_ratio": round(statistics.median(captured) / statistics.median(plain), 3),
            "trace_mb": round(trace.nbytes() / 2 ** 20, 2),
            "floor_ms": round(floor_ms, 1), "percent_of_floor": round(100 * floor_ms / median_ms(plain), 1)}




def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--sizes", type=int, nargs="+", default=[128, 256, 512])
    p.add_argument("--no-base", action="store_true", help="skip the BERT-base model")
    p.add_argument("--json", default=str(ROOT / "benchmarks/results/model.json"))
    args = p.parse_args(argv)

    peak = matmul_flops_per_s()
    small = Summarizer.load(device="cpu")
    models = [("MiniLM-L6 (shipped)", small)] + (
        [] if args.no_base else [("BERT-base (PreSumm)", Summarizer.load(*bert_base_fixture(), device="cpu"))])
    rows = []
    for name, s in models:
        for n in args.sizes:
            rows.append({"model": name, "target_tokens": n, **measure(s, document(small, n), args.runs, peak)})
    result = {"matmul_gflops": round(peak / 1e9, 1), "torch_threads": torch.get_num_threads(), "runs": args.runs,
              "rows": rows, "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    print(f"matmul throughput {result['matmul_gflops']} GFLOP/s, {result['torch_threads']} threads, "
          f"median of {args.runs} alternating runs")
    print(f"{'model':22} {'tokens':>6} {'plain ms':>9} {'capture ms':>10} {'ratio':>6} {'trace MB':>8} {'% floor':>7}")
    for r in rows:
        print(f"{r['model']:22} {r['tokens']:>6} {r['plain_ms']:>9} {r['capture_ms']:>10} {r['capture_ratio']:>6} "
              f"{r['trace_mb']:>8} {r['percent_of_floor']:>7}")
    print(f"peak RSS {result['peak_rss_mb']} MB")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
