"""Why sentence i and not sentence j (issue 61): a selection is a choice between sentences, so
explain the difference of two scores, d = score_i − score_j, as the Why page explains one score.

- **Position vs content**: with the neutral position row for both (``explain.position_scores``),
  d splits into content = neutral_i − neutral_j and position = d − content.
- **Words**: gradient × input of d with Ali et al. (2022)'s conservative rules. The attribution
  is linear in the target over one shared forward, so it is exactly attr(score_i) − attr(score_j)
  (Inseq's ``contrast_prob_diff`` idea for an extractive scorer): i against i is zero, swapping
  negates it. Or, by ``method``, Integrated Gradients or occlusion of d (``analysis.attribution``:
  their gaps and convergence delta come back as ``completeness``).
- **Heads**: the exact ablation of each head (Michel et al. 2019) on d, Δd = d(head off) − d,
  beside the gradient estimate ∂d/∂ξ.
- **A verdict** in one plain sentence.
``python -m analysis explain FILE --sentence I --versus J --json`` (0-based) prints ``contrast``."""
from __future__ import annotations

import numpy as np
import torch

from analysis import attribution as A
from analysis import explain as X
from analysis import heads as AH
from model.summarizer import CONTROL, Summarizer, best_part


def default_pair(scores: list, selected: list[int]) -> tuple[int, int]:
    """(i, j): the lowest-scored selected sentence against a skipped lead (the first scored
    sentence, when the model skipped it), else the highest-scored skipped sentence."""
    scored = [n for n, s in enumerate(scores) if s is not None]
    if not selected or len(scored) < 2:
        raise ValueError("there are not two scored sentences to compare")
    i = min(selected, key=lambda n: scores[n])
    skipped = [n for n in scored if n not in selected]
    if not skipped:
        return i, next(n for n in scored if n != i)
    j = scored[0] if scored[0] not in selected else max(skipped, key=lambda n: scores[n])
    return i, j


def contrast(summarizer: Summarizer, text: str, i: int, j: int, k: int = 3, block_trigram: bool = True,
             mask_heads=(), heads: bool = True, ablation=None, trace=None, precision: str = "auto",
             exact: bool = True, method: str = "grad-input", steps: int = A.STEPS, baseline: str = "auto") -> dict:
    """Why sentence ``i`` (0-based) and not ``j``: both scores, their difference and its parts
    (see the module's docstring). ``heads``: with the heads' effect: the gradient estimate, and
    with ``exact`` the exact ablation too (``ablation``: an ``analysis.heads.Ablation`` of this
    document, else computed). ``trace``: as ``explain``'s. ``method``: of the words (``analysis.attribution``)."""
    if method not in A.METHODS:
        raise ValueError(f"unknown method {method!r} ({', '.join(A.METHODS)})")
    by_grad = method == "grad-input"
    ex = X.explain(summarizer, text, k, block_trigram, sorted({i, j}) if by_grad else [], mask_heads, trace=trace,
                   precision=precision)
    scores, neutral = ex["scores"], ex["position_score"]
    for n in (i, j):
        if not 0 <= n < len(scores) or scores[n] is None:
            raise ValueError(f"sentence {n} is not scored (too short, or not fed): nothing to compare")
    d = scores[i] - scores[j]
    content = neutral[i] - neutral[j]
    completeness = None
    if by_grad:
        wi = np.array([w["weight"] for w in ex["attributions"][str(i)]], dtype=np.float64)
        wj = np.array([w["weight"] for w in ex["attributions"][str(j)]], dtype=np.float64)
        shown = CONTROL.sub(" ", text)  # as the model read it (the spans index it)
        words = [{"start": w["start"], "end": w["end"], "word": shown[w["start"]:w["end"]], "weight": float(x)}
                 for w, x in zip(ex["attributions"][str(i)], wi - wj)]
        method_help = ex["method"]
    else:
        a = A.attribute(summarizer, text, i, j, method, baseline, steps, mask_heads)
        words, method_help = a["words"], a["method_help"]
        completeness = {k: a[k] for k in ("gap", "sum", "baseline", "baseline_gap", "delta", "steps") if k in a}
    out = {"sentences": ex["sentences"], "spans": ex["spans"], "selected": ex["selected"], "i": i, "j": j,
           "score_i": scores[i], "score_j": scores[j], "difference": d,
           "parts": {"content": content, "position": d - content},
           "neutral_i": neutral[i], "neutral_j": neutral[j], "words": words, "method": method_help}
    if completeness is not None:
        out["completeness"] = completeness
    if heads:
        out["heads"] = head_effects(summarizer, text, i, j, mask_heads, ablation, exact)
    out["verdict"] = verdict(out)
    return out


def head_effects(summarizer: Summarizer, text: str, i: int, j: int, mask_heads=(), ablation=None,
                 exact: bool = True, method: str = "grad-input", steps: int = A.STEPS, baseline: str = "auto") -> dict:
    """Per part ("bert", "inter"): ``gradient`` [layers, heads] ∂d/∂ξ (the estimate, one backward)
    and, with ``exact``, ``ablation`` [layers, heads] Δd when the head is off (else None)."""
    enc = summarizer.encode(text, summarizer.max_windows)
    with torch.inference_mode():
        base = summarizer.score(enc, mask_heads).double().cpu().numpy()
    pi, pj = (best_part(enc.input_sentences, base, n) for n in (i, j))
    grad = AH.gate_gradients(summarizer, enc, target=lambda scores: scores[pi] - scores[pj])
    exact_d = None
    if exact:
        ablation = ablation if ablation is not None else AH.importance_ablation(summarizer, text)
        d = ablation.base_scores[pi] - ablation.base_scores[pj]
        exact_d = {part: ((s[..., pi] - s[..., pj]) - d).tolist() for part, s in ablation.scores.items()}
    return {part: {"ablation": None if exact_d is None else exact_d[part], "gradient": grad[n].tolist()}
            for n, part in enumerate(AH.PARTS)}


def top_heads(effects: dict, n: int = 3) -> list[tuple[str, int, int, float]]:
    """The heads that move the difference most: (part, layer, head, Δd exact, else ∂d/∂ξ)."""
    key = "ablation" if all(e["ablation"] is not None for e in effects.values()) else "gradient"
    rows = [(part, layer, head, float(v)) for part, e in effects.items()
            for layer, row in enumerate(e[key]) for head, v in enumerate(row)]
    return sorted(rows, key=lambda r: -abs(r[3]))[:n]


def verdict(c: dict) -> str:
    """One sentence in plain words (sentences numbered from 1)."""
    i, j, d = c["i"] + 1, c["j"] + 1, c["difference"]
    higher, lower = (i, j) if d >= 0 else (j, i)
    content, position = c["parts"]["content"], c["parts"]["position"]
    main = "what it says" if abs(content) >= abs(position) else "where it stands"
    words = sorted(c["words"], key=lambda w: -w["weight"] if d >= 0 else w["weight"])[:3]
    said = ", ".join(f"“{w['word']}”" for w in words if abs(w["weight"]) > 0) or "no single word"
    out = (f"Sentence {higher} scores {abs(d):.2f} higher than sentence {lower}, mostly because of {main} "
           f"(content {content:+.2f}, position {position:+.2f}); the words that tipped it most: {said}")
    if "heads" in c:
        part, layer, head, delta = top_heads(c["heads"], 1)[0]
        name = f"{'BERT' if part == 'bert' else 'sentence-encoder'} layer {layer + 1}, head {head + 1}"
        out += (f"; switching off {name} changes the gap most ({delta:+.2f})" if c["heads"][part]["ablation"] is not None
                else f"; by the gradient estimate, {name} matters most to the gap")
    return out + "."


def cli(args, summarizer: Summarizer) -> dict:
    """``python -m analysis explain FILE --sentence I --versus J``."""
    from model.__main__ import read_text

    if not args.sentence or len(args.sentence) != 1:
        raise ValueError("--versus J compares one --sentence I with sentence J")
    if args.versus == args.sentence[0]:  # (refused before any work: its gap to itself is 0 by definition)
        raise ValueError("--versus J must name another sentence than --sentence I: a sentence against itself "
                         "differs by nothing")
    return {"contrast": contrast(summarizer, read_text(args.file), args.sentence[0], args.versus, k=args.k,
                                 block_trigram=args.block, method=args.method, steps=args.steps,
                                 baseline=args.baseline)}
