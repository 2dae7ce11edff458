"""Why these sentences: the selection replayed with its reasons, position vs content, and which
words of the document raised or lowered a sentence's score.

- ``selection``: BertSum's selection (top k by score, trigram blocking: Paulus et al. 2018)
  replayed over a ``Summary`` to give every sentence a status and its reason. Pure.
- ``position_scores``: each score again with the sinusoid rows the sentence encoder adds
  (Liu & Lapata 2019 §3.2) replaced by a neutral row (their mean: no sentence is first) or
  shuffled among the sentences. The gap to the real score is what position explains.
- ``attribute``: gradient × input (Shrikumar et al. 2017; Denil et al. 2014; the gradient is
  Simonyan et al. 2014's saliency) on BERT's word embeddings, through every window and the
  sentence encoder: a_t = ⟨∂score_i/∂e_t, e_t⟩ summed over the embedding dimension, summed
  over a word's WordPieces. By default with Ali et al. (2022)'s conservative rules (attention
  probabilities and LayerNorm's 1/σ held constant in the backward pass, ``conservative``). In
  the deletion test of tests/test_explain.py (20 selected sentences of 7 documents: delete a
  sentence's 3 most-attributed words or 3 random ones, mean score drop) plain gradient × input
  is barely better than random (0.054 vs 0.039, ahead for 10 of 20 sentences); with the rules
  0.179 vs 0.039, ahead for 20 of 20.
  One forward is shared by all explained sentences; one backward each. Both run in bfloat16
  where the hardware has it (``attribution_dtype``); the scores they explain are float32.
- ``rollout``: attention rollout (Abnar & Zuidema 2020, §3): Â_l = rownorm(0.5·mean_h A_l + 0.5·I),
  R = Â_L ⋯ Â_1, over a captured Trace (no model needed).
- ``explain``: all of it as one JSON-ready dict (``python -m analysis explain FILE --json``).
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np
import torch

from model.hooks import intervene, names
from model.summarizer import CONTROL, Encoded, Summarizer, best_part, trigrams

STATUSES = ("selected", "trigram-blocked", "below-k", "too-short", "not-fed")
PLAIN_METHOD = ("gradient × input on BERT's word embeddings (Shrikumar et al. 2017; Denil et al. 2014), "
                "through every BERT window and the sentence encoder, summed over the embedding "
                "dimension and over each word's WordPieces")
METHOD = PLAIN_METHOD + (", with Ali et al. (2022)'s conservative rules: attention probabilities and "
                         "LayerNorm's 1/σ held constant in the backward pass")
NEUTRAL_HELP = ("position_score: the sentence's score when every sentence gets the same position "
                "row, the mean of the document's S sinusoid rows (no sentence is first); "
                "position_score_shuffled: the mean score over 8 seeded shuffles of the rows")


# ------------------------------------------------------------------ the selection, explained

@dataclass(frozen=True)
class SentenceStatus:
    """Why sentence i is (not) in the summary. ``rank``: 1 = highest score (None: not scored);
    ``blocked_by``: 0-based index of the selected sentence sharing ``trigram`` with it."""

    status: str  # one of STATUSES
    rank: int | None
    reason: str  # for people: sentences numbered from 1
    blocked_by: int | None = None
    trigram: tuple[str, ...] | None = None


def _shared_trigram(words: list[str], other: set[tuple[str, ...]]) -> tuple[str, ...] | None:
    """The first trigram of ``words`` (in reading order) that is in ``other``."""
    return next((t for t in (tuple(words[p:p + 3]) for p in range(len(words) - 2)) if t in other), None)


def ordinal(n: int) -> str:
    """1 → "1st", 2 → "2nd", 11 → "11th", 23 → "23rd"."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def selection(summary, k: int, block_trigram: bool) -> list[SentenceStatus]:
    """Replays ``model.summarizer.select`` (highest score first; with trigram blocking a
    candidate sharing a trigram — lowercased, whitespace-split words — with an already chosen
    sentence is skipped; stop at k) and records each sentence's status and reason. The blocker
    named is the earliest-chosen selected sentence sharing a trigram, and the trigram the first
    shared one in the blocked sentence's reading order."""
    scores, sents = summary.scores, summary.sentences
    order = sorted((i for i, s in enumerate(scores) if s is not None), key=lambda i: -scores[i])
    rank = {i: r + 1 for r, i in enumerate(order)}
    out: list[SentenceStatus | None] = [None] * len(sents)
    chosen: list[int] = []  # in the order chosen
    tri = {}
    for i in order:
        if len(chosen) == k:
            out[i] = SentenceStatus("below-k", rank[i], f"not selected: the {ordinal(rank[i])} highest score, "
                                    f"and the top {k} were already chosen")
            continue
        tri[i], words = trigrams(sents[i]), sents[i].lower().split()
        shared = [(j, t) for j in chosen if block_trigram and (t := _shared_trigram(words, tri[j]))]
        if shared:
            j, t = shared[0]  # the earliest chosen
            out[i] = SentenceStatus("trigram-blocked", rank[i], f"skipped by trigram blocking: shares "
                                    f"“{' '.join(t)}” with selected sentence {j + 1}", j, t)
            continue
        chosen.append(i)
        out[i] = SentenceStatus("selected", rank[i], f"selected, the {ordinal(rank[i])} highest score")
    if tuple(sorted(chosen)) != tuple(summary.selected):
        raise ValueError(f"the summary was not made with k={k}, block_trigram={block_trigram}")
    for i, s in enumerate(out):
        if s is None:
            out[i] = (SentenceStatus("too-short", None, "not scored: under 5 words (BertSum's minimum)")
                      if i in summary.too_short else
                      SentenceStatus("not-fed", None, "not scored: past the length limit, not fed to BERT"))
    return out


# ------------------------------------------------------------------ the model, with gradients

@contextmanager
def embedding_leaves(summarizer: Summarizer):
    """For the duration of the block, every value of the hook point ``bert.embed.word`` (BERT's
    word embeddings, [1, T_w, D] per window) made by this thread is replaced by a leaf tensor that
    requires grad, and recorded: yields the list of leaves. The hook is always removed."""
    leaves = []

    def leaf(value, module, args):
        leaves.append(value.detach().requires_grad_())
        return leaves[-1]

    with intervene(summarizer.model, {"bert.embed.word": leaf}):
        yield leaves


@contextmanager
def conservative(summarizer: Summarizer, enabled: bool = True):
    """Ali et al. (2022)'s rules for gradient × input through a Transformer: attention
    probabilities (every softmax) and LayerNorm's 1/σ are treated as constants in the backward
    pass (the forward values are unchanged, bit for bit). Hooks removed on exit."""
    def softmax_hook(output, module, args):
        return output.detach()

    def norm_hook(output, module, args):
        if not torch.is_grad_enabled():
            return None
        x = args[0]  # [..., D]
        mu = x.mean(-1, keepdim=True)
        sigma = (x.var(-1, keepdim=True, unbiased=False) + module.eps).sqrt().detach()
        lin = (x - mu) / sigma
        if module.weight is not None:
            lin = lin * module.weight + module.bias
        return output.detach() + (lin - lin.detach())  # the value of output, the gradient of lin

    m = summarizer.model
    patterns, norms = names(m, r".*attn\.pattern"), names(m, r".*\.ln(1|2|_final)?")
    with intervene(m, {n: softmax_hook for n in patterns} | {n: norm_hook for n in norms} if enabled else {}):
        yield


RULES = ("conservative", "plain")  # gradient × input with Ali et al. (2022)'s rules, or without
KEEP_WINDOWS = 2  # up to this many BERT windows, one forward keeps every window's graph (~100 MB each)
PRECISIONS = ("auto", "float32", "bfloat16")


def attribution_dtype(summarizer: Summarizer, precision: str = "auto") -> torch.dtype:
    """The dtype of the attribution's forward and backward passes. ``"auto"``: bfloat16 where the
    hardware computes it natively (a CPU with AVX-512 BF16 / AMX, a CUDA GPU with bf16), else
    float32. The scores, statuses and position scores are always float32; only the gradients
    are bfloat16 (on the documents of tests/test_explain.py the words' ranking is the same)."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r} ({', '.join(PRECISIONS)})")
    if precision != "auto":
        return getattr(torch, precision)
    dev = summarizer.device
    native = (torch.cuda.is_bf16_supported() if dev.type == "cuda"
              else dev.type == "cpu" and torch.ops.mkldnn._is_mkldnn_bf16_supported())
    return torch.bfloat16 if native else torch.float32


def _autocast(summarizer: Summarizer, dtype: torch.dtype):
    return torch.autocast(summarizer.device.type, dtype=dtype, enabled=dtype != torch.float32)


def _forward(summarizer: Summarizer, enc: Encoded, mask_heads=(), rule: str = "conservative",
             keep_windows: int = KEEP_WINDOWS, dtype: torch.dtype = torch.float32):
    """Part scores [S] with the graph back to the sentence vectors [1, S, D] and, when the
    document has at most ``keep_windows`` windows, on through BERT to the embedding leaves (one
    per window); else the leaves are None and BERT runs again window by window in
    ``token_attributions`` (memory: one window's graph at a time). Under autocast to ``dtype``."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r} ({' or '.join(RULES)})")
    bert_gates, inter_gates = summarizer.head_mask(mask_heads)
    keep = len(enc.window_starts) <= keep_windows
    with torch.inference_mode(False), torch.enable_grad(), conservative(summarizer, rule == "conservative"), \
            _autocast(summarizer, dtype):
        with embedding_leaves(summarizer) as leaves, torch.set_grad_enabled(keep):
            vecs, _ = summarizer.sentence_vectors(enc, bert_gates)  # [1, S, D]
        if not keep:
            vecs.requires_grad_()
        scores = summarizer.score_vectors(vecs, inter_gates)[0]  # [S]
    return scores, vecs, list(leaves) if keep else None


def float32_scores(summarizer: Summarizer, enc: Encoded, mask_heads=(), trace=None) -> tuple[torch.Tensor, torch.Tensor]:
    """The model's own part scores [S] and sentence vectors [1, S, D] in float32, without a graph.
    ``trace``: a ``Trace`` of this document and these heads (the app has one): its sentence vectors
    are reused, and only the sentence encoder runs again."""
    bert_gates, inter_gates = summarizer.head_mask(mask_heads)
    with torch.inference_mode():
        if trace is None:
            vecs = summarizer.sentence_vectors(enc, bert_gates)[0]  # [1, S, D]
        else:
            if trace.summary.sentences != enc.sentences or trace.summary.masked_heads != tuple(sorted(mask_heads)):
                raise ValueError("the trace is of another document or other heads switched off")
            vecs = torch.from_numpy(trace.sentence_vectors).to(summarizer.device)[None]
        return summarizer.score_vectors(vecs, inter_gates)[0], vecs


def encode(summarizer: Summarizer, text: str) -> Encoded:
    return summarizer.encode(text, summarizer.max_windows)


# ------------------------------------------------------------------ position vs content

def position_rows(real: torch.Tensor, mode: str, shuffles: int = 8, seed: int = 0) -> torch.Tensor:
    """The document's sinusoid rows real [S, D] → replacement rows [n, S, D]: ``"real"`` (n = 1),
    ``"neutral"`` (n = 1, every sentence the mean row) or ``"shuffled"`` (n = ``shuffles``
    seeded permutations)."""
    S, D = real.shape
    if mode == "real":
        return real[None]
    if mode == "neutral":
        return real.mean(0).expand(1, S, D)
    if mode == "shuffled":
        g = torch.Generator().manual_seed(seed)
        return torch.stack([real[torch.randperm(S, generator=g).to(real.device)] for _ in range(shuffles)])
    raise ValueError(f"unknown mode {mode!r} (neutral, shuffled or real)")


def position_scores(summarizer: Summarizer, enc: Encoded | str, mode: str = "neutral", *, vecs=None,
                    mask_heads=(), shuffles: int = 8, seed: int = 0) -> tuple[float | None, ...]:
    """Every sentence's score with the sinusoid position rows replaced: ``"neutral"`` = each
    sentence gets the mean of the document's S rows; ``"shuffled"`` = mean score over
    ``shuffles`` seeded permutations of the rows; ``"real"`` = the rows the model uses (the
    real scores, exactly). ``mode`` may list several, comma-separated ("neutral,shuffled"):
    then a tuple per mode, from one batched pass. ``vecs`` [1, S, D]: the sentence vectors if
    already computed. One score per document sentence (best part; None = not scored)."""
    enc = encode(summarizer, enc) if isinstance(enc, str) else enc
    bert_gates, inter_gates = summarizer.head_mask(mask_heads)
    modes = mode.split(",")
    with torch.inference_mode():
        vecs = summarizer.sentence_vectors(enc, bert_gates)[0] if vecs is None else vecs.detach()  # [1, S, D]
        S, D = vecs.shape[1:]
        real = summarizer.model.sentence_pe(S)  # [S, D]
        rows = [position_rows(real, m, shuffles, seed) for m in modes]  # [n_m, S, D] each
        pe = torch.cat(rows)  # [n, S, D]
        part = summarizer.score_vectors(vecs.expand(len(pe), S, D), inter_gates, pe)  # [n, S]
        means = [p.mean(0).tolist() for p in part.split([len(r) for r in rows])]  # per mode [S]
    out = [sentence_score_tuple(enc, m) for m in means]
    return out[0] if len(out) == 1 else tuple(out)


def sentence_score_tuple(enc: Encoded, part_scores) -> tuple[float | None, ...]:
    from model.summarizer import sentence_scores

    return sentence_scores(enc.input_sentences, len(enc.sentences), [float(s) for s in part_scores])


# ------------------------------------------------------------------ words

@dataclass(frozen=True)
class WordSpan:
    start: int  # character span in the input text
    end: int
    weight: float  # larger = raised the score more


@dataclass(frozen=True)
class Words:
    """The document's words (whitespace-split within each sentence) and its WordPieces' words."""

    spans: np.ndarray  # [W, 2] int64 character spans in the text
    sentence: np.ndarray  # [W] int64 sentence of each word
    token_word: np.ndarray  # [T] int64 word of each fed token, -1 for [CLS]/[SEP]


def words(summarizer: Summarizer, enc: Encoded, text: str) -> Words:
    """Map every fed WordPiece back to its word: the ``tokenizers`` offsets within the sentence
    text, shifted by where the sentence starts in ``text`` (``Encoded.spans``, stripped)."""
    text = CONTROL.sub(" ", text)
    spans, sent_of, token_word = [], [], np.full(len(enc.tokens), -1, dtype=np.int64)
    parts: dict[int, list[int]] = {}  # sentence → token positions of its WordPieces
    bounds = list(enc.cls_positions) + [len(enc.tokens)]
    for n, i in enumerate(enc.input_sentences):
        parts.setdefault(i, []).extend(range(bounds[n] + 1, bounds[n + 1] - 1))  # without [CLS], [SEP]
    for i, (a, b) in enumerate(enc.spans):
        raw = text[a:b]
        base = a + len(raw) - len(raw.lstrip())  # where enc.sentences[i] starts
        first = len(spans)
        for m in re.finditer(r"\S+", enc.sentences[i]):
            spans.append((base + m.start(), base + m.end()))
            sent_of.append(i)
        if i in parts:
            starts = np.array([s for s, _ in spans[first:]], dtype=np.int64) - base
            offsets = summarizer.tokenizer.tokenizer.encode(enc.sentences[i], add_special_tokens=False).offsets
            pos = parts[i]
            assert len(pos) <= len(offsets), (i, len(pos), len(offsets))
            token_word[pos] = first + np.searchsorted(starts, [o[0] for o in offsets[:len(pos)]], side="right") - 1
    return Words(np.array(spans, dtype=np.int64).reshape(-1, 2), np.array(sent_of, dtype=np.int64), token_word)


def _part_of(enc: Encoded, scores: torch.Tensor, i: int) -> int:
    """The part whose score is sentence i's (``best_part``; ``scores``: float32 part scores)."""
    part = best_part(enc.input_sentences, scores.detach(), i)
    if part is None:
        raise ValueError(f"sentence {i} is not scored (too short, or not fed): nothing to attribute")
    return part


def token_attributions(summarizer: Summarizer, enc: Encoded, scores, vecs, leaves, sentences: Iterable[int],
                       mask_heads=(), rule: str = "conservative",
                       progress: Callable[[int, int], None] | None = None, part_scores=None,
                       dtype: torch.dtype = torch.float32) -> dict[int, np.ndarray]:
    """Gradient × input per fed token [T] (float32) for each sentence's score. First the
    gradient of the score with respect to the sentence vectors (the sentence encoder, cheap),
    then back through BERT: over the graph ``_forward`` kept (one backward per sentence, the
    forward shared), or window by window, BERT run again with the graph for one window at a time.
    ``autograd.grad`` with ``inputs`` = the embedding leaves: no weight gradient is computed.
    ``progress(done, total)``: per sentence, or per window. ``part_scores``: the float32 scores
    that pick a long sentence's part (default: ``scores``); ``dtype``: as ``_forward``'s."""
    sentences = list(dict.fromkeys(sentences))
    part_scores = scores if part_scores is None else part_scores
    T = len(enc.tokens)
    with torch.inference_mode(False), torch.enable_grad():
        cot = {i: torch.autograd.grad(scores[_part_of(enc, part_scores, i)], vecs, retain_graph=True)[0]
               for i in sentences}  # [1, S, D] each
        if leaves is not None:
            out = {}
            for n, i in enumerate(sentences):
                grads = torch.autograd.grad(vecs, leaves, cot[i], retain_graph=n + 1 < len(sentences))
                out[i] = torch.cat([(g.float() * e).sum(-1)[0] for g, e in zip(grads, leaves)]).detach().cpu().numpy()  # [T]
                if progress:
                    progress(n + 1, len(sentences))
            return out
        out = {i: np.zeros(T, dtype=np.float32) for i in sentences}
        bert_gates, _ = summarizer.head_mask(mask_heads)
        parts = enc.window_parts()  # part range per window
        W = len(enc.window_starts)
        for w in range(W):
            a, b = enc.window(w)
            with embedding_leaves(summarizer) as leaf, conservative(summarizer, rule == "conservative"), \
                    _autocast(summarizer, dtype):
                v = summarizer.model.sentence_vectors(**summarizer.window_inputs(enc, a, b),
                                                      head_mask=bert_gates)  # [1, S_w, D]
            for n, i in enumerate(sentences):
                g, = torch.autograd.grad(v, leaf[0], cot[i][:, parts[w]:parts[w + 1]],
                                         retain_graph=n + 1 < len(sentences))  # [1, T_w, D]
                out[i][a:b] = (g.float() * leaf[0]).sum(-1)[0].detach().cpu().numpy()
            if progress:
                progress(w + 1, W)
        return out


def word_weights(w: Words, token_attr: np.ndarray) -> np.ndarray:
    """[T] token attributions → [W] word weights (sum of the word's WordPieces; 0 for words not fed)."""
    fed = w.token_word >= 0
    return np.bincount(w.token_word[fed], weights=token_attr[fed], minlength=len(w.spans)).astype(np.float32)


def graph_passes(summarizer: Summarizer, enc: Encoded, mask_heads, rule: str, keep_windows: int, precision: str, trace):
    """The forward with the graph (in the attribution dtype) and the float32 part scores [S] and
    sentence vectors [1, S, D]: from that same forward in float32, else from ``trace`` or a
    forward without a graph."""
    dtype = attribution_dtype(summarizer, precision)
    graph = _forward(summarizer, enc, mask_heads, rule, keep_windows, dtype)
    if dtype == torch.float32 and trace is None:
        part, vecs = graph[0].detach(), graph[1].detach()
    else:
        part, vecs = float32_scores(summarizer, enc, mask_heads, trace)
    return graph, part, vecs, dtype


def attribute(summarizer: Summarizer, text: str, sentences: Iterable[int], mask_heads=(),
              progress: Callable[[int, int], None] | None = None, rule: str = "conservative",
              keep_windows: int = KEEP_WINDOWS, precision: str = "auto") -> dict[int, list[WordSpan]]:
    """For each sentence (0-based), every word of the document with its gradient × input
    attribution to that sentence's score (see the module docstring). Words of sentences not
    fed to BERT (too short, past the limit) have weight 0: their tokens are not in the input."""
    enc = encode(summarizer, text)
    graph, part, _, dtype = graph_passes(summarizer, enc, mask_heads, rule, keep_windows, precision, None)
    w = words(summarizer, enc, text)
    attr = token_attributions(summarizer, enc, *graph, sentences, mask_heads, rule, progress, part, dtype)
    return {i: [WordSpan(int(a), int(b), float(x)) for (a, b), x in zip(w.spans, word_weights(w, t))]
            for i, t in attr.items()}


# ------------------------------------------------------------------ attention rollout

def rollout(trace) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema 2020, §3) of one BERT window: per layer the heads'
    mean attention (heads switched off in ``trace.summary.masked_heads`` left out),
    residual-corrected Â = 0.5·A + 0.5·I with rows renormalised, multiplied up the layers:
    R = Â_L ⋯ Â_1. R[i, j] = how much top-layer token i draws from input token j; rows sum to 1.
    [L, H, T, T] float16 → [T, T] float32. A function of the Trace alone (no model); the
    arithmetic runs in torch on the NumPy buffers, ~5× faster than NumPy here (NumPy converts
    float16 subnormals, a quarter of the weights, on a slow path, and its BLAS threads fight
    torch's: benchmarks/explain.py)."""
    return rollout_of(trace.bert_attention, trace.summary.masked_heads)


def rollout_of(attention: np.ndarray, masked_heads=()) -> np.ndarray:
    """``rollout`` of BERT attention [L, H, T, T] with the heads ``masked_heads`` switched off."""
    L, H, T, _ = attention.shape
    off = {(l, h) for part, l, h in masked_heads if part == "bert"}
    with torch.inference_mode():
        r = None
        for l in range(L):
            heads = [h for h in range(H) if (l, h) not in off]
            a = torch.from_numpy(np.ascontiguousarray(attention[l]))  # [H, T, T] float16
            a = (a if len(heads) == H else a[heads]).float().sum(0)  # [T, T]
            a.mul_(0.5 / max(len(heads), 1)).diagonal().add_(0.5)  # 0.5·mean + 0.5·I
            a.div_(a.sum(-1, keepdim=True))
            r = a if r is None else a @ r  # [T, T]
        return r.numpy()


def sentence_draw(trace, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which input tokens each sentence's pooled vector draws from: the shipped weights pool a
    sentence as the mean of its tokens [CLS] … [SEP] (``pool_sentences``), so its draw is the
    mean of their rollout rows. (With [CLS] pooling it would be the [CLS] row.) Returns
    (draw [S_w, T] float32, document sentence of each row)."""
    cls = [int(c) for c in trace.cls_positions]
    bounds = cls + [len(trace.tokens)]
    if trace.summary.pooling == "cls":
        rows = np.stack([r[c] for c in cls])
    else:
        rows = np.stack([r[a:b].mean(0) for a, b in zip(bounds[:-1], bounds[1:])])
    return rows.astype(np.float32), np.array([int(trace.token_sentence[c]) for c in cls], dtype=np.int64)


# ------------------------------------------------------------------ everything, as JSON

def explain(summarizer: Summarizer, text: str, k: int = 3, block_trigram: bool = True,
            sentences: Iterable[int] | str | None = None, mask_heads=(),
            progress: Callable[[int, int], None] | None = None, rule: str = "conservative",
            precision: str = "auto", trace=None) -> dict:
    """The JSON object of ``python -m analysis explain``: ``sentences``, ``scores``,
    ``selected``, ``status`` / ``rank`` / ``reason`` / ``blocked_by`` per sentence,
    ``position_score`` (neutral position rows) and ``position_score_shuffled``, and
    ``attributions``: {"i": [{"start", "end", "weight"}, …]} over every word of the text for
    each explained sentence (default: the selected ones; ``"all"``: every scored one).
    One forward with the graph serves every attribution; the scores and position ablations are
    float32 (from that forward in float32, else from ``trace``, a ``Trace`` of this document
    and heads, or a forward without a graph). ``precision``: of the gradients (``attribution_dtype``)."""
    if k < 1:
        raise ValueError("k must be at least 1")
    enc = encode(summarizer, text)
    graph, scores, vecs, dtype = graph_passes(summarizer, enc, mask_heads, rule, KEEP_WINDOWS, precision, trace)
    summary = summarizer.summary(enc, scores, k, block_trigram, mask_heads)
    statuses = selection(summary, k, block_trigram)
    if sentences is None:
        sentences = summary.selected
    elif sentences == "all":
        sentences = [i for i, s in enumerate(summary.scores) if s is not None]
    sentences = [int(i) for i in sentences]
    for i in sentences:
        if not 0 <= i < len(enc.sentences):
            raise ValueError(f"no sentence {i}: the document has {len(enc.sentences)} (0-based)")
        _part_of(enc, scores, i)
    w = words(summarizer, enc, text)
    neutral, shuffled = position_scores(summarizer, enc, "neutral,shuffled", vecs=vecs, mask_heads=mask_heads)
    attr = token_attributions(summarizer, enc, *graph, sentences, mask_heads, rule, progress, scores, dtype)
    spans = w.spans.tolist()
    return {
        "sentences": list(summary.sentences),
        "spans": [list(s) for s in summary.spans],
        "scores": list(summary.scores),
        "selected": list(summary.selected),
        "k": k, "block_trigram": block_trigram,
        "status": [s.status for s in statuses],
        "rank": [s.rank for s in statuses],
        "reason": [s.reason for s in statuses],
        "blocked_by": [None if s.blocked_by is None else {"sentence": s.blocked_by, "trigram": list(s.trigram)}
                       for s in statuses],
        "position_score": list(neutral),
        "position_score_shuffled": list(shuffled),
        "attributions": {str(i): [{"start": a, "end": b, "weight": float(x)}
                                  for (a, b), x in zip(spans, word_weights(w, t))] for i, t in attr.items()},
        "method": METHOD if rule == "conservative" else PLAIN_METHOD,
        "precision": str(dtype).removeprefix("torch."),  # of the gradients; scores are float32
        "position_method": NEUTRAL_HELP,
        "truncated": {"sentences": list(summary.truncated), "tokens": summary.tokens_cut},
    }


# ------------------------------------------------------------------ command line

def add_arguments(parser) -> None:
    parser.add_argument("--sentence", type=int, action="append", metavar="I",
                        help="explain sentence I (0-based; repeatable; default: the selected ones)")
    parser.add_argument("--all", action="store_true", help="explain every scored sentence")
    parser.add_argument("--versus", type=int, metavar="J",
                        help="why --sentence I and not J (0-based): both scores, their difference and its parts "
                             "(position, content, words, heads) as \"contrast\"")
    parser.add_argument("--method", default="grad-input",
                        choices=("grad-input", "integrated-gradients", "occlusion"),
                        help="of the word attributions (default grad-input; analysis.attribution)")
    parser.add_argument("--steps", type=int, default=24, help="Integrated Gradients' steps (default 24)")
    parser.add_argument("--baseline", default="auto", choices=("auto", "mask", "pad", "zero"),
                        help="of Integrated Gradients and occlusion (default auto: the one whose score is "
                             "nearest 0)")


def cli(args, summarizer: Summarizer) -> dict:
    from model.__main__ import read_text

    text = read_text(args.file)  # (with --versus, analysis.contrast.cli answers; with another --method,
    #                                analysis.attribution.explain_cli: python -m analysis)
    return explain(summarizer, text, k=args.k, block_trigram=args.block,
                   sentences="all" if args.all else args.sentence)
