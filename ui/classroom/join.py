"""The join screen (the whole window, for the projector: the class code large, its link, and its QR
code as large as the window allows; Close or Esc goes back to the page) and the join link."""
from __future__ import annotations

import io

import streamlit as st

from ui.classroom import address
from ui.classroom.session import TEACHING

JOIN_SCREEN = "_join_screen"  # the join screen fills the window (app.py draws it instead of the page)


def join_link(url: str, code: str) -> str:
    """The join link: on the address the teacher's browser used, or MICROSCOPE_PUBLIC_URL."""
    return address.link(url, f"class={code}")


def qr_png(text: str, scale: int = 4) -> bytes:
    import segno

    out = io.BytesIO()
    segno.make(text, error="m").save(out, kind="png", scale=scale, border=2)
    return out.getvalue()


JOIN_CSS = """<style>
[data-testid=stSidebar], [data-testid=stSidebarCollapsedControl], header[data-testid=stHeader] { display: none !important; }
[data-testid=stMainBlockContainer] { max-width: 100% !important; padding: 2vh 4vw !important; }
.join-code { font-size: clamp(3rem, 14vh, 10rem); font-weight: 700; letter-spacing: .12em; margin: 0; line-height: 1.1; }
.join-link { font-size: clamp(1.2rem, 3.2vh, 2.4rem); word-break: break-all; margin: .2em 0 .6em; }
</style>"""


_ESC_JS = """
export default function(component) {
  const { setTriggerValue } = component;
  const on = (e) => {
    if (!document.querySelector('.st-key-class_join_close')) {  // the join screen is gone
      window.removeEventListener('keydown', on, true); return;
    }
    if (e.key === 'Escape') { e.preventDefault(); setTriggerValue('esc', Date.now()); }
  };
  if (window.__microscopeJoinEsc) window.removeEventListener('keydown', window.__microscopeJoinEsc, true);
  window.__microscopeJoinEsc = on;
  window.addEventListener('keydown', on, true);
}
"""
_esc = st.components.v2.component("microscope_join_escape", js=_ESC_JS)


def join_screen(url: str) -> None:
    """The whole window for joining, on the projector: the class code large, its link, and its QR
    code as large as the window allows; Close goes back to the page."""
    import html

    code = st.session_state[TEACHING]
    link = join_link(url, code)
    st.html(JOIN_CSS)
    left, right = st.columns([3, 2], vertical_alignment="center")
    with left:
        st.html(f"<p>Join the class: scan the code, or open</p><p class='join-link'>{html.escape(link)}</p>"
                f"<p>Class code</p><p class='join-code'>{html.escape(code)}</p>")
        if problem := address.unreachable(link):
            st.warning(problem, icon=":material/wifi_off:")
        st.button("Close the join screen", key="class_join_close", icon=":material/close:",
                  on_click=st.session_state.pop, args=(JOIN_SCREEN, None))
        _esc(key="class_join_escape", on_esc_change=lambda: st.session_state.pop(JOIN_SCREEN, None))  # Esc: Close
    with right:
        st.image(qr_png(link, scale=16), width="stretch", alt=f"QR code of the class's join link, {link}")
