"""The summary next to its source: per-sentence scores, selection, length-limit cuts."""
from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from .common import preview

SELECTED, CANDIDATE, UNSCORED = "#1f77b4", "#c6d4e1", "#d9d9d9"


def sentence_status(summary, i: int) -> str:
    if i in summary.selected:
        return "selected"
    if i in summary.truncated:
        return "cut by length limit"
    if i in summary.too_short:
        return "too short (not scored)"
    if summary.scores[i] is None:
        return "not scored"
    return "not selected"


def score_bars(summary, height: int | None = None) -> go.Figure:
    """Horizontal bars, one per sentence in document order: selected dark, others light, unscored
    sentences (too short / cut by the 512-token limit) as grey stubs."""
    n = len(summary.sentences)
    scores = np.array([np.nan if s is None else s for s in summary.scores], dtype=np.float32)
    shown = np.where(np.isnan(scores), np.float32(0.01), scores).astype(np.float32)
    status = [sentence_status(summary, i) for i in range(n)]
    colors = [SELECTED if s == "selected" else UNSCORED if np.isnan(scores[i]) else CANDIDATE
              for i, s in enumerate(status)]
    labels = np.array([f"{i}" for i in range(n)], dtype=object)
    text = [("★ " if st == "selected" else "") + (f"{scores[i]:.3f}" if not np.isnan(scores[i]) else st)
            for i, st in enumerate(status)]
    fig = go.Figure(go.Bar(
        x=shown, y=labels, orientation="h", marker_color=colors, text=text, textposition="outside",
        customdata=np.array([[preview(s, 60), st] for s, st in zip(summary.sentences, status)], dtype=object),
        hovertemplate="sentence %{y}: %{customdata[0]}<br>%{customdata[1]}<br>score %{x:.3f}<extra></extra>"))
    fig.update_layout(title="Sentence scores", height=height or max(240, 26 * n + 80),
                      margin=dict(l=10, r=40, t=40, b=10), showlegend=False)
    fig.update_xaxes(title="score", range=[0, 1.15])
    fig.update_yaxes(title="sentence", type="category", autorange="reversed")
    return fig


def document_html(summary) -> str:
    """The document, one sentence a line, shaded by score; selected sentences bold with a ★,
    sentences cut by the length limit struck through. All user text is HTML-escaped."""
    rows = []
    for i, sent in enumerate(summary.sentences):
        score = summary.scores[i]
        st = sentence_status(summary, i)
        alpha = 0.0 if score is None else 0.08 + 0.5 * float(score)
        style = f"background: rgba(31,119,180,{alpha:.2f}); padding: 2px 4px; border-radius: 3px;"
        if st == "selected":
            style += " font-weight: 600; border-left: 4px solid #1f77b4;"
        if st == "cut by length limit":
            style += " color: #888; text-decoration: line-through;"
        if st.startswith("too short"):
            style += " color: #888;"
        tag = "★ " if st == "selected" else ""
        score_txt = "—" if score is None else f"{score:.2f}"
        rows.append(f'<div style="margin: 2px 0; {style}" title="{html.escape(st)}">'
                    f'<span style="color:#666; font-size: 0.8em;">{i} · {score_txt}</span> '
                    f'{tag}{html.escape(sent)}</div>')
    return "\n".join(rows)


def summary_markdown(summary, title: str = "Summary") -> str:
    lines = [f"# {title}", ""] + [f"- {summary.sentences[i]}" for i in summary.selected]
    lines += ["", f"_{len(summary.selected)} of {len(summary.sentences)} sentences; model: "
                  f"{summary.backbone}, {summary.weights} weights._", ""]
    return "\n".join(lines)
