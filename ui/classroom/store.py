"""A class in the shared store (ui/store.py), with no Streamlit: its view and version, who attends,
who leads it (one session at a time, checked in the writes), the resume key, the throttle of wrong
passwords and keys, and the version files students' browsers poll.

Settings (environment): MICROSCOPE_CLASS_HOURS (how long a join link works, default 12)."""
from __future__ import annotations

import functools
import hashlib
import hmac
import json
import logging
import os
import secrets
import time
import uuid
from pathlib import Path

__all__ = ["POLL_S", "POLL_PROXIED_S", "SEEN_S", "STATIC", "CODE_LETTERS", "TEACHER_SEAT", "AWAY_S",
           "FREE_TRIES", "MAX_WAIT_S", "FORGET_S", "KEEP_ENDED_S", "hours", "valid_code", "start", "leads", "end",
           "publish", "version", "lookup", "seen", "attendance", "new_resume_key", "may_lead", "take_lead",
           "teacher_away", "delay", "Throttle", "poll_name", "static_file", "poll_file", "mirror", "mirrors"]

ROOT = Path(__file__).resolve().parents[2]
POLL_S = 1.0  # a student's browser's check of the class version (a static file from Streamlit)
POLL_PROXIED_S = 0.25  # the same behind scripts/serve.py, where nginx serves it (~30 µs of CPU a read): 30
# students read it 120 times a second for ~4 ms of nginx's CPU, and see a Next 0.25 s sooner at worst (issue 71)
SEEN_S = 20.0  # a student's "still here"; connected = seen in the last 3 × SEEN_S
STATIC = ROOT / "static" / "classes"  # served at app/static/classes/ (server.enableStaticServing)
CODE_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
TEACHER_SEAT = ""  # the teacher's row in attendance (students' sessions are uuid hex): when last seen
AWAY_S = 120.0  # a teacher unseen this long is "away" (tab closed, laptop asleep): students are told
FREE_TRIES = 5  # wrong passwords or resume keys a client may make before it has to wait
MAX_WAIT_S = 300.0  # the longest wait a run of wrong passwords or resume keys earns
FORGET_S = 3600.0  # a client's wrong tries are forgotten this long after its last one
KEEP_ENDED_S = 7 * 24 * 3600  # an ended or expired class is kept (its view emptied) this long: its link says "has ended"


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
              *((f"DELETE FROM {t} WHERE code NOT IN (SELECT code FROM classes)", ())
                for t in ("attendance", "leaders", "leads", "seats", "seat_clients", "seat_refused", "rooms", "answers",
                          "revealed", "left_steps", "class_lessons", "homework")),
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


def publish(store, code: str, view: dict, leader: str, drawn: bool = False) -> bool:
    """The teacher's view now; the version moves only if it changed (then the static file too).
    ``drawn``: published after the page ran to its end; pickers that only appeared then (the page's
    widgets drawn for the first time, at their defaults) are stored without moving it: a student on
    the view before them draws the same defaults, since taking a view drops the pickers it does not
    name (``ui.arrival.apply``). So a student reruns once per step of the teacher, not once more after
    the teacher's page has drawn. At any other time (before the page, a run cut short by the next
    one) a picker that appears may hold the teacher's new choice: it moves the version.
    Only the session that leads the class writes (checked in the write itself); → whether it leads."""
    text = json.dumps(view, sort_keys=True)
    rows = store.run("SELECT c.state FROM classes c JOIN leads l ON l.code = c.code WHERE c.code = ? AND "
                     "l.session = ?", (code, leader), True)
    if not rows:
        return False
    if rows[0][0] == text:
        return True
    old, view = json.loads(rows[0][0]), json.loads(text)  # (both as JSON has them: tuples are lists)
    pickers, before = view.get("pickers") or {}, old.get("pickers") or {}
    only_added = (drawn and {**old, "pickers": None} == {**view, "pickers": None}
                  and all(k in pickers and pickers[k] == v for k, v in before.items()))
    done = store.run(f"UPDATE classes SET state = ?, version = version + ? WHERE code = ? AND {LEADS} "
                     "RETURNING version", (text, 0 if only_added else 1, code, code, leader), True)
    if done:
        mirror(poll_name(store, code), done[0][0])
    return bool(done)


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
    """Wrong passwords and resume keys, counted per client address and per class (``who``: "class
    CODE"): FREE_TRIES, then each wrong try makes the next wait 2, 4, 8 … s (at most MAX_WAIT_S);
    logged. Kept in the store, so every app process counts the same tries, also after a restart;
    forgotten FORGET_S after the last one. It only ever holds up a browser session that made wrong
    tries itself (ui.classroom.lead.held_up): never a right key or password from a fresh session."""

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


def console_key(store, code: str) -> str:
    """The key that opens ``code``'s teacher's console (ui.classroom.console): a keyed hash of the code
    under this server's secret, in the leading page's link only."""
    return hmac.new(store.secret("class_console").encode(), code.encode(), hashlib.sha256).hexdigest()[:24]


def console_link(store, code: str, url: str) -> str:
    return f"{url.split('?')[0].rstrip('/')}/?console={code}&key={console_key(store, code)}"


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
