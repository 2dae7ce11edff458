"""ROUGE evaluation of the extractive summarizer and its baselines, same documents, same run.

    python -m training.evaluate --data ../shared/data --out /tmp/eval.md
    python -m training.evaluate --cnndm-n 200 --no-bbc --systems lead oracle    # quick look

ROUGE: ``training.metrics.rouge``.

Test sets (see training/data.py): CNN/DM = cnndm_val[2000:] (held out), top-3 with trigram
blocking (Liu & Lapata 2019, §5.3); BBC = the ``test`` split, k = the reference's sentence
count, without trigram blocking (its references are long, verbatim-extractive).
"""
from __future__ import annotations

import argparse
import sys
import time

import torch
from tqdm import tqdm

from model.summarizer import select, sentence_scores

from .data import DEFAULT_DATA, Doc, named_split
from .metrics import rouge


# ---------------------------------------------------------------- baselines (sentence indices)

def lead(doc: Doc, k: int) -> list[int]:
    return list(range(min(k, len(doc.sentences))))


def oracle(doc: Doc, k: int) -> list[int]:
    """The training labels (greedy ROUGE oracle for CNN/DM, the true extract for BBC)."""
    return [i for i, y in enumerate(doc.labels) if y]


def longest(doc: Doc, k: int) -> list[int]:
    order = sorted(range(len(doc.sentences)), key=lambda i: (-len(doc.sentences[i].split()), i))
    return sorted(order[:k])


def lead_fed(doc: Doc, k: int) -> list[int]:
    """A position-only scorer through the app's pipeline: the first k sentences of >= 5 words
    (the ones fed to the model) with trigram blocking. What a model that learned only the
    lead bias selects."""
    sents = tuple(s.strip() for s in doc.sentences)
    fed = [i for i, s in enumerate(sents) if len(s.split()) >= 5] or list(range(len(sents)))
    scores = [None] * len(sents)
    for rank, i in enumerate(fed):
        scores[i] = -float(rank)
    return list(select(scores, sents, k, True))


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


BASELINES = {"lead": lead, "oracle": oracle, "longest": longest, "textrank": textrank, "leadfed": lead_fed}


# ---------------------------------------------------------------- evaluation

def doc_scores(summarizer, text: str) -> tuple[list, list]:
    """One forward pass → per-sentence scores (None = not scored) twice: over the whole
    document, window by window (the app's default), and over the first 512-token window only
    (BertSum's input, what training saw; window 0 is computed identically in both)."""
    enc = summarizer.encode(text, None)
    with torch.inference_mode():
        sents = summarizer.sentence_vectors(enc)[0]  # [1, S, D]
        n0 = sum(c < enc.window(0)[1] for c in enc.cls_positions)
        whole, first = (summarizer.score_vectors(v)[0].tolist() for v in (sents, sents[:, :n0]))  # [S], [S0]
    n = len(enc.sentences)
    return (list(sentence_scores(enc.input_sentences, n, whole)),
            list(sentence_scores(enc.input_sentences[:n0], n, first)))


_worker = {}


def _init_worker(checkpoint):
    from model.summarizer import Summarizer

    torch.set_num_threads(1)
    _worker["s"] = Summarizer.load(checkpoint=checkpoint, device="cpu")


def _score_chunk(texts: list[str]) -> list[tuple[list, list]]:
    return [doc_scores(_worker["s"], t) for t in texts]


def model_scores(checkpoint, docs: list[Doc], workers: int = 1) -> tuple[list, list, float]:
    """(whole-document scores, first-window scores, docs per second) of every document;
    ``workers`` processes of one torch thread each."""
    import multiprocessing as mp

    t0 = time.perf_counter()
    chunks = [[d.text for d in docs[i:i + 20]] for i in range(0, len(docs), 20)]
    if workers > 1:
        with mp.get_context("fork").Pool(workers, _init_worker, (checkpoint,)) as pool:
            results = [r for chunk in tqdm(pool.imap(_score_chunk, chunks), total=len(chunks), desc="model",
                                           file=sys.stderr, leave=False) for r in chunk]
    else:
        _init_worker(checkpoint)
        results = [r for chunk in tqdm(chunks, desc="model", file=sys.stderr, leave=False)
                   for r in _score_chunk(chunk)]
    for d, (whole, _) in zip(docs, results):
        assert len(whole) == len(d.sentences), "summarizer split differs from data split"
    rate = len(docs) / (time.perf_counter() - t0)
    return [r[0] for r in results], [r[1] for r in results], rate


def from_scores(scores: list, docs: list[Doc], block_trigram: bool):
    """A system selecting top-k of precomputed per-sentence scores (the app's ``select``)."""
    index = {id(d): s for d, s in zip(docs, scores)}

    def pick(doc: Doc, k: int) -> list[int]:
        return list(select(index[id(doc)], tuple(x.strip() for x in doc.sentences), k, block_trigram))
    return pick


def evaluate(docs: list[Doc], systems: dict, k_of) -> list[tuple[str, dict, float]]:
    """[(name, rouge scores, docs per second)] for every system on the same documents."""
    refs = [d.reference for d in docs]
    rows = []
    for name, select in systems.items():
        t0 = time.perf_counter()
        preds = [[d.sentences[i].strip() for i in select(d, k_of(d))]
                 for d in tqdm(docs, desc=name, file=sys.stderr, leave=False)]
        rate = len(docs) / (time.perf_counter() - t0)
        rows.append((name, rouge(preds, refs), rate))  # rate: selection only (model: see log)
        print(f"{name}: " + " ".join(f"{k} {v:.2f}" for k, v in rows[-1][1].items())
              + f" ({rate:.1f} docs/s)", file=sys.stderr)
    return rows


def table(title: str, rows) -> str:
    out = [f"**{title}**", "", "| system | ROUGE-1 | ROUGE-2 | ROUGE-Lsum |", "|---|---:|---:|---:|"]
    for name, s, _ in rows:
        out.append(f"| {name} | {s['rouge1']:.2f} | {s['rouge2']:.2f} | {s['rougeLsum']:.2f} |")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--checkpoint", default=None, help="weights file (default: the shipped one)")
    ap.add_argument("--systems", nargs="+", default=["model", "lead", "oracle", "textrank"],
                    help="model lead oracle textrank longest leadfed")
    ap.add_argument("--cnndm-n", type=int, default=None, help="first n test docs (default all)")
    ap.add_argument("--no-cnndm", action="store_true")
    ap.add_argument("--no-bbc", action="store_true")
    ap.add_argument("--workers", type=int, default=1, help="model processes (1 torch thread each)")
    ap.add_argument("--out", default=None, help="write the markdown table here")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)

    notes = []

    def systems(docs, k_label, block_trigram, bbc=False):
        out = {}
        for n in args.systems:
            if n == "model":
                whole, first, rate = model_scores(args.checkpoint, docs, args.workers)
                notes.append(f"Model throughput on these documents: {rate:.2f} docs/s (encode + forward, "
                             f"all windows, {args.workers} process(es) x 1 torch thread, shared 2-core CPU).")
                print(notes[-1], file=sys.stderr)
                tb = ", trigram blocking" if block_trigram else ""
                out[f"BertSumExt-MiniLM, whole document (app default){tb}"] = from_scores(whole, docs, block_trigram)
                out[f"BertSumExt-MiniLM, first 512 tokens (BertSum){tb}"] = from_scores(first, docs, block_trigram)
                if bbc:
                    out["BertSumExt-MiniLM, whole document, trigram blocking"] = from_scores(whole, docs, True)
            else:
                out[{"lead": f"Lead-{k_label}", "oracle": "Oracle", "longest": f"Longest-{k_label}",
                     "textrank": f"TextRank (sumy, {k_label})",
                     "leadfed": f"Lead-{k_label} of sentences >= 5 words, trigram blocking"}[n]] = BASELINES[n]
        return out

    md = [f"Command: `python -m training.evaluate {' '.join(argv if argv is not None else sys.argv[1:])}`", ""]
    if not args.no_cnndm:
        docs = named_split("cnndm-test", args.data, args.cnndm_n)
        rows = evaluate(docs, systems(docs, "3", True), lambda d: 3)
        md.append(table(f"CNN/DM held-out test ({len(docs)} documents of cnndm_val, see model/data.py), top-3", rows))
        md += notes + [""]
        notes.clear()
    if not args.no_bbc:
        docs = named_split("bbc-test", args.data)
        if "longest" not in args.systems:
            args.systems.append("longest")
        rows = evaluate(docs, systems(docs, "k", False, bbc=True), lambda d: len(d.reference))
        md.append(table(f"BBC News Summary test split ({len(docs)} documents), k = reference sentences",
                        rows))
        md += notes + [""]
    text = "\n".join(md)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
