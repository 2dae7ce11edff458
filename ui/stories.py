"""Stories (issue 50): saved views with a title and a note, in the shared store, with their own
link (``?story=ID``), so a story prepared on one machine is presented on another and survives
restarts. No Streamlit.

A step is {"title", "note", "view", "uid"} (uid: a name for its widgets); the view is ui.view's,
what a class publishes and a link carries (page, document id, k, trigram blocking, weights, BERT
window, every control of the page, and which of its charts the slide shows). A story belongs to whoever made
it (an owner token kept in their session; the store holds its hash): their changes update it,
anyone else's make a copy with a new link, so a link sent to stakeholders shows what was sent."""
from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import time

MAX_STEPS = 50
MAX_TITLE = 120
MAX_NOTE = 4000
ID = re.compile(r"[A-Za-z0-9_-]{16}")  # a story id as ``save`` makes them


class BadStory(ValueError):
    """A story that cannot be saved or opened as asked (the message: one sentence)."""


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def checked(steps: list[dict]) -> list[dict]:
    """The steps as stored: at most MAX_STEPS, titles and notes plain text cut to their limits."""
    if not isinstance(steps, list) or len(steps) > MAX_STEPS:
        raise BadStory(f"A story has at most {MAX_STEPS} steps.")
    out = []
    for s in steps:
        if not isinstance(s, dict) or not isinstance(s.get("view"), dict):
            raise BadStory("A story step is a view with a title and a note.")
        out.append({"title": str(s.get("title") or "")[:MAX_TITLE], "note": str(s.get("note") or "")[:MAX_NOTE],
                    "view": s["view"], "uid": str(s.get("uid") or secrets.token_hex(6))[:32]})
    return out


def save(store, steps: list[dict], story: str | None = None, owner: str | None = None) -> tuple[str, str]:
    """Write a story; → (its id, its owner token). With the ``story`` id and its ``owner`` token:
    that story is updated; otherwise a new one (a copy) is made with a new id and token."""
    text, now = json.dumps(checked(steps)), time.time()
    if story and owner and store.run("UPDATE stories SET steps = ?, updated = ? WHERE id = ? AND owner = ? "
                                     "RETURNING id", (text, now, story, _hash(owner)), True):
        return story, owner
    story, owner = secrets.token_urlsafe(12), secrets.token_urlsafe(18)
    store.run("INSERT INTO stories VALUES (?, ?, ?, ?)", (story, text, _hash(owner), now))
    return story, owner


def load(store, story: str) -> list[dict]:
    """A story's steps, or BadStory (its id is malformed or unknown)."""
    if not ID.fullmatch(story or ""):
        raise BadStory("That story link is not one this app makes (its id is 16 letters, digits, - or _).")
    rows = store.run("SELECT steps FROM stories WHERE id = ?", (story,), True)
    if not rows:
        raise BadStory("There is no story with that link on this server.")
    return json.loads(rows[0][0])


def owns(store, story: str, owner: str | None) -> bool:
    rows = store.run("SELECT owner FROM stories WHERE id = ?", (story,), True)
    return bool(rows and owner) and hmac.compare_digest(rows[0][0], _hash(owner))


def moved(steps: list[dict], i: int, by: int) -> list[dict]:
    """The steps with step ``i`` moved ``by`` places (clamped to the ends)."""
    j = max(0, min(len(steps) - 1, i + by))
    out = list(steps)
    out.insert(j, out.pop(i))
    return out
