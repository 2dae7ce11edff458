"""Page 3: the TransformerInterEncoder's attention between sentences, beside the scores."""
import streamlit as st

from pages.common import COLORSCALES, layer_head_pickers, need_trace, plot
from pages.state import keep
from viz.inter import inter_heatmap

trace = need_trace()
L2, H2, S = trace.inter_attention.shape[:3]
st.title("Sentence encoder")
source = "mean of each sentence's tokens" if trace.summary.pooling == "mean" else "[CLS] outputs"
st.caption(f"The {S} sentence vectors ({source} of BERT's top layer + sinusoidal position) pass through {L2} "
           f"Transformer layers with {H2} heads each, then a sigmoid gives each sentence its score. "
           "★ = selected for the summary.")
c = st.columns(3)
layer, head = layer_head_pickers(L2, H2, "inter", cols=c[:2])
colorscale = c[2].selectbox("Colour scale", COLORSCALES, key=keep("inter_colors"))
plot(inter_heatmap(trace, layer, head, colorscale=colorscale), key="inter_heatmap")
