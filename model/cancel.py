"""Work its caller gave up or watches: a long run stops at the next BERT window once its caller says
so (the app: the browser session that asked for it went away; a hung-up client no longer leaves
seconds of CPU behind), and says each window it starts to a caller who shows progress (the app's
progress bars). Plain Python and per thread, as ``model.hooks``: one cached model serves every
session's thread, and each thread says for itself when its work is wanted no more, and who watches it."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Callable

_local = threading.local()


class Cancelled(BaseException):
    """The caller gave the run up. A BaseException, like KeyboardInterrupt: not an error to catch
    and report, and no ``except Exception`` keeps the run going."""


@contextmanager
def _within(name: str, value):
    """This thread's ``name`` is ``value`` within the block, then what it was before."""
    before = getattr(_local, name, None)
    setattr(_local, name, value)
    try:
        yield
    finally:
        setattr(_local, name, before)


def unless(gone: Callable[[], bool]):
    """Within the block, this thread's runs stop (``Cancelled``) at the next window where ``gone()``."""
    return _within("gone", gone)


def watched(window: Callable[[int, int], None]):
    """Within the block, this thread's runs call ``window(w, n)`` as they start the w-th (0-based)
    of a document's n BERT windows."""
    return _within("window", window)


def checkpoint(w: int = 0, n: int = 0) -> None:
    """Between two windows' work, before window ``w`` of ``n``: stop here if this thread's caller
    has gone, else say which window starts to whoever watches (n = 0: a step that is not a window)."""
    gone = getattr(_local, "gone", None)
    if gone is not None and gone():
        raise Cancelled("the caller gave this run up")
    window = getattr(_local, "window", None)
    if window is not None and n:
        window(w, n)
