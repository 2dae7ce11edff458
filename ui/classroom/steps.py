"""A lesson in the sidebar: pick it (a shipped one, or the teacher's own file, checked first),
Back/Next through its steps (alone, or for a class as its teacher), and the step's text above the
page; on a step that asks which sentences the model will pick, its choice stays hidden until the
reveal (``choice_hidden``)."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui import state
from ui.classroom.lessons import MAX_LESSON_BYTES, Lesson, lessons, parse, problems
from ui.classroom.session import FOLLOWING, JOINED, PENDING, STEP

OWN = "class_own_lessons"  # lessons this session loaded from files: name → Lesson
OWN_ERROR = "class_own_lesson_error"


def all_lessons() -> dict[str, Lesson]:
    return {**lessons(), **st.session_state.get(OWN, {})}


def load_own() -> None:
    """The uploader's callback: a lesson file, checked; a bad one is one error and changes nothing."""
    st.session_state.pop(OWN_ERROR, None)
    f = st.session_state.get("lesson_upload")
    if f is None:
        return
    data = f.getvalue()
    try:
        text = data.decode("utf-8") if len(data) <= MAX_LESSON_BYTES else None
    except UnicodeDecodeError:
        text = None
    found = problems(text) if text is not None else [(0, f"it is not a text file (UTF-8, under {MAX_LESSON_BYTES // 1000} KB)")]
    if found:
        line, problem = found[0]
        more = f" ({len(found) - 1} more: check it with python -m ui.classroom.check)" if len(found) > 1 else ""
        st.session_state[OWN_ERROR] = f"{f.name} was not loaded: {'line ' + str(line) + ': ' if line else ''}{problem}{more}."
        return
    name = "own_" + "".join(c if c.isalnum() else "_" for c in Path(f.name).stem)[:40]
    st.session_state.setdefault(OWN, {})[name] = parse(text, name)
    st.session_state[state.keep("class_lesson")] = name


def lesson_panel(examples: dict) -> None:
    """Sidebar: pick a lesson, Back/Next through its steps (alone, or for a class as its teacher)."""
    if st.session_state.get(JOINED) and st.session_state.get(FOLLOWING):
        return  # a student following: the teacher turns the pages
    found = all_lessons()
    none = "— no lesson —"  # an option of its own: a None value reads as no choice
    name = st.selectbox("Lesson", [none, *found], key=state.keep("class_lesson"),
                        format_func=lambda n: found[n].title if n in found else n)
    st.file_uploader("…or your own lesson (.toml)", type=["toml"], key="lesson_upload", on_change=load_own,
                     help="The format: docs/classes.md. It is checked first; a file with a mistake says where.")
    if st.session_state.get(OWN_ERROR):
        from viz.common import markdown_text

        st.error(markdown_text(st.session_state[OWN_ERROR]))
    if name not in found:
        st.session_state.pop(STEP, None)
        return
    lesson = found[name]
    step = st.session_state.get(STEP) or {"lesson": name, "step": -1}
    if step.get("lesson") != name:
        step = {"lesson": name, "step": -1}
    c = st.columns(2)
    c[0].button("Back", key="lesson_back", disabled=step["step"] <= 0, width="stretch",
                on_click=go_to_step, args=(lesson, step["step"] - 1, examples))
    c[1].button("Next" if step["step"] >= 0 else "Start", key="lesson_next", type="primary", width="stretch",
                disabled=step["step"] >= len(lesson.steps) - 1, on_click=go_to_step,
                args=(lesson, step["step"] + 1, examples))


def read_link(examples: dict) -> None:
    """Once per session, before the view is taken: ``?lesson=NAME`` opens that lesson at its first
    step (its page, document and view); an unknown name is one sentence."""
    if st.session_state.get("lesson_url_read"):
        return
    st.session_state["lesson_url_read"] = True
    name = st.query_params.get("lesson")
    if not name:
        return
    found = all_lessons()
    if name not in found:
        from viz.common import markdown_text

        state.set_link_problems([f"lesson {markdown_text(name[:60])} is not a lesson of this server "
                                 f"({', '.join(found) or 'none'})"])
        return
    st.session_state[state.keep("class_lesson")] = name
    go_to_step(found[name], 0, examples)


def go_to_step(lesson: Lesson, n: int, examples: dict) -> None:
    """A lesson button's callback: the step's page, view and (if not shown yet) document, taken at
    the top of the next run (``apply_pending``)."""
    s = lesson.steps[n]
    doc = next((p for p in examples.values() if p.stem == lesson.document), None)
    text = doc.read_text(encoding="utf-8") if doc is not None else None
    st.session_state[PENDING] = {
        "page": s.page, "pickers": s.view, "text": text, "k": lesson.k, "tb": True, "w": None,
        "lesson": {"lesson": lesson.name, "step": n, "of": len(lesson.steps), "text": s.text,
                   "question": s.question, "title": lesson.title, "ask": s.ask.to_dict() if s.ask else None,
                   "revealed": False}}


def choice_hidden() -> bool:
    """Whether the model's choice (summary, stars, scores) is hidden now: the step asks which
    sentences it will pick, and the answer is not revealed yet."""
    s = st.session_state.get(STEP)
    return bool(s and (s.get("ask") or {}).get("kind") == "sentences" and not s.get("revealed"))


def step_text() -> None:
    """The lesson step's text above the page (teacher, students following, anyone self-paced)."""
    s = st.session_state.get(STEP)
    if s and s.get("text"):
        st.info(f"**{s['title']} · step {s['step'] + 1} of {s['of']}.** {s['text']}"
                + (f"\n\n**Question:** {s['question']}" if s.get("question") else ""), icon=":material/school:")
