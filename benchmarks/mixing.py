"""What the model used (analysis/mixing.py), timed against a plain forward, side by side.

    python -m benchmarks.mixing [--runs 5] [--devices cpu [cuda]] [--no-base] [--random-minilm] [--json OUT]

Per model (the shipped MiniLM; the paper's BERT-base shape from a PreSumm checkpoint of random
weights, benchmarks.common.bert_base_fixture) and device, on a ~512-token document, medians of
alternating runs: a plain forward (``summarize``), the capture the measures need, norm-based
contributions of every layer and ALTI of every layer (+ composition and the sentence encoder), each
given that capture, the whole ``mixing`` call (capture included), value zeroing of the last BERT layer (float64) and one scoreboard; each as
a multiple of the forward. Memory: the extra peak of ``mixing`` over the forward's, each measured in a
fresh child process (CPU: VmHWM reset before the step; CUDA: max_memory_allocated).
``--random-minilm``: a MiniLM-shaped model of random weights instead of the shipped one (speed
depends on the shape only; for a machine without the embedded backbone's weights).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from analysis import mixing as M

from analysis import decomposition as DC

from analysis import faithfulness as FA
from benchmarks.common import bert_base_fixture
from benchmarks.model import document
from model.summarizer import Summarizer

ROOT = Path(__file__).resolve().parents[1]


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(fn, device: str) -> float:
    sync(device)
    t = time.perf_counter()
    fn()
    sync(device)
    return time.perf_counter() - t


def steps(s: Summarizer, text: str) -> dict:
    """The timed steps. ``norms`` and ``alti`` start from one capture made beforehand (what they
    add to it); ``capture`` is timed on its own, so a view's total is capture + the step."""
    enc = s.encode(text, s.max_windows)
    first = s.summarize(text).selected[0]
    cap = M.capture(s, enc)

    def norms_all():
        with torch.inference_mode():
            for l in range(len(cap.alpha)):
                DC.norms(cap.alpha[l], M.bert_values(s, cap, l))

    def alti_all():
        with torch.inference_mode():
            c = None
            for l in range(len(cap.alpha)):
                a = DC.alti(M.bert_block(s, cap, l)[1])
                c = a if c is None else a @ c
            for l in range(len(cap.inter_alpha)):
                DC.alti(M.inter_block(s, cap, l)[1])

    L = s.model.bert.config.num_hidden_layers
    return {"forward": lambda: s.summarize(text), "capture": lambda: M.capture(s, enc),
            "norms": norms_all, "alti": alti_all, "mixing": lambda: M.mixing(s, enc),
            "value_zeroing_last_layer": lambda: M.value_zeroing(s, enc, L - 1),
            "scoreboard": lambda: FA.faithfulness(s, enc, first, orders=10)}


def peak_mb(spec: str, device: str, step: str) -> float:
    """A fresh process loads the model and warms up; then the peak of ``step`` over the memory
    before it (CPU: VmHWM reset through /proc/self/clear_refs, minus VmRSS; CUDA: max allocated)."""
    code = "import sys;from benchmarks.mixing import child;child(sys.argv[1],sys.argv[2],sys.argv[3])"
    out = subprocess.run([sys.executable, "-c", code, spec, device, step], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def load(spec: str, device: str) -> Summarizer:
    if spec == "minilm":
        return Summarizer.load(device=device)
    if spec == "random-minilm":
        from benchmarks.presumm_fixture import write

        folder = Path(tempfile.gettempdir()) / "microscope_random_minilm"
        if not (folder / "bertext_cnndm_transformer.pt").is_file():
            write(folder, layers=6, heads=12, hidden=384, ff=1536, inter_ff=1536)
        return Summarizer.load(folder / "bert-base-uncased", folder / "bertext_cnndm_transformer.pt", device=device)
    return Summarizer.load(*bert_base_fixture(), device=device)


def child(spec: str, device: str, step: str) -> None:
    s = load(spec, device)
    text = document(s, 512)
    s.summarize(text)
    fn = steps(s, text)[step]
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
        fn()
        print(torch.cuda.max_memory_allocated() / 2 ** 20)
        return
    status = lambda key: next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith(key))  # noqa: E731,E741
    with open("/proc/self/clear_refs", "w") as f:  # resets VmHWM: the peak of this step, not of loading
        f.write("5")
    before = status("VmRSS:")
    fn()
    print((status("VmHWM:") - before) / 1024)


def measure(spec: str, device: str, runs: int, memory: bool) -> dict:
    s = load(spec, device)
    text = document(s, 512)
    fns = steps(s, text)
    for fn in fns.values():  # warm-up
        fn()
    times = {k: [] for k in fns}
    for _ in range(runs):
        for k, fn in fns.items():
            if k in ("value_zeroing_last_layer", "scoreboard") and len(times[k]) >= 1:
                continue  # seconds each: one run is enough
            times[k].append(timed(fn, device))
    med = {k: statistics.median(v) * 1000 for k, v in times.items()}
    row = {"tokens": len(s.encode(text, 1).tokens), "device": str(s.device),
           "ms": {k: round(v, 1) for k, v in med.items()},
           "x_forward": {k: round(v / med["forward"], 2) for k, v in med.items() if k != "forward"}}
    if memory:
        base, mix = peak_mb(spec, device, "forward"), peak_mb(spec, device, "mixing")
        row["peak_mb"] = {"forward": round(base, 1), "mixing": round(mix, 1), "extra": round(mix - base, 1)}
    return row


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--devices", nargs="+", default=["cpu"])
    p.add_argument("--no-base", action="store_true", help="skip the BERT-base model")
    p.add_argument("--random-minilm", action="store_true", help="MiniLM's shape with random weights")
    p.add_argument("--no-memory", dest="memory", action="store_false")
    p.add_argument("--json", default=str(ROOT / "benchmarks/results/mixing.json"))
    args = p.parse_args(argv)
    models = ["random-minilm" if args.random_minilm else "minilm"] + ([] if args.no_base else ["bert-base"])
    rows = []
    for spec in models:
        for device in args.devices:
            rows.append({"model": spec, **measure(spec, device, args.runs, args.memory)})
            r = rows[-1]
            print(f"{spec:14} {r['device']:6} {r['tokens']:>4} tokens  forward {r['ms']['forward']:8.1f} ms  "
                  + "  ".join(f"{k} ×{v}" for k, v in r["x_forward"].items())
                  + (f"  extra peak {r['peak_mb']['extra']} MB" if "peak_mb" in r else ""), flush=True)
    result = {"runs": args.runs, "torch_threads": torch.get_num_threads(), "rows": rows}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
