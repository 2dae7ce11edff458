"""The app's chart element: a Plotly figure drawn by plotly.js from a component of our own
(ui/chart.js, in the page's DOM), not by Streamlit's ``st.plotly_chart``.

Streamlit's element turns a chart's whole spec into a string, swaps its theme's colours in and
parses it again, twice as the chart mounts, and plots it once hidden before it knows its width,
then again, and a new figure mounts it again (a Layer switch, a head's exact map). Here the figure
goes once as JSON bytes (made once per shared figure) and plotly.js draws it once: at 470 tokens
the browser's share of the first heatmap 0.61 → 0.42 s, of a Layer switch 0.40 → 0.30 s
(benchmarks/HISTORY.md, session 38).
plotly.js is plotly.py's own, served with Streamlit's code (``ui.wire.plotly_js``). The figure is
drawn as Streamlit would theme it: its colours, fonts and bold title are in the template
(``ui.figures.streamlit_template``)."""
from __future__ import annotations

import json
from pathlib import Path

import orjson
import plotly.io as pio
import streamlit as st

from ui.wire import plotly_js

_element = st.components.v2.component(
    "microscope_chart", js=(Path(__file__).with_name("chart.js")).read_text(encoding="utf-8"),
    isolate_styles=False)  # plotly.js puts its styles in the page's head: the chart must be in the page's DOM


# What Streamlit 1.67's browser code makes of a chart's template layout under .streamlit/config.toml
# (fonts, sizes, colours, margins: its chart theme), read back from Chromium; a chart here gets the
# same (tests/test_browser_chart_theme.py checks it against Streamlit's own element).
THEME_LAYOUT = json.loads(Path(__file__).with_name("chart_theme.json").read_text(encoding="utf-8"))


def themed(plain: dict) -> dict:
    """A figure's plain dict as Streamlit's element would draw it: its template's layout is the
    theme's, its title bold. The arrays are not copied."""
    layout = dict(plain.get("layout") or {})
    layout["template"] = {**(layout.get("template") or {}), "layout": THEME_LAYOUT}
    title = layout.get("title")
    text = title.get("text") if isinstance(title, dict) else title
    if text:
        layout["title"] = {**(title if isinstance(title, dict) else {}), "text": f"<b>{text}</b>"}
    return {**plain, "layout": layout}


def encode(fig) -> bytes:
    """The figure as the chart element sends it: its JSON (plotly.io's, typed arrays as base64), themed."""
    return orjson.dumps(themed(json.loads(pio.to_json(fig, validate=False))))


def figure_bytes(fig) -> bytes:
    """``encode(fig)``, made once for a shared figure (ui.figures.wired)."""
    kept = getattr(fig, "_chart_bytes", None)
    return kept if kept is not None else encode(fig)


def draw(fig, key: str | None, config: dict, warm: bytes | None = None) -> None:
    """``fig`` on the page as the chart ``key``, with Plotly's ``config`` (modebar, image format).
    ``warm``: a figure's ``encode``d bytes that the page draws once off-screen (ui.figures.preload_plotly)."""
    head = orjson.dumps({"lib": plotly_js()[0], "config": config})
    extra = b"" if warm is None else b',"warm":' + warm
    _element(key=key, data=head[:-1] + extra + b',"figure":' + figure_bytes(fig) + b"}")


def spec(data: bytes) -> dict:
    """What ``draw`` sent: {"lib", "config", "figure"} (for tests and tools reading a page)."""
    return orjson.loads(data)
