"""Figures of a corpus run (analysis/corpus.py's report.json): head statistics averaged over
documents with their spread, and where the selected sentences sit in the documents."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .palette import BLUE


def mean_spread_heatmap(mean, std, title: str, part: str = "BERT", colorscale: str = "Viridis") -> go.Figure:
    """A layers × heads map of a statistic's mean over the corpus; hover adds the standard
    deviation over documents (1-based layers and heads)."""
    mean, std = np.asarray(mean, dtype=np.float32), np.asarray(std, dtype=np.float32)
    L, H = mean.shape
    fig = go.Figure(go.Heatmap(
        z=mean, customdata=std, x=np.arange(1, H + 1, dtype=np.int32), y=np.arange(1, L + 1, dtype=np.int32),
        colorscale=colorscale, colorbar=dict(title=dict(text="mean"), thickness=12),
        hovertemplate="layer %{y}, head %{x}<br>mean %{z:.3f}<br>spread (sd) %{customdata:.3f}<extra></extra>"))
    fig.update_layout(title=f"{part}: {title}, mean over documents", height=120 + 40 * L,
                      margin=dict(l=10, r=10, t=40, b=10))
    fig.update_xaxes(title="head", dtick=1)
    fig.update_yaxes(title="layer", dtick=1, autorange="reversed")
    return fig


def position_histogram(counts) -> go.Figure:
    """How often each sentence position (1-based) was selected."""
    counts = np.asarray(counts, dtype=np.int32)
    fig = go.Figure(go.Bar(x=np.arange(1, len(counts) + 1, dtype=np.int32), y=counts, marker_color=BLUE,
                           hovertemplate="sentence %{x}: selected %{y} times<extra></extra>"))
    fig.update_layout(title="Position of the selected sentences in their documents", height=300,
                      margin=dict(l=10, r=10, t=40, b=10), bargap=0.1)
    fig.update_xaxes(title="sentence position (1 = first)")
    fig.update_yaxes(title="selections")
    return fig
