"""Two or more checkpoints side by side on CNN/DM validation documents that no model selection
read (``split_order[1000:2000]`` by default: training validated on the first 1,000), top 3 with
trigram blocking, whole document and first 512 tokens: ROUGE, the paired per-document
difference to Lead-3 and to the first checkpoint, each with a 95% bootstrap interval.

    python studies/compare_checkpoints.py OLD.safetensors NEW.safetensors [--workers 2]

This is how stage 3 was checked against the weights it replaced (model/weights/README.md)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from training.data import DEFAULT_DATA, named_split  # noqa: E402
from training.evaluate import evaluate, from_scores, lead, model_scores, raw_form  # noqa: E402
from training.metrics import KEYS, bootstrap_ci  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoints", nargs="+")
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--docs", type=int, nargs=2, default=(1000, 2000), metavar=("FROM", "TO"),
                    help="validation documents [FROM, TO) of split_order (at most 2,000: the rest is the test)")
    ap.add_argument("--raw", action="store_true", help="the detokenized form (training.data.raw_text)")
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args(argv)
    docs = named_split("cnndm-valid", args.data, args.docs[1])[args.docs[0]:]
    docs = raw_form(docs) if args.raw else docs
    per_doc = lambda name, pick: evaluate(docs, {name: pick}, lambda d: 3)[0]["per_doc"]  # noqa: E731  [N, 3]
    ci = lambda x: "{:+.2f} [{:+.2f}, {:+.2f}]".format(*bootstrap_ci(x))  # noqa: E731
    lead3 = per_doc("Lead-3", lead)
    print(f"{len(docs)} documents; Lead-3 " + "/".join(f"{v:.2f}" for v in lead3.mean(0)))
    print("| checkpoint | input | R1/R2/RLsum | Δ R1 vs Lead-3 | Δ R1 vs first | Δ R2 vs first | Δ RLsum vs first |")
    print("|---|---|---|---|---|---|---|")
    first = {}
    for path in args.checkpoints:
        whole, first512, _ = model_scores(path, docs, args.workers)
        for name, scores in (("whole document", whole), ("first 512 tokens", first512)):
            r = per_doc(name, from_scores(scores, docs, True))
            base = first.setdefault(name, r)
            print(f"| {Path(path).name} | {name} | " + "/".join(f"{v:.2f}" for v in r.mean(0))
                  + f" | {ci(r[:, 0] - lead3[:, 0])} | "
                  + " | ".join(ci(r[:, j] - base[:, j]) for j in range(len(KEYS))) + " |", flush=True)


if __name__ == "__main__":
    main()
