"""How a Transformer block mixes its tokens, decomposed (the formulas; analysis.mixing applies them
to BertSumExt). Attention weights say where a head looked; a weight on a near-zero vector moves
nothing (Kobayashi et al. 2020). These measures count what each context token adds.

- **Norm-based** (Kobayashi et al. 2020, §3): per head ‖α^h_ij f^h(x_j)‖ with
  f^h(x) = (x W_V^h + b_V^h) W_O^h, and per layer ‖Σ_h α^h_ij f^h(x_j)‖ (exact, from the heads'
  Gram matrices: no T × T × D tensor).
- **Mixing ratio** (Kobayashi et al. 2021, §4, "ATB + RES + LN"): with the residual and the first
  LayerNorm decomposed as in ALTI, r_i = ‖Σ_{j≠i} T_i(x_j)‖ / (‖Σ_{j≠i} T_i(x_j)‖ + ‖T_i(x_i)‖),
  context's share of token i's update; per layer, the mean over tokens.
- **ALTI** (Ferrando et al. 2022, §3): the attention block's output before the LayerNorm bias,
  y_i = LN(Σ_j Σ_h α^h_ij f^h(x_j) + b_O + x_i), decomposed as Σ_j T_i(x_j) + bias with
  T_i(x_j) = γ ⊙ L(Σ_h α^h_ij f^h(x_j) + δ_ij x_i) / σ_i (L centres a vector, σ_i is token i's
  LayerNorm scale: exactly the one LayerNorm applies, where the reference code uses
  std(u + eps)); C_ij = max(0, ‖y_i‖₁ − ‖y_i − T_i(x_j)‖₁), rows normalised; composed to the
  input as R = C_L ⋯ C_1. Through the sentence encoder too (pre-LN: the LayerNorm acts on each
  sentence alone, so no approximation; y_i = x_i + attention, T_i(x_j) = Σ_h α^h_ij f^h(LN x_j)
  + δ_ij x_i), so a sentence's score traces back to sentences and, through the pooling, to the
  input tokens of its window. Computed by blocks of query rows (8 MB each).
- **Value zeroing** (Mohebbi et al. 2023, §2): for one chosen layer, token j's value vectors
  set to zero in every head, the layer run again from the same input; C_ij = the cosine distance
  of token i's output to its original output. In float64 (float32 noise dominates rows that
  barely mix); ``value_zeroing_total`` keeps each row's sum before normalising.

Heads switched off contribute 0 everywhere (their α gated to 0, as the model does)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F


CHUNK_BYTES = 64 * 2 ** 20  # value zeroing: one block of zeroed tokens' T × D_ff work at a time
ALTI_CHUNK_BYTES = 8 * 2 ** 20  # ALTI: one block of query rows' T × D


# ------------------------------------------------------------------ one layer's pieces

def head_values(h: torch.Tensor, value: torch.nn.Linear, heads: int) -> torch.Tensor:
    """v^h(x_j) = x_j W_V^h + b_V^h: [T, D] → [H, T, dh]."""
    T, D = h.shape
    return F.linear(h, value.weight.to(h.dtype), value.bias.to(h.dtype)).view(T, heads, D // heads).transpose(0, 1)


def value_vectors(h: torch.Tensor, value: torch.nn.Linear, out: torch.nn.Linear, heads: int) -> torch.Tensor:
    """f^h(x_j) = (x_j W_V^h + b_V^h) W_O^h for every head and token: [T, D] → [H, T, D]
    (Kobayashi et al. 2020, Eq. 6; the output bias b_O is no token's)."""
    D = h.shape[1]
    w = out.weight.to(h.dtype).view(out.weight.shape[0], heads, D // heads).permute(1, 2, 0)  # [H, dh, D]
    return head_values(h, value, heads) @ w  # [H, T, D]


def mixed(alpha: torch.Tensor, h: torch.Tensor, value: torch.nn.Linear, out: torch.nn.Linear, heads: int) -> torch.Tensor:
    """Σ_h Σ_j α^h_ij f^h(x_j) [T, D] (no b_O), in the model's order: heads' (α v) concatenated, then
    W_O (H·T²·dh work, where summing the f's would take H·T²·D)."""
    z = alpha.to(h.dtype) @ head_values(h, value, heads)  # [H, T, dh]
    return z.transpose(0, 1).reshape(h.shape) @ out.weight.to(h.dtype).T


def norms(alpha: torch.Tensor, f: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """α [H, T, T], f [H, T, D] → per head ‖α^h_ij f^h_j‖ [H, T, T] and per layer
    ‖Σ_h α^h_ij f^h_j‖ [T, T]. The layer norm as Σ_{h,g} α^h_ij α^g_ij ⟨f^h_j, f^g_j⟩ over the
    heads' Gram matrices: T·T·H² work, no T × T × D tensor."""
    head = alpha * f.norm(dim=-1)[:, None, :]  # [H, T, T]
    gram = torch.bmm(f.transpose(0, 1), f.permute(1, 2, 0))  # [T_j, H, H]
    aj = alpha.permute(2, 1, 0).contiguous()  # [T_j, T_i, H] (contiguous: bmm is ~3× faster)
    layer = (torch.bmm(aj, gram) * aj).sum(-1).T.clamp_min(0).sqrt()  # [T_i, T_j]
    return head, layer


def centre(x: torch.Tensor) -> torch.Tensor:
    """L(x) = x − mean(x) over the last dimension (LayerNorm's centring, a linear map)."""
    return x - x.mean(-1, keepdim=True)


@dataclass(frozen=True)
class Decomposed:
    """One attention block, decomposed: T_i(x_j) = scale_i · (Σ_h α^h_ij g^h_j + δ_ij gx_i), with
    y_i = Σ_j T_i(x_j) + bias_i the block's output (ALTI's y)."""
    alpha: torch.Tensor  # [H, T, T] (gated)
    g: torch.Tensor      # [H, T, D] the heads' value vectors through the linear part of what follows
    gx: torch.Tensor     # [T, D] the residual through it
    scale: torch.Tensor  # [T] 1/σ_i (post-LN) or 1 (pre-LN)
    y: torch.Tensor      # [T, D] the block's output
    bias: torch.Tensor   # [T, D] the part of y that is no token's (b_O, the LayerNorm's β)

    def self_term(self) -> torch.Tensor:
        """T_i(x_i) [T, D]."""
        idx = torch.arange(self.y.shape[0], device=self.y.device)
        return self.scale[:, None] * (torch.einsum("hi,hid->id", self.alpha[:, idx, idx], self.g) + self.gx)


def post_ln_block(x: torch.Tensor, alpha: torch.Tensor, f: torch.Tensor, z: torch.Tensor, out: torch.nn.Linear,
                  norm: torch.nn.LayerNorm) -> Decomposed:
    """BERT's attention sub-layer y = LN(z + b_O + x), z = Σ α f (``mixed``) (post-LN, Vaswani et al.
    2017 Fig. 1), decomposed after Ferrando et al. 2022, Eq. 8-9."""
    u = z + out.bias + x  # [T, D] the LayerNorm's input
    sigma = (u.var(-1, unbiased=False) + norm.eps).sqrt()  # [T]
    gamma = norm.weight
    y = gamma * centre(u) / sigma[:, None] + norm.bias  # [T, D] = the LayerNorm's output
    bias = gamma * centre(out.bias)[None] / sigma[:, None] + norm.bias  # [T, D]
    return Decomposed(alpha, gamma * centre(f), gamma * centre(x), 1 / sigma, y, bias)


def pre_ln_block(x: torch.Tensor, alpha: torch.Tensor, f: torch.Tensor, z: torch.Tensor,
                 out: torch.nn.Linear) -> Decomposed:
    """The sentence encoder's y = x + z + b_O, z = Σ α f(LN x) (pre-LN, PreSumm): linear in the
    sentences' vectors, nothing to approximate."""
    y = z + out.bias + x  # [T, D]
    return Decomposed(alpha, f, x, torch.ones(len(x), dtype=x.dtype, device=x.device), y, out.bias.expand_as(y))


def alti(block: Decomposed, chunk_bytes: int = ALTI_CHUNK_BYTES) -> torch.Tensor:
    """ALTI's C [T, T] of one block (Ferrando et al. 2022, Eq. 10-11), rows summing to 1:
    C_ij ∝ max(0, ‖y_i‖₁ − ‖y_i − T_i(x_j)‖₁). By blocks of c query rows, [T_j, c, D] at a time
    (small blocks stay in cache: benchmarks/mixing.py)."""
    T, D = block.y.shape
    c = max(1, chunk_bytes // (T * D * block.y.element_size()))
    gj = block.g.transpose(0, 1).contiguous()  # [T_j, H, D]
    ai = block.alpha.permute(1, 2, 0).contiguous()  # [T_i, T_j, H]
    ys = block.y / block.scale[:, None]  # |s·t − y| = s·|t − y/s|: one pass less
    y1 = block.y.abs().sum(-1)  # [T]
    out = torch.empty(T, T, dtype=block.y.dtype, device=block.y.device)
    for a in range(0, T, c):
        b = min(a + c, T)
        rows = torch.arange(a, b, device=out.device)
        t = torch.bmm(ai[a:b].transpose(0, 1), gj)  # [T_j, c, D]: Σ_h α^h_ij g^h_j
        t[rows, rows - a] += block.gx[a:b]  # the residual, on j = i
        dist = t.sub_(ys[None, a:b]).abs_().sum(-1).T * block.scale[a:b, None]  # [c, T_j] ‖T_i(x_j) − y_i‖₁
        out[a:b] = (y1[a:b, None] - dist).clamp_min(0)
    return out / out.sum(-1, keepdim=True).clamp_min(torch.finfo(out.dtype).tiny)


def mixing_ratio(block: Decomposed) -> torch.Tensor:
    """Context's share of each token's update [T] (Kobayashi et al. 2021, §4): ‖Σ_{j≠i} T_i(x_j)‖
    / (‖Σ_{j≠i} T_i(x_j)‖ + ‖T_i(x_i)‖)."""
    own = block.self_term()
    context = (block.y - block.bias - own).norm(dim=-1)
    return context / (context + own.norm(dim=-1)).clamp_min(torch.finfo(own.dtype).tiny)


def cosine_distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return 1 - F.cosine_similarity(a, b, dim=-1)


def zeroing(alpha: torch.Tensor, f: torch.Tensor, rest: Callable[[torch.Tensor], torch.Tensor], z: torch.Tensor,
             chunk_bytes: int, width: int, progress=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Value zeroing's rows: ``rest`` maps the attention's output z [.., T, D] to the layer's
    output; token j's value vectors zeroed take Σ_h α^h_ij f^h_j from z_i. → (C [T, T] rows
    normalised, row totals [T])."""
    H, T, D = f.shape
    original = rest(z)  # [T, D]
    c = max(1, chunk_bytes // (T * width * 8))
    out = torch.empty(T, T, dtype=torch.float64, device=f.device)
    for a in range(0, T, c):
        b = min(a + c, T)
        minus = torch.einsum("hij,hjd->jid", alpha[:, :, a:b], f[:, a:b])  # [c, T, D]
        out[:, a:b] = cosine_distance(rest(z[None] - minus), original[None]).T  # [T, c]
        if progress:
            progress(b, T)
    total = out.sum(-1)
    return out / total[:, None].clamp_min(torch.finfo(out.dtype).tiny), total
