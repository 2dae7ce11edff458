"""BERT (Devlin et al. 2019), the encoder BertSum puts under its sentence scorer.

Classes follow the forward pass, with Hugging Face's role names so that its checkpoints
load unchanged: Embeddings → SelfAttention → SelfOutput → Intermediate → Output → Layer
→ Encoder (→ Pooler). Each sub-block is a module, so capture can hook its output.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

MASKED = -10000.0  # additive logit for padded keys, as in the original BERT code


@dataclass(frozen=True)
class BertConfig:
    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1

    @classmethod
    def from_json(cls, path: str | Path) -> "BertConfig":
        """Read a Hugging Face ``config.json``; unknown keys are ignored."""
        raw = json.loads(Path(path).read_text())
        if raw.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"{path}: hidden_act {raw['hidden_act']!r} is not supported (only 'gelu')")
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in names})


def extended_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """[B, T] with 1 = real token → [B, 1, 1, T] additive mask, broadcast over heads and queries."""
    return (1.0 - attention_mask[:, None, None, :].float()) * MASKED  # [B, 1, 1, T]


def head_gates(head_mask: torch.Tensor | None, layers: int) -> list[torch.Tensor | None]:
    """[L, H] or [B, L, H] head gates → one [B or 1, H] per layer (None: no gating)."""
    if head_mask is None:
        return [None] * layers
    m = head_mask if head_mask.dim() == 3 else head_mask[None]  # [B, L, H]
    if m.shape[1] != layers:
        raise ValueError(f"the head mask has {m.shape[1]} layers, the model {layers}")
    return list(m.unbind(1))


def take_rows(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """x [B, T, D], rows [B, S] → x at those positions [B, S, D]."""
    return x[torch.arange(x.shape[0], device=x.device)[:, None], rows]


class BertEmbeddings(nn.Module):
    """Input representation (paper Fig. 2): token + learned position + segment embeddings."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.word_embeddings = nn.Embedding(cfg.vocab_size, cfg.hidden_size, padding_idx=0)
        self.position_embeddings = nn.Embedding(cfg.max_position_embeddings, cfg.hidden_size)
        self.token_type_embeddings = nn.Embedding(cfg.type_vocab_size, cfg.hidden_size)
        self.LayerNorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.dropout = nn.Dropout(cfg.hidden_dropout_prob)

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)[None]  # [1, T]
        x = (self.word_embeddings(input_ids)  # [B, T, D]
             + self.position_embeddings(positions)  # [1, T, D]
             + self.token_type_embeddings(token_type_ids))  # [B, T, D]
        return self.dropout(self.LayerNorm(x))


class BertSelfAttention(nn.Module):
    """Scaled dot-product attention, Attention(Q,K,V) = softmax(QKᵀ/√d_k + mask) V
    (Vaswani et al. 2017, Eq. 1), over H heads in parallel (§3.2.2)."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        if cfg.hidden_size % cfg.num_attention_heads:
            raise ValueError("hidden_size must be a multiple of num_attention_heads")
        self.heads = cfg.num_attention_heads
        self.head_dim = cfg.hidden_size // cfg.num_attention_heads
        self.query = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.key = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.value = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.softmax = nn.Softmax(dim=-1)  # a module so capture can hook the probabilities
        self.dropout = nn.Dropout(cfg.attention_probs_dropout_prob)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.heads, self.head_dim).transpose(1, 2)  # [B, H, T, dh]

    def forward(self, x: torch.Tensor, mask: torch.Tensor, gate: torch.Tensor | None = None,
                rows: torch.Tensor | None = None) -> torch.Tensor:
        """``gate`` [B or 1, H]: multiplies each head's output, Michel et al. (2019) Eq. 2's ξ_h
        (0 = the head switched off; a float gate also gives the head-importance gradient, §4).
        ``rows`` [B, S]: queries only at these positions (keys and values over all T tokens),
        output [B, S, D]; training reads the top layer at the [CLS] rows only."""
        q = self.split_heads(self.query(x if rows is None else take_rows(x, rows)))  # [B, H, T or S, dh]
        k = self.split_heads(self.key(x))  # [B, H, T, dh]
        v = self.split_heads(self.value(x))  # [B, H, T, dh]
        logits = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim) + mask  # [B, H, T, T]
        probs = self.softmax(logits)  # [B, H, T, T], rows sum to 1
        ctx = self.dropout(probs) @ v  # [B, H, T, dh]
        if gate is not None:
            ctx = ctx * gate[:, :, None, None]  # [B, H, T, dh]
        return ctx.transpose(1, 2).flatten(2)  # [B, T, D]


class BertSelfOutput(nn.Module):
    """Output projection of the heads, then residual + LayerNorm ("Add & Norm")."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.dense = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.LayerNorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.dropout = nn.Dropout(cfg.hidden_dropout_prob)

    def forward(self, ctx: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dropout(self.dense(ctx)) + residual)  # [B, T, D]


class BertAttention(nn.Module):
    """Self-attention sub-layer: SelfAttention then SelfOutput (HF's grouping, for key names)."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.self = BertSelfAttention(cfg)
        self.output = BertSelfOutput(cfg)

    def forward(self, x: torch.Tensor, mask: torch.Tensor, gate: torch.Tensor | None = None,
                rows: torch.Tensor | None = None) -> torch.Tensor:
        return self.output(self.self(x, mask, gate, rows), x if rows is None else take_rows(x, rows))


class BertIntermediate(nn.Module):
    """First half of the position-wise feed-forward network, with exact (erf) GELU."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.dense = nn.Linear(cfg.hidden_size, cfg.intermediate_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.dense(x))  # [B, T, D_ff]


class BertOutput(nn.Module):
    """Second half of the feed-forward network, then residual + LayerNorm."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.dense = nn.Linear(cfg.intermediate_size, cfg.hidden_size)
        self.LayerNorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.dropout = nn.Dropout(cfg.hidden_dropout_prob)

    def forward(self, h: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dropout(self.dense(h)) + residual)  # [B, T, D]


class BertLayer(nn.Module):
    """One post-LayerNorm Transformer encoder block (Vaswani et al. 2017, Fig. 1 left)."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.attention = BertAttention(cfg)
        self.intermediate = BertIntermediate(cfg)
        self.output = BertOutput(cfg)

    def forward(self, x: torch.Tensor, mask: torch.Tensor, gate: torch.Tensor | None = None,
                rows: torch.Tensor | None = None) -> torch.Tensor:
        """``rows`` [B, S]: the layer's output at these positions only, [B, S, D]."""
        a = self.attention(x, mask, gate, rows)  # [B, T or S, D]
        return self.output(self.intermediate(a), a)  # [B, T, D]


class BertEncoder(nn.Module):
    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(cfg) for _ in range(cfg.num_hidden_layers))

    def forward(self, x: torch.Tensor, mask: torch.Tensor, start: int = 0, end: int | None = None,
                head_mask: torch.Tensor | None = None):
        """Run layers[start:end]; training runs frozen lower layers once and caches them.
        ``head_mask`` [L, H] or [B, L, H]: per-head gates (see BertSelfAttention); a batch of
        gates over one document broadcasts it to B copies from the first gated layer on."""
        gates = head_gates(head_mask, len(self.layer))
        for i in range(start, len(self.layer) if end is None else end):
            x = self.layer[i](x, mask, gates[i])  # [B, T, D]
        return x


class BertPooler(nn.Module):
    """tanh(W h_[CLS]): BERT's sentence-pair head. BertSum does not use it; kept for loading."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.dense = nn.Linear(cfg.hidden_size, cfg.hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dense(x[:, 0]))  # [B, D]


class BertModel(nn.Module):
    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.config = cfg
        self.embeddings = BertEmbeddings(cfg)
        self.encoder = BertEncoder(cfg)
        self.pooler = BertPooler(cfg)

    def forward(self, input_ids, token_type_ids, attention_mask, head_mask=None) -> torch.Tensor:
        """[B, T] ids, segments and 1/0 padding mask → top-layer hidden states [B, T, D];
        ``head_mask`` [L, H] or [B, L, H] gates heads (BertEncoder)."""
        x = self.embeddings(input_ids, token_type_ids)  # [B, T, D]
        return self.encoder(x, extended_mask(attention_mask), head_mask=head_mask)  # [B, T, D]
