"""Page 4: the masks and the position information the model sees: in a padded batch, as BertSum
trains, for this document, and against a decoder's causal mask."""

import numpy as np
import streamlit as st

from ui import state, view
from ui.figures import figure, plot, shared_figure
from ui.resources import get_model
from ui.runs import batch_key, result_key, run_batch
from ui.widgets import BATCHED, batch_others, batch_texts, need_trace, window_caption
from viz import masks as M

trace = need_trace()
params = state.params()
st.title("Masks & positions")
if window_caption(trace):
    st.caption(window_caption(trace))

st.header("Masks in a batch")
st.markdown(
    "BertSum trains on **batches**: several documents side by side, the shorter ones **padded** to the "
    "longest. Masks tell attention which positions are real. Here this document's first 512-token window "
    "is batched with other documents, exactly as in training (PreSumm's `Batch`).")
others = batch_others(params["text"])
asked_for = st.session_state.setdefault("batch_docs", list(others)[:BATCHED])
if any(n not in others for n in asked_for) or len(asked_for) > 3:
    st.warning("This view batches documents this server does not have (or more than 3): batching "
               + (", ".join(n for n in asked_for if n in others)[:200] or "none of them") + ".")
    st.session_state["batch_docs"] = [n for n in asked_for if n in others][:3]
chosen = st.multiselect("Documents batched with this one", list(others), key=state.keep("batch_docs"),
                        max_selections=3)
texts = batch_texts(params["text"], chosen)
model = get_model(params["weights"], params["device"])
n_layers, n_heads = model.size()[:2]
c = st.columns(3)
for key, n, what in (("batch_layer", n_layers, "layer"), ("batch_head", n_heads, "head")):
    if st.session_state.get(key, 0) not in range(n):
        st.warning(f"This model has no {what} {st.session_state[key] + 1} (it has {n}): showing the first.")
        st.session_state[key] = 0
layer = c[0].selectbox("BERT layer", range(n_layers), format_func=lambda i: f"{i + 1}",
                       key=state.keep("batch_layer"))


batch_of = batch_key(texts, layer)  # besides the document and its settings
batch = run_batch(params, texts, layer)
lengths = batch.attention_mask.sum(1)
st.caption(f"{len(texts)} documents: " + ", ".join(f"document {b + 1} {n} tokens" for b, n in enumerate(lengths))
           + f"; padded to {batch.attention_mask.shape[1]} tokens and {batch.cls_mask.shape[1]} sentences.")
for which in ("padding", "additive", "cls", "inter"):
    plot(shared_figure(trace, ("batch_mask", which, *batch_of), lambda: M.batch_mask_heatmap(batch, which)),
         key=f"batch_{which}")
padded = int(np.argmin(lengths))
head = c[1].selectbox("Head", range(batch.bert_attention.shape[1]), format_func=lambda h: f"{h + 1}",
                      key=state.keep("batch_head"))
if view.fresh(st.session_state, "batch_doc", result_key("batch", params, *batch_of)) \
        or st.session_state.get("batch_doc") not in range(len(texts)):  # a new batch opens on its padded document
    st.session_state["batch_doc"] = padded
doc = c[2].selectbox("Document", range(len(texts)), format_func=lambda b: f"{b + 1} ({lengths[b]} tokens)",
                     key=state.keep("batch_doc"))
plot(shared_figure(trace, ("batch_row", doc, head, *batch_of), lambda: M.batch_attention_row(batch, doc, head)),
     key="batch_row")
st.caption("The additive mask puts −10000 on the logits of padded keys; after the softmax their weight is "
           "e^−10000 ≈ 0, so a padded document attends only to its own tokens. The sentence encoder fills "
           "masked logits with −1e18 (PreSumm) and multiplies padded sentences' scores by 0.")

st.header("Encoder vs decoder")
causal = st.toggle("Decoder (causal) mask", key=state.keep("causal"),
                   help="A Transformer decoder (GPT, the summary writer of abstractive models) adds a look-ahead "
                        "mask so each token sees only itself and earlier tokens. BERT is an encoder: no such mask.")
plot(figure(M.mask_matrix, trace, 40, causal), key="mask_matrix")
st.caption("On the Learn page the same toggle shows how the softmax of one query changes under the causal mask.")

st.header("This document's masks")
st.markdown("A single document has no padding: every token and every sentence is real, so these are all ones "
            "(or all zeros for the additive and the sentence encoder's masks). The batch above shows them at work.")
plot(figure(M.token_mask_strip, trace), key="token_mask")
plot(figure(M.extended_mask_strip, trace), key="extended_mask")
plot(figure(M.cls_mask_strip, trace), key="cls_mask")
plot(figure(M.inter_mask_matrix, trace), key="inter_mask")

st.header("Segments and positions")
plot(figure(M.segment_strip, trace), key="segments")
c1, c2 = st.columns(2)
with c1:
    plot(figure(M.pe_table_heatmap, trace), key="pe_table")
with c2:
    plot(figure(M.sentence_pe_heatmap, trace), key="sentence_pe")
plot(figure(M.position_embedding_heatmap, trace), key="position_embeddings")
