#!/bin/bash
# Server CPU-s per student flow with the README's own app command (.streamlit/config.toml applies),
# the file watcher as $1 (auto: Streamlit's default; none: the config's): 6 students of
# scripts/workshop.py --url, after one warm-up student, read from /proc around the run.
#   bash benchmarks/readme_cpu.sh auto; bash benchmarks/readme_cpu.sh none
cd "$(dirname "$0")/.."
PORT=$((8600 + RANDOM % 300))
STREAMLIT_SERVER_FILE_WATCHER_TYPE=$1 python -m streamlit run app.py --server.port $PORT --server.headless true > /tmp/readme_$1.log 2>&1 &
PID=$!
for i in $(seq 60); do curl -s localhost:$PORT/_stcore/health >/dev/null && break; sleep 1; done
python scripts/workshop.py --url http://127.0.0.1:$PORT --students 1 --same-example > /dev/null 2>&1   # warm: model, example cached
T0=$(awk '{print $14+$15}' /proc/$PID/stat)
python scripts/workshop.py --url http://127.0.0.1:$PORT --students 6 --same-example 2>&1 | grep -E "failed|^why|^layer"
sleep 5  # the sessions' watchers still run until they close
T1=$(awk '{print $14+$15}' /proc/$PID/stat)
echo "watcher=$1 server CPU per student: $(python -c "print(round(($T1-$T0)/100/6, 3))") s"
kill $PID; wait $PID 2>/dev/null
