"""What one server process holds for every session: the loaded models, the model slots, the
bounded caches (Traces, other results, figures) and the shared store.

Settings (environment, read here only): MICROSCOPE_MAX_CHARS (input limit), MICROSCOPE_CACHE_ENTRIES
and MICROSCOPE_CACHE_MB (the result caches), MICROSCOPE_FIGURE_ENTRIES and MICROSCOPE_FIGURE_MB (the
figure cache), MICROSCOPE_CONCURRENT_RUNS (model runs at once), MICROSCOPE_STORE (linked documents and
classes: a SQLite file or a postgresql:// URL; classes' own settings: ui/classroom)."""
from __future__ import annotations

import ctypes
import functools
import gc
import os
import threading

import pandas  # noqa: F401  imported here, once: plotly looks pandas up in sys.modules, and sessions that
import streamlit as st  # started together saw it half-initialized there ("no attribute 'Series'", workshop)

from ui.models import UNTRAINED, configured_models, load_failures


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


@st.cache_resource(show_spinner=False)
def result_cache():
    """Every other result derived from a document (a batch, mixing, an explanation, head
    statistics and importance, a comparison, patching), for the whole server: ui.runs.cached.
    Bounded by 8 × MICROSCOPE_CACHE_ENTRIES entries and half of MICROSCOPE_CACHE_MB."""
    from ui.cache import BoundedCache

    return BoundedCache(max_entries=8 * int(os.environ.get("MICROSCOPE_CACHE_ENTRIES", 12)),
                        max_bytes=int(os.environ.get("MICROSCOPE_CACHE_MB", 480)) * 2 ** 20 // 2)


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


@st.cache_resource(show_spinner=False)
def figure_cache():
    """Built figures shared by every session of the server: a view another session already
    built for the same Trace and settings is not rebuilt (env MICROSCOPE_FIGURE_ENTRIES, default
    64, and MICROSCOPE_FIGURE_MB, default 128)."""
    from ui.cache import BoundedCache, figure_bytes

    return BoundedCache(max_entries=int(os.environ.get("MICROSCOPE_FIGURE_ENTRIES", 64)),
                        max_bytes=int(os.environ.get("MICROSCOPE_FIGURE_MB", 128)) * 2 ** 20, size=figure_bytes)


@st.cache_resource(show_spinner=False)
def slide_cache():
    """A story's slides (ui.present), for every session of the server: a view → its Slide (chart,
    plain words, summary, settings; not the step's title and note), so stepping back or presenting
    again runs no page. Bounded like the figure cache (its own MICROSCOPE_FIGURE_ENTRIES and _MB)."""
    from ui.cache import BoundedCache, figure_bytes

    return BoundedCache(max_entries=int(os.environ.get("MICROSCOPE_FIGURE_ENTRIES", 64)),
                        max_bytes=int(os.environ.get("MICROSCOPE_FIGURE_MB", 128)) * 2 ** 20,
                        size=lambda s: figure_bytes(s.figure) if s.figure is not None else 4096)


@st.cache_resource(show_spinner=False)
def document_store():
    """The documents summarized here, by ``ui.link.doc_id``, so a shared link can name a pasted
    text without carrying it: the store at MICROSCOPE_STORE (ui/store.py), shared by every
    process pointing at that file and kept across restarts. One per process: its tables checked
    once, its pool of connections shared by every session."""
    from ui.store import Store, default_path

    return Store(os.environ.get("MICROSCOPE_STORE") or default_path())
