"""Lessons and stories as one tour (issue 59, the parts built so far): a lesson opens as a story
(presented full screen, exported) and a story downloads as a lesson file the checker accepts and
reopens as the same lesson; speaker notes that the audience never sees; the presenter view in a
window of its own that follows the audience's; present from a step, jump to a step, the story's
title; stories saved before still open."""
from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ui.tour import Step, as_story, lesson_toml, lessons, parse, problems, story_tour

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(lessons()))
def test_a_lesson_as_a_story_and_back_is_the_same_lesson(name):
    lesson = lessons()[name]
    story = as_story(lesson)
    text = lesson_toml(story, {lesson.document: {"document": lesson.document}})
    assert problems(text) == []  # what python -m ui.classroom.check says
    back = parse(text, name)
    assert (back.title, back.document, back.k) == (lesson.title, lesson.document, lesson.k)
    assert back.steps == lesson.steps


def test_a_story_goes_through_its_lesson_file_and_back_unchanged_in_every_field():
    """Issue 69: story → lesson file → story is the same story: each step's page, document (pasted
    or an example), k (steps may differ), trigram blocking, weights, BERT window, reference summary,
    chart, every control of its page, title, note, private note, question and answer."""
    from dataclasses import replace

    from ui import view as V
    from ui.questions import Ask

    pasted, reference = 'A pasted "article".\nIts second line.', "A person's summary.\nIn two lines."
    ids = {pasted: "id:0123456789abcdef", reference: "id:00000000000000aa"}
    samples = {c.key: c.sample for c in V.CONTROLS.values() if c.sample is not None} | {"whatif_b": "B text."}

    def step(n, view, **more):
        return Step(view.but(pickers={c.key: samples[c.key] for c in V.controls(view.page) if c.key in samples}),
                    f"Look at {n}.", title=f"Step {n} of mine", private=f"Say {n}.", key=f"u{n}", **more)

    story = story_tour("My story", [
        step(1, V.View("", ids[pasted], 4, False, "bertsumext-minilm.safetensors", 1, ids[reference])),
        step(2, V.View("bert_attention", "bbc_insurance_bosses", 2, True, None, 0, None, chart="bert_token"),
             question="Which head is this?", ask=Ask("head", model="bert", right=((4, 2),))),
        *(step(n, V.View(page, ids[pasted], 4, True, "untrained", 2, None, chart="c"))
          for n, page in enumerate(V.PAGES, 3) if page)])
    documents = {ids[pasted]: {"document_text": pasted}, "bbc_insurance_bosses": {"document": "bbc_insurance_bosses"}}
    text = lesson_toml(story, documents, {ids[reference]: reference})
    assert problems(text) == [], problems(text)
    back = as_story(parse(text, "mine"), ids=ids)
    assert back == replace(story, name="story") and back.steps == story.steps  # (Step.key: widget names, made anew)

    # the store's form of a story (ui.stories) and back: every field again, its widget names too
    from ui.stories import from_rows, rows

    kept = from_rows("My story", json.loads(json.dumps(rows(story))))
    assert kept == story and [s.key for s in kept.steps] == [s.key for s in story.steps]

    # taught as a class: the same tour with no file between, kept in the store as JSON, played back
    from ui.tour import from_json, load, playable, to_json

    taught = playable(story, "own_story_x", documents, {ids[reference]: reference})
    assert as_story(taught, ids=ids).steps == story.steps
    assert from_json(to_json(taught), "own_story_x") == taught == load(to_json(taught), "own_story_x")
    assert load(text, "mine") == parse(text, "mine")  # (a class kept before holds its lesson file)
    assert taught.steps == parse(text, "mine").steps  # the story taught is the story its file teaches


def test_a_pasted_document_goes_in_the_lesson_file_and_a_step_may_have_its_own():
    pasted = 'My own "article".\nIts second line, with a \\ backslash and émoji 🙂.'
    from dataclasses import replace

    lesson = lessons()["which_sentences_and_why"]
    steps = [replace(s, view=s.view.but(doc="id:0123456789abcdef")) for s in as_story(lesson).steps]
    text = lesson_toml(story_tour("Mine", steps), {"id:0123456789abcdef": {"document_text": pasted}})
    assert problems(text) == [] and parse(text, "mine").text == pasted and parse(text, "mine").document == ""
    # step 2 on another document (a shipped example): the file names it in that step only
    steps[1] = replace(steps[1], view=steps[1].view.but(doc="id:fedcba9876543210"))
    documents = {"id:0123456789abcdef": {"document_text": pasted}, "id:fedcba9876543210": {"document": lesson.document}}
    text = lesson_toml(story_tour("Two", steps), documents)
    back = parse(text, "two")
    assert problems(text) == [] and back.text == pasted
    assert [back.document_of(n) for n in range(3)] == [("", pasted), (lesson.document, ""), ("", pasted)]
    again = as_story(back, ids={pasted: "id:0123456789abcdef"})  # and as a story again: the same documents
    assert [s.view.doc for s in again.steps[:3]] == ["id:0123456789abcdef", lesson.document, "id:0123456789abcdef"]
    with pytest.raises(ValueError, match="step 2 is no longer on this server"):
        lesson_toml(story_tour("x", steps), {"id:0123456789abcdef": {"document_text": pasted}})
    assert problems('title = "t"\nk = 3\n[[steps]]\ntext = "x"\n')[0][1].startswith("the lesson needs a document")
    both = 'title = "t"\ndocument_text = "A b."\n[[steps]]\ntext = "x"\ndocument = "nope"\ndocument_text = "c"\n'
    assert problems(both) == [(5, "step 1: a document (an example's name) or a document_text (the document itself), "
                                  "not both")]
    unknown = 'title = "t"\ndocument_text = "A b."\n[[steps]]\ntext = "x"\ndocument = "nope"\n'
    assert problems(unknown)[0][0] == 5 and "'nope' is not one of the examples" in problems(unknown)[0][1]


def test_a_steps_title_and_private_note_go_through_the_lesson_file_and_back():
    """One tour in two homes: a story step's own title and private note are kept by its lesson file
    (the default title "<tour>: step n" is not written), and checked there like the rest."""
    from dataclasses import replace

    lesson = lessons()["which_sentences_and_why"]
    steps = list(as_story(lesson).steps)
    steps[0] = replace(steps[0], title="Predict first", private="Give them 2 minutes.\nDo not say \"4\".")
    text = lesson_toml(story_tour(lesson.title, steps), {lesson.document: {"document": lesson.document}})
    assert problems(text) == [] and text.count("\ntitle = ") == 1 and text.count("private = ") == 1
    again = as_story(parse(text, "again"))
    assert again.steps == tuple(steps)
    long = text.replace('private = "Give', 'private = "' + "x" * 4001 + 'Give')
    assert any("private must be a text of at most 4,000 characters" in p for _, p in problems(long))


def test_keys_that_jump():
    from ui.present import goto

    assert [goto(k, 2, 5) for k in ("next", "prev", "first", "last", "goto:4", "goto:99", "goto:0", "goto:x", "up")] \
        == [3, 1, 0, 4, 3, 4, 0, None, None]


from helpers import SHORT, button, charts, new_app, opened, shared_store, summarize  # noqa: E402


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
    story = at.session_state[present.STORY].id

    key = at.session_state[present.NOTES_KEY]
    room = opened({"story": story, "present": "1"})  # the audience's link: no notes anywhere in its session
    shown = " ".join(h.proto.body for h in room.get("html"))
    assert "SPEAKER-ONLY" not in shown and "What the room reads" in shown and "Our story" in shown
    assert not any(s.private for s in room.session_state[present.STORY].steps)
    assert room.session_state[present.NOTES_KEY] is None  # its keys step it alone: they move no one's presentation
    peek = opened({"story": story, "presenter": "1"})  # the presenter view without the key: refused, said
    assert present.PRESENTER not in peek.session_state and "SPEAKER-ONLY" not in str(
        [s.private for s in peek.session_state[present.STORY].steps])
    assert opened({"story": story, "key": "0" * 24}).session_state[present.STORY].steps[0].private == ""
    button(at, "story_present_start").click().run()  # the maker presents: its presenter view follows
    desk = opened({"story": story, "presenter": "1", "key": key})
    said = " ".join(h.proto.body for h in desk.get("html")) + " ".join(m.value for m in desk.markdown)
    assert "SPEAKER-ONLY remember the lead" in said and "**Next:** Second" in said and not charts(desk)
    present.tell  # (the room steps with a key: the store says so, the presenter view follows)
    room.session_state[present.PRESENT] = 1
    from ui.stories import show_step

    show_step(document_store(), story, 1)
    desk.run()
    assert "SPEAKER-ONLY two" in " ".join(h.proto.body for h in desk.get("html"))
    assert shown_step(document_store(), story)[0] == 1
    at.session_state[present.PRESENT] = None  # (Esc: ui.present.move("exit") ends the presentation in the store)
    at.run()
    from ui.stories import stop_presenting

    stop_presenting(document_store(), story)  # (what Esc does: the keys' component has no AppTest double)
    desk.run()
    said = " ".join(i.value for i in desk.info) + " ".join(c.value for c in desk.caption)
    assert "Start **Present**" in said and "since the start" not in said  # the clock has stopped

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
    steps = at.session_state[present.STORY].steps
    assert len(steps) == len(lessons()["attention_in_20_minutes"].steps) and steps[1].ask
    lesson = next(b for b in at.get("download_button") if b.key == "story_lesson")
    assert lesson is not None
    button(at, "story_present_start").click().run()  # its document is an example's: found without a store entry
    assert not at.exception and at.session_state[present.PRESENT] == 0
    assert at.title[-1].value.startswith("Attention in a summarizer")


def test_a_story_saved_before_titles_still_opens(store):
    from ui.stories import load

    store.run("INSERT INTO stories VALUES (?, ?, ?, ?)", ("A" * 16, json.dumps(
        [{"title": "Old", "note": "n", "view": {"page": ""}, "uid": "u"}]), "x", 0.0))
    old = load(store, "A" * 16)
    assert (old.id, old.owner, old.title, len(old.steps)) == ("A" * 16, None, "Old", 1)
    assert (old.steps[0].title, old.steps[0].text, old.steps[0].private, old.steps[0].key, old.steps[0].page) == \
        ("Old", "n", "", "u", "")


@pytest.mark.slow
def test_a_story_is_taught_as_a_class_with_its_edits(summarizer):
    """A story (here a shipped lesson opened as one, its first text edited) becomes the class's
    lesson and is led: a student who joins sees its first step's edited text."""
    from ui import present
    from ui.tour import parse

    at = new_app()
    at.selectbox(key="story_lesson_pick").set_value("which_sentences_and_why").run()
    button(at, "story_lesson_open").click().run()
    uid = at.session_state[present.STORY].steps[0].key
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
    """A lesson's exports: the audience's deck has the questions but no answer lines and no answers
    (issue 72); the teacher's handout PDF has each question with space to answer (a box per option),
    and a last page with the answers (the model's own pick for "which sentences"); read back with
    pdftotext."""
    import shutil
    import subprocess

    from ui import present

    at = new_app()
    at.selectbox(key="story_lesson_pick").set_value("which_sentences_and_why").run()
    button(at, "story_lesson_open").click().run()
    button(at, "story_export").click().run()
    made = at.session_state[present.EXPORTS]
    assert made["html"].count("<section class='slide'") == 4  # the audience's deck: four steps, no answers
    assert "☐" not in made["html"] and "Answers, for the teacher" not in made["html"] and "Which 3 sentences" in made["html"]
    handout = made["handout_html"]  # the teacher's: four steps and the answers
    assert handout.count("<section class='slide'") == 5
    assert "☐ Their place in the article" in handout and "Answers, for the teacher" in handout
    if shutil.which("pdftotext") is None or made["handout_pdf"] is None:
        pytest.skip("pdftotext or Chromium is not installed")
    (tmp_path / "h.pdf").write_bytes(made["handout_pdf"])
    pages = [p for p in subprocess.run(["pdftotext", "-layout", str(tmp_path / "h.pdf"), "-"], capture_output=True,
                                       text=True, check=True).stdout.split("\f") if p.strip()]
    assert len(pages) == 5 and "Sentences (the summary): ______" in pages[0]
    last = " ".join(pages[-1].split())
    assert "Step 1: sentences 4, 6, 27" in last and "Step 2: an opinion" in last and "Step 4: BERT 6.3" in last


def edit_question(at, fields: dict, ok: bool = True):
    """The Story panel's question editor of the picked step: its values, then Save."""
    from ui import present

    uid = at.session_state[present.STORY].steps[at.session_state["story_pick"]].key
    at.selectbox(key=f"q_kind_{uid}").set_value(fields.pop("kind")).run()
    for name, value in fields.items():
        widget = next(w for kind in ("text_input", "text_area", "number_input", "multiselect", "checkbox", "radio")
                      for w in at.get(kind) if w.key == f"q_{name}_{uid}")
        widget.set_value(value).run()
    button(at, f"q_save_{uid}").click().run()
    assert not at.error or not ok, [e.value for e in at.error]
    return at.session_state[present.STORY].steps[at.session_state["story_pick"]]


def test_the_model_answer_filled_in_the_question_editor(summarizer):
    """The question editor fills in the model's own answer where it can be computed (issue 59): the
    head highest on a statistic and a head's measured share, on the step's own document (here not
    the one open when filling in), equal to the Heads page's statistics computed here."""
    import numpy as np

    from analysis import heads as AH
    from ui import present
    from ui.runs import run_trace

    at = summarize(new_app(), SHORT)
    at.switch_page("pages/bert_attention.py").run()
    at.text_input(key="story_new_title").set_value("A head").run()
    button(at, "story_add").click().run()
    uid = at.session_state[present.STORY].steps[0].key
    at.text_area(key="document").set_value(SHORT.replace("The", "A", 1)).run()  # another document open now
    p = at.session_state["params"]
    stats = AH.bert_stats(run_trace(SHORT, p["k"], p["block_trigram"], p["weights"], p["device"]))

    at.selectbox(key=f"q_kind_{uid}").set_value("head").run()
    at.selectbox(key=f"q_stat_bert_{uid}").set_value("previous").run()
    button(at, f"q_fill_head_{uid}").click().run()
    layer, head = np.unravel_index(int(np.argmax(stats["previous"])), stats["previous"].shape)
    assert (at.number_input(key=f"q_layer_{uid}").value, at.number_input(key=f"q_head_{uid}").value) == (layer + 1, head + 1)
    assert any(f"layer {layer + 1}, head {head + 1}" in c.value for c in at.caption)

    at.selectbox(key=f"q_kind_{uid}").set_value("number").run()
    at.selectbox(key=f"q_nstat_{uid}").set_value("cls").run()
    at.number_input(key=f"q_nlayer_{uid}").set_value(2).run()
    at.number_input(key=f"q_nhead_{uid}").set_value(3).run()
    button(at, f"q_fill_number_{uid}").click().run()
    assert at.number_input(key=f"q_answer_{uid}").value == round(100 * float(stats["cls"][1, 2]), 1)
    at.text_input(key=f"q_text_{uid}").set_value("What share goes to [CLS]?").run()
    button(at, f"q_save_{uid}").click().run()

    saved = at.session_state[present.STORY].steps[0].ask
    assert not at.exception and saved.kind == "number" and saved.unit == "%" and saved.answer == round(
        100 * float(stats["cls"][1, 2]), 1) and (saved.low, saved.high) == (0, 100)
    at.number_input(key=f"q_nlayer_{uid}").set_value(40).run()
    button(at, f"q_fill_number_{uid}").click().run()  # a layer the model does not have: said, nothing changed
    assert any("The model has BERT layers" in e.value for e in at.error)
    assert at.number_input(key=f"q_answer_{uid}").value == round(100 * float(stats["cls"][1, 2]), 1)

    # a Heads step (its Importance view): "which head" is filled in from what that view ranks by (issue 72:
    # the deck's answer was the head highest on attention to [CLS], against its own slide)
    from analysis.heads import importance_gradient
    from ui.resources import get_model
    from ui.runs import peek

    at.text_area(key="document").set_value(SHORT).run()
    next(b for b in at.button if b.label == "Summarize").click().run()
    at.switch_page("pages/heads.py").run()
    at.session_state["heads_view"] = "Importance"
    at.run()
    at.text_input(key="story_new_title").set_value("Heads").run()
    button(at, "story_add").click().run()
    step = at.session_state[present.STORY].steps[-1]
    assert step.page == "heads"
    at.selectbox(key="story_pick").set_value(len(at.session_state[present.STORY].steps) - 1).run()
    at.selectbox(key=f"q_kind_{step.key}").set_value("head").run()
    assert at.selectbox(key=f"q_stat_bert_{step.key}").value == "importance"
    button(at, f"q_fill_head_{step.key}").click().run()
    params = dict(text=SHORT, k=p["k"], block_trigram=p["block_trigram"], weights=p["weights"], device=p["device"])
    ablation = peek("ablation", params)  # the exact ablation when another test computed it on this server
    bert = ablation.importance["bert"] if ablation is not None else importance_gradient(
        get_model(p["weights"], p["device"]), SHORT, p["k"], p["block_trigram"])[0]
    layer, head = np.unravel_index(int(np.argmax(bert)), bert.shape)
    assert (at.number_input(key=f"q_layer_{step.key}").value, at.number_input(key=f"q_head_{step.key}").value) == \
        (layer + 1, head + 1)
    at.session_state["heads_view"], at.session_state["heads_stat"] = "Statistics", "previous"
    at.run()
    button(at, "story_add").click().run()  # its Statistics view: the statistic it shows
    step = at.session_state[present.STORY].steps[-1]
    at.selectbox(key="story_pick").set_value(len(at.session_state[present.STORY].steps) - 1).run()
    at.selectbox(key=f"q_kind_{step.key}").set_value("head").run()
    assert at.selectbox(key=f"q_stat_bert_{step.key}").value == "previous"


@pytest.mark.slow
def test_a_lesson_made_in_the_browser_is_presented_taught_assigned_and_exported(summarizer, tmp_path):
    """Issue 59's teacher: five views of an example in the Story panel, a question of each kind
    made in the editor (the head filled in from the view, sentences the model's own), a question
    the checker refuses said in the editor's words; the lesson file passes the checker and reopens
    the same; presented; taught with two students answering; assigned as homework and answered."""
    from ui import present
    from ui.classroom import answers as A
    from ui.state import TEACHING

    at = new_app()
    next(b for b in at.button if b.label == "Try an example").click().run()
    for page, title in (("pages/summary.py", "The summary"), ("pages/bert_attention.py", "One head"),
                        ("pages/sentence_encoder.py", "Sentences"), ("pages/masks_positions.py", "Masks"),
                        ("pages/why.py", "Why")):
        at.switch_page(page).run()
        at.text_input(key="story_new_title").set_value(title)
        button(at, "story_add").click().run()
    at.text_input(key="story_title").set_value("My lesson").run()
    at.selectbox(key="story_pick").set_value(0).run()
    sentences = edit_question(at, {"kind": "sentences", "text": "Which 3 will it keep?"})
    at.selectbox(key="story_pick").set_value(1).run()
    shown = at.session_state[present.STORY].steps[1].view.pickers
    head = edit_question(at, {"kind": "head", "text": "Which head is this?"})
    assert head.ask.right == ((shown["bert_layer"], shown["bert_head"]),)  # the view's head
    at.selectbox(key="story_pick").set_value(2).run()
    uid = at.session_state[present.STORY].steps[2].key
    edit_question(at, {"kind": "choice", "text": "What do they read?", "options": "Only one option"}, ok=False)
    assert not at.session_state[present.STORY].steps[2].ask  # refused, in the editor's words
    assert any("write 2 to 6, one per line" in e.value for e in at.error)
    at.text_area(key=f"q_options_{uid}").set_value("Their neighbours\nThe first sentence\nEverything").run()
    choice = edit_question(at, {"kind": "choice", "text": "What do they read?", "right": ["Their neighbours"]})
    at.selectbox(key="story_pick").set_value(3).run()
    number = edit_question(at, {"kind": "number", "text": "How many % is padding?", "has_right": True,
                                "answer": 20.0, "tolerance": 10.0, "unit": "%"})
    assert [s.ask.kind for s in (sentences, head, choice, number)] == \
        ["sentences", "head", "choice", "number"]

    assert any(b.key == "story_lesson" for b in at.get("download_button"))
    from ui.resources import document_store
    from ui.story import lesson_text

    toml = lesson_text(document_store(), at.session_state[present.STORY].tour)
    assert problems(toml) == [] and 'document = "' in toml  # "Try an example": the example by its name
    back = parse(toml, "mine")
    assert [s.question for s in back.steps] == ["Which 3 will it keep?", "Which head is this?", "What do they read?",
                                                "How many % is padding?", ""]
    assert [s.ask for s in back.steps[:4]] == [s.ask for s in (sentences, head, choice, number)]

    button(at, "story_present_start").click().run()  # presented: the question on the slide
    assert "Which 3 will it keep?" in " ".join(h.proto.body for h in at.get("html"))
    at.session_state[present.PRESENT] = None
    at.run()

    button(at, "story_teach").click().run()  # taught: two students answer the first question
    button(at, "class_start").click().run()
    code = at.session_state[TEACHING]
    students = [opened({"class": code}) for _ in range(2)]
    for s, picked in zip(students, ([0, 1, 2], [0, 2, 4])):
        s.pills[0].set_value(picked).run()
    step = A.step_id(at.session_state["class_step"])
    assert sorted(r[1] for r in A.of_step(shared_store(), code, step)) == [[0, 1, 2], [0, 2, 4]]

    button(at, "class_end").click().run()  # the class ends; the same lesson assigned as homework
    at.radio(key="homework_reveal").set_value("after").run()
    button(at, "homework_assign").click().run()
    made = at.session_state["_homework_made"]
    quick, slow = opened({"homework": made["code"]}), opened({"homework": made["code"]})  # two paces
    quick.pills[0].set_value([0, 1, 2]).run()
    button(quick, "lesson_next").click().run()
    asked = f"answer_{A.step_id(quick.session_state['class_step'])}"  # the head question, a step ahead
    quick.selectbox(key=f"{asked}_layer").set_value(0).run()
    quick.selectbox(key=f"{asked}_head").set_value(1).run()
    slow.pills[0].set_value([1, 2, 3]).run()
    rows = list(csv.DictReader(io.StringIO(A.as_csv(shared_store(), made["code"], A.asks_of(at.session_state["class_own_lessons"])))))
    assert sorted(r["answer"] for r in rows) == ["BERT 1.2", "sentences 1, 2, 3", "sentences 2, 3, 4"]

    button(at, "story_export").click().run()  # exported: a handout, read back
    exported = at.session_state[present.EXPORTS]
    assert exported["html"].count("<section class='slide'") == 5 and "Answers, for the teacher" not in exported["html"]
    assert exported["handout_html"].count("<section class='slide'") == 6
    assert "Answers, for the teacher" in exported["handout_html"]
    assert exported["handout_pdf"] is not None or present.chromium() is None, exported["handout_error"]
    if exported["handout_pdf"] is not None and shutil.which("pdftotext"):
        (tmp_path / "lesson.pdf").write_bytes(exported["handout_pdf"])
        pages = [p for p in subprocess.run(["pdftotext", "-layout", str(tmp_path / "lesson.pdf"), "-"],
                                           capture_output=True, text=True, check=True).stdout.split("\f") if p.strip()]
        assert len(pages) == 6 and "Which 3 will it keep?" in pages[0] and "Step 3: Their neighbours" in pages[-1]




@pytest.mark.slow
def test_a_story_taught_as_a_class_shows_students_each_step_as_the_story_holds_it(summarizer):
    """Issue 69: story → class → what the class shows. Each step's view reaches the students as the
    story holds it (its k, trigram blocking, page and controls), with no lesson file in between."""
    from ui import classroom as C, present

    at = summarize(new_app(), SHORT, k=2)
    at.checkbox(key="block_trigram").uncheck().run()
    next(b for b in at.button if b.label == "Summarize").click().run()
    button(at, "story_add").click().run()  # step 1: the summary at k = 2, trigram blocking off
    at.switch_page("pages/bert_attention.py").run()
    at.session_state["bert_layer"], at.session_state["bert_head"] = 3, 1
    at.run()
    button(at, "story_add").click().run()  # step 2: BERT layer 4, head 2
    steps = at.session_state[present.STORY].steps
    button(at, "story_teach").click().run()
    button(at, "class_start").click().run()
    code = at.session_state[C.TEACHING]
    student = opened({"class": code})
    shown = (student.session_state["k"], student.session_state["block_trigram"])
    assert not student.exception and shown == (steps[0].view.k, steps[0].view.tb) == (2, False)
    button(at, "lesson_next").click().run()
    student.session_state[C.MOVED] = True  # what the browser's poll of the class's file sends (no JS in AppTest)
    student.run()
    assert student.title[0].value == "BERT attention"
    assert {k: student.session_state[k] for k in steps[1].view.pickers} == dict(steps[1].view.pickers)
