"""Command line: ``python -m model summarize|trace …`` (run with ``--help``)."""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np


def read_text(path: str) -> str:
    from .text import decode

    if path == "-":
        return decode(sys.stdin.buffer.read(), "Standard input")
    with open(path, "rb") as f:
        return decode(f.read(), path)


def parse_heads(spec: str) -> tuple[tuple[str, int, int], ...]:
    """``bert:5.3,inter:1.2`` (1-based, as the app shows them) → (("bert", 4, 2), ("inter", 0, 1))."""
    from .heads import Head

    try:
        return tuple(Head.parse(item) for item in filter(None, (x.strip() for x in spec.split(","))))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def jsonl_text(doc) -> str:
    """The text of one line of ``--jsonl`` input, or ValueError in words."""
    if not isinstance(doc, dict):
        raise ValueError('not a JSON object ({"id": …, "text": …})')
    if not isinstance(doc.get("text"), str):
        raise ValueError('no "text" field with the document as a string')
    return doc["text"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m model", description="BertSumExt with attention capture.")
    sub = p.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--k", type=int, default=3, help="sentences in the summary (default 3)")
    common.add_argument("--no-trigram-block", dest="block", action="store_false",
                        help="do not skip candidates sharing a trigram with a chosen sentence")
    common.add_argument("--backbone", help="Hugging Face BERT directory (default: embedded all-MiniLM-L6-v2)")
    common.add_argument("--checkpoint", help="BertSumExt weights: .safetensors or PreSumm/BertSum .pt")
    common.add_argument("--device", choices=["cpu", "cuda"], help="default: cuda when available")
    common.add_argument("--precision", choices=["float32", "bfloat16"], default="float32",
                        help="bfloat16: the model under bfloat16 autocast, for a GPU (default float32)")
    common.add_argument("--mask-heads", type=parse_heads, default=(), metavar="bert:L.H,inter:L.H",
                        help="switch these attention heads off (1-based layer.head; the JSON lists them 0-based)")
    s = sub.add_parser("summarize", parents=[common], help="extract a summary")
    s.add_argument("file", nargs="?", default="-", help="text file, or - for stdin (default)")
    s.add_argument("--jsonl", metavar="IN", help='one {"id": …, "text": …} per line; one result per line out')
    s.add_argument("--json", action="store_true", help="print JSON instead of the summary text")
    t = sub.add_parser("trace", parents=[common], help="capture attention, masks, positions to .npz")
    t.add_argument("file", help="text file, or - for stdin")
    t.add_argument("--out", required=True, help="output .npz")
    args = p.parse_args(argv)

    from .summarizer import Summarizer

    if args.k < 1:
        p.error("--k must be at least 1")
    try:
        run(args, Summarizer.load(args.backbone, args.checkpoint, args.device, precision=args.precision))
    except (OSError, ValueError) as e:  # bad file, bad checkpoint, empty or undecodable text
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def run(args, summarizer) -> None:
    if args.command == "trace":
        trace = summarizer.trace(read_text(args.file), args.k, args.block, mask_heads=args.mask_heads)
        np.savez_compressed(args.out, **trace.arrays())
        print(f"wrote {args.out}: {len(trace.tokens)} tokens, {len(trace.input_sentences)} sentences",
              file=sys.stderr)
    elif args.jsonl:
        from tqdm import tqdm

        with open(args.jsonl, encoding="utf-8") as f:
            lines = [line for line in f if line.strip()]
        for n, line in enumerate(tqdm(lines, desc="summarize", unit="doc", file=sys.stderr), 1):
            try:
                doc = json.loads(line)
            except ValueError:  # one bad line must not lose the rest
                doc = None
            result = {"id": doc.get("id", n) if isinstance(doc, dict) else n, "line": n}
            try:
                result |= summarizer.summarize(jsonl_text(doc), args.k, args.block, args.mask_heads).to_json()
            except ValueError as e:
                result["error"] = f"line {n}: {e}"
            print(json.dumps(result, ensure_ascii=False), flush=True)
    else:
        summary = summarizer.summarize(read_text(args.file), args.k, args.block, args.mask_heads)
        if not args.json and summary.reading is not None and summary.reading.note:  # (the JSON carries it)
            print(f"note: {summary.reading.note}", file=sys.stderr)
        print(json.dumps(summary.to_json(), ensure_ascii=False) if args.json else summary.summary)


if __name__ == "__main__":
    sys.exit(main())
