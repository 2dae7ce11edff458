"""Scaled dot-product attention, one query at a time, with a document's real numbers:

    Attention(Q, K, V) = softmax(Q Kᵀ / √d_k + M) V        (Vaswani et al. 2017, Eq. 1)

``attention_steps`` recomputes one row of one head from the captured Q, K, V and mask;
the figure functions draw each step.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .common import plotly_text, to_numpy, token_labels
from .palette import BLACK, BLUE, DIVERGING, VERMILLION


def attention_steps(trace, layer: int, head: int, query: int, causal: bool = False) -> dict[str, np.ndarray | float]:
    """Every intermediate of softmax(q Kᵀ/√d + m) V for query token ``query`` (float32). With
    ``causal`` the mask also hides every key after the query, as a decoder's look-ahead mask
    would (Vaswani et al. 2017, §3.2.3); BERT's own weights (``captured``) had no such mask."""
    q = to_numpy(trace.bert_query[layer, head, query])     # [dh]
    K = to_numpy(trace.bert_key[layer, head])              # [T, dh]
    V = to_numpy(trace.bert_value[layer, head])            # [T, dh]
    mask = to_numpy(trace.extended_mask).astype(np.float32)   # [T] 0 / -10000
    if causal:
        mask = mask + np.where(np.arange(len(mask)) > query, np.float32(-10000.0), np.float32(0.0))
    d = q.shape[-1]
    logits = K @ q                                         # [T] q · k_j
    scaled = logits / np.float32(np.sqrt(d))               # [T]
    masked = scaled + mask                                 # [T]
    e = np.exp(masked - masked.max())
    probs = (e / e.sum()).astype(np.float32)               # [T] softmax
    out = probs @ V                                        # [dh]
    captured = to_numpy(trace.bert_attention[layer, head, query])   # [T] what BERT computed
    return dict(q=q, K=K, V=V, mask=mask, logits=logits.astype(np.float32), scaled=scaled.astype(np.float32),
                masked=masked.astype(np.float32), probs=probs, out=out.astype(np.float32), captured=captured,
                d=float(d), max_abs_diff=float(np.abs(probs - captured).max()))


def vector_figure(v: np.ndarray, title: str, *, height: int = 150) -> go.Figure:
    """A d-dimensional vector as a 1 × d heatmap."""
    v = np.asarray(v, dtype=np.float32)
    lim = float(np.abs(v).max()) or 1.0
    fig = go.Figure(go.Heatmap(z=v[None, :], colorscale=DIVERGING, zmin=-lim, zmax=lim,
                               hovertemplate="dimension %{x}: %{z:.3f}<extra></extra>"))
    fig.update_layout(title=title, height=height, margin=dict(l=10, r=10, t=40, b=10))
    fig.update_yaxes(showticklabels=False)
    return fig


def matrix_figure(m: np.ndarray, tokens, title: str, *, highlight: int | None = None,
                  height: int = 380) -> go.Figure:
    """K or V: one row per key token, one column per dimension of the head."""
    m = np.asarray(m, dtype=np.float32)
    lim = float(np.abs(m).max()) or 1.0
    labels = token_labels(tokens, range(len(m)))
    fig = go.Figure(go.Heatmap(z=m, y=labels, colorscale=DIVERGING, zmin=-lim, zmax=lim,
                               hovertemplate="%{y}<br>dimension %{x}: %{z:.3f}<extra></extra>"))
    if highlight is not None:
        fig.add_shape(type="rect", x0=-0.5, x1=m.shape[1] - 0.5, y0=highlight - 0.5, y1=highlight + 0.5,
                      line=dict(color=BLACK, width=2))
    fig.update_layout(title=title, height=height, margin=dict(l=10, r=10, t=40, b=10))
    fig.update_yaxes(type="category", autorange="reversed", showticklabels=len(m) <= 60)
    fig.update_xaxes(title="dimension")
    return fig


def key_bars(values: np.ndarray, tokens, title: str, *, y_title: str = "", compare: np.ndarray | None = None,
             fmt: str = ".3f", height: int = 260) -> go.Figure:
    """One bar per key token (e.g. the logits q·k_j, or the softmax weights)."""
    values = np.asarray(values, dtype=np.float32)
    labels = token_labels(tokens, range(len(values)))
    fig = go.Figure(go.Bar(x=labels, y=values, name="recomputed", marker_color=BLUE,
                           hovertemplate="key %{x}<br>%{y:" + fmt + "}<extra></extra>"))
    if compare is not None:
        fig.add_trace(go.Scatter(x=labels, y=np.asarray(compare, dtype=np.float32), mode="markers",
                                 name="captured from BERT", marker=dict(color=VERMILLION, size=4),
                                 hovertemplate="key %{x}<br>captured %{y:" + fmt + "}<extra></extra>"))
    fig.update_layout(title=title, height=height, margin=dict(l=10, r=10, t=40, b=10), bargap=0.05,
                      showlegend=compare is not None, legend=dict(orientation="h", y=1.15, x=1, xanchor="right"))
    fig.update_xaxes(type="category", showticklabels=len(values) <= 60, tickangle=-90)
    fig.update_yaxes(title=y_title)
    return fig


def step_figures(trace, layer: int, head: int, query: int, causal: bool = False) -> dict[str, go.Figure]:
    """The figures of the step-through, keyed by step name, plus nothing else (no Streamlit)."""
    s = attention_steps(trace, layer, head, query, causal)
    tok = trace.tokens
    qname = plotly_text(f"“{tok[query]}” (token {query + 1})")
    mask = ("3. + causal mask (−10000 for every key after the query, as in a decoder)" if causal
            else "3. + mask (0 for real tokens, −10000 for padding)")
    probs = ("4. softmax with the causal mask: later keys get 0 (red dots: BERT's own weights, which see them)"
             if causal else "4. softmax → attention weights (sum to 1)")
    return {
        "q": vector_figure(s["q"], f"Query vector q of {qname}, {int(s['d'])} dims"),
        "K": matrix_figure(s["K"], tok, "Key vectors K (one row per token)", highlight=query),
        "logits": key_bars(s["logits"], tok, "1. q · kⱼ for every key token j", y_title="q·k"),
        "scaled": key_bars(s["scaled"], tok, f"2. ÷ √d = ÷ {np.sqrt(s['d']):.2f}", y_title="q·k/√d"),
        "masked": key_bars(s["masked"], tok, mask, y_title="+ mask"),
        "probs": key_bars(s["probs"], tok, probs, y_title="weight", compare=s["captured"], fmt=".4f"),
        "V": matrix_figure(s["V"], tok, "Value vectors V (one row per token)"),
        "out": vector_figure(s["out"], f"5. Σⱼ weightⱼ · vⱼ: the output of this head for {qname}"),
    }
