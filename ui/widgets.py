"""What pages draw around their figures: the first screen, the example documents and the upload,
layer and head pickers, and the captions that say which result and window a page shows."""
from __future__ import annotations

import functools
from pathlib import Path

import streamlit as st

from analysis.quality import MAX_REFERENCE_CHARS  # noqa: F401  (the reference box's limit)
from ui import state
from ui.legacy import start_session
from ui.runs import current_trace
from viz.palette import SEQUENTIAL as COLORSCALES  # noqa: F401  (the pages import it from here)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@functools.lru_cache(maxsize=None)
def example_text(path: Path) -> str:
    """A shipped example's text, read once per server (every run compares documents with them)."""
    return path.read_text(encoding="utf-8")


def batch_others(text: str) -> dict[str, Path]:
    """The examples the Masks & positions page may batch with ``text`` (every one but itself)."""
    return {name: path for name, path in examples().items() if example_text(path) != text}


BATCHED = 2  # the examples batched with a document unless a view names others


def batch_texts(text: str, names: list[str] | None = None) -> list[str]:
    """``text`` and the examples batched with it: ``names`` (those this server has, at most 3), by
    default the first ``BATCHED`` (the page and a lesson's warm-up batch the same)."""
    others = batch_others(text)
    names = list(others)[:BATCHED] if names is None else [n for n in names if n in others][:3]
    return [text] + [example_text(others[n]) for n in names]


def examples() -> dict[str, Path]:
    """Shipped example documents: name (first line) → file."""
    from viz.common import length_label

    out = {}
    for p in sorted(EXAMPLES.glob("*.txt")):
        text = example_text(p)
        out[f"{text.split(chr(10), 1)[0].strip()} ({length_label(text)})"] = p
    return out


REFERENCE, REFERENCE_OF = "reference", "_reference_of_example"  # the reference summary; the example it came with


def example_reference(text: str) -> str | None:
    """The reference summary shipped with the example whose text is ``text`` (examples/references/)."""
    for path in EXAMPLES.glob("*.txt"):
        if example_text(path) == text:
            ref = EXAMPLES / "references" / path.name
            return ref.read_text(encoding="utf-8") if ref.exists() else None
    return None


def set_document(text: str, example: bool = False) -> None:
    """The document box gets ``text``; a picked ``example``'s reference summary comes with it (and
    goes when the document is no longer that example, unless the user wrote the reference)."""
    st.session_state["document"] = text
    ref = example_reference(text) if example else None
    if ref is not None:
        st.session_state[REFERENCE], st.session_state[REFERENCE_OF] = ref, text
    elif st.session_state.get(REFERENCE_OF) not in (None, text) and \
            st.session_state.get(REFERENCE) == example_reference(st.session_state[REFERENCE_OF]):
        st.session_state[REFERENCE] = ""  # the example's reference, now beside another document
        st.session_state.pop(REFERENCE_OF, None)


def load_reference_upload():
    """The reference uploader's on_change: a text file fills the reference box; else one line."""
    from model.text import decode

    f = st.session_state.get("reference_upload")
    if f is not None:
        try:
            from viz.common import markdown_text

            st.session_state[REFERENCE] = decode(f.getvalue(), f"“{markdown_text(f.name)}”")
            st.session_state.pop(REFERENCE_OF, None)
            state.clear_error()
        except ValueError as e:
            state.set_error(str(e))


def load_upload():
    """The uploader's on_change: the file replaces the document only if it is text; otherwise
    a one-line message and the document is kept."""
    from model.text import decode

    f = st.session_state.get("upload")
    if f is not None:
        try:
            from viz.common import markdown_text

            set_document(decode(f.getvalue(), f"“{markdown_text(f.name)}”"))
            state.clear_error()
        except ValueError as e:
            state.set_error(str(e))


def try_example():
    """The first screen's button: the shortest shipped example, summarized at once."""
    named = examples()
    name = min(named, key=lambda n: len(example_text(named[n])))
    st.session_state["example"] = name
    set_document(example_text(named[name]), example=True)
    state.request_summarize()


def need_trace():
    """The current Trace, or the first screen and stop (nothing summarized yet). First call of
    every page, so a deep link on a fresh server also gets start_session()."""
    start_session()
    trace = current_trace()
    if trace is None:
        st.title("Attention microscope")
        st.markdown(
            "Paste a news article and see how **BertSumExt** picks its summary: BERT reads the text, a small "
            "Transformer over one vector per sentence scores every sentence, and the top *k* become the "
            "summary. Every page opens the model up: which sentences were chosen and **why**, what each "
            "attention head of BERT and of the sentence encoder looked at, **which heads matter**, the masks "
            "and positional encodings, and one attention head worked through step by step.")
        st.button("Try an example", type="primary", icon=":material/play_arrow:", on_click=try_example)
        st.info("…or paste or pick a document in the sidebar and click **Summarize**.")
        st.stop()
    return trace


def layer_head_pickers(n_layers: int, n_heads: int, key: str, mean: bool = True, cols=None, pick_head: bool = True):
    """Layer and head selectors (1-based labels); head None = mean over heads. ``pick_head=False``:
    the layer only (the figure has its own head buttons), head 0."""
    cols = cols or st.columns(2)
    options = ([None] if mean else []) + list(range(n_heads))
    for k, valid, n in ((f"{key}_layer", range(n_layers), n_layers), (f"{key}_head", options, n_heads)):
        value = st.session_state.get(k, valid[0])
        if value not in valid:  # from a link, or kept from another model
            if isinstance(value, int):
                st.warning(f"This model has no {k.rsplit('_', 1)[1]} {value + 1} (it has {n}): showing the first.")
            state.forget(k)
    layer = cols[0].selectbox("Layer", range(n_layers), format_func=lambda i: f"{i + 1}", key=state.keep(f"{key}_layer"))
    if not pick_head:  # the figure's buttons pick; it opens on the head last picked (e.g. from a link)
        return layer, st.session_state.get(f"{key}_head", 0)
    st.session_state.setdefault(f"{key}_head", 0)  # head 1, not the mean; not index=: a link or lesson may set it
    head = cols[1].selectbox("Head", options, format_func=lambda h: "mean of heads" if h is None else f"{h + 1}",
                             key=state.keep(f"{key}_head"))
    return layer, head


def result_caption(trace, params: dict, examples: dict, plain: bool = False) -> str:
    """What produced the result on screen: document, k, trigram blocking, weights, device. As
    Streamlit Markdown, or ``plain`` text (the HTML report)."""
    from viz.common import length_label, markdown_text, preview

    escape = str if plain else markdown_text
    s = trace.summary
    name = next((n for n, p in examples.items() if example_text(p) == params["text"]), None)
    doc = name or f"“{preview(params['text'], 48)}” ({length_label(params['text'])})"
    long = [i for i, x in enumerate(s.sentences) if len(x.split()) > 150]
    warn = (f" · {'⚠' if plain else ':material/warning:'} sentence {long[0] + 1} has {len(s.sentences[long[0]].split()):,} words: the "
            "text has few sentence endings, so the model read long stretches as one sentence" if long else "")
    return (f"Result for {escape(doc)} · k = {params['k']} · trigram blocking "
            f"{'on' if params['block_trigram'] else 'off'} · weights {escape(params['weights'])} · "
            f"{escape(s.device)}{warn}")  # escaped too: "cuda:0"'s colon is Markdown punctuation


def window_caption(trace) -> str:
    """"window 1 of 2 (sentences 0–15)" for long documents, "" for one window."""
    if len(trace.windows) < 2:
        return ""
    a, b = trace.windows[trace.window]
    sents = trace.input_sentences[a:b]
    return (f"BERT window {trace.window + 1} of {len(trace.windows)} (sentences {sents.min() + 1}–"
            f"{sents.max() + 1}); pick another in the sidebar.")
