"""Which words moved a score, by three methods, and how faithful each is (issue 73).

The target F is one sentence's score, or the gap score_i − score_j (why i and not j). Words are
the document's whitespace words (``analysis.explain.words``); a word's value is the sum over its
WordPieces. Every method works on BERT's word embeddings, the hook point ``bert.embed.word``
(positions, segments and every [CLS]/[SEP] are left as they are).

- ``grad-input``: gradient × input with Ali et al. (2022)'s conservative rules
  (``analysis.explain``; the Why page's default). Fast (one backward), not complete: the words'
  sum is not the score.
- ``integrated-gradients`` (Sundararajan et al. 2017, eq. 1): a_t = Σ_d (x − x')_td ·
  ∫₀¹ ∂F(x' + α(x − x'))/∂x_td dα, the integral by Gauss–Legendre quadrature over α (Captum's
  default rule), with the model's true gradients (no rules: they would break what follows); the
  points are doubled until the words account for the gap within 1 %.
  Completeness (their Proposition 1): Σ_t a_t = F(x) − F(x'); what is left over is Inseq's
  *convergence delta*, reported beside both gaps. The baseline x' puts an embedding at every word
  piece: [MASK]'s, [PAD]'s, or zero; ``"auto"`` takes the one whose F(x') is nearest 0, so that
  the words account for (nearly) the gap itself, not a gap to some other text.
- ``occlusion`` (Zeiler & Fergus 2014; leave one word out): a_w = F(x) − F(x with w's pieces set
  to the baseline's). One forward per word, batched.

Faithfulness (``curves``, ``compare``): rank the fed words by a method's values; **deletion**
sets the top fraction f to [MASK] and measures the drop F(x) − F(x_del); **insertion** starts from
every word at [MASK] and restores the top f, measuring the rise F(x_ins) − F(x'). AOPC (Samek et
al. 2017) is the mean over the fractions: higher is more faithful for both. Random orders give
the floor. ``compare`` runs it over documents, with percentile bootstrap 95 % intervals over
documents (``training.metrics.bootstrap_ci``): ``python -m analysis attribution FILE``.
Every tensor lives on the model's device."""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from analysis import explain as X
from model.hooks import intervene, record
from model.summarizer import CONTROL, Encoded, Summarizer, best_part

METHODS = {"grad-input": "gradient × input with Ali et al. (2022)'s conservative rules",
           "integrated-gradients": "Integrated Gradients (Sundararajan et al. 2017), Gauss–Legendre quadrature",
           "occlusion": "occlusion: each word left out (its pieces set to the baseline), the score's change"}
BASELINES = ("mask", "pad", "zero")
STEPS = 24          # Integrated Gradients' quadrature points to begin with: doubled while the convergence
TOLERANCE = 0.01    # delta is over this share of the gap it explains (up to MAX_STEPS); on the two-window
MAX_STEPS = 192     # example, 24 points leave 4.8 %, 48 leave 0.1 %
GRAD_BATCH = 4      # path points per backward (each keeps a graph through BERT)
FRACTIONS = (0.05, 0.1, 0.2, 0.3, 0.5)
ORDERS = 5          # random orders: the floor of the curves


class Attribution(dict):
    """``attribute``'s JSON-ready result, which a notebook draws (``_repr_html_``): the document with
    each word's background by its weight, blue raising the target, orange lowering it (the Why
    page's colours, viz/palette.py)."""
    RAISED, LOWERED = (33, 102, 172), (179, 88, 6)

    def __init__(self, text: str, **fields):
        super().__init__(**fields)
        self.text = text

    def _repr_html_(self) -> str:
        import html

        top = max((abs(w["weight"]) for w in self["words"]), default=0.0) or 1.0
        out, pos = [], 0
        for w in self["words"]:
            out.append(html.escape(self.text[pos:w["start"]]))
            r, g, b = self.RAISED if w["weight"] > 0 else self.LOWERED
            out.append(f'<span style="background: rgba({r},{g},{b},{0.08 + 0.72 * abs(w["weight"]) / top:.2f})" '
                       f'title="{w["weight"]:+.4f}">{html.escape(self.text[w["start"]:w["end"]])}</span>')
            pos = w["end"]
        out.append(html.escape(self.text[pos:]))
        target = f"sentence {self['i'] + 1}" + (f" − sentence {self['j'] + 1}" if self["j"] is not None else "")
        return (f"<p><b>{html.escape(self['method_help'])}</b> of the score of {target}: gap {self['gap']:.4f}, "
                f"sum of the words {self['sum']:.4f}</p>"
                f'<div style="white-space: pre-wrap; line-height: 1.7">{"".join(out)}</div>')


@dataclass
class Prepared:
    """One document, ready for perturbed forwards: its encoding, the target's parts, per window the
    model's inputs, its word embeddings x [1, T_w, D] and which positions are word pieces."""
    summarizer: Summarizer
    enc: Encoded
    parts: tuple[int, int | None]    # the target's parts: i's, and j's (None: the score itself)
    inputs: list[dict]
    x: list[torch.Tensor]
    pieces: list[torch.Tensor]       # [T_w] bool: a word piece (not [CLS]/[SEP])
    bounds: np.ndarray               # part range per window
    vecs: torch.Tensor               # [1, S, D] the sentence vectors, unperturbed
    scores: torch.Tensor             # [S] part scores, unperturbed
    gates: tuple

    def target(self, scores: torch.Tensor) -> torch.Tensor:
        """Part scores [B, S] → F [B]."""
        i, j = self.parts
        return scores[:, i] - (scores[:, j] if j is not None else 0)

    def baseline(self, name: str) -> list[torch.Tensor]:
        """x' per window [1, T_w, D]: the baseline's embedding at every word piece, x elsewhere."""
        if name not in BASELINES:
            raise ValueError(f"unknown baseline {name!r} ({', '.join(BASELINES)} or auto)")
        s = self.summarizer
        if name == "zero":
            e = torch.zeros(self.x[0].shape[-1], device=s.device)
        else:
            token = s.token_id("[MASK]" if name == "mask" else "[PAD]")
            if token is None:
                raise ValueError(f"this model's vocabulary has no {'[MASK]' if name == 'mask' else '[PAD]'} token")
            with torch.inference_mode(False), torch.no_grad():
                e = s.word_embeddings(torch.tensor(token)).float()
        return [torch.where(p[None, :, None], e.to(x.dtype), x) for x, p in zip(self.x, self.pieces)]


def prepare(summarizer: Summarizer, text: str, i: int, j: int | None = None, mask_heads=()) -> Prepared:
    """Encode ``text`` and find the parts whose scores are sentence ``i``'s (and ``j``'s; 0-based)."""
    enc = X.encode(summarizer, text)
    bert_gates, inter_gates = summarizer.head_mask(mask_heads)
    inputs, xs = [], []
    with torch.inference_mode(False), torch.no_grad():
        vecs = []
        for w in range(len(enc.window_starts)):
            inp = summarizer.window_inputs(enc, *enc.window(w))
            with record(summarizer.model, ["bert.embed.word"]) as got:
                vecs.append(summarizer.model.sentence_vectors(**inp, head_mask=bert_gates))
            inputs.append(inp)
            xs.append(got["bert.embed.word"][0].float())
        vecs = torch.cat(vecs, 1).float()
        scores = summarizer.score_vectors(vecs, inter_gates)[0].float()
    n = len(enc.sentences)
    parts = []
    for s in (i, j):
        if s is None:
            parts.append(None)
            continue
        if not 0 <= s < n:
            raise ValueError(f"no sentence {s + 1}: the document has {n} (sentences numbered from 1)")
        p = best_part(enc.input_sentences, scores, s)
        if p is None:
            raise ValueError(f"sentence {s + 1} is not scored (too short, or not fed): nothing to attribute")
        parts.append(p)
    pieces = [torch.tensor([t not in ("[CLS]", "[SEP]") for t in enc.tokens[a:b]], device=summarizer.device)
              for a, b in (enc.window(w) for w in range(len(enc.window_starts)))]
    return Prepared(summarizer, enc, tuple(parts), inputs, xs, pieces, enc.window_parts(), vecs, scores,
                    (bert_gates, inter_gates))


def scores_with(p: Prepared, embeds: dict[int, torch.Tensor]) -> torch.Tensor:
    """Part scores [B, S] with window w's word embeddings replaced by ``embeds[w]`` [B, T_w, D]
    (the other windows' sentence vectors unchanged). Differentiable where the embeddings are."""
    s, (bert_gates, inter_gates) = p.summarizer, p.gates
    B = next(iter(embeds.values())).shape[0]
    full = p.vecs.expand(B, -1, -1).clone()
    for w, e in embeds.items():
        inp = {k: v.expand(B, *v.shape[1:]) for k, v in p.inputs[w].items()}
        with intervene(s.model, {"bert.embed.word": lambda value, m, a, e=e: e.to(value.dtype)}):
            full[:, p.bounds[w]:p.bounds[w + 1]] = s.model.sentence_vectors(**inp, head_mask=bert_gates).float()
    return s.score_vectors(full, inter_gates).float()  # [B, S]


def _gap(p: Prepared, embeds: list[torch.Tensor]) -> float:
    with torch.inference_mode(False), torch.no_grad():
        return float(p.target(scores_with(p, dict(enumerate(embeds))))[0])


def choose_baseline(p: Prepared, baseline: str = "auto") -> tuple[str, dict[str, float]]:
    """The baseline to use and F(x') of each candidate considered (``"auto"``: the one nearest 0)."""
    names = [b for b in BASELINES if baseline in ("auto", b)]
    if not names:
        raise ValueError(f"unknown baseline {baseline!r} ({', '.join(BASELINES)} or auto)")
    gaps = {}
    for b in names:
        try:
            gaps[b] = _gap(p, p.baseline(b))
        except ValueError:  # (a vocabulary without [MASK]: another candidate)
            if baseline != "auto":
                raise
    return min(gaps, key=lambda b: abs(gaps[b])), gaps


def integrated_gradients(p: Prepared, baseline: list[torch.Tensor], steps: int = STEPS,
                         progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Token attributions [T] (every window, [CLS]/[SEP] 0) of F by Integrated Gradients from
    ``baseline`` (per window [1, T_w, D]), ``steps`` Gauss–Legendre points on [0, 1]."""
    nodes, weights = np.polynomial.legendre.leggauss(steps)
    alphas, weights = (nodes + 1) / 2, weights / 2  # [0, 1]; the weights sum to 1
    dev = p.summarizer.device
    total = [torch.zeros_like(x) for x in p.x]  # Σ_k w_k ∂F/∂x at α_k, per window
    with torch.inference_mode(False), torch.enable_grad():
        for n in range(0, steps, GRAD_BATCH):
            a = torch.tensor(alphas[n:n + GRAD_BATCH], dtype=torch.float32, device=dev)[:, None, None]  # [B, 1, 1]
            wk = torch.tensor(weights[n:n + GRAD_BATCH], dtype=torch.float32, device=dev)
            leaves = [(b + a * (x - b)).requires_grad_() for x, b in zip(p.x, baseline)]  # [B, T_w, D]
            F = p.target(scores_with(p, dict(enumerate(leaves))))  # [B]
            grads = torch.autograd.grad((F * wk).sum(), leaves)
            for t, g in zip(total, grads):
                t += g.sum(0, keepdim=True)
            if progress:
                progress(min(n + GRAD_BATCH, steps), steps)
    return torch.cat([((x - b) * t).sum(-1)[0] for x, b, t in zip(p.x, baseline, total)]).cpu().numpy()


def occlusion(p: Prepared, baseline: list[torch.Tensor], w: X.Words,
              progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Word attributions [W]: F(x) − F(x with the word's pieces at the baseline), for every fed word."""
    fed = np.unique(w.token_word[w.token_word >= 0])
    out = np.zeros(len(w.spans), dtype=np.float32)
    base = float(p.target(p.scores[None])[0])
    rows = [w.token_word == word for word in fed]  # [T] each
    out[fed] = base - np.concatenate(list(_scored(p, rows, baseline, progress)))
    return out


def _batch(p: Prepared) -> int:
    from analysis.faithfulness import deleted_batch

    return deleted_batch(p.summarizer, max(len(x[0]) for x in p.x))


def _scored(p: Prepared, masks: list[np.ndarray], baseline: list[torch.Tensor],
            progress: Callable[[int, int], None] | None = None):
    """F with the tokens each mask [T] marks set to the baseline: yields F [B] per batch."""
    batch = _batch(p)
    starts = [p.enc.window(w)[0] for w in range(len(p.x))] + [len(p.enc.tokens)]
    dev = p.summarizer.device
    with torch.inference_mode():
        for n in range(0, len(masks), batch):
            m = np.stack(masks[n:n + batch])  # [B, T]
            embeds = {}
            for w, (x, b) in enumerate(zip(p.x, baseline)):
                mw = m[:, starts[w]:starts[w + 1]]
                if mw.any():
                    mt = torch.from_numpy(mw).to(dev)[:, :, None]
                    embeds[w] = torch.where(mt, b, x)  # [B, T_w, D]
            yield (p.target(scores_with(p, embeds)) if embeds else p.target(p.scores[None]).expand(len(m))).cpu().numpy()
            if progress:
                progress(min(n + batch, len(masks)), len(masks))


def attribute(summarizer: Summarizer, text: str, i: int, j: int | None = None, method: str = "grad-input",
              baseline: str = "auto", steps: int = STEPS, mask_heads=(),
              progress: Callable[[int, int], None] | None = None, tolerance: float = TOLERANCE) -> dict:
    """Every word's attribution to sentence ``i``'s score (0-based), or with ``j`` to the gap
    score_i − score_j, by ``method`` (``METHODS``). JSON-ready: ``words`` [{start, end, word,
    weight}], ``gap`` F(x), ``sum`` of the words' weights, and for Integrated Gradients and
    occlusion the ``baseline``, its ``baseline_gap`` F(x') (and every candidate's, ``baselines``);
    for Integrated Gradients ``delta`` = sum − (gap − baseline_gap), the convergence delta (the points
    are doubled while it is over ``tolerance`` × the gap it explains)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r} ({', '.join(METHODS)})")
    if j is not None and j == i:
        raise ValueError("a sentence against itself differs by nothing: pick two sentences")
    if steps < 2:
        raise ValueError("Integrated Gradients needs at least 2 steps")
    p = prepare(summarizer, text, i, j, mask_heads)
    w = X.words(summarizer, p.enc, text)
    gap = float(p.target(p.scores[None])[0])
    shown = CONTROL.sub(" ", text)
    out = Attribution(shown, method=method, method_help=METHODS[method], i=i, j=j, gap=gap)
    if method == "grad-input":
        a = X.attribute(summarizer, text, [s for s in (i, j) if s is not None], mask_heads, progress)
        weights = np.array([x.weight for x in a[i]], dtype=np.float64)
        if j is not None:
            weights = weights - np.array([x.weight for x in a[j]], dtype=np.float64)
    else:
        name, gaps = choose_baseline(p, baseline)
        base = p.baseline(name)
        out |= {"baseline": name, "baseline_gap": gaps[name], "baselines": gaps}
        if method == "integrated-gradients":
            while True:  # more points until the words account for the gap (Captum's advice on a large delta)
                weights = X.word_weights(w, integrated_gradients(p, base, steps, progress)).astype(np.float64)
                moved = gap - gaps[name]
                if abs(weights.sum() - moved) <= tolerance * abs(moved) or steps * 2 > MAX_STEPS:
                    break
                steps *= 2
            out["steps"] = steps
        else:
            weights = occlusion(p, base, w, progress).astype(np.float64)
    out["words"] = [{"start": int(a), "end": int(b), "word": shown[a:b], "weight": float(x)}
                    for (a, b), x in zip(w.spans, weights)]
    out["sum"] = float(weights.sum())
    if method == "integrated-gradients":
        out["delta"] = out["sum"] - (gap - out["baseline_gap"])
    return out


# ------------------------------------------------------------------ faithfulness

def curves(summarizer: Summarizer, text: str, i: int, rankings: dict[str, np.ndarray], fractions=FRACTIONS,
           orders: int = ORDERS, seed: int = 0, mask_heads=(),
           progress: Callable[[int, int], None] | None = None) -> dict:
    """Deletion and insertion curves of sentence ``i``'s score for each method's word weights
    (``rankings``: name → [W]), and for ``orders`` seeded random orders (the floor); ``progress(done,
    total)`` after each batch of masked copies scored. JSON-ready:
    ``score``, ``masked`` (every fed word at [MASK]), ``fractions``, per method ``deletion`` and
    ``insertion`` [F] and their ``aopc_deletion`` / ``aopc_insertion``."""
    p = prepare(summarizer, text, i, None, mask_heads)
    w = X.words(summarizer, p.enc, text)
    base = p.baseline("mask")
    fed = np.unique(w.token_word[w.token_word >= 0])
    if len(fed) == 0:
        raise ValueError("no word of the document is fed to the model")
    rng = np.random.default_rng(seed)
    plans = {m: fed[np.argsort(-np.asarray(v)[fed], kind="stable")] for m, v in rankings.items()}
    plans |= {f"random {r}": rng.permutation(fed) for r in range(orders)}
    masks, keys = [], []
    for m, ranked in plans.items():
        for f in fractions:
            top = np.isin(w.token_word, ranked[:max(1, int(round(f * len(ranked))))])
            masks += [top, (w.token_word >= 0) & ~top]  # deleted: the top words; inserted: all but them
            keys += [(m, f, "deletion"), (m, f, "insertion")]
    masks.append(w.token_word >= 0)  # every word masked: F(x')
    F = np.concatenate(list(_scored(p, masks, base, progress)))
    score, masked = float(p.scores[p.parts[0]]), float(F[-1])
    got = dict(zip(keys, F[:-1]))
    out = {"score": score, "masked": masked, "fractions": list(fractions), "words": int(len(fed)), "methods": {}}
    for m in [*rankings, "random"]:
        names = [m] if m != "random" else [f"random {r}" for r in range(orders)]
        d = np.mean([[score - got[(n, f, "deletion")] for f in fractions] for n in names], 0)
        ins = np.mean([[got[(n, f, "insertion")] - masked for f in fractions] for n in names], 0)
        out["methods"][m] = {"deletion": d.tolist(), "insertion": ins.tolist(),
                             "aopc_deletion": float(d.mean()), "aopc_insertion": float(ins.mean())}
    return out


def compare(summarizer: Summarizer, texts: list[str], methods=tuple(METHODS), steps: int = STEPS,
            orders: int = ORDERS, progress: Callable[[int, int], None] | None = None) -> dict:
    """Each method's deletion and insertion AOPC over documents (each document's top-scored
    sentence), with the mean and its bootstrap 95 % interval over documents, and the random floor."""
    per_doc, skipped = [], []
    for n, text in enumerate(texts):
        try:
            summary = summarizer.summarize(text)
        except ValueError as e:
            skipped.append({"document": n, "why": str(e)})
            continue
        if not summary.selected:
            skipped.append({"document": n, "why": "no sentence selected"})
            continue
        i = max(summary.selected, key=lambda s: summary.scores[s])
        ranks = {m: np.array([x["weight"] for x in attribute(summarizer, text, i, None, m, steps=steps)["words"]])
                 for m in methods}
        c = curves(summarizer, text, i, ranks, orders=orders)
        per_doc.append({"document": n, "sentence": i, **{m: {k: v["aopc_" + k] for k in ("deletion", "insertion")}
                                                         for m, v in c["methods"].items()}})
        if progress:
            progress(n + 1, len(texts))
    if not per_doc:
        raise ValueError("no document could be summarized: " + "; ".join(s["why"] for s in skipped[:3]))
    return {"documents": len(per_doc), "skipped": skipped, "fractions": list(FRACTIONS), "orders": orders,
            "steps": steps, **aopc_table(per_doc, methods), "per_document": per_doc,
            "method": "AOPC of the top-scored sentence's score: deletion (top words set to [MASK], mean drop) and "
                      "insertion (from every word at [MASK], top words restored, mean rise) over fractions "
                      f"{', '.join(f'{f:g}' for f in FRACTIONS)} of the fed words; higher is more faithful; "
                      "95 % percentile bootstrap intervals over documents"}


def aopc_table(per_doc: list[dict], methods) -> dict:
    """``aopc``: per method (and random) the mean deletion and insertion AOPC over documents with its
    bootstrap 95 % interval; ``versus_random``: each method's paired difference to random's."""
    from training.metrics import bootstrap_ci

    ci = lambda xs: dict(zip(("mean", "low", "high"), bootstrap_ci(xs)))  # noqa: E731
    keys = ("deletion", "insertion")
    return {"aopc": {m: {k: ci([d[m][k] for d in per_doc]) for k in keys} for m in [*methods, "random"]},
            "versus_random": {m: {k: ci([d[m][k] - d["random"][k] for d in per_doc]) for k in keys} for m in methods}}


# ------------------------------------------------------------------ command line

def add_arguments(parser) -> None:
    parser.add_argument("--methods", default=",".join(METHODS),
                        help=f"comma-separated, of {', '.join(METHODS)} (default: all)")
    parser.add_argument("--steps", type=int, default=STEPS, help=f"Integrated Gradients' steps (default {STEPS})")
    parser.add_argument("--orders", type=int, default=ORDERS, help=f"random orders, the floor (default {ORDERS})")
    parser.add_argument("--limit", type=int, help="at most this many documents of a JSONL file")
    parser.add_argument("--split", help="with a JSONL: only its rows of this \"split\" (e.g. test)")


def read_documents(path: str, limit: int | None = None, split: str | None = None) -> list[str]:
    """A text file (one document), or JSONL (.gz too) with a "text" or "article" field per line
    (``split``: only rows whose "split" is that)."""
    from model.__main__ import read_text

    if not path.endswith((".jsonl", ".jsonl.gz")):
        return [read_text(path)]
    import gzip

    out = []
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if limit is not None and len(out) >= limit:
                break
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                text = row.get("text") or row["article"]
            except (json.JSONDecodeError, KeyError, AttributeError, TypeError):
                raise ValueError(f"{path}, line {n}: not a JSON object with a \"text\" or \"article\" field") from None
            if split is None or row.get("split") == split:
                out.append(text)
    if not out:
        raise ValueError(f"{path}: no document" + (f" of split {split!r}" if split else ""))
    return out


def cli(args, summarizer: Summarizer) -> dict:
    """``python -m analysis attribution FILE``: the methods' faithfulness over the file's documents."""
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods:
        raise ValueError(f"--methods: {', '.join(unknown) or 'none given'} (of {', '.join(METHODS)})")
    from tqdm import tqdm

    documents = read_documents(args.file, args.limit, args.split)
    with tqdm(total=len(documents), desc="attribution", unit="doc", file=sys.stderr) as bar:
        return {"faithfulness": compare(summarizer, documents, methods, args.steps, args.orders,
                                        lambda done, total: bar.update(done - bar.n))}


def explain_cli(args, summarizer: Summarizer) -> dict:
    """``python -m analysis explain FILE --method integrated-gradients|occlusion``: ``explain``'s
    object with the words by that method, and each sentence's ``completeness`` (gap, sum, baseline,
    convergence delta)."""
    from model.__main__ import read_text

    text = read_text(args.file)
    ex = X.explain(summarizer, text, k=args.k, block_trigram=args.block, sentences=[])
    sentences = ([i for i, s in enumerate(ex["scores"]) if s is not None] if args.all
                 else args.sentence if args.sentence else ex["selected"])
    ex["attributions"], ex["completeness"] = {}, {}
    for i in sentences:
        a = attribute(summarizer, text, i, None, args.method, args.baseline, args.steps)
        ex["attributions"][str(i)] = [{k: w[k] for k in ("start", "end", "weight")} for w in a["words"]]
        ex["completeness"][str(i)] = {k: a[k] for k in ("gap", "sum", "baseline", "baseline_gap", "delta", "steps")
                                      if k in a}
    ex["method"] = METHODS[args.method]
    ex.pop("precision", None)  # (of grad-input's gradients: these run in float32)
    return ex
