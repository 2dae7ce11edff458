"""Which heads matter: head statistics, importance, heads switched off (filled in by issue 17)."""
import streamlit as st

from pages.common import need_trace

trace = need_trace()
st.title("Heads")
