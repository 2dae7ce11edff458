"""A lesson assigned as homework (issue 59): a link students open on their own (``?homework=CODE``),
step at their own pace and answer; each answer's reveal (the model's answer, right or not) comes
right after they answer, or only after the deadline, as the teacher chose. The teacher's results
link (``?homework=CODE&results=KEY``) shows the same live counts and charts as in class, and the CSV.

Homework is a class with no leader stepping it: its answers, seats (one per browser, kept in the
address and a cookie, capped per address) and lesson text are the class's tables (answers.py,
class_lessons); the class expires at the deadline, so the store itself refuses later answers, and
is kept KEEP_ENDED_S after it for the results. An answer a student has checked is final (the
left_steps table: the answer to that step is locked for that seat)."""
from __future__ import annotations

import hashlib
import hmac
import secrets
import time

import streamlit as st

from ui import state
from ui.classroom import address, session as S
from ui.classroom.answers import give, issued, leave, left, mine, new_seat, of_step, refused_words, sit, step_id
from ui.questions import Ask, Refused, described
from ui.classroom.store import KEEP_ENDED_S, start, valid_code
from ui.errors import shared
from viz.common import markdown_text, plural

CODE, SEAT, RESULTS = S.HOMEWORK, S.HOMEWORK_SEAT, S.HOMEWORK_RESULTS  # session keys (ui.classroom.session)
MAX_DAYS = 30  # the latest deadline a teacher may set
# homework is done over days, a whole school's year behind its one address: new seats per address are
# capped higher than a class's, and come at the same slow rate past a burst (answers.SEAT_BURST)
HOMEWORK_SEATS_PER_ADDRESS = 300


def assign(store, name: str, text: str, days: float, after_due: bool) -> tuple[str, str]:
    """A new homework of the lesson ``name`` (``text``: as the store keeps a tour, ui.tour.to_json), due
    in ``days``; → (its code, the teacher's results key; only its hash is kept)."""
    days = min(max(days, 1 / 24), MAX_DAYS)
    code = start(store, {}, valid_hours=24 * days, leader=secrets.token_hex(16))  # no one steps it
    key = secrets.token_urlsafe(16)
    store.run("INSERT INTO homework VALUES (?, ?, ?, ?, ?)", (code, name, time.time() + 86400 * days, int(after_due),
                                                              _hash(key)), False,
              ("INSERT INTO class_lessons VALUES (?, ?, ?) ON CONFLICT (code, name) DO NOTHING", (code, name, text)))
    return code, key


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def of(store, code: str) -> dict | None:
    """The homework ``code``: {"lesson", "text", "due", "after_due", "owner"} (None: no such homework,
    or its results are gone)."""
    rows = store.run("SELECT h.lesson, l.text, h.due, h.after_due, h.owner FROM homework h JOIN class_lessons l "
                     "ON l.code = h.code AND l.name = h.lesson WHERE h.code = ? AND h.due > ?",
                     (code, time.time() - KEEP_ENDED_S), True) if valid_code(code) else []
    if not rows:
        return None
    lesson, text, due, after_due, owner = rows[0]
    return {"lesson": lesson, "text": text, "due": float(due), "after_due": bool(after_due), "owner": owner}


def may_see_results(found: dict, key: str) -> bool:
    return bool(key) and hmac.compare_digest(_hash(key), found["owner"])


def when(t: float) -> str:
    """A deadline in words: UTC and how far off it is."""
    left_s = t - time.time()
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t))
    if left_s <= 0:
        return f"{stamp} (passed)"
    days, hours = divmod(int(left_s // 3600), 24)
    return f"{stamp} (in {f'{days} d ' if days else ''}{hours} h)"


def open_from_url(store, examples: dict) -> None:
    """``?homework=CODE`` opens that homework's lesson at its first step with a
    seat (the same one after a reload: the address, then the cookie); ``&results=KEY``: the teacher's
    results instead of a seat."""
    code = (st.query_params.get("homework") or "").strip().upper()
    if not code:
        return
    found = of(store, code)
    if found is None:
        st.warning(f"Homework {markdown_text(code[:12])} does not exist on this server (or its results are gone). "
                   "You can explore on your own.", icon=":material/assignment:")
        return
    from ui.classroom.steps import add_own, go_to_step

    add_own(found["lesson"], found["text"])
    if st.query_params.get("results"):
        if not may_see_results(found, st.query_params["results"]):
            st.warning("This results link's key is not this homework's: you can open it as a student with "
                       f"?homework={code}.", icon=":material/key_off:")
            return
        st.session_state[RESULTS] = code
    else:
        kept = [st.query_params.get("seat") or "", S.cookie(seat_cookie(code))]
        seat = next((t for t in kept if issued(store, code, t)), None) or new_seat(store, code)
        if why := sit(store, code, seat, S.client(), cap=HOMEWORK_SEATS_PER_ADDRESS):
            st.warning(f"Homework: {refused_words(why)}", icon=":material/assignment:")
            return
        st.session_state.update({CODE: code, SEAT: seat})
    st.session_state[state.keep("class_lesson")] = found["lesson"]
    from ui.classroom.steps import all_lessons

    go_to_step(all_lessons()[found["lesson"]], 0, examples)


def seat_cookie(code: str) -> str:
    return f"microscope_homework_{code}"


def panel(store) -> None:
    """The sidebar's line for a student doing homework (or the teacher reading its results): which
    homework, its deadline, and the seat kept in the address and a cookie."""
    code = st.session_state.get(CODE) or st.session_state.get(RESULTS)
    found = shared(of, store, code) if code else None
    if not found:
        return
    st.caption(f":material/assignment: Homework **{code}** · due {when(found['due'])}"
               + (" · the answers' results" if st.session_state.get(RESULTS) else ""))
    seat = st.session_state.get(SEAT)
    if seat:
        if st.query_params.get("homework") != code:
            st.query_params["homework"] = code
        if st.query_params.get("seat") != seat:
            st.query_params["seat"] = seat
        if not st.session_state.get("_homework_cookie"):
            S.keep_cookie(seat_cookie(code), seat, int(found["due"] - time.time() + KEEP_ENDED_S), key="homework_cookie")
            st.session_state["_homework_cookie"] = True


def assign_panel(store, name: str, url: str) -> None:
    """Under a chosen lesson: assign it as homework (deadline, when answers are revealed) → the
    students' link and the teacher's results link."""
    from ui.classroom import teacher
    from ui.classroom.lead import password, refusal
    from ui.classroom.steps import OWN_TEXT
    from ui.tour import LESSONS, load_lesson, to_json

    made = st.session_state.get("_homework_made")
    if not teacher.may_teach():  # a teacher's action, as Start a class is
        st.caption(":material/key: Assigning homework takes the teacher link the server printed when it started "
                   "(scripts/serve.py).")
        return
    with st.popover("Assign as homework", icon=":material/assignment:", width="stretch"):
        st.number_input("Due in (days)", 1, MAX_DAYS, 7, key="homework_days")
        st.radio("Each answer's result", ["after", "due"], key="homework_reveal",
                 format_func={"after": "right after the student answers", "due": "only after the deadline"}.get)
        given = st.text_input("Teacher password", type="password", key="homework_password") if password() else None
        clicked = st.button("Assign", key="homework_assign", type="primary", icon=":material/assignment:")
        refused = shared(refusal, store, given, default="The shared store cannot be reached: try again.") \
            if clicked else None
        if refused:
            st.error(refused)
        elif clicked:
            text = (st.session_state.get(OWN_TEXT) or {}).get(name)
            if text is None:  # a shipped lesson: kept with the homework as any tour is
                text = to_json(load_lesson(LESSONS / f"{name}.toml"))
            code, key = shared(assign, store, name, text, float(st.session_state["homework_days"]),
                               st.session_state["homework_reveal"] == "due", default=(None, None))
            if code:
                made = st.session_state["_homework_made"] = {"code": code, "key": key, "name": name}
        if made and made["name"] == name:
            students = address.link(url, f"homework={made['code']}")
            st.markdown("**Students open:**")
            st.code(students, language=None, wrap_lines=True)
            if problem := address.unreachable(students):
                st.warning(problem, icon=":material/wifi_off:")
            st.markdown("**Your results link** (keep it: it is the only way to the answers):")
            st.code(address.link(url, f"homework={made['code']}&results={made['key']}"), language=None,
                    wrap_lines=True)


def student_side(store, code: str, s: dict, ask: Ask, trace) -> None:
    """A student's question in homework: saved at once; with "right after": "Check my answer" shows
    the model's answer and makes theirs final; with "after the deadline": shown then, for all."""
    from ui.classroom.asking import checked, held, reveal_label, results, yours

    found = shared(of, store, code)
    sid, seat = step_id(s), st.session_state.get(SEAT)
    if not found or not seat:
        return
    due = time.time() >= found["due"]
    stored = shared(mine, store, code, sid, seat)
    locked = due or bool(shared(left, store, code, sid, seat, default=False))
    if locked and not s.get("revealed") and (due or not found["after_due"]):
        st.session_state[S.STEP] = {**s, "revealed": True}  # the model's choice may show now (its stars)
        st.rerun()
    value = held(ask, s, trace, stored, locked=locked)
    if not locked and value is not None and value != stored:
        try:
            value, right = checked(ask, value, trace)
        except Refused as e:
            st.error(str(e))
            return
        if not shared(give, store, code, sid, seat, value, right, default=False):
            st.warning("Not saved: the homework's deadline has passed, or its store cannot be reached.")
            return
        stored = value
    if locked and (due or not found["after_due"]):
        yours(ask, stored, trace)
        if due:
            results(ask, [r[1] for r in shared(of_step, store, code, sid, default=[]) or []], trace, f"answers_{sid}")
        return
    if locked:  # another page was opened while the question was open: what was saved stands
        said = markdown_text(described(ask, stored)) if stored is not None else "none"
        st.caption(f":material/lock: Your answer is final ({said}): you left this step while its question was open. "
                   f"The model's answer is shown after the deadline, {when(found['due'])}.")
        return
    if stored is None:
        st.caption(f"Not answered yet. Due {when(found['due'])}.")
        return
    if found["after_due"]:
        st.caption(f":material/check_circle: **Answered** ({markdown_text(described(ask, stored))}). You can change "
                   f"it until the deadline, {when(found['due'])}: the model's answer is shown then.")
        return
    st.caption(f":material/check_circle: **Answered** ({markdown_text(described(ask, stored))}): change it, or "
               "check it (then it is final).")
    if st.button(reveal_label(ask), key=f"homework_check_{sid}", icon=":material/visibility:"):
        shared(leave, store, code, sid, seat)
        st.session_state[S.STEP] = {**s, "revealed": True}
        st.rerun()


@st.fragment(run_every=2.0)
def teacher_side(store, code: str, s: dict, ask: Ask, trace) -> None:
    """The homework's answers to this step, live: how many of the seats answered, the chart with the
    model's answer marked (the teacher may see it), and every answer as CSV."""
    from ui import figures
    from ui.classroom.answers import seat_numbers
    from ui.classroom.asking import answers_csv, results
    from ui.classroom.steps import OWN

    figures.forget_kind("answers")
    sid = step_id(s)
    rows = shared(of_step, store, code, sid, default=[]) or []
    seats = len(shared(seat_numbers, store, code, default={}) or {})
    st.markdown(f"**{len(rows)} of {plural(max(seats, len(rows)), 'student')} answered** (homework {code})")
    results(ask, [r[1] for r in rows], trace, f"answers_{sid}", shown=True)
    own = dict(st.session_state.get(OWN, {}))
    st.download_button("Answers as CSV", lambda: answers_csv(store, code, own), file_name=f"homework_{code}_answers.csv",
                       mime="text/csv", key=f"homework_csv_{sid}", on_click="ignore", icon=":material/download:",
                       help="Every answer of this homework: seat, step, answer, right.")


def sidebar(store, url: str) -> None:
    """Under the lesson picker: a homework student's or results reader's line, else (a lesson
    chosen, not in a class) Assign as homework."""
    if st.session_state.get(CODE) or st.session_state.get(RESULTS):
        panel(store)
        return
    from ui.roles import STUDENT, role

    name = (st.session_state.get(S.STEP) or {}).get("lesson")
    if name and role() != STUDENT and not st.session_state.get(S.TEACHING):
        assign_panel(store, name, url)


def question_panel(store) -> None:
    """Under the step's text: a homework student's or results reader's side of the step's question,
    else the class's or alone (ui.classroom.asking.question_panel)."""
    from ui.classroom.asking import asked
    from ui.classroom.asking import question_panel as in_class

    code, results = st.session_state.get(CODE), st.session_state.get(RESULTS)
    if not (code or results) or st.session_state.get(S.JOINED) or st.session_state.get(S.TEACHING):
        return in_class(store)
    found = asked()
    if found is not None:
        (student_side if code else teacher_side)(store, code or results, *found)
