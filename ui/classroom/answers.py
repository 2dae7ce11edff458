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
import os
import re
import secrets
import time

from ui.questions import Ask, described
from ui.classroom.store import LEADS

TOKEN = re.compile(r"[0-9a-f]{32}")  # a seat token as new_seat makes them: 16 hex of chance, 16 of its keyed hash


def seats_per_client() -> int:
    return int(os.environ.get("MICROSCOPE_SEATS_PER_ADDRESS", 60))


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


def sit(store, code: str, token: str, client: str = "") -> bool:
    """A student's browser takes its seat in ``code`` (again after a reload: the same seat); a new
    seat from a client that already has ``seats_per_client()`` of this class's is refused (→ False)."""
    if store.run("SELECT 1 FROM seats WHERE code = ? AND token = ?", (code, token), True):
        return True
    n = store.run("SELECT COUNT(*) FROM seat_clients WHERE code = ? AND client = ?", (code, client), True)[0][0]
    if n >= seats_per_client():
        store.run("INSERT INTO seat_refused VALUES (?, 1) ON CONFLICT (code) DO UPDATE SET n = seat_refused.n + 1",
                  (code,))
        return False
    store.run("INSERT INTO seats VALUES (?, ?, ?) ON CONFLICT (code, token) DO NOTHING", (code, token, time.time()),
              False, ("INSERT INTO seat_clients VALUES (?, ?, ?) ON CONFLICT (code, token) DO NOTHING",
                      (code, token, client)))
    return True


def seat_origins(store, code: str) -> tuple[int, int, int]:
    """(seats, the most from one client address, new seats refused by the cap) of ``code``."""
    rows = store.run("SELECT COUNT(*) FROM seat_clients WHERE code = ? GROUP BY client", (code,), True)
    refused = store.run("SELECT n FROM seat_refused WHERE code = ?", (code,), True)
    return sum(r[0] for r in rows), max((r[0] for r in rows), default=0), refused[0][0] if refused else 0


def give(store, code: str, step: str, token: str, value, correct: bool | None) -> bool:
    """A seat's answer (already checked: questions.valid), replacing its earlier one; → False when
    refused: the step was revealed or the class has ended (checked in the write)."""
    now = time.time()
    return bool(store.run(
        "INSERT INTO answers (code, step, seat, answer, correct, at) SELECT CAST(? AS TEXT), CAST(? AS TEXT), "
        "CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS DOUBLE PRECISION) "
        "WHERE NOT EXISTS (SELECT 1 FROM revealed WHERE code = ? AND step = ?) "
        "AND EXISTS (SELECT 1 FROM classes WHERE code = ? AND expires >= ?) "
        "ON CONFLICT (code, step, seat) DO UPDATE SET answer = excluded.answer, correct = excluded.correct, "
        "at = excluded.at RETURNING seat",
        (code, step, token, json.dumps(value), None if correct is None else int(correct), now,
         code, step, code, now), True))


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
