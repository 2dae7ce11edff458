"""Classroom (issue 33): the store on SQLite and PostgreSQL, a class's versions and attendance,
the shipped lesson page by page, and a teacher and a student in two sessions (AppTest)."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from viz.common import markdown_text

from ui import classroom as C
from ui.classroom import session as S
from ui.store import Store
from ui.arrival import script_of
from ui.tour import lessons

ROOT = Path(__file__).resolve().parents[1]


def test_documents_are_kept_most_recent_first_on_both_back_ends(store):
    for n in range(5):
        store.put(f"id:{n}", f"text {n}")
        time.sleep(0.01)
    assert len(store) == 3 and store.get("id:0") is None and store.get("id:4") == "text 4"
    store.get("id:2")  # used now: kept over id:3
    store.put("id:5", "text 5")
    assert store.get("id:3") is None and store.get("id:2") == "text 2"
    store.put("id:5", "text 5")  # twice: one row
    assert len(store) == 3


def test_a_class_moves_its_version_only_on_change_and_counts_its_students(store):
    code = C.start(store, {"page": ""}, leader="t")
    assert len(code) == 6 and C.valid_code(code) and C.version(store, code) == 1
    publish = lambda view, drawn=False: C.publish(store, code, view, "t", drawn)  # noqa: E731
    publish({"page": ""})
    assert C.version(store, code) == 1  # nothing changed: nothing for students to do
    publish({"page": "bert_attention", "pickers": {"bert_layer": 3}})
    assert C.version(store, code) == 2 and C.lookup(store, code) == ({"page": "bert_attention",
                                                                       "pickers": {"bert_layer": 3}}, 2)
    drawn = {"page": "bert_attention", "pickers": {"bert_layer": 3, "bert_colors": "Viridis"}}
    publish(drawn, drawn=True)  # the page drew a picker at its default: stored, no new version
    assert C.lookup(store, code) == (drawn, 2)
    # before the page (or after a run cut short by the teacher's next click) a picker that appears
    # may hold the teacher's choice: it moves the version, or students would never take it
    publish({**drawn, "pickers": {**drawn["pickers"], "bert_head": 5}})
    assert C.version(store, code) == 3
    drawn = {**drawn, "pickers": {**drawn["pickers"], "bert_head": 5}}
    publish({"page": "bert_attention", "pickers": {"bert_layer": 4, "bert_colors": "Viridis", "bert_head": 5}},
            drawn=True)
    assert C.version(store, code) == 4  # a changed value moves it
    publish({"page": "learn", "pickers": {"bert_layer": 4, "bert_colors": "Viridis", "bert_head": 5, "learn_head": 1}},
            drawn=True)
    assert C.version(store, code) == 5  # so does a page with a new picker
    C.seen(store, code, "a", True)
    C.seen(store, code, "b", False)
    C.seen(store, code, "a", True)
    assert C.attendance(store, code) == (2, 1)
    old = C.start(store, {}, valid_hours=-1)  # a link past its time
    assert C.version(store, old) is None and C.lookup(store, old) == "ended" and C.lookup(store, "NOPE") == "unknown"


def test_the_shipped_lesson():
    lesson = lessons()["attention_in_20_minutes"]
    assert 8 <= len(lesson.steps) <= 12 and lesson.title == "Attention in a summarizer in 20 minutes"
    pages = {p.stem for p in (ROOT / "pages").glob("*.py")}
    assert all(script_of(s.page)[len("pages/"):-3] in pages and s.text and s.question for s in lesson.steps)


# ---------------------------------------------------------------- in the app (AppTest)

from helpers import SHORT, button, charts, new_app, summarize

TITLES = {"": "Summary", "why": "Why this summary", "bert_attention": "BERT attention",
          "sentence_encoder": "Sentence encoder", "masks_positions": "Masks & positions", "heads": "Heads",
          "what_if": "What if", "learn": "Learn"}


def test_the_lesson_self_paced_page_by_page(summarizer):
    """Pick and Next through every step alone: each opens its page with its view and shows its text."""
    lesson = lessons()["attention_in_20_minutes"]
    at = new_app()
    at.selectbox(key="class_lesson").set_value("attention_in_20_minutes").run()  # opens its first step
    for n, step in enumerate(lesson.steps):
        assert not at.exception, (n, at.exception)
        assert at.title[0].value.startswith(TITLES[step.page]), (n, step.page)
        assert at.info, (n, at.main)
        assert f"Step {n + 1} of {len(lesson.steps)}" in at.info[0].value
        assert markdown_text(step.question) in at.info[0].value  # a lesson's words, shown as text
        for key, value in step.view.pickers.items():
            assert at.session_state[key] == value, (n, key)
        shown = step.view.pickers
        if step.page == "bert_attention" and shown.get("bert_show") == "attention":
            assert f"BERT layer {shown['bert_layer'] + 1}, head {shown['bert_head'] + 1}" in \
                charts(at)[0].proto.spec
        if n < len(lesson.steps) - 1:
            button(at, "lesson_next").click().run()
    assert button(at, "lesson_next").disabled
    button(at, "lesson_back").click().run()
    assert at.title[0].value.startswith(TITLES[lesson.steps[-2].page])


def test_a_student_follows_the_teacher_leaves_and_comes_back(summarizer, monkeypatch):
    """Two sessions on one store: the student's follow check takes the teacher's page, document and
    head; Leave keeps the student's own view; Back to the teacher catches up. A wrong password and
    an expired link are said."""
    monkeypatch.setenv("MICROSCOPE_TEACHER_PASSWORD", "owl")
    teacher = summarize(new_app(), SHORT)
    teacher.text_input(key="class_password").set_value("cat")
    button(teacher, "class_start").click().run()
    assert "Wrong teacher password" in teacher.error[0].value and C.TEACHING not in teacher.session_state
    teacher.text_input(key="class_password").set_value("owl")
    button(teacher, "class_start").click().run()
    code = teacher.session_state[C.TEACHING]
    assert f"?class={code}" in teacher.get("code")[0].value
    assert teacher.get("image")  # the join link as a QR code

    student = joined(code)
    assert not student.exception and student.title[0].value == "Summary"
    assert student.session_state["document"] == SHORT  # the teacher's document, from the store
    teacher.switch_page("pages/bert_attention.py").run()
    teacher.session_state["bert_layer"], teacher.session_state["bert_head"] = 3, 4
    teacher.run()
    assert json.loads(C.poll_file(teacher_store(), code).read_text())["v"] == C.version(teacher_store(), code)
    assert not C.static_file(code).exists()  # the polled name is not the join code
    student.session_state[C.MOVED] = True  # what the browser's poll of that file sends (no JS in AppTest)
    student.run()
    assert student.title[0].value == "BERT attention" and "BERT layer 4, head 5" in charts(student)[0].proto.spec
    assert C.attendance(teacher_store(), code) == (1, 1)

    button(student, "class_leave").click().run()
    teacher.switch_page("pages/learn.py").run()
    student.session_state[C.MOVED] = True
    student.run()
    assert student.title[0].value == "BERT attention"  # exploring: not moved
    student.switch_page("pages/sentence_encoder.py").run()
    student.session_state["inter_layer"] = 1  # a picker the teacher never drew
    student.run()
    button(student, "class_back").click().run()
    assert student.title[0].value.startswith("Learn")
    assert "inter_layer" not in student.session_state  # at its default again, as the teacher's

    late = joined(C.start(teacher_store(), {}, valid_hours=-1))
    assert any("has ended." in w.value for w in late.warning), [w.value for w in late.warning]


def joined(code: str):
    """A new session opened on the class's join link."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params["class"] = code
    return at.run()


def teacher_store():
    from ui.resources import document_store

    return document_store()


def test_students_reads_do_not_wait_for_a_writer_and_a_failed_query_leaves_the_store_working(tmp_path):
    """SQLite in write-ahead-log mode: a class's version is read while another process holds the
    write lock (before, every read took that lock and a class's students queued behind the teacher)."""
    import sqlite3
    import threading

    s = Store(tmp_path / "store.sqlite3")
    code = C.start(s, {"page": ""}, leader="t")
    writer = sqlite3.connect(tmp_path / "store.sqlite3", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE classes SET version = 7")  # not committed yet
    got = []
    reader = threading.Thread(target=lambda: got.append(C.version(s, code)))
    reader.start()
    reader.join(10)
    assert got == [1]  # the last committed version, at once (a lock would hold it 30 s)
    writer.execute("COMMIT")
    assert C.version(s, code) == 7
    with pytest.raises(sqlite3.OperationalError):
        s.run("SELECT nope FROM classes", (), True)
    C.publish(s, code, {"page": "learn"}, "t")
    assert C.version(s, code) == 8


def test_concurrent_publishers_never_collide_on_the_version_file():
    """Issue 40: one temporary name per process made two threads' os.replace race (1,590 errors in
    2 × 2,000 calls); each call now writes its own."""
    import threading

    code, errors = "RACE" + os.urandom(3).hex().upper(), []

    def publish_many(offset: int):
        for v in range(2000):
            try:
                C.mirror(code, offset + v)
            except OSError as e:  # FileNotFoundError before the fix
                errors.append(e)

    threads = [threading.Thread(target=publish_many, args=(k * 10_000,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, f"{len(errors)} errors, e.g. {errors[0]!r}"
    assert json.loads(C.static_file(code).read_text())["v"] in (1999, 11_999)
    assert not list(C.STATIC.glob(f".{code}.*.tmp"))
    C.static_file(code).unlink()


def test_ending_a_class_ends_it_for_everyone_and_a_student_keeps_the_class_in_the_address(summarizer):
    """Issue 40: End ended the class only in the teacher's tab; a student's reload dropped them out
    of the class; the teacher's head pick did not reach the students on a short document; a bidi
    override in ?class= reversed the warning."""
    short = " ".join(SHORT.split(". ")[:4]) + "."  # under EXACT_TOKENS: every head's map is exact in the browser
    teacher = summarize(new_app(), short)
    button(teacher, "class_start").click().run()
    code = teacher.session_state[C.TEACHING]
    student = joined(code)
    teacher.switch_page("pages/bert_attention.py").run()
    assert '"relay":"head"' in charts(teacher)[0].proto.spec.replace(" ", "")  # the teacher's head clicks reach the server
    v = C.version(teacher_store(), code)
    teacher.session_state["bert_head"] = 4  # what the relay stores on a head button's click
    teacher.run()
    assert C.version(teacher_store(), code) > v  # the first pick moves the class
    student.session_state[C.MOVED] = True
    student.run()
    assert "head 5" in charts(student)[0].proto.spec
    assert student.query_params["class"] in (code, [code])  # after the page change: F5 stays in the class
    again = joined(code)  # a reload: a new session on that address
    assert not again.exception and again.session_state[C.JOINED] == code

    button(teacher, "class_end").click().run()
    assert C.TEACHING not in teacher.session_state and C.version(teacher_store(), code) is None
    gone = time.time() + max(4 * C.POLL_PROXIED_S, 2)  # the students' browsers see it gone (a mirror thread that read the
    while C.poll_file(teacher_store(), code).exists():  # class as live just before End writes it once more, then removes it)
        assert time.time() < gone, "the class's version file outlived End"
        time.sleep(0.05)
    student.session_state[C.MOVED] = True
    student.run()
    assert any(f"Class {code} has ended" in w.value for w in student.warning)
    late = joined(code)  # a new visitor: told it ended, and not given the document
    assert any("has ended" in w.value for w in late.warning) and late.session_state["document"] != short
    C.start(teacher_store(), {})  # another class starting does not purge it: still "has ended"
    assert C.lookup(teacher_store(), code) == "ended"

    odd = joined("AB\u202eCD")
    shown = " ".join(w.value for w in odd.warning)
    assert "\u202e" not in shown and "does not exist" in shown


def test_wrong_tries_are_counted_per_client_in_the_store_then_forgotten(store):
    """Issue 47: FREE_TRIES, then 2, 4, 8 … s, per client only; kept in the store, so another process
    (or this one after a restart: a new Store) counts the same tries; forgotten FORGET_S after the
    last one (the next wrong try clears them from the table)."""
    store.run("DELETE FROM throttle")
    assert [C.delay(n) for n in range(1, 10)] == [0, 0, 0, 0, 2, 4, 8, 16, 32] and C.delay(50) == C.MAX_WAIT_S
    t = C.Throttle(store)
    for n in range(1, 10):
        t.wrong("10.0.0.7")
        assert t.wait("10.0.0.7") == pytest.approx(C.delay(n), abs=0.5)
    assert t.wait("10.0.0.8") == 0  # another client is not held up
    restarted = C.Throttle(Store(store.where))
    assert restarted.wait("10.0.0.7") == pytest.approx(C.delay(9), abs=0.5)
    store.run("UPDATE throttle SET last = last - ?", (C.FORGET_S + 1,))
    assert restarted.wait("10.0.0.7") == 0
    restarted.wrong("10.0.0.9")
    assert store.run("SELECT who, failures FROM throttle", (), True) == [("10.0.0.9", 1)]
    t.right("10.0.0.9")
    assert store.run("SELECT COUNT(*) FROM throttle", (), True)[0][0] == 0


def test_only_the_leader_writes_and_a_resume_moves_the_lead_with_a_new_key(store):
    """Issue 47: the store refuses the writes of a session that does not lead the class (publish,
    a lesson step, End); a resume spends its key, makes a new one and moves the lead."""
    code = C.start(store, {"page": ""}, leader="a")
    key = C.new_resume_key(store, code)
    assert C.publish(store, code, {"page": "learn"}, "a") and C.version(store, code) == 2
    assert C.take_lead(store, code, "not the key", "b") is None and C.leads(store, code, "a")
    new = C.take_lead(store, code, key, "b")
    assert new and new != key and C.leads(store, code, "b") and not C.leads(store, code, "a")
    assert C.take_lead(store, code, key, "c") is None  # spent
    lesson = {"page": "heads", "lesson": {"lesson": "x", "step": 3}}
    assert not C.publish(store, code, lesson, "a") and C.version(store, code) == 2
    assert not C.end(store, code, "a") and C.version(store, code) == 2
    assert C.publish(store, code, lesson, "b") and C.version(store, code) == 3
    assert C.end(store, code, "b") and C.version(store, code) is None


def test_an_expired_class_forgets_its_view_and_document_ids_are_keyed(store, tmp_path):
    """Issue 47: a class past its time keeps no view (the document's id) once anyone asks for it or
    another class starts; a document's id is keyed with the server's secret, the same for every
    process on the store, so an id says nothing about a guessed text; a link made before still opens."""
    import hashlib

    from ui.link import doc_id

    asked = C.start(store, {"page": "", "doc": "id:1"}, valid_hours=-1)
    untouched = C.start(store, {"page": "", "doc": "id:2"}, valid_hours=-1)
    state = lambda code: store.run("SELECT state FROM classes WHERE code = ?", (code,), True)[0][0]  # noqa: E731
    assert C.lookup(store, asked) == "ended" and state(asked) == "{}"
    assert state(untouched) != "{}"
    C.start(store, {})
    assert state(untouched) == "{}" and C.lookup(store, untouched) == "ended"

    plain = "id:" + hashlib.sha256(b"a pasted text").hexdigest()[:16]
    assert doc_id("a pasted text", store) == doc_id("a pasted text", Store(store.where)) != plain
    assert doc_id("a pasted text", Store(tmp_path / "another server.sqlite3")) != doc_id("a pasted text", store)
    store.put(plain, "a pasted text")  # a link made before: its id names the row
    assert store.get(plain) == "a pasted text"


def resume(at, code: str, key: str, password: str | None = None):
    at.text_input(key="class_resume_code").set_value(code)
    at.text_input(key="class_resume_key_in").set_value(key)
    if password is not None:
        at.text_input(key="class_resume_password").set_value(password)
    return button(at, "class_resume").click().run()


def test_the_resume_key_stays_off_screen_a_student_cannot_lock_out_or_take_over(summarizer, monkeypatch, caplog):
    """Issue 47, with a teacher, a student and the teacher's second browser on one store: the key is
    not drawn beside the join link and QR code, only on demand; a student's wrong tries hold up
    only that student (no count per class); a junk code is refused before it is counted or
    logged; the teacher's resume moves the lead (a new key, the old tab told in one sentence,
    its writes refused), and the spent key no longer works. Clients: set per run (AppTest has no
    sockets)."""
    monkeypatch.setenv("MICROSCOPE_TEACHER_PASSWORD", "owl")
    teacher_store().run("DELETE FROM throttle")
    who = {"now": "198.51.100.1"}
    monkeypatch.setattr(S, "client", lambda: who["now"])
    teacher = summarize(new_app(), SHORT)
    teacher.text_input(key="class_password").set_value("owl")
    button(teacher, "class_start").click().run()
    code, key = teacher.session_state[C.TEACHING], teacher.session_state[C.RESUME]
    shown = lambda at: [c.value for c in at.get("code")]  # noqa: E731
    assert any(f"?class={code}" in c for c in shown(teacher)) and teacher.get("image")
    assert not any(key in c for c in shown(teacher))  # the projected screen: link and QR code, no key
    teacher.toggle(key="class_show_key").set_value(True).run()
    assert key in shown(teacher)
    teacher.toggle(key="class_show_key").set_value(False).run()
    assert key not in shown(teacher)

    student = joined(code)
    assert not any("away" in c.value for c in student.info)
    teacher_store().run("UPDATE attendance SET seen = ? WHERE code = ? AND session = ?",  # the tab closed
                        (time.time() - 600, code, C.TEACHER_SEAT))
    student.run()
    assert any("teacher has been away for 10 min" in c.value for c in student.info)  # above the page (a phone folds the sidebar)

    who["now"] = "198.51.100.2"  # a student's browser
    griefer = new_app()
    for n in range(C.FREE_TRIES):
        assert "wrong" in resume(griefer, code, f"guess {n}", "owl").error[0].value
    assert "try again in" in resume(griefer, code, "guess", "owl").error[0].value
    caplog.clear()
    junk = "Z" * 1000
    assert "6 letters" in resume(griefer, junk, "guess", "owl").error[0].value
    assert junk not in caplog.text and not teacher_store().run(
        "SELECT 1 FROM throttle WHERE who LIKE ?", ("%ZZZZ%",), True)

    who["now"] = "198.51.100.1"  # the teacher, in another browser: not held up by the student's tries
    other = resume(new_app(), code.lower(), key, "owl")
    assert other.session_state[C.TEACHING] == code and not other.exception
    new_key = other.session_state[C.RESUME]
    assert new_key != key
    v = C.version(teacher_store(), code)
    teacher.switch_page("pages/learn.py").run()  # the old tab: told, and its view not published
    assert C.TEACHING not in teacher.session_state and not teacher.exception
    assert any(f"Class {code} is led from another tab or browser now" in w.value for w in teacher.warning)
    assert any(b.label == "Lead it here again" for b in teacher.get("link_button"))  # in the main area, one click
    assert C.version(teacher_store(), code) == v
    summarize(other, SHORT).switch_page("pages/heads.py").run()  # the new leader's is
    assert C.version(teacher_store(), code) > v
    student.run()  # the teacher's page is open again: no notice
    assert not any("away" in c.value for c in student.info)
    spent = resume(new_app(), code, key, "owl")
    assert "wrong" in spent.error[0].value and C.TEACHING not in spent.session_state


def test_a_student_takes_only_the_followed_pickers_of_a_stored_view(summarizer):
    """Issue 47: a view in the store (written by anyone who can write it) sets only FOLLOWED pickers
    in a student's session, nothing else of it (here: who leads, the document's k)."""
    view = {"page": "bert_attention", "doc": None, "k": 3, "tb": True, "w": None, "lesson": None,
            "pickers": {"bert_layer": 2, C.TEACHING: "ABCDEF", C.RESUME: "x", "k": 9}}
    student = joined(C.start(teacher_store(), view))
    assert not student.exception and student.session_state["bert_layer"] == 2
    assert C.TEACHING not in student.session_state and C.RESUME not in student.session_state
    assert student.session_state["k"] != 9


def test_a_postgresql_restart_is_one_plain_error_then_served_again_by_the_same_store(postgres):
    """PostgreSQL stopped: a call raises ui.store.Unavailable (a sentence, within libpq's timeouts),
    not the driver's error; started again: the same Store (its pooled connections broken by the
    restart) serves at once."""
    from ui.store import RETRY_S, Unavailable

    s = Store(postgres.url)
    s.put("id:restart", "kept")
    postgres.stop()
    with pytest.raises(Unavailable, match="cannot be reached"):  # (how fast: python -m benchmarks.store)
        s.get("id:restart")
    with pytest.raises(Unavailable, match="cannot be reached"):  # the next calls of a run: at once
        s.run("SELECT 1", (), True)
    postgres.start()
    time.sleep(RETRY_S)
    assert s.get("id:restart") == "kept"
    postgres.stop()  # a restart between two calls: the pooled connection is broken, the call does not fail
    postgres.start()
    assert s.get("id:restart") == "kept"
