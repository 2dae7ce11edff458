"""Issue 68, a school's network, the parts that need no browser: join links students can open
(host names, 0.0.0.0, loopback, no scheme), seats, passwords and limits."""
from __future__ import annotations

import pytest


@pytest.mark.parametrize("link, said", [
    ("http://0.0.0.0:8610/?class=ABCDEF", "every address of the server"),
    ("http://[::]:8610/?class=ABCDEF", "every address of the server"),
    ("http://127.0.0.1:8501/?class=ABCDEF", "localhost"),
    ("http://localhost:8501/?homework=X", "localhost"),
    ("http://[::1]:8501/?class=ABCDEF", "localhost"),
    ("10.0.0.5:8080/?class=ABCDEF", "no http:// or https://"),
    ("classroom.test:8611/?class=ABCDEF", "no http:// or https://"),
])
def test_join_links_no_student_can_open_are_said_so(link, said):
    from ui.classroom.address import unreachable

    assert said in unreachable(link)


@pytest.mark.parametrize("link", ["http://classroom.test:8611/?class=ABCDEF", "https://school.local/?homework=X",
                                  "http://10.0.0.5:8080/?class=ABCDEF", "HTTP://[fd00::5]:80/?class=ABCDEF"])
def test_join_links_at_host_names_and_network_addresses_are_fine(link):
    from ui.classroom.address import unreachable

    assert unreachable(link) is None


def test_join_links_take_the_public_url_or_the_teachers_address(monkeypatch):
    from ui.classroom import address

    monkeypatch.delenv(address.PUBLIC_URL, raising=False)
    assert address.link("http://classroom.test:8611/bert_attention?doc=id1#x", "class=ABCDEF") == \
        "http://classroom.test:8611/bert_attention/?class=ABCDEF"
    monkeypatch.setenv(address.PUBLIC_URL, "http://classroom.test:8611/")
    assert address.link("http://127.0.0.1:8501/", "homework=X") == "http://classroom.test:8611/?homework=X"
    assert address.check_public_url() is None
    monkeypatch.setenv(address.PUBLIC_URL, "10.0.0.5:8080")
    assert "no http://" in address.check_public_url()


def test_serve_refuses_a_public_url_without_a_scheme_in_one_line(monkeypatch, capsys):
    from scripts import serve

    monkeypatch.setenv("MICROSCOPE_PUBLIC_URL", "10.0.0.5:8080")
    with pytest.raises(SystemExit):
        serve.main(["--processes", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert "MICROSCOPE_PUBLIC_URL=10.0.0.5:8080" in err[-1] and "http://" in err[-1]
    assert serve.where("0.0.0.0") != "0.0.0.0" and serve.where("10.0.0.5") == "10.0.0.5"


# ---------------------------------------------------------------- seats: no one address fills a class

class Clock:
    def __init__(self):
        self.now = 1_800_000_000.0

    def __call__(self):
        return self.now


def test_seats_a_room_behind_one_address_all_sit_within_a_minute():
    from ui.classroom.answers import SEAT_BURST, seat_wait

    joined = [i * 1.5 for i in range(SEAT_BURST)]  # a room of SEAT_BURST joining over a minute
    assert all(seat_wait(joined[:i], joined[i]) == 0 for i in range(SEAT_BURST))
    burst = [0.0] * SEAT_BURST  # a script: all at once
    assert seat_wait(burst, 0.0) > 0 and seat_wait(burst, 0.0 + 6.0) == 0  # one more every SEAT_EVERY_S


def test_seats_a_script_on_the_rooms_address_gets_a_burst_then_one_every_few_seconds(store, monkeypatch):
    from ui.classroom import answers as A
    from ui.classroom import store as C

    clock = Clock()
    monkeypatch.setattr(A.time, "time", clock)
    monkeypatch.setattr(C.time, "time", clock)
    code = C.start(store, {}, leader="teacher")
    said = [A.sit(store, code, A.new_seat(store, code), "203.0.113.5") for _ in range(60)]  # one script, at once
    assert said[:A.SEAT_BURST] == [None] * A.SEAT_BURST
    assert all(w is not None and w.startswith("wait ") for w in said[A.SEAT_BURST:]), said
    assert "reload this page in 6 s" in A.refused_words(said[-1])
    assert A.sit(store, code, A.new_seat(store, code), "198.51.100.1") is None  # a classmate on another address
    clock.now += A.SEAT_EVERY_S
    assert A.sit(store, code, A.new_seat(store, code), "203.0.113.5") is None  # then slowly
    assert A.sit(store, code, A.new_seat(store, code), "203.0.113.5").startswith("wait")
    assert A.seat_origins(store, code) == (A.SEAT_BURST + 2, A.SEAT_BURST + 1, 60 - A.SEAT_BURST + 1)


def test_seats_the_teacher_removes_silent_seats_locks_the_room_and_raises_the_cap(store, monkeypatch):
    from ui.classroom import answers as A
    from ui.classroom import store as C

    monkeypatch.setenv("MICROSCOPE_SEATS_PER_ADDRESS", "5")
    code = C.start(store, {}, leader="teacher")
    seats = [A.new_seat(store, code) for _ in range(6)]
    assert [A.sit(store, code, s, "school") for s in seats] == [None] * 5 + ["full"]
    assert "ask your teacher to make room" in A.refused_words("full")
    step = A.step_id({"lesson": "l", "step": 0})
    assert A.give(store, code, step, seats[0], 1, True) and A.give(store, code, step, seats[1], 0, False)
    assert A.answered_seats(store, code) == (2, 3)
    assert A.remove_silent(store, code, "a student") == 0  # only the leader
    assert A.remove_silent(store, code, "teacher") == 3
    assert A.answered_seats(store, code) == (2, 0) and A.seat_numbers(store, code).keys() == set(seats[:2])
    assert not A.give(store, code, step, seats[2], 1, True)  # a removed seat answers nothing
    assert A.sit(store, code, seats[5], "school") is None  # room again
    assert not A.set_room(store, code, "a student", locked=True)
    assert A.set_room(store, code, "teacher", locked=True) and A.room(store, code) == (True, 5)
    assert A.sit(store, code, A.new_seat(store, code), "elsewhere") == "locked"
    assert "closed this class to new students" in A.refused_words("locked")
    assert A.sit(store, code, seats[0], "school") is None  # a reload keeps its seat in a locked room
    assert A.set_room(store, code, "teacher", locked=False, cap=50) and A.room(store, code) == (False, 50)
    assert A.sit(store, code, A.new_seat(store, code), "school") is None


# ---------------------------------------------------------------- limits: every text, and work that stops

def test_limits_a_reference_past_its_limit_is_one_sentence_not_a_minute_of_work():
    from analysis.quality import MAX_REFERENCE_CHARS, quality

    sentences = ["The cat sat on the mat.", "A dog barked.", "Then it rained."]
    assert quality(sentences, [0], "The cat sat. " * (MAX_REFERENCE_CHARS // 13), 1).rouge  # at the limit: scored
    with pytest.raises(ValueError, match="at most 10,000"):
        quality(sentences, [0], "x" * (MAX_REFERENCE_CHARS + 1), 1)


def test_limits_a_run_stops_at_the_next_window_once_its_caller_has_gone(summarizer):
    """model.cancel: a thread's run stops between two windows once its check says so; other threads
    and later runs are untouched, and the check is removed after the block."""
    import threading

    from model.cancel import Cancelled, unless
    from helpers import SHORT

    long = (SHORT + "\n") * 6  # several windows
    asked = []

    def gone():
        asked.append(1)
        return len(asked) > 1  # the caller leaves after the first window

    with pytest.raises(Cancelled), unless(gone):
        summarizer.summarize(long, k=3)
    assert len(asked) == 2  # stopped at the second window, not after the last
    other = []
    with unless(lambda: True):  # this thread's check does not reach another thread
        t = threading.Thread(target=lambda: other.append(summarizer.summarize(long, k=3)))
        t.start()
        t.join()
    assert len(other[0].selected) == 3 and len(summarizer.summarize(long, k=3).selected) == 3


def test_a_run_says_each_window_it_starts_to_whoever_watches_and_the_app_draws_a_bar(summarizer, monkeypatch):
    """model.cancel.watched: a thread's runs say each BERT window they start, in order; ui.runs.progress
    draws that as a bar over a Summarize (What if: two runs, one bar), after SHOW_AFTER_S only (a
    cached result draws none), and removes it when done."""
    import time

    from streamlit.delta_generator import DeltaGenerator

    from helpers import SHORT
    from model.cancel import watched
    from ui import runs

    long = (SHORT + "\n") * 6
    n = len(summarizer.encode(long, summarizer.max_windows).window_starts)
    assert n > 1
    said = []
    with watched(lambda w, of: said.append((w, of))):
        summarizer.summarize(long, k=3)
    assert said == [(w, n) for w in range(n)]
    said.clear()
    summarizer.summarize(long, k=3)  # no longer watched
    assert said == []

    drawn = []
    real = DeltaGenerator.progress
    monkeypatch.setattr(DeltaGenerator, "progress", lambda self, value, text=None: (
        drawn.append((value, text)), real(self, value, text))[1])
    monkeypatch.setattr(runs, "SHOW_AFTER_S", 0.0)
    with runs.progress("Running A and B", runs=2):
        time.sleep(0.2)  # the timer's first draw
        summarizer.summarize(long, k=3)
        summarizer.summarize(long + " One more sentence here.", k=3)
    assert drawn[0] == (0.0, "Running A and B…") and len(drawn) == 1 + 2 * n, drawn
    values = [v for v, _ in drawn]
    assert values == sorted(values) and values[-1] == (1 + (n - 1) / n) / 2
    assert drawn[-1][1] == f"Running A and B: BERT window {n} of {n}, run 2 of 2…"
    drawn.clear()
    monkeypatch.setattr(runs, "SHOW_AFTER_S", 5.0)
    with runs.progress("Running BERT"):
        summarizer.summarize(long, k=3)
    time.sleep(0.1)
    assert drawn == []  # over before SHOW_AFTER_S: no bar at all


def test_a_computation_that_counts_its_steps_draws_one_bar_gone_however_it_ends(summarizer, monkeypatch):
    """ui.runs.stepped, the Why, Heads, What if and BERT attention pages' bars: it says what is being
    computed at once, moves with the analysis's own progress(done, total), says the step after what,
    and is removed when the block ends, an error included (the Why page's scoreboard left its bar
    at 100 % before)."""
    from streamlit.delta_generator import DeltaGenerator

    from analysis.mixing import mixing
    from helpers import SHORT
    from ui import runs

    drawn, emptied = [], []
    real_progress, real_empty = DeltaGenerator.progress, DeltaGenerator.empty
    monkeypatch.setattr(DeltaGenerator, "progress", lambda self, value, text=None: (
        drawn.append((value, text)), real_progress(self, value, text))[1])
    monkeypatch.setattr(DeltaGenerator, "empty", lambda self: (emptied.append(len(drawn)), real_empty(self))[1])
    real_bar = runs.st.progress  # bound to the page's main container when streamlit was imported
    monkeypatch.setattr(runs.st, "progress", lambda value, text=None: (drawn.append((value, text)), real_bar(value, text))[1])
    L = summarizer.trace(SHORT).bert_attention.shape[0]  # BERT layers
    with runs.stepped("Measuring", lambda done, total: f"layer {min(done, total - 1)} of {total - 1}") as step:
        mixing(summarizer, SHORT, progress=step)
    assert drawn[0] == (0.0, "Measuring…") and len(drawn) == 1 + L + 1 and emptied == [len(drawn)], drawn
    assert [v for v, _ in drawn] == sorted(v for v, _ in drawn) and drawn[-1] == (1.0, f"Measuring: layer {L} of {L}")
    drawn.clear(), emptied.clear()
    with pytest.raises(ZeroDivisionError), runs.stepped("Dividing", "step {done} of {total}") as step:
        step(1, 3)
        1 / 0
    assert drawn == [(0.0, "Dividing…"), (1 / 3, "Dividing: step 1 of 3")] and emptied == [2]


# ---------------------------------------------------------------- corpus uploads: private on disk

def test_corpus_uploads_are_private_on_disk_and_another_users_folder_is_refused(tmp_path, monkeypatch):
    import os
    import subprocess
    import sys

    from ui.corpus_runs import UPLOADS, new_upload
    from ui.store import private_file

    monkeypatch.setenv("MICROSCOPE_CORPUS_ROOT", str(tmp_path / "corpus"))
    _, path = new_upload()
    assert path.stat().st_mode & 0o777 == 0o700 and path.parent.stat().st_mode & 0o777 == 0o700
    private_file(path / "input.jsonl")  # as pages/corpus.py writes it
    (path / "input.jsonl").write_text('{"text": "a memo"}\n')
    assert (path / "input.jsonl").stat().st_mode & 0o777 == 0o600
    # the run's process, as pages/corpus.py starts it: what it writes is private too
    subprocess.run([sys.executable, "-c", "import pathlib; pathlib.Path('shards').mkdir(); "
                    "pathlib.Path('shards/s.jsonl').write_text('x'); pathlib.Path('report.json').write_text('{}')"],
                   cwd=path, umask=0o077, check=True)
    assert {p.name: p.stat().st_mode & 0o077 for p in path.rglob("*")} == \
        {"input.jsonl": 0, "shards": 0, "s.jsonl": 0, "report.json": 0}
    if os.geteuid() == 0:  # another user pre-made the uploads folder (to read what lands there): refused
        os.chown(tmp_path / "corpus" / UPLOADS, 65534, 65534)
        with pytest.raises(ValueError, match="belongs to another user"):
            new_upload()


# ---------------------------------------------------------------- lesson and story text: a real parser

@pytest.mark.parametrize("source, shown", [
    ("See ![a [b] c](http://tracker.example/1.png) here", "See [image: a [b] c] here"),  # brackets in the alt
    ("See ![x\\]y](http://tracker.example/2.png) here", "See [image: x]y] here"),  # an escaped bracket
    ("See ![t] here\n\n[t]: http://tracker.example/3.png", "See [image: t] here"),  # a reference-style image
    ('<img src="http://tracker.example/4.png"> and <b>bold</b>', '<img src="http://tracker.example/4.png"> and <b>bold</b>'),
    ("**Layer 1**, head 3: [the paper](https://arxiv.org/abs/1906.04341).",
     "Layer 1, head 3: the paper (https://arxiv.org/abs/1906.04341)."),
    ("- one\n- two\n\n1. first\n2. second", "- one\n\n- two\n\n1. first\n\n2. second"),
    ("abc\u202edcba \u2066x\u2069", "abc dcba  x"),  # bidi overrides and isolates blanked
])
def test_lesson_markdown_goes_through_a_parser_images_and_html_are_text(source, shown):
    from viz.common import markdown_text, plain_text

    text = plain_text(source)
    assert text == shown
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(markdown_text(text))  # as pages show it
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in t.children or ()}
    assert not kinds & {"image", "html_inline", "html_block", "link_open"}, kinds


def test_lesson_images_in_every_form_reach_no_field_of_a_lesson():
    from ui.tour import parse

    lesson = parse('title = "A ![a [b] c](http://tracker.example/t.png)"\ndocument = "bbc_insurance_bosses"\n'
                   '[[steps]]\ntext = """Look ![t]\n\n[t]: http://tracker.example/r.png"""\n'
                   'private = "\u202eNote ![x\\\\]y](http://tracker.example/p.png)"\n'
                   'question = "<img src=http://tracker.example/q.png>?"\n'
                   '[steps.answer]\nkind = "choice"\noptions = ["![o](http://tracker.example/o.png)", "b"]\n', "x")
    s = lesson.steps[0]
    fields = [lesson.title, s.text, s.private, *s.ask.options]
    assert not any("tracker" in f for f in fields), fields
    assert s.text == "Look [image: t]" and s.private == "Note [image: x]y]" and s.ask.options[0] == "[image: o]"
    assert "\u202e" not in s.private


def test_story_text_is_stored_without_bidi_controls(tmp_path):
    from ui.store import Store
    from ui.stories import Story, load, notes_key, save
    from ui.tour import Step, story_tour
    from ui.view import View

    store = Store(tmp_path / "s.sqlite3")
    made = save(store, Story(story_tour("My\u202estory", [Step(View(), "a\u2067b", "q\u202e?", title="Step\u202e1",
                                                               private="c\u202ad")])))
    back = load(store, made.id, notes_key(store, made.id))
    assert back.title == "My story" and back.steps[0].title == "Step 1" and back.steps[0].text == "a b"
    assert back.steps[0].private == "c d" and back.steps[0].question == "q ?"


@pytest.mark.slow
def test_a_lesson_of_more_than_fifty_steps_opened_as_a_story_is_one_sentence(summarizer):
    from helpers import button, new_app

    from ui.classroom.steps import OWN, OWN_TEXT
    from ui.stories import MAX_STEPS
    from ui.tour import parse

    text = 'title = "Long"\ndocument = "bbc_insurance_bosses"\n' + "".join(
        f'[[steps]]\ntext = "Step {n}."\n' for n in range(MAX_STEPS + 5))
    at = new_app()
    at.session_state[OWN], at.session_state[OWN_TEXT] = {"long": parse(text, "long")}, {"long": text}
    at.run()
    at.selectbox(key="story_lesson_pick").set_value("long").run()
    button(at, "story_lesson_open").click().run()
    assert not at.exception, at.exception
    said = [i.value for i in at.info]
    assert any("has 55 steps; a story holds at most 50" in v for v in said), said


@pytest.mark.slow
def test_seats_the_teachers_panel_removes_locks_and_raises_and_the_student_is_told(summarizer, monkeypatch):
    from helpers import SHORT, button, new_app, opened, shared_store, summarize

    from ui import classroom as C
    from ui.classroom import answers as A
    from ui.classroom import session as S

    monkeypatch.setattr(S, "client", lambda: "192.0.2.80")  # the school's one address
    teacher = summarize(new_app(), SHORT)
    button(teacher, "class_start").click().run()
    code = teacher.session_state[C.TEACHING]
    students = [opened({"class": code}) for _ in range(3)]
    seat = students[0].session_state[C.SESSION]
    assert A.give(shared_store(), code, A.step_id({"lesson": "l", "step": 0}), seat, 1, None)
    teacher.run()
    assert any("3 seats: 1 answered, 2 never answered" in c.value for c in teacher.caption)
    button(teacher, "class_seats_remove").click().run()
    assert A.answered_seats(shared_store(), code) == (1, 0)
    teacher.toggle(key="class_lock_False").set_value(True).run()
    assert A.room(shared_store(), code)[0]
    late = opened({"class": code})
    assert C.JOINED not in late.session_state
    assert any("closed this class to new students: ask them to open it" in w.value for w in late.warning)
    assert opened({"class": code, "seat": seat}).session_state[C.SESSION] == seat  # a reload keeps its seat
    teacher.toggle(key="class_lock_True").set_value(False).run()
    teacher.number_input(key="class_cap_60").set_value(70).run()
    assert A.room(shared_store(), code) == (False, 70)
    assert C.JOINED in opened({"class": code}).session_state
    assert not teacher.exception


# ---------------------------------------------------------------- passwords: the teacher link

@pytest.mark.slow
def test_passwords_the_teacher_link_replaces_the_password_and_a_guess_is_said_not_throttled(summarizer, monkeypatch):
    """With a teacher token (scripts/serve.py makes one per run), no password is asked: a session
    that opened ``?teacher=TOKEN`` may start a class (the token then leaves the address), any other
    sees one sentence and no Start or Lead again, even with the old password; a wrong token is said,
    and nothing is held up, so a room guessing cannot slow its teacher down."""
    from helpers import SHORT, button, opened, summarize

    from ui import classroom as C
    from ui.classroom import teacher

    monkeypatch.setenv(teacher.TOKEN, "t" * 32)
    monkeypatch.setenv("MICROSCOPE_TEACHER_PASSWORD", "owl")  # ignored where a token is set
    stranger = summarize(opened(), SHORT)
    assert not any(b.key in ("class_start", "class_resume") for b in stranger.button)
    assert not any(t.key == "class_password" for t in stranger.text_input)
    assert any("takes the teacher link the server printed" in c.value for c in stranger.caption)
    for n in range(20):  # a room guessing: each told, none held up
        guess = opened({"teacher": f"guess-{n}"})
        assert any("not this server's" in w.value for w in guess.warning) and not guess.exception
    lead = summarize(opened({"teacher": "t" * 32}), SHORT)
    assert "teacher" not in lead.query_params  # off the address bar (and kept in this browser's cookie)
    assert not any(t.key == "class_password" for t in lead.text_input)
    button(lead, "class_start").click().run()
    assert not lead.error and C.TEACHING in lead.session_state
