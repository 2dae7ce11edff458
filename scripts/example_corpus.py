"""Build the example corpus run the Corpus page opens for a newcomer (examples/corpus/).

    python scripts/example_corpus.py [--data ../shared/data]

50 BBC News Summary articles (CC0; Sharif 2018, from Greene & Cunningham 2006): the first 10 of
each category in the ``val`` split, with their reference summaries, summarized with the shipped
weights by ``python -m analysis corpus --stats`` on a local Ray. The run's files are kept as the
page reads them: input.jsonl, summaries.jsonl, heads.parquet, report.json (its input path made
relative)."""
from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "examples" / "corpus"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    args = p.parse_args(argv)
    picked: dict[str, list[dict]] = {}
    with gzip.open(args.data / "bbc_news_summary.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d["split"] == "val" and len(picked.setdefault(d["category"], [])) < 10:
                picked[d["category"]].append({"id": f"bbc/{d['id']}", "text": f"{d['title']}\n\n{d['article']}",
                                              "reference": d["summary"]})
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    rows = [r for c in sorted(picked) for r in picked[c]]
    (OUT / "input.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    subprocess.run([sys.executable, "-m", "analysis", "corpus", str(OUT / "input.jsonl"), "--out", str(OUT),
                    "--stats", "--workers", "1"], cwd=ROOT, check=True)
    shutil.rmtree(OUT / "shards", ignore_errors=True)
    report = json.loads((OUT / "report.json").read_text())
    report["input"] = "input.jsonl"
    (OUT / "report.json").write_text(json.dumps(report, indent=1))
    (OUT / "README.md").write_text(
        "# Example corpus run\n\n50 articles of BBC News Summary (CC0 public domain; Pariza Sharif 2018, articles from "
        "Greene & Cunningham 2006), the first 10 of each category in its `val` split, with their reference summaries, "
        "summarized by the shipped weights. The Corpus page opens it for a newcomer. Rebuilt by "
        "`python scripts/example_corpus.py` (reads `../shared/data`).\n")
    print(f"{len(rows)} documents → {OUT}")


if __name__ == "__main__":
    main()
