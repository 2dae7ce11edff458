"""Downloads of the current result: the summary as text and Markdown, the scores as CSV, the
whole trace as NumPy arrays (.npz, 0-based indices as in the JSON), and a standalone HTML report.
The heavy ones are built only when clicked (a callable passed to st.download_button)."""
from __future__ import annotations

import csv
import io

import numpy as np
import streamlit as st


FORMULA = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet evaluates a cell that starts so (OWASP: CSV injection)


def spreadsheet_safe(cell):
    """A CSV cell as text a spreadsheet shows, never runs: ``'`` before a leading = + - @ tab or
    CR, unless the cell is a plain number (-0.5 stays a number)."""
    if not isinstance(cell, str) or not cell.startswith(FORMULA):
        return cell
    try:
        float(cell)
        return cell
    except ValueError:
        return "'" + cell


def csv_text(rows) -> str:
    """Rows (the first is the header) as CSV, every cell through ``spreadsheet_safe``: the one way
    the app writes CSV."""
    out = io.StringIO()
    w = csv.writer(out)
    for row in rows:
        w.writerow([spreadsheet_safe(c) for c in row])
    return out.getvalue()


def frame_csv(df) -> str:
    """A pandas table as CSV (``csv_text``)."""
    return csv_text([list(df.columns), *df.itertuples(index=False, name=None)])


def scores_csv(summary, statuses: list[str]) -> str:
    """One row per sentence: its number as shown (1-based), score, status, text."""
    return csv_text([["sentence", "score", "status", "text"]]
                    + [[i + 1, "" if score is None else f"{score:.6f}", statuses[i], text]
                       for i, (text, score) in enumerate(zip(summary.sentences, summary.scores))])


def npz_bytes(trace) -> bytes:
    out = io.BytesIO()
    np.savez_compressed(out, **trace.arrays())
    return out.getvalue()


def download_row(trace, statuses: list[str], report) -> None:
    """The row of download buttons; ``report()`` builds the HTML report when clicked."""
    s = trace.summary
    row = st.container(horizontal=True)  # buttons as wide as their labels, wrapping (5 columns cut them at 1400 px)
    c = [row] * 5
    c[0].download_button("Text .txt", "\n".join(s.sentences[i] for i in s.selected) + "\n",
                         file_name="summary.txt", mime="text/plain", on_click="ignore")
    from viz.summary import summary_markdown

    c[1].download_button("Markdown .md", summary_markdown(s), file_name="summary.md", mime="text/markdown",
                         on_click="ignore")
    c[2].download_button("Scores .csv", scores_csv(s, statuses), file_name="scores.csv", mime="text/csv",
                         on_click="ignore")
    c[3].download_button("Trace .npz", lambda: npz_bytes(trace), file_name="trace.npz",
                         mime="application/octet-stream", on_click="ignore",
                         help="Every captured array (attention, masks, positions) for NumPy: np.load('trace.npz'). "
                              "Indices in it are 0-based.")
    c[4].download_button("Report .html", report, file_name="report.html", mime="text/html", on_click="ignore",
                         help="One file with the summary, the statuses and the key figures; opens offline.")
