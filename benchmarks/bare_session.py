"""A Streamlit session without a browser: the websocket messages a browser sends, the replies read
and never drawn. It measures what a server can do for many users apart from what their browsers
cost, on a machine too small to run that many Chromiums beside the server (scripts/workshop.py
``--follow --bare N``: a class's students).

Like the browser it opens the page first (through nginx that sets the sticky cookie, which the
websocket then carries), asks for a run with the link's query string, keeps the page it is sent to,
answers ``auto_rerun`` (fragments with ``run_every``) and, as a student following a class, reads
the class's version file every ``every`` seconds and sends the follow component's trigger when it
moved. Widgets keep their values on the server between runs, so a rerun sends only the trigger.
This speaks Streamlit's own (internal) protocol: tested with the Streamlit this project pins.
"""
from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from http.cookiejar import CookieJar

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg


class BareSession:
    """One session on ``url`` (an app or nginx in front of several). ``texts``: every markdown,
    alert or heading text received → when (perf_counter) it first arrived; ``components``: a components-v2
    element's key → (its id, its data)."""

    def __init__(self, url: str, query: str = ""):
        self.url, self.query = url.rstrip("/") + "/", query
        self.page_hash, self.texts, self.components = "", {}, {}
        self.seen = {}  # following a class: version → when its poll first read it

    async def open(self) -> None:
        import websockets

        jar = CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        await asyncio.to_thread(lambda: opener.open(self.url + (f"?{self.query}" if self.query else "")).read())
        self.opener = opener  # the version polls keep the cookies
        cookie = "; ".join(f"{c.name}={c.value}" for c in jar)
        ws_url = self.url.replace("http", "ws", 1) + "_stcore/stream"
        self.ws = await websockets.connect(ws_url, subprotocols=["streamlit"], max_size=2 ** 26,
                                           additional_headers={"Cookie": cookie} if cookie else {})
        self.reader = asyncio.create_task(self._read())
        self.auto: dict[str, asyncio.Task] = {}
        await self.rerun()

    async def rerun(self, widgets: list | None = None, fragment: str = "") -> None:
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string, cs.page_script_hash = self.query, self.page_hash
        if fragment:
            cs.fragment_id, cs.is_auto_rerun = fragment, True
        for w in widgets or []:
            cs.widget_states.widgets.append(w)
        await self.ws.send(msg.SerializeToString())

    async def trigger(self, component_key: str, event: str, value) -> None:
        """What a components-v2 component's ``setTriggerValue(event, value)`` sends."""
        from streamlit.components.v2.bidi_component.main import _make_trigger_id
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        w = WidgetState(id=_make_trigger_id(self.components[component_key][0], "events"))
        w.json_trigger_value = json.dumps([{"event": event, "value": value}])
        await self.rerun([w])

    async def _read(self) -> None:
        async for raw in self.ws:
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind, now = msg.WhichOneof("type"), time.perf_counter()
            if kind == "new_session" and msg.new_session.page_script_hash:
                self.page_hash = msg.new_session.page_script_hash
            elif kind == "navigation" and msg.navigation.page_script_hash:
                self.page_hash = msg.navigation.page_script_hash
            elif kind == "auto_rerun":
                fid, every = msg.auto_rerun.fragment_id, msg.auto_rerun.interval
                if fid not in self.auto:
                    self.auto[fid] = asyncio.create_task(self._every(fid, every))
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                el = msg.delta.new_element
                which = el.WhichOneof("type")
                if which in ("markdown", "alert", "heading"):
                    self.texts.setdefault(getattr(el, which).body, now)
                elif which == "bidi_component":  # its id ends with its key; its data is JSON
                    c = el.bidi_component
                    self.components[c.id.rsplit("-", 1)[-1]] = (c.id, json.loads(c.json) if c.json else None)

    async def _every(self, fragment: str, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            await self.rerun(fragment=fragment)

    async def follow_class(self, code: str) -> None:
        """What the class panel's component does in a student's page (ui/classroom): read the
        class's version file every ``every`` ms of its data; when it moved, trigger ``moved``."""
        data = self.components["class_follow"][1]
        sent = data["version"]
        while True:
            await asyncio.sleep(data["every"] / 1000)
            try:
                v = json.loads(await asyncio.to_thread(self.get, f"app/static/classes/{data['file']}.json"))["v"]
            except (OSError, ValueError, KeyError):
                continue
            self.seen.setdefault(v, time.perf_counter())
            if v != sent:
                sent = v
                await self.trigger("class_follow", "moved", v)

    async def wait_text(self, part: str, timeout_s: float) -> float:
        """When a text holding ``part`` first arrived."""
        deadline = time.perf_counter() + timeout_s
        while time.perf_counter() < deadline:
            for text, t in self.texts.items():
                if part in text:
                    return t
            await asyncio.sleep(0.02)
        raise TimeoutError(f"no text with {part!r} within {timeout_s} s; received: {[t[:60] for t in self.texts]}")

    def get(self, path: str) -> bytes:
        """A plain GET on this session's server (with its cookies), e.g. a static file."""
        with self.opener.open(self.url + path) as r:
            return r.read()

    async def close(self) -> None:
        for task in [self.reader, *self.auto.values()]:
            task.cancel()
        await self.ws.close()
