"""The app's session state in one place: the keys that are not a widget's (``params`` of the
last Summarize, the BERT ``window``, the ``error`` to show) and ``keep`` for widget values.

Streamlit forgets a widget's value at the end of a run that does not draw it (another view or
page). A page wraps a widget's key in ``keep`` where it draws the widget; ``carry_widgets``,
called by app.py at the top of every run, writes each kept value back, which makes it
survive that run."""
from __future__ import annotations

from contextlib import contextmanager

import streamlit as st

PARAMS, WINDOW, ERROR, KEPT = "params", "window", "error", "_kept_widgets"
STORE_DOWN = "_store_down"  # this run could not reach the shared store: why (ui.errors.shared; app.py says it)
UNSAVED = "_unsaved_document"  # the summarized document, not yet in the store (it was down): saved when it is back
CAPTURE = "_figures_capture"  # while a story's slide is made (ui.present): the figures plot() is given, in order
TEACHING = "class_teaching"  # the code of the class this session leads (ui.classroom; the head map relays for it)
STEP = "class_step"  # the tour step this session shows (a lesson's or a class's: ui.classroom; ui.arrival sets it)


def keep(key: str) -> str:
    """``key``, registered so the widget's value outlives runs that do not draw it."""
    st.session_state.setdefault(KEPT, set()).add(key)
    return key


def carry_widgets(keys=None) -> None:
    """Write each kept value back (``keys``: these widgets' instead, e.g. before a run that stops
    before drawing them, such as a page switch at the top of a run)."""
    for key in st.session_state.get(KEPT, ()) if keys is None else keys:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


SIDEBAR = ("example", "document", "reference", "k", "block_trigram", "weights", "device", WINDOW)  # app.py's widgets


def forget(key: str) -> None:
    """Drop a kept value that no longer fits (e.g. a layer another model does not have)."""
    st.session_state.pop(key, None)


def params() -> dict | None:
    """The settings of the last successful Summarize (text, k, trigram blocking, weights, device)."""
    return st.session_state.get(PARAMS)


WANT_WINDOW = "_want_window"  # the BERT window a view names, taken by its Summarize


def set_result(params: dict) -> None:
    st.session_state[PARAMS] = params
    st.session_state[WINDOW] = st.session_state.pop(WANT_WINDOW, 0)
    clear_error()


def want_window(w: int) -> None:
    """A view's BERT window: shown after the Summarize it asks for (``set_result``)."""
    st.session_state[WANT_WINDOW] = w


def window() -> int:
    return st.session_state.get(WINDOW, 0)


def error() -> str | None:
    return st.session_state.get(ERROR)


def set_error(message: str) -> None:
    st.session_state[ERROR] = message


def clear_error() -> None:
    st.session_state.pop(ERROR, None)


LINK_PROBLEMS = "_link_problems"


def set_link_problems(problems: list[str]) -> None:
    """What a link asked for that could not be used (shown once, with the rest of the link restored)."""
    st.session_state.setdefault(LINK_PROBLEMS, []).extend(problems)


def take_link_problems() -> list[str]:
    return st.session_state.pop(LINK_PROBLEMS, [])


VIEW_NOTICES = "_view_notices"


def view_notice(sentence: str) -> None:
    """Something a taken view (a story's step, a class's) could not reproduce: shown once, as is."""
    st.session_state.setdefault(VIEW_NOTICES, []).append(sentence)


def take_view_notices() -> list[str]:
    return st.session_state.pop(VIEW_NOTICES, [])


RUNNING, REQUEST = "_summarize_running", "_summarize_requested"


@contextmanager
def running():
    """Marks a Summarize in progress; if the session's script is stopped before it ends (the
    user switched page), the mark stays and the next run reports it (``interrupted``)."""
    st.session_state[RUNNING] = True
    try:
        yield
    except Exception:  # an error is reported as such; Streamlit's stop/rerun is a BaseException
        st.session_state.pop(RUNNING, None)
        raise
    st.session_state.pop(RUNNING, None)


def interrupted() -> bool:
    """True once after a Summarize that never finished."""
    return bool(st.session_state.pop(RUNNING, False))


def request_summarize() -> None:
    """Ask the next run to Summarize (a button's callback, e.g. "Try an example")."""
    st.session_state[REQUEST] = True


def take_summarize_request() -> bool:
    return bool(st.session_state.pop(REQUEST, False))


def for_slide() -> bool:
    """Whether this run makes a story's slide out of sight (ui.present): results a page computes on
    request (a Run button) are computed then, since the slide shows its view, not a button."""
    return st.session_state.get(CAPTURE) is not None
