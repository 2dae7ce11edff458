"""Issue 71: the app's charts are drawn by its own element (ui/chart.py), not Streamlit's, which
swapped its theme's colours and layout into each chart in the browser. So the server does: the
template's colours (viz.palette.STREAMLIT_THEME, set by ui.figures) instead of Streamlit's
placeholders, its layout (ui/chart_theme.json) and a bold title. The reference is Streamlit's own
browser code: given its placeholder template, its chart must end with the same template as ours,
and both must be drawn alike."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLACEHOLDER = re.compile(r"#0000[0-4]\d")


def test_figures_carry_the_theme_colours_not_streamlits_placeholders():
    import plotly.graph_objects as go

    from ui.figures import streamlit_template
    from viz.palette import STREAMLIT_THEME

    original = json.dumps(streamlit_template().to_plotly_json())
    assert set(PLACEHOLDER.findall(original)) == set(STREAMLIT_THEME)  # a placeholder Streamlit adds or drops: said here
    spec = go.Figure(go.Heatmap(z=[[1, 2], [3, 4]])).to_json()
    assert not PLACEHOLDER.search(spec)
    resolved = json.loads(spec)["layout"]["template"]
    expected = PLACEHOLDER.sub(lambda m: STREAMLIT_THEME[m.group()], original)
    assert resolved == json.loads(go.Figure(layout=dict(template=json.loads(expected))).to_json())["layout"]["template"]


PROBE = """
import sys
sys.path.insert(0, {root!r})
import plotly.graph_objects as go
import streamlit as st
from ui.figures import streamlit_template
z = [[1, 2], [3, 4]]
st.plotly_chart(go.Figure(go.Heatmap(z=z), layout=dict(title="placeholders", template=streamlit_template())), key="a")
from ui import chart, wire
wire.keep_static()  # as app.py does: plotly.js served
chart.draw(go.Figure(go.Heatmap(z=z), layout=dict(title="resolved")), "b", {{}})
st.button("Again")  # a rerun that sends chart b unchanged
st.write("run " + str(st.session_state.setdefault("runs", 0) + 1))
st.session_state["runs"] += 1
"""
# the app's chart (the second): zoomed in the browser, then a rerun sends it again
ZOOM = "() => Plotly.relayout(document.querySelectorAll('.js-plotly-plot')[1], {'xaxis.range': [0, 0.5]})"
RANGE = "() => document.querySelectorAll('.js-plotly-plot')[1].layout.xaxis.range"

# each chart's template, and what Plotly drew from it, as the browser holds them
READ = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd => JSON.stringify({
  template: gd.layout.template, title: gd.querySelector('.gtitle').textContent,
  tools: [...gd.querySelectorAll('.modebar-btn')].map(b => b.getAttribute('data-title')),
  bold: !!gd.querySelector('.gtitle [style*="bold"]'),
  drawn: ['paper_bgcolor', 'plot_bgcolor', 'font', 'colorway', 'hoverlabel'].map(k => gd._fullLayout[k]),
  axes: ['xaxis', 'yaxis'].map(a => ['gridcolor', 'zerolinecolor', 'tickfont', 'linecolor'].map(k => gd._fullLayout[a][k])),
  colorscale: gd._fullData[0].colorscale}))"""


@pytest.mark.browser
@pytest.mark.skipif(not shutil.which("chromium") and not Path("/usr/bin/chromium").exists(), reason="no Chromium")
def test_streamlits_browser_makes_the_same_template_from_its_placeholders_as_ours(tmp_path):
    """Under this app's .streamlit/config.toml (the server runs in the repository), a chart with
    Streamlit's placeholder template on Streamlit's element and one of ours on the app's element
    end with the same template in Chromium; a rerun that sends ours unchanged keeps its zoom; its
    Fullscreen button fills the screen with it and back; where plotly.js does not load, ours says so
    in words."""
    from playwright.sync_api import sync_playwright

    from benchmarks.common import free_port, launch_chromium, wait_healthy

    probe = tmp_path / "probe.py"
    probe.write_text(PROBE.format(root=str(ROOT)))
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(probe), "--server.port", str(port),
                             "--server.address", "127.0.0.1", "--server.headless", "true",
                             "--browser.gatherUsageStats", "false"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_healthy(proc, f"http://127.0.0.1:{port}", 120, "the probe app")
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length >= 2", timeout=120_000)
            page.wait_for_timeout(500)  # the chart's second theme pass (a React effect after the mount)
            a, b = (json.loads(x) for x in page.evaluate(READ))
            page.evaluate(ZOOM)
            page.get_by_role("button", name="Again").click()
            page.get_by_text("run 2", exact=True).wait_for(timeout=60_000)  # the rerun has drawn
            page.wait_for_timeout(500)
            zoomed = page.evaluate(RANGE)
            ours = page.locator(".microscope-chart")
            ours.hover()
            ours.locator('.modebar-btn[data-title="Fullscreen"]').click()  # a real click: the browser wants one
            page.wait_for_function("document.fullscreenElement === document.querySelector('.microscope-chart')")
            page.wait_for_function("document.querySelector('.microscope-chart')._fullLayout.height === window.innerHeight")
            page.keyboard.press("Escape")
            page.evaluate("document.fullscreenElement && document.exitFullscreen()")
            page.wait_for_function("!document.fullscreenElement && document.querySelector('.microscope-chart')._fullLayout.height === 450")
            # plotly.js not loaded (a proxy that drops it): the chart says so, in words
            blocked = browser.new_page()
            blocked.route("**/static/microscope/plotly-*.min.js", lambda route: route.abort())
            blocked.goto(f"http://127.0.0.1:{port}/")
            blocked.get_by_text("This chart could not be drawn").first.wait_for(timeout=60_000)
            said = blocked.locator(".microscope-chart").all_inner_texts()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(15)
    assert (a.pop("title"), b.pop("title")) == ("placeholders", "resolved")  # two charts, not one read twice
    assert not PLACEHOLDER.search(json.dumps(a)) and a["drawn"][0] in ("#FFFFFF", "#fff", "white"), a["drawn"]  # swapped
    tools = a.pop("tools"), b.pop("tools")
    assert tools[0] == tools[1] and "Fullscreen" in tools[1], repr(tools)  # Streamlit's buttons, no "Share chart…"
    assert a == b
    assert zoomed == [0, 0.5]  # the same chart again: not drawn again, so the reader's zoom stays
    assert said and all("(plotly.js) did not load" in t for t in said), said
