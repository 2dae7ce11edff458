"""axe-core (WCAG 2.2 A/AA and best-practice rules) on every page of the app in Chromium.

    python -m scripts.accessibility [--json OUT]

Starts ``streamlit run app.py`` on a free port, drives Debian's Chromium with Playwright and runs
axe-core (the copy bundled in PyPI ``axe-playwright-python``) on each page in its main states:
the first screen, every page after Summarize (the shipped call-centre example), each BERT
attention view, Why with the scoreboard, What if with an edit, Corpus, Learn and a class
student's view. Prints one row per state: violations by impact and the rule ids; the test suite
(tests/test_accessibility.py) asserts 0 critical and 0 serious on every row."""
from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from benchmarks.browser import wait_idle
from benchmarks.common import CHROMIUM_ARGS, Server

ROOT = Path(__file__).resolve().parents[1]
IMPACTS = ("critical", "serious", "moderate", "minor")
BERT_VIEWS = ("All heads of a layer", "All layers × heads", "Sentence × sentence", "Rollout")


def axe(page) -> list[dict]:
    """axe-core's violations on the page as it is now: [{id, impact, nodes, help}]."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page, options={"resultTypes": ["violations"]}).response["violations"]
    return [{"id": v["id"], "impact": v["impact"], "nodes": len(v["nodes"]), "help": v["help"],
             "where": [n["target"] for n in v["nodes"][:3]]} for v in found]


def go_to(page, title: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_text(title, exact=True).click()
    wait_idle(page)


def segment(page, label: str) -> None:
    page.get_by_test_id("stMain").get_by_role("radio", name=label, exact=True).first.click()
    wait_idle(page)


def states(page, url: str):
    """(name, action) for each state audited, in order; each action leaves the page idle."""
    def first_screen():
        page.goto(url)
        page.get_by_role("textbox", name="Document", exact=True).wait_for(timeout=120_000)
        wait_idle(page)

    def summarize():
        page.get_by_role("button", name="Try an example").click()
        wait_idle(page)
        page.get_by_role("button", name="Summarize").click()
        page.get_by_test_id("stMain").locator(".js-plotly-plot").first.wait_for(timeout=120_000)
        wait_idle(page)

    yield "first screen", first_screen
    yield "Summary", summarize
    yield "Why this summary", lambda: go_to(page, "Why this summary")

    def scoreboard():
        page.get_by_test_id("stMain").get_by_role("button", name="Run the scoreboard").click()
        page.get_by_test_id("stMain").locator("[data-testid=stDataFrame]").last.wait_for(timeout=300_000)
        wait_idle(page)
    yield "Why: scoreboard", scoreboard
    yield "BERT attention: one head", lambda: go_to(page, "BERT attention")
    for v in BERT_VIEWS:
        yield f"BERT attention: {v}", lambda v=v: segment(page, v)
    yield "Sentence encoder", lambda: go_to(page, "Sentence encoder")
    yield "Masks & positions", lambda: go_to(page, "Masks & positions")
    yield "Heads", lambda: go_to(page, "Heads")

    def what_if():
        go_to(page, "What if")
        page.get_by_test_id("stMain").get_by_role("button", name="Add").click()
        wait_idle(page)
    yield "What if: an edit", what_if
    yield "Corpus", lambda: go_to(page, "Corpus")
    yield "Learn", lambda: go_to(page, "Learn")

    def student():
        page.get_by_test_id("stSidebar").get_by_text("Class & lessons").click()
        page.get_by_role("button", name="Start a class").click()
        wait_idle(page)
        link = page.get_by_test_id("stSidebar").get_by_text("?class=").first.text_content().strip()
        page.goto(link)
        page.get_by_test_id("stMain").locator(".js-plotly-plot").first.wait_for(timeout=120_000)
        wait_idle(page)
    yield "a class student's view (Learn)", student


def audit(url: str, browser) -> list[dict]:
    """Every state's violations: [{state, counts {impact: n rules}, violations}]."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    rows = []
    try:
        for name, action in states(page, url):
            action()
            assert page.get_by_test_id("stException").count() == 0, name
            found = axe(page)
            rows.append({"state": name, "counts": dict(Counter(v["impact"] for v in found)), "violations": found})
    finally:
        page.close()
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| page, state | " + " | ".join(IMPACTS) + " | rules |", "|---|" + "---:|" * len(IMPACTS) + "---|"]
    for r in rows:
        ids = ", ".join(sorted({f"{v['id']} ({v['impact']})" for v in r["violations"]})) or "—"
        lines.append(f"| {r['state']} | " + " | ".join(str(r["counts"].get(i, 0)) for i in IMPACTS) + f" | {ids} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the rows (with every violation's rule, impact and first nodes) here")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with Server(Path("/tmp/accessibility_streamlit.log")) as s, sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        rows = audit(s.url + "/", b)
        b.close()
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
