"""Where the choice is made (issue 61): every sentence's score read at every stage, the logit lens
(nostalgebraist 2020) and the tuned lens (Belrose et al. 2023) for an extractive scorer.

- **The sentence encoder**: its scorer (final LayerNorm, W_o, sigmoid) read on the residual stream
  before its first layer and after each layer; after the last it is the model's score, exactly.
- **BERT**: the sentences' vectors pooled from each BERT layer's output (as the shipped pooling
  reads the top layer) and scored by the whole sentence encoder: **raw** (the vectors as they are:
  the encoder was trained only on the top layer's, so a raw reading of a low layer says what the
  scorer makes of a vector it never saw, not what that layer "thinks"), or **tuned** (each layer's
  vectors first mapped by its affine map, fitted on training documents to land where the top
  layer's land: training/lens.py, model/weights/tuned_lens.safetensors).

Every tensor on the model's device; the scores come back as one list per reading."""
from __future__ import annotations

import functools
import json
from pathlib import Path

import torch

from model.summarizer import Summarizer

LENS = Path(__file__).resolve().parents[1] / "model" / "weights" / "tuned_lens.safetensors"


@functools.lru_cache(maxsize=4)
def load_lens(path: Path = LENS) -> tuple[torch.Tensor, torch.Tensor, dict] | None:
    """(A [L, D, D], b [L, D], metadata) of the shipped tuned lens, None if there is none."""
    if not path.exists():
        return None
    from safetensors import safe_open

    with safe_open(str(path), "pt") as f:
        return f.get_tensor("A").float(), f.get_tensor("b").float(), dict(f.metadata() or {})


def layer_scores(summarizer: Summarizer, text: str, mask_heads=(), lens: Path = LENS) -> dict:
    """{"sentences", "selected", "scores", "inter": [L2 + 1] lists of S sentence scores (row 0: the
    encoder's input, row L2: the model's scores), "bert_raw" and "bert_tuned": [L] lists (tuned:
    None without a lens that fits this model), "lens": the lens's metadata}."""
    from analysis.explain import sentence_score_tuple

    enc = summarizer.encode(text, summarizer.max_windows)
    bert_gates, inter_gates = summarizer.head_mask(mask_heads)
    with torch.inference_mode():
        vecs = summarizer.sentence_vectors(enc, bert_gates)[0]  # [1, S, D]
        inter = summarizer.layer_scores(vecs, inter_gates)[:, 0]  # [L2 + 1, S]
        layers = summarizer.bert_layer_vectors(enc)  # [L, S, D]
        raw = summarizer.score_vectors(layers, inter_gates)  # [L, S]
        found, tuned = load_lens(lens), None
        if found is not None and found[0].shape[:2] == (layers.shape[0], layers.shape[2]):
            A, b = (t.to(layers.device, layers.dtype) for t in found[:2])
            tuned = summarizer.score_vectors(torch.einsum("lsd,led->lse", layers, A) + b[:, None], inter_gates)
    as_scores = lambda rows: [list(sentence_score_tuple(enc, r.tolist())) for r in rows]  # noqa: E731
    summary = summarizer.summary(enc, inter[-1].tolist())
    return {"sentences": list(enc.sentences), "selected": list(summary.selected), "scores": list(summary.scores),
            "inter": as_scores(inter), "bert_raw": as_scores(raw), "bert_tuned": None if tuned is None else as_scores(tuned),
            "lens": {k: (json.loads(v) if k.startswith("r2") else v) for k, v in (found[2] if found else {}).items()}}


def lens_r2(summarizer: Summarizer, documents: list[str], lens: Path = LENS) -> dict:
    """The shipped tuned lens's R² per BERT layer (how much of the top layer's sentence vectors each
    layer's map explains) on ``documents``, out of sample when they are not the lens's own."""
    from training.lens import r_squared, vectors

    found = load_lens(lens)
    if found is None:
        raise ValueError(f"no tuned lens at {lens}")
    v = vectors(summarizer, documents)  # [L, N, D]
    if found[0].shape[:2] != (v.shape[0], v.shape[2]):
        raise ValueError("the tuned lens is not of this model's layers")
    return {"documents": len(documents), "sentences": int(v.shape[1]),
            "r2": [round(x, 4) for x in r_squared(found[0], found[1], v)],
            "r2_validation": json.loads(found[2].get("r2_validation", "null")), "fit": found[2].get("fitted_on")}


# ------------------------------------------------------------------ command line (python -m analysis lens)

def add_arguments(parser) -> None:
    parser.add_argument("--r2", action="store_true",
                        help="the tuned lens's R² per layer on the file's documents (a JSONL: out of sample)")
    parser.add_argument("--split", help="with a JSONL: only its rows of this \"split\" (e.g. test)")
    parser.add_argument("--limit", type=int, help="with a JSONL: at most this many documents")


def cli(args, summarizer: Summarizer) -> dict:
    """Every sentence's score after every stage (sentences, layers 0-based), or with ``--r2`` the
    tuned lens's R² on the file's documents."""
    from analysis.attribution import read_documents

    documents = read_documents(args.file, args.limit, args.split)
    if args.r2:
        return {"lens_r2": lens_r2(summarizer, documents)}
    if len(documents) != 1:
        raise ValueError("the lens reads one document (a text file); --r2 reads many")
    return {"lens": layer_scores(summarizer, documents[0])}
