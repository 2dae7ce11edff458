"""Helpers for the tests that drive the real app in Debian's Chromium (Playwright): the example
article, a drawn heatmap, waiting for a run to end, opening the app, changing page, Summarize."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTICLE = (ROOT / "examples" / "bbc_call_centres.txt").read_text(encoding="utf-8")  # 653 words, 2 windows
HEATMAP = ".js-plotly-plot .hm image"  # a drawn Plotly heatmap


def idle(page) -> None:
    page.wait_for_timeout(200)
    page.wait_for_function("!document.querySelector('[data-testid=stStatusWidget]')", timeout=120_000)


def pick(page, within, label: str, option: str | int, tries: int = 3) -> None:
    """Choose ``option`` (its name, or its place in the list from 0) in the selectbox ``label``
    inside ``within``. A rerun that lands while its list is open (one that started too soon for
    Streamlit's status to show) draws the box again, closed: the list is then opened again, up to
    ``tries`` times."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    box = within.locator('[data-testid="stSelectbox"]').filter(has_text=label).first
    for attempt in range(tries):
        idle(page)
        box.click()
        try:
            choice = page.get_by_role("option").nth(option) if isinstance(option, int) else \
                page.get_by_role("option", name=option, exact=True)
            choice.click(timeout=10_000)
            return
        except PlaywrightTimeout:
            if attempt == tries - 1:
                raise
            page.keyboard.press("Escape")


def open_app(browser, url: str, received: list[int] | None = None):
    page = browser.new_page(viewport={"width": 1500, "height": 1100})
    page.on("dialog", lambda d: pytest.fail(f"the page opened a dialog: {d.message!r}"))
    if received is not None:
        page.on("websocket", lambda ws: ws.on("framereceived", lambda f: received.append(len(f))))
    page.goto(url)
    page.get_by_role("textbox", name="Document", exact=True).wait_for(timeout=120_000)
    idle(page)
    return page


def go_to(page, title: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_text(title, exact=True).click()
    idle(page)


def summarize(page, text: str) -> float:
    page.get_by_role("textbox", name="Document", exact=True).fill(text)
    t = time.perf_counter()
    page.get_by_role("button", name="Summarize").click()
    return t


def start_class(page) -> str:
    """The teacher's page (a result shown) starts a class in its sidebar: → the class's code."""
    import re

    idle(page)
    side = page.get_by_test_id("stSidebar")
    side.get_by_text("Class & lessons").click()
    side.get_by_role("button", name="Start a class").click()
    return re.search(r"Class ([A-Z0-9]{6}) ·", side.get_by_text(re.compile(r"Class [A-Z0-9]{6} ·")).first
                     .inner_text(timeout=60_000)).group(1)


def story_exports(page, folder: Path) -> tuple[Path, Path]:
    """The Story panel's Make the HTML and PDF, then both downloads saved in ``folder``: → (deck, PDF)."""
    side = page.get_by_test_id("stSidebar")
    side.get_by_role("button", name="Make the HTML and PDF").click()
    side.get_by_role("button", name="Story as HTML (offline)").wait_for(timeout=300_000)
    saved = []
    for name, file in (("Story as HTML (offline)", "story.html"), ("Story as PDF", "story.pdf")):
        with page.expect_download() as got:
            side.get_by_role("button", name=name).click()
        got.value.save_as(folder / file)
        saved.append(folder / file)
    return saved[0], saved[1]
