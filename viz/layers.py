"""Where the choice is made (issue 61): each sentence's score read at every stage of the model,
BERT's layers (through the lens) then the sentence encoder's, one line per sentence; the selected
sentences drawn solid with a ★ in their name, the others dotted (told apart without colour)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .common import plotly_text, preview
from .palette import BLUE, MID_GREY, ORANGE


def score_by_layer(sentences: list[str], selected: list[int], bert: list[list], inter: list[list],
                   lens: str = "raw") -> go.Figure:
    """``bert`` [L][S] and ``inter`` [L2 + 1][S] sentence scores (None: not scored) → lines over
    the stages "BERT 1" … "BERT L", "encoder input", "encoder 1" … (the last: the model's score)."""
    stages = [f"BERT {l + 1}" for l in range(len(bert))] + ["encoder input"] + \
             [f"encoder {l}" for l in range(1, len(inter))]
    fig = go.Figure()
    for i, s in enumerate(sentences):
        y = [row[i] for row in bert] + [row[i] for row in inter]
        if all(v is None for v in y):
            continue
        chosen = i in selected
        fig.add_trace(go.Scatter(
            x=stages, y=np.array([np.nan if v is None else v for v in y], dtype=np.float32), mode="lines+markers",
            name=f"{i + 1}{' ★' if chosen else ''}", line=dict(color=BLUE if chosen else MID_GREY,
                                                               width=3 if chosen else 1, dash=None if chosen else "dot"),
            marker=dict(symbol="star" if chosen else "circle", size=9 if chosen else 5),
            customdata=np.array([plotly_text(preview(s, 60))] * len(stages), dtype=object),
            hovertemplate="sentence %{fullData.name}: %{customdata}<br>%{x}: score %{y:.3f}<extra></extra>"))
    fig.add_vline(x=len(bert) - 0.5, line=dict(color=ORANGE, dash="dash", width=1))
    fig.update_layout(title=f"Each sentence's score read after each stage (BERT's layers {lens}, then the sentence "
                            "encoder's; the last is the model's score; ★ selected)",
                      height=460, margin=dict(l=10, r=10, t=60, b=10), legend=dict(title="sentence"))
    fig.update_xaxes(title="read after", type="category")
    fig.update_yaxes(title="score", range=[0, 1])
    return fig
