"""What the shared store's latencies feel like in a class (issue 69 moved them here from the tests,
where they were wall-clock asserts): 30 students answering in the same second, each on its own
connection, until the teacher's count has all 30 (SQLite, then PostgreSQL); PostgreSQL stopped: how
long the first call takes to fail with one plain sentence, and the next calls of the run.

    python -m benchmarks.store

Targets (the teacher's panel reads the count every 2 s; a run must not hang on a dead store):
all answers counted ≤ 2 s; the first call after a stop fails ≤ 5 s, the next ≤ 0.1 s."""
from __future__ import annotations

import argparse
import socket
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.common import Postgres, pg_bin, write_json

TARGETS = {"answers_counted_s": 2.0, "first_call_down_s": 5.0, "next_call_down_s": 0.1}


def answers_at_once(where, n: int = 30, deadline_s: float = 60.0) -> tuple[float, str, str]:
    """n students, each on its own connection (as n sessions on several processes), sit, then answer
    in the same instant (student k: [k % 6, k % 12]) → (seconds from the start until the teacher's
    count has all n, the class's code, the step). A student's failure (a refused answer too) is
    raised; a count that never arrives, after ``deadline_s`` (tests/test_answers.py uses it as well)."""
    from ui.classroom import answers as A
    from ui.classroom import store as C
    from ui.store import Store

    store = Store(where)
    code = C.start(store, {}, leader="teacher")
    step = A.step_id({"lesson": "l", "step": 2})
    go, errors = threading.Barrier(n, timeout=deadline_s), []

    def student(k):
        s = Store(where)
        try:
            seat = f"{k:032x}"
            A.sit(s, code, seat)
            go.wait()
            if not A.give(s, code, step, seat, [k % 6, k % 12], None):
                raise RuntimeError(f"student {k}'s answer was refused")
        except Exception as e:  # noqa: BLE001  raised below, in the caller's thread
            errors.append(e)

    threads = [threading.Thread(target=student, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    while not errors and A.count(store, code, step) < n:
        if time.perf_counter() - t0 > deadline_s:
            raise TimeoutError(f"{A.count(store, code, step)} of {n} answers counted after {deadline_s:g} s")
        time.sleep(0.01)
    if errors:
        raise errors[0]
    return time.perf_counter() - t0, code, step


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", help="write the result here (default benchmarks/results/store.json)")
    args = p.parse_args(argv)
    from ui.store import Store, Unavailable

    result = {"answers_counted_s": {}}
    with tempfile.TemporaryDirectory() as tmp:
        result["answers_counted_s"]["sqlite"] = round(answers_at_once(Path(tmp) / "store.sqlite3")[0], 3)
    if pg_bin() is not None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with Postgres(port=port) as db:
            result["answers_counted_s"]["postgresql"] = round(answers_at_once(db.url)[0], 3)
            store = Store(db.url)
            store.put("id:bench", "kept")
            db.stop()
            for key in ("first_call_down_s", "next_call_down_s"):
                t = time.perf_counter()
                try:
                    store.get("id:bench")
                except Unavailable:
                    result[key] = round(time.perf_counter() - t, 3)
            db.start()
    worst = max(result["answers_counted_s"].values())
    for key, target in TARGETS.items():
        got = worst if key == "answers_counted_s" else result.get(key)
        print(f"{key:>20}: {got if got is not None else '— (no PostgreSQL)'}  (target ≤ {target})", flush=True)
    write_json("store", result, args.json)
    return result


if __name__ == "__main__":
    main()
