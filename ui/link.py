"""Links that restore the view: **Link to this view** (sidebar) writes the settings of the shown
result and the page's pickers into the URL's query parameters, read back when a session opens
such a link.

    /bert_attention?doc=bbc_call_centres&k=3&tb=1&w=bertsumext-minilm.safetensors&layer=5&head=3

``doc`` is an example's file name, or ``id:`` + 16 hex digits of the text's keyed hash (``doc_id``)
for a pasted or uploaded document, which the server keeps in SQLite (ui.resources.document_store:
shared by every app process on that file, kept across restarts, the most recent 2,000); a link to
one it no longer holds says so. Layers and heads are 1-based, as shown.
The page is the URL's path (st.navigation)."""
from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlparse

import streamlit as st

from ui import state
from ui.errors import shared
from ui.models import weights_choices
from ui.resources import document_store
from ui.widgets import BERT_VIEWS, COLORSCALES, example_text
from viz.common import SCALES

# query parameter → (session key, kind); kinds: "index" = 1-based in the URL, 0-based in state,
# "head" = an index or "mean" (None), "text" = as is
PICKERS = {"layer": ("bert_layer", "index"), "head": ("bert_head", "head"), "view": ("bert_view", "text"),
           "colors": ("bert_colors", "text"), "scale": ("bert_scale", "text"),
           "ilayer": ("inter_layer", "index"), "ihead": ("inter_head", "head")}
CHOICES = {"view": BERT_VIEWS, "colors": COLORSCALES, "scale": SCALES}  # the "text" pickers' options
READ, PAGE_READ = "_link_read", "_link_page_read"


def doc_id(text: str, store=None) -> str:
    """``id:`` + 16 hex digits of the text's HMAC-SHA-256 under this server's secret (kept in the
    store, ``Store.secret``): without it nobody can tell from an id whether a guessed text is here.
    Ids made before (the text's plain SHA-256) still open: a link names the row, the text is not hashed again."""
    key = (store if store is not None else document_store()).secret("doc_id")  # (an empty Store is falsy)
    return "id:" + hmac.new(key.encode(), text.encode(), hashlib.sha256).hexdigest()[:16]


def save_document(text: str | None = None) -> None:
    """Keep the summarized document behind this session's links and class (``doc_id``);
    when the store is down it is kept in the session and saved on a later run (``text`` None)."""
    text = st.session_state.get(state.UNSAVED) if text is None else text
    if text is None:
        return
    st.session_state[state.UNSAVED] = text
    if shared(lambda: document_store().put(doc_id(text), text), default=False) is None:
        del st.session_state[state.UNSAVED]


def _to_url(value, kind: str) -> str:
    if kind == "head" and value is None:
        return "mean"
    return str(value + 1) if kind in ("index", "head") else str(value)


def _from_url(value: str, kind: str):
    if kind == "head" and value == "mean":
        return None
    return int(value) - 1 if kind in ("index", "head") else value


def restore(examples: dict, store) -> dict | None:
    """Once per session: the settings a link carries, written into the session's widgets and
    returned as Summarize parameters (None: no link, or its document is not here; then
    the error says why)."""
    if st.session_state.get(READ):
        return None
    st.session_state[READ] = True
    q = st.query_params
    ref = q.get("doc")
    if not ref:
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
    st.session_state["document"] = text
    problems = []
    k = q.get("k", "3")
    if k.isdigit() and 1 <= int(k) <= 10:
        st.session_state["k"] = int(k)
    else:
        problems.append(f"k={k} is not a summary length from 1 to 10 (using 3)")
        st.session_state["k"] = 3
    tb = q.get("tb", "1")
    if tb not in ("0", "1"):
        problems.append(f"tb={tb} is not 0 or 1 (trigram blocking on)")
    st.session_state["block_trigram"] = tb != "0"
    if q.get("w") in weights_choices():
        st.session_state["weights"] = q["w"]
    elif q.get("w"):
        problems.append(f"w={q['w']} is not weights this server has (using {weights_choices()[0]})")
    for name, (key, kind) in PICKERS.items():
        if name not in q:
            continue
        value = q[name]
        if kind == "text" and value not in CHOICES[name]:
            problems.append(f"{name}={value[:60]} is not one of {', '.join(CHOICES[name])} (using {CHOICES[name][0]})")
        elif kind == "text" or (kind == "head" and value == "mean") or (value.isdigit() and int(value) >= 1):
            st.session_state[key] = _from_url(value, kind)
            state.keep(key)
        else:
            problems.append(f"{name}={value} is not a number from 1" + (" or 'mean'" if kind == "head" else ""))
    if "edits" in q:  # the What-if page's edits (not the edited text)
        edits, bad = read_edits(q["edits"])
        st.session_state["whatif_edits"] = edits
        problems += bad
    if problems:
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


def read_edits(value: str) -> tuple[list[str], list[str]]:
    """The ``edits`` parameter (a JSON list of edits such as "move:1:end") → the edits that parse,
    and a problem for each one that does not."""
    import json

    from analysis.compare import parse_edit

    try:
        items = json.loads(value)
    except ValueError:
        items = None
    if not isinstance(items, list) or not all(isinstance(e, str) for e in items):
        return [], [f"edits={value[:80]} is not a list of edits"]
    edits, problems = [], []
    for e in items:
        try:
            edits.append(str(parse_edit(e)))
        except ValueError as err:
            problems.append(f"edits: {err}")
    return edits, problems


SYNC = "_link_sync"


def request_sync() -> None:
    """The sidebar button's callback: the end of this run writes the link (``sync``)."""
    st.session_state[SYNC] = True


def sync(examples: dict) -> None:
    """When asked (``request_sync``): write the shown result's settings and the current pickers
    into the URL. Only on request: writing the query string on every run made the server keep
    ~40 MB more per document (benchmarks/README.md)."""
    params = state.params()
    if not st.session_state.pop(SYNC, False) or params is None:
        return
    stems = {example_text(p): p.stem for p in examples.values()}
    doc = stems.get(params["text"]) or shared(doc_id, params["text"])
    if doc is None:  # the store (its secret) cannot be reached: the notice says so; no link this time
        return
    want = {"doc": doc, "k": str(params["k"]),
            "tb": "1" if params["block_trigram"] else "0", "w": params["weights"]}
    for name, (key, kind) in PICKERS.items():
        if key in st.session_state:
            want[name] = _to_url(st.session_state[key], kind)
    if st.session_state.get("whatif_edits"):
        import json

        want["edits"] = json.dumps(st.session_state["whatif_edits"], ensure_ascii=False)
    if dict(st.query_params) != want:
        st.query_params.from_dict(want)
