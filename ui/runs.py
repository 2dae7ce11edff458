"""Every way a page gets a model result: the Trace of a Summarize (``run_trace``), any other result
through one call with one key rule (``cached``), whole-document analyses a long document runs only
when asked (``asked``: Run and Stop), mixing and value zeroing with their progress bars, and widget
keys that belong to one result (``widget_key``)."""
from __future__ import annotations

import hashlib
import threading
import weakref
from contextlib import contextmanager

import numpy as np
import streamlit as st
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from streamlit.runtime.scriptrunner_utils.script_run_context import add_script_run_ctx, get_script_run_ctx

from model.cancel import Cancelled, unless, watched
from ui import state
from ui.cache import Started
from ui.models import usable_models
from ui.resources import get_model, model_slots, result_cache, trace_cache
from ui.view import NO_SECOND


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def result_key(kind: str, params: dict, *extra) -> tuple:
    """The one key rule of every cached result: its ``kind``, the document (its SHA-256), every
    setting of the run (k, trigram blocking, weights, device, the heads switched off) and
    ``extra``, whatever else it depends on (a window, a sentence, a second text's ``sha``…)."""
    return (kind, sha(params["text"]), params["k"], params["block_trigram"], params["weights"], params["device"],
            tuple(params.get("mask_heads", ())), *extra)


def while_wanted(compute):
    """``compute`` as this browser session's run: it stops at the next BERT window once the session
    has gone (its browser closed or hung up: model.cancel), and the script ends as Streamlit ends a
    stopped one. Another session waiting for the same cached result then computes it itself
    (ui.cache). Outside a served session (a warm-up thread, AppTest) it always runs to its end."""
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None or not Runtime.exists():
        return compute

    def run():
        runtime, session = Runtime.instance(), ctx.session_id
        try:
            with unless(lambda: not runtime.is_active_session(session)):
                return compute()
        except Cancelled:
            raise StopException() from None

    return run


SHOW_AFTER_S = 0.5  # as st.spinner: a run over before then (a cached result) draws no bar


@contextmanager
def progress(what: str, runs: int = 1):
    """A progress bar over the block: ``what`` is being computed, moved by every BERT window the
    model starts in this thread (model.cancel.watched) over ``runs`` runs one after another (What
    if: A, then B). Shown from ``SHOW_AFTER_S`` on (a timer, as st.spinner's), gone when done. A run
    another session computes for the same key (ui.cache) is waited for under the bar, unmoved."""
    holder, lock = st.empty(), threading.Lock()
    now = {"run": 0, "last": -1, "at": (0.0, f"{what}…"), "shown": False, "done": False}

    def draw():
        with lock:
            if not now["done"]:
                holder.progress(*now["at"])
                now["shown"] = True

    def window(w: int, n: int) -> None:
        if w <= now["last"]:  # window 0 again: the next run
            now["run"] = min(now["run"] + 1, runs - 1)
        now["last"] = w
        of = f", run {now['run'] + 1} of {runs}" if runs > 1 else ""
        now["at"] = ((now["run"] + w / n) / runs, f"{what}: BERT window {w + 1} of {n}{of}…")
        if now["shown"]:
            draw()

    timer = threading.Timer(SHOW_AFTER_S, draw)
    add_script_run_ctx(timer)
    timer.start()
    try:
        with watched(window):
            yield
    finally:
        timer.cancel()
        with lock:
            now["done"] = True
            if now["shown"]:
                holder.empty()


@contextmanager
def stepped(what: str, step="{done} of {total}"):
    """A progress bar while the block runs, for a computation that counts its own steps (an
    analysis's ``progress=``): it says ``what`` is being computed, the block moves it with the
    yielded ``progress(done, total)`` ("what: " + ``step``, a format string or a function of done
    and total), and it is gone when the block ends, however it ends."""
    bar = st.progress(0.0, text=f"{what}…")
    say = step if callable(step) else lambda done, total: step.format(done=done, total=total)
    try:
        yield lambda done, total: bar.progress(min(done / max(total, 1), 1.0), text=f"{what}: {say(done, total)}")
    finally:
        bar.empty()


def cached(kind: str, params: dict, compute, *extra, model_run: bool = False):
    """The result ``kind`` of ``params`` (a Summarize's settings) and ``extra``, from the server-wide
    result cache, else ``compute()`` once (``model_run``: holding one of the server's model slots),
    given up when this session goes (``while_wanted``)."""
    def run():
        with model_slots():
            return compute()

    return result_cache().get(result_key(kind, params, *extra), while_wanted(run if model_run else compute))


def peek(kind: str, params: dict, *extra):
    """The cached result ``kind`` (see ``cached``) if anyone on this server computed it, else None."""
    return result_cache().peek(result_key(kind, params, *extra))


LONG_WINDOWS = 4  # a document of more BERT windows runs whole-document analyses only when asked


def asked(name: str, what: str, windows: int, seconds: float):
    """May the whole-document analysis ``name`` (about ``seconds``) run now? At once for documents
    of up to ``LONG_WINDOWS`` windows, else after a click on Run (with the estimate). → None (not
    yet), or a placeholder holding a Stop button (long documents) for the caller to ``.empty()``
    when done: Stop's callback forgets the click, so the rerun it causes does not start it again."""
    holder = st.empty()
    if windows <= LONG_WINDOWS or state.for_slide():
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


def _cache_key(text: str, k: int, block_trigram: bool, weights: str, device: str, window: int = 0,
               mask_heads: tuple = ()) -> tuple:
    """The trace cache's key of ``run_trace``'s arguments (``ahead`` asks for the same one)."""
    return result_key("trace", dict(text=text, k=k, block_trigram=block_trigram, weights=weights, device=device,
                                    mask_heads=mask_heads), window)


def run_trace(text: str, k: int, block_trigram: bool, weights: str, device: str, window: int = 0,
              mask_heads: tuple = ()):
    """The Trace of a document and settings, from the shared cache or computed once. BERT's
    internals are captured for one 512-token ``window`` of the document."""
    def compute():
        with model_slots():
            return get_model(weights, device).trace(text, k=k, block_trigram=block_trigram, window=window,
                                                    mask_heads=mask_heads)

    key = _cache_key(text, k, block_trigram, weights, device, window, mask_heads)
    trace = trace_cache().get(key, while_wanted(compute))
    if id(trace) not in _TRACE_KEYS:  # forgotten when the Trace is freed, before its id can be reused
        _TRACE_KEYS[id(trace)] = key
        weakref.finalize(trace, _TRACE_KEYS.pop, id(trace), None)
    return trace


_TRACE_KEYS: dict[int, tuple] = {}  # id(Trace) → its cache key, for the figure cache
_AHEAD = Started()  # the Summarizes started ahead


def ahead(inputs: dict, then=None) -> bool:
    """Start the Summarize of ``inputs`` (the sidebar's document and settings) in a background
    thread before its click (issue 71): a pasted or picked document, a changed k. The click then
    finds the Trace in the shared cache, or waits for this run (ui.cache computes a key once) instead
    of starting it: BERT at 470 tokens was half of the 0.9 s from the click to the first heatmap's
    message (benchmarks/README.md). ``then(trace)``, if given, runs next in the same thread: the
    shown page's first figure, into the figure cache (``ui.figures.first_figure``). Once per
    document and settings; → whether a thread started. A document the model refuses (empty, too
    long) is said by its click, not here."""
    if not inputs["text"].strip():
        return False
    key = _cache_key(**inputs)
    if not _AHEAD.claim(key, lambda: trace_cache().peek(key) is not None):
        return False

    def run():
        try:
            trace = run_trace(**inputs)
        except Exception:  # noqa: BLE001  (its click computes it again and says what went wrong)
            _AHEAD.forget(key)
            return
        if then is not None:
            try:
                then(trace)
            except Exception:  # noqa: BLE001  (the page builds it again, and says what went wrong)
                pass

    threading.Thread(target=run, name="summarize-ahead", daemon=True).start()
    return True


def trace_key(trace) -> tuple | None:
    """The cache key of a Trace from ``run_trace`` (or ``with_maps``), else None."""
    return _TRACE_KEYS.get(id(trace))


def head_stats(params: dict, trace) -> dict:
    """The Heads page's statistics of every head of ``trace`` ({"bert"|"inter": {name: [L, H]}}),
    in the server-wide result cache under ``params`` and the BERT window: the page, a lesson's
    warm-up and the question editor read and write the one entry."""
    from analysis import heads as AH

    return cached("stats", params, lambda: {"bert": AH.bert_stats(trace), "inter": AH.inter_stats(trace)}, trace.window)


def run_ablation(params: dict):
    """Every head switched off alone (analysis.heads.importance_ablation), in the server-wide result
    cache under ``params``, with a progress bar per batch: the Heads page's exact importance and the
    Why page's exact contrast read and write the one entry."""
    from analysis import heads as AH

    with stepped("Switching every head off, one at a time", "batch {done} of {total}") as step:
        return cached("ablation", params, lambda: AH.importance_ablation(
            get_model(params["weights"], params["device"]), params["text"], params["k"], params["block_trigram"],
            progress=step), model_run=True)


def batch_key(texts: list[str], layer: int) -> tuple:
    """What a padded batch depends on besides the document and its settings: the BERT layer whose
    attention it records and the other documents (their SHA-256)."""
    return layer, tuple(sha(t) for t in texts[1:])


def run_batch(params: dict, texts: list[str], layer: int):
    """BertSum's padded batch of ``texts`` (the document first: ``Summarizer.batch_trace``), in the
    server-wide result cache under ``params`` and ``batch_key``: the Masks & positions page and a
    lesson's warm-up read and write the one entry."""
    model = get_model(params["weights"], params["device"])
    return cached("batch", params, lambda: model.batch_trace(texts, layer), *batch_key(texts, layer), model_run=True)


def run_mixing(trace):
    """What the model used (``analysis.mixing.mixing``) in the Trace's BERT window, cached beside it
    in the server-wide bounded cache; a progress bar while it runs."""
    params = state.params()

    def compute():
        from analysis.mixing import mixing

        with stepped("Measuring what each token contributed (norms, ALTI)",
                     lambda done, total: f"layer {min(done, total - 1)} of {total - 1}") as step, model_slots():
            return mixing(get_model(params["weights"], params["device"]), params["text"], trace.window,
                          trace.summary.masked_heads, progress=step)

    return derived(trace, "mixing", compute)


def run_value_zeroing(trace, layer: int):
    """Value zeroing of BERT layer ``layer`` in the Trace's window, on request (a button: it runs the
    layer once per token), cached beside the Trace. → (C [T, T], row totals [T]) or None before asked."""
    from analysis.mixing import value_zeroing

    key = trace_key(trace)
    asked = st.session_state.setdefault("value_zeroing_asked", set())
    if (key, layer) not in asked:
        T = trace.bert_attention.shape[2]
        st.info(f"Value zeroing runs layer {layer + 1} again once for each of the {T} tokens: seconds on a CPU "
                "(a bar shows how far it is).")
        if not (st.button(f"Run value zeroing for layer {layer + 1}", key="bert_vz_run", icon=":material/play_arrow:")
                or state.for_slide()):
            return None
        asked.add((key, layer))
    params = state.params()

    def compute():
        with stepped(f"Zeroing each token's values in layer {layer + 1}", "token {done} of {total}") as step, \
                model_slots():
            out = value_zeroing(get_model(params["weights"], params["device"]), params["text"], layer, trace.window,
                                trace.summary.masked_heads, progress=step)
        return tuple(np.asarray(a, dtype=np.float32) for a in out)

    return derived(trace, f"value-zeroing-{layer}", compute)


def widget_key(trace, name: str) -> str:
    """A widget key of its own for each result (document, settings, model, window): a widget whose
    options come from the result (a sentence range) starts at its default on a new result, and
    never carries a value picked on another document into this one's figure."""
    key = trace_key(trace)
    return keyed(name, key) if key else name


def keyed(name: str, key: tuple) -> str:
    """A widget key of its own for the result cached under ``key`` (see ``widget_key``)."""
    return f"{name}:{hashlib.sha256(repr(key).encode()).hexdigest()[:12]}"


def derived(trace, name: str, compute):
    """``compute()``, a result derived from a Trace, cached beside it (``cached``, the Trace's key as
    its ``extra``; computed each time for a Trace not from ``run_trace``)."""
    key = trace_key(trace)
    return compute() if key is None else cached(name, state.params(), compute, key)


def with_maps(trace, name: str, **maps):
    """The Trace with some maps replaced (e.g. ``bert_attention`` = norm-weighted shares), so the
    attention figures draw them; its figures are cached under the Trace's key + ``name``."""
    from dataclasses import replace

    new = replace(trace, **maps)
    key = trace_key(trace)
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
    none = NO_SECOND  # an option of its own: a None option read as no choice ("Choose an option")
    kept = st.session_state.get(key, none)
    if kept not in [none] + others:  # the model shown now, or one this server does not have (a view's)
        if kept != params["weights"]:
            from viz.common import markdown_text

            st.warning(f"This view's second model {markdown_text(str(kept)[:80])} is not one this server has: "
                       "showing one model.")
        st.session_state[key] = none
    other = st.selectbox("Side by side with", [none] + others, key=state.keep(key),
                         help="The same document and settings through a second model: summaries, scores and head "
                              "statistics next to each other (e.g. ours vs PreSumm, trained vs untrained).")
    if other in (none, None):
        return None
    try:
        with progress(f"Running {other}"):
            try:
                return other, run_trace(**(params | {"weights": other}), window=state.window())
            except ValueError:  # it reads the document in fewer windows
                return other, run_trace(**(params | {"weights": other}))
    except ValueError as e:
        from viz.common import markdown_text

        st.error(markdown_text(str(e)))
        return None
