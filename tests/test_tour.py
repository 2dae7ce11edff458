"""Lessons and stories as one tour (issue 59, the parts built so far): a lesson opens as a story
(presented full screen, exported) and a story downloads as a lesson file the checker accepts and
reopens as the same lesson; speaker notes that the audience never sees; the presenter view in a
window of its own that follows the audience's; present from a step, jump to a step, the story's
title; stories saved before still open."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ui.classroom.lessons import lessons, parse, problems
from ui.tour import lesson_toml, story_steps

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(lessons()))
def test_a_lesson_as_a_story_and_back_is_the_same_lesson(name):
    lesson = lessons()[name]
    steps = story_steps(lesson, "bertsumext-minilm.safetensors")
    text = lesson_toml(lesson.title, steps)
    assert problems(text) == []  # what python -m ui.classroom.check says
    back = parse(text, name)
    assert (back.title, back.document, back.k) == (lesson.title, lesson.document, lesson.k)
    assert [(s.page, s.view, s.text, s.question, s.ask) for s in back.steps] == \
        [(s.page, s.view, s.text, s.question, s.ask) for s in lesson.steps]


def test_a_story_of_pasted_documents_says_why_it_is_no_lesson_file():
    steps = story_steps(lessons()["which_sentences_and_why"])
    steps[1]["view"] = dict(steps[1]["view"], doc="id:0123456789abcdef")
    with pytest.raises(ValueError, match="one of the shipped example documents"):
        lesson_toml("x", steps)


def test_keys_that_jump():
    from ui.present import goto

    assert [goto(k, 2, 5) for k in ("next", "prev", "first", "last", "goto:4", "goto:99", "goto:0", "goto:x", "up")] \
        == [3, 1, 0, 4, 3, 4, 0, None, None]


from helpers import SHORT, charts, new_app, summarize  # noqa: E402


def fresh(query: dict):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params.update(query)
    return at.run()


def button(at, key):
    return next(b for b in at.button if b.key == key)


@pytest.mark.slow
def test_speaker_notes_the_presenter_view_and_the_storys_title(summarizer):
    from ui import present
    from ui.resources import document_store
    from ui.stories import shown_step

    at = summarize(new_app(), SHORT)
    at.text_input(key="story_new_title").set_value("First")
    at.text_area(key="story_new_note").set_value("What the room reads")
    at.text_area(key="story_new_private").set_value("SPEAKER-ONLY remember the lead")
    button(at, "story_add").click().run()
    at.switch_page("pages/bert_attention.py").run()
    at.text_input(key="story_new_title").set_value("Second")
    at.text_area(key="story_new_private").set_value("SPEAKER-ONLY two")
    button(at, "story_add").click().run()
    at.text_input(key="story_title").set_value("Our story").run()
    story = at.session_state["story_id"]

    room = fresh({"story": story, "present": "1"})
    shown = " ".join(h.proto.body for h in room.get("html"))
    assert "SPEAKER-ONLY" not in shown and "What the room reads" in shown and "Our story" in shown
    desk = fresh({"story": story, "presenter": "1"})
    said = " ".join(h.proto.body for h in desk.get("html")) + " ".join(m.value for m in desk.markdown)
    assert "SPEAKER-ONLY remember the lead" in said and "**Next:** Second" in said and not charts(desk)
    present.tell  # (the room steps with a key: the store says so, the presenter view follows)
    room.session_state[present.PRESENT] = 1
    from ui.stories import show_step

    show_step(document_store(), story, 1)
    desk.run()
    assert "SPEAKER-ONLY two" in " ".join(h.proto.body for h in desk.get("html"))
    assert shown_step(document_store(), story)[0] == 1

    button(at, "story_export").click().run()  # the exports are the audience's: no speaker note in them
    made = at.session_state[present.EXPORTS]
    assert "SPEAKER-ONLY" not in made["html"] and made["html"].count("<section class='slide'") == 2

    at.selectbox(key="story_pick").set_value(1).run()
    button(at, "story_present_here").click().run()  # present from this step
    assert at.session_state[present.PRESENT] == 1


@pytest.mark.slow
def test_a_shipped_lesson_opens_as_a_story_presents_and_exports(summarizer):
    from ui import present

    at = new_app()
    at.selectbox(key="story_lesson_pick").set_value("attention_in_20_minutes").run()
    button(at, "story_lesson_open").click().run()
    steps = at.session_state[present.STEPS]
    assert len(steps) == len(lessons()["attention_in_20_minutes"].steps) and steps[1].get("ask")
    lesson = next(b for b in at.get("download_button") if b.key == "story_lesson")
    assert lesson is not None
    button(at, "story_present_start").click().run()  # its document is an example's: found without a store entry
    assert not at.exception and at.session_state[present.PRESENT] == 0
    assert at.title[-1].value.startswith("Attention in a summarizer")


def test_a_story_saved_before_titles_still_opens(store):
    from ui.stories import load_titled

    store.run("INSERT INTO stories VALUES (?, ?, ?, ?)", ("A" * 16, json.dumps(
        [{"title": "Old", "note": "n", "view": {"page": ""}, "uid": "u"}]), "x", 0.0))
    assert load_titled(store, "A" * 16) == ("Old", [{"title": "Old", "note": "n", "view": {"page": ""}, "uid": "u"}])


@pytest.mark.slow
def test_a_story_is_taught_as_a_class_with_its_edits(summarizer):
    """A story (here a shipped lesson opened as one, its first text edited) becomes the class's
    lesson and is led: a student who joins sees its first step's edited text."""
    from ui import present
    from ui.classroom.lessons import parse

    at = new_app()
    at.selectbox(key="story_lesson_pick").set_value("which_sentences_and_why").run()
    button(at, "story_lesson_open").click().run()
    uid = at.session_state[present.STEPS][0]["uid"]
    at.text_area(key=f"story_note_{uid}").set_value("EDITED in the story panel").run()
    button(at, "story_teach").click().run()
    name = at.session_state["class_lesson"]
    lesson = at.session_state["class_own_lessons"][name]
    assert lesson.steps[0].text == "EDITED in the story panel"
    assert len(lesson.steps) == len(parse((ROOT / "lessons/which_sentences_and_why.toml").read_text(), "x").steps)
    button(at, "class_start").click().run()
    from ui.state import TEACHING

    assert not at.exception and at.session_state[TEACHING]
    assert "EDITED in the story panel" in " ".join(m.value for m in at.info)


@pytest.mark.slow
def test_a_lessons_export_is_a_handout_with_the_answers_last(summarizer, tmp_path):
    """A lesson's PDF: each question with space to answer (a box per option), and a last page with
    the answers for the teacher (the model's own pick for "which sentences"); read back with pdftotext."""
    import shutil
    import subprocess

    from ui import present

    at = new_app()
    at.selectbox(key="story_lesson_pick").set_value("which_sentences_and_why").run()
    button(at, "story_lesson_open").click().run()
    button(at, "story_export").click().run()
    made = at.session_state[present.EXPORTS]
    assert made["html"].count("<section class='slide'") == 5  # four steps and the answers
    assert "☐ Their place in the article" in made["html"] and "Answers, for the teacher" in made["html"]
    if shutil.which("pdftotext") is None or made["pdf"] is None:
        pytest.skip("pdftotext or Chromium is not installed")
    (tmp_path / "h.pdf").write_bytes(made["pdf"])
    pages = [p for p in subprocess.run(["pdftotext", "-layout", str(tmp_path / "h.pdf"), "-"], capture_output=True,
                                       text=True, check=True).stdout.split("\f") if p.strip()]
    assert len(pages) == 5 and "Sentences (the summary): ______" in pages[0]
    last = " ".join(pages[-1].split())
    assert "Step 1: sentences 4, 6, 27" in last and "Step 2: an opinion" in last and "Step 4: layer 6, head 3" in last
