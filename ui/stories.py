"""Stories (issue 50): saved views with a title and a note, in the shared store, with their own
link (``?story=ID``), so a story prepared on one machine is presented on another and survives
restarts. No Streamlit.

A story is a tour (ui.tour.Tour: a title and steps, each a ui.view.View with its text, title,
private note and question) with an id and an owner. Its views name their documents by the store's
id of the text (ui.link.doc_id) or an example's name. A story belongs to whoever made it (an owner
token kept in their session; the store holds its hash): their changes update it, anyone else's make
a copy with a new link, so a link sent to stakeholders shows what was sent.

The store keeps a story as JSON: {"title", "steps": [{"title", "note" (the step's text), "private",
"view" (View.to_store), "uid" (its Step.key), and optionally "question" and "ask"}]} (``rows``,
``from_rows``: a story saved before titles is a bare list of steps)."""
from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import time
from dataclasses import dataclass, replace

from ui.tour import MAX_NOTE, MAX_TITLE, Step, Tour, story_tour
from viz.text import CONTROL

MAX_STEPS = 50
ID = re.compile(r"[A-Za-z0-9_-]{16}")  # a story id as ``save`` makes them


class BadStory(ValueError):
    """A story that cannot be saved or opened as asked (the message: one sentence)."""


@dataclass(frozen=True)
class Story:
    """A tour with an id and an owner token (both None until it is first saved; the owner only in
    its maker's session)."""
    tour: Tour
    id: str | None = None
    owner: str | None = None

    @property
    def steps(self) -> tuple[Step, ...]:
        return self.tour.steps

    @property
    def title(self) -> str:
        return self.tour.title

    def with_steps(self, steps) -> "Story":
        return replace(self, tour=story_tour(self.title, steps))

    def with_step(self, i: int, **changes) -> "Story":
        """Step ``i`` changed (``dataclasses.replace``'s keywords)."""
        steps = list(self.steps)
        steps[i] = replace(steps[i], **changes)
        return self.with_steps(steps)

    def with_title(self, title: str) -> "Story":
        return replace(self, tour=story_tour(title, self.steps))


def rows(tour: Tour) -> list[dict]:
    """A story's steps as the store keeps them (``checked`` checks them; ``from_rows`` reads them)."""
    return [{"title": s.title, "note": s.text, "private": s.private, "view": s.view.to_store(),
             "uid": s.key or secrets.token_hex(6), **({"question": s.question} if s.question else {}),
             **({"ask": s.ask.to_dict()} if s.ask else {})} for s in tour.steps]


def from_rows(title: str, steps: list[dict]) -> Tour:
    """A story's tour from its stored steps, every field checked again (``checked``, ui.view)."""
    from ui.questions import Ask
    from ui.view import View

    return story_tour(text(title)[:MAX_TITLE], [
        Step(View.from_store(s["view"])[0], s["note"], s.get("question", ""),
             Ask.from_dict(s["ask"]) if s.get("ask") else None, title=s["title"], private=s["private"], key=s["uid"])
        for s in checked(steps)])


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
        out.append({"title": text(s.get("title"))[:MAX_TITLE], "note": text(s.get("note"))[:MAX_NOTE],
                    "private": text(s.get("private"))[:MAX_NOTE],
                    **({"question": text(s["question"])[:MAX_NOTE]} if s.get("question") else {}),
                    "view": s["view"], "uid": str(s.get("uid") or secrets.token_hex(6))[:32],
                    **({"ask": ask} if (ask := question(s.get("ask"))) else {})})
    return out


def text(value) -> str:
    """A title, note or question as stored: a string, its control and bidi characters blanked (as a
    document's: U+202E would reverse what the audience reads)."""
    return CONTROL.sub(" ", str(value or ""))


def question(ask) -> dict | None:
    """A step's question (ui.questions.Ask as a dict) kept only if it is one."""
    if not isinstance(ask, dict) or len(json.dumps(ask)) > 4000:
        return None
    from ui.questions import KINDS, Ask

    try:
        return Ask.from_dict(ask).to_dict() if ask.get("kind") in KINDS else None
    except (TypeError, ValueError):
        return None


def save(store, story: Story) -> Story:
    """Write a story; → it with its id and owner token. With its id and that story's owner token, the
    story is updated; otherwise a new one (a copy) is made with a new id and token."""
    data, now = json.dumps({"title": text(story.title)[:MAX_TITLE], "steps": checked(rows(story.tour))}), time.time()
    if story.id and story.owner and store.run("UPDATE stories SET steps = ?, updated = ? WHERE id = ? AND owner = ? "
                                              "RETURNING id", (data, now, story.id, _hash(story.owner)), True):
        return story
    made, owner = secrets.token_urlsafe(12), secrets.token_urlsafe(18)
    store.run("INSERT INTO stories VALUES (?, ?, ?, ?)", (made, data, _hash(owner), now))
    return replace(story, id=made, owner=owner)


def load(store, story: str, key: str = "") -> Story:
    """A story (its owner unknown: None), or BadStory (its id is malformed or unknown). A story saved
    before titles: its first step's title. Its private notes only with its ``key`` (``notes_key``):
    the audience's link leaves them out."""
    if not ID.fullmatch(story or ""):
        raise BadStory("That story link is not one this app makes (its id is 16 letters, digits, - or _).")
    found = store.run("SELECT steps FROM stories WHERE id = ?", (story,), True)
    if not found:
        raise BadStory("There is no story with that link on this server.")
    saved = json.loads(found[0][0])
    title, steps = ((saved[0]["title"] if saved else ""), saved) if isinstance(saved, list) else \
        (saved.get("title", ""), saved.get("steps", []))
    if not (key and hmac.compare_digest(str(key).encode(), notes_key(store, story).encode())):
        steps = [{**s, "private": ""} for s in steps]
    return Story(from_rows(title, steps), story)


def notes_key(store, story: str) -> str:
    """The key that opens ``story`` with its private notes (a keyed hash of its id under this
    server's secret): in its maker's links (``&key=``) only, never in the audience's."""
    return hmac.new(store.secret("story_notes").encode(), story.encode(), hashlib.sha256).hexdigest()[:24]


def show_step(store, story: str, n: int) -> None:
    """The step a presentation of ``story`` shows now, for its presenter view (another window)."""
    store.run("INSERT INTO presenting VALUES (?, ?, ?, ?) ON CONFLICT (story) DO UPDATE SET step = excluded.step, "
              "moved = excluded.moved", (story, n, time.time(), time.time()))


def shown_step(store, story: str) -> tuple[int, float, float] | None:
    """(the step shown, since when the presentation started, when it last moved), or None if it is
    not presented."""
    rows = store.run("SELECT step, started, moved FROM presenting WHERE story = ?", (story,), True)
    return (int(rows[0][0]), float(rows[0][1]), float(rows[0][2])) if rows else None


def start_presenting(store, story: str, n: int = 0) -> None:
    store.run("INSERT INTO presenting VALUES (?, ?, ?, ?) ON CONFLICT (story) DO UPDATE SET step = excluded.step, "
              "started = excluded.started, moved = excluded.moved", (story, n, time.time(), time.time()))


def stop_presenting(store, story: str) -> None:
    """The presentation of ``story`` ended (Esc): its presenter view says so, and its clock stops."""
    store.run("DELETE FROM presenting WHERE story = ?", (story,))


def owns(store, story: str, owner: str | None) -> bool:
    rows = store.run("SELECT owner FROM stories WHERE id = ?", (story,), True)
    return bool(rows and owner) and hmac.compare_digest(rows[0][0], _hash(owner))


def moved(steps, i: int, by: int) -> list:
    """The steps with step ``i`` moved ``by`` places (clamped to the ends)."""
    j = max(0, min(len(steps) - 1, i + by))
    out = list(steps)
    out.insert(j, out.pop(i))
    return out
