"""Lessons: TOML files in lessons/ (title, document, k, [[steps]] with a page, a view, a text and
a question), stepped alone or for a class (ui.classroom.steps). No Streamlit."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

LESSONS = Path(__file__).resolve().parents[2] / "lessons"


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
