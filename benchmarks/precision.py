"""bfloat16 against float32: how often the summary is the same, and the largest score difference.

    python -m benchmarks.precision [--n 200] [--device cuda] [--data ../shared/data]

The first ``--n`` CNN/DM validation articles (model selection's part, never the held-out test)
in pasted form (``training.data.raw_text``), summarized by the shipped model in float32 and
under bfloat16 autocast (``Summarizer(precision="bfloat16")``) on one device. Prints and writes
benchmarks/results/precision_DEVICE.json: the share of identical selections, of identical
top-1 sentences, the largest and the median absolute score difference, the device's name.
"""
from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import numpy as np
import torch

from model.summarizer import Summarizer
from training.data import DEFAULT_DATA, named_split, raw_text

RESULTS = Path(__file__).resolve().parent / "results"


def device_name(device: str) -> str:
    if device.startswith("cuda"):
        return torch.cuda.get_device_name(device)
    cpuinfo = Path("/proc/cpuinfo")
    names = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
             if line.startswith("model name")] if cpuinfo.exists() else []
    return f"{names[0] if names else platform.processor() or 'CPU'}, {torch.get_num_threads()} threads"


def measure(n: int, device: str, data: str | Path) -> dict:
    docs = named_split("cnndm-valid", data, n)
    a = Summarizer.load(device=device)
    b = Summarizer.load(device=device, precision="bfloat16")
    same, top1, diffs = 0, 0, []
    for d in docs:
        text = raw_text(d.text)
        sa, sb = a.summarize(text), b.summarize(text)
        x = np.array(sa.scores, dtype=float)
        y = np.array(sb.scores, dtype=float)
        diffs.append(np.nanmax(np.abs(x - y)))
        same += sa.selected == sb.selected
        top1 += int(np.nanargmax(x)) == int(np.nanargmax(y))
    return {"documents": len(docs), "device": device, "device_name": device_name(device),
            "identical_selection_share": same / len(docs), "identical_top1_share": top1 / len(docs),
            "max_abs_score_difference": float(np.max(diffs)), "median_abs_score_difference": float(np.median(diffs))}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=200)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--json", help="output file (default benchmarks/results/precision_DEVICE.json)")
    args = p.parse_args(argv)
    out = measure(args.n, args.device, args.data)
    path = Path(args.json) if args.json else RESULTS / f"precision_{args.device.split(':')[0]}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
