"""Every control on every page changes what the page shows, or is not offered (issue 41).

AppTest, the real model: on each page (after Summarize), each of the main area's pickers, choice
buttons, toggles and checkboxes is set to another value in turn, and what the page shows (its
charts, text, tables and messages, not the widgets themselves) must differ from before. A control
that only takes effect with a button (a setting for the next run) is listed in ``WAITS_FOR`` with
that button, which the test clicks too."""
from __future__ import annotations

import pytest

from test_app import SHORT, navigation_not_pages_dir, new_app, summarize  # noqa: F401  (the fixture: every AppTest)

PAGES = ["summary", "why", "bert_attention", "sentence_encoder", "masks_positions", "heads", "what_if", "learn"]
SHOWN = {"plotly_chart", "markdown", "caption", "dataframe", "html", "info", "warning", "error", "success", "title",
         "header", "subheader", "text", "json", "metric", "table", "latex", "code"}
WAITS_FOR = {  # a control → the button that runs with it (the setting is for that run)
    "why_vz": "why_scoreboard_run",
}
SKIP = {  # controls whose effect another test checks
    "window": "the BERT window: test_app.test_window_switch_changes_tokens",
    "whatif_kind": "an edit's kind, applied by Add: test_what_if",
    "whatif_sentence": "an edit's sentence, applied by Add: test_what_if",
    "whatif_to": "an edit's target, applied by Add: test_what_if",
    "whatif_with": "an edit's other sentence, applied by Add: test_what_if",
    "whatif_word": "an edit's word, applied by Add: test_what_if",
}


def shown(at) -> list[str]:
    """What the main area shows, widgets left out (their own protos carry their values)."""
    out = []

    def walk(node):
        for child in getattr(node, "children", {}).values():
            if child.type in SHOWN:
                out.append(f"{child.type}:{child.proto}")
            walk(child)

    walk(at.main)
    return out


def controls(at) -> list:
    """The main area's changeable controls (not buttons, not the sidebar), with a key."""
    found = []
    for kind in ("selectbox", "segmented_control", "radio", "toggle", "checkbox"):
        found += [(kind, w.key) for w in getattr(at.main, kind) if w.key and not w.disabled]
    return found


def change(at, kind: str, key: str) -> bool:
    """Set the control to another value; False when it has only one."""
    w = getattr(at, kind)(key=key)
    if kind in ("toggle", "checkbox"):
        w.set_value(not w.value)
    elif kind == "selectbox":
        if len(w.options) < 2:
            return False
        w.select_index((w.index + 1) % len(w.options) if w.index is not None else 0)
    else:  # a radio or choice buttons: the next option, by its value
        options = list(w.options)
        if len(options) < 2:
            return False
        now = w.format_func(w.value) if w.value is not None else None
        nxt = options[(options.index(now) + 1) % len(options)] if now in options else options[0]
        raw = next((o for o in getattr(w, "_raw_options", options) if w.format_func(o) == nxt), nxt)
        w.set_value(raw)
    return True


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_every_control_changes_what_the_page_shows(summarizer, page):
    at = summarize(new_app(), SHORT)
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception
    seen, dead = set(), []
    while True:
        todo = [c for c in controls(at) if c not in seen and c[1] not in SKIP]
        if not todo:
            break
        kind, key = todo[0]
        seen.add((kind, key))
        before = shown(at)
        if not change(at, kind, key):
            continue
        at.run()
        if key in WAITS_FOR:
            next(b for b in at.button if b.key == WAITS_FOR[key]).click().run()
        assert not at.exception, (page, key, at.exception)
        if shown(at) == before:
            dead.append(key)
    assert seen, page
    assert not dead, f"{page}: these controls change nothing shown: {dead}"
