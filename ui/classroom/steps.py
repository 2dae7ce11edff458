"""A lesson in the sidebar: pick it (a shipped one, or the teacher's own file, checked first),
Back/Next through its steps (alone, or for a class as its teacher), and the step's text above the
page; on a step that asks which sentences the model will pick, its choice stays hidden until the
reveal (``choice_hidden``)."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui import state
from ui.tour import MAX_LESSON_BYTES, Tour, lessons, load, problems, to_json
from ui.classroom.session import JOINED, STEP, TEACHING

OWN = "class_own_lessons"  # lessons this session loaded from files: name → Tour
OWN_TEXT = "class_own_lesson_texts"  # … as the store keeps them (ui.tour.to_json: a class keeps the one it plays)
OWN_ERROR = "class_own_lesson_error"  # what was wrong with the file an uploader (its key) gave: {key: message}


def all_lessons() -> dict[str, Tour]:
    return {**lessons(), **st.session_state.get(OWN, {})}


def load_own(key: str = "lesson_upload") -> str | None:
    """An uploader's callback: a lesson file, checked, opened at its first step (→ its name); a bad
    one is one error (``own_error(key)``) and changes nothing."""
    st.session_state.setdefault(OWN_ERROR, {}).pop(key, None)
    f = st.session_state.get(key)
    if f is None:
        return None
    data = f.getvalue()
    try:
        text = data.decode("utf-8") if len(data) <= MAX_LESSON_BYTES else None
    except UnicodeDecodeError:
        text = None
    found = problems(text) if text is not None else [(0, f"it is not a text file (UTF-8, under {MAX_LESSON_BYTES // 1000} KB)")]
    if found:  # every problem, by line (up to 8), in the file's own words: nothing to run
        said = [f"{'line ' + str(line) + ': ' if line else ''}{problem}" for line, problem in found[:8]]
        more = f" … and {len(found) - 8} more" if len(found) > 8 else ""
        st.session_state[OWN_ERROR][key] = (f"{f.name} was not loaded. Change this in the file and load it again:"
                                            "\n\n- " + "\n- ".join(said) + more)
        return None
    name = "own_" + "".join(c if c.isalnum() else "_" for c in Path(f.name).stem)[:40]
    add_own(name, text)
    st.session_state[state.keep("class_lesson")] = name
    choose(name)
    return name


def own_error(key: str) -> None:
    """What was wrong with the lesson file the uploader ``key`` gave, if anything."""
    said = (st.session_state.get(OWN_ERROR) or {}).get(key)
    if said:
        from viz.common import markdown_text

        st.error(markdown_text(said))


def add_own(name: str, text: str) -> None:
    """A lesson file's text (TOML, checked first), or a tour as the store keeps it (ui.tour.load)."""
    add_tour(load(text, name))


def add_tour(tour: Tour) -> None:
    """A tour this session may play (its name: the lesson's); what a class keeps of it in the store: its JSON."""
    st.session_state.setdefault(OWN, {})[tour.name] = tour
    st.session_state.setdefault(OWN_TEXT, {})[tour.name] = to_json(tour)


def choose(name: str | None = None) -> None:
    """Picking a lesson (the picker's callback, a loaded file, a link) opens it at its first step:
    its page, its document and its view, so Start a class has a document to start on."""
    from ui.widgets import examples

    name = name or st.session_state.get("class_lesson")
    found = all_lessons()
    if name in found:
        go_to_step(found[name], 0, examples())
    else:
        st.session_state.pop(STEP, None)


def lesson_panel(examples: dict) -> None:
    """Sidebar: pick a lesson (it opens at its first step), Back/Next through its steps (alone, or
    for a class as its teacher), or load one's own lesson file."""
    from ui.roles import STUDENT, role

    if role() == STUDENT:  # no lesson tools (a lesson file holds its notes and answers); homework's Back/Next
        return  # are above the page (``step_text``), where a phone shows them
    found = all_lessons()
    none = "— no lesson —"  # an option of its own: a None value reads as no choice
    name = st.selectbox("Lesson", [none, *found], key=state.keep("class_lesson"), on_change=choose,
                        format_func=lambda n: found[n].title if n in found else n,
                        help="Opens the lesson at its first step, with its document.")
    if name in found and st.session_state.get(TEACHING) and (st.session_state.get(STEP) or {}).get("lesson") == name:
        st.caption("Back and Next are above the page, where the projector shows them.")
    elif name in found:
        lesson = found[name]
        step = st.session_state.get(STEP) or {"lesson": name, "step": -1}
        if step.get("lesson") != name:
            step = {"lesson": name, "step": -1}
        from ui.player import back_next

        back_next("lesson", step["step"], len(lesson.steps), lambda to: go_to_step(lesson, to, examples),
                  start="Open its first step")
    elif st.session_state.get(STEP) and not st.session_state.get(JOINED):
        st.session_state.pop(STEP, None)
    with st.expander("Your own lesson file"):
        st.file_uploader("Load a lesson (.toml)", type=["toml"], key="lesson_upload", on_change=load_own,
                         help="A lesson file (TOML): its format is in the project's docs/classes.md, \"Teaching a "
                              "class\". It is checked first; a file with a mistake says what to change, line by line.")
        from ui.tour import LESSONS

        example = LESSONS / "which_sentences_and_why.toml"
        st.download_button("A lesson file to start from", example.read_bytes(), file_name="my_lesson.toml",
                           mime="application/toml", key="lesson_example", on_click="ignore", icon=":material/download:",
                           help="A shipped lesson, its lines explained in comments: edit it in any text editor and "
                                "load it above.")
    own_error("lesson_upload")


def read_link(examples: dict) -> None:
    """``?lesson=NAME`` opens that lesson at its first
    step (its page, document and view); an unknown name is one sentence."""
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
    choose(name)


def go_to_step(lesson: Tour, n: int, examples: dict) -> None:
    """A lesson button's callback: the step's page, view and (if not shown yet) document, taken at
    the top of the next run (ui.arrival)."""
    from ui.arrival import KEEP, open_view

    s = lesson.steps[n]
    open_view(s.view, step_document(lesson, n, examples), complete=False, reference=s.reference_text or KEEP,
              step={"lesson": lesson.name, "step": n, "of": len(lesson.steps), "text": s.text, "question": s.question,
                    "title": lesson.title, "step_title": s.title, "ask": s.ask.to_dict() if s.ask else None,
                    "revealed": False})


def step_document(lesson: Tour, n: int, examples: dict) -> str | None:
    """The text of step ``n``'s document (its own, else the lesson's); None: an example this server
    does not have."""
    stem, text = lesson.document_of(n)
    doc = next((p for p in examples.values() if p.stem == stem), None) if stem else None
    return doc.read_text(encoding="utf-8") if doc is not None else (text or None)


def warm_lesson(code: str) -> None:
    """The lesson this class plays, every step's results computed ahead in the background, once per
    server process: the teacher's, and each process a following student is served by (behind
    scripts/serve.py's nginx a class spans processes, and each has its own caches)."""
    from ui.classroom.warm import start as warm
    from ui.widgets import examples

    lesson = all_lessons().get((st.session_state.get(STEP) or {}).get("lesson"))
    if lesson is not None and state.params() is not None:
        found = examples()
        warm(code, lesson, dict(state.params()),
             lambda: [step_document(lesson, n, found) for n in range(len(lesson.steps))])


def private_note() -> None:
    """The step's private note, for whoever steps through or teaches the lesson, folded away so a
    projected screen does not show it. Never a student's: the class publishes its step without it
    (a student who explores has no lesson panel's note either)."""
    s = st.session_state.get(STEP) or {}
    lesson = all_lessons().get(s.get("lesson"))
    if lesson is None or st.session_state.get(JOINED) or not 0 <= s.get("step", -1) < len(lesson.steps):
        return
    from ui.player import private_note as note

    note(lesson.steps[s["step"]].private)


def choice_hidden() -> bool:
    """Whether the model's choice (summary, stars, scores) is hidden now: the step asks which
    sentences it will pick, and the answer is not revealed yet."""
    s = st.session_state.get(STEP)
    return bool(s and (s.get("ask") or {}).get("kind") == "sentences" and not s.get("revealed"))


def alive(code: str) -> bool:
    """Whether the class this session leads is still on (the store down: believed so)."""
    from ui.classroom.store import version
    from ui.errors import shared
    from ui.resources import document_store

    return shared(version, document_store(), code, default=-1) is not None


def step_text(bar=None) -> None:
    """The lesson step's text above the page (teacher, students following, anyone self-paced), and
    the bar under it; ``bar(code, columns)`` draws a leading teacher's Reveal and Answers and End there."""
    from ui.player import words

    s = st.session_state.get(STEP)
    if s and s.get("text"):  # a lesson's words are text (ui.tour: viz.common.plain_text), shown as text
        st.info(words(s["step"], s["of"], s.get("step_title", ""), s["text"], s.get("question", ""), s["title"]),
                icon=":material/school:")
    from ui.roles import STUDENT, answering, role
    from ui.widgets import examples

    # one bar at the top of the page: the teacher's Back, Next, Reveal and Answers and End (the projector
    # shows them) and homework's Back/Next (a phone does)
    lesson, teaching = all_lessons().get((s or {}).get("lesson")), st.session_state.get(TEACHING)
    if teaching and (bar is None or not alive(teaching)):
        teaching = None  # (ended or expired: the sidebar says so)
    if not (teaching or lesson is not None and role() == STUDENT and not st.session_state.get(JOINED)):
        return
    from ui.player import back_next

    c = st.columns([1, 1, 2, 1.6, 1.6] if teaching else [1, 1, 4], vertical_alignment="center")
    if lesson is not None:
        back_next("lesson", s["step"], len(lesson.steps), lambda to: go_to_step(lesson, to, examples()), cols=c[:2])
    if teaching:
        bar(teaching, c[2:4])
        c[4].caption("The room's answers: in your console until you reveal them." if lesson is not None
                     else "The class follows this page.")
    elif answering():  # said before it happens (ui.roles.guard makes it so, and says so after)
        c[2].caption(":material/lock: Back or Next while this question is open makes your answer to it final: "
                     "the other steps and pages may show the model's choice.")
