"""What if, the alignment: A's and B's sentences matched, and how much each head's attention
changed on what the two share (analysis.compare).

- ``align``: matched by text (the k-th copy of a text in A with its k-th copy in B, so moved
  sentences are followed and duplicates matched in order); a matched pair out of the longest run in
  the same relative order is ``moved``, the rest ``kept``; an unmatched A sentence and an unmatched B
  sentence between the same matched neighbours form a ``replaced`` pair, the others are ``deleted``
  (A only) and ``new`` (B only).
- ``aligned_units``, ``attention_change``: per head the total-variation distance between aligned
  attention rows (Jain & Wallace 2019 §4 compare attention distributions so)."""
from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np
import torch

from model.summarizer import Encoded

KINDS = ("kept", "moved", "replaced", "deleted", "new")  # alignment rows
CHANGE_METHOD = ("per head, the mean over aligned query tokens (sentences for the sentence encoder) of "
                 "the total-variation distance ½ Σ_j |a_A(j) − a_B(j)| between the query's attention "
                 "rows in A and B over the aligned keys, the weight on all other keys pooled into one "
                 "bucket (Jain & Wallace 2019 §4 compare attention distributions by total variation); "
                 "0 = the same attention, 1 = disjoint")

# ------------------------------------------------------------------ alignment

@dataclass(frozen=True)
class Aligned:
    """One row of the alignment: sentence ``a`` of A and ``b`` of B (0-based; None = absent)."""

    a: int | None
    b: int | None
    kind: str  # one of KINDS


def _longest_increasing(xs: list[int]) -> set[int]:
    """Positions of one longest strictly increasing subsequence of xs (patience sorting)."""
    tails, tail_at, back = [], [], [-1] * len(xs)
    for n, x in enumerate(xs):
        k = bisect.bisect_left(tails, x)
        back[n] = tail_at[k - 1] if k else -1
        tails[k:k + 1], tail_at[k:k + 1] = [x], [n]
    keep, n = set(), tail_at[-1] if tail_at else -1
    while n >= 0:
        keep.add(n)
        n = back[n]
    return keep


def align(a: tuple[str, ...] | list[str], b: tuple[str, ...] | list[str]) -> tuple[Aligned, ...]:
    """A's and B's sentences matched by text (see the module docstring). Rows follow A's order,
    each B sentence without an A partner placed after the row of the B sentence before it."""
    where: dict[str, list[int]] = {}
    for j, s in enumerate(b):
        where.setdefault(s, []).append(j)
    to_b: list[int | None] = []
    for s in a:
        to_b.append(where[s].pop(0) if where.get(s) else None)
    matched = [i for i, j in enumerate(to_b) if j is not None]
    in_order = {matched[n] for n in _longest_increasing([to_b[i] for i in matched])}
    to_a = {j: i for i, j in enumerate(to_b) if j is not None}
    kind = {i: "kept" if i in in_order else "moved" for i in matched}
    paired: dict[int, int] = {}  # replaced: A index → B index

    def free(j: int) -> bool:  # a B sentence with no partner yet
        return 0 <= j < len(b) and j not in to_a and j not in paired.values()

    i = 0
    while i < len(a):  # each run of unmatched A sentences against the unmatched B ones at the same place
        if to_b[i] is not None:
            i += 1
            continue
        end = i
        while end < len(a) and to_b[end] is None:
            end += 1
        start = to_b[i - 1] + 1 if i else 0  # right after the B partner of the A sentence before the run
        if not free(start):  # else: the run of free B sentences right before the partner of the one after it
            start = to_b[end] - 1 if end < len(a) else len(b) - 1
            while free(start) and free(start - 1):
                start -= 1
        for x in range(i, end):
            if not free(start):
                break
            paired[x] = start
            start += 1
        i = end
    rows = [Aligned(i, to_b[i], kind[i]) if to_b[i] is not None else
            Aligned(i, paired[i], "replaced") if i in paired else Aligned(i, None, "deleted") for i in range(len(a))]
    used = {r.b for r in rows if r.b is not None}
    for j in range(len(b)):
        if j not in used:
            at = next((n + 1 for n, r in enumerate(rows) if r.b == j - 1), 0)
            rows.insert(at, Aligned(None, j, "new"))
    return tuple(rows)


def sentence_parts(enc: Encoded) -> dict[int, list[int]]:
    """Document sentence → its parts (indices into the sentence encoder's input), in order."""
    out: dict[int, list[int]] = {}
    for p, i in enumerate(enc.input_sentences):
        out.setdefault(i, []).append(p)
    return out


def part_tokens(enc: Encoded, p: int) -> range:
    """Token positions (all windows concatenated) of part p: [CLS] … [SEP]."""
    ends = enc.cls_positions[1:] + (len(enc.tokens),)
    return range(enc.cls_positions[p], ends[p])


def aligned_units(enc_a: Encoded, enc_b: Encoded, alignment) -> tuple[np.ndarray, np.ndarray]:
    """What A and B share: the parts of every sentence present in both (kept or moved: same text,
    so the same WordPieces and parts) → (part pairs [P, 2], token pairs [N, 2]) int64, positions in
    A and in B (tokens: all windows concatenated)."""
    pa, pb = sentence_parts(enc_a), sentence_parts(enc_b)
    parts = [(x, y) for r in alignment if r.kind in ("kept", "moved") for x, y in zip(pa.get(r.a, ()), pb.get(r.b, ()))]
    tokens = [(s, t) for x, y in parts for s, t in zip(part_tokens(enc_a, x), part_tokens(enc_b, y))]
    return np.array(parts, dtype=np.int64).reshape(-1, 2), np.array(tokens, dtype=np.int64).reshape(-1, 2)


def attention_change(att_a, att_b, where_a: np.ndarray, where_b: np.ndarray, n_a: int, n_b: int) -> np.ndarray:
    """Per head, the mean total-variation distance between aligned attention rows (CHANGE_METHOD).

    ``att_a`` / ``att_b``: per window, per layer [H, T_w, T_w] (the sentence encoder: one "window"
    of S parts); ``where_a`` [N] / ``where_b`` [N]: the positions of the N aligned units (tokens or
    parts), over all windows concatenated, pair n = unit n of both; ``n_a`` / ``n_b``: units in
    each document. Row n of A and row n of B are compared over the aligned keys (unit m of A =
    unit m of B), the weight on every other key (edited sentences, or keys of the window one
    document has and the other not) pooled into one bucket. → [L, H] float32; identical runs: 0."""
    L, H = len(att_a[0]), att_a[0][0].shape[0]
    if len(where_a) == 0:
        return np.zeros((L, H), dtype=np.float32)
    starts = [np.cumsum([0] + [x[0].shape[-1] for x in att]) for att in (att_a, att_b)]
    ids = []  # per document, per window: the aligned id of each key, -1 = not aligned
    for n_units, where, st in ((n_a, where_a, starts[0]), (n_b, where_b, starts[1])):
        unit_id = np.full(n_units, -1, dtype=np.int64)
        unit_id[where] = np.arange(len(where))
        ids.append([unit_id[st[w]:st[w + 1]] for w in range(len(st) - 1)])
    win_a = np.searchsorted(starts[0], where_a, side="right") - 1
    win_b = np.searchsorted(starts[1], where_b, side="right") - 1
    total = torch.zeros(L, H, dtype=torch.float64, device=att_a[0][0].device)  # summed where the attention is: one copy back
    for wa, wb in sorted(set(zip(win_a.tolist(), win_b.tolist()))):
        sel = (win_a == wa) & (win_b == wb)
        keys = (ids[0][wa], ids[1][wb])  # [T_wa], [T_wb]
        shared = np.intersect1d(keys[0][keys[0] >= 0], keys[1][keys[1] >= 0])  # aligned keys in both windows
        side = []
        for att, w, where, st, k in ((att_a, wa, where_a, starts[0], keys[0]), (att_b, wb, where_b, starts[1], keys[1])):
            pos = np.full(len(where), -1, dtype=np.int64)
            pos[k[k >= 0]] = np.flatnonzero(k >= 0)
            cols = pos[shared]  # [K] where the shared keys sit in this window
            dev = att[w][0].device  # index tensors go where the attention is (the model's device), once per window
            only = torch.from_numpy(np.flatnonzero((k >= 0) & ~np.isin(k, shared))).to(dev)  # aligned keys only this window has
            rest = torch.from_numpy(np.flatnonzero(k < 0)).to(dev)  # keys not aligned
            rows = where[sel] - st[w]  # [n] the query rows in this window
            side.append((att[w], _index(rows, len(k), dev), _index(cols, len(k), dev), only, rest))
        for layer in range(L):
            (fa, qa, ca, oa, xa), (fb, qb, cb, ob, xb) = side
            ra, rb = _take(fa[layer], qa, 1), _take(fb[layer], qb, 1)  # [H, n, T_w] as stored (float16)
            mass = lambda r, keys: r.index_select(2, keys).float().sum(-1)  # noqa: E731  [H, n]
            # the difference of two float16 weights in float16: exact within a factor 2 (Sterbenz), else to 2⁻¹¹ of it
            tv = ((_take(ra, ca, 2) - _take(rb, cb, 2)).float().abs_().sum(-1) + mass(ra, oa) + mass(rb, ob)
                  + (mass(ra, xa) - mass(rb, xb)).abs())  # [H, n]
            total[layer] += 0.5 * tv.sum(-1).double()
    return (total / len(where_a)).float().cpu().numpy()


def _index(positions: np.ndarray, n: int, device: torch.device) -> list[tuple[int, int]] | torch.Tensor | None:
    """Positions to take along a dimension of size n: None when they are 0..n-1 in order (no copy),
    else their contiguous runs (start, length) when there are few (an edit moves blocks: slices
    copy faster than a gather), else an index tensor on ``device`` (the indexed tensor's)."""
    if len(positions) == n and (positions == np.arange(n)).all():
        return None
    if len(positions) == 0:
        return torch.from_numpy(positions).to(device)
    cut = np.flatnonzero(np.diff(positions) != 1) + 1
    if len(cut) > 32:
        return torch.from_numpy(positions).to(device)
    starts, ends = np.r_[0, cut], np.r_[cut, len(positions)]
    return [(int(positions[a]), int(b - a)) for a, b in zip(starts, ends)]


def _take(x: torch.Tensor, index, dim: int) -> torch.Tensor:
    if index is None:
        return x
    if isinstance(index, torch.Tensor):
        return x.index_select(dim, index)
    return torch.cat([x.narrow(dim, a, n) for a, n in index], dim)
