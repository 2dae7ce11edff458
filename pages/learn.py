"""Page 5: scaled dot-product attention step by step, with this document's real numbers."""
import numpy as np
import streamlit as st

from ui.figures import figure, plot
from ui.runs import run_mixing
from ui.widgets import layer_head_pickers, need_trace, window_caption
from ui.state import keep
from viz.common import token_labels
from viz.learn import attention_steps, step_figures

trace = need_trace()
L, H, T, dh = trace.bert_query.shape
st.title("Learn: how one attention head works")
if window_caption(trace):
    st.caption(window_caption(trace))
st.markdown(
    "Every token of the document asks a question (its **query** vector *q*), offers a label (its **key** "
    "vector *k*) and carries content (its **value** vector *v*). A head compares the question of one token "
    "with the label of every token, turns the matches into weights that sum to 1, and returns the weighted "
    "mix of the values:\n\n"
    r"$$\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}+M\right)V$$"
    "\n\nPick one head and one query token; below are the real numbers from this document.")
c = st.columns([1, 1, 2, 1.4], vertical_alignment="bottom")  # the toggle's label whole at 1400 px
layer, head = layer_head_pickers(L, H, "learn", mean=False, cols=c[:2])
labels = token_labels(trace.tokens, range(T), escape=str)  # a selectbox shows its options as plain text
if st.session_state.get("learn_query", min(1, T - 1)) not in range(T):
    st.warning(f"This view's query token {st.session_state['learn_query'] + 1} is past this window's {T} tokens: "
               "showing token 2.")
    st.session_state.pop("learn_query")
st.session_state.setdefault("learn_query", min(1, T - 1))  # not index=: a link, lesson or class may set it
query = c[2].selectbox("Query token", range(T), format_func=lambda i: labels[i], key=keep("learn_query"))
causal = c[3].toggle("Causal mask", key=keep("causal"),
                     help="A decoder's look-ahead mask: hide every key after the query. BERT, an encoder, "
                          "has none. Steps 3 and 4 change.")
figs = figure(step_figures, trace, layer, head, query, causal)  # shared: a class's students all see this one
steps = attention_steps(trace, layer, head, query, causal)

st.header("Q and K")
st.markdown(f"BERT multiplies each token's hidden vector by three learned matrices to get q, k and v. "
            f"Each of the {H} heads works in its own {dh}-dimensional slice.")
plot(figs["q"], key="learn_q")
plot(figs["K"], key="learn_K")
st.header("1. Scores: q · kⱼ")
st.markdown("The dot product is large when the query and a key point the same way: one number per key token.")
plot(figs["logits"], key="learn_logits")
st.header("2. Divide by √d")
st.markdown(f"With d = {dh} dimensions the dot products grow like √d; dividing by √{dh} = {np.sqrt(dh):.2f} "
            "keeps the softmax from saturating (Vaswani et al. 2017, §3.2.1).")
plot(figs["scaled"], key="learn_scaled")
st.header("3. Add the mask")
if causal:
    st.markdown(f"A **decoder** adds a look-ahead mask: −10000 on every key after the query (token {query + 1}), "
                "so it can only use what came before. BERT, an encoder, has no such mask: it reads the whole "
                "window at once.")
else:
    st.markdown("The **attention mask** is added to the scores: 0 for real tokens, −10000 for padding, so after "
                "the softmax padding gets weight ≈ 0. A single document has no padding: the mask is all zeros "
                "here. *Masks & positions* shows it at work in a padded batch; switch on the decoder mask "
                "above to see a mask that hides something.")
plot(figs["masked"], key="learn_masked")
st.header("4. Softmax")
if causal:
    hidden = float(steps["captured"][query + 1:].sum())
    st.markdown(f"With the causal mask the weight BERT gave to later tokens ({hidden:.1%} of this row) goes to "
                "the earlier ones instead: the remaining weights are rescaled to sum to 1. Red dots: BERT's own "
                "weights, computed without the mask.")
else:
    st.markdown(f"exp(score) / Σ exp(score): positive weights summing to 1. Red dots: the weights BERT itself "
                f"computed (captured during the run); largest difference from our recomputation from the "
                f"float16 q, k: **{steps['max_abs_diff']:.1e}**.")
plot(figs["probs"], key="learn_probs")
st.header("5. Weighted sum of the values")
plot(figs["V"], key="learn_V")
plot(figs["out"], key="learn_out")
st.markdown("The outputs of all heads are concatenated and projected back to the model size; this is one "
            "of the inputs the next layer works on.")

st.header("Where does word order come in?")
st.markdown(
    "Attention itself ignores order: shuffle the tokens and every weight stays the same. So position is "
    "**added** to the inputs. BERT adds a *learned* position embedding to each token (one row per position "
    "0–511), plus an **interval segment** embedding (A/B alternating per sentence, as in BertSum). The "
    "sentence encoder adds the fixed *sinusoidal* encoding PE(pos, 2i) = sin(pos / 10000^(2i/d)), "
    "PE(pos, 2i+1) = cos(…) to each sentence vector, so it knows sentence 1 from sentence 10. See "
    "*Masks & positions* for both tables.")

st.header("6. A big weight is not a big contribution")
st.markdown("The weight says how much of token j's value vector is mixed in; what arrives is α times **that "
            "vector**, f(x_j) = (x_j W_V + b_V) W_O, and some vectors are short (Kobayashi et al. 2020).")
if st.toggle("Find such a head in this document", key=keep("learn_sep"),
             help="Measures every head's norm-weighted contributions ‖α f(x)‖ for this window (a few seconds, once)."):
    from analysis.mixing import sep_head

    found = sep_head(trace.bert_attention, run_mixing(trace))
    if found is None:
        st.info("This window has no [SEP] token or no word to compare.")
    else:
        st.markdown(
            f"**Layer {found['layer'] + 1}, head {found['head'] + 1}** puts **{found['attention_on_sep']:.0%}** of its "
            f"attention on [SEP] tokens, on average over the query tokens. But a [SEP]'s vector through this head "
            f"is short: ‖f(x)‖ = {found['sep_vector_norm']:.2f} against {found['word_vector_norm']:.2f} for the "
            f"words. So [SEP] brings only **{found['contribution_of_sep']:.0%}** of what the head adds "
            f"(norm-weighted). The head looks at [SEP] but mostly passes on the little it takes from the words: "
            "a weight on [SEP] often means *nothing to add here*. BERT attention → *Show: norm-weighted* draws "
            "this for every head.")
        st.caption(f"How this head was chosen: of the {found['candidates']} heads that put at least half as much "
                   f"attention on [SEP] as the most [SEP]-attending one ({found['most_attention_on_sep']:.0%}), the "
                   f"one whose attention on [SEP] most exceeds [SEP]'s share of its contribution "
                   f"({found['attention_on_sep'] / max(found['contribution_of_sep'], 1e-12):.1f}×)."
                   + (" This model's heads look at [SEP] much less than BERT-base's, where many heads of the middle "
                      "layers put over half their attention on it (Clark et al. 2019)."
                      if found["most_attention_on_sep"] < 0.25 else ""))
