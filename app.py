"""Attention microscope for extractive summarization: `streamlit run app.py`.

The sidebar (document, summary length, trigram blocking, model, Summarize) is shared by every
page; the pages read the Trace of the last Summarize click from a bounded cache."""
from __future__ import annotations

import ctypes
import os

# Many sessions share 2 cores: OpenMP threads that spin while waiting steal the CPU from each
# other (summarize took 1.3 s at any length under load, 0.2 s with passive waiting), and glibc
# gives every Streamlit script thread its own malloc arena (RSS +25%). Both before torch loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
try:
    ctypes.CDLL("libc.so.6").mallopt(-8, 2)  # M_ARENA_MAX = 2
except (OSError, AttributeError):  # not glibc
    pass

import streamlit as st  # noqa: E402
import torch  # noqa: E402

from pages.common import (current_trace, examples, get_model, head_choices, load_upload, preload_plotly, run_trace,
                          start_session)

st.set_page_config(page_title="Attention microscope", page_icon=":material/biotech:", layout="wide")
start_session()

EXAMPLES = examples()
# Streamlit forgets a widget's value in a run that does not draw it (another view or page): carry
# the pickers over, so a layer chosen in one view is still chosen in the next. (Not the sentence
# range or query token: their options depend on the document.)
for key in ("bert_view", "bert_layer", "bert_head", "bert_colors", "bert_hide", "bert_level",
            "inter_layer", "inter_head", "inter_colors", "learn_layer", "learn_head"):
    if key in st.session_state:
        st.session_state[key] = st.session_state[key]


def load_example():
    name = st.session_state.get("example")
    if name in EXAMPLES:
        st.session_state["document"] = EXAMPLES[name].read_text(encoding="utf-8")


with st.sidebar:
    st.selectbox("Example document", list(EXAMPLES), index=None, placeholder="Pick an example…",
                 key="example", on_change=load_example)
    st.file_uploader("…or upload a .txt / .md file", type=["txt", "md"], key="upload", on_change=load_upload)
    st.text_area("Document", key="document", height=220, placeholder="Paste a news article here.")
    c1, c2 = st.columns(2)
    k = c1.number_input("Summary length k", min_value=1, max_value=10, value=3, key="k")
    block = c2.checkbox("Trigram blocking", value=True, key="block_trigram",
                        help="Skip a sentence sharing a trigram with one already chosen (BertSum).")
    with st.expander("Model"):
        head = st.selectbox("Head weights", head_choices(), key="head")
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
        device = st.selectbox("Device", devices, key="device")
        model = get_model(head, device)
        st.caption(f"Backbone **{model.backbone}** · head **{model.head}** · sentence vectors **"
                   f"{model.model.pooling}** · device **{model.device}**")
    clicked = st.button("Summarize", type="primary", width="stretch")

if clicked:
    params = dict(text=st.session_state.get("document") or "", k=int(k), block_trigram=bool(block),
                  head=head, device=device)
    try:
        with st.spinner("Running BERT and the sentence encoder…"):
            run_trace(**params)
        st.session_state["params"] = params
        st.session_state["window"] = 0
        st.session_state.pop("error", None)
    except ValueError as e:  # empty or too long: the model's own one-line message
        st.session_state["error"] = str(e)

if "error" in st.session_state:
    st.error(st.session_state["error"])

trace = current_trace()
if trace is not None:
    if len(trace.windows) > 1:  # BERT reads 512 tokens at a time: pick whose internals to show
        def window_name(w: int) -> str:
            sents = trace.input_sentences[slice(*trace.windows[w])]
            return f"{w + 1} (sentences {sents.min()}–{sents.max()})"

        st.sidebar.selectbox("BERT window", range(len(trace.windows)), format_func=window_name, key="window",
                             help="BERT reads at most 512 tokens: long documents are read in windows.")
        trace = current_trace()
    if trace.summary.head == "untrained":
        st.sidebar.caption(":material/warning: The sentence scorer is untrained: scores are random.")
with st.sidebar:
    preload_plotly()  # last: an empty 10-px chart

pg = st.navigation([
    st.Page("pages/summary.py", title="Summary", icon=":material/summarize:", default=True),
    st.Page("pages/bert_attention.py", title="BERT attention", icon=":material/grid_on:"),
    st.Page("pages/sentence_encoder.py", title="Sentence encoder", icon=":material/hub:"),
    st.Page("pages/masks_positions.py", title="Masks & positions", icon=":material/masks:"),
    st.Page("pages/learn.py", title="Learn", icon=":material/school:"),
])
pg.run()
