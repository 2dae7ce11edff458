"""Load test: N browser sessions against one app server, each summarising D different documents.

    python scripts/load_test.py [--sessions 8] [--docs 20] [--data ../shared/data] [--json OUT]

Starts ``streamlit run app.py`` on 127.0.0.1, opens N isolated Chromium contexts (each its own
Streamlit session) and drives them concurrently: paste a document into **Document**, click
**Summarize**, wait until the Summary page shows that document. Every document carries a
unique marker; a session that ever sees another session's marker fails the run. Prints
p50/p95 latency (click → own summary shown) and the server's peak RSS (VmHWM).
"""
from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.common import Server, gather_in_chromium, rss_mb  # noqa: E402
MARKER = re.compile(r"Load-test document (\d+)-(\d+)\b")


def documents(data: Path, n: int) -> list[str]:
    """n different news articles: BBC News Summary (CC0) if the data is there, else the examples."""
    path = data / "bbc_news_summary.jsonl.gz"
    if path.is_file():
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return [json.loads(line)["article"] for _, line in zip(range(n), f)]
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").glob("*.txt"))]
    return [texts[i % len(texts)] for i in range(n)]


async def idle(page, timeout_s: float) -> None:
    """Until Streamlit's "Running…" status widget is gone."""
    await page.wait_for_timeout(200)
    await page.wait_for_function("!document.querySelector('[data-testid=stStatusWidget]')", timeout=timeout_s * 1000)


async def session(browser, url: str, sid: int, docs: list[str], timeout_s: float, after_doc=None) -> list[float]:
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    await page.goto(url)
    box = page.get_by_role("textbox", name="Document", exact=True)
    await box.wait_for(timeout=timeout_s * 1000)
    await idle(page, timeout_s)
    main = page.get_by_test_id("stMain")
    latencies = []
    for d, text in enumerate(docs):
        marker = f"Load-test document {sid}-{d}"
        await box.fill(f"{marker}.\n\n{text}")
        t = time.perf_counter()
        await page.get_by_role("button", name="Summarize").click()
        await main.get_by_text(marker).first.wait_for(timeout=timeout_s * 1000)
        latencies.append(time.perf_counter() - t)
        await idle(page, timeout_s)
        seen = {m.group(0) for m in MARKER.finditer(await main.inner_text())}
        if seen != {marker}:
            raise AssertionError(f"session {sid} document {d} shows {sorted(seen)}, expected only {marker!r}")
        if after_doc:
            after_doc()
    await context.close()
    return latencies


async def drive(url: str, texts: list[list[str]], timeout_s: float, after_doc=None) -> list[list[float]]:
    return await gather_in_chromium(lambda browser: [session(browser, url, s, t, timeout_s, after_doc)
                                                     for s, t in enumerate(texts)])


def run(sessions: int, docs: int, data: Path, timeout_s: float = 120) -> dict:
    pool = documents(data, sessions * docs)
    texts = [pool[s * docs:(s + 1) * docs] for s in range(sessions)]
    rss_trail = []  # server RSS after every finished summary: flat once the cache is full
    with Server(Path(os.environ.get("TMPDIR", "/tmp")) / f"load_test_{os.getpid()}.log") as server:
        t = time.perf_counter()
        per_session = asyncio.run(drive(server.url + "/", texts, timeout_s,
                                        lambda: rss_trail.append(rss_mb(server.proc.pid)["rss_mb"])))
        wall = time.perf_counter() - t
        rss = rss_mb(server.proc.pid)["hwm_mb"]
    lat = sorted(x for s in per_session for x in s)
    return {"sessions": sessions, "docs_per_session": docs, "summaries": len(lat), "wall_s": round(wall, 1),
            "p50_s": round(statistics.median(lat), 2), "p95_s": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 2),
            "max_s": round(lat[-1], 2), "server_peak_rss_mb": round(rss, 1),
            "server_rss_mb_by_tenth": [round(rss_trail[min(len(rss_trail) - 1, len(rss_trail) * i // 10)], 1)
                                       for i in range(1, 11)]}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sessions", type=int, default=8)
    p.add_argument("--docs", type=int, default=20)
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    result = run(args.sessions, args.docs, args.data)
    print(json.dumps(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
