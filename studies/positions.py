"""Which sentence-position treatment should inference use? (issue 26, "What a checkpoint never saw")

The shipped weights were trained on each document's first 512-token BERT window only
(``Summarizer.encode(text, 1)``), so the sentence encoder's sinusoid rows (model/inter_encoder.py)
were trained only for the row numbers a first window holds. The app reads whole documents
(``max_windows=None``) and gave sentence part i row i, however far past the first window it was.
This measures, without retraining, position treatments at inference:

  a  whole      whole document, row = part index (the app before; the shipped weights now
                carry position_rows = R + 1, i.e. c)
  b  first512   first 512-token window only (BertSum as trained: ``max_windows=1``)
  c  clamp      whole document, row = min(i, R): past the last trained row R, the row R
  c' clampmax   the same with R = the largest row any training first window had
  d  restart    whole document, rows restart at 0 in every BERT window
  e  interp     whole document, positions squeezed into [0, R] when S - 1 > R (position
                interpolation, Chen et al. 2023: fractional positions of the same sinusoid)

"Last trained row" R: the first windows of the training documents (CNN/DM train, PTB form,
``encode(text, 1)``, parts fed) hold S0 sentence parts, so row r was trained in the documents
with S0 > r. R = the largest row present in at least ``--coverage`` (1%) of the training
documents (= the 99th percentile of S0, minus 1); R_max = max S0 - 1.

One BERT pass per document (all windows); every treatment reruns only the sentence encoder on
the same sentence vectors with its own ``pe`` (``Summarizer.score_vectors(vecs, None, pe)``).
Position share of a sentence = its score - its score when every part gets the mean of the
treatment's rows (``analysis.explain.position_scores``' "neutral", generalised to any rows).

    PYTHONPATH=. python -m studies.positions --n 2000 --out /tmp/positions --threads 1     # ~20 min
    PYTHONPATH=. python -m studies.positions --n 500 --R 26 --R-max 43 \
        --treatments clamp@16 clamp@20 clamp@23 clamp clamp@30 clamp@35 clampmax --out /tmp/positions/clamp_sweep
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch

from analysis.explain import position_rows
from model.inter_encoder import sinusoidal_table
from model.summarizer import Encoded, Summarizer, select, sentence_scores

from training.data import DEFAULT_DATA, REPO, VALID_END, bbc_docs, named_split, read_jsonl, split_order
from training.evaluate import lead, raw_form
from training.metrics import KEYS, bootstrap_ci, rouge_per_doc

TREATMENTS = ("whole", "first512", "clamp", "clampmax", "restart", "interp")
LABELS = {"whole": "(a) whole document, row = index (app before)", "first512": "(b) first 512 tokens (BertSum)",
          "clamp": "(c) clamp at R (1% coverage; app now)", "clampmax": "(c') clamp at R_max",
          "restart": "(d) restart rows per window", "interp": "(e) interpolate into [0, R]"}


def label(t: str) -> str:
    if t.startswith("clamp@"):
        return f"clamp at row {t[6:]}"
    return LABELS.get(t, "Lead-3 (reference)")


EXAMPLE = REPO / "examples" / "bbc_call_centres.txt"


# ---------------------------------------------------------------- the pe of each treatment

def sinusoid_at(pos: torch.Tensor, d: int) -> torch.Tensor:
    """The sinusoid rows of (possibly fractional) positions pos [S] → [S, d]; for integer
    positions exactly the rows of ``sinusoidal_table`` (same formula, same float ops)."""
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float) * -(math.log(10000.0) / d))  # [d/2]
    pe = torch.zeros(len(pos), d)
    pe[:, 0::2] = torch.sin(pos.float()[:, None] * div)
    pe[:, 1::2] = torch.cos(pos.float()[:, None] * div)
    return pe  # [S, d]


def positions(treatment: str, enc: Encoded, R: int, R_max: int) -> torch.Tensor:
    """The sentence positions [S'] a treatment gives the document's parts (S' = n0 for
    ``first512``: only the parts of window 0 are scored)."""
    S = len(enc.cls_positions)
    i = torch.arange(S)
    if treatment == "whole":
        return i
    if treatment == "first512":
        return i[: int((enc.part_windows() == 0).sum())]
    if treatment == "clamp":
        return i.clamp(max=R)
    if treatment == "clampmax":
        return i.clamp(max=R_max)
    if treatment.startswith("clamp@"):
        return i.clamp(max=int(treatment[6:]))
    if treatment == "restart":
        w = torch.from_numpy(enc.part_windows())
        first = torch.tensor([int((w < k).sum()) for k in range(int(w.max()) + 1)])  # first part of each window
        return i - first[w]
    if treatment == "interp":
        return i * (R / (S - 1)) if S - 1 > R else i
    raise ValueError(treatment)


def treatment_scores(summarizer: Summarizer, vecs: torch.Tensor, pos: torch.Tensor) -> tuple[list, list, list]:
    """Part scores [S'] with the rows of ``pos``; with every part at the mean of those rows
    ("neutral"); and the mean over 8 seeded shuffles of those rows ("shuffled"): the two
    position baselines of ``analysis.explain.position_rows``, applied to this treatment's rows.
    One batched pass of the sentence encoder."""
    rows = sinusoid_at(pos, vecs.shape[-1])  # [S', D]
    pe = torch.cat([position_rows(rows, m) for m in ("real", "neutral", "shuffled")])  # [10, S', D]
    v = vecs[:, : len(pos)].expand(len(pe), -1, -1)  # [10, S', D]
    out = summarizer.score_vectors(v, None, pe)  # [10, S']
    return out[0].tolist(), out[1].tolist(), out[2:].mean(0).tolist()


# ---------------------------------------------------------------- what training saw

def first_window_counts(summarizer: Summarizer, texts) -> np.ndarray:
    """S0 per document: the sentence parts fed in its first 512-token window (training's input)."""
    return np.array([len(summarizer.encode(t, 1).cls_positions) for t in texts])


def coverage_stats(s0: np.ndarray, coverage: float) -> dict:
    pct = {f"p{q:g}": float(np.percentile(s0, q)) for q in (50, 90, 95, 99, 99.9)}
    rows = np.arange(int(s0.max()))
    present = np.array([(s0 > r).mean() for r in rows])  # share of documents that trained row r
    return {"n_docs": int(len(s0)), "mean": float(s0.mean()), **pct, "max": int(s0.max()),
            "R": int(rows[present >= coverage].max()), "R_max": int(s0.max()) - 1,
            "row_share": {int(r): float(p) for r, p in zip(rows, present)}}


def trained_rows(summarizer: Summarizer, data: Path, coverage: float, train_n: int | None) -> dict:
    out = {}
    rows = read_jsonl(data / "cnndm_train.jsonl.gz")
    order = split_order(len(rows))[:train_n]
    out["cnndm_train_ptb"] = coverage_stats(first_window_counts(summarizer, (rows[j]["article"] for j in order)), coverage)
    rows = read_jsonl(data / "cnndm_val.jsonl.gz")
    order = split_order(len(rows))[:VALID_END]  # the validation part only, never the held-out test
    out["cnndm_val_ptb"] = coverage_stats(first_window_counts(summarizer, (rows[j]["article"] for j in order)), coverage)
    out["bbc_train"] = coverage_stats(first_window_counts(summarizer, (d.text for d in bbc_docs(data, "train"))), coverage)
    return out


# ---------------------------------------------------------------- evaluation

def evaluate_docs(summarizer: Summarizer, docs, R: int, R_max: int, treatments=TREATMENTS, k: int = 3) -> dict:
    """Every treatment on every document (one BERT pass each): picks, per-document ROUGE, the
    share of selected sentences past the first window and their position share."""
    picks = {t: [] for t in treatments}
    past_sel = {t: [] for t in treatments}   # per selected sentence: past the first window?
    past_share = {t: [] for t in treatments}  # position share of selected past-window sentences (neutral)
    past_share_sh = {t: [] for t in treatments}  # the same against shuffled rows
    multi = []
    prof = {t: {} for t in treatments}  # row → [parts, oracle positives, sum score, sum share, past window 0]
    for doc in docs:
        enc = summarizer.encode(doc.text, None)
        assert len(enc.sentences) == len(doc.sentences), "summarizer split differs from data split"
        sents = tuple(s.strip() for s in enc.sentences)
        end0 = enc.window(0)[1]
        past = set(enc.sentences_past(summarizer.trained_tokens))  # as Summary.past_training
        multi.append(len(enc.window_starts) > 1)
        with torch.inference_mode():
            vecs = summarizer.sentence_vectors(enc)[0]  # [1, S, D]
            for t in treatments:
                pos = positions(t, enc, R, R_max)
                real, neutral, shuffled = treatment_scores(summarizer, vecs, pos)
                scores, base, base_sh = (sentence_scores(enc.input_sentences[:len(pos)], len(sents), x)
                                         for x in (real, neutral, shuffled))
                chosen = select(scores, sents, k, True)
                picks[t].append(chosen)
                for j, (r, x, b) in enumerate(zip(pos.tolist(), real, neutral)):
                    acc = prof[t].setdefault(int(r), [0, 0, 0.0, 0.0, 0])
                    acc[0] += 1
                    acc[1] += doc.labels[enc.input_sentences[j]]
                    acc[2] += x
                    acc[3] += x - b
                    acc[4] += enc.cls_positions[j] >= end0
                past_sel[t] += [i in past for i in chosen]
                past_share[t] += [scores[i] - base[i] for i in chosen if i in past]
                past_share_sh[t] += [scores[i] - base_sh[i] for i in chosen if i in past]
    refs = [d.reference for d in docs]
    rouge = {t: rouge_per_doc([[doc.sentences[i].strip() for i in p] for doc, p in zip(docs, picks[t])], refs)
             for t in treatments}
    rouge["lead3"] = rouge_per_doc([[doc.sentences[i].strip() for i in lead(doc, k)] for doc in docs], refs)
    profile = {t: {r: {"parts": a[0], "oracle_rate": a[1] / a[0], "mean_score": a[2] / a[0],
                       "mean_position_share": a[3] / a[0], "past_window0": a[4] / a[0]}
                   for r, a in sorted(p.items())} for t, p in prof.items()}
    return {"picks": picks, "rouge": rouge, "multi": np.array(multi), "past_sel": past_sel, "past_share": past_share,
            "past_share_shuffled": past_share_sh, "profile": profile}


def summarise(res: dict, ci_n: int = 2000) -> dict:
    out, multi = {}, res["multi"]
    a = res["rouge"]["whole"]
    for t in list(res["picks"]) + ["lead3"]:
        r = res["rouge"][t]
        e = {"label": label(t),
             "rouge": {key: dict(zip(("mean", "low", "high"), bootstrap_ci(r[:, j], n=ci_n))) for j, key in enumerate(KEYS)}}
        if t != "whole":
            e["delta_vs_a"] = {key: dict(zip(("mean", "low", "high"), bootstrap_ci(r[:, j] - a[:, j], n=ci_n)))
                               for j, key in enumerate(KEYS)}
            if multi.any():
                e["delta_vs_a_multiwindow"] = {key: dict(zip(("mean", "low", "high"),
                                                             bootstrap_ci(r[multi, j] - a[multi, j], n=ci_n)))
                                               for j, key in enumerate(KEYS)}
        if t in res["picks"]:
            sel = res["past_sel"][t]
            e["selected_past_first_window"] = float(np.mean(sel)) if sel else 0.0
            e["n_selected"] = len(sel)
            sh = res["past_share"][t]
            e["past_position_share_mean"] = float(np.mean(sh)) if sh else None
            sh = res["past_share_shuffled"][t]
            e["past_position_share_shuffled_mean"] = float(np.mean(sh)) if sh else None
            e["docs_differing_from_a"] = float(np.mean([p != q for p, q in zip(res["picks"][t], res["picks"]["whole"])]))
        out[t] = e
    return out


def example(summarizer: Summarizer, path: Path, sentence: int, R: int, R_max: int, treatments=TREATMENTS,
            k: int = 3) -> dict:
    """Score, neutral score and position share of one sentence (1-based, as the app) per treatment."""
    text = path.read_text(encoding="utf-8")
    enc = summarizer.encode(text, None)
    i = sentence - 1
    j = list(enc.input_sentences).index(i)  # its (first) part
    sents = tuple(s.strip() for s in enc.sentences)
    out = {"file": str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path), "sentence": sentence,
           "windows": len(enc.window_starts), "parts": len(enc.cls_positions),
           "part_window": int(enc.part_windows()[j]), "treatments": {}}
    with torch.inference_mode():
        vecs = summarizer.sentence_vectors(enc)[0]  # [1, S, D]
        for t in treatments:
            pos = positions(t, enc, R, R_max)
            n = len(pos)
            scores, base, base_sh = (sentence_scores(enc.input_sentences[:n], len(sents), x)
                                     for x in treatment_scores(summarizer, vecs, pos))
            out["treatments"][t] = {
                "row": float(pos[j]) if j < n else None,
                "score": scores[i], "neutral_score": base[i],
                "position_share": None if scores[i] is None else scores[i] - base[i],
                "shuffled_score": base_sh[i],
                "position_share_shuffled": None if scores[i] is None else scores[i] - base_sh[i],
                "selected_1based": [s + 1 for s in select(scores, sents, k, True)]}
        # the sentence alone moved to row r (every other part keeps its row of (a)): its score
        S, d = vecs.shape[1:]
        rows = sinusoid_at(torch.arange(S), d)  # [S, D]
        sweep = torch.arange(0, max(S, R_max + 1) + 8)
        pe = rows.expand(len(sweep), S, d).clone()  # [n, S, D]
        pe[:, j] = sinusoid_at(sweep, d)
        part = summarizer.score_vectors(vecs.expand(len(sweep), S, d), None, pe)[:, j]  # [n]
        out["row_sweep"] = {int(r): float(x) for r, x in zip(sweep, part)}
    return out


# ---------------------------------------------------------------- report

def fmt_ci(d: dict) -> str:
    return f"{d['mean']:.2f} [{d['low']:.2f}, {d['high']:.2f}]"


def fmt_delta(d: dict) -> str:
    return f"{d['mean']:+.2f} [{d['low']:+.2f}, {d['high']:+.2f}]"


def markdown(rep: dict) -> str:
    md = [f"Command: `{rep['command']}`", ""]
    tr = rep["trained_rows"]
    md += ["**Sentence parts in the first 512-token window (what training fed; `encode(text, 1)`)**", "",
           "| documents | n | mean | p50 | p90 | p95 | p99 | p99.9 | max | R (row in >= 1%) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"] if tr else []
    for name, s in tr.items():
        md.append(f"| {name} | {s['n_docs']} | {s['mean']:.1f} | {s['p50']:g} | {s['p90']:g} | {s['p95']:g} | "
                  f"{s['p99']:g} | {s['p99.9']:g} | {s['max']} | {s['R']} |")
    md += ["", f"R = {rep['R']}, R_max = {rep['R_max']} (0-based rows, "
           + ("from cnndm_train_ptb)." if tr else "given with --R/--R-max, not measured in this run)."), ""]
    ev = rep["evaluation"]
    md += [f"**ROUGE on {rep['n_docs']} CNN/DM validation documents (cnndm_val split_order[{rep['start']}:"
           f"{rep['start'] + rep['n_docs']}], raw form), top-3, trigram blocking; {rep['n_multiwindow']} of them "
           "have more than one window**", "",
           "| treatment | R1 [95% CI] | R2 [95% CI] | RLsum [95% CI] | Δ R1 vs (a) | Δ R2 vs (a) | Δ RLsum vs (a) "
           "| Δ R1 vs (a), multi-window docs | selected past window 0 | docs ≠ (a) "
           "| position share of selected past-window sentences: neutral / shuffled |",
           "|---|---|---|---|---|---|---|---|---:|---:|---:|"]
    for t, e in ev.items():
        r = e["rouge"]
        d = e.get("delta_vs_a")
        dm = e.get("delta_vs_a_multiwindow")
        md.append(f"| {e['label']} | " + " | ".join(fmt_ci(r[key]) for key in KEYS) + " | "
                  + (" | ".join(fmt_delta(d[key]) for key in KEYS) if d else "— | — | —") + " | "
                  + (fmt_delta(dm["rouge1"]) if dm else "—") + " | "
                  + (f"{100 * e['selected_past_first_window']:.1f}%" if "n_selected" in e else "—") + " | "
                  + (f"{100 * e['docs_differing_from_a']:.1f}%" if "n_selected" in e else "—") + " | "
                  + (f"{e['past_position_share_mean']:+.3f} / {e['past_position_share_shuffled_mean']:+.3f}"
                     if e.get("past_position_share_mean") is not None else "—") + " |")
    ex = rep["example"]
    md += ["", f"**{ex['file']}, sentence {ex['sentence']} (window {ex['part_window'] + 1} of {ex['windows']}, "
           f"{ex['parts']} parts)**", "",
           "| treatment | its row | score | score, neutral rows | position share (neutral) "
           "| score, shuffled rows | position share (shuffled) | selected (1-based) |",
           "|---|---:|---:|---:|---:|---:|---:|---|"]
    for t, e in ex["treatments"].items():
        num = lambda x: "not scored" if x is None else f"{x:.3f}"  # noqa: E731
        row = "—" if e["row"] is None else f"{e['row']:.2f}"
        share = "—" if e["position_share"] is None else f"{e['position_share']:+.3f}"
        share_sh = "—" if e["position_share_shuffled"] is None else f"{e['position_share_shuffled']:+.3f}"
        md.append(f"| {label(t)} | {row} | {num(e['score'])} | {num(e['neutral_score'])} | {share} | "
                  f"{num(e['shuffled_score'])} | {share_sh} | {e['selected_1based']} |")
    sw = ex["row_sweep"]
    md += ["", f"Sentence {ex['sentence']}'s score with only its own row moved to r (the other parts keep (a)'s rows):", "",
           "| r | " + " | ".join(str(r) for r in sw) + " |", "|---|" + "---:|" * len(sw),
           "| score | " + " | ".join(f"{x:.2f}" for x in sw.values()) + " |"]
    cov = tr["cnndm_train_ptb"]["row_share"] if tr else {}
    md += ["", "**Per row under (a), validation documents above** (oracle rate: share of parts at that row in the "
           "raw-form oracle; train share: training first windows that had that row)", "",
           "| row | parts | past window 0 | oracle rate | mean score | mean position share | train share |",
           "|---:|---:|---:|---:|---:|---:|---:|"]
    for r, p in rep["profile"]["whole"].items():
        if int(r) > 45:
            break
        md.append(f"| {r} | {p['parts']} | {100 * p['past_window0']:.0f}% | {p['oracle_rate']:.3f} | "
                  f"{p['mean_score']:.3f} | {p['mean_position_share']:+.3f} | "
                  + (f"{100 * cov.get(int(r), cov.get(str(r), 0.0)):.2f}% |" if cov else "— |"))
    md += ["", f"Times: {json.dumps(rep['seconds'])}"]
    return "\n".join(md) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--checkpoint", default=None, help="weights (default: the shipped ones)")
    ap.add_argument("--n", type=int, default=500, help="validation documents to score")
    ap.add_argument("--start", type=int, default=0, help="first validation document (split order)")
    ap.add_argument("--train-n", type=int, default=None, help="training documents for the row counts (default all)")
    ap.add_argument("--coverage", type=float, default=0.01, help="R = the last row in at least this share of documents")
    ap.add_argument("--example", default=str(EXAMPLE))
    ap.add_argument("--sentence", type=int, default=27, help="the example's sentence, 1-based")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default="/tmp/positions")
    ap.add_argument("--treatments", nargs="+", default=list(TREATMENTS),
                    help=f"any of {' '.join(TREATMENTS)} and clamp@N (clamp at row N, 0-based); whole is always run")
    ap.add_argument("--R", type=int, default=None, help="take R (and --R-max) as given instead of measuring them")
    ap.add_argument("--R-max", type=int, default=None)
    args = ap.parse_args(argv)
    if args.start + args.n > VALID_END:
        ap.error(f"--start + --n must stay within the validation part ({VALID_END}); the rest is held out")
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = Path(args.data)
    summarizer = Summarizer.load(checkpoint=args.checkpoint, device="cpu")
    table = sinusoidal_table(64, summarizer.model.ext_layer.config.d_model)
    assert torch.equal(sinusoid_at(torch.arange(64), table.shape[1]), table), "sinusoid_at differs from the table"
    secs = {}

    treatments = ["whole"] + [t for t in args.treatments if t != "whole"]
    for t in treatments:
        if t not in TREATMENTS and not (t.startswith("clamp@") and t[6:].isdigit()):
            ap.error(f"unknown treatment {t!r}")
    t0 = time.perf_counter()
    if args.R is not None:
        tr, R, R_max = {}, args.R, args.R_max if args.R_max is not None else args.R
    else:
        tr = trained_rows(summarizer, data, args.coverage, args.train_n)
        R, R_max = tr["cnndm_train_ptb"]["R"], tr["cnndm_train_ptb"]["R_max"]
    secs["trained_rows"] = round(time.perf_counter() - t0, 1)
    print(f"R = {R}, R_max = {R_max} ({secs['trained_rows']} s)", file=sys.stderr)

    t0 = time.perf_counter()
    ex = example(summarizer, Path(args.example), args.sentence, R, R_max, treatments)
    secs["example"] = round(time.perf_counter() - t0, 1)

    t0 = time.perf_counter()
    docs = raw_form(named_split("cnndm-valid", data, args.start + args.n)[args.start:])
    secs["data"] = round(time.perf_counter() - t0, 1)
    t0 = time.perf_counter()
    res = evaluate_docs(summarizer, docs, R, R_max, treatments)
    secs["model"] = round(time.perf_counter() - t0, 1)
    ev = summarise(res)

    cmd = "PYTHONPATH=. python -m studies.positions " + " ".join(argv if argv is not None else sys.argv[1:])
    rep = {"command": cmd, "R": R, "R_max": R_max, "coverage": args.coverage, "trained_rows": tr,
           "n_docs": len(docs), "start": args.start, "n_multiwindow": int(res["multi"].sum()),
           "evaluation": ev, "example": ex, "seconds": secs, "profile": res["profile"],
           "per_doc": {t: np.round(r, 3).tolist() for t, r in res["rouge"].items()},
           "picks": {t: [list(p) for p in ps] for t, ps in res["picks"].items()}, "multiwindow": res["multi"].tolist()}
    (out / "report.json").write_text(json.dumps(rep))
    text = markdown(rep)
    (out / "report.md").write_text(text)
    print(text)
    return rep


if __name__ == "__main__":
    main()
