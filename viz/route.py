"""The route from words to a sentence's score as a layered graph (issue 61): columns from BERT's
input tokens (left) up its layers, the sentences at the encoder's input and after each of its
layers, to the score (right); an edge's width is its flow, and every edge answers a hover (a
marker at its middle) with both ends, its share and its flow."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .common import plotly_text
from .palette import BLUE, DARK_GREY, ORANGE


def route_figure(route, tokens, sentence_of_part, L: int, L2: int, title: str) -> go.Figure:
    """``route``: analysis.route.Route; ``tokens``: the window's tokens; ``sentence_of_part``: the
    document sentence (0-based) of each encoder part."""
    def column(node):
        stage, layer, _ = node
        return layer if stage == "bert" else L + 1 + layer  # BERT 0 … L, then the encoder's 0 … L2

    def label(node):
        stage, layer, i = node
        if stage == "bert":
            return f"{tokens[i]} ({i + 1})"
        return f"sentence {sentence_of_part[i] + 1}"

    by_column: dict[int, list] = {}
    for node in route.nodes:
        by_column.setdefault(column(node), []).append(node)
    y = {}
    for c, ns in by_column.items():
        for rank, node in enumerate(sorted(ns, key=lambda n: n[2])):
            y[node] = -rank + (len(ns) - 1) / 2  # centred
    fig = go.Figure()
    top = max((e[3] for e in route.edges), default=1.0) or 1.0
    for lo, hi, width in ((0.0, 0.2, 1), (0.2, 0.5, 2.5), (0.5, 1.01, 5)):  # three widths: one trace each
        xs, ys = [], []
        for a, b, share, flow in route.edges:
            if lo <= flow / top < hi:
                xs += [column(b), column(a), None]
                ys += [y[b], y[a], None]
        if xs:
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=BLUE, width=width), hoverinfo="skip",
                                     showlegend=False))
    if route.edges:
        fig.add_trace(go.Scatter(
            x=np.array([(column(a) + column(b)) / 2 for a, b, _, _ in route.edges], dtype=np.float32),
            y=np.array([(y[a] + y[b]) / 2 for a, b, _, _ in route.edges], dtype=np.float32), mode="markers",
            marker=dict(size=6, color=BLUE, opacity=0.35), showlegend=False,
            customdata=np.array([[plotly_text(label(b)), plotly_text(label(a)), s, f] for a, b, s, f in route.edges],
                                dtype=object),
            hovertemplate="%{customdata[0]} → %{customdata[1]}<br>share %{customdata[2]:.3f} of the upper node, "
                          "flow %{customdata[3]:.3f} of the score<extra></extra>"))
    nodes = list(route.nodes)
    fig.add_trace(go.Scatter(
        x=np.array([column(n) for n in nodes], dtype=np.float32), y=np.array([y[n] for n in nodes], dtype=np.float32),
        mode="markers+text", text=[plotly_text(label(n)) for n in nodes], textposition="middle left",
        marker=dict(size=[6 + 14 * min(1.0, route.nodes[n]) for n in nodes],
                    color=[ORANGE if n[0] == "enc" else DARK_GREY for n in nodes]),
        customdata=np.array([[plotly_text(label(n)), route.nodes[n]] for n in nodes], dtype=object),
        hovertemplate="%{customdata[0]}: flow %{customdata[1]:.3f} of the score<extra></extra>", showlegend=False))
    ticks = list(range(L + 2 + L2))
    names = ["BERT input"] + [f"BERT {l}" for l in range(1, L + 1)] + ["encoder input"] + \
            [f"encoder {l}" for l in range(1, L2 + 1)]
    height = max(360, 26 * max((len(v) for v in by_column.values()), default=1) + 120)
    fig.update_layout(title=title, height=height, margin=dict(l=10, r=10, t=60, b=10))
    fig.update_xaxes(tickvals=ticks, ticktext=names, range=[-1.2, L + 1.5 + L2], title="from the words (left) to the score")
    fig.update_yaxes(visible=False)
    return fig
