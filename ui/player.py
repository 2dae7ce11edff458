"""The tour player (issue 69): one Back/Next, one way to say a step's words, one private note, for
every place a tour is played: the lesson panel (alone, a class's teacher, homework), a story's
banner (a story explored step by step) and the presenter view. A tour's words are text, shown as
text (viz.common.markdown_text)."""
from __future__ import annotations

import html

import streamlit as st

from viz.common import markdown_text


def back_next(prefix: str, n: int, total: int, move, cols=None, stretch: bool = True,
              start: str = "") -> None:
    """Back and Next (keys ``PREFIX_back``, ``PREFIX_next``): ``move(to)`` on click. ``n`` -1: no
    step open yet (Next reads ``start`` when given); ``cols``: the two places to draw them."""
    cols = cols or st.columns(2)
    width = "stretch" if stretch else "content"
    cols[0].button("Back", key=f"{prefix}_back", disabled=n <= 0, width=width, on_click=move, args=(n - 1,))
    cols[1].button(start if n < 0 and start else "Next", key=f"{prefix}_next", type="primary", width=width,
                   disabled=n >= total - 1, on_click=move, args=(n + 1,))


def words(n: int, total: int, title: str = "", text: str = "", question: str = "", tour: str = "") -> str:
    """A step's words as Markdown: "**<tour> · Step n of N: <title>**", its text, its question."""
    head = (f"{markdown_text(tour)} · " if tour else "") + f"Step {n + 1} of {total}" + \
        (f": {markdown_text(title)}" if title else "")
    return (f"**{head}**" + (f"\n\n{markdown_text(text)}" if text else "")
            + (f"\n\n**Question:** {markdown_text(question)}" if question else ""))


def private_note(note: str, large: bool = False) -> None:
    """The note only whoever presents or teaches reads: folded (a projected screen does not show it),
    or ``large`` in the presenter view, where it is the point."""
    if large:
        st.html(f"<p class='present-private'>{html.escape(note or '(no note for this step)')}</p>")
    elif note.strip():
        with st.expander("Your note for this step (not shown to students)", icon=":material/speaker_notes:"):
            st.markdown(markdown_text(note))
