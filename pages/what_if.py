"""What if: document A is the current one, B an edited copy (one click per edit, or pasted); both
summaries side by side, every sentence's two scores aligned by text, which sentences entered or
left the summary and why, how much each head's attention changed, and activation patching: which
parts of the model carry a sentence's score change (analysis/compare.py, edits.py, alignment.py, patching.py)."""
from __future__ import annotations

import html
import re

import numpy as np
import pandas as pd
import streamlit as st

from analysis import compare as C

from analysis import alignment as AL

from analysis import edits as E

from analysis import patching as P
from ui import a11y, state
from ui.figures import head_map, plot, shared_figure
from ui.resources import get_model
from ui.runs import cached, peek, progress, sha, stepped
from ui.widgets import examples, need_trace, result_caption, window_caption
from ui.export import frame_csv
from ui.state import keep
from ui.view import EDIT_KINDS, default
from viz import what_if as VW
from viz.common import markdown_text, preview

EDITS = "whatif_edits"  # the edits' string forms ("move:1:end"), applied in order; a link carries them
KINDS = {"move": "Move a sentence", "delete": "Delete a sentence", "replace": "Replace a sentence",
         "mask": "Mask a word", "swap": "Swap two sentences"}
HELP = ("Edit the document and watch the summary: each edit makes B from A (sentence numbers are those of B "
        "as it stands when the edit is added). Activation patching runs B with one part of the model taken "
        "from A and reports how much of a sentence's score change that part restores.")

trace = need_trace()
params = state.params()
model = get_model(params["weights"], params["device"])
text_a, k, block = params["text"], params["k"], params["block_trigram"]
st.title("What if", help=HELP)


def spec_of(kind: str, i: int, with_key: str) -> str:
    """The edit the pickers name now (their values in the session), as "move:1:end" etc."""
    get = st.session_state.get
    if kind == "move":
        to = get("whatif_to", "end")
        return f"move:{i + 1}:{to if isinstance(to, str) else to + 1}"
    if kind == "swap":
        return f"swap:{i + 1}:{get(with_key, 0) + 1}"
    if kind == "replace":
        return f"replace:{i + 1}:{get('whatif_text', '')}"
    if kind == "mask":
        return f"mask:{i + 1}:{get('whatif_word')}"
    return f"delete:{i + 1}"


def add_edit(text_b: str, pick_key: str, with_key: str) -> None:
    """Add's callback: runs before the page, so the pickers are built from the new B (in the
    page body they still named the old B's sentences after Add)."""
    spec = spec_of(st.session_state.get(keep("whatif_kind"), "move"), st.session_state.get(pick_key, 0), with_key)
    try:
        E.apply_edits(text_b, [spec], model)  # refused here, one line, before it joins the list
        st.session_state[EDITS] = list(st.session_state.get(EDITS, [])) + [spec]
    except ValueError as err:
        st.session_state["whatif_refused"] = str(err)


edits = list(st.session_state.get(EDITS, []))
st.session_state.setdefault("whatif_source", default("whatif_source"))  # shown selected from the start
source = st.segmented_control("Document B", ["Edits", "Pasted text"], key=keep("whatif_source"), required=True) or "Edits"
if source == "Edits":
    text_b, problem = E.edited(text_a, edits, model)
    b_sents = E.sentences(text_b)
    numbered = lambda j: f"{j + 1}: {preview(b_sents[j], 60)}"  # noqa: E731
    # A new B, new pickers (keys of B's hash): with one key the browser's box kept the old B's labels.
    pick_key, with_key = f"whatif_sentence_{sha(text_b)[:12]}", f"whatif_with_{sha(text_b)[:12]}"
    st.session_state.setdefault(pick_key, min(st.session_state.get("whatif_last", 0), len(b_sents) - 1))
    c = st.columns([2, 3, 3, 1], vertical_alignment="bottom")
    kind = c[0].selectbox("Edit", EDIT_KINDS, format_func=KINDS.get, key=keep("whatif_kind"))
    i = c[1].selectbox("Sentence", range(len(b_sents)), format_func=numbered, key=pick_key)
    st.session_state["whatif_last"] = i
    if kind == "move":
        c[2].selectbox("To", ["end", "start", *range(len(b_sents))], key="whatif_to",
                       format_func=lambda t: t if isinstance(t, str) else f"position {t + 1}")
    elif kind == "swap":
        c[2].selectbox("With", range(len(b_sents)), format_func=numbered, key=with_key)
    elif kind == "replace":
        c[2].text_input('New text', key='whatif_text', placeholder='Type the new sentence')
    elif kind == "mask":
        c[2].selectbox('Word', sorted({w for w in re.findall(r"\w+", b_sents[i])}, key=str.lower), key='whatif_word')
    c[3].button("Add", type="primary", key="whatif_add", on_click=add_edit, args=(text_b, pick_key, with_key))
    if "whatif_refused" in st.session_state:
        st.error(markdown_text(st.session_state.pop("whatif_refused")))
    if edits:
        c = st.columns([6, 1, 1], vertical_alignment="center")
        c[0].markdown("**Edits:** " + markdown_text(" → ".join(edits)))
        c[1].button("Undo", key="whatif_undo", on_click=lambda: st.session_state.update({EDITS: edits[:-1]}))
        c[2].button("Clear", key="whatif_clear", on_click=lambda: st.session_state.update({EDITS: []}))
    if problem:
        st.warning(markdown_text(f"Not applied: {problem}. B is A with the edits before it."))
else:
    st.session_state.setdefault("whatif_b", text_a)
    text_b = st.text_area("Document B", key=keep("whatif_b"), height=180, help="Any text; sentences are aligned with A's by text.")

if text_b == text_a:
    st.info("B is the same as A: add an edit (or paste another text) to compare.")
    st.stop()




try:
    with progress("Running A and B", runs=2):
        cmp = cached("whatif", params, lambda: C.compare(model, text_a, text_b, k, block), sha(text_b), model_run=True)
except ValueError as err:  # e.g. B is empty or too long: the model's own one-line message
    st.error(markdown_text(str(err)))
    st.stop()
sa, sb = cmp.summary_a, cmp.summary_b

# ---------------------------------------------------------------- both summaries
left, right = st.columns(2, gap="large")
for col, name, s, other in ((left, "A: the document", sa, sb), (right, "B: edited", sb, sa)):
    with col:
        st.header(name, anchor=False)
        other_text = {other.sentences[j] for j in other.selected}
        st.html("".join(f"<p>{'' if s.sentences[i] in other_text else '<mark>only here</mark> '}<b>{i + 1}.</b> "
                        f"{html.escape(s.sentences[i])}</p>" for i in s.selected))
for tag, rows in (("Entered the summary", cmp.entered), ("Left the summary", cmp.left)):
    for r in rows:
        n = r.b if tag.startswith("Entered") else r.a
        doc = sb if tag.startswith("Entered") else sa
        st.html(f"<p><b>{tag}:</b> “{html.escape(preview(doc.sentences[n], 80))}” — {html.escape(r.reason)}.</p>")
if not cmp.entered and not cmp.left:
    st.caption("The same sentences are selected in A and B.")

# ---------------------------------------------------------------- aligned scores
st.header("Every sentence, aligned by its text", anchor=False)
# as text: an empty cell would read "None" (a sentence only in one document, or too short to score)
num = lambda x: "not scored" if x is None else f"{x:.3f}"  # noqa: E731
table = pd.DataFrame({
    "A #": ["—" if r.a is None else str(r.a + 1) for r in cmp.alignment],
    "B #": ["—" if r.b is None else str(r.b + 1) for r in cmp.alignment],
    "change": [r.kind for r in cmp.alignment],
    "score A": [num(x) if r.a is not None else "—" for x, r in zip(cmp.scores_a, cmp.alignment)],
    "score B": [num(x) if r.b is not None else "—" for x, r in zip(cmp.scores_b, cmp.alignment)],
    "Δ (B − A)": ["—" if x is None else format(x, "+.3f") for x in cmp.delta],
    "status A": [u.status if u else "" for u in cmp.status_a], "status B": [v.status if v else "" for v in cmp.status_b],
    "sentence": [" → ".join(d.sentences[i] for d, i in ((sa, r.a), (sb, r.b)) if i is not None)
                 if r.kind == "replaced" else (sa.sentences[r.a] if r.a is not None else sb.sentences[r.b])
                 for r in cmp.alignment]})
a11y.dataframe(table, "Every sentence, aligned", hide_index=True, key="whatif_table")

# ---------------------------------------------------------------- attention change per head
st.header("Which heads' attention changed", anchor=False)
st.caption(f"On the {cmp.aligned_tokens:,} tokens and {cmp.aligned_parts} sentences present in both: "
           + AL.CHANGE_METHOD)
plot(shared_figure(trace, ("whatif_change", sha(text_b)), lambda: VW.change_maps(cmp.bert_change, cmp.inter_change)),
     key="whatif_change")
L, H = cmp.bert_change.shape
order = [("bert", *divmod(int(x), H)) for x in np.argsort(-cmp.bert_change, axis=None)]
if st.session_state.get("whatif_head", order[0]) not in order:
    h = st.session_state["whatif_head"]
    st.warning(f"This model has no BERT layer {h[1] + 1}, head {h[2] + 1}: opening the head that changed most.")
    st.session_state.pop("whatif_head")
st.session_state.setdefault("whatif_head", order[0])
pick = st.selectbox("Open a BERT head in A and B", order, key=keep("whatif_head"), help="Heads with the largest change first.",
                    format_func=lambda h: f"layer {h[1] + 1}, head {h[2] + 1} (change {cmp.bert_change[h[1:]]:.3f})")[1:]
trace_b = cached("whatif_trace", params, lambda: E.masking(model).trace(text_b, k, block), sha(text_b))
if st.session_state.get("whatif_map_for") != pick:  # a new pick opens both maps on its head
    st.session_state["whatif_map_for"] = pick
    st.session_state["whatif_map_a"] = st.session_state["whatif_map_b"] = pick[1]
# A and B in tabs, each the page's width: side by side, the maps and their head buttons did not fit
# a 1024-1400 px window; flipping tabs shows the difference in place.
tab_a, tab_b = st.tabs(["A: the document", "B: edited"])
with tab_a:
    if window_caption(trace):
        st.caption(window_caption(trace))
    head_map(trace, pick[0], "whatif_map_a", "whatif_map_a_plot")
with tab_b:
    if len(trace_b.windows) > 1:
        st.caption("B's first BERT window.")
    head_map(trace_b, pick[0], "whatif_map_b", "whatif_map_b_plot")

# ---------------------------------------------------------------- activation patching
st.header("Which parts carry a sentence's change (activation patching)", anchor=False)
both = [(n, r) for n, r in enumerate(cmp.alignment) if r.kind in ("kept", "moved") and cmp.delta[n] is not None]
patching = None
if not both:
    st.info("No sentence is in both A and B with a score in each: nothing to patch.")
else:
    both.sort(key=lambda nr: -abs(cmp.delta[nr[0]]))
    by_a = {r.a: (n, r) for n, r in both}  # A's sentence → its row (the picker's value: A's sentence number)
    if st.session_state.get("whatif_patch_sentence", both[0][1].a) not in by_a:
        st.warning(f"This view's sentence {st.session_state['whatif_patch_sentence'] + 1} of A is not in both A and B "
                   "with a score: patching the one that changed most.")
        st.session_state.pop("whatif_patch_sentence")
    st.session_state.setdefault("whatif_patch_sentence", both[0][1].a)
    n, row = by_a[st.selectbox("Sentence", list(by_a), key=keep("whatif_patch_sentence"),
                               format_func=lambda a: f"A {a + 1} → B {by_a[a][1].b + 1} "
                                                     f"(Δ {cmp.delta[by_a[a][0]]:+.3f}): {preview(sa.sentences[a], 60)}",
                               help="Largest score change first.")]
    st.session_state.setdefault("whatif_heads", default("whatif_heads"))
    heads_too = st.checkbox(f"Also every BERT head ({L * H} more runs of one window)", key=keep("whatif_heads"))
    patch_of = (sha(text_b), row.a, heads_too)  # besides the document and its settings
    patching = peek("whatif_patch", params, *patch_of)  # run by anyone on this server: shown at once
    slot = st.empty()
    if patching is None and (slot.button("Run activation patching", type="primary", key="whatif_patch")
                             or state.for_slide()):
        try:
            with stepped("Running B with each component taken from A", "BERT step {done} of {total}") as step:
                patching = cached("whatif_patch", params, lambda: P.patch(
                    model, text_a, text_b, row.a, bert_heads=heads_too, alignment=cmp.alignment, progress=step),
                    *patch_of, model_run=True)
            slot.empty()
        except ValueError as err:  # e.g. a sentence longer than a BERT window
            st.error(markdown_text(str(err)))
    if patching is not None:
        m = st.columns(3)
        m[0].metric("Score in A", f"{patching.score_a:.3f}")
        m[1].metric("Score in B", f"{patching.score_b:.3f}", f"{patching.score_b - patching.score_a:+.3f}")
        restored = {r.kind: r.fraction for r in patching.rows if r.kind in ("inter.pe", "vector", "all")}
        m[2].metric("Restored by its position row", f"{restored['inter.pe']:.0%}" if np.isfinite(restored["inter.pe"]) else "—")
        st.caption(VW.PATCH_CAPTION)
        plot(VW.component_bars(*patching.components()), key="whatif_components")
        if heads_too:
            plot(VW.head_patching_map(patching.grid("bert.attn.z")), key="whatif_head_patching")

# ---------------------------------------------------------------- exports
st.header("Export", anchor=False)


def comparison_csv() -> str:
    out = table.copy()
    out.insert(0, "edits", " → ".join(edits) if source == "Edits" else "pasted B")
    if patching is not None:  # the patching rows after the alignment, one per component
        rows = pd.DataFrame({"component": [P.row_label(r) for r in patching.rows],
                             "fraction restored": [r.fraction for r in patching.rows],
                             "patched score": [r.score for r in patching.rows]})
        return frame_csv(out) + f"\npatching of A sentence {patching.sentence_a + 1}\n" + frame_csv(rows)
    return frame_csv(out)


def report() -> str:
    from viz.report import html_report

    figures = [("Attention change per head", VW.change_maps(cmp.bert_change, cmp.inter_change))]
    if patching is not None:
        figures.append((f"Activation patching of sentence {patching.sentence_a + 1} of A",
                        VW.component_bars(*patching.components())))
    body = (f"<p>{html.escape('Edits: ' + (' → '.join(edits) if source == 'Edits' else 'B pasted'))}</p>"
            + table.to_html(index=False, na_rep="—", float_format=lambda x: f"{x:.3f}", escape=True))
    return html_report("Attention microscope: what if", result_caption(trace, params, examples(), plain=True),
                       [sb.sentences[i] for i in sb.selected], body, figures)


c = st.columns(2)
c[0].download_button("Comparison .csv", comparison_csv(), file_name="what_if.csv", mime="text/csv",
                     on_click="ignore", key="whatif_csv")
c[1].download_button("HTML report", report, file_name="what_if_report.html", mime="text/html",
                     on_click="ignore", key="whatif_html")
