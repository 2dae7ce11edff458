"""Putting a figure on a page: ``plot`` (camera button, tall figures boxed, the text alternative
under it), the server-wide figure cache (``figure``, ``shared_figure``), the head map whose
buttons relay clicks to the server, and Plotly's code loaded early."""
from __future__ import annotations

import functools
import threading
import time

import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

from ui import chart, state, view
from ui.a11y import text_alternative
from ui.cache import Started
from ui.resources import figure_cache
from ui.runs import trace_key
from viz import alt
from viz.plain import PLAIN, kind

DRAWN = "_charts_drawn"  # this run's charts, (name, kind, key); app.py empties it at the top of a run

# Streamlit's Plotly template names the theme's colours by placeholders, which its chart element
# swapped in the browser. The app's own element (ui/chart.py) swaps nothing: the template carries
# this app's colours (viz.palette.STREAMLIT_THEME: each placeholder → what Streamlit 1.67's browser
# code puts there for .streamlit/config.toml's theme) and ui.chart the theme's layout;
# tests/test_browser_chart_theme.py checks both against Streamlit's own element.


@functools.cache  # once per process, before the app builds a figure
def streamlit_template():
    """Streamlit's Plotly template as Streamlit registered it (its placeholders); the default
    template is from now on the same with ``STREAMLIT_THEME``'s colours in their place."""
    import streamlit.elements.plotly_chart  # noqa: F401  registers "streamlit" as Plotly's default template

    from viz.palette import STREAMLIT_THEME

    def resolved(v):
        if isinstance(v, dict):
            return {k: resolved(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [resolved(x) for x in v]
        return STREAMLIT_THEME.get(v, v) if isinstance(v, str) else v

    original = pio.templates["streamlit"]
    pio.templates["streamlit"] = go.layout.Template(resolved(original.to_plotly_json()))
    return original


streamlit_template()


def figure(build, trace, *args, **kwargs):
    """``build(trace, *args, **kwargs)`` (a viz/ function), from the figure cache when the Trace
    came from ``run_trace``. Figures are shared: nobody may change one after this."""
    return shared_figure(trace, _name(build, args, kwargs), lambda: build(trace, *args, **kwargs))


def _name(build, args: tuple, kwargs: dict) -> tuple:
    return build.__module__, build.__qualname__, args, tuple(sorted(kwargs.items()))


_LATER = Started()  # the figures ``later`` started
# ``later`` waits this long first: a browser on the same machine (a laptop's demo) is drawing the
# click's chart then, and a build at once took the cores it draws with (benchmarks/HISTORY.md, session 40)
LATER_S = 0.6


def later(build, trace, *args, **kwargs) -> None:
    """``figure(build, trace, *args, **kwargs)`` built in a background thread, once, unless it is
    in the figure cache: a view the user may open next, built while they look at this one (issue
    71), ``LATER_S`` after the click's run asked for it. Not ahead of the click with the first map
    (``first_figure``): there it took the server's CPU from the click."""
    key = trace_key(trace)
    if key is None:
        return
    name = (key, *_name(build, args, kwargs))
    if not _LATER.claim(name, lambda: figure_cache().peek(name) is not None):
        return

    def run():
        time.sleep(LATER_S)
        try:
            figure(build, trace, *args, **kwargs)
        except Exception:  # noqa: BLE001  (the page builds it again when asked, and says what went wrong)
            pass

    threading.Thread(target=run, name="figure-later", daemon=True).start()


def shared_figure(trace, name: tuple, build):
    """``build()``, cached under the Trace's key and ``name``, which must say everything else the
    figure depends on (the Trace's key already holds the document, k, trigram blocking, weights,
    device, window and switched-off heads)."""
    key = trace_key(trace)
    return build() if key is None else figure_cache().get((key, *name), lambda: wired(build()))


def wired(fig):
    """A shared figure keeps, as ``fig._chart_bytes``, what the chart element sends for it (its
    JSON, themed: ``ui.chart.encode``), made once: each session's draw sends those bytes. (Streamlit's
    ``st.plotly_chart`` took a deep copy of the figure on every draw, each NumPy array converted to
    base64 again, and serialized it: 15-17 ms a draw of a 470-token map, benchmarks/README.md.)
    So its "As text" table (``fig._alt_table``, ui.a11y.text_alternative): reading 18 maps' traces
    back took 10-25 ms a draw."""
    for f in fig.values() if isinstance(fig, dict) else [fig]:  # or a dict of them (the Learn page's steps)
        if isinstance(f, go.Figure):
            f._chart_bytes, f._alt_table = chart.encode(f), alt.table_html(f)
    return fig


def preload_plotly():
    """plotly.js (4.8 MB, 1.4 MB gzipped) loads when a session's first chart mounts, on the first
    Summarize. An empty 10-px static chart at the foot of the sidebar loads it while the user is
    still pasting (the gain: benchmarks/README.md). It also carries a small token map (``_warm``)
    that the page draws once off-screen, then removes: plotly.js compiles its code as it first
    runs it: a new page drew its first 470-token map in 0.22 s, 0.17 after the warm-up map, 0.10
    once warm (``python -m benchmarks.plotly_ab``, session 40). The same 34 KB every run: past
    Streamlit's ``global.minCachedMessageSize`` (10 KB), the browser keeps the message, and a
    rerun sends a reference to it."""
    chart.draw(_blank(), "plotly_preload", {"staticPlot": True}, warm=_warm())


@functools.lru_cache(maxsize=1)
def _warm() -> bytes:
    """What ``ui.chart.draw`` sends for a 24-token map of even, made-up attention on 2 layers × 2
    heads, built as the BERT page's map is (exact weights, the other layer as a preview, buttons,
    sentence lines, colour bar), with no relay (the page's relay listens to charts so marked)."""
    import types

    import numpy as np

    from viz.attention import token_heatmap

    n = 24
    made_up = types.SimpleNamespace(tokens=[f"w{i}" for i in range(n)], token_sentence=np.arange(n) // 8,
                                    bert_attention=np.full((2, 2, n, n), 1 / n, dtype=np.float16))
    fig = token_heatmap(made_up, 0, 0, layers=True)
    fig.layout.meta = None
    fig.layout.title.text = "warm-up"
    return chart.encode(fig)


@functools.lru_cache(maxsize=1)
def _blank():
    from viz.common import blank

    return blank()


# The token heatmap's head and layer buttons switch maps in the browser; a map shown as a preview
# (viz.attention.token_heatmap) then needs its exact weights from the server. Streamlit passes no
# Plotly button clicks to Python, so this component (no HTML, JS in the page) listens for them on
# the chart marked ``layout.meta.relay`` and sends the clicked button's label as a trigger: "layer"
# for the layer row, "head" for the head rows (only where ``relay`` is "head": else every head is exact).
# The page's Layer selector is a rerun away from its map: where the page has one selector and one
# chart with layer buttons, a layer picked in it presses that layer's button at once (its preview),
# with no trigger (the selector's own rerun brings the exact map).
_RELAY_JS = """
export default function(component) {
  const { setTriggerValue } = component;
  // once the preview has painted (two frames, then 50 ms): the rerun's messages would delay it
  const later = (f) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(f, 50)));
  const relay = (heads) => (e) => {
    if (window.__microscopeSelector) return;  // pressed for the Layer selector
    const which = e.menu && e.menu.name === 'layer' ? 'layer' : 'head';
    if (which === 'layer' || heads) later(() => setTriggerValue(which, e.button.label));
  };
  const both = relay(true), layers = relay(false);
  const layered = (gd) => ((gd._fullLayout && gd._fullLayout.updatemenus) || []).some((m) => m.name === 'layer');
  const only = (selector) => { const all = document.querySelectorAll(selector); return all.length === 1 ? all[0] : null; };
  const pressLayer = (label) => {
    const gd = [...document.querySelectorAll('[data-testid=stMain] .js-plotly-plot')].filter(layered);
    if (gd.length !== 1) return;
    let i = 0;  // Plotly draws every menu's buttons in menu order
    for (const menu of gd[0]._fullLayout.updatemenus) {
      for (const [k, b] of (menu.buttons || []).entries()) {
        if (menu.name === 'layer' && b.label === label) {
          if (menu.active === k) return;
          window.__microscopeSelector = true;
          try {
            gd[0].querySelectorAll('.updatemenu-button')[i].dispatchEvent(new MouseEvent('click', {bubbles: true}));
          } finally { window.__microscopeSelector = false; }
          return;
        }
        i++;
      }
    }
  };
  const hook = () => {
    for (const gd of document.querySelectorAll('.js-plotly-plot')) {
      const mode = gd.layout && gd.layout.meta && gd.layout.meta.relay;
      const send = mode === 'head' ? both : mode === 'layer' ? layers : null;
      if (!send || gd.__relay === send) continue;
      if (gd.__relay) gd.removeListener('plotly_buttonclicked', gd.__relay);
      gd.__relay = send;
      gd.on('plotly_buttonclicked', send);
    }
    const picker = only('[data-testid=stMain] input[role=combobox][aria-label="Layer"]');
    if (picker && !picker.__follow) {  // its value attribute changes as an option is picked
      picker.__follow = true;
      new MutationObserver(() => {
        const v = picker.getAttribute('value');
        if (picker.getAttribute('aria-expanded') === 'false' && /^[0-9]+$/.test(v || '')) pressLayer(v);
      }).observe(picker, {attributes: true, attributeFilter: ['value', 'aria-expanded']});
    }
  };
  hook();
  const timer = setInterval(hook, 200);  // the chart mounts after this component, and remounts
  return () => clearInterval(timer);
}
"""


_relay = st.components.v2.component("microscope_head_relay", js=_RELAY_JS)


def head_map(trace, layer: int, key: str, plot_key: str, layer_key: str | None = None, **kwargs):
    """The token heatmap of ``layer`` on the head kept in session ``key`` (None = mean), exact;
    a head button's click comes back through the relay, which stores that head and reruns.
    ``layer_key``: the figure has layer buttons too, and a click stores its layer there (in the
    trigger's callback, which runs before the page draws that key's selector)."""
    relay_key = f"{key}_relay"

    def take_layer():
        label = (st.session_state.get(relay_key) or {}).get("layer")
        if layer_key and str(label).isdigit() and 1 <= int(label) <= len(trace.bert_attention):  # the browser's word
            st.session_state[layer_key] = int(label) - 1

    clicked = _relay(key=relay_key, on_head_change=lambda: None, on_layer_change=take_layer).head
    if clicked == "mean" or (str(clicked).isdigit() and 1 <= int(clicked) <= trace.bert_attention.shape[1]):
        st.session_state[key] = None if clicked == "mean" else int(clicked) - 1
    st.session_state.setdefault(key, 0)  # there from the first draw: a class counts a later pick as a change
    head = st.session_state.get(state.keep(key), 0)
    from viz.attention import token_heatmap

    teaching = bool(st.session_state.get(state.TEACHING))  # its students follow the head: every pick goes to the server
    plot(figure(token_heatmap, trace, layer, head, relay=teaching, layers=layer_key is not None, **kwargs),
         key=plot_key)


def first_figure(page: str):
    """What ``page`` draws first after the next Summarize, as ``then(trace)`` for ``ui.runs.ahead``
    to build beside the Trace (issue 71: the figure was most of the server's part of the first
    heatmap), or None. The BERT page's one-head map, on the layer, head and settings the session
    has now, under the key ``head_map`` will ask the figure cache for (pages/bert_attention.py)."""
    s = st.session_state
    if page != "bert_attention" or s.get("bert_view", view.default("bert_view")) != "One head" \
            or s.get("bert_show", view.default("bert_show")) != "attention":
        return None
    layer, head = s.get("bert_layer", 0), s.get("bert_head", 0)
    opts = dict(hide_special=bool(s.get("bert_hide", view.default("bert_hide"))), relay=bool(s.get(state.TEACHING)),
                colorscale=s.get("bert_colors", view.default("bert_colors")), layers=True,
                scale=s.get("bert_scale", view.default("bert_scale")))

    def build(trace):
        from viz.attention import token_heatmap

        n_layers, n_heads = trace.bert_attention.shape[:2]
        if layer in range(n_layers) and head in (None, *range(n_heads)):  # (a view of another model's)
            sents = sorted({int(i) for i in trace.token_sentence})  # a new result: all of them (view.fresh)
            figure(token_heatmap, trace, layer, head, sentence_range=(sents[0], sents[-1]), **opts)
    return build


CAPTURE = state.CAPTURE  # while a story's slide is made: the figures plot() is given, in order
MAX_FIGURE_HEIGHT = 900  # px: a taller figure (a row per sentence of a long document) scrolls in a box this high


def plot(fig, key: str | None = None):
    """A figure with Plotly's camera button set to the sidebar's format (PNG or SVG), a file name
    after the figure and 2× scale for slides. A figure taller than ``MAX_FIGURE_HEIGHT`` is drawn
    whole inside a scrolling box of that height, so what follows it stays a screen away. Under it,
    what it shows as text (ui.a11y.text_alternative) and, under the first chart of its kind on the
    page, "What am I looking at?": the chart in plain words (viz.plain)."""
    captured = st.session_state.get(CAPTURE)
    if captured is not None:  # a story's slide is being made (ui.present): kept, not drawn
        captured.append((fig, key))
        return
    fmt = st.session_state.get("figure_format", "png")
    config = {"displaylogo": False, "toImageButtonOptions": dict(
        format=fmt, filename=f"microscope_{key or 'figure'}", scale=2 if fmt == "png" else 1)}
    if (fig.layout.height or 0) <= MAX_FIGURE_HEIGHT:
        chart.draw(fig, key, config)
    else:
        st.caption(f"A tall chart ({fig.layout.height:,} px): scroll inside its box to see all of it.")
        with st.container(height=MAX_FIGURE_HEIGHT, key=f"{key}_box" if key else None):
            # not the unboxed chart's key
            chart.draw(fig, f"{key}_tall" if key else None, config)
    text_alternative(fig)
    drawn, what = st.session_state.setdefault(DRAWN, []), kind(key)
    if what and all(d[1] != what for d in drawn):  # once per kind and page
        with st.expander("What am I looking at?", icon=":material/help:"):
            st.markdown(PLAIN[what])
    drawn.append((alt.name(fig), what, key))


def html_block(body: str, key: str, name: str, head: str = "", page: bool = True) -> None:
    """Page HTML that a story step may show instead of a chart (the Why page's words): drawn as
    ``st.html``; kept, not drawn, while a slide is made. ``head``: HTML over it on the slide only
    (what the page shows in widgets of its own: a verdict, metrics); ``page`` False: for slides only
    (the page shows the same otherwise, as a table). ``body`` and ``head`` must be safe HTML (text escaped)."""
    captured = st.session_state.get(CAPTURE)
    if captured is not None:
        captured.append((head + body, key))
        return
    if page:
        st.html(body)
    st.session_state.setdefault(DRAWN, []).append((name, "html", key))


def forget_kind(what: str) -> None:
    """A fragment's rerun draws its charts of kind ``what`` again: they are not drawn yet."""
    st.session_state[DRAWN] = [d for d in st.session_state.get(DRAWN, []) if d[1] != what]


def drawn_names() -> list[str]:
    """The names of the charts this run has drawn, once each (the Figure downloads panel lists them)."""
    return list(dict.fromkeys(d[0] for d in st.session_state.get(DRAWN, []) if d[1] != "html"))


def drawn_charts() -> dict[str, str]:
    """This run's charts (and HTML blocks) that a story step can show: their key → their name."""
    return {d[2]: d[0] for d in st.session_state.get(DRAWN, []) if d[2]}
