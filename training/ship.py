"""Ship a trained checkpoint: the same tensors stored as float16 (half the bytes, so four
fine-tuned layers + the scorer fit the 30 MB budget), the metadata kept. The model computes
in float32 after loading (``model.load.merge_checkpoint`` upcasts). Checks what rounding the
weights changed on validation documents (never the test part): the largest sentence-score
difference and how many summaries changed.

    python -m training.ship /tmp/ft/runM.safetensors model/weights/bertsumext-minilm.safetensors
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from safetensors.torch import save_file

from model import load
from model.summarizer import Summarizer

from .data import DEFAULT_DATA, named_split


def half_checkpoint(src: str | Path, dst: str | Path, extra: dict[str, str] | None = None) -> None:
    """Write ``src`` with its float tensors as float16 and ``extra`` added to its metadata; refuses
    a weight float16 cannot hold."""
    sd, meta = load.read_state_dict(src)
    out = {}
    for k, v in sd.items():
        if v.is_floating_point():
            v = v.to(torch.float16)
            if not torch.isfinite(v).all():
                raise ValueError(f"{src}: {k} overflows float16")
        out[k] = v.contiguous()
    Path(dst).parent.mkdir(parents=True, exist_ok=True)
    save_file(out, str(dst), metadata={**meta, "stored_dtype": "float16", **(extra or {})})


def compare(a: Summarizer, b: Summarizer, texts: list[str], k: int = 3) -> dict:
    """Largest |score difference| over every sentence of ``texts`` and the summaries that differ."""
    diff, changed = 0.0, 0
    for text in texts:
        x, y = a.summarize(text, k=k), b.summarize(text, k=k)
        diff = max([diff, *(abs(u - v) for u, v in zip(x.scores, y.scores) if u is not None)])
        changed += x.selected != y.selected
    return {"documents": len(texts), "max_score_difference": diff, "summaries_changed": changed}


def main(argv=None):
    ap = argparse.ArgumentParser(description="store a checkpoint as float16 and check what it changed")
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--check-n", type=int, default=200, help="CNN/DM validation documents summarized by both")
    ap.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE",
                    help="add to the metadata, e.g. position_rows=27 (python -m studies.positions)")
    args = ap.parse_args(argv)
    half_checkpoint(args.src, args.dst, dict(kv.split("=", 1) for kv in args.meta))
    texts = [d.text for d in named_split("cnndm-valid", args.data, args.check_n)] if args.check_n else []
    report = compare(Summarizer.load(checkpoint=args.src, device="cpu"),
                     Summarizer.load(checkpoint=args.dst, device="cpu"), texts)
    report["bytes"] = {"float32": Path(args.src).stat().st_size, "float16": Path(args.dst).stat().st_size}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
