"""Who may teach on a school's network: the teacher link (Jupyter's habit). scripts/serve.py makes a
random token per run (MICROSCOPE_TEACHER_TOKEN, unless given) and prints the link
``http://HOST:PORT/?teacher=TOKEN``; a browser that opens it may start and resume classes. The
token leaves the address bar at once and stays in that browser's cookie (a reload, a new tab).

Why a link, not a password (docs/security.md): 192 random bits cannot be guessed at any rate, so
nothing needs throttling and no room of students guessing can hold its teacher up; a password a
person can type can be guessed, and a throttle that always lets the right one through cannot also
bound a guesser's rate (each checked guess answers "right or not"). Without a token (a plain
``streamlit run``) MICROSCOPE_TEACHER_PASSWORD, if set, is asked for instead, with its throttle."""
from __future__ import annotations

import hmac
import logging
import os

import streamlit as st

from ui.classroom import session as S

TOKEN = "MICROSCOPE_TEACHER_TOKEN"
COOKIE = "microscope_teacher"
HOLDS = "_teacher_link"  # this session opened the teacher link, or its browser keeps its token


def token() -> str:
    return os.environ.get(TOKEN, "")


def holds(given: str) -> bool:
    """Whether ``given`` is this server's teacher token (compared in constant time)."""
    secret = token()
    return bool(secret and given) and hmac.compare_digest(given.encode(), secret.encode())


def from_url() -> None:
    """``?teacher=TOKEN`` (then dropped from the address, kept in a cookie) or the
    cookie makes this session a teacher's. A wrong token is said and logged, nothing more: it cannot
    be guessed, so nothing is held up."""
    if not token():
        return
    given = st.query_params.get("teacher")
    if given is not None:
        del st.query_params["teacher"]
        if holds(given):
            st.session_state[HOLDS] = True
            S.keep_cookie(COOKIE, given, 30 * 24 * 3600, key="teacher_cookie")
        else:
            logging.getLogger("microscope").warning("class: a wrong teacher link from %s", S.client())
            st.warning("This teacher link is not this server's (it changes each time the server starts): ask "
                       "whoever runs the server for the one it printed.", icon=":material/key_off:")
    elif holds(S.cookie(COOKIE)):
        st.session_state[HOLDS] = True


def may_teach() -> bool:
    """Whether this session may start or resume a class: always without a token, else with the link."""
    return not token() or bool(st.session_state.get(HOLDS))
