"""How a view arrives in a session (issue 69). A link, a story's step, a slide, a class's view, a
lesson step and homework each hand ``open_view`` a ``View`` (ui.view) and its document's text; at
the top of the next run, before any widget, ``apply`` takes it: the page first (values written
before a page switch were lost to the browser's old widget values on the rerun it makes), then the
document and its settings (a Summarize when they differ from the shown result), then the controls.
Nothing else writes a view into the session, and a view's document is looked up in one place
(``document_of``)."""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ui import state
from ui.view import CONTROLS, TAKEN, View

PENDING = "_view_pending"  # the Arrival the next run takes
STEP_PAGE = "_view_step_page"  # the page the tour step's view was taken on (a class's: where its teacher is)
KEPT_QUERY = ("class", "seat", "story", "homework", "results")  # what the address keeps across a page switch


class _Keep:
    def __repr__(self) -> str:
        return "KEEP"


KEEP = _Keep()  # a field the arrival leaves as the session has it


@dataclass(frozen=True)
class Arrival:
    view: View
    text: str | None            # the view's document (None: the view has none; the session's stays)
    complete: bool = True       # controls the view does not name go back to their defaults (a whole view)
    step: object = None         # the tour step it shows (a lesson's or a class's: ui.classroom), or KEEP
    reference: object = KEEP    # the reference summary's text ("" or None: none); KEEP: an example brings its own
    example: str | None = None  # the sidebar's example picker shows this name
    via_link: bool = False      # what it cannot reproduce is said as the link's problems (else a notice)


def script_of(page: str) -> str:
    """A page's script, from its URL path ("" = Summary)."""
    return f"pages/{page or 'summary'}.py"


def document_of(store, doc: str | None) -> str | None:
    """A view's document: a shipped example by its file stem, else the store's text by its id
    (None: neither; the store down raises ui.store.Unavailable)."""
    from ui.widgets import EXAMPLES, example_text

    if not doc:
        return None
    path = EXAMPLES / f"{doc}.txt"
    if doc.replace("_", "").isalnum() and path.is_file():
        return example_text(path)
    return store.get(doc)


def take(state, pickers: dict, keep, complete: bool = False) -> None:
    """Write a view's pickers into ``state`` (each through ``keep``, so it outlives runs that do not
    draw it). ``complete`` (a class's or a slide's whole view): every control the view does not name
    goes back to its default."""
    for key, value in pickers.items():
        if key in CONTROLS:
            state[keep(key)] = value
            if CONTROLS[key].per_result:
                state.setdefault(TAKEN, set()).add(key)
    if complete:
        for c in CONTROLS.values():
            if c.key not in pickers:
                state.pop(c.key, None)


def open_view(view: View, text: str | None, **how) -> None:
    """The next run takes ``view`` with its document's ``text`` (``Arrival``'s fields: how)."""
    st.session_state[PENDING] = Arrival(view, text, **how)


def pending() -> bool:
    return st.session_state.get(PENDING) is not None


def apply(page) -> None:
    """At the top of a run, before any widget: the view asked for (``open_view``), if any."""
    a: Arrival | None = st.session_state.get(PENDING)
    if a is None:
        return
    v = a.view
    if v.page != page.url_path:  # (the address keeps the class, the seat and the story it names)
        state.carry_widgets(state.SIDEBAR)  # (this run stops before the sidebar draws them: they would be forgotten)
        st.switch_page(script_of(v.page), query_params={k: st.query_params[k] for k in KEPT_QUERY
                                                         if k in st.query_params})
    del st.session_state[PENDING]
    if a.text is not None:
        from ui.models import weights_choices
        from ui.widgets import REFERENCE, set_document

        set_document(a.text, example=a.reference is KEEP)  # an example brings its reference
        if a.example is not None:
            st.session_state["example"] = a.example
        if a.reference is not KEEP:  # the reference summary the view was made with (none: none)
            st.session_state[REFERENCE] = a.reference or ""
        st.session_state.update({"k": v.k, "block_trigram": v.tb})
        if v.w in weights_choices():
            st.session_state["weights"] = v.w
        elif v.w:
            from viz.common import markdown_text

            using = st.session_state.get("weights") or weights_choices()[0]
            if a.via_link:
                state.set_link_problems([f"w={v.w[:80]} is not weights this server has (using {using})"])
            else:
                state.view_notice(f"This view's model {markdown_text(v.w[:80])} is not one this server has: it is "
                                  f"shown with {markdown_text(using)}.")
        p, w = state.params(), st.session_state.get("weights")
        if p is None or (p["text"], p["k"], p["block_trigram"], p["weights"]) != (a.text, v.k, v.tb, w):
            state.request_summarize()
            state.want_window(v.win)
        else:
            st.session_state[state.WINDOW] = v.win
    take(st.session_state, v.pickers, state.keep, complete=a.complete)
    if a.step is not KEEP:
        st.session_state[state.STEP], st.session_state[STEP_PAGE] = a.step, v.page
