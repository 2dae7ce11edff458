"""A class's answers to a lesson's question (issue 49): counts in, a Plotly figure out. Before the
reveal only the class's answers; after it the model's answer is marked by a symbol (✓ or ★) and a
hatched bar, never by colour alone. Also the grid a student clicks to answer "which head?"."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.common import plotly_text, preview
from viz.palette import BLACK, BLUE, ORANGE, TEXT

OUTLINE = dict(color=BLACK, width=0.5)


def _bars(labels: list[str], counts: np.ndarray, marked: list[bool], title: str, mark: str, height=None) -> go.Figure:
    """Horizontal bars, one per answer (top to bottom); ``marked`` bars (the model's answer) in
    orange, hatched and named with ``mark``."""
    counts = np.asarray(counts, dtype=np.float32)
    names = np.array([f"{mark} {label}" if m else label for label, m in zip(labels, marked)], dtype=object)
    fig = go.Figure(go.Bar(
        x=counts, y=names, orientation="h", text=[f"{int(c)}" for c in counts], textposition="outside",
        marker=dict(color=[ORANGE if m else BLUE for m in marked],
                    pattern=dict(shape=["/" if m else "" for m in marked], fgcolor=BLACK), line=OUTLINE),
        hovertemplate="%{y}: %{x} answers<extra></extra>", showlegend=False))
    fig.update_layout(title=title, height=height or max(220, 30 * len(labels) + 110), margin=dict(l=10, r=40, t=60, b=10))
    top = max(1.0, float(counts.max(initial=0)))
    fig.update_xaxes(title="students", range=[0, top * 1.2], dtick=max(1, int(np.ceil(top / 6))))  # whole students
    fig.update_yaxes(type="category", autorange="reversed")
    return fig


def choice_chart(counts, options, right=None) -> go.Figure:
    """How many students picked each option; ``right`` (after the reveal): the right options' indices."""
    right = set(right or ())
    return _bars([f"{chr(65 + i)}. {plotly_text(preview(o, 50))}" for i, o in enumerate(options)], counts,
                 [i in right for i in range(len(options))],
                 "The class's answers" + (" (✓ = right)" if right else ""), "✓")


def sentence_chart(counts, sentences, model_pick=None) -> go.Figure:
    """How many students picked each sentence (those someone picked, and the model's), in document
    order; ``model_pick`` (after the reveal): the model's sentences, marked ★."""
    counts = np.asarray(counts)
    pick = set(model_pick or ())
    shown = [i for i in range(len(counts)) if counts[i] > 0 or i in pick] or [0]
    return _bars([f"{i + 1}. {plotly_text(preview(sentences[i], 40))}" for i in shown], counts[shown],
                 [i in pick for i in shown], "Sentences the class picked" + (" (★ = the model's)" if pick else ""), "★")


def head_chart(counts: np.ndarray, right=None, model: str = "BERT") -> go.Figure:
    """A layer × head map of how many students named each head; ``right`` (after the reveal): the
    right heads, outlined and marked ✓ in their cell."""
    L, H = counts.shape
    right = set(map(tuple, right or ()))
    text = np.array([[("✓ " if (l, h) in right else "") + (f"{int(counts[l, h])}" if counts[l, h] else "")
                      for h in range(H)] for l in range(L)], dtype=object)
    fig = go.Figure(go.Heatmap(
        z=np.asarray(counts, dtype=np.float32), x=[f"{h + 1}" for h in range(H)], y=[f"{l + 1}" for l in range(L)],
        text=text, texttemplate="%{text}", colorscale="Blues", zmin=0, colorbar=dict(title="students"),
        hovertemplate="layer %{y}, head %{x}: %{z} answers<extra></extra>", xgap=1, ygap=1))
    for l, h in right:
        fig.add_shape(type="rect", x0=h - 0.5, x1=h + 0.5, y0=l - 0.5, y1=l + 0.5, line=dict(color=ORANGE, width=3))
    fig.update_layout(title=f"Heads of {model} the class named" + (" (✓ = right)" if right else ""),
                      height=max(240, 40 * L + 120), margin=dict(l=10, r=10, t=60, b=10))
    fig.update_xaxes(title="head", type="category")
    fig.update_yaxes(title="layer", type="category", autorange="reversed")
    return fig


def number_chart(values, answer=None, tolerance=0.0, unit: str = "", low: float = 0.0, high: float = 100.0,
                 bins: int = 10) -> go.Figure:
    """The spread of the class's numbers: ``bins`` equal bins over the question's range (low to
    high: 0-10, 10-20 … for a share), so answers far apart never share a bar; after the reveal, the
    right range as a band between dotted lines and the answer as a dashed line with its value."""
    values = np.asarray(values, dtype=np.float64)
    size = (high - low) / bins
    fig = go.Figure(go.Histogram(x=values, marker=dict(color=BLUE, line=OUTLINE), name="the class",
                                 xbins=dict(start=low, end=high + size * 1e-9, size=size),
                                 hovertemplate=f"%{{x}}{plotly_text(unit)}: %{{y}} answers<extra></extra>"))
    if answer is not None:
        fig.add_vrect(x0=answer - tolerance, x1=answer + tolerance, fillcolor=ORANGE, opacity=0.25,
                      line=dict(color=ORANGE, width=1, dash="dot"))
        fig.add_vline(x=answer, line=dict(color=TEXT, width=2, dash="dash"),
                      annotation_text=f"✓ {answer:g}{plotly_text(unit)}" + (f" ± {tolerance:g}" if tolerance else ""))
    fig.update_layout(title="The class's numbers" + (" (✓ = the answer)" if answer is not None else ""),
                      height=300, margin=dict(l=10, r=10, t=60, b=10), bargap=0.05, showlegend=False)
    fig.update_xaxes(title=f"answer{f' ({plotly_text(unit)})' if unit else ''}", range=[low, high])
    fig.update_yaxes(title="students")
    return fig
