"""What Streamlit's server sends, made cheaper for the server: its own browser code from memory,
gzipped once (``keep_static``), and the websocket's deflate level (``set_deflate_level``).

The websocket's deflate level. Streamlit (``server.enableWebsocketCompression``) runs uvicorn's
websockets-sansio protocol, whose permessage-deflate compresses every message at zlib's default
level 6. A one-head attention view is ~1.1 MB, mostly base64 weights that deflate barely shrinks:
level 6 costs the server ~36 ms a view for 578 KB, level 1 ~17 ms for 612 KB (6 % more on the
wire; benchmarks/README.md). The server's CPU per student is the workshop's limit, so level 1.

``MICROSCOPE_DEFLATE_LEVEL`` (0-9) sets another. Connections made before app.py first ran (the
server's very first session) keep uvicorn's default."""
from __future__ import annotations

import functools
import gzip
import os

DEFAULT_LEVEL = 1


def level() -> int:
    raw = os.environ.get("MICROSCOPE_DEFLATE_LEVEL", "")
    return int(raw) if raw.isdigit() and 0 <= int(raw) <= 9 else DEFAULT_LEVEL


@functools.cache  # once per server process
def set_deflate_level() -> bool:
    """Make uvicorn's websockets-sansio protocol build its deflate extension at ``level()``;
    False (nothing changed) where that protocol or its factory is not there."""
    try:
        from uvicorn.protocols.websockets import websockets_sansio_impl as impl
        from websockets.extensions.permessage_deflate import ServerPerMessageDeflateFactory
    except ImportError:
        return False
    base = getattr(impl, "ServerPerMessageDeflateFactory", None)
    if not (isinstance(base, type) and issubclass(base, ServerPerMessageDeflateFactory)):
        return False
    n = level()

    class Leveled(base):
        def __init__(self, *args, compress_settings=None, **kwargs):
            super().__init__(*args, compress_settings={**(compress_settings or {}), "level": n}, **kwargs)

    impl.ServerPerMessageDeflateFactory = Leveled
    return True


COMPRESSIBLE = ("text/", "application/javascript", "application/json", "image/svg+xml")


@functools.cache
def plotly_js() -> tuple[str, str]:
    """(the URL path, the file) of the plotly.js that plotly.py ships, which the app's chart element
    (ui/chart.py) loads: served with Streamlit's own code (``keep_static``) under a name that holds
    its version, so browsers keep it (Streamlit's static files are ``immutable``)."""
    import plotly
    from plotly.offline import get_plotlyjs_version

    return (f"static/microscope/plotly-{get_plotlyjs_version()}.min.js",
            os.path.join(os.path.dirname(plotly.__file__), "package_data", "plotly.min.js"))


@functools.cache  # once per server process
def keep_static() -> bool:
    """Serve Streamlit's own browser code (the package's ``static`` folder: 144 files, 9.6 MB to a
    new browser on a student's flow) from memory, gzipped where the browser takes it. Starlette's
    FileResponse reads each file in 64 KB chunks, each a hop to a worker thread, for 0.11-0.15 of
    the ~0.35 CPU-s a student costs one process (benchmarks.student_steps). A file is read, and
    gzipped at level 6, once, at its first request; the headers, ``If-None-Match`` and Streamlit's
    cache headers stay Starlette's and Streamlit's. Range and HEAD requests, and every other
    folder (the app's own ``static/``, whose class files change), go to Starlette as before.
    Browsers that loaded before app.py first ran (the server's very first session) got the files
    from disk. False (nothing changed) where Starlette's StaticFiles is not there."""
    try:
        import streamlit
        from starlette.datastructures import Headers
        from starlette.responses import FileResponse, Response
        from starlette.staticfiles import StaticFiles
    except ImportError:
        return False
    root = os.path.join(os.path.dirname(streamlit.__file__), "static") + os.sep
    base, kept = StaticFiles.file_response, {}
    base_lookup, (vendored, vendored_file) = StaticFiles.lookup_path, plotly_js()

    def lookup_path(self, path):
        if path.replace("\\", "/") == vendored and any(os.path.join(os.path.abspath(d), "") == root
                                                        for d in self.all_directories):
            return vendored_file, os.stat(vendored_file)  # plotly.js, as if it were Streamlit's
        return base_lookup(self, path)

    def file_response(self, full_path, stat_result, scope, status_code=200):
        response = base(self, full_path, stat_result, scope, status_code)
        path, asked = os.fspath(full_path), Headers(scope=scope)
        if (type(response) is not FileResponse or not (path.startswith(root) or path == vendored_file)
                or scope.get("method") != "GET"
                or "range" in asked):
            return response
        gz = "gzip" in asked.get("accept-encoding", "") and response.media_type.startswith(COMPRESSIBLE)
        key = (path, stat_result.st_mtime_ns, stat_result.st_size, gz)
        if key not in kept:
            with open(path, "rb") as f:
                body = f.read()
            kept[key] = gzip.compress(body, 6) if gz else body
        headers = {k: v for k, v in response.headers.items() if k != "content-length"}
        if gz:
            headers |= {"content-encoding": "gzip", "vary": "Accept-Encoding"}
        return Response(kept[key], status_code, headers=headers, media_type=response.media_type)

    file_response.__wrapped__, lookup_path.__wrapped__ = base, base_lookup  # Starlette's own (for tests)
    StaticFiles.file_response, StaticFiles.lookup_path = file_response, lookup_path
    return True
