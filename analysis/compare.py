"""What if: document A against an edited copy B — the two summaries side by side, which heads'
attention changed, and which parts of the model carry a sentence's score change.

- Edits (``parse_edit``, ``apply_edits``): ``delete:I``, ``move:I:J`` (J a sentence number,
  ``start`` or ``end``), ``replace:I:TEXT``, ``mask:I:WORD``, ``swap:I:J``; sentence numbers
  1-based, as the app shows them; several edits apply one after the other, each numbering the
  sentences of the document as the previous one left it. Sentences are the model's own
  (``model.text.split_sentences``). A masked word becomes one ``[MASK]`` per WordPiece; the
  tokenizer of ``model/text.py`` would read the text ``[MASK]`` as ``[``, ``mask``, ``]``, so the
  comparison reads both documents with ``masking(summarizer)``, the same model with a tokenizer
  that keeps ``[MASK]`` as BERT's mask token (a literal ``[MASK]`` in A is read the same way).
- ``align``: A's and B's sentences matched by text (the k-th copy of a text in A with its k-th
  copy in B, so moved sentences are followed and duplicates matched in order); a matched pair out
  of the longest run in the same relative order is ``moved``, the rest ``kept``; an unmatched A
  sentence and an unmatched B sentence between the same matched neighbours form a ``replaced``
  pair, the others are ``deleted`` (A only) and ``new`` (B only).
- ``compare``: both runs, every aligned sentence's score in A and B, which sentences entered or
  left the summary and why (``analysis.explain.selection``), and per head how much its attention
  changed on what the two runs share (``attention_change``: total-variation distance, as Jain &
  Wallace 2019 §4 compare attention distributions).
- ``patch``: activation patching (causal mediation analysis: Vig et al. 2020; Meng et al. 2022;
  the convention of TransformerLens): run B with one component of the model taken from A's run
  and report the fraction of the sentence's score change it restores,
  (s_patched − s_B) / (s_A − s_B): 0 = nothing of the change, 1 = all of it.
"""
from __future__ import annotations

import bisect
import copy
import re
import weakref
from dataclasses import dataclass, field

import numpy as np
import torch
from tokenizers import AddedToken

from analysis.device import batch_bytes
from analysis.explain import SentenceStatus, selection
from model.bert import extended_mask
from model.hooks import blocks, intervene, names, record
from model.summarizer import CONTROL, Encoded, Summarizer, pool_sentences
from model.text import WordPieceTokenizer, split_sentences
from model.trace import Summary

MASK = "[MASK]"
KINDS = ("kept", "moved", "replaced", "deleted", "new")  # alignment rows
CHANGE_METHOD = ("per head, the mean over aligned query tokens (sentences for the sentence encoder) of "
                 "the total-variation distance ½ Σ_j |a_A(j) − a_B(j)| between the query's attention "
                 "rows in A and B over the aligned keys, the weight on all other keys pooled into one "
                 "bucket (Jain & Wallace 2019 §4 compare attention distributions by total variation); "
                 "0 = the same attention, 1 = disjoint")
PATCH_METHOD = ("activation patching (causal mediation analysis: Vig et al. 2020; Meng et al. 2022): B is "
                "run with one component taken from A's run; fraction restored = (s_patched − s_B) / "
                "(s_A − s_B), the convention of TransformerLens")
PATCH_CAVEAT = ("Fractions need not add up: components interact, and a fraction can exceed 1 or be "
                "negative (the component pushes the other way); one sentence of one document.")


# ------------------------------------------------------------------ edits

@dataclass(frozen=True)
class Delete:
    i: int  # 0-based here; 1-based in the string form

    def __str__(self):
        return f"delete:{self.i + 1}"


@dataclass(frozen=True)
class Move:
    i: int
    to: int | str  # 0-based position in the result, or "start" / "end"

    def __str__(self):
        return f"move:{self.i + 1}:{self.to if isinstance(self.to, str) else self.to + 1}"


@dataclass(frozen=True)
class Replace:
    i: int
    text: str

    def __str__(self):
        return f"replace:{self.i + 1}:{self.text}"


@dataclass(frozen=True)
class Mask:
    i: int
    word: str

    def __str__(self):
        return f"mask:{self.i + 1}:{self.word}"


@dataclass(frozen=True)
class Swap:
    i: int
    j: int

    def __str__(self):
        return f"swap:{self.i + 1}:{self.j + 1}"


Edit = Delete | Move | Replace | Mask | Swap
FORMS = {"delete": "delete:I", "move": "move:I:J (J a sentence number, start or end)",
         "replace": "replace:I:TEXT", "mask": "mask:I:WORD", "swap": "swap:I:J"}
EDIT_FORMS = ", ".join(FORMS.values())


def parse_edit(spec: str) -> Edit:
    """``"move:1:end"`` → ``Move(0, "end")``; sentence numbers 1-based. ValueError naming the edit."""
    kind, _, rest = spec.strip().partition(":")

    def bad(why: str) -> ValueError:
        return ValueError(f"bad edit {spec!r}: {why}")

    def number(x: str) -> int:
        if not re.fullmatch(r"\s*\d+\s*", x) or int(x) < 1:
            raise bad(f"{x!r} is not a sentence number (1, 2, …)")
        return int(x) - 1

    if kind not in FORMS:
        raise bad(f"unknown edit {kind!r} (edits: {EDIT_FORMS})")
    arity = FORMS[kind].split(" ")[0].count(":")
    args = rest.split(":", arity - 1) if rest else []
    if len(args) != arity:
        raise bad(f"expected {FORMS[kind]}")
    i = number(args[0])
    if kind == "delete":
        return Delete(i)
    if kind == "swap":
        return Swap(i, number(args[1]))
    if kind == "move":
        to = args[1].strip().lower()
        return Move(i, to if to in ("start", "end") else number(args[1]))
    if not args[1].strip():
        raise bad("the text is empty" if kind == "replace" else "the word is empty")
    return Replace(i, args[1].strip()) if kind == "replace" else Mask(i, args[1].strip())


def _sentences(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The text as ``Summarizer.encode`` cleans it, and the spans of its sentences (the model's
    splitter) without their surrounding white space: text[a:b] = ``Encoded.sentences``."""
    text = CONTROL.sub(" ", text)
    spans = []
    for a, b in split_sentences(text):
        seg = text[a:b]
        spans.append((a + len(seg) - len(seg.lstrip()), b - len(seg) + len(seg.rstrip())))
    return text, spans


def sentences(text: str) -> list[str]:
    """The document's sentences as the edits number them (1-based there; the model's splitter)."""
    cleaned, spans = _sentences(text)
    return [cleaned[a:b] for a, b in spans]


def apply_edits(text: str, edits, summarizer: Summarizer) -> str:
    """Document B: ``text`` with ``edits`` (``Edit`` objects or their string forms) applied in
    order. Sentences that stay next to each other keep the text between them; elsewhere B puts a
    line break (a line break always ends a sentence, so B splits into exactly the edited
    sentences, except that a replacement text may hold several). ``mask:I:WORD`` replaces every
    occurrence of WORD (whole words, case-insensitive) in sentence I by one ``[MASK]`` per WordPiece."""
    text, spans = _sentences(text)
    items: list[tuple[int | None, str]] = [(n, text[a:b]) for n, (a, b) in enumerate(spans)]  # (A index or None, text)
    for e in edits:
        e = parse_edit(e) if isinstance(e, str) else e
        n = len(items)
        numbers = [e.i, getattr(e, "j", 0), getattr(e, "to", 0)]
        for x in numbers:
            if isinstance(x, int) and not 0 <= x < n:
                raise ValueError(f"bad edit {str(e)!r}: no sentence {x + 1} (the document has {n} at this point)")
        if isinstance(e, Delete):
            if n == 1:
                raise ValueError(f"bad edit {str(e)!r}: it would delete the only sentence")
            items.pop(e.i)
        elif isinstance(e, Move):
            item = items.pop(e.i)
            items.insert({"start": 0, "end": n - 1}.get(e.to, e.to), item)
        elif isinstance(e, Swap):
            items[e.i], items[e.j] = items[e.j], items[e.i]
        elif isinstance(e, Replace):
            items[e.i] = (None, " ".join(e.text.split()))
        else:
            pattern = re.compile(rf"(?<!\w){re.escape(e.word)}(?!\w)", re.IGNORECASE)
            sentence = items[e.i][1]
            if not pattern.search(sentence):
                raise ValueError(f"bad edit {str(e)!r}: sentence {e.i + 1} has no word {e.word!r}")
            pieces = lambda m: " ".join([MASK] * len(summarizer.tokenizer.tokenize([m[0]])[0]))  # noqa: E731
            items[e.i] = (None, pattern.sub(pieces, sentence))
    out = [items[0][1]]
    for (p, _), (q, t) in zip(items, items[1:]):
        out.append(text[spans[p][1]:spans[q][0]] if p is not None and q == p + 1 else "\n")
        out.append(t)
    return "".join(out)


_MASKING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # summarizer → its masking tokenizer


def masking(summarizer: Summarizer) -> Summarizer:
    """The same model (shared, not copied) with a tokenizer that reads ``[MASK]`` as BERT's mask
    token: the tokenizer of ``model/text.py`` splits it into ``[``, ``mask``, ``]``. Only the
    tokenizer is kept between calls; the rest (device, precision) is the summarizer's as it is now."""
    if summarizer not in _MASKING:
        tok = copy.deepcopy(summarizer.tokenizer.tokenizer)
        tok.add_special_tokens([AddedToken(MASK, normalized=False)])
        _MASKING[summarizer] = WordPieceTokenizer(tok, summarizer.tokenizer.vocab)
    other = copy.copy(summarizer)
    other.tokenizer = _MASKING[summarizer]
    return other


def encode(summarizer: Summarizer, text: str) -> Encoded:
    """The whole document as ``compare`` and ``patch`` read it (``[MASK]`` = the mask token)."""
    return masking(summarizer).encode(text, summarizer.max_windows)


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


# ------------------------------------------------------------------ the two runs

@dataclass(frozen=True)
class _Run:
    """One document's forward pass with every window's BERT attention and the sentence encoder's."""

    enc: Encoded
    summary: Summary
    part_scores: np.ndarray  # [S] float32
    bert: tuple[tuple[torch.Tensor, ...], ...]  # per window, per layer [H, T_w, T_w] float16
    inter: torch.Tensor  # [L2, H2, S, S] float32


def _run(summarizer: Summarizer, text: str, k: int, block_trigram: bool) -> _Run:
    """The model's forward pass (``Summarizer.sentence_vectors`` window by window, then
    ``score_vectors``), recording the attention of every window as ``Summarizer.trace`` records
    one window's (``record`` on the softmax modules)."""
    s = masking(summarizer)
    enc = encode(summarizer, text)
    bert_points, inter_points = names(s.model, r"bert\.\d+\.attn\.pattern"), names(s.model, r"inter\.\d+\.attn\.pattern")
    vecs, att = [], []
    with torch.inference_mode():
        for w in range(len(enc.window_starts)):
            with record(s.model, bert_points) as rec:
                vecs.append(s.model.sentence_vectors(**s.window_inputs(enc, *enc.window(w))))  # [1, S_w, D]
            att.append(tuple(rec[n][0][0].half() for n in bert_points))  # L × [H, T_w, T_w]
        with record(s.model, inter_points) as rec:
            scores = s.score_vectors(torch.cat(vecs, 1))[0]  # [S]
        inter = torch.stack([rec[n][0][0] for n in inter_points])  # [L2, H2, S, S]
    return _Run(enc, s.summary(enc, scores, k, block_trigram), scores.float().cpu().numpy(), tuple(att), inter.cpu())


def _parts(enc: Encoded) -> dict[int, list[int]]:
    """Document sentence → its parts (indices into the sentence encoder's input), in order."""
    out: dict[int, list[int]] = {}
    for p, i in enumerate(enc.input_sentences):
        out.setdefault(i, []).append(p)
    return out


def _part_tokens(enc: Encoded, p: int) -> range:
    """Token positions (all windows concatenated) of part p: [CLS] … [SEP]."""
    ends = enc.cls_positions[1:] + (len(enc.tokens),)
    return range(enc.cls_positions[p], ends[p])


def aligned_units(enc_a: Encoded, enc_b: Encoded, alignment) -> tuple[np.ndarray, np.ndarray]:
    """What A and B share: the parts of every sentence present in both (kept or moved: same text,
    so the same WordPieces and parts) → (part pairs [P, 2], token pairs [N, 2]) int64, positions in
    A and in B (tokens: all windows concatenated)."""
    pa, pb = _parts(enc_a), _parts(enc_b)
    parts = [(x, y) for r in alignment if r.kind in ("kept", "moved") for x, y in zip(pa.get(r.a, ()), pb.get(r.b, ()))]
    tokens = [(s, t) for x, y in parts for s, t in zip(_part_tokens(enc_a, x), _part_tokens(enc_b, y))]
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


# ------------------------------------------------------------------ the comparison

@dataclass(frozen=True)
class Change:
    """A sentence that entered or left the summary (row of the alignment) and why."""

    row: int
    a: int | None
    b: int | None
    reason: str


@dataclass(frozen=True, eq=False)
class Comparison:
    """A against B. Per alignment row: ``scores_a`` / ``scores_b`` (None: absent or not scored),
    ``delta`` = B − A, ``status_a`` / ``status_b`` (``analysis.explain.selection``; None: absent).
    ``bert_change`` [L, H] and ``inter_change`` [L2, H2]: attention change per head
    (``attention_change``) on ``aligned_tokens`` tokens and ``aligned_parts`` sentence parts."""

    summary_a: Summary
    summary_b: Summary
    alignment: tuple[Aligned, ...]
    scores_a: tuple[float | None, ...]
    scores_b: tuple[float | None, ...]
    delta: tuple[float | None, ...]
    status_a: tuple[SentenceStatus | None, ...]
    status_b: tuple[SentenceStatus | None, ...]
    entered: tuple[Change, ...]
    left: tuple[Change, ...]
    bert_change: np.ndarray = field(repr=False)  # [L, H] float32
    inter_change: np.ndarray = field(repr=False)  # [L2, H2] float32
    aligned_tokens: int
    aligned_parts: int
    k: int
    block_trigram: bool

    def to_json(self) -> dict:
        """The JSON object of ``python -m analysis compare`` (indices 0-based; see ``cli``)."""
        def side(summary, doc, statuses):
            st = {getattr(r, doc): x for r, x in zip(self.alignment, statuses) if getattr(r, doc) is not None}
            return {"sentences": list(summary.sentences), "scores": list(summary.scores),
                    "selected": list(summary.selected), "summary": summary.summary,
                    "status": [st[i].status for i in range(len(st))], "reason": [st[i].reason for i in range(len(st))]}

        change = lambda c: {"row": c.row, "a": c.a, "b": c.b, "reason": c.reason}  # noqa: E731
        return {
            "a": side(self.summary_a, "a", self.status_a), "b": side(self.summary_b, "b", self.status_b),
            "alignment": [{"a": r.a, "b": r.b, "kind": r.kind, "score_a": x, "score_b": y, "delta": d,
                           "status_a": u and u.status, "status_b": v and v.status}
                          for r, x, y, d, u, v in zip(self.alignment, self.scores_a, self.scores_b, self.delta,
                                                      self.status_a, self.status_b)],
            "entered": [change(c) for c in self.entered], "left": [change(c) for c in self.left],
            "head_change": {"bert": self.bert_change.tolist(), "inter": self.inter_change.tolist(),
                            "aligned_tokens": self.aligned_tokens, "aligned_parts": self.aligned_parts,
                            "method": CHANGE_METHOD},
            "k": self.k, "block_trigram": self.block_trigram,
        }


def _changes(alignment, status_a, status_b) -> tuple[tuple[Change, ...], tuple[Change, ...]]:
    """The rows whose sentence is selected in B and not in A (entered) or the reverse (left), with
    a reason from the statuses."""
    entered, left = [], []
    for n, (r, u, v) in enumerate(zip(alignment, status_a, status_b)):
        in_a, in_b = u is not None and u.status == "selected", v is not None and v.status == "selected"
        if in_b and not in_a:
            was = ("new in B" if r.kind == "new" else
                   f"it replaces sentence {r.a + 1} of A, which was {u.status}" if r.kind == "replaced" else
                   f"in A {u.reason}")
            entered.append(Change(n, r.a, r.b, f"{v.reason}; {was}"))
        elif in_a and not in_b:
            now = ("deleted in B" if r.kind == "deleted" else
                   f"replaced in B by sentence {r.b + 1}, which is {v.status}" if r.kind == "replaced" else
                   f"{v.reason}")
            left.append(Change(n, r.a, r.b, f"{now}; in A {u.reason}"))
    return tuple(entered), tuple(left)


def compare(summarizer: Summarizer, text_a: str, text_b: str, k: int = 3, block_trigram: bool = True) -> Comparison:
    """Both documents summarised (one forward each, recording every window's attention), aligned,
    their statuses, and how much each head's attention changed (see ``Comparison``)."""
    if k < 1:
        raise ValueError("k must be at least 1")
    ra, rb = _run(summarizer, text_a, k, block_trigram), _run(summarizer, text_b, k, block_trigram)
    alignment = align(ra.enc.sentences, rb.enc.sentences)
    parts, tokens = aligned_units(ra.enc, rb.enc, alignment)
    bert = attention_change(ra.bert, rb.bert, tokens[:, 0], tokens[:, 1], len(ra.enc.tokens), len(rb.enc.tokens))
    inter = attention_change([ra.inter], [rb.inter], parts[:, 0], parts[:, 1], len(ra.part_scores), len(rb.part_scores))
    st_a, st_b = selection(ra.summary, k, block_trigram), selection(rb.summary, k, block_trigram)
    pick = lambda xs, i: None if i is None else xs[i]  # noqa: E731
    scores_a = tuple(pick(ra.summary.scores, r.a) for r in alignment)
    scores_b = tuple(pick(rb.summary.scores, r.b) for r in alignment)
    status_a, status_b = tuple(pick(st_a, r.a) for r in alignment), tuple(pick(st_b, r.b) for r in alignment)
    entered, left = _changes(alignment, status_a, status_b)
    return Comparison(ra.summary, rb.summary, alignment, scores_a, scores_b,
                      tuple(None if x is None or y is None else y - x for x, y in zip(scores_a, scores_b)),
                      status_a, status_b, entered, left, bert, inter, len(tokens), len(parts), k, block_trigram)


# ------------------------------------------------------------------ activation patching

CHUNK_BYTES = 8 << 20  # BERT head copies run together while their attention maps fit in ~8 MB (on a
# 2-core CPU, larger batches ran slower per copy than one at a time; a GPU: analysis.device.batch_bytes)
PATCH_KINDS = {  # kind → what is taken from A (layers and heads 0-based)
    "none": "nothing (B as it is: 0 by definition)",
    "all": "every aligned sentence's vector and position row (exactly 1 when every sentence of B is aligned)",
    "position": "the sentence's position row (the sinusoid row the sentence encoder adds)",
    "vector": "the sentence's vector (BERT's pooled output)",
    "bert_embeddings": "BERT's input embeddings of the sentence's tokens",
    "bert_layer": "the output of BERT layer `layer` on the sentence's tokens",
    "bert_head": "head `head` of BERT layer `layer` on the sentence's tokens (its slice of the context "
                 "vector before the attention output projection)",
    "encoder_layer": "the output of sentence-encoder layer `layer` at the sentence",
    "encoder_head": "head `head` of sentence-encoder layer `layer` at the sentence (its slice of the context "
                    "vector before the output projection)",
}


@dataclass(frozen=True)
class PatchRow:
    kind: str  # a key of PATCH_KINDS
    layer: int | None  # 0-based
    head: int | None  # 0-based
    fraction: float  # of the score change restored; NaN when A and B give the sentence the same score
    score: float  # the sentence's score in B with this component from A


def row_label(r: PatchRow) -> str:
    """A component as people read it, layers and heads 1-based: "BERT layer 3", "encoder head 1.2"."""
    fixed = {"none": "nothing", "all": "all aligned vectors and positions", "position": "position row",
             "vector": "sentence vector", "bert_embeddings": "BERT embeddings"}
    if r.kind in fixed:
        return fixed[r.kind]
    name = {"bert_layer": "BERT layer", "bert_head": "BERT head", "encoder_layer": "encoder layer",
            "encoder_head": "encoder head"}[r.kind]
    return f"{name} {r.layer + 1}" + (f".{r.head + 1}" if r.head is not None else "")


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
        """Every row but "none" and the BERT heads (those are ``grid("bert_head")``), for
        ``viz.what_if.component_bars``: labels (layers and heads 1-based), fractions float32, kinds."""
        rows = [r for r in self.rows if r.kind not in ("none", "bert_head")]
        return (np.array([row_label(r) for r in rows], dtype=object),
                np.array([r.fraction for r in rows], dtype=np.float32), np.array([r.kind for r in rows], dtype=object))

    def to_json(self) -> dict:
        num = lambda x: None if not np.isfinite(x) else float(x)  # noqa: E731  (JSON has no NaN)
        return {"sentence_a": self.sentence_a, "sentence_b": self.sentence_b, "window_a": self.window_a,
                "window_b": self.window_b, "score_a": self.score_a, "score_b": self.score_b,
                "rows": [{"kind": r.kind, "layer": r.layer, "head": r.head, "fraction": num(r.fraction),
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
    parts = _parts(enc).get(i, [])
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
    n = len(_part_tokens(enc, part))
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
          alignment: tuple[Aligned, ...] | None = None) -> Patching:
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
    the sentence encoder as one batch. ``bert_heads=False`` skips the heads."""
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
    window_vecs = []
    for l in range(L + 1):  # hidden state l: the embeddings (0), else the output of layer l - 1
        x = B.hidden[l:l + 1].clone()  # [1, T, D]
        x[:, rb] = A.hidden[l, ra]
        window_vecs.append(_pool(s, model.bert_layers(x, mask, start=l) if l < L else x, B.inputs))
    labels += [("bert_embeddings", None, None)] + [("bert_layer", l, None) for l in range(L)]
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
            labels += [("bert_head", l, h) for h in range(H)]
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
    labels = [("none", None, None), ("position", None, None), ("vector", None, None), ("all", None, None)] + labels
    at_layer = 4 + n_bert  # copies at_layer + l: encoder layer l's output; then the heads
    labels += [("encoder_layer", l, None) for l in range(L2)] + [("encoder_head", l, h) for l, h in head_copies]
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


# ------------------------------------------------------------------ command line

def add_arguments(parser) -> None:
    parser.add_argument("file_b", nargs="?", metavar="B", help="document B (text file, or -); optional with --edit")
    parser.add_argument("--edit", action="append", default=[], metavar="EDIT",
                        help=f"edit A into B (repeatable, applied in order; to B when B is given): {EDIT_FORMS}; "
                             "sentence numbers from 1")
    parser.add_argument("--patch", type=int, metavar="SENTENCE",
                        help="activation patching for sentence SENTENCE of A (1-based; it must be in B unchanged)")
    parser.add_argument("--no-bert-heads", dest="bert_heads", action="store_false",
                        help="with --patch: skip patching every BERT head (the slow part)")


def cli(args, summarizer: Summarizer) -> dict:
    """``python -m analysis compare A.txt [B.txt] [--edit EDIT …] [--patch N] --json``. B is B.txt, or A,
    with the edits applied (to B.txt when given). The JSON object (indices 0-based):

    - ``a``, ``b``: per document ``sentences``, ``scores`` (null: not scored), ``selected``,
      ``summary``, ``status`` and ``reason`` per sentence (``analysis.explain.selection``);
    - ``edits``: the edits applied, in their 1-based string form;
    - ``alignment``: one row per sentence of A or B: ``a``, ``b`` (null: absent), ``kind`` (kept,
      moved, replaced, deleted, new), ``score_a``, ``score_b``, ``delta`` (B − A), ``status_a``, ``status_b``;
    - ``entered``, ``left``: ``{row, a, b, reason}`` for the sentences that entered or left the summary;
    - ``head_change``: ``bert`` [L][H], ``inter`` [L2][H2] (``attention_change``), ``aligned_tokens``,
      ``aligned_parts``, ``method``; ``k``, ``block_trigram``;
    - with ``--patch N`` (1-based sentence of A): ``patching``: ``sentence_a``, ``sentence_b``,
      ``window_a``, ``window_b``, ``score_a``, ``score_b``, ``rows`` [{``kind``, ``layer``, ``head``,
      ``fraction`` (null: the score did not change), ``score``}], ``kinds`` (what each kind takes
      from A), ``method``, ``caveat``."""
    from model.__main__ import read_text

    if args.file_b is None and not args.edit:
        raise ValueError("compare needs a second document B, or --edit to make B from A")
    if args.file == "-" and args.file_b == "-":
        raise ValueError("only one of A and B can be read from standard input")
    edits = [parse_edit(e) for e in args.edit]
    text_a = read_text(args.file)
    text_b = apply_edits(read_text(args.file_b) if args.file_b else text_a, edits, summarizer)
    out = compare(summarizer, text_a, text_b, args.k, args.block).to_json()
    out["edits"] = [str(e) for e in edits]
    if args.patch is not None:
        if args.patch < 1:
            raise ValueError("--patch takes a sentence number from 1")
        out["patching"] = patch(summarizer, text_a, text_b, args.patch - 1, args.bert_heads).to_json()
    return out
