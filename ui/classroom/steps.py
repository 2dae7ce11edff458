"""A lesson in the sidebar: pick it, Back/Next through its steps (alone, or for a class as its
teacher), and the step's text above the page."""
from __future__ import annotations

import streamlit as st

from ui import state
from ui.classroom.lessons import Lesson, lessons
from ui.classroom.session import FOLLOWING, JOINED, PENDING, STEP


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
