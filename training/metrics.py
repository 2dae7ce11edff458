"""ROUGE (Lin 2004) as the papers report it: Google's ``rouge-score``, rouge1/rouge2/rougeLsum
F1 × 100, Porter stemming, summary sentences separated by newlines (what ROUGE-Lsum splits on).
``rouge-score`` lowercases and replaces every non-alphanumeric character by a space before
matching, so PTB-tokenised and detokenised text of the same words score alike (except
contractions: ``did n't`` gives did/n/t, ``didn't`` didn/t).

Per-document scores and a percentile bootstrap over documents give the paired difference of
two systems on the same documents with a confidence interval (``bootstrap_ci``)."""
from __future__ import annotations

import numpy as np
from rouge_score import rouge_scorer

KEYS = ("rouge1", "rouge2", "rougeLsum")


def rouge_per_doc(preds: list[list[str]], refs: list[list[str]]) -> np.ndarray:
    """F1 x 100 of each document: [N, 3], columns ``KEYS`` (rouge1, rouge2, rougeLsum); each
    summary is a list of sentences."""
    scorer = rouge_scorer.RougeScorer(list(KEYS), use_stemmer=True)
    out = np.zeros((len(preds), len(KEYS)))  # [N, 3]
    for j, (p, r) in enumerate(zip(preds, refs, strict=True)):
        s = scorer.score("\n".join(r), "\n".join(p))
        out[j] = [100 * s[k].fmeasure for k in KEYS]
    return out


def rouge_detail(pred: list[str], ref: list[str]) -> dict[str, tuple[float, float, float]]:
    """One summary against one reference (each a list of sentences): per ``KEYS``, (precision,
    recall, F1) × 100, as ``rouge_per_doc`` scores it."""
    s = rouge_scorer.RougeScorer(list(KEYS), use_stemmer=True).score("\n".join(ref), "\n".join(pred))
    return {k: (100 * s[k].precision, 100 * s[k].recall, 100 * s[k].fmeasure) for k in KEYS}


def rouge(preds: list[list[str]], refs: list[list[str]]) -> dict[str, float]:
    """Mean F1 x 100 of each ROUGE variant; each summary is a list of sentences."""
    per_doc = rouge_per_doc(preds, refs)  # [N, 3]
    mean = per_doc.mean(0) if len(per_doc) else np.zeros(len(KEYS))  # [3]
    return {k: float(v) for k, v in zip(KEYS, mean)}


def bootstrap(stat, n_docs: int, n: int = 2000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """The percentile bootstrap ``level`` interval of a statistic over documents: ``stat`` maps
    resampled document indices [n, N] (one seeded draw, with replacement) to [n] values."""
    idx = np.random.default_rng(seed).integers(0, n_docs, size=(n, n_docs))  # [n, N]
    alpha = (1 - level) / 2
    low, high = np.quantile(stat(idx), [alpha, 1 - alpha])
    return float(low), float(high)


def bootstrap_ci(diffs, n: int = 2000, seed: int = 0, level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high) of per-document values ``diffs`` [N]: the mean and the percentile
    bootstrap ``level`` interval of the mean (``bootstrap``)."""
    d = np.asarray(diffs, dtype=float)  # [N]
    if d.ndim != 1 or len(d) == 0:
        raise ValueError(f"diffs must be a non-empty 1-d array, got shape {d.shape}")
    return (float(d.mean()), *bootstrap(lambda idx: d[idx].mean(1), len(d), n, seed, level))
