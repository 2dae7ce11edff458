"""The teacher's console (issue 70): a window of the teacher's own beside the projected one, as the
story's presenter view is beside the slides (``?console=CODE&key=KEY``, the key a keyed hash of the
code under this server's secret, shown only to the session that leads the class). It shows the step
the class is on (ui.player's words), its private note, the next step, the room's live answers, the
seats and the time since the class started, read again every TALLY_S; and Reveal. The projected page
shows only how many answered until Reveal: the room's answers are drawn here.

It never leads: the projected tab keeps the lead (a console opened in the same browser does not take
it with the class's cookie), and Back/Next stay on the projected page."""
from __future__ import annotations

import hmac
import time

import streamlit as st

from ui.errors import shared

CONSOLE = "_class_console"  # the class code this session is the console of
NOTICE = "_class_console_notice"


def read_link(store) -> bool | None:
    """``?console=CODE&key=KEY``: this session is that class's console (a wrong key: one sentence;
    False: the store is down, read it again on the next run)."""
    from ui.classroom.store import console_key, valid_code

    code = st.query_params.get("console")
    if not code:
        return None
    given = st.query_params.get("key") or ""
    right = shared(console_key, store, code, default=None) if valid_code(code) else ""
    if right is None:  # the store is down (its notice says so): read again on the next run
        return False
    if not right or not hmac.compare_digest(given.encode(), right.encode()):
        st.session_state[NOTICE] = ("That console link is not this server's for a class: open it again from the "
                                    "class's teacher page (under the question).")
        return None
    st.session_state[CONSOLE] = code
    return None


def lesson_of(store, code: str, name: str):
    """The class's lesson (a shipped one, or the teacher's own kept with the class), or None."""
    from ui.tour import lessons, load

    if name in lessons():
        return lessons()[name]
    rows = store.run("SELECT text FROM class_lessons WHERE code = ? AND name = ?", (code, name), True)
    return load(rows[0][0], name) if rows else None


def started(store, code: str) -> float | None:
    """When the class started (its expiry less the hours a class lasts), None if it is gone."""
    from ui.classroom.store import hours

    rows = store.run("SELECT expires FROM classes WHERE code = ?", (code,), True)
    return float(rows[0][0]) - 3600 * hours() if rows else None


def trace_of(store, view):
    """The class's result for the step's view (the server's cache: the teacher's page computed it)."""
    import torch

    from ui.arrival import document_of
    from ui.models import default_model, weights_choices
    from ui.runs import run_trace

    text = document_of(store, view.doc)
    if not text:
        return None
    weights = view.w if view.w in weights_choices() else default_model()
    return run_trace(text, view.k, view.tb, weights, "cuda:0" if torch.cuda.is_available() else "cpu", window=view.win)


def show(store) -> None:
    """The console, the whole window (the app stops after it: no sidebar, no page)."""
    from ui.slide_layout import CSS

    st.html(CSS)
    with st.container(key="teacher_console"):
        st.title("Teacher's console", anchor=False)
        tick(store, st.session_state[CONSOLE])


@st.fragment(run_every=2.0)
def tick(store, code: str) -> None:
    """Every 2 s: the class's step, note, next step, answers, seats and time."""
    from ui import figures
    from ui.classroom.answers import console_reveal, of_step, revealed, step_id
    from ui.classroom.asking import results, reveal_label
    from ui.classroom.store import attendance, lookup
    from ui.player import private_note, words
    from ui.questions import Ask
    from ui.tour import step_title
    from ui.view import View
    from viz.common import markdown_text, plural

    figures.forget_kind("answers")
    found = shared(lookup, store, code, default=None)
    if found is None:  # the store is down: its notice says so; the next tick tries again
        return
    if isinstance(found, str):
        st.info("This class has ended." if found == "ended" else "There is no class with that code on this server.")
        return
    view, step = found[0], (found[0] or {}).get("lesson")
    begun = shared(started, store, code, default=None)
    seats = (shared(attendance, store, code, default=(0, 0)) or (0, 0))[0]
    clock = "" if begun is None else " · {}:{:02d} since the class started".format(*divmod(int(time.time() - begun), 60))
    st.caption(f"Class {code} · {plural(seats, 'student')} here" + clock + " · this window is yours: keep it off the "
               "projector")
    if not step:
        st.info("The class shows no lesson step now: the students see the teacher's page.")
        return
    lesson = shared(lesson_of, store, code, step["lesson"], default=None)
    n, total = step["step"], step["of"]
    st.markdown(words(n, total, step.get("step_title", ""), step.get("text", ""), step.get("question", ""),
                      step.get("title", "")))
    if lesson is not None and 0 <= n < len(lesson.steps):
        private_note(lesson.steps[n].private, large=True)
        st.markdown("**Next:** " + (markdown_text(step_title(lesson.title, n + 1, lesson.steps[n + 1].title))
                                    if n + 1 < len(lesson.steps) else "the end"))
    if not step.get("ask"):
        return
    ask, sid = Ask.from_dict(step["ask"]), step_id(step)
    done = bool(step.get("revealed")) or bool(shared(revealed, store, code, sid, default=False))
    rows = shared(of_step, store, code, sid, default=[]) or []
    st.markdown(f"**{len(rows)} of {plural(max(seats, len(rows)), 'student')} answered**"
                + (" · revealed" if done else " · answers are open: the room sees only this count"))
    if not done and st.button(reveal_label(ask), key=f"console_reveal_{sid}", icon=":material/visibility:",
                              type="primary", help="Shows every student, and the projected page, the class's answers"
                              + ("" if ask.opinion else " and the model's") + "; answers to this step close."):
        shared(console_reveal, store, code, sid, default=False)
        st.rerun()
    trace = shared(trace_of, store, View.from_store(view)[0], default=None)
    if trace is not None:
        results(ask, [r[1] for r in rows], trace, f"console_answers_{sid}", shown=done)
