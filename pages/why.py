"""Why this summary: position vs content and word attributions (filled in by issue 16)."""
import streamlit as st

from pages.common import need_trace

trace = need_trace()
st.title("Why this summary")
