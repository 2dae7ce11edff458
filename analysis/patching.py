"""What if, activation patching (causal mediation analysis: Vig et al. 2020; Meng et al. 2022; the
convention of TransformerLens): run B with one component of the model taken from A's run and report
the fraction of the sentence's score change it restores, (s_patched − s_B) / (s_A − s_B): 0 = nothing
of the change, 1 = all of it. Components are named by their hook points' parts (model/hooks.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from analysis.device import batch_bytes
from analysis.alignment import Aligned, align, aligned_units, part_tokens, sentence_parts
from analysis.edits import encode, masking
from model.bert import extended_mask
from model.heads import PART_NAMES, Head
from model.hooks import blocks, intervene, record
from model.summarizer import Encoded, Summarizer, pool_sentences

PATCH_METHOD = ("activation patching (causal mediation analysis: Vig et al. 2020; Meng et al. 2022): B is "
                "run with one component taken from A's run; fraction restored = (s_patched − s_B) / "
                "(s_A − s_B), the convention of TransformerLens")
PATCH_CAVEAT = ("Fractions need not add up: components interact, and a fraction can exceed 1 or be "
                "negative (the component pushes the other way); one sentence of one document.")



# ------------------------------------------------------------------ activation patching

CHUNK_BYTES = 8 << 20  # BERT head copies run together while their attention maps fit in ~8 MB (on a
# 2-core CPU, larger batches ran slower per copy than one at a time; a GPU: analysis.device.batch_bytes)
PATCH_KINDS = {  # kind → what is taken from A: the model's hook point (model.hooks), its layer left out, or a whole
    # input of the sentence encoder (layers and heads 0-based)
    "none": "nothing (B as it is: 0 by definition)",
    "all": "every aligned sentence's vector and position row (exactly 1 when every sentence of B is aligned)",
    "inter.pe": "the sentence's position row (the sinusoid row the sentence encoder adds)",
    "vector": "the sentence's vector (BERT's pooled output)",
    "bert.embed": "BERT's input embeddings of the sentence's tokens",
    "bert.resid_post": "the output of BERT layer `layer` on the sentence's tokens",
    "bert.attn.z": "head `head` of BERT layer `layer` on the sentence's tokens (its slice of the context "
                 "vector before the attention output projection)",
    "inter.resid_post": "the output of sentence-encoder layer `layer` at the sentence",
    "inter.attn.z": "head `head` of sentence-encoder layer `layer` at the sentence (its slice of the context "
                    "vector before the output projection)",
}


@dataclass(frozen=True)
class PatchRow:
    kind: str  # a key of PATCH_KINDS
    layer: int | None  # 0-based
    head: int | None  # 0-based
    fraction: float  # of the score change restored; NaN when A and B give the sentence the same score
    score: float  # the sentence's score in B with this component from A


def point(r: PatchRow) -> str | None:
    """The hook point a row patches ("bert.3.attn.z": its head is ``r.head``); None: a whole input."""
    if r.layer is None:
        return r.kind if "." in r.kind else None
    part, name = r.kind.split(".", 1)
    return f"{part}.{r.layer}.{name}"


def row_label(r: PatchRow) -> str:
    """A component as people read it, layers and heads 1-based: "BERT layer 3", "Sentence encoder 1.2"
    (a head as model.heads.Head labels it)."""
    fixed = {"none": "nothing", "all": "all aligned vectors and positions", "inter.pe": "position row",
             "vector": "sentence vector", "bert.embed": "BERT embeddings"}
    if r.kind in fixed:
        return fixed[r.kind]
    part = r.kind.split(".")[0]
    if r.head is not None:
        return Head(part, r.layer, r.head).label
    return f"{PART_NAMES[part]} layer {r.layer + 1}"


@dataclass(frozen=True)
class Patching:
    """Activation patching of one sentence present in both documents (``patch``)."""

    sentence_a: int  # 0-based, in A
    sentence_b: int  # 0-based, in B
    window_a: int  # the BERT window that holds it
    window_b: int
    score_a: float
    score_b: float
    rows: tuple[PatchRow, ...]

    def grid(self, kind: str) -> np.ndarray:
        """Fractions of one kind as an array: [L, H] for heads, [layers] for layers, [1] else. float32."""
        rows = [r for r in self.rows if r.kind == kind]
        if not rows:
            return np.zeros((0,), dtype=np.float32)
        if rows[0].head is None:
            return np.array([r.fraction for r in rows], dtype=np.float32)
        out = np.full((max(r.layer for r in rows) + 1, max(r.head for r in rows) + 1), np.nan, dtype=np.float32)
        for r in rows:
            out[r.layer, r.head] = r.fraction
        return out

    def components(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every row but "none" and the BERT heads (those are ``grid("bert.attn.z")``), for
        ``viz.what_if.component_bars``: labels (layers and heads 1-based), fractions float32, kinds."""
        rows = [r for r in self.rows if r.kind not in ("none", "bert.attn.z")]
        return (np.array([row_label(r) for r in rows], dtype=object),
                np.array([r.fraction for r in rows], dtype=np.float32), np.array([r.kind for r in rows], dtype=object))

    def to_json(self) -> dict:
        num = lambda x: None if not np.isfinite(x) else float(x)  # noqa: E731  (JSON has no NaN)
        return {"sentence_a": self.sentence_a, "sentence_b": self.sentence_b, "window_a": self.window_a,
                "window_b": self.window_b, "score_a": self.score_a, "score_b": self.score_b,
                "rows": [{"kind": r.kind, "point": point(r), "layer": r.layer, "head": r.head, "fraction": num(r.fraction),
                          "score": float(r.score)} for r in self.rows],
                "kinds": PATCH_KINDS, "method": PATCH_METHOD, "caveat": PATCH_CAVEAT}


@dataclass
class _States:
    """One document's run for patching: every sentence vector, and in the window holding the
    sentence's part every BERT hidden state and context vector; the sentence encoder's layer
    outputs and context vectors."""

    enc: Encoded
    part: int
    window: int
    rows: torch.Tensor  # [n] the part's token positions in its window
    inputs: dict  # window_inputs of that window
    vecs: torch.Tensor  # [1, S, D]
    hidden: torch.Tensor  # [L + 1, T_w, D]: embeddings, then the output of each layer
    ctx: torch.Tensor  # [L, T_w, D]: each layer's heads' outputs (input of attention.output.dense)
    inter_out: torch.Tensor  # [L2, S, D]
    inter_ctx: torch.Tensor  # [L2, S, D] (input of self_attn.final_linear)
    scores: torch.Tensor  # [S]


def _only_part(enc: Encoded, i: int, name: str) -> int:
    parts = sentence_parts(enc).get(i, [])
    if not parts:
        raise ValueError(f"sentence {i + 1} of {name} is not scored (too short, or not fed): nothing to patch")
    if len(parts) > 1:
        raise ValueError(f"sentence {i + 1} of {name} is longer than a BERT window (fed in {len(parts)} parts): "
                         "patching needs it whole")
    return parts[0]


def _states(s: Summarizer, enc: Encoded, part: int) -> _States:
    """Every window through BERT (``BertSumExt.sentence_vectors``), the part's window layer by
    layer (``BertEncoder.forward``'s start/end) with the context vectors recorded; then the
    sentence encoder with its layer outputs and context vectors recorded."""
    model = s.model
    window = int(enc.part_windows()[part])
    a, b = enc.window(window)
    inputs = s.window_inputs(enc, a, b)
    L, L2 = len(blocks(model, "bert")), len(blocks(model, "inter"))
    vecs = []
    for w in range(len(enc.window_starts)):
        if w != window:
            vecs.append(model.sentence_vectors(**s.window_inputs(enc, *enc.window(w))))  # [1, S_w, D]
            continue
        mask = extended_mask(inputs["attention_mask"])  # [1, 1, 1, T]
        with record(model, [f"bert.{l}.attn.z" for l in range(L)]) as ctx:
            hidden = [model.embed(inputs["input_ids"], inputs["segment_ids"])]  # [1, T, D]
            for l in range(L):
                hidden.append(model.bert_layers(hidden[-1], mask, start=l, end=l + 1))
        vecs.append(_pool(s, hidden[-1], inputs))
    vecs = torch.cat(vecs, 1)  # [1, S, D]
    with record(model, [f"inter.{l}.{p}" for l in range(L2) for p in ("resid_post", "attn.z")]) as out:
        scores = s.score_vectors(vecs)[0]  # [S]
    start = enc.cls_positions[part] - a
    n = len(part_tokens(enc, part))
    return _States(enc, part, window, torch.arange(start, start + n, device=s.device), inputs, vecs,
                   torch.cat(hidden), torch.cat([ctx[f"bert.{l}.attn.z"][0] for l in range(L)]),
                   torch.cat([out[f"inter.{l}.resid_post"][0] for l in range(L2)]),
                   torch.cat([out[f"inter.{l}.attn.z"][0] for l in range(L2)]), scores)


def _pool(s: Summarizer, top: torch.Tensor, inputs: dict) -> torch.Tensor:
    """Top-layer states of one window [N, T, D] → its sentence vectors [N, S_w, D], as
    ``BertSumExt.sentence_vectors`` reads them."""
    batch = lambda name: inputs[name].expand(top.shape[0], -1)  # noqa: E731  [N, ·]
    return s.model.scale * pool_sentences(top, batch("attention_mask"), batch("cls_positions"), batch("cls_mask"),
                                          s.model.pooling)


def _head_blocks(heads: int, d: int, device) -> torch.Tensor:
    """[heads, d] 0/1: row h selects head h's slice of a context vector (heads concatenated)."""
    return torch.eye(heads, device=device).repeat_interleave(d // heads, 1)


@torch.inference_mode()
def patch(summarizer: Summarizer, text_a: str, text_b: str, sentence: int, bert_heads: bool = True,
          alignment: tuple[Aligned, ...] | None = None,
          progress: Callable[[int, int], None] | None = None) -> Patching:
    """Activation patching (Vig et al. 2020; Meng et al. 2022) of A's sentence ``sentence``
    (0-based; it must be in B unchanged, and fed whole to BERT in both): B is run again with one
    component taken from A's run, and each ``PatchRow`` gives the sentence's score and the
    fraction of its change restored, (s_patched − s_B) / (s_A − s_B) (TransformerLens's convention).

    Components (``PATCH_KINDS``): the sentence's position row and its vector in the sentence
    encoder; BERT's input embeddings and every layer's output on the sentence's tokens (the same
    WordPieces in A and B, matched one by one); each BERT head's output on those tokens; each
    sentence-encoder layer's output and each head's at the sentence. ``all`` takes every aligned
    sentence's vector and position row from A: when every sentence of B is aligned (a move, a
    swap) B's sentence encoder then computes a permutation of A's, and the sentence's score is
    A's: fraction 1 (up to rounding); ``none`` patches nothing: 0.

    Cost: only the window holding the sentence in B runs again, from the cached input of the
    patched layer (``BertEncoder.forward``'s ``start``), the other windows' sentence vectors
    reused. A BERT head changes its layer's output on the sentence's tokens only, so that layer
    runs once, on those rows (``BertLayer``'s ``rows``), a pre-hook on ``attention.output.dense``
    turning the context vectors into H copies (head h from A in copy h); the layers above run on
    the whole window, a few copies per batch (``CHUNK_BYTES``). Every variant then goes through
    the sentence encoder as one batch. ``bert_heads=False`` skips the heads. ``progress(done, total)``
    after each BERT layer patched (its output, then its heads)."""
    s = masking(summarizer)
    enc_a, enc_b = encode(summarizer, text_a), encode(summarizer, text_b)
    if not 0 <= sentence < len(enc_a.sentences):
        raise ValueError(f"no sentence {sentence + 1} in A (it has {len(enc_a.sentences)})")
    alignment = alignment or align(enc_a.sentences, enc_b.sentences)
    row = next(r for r in alignment if r.a == sentence)
    if row.kind not in ("kept", "moved"):
        raise ValueError(f"sentence {sentence + 1} of A is {row.kind} in B: patching needs it in both, unchanged")
    A, B = _states(s, enc_a, _only_part(enc_a, sentence, "A")), _states(s, enc_b, _only_part(enc_b, row.b, "B"))
    model = s.model
    (L, H, _), ext = s.size(), model.ext_layer.config
    L2, H2 = ext.layers, ext.heads
    D = B.vecs.shape[-1]
    mask = extended_mask(B.inputs["attention_mask"])  # [1, 1, 1, T]
    pa, pb, ra, rb = A.part, B.part, A.rows, B.rows
    labels: list[tuple[str, int | None, int | None]] = []

    # BERT: the window's new sentence vectors per variant
    window_vecs, steps = [], L + 1 + (L if bert_heads else 0)
    for l in range(L + 1):  # hidden state l: the embeddings (0), else the output of layer l - 1
        x = B.hidden[l:l + 1].clone()  # [1, T, D]
        x[:, rb] = A.hidden[l, ra]
        window_vecs.append(_pool(s, model.bert_layers(x, mask, start=l) if l < L else x, B.inputs))
        if progress:
            progress(l + 1, steps)
    labels += [("bert.embed", None, None)] + [("bert.resid_post", l, None) for l in range(L)]
    if bert_heads:
        heads = _head_blocks(H, D, s.device)[:, None]  # [H, 1, D]
        T = B.hidden.shape[1]
        chunk = max(1, batch_bytes(s.device, CHUNK_BYTES) // (4 * H * T * T))  # copies per batch: one [H, T, T] map each
        for l in range(L):
            def swap_heads(z, module, args, l=l):  # the context vectors [1, n, D] → H copies, head h from A in copy h
                return z * (1 - heads) + A.ctx[l, ra][None] * heads  # [H, n, D]
            with intervene(model, {f"bert.{l}.attn.z": swap_heads}):
                rows = blocks(model, "bert")[l].module(B.hidden[l:l + 1], mask, None, rb[None])  # [H, n, D] on the sentence
            for c in range(0, H, chunk):
                y = B.hidden[l + 1:l + 2].repeat(min(chunk, H - c), 1, 1)  # [chunk, T, D]
                y[:, rb] = rows[c:c + chunk]
                window_vecs.append(_pool(s, model.bert_layers(y, mask, start=l + 1) if l + 1 < L else y, B.inputs))
            labels += [("bert.attn.z", l, h) for h in range(H)]
            if progress:
                progress(L + 2 + l, steps)
    window_vecs = torch.cat(window_vecs)  # [N_bert, S_w, D]
    first = int(enc_b.window_parts()[B.window])
    n_bert = len(window_vecs)

    # the sentence encoder: every variant as one batch
    parts, _ = aligned_units(enc_a, enc_b, alignment)
    head_copies = [(l, h) for l in range(L2) for h in range(H2)]
    N = 4 + n_bert + L2 + len(head_copies)
    pe_table = model.sentence_pe(max(len(A.scores), len(B.scores)))  # [S_max, D]
    vecs = B.vecs.repeat(N, 1, 1)  # [N, S_B, D]
    pe = pe_table[:len(B.scores)].repeat(N, 1, 1)  # [N, S_B, D]
    pe[1, pb] = pe_table[pa]  # copy 0: none; 1: position; 2: vector; 3: all
    vecs[2, pb] = A.vecs[0, pa]
    xa, xb = (torch.from_numpy(parts[:, c]).to(s.device) for c in (0, 1))
    vecs[3, xb] = A.vecs[0, xa]
    pe[3, xb] = pe_table[xa]
    vecs[4:4 + n_bert, first:first + window_vecs.shape[1]] = window_vecs
    labels = [("none", None, None), ("inter.pe", None, None), ("vector", None, None), ("all", None, None)] + labels
    at_layer = 4 + n_bert  # copies at_layer + l: encoder layer l's output; then the heads
    labels += [("inter.resid_post", l, None) for l in range(L2)] + [("inter.attn.z", l, h) for l, h in head_copies]
    inter_blocks = _head_blocks(H2, D, s.device)  # [H2, D]

    def layer_hook(l):
        def fn(out, module, args):
            out = out.clone()
            out[at_layer + l, pb] = A.inter_out[l, pa]
            return out
        return fn

    def head_hook(l):
        first_head = at_layer + L2 + l * H2

        def fn(z, module, args):
            ctx = z.clone()  # [N, S, D]
            m = inter_blocks  # [H2, D]
            ctx[first_head:first_head + H2, pb] = ctx[first_head:first_head + H2, pb] * (1 - m) + A.inter_ctx[l, pa] * m
            return ctx
        return fn

    with intervene(model, {f"inter.{l}.attn.z": head_hook(l) for l in range(L2)}
                   | {f"inter.{l}.resid_post": layer_hook(l) for l in range(L2)}):
        scores = s.score_vectors(vecs, None, pe)[:, pb].double().cpu()  # [N]
    s_a, s_b = float(A.scores[pa]), float(scores[0])
    change = s_a - s_b
    fractions = (scores - s_b) / change if abs(change) > 1e-7 else torch.full_like(scores, float("nan"))
    rows = tuple(PatchRow(kind, layer, head, float(f) + 0.0, float(x))  # + 0.0: no -0.0
                 for (kind, layer, head), f, x in zip(labels, fractions, scores))
    return Patching(sentence, row.b, A.window, B.window, s_a, s_b, rows)
