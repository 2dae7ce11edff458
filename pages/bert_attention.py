"""Page 2: BERT self-attention, one head at a time or all at once."""
import streamlit as st

from pages.common import window_caption, COLORSCALES, layer_head_pickers, need_trace, plot
from pages.state import keep
from viz import attention as A
from viz.common import sentence_label

trace = need_trace()
L, H, T = trace.bert_attention.shape[:3]
st.title("BERT attention")
if window_caption(trace):
    st.caption(window_caption(trace))
st.caption(f"{T} tokens · {L} layers × {H} heads. Row = the query token attending, column = the key token "
           "attended to; each row sums to 1.")

view = st.segmented_control("View", ["One head", "All heads of a layer", "All layers × heads",
                                     "Sentence × sentence"], default="One head", key=keep("bert_view"))
view = view or "One head"
c = st.columns([1, 1, 1, 1])
if view != "All layers × heads":
    layer, head = layer_head_pickers(L, H, "bert", cols=c[:2], pick_head=view == "Sentence × sentence")
colorscale = c[2].selectbox("Colour scale", COLORSCALES, key=keep("bert_colors"))

sents = sorted({int(i) for i in trace.token_sentence})
if view in ("One head", "All heads of a layer"):
    o1, o2 = st.columns([1, 3])
    hide = o1.checkbox("Hide [CLS]/[SEP]", key=keep("bert_hide"))
    exact = o1.checkbox("Exact weights on hover", key="bert_exact", value=T <= 256,
                        help=f"Sends the float32 weights along with the 8-bit colours: 5× the data, "
                             f"~{(H + 1) * T * T * 5 * 4 / 3 / 2 ** 20:.0f} MB for this window's {H + 1} maps.")
    rng = (sents[0], sents[-1])
    if len(sents) > 1:
        rng = o2.select_slider("Sentences", options=sents, value=(sents[0], sents[-1]), key="bert_range",
                               format_func=lambda i: sentence_label(trace, i, 24))

if view == "One head":
    st.caption("Pick the head with the buttons above the map: they switch in the browser, at once.")
    plot(A.token_heatmap(trace, layer, head, hide_special=hide, sentence_range=rng, colorscale=colorscale,
                         exact_hover=exact), key="bert_token")
elif view == "All heads of a layer":
    plot(A.head_grid(trace, layer, hide_special=hide, sentence_range=rng, colorscale=colorscale), key="bert_grid")
elif view == "All layers × heads":
    level = c[3].radio("Cells", ["token", "sentence"], key=keep("bert_level"), horizontal=True)
    plot(A.overview(trace, colorscale=colorscale, level=level), key="bert_overview")
else:
    plot(A.sentence_heatmap(trace, layer, head, colorscale=colorscale), key="bert_sentence")
    st.caption("Attention mass from sentence i to sentence j: the mean over the query tokens of i of the "
               "summed weights on the key tokens of j.")
