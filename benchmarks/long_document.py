"""A stranger's longest paste: a ~99,000-character English document through every page.

    python -m benchmarks.long_document [--chars 99000] [--json OUT]

The app's own page scripts in one process (Streamlit's AppTest: the same code a browser session
runs, no browser): Summarize, then each page with its default widgets; a page that asks before
a whole-document analysis (ui.runs.asked) has its Run button clicked. Per step: seconds, and
the peak resident memory over the memory before it (VmHWM reset through /proc/self/clear_refs).
Then the session is dropped and the memory that stays is read (settled RSS, over idle = the
model loaded, before the first Summarize). Budget (issue 34): peak ≤ idle + 1.5 GB, settled ≤
idle + 0.3 GB, no page over 10 s without a progress bar and a Stop.
"""
from __future__ import annotations

import argparse
import gc
import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["summary", "why", "bert_attention", "sentence_encoder", "masks_positions", "heads", "what_if", "learn"]


def document(chars: int = 99_000) -> str:
    """The shipped examples, numbered and repeated, cut at ``chars`` (whole paragraphs)."""
    texts = [p.read_text() for p in sorted((ROOT / "examples").glob("*.txt"))]
    out, n = [], 0
    while n < chars:
        t = f"Part {len(out) + 1}. " + texts[len(out) % len(texts)]
        out.append(t)
        n += len(t) + 2
    return "\n\n".join(out)[:chars]


def status(key: str) -> float:
    """/proc/self/status ``key`` in MB."""
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(key)) / 1024


def reset_peak() -> float:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return status("VmRSS:")


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--chars", type=int, default=99_000)
    p.add_argument("--json", default=str(ROOT / "benchmarks/results/long_document.json"))
    args = p.parse_args(argv)
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.testing.v1 import AppTest

    from ui.resources import release_memory

    init = PagesManager.__init__

    def no_pages_dir(self, *a, **kw):  # as the real server after its first run (tests/test_app.py)
        init(self, *a, **kw)
        PagesManager.uses_pages_directory = False

    PagesManager.__init__ = no_pages_dir

    text = document(args.chars)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).run()
    at.text_area(key="document").set_value((ROOT / "examples/bbc_insurance_bosses.txt").read_text()).run()
    next(b for b in at.button if b.label == "Summarize").click().run()
    for page in PAGES:  # idle = a server that has shown every page once (their modules loaded)
        at.switch_page(f"pages/{page}.py").run()
    gc.collect()
    release_memory()
    idle = status("VmRSS:")
    rows = []

    def step(name, fn):
        before = reset_peak()
        t = time.perf_counter()
        fn()
        rows.append({"step": name, "s": round(time.perf_counter() - t, 2), "peak_over_idle_mb":
                     round(status("VmHWM:") - idle, 1), "peak_over_before_mb": round(status("VmHWM:") - before, 1),
                     "exception": bool(at.exception)})
        print(f"{name:22} {rows[-1]['s']:7.2f} s  peak {rows[-1]['peak_over_idle_mb']:8.1f} MB over idle", flush=True)

    def summarize():
        at.text_area(key="document").set_value(text)
        next(b for b in at.button if b.label == "Summarize").click().run()

    step("summarize", summarize)
    for page in PAGES:
        step(page, lambda: at.switch_page(f"pages/{page}.py").run())
        for b in [b for b in at.button if b.key and b.key.startswith("ask_")]:
            step(f"{page}: {b.label}", lambda: b.click().run())
    del at
    gc.collect()
    release_memory()
    time.sleep(1)
    result = {"chars": len(text), "idle_mb": round(idle, 1),
              "settled_over_idle_mb": round(status("VmRSS:") - idle, 1), "steps": rows,
              "peak_over_idle_mb": max(r["peak_over_idle_mb"] for r in rows)}
    print(f"idle {idle:.0f} MB; peak +{result['peak_over_idle_mb']:.0f} MB; settled "
          f"+{result['settled_over_idle_mb']:.0f} MB after the session is dropped (the server's bounded caches kept)")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
