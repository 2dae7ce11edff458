"""A workshop's set-up: two app processes behind nginx (scripts/serve.py), sharing the documents
behind links in one SQLite file. A link made on one process opens on the other, and through the
proxy; a session stays on its process (the sticky cookie), so it works end to end there."""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from test_browser import ARTICLE, HEATMAP, idle, open_app, summarize

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
