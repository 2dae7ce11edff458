"""The paper's model at its real shape, with random weights: a PreSumm BertSumExt checkpoint
(``{"model", "opt", "optims"}``, keys ``bert.model.*`` and ``ext_layer.*``, as PreSumm's
``train.py`` saves it) and the Hugging Face BERT directory it goes with (``config.json``,
``vocab.txt``, ``model.safetensors``), written to a folder. For tests and benchmarks of the app
at BERT-base size without the real checkpoints (never committed; ~0.9 GB on disk).

    python -m benchmarks.presumm_fixture OUT_DIR [--max-pos 800]

prints the ``--model`` argument that opens it in the app."""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import types
from pathlib import Path

import torch
from safetensors.torch import save_file

from model.bert import BertConfig, BertModel
from model.inter_encoder import InterEncoderConfig, TransformerInterEncoder
from model.load import default_backbone_dir


def random_(module: torch.nn.Module, seed: int) -> None:
    """BERT's initialisation (Devlin et al. 2019): weights N(0, 0.02), biases 0, LayerNorm 1."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if "LayerNorm" in name or "layer_norm" in name:
                p.fill_(1.0 if name.endswith("weight") else 0.0)
            elif name.endswith("bias"):
                p.zero_()
            else:
                p.copy_(torch.randn(p.shape, generator=g) * 0.02)


def write(folder: str | Path, layers: int = 12, heads: int = 12, hidden: int = 768, ff: int = 3072,
          max_pos: int = 512, inter_layers: int = 2, inter_heads: int = 8, inter_ff: int = 2048,
          seed: int = 0) -> tuple[Path, Path]:
    """Writes ``folder/bert-base-uncased/`` and ``folder/bertext_cnndm_transformer.pt``; returns
    both paths. ``max_pos`` > 512: PreSumm's longer variants (rows past 512 copy row 511, as
    PreSumm's ``ExtSummarizer`` extends the table before fine-tuning)."""
    folder = Path(folder)
    backbone = folder / "bert-base-uncased"
    backbone.mkdir(parents=True, exist_ok=True)
    vocab = default_backbone_dir() / "vocab.txt"  # bert-base-uncased's 30,522 WordPieces
    shutil.copy(vocab, backbone / "vocab.txt")
    cfg = dict(architectures=["BertModel"], model_type="bert", vocab_size=30522, hidden_size=hidden,
               num_hidden_layers=layers, num_attention_heads=heads, intermediate_size=ff, hidden_act="gelu",
               hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1, max_position_embeddings=512,
               type_vocab_size=2, initializer_range=0.02, layer_norm_eps=1e-12, pad_token_id=0)
    (backbone / "config.json").write_text(json.dumps(cfg, indent=1))
    (backbone / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True}))
    bert = BertModel(BertConfig.from_json(backbone / "config.json"))
    random_(bert, seed)
    save_file({k: v.contiguous() for k, v in bert.state_dict().items()}, backbone / "model.safetensors")

    random_(bert, seed + 1)  # fine-tuning changed every BERT weight
    sd = {f"bert.model.{k}": v for k, v in bert.state_dict().items()}
    if max_pos > 512:
        table = sd["bert.model.embeddings.position_embeddings.weight"]
        sd["bert.model.embeddings.position_embeddings.weight"] = torch.cat([table, table[-1:].repeat(max_pos - 512, 1)])
    ext = TransformerInterEncoder(InterEncoderConfig(d_model=hidden, layers=inter_layers, heads=inter_heads, d_ff=inter_ff))
    random_(ext, seed + 2)
    sd.update({f"ext_layer.{k}": v for k, v in ext.state_dict().items()})  # pos_emb.pe [1, 5000, D] included
    opt = argparse.Namespace(task="ext", encoder="bert", ext_layers=inter_layers, ext_heads=inter_heads,
                             ext_ff_size=inter_ff, ext_dropout=0.2, max_pos=max_pos, lr=2e-3, batch_size=3000)
    # PreSumm also pickles its optimizer objects (models.optimizers.Optimizer): a class that does
    # not exist here, which the app's restricted unpickler must step over
    optimizers = types.ModuleType("models.optimizers")
    optimizers.Optimizer = type("Optimizer", (), {"__module__": "models.optimizers"})
    sys.modules.update({"models": types.ModuleType("models"), "models.optimizers": optimizers})
    try:
        checkpoint = folder / "bertext_cnndm_transformer.pt"
        torch.save({"model": sd, "opt": opt, "optims": [optimizers.Optimizer()]}, checkpoint)
    finally:
        del sys.modules["models"], sys.modules["models.optimizers"]
    return backbone, checkpoint


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", type=Path)
    p.add_argument("--max-pos", type=int, default=512, help="BERT positions (PreSumm: 512, or 800)")
    args = p.parse_args(argv)
    backbone, checkpoint = write(args.out, max_pos=args.max_pos)
    print(f"--model \"bert-base-random={backbone},{checkpoint}\"")


if __name__ == "__main__":
    main()
