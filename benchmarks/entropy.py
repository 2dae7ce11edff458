"""How small can the one-head view's data be? The exact weights of one layer's 13 maps.

    python -m benchmarks.entropy [--tokens 512]

For each layer of a ~512-token document: the 12 heads and their mean as the token map sends an
exact map (uint16, the weight in 1/10,000), and in MB: the order-0 entropy of those values (the
mean over maps, × cells), lzma of the raw uint16 bytes, and deflate (level 6) of them as Plotly's
JSON carries them (base64) and as a JSON list of integers. Any of these above 1.5 MB means the
exact weights of every head cannot all come with the page (viz.attention.token_heatmap).
"""
from __future__ import annotations

import argparse
import base64
import json
import lzma
import zlib

import numpy as np

from benchmarks.common import write_json


def entropy_bits(x: np.ndarray) -> float:
    _, counts = np.unique(x, return_counts=True)
    p = counts / counts.sum()
    return float(-(p * np.log2(p)).sum())


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokens", type=int, default=512)
    p.add_argument("--json", default=None, help="default benchmarks/results/entropy.json")
    args = p.parse_args(argv)

    from benchmarks.model import document
    from model.summarizer import Summarizer

    s = Summarizer.load(device="cpu")
    a = s.trace(document(s, args.tokens)).bert_attention.astype(np.float32)   # [L, H, T, T]
    rows = []
    for layer in range(len(a)):
        maps = np.concatenate([a[layer].mean(0, keepdims=True), a[layer]])   # the mean, then the heads
        q = np.minimum(np.rint(maps * 1e4), 9999).astype(np.uint16)
        mb = lambda n: round(n / 1e6, 2)  # noqa: E731
        rows.append({"layer": layer + 1, "cells": int(q.size),
                     "entropy_mb": mb(np.mean([entropy_bits(m) for m in q]) * q.size / 8),
                     "lzma_mb": mb(len(lzma.compress(q.tobytes()))),
                     "deflate_base64_mb": mb(len(zlib.compress(base64.b64encode(q.tobytes()), 6))),
                     "deflate_int_list_mb": mb(len(zlib.compress(json.dumps(q.ravel().tolist()).encode(), 6)))})
    T = a.shape[-1]
    print(f"{T}-token window, 13 exact maps per layer (12 heads + mean), MB")
    print(f"{'layer':>5} {'entropy':>8} {'lzma':>6} {'deflate b64':>11} {'deflate ints':>12}")
    for r in rows:
        print(f"{r['layer']:>5} {r['entropy_mb']:>8} {r['lzma_mb']:>6} {r['deflate_base64_mb']:>11} "
              f"{r['deflate_int_list_mb']:>12}")
    result = {"tokens": int(T), "rows": rows}
    write_json("entropy", result, args.json)
    return result


if __name__ == "__main__":
    main()
