"""ROUGE evaluation of the extractive summarizer and its baselines, same documents, same run.

    python -m model.evaluate --data ../shared/data --out /tmp/eval.md
    python -m model.evaluate --cnndm-n 200 --no-bbc --systems lead oracle    # quick look

ROUGE is Google's ``rouge-score`` (Lin 2004): rouge1, rouge2, rougeLsum F1 x 100, Porter
stemming, summary sentences separated by newlines (what ROUGE-Lsum splits on).

Test sets (see model/data.py): CNN/DM = cnndm_val[2000:] (held out), top-3 with trigram
blocking (Liu & Lapata 2019, §5.3); BBC = the ``test`` split, k = the reference's sentence
count, without trigram blocking (its references are long, verbatim-extractive).
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import torch
from rouge_score import rouge_scorer
from tqdm import tqdm

from .data import DEFAULT_DATA, Doc, named_split

KEYS = ("rouge1", "rouge2", "rougeLsum")


def rouge(preds: list[list[str]], refs: list[list[str]]) -> dict[str, float]:
    """Mean F1 x 100 of each ROUGE variant; each summary is a list of sentences."""
    scorer = rouge_scorer.RougeScorer(list(KEYS), use_stemmer=True)
    totals = dict.fromkeys(KEYS, 0.0)
    for p, r in zip(preds, refs):
        s = scorer.score("\n".join(r), "\n".join(p))
        for k in KEYS:
            totals[k] += s[k].fmeasure
    return {k: 100 * v / max(len(preds), 1) for k, v in totals.items()}


# ---------------------------------------------------------------- baselines (sentence indices)

def lead(doc: Doc, k: int) -> list[int]:
    return list(range(min(k, len(doc.sentences))))


def oracle(doc: Doc, k: int) -> list[int]:
    """The training labels (greedy ROUGE oracle for CNN/DM, the true extract for BBC)."""
    return [i for i, y in enumerate(doc.labels) if y]


def longest(doc: Doc, k: int) -> list[int]:
    order = sorted(range(len(doc.sentences)), key=lambda i: (-len(doc.sentences[i].split()), i))
    return sorted(order[:k])


class _Words:
    """sumy word tokenizer over our own sentences (sumy's default needs nltk.download)."""

    @staticmethod
    def to_words(text: str) -> list[str]:
        return [w for w in text.split() if any(c.isalnum() for c in w)]


def textrank(doc: Doc, k: int) -> list[int]:
    """TextRank (Mihalcea & Tarau 2004) from ``sumy``, on our sentence split."""
    from sumy.models.dom import ObjectDocumentModel, Paragraph, Sentence
    from sumy.nlp.stemmers import Stemmer
    from sumy.summarizers.text_rank import TextRankSummarizer
    from sumy.utils import get_stop_words

    sents = [Sentence(s, _Words) for s in doc.sentences]
    model = ObjectDocumentModel([Paragraph(sents)])
    tr = TextRankSummarizer(Stemmer("english"))
    tr.stop_words = get_stop_words("english")
    ratings = tr.rate_sentences(model)
    order = sorted(range(len(sents)), key=lambda i: (-ratings[model.sentences[i]], i))
    return sorted(order[:k])


BASELINES = {"lead": lead, "oracle": oracle, "longest": longest, "textrank": textrank}


# ---------------------------------------------------------------- evaluation

def model_system(summarizer, block_trigram: bool):
    def select(doc: Doc, k: int) -> list[int]:
        s = summarizer.summarize(doc.text, k=k, block_trigram=block_trigram)
        assert len(s.sentences) == len(doc.sentences), "summarizer split differs from data split"
        return list(s.selected)
    return select


def evaluate(docs: list[Doc], systems: dict, k_of) -> list[tuple[str, dict, float]]:
    """[(name, rouge scores, docs per second)] for every system on the same documents."""
    refs = [d.reference for d in docs]
    rows = []
    for name, select in systems.items():
        t0 = time.perf_counter()
        preds = [[d.sentences[i].strip() for i in select(d, k_of(d))]
                 for d in tqdm(docs, desc=name, file=sys.stderr, leave=False)]
        rate = len(docs) / (time.perf_counter() - t0)
        rows.append((name, rouge(preds, refs), rate))
        print(f"{name}: " + " ".join(f"{k} {v:.2f}" for k, v in rows[-1][1].items())
              + f" ({rate:.1f} docs/s)", file=sys.stderr)
    return rows


def table(title: str, rows) -> str:
    out = [f"**{title}**", "", "| system | ROUGE-1 | ROUGE-2 | ROUGE-Lsum | docs/s |",
           "|---|---:|---:|---:|---:|"]
    for name, s, rate in rows:
        out.append(f"| {name} | {s['rouge1']:.2f} | {s['rouge2']:.2f} | {s['rougeLsum']:.2f} "
                   f"| {rate:.1f} |")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--checkpoint", default=None, help="weights file (default: the shipped one)")
    ap.add_argument("--systems", nargs="+", default=["model", "lead", "oracle", "textrank"],
                    help="model lead oracle textrank longest")
    ap.add_argument("--cnndm-n", type=int, default=None, help="first n test docs (default all)")
    ap.add_argument("--no-cnndm", action="store_true")
    ap.add_argument("--no-bbc", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=None, help="write the markdown table here")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)

    def systems(names, block_trigram, k_label):
        out = {}
        for n in names:
            if n == "model":
                from .summarizer import Summarizer
                out[f"BertSumExt-MiniLM ({k_label}{', trigram blocking' if block_trigram else ''})"] = \
                    model_system(Summarizer.load(checkpoint=args.checkpoint, device="cpu"), block_trigram)
            else:
                label = {"lead": f"Lead-{k_label}", "oracle": "Oracle", "longest": f"Longest-{k_label}",
                         "textrank": f"TextRank (sumy, {k_label})"}[n]
                out[label] = BASELINES[n]
        return out

    md = [f"Command: `python -m model.evaluate {' '.join(argv if argv is not None else sys.argv[1:])}`", ""]
    if not args.no_cnndm:
        docs = named_split("cnndm-test", args.data, args.cnndm_n)
        rows = evaluate(docs, systems(args.systems, True, "3"), lambda d: 3)
        md.append(table(f"CNN/DM held-out test (cnndm_val[2000:], {len(docs)} documents), top-3", rows))
    if not args.no_bbc:
        docs = named_split("bbc-test", args.data)
        names = [n for n in args.systems] + (["longest"] if "longest" not in args.systems else [])
        sys_ = systems(names, False, "k")
        if "model" in args.systems:  # also the app's default setting, for reference
            sys_.update({k: v for k, v in systems(["model"], True, "k").items()})
        rows = evaluate(docs, sys_, lambda d: len(d.reference))
        md.append(table(f"BBC News Summary test split ({len(docs)} documents), k = reference sentences",
                        rows))
    text = "\n".join(md)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
