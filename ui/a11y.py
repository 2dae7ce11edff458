"""What Streamlit and Plotly leave out for keyboard and screen-reader users, added in our layer.

- ``mount()`` (once per run, app.py): a component with no HTML whose script, in the page, gives
  every Plotly chart ``role="figure"`` and its title as accessible name (it follows the head
  buttons, which retitle the chart in the browser); makes the in-figure buttons (heads) and the
  mode bar's buttons focusable, named and operable by keyboard (Enter/Space press, ←/→ move to
  the neighbouring head and show it); draws a visible focus ring on them and on links and
  expanders (Streamlit's page links showed none); and says a chart's new
  title in a polite live region after a keyboard press. Plotly's SVG has none of this.
- ``dataframe(data, name)``: Streamlit's data grid draws on a canvas that screen readers do not
  read (its accessibility tree is 4 tool buttons), so the same rows follow as an HTML table.
- ``text_alternative(fig)``: under each chart, "As text: <title>", a collapsed table of what the
  chart shows (viz.alt: a heatmap's strongest cells with their labels and true values; every bar;
  every point), reachable by keyboard and read by screen readers.
"""
from __future__ import annotations

import html
import json

import streamlit as st

from viz import alt
from viz.common import markdown_text, preview
from viz.palette import BLACK

_CSS = """
a:focus-visible, summary:focus-visible { outline: 3px solid FOCUS !important; outline-offset: -3px; }
.js-plotly-plot .updatemenu-button:focus { outline: none; }
.js-plotly-plot .updatemenu-button:focus rect { stroke: FOCUS !important; stroke-width: 3px !important; }
.js-plotly-plot .modebar-btn:focus { outline: 3px solid FOCUS; outline-offset: 1px; }
.js-plotly-plot .modebar-container:focus-within .modebar { opacity: 1 !important; }
.microscope-live { position: absolute; width: 1px; height: 1px; margin: -1px; overflow: hidden;
                   clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
""".replace("FOCUS", BLACK)  # 21:1 on white

_JS = """
export default function(component) {
  if (!document.getElementById('microscope-a11y-css')) {
    const s = document.createElement('style'); s.id = 'microscope-a11y-css'; s.textContent = CSS;
    document.head.appendChild(s);
  }
  let live = document.getElementById('microscope-live');
  if (!live) {
    live = document.createElement('div'); live.id = 'microscope-live'; live.className = 'microscope-live';
    live.setAttribute('aria-live', 'polite'); document.body.appendChild(live);
  }
  if (!window.__microscopeFocusWatch) {
    // the wish to keep a head button focused across redraws ends when the user goes elsewhere
    window.__microscopeFocusWatch = true;
    document.addEventListener('focusin', (e) => {
      if (!e.target.classList || !e.target.classList.contains('updatemenu-button')) window.__microscopeFocus = null;
    });
    document.addEventListener('pointerdown', () => { window.__microscopeFocus = null; });
  }
  const press = (el) => el.dispatchEvent(new MouseEvent('click', {bubbles: true}));
  const buttonName = (b) => { const t = b.textContent.trim(); return /^\\d+$/.test(t) ? 'head ' + t : t; };
  const label = () => {
    for (const gd of document.querySelectorAll('.js-plotly-plot')) {
      if (gd.layout && gd.layout.meta && gd.layout.meta.decorative) { gd.setAttribute('aria-hidden', 'true'); continue; }
      const t = gd.querySelector('.gtitle');
      const name = ((t && t.textContent) || 'Chart').trim();
      if (!gd.__a11yRedraw && gd.on) {  // restore the focus as soon as a redraw is drawn
        gd.__a11yRedraw = true; gd.on('plotly_afterplot', () => setTimeout(label, 0));
      }
      if (gd.getAttribute('aria-label') !== name) {
        gd.setAttribute('role', 'figure'); gd.setAttribute('aria-label', name);
        if (window.__microscopeAnnounce && Date.now() - window.__microscopeAnnounce < 10000) live.textContent = name;
      }
      const buttons = [...gd.querySelectorAll('.updatemenu-button')];
      buttons.forEach((b) => {
        const named = 'Show ' + buttonName(b);  // Plotly may rebind a button to another head on redraw
        if (b.getAttribute('aria-label') !== named) {
          b.setAttribute('tabindex', '0'); b.setAttribute('role', 'button'); b.setAttribute('aria-label', named);
        }
        if (b.__a11y) return;
        b.__a11y = true;
        b.addEventListener('keydown', (e) => {
          let target = null;
          if (e.key === 'Enter' || e.key === ' ') target = b;
          const all = [...gd.querySelectorAll('.updatemenu-button')], k = all.indexOf(b);
          if (e.key === 'ArrowRight') target = all[Math.min(k + 1, all.length - 1)];
          if (e.key === 'ArrowLeft') target = all[Math.max(k - 1, 0)];
          if (!target) return;
          e.preventDefault();
          window.__microscopeAnnounce = Date.now();
          window.__microscopeFocus = {label: target.getAttribute('aria-label')};
          target.focus(); press(target);
        });
      });
      for (const a of gd.querySelectorAll('.modebar-btn')) {
        if (a.__a11y) continue;
        a.__a11y = true;
        a.setAttribute('tabindex', '0'); a.setAttribute('role', 'button');
        a.setAttribute('aria-label', a.getAttribute('data-title') || 'chart tool');
        a.addEventListener('keydown', (e) => {
          if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); press(a); }
        });
      }
    }
    // a chart redrawn by the server (a head's exact weights) rebuilds its buttons: keep the focus
    // (however long the server took) unless the user has since focused or clicked something else
    const f = window.__microscopeFocus;
    if (f && (document.activeElement === document.body || !document.activeElement)) {
      const b = [...document.querySelectorAll('.updatemenu-button')].find(x => x.getAttribute('aria-label') === f.label);
      if (b) b.focus();
    }
  };
  label();
  const timer = setInterval(label, 250);
  return () => clearInterval(timer);
}
""".replace("= CSS;", f"= {json.dumps(_CSS)};")

_component = st.components.v2.component("microscope_a11y", js=_JS)


def mount() -> None:
    """The page script above; no HTML of its own."""
    _component(key="a11y")


def dataframe(data, name: str, **kwargs) -> None:
    """``st.dataframe`` (sortable, for the eye: a canvas screen readers cannot read), then the same
    rows as an HTML table in a collapsed "As text" expander (every cell escaped)."""
    import pandas as pd

    st.dataframe(data, **kwargs)
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    with st.expander(f"As text: {markdown_text(name)}"):
        table = frame.to_html(index=False, escape=True, border=0, na_rep="—",
                              float_format=lambda x: f"{x:.4g}")
        st.html(table.replace(">", f'><caption style="text-align: left;">{html.escape(name)}</caption>', 1))


def text_alternative(fig, n: int = 8) -> None:
    """A collapsed "As text" table under a chart (viz.alt.describe)."""
    with st.expander(f"As text: {markdown_text(preview(alt.name(fig), 80))}"):
        st.html(alt.table_html(fig, n))
