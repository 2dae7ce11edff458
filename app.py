"""Attention microscope for extractive summarization: `streamlit run app.py`.

The sidebar (document, summary length, trigram blocking, model, Summarize) is shared by every
page; the pages read the Trace of the last Summarize click from a bounded cache."""
from __future__ import annotations

import ctypes
import os

# Many sessions share 2 cores: OpenMP threads that spin while waiting steal the CPU from each
# other (benchmarks/README.md, load test), and glibc gives every Streamlit script thread its own
# malloc arena (more resident memory). A view's buffers (its figure's ~0.8 MB of JSON, copied on
# the way to the websocket) would end up inside those arenas, where freed memory stays resident
# (glibc raises its mmap threshold after the first such free): kept at 256 KB, they go back to the
# system when freed (~200 MB less after a few sessions: benchmarks/HISTORY.md, session 38). All set
# before torch loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
try:
    libc = ctypes.CDLL("libc.so.6")
    libc.mallopt(-8, 2)  # M_ARENA_MAX = 2
    libc.mallopt(-3, 256 * 1024)  # M_MMAP_THRESHOLD (fixed: no dynamic raise)
except (OSError, AttributeError):  # not glibc
    pass

import streamlit as st  # noqa: E402
import torch  # noqa: E402
from streamlit.runtime.scriptrunner_utils.exceptions import StopException  # noqa: E402

from ui import a11y, arrival, classroom, figures, link, present, roles, state, story, wire  # noqa: E402
from ui.classroom import console, homework  # noqa: E402
from viz.common import markdown_text  # noqa: E402
from ui.errors import shared, store_notice, unexpected  # noqa: E402
from ui.figures import first_figure, preload_plotly  # noqa: E402
from ui.intake import intake  # noqa: E402
from ui.legacy import start_session  # noqa: E402
from ui.models import configured_models, default_model, model_caption, weights_choices  # noqa: E402
from ui.resources import document_store, get_model  # noqa: E402
from ui.runs import ahead, current_trace, progress, run_trace  # noqa: E402
from ui.widgets import (MAX_REFERENCE_CHARS, REFERENCE, REFERENCE_OF, example_text, examples, load_reference_upload,  # noqa: E402
                        load_upload, result_caption, set_document)

st.set_page_config(page_title="Attention microscope", page_icon="🔬", layout="wide")
wire.set_deflate_level()  # once per server process: every later connection deflates at level 1
wire.keep_static()  # once per server process: Streamlit's browser code from memory, gzipped
start_session()
state.carry_widgets()

EXAMPLES = examples()

PAGES = [
    st.Page("pages/summary.py", title="Summary", icon=":material/summarize:", default=True),
    st.Page("pages/why.py", title="Why this summary", icon=":material/psychology_alt:"),
    st.Page("pages/bert_attention.py", title="BERT attention", icon=":material/grid_on:"),
    st.Page("pages/sentence_encoder.py", title="Sentence encoder", icon=":material/hub:"),
    st.Page("pages/masks_positions.py", title="Masks & positions", icon=":material/masks:"),
    st.Page("pages/heads.py", title="Heads", icon=":material/view_module:"),
    st.Page("pages/what_if.py", title="What if", icon=":material/compare_arrows:"),
    st.Page("pages/corpus.py", title="Corpus", icon=":material/library_books:"),
    st.Page("pages/learn.py", title="Learn", icon=":material/school:"),
]
# first: a lesson step or a class may switch pages before any widget; a student on an open question has
# no page list (every other page shows the model's choice: ui.roles)
listed = not roles.answering(document_store())
pg = st.navigation(PAGES, position="sidebar" if listed else "hidden")
st.set_page_config(page_title=f"{pg.title} · Attention microscope")  # WCAG 2.4.2: each page its own title
st.session_state.pop(figures.DRAWN, None)  # the charts this run draws (plain words once a kind; Figure downloads)


def load_example():
    name = st.session_state.get("example")
    if name in EXAMPLES:
        set_document(example_text(EXAMPLES[name]), example=True)


def document_edited():
    """An edited document is no longer the picked example: the picker says so (and its reference goes)."""
    name = st.session_state.get("example")
    if name in EXAMPLES and st.session_state.get("document") != example_text(EXAMPLES[name]):
        st.session_state["example"] = None
    set_document(st.session_state.get("document") or "")


st.session_state.pop(state.STORE_DOWN, None)  # also what a fragment's failed call left (it said so in place)
store_down = st.empty()  # filled at the end of the run if the shared store could not be reached
# the shared store (links, classes) may be down: each call then does nothing and the notice says so
intake(document_store(), EXAMPLES, pg.url_path)  # the address: a link's view, a class, a story, a lesson, homework
present.prepare(document_store())  # presenting: the shown step's view, unless its slide is cached
presenting = present.active()
if st.session_state.get(present.PRESENTER):  # the presenter view of a story (another window follows it)
    from ui import presenter

    presenter.presenter(document_store())
    st.stop()
if st.session_state.get(console.CONSOLE):  # a class's teacher's console, in a window of the teacher's own
    console.show(document_store())
    st.stop()
if st.session_state.get(console.NOTICE):
    st.warning(st.session_state.pop(console.NOTICE), icon=":material/key_off:")
shared(classroom.catch_up, document_store())  # the class teacher's view, when it moved
arrival.apply(pg)  # the view a link, a story, a slide, a class or a lesson step opened: before any widget
# a student's open question: another page leads back, another step makes it final; one that opened
# this run takes its page list away at once
if roles.guard(document_store(), pg) and listed:
    st.rerun()
link.save_document()  # one summarized while the store was down (its disk full), now that it may be back

student = roles.role() == roles.STUDENT  # (decided from what the session holds: ui.roles)
with st.sidebar:
    st.selectbox("Example document", list(EXAMPLES), index=None, placeholder="Pick an example…",
                 key="example", on_change=load_example)
    st.file_uploader("…or upload a .txt / .md file", type=["txt", "md"], key="upload", on_change=load_upload)
    st.text_area("Document", key="document", height=220, placeholder="Paste a news article here.",
                 on_change=document_edited)
    with st.expander("Reference summary (optional)", expanded=bool(st.session_state.get(REFERENCE))):
        st.text_area("Reference summary", key=REFERENCE, height=110, on_change=st.session_state.pop,
                     max_chars=MAX_REFERENCE_CHARS,
                     args=(REFERENCE_OF, None), placeholder="A summary written by a person (one sentence a line)",
                     help="The Summary page then scores the model's summary against it (ROUGE), beside Lead-k and the "
                          "best any k sentences could do, and shows where each reference sentence comes from.")
        st.file_uploader("…or upload it (.txt / .md)", type=["txt", "md"], key="reference_upload",
                         on_change=load_reference_upload)
    st.session_state.setdefault("k", 3)  # defaults here, not in the widgets: links and lessons also set them
    st.session_state.setdefault("block_trigram", True)
    k = st.number_input("Summary length k (sentences)", min_value=1, max_value=10, key="k")
    block = st.checkbox("Trigram blocking", key="block_trigram",
                        help="Skip a sentence sharing a trigram with one already chosen (BertSum).")
    with st.expander("Model"):
        choices = weights_choices()
        weights = st.selectbox("Model", choices, key="weights", index=choices.index(default_model()),
                               help="Models this server was started with (`--model`, `--models`), the sentence "
                                    "scorer shipped in model/weights, or an untrained scorer on the plain backbone.")
        gpus = [f"cuda:{i}" for i in range(torch.cuda.device_count())]
        devices = ["cpu"] + [f"{g}{p}" for g in gpus for p in ("", " bfloat16")]
        device = st.selectbox("Device", devices, key="device", index=int(len(devices) > 1),
                              help="A GPU when this server has one. \"bfloat16\": the summary and the maps "
                                   "computed in bfloat16 (faster; scores differ by up to a few hundredths, README: "
                                   "GPU); every analysis still computes in float32.")
        try:
            st.caption(model_caption(get_model(weights, device)))
        except ValueError as e:
            st.error(markdown_text(str(e)))
        failed = {n: why for n, why in configured_models().items() if isinstance(why, str) and n != weights}
        if failed:
            st.caption("Not available: " + "; ".join(f"**{markdown_text(n)}**: {markdown_text(why)}"
                                                    for n, why in failed.items()))
    model_note = st.empty()  # under the model picker, filled once the result is known
    clicked = st.button("Summarize", type="primary", width="stretch")
    if not listed:  # a student's open question: one more door, said before it is used (ui.roles)
        st.caption(":material/lock: Summarize makes your answer to the open question final.")
    st.button("Link to this view", icon=":material/link:", width="stretch", on_click=link.request_sync, key="link_sync",
              help="Puts the document, the settings, the page and its layer/head pickers in the address bar: "
                   "copy it to share or keep this view.")
    with st.expander("Class & lessons", expanded=bool(st.session_state.get(classroom.JOINED)
                                                       or st.session_state.get(classroom.TEACHING)
                                                       or st.session_state.get(homework.CODE)
                                                       or st.session_state.get(homework.RESULTS))):
        if st.session_state.get(classroom.JOINED):
            shared(classroom.follow, document_store())
        elif not student:
            shared(classroom.teacher_panel, document_store(), st.context.url or "")
        classroom.lesson_panel(EXAMPLES)  # (a student's: homework's Back/Next only)
        if not student:
            classroom.private_note()
        shared(homework.sidebar, document_store(), st.context.url or "")
    story_charts = None
    if not student:  # a student has no stories: a class's lesson opened as one would show its notes and answers
        with st.expander("Story", expanded=bool(present.steps())):
            story_charts = story.panel(document_store(), pg.url_path, pg.title, st.context.url or "")
    with st.expander("Figure downloads"):
        st.radio("Format of the camera button on every figure", ["png", "svg"], key=state.keep("figure_format"),
                 horizontal=True, format_func=str.upper)
        chart_downloads = st.container()  # filled after the page: its charts, downloadable by keyboard

inputs = dict(text=st.session_state.get("document") or "", k=int(k), block_trigram=bool(block),
              weights=weights, device=device)
if state.interrupted() and not presenting:
    st.warning("The last Summarize did not finish (the page changed while it ran): click **Summarize** again.")
if clicked and not listed:
    roles.summarized(document_store())
if not (clicked or presenting or state.params() == inputs):
    ahead(inputs, first_figure(pg.url_path))  # computed before the click (ui.runs.ahead): the click then draws
if clicked or state.take_summarize_request():
    try:
        with state.running(), progress("Running BERT and the sentence encoder"):
            run_trace(**inputs)
        state.set_result(inputs)
        link.save_document(inputs["text"])
        if clicked:  # a student who summarizes a document of their own explores on their own
            shared(classroom.explored, document_store())
    except ValueError as e:  # empty or too long: the model's own one-line message
        state.set_error(str(e))
    except Exception as e:  # noqa: BLE001  never a traceback in the browser
        unexpected(e)

classroom.warm_followed()  # a following student's process computes the class's lesson ahead too
for problem in [] if presenting else state.take_link_problems():
    st.warning(f"This link's {markdown_text(problem)}; the rest of the link is restored.")
for notice in state.take_view_notices():  # (presenting too: the slide is not the view it names)
    st.warning(notice)
if notice := roles.said():  # a student's door on an open question (ui.roles)
    st.info(notice, icon=":material/lock:")
if state.error() and not presenting:
    st.error(state.error() + (" The results below are still those of the previous Summarize."
                              if state.params() else ""))

try:
    trace = current_trace()
except ValueError:  # a view's BERT window that this document does not have
    if not presenting:
        st.warning(f"This view's BERT window {state.window() + 1} is not in this document: showing the first.")
    st.session_state[state.WINDOW] = 0
    trace = current_trace()
if trace is not None:
    if len(trace.windows) > 1:  # BERT reads 512 tokens at a time: pick whose internals to show
        def window_name(w: int) -> str:
            sents = trace.input_sentences[slice(*trace.windows[w])]
            return f"{w + 1} (sentences {sents.min() + 1}–{sents.max() + 1})"

        st.sidebar.selectbox("BERT window", range(len(trace.windows)), format_func=window_name, key=state.WINDOW,
                             help="BERT reads at most 512 tokens: long documents are read in windows.")
        trace = current_trace()
    if trace.summary.weights == "untrained":
        model_note.caption(":material/warning: The sentence scorer is untrained: scores are random.")
    changed = [name for name, key in (("the document", "text"), ("k", "k"), ("trigram blocking", "block_trigram"),
                                      ("the weights", "weights"), ("the device", "device"))
               if inputs[key] != state.params()[key]]
    if changed and not presenting:
        st.warning(f":material/update: **Out of date:** {', '.join(changed)} changed since this result was "
                   "computed. Click **Summarize** to update it.")
    if not presenting:
        st.caption(result_caption(trace, state.params(), EXAMPLES))
with st.sidebar:
    preload_plotly()  # last: an empty 10-px chart
    a11y.mount()  # names and keys for the charts (ui/a11y.py)

if presenting:  # the story's step, large; nothing else of the app (ui/present.py)
    try:
        present.show(pg, EXAMPLES)
    except Exception as e:  # noqa: BLE001  never a traceback in the browser
        unexpected(e)
    finally:
        store_notice(store_down)
    st.stop()
if st.session_state.get(classroom.JOIN_SCREEN) and st.session_state.get(classroom.TEACHING):
    classroom.join_screen(st.context.url or "")  # the projector's join screen, instead of the page
    store_notice(store_down)
    st.stop()
unknown = link.unknown_page([p.url_path for p in PAGES])
if unknown:
    st.warning(f"There is no page “/{markdown_text(unknown[:60])}” in this app: this is {pg.title}.")
story.banner(document_store())
classroom.led_elsewhere_banner(st.context.url or "")  # a class this tab led is led from another now
shared(classroom.status, document_store())  # a student's class: ended, the teacher away (main area: phones too)
classroom.step_text(bar=lambda code, cols: shared(classroom.teacher_bar, document_store(), code, cols))
try:  # its question, when it takes answers
    shared(homework.question_panel, document_store())  # (a class's, or alone, when no homework)
except Exception as e:  # noqa: BLE001  never a traceback in the browser; the page still draws
    unexpected(e)
shared(classroom.publish_mine, document_store(), pg.url_path)  # before the page: students start on the new view
drawn = False  # the page ran to its end (or its own st.stop): not cut short by the next run
try:  # while the teacher's page is still drawing
    pg.run()
    drawn = True
except StopException:
    drawn = True
    raise
except Exception as e:  # noqa: BLE001  st.stop/st.rerun are BaseExceptions: they pass
    unexpected(e)
finally:  # and what the page itself set (defaults, a lesson), also after a page's st.stop
    shared(classroom.publish_mine, document_store(), pg.url_path, drawn)
    store_notice(store_down)
    a11y.downloads_panel(chart_downloads, figures.drawn_names())
    story.chart_picker(story_charts, figures.drawn_charts())
link.sync(EXAMPLES, pg.url_path)  # when asked: after the page, so its pickers have their values
