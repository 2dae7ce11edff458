"""The pure figure functions in viz/: shapes, labels, dtypes of the arrays sent to Plotly."""
from __future__ import annotations

import dataclasses

import numpy as np
import plotly.io as pio
import pytest

from conftest import synthetic_trace
from viz import attention as A
from viz import inter, learn, masks, summary
from viz.common import markdown_text, pool, quantize


def test_quantize_uint8_levels():
    p = np.array([[0.0, 0.25], [0.5, 1.0]], dtype=np.float32)
    z, vmax = quantize(p)
    assert z.dtype == np.uint8 and vmax == 1.0
    assert z.tolist() == [[0, 64], [128, 255]]
    z, vmax = quantize(p * 0.1)  # scaled to the max: small maps still use all 256 levels
    assert z.max() == 255 and vmax == pytest.approx(0.1)


@pytest.mark.parametrize("scale", ["linear", "sqrt", "log"])
def test_colour_mappings_are_monotone_and_labelled_with_true_weights(scale):
    from viz.common import _forward, _inverse, level_colorbar

    p = np.array([0.0, 1e-4, 1e-3, 0.01, 0.1, 0.5, 0.9], dtype=np.float32)
    z, vmax = quantize(p, scale=scale, clip=90)
    assert vmax == pytest.approx(np.percentile(p, 90)) and z[-1] == 255  # clipped: the top colour
    assert np.all(np.diff(z.astype(int)) >= 0) and z[0] == 0
    # the level is the mapped weight to within half a level, and decodes back through the inverse
    assert np.abs(_forward(np.minimum(p, vmax) / vmax, scale) - z / 255.0).max() <= 0.5 / 255 + 1e-6
    assert np.allclose(_forward(_inverse(z / 255.0, scale), scale), z / 255.0, atol=1e-6)
    bar = level_colorbar(vmax, scale=scale, clipped=True)
    assert bar["ticktext"][0] == "0" and bar["ticktext"][-1].startswith("≥")


@pytest.mark.parametrize("scale", ["sqrt", "log"])
def test_weight_colour_scale_follows_the_mapping(scale):
    from viz.common import _forward, weight_colorscale, weight_map

    stops = weight_colorscale("Viridis", scale)
    x = np.array([s[0] for s in stops])
    assert x[0] == 0 and x[-1] == pytest.approx(1) and np.all(np.diff(x) > 0)
    # the colour at weight fraction x is the base scale's colour at _forward(x): sampled back
    assert np.allclose(_forward(x, scale), np.linspace(0, 1, len(stops)), atol=1e-6)
    m = np.full((100, 100), 1e-3, dtype=np.float32)
    m[:20, 0] = 0.9  # 0.2% of the cells: above the 99.5th percentile
    args = weight_map(m, scale=scale)
    assert args["zmax"] < 0.9 * 1e4 and args["colorbar"]["ticktext"][-1].startswith("≥")  # clipped
    # issue 72: the labels stand apart on the bar (log's 0, 0.005 and 0.03 of the top overprinted), the
    # top and 0 always kept, each label the weight at its own place
    from viz.common import BASIS, MIN_TICK_GAP

    bar = args["colorbar"]
    at = np.asarray(bar["tickvals"], dtype=np.float64) / args["zmax"]
    assert at[0] == 0 and at[-1] == pytest.approx(1) and np.all(np.diff(at) >= MIN_TICK_GAP)
    assert len(at) == len(bar["ticktext"]) >= 3
    assert [float(t.lstrip("≥ ")) for t in bar["ticktext"]] == pytest.approx(
        [float(f"{v:.2g}") for v in np.asarray(bar["tickvals"]) / BASIS], rel=1e-6)


def test_weak_attention_is_visible_with_log():
    p = np.full((100, 100), 1e-3, dtype=np.float32)
    p[:, 0] = 0.9  # one column takes most of the weight, as [CLS]/[SEP] do
    assert quantize(p)[0][:, 1:].max() == 0                        # linear: everything else black
    assert quantize(p, scale="sqrt", clip=99.5)[0][:, 1:].min() > 5    # √: dim
    assert quantize(p, scale="log", clip=99.5)[0][:, 1:].min() > 25   # log: a tenth of the colour scale


def test_document_text_is_escaped_for_plotly_and_markdown():
    from viz.common import markdown_text, plotly_text

    assert plotly_text("<b>x</b> & <a href='y'>") == "&lt;b&gt;x&lt;/b&gt; &amp; &lt;a href='y'&gt;"
    md = markdown_text("[link](http://x.y) *b* $x^2$ :red[c]")
    assert md == "\\[link\\]\\(http\\:\u2060\\/\\/x\\.y\\) \\*b\\* \\$x\\^2\\$ \\:red\\[c\\]"


@pytest.mark.parametrize("text", ["http://evil.example/start", "HTTPS://evil.example", "ftp://x.y/z", "www.evil.example",
                                  "WWW.Evil.example/x", "write to press@evil.example now"])
def test_markdown_text_leaves_nothing_streamlit_would_autolink(text):
    """GFM autolinks URLs, www. hosts and e-mail addresses even when their punctuation is escaped:
    an invisible word joiner inside "://", "www." and "@" stops it; the visible text is unchanged."""
    import re

    from viz.common import JOINER

    md = markdown_text(text)
    plain = re.sub(r"\\(.)", r"\1", md)
    assert plain.replace(JOINER, "") == text
    assert not re.search(r"(?i)://|www\.|@\w", plain)


def test_report_figures_label_every_sentence_inside_the_canvas():
    """The HTML report gives every category its label (the app lets Plotly skip crowded ones)
    and margins that grow to hold them."""
    from viz.report import readable

    big = synthetic_trace(n_sent=40, words=8, L=1, H=2, short=())
    fig = readable(summary.score_bars(big.summary))
    assert fig.layout.yaxis.dtick == 1 and fig.layout.yaxis.tickmode == "linear" and fig.layout.yaxis.automargin
    assert fig.layout.height >= 20 * 40
    heat = readable(A.sentence_heatmap(big, 0, None))
    assert heat.layout.xaxis.dtick == 1 and heat.layout.yaxis.dtick == 1 and heat.layout.xaxis.automargin


def test_pool_block_means():
    a = np.arange(36, dtype=np.float32).reshape(6, 6)
    p = pool(a, 3)
    assert p.shape == (3, 3) and p.dtype == np.float32
    assert p[0, 0] == pytest.approx(a[:2, :2].mean())
    assert pool(a, 10).shape == (6, 6)


def shown(fig):
    """The one visible trace of a figure whose traces are toggled by buttons."""
    (hm,) = [d for d in fig.data if d.visible is not False]
    return hm


def test_token_heatmap_uint16_weights_labels_and_exact_hover(trace):
    T = len(trace.tokens)
    fig = A.token_heatmap(trace, 2, 5, scale="linear")
    hm = shown(fig)
    assert hm.type == "heatmap" and hm.z.dtype == np.uint16 and hm.z.shape == (T, T) and hm.name == "head 6"
    assert len(hm.x) == len(hm.y) == T and len(set(hm.x)) == T  # unique labels, tokens repeat
    assert hm.x[0] == "1 [CLS]"  # 1-based in the interface
    truth = trace.bert_attention[2, 5].astype(np.float32)
    # z is the weight in 1/10,000 (2 bytes a cell) and the hover prints it as 0.dddd: the true weight
    assert np.abs(hm.z / 1e4 - np.minimum(truth, 0.9999)).max() <= 5e-5 + 1e-7
    assert "weight 0.%{z:04d}" in hm.hovertemplate and hm.customdata is None
    assert hm.zmax == pytest.approx(truth.max() * 1e4) and hm.zmin == 0  # linear: the top colour at the max
    assert "layer 3, head 6" in fig.layout.title.text


def by_button(fig):
    """(button, the one trace it shows) for each head button, in button order."""
    out = []
    for button in (b for menu in fig.layout.updatemenus for b in menu.buttons):
        visible = button.args[0]["visible"]
        assert sum(visible) == 1
        out.append((button, fig.data[visible.index(True)]))
    return out


@pytest.mark.parametrize("head", [None, 0, 3])
def test_token_heatmap_head_buttons_show_each_head(trace, head):
    """One trace per head plus the mean, the shown one first; button k shows its head only and
    retitles the figure."""
    H = trace.bert_attention.shape[1]
    fig = A.token_heatmap(trace, 1, head, scale="linear")
    assert len(fig.data) == H + 1 and shown(fig) is fig.data[0]
    menus = fig.layout.updatemenus  # rows of at most 7 buttons, so a narrow column shows them all
    assert [b.label for m in menus for b in m.buttons] == ["mean"] + [str(h + 1) for h in range(H)]
    assert max(len(m.buttons) for m in menus) <= 7
    active = [(r, m.active) for r, m in enumerate(menus) if m.active != -1]
    assert len(active) == 1 and [b.label for b in menus[active[0][0]].buttons][active[0][1]] == (
        "mean" if head is None else str(head + 1))
    for k, (button, hm) in enumerate(by_button(fig)):
        assert hm.name == ("mean of heads" if k == 0 else f"head {k}")
        assert button.args[1]["title.text"].startswith(f"BERT layer 2, {hm.name}:")
        truth = (trace.bert_attention[1].astype(np.float32).mean(0) if k == 0 else trace.bert_attention[1, k - 1].astype(np.float32))
        assert np.abs(hm.z / 1e4 - np.minimum(truth, 0.9999)).max() <= 5e-5 + 1e-7


def test_token_heatmap_selectors(trace):
    T = len(trace.tokens)
    n_special = sum(t in ("[CLS]", "[SEP]") for t in trace.tokens)
    hm = shown(A.token_heatmap(trace, 0, 0, hide_special=True))
    assert hm.z.shape == (T - n_special, T - n_special)
    assert not any(lbl.split(" ", 1)[1] in ("[CLS]", "[SEP]") for lbl in hm.x)
    first = int(trace.input_sentences[1])
    hm = shown(A.token_heatmap(trace, 0, 0, sentence_range=(first, first)))
    assert hm.z.shape[0] == int((trace.token_sentence == first).sum())
    mean = shown(A.token_heatmap(trace, 0, None))
    assert np.abs(mean.z / 1e4 - trace.bert_attention[0].astype(np.float32).mean(0)).max() <= 5e-5 + 1e-7
    assert shown(A.token_heatmap(trace, 0, 0, colorscale="Magma")).colorscale[0][1] != hm.colorscale[0][1]
    assert "level" not in hm.hovertemplate and "weight" in hm.hovertemplate  # the weight, never a colour level


def test_token_heatmap_serialises_as_typed_arrays_one_exact_map_and_small_previews():
    big = synthetic_trace(n_sent=12, words=30, L=1, H=12, short=())
    T = len(big.tokens)
    fig = A.token_heatmap(big, 0, 0, preview_cells=100)
    k = -(-T // 100)
    js = pio.to_json(fig, validate=False)
    assert js.count('"dtype":"u2"') == 1 and js.count('"dtype":"u1"') == 12  # the shown head, 12 previews
    assert len(js) < 2 * 1.4 * T * T + 12 * 1.4 * (-(-T // k)) ** 2 + 60_000
    everything = pio.to_json(A.token_heatmap(big, 0, 0, preview_cells=None), validate=False)
    assert everything.count('"dtype":"u2"') == 13 and len(js) < len(everything) / 3


@pytest.mark.parametrize("kwargs", [dict(layers=True, colorscale="Viridis_r"), dict(preview_cells=None, scale="log")])
def test_token_heatmap_built_unvalidated_is_what_validation_makes(kwargs):
    """The token heatmap skips Plotly's validation (half its build time): Plotly's validated copy of
    it is the same figure, so no key or value of it is one Plotly would refuse or change."""
    import json

    import plotly.graph_objects as go

    big = synthetic_trace(n_sent=12, words=30, L=2, H=4, short=())
    fig = A.token_heatmap(big, 1, 2, **{"preview_cells": 50, **kwargs})
    checked = go.Figure(fig.to_dict())  # validates every trace and the layout (raises on a bad key or value)
    mine, theirs = (json.loads(pio.to_json(f, validate=False)) for f in (fig, checked))
    a, b = ([t.pop("colorscale") for t in d["data"]] for d in (mine, theirs))
    assert mine == theirs and [[c for _, c in s] for s in a] == [[c for _, c in s] for s in b]
    assert np.allclose([x for s in a for x, _ in s], [x for s in b for x, _ in s], rtol=0, atol=1e-12)


@pytest.mark.parametrize("head", [None, 4])
def test_token_heatmap_previews_of_the_other_heads(head):
    """Past ``preview_cells`` tokens only the shown map is exact; the others are k × k block means
    as uint8 colour levels on the exact map's clip value, titled and hovered as previews, and the
    figure asks the page to relay head clicks."""
    from viz.common import CLIP, _forward

    big = synthetic_trace(n_sent=12, words=30, L=2, H=12, short=())
    T = len(big.tokens)
    fig = A.token_heatmap(big, 1, head, preview_cells=100)
    k = -(-T // 100)
    labels = list(fig.data[0].x)  # the exact map comes first: it orders the category axes
    assert fig.layout.meta == {"relay": "head"} and len(labels) == T and fig.data[0].z.dtype == np.uint16
    for i, (button, hm) in enumerate(by_button(fig)):
        m = big.bert_attention[1].astype(np.float32).mean(0) if i == 0 else big.bert_attention[1, i - 1].astype(np.float32)
        title = button.args[1]["title.text"]
        if (i == 0 and head is None) or i == (head or -1) + 1:
            assert hm.z.dtype == np.uint16 and hm.z.shape == (T, T) and "(preview)" not in title
            assert np.abs(hm.z / 1e4 - np.minimum(m, 0.9999)).max() <= 5e-5 + 1e-7
            continue
        assert hm.z.dtype == np.uint8 and hm.z.shape == (-(-T // k),) * 2 and "(preview)" in title
        assert list(hm.x) == labels[::k] and "preview" in hm.hovertemplate
        block = m[:k, :k].mean()
        vmax = np.percentile(m, CLIP)
        assert abs(hm.z[0, 0] / 255 - _forward(min(block / vmax, 1.0), "sqrt")) <= 0.5 / 255 + 1e-6


@pytest.mark.parametrize("head, preview_cells", [(3, 100), (None, None)])
def test_token_heatmap_layer_buttons_preview_the_shown_head_on_every_layer(head, preview_cells):
    """``layers=True``: a layer row above the head rows; layer button l shows the shown head on
    layer l alone (block means on the exact map's clip value, always a preview, the figure's own
    layer its exact map), retitles and marks layer l and the head; a head button puts the layer
    row back on the figure's layer; layer clicks always go to the server."""
    from viz.common import CLIP, _forward

    big = synthetic_trace(n_sent=12, words=30, L=4, H=12, short=())
    L, T, layer = 4, len(big.tokens), 2
    plain = A.token_heatmap(big, layer, head, preview_cells=preview_cells)
    fig = A.token_heatmap(big, layer, head, preview_cells=preview_cells, layers=True)
    assert len(fig.data) == len(plain.data) + L - 1
    assert [m.name for m in fig.layout.updatemenus] == ["layer"] + ["head"] * len(plain.layout.updatemenus)
    assert fig.layout.meta == {"relay": "head" if preview_cells else "layer"}
    assert [a.text for a in fig.layout.annotations] == ["layer", "head"]
    from viz.deck import for_slide  # a slide shows the view only: neither button rows nor their labels
    slide = for_slide(fig, height=500)
    assert not slide.layout.updatemenus and not [a.text for a in slide.layout.annotations if a.text in ("layer", "head")]
    k = max(1 if preview_cells is None else -(-T // preview_cells), -(-T // A.LAYER_PREVIEW_CELLS))
    layer_row = fig.layout.updatemenus[0]
    assert [b.label for b in layer_row.buttons] == [str(l + 1) for l in range(L)] and layer_row.active == layer
    name = "mean of heads" if head is None else f"head {head + 1}"
    for l, button in enumerate(layer_row.buttons):
        visible = button.args[0]["visible"]
        assert sum(visible) == 1
        hm = fig.data[visible.index(True)]
        title = button.args[1]["title.text"]
        assert title.startswith(f"BERT layer {l + 1}, {name}") and button.args[1]["updatemenus[0].active"] == l
        if l == layer:
            assert hm is fig.data[0] and "(preview)" not in title
            continue
        m = big.bert_attention[l].astype(np.float32)
        m = m.mean(0) if head is None else m[head]
        assert "(preview)" in title and hm.z.dtype == np.uint8 and hm.z.shape == (-(-T // k),) * 2
        vmax = np.percentile(m, CLIP)
        assert abs(hm.z[0, 0] / 255 - _forward(min(m[:k, :k].mean() / vmax, 1.0), "sqrt")) <= 0.5 / 255 + 1e-6
        marked = [r for r, menu in enumerate(fig.layout.updatemenus[1:]) if button.args[1][f"updatemenus[{r + 1}].active"] != -1]
        assert len(marked) == 1  # the head rows keep the shown head marked
    for menu in fig.layout.updatemenus[1:]:
        for button in menu.buttons:  # a head button: its head on the figure's layer
            assert sum(button.args[0]["visible"]) == 1 and button.args[0]["visible"].index(True) < len(plain.data)
            assert button.args[1]["updatemenus[0].active"] == layer
            assert button.args[1]["title.text"].startswith(f"BERT layer {layer + 1}, ")


def test_short_windows_send_every_map_exact():
    fig = A.token_heatmap(synthetic_trace(), 0, 0)  # 40-odd tokens: all 13 maps exact, no relay
    assert fig.layout.meta is None and all(d.z.dtype == np.uint16 for d in fig.data)


@pytest.mark.parametrize("n_sent", [6, 16])
def test_windows_up_to_exact_tokens_are_exact_and_longer_ones_get_small_previews(n_sent):
    """Up to ``EXACT_TOKENS`` every head is exact (past ``PREVIEW_CELLS`` too); past it the other
    heads are previews of at most ``PREVIEW_CELLS`` blocks a side."""
    big = synthetic_trace(n_sent=n_sent, words=20, L=1, H=4, short=())
    T = len(big.tokens)
    fig = A.token_heatmap(big, 0, 1)
    if T <= A.EXACT_TOKENS:
        assert T > A.PREVIEW_CELLS and fig.layout.meta is None and all(d.z.dtype == np.uint16 for d in fig.data)
    else:
        previews = [d.z for d in fig.data[1:]]
        assert fig.layout.meta == {"relay": "head"} and len(previews) == 4
        assert all(z.dtype == np.uint8 and A.PREVIEW_CELLS // 2 < len(z) <= A.PREVIEW_CELLS for z in previews)


def test_head_grid_and_overview(trace):
    L, H = trace.bert_attention.shape[:2]
    grid = A.head_grid(trace, 1, max_bins=16)
    assert len(grid.data) == H and all(d.z.dtype == np.uint8 for d in grid.data)
    assert grid.data[0].z.shape == (16, 16)
    ov = A.overview(trace, max_bins=8)  # one mosaic: layer l, head h in tile (l, h) of 8 × 8 bins
    assert len(ov.data) == 1 and ov.data[0].z.shape == (L * 8, H * 8) and ov.data[0].z.dtype == np.uint8
    pooled = pool(trace.bert_attention.astype(np.float32).reshape(L * H, *trace.bert_attention.shape[2:]), 8)
    for l, h in [(0, 0), (1, 0), (L - 1, H - 1), (2, 5)]:
        tile = np.s_[l * 8:(l + 1) * 8, h * 8:(h + 1) * 8]
        np.testing.assert_array_equal(ov.data[0].customdata[tile], pooled[l * H + h])
        assert ov.data[0].y[l * 8] == f"layer {l + 1}, row 1" and ov.data[0].x[h * 8 + 7] == f"head {h + 1}, col 8"
    assert list(ov.layout.yaxis.ticktext) == [f"L{l + 1}" for l in range(L)] and ov.layout.yaxis.tickvals[1] == 11.5
    assert len(ov.layout.shapes) == (L - 1) + (H - 1)  # the lines between tiles
    S = len(trace.input_sentences)
    assert A.overview(trace, level="sentence").data[0].z.shape == (L * S, H * S)


def test_small_multiples_are_the_figure_plotlys_subplots_make(trace):
    """viz.attention._grid builds its figure from a dict on a layout kept per grid: it is the
    figure that make_subplots and add_trace(row=, col=) make, as they were called before."""
    import json

    import plotly.graph_objects as go
    import plotly.io
    from plotly.subplots import make_subplots

    from viz.common import CLIP, level_colorbar, pool, quantize

    L, H = trace.bert_attention.shape[:2]
    mats = pool(trace.bert_attention.astype(np.float32).reshape(L * H, *trace.bert_attention.shape[2:]), 8)
    titles = [f"L{l + 1} H{h + 1}" for l in range(L) for h in range(H)]
    z, vmax = quantize(mats, scale="sqrt", clip=CLIP)
    ref = make_subplots(rows=L, cols=H, subplot_titles=titles, horizontal_spacing=0.01, vertical_spacing=0.04)
    for k in range(len(mats)):
        ref.add_trace(go.Heatmap(z=z[k], customdata=mats[k], coloraxis="coloraxis", name=titles[k],
                                 hovertemplate=titles[k] + "<br>row %{y}, col %{x}: mean weight "
                                 "%{customdata:.4f}<extra></extra>"), row=k // H + 1, col=k % H + 1)
    ref.update_xaxes(showticklabels=False)
    ref.update_yaxes(showticklabels=False, autorange="reversed")
    ref.update_annotations(font_size=10)
    ref.update_layout(coloraxis=dict(colorscale="Viridis", cmin=0, cmax=255,
                                     colorbar=level_colorbar(vmax, scale="sqrt", clipped=bool(mats.max() > vmax))),
                      height=300, title="T", margin=dict(l=10, r=10, t=60, b=10))
    for _ in range(2):  # the second from the kept layout, which the first must not have changed
        ours = A._grid(mats, titles, L, H, "Viridis", 300, "T")
        assert json.loads(plotly.io.to_json(ours)) == json.loads(plotly.io.to_json(ref))
        ours.update_layout(title="changed")


def test_sentence_matrix_mass(trace):
    m, sents = A.sentence_matrix(trace, 3, 1)
    assert m.shape == (len(trace.input_sentences),) * 2 and np.allclose(m.sum(1), 1, atol=1e-3)
    a = trace.bert_attention[3, 1].astype(np.float32)
    qi = trace.token_sentence == sents[0]
    kj = trace.token_sentence == sents[1]
    assert m[0, 1] == pytest.approx(a[qi][:, kj].sum(1).mean(), rel=1e-5)
    fig = A.sentence_heatmap(trace, 3, 1)
    assert fig.data[0].z.dtype == np.uint8 and fig.data[0].customdata.dtype == np.float32


def test_inter_heatmap_marks_selected(trace):
    fig = inter.inter_heatmap(trace, 1, 3)
    hm, bars = fig.data
    S = len(trace.input_sentences)
    assert hm.z.shape == (S, S) and hm.z.dtype == np.uint8 and bars.x.dtype == np.float32
    starred = [lbl for lbl in hm.y if lbl.startswith("★")]
    assert len(starred) == len(trace.summary.selected)
    assert np.array_equal(hm.customdata, trace.inter_attention[1, 3].astype(np.float32))


def test_mask_and_position_figures(trace):
    T, S = len(trace.tokens), len(trace.input_sentences)
    assert masks.token_mask_strip(trace).data[0].z.shape == (1, T)
    assert masks.token_mask_strip(trace).data[0].z.dtype == np.uint8
    ext = masks.extended_mask_strip(trace).data[0]
    assert ext.z.dtype == np.float32 and ext.zmin == -10000
    assert masks.extended_mask_matrix(trace).data[0].z.shape == (T, T)
    assert masks.cls_mask_strip(trace).data[0].z.shape == (1, S)
    assert masks.inter_mask_matrix(trace).data[0].z.shape == (S, S)
    seg = masks.segment_strip(trace).data[0].z
    assert seg.dtype == np.uint8 and set(np.unique(seg)) <= {0, 1}
    pe = masks.pe_table_heatmap(trace, n=40)
    assert pe.data[0].z.shape == (40, 384) and pe.data[0].z.dtype == np.float32
    assert pe.layout.shapes[0].y1 == S + 0.5           # the box around the rows used
    assert masks.sentence_pe_heatmap(trace).data[0].z.shape == (S, 384)
    learned = masks.position_embedding_heatmap(trace)
    assert learned.data[0].z.shape == (T, 384)
    # positions numbered from 1, as everywhere else in the app (issue 34)
    assert pe.data[0].y[0] == 1 and learned.data[0].y[0] == 1 and learned.data[0].y[-1] == T
    assert "positions 1–40" in pe.layout.title.text and f"positions 1–{T}" in learned.layout.title.text


def test_summary_figures_and_escaping(trace):
    s = trace.summary
    fig = summary.score_bars(s)
    bars = fig.data[0]
    assert len(bars.y) == len(s.sentences) and bars.x.dtype == np.float32
    for i in range(len(s.sentences)):
        assert (bars.marker.color[i] == summary.STATUS_COLORS["selected"]) == (i in s.selected)
    # hover lines of at most 48 characters (a long sentence's hover was cut off at the figure's edge, issue 34)
    long = summary.score_bars(dataclasses.replace(s, sentences=("A long first sentence, " * 6,) + s.sentences[1:]))
    assert all(len(line) <= 48 for row in long.data[0].customdata for cell in row for line in cell.split("<br>"))
    evil = dataclasses.replace(s, sentences=("<script>alert(1)</script> & co.",) + s.sentences[1:])
    html = summary.document_html(evil)
    assert "<script>" not in html and "&lt;script&gt;" in html and "&amp; co." in html
    md = summary.summary_markdown(evil)
    assert all(f"- {markdown_text(evil.sentences[i])}" in md for i in evil.selected)
    assert r"\<script\>" in md or 0 not in evil.selected


def test_html_report_is_standalone_and_escapes_the_document(trace):
    from viz.report import html_report

    fig = summary.score_bars(trace.summary)
    page = html_report("Report <b>", "k = 3", ["<script>alert(1)</script>"], "<div>doc</div>", [("Scores", fig)])
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert page.count("plotly.js v") == 1 or "Plotly.newPlot" in page  # plotly.js inline, once
    assert len(page) > 3_000_000                                           # the library itself: no network needed


def test_learn_steps_match_captured_attention():
    t = synthetic_trace(seed=3)
    masked_key = 5
    mask = np.zeros(len(t.tokens), dtype=np.float32)
    mask[masked_key] = -10000.0
    t = dataclasses.replace(t, extended_mask=mask)
    s = learn.attention_steps(t, 1, 2, 7)
    assert s["probs"].sum() == pytest.approx(1, abs=1e-5)
    assert s["probs"][masked_key] < 1e-6                # a masked key gets no weight
    assert np.allclose(s["scaled"], s["logits"] / np.sqrt(s["d"]))
    other = np.arange(len(t.tokens)) != masked_key      # the synthetic capture had no mask
    renorm = s["captured"][other] / s["captured"][other].sum()
    assert np.abs(s["probs"][other] - renorm).max() < 5e-3
    assert np.allclose(s["out"], s["probs"] @ s["V"], atol=1e-5)
    figs = learn.step_figures(t, 1, 2, 7)
    assert set(figs) == {"q", "K", "logits", "scaled", "masked", "probs", "V", "out"}
    assert len(figs["probs"].data) == 2 and figs["probs"].data[0].y.dtype == np.float32


def test_learn_recomputes_real_bert(summarizer):
    text = open("examples/bbc_insurance_bosses.txt", encoding="utf-8").read()
    t = summarizer.trace(text)
    s = learn.attention_steps(t, 4, 7, 3)
    assert s["max_abs_diff"] < 1e-2                      # float16 capture of q, k


def test_length_label_counts_characters_where_words_have_no_spaces():
    """Issue 41: a Chinese paste read "(1 word)"."""
    from viz.common import length_label

    assert length_label("保险公司老板认罪。三名美国保险高管承认了欺诈指控。") == "25 characters"
    assert length_label("日本の保険会社 です") == "9 characters"
    assert length_label("Insurance bosses plead guilty today") == "5 words"
    assert length_label("One") == "1 word"


def test_norm_weighted_token_map_says_share_not_weight(trace):
    from viz.attention import token_heatmap

    fig = token_heatmap(trace, 0, 0, what="norm-weighted share")
    shown = next(t for t in fig.data if t.visible)
    assert "norm-weighted share 0." in shown.hovertemplate and "weight" not in shown.hovertemplate.replace("norm-weighted", "")
    assert "share" in shown.colorbar.title.text and "(norm-weighted share)" in fig.layout.title.text
    assert "weight 0." in next(t for t in token_heatmap(trace, 0, 0).data if t.visible).hovertemplate
