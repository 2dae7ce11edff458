"""Shared fixtures: a synthetic Trace (random tensors, real field names/shapes/dtypes from
model/trace.py) for the figure tests, the real Summarizer loaded once per session, the app's state
in a temporary folder, AppTest's answer to Streamlit's legacy multipage mode, and the real app
server and Chromium for the browser tests. Shared helpers: tests/helpers.py, tests/browsing.py."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch

from benchmarks.common import CHROMIUM_ARGS, Server
from model.inter_encoder import sinusoidal_table
from model.trace import Summary, Trace

WORDS = "the cat sat on a mat while dogs ran past quickly under grey skies".split()


def synthetic_trace(n_sent: int = 5, words: int = 8, L: int = 6, H: int = 12, L2: int = 2, H2: int = 8,
                    D: int = 384, seed: int = 0, short: tuple[int, ...] = (2,), k: int = 2) -> Trace:
    """A Trace with random attention rows (softmax of noise) and BertSum-shaped bookkeeping.
    Sentences in ``short`` are too short: shown, not fed."""
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    sentences = tuple(" ".join(rng.choice(WORDS, words if i not in short else 3)) + "." for i in range(n_sent))
    spans, pos = [], 0
    for s in sentences:
        spans.append((pos, pos + len(s)))
        pos += len(s) + 1
    fed = [i for i in range(n_sent) if i not in short]
    tokens, token_sentence, cls_positions, segment_ids = [], [], [], []
    for n, i in enumerate(fed):
        cls_positions.append(len(tokens))
        piece = ["[CLS]"] + sentences[i].lower().replace(".", " .").split() + ["[SEP]"]
        tokens += piece
        token_sentence += [i] * len(piece)
        segment_ids += [n % 2] * len(piece)
    T, S, dh = len(tokens), len(fed), D // H
    scores = torch.rand(S, generator=g)
    order = [fed[j] for j in torch.argsort(scores, descending=True).tolist()]
    all_scores = [None] * n_sent
    for j, i in enumerate(fed):
        all_scores[i] = float(scores[j])
    summary = Summary(sentences=sentences, spans=tuple(spans), scores=tuple(all_scores),
                      selected=tuple(sorted(order[:k])), too_short=tuple(short), truncated=(),
                      tokens_cut=0, device="cpu", weights="untrained", backbone="synthetic")

    def rnd(*shape, dtype=torch.float16):
        return torch.randn(*shape, generator=g).to(dtype)

    q, kk, v = rnd(L, H, T, dh), rnd(L, H, T, dh), rnd(L, H, T, dh)
    att = torch.softmax(q.float() @ kk.float().transpose(-1, -2) / dh ** 0.5, -1).half()
    n = lambda x: x.numpy()  # noqa: E731  a Trace holds NumPy arrays
    return Trace(
        summary=summary, tokens=tuple(tokens), token_sentence=np.array(token_sentence, dtype=np.int64),
        input_sentences=np.array(fed, dtype=np.int64), cls_positions=np.array(cls_positions, dtype=np.int64),
        segment_ids=np.array(segment_ids, dtype=np.int64), window=0, windows=((0, S),), token_mask=np.ones(T, dtype=bool),
        extended_mask=np.zeros(T, dtype=np.float32), cls_mask=np.ones(S, dtype=bool),
        inter_mask=np.zeros(S, dtype=bool), bert_attention=n(att), bert_query=n(q), bert_key=n(kk),
        bert_value=n(v), position_embeddings=n(rnd(T, D, dtype=torch.float32)),
        token_type_embeddings=n(rnd(T, D, dtype=torch.float32)), sentence_vectors=n(rnd(S, D, dtype=torch.float32)),
        sentence_pe=n(sinusoidal_table(S, D)),
        inter_attention=n(torch.softmax(rnd(L2, H2, S, S, dtype=torch.float32), -1).half()),
        pe_table=n(sinusoidal_table(max(512, S + 8), D)))


@pytest.fixture(scope="session", autouse=True)
def server_state_folder():
    """Linked documents (a SQLite file) and corpus runs go to a temporary folder, never the user's
    cache; the app servers the browser tests start inherit it."""
    folder = tempfile.mkdtemp(prefix="microscope_state_")
    settings = {"MICROSCOPE_STORE": os.path.join(folder, "documents.sqlite3"),
                "MICROSCOPE_CORPUS_ROOT": os.path.join(folder, "corpus")}
    old = {k: os.environ.get(k) for k in settings}
    os.environ.update(settings)
    yield folder
    for k, v in old.items():
        os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def navigation_not_pages_dir(monkeypatch):
    """The one answer in the tests to Streamlit 1.67's legacy multipage mode (ui/legacy.py): AppTest
    resets PagesManager.uses_pages_directory before every run and a ``pages/`` folder then sends
    reruns down the legacy path (the page script runs without app.py). The real server clears the
    flag once st.navigation runs; do the same here, for every test."""
    from streamlit.runtime.pages_manager import PagesManager

    init = PagesManager.__init__

    def patched(self, *args, **kwargs):
        init(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", patched)


@pytest.fixture(scope="session")
def trace() -> Trace:
    return synthetic_trace()


@pytest.fixture(scope="session")
def summarizer():
    summarizer_mod = pytest.importorskip("model.summarizer")
    return summarizer_mod.Summarizer.load()


@pytest.fixture(scope="session")
def presumm_base(tmp_path_factory):
    """(backbone directory, PreSumm checkpoint) with random weights at BERT-base shape: 12 × 12
    heads, 768 dims, 3072 FFN, 2 sentence-encoder layers of 8 heads (benchmarks/presumm_fixture.py),
    written once per session to a temporary folder."""
    from benchmarks.presumm_fixture import write

    return write(tmp_path_factory.mktemp("presumm_base"))


@pytest.fixture(scope="session")
def presumm_model(presumm_base):
    from model.summarizer import Summarizer

    return Summarizer.load(*presumm_base, device="cpu")


# ---------------------------------------------------------------- the real app in Debian's Chromium
# (tests/test_browser.py, tests/test_browser_accessibility.py; helpers in tests/browsing.py)

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with Server(tmp_path_factory.mktemp("server") / "streamlit.log") as s:
        yield s.url + "/"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    """Where screenshots go; with UPDATE_SCREENSHOTS=1 they replace the README's at the end."""
    d = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path_factory.mktemp("screenshots"))
    d.mkdir(parents=True, exist_ok=True)
    yield d
    if os.environ.get("UPDATE_SCREENSHOTS"):
        docs = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
        docs.mkdir(parents=True, exist_ok=True)
        for png in d.glob("*.png"):
            shutil.copy(png, docs / png.name)


# ---------------------------------------------------------------- the shared store, on both back ends

@pytest.fixture(scope="module")
def postgres():
    """A real PostgreSQL server (Debian's ``postgresql`` package, scripts/hosts.py) in a temporary
    folder; skipped where there is none."""
    import socket

    from scripts.hosts import Postgres, pg_bin

    if pg_bin() is None:
        pytest.skip("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with Postgres(port=port) as db:
        yield db  # .url; .stop() and .start() for faults


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    """The shared store on SQLite, then on PostgreSQL (emptied)."""
    from ui.store import Store

    if request.param == "sqlite":
        return Store(tmp_path / "store.sqlite3", max_documents=3)
    url = request.getfixturevalue("postgres").url
    s = Store(url, max_documents=3)
    s.run("DELETE FROM documents", (), False, *((f"DELETE FROM {t}", ()) for t in (
        "classes", "attendance", "leads", "leaders", "throttle", "seats", "seat_clients", "seat_refused", "rooms", "answers",
        "revealed", "left_steps", "class_lessons", "homework")))
    return s
