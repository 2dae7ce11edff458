"""Figure cost per page: time to build each page's figures for one ~512-token document, and
the bytes the app's chart element sends for them.

    python -m benchmarks.figures [--tokens 512] [--runs 5] [--json OUT]

Each figure is built with the page's default choices (layer 1, head 1, first query token, …)
by the same viz/ function the page calls, then encoded the way the chart element sends it
(``ui.chart.figure_bytes``: the figure's JSON, themed); its length is what goes into the websocket
message (protobuf adds a few bytes). "draw ms": the same for the figure as the app keeps it in its
figure cache (``ui.figures.wired``: its bytes made once), what each session's draw of a shared
figure costs. Medians of ``--runs`` runs; prints a table, writes JSON.
"""
from __future__ import annotations

import argparse
import statistics
import time

import plotly

from benchmarks.common import write_json


def chart_bytes(fig) -> tuple[bytes, float]:
    """What the chart element sends for ``fig`` (ui.chart.figure_bytes), and the seconds it took."""
    from ui.chart import figure_bytes

    t = time.perf_counter()
    data = figure_bytes(fig)
    return data, time.perf_counter() - t


def page_figures(trace) -> dict[str, dict[str, callable]]:
    """page → figure name → zero-argument builder, with each page's default widget values."""
    from viz import attention as A
    from viz import masks as M
    from viz.inter import inter_heatmap
    from viz.learn import step_figures
    from viz.summary import score_bars

    T = len(trace.tokens)
    sents = sorted({int(i) for i in trace.token_sentence})
    rng = (sents[0], sents[-1])
    return {
        "Summary": {"score_bars": lambda: score_bars(trace.summary)},
        "BERT attention (default: one head, the layer's 12 heads + mean, hover weights)": {
            "token_heatmap": lambda: A.token_heatmap(trace, 0, 0, hide_special=False, sentence_range=rng,
                                                     colorscale="Viridis")},
        "BERT attention: all heads of a layer": {"head_grid": lambda: A.head_grid(trace, 0, sentence_range=rng)},
        "BERT attention: all layers x heads": {"overview": lambda: A.overview(trace, level="token")},
        "BERT attention: all layers x heads (sentences)": {"overview_sentence": lambda: A.overview(trace, level="sentence")},
        "BERT attention: sentence x sentence": {"sentence_heatmap": lambda: A.sentence_heatmap(trace, 0, 0)},
        "Sentence encoder": {"inter_heatmap": lambda: inter_heatmap(trace, 0, 0)},
        "Masks & positions": {
            "token_mask": lambda: M.token_mask_strip(trace), "extended_mask": lambda: M.extended_mask_strip(trace),
            "cls_mask": lambda: M.cls_mask_strip(trace), "inter_mask": lambda: M.inter_mask_matrix(trace),
            "segments": lambda: M.segment_strip(trace), "pe_table": lambda: M.pe_table_heatmap(trace),
            "sentence_pe": lambda: M.sentence_pe_heatmap(trace),
            "position_embeddings": lambda: M.position_embedding_heatmap(trace)},
        "Learn": {"step_figures (8 figures)": lambda: step_figures(trace, 0, 0, min(1, T - 1))},
    }


def measure(build, runs: int) -> dict:
    from ui.figures import wired

    builds, sers, draws, size = [], [], [], 0
    for _ in range(runs + 1):  # the first run warms up (imports, caches) and is dropped
        t = time.perf_counter()
        out = build()
        b = time.perf_counter() - t
        figs = out.values() if isinstance(out, dict) else [out]
        s, d, size = 0.0, 0.0, 0
        for f in figs:
            data, dt = chart_bytes(f)
            s, size = s + dt, size + len(data)
            d += chart_bytes(wired(f))[1]  # a shared figure: its bytes made once, when cached
        builds.append(b)
        sers.append(s)
        draws.append(d)
    builds, sers, draws = builds[1:], sers[1:], draws[1:]
    return {"build_ms": round(statistics.median(builds) * 1000, 1),
            "serialize_ms": round(statistics.median(sers) * 1000, 1),
            "shared_draw_ms": round(statistics.median(draws) * 1000, 1), "bytes": size}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokens", type=int, default=512)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--json", default=None, help="default benchmarks/results/figures.json")
    args = p.parse_args(argv)

    from benchmarks.model import document
    from model.summarizer import Summarizer

    summarizer = Summarizer.load(device="cpu")
    trace = summarizer.trace(document(summarizer, args.tokens))
    rows = []
    for page, figs in page_figures(trace).items():
        for name, build in figs.items():
            rows.append({"page": page, "figure": name, **measure(build, args.runs)})
    pages = {}
    for r in rows:
        agg = pages.setdefault(r["page"], {"build_ms": 0.0, "serialize_ms": 0.0, "shared_draw_ms": 0.0, "bytes": 0})
        for k in agg:
            agg[k] = round(agg[k] + r[k], 1) if k != "bytes" else agg[k] + r[k]
    result = {"tokens": len(trace.tokens), "sentences": len(trace.input_sentences), "runs": args.runs,
              "plotly": plotly.__version__,
              "rows": rows, "pages": pages}
    print(f"{len(trace.tokens)} tokens, {len(trace.input_sentences)} sentences; median of {args.runs} runs; "
          f"bytes = what the chart element sends (plotly {plotly.__version__})")
    print(f"{'page':48} {'figure':28} {'build ms':>9} {'to JSON ms':>10} {'draw ms':>8} {'KB':>9}")
    for r in rows:
        print(f"{r['page']:48} {r['figure']:28} {r['build_ms']:>9} {r['serialize_ms']:>10} {r['shared_draw_ms']:>8} "
              f"{r['bytes'] / 1024:>9.1f}")
    print("per page:")
    for page, a in pages.items():
        print(f"{page:48} {'':28} {a['build_ms']:>9} {a['serialize_ms']:>10} {a['shared_draw_ms']:>8} "
              f"{a['bytes'] / 1024:>9.1f}")
    write_json("figures", result, args.json)
    return result


if __name__ == "__main__":
    main()
