"""Which heads matter: statistics of every head's attention on this document, and how much each
head matters to the summary.

* Statistics (Clark et al. 2019, "What does BERT look at?", §3): the average attention of a head
  to a class of tokens is the mean over query tokens of the summed weight on the keys of that
  class ([CLS], [SEP], punctuation, the previous / next token, the same / other sentences);
  its entropy is the mean over query rows of -Σ_j a_ij log a_ij (nats). From a ``Trace`` (no model).
  [CLS], [SEP] and rollout match clarkkev/attention-analysis to 1e-6. Three differ *by definition*
  (``DEFINITIONS``): punctuation is any punctuation WordPiece (Clark: "." and "," only);
  previous / next average over the T − 1 rows that have one (Clark divides by T); entropy is of
  the rows as they are (Clark smooths them first, 0.9999·a + 0.0001/T). BertSum puts a [CLS]
  before every sentence, so "to [CLS]" is to all of them; ``first_cls`` is the window's first
  [CLS] alone, Clark's [CLS].
* Importance (Michel et al. 2019, "Are sixteen heads really better than one?"): a gate ξ_h
  multiplies head h's attention output (their Eq. 2; ``Summarizer.head_mask``). The objective
  is L = the sum of the selected sentences' scores. Ablation: ξ_h = 0, exactly, every head;
  importance = |L(ξ = 1) - L(ξ_h = 0)|. Gradient (their §4, Eq. 3): I_h = |∂L/∂ξ_h| at ξ = 1,
  one forward and one backward for all heads (the first-order estimate of the same drop).

Heads are ("bert" | "inter", layer, head), 0-based here and in JSON; the app shows them 1-based.
"""
from __future__ import annotations

import contextlib
import string
import unicodedata
from dataclasses import dataclass

import numpy as np
import torch

from analysis.device import batch_bytes
from model.bert import extended_mask
from model.heads import Head
from model.load import EMBEDDED_BACKBONE
from model.summarizer import Encoded, Summarizer, best_part, pool_sentences

from analysis.statistics import BERT_STATS, DEFINITIONS, INTER_STATS, PART_NAMES, PARTS, SHORT  # noqa: F401

UNTRAINED_NOTE = ("The sentence scorer is untrained (random): how much a head matters to its scores says "
                  "nothing about summarization.")


def head_label(part: str, layer: int, head: int) -> str:
    """("bert", 4, 2) → "BERT 5.3" (1-based, as the app shows heads: ``model.heads.Head.label``)."""
    return Head(part, layer, head).label


def is_punctuation(token: str) -> bool:
    """A WordPiece made only of punctuation characters (string.punctuation or Unicode P*)."""
    t = token[2:] if token.startswith("##") else token
    return bool(t) and all(c in string.punctuation or unicodedata.category(c).startswith("P") for c in t)


def entropy(a: np.ndarray) -> np.ndarray:
    """[..., T] rows of probabilities → [...] entropy in nats (0 log 0 = 0)."""
    return -(a * np.log(np.maximum(a, np.finfo(np.float32).tiny))).sum(-1)


# --- statistics (Clark et al. 2019) ----------------------------------------------------------

def bert_stats(trace) -> dict[str, np.ndarray]:
    """Every BERT head's statistics on the trace's window: name (BERT_STATS) → [L, H] float32.
    The mass on a class of keys, averaged over the query rows, is (1/T) Σ_j∈class (column sum j):
    one column sum per head serves [CLS], [SEP] and punctuation; the same sentence is the sum of
    the diagonal blocks. Layer by layer in torch, in float32 buffers reused across layers (the
    trace holds float16; fresh 16M-element temporaries cost more than the arithmetic)."""
    A = torch.from_numpy(trace.bert_attention)  # [L, H, T, T] float16
    L, H, T, _ = A.shape
    tokens = np.array(trace.tokens, dtype=object)
    columns = {"cls": np.flatnonzero(tokens == "[CLS]"), "first_cls": np.flatnonzero(tokens == "[CLS]")[:1],
               "sep": np.flatnonzero(tokens == "[SEP]"),
               "punctuation": np.flatnonzero([is_punctuation(t) for t in trace.tokens])}  # key positions
    sent = np.asarray(trace.token_sentence)
    bounds = np.flatnonzero(np.r_[True, sent[1:] != sent[:-1], True])  # a sentence is a contiguous run of tokens
    blocks = list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))
    out = {name: torch.zeros(L, H) for name in BERT_STATS}
    a, tmp = torch.empty(H, T, T), torch.empty(H, T, T)
    with torch.inference_mode():
        for layer in range(L):
            a.copy_(A[layer])  # float16 → float32
            colsum = a.sum(1)  # [H, T] mass each key receives
            for name, cols in columns.items():
                out[name][layer] = colsum[:, torch.from_numpy(cols)].sum(-1)
            out["same_sentence"][layer] = sum(a[:, i:j, i:j].sum((1, 2)) for i, j in blocks)
            out["previous"][layer] = a.diagonal(-1, 1, 2).sum(-1)  # a[h, i + 1, i]
            out["next"][layer] = a.diagonal(1, 1, 2).sum(-1)  # a[h, i, i + 1]
            torch.log(torch.clamp_min(a, torch.finfo(torch.float32).tiny, out=tmp), out=tmp).mul_(a)  # a log a; 0 where a = 0
            out["entropy"][layer] = -tmp.sum((1, 2))
    rows = {"previous": max(T - 1, 1), "next": max(T - 1, 1)}  # the rows that have a previous / next token
    out = {name: (v / rows.get(name, T)).numpy() for name, v in out.items()}  # sums over rows → means
    out["other_sentences"] = 1.0 - out["same_sentence"]
    return out


def attention_stats(A: torch.Tensor, tokens, token_sentence) -> dict[str, np.ndarray]:
    """``bert_stats`` of attention A [L, H, T, T] on any device (the corpus's batched path on a
    GPU), computed where A is, all layers at once, one copy back: the same definitions (tested
    equal), with "same sentence" as a [T, T] mask instead of the diagonal blocks."""
    L, H, T, _ = A.shape
    A = A.float()
    dev = A.device
    tok = np.array(tokens, dtype=object)
    cls = np.flatnonzero(tok == "[CLS]")
    columns = {"cls": cls, "first_cls": cls[:1], "sep": np.flatnonzero(tok == "[SEP]"),
               "punctuation": np.flatnonzero([is_punctuation(t) for t in tokens])}
    sent = torch.as_tensor(np.asarray(token_sentence), device=dev)
    colsum = A.sum(2)  # [L, H, T] mass each key receives
    out = {name: colsum[..., torch.from_numpy(c).to(dev)].sum(-1) / T for name, c in columns.items()}
    out["same_sentence"] = (A * (sent[:, None] == sent[None, :])).sum((2, 3)) / T
    out["previous"] = A.diagonal(-1, 2, 3).sum(-1) / max(T - 1, 1)
    out["next"] = A.diagonal(1, 2, 3).sum(-1) / max(T - 1, 1)
    out["entropy"] = -(A * A.clamp_min(torch.finfo(torch.float32).tiny).log()).sum((2, 3)) / T
    names = list(out)
    host = torch.stack([out[n] for n in names]).cpu().numpy()  # [names, L, H]
    stats = {n: host[i] for i, n in enumerate(names)}
    stats["other_sentences"] = 1.0 - stats["same_sentence"]
    return {n: stats[n] for n in BERT_STATS}


def inter_stats(trace) -> dict[str, np.ndarray]:
    """Every sentence-encoder head's statistics over the whole document: name (INTER_STATS) →
    [L2, H2] float32. Sentences by document index (the parts of a long sentence are one)."""
    return inter_stats_of(trace.inter_attention, trace.input_sentences, trace.summary.selected)


def inter_stats_of(attention: np.ndarray, input_sentences, selected) -> dict[str, np.ndarray]:
    """``inter_stats`` of the sentence encoder's attention [L2, H2, S, S], the document sentence of
    each part [S] and the selected sentences."""
    A = attention.astype(np.float32)  # [L2, H2, S, S]
    ids = np.asarray(input_sentences)  # [S]
    query, key = ids[:, None], ids[None, :]
    classes = {"same_sentence": key == query, "earlier": key < query, "later": key > query,
               "selected": np.isin(key, selected) & np.ones_like(query, dtype=bool)}
    out = {name: (A * m).sum(-1).mean(-1).astype(np.float32) for name, m in classes.items()}  # [L2, H2]
    out["entropy"] = entropy(A).mean(-1).astype(np.float32)
    return out


# --- importance (Michel et al. 2019) ---------------------------------------------------------

def shapes(summarizer: Summarizer) -> dict[str, tuple[int, int]]:
    (L, H, _), ext = summarizer.size(), summarizer.model.ext_layer.config
    return {"bert": (L, H), "inter": (ext.layers, ext.heads)}


def selected_parts(summarizer: Summarizer, enc: Encoded, scores, k: int, block: bool) -> tuple[tuple[int, ...], list[int]]:
    """The selection made from part scores [S], and for each selected sentence the part that
    carries its score (its best part; a sentence longer than a window is fed in parts)."""
    scores = [float(s) for s in scores]
    selected = summarizer.summary(enc, scores, k, block).selected
    return selected, [best_part(enc.input_sentences, scores, s) for s in selected]


def gate_gradients(summarizer: Summarizer, enc: Encoded, k: int = 3, block: bool = True, progress=None,
                   target=None):
    """∂L/∂ξ at ξ = 1 (signed), L = the sum of the selected sentences' scores (``target``: instead,
    a function of the part scores [S] → L, e.g. one score minus another): (bert [L, H],
    inter [L2, H2]) float64 NumPy. Window by window, so memory holds one window's graph, not the
    document's: the sentence vectors V without a graph; the sentence encoder's backward to its
    gates and to V; then each window again with a graph, backward from its rows of ∂L/∂V (the
    chain rule: exact). ``progress(done, total)`` after each window."""
    p = next(summarizer.model.parameters())
    sh = shapes(summarizer)
    bert_gates, inter_gates = (torch.ones(sh[part], dtype=p.dtype, device=p.device, requires_grad=True)
                               for part in PARTS)
    bounds = enc.window_parts()
    W = len(enc.window_starts)
    with torch.inference_mode(False), torch.enable_grad():
        with torch.no_grad() if W > 1 else contextlib.nullcontext():  # one window: its graph is the document's
            vecs = summarizer.sentence_vectors(enc, bert_gates)[0]  # [1, S, D]
        if W > 1:
            vecs.requires_grad_()
        scores = summarizer.score_vectors(vecs, inter_gates)[0]  # [S]
        if target is None:
            _, parts = selected_parts(summarizer, enc, scores.detach(), k, block)
            loss = scores[parts].sum()
        else:
            loss = target(scores)
        if W == 1:
            bert, inter = torch.autograd.grad(loss, (bert_gates, inter_gates))
            return bert.double().cpu().numpy(), inter.double().cpu().numpy()
        inter, d_vecs = torch.autograd.grad(loss, (inter_gates, vecs))
        bert = torch.zeros_like(bert_gates)
        for w in range(W):
            v = summarizer.model.sentence_vectors(**summarizer.window_inputs(enc, *enc.window(w)),
                                                  head_mask=bert_gates)  # [1, S_w, D]
            bert += torch.autograd.grad(v, bert_gates, d_vecs[:, bounds[w]:bounds[w + 1]])[0]
            if progress:
                progress(w + 1, W)
    return bert.double().cpu().numpy(), inter.double().cpu().numpy()


def importance_gradient(summarizer: Summarizer, text: str, k: int = 3, block: bool = True, progress=None):
    """Michel et al. 2019 §4: I_h = |∂L/∂ξ_h| → (bert [L, H], inter [L2, H2]) float64."""
    enc = summarizer.encode(text, summarizer.max_windows)
    return tuple(np.abs(g) for g in gate_gradients(summarizer, enc, k, block, progress))


def one_off(n_layers: int, n_heads: int, heads: list[tuple[int, int]], like: torch.Tensor) -> torch.Tensor:
    """Gates [B, L, H] of ones, with heads[b] = (layer, head) switched off in row b."""
    g = torch.ones(len(heads), n_layers, n_heads, dtype=like.dtype, device=like.device)
    for b, (layer, head) in enumerate(heads):
        g[b, layer, head] = 0.0
    return g


BATCH_ATTENTION_BYTES = 12 * 2 ** 20  # auto batch: attention probabilities of one batched layer at most this


def auto_batch(summarizer: Summarizer, enc: Encoded) -> int:
    """Ablations per forward: as many as keep one layer's attention [B, H, T, T] float32 within
    BATCH_ATTENTION_BYTES on the CPU, within a share of the free memory on a GPU
    (``analysis.device.batch_bytes``), and at most one layer's heads. Larger batches were slower
    per ablation on the 2-core CPU this was measured on (the attention tensors leave the cache):
    at 196 tokens 6 was fastest, at 304 tokens 2, at 470 tokens 1-2 (benchmarks/heads.py)."""
    H = summarizer.model.bert.config.num_attention_heads
    T = max(b - a for a, b in (enc.window(w) for w in range(len(enc.window_starts))))
    return max(1, min(H, batch_bytes(summarizer.device, BATCH_ATTENTION_BYTES) // (H * T * T * 4)))


@torch.inference_mode()
def ablation_scores(summarizer: Summarizer, enc: Encoded, batch: int | None = None, progress=None):
    """Part scores [S] with every head on, and with each head switched off alone: (base [S],
    {"bert": [L, H, S], "inter": [L2, H2, S]}) float64.

    Batched: B ablations go through one forward with a [B, L, H] head mask. For heads of BERT
    layer l the layers below l run once per window (their output does not change), and layer l
    itself computes queries, keys and attention once: the gates broadcast that one document to
    B copies only where they multiply the heads' outputs (BertSelfAttention). ``progress(done,
    total)`` is called after each batch. ``batch`` None: ``auto_batch``."""
    model, bert = summarizer.model, summarizer.model.bert
    batch = batch or auto_batch(summarizer, enc)
    (L, H), (L2, H2) = shapes(summarizer).values()
    p = next(model.parameters())
    chunks = [[(layer, h) for h in range(a, min(a + batch, H))] for layer in range(L) for a in range(0, H, batch)]
    total, done = len(chunks) * len(enc.window_starts) + 1, 0
    base_vecs, ablated = [], []  # per window: [1, S_w, D], [L * H, S_w, D]
    for w in range(len(enc.window_starts)):
        inp = summarizer.window_inputs(enc, *enc.window(w))
        mask = extended_mask(inp["attention_mask"])  # [1, 1, 1, T]

        def pool(top):  # [B, T, D] → [B, S_w, D], as BertSumExt.sentence_vectors
            return model.scale * pool_sentences(top, inp["attention_mask"], inp["cls_positions"],
                                                inp["cls_mask"], model.pooling)

        xs = [bert.embeddings(inp["input_ids"], inp["segment_ids"])]  # xs[l]: input of layer l, [1, T, D]
        for layer in range(L):
            xs.append(bert.encoder(xs[-1], mask, layer, layer + 1))
        base_vecs.append(pool(xs[-1]))
        vecs = []
        for heads in chunks:
            layer = heads[0][0]
            vecs.append(pool(bert.encoder(xs[layer], mask, layer, None, one_off(L, H, heads, p))))  # [B, S_w, D]
            done += 1
            if progress:
                progress(done, total)
        ablated.append(torch.cat(vecs))
    base_vecs, ablated = torch.cat(base_vecs, 1), torch.cat(ablated, 1)  # [1, S, D], [L * H, S, D]
    base = summarizer.score_vectors(base_vecs)[0]  # [S]
    bert_scores = summarizer.score_vectors(ablated)  # [L * H, S]
    inter_heads = [(layer, h) for layer in range(L2) for h in range(H2)]
    inter_scores = summarizer.score_vectors(base_vecs, one_off(L2, H2, inter_heads, p))  # [L2 * H2, S]
    if progress:
        progress(total, total)
    S = base.shape[0]
    as_np = lambda x: x.double().cpu().numpy()  # noqa: E731
    return as_np(base), {"bert": as_np(bert_scores).reshape(L, H, S), "inter": as_np(inter_scores).reshape(L2, H2, S)}


@dataclass(frozen=True)
class Ablation:
    """Each head switched off alone (Michel et al. 2019 §3.1), per part: arrays [layers, heads]."""

    base_scores: np.ndarray  # [S] part scores, every head on
    selected: tuple[int, ...]  # the selection with every head on (sentence indices)
    scores: dict  # part → [layers, heads, S] part scores with that head off
    importance: dict  # part → |ΔL|, L = the sum of the selected sentences' scores
    mean_abs_change: dict  # part → mean over sentences of |Δ score|
    selected_change: dict  # part → mean Δ score of the selected sentences (signed)
    selection_changed: dict  # part → bool: the selected set is another
    selected_after: dict  # part → [layers][heads] tuple of the sentences then selected

    def nbytes(self) -> int:
        return 4096 + sum(v.nbytes for d in (self.scores, self.importance, self.mean_abs_change) for v in d.values())


def importance_ablation(summarizer: Summarizer, text: str, k: int = 3, block: bool = True, progress=None,
                        batch: int | None = None) -> Ablation:
    """Switch every head off alone, exactly (batched: ``ablation_scores``), and compare."""
    enc = summarizer.encode(text, summarizer.max_windows)
    base, scores = ablation_scores(summarizer, enc, batch, progress)
    selected, parts = selected_parts(summarizer, enc, base, k, block)
    out = {name: {} for name in ("importance", "mean_abs_change", "selected_change", "selection_changed", "selected_after")}
    for part, s in scores.items():
        delta = s - base  # [layers, heads, S]
        out["importance"][part] = np.abs(delta[..., parts].sum(-1))
        out["mean_abs_change"][part] = np.abs(delta).mean(-1)
        out["selected_change"][part] = delta[..., parts].mean(-1) if parts else np.zeros(s.shape[:2])
        after = [[selected_parts(summarizer, enc, row, k, block)[0] for row in layer] for layer in s]
        out["selected_after"][part] = after
        out["selection_changed"][part] = np.array([[a != selected for a in layer] for layer in after])
    return Ablation(base, selected, scores, **out)


def agreement(a: np.ndarray, b: np.ndarray, top: int = 5) -> dict:
    """How well two importance maps agree: Spearman's rank correlation (Pearson's r of the
    ranks, ties at their mean rank) and the share of a's top ``top`` heads among b's."""
    def ranks(x):
        x = np.asarray(x, dtype=np.float64).ravel()
        order = np.argsort(x, kind="stable")
        r = np.empty(len(x))
        r[order] = np.arange(len(x), dtype=np.float64)
        _, inv, counts = np.unique(x, return_inverse=True, return_counts=True)
        sums = np.bincount(inv, weights=r)
        return sums[inv] / counts[inv]  # tied values share their mean rank

    ra, rb = ranks(a), ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denom = np.sqrt((ra ** 2).sum() * (rb ** 2).sum())
    n = min(top, np.size(a))
    top_a, top_b = (set(np.argsort(-np.ravel(x), kind="stable")[:n].tolist()) for x in (a, b))
    return {"spearman": float((ra * rb).sum() / denom) if denom > 0 else float("nan"),
            f"top{top}_overlap": len(top_a & top_b) / n if n else float("nan")}


def agreements(gradient: dict, ablation: dict, top: int = 5) -> dict:
    """``agreement`` of the two importance maps per part (part → [layers, heads]) and over all
    heads of both parts ("all")."""
    flat = lambda d: np.concatenate([d[p].ravel() for p in PARTS])  # noqa: E731
    return {**{p: agreement(gradient[p], ablation[p], top) for p in PARTS},
            "all": agreement(flat(gradient), flat(ablation), top)}


def ranking(values: dict, n: int = 5) -> list[tuple[str, int, int]]:
    """The n largest heads over both parts: part → [layers, heads] → [(part, layer, head), …]."""
    flat = [(float(v[layer, h]), part, layer, h) for part, v in values.items()
            for layer in range(v.shape[0]) for h in range(v.shape[1])]
    return [(part, layer, h) for _, part, layer, h in sorted(flat, key=lambda x: -x[0])[:n]]


# --- one report (the JSON of ``python -m analysis heads``) --------------------------------------

def tolist(x):
    return np.round(np.asarray(x, dtype=np.float64), 6).tolist() if not isinstance(x, list) else x


def heads_report(summarizer: Summarizer, text: str, k: int = 3, block: bool = True, window: int = 0,
                 ablation: bool = True, batch: int | None = None, compare_with=None) -> dict:
    """Statistics (one BERT window, the whole sentence encoder), gradient importance and (with
    ``ablation``) the exact ablation of every head, their agreement, the top 5 heads; with
    ``compare_with`` (e.g. ``Summarizer.load(untrained=True)``: the plain backbone) its BERT
    statistics too. Arrays as nested lists [layers][heads], indices 0-based."""
    trace = summarizer.trace(text, k, block, window=window)
    stats = {"bert": bert_stats(trace), "inter": inter_stats(trace)}
    grad = dict(zip(PARTS, importance_gradient(summarizer, text, k, block)))
    abl = importance_ablation(summarizer, text, k, block, batch=batch) if ablation else None
    out = {"weights": summarizer.weights, "window": window, "windows": len(trace.windows),
           "tokens": len(trace.tokens), "selected": list(trace.summary.selected),
           "scores": list(trace.summary.scores)}
    if summarizer.weights == "untrained":
        out["note"] = UNTRAINED_NOTE
    for part in PARTS:
        out[part] = {"stats": {n: tolist(v) for n, v in stats[part].items()},
                     "importance": {"gradient": tolist(grad[part]),
                                    "ablation": tolist(abl.importance[part]) if abl else None}}
        if abl:
            out[part] |= {"selection_changed": abl.selection_changed[part].tolist(),
                          "mean_abs_change": tolist(abl.mean_abs_change[part]),
                          "selected_change": tolist(abl.selected_change[part]),
                          "selected_after": [[list(s) for s in row] for row in abl.selected_after[part]]}
    best = abl.importance if abl else grad
    out["top"] = [{"part": p, "layer": layer, "head": h, "label": head_label(p, layer, h),
                   "gradient": round(float(grad[p][layer, h]), 6),
                   **({"ablation": round(float(abl.importance[p][layer, h]), 6),
                       "selection_changed": bool(abl.selection_changed[p][layer, h]),
                       "selected_after": list(abl.selected_after[p][layer][h])} if abl else {})}
                  for p, layer, h in ranking(best)]
    if abl:
        out["agreement"] = {p: {n: None if v != v else v for n, v in a.items()}  # NaN → null
                            for p, a in agreements(grad, abl.importance).items()}
    if compare_with is not None:
        other = bert_stats(compare_with.trace(text, k, block, window=window))
        out["backbone"] = {"weights": compare_with.weights, "bert": {"stats": {n: tolist(v) for n, v in other.items()}},
                           "difference": {n: tolist(stats["bert"][n] - other[n]) for n in other}}
    return out


def add_arguments(parser) -> None:
    parser.add_argument("--window", type=int, default=1, help="BERT window whose statistics to compute (1-based)")
    parser.add_argument("--no-ablation", dest="ablation", action="store_false",
                        help="only the gradient estimate (one forward + backward), not every head switched off")
    parser.add_argument("--batch", type=int, help="ablations per forward (default: by document length)")
    parser.add_argument("--compare-backbone", action="store_true",
                        help="also the BERT statistics of the unmodified backbone, and the difference")


def cli(args, summarizer: Summarizer) -> dict:
    from model.__main__ import read_text

    if args.k < 1 or (args.batch is not None and args.batch < 1) or args.window < 1:
        raise ValueError("--k, --batch and --window start at 1")
    backbone = None if summarizer.backbone == EMBEDDED_BACKBONE else summarizer.backbone
    other = (Summarizer.load(backbone, untrained=True, device=args.device)
             if getattr(args, "compare_backbone", False) else None)
    return heads_report(summarizer, read_text(args.file), args.k, args.block, window=args.window - 1,
                        ablation=args.ablation, batch=args.batch, compare_with=other)
