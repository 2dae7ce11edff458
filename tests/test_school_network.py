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
