"""ROUGE evaluation of the extractive summarizer and its baselines, same documents, same run.

    python -m training.evaluate --data ../shared/data --out /tmp/eval.md --json /tmp/eval.json
    python -m training.evaluate --cnndm-n 300 --no-bbc --workers 1           # a few minutes
    python -m training.evaluate --cnndm-n 200 --no-bbc --systems lead oracle    # quick look

ROUGE: ``training.metrics.rouge_per_doc`` (rouge-score F1 x 100 of each document). Every row
besides Lead-k also gets its per-document difference to Lead-k on the same documents (mean and
percentile-bootstrap 95% interval over documents, ``training.metrics.bootstrap_ci``) and the
share of documents whose selected set is exactly the Lead-k set ("= lead").

Text forms (``--text-form``, CNN/DM only): ``ptb`` = the lowercased PTB-tokenized articles as
stored; ``raw`` = a detokenized copy of each (``training.data.raw_text``), split into sentences
by the app's splitter, with its own oracle labels; what users paste looks more like ``raw``.
The reference highlights are the same in both (rouge-score lowercases and drops punctuation).

Test sets (see training/data.py): CNN/DM = cnndm_val[2000:] (held out), top-3 with trigram
blocking (Liu & Lapata 2019, §5.3); BBC = the ``test`` split, k = the reference's sentence
count, without trigram blocking (its references are long, verbatim-extractive).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time

import numpy as np
import torch
from tqdm import tqdm

from model.summarizer import select, sentence_scores

from .data import DEFAULT_DATA, Doc, named_split, raw_text, sentences_of
from .metrics import KEYS, bootstrap_ci, rouge_per_doc
from .oracle import greedy_selection


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


def _rouge_words(text: str) -> str:
    """rouge-score's view of a text (lowercase, non-alphanumerics → spaces), no stemming."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def raw_form(docs: list[Doc], k: int = 3) -> list[Doc]:
    """The detokenized copy of CNN/DM documents: ``raw_text`` of the article, the app's
    sentence split of that, the same reference, greedy-oracle labels recomputed on the new
    sentences (both sides in rouge-score's lowercase alphanumeric words, so the capitals and
    rejoined hyphens of the raw text do not cost the oracle)."""
    out = []
    for d in docs:
        text = raw_text(d.text)
        sents = sentences_of(text)
        sel = set(greedy_selection([_rouge_words(s) for s in sents], [_rouge_words(r) for r in d.reference], k))
        out.append(Doc(text, sents, d.reference, [int(i in sel) for i in range(len(sents))]))
    return out


def evaluate(docs: list[Doc], systems: dict, k_of) -> list[dict]:
    """Every system on the same documents: [{name, per_doc [N, 3] (rouge1/2/Lsum F1 x 100),
    picks (selected indices per document), docs_per_s (selection only)}]."""
    refs = [d.reference for d in docs]
    rows = []
    for name, pick in systems.items():
        t0 = time.perf_counter()
        picks = [tuple(pick(d, k_of(d))) for d in tqdm(docs, desc=name, file=sys.stderr, leave=False)]
        rate = len(docs) / (time.perf_counter() - t0)
        per_doc = rouge_per_doc([[d.sentences[i].strip() for i in p] for d, p in zip(docs, picks)], refs)
        rows.append({"name": name, "per_doc": per_doc, "picks": picks, "docs_per_s": rate})
        print(f"{name}: " + " ".join(f"{k} {v:.2f}" for k, v in zip(KEYS, per_doc.mean(0)))
              + f" ({rate:.1f} docs/s)", file=sys.stderr)
    return rows


def summarise(rows: list[dict], docs: list[Doc], k_of, lead_name: str, ci_n: int = 2000) -> list[dict]:
    """Per system: mean ROUGE, difference to ``lead_name`` (mean, 95% bootstrap interval, per
    ROUGE variant; paired by document) and the share of documents whose picks equal Lead-k."""
    lead_sets = [tuple(lead(d, k_of(d))) for d in docs]
    base = next((r["per_doc"] for r in rows if r["name"] == lead_name), None)
    if base is None:  # Lead-k is the reference point of every difference: score it anyway
        base = rouge_per_doc([[d.sentences[i].strip() for i in s] for d, s in zip(docs, lead_sets)],
                             [d.reference for d in docs])
    out = []
    for r in rows:
        entry = {"name": r["name"], "n_docs": len(docs),
                 "rouge": {k: float(v) for k, v in zip(KEYS, r["per_doc"].mean(0))},
                 "equals_lead": float(np.mean([tuple(sorted(p)) == s for p, s in zip(r["picks"], lead_sets)])),
                 "delta_vs_lead": None}
        if r["name"] != lead_name:
            entry["delta_vs_lead"] = {k: dict(zip(("mean", "low", "high"),
                                                  bootstrap_ci(r["per_doc"][:, j] - base[:, j], n=ci_n)))
                                      for j, k in enumerate(KEYS)}
        entry["per_doc"] = np.round(r["per_doc"], 3).tolist()
        out.append(entry)
    return out


def table(title: str, summary: list[dict], lead_name: str) -> str:
    out = [f"**{title}**", "",
           f"| system | ROUGE-1 | ROUGE-2 | ROUGE-Lsum | Δ R1 vs {lead_name} [95% CI] | Δ R2 [95% CI] "
           f"| Δ RLsum [95% CI] | = lead |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for e in summary:
        s, d = e["rouge"], e["delta_vs_lead"]
        deltas = (["—"] * 3 if d is None else
                  [f"{d[k]['mean']:+.2f} [{d[k]['low']:+.2f}, {d[k]['high']:+.2f}]" for k in KEYS])
        out.append(f"| {e['name']} | {s['rouge1']:.2f} | {s['rouge2']:.2f} | {s['rougeLsum']:.2f} | "
                   + " | ".join(deltas) + f" | {100 * e['equals_lead']:.1f}% |")
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
    ap.add_argument("--text-form", choices=("ptb", "raw", "both"), default="both",
                    help="CNN/DM articles as stored (PTB), a detokenized copy (raw), or both tables")
    ap.add_argument("--out", default=None, help="write the markdown tables here")
    ap.add_argument("--json", default=None, help="write every number (also per document) here as JSON")
    args = ap.parse_args(argv)
    args.systems += [s for s in ("lead", "oracle") if s not in args.systems]  # always in the same run
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

    cmd = f"python -m training.evaluate {' '.join(argv if argv is not None else sys.argv[1:])}"
    md = [f"Command: `{cmd}`", "",
          "Δ: per-document difference to Lead-k on the same documents, mean and 95% percentile-bootstrap "
          "interval over documents (2,000 resamples, seed 0). = lead: share of documents whose selected "
          "sentences are exactly the first k.", ""]
    dump = {"command": cmd, "tables": []}

    def report(dataset, form, title, docs, k_label, block_trigram, k_of, extra=(), bbc=False):
        lead_name = f"Lead-{k_label}"
        rows = evaluate(docs, systems(docs, k_label, block_trigram, bbc), k_of)
        summary = summarise(rows, docs, k_of, lead_name)
        md.append(table(title, summary, lead_name))
        md.extend(list(extra) + notes + [""])
        dump["tables"].append({"dataset": dataset, "text_form": form, "title": title, "n_docs": len(docs),
                               "notes": list(extra) + notes, "systems": summary})
        notes.clear()

    if not args.no_cnndm:
        ptb = named_split("cnndm-test", args.data, args.cnndm_n)
        forms = ["ptb", "raw"] if args.text_form == "both" else [args.text_form]
        for form in forms:
            docs, extra = ptb, []
            if form == "raw":
                docs = raw_form(ptb)
                same = np.mean([len(a.sentences) == len(b.sentences) for a, b in zip(ptb, docs)])
                extra = [f"Raw form: `training.data.raw_text` of each article, split by `model.text.split_sentences`: "
                         f"{sum(len(d.sentences) for d in docs)} sentences ({sum(len(d.sentences) for d in ptb)} in "
                         f"the PTB form); {100 * same:.1f}% of the documents have as many sentences as their PTB form. "
                         "Oracle labels recomputed on these sentences."]
            name = {"ptb": "PTB-tokenized, lowercased, as stored", "raw": "detokenized (raw-looking) copy"}[form]
            report("cnndm-test", form, f"CNN/DM held-out test ({len(docs)} documents of cnndm_val, see "
                   f"training/data.py), {name}, top-3", docs, "3", True, lambda d: 3, extra)
    if not args.no_bbc:
        docs = named_split("bbc-test", args.data)
        if "longest" not in args.systems:
            args.systems.append("longest")
        report("bbc-test", "original", f"BBC News Summary test split ({len(docs)} documents, original text), "
               "k = reference sentences", docs, "k", False, lambda d: len(d.reference), bbc=True)
    text = "\n".join(md)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dump, f)
    return dump


if __name__ == "__main__":
    main()
