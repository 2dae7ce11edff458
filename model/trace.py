"""What one summarization call returns: the summary, and (with capture) everything the
model looked at. Frozen, detached, on CPU: safe to cache and to share across threads."""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import torch


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
    head: str                           # "trained" or "untrained"
    backbone: str
    pooling: str = "cls"                # sentence vector: "cls" (BertSum) or "mean" of its tokens

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
            "head": self.head,
            "backbone": self.backbone,
            "pooling": self.pooling,
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
    token_mask: torch.Tensor             # [T] bool, True = real token (no padding in a single doc)
    extended_mask: torch.Tensor          # [T] float32, additive mask on attention logits: 0 or -10000
    cls_mask: torch.Tensor               # [S] bool, True = a real sentence
    inter_mask: torch.Tensor             # [S] bool, True = masked (PreSumm's ``~mask_cls``)
    bert_attention: torch.Tensor         # [L, H, T, T] float16, softmax probabilities
    bert_query: torch.Tensor             # [L, H, T, dh] float16
    bert_key: torch.Tensor               # [L, H, T, dh] float16
    bert_value: torch.Tensor             # [L, H, T, dh] float16
    position_embeddings: torch.Tensor    # [T, D] float32, learned BERT position rows used
    token_type_embeddings: torch.Tensor  # [T, D] float32, segment rows used
    sentence_vectors: torch.Tensor       # [S, D] float32, from BERT's top layer (summary.pooling)
    sentence_pe: torch.Tensor            # [S, D] float32, sinusoidal rows added to them
    inter_attention: torch.Tensor        # [L2, H2, S, S] float16

    def pe_table(self, n: int | None = None) -> torch.Tensor:
        """The full sinusoidal table [n, D] (Vaswani et al. 2017, §3.5), default 5000 rows."""
        from .inter_encoder import sinusoidal_table

        return sinusoidal_table(n or 5000, self.sentence_pe.shape[-1])

    def nbytes(self) -> int:
        total = 0
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, torch.Tensor):
                total += v.numel() * v.element_size()
            elif isinstance(v, np.ndarray):
                total += v.nbytes
        return total

    def arrays(self) -> dict[str, np.ndarray]:
        """Every captured field as a NumPy array (for ``np.savez`` and notebooks)."""
        out = {"tokens": np.array(self.tokens), "sentences": np.array(self.summary.sentences),
               "scores": np.array([np.nan if s is None else s for s in self.summary.scores],
                                  dtype=np.float32),
               "selected": np.array(self.summary.selected, dtype=np.int64)}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, torch.Tensor):
                out[f.name] = v.numpy()
            elif isinstance(v, np.ndarray):
                out[f.name] = v
        out["pe_table"] = self.pe_table(max(len(self.input_sentences), 512)).numpy()  # [≥512, D]
        return out
