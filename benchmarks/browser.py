"""The real app in a real browser: time to the first heatmap, to switch head, bytes on the wire,
server memory.

    python -m benchmarks.browser [--runs 5] [--rss-docs 10] [--model NAME=BACKBONE_DIR,CHECKPOINT] [--pause S] [--profile N] [--json OUT]

Starts ``streamlit run app.py`` on a free local port and drives Debian's Chromium (headless)
with Playwright. Each run is a fresh browser session on the BERT attention page with a
~512-token document (the one of ``benchmarks.model``, behind a different 2-word first line so
the trace cache misses and BERT really runs; 2-word sentences are not fed to the model):

- click → first heatmap: click Summarize until the token heatmap is drawn (a ``.js-plotly-plot``
  whose data has a heatmap trace and whose heatmap image is in the DOM, then two animation frames);
- head switch: click the figure's head button "2" until the heatmap titled "head 2" is drawn
  (in the browser: a preview on windows past 160 tokens), then until "head 2:" (its exact
  weights, which the page asks the server for) is drawn; and whether the chart's div survived;
- layer button: click the figure's layer button "2" until "layer 2, head 2" (a preview) is drawn,
  then until its exact map from the server ("layer 2, head 2:");
- layer switch: pick layer 3 in the Layer selector until "layer 3" is drawn (the chart's layer
  button pressed in the page: a preview), then until "layer 3, head 2:" (the exact map, a new
  figure from the selector's rerun); over the emulated link below: layer 2, the first drawn;
- all layers × heads: click that view until its map (one mosaic of L × H tiles) is drawn;
- the split of each, by the server's clock (``benchmarks/server_clock``): "request in at" (the
  click in the browser, until the server has the rerun request), "chart out at" (then the
  server's rerun, until it queues its largest message, the chart) and "then drawn in" (the rest:
  the network, Streamlit's render of the rerun's messages in the page, the chart's JSON, Plotly,
  layout, paint); and "page had it at": the action's first websocket frame out to the chart's in
  by the page's DevTools events (CDP), which Chromium stamps on the page's main thread, so a page
  busy rendering the messages before the chart gets the chart's late (Playwright's own frame
  events later still: benchmarks/HISTORY.md, sessions 39-40);
- websocket bytes received by the page during each of those (CDP ``Network.webSocketFrameReceived``), and
  the server's CPU seconds (user + system, /proc) from the action until the app is idle again;
- the same click → first heatmap and layer switch over an emulated 20 Mbit/s down, 5 Mbit/s up,
  40 ms link (Chromium DevTools ``Network.emulateNetworkConditions``), one more fresh session per run.

``--profile N``: instead, N fresh sessions' click → first heatmap under Chromium's CPU profiler
(CDP ``Profiler``, a sample every 200 µs; it slows the page): the browser's share (after the chart's
message arrived) as milliseconds a run per function (self time; the script's file and column),
the largest first: where the browser's time goes.

Medians over ``--runs`` (after one warm-up run). Then a fresh server summarizes ``--rss-docs``
documents in one session (the trace cache keeps the last 8) and the server's VmRSS / VmHWM
(peak) are read from /proc/<pid>/status.
"""
from __future__ import annotations

import argparse
import base64
import os
import time
import zlib
from pathlib import Path

from benchmarks.common import Server, cpu_seconds, launch_chromium, median, rss_mb, write_json

HEATMAP_DRAWN = """(title) => {
  for (const gd of document.querySelectorAll('.js-plotly-plot')) {
    const data = gd._fullData || [];
    if (!data.some(t => t.type === 'heatmap')) continue;
    if (!gd.querySelector('.heatmaplayer image')) continue;
    // drawn for the user: Streamlit first plots a chart hidden, before it knows its width
    if (gd.style.visibility === 'hidden' || !gd._fullLayout || gd._fullLayout.width < 150) continue;
    const t = gd.querySelector('.gtitle');
    if (title && !(t && t.textContent.includes(title))) continue;
    return true;
  }
  return false;
}"""
N_HEATMAPS = """() => { let n = 0; for (const gd of document.querySelectorAll('.js-plotly-plot'))
  n += gd.querySelectorAll('.heatmaplayer image').length; return n; }"""
HEATMAP_DIV = "[...document.querySelectorAll('.js-plotly-plot')].find(g => (g._fullData || []).some(t => t.type === 'heatmap'))"
MARK = f"() => {{ {HEATMAP_DIV}.__benchMark = 1; }}"
SAME_DIV = f"() => {HEATMAP_DIV}.__benchMark === 1"  # false: the chart was remounted, not updated
PAINTED = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
NETWORK = dict(offline=False, latency=40, downloadThroughput=20e6 / 8, uploadThroughput=5e6 / 8)  # bytes/s


class Bytes:
    """Websocket bytes received by one page since the last ``reset`` (the messages, as the page
    gets them, from Chromium's DevTools protocol), the same deflated as the server's
    permessage-deflate sends them when server.enableWebsocketCompression is on (uvicorn's settings:
    12-bit window, memLevel 5, context kept across messages; CDP shows frames decompressed, so this
    is recomputed here), and
    ``server_s``: seconds from the first frame the page sent to the largest frame (the chart) it
    received, by Chromium's network clock (CDP ``Network.webSocketFrameSent/Received``)."""

    def __init__(self, cdp):
        self.n, self.wire, self._sent, self._big = 0, 0, None, (0, None)
        self._deflate = zlib.compressobj(wbits=-12, memLevel=5)
        cdp.on("Network.webSocketFrameSent", self._left)
        cdp.on("Network.webSocketFrameReceived", self._arrived)
        cdp.send("Network.enable")

    def _left(self, e) -> None:
        if self._sent is None and e["response"]["opcode"] in (1, 2):  # a message, not a ping's pong
            self._sent = e["timestamp"]

    def _arrived(self, e) -> None:
        frame = e["response"]
        data = base64.b64decode(frame["payloadData"]) if frame["opcode"] == 2 else frame["payloadData"].encode()
        self.n += len(data)
        self.wire += len(self._deflate.compress(data) + self._deflate.flush(zlib.Z_SYNC_FLUSH)) - 4
        if self._sent is not None and len(data) > self._big[0]:
            self._big = (len(data), e["timestamp"])

    @property
    def server_s(self) -> float | None:
        return None if self._big[1] is None else self._big[1] - self._sent

    def reset(self) -> None:
        self.n, self.wire, self._sent, self._big = 0, 0, None, (0, None)


def server_clock(env: dict, path: Path) -> dict:
    """``env`` for a server that writes its clock to ``path`` (benchmarks/server_clock)."""
    here = str(Path(__file__).with_name("server_clock"))
    return {**env, "MICROSCOPE_BENCH_CLOCK": str(path),
            "PYTHONPATH": os.pathsep.join(p for p in (here, env.get("PYTHONPATH", os.environ.get("PYTHONPATH"))) if p)}


def split(clock: list[tuple[float, str, str]], run: dict) -> None:
    """Each step of ``run`` (its ``_windows``: wall-clock start and drawn) split by the server's
    ``clock``: ``{step}_request_in_s`` (the action until the server has the rerun request),
    ``{step}_chart_out_s`` (until it queued its largest message, the chart), ``{step}_in_browser_s``
    (then until drawn)."""
    for name, (start, end) in run.pop("_windows").items():
        got = next((t for t, kind, what in clock if kind == "in" and what == "rerun_script" and t >= start), None)
        out = [(int(n), t) for t, kind, n in clock if kind == "out" and got is not None and got <= t <= end]
        if not out:
            continue
        chart = max(out)[1]
        run.update({f"{name}_request_in_s": round(got - start, 3), f"{name}_chart_out_s": round(chart - start, 3),
                    f"{name}_in_browser_s": round(end - chart, 3)})


def read_clock(path: Path) -> list[tuple[float, str, str]]:
    with open(path, encoding="utf-8") as f:
        return [(float(t), kind, what) for t, kind, what in (line.split() for line in f if line.count(" ") == 2)]


def wait_idle(page, timeout_s: float = 120, quiet_s: float = 0.4) -> None:
    """Until Streamlit's "running" status widget has been absent for ``quiet_s``."""
    deadline, quiet_since = time.time() + timeout_s, None
    while time.time() < deadline:
        running = page.query_selector('[data-testid="stStatusWidget"]') is not None
        if running:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.time()
        elif time.time() - quiet_since >= quiet_s:
            return
        time.sleep(0.05)
    raise TimeoutError("the app did not become idle")


def timed(page, bytes_: Bytes, action, title: str | None, timeout_s: float) -> tuple[float, float | None]:
    """Seconds from ``action()`` to a heatmap (titled ``title``) drawn, and the server's share
    (``Bytes.server_s``: the action's first frame out to the chart's frame in). Meanwhile ``bytes_``
    counts the websocket bytes (``n`` as received, ``wire`` deflated)."""
    bytes_.reset()
    t = time.perf_counter()
    action()
    page.wait_for_function(HEATMAP_DRAWN, arg=title, timeout=timeout_s * 1000, polling="raf")
    page.evaluate(PAINTED)
    return time.perf_counter() - t, bytes_.server_s


def open_app(browser, url: str, path: str = "", throttle: bool = False):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    cdp = page.context.new_cdp_session(page)
    counter = Bytes(cdp)  # (enables CDP's Network domain)
    if throttle:
        cdp.send("Network.emulateNetworkConditions", NETWORK)
    page.goto(f"{url}/{path}", timeout=120_000)
    page.get_by_role("button", name="Summarize").wait_for(timeout=180_000)
    # the sidebar's blank chart is drawn once plotly.js (4.8 MB) has arrived (ui.figures.preload_plotly):
    # a user is still pasting then; over a slow link that download is seconds
    page.locator('[data-testid="stSidebar"] .js-plotly-plot').first.wait_for(state="attached", timeout=180_000)
    wait_idle(page)
    return page, counter


def enter_document(page, text: str) -> None:
    box = page.get_by_role("textbox", name="Document", exact=True)
    box.fill(text)
    box.press("Tab")  # Streamlit commits a text area on blur: let that rerun finish first
    wait_idle(page)


def pick(page, label: str, option: str) -> None:
    open_list(page, label)
    page.get_by_role("option", name=option, exact=True).click()


def open_list(page, label: str) -> None:
    """Open the page's selectbox ``label`` (its options are then listed)."""
    page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').filter(has_text=label).first.click()


def head_button(page, label: str, menu: str = "head") -> None:
    """Click the token heatmap's in-figure head button ``label`` (a Plotly updatemenu button, named
    "Show head 2", "Show mean" by ui/a11y.js), or its layer button (``menu="layer"``)."""
    name = f"{menu} {label}" if label.isdigit() else label
    page.locator(f'.updatemenu-button[aria-label="Show {name}"]').first.click()


def one_run(browser, url: str, text: str, timeout_s: float, pid: int, throttle: bool = False, pause: float = 0) -> dict:
    """One fresh session: each step's seconds, websocket bytes, server CPU seconds (until idle).
    ``pause``: seconds between the pasted document's rerun and the click on Summarize."""
    page, counter = open_app(browser, url, "bert_attention", throttle)
    windows = {}
    out = {"_windows": windows}

    def step(name, action, title, exact=None, served=True):
        """``exact``: a title drawn after ``title`` (the map from the server after a preview), timed
        from the same action: ``{name}_exact_s``, and the split, bytes and CPU are that one's.
        ``served``: False where the map timed is drawn in the page alone (a preview): no split."""
        cpu, t, wall = cpu_seconds(pid), time.perf_counter(), time.time()
        s, srv = timed(page, counter, action, title, timeout_s)
        out[f"{name}_s"] = round(s, 3)
        if exact:
            page.wait_for_function(HEATMAP_DRAWN, arg=exact, timeout=timeout_s * 1000, polling="raf")
            page.evaluate(PAINTED)
            name, s = f"{name}_exact", time.perf_counter() - t
            out[f"{name}_s"] = round(s, 3)
        if served or exact:
            windows[name] = (wall, wall + s)  # split by the server's clock (``split``) once the runs are over
        wait_idle(page)
        out.update({f"{name}_page_had_chart_s": None if srv is None else round(srv, 3),
                    f"{name}_ws_bytes": counter.n, f"{name}_wire_bytes": counter.wire,
                    f"{name}_server_cpu_s": round(cpu_seconds(pid) - cpu, 3)})

    try:
        enter_document(page, text)
        time.sleep(pause)
        step("click_to_first_heatmap", lambda: page.get_by_role("button", name="Summarize").click(), "head 1")
        if not throttle:  # the button shows a preview at once; the relay brings the exact map ("head 2:")
            page.evaluate(MARK)
            cpu, t = cpu_seconds(pid), time.perf_counter()
            counter.reset()
            head_button(page, "2")
            for name, title in (("head_switch", "head 2"), ("head_exact", "head 2:")):
                page.wait_for_function(HEATMAP_DRAWN, arg=title, timeout=timeout_s * 1000, polling="raf")
                page.evaluate(PAINTED)
                out[f"{name}_s"] = round(time.perf_counter() - t, 3)
            out["head_switch_remounted_chart"] = not page.evaluate(SAME_DIV)
            wait_idle(page)
            out.update(head_exact_ws_bytes=counter.n, head_exact_wire_bytes=counter.wire,
                       head_exact_server_cpu_s=round(cpu_seconds(pid) - cpu, 3))
            # the figure's layer button: head 2 on layer 2 as a preview at once, then exact from the server
            cpu, t = cpu_seconds(pid), time.perf_counter()
            counter.reset()
            head_button(page, "2", menu="layer")
            for name, title in (("layer_button", "layer 2, head 2"), ("layer_exact", "layer 2, head 2:")):
                page.wait_for_function(HEATMAP_DRAWN, arg=title, timeout=timeout_s * 1000, polling="raf")
                page.evaluate(PAINTED)
                out[f"{name}_s"] = round(time.perf_counter() - t, 3)
            wait_idle(page)
            out.update(layer_exact_ws_bytes=counter.n, layer_exact_wire_bytes=counter.wire,
                       layer_exact_server_cpu_s=round(cpu_seconds(pid) - cpu, 3))
        open_list(page, "Layer")  # the switch is the choice: timed from the option's click
        target = "3" if not throttle else "2"  # a layer not shown yet
        step("layer_switch", lambda: page.get_by_role("option", name=target, exact=True).click(), f"layer {target}",
             None if throttle else f"layer {target}, head 2:", served=False)  # the preview at once, as the layer button's
        if not throttle:
            step("all_layers_heads", lambda: page.locator('[data-testid="stMain"] button').filter(
                has_text="All layers × heads").first.click(), "All ")
            out["all_layers_heads_heatmaps"] = page.evaluate(N_HEATMAPS)
        return out
    finally:
        page.close()


def profile_first_heatmap(browser, url: str, texts: list[str], timeout_s: float) -> dict[str, float]:
    """Milliseconds a run of the browser's self time per function, between the chart's message
    and the first heatmap drawn, over fresh sessions summarizing ``texts``."""
    import collections

    spent = collections.Counter()
    for text in texts:
        page, counter = open_app(browser, url, "bert_attention")
        enter_document(page, text)
        cdp = page.context.new_cdp_session(page)
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 200})
        cdp.send("Profiler.start")
        s, chart_in = timed(page, counter, lambda: page.get_by_role("button", name="Summarize").click(), "head 1", timeout_s)
        prof = cdp.send("Profiler.stop")["profile"]
        page.close()
        frames = {n["id"]: n["callFrame"] for n in prof["nodes"]}
        t, start = prof["startTime"], prof["endTime"] - (s - (chart_in or 0)) * 1e6  # µs: the browser's share
        for node, dt in zip(prof["samples"], prof["timeDeltas"]):
            t += dt
            if t >= start:
                f = frames[node]
                spent[f"{f['functionName'] or '(anonymous)'} {f['url'].rsplit('/', 1)[-1]}:{f['columnNumber']}"] += dt / 1e3
    return {k: round(v / len(texts), 1) for k, v in spent.most_common(25)}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--rss-docs", type=int, default=10, help="documents summarized before reading the RSS")
    p.add_argument("--tokens", type=int, default=512)
    p.add_argument("--timeout", type=float, default=120, help="seconds to wait for one heatmap")
    p.add_argument("--pause", type=float, default=0, help="seconds from the pasted document's rerun to the click on "
                   "Summarize (a user who reads it over first; the app summarizes it meanwhile: ui.runs.ahead)")
    p.add_argument("--server-env", nargs="*", default=[], metavar="KEY=VALUE",
                   help="extra environment for the streamlit server, e.g. OMP_WAIT_POLICY=PASSIVE")
    p.add_argument("--model", metavar="NAME=BACKBONE_DIR[,CHECKPOINT]",
                   help="start the app with this model (streamlit run app.py -- --model …; its default then)")
    p.add_argument("--profile", type=int, default=0, metavar="N",
                   help="only profile N fresh sessions' first heatmap in the browser (CDP), and print where its time went")
    p.add_argument("--json", default=None, help="default benchmarks/results/browser.json")
    args = p.parse_args(argv)

    from playwright.sync_api import sync_playwright

    from benchmarks.model import document
    from model.load import parse_model_spec
    from model.summarizer import Summarizer

    spec = parse_model_spec(args.model) if args.model else None
    summarizer = Summarizer.load(spec.backbone, spec.checkpoint, device="cpu") if spec else Summarizer.load(device="cpu")
    base = document(summarizer, args.tokens)
    app_args = ("--model", args.model) if args.model else ()
    tokens = len(summarizer.trace(base).tokens)
    del summarizer
    variant = lambda i: f"Run {i}.\n{base}"  # noqa: E731  2 words: shown, not fed to BERT

    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_streamlit_{os.getpid()}.log"
    clock = log.with_name(f"bench_server_clock_{os.getpid()}.log")
    runs, slow, rss = [], [], {}
    env = dict(kv.split("=", 1) for kv in args.server_env)
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            with Server(log, env=server_clock(env, clock), app_args=app_args) as server:
                # first session: app.py must run once before a page URL is opened directly (otherwise
                # Streamlit treats pages/ as a legacy MPA-v1 folder and runs the page without app.py)
                page, _ = open_app(browser, server.url)
                page.close()
                pid = server.proc.pid
                if args.profile:
                    one_run(browser, server.url, variant(-1), args.timeout, pid)  # warm
                    spent = profile_first_heatmap(browser, server.url, [variant(200 + i) for i in range(args.profile)],
                                                  args.timeout)
                    print(f"the browser's share of click -> first heatmap, ms a run (self time; {args.profile} sessions, profiled):")
                    for k, v in spent.items():
                        print(f"{v:8.1f}  {k}")
                    result = {"tokens": tokens, "sessions": args.profile, "browser_self_ms_per_run": spent}
                    write_json("browser_profile", result, args.json)
                    clock.unlink(missing_ok=True)
                    return result
                warm = one_run(browser, server.url, variant(-1), args.timeout, pid, pause=args.pause)
                print("warm-up", warm, flush=True)
                for i in range(args.runs):
                    runs.append(one_run(browser, server.url, variant(i), args.timeout, pid, pause=args.pause))
                    print(f"run {i + 1}", runs[-1], flush=True)
                    slow.append(one_run(browser, server.url, variant(50 + i), args.timeout, pid, throttle=True,
                                        pause=args.pause))
                    print(f"run {i + 1}, 20 Mbit/s", slow[-1], flush=True)
                rss["after_timed_runs"] = rss_mb(server.proc.pid)
            with Server(log, env=env, app_args=app_args) as server:  # memory: a fresh server, the model + N documents
                page, counter = open_app(browser, server.url)
                rss["after_model_load"] = rss_mb(server.proc.pid)
                page.close()
                page, counter = open_app(browser, server.url, "bert_attention")
                t = time.perf_counter()
                for i in range(args.rss_docs):
                    enter_document(page, variant(100 + i))
                    timed(page, counter, lambda: page.get_by_role("button", name="Summarize").click(), "head 1",
                          args.timeout)
                    wait_idle(page)
                rss[f"after_{args.rss_docs}_documents"] = rss_mb(server.proc.pid)
                rss["seconds_for_documents"] = round(time.perf_counter() - t, 1)
                page.close()
        finally:
            browser.close()
    if clock.exists():
        server_times = read_clock(clock)
        clock.unlink()
        for r in [warm, *runs, *slow]:
            split(server_times, r)

    keys = [k for k in runs[0] if k not in ("all_layers_heads_heatmaps", "head_switch_remounted_chart")] if runs else []
    med = {k: median([r.get(k) for r in runs]) for k in keys}
    slow_med = {k: median([r.get(k) for r in slow]) for k in slow[0]} if slow else {}
    final = rss.get(f"after_{args.rss_docs}_documents", {})
    result = {"model": args.model or "shipped", "tokens": tokens, "runs": args.runs, "pause_s": args.pause, "server_env": env, "median": med, "all_runs": runs, "warm_up": warm,
              "throttled_median": slow_med, "throttled_runs": slow, "network": NETWORK,
              "head_switch_remounted_chart": [r["head_switch_remounted_chart"] for r in runs],
              "server_memory_mb": rss, "rss_mb": final.get("rss_mb"), "rss_hwm_mb": final.get("hwm_mb"),
              "click_to_first_heatmap_s": med.get("click_to_first_heatmap_s"),
              "head_switch_s": med.get("head_switch_s"), "layer_button_s": med.get("layer_button_s"),
              # where the first heatmap's time goes: the server's run until the chart's message, then the browser
              "first_heatmap_split": {"request_in_s": med.get("click_to_first_heatmap_request_in_s"),
                                      "chart_out_s": med.get("click_to_first_heatmap_chart_out_s"),
                                      "browser_s": med.get("click_to_first_heatmap_in_browser_s"),
                                      "page_had_chart_s": med.get("click_to_first_heatmap_page_had_chart_s"),
                                      "server_cpu_s": med.get("click_to_first_heatmap_server_cpu_s")},
              "bert_page_ws_bytes": (int(med["click_to_first_heatmap_ws_bytes"])
                                     if med.get("click_to_first_heatmap_ws_bytes") else None)}
    print(f"\n{tokens}-token document, median of {args.runs} fresh sessions (Chromium headless, server on 127.0.0.1)")
    print("split by the server's clock: the request in at, the chart out at, then drawn in; and when the page's "
          "main thread had the chart (CDP)")
    print(f"{'step':40} {'seconds':>8} {'request in':>10} {'chart out':>9} {'then drawn':>10} {'page had':>8} "
          f"{'ws KB received':>15} {'deflated KB':>11} {'server CPU s':>12}")
    rows = [("click Summarize -> first heatmap", "click_to_first_heatmap", med),
            ("head 1 -> 2 (button: preview)", "head_switch", med),
            ("head 1 -> 2 (exact, from the server)", "head_exact", med),
            ("layer 1 -> 2 (layer button: preview)", "layer_button", med),
            ("layer 1 -> 2 (exact, from the server)", "layer_exact", med),
            ("layer 2 -> 3 (Layer selector: preview)", "layer_switch", med),
            ("layer 2 -> 3 (Layer selector, exact)", "layer_switch_exact", med),
            (f"-> all layers x heads ({runs[0]['all_layers_heads_heatmaps'] if runs else '?'} maps)",
             "all_layers_heads", med),
            ("20 Mbit/s: click -> first heatmap", "click_to_first_heatmap", slow_med),
            ("20 Mbit/s: layer 1 -> 2", "layer_switch", slow_med)]
    for name, k, m in rows:
        print(f"{name:40} {m.get(k + '_s')!s:>8} {m.get(k + '_request_in_s')!s:>10} {m.get(k + '_chart_out_s')!s:>9} "
              f"{m.get(k + '_in_browser_s')!s:>10} {m.get(k + '_page_had_chart_s')!s:>8} "
              f"{(m.get(k + '_ws_bytes') or 0) / 1024:>15.1f} {(m.get(k + '_wire_bytes') or 0) / 1024:>11.1f} "
              f"{m.get(k + '_server_cpu_s')!s:>12}")
    for k, v in rss.items():
        print(f"server {k}: {v}")
    write_json("browser", result, args.json)
    return result


if __name__ == "__main__":
    main()
