"""The server's own clock, for ``benchmarks.browser``, which puts this folder on the streamlit
server's PYTHONPATH: with ``MICROSCOPE_BENCH_CLOCK`` set, every message a session receives from a
browser and every message it queues for one is written to that file with ``time.time()``, as
"<seconds> in <type>" and "<seconds> out <bytes>". Nothing else changes. (The page's own clocks,
Chromium's DevTools events and its NetLog, stamp a message when the page's busy main thread takes
it: benchmarks/HISTORY.md, session 40.)"""
import os

if os.environ.get("MICROSCOPE_BENCH_CLOCK"):
    import time

    from streamlit.runtime import app_session as _app

    _log = open(os.environ["MICROSCOPE_BENCH_CLOCK"], "a", buffering=1, encoding="utf-8")
    _handle, _enqueue = _app.AppSession.handle_backmsg, _app.AppSession._enqueue_forward_msg

    def handle_backmsg(self, msg):
        _log.write(f"{time.time():.4f} in {msg.WhichOneof('type')}\n")
        return _handle(self, msg)

    def _enqueue_forward_msg(self, msg):
        _log.write(f"{time.time():.4f} out {msg.ByteSize()}\n")
        return _enqueue(self, msg)

    _app.AppSession.handle_backmsg, _app.AppSession._enqueue_forward_msg = handle_backmsg, _enqueue_forward_msg
