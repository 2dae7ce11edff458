"""BertSum's inter-sentence Transformer (Liu 2019, §3; Liu & Lapata 2019, §3.2).

The [CLS] vectors of the sentences get sinusoidal positions and pass through a few
pre-LayerNorm Transformer layers; a linear layer + sigmoid scores each sentence.
This transcribes PreSumm's ``ExtTransformerEncoder`` (``models/encoder.py``) exactly,
including its quirks: PE rows added without the √d scaling, no LayerNorm before layer 0,
tanh-approximate GELU, masked logits filled with -1e18. Key names match PreSumm's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .bert import head_gates


@dataclass(frozen=True)
class InterEncoderConfig:
    d_model: int = 768
    layers: int = 2
    heads: int = 8
    d_ff: int = 2048
    dropout: float = 0.1
    max_len: int = 5000
    # sentence positions seen in training (checkpoint metadata); later sentences get the last of
    # them: rows training never saw raised scores (studies/positions.py). None: every row its own.
    position_rows: int | None = None


def sinusoidal_table(n: int, d: int) -> torch.Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(…) (Vaswani et al. 2017, §3.5)."""
    pos = torch.arange(n, dtype=torch.float)[:, None]  # [n, 1]
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float) * -(math.log(10000.0) / d))  # [d/2]
    pe = torch.zeros(n, d)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)
    return pe  # [n, d]


class PositionalEncoding(nn.Module):
    """Holds the table as a buffer ``pe`` [1, max_len, d] (PreSumm's layout); forward(n)
    returns the rows added to a document's n sentence vectors: the first n, or with ``rows``
    the first ``rows`` and then row ``rows - 1`` again (positions past those seen in training)."""

    def __init__(self, d: int, max_len: int = 5000, rows: int | None = None):
        super().__init__()
        self.rows = rows
        self.register_buffer("pe", sinusoidal_table(max_len, d)[None])  # [1, max_len, d]

    def forward(self, n: int) -> torch.Tensor:
        if n > self.pe.shape[1]:
            raise ValueError(f"{n} sentences exceed the positional table ({self.pe.shape[1]} rows)")
        if self.rows is None or n <= self.rows:
            return self.pe[0, :n]  # [n, d]
        return self.pe[0, torch.arange(n, device=self.pe.device).clamp(max=self.rows - 1)]  # [n, d]


class MultiHeadedAttention(nn.Module):
    """Multi-head attention (Vaswani et al. 2017, §3.2.2) with a boolean mask: True = masked."""

    def __init__(self, heads: int, d_model: int, dropout: float):
        super().__init__()
        if d_model % heads:
            raise ValueError("d_model must be a multiple of heads")
        self.heads, self.head_dim = heads, d_model // heads
        self.linear_keys = nn.Linear(d_model, d_model)
        self.linear_values = nn.Linear(d_model, d_model)
        self.linear_query = nn.Linear(d_model, d_model)
        self.softmax = nn.Softmax(dim=-1)
        self.dropout = nn.Dropout(dropout)
        self.final_linear = nn.Linear(d_model, d_model)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, S, _ = x.shape
        return x.view(B, S, self.heads, self.head_dim).transpose(1, 2)  # [B, H2, S, dh]

    def forward(self, x: torch.Tensor, mask: torch.Tensor, gate: torch.Tensor | None = None) -> torch.Tensor:
        """``gate`` [B or 1, H2] multiplies each head's output (Michel et al. 2019, Eq. 2)."""
        k = self.split_heads(self.linear_keys(x))  # [B, H2, S, dh]
        v = self.split_heads(self.linear_values(x))  # [B, H2, S, dh]
        q = self.split_heads(self.linear_query(x)) / math.sqrt(self.head_dim)  # [B, H2, S, dh]
        scores = q @ k.transpose(2, 3)  # [B, H2, S, S]
        scores = scores.masked_fill(mask[:, None, None, :], -1e18)  # mask: [B, S] → keys
        probs = self.softmax(scores)  # [B, H2, S, S]
        ctx = self.dropout(probs) @ v  # [B, H2, S, dh]
        if gate is not None:
            ctx = ctx * gate[:, :, None, None]
        return self.final_linear(ctx.transpose(1, 2).flatten(2))  # [B, S, D]


class PositionwiseFeedForward(nn.Module):
    """x + W2 · GELU(W1 · LayerNorm(x)): pre-norm FFN with its own LayerNorm and residual."""

    def __init__(self, d_model: int, d_ff: int, dropout: float):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.layer_norm = nn.LayerNorm(d_model, eps=1e-6)
        self.dropout_1 = nn.Dropout(dropout)
        self.dropout_2 = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inter = self.dropout_1(F.gelu(self.w_1(self.layer_norm(x)), approximate="tanh"))  # [B, S, d_ff]
        return self.dropout_2(self.w_2(inter)) + x  # [B, S, D]


class TransformerEncoderLayer(nn.Module):
    """Pre-LayerNorm encoder layer; layer 0 skips the LayerNorm (its input is fresh embeddings)."""

    def __init__(self, d_model: int, heads: int, d_ff: int, dropout: float):
        super().__init__()
        self.self_attn = MultiHeadedAttention(heads, d_model, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.layer_norm = nn.LayerNorm(d_model, eps=1e-6)
        self.dropout = nn.Dropout(dropout)

    def forward(self, i: int, x: torch.Tensor, mask: torch.Tensor, gate: torch.Tensor | None = None) -> torch.Tensor:
        h = self.layer_norm(x) if i != 0 else x  # [B, S, D]
        return self.feed_forward(self.dropout(self.self_attn(h, mask, gate)) + x)  # [B, S, D]


class TransformerInterEncoder(nn.Module):
    """Sentence scores Ŷ_i = σ(W_o h_i^L + b_o) (Liu 2019, Eq. 4) over [CLS] vectors."""

    def __init__(self, cfg: InterEncoderConfig):
        super().__init__()
        self.config = cfg
        self.pos_emb = PositionalEncoding(cfg.d_model, cfg.max_len, cfg.position_rows)
        self.transformer_inter = nn.ModuleList(
            TransformerEncoderLayer(cfg.d_model, cfg.heads, cfg.d_ff, cfg.dropout) for _ in range(cfg.layers))
        self.layer_norm = nn.LayerNorm(cfg.d_model, eps=1e-6)
        self.wo = nn.Linear(cfg.d_model, 1)

    def forward(self, sents: torch.Tensor, mask_cls: torch.Tensor, head_mask: torch.Tensor | None = None,
                pe: torch.Tensor | None = None) -> torch.Tensor:
        """sents [B, S, D] [CLS] vectors, mask_cls [B, S] bool (True = real) → scores [B, S].
        ``head_mask`` [L2, H2] or [B, L2, H2] gates heads; ``pe`` [S, D] or [B, S, D] replaces
        the sinusoid rows (e.g. to ask what a score is without its position)."""
        pe = self.pos_emb(sents.shape[1]) if pe is None else pe  # [S, D]
        x = sents * mask_cls[:, :, None].float() + pe  # [B, S, D]
        gates = head_gates(head_mask, len(self.transformer_inter))
        for i, layer in enumerate(self.transformer_inter):
            x = layer(i, x, ~mask_cls, gates[i])  # [B, S, D]
        return self.read_out(x, mask_cls)

    def read_out(self, x: torch.Tensor, mask_cls: torch.Tensor) -> torch.Tensor:
        """The scorer on a residual stream x [B, S, D]: σ(W_o LayerNorm(x) + b_o) → [B, S]."""
        scores = torch.sigmoid(self.wo(self.layer_norm(x))).squeeze(-1)  # [B, S]
        return scores * mask_cls.float()

    def layer_scores(self, sents: torch.Tensor, mask_cls: torch.Tensor, head_mask: torch.Tensor | None = None,
                     pe: torch.Tensor | None = None) -> torch.Tensor:
        """The scorer read after each layer (the logit lens, nostalgebraist 2020, for a sentence
        scorer): [L2 + 1, B, S], row 0 on the input (vectors + positions), row L2 the scores."""
        pe = self.pos_emb(sents.shape[1]) if pe is None else pe
        x = sents * mask_cls[:, :, None].float() + pe
        gates = head_gates(head_mask, len(self.transformer_inter))
        out = [self.read_out(x, mask_cls)]
        for i, layer in enumerate(self.transformer_inter):
            x = layer(i, x, ~mask_cls, gates[i])
            out.append(self.read_out(x, mask_cls))
        return torch.stack(out)
