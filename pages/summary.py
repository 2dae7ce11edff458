"""Page 1: the extracted summary next to the source document, every sentence with its score and
why it is (not) in the summary (analysis.explain.selection)."""
import html

import streamlit as st

from analysis.explain import selection
from pages import state
from pages.common import examples, need_trace, plot, result_caption, shared_figure
from pages.export import download_row
from viz.summary import document_html, legend_html, score_bars

trace = need_trace()
s = trace.summary
params = state.params()
statuses = selection(s, params["k"], params["block_trigram"])

st.title("Summary")
left, right = st.columns([3, 2], gap="large")
with left:
    st.subheader(f"{len(s.selected)} of {len(s.sentences)} sentence{'s' if len(s.sentences) != 1 else ''}")
    st.html("".join(f"<p><b>{i + 1}.</b> {html.escape(s.sentences[i])}</p>" for i in s.selected))  # text, not markdown
    download_row(trace, [x.status for x in statuses], lambda: report())
    st.subheader("Document")
    notes = []
    if s.too_short:
        notes.append(f"{len(s.too_short)} sentences under 5 words are shown but not scored (grey)")
    if s.truncated:
        notes.append(f"{len(s.truncated)} sentences ({s.tokens_cut} tokens) past BERT's 512-token limit "
                     "were cut (struck through)")
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
