"""Strangers on one server, a school behind one address (issue 57), in AppTest sessions on one
store: a corpus upload is its maker's; 30 students guessing on the teacher's address never keep
the teacher out; a seat is a browser the server issued a token to, capped per address; parsed
structures have a depth limit; a lesson's images are not fetched. The serving side (nginx, uvicorn,
CSP, cookies, SIGTERM) is in tests/test_security.py and tests/test_serve.py."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from helpers import SHORT, button, new_app, opened, shared_store, summarize
from ui import classroom as C
from ui.classroom import session as S

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- 1. a corpus upload is its maker's

def test_a_corpus_upload_is_listed_only_to_its_maker_and_opens_only_by_its_link():
    from ui.corpus_runs import EXAMPLE, EXAMPLE_NAME, corpus_root, folder, new_upload, runs

    name, path = new_upload()  # what "Run the corpus" makes: a folder named by 128 random bits
    shutil.copytree(EXAMPLE, path, dirs_exist_ok=True)
    (path / "input.jsonl").write_text('{"id": "secret-memo-1", "text": "CONFIDENTIAL-7Q. It was. It is."}\n')
    older = corpus_root() / "upload-20261126-101010-abcdef12"  # an upload an older version kept in the root
    shutil.copytree(EXAMPLE, older, dirs_exist_ok=True)
    public = corpus_root() / "cli-made"  # a run made on the server's command line: public
    shutil.copytree(EXAMPLE, public, dirs_exist_ok=True)
    assert re.fullmatch(r"upload:[A-Za-z0-9_-]{22}", name)
    assert name in runs([name]) and name not in runs() and older.name not in runs() and "cli-made" in runs()
    for bad in ("upload:../../etc", "upload:" + "A" * 21, "../x"):
        with pytest.raises(ValueError):
            folder(bad)

    stranger = opened(page="pages/corpus.py")  # another visitor, no link: the upload is not listed
    options = stranger.selectbox(key="corpus_run").options
    assert not stranger.exception and not any("upload" in o.lower() for o in options), options
    assert EXAMPLE_NAME in options and "cli-made" in options
    linked = opened({"corpus_run": name}, page="pages/corpus.py")  # its link (the maker shares it, as a story's)
    assert not linked.exception and linked.session_state["corpus_run"] == name
    assert any(o.startswith("Your upload of") for o in linked.selectbox(key="corpus_run").options)
    guessed = opened({"corpus_run": "upload:" + "B" * 22}, page="pages/corpus.py")  # a made-up name
    assert any("not on this server" in w.value for w in guessed.warning) and not guessed.exception


# ---------------------------------------------------------------- 2. the room cannot lock the teacher out

def resume(at, code: str, key: str, password: str | None = None):
    at.text_input(key="class_resume_code").set_value(code)
    at.text_input(key="class_resume_key_in").set_value(key)
    if password is not None:
        at.text_input(key="class_resume_password").set_value(password)
    return button(at, "class_resume").click().run()


def start(at, password: str):
    at.text_input(key="class_password").set_value(password)
    return button(at, "class_start").click().run()


@pytest.mark.slow
def test_thirty_students_guessing_on_the_teachers_address_never_keep_the_teacher_out(summarizer, monkeypatch):
    """A school's room behind one address (NAT): 30 students each make 7 wrong resume keys and 9
    wrong passwords. Each guessing browser is held up (the wait grows, and is never said as
    "0 s"); the teacher, on the same address, resumes with the right key and starts a class with
    the right password at once."""
    monkeypatch.setenv("MICROSCOPE_TEACHER_PASSWORD", "owl")
    shared_store().run("DELETE FROM throttle")
    monkeypatch.setattr(S, "client", lambda: "192.0.2.44")  # everyone: the school's one address
    teacher = start(summarize(new_app(), SHORT), "owl")
    code, key = teacher.session_state[C.TEACHING], teacher.session_state[C.RESUME]
    messages = []
    for n in range(30):
        student = new_app()
        for t in range(7):
            messages.append(resume(student, code, f"guess-{n}-{t}", "owl").error[0].value)
        for t in range(9):
            messages.append(start(student, f"pass-{n}-{t}").error[0].value)
    assert sum("try again in" in m for m in messages) > 100  # the guessers are held up
    assert not any(re.search(r"\b0 s\b", m) for m in messages), [m for m in messages if " 0 s" in m][:3]
    assert shared_store().run("SELECT failures FROM throttle WHERE who = ?", ("192.0.2.44",), True)[0][0] > 100
    assert shared_store().run("SELECT failures FROM throttle WHERE who = ?", (f"class {code}",), True)[0][0] > 30

    again = resume(new_app(), code, key, "owl")  # the teacher's other browser (F5, a new tab): in at once
    assert not again.error and again.session_state[C.TEACHING] == code
    other = start(summarize(new_app(), SHORT), "owl")  # and a new class with the right password: at once
    assert not other.error and C.TEACHING in other.session_state
    typo = new_app()  # a teacher's typo is wrong, not a wait: the room's guesses are not theirs
    assert resume(typo, code, "typo", "owl").error[0].value == "That code, key or password is wrong."


# ---------------------------------------------------------------- 3. a seat is a person's browser

@pytest.mark.slow
def test_a_seat_is_a_browser_the_server_issued_a_token_to_capped_per_address(summarizer, monkeypatch):
    """Seats come from tokens the server issued (a made-up one is a new seat, not that one); the
    same browser again (its address or cookie) is the same seat; new seats per address and class
    stop at the cap, which the student and the teacher are told."""
    from ui.classroom import answers as A

    monkeypatch.setenv("MICROSCOPE_SEATS_PER_ADDRESS", "4")
    who = {"now": "198.51.100.7"}
    monkeypatch.setattr(S, "client", lambda: who["now"])
    teacher = summarize(new_app(), SHORT)
    button(teacher, "class_start").click().run()
    code = teacher.session_state[C.TEACHING]
    made_up = "f" * 32
    first = opened({"class": code, "seat": made_up})
    seat = first.session_state[C.SESSION]
    assert seat != made_up and A.issued(shared_store(), code, seat) and not A.issued(shared_store(), code, made_up)
    assert opened({"class": code, "seat": seat}).session_state[C.SESSION] == seat  # a reload: the same seat
    for _ in range(3):
        opened({"class": code})
    refused = opened({"class": code})  # the 5th new seat from one address
    assert C.JOINED not in refused.session_state
    assert any("as many seats from your network as it allows: ask your teacher" in w.value for w in refused.warning)
    assert opened({"class": code, "seat": seat}).session_state[C.SESSION] == seat  # an old seat still sits
    who["now"] = "198.51.100.8"
    assert C.JOINED in opened({"class": code}).session_state  # another address: its own seats
    assert A.seat_origins(shared_store(), code) == (5, 4, 1)
    teacher.run()
    said = " ".join(c.value for c in teacher.caption)
    assert "5 seats: 0 answered, 5 never answered; at most 4 from one address" in said and "1 new seat refused" in said


# ---------------------------------------------------------------- 5. depth limits, lesson images

def test_deeply_nested_lesson_files_and_links_are_one_sentence_not_a_crash():
    from ui.tour import problems

    deep = 'title = "x"\ndocument = "bbc_insurance_bosses"\nk = ' + "[" * 5000 + "]" * 5000 + "\n"
    assert problems(deep) == [(0, "it is nested too deeply to be a lesson")]
    from ui.view import View

    view, said = View.from_query({"edits": "[" * 100_000 + "]" * 100_000})
    assert view.pickers == {} and len(said) == 1


@pytest.mark.slow
def test_a_deep_edits_link_is_said_and_the_rest_restores(summarizer):
    at = opened({"doc": "bbc_insurance_bosses", "edits": "[" * 1900 + "]" * 1900})
    said = re.sub(r"\\(.)", r"\1", " ".join(w.value for w in at.warning))  # (Markdown escapes removed)
    assert not at.exception and "edits=[[[" in said and "cannot be read" in said and len(said) < 400


def test_a_lessons_images_are_shown_as_words_never_fetched():
    from ui.tour import parse

    lesson = parse('title = "See ![logo](https://tracker.example/t.png)"\ndocument = "bbc_insurance_bosses"\n'
                   '[[steps]]\ntext = "A ![cat](http://x.example/c.png) and ![][r]"\n'
                   'question = "![q](//x.example/q.gif)?"\n'
                   '[steps.answer]\nkind = "choice"\noptions = ["![a](http://x.example/a.png)", "b"]\n', "x")
    texts = [lesson.title, lesson.steps[0].text, lesson.steps[0].question, *lesson.steps[0].ask.options]
    assert not any("example" in t for t in texts), texts
    assert lesson.title == "See [image: logo]" and lesson.steps[0].ask.options[0] == "[image: a]"
