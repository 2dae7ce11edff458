"""CPU against CUDA, side by side, for everything the app and the command lines compute.

    python -m benchmarks.gpu [--runs 3] [--models mini base] [--corpus-docs 200] [--json OUT]

Per model (the shipped MiniLM; the paper's BERT-base shape, random weights,
benchmarks.common.bert_base_fixture) and device, on a ~512-token document (benchmarks.model.document),
the median milliseconds of ``--runs`` runs after one warm-up: summarize, trace, explain, gradient
head importance, the ablation of every head, mixing (norms + ALTI), value zeroing of one layer
and of every BERT layer, the scoreboard, activation patching; and corpus documents per second
(summaries + head statistics: the one-document path, and on a GPU the batched path the corpus
workers use there). The targets of issue 39 (an H100-class GPU, BERT-base, 512 tokens) are
printed beside the CUDA column. Where there is no CUDA GPU it says so and prints the CPU column
alone. Writes benchmarks/results/gpu.json (or ``--json``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import torch

from benchmarks.common import bert_base_fixture
from benchmarks.model import document
from model.summarizer import Summarizer

RESULTS = Path(__file__).resolve().parent / "results"
TARGETS_MS = {"summarize": 10, "ablation": 500, "value_zeroing_all": 1500, "scoreboard": 300}  # CUDA, BERT-base
TARGET_DOCS_PER_S = {"mini": 100, "base": 30}  # one H100-class GPU, summaries + head statistics


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(fn, device: str, runs: int) -> float:
    fn()  # warm-up: kernels, caches, allocator
    times = []
    for _ in range(runs):
        sync(device)
        t = time.perf_counter()
        fn()
        sync(device)
        times.append(time.perf_counter() - t)
    return round(1000 * statistics.median(times), 1)


def rows(s: Summarizer, text: str) -> dict:
    """What to time: name → a call."""
    from analysis import edits as ED
    from analysis import patching as P
    from analysis import explain as E
    from analysis import heads as Hd
    from analysis import mixing as M
    from analysis import faithfulness as FA

    L = s.model.bert.config.num_hidden_layers
    first = s.summarize(text).selected[0]
    b = ED.apply_edits(text, ["move:1:end"], s)
    kept = next(i for i in range(1, len(ED.sentences(text))) if len(ED.sentences(text)[i].split()) >= 5)
    return {
        "summarize": lambda: s.summarize(text),
        "trace": lambda: s.trace(text),
        "explain": lambda: E.explain(s, text, 3, True),
        "importance_gradient": lambda: Hd.importance_gradient(s, text),
        "ablation": lambda: Hd.importance_ablation(s, text),
        "mixing": lambda: M.mixing(s, text),
        "value_zeroing_one": lambda: M.value_zeroing(s, text, L - 1),
        "value_zeroing_all": lambda: [M.value_zeroing(s, text, layer) for layer in range(L)],
        "scoreboard": lambda: FA.faithfulness(s, text, first),
        "patching": lambda: P.patch(s, text, b, kept),
    }


def corpus_rate(s: Summarizer, texts: list[str], batched: bool) -> float:
    """Documents per second, summaries + head statistics, in one process (no Ray: the worker's work)."""
    from analysis.corpus import summarize_batch, summarize_one

    docs = [{"id": str(i), "text": t} for i, t in enumerate(texts)]
    sync(str(s.device))
    t = time.perf_counter()
    if batched:
        for n in range(0, len(docs), 64):  # a unit of work: ~64 documents
            summarize_batch(s, docs[n:n + 64], 3, True, True)
    else:
        for d in docs:
            summarize_one(s, d, 3, True, True, False)
    sync(str(s.device))
    return round(len(docs) / (time.perf_counter() - t), 1)


def corpus_texts(n: int) -> list[str]:
    """``n`` news articles: the example corpus's inputs, repeated as needed."""
    path = Path(__file__).resolve().parents[1] / "examples" / "corpus" / "input.jsonl"
    texts = [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line]
    return (texts * (n // len(texts) + 1))[:n]


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--models", nargs="+", choices=["mini", "base"], default=["mini", "base"])
    p.add_argument("--corpus-docs", type=int, default=200)
    p.add_argument("--skip", nargs="*", default=[], help="rows to leave out (e.g. value_zeroing_all on a small CPU)")
    p.add_argument("--json", help="output file (default benchmarks/results/gpu.json)")
    args = p.parse_args(argv)
    cuda = torch.cuda.is_available()
    devices = ["cpu"] + (["cuda"] if cuda else [])
    out = {"cuda": cuda, "gpu": torch.cuda.get_device_name(0) if cuda else None, "cpu_threads": torch.get_num_threads(),
           "torch": torch.__version__, "models": {}}
    if not cuda:
        print("No CUDA GPU on this machine: the CPU column only.")
    texts = corpus_texts(args.corpus_docs)
    for name in args.models:
        spec = bert_base_fixture() if name == "base" else (None, None)
        res = {}
        for dev in devices:
            s = Summarizer.load(*spec, device=dev)
            text = document(s, 510)
            res[dev] = {row: timed(fn, dev, args.runs) for row, fn in rows(s, text).items() if row not in args.skip}
            res[dev]["tokens"] = len(s.encode(text, None).tokens)
            res[dev]["corpus_docs_per_s"] = corpus_rate(s, texts, batched=False)
            if dev == "cuda":
                res[dev]["corpus_docs_per_s_batched"] = corpus_rate(s, texts, batched=True)
            del s
        out["models"][name] = res
        print(f"\n{name} ({res['cpu']['tokens']} tokens), median ms of {args.runs} runs")
        print(f"{'':28}{'CPU':>10}" + (f"{'CUDA':>10}{'CPU/CUDA':>10}{'target':>9}" if cuda else ""))
        for row in [r for r in res["cpu"] if r != "tokens"]:
            line = f"{row:28}{res['cpu'][row]:>10}"
            if cuda:
                g = res["cuda"].get(row)
                ratio = round(res["cpu"][row] / g, 1) if g else None
                target = TARGETS_MS.get(row, "") if name == "base" and not row.startswith("corpus") else \
                    (f"≥{TARGET_DOCS_PER_S[name]}" if row.startswith("corpus") else "")
                line += f"{g:>10}{ratio if ratio else '':>10}{target:>9}"
            print(line)
        if cuda:
            print(f"{'corpus_docs_per_s_batched':28}{'':>10}{res['cuda']['corpus_docs_per_s_batched']:>10}"
                  f"{'':>10}{'≥' + str(TARGET_DOCS_PER_S[name]):>9}")
    path = Path(args.json) if args.json else RESULTS / "gpu.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"\nwrote {os.path.relpath(path)}")
    return out


if __name__ == "__main__":
    main()
