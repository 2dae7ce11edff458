"""Links that restore the view: **Link to this view** (sidebar) writes the shown result and the
shown page's controls (ui.view: that page's, no other's) into the URL's query parameters, read
back when a session opens such a link.

    /bert_attention?doc=bbc_call_centres&k=3&tb=1&w=bertsumext-minilm.safetensors&layer=5&head=3

``doc`` is an example's file name, or ``id:`` + 16 hex digits of the text's keyed hash (``doc_id``)
for a pasted or uploaded document, which the server keeps in SQLite (ui.resources.document_store:
shared by every app process on that file, kept across restarts, the most recent 2,000); a link to
one it no longer holds says so. Layers, heads and sentences are 1-based, as shown (ui.view converts).
The page is the URL's path (st.navigation)."""
from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlparse

import streamlit as st

from ui import arrival, state, view
from ui.errors import shared
from ui.resources import document_store
from ui.widgets import example_text

PAGE_READ = "_link_page_read"


def doc_id(text: str, store=None) -> str:
    """``id:`` + 16 hex digits of the text's HMAC-SHA-256 under this server's secret (kept in the
    store, ``Store.secret``): without it nobody can tell from an id whether a guessed text is here.
    Ids made before (the text's plain SHA-256) still open: a link names the row, the text is not hashed again."""
    key = (store if store is not None else document_store()).secret("doc_id")  # (an empty Store is falsy)
    return "id:" + hmac.new(key.encode(), text.encode(), hashlib.sha256).hexdigest()[:16]


def kept_id(text: str) -> str:
    """A second document of a view (What if's pasted B) kept in the store as the main one is; → its id."""
    ref = doc_id(text)
    document_store().put(ref, text)
    return ref


def reference_id() -> str | None:
    """The session's reference summary, kept in the store like a document; → its id (None: none,
    or the store is down). Put once per text."""
    from ui.widgets import REFERENCE

    from analysis.quality import MAX_REFERENCE_CHARS

    text = (st.session_state.get(REFERENCE) or "").strip()
    if not text or len(text) > MAX_REFERENCE_CHARS:  # (too long: the Summary page says so; nothing kept)
        return None
    kept = st.session_state.get("_reference_kept")
    if kept and kept[0] == text:
        return kept[1]
    ref = shared(kept_id, text)
    if ref is not None:
        st.session_state["_reference_kept"] = (text, ref)
    return ref


def save_document(text: str | None = None) -> None:
    """Keep the summarized document behind this session's links and class (``doc_id``);
    when the store is down it is kept in the session and saved on a later run (``text`` None)."""
    text = st.session_state.get(state.UNSAVED) if text is None else text
    if text is None:
        return
    st.session_state[state.UNSAVED] = text
    if shared(lambda: document_store().put(doc_id(text), text), default=False) is None:
        del st.session_state[state.UNSAVED]


def restore(examples: dict, store, page: str) -> None:
    """The view a link carries (ui.view.View.from_query), opened on ``page`` (the
    link's path) through ui.arrival: its document (an example's name, or the store's id), settings
    and controls, summarized at once. A document that is not here is an error that says why; what
    else could not be read is named, and the rest restored. A page's controls are taken with or
    without a document (the Corpus page)."""
    q = st.query_params.to_dict()
    if not (set(q) & ({c.name for c in view.HEADER} | set(view.BY_NAME))):
        return
    shown, problems = view.View.from_query(q, page, store.get)
    text, reference, example = None, arrival.KEEP, None
    if shown.doc:
        text = arrival.document_of(store, shown.doc)
        if text is None:
            state.set_error("This link's document is no longer on this server (it keeps the 2,000 documents "
                            "summarized most recently): paste the text again and click Summarize.")
            shown = shown.but(doc=None)
        example = next((name for name, p in examples.items() if p.stem == shown.doc), None)
    if text is not None and shown.ref:  # the reference summary the view was made with
        reference = store.get(shown.ref)
        if reference is None:
            problems.append(f"ref={shown.ref[:24]}: its reference summary is no longer on this server")
            reference = arrival.KEEP
    state.set_link_problems(problems)
    arrival.open_view(shown, text, complete=False, step=arrival.KEEP, reference=reference, example=example,
                      via_link=True)


def unknown_page(paths: list[str]) -> str | None:
    """Once per session: the page the URL names when it is none of ``paths`` (the pages' URL
    paths; Streamlit then shows the default page without a word), else None."""
    if st.session_state.get(PAGE_READ):
        return None
    st.session_state[PAGE_READ] = True
    path = urlparse(st.context.url or "").path.strip("/")
    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    if base and path.startswith(base):
        path = path[len(base):].strip("/")
    return path if path and path not in paths else None


SYNC = "_link_sync"


def request_sync() -> None:
    """The sidebar button's callback: the end of this run writes the link (``sync``)."""
    st.session_state[SYNC] = True


def sync(examples: dict, page: str) -> None:
    """When asked (``request_sync``): write the shown result's settings and the current pickers
    into the URL. Only on request: writing the query string on every run made the server keep
    ~40 MB more per document (benchmarks/README.md)."""
    params = state.params()
    if not st.session_state.pop(SYNC, False):
        return
    doc = None
    if params is not None:
        stems = {example_text(p): p.stem for p in examples.values()}
        doc = stems.get(params["text"]) or shared(doc_id, params["text"])
        if doc is None:  # the store (its secret) cannot be reached: the notice says so; no link this time
            return
    want = view.View.of(st.session_state, page, params, doc, ref=reference_id()).to_query(
        lambda text: shared(kept_id, text))
    if dict(st.query_params) != want:
        st.query_params.from_dict(want)
