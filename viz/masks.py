"""Masks and positions: what tells attention which tokens/sentences exist and where they are."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .common import input_labels, to_numpy, token_labels


def strip(values, labels, title: str, *, colorscale="Blues", zmin=None, zmax=None,
          value_name: str = "value", height: int = 170) -> go.Figure:
    """A 1 × n heatmap (a vector laid out along the tokens or sentences)."""
    v = to_numpy(values)
    small_ints = v.dtype == bool or (np.issubdtype(v.dtype, np.integer) and v.min(initial=0) >= 0 and v.max(initial=0) <= 255)
    v = v.astype(np.uint8) if small_ints else v.astype(np.float32)
    fig = go.Figure(go.Heatmap(z=v[None, :], x=labels, y=np.array([value_name], dtype=object),
                               colorscale=colorscale, zmin=zmin, zmax=zmax,
                               hovertemplate="%{x}<br>" + value_name + " = %{z}<extra></extra>"))
    fig.update_layout(title=title, height=height, margin=dict(l=10, r=10, t=40, b=10))
    fig.update_xaxes(type="category", showticklabels=len(labels) <= 80, tickangle=-90)
    return fig


def token_mask_strip(trace) -> go.Figure:
    """``attention_mask``: 1 = real token, 0 = padding (one document, so no padding here)."""
    labels = token_labels(trace.tokens, range(len(trace.tokens)))
    return strip(trace.token_mask, labels, "Token padding mask (1 = real token)",
                 zmin=0, zmax=1, value_name="mask")


def extended_mask_strip(trace) -> go.Figure:
    """``(1 - mask) × -10000``, added to every row of the attention logits."""
    labels = token_labels(trace.tokens, range(len(trace.tokens)))
    return strip(trace.extended_mask, labels, "Extended additive mask (0 = keep, −10000 = blocked)",
                 colorscale="Reds_r", zmin=-10000, zmax=0, value_name="added")


def extended_mask_matrix(trace, max_tokens: int = 512) -> go.Figure:
    """The additive mask as the query × key matrix it really is: the [T] vector broadcast over rows."""
    m = to_numpy(trace.extended_mask)[:max_tokens]
    z = np.broadcast_to(m[None, :], (len(m), len(m))).astype(np.int16)   # 0 / -10000 fit in int16
    labels = token_labels(trace.tokens, range(len(m)))
    fig = go.Figure(go.Heatmap(z=z, x=labels, y=labels, colorscale="Reds_r", zmin=-10000, zmax=0,
                               hovertemplate="query %{y}<br>key %{x}<br>added %{z}<extra></extra>"))
    fig.update_layout(title="Extended mask broadcast over queries (every row is the same)", height=420,
                      margin=dict(l=10, r=10, t=40, b=10))
    fig.update_xaxes(type="category", showticklabels=False)
    fig.update_yaxes(type="category", showticklabels=False, autorange="reversed")
    return fig


def _sentence_axis(trace) -> np.ndarray:
    return input_labels(trace, 24)


def cls_mask_strip(trace) -> go.Figure:
    return strip(trace.cls_mask, _sentence_axis(trace), "[CLS] mask (1 = a real sentence)",
                 zmin=0, zmax=1, value_name="mask_cls")


def inter_mask_matrix(trace) -> go.Figure:
    """The sentence encoder's mask (``~mask_cls``) as the S × S key mask it applies: True = blocked."""
    m = to_numpy(trace.inter_mask).astype(np.uint8)
    z = np.broadcast_to(m[None, :], (len(m), len(m))).astype(np.uint8)
    labels = _sentence_axis(trace)
    fig = go.Figure(go.Heatmap(z=z, x=labels, y=labels, colorscale="Reds", zmin=0, zmax=1,
                               hovertemplate="query %{y}<br>key %{x}<br>masked %{z}<extra></extra>"))
    fig.update_layout(title="Inter-encoder mask (1 = masked key sentence)", height=360,
                      margin=dict(l=10, r=10, t=40, b=10))
    fig.update_xaxes(type="category", tickangle=-60)
    fig.update_yaxes(type="category", autorange="reversed")
    return fig


def segment_strip(trace) -> go.Figure:
    """Interval segment ids (BertSum, Liu & Lapata 2019 §3): alternating 0/1 per sentence, per token."""
    labels = token_labels(trace.tokens, range(len(trace.tokens)))
    return strip(trace.segment_ids, labels, "Interval segment ids (E_A = 0 / E_B = 1)",
                 colorscale=[[0, "#fdd49e"], [1, "#2b8cbe"]], zmin=0, zmax=1, value_name="segment")


def pe_table_heatmap(trace, n: int | None = None) -> go.Figure:
    """The sinusoidal table PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...)
    (Vaswani et al. 2017, §3.5); rows 0..S-1 are the ones added to this document's sentences (boxed)."""
    S = len(trace.input_sentences)
    n = n or max(64, S + 8)
    table = trace.pe_table[:n]                             # [n, D] float32
    fig = go.Figure(go.Heatmap(z=table.astype(np.float32), colorscale="RdBu", zmin=-1, zmax=1,
                               hovertemplate="position %{y}<br>dimension %{x}<br>PE %{z:.3f}<extra></extra>"))
    fig.add_shape(type="rect", x0=-0.5, x1=table.shape[1] - 0.5, y0=-0.5, y1=S - 0.5,
                  line=dict(color="black", width=2))
    fig.add_annotation(x=table.shape[1] - 1, y=S - 0.5, text=f"rows added to the {S} sentences",
                       showarrow=False, xanchor="right", yanchor="top", bgcolor="rgba(255,255,255,0.8)")
    fig.update_layout(title=f"Sinusoidal positional encoding, positions 0–{n - 1} × {table.shape[1]} dimensions",
                      height=420, margin=dict(l=10, r=10, t=40, b=10))
    fig.update_xaxes(title="dimension")
    fig.update_yaxes(title="sentence position", autorange="reversed")
    return fig


def sentence_pe_heatmap(trace) -> go.Figure:
    pe = to_numpy(trace.sentence_pe).astype(np.float32)
    fig = go.Figure(go.Heatmap(z=pe, y=_sentence_axis(trace), colorscale="RdBu", zmin=-1, zmax=1,
                               hovertemplate="%{y}<br>dimension %{x}<br>PE %{z:.3f}<extra></extra>"))
    fig.update_layout(title="Rows added to this document's sentence vectors", height=max(240, 22 * len(pe) + 90),
                      margin=dict(l=10, r=10, t=40, b=10))
    fig.update_yaxes(type="category", autorange="reversed")
    return fig


def position_embedding_heatmap(trace) -> go.Figure:
    """BERT's learned absolute position embeddings (Devlin et al. 2019, Fig. 2), rows 0..T-1."""
    pos = to_numpy(trace.position_embeddings).astype(np.float32)     # [T, D]
    lim = float(np.abs(pos).max()) or 1.0
    fig = go.Figure(go.Heatmap(z=pos, colorscale="RdBu", zmin=-lim, zmax=lim,
                               hovertemplate="position %{y}<br>dimension %{x}<br>%{z:.3f}<extra></extra>"))
    fig.update_layout(title=f"BERT learned position embeddings, positions 0–{len(pos) - 1}", height=460,
                      margin=dict(l=10, r=10, t=40, b=10))
    fig.update_xaxes(title="dimension")
    fig.update_yaxes(title="token position", autorange="reversed")
    return fig
