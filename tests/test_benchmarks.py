"""``python -m benchmarks --smoke``: every benchmark at its smallest size still runs (issue 58: the
browser benchmark had broken on a selector and every browser figure went unmeasured)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.browser]


def test_every_benchmark_runs_at_its_smallest_size(tmp_path):
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--smoke", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    parts = json.loads(done.stdout.strip().splitlines()[-1])
    ran = {"model", "figures", "browser", "browser_profile", "explain", "heads", "what_if", "mixing", "long_document",
           "workshop", "class"}
    assert {k for k, v in parts.items() if v == "ok"} >= ran, parts
    assert all((tmp_path / f"{name}.json").exists() for name in ran)
    # the first heatmap split by the server's own clock (benchmarks/server_clock): the click reached it, then it
    # sent the chart, then the page drew it
    split = json.loads((tmp_path / "browser.json").read_text())["first_heatmap_split"]
    assert 0 < split["request_in_s"] < split["chart_out_s"] and split["browser_s"] > 0, split
