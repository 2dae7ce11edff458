"""The presenter view of a story (issue 59), in a window of its own beside the audience's
(``?story=ID&key=KEY&presenter=1``, the key: ui.stories.notes_key): the step the audience sees,
the presenter's private note for it, the next step and the time since the start; both windows
follow each other through the store (ui.stories.show_step: whoever steps, with ←/→ or a number
and Enter, moves both)."""
from __future__ import annotations

import streamlit as st

from ui.errors import shared
from ui.player import private_note
from ui.present import _keys, goto, steps as story_steps, story_id
from ui.slide_layout import CSS


def presenter(store) -> None:
    """The presenter view, in a window of its own (``?story=ID&key=KEY&presenter=1``): the step the audience
    sees now (its title), the presenter's private note for it, the next step, and the time since the
    presentation started; it follows the audience's window through the store every second, and its
    own keys (←/→, a number and Enter) move both."""
    import time

    from ui.stories import shown_step

    st.html(CSS)
    steps, story = story_steps(), story_id()
    found = shared(shown_step, store, story) if story else None
    with st.container(key="presenter_view"):
        if found is None:
            st.title("Presenter view", anchor=False)
            st.info("Start **Present** in the audience's window: this view then follows it (your notes, the next "
                    "step, the time). A presentation left with Esc stops here too.")
        else:
            n, started = max(0, min(len(steps) - 1, found[0])), found[1]  # (found[2]: when it last moved)
            step = steps[n]
            minutes, seconds = divmod(int(time.time() - started), 60)
            st.caption(f"Presenter view · step {n + 1} of {len(steps)} · {minutes}:{seconds:02d} since the start")
            from viz.common import markdown_text

            st.title(markdown_text(step.title or f"Step {n + 1}"), anchor=False)
            private_note(step.private, large=True)
            if step.text:
                st.caption("The audience reads: " + markdown_text(step.text))
            st.markdown("**Next:** " + (markdown_text(steps[n + 1].title or f"Step {n + 2}") if n + 1 < len(steps)
                                        else "the end"))
            st.caption("←/→, PageUp/PageDown or a number and Enter step both windows.")
            pressed = _keys(key="presenter_keys", on_key_change=lambda: None, on_height_change=lambda: None)
            if pressed.key and pressed.key != "exit":
                to = goto(pressed.key, n, len(steps))
                if to is not None:
                    from ui.stories import show_step

                    shared(show_step, store, story, to)
        presenter_tick()


@st.fragment(run_every=1.0)
def presenter_tick() -> None:
    """Every second: the whole presenter view again (the audience may have moved; the clock runs).
    A light run: the presenter view stops the script before the sidebar and any page."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx and ctx.fragment_ids_this_run:  # its own rerun, not the app's full run that drew it
        st.rerun(scope="app")
