"""WCAG 2.2 AA in Chromium: axe-core on every page, the main flow by keyboard alone with a visible
focus at every stop, what a screen reader reaches (names, statuses, chart values as text, checked
against the chart's own data), and reflow at 320 CSS px and at 200 % zoom. The colour half is in
tests/test_accessibility.py."""
from __future__ import annotations

import json
import re

import pytest

from scripts.accessibility import audit, table
from browsing import go_to, idle, open_app

pytestmark = [pytest.mark.browser]
EXAMPLE = "bbc_insurance_bosses"  # the shortest shipped example (the one "Try an example" opens)

FOCUS_SHOWN = """() => {
  const e = document.activeElement;
  if (!e || e === document.body) return false;
  const s = getComputedStyle(e);
  if ((s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2) || s.boxShadow !== 'none') return true;
  const r = e.querySelector && e.querySelector('rect');  // a Plotly button: ui/a11y.py draws its ring
  if (r && parseFloat(getComputedStyle(r).strokeWidth) >= 3) return true;
  // Streamlit draws some rings on the widget's frame, not on the input itself
  for (let p = e.parentElement, k = 0; p && k < 4; p = p.parentElement, k++) {
    const q = getComputedStyle(p);
    if (q.boxShadow !== 'none' || (q.outlineStyle !== 'none' && parseFloat(q.outlineWidth) >= 2)
        || (q.borderColor && q.borderColor !== s.borderColor && p.matches(':focus-within') && parseFloat(q.borderWidth) >= 1
            && q.borderColor.replace(/\\s/g, '') !== 'rgba(0,0,0,0)')) return true;
  }
  return false;
}"""


def test_axe_finds_no_critical_or_serious_violation_on_any_page(server, browser, shots):  # noqa: F811
    rows = audit(server, browser)
    print("\n" + table(rows))
    (shots / "axe.json").write_text(json.dumps(rows, indent=1))
    assert len(rows) == 17  # every state of scripts.accessibility.states
    bad = [(r["state"], v["id"], v["where"]) for r in rows for v in r["violations"]
           if v["impact"] in ("critical", "serious")]
    assert not bad, bad


def tab_to(page, target, limit: int = 150, back: bool = False) -> int:
    """Press Tab (Shift+Tab with ``back``) until ``target`` has the focus; the presses it took."""
    for n in range(1, limit + 1):
        page.keyboard.press("Shift+Tab" if back else "Tab")
        if target.evaluate("e => e === document.activeElement || e.contains(document.activeElement)"):
            return n
    raise AssertionError(f"{target} never got the focus in {limit} presses")


def focus_visible(page, what: str) -> None:
    """The focused element shows a ring (within 3 s: a chart redrawn by the server rebuilds its buttons)."""
    try:
        page.wait_for_function(FOCUS_SHOWN, timeout=3000)
    except Exception:  # noqa: BLE001  Playwright's TimeoutError, said plainly
        raise AssertionError(f"no visible focus on {what}") from None


def wait_title(page, part: str) -> None:
    page.wait_for_function("(p) => [...document.querySelectorAll('.js-plotly-plot .gtitle')]"
                           ".some(e => e.textContent.includes(p))", arg=part, timeout=60_000)


def title(page) -> str:
    return page.locator(".js-plotly-plot .gtitle").first.text_content()


def test_the_main_flow_by_keyboard_alone(server, browser, shots):  # noqa: F811
    """Try an example → Summarize → BERT attention → next head → next layer → Why this summary,
    with the keyboard only (no click, no mouse), the focus visible at every stop."""
    page = open_app(browser, server + "bert_attention")
    main, side = page.get_by_test_id("stMain"), page.get_by_test_id("stSidebar")
    steps = {}
    steps["Try an example"] = tab_to(page, main.get_by_role("button", name="Try an example"))
    focus_visible(page, "Try an example")
    page.keyboard.press("Enter")
    page.locator(".js-plotly-plot .hm image").first.wait_for(timeout=120_000)
    idle(page)
    steps["Summarize"] = tab_to(page, side.get_by_role("button", name="Summarize"))
    focus_visible(page, "Summarize")
    page.keyboard.press("Enter")
    idle(page)
    steps["BERT attention"] = tab_to(page, side.get_by_role("link", name="BERT attention"))
    focus_visible(page, "the BERT attention link")
    page.keyboard.press("Enter")
    page.locator(".js-plotly-plot .hm image").first.wait_for(timeout=60_000)
    idle(page)
    assert "layer 1, head 1" in title(page)

    button = page.locator('.updatemenu-button[aria-label="Show head 1"]').first
    steps["head 1 button"] = tab_to(page, button)
    focus_visible(page, "the head 1 button")
    page.keyboard.press("ArrowRight")  # the next head, shown at once
    wait_title(page, "head 2")
    idle(page)
    page.wait_for_function("document.querySelector('#microscope-live').textContent.includes('head 2')")
    assert "layer 1, head 2" in title(page)
    try:  # kept on the server's redraw (which rebuilds the buttons; the script puts the focus back)
        page.wait_for_function("document.activeElement.getAttribute('aria-label') === 'Show head 2'", timeout=5000)
    except Exception:  # noqa: BLE001  Playwright's TimeoutError, said plainly
        got = page.evaluate("document.activeElement.tagName + ' ' + document.activeElement.getAttribute('aria-label')")
        raise AssertionError(f"the focus left the head 2 button on redraw: it is on {got}") from None
    focus_visible(page, "the head 2 button")

    layer = main.get_by_role("combobox", name="Layer")
    steps["Layer (back)"] = tab_to(page, layer, back=True)
    focus_visible(page, "the Layer picker")
    page.keyboard.type("2")  # the list opens filtered to layer 2
    page.get_by_role("option", name="2", exact=True).wait_for()
    page.keyboard.press("Enter")
    wait_title(page, "layer 2")
    idle(page)
    assert re.search(r"BERT layer 2, head \d", title(page))

    steps["Why this summary"] = tab_to(page, side.get_by_role("link", name="Why this summary"), back=True)
    focus_visible(page, "the Why this summary link")
    page.keyboard.press("Enter")
    main.get_by_role("heading", name="Why this summary").first.wait_for(timeout=60_000)
    idle(page)
    assert page.get_by_test_id("stException").count() == 0
    page.screenshot(path=str(shots / "keyboard_why.png"))
    print("\nkeyboard: Tab presses per step", json.dumps(steps))
    page.close()


CHART_DATA = """(name) => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')].find(g => g.getAttribute('aria-label') === name);
  return gd._fullData.filter(t => t.visible === true).map(t => ({type: t.type, x: Array.from(t.x || []),
    z: t.z ? Array.from(t.z, r => Array.from(r)) : null}));
}"""


def as_text_rows(page, name: str) -> list[list[str]]:
    """Open the chart's "As text" expander and read its table body."""
    exp = page.get_by_test_id("stExpander").filter(has=page.get_by_text(f"As text: {name}", exact=True)).first
    exp.get_by_text(f"As text: {name}", exact=True).click()
    rows = exp.locator("tbody tr")
    rows.first.wait_for()
    return [r.locator("td").all_text_contents() for r in rows.all()]


def test_a_screen_reader_reaches_statuses_scores_chart_names_and_values(server, browser):  # noqa: F811
    page = open_app(browser, server)
    page.get_by_role("button", name="Try an example").click()
    page.get_by_test_id("stMain").locator(".js-plotly-plot").first.wait_for(timeout=120_000)
    idle(page)
    main = page.get_by_test_id("stMain")
    tree = main.aria_snapshot()
    k = int(re.search(r'heading "(\d+) of \d+ sentences', tree).group(1))
    assert tree.count("· selected") == k  # every sentence's status in words, not only its colour
    assert re.search(r"\d+ · 0\.\d\d · below the top k", tree)
    assert 'figure "Sentence scores"' in tree

    # the score chart's text table lists what the chart draws, bar by bar
    bars = page.evaluate(CHART_DATA, "Sentence scores")[0]["x"]
    rows = as_text_rows(page, "Sentence scores")
    assert [float(r[1]) for r in rows] == pytest.approx(bars, abs=5e-4)
    assert sum(r[2].startswith("★") for r in rows) == k

    go_to(page, "BERT attention")
    page.locator(".js-plotly-plot .hm image").first.wait_for(timeout=60_000)
    name = title(page).strip()
    assert re.fullmatch(r"BERT layer 1, head 1: \d+ × \d+ tokens", name)
    assert f'figure "{name}"' in main.aria_snapshot()
    z = page.evaluate(CHART_DATA, name)[0]["z"]
    strongest = max(max(r) for r in z) / 10_000
    rows = as_text_rows(page, name)
    assert float(rows[0][2]) == pytest.approx(strongest, abs=1e-6)  # the strongest cell, as drawn
    assert len(rows) == 8 and [float(r[2]) for r in rows] == sorted((float(r[2]) for r in rows), reverse=True)
    page.close()


OVERFLOW = """() => {
  const w = document.documentElement.clientWidth, out = [];
  for (const e of document.querySelectorAll('[data-testid=stMain] *')) {
    if (e.closest('.js-plotly-plot, [data-testid=stDataFrame], [data-testid=stCode], table')) continue;
    let hidden = false;  // visually hidden (a slider's range input inside a clipped 1-px box): not seen, not cut
    for (let p = e; p && !hidden; p = p.parentElement) {
      const s = getComputedStyle(p);
      hidden = s.opacity === '0' || s.clipPath !== 'none' || s.clip !== 'auto';
    }
    if (hidden) continue;
    const r = e.getBoundingClientRect();
    if (r.width && r.right > w + 1) out.push((e.getAttribute('data-testid') || e.tagName) + ' ' + Math.round(r.right));
  }
  return {page: document.documentElement.scrollWidth - w, cut: out.slice(0, 5)};
}"""


@pytest.mark.parametrize("width, zoom", [(320, 1), (640, 2)])
def test_reflow_at_320_px_and_at_200_percent_zoom(server, browser, shots, width, zoom):  # noqa: F811
    """320 CSS px (WCAG 1.4.10) and a 1280-px window at 200 % (640 CSS px, 2 device pixels each): the
    page never scrolls sideways and nothing but a map or a table runs past the edge."""
    page = browser.new_page(viewport={"width": width, "height": 720}, device_scale_factor=zoom)
    for path in ("", "bert_attention", "why"):  # a link to each page restores the example, summarized
        page.goto(f"{server}{path}?doc={EXAMPLE}&k=3&tb=1")
        page.get_by_test_id("stMain").locator(".js-plotly-plot").first.wait_for(timeout=120_000)
        idle(page)
        found = page.evaluate(OVERFLOW)
        page.screenshot(path=str(shots / f"reflow_{width}px_{zoom}x_{path or 'summary'}.png"), full_page=True)
        assert found["page"] <= 0 and not found["cut"], (path, found)
    page.close()
