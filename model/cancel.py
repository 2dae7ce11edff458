"""Work its caller gave up: a long run stops at the next BERT window once its caller says so (the
app: the browser session that asked for it went away; a hung-up client no longer leaves seconds of
CPU behind). Plain Python and per thread, as ``model.hooks``: one cached model serves every
session's thread, and each thread says for itself when its work is wanted no more."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Callable

_local = threading.local()


class Cancelled(BaseException):
    """The caller gave the run up. A BaseException, like KeyboardInterrupt: not an error to catch
    and report, and no ``except Exception`` keeps the run going."""


@contextmanager
def unless(gone: Callable[[], bool]):
    """Within the block, this thread's runs stop (``Cancelled``) at the next window where ``gone()``."""
    before = getattr(_local, "gone", None)
    _local.gone = gone
    try:
        yield
    finally:
        _local.gone = before


def checkpoint() -> None:
    """Between two windows' work: stop here if this thread's caller has gone."""
    gone = getattr(_local, "gone", None)
    if gone is not None and gone():
        raise Cancelled("the caller gave this run up")
