"""Why this summary: each sentence's score with and without its position, and which words of
the document raised or lowered the score of a chosen sentence (analysis.explain)."""
import html

import numpy as np
import streamlit as st

from model.summarizer import CONTROL
from ui import a11y, state, view
from ui.figures import html_block, plot, shared_figure
from ui.resources import get_model, model_slots
from ui.runs import asked, cached, peek, run_ablation, seconds_per_window, stepped
from ui.widgets import need_trace
from viz import explain as E
from viz.common import markdown_text, preview
from ui.view import LEAVE_OUT  # an option of its own: a None option reads "Choose an option" after a run

HELP = """**Position vs content.** BertSumExt adds a sinusoidal position row (Vaswani et al. 2017)
to each sentence vector before its sentence encoder. The orange dot is the sentence's score when
every sentence gets the same row — the mean of this document's rows, so no sentence is first
(the JSON also gives the mean over 8 shuffles of the rows). The gap to the blue dot is what its
place in the document adds.

**Words.** Gradient × input (Shrikumar et al. 2017; Denil et al. 2014; the gradient is
Simonyan et al. 2014's saliency) on BERT's word embeddings, back from the chosen sentence's
score through the sentence encoder and every BERT window, with Ali et al. (2022)'s conservative
rules (attention weights and LayerNorm scaling held constant in the backward pass). Each
word's weight is the sum over its WordPieces. Blue raised the score, orange lowered it. Checked by
deletion (tests/test_explain.py): deleting a selected sentence's 3 most-attributed words lowers
its score by 0.18 on average, 3 random words of it by 0.04 (plain gradient × input: 0.05, barely
better than random). Words of sentences too short to score are not fed to BERT: weight 0.
The gradients run in bfloat16 where the processor has it (the scores are float32); the words'
weights then stay within 3% of the float32 ones.

**Other methods.** *Integrated Gradients* (Sundararajan et al. 2017) averages the gradient along
the path from a baseline (every word at [MASK], [PAD] or zero: the one whose score is nearest 0)
to the document, with the model's own gradients: the words then add up to the score's change from
the baseline, up to a convergence delta that is shown. *Occlusion* (Zeiler & Fergus 2014) leaves
each word out in turn. "Compare the three methods" ranks them by deletion and insertion curves on
this sentence (`python -m analysis attribution` does it over documents).

**Attention** (the BERT attention page, view *Rollout*) shows where information flows
(Abnar & Zuidema 2020); attention alone is a weak explanation of a decision (Jain & Wallace
2019; Kobayashi et al. 2020), hence the gradients here."""


def explanation(params: dict, trace, sentences: tuple[int, ...] | None) -> dict:
    """``analysis.explain.explain`` of the current document (``trace``: its Trace), cached;
    progress while it runs."""
    from analysis.explain import explain

    def compute():
        with stepped("Attributing the scores to words", "{done} of {total} passes") as step, model_slots():
            return explain(get_model(params["weights"], params["device"]), params["text"], params["k"],
                           params["block_trigram"], sentences, mask_heads=params.get("mask_heads", ()),
                           progress=step, trace=trace)  # its float32 sentence vectors: no second forward

    return cached("explanation", params, compute, sentences)


METHODS = {"grad-input": "Gradient × input", "integrated-gradients": "Integrated Gradients", "occlusion": "Occlusion"}


def word_attribution(params: dict, i: int, j: int | None, method: str) -> dict:
    """``analysis.attribution.attribute`` of sentence ``i`` (against ``j``) by ``method``, cached;
    progress while it runs."""
    from analysis.attribution import attribute

    def compute():
        with stepped(f"{METHODS[method]}, attributing the score to words", "{done} of {total} passes") as step, \
                model_slots():
            return attribute(get_model(params["weights"], params["device"]), params["text"], i, j, method,
                             mask_heads=params.get("mask_heads", ()), progress=step)

    return cached("attribution", params, compute, i, j, method)


def completeness(a: dict) -> str:
    """What the words' weights add up to, in one or two sentences."""
    if a["method"] == "integrated-gradients":
        return (f"Integrated Gradients from a baseline with every word at {a['baseline'].upper()} "
                f"(the candidate whose score is nearest 0): the score is {a['gap']:.3f}, {a['baseline_gap']:.3f} at the "
                f"baseline, and the words add up to {a['sum']:.3f} of the {a['gap'] - a['baseline_gap']:.3f} between "
                f"them (convergence delta {a['delta']:+.4f}, {a['steps']} steps; Sundararajan et al. 2017).")
    return (f"Each word's weight is how much the score ({a['gap']:.3f}) drops when that word alone is set to "
            f"{a['baseline'].upper()} (Zeiler & Fergus 2014); the weights need not add up to anything (sum "
            f"{a['sum']:.3f}).")


LONG_TEXT = 6_000  # characters: a longer document's word colours scroll in a box


def moves(d: float, whose: str) -> str:
    """"raises the scores of … by 0.12", "lowers … by 0.03", "barely moves …"."""
    return (f"raises {whose} by {d:.2f}" if d >= 0.005 else f"lowers {whose} by {-d:.2f}" if d <= -0.005
            else f"barely moves {whose}")


trace = need_trace()
params = state.params()
st.title("Why this summary", help=HELP)
stop = st.empty()
if peek("explanation", params, None) is None:  # a long document: asked for first
    stop = asked("why", "Attributing the summary's scores to words", len(trace.windows),
                 len(trace.windows) * seconds_per_window(get_model(params["weights"], params["device"])))
    if stop is None:
        st.stop()
ex = explanation(params, trace, None)  # statuses, position scores and the selected sentences' words
stop.empty()
n = len(ex["sentences"])
unseen = frozenset(trace.summary.past_training)  # past the input the scorer was trained on (model/summarizer.py)
scored = [i for i in range(n) if ex["scores"][i] is not None]

# ---------------------------------------------------------------- position vs content
st.header("Position vs content")
real, neutral = np.array([ex["scores"][i] for i in scored]), np.array([ex["position_score"][i] for i in scored])
lead = min(3, len(scored))
bias = (real - neutral)[:lead].mean()
rest = (real - neutral)[lead:].mean() if len(scored) > lead else float("nan")
st.caption(f"On average, position {moves(bias, f'the scores of the first {lead} scored sentences')}"
           + (f" and {moves(rest, 'the others')}" if not np.isnan(rest) else "")
           + ". Orange: the score with a neutral position (every sentence gets the mean position row).")
left, right = st.columns([3, 2], gap="large")
with left:
    plot(shared_figure(trace, ("why_position",), lambda: E.position_chart(ex)), key="why_position")
with right:
    st.html("".join(f"<p>{'★ ' if i in ex['selected'] else ''}{html.escape(E.position_reading(ex, i, unseen))}</p>"
                    for i in ex["selected"]))

# ---------------------------------------------------------------- words
st.header("Which words moved the score")
result = (hash(params["text"]), params["k"], params["block_trigram"], params["weights"])
for key in ("why_sentence", "why_board"):  # a new summary: its first selected sentence, no scoreboard yet
    view.fresh(st.session_state, key, result)
if st.session_state.get("why_sentence") not in scored:
    if "why_sentence" in st.session_state:  # a view's sentence this document does not score
        st.warning(f"This view's sentence {st.session_state['why_sentence'] + 1} is not a scored sentence of this "
                   "document: showing its first selected one.")
    st.session_state["why_sentence"] = ex["selected"][0] if ex["selected"] else scored[0]
i = st.selectbox("Sentence", scored, key=state.keep("why_sentence"), on_change=st.session_state.pop,
                 args=("why_board", None),
                 format_func=lambda j: f"{j + 1}{' ★' if j in ex['selected'] else ''}: {preview(ex['sentences'][j], 70)}")
st.session_state.setdefault("why_method", view.default("why_method"))
method = st.segmented_control("Method", view.WORD_METHODS, key=state.keep("why_method"), format_func=METHODS.get,
                              help="Gradient × input: one backward pass, not complete. Integrated Gradients: the "
                                   "words add up to the score's change from a baseline (about 2 s a window). "
                                   "Occlusion: each word left out in turn (one pass per word).") or "grad-input"
text = CONTROL.sub(" ", params["text"])  # as the model read it: control and bidi characters blanked one for one


def method_words(i: int, m: str) -> list[dict]:
    """Sentence i's words with their weights by method ``m`` (gradient × input: the explanation's)."""
    if m == "grad-input":
        return (ex if str(i) in ex["attributions"] else explanation(params, trace, (i,)))["attributions"][str(i)]
    return word_attribution(params, i, None, m)["words"]


found = method_words(i, method)
spans = np.array([[a["start"], a["end"]] for a in found], dtype=np.int64).reshape(-1, 2)
weights = np.array([a["weight"] for a in found], dtype=np.float32)
up, down = E.top_words(text, spans, weights)
st.html(f"<p><b>Sentence {i + 1}</b>: {html.escape(ex['reason'][i])}.<br>"
        f"{html.escape(E.position_reading(ex, i, unseen))}.<br>"
        f"Raised most by: {html.escape(', '.join(up) or '—')}<br>"
        f"Lowered most by: {html.escape(', '.join(down) or '—')}</p>")
if method != "grad-input":
    st.caption(completeness(word_attribution(params, i, None, method)))
words = E.legend_html() + E.word_highlight_html(text, spans, weights, target=tuple(ex["spans"][i]))
named = f"Words that moved sentence {i + 1}'s score"
if len(text) > LONG_TEXT:  # the whole document: in a box of its own, so what follows stays near
    with st.container(height=600, key="why_words_box"):
        html_block(words, "why_words", named)
else:
    html_block(words, "why_words", named)

st.subheader("Which method to trust for this sentence")
if not st.toggle("Compare the three methods", key=state.keep("why_methods"),
                 help="Deletion and insertion curves of each method's ranking of the words (seconds)."):
    st.caption("Deletes the words each method ranks highest, and restores them to a document of [MASK]s: the "
               "method whose words move the score most is the most faithful here.")
else:
    from analysis.attribution import curves

    ranks = {m: np.array([w["weight"] for w in method_words(i, m)]) for m in view.WORD_METHODS}

    def compute_curves():
        with stepped("Deleting and restoring words, scoring again", "{done} of {total} copies") as step, \
                model_slots():
            return curves(get_model(params["weights"], params["device"]), params["text"], i, ranks,
                          mask_heads=params.get("mask_heads", ()), progress=step)

    c = cached("method_curves", params, compute_curves, i)
    plot(E.method_curves(c, {**METHODS, "random": "random order"}), key="why_method_curves")
    best = max(view.WORD_METHODS, key=lambda m: c["methods"][m]["aopc_deletion"] + c["methods"][m]["aopc_insertion"])
    st.caption(f"Sentence {i + 1}, score {c['score']:.3f} ({c['masked']:.3f} with all {c['words']} fed words at "
               f"[MASK]). AOPC: the mean change over {', '.join(f'{f:.0%}' for f in c['fractions'])} of the words, "
               f"deletion / insertion, higher is more faithful; here {METHODS[best]} is. One sentence says little: "
               "`python -m analysis attribution` compares the methods over documents, with intervals.")

# ---------------------------------------------------------------- why this sentence and not that one
st.header("Why this sentence and not that one")
from analysis.contrast import default_pair, top_heads  # noqa: E402

pair = default_pair(ex["scores"], ex["selected"])
for key, n in zip(("why_i", "why_j"), pair):  # a new summary: its lowest selected against a skipped lead or the best skipped
    if view.fresh(st.session_state, key, result) or st.session_state.get(key) not in scored:
        st.session_state[key] = n
label = lambda j: f"{j + 1}{' ★' if j in ex['selected'] else ''}: {preview(ex['sentences'][j], 60)}"  # noqa: E731
c1, c2 = st.columns(2)
i_c = c1.selectbox("Why this sentence…", scored, key=state.keep("why_i"), format_func=label)
j_c = c2.selectbox("…and not this one", scored, key=state.keep("why_j"), format_func=label)
if i_c == j_c:
    st.info("Pick two different sentences.")
else:
    from analysis.contrast import contrast

    exact = bool(st.session_state.get("why_exact")) or state.for_slide()  # the exact ablation: on request
    model_ = get_model(params["weights"], params["device"])
    ablation = None
    if exact:
        ablation = run_ablation(params)  # shared with the Heads page's exact ablation

    def compute():
        with stepped("Comparing the two scores: words and heads"), model_slots():  # no steps of its own
            return contrast(model_, params["text"], i_c, j_c, params["k"], params["block_trigram"],
                            params.get("mask_heads", ()), ablation=ablation, trace=trace, exact=exact, method=method)

    cmp = cached("contrast", params, compute, i_c, j_c, exact, method)
    st.info(markdown_text(cmp["verdict"]), icon=":material/balance:")  # its words are the document's: text
    m = st.columns(4)
    m[0].metric(f"Score of {i_c + 1}", f"{cmp['score_i']:.3f}")
    m[1].metric(f"Score of {j_c + 1}", f"{cmp['score_j']:.3f}")
    m[2].metric("Its content", f"{cmp['parts']['content']:+.3f}",
                help="The gap with the neutral position row for both (the mean of the document's rows).")
    m[3].metric("Its place", f"{cmp['parts']['position']:+.3f}", help="The rest of the gap: what position adds.")
    spans_c = np.array([[w["start"], w["end"]] for w in cmp["words"]], dtype=np.int64).reshape(-1, 2)
    weights_c = np.array([w["weight"] for w in cmp["words"]], dtype=np.float32)
    up_c, down_c = E.top_words(text, spans_c, weights_c)
    if "completeness" in cmp:
        st.caption(completeness({**cmp["completeness"], "method": method}))
    st.html(f"<p>Words that favour sentence {i_c + 1} over {j_c + 1}: {html.escape(', '.join(up_c) or '—')}<br>"
            f"Words that favour sentence {j_c + 1}: {html.escape(', '.join(down_c) or '—')}</p>")
    versus = E.legend_html().replace("raised the score", f"favours {i_c + 1}").replace(
        "lowered the score", f"favours {j_c + 1}") + E.word_highlight_html(text, spans_c, weights_c,
                                                                           target=tuple(ex["spans"][i_c]))
    rows = [{"head": f"{'BERT' if p == 'bert' else 'Sentence encoder'} {layer + 1}.{h + 1}",
             **({"gap change when off (exact)": round(cmp["heads"][p]["ablation"][layer][h], 4)} if exact else {}),
             "∂gap/∂gate (gradient)": round(cmp["heads"][p]["gradient"][layer][h], 4)}
            for p, layer, h, _ in top_heads(cmp["heads"], 5)]
    numbers = E.numbers_html(cmp["verdict"], [  # the slide's: what the page shows above in widgets of its own
        (f"Score of {i_c + 1}", f"{cmp['score_i']:.3f}"), (f"Score of {j_c + 1}", f"{cmp['score_j']:.3f}"),
        ("Its content", f"{cmp['parts']['content']:+.3f}"), ("Its place", f"{cmp['parts']['position']:+.3f}")],
        "The heads that tipped it", [f"{r['head']} (the gap {r['gap change when off (exact)']:+.3f} when off)" if exact
                                     else f"{r['head']} (∂gap/∂gate {r['∂gap/∂gate (gradient)']:+.3f})" for r in rows[:3]])
    with st.container(height=600 if len(text) > LONG_TEXT else "content", key="why_versus_box"):
        html_block(versus, "why_versus_words", f"Words that favour sentence {i_c + 1} over {j_c + 1}", head=numbers)
    a11y.dataframe(rows, "The heads that tipped it", hide_index=True, key="why_versus_heads")
    if not exact:
        st.button("Switch every head off, exactly (Michel et al. 2019)", key="why_exact_run",
                  icon=":material/play_arrow:", on_click=st.session_state.update, args=({state.keep("why_exact"): True},),
                  help="Until then the heads are ranked by the gradient estimate.")
    st.caption((f"{METHODS[method]} of the difference of the two scores (the method above). " if method != "grad-input" else
                "Gradient × input of the difference of the two scores (the same rules as above; exactly the first "
                "sentence's attribution minus the second's). ") + "Heads: each switched off alone, exactly (Michel et al. "
               "2019), and the change of the gap, beside the gradient estimate. Checked by deletion on the shipped "
               "examples: deleting the words most attributed to the gap shrinks it more than deleting random words.")

# ---------------------------------------------------------------- which explanation to trust
st.header("Which explanation to trust here")
st.caption("Delete the tokens each method ranks highest for this sentence's score (10-50% of the window's words; "
           "every [CLS] and [SEP] kept) and see how far the score falls (comprehensiveness, higher = more faithful), "
           "or keep only them (sufficiency, lower = more faithful), against 10 random orders (DeYoung et al. 2020). "
           "Methods: raw attention (last layer), rollout, ALTI through the sentence encoder, the gradient × input "
           "above, and optionally value zeroing of one layer (Mohebbi et al. 2023). About 300 shortened runs of the "
           "sentence's BERT window.")
L_bert = trace.bert_attention.shape[0]
c1, c2 = st.columns([2, 1])
if st.session_state.get("why_vz", LEAVE_OUT) not in [LEAVE_OUT, *range(L_bert)]:
    st.warning(f"This model has no BERT layer {st.session_state['why_vz'] + 1} (it has {L_bert}): value zeroing "
               "is left out.")
    st.session_state["why_vz"] = LEAVE_OUT
vz_pick = c1.selectbox("Value zeroing (float64, one more pass per token)", [LEAVE_OUT] + list(range(L_bert)),
                       format_func=lambda l: l if l == LEAVE_OUT else f"BERT layer {l + 1}", key=state.keep("why_vz"),
                       on_change=st.session_state.pop, args=("why_board", None))
vz_layer = None if vz_pick == LEAVE_OUT else vz_pick
if c2.button("Run the scoreboard", key="why_scoreboard_run", icon=":material/leaderboard:"):
    st.session_state[state.keep("why_board")] = True
if st.session_state.get("why_board"):
    from analysis import mixing as M
    from analysis import faithfulness as FA

    def board():
        model = get_model(params["weights"], params["device"])
        with stepped("Deleting tokens and scoring again", "{done} of {total} runs") as step, model_slots():
            enc = model.encode(params["text"], model.max_windows)
            heads = params.get("mask_heads", ())
            cap = M.capture(model, enc, M.sentence_window(model, enc, i, heads), heads)
            zeroed = None if vz_layer is None else M.value_zeroing(model, cap, vz_layer)[0]
            return FA.faithfulness(model, enc, i, params.get("mask_heads", ()), zeroed=zeroed, cap=cap,
                                   progress=step)

    b = cached("scoreboard", params, board, i, vz_layer)
    st.info(b["verdict"], icon=":material/verified:")
    rows = [{"sentences": FA.SCOPES[scope].split(" (")[0], "method": b["names"][m],
             "comprehensiveness ↑": round(v["aopc_comprehensiveness"], 3),
             "sufficiency ↓": round(v["aopc_sufficiency"], 3),
             "comp. − suff. ↑": round(FA.faithfulness_gap(v), 3)}
            for scope, entry in b["scopes"].items() for m, v in entry.items()]
    a11y.dataframe(rows, "Which explanation to trust", hide_index=True, width="stretch")
    spread = "; ".join(f"{FA.SCOPES[scope].split(' (')[0]}: "
                       f"{e['random']['aopc_comprehensiveness_std'] + e['random']['aopc_sufficiency_std']:.3f}"
                       for scope, e in b["scopes"].items() if "random" in e)
    st.caption(f"Sentence {i + 1}, score {b['score']:.3f}; values are the mean over deleted fractions "
               f"{', '.join(f'{f:.0%}' for f in b['fractions'])} (AOPC). The second block deletes only the other "
               "sentences' tokens: there the sentence's own words cannot carry the result. How far the random "
               f"orders spread (standard deviation, comprehensiveness + sufficiency) — {spread}: a method "
               "closer to random than that is no better than chance.")

# ---------------------------------------------------------------- the route from words to a score
st.header("The route from words to a score")
from analysis.route import route  # noqa: E402
from ui.runs import run_mixing  # noqa: E402
from viz.route import route_figure  # noqa: E402

if not (st.toggle("Draw the route", key=state.keep("why_route_show"),
                  help="Measures what every token and sentence contributes, layer by layer (ALTI): seconds, once "
                       "per document.") or state.for_slide()):
    st.caption("The contributions that carry one sentence's score, from the input words up BERT and the sentence "
               "encoder to the score, as a graph.")
else:
    mix = run_mixing(trace)
    here = {int(trace.input_sentences[p]): int(p) for p in mix.parts}  # this BERT window's sentences → their part
    view.fresh(st.session_state, "why_route", result)
    if st.session_state.get("why_route") not in here:
        st.session_state["why_route"] = next((i for i in ex["selected"] if i in here), next(iter(here)))
    c1, c2 = st.columns([3, 2])
    r_i = c1.selectbox("Sentence", list(here), key=state.keep("why_route"), format_func=label,
                       help="Sentences of the BERT window shown (sidebar: BERT window).")
    st.session_state.setdefault("why_route_min", view.default("why_route_min"))  # about a hundred nodes on a news article
    r_min = c2.slider("Keep contributions of at least (× the strongest of each stage)", 0.01, 0.9, step=0.01,
                      key=state.keep("why_route_min"), format="%.2f",
                      help="An edge's flow: its share of the node above times that node's share of the score; kept when "
                           "it is at least this fraction of the strongest flow at its stage.")
    found = route(mix, here[r_i], r_min)
    plot(route_figure(found, trace.tokens, [int(x) for x in trace.input_sentences], mix.alti_layer.shape[0],
                      mix.inter_alti_layer.shape[0], f"What carries sentence {r_i + 1}'s score: contributions of at least "
                      f"{r_min:.2f} × the strongest of each stage ({len(found.edges)} of them)"), key="why_route_graph")
    st.caption("Built from ALTI (Ferrando et al. 2022), the contributions of the BERT attention page's Show: ALTI, after "
               "Ferrando & Voita (2024)'s information-flow routes: from the score (right) through the sentence encoder's "
               "layers to each sentence's pooled vector, its tokens, and down BERT's layers to the input tokens (left). An "
               "edge's width is its flow; hover an edge for its share and flow. Lower the threshold to see more.")
