"""Masks and positions: what tells attention which tokens/sentences exist and where they are."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .common import input_labels, to_numpy, token_labels
from .palette import BLACK, BLUE, DIVERGING, LABEL_BG, SEGMENT_COLORS, VERMILLION


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
                 colorscale=[[0, SEGMENT_COLORS[0]], [1, SEGMENT_COLORS[1]]], zmin=0, zmax=1, value_name="segment")


def pe_table_heatmap(trace, n: int | None = None) -> go.Figure:
    """The sinusoidal table PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...)
    (Vaswani et al. 2017, §3.5), rows numbered from 1 (pos = row − 1); rows 1..S are the ones added
    to this document's sentences (boxed)."""
    S = len(trace.input_sentences)
    n = n or max(64, S + 8)
    table = trace.pe_table[:n]                             # [n, D] float32
    fig = go.Figure(go.Heatmap(z=table.astype(np.float32), y=np.arange(1, len(table) + 1, dtype=np.int32),
                               colorscale=DIVERGING, zmin=-1, zmax=1,  # numbered from 1, as the rest of the app
                               hovertemplate="position %{y}<br>dimension %{x}<br>PE %{z:.3f}<extra></extra>"))
    fig.add_shape(type="rect", x0=-0.5, x1=table.shape[1] - 0.5, y0=0.5, y1=S + 0.5,
                  line=dict(color=BLACK, width=2))
    fig.add_annotation(x=table.shape[1] - 1, y=S + 0.5, text=f"rows added to the {S} sentences",
                       showarrow=False, xanchor="right", yanchor="top", bgcolor=LABEL_BG)
    fig.update_layout(title=f"Sinusoidal positional encoding<br><sup>positions 1–{n} (pos = 0–{n - 1} in the "
                            f"formula) × {table.shape[1]} dimensions</sup>",  # one line was cut in a narrow column
                      height=440, margin=dict(l=10, r=10, t=60, b=10))
    fig.update_xaxes(title="dimension")
    fig.update_yaxes(title="sentence position", autorange="reversed")
    return fig


def sentence_pe_heatmap(trace) -> go.Figure:
    pe = to_numpy(trace.sentence_pe).astype(np.float32)
    fig = go.Figure(go.Heatmap(z=pe, y=_sentence_axis(trace), colorscale=DIVERGING, zmin=-1, zmax=1,
                               hovertemplate="%{y}<br>dimension %{x}<br>PE %{z:.3f}<extra></extra>"))
    fig.update_layout(title="Rows added to this document's sentence vectors", height=max(240, 22 * len(pe) + 90),
                      margin=dict(l=10, r=10, t=40, b=10))
    fig.update_yaxes(type="category", autorange="reversed")
    return fig


def position_embedding_heatmap(trace) -> go.Figure:
    """BERT's learned absolute position embeddings (Devlin et al. 2019, Fig. 2), rows 1..T
    (position ids 0..T-1).
    A few dimensions hold values ten times the rest; the colour range is clipped at the 99th
    percentile of |value| so the typical rows show their pattern (hover: the true value)."""
    pos = to_numpy(trace.position_embeddings).astype(np.float32)     # [T, D]
    lim = float(np.percentile(np.abs(pos), 99)) or 1.0
    fig = go.Figure(go.Heatmap(z=pos, y=np.arange(1, len(pos) + 1, dtype=np.int32), colorscale=DIVERGING, zmin=-lim, zmax=lim,
                               colorbar=dict(title=dict(text=f"value<br>(clipped at ±{lim:.2f})"), thickness=12),
                               hovertemplate="position %{y}<br>dimension %{x}<br>%{z:.3f}<extra></extra>"))
    fig.update_layout(title=f"BERT learned position embeddings, positions 1–{len(pos)} (position ids 0–{len(pos) - 1})",
                      height=460,
                      margin=dict(l=10, r=10, t=40, b=10))
    fig.update_xaxes(title="dimension")
    fig.update_yaxes(title="token position", autorange="reversed")
    return fig


# ---------------------------------------------------------------- a padded batch (BertSum's training input)

def _doc_axis(n: int) -> np.ndarray:
    return np.array([f"document {b + 1}" for b in range(n)], dtype=object)


def batch_mask_heatmap(batch, which: str = "padding") -> go.Figure:
    """One of the batch's masks, one row per document: ``padding`` (attention_mask, 1 = real
    token), ``additive`` (extended mask, 0 / −10000 on the logits), ``cls`` (mask_cls, 1 = real
    sentence) or ``inter`` (the sentence encoder's ~mask_cls, 1 = masked)."""
    spec = {"padding": (batch.attention_mask, "token", "Padding mask (attention_mask): 1 = real token, 0 = padding", "Blues", 0, 1),
            "additive": (batch.extended_mask, "token", "Additive mask on BERT's attention logits: 0 = keep, −10000 = padding",
                         "Reds_r", -10000, 0),
            "cls": (batch.cls_mask, "sentence", "[CLS] mask (mask_cls): 1 = a real sentence, 0 = a padded slot", "Blues", 0, 1),
            "inter": (batch.inter_mask, "sentence", "Sentence encoder's key mask (~mask_cls): 1 = masked", "Reds", 0, 1)}
    m, unit, title, colorscale, zmin, zmax = spec[which]
    z = m.astype(np.float32) if which == "additive" else m.astype(np.uint8)
    fig = go.Figure(go.Heatmap(z=z, x=np.arange(1, z.shape[1] + 1, dtype=np.int32), y=_doc_axis(len(m)),
                               colorscale=colorscale, zmin=zmin, zmax=zmax,
                               hovertemplate="%{y}, " + unit + " %{x}<br>%{z}<extra></extra>", xgap=0))
    fig.update_layout(title=title, height=90 + 36 * len(m), margin=dict(l=10, r=10, t=40, b=30))
    fig.update_xaxes(title=f"{unit} position")
    fig.update_yaxes(autorange="reversed")
    return fig


def batch_attention_row(batch, doc: int, head: int, query: int = 0) -> go.Figure:
    """One attention row of a padded document in the batch: the weights query token ``query``
    gives every key, padding included (shaded) — the additive mask leaves padded keys ≈ 0."""
    a = batch.bert_attention[doc, head, query].astype(np.float32)  # [T]
    real = batch.attention_mask[doc]
    n = int(real.sum())
    fig = go.Figure(go.Bar(x=np.arange(1, len(a) + 1, dtype=np.int32), y=a, marker_color=np.where(real, BLUE, VERMILLION),
                           hovertemplate="key %{x}<br>weight %{y:.2e}<extra></extra>"))
    if n < len(a):
        fig.add_vrect(x0=n + 0.5, x1=len(a) + 0.5, fillcolor=VERMILLION, opacity=0.12, line_width=0,
                      annotation_text=f"padding: {len(a) - n} keys, total weight {a[n:].sum():.1e}",
                      annotation_position="top left")
    fig.update_layout(title=f"Document {doc + 1}, BERT layer {batch.layer + 1} head {head + 1}: attention of token "
                            f"{query + 1} over all {len(a)} key positions", height=260,
                      margin=dict(l=10, r=10, t=40, b=30), bargap=0)
    fig.update_xaxes(title="key token position")
    fig.update_yaxes(title="weight")
    return fig


# ---------------------------------------------------------------- encoder vs decoder (causal) mask

def causal_mask(n: int) -> np.ndarray:
    """The look-ahead mask of a Transformer decoder (Vaswani et al. 2017, §3.2.3): query i may not
    see keys j > i; [n, n] float32 additive, 0 or −10000 (BERT, an encoder, has no such mask)."""
    return np.triu(np.full((n, n), -10000.0, dtype=np.float32), 1)


def mask_matrix(trace, n: int = 40, causal: bool = False) -> go.Figure:
    """The additive mask over the first n query × key tokens: BERT's (padding only: all 0 for one
    document) or, with ``causal``, what a decoder would add to hide the future."""
    n = min(n, len(trace.tokens))
    m = np.broadcast_to(trace.extended_mask[None, :n], (n, n)).astype(np.float32)
    if causal:
        m = m + causal_mask(n)
    labels = token_labels(trace.tokens, range(n))
    fig = go.Figure(go.Heatmap(z=m, x=labels, y=labels, colorscale="Reds_r", zmin=-10000, zmax=0,
                               hovertemplate="query %{y}<br>key %{x}<br>added %{z}<extra></extra>"))
    kind = "decoder (causal): the future is hidden" if causal else "encoder (BERT): every token sees every token"
    fig.update_layout(title=f"Mask added to the logits, {kind}", height=460, margin=dict(l=10, r=10, t=40, b=10))
    fig.update_xaxes(type="category", tickangle=-90, title="key token")
    fig.update_yaxes(type="category", autorange="reversed", title="query token")
    return fig
