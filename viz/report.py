"""A standalone HTML report of one document: settings, summary, the document with every
sentence's status, and figures, with Plotly's JavaScript inline so it opens offline (one file,
~5 MB: plotly.js is most of it). All document text is HTML-escaped."""
from __future__ import annotations

import html

import plotly.graph_objects as go

from .palette import MUTED_TEXT, TEXT

STYLE = ("body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:%s}"
         "h1{font-size:1.6em}h2{font-size:1.2em;margin-top:1.6em}.settings{color:%s}li{margin:.3em 0}") % (TEXT, MUTED_TEXT)


def readable(fig: go.Figure) -> go.Figure:
    """A copy of ``fig`` for a page of its own: every category of every axis labelled (the app's
    figures let Plotly skip crowded labels) and the margins grown to hold them (the app's are fixed
    for speed), 20 px of height per label."""
    fig = go.Figure(fig)
    labels = {}  # axis name in the layout → categories on it
    for t in fig.data:
        for letter in ("x", "y"):
            values = getattr(t, letter, None)
            if values is not None and len(values) and isinstance(values[0], str):
                name = (getattr(t, f"{letter}axis", None) or letter).replace(letter, f"{letter}axis", 1)
                labels[name] = max(labels.get(name, 0), len(values))
    for name, n in labels.items():
        fig.layout[name].update(tickmode="linear", tick0=0, dtick=1, automargin=True, tickfont=dict(size=11))
    fig.update_layout(margin=dict(l=20, r=20, t=70, b=20),
                      height=max(fig.layout.height or 450, 20 * max(labels.values(), default=0) + 300))
    return fig


def html_report(title: str, settings: str, summary: list[str], document_html: str,
                figures: list[tuple[str, go.Figure]]) -> str:
    """``document_html`` is trusted markup made by viz (already escaped); everything else is text."""
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{STYLE}</style></head><body>",
             f"<h1>{html.escape(title)}</h1><p class='settings'>{html.escape(settings)}</p>",
             "<h2>Summary</h2><ol>" + "".join(f"<li>{html.escape(s)}</li>" for s in summary) + "</ol>",
             "<h2>Document</h2>" + document_html]
    for n, (heading, fig) in enumerate(figures):
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        parts.append(readable(fig).to_html(full_html=False, include_plotlyjs=n == 0, config={"displaylogo": False}))
    parts.append("<p class='settings'>Made by the attention microscope (BertSumExt).</p></body></html>")
    return "\n".join(parts)
