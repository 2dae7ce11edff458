"""What one summarization call returns: the summary, and (with capture) everything the
model looked at. Frozen, NumPy only (the model converts once, when it builds the Trace), so
figures, caches and notebooks need no torch, and every thread can share one."""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from .text import Reading


@dataclass(frozen=True)
class Summary:
    sentences: tuple[str, ...]          # every sentence of the document, in order
    spans: tuple[tuple[int, int], ...]  # character span of each sentence in the input text
    scores: tuple[float | None, ...]    # one per sentence; None = not scored (too short, or cut off)
    selected: tuple[int, ...]           # indices into sentences, document order
    too_short: tuple[int, ...]          # sentences below the minimum length: shown, not candidates
    truncated: tuple[int, ...]          # sentences (wholly or partly) past the 512-token limit
    tokens_cut: int                     # WordPiece tokens that did not fit
    device: str
    weights: str                        # the sentence scorer: "trained" or "untrained"
    backbone: str
    pooling: str = "cls"                # sentence vector: "cls" (BertSum) or "mean" of its tokens
    masked_heads: tuple[tuple[str, int, int], ...] = ()  # ("bert" | "inter", layer, head), 0-based: switched off
    past_training: tuple[int, ...] = ()  # sentences past the input length the scorer was trained on
    reading: Reading | None = None      # what of the text the model (English) can read

    @property
    def summary(self) -> str:
        return " ".join(self.sentences[i] for i in self.selected)

    def to_json(self) -> dict:
        return {
            "sentences": list(self.sentences),
            "scores": list(self.scores),
            "selected": list(self.selected),
            "summary": self.summary,
            "too_short": list(self.too_short),
            "truncated": {"sentences": list(self.truncated), "tokens": self.tokens_cut},
            "device": self.device,
            "weights": self.weights,
            "head": self.weights,  # the old name of "weights", kept for existing readers
            "backbone": self.backbone,
            "pooling": self.pooling,
            "past_training": list(self.past_training),
            "masked_heads": {part: [[l, h] for p, l, h in self.masked_heads if p == part] for part in ("bert", "inter")},
            "reading": None if self.reading is None else self.reading.to_json(),
        }


@dataclass(frozen=True)
class Trace:
    """Everything captured in one forward pass over one document.

    BERT reads at most 512 tokens at once, so a long document is cut at sentence boundaries
    into windows; the token-level fields describe window ``window`` (T = its tokens), the
    sentence-level fields the whole document (S = sentences fed to the inter-sentence encoder;
    ``input_sentences`` maps them back to ``summary.sentences``; a sentence longer than a
    window is fed as several parts). L/H = BERT layers/heads, L2/H2 = inter-encoder
    layers/heads, D = hidden size, dh = D / H.
    """

    summary: Summary
    tokens: tuple[str, ...]              # [T] WordPiece tokens incl. [CLS]/[SEP]
    token_sentence: np.ndarray           # [T] int64, index into summary.sentences
    input_sentences: np.ndarray          # [S] int64, index into summary.sentences
    cls_positions: np.ndarray            # [S_w] int64, token index of the [CLS] of each sentence in this window
    segment_ids: np.ndarray              # [T] int64, interval segments 0/1/0/1 per sentence
    window: int                          # which BERT window the token-level fields describe
    windows: tuple[tuple[int, int], ...]  # per window, its sentences: input_sentences[start:end]
    token_mask: np.ndarray               # [T] bool, True = real token (no padding in a single doc)
    extended_mask: np.ndarray            # [T] float32, additive mask on attention logits: 0 or -10000
    cls_mask: np.ndarray                 # [S] bool, True = a real sentence
    inter_mask: np.ndarray               # [S] bool, True = masked (PreSumm's ``~mask_cls``)
    bert_attention: np.ndarray           # [L, H, T, T] float16, softmax probabilities
    bert_query: np.ndarray               # [L, H, T, dh] float16
    bert_key: np.ndarray                 # [L, H, T, dh] float16
    bert_value: np.ndarray               # [L, H, T, dh] float16
    position_embeddings: np.ndarray      # [T, D] float32, learned BERT position rows used
    token_type_embeddings: np.ndarray    # [T, D] float32, segment rows used
    sentence_vectors: np.ndarray         # [S, D] float32, from BERT's top layer (summary.pooling)
    sentence_pe: np.ndarray              # [S, D] float32, sinusoidal rows added to them
    inter_attention: np.ndarray          # [L2, H2, S, S] float16
    pe_table: np.ndarray                 # [max(512, S + 8), D] float32, the sinusoidal table (Vaswani et al. 2017, §3.5)

    def nbytes(self) -> int:
        return sum(v.nbytes for f in fields(self) if isinstance(v := getattr(self, f.name), np.ndarray))

    def arrays(self) -> dict[str, np.ndarray]:
        """Every captured field as a NumPy array (for ``np.savez`` and notebooks)."""
        out = {"tokens": np.array(self.tokens), "sentences": np.array(self.summary.sentences),
               "scores": np.array([np.nan if s is None else s for s in self.summary.scores],
                                  dtype=np.float32),
               "selected": np.array(self.summary.selected, dtype=np.int64),
               # heads switched off during the run: rows (part, layer, head), part 0 = BERT, 1 = the
               # sentence encoder, 0-based; an NPZ of a run with --mask-heads says so
               "masked_heads": np.array([(("bert", "inter").index(p), l, h) for p, l, h in self.summary.masked_heads],
                                        dtype=np.int64).reshape(-1, 3)}
        out.update({f.name: v for f in fields(self) if isinstance(v := getattr(self, f.name), np.ndarray)})
        return out


@dataclass(frozen=True)
class BatchTrace:
    """Several documents padded into one batch, as BertSum trains (each document's first
    512-token window): the masks as the model applies them and what they do to attention.
    B = documents, T = the longest one's tokens, S = the most sentences; shorter ones are padded."""

    tokens: tuple[tuple[str, ...], ...]  # [B][T_b] each document's tokens, unpadded
    attention_mask: np.ndarray           # [B, T] bool, True = real token, False = padding
    extended_mask: np.ndarray            # [B, T] float32, added to every attention logit row: 0 or -10000
    cls_positions: np.ndarray            # [B, S] int64, [CLS] token of each sentence (0 where padded)
    cls_mask: np.ndarray                 # [B, S] bool, True = a real sentence
    inter_mask: np.ndarray               # [B, S] bool, True = masked (PreSumm's ``~mask_cls``)
    layer: int                           # the BERT layer of bert_attention
    bert_attention: np.ndarray           # [B, H, T, T] float16, that layer's softmax probabilities
    inter_attention: np.ndarray          # [B, L2, H2, S, S] float16
    scores: np.ndarray                   # [B, S] float32, 0 for padded sentences


@dataclass(frozen=True)
class Cache:
    """Every hook point's value during one summarize (TransformerLens's ``ActivationCache``; the
    names are model/hooks.py's). BERT's points carry one array per BERT window, the sentence
    encoder's one. ``cache["bert.2.attn.pattern"]``: window 0's; ``cache.windows(name)``: all;
    ``cache.stack("attn.pattern")``: every layer's, stacked → [L, …]."""
    values: dict[str, tuple[np.ndarray, ...]]

    def __getitem__(self, name: str) -> np.ndarray:
        return self.values[name][0]

    def __contains__(self, name: str) -> bool:
        return name in self.values

    def keys(self):
        return self.values.keys()

    def windows(self, name: str) -> tuple[np.ndarray, ...]:
        return self.values[name]

    def stack(self, point: str, part: str = "bert", window: int = 0) -> np.ndarray:
        """``point`` ("attn.pattern", "resid_post", "attn.z", …) of every layer of ``part`` ("bert"
        or "inter") stacked on a new first axis: [L, …] (BERT: of ``window``)."""
        layers = sorted({int(n.split(".")[1]) for n in self.values
                         if n.startswith(part + ".") and n.split(".")[1].isdigit() and n.split(".", 2)[2] == point})
        if not layers:
            raise KeyError(f"no {part} layer has a point {point!r}")
        return np.stack([self.values[f"{part}.{layer}.{point}"][window] for layer in layers])
