"""The teacher's side: start a class (password when MICROSCOPE_TEACHER_PASSWORD is set), its join
link and QR code, who is here, the resume key on demand, Lead a class again, End; publishing the
teacher's view after each run and a heartbeat that says "still here"."""
from __future__ import annotations

import hmac
import io
import math
import os
import time
import uuid

import streamlit as st

from ui import state
from ui.classroom import session as S
from ui.classroom.answers import seat_origins, seats_per_client
from ui.classroom.session import (ELSEWHERE, JOINED, LEADER, PAGE, RESUME, STEP, TEACHING, led_elsewhere,
                                  stop_leading)
from ui.classroom.store import (FREE_TRIES, SEEN_S, TEACHER_SEAT, Throttle, delay, attendance, end, leads, new_resume_key,
                                may_lead, publish, seen, start, take_lead, valid_code, version)
from ui.errors import shared


def my_view(page: str) -> dict | None:
    """What this session shows, as a class publishes it and a story keeps it (None before a Summarize)."""
    from ui import link, view

    params = state.params()
    if params is None:
        return None
    return {**view.current(st.session_state, page, params, link.doc_id(params["text"])),
            "lesson": st.session_state.get(STEP)}


def publish_mine(store, page: str) -> None:
    """A teacher's run: publish what this session shows (nothing before a Summarize or out of class)."""
    from ui.link import save_document

    code, view = st.session_state.get(TEACHING), my_view(page)
    st.session_state[PAGE] = page  # for lead_heartbeat's retry
    if code is not None and view is not None:
        save_document()  # a document summarized while the store was down, first: students read it
        if not publish(store, code, view, st.session_state.get(LEADER, "")):
            led_elsewhere(code)


@st.fragment(run_every=SEEN_S)
def lead_heartbeat(store, code: str) -> None:
    """The teacher's page is open: "still here", so students are not told the teacher is away; and
    the teacher's view again, in case a publish failed while the store was down (one read if not).
    If the class is led from elsewhere now, the whole page reruns to say so."""
    if shared(seen, store, code, TEACHER_SEAT, True, default=False) is not False and PAGE in st.session_state:
        shared(publish_mine, store, st.session_state[PAGE])
    if TEACHING not in st.session_state:
        st.rerun()


def teacher_panel(store, url: str) -> None:
    """Sidebar: start a class (password when MICROSCOPE_TEACHER_PASSWORD is set), then its code,
    join link, QR code, who is connected, and the lesson's Back/Next."""
    code = st.session_state.get(TEACHING)  # (the store down: still leading, and the panel goes on)
    if code is not None and not shared(leads, store, code, st.session_state.get(LEADER, ""), default=True):
        led_elsewhere(code)
        code = None
    if code is None:
        if st.session_state.get(ELSEWHERE):
            st.warning(f"Class {st.session_state[ELSEWHERE]} is now led from another browser (its resume key "
                       "was used there): this page no longer leads it.", icon=":material/swap_horiz:")
        secret = os.environ.get("MICROSCOPE_TEACHER_PASSWORD")
        given = st.text_input("Teacher password", type="password", key="class_password") if secret else None
        if st.button("Start a class", key="class_start", icon=":material/school:",
                     help="Students who open its link see what you see: page, document, layer, head, view."):
            wait = held_up(store)
            if wait > 0:
                st.error(f"Too many wrong passwords from this browser: try again in {seconds(wait)}.")
            elif not password_ok(secret, given):
                wrong_try(store)
                st.error("Wrong teacher password.")
            elif state.params() is None:
                st.error("Summarize a document first: the class starts on what you show.")
            else:
                leader = st.session_state[LEADER] = uuid.uuid4().hex
                code = st.session_state[TEACHING] = start(store, {}, leader=leader)  # the view: at the end of this run
                st.session_state[RESUME] = new_resume_key(store, code)
                st.session_state.pop(ELSEWHERE, None)
                st.rerun()  # the panel of a class: no Start or Lead again left on screen until the next run
        resume_form(store, secret)
        if TEACHING not in st.session_state:
            return
        code = st.session_state[TEACHING]
    if shared(version, store, code, default=-1) is None:  # (-1: the store is down; the notice says so)
        st.warning(f"Class {code} has ended (its link expired).")
        st.button("End it here", key="class_end", on_click=lambda: st.session_state.pop(TEACHING, None))
        return
    link = f"{url.split('?')[0].rstrip('/')}/?class={code}"
    lead_heartbeat(store, code)
    who_is_here(store, code)
    st.code(link, language=None, wrap_lines=True)  # wrapped: no box to scroll (one the keyboard cannot reach)
    st.image(qr_png(link), width=160, alt=f"QR code of the class's join link, {link}")
    resume_key_panel()
    st.button("End the class", key="class_end", on_click=end_mine, args=(store, code),
              help="Ends it for every student too; its link then says it has ended.")


def resume_key_panel() -> None:
    """The resume key, only on demand and never beside the join link and QR code the class sees
    (the screen a teacher projects): hidden again with the same toggle."""
    if not st.session_state.get(RESUME):
        return
    shown = st.toggle("Show resume key", key="class_show_key",
                      help="Its code and this key let you lead the class again from another tab or browser (after "
                           "a reload, a closed tab or a restart). Anyone with both can: keep it off the projector.")
    if shown:
        st.caption("Resume key (a new one is made each time the class is resumed):")
        st.code(st.session_state[RESUME], language=None, wrap_lines=True)


WRONG = "_class_wrong_tries"  # this browser session's wrong passwords and keys: (how many, when the last)


def held_up(store) -> float:
    """How long this browser session must wait before its next try (0: try now). A session that
    has made fewer than FREE_TRIES wrong tries is never held up, whatever its address did: a room
    behind one address (a school's NAT) cannot lock its teacher out. Past them, the wait grows with
    the session's own wrong tries and its address's (kept in the store: new tabs of a guesser share it)."""
    n, last = st.session_state.get(WRONG, (0, 0.0))
    if n < FREE_TRIES:
        return 0.0
    return max(last + delay(n) - time.time(), Throttle(store).wait(S.client()), 0.0)


def wrong_try(store, code: str | None = None) -> None:
    """A wrong password or key: counted for this session, its address and the class (logged)."""
    n, _ = st.session_state.get(WRONG, (0, 0.0))
    st.session_state[WRONG] = (n + 1, time.time())
    Throttle(store).wrong(S.client())
    if code is not None:
        Throttle(store).wrong(f"class {code}")


def seconds(wait: float) -> str:
    """A wait as a user reads it: whole seconds, never "0 s"."""
    return f"{max(1, math.ceil(wait))} s"


def password_ok(secret: str | None, given: str | None) -> bool:
    """The teacher password, when one is set (compared in constant time)."""
    return not secret or hmac.compare_digest((given or "").encode(), secret.encode())


def resume_form(store, secret: str | None) -> None:
    """Lead a class again: its code and resume key (and the teacher password when one is set)."""
    with st.popover("Lead a class again", icon=":material/login:"):
        code = st.text_input("Class code", key="class_resume_code").strip().upper()
        key = st.text_input("Resume key", type="password", key="class_resume_key_in").strip()
        given = st.text_input("Teacher password", type="password", key="class_resume_password") if secret else None
        if not st.button("Lead it", key="class_resume"):
            return
        if not valid_code(code):  # not counted, not logged: a typo, or junk
            st.error("A class code is 6 letters and digits, as shown beside its join link.")
            return
        wait = held_up(store)
        if wait > 0:
            st.error(f"Too many wrong tries from this browser: try again in {seconds(wait)}.")
        elif not password_ok(secret, given) or not may_lead(store, code, key):
            wrong_try(store, code)
            st.error("That code, key or password is wrong.")
        elif version(store, code) is None:
            st.error("That class has ended.")
        else:
            leader = uuid.uuid4().hex
            new_key = take_lead(store, code, key, leader)
            if new_key is None:  # the key was spent by another resume a moment ago
                st.error("That code, key or password is wrong.")
                return
            st.session_state.update({TEACHING: code, RESUME: new_key, LEADER: leader})
            for k in (JOINED, ELSEWHERE, "class_show_key"):
                st.session_state.pop(k, None)
            st.rerun()


def end_mine(store, code: str) -> None:
    if not end(store, code, st.session_state.get(LEADER, "")):
        led_elsewhere(code)
        return
    stop_leading()


@st.fragment(run_every=SEEN_S)
def who_is_here(store, code: str) -> None:
    """The teacher's count of students, read again every few seconds (nothing else re-runs)."""
    connected, following = shared(attendance, store, code, default=("?", "?"))
    st.markdown(f"Class **{code}** · {connected} student{'s' if connected != 1 else ''} connected, "
                f"{following} following")
    seats, most, refused = shared(seat_origins, store, code, default=(0, 0, 0))
    if seats:  # one browser may open many tabs: how many seats one address holds tells a room from a script
        st.caption(f"{seats} seat{'s' if seats != 1 else ''}, at most {most} from one address"
                   + (f" · :material/warning: {refused} new seat{'s' if refused != 1 else ''} refused: more than "
                      f"{seats_per_client()} from one address (MICROSCOPE_SEATS_PER_ADDRESS)" if refused else ""))


def qr_png(text: str) -> bytes:
    import segno

    out = io.BytesIO()
    segno.make(text, error="m").save(out, kind="png", scale=4, border=2)
    return out.getvalue()
