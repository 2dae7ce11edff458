"""What the model used, not only what it looked at: context mixing in BertSumExt, one BERT window
and the sentence encoder (``capture``, ``mixing``, ``value_zeroing``), by the decompositions of
analysis.decomposition: norm-based contributions, the mixing ratio, ALTI through both encoders,
value zeroing; and ``sep_head`` (a head whose weight sits on [SEP] while [SEP] adds little).
The scoreboard that checks them is analysis.faithfulness (so is ``python -m analysis mixing``)."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from analysis.device import batch_bytes
from analysis.decomposition import (CHUNK_BYTES, Decomposed, alti, mixed, mixing_ratio, norms, post_ln_block,
                                   pre_ln_block, value_vectors, zeroing)
from model.hooks import blocks, names, record
from model.summarizer import Encoded, Summarizer, best_part


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
            return tuple(t.cpu().numpy() for t in zeroing(alpha, f, rest, z, batch_bytes(f.device, CHUNK_BYTES),
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
        return tuple(t.cpu().numpy() for t in zeroing(alpha, f, rest, z, batch_bytes(f.device, CHUNK_BYTES),
                                                       m.W_in.out_features, progress))


def sentence_window(summarizer: Summarizer, enc: Encoded, sentence: int, mask_heads=()) -> int:
    """The BERT window that reads sentence ``sentence``'s scoring part (its best part)."""
    with torch.inference_mode():
        part = best_part(enc.input_sentences, summarizer.score(enc, mask_heads), sentence)
    if part is None:
        raise ValueError(f"sentence {sentence + 1} is not scored (too short, or not fed): nothing to explain")
    return int(enc.part_windows()[part])


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
