"""What if, the edits: document B made from A one edit at a time (analysis.compare compares them).

``parse_edit``, ``apply_edits``: ``delete:I``, ``move:I:J`` (J a sentence number, ``start`` or
``end``), ``replace:I:TEXT``, ``mask:I:WORD``, ``swap:I:J``; sentence numbers 1-based, as the app
shows them; several edits apply one after the other, each numbering the sentences of the document
as the previous one left it. Sentences are the model's own (``model.text.split_sentences``). A
masked word becomes one ``[MASK]`` per WordPiece; the tokenizer of ``model/text.py`` would read the
text ``[MASK]`` as ``[``, ``mask``, ``]``, so both documents are read with ``masking(summarizer)``,
the same model with a tokenizer that keeps ``[MASK]`` as BERT's mask token (a literal ``[MASK]`` in A
is read the same way)."""
from __future__ import annotations

import copy
import re
import weakref
from dataclasses import dataclass

from tokenizers import AddedToken

from model.summarizer import CONTROL, Encoded, Summarizer
from model.text import WordPieceTokenizer, split_sentences

MASK = "[MASK]"


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


def edited(text: str, edits, summarizer: Summarizer) -> tuple[str, str | None]:
    """Document B as far as ``edits`` apply: ``text`` with the edits before the first that does not
    apply, and that one's one-line reason (None: all applied). The What if page and a lesson's
    warm-up (ui.classroom.warm) make B this one way, so both ask for the same comparison."""
    for n, e in enumerate(edits):
        try:
            text = apply_edits(text, [e], summarizer)
        except ValueError as err:
            return text, f"edit {n + 1} of {len(edits)}: {err}"
    return text, None


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
