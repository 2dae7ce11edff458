"""Which explanation to trust: a scoreboard (DeYoung et al. 2020, ERASER §4). Rank a window's content
tokens by each method's importance for one sentence's score (raw attention, rollout, ALTI, gradient ×
input, optionally value zeroing), delete the top 10-50 % (every [CLS] and [SEP] kept) →
comprehensiveness = the score's drop; keep only them → sufficiency = the drop that remains; against
random orders. Once over all content tokens, once over the other sentences' tokens only (the
sentence's own words dominate otherwise). ``python -m analysis mixing FILE``: the maps of
analysis.mixing and this scoreboard."""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from analysis.device import batch_bytes
from analysis.mixing import Captured, Mixing, capture, encoded, mixing, sentence_window, value_zeroing
from model.summarizer import Encoded, Summarizer, best_part

FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5)
METHOD_NAMES = {"attention": "raw attention (last layer, mean of heads)", "rollout": "attention rollout",
                "alti": "ALTI (composed, through the sentence encoder)", "gradient": "gradient × input",
                "value_zeroing": "value zeroing (one layer)", "random": "random order"}


# ------------------------------------------------------------------ the faithfulness scoreboard

SCOPES = {"all": "all content tokens of the window",
          "other": "the other sentences' tokens only (the sentence's own always kept)"}
SCOREBOARD_METHOD = (
    "ERASER's comprehensiveness and sufficiency (DeYoung et al. 2020, §4): the window's content tokens (every "
    "[CLS] and [SEP] kept) ranked by each method's importance for the sentence's score; comprehensiveness = "
    "score − score with the top f deleted, sufficiency = score − score with only the top f kept (higher "
    "comprehensiveness and lower sufficiency = more faithful); random = the same over seeded random orders "
    "(mean and standard deviation).")


def importances(summarizer: Summarizer, cap: Captured, mix: Mixing, sentence: int, mask_heads=(),
                zeroed: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Each method's importance of the window's tokens [T] for sentence ``sentence``'s score: raw
    attention (last BERT layer, mean of the heads on, the rows its vector pools), rollout (Abnar &
    Zuidema 2020) read the same way, ALTI composed through the sentence encoder
    (``Mixing.score_to_tokens``), gradient × input with Ali et al.'s rules (the Why page's), and
    value zeroing's rows of one layer when ``zeroed`` [T, T] is given."""
    from analysis.explain import KEEP_WINDOWS, graph_passes, rollout_of, token_attributions

    enc = cap.enc
    part = best_part(enc.input_sentences, cap.scores, sentence)
    if part is None:
        raise ValueError(f"sentence {sentence + 1} is not scored (too short, or not fed): nothing to explain")
    if int(enc.part_windows()[part]) != cap.window:
        raise ValueError(f"sentence {sentence + 1} is read in BERT window {int(enc.part_windows()[part]) + 1}, "
                         f"not {cap.window + 1}")
    row = mix.pooling[list(mix.parts).index(part)]  # [T]
    active = (cap.alpha[-1].flatten(1).abs().sum(1) > 0).sum().clamp_min(1)
    att = cap.alpha[-1].sum(0).cpu().numpy() / float(active)  # [T, T]
    rolled = rollout_of(np.stack([a.half().cpu().numpy() for a in cap.alpha]), mask_heads)
    graph, scores, _, dtype = graph_passes(summarizer, enc, mask_heads, "conservative", KEEP_WINDOWS, "auto", None)
    a, b = enc.window(cap.window)
    grad = token_attributions(summarizer, enc, *graph, [sentence], mask_heads, "conservative", None, scores,
                              dtype)[sentence][a:b]
    out = {"attention": row @ att, "rollout": row @ rolled, "alti": mix.score_to_tokens(part),
           "gradient": grad}
    if zeroed is not None:
        out["value_zeroing"] = row @ zeroed
    return {k: np.asarray(v, dtype=np.float32) for k, v in out.items()}


DELETION_BATCH = 8  # scoreboard variants per forward on the CPU (a GPU: as many as fit, deleted_batch)


def deleted_batch(summarizer: Summarizer, T: int) -> int:
    """Scoreboard variants per forward: 8 on the CPU; on a GPU as many as keep one layer's
    attention [B, H, T, T] and feed-forward [B, T, D_ff] (float32) within ``batch_bytes``."""
    if summarizer.device.type != "cuda":
        return DELETION_BATCH
    cfg = summarizer.model.bert.config
    per = 4 * T * (cfg.num_attention_heads * T + cfg.intermediate_size)
    return max(DELETION_BATCH, batch_bytes(summarizer.device, 0) // per)


def deleted_scores(summarizer: Summarizer, cap: Captured, part: int, keeps: np.ndarray, mask_heads=(),
                   batch: int | None = None, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Part ``part``'s score with the window's input cut to the tokens ``keeps`` [N, T] (bool) marks, N
    variants in batches (``batch`` None: ``deleted_batch``): BERT reads the shortened window
    (segments and [CLS] positions follow their tokens), the other windows' sentence vectors stay
    (``cap.vectors``: ``mask_heads`` must be the capture's), the sentence encoder scores again. → [N]."""
    enc, w = cap.enc, cap.window
    batch = batch or deleted_batch(summarizer, keeps.shape[1])
    a, b = enc.window(w)
    bounds = enc.window_parts()
    p0, p1 = int(bounds[w]), int(bounds[w + 1])
    ids = np.array(enc.input_ids[a:b])
    segs = np.array(enc.segment_ids[a:b])
    is_cls = np.array([t == "[CLS]" for t in enc.tokens[a:b]])
    bert_gates, inter_gates = summarizer.head_mask(mask_heads)
    dev = summarizer.device
    with torch.inference_mode():
        base = cap.vectors  # [1, S, D]
        out = []
        for n in range(0, len(keeps), batch):
            rows = keeps[n:n + batch]
            width = int(rows.sum(1).max())
            t = lambda x: torch.tensor(x, dtype=torch.long, device=dev)  # noqa: E731
            pad = lambda x: np.pad(x, (0, width - len(x)))  # noqa: E731
            I = t(np.stack([pad(ids[k]) for k in rows]))
            Sg = t(np.stack([pad(segs[k]) for k in rows]))
            M = t(np.stack([pad(np.ones(int(k.sum()), dtype=np.int64)) for k in rows]))
            C = t(np.stack([np.flatnonzero(is_cls[k]) for k in rows]))  # every [CLS] is kept
            vecs = summarizer.model.sentence_vectors(I, Sg, M, C, torch.ones_like(C, dtype=torch.bool),
                                                     head_mask=bert_gates)  # [B, S_w, D]
            full = base.expand(len(rows), -1, -1).clone()
            full[:, p0:p1] = vecs
            out.append(summarizer.score_vectors(full, inter_gates)[:, part])  # stays on the device: one copy back
            if progress:
                progress(min(n + batch, len(keeps)), len(keeps))
    return torch.cat(out).float().cpu().numpy()


def faithfulness(summarizer: Summarizer, text: str | Encoded, sentence: int, mask_heads=(),
                 fractions=FRACTIONS, orders: int = 10, seed: int = 0, zeroed: np.ndarray | None = None,
                 cap: Captured | None = None, mix: Mixing | None = None,
                 progress: Callable[[int, int], None] | None = None) -> dict:
    """The scoreboard for sentence ``sentence`` (0-based) of a document (``SCOREBOARD_METHOD``), in
    the BERT window that reads it. JSON-ready: ``score``, ``fractions``, per scope ("all", "other")
    per method ``comprehensiveness`` and ``sufficiency`` [F], ``random`` with their ``mean`` and
    ``std`` [F] over ``orders`` orders, and ``aopc`` (the means over the fractions)."""
    enc = encoded(summarizer, text)
    cap = cap if cap is not None else capture(summarizer, enc, sentence_window(summarizer, enc, sentence, mask_heads),
                                              mask_heads)
    mix = mix if mix is not None else mixing(summarizer, cap)
    imp = importances(summarizer, cap, mix, sentence, mask_heads, zeroed)
    part = best_part(enc.input_sentences, cap.scores, sentence)
    a, b = enc.window(cap.window)
    tokens = enc.tokens[a:b]
    content = np.array([t not in ("[CLS]", "[SEP]") for t in tokens])
    own = np.array(enc.token_sentence[a:b]) == sentence
    rng = np.random.default_rng(seed)
    plan = []  # (scope, method, order index, candidates ranked)
    for scope, cand in (("all", np.flatnonzero(content)), ("other", np.flatnonzero(content & ~own))):
        if len(cand) == 0:
            continue
        for m, v in imp.items():
            plan.append((scope, m, 0, cand[np.argsort(-v[cand], kind="stable")]))
        plan += [(scope, "random", r, rng.permutation(cand)) for r in range(orders)]
    keeps = []
    for _, _, _, ranked in plan:
        for f in fractions:
            n = max(1, int(round(f * len(ranked))))
            for top_deleted in (True, False):
                keep = np.ones(len(tokens), dtype=bool)
                keep[ranked[:n] if top_deleted else ranked[n:]] = False
                keeps.append(keep)
    keeps = np.stack(keeps)
    by_length = np.argsort(keeps.sum(1), kind="stable")  # batches of similar lengths: little padding
    s = np.empty(len(keeps), dtype=np.float32)
    s[by_length] = deleted_scores(summarizer, cap, part, keeps[by_length], mask_heads, progress=progress)
    score = float(cap.scores[part])
    drops = (score - s).reshape(len(plan), len(fractions), 2)  # [plan, F, (comprehensiveness, sufficiency)]
    board: dict = {"score": score, "sentence": sentence, "window": cap.window, "fractions": list(fractions),
                   "orders": orders, "method": SCOREBOARD_METHOD, "names": METHOD_NAMES, "scopes": {}}
    for scope in SCOPES:
        rows = [n for n, p in enumerate(plan) if p[0] == scope]
        if not rows:
            continue
        entry = {}
        for n in rows:
            _, m, _, _ = plan[n]
            if m != "random":
                entry[m] = {"comprehensiveness": drops[n, :, 0].tolist(), "sufficiency": drops[n, :, 1].tolist(),
                            "aopc_comprehensiveness": float(drops[n, :, 0].mean()),
                            "aopc_sufficiency": float(drops[n, :, 1].mean())}
        r = drops[[n for n in rows if plan[n][1] == "random"]]  # [orders, F, 2]
        entry["random"] = {"comprehensiveness": r[:, :, 0].mean(0).tolist(), "sufficiency": r[:, :, 1].mean(0).tolist(),
                           "comprehensiveness_std": r[:, :, 0].std(0).tolist(),
                           "sufficiency_std": r[:, :, 1].std(0).tolist(),
                           "aopc_comprehensiveness": float(r[:, :, 0].mean()),
                           "aopc_sufficiency": float(r[:, :, 1].mean()),
                           "aopc_comprehensiveness_std": float(r[:, :, 0].mean(1).std()),
                           "aopc_sufficiency_std": float(r[:, :, 1].mean(1).std())}
        board["scopes"][scope] = entry
    board["verdict"] = verdict(board)
    return board


def faithfulness_gap(entry: dict) -> float:
    """One number per method: AOPC comprehensiveness − AOPC sufficiency (higher = more faithful)."""
    return entry["aopc_comprehensiveness"] - entry["aopc_sufficiency"]


def verdict(board: dict) -> str:
    """Which explanation to trust for this sentence, in one sentence."""
    entry = board["scopes"].get("all") or next(iter(board["scopes"].values()), None)
    if entry is None:
        return "Nothing to delete: the window has no content token."
    methods = {m: v for m, v in entry.items() if m != "random"}
    best = max(methods, key=lambda m: faithfulness_gap(methods[m]))
    rnd = entry["random"]
    spread = rnd["aopc_comprehensiveness_std"] + rnd["aopc_sufficiency_std"]
    margin = faithfulness_gap(methods[best]) - faithfulness_gap(rnd)
    names = board["names"]
    att = methods.get("attention")
    tail = (f"; raw attention: {faithfulness_gap(att):+.3f}" if att is not None and best != "attention" else "")
    if margin <= 2 * spread:
        return (f"No explanation clearly beats random orders here: the best, {names[best]}, scores "
                f"{faithfulness_gap(methods[best]):+.3f} against random's {faithfulness_gap(rnd):+.3f} ± {spread:.3f}"
                f"{tail}.")
    comp, suff = methods[best]["aopc_comprehensiveness"], methods[best]["aopc_sufficiency"]
    kept = (f"keeping only them lowers it by {suff:.3f}" if suff >= 0.0005 else
            f"keeping only them raises it by {-suff:.3f}" if suff <= -0.0005 else "keeping only them leaves it as it was")
    return (f"Trust {names[best]} most for this sentence: deleting its top tokens "
            + (f"lowers the score by {comp:.3f}" if comp >= 0 else f"raises the score by {-comp:.3f}")
            + f" on average, and {kept} (comprehensiveness − sufficiency "
            f"{faithfulness_gap(methods[best]):+.3f}; random {faithfulness_gap(rnd):+.3f} ± {spread:.3f}{tail}).")


# ------------------------------------------------------------------ command line

def add_arguments(parser) -> None:
    parser.add_argument("--sentence", type=int, metavar="I",
                        help="the scoreboard's sentence (0-based; default: the first selected one)")
    parser.add_argument("--window", type=int, default=0, help="the BERT window of the maps (0-based; default 0)")
    parser.add_argument("--value-zeroing", metavar="LAYER",
                        help="value zeroing of BERT layer LAYER (1-based) or of the sentence encoder's (inter:N)")
    parser.add_argument("--orders", type=int, default=10, help="random orders in the scoreboard (default 10)")
    parser.add_argument("--no-scoreboard", dest="scoreboard", action="store_false")
    parser.add_argument("--out", help="write the maps as .npz: input_ids, tokens, norm_head [L,H,T,T], norm_layer "
                                      "[L,T,T], mixing_ratio [L], alti_layer [L,T,T], alti_input [T,T], inter_alti "
                                      "[S,S], value_zeroing (when asked)")


def parse_layer(spec: str) -> int | str:
    """``"3"`` → BERT layer 2 (0-based); ``"inter:1"`` → ``"inter:0"``."""
    part, _, n = spec.rpartition(":")
    if part not in ("", "inter") or not n.isdigit() or int(n) < 1:
        raise ValueError(f"--value-zeroing {spec!r}: a BERT layer number (1-based) or inter:N")
    return f"inter:{int(n) - 1}" if part else int(n) - 1


def cli(args, summarizer: Summarizer) -> dict:
    from model.__main__ import read_text

    enc = encoded(summarizer, read_text(args.file))
    with torch.inference_mode():
        part_scores = summarizer.score(enc)
    summary = summarizer.summary(enc, part_scores, args.k, args.block)
    sentence = args.sentence if args.sentence is not None else (summary.selected or (None,))[0]
    if args.sentence is not None and not 0 <= sentence < len(summary.scores):  # (0-based here, as the option says)
        raise ValueError(f"--sentence {sentence}: the document has {len(summary.scores)} sentences, numbered 0 to "
                         f"{len(summary.scores) - 1} here")
    if args.sentence is not None and summary.scores[sentence] is None:
        raise ValueError(f"--sentence {sentence} (0-based) is not scored (too short, or not fed)")
    window = args.window if args.sentence is None else sentence_window(summarizer, enc, sentence)
    cap = capture(summarizer, enc, window)
    mix = mixing(summarizer, cap)
    arrays = mix.arrays()
    zeroed = None
    if args.value_zeroing:
        layer = parse_layer(args.value_zeroing)
        zeroed, total = value_zeroing(summarizer, cap, layer)
        arrays |= {"value_zeroing": zeroed, "value_zeroing_total": total}
        zeroed = None if isinstance(layer, str) else zeroed  # a BERT layer's rows rank tokens
    if args.out:
        np.savez_compressed(args.out, **arrays)
    out = {"sentences": list(summary.sentences), "selected": list(summary.selected), "window": window,
           "tokens": list(mix.tokens), "mixing_ratio": mix.mixing_ratio.tolist(), "out": args.out}
    if args.scoreboard and sentence is not None:
        out["scoreboard"] = faithfulness(summarizer, enc, sentence, orders=args.orders, zeroed=zeroed, cap=cap, mix=mix)
    return out
