"""How good is this summary (issue 60): each document sentence's overlap with the reference, with
the model's and the oracle's picks marked by symbols (★ the model's, ◆ the oracle's) and bar
patterns, not by colour alone; the alignment of one reference sentence, and the ROUGE table for a
slide, as HTML."""
from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from .common import bold_html, plotly_text, preview
from .palette import BLACK, BLUE, LIGHT_GREY, MID_GREY, ORANGE

OUTLINE = dict(color=BLACK, width=0.5)


def mark(i: int, model: list[int], oracle: list[int]) -> str:
    return ("★" if i in model else "") + ("◆" if i in oracle else "")


def overlap_chart(sentences: list[str], overlap: np.ndarray, model: list[int], oracle: list[int]) -> go.Figure:
    """Horizontal bars, one per document sentence (numbered from 1): the share of its words that
    are in the reference; ★ = the model's pick (blue), ◆ = the oracle's (hatched), both: blue and
    hatched; the sentence in the hover."""
    n = len(sentences)
    labels = np.array([f"{i + 1} {mark(i, model, oracle)}".strip() for i in range(n)], dtype=object)
    colors = [BLUE if i in model else ORANGE if i in oracle else LIGHT_GREY for i in range(n)]
    patterns = ["/" if i in oracle else "" for i in range(n)]
    fig = go.Figure(go.Bar(
        x=np.asarray(overlap, dtype=np.float32), y=labels, orientation="h",
        marker=dict(color=colors, pattern=dict(shape=patterns, fgcolor=BLACK), line=OUTLINE),
        text=[f"{v:.0%}" for v in overlap], textposition="outside",
        customdata=np.array([plotly_text(preview(s, 60)) for s in sentences], dtype=object),
        hovertemplate="sentence %{y}: %{customdata}<br>%{x:.0%} of its words are in the reference<extra></extra>",
        showlegend=False))
    fig.update_layout(title="Each sentence's words in the reference (★ the model's pick, ◆ the oracle's)",
                      height=max(240, 24 * n + 100), margin=dict(l=10, r=40, t=60, b=10))
    fig.update_xaxes(title="share of the sentence's words found in the reference", range=[0, 1.15], tickformat=".0%")
    fig.update_yaxes(title="sentence", type="category", autorange="reversed")
    return fig


def alignment_html(sentences: list[str], drawn: list[tuple[int, float]], model: list[int]) -> str:
    """The document's sentences with those a reference sentence draws on marked (▶ and bold, with
    the share of the reference sentence's words each has): text escaped."""
    share = dict(drawn)
    rows = []
    for i, s in enumerate(sentences):
        text = html.escape(s)
        if i in share:
            rows.append(f"<p><mark>▶ <b>{i + 1}.</b> <b>{text}</b></mark> <small>({share[i]:.0%} of its words"
                        f"{'; the model picked it ★' if i in model else ''})</small></p>")
        else:
            rows.append(f"<p><b>{i + 1}.</b> {text}</p>")
    return "".join(rows)


CELL = f"padding:.25em .7em;border-bottom:1px solid {MID_GREY};text-align:left"


def rouge_html(rows: list[dict], verdict: str) -> str:
    """The ROUGE table as a slide shows it (the page's table: one row per summary, its columns), the
    verdict under it; ``verdict``'s **bold** stays bold, every text escaped."""
    head = "".join(f"<th style='{CELL}'>{html.escape(str(k))}</th>" for k in rows[0])
    body = "".join("<tr>" + "".join(f"<td style='{CELL}'>{html.escape(str(v))}</td>" for v in r.values()) + "</tr>"
                   for r in rows)
    return (f"<table style='border-collapse:collapse;font-size:1.2em;margin:.4em 0'><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table><p style='font-size:1.15em'>{bold_html(verdict)}</p>")
