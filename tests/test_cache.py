"""The shared result cache: bounded by entries and bytes, LRU, one computation per key."""
import threading
import time

import pytest

from ui.cache import BoundedCache


class Blob:
    def __init__(self, n):
        self.n = n

    def nbytes(self):
        return self.n


def test_bounded_by_entries_lru():
    c = BoundedCache(max_entries=2, max_bytes=10 ** 9)
    c.get("a", lambda: Blob(1)), c.get("b", lambda: Blob(1))
    c.get("a", lambda: pytest.fail("a is cached"))  # a becomes most recent
    c.get("c", lambda: Blob(1))
    assert len(c) == 2
    c.get("a", lambda: pytest.fail("a was evicted instead of b"))
    calls = []
    c.get("b", lambda: calls.append(1) or Blob(1))
    assert calls == [1]


def test_bounded_by_bytes():
    c = BoundedCache(max_entries=100, max_bytes=100)
    for i in range(10):
        c.get(i, lambda: Blob(30))
        assert c.nbytes <= 100
    assert len(c) == 3
    big = c.get("big", lambda: Blob(500))  # returned, never stored
    assert big.n == 500 and "big" not in c._items and c.nbytes <= 100


def test_concurrent_callers_compute_once():
    c, calls = BoundedCache(), []

    def slow():
        calls.append(1)
        time.sleep(0.2)
        return Blob(1)

    got = []
    threads = [threading.Thread(target=lambda: got.append(c.get("k", slow))) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(got) == 5 and all(g is got[0] for g in got)


def test_a_failing_computation_is_not_cached():
    c = BoundedCache()
    with pytest.raises(ValueError):
        c.get("k", lambda: (_ for _ in ()).throw(ValueError("bad")))
    assert c.get("k", lambda: Blob(1)).n == 1 and not c._pending


def test_document_store_is_shared_by_processes_survives_restarts_and_is_bounded(tmp_path):
    from ui.store import DocumentStore

    path = tmp_path / "store" / "documents.sqlite3"
    a, b = DocumentStore(path, max_documents=3), DocumentStore(path, max_documents=3)  # two app processes
    a.put("id:1", "one <b>text</b>\n")
    assert b.get("id:1") == "one <b>text</b>\n" and b.get("id:missing") is None
    assert DocumentStore(path).get("id:1") == "one <b>text</b>\n"  # a restarted process
    for i in range(2, 6):
        time.sleep(0.01)
        b.put(f"id:{i}", f"text {i}")
    assert len(a) == 3 and a.get("id:1") is None and a.get("id:5") == "text 5"  # the oldest went first
    time.sleep(0.01)
    a.get("id:3")  # opening a link keeps its document
    b.put("id:6", "text 6")
    assert a.get("id:3") == "text 3" and a.get("id:4") is None

