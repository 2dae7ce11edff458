"""How good is this summary, for one document with a reference summary (issue 60): ROUGE of the
model's summary beside Lead-k (after a title line, where the document has one) and the greedy
oracle that labelled the training data (training/oracle.py: often, not always, the best k sentences), each document sentence's overlap with the
reference, where each reference sentence comes from in the document (an n-gram alignment, after
SummVis, Vig et al. 2021), and which of the model's sentences share no phrase with the reference.

Words are ROUGE's: rouge-score's tokenizer (lower case, letters and digits, Porter-stemmed), so
the overlaps here and the ROUGE scores count the same words. Pure functions, no model."""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from training.metrics import KEYS, rouge_detail
from training.oracle import greedy_selection


@dataclass(frozen=True)
class Quality:
    systems: dict[str, list[int]]         # "model", "lead", "oracle" → the document sentences each picks
    rouge: dict[str, dict[str, tuple[float, float, float]]]  # system → rouge1/2/Lsum → (P, R, F) × 100
    overlap: np.ndarray                   # [S] share of each document sentence's words found in the reference
    covers: np.ndarray                    # [S] how many of the reference's distinct words each sentence has
    alignment: list[list[tuple[int, float]]]  # per reference sentence: (document sentence, share of its words)
    adds_nothing: list[int]               # the model's sentences sharing no two-word phrase with the reference
    reference: list[str]                  # the reference's sentences
    titled: bool = False                  # the document opens with a title line: Lead-k starts after it

    def rank(self) -> int:
        """The model's place by ROUGE-1 F1 among the model, Lead-k and the oracle (1 = best)."""
        f = {s: self.rouge[s]["rouge1"][2] for s in self.systems}
        return 1 + sum(f[s] > f["model"] + 1e-9 for s in f if s != "model")


def _tokens(text: str) -> list[str]:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)._tokenizer.tokenize(text)


def _bigrams(words: list[str]) -> set[tuple[str, str]]:
    return set(zip(words, words[1:]))


def reference_sentences(reference: str) -> list[str]:
    """A reference as its sentences: one a line when it has several lines, else split as documents are."""
    lines = [line.strip() for line in reference.splitlines() if line.strip()]
    if len(lines) > 1:
        return lines
    from model.text import split_sentences

    return [reference[a:b].strip() for a, b in split_sentences(reference) if reference[a:b].strip()]


MAX_REFERENCE_CHARS = 10_000  # a long abstract is ~3,000; 0.17 CPU-s at this length (python -m benchmarks.reference)


def quality(sentences: list[str], selected: list[int], reference: str, k: int) -> Quality:
    """``sentences``: the document's (as the model split them); ``selected``: the model's pick;
    ``reference``: the reference summary's text; ``k``: the summary length (Lead-k, the oracle's k)."""
    if len(reference) > MAX_REFERENCE_CHARS:  # the work grows with it (1 MB: 51 s of a server's CPU)
        raise ValueError(f"The reference summary is {len(reference):,} characters; a reference summary is at most "
                         f"{MAX_REFERENCE_CHARS:,} (about 1,700 words). Paste a shorter one.")
    ref = reference_sentences(reference)
    if not ref:
        raise ValueError("the reference summary is empty")
    first = int(has_title(sentences, k))  # a title is not the lead's first sentence (issue 72)
    systems = {"model": sorted(selected), "lead": list(range(first, min(first + k, len(sentences)))),
               "oracle": greedy_selection(sentences, ref, k)}
    rouge = {name: rouge_detail([sentences[i] for i in picked], ref) for name, picked in systems.items()}
    ref_words = [_tokens(r) for r in ref]
    ref_all = set().union(*map(set, ref_words))
    ref_pairs = set().union(*(_bigrams(w) for w in ref_words))
    doc_words = [_tokens(s) for s in sentences]
    overlap = np.array([np.mean([w in ref_all for w in words]) if words else 0.0 for words in doc_words])
    covers = np.array([len(set(words) & ref_all) for words in doc_words])
    return Quality(systems, rouge, overlap, covers, [align(r, doc_words) for r in ref_words],
                   [i for i in sorted(selected) if not _bigrams(doc_words[i]) & ref_pairs], ref, bool(first))


TERMINAL = re.compile(r"[.!?…:;][\"'”’»)\]]*$")  # a sentence's end, its closing quotes and brackets after it


def has_title(sentences: list[str], k: int) -> bool:
    """Whether the document opens with a title line: a first "sentence" of at most 20 words with no
    sentence-final punctuation, before more than k sentences (a news page's headline, as every
    shipped example has). Lead-k then starts after it: counting the title as the lead's first
    sentence made Lead-3 look worse than it is."""
    first = sentences[0].strip() if sentences else ""
    return len(sentences) > k and bool(first) and len(first.split()) <= 20 and not TERMINAL.search(first)


def align(reference_words: list[str], doc_words: list[list[str]], most: int = 3) -> list[tuple[int, float]]:
    """The document sentences a reference sentence draws on: greedily the sentence that adds the
    most of its two-word phrases (then words) not yet covered, while one adds at least one phrase
    or two words; → (sentence, share of the reference sentence's words it has), best first. A
    sentence copied verbatim covers every phrase: it comes first, alone."""
    want1, want2 = set(reference_words), _bigrams(reference_words)
    have1, have2, out = set(), set(), []
    for _ in range(most):
        gains = [(len((_bigrams(w) & want2) - have2), len((set(w) & want1) - have1), -i) for i, w in enumerate(doc_words)]
        pairs, words, neg = max(gains, default=(0, 0, 0))
        if pairs == 0 and words < 2:
            break
        i = -neg
        have1 |= set(doc_words[i]) & want1
        have2 |= _bigrams(doc_words[i]) & want2
        out.append((i, len(set(doc_words[i]) & want1) / max(len(want1), 1)))
        if want2 <= have2 and want1 <= have1:
            break
    return out


def in_words(q: Quality, k: int) -> str:
    """The scores in plain words: how much of the reference each system covers (ROUGE-1 recall)."""
    cover = {s: q.rouge[s]["rouge1"][1] for s in q.systems}
    lead = f"the first {k} sentences" + (" after the title" if q.titled else "")
    return (f"The model's summary covers {cover['model']:.0f}% of the reference's words; Lead-{k} ({lead}) covers "
            f"{cover['lead']:.0f}%; the greedy oracle ({k} sentences added one at a time for ROUGE, as the training "
            f"labels were made: often, not always, the best any {k} sentences could do) covers "
            f"{cover['oracle']:.0f}%.")


__all__ = ["KEYS", "Quality", "align", "has_title", "in_words", "quality", "reference_sentences"]
