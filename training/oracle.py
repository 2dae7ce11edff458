"""Extractive training labels.

CNN/DailyMail has abstractive highlights, so sentence labels come from BertSum's greedy
oracle (Liu & Lapata 2019, §4 "Extractive Summarization": "we use a greedy algorithm ...
to select the set of sentences which maximises the ROUGE score against the gold summary").
This is a line-for-line port of PreSumm's ``greedy_selection`` (src/prepro/data_builder.py):
up to ``k`` sentences are added one at a time, each time the one that most increases
ROUGE-1 F + ROUGE-2 F (set-of-n-gram overlap, not counts), stopping when nothing improves.

BBC News Summary is already extractive: a sentence is in the summary iff its text occurs
verbatim in the reference ``summary`` string (see ../shared/data/README.md).
"""
from __future__ import annotations

import re

_NON_ALNUM = re.compile(r"[^a-zA-Z0-9 ]")


def _clean_words(text: str) -> list[str]:
    """PreSumm's ``_rouge_clean``: keep letters, digits and spaces, split on whitespace."""
    return _NON_ALNUM.sub("", " ".join(text.split())).split()


def _ngrams(n: int, words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def _f1(evaluated: set, reference: set) -> float:
    """PreSumm's ``cal_rouge(...)['f']``: F1 of the set overlap."""
    overlap = len(evaluated & reference)
    p = overlap / len(evaluated) if evaluated else 0.0
    r = overlap / len(reference) if reference else 0.0
    return 2.0 * (p * r) / (p + r + 1e-8)


def greedy_selection(sentences: list[str], reference: list[str], k: int = 3) -> list[int]:
    """Indices (sorted) of up to ``k`` sentences greedily maximising ROUGE-1 F + ROUGE-2 F.

    ``sentences``: the document's sentences as text; ``reference``: the summary sentences.
    """
    ref_words = _clean_words(" ".join(reference))
    ref1, ref2 = _ngrams(1, ref_words), _ngrams(2, ref_words)
    words = [_clean_words(s) for s in sentences]
    sent1 = [_ngrams(1, w) for w in words]
    sent2 = [_ngrams(2, w) for w in words]

    selected: list[int] = []
    best = 0.0
    for _ in range(k):
        cur_best, cur_id = best, -1
        sel1 = set().union(*(sent1[i] for i in selected))
        sel2 = set().union(*(sent2[i] for i in selected))
        for i in range(len(sentences)):
            if i in selected:
                continue
            score = _f1(sel1 | sent1[i], ref1) + _f1(sel2 | sent2[i], ref2)
            if score > cur_best:
                cur_best, cur_id = score, i
        if cur_id == -1:
            break
        selected.append(cur_id)
        best = cur_best
    return sorted(selected)


def verbatim_labels(sentences: list[str], summary: str) -> list[int]:
    """BBC labels: 1 iff the (stripped, non-empty) sentence occurs verbatim in ``summary``."""
    return [int(bool(s.strip()) and s.strip() in summary) for s in sentences]
