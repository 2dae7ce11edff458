"""What a page says when something fails: the shared store out of reach (one notice per run, what
is shown stays), and an error nobody planned for (logged with an id; one line in the browser,
never a traceback)."""
from __future__ import annotations

import logging

import streamlit as st

from ui import state

LOG = logging.getLogger("microscope")


def shared(fn, *args, default=None):
    """``fn(*args)``, which reads or writes the shared store; when the store cannot be reached
    (ui.store.Unavailable: PostgreSQL down or cut off, SQLite's disk full): ``default``, a line in
    the log, and the run's notice (``store_notice``). What the page shows stays."""
    from ui.store import Unavailable

    try:
        return fn(*args)
    except Unavailable as e:
        LOG.warning("shared store unavailable: %s", e)
        st.session_state[state.STORE_DOWN] = str(e)
        return default


def store_notice(slot) -> None:
    """At the end of a run, in ``slot`` (near the top): that the shared store was unreachable."""
    why = st.session_state.pop(state.STORE_DOWN, None)
    if why:
        slot.warning(f":material/cloud_off: Right now {why}. What you see stays; links and classes wait "
                     "for it and go on by themselves when it is back.")


def unexpected(error: Exception) -> None:
    """An error nobody planned for: logged on the server with an id, one line in the browser."""
    import uuid

    error_id = uuid.uuid4().hex[:8]
    LOG.error("error %s: %s", error_id, error, exc_info=error)
    st.error(f"Something went wrong on the server (error id {error_id}); it has been logged. Try again, or "
             "send the id to whoever runs this server.")
