"""Which parts of the one-head token heatmap cost browser time? Plotly alone, no Streamlit.

    python -m benchmarks.plotly_ab [--tokens 512] [--reps 3] [--json OUT]

Builds ``viz.attention.token_heatmap`` (the BERT attention page's default view) for heads 1–6
of layer 1 on a ~512-token document, plus variants of it, and times in headless Chromium a
``Plotly.newPlot`` of head 1 (a first chart), ``Plotly.react`` to heads 2–6 (a new figure
without remounting) and the figure's own head buttons (``Plotly.update``: a head switch in the
browser), each until two animation frames have passed. plotly.js is the one bundled
with the plotly Python package (Streamlit bundles its own build of the same major version).

Then, in ``--fresh`` new pages each, the first ``newPlot`` of the map as the app sends it
(``ui.chart.encode``) after the sidebar's blank chart alone (a page that has drawn nothing else,
as a session's first Summarize found it) and after the warm-up map the app now draws out of sight
first (``ui.figures.preload_plotly``): plotly.js compiles its code as it first runs it.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

import plotly.io as pio
from plotly.offline import get_plotlyjs

from benchmarks.common import launch_chromium, write_json

TIME = """async (figs) => {
  const gd = document.getElementById('gd'); Plotly.purge(gd);
  const frames = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  let t = performance.now(); await Plotly.newPlot(gd, figs[0].data, figs[0].layout); await frames();
  const out = [performance.now() - t];
  for (let i = 1; i < figs.length; i++) {
    t = performance.now(); await Plotly.react(gd, figs[i].data, figs[i].layout); await frames();
    out.push(performance.now() - t);
  }
  return out; }"""


BUTTONS = """async (fig) => {
  const gd = document.getElementById('gd'); Plotly.purge(gd);
  const frames = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  await Plotly.newPlot(gd, fig.data, fig.layout); await frames();
  const out = [], buttons = fig.layout.updatemenus[0].buttons;
  for (const k of [2, 3, 1, 4, 5, 0, 6]) {   // what the figure's head buttons do: Plotly.update
    const t = performance.now(); await Plotly.update(gd, ...buttons[k].args); await frames();
    out.push(performance.now() - t);
  }
  return out; }"""


FRESH = """async ([before, fig]) => {
  const frames = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const w = document.getElementById('w'), gd = document.getElementById('gd');
  for (const f of before) { await Plotly.newPlot(w, f.data, f.layout, f.config || {}); await frames(); }
  const t = performance.now(); await Plotly.newPlot(gd, fig.data, fig.layout); await frames();
  return performance.now() - t; }"""


def fresh_pages(browser, url: str, fig: dict, reps: int) -> dict:
    """Milliseconds of the first ``newPlot`` of ``fig`` in new pages: after the preload's blank
    chart alone, and after it and the warm-up map (medians of ``reps`` pages each, alternating)."""
    from ui import chart
    from ui.figures import _blank, _warm

    blank = {**json.loads(chart.encode(_blank())), "config": {"staticPlot": True}}
    kinds = {"after_blank_ms": [blank], "after_warm_up_ms": [blank, json.loads(_warm())]}
    ms = {k: [] for k in kinds}
    for _ in range(reps):
        for k, before in kinds.items():
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url)
            page.wait_for_function("() => window.Plotly")
            ms[k].append(page.evaluate(FRESH, [before, fig]))
            page.close()
    return {k: round(statistics.median(v), 1) for k, v in ms.items()}


def variant(fig, name: str):
    if name in ("nticks_20", "nticks_20_fixed_margins"):
        fig.update_xaxes(nticks=20)
        fig.update_yaxes(nticks=20)
    if name == "nticks_20_fixed_margins":
        fig.update_xaxes(automargin=False)
        fig.update_yaxes(automargin=False)
        fig.update_layout(margin=dict(l=110, r=10, t=50, b=110))
    if name == "no_tick_labels":
        fig.update_xaxes(showticklabels=False)
        fig.update_yaxes(showticklabels=False)
    if name == "no_sentence_lines":
        fig.update_layout(shapes=[])
    if name == "categoryarray":  # the category order given explicitly (the first light-views version)
        labels = list(fig.data[0].x)
        fig.update_xaxes(categoryorder="array", categoryarray=labels)
        fig.update_yaxes(categoryorder="array", categoryarray=labels)
    return json.loads(pio.to_json(fig, validate=False))


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokens", type=int, default=512)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--fresh", type=int, default=5, help="new pages for each first draw (0: none)")
    p.add_argument("--json", default=None, help="default benchmarks/results/plotly_ab.json")
    args = p.parse_args(argv)

    from playwright.sync_api import sync_playwright

    from benchmarks.model import document
    from model.summarizer import Summarizer
    from viz import attention as A

    s = Summarizer.load(device="cpu")
    trace = s.trace(document(s, args.tokens))
    T = len(trace.tokens)
    sents = sorted({int(i) for i in trace.token_sentence})
    names = ["as_is", "no_sentence_lines", "nticks_20", "nticks_20_fixed_margins", "no_tick_labels", "categoryarray"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        (Path(tmp) / "plotly.js").write_text(get_plotlyjs())
        (Path(tmp) / "index.html").write_text('<html><body><script src="plotly.js"></script>'
                                              '<div id="w" style="width:300px"></div>'
                                              '<div id="gd" style="width:1300px"></div></body></html>')
        browser = launch_chromium(pw)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto((Path(tmp) / "index.html").as_uri())
            page.wait_for_function("() => window.Plotly")
            for name in names:
                figs = [variant(A.token_heatmap(trace, 0, h, sentence_range=(sents[0], sents[-1])), name)
                        for h in range(6)]
                new, react, button = [], [], []
                for _ in range(args.reps):
                    ms = page.evaluate(TIME, figs)
                    new.append(ms[0])
                    react += ms[1:]
                    button += page.evaluate(BUTTONS, figs[0])
                rows.append({"variant": name, "newPlot_ms": round(statistics.median(new), 1),
                             "react_ms": round(statistics.median(react), 1),
                             "button_ms": round(statistics.median(button), 1)})
                print(rows[-1], flush=True)
            from ui import chart

            app_fig = json.loads(chart.encode(A.token_heatmap(trace, 0, 0, sentence_range=(sents[0], sents[-1]),
                                                              layers=True)))
            fresh = fresh_pages(browser, (Path(tmp) / "index.html").as_uri(), app_fig, args.fresh) if args.fresh else {}
        finally:
            browser.close()
    result = {"tokens": T, "reps": args.reps, "rows": rows, "fresh_pages": args.fresh, "first_map_in_a_new_page": fresh}
    print(f"\n{T}-token one-head heatmap, plain page, median of {args.reps} reps")
    print(f"{'variant':26} {'newPlot ms':>10} {'react ms':>9} {'button ms':>9}")
    for r in rows:
        print(f"{r['variant']:26} {r['newPlot_ms']:>10} {r['react_ms']:>9} {r['button_ms']:>9}")
    if fresh:
        print(f"the app's map, first newPlot in a new page (median of {args.fresh}): after the blank chart "
              f"{fresh['after_blank_ms']} ms, after the warm-up map too {fresh['after_warm_up_ms']} ms")
    write_json("plotly_ab", result, args.json)
    return result


if __name__ == "__main__":
    main()
