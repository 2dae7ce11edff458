"""What the model used, not only what it looked at: context mixing in BertSumExt.

Attention weights say where a head looked; a weight on a near-zero vector moves nothing
(Kobayashi et al. 2020: heavy weight on [SEP] multiplies a tiny vector). These measures count
what each context token actually adds to a token's new vector.

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
- ``faithfulness``: a scoreboard (DeYoung et al. 2020, ERASER §4): rank a window's content tokens
  by each method's importance for one sentence's score, delete the top 10-50 % (every [CLS] and
  [SEP] kept) → comprehensiveness = the score's drop; keep only them → sufficiency = the drop
  that remains; against random orders. Once over all content tokens, once over the other
  sentences' tokens only (the sentence's own words dominate otherwise).

Heads switched off (``mask_heads``) contribute 0 everywhere (their α gated to 0, as the model does).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from analysis.device import batch_bytes
from model.hooks import blocks, names, record
from model.summarizer import Encoded, Summarizer, best_part

CHUNK_BYTES = 64 * 2 ** 20  # value zeroing: one block of zeroed tokens' T × D_ff work at a time
ALTI_CHUNK_BYTES = 8 * 2 ** 20  # ALTI: one block of query rows' T × D
FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5)
METHOD_NAMES = {"attention": "raw attention (last layer, mean of heads)", "rollout": "attention rollout",
                "alti": "ALTI (composed, through the sentence encoder)", "gradient": "gradient × input",
                "value_zeroing": "value zeroing (one layer)", "random": "random order"}


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


def _zeroing(alpha: torch.Tensor, f: torch.Tensor, rest: Callable[[torch.Tensor], torch.Tensor], z: torch.Tensor,
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


# ------------------------------------------------------------------ capture

@dataclass(frozen=True)
class Captured:
    """One window's layer inputs and attention (float32), and the sentence encoder's."""
    enc: Encoded
    window: int
    x: list[torch.Tensor]        # [L + 1] × [T, D]: the embeddings, then each layer's output
    alpha: list[torch.Tensor]    # [L] × [H, T, T], heads switched off gated to 0
    inter_x: list[torch.Tensor]  # [L2 + 1] × [S, D]: sentence vectors + positions, then each layer's output
    inter_alpha: list[torch.Tensor]  # [L2] × [H2, S, S]
    vectors: torch.Tensor        # [1, S, D] every part's sentence vector (all windows)
    scores: torch.Tensor         # [S] part scores


def capture(summarizer: Summarizer, enc: Encoded, window: int = 0, mask_heads=()) -> Captured:
    """One forward pass, recording what the measures need (hooks for this call and thread only)."""
    if not 0 <= window < len(enc.window_starts):
        raise ValueError(f"window {window} does not exist (the document has {len(enc.window_starts)})")
    m = summarizer.model
    bert_gates, inter_gates = summarizer.head_mask(mask_heads)
    with torch.inference_mode(), record(m, ["inter.pe", *names(m, r"inter\.\d+\.(resid_post|attn\.pattern)")]) as ext:
        vecs, rec = summarizer.sentence_vectors(enc, bert_gates, window,
                                                ["bert.embed", *names(m, r"bert\.\d+\.(resid_post|attn\.pattern)")])
        scores = summarizer.score_vectors(vecs, inter_gates)[0]  # [S]
    L, L2 = len(blocks(m, "bert")), len(blocks(m, "inter"))
    gate = lambda g, i: 1 if g is None else g[i][:, None, None].float()  # noqa: E731
    return Captured(
        enc, window, [rec["bert.embed"][0][0].float()] + [rec[f"bert.{i}.resid_post"][0][0].float() for i in range(L)],
        [rec[f"bert.{i}.attn.pattern"][0][0].float() * gate(bert_gates, i) for i in range(L)],
        [(vecs[0] + ext["inter.pe"][0]).float()] + [ext[f"inter.{i}.resid_post"][0][0].float() for i in range(L2)],
        [ext[f"inter.{i}.attn.pattern"][0][0].float() * gate(inter_gates, i) for i in range(L2)], vecs,
        scores.float())


def bert_values(summarizer: Summarizer, cap: Captured, l: int) -> torch.Tensor:
    """f^h(x_j) of BERT layer ``l`` [H, T, D] (all the norms need)."""
    b = blocks(summarizer.model, "bert")[l]
    return value_vectors(cap.x[l], b.W_V, b.W_O, b.heads)


def bert_block(summarizer: Summarizer, cap: Captured, l: int) -> tuple[torch.Tensor, Decomposed]:
    b = blocks(summarizer.model, "bert")[l]
    f = bert_values(summarizer, cap, l)
    z = mixed(cap.alpha[l], cap.x[l], b.W_V, b.W_O, b.heads)
    return f, post_ln_block(cap.x[l], cap.alpha[l], f, z, b.W_O, b.ln_attn)


def inter_block(summarizer: Summarizer, cap: Captured, l: int) -> tuple[torch.Tensor, Decomposed]:
    b = blocks(summarizer.model, "inter")[l]
    x = cap.inter_x[l]
    h = b.ln_attn(x) if l != 0 else x  # PreSumm: no LayerNorm before layer 0
    f = value_vectors(h, b.W_V, b.W_O, b.heads)
    z = mixed(cap.inter_alpha[l], h, b.W_V, b.W_O, b.heads)
    return f, pre_ln_block(x, cap.inter_alpha[l], f, z, b.W_O)


# ------------------------------------------------------------------ everything for one window

@dataclass(frozen=True)
class Mixing:
    """Context mixing of one BERT window (T tokens) and of the sentence encoder (S parts of the
    whole document). Maps are row = the token receiving, column = the token contributing."""
    window: int
    tokens: tuple[str, ...]
    input_ids: np.ndarray       # [T] int64
    norm_head: np.ndarray       # [L, H, T, T] float16 ‖α f‖ per head
    value_norm: np.ndarray      # [L, H, T] float32 ‖f^h(x_j)‖: how long each token's vector is, per head
    norm_layer: np.ndarray      # [L, T, T] float32 ‖Σ_h α f‖
    mixing_ratio: np.ndarray    # [L] float32, mean over tokens
    mixing_ratio_tokens: np.ndarray  # [L, T] float32
    alti_layer: np.ndarray      # [L, T, T] float32, rows sum to 1
    alti_input: np.ndarray      # [T, T] float32 = C_L ⋯ C_1
    inter_norm_head: np.ndarray  # [L2, H2, S, S] float32
    inter_norm_layer: np.ndarray  # [L2, S, S] float32
    inter_alti_layer: np.ndarray  # [L2, S, S] float32
    inter_alti: np.ndarray      # [S, S] float32, composed
    parts: np.ndarray           # [S_w] int64, the parts this window feeds (indices into the S)
    pooling: np.ndarray         # [S_w, T] float32, how each of them is read from the top layer

    def nbytes(self) -> int:
        return sum(v.nbytes for f in fields(self) if isinstance(v := getattr(self, f.name), np.ndarray))

    def score_to_tokens(self, part: int) -> np.ndarray:
        """ALTI of part ``part``'s score back to this window's input tokens [T]: its composed row
        of the sentence encoder over this window's parts, through the pooling and BERT's
        composed ALTI. The rest of the row (other windows' parts) is not in it."""
        return (self.inter_alti[part, self.parts] @ self.pooling @ self.alti_input).astype(np.float32)

    def arrays(self) -> dict[str, np.ndarray]:
        out = {"tokens": np.array(self.tokens)}
        out.update({f.name: v for f in fields(self) if isinstance(v := getattr(self, f.name), np.ndarray)})
        return out


def pooling_matrix(summarizer: Summarizer, enc: Encoded, window: int) -> tuple[np.ndarray, np.ndarray]:
    """(the parts window ``window`` feeds [S_w], their pooling [S_w, T]): a part's vector is the
    mean of its tokens [CLS] … [SEP] (or its [CLS] output) times a scale; the scale is dropped
    (ALTI's rows are shares)."""
    a, b = enc.window(window)
    bounds = enc.window_parts()
    parts = np.arange(bounds[window], bounds[window + 1])
    starts = [enc.cls_positions[p] - a for p in parts] + [b - a]
    P = np.zeros((len(parts), b - a), dtype=np.float32)
    for n in range(len(parts)):
        if summarizer.model.pooling == "mean":
            P[n, starts[n]:starts[n + 1]] = 1 / (starts[n + 1] - starts[n])
        else:
            P[n, starts[n]] = 1
    return parts, P


def mixing(summarizer: Summarizer, text: str | Encoded | Captured, window: int = 0, mask_heads=(),
           progress: Callable[[int, int], None] | None = None) -> Mixing:
    """Norm-based contributions, mixing ratios and ALTI of one BERT window and of the sentence
    encoder (``text`` may be an ``Encoded`` document, or its ``capture``). ``progress(done, total)``
    per layer."""
    cap = text if isinstance(text, Captured) else capture(summarizer, encoded(summarizer, text), window, mask_heads)
    L, L2 = len(cap.alpha), len(cap.inter_alpha)
    norm_head, norm_layer, ratio, alti_layer, value_norm = [], [], [], [], []
    composed = None
    with torch.inference_mode():
        for l in range(L):
            f, block = bert_block(summarizer, cap, l)
            h, lay = norms(cap.alpha[l], f)
            norm_head.append(h.half().cpu().numpy())
            value_norm.append(f.norm(dim=-1).cpu().numpy())
            norm_layer.append(lay.cpu().numpy())
            ratio.append(mixing_ratio(block).cpu().numpy())
            c = alti(block)
            alti_layer.append(c.cpu().numpy())
            composed = c if composed is None else c @ composed
            if progress:
                progress(l + 1, L + 1)
        inh, inl, ial = [], [], []
        inter_composed = None
        for l in range(L2):
            f, block = inter_block(summarizer, cap, l)
            h, lay = norms(cap.inter_alpha[l], f)
            inh.append(h.cpu().numpy()), inl.append(lay.cpu().numpy())
            c = alti(block)
            ial.append(c.cpu().numpy())
            inter_composed = c if inter_composed is None else c @ inter_composed
        if progress:
            progress(L + 1, L + 1)
    a, b = cap.enc.window(cap.window)
    parts, P = pooling_matrix(summarizer, cap.enc, cap.window)
    ratio = np.stack(ratio)
    return Mixing(cap.window, cap.enc.tokens[a:b], np.array(cap.enc.input_ids[a:b], dtype=np.int64),
                  np.stack(norm_head), np.stack(value_norm), np.stack(norm_layer), ratio.mean(1), ratio, np.stack(alti_layer),
                  composed.cpu().numpy(), np.stack(inh), np.stack(inl), np.stack(ial), inter_composed.cpu().numpy(),
                  parts, P)


def encoded(summarizer: Summarizer, text: str | Encoded) -> Encoded:
    return summarizer.encode(text, summarizer.max_windows) if isinstance(text, str) else text


def value_zeroing(summarizer: Summarizer, text: str | Encoded | Captured, layer: int | str, window: int = 0, mask_heads=(),
                  progress: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Value zeroing (Mohebbi et al. 2023) of BERT layer ``layer`` (0-based) of one window, or of
    the sentence encoder's layer ``"inter:N"``: (C [T, T] rows normalised, row totals [T]),
    float64 throughout. T forwards of one layer, in blocks."""
    cap = text if isinstance(text, Captured) else capture(summarizer, encoded(summarizer, text), window, mask_heads)
    d = torch.float64
    lin = lambda m, x: F.linear(x, m.weight.to(d), m.bias.to(d))  # noqa: E731
    ln = lambda m, x: F.layer_norm(x, m.normalized_shape, m.weight.to(d), m.bias.to(d), m.eps)  # noqa: E731
    with torch.inference_mode():
        if isinstance(layer, str):
            n = int(layer.split(":")[1])
            if not 0 <= n < len(cap.inter_alpha):
                raise ValueError(f"the sentence encoder has no layer {n + 1}")
            m = blocks(summarizer.model, "inter")[n]
            x = cap.inter_x[n].to(d)
            h = ln(m.ln_attn, x) if n != 0 else x
            f = value_vectors(h, m.W_V, m.W_O, m.heads)
            alpha = cap.inter_alpha[n].to(d)

            def rest(z):
                u = z + x
                return u + lin(m.W_out, F.gelu(lin(m.W_in, ln(m.ln_ff, u)), approximate="tanh"))
            z = mixed(alpha, h, m.W_V, m.W_O, m.heads) + m.W_O.bias.to(d)
            return tuple(t.cpu().numpy() for t in _zeroing(alpha, f, rest, z, batch_bytes(f.device, CHUNK_BYTES),
                                                           m.W_in.out_features, progress))
        if not 0 <= layer < len(cap.alpha):
            raise ValueError(f"BERT has no layer {layer + 1} (it has {len(cap.alpha)})")
        m = blocks(summarizer.model, "bert")[layer]
        x, alpha = cap.x[layer].to(d), cap.alpha[layer].to(d)
        f = value_vectors(x, m.W_V, m.W_O, m.heads)

        def rest(z):
            a = ln(m.ln_attn, z + x)
            return ln(m.ln_ff, lin(m.W_out, F.gelu(lin(m.W_in, a))) + a)
        z = mixed(alpha, x, m.W_V, m.W_O, m.heads) + m.W_O.bias.to(d)
        return tuple(t.cpu().numpy() for t in _zeroing(alpha, f, rest, z, batch_bytes(f.device, CHUNK_BYTES),
                                                       m.W_in.out_features, progress))


# ------------------------------------------------------------------ the faithfulness scoreboard

SCOPES = {"all": "all content tokens of the window",
          "other": "the other sentences' tokens only (the sentence's own always kept)"}
SCOREBOARD_METHOD = (
    "ERASER's comprehensiveness and sufficiency (DeYoung et al. 2020, §4): the window's content tokens (every "
    "[CLS] and [SEP] kept) ranked by each method's importance for the sentence's score; comprehensiveness = "
    "score − score with the top f deleted, sufficiency = score − score with only the top f kept (higher "
    "comprehensiveness and lower sufficiency = more faithful); random = the same over seeded random orders "
    "(mean and standard deviation).")


def importances(summarizer: Summarizer, cap: Captured, mix: Mixing, sentence: int, mask_heads=(),
                zeroed: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Each method's importance of the window's tokens [T] for sentence ``sentence``'s score: raw
    attention (last BERT layer, mean of the heads on, the rows its vector pools), rollout (Abnar &
    Zuidema 2020) read the same way, ALTI composed through the sentence encoder
    (``Mixing.score_to_tokens``), gradient × input with Ali et al.'s rules (the Why page's), and
    value zeroing's rows of one layer when ``zeroed`` [T, T] is given."""
    from analysis.explain import KEEP_WINDOWS, graph_passes, rollout_of, token_attributions

    enc = cap.enc
    part = best_part(enc.input_sentences, cap.scores, sentence)
    if part is None:
        raise ValueError(f"sentence {sentence + 1} is not scored (too short, or not fed): nothing to explain")
    if int(enc.part_windows()[part]) != cap.window:
        raise ValueError(f"sentence {sentence + 1} is read in BERT window {int(enc.part_windows()[part]) + 1}, "
                         f"not {cap.window + 1}")
    row = mix.pooling[list(mix.parts).index(part)]  # [T]
    active = (cap.alpha[-1].flatten(1).abs().sum(1) > 0).sum().clamp_min(1)
    att = cap.alpha[-1].sum(0).cpu().numpy() / float(active)  # [T, T]
    rolled = rollout_of(np.stack([a.half().cpu().numpy() for a in cap.alpha]), mask_heads)
    graph, scores, _, dtype = graph_passes(summarizer, enc, mask_heads, "conservative", KEEP_WINDOWS, "auto", None)
    a, b = enc.window(cap.window)
    grad = token_attributions(summarizer, enc, *graph, [sentence], mask_heads, "conservative", None, scores,
                              dtype)[sentence][a:b]
    out = {"attention": row @ att, "rollout": row @ rolled, "alti": mix.score_to_tokens(part),
           "gradient": grad}
    if zeroed is not None:
        out["value_zeroing"] = row @ zeroed
    return {k: np.asarray(v, dtype=np.float32) for k, v in out.items()}


DELETION_BATCH = 8  # scoreboard variants per forward on the CPU (a GPU: as many as fit, deleted_batch)


def deleted_batch(summarizer: Summarizer, T: int) -> int:
    """Scoreboard variants per forward: 8 on the CPU; on a GPU as many as keep one layer's
    attention [B, H, T, T] and feed-forward [B, T, D_ff] (float32) within ``batch_bytes``."""
    if summarizer.device.type != "cuda":
        return DELETION_BATCH
    cfg = summarizer.model.bert.config
    per = 4 * T * (cfg.num_attention_heads * T + cfg.intermediate_size)
    return max(DELETION_BATCH, batch_bytes(summarizer.device, 0) // per)


def deleted_scores(summarizer: Summarizer, cap: Captured, part: int, keeps: np.ndarray, mask_heads=(),
                   batch: int | None = None, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Part ``part``'s score with the window's input cut to the tokens ``keeps`` [N, T] (bool) marks, N
    variants in batches (``batch`` None: ``deleted_batch``): BERT reads the shortened window
    (segments and [CLS] positions follow their tokens), the other windows' sentence vectors stay
    (``cap.vectors``: ``mask_heads`` must be the capture's), the sentence encoder scores again. → [N]."""
    enc, w = cap.enc, cap.window
    batch = batch or deleted_batch(summarizer, keeps.shape[1])
    a, b = enc.window(w)
    bounds = enc.window_parts()
    p0, p1 = int(bounds[w]), int(bounds[w + 1])
    ids = np.array(enc.input_ids[a:b])
    segs = np.array(enc.segment_ids[a:b])
    is_cls = np.array([t == "[CLS]" for t in enc.tokens[a:b]])
    bert_gates, inter_gates = summarizer.head_mask(mask_heads)
    dev = summarizer.device
    with torch.inference_mode():
        base = cap.vectors  # [1, S, D]
        out = []
        for n in range(0, len(keeps), batch):
            rows = keeps[n:n + batch]
            width = int(rows.sum(1).max())
            t = lambda x: torch.tensor(x, dtype=torch.long, device=dev)  # noqa: E731
            pad = lambda x: np.pad(x, (0, width - len(x)))  # noqa: E731
            I = t(np.stack([pad(ids[k]) for k in rows]))
            Sg = t(np.stack([pad(segs[k]) for k in rows]))
            M = t(np.stack([pad(np.ones(int(k.sum()), dtype=np.int64)) for k in rows]))
            C = t(np.stack([np.flatnonzero(is_cls[k]) for k in rows]))  # every [CLS] is kept
            vecs = summarizer.model.sentence_vectors(I, Sg, M, C, torch.ones_like(C, dtype=torch.bool),
                                                     head_mask=bert_gates)  # [B, S_w, D]
            full = base.expand(len(rows), -1, -1).clone()
            full[:, p0:p1] = vecs
            out.append(summarizer.score_vectors(full, inter_gates)[:, part])  # stays on the device: one copy back
            if progress:
                progress(min(n + batch, len(keeps)), len(keeps))
    return torch.cat(out).float().cpu().numpy()


def sentence_window(summarizer: Summarizer, enc: Encoded, sentence: int, mask_heads=()) -> int:
    """The BERT window that reads sentence ``sentence``'s scoring part (its best part)."""
    with torch.inference_mode():
        part = best_part(enc.input_sentences, summarizer.score(enc, mask_heads), sentence)
    if part is None:
        raise ValueError(f"sentence {sentence + 1} is not scored (too short, or not fed): nothing to explain")
    return int(enc.part_windows()[part])


def faithfulness(summarizer: Summarizer, text: str | Encoded, sentence: int, mask_heads=(),
                 fractions=FRACTIONS, orders: int = 10, seed: int = 0, zeroed: np.ndarray | None = None,
                 cap: Captured | None = None, mix: Mixing | None = None,
                 progress: Callable[[int, int], None] | None = None) -> dict:
    """The scoreboard for sentence ``sentence`` (0-based) of a document (``SCOREBOARD_METHOD``), in
    the BERT window that reads it. JSON-ready: ``score``, ``fractions``, per scope ("all", "other")
    per method ``comprehensiveness`` and ``sufficiency`` [F], ``random`` with their ``mean`` and
    ``std`` [F] over ``orders`` orders, and ``aopc`` (the means over the fractions)."""
    enc = encoded(summarizer, text)
    cap = cap if cap is not None else capture(summarizer, enc, sentence_window(summarizer, enc, sentence, mask_heads),
                                              mask_heads)
    mix = mix if mix is not None else mixing(summarizer, cap)
    imp = importances(summarizer, cap, mix, sentence, mask_heads, zeroed)
    part = best_part(enc.input_sentences, cap.scores, sentence)
    a, b = enc.window(cap.window)
    tokens = enc.tokens[a:b]
    content = np.array([t not in ("[CLS]", "[SEP]") for t in tokens])
    own = np.array(enc.token_sentence[a:b]) == sentence
    rng = np.random.default_rng(seed)
    plan = []  # (scope, method, order index, candidates ranked)
    for scope, cand in (("all", np.flatnonzero(content)), ("other", np.flatnonzero(content & ~own))):
        if len(cand) == 0:
            continue
        for m, v in imp.items():
            plan.append((scope, m, 0, cand[np.argsort(-v[cand], kind="stable")]))
        plan += [(scope, "random", r, rng.permutation(cand)) for r in range(orders)]
    keeps = []
    for _, _, _, ranked in plan:
        for f in fractions:
            n = max(1, int(round(f * len(ranked))))
            for top_deleted in (True, False):
                keep = np.ones(len(tokens), dtype=bool)
                keep[ranked[:n] if top_deleted else ranked[n:]] = False
                keeps.append(keep)
    keeps = np.stack(keeps)
    by_length = np.argsort(keeps.sum(1), kind="stable")  # batches of similar lengths: little padding
    s = np.empty(len(keeps), dtype=np.float32)
    s[by_length] = deleted_scores(summarizer, cap, part, keeps[by_length], mask_heads, progress=progress)
    score = float(cap.scores[part])
    drops = (score - s).reshape(len(plan), len(fractions), 2)  # [plan, F, (comprehensiveness, sufficiency)]
    board: dict = {"score": score, "sentence": sentence, "window": cap.window, "fractions": list(fractions),
                   "orders": orders, "method": SCOREBOARD_METHOD, "names": METHOD_NAMES, "scopes": {}}
    for scope in SCOPES:
        rows = [n for n, p in enumerate(plan) if p[0] == scope]
        if not rows:
            continue
        entry = {}
        for n in rows:
            _, m, _, _ = plan[n]
            if m != "random":
                entry[m] = {"comprehensiveness": drops[n, :, 0].tolist(), "sufficiency": drops[n, :, 1].tolist(),
                            "aopc_comprehensiveness": float(drops[n, :, 0].mean()),
                            "aopc_sufficiency": float(drops[n, :, 1].mean())}
        r = drops[[n for n in rows if plan[n][1] == "random"]]  # [orders, F, 2]
        entry["random"] = {"comprehensiveness": r[:, :, 0].mean(0).tolist(), "sufficiency": r[:, :, 1].mean(0).tolist(),
                           "comprehensiveness_std": r[:, :, 0].std(0).tolist(),
                           "sufficiency_std": r[:, :, 1].std(0).tolist(),
                           "aopc_comprehensiveness": float(r[:, :, 0].mean()),
                           "aopc_sufficiency": float(r[:, :, 1].mean()),
                           "aopc_comprehensiveness_std": float(r[:, :, 0].mean(1).std()),
                           "aopc_sufficiency_std": float(r[:, :, 1].mean(1).std())}
        board["scopes"][scope] = entry
    board["verdict"] = verdict(board)
    return board


def faithfulness_gap(entry: dict) -> float:
    """One number per method: AOPC comprehensiveness − AOPC sufficiency (higher = more faithful)."""
    return entry["aopc_comprehensiveness"] - entry["aopc_sufficiency"]


def verdict(board: dict) -> str:
    """Which explanation to trust for this sentence, in one sentence."""
    entry = board["scopes"].get("all") or next(iter(board["scopes"].values()), None)
    if entry is None:
        return "Nothing to delete: the window has no content token."
    methods = {m: v for m, v in entry.items() if m != "random"}
    best = max(methods, key=lambda m: faithfulness_gap(methods[m]))
    rnd = entry["random"]
    spread = rnd["aopc_comprehensiveness_std"] + rnd["aopc_sufficiency_std"]
    margin = faithfulness_gap(methods[best]) - faithfulness_gap(rnd)
    names = board["names"]
    att = methods.get("attention")
    tail = (f"; raw attention: {faithfulness_gap(att):+.3f}" if att is not None and best != "attention" else "")
    if margin <= 2 * spread:
        return (f"No explanation clearly beats random orders here: the best, {names[best]}, scores "
                f"{faithfulness_gap(methods[best]):+.3f} against random's {faithfulness_gap(rnd):+.3f} ± {spread:.3f}"
                f"{tail}.")
    comp, suff = methods[best]["aopc_comprehensiveness"], methods[best]["aopc_sufficiency"]
    kept = (f"keeping only them lowers it by {suff:.3f}" if suff >= 0.0005 else
            f"keeping only them raises it by {-suff:.3f}" if suff <= -0.0005 else "keeping only them leaves it as it was")
    return (f"Trust {names[best]} most for this sentence: deleting its top tokens "
            + (f"lowers the score by {comp:.3f}" if comp >= 0 else f"raises the score by {-comp:.3f}")
            + f" on average, and {kept} (comprehensiveness − sufficiency "
            f"{faithfulness_gap(methods[best]):+.3f}; random {faithfulness_gap(rnd):+.3f} ± {spread:.3f}{tail}).")


def sep_head(attention: np.ndarray, mix: Mixing) -> dict | None:
    """The head whose attention sits on [SEP] while [SEP] contributes little (Kobayashi et al.
    2020, §5): per head the mean share of each row's attention on [SEP] keys and the share of its
    norm-weighted contribution ‖α f(x)‖ from them. Of the heads that put at least half as much
    attention on [SEP] as the most [SEP]-attending head does (a head that barely looks at [SEP]
    shows nothing), the one where attention exceeds contribution by the largest factor.
    ``attention`` [L, H, T, T] (the Trace's). None when the window has no [SEP] or no word."""
    sep = np.array([t == "[SEP]" for t in mix.tokens])
    words = ~np.isin(np.array(mix.tokens, dtype=object), ("[CLS]", "[SEP]"))
    if not sep.any() or not words.any():
        return None
    att = attention[..., sep].astype(np.float32).sum(-1).mean(-1)  # [L, H]
    norm = mix.norm_head.astype(np.float32)
    total = norm.sum(-1)  # [L, H, T]
    share = (norm[..., sep].sum(-1) / np.maximum(total, 1e-12)).mean(-1)  # [L, H]
    ratio = np.where(att >= 0.5 * att.max(), att / np.maximum(share, 1e-12), -np.inf)
    l, h = np.unravel_index(np.argmax(ratio), att.shape)
    return {"layer": int(l), "head": int(h), "attention_on_sep": float(att[l, h]), "contribution_of_sep": float(share[l, h]),
            "most_attention_on_sep": float(att.max()), "candidates": int(np.isfinite(ratio).sum()),
            "sep_vector_norm": float(mix.value_norm[l, h, sep].mean()),
            "word_vector_norm": float(mix.value_norm[l, h, words].mean())}


# ------------------------------------------------------------------ command line

def add_arguments(parser) -> None:
    parser.add_argument("--sentence", type=int, metavar="I",
                        help="the scoreboard's sentence (0-based; default: the first selected one)")
    parser.add_argument("--window", type=int, default=0, help="the BERT window of the maps (0-based; default 0)")
    parser.add_argument("--value-zeroing", metavar="LAYER",
                        help="value zeroing of BERT layer LAYER (1-based) or of the sentence encoder's (inter:N)")
    parser.add_argument("--orders", type=int, default=10, help="random orders in the scoreboard (default 10)")
    parser.add_argument("--no-scoreboard", dest="scoreboard", action="store_false")
    parser.add_argument("--out", help="write the maps as .npz: input_ids, tokens, norm_head [L,H,T,T], norm_layer "
                                      "[L,T,T], mixing_ratio [L], alti_layer [L,T,T], alti_input [T,T], inter_alti "
                                      "[S,S], value_zeroing (when asked)")


def parse_layer(spec: str) -> int | str:
    """``"3"`` → BERT layer 2 (0-based); ``"inter:1"`` → ``"inter:0"``."""
    part, _, n = spec.rpartition(":")
    if part not in ("", "inter") or not n.isdigit() or int(n) < 1:
        raise ValueError(f"--value-zeroing {spec!r}: a BERT layer number (1-based) or inter:N")
    return f"inter:{int(n) - 1}" if part else int(n) - 1


def cli(args, summarizer: Summarizer) -> dict:
    from model.__main__ import read_text

    enc = encoded(summarizer, read_text(args.file))
    with torch.inference_mode():
        part_scores = summarizer.score(enc)
    summary = summarizer.summary(enc, part_scores, args.k, args.block)
    sentence = args.sentence if args.sentence is not None else (summary.selected or (None,))[0]
    if args.sentence is not None and not 0 <= sentence < len(summary.scores):  # (0-based here, as the option says)
        raise ValueError(f"--sentence {sentence}: the document has {len(summary.scores)} sentences, numbered 0 to "
                         f"{len(summary.scores) - 1} here")
    if args.sentence is not None and summary.scores[sentence] is None:
        raise ValueError(f"--sentence {sentence} (0-based) is not scored (too short, or not fed)")
    window = args.window if args.sentence is None else sentence_window(summarizer, enc, sentence)
    cap = capture(summarizer, enc, window)
    mix = mixing(summarizer, cap)
    arrays = mix.arrays()
    zeroed = None
    if args.value_zeroing:
        layer = parse_layer(args.value_zeroing)
        zeroed, total = value_zeroing(summarizer, cap, layer)
        arrays |= {"value_zeroing": zeroed, "value_zeroing_total": total}
        zeroed = None if isinstance(layer, str) else zeroed  # a BERT layer's rows rank tokens
    if args.out:
        np.savez_compressed(args.out, **arrays)
    out = {"sentences": list(summary.sentences), "selected": list(summary.selected), "window": window,
           "tokens": list(mix.tokens), "mixing_ratio": mix.mixing_ratio.tolist(), "out": args.out}
    if args.scoreboard and sentence is not None:
        out["scoreboard"] = faithfulness(summarizer, enc, sentence, orders=args.orders, zeroed=zeroed, cap=cap, mix=mix)
    return out
