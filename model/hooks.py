"""Named hook points: the one vocabulary in which everything outside model/ records and changes
what flows through BertSumExt (TransformerLens's habit: ``blocks.{l}.attn.hook_pattern``). Only
this module knows the network's module names; analyses name points.

    point                    module                                   value
    bert.embed               BertEmbeddings (output)                  [B, T, D] layer 0's input
    bert.embed.word          word_embeddings (output)                 [B, T, D]
    bert.embed.pos           position_embeddings (output)             [1, T, D]
    bert.embed.type          token_type_embeddings (output)           [B, T, D]
    bert.embed.ln            the embeddings' LayerNorm (output)       [B, T, D]
    bert.{l}.attn.q/k/v      query / key / value (output)             [B, T, D]
    bert.{l}.attn.pattern    softmax (output)                         [B, H, T, T] attention probabilities
    bert.{l}.attn.z          attention.output.dense (input)           [B, T, D] the heads' outputs, concatenated
    bert.{l}.ln1 / ln2       the post-attention / post-FFN LayerNorm  [B, T, D]
    bert.{l}.resid_post      BertLayer (output)                       [B, T, D] the layer's output
    inter.pe                 pos_emb (output)                         [S, D] the sentences' position rows
    inter.{l}.attn.pattern   self_attn.softmax (output)               [B, H2, S, S]
    inter.{l}.attn.z         self_attn.final_linear (input)           [B, S, D]
    inter.{l}.ln1 / ln2      the pre-attention / pre-FFN LayerNorm    [B, S, D]
    inter.{l}.resid_post     TransformerEncoderLayer (output)         [B, S, D]
    inter.ln_final           the LayerNorm before the scorer          [B, S, D]

``record(model, names)`` keeps every value a point carries during the block (detached), and
``intervene(model, {name: fn})`` lets ``fn(value, module, args)`` replace it (return the new value,
or None to leave it). Both act only for the thread that entered them (one cached model serves
every session's thread) and always remove their hooks (vit-pytorch's recorder). ``blocks`` gives
each encoder block's parts under the papers' names, for analyses that decompose a block (ALTI,
value zeroing, patching)."""
from __future__ import annotations

import re
import threading
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterable

import torch
from torch import nn

OUT, IN = "output", "input"  # a point carries its module's output, or its (first) input


def points(model: nn.Module) -> dict[str, tuple[nn.Module, str]]:
    """Every hook point of a BertSumExt: name → (module, OUT or IN)."""
    bert, ext = model.bert, model.ext_layer
    e = bert.embeddings
    out = {"bert.embed": (e, OUT), "bert.embed.word": (e.word_embeddings, OUT),
           "bert.embed.pos": (e.position_embeddings, OUT), "bert.embed.type": (e.token_type_embeddings, OUT),
           "bert.embed.ln": (e.LayerNorm, OUT)}
    for l, layer in enumerate(bert.encoder.layer):
        a = layer.attention
        out |= {f"bert.{l}.attn.q": (a.self.query, OUT), f"bert.{l}.attn.k": (a.self.key, OUT),
                f"bert.{l}.attn.v": (a.self.value, OUT), f"bert.{l}.attn.pattern": (a.self.softmax, OUT),
                f"bert.{l}.attn.z": (a.output.dense, IN), f"bert.{l}.ln1": (a.output.LayerNorm, OUT),
                f"bert.{l}.ln2": (layer.output.LayerNorm, OUT), f"bert.{l}.resid_post": (layer, OUT)}
    out["inter.pe"] = (ext.pos_emb, OUT)
    for l, layer in enumerate(ext.transformer_inter):
        out |= {f"inter.{l}.attn.pattern": (layer.self_attn.softmax, OUT),
                f"inter.{l}.attn.z": (layer.self_attn.final_linear, IN), f"inter.{l}.ln1": (layer.layer_norm, OUT),
                f"inter.{l}.ln2": (layer.feed_forward.layer_norm, OUT), f"inter.{l}.resid_post": (layer, OUT)}
    out["inter.ln_final"] = (ext.layer_norm, OUT)
    return out


def names(model: nn.Module, pattern: str) -> list[str]:
    """The points whose name matches ``pattern`` (a regular expression, whole name), in model order:
    ``names(m, r"bert\\.\\d+\\.attn\\.pattern")``."""
    return [n for n in points(model) if re.fullmatch(pattern, n)]


@contextmanager
def intervene(model: nn.Module, fns: dict[str, Callable]):
    """For the block, ``fn(value, module, args)`` at each named point: its return replaces the value
    (None: unchanged). This thread only; hooks removed on exit, whatever happens."""
    table, owner, handles = points(model), threading.get_ident(), []
    unknown = set(fns) - set(table)
    if unknown:
        raise KeyError(f"no hook point {sorted(unknown)[0]!r}")
    for name, fn in fns.items():
        module, where = table[name]
        if where == OUT:
            def hook(m, args, output, fn=fn):
                return fn(output, m, args) if threading.get_ident() == owner else None
            handles.append(module.register_forward_hook(hook))
        else:
            def pre(m, args, fn=fn):
                if threading.get_ident() != owner:
                    return None
                new = fn(args[0], m, args)
                return None if new is None else (new, *args[1:])
            handles.append(module.register_forward_pre_hook(pre))
    try:
        yield
    finally:
        for h in handles:
            h.remove()


@contextmanager
def record(model: nn.Module, wanted: Iterable[str]):
    """For the block, every value the named points carry in this thread, detached: yields
    {name: [value of each call…]} (a window's forward is one call)."""
    store = defaultdict(list)

    def keep(name):
        return lambda value, module, args: store[name].append(value.detach())

    with intervene(model, {n: keep(n) for n in wanted}):
        yield store


@dataclass(frozen=True)
class Block:
    """One encoder block's parts under the papers' names (Vaswani et al. 2017; Kobayashi et al.
    2021 for the decomposition): the heads' value and output maps W_V, W_O, the LayerNorm around
    the attention, the feed-forward maps W_in, W_out and its LayerNorm. BERT's blocks are
    post-LayerNorm (``ln_attn`` after the residual, ``ln_ff`` after the FFN's); the sentence
    encoder's are pre-LayerNorm (``ln_attn`` before attention, none in its layer 0; ``ln_ff``
    before the FFN). ``module``: the block, called as the model calls it."""
    module: nn.Module
    heads: int
    W_V: nn.Linear
    W_O: nn.Linear
    ln_attn: nn.LayerNorm
    W_in: nn.Linear
    W_out: nn.Linear
    ln_ff: nn.LayerNorm


def blocks(model: nn.Module, part: str) -> list[Block]:
    """The blocks of ``part`` ("bert" or "inter"), bottom up."""
    if part == "bert":
        return [Block(m, m.attention.self.heads, m.attention.self.value, m.attention.output.dense,
                      m.attention.output.LayerNorm, m.intermediate.dense, m.output.dense, m.output.LayerNorm)
                for m in model.bert.encoder.layer]
    if part == "inter":
        return [Block(m, m.self_attn.heads, m.self_attn.linear_values, m.self_attn.final_linear, m.layer_norm,
                      m.feed_forward.w_1, m.feed_forward.w_2, m.feed_forward.layer_norm)
                for m in model.ext_layer.transformer_inter]
    raise ValueError(f"unknown part {part!r} (bert or inter)")


def split_heads(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """BERT's [B, T, D] → [B, H, T, dh], as its attention splits queries, keys and values."""
    return model.bert.encoder.layer[0].attention.self.split_heads(x)
