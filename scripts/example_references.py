"""The shipped examples' reference summaries (examples/references/STEM.txt), from BBC News Summary.

    python scripts/example_references.py [--data ../shared/data]

Each example (examples/README.md names its dataset id) gets its reference summary, one sentence a
line: the article's sentences that occur verbatim in the dataset's ``summary`` (which concatenates
them, often with no space between: training/oracle.py ``verbatim_labels``), in the article's order.
The Summary page reads them beside an example (issue 60)."""
from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
EXAMPLES = {"bbc_call_centres": "business/020", "bbc_edwards_idowu": "sport/020", "bbc_insurance_bosses": "business/060"}


def main(argv=None) -> None:
    from model.text import split_sentences
    from training.oracle import verbatim_labels

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    args = p.parse_args(argv)
    wanted = {v: k for k, v in EXAMPLES.items()}
    with gzip.open(args.data / "bbc_news_summary.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d["id"] not in wanted:
                continue
            stem = wanted.pop(d["id"])
            article = (ROOT / "examples" / f"{stem}.txt").read_text(encoding="utf-8")
            sentences = [article[a:b] for a, b in split_sentences(article)]
            kept = [s for s, y in zip(sentences, verbatim_labels(sentences, d["summary"])) if y]
            (ROOT / "examples" / "references").mkdir(exist_ok=True)
            (ROOT / "examples" / "references" / f"{stem}.txt").write_text("\n".join(kept) + "\n", encoding="utf-8")
            print(f"{stem}: {len(kept)} of {len(sentences)} sentences")
    if wanted:
        raise SystemExit(f"not in the data: {', '.join(wanted)}")


if __name__ == "__main__":
    main()
