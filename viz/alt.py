"""Text alternatives for figures (WCAG 2.2, 1.1.1): what a figure shows, in words and a small
table, for a screen reader and for anyone who cannot hover (hover values are mouse-only).

Reads the figure itself, so the text says what is drawn: a heatmap's strongest cells with their
row and column labels and true values (``customdata`` where the colours are levels, the uint16
weights of ``viz.common.weight_map`` ÷ BASIS), a bar chart's bars, a scatter's points. Hidden
traces (the token map's other heads) are left out: they are not what is shown."""
from __future__ import annotations

import html
import re

import numpy as np

from .common import BASIS, WEIGHT_HOVER

MAX_ROWS = 100  # bars or points listed; the rest are counted


def plain(text) -> str:
    """Plotly label text as plain text: tags out, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", " ", str(text))).replace("  ", " ").strip()


def name(fig) -> str:
    """The figure's accessible name: its title (what it shows: layer, head, view)."""
    t = fig.layout.title.text if fig.layout.title and fig.layout.title.text else ""
    return plain(t) or "Chart"


def _shown(fig):
    return [t for t in fig.data if t.visible is not False and t.visible != "legendonly"]


def cell_values(t) -> np.ndarray | None:
    """The true values behind a heatmap trace's colours."""
    z = None if t.z is None else np.asarray(t.z)
    if t.customdata is not None:
        c = np.asarray(t.customdata)
        if z is not None and c.shape == z.shape and np.issubdtype(c.dtype, np.number):
            return c.astype(np.float64)
    if z is None or not np.issubdtype(z.dtype, np.number):
        return None
    if WEIGHT_HOVER in (t.hovertemplate or ""):
        return z.astype(np.float64) / BASIS
    return z.astype(np.float64)


def _label(labels, i: int) -> str:
    return plain(labels[i]) if labels is not None and i < len(labels) else str(i + 1)


def _axis(fig, which: str) -> str:
    axis = fig.layout[which]
    return plain(axis.title.text) if axis and axis.title and axis.title.text else ""


def _texts(t):
    """A trace's per-point text labels, or None."""
    return None if t.text is None or isinstance(t.text, str) else t.text


def _notes(t):
    """What a trace's hover says of each point beyond its value (the last field of a text
    ``customdata`` the hover shows, e.g. a sentence's reason), or None: hover is mouse-only."""
    c = None if t.customdata is None else np.asarray(t.customdata, dtype=object)
    if c is None or c.ndim != 2 or "customdata[" not in (t.hovertemplate or "") or not isinstance(c[0, -1], str):
        return None
    return [str(x) for x in c[:, -1]]


def fmt(v: float) -> str:
    return "—" if v is None or not np.isfinite(v) else f"{v:.4g}"


def describe(fig, n: int = 8) -> tuple[str, list[str], list[list[str]]]:
    """(summary sentence, column names, rows of text) for the figure as drawn."""
    shown = _shown(fig)
    maps = [t for t in shown if t.type == "heatmap" and cell_values(t) is not None]
    if maps:
        cells = []
        for t in maps:
            v = cell_values(t)
            flat = np.where(np.isfinite(v), np.abs(v), -np.inf).ravel()
            top = np.argpartition(-flat, min(n, flat.size) - 1)[:n] if flat.size > n else np.arange(flat.size)
            for f in top:
                r, c = np.unravel_index(f, v.shape)
                cells.append((flat[f], plain(t.name) if len(maps) > 1 else "", _label(t.y, r), _label(t.x, c), v[r, c]))
        cells = sorted(cells, key=lambda x: -x[0])[:n]
        h, w = np.asarray(maps[0].z).shape
        what = f"{len(maps)} maps of {h} × {w} cells" if len(maps) > 1 else f"a map of {h} rows × {w} columns"
        cols = (["map"] if len(maps) > 1 else []) + [_axis(fig, "yaxis") or "row", _axis(fig, "xaxis") or "column",
                                                     "value"]
        rows = [([m] if len(maps) > 1 else []) + [r, c, fmt(v)] for _, m, r, c, v in cells]
        return f"{name(fig)}: {what}; its {len(rows)} strongest cells.", cols, rows
    bars = [t for t in shown if t.type == "bar" and t.x is not None and len(t.x)]
    many = len(bars) > 1
    if bars:
        texts, notes = [_texts(t) for t in bars], [_notes(t) for t in bars]
        labelled, noted = any(x is not None for x in texts), any(x is not None for x in notes)
        rows = []
        for t, text, note in zip(bars, texts, notes):
            labels, values = (t.y, t.x) if t.orientation == "h" else (t.x, t.y)
            rows += [([plain(t.name)] if many else []) + [_label(labels, i), fmt(float(values[i]))]
                     + ([plain(text[i]) if text is not None else ""] if labelled else [])
                     + ([plain(note[i]) if note is not None else ""] if noted else []) for i in range(len(values))]
        cols = (["series"] if many else []) + ["bar", "value"] + (["label"] if labelled else []) + (
            ["note"] if noted else [])
        more = f" (the first {MAX_ROWS} of {len(rows)})" if len(rows) > MAX_ROWS else ""
        return f"{name(fig)}: {len(rows)} bars{more}.", cols, rows[:MAX_ROWS]
    points = [t for t in shown if t.type == "scatter" and "markers" in (t.mode or "markers") and t.x is not None]
    if points:
        rows = []
        for t in points:
            text, ys = _texts(t), np.asarray(t.y)
            rows += [[plain(t.name or ""), plain(text[i]) if text is not None else str(i + 1), fmt(float(t.x[i])),
                      fmt(float(ys[i])) if np.issubdtype(ys.dtype, np.number) else plain(ys[i])]
                     for i in range(len(t.x))]
        more = f" (the first {MAX_ROWS} of {len(rows)})" if len(rows) > MAX_ROWS else ""
        return f"{name(fig)}: {len(rows)} points{more}.", ["series", "point", "x", "y"], rows[:MAX_ROWS]
    return f"{name(fig)}.", [], []


def table_html(fig, n: int = 8) -> str:
    """The description as an HTML table with a caption (every piece of text escaped)."""
    summary, cols, rows = describe(fig, n)
    if not rows:
        return f"<p>{html.escape(summary)}</p>"
    head = "".join(f'<th scope="col">{html.escape(c)}</th>' for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(x))}</td>" for x in r) + "</tr>" for r in rows)
    return (f'<table style="font-size: 0.85em; border-collapse: collapse;"><caption style="text-align: left;">'
            f"{html.escape(summary)}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
