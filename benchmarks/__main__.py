"""All the benchmarks, one JSON object out.

    python -m benchmarks [--quick] [--json]

1. model (benchmarks.model): plain vs capture latency → ``capture_ratio`` (at ~512 tokens)
2. figures (benchmarks.figures): build time and Streamlit bytes of every page's figures
3. browser (benchmarks.browser): the real app in Chromium → ``click_to_first_heatmap_s``,
   ``head_switch_s``, ``layer_button_s`` (the figure's layer button), the BERT attention page's websocket bytes, the server's ``rss_mb``
   (VmRSS after summarizing 10 documents; ``rss_hwm_mb`` = its peak, VmHWM)
4. peer (benchmarks.peer): bertviz's model_view for the same input →
   ``payload_ratio_vs_bertviz`` = bertviz model_view HTML bytes / our BERT attention page bytes
5. explain (benchmarks.explain): explanation of the selected sentences (given the Trace, as the Why
   page does; and from the text alone) and rollout, × plain
6. heads (benchmarks.heads): head statistics, gradient importance, full ablation, × plain
7. corpus (benchmarks.corpus): Ray with 2 workers vs a plain loop, documents/s ratio
8. workshop (scripts/workshop.py): 20 students (6 with --quick) on the same example, one app
   process and then two behind nginx: failures, p95 per step, server CPU per student flow
9. what_if (benchmarks.what_if): a comparison and activation patching × a summarize
9b. mixing (benchmarks.mixing): norms, ALTI, mixing, value zeroing and the scoreboard × a forward, and
   the extra peak memory of ``mixing``, MiniLM and BERT-base
9d. store (benchmarks.store): 30 answers at once until counted; PostgreSQL stopped: the first and next
   calls' time to a plain error
9c. long_document (benchmarks.long_document): a 99,000-character paste through every page (AppTest):
   seconds per page, peak and settled memory over idle
10. the BERT-base row (``bert_base``): the paper's model at its size (a PreSumm checkpoint with
   random weights, benchmarks/presumm_fixture.py, written once to $TMPDIR) in benchmarks.model and in
   the browser (``streamlit run app.py -- --model …``): forward, capture ratio, trace MB, % of floor,
   first heatmap, layer switch, the overview's 144 maps, server memory after 10 documents

``--smoke DIR``: every benchmark at its smallest size, to check that each still runs (a slow test
does), no measurement. ``--quick`` (about 10 minutes): fewer runs, the model at 512 tokens only, 3 browser sessions,
bertviz rendered at ~128 tokens only (its 512-token page is built and measured, not rendered).
Each script also writes its own JSON under benchmarks/results/ (``*_quick.json`` with --quick).
With ``--json`` the tables go to stderr and stdout gets one JSON object.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import (browser, corpus, explain, figures, heads, long_document, mixing, model, peer, store,
                        student_steps, what_if)
from benchmarks.common import RESULTS, ROOT, bert_base_fixture

TARGETS = {"capture_ratio": ("<=", 1.3), "bert_page_ws_bytes": ("<=", 1.5e6),
           # issue 71: Summarize → the first heatmap in 0.5 s, any layer, head or view switch in 0.3 s
           "click_to_first_heatmap_s": ("<=", 0.5), "head_switch_s": ("<=", 0.3), "layer_button_s": ("<=", 0.3),
           "layer_switch_s": ("<=", 0.3), "all_layers_heads_s": ("<=", 0.3), "throttled_first_heatmap_s": ("<=", 2.0),
           "workshop_cpu_s_per_student": ("<=", 0.3), "workshop_2_processes_cpu_s_per_student": ("<=", 0.3),
           "workshop_p95_max_s": ("<=", 3.0),  # six students (--quick) on one process: every step's p95
           "workshop_failures": ("<=", 0),
           "workshop_2_processes_p95_ratio": ("<", 1.0),
           "payload_ratio_vs_bertviz": (">=", 10.0), "rss_mb": ("<=", 1536.0),
           "explain_selected_traced_ratio": ("<=", 3.0), "rollout_ratio": ("<=", 0.2), "head_stats_ratio": ("<=", 0.1),
           "head_gradient_ratio": ("<=", 3.0), "head_ablation_ratio": ("<=", 15.0),
           "corpus_2_workers_vs_plain": (">=", 1.6),
           "bert_base_page_ws_bytes": ("<=", 1.5e6), "bert_base_rss_mb": ("<=", 3072.0),
           "what_if_compare_ratio": ("<=", 2.5), "what_if_patch_ratio": ("<=", 10.0),
           "what_if_patch_bert_heads_ratio": ("<=", 40.0),
           "alti_x_forward_bert_base": ("<=", 5.0), "norms_x_forward_bert_base": ("<=", 0.3),
           "mixing_extra_peak_mb_bert_base": ("<=", 512.0),
           "long_document_peak_over_idle_mb": ("<=", 1536.0), "long_document_settled_over_idle_mb": ("<=", 307.0),
           "store_answers_counted_s": ("<=", 2.0), "store_first_call_down_s": ("<=", 5.0),
           "store_next_call_down_s": ("<=", 0.1)}


def workshop(args: list[str]) -> dict:
    """scripts/workshop.py, a program of its own (its table on stderr here), and the JSON it writes."""
    subprocess.run([sys.executable, str(ROOT / "scripts" / "workshop.py"), *args], check=True, stdout=sys.stderr)
    return json.loads(Path(args[args.index("--json") + 1]).read_text())


def run(quick: bool) -> dict:
    q = "_quick" if quick else ""
    out = lambda name: str(RESULTS / f"{name}{q}.json")  # noqa: E731
    t0 = time.perf_counter()
    m = model.main((["--runs", "5", "--sizes", "512"] if quick else []) + ["--json", out("model")])
    row = max((r for r in m["rows"] if r["model"].startswith("MiniLM")), key=lambda r: r["target_tokens"])
    base_row = max((r for r in m["rows"] if r["model"].startswith("BERT-base")), key=lambda r: r["target_tokens"])
    f = figures.main((["--runs", "2"] if quick else []) + ["--json", out("figures")])
    b = browser.main((["--runs", "3"] if quick else []) + ["--json", out("browser")])
    backbone, checkpoint = bert_base_fixture()  # the paper's model at its size, random weights
    bb = browser.main(["--runs", "1" if quick else "3", "--model", f"bert-base={backbone},{checkpoint}",
                       "--json", out("browser_bert_base")])
    p = peer.main((["--render-tokens", "128", "--views", "model_view", "--timeout", "90"] if quick else [])
                  + ["--ours-bytes", str(b["bert_page_ws_bytes"] or 0), "--json", out("peer")])
    e = explain.main((["--runs", "5"] if quick else []) + ["--json", out("explain")])
    h = heads.main((["--runs", "5", "--ablation-runs", "1", "--batches", "0"] if quick else []) + ["--json", out("heads")])
    wi = what_if.main((["--runs", "3"] if quick else []) + ["--json", out("what_if")])
    mx = mixing.main(["--runs", "3", "--json", out("mixing")])
    mbase = next(r for r in mx["rows"] if r["model"] == "bert-base")
    ld = long_document.main(["--json", out("long_document")])
    c = corpus.main((["--n", "40"] if quick else ["--n", "200"]) + ["--json", out("corpus")])
    students = ["--students", "6" if quick else "20", "--same-example"]
    w1 = workshop(students + ["--json", out("workshop_20")])
    w2 = workshop(students + ["--processes", "2", "--json", out("workshop_20_nginx")])
    st = store.main(["--json", out("store")])
    p95 = lambda w: sum(s.get("p95", 0) for s in w["steps"].values())  # noqa: E731
    ablation = next(v for k, v in h["rows"].items() if k.startswith("ablation_batch_auto"))
    result = {
        "quick": quick,
        "capture_ratio": row["capture_ratio"],
        "click_to_first_heatmap_s": b["click_to_first_heatmap_s"],
        "head_switch_s": b["head_switch_s"],
        "payload_ratio_vs_bertviz": p["payload_ratio_vs_bertviz"],
        "rss_mb": b["rss_mb"],
        "rss_hwm_mb": b["rss_hwm_mb"],
        "tokens": row["tokens"],
        "plain_ms": row["plain_ms"], "capture_ms": row["capture_ms"], "trace_mb": row["trace_mb"],
        "bert_page_ws_bytes": b["bert_page_ws_bytes"],
        "bertviz_model_view_html_bytes": p["model_view_html_bytes"],
        "layer_button_s": b["median"].get("layer_button_s"),  # the figure's layer button (a preview)
        "layer_exact_s": b["median"].get("layer_exact_s"),
        "layer_switch_s": b["median"].get("layer_switch_s"),  # the Layer selector (its preview, in the page)
        "layer_switch_exact_s": b["median"].get("layer_switch_exact_s"),  # (then its exact map, a server round trip)
        "head_exact_s": b["median"].get("head_exact_s"),
        "throttled_first_heatmap_s": b["throttled_median"].get("click_to_first_heatmap_s"),
        "throttled_layer_switch_s": b["throttled_median"].get("layer_switch_s"),
        "bert_page_wire_bytes": b["median"].get("click_to_first_heatmap_wire_bytes"),
        "workshop_cpu_s_per_student": w1["server_cpu_s_per_student"], "workshop_failures": w1["failures"] + w2["failures"],
        # behind scripts/serve.py's nginx (which serves Streamlit's browser code): the app processes and nginx
        "workshop_2_processes_cpu_s_per_student": round(w2["server_cpu_s_per_student"]
                                                        + (w2.get("proxy_cpu_s_per_student") or 0), 3),
        "workshop_p95_s": {k: v.get("p95") for k, v in w1["steps"].items()},
        "workshop_p95_max_s": max((v.get("p95") or 0) for v in w1["steps"].values()),
        "first_heatmap_split": b["first_heatmap_split"],
        "workshop_2_processes_p95_s": {k: v.get("p95") for k, v in w2["steps"].items()},
        "workshop_2_processes_p95_ratio": round(p95(w2) / p95(w1), 3),
        "all_layers_heads_s": b["median"].get("all_layers_heads_s"),
        "server_memory_mb": b["server_memory_mb"],
        "figures_pages": f["pages"],
        "bertviz_rendered": [{"view": r["view"], "tokens": r["tokens"], **r.get("browser", {})}
                             for r in p["rows"] if "browser" in r],
        "explain_selected_traced_ratio": e["ratio"]["explain_selected_traced"],  # the Why page: the trace exists
        "explain_selected_ratio": e["ratio"]["explain_selected"], "rollout_ratio": e["ratio"]["rollout"],
        "head_stats_ratio": h["rows"]["stats"]["ratio"], "head_gradient_ratio": h["rows"]["gradient"]["ratio"],
        "head_ablation_ratio": ablation["ratio"], "corpus_2_workers_vs_plain": c["ray_2_vs_plain"],
        "bert_base": {"tokens": base_row["tokens"], "forward_ms": base_row["plain_ms"],
                      "capture_ratio": base_row["capture_ratio"], "trace_mb": base_row["trace_mb"],
                      "percent_of_floor": base_row["percent_of_floor"],
                      "click_to_first_heatmap_s": bb["click_to_first_heatmap_s"],
                      "layer_button_s": bb["median"].get("layer_button_s"),
                      "layer_switch_s": bb["median"].get("layer_switch_s"),
                      "all_layers_heads_s": bb["median"].get("all_layers_heads_s"),
                      "rss_after_10_documents_mb": bb["rss_mb"]},
        "bert_base_page_ws_bytes": bb["bert_page_ws_bytes"], "bert_base_rss_mb": bb["rss_mb"],
        "what_if_compare_ratio": wi["compare_ratio"], "what_if_patch_ratio": wi["patch_ratio"],
        "what_if_patch_bert_heads_ratio": wi["patch_bert_heads_ratio"],
        "mixing": mx["rows"],
        "alti_x_forward_bert_base": mbase["x_forward"]["alti"], "norms_x_forward_bert_base": mbase["x_forward"]["norms"],
        "mixing_extra_peak_mb_bert_base": mbase["peak_mb"]["extra"],
        "long_document_steps": ld["steps"], "long_document_peak_over_idle_mb": ld["peak_over_idle_mb"],
        "long_document_settled_over_idle_mb": ld["settled_over_idle_mb"],
        "store_answers_counted_s": max(st["answers_counted_s"].values()),
        "store_first_call_down_s": st.get("first_call_down_s"), "store_next_call_down_s": st.get("next_call_down_s"),
        "seconds": round(time.perf_counter() - t0, 1),
    }
    compare = {"<=": lambda a, b: a <= b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b}
    result["targets_met"] = {k: result[k] is not None and compare[op](result[k], v) for k, (op, v) in TARGETS.items()}
    return result


def smoke(folder: Path) -> dict:
    """Every benchmark at its smallest size (``--smoke``, tests/test_benchmarks.py): the same code
    paths, selectors and result keys as ``--quick``, its JSON in ``folder`` (not results/), so a
    benchmark that breaks fails a test instead of going unmeasured. No number here is a measurement.
    bertviz (requirements-bench.txt) and ../shared/data are used where installed, else said skipped."""
    import importlib.util

    out = lambda name: str(folder / f"{name}.json")  # noqa: E731
    parts = {
        "model": lambda: model.main(["--runs", "1", "--sizes", "128", "--no-base", "--json", out("model")])["rows"],
        "figures": lambda: figures.main(["--runs", "1", "--tokens", "128", "--json", out("figures")])["pages"],
        "browser": lambda: browser.main(["--runs", "1", "--rss-docs", "1", "--json", out("browser")])["median"],
        "browser_profile": lambda: browser.main(["--profile", "1", "--json", out("browser_profile")])[
            "browser_self_ms_per_run"] or None,  # no sample in the browser's share: lost
        "explain": lambda: explain.main(["--runs", "1", "--tokens", "128", "--json", out("explain")])["ratio"],
        "heads": lambda: heads.main(["--runs", "1", "--ablation-runs", "1", "--batches", "0", "--json",
                                     out("heads")])["rows"],
        "what_if": lambda: what_if.main(["--runs", "1", "--json", out("what_if")])["compare_ratio"],
        "mixing": lambda: mixing.main(["--runs", "1", "--no-base", "--no-memory", "--json", out("mixing")])["rows"],
        "long_document": lambda: long_document.main(["--chars", "6000", "--json", out("long_document")])["steps"],
        "workshop": lambda: workshop(["--students", "1", "--same-example", "--json", out("workshop")])["steps"],
        "class": lambda: workshop(["--follow", "--students", "1", "--idle", "1", "--json", out("class")])["per_step"],
        "student_steps": lambda: student_steps.main(["--students", "1", "--switches", "2", "--json",
                                                     out("student_steps")])["students"],
        "store": lambda: store.main(["--json", out("store")])["answers_counted_s"],
    }
    if importlib.util.find_spec("bertviz"):
        parts["peer"] = lambda: peer.main(["--render-tokens", "128", "--views", "model_view", "--timeout", "90",
                                           "--json", out("peer")])["payload_ratio_vs_bertviz"]
    if corpus.DEFAULT_DATA.exists():
        parts["corpus"] = lambda: corpus.main(["--n", "4", "--json", out("corpus")])["ray_2_vs_plain"]
    done = {}
    for name, part in parts.items():
        assert part() is not None, name  # a part that ran but lost its result key
        done[name] = "ok"
    return done | {n: "skipped (not installed here)" for n in ("peer", "corpus") if n not in parts}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="a short version (about 10 minutes)")
    p.add_argument("--smoke", metavar="DIR", type=Path,
                   help="every benchmark at its smallest size, JSON into DIR: checks they run, measures nothing")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout (tables on stderr)")
    args = p.parse_args(argv)
    if args.smoke:
        args.smoke.mkdir(parents=True, exist_ok=True)
        with contextlib.redirect_stdout(sys.stderr):
            result = smoke(args.smoke)
        print(json.dumps(result))
        return result
    if args.json:
        with contextlib.redirect_stdout(sys.stderr):
            result = run(args.quick)
        print(json.dumps(result))
    else:
        result = run(args.quick)
        print()
        print(f"{'figure':40} {'measured':>10}  target")
        for k, (op, v) in TARGETS.items():
            print(f"{k:40} {result[k]!s:>10}  {op} {v:<8g} {'met' if result['targets_met'][k] else 'MISSED'}")
        split = result["first_heatmap_split"]
        print(f"first heatmap: the server had the click at {split['request_in_s']} s and sent the chart at "
              f"{split['chart_out_s']} s (server CPU {split['server_cpu_s']} s), then {split['browser_s']} s to drawn")
    return result


if __name__ == "__main__":
    main()
