"""Figures of a What-if comparison (``analysis/compare.py``, ``analysis/alignment.py``): how much each head's attention
changed between document A and its edited copy B, and activation patching's fraction of a
sentence's score change restored, per BERT head (a layer × head map) and per component (bars).

NumPy in, Plotly out; numbers reach Plotly as float32 arrays; layers and heads labelled 1-based.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz.heads import head_map

CHANGE_TITLE = "How much each head's attention changed from A to B (mean total-variation distance on aligned rows)"
PATCH_TITLE = "Fraction of the score change restored by taking it from A (activation patching)"
PATCH_CAPTION = ("Activation patching (causal mediation analysis: Vig et al. 2020; Meng et al. 2022): B is run "
                 "with one component taken from A; fraction restored = (s_patched − s_B) / (s_A − s_B), "
                 "1 = the whole change, 0 = none. Fractions need not add up (components interact) and can "
                 "fall outside 0-1; one sentence of one document.")
GROUPS = {"inter.pe": "position row", "vector": "sentence vector", "bert.embed": "BERT layers",
          "bert.resid_post": "BERT layers", "inter.resid_post": "encoder layers", "inter.attn.z": "encoder heads",
          "all": "all", "none": "none"}
from .palette import DARK_GREY, GROUP_COLORS


def _grid(values: np.ndarray, part: str, name: str, coloraxis: str) -> go.Heatmap:
    L, H = values.shape
    return go.Heatmap(z=np.asarray(values, dtype=np.float32), x=np.array([str(h + 1) for h in range(H)], dtype=object),
                      y=np.array([str(layer + 1) for layer in range(L)], dtype=object), coloraxis=coloraxis,
                      texttemplate="%{z:.2f}", textfont=dict(size=9), name=part,
                      hovertemplate=f"{part} layer %{{y}}, head %{{x}}<br>{name} %{{z:.4f}}<extra></extra>")


def change_maps(bert: np.ndarray, inter: np.ndarray) -> go.Figure:
    """Attention change per head, BERT [L, H] and sentence encoder [L2, H2], side by side on one
    colour scale from 0 (the same attention) to the largest change."""
    bert, inter = np.asarray(bert, dtype=np.float32), np.asarray(inter, dtype=np.float32)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.08, column_widths=[bert.shape[1], max(inter.shape[1], 4)],
                        subplot_titles=["BERT", "Sentence encoder"])
    fig.add_trace(_grid(bert, "BERT", "change", "coloraxis"), row=1, col=1)
    fig.add_trace(_grid(inter, "Sentence encoder", "change", "coloraxis"), row=1, col=2)
    fig.update_xaxes(type="category", title="head")
    fig.update_yaxes(type="category", autorange="reversed")
    fig.update_yaxes(title="layer", row=1, col=1)
    top = float(max(bert.max(initial=0.0), inter.max(initial=0.0))) or 1.0
    fig.update_layout(title=CHANGE_TITLE, height=160 + 42 * max(bert.shape[0], inter.shape[0]),
                      margin=dict(l=10, r=10, t=80, b=10),
                      coloraxis=dict(colorscale="Viridis", cmin=0.0, cmax=top,
                                     colorbar=dict(title=dict(text="TV distance"), thickness=12)))
    return fig


def head_patching_map(fractions: np.ndarray, sentence: str = "") -> go.Figure:
    """Fraction restored by patching each BERT head [L, H] (orange-blue, centred on 0; NaN = the
    score did not change)."""
    title = f"{PATCH_TITLE}: BERT heads" + (f" · {sentence}" if sentence else "")
    return head_map(np.asarray(fractions, dtype=np.float32), title, part="BERT", name="fraction restored",
                    diverging=True)


def component_bars(labels: np.ndarray, fractions: np.ndarray, kinds: np.ndarray, sentence: str = "") -> go.Figure:
    """One bar per component (``labels`` [N] text, ``fractions`` [N], ``kinds`` [N] the
    ``analysis.patching.PATCH_KINDS`` key of each), coloured by group: position row, sentence
    vector, BERT layers, encoder layers and heads."""
    labels, kinds = np.asarray(labels, dtype=object), np.asarray(kinds, dtype=object)
    fractions = np.asarray(fractions, dtype=np.float32)
    groups = np.array([GROUPS.get(k, k) for k in kinds], dtype=object)
    fig = go.Figure()
    for group, color in GROUP_COLORS.items():
        m = groups == group
        if m.any():
            fig.add_trace(go.Bar(x=fractions[m], y=labels[m], orientation="h", name=group, marker_color=color,
                                 hovertemplate="%{y}<br>fraction restored %{x:.3f}<extra></extra>"))
    fig.add_vline(x=0.0, line_color=DARK_GREY, line_width=1)
    fig.add_vline(x=1.0, line_dash="dot", line_color=DARK_GREY, line_width=1)
    fig.update_layout(title=PATCH_TITLE + (f" · {sentence}" if sentence else ""), barmode="overlay",
                      height=max(320, 22 * len(labels) + 160), margin=dict(l=10, r=10, t=80, b=10),
                      legend=dict(orientation="h", x=1, xanchor="right", y=1.0, yanchor="bottom"))
    fig.update_xaxes(title="fraction of the score change restored")
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=labels, autorange="reversed")
    return fig
