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
    main.get_by_role("figure", name=name, exact=True).wait_for(timeout=5_000)  # ui/a11y.js names a new chart within 250 ms
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


# ---------------------------------------------------------------- issue 52: what axe cannot see

PAGE_PATHS = {"": "Summary", "why": "Why this summary", "bert_attention": "BERT attention",
              "sentence_encoder": "Sentence encoder", "masks_positions": "Masks & positions", "heads": "Heads",
              "what_if": "What if", "corpus": "Corpus", "learn": "Learn"}

STOP = """() => {  // the focused element: where it is, whether it is a chart's tool, what rings it
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  const r = e.getBoundingClientRect(), h = document.querySelector('[data-testid=stHeader]').getBoundingClientRect();
  const ring = getComputedStyle(e.matches('input') && e.closest('label, [data-baseweb], [data-testid=stSlider] div')
                                || e).outlineColor;
  return {id: (e.getAttribute('aria-label') || e.textContent || e.tagName).trim().slice(0, 40) + '@' + Math.round(r.left) + ',' + Math.round(r.top + scrollY),
          main: !!e.closest('[data-testid=stMain]'), top: r.top, bottom: r.bottom, left: r.left, right: r.right,
          header: h.bottom, toolbar: !!e.closest('.modebar'), ring};
}"""


WARM: set[str] = set()


def open_page(browser, server, path: str, width: int = 1280, height: int = 720, **kw):
    """A new page on ``path`` with the shortest example summarized (a link restores it)."""
    if server not in WARM:  # a fresh server's first session (model loading, Streamlit's first run) on its own
        open_app(browser, server).close()
        WARM.add(server)
    page = browser.new_page(viewport={"width": width, "height": height}, **kw)
    page.goto(f"{server}{path}?doc={EXAMPLE}&k=3&tb=1")
    main = page.get_by_test_id("stMain")
    main.get_by_role("heading", level=1).first.wait_for(timeout=120_000)
    if path != "what_if":  # What if draws no chart until B has an edit
        main.locator(".js-plotly-plot").first.wait_for(timeout=120_000)
    idle(page)
    return page


def stops(page, key: str, limit: int = 260) -> list[dict]:
    """Every stop ``key`` (Tab or Shift+Tab) reaches, once round."""
    out, seen = [], set()
    for _ in range(limit):
        page.keyboard.press(key)
        s = page.evaluate(STOP)
        if s is None:
            continue
        if s["id"] in seen:
            break
        seen.add(s["id"])
        out.append(s)
    return out


def test_no_focused_control_hides_under_the_header_and_the_toolbars_are_out_of_the_tab_order(server, browser):
    """WCAG 2.4.11 on every page, Tab and Shift+Tab: no control of the page is ever entirely under
    Streamlit's 60-px header when focused; 2.4.1: no chart tool is a Tab stop (Masks & positions
    had 159 stops, 112 of them toolbar buttons); every ring 3 px and ≥ 3:1 (black)."""
    counts = {}
    for path, name in PAGE_PATHS.items():
        page = open_page(browser, server, path)
        for key in ("Tab", "Shift+Tab"):
            found = stops(page, key)
            hidden = [s["id"] for s in found if s["main"] and s["bottom"] <= s["header"] + 0.5]
            assert not hidden, (name, key, hidden)
            assert not [s for s in found if s["toolbar"]], (name, "a chart tool in the Tab order")
            counts[name, key] = len(found)
        page.close()
    print("\nTab stops per page:", json.dumps({f"{n} {k}": c for (n, k), c in counts.items()}))
    assert counts["Masks & positions", "Tab"] < 60


def test_at_320_px_nothing_is_off_screen_no_page_scrolls_sideways_and_head_buttons_stay_in_their_chart(server,
                                                                                                        browser):
    """WCAG 1.4.10 / 2.4.7 at 320 CSS px: the first 25 Tab stops all on screen (the collapsed sidebar
    is inert, not 20 stops off to the left); every head button inside its chart; no page wider
    than the window (the Heads and Corpus tables scroll inside their own box)."""
    for path, name in PAGE_PATHS.items():
        page = open_page(browser, server, path, width=320)
        page.wait_for_function("document.querySelector('[data-testid=stSidebar]').inert", timeout=5000)  # collapsed
        assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0, name
        off = [s["id"] for s in stops(page, "Tab", 25) if s["right"] <= 0 or s["left"] >= 320]
        assert not off, (name, off)
        if path == "bert_attention":
            outside = page.evaluate("""() => [...document.querySelectorAll('[data-testid=stMain] .js-plotly-plot')].flatMap(gd => {
              const c = gd.getBoundingClientRect();
              return [...gd.querySelectorAll('.updatemenu-button')].filter(b => {
                const r = b.getBoundingClientRect(); return r.left < c.left - 1 || r.right > c.right + 1; })
                .map(b => b.getAttribute('aria-label')); })""")
            assert page.locator(".updatemenu-button").count() >= 13 and not outside, outside
        page.close()


LUMINANCE = """(c) => {
  const m = c.match(/[\\d.]+/g).map(Number);
  const l = m.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
}"""
CHART_TEXT = """(lum) => {  // every visible chart text of the page (not a heatmap cell's own label): fill, size
  const L = eval(lum), ratio = (a, b) => (Math.max(L(a), L(b)) + 0.05) / (Math.min(L(a), L(b)) + 0.05);
  return [...document.querySelectorAll('[data-testid=stMain] .js-plotly-plot text')].filter(t =>
      t.getBoundingClientRect().width > 0 && t.textContent.trim() && !t.closest('.hm, .heatmaplayer, .textpoint')
      && !t.closest('.microscope-shown'))  // the shown head's button: white on blue, 5.1:1
    .map(t => ({text: t.textContent.trim().slice(0, 20), ratio: ratio(getComputedStyle(t).fill, 'rgb(255, 255, 255)')}))
    .filter(t => t.ratio < 4.5);
}"""


def test_chart_text_rings_and_borders_contrast_and_forced_colours_keep_what_carries_meaning(server, browser):
    """WCAG 1.4.3: every chart text ≥ 4.5:1 (Streamlit's chart theme painted it #808495, 3.7:1); 1.4.11:
    text field and picker frames ≥ 3:1; in forced colours (Windows high contrast) the checked
    Trigram blocking box, the selected segment, the slider's filled track and the focus ring stay
    visible."""
    page = open_page(browser, server, "bert_attention")
    assert page.locator("[data-testid=stMain] .js-plotly-plot text").count() > 50
    assert not page.evaluate(CHART_TEXT, LUMINANCE), page.evaluate(CHART_TEXT, LUMINANCE)[:5]
    frames = page.evaluate("""(lum) => { const L = eval(lum);
      return [...document.querySelectorAll('[data-testid=stTextAreaRootElement], [data-testid=stNumberInputContainer], '
                                           + '[data-testid=stSelectbox] [role=group]')]
        .map(e => (Math.max(L(getComputedStyle(e).borderTopColor), L('rgb(255,255,255)')) + 0.05)
                / (Math.min(L(getComputedStyle(e).borderTopColor), L('rgb(255,255,255)')) + 0.05)); }""", LUMINANCE)
    assert frames and min(frames) >= 3, frames
    page.emulate_media(forced_colors="active")
    page.wait_for_timeout(300)
    seen = page.evaluate("""() => {
      const bg = (e) => e ? getComputedStyle(e).backgroundColor : null;
      const box = document.querySelector('[data-testid=stSidebar] [data-testid=stCheckbox] label[data-selected=true] > div');
      const segs = [...document.querySelectorAll('[data-testid=stMain] [data-testid=stButtonGroup] [role=radio]')];
      const on = segs.find(b => b.getAttribute('aria-checked') === 'true'), off = segs.find(b => b.getAttribute('aria-checked') === 'false');
      const track = [...document.querySelectorAll('[data-testid=stSlider] [data-orientation=horizontal] div')]
        .map(bg).filter(c => c && c !== 'rgba(0, 0, 0, 0)' && c !== 'rgb(255, 255, 255)');
      return {box: bg(box), page: bg(document.body), on: bg(on), off: bg(off), track: track.length};
    }""")
    assert seen["box"] not in (None, seen["page"], "rgba(0, 0, 0, 0)"), seen  # the checked box is filled
    assert seen["on"] != seen["off"], seen  # the selected segment stands out
    assert seen["track"] > 0, seen  # the slider's track is drawn
    page.get_by_test_id("stSidebar").get_by_role("button", name="Summarize").focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
    page.close()


def test_the_shown_head_says_so_and_the_slider_reads_its_sentence_number(server, browser):
    """WCAG 4.1.2: exactly the shown layer's and head's buttons are pressed (also after ←/→); the Sentences
    slider's value in the accessibility tree is the sentence number its thumb shows (it was the
    option's index)."""
    page = open_page(browser, server, "bert_attention")
    pressed = lambda: page.locator('.updatemenu-button[aria-pressed="true"]').evaluate_all(  # noqa: E731
        "bs => bs.map(b => b.getAttribute('aria-label'))")
    assert pressed() == ["Show layer 1", "Show head 1"] and "head 1" in title(page)
    page.locator('.updatemenu-button[aria-label="Show head 1"]').first.focus()
    page.keyboard.press("ArrowRight")
    wait_title(page, "head 2")
    is_pressed = "[...document.querySelectorAll('.updatemenu-button[aria-pressed=\"true\"]')].some(b => b.getAttribute('aria-label') === %r)"
    page.wait_for_function(is_pressed % "Show head 2", timeout=10_000)
    assert pressed() == ["Show layer 1", "Show head 2"]
    wait_title(page, "layer 1, head 2:")  # its exact map, from the server: the buttons are redrawn then
    # the layer row by keyboard: layer 2 of head 2, then its exact map; the focus stays on the button
    page.locator('.updatemenu-button[aria-label="Show layer 1"]').first.focus()
    page.keyboard.press("ArrowRight")
    wait_title(page, "layer 2, head 2")
    wait_title(page, "layer 2, head 2:")
    page.wait_for_function(is_pressed % "Show layer 2", timeout=10_000)
    assert pressed() == ["Show layer 2", "Show head 2"]
    page.wait_for_function("document.activeElement.getAttribute('aria-label') === 'Show layer 2'", timeout=10_000)
    cdp = page.context.new_cdp_session(page)
    sliders = [n for n in cdp.send("Accessibility.getFullAXTree")["nodes"] if n.get("role", {}).get("value") == "slider"
               and "Sentences" in n.get("name", {}).get("value", "")]
    thumbs = page.get_by_test_id("stSliderThumbValue").all_text_contents()
    shown = [dict((p["name"], p["value"].get("value")) for p in n["properties"])["valuetext"] for n in sliders]
    assert len(sliders) == 2 and shown == [t.strip() for t in thumbs], (shown, thumbs)
    assert int(shown[0]) > 0 and int(shown[1]) >= int(shown[0])
    page.close()


SAID = """window.__said = []; new MutationObserver(() => { const s = document.getElementById('microscope-status');
  if (s && s.textContent && window.__said[window.__said.length - 1] !== s.textContent) window.__said.push(s.textContent); })
  .observe(document, {subtree: true, childList: true, characterData: true});"""


def focused(page) -> str:
    return page.evaluate("document.activeElement.tagName + ' ' + (document.activeElement.getAttribute('aria-label')"
                         " || document.activeElement.textContent).trim().slice(0, 40)")


def test_a_summarize_is_announced_and_the_focus_lands_somewhere_sensible(server, browser, tmp_path):
    """WCAG 4.1.3 / 2.4.3 by keyboard: a status message says when a Summarize starts and what it
    produced; after Try an example (its button goes away) the focus is on the page's heading, after
    a download back on its button, after a page change on the new page's heading, in a popover on
    its first field; each page has a title of its own (2.4.2)."""
    page = browser.new_page(viewport={"width": 1280, "height": 720}, accept_downloads=True)
    page.add_init_script(SAID)
    page.goto(server)
    button = page.get_by_role("button", name="Try an example")
    button.wait_for(timeout=120_000)
    assert page.title() == "Summary · Attention microscope"
    button.focus()
    page.keyboard.press("Enter")
    page.get_by_test_id("stMain").locator(".js-plotly-plot").first.wait_for(timeout=120_000)
    idle(page)
    page.wait_for_function("window.__said.some(s => s.startsWith('Summarized.'))", timeout=10_000)
    said = page.evaluate("window.__said")
    assert said[0].startswith("Summarizing") and "Result for" in said[-1], said
    page.wait_for_function("document.activeElement.tagName === 'H1'", timeout=10_000)
    assert focused(page) == "H1 Summary"

    page.get_by_role("button", name="Text .txt").focus()
    with page.expect_download():
        page.keyboard.press("Enter")
    page.wait_for_timeout(1000)
    assert focused(page) == "BUTTON Text .txt"

    side = page.get_by_test_id("stSidebar")  # a chart's camera, without its toolbar: the Figure downloads panel
    side.get_by_text("Figure downloads").click()
    side.get_by_role("button", name="Download this chart").focus()
    with page.expect_download(timeout=30_000) as chart:
        page.keyboard.press("Enter")
    assert chart.value.suggested_filename.startswith("microscope_") and chart.value.suggested_filename.endswith(".png")

    side.get_by_role("link", name="Heads").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("document.activeElement.tagName === 'H1' && document.activeElement.textContent.startsWith('Heads')",
                           timeout=60_000)
    assert page.title() == "Heads · Attention microscope"

    side.get_by_text("Class & lessons").click()
    side.get_by_role("button", name="Lead a class again").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("document.activeElement.getAttribute('aria-label') === 'Class code'", timeout=10_000)
    page.close()
    for path, name in PAGE_PATHS.items():
        page = browser.new_page()
        page.goto(server + path)
        page.wait_for_function("(t) => document.title === t", arg=f"{name} · Attention microscope", timeout=60_000)
        page.close()


def test_a_refused_upload_is_one_visible_announced_sentence_and_every_reason_is_reachable(server, browser, tmp_path):
    """WCAG 3.3.1: a file over the 1 MB limit is refused with a sentence shown under it (role alert),
    not only in a tooltip on a red icon; 1.3.1 / 2.1.1: on Summary every sentence's reason (which
    was only in a mouse tooltip) is in the score chart's "As text" table."""
    big = tmp_path / "big.txt"
    big.write_text("word " * 420_000)  # 2.1 MB
    page = open_page(browser, server, "")
    page.get_by_test_id("stSidebar").get_by_role("region", name="…or upload a .txt / .md file").locator(
        "input[type=file]").set_input_files(str(big))  # the document's (the reference summary has one too)
    alert = page.get_by_test_id("stSidebar").get_by_role("alert").filter(has_text="1.0MB or smaller")
    alert.wait_for(timeout=30_000)
    box = alert.bounding_box()
    assert box and box["width"] > 20 and box["height"] > 5, box
    reasons = as_text_rows(page, "Sentence scores")
    assert all(r[-1] for r in reasons) and any("highest score" in r[-1] for r in reasons), reasons[:3]
    page.close()
