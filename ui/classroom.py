"""A class: a teacher leads, every student's browser follows (issue 33).

The teacher starts a class from the sidebar and gets a short code and a join link
(``?class=CODE``, also as a QR code). After each of the teacher's runs the view they see (page,
document, k, trigram blocking, weights, the pickers in ``FOLLOWED``, the lesson step) is written
to the shared store; its ``version`` goes up only when something changed, and goes to a tiny
static file too. A student's browser reads that file every second (every half second behind
scripts/serve.py, where nginx serves it); when the number moves, the student's session takes the
teacher's view (the document from the store, the result from the server's shared cache) and
reruns on the teacher's page. Nothing re-runs while nothing changes. The store is the only
channel between processes, so students and teacher may be on different app processes
(scripts/serve.py, nginx) or machines (PostgreSQL; each process copies live classes' versions to
its static files). A student can leave to explore and come back. Lessons: TOML files in
lessons/, stepped with Back/Next, alone or for a class.

Who may lead (README: Security): one session leads a class at a time, the one that started it or
last resumed it with its resume key (a new key at every resume); the store refuses the others'
writes. Wrong passwords and keys are counted per client in the store, never per class.

Settings (environment): MICROSCOPE_TEACHER_PASSWORD (without it anyone may start a class),
MICROSCOPE_CLASS_HOURS (how long a join link works, default 12), MICROSCOPE_PROXY_SECRET (given by
scripts/serve.py: only a request carrying it may name its client's address).
"""
from __future__ import annotations

import functools
import hashlib
import hmac
import io
import json
import logging
import os
import secrets
import time
import tomllib
import uuid
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from ui import state

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "lessons"
POLL_S = 1.0  # a student's browser's check of the class version (a static file from Streamlit)
POLL_PROXIED_S = 0.5  # the same behind scripts/serve.py, where nginx serves it (~30 µs of CPU a read)
PROXIED = "X-Microscope-Proxy"  # the header scripts/serve.py's nginx adds: this run's secret
PROXY_SECRET = "MICROSCOPE_PROXY_SECRET"  # the environment variable that holds it
SEEN_S = 20.0  # a student's "still here"; connected = seen in the last 3 × SEEN_S
STATIC = ROOT / "static" / "classes"  # served at app/static/classes/ (server.enableStaticServing)
FOLLOWED = ("bert_view", "bert_layer", "bert_head", "bert_colors", "bert_scale", "bert_show", "bert_alti",
            "inter_layer", "inter_head", "inter_show", "heads_view", "learn_layer", "learn_head", "learn_sep",
            "whatif_edits")
CODE_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
TEACHER_SEAT = ""  # the teacher's row in attendance (students' sessions are uuid hex): when last seen
AWAY_S = 120.0  # a teacher unseen this long is "away" (tab closed, laptop asleep): students are told
FREE_TRIES = 5  # wrong passwords or resume keys a client may make before it has to wait
MAX_WAIT_S = 300.0  # the longest wait a run of wrong passwords or resume keys earns
FORGET_S = 3600.0  # a client's wrong tries are forgotten this long after its last one
KEEP_ENDED_S = 7 * 24 * 3600  # an ended or expired class is kept (its view emptied) this long: its link says "has ended"


# ---------------------------------------------------------------- the class in the store (no Streamlit)

def hours() -> float:
    return float(os.environ.get("MICROSCOPE_CLASS_HOURS", 12))


def valid_code(code: str) -> bool:
    """A class code as ``start`` makes them (6 of CODE_LETTERS): anything else is refused before it
    is counted, looked up or logged."""
    return len(code) == 6 and all(c in CODE_LETTERS for c in code)


def start(store, view: dict, valid_hours: float | None = None, leader: str = "") -> str:
    """A new class showing ``view``, led by the session ``leader``; → its code. Classes expired
    since are emptied (their views name documents); those ended more than KEEP_ENDED_S ago go."""
    code = "".join(secrets.choice(CODE_LETTERS) for _ in range(6))
    now = time.time()
    store.run("DELETE FROM classes WHERE expires < ?", (now - KEEP_ENDED_S,), False,
              ("UPDATE classes SET state = '{}' WHERE expires < ? AND state <> '{}'", (now,)),
              ("DELETE FROM attendance WHERE code NOT IN (SELECT code FROM classes)", ()),
              ("DELETE FROM leaders WHERE code NOT IN (SELECT code FROM classes)", ()),
              ("DELETE FROM leads WHERE code NOT IN (SELECT code FROM classes)", ()),
              ("INSERT INTO leaders VALUES (?, '', ?)", (code, secrets.token_urlsafe(18))),
              ("INSERT INTO leads VALUES (?, ?)", (code, leader)),
              ("INSERT INTO classes VALUES (?, ?, 1, ?)", (code, json.dumps(view, sort_keys=True),
                                                       now + 3600 * (valid_hours or hours()))))
    return code


LEADS = "code IN (SELECT code FROM leads WHERE code = ? AND session = ?)"  # the store's check of a leader's write


def leads(store, code: str, leader: str) -> bool:
    """Whether the session ``leader`` leads ``code`` now (a resume elsewhere moves the lead)."""
    return bool(store.run("SELECT 1 FROM leads WHERE code = ? AND session = ?", (code, leader), True))


def end(store, code: str, leader: str) -> bool:
    """End the class for everyone, if ``leader`` leads it: it expires now and forgets the teacher's
    view (the document's id); its version file goes, so following browsers see it gone (and say so)."""
    done = store.run(f"UPDATE classes SET state = ?, expires = ? WHERE code = ? AND {LEADS} RETURNING code",
                     ("{}", time.time() - 1, code, code, leader), True)
    if done:
        poll_file(store, code).unlink(missing_ok=True)
    return bool(done)


def publish(store, code: str, view: dict, leader: str) -> bool:
    """The teacher's view now; the version moves only if it changed (then the static file too).
    Pickers that only appeared (a page's widgets drawn for the first time, at their defaults) are
    stored without moving it: a student on the view before them draws the same defaults, since
    taking a view drops the pickers it does not name (``apply_pending``). So a student reruns once
    per step of the teacher, not once more after the teacher's page has drawn.
    Only the session that leads the class writes (checked in the write itself); → whether it leads."""
    text = json.dumps(view, sort_keys=True)
    rows = store.run("SELECT c.state FROM classes c JOIN leads l ON l.code = c.code WHERE c.code = ? AND "
                     "l.session = ?", (code, leader), True)
    if not rows:
        return False
    if rows[0][0] == text:
        return True
    old = json.loads(rows[0][0])
    pickers, before = view.get("pickers") or {}, old.get("pickers") or {}
    only_added = ({**old, "pickers": None} == {**view, "pickers": None}
                  and all(k in pickers and pickers[k] == v for k, v in before.items()))
    done = store.run(f"UPDATE classes SET state = ?, version = version + ? WHERE code = ? AND {LEADS} "
                     "RETURNING version", (text, 0 if only_added else 1, code, code, leader), True)
    if done:
        mirror(poll_name(store, code), done[0][0])
    return bool(done)


def publish_mine(store, page: str) -> None:
    """A teacher's run: publish what this session shows (nothing before a Summarize or out of class)."""
    from ui.link import save_document

    code, view = st.session_state.get(TEACHING), my_view(page)
    st.session_state[PAGE] = page  # for lead_heartbeat's retry
    if code is not None and view is not None:
        save_document()  # a document summarized while the store was down, first: students read it
        if not publish(store, code, view, st.session_state.get(LEADER, "")):
            led_elsewhere(code)


def version(store, code: str) -> int | None:
    """The class's version (one cheap read), None if there is no such class or it expired."""
    rows = store.run("SELECT version FROM classes WHERE code = ? AND expires >= ?", (code, time.time()), True)
    return rows[0][0] if rows else None


def lookup(store, code: str) -> tuple[dict, int] | str:
    """(the teacher's view, its version), or why not: "ended" (ended or expired) or "unknown"."""
    rows = store.run("SELECT state, version, expires FROM classes WHERE code = ?", (code,), True)
    if not rows:
        return "unknown"
    text, v, expires = rows[0]
    if expires < time.time():
        if text != "{}":  # expired, not ended: its view (the document's id) goes now
            store.run("UPDATE classes SET state = '{}' WHERE code = ?", (code,))
        return "ended"
    return json.loads(text), v


def seen(store, code: str, session: str, following: bool) -> None:
    store.run("INSERT INTO attendance VALUES (?, ?, ?, ?) ON CONFLICT(code, session) DO UPDATE SET "
              "seen = excluded.seen, following = excluded.following", (code, session, time.time(), int(following)))


def attendance(store, code: str) -> tuple[int, int]:
    """(students connected, of them following the teacher)."""
    rows = store.run("SELECT COUNT(*), COALESCE(SUM(following), 0) FROM attendance WHERE code = ? AND seen >= ? "
                     "AND session <> ?", (code, time.time() - 3 * SEEN_S, TEACHER_SEAT), True)
    return int(rows[0][0]), int(rows[0][1])


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def new_resume_key(store, code: str) -> str:
    """A key that lets its holder lead ``code`` again from any browser (72 bits; only its hash is
    stored): made when the class starts."""
    key = secrets.token_urlsafe(9)
    store.run("UPDATE leaders SET key_hash = ? WHERE code = ?", (_hash(key), code))
    return key


def may_lead(store, code: str, key: str) -> bool:
    rows = store.run("SELECT key_hash FROM leaders WHERE code = ?", (code,), True)
    return bool(rows) and hmac.compare_digest(rows[0][0], _hash(key))


def take_lead(store, code: str, key: str, leader: str) -> str | None:
    """Resume: with the right key, the session ``leader`` leads ``code`` now and gets a new key (→
    it; None if the key is wrong). The key used is spent and the previous leader's writes are
    refused from now on. One transaction, on the key's hash: of two resumes with one key, one wins."""
    new = secrets.token_urlsafe(9)
    done = store.run("UPDATE leads SET session = ? WHERE code = ? AND code IN "
                     "(SELECT code FROM leaders WHERE code = ? AND key_hash = ?) RETURNING code",
                     (leader, code, code, _hash(key)), True,
                     ("UPDATE leaders SET key_hash = ? WHERE code = ? AND key_hash = ?", (_hash(new), code, _hash(key))))
    return new if done else None


def teacher_away(store, code: str) -> float | None:
    """Seconds since the teacher's page last said "still here", when over AWAY_S; else None."""
    rows = store.run("SELECT seen FROM attendance WHERE code = ? AND session = ?", (code, TEACHER_SEAT), True)
    gone = time.time() - rows[0][0] if rows else 0.0
    return gone if gone > AWAY_S else None


def delay(failures: int) -> float:
    """The wait after ``failures`` wrong tries in a row: none for FREE_TRIES, then 2, 4, 8 … s."""
    return 0.0 if failures < FREE_TRIES else min(2.0 ** (failures - FREE_TRIES + 1), MAX_WAIT_S)


class Throttle:
    """Wrong passwords and resume keys, per client (never per class: every student knows the code,
    and a count there would only let one lock the teacher out): FREE_TRIES, then each wrong try
    makes the next wait 2, 4, 8 … s (at most MAX_WAIT_S); logged. Kept in the store, so every app
    process counts the same tries, also after a restart; forgotten FORGET_S after the last one."""

    def __init__(self, store):
        self.store = store

    def wait(self, who: str) -> float:
        now = time.time()
        rows = self.store.run("SELECT failures, last FROM throttle WHERE who = ? AND last >= ?",
                              (who, now - FORGET_S), True)
        return max(rows[0][1] + delay(rows[0][0]) - now, 0.0) if rows else 0.0

    def wrong(self, who: str) -> None:
        now = time.time()
        self.store.run("DELETE FROM throttle WHERE last < ?", (now - FORGET_S,), False,
                       ("INSERT INTO throttle VALUES (?, 1, ?) ON CONFLICT(who) DO UPDATE SET "
                        "failures = throttle.failures + 1, last = excluded.last", (who, now)))
        logging.getLogger("microscope").warning("class: wrong password or resume key from %s", who)

    def right(self, who: str) -> None:
        self.store.run("DELETE FROM throttle WHERE who = ?", (who,))


# ---------------------------------------------------------------- lessons

@dataclass(frozen=True)
class Step:
    page: str          # a page's URL path ("" = Summary)
    view: dict         # session keys → values (layers and heads 0-based here, 1-based in the file)
    text: str          # what to look at
    question: str


@dataclass(frozen=True)
class Lesson:
    name: str
    title: str
    document: str      # an example's file stem
    k: int
    steps: tuple[Step, ...]


ONE_BASED = {"bert_layer", "bert_head", "inter_layer", "inter_head", "learn_layer", "learn_head"}


def load_lesson(path: Path) -> Lesson:
    """A lesson file (TOML: title, document, k, [[steps]] with page, text, question and [steps.view])."""
    d = tomllib.loads(path.read_text(encoding="utf-8"))
    steps = tuple(Step(s.get("page", ""), {k: (v - 1 if k in ONE_BASED and isinstance(v, int) else v)
                                           for k, v in s.get("view", {}).items()}, s["text"], s.get("question", ""))
                  for s in d["steps"])
    return Lesson(path.stem, d["title"], d["document"], int(d.get("k", 3)), steps)


def lessons() -> dict[str, Lesson]:
    return {p.stem: load_lesson(p) for p in sorted(LESSONS.glob("*.toml"))}


def script_of(page: str) -> str:
    return f"pages/{page or 'summary'}.py"


# ---------------------------------------------------------------- in the app (Streamlit)

TEACHING, JOINED, FOLLOWING, APPLIED, PENDING, SESSION, STEP, MOVED, RESUME, PAGE, LEADER, ELSEWHERE = (
    state.TEACHING, "class_joined", "class_following", "class_applied", "class_pending", "class_session",
    "class_step", "class_moved", "class_resume_key", "class_page", "class_leader", "class_led_elsewhere")


def from_our_proxy(sent: str | None) -> bool:
    """Whether a request's PROXIED header is this server's secret (scripts/serve.py gives it to the
    app processes and to nginx; compared in constant time). Anyone may send the header itself."""
    secret = os.environ.get(PROXY_SECRET)
    return bool(secret and sent) and hmac.compare_digest(sent.encode(), secret.encode())


def client() -> str:
    """Who is asking: the address our nginx saw (only with its secret), else the socket's peer."""
    headers = st.context.headers
    forwarded = headers.get("X-Real-IP") if from_our_proxy(headers.get(PROXIED)) else None
    return (forwarded or str(getattr(st.context, "ip_address", None) or "unknown"))[:64]


def led_elsewhere(code: str) -> None:
    """This session no longer leads ``code`` (its resume key was used elsewhere): it stops leading
    and its panel says so once."""
    for k in (TEACHING, RESUME, LEADER):
        st.session_state.pop(k, None)
    st.session_state[ELSEWHERE] = code


def my_view(page: str) -> dict | None:
    """What this session shows, as a class publishes it (None before a Summarize)."""
    from ui import link

    params = state.params()
    if params is None:
        return None
    lesson = st.session_state.get(STEP)
    return {"page": page, "doc": link.doc_id(params["text"]), "k": params["k"], "tb": params["block_trigram"],
            "w": params["weights"], "pickers": {k: st.session_state[k] for k in FOLLOWED if k in st.session_state},
            "lesson": lesson}


def join_from_url(store) -> None:
    """Once per session: ``?class=CODE`` joins that class (following), or says why it cannot."""
    if st.session_state.get("class_url_read"):
        return
    st.session_state["class_url_read"] = True
    code = (st.query_params.get("class") or "").strip().upper()
    if not code:
        return
    found = lookup(store, code)
    if isinstance(found, str):
        from viz.common import markdown_text

        st.warning(f"Class {markdown_text(code[:12])} " + ("has ended." if found == "ended"
                                                           else "does not exist on this server.")
                   + " You can explore on your own.", icon=":material/school:")
        return
    st.session_state.update({JOINED: code, FOLLOWING: True, APPLIED: None, SESSION: uuid.uuid4().hex})


def apply_pending(page) -> None:
    """At the top of a run, before any widget: take a view a lesson step or the teacher's view (a
    student's follow check) asked for. The page first: values written before a page switch were
    lost to the browser's old widget values on the rerun it makes."""
    view = st.session_state.get(PENDING)
    if view is None:
        return
    if view["page"] != page.url_path:
        st.switch_page(script_of(view["page"]))
    del st.session_state[PENDING]
    from ui.common import weights_choices

    if view.get("text") is not None:
        st.session_state.update({"document": view["text"], "k": view["k"], "block_trigram": view["tb"]})
        if view.get("w") in weights_choices():
            st.session_state["weights"] = view["w"]
        p, w = state.params(), st.session_state.get("weights")
        if p is None or (p["text"], p["k"], p["block_trigram"], p["weights"]) != (view["text"], view["k"], view["tb"], w):
            state.request_summarize()
    for key, value in view["pickers"].items():
        if key in FOLLOWED:  # a stored view names nothing else of a student's session
            st.session_state[state.keep(key)] = value
    if view.get("complete"):  # the teacher's whole view: a picker it does not name is at its default
        for key in set(FOLLOWED) - set(view["pickers"]):
            st.session_state.pop(key, None)
    st.session_state[STEP] = view.get("lesson")


def teacher_view(store, code: str) -> dict | None:
    """The class's view to take, with the document's text from the store (None: none to take)."""
    found = lookup(store, code)
    if isinstance(found, str):
        return None
    view, v = found
    st.session_state[APPLIED] = v
    if not view:
        return None
    return {**view, "text": store.get(view["doc"]) if view.get("doc") else None, "complete": True}


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


def poll_name(store, code: str) -> str:
    """The name of the file the class's browsers poll: a random token, not the join code, so the
    folder says nothing about which codes exist (a code is all that guards a pasted document)."""
    rows = store.run("SELECT poll FROM leaders WHERE code = ?", (code,), True)
    return rows[0][0] if rows else code  # a class started before this version kept its code as the name


def static_file(name: str) -> Path:
    return STATIC / f"{name}.json"


def poll_file(store, code: str) -> Path:
    return static_file(poll_name(store, code))


def mirror(name: str, v: int | None) -> None:
    """A class's version where the students' browsers look for it (written atomically)."""
    STATIC.mkdir(parents=True, exist_ok=True)
    tmp = STATIC / f".{name}.{uuid.uuid4().hex}.tmp"  # one per call: threads of one process publish at once
    tmp.write_text(json.dumps({"v": v}))
    os.replace(tmp, static_file(name))


@functools.lru_cache(maxsize=None)
def mirrors(store) -> bool:
    """This process's copy of every live class's version into the static files, twice a second (one
    query per process and store, not per student): a browser reads the file on whatever process or
    machine its request lands (nginx serves the folder itself: scripts/serve.py)."""
    import threading

    def run():
        known = {}
        while True:
            try:
                live = dict(store.run("SELECT l.poll, c.version FROM classes c JOIN leaders l ON l.code = c.code "
                                      "WHERE c.expires >= ?", (time.time(),), True))
                for name, v in live.items():
                    if known.get(name) != v or not static_file(name).exists():
                        mirror(name, v)
                        known[name] = v
                for name in set(known) - set(live):  # ended or expired: its file goes
                    static_file(name).unlink(missing_ok=True)
                    del known[name]
            except Exception:  # noqa: BLE001  a failed read: the next round tries again
                pass
            time.sleep(POLL_PROXIED_S)

    threading.Thread(target=run, name="class-mirror", daemon=True).start()
    return True


def catch_up(store, page) -> None:
    """At the top of a run, before any widget: a student following whose browser saw the class
    version move (or who just joined or came back) takes the teacher's view; then any view a
    lesson step or the teacher asked for is applied (``apply_pending``)."""
    code = st.session_state.get(JOINED)
    if code is not None and st.session_state.get(FOLLOWING) and (
            st.session_state.get(MOVED) or st.session_state.get(APPLIED) is None):
        view = teacher_view(store, code)  # if the store is down: raises, and the move is kept for later
        st.session_state.pop(MOVED, None)
        if view is not None:
            st.session_state[PENDING] = view
    apply_pending(page)


def set_following(store, following: bool) -> None:
    st.session_state[FOLLOWING] = following
    st.session_state[APPLIED] = None  # coming back: catch up at once
    seen(store, st.session_state[JOINED], st.session_state[SESSION], following)


def follow(store) -> None:
    """A student's class panel: following or exploring; the browser's watch on the class version."""
    code = st.session_state.get(JOINED)
    if code is None:
        return
    mirrors(store)
    heartbeat(store, code)
    if st.query_params.get("class") != code:  # a reload (F5) or a restart keeps the student in the class
        st.query_params["class"] = code
    if version(store, code) is None:
        st.warning(f"Class {code} has ended.")
        return
    if st.session_state.get(FOLLOWING):
        st.caption(f":material/school: Following class **{code}**.")
        st.button("Leave to explore", key="class_leave", on_click=set_following, args=(store, False))
        every = POLL_PROXIED_S if from_our_proxy(st.context.headers.get(PROXIED)) else POLL_S
        _follow(key="class_follow", data={"file": poll_name(store, code), "version": st.session_state.get(APPLIED),
                                          "every": int(every * 1000)},
                on_moved_change=lambda: st.session_state.update({MOVED: True}))
    else:
        st.caption(f":material/explore: Exploring on your own (class **{code}**).")
        st.button("Back to the teacher", key="class_back", type="primary", on_click=set_following,
                  args=(store, True))


@st.fragment(run_every=SEEN_S)
def heartbeat(store, code: str) -> None:
    """"Still here", for the teacher's count (a fragment every SEEN_S); says when the teacher is away
    or the store is down; a class move the store could not give earlier is taken once it is back."""
    from ui.common import shared

    if shared(seen, store, code, st.session_state[SESSION], st.session_state.get(FOLLOWING, False),
              default=False) is False:
        st.caption(":material/cloud_off: The class's shared store cannot be reached: you keep this step, and "
                   "following goes on by itself when it is back.")
        return
    if st.session_state.get(FOLLOWING) and st.session_state.get(MOVED):  # catch_up could not read it
        st.rerun()
    away = teacher_away(store, code)
    if away is not None:
        st.caption(f":material/schedule: The teacher has been away for {away / 60:.0f} min: you keep the last "
                   "step, and following goes on when they are back.")


@st.fragment(run_every=SEEN_S)
def lead_heartbeat(store, code: str) -> None:
    """The teacher's page is open: "still here", so students are not told the teacher is away; and
    the teacher's view again, in case a publish failed while the store was down (one read if not).
    If the class is led from elsewhere now, the whole page reruns to say so."""
    from ui.common import shared

    if shared(seen, store, code, TEACHER_SEAT, True, default=False) is not False and PAGE in st.session_state:
        shared(publish_mine, store, st.session_state[PAGE])
    if TEACHING not in st.session_state:
        st.rerun()


def teacher_panel(store, url: str) -> None:
    """Sidebar: start a class (password when MICROSCOPE_TEACHER_PASSWORD is set), then its code,
    join link, QR code, who is connected, and the lesson's Back/Next."""
    from ui.common import shared

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
            throttle, who = Throttle(store), client()
            wait = throttle.wait(who)
            if wait > 0:
                st.error(f"Too many wrong passwords: try again in {wait:.0f} s.")
            elif not password_ok(secret, given):
                throttle.wrong(who)
                st.error("Wrong teacher password.")
            elif state.params() is None:
                st.error("Summarize a document first: the class starts on what you show.")
            else:
                throttle.right(who)
                leader = st.session_state[LEADER] = uuid.uuid4().hex
                code = st.session_state[TEACHING] = start(store, {}, leader=leader)  # the view: at the end of this run
                st.session_state[RESUME] = new_resume_key(store, code)
                st.session_state.pop(ELSEWHERE, None)
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
    st.code(link, language=None)
    st.image(qr_png(link), width=160)
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
        st.code(st.session_state[RESUME], language=None)


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
        throttle, who = Throttle(store), client()
        wait = throttle.wait(who)
        if wait > 0:
            st.error(f"Too many wrong tries: try again in {wait:.0f} s.")
        elif not password_ok(secret, given) or not may_lead(store, code, key):
            throttle.wrong(who)
            st.error("That code, key or password is wrong.")
        elif version(store, code) is None:
            st.error("That class has ended.")
        else:
            throttle.right(who)
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
    for k in (TEACHING, RESUME, LEADER):
        st.session_state.pop(k, None)


@st.fragment(run_every=SEEN_S)
def who_is_here(store, code: str) -> None:
    """The teacher's count of students, read again every few seconds (nothing else re-runs)."""
    from ui.common import shared

    connected, following = shared(attendance, store, code, default=("?", "?"))
    st.markdown(f"Class **{code}** · {connected} student{'s' if connected != 1 else ''} connected, "
                f"{following} following")


def qr_png(text: str) -> bytes:
    import segno

    out = io.BytesIO()
    segno.make(text, error="m").save(out, kind="png", scale=4, border=2)
    return out.getvalue()


def lesson_panel(examples: dict) -> None:
    """Sidebar: pick a lesson, Back/Next through its steps (alone, or for a class as its teacher)."""
    if st.session_state.get(JOINED) and st.session_state.get(FOLLOWING):
        return  # a student following: the teacher turns the pages
    all_lessons = lessons()
    if not st.session_state.get("lesson_url_read"):  # ?lesson=NAME opens on that lesson
        st.session_state["lesson_url_read"] = True
        if st.query_params.get("lesson") in all_lessons:
            st.session_state[state.keep("class_lesson")] = st.query_params["lesson"]
    none = "— no lesson —"  # an option of its own: a None value reads as no choice
    name = st.selectbox("Lesson", [none, *all_lessons], key=state.keep("class_lesson"),
                        format_func=lambda n: all_lessons[n].title if n in all_lessons else n)
    if name not in all_lessons:
        st.session_state.pop(STEP, None)
        return
    lesson = all_lessons[name]
    step = st.session_state.get(STEP) or {"lesson": name, "step": -1}
    if step.get("lesson") != name:
        step = {"lesson": name, "step": -1}
    c = st.columns(2)
    c[0].button("Back", key="lesson_back", disabled=step["step"] <= 0, width="stretch",
                on_click=go_to_step, args=(lesson, step["step"] - 1, examples))
    c[1].button("Next" if step["step"] >= 0 else "Start", key="lesson_next", type="primary", width="stretch",
                disabled=step["step"] >= len(lesson.steps) - 1, on_click=go_to_step,
                args=(lesson, step["step"] + 1, examples))


def go_to_step(lesson: Lesson, n: int, examples: dict) -> None:
    """A lesson button's callback: the step's page, view and (if not shown yet) document, taken at
    the top of the next run (``apply_pending``)."""
    s = lesson.steps[n]
    doc = next((p for p in examples.values() if p.stem == lesson.document), None)
    text = doc.read_text(encoding="utf-8") if doc is not None else None
    st.session_state[PENDING] = {
        "page": s.page, "pickers": s.view, "text": text, "k": lesson.k, "tb": True, "w": None,
        "lesson": {"lesson": lesson.name, "step": n, "of": len(lesson.steps), "text": s.text,
                   "question": s.question, "title": lesson.title}}


def step_text() -> None:
    """The lesson step's text above the page (teacher, students following, anyone self-paced)."""
    s = st.session_state.get(STEP)
    if s and s.get("text"):
        st.info(f"**{s['title']} · step {s['step'] + 1} of {s['of']}.** {s['text']}"
                + (f"\n\n**Question:** {s['question']}" if s.get("question") else ""), icon=":material/school:")
