"""Who this session is (issue 70), decided in one place from what it holds:
- **student**: it joined a class (``?class=``) or sits homework (``?homework=`` with a seat);
- **teacher**: it leads a class, is its console (ui.classroom.console), reads a homework's results, or
  holds the teacher link;
- **presenter**: it holds a story's key (its notes, its presenter view);
- **audience**: it opened a story's link without the key;
- **explorer**: anyone else (the default).

And the one rule for a student on an open question (``answering``): every door that would show
the model's choice is absent. The page list, the Story panel and the lesson tools are not drawn;
a page typed in the address leads back to the question's page (``guard``); the doors that stay,
Leave to explore (a class) and Back or Next (homework), make the answer final first, and the
page says so before and after."""
from __future__ import annotations

import streamlit as st

from ui import state

STUDENT, TEACHER, PRESENTER, AUDIENCE, EXPLORER = "student", "teacher", "presenter", "audience", "explorer"
OPEN = "_role_open_step"  # (class or homework code, step id, its page) of the question a student has open
NOTICE = "_role_notice"  # what a door did to an open question (said once, above the page)


def role() -> str:
    from ui.classroom import teacher
    from ui.classroom.session import HOMEWORK_RESULTS, HOMEWORK_SEAT, JOINED

    s = st.session_state
    if s.get(JOINED) or s.get(HOMEWORK_SEAT):
        return STUDENT
    if s.get(state.TEACHING) or s.get(HOMEWORK_RESULTS) or s.get(teacher.HOLDS) or s.get("_class_console"):
        return TEACHER
    story = s.get("story")  # (ui.present.STORY, ui.present.NOTES_KEY: not imported, for a light module)
    if story is not None and story.id and s.get("story_notes_key"):
        return PRESENTER
    if story is not None and story.id:
        return AUDIENCE
    return EXPLORER


def _seat() -> tuple[str, str] | None:
    """A student's (class or homework code, seat)."""
    from ui.classroom.session import FOLLOWING, HOMEWORK, HOMEWORK_SEAT, JOINED, SESSION

    s = st.session_state
    if s.get(JOINED) and s.get(FOLLOWING):
        return s[JOINED], s.get(SESSION)
    if s.get(HOMEWORK) and s.get(HOMEWORK_SEAT):
        return s[HOMEWORK], s[HOMEWORK_SEAT]
    return None


def answering(store=None) -> dict | None:
    """The step whose question this student has open (asked, not revealed, not final for the
    seat; ``store``: read whether it is final, else it is believed open), else None."""
    from ui.classroom.answers import left, step_id
    from ui.errors import shared

    step, seat = st.session_state.get(state.STEP), _seat()
    if role() != STUDENT or seat is None or not (step and step.get("ask") and not step.get("revealed")):
        return None
    if store is not None and shared(left, store, seat[0], step_id(step), seat[1], default=False):
        return None
    return step


def guard(store, page) -> bool:
    """At the top of a run, before the page: a student on an open question who opened another page
    is led back to the question's; one who moved to another step (homework's Back or Next) has that
    answer made final now. → whether a question is open (``answering``)."""
    from ui.arrival import KEPT_QUERY, pending, script_of
    from ui.classroom.answers import leave, step_id
    from ui.errors import shared

    if pending():  # (a view on its way: the page or step it names is taken first)
        return False
    seat, step = _seat(), answering(store)
    kept = st.session_state.get(OPEN)
    here = (seat[0], step_id(step), _page_of(step)) if step and seat else None
    if kept and kept != here and seat and kept[0] == seat[0] and (here is None or kept[1] != here[1]) \
            and _homework():  # homework's Back or Next away from an open question
        shared(leave, store, kept[0], kept[1], seat[1])
        st.session_state[NOTICE] = "Your answer to the step you left is final now: it stays as it was."
    st.session_state[OPEN] = here
    if here and here[2] is not None and here[2] != page.url_path:  # another page than the question's: back to it
        st.session_state[NOTICE] = ("The other pages show the model's choice: they open once this question is "
                                    "revealed" + (", or after Next (your answer is then final)." if _homework() else
                                                  ", or after Leave to explore (your answer is then final)."))
        state.carry_widgets(state.SIDEBAR)  # (this run stops before the sidebar draws them: they would be forgotten)
        st.switch_page(script_of(here[2]), query_params={k: st.query_params[k] for k in KEPT_QUERY
                                                          if k in st.query_params})
    return here is not None


def summarized(store) -> None:
    """A student on an open question clicked Summarize (a text of their own shows the model's choice
    on it): that answer is final now, said above the page (and under the button before)."""
    from ui.classroom.answers import leave, step_id
    from ui.errors import shared

    seat, step = _seat(), answering(store)
    if seat and step:
        shared(leave, store, seat[0], step_id(step), seat[1])
        st.session_state[NOTICE] = "Your answer to the open question is final now: it stays as it was."


def _homework() -> bool:
    from ui.classroom.session import HOMEWORK_SEAT

    return bool(st.session_state.get(HOMEWORK_SEAT))


def _page_of(step: dict) -> str | None:
    """The page the step's view was taken on (a class's: the page its teacher shows now)."""
    from ui.arrival import STEP_PAGE

    return st.session_state.get(STEP_PAGE)


def said() -> str | None:
    """Once: what a door did to an open question."""
    return st.session_state.pop(NOTICE, None)
