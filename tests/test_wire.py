"""ui/wire.py: the websocket's deflate level reaches the extension uvicorn builds per connection; Streamlit's
browser code is served from memory, gzipped, and nothing else is."""
from __future__ import annotations

import re
import zlib


def test_connections_deflate_at_level_1(monkeypatch):
    from uvicorn.protocols.websockets import websockets_sansio_impl as impl

    from ui import wire

    monkeypatch.setattr(impl, "ServerPerMessageDeflateFactory", impl.ServerPerMessageDeflateFactory)  # undone after
    wire.set_deflate_level.cache_clear()
    try:
        assert wire.set_deflate_level()
        # as uvicorn's websockets-sansio protocol makes it for each connection
        factory = impl.ServerPerMessageDeflateFactory(server_max_window_bits=12, client_max_window_bits=12,
                                                      compress_settings={"memLevel": 5})
        assert factory.compress_settings == {"memLevel": 5, "level": 1}
        _, extension = factory.process_request_params([], [])
        data = bytes(range(256)) * 400
        ours = extension.encoder.compress(data) + extension.encoder.flush(zlib.Z_SYNC_FLUSH)
        level1 = zlib.compressobj(1, zlib.DEFLATED, -12, 5)
        assert ours == level1.compress(data) + level1.flush(zlib.Z_SYNC_FLUSH)
    finally:
        wire.set_deflate_level.cache_clear()


def test_the_level_from_the_environment(monkeypatch):
    from ui import wire

    for raw, level in (("6", 6), ("0", 0), ("", 1), ("12", 1), ("x", 1)):
        monkeypatch.setenv("MICROSCOPE_DEFLATE_LEVEL", raw)
        assert wire.level() == level


def call(app, path: str, method: str = "GET", **headers):
    """One HTTP request straight to an ASGI app: (status, headers, body)."""
    import asyncio

    from starlette.datastructures import Headers

    scope = {"type": "http", "method": method, "path": path, "root_path": "", "query_string": b"",
             "http_version": "1.1", "scheme": "http", "server": ("test", 80), "client": ("test", 1),
             "headers": [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]}
    sent, asked = [], []

    async def receive():  # the request, then nothing until the response is sent (no disconnect)
        if asked:
            await asyncio.Event().wait()
        asked.append(1)
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], Headers(raw=sent[0]["headers"]), b"".join(m.get("body", b"") for m in sent[1:])


def streamlits_own_static(monkeypatch):
    """Starlette's StaticFiles as Streamlit has it and a ``wire.keep_static`` not yet called, whether
    or not an app run in this process (an earlier test) has patched it; all as it was after the test."""
    import functools

    from starlette.staticfiles import StaticFiles

    from ui import wire

    for name in ("file_response", "lookup_path"):
        f = getattr(StaticFiles, name)
        monkeypatch.setattr(StaticFiles, name, getattr(f, "__wrapped__", f))
    monkeypatch.setattr(wire, "keep_static", functools.cache(wire.keep_static.__wrapped__))


def test_streamlits_browser_code_from_memory_gzipped_and_nothing_else(monkeypatch, tmp_path):
    """Streamlit's own static handler, on its own folder: a file comes gzipped to a browser that
    takes gzip and as is to one that does not, with Starlette's ETag and Streamlit's cache
    headers; If-None-Match, Range and HEAD keep Starlette's answers; another folder's file is
    still read from disk each time (a class's version file changes)."""
    import gzip
    import os

    import streamlit
    from starlette.staticfiles import StaticFiles
    from streamlit.web.server.starlette.starlette_static_routes import create_streamlit_static_handler

    from ui import wire

    streamlits_own_static(monkeypatch)
    folder = os.path.join(os.path.dirname(streamlit.__file__), "static")
    js = max((f for f in os.listdir(os.path.join(folder, "static", "js")) if f.endswith(".js")),
             key=lambda f: os.path.getsize(os.path.join(folder, "static", "js", f)))
    path = f"/static/js/{js}"
    raw = open(os.path.join(folder, "static", "js", js), "rb").read()
    handler = create_streamlit_static_handler(folder, None)
    before = call(handler, path, accept_encoding="gzip, deflate, br")
    assert wire.keep_static()
    for _ in range(2):  # the second from memory
        status, headers, body = call(handler, path, accept_encoding="gzip, deflate, br")
        assert status == 200 and headers["content-encoding"] == "gzip" and gzip.decompress(body) == raw
        assert len(body) < len(raw) / 2 and int(headers["content-length"]) == len(body)
        for name in ("etag", "cache-control", "content-type", "last-modified"):
            assert headers[name] == before[1][name], name
    status, headers, body = call(handler, path)
    assert status == 200 and body == raw and "content-encoding" not in headers
    assert call(handler, path, if_none_match=before[1]["etag"])[0] == 304
    status, headers, body = call(handler, path, range="bytes=0-99")
    assert status == 206 and body == raw[:100]
    status, headers, body = call(handler, path, "HEAD")
    assert status == 200 and body == b"" and int(headers["content-length"]) == len(raw)

    other = StaticFiles(directory=tmp_path)
    for version in (1, 22):
        (tmp_path / "ABCD.json").write_text(f'{{"version": {version}}}')
        status, headers, body = call(other, "/ABCD.json", accept_encoding="gzip")
        assert body == f'{{"version": {version}}}'.encode() and "content-encoding" not in headers


def test_plotly_js_is_served_with_streamlits_code_gzipped_and_kept(monkeypatch, tmp_path):
    """The chart element's plotly.js (plotly.py's own file) comes from Streamlit's static handler at
    a path that names its version: gzipped once, cached for good (``immutable``), a 304 on a
    revalidation; not from before app.py's first run, and not from another folder's handler."""
    import gzip
    import os

    import pytest
    import streamlit
    from starlette.exceptions import HTTPException
    from starlette.staticfiles import StaticFiles
    from streamlit.web.server.starlette.starlette_static_routes import create_streamlit_static_handler

    from ui import wire

    streamlits_own_static(monkeypatch)
    url, file = wire.plotly_js()
    raw = open(file, "rb").read()
    version = re.match(rb"/\*\*\n\* plotly\.js v([0-9.]+)\n", raw).group(1).decode()  # the file's own header
    assert url == f"static/microscope/plotly-{version}.min.js"
    handler = create_streamlit_static_handler(os.path.join(os.path.dirname(streamlit.__file__), "static"), None)
    assert call(handler, "/" + url)[2] != raw  # Streamlit's own answer (its index page) until app.py has run
    assert wire.keep_static()
    status, headers, body = call(handler, "/" + url, accept_encoding="gzip")
    assert status == 200 and headers["content-encoding"] == "gzip" and gzip.decompress(body) == raw
    assert "immutable" in headers["cache-control"] and "javascript" in headers["content-type"]
    assert call(handler, "/" + url, if_none_match=headers["etag"])[0] == 304
    assert call(handler, "/" + url)[2] == raw
    with pytest.raises(HTTPException) as no:  # another folder's handler: not there
        call(StaticFiles(directory=tmp_path), "/" + url)
    assert no.value.status_code == 404
