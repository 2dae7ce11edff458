"""The head statistics' names and what each measures (Clark et al. 2019's, for a BertSum input;
analysis/heads.py computes them). No torch: the app's registry of controls (ui.view) and lesson
files offer them as options without loading the model."""
from __future__ import annotations

from model.heads import PART_NAMES  # noqa: F401  (the pages read it here)

PARTS = ("bert", "inter")
BERT_STATS = {  # name → what it measures (table column / map title)
    "cls": "attention to [CLS] (every sentence's)",
    "first_cls": "attention to the first [CLS]",
    "sep": "attention to [SEP]",
    "punctuation": "attention to punctuation (any punctuation token)",
    "previous": "attention to the previous token (÷ T − 1)",
    "next": "attention to the next token (÷ T − 1)",
    "same_sentence": "attention to tokens of the same sentence",
    "other_sentences": "attention to tokens of other sentences",
    "entropy": "entropy of the rows (nats, unsmoothed)",
}
DEFINITIONS = ("Where these differ from Clark et al.'s code (clarkkev/attention-analysis): punctuation is any "
               "punctuation token (theirs: \".\" and \",\"); previous / next average over the T − 1 tokens that have "
               "one (theirs: ÷ T); entropy is of the rows as they are (theirs smooths them to 0.9999·a + 0.0001/T "
               "first). BertSum puts a [CLS] before every sentence: \"to [CLS]\" sums all of them, \"to the first "
               "[CLS]\" is Clark's [CLS]. [CLS], [SEP] and rollout match their code to 1e-6.")
INTER_STATS = {
    "same_sentence": "attention to the same sentence",
    "earlier": "attention to earlier sentences",
    "later": "attention to later sentences",
    "selected": "attention to the selected sentences",
    "entropy": "entropy of the rows (nats)",
}
SHORT = {  # statistic → a colour bar's few words (BERT_STATS / INTER_STATS say it in full)
    "cls": "to [CLS]", "first_cls": "to 1st [CLS]", "sep": "to [SEP]", "punctuation": "to punctuation",
    "previous": "to previous", "next": "to next", "same_sentence": "same sentence",
    "other_sentences": "other sentences", "entropy": "entropy (nats)", "earlier": "earlier sentences",
    "later": "later sentences", "selected": "selected sentences", "importance_gradient": "importance (gradient)",
    "importance_ablation": "importance (ablation)",
}
