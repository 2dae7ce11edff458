"""Page 1: the extracted summary next to the source document, every sentence with its score and
why it is (not) in the summary (analysis.explain.selection)."""
import html
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from analysis.explain import selection
from ui import a11y, state, view
from ui.classroom import choice_hidden
from ui.figures import html_block, plot, shared_figure
from ui.resources import get_model
from ui.runs import side_by_side
from ui.widgets import REFERENCE, examples, need_trace, result_caption
from ui.export import download_row
from viz.common import markdown_text, plural, preview
from viz.heads import score_comparison
from viz.summary import document_html, legend_html, score_bars

trace = need_trace()
s = trace.summary
params = state.params()
statuses = selection(s, params["k"], params["block_trigram"])

st.title("Summary")
if choice_hidden():  # a lesson asks which sentences the model will pick: its choice waits for the reveal
    st.caption("The model's choice (its summary, stars and scores) is hidden until the answer is revealed: "
               "predict it above.")
    st.header("Document")
    st.html("".join(f"<p><b>{i + 1}.</b> {html.escape(t)}</p>" for i, t in enumerate(s.sentences)))
    st.stop()
if s.reading is not None and s.reading.note:  # a language the model cannot read: said, nothing refused
    st.warning(s.reading.note, icon=":material/translate:")
pair = side_by_side("summary_other")
if pair is not None:  # two models on one document: their summaries and every sentence's scores
    other, b = pair
    cols = st.columns(2, gap="large")
    for col, name, summary in ((cols[0], params["weights"], s), (cols[1], other, b.summary)):
        with col:
            st.header(name, anchor=False)
            st.caption(f"{summary.weights} scorer · {Path(summary.backbone).name}")
            st.html("".join(f"<p>{'' if i in (s if summary is b.summary else b.summary).selected else '<mark>only here</mark> '}"
                            f"<b>{i + 1}.</b> {html.escape(summary.sentences[i])}</p>" for i in summary.selected))
    both = [i for i, (x, y) in enumerate(zip(s.scores, b.summary.scores)) if x is not None and y is not None]
    labels = np.array([f"{i + 1}{' ★' if i in s.selected else ''}: {preview(s.sentences[i], 40)}" for i in both], dtype=object)
    plot(shared_figure(trace, ("side_by_side", other), lambda: score_comparison(
        labels, np.array([s.scores[i] for i in both], dtype=np.float32),
        np.array([b.summary.scores[i] for i in both], dtype=np.float32),
        title=f"Sentence scores of both models (★ = selected by {params['weights']})", names=(params["weights"], other))),
        key="summary_side_by_side")
    st.divider()
left, right = st.columns([3, 2], gap="large")
with left:
    st.header(f"{len(s.selected)} of {len(s.sentences)} sentence{'s' if len(s.sentences) != 1 else ''}")
    st.html("".join(f"<p><b>{i + 1}.</b> {html.escape(s.sentences[i])}</p>" for i in s.selected))  # text, not markdown
    download_row(trace, [x.status for x in statuses], lambda: report())
    st.header("Document")
    notes = []
    if s.too_short:
        notes.append(f"{plural(len(s.too_short), 'sentence')} under 5 words "
                     f"{'is' if len(s.too_short) == 1 else 'are'} shown but not scored (grey)")
    if s.truncated:
        notes.append(f"{len(s.truncated)} sentences ({s.tokens_cut} tokens) past BERT's 512-token limit "
                     "were cut (struck through)")
    if s.past_training:
        notes.append(f"{len(s.past_training)} sentences (⁺) lie past the first {get_model(params['weights'], params['device']).trained_tokens} tokens the scorer was "
                     "trained on: their sentence positions were rarely or never seen in training, so position's share "
                     "of their score is partly extrapolated (see Why this summary)")
    blocked = sum(x.status == "trigram-blocked" for x in statuses)
    if blocked:
        notes.append(f"{blocked} sentence{'s' if blocked > 1 else ''} scored high enough but skipped by trigram "
                     "blocking (orange)")
    st.caption("Shading = score; ★ = in the summary; the left border = status (hover a sentence for the reason). "
               + ("; ".join(notes) + "." if notes else ""))
    st.html(legend_html())
    st.html(document_html(s, statuses))
with right:
    plot(shared_figure(trace, ("score_bars",), lambda: score_bars(s, statuses=statuses)), key="score_bars")

# ---------------------------------------------------------------- how good, against a reference (issue 60)
st.header("How good is this summary?")
reference = (st.session_state.get(REFERENCE) or "").strip()
if not reference:
    st.caption("Give a reference summary (sidebar: **Reference summary**) to score this summary against it with "
               "ROUGE, beside Lead-k and the greedy oracle, and see where each reference sentence "
               "comes from. The shipped examples bring theirs.")
else:
    from analysis.quality import in_words, quality
    from ui.runs import cached, sha, trace_key
    from viz.quality import alignment_html, mark, overlap_chart, rouge_html

    try:
        q = cached("quality", params, lambda: quality(list(s.sentences), list(s.selected), reference, params["k"]),
                   sha(reference))
    except ValueError as e:
        st.warning(markdown_text(str(e)))
    else:
        k = params["k"]
        names = {"model": f"This model (k = {k})",
                 "lead": f"Lead-{k} (the first {k} sentences{' after the title' if q.titled else ''})",
                 "oracle": f"Greedy oracle ({k} sentences added one at a time for ROUGE, as the training labels)"}
        table = pd.DataFrame([{"summary": names[n], "sentences": ", ".join(str(i + 1) for i in q.systems[n]),
                               "ROUGE-1": round(q.rouge[n]["rouge1"][2], 1), "ROUGE-2": round(q.rouge[n]["rouge2"][2], 1),
                               "ROUGE-L": round(q.rouge[n]["rougeLsum"][2], 1),
                               "reference words covered": f"{q.rouge[n]['rouge1'][1]:.0f}%"} for n in q.systems])
        a11y.dataframe(table, "ROUGE against the reference", hide_index=True, key="quality_table")
        verdict = (f"{in_words(q, k)} Ranked by ROUGE-1, the model is **{['first', 'second', 'third'][q.rank() - 1]}** "
                   "of the three.")
        st.markdown(verdict)
        html_block(rouge_html(table.to_dict("records"), verdict), "quality_rouge",  # a how-good slide's numbers
                   "How good: ROUGE beside Lead-k and the oracle", page=False)
        st.caption("ROUGE F1 × 100 (rouge-score, stemmed; ROUGE-L over sentences, as the papers report it). "
                   "Words covered: ROUGE-1 recall, the share of the reference's words the summary has.")
        plot(shared_figure(trace, ("quality", sha(reference)), lambda: overlap_chart(
            list(s.sentences), q.overlap, q.systems["model"], q.systems["oracle"])), key="quality_overlap")
        st.subheader("Where each reference sentence comes from")
        view.fresh(st.session_state, "quality_ref", (trace_key(trace), sha(reference)))  # a sentence of this reference
        if not 0 <= (st.session_state.get("quality_ref") or 0) < len(q.reference):
            st.session_state.pop("quality_ref", None)
        r = st.selectbox("Reference sentence", range(len(q.reference)), key=state.keep("quality_ref"),
                         format_func=lambda j: f"{j + 1}. {preview(q.reference[j], 80)}",
                         help="The document sentences it draws on: those that add the most of its two-word phrases.")
        drawn = q.alignment[r]
        st.caption("Draws on " + (", ".join(f"sentence {i + 1} {mark(i, q.systems['model'], q.systems['oracle'])}".strip()
                                            for i, _ in drawn) if drawn else "no sentence of the document (it is "
                                  "written in other words)") + ". ▶ marks them below.")
        with st.expander("The document, the sentences it draws on marked"):
            st.html(alignment_html(list(s.sentences), drawn, q.systems["model"]))
        if q.adds_nothing:
            st.markdown("Sentences of the model's summary that share no two-word phrase with the reference: "
                        + ", ".join(f"**{i + 1}** (“{markdown_text(preview(s.sentences[i], 50))}”)"
                                    for i in q.adds_nothing) + ".")
        else:
            st.caption("Every sentence of the model's summary shares a phrase with the reference.")


def report() -> str:
    """The standalone HTML report: settings, summary, statuses, the score chart, the sentence
    encoder's last layer and BERT's last-layer sentence × sentence attention (head means)."""
    from viz.attention import sentence_heatmap
    from viz.inter import inter_heatmap
    from viz.report import html_report

    L, L2 = trace.bert_attention.shape[0], trace.inter_attention.shape[0]
    figures = [("Sentence scores", score_bars(s, statuses=statuses)),
               (f"Sentence encoder, layer {L2}, mean of heads", inter_heatmap(trace, L2 - 1, None)),
               (f"BERT layer {L}, sentence × sentence attention (mean of heads)", sentence_heatmap(trace, L - 1, None))]
    return html_report("Attention microscope: summary report", result_caption(trace, params, examples(), plain=True),
                       [s.sentences[i] for i in s.selected], legend_html() + document_html(s, statuses), figures)
