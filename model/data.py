"""Datasets for training and evaluation: reading, sentence labels, encoding, and the cache of
frozen lower-layer hidden states.

Splits (fixed, documented in model/weights/README.md). The files are ordered by source
(cnndm_train: ~90% CNN in its first 20k lines, only Daily Mail after; cnndm_val: CNN only
in its first 2,000 lines), so every split is taken through a seeded permutation:
  CNN/DM train  = cnndm_train.jsonl.gz in the order ``permutation(seed 0)``, first ``n``;
  CNN/DM valid  = cnndm_val.jsonl.gz, ``permutation(seed 0)[:2000]`` (model selection);
  CNN/DM test   = cnndm_val.jsonl.gz, ``permutation(seed 0)[2000:]`` (2,365 documents, held
                  out: never trained on nor used for model selection);
  BBC test      = bbc_news_summary.jsonl.gz ``split == "test"`` (221).

Every document is split with ``model.text.split_sentences`` (the app's splitter), also the
lowercased PTB-tokenized CNN/DM articles, and encoded with ``Summarizer.encode``.
"""
from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .oracle import greedy_selection, verbatim_labels
from .text import split_sentences

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data"
VALID_END = 2000  # cnndm_val[:2000] = validation, cnndm_val[2000:] = held-out test


@dataclass
class Doc:
    text: str              # the document as the app would receive it
    sentences: list[str]   # split_sentences(text), as text
    reference: list[str]   # reference summary sentences (ROUGE-Lsum: one per line)
    labels: list[int]      # 0/1 per sentence (greedy oracle or verbatim match)


def read_jsonl(path: str | Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def sentences_of(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


def split_order(n: int) -> np.ndarray:
    """The fixed document order of a CNN/DM file of n lines (seeded, independent of --seed)."""
    return np.random.RandomState(0).permutation(n)


def cnndm_docs(data_dir: str | Path, split: str, start: int = 0, stop: int | None = None,
               k: int = 3) -> list[Doc]:
    """CNN/DM ``split`` in {"train", "val"}: documents ``split_order[start:stop]``, greedy-oracle
    labels (k sentences at most)."""
    rows = read_jsonl(Path(data_dir) / f"cnndm_{split}.jsonl.gz")
    docs = []
    for j in split_order(len(rows))[start:stop]:
        r = rows[j]
        sents = sentences_of(r["article"])
        sel = set(greedy_selection(sents, r["highlights"], k))
        docs.append(Doc(r["article"], sents, list(r["highlights"]),
                        [int(i in sel) for i in range(len(sents))]))
    return docs


def bbc_docs(data_dir: str | Path, split: str = "test") -> list[Doc]:
    """BBC News Summary ``split`` with verbatim labels; the reference = the labelled sentences."""
    docs = []
    for r in read_jsonl(Path(data_dir) / "bbc_news_summary.jsonl.gz"):
        if r["split"] != split:
            continue
        sents = sentences_of(r["article"])
        labels = verbatim_labels(sents, r["summary"])
        docs.append(Doc(r["article"], sents, [s.strip() for s, y in zip(sents, labels) if y],
                        labels))
    return docs


def named_split(name: str, data_dir: str | Path, n: int | None = None) -> list[Doc]:
    """``cnndm-train`` / ``cnndm-valid`` / ``cnndm-test`` / ``bbc-test`` (optionally first n)."""
    if name == "cnndm-train":
        return cnndm_docs(data_dir, "train", 0, n)
    if name == "cnndm-valid":
        return cnndm_docs(data_dir, "val", 0, min(n, VALID_END) if n else VALID_END)
    if name == "cnndm-test":
        return cnndm_docs(data_dir, "val", VALID_END, VALID_END + n if n else None)
    if name.startswith("bbc-"):
        return bbc_docs(data_dir, name[4:])[:n]
    raise ValueError(f"unknown split {name!r}")


# ---------------------------------------------------------------- cache of frozen lower layers

CACHE_DIR = Path("/tmp/bertsum_cache")


@dataclass
class Cached:
    """One document after the frozen lower layers, ready for the trainable top."""

    doc: int                  # index into the split
    hidden: torch.Tensor      # [T, D] float32, output of bert layers[:layer]
    cls_positions: torch.Tensor  # [S] int64
    labels: torch.Tensor      # [S] float32, label of each fed sentence
    input_sentences: list[int]  # [S] index of each fed sentence in Doc.sentences


def encode_labels(summarizer, doc: Doc):
    """Summarizer.encode(doc.text) and the 0/1 label of each fed sentence."""
    enc = summarizer.encode(doc.text)
    assert len(enc.sentences) == len(doc.sentences), "encode split differs from data split"
    return enc, [doc.labels[i] for i in enc.input_sentences]


@torch.inference_mode()
def lower_layers(bert, enc, layer: int) -> torch.Tensor:
    """Embeddings + BERT layers[:layer] of one encoded document → [T, D] (eval mode)."""
    from .bert import extended_mask

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


def shard_path(cache_dir: Path, split: str, layer: int, i: int) -> Path:
    return Path(cache_dir) / f"{split}_L{layer}" / f"shard_{i:04d}"


def main(argv=None):
    """python -m model.data --split cnndm-train --n 12000 --layer 6 [--worker 0 --workers 2]"""
    import argparse
    import sys
    import time

    from tqdm import tqdm

    from .train import fresh_summarizer

    ap = argparse.ArgumentParser(description="cache BERT layers[:layer] outputs of a split")
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--split", default="cnndm-train")
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--layer", type=int, default=6)
    ap.add_argument("--shard-size", type=int, default=500)
    ap.add_argument("--worker", type=int, default=0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cache", default=str(CACHE_DIR))
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    docs = named_split(args.split, args.data, args.n)
    print(f"{len(docs)} docs read and labelled in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    summarizer = fresh_summarizer()
    n_shards = (len(docs) + args.shard_size - 1) // args.shard_size
    for i in tqdm(range(args.worker, n_shards, args.workers), desc=f"cache {args.split}", file=sys.stderr):
        path = shard_path(Path(args.cache), args.split, args.layer, i)
        if path.with_suffix(".json").exists():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        lo = i * args.shard_size
        write_shard(path, summarizer, docs[lo: lo + args.shard_size], lo, args.layer)
    print(f"done in {time.perf_counter() - t0:.0f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
