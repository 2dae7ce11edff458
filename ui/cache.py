"""A thread-safe LRU cache bounded by entry count and by bytes, for Traces shared by every
browser session of one server (a 512-token Trace of MiniLM is ~40 MB); and ``Started``, what
background work for those caches has been started."""
from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from typing import Callable, Hashable

import numpy as np


def sizeof(value) -> int:
    """Approximate bytes of a cached result: NumPy arrays, and dataclasses, dicts, lists and
    tuples of them (a Trace, a BatchTrace, an explanation); other leaves count 64 bytes."""
    if callable(getattr(value, "nbytes", None)):  # a Trace knows its size
        return value.nbytes()
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, str):
        return len(value)
    if dataclasses.is_dataclass(value):
        value = [getattr(value, f.name) for f in dataclasses.fields(value)]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return sum(sizeof(v) for v in value) + 64
    return 64


def figure_bytes(fig) -> int:
    """Approximate bytes of a Plotly figure (or a dict of them): the NumPy arrays of its traces, plus
    4 KB, plus the bytes the chart element sends for it where it keeps them (ui.figures.wired)."""
    if isinstance(fig, dict):
        return sum(figure_bytes(f) for f in fig.values())
    arrays = (getattr(t, a, None) for t in fig.data for a in ("x", "y", "z", "customdata", "text"))
    n = sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))
    return n + len(getattr(fig, "_chart_bytes", b"")) + 4096


class BoundedCache:
    def __init__(self, max_entries: int = 16, max_bytes: int = 512 * 2 ** 20, size: Callable = sizeof):
        self.max_entries, self.max_bytes, self.size = max_entries, max_bytes, size
        self._items: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._pending: dict[Hashable, threading.Lock] = {}

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(n for _, n in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def peek(self, key: Hashable):
        """The cached value for ``key`` (now the most recent), or None."""
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key][0]

    def get(self, key: Hashable, compute: Callable[[], object]):
        """The cached value for ``key``, else ``compute()`` (once, even if several threads
        ask at the same time), stored unless it alone exceeds ``max_bytes``."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key][0]
            pending = self._pending.setdefault(key, threading.Lock())
        with pending:  # a second caller for the same key waits for the first
            with self._lock:
                if key in self._items:
                    return self._items[key][0]
            try:
                value = compute()
                n = self.size(value)
                with self._lock:
                    if n <= self.max_bytes:
                        self._items[key] = (value, n)
                        total = sum(m for _, m in self._items.values())
                        while len(self._items) > self.max_entries or total > self.max_bytes:
                            total -= self._items.popitem(last=False)[1][1]
            finally:
                with self._lock:
                    self._pending.pop(key, None)
            return value


class Started:
    """Keys of work started in a background thread, once each (the oldest forgotten past ``bound``):
    ``ui.runs.ahead``'s Summarizes, ``ui.figures.later``'s figures."""

    def __init__(self, bound: int = 256):
        self.bound, self._keys, self._lock = bound, {}, threading.Lock()

    def claim(self, key, done=lambda: False) -> bool:
        """True the first time for ``key``, unless ``done()`` (its result is already cached)."""
        with self._lock:
            if key in self._keys or done():
                return False
            self._keys[key] = None
            while len(self._keys) > self.bound:
                self._keys.pop(next(iter(self._keys)))
            return True

    def forget(self, key) -> None:
        with self._lock:
            self._keys.pop(key, None)
