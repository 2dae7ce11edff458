"""Which heads matter: every head's attention statistics on this document (Clark et al. 2019),
how much each head matters to the summary (Michel et al. 2019: the gradient estimate at once,
the exact ablation on demand), the summary with heads switched off, and what fine-tuning changed."""
from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from analysis import heads as AH
from ui import a11y, state, view as V
from ui.view import HEADS_VIEWS
from ui.figures import figure, head_map, plot
from ui.models import backbone_name
from ui.resources import get_model
from ui.runs import (asked, cached, head_stats, peek, progress, run_ablation, run_trace, seconds_per_window,
                     side_by_side, stepped)
from ui.widgets import COLORSCALES, need_trace, window_caption
from ui.export import frame_csv
from ui.state import keep
from viz import heads as VH
from viz.common import sentence_label
from viz.inter import inter_heatmap

VIEWS = list(HEADS_VIEWS)


trace = need_trace()
params = state.params()
model = get_model(params["weights"], params["device"])
text, k, block = params["text"], params["k"], params["block_trigram"]
(L, H), (L2, H2) = AH.shapes(model).values()
ALL = [("bert", layer, h) for layer in range(L) for h in range(H)] + \
      [("inter", layer, h) for layer in range(L2) for h in range(H2)]
label = lambda head: AH.head_label(*head)  # noqa: E731

st.title("Heads")
st.caption(f"{L} × {H} BERT heads and {L2} × {H2} sentence-encoder heads: what each one looks at on this "
           "document, and which of them the summary depends on. Layers and heads are numbered from 1.")
if window_caption(trace):
    st.caption(window_caption(trace) + " BERT statistics are of this window; importance is over the whole document.")
untrained = trace.summary.weights == "untrained"
st.session_state.setdefault("heads_view", V.default("heads_view"))  # not default=: the kept value is written back every run
view = st.segmented_control("View", VIEWS, key=keep("heads_view"), required=True) or VIEWS[0]

stats = head_stats(params, trace)
gradient = peek("gradient", params)
if gradient is None and view != VIEWS[3]:
    stop = asked("gradient", "Each head's importance (the gradient estimate)", len(trace.windows),
                 len(trace.windows) * seconds_per_window(model))
    if stop is not None:
        with stepped("Each head's importance, one backward pass a window", "window {done} of {total}") as step:
            gradient = cached("gradient", params, lambda: dict(zip(AH.PARTS, AH.importance_gradient(
                model, text, k, block, progress=step))), model_run=True)
        stop.empty()
ablation = peek("ablation", params)  # computed by anyone on this server, else None until asked for


def best() -> dict:
    """The importance to rank heads by: the exact ablation when there is one, else the gradient."""
    return ablation.importance if ablation is not None else gradient  # None: neither computed yet


def table(part: str) -> pd.DataFrame:
    """One row per head of ``part``: its statistics and importance."""
    names = AH.BERT_STATS if part == "bert" else AH.INTER_STATS
    n_layers, n_heads = stats[part]["entropy"].shape
    rows = {"head": [label((part, layer, h)) for layer in range(n_layers) for h in range(n_heads)],
            "layer": np.repeat(np.arange(1, n_layers + 1), n_heads), "head #": np.tile(np.arange(1, n_heads + 1), n_layers)}
    rows |= {names[n]: stats[part][n].ravel() for n in names}
    if gradient is not None:
        rows["importance (gradient)"] = gradient[part].ravel()
    if ablation is not None:
        rows["importance (ablation)"] = ablation.importance[part].ravel()
        rows["mean |Δ score| when off"] = ablation.mean_abs_change[part].ravel()
        rows["summary changes when off"] = ablation.selection_changed[part].ravel()
    return pd.DataFrame(rows)


def open_in_bert_page(layer: int, head: int):
    """The BERT attention page's pickers on this head (its figure opens on the kept head)."""
    st.session_state[keep("bert_layer")] = layer
    st.session_state[keep("bert_head")] = head
    st.session_state[keep("bert_view")] = "One head"


def head_viewer():
    """Choosing a head opens its attention map here (and, for BERT, on the BERT attention page)."""
    if st.session_state.get("heads_pick") not in ALL:  # first time, or kept from another model, or a view's
        if st.session_state.get("heads_pick") is not None:
            st.warning(f"This model has no head {label(st.session_state['heads_pick'])}: opening the most important.")
        st.session_state["heads_pick"] = ALL[0] if best() is None else AH.ranking(best(), 1)[0]
    pick = st.selectbox("Open a head's attention map", ALL, format_func=label,
                        key=keep("heads_pick"), help="Opens on the most important head.")
    part, layer, head = pick
    if part == "bert":
        c1, c2 = st.columns([3, 1])
        c1.caption(f"{label(pick)}: " + ", ".join(f"{AH.BERT_STATS[n]} {stats['bert'][n][layer, head]:.2f}"
                                                  for n in ("cls", "sep", "punctuation", "previous", "next")))
        if c2.button("Open on the BERT attention page", icon=":material/open_in_new:", key="heads_open_bert"):
            open_in_bert_page(layer, head)
            st.switch_page("pages/bert_attention.py")
        if V.fresh(st.session_state, "heads_map_head", pick) or st.session_state.get("heads_map_head") not in \
                [None, *range(H)]:  # a new pick opens on its head; buttons move from there
            st.session_state["heads_map_head"] = head
        head_map(trace, layer, "heads_map_head", "heads_token_map")
    else:
        plot(figure(inter_heatmap, trace, layer, head), key="heads_inter_map")


if view == "Statistics":
    st.markdown("Statistics of Clark et al. (2019, *What does BERT look at?*, §3): a head's attention to a kind "
                "of token is the mean over query tokens of the summed weights on such keys; entropy is the "
                "mean over rows (low = focused on a few tokens, high = spread).")
    st.caption(AH.DEFINITIONS)
    c = st.columns(3)
    name = c[0].selectbox("BERT statistic", list(AH.BERT_STATS), format_func=AH.BERT_STATS.get, key=keep("heads_stat"))
    iname = c[1].selectbox("Sentence-encoder statistic", list(AH.INTER_STATS), format_func=AH.INTER_STATS.get,
                           key=keep("heads_inter_stat"))
    colorscale = c[2].selectbox("Colour scale", COLORSCALES, key=keep("heads_colors"))
    left, right = st.columns([H, max(H2, 6)])
    with left:
        plot(VH.head_map(stats["bert"][name], f"BERT: {AH.BERT_STATS[name]}", name=AH.SHORT[name], colorscale=colorscale),
             key="heads_stat_map")
    with right:
        plot(VH.head_map(stats["inter"][iname], f"Sentence encoder: {AH.INTER_STATS[iname]}", part="Sentence encoder",
                         name=AH.SHORT[iname], colorscale=colorscale), key="heads_inter_stat_map")
    pair = side_by_side("heads_other")
    if pair is not None:  # the same statistics of a second model on this document
        other, b = pair
        b_stats = cached("stats_other", params, lambda: {"bert": AH.bert_stats(b), "inter": AH.inter_stats(b)},
                         other, b.window)
        left, right = st.columns([b_stats["bert"][name].shape[1], max(b_stats["inter"][iname].shape[1], 6)])
        with left:
            plot(VH.head_map(b_stats["bert"][name], f"{other}, BERT: {AH.BERT_STATS[name]}", name=AH.SHORT[name],
                             colorscale=colorscale), key="heads_other_stat_map")
        with right:
            plot(VH.head_map(b_stats["inter"][iname], f"{other}, sentence encoder: {AH.INTER_STATS[iname]}",
                             part="Sentence encoder", name=AH.SHORT[iname], colorscale=colorscale), key="heads_other_inter_map")
    st.caption("Sort the table by a column (click its header). Importance: how much the selected sentences' "
               "scores depend on the head (see the Importance view).")
    for tab, part in zip(st.tabs(["BERT heads", "Sentence-encoder heads"]), AH.PARTS):
        with tab:
            df = table(part)
            a11y.dataframe(df, f"{part} head statistics", hide_index=True, key=f"heads_table_{part}",
                         column_config={c: st.column_config.NumberColumn(format="%.3f")
                                        for c in df.columns if df[c].dtype.kind == "f"})
            st.download_button("Download the table (.csv)", frame_csv(df), file_name=f"heads_{part}.csv",
                               mime="text/csv", key=f"heads_csv_{part}")
    head_viewer()

elif view == "Importance":
    st.markdown("Importance after Michel et al. (2019, *Are sixteen heads really better than one?*): a gate ξ "
                "multiplies each head's output; L = the sum of the selected sentences' scores. **Gradient**: "
                "|∂L/∂ξ| at ξ = 1, one backward pass for every head (their §4). **Ablation**: the head "
                "switched off (ξ = 0), |ΔL|, exactly, one head at a time.")
    if untrained:
        st.warning(AH.UNTRAINED_NOTE)
    if gradient is None:
        st.stop()  # a long document: Run above first
    if ablation is None:
        slot = st.empty()
        if slot.button(f"Run the exact ablation ({len(ALL)} heads, batched)", icon=":material/play_arrow:",
                       key="heads_run", help="Until then the maps show the gradient estimate only.") or state.for_slide():
            slot.empty()
            ablation = run_ablation(params)
    agree = AH.agreements(gradient, ablation.importance) if ablation is not None else {}
    for part in AH.PARTS:
        plot(VH.importance_maps(gradient[part], None if ablation is None else ablation.importance[part],
                                part=AH.PART_NAMES[part], agreement=agree.get(part),
                                changed=None if ablation is None else ablation.selection_changed[part]),
             key=f"heads_importance_{part}")
    if ablation is not None:
        c = st.columns(3)
        c[0].metric("Spearman ρ, gradient vs ablation (all heads)", f"{agree['all']['spearman']:.2f}")
        c[1].metric("Top-5 heads in common", f"{agree['all']['top5_overlap']:.0%}")
        c[2].metric("Heads whose removal changes the summary",
                    f"{sum(int(ablation.selection_changed[p].sum()) for p in AH.PARTS)} of {len(ALL)}")
        top = AH.ranking(ablation.importance, 5)
        a11y.dataframe(pd.DataFrame({
            "head": [label(h) for h in top],
            "ablation |ΔL|": [ablation.importance[p][layer, h] for p, layer, h in top],
            "gradient |∂L/∂ξ|": [gradient[p][layer, h] for p, layer, h in top],
            "mean |Δ score|": [ablation.mean_abs_change[p][layer, h] for p, layer, h in top],
            "selected when off": [", ".join(str(i + 1) for i in ablation.selected_after[p][layer][h])
                                  for p, layer, h in top]}), "The most important heads", hide_index=True, key="heads_top")
        st.caption("Selected with every head on: sentences " + ", ".join(str(i + 1) for i in ablation.selected) + ".")
    head_viewer()

elif view == "Switch heads off":
    def top_five():
        st.session_state["heads_off"] = AH.ranking(best(), 5)

    if any(h not in ALL for h in st.session_state.get("heads_off", ())):  # kept from another model, or a view's
        st.warning("This model has no head " + ", ".join(label(h) for h in st.session_state["heads_off"] if h not in ALL)
                   + ": left out of the heads switched off.")
        st.session_state["heads_off"] = [h for h in st.session_state["heads_off"] if h in ALL]
    c = st.columns([4, 1, 1])
    c[1].button("Top 5 by importance", on_click=top_five, key="heads_top5", disabled=best() is None,
                help="The exact ablation's five most important heads if it has run, else the gradient's.")
    c[2].button("None", on_click=lambda: st.session_state.update(heads_off=[]), key="heads_none")
    off = c[0].multiselect("Heads to switch off", ALL, format_func=label, key=keep("heads_off"),
                           placeholder="Pick heads, e.g. BERT 5.3 or Sentence encoder 1.2")
    if untrained:
        st.warning(AH.UNTRAINED_NOTE)
    if not off:
        st.info("Pick heads to switch off (their attention output zeroed, Michel et al. 2019) and compare the summary.")
    else:
        masked = cached("masked", params, lambda: model.summarize(text, k, block, mask_heads=tuple(off)),
                        tuple(sorted(off)), model_run=True)
        before, s = trace.summary, masked
        scored = [i for i, x in enumerate(before.scores) if x is not None]
        delta = np.array([s.scores[i] - before.scores[i] for i in scored])
        c = st.columns(3)
        c[0].metric("Sentences of the summary replaced", f"{len(set(before.selected) - set(s.selected))} of {len(before.selected)}")
        c[1].metric("Mean |Δ score|", f"{np.abs(delta).mean():.3f}")
        c[2].metric("Largest |Δ score|", f"{np.abs(delta).max():.3f}")
        left, right = st.columns(2)
        for col, summary, other, title, tag in ((left, before, s, "All heads on", "dropped"),
                                                (right, s, before, f"{len(off)} heads off", "new")):
            with col:
                st.header(title)
                st.html("".join(f"<p>{f'<mark>{tag}</mark> ' if i not in other.selected else ''}<b>{i + 1}.</b> "
                                f"{html.escape(summary.sentences[i])}</p>" for i in summary.selected))
        labels = np.array([sentence_label(trace, i, 40) for i in scored], dtype=object)
        plot(VH.score_comparison(labels, np.array([before.scores[i] for i in scored]),
                                 np.array([s.scores[i] for i in scored]),
                                 title=f"Sentence scores, all heads on vs {len(off)} off (★ = selected with all on)"),
             key="heads_scores")

else:  # what fine-tuning changed
    st.markdown("Training fine-tuned BERT (the shipped weights: its top layers; PreSumm: all of them) and trained the "
                "sentence scorer. Each statistic with these weights beside the same statistic of the plain backbone "
                f"({Path(trace.summary.backbone).name}) on this document; the caption under the table names the "
                "layers that differ.")
    if untrained:
        st.info("The current weights are the unmodified backbone: pick trained weights under **Model** to compare.")
    else:
        st.caption("Only statistics are compared: the backbone's sentence scorer is random, so how much its heads "
                   "matter to its scores says nothing about summarization.")
        with progress("Running the unmodified backbone"):
            other = run_trace(text, k, block, backbone_name(params["weights"]), params["device"], window=trace.window)
        backbone = cached("stats_backbone", params, lambda: AH.bert_stats(other), trace.window)
        c = st.columns(2)
        name = c[0].selectbox("Statistic", list(AH.BERT_STATS), format_func=AH.BERT_STATS.get, key=keep("heads_ft_stat"))
        colorscale = c[1].selectbox("Colour scale", COLORSCALES, key=keep("heads_ft_colors"))
        plot(VH.difference_maps(stats["bert"][name], backbone[name], AH.BERT_STATS[name], colorscale=colorscale),
             key="heads_difference")
        rows = []
        for n in AH.BERT_STATS:
            d = stats["bert"][n] - backbone[n]  # [L, H]
            layer, head = np.unravel_index(np.abs(d).argmax(), d.shape)
            rows.append({"statistic": AH.BERT_STATS[n], "largest change": label(("bert", layer, head)),
                         "shipped": stats["bert"][n][layer, head], "backbone": backbone[n][layer, head],
                         **{f"mean |Δ| layer {i + 1}": np.abs(d[i]).mean() for i in range(L)}})
        a11y.dataframe(pd.DataFrame(rows), "What fine-tuning changed", hide_index=True, key="heads_ft_table")
        changed = [i + 1 for i in range(L) if any(np.abs(stats["bert"][n][i] - backbone[n][i]).max() > 0 for n in backbone)]
        st.caption(f"Layers whose statistics differ on this document: {', '.join(map(str, changed)) or 'none'}.")
