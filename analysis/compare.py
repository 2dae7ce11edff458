"""What if: document A against an edited copy B (analysis.edits) — the two summaries side by side,
every aligned sentence's score in A and B (analysis.alignment), which sentences entered or left the
summary and why (``analysis.explain.selection``), and per head how much its attention changed;
which parts of the model carry a sentence's score change is analysis.patching's.
``python -m analysis compare A.txt [B.txt] --edit … [--patch N]``."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from analysis.explain import SentenceStatus, selection
from analysis.alignment import CHANGE_METHOD, Aligned, align, aligned_units, attention_change
from analysis.edits import EDIT_FORMS, apply_edits, encode, masking, parse_edit
from analysis.patching import patch
from model.hooks import names, record
from model.summarizer import Encoded, Summarizer
from model.trace import Summary


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
