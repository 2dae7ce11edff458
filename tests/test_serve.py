"""A workshop's set-up: two app processes behind nginx (scripts/serve.py), sharing the documents
behind links in one SQLite file. A link made on one process opens on the other, and through the
proxy; a session stays on its process (the sticky cookie), so it works end to end there."""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from browsing import ARTICLE, HEATMAP, idle, open_app, start_class, summarize

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not shutil.which("nginx") and not Path("/usr/sbin/nginx").exists(),
                                 reason="nginx is not installed (the README's test command installs it)")]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from scripts.serve import Cluster

    with Cluster(2, tmp_path_factory.mktemp("cluster")) as c:
        yield c


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    from benchmarks.common import launch_chromium

    with sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


def link_on(browser, url: str, text: str) -> str:
    page = open_app(browser, url + "/")
    summarize(page, text)
    page.get_by_test_id("stMain").locator(".js-plotly-plot .main-svg").first.wait_for(timeout=120_000)
    idle(page)
    page.get_by_role("button", name="Link to this view").click()
    page.wait_for_function("location.search.includes('doc=id')", timeout=60_000)
    query = page.url.split("?", 1)[1]
    page.close()
    return query


def opens(browser, url: str, marker: str) -> None:
    context = browser.new_context(viewport={"width": 1500, "height": 1100})
    page = context.new_page()
    page.goto(url)
    page.get_by_test_id("stMain").get_by_text(marker, exact=False).first.wait_for(timeout=120_000)
    box = page.get_by_role("textbox", name="Document", exact=True)
    deadline = time.time() + 30
    while not box.input_value().startswith(marker):
        assert time.time() < deadline, f"{url}: the document box holds {box.input_value()[:40]!r}"
        time.sleep(0.2)
    context.close()


def test_a_link_made_on_one_process_opens_on_the_other_and_through_nginx(cluster, browser):
    one, two = (s.url for s in cluster.servers)
    assert cluster.url not in (one, two)  # the proxy
    query = link_on(browser, one, "Made on process one. " + ARTICLE)
    opens(browser, f"{two}/?{query}", "Made on process one.")
    opens(browser, f"{cluster.url}/?{query}", "Made on process one.")


def test_a_session_through_nginx_summarizes_and_stays_on_its_process(cluster, browser):
    context = browser.new_context(viewport={"width": 1500, "height": 1100})
    page = context.new_page()
    page.goto(cluster.url + "/bert_attention")
    page.get_by_role("textbox", name="Document", exact=True).wait_for(timeout=120_000)
    idle(page)
    summarize(page, "Through the proxy. " + ARTICLE)
    page.locator(HEATMAP).first.wait_for(timeout=120_000)  # the websocket went through nginx
    cookies = [c for c in context.cookies() if c["name"] == "microscope_route"]
    assert len(cookies) == 1 and cookies[0]["httpOnly"]
    page.get_by_role("button", name="Link to this view").click()  # a rerun on the same process
    page.wait_for_function("location.search.includes('doc=id')", timeout=60_000)
    assert page.get_by_test_id("stException").count() == 0
    context.close()


def test_a_class_teacher_and_two_students_on_two_processes(cluster, browser):
    """Issue 33: the teacher (through nginx) starts a class; two students join through nginx too
    and sit on different app processes (nginx's cookie), follow three steps through the shared
    store; one leaves to explore, stays put while the teacher moves on, and catches up with Back
    to the teacher."""
    from benchmarks.browser import pick
    from browsing import go_to

    def new_page(url):
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        page.goto(url)
        page.get_by_role("textbox", name="Document", exact=True).wait_for(timeout=120_000)
        return page

    def shows(page, heading: str, timeout=15_000):
        page.get_by_test_id("stMain").get_by_role("heading", name=heading).first.wait_for(timeout=timeout)

    teacher = new_page(cluster.url + "/")
    summarize(teacher, "Class session. " + ARTICLE)
    teacher.get_by_test_id("stMain").locator(".js-plotly-plot .main-svg").first.wait_for(timeout=120_000)
    code = start_class(teacher)
    side = teacher.get_by_test_id("stSidebar")
    students, opened = students_on_each_process(cluster, new_page, f"{cluster.url}/?class={code}", code)
    for s in students:
        shows(s, "Summary", timeout=120_000)
    # a closed tab is counted until its heartbeats stop for 3 × SEEN_S (60 s)
    side.get_by_text(f"{opened} students connected, {opened} following").wait_for(timeout=30_000)

    waits = []
    for step in ("BERT attention", "layer 3", "Learn"):
        t = time.perf_counter()
        if step == "layer 3":
            pick(teacher, "Layer", "3")
        else:
            go_to(teacher, step)
        for s in students:
            if step == "layer 3":
                s.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot .gtitle')].some("
                                    "e => e.textContent.includes('BERT layer 3'))", timeout=60_000)
            else:
                shows(s, step, timeout=60_000)
        waits.append(time.perf_counter() - t)
    print("teacher's click → both students show the step, s:", [round(w, 2) for w in waits])

    away, other = students
    away.get_by_role("button", name="Leave to explore").click()
    away.get_by_role("button", name="Back to the teacher").wait_for(timeout=30_000)
    go_to(teacher, "Sentence encoder")
    shows(other, "Sentence encoder", timeout=60_000)
    time.sleep(2)
    assert away.get_by_test_id("stMain").get_by_role("heading", name="Sentence encoder").count() == 0
    away.get_by_role("button", name="Back to the teacher").click()
    shows(away, "Sentence encoder", timeout=60_000)
    polls = []  # one poll of the version file per page, whatever the reruns before (each used to add one)
    from ui import classroom as C
    from ui.store import Store

    name = C.poll_name(Store(cluster.store), code)  # the version file: a random token, not the code
    assert len(name) >= 24 and code not in name
    away.on("request", lambda r: polls.append(r.url) if f"/classes/{name}.json" in r.url else None)
    away.wait_for_timeout(4000)  # (sync Playwright delivers events while it waits)
    every = C.POLL_PROXIED_S  # behind nginx; one poll per page: twice as many would be a second poll
    assert 4 / every / 2 <= len(polls) <= 4 / every + 2, len(polls)
    for page in (teacher, *students):
        assert page.get_by_test_id("stException").count() == 0
        page.context.close()


def connections(cluster) -> set[tuple[int, str]]:
    """Open connections to the app processes, (the process's port, nginx's end), from /proc: a
    browser's websocket is one that stays."""
    ports = {s.port for s in cluster.servers}
    out = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, remote, state = line.split()[1:4]
        if state == "01" and int(local.split(":")[1], 16) in ports:  # ESTABLISHED, on the server's side
            out.add((int(local.split(":")[1], 16), remote))
    return out


def students_on_each_process(cluster, new_page, url: str, code: str) -> tuple[list, int]:
    """Students join through nginx, as in a class: nginx picks a process at random and its cookie
    keeps the browser there. New browsers join until one sits on each of the two processes (where
    its websocket is); the others leave. → (the two, how many joined)."""
    on = {}
    for opened in range(1, 13):
        before = connections(cluster)
        page = new_page(url)
        page.get_by_text(f"Following class {code}").wait_for(timeout=60_000)
        page.wait_for_timeout(1000)
        ports = {port for port, _ in connections(cluster) - before}
        assert len(ports) == 1, ports  # its websocket, on one process
        port = ports.pop()
        if port in on:
            page.context.close()
            continue
        on[port] = page
        if len(on) == len(cluster.servers):
            break
    assert len(on) == 2, "nginx sent 12 browsers in a row to one process"
    routes = [c["value"] for p in on.values() for c in p.context.cookies() if c["name"] == "microscope_route"]
    assert len(set(routes)) == 2
    return list(on.values()), opened


def test_a_bare_session_follows_a_class_through_nginx(cluster):
    """The rehearsal's bare students (benchmarks/bare_session.py) speak the browser's protocol: one
    joins a class through nginx and follows the teacher's page. The teacher here is this test
    process writing to the processes' shared store, as another machine's app would."""
    import asyncio

    from benchmarks.bare_session import BareSession
    from ui import classroom as C
    from ui.link import doc_id
    from ui.store import Store

    store = Store(cluster.store)
    store.put(doc_id(ARTICLE, store), ARTICLE)
    view = {"page": "bert_attention", "doc": doc_id(ARTICLE, store), "k": 3, "tb": True, "w": None, "pickers": {},
            "lesson": None}
    code = C.start(store, view, leader="this test")
    C.mirror(C.poll_name(store, code), C.version(store, code))

    async def follow():
        student = BareSession(cluster.url, f"class={code}")
        await student.open()
        await student.wait_text("BERT attention", 120)
        task = asyncio.create_task(student.follow_class(code))
        assert student.components["class_follow"][1]["every"] == C.POLL_PROXIED_S * 1000  # behind nginx
        C.publish(store, code, {**view, "page": "learn"}, "this test")
        await student.wait_text("Learn: how one attention head works", 60)
        assert max(student.seen) == 2  # its poll read the new version
        task.cancel()
        await student.close()

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:  # this module's sync Playwright holds this thread's event loop
        pool.submit(asyncio.run, follow()).result()


def test_nginx_limits_reads_of_class_files_per_address_not_a_class(cluster):
    """2,000 probes of class version files from one address, as fast as 16 threads go: past
    POLL_RATE a second (a NAT'd class of 50 students' polls) nginx answers 429; a second later an
    ordinary read is answered again."""
    import secrets
    import urllib.error
    import urllib.request
    from concurrent.futures import ThreadPoolExecutor

    from scripts.serve import POLL_RATE

    def probe(_):
        try:
            urllib.request.urlopen(f"{cluster.url}/app/static/classes/{secrets.token_urlsafe(18)}.json", timeout=10)
            return 200
        except urllib.error.HTTPError as e:
            return e.code

    t = time.perf_counter()
    with ThreadPoolExecutor(16) as pool:
        codes = list(pool.map(probe, range(2000)))
    rate = 2000 / (time.perf_counter() - t)
    print(f"probes: {rate:.0f}/s, 404: {codes.count(404)}, 429: {codes.count(429)}")
    assert set(codes) <= {404, 429} and codes.count(429) > 0 and rate > 1.5 * POLL_RATE
    assert codes.count(404) <= POLL_RATE * 2 * (2000 / rate + 1)  # the burst, then the rate
    time.sleep(1.5)
    assert probe(0) == 404


def test_streamlit_browser_code_comes_gzipped_from_nginx_not_from_the_app(cluster):
    """A new browser's 8 MB of Streamlit's code (/static/), and the charts' plotly.js beside it:
    nginx answers from its gzipped copy,
    the same bytes, cached for a year; the app processes spend nothing on it (through them, a new
    student's bundle cost 0.11 CPU-s: benchmarks/README.md)."""
    import gzip
    import re
    import urllib.request

    import streamlit

    from benchmarks.common import cpu_seconds
    from ui import wire

    source = Path(streamlit.__file__).parent / "static"
    index = urllib.request.urlopen(cluster.url + "/").read().decode()
    named = re.findall(r'"\./(static/[^"]+\.js)"', index)
    biggest = max((source / "static").rglob("*.js"), key=lambda p: p.stat().st_size).relative_to(source)
    assert named
    chart_js, chart_file = wire.plotly_js()  # the app's charts' plotly.js, at Streamlit's side
    files = {**{path: source / path for path in named}, str(biggest): source / biggest, chart_js: Path(chart_file)}
    cpu = sum(cpu_seconds(p) for p in cluster.pids())
    for path in [*named, *[str(biggest)] * 10, *[chart_js] * 3]:
        request = urllib.request.Request(f"{cluster.url}/{path}", headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request) as r:
            assert r.headers["Content-Encoding"] == "gzip" and "immutable" in r.headers["Cache-Control"], path
            assert r.headers["Content-Type"] == "text/javascript", path  # a module script must say so
            assert gzip.decompress(r.read()) == files[path].read_bytes(), path
    spent = sum(cpu_seconds(p) for p in cluster.pids()) - cpu
    print(f"{len(named) + 13} files ({(source / biggest).stat().st_size * 10 / 1e6:.0f} MB of it the biggest ×10, "
          f"plotly.js ×3): app processes {spent:.3f} CPU-s")
    assert spent < 0.05
    plain = urllib.request.urlopen(f"{cluster.url}/{named[0]}").read()  # a client without gzip: the file itself
    assert plain == (source / named[0]).read_bytes()
