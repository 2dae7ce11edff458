"""Lessons and stories as one kind of tour (issue 59, the first part): an ordered list of views
with text. A lesson file opens as a story (its steps editable, presentable, exportable), and a
story downloads as a lesson file that ``ui.classroom.check`` accepts. A step keeps its question
(``ask``) through both. No Streamlit.

A story step is {"title", "note" (the audience's text), "private" (the presenter's note), "view",
"uid", and optionally "question" (its text) and "ask" (ui.classroom.questions.Ask.to_dict())}; a
lesson step has a page, a view (ui.view), a text, a question and optionally an answer table and a
document of its own. The mapping: the step's text is the note; the step's document (its own, else
the lesson's) is the view's document (an example's file name, or the store's id of its text)."""
from __future__ import annotations

import secrets

from ui import view as V
from ui.classroom.lessons import Lesson
from ui.classroom.questions import Ask


def story_steps(lesson: Lesson, weights: str | None = None, ids: dict[str, str] | None = None) -> list[dict]:
    """A lesson's steps as a story's. A step's document (its own, else the lesson's): an example's
    file name, read as a link's, or a document_text by ``ids[text]``, the id under which the store
    keeps it."""
    out = []
    for n, s in enumerate(lesson.steps):
        note, (stem, text) = s.text, lesson.document_of(n)
        view = {"page": s.page, "doc": stem or (ids or {}).get(text), "k": lesson.k, "tb": True, "w": weights, "win": 0,
                "pickers": dict(s.view), "chart": None}
        out.append({"title": f"{lesson.title}: step {n + 1}", "note": note, "private": "", "view": view,
                    "uid": secrets.token_hex(6), **({"question": s.question} if s.question else {}),
                    **({"ask": s.ask.to_dict()} if s.ask else {})})
    return out


def _quoted(text: str) -> str:
    """A TOML basic string (escapes: backslash, quote, newline, control characters)."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return '"' + "".join(c if ord(c) >= 0x20 else f"\\u{ord(c):04x}" for c in out) + '"'


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return _quoted(v)
    return "[" + ", ".join(_value(x) for x in v) + "]"


def answer_table(ask: dict) -> dict:
    """An ``Ask.to_dict()`` as a lesson's [steps.answer] table (numbers from 1)."""
    a = Ask.from_dict(ask)
    if a.kind == "choice":
        return {"kind": "choice", "options": list(a.options), **({"right": [r + 1 for r in a.right]} if a.right else {})}
    if a.kind == "sentences":
        return {"kind": "sentences", **({"pick": a.pick} if a.pick else {})}
    if a.kind == "head":
        return {"kind": "head", "model": a.model, **({"right": [[l + 1, h + 1] for l, h in a.right]} if a.right else {})}
    return {"kind": "number", **({"answer": a.answer, "tolerance": a.tolerance} if a.answer is not None else {}),
            "unit": a.unit, "range": [a.low, a.high]}


def lesson_toml(title: str, steps: list[dict], documents: dict) -> str:
    """Story steps as a lesson file, or ValueError with one sentence. ``documents``: each step's
    view "doc" → {"document": a shipped example's file stem} or {"document_text": the document
    itself}. The first step's document is the lesson's; a step on another one names its own. A
    lesson has one summary length k."""
    ks = {s["view"].get("k", 3) for s in steps}
    if len(ks) != 1:
        raise ValueError("A lesson file has one summary length k: every step must use the same k.")
    gone = [n + 1 for n, s in enumerate(steps) if not documents.get(s["view"].get("doc"))]
    if gone:
        raise ValueError(f"The document of step {gone[0]} is no longer on this server: it cannot go in a lesson file.")
    first = documents[steps[0]["view"].get("doc")]
    lines = [f"title = {_quoted(title or 'A lesson')}", *(f"{k} = {_quoted(v)}" for k, v in first.items()),
             f"k = {ks.pop()}"]
    for s in steps:
        text, question, own = s["note"], s.get("question") or "", documents[s["view"].get("doc")]
        lines += ["", "[[steps]]", f"page = {_quoted(s['view'].get('page', ''))}",
                  f"text = {_quoted(text.strip() or s['title'] or '…')}"]
        if own != first:  # a step on a document of its own
            lines += [f"{k} = {_quoted(v)}" for k, v in own.items()]
        if question or s.get("ask"):
            lines.append(f"question = {_quoted(question.strip() or s['title'] or 'What do you see?')}")
        if s.get("ask"):
            lines.append("[steps.answer]")
            lines += [f"{k} = {_value(v)}" for k, v in answer_table(s["ask"]).items()]
        pickers = V.to_toml(V.from_store(s["view"])[0]["pickers"])
        if pickers:
            lines.append("[steps.view]")
            lines += [f"{k} = {_value(v)}" for k, v in pickers.items()]
    return "\n".join(lines) + "\n"


def answer_space(ask: dict) -> list[str]:
    """A question's space to answer on a handout, in lines (numbers from 1, as on screen)."""
    a = Ask.from_dict(ask)
    if a.kind == "choice":
        return [f"☐ {o}" for o in a.options]
    if a.kind == "sentences":
        return [f"Sentences ({a.pick or 'the summary'}): ______   ______   ______"]
    if a.kind == "head":
        return [f"{'BERT' if a.model == 'bert' else 'Sentence encoder'} layer ______   head ______"]
    return [f"Your answer: ______ {a.unit}".rstrip() + f"   (between {a.low:g} and {a.high:g})"]


def answer_words(ask: dict, picked: tuple[int, ...]) -> str:
    """The answer a handout's last page gives for a question ("" never: an opinion says so)."""
    from ui.classroom.questions import model_answer

    a = Ask.from_dict(ask)
    said = model_answer(a, list(picked) if a.kind == "sentences" and picked else None)
    return said or ("an opinion: no right answer" if a.opinion else "the model's answer, on the step's page")
