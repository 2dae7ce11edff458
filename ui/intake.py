"""The address a session opened, read by one intake (issue 69). Each part of it opens something:
a link's view (``doc=``, its controls: ui.link), the teacher link (``?teacher=``), a class to join
(``?class=``), a class's teacher's console (``?console=``), a class this browser led (its cookie),
a story (``?story=``), a lesson (``?lesson=``) or homework (``?homework=``). ``intake`` runs each reader once per session, in that order, at the
top of the session's first run, before the view is taken (ui.arrival); a reader that returns False
is tried again on the next run (what it opens is in the shared store, which was down)."""
from __future__ import annotations

import streamlit as st

from ui.errors import shared

DONE = "_address_read"  # the readers that have read this session's address


def readers(store, examples: dict, page: str) -> tuple:
    from ui import classroom, link, story
    from ui.classroom import console, homework

    return (("link", lambda: link.restore(examples, store, page)),
            ("teacher", classroom.teacher_from_url),
            ("class", lambda: classroom.join_from_url(store)),
            ("console", lambda: console.read_link(store)),
            ("resume", lambda: classroom.resume_from_cookie(store)),
            ("story", lambda: story.read_link(store)),
            ("lesson", lambda: classroom.read_link(examples)),
            ("homework", lambda: homework.open_from_url(store, examples)))


def intake(store, examples: dict, page: str) -> None:
    """Once per session (each reader once; one whose store was down, again on the next run)."""
    done = st.session_state.setdefault(DONE, set())
    for name, read in readers(store, examples, page):
        if name not in done and shared(read, default=None) is not False:  # (store down: the notice says so)
            done.add(name)
