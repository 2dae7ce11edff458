"""The sentence encoder (PreSumm's TransformerInterEncoder, Liu & Lapata 2019, §3.2): its
attention between sentence vectors, next to the sentence scores it produces."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .common import input_labels, level_colorbar, quantize
from .palette import STATUS_COLORS


def inter_matrix(trace, layer: int, head: int | None) -> np.ndarray:
    a = trace.inter_attention[layer].astype(np.float32)   # [H2, S, S]
    return a.mean(0) if head is None else a[head]


def inter_heatmap(trace, layer: int, head: int | None, *, colorscale: str = "Viridis",
                  height: int | None = None, what: str = "weight", title: str | None = None) -> go.Figure:
    """Sentence × sentence attention of one inter-encoder head (or the head mean), with the
    sentence scores as bars on the same rows. Labels: summary sentence number + preview, ★ = selected.
    Any other sentence × sentence map in ``trace.inter_attention`` too: ``what`` names its values
    in the hover, ``title`` replaces the layer and head in the title."""
    a = inter_matrix(trace, layer, head)                   # [S, S]
    sents = [int(i) for i in trace.input_sentences]
    labels = input_labels(trace, 30)
    z, vmax = quantize(a)
    scores = np.array([trace.summary.scores[i] or 0.0 for i in sents], dtype=np.float32)
    colors = [STATUS_COLORS["selected"] if i in trace.summary.selected else STATUS_COLORS["below-k"] for i in sents]
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, column_widths=[0.78, 0.22],
                        horizontal_spacing=0.02)
    fig.add_trace(go.Heatmap(z=z, x=labels, y=labels, customdata=a, colorscale=colorscale, zmin=0, zmax=255,
                             colorbar=level_colorbar(vmax, title=what.split()[0]),
                             hovertemplate="query %{y}<br>key %{x}<br>" + what + " %{customdata:.3f}<extra></extra>"),
                  row=1, col=1)
    fig.add_trace(go.Bar(x=scores, y=labels, orientation="h", marker_color=colors,
                         hovertemplate="%{y}<br>score %{x:.3f}<extra></extra>", showlegend=False), row=1, col=2)
    name = "mean of heads" if head is None else f"head {head + 1}"
    fig.update_layout(title=f"Sentence encoder: {title or f'layer {layer + 1}, {name}'} (★ = selected)",
                      height=height or max(420, 28 * len(sents) + 200), margin=dict(l=10, r=10, t=50, b=10))
    fig.update_xaxes(type="category", tickangle=-60, row=1, col=1)
    fig.update_xaxes(title="score", range=[0, 1], row=1, col=2)
    fig.update_yaxes(type="category", autorange="reversed", row=1, col=1)
    return fig
