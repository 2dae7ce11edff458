"""The lead-to-end experiment as a corpus question (issue 27, "Measurements").

For each document: take its lead sentence (the first sentence the model scores: the first
sentence may be too short to be fed, e.g. a title), move it to the end
(``analysis.edits.apply_edits(text, ["move:I:end"])``), and compare A with B
(``analysis.compare.compare``, top-3 with trigram blocking as the CNN/DM evaluation): was the lead
selected in A, is it still selected in B, its score in A and B. Then activation patching of the
lead (``analysis.patching.patch``): B run again with one component taken from A, the fraction of
the lead's score change each component restores, (s_patched − s_B) / (s_A − s_B), for its
sentence-position row, its sentence vector, BERT's embeddings and each BERT layer's output on its
tokens, each sentence-encoder layer and head, and ``all`` (every aligned sentence's vector and
position row: 1 for a move, the check). ``--heads-n`` documents (the first ones) also patch every
BERT head.

Documents: CNN/DM validation, ``training.data.named_split("cnndm-valid", …)`` = rows
``split_order(len(cnndm_val))[:n]`` of cnndm_val.jsonl.gz (the validation part, never the
held-out test part ``[2000:]``), in the raw form users paste (``training.evaluate.raw_form``).

Intervals: 95% percentile bootstrap over documents (2,000 resamples, seed 0): means with
``training.metrics.bootstrap_ci``, medians and ratios with the same resampling here. Fractions
are unstable when |Δ| is small, so each component also gets the mean over documents with
|Δ| ≥ 0.05 and the Δ-weighted fraction Σ(s_patched − s_B) / Σ(s_A − s_B) (the share of the
corpus' total score change restored).

    PYTHONPATH=. python -m studies.lead_to_end --n 200 --heads-n 50 --out /tmp/lead_to_end   # ~7.5 min, 1 thread
    PYTHONPATH=. python -m studies.lead_to_end --n 200 --out /tmp/lead_to_end               # no BERT heads: ~5 min

(about 1.4 s a document on one thread, 5 s with every BERT head patched)
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from analysis import compare as C

from analysis import edits as E

from analysis import patching as P
from model.summarizer import DEFAULT_CHECKPOINT, Summarizer
from training.data import DEFAULT_DATA, VALID_END, named_split, split_order
from training.evaluate import raw_form
from training.metrics import bootstrap, bootstrap_ci

K, BLOCK = 3, True  # the CNN/DM evaluation's setting (top-3, trigram blocking)
BIG = 0.05  # |Δ| threshold for the "stable" fractions
CI_N, SEED = 2000, 0


# ---------------------------------------------------------------- one document

def component(r: P.PatchRow) -> str:
    """A row's key in the report: position, vector, all, bert_embeddings, bert_layer_3,
    encoder_layer_1, encoder_head_1.2, bert_head_5.3 (layers and heads 1-based)."""
    if r.layer is None:
        return r.kind
    return f"{r.kind}_{r.layer + 1}" + (f".{r.head + 1}" if r.head is not None else "")


def one(summarizer: Summarizer, text: str, heads: bool) -> dict:
    """The experiment on one document → a row (JSON-ready); ``excluded`` says why when it is not
    counted."""
    t0 = time.perf_counter()
    enc = E.encode(summarizer, text)
    lead = enc.input_sentences[0] if enc.input_sentences else None  # the first sentence the model scores
    n_sent = len(enc.sentences)
    row = {"lead": lead, "n_sentences": n_sent}
    if lead is None:
        return row | {"excluded": "no sentence scored"}
    if lead == n_sent - 1:
        return row | {"excluded": "the lead is already the last sentence"}
    text_b = E.apply_edits(text, [f"move:{lead + 1}:end"], summarizer)
    cmp = C.compare(summarizer, text, text_b, K, BLOCK)
    at = next(n for n, r in enumerate(cmp.alignment) if r.a == lead)
    al = cmp.alignment[at]
    sa, sb = cmp.status_a[at], cmp.status_b[at]
    row |= {"kind": al.kind, "lead_b": al.b, "n_sentences_b": len(cmp.summary_b.sentences),
            "score_a": cmp.scores_a[at], "score_b": cmp.scores_b[at], "delta": cmp.delta[at],
            "status_a": sa.status, "status_b": sb and sb.status, "rank_a": sa.rank, "rank_b": sb and sb.rank,
            "selected_a": sa.status == "selected", "selected_b": sb is not None and sb.status == "selected",
            "past_training_b": al.b is not None and al.b in cmp.summary_b.past_training,
            "summary_a": list(cmp.summary_a.selected), "summary_b": list(cmp.summary_b.selected),
            "seconds_compare": round(time.perf_counter() - t0, 2)}
    if al.kind not in ("moved", "kept") or row["delta"] is None:
        return row | {"excluded": f"the lead is {al.kind} in B, or not scored there"}
    t1 = time.perf_counter()
    try:
        p = P.patch(summarizer, text, text_b, lead, bert_heads=heads, alignment=cmp.alignment)
    except ValueError as e:  # refused: e.g. the lead is longer than a BERT window
        return row | {"excluded": f"patching refused: {e}"}
    row |= {"patch_score_a": p.score_a, "patch_score_b": p.score_b, "window_a": p.window_a, "window_b": p.window_b,
            "fraction": {component(r): (None if not np.isfinite(r.fraction) else r.fraction) for r in p.rows},
            "patched_score": {component(r): r.score for r in p.rows}, "bert_heads": heads,
            "seconds_patch": round(time.perf_counter() - t1, 2)}
    return row


# ---------------------------------------------------------------- statistics

def interval(values, stat: str = "mean") -> dict | None:
    """{estimate, low, high, n} of the mean (``bootstrap_ci``) or median of per-document values."""
    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], dtype=float)
    if len(v) == 0:
        return None
    if stat == "mean":
        m, lo, hi = bootstrap_ci(v, n=CI_N, seed=SEED)
    else:
        m = float(np.median(v))
        lo, hi = bootstrap(lambda idx: np.median(v[idx], 1), len(v), CI_N, SEED)
    return {"estimate": m, "low": lo, "high": hi, "n": int(len(v))}


def ratio_interval(num, den) -> dict | None:
    """{estimate, low, high, n} of Σnum / Σden, documents resampled as pairs."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    if len(num) == 0 or den.sum() == 0:
        return None
    lo, hi = bootstrap(lambda idx: num[idx].sum(1) / den[idx].sum(1), len(num), CI_N, SEED)
    return {"estimate": float(num.sum() / den.sum()), "low": lo, "high": hi, "n": int(len(num))}


def diff_interval(rows: list[dict], a: str, b: str) -> dict | None:
    """Δ-weighted fraction of component a minus that of b (paired by document), with its interval."""
    s_a, s_b = np.array([r["score_a"] for r in rows]), np.array([r["score_b"] for r in rows])
    pa = np.array([r["patched_score"][a] for r in rows]) - s_b
    pb = np.array([r["patched_score"][b] for r in rows]) - s_b
    den = s_a - s_b
    if len(rows) == 0 or den.sum() == 0:
        return None
    lo, hi = bootstrap(lambda idx: (pa[idx].sum(1) - pb[idx].sum(1)) / den[idx].sum(1), len(rows), CI_N, SEED)
    return {"a": a, "b": b, "estimate": float((pa.sum() - pb.sum()) / den.sum()), "low": lo, "high": hi}


def components_of(rows: list[dict], keys: list[str]) -> dict:
    """Per component: mean and median fraction (all documents with a change), mean fraction over
    |Δ| ≥ BIG, Δ-weighted fraction."""
    out = {}
    s_a = np.array([r["score_a"] for r in rows])
    s_b = np.array([r["score_b"] for r in rows])
    for key in keys:
        f = [r["fraction"][key] for r in rows]
        out[key] = {"mean": interval(f), "median": interval(f, "median"),
                    "mean_big": interval([x for x, r in zip(f, rows) if abs(r["delta"]) >= BIG]),
                    "weighted": ratio_interval(np.array([r["patched_score"][key] for r in rows]) - s_b, s_a - s_b)}
    return out


def summarise(rows: list[dict]) -> dict:
    done = [r for r in rows if "excluded" not in r]
    patched = [r for r in done if "fraction" in r]
    compared = [r for r in rows if "delta" in r and r["delta"] is not None]
    sel_a = [r for r in compared if r["selected_a"]]
    excluded: dict[str, int] = {}
    for r in rows:
        if "excluded" in r:
            why = r["excluded"].split(":")[0] if r["excluded"].startswith("patching refused") else r["excluded"]
            excluded[why] = excluded.get(why, 0) + 1
    deltas = [r["delta"] for r in compared]
    keys = [k for k in patched[0]["fraction"] if not k.startswith("bert_head")] if patched else []
    head_rows = [r for r in patched if r["bert_heads"]]
    head_keys = [k for k in head_rows[0]["fraction"] if k.startswith("bert_head")] if head_rows else []
    all_err = [abs(r["patched_score"]["all"] - r["score_a"]) for r in patched]
    all_frac = [r["fraction"]["all"] for r in patched if r["fraction"]["all"] is not None]
    consistency = [max(abs(r["patch_score_a"] - r["score_a"]), abs(r["patch_score_b"] - r["score_b"]))
                   for r in patched]
    out = {
        "n_documents": len(rows), "n_compared": len(compared), "n_patched": len(patched), "excluded": excluded,
        "lead_is_first_sentence": float(np.mean([r["lead"] == 0 for r in compared])) if compared else None,
        "p_selected_a": interval([float(r["selected_a"]) for r in compared]),
        "p_selected_b": interval([float(r["selected_b"]) for r in compared]),
        "p_stays": interval([float(r["selected_b"]) for r in sel_a]),
        "p_enters": interval([float(r["selected_b"]) for r in compared if not r["selected_a"]]),
        "mean_delta": interval(deltas), "median_delta": interval(deltas, "median"),
        "share_delta_negative": interval([float(d < 0) for d in deltas]),
        "share_big": float(np.mean([abs(d) >= BIG for d in deltas])) if deltas else None,
        "mean_score_a": interval([r["score_a"] for r in compared]),
        "mean_score_b": interval([r["score_b"] for r in compared]),
        "past_training_b": float(np.mean([r["past_training_b"] for r in compared])) if compared else None,
        "by_past_training_b": {
            str(flag): {"n": len(g), "p_stays": interval([float(r["selected_b"]) for r in g if r["selected_a"]]),
                        "mean_delta": interval([r["delta"] for r in g])}
            for flag in (False, True) if (g := [r for r in compared if r["past_training_b"] == flag])},
        "components": components_of(patched, keys),
        "check_all": {"max_abs_score_error": max(all_err) if all_err else None,
                      "max_abs_fraction_minus_1": max(abs(f - 1) for f in all_frac) if all_frac else None,
                      "max_abs_fraction_minus_1_big": max((abs(r["fraction"]["all"] - 1) for r in patched
                                                           if abs(r["delta"]) >= BIG), default=None)},
        "check_patch_vs_compare_scores": max(consistency) if consistency else None,
        "n_heads_docs": len(head_rows),
    }
    main = [k for k in keys if k not in ("none", "all") and not k.startswith("encoder_layer")]
    ranked = sorted(main, key=lambda k: -(out["components"][k]["weighted"] or {"estimate": -np.inf})["estimate"])
    out["ranking_weighted"] = ranked
    out["top_vs_next"] = diff_interval(patched, ranked[0], ranked[1]) if len(ranked) > 1 else None
    out["position_vs_vector"] = diff_interval(patched, "position", "vector") if patched else None
    if head_rows:
        heads = components_of(head_rows, head_keys)
        order = sorted(head_keys, key=lambda k: -(heads[k]["weighted"] or {"estimate": -np.inf})["estimate"])
        out["heads"] = {"n": len(head_rows), "top": [(k, heads[k]) for k in order[:10]],
                        "bottom": [(k, heads[k]) for k in order[-3:]], "all": heads,
                        "layers_same_docs": components_of(head_rows, [k for k in keys if k.startswith("bert_")])}
    return out


# ---------------------------------------------------------------- report

def fmt(ci: dict | None, digits: int = 2, pct: bool = False) -> str:
    if ci is None:
        return "—"
    f = (lambda x: f"{100 * x:.{digits}f}%") if pct else (lambda x: f"{x:+.{digits}f}")
    return f"{f(ci['estimate'])} [{f(ci['low'])}, {f(ci['high'])}]"


LABEL = {"none": "nothing (0 by definition)", "all": "all aligned vectors + position rows (check: 1)",
         "position": "the lead's position row (sentence encoder)", "vector": "the lead's sentence vector (all of BERT)",
         "bert_embeddings": "BERT embeddings of its tokens"}


def label(key: str) -> str:
    if key in LABEL:
        return LABEL[key]
    kind, _, where = key.rpartition("_")
    return {"bert_layer": "BERT layer", "encoder_layer": "sentence-encoder layer", "encoder_head": "encoder head",
            "bert_head": "BERT head"}[kind] + f" {where}"


def markdown(rep: dict) -> str:
    s = rep["summary"]
    lines = [f"# Lead to end: {s['n_documents']} CNN/DM validation documents", "",
             f"Command: `{rep['command']}`  ",
             f"Weights: `{rep['weights']['path']}` (sha256 {rep['weights']['sha256'][:12]}…; sentence-position rows "
             + ("not clamped" if rep["weights"]["position_rows"] is None else
                f"clamped at {rep['weights']['position_rows']}: later sentences get row "
                f"{rep['weights']['position_rows'] - 1}") + ").  ",
             f"Run time: {rep['seconds']['total']:.0f} s "
             f"(data {rep['seconds']['data']:.0f} s, model {rep['seconds']['model']:.0f} s; 1 torch thread).", "",
             rep["documents"], "",
             f"Edit: the lead (the first sentence the model scores; it is sentence 1 in "
             f"{100 * s['lead_is_first_sentence']:.0f}% of the documents) moved to the end (`move:I:end`). "
             f"Summaries: top-{K}, trigram blocking. Intervals: 95% percentile bootstrap over documents "
             f"({CI_N} resamples, seed {SEED}).", "",
             f"Counted: {s['n_compared']} compared, {s['n_patched']} patched; excluded: "
             + (", ".join(f"{v} × {k}" for k, v in s["excluded"].items()) or "none") + ".", "",
             "## Does the lead stay in the summary?", "",
             "| quantity | estimate [95% CI] | n |", "|---|---:|---:|"]
    for key, name, pct in (("p_selected_a", "lead selected in A", True),
                           ("p_stays", "**stays selected in B**, given selected in A", True),
                           ("p_enters", "selected in B, given not selected in A", True),
                           ("mean_score_a", "lead's score in A (mean)", False),
                           ("mean_score_b", "lead's score in B (mean)", False),
                           ("mean_delta", "**Δ score = B − A, mean**", False),
                           ("median_delta", "Δ score, median", False),
                           ("share_delta_negative", "share of documents with Δ < 0", True)):
        ci = s[key]
        lines.append(f"| {name} | {fmt(ci, 1 if pct else 3, pct)} | {ci['n'] if ci else 0} |")
    lines += ["", f"The lead lands past the input length the scorer was trained on (the first 512-token window) "
              f"in B in {100 * s['past_training_b']:.0f}% of the documents:", "",
              "| lead in B | documents | stays selected (given selected in A) | mean Δ |", "|---|---:|---:|---:|"]
    for flag, g in s["by_past_training_b"].items():
        lines.append(f"| {'past the trained window' if flag == 'True' else 'within the trained window'} | {g['n']} | "
                     f"{fmt(g['p_stays'], 1, True)} | {fmt(g['mean_delta'], 3)} |")
    lines += ["", "## Which components carry the change (activation patching of the lead)", "",
              f"Fraction of the lead's score change restored when B takes one component from A, "
              f"(s_patched − s_B) / (s_A − s_B); {s['n_patched']} documents. Mean and median over documents; "
              f"the same mean over the documents with |Δ| ≥ {BIG} ({100 * s['share_big']:.0f}% of them); "
              f"Δ-weighted = Σ(s_patched − s_B) / Σ(s_A − s_B).", "",
              "| component | mean [95% CI] | median [95% CI] | mean, |Δ| ≥ 0.05 [95% CI] | Δ-weighted [95% CI] |",
              "|---|---:|---:|---:|---:|"]
    for key, c in s["components"].items():
        if key == "none":
            continue
        lines.append(f"| {label(key)} | {fmt(c['mean'])} | {fmt(c['median'])} | {fmt(c['mean_big'])} | "
                     f"{fmt(c['weighted'])} |")
    ch = s["check_all"]
    lines += ["", f"Check (`all` should restore exactly 1 for a move): largest |s_all − s_A| = "
              f"{ch['max_abs_score_error']:.2e}; largest |fraction − 1| = {ch['max_abs_fraction_minus_1']:.2e} "
              f"(over |Δ| ≥ {BIG}: {ch['max_abs_fraction_minus_1_big']:.2e}). `patch`'s scores against `compare`'s: "
              f"largest difference {s['check_patch_vs_compare_scores']:.2e}.", "",
              "Ranking by Δ-weighted fraction (encoder layers left out: the last one is the score's input, 1 by "
              "construction): " + ", ".join(f"{label(k)} {s['components'][k]['weighted']['estimate']:.2f}"
                                            for k in s["ranking_weighted"][:6]) + "."]
    shown = set()
    for key in ("top_vs_next", "position_vs_vector"):
        d = s[key]
        if d and (d["a"], d["b"]) not in shown:
            shown.add((d["a"], d["b"]))
            lines.append(f"- {label(d['a'])} − {label(d['b'])} (Δ-weighted, paired): {fmt(d)}")
    if "heads" in s:
        h = s["heads"]
        lines += ["", f"## BERT heads ({h['n']} documents, the first ones)", "",
                  "| head | mean [95% CI] | mean, |Δ| ≥ 0.05 | Δ-weighted [95% CI] |", "|---|---:|---:|---:|"]
        for key, c in h["top"] + [("…", None)] + h["bottom"]:
            lines.append("| … | | | |" if c is None else
                         f"| {label(key)} | {fmt(c['mean'])} | {fmt(c['mean_big'])} | {fmt(c['weighted'])} |")
        lines += ["", "BERT layers on the same documents (Δ-weighted): "
                  + ", ".join(f"{label(k)} {fmt(c['weighted'])}" for k, c in h["layers_same_docs"].items()) + "."]
    lines += ["", PATCH_NOTE, ""]
    return "\n".join(lines)


PATCH_NOTE = (f"Method: {P.PATCH_METHOD}. {P.PATCH_CAVEAT.replace('one sentence of one document', 'here averaged over documents')} "
              "BERT layer l takes the output of layer l on the lead's own tokens only (the rest of the window "
              "stays B's); the sentence vector is the mean of the top layer over those tokens, so BERT layer 6 "
              "and the vector restore nearly the same. Embeddings = word + BERT position + segment embeddings "
              "of the lead's tokens: what moving the sentence within BERT's window changes at the input.")


# ---------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=200, help="documents: the first n of the CNN/DM validation part")
    ap.add_argument("--start", type=int, default=0, help="skip the first START validation documents")
    ap.add_argument("--heads-n", type=int, default=0,
                    help="patch every BERT head too on the first HEADS_N documents (slow)")
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--out", default="/tmp/lead_to_end")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--checkpoint", default=None, help="weights file (default: the shipped one)")
    args = ap.parse_args(argv)
    if args.start + args.n > VALID_END:
        ap.error(f"--start + --n must stay within the validation part ({VALID_END}); the rest is held out")
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t_all = time.perf_counter()

    t0 = time.perf_counter()
    summarizer = Summarizer.load(checkpoint=args.checkpoint, device="cpu")
    weights = Path(args.checkpoint or DEFAULT_CHECKPOINT)
    weights_info = {"path": str(weights), "sha256": hashlib.sha256(weights.read_bytes()).hexdigest(),
                    "position_rows": getattr(summarizer.model.ext_layer.config, "position_rows", None)}
    print(f"weights {weights_info}", file=sys.stderr)
    docs = raw_form(named_split("cnndm-valid", args.data, args.start + args.n)[args.start:])
    with gzip.open(Path(args.data) / "cnndm_val.jsonl.gz", "rt", encoding="utf-8") as f:
        lines = sum(1 for _ in f)
    rows_idx = split_order(lines)[args.start:args.start + args.n].tolist()
    secs = {"data": time.perf_counter() - t0}
    print(f"{len(docs)} documents loaded ({secs['data']:.0f} s)", file=sys.stderr)

    t0 = time.perf_counter()
    rows = []
    for n, (doc, line) in enumerate(zip(docs, rows_idx)):
        try:
            r = one(summarizer, doc.text, n < args.heads_n)
        except Exception as e:  # noqa: BLE001  reported, never hidden: a failure of analysis.compare
            r = {"excluded": f"error: {type(e).__name__}: {e}"}
            print(f"  document {n} (line {line}): {r['excluded']}", file=sys.stderr)
        r = {"doc": n, "cnndm_val_line": line} | r
        rows.append(r)
        el = time.perf_counter() - t0
        ok = [x for x in rows if "delta" in x and x["delta"] is not None]
        sel = [x for x in ok if x["selected_a"]]
        print(f"[{n + 1}/{len(docs)}] {el:.0f} s, ~{el / (n + 1) * (len(docs) - n - 1):.0f} s left | "
              f"lead {r.get('lead')} Δ {r.get('delta') if r.get('delta') is None else round(r['delta'], 3)} "
              f"{r.get('status_a')}→{r.get('status_b')} | running: stays "
              f"{sum(x['selected_b'] for x in sel)}/{len(sel)}, mean Δ "
              f"{np.mean([x['delta'] for x in ok]) if ok else float('nan'):+.3f}"
              + (f" | {r['excluded']}" if "excluded" in r else ""), file=sys.stderr)
    secs["model"] = time.perf_counter() - t0
    secs["total"] = time.perf_counter() - t_all

    cmd = "PYTHONPATH=. python -m studies.lead_to_end " + " ".join(argv if argv is not None else sys.argv[1:])
    rep = {"command": cmd, "k": K, "block_trigram": BLOCK, "weights": weights_info,
           "documents": (f"Documents: CNN/DM validation part, `named_split(\"cnndm-valid\")` = lines "
                         f"`split_order({lines})[{args.start}:{args.start + args.n}]` of cnndm_val.jsonl.gz "
                         f"(0-based line numbers in `rows[].cnndm_val_line`; never the held-out test part "
                         f"`[{VALID_END}:]`), in the raw form users paste (`training.evaluate.raw_form`). The "
                         "validation part was not trained on; it was used to choose checkpoints."),
           "seconds": {k: round(v, 1) for k, v in secs.items()}, "summary": summarise(rows),
           "patch_kinds": P.PATCH_KINDS, "rows": rows}
    (out / "report.json").write_text(json.dumps(rep, indent=1))
    text = markdown(rep)
    (out / "report.md").write_text(text)
    print(text)
    return rep


if __name__ == "__main__":
    main()
