"""BERT self-attention figures: one head, all heads of a layer, all layers × heads, sentences.

``bert_attention[l, h, i, j]`` is softmax(q_i · k_j / √d_h + mask_j) (Vaswani et al. 2017, Eq. 1):
row i = the query token, column j = the key token; every row sums to 1.
"""
from __future__ import annotations

import copy
import functools

import numpy as np
import plotly.graph_objects as go
from plotly.colors import get_colorscale
from plotly.subplots import make_subplots

from .common import CLIP, WEIGHT_HOVER, level_colorbar, pool, quantize, sentence_label, token_labels, weight_map
from .palette import SENTENCE_LINE

SPECIAL = ("[CLS]", "[SEP]", "[PAD]")


def token_index(trace, hide_special: bool = False, sentence_range: tuple[int, int] | None = None) -> np.ndarray:
    """Indices of the tokens to show: optionally without [CLS]/[SEP], optionally only the tokens
    of summary sentences ``sentence_range = (first, last)`` (inclusive)."""
    keep = np.ones(len(trace.tokens), dtype=bool)
    if hide_special:
        keep &= ~np.isin(np.array(trace.tokens, dtype=object), SPECIAL)
    if sentence_range is not None:
        a, b = sentence_range
        keep &= (trace.token_sentence >= a) & (trace.token_sentence <= b)
    return np.flatnonzero(keep)


def head_matrix(trace, layer: int, head: int | None) -> np.ndarray:
    """[T, T] float32 attention of one head, or the average over heads (``head=None``)."""
    a = trace.bert_attention[layer].astype(np.float32)    # [H, T, T]
    return a.mean(0) if head is None else a[head]


def _sentence_lines(trace, index: np.ndarray) -> list[dict]:
    """Thin lines between sentences, in category units of the shown tokens."""
    sent = trace.token_sentence[index]
    cuts = np.flatnonzero(np.diff(sent)) + 0.5
    line = dict(color=SENTENCE_LINE, width=1)
    return ([dict(type="line", xref="x", yref="paper", x0=c, x1=c, y0=0, y1=1, line=line) for c in cuts]
            + [dict(type="line", yref="y", xref="paper", y0=c, y1=c, x0=0, x1=1, line=line) for c in cuts])


EXACT_TOKENS = 160  # windows up to this long send every head's map exact: no head button needs the server
# Past that, the heads not shown ride along block-averaged to at most this many cells a side: at 160
# their 12 previews were 400 of a 470-token view's 1,124 KB, which Chromium's share of drawing it (and
# the Layer selector's) grew with; at 80, 808 KB (benchmarks/README.md, session 37)
PREVIEW_CELLS = 80
LAYER_PREVIEW_CELLS = 80  # the other layers: 11 of them (BERT-base) then add ~0.1 MB


def token_heatmap(trace, layer: int, head: int | None, *, hide_special: bool = False,
                  sentence_range: tuple[int, int] | None = None, colorscale: str = "Viridis",
                  scale: str = "sqrt", height: int = 720, preview_cells: int | None = PREVIEW_CELLS,
                  what: str = "weight", relay: bool = False, layers: bool = False) -> go.Figure:
    """Token × token attention of one layer: queries down, keys across. ``what`` the maps hold, as
    the hover, colour bar and title say it ("weight"; e.g. "norm-weighted share").

    One heatmap trace per head plus the head mean (``head=None``), only ``head`` visible (and first);
    buttons above the map (mean, 1, 2, …) show another one in the browser, without a round trip.
    The shown map is exact: z holds each weight in 1/10,000 as uint16 (the hover prints the
    weight to 4 decimals), coloured on the ``scale`` mapping (``viz.common.weight_map``). With
    more than ``EXACT_TOKENS`` and ``preview_cells`` tokens the other maps are previews: block means
    of k × k tokens (at most ``preview_cells`` blocks a side) as uint8 colour levels (1 byte a cell,
    ~1/(2k²) of the exact map's bytes), titled and hovered as previews; the page then asks the
    server for the head a button showed, exactly
    (``layout.meta = {"relay": "head"}``, ``ui.figures.head_map``; ``relay=True``: also when every
    map is exact, so a class's teacher's pick reaches the server and the students). ``preview_cells=None``
    sends every map exact (a figure for a file of its own). The exact weights of all 13 maps do not fit
    a light page: at 470 tokens their entropy alone is 1.4-1.9 MB (benchmarks/README.md).

    ``layers=True``: a row of layer buttons too, each showing the same head on that layer as a
    preview (uint8 levels of blocks, at most ``LAYER_PREVIEW_CELLS`` a side), whose exact map the
    page always asks for (``meta.relay`` "layer" when head clicks need no server): a layer switch
    draws at once, like a head's.
    """
    index = token_index(trace, hide_special, sentence_range)
    labels = token_labels(trace.tokens, index)
    a = trace.bert_attention[layer][:, index][:, :, index].astype(np.float32, copy=False)   # [H, n, n]
    heads = [None, *range(len(a))]                          # None = the mean over heads
    maps = np.concatenate([a.mean(0, keepdims=True), a])   # [1 + H, n, n], in the order of heads
    n = len(index)
    # a preview's block side (1: every map exact)
    k = 1 if preview_cells is None or n <= max(preview_cells, EXACT_TOKENS) else -(-n // preview_cells)
    hover = f"query %{{y}}<br>key %{{x}}<br>{what} " + WEIGHT_HOVER + "<extra></extra>"
    shown = "" if what == "weight" else f" ({what})"
    name = lambda h: "mean of heads" if h is None else f"head {h + 1}"

    def preview(m: np.ndarray, k: int = k) -> go.Heatmap:
        """Block means of ``m``, coloured like its exact map would be (the same clip value)."""
        vmax = float(np.percentile(m, CLIP)) if scale != "linear" else float(m.max())
        z, vmax = quantize(block_means(m, k), vmax=vmax, scale=scale)
        return dict(type="heatmap", x=labels[::k], y=labels[::k], z=z, zmin=0, zmax=255, colorscale=named,
                    visible=False, colorbar=level_colorbar(vmax, what.split()[-1], scale=scale,
                                                           clipped=bool(m.max() > vmax)),
                    hovertemplate=f"query %{{y}}<br>key %{{x}}<br>preview: blocks of {k} × {k} tokens, "
                                  "the exact weights are on their way<extra></extra>")

    # Traces as plain dicts and the figure unvalidated: validating 18 maps' arrays and settings was
    # half of the figure's build (0.17 → 0.09 s at 470 tokens; the JSON is the same: issue 71)
    named = get_colorscale(colorscale)  # what validation made of a scale's name
    traces, titles = {}, {}
    for h, m in zip(heads, maps):
        exact = h == head or k == 1
        traces[h] = (dict(type="heatmap", x=labels, y=labels, hovertemplate=hover, visible=h == head,
                          **weight_map(m, colorscale, scale, what.split()[-1])) if exact else preview(m))
        traces[h]["name"] = name(h)
        titles[h] = f"BERT layer {layer + 1}, {name(h)}{shown}{'' if exact else ' (preview)'}: {n} × {n} tokens"
    # The shown (exact) map first: Plotly orders a category axis by first appearance, and a
    # preview names only every k-th token (an explicit categoryarray made each switch ~1.5x slower).
    order = [head] + [h for h in heads if h != head]
    data = [traces[h] for h in order]
    others = [l for l in range(len(trace.bert_attention)) if layers and l != layer]
    layer_titles = {layer: titles[head]}
    kl = max(k, -(-n // LAYER_PREVIEW_CELLS))
    for l in others:  # the shown head on every other layer (always previews: the exact map comes from the server)
        m = trace.bert_attention[l]
        m = (m.mean(0, dtype=np.float32) if head is None else m[head])[index][:, index].astype(np.float32, copy=False)
        data.append(preview(m, kl))
        data[-1]["name"] = f"layer {l + 1}, {name(head)}"
        layer_titles[l] = f"BERT layer {l + 1}, {name(head)}{shown} (preview): {n} × {n} tokens"
    fig = go.Figure(data, _validate=False)
    rows = head_rows(heads)
    lrows = head_rows(list(range(len(trace.bert_attention)))) if layers else []
    menus = (layer_menus(lrows, layer, head, rows, others, len(data), layer_titles)
             + head_menus(rows, head, order, titles, len(data), lrows, layer))
    plot_px = height - 130 - 60 - 32 * (len(rows) + len(lrows))
    for r, menu in enumerate(menus):  # the first row on top
        menu["y"] = 1.0 + 32 * (len(menus) - 1 - r) / max(plot_px, 1)
    relayed = "head" if k > 1 or relay else "layer" if layers else None
    # the title at the figure's top edge, the button rows below it (Plotly's default puts the
    # title in the middle of the top margin, where the buttons are)
    fig.update_layout(title=dict(text=titles[head], y=1, yref="container", yanchor="top", pad=dict(t=10)),
                      height=height, margin=dict(l=130, r=10, t=60 + 32 * len(menus), b=130),
                      shapes=_sentence_lines(trace, index), updatemenus=menus,
                      **({"meta": dict(relay=relayed)} if relayed else {}),  # (unvalidated: no None kept)
                      annotations=[dict(text=label, x=0, xanchor="right", y=menus[first]["y"], yanchor="bottom",
                                        xref="paper", yref="paper", showarrow=False, yshift=8)
                                   for label, first in (("layer", 0), ("head", len(lrows)))[0 if layers else 1:]])
    # At most 40 labels per axis (more appear on zoom) and fixed margins: Plotly then skips
    # measuring hundreds of labels, which made each draw ~3x slower (benchmarks/plotly_ab.py).
    ticks = dict(type="category", nticks=40, automargin=False)
    fig.update_xaxes(title="key token (attended to)", tickangle=-90, **ticks)
    fig.update_yaxes(title="query token (attending)", autorange="reversed", **ticks)
    return fig


def head_rows(heads: list) -> list[list]:
    """The head buttons in rows of at most 7 (mean, 1-6 / 7-12 for 12 heads): one row of 13 was
    wider than the map in a narrow column (1024-px window, What if side by side) and cut off."""
    n = -(-len(heads) // 7)
    size = -(-len(heads) // n)
    return [heads[i:i + size] for i in range(0, len(heads), size)]


def _menu(name: str, buttons: list[dict], active: int) -> dict:
    return dict(type="buttons", name=name, direction="right", buttons=buttons, active=active, showactive=True,
                x=0, xanchor="left", yanchor="bottom", pad=dict(t=4, b=4), font=dict(size=11))


def _active(rows: list[list], value, offset: int = 0) -> dict:
    """Plotly ``update`` args marking the button of ``value`` alone as active in menus ``offset``…"""
    return {f"updatemenus[{offset + o}].active": row.index(value) if value in row else -1 for o, row in enumerate(rows)}


def head_menus(rows: list[list], head, order: list, titles: dict, n_traces: int | None = None,
               lrows: list[list] = (), layer: int | None = None) -> list[dict]:
    """One Plotly button menu per row of heads (after the ``lrows`` layer menus); a button shows
    its head on the figure's ``layer``, retitles the figure and marks itself alone as active, and
    the layer rows back on ``layer``."""
    n_traces = n_traces or len(order)

    def button(h):
        visible = [g == h for g in order] + [False] * (n_traces - len(order))
        return dict(label="mean" if h is None else str(h + 1), method="update",
                    args=[{"visible": visible}, {"title.text": titles[h], **_active(lrows, layer),
                                                 **_active(rows, h, len(lrows))}])

    return [_menu("head", [button(h) for h in row], row.index(head) if head in row else -1) for row in rows]


def layer_menus(lrows: list[list], layer: int, head, hrows: list[list], others: list[int], n_traces: int,
                titles: dict) -> list[dict]:
    """The layer rows: a button shows ``head`` on its layer (the trace after the head maps, in
    ``others``' order; the figure's own layer is its first trace), marks itself alone as active
    and the head rows on ``head``."""
    first = n_traces - len(others)  # where the other layers' previews start

    def button(l):
        visible = [False] * n_traces
        visible[0 if l == layer else first + others.index(l)] = True
        return dict(label=str(l + 1), method="update",
                    args=[{"visible": visible}, {"title.text": titles[l], **_active(lrows, l),
                                                 **_active(hrows, head, len(lrows))}])

    return [_menu("layer", [button(l) for l in row], row.index(layer) if layer in row else -1) for row in lrows]


def block_means(m: np.ndarray, k: int) -> np.ndarray:
    """[n, n] → [⌈n/k⌉, ⌈n/k⌉] means of k × k blocks starting at tokens 0, k, 2k, … (the last
    block may be smaller)."""
    starts = np.arange(0, len(m), k)
    sizes = np.diff(np.r_[starts, len(m)]).astype(np.float32)
    return np.add.reduceat(np.add.reduceat(m, starts, axis=0), starts, axis=1) / sizes[:, None] / sizes[None, :]


@functools.lru_cache(maxsize=16)
def _grid_layout(rows: int, cols: int, titles: tuple[str, ...]) -> dict:
    """The small multiples' layout (axes without tick labels, y top-down, 10-px titles), once per
    grid: ``make_subplots`` and an ``add_trace(row=, col=)`` per map took ~200 of the 280 ms that
    72 maps took to build (the figure is the same: tests/test_viz.py). A layer's heads are drawn so;
    all layers × heads as one ``mosaic``."""
    layout = make_subplots(rows=rows, cols=cols, subplot_titles=list(titles), horizontal_spacing=0.01,
                           vertical_spacing=0.04).layout.to_plotly_json()
    for name, axis in layout.items():
        if name.startswith(("xaxis", "yaxis")):
            axis.update(showticklabels=False, **({"autorange": "reversed"} if name[0] == "y" else {}))
    for a in layout.get("annotations", ()):
        a["font"] = {**a.get("font", {}), "size": 10}
    return layout


def _levels(mats: np.ndarray, colorscale: str, scale: str) -> tuple[np.ndarray, dict]:
    """Maps' uint8 colour levels and the one colour axis they share, its bar showing true weights
    (``_grid``'s small multiples and ``mosaic``'s tiles)."""
    z, vmax = quantize(mats, scale=scale, clip=100.0 if scale == "linear" else CLIP)
    return z, dict(colorscale=colorscale, cmin=0, cmax=255,
                   colorbar=level_colorbar(vmax, scale=scale, clipped=bool(mats.max() > vmax)))


def _grid(mats: np.ndarray, titles: list[str], rows: int, cols: int, colorscale: str,
          height: int, title: str, scale: str = "sqrt") -> go.Figure:
    """Small multiples sharing one colour axis (mats [n, a, b] float32, small: the true mean
    weights ride along as float32 customdata for the hover); map k in subplot k (row-major)."""
    z, coloraxis = _levels(mats, colorscale, scale)
    axis = lambda k: "" if k == 0 else str(k + 1)  # noqa: E731  make_subplots' names: x, x2, x3, …
    data = [dict(type="heatmap", z=z[k], customdata=mats[k].astype(np.float32), coloraxis="coloraxis", name=titles[k],
                 xaxis="x" + axis(k), yaxis="y" + axis(k),
                 hovertemplate=titles[k] + "<br>row %{y}, col %{x}: mean weight %{customdata:.4f}<extra></extra>")
            for k in range(len(mats))]
    layout = {**copy.deepcopy(_grid_layout(rows, cols, tuple(titles))), "height": height, "title": title,
              "coloraxis": coloraxis,
              "margin": dict(l=10, r=10, t=60, b=10)}
    return go.Figure(dict(data=data, layout=layout))


def head_grid(trace, layer: int, *, hide_special: bool = False,
              sentence_range: tuple[int, int] | None = None, colorscale: str = "Viridis",
              max_bins: int = 96, cols: int = 4, scale: str = "sqrt") -> go.Figure:
    """All heads of one layer, each block-averaged to at most ``max_bins``² cells."""
    index = token_index(trace, hide_special, sentence_range)
    a = trace.bert_attention[layer][:, index][:, :, index].astype(np.float32)   # [H, n, n]
    mats = pool(a, max_bins)
    h = len(mats)
    rows = -(-h // cols)
    return _grid(mats, [f"head {k + 1}" for k in range(h)], rows, cols, colorscale, 230 * rows,
                 f"BERT layer {layer + 1}: all {h} heads ({len(index)} tokens, pooled to {mats.shape[-1]} bins)", scale)


def overview(trace, *, colorscale: str = "Viridis", max_bins: int = 32, level: str = "token",
             scale: str = "sqrt") -> go.Figure:
    """All layers × heads: rows = layers, columns = heads. ``level="sentence"`` shows
    sentence × sentence attention mass instead of pooled tokens."""
    L, H = trace.bert_attention.shape[:2]
    if level == "sentence":
        m = sentence_mass(trace.bert_attention.astype(np.float32), trace.token_sentence)[0]  # [L, H, S, S]
    else:
        m = pool(trace.bert_attention.astype(np.float32).reshape(L * H, *trace.bert_attention.shape[2:]), max_bins)
    return mosaic(m.reshape(L, H, *m.shape[-2:]), colorscale, 95 * L + 80, scale,
                  f"All {L} layers × {H} heads ({'sentence mass' if level == 'sentence' else 'pooled tokens'})")


def mosaic(mats: np.ndarray, colorscale: str, height: int, scale: str, title: str) -> go.Figure:
    """Maps [L, H, a, b] as one heatmap of L × H tiles, (l, h) in tile row l, column h, white
    lines between tiles, layers and heads named on the axes; the hover names the layer, head, row
    and column (their categories) and the true mean weight. One trace on one pair of axes: Chromium
    drew the 72 subplots this was before (``_grid``) in 1.47 s on the 2-core machine, this in 0.19 s;
    most of a class's wait after Next to "All layers × heads" (benchmarks/README.md, issue 71)."""
    L, H, a, b = mats.shape
    z, coloraxis = _levels(mats, colorscale, scale)
    tiles = lambda x: x.transpose(0, 2, 1, 3).reshape(L * a, H * b)  # noqa: E731  [L·a, H·b]
    rows = [f"layer {l + 1}, row {i + 1}" for l in range(L) for i in range(a)]
    cols = [f"head {h + 1}, col {j + 1}" for h in range(H) for j in range(b)]
    line = dict(type="line", xref="x", yref="y", line=dict(color="white", width=2), layer="above")
    shapes = ([{**line, "x0": h * b - 0.5, "x1": h * b - 0.5, "y0": -0.5, "y1": L * a - 0.5} for h in range(1, H)]
              + [{**line, "y0": l * a - 0.5, "y1": l * a - 0.5, "x0": -0.5, "x1": H * b - 0.5} for l in range(1, L)])
    axis = lambda n, k, name: dict(type="category", tickmode="array", tickvals=[i * k + (k - 1) / 2 for i in range(n)],  # noqa: E731
                                   ticktext=[f"{name}{i + 1}" for i in range(n)], showgrid=False, ticks="")
    data = [dict(type="heatmap", z=tiles(z), customdata=tiles(mats.astype(np.float32)), x=cols, y=rows,
                 coloraxis="coloraxis", name=title,
                 hovertemplate="%{y} → %{x}: mean weight %{customdata:.4f}<extra></extra>")]
    layout = {"height": height, "title": title, "shapes": shapes,
              "xaxis": {**axis(H, b, "H"), "side": "top"}, "yaxis": {**axis(L, a, "L"), "autorange": "reversed"},
              "coloraxis": coloraxis,
              "margin": dict(l=40, r=10, t=90, b=10)}
    return go.Figure(dict(data=data, layout=layout))


def sentence_mass(a: np.ndarray, token_sentence: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[..., T, T] token attention → [..., S, S] sentence mass: M[i, j] = mean over the query
    tokens t of sentence i of Σ_{key tokens u of sentence j} A[t, u]; rows sum to 1. A sentence
    is a contiguous run of tokens, so two ``reduceat`` passes do it for every head at once.
    Returns (M float32, sentence ids)."""
    ts = np.asarray(token_sentence)
    starts = np.flatnonzero(np.r_[True, ts[1:] != ts[:-1]])
    summed = np.add.reduceat(np.add.reduceat(a, starts, axis=-1), starts, axis=-2)  # [..., S, S]
    sizes = np.diff(np.r_[starts, len(ts)]).astype(np.float32)  # query tokens per sentence
    return (summed / sizes[:, None]).astype(np.float32), ts[starts]


def sentence_matrix(trace, layer: int, head: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Sentence × sentence attention mass of one head (or the head mean): (M [S, S], sentence ids)."""
    return sentence_mass(head_matrix(trace, layer, head), trace.token_sentence)


def sentence_heatmap(trace, layer: int, head: int | None, *, colorscale: str = "Viridis",
                     height: int = 560) -> go.Figure:
    m, sents = sentence_matrix(trace, layer, head)
    z, vmax = quantize(m)  # sentence mass: few cells, linear reads fine
    labels = np.array([sentence_label(trace, int(i), 28) for i in sents], dtype=object)
    name = "mean of heads" if head is None else f"head {head + 1}"
    fig = go.Figure(go.Heatmap(
        z=z, x=labels, y=labels, customdata=m, colorscale=colorscale, zmin=0, zmax=255,
        colorbar=level_colorbar(vmax, "mass"),
        hovertemplate="from %{y}<br>to %{x}<br>mass %{customdata:.3f}<extra></extra>"))
    fig.update_layout(title=f"Sentence → sentence attention mass, layer {layer + 1}, {name}",
                      height=height, margin=dict(l=10, r=10, t=50, b=10))
    fig.update_xaxes(title="key sentence", type="category", tickangle=-60)
    fig.update_yaxes(title="query sentence", type="category", autorange="reversed")
    return fig
