"""Where one student's server CPU goes: each step of the workshop flow (open → Try an example →
BERT attention → layer 2 by the selector → Why), one student at a time after a warm-up student,
the server's CPU seconds (user + system, /proc) from the action until the page is idle again;
then the same for the files a new browser loads from ``/static/`` (Streamlit's own code), fetched
with urllib, and a repeat of cached layer switches (each a ~1.1 MB view).

    python -m benchmarks.student_steps [--students 3] [--switches 12] [--server-env KEY=VALUE ...]

``--server-env MICROSCOPE_DEFLATE_LEVEL=6`` against the default (1): the websocket's deflate A/B.
"""
from __future__ import annotations

import argparse
import os
import urllib.request
from pathlib import Path

from benchmarks.browser import HEATMAP_DRAWN, enter_document, open_app, open_list, wait_idle
from benchmarks.common import Server, cpu_seconds, launch_chromium, write_json

def student(browser, url: str, pid: int) -> tuple[dict, list[str]]:
    """One student's flow: server CPU-s per step; the /static/ files the browser loaded."""
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    loaded = []
    page.on("requestfinished", lambda r: loaded.append(r.url) if "/static/" in r.url and "/app/" not in r.url else None)
    main, out = page.get_by_test_id("stMain"), {}

    def step(name, action, drawn):
        cpu = cpu_seconds(pid)
        action()
        drawn()
        wait_idle(page)
        out[name] = round(cpu_seconds(pid) - cpu, 3)

    def layer_2():
        main.get_by_test_id("stSelectbox").filter(has_text="Layer").first.click()
        page.get_by_role("option", name="2", exact=True).click()

    nav = lambda name: page.get_by_test_id("stSidebarNav").get_by_text(name, exact=True).click()  # noqa: E731
    step("open", lambda: page.goto(url), lambda: page.get_by_role("button", name="Try an example").wait_for(timeout=120_000))
    step("example", lambda: page.get_by_role("button", name="Try an example").click(),
         lambda: main.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=120_000))
    step("bert_attention", lambda: nav("BERT attention"),
         lambda: page.wait_for_function(HEATMAP_DRAWN, arg="layer 1, head 1", timeout=120_000, polling="raf"))
    step("layer_2", layer_2, lambda: page.wait_for_function(HEATMAP_DRAWN, arg="layer 2, head 1", timeout=120_000, polling="raf"))
    step("why", lambda: nav("Why this summary"),
         lambda: main.get_by_text("Which words moved the score").first.wait_for(timeout=120_000))
    page.context.close()
    return out, loaded


def layer_switches(browser, url: str, pid: int, text: str, n: int) -> float:
    """Server CPU-s per Layer-selector switch once every layer's view is cached (after one round)."""
    page, _ = open_app(browser, url, "bert_attention")
    enter_document(page, text)
    page.get_by_role("button", name="Summarize").click()
    page.wait_for_function(HEATMAP_DRAWN, arg="head 1", timeout=120_000)
    wait_idle(page)
    for rnd in range(2):  # the first round builds each layer's figure; the second is timed
        cpu = cpu_seconds(pid)
        for i in range(n):
            target = str(2 + i % 5) if i % 2 == 0 else "1"
            open_list(page, "Layer")
            page.get_by_role("option", name=target, exact=True).click()
            page.wait_for_function(HEATMAP_DRAWN, arg=f"layer {target}, head 1:", timeout=120_000)
            wait_idle(page)
    page.close()
    return round((cpu_seconds(pid) - cpu) / n, 4)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--students", type=int, default=3)
    p.add_argument("--switches", type=int, default=12)
    p.add_argument("--server-env", nargs="*", default=[], metavar="KEY=VALUE")
    p.add_argument("--json", default=None, help="default benchmarks/results/student_steps.json")
    args = p.parse_args(argv)

    from playwright.sync_api import sync_playwright

    from benchmarks.model import document
    from model.summarizer import Summarizer

    text = document(Summarizer.load(device="cpu"), 512)
    env = dict(kv.split("=", 1) for kv in args.server_env)
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            with Server(Path(os.environ.get("TMPDIR", "/tmp")) / f"student_steps_{os.getpid()}.log", env=env) as server:
                pid, url = server.proc.pid, server.url
                student(browser, url, pid)  # warm-up: the model loads, the example is cached
                runs, loaded = [], []
                for _ in range(args.students):
                    out, loaded = student(browser, url, pid)
                    runs.append(out)
                    print(out, flush=True)
                cpu, size = cpu_seconds(pid), 0
                for u in loaded:  # as Chromium asks: bytes as sent (gzipped where the server gzips)
                    asked = urllib.request.Request(u, headers={"Accept-Encoding": "gzip, deflate, br"})
                    size += len(urllib.request.urlopen(asked).read())
                static = {"files": len(loaded), "bytes": size, "server_cpu_s": round(cpu_seconds(pid) - cpu, 3)}
                print("a new browser's /static/ files, fetched alone:", static, flush=True)
                switch = layer_switches(browser, url, pid, text, args.switches)
                print("server CPU-s per cached layer switch:", switch, flush=True)
        finally:
            browser.close()
    result = {"server_env": env, "students": runs, "static": static, "cached_layer_switch_cpu_s": switch}
    write_json("student_steps", result, args.json)
    return result


if __name__ == "__main__":
    main()
