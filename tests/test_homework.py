"""A lesson assigned as homework (issue 59): students open its link on their own, step at their own
pace and answer; with "right after", checking an answer shows the model's and makes it final; with
"after the deadline", nothing is shown until then and the store refuses later answers; a reload
keeps the seat and its answers; the teacher's results link shows the live count and the CSV."""
from __future__ import annotations

import csv
import io
import time
from pathlib import Path

import pytest

from helpers import button, new_app, opened, shared_store
from ui import classroom as C
from ui.classroom import answers as A
from ui.classroom import homework as H
from ui.tour import lessons

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def assigned(reveal: str) -> tuple[str, str]:
    teacher = new_app()
    teacher.selectbox(key="class_lesson").set_value("which_sentences_and_why").run()
    teacher.radio(key="homework_reveal").set_value(reveal).run()
    button(teacher, "homework_assign").click().run()
    assert not teacher.exception
    made = teacher.session_state["_homework_made"]
    links = " ".join(c.value for c in teacher.code)
    assert f"?homework={made['code']}" in links and f"&results={made['key']}" in links
    return made["code"], made["key"]


def test_homework_at_two_paces_reaches_the_teacher(summarizer):
    code, key = assigned("after")
    quick, slow = opened({"homework": code}), opened({"homework": code})
    assert not quick.exception and quick.session_state[C.STEP]["step"] == 0 and quick.session_state["document"]
    quick.pills[0].set_value([3, 5, 26]).run()  # the model's three
    step0 = A.step_id(quick.session_state[C.STEP])
    assert A.mine(shared_store(), code, step0, quick.session_state[H.SEAT]) == [3, 5, 26]
    assert "The model's answer" not in " ".join(m.value for m in quick.markdown)  # not before they check
    button(quick, f"homework_check_{step0}").click().run()
    said = " ".join(m.value for m in quick.markdown)
    assert "The model's answer" in said and "right" in said and quick.pills[0].disabled  # final now
    button(quick, "lesson_next").click().run()  # on at their own pace: the second question
    quick.radio(key=f"answer_{A.step_id(quick.session_state[C.STEP])}").set_value(2).run()

    slow.pills[0].set_value([0, 1, 2]).run()  # still on the first step
    again = opened({"homework": code, "seat": slow.session_state[H.SEAT]})  # a reload: the same seat and answer
    assert again.session_state[H.SEAT] == slow.session_state[H.SEAT] and again.pills[0].value == [0, 1, 2]

    teacher = opened({"homework": code, "results": key})
    assert not teacher.exception and H.SEAT not in teacher.session_state
    assert any("2 of 2 students answered" in m.value for m in teacher.markdown)
    rows = list(csv.DictReader(io.StringIO(A.as_csv(shared_store(), code, A.asks_of(lessons())))))
    assert sorted((r["step"], r["answer"], r["right"]) for r in rows) == [
        ("which_sentences_and_why 1", "sentences 1, 2, 3", "no"),
        ("which_sentences_and_why 1", "sentences 4, 6, 27", "yes"),
        ("which_sentences_and_why 2", "Their place in the article", "")]
    stranger = opened({"homework": code, "results": "not-the-key"})
    assert H.RESULTS not in stranger.session_state and any("key" in w.value for w in stranger.warning)


def test_after_the_deadline_the_answers_show_and_close(summarizer):
    code, _ = assigned("due")
    student = opened({"homework": code})
    student.pills[0].set_value([3, 5, 26]).run()
    assert not any((b.key or "").startswith("homework_check_") for b in student.button)  # nothing to check before the deadline
    assert "The model's answer" not in " ".join(m.value for m in student.markdown)
    past = time.time() - 1  # the deadline passes
    shared_store().run("UPDATE homework SET due = ? WHERE code = ?", (past, code), False,
                ("UPDATE classes SET expires = ? WHERE code = ?", (past, code)))
    student.run()
    assert "The model's answer" in " ".join(m.value for m in student.markdown) and student.pills[0].disabled
    step0 = A.step_id(student.session_state[C.STEP])
    assert not A.give(shared_store(), code, step0, student.session_state[H.SEAT], [0, 1, 2], False)  # the store refuses


def test_a_homework_code_is_no_class_and_a_made_up_one_is_one_sentence(summarizer):
    code, _ = assigned("after")
    as_class = opened({"class": code})
    assert C.JOINED not in as_class.session_state and any("is homework" in w.value for w in as_class.warning)
    unknown = opened({"homework": "ZZZZZZ"})
    assert not unknown.exception and any("does not exist" in w.value for w in unknown.warning)


def test_another_page_while_a_question_is_open_leads_back_and_next_makes_the_answer_final(summarizer):
    """Hidden means hidden in homework too (issue 70): the other pages show the model's choice, so a
    student on an open question who opens one is led back to the question; Next (and Back) make the
    answer final first, said before and after; the next step's text cannot change the answer."""
    code, _ = assigned("due")
    student = opened({"homework": code})
    assert any("makes your answer" in c.value and "final" in c.value for c in student.caption)  # said before
    assert not any(b.key in ("story_add", "lesson_example", "homework_assign", "class_start") for b in student.button)
    assert not student.get("download_button")  # no lesson file (its notes and right answers) to download
    student.pills[0].set_value([0, 1, 2]).run()
    step0, seat = A.step_id(student.session_state[C.STEP]), student.session_state[H.SEAT]
    assert not A.left(shared_store(), code, step0, seat)
    student.switch_page("pages/sentence_encoder.py").run()  # its scores and stars would give the answer away
    assert not student.exception and student.title[0].value == "Summary", student.title[0].value
    assert any("other pages show the model's choice" in i.value for i in student.info)
    assert not A.left(shared_store(), code, step0, seat) and not student.pills[0].disabled  # still answering
    button(student, "lesson_next").click().run()  # Next: the answer as it stands is final
    student.run()
    assert A.left(shared_store(), code, step0, seat)
    assert any("final" in i.value for i in student.info)  # said after
    button(student, "lesson_back").click().run()
    student.run()
    assert student.pills[0].disabled and student.pills[0].value == [0, 1, 2]
    assert any("Your answer is final" in c.value for c in student.caption)
    assert "The model's answer" not in " ".join(m.value for m in student.markdown)  # still hidden until the deadline
    assert A.mine(shared_store(), code, step0, seat) == [0, 1, 2]
    other = opened({"homework": code})  # a student who stays on the step's page keeps answering
    other.pills[0].set_value([3, 5, 26]).run()
    other.pills[0].set_value([3, 5, 27]).run()
    assert not A.left(shared_store(), code, step0, other.session_state[H.SEAT]) and not other.pills[0].disabled


def test_summarize_on_an_open_question_makes_the_answer_final_said_before_and_after(summarizer):
    """Summarize is a door too (issue 70): a text of the student's own shows the model's choice on it,
    so on an open question it makes the answer final, said under the button before and above after."""
    code, _ = assigned("due")
    student = opened({"homework": code})
    assert any("Summarize makes your answer to the open question final" in c.value for c in student.caption)
    student.pills[0].set_value([0, 1, 2]).run()
    step0, seat = A.step_id(student.session_state[C.STEP]), student.session_state[H.SEAT]
    student.text_area(key="document").set_value("My own text. It has two sentences.").run()
    next(b for b in student.button if b.label == "Summarize").click().run()
    assert not student.exception and A.left(shared_store(), code, step0, seat)
    assert any("final now" in i.value for i in student.info)  # said after
    assert A.mine(shared_store(), code, step0, seat) == [0, 1, 2]
