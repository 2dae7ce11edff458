"""This browser session in a class: its keys in st.session_state, and who is asking (the client
address, believed from our nginx only with its secret)."""
from __future__ import annotations

import hmac
import os

import streamlit as st

from ui import state

PROXIED = "X-Microscope-Proxy"  # the header scripts/serve.py's nginx adds: this run's secret
PROXY_SECRET = "MICROSCOPE_PROXY_SECRET"  # the environment variable that holds it

# SESSION: a student's seat, a random token kept in the address (?seat=): a reload or a reconnect to
# another process is the same student (its answers, its row in the attendance)
TEACHING, JOINED, FOLLOWING, APPLIED, SESSION, STEP, MOVED, RESUME, PAGE, LEADER, ELSEWHERE = (
    state.TEACHING, "class_joined", "class_following", "class_applied", "class_session", state.STEP,
    "class_moved", "class_resume_key", "class_page", "class_leader", "class_led_elsewhere")


HOMEWORK, HOMEWORK_SEAT, HOMEWORK_RESULTS = "homework_code", "homework_seat", "homework_results"  # homework's keys


def from_our_proxy(sent: str | None) -> bool:
    """Whether a request's PROXIED header is this server's secret (scripts/serve.py gives it to the
    app processes and to nginx; compared in constant time). Anyone may send the header itself."""
    secret = os.environ.get(PROXY_SECRET)
    return bool(secret and sent) and hmac.compare_digest(sent.encode(), secret.encode())


def client() -> str:
    """Who is asking: the address our nginx saw (only with its secret), else the socket's peer. A
    request that carries X-Forwarded-For without the secret is "unknown": uvicorn may have taken its
    address from that header (it trusts loopback unless FORWARDED_ALLOW_IPS says otherwise, as
    scripts/serve.py does), and anyone can send it."""
    headers = st.context.headers
    if from_our_proxy(headers.get(PROXIED)):
        return str(headers.get("X-Real-IP") or "unknown")[:64]
    if headers.get("X-Forwarded-For"):
        return "unknown"
    return str(getattr(st.context, "ip_address", None) or "unknown")[:64]


def stop_leading() -> None:
    """This session leads no class any more (it ended it, or the lead moved elsewhere)."""
    for k in (TEACHING, RESUME, LEADER):
        st.session_state.pop(k, None)


def led_elsewhere(code: str) -> None:
    """This session no longer leads ``code`` (its resume key was used elsewhere): it stops leading
    and its panel says so once."""
    stop_leading()
    st.session_state[ELSEWHERE] = code


_COOKIE_JS = """
export default function(component) {
  const { data } = component;
  const secure = location.protocol === 'https:' ? '; Secure' : '';
  document.cookie = data.value === null ? `${data.name}=; path=/; max-age=0; SameSite=Strict`
    : `${data.name}=${data.value}; path=/; max-age=${data.max_age}; SameSite=Strict${secure}`;
}
"""
_cookie = st.components.v2.component("microscope_cookie", js=_COOKIE_JS)


def keep_cookie(name: str, value: str | None, max_age: int, key: str) -> None:
    """This browser keeps ``value`` under ``name`` (None: forgets it); read back by ``cookie`` in
    the next session of this browser (a reload, a new tab)."""
    _cookie(key=key, data={"name": name, "value": value, "max_age": max_age})


def cookie(name: str) -> str:
    """A cookie this browser sent when the session opened ("" if none)."""
    value = st.context.cookies.get(name)
    return value if isinstance(value, str) else ""
