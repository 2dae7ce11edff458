"""The shared result cache: bounded by entries and bytes, LRU, one computation per key."""
import threading
import time

import pytest

from pages.cache import BoundedCache


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
