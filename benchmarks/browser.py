"""The real app in a real browser: time to the first heatmap, to switch head, bytes on the wire,
server memory.

    python -m benchmarks.browser [--runs 5] [--rss-docs 10] [--json OUT]

Starts ``streamlit run app.py`` on a free local port and drives Debian's Chromium (headless)
with Playwright. Each run is a fresh browser session on the BERT attention page with a
~512-token document (the one of ``benchmarks.model``, behind a different 2-word first line so
the trace cache misses and BERT really runs; 2-word sentences are not fed to the model):

- click → first heatmap: click Summarize until the token heatmap is drawn (a ``.js-plotly-plot``
  whose data has a heatmap trace and whose heatmap image is in the DOM, then two animation frames);
- head switch: click the figure's head button "2" until the heatmap titled "head 2" is drawn
  (in the browser, no server round trip), and whether the chart's div survived (updated in place)
  or was remounted; then a round trip to the server for comparison: pick layer 2 in the Layer
  selector until "layer 2" is drawn (a new figure, all heads of layer 2);
- all layers × heads: click that view until its 72 small heatmaps are drawn;
- websocket bytes received by the page during each of those (Playwright ``framereceived``).

Medians over ``--runs`` (after one warm-up run). Then a fresh server summarizes ``--rss-docs``
documents in one session (the trace cache keeps the last 8) and the server's VmRSS / VmHWM
(peak) are read from /proc/<pid>/status.
"""
from __future__ import annotations

import argparse
import os
import re
import time
from pathlib import Path

from benchmarks.common import Server, launch_chromium, median, rss_mb, write_json

HEATMAP_DRAWN = """(title) => {
  for (const gd of document.querySelectorAll('.js-plotly-plot')) {
    const data = gd._fullData || [];
    if (!data.some(t => t.type === 'heatmap')) continue;
    if (!gd.querySelector('.heatmaplayer image')) continue;
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


class Bytes:
    """Websocket bytes received by one page since the last ``reset``, and when the largest
    frame (the chart) arrived."""

    def __init__(self, page):
        self.n, self.big, self.big_at = 0, 0, None
        page.on("websocket", lambda ws: ws.on("framereceived", self._add))

    def _add(self, payload):
        n = len(payload) if isinstance(payload, (bytes, bytearray)) else len(payload.encode())
        self.n += n
        if n > self.big:
            self.big, self.big_at = n, time.perf_counter()

    def reset(self) -> None:
        self.n, self.big, self.big_at = 0, 0, None


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


def timed(page, bytes_: Bytes, action, title: str | None, timeout_s: float) -> tuple[float, int, float | None]:
    """Seconds and websocket bytes from ``action()`` to a heatmap (titled ``title``) drawn, and
    the seconds until the largest websocket frame (the chart's spec) arrived: the server's share."""
    bytes_.reset()
    t = time.perf_counter()
    action()
    page.wait_for_function(HEATMAP_DRAWN, arg=title, timeout=timeout_s * 1000, polling="raf")
    page.evaluate(PAINTED)
    done = time.perf_counter()
    return done - t, bytes_.n, (bytes_.big_at - t) if bytes_.big_at and bytes_.big_at <= done else None


def open_app(browser, url: str, path: str = ""):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    counter = Bytes(page)
    page.goto(f"{url}/{path}", timeout=120_000)
    page.get_by_role("button", name="Summarize").wait_for(timeout=180_000)
    wait_idle(page)
    return page, counter


def enter_document(page, text: str) -> None:
    box = page.locator('[data-testid="stSidebar"] textarea')
    box.fill(text)
    box.press("Tab")  # Streamlit commits a text area on blur: let that rerun finish first
    wait_idle(page)


def pick(page, label: str, option: str) -> None:
    page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').filter(has_text=label).first.click()
    page.get_by_role("option", name=option, exact=True).click()


def head_button(page, label: str) -> None:
    """Click the token heatmap's in-figure head button ``label`` (Plotly updatemenu)."""
    page.locator(".updatemenu-button").filter(has_text=re.compile(f"^{label}$")).first.click()


def one_run(browser, url: str, text: str, timeout_s: float) -> dict:
    page, counter = open_app(browser, url, "bert_attention")
    try:
        enter_document(page, text)
        click_s, click_b, click_srv = timed(page, counter, lambda: page.get_by_role("button", name="Summarize").click(),
                                 "head 1", timeout_s)
        wait_idle(page)
        page.evaluate(MARK)
        head_s, head_b, head_srv = timed(page, counter, lambda: head_button(page, "2"), "head 2", timeout_s)
        remounted = not page.evaluate(SAME_DIV)
        wait_idle(page)
        layer_s, layer_b, layer_srv = timed(page, counter, lambda: pick(page, "Layer", "2"), "layer 2", timeout_s)
        wait_idle(page)
        all_s, all_b, all_srv = timed(page, counter, lambda: page.locator('[data-testid="stMain"] button').filter(has_text="All layers × heads").first.click(),
                             "All ", timeout_s)
        wait_idle(page)
        r = lambda x: None if x is None else round(x, 3)  # noqa: E731
        return {"click_to_first_heatmap_s": r(click_s), "click_chart_received_s": r(click_srv),
                "click_ws_bytes": click_b,
                "head_switch_s": r(head_s), "head_chart_received_s": r(head_srv), "head_switch_ws_bytes": head_b,
                "head_switch_remounted_chart": remounted,
                "layer_switch_s": r(layer_s), "layer_chart_received_s": r(layer_srv), "layer_switch_ws_bytes": layer_b,
                "all_layers_heads_s": r(all_s), "all_chart_received_s": r(all_srv),
                "all_layers_heads_ws_bytes": all_b,
                "all_layers_heads_heatmaps": page.evaluate(N_HEATMAPS)}
    finally:
        page.close()


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--rss-docs", type=int, default=10, help="documents summarized before reading the RSS")
    p.add_argument("--tokens", type=int, default=512)
    p.add_argument("--timeout", type=float, default=120, help="seconds to wait for one heatmap")
    p.add_argument("--server-env", nargs="*", default=[], metavar="KEY=VALUE",
                   help="extra environment for the streamlit server, e.g. OMP_WAIT_POLICY=PASSIVE")
    p.add_argument("--json", default=None, help="default benchmarks/results/browser.json")
    args = p.parse_args(argv)

    from playwright.sync_api import sync_playwright

    from benchmarks.model import document
    from model.summarizer import Summarizer

    summarizer = Summarizer.load(device="cpu")
    base = document(summarizer, args.tokens)
    tokens = len(summarizer.trace(base).tokens)
    del summarizer
    variant = lambda i: f"Run {i}.\n{base}"  # noqa: E731  2 words: shown, not fed to BERT

    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_streamlit_{os.getpid()}.log"
    runs, rss = [], {}
    env = dict(kv.split("=", 1) for kv in args.server_env)
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            with Server(log, env=env) as server:
                # first session: app.py must run once before a page URL is opened directly (otherwise
                # Streamlit treats pages/ as a legacy MPA-v1 folder and runs the page without app.py)
                page, _ = open_app(browser, server.url)
                page.close()
                warm = one_run(browser, server.url, variant(-1), args.timeout)
                print("warm-up", warm, flush=True)
                for i in range(args.runs):
                    runs.append(one_run(browser, server.url, variant(i), args.timeout))
                    print(f"run {i + 1}", runs[-1], flush=True)
                rss["after_timed_runs"] = rss_mb(server.proc.pid)
            with Server(log, env=env) as server:  # memory: a fresh server, the model + N documents
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

    keys = [k for k in runs[0] if k not in ("all_layers_heads_heatmaps", "head_switch_remounted_chart")] if runs else []
    med = {k: median([r[k] for r in runs]) for k in keys}
    final = rss.get(f"after_{args.rss_docs}_documents", {})
    result = {"tokens": tokens, "runs": args.runs, "server_env": env, "median": med, "all_runs": runs, "warm_up": warm,
              "head_switch_remounted_chart": [r["head_switch_remounted_chart"] for r in runs],
              "server_memory_mb": rss, "rss_mb": final.get("rss_mb"), "rss_hwm_mb": final.get("hwm_mb"),
              "click_to_first_heatmap_s": med.get("click_to_first_heatmap_s"),
              "head_switch_s": med.get("head_switch_s"),
              "bert_page_ws_bytes": int(med["click_ws_bytes"]) if med.get("click_ws_bytes") else None}
    print(f"\n{tokens}-token document, median of {args.runs} fresh sessions (Chromium headless, server on 127.0.0.1)")
    print(f"{'step':36} {'seconds':>8} {'chart in at s':>13} {'ws KB received':>15}")
    for name, s, c, b in [("click Summarize -> first heatmap", "click_to_first_heatmap_s", "click_chart_received_s",
                           "click_ws_bytes"),
                          ("head 1 -> 2 (button in the figure)", "head_switch_s", "head_chart_received_s",
                           "head_switch_ws_bytes"),
                          ("layer 1 -> 2 (Layer selector, server)", "layer_switch_s", "layer_chart_received_s",
                           "layer_switch_ws_bytes"),
                          ("-> all layers x heads (72 maps)", "all_layers_heads_s", "all_chart_received_s",
                           "all_layers_heads_ws_bytes")]:
        print(f"{name:36} {med.get(s)!s:>8} {med.get(c)!s:>13} {(med.get(b) or 0) / 1024:>15.1f}")
    for k, v in rss.items():
        print(f"server {k}: {v}")
    write_json("browser", result, args.json)
    return result


if __name__ == "__main__":
    main()
