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

from ui import state, view
from ui.errors import shared
from ui.models import weights_choices
from ui.resources import document_store
from ui.widgets import REFERENCE, example_text, set_document

READ, PAGE_READ = "_link_read", "_link_page_read"


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


def restore(examples: dict, store) -> dict | None:
    """Once per session: the settings a link carries, written into the session's widgets and
    returned as Summarize parameters (None: no document in the link, or it is not here; then the
    error says why). A page's controls are taken with or without a document (the Corpus page)."""
    if st.session_state.get(READ):
        return None
    st.session_state[READ] = True
    q = st.query_params
    pickers, problems = view.from_query(q.to_dict(), store.get)
    view.take(st.session_state, pickers, state.keep)
    ref = q.get("doc")
    if not ref:
        state.set_link_problems(problems)
        return None
    by_stem = {path.stem: path for path in examples.values()}
    if ref in by_stem:
        text = example_text(by_stem[ref])
        st.session_state["example"] = next(name for name, p in examples.items() if p.stem == ref)
    else:
        text = store.get(ref)
        if text is None:
            state.set_error("This link's document is no longer on this server (it keeps the 2,000 documents "
                            "summarized most recently): paste the text again and click Summarize.")
            return None
    set_document(text, example=ref in by_stem)
    if q.get("ref"):  # the reference summary the view was made with
        reference = store.get(q["ref"])
        if reference is None:
            problems.append(f"ref={q['ref'][:24]}: its reference summary is no longer on this server")
        else:
            st.session_state[REFERENCE] = reference
    k = q.get("k", "3")
    if k.isdigit() and 1 <= int(k) <= 10:
        st.session_state["k"] = int(k)
    else:
        problems.append(f"k={k[:20]} is not a summary length from 1 to 10 (using 3)")
        st.session_state["k"] = 3
    tb = q.get("tb", "1")
    if tb not in ("0", "1"):
        problems.append(f"tb={tb[:20]} is not 0 or 1 (trigram blocking on)")
    st.session_state["block_trigram"] = tb != "0"
    if q.get("w") in weights_choices():
        st.session_state["weights"] = q["w"]
    elif q.get("w"):
        problems.append(f"w={q['w'][:80]} is not weights this server has (using {weights_choices()[0]})")
    if q.get("win", "").isdigit() and 1 <= int(q["win"]) <= 1000:
        state.want_window(int(q["win"]) - 1)
    elif q.get("win"):
        problems.append(f"win={q['win'][:20]} is not a BERT window from 1 (using the first)")
    state.set_link_problems(problems)
    return dict(text=text, k=st.session_state["k"], block_trigram=st.session_state["block_trigram"])


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
    want = view.to_query(view.current(st.session_state, page, params, doc, ref=reference_id()),
                         lambda text: shared(kept_id, text))
    if dict(st.query_params) != want:
        st.query_params.from_dict(want)
