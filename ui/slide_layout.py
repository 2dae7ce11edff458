"""A story's slide on screen (ui.present shows it): its texts in large type and its chart as tall
as the window leaves it, on a wide window with the summary and the plain words beside the chart,
so that the title and the step counter stay in the window (a projector's 1280×720 included)."""
from __future__ import annotations

import html

import streamlit as st

from viz.deck import Slide
from viz.palette import MUTED_TEXT

CSS = f"""<style>
[data-testid=stSidebar], [data-testid=stSidebarCollapsedControl], header[data-testid=stHeader],
[data-testid=stToolbar], .st-key-present_work {{ display: none !important; }}
[data-testid=stMainBlockContainer] {{ max-width: 100% !important; padding: 1.2rem 3vw .5rem !important; }}
.st-key-present_slide h1 {{ font-size: clamp(1.6rem, 3.6vh, 3rem) !important; padding: 0 0 .3rem !important; }}
.present-note {{ font-size: clamp(1.1rem, 2.7vh, 2.1rem); white-space: pre-wrap; margin: 0 0 .4rem; }}
.present-summary {{ font-size: clamp(1rem, 2.2vh, 1.6rem); }}
.present-story {{ font-size: clamp(1rem, 2.2vh, 1.6rem); color: {MUTED_TEXT}; margin: 0; }}
.present-private {{ font-size: clamp(1.2rem, 3vh, 2.2rem); white-space: pre-wrap; }}
.present-aside {{ font-size: clamp(.9rem, 1.9vh, 1.3rem); padding-left: 1.2em; }}
.st-key-present_plain_aside p {{ font-size: clamp(.85rem, 1.8vh, 1.2rem); }}
.present-count {{ text-align: right; font-size: 1.1rem; color: {MUTED_TEXT}; margin: 0; }}  /* in the flow: it never covers text */
</style>"""

MIN_CHART = 240  # px: a chart is never smaller, even where the slide's texts are long
SIDE = 0.3  # of a wide window (WIDE px or more): the summary and the plain words, beside the chart
WIDE = 1000


def beside(slide: Slide, width: int) -> bool:
    """Whether the slide's summary and plain words go beside its chart: a wide window, a chart."""
    return slide.figure is not None and bool(slide.summary or slide.plain) and width >= WIDE


def chart_height(slide: Slide, step, storied: bool, height: int, width: int) -> int:
    """What a ``height`` × ``width`` window leaves the chart under and around the slide's texts
    (``CSS``'s sizes; each text's lines estimated from its length, a character about half its type
    size wide; Streamlit's 1 rem between elements), so that the counter stays in the window."""
    def block(text: str, px: float, line: float = 1.5, across: float = 0.94 * width) -> float:
        per = max(12, int(across / (0.5 * px)))
        return sum(max(1, -(-len(p) // per)) for p in text.split("\n")) * px * line + 16

    vh, clamp = height / 100, lambda lo, v, hi: max(lo, min(v, hi))
    note, body = clamp(17.6, 2.7 * vh, 33.6), clamp(16, 2.2 * vh, 25.6)
    used = 36 + clamp(25.6, 3.6 * vh, 48) * 1.3 + 16 + 40 + 16  # the padding, the title, the counter
    used += block("x", body) if storied else 0
    used += sum(block(t, note) for t in (step.text, step.question and f"Question: {step.question}") if t)
    used += block(slide.settings, 14) if slide.settings else 0
    texts = [(t, body, 1.5) for t in slide.summary] + ([(slide.plain, 16, 1.6)] if slide.plain else [])
    if not beside(slide, width):
        used += sum(block(*t) for t in texts) + (16 if slide.summary else 0)
    return max(MIN_CHART, int(height - used - 16))


def draw(slide: Slide, step, n: int, total: int, height: int, width: int = 1280, story: str = "") -> None:
    """The slide, large: the ``story``'s title (over its first step), the step's title, note (as
    text), chart, summary, plain words, settings, counter; the chart as tall as the window leaves it
    (``chart_height``), on a wide window with the summary and the plain words beside it."""
    storied = bool(story)
    room = chart_height(slide, step, storied, height, width)
    with st.container(key="present_slide"):
        from viz.common import markdown_text

        if storied:  # the story's own title, over its first step
            st.html(f"<p class='present-story'>{html.escape(story)}</p>")
        st.title(markdown_text(step.title or f"Step {n + 1}"), anchor=False)  # a title is text, not Markdown
        if step.text:
            st.html(f"<p class='present-note'>{html.escape(step.text)}</p>")
        if step.question:
            st.html(f"<p class='present-note'><b>Question:</b> {html.escape(step.question)}</p>")
        wide = beside(slide, width)
        main, aside = st.columns([1 - SIDE, SIDE], gap="medium") if wide else (st.container(), st.container())
        with main:
            if slide.figure is not None:
                from viz.deck import for_slide

                from ui import chart

                fig = for_slide(slide.figure, height=room, width=int(width * (1 - SIDE) if wide else width))
                chart.draw(fig, f"present_chart_{n}", {"displayModeBar": False})
            elif slide.html:
                with st.container(height=room, border=False):
                    st.html(slide.html)
            elif slide.missing:
                st.warning(slide.missing, icon=":material/info:")
        with aside:
            if slide.summary:
                st.html(f"<ol class='present-summary{' present-aside' if wide else ''}'>"
                        + "".join(f"<li>{html.escape(s)}</li>" for s in slide.summary) + "</ol>")
            if slide.plain:
                with st.container(key="present_plain_aside" if wide else None):
                    st.markdown(slide.plain)
        if slide.settings:
            st.caption(markdown_text(slide.settings))
        st.html(f"<div class='present-count' role='status'>Step {n + 1} of {total} · ←/→ to step, a number "
                "and Enter to jump, F full screen, Esc to leave</div>")
