"""How a view's control is written outside the app (ui.view): each kind turns a session value
(numbers from 0, tuples) into what a link, a lesson file or the store holds (numbers from 1,
lists, text) and back, checking what it reads. No Streamlit."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from model.heads import Head

PARTS = ("bert", "inter")


class Bad(ValueError):
    """A value a view cannot take; the message completes "<name>=<value> ..." in one sentence."""


# ---------------------------------------------------------------- kinds: inside (session) ↔ outside (1-based)
class Kind:
    """How a control's session value is written outside the app: ``out`` (inside → a TOML/JSON value,
    numbers from 1), ``inn`` (back, checked), and their URL text."""

    def out(self, v):
        return v

    def inn(self, x):
        return x

    def url(self, v) -> str:
        x = self.out(v)
        return x if isinstance(x, str) else json.dumps(x, ensure_ascii=False, separators=(",", ":"))

    def from_url(self, s: str):
        try:
            x = json.loads(s)
        except ValueError:
            x = s
        return self.inn(x)

    def stored(self, v):
        """A value as the store's JSON gives it back (inside form: lists where tuples were)."""
        return v


@dataclass(frozen=True)
class Choice(Kind):
    options: tuple

    def inn(self, x):
        if x not in self.options:
            raise Bad(f"is not one of {', '.join(map(str, self.options))}")
        return x

    def url(self, v) -> str:
        return str(v)

    def from_url(self, s: str):
        return self.inn(s)

    stored = inn


@dataclass(frozen=True)
class Index(Kind):
    """A layer, head, sentence or token: 0-based inside, 1-based outside; ``none`` (inside) is
    written ``word`` (the mean of heads, nothing asked for)."""
    none: Any = "absent"
    word: str = ""

    def out(self, v):
        return self.word if self.word and v == self.none else v + 1

    def inn(self, x):
        if self.word and x == self.word:
            return self.none
        if isinstance(x, bool) or not isinstance(x, int) or x < 1:
            raise Bad("is not a number from 1" + (f" or '{self.word}'" if self.word else ""))
        return x - 1

    def from_url(self, s: str):
        return self.inn(int(s) if s.isdigit() and len(s) < 7 else s)

    def stored(self, v):
        if self.word and v == self.none:
            return v
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise Bad("is not a number from 0")
        return v


class Flag(Kind):
    def url(self, v) -> str:
        return "1" if v else "0"

    def inn(self, x):
        if x in (True, False, 0, 1):
            return bool(x)
        raise Bad("is not 0 or 1")

    def from_url(self, s: str):
        return self.inn({"1": True, "0": False}.get(s, s))

    stored = inn


class Span(Kind):
    """A range of sentences (first, last) as the slider shows them, numbered from 1 inside too;
    "3-7" in a URL, [3, 7] in a lesson."""

    def out(self, v):
        return [v[0], v[1]]

    def url(self, v) -> str:
        return f"{v[0]}-{v[1]}"

    def inn(self, x):
        if (isinstance(x, (list, tuple)) and len(x) == 2
                and all(isinstance(i, int) and not isinstance(i, bool) for i in x) and 1 <= x[0] <= x[1]):
            return (x[0], x[1])
        raise Bad("is not a range of sentences from 1, such as 3-7")

    def from_url(self, s: str):
        m = re.fullmatch(r"(\d{1,6})-(\d{1,6})", s)
        return self.inn([int(m[1]), int(m[2])] if m else s)

    stored = inn


class Heads(Kind):
    """Heads as (part, layer, head), 0-based inside; "bert:5.3" outside (1-based, ``model.heads.Head``;
    "bert:5:3", the form before, is read too). ``one``: a single head, else a list of them."""

    def __init__(self, one: bool = False):
        self.one = one

    @staticmethod
    def _out(h) -> str:
        return Head(*h).spec

    @staticmethod
    def _inn(x) -> tuple:
        try:
            return Head.parse(x)
        except ValueError:
            raise Bad("is not a head such as bert:5.3 (encoder, layer and head; numbers from 1)") from None

    def out(self, v):
        return self._out(v) if self.one else [self._out(h) for h in v]

    def url(self, v) -> str:
        return self._out(v) if self.one else ",".join(self._out(h) for h in v)

    def inn(self, x):
        if self.one:
            return self._inn(x)
        if not isinstance(x, list) or len(x) > 200:
            raise Bad("is not a list of heads such as bert:5.3")
        return [self._inn(h) for h in x]

    def from_url(self, s: str):
        return self.inn(s if self.one else [h for h in s.split(",") if h])

    def stored(self, v):
        def head(h):
            if not (isinstance(h, (list, tuple)) and len(h) == 3 and h[0] in PARTS
                    and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in h[1:])):
                raise Bad("is not a head (encoder, layer, head)")
            return tuple(h)
        if self.one:
            return head(v)
        if not isinstance(v, (list, tuple)):
            raise Bad("is not a list of heads")
        return [head(h) for h in v]


@dataclass(frozen=True)
class Number(Kind):
    """A number in [low, high] (a threshold): as is inside and outside."""
    low: float
    high: float

    def inn(self, x):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not self.low <= x <= self.high:
            raise Bad(f"is not a number from {self.low:g} to {self.high:g}")
        return float(x)

    def url(self, v) -> str:
        return f"{v:g}"

    def from_url(self, s: str):
        try:
            return self.inn(float(s))
        except ValueError:
            raise Bad(f"is not a number from {self.low:g} to {self.high:g}") from None

    stored = inn


class Texts(Kind):
    """A list of short texts (edits such as "move:1:end", example names); JSON in a URL."""

    def inn(self, x):
        if not isinstance(x, list) or len(x) > 100 or not all(isinstance(t, str) and len(t) <= 2000 for t in x):
            raise Bad("is not a list of texts")
        return list(x)

    stored = inn


class Partly(Bad):
    """Part of a value could be read (``value``), the rest not (the message)."""

    def __init__(self, value, message: str):
        super().__init__(message)
        self.value = value


class Edits(Texts):
    """What if's edits ("move:1:end", numbers from 1 as shown): each checked; those that do not
    parse are left out and named (``Partly``)."""

    def inn(self, x):
        from analysis.edits import parse_edit

        edits, bad = [], []
        for e in super().inn(x):
            try:
                edits.append(str(parse_edit(e)))
            except ValueError as err:
                bad.append(f"{e[:40]!r} ({err})")
        if bad:
            raise Partly(edits, f"has edits that are not ones the page makes, left out: {'; '.join(bad)[:300]}")
        return edits

    stored = inn


class Text(Kind):
    """A short text (a model's or a corpus run's name)."""

    def inn(self, x):
        if not isinstance(x, str) or len(x) > 300:
            raise Bad("is not a name")
        return x

    def url(self, v) -> str:
        return v

    def from_url(self, s: str):
        return self.inn(s)

    stored = inn


class Document(Text):
    """A second document's text (What if's pasted B): the text inside, in the store and in a lesson
    file; in a URL its id (kept in the document store as the main document is)."""

    def inn(self, x):
        if not isinstance(x, str):
            raise Bad("is not a text")
        return x

    stored = inn


@dataclass(frozen=True)
class Whole(Kind):
    """A whole number in [low, high] (a summary length): as is inside and outside. ``noun``: what
    the problem calls it ("a summary length")."""
    low: int
    high: int
    noun: str = "a whole number"

    def inn(self, x):
        if isinstance(x, bool) or not isinstance(x, int) or not self.low <= x <= self.high:
            raise Bad(f"is not {self.noun} from {self.low} to {self.high}")
        return x

    def url(self, v) -> str:
        return str(v)

    def from_url(self, s: str):
        return self.inn(int(s) if s.isdigit() and len(s) < 7 else s)

    stored = inn


class DocName(Text):
    """A document as a view names it: an example's file stem, or "id:" + hex digits (ui.link.doc_id)."""

    def inn(self, x):
        if not isinstance(x, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{1,100}|id:[0-9a-f]{8,64}", x):
            raise Bad("is not a document's name")
        return x

    stored = inn
