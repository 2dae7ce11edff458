"""The websocket's deflate level. Streamlit (``server.enableWebsocketCompression``) runs uvicorn's
websockets-sansio protocol, whose permessage-deflate compresses every message at zlib's default
level 6. A one-head attention view is ~1.1 MB, mostly base64 weights that deflate barely shrinks:
level 6 costs the server ~36 ms a view for 578 KB, level 1 ~17 ms for 612 KB (6 % more on the
wire; benchmarks/README.md). The server's CPU per student is the workshop's limit, so level 1.

``MICROSCOPE_DEFLATE_LEVEL`` (0-9) sets another. Connections made before app.py first ran (the
server's very first session) keep uvicorn's default."""
from __future__ import annotations

import functools
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
