"""Datasets for training and evaluation: reading, sentence labels, encoding, and the cache of
frozen lower-layer hidden states.

Splits (fixed, documented in model/weights/README.md). The files are ordered by source
(cnndm_train: ~90% CNN in its first 20k lines, only Daily Mail after; cnndm_val: CNN only
in its first 2,000 lines), so every split is taken through a seeded permutation:
  CNN/DM train  = cnndm_train.jsonl.gz in the order ``permutation(seed 0)``, first ``n``;
  CNN/DM valid  = cnndm_val.jsonl.gz, ``permutation(seed 0)[:2000]`` (model selection);
  CNN/DM test   = cnndm_val.jsonl.gz, ``permutation(seed 0)[2000:]`` (2,365 documents, held
                  out: never trained on nor used for model selection);
  BBC test      = bbc_news_summary.jsonl.gz ``split == "test"`` (221).

Every document is split with ``model.text.split_sentences`` (the app's splitter), also the
lowercased PTB-tokenized CNN/DM articles, and encoded with ``Summarizer.encode``.

The data directory is an argument everywhere; ``DEFAULT_DATA`` (``../shared/data`` from the
repository root) is only the command lines' default.
"""
from __future__ import annotations

import gzip
import re
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from model.text import split_sentences

from .oracle import greedy_selection, verbatim_labels

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data"
VALID_END = 2000  # cnndm_val[:2000] = validation, cnndm_val[2000:] = held-out test


@dataclass
class Doc:
    text: str              # the document as the app would receive it
    sentences: list[str]   # split_sentences(text), as text
    reference: list[str]   # reference summary sentences (ROUGE-Lsum: one per line)
    labels: list[int]      # 0/1 per sentence (greedy oracle or verbatim match)


def read_jsonl(path: str | Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def sentences_of(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


def split_order(n: int) -> np.ndarray:
    """The fixed document order of a CNN/DM file of n lines (seeded, independent of --seed)."""
    return np.random.RandomState(0).permutation(n)


def cnndm_docs(data_dir: str | Path, split: str, start: int = 0, stop: int | None = None,
               k: int = 3) -> list[Doc]:
    """CNN/DM ``split`` in {"train", "val"}: documents ``split_order[start:stop]``, greedy-oracle
    labels (k sentences at most)."""
    rows = read_jsonl(Path(data_dir) / f"cnndm_{split}.jsonl.gz")
    docs = []
    for j in split_order(len(rows))[start:stop]:
        r = rows[j]
        sents = sentences_of(r["article"])
        sel = set(greedy_selection(sents, r["highlights"], k))
        docs.append(Doc(r["article"], sents, list(r["highlights"]),
                        [int(i in sel) for i in range(len(sents))]))
    return docs


def bbc_docs(data_dir: str | Path, split: str = "test") -> list[Doc]:
    """BBC News Summary ``split`` with verbatim labels; the reference = the labelled sentences."""
    docs = []
    for r in read_jsonl(Path(data_dir) / "bbc_news_summary.jsonl.gz"):
        if r["split"] != split:
            continue
        sents = sentences_of(r["article"])
        labels = verbatim_labels(sents, r["summary"])
        docs.append(Doc(r["article"], sents, [s.strip() for s, y in zip(sents, labels) if y],
                        labels))
    return docs


def named_split(name: str, data_dir: str | Path, n: int | None = None) -> list[Doc]:
    """``cnndm-train`` / ``cnndm-valid`` / ``cnndm-test`` / ``bbc-test`` (optionally first n)."""
    if name == "cnndm-train":
        return cnndm_docs(data_dir, "train", 0, n)
    if name == "cnndm-valid":
        return cnndm_docs(data_dir, "val", 0, min(n, VALID_END) if n else VALID_END)
    if name == "cnndm-test":
        return cnndm_docs(data_dir, "val", VALID_END, VALID_END + n if n else None)
    if name.startswith("bbc-"):
        return bbc_docs(data_dir, name[4:])[:n]
    raise ValueError(f"unknown split {name!r}")


# ---------------------------------------------------------------- detokenized ("raw") text

_BRACKETS = {"-lrb-": "(", "-rrb-": ")", "-lsb-": "[", "-rsb-": "]", "-lcb-": "{", "-rcb-": "}",
             "``": '"', "''": '"'}
_NO_SPACE_BEFORE = {".", ",", ";", ":", "?", "!", ")", "]", "}", "%", "...", "…"}
_NO_SPACE_AFTER = {"(", "[", "{", "$", "£", "€", "#"}
_CLITIC = re.compile(r"^(?:['’](?:s|re|ve|m|ll|d)|n['’]t)$")
_SENTENCE_END = {".", "?", "!", "...", "…"}


def raw_text(ptb: str) -> str:
    """A deterministic detokenization of lowercased PTB-tokenized text, approximating what a
    user would paste: PTB brackets and quotes back to characters (-lrb- → "(", `` and '' → ");
    no space before , . ; : ? ! ) % ... and clitics ('s, n't, 're, ...) nor after ( [ $ £ €;
    hyphenated words rejoined (``35 - year - old`` → ``35-year-old``); straight quotes " and '
    attached by parity (a lone ' after a word ending in s, outside a quote and before a word,
    is a plural possessive: ``st james' park``); ‘ “ open and ’ ” close. Capitals: the first
    word outside brackets of the text and after each sentence-final PTB token (. ? ! ... as
    tokens of their own), the pronoun "i" and "cnn" (``( cnn ) -- the`` → ``(CNN) -- The``).
    Everything else stays as it is (``--``, abbreviations such as ``u.s.``, names: the original
    casing is lost). Not sacremoses: no extra dependency, and the rules are the ones above."""
    toks = []
    for t in ptb.split():
        t = _BRACKETS.get(t, t)
        if t == "s" and toks and toks[-1] == "'":  # "u.s. ' s" → "u.s. 's"
            toks[-1] = "'s"
        else:
            toks.append(t)
    out: list[str] = []      # tokens
    glue: list[bool] = []    # glue[i]: no space between token i-1 and token i
    open_dq = open_sq = glue_next = False
    capital, depth = True, 0
    for i, t in enumerate(toks):
        prev = toks[i - 1] if i else ""
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        attach_prev = attach_next = False
        if t in _NO_SPACE_BEFORE or _CLITIC.match(t):
            attach_prev = True
        elif t == "-" and prev[-1:].isalnum() and nxt[:1].isalnum():
            attach_prev = attach_next = True
        elif t == '"':
            attach_prev, attach_next = open_dq, not open_dq
            open_dq = not open_dq
        elif t == "'":
            if open_sq:
                attach_prev, open_sq = True, False
            elif prev.endswith("s") and prev.isalnum() and nxt[:1].isalnum():
                attach_prev = True  # plural possessive: "the parents ' house"
            else:
                attach_next, open_sq = True, True
        elif t in ("‘", "“"):
            attach_next = True
        elif t in ("’", "”"):
            attach_prev = True
        elif t in _NO_SPACE_AFTER:
            attach_next = True
        depth = max(0, depth + (t in ("(", "[", "{")) - (t in (")", "]", "}")))
        word = {"i": "I", "cnn": "CNN"}.get(t, t)
        if capital and depth == 0 and word[:1].isalnum():  # not inside a bracket: "(CNN) -- The"
            word = word[:1].upper() + word[1:]
            capital = False
        if t in _SENTENCE_END:
            capital = True
        out.append(word)
        glue.append(attach_prev or (bool(glue) and glue_next))
        glue_next = attach_next
    if glue:
        glue[0] = True
    return "".join(("" if g else " ") + w for g, w in zip(glue, out))
