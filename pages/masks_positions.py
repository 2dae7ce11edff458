"""Page 4: the masks and the position information the model sees."""
import streamlit as st

from pages.common import window_caption, need_trace, plot
from viz import masks as M

trace = need_trace()
st.title("Masks & positions")
if window_caption(trace):
    st.caption(window_caption(trace))

st.header("Masks")
st.markdown("A **mask** tells attention which positions exist. One document has no padding, so every "
            "token is real; in a batch, shorter documents are padded and the mask hides the padding.")
plot(M.token_mask_strip(trace), key="token_mask")
plot(M.extended_mask_strip(trace), key="extended_mask")
plot(M.cls_mask_strip(trace), key="cls_mask")
plot(M.inter_mask_matrix(trace), key="inter_mask")

st.header("Segments and positions")
plot(M.segment_strip(trace), key="segments")
c1, c2 = st.columns(2)
with c1:
    plot(M.pe_table_heatmap(trace), key="pe_table")
with c2:
    plot(M.sentence_pe_heatmap(trace), key="sentence_pe")
plot(M.position_embedding_heatmap(trace), key="position_embeddings")
