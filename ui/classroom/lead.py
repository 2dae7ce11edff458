"""The teacher's side: start a class (password when MICROSCOPE_TEACHER_PASSWORD is set), its join
link and QR code, who is here, the resume key on demand, Lead a class again, End; publishing the
teacher's view after each run and a heartbeat that says "still here"."""
from __future__ import annotations

import hmac
import math
import os
import time
import uuid

import streamlit as st

from ui import state
from ui.classroom import address, session as S, teacher
from ui.classroom.join import JOIN_SCREEN, join_link, qr_png
from ui.classroom.answers import (answered_seats, remove_silent, room, seat_origins, seats_per_client,
                                  set_room)
from ui.classroom.session import (ELSEWHERE, JOINED, LEADER, PAGE, RESUME, STEP, TEACHING, led_elsewhere,
                                  stop_leading)
from ui.classroom.store import (FREE_TRIES, SEEN_S, TEACHER_SEAT, Throttle, attendance, delay, end, hours, leads,
                                new_resume_key, may_lead, publish, seen, start, take_lead, valid_code, version)
from ui.errors import shared
from viz.common import plural


def my_view(page: str) -> dict | None:
    """What this session shows, as a class publishes it and a story keeps it (the store's form of its
    ui.view.View, and the class's step; None before a Summarize)."""
    from ui import link
    from ui.view import View

    params = state.params()
    if params is None:
        return None
    shown = View.of(st.session_state, page, params, link.doc_id(params["text"]), ref=link.reference_id())
    return {**shown.to_store(), "lesson": st.session_state.get(STEP)}


def publish_mine(store, page: str, drawn: bool = False) -> None:
    """A teacher's run: publish what this session shows (nothing before a Summarize or out of class);
    ``drawn``: after the page ran to its end (``store.publish``)."""
    from ui.classroom.steps import warm_lesson
    from ui.link import save_document

    code, view = st.session_state.get(TEACHING), my_view(page)
    st.session_state[PAGE] = page  # for lead_heartbeat's retry
    if code is not None and view is not None:
        save_document()  # a document summarized while the store was down, first: students read it
        keep_own_lesson(store, code)
        warm_lesson(code)
        if not publish(store, code, view, st.session_state.get(LEADER, ""), drawn):
            led_elsewhere(code)


@st.fragment(run_every=SEEN_S)
def lead_heartbeat(store, code: str) -> None:
    """The teacher's page is open: "still here", so students are not told the teacher is away; and
    the teacher's view again, in case a publish failed while the store was down (one read if not).
    If the class is led from elsewhere now, the whole page reruns to say so."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    alone = bool(ctx and ctx.fragment_ids_this_run)  # its own rerun; in a full run app.py publishes (the page's)
    if shared(seen, store, code, TEACHER_SEAT, True, default=False) is not False and PAGE in st.session_state and alone:
        shared(publish_mine, store, st.session_state[PAGE])
    if TEACHING not in st.session_state:
        st.rerun()


def teacher_panel(store, url: str) -> None:
    """Sidebar: start a class (password when MICROSCOPE_TEACHER_PASSWORD is set), then its code,
    join link, QR code and who is connected (Back/Next, Answers and End: the bar above the page)."""
    code = st.session_state.get(TEACHING)  # (the store down: still leading, and the panel goes on)
    if code is not None and not shared(leads, store, code, st.session_state.get(LEADER, ""), default=True):
        led_elsewhere(code)
        code = None
    if code is None:
        if st.session_state.get(LEAD_COOKIE_SET):  # this browser no longer leads: it forgets the key
            S.keep_cookie(LEAD_COOKIE, None, 0, key="lead_cookie")
            st.session_state.pop(LEAD_COOKIE_SET)
        ended_panel(store)
        if not teacher.may_teach():
            st.caption(":material/key: Starting or leading a class takes the teacher link the server printed "
                       "when it started (scripts/serve.py).")
            return
        secret = password()
        given = st.text_input("Teacher password", type="password", key="class_password") if secret else None
        if st.button("Start a class", key="class_start", icon=":material/school:",
                     help="Students who open its link see what you see: page, document, layer, head, view."):
            refused = refusal(store, given)
            if refused:
                st.error(refused)
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
    link = join_link(url, code)
    lead_heartbeat(store, code)
    who_is_here(store, code)
    # this browser keeps the class and its key: a reload or a new tab leads it again (resume_from_cookie)
    S.keep_cookie(LEAD_COOKIE, f"{code}:{st.session_state.get(RESUME, '')}", int(hours() * 3600), key="lead_cookie")
    st.session_state[LEAD_COOKIE_SET] = True
    st.code(link, language=None, wrap_lines=True)  # wrapped: no box to scroll (one the keyboard cannot reach)
    if problem := address.unreachable(link):
        st.warning(problem, icon=":material/wifi_off:")
    st.image(qr_png(link), width=160, alt=f"QR code of the class's join link, {link}")
    st.button("Show the join screen", key="class_join_screen", icon=":material/qr_code_2:", width="stretch",
              on_click=st.session_state.update, args=({JOIN_SCREEN: True},),
              help="The code and a large QR code across the whole window, for the projector (Esc or Close to leave).")
    resume_key_panel()
    st.caption("Answers and End: in the bar above the page.")


def teacher_bar(store, code: str, cols) -> None:
    """The leading teacher's part of the bar above the page: Reveal (a step whose question is open)
    and Answers and End, in two of its columns (ui.classroom.steps.step_text)."""
    from ui.classroom.asking import reveal_button

    s = st.session_state.get(STEP) or {}
    if s.get("ask") and not s.get("revealed"):
        with cols[0]:
            reveal_button(store, code, s)
    with cols[1]:
        answers_and_end(store, code)


def answers_and_end(store, code: str) -> None:
    """The class's answers (CSV) and End, in the teacher's bar above the page (ui.classroom.steps)."""
    with st.popover("Answers and End", icon=":material/stop_circle:", width="stretch"):
        answers_download(store, code)
        st.markdown("**End the class** for every student? Their pages say it has ended; the answers stay "
                    "downloadable here for a week.")
        st.button("Yes, end the class", key="class_end", on_click=end_mine, args=(store, code), type="primary")


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


def password() -> str | None:
    """The teacher password to ask for: none with the teacher link (ui.classroom.teacher replaces it),
    else MICROSCOPE_TEACHER_PASSWORD if set."""
    return None if teacher.token() else os.environ.get("MICROSCOPE_TEACHER_PASSWORD")


def refusal(store, given: str | None) -> str | None:
    """Why a teacher's action (Start a class, Assign as homework) is refused now, in one sentence
    (None: it may go on): the teacher link, or the password with its throttle."""
    if not teacher.may_teach():
        return "This takes the teacher link the server printed when it started (scripts/serve.py)."
    wait = held_up(store)
    if wait > 0:
        return f"Too many wrong passwords from this browser: try again in {seconds(wait)}."
    if not password_ok(password(), given):
        wrong_try(store)
        return "Wrong teacher password."
    return None


def password_ok(secret: str | None, given: str | None) -> bool:
    """The teacher password, when one is set (compared in constant time)."""
    return not secret or hmac.compare_digest((given or "").encode(), secret.encode())


def resume_form(store, secret: str | None) -> None:
    """Lead a class again: its code and resume key (and the teacher password when one is set)."""
    with st.popover("Lead a class again", icon=":material/login:"), st.form("class_resume_form", border=False):
        # a form: typing reruns nothing, so the popover stays open until Lead it
        code = st.text_input("Class code", key="class_resume_code").strip().upper()
        key = st.text_input("Resume key", type="password", key="class_resume_key_in").strip()
        given = st.text_input("Teacher password", type="password", key="class_resume_password") if secret else None
        if not st.form_submit_button("Lead it", key="class_resume"):
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
    st.session_state[ENDED] = code


LEAD_COOKIE, LEAD_COOKIE_SET = "microscope_lead", "_lead_cookie_set"
ENDED = "class_ended"  # the class this session ended: its answers stay downloadable


def answers_download(store, code: str) -> None:
    """Every answer of the class, every step, as CSV (made when clicked)."""
    from ui.classroom.asking import answers_csv
    from ui.classroom.steps import OWN

    own = dict(st.session_state.get(OWN, {}))  # (read here: the CSV is made on another thread)
    st.download_button("The class's answers (CSV)", lambda: answers_csv(store, code, own),
                       file_name=f"class_{code}_answers.csv", mime="text/csv", key=f"class_csv_{code}",
                       on_click="ignore", icon=":material/download:", width="stretch",
                       help="Every answer of every step so far: seat, step, answer, right.")


def ended_panel(store) -> None:
    """After End: the ended class's answers, still downloadable, until closed."""
    code = st.session_state.get(ENDED)
    if not code:
        return
    st.info(f"Class {code} has ended. Its answers:", icon=":material/check_circle:")
    answers_download(store, code)
    st.button("Close", key="class_ended_close", on_click=st.session_state.pop, args=(ENDED, None))


def resume_from_cookie(store) -> None:
    """A browser that led a class (its cookie: the code and the resume key) and
    is not joining one leads it again (a reload, a new tab, a reconnect), on the class's page, view
    and lesson; its own lesson file comes back from the store. A spent or wrong key: nothing."""
    kept = S.cookie(LEAD_COOKIE)
    if ":" not in kept or st.session_state.get(TEACHING) or any(st.query_params.get(p) for p in ("class", "story",
                                                                                                 "console")):
        return  # (a console in the teacher's browser: a window beside the leading one, never the lead)
    code, key = kept.split(":", 1)
    if not valid_code(code) or version(store, code) is None:
        return
    leader = uuid.uuid4().hex
    new_key = take_lead(store, code, key, leader)
    if new_key is None:
        return
    st.session_state.update({TEACHING: code, RESUME: new_key, LEADER: leader, LEAD_COOKIE_SET: True})
    from ui import arrival
    from ui.classroom.steps import add_own
    from ui.classroom.store import lookup
    from ui.view import View

    for name, text in store.run("SELECT name, text FROM class_lessons WHERE code = ?", (code,), True):
        add_own(name, text)
    found = lookup(store, code)
    if isinstance(found, tuple) and found[0]:
        stored = found[0]
        view = View.from_store(stored)[0]
        arrival.open_view(view, arrival.document_of(store, view.doc), step=stored.get("lesson"))
        if stored.get("lesson"):
            st.session_state[state.keep("class_lesson")] = stored["lesson"]["lesson"]


def keep_own_lesson(store, code: str) -> None:
    """The teacher's own lesson this class plays, kept in the store with the class (once)."""
    from ui.classroom.steps import OWN_TEXT

    step = st.session_state.get(STEP) or {}
    name = step.get("lesson") or ""
    text = (st.session_state.get(OWN_TEXT) or {}).get(name)
    kept = st.session_state.setdefault("_class_lessons_kept", set())
    if text is not None and (code, name) not in kept:
        store.run("INSERT INTO class_lessons VALUES (?, ?, ?) ON CONFLICT (code, name) DO NOTHING", (code, name, text))
        kept.add((code, name))


@st.fragment(run_every=SEEN_S)
def who_is_here(store, code: str) -> None:
    """The teacher's count of students, read again every few seconds (nothing else re-runs)."""
    connected, following = shared(attendance, store, code, default=("?", "?"))
    exploring = connected - following if isinstance(connected, int) and isinstance(following, int) else 0
    st.markdown(f"Class **{code}** · {connected} student{'s' if connected != 1 else ''} connected, "
                f"{following} following" + (f", {exploring} exploring on their own" if exploring else ""))
    seats, most, refused = shared(seat_origins, store, code, default=(0, 0, 0))
    answered, silent = shared(answered_seats, store, code, default=(0, 0))
    locked, cap = shared(room, store, code, default=(False, seats_per_client()))
    if seats or refused or locked:  # one browser may open many tabs: seats per address tell a room from a script
        st.caption(f"{plural(seats, 'seat')}: {answered} answered, {silent} never answered; at most {most} from "
                   f"one address" + (f" · :material/warning: {plural(refused, 'new seat')} refused" if refused else "")
                   + (" · :material/lock: room locked" if locked else ""))
    seats_panel(store, code, silent, locked, cap)


def seats_panel(store, code: str, silent: int, locked: bool, cap: int) -> None:
    """The teacher makes room: removes the seats that never answered (a script's, closed tabs'),
    locks the room once everyone is in (new seats refused, reloads keep theirs), raises the cap of
    new seats per address. Each write is the leader's only (checked in the store)."""
    leader = st.session_state.get(LEADER, "")
    with st.popover("Seats", icon=":material/event_seat:", width="stretch"):
        if st.button(f"Remove {plural(silent, 'seat')} that never answered", key="class_seats_remove",
                     disabled=not silent, help="A removed browser that reloads asks for a new seat: the lock, the "
                                               "pace of new seats and the cap apply."):
            st.caption(f"Removed {plural(shared(remove_silent, store, code, leader, default=0), 'seat')}.")
        st.toggle("Lock the room (no new seats)", value=locked, key=f"class_lock_{locked}",
                  on_change=lambda: shared(set_room, store, code, leader, not locked),
                  help="When everyone is in: a new browser is refused and told to ask you; a student who reloads "
                       "keeps their seat.")
        st.number_input("New seats per network address", 1, 1000, cap, key=f"class_cap_{cap}",
                        on_change=lambda: shared(set_room, store, code, leader, None,
                                                 int(st.session_state[f"class_cap_{cap}"])),
                        help="A room behind the school's one address needs as many as it has students.")


def led_elsewhere_banner(url: str) -> None:
    """Above the page of a tab that led a class another tab or browser leads now: says so in true
    words, with one click to take it back (a reload: this browser's cookie holds the class's
    current key when the other leader is a tab of this browser; another browser's needs the key)."""
    code = st.session_state.get(ELSEWHERE)
    if not code or st.session_state.get(TEACHING):
        return
    with st.container(border=True, key="class_elsewhere"):
        st.warning(f"**Class {code} is led from another tab or browser now.** This page no longer leads it: "
                   "students follow that one, and Next here moves only this page.", icon=":material/swap_horiz:")
        c = st.columns([2, 1, 3], vertical_alignment="center")
        c[0].link_button("Lead it here again", url.split("?")[0], icon=":material/login:", type="primary",
                         help="Reloads this page, which leads the class again when the other leader is a tab of "
                              "this browser. From another browser: Lead a class again, with the class's resume key.")
        c[1].button("Dismiss", key="class_elsewhere_close", on_click=st.session_state.pop, args=(ELSEWHERE, None))
        c[2].caption("From another browser, take it back under Class & lessons → Lead a class again, with the "
                     "class's resume key.")
