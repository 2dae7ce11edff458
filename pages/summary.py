"""Page 1: the extracted summary next to the source document, every sentence with its score."""
import html

import streamlit as st

from pages.common import need_trace, plot
from viz.summary import document_html, score_bars, summary_markdown

trace = need_trace()
s = trace.summary

st.title("Summary")
left, right = st.columns([3, 2], gap="large")
with left:
    st.subheader(f"{len(s.selected)} of {len(s.sentences)} sentences")
    st.html("".join(f"<p><b>{i}.</b> {html.escape(s.sentences[i])}</p>" for i in s.selected))  # text, not markdown
    c1, c2 = st.columns(2)
    c1.download_button("Download .txt", s.summary + "\n", file_name="summary.txt", mime="text/plain")
    c2.download_button("Download .md", summary_markdown(s), file_name="summary.md", mime="text/markdown")
    st.subheader("Document")
    notes = []
    if s.too_short:
        notes.append(f"{len(s.too_short)} sentences under 5 words are shown but not scored (grey)")
    if s.truncated:
        notes.append(f"{len(s.truncated)} sentences ({s.tokens_cut} tokens) past BERT's 512-token limit "
                     "were cut (struck through)")
    st.caption("Shading = score; ★ = in the summary. " + ("; ".join(notes) + "." if notes else ""))
    st.html(document_html(s))
with right:
    plot(score_bars(s), key="score_bars")
