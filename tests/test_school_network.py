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
