"""Why-this-summary figures (pure NumPy → Plotly / HTML): real vs position-neutral score per
sentence, words highlighted by their attribution to one sentence's score, attention rollout.

Inputs are the JSON-ready dict of ``analysis.explain.explain`` and NumPy arrays; sentences are
numbered from 1 here (the JSON is 0-based). Document text is always HTML-escaped."""
from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from .attention import _sentence_lines, token_index
from .common import (WEIGHT_HOVER, plotly_text, preview, weight_map,
                     sentence_label, token_labels)

from .palette import BLUE as REAL, ORANGE as NEUTRAL, LIGHT_GREY, LOWERED, METHOD_COLORS, RAISED  # blue raised, orange lowered


def _floats(xs) -> np.ndarray:
    return np.array([np.nan if x is None else x for x in xs], dtype=np.float32)


def position_chart(ex: dict, height: int | None = None) -> go.Figure:
    """Dumbbell per sentence: the real score (blue) and the score with every sentence given the
    same, neutral position row (orange); the line between them is what position adds (or
    takes away). Unscored sentences are left out; ★ = selected."""
    real, neutral = _floats(ex["scores"]), _floats(ex["position_score"])
    shown = np.flatnonzero(~np.isnan(real))
    labels = np.array([("★ " if i in ex["selected"] else "") + f"{i + 1}" for i in shown], dtype=object)
    text = np.array([plotly_text(preview(ex["sentences"][i], 60)) for i in shown], dtype=object)
    gap = np.full(3 * len(shown), np.nan, dtype=np.float32)  # x: real, neutral, gap per sentence
    gap[0::3], gap[1::3] = real[shown], neutral[shown]
    fig = go.Figure([
        go.Scatter(x=gap, y=np.repeat(labels, 3), mode="lines", line=dict(color=LIGHT_GREY, width=3),
                   hoverinfo="skip", showlegend=False),
        go.Scatter(x=neutral[shown], y=labels, mode="markers", name="position neutralised",
                   marker=dict(color=NEUTRAL, size=10), customdata=text,
                   hovertemplate="sentence %{y}: %{customdata}<br>neutral position: %{x:.3f}<extra></extra>"),
        go.Scatter(x=real[shown], y=labels, mode="markers", name="real score",
                   marker=dict(color=REAL, size=10), customdata=text,
                   hovertemplate="sentence %{y}: %{customdata}<br>real score: %{x:.3f}<extra></extra>"),
    ])
    fig.update_layout(title="Score with and without its position", height=height or max(260, 24 * len(shown) + 110),
                      margin=dict(l=10, r=10, t=80, b=10),
                      legend=dict(orientation="h", x=1, xanchor="right", y=1.0, yanchor="bottom"))
    fig.update_xaxes(title="score", range=[0, 1])
    fig.update_yaxes(title="sentence", type="category", autorange="reversed")
    return fig


def position_reading(ex: dict, i: int, unseen: frozenset = frozenset()) -> str:
    """One line for people: ``sentence 4: score 0.61, 0.22 with a neutral position → mostly position``.
    ``unseen``: sentences past the input the scorer was trained on (``Summary.past_training``):
    their position share is said to be partly extrapolated (studies/positions.py measures how much)."""
    s, p = ex["scores"][i], ex["position_score"][i]
    if s is None:
        return f"sentence {i + 1}: not scored"
    if i in unseen:
        return (f"sentence {i + 1}: score {s:.2f}, {p:.2f} with a neutral position; it lies past the input the "
                f"scorer was trained on (each document's first window), where sentence positions were rarely or never "
                f"seen, so its position share ({s - p:+.2f}) is partly extrapolated: read it with care")
    d = s - p
    if abs(d) < 0.05:
        verdict = "its position barely matters: the score comes from its content"
    elif d > 0:
        verdict = ("mostly its position" if d > 0.5 * s else "partly its position") + f" (+{d:.2f})"
    else:
        verdict = f"its position holds it back ({d:+.2f}): the content alone would score higher"
    return f"sentence {i + 1}: score {s:.2f}, {p:.2f} with a neutral position → {verdict}"


def word_highlight_html(text: str, spans, weights, target: tuple[int, int] | None = None,
                        min_share: float = 0.02) -> str:
    """The document with each word's background by its weight: blue raised the score, orange
    lowered it, opacity |weight| / max |weight|; the explained sentence (character span
    ``target``) underlined. Words under ``min_share`` of the maximum stay plain (smaller HTML).
    ``spans`` [W, 2] character spans into ``text``, ``weights`` [W]. Every piece of text is escaped."""
    spans = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    w = np.asarray(weights, dtype=np.float32)
    top = float(np.abs(w).max()) if w.size else 0.0
    top = top if top > 0 else 1.0
    out, pos = [], 0
    for (a, b), x in zip(spans.tolist(), w.tolist()):
        out.append(html.escape(text[pos:a]))
        word = html.escape(text[a:b])
        inside = target is not None and target[0] <= a < target[1]
        share = abs(x) / top
        style = f"border-bottom: 2px solid {REAL};" if inside else ""
        if share >= min_share:
            r, g, bl = RAISED if x > 0 else LOWERED
            style += f"background: rgba({r},{g},{bl},{0.08 + 0.72 * share:.2f}); border-radius: 2px;"
        if style:
            out.append(f'<span style="{style}" title="{x:+.4f}">{word}</span>')
        else:
            out.append(word)
        pos = b
    out.append(html.escape(text[pos:]))
    return ('<div style="white-space: pre-wrap; line-height: 1.7; font-size: 0.95em;">' + "".join(out) + "</div>")


def legend_html() -> str:
    g, r = RAISED, LOWERED
    chip = 'display:inline-block; padding:0 6px; border-radius:2px; margin-right:8px;'
    return (f'<span style="{chip} background: rgba({g[0]},{g[1]},{g[2]},0.6);">raised the score</span>'
            f'<span style="{chip} background: rgba({r[0]},{r[1]},{r[2]},0.6);">lowered the score</span>'
            f'<span style="{chip} border-bottom: 2px solid {REAL};">the explained sentence</span>')


def numbers_html(verdict: str, figures: list[tuple[str, str]], heading: str = "", items: list[str] = ()) -> str:
    """A slide's numbers over a page's words (the Why contrast's): the verdict, the figures as
    label: value in one line, and a short list under ``heading``; every text escaped."""
    row = " · ".join(f"{html.escape(label)}: <b>{html.escape(value)}</b>" for label, value in figures)
    listed = (f"<p>{html.escape(heading)}: " + "; ".join(html.escape(x) for x in items) + "</p>") if items else ""
    return f"<div style='font-size:1.1em'><p>{html.escape(verdict)}</p><p>{row}</p>{listed}</div>"


def top_words(text: str, spans, weights, n: int = 5) -> tuple[list[str], list[str]]:
    """The n words that raised the score most and the n that lowered it most (plain strings; a
    word repeated in the document is listed once, at its strongest, with "×m" when m of its
    occurrences are on that side)."""
    w = np.asarray(weights, dtype=np.float32)
    word = [text[a:b] for a, b in np.asarray(spans, dtype=np.int64).reshape(-1, 2).tolist()]

    def side(sign: int) -> list[str]:
        order = [j for j in np.argsort(-sign * w) if sign * w[j] > 0]
        counts: dict[str, int] = {}
        for j in order:
            counts[word[j]] = counts.get(word[j], 0) + 1
        return [f"{x} ×{c}" if c > 1 else x for x, c in list(counts.items())[:n]]

    return side(1), side(-1)


def rollout_heatmap(trace, r: np.ndarray, *, hide_special: bool = False,
                    sentence_range: tuple[int, int] | None = None, colorscale: str = "Viridis",
                    scale: str = "log", height: int = 720, title: str | None = None, what: str = "draw",
                    axes: tuple[str, str] = ("top-layer token", "input token (drawn from)")) -> go.Figure:
    """Rolled-out attention R [T, T] (Abnar & Zuidema 2020) as a token × token map, like the
    one-head view (``viz.common.weight_map``: the hover shows the weight): row = a top-layer
    token, column = the input token it draws from. Any other token × token map of shares too
    (ALTI, value zeroing): ``title`` (``{n}`` = tokens shown), ``what`` the hover calls a value,
    ``axes`` the rows' and columns' names (hover and axis titles)."""
    index = token_index(trace, hide_special, sentence_range)
    labels = token_labels(trace.tokens, index)
    m = np.ascontiguousarray(r[np.ix_(index, index)], dtype=np.float32)  # [n, n]
    fig = go.Figure(go.Heatmap(x=labels, y=labels, **weight_map(m, colorscale, scale, what),
                               hovertemplate=f"{axes[0]} %{{y}}<br>{axes[1]} %{{x}}<br>{what} {WEIGHT_HOVER}"
                                             "<extra></extra>"))
    title = title or f"Attention rollout over all {trace.bert_attention.shape[0]} layers: {{n}} × {{n}} tokens"
    fig.update_layout(title=title.format(n=len(index)),
                      height=height, margin=dict(l=130, r=10, t=60, b=130), shapes=_sentence_lines(trace, index))
    ticks = dict(type="category", nticks=40, automargin=False)
    fig.update_xaxes(title=axes[1], tickangle=-90, **ticks)
    fig.update_yaxes(title=axes[0], autorange="reversed", **ticks)
    return fig


def sentence_draw_heatmap(trace, draw: np.ndarray, sentences: np.ndarray, *, colorscale: str = "Viridis",
                          scale: str = "log", height: int | None = None) -> go.Figure:
    """[S_w, T] rollout draw of each sentence's pooled vector over the window's input tokens."""
    labels = token_labels(trace.tokens, np.arange(len(trace.tokens)))
    seen: dict[int, int] = {}
    rows = []
    for i in sentences:  # a sentence longer than a window is fed as parts: unique labels
        seen[int(i)] = seen.get(int(i), 0) + 1
        rows.append(sentence_label(trace, int(i), 28) + (f" (part {seen[int(i)]})" if seen[int(i)] > 1 else ""))
    m = np.asarray(draw, dtype=np.float32)
    fig = go.Figure(go.Heatmap(x=labels, y=np.array(rows, dtype=object), **weight_map(m, colorscale, scale, "draw"),
                               hovertemplate="sentence %{y}<br>input %{x}<br>draw " + WEIGHT_HOVER
                                             + "<extra></extra>"))
    fig.update_layout(title="What each sentence's vector draws from (mean of its tokens' rollout rows)",
                      height=height or max(260, 22 * len(rows) + 200), margin=dict(l=10, r=10, t=50, b=130))
    fig.update_xaxes(title="input token", type="category", tickangle=-90, nticks=40)
    fig.update_yaxes(title="sentence", type="category", autorange="reversed")
    return fig


def method_curves(c: dict, labels: dict[str, str], height: int | None = None) -> go.Figure:
    """Deletion and insertion curves of each attribution method (analysis.attribution.curves ``c``):
    left, the score's drop as the top words are set to [MASK]; right, its rise as they are restored
    to a document of [MASK]s; random orders dashed (the floor). Higher is more faithful on both."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=("Deletion: the score's drop", "Insertion: the score's rise"),
                        horizontal_spacing=0.12)
    x = [100 * f for f in c["fractions"]]
    for m, v in c["methods"].items():
        name = f"{labels.get(m, m)} (AOPC {v['aopc_deletion']:.3f} / {v['aopc_insertion']:.3f})"
        style = dict(color=METHOD_COLORS.get(m, METHOD_COLORS["random"]), dash="dash" if m == "random" else "solid")
        for col, key in ((1, "deletion"), (2, "insertion")):
            fig.add_trace(go.Scatter(x=x, y=v[key], mode="lines+markers", name=name, line=style, legendgroup=m,
                                     showlegend=col == 1, hovertemplate=f"{labels.get(m, m)}: %{{y:.3f}} at %{{x}}% "
                                     "of the words<extra></extra>"), row=1, col=col)
    fig.update_xaxes(title_text="% of the words (most attributed first)", ticksuffix="%")
    fig.update_yaxes(title_text="score change", row=1, col=1)
    fig.update_layout(height=height or 360, margin=dict(l=50, r=20, t=40, b=40),
                      legend=dict(orientation="h", y=-0.3))
    return fig
