"""axe-core (WCAG 2.2 A/AA and best-practice rules) on every page of the app in Chromium.

    python -m scripts.accessibility [--json OUT]

Starts ``streamlit run app.py`` on a free port, drives Debian's Chromium with Playwright and runs
axe-core (the copy bundled in PyPI ``axe-playwright-python``) on each page in its main states:
the first screen, every page after Summarize (the shipped call-centre example), each BERT
attention view, Why with the scoreboard, What if with an edit, Corpus, Learn and a class
student's view. Prints one row per state: violations by impact and the rule ids; the test suite
(tests/test_browser_accessibility.py) asserts 0 critical and 0 serious on every row.

    python -m scripts.accessibility --colours

The smallest ΔE (CAM02-UCS) between colours of different meaning in one figure, for normal vision
and simulated deuteranopia, protanopia and tritanopia (tests/test_accessibility.py: ≥ 15)."""
from __future__ import annotations

import argparse
import itertools
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np

from benchmarks.browser import wait_idle
from benchmarks.common import CHROMIUM_ARGS, Server

ROOT = Path(__file__).resolve().parents[1]
IMPACTS = ("critical", "serious", "moderate", "minor")
MIN_DELTA_E = 15.0  # CAM02-UCS: about 10 just-noticeable differences; Okabe & Ito's blue and orange are ~50 apart
VISIONS = {"normal": None, **{t: {"name": "sRGB1+CVD", "cvd_type": t, "severity": 100}
                              for t in ("deuteranomaly", "protanomaly", "tritanomaly")}}
BERT_VIEWS = ("All heads of a layer", "All layers × heads", "Sentence × sentence", "Rollout")


def rgb1(colour: str) -> np.ndarray:
    """'#RRGGBB' or 'rgb(r, g, b)' → sRGB in [0, 1]."""
    if colour.startswith("#"):
        return np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=np.float64) / 255
    return np.array([float(x) for x in re.findall(r"[\d.]+", colour)[:3]], dtype=np.float64) / 255


def seen(colours, vision: str) -> np.ndarray:
    """CAM02-UCS (J', a', b') of the colours as a person with ``vision`` sees them (Machado et al.
    2009 at full severity, via colorspacious)."""
    from colorspacious import cspace_convert

    x = np.array([rgb1(c) for c in colours])
    if VISIONS[vision] is not None:
        x = np.clip(cspace_convert(x, VISIONS[vision], "sRGB1"), 0, 1)
    return cspace_convert(x, "sRGB1", "CAM02-UCS")


def colour_table() -> str:
    """Per set of colours that mean different things (viz.palette.MEANINGS): the smallest ΔE
    between two of them, for each colour vision."""
    from viz.palette import MEANINGS

    lines = ["| colours of | " + " | ".join(VISIONS) + " |", "|---|" + "---:|" * len(VISIONS)]
    for meaning, colours in MEANINGS.items():
        worst = [min(float(np.linalg.norm(j[a] - j[b])) for a, b in itertools.combinations(range(len(colours)), 2))
                 for j in (seen(colours, v) for v in VISIONS)]
        lines.append(f"| {meaning} | " + " | ".join(f"{d:.1f}" for d in worst) + " |")
    return "\n".join(lines)


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

    def expanders():  # and they stay open for the states after
        for name in ("Model", "Class & lessons", "Figure downloads"):
            page.get_by_test_id("stSidebar").get_by_text(name, exact=True).first.click()
        wait_idle(page)
    yield "Summary, the sidebar's expanders open", expanders
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
        start = page.get_by_role("button", name="Start a class")
        if not start.is_visible():
            page.get_by_test_id("stSidebar").get_by_text("Class & lessons", exact=True).first.click()
        start.click()
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
            # Streamlit fades elements a rerun has not redrawn yet (data-stale): audit the settled page
            page.wait_for_function("!document.querySelector('[data-stale=true]')", timeout=60_000)
            assert page.get_by_test_id("stException").count() == 0, name
            found = axe(page)
            rows.append({"state": name, "counts": dict(Counter(v["impact"] for v in found)), "violations": found})
    finally:
        page.close()
    return rows


VIEWS = {"Summary": "", "BERT attention": "bert_attention", "Why this summary": "why", "Heads": "heads"}


def view_cost(url: str, browser, pid: int, runs: int = 3) -> dict:
    """Per view, a fresh session opened on a link to the call-centre example (2 BERT windows): the
    websocket bytes the page receives and the server's CPU seconds until it is idle (medians)."""
    from benchmarks.common import cpu_seconds, median

    out: dict[str, list] = {}
    for _ in range(runs):
        for name, path in VIEWS.items():
            page, got = browser.new_page(viewport={"width": 1400, "height": 1000}), []
            page.on("websocket", lambda ws: ws.on("framereceived", lambda f: got.append(len(f))))
            cpu = cpu_seconds(pid)
            page.goto(f"{url}{path}?doc=bbc_call_centres&k=3&tb=1")
            page.get_by_test_id("stMain").locator(".js-plotly-plot").first.wait_for(timeout=120_000)
            wait_idle(page)
            page.wait_for_timeout(500)
            out.setdefault(name, []).append((sum(got), cpu_seconds(pid) - cpu))
            page.close()
    return {k: {"ws_bytes": int(median([b for b, _ in v])), "server_cpu_s": round(median([c for _, c in v]), 3)}
            for k, v in out.items()}


def table(rows: list[dict]) -> str:
    lines = ["| page, state | " + " | ".join(IMPACTS) + " | rules |", "|---|" + "---:|" * len(IMPACTS) + "---|"]
    for r in rows:
        ids = ", ".join(sorted({f"{v['id']} ({v['impact']})" for v in r["violations"]})) or "—"
        lines.append(f"| {r['state']} | " + " | ".join(str(r["counts"].get(i, 0)) for i in IMPACTS) + f" | {ids} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the rows (with every violation's rule, impact and first nodes) here")
    ap.add_argument("--colours", action="store_true", help="only the colour-vision table (no browser)")
    ap.add_argument("--cost", action="store_true", help="also websocket bytes and server CPU per view")
    args = ap.parse_args(argv)
    if args.colours:
        print(colour_table())
        return
    from playwright.sync_api import sync_playwright

    with Server(Path("/tmp/accessibility_streamlit.log")) as s, sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        rows = audit(s.url + "/", b)
        cost = view_cost(s.url + "/", b, s.proc.pid) if args.cost else None
        b.close()
    print(table(rows))
    if cost:
        print(json.dumps(cost))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
