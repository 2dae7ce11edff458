"""Helpers shared by the figure functions: quantisation, labels, pooling.

Every array handed to Plotly is a NumPy array (uint8 or float32) so Plotly serialises it as a
base64 typed array instead of a JSON list of numbers.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

COLORSCALES = ("Viridis", "Blues", "Magma", "Cividis", "Greys", "YlOrRd")
SELECTED_MARK = "★"


def to_numpy(x) -> np.ndarray:
    """An array (float16 as a Trace stores it) → NumPy, floats as float32 (what Plotly gets)."""
    x = np.asarray(x)
    return x.astype(np.float32) if x.dtype in (np.float16, np.float64) else x


def quantize(p: np.ndarray, vmax: float | None = None) -> tuple[np.ndarray, float]:
    """Probabilities in [0, vmax] → uint8 levels 0..255 (level = round(255 · p / vmax)).

    Returns (levels, vmax). A 512×512 attention map is 256 KiB as uint8 instead of 1 MiB as
    float32 (and ~5 MB as a JSON list of floats).
    """
    p = np.asarray(p, dtype=np.float32)
    if vmax is None:
        vmax = float(p.max()) if p.size else 1.0
    vmax = vmax if vmax > 0 else 1.0
    return np.clip(np.rint(p * (255.0 / vmax)), 0, 255).astype(np.uint8), vmax


def level_colorbar(vmax: float, title: str = "weight", n: int = 5) -> dict:
    """A colourbar over uint8 levels whose tick labels show the true values."""
    levels = np.linspace(0, 255, n)
    return dict(title=dict(text=title), tickmode="array", tickvals=levels.astype(np.float32),
                ticktext=[f"{vmax * v / 255:.3g}" for v in levels], thickness=12)


def token_labels(tokens, index) -> np.ndarray:
    """Unique axis labels ``"12 the"`` (Plotly merges duplicate categories, tokens repeat)."""
    return np.array([f"{i} {tokens[i]}" for i in index], dtype=object)


def preview(text: str, n: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def sentence_label(trace, i: int, n: int = 32) -> str:
    """``"★ 3: The quick brown…"`` for summary sentence ``i`` (★ = selected)."""
    mark = SELECTED_MARK + " " if i in trace.summary.selected else ""
    return f"{mark}{i}: {preview(trace.summary.sentences[i], n)}"


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
    """An empty, transparent figure without axes."""
    clear = "rgba(0,0,0,0)"
    return go.Figure(layout=dict(height=height, margin=dict(l=0, r=0, t=0, b=0), xaxis_visible=False,
                                 yaxis_visible=False, paper_bgcolor=clear, plot_bgcolor=clear))
