"""Roles (issue 70): each session's role is decided in one place (ui.roles) from what it holds, and
a student gets a student's screen: while a question is open no door shows the model's choice, and
nothing private (the teacher's notes, right answers, the lesson file) reaches a student's browser."""
from __future__ import annotations

import re

import pytest

from helpers import button, opened, shared_store
from ui import classroom as C
from ui.classroom import answers as A

STARS = ("★", "☆")


def everything(at) -> str:
    """Every element this session's browser was sent on its last run (their protos, as text)."""
    out = []

    def walk(node):
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)
    walk(at._tree)
    return "\n".join(out)


def a_class_on_an_open_question(monkeypatch, private: str = ""):
    """A teacher on the first step of "Which sentences, and why" (which sentences will the model
    pick?, not revealed), with ``private`` as the step's private note, and one student following."""
    from helpers import new_app
    from ui.classroom.steps import OWN, OWN_TEXT
    from ui.tour import lessons, to_json

    monkeypatch.delenv("MICROSCOPE_TEACHER_TOKEN", raising=False)
    teacher = new_app()
    lesson = lessons()["which_sentences_and_why"]
    if private:  # the teacher's own copy of the lesson, with a private note on its first step
        import dataclasses

        lesson = dataclasses.replace(lesson, name="own_mine", steps=(dataclasses.replace(lesson.steps[0], private=private),
                                                                     *lesson.steps[1:]))
        teacher.session_state[OWN] = {"own_mine": lesson}
        teacher.session_state[OWN_TEXT] = {"own_mine": to_json(lesson)}
        teacher.run()
    teacher.selectbox(key="class_lesson").set_value(lesson.name).run()
    teacher.run()
    button(teacher, "class_start").click().run()
    code = teacher.session_state[C.TEACHING]
    student = opened({"class": code})
    student.run()
    return teacher, student, code


@pytest.mark.parametrize("holds, role", [
    ({}, "explorer"), ({"story": "s"}, "audience"), ({"story": "s", "story_notes_key": "k"}, "presenter"),
    ({"story": None, "story_notes_key": "k"}, "explorer"),
    ({"class_teaching": "ABCDEF"}, "teacher"), ({"_teacher_link": True}, "teacher"),
    ({"homework_results": "ABCDEF"}, "teacher"), ({"_class_console": "ABCDEF"}, "teacher"), ({"class_joined": "ABCDEF"}, "student"),
    ({"homework_seat": "t"}, "student"), ({"class_joined": "ABCDEF", "_teacher_link": True, "story": "s"}, "student")])
def test_the_role_is_decided_in_one_place_from_what_the_session_holds(holds, role, monkeypatch):
    """A student is a student whatever else the session holds; then teacher, presenter, audience."""
    from types import SimpleNamespace

    from ui import present, roles
    from ui.classroom import homework
    from ui.stories import Story
    from ui.tour import story_tour

    assert (homework.SEAT, homework.RESULTS) == ("homework_seat", "homework_results")  # (the keys named above)
    assert (present.STORY, present.NOTES_KEY) == ("story", "story_notes_key")
    from ui.classroom import console

    assert console.CONSOLE == "_class_console"
    if holds.get("story"):  # a story saved under that id
        holds = {**holds, "story": Story(story_tour("A story", ()), holds["story"])}
    monkeypatch.setattr(roles, "st", SimpleNamespace(session_state=dict(holds)))
    assert roles.role() == role


def test_a_student_on_an_open_question_is_led_back_and_sees_nothing_of_the_models_choice(summarizer, monkeypatch):
    """One walk over every page and panel as a student on an open question: each page leads back to
    the question's; no star, score or "selected", no private note and no right answer is sent."""
    from ui.view import PAGES

    note = "PRIVATENOTE the answer is 4 6 and 27"
    teacher, student, code = a_class_on_an_open_question(monkeypatch, private=note)
    assert not student.exception and student.title[0].value == "Summary"
    assert note in everything(teacher)  # the teacher's own screen has it (folded under Class & lessons)
    for page in PAGES:
        student.switch_page(f"pages/{page or 'summary'}.py").run()
        sent = everything(student)
        assert not student.exception and student.title[0].value == "Summary", (page, student.title[0].value)
        said = re.search(r"(?i)(?<![-\w])selected\b", sent)  # (not CSS's data-selected)
        assert not any(s in sent for s in STARS) and not said, (page, said and sent[said.start() - 300:said.end()])
        leak = sent.find("PRIVATENOTE") if "PRIVATENOTE" in sent else sent.find("right = [")  # (a lesson file's)
        assert leak < 0, (page, sent[max(0, leak - 600):leak + 100])
        assert not any(b.key in ("story_add", "story_lesson_open", "lesson_example", "class_start",
                                 "homework_assign") for b in student.button), page
        downloads = [(d.key, d.proto.label) for d in student.get("download_button")]
        assert not downloads, (page, downloads)  # no lesson file, no scores, no answers to download
    assert any("other pages show the model's choice" in i.value for i in student.info)
    assert not A.left(shared_store(), code, A.step_id(student.session_state[C.STEP]),
                      student.session_state[C.SESSION])  # led back, not made final: still answering
    student.switch_page("pages/summary.py").run()  # (AppTest starts each run where the test last switched it)
    assert not any("Out of date" in w.value for w in student.warning)  # the way back kept the student's document
    student.pills[0].set_value([0, 1, 2]).run()
    assert not student.exception, [(p.key, p.label) for p in student.pills] + [c.value for c in student.caption]
    assert A.mine(shared_store(), code, A.step_id(student.session_state[C.STEP]),
                  student.session_state[C.SESSION]) == [0, 1, 2]


def test_a_student_follows_the_teacher_to_another_page_on_an_open_question(summarizer, monkeypatch):
    """The teacher may show another page while the question is open: following students go there."""
    teacher, student, code = a_class_on_an_open_question(monkeypatch)
    teacher.switch_page("pages/sentence_encoder.py").run()
    student.session_state[C.MOVED] = True  # what the browser's poll of the class's file sends (no JS in AppTest)
    student.run()
    assert student.title[0].value == "Sentence encoder" and not student.exception


def test_assigning_homework_is_a_teachers_action(summarizer, monkeypatch):
    """Without the teacher link (when the server has one), or with a wrong password, no homework is made."""
    from helpers import new_app
    from ui.classroom import homework as H

    monkeypatch.setenv("MICROSCOPE_TEACHER_TOKEN", "t" * 32)
    stranger = new_app()
    stranger.selectbox(key="class_lesson").set_value("which_sentences_and_why").run()
    assert not any(b.key == "homework_assign" for b in stranger.button)
    assert any("takes the teacher link" in c.value for c in stranger.caption)
    monkeypatch.delenv("MICROSCOPE_TEACHER_TOKEN")
    monkeypatch.setenv("MICROSCOPE_TEACHER_PASSWORD", "owl")
    before = shared_store().run("SELECT COUNT(*) FROM homework", (), True)[0][0]
    guesser = new_app()
    guesser.selectbox(key="class_lesson").set_value("which_sentences_and_why").run()
    guesser.text_input(key="homework_password").set_value("cat")
    button(guesser, "homework_assign").click().run()
    assert "Wrong teacher password" in " ".join(e.value for e in guesser.error)
    assert shared_store().run("SELECT COUNT(*) FROM homework", (), True)[0][0] == before
    guesser.text_input(key="homework_password").set_value("owl")
    button(guesser, "homework_assign").click().run()
    assert guesser.session_state["_homework_made"]["code"] and H.CODE not in guesser.session_state
