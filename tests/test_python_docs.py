"""docs/python.md (issue 61, 73): its code runs as written, from another folder than the project's, and
``pip install -e .`` installs the rooms as packages that import from anywhere."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def test_the_quick_starts_code_runs_in_under_30_lines(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "python.md").read_text(encoding="utf-8"), re.S)
    code = "\n".join(blocks)
    assert blocks and len(code.strip().splitlines()) < 30
    script = tmp_path / "quick_start.py"
    show = "import plotly.graph_objects as go\ngo.Figure.show = lambda self, *a, **k: print(self.to_json()[:80])\n"
    script.write_text(show + code, encoding="utf-8")  # (no notebook here: show prints the figure's JSON)
    elsewhere = tmp_path / "notebooks"
    elsewhere.mkdir()
    done = subprocess.run([sys.executable, str(script)], cwd=elsewhere, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Sentence" in done.stdout and '"data"' in done.stdout  # the verdict, and the figure shown (as JSON)
    assert "(6, 1, 12, " in done.stdout  # the cache's attention, stacked over BERT's 6 layers


def test_pip_install_e_installs_the_rooms_as_packages(tmp_path):
    """The editable install (into a prefix of its own, so this environment stays as it is) makes
    the rooms importable from any folder, the shipped weights with them; its dependencies are
    requirements.txt's."""
    prefix = tmp_path / "prefix"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "-e",
                           str(ROOT), "--prefix", str(prefix)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    site = next(prefix.glob("lib/python*/site-packages"))
    probe = subprocess.run([sys.executable, "-c", f"import site; site.addsitedir({str(site)!r}); "
                            "import model.summarizer, analysis.contrast, viz.attention, ui.view, training.metrics; "
                            "from pathlib import Path; import model; print(Path(model.__file__).parent)"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": ""})
    assert probe.returncode == 0 and Path(probe.stdout.strip()) == ROOT / "model", probe.stderr[-1000:]
    meta = next(site.glob("attention_microscope-*.dist-info")) / "METADATA"
    assert "Requires-Dist: torch==2.13.0" in meta.read_text() and "Requires-Dist: rouge-score" in meta.read_text()
