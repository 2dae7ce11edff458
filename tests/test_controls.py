"""Every control on every page changes what the page shows, or is not offered (issue 41).

AppTest, the real model: on each page (after Summarize), each of the main area's pickers, choice
buttons, toggles and checkboxes is set to another value in turn, and what the page shows (its
charts, text, tables and messages, not the widgets themselves) must differ from before. A control
that only takes effect with a button (a setting for the next run) is listed in ``WAITS_FOR`` with
that button, which the test clicks too."""
from __future__ import annotations

import pytest

from helpers import SHORT, new_app, summarize

PAGES = ["summary", "why", "bert_attention", "sentence_encoder", "masks_positions", "heads", "what_if", "learn"]
SHOWN = {"bidi_component", "markdown", "caption", "dataframe", "html", "info", "warning", "error", "success", "title",
         "header", "subheader", "text", "json", "metric", "table", "latex", "code"}
WAITS_FOR = {  # a control → the button that runs with it (the setting is for that run)
    "why_vz": "why_scoreboard_run",
}
RUN_ON_REQUEST = {"bert_vz_run"}  # value zeroing's Run: the view's controls shape the map it then draws
SKIP = {  # controls whose effect another test checks (a key, or the start of one)
    "window": "the BERT window: test_app.test_window_switch_changes_tokens",
    "whatif_kind": "an edit's kind, applied by Add: test_what_if",
    "whatif_sentence": "an edit's sentence, applied by Add: test_what_if",
    "whatif_to": "an edit's target, applied by Add: test_what_if",
    "whatif_with": "an edit's other sentence, applied by Add: test_what_if",
    "whatif_word": "an edit's word, applied by Add: test_what_if",
}


def shown(at) -> list[str]:
    """What the main area shows: its charts, text, tables and messages, and which controls it
    offers (not their values: a control's own proto carries its value)."""
    out = []

    def walk(node):
        for child in getattr(node, "children", {}).values():
            if child.type in SHOWN:
                out.append(f"{child.type}:{child.proto}")
            elif getattr(child, "key", None):  # which controls are offered (a choice may bring others)
                out.append(f"offered:{child.type}:{child.key}")
            walk(child)

    walk(at.main)
    return out


def controls(at) -> list:
    """The main area's changeable controls (not buttons, not the sidebar), with a key."""
    found = []
    for kind in ("selectbox", "segmented_control", "radio", "toggle", "checkbox"):
        found += [(kind, w.key) for w in getattr(at.main, kind) if w.key and not w.disabled]
    return found


def raw_option(w, shown: str):
    """The value behind the option shown as ``shown``. AppTest knows options only as shown (and
    its select_index passes the shown text as the value), so the value is found among likely
    ones: the shown text itself, indices, None, heads as tuples, and the keys of a dict whose .get
    formats them."""
    import itertools

    fmt = w.format_func
    candidates = [shown, None, *range(64)]
    if isinstance(w.value, tuple):  # a head: (layer, head) or (part, layer, head)
        candidates += itertools.product(*[("bert", "inter") if isinstance(x, str) else range(16) for x in w.value])
    if isinstance(getattr(fmt, "__self__", None), dict):
        candidates = list(fmt.__self__) + candidates
    for c in candidates:
        try:
            if str(fmt(c)) == shown:
                return c
        except Exception:  # noqa: BLE001  (a format function given a value of another type)
            continue
    raise LookupError(f"{w.key}: no value found for the option {shown!r}")


def change(at, kind: str, key: str) -> bool:
    """Set the control to another value; False when it has only one."""
    w = getattr(at, kind)(key=key)
    if kind in ("toggle", "checkbox"):
        w.set_value(not w.value)
        return True
    options = list(w.options)
    if len(options) < 2:
        return False
    now = str(w.format_func(w.value)) if w.value is not None or kind == "selectbox" else None
    nxt = options[(options.index(now) + 1) % len(options)] if now in options else options[0]
    w.set_value(raw_option(w, nxt))
    return True


CHOICES = ("segmented_control", "radio")  # a view: every option is visited, and the other controls tried in it


def explore(at, page: str, fixed: frozenset, dead: set, tried: set, depth: int = 0) -> None:
    """Try every control not in ``fixed``; a choice's every option, and (two choices deep) every
    other control with that option chosen. Records in ``dead`` the controls that changed nothing."""
    for kind, key in controls(at):
        if key in fixed or key.startswith(tuple(SKIP)) or (kind, key) not in controls(at):
            continue
        w = getattr(at, kind)(key=key)
        n = len(w.options) if kind not in ("toggle", "checkbox") else 2
        start = w.value
        for _ in range(n - 1 if kind in CHOICES else 1):
            before = shown(at)
            if not change(at, kind, key):
                break
            at.run()
            if key in WAITS_FOR:
                next(b for b in at.button if b.key == WAITS_FOR[key]).click().run()
            for b in [b for b in at.button if b.key in RUN_ON_REQUEST]:  # a view drawn on request: draw it
                b.click().run()
            assert not at.exception, (page, key, at.exception)
            tried.add(key)
            if shown(at) == before:
                dead.add(f"{key} (with {', '.join(sorted(fixed)) or 'the defaults'})")
            if kind in CHOICES and depth < 2:
                explore(at, page, fixed | {key}, dead, tried, depth + 1)
        if kind in CHOICES and getattr(at, kind)(key=key).value != start:  # back to where it was
            getattr(at, kind)(key=key).set_value(start)
            at.run()


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_every_control_changes_what_the_page_shows(summarizer, page):
    at = summarize(new_app(), SHORT)
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception
    dead, tried = set(), set()
    explore(at, page, frozenset(), dead, tried)
    assert tried, page
    assert not dead, f"{page}: these controls change nothing shown: {sorted(dead)}"
