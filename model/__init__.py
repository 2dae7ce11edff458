"""BertSumExt and what it looked at (model/summarizer.py). ``EXAMPLES``: the shipped example
documents, found from any folder (``(EXAMPLES / "bbc_insurance_bosses.txt").read_text()``)."""
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
