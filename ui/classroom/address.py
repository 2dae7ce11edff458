"""The address students open: a class's join link and QR code, a homework's links. Built on
MICROSCOPE_PUBLIC_URL when it is set, else on the address the teacher's browser used; a link that
no student's device can open (this computer itself, 0.0.0.0, no http:// or https://) is said so
beside it, in one sentence that says what to do instead."""
from __future__ import annotations

import ipaddress
import os
import re
from urllib.parse import urlparse

PUBLIC_URL = "MICROSCOPE_PUBLIC_URL"
SCHEME = re.compile(r"(?i)https?://[^/?#\s]+")  # a base a phone's camera opens as a link


def base(url: str) -> str:
    """The link's base: MICROSCOPE_PUBLIC_URL, or the teacher's own address without its query."""
    return (os.environ.get(PUBLIC_URL) or url.split("?")[0].split("#")[0]).strip().rstrip("/")


def link(url: str, query: str) -> str:
    """A students' link: ``base(url)/?query``."""
    return f"{base(url)}/?{query}"


def unreachable(link: str) -> str | None:
    """Why students' devices cannot open ``link`` (None: nothing known against it)."""
    fix = (f"Open the app by this computer's network name or address instead, or start the server with "
           f"{PUBLIC_URL} set to it (e.g. http://10.0.0.5:8080).")
    if not SCHEME.match(link):
        return (f"This link has no http:// or https://: phones read it as plain text, not a link. Set "
                f"{PUBLIC_URL} with its scheme (e.g. http://10.0.0.5:8080).")
    host = (urlparse(link).hostname or "").lower()
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if host == "localhost" or host.endswith(".localhost") or (ip is not None and ip.is_loopback):
        return f"This link names this computer itself (localhost): students' devices cannot open it. {fix}"
    if ip is not None and ip.is_unspecified:
        return (f"This link names {host}, which means \"every address of the server\" and opens nothing on "
                f"a student's device. {fix}")
    return None


def check_public_url() -> str | None:
    """At start (scripts/serve.py): what is wrong with MICROSCOPE_PUBLIC_URL, if it is set."""
    return unreachable(link("", "class=X")) if os.environ.get(PUBLIC_URL) else None
