"""The one Streamlit work-around of the app shell: Streamlit 1.67's legacy multipage mode.

A folder named ``pages/`` beside the app script makes Streamlit 1.67 run the app in its old-style
multipage mode until ``st.navigation`` has run once in the server process (see ``start_session``).
The pages stay in ``pages/``, where the project's layout puts them (beside app.py, model/ and
viz/); this module answers that mode in one place, and tests/helpers.py's
``navigation_not_pages_dir`` is the one test fixture for it."""
from __future__ import annotations

import streamlit as st


def start_session():
    """Streamlit 1.67's first-run workaround; call first in app.py and every page (need_trace
    does). Regression tests: tests/test_browser.py ``test_page_links_on_a_new_server_and_after``.
    Until st.navigation has run once
    in a server process, Streamlit 1.67 treats the ``pages/`` folder as an old-style multipage
    app: app.py runs wrapped in another page (its widgets get other IDs, so an edit made before
    the next run is lost) and a deep link runs the page alone, without the sidebar. A run
    started that way leaves the mode and reruns before drawing anything. The test is on this
    run, not the process-wide flag: sessions that start together may all be in that mode while
    the first of them already cleared the flag; and a rerun made when not needed forgets the
    page a link asked for. (Internals of a pinned streamlit.)"""
    import sys

    from streamlit.runtime.pages_manager import PagesManager

    frame = sys._getframe()
    while frame is not None and frame.f_code.co_name != "_mpa_v1":  # the pages-folder runner
        frame = frame.f_back
    if frame is not None:
        PagesManager.uses_pages_directory = False
        st.rerun()
