"""A workshop a teacher would run tomorrow (issue 58), in AppTest sessions on one store: the class
survives the teacher's reload, End asks first and the answers stay, a hidden answer stays hidden
(leaving counts as leaving the question), the controls cannot mislead, what a browser sends is
checked, lesson files are checked against the model, one way in, joining that works in a room."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from helpers import button, charts, new_app, opened, shared_store
from ui import classroom as C
from ui.classroom import answers as A
from ui.classroom import session as S
from ui.tour import lessons

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def teaching(lesson: str = "which_sentences_and_why"):
    teacher = new_app()
    teacher.selectbox(key="class_lesson").set_value(lesson).run()  # one way in: the lesson opens, document too
    assert teacher.session_state[C.STEP]["step"] == 0 and teacher.session_state["document"]
    button(teacher, "class_start").click().run()
    assert not teacher.error, [e.value for e in teacher.error]
    return teacher, teacher.session_state[C.TEACHING]


def test_the_teachers_reload_leads_the_same_class_at_the_same_step_with_its_lesson(summarizer, monkeypatch):
    """F5 or a new tab: the browser's cookie (the code and the resume key) leads the class again,
    on its page, step and lesson (the teacher's own lesson file, from the store); the old tab is told."""
    from ui.classroom.lead import LEAD_COOKIE
    from ui.tour import parse
    from ui.classroom.steps import OWN, OWN_TEXT

    text = (ROOT / "lessons" / "which_sentences_and_why.toml").read_text().replace(
        'title = "Which sentences, and why"', 'title = "Mine"')
    teacher = new_app()
    teacher.session_state[OWN], teacher.session_state[OWN_TEXT] = {"own_mine": parse(text, "own_mine")}, {"own_mine": text}
    teacher.run()
    teacher.selectbox(key="class_lesson").set_value("own_mine").run()
    button(teacher, "class_start").click().run()
    code = teacher.session_state[C.TEACHING]
    button(teacher, "lesson_next").click().run()
    button(teacher, "lesson_next").click().run()  # step 3: the Why page
    key = teacher.session_state[C.RESUME]
    monkeypatch.setattr(S, "cookie", lambda name: f"{code}:{key}" if name == LEAD_COOKIE else "")
    again = new_app()  # F5: a new session of the same browser, its address without the class
    assert not again.exception and again.session_state[C.TEACHING] == code
    assert again.session_state[C.STEP]["lesson"] == "own_mine" and again.session_state[C.STEP]["step"] == 2
    assert again.title[0].value.startswith("Why") and "own_mine" in again.session_state[OWN]
    assert again.session_state[C.RESUME] != key  # the key in the cookie is spent: a new one kept
    teacher.run()
    assert C.TEACHING not in teacher.session_state  # the old tab no longer leads, and says so
    assert any("led from another tab or browser" in w.value for w in teacher.warning)
    spent = new_app()  # the old key again (a copied cookie): nothing happens
    assert C.TEACHING not in spent.session_state


def test_end_asks_first_and_the_answers_stay_downloadable_from_any_step(summarizer):
    teacher, code = teaching()
    student = opened({"class": code})
    student.pills[0].set_value([0, 1, 2]).run()
    button(teacher, "lesson_next").click().run()  # a step that asks nothing: the CSV is there all the same
    assert any(b.key == f"class_csv_{code}" for b in teacher.get("download_button"))
    assert C.version(shared_store(), code) is not None  # opening "Answers and End" ends nothing by itself
    button(teacher, "class_end").click().run()  # "Yes, end the class"
    assert C.TEACHING not in teacher.session_state and C.version(shared_store(), code) is None
    assert any(f"Class {code} has ended" in i.value for i in teacher.info)
    assert any(b.key == f"class_csv_{code}" for b in teacher.get("download_button"))  # after End: still there
    rows = list(csv.DictReader(io.StringIO(A.as_csv(shared_store(), code, A.asks_of(lessons())))))
    assert [r["answer"] for r in rows] == ["sentences 1, 2, 3"]


def test_leaving_to_explore_while_the_answer_is_hidden_keeps_the_answer_as_it_was(summarizer):
    """The model's pick is on other pages: a student who leaves during the open question cannot
    come back and change their answer (nor answer, if they had not)."""
    teacher, code = teaching()
    peeker, late = opened({"class": code}), opened({"class": code})
    peeker.pills[0].set_value([0, 1, 2]).run()
    for s in (peeker, late):
        button(s, "class_leave").click().run()
        s.switch_page("pages/sentence_encoder.py").run()  # where the stars are
        button(s, "class_back").click().run()
    assert peeker.pills[0].disabled and "stays as it was" in " ".join(c.value for c in peeker.caption)
    peeker.session_state[f"answer_{A.step_id(peeker.session_state[C.STEP])}"] = [5, 6, 7]  # a tampered message
    peeker.run()
    step = A.step_id(teacher.session_state[C.STEP])
    assert A.mine(shared_store(), code, step, peeker.session_state[C.SESSION]) == [0, 1, 2]
    assert late.pills[0].disabled and A.mine(shared_store(), code, step, late.session_state[C.SESSION]) is None


def test_what_a_browser_sends_is_checked_one_sentence_never_a_crash(summarizer):
    """A number question's control given a text, NaN, infinity or a number out of its range: one
    sentence, nothing stored; a number question has a range (0-100 unless the lesson says)."""
    from ui.questions import Ask, Refused, valid

    teacher, code = teaching("attention_in_20_minutes")
    asked = [n for n, s in enumerate(lessons()["attention_in_20_minutes"].steps) if s.ask and s.ask.kind == "number"]
    while teacher.session_state[C.STEP]["step"] < asked[0]:
        button(teacher, "lesson_next").click().run()
    from streamlit.testing.v1 import AppTest

    step = A.step_id(teacher.session_state[C.STEP])
    for crafted in ("eighty", float("nan"), float("inf"), 150.0, [1, 2]):
        student = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
        student.query_params["class"] = code
        student.session_state[f"answer_{step}"] = crafted  # what a tampered message would leave there
        student.run()
        assert not student.exception, crafted
        assert A.mine(shared_store(), code, step, student.session_state[C.SESSION]) is None, crafted
    ask = Ask("number", answer=80, tolerance=10, unit="%")
    for bad in (150, -1, float("nan"), float("inf"), "80", True):
        with pytest.raises(Refused):
            valid(ask, bad)
    assert valid(ask, 80) == 80.0


def test_the_checker_knows_the_models_layers_and_heads_and_a_numbers_range():
    from ui.tour import model_shapes, problems

    assert model_shapes() == {"bert": (6, 12), "inter": (2, 8)}
    lesson = (ROOT / "lessons" / "attention_in_20_minutes.toml").read_text()
    assert problems(lesson) == []
    head = lesson.replace("right = [[", "right = [[2, 13], [", 1)
    assert any("no layer 2, head 13" in p for _, p in problems(head)), problems(head)
    number = 'title = "t"\ndocument = "bbc_insurance_bosses"\n[[steps]]\ntext = "x"\nquestion = "q"\n' \
             '[steps.answer]\nkind = "number"\nanswer = 150\nunit = "%"\n'
    assert any("outside the range 0 to 100" in p for _, p in problems(number)), problems(number)
    assert problems(number.replace("unit", 'range = [0, 200]\nunit')) == []
    view = lesson.replace("bert_layer = 1", "bert_layer = 7", 1)
    assert any("bert_layer = 7" in p and "has layers 1 to 6" in p for _, p in problems(view)), problems(view)


def test_joining_in_a_room_the_join_screen_and_a_loopback_link_flagged(summarizer, monkeypatch):
    monkeypatch.setenv("MICROSCOPE_PUBLIC_URL", "http://127.0.0.1:8501")  # what a teacher on the server types
    teacher, code = teaching()
    warned = " ".join(w.value for w in teacher.warning)
    assert "localhost" in warned and "MICROSCOPE_PUBLIC_URL" in warned
    button(teacher, "class_join_screen").click().run()
    shown = " ".join(h.proto.body for h in teacher.get("html"))
    assert "join-code" in shown and code in shown and teacher.get("image") and not charts(teacher)
    button(teacher, "class_join_close").click().run()
    assert charts(teacher) or teacher.title  # the page again
    monkeypatch.setenv("MICROSCOPE_PUBLIC_URL", "http://10.0.0.5:8080")
    teacher.run()
    assert any(f"http://10.0.0.5:8080/?class={code}" in c.value for c in teacher.get("code"))
    assert "localhost" not in " ".join(w.value for w in teacher.warning)


def test_the_same_browser_scanning_again_is_the_same_seat(summarizer, monkeypatch):
    """The seat is kept in the browser's cookie too: the QR code scanned again (no seat in the
    address) sits in the same seat, with its answer."""
    from ui.classroom.follow import seat_cookie

    teacher, code = teaching()
    student = opened({"class": code})
    seat = student.session_state[C.SESSION]
    student.pills[0].set_value([0, 1, 2]).run()
    import streamlit as st

    real = st.context.__class__.cookies
    monkeypatch.setattr(st.context.__class__, "cookies", property(lambda self: {seat_cookie(code): seat}))
    again = opened({"class": code})
    monkeypatch.setattr(st.context.__class__, "cookies", real)
    assert again.session_state[C.SESSION] == seat and again.pills[0].value == [0, 1, 2]


def test_a_lessons_steps_are_computed_ahead_in_lesson_order(summarizer):
    """A class on a lesson: a background thread computes every step's results (in lesson order)
    before the teacher gets there, under the pages' own cache keys."""
    import time

    from ui import resources
    from ui.classroom.warm import results_for
    from ui.runs import peek

    for cache in (resources.result_cache, resources.trace_cache):
        cache.clear()
    lesson = lessons()["attention_in_20_minutes"]
    wanted = [(n, what) for n, s in enumerate(lesson.steps) for what in results_for(s.page, s.view.pickers)]
    assert {w for _, w in wanted} == {"explanation", "stats", "gradient", "mixing", "batch", "whatif"}, wanted
    teacher, code = teaching("attention_in_20_minutes")
    params = teacher.session_state["params"]
    deadline = time.time() + 120
    keys = lambda kind: [k for k in list(resources.result_cache()._items) if k[0] == kind]  # noqa: E731
    batches = lambda: keys("batch")  # noqa: E731
    while (peek("explanation", params, None) is None or peek("gradient", params) is None or not batches()
           or not keys("whatif")):
        assert time.time() < deadline, "the lesson's steps were not computed ahead"
        time.sleep(0.5)
    assert teacher.session_state[C.STEP]["step"] == 0  # the teacher is still on step 1
    # the Masks & positions step finds its padded batch (3 forwards) under the page's own key
    masks = next(n for n, s in enumerate(lesson.steps) if s.page == "masks_positions")
    for _ in range(masks):
        button(teacher, "lesson_next").click().run()
    assert not teacher.exception and teacher.session_state[C.STEP]["step"] == masks
    assert len(batches()) == 1, batches()
    # and the What if step its comparison of A and B (B: the step's edits, made as the page makes them)
    what_if = next(n for n, s in enumerate(lesson.steps) if s.page == "what_if")
    for _ in range(what_if - masks):
        button(teacher, "lesson_next").click().run()
    assert not teacher.exception and teacher.session_state[C.STEP]["step"] == what_if
    assert len(keys("whatif")) == 1 and not teacher.error, keys("whatif")


def test_a_following_students_process_computes_the_lesson_ahead_too(summarizer, monkeypatch):
    """Behind scripts/serve.py's nginx a class spans processes, each with its own caches: the
    process a following student is served by computes the lesson's steps ahead as well."""
    import time

    from ui import resources
    from ui.classroom import warm
    from ui.runs import peek

    teacher, code = teaching("attention_in_20_minutes")
    params = teacher.session_state["params"]
    deadline = time.time() + 120
    while peek("gradient", params) is None:  # the teacher's own process: done
        assert time.time() < deadline, "the lesson's steps were not computed ahead"
        time.sleep(0.5)
    monkeypatch.setattr(warm, "_STARTED", set())  # another process: nothing warmed, nothing cached
    resources.result_cache.clear()
    student = opened({"class": code})
    assert student.session_state[C.FOLLOWING] and student.session_state[C.STEP]["step"] == 0
    while peek("explanation", params, None) is None:  # the Why step's: no page of step 1 computes it
        assert time.time() < deadline + 120, "the student's process did not compute the lesson ahead"
        time.sleep(0.5)


def test_a_class_version_moves_once_per_step_of_the_teacher(summarizer):
    """Every move of the class's version makes every student rerun: a step of the teacher moves it
    once (the heartbeat published the page before, during the teacher's own full runs: twice on a
    new page)."""
    teacher, code = teaching("attention_in_20_minutes")
    steps = len(lessons()["attention_in_20_minutes"].steps)
    for _ in range(steps - 1):
        v = C.version(shared_store(), code)
        button(teacher, "lesson_next").click().run()
        assert C.version(shared_store(), code) == v + 1, teacher.session_state[C.STEP]["step"]


def test_a_step_may_play_a_document_of_its_own_for_the_class_and_ahead(summarizer):
    """A lesson is not one document (issue 59): a step names its own (an example, or the text
    itself); the teacher's Next opens it, the class follows, and it is computed ahead too."""
    import time

    from ui import resources
    from ui.tour import parse, problems
    from ui.classroom.steps import OWN, OWN_TEXT
    from ui.runs import peek
    from ui.widgets import examples

    other = (ROOT / "examples" / "bbc_insurance_bosses.txt").read_text(encoding="utf-8")
    text = ('title = "Two articles"\ndocument = "bbc_call_centres"\nk = 3\n\n[[steps]]\npage = ""\ntext = "One."\n\n'
            '[[steps]]\npage = "why"\ntext = "Another article."\ndocument = "bbc_insurance_bosses"\n'
            'private = "Ask who reads the *last* line first."\n')
    lesson = parse(text, "own_two")
    assert problems(text) == [] and lesson.document_of(1) == ("bbc_insurance_bosses", "")
    for cache in (resources.result_cache, resources.trace_cache):
        cache.clear()
    teacher = new_app()
    teacher.session_state[OWN], teacher.session_state[OWN_TEXT] = {"own_two": lesson}, {"own_two": text}
    teacher.run()
    teacher.selectbox(key="class_lesson").set_value("own_two").run()
    first = teacher.session_state["document"]
    assert first == next(p for p in examples().values() if p.stem == "bbc_call_centres").read_text(encoding="utf-8")
    button(teacher, "class_start").click().run()
    code = teacher.session_state[C.TEACHING]
    params = {**teacher.session_state["params"], "text": other}
    deadline = time.time() + 120
    while peek("explanation", params, None) is None:  # step 2's document, computed before the teacher gets there
        assert time.time() < deadline, "step 2's own document was not computed ahead"
        time.sleep(0.5)
    student = opened({"class": code})
    assert student.session_state["document"] == first
    button(teacher, "lesson_next").click().run()
    assert teacher.session_state["document"] == other and teacher.session_state["params"]["text"] == other
    note = "Your note for this step (not shown to students)"
    assert [e.label for e in teacher.expander if "Your note" in e.label] == [note]
    # as text: the lesson's Markdown parsed (emphasis marks dropped, viz.common.plain_text), then escaped
    assert "Ask who reads the last line first\\." in " ".join(m.value for m in teacher.markdown)
    student.session_state[C.MOVED] = True  # what the browser's poll of the class's file sends (no JS in AppTest)
    student.run()
    assert not student.exception and student.session_state["document"] == other  # the class follows
    assert student.title[0].value.startswith("Why")
    assert not any("Your note" in e.label for e in student.expander)  # the private note: the teacher's only
    assert "last" not in " ".join(m.value for m in student.markdown) + str(student.session_state[C.STEP])
    from ui.classroom import homework as H

    code, _ = H.assign(shared_store(), "own_two", text, 1, False)
    pupil = opened({"homework": code})
    button(pupil, "lesson_next").click().run()
    assert pupil.session_state[C.STEP]["step"] == 1 and pupil.session_state["document"] == other
    assert not any("Your note" in e.label for e in pupil.expander)  # nor a homework student's
