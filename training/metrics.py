"""ROUGE (Lin 2004) as the papers report it: Google's ``rouge-score``, rouge1/rouge2/rougeLsum
F1 × 100, Porter stemming, summary sentences separated by newlines (what ROUGE-Lsum splits on)."""
from __future__ import annotations

from rouge_score import rouge_scorer

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
