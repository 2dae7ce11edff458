"""Issue 68, host names: a school's students reach the server by a name (``classroom.test``, a
``.local`` name, a second network card), not by 127.0.0.1. Chromium resolves the name to this
machine (``--host-resolver-rules``), through scripts/serve.py's nginx on a port of its own, as a
school would serve it: the app draws (its websocket accepted), a class started there has its join
link and QR code on that name, and a student who opens the link follows the teacher."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from browsing import HEATMAP, pick, start_class

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not shutil.which("nginx") and not Path("/usr/sbin/nginx").exists(),
                                 reason="nginx is not installed (the README's test command installs it)")]

NAME = "classroom.test"
TOKEN = "teacher-link-token-of-this-run"


@pytest.fixture(scope="module")
def school(tmp_path_factory):
    """One app process behind nginx on a port of its own, its join links on NAME
    (MICROSCOPE_PUBLIC_URL, as a school sets it), and Chromium that resolves NAME to this machine."""
    from playwright.sync_api import sync_playwright

    from benchmarks.common import free_port, launch_chromium
    from scripts.serve import Cluster

    port = free_port()
    public = f"http://{NAME}:{port}"
    env = {"MICROSCOPE_PUBLIC_URL": public, "MICROSCOPE_TEACHER_TOKEN": TOKEN}
    with Cluster(1, tmp_path_factory.mktemp("school"), port=port, env=env) as c, \
            sync_playwright() as p:
        browser = launch_chromium(p, [f"--host-resolver-rules=MAP {NAME} 127.0.0.1, MAP school.local 127.0.0.1"])
        c.public, c.browser = public, browser
        yield c
        browser.close()


def test_host_names_reach_the_app_through_nginx_with_their_port(school):
    """The grey page: nginx forwarded Host without its port and Streamlit refused the websocket
    (Origin classroom.test:PORT, Host classroom.test). Any name works now, with its port."""
    port = school.public.rsplit(":", 1)[1]
    refused = []
    for host in (NAME, "school.local", "127.0.0.1"):
        page = school.browser.new_context().new_page()
        page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
        response = page.goto(f"http://{host}:{port}/")
        page.get_by_role("textbox", name="Document", exact=True).wait_for(timeout=120_000)  # drawn: the websocket is up
        headers = response.all_headers()
        assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "no-referrer"
        assert "connect-src 'self';" in headers["content-security-policy"]  # no other host, the websocket allowed
        page.context.close()
    assert not refused, refused[:3]
    log = school.servers[0].log.read_text()
    assert "disallowed Origin or Host" not in log, log[-500:]


def test_host_names_a_class_started_at_a_name_is_joined_by_its_link_and_qr_code(school):
    from playwright.sync_api import expect

    teacher = school.browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    teacher.goto(f"{school.public}/?teacher={TOKEN}")  # the teacher link serve.py printed
    teacher.get_by_role("button", name="Try an example").click()
    teacher.wait_for_function("!location.search.includes('teacher=')", timeout=30_000)  # off the address bar
    teacher.get_by_test_id("stMain").locator(".js-plotly-plot .main-svg").first.wait_for(timeout=120_000)
    code = start_class(teacher)
    side = teacher.get_by_test_id("stSidebar")
    link = f"{school.public}/?class={code}"
    expect(side.get_by_text(link, exact=True)).to_be_visible()
    # the QR code is drawn after the link and its reachability check: wait for it, then no warning above it
    expect(side.get_by_role("img", name=f"QR code of the class's join link, {link}")).to_have_count(1, timeout=30_000)
    assert side.get_by_text("cannot open", exact=False).count() == 0  # a name students can open: no warning

    student = school.browser.new_context(viewport={"width": 390, "height": 844}).new_page()  # a phone
    student.goto(link)
    student.get_by_text(f"Following class {code}").first.wait_for(timeout=60_000)
    teacher.get_by_test_id("stSidebarNav").get_by_text("BERT attention", exact=True).click()
    student.get_by_test_id("stMain").get_by_role("heading", name="BERT attention").first.wait_for(timeout=60_000)
    student.locator(HEATMAP).first.wait_for(timeout=60_000)
    for page in (teacher, student):
        assert page.get_by_test_id("stException").count() == 0
        page.context.close()


def test_host_names_without_the_teacher_link_no_class_can_be_started(school):
    """A visitor at the same name, without the teacher link (or with a made-up one): no Start a
    class, no Lead a class again, and one sentence saying what it takes; a wrong link is said."""
    stranger = school.browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    stranger.goto(f"{school.public}/?teacher=guess")
    stranger.get_by_text("This teacher link is not this server's").wait_for(timeout=120_000)
    side = stranger.get_by_test_id("stSidebar")
    side.get_by_text("Class & lessons").click()
    side.get_by_text("takes the teacher link the server printed").wait_for(timeout=30_000)
    assert side.get_by_role("button", name="Start a class").count() == 0
    assert side.get_by_role("button", name="Lead a class again").count() == 0
    stranger.context.close()


def test_host_names_a_student_on_an_open_question_receives_nothing_of_the_answer(school):
    """Issue 70 where a school uses it: at a host name behind serve.py's nginx, a student on a phone
    (390×844) on the class's open question "Which 3 sentences…?" answers with three taps and types
    another page into the address. Every websocket frame its browser received is read: no ★ (the
    model's pick), no console key, no teacher link. A stranger's made-up console link opens nothing;
    the teacher's console opens at the name with the room's answers."""
    import re

    from browsing import idle

    teacher = school.browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    teacher.goto(f"{school.public}/?teacher={TOKEN}")
    side = teacher.get_by_test_id("stSidebar")
    side.get_by_text("Class & lessons").click()
    idle(teacher)
    pick(teacher, side, "Lesson", "Which sentences, and why")
    teacher.get_by_text("Which 3 sentences will the model pick?", exact=False).first.wait_for(timeout=120_000)
    idle(teacher)
    side.get_by_role("button", name="Start a class").click()
    code = re.search(r"Class ([A-Z0-9]{6}) ·", side.get_by_text(re.compile(r"Class [A-Z0-9]{6} ·")).first
                     .inner_text(timeout=60_000)).group(1)
    main = teacher.get_by_test_id("stMain")
    href = main.get_by_role("link", name="Open the teacher's console").get_attribute("href", timeout=60_000)
    key = re.search(r"[?&]key=(\w+)", href).group(1)
    assert href.startswith(f"{school.public}/?console={code}&"), href

    frames: list[bytes] = []
    student = school.browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                         has_touch=True).new_page()
    student.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(
        f if isinstance(f, bytes) else f.encode())))
    student.goto(f"{school.public}/?class={code}")
    pills = student.get_by_role("toolbar", name=re.compile("sentences the model will pick"))
    pills.wait_for(timeout=120_000)
    idle(student)
    for number in ("4", "6", "27"):
        pills.get_by_role("button", name=number, exact=True).tap()
        idle(student)
    student.get_by_text("Answered.", exact=False).first.wait_for(timeout=60_000)
    student.goto(student.url.replace("/?", "/why?", 1))  # another page typed into the address: back on the question's
    student.get_by_text("Answered.", exact=False).first.wait_for(timeout=120_000)  # (the same seat, its answer kept)
    idle(student)
    assert student.get_by_test_id("stMain").get_by_role("heading", name="Summary").count() == 1
    received = b"".join(frames)
    assert len(received) > 10_000 and "Which 3 sentences".encode() in received  # (the frames were read)
    for secret in ("★".encode(), key.encode(), TOKEN.encode()):
        assert secret not in received, secret

    stranger = school.browser.new_context().new_page()
    stranger.goto(f"{school.public}/?console={code}&key={'0' * 24}")
    stranger.get_by_text("That console link is not this server's", exact=False).wait_for(timeout=120_000)
    assert stranger.get_by_role("heading", name="Teacher's console").count() == 0
    desk = school.browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    desk.goto(href)
    desk.locator(".js-plotly-plot").filter(has_text="Sentences the class picked").first.wait_for(timeout=120_000)
    assert "1 of 1 student answered" in desk.get_by_test_id("stMain").inner_text()
    for page in (teacher, student, stranger, desk):
        assert page.get_by_test_id("stException").count() == 0
        page.context.close()
