"""The Story panel (issue 50), in the sidebar of every page: **Add this view to the story** (a
title and a note), the steps (pick one: retitle it, edit its note, move it, remove it), the
story's link, **Present**, and the exports (an offline HTML deck and a PDF). The story is saved
in the store after every change (ui.stories); ``?story=ID`` opens it, ``&present=1`` presents it."""
from __future__ import annotations

import secrets
from dataclasses import replace

import streamlit as st

from ui import arrival, player, present
from ui.errors import shared
from ui.stories import MAX_STEPS, BadStory, Story, load, moved, notes_key, save
from ui.tour import MAX_NOTE, MAX_TITLE, Step, story_tour
from ui.view import View
from viz.common import markdown_text

STORY, TITLE = present.STORY, present.TITLE  # this session's story (ui.stories.Story); its title's input
DIRTY, NOTICE = "_story_dirty", "_story_notice"
OPENED = "_story_opened"  # a story this session opened by its link: the banner above the page says so
WALK = "_story_walk"  # the step this session is exploring in the live app (Back/Next), if any
CHART = "story_chart"  # which of the page's charts a new step shows


def read_link(store) -> bool | None:
    """``?story=ID`` opens that story (``&present=1``: presented); a bad id is one sentence."""
    story = st.query_params.get("story")
    if not story:
        return
    key = st.query_params.get("key") or ""
    try:
        found = shared(load, store, story, key)
    except BadStory as e:
        st.session_state[NOTICE] = str(e)
        return
    if found is None:  # the store is down: its notice says so, and the next run tries again
        return False
    steps = found.steps
    mine = bool(key) and key == shared(notes_key, store, story)  # its maker's link: the notes, the presenter view
    st.session_state.update({STORY: found, OPENED: True, TITLE: found.title, present.NOTES_KEY: key if mine else None})
    if st.query_params.get("presenter") == "1" and steps and not mine:
        st.session_state[NOTICE] = ("The presenter view opens from its maker's presenter link (it carries the story's "
                                    "key): this is the audience's link.")
    elif st.query_params.get("presenter") == "1" and steps:  # the presenter view, in a window of its own
        st.session_state[present.PRESENTER] = True
    elif st.query_params.get("present") == "1" and steps:
        present.start(0)


def banner(store) -> None:
    """Above the page of a session that opened a story's link, or explores a story step by step:
    which story, Present, and the step explored with Back/Next."""
    steps = present.steps()
    walk = st.session_state.get(WALK)
    if walk is not None and not 0 <= walk < len(steps):
        walk = st.session_state[WALK] = None
    if not (st.session_state.get(OPENED) or walk is not None) or not steps:
        return
    with st.container(border=True, key="story_banner"):
        st.markdown(f":material/slideshow: **Story: {markdown_text(present.title() or 'untitled')}** · "
                    f"{len(steps)} step{'s' if len(steps) != 1 else ''}. Its steps are in the sidebar under **Story**.")
        if walk is not None:
            s = steps[walk]
            st.markdown(player.words(walk, len(steps), s.title or "(untitled)", s.text, s.question))
        c = st.columns([1, 1, 1, 1, 2])
        if walk is None:
            c[0].button("Explore it", key="story_walk_start", icon=":material/explore:", on_click=open_step,
                        args=(store, 0), help="Step 1's view here, live: its page, document and controls; then Next.")
        else:
            player.back_next("story_walk", walk, len(steps), lambda to: open_step(store, to), cols=c[:2], stretch=False)
        c[2].button("Present", key="story_banner_present", type="primary" if walk is None else "secondary",
                    icon=":material/slideshow:", on_click=present.start, args=(walk or 0,))
        c[3].button("Close", key="story_banner_close", on_click=close_banner)


def close_banner() -> None:
    st.session_state.pop(OPENED, None)
    st.session_state.pop(WALK, None)


def open_step(store, i: int) -> None:
    """Step ``i``'s view in the live app, to explore it (its page, document and controls, as its
    link would open them); Back/Next in the banner go on from there."""
    steps = present.steps()
    if not 0 <= i < len(steps):
        return
    text = shared(arrival.document_of, store, steps[i].view.doc, default=False)
    if not text:  # False: the store is down (its notice says so); None: the document is gone
        st.session_state[NOTICE] = (f"Step {i + 1}'s document is no longer on this server: it cannot be opened."
                                    if text is None else f"Step {i + 1} could not be opened: try again in a moment.")
        return
    present.take(steps[i].view, text)
    st.session_state.update({WALK: i, "story_pick": i})


def changed() -> None:
    st.session_state[DIRTY] = True
    st.session_state.pop(present.EXPORTS, None)


def add(page: str, title: str) -> None:
    from ui.classroom.lead import my_view
    from ui.store import Unavailable

    try:
        view = my_view(page)  # (the document's id is keyed by the store's secret)
    except Unavailable as e:
        st.session_state[NOTICE] = f"Not added: {e}. Try again in a moment."
        return
    if view is None:  # (the button is drawn before this run's Summarize: not disabled for want of a result)
        st.session_state[NOTICE] = "Summarize a document first: a story step is a view of a result."
        return
    view = View.from_store(view)[0].but(chart=st.session_state.get(CHART) or None)
    step = Step(view, (st.session_state.get("story_new_note") or "")[:MAX_NOTE],
                title=(st.session_state.get("story_new_title") or title).strip()[:MAX_TITLE],
                private=(st.session_state.get("story_new_private") or "")[:MAX_NOTE], key=secrets.token_hex(6))
    story = st.session_state.get(STORY) or Story(story_tour("", ()))
    st.session_state[STORY] = story.with_steps([*story.steps, step])
    st.session_state["story_new_title"] = st.session_state["story_new_note"] = st.session_state["story_new_private"] = ""
    st.session_state["story_pick"] = len(story.steps)
    changed()


def keep(i: int, **changes) -> None:
    """Step ``i`` with ``changes`` (``dataclasses.replace``'s keywords: its question, say)."""
    st.session_state[STORY] = st.session_state[STORY].with_step(i, **changes)
    changed()


def edit(i: int, field: str, key: str) -> None:
    """Step ``i``'s title, text or private note from its input ``key``."""
    keep(i, **{field: st.session_state[key][:MAX_TITLE if field == "title" else MAX_NOTE]})


def shift(i: int, by: int) -> None:
    steps = moved(present.steps(), i, by)
    st.session_state["story_pick"] = max(0, min(len(steps) - 1, i + by))
    st.session_state[STORY] = st.session_state[STORY].with_steps(steps)
    changed()


def remove(i: int) -> None:
    steps = [s for j, s in enumerate(present.steps()) if j != i]
    st.session_state["story_pick"] = max(0, min(i, len(steps) - 1))
    st.session_state[STORY] = st.session_state[STORY].with_steps(steps)
    changed()


def retitle() -> None:
    st.session_state[STORY] = st.session_state[STORY].with_title(st.session_state.get(TITLE) or "")
    changed()


def persist(store) -> None:
    """After a change: the story saved (its own copy when this session did not make it)."""
    if not st.session_state.pop(DIRTY, False):
        return
    story = st.session_state[STORY]
    try:
        saved = shared(save, store, story)
    except BadStory as e:  # (too many steps: open_lesson and add stop before; said, never a crash)
        st.session_state[NOTICE] = f"Not saved: {e}"
        return
    if saved is None:  # the store is down: kept here, saved with the next change
        st.session_state[DIRTY] = True
        return
    st.session_state[STORY] = saved
    key = st.session_state[present.NOTES_KEY] = shared(notes_key, store, saved.id)  # its maker holds its key
    if story.id and story.id != saved.id:
        st.session_state[NOTICE] = ("Saved as your own copy, with a new link: the story you opened stays as it was.")
    if st.query_params.get("story") not in (None, saved.id):  # the address bar names the story being edited
        st.query_params["story"] = saved.id
        if "key" in st.query_params and key:
            st.query_params["key"] = key


def panel(store, page: str, title: str, url: str):
    """The sidebar's Story expander; → the place of its chart picker (``chart_picker``)."""
    persist(store)
    if st.session_state.get(NOTICE):
        st.info(markdown_text(st.session_state.pop(NOTICE)), icon=":material/info:")
    steps = present.steps()
    full = len(steps) >= MAX_STEPS
    st.text_input("Title of this view", key="story_new_title", max_chars=MAX_TITLE, placeholder=title)
    st.text_area("Note", key="story_new_note", height=80, max_chars=MAX_NOTE, placeholder="What the audience reads")
    st.text_area("Your note (only in the presenter view)", key="story_new_private", height=60, max_chars=MAX_NOTE,
                 placeholder="What to say: the audience never sees it")
    charts = st.empty()  # which of the page's charts: filled after the page (``chart_picker``)
    st.button("Add this view to the story", key="story_add", icon=":material/add_photo_alternate:", width="stretch",
              on_click=add, args=(page, title), disabled=full,
              help=f"A story holds at most {MAX_STEPS} steps." if full else
              "The view exactly as a link keeps it: page, document, k, weights, layer, head, view, colours, edits.")
    lessons_row()
    if not steps:
        return charts
    st.session_state.setdefault(TITLE, present.title())
    st.text_input("Story title", key=TITLE, max_chars=MAX_TITLE, on_change=retitle, placeholder="A story",
                  help="On the first slide, the deck's and the PDF's title, and the banner of its link.")
    st.markdown("\n".join(f"{i + 1}. {markdown_text(s.title or '(untitled)')}" for i, s in enumerate(steps)))
    st.session_state["story_pick"] = min(st.session_state.get("story_pick", 0), len(steps) - 1)
    i = st.selectbox("Step", range(len(steps)), key="story_pick",
                     format_func=lambda j: f"{j + 1}. {steps[j].title or '(untitled)'}")
    uid = steps[i].key  # (every step has one: add, and the store's check)
    st.session_state.setdefault(f"story_title_{uid}", steps[i].title)
    st.session_state.setdefault(f"story_note_{uid}", steps[i].text)
    st.text_input("Its title", key=f"story_title_{uid}", max_chars=MAX_TITLE, on_change=edit,
                  args=(i, "title", f"story_title_{uid}"))
    st.text_area("Its note", key=f"story_note_{uid}", height=80, max_chars=MAX_NOTE, on_change=edit,
                 args=(i, "text", f"story_note_{uid}"))
    st.session_state.setdefault(f"story_private_{uid}", steps[i].private)
    st.text_area("Its private note", key=f"story_private_{uid}", height=60, max_chars=MAX_NOTE, on_change=edit,
                 args=(i, "private", f"story_private_{uid}"))
    from ui.question_editor import editor

    editor(store, steps[i], i, keep)
    c = st.columns(2)  # (three labels in a row are cut at the sidebar's width)
    c[0].button("Up", key="story_up", on_click=shift, args=(i, -1), disabled=i == 0, width="stretch")
    c[1].button("Down", key="story_down", on_click=shift, args=(i, 1), disabled=i == len(steps) - 1, width="stretch")
    st.button("Remove this step", key="story_remove", on_click=remove, args=(i,), width="stretch")
    story_id = st.session_state[STORY].id
    if story_id:
        st.caption("The story's link, for the audience (it opens on any machine that runs this server; your private "
                   "notes stay out):")
        st.code(f"{url.split('?')[0].rstrip('/')}/?story={story_id}", language=None, wrap_lines=True)
    st.button("Present", key="story_present_start", type="primary", icon=":material/slideshow:", width="stretch",
              on_click=present.start,
              help="Full window, one step at a time: ←/→, PageUp/PageDown or Space to step, a number and Enter to "
                   "jump, F for full screen, Esc to leave.")
    st.button(f"Present from step {i + 1}", key="story_present_here", icon=":material/start:", width="stretch",
              on_click=present.start, args=(i,))
    st.button(f"Explore step {i + 1} here", key="story_walk_here", icon=":material/explore:", width="stretch",
              on_click=open_step, args=(store, i),
              help="Its view in the app, live (page, document, controls), with Back/Next above the page.")
    if story_id and st.session_state.get(present.NOTES_KEY):
        base, key = f"{url.split('?')[0].rstrip('/')}/?story={story_id}", st.session_state[present.NOTES_KEY]
        st.link_button("Open the presenter view", f"{base}&key={key}&presenter=1", icon=":material/co_present:",
                       width="stretch", help="Your notes, the next step and the time, in a window of its own beside "
                                             "the audience's; it follows it.")
        # the links carry the story's key (it opens your notes): on demand, never on a projected sidebar by default
        if st.toggle("Show the presenter links", key="story_show_key",
                     help="They carry your story's key, which opens your private notes: keep them off the projector."):
            st.caption("The presenter view (keep this link to yourself: it opens your notes):")
            st.code(f"{base}&key={key}&presenter=1", language=None, wrap_lines=True)
            st.caption("Your link, with your notes, to edit or present it elsewhere:")
            st.code(f"{base}&key={key}", language=None, wrap_lines=True)
    exports(store)
    return charts


def chart_picker(slot, drawn: dict[str, str]) -> None:
    """After the page: which of the charts it drew a new step shows (none drawn: its first, later);
    ``slot`` None: no Story panel this run."""
    if slot is None:
        return
    if st.session_state.get(CHART) not in drawn:
        st.session_state.pop(CHART, None)
    if len(drawn) > 1:
        slot.selectbox("Chart on the slide", list(drawn), key=CHART, format_func=lambda k: drawn[k][:80],
                       help="A slide shows one chart of the page: this one.")


def documents_of(store, steps) -> tuple[dict, dict]:
    """The story's documents as a lesson carries them: each view's "doc" → {"document": a shipped
    example's name (also when its text was pasted)} or {"document_text": the text}; and each view's
    "ref" → its reference summary's text (those no longer here: left out)."""
    from ui.widgets import example_text, examples

    documents, references = {}, {}
    for doc in {s.view.doc for s in steps}:
        text = shared(arrival.document_of, store, doc) if isinstance(doc, str) and doc else None
        stem = next((p.stem for p in examples().values() if p.stem == doc or (text and example_text(p) == text)), None)
        if stem or text:
            documents[doc] = {"document": stem} if stem else {"document_text": text}
    for ref in {s.view.ref for s in steps} - {None, ""}:
        text = shared(store.get, ref) if isinstance(ref, str) else None
        if text:
            references[ref] = text
    return documents, references


def lesson_text(store, tour) -> str:
    """The story (its ui.tour.Tour) as a lesson file's TOML (ValueError: why it cannot be one)."""
    from ui.tour import lesson_toml

    return lesson_toml(titled(tour), *documents_of(store, tour.steps))


def titled(tour):
    """The story's tour with a title: its own, else its first step's."""
    return tour if tour.title else replace(tour, title=tour.steps[0].title)


def lesson_file(store) -> None:
    """The story as a lesson file (TOML the checker accepts), or why it cannot be one."""
    try:
        text = lesson_text(store, st.session_state[STORY].tour)
    except ValueError as e:
        st.caption(markdown_text(str(e)))
        return
    st.download_button("Download as a lesson file", text, file_name="lesson.toml", mime="application/toml",
                       key="story_lesson", on_click="ignore", icon=":material/download:", width="stretch",
                       help="A lesson for Class & lessons (TOML): its steps, views, texts and questions.")
    st.button("Teach it as a class", key="story_teach", icon=":material/school:", width="stretch",
              on_click=teach, args=(store,),
              help="This story becomes the lesson under Class & lessons, open at its first step: Start a class there, "
                   "or assign it as homework.")


def teach(store) -> None:
    """The story as the class's lesson: the same tour, every field (ui.tour.from_story), no file between."""
    from ui import state
    from ui.classroom.steps import add_tour, choose
    from ui.tour import playable

    story = st.session_state[STORY]
    name = "own_story_" + (story.id or "new")
    try:
        add_tour(playable(titled(story.tour), name, *documents_of(store, story.steps)))
    except ValueError as e:  # (a document gone since the panel was drawn)
        st.session_state[NOTICE] = f"Not taught: {e}"
        return
    st.session_state[state.keep("class_lesson")] = name
    choose(name)
    st.session_state[NOTICE] = ("This story is now the lesson under Class & lessons, at its first step: "
                                "Start a class there to teach it.")


def lessons_row() -> None:
    """A lesson opened as a story: shipped, loaded under Class & lessons, or a lesson file opened here."""
    from ui.classroom.steps import all_lessons, own_error

    found = all_lessons()
    with st.popover("Open a lesson as a story", icon=":material/school:", width="stretch"):
        name = st.selectbox("Lesson", list(found), key="story_lesson_pick", format_func=lambda n: found[n].title)
        st.button("Open it here", key="story_lesson_open", on_click=open_lesson, args=(name,),
                  help="Its steps in this panel: present it full screen, export it (HTML, PDF), edit it, download it "
                       "as a lesson file again.")
        st.file_uploader("…or open a lesson file (.toml)", type=["toml"], key="story_lesson_upload",
                         on_change=open_file, help="A lesson file (say, one this panel downloaded): checked first, then "
                                                   "its steps open here to edit, present, teach or export.")
        own_error("story_lesson_upload")


def open_file() -> None:
    """The uploader's callback: a lesson file, checked (a bad one: what to change, by line), opened
    as a story."""
    from ui.classroom.steps import load_own

    if name := load_own("story_lesson_upload"):
        open_lesson(name)


def open_lesson(name: str) -> None:
    """A lesson opened as a story: its steps in this panel to edit, present and export."""
    from ui.classroom.steps import all_lessons
    from ui.link import kept_id
    from ui.tour import as_story

    lesson = all_lessons()[name]
    if len(lesson.steps) > MAX_STEPS:
        st.session_state[NOTICE] = (f"The lesson \u201c{lesson.title}\u201d has {len(lesson.steps)} steps; a story "
                                    f"holds at most {MAX_STEPS}, so it was not opened here (teach it as a class, or "
                                    "split the lesson file).")
        return
    texts = {*(s.document_text for s in lesson.steps), *(s.reference_text for s in lesson.steps)} - {""}  # it carries
    ids = {t: shared(kept_id, t) for t in texts}  # kept in the store, as a pasted one is
    st.session_state.update({STORY: Story(as_story(lesson, st.session_state.get("weights"), ids)),
                             TITLE: lesson.title, "story_pick": 0})
    changed()  # saved like any story: its own link, and the presenter view's
    st.session_state[NOTICE] = f"The lesson \u201c{lesson.title}\u201d is open as a story: edit, present or export it."


def exports(store) -> None:
    lesson_file(store)
    made = st.session_state.get(present.EXPORTS)
    if made is None:
        st.button("Make the HTML and PDF", key="story_export", icon=":material/picture_as_pdf:", width="stretch",
                  on_click=present.start, kwargs={"export": True},
                  help="Computes every step once (as Present does), then an offline HTML deck and a PDF.")
        return
    st.download_button("Story as HTML (offline)", made["html"], file_name="story.html", mime="text/html",
                       key="story_html", on_click="ignore", icon=":material/download:", width="stretch")
    if made["pdf"] is not None:
        st.download_button("Story as PDF", made["pdf"], file_name="story.pdf", mime="application/pdf",
                           key="story_pdf", on_click="ignore", icon=":material/download:", width="stretch")
    else:
        st.caption(markdown_text(made["pdf_error"]))
    if "handout_html" not in made:  # no questions: no handout
        return
    st.caption("For the teacher only: the handout, with a space to answer each question and the answers last.")
    st.download_button("Handout with answers (HTML)", made["handout_html"], file_name="handout.html",
                       mime="text/html", key="story_handout_html", on_click="ignore", icon=":material/download:",
                       width="stretch")
    if made["handout_pdf"] is not None:
        st.download_button("Handout with answers (PDF)", made["handout_pdf"], file_name="handout.pdf",
                           mime="application/pdf", key="story_handout_pdf", on_click="ignore",
                           icon=":material/download:", width="stretch")
    else:
        st.caption(markdown_text(made["handout_error"]))
