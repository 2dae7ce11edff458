"""Page 2: BERT self-attention, one head at a time or all at once."""
import numpy as np
import streamlit as st

from analysis.explain import rollout, sentence_draw
from ui.figures import figure, head_map, later, plot, shared_figure
from ui import view
from ui.runs import derived, row_shares, run_mixing, run_value_zeroing, trace_key, with_maps
from ui.view import BERT_SHOW, BERT_VIEWS
from ui.widgets import COLORSCALES, layer_head_pickers, need_trace, window_caption
from ui.state import keep
from viz import attention as A
from viz import explain as X
from viz.common import SCALES, markdown_text, preview, sentence_label

SCALE_NAMES = {"sqrt": "√ (default)", "log": "log", "linear": "linear"}  # short: the box is narrow at 1024 px

trace = need_trace()
L, H, T = trace.bert_attention.shape[:3]
st.title("BERT attention")
if window_caption(trace):
    st.caption(window_caption(trace))
st.caption(f"{T} tokens · {L} layers × {H} heads. Row = the query token attending, column = the key token "
           "attended to; each row sums to 1.")
if trace.summary.too_short:  # not fed to BERT: say why they are not in the maps
    short = trace.summary.too_short
    st.caption(f"Not in these maps: sentence{'s' if len(short) > 1 else ''} "
               + ", ".join(f"{i + 1} (“{markdown_text(preview(trace.summary.sentences[i], 40))}”)" for i in short[:5])
               + (f" and {len(short) - 5} more" if len(short) > 5 else "")
               + f", under 5 words: BertSumExt does not feed {'them' if len(short) > 1 else 'it'} to BERT.")

st.session_state.setdefault("bert_view", view.default("bert_view"))  # not default=: a link, lesson or class may set it
shown = st.segmented_control("View", BERT_VIEWS, key=keep("bert_view"), required=True,
                             help="Rollout: attention multiplied up the layers (Abnar & Zuidema 2020).") or "One head"
c = st.columns([1, 1, 1, 1])
if shown not in ("All layers × heads", "Rollout"):
    layer, head = layer_head_pickers(L, H, "bert", cols=c[:2], pick_head=shown == "Sentence × sentence")
colorscale = c[2].selectbox("Colour scale", COLORSCALES, key=keep("bert_colors"))
scale = "linear"  # sentence × sentence: a few cells of summed mass, read on a linear scale
if shown != "Sentence × sentence":
    scale = c[3].selectbox("Contrast", SCALES, key=keep("bert_scale"), format_func=SCALE_NAMES.get,
                           help="How weights map to colours. √ (default) and log clip each map at its 99.5th "
                                "percentile so weak attention stays visible; linear runs from 0 to the largest "
                                "weight. Hover always shows the true weight.")

sents = sorted({int(i) for i in trace.token_sentence})
if shown in ("One head", "All heads of a layer", "Rollout"):
    o1, o2 = st.columns([1, 3])
    hide = o1.checkbox("Hide [CLS]/[SEP]", key=keep("bert_hide"))
    rng = (sents[0], sents[-1])
    if len(sents) > 1:
        # the thumbs say only the numbers (a sentence's words ran past the edge of a phone's screen); the caption
        # under the slider names the two sentences
        # a numeric slider, 1-based: a screen reader reads its value as the sentence number (a select
        # slider's options were read as their indices, whatever their text); ★ marks chosen ones below
        full = (sents[0] + 1, sents[-1] + 1)
        picked = None if view.fresh(st.session_state, "bert_range", trace_key(trace)) else \
            st.session_state.get("bert_range")
        if picked is not None and not (isinstance(picked, tuple) and full[0] <= picked[0] <= picked[1] <= full[1]):
            st.warning(f"This view's sentences {picked[0]}–{picked[1]} are not all in this window "
                       f"({full[0]}–{full[1]}): showing all of them.")
            picked = None
        st.session_state["bert_range"] = picked or full
        first, last = o2.slider("Sentences", sents[0] + 1, sents[-1] + 1, key=keep("bert_range"))
        rng = (first - 1, last - 1)
        o2.caption(" to ".join(f"sentence {sentence_label(trace, i, 40, escape=markdown_text)}" for i in rng))

SHOW_HELP = ("What the model looked at vs what it used. Attention: the softmax weights α. Norm-weighted: "
             "‖α f(x_j)‖, the length of what token j actually adds through the head (f(x) = (x W_V + b_V) W_O; "
             "Kobayashi et al. 2020), as each row's share. ALTI: what each token contributes to the layer's output "
             "after the residual and LayerNorm (Ferrando et al. 2022), per layer or composed down to the input. "
             "Value zeroing: how far each token's output moves when token j's values are zeroed (Mohebbi et al. "
             "2023), one layer on request.")
if shown == "One head":
    st.session_state.setdefault("bert_show", view.default("bert_show"))
    show = st.segmented_control("Show", BERT_SHOW,
                                key=keep("bert_show"), required=True, help=SHOW_HELP) or "attention"
    opts = dict(hide_special=hide, sentence_range=rng, colorscale=colorscale, scale=scale)
    if show == "attention":
        st.caption("Pick the layer or head with the buttons above the map: they switch in the browser at once, to a "
                   "preview (k × k-token blocks on long windows), and the exact weights follow from the server.")
        head_map(trace, layer, "bert_head", "bert_token", layer_key="bert_layer", **opts)
        # the page's one view whose server part was larger than the browser's (benchmarks/HISTORY.md, session 40)
        later(A.overview, trace, colorscale=colorscale, level=st.session_state.get("bert_level", view.default("bert_level")), scale=scale)
    else:
        mix = run_mixing(trace)
        st.caption(f"Layer {layer + 1}: context's share of each token's update (mixing ratio, residual and "
                   f"LayerNorm counted; Kobayashi et al. 2021) is {mix.mixing_ratio[layer]:.0%} on average; the rest "
                   "is the token's own vector.")
        if show == "norm-weighted":
            shares = derived(trace, "norm-shares", lambda: row_shares(mix.norm_head))
            st.caption("Each row: the share of what the head adds to the query token that comes from each key token, "
                       "‖α f(x_j)‖ / Σ ‖α f(x)‖. Buttons pick the head; hover shows the share.")
            head_map(with_maps(trace, "norm-weighted", bert_attention=shares), layer, "bert_head", "bert_norm",
                     layer_key="bert_layer", what="norm-weighted share", **opts)
        elif show == "ALTI":
            level = st.radio("ALTI", ["this layer", "composed to the input"], horizontal=True, key=keep("bert_alti"))
            m = mix.alti_layer[layer] if level == "this layer" else mix.alti_input
            what = f"layer {layer + 1}" if level == "this layer" else f"all {L} layers, composed"
            axes = ((f"layer {layer + 1} output token", f"layer {layer + 1} input token (contributing)")
                    if level == "this layer" else ("top-layer token", "input token (contributing)"))
            plot(shared_figure(trace, ("alti", level, layer, tuple(sorted(opts.items()))),
                               lambda: X.rollout_heatmap(trace, m, title=f"ALTI, {what}: {{n}} × {{n}} tokens",
                                                         what="contribution", axes=axes, **opts)), key="bert_alti_map")
            st.caption("ALTI (Ferrando et al. 2022): row = the token receiving, column = the token contributing; "
                       "each row sums to 1. Composed: C_L ⋯ C_1, what each top-layer token is made of.")
        else:
            zeroed = run_value_zeroing(trace, layer)
            if zeroed is not None:
                m, totals = zeroed
                plot(shared_figure(trace, ("vz", layer, tuple(sorted(opts.items()))),
                                   lambda: X.rollout_heatmap(trace, m, title=f"Value zeroing, layer {layer + 1}: "
                                                             "{n} × {n} tokens", what="share", axes=(
                                       f"layer {layer + 1} output token", "token whose values are zeroed"), **opts)),
                     key="bert_vz_map")
                st.caption("Value zeroing (Mohebbi et al. 2023): row i, column j = the cosine distance of token i's "
                           f"layer-{layer + 1} output from its own when token j's value vectors are zeroed in every "
                           "head, as the row's share (float64). How much the rows move at all, summed over j: "
                           f"median {np.median(totals):.3g}, from {totals.min():.3g} to {totals.max():.3g}; rows "
                           "that barely move are shares of almost nothing.")
elif shown == "All heads of a layer":
    plot(figure(A.head_grid, trace, layer, hide_special=hide, sentence_range=rng, colorscale=colorscale, scale=scale),
         key="bert_grid")
elif shown == "All layers × heads":
    level = st.radio("Cells", ["token", "sentence"], key=keep("bert_level"), horizontal=True)
    plot(figure(A.overview, trace, colorscale=colorscale, level=level, scale=scale), key="bert_overview")
elif shown == "Rollout":
    r = rollout(trace)  # [T, T]
    st.caption("Attention rollout (Abnar & Zuidema 2020): each layer's head-mean attention A, with the residual "
               "as 0.5·A + 0.5·I (rows renormalised), multiplied up all layers. Row = a top-layer token, column = "
               "the input token it draws from; rows sum to 1. Heads switched off are left out of the mean.")
    plot(X.rollout_heatmap(trace, r, hide_special=hide, sentence_range=rng, colorscale=colorscale, scale=scale),
         key="bert_rollout")
    draw, draw_sents = sentence_draw(trace, r)
    st.caption("Each sentence's vector is the mean of its tokens [CLS] … [SEP] (times a scale), so what it draws "
               "from is the mean of their rollout rows." if trace.summary.pooling == "mean" else
               "Each sentence's vector is its [CLS] output: its row of the rollout.")
    plot(X.sentence_draw_heatmap(trace, draw, draw_sents, colorscale=colorscale, scale=scale),
         key="bert_rollout_sentences")
else:
    plot(figure(A.sentence_heatmap, trace, layer, head, colorscale=colorscale), key="bert_sentence")
    st.caption("Attention mass from sentence i to sentence j: the mean over the query tokens of i of the "
               "summed weights on the key tokens of j.")
