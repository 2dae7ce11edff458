"""How much of an attention map each colour mapping leaves near black, on real articles.

    python studies/contrast.py [--data ../shared/data] [--n 3]

For the shipped call-centre example and the first n CNN/DM validation articles (300-500
tokens): over all 72 BERT heads, the share of cells whose colour level is in the darkest tenth
(< 26 of 255) and the share that saturate (255), for each mapping of viz.common.quantize.
With a look at the maps side by side, this is how the default (√, clipped at the 99.5th
percentile) was chosen: see viz/common.py."""
from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from model.summarizer import Summarizer  # noqa: E402
from viz.common import CLIP, quantize  # noqa: E402

MAPPINGS = {"linear, max": ("linear", 100.0), "linear, clipped": ("linear", CLIP), "sqrt, max": ("sqrt", 100.0),
            "sqrt, clipped": ("sqrt", CLIP), "log, clipped": ("log", CLIP)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--n", type=int, default=3)
    args = ap.parse_args(argv)
    texts = [(ROOT / "examples" / "bbc_call_centres.txt").read_text(encoding="utf-8")]
    path = Path(args.data) / "cnndm_val.jsonl.gz"
    if path.is_file():
        with gzip.open(path, "rt", encoding="utf-8") as f:
            texts += [json.loads(line)["article"] for _, line in zip(range(args.n), f)]
    s = Summarizer.load(device="cpu")
    print(f"{'tokens':>6}  " + "  ".join(f"{m:>16}" for m in MAPPINGS) + "   (dark share / saturated share)")
    for text in texts:
        a = s.trace(text).bert_attention.astype(np.float32)  # [L, H, T, T]
        row = []
        for scale, clip in MAPPINGS.values():
            levels = np.stack([quantize(m, scale=scale, clip=clip)[0] for m in a.reshape(-1, *a.shape[2:])])
            row.append(f"{(levels < 26).mean():.2f} / {(levels == 255).mean():.3f}")
        print(f"{a.shape[-1]:>6}  " + "  ".join(f"{r:>16}" for r in row))


if __name__ == "__main__":
    main()
