"""Present a story (issue 50): the whole window for one step at a time, no sidebar and no
controls: the step's title and note in large type, its chart (the one the step names, else the
first its page draws: the real one, hover included; or the page's HTML, such as the Why page's words), the chart in plain words, the summary where the step shows one,
the settings that made it, and a step counter. ←/→, PageUp/PageDown and Space step (what
presentation clickers send), Home/End jump, Esc leaves.

A step's slide is computed once, by taking the step's view (its page, document and pickers, as a
class student takes the teacher's) and running its page out of sight with ``plot`` keeping the
figures (ui.figures.CAPTURE); it is then cached for the whole server, so stepping back, or
presenting again, draws at once. The exports (an offline HTML deck, a PDF) are made from the same
slides: ``start(export=True)`` walks the steps not computed yet, one run each."""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import streamlit as st

from ui import arrival, slide_layout, state
from ui.errors import shared
from ui.resources import document_store, slide_cache
from ui.runs import progress
from viz.deck import Slide, deck_html

PRESENT = "story_present"  # the step shown (from 0); absent: not presenting
EXPORT = "story_exporting"  # presenting only to compute every slide, for the exports
APPLIED = "_story_applied"  # the view (its key) this session last took for a slide
MISSING = "_story_missing"  # (the view, why) when its document is not here: gone from the store, or the store down
MADE = "_story_slides"  # the slides this session was shown or made: view key → Slide
EXPORTS = "story_exports"  # the exports made: {"html": str, "pdf": bytes | None, "pdf_error": str}, and a story
# with questions, the teacher's handout: "handout_html", "handout_pdf", "handout_error"
STORY = "story"  # this session's story (ui.stories.Story: a tour with an id and an owner; ui.story edits it)
TITLE = "story_title"  # the Story panel's input of its title (ui.story)
NOTES_KEY = "story_notes_key"  # this session holds the story's key (ui.stories.notes_key): its notes, its presenter
AHEAD, TRIED = "_story_ahead", "_story_tried"  # the step computed ahead this run; the views tried ahead
PRESENTER = "_story_presenter"  # this session is the presenter view of the story it opened (?presenter=1)

GONE = ("This step's document is no longer on this server (it keeps the 2,000 documents summarized most "
        "recently): its note is kept. Paste the document again, Summarize and add the view again.")
DOWN = ("The shared store cannot be reached right now, so this step's document is not here yet: it is when the "
        "store is back.")
NO_CHART = "This view draws its chart only when asked on its page (a Run button there): press Esc, run it, come back."

_KEYS_JS = """
export default function(component) {
  const { setTriggerValue, setStateValue } = component;
  const names = {ArrowRight: 'next', PageDown: 'next', ' ': 'next', ArrowLeft: 'prev', PageUp: 'prev',
                 Home: 'first', End: 'last', Escape: 'exit'};
  let typed = '';  // digits typed, then Enter: jump to that step
  const on = (e) => {
    if (!document.querySelector('.st-key-present_slide, .st-key-presenter_view')) {  // no longer presenting
      window.removeEventListener('keydown', on, true); return;
    }
    if (e.target && e.target.closest && e.target.closest('input, textarea, select')) return;
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (/^[0-9]$/.test(e.key)) { typed = (typed + e.key).slice(-3); e.preventDefault(); return; }
    if (e.key === 'Enter' && typed) { e.preventDefault(); setTriggerValue('key', 'goto:' + typed); typed = ''; return; }
    if (e.key === 'f' || e.key === 'F') {  // the browser's full screen, from the page itself
      e.preventDefault();
      if (document.fullscreenElement) document.exitFullscreen(); else document.documentElement.requestFullscreen();
      return;
    }
    typed = '';
    const name = names[e.key];
    if (!name) return;
    e.preventDefault(); e.stopPropagation();
    setTriggerValue('key', name);
  };
  // Streamlit calls this again on every run without the last call's clean-up: one listener only
  if (window.__microscopePresent) window.removeEventListener('keydown', window.__microscopePresent, true);
  window.__microscopePresent = on;
  window.addEventListener('keydown', on, true);
  const size = () => { setStateValue('height', window.innerHeight); setStateValue('width', window.innerWidth); };
  size();
  window.addEventListener('resize', size);
  return () => window.removeEventListener('resize', size);
}
"""
_keys = st.components.v2.component("microscope_present_keys", js=_KEYS_JS)


def story():
    """This session's story (ui.stories.Story), or None."""
    return st.session_state.get(STORY)


def steps() -> tuple:
    """This session's story's steps (ui.tour.Step), or none."""
    return story().steps if story() else ()


def title() -> str:
    """This session's story's title: its own, else its first step's."""
    return (story().title or (steps()[0].title if steps() else "")) if story() else ""


def story_id() -> str | None:
    return story().id if story() else None


def active() -> bool:
    return st.session_state.get(PRESENT) is not None


def start(n: int = 0, export: bool = False) -> None:
    st.session_state[PRESENT], st.session_state[EXPORT] = n, export
    for k in (APPLIED, AHEAD, TRIED):
        st.session_state.pop(k, None)
    if not export and linked():  # the presenter view follows from the store
        from ui.stories import start_presenting

        shared(start_presenting, document_store(), story_id(), n)
    if export:  # every slide made again now (a cached one is taken from the cache at once)
        st.session_state.pop(EXPORTS, None)
        st.session_state.pop(MADE, None)


def stop() -> None:
    for k in (PRESENT, EXPORT, APPLIED, MISSING, AHEAD, TRIED):
        st.session_state.pop(k, None)


def key_of(view) -> str:
    """A step's view (ui.view.View) as the slide cache's key."""
    return json.dumps(view.to_store(), sort_keys=True)


def take(view, text: str) -> None:
    """The next run takes a story step's ``view`` (ui.view.View) with its document's ``text``, whole
    (ui.arrival), its reference summary with it."""
    arrival.open_view(view, text, reference=document_store().get(view.ref) if view.ref else None)


def prepare(store) -> None:
    """At the top of a run, before any widget: the shown step's view is taken (page, document,
    pickers), unless its slide is cached or this session took it already."""
    shown = steps()
    if not active() or not shown:
        return stop() if active() else None
    n = st.session_state[PRESENT] = max(0, min(len(shown) - 1, st.session_state[PRESENT]))
    view = shown[n].view
    key = key_of(view)
    if slide_cache().peek(key) is not None and not st.session_state.get(EXPORT):
        return look_ahead(store, shown, n)
    if slide_cache().peek(key) is not None or st.session_state.get(APPLIED) == key:
        return
    st.session_state.pop(AHEAD, None)  # the shown step first
    st.session_state[APPLIED] = key
    text = shared(arrival.document_of, store, view.doc, default=False)
    if text is False:  # the store is down (its notice says so): tried again on the next run
        st.session_state[MISSING], st.session_state[APPLIED] = (key, DOWN), None
        return
    if text is None:
        st.session_state[MISSING] = (key, GONE)
        return
    st.session_state.pop(MISSING, None)
    take(view, text)


def look_ahead(store, shown, n: int) -> None:
    """The shown step's slide is cached: take the view of the next step without one (after it, then
    before it), which ``show`` computes out of sight once the shown slide is drawn, then on to the
    next; so after the first, no step waits for its page (issue 71). Each step is tried once a
    presentation (a view without a chart is not kept); a key pressed meanwhile stops the work."""
    ahead = st.session_state.get(AHEAD)
    if ahead is not None and 0 <= ahead < len(shown) and st.session_state.get(APPLIED) == key_of(shown[ahead].view):
        return  # taken: this run, or the one its page switch starts, computes it
    st.session_state.pop(AHEAD, None)
    tried = st.session_state.setdefault(TRIED, set())
    for i in [*range(n + 1, len(shown)), *range(n - 1, -1, -1)]:
        key = key_of(shown[i].view)
        if key in tried or slide_cache().peek(key) is not None:
            continue
        tried.add(key)
        text = shared(arrival.document_of, store, shown[i].view.doc, default=False)
        if text:  # (gone, or the store down: said when that step is shown)
            st.session_state[AHEAD], st.session_state[APPLIED] = i, key
            return take(shown[i].view, text)


def compute(pg, view, examples: dict, work) -> Slide:
    """The step's page run out of sight (in the hidden container ``work``), its figures kept: the
    first one is the slide's chart."""
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    from ui import figures
    from ui.runs import current_trace
    from ui.widgets import result_caption
    from viz.plain import PLAIN, kind

    st.session_state[figures.CAPTURE] = []
    try:
        with work:  # hidden: only its figures are wanted
            pg.run()
    except StopException:  # a page that stops early (nothing to show yet)
        pass
    finally:
        captured = st.session_state.pop(figures.CAPTURE, [])
    trace, params = current_trace(), state.params()
    fig, chart = next((c for c in captured if c[1] == view.chart), captured[0] if captured else (None, None))
    summary = [trace.summary.sentences[i] for i in trace.summary.selected] if view.page == "" and trace else []
    settings = f"{pg.title} · " + (result_caption(trace, params, examples, plain=True) if trace else "")
    picked = tuple(sorted(trace.summary.selected)) if trace else ()
    if isinstance(fig, str):  # a page's HTML (the Why page's words), not a chart
        return Slide("", "", None, "", summary, settings, html=fig, picked=picked)
    return Slide("", "", fig, PLAIN.get(kind(chart) or "", ""), summary, settings, "" if fig is not None else NO_CHART,
                 picked=picked)


def show(pg, examples: dict) -> None:
    """The slide of the shown step (computed and cached first if need be), and the keys."""
    shown = steps()
    n = st.session_state[PRESENT]
    step = shown[n]
    key = key_of(step.view)
    st.html(slide_layout.CSS)
    # every run lays out the same elements in the same order (a spinner's slot, the hidden page's
    # container, then the slide), so a run computing ahead redraws the slide in place: no second copy
    busy, work = st.empty(), st.container(key="present_work")
    slide = slide_cache().peek(key)
    if slide is None:
        gone = st.session_state.get(MISSING)
        if gone and gone[0] == key:
            slide = Slide("", "", missing=gone[1])
        else:  # the previous slide stays greyed meanwhile: say what is being computed (once per step and server)
            from viz.common import markdown_text

            named = markdown_text(step.title or "untitled")
            with busy.container(), progress(f"Computing step {n + 1} of {len(shown)}, \u201c{named}\u201d (its page "
                                            "runs once, then the slide is kept for every showing)"):
                slide = compute(pg, step.view, examples, work)
        if slide.figure is not None or slide.html:  # (one without a chart may have one later: not kept)
            slide_cache().get(key, lambda: slide)
            st.session_state[AHEAD] = -1  # drawn, the next run starts on the others (``look_ahead``)
    st.session_state.setdefault(MADE, {})[key] = slide  # this session's, for its exports
    if st.session_state.get(EXPORT):
        return export_next(shown)
    pressed = _keys(key="present_keys", on_key_change=lambda: None, on_height_change=lambda: None,
                    on_width_change=lambda: None)
    size = [int(v) if isinstance(v, (int, float)) and 200 <= v <= 10_000 else d
            for v, d in ((getattr(pressed, "height", None), 720), (getattr(pressed, "width", None), 1280))]
    slide_layout.draw(slide, step, n, len(shown), *size, story().title if n == 0 else "")
    follow_store()
    if pressed.key:
        move(pressed.key, len(shown))
    ahead = st.session_state.pop(AHEAD, None)
    if ahead == -1:  # the shown slide was computed this run: now the others
        st.rerun()
    if ahead is not None and ahead < len(shown) and st.session_state.get(APPLIED) == key_of(shown[ahead].view):
        made = compute(pg, shown[ahead].view, examples, work)  # out of sight, under the shown slide
        if made.figure is not None or made.html:
            slide_cache().get(key_of(shown[ahead].view), lambda: made)
        st.rerun()  # on to the next step without a slide


def move(name: str, total: int) -> None:
    """A key: the next or previous step, the first or last, or Esc (back to the app, on the shown
    step's view)."""
    n = st.session_state[PRESENT]
    if name == "exit":
        view = steps()[n].view
        stop()
        if linked():  # the presenter view stops its clock and says the presentation ended
            from ui.stories import stop_presenting

            shared(stop_presenting, document_store(), story_id())
        text = shared(arrival.document_of, document_store(), view.doc)
        if text is not None:
            take(view, text)
    else:
        to = goto(name, n, total)
        if to is None:  # not a key the page sends (a tampered message): nothing happens
            return
        st.session_state[PRESENT] = to
        tell(to)
    st.rerun()


def goto(name: str, n: int, total: int) -> int | None:
    """The step a key asks for: next, prev, first, last, or "goto:N" (N from 1); None for anything else."""
    if name.startswith("goto:") and name[5:].isdigit() and len(name) < 9:
        return max(0, min(total - 1, int(name[5:]) - 1))
    to = {"next": n + 1, "prev": n - 1, "first": 0, "last": total - 1}.get(name)
    return None if to is None else max(0, min(total - 1, to))


def linked() -> bool:
    """Whether this window's presentation is the presenter's, tied to its presenter view through
    the store: only a session holding the story's key (its maker, or its key's link). A window
    opened from the audience's link steps alone: it neither moves nor follows the presenter's."""
    return bool(story_id() and st.session_state.get(NOTES_KEY))


SEEN = "_present_seen"  # when the presentation's step last moved, as this window knows it


def tell(n: int) -> None:
    """The step shown now, for the other window of this presentation (the presenter view, or the audience's)."""
    import time

    st.session_state[SEEN] = time.time()
    if linked():
        from ui.stories import show_step

        shared(show_step, document_store(), story_id(), n)


@st.fragment(run_every=1.0)
def follow_store() -> None:
    """Every second: the step the other window of this presentation moved to since (the store), if any."""
    from ui.stories import shown_step

    found = shared(shown_step, document_store(), story_id()) if linked() else None
    if found is None:
        return
    n, _, moved = found
    if moved > st.session_state.setdefault(SEEN, moved):
        st.session_state[SEEN] = moved
        if n != st.session_state.get(PRESENT) and n < len(steps()):
            st.session_state[PRESENT] = n
            st.rerun(scope="app")


def slides(steps) -> list[Slide]:
    """Every step's slide, as the export's walk made it (``MADE``), with its title and note, and a
    question's space to answer (for the teacher's handout; the audience's deck leaves it out)."""
    from ui.tour import answer_space

    made = st.session_state[MADE]  # (the private notes stay out: an export is for the audience)
    return [dataclasses.replace(made[key_of(s.view)], title=s.title,
                                note=s.text + (f"\n\nQuestion: {s.question}" if s.question else ""),
                                answer_space=answer_space(s.ask) if s.ask else []) for s in steps]


def answers(steps, made: list[Slide]) -> list[tuple[int, str]]:
    """A handout's last page: each question's answer (step from 1)."""
    from ui.tour import answer_words

    return [(n + 1, answer_words(s.ask, m.picked)) for n, (s, m) in enumerate(zip(steps, made)) if s.ask]


def export_next(steps) -> None:
    """Exporting: on to the next step without a slide; when none is left, make the exports."""
    n = st.session_state[PRESENT]
    bar = st.progress((n + 1) / len(steps), f"Preparing the exports: step {n + 1} of {len(steps)}…")
    todo = [i for i, s in enumerate(steps) if i > n and key_of(s.view) not in st.session_state[MADE]]
    if todo:
        st.session_state[PRESENT] = todo[0]
        st.rerun()
    stop()
    handout = any(s.ask for s in steps)
    bar.progress(0.0, "Making the HTML deck…")
    made = slides(steps)
    heading = title() or "A story"
    plain = [dataclasses.replace(m, answer_space=[]) for m in made]  # the audience's: no answer lines nor answers
    deck = deck_html(heading, plain)
    bar.progress(1 / (2 + handout), "Printing the deck to PDF (Chromium)…")
    pdf, why = pdf_of(deck_html(heading, plain, printable=True))
    exports = {"html": deck, "pdf": pdf, "pdf_error": why}
    if handout:  # the teacher's handout: a space to answer each question, the answers last
        bar.progress(2 / 3, "Printing the teacher's handout to PDF (Chromium)…")
        found = answers(steps, made)
        handout_pdf, handout_why = pdf_of(deck_html(heading, made, printable=True, answers=found))
        exports.update(handout_html=deck_html(heading, made, answers=found), handout_pdf=handout_pdf,
                       handout_error=handout_why)
    st.session_state[EXPORTS] = exports
    st.rerun()


def chromium() -> str | None:
    return os.environ.get("MICROSCOPE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def pdf_of(deck: str) -> tuple[bytes | None, str]:
    """The printable deck as a PDF, one page per step (Chromium's print to PDF: text and the
    charts' axes, labels and bars as vectors); → (PDF, "") or (None, why not)."""
    browser = chromium()
    if browser is None:
        return None, ("The PDF needs Chromium on the server (Debian: apt-get install chromium), which this server "
                      "does not have; the HTML deck works without it and prints from any browser.")
    with tempfile.TemporaryDirectory(prefix="microscope_deck_") as d:
        page, out = Path(d) / "deck.html", Path(d) / "deck.pdf"
        page.write_text(deck, encoding="utf-8")
        try:
            subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                            "--window-size=1047,718",  # A4 landscape less its margins, in CSS pixels: charts fit
                            "--run-all-compositor-stages-before-draw", "--virtual-time-budget=20000",
                            f"--print-to-pdf={out}", page.as_uri()], capture_output=True, timeout=180, check=True,
                           cwd=d, env={**os.environ, "HOME": d})
            return out.read_bytes(), ""
        except (OSError, subprocess.SubprocessError) as e:
            import logging

            logging.getLogger("microscope").warning("story PDF: %s", e)
            return None, "Chromium could not print the PDF this time (the server's log says why); the HTML deck works."
