"""Streamlit glue shared by app.py and the pages: the cached model, the bounded trace cache,
the current result. Figures themselves come from viz/ (pure functions); session keys live in
ui/state.py.

Settings (environment, read here only): MICROSCOPE_MAX_CHARS (input limit), MICROSCOPE_CACHE_ENTRIES
and MICROSCOPE_CACHE_MB (the result cache), MICROSCOPE_FIGURE_ENTRIES and MICROSCOPE_FIGURE_MB (the
figure cache), MICROSCOPE_CONCURRENT_RUNS (model runs at once), MICROSCOPE_STORE (linked documents and
classes: a SQLite file or a postgresql:// URL; classes' own settings: ui/classroom.py)."""
from __future__ import annotations

import ctypes
import functools
import gc
import hashlib
import logging
import os
import threading
import weakref
from pathlib import Path

import numpy as np
import pandas  # noqa: F401  imported here, once: plotly looks pandas up in sys.modules, and sessions that
import streamlit as st  # started together saw it half-initialized there ("no attribute 'Series'", workshop)

from ui import state
from ui.a11y import text_alternative
from viz.palette import SEQUENTIAL as COLORSCALES  # noqa: F401  (the pages import it from here)

ROOT = Path(__file__).resolve().parents[1]
LOG = logging.getLogger("microscope")
EXAMPLES = ROOT / "examples"
UNTRAINED = "untrained (random scorer)"
BERT_VIEWS = ("One head", "All heads of a layer", "All layers × heads", "Sentence × sentence", "Rollout")


def start_session():
    """Streamlit 1.67's first-run workaround; call first in app.py and every page (need_trace
    does). Regression tests: tests/test_browser.py ``test_page_links_on_a_new_server_and_after``.
    Until st.navigation has run once
    in a server process, Streamlit 1.67 treats the ``pages/`` folder as an old-style multipage
    app: app.py runs wrapped in another page (its widgets get other IDs, so an edit made before
    the next run is lost) and a deep link runs the page alone, without the sidebar. A run
    started that way leaves the mode and reruns before drawing anything. The test is on this
    run, not the process-wide flag: sessions that start together may all be in that mode while
    the first of them already cleared the flag; and a rerun made when not needed forgets the
    page a link asked for. (Internals of a pinned streamlit.)"""
    import sys

    from streamlit.runtime.pages_manager import PagesManager

    frame = sys._getframe()
    while frame is not None and frame.f_code.co_name != "_mpa_v1":  # the pages-folder runner
        frame = frame.f_back
    if frame is not None:
        PagesManager.uses_pages_directory = False
        st.rerun()


@functools.lru_cache(maxsize=None)
def example_text(path: Path) -> str:
    """A shipped example's text, read once per server (every run compares documents with them)."""
    return path.read_text(encoding="utf-8")


def examples() -> dict[str, Path]:
    """Shipped example documents: name (first line) → file."""
    from viz.common import length_label

    out = {}
    for p in sorted(EXAMPLES.glob("*.txt")):
        text = example_text(p)
        out[f"{text.split(chr(10), 1)[0].strip()} ({length_label(text)})"] = p
    return out


def load_upload():
    """The uploader's on_change: the file replaces the document only if it is text; otherwise
    a one-line message and the document is kept."""
    from model.text import decode

    f = st.session_state.get("upload")
    if f is not None:
        try:
            from viz.common import markdown_text

            st.session_state["document"] = decode(f.getvalue(), f"“{markdown_text(f.name)}”")
            state.clear_error()
        except ValueError as e:
            state.set_error(str(e))


def shipped_weights() -> list[str]:
    """Weights files shipped in model/weights (by file name), then the untrained scorer."""
    from model.load import WEIGHTS_DIR

    return sorted(p.name for p in WEIGHTS_DIR.glob("*") if p.suffix in (".safetensors", ".pt")) + [UNTRAINED]


def configured_models() -> dict:
    """The models named when the server started, ``streamlit run app.py -- --model
    NAME=BACKBONE_DIR[,CHECKPOINT] --models FILE.toml`` (model.load.ModelSpec): name → its spec,
    or → the one-line reason it cannot load (a bad argument, a missing file, a failed load)."""
    import sys

    failed = load_failures()
    return {name: failed.get(name, spec) for name, spec in _configured(tuple(sys.argv[1:])).items()}


@functools.lru_cache(maxsize=4)
def _configured(argv: tuple[str, ...]) -> dict:
    import argparse
    from dataclasses import replace

    from model.load import parse_model_spec, read_model_specs

    ap = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    ap.add_argument("--model", action="append", default=[])
    ap.add_argument("--models", action="append", default=[])
    args, _ = ap.parse_known_args(argv)
    out = {}
    specs = []
    for spec in args.model:
        try:
            specs.append(parse_model_spec(spec))
        except ValueError as e:
            out[spec] = str(e)
    for f in args.models:
        try:
            specs += read_model_specs(f)
        except ValueError as e:
            out[Path(f).name] = str(e)
    for m in specs:
        problem = m.problem()
        out[m.name] = problem or m
        if m.checkpoint and not problem:  # its plain backbone, for "what fine-tuning changed" and A/B
            plain = f"{m.name}{PLAIN}"
            out[plain] = replace(m, name=plain, checkpoint=None)
    for name in set(out) & set(shipped_weights()):
        out[name] = f"the name {name!r} is taken by a shipped model: pick another"
    return out


PLAIN = " (untrained scorer)"  # a configured model's plain backbone: "NAME (untrained scorer)"


def backbone_name(weights: str) -> str:
    """The picker's name of the plain backbone (an untrained scorer) under the model ``weights``."""
    return f"{weights}{PLAIN}" if f"{weights}{PLAIN}" in configured_models() else UNTRAINED


@st.cache_resource(show_spinner=False)
def load_failures() -> dict[str, str]:
    """Models of this server that failed to load: name → reason (not retried)."""
    return {}


def weights_choices() -> list[str]:
    """The model picker's names: the models configured at start first, then the shipped ones."""
    return list(configured_models()) + shipped_weights()


def model_arguments(weights: str) -> list[str]:
    """The command-line arguments of ``python -m analysis …`` that load the model named ``weights``
    (none: the shipped weights)."""
    from model.load import WEIGHTS_DIR, ModelSpec

    spec = configured_models().get(weights)
    if isinstance(spec, ModelSpec):
        return ["--model", f"{weights}={spec.backbone}" + (f",{spec.checkpoint}" if spec.checkpoint else "")]
    return ["--checkpoint", str(WEIGHTS_DIR / weights)] if weights in shipped_weights()[:-1] else []


def usable_models() -> list[str]:
    """The picker's names but those known not to load."""
    failed = {n for n, spec in configured_models().items() if isinstance(spec, str)}
    return [n for n in weights_choices() if n not in failed]


def default_model() -> str:
    """The first model that may load: a configured one if any, else the shipped weights."""
    return usable_models()[0]


def model_caption(model) -> str:
    """Backbone, size, weights and device of a loaded Summarizer, as sidebar Markdown."""
    from viz.common import markdown_text

    layers, heads, params = model.size()
    return (f"Backbone **{markdown_text(Path(model.backbone).name)}** · {layers} layers × {heads} heads · "
            f"{params / 1e6:,.0f} M parameters · scorer **{model.weights}** · sentence vectors "
            f"**{model.model.pooling}** · device **{markdown_text(model.device)}**")


@st.cache_resource(show_spinner="Loading the model…", max_entries=3)
def get_model(weights: str, device: str):
    """Loaded once per (weights, device) for the whole server process; a model that fails raises
    ValueError with its one-line reason, also kept in load_failures(). ``device``: "cpu",
    "cuda:0", or "cuda:0 bfloat16" (the sidebar's choices: device and precision)."""
    from model.load import WEIGHTS_DIR, first_line
    from model.summarizer import Summarizer

    max_chars = int(os.environ.get("MICROSCOPE_MAX_CHARS", 100_000))
    device, _, precision = device.partition(" ")
    load = functools.partial(Summarizer.load, device=device, max_chars=max_chars, precision=precision or "float32")
    spec = configured_models().get(weights)
    if isinstance(spec, str):
        raise ValueError(f"Model {weights} cannot be used: {spec}")
    try:
        if spec is not None:
            model = load(spec.backbone, spec.checkpoint)
        elif weights == UNTRAINED:
            model = load(untrained=True)
        else:
            model = load(checkpoint=WEIGHTS_DIR / weights)
    except (OSError, ValueError, RuntimeError) as e:  # a bad file: one line, and the other models still work
        load_failures()[weights] = first_line(e)
        raise ValueError(f"Model {weights} cannot be used: {first_line(e)}") from e
    # Streamlit runs a full garbage collection after every script run (runner.postScriptGC); it
    # walked every object of the model, tokenizer and libraries each time, ~80% of the server's
    # CPU per student (benchmarks/README.md). What exists now lives as long as the server: moved
    # out of the collector's sight, later garbage is still collected.
    gc.collect()
    gc.freeze()
    return model


@st.cache_resource(show_spinner=False)
def trace_cache():
    """One LRU of Traces for the whole server, bounded by entries and bytes (a 512-token
    MiniLM Trace is ~40 MB). Sizes: env MICROSCOPE_CACHE_ENTRIES, MICROSCOPE_CACHE_MB."""
    from ui.cache import BoundedCache

    return BoundedCache(max_entries=int(os.environ.get("MICROSCOPE_CACHE_ENTRIES", 12)),
                        max_bytes=int(os.environ.get("MICROSCOPE_CACHE_MB", 480)) * 2 ** 20)


class Slots:
    """``with model_slots():`` holds one of the server's model slots for a run; after it, the
    memory the run freed goes back to the system (glibc keeps freed pages otherwise: a long
    document's run left the server gigabytes larger after the browser closed)."""

    def __init__(self, n: int):
        self.free = threading.BoundedSemaphore(n)

    def __enter__(self):
        self.free.acquire()

    def __exit__(self, *exc):
        self.free.release()
        release_memory()


def release_memory() -> None:
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


@st.cache_resource(show_spinner=False)
def model_slots() -> Slots:
    """At most this many model runs at once (env MICROSCOPE_CONCURRENT_RUNS, default 2 = the
    cores here): more only multiplies the transient memory of a run (~100 MB per window)."""
    return Slots(int(os.environ.get("MICROSCOPE_CONCURRENT_RUNS", 2)))


LONG_WINDOWS = 4  # a document of more BERT windows runs whole-document analyses only when asked


def asked(name: str, what: str, windows: int, seconds: float):
    """May the whole-document analysis ``name`` (about ``seconds``) run now? At once for documents
    of up to ``LONG_WINDOWS`` windows, else after a click on Run (with the estimate). → None (not
    yet), or a placeholder holding a Stop button (long documents) for the caller to ``.empty()``
    when done: Stop's callback forgets the click, so the rerun it causes does not start it again."""
    holder = st.empty()
    if windows <= LONG_WINDOWS:
        return holder
    flags = st.session_state.setdefault("asked_runs", set())
    key = (name, hash(state.params()["text"]))
    if key not in flags:
        with holder.container():
            if st.session_state.get("stopped_run") == key:
                st.warning(f"Stopped: {what[0].lower() + what[1:]} did not finish, and nothing of it was kept "
                           "(a result over some of the windows would be read as the whole document's). Run it "
                           "again to start over.", icon=":material/stop_circle:")
            st.info(f"{what} runs over all {windows} BERT windows of this long document: about {seconds:.0f} s, "
                    "with a progress bar and a Stop button.")
            if st.button(f"Run it over all {windows} windows", key=f"ask_{name}", icon=":material/play_arrow:"):
                flags.add(key)
                st.session_state.pop("stopped_run", None)
                st.rerun()
        return None
    holder.button("Stop", key=f"stop_{name}", icon=":material/stop:", on_click=_stopped, args=(flags, key))
    return holder


def _stopped(flags: set, key: tuple) -> None:
    """Stop's callback: forget the Run click (the rerun it causes must not start the run again)
    and remember what was stopped, for the Run prompt to say so."""
    flags.discard(key)
    st.session_state["stopped_run"] = key


def seconds_per_window(model) -> float:
    """A rough cost of one BERT window's forward + backward: 0.3 s per 22 M parameters (MiniLM
    on the 2-core machine this was measured on, benchmarks/long_document.py)."""
    return 0.3 * sum(p.numel() for p in model.model.bert.parameters()) / 22e6


def run_trace(text: str, k: int, block_trigram: bool, weights: str, device: str, window: int = 0,
              mask_heads: tuple = ()):
    """The Trace of a document and settings, from the shared cache or computed once. BERT's
    internals are captured for one 512-token ``window`` of the document."""
    def compute():
        with model_slots():
            return get_model(weights, device).trace(text, k=k, block_trigram=block_trigram, window=window,
                                                    mask_heads=mask_heads)

    key = (hashlib.sha256(text.encode()).hexdigest(), k, block_trigram, weights, device, window, tuple(mask_heads))
    trace = trace_cache().get(key, compute)
    if id(trace) not in _TRACE_KEYS:  # forgotten when the Trace is freed, before its id can be reused
        _TRACE_KEYS[id(trace)] = key
        weakref.finalize(trace, _TRACE_KEYS.pop, id(trace), None)
    return trace


_TRACE_KEYS: dict[int, tuple] = {}  # id(Trace) → its cache key, for the figure cache


@st.cache_resource(show_spinner=False)
def figure_cache():
    """Built figures shared by every session of the server: a view another session already
    built for the same Trace and settings is not rebuilt (env MICROSCOPE_FIGURE_ENTRIES, default
    64, and MICROSCOPE_FIGURE_MB, default 128)."""
    from ui.cache import BoundedCache, figure_bytes

    return BoundedCache(max_entries=int(os.environ.get("MICROSCOPE_FIGURE_ENTRIES", 64)),
                        max_bytes=int(os.environ.get("MICROSCOPE_FIGURE_MB", 128)) * 2 ** 20, size=figure_bytes)


def figure(build, trace, *args, **kwargs):
    """``build(trace, *args, **kwargs)`` (a viz/ function), from the figure cache when the Trace
    came from ``run_trace``. Figures are shared: nobody may change one after this."""
    name = (build.__module__, build.__qualname__, args, tuple(sorted(kwargs.items())))
    return shared_figure(trace, name, lambda: build(trace, *args, **kwargs))


def shared_figure(trace, name: tuple, build):
    """``build()``, cached under the Trace's key and ``name``, which must say everything else the
    figure depends on (the Trace's key already holds the document, k, trigram blocking, weights,
    device, window and switched-off heads)."""
    key = _TRACE_KEYS.get(id(trace))
    return build() if key is None else figure_cache().get((key, *name), build)


def run_cached(key: tuple, compute):
    """Any other result derived from a document (a batch, an explanation, head importance), in
    the same server-wide bounded cache as the traces."""
    return trace_cache().get(key, compute)


def run_mixing(trace):
    """What the model used (``analysis.mixing.mixing``) in the Trace's BERT window, cached beside it
    in the server-wide bounded cache; a progress bar while it runs."""
    params = state.params()

    def compute():
        from analysis.mixing import mixing

        bar = st.progress(0.0, "Measuring what each token contributed (norms, ALTI)…")
        with model_slots():
            mix = mixing(get_model(params["weights"], params["device"]), params["text"], trace.window,
                         trace.summary.masked_heads,
                         progress=lambda done, total: bar.progress(done / total, f"layer {min(done, total - 1)} of "
                                                                                 f"{total - 1}"))
        bar.empty()
        return mix

    return derived(trace, "mixing", compute)


def run_value_zeroing(trace, layer: int):
    """Value zeroing of BERT layer ``layer`` in the Trace's window, on request (a button: it runs the
    layer once per token), cached beside the Trace. → (C [T, T], row totals [T]) or None before asked."""
    from analysis.mixing import value_zeroing

    key = _TRACE_KEYS.get(id(trace))
    asked = st.session_state.setdefault("value_zeroing_asked", set())
    if (key, layer) not in asked:
        T = trace.bert_attention.shape[2]
        st.info(f"Value zeroing runs layer {layer + 1} again once for each of the {T} tokens: seconds on a CPU "
                "(a bar shows how far it is).")
        if not st.button(f"Run value zeroing for layer {layer + 1}", key="bert_vz_run", icon=":material/play_arrow:"):
            return None
        asked.add((key, layer))
    params = state.params()

    def compute():
        bar = st.progress(0.0, f"Zeroing each token's values in layer {layer + 1}…")
        with model_slots():
            out = value_zeroing(get_model(params["weights"], params["device"]), params["text"], layer, trace.window,
                                trace.summary.masked_heads,
                                progress=lambda done, total: bar.progress(done / total, f"token {done} of {total}"))
        bar.empty()
        return tuple(np.asarray(a, dtype=np.float32) for a in out)

    return derived(trace, f"value-zeroing-{layer}", compute)


def widget_key(trace, name: str) -> str:
    """A widget key of its own for each result (document, settings, model, window): a widget whose
    options come from the result (a sentence range) starts at its default on a new result, and
    never carries a value picked on another document into this one's figure."""
    key = _TRACE_KEYS.get(id(trace))
    return keyed(name, key) if key else name


def keyed(name: str, key: tuple) -> str:
    """A widget key of its own for the result cached under ``key`` (see ``widget_key``)."""
    return f"{name}:{hashlib.sha256(repr(key).encode()).hexdigest()[:12]}"


def derived(trace, name: str, compute):
    """``compute()``, a result derived from a Trace, cached beside it in the server-wide bounded
    cache under the Trace's key + ``name`` (computed each time for a Trace not from ``run_trace``)."""
    key = _TRACE_KEYS.get(id(trace))
    return compute() if key is None else run_cached((*key, name), compute)


def with_maps(trace, name: str, **maps):
    """The Trace with some maps replaced (e.g. ``bert_attention`` = norm-weighted shares), so the
    attention figures draw them; its figures are cached under the Trace's key + ``name``."""
    from dataclasses import replace

    new = replace(trace, **maps)
    key = _TRACE_KEYS.get(id(trace))
    if key is not None:
        _TRACE_KEYS[id(new)] = (*key, name)
        weakref.finalize(new, _TRACE_KEYS.pop, id(new), None)
    return new


def row_shares(m):
    """[..., T, T] non-negative contributions → each row's shares (rows sum to 1), float16 like attention."""
    import numpy as np

    m = m.astype(np.float32)
    return (m / np.maximum(m.sum(-1, keepdims=True), 1e-12)).astype(np.float16)


def current_trace():
    """The Trace of the last Summarize click (recomputed if it fell out of the cache), or None."""
    params = state.params()
    if params is None:
        return None
    return run_trace(**params, window=state.window())


def side_by_side(key: str):
    """A "Side by side with" model picker; returns (name, its Trace of the current document and
    settings on the same BERT window if it has one) or None. A model that fails is one line."""
    params = state.params()
    others = [n for n in usable_models() if n != params["weights"]]
    # One picker per shown model: a kept pick of the model now shown read "Choose an option".
    none = "— no second model —"  # an option of its own: a None option read as no choice ("Choose an option")
    other = st.selectbox("Side by side with", [none] + others, key=state.keep(f"{key}:{params['weights']}"),
                         help="The same document and settings through a second model: summaries, scores and head "
                              "statistics next to each other (e.g. ours vs PreSumm, trained vs untrained).")
    if other in (none, None):
        return None
    try:
        with st.spinner(f"Running {other}…"):
            try:
                return other, run_trace(**(params | {"weights": other}), window=state.window())
            except ValueError:  # it reads the document in fewer windows
                return other, run_trace(**(params | {"weights": other}))
    except ValueError as e:
        from viz.common import markdown_text

        st.error(markdown_text(str(e)))
        return None


def window_caption(trace) -> str:
    """"window 1 of 2 (sentences 0–15)" for long documents, "" for one window."""
    if len(trace.windows) < 2:
        return ""
    a, b = trace.windows[trace.window]
    sents = trace.input_sentences[a:b]
    return (f"BERT window {trace.window + 1} of {len(trace.windows)} (sentences {sents.min() + 1}–"
            f"{sents.max() + 1}); pick another in the sidebar.")


@st.cache_resource(show_spinner=False)
def document_store():
    """The documents summarized here, by ``ui.link.doc_id``, so a shared link can name a pasted
    text without carrying it: the store at MICROSCOPE_STORE (ui/store.py), shared by every
    process pointing at that file and kept across restarts. One per process: its tables checked
    once, its pool of connections shared by every session."""
    from ui.store import Store, default_path

    return Store(os.environ.get("MICROSCOPE_STORE") or default_path())


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


def shared(fn, *args, default=None):
    """``fn(*args)``, which reads or writes the shared store; when the store cannot be reached
    (ui.store.Unavailable: PostgreSQL down or cut off, SQLite's disk full): ``default``, a line in
    the log, and the run's notice (``store_notice``). What the page shows stays."""
    from ui.store import Unavailable

    try:
        return fn(*args)
    except Unavailable as e:
        LOG.warning("shared store unavailable: %s", e)
        st.session_state[state.STORE_DOWN] = str(e)
        return default


def store_notice(slot) -> None:
    """At the end of a run, in ``slot`` (near the top): that the shared store was unreachable."""
    why = st.session_state.pop(state.STORE_DOWN, None)
    if why:
        slot.warning(f":material/cloud_off: Right now {why}. What you see stays; links and classes wait "
                     "for it and go on by themselves when it is back.")


def unexpected(error: Exception) -> None:
    """An error nobody planned for: logged on the server with an id, one line in the browser."""
    import uuid

    error_id = uuid.uuid4().hex[:8]
    LOG.error("error %s: %s", error_id, error, exc_info=error)
    st.error(f"Something went wrong on the server (error id {error_id}); it has been logged. Try again, or "
             "send the id to whoever runs this server.")


def try_example():
    """The first screen's button: the shortest shipped example, summarized at once."""
    named = examples()
    name = min(named, key=lambda n: len(example_text(named[n])))
    st.session_state["example"] = name
    st.session_state["document"] = example_text(named[name])
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


def preload_plotly():
    """Streamlit's browser code for Plotly charts (a 4.7 MB chunk) loads when a session's first
    chart mounts, on the first Summarize. An empty 10-px static chart at the foot of the sidebar
    loads it while the user is still pasting (the gain: benchmarks/README.md)."""
    st.plotly_chart(_blank(), key="plotly_preload", config={"staticPlot": True})


@functools.lru_cache(maxsize=1)
def _blank():
    from viz.common import blank

    return blank()


# The token heatmap's head buttons switch maps in the browser; a head shown as a preview
# (viz.attention.token_heatmap) then needs its exact weights from the server. Streamlit passes no
# Plotly button clicks to Python, so this component (no HTML, JS in the page) listens for them on
# the chart marked ``layout.meta.relay`` and sends the clicked head's label as a trigger.
_RELAY_JS = """
export default function(component) {
  const { setTriggerValue } = component;
  // once the preview has painted (two frames, then 50 ms): the rerun's messages would delay it
  const later = (f) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(f, 50)));
  const send = (e) => later(() => setTriggerValue('head', e.button.label));
  const hook = () => {
    for (const gd of document.querySelectorAll('.js-plotly-plot')) {
      if (!(gd.layout && gd.layout.meta && gd.layout.meta.relay === 'head') || gd.__headRelay === send) continue;
      if (gd.__headRelay) gd.removeListener('plotly_buttonclicked', gd.__headRelay);
      gd.__headRelay = send;
      gd.on('plotly_buttonclicked', send);
    }
  };
  hook();
  const timer = setInterval(hook, 200);  // the chart mounts after this component, and remounts
  return () => clearInterval(timer);
}
"""
_head_relay = st.components.v2.component("microscope_head_relay", js=_RELAY_JS)


def head_map(trace, layer: int, key: str, plot_key: str, **kwargs):
    """The token heatmap of ``layer`` on the head kept in session ``key`` (None = mean), exact;
    a head button's click comes back through the relay, which stores that head and reruns."""
    clicked = _head_relay(key=f"{key}_relay", on_head_change=lambda: None).head
    if clicked is not None:
        st.session_state[key] = None if clicked == "mean" else int(clicked) - 1
    st.session_state.setdefault(key, 0)  # there from the first draw: a class counts a later pick as a change
    head = st.session_state.get(state.keep(key), 0)
    from viz.attention import token_heatmap

    teaching = bool(st.session_state.get(state.TEACHING))  # its students follow the head: every pick goes to the server
    plot(figure(token_heatmap, trace, layer, head, relay=teaching, **kwargs), key=plot_key)


MAX_FIGURE_HEIGHT = 900  # px: a taller figure (a row per sentence of a long document) scrolls in a box this high


def plot(fig, key: str | None = None):
    """A figure with Plotly's camera button set to the sidebar's format (PNG or SVG), a file name
    after the figure and 2× scale for slides. A figure taller than ``MAX_FIGURE_HEIGHT`` is drawn
    whole inside a scrolling box of that height, so what follows it stays a screen away. Under it,
    what it shows as text (ui.a11y.text_alternative)."""
    fmt = st.session_state.get("figure_format", "png")
    config = {"displaylogo": False, "toImageButtonOptions": dict(
        format=fmt, filename=f"microscope_{key or 'figure'}", scale=2 if fmt == "png" else 1)}
    if (fig.layout.height or 0) <= MAX_FIGURE_HEIGHT:
        st.plotly_chart(fig, key=key, config=config)
    else:
        st.caption(f"A tall chart ({fig.layout.height:,} px): scroll inside its box to see all of it.")
        with st.container(height=MAX_FIGURE_HEIGHT, key=f"{key}_box" if key else None):
            st.plotly_chart(fig, key=f"{key}_tall" if key else None, config=config)  # not the unboxed chart's key
    text_alternative(fig)
