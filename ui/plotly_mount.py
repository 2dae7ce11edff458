"""SPIKE (branch only): a figure drawn by plotly.js called from our own component, not by
Streamlit's PlotlyChart (no theme passes over the spec, no hidden first plot): to measure what
Streamlit's chart element costs the browser (issue 71)."""
from __future__ import annotations

import os

import orjson
import plotly
import streamlit as st
import streamlit.components.v1 as components

_LIB = components.declare_component("plotly_lib", path=os.path.join(os.path.dirname(plotly.__file__), "package_data"))
URL = "component/ui.plotly_mount.plotly_lib/plotly.min.js"

_JS = """
export default function(component) {
  const { data, parentElement } = component;
  const text = new TextDecoder().decode(data);
  const fig = JSON.parse(text);
  if (!window.__microscopePlotly) {
    window.__microscopePlotly = new Promise((ok, no) => {
      const s = document.createElement('script');
      s.src = new URL(fig.url, document.baseURI).href; s.onload = () => ok(window.Plotly); s.onerror = no;
      document.head.appendChild(s);
    });
  }
  let div = parentElement.querySelector(':scope > .microscope-plot');
  if (!div) { div = document.createElement('div'); div.className = 'microscope-plot'; div.style.width = '100%'; parentElement.appendChild(div); }
  let gone = false, ro = null;
  window.__microscopePlotly.then((P) => {
    if (gone) return;
    P.react(div, fig.figure.data, fig.figure.layout, {...fig.config, responsive: false});
    ro = new ResizeObserver(() => { if (div.isConnected && div._fullLayout) P.Plots.resize(div); });
    ro.observe(div.parentElement);
  });
  return () => { gone = true; if (ro) ro.disconnect(); };
}
"""

_mount = st.components.v2.component("microscope_plotly_mount", js=_JS, isolate_styles=False)


def wire_bytes(fig) -> bytes:
    plain = fig._wire.to_dict() if getattr(fig, "_wire", None) is not None else fig.to_plotly_json()
    cached = getattr(fig, "_mount_bytes", None)
    if cached is None:
        cached = orjson.dumps(plain, option=orjson.OPT_SERIALIZE_NUMPY)
        if getattr(fig, "_wire", None) is not None:
            fig._mount_bytes = cached
    return cached


def draw(fig, key: str, config: dict) -> None:
    body = wire_bytes(fig)
    head = orjson.dumps({"url": URL, "config": config})
    # {"url":…, "config":…, "figure": <the figure's JSON>}
    _mount(key=key, data=head[:-1] + b',"figure":' + body + b"}")
