"""The summary next to its source: per-sentence scores, selection, length-limit cuts."""
from __future__ import annotations

import html
import textwrap

import numpy as np
import plotly.graph_objects as go

from .common import plotly_text, preview, markdown_text

from .palette import (BLACK, DARK_GREY, MUTED_TEXT, NOTE_TEXT, SHADE, SHADE_MAX, STATUS_COLORS, STATUS_PATTERNS,
                      STATUS_SYMBOLS, TEXT)

OUTLINE = dict(color=DARK_GREY, width=1)  # ≥ 3:1 on white: a light bar's edge is still seen
# one colour, symbol, pattern and legend entry per status of analysis.explain.selection
STATUS_NAMES = {"selected": "selected", "trigram-blocked": "skipped: trigram blocking",
                "below-k": "below the top k", "too-short": "too short to score", "not-fed": "not fed (length limit)"}


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


def _statuses(summary, statuses) -> tuple[list[str], list[str]]:
    """(status key, reason) per sentence: from ``statuses`` (``analysis.explain.selection``:
    objects with ``.status`` and ``.reason``) or, without them, from the summary alone."""
    if statuses is not None:
        return [s.status for s in statuses], [s.reason for s in statuses]
    keys = {"selected": "selected", "too short (not scored)": "too-short", "not selected": "below-k"}
    plain = [sentence_status(summary, i) for i in range(len(summary.sentences))]
    return [keys.get(p, "not-fed") for p in plain], plain


def score_bars(summary, height: int | None = None, statuses=None) -> go.Figure:
    """Horizontal bars, one per sentence in document order (numbered from 1), coloured by
    status (legend: selected, skipped by trigram blocking, below the top k, too short, not fed);
    unscored sentences as grey stubs; the reason in the hover."""
    n = len(summary.sentences)
    scores = np.array([np.nan if s is None else s for s in summary.scores], dtype=np.float32)
    shown = np.where(np.isnan(scores), np.float32(0.01), scores).astype(np.float32)
    keys, reasons = _statuses(summary, statuses)
    colors = [STATUS_COLORS[k] for k in keys]
    labels = np.array([f"{i + 1}" for i in range(n)], dtype=object)
    text = [_marked(k, f"{scores[i]:.3f}" if not np.isnan(scores[i]) else STATUS_NAMES[k]) for i, k in enumerate(keys)]
    patterns = [STATUS_PATTERNS[k] for k in keys]  # statuses told apart without colour: symbol and hatching
    fig = go.Figure(go.Bar(
        x=shown, y=labels, orientation="h", marker=dict(color=colors, pattern=dict(shape=patterns, fgcolor=BLACK), line=OUTLINE),
        text=text, textposition="outside",
        customdata=np.array([[plotly_text(preview(s, 48)), "<br>".join(plotly_text(line) for line in textwrap.wrap(r, 48))]
                             for s, r in zip(summary.sentences, reasons)],  # lines of ≤ 48: a long hover was cut off
                            dtype=object),
        hovertemplate="sentence %{y}: %{customdata[0]}<br>%{customdata[1]}<br>score %{x:.3f}<extra></extra>",
        showlegend=False))
    for k in dict.fromkeys(keys):  # legend only: one empty trace per status present
        fig.add_trace(go.Bar(x=np.array([], dtype=np.float32), y=np.array([], dtype=object), orientation="h",
                             marker=dict(color=STATUS_COLORS[k], pattern=dict(shape=STATUS_PATTERNS[k], fgcolor=BLACK),
                                         line=OUTLINE),
                             name=_named(k), showlegend=True))
    fig.update_layout(title="Sentence scores", height=height or max(240, 26 * n + 110),
                      margin=dict(l=10, r=40, t=70, b=10), showlegend=True,
                      legend=dict(orientation="h", y=1.0, yanchor="bottom", x=0, font=dict(size=11)))
    fig.update_xaxes(title="score", range=[0, 1.15])
    fig.update_yaxes(title="sentence", type="category", autorange="reversed")
    return fig


def _marked(k: str, text: str) -> str:
    """``text`` after status ``k``'s symbol: ``★ 0.612``; as is for a status without one."""
    return f"{STATUS_SYMBOLS[k]} {text}" if STATUS_SYMBOLS[k] else text


def _named(k: str) -> str:
    """A status's name with its symbol: ``★ selected``."""
    return _marked(k, STATUS_NAMES[k])


def legend_html() -> str:
    """The status colours and symbols as a line of chips (for the document view)."""
    chip = "display:inline-block; padding:0 6px; margin-right:8px; border-left: 4px solid {c};"
    return "".join(f'<span style="{chip.format(c=STATUS_COLORS[k])}">{html.escape(_named(k))}</span>'
                   for k in STATUS_COLORS)


def document_html(summary, statuses=None) -> str:
    """The document, one sentence a line, numbered from 1 and shaded by score; the left border
    coloured by status and the status in words after the score (selected bold with a ★), so it reads
    without colour and to a screen reader; the reason in the tooltip and, for sentences
    skipped by trigram blocking, written out; ⁺ after the score of a sentence past the input length
    the scorer was trained on. All user text is HTML-escaped."""
    keys, reasons = _statuses(summary, statuses)
    rows = []
    for i, sent in enumerate(summary.sentences):
        score, key = summary.scores[i], keys[i]
        alpha = 0.0 if score is None else 0.08 + (SHADE_MAX - 0.08) * float(score)
        style = (f"background: rgba({SHADE[0]},{SHADE[1]},{SHADE[2]},{alpha:.2f}); padding: 2px 4px; border-radius: 3px; "
                 f"border-left: 4px solid {STATUS_COLORS[key]};")
        if key == "selected":
            style += " font-weight: 600;"
        if key == "not-fed":
            style += f" color: {MUTED_TEXT}; text-decoration: line-through;"
        if key == "too-short":
            style += f" color: {MUTED_TEXT};"
        score_txt = "—" if score is None else f"{score:.2f}"
        if i in summary.past_training:  # its sentence position was never seen in training
            score_txt += " ⁺"
        note = (f' <span style="color:{NOTE_TEXT}; font-size: 0.85em;">({html.escape(reasons[i])})</span>'
                if key == "trigram-blocked" else "")
        rows.append(f'<div style="margin: 2px 0; {style}" title="{html.escape(reasons[i])}">'
                    f'<span style="color:{TEXT}; font-size: 0.8em;">{i + 1} · {score_txt} · {STATUS_NAMES[key]}</span> '
                    f'{_marked(key, html.escape(sent))}{note}</div>')
    return "\n".join(rows)


def summary_markdown(summary, title: str = "Summary") -> str:
    lines = [f"# {title}", ""] + [f"- {markdown_text(summary.sentences[i])}" for i in summary.selected]
    lines += ["", f"_{len(summary.selected)} of {len(summary.sentences)} sentences; model: "
                  f"{summary.backbone}, {summary.weights} weights._", ""]
    return "\n".join(lines)
