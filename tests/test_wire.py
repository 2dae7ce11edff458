"""ui/wire.py: the websocket's deflate level reaches the extension uvicorn builds per connection."""
from __future__ import annotations

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
