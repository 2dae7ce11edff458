"""A class's answers in the shared store (issue 49), with no Streamlit: seats, one answer per seat
and step (changeable until the teacher reveals the step, refused after it in the write itself),
the reveal, and the class's answers for the teacher's chart and CSV.

A seat is one student's browser: a token the server issued (``new_seat``: a random half and its
keyed hash, so an unknown token is no seat), kept in the browser's address and a cookie (a reload,
a reconnect or the same phone scanning the QR code again keeps it), numbered 1, 2, 3 … by when it
first sat; never a name. New seats per client address and class are capped (SEATS_PER_CLIENT: a
school's room behind one address fits). A step is named ``LESSON#N`` (N from 0), so answers of two
lessons in one class do not mix.

Settings (environment): MICROSCOPE_SEATS_PER_ADDRESS (default 60)."""
from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
import math
import os
import re
import secrets
import time

from ui.questions import Ask, described
from ui.classroom.store import LEADS

TOKEN = re.compile(r"[0-9a-f]{32}")  # a seat token as new_seat makes them: 16 hex of chance, 16 of its keyed hash


def seats_per_client() -> int:
    return int(os.environ.get("MICROSCOPE_SEATS_PER_ADDRESS", 60))


# New seats per address and class come as a room needs them, then slowly: a room behind one address
# (a school's NAT) joins within a minute or two; a script that takes a seat per request gets SEAT_BURST
# at once, then one every SEAT_EVERY_S (a leaky bucket over the seats' own join times: no counter kept)
SEAT_BURST = 40
SEAT_EVERY_S = 6.0


def seat_wait(joined: list[float], now: float) -> float:
    """Seconds until an address whose seats joined at ``joined`` may take a new one (0: now)."""
    level, last = 0.0, None
    for t in sorted(joined):
        level = (max(0.0, level - (t - last) / SEAT_EVERY_S) if last is not None else 0.0) + 1
        last = t
    if last is None:
        return 0.0
    level = max(0.0, level - (now - last) / SEAT_EVERY_S)
    return max(0.0, (level + 1 - SEAT_BURST) * SEAT_EVERY_S)


def room(store, code: str) -> tuple[bool, int]:
    """(whether the teacher locked the room to new seats, new seats allowed per address)."""
    rows = store.run("SELECT locked, cap FROM rooms WHERE code = ?", (code,), True)
    return (bool(rows[0][0]), int(rows[0][1])) if rows else (False, seats_per_client())


def set_room(store, code: str, leader: str, locked: bool | None = None, cap: int | None = None) -> bool:
    """The leader locks or opens the room, or sets its seats per address (→ whether it leads)."""
    was_locked, was_cap = room(store, code)
    locked, cap = was_locked if locked is None else locked, was_cap if cap is None else max(1, int(cap))
    return bool(store.run(f"INSERT INTO rooms (code, locked, cap) SELECT CAST(? AS TEXT), CAST(? AS INTEGER), "
                          f"CAST(? AS INTEGER) WHERE EXISTS (SELECT 1 FROM classes WHERE {LEADS}) ON CONFLICT (code) "
                          f"DO UPDATE SET locked = excluded.locked, cap = excluded.cap RETURNING code",
                          (code, int(locked), cap, code, leader), True))
def step_id(step: dict) -> str:
    """The name under which a lesson step's answers are kept (its lesson and number)."""
    return f"{step['lesson']}#{step['step']}"


def _mac(store, code: str, nonce: str) -> str:
    return hmac.new(store.secret("seat").encode(), f"{code}:{nonce}".encode(), hashlib.sha256).hexdigest()[:16]


def new_seat(store, code: str) -> str:
    """A seat token for ``code`` that only this server could have made."""
    nonce = secrets.token_hex(8)
    return nonce + _mac(store, code, nonce)


def issued(store, code: str, token: str) -> bool:
    """Whether ``token`` is a seat this server issued for ``code`` (a made-up one is not)."""
    return bool(TOKEN.fullmatch(token or "")) and hmac.compare_digest(token[16:], _mac(store, code, token[:16]))


def sit(store, code: str, token: str, client: str = "", cap: int | None = None) -> str | None:
    """A student's browser takes its seat in ``code`` (again after a reload: the same seat) → None;
    or why a new seat is refused: "locked" (the teacher closed the room), "full" (this address has
    the room's seats per address, or ``cap``: homework's), or "wait N" (seconds: new seats from this
    address come slowly past SEAT_BURST)."""
    if store.run("SELECT 1 FROM seats WHERE code = ? AND token = ?", (code, token), True):
        return None
    locked, per_client = room(store, code)
    joined = [r[0] for r in store.run("SELECT s.joined FROM seats s JOIN seat_clients c ON c.code = s.code AND "
                                      "c.token = s.token WHERE s.code = ? AND c.client = ?", (code, client), True)]
    now = time.time()
    wait = seat_wait(joined, now)
    why = ("locked" if locked else "full" if len(joined) >= (cap or per_client)
           else f"wait {math.ceil(wait)}" if wait > 0 else None)
    if why:
        store.run("INSERT INTO seat_refused VALUES (?, 1) ON CONFLICT (code) DO UPDATE SET n = seat_refused.n + 1",
                  (code,))
        return why
    store.run("INSERT INTO seats VALUES (?, ?, ?) ON CONFLICT (code, token) DO NOTHING", (code, token, now),
              False, ("INSERT INTO seat_clients VALUES (?, ?, ?) ON CONFLICT (code, token) DO NOTHING",
                      (code, token, client)))
    return None


def refused_words(why: str) -> str:
    """What a student whose new seat was refused should do, in one sentence."""
    if why == "locked":
        return "The teacher has closed this class to new students: ask them to open it, then reload this page."
    if why.startswith("wait"):
        return (f"Many students on your network are joining at once: reload this page in {why[5:]} s "
                "to take your seat.")
    return ("This class has as many seats from your network as it allows: ask your teacher to make room "
            "(they can remove seats that never answered, or allow more), then reload this page.")


def seat_origins(store, code: str) -> tuple[int, int, int]:
    """(seats, the most from one client address, new seats refused) of ``code``."""
    rows = store.run("SELECT COUNT(*) FROM seat_clients WHERE code = ? GROUP BY client", (code,), True)
    refused = store.run("SELECT n FROM seat_refused WHERE code = ?", (code,), True)
    return sum(r[0] for r in rows), max((r[0] for r in rows), default=0), refused[0][0] if refused else 0


def answered_seats(store, code: str) -> tuple[int, int]:
    """(seats that gave an answer to any step, seats that never did) of ``code``."""
    rows = store.run("SELECT COUNT(*), COALESCE(SUM(CASE WHEN EXISTS (SELECT 1 FROM answers a WHERE a.code = s.code "
                     "AND a.seat = s.token) THEN 1 ELSE 0 END), 0) FROM seats s WHERE s.code = ?", (code,), True)
    total, answered = int(rows[0][0]), int(rows[0][1])
    return answered, total - answered


def remove_silent(store, code: str, leader: str) -> int:
    """The leader removes the seats that never answered (a script's, a closed tab's) → how many. A
    removed browser that reloads asks for a new seat (locked room, rate limit and cap apply)."""
    gone = store.run("DELETE FROM seats WHERE code = ? AND token NOT IN (SELECT seat FROM answers WHERE code = ?) "
                     f"AND EXISTS (SELECT 1 FROM classes WHERE {LEADS}) RETURNING token", (code, code, code, leader),
                     True, ("DELETE FROM seat_clients WHERE code = ? AND token NOT IN "
                            "(SELECT token FROM seats WHERE code = ?)", (code, code)))
    return len(gone)


def give(store, code: str, step: str, token: str, value, correct: bool | None) -> bool:
    """A seat's answer (already checked: questions.valid), replacing its earlier one; → False when
    refused: the step was revealed or the class has ended (checked in the write)."""
    now = time.time()
    return bool(store.run(
        "INSERT INTO answers (code, step, seat, answer, correct, at) SELECT CAST(? AS TEXT), CAST(? AS TEXT), "
        "CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS DOUBLE PRECISION) "
        "WHERE NOT EXISTS (SELECT 1 FROM revealed WHERE code = ? AND step = ?) "
        "AND EXISTS (SELECT 1 FROM seats WHERE code = ? AND token = ?) "
        "AND EXISTS (SELECT 1 FROM classes WHERE code = ? AND expires >= ?) "
        "ON CONFLICT (code, step, seat) DO UPDATE SET answer = excluded.answer, correct = excluded.correct, "
        "at = excluded.at RETURNING seat",
        (code, step, token, json.dumps(value), None if correct is None else int(correct), now,
         code, step, code, token, code, now), True))


def leave(store, code: str, step: str, token: str) -> None:
    """The seat left to explore while ``step``'s answer was hidden (the model's pick can be seen on
    other pages): its answer to the step is final from now on (``left``)."""
    store.run("INSERT INTO left_steps VALUES (?, ?, ?) ON CONFLICT (code, step, seat) DO NOTHING", (code, step, token))


def left(store, code: str, step: str, token: str) -> bool:
    return bool(store.run("SELECT 1 FROM left_steps WHERE code = ? AND step = ? AND seat = ?", (code, step, token), True))


def mine(store, code: str, step: str, token: str):
    """This seat's answer to ``step`` (None: none yet)."""
    rows = store.run("SELECT answer FROM answers WHERE code = ? AND step = ? AND seat = ?", (code, step, token), True)
    return json.loads(rows[0][0]) if rows else None


def count(store, code: str, step: str) -> int:
    """How many seats answered ``step`` (one COUNT: the workshop rehearsal's check of the store)."""
    return int(store.run("SELECT COUNT(*) FROM answers WHERE code = ? AND step = ?", (code, step), True)[0][0])


def seat_numbers(store, code: str) -> dict[str, int]:
    rows = store.run("SELECT token FROM seats WHERE code = ? ORDER BY joined, token", (code,), True)
    return {token: n for n, (token,) in enumerate(rows, 1)}


def of_step(store, code: str, step: str) -> list[tuple[int, object, bool | None]]:
    """The class's answers to ``step``: (seat number, answer, right or None), by seat."""
    seats = seat_numbers(store, code)
    rows = store.run("SELECT seat, answer, correct FROM answers WHERE code = ? AND step = ?", (code, step), True)
    return sorted((seats.get(s, 0), json.loads(a), None if c is None else bool(c)) for s, a, c in rows)


def reveal(store, code: str, step: str, leader: str) -> bool:
    """The teacher shows the model's answer to ``step``: answers to it are closed from now on. Only
    the session that leads the class may (→ whether it does)."""
    store.run(f"INSERT INTO revealed (code, step) SELECT CAST(? AS TEXT), CAST(? AS TEXT) WHERE EXISTS "
              f"(SELECT 1 FROM classes WHERE {LEADS}) ON CONFLICT (code, step) DO NOTHING",
              (code, step, code, leader))
    return revealed(store, code, step)


def console_reveal(store, code: str, step: str) -> bool:
    """Reveal from the class's console (ui.classroom.console: its key was checked when it opened), for
    a class that has not ended."""
    store.run("INSERT INTO revealed (code, step) SELECT CAST(? AS TEXT), CAST(? AS TEXT) WHERE EXISTS "
              "(SELECT 1 FROM classes WHERE code = ? AND expires >= ?) ON CONFLICT (code, step) DO NOTHING",
              (code, step, code, time.time()))
    return revealed(store, code, step)


def revealed(store, code: str, step: str) -> bool:
    return bool(store.run("SELECT 1 FROM revealed WHERE code = ? AND step = ?", (code, step), True))


def asks_of(lessons: dict) -> dict[str, Ask]:
    """Every question these lessons (name → ui.tour.Tour) ask, by step name."""
    return {step_id({"lesson": lesson.name, "step": n}): s.ask for lesson in lessons.values()
            for n, s in enumerate(lesson.steps) if s.ask is not None}


def as_csv(store, code: str, asks: dict[str, Ask]) -> str:
    """Every answer of the class: seat, step (lesson and number from 1), answer (in words when the
    step's question is known here), right (yes, no, or empty for an opinion)."""
    seats = seat_numbers(store, code)
    rows = store.run("SELECT seat, step, answer, correct FROM answers WHERE code = ?", (code,), True)
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["seat", "step", "answer", "right"])
    for seat, step, answer, correct in sorted(rows, key=lambda r: (r[1], seats.get(r[0], 0))):
        lesson, n = step.rsplit("#", 1)
        value = json.loads(answer)
        w.writerow([seats.get(seat, 0), f"{lesson} {int(n) + 1}",
                    described(asks[step], value) if step in asks else answer,
                    "" if correct is None else ("yes" if correct else "no")])
    return out.getvalue()
