"""A student's side: join from ``?class=CODE``, follow the teacher's view (the browser polls the
class's version file and wakes its session only when it moved), leave to explore and come back,
and a heartbeat that says "still here" and whether the teacher is away."""
from __future__ import annotations

import streamlit as st

from ui import arrival
from ui.classroom.answers import issued, leave, new_seat, refused_words, sit, step_id
from ui.classroom import session as S
from ui.classroom.session import APPLIED, FOLLOWING, JOINED, MOVED, PROXIED, SESSION, STEP, from_our_proxy
from ui.classroom.steps import warm_lesson
from ui.classroom.store import (POLL_PROXIED_S, POLL_S, SEEN_S, hours, lookup, mirrors, poll_name, seen,
                                teacher_away, version)
from ui.errors import shared


def join_from_url(store) -> None:
    """``?class=CODE`` joins that class (following), or says why it cannot."""
    code = (st.query_params.get("class") or "").strip().upper()
    if not code:
        return
    found = lookup(store, code)
    if store.run("SELECT 1 FROM homework WHERE code = ?", (code,), True):  # homework has no teacher to follow
        found = "homework"
    if isinstance(found, str):
        from viz.common import markdown_text

        st.warning(f"Class {markdown_text(code[:12])} " + ({"ended": "has ended.", "homework": "is homework: open "
                                                            f"its link, ?homework={code}."}.get(found)
                                                           or "does not exist on this server.")
                   + " You can explore on your own.", icon=":material/school:")
        return
    # a reload (its address) or the same browser scanning the QR code again (its cookie): the same seat,
    # with its answers and its place in the count; a token this server did not issue is no seat
    cookie = st.context.cookies.get(seat_cookie(code))
    kept = [st.query_params.get("seat") or "", cookie if isinstance(cookie, str) else ""]
    seat = next((t for t in kept if issued(store, code, t)), None) or new_seat(store, code)
    if why := sit(store, code, seat, S.client()):
        st.warning(f"Class {code}: {refused_words(why)} You can explore on your own meanwhile.",
                   icon=":material/school:")
        return
    st.session_state.update({JOINED: code, FOLLOWING: True, APPLIED: None, SESSION: seat})


def seat_cookie(code: str) -> str:
    return f"microscope_seat_{code}"


def open_teacher_view(store, code: str) -> None:
    """The class's view, taken by the next run (``ui.arrival``) with its document and reference
    from the store, and the class's step (nothing when the class has no view yet)."""
    found = lookup(store, code)
    if isinstance(found, str):
        return
    stored, v = found
    st.session_state[APPLIED] = v
    if not stored:
        return
    from ui.view import View

    view, _ = View.from_store(stored)  # only controls' values, as the session holds them (a tampered one is left out)
    arrival.open_view(view, arrival.document_of(store, view.doc), step=stored.get("lesson"),
                      reference=store.get(view.ref) if view.ref else None)


# A student's browser asks for a tiny static file, the class's version (app/static/classes/TOKEN.json,
# from nginx or Streamlit's static serving) every ``every`` ms; only when it moved does it wake its
# session, whose callback takes the teacher's view. So nothing re-runs while nothing changes. The
# file is written by the teacher's publish and, for processes on other machines (PostgreSQL), by
# each process's mirror. Streamlit calls this function again on every run that draws the component
# (new data), without the previous call's clean-up: one poll per page, so each call takes over from
# the last (a generation number) — else every run added a poll, and every poll its trigger.
_FOLLOW_JS = """
export default function(component) {
  const { data, setTriggerValue } = component;
  // the seat, kept by this browser: the same phone scanning the QR code again is the same seat
  document.cookie = `${data.cookie}=${data.seat}; path=/; max-age=${data.max_age}; SameSite=Lax` +
                    (location.protocol === 'https:' ? '; Secure' : '');
  const me = (window.__microscopeFollow = (window.__microscopeFollow || 0) + 1);
  const url = new URL('app/static/classes/' + data.file + '.json', document.baseURI);
  let sent = data.version;
  const poll = async () => {
    if (window.__microscopeFollow !== me) return;  // a later call polls now, or the panel is gone
    try {  // keeps polling after a trigger: a rerun that misses the change is caught by the next one
      const r = await fetch(url, { cache: 'no-store' });
      if (r.ok && window.__microscopeFollow === me) {
        const v = (await r.json()).v;
        if (v !== sent) { sent = v; setTriggerValue('moved', v); }
      } else if (r.status === 404 && sent !== 'gone' && window.__microscopeFollow === me) {
        sent = 'gone'; setTriggerValue('moved', 'gone');  // ended or expired: the session says so
      }
    } catch (e) { /* the next poll tries again */ }
    setTimeout(poll, data.every);
  };
  setTimeout(poll, data.every);
  return () => { if (window.__microscopeFollow === me) window.__microscopeFollow = me + 1; };
}
"""


_follow = st.components.v2.component("microscope_class_follow", js=_FOLLOW_JS)


def catch_up(store) -> None:
    """At the top of a run, before any widget: a student following whose browser saw the class
    version move (or who just joined or came back) takes the teacher's view (ui.arrival applies it)."""
    code = st.session_state.get(JOINED)
    if code is not None and st.session_state.get(FOLLOWING) and (
            st.session_state.get(MOVED) or st.session_state.get(APPLIED) is None):
        open_teacher_view(store, code)  # if the store is down: raises, and the move is kept for later
        st.session_state.pop(MOVED, None)


def warm_followed() -> None:
    """Behind scripts/serve.py's nginx a class spans processes, each with its own caches: the one a
    following student is served by computes the class's lesson ahead too (once; after the run's
    Summarize, which the class's document needs)."""
    code = st.session_state.get(JOINED)
    if code is not None and st.session_state.get(FOLLOWING):
        warm_lesson(code)


def set_following(store, following: bool) -> None:
    st.session_state.pop("_explored_own", None)
    s = st.session_state.get(STEP)
    if not following and s and s.get("ask") and not s.get("revealed"):  # leaving an open question: answer final
        leave(store, st.session_state[JOINED], step_id(s), st.session_state[SESSION])
    st.session_state[FOLLOWING] = following
    st.session_state[APPLIED] = None  # coming back: catch up at once
    seen(store, st.session_state[JOINED], st.session_state[SESSION], following)


def follow(store) -> None:
    """A student's class panel: following or exploring; the browser's watch on the class version."""
    code = st.session_state.get(JOINED)
    if code is None:
        return
    mirrors(store)
    if st.query_params.get("class") != code:  # a reload (F5) or a restart keeps the student in the class
        st.query_params["class"] = code
    if st.query_params.get("seat") != st.session_state[SESSION]:  # and in the same seat
        st.query_params["seat"] = st.session_state[SESSION]
    if version(store, code) is None:
        st.warning(f"Class {code} has ended.")
        return
    if st.session_state.get(FOLLOWING):
        st.caption(f":material/school: Following class **{code}**.")
        s = st.session_state.get(STEP)
        asking = bool(s and s.get("ask") and not s.get("revealed"))
        st.button("Leave to explore", key="class_leave", on_click=set_following, args=(store, False),
                  help="Leaving while a question is open keeps your answer to it as it is (other pages would show "
                       "the model's)." if asking else "Look around on your own; Back to the teacher catches up.")
        every = POLL_PROXIED_S if from_our_proxy(st.context.headers.get(PROXIED)) else POLL_S
        _follow(key="class_follow", data={"file": poll_name(store, code), "version": st.session_state.get(APPLIED),
                                          "every": int(every * 1000), "cookie": seat_cookie(code),
                                          "seat": st.session_state[SESSION], "max_age": int(hours() * 3600)},
                on_moved_change=lambda: st.session_state.update({MOVED: True}))
    else:
        st.caption(f":material/explore: Exploring on your own (class **{code}**)"
                   + (": your own document." if st.session_state.get("_explored_own") else "."))
        st.button("Back to the teacher", key="class_back", type="primary", on_click=set_following,
                  args=(store, True))


def status(store) -> None:
    """Above the page of a student in a class (a phone's sidebar is folded away): that the class has
    ended, and, every few seconds, that the teacher is away or the store cannot be reached."""
    code = st.session_state.get(JOINED)
    if code is None:
        return
    if version(store, code) is None:
        st.warning(f"**Class {code} has ended.** What you see stays: you can explore on your own.",
                   icon=":material/school:")
        return
    heartbeat(store, code)


@st.fragment(run_every=SEEN_S)
def heartbeat(store, code: str) -> None:
    """"Still here", for the teacher's count (a fragment every SEEN_S); says when the teacher is away
    or the store is down; a class move the store could not give earlier is taken once it is back."""
    if shared(seen, store, code, st.session_state[SESSION], st.session_state.get(FOLLOWING, False),
              default=False) is False:
        st.info("The class's shared store cannot be reached: you keep this step, and following goes on by itself "
                "when it is back.", icon=":material/cloud_off:")
        return
    if st.session_state.get(FOLLOWING) and st.session_state.get(MOVED):  # catch_up could not read it
        st.rerun()
    away = teacher_away(store, code)
    if away is not None:
        st.info(f"The teacher has been away for {away / 60:.0f} min: you keep the last step, and following goes "
                "on when they are back.", icon=":material/schedule:")


def explored(store) -> None:
    """A student following the class clicked Summarize on a document of their own: exploring now
    (the class's page would say "Following" over a page that is not the teacher's)."""
    if st.session_state.get(JOINED) and st.session_state.get(FOLLOWING):
        set_following(store, False)
        st.session_state["_explored_own"] = True
