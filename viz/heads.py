"""Figures of heads as a whole: one value per head on a layer × head map (statistics after
Clark et al. 2019, importance after Michel et al. 2019), the two importance estimates side by
side with their agreement, the difference training made, and the scores with heads switched off.

NumPy in (``[layers, heads]`` arrays), Plotly out; numbers reach Plotly as float32 arrays.
Layers and heads are labelled 1-based.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .palette import BLUE, DIVERGING, LIGHT_BLUE, VERMILLION


def _axes(shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Category labels "1".."H" (heads, across) and "1".."L" (layers, down)."""
    L, H = shape
    return (np.array([str(h + 1) for h in range(H)], dtype=object),
            np.array([str(layer + 1) for layer in range(L)], dtype=object))


def _cells(values: np.ndarray, name: str, part: str, fmt: str, **kw) -> go.Heatmap:
    x, y = _axes(values.shape)
    z = np.asarray(values, dtype=np.float32)
    kw.setdefault("hovertemplate", f"{part} layer %{{y}}, head %{{x}}<br>{name} %{{z:.4f}}<extra></extra>")
    return go.Heatmap(z=z, x=x, y=y, texttemplate=f"%{{z:{fmt}}}", textfont=dict(size=9), name=name, **kw)


def _layout(fig: go.Figure, rows: int, title: str, height: int | None = None) -> go.Figure:
    fig.update_xaxes(type="category", title="head")
    fig.update_yaxes(type="category", title="layer", autorange="reversed")
    fig.update_layout(title=title, height=height or max(260, 120 + 42 * rows), margin=dict(l=10, r=10, t=60, b=10))
    return fig


def head_map(values: np.ndarray, title: str, *, part: str = "BERT", name: str = "value",
             colorscale: str = "Viridis", diverging: bool = False, fmt: str = ".2f") -> go.Figure:
    """values [L, H] on a layer × head grid (layer 1 on top), each cell labelled with its value.
    ``diverging``: the orange-blue scale centred on 0 (for differences)."""
    kw = dict(colorscale=DIVERGING, zmid=0.0) if diverging else dict(colorscale=colorscale)
    fig = go.Figure(_cells(values, name, part, fmt, colorbar=dict(title=dict(text=name), thickness=12), **kw))
    return _layout(fig, values.shape[0], title)


def importance_maps(gradient: np.ndarray, ablation: np.ndarray | None, *, part: str = "BERT",
                    changed: np.ndarray | None = None, agreement: dict | None = None,
                    colorscale: str = "Viridis") -> go.Figure:
    """The gradient estimate |∂L/∂ξ_h| and the exact ablation |ΔL| of one part's heads, each
    shown relative to its largest head (1 = most important), and a scatter of one against the
    other with their rank correlation. Without ``ablation``: the gradient map alone."""
    maps = [("gradient |∂L/∂ξ|", gradient)] + ([("ablation |ΔL|", ablation)] if ablation is not None else [])
    cols = len(maps) + (ablation is not None)
    fig = make_subplots(rows=1, cols=cols, horizontal_spacing=0.07,
                        column_widths=[1.0] * len(maps) + ([0.6] if ablation is not None else []),
                        subplot_titles=[f"{n} (÷ largest)" for n, _ in maps] + (["gradient vs ablation"] if cols > 2 else []))
    for c, (name, v) in enumerate(maps, 1):
        v = np.asarray(v, dtype=np.float32)
        rel = v / v.max() if v.max() > 0 else v
        fig.add_trace(_cells(rel, name, part, ".1f", customdata=v, coloraxis="coloraxis",
                             hovertemplate=f"{part} layer %{{y}}, head %{{x}}<br>{name} %{{customdata:.4g}}"
                                           "<br>÷ largest %{z:.2f}<extra></extra>"), row=1, col=c)
        fig.update_xaxes(type="category", title="head", row=1, col=c)
        fig.update_yaxes(type="category", title="layer" if c == 1 else None, autorange="reversed", row=1, col=c)
    if ablation is not None:
        L, H = gradient.shape
        labels = np.array([f"{part} {layer + 1}.{h + 1}" for layer in range(L) for h in range(H)], dtype=object)
        flip = np.zeros(L * H, dtype=bool) if changed is None else np.asarray(changed).ravel()
        for mask, name, color, symbol in ((~flip, "summary unchanged", BLUE, "circle"),
                                          (flip, "summary changes", VERMILLION, "x")):  # told apart by shape too
            if mask.any():
                fig.add_trace(go.Scatter(
                    x=np.asarray(gradient, dtype=np.float32).ravel()[mask],
                    y=np.asarray(ablation, dtype=np.float32).ravel()[mask], text=labels[mask], mode="markers",
                    name=name, marker=dict(color=color, size=7, symbol=symbol),
                    hovertemplate="%{text}<br>gradient %{x:.4g}<br>ablation %{y:.4g}<extra></extra>"), row=1, col=3)
        fig.update_xaxes(title="gradient", row=1, col=3)
        fig.update_yaxes(title="ablation", row=1, col=3)
    title = f"{part} heads: importance for the summary"
    if agreement:
        title += f" · Spearman ρ = {agreement['spearman']:.2f}, top-5 overlap {agreement['top5_overlap']:.0%}"
    fig.update_layout(title=title, coloraxis=dict(colorscale=colorscale, cmin=0, cmax=1,
                                                  colorbar=dict(title=dict(text="÷ largest"), thickness=12)),
                      height=160 + 46 * gradient.shape[0], margin=dict(l=70, r=10, t=70, b=10),
                      legend=dict(orientation="h", y=-0.2))
    return fig


def difference_maps(shipped: np.ndarray, backbone: np.ndarray, name: str, *, part: str = "BERT",
                    colorscale: str = "Viridis", fmt: str = ".2f") -> go.Figure:
    """One statistic with the shipped weights, with the unmodified backbone (one colour scale)
    and their difference (red-blue, centred on 0): which heads training changed."""
    a, b = (np.asarray(v, dtype=np.float32) for v in (shipped, backbone))
    lo, hi = float(min(a.min(), b.min())), float(max(a.max(), b.max()))
    d = a - b
    lim = float(np.abs(d).max()) or 1.0
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.09,
                        subplot_titles=["shipped weights", "unmodified backbone", "shipped − backbone"])
    for c, (v, label, axis) in enumerate(((a, "shipped", "coloraxis"), (b, "backbone", "coloraxis"),
                                          (d, "difference", "coloraxis2")), 1):
        fig.add_trace(_cells(v, f"{name} ({label})", part, fmt, coloraxis=axis), row=1, col=c)
    _layout(fig, a.shape[0], f"{part}: {name}, shipped vs backbone")
    for c in (2, 3):
        fig.update_yaxes(title=None, row=1, col=c)
    below = dict(orientation="h", thickness=10, y=-0.22, yanchor="top")  # under the maps: clear of the tick labels
    fig.update_layout(margin=dict(l=10, r=10, t=80, b=90), height=230 + 42 * a.shape[0],
                      coloraxis=dict(colorscale=colorscale, cmin=lo, cmax=hi, colorbar=dict(x=0.33, len=0.6, **below)),
                      coloraxis2=dict(colorscale=DIVERGING, cmin=-lim, cmax=lim, colorbar=dict(x=0.85, len=0.28, **below)))
    return fig


def score_comparison(labels: np.ndarray, before: np.ndarray, after: np.ndarray, *, title: str,
                     names: tuple[str, str] = ("all heads on", "heads off")) -> go.Figure:
    """Each sentence's score in two runs (all heads on and the chosen heads off, or two models;
    NaN = not scored)."""
    y = np.asarray(labels, dtype=object)
    fig = go.Figure([go.Bar(x=np.asarray(v, dtype=np.float32), y=y, orientation="h", name=name, marker_color=color,
                            hovertemplate="%{y}<br>" + name + " %{x:.3f}<extra></extra>")
                     for v, name, color in zip((before, after), names, (LIGHT_BLUE, VERMILLION))])
    fig.update_layout(title=title, barmode="group", height=max(320, 40 * len(y) + 160),
                      margin=dict(l=10, r=10, t=80, b=10),
                      legend=dict(orientation="h", x=1, xanchor="right", y=1.0, yanchor="bottom"))
    fig.update_xaxes(title="score", range=[0, 1])
    fig.update_yaxes(type="category", autorange="reversed")
    return fig
