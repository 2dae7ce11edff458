#!/usr/bin/env bash
# Issue 51, part 1, in one run of at most 9 minutes on a lent GPU machine (docs/gpu.md): the CUDA
# tests, the test suite with the model on CUDA, benchmarks.gpu with a torch.profiler trace of the
# calls the targets name, and benchmarks.precision. Each step has its own time limit, so a slow
# one cannot eat the rest; every result goes under OUT (steps.tsv: step, exit status, seconds).
#
#   bash scripts/gpu_run.sh OUT [DATA]             # on the GPU machine (DATA: cnndm_val.jsonl.gz's folder)
#   DRY=1 bash scripts/gpu_run.sh /tmp/gpu_dry     # here, on the CPU, tiny sizes and short limits
#
# The GPU image has torch (CUDA), transformers, tokenizers, safetensors, pandas and pytest; the
# rest of requirements-dev.txt comes as wheels (docs/gpu.md: carrying them), installed first with
#   pip install --no-index --find-links WHEELS -r requirements-dev.txt
set -u
OUT=${1:?usage: gpu_run.sh OUT [DATA]}
DATA=${2:-../shared/data}
mkdir -p "$OUT"
: > "$OUT/steps.tsv"
if [ -n "${DRY:-}" ]; then  # the plumbing, checked on the CPU: tiny sizes, every limit 25 s
  DEV=cpu RUNS=1 DOCS=4 N=3 MODELS=mini SHORT=25
else
  DEV=cuda RUNS=5 DOCS=200 N=200 MODELS="mini base" SHORT=
fi

step() {  # NAME SECONDS COMMAND…: its output in OUT/NAME.log, a row in OUT/steps.tsv
  local name=$1 secs=${SHORT:-$2} t0
  shift 2
  t0=$(date +%s)
  timeout --kill-after=5 "$secs" "$@" > "$OUT/$name.log" 2>&1
  printf '%s\t%s\t%s\n' "$name" "$?" "$(( $(date +%s) - t0 ))" | tee -a "$OUT/steps.tsv"
}

step device 20 python -c "
import json, sys, torch
d = {'torch': torch.__version__, 'cuda': torch.cuda.is_available()}
if d['cuda']:
    p = torch.cuda.get_device_properties(0)
    d |= {'name': p.name, 'memory_gb': round(p.total_memory / 2**30, 1), 'bf16': torch.cuda.is_bf16_supported()}
json.dump(d, open(sys.argv[1], 'w'), indent=1); print(d)" "$OUT/device.json"
# every test marked cuda, against the CPU (the CPU twin with DRY: MICROSCOPE_TEST_DEVICE=cpu)
step cuda_tests 100 env MICROSCOPE_TEST_DEVICE=$DEV python -m pytest -q -p no:cacheprovider -m cuda \
  --junitxml "$OUT/cuda_tests.xml"
# the fast tier, then the slow non-browser tests: the model loads on CUDA wherever there is one
step fast_tier 170 python -m pytest -q -p no:cacheprovider --durations=15 --junitxml "$OUT/fast_tier.xml"
step slow_tests 90 python -m pytest -q -p no:cacheprovider -m "slow and not browser and not faults and not cuda" \
  --durations=15 --junitxml "$OUT/slow_tests.xml"
step bench_gpu 110 python -m benchmarks.gpu --runs $RUNS --corpus-docs $DOCS --models $MODELS --json "$OUT/gpu.json"
# where a target is missed, what the call spent its time on (chrome traces, open in Perfetto)
step profile 30 python - "$OUT" "$DEV" <<'EOF'
import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

from analysis import heads as AH
from model.summarizer import Summarizer

out, device = Path(sys.argv[1]), sys.argv[2]
s = Summarizer.load(device=device)
text = (Path("examples") / "bbc_call_centres.txt").read_text(encoding="utf-8")
s.summarize(text)  # warm-up
activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
for name, call in {"summarize": lambda: s.summarize(text),
                   "ablation": lambda: AH.importance_ablation(s, text, 3, True)}.items():
    with profile(activities=activities) as prof:
        call()
        if device == "cuda":
            torch.cuda.synchronize()
    prof.export_chrome_trace(str(out / f"profile_{name}.json"))
    print(name, prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12))
EOF
step precision 40 python -m benchmarks.precision --n $N --device $DEV --data "$DATA" --json "$OUT/precision.json"
echo "results in $OUT"
