"""Command line for what is computed about the model: ``python -m analysis explain|heads …``
(run with ``--help``). Each command lives in its own module (``analysis/<command>.py``, or
``MODULES``), which
provides ``add_arguments(parser)`` and ``cli(args, summarizer) -> dict`` (printed as JSON)."""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import types

COMMANDS = {"explain": "why these sentences: statuses, position vs content, word attributions",
            "heads": "head statistics and head importance for the summary",
            "corpus": "summaries and head statistics over a JSONL corpus, on Ray",
            "compare": "what if: A against an edited B (--edit), the summaries, head changes, activation patching",
            "mixing": "what the model used: norm-based contributions, ALTI, value zeroing, the faithfulness scoreboard",
            "attribution": "the word-attribution methods compared: deletion and insertion curves, AOPC over documents",
            "lens": "every sentence's score read after every layer (logit lens, tuned lens)",
            "route": "the route from words to one sentence's score (ALTI contributions, pruned)"}

MODULES = {"lens": "layers", "mixing": "faithfulness"}  # a command whose module is named otherwise


def load_model(args):
    """The Summarizer the arguments name: ``--model NAME=DIR[,CKPT]``, or ``--backbone``/``--checkpoint``."""
    from model.load import parse_model_spec
    from model.summarizer import Summarizer

    if args.model:
        spec = parse_model_spec(args.model)
        if spec.problem():
            raise ValueError(spec.problem())
        return Summarizer.load(spec.backbone, spec.checkpoint, device=args.device, precision=args.precision)
    return Summarizer.load(args.backbone, args.checkpoint, device=args.device, precision=args.precision)


def main(argv: list[str] | None = None) -> int:
    from model.__main__ import parse_heads, read_text  # noqa: F401  (read_text: used by the commands)

    p = argparse.ArgumentParser(prog="python -m analysis", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    modules = {}
    for name, help_text in COMMANDS.items():
        modules[name] = importlib.import_module(f"analysis.{MODULES.get(name, name)}")
        c = sub.add_parser(name, help=help_text)
        c.add_argument("file", help="IN.jsonl" if name == "corpus" else "text file (or JSONL of documents), or - "
                       "for stdin" if name == "attribution" else "text file, or - for stdin")
        c.add_argument("--json", action="store_true", help="print one JSON object (the default output)")
        c.add_argument("--k", type=int, default=3, help="sentences in the summary (default 3)")
        c.add_argument("--no-trigram-block", dest="block", action="store_false")
        c.add_argument("--checkpoint", help="BertSumExt weights (default: the shipped ones)")
        c.add_argument("--backbone", help="Hugging Face BERT directory (default: the embedded all-MiniLM-L6-v2)")
        c.add_argument("--model", metavar="NAME=BACKBONE_DIR[,CHECKPOINT]",
                       help="a backbone and checkpoint as the app's --model names them (instead of the two above)")
        c.add_argument("--device", choices=["cpu", "cuda"])
        c.add_argument("--precision", choices=["float32", "bfloat16"], default="float32",
                       help="of the summaries (bfloat16 autocast, for a GPU); the analyses compute in float32")
        modules[name].add_arguments(c)
    args = p.parse_args(argv)
    module = modules[args.command]
    if args.command == "explain" and args.versus is not None:  # why I and not J: its own module answers
        module = importlib.import_module("analysis.contrast")
    elif args.command == "explain" and args.method != "grad-input":  # words by another method
        module = types.SimpleNamespace(cli=modules["attribution"].explain_cli)
    try:
        model = load_model(args) if getattr(module, "NEEDS_MODEL", True) else None
        result = module.cli(args, model)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for name, why in (result.get("not_computed") or {}).items() if isinstance(result, dict) else ():
        print(f"note: the report's {name} was not computed ({why}); the summaries are kept", file=sys.stderr)
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
