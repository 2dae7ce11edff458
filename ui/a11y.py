"""What Streamlit and Plotly leave out for keyboard and screen-reader users, added in our layer
(docs/accessibility.md has a row per WCAG criterion and the test that shows it).

- ``mount()`` (once per run, app.py): ui/a11y.js, a component with no HTML whose script, in the
  page, names every chart (``role="figure"``, its title) and its head buttons (which say which head
  is shown and answer Enter, Space and ←/→), keeps the focus where a keyboard user expects it (a
  redrawn head button, the page's heading after a page change or Try an example, a download button,
  a popover's first field), says when a Summarize starts and what it produced, makes the collapsed
  sidebar inert, flows head buttons that a narrow chart cannot hold, and downloads a chart asked for
  in the Figure downloads panel (``downloads_panel``: the charts' mode bars are out of the Tab
  order). With it, one stylesheet (``_CSS``): focus rings, frames and chart text at AA contrast,
  scroll padding under Streamlit's header, wide tables in their own box, forced colours.
- ``dataframe(data, name)``: Streamlit's data grid draws on a canvas that screen readers do not
  read (its accessibility tree is 4 tool buttons), so the same rows follow as an HTML table.
- ``text_alternative(fig)``: under each chart, "As text: <title>", a collapsed table of what the
  chart shows (viz.alt: a heatmap's strongest cells with their labels and true values; every bar
  with its note; every point), reachable by keyboard and read by screen readers.
"""
from __future__ import annotations

import html
import json
import uuid
from pathlib import Path

import streamlit as st

from viz import alt
from viz.common import markdown_text, preview
from viz.palette import BLACK, BLUE, ERROR_TEXT, MUTED_TEXT, TEXT, WHITE

# One stylesheet for what Streamlit's own styles miss (WCAG 2.2 AA): every colour from the palette.
_CSS = """
/* 2.4.11: a control focused by Tab or Shift+Tab is scrolled clear of Streamlit's 60-px header */
[data-testid="stMain"] { scroll-padding-top: 80px; scroll-padding-bottom: 24px; }
/* 2.4.7, 1.4.11: one focus ring, 21:1 on white (Streamlit's is a 2.4:1 shadow, and forced colours drop
   shadows); on the visible box of widgets whose input is visually hidden */
:focus-visible { outline: 3px solid @FOCUS@ !important; outline-offset: 2px; }
a:focus-visible, summary:focus-visible { outline-offset: -3px; }
[data-testid="stCheckbox"] label:has(input:focus-visible) > div, [role="radiogroup"] label:has(input:focus-visible),
[data-testid="stSlider"] div:has(> div > input:focus-visible) { outline: 3px solid @FOCUS@ !important; outline-offset: 2px; }
/* 1.4.11: the frames of text fields and pickers at ≥ 3:1 (Streamlit's are 1.6:1 on white) */
[data-testid="stTextAreaRootElement"], [data-testid="stTextInputRootElement"], [data-testid="stNumberInputContainer"],
[data-testid="stSelectbox"] [role="group"], [data-testid="stMultiSelect"] [role="group"] { border-color: @BORDER@ !important; }
/* 1.4.3: chart text in the palette's text colour (Streamlit's chart theme paints it a grey of 3.7:1) */
.js-plotly-plot .xtick text, .js-plotly-plot .ytick text, .js-plotly-plot .g-xtitle text, .js-plotly-plot .g-ytitle text,
.js-plotly-plot .xtitle, .js-plotly-plot .ytitle, .js-plotly-plot .cbaxis text, .js-plotly-plot .cbtitle text,
.js-plotly-plot .colorbar text, .js-plotly-plot .legendtext, .js-plotly-plot .annotation-text,
.js-plotly-plot .updatemenu-item-text, .js-plotly-plot .gtitle { fill: @TEXT@ !important; }
/* head buttons: a 4.5:1 frame, and the shown head filled (not a 1.05:1 tint); its text stays readable */
.js-plotly-plot .updatemenu-button rect { stroke: @BORDER@ !important; }
.js-plotly-plot .updatemenu-button.microscope-shown rect { fill: @SHOWN@ !important; }
.js-plotly-plot .updatemenu-button.microscope-shown .updatemenu-item-text { fill: @ON_SHOWN@ !important; }
.js-plotly-plot .updatemenu-button:focus { outline: none; }
.js-plotly-plot .updatemenu-button:focus rect { stroke: @FOCUS@ !important; stroke-width: 3px !important; }
.js-plotly-plot .modebar-btn path { fill: @BORDER@ !important; }
/* 3.3.1: Streamlit says why an upload was refused only in a tooltip: the sentence shown under the file */
[data-testid="stFileChip"] [role="alert"] { position: static !important; clip: auto !important; clip-path: none !important;
  width: auto !important; height: auto !important; margin: 0 !important; overflow: visible !important;
  white-space: normal !important; display: block; color: @ERROR@; font-size: 0.85rem; }
/* 1.4.10: a wide table scrolls inside its own box, never the page */
.microscope-table { overflow-x: auto; max-width: 100%; }
[data-testid="stMain"] [data-testid="stDataFrame"], [data-testid="stMain"] [data-testid="stTable"] { max-width: 100%; overflow-x: auto; }
.microscope-live { position: absolute; width: 1px; height: 1px; margin: -1px; overflow: hidden;
                   clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
/* forced colours (Windows high contrast): keep what carries meaning, in system colours */
@media (forced-colors: active) {
  [data-testid="stCheckbox"] label > div { forced-color-adjust: none; border: 2px solid CanvasText; background: Canvas; }
  [data-testid="stCheckbox"] label[data-selected="true"] > div { background: Highlight; border-color: Highlight; }
  [data-testid="stCheckbox"] svg polyline { stroke: HighlightText; }
  [data-testid="stButtonGroup"] button[aria-checked="true"], [data-testid="stButtonGroup"] button[aria-pressed="true"],
  [data-testid="stButtonGroup"] [role="radio"][aria-checked="true"] {
    forced-color-adjust: none; background: Highlight !important; color: HighlightText !important; }
  [data-testid="stSlider"] [data-orientation="horizontal"] > div { forced-color-adjust: none; }
  .js-plotly-plot .updatemenu-button.microscope-shown rect { fill: Highlight !important; }
  .js-plotly-plot text { fill: CanvasText !important; }
  :focus-visible { outline-color: Highlight !important; }
}
"""
for _name, _colour in {"FOCUS": BLACK, "BORDER": MUTED_TEXT, "TEXT": TEXT, "SHOWN": BLUE, "ON_SHOWN": WHITE,
                       "ERROR": ERROR_TEXT}.items():
    _CSS = _CSS.replace(f"@{_name}@", _colour)

_JS = (Path(__file__).with_name("a11y.js")).read_text(encoding="utf-8").replace("= CSS;", f"= {json.dumps(_CSS)};")
_component = st.components.v2.component("microscope_a11y", js=_JS)
DOWNLOAD = "_figure_download"


def mount() -> None:
    """The page script (ui/a11y.js); no HTML of its own. A download asked for in the Figure
    downloads panel goes to it once."""
    _component(key="a11y", data={"download": st.session_state.pop(DOWNLOAD, None)})


def downloads_panel(slot, names: list[str]) -> None:
    """In ``slot`` (the sidebar's Figure downloads panel), after the page ran: any of the page's
    charts ``names``, downloaded by keyboard as its camera button would (the mode bars are out of
    the Tab order)."""
    if not names:
        return
    with slot:
        name = st.selectbox("Chart", names, key="figure_download_pick")
        st.button("Download this chart", key="figure_download", icon=":material/download:",
                  on_click=lambda: st.session_state.update({DOWNLOAD: {"name": name, "nonce": uuid.uuid4().hex}}))


def dataframe(data, name: str, **kwargs) -> None:
    """``st.dataframe`` (sortable, for the eye: a canvas screen readers cannot read), then the same
    rows as an HTML table in a collapsed "As text" expander (every cell escaped)."""
    import pandas as pd

    st.dataframe(data, **kwargs)
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    with st.expander(f"As text: {markdown_text(name)}"):
        table = frame.to_html(index=False, escape=True, border=0, na_rep="—",
                              float_format=lambda x: f"{x:.4g}")
        st.html('<div class="microscope-table">' + table.replace(
            ">", f'><caption style="text-align: left;">{html.escape(name)}</caption>', 1) + "</div>")


def text_alternative(fig) -> None:
    """A collapsed "As text" table under a chart (viz.alt.describe); a shared figure's table is
    made once (``ui.figures.wired``: ``fig._alt_table``)."""
    table = getattr(fig, "_alt_table", None) or alt.table_html(fig)
    with st.expander(f"As text: {markdown_text(preview(alt.name(fig), 80))}"):
        st.html(f'<div class="microscope-table">{table}</div>')
