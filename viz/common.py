"""Helpers shared by the figure functions: quantisation, labels, pooling, escaping.

Every array handed to Plotly is a NumPy array (uint8 or float32) so Plotly serialises it as a
base64 typed array instead of a JSON list of numbers.

Document text is always shown as text: Plotly reads a subset of HTML in every label, title and
hover (``<b>``, ``<a href>``, …), so figure functions pass text through ``plotly_text``;
Streamlit reads Markdown (and LaTeX, colour directives) in widget labels, captions and the
options of sliders and radios, so pages pass it through ``markdown_text`` there (a selectbox
shows its options as plain text: no escaping). Numbering in the interface is 1-based (sentences, tokens,
layers, heads); arrays and JSON stay 0-based.
"""
from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from .text import CJK, CONTROL, JOINER, length_label, markdown_text, plain_text, plural, preview  # noqa: F401
from .palette import CLEAR, SCALES, STATUS_SYMBOLS, SEQUENTIAL as COLORSCALES  # the weight colour scales offered
SELECTED_MARK = STATUS_SYMBOLS["selected"]


def to_numpy(x) -> np.ndarray:
    """An array (float16 as a Trace stores it) → NumPy, floats as float32 (what Plotly gets)."""
    x = np.asarray(x)
    return x.astype(np.float32) if x.dtype in (np.float16, np.float64) else x


# Colour mappings of attention weights. On real articles (300-500 tokens) a few weights near 1
# (on [CLS], [SEP], full stops) set a linear scale and ~98% of the cells fall in its darkest
# tenth; clipped at the 99.5th percentile, √ leaves 53-59% there and log 26-31%, with 0.5% of
# the cells saturated (studies/contrast.py prints these shares). Side by side on the shipped
# call-centre article, √ shows the structure (bands along sentences, the previous-token
# diagonal) where log also lifts the noise floor to mid-colours: √ is the default. Hover always
# shows the true weight.
LOG_RANGE = 1000.0  # the log scale spans three decades below the clip value
CLIP = 99.5  # percentile of the map that gets the top colour (the few larger weights saturate)


def _forward(x: np.ndarray, scale: str) -> np.ndarray:
    """x = weight / vmax in [0, 1] → position on the colour scale in [0, 1]."""
    if scale == "sqrt":
        return np.sqrt(x)
    if scale == "log":
        return np.log1p(x * LOG_RANGE) / np.log1p(LOG_RANGE)
    if scale != "linear":
        raise ValueError(f"unknown colour scale mapping {scale!r} ({', '.join(SCALES)})")
    return x


def _inverse(y: np.ndarray, scale: str) -> np.ndarray:
    if scale == "sqrt":
        return y ** 2
    if scale == "log":
        return np.expm1(y * np.log1p(LOG_RANGE)) / LOG_RANGE
    return y


def quantize(p: np.ndarray, vmax: float | None = None, scale: str = "linear",
             clip: float = 100.0) -> tuple[np.ndarray, float]:
    """Weights → uint8 colour levels 0..255: level = round(255 · f(min(p, vmax) / vmax)), f the
    ``scale`` mapping; vmax = the ``clip`` percentile of p unless given (100 = the maximum).

    Returns (levels, vmax). A 512×512 attention map is 256 KiB as uint8 instead of 1 MiB as
    float32 (and ~5 MB as a JSON list of floats).
    """
    p = np.asarray(p, dtype=np.float32)
    if vmax is None:
        vmax = float(np.percentile(p, clip) if clip < 100 else p.max()) if p.size else 1.0
    vmax = vmax if vmax > 0 else float(p.max()) if p.size and p.max() > 0 else 1.0
    y = _forward(np.clip(p / np.float32(vmax), 0, 1), scale)
    return np.rint(y * 255).astype(np.uint8), vmax


def level_colorbar(vmax: float, title: str = "weight", n: int = 5, scale: str = "linear",
                   clipped: bool = False) -> dict:
    """A colourbar over uint8 levels whose tick labels show the true values (the top one "≥"
    when larger weights were clipped to it)."""
    levels = np.linspace(0, 255, n)
    weights = vmax * _inverse(levels / 255, scale)
    text = [f"{w:.2g}" for w in weights]
    text[-1] = f"≥ {text[-1]}" if clipped else text[-1]
    name = {"log": "log scale", "sqrt": "√ scale", "linear": ""}[scale]
    return dict(title=dict(text=title + (f"<br>({name})" if name else "")), tickmode="array",
                tickvals=levels.astype(np.float32), ticktext=text, thickness=12)


BASIS = 10000  # token maps send weights as uint16 in 1/10,000 (2 bytes a cell): hover shows them as 0.dddd
WEIGHT_HOVER = "0.%{z:04d}"


def weight_colorscale(name: str, scale: str, n: int = 48) -> list:
    """A colour scale for z = weights on a linear axis whose colours follow the ``scale`` mapping
    (stops at the weights where each colour of the named scale falls)."""
    from plotly.colors import sample_colorscale

    y = np.linspace(0, 1, n)
    x = _inverse(y, scale)
    x[0], x[-1] = 0.0, 1.0  # exactly: plotly.js refuses a scale that ends at 0.9999999999999999 (log) and
    return [[float(a), c] for a, c in zip(x, sample_colorscale(name, y.tolist()))]  # draws its default instead


MIN_TICK_GAP = 0.07  # of a colour bar's length: closer labels overprint (log's 0, 0.005 and 0.03 of the top)


def spaced(values: np.ndarray, gap: float) -> list[int]:
    """Indices of ascending ``values`` kept so that neighbours are ``gap`` apart or more: the
    first and the last always."""
    kept, last = [0], len(values) - 1
    for i in range(1, last + 1):
        if values[i] - values[kept[-1]] >= gap:
            kept.append(i)
    if kept[-1] != last:
        kept[-1 if len(kept) > 1 else 1:] = [last]
    return kept


def weight_map(m: np.ndarray, colorscale: str = "Viridis", scale: str = "sqrt", title: str = "weight") -> dict:
    """Heatmap arguments for a map of weights in [0, 1]: z = round(weight × 10,000) as uint16 (the
    hover ``WEIGHT_HOVER`` prints it as the weight to 4 decimals; weights ≥ 0.99995 show 0.9999),
    colours on the ``scale`` mapping clipped at the CLIP percentile (the maximum for linear),
    colourbar ticks labelled with weights."""
    m = np.asarray(m, dtype=np.float32)
    vmax = float(np.percentile(m, CLIP) if scale != "linear" else m.max()) if m.size else 1.0
    vmax = vmax if vmax > 0 else 1.0
    bar = level_colorbar(vmax, title, scale=scale, clipped=bool(m.size and m.max() > vmax))
    ticks = _inverse(bar["tickvals"] / 255, scale)  # the same ticks, as shares of vmax: log's crowd near 0
    kept = spaced(ticks, MIN_TICK_GAP)
    bar["tickvals"], bar["ticktext"] = (vmax * BASIS * ticks[kept]).astype(np.float32), [bar["ticktext"][i] for i in kept]
    return dict(z=np.minimum(np.rint(m * BASIS), BASIS - 1).astype(np.uint16), zmin=0, zmax=vmax * BASIS,
                colorscale=weight_colorscale(colorscale, scale), colorbar=bar)


def bold_html(text: str) -> str:
    """Escaped text whose Markdown **bold** stays bold (viz.plain's paragraphs, verdicts)."""
    parts = html.escape(text).split("**")
    return "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts))


def plotly_text(text):
    """Text (or an array of texts) as Plotly shows it literally: its HTML subset escaped."""
    if isinstance(text, np.ndarray):
        return np.array([html.escape(str(t), quote=False) for t in text.ravel()], dtype=object).reshape(text.shape)
    return html.escape(str(text), quote=False)


def token_labels(tokens, index, escape=plotly_text) -> np.ndarray:
    """Unique axis labels ``"12 the"`` (1-based; Plotly merges duplicate categories, tokens repeat)."""
    return np.array([escape(f"{i + 1} {tokens[i]}") for i in index], dtype=object)


def sentence_label(trace, i: int, n: int = 32, escape=plotly_text) -> str:
    """``"★ 4: The quick brown…"`` for summary sentence ``i`` (1-based; ★ = selected)."""
    mark = SELECTED_MARK + " " if i in trace.summary.selected else ""
    return escape(f"{mark}{i + 1}: {preview(trace.summary.sentences[i], n)}")


def input_labels(trace, n: int = 30) -> np.ndarray:
    """One unique label per sentence fed to the sentence encoder (a sentence longer than a BERT
    window is fed as several parts: ``"… (part 2)"``)."""
    seen: dict[int, int] = {}
    out = []
    for i in trace.input_sentences:
        i = int(i)
        seen[i] = seen.get(i, 0) + 1
        out.append(sentence_label(trace, i, n) + (f" (part {seen[i]})" if seen[i] > 1 else ""))
    return np.array(out, dtype=object)


def pool(a: np.ndarray, n: int) -> np.ndarray:
    """Block-average the last two axes of ``a`` down to at most ``n`` × ``n`` (for small multiples)."""
    t0, t1 = a.shape[-2:]
    e0 = np.unique(np.linspace(0, t0, min(n, t0) + 1).astype(int))[:-1]
    e1 = np.unique(np.linspace(0, t1, min(n, t1) + 1).astype(int))[:-1]
    s = np.add.reduceat(np.add.reduceat(a, e0, axis=-2), e1, axis=-1)
    c0 = np.diff(np.append(e0, t0)).astype(np.float32)
    c1 = np.diff(np.append(e1, t1)).astype(np.float32)
    return (s / c0[:, None] / c1[None, :]).astype(np.float32)


def blank(height: int = 10) -> go.Figure:
    """An empty, transparent figure without axes (``meta.decorative``: hidden from screen readers)."""
    return go.Figure(layout=dict(height=height, margin=dict(l=0, r=0, t=0, b=0), xaxis_visible=False,
                                 yaxis_visible=False, paper_bgcolor=CLEAR, plot_bgcolor=CLEAR,
                                 meta=dict(decorative=True)))
