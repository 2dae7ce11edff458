"""The house: which room may import which (checked on every import in every file, including
imports inside functions), and what a fresh interpreter loads for model/ and viz/."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("model", "training", "analysis", "viz", "pages")
# room → the rooms it may import (the arrows all point down: no circle is possible)
ALLOWED = {"model": set(), "training": {"model"}, "analysis": {"model", "training"}, "viz": set(),
           "pages": {"model", "training", "analysis", "viz", "pages"}}


def imports(path: Path) -> set[str]:
    """Top-level package of every absolute import in the file; relative imports stay in the room."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


@pytest.mark.parametrize("room", ROOMS)
def test_rooms_import_only_downwards(room):
    for path in sorted((ROOT / room).rglob("*.py")):
        ours = imports(path) & set(ROOMS) - {room}
        assert ours <= ALLOWED[room], f"{path.relative_to(ROOT)} imports {sorted(ours - ALLOWED[room])}"


def loaded_by(modules: list[str]) -> set[str]:
    code = f"import importlib, json, sys\nfor m in {modules!r}: importlib.import_module(m)\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return {m.split(".")[0] for m in json.loads(out)}


def modules_of(room: str) -> list[str]:
    return [".".join(p.relative_to(ROOT).with_suffix("").parts) for p in sorted((ROOT / room).rglob("*.py"))
            if p.name != "__main__.py"]


def test_model_loads_no_app_training_or_plotting_code():
    loaded = loaded_by(modules_of("model"))
    assert "torch" in loaded  # the check itself works
    assert not loaded & {"training", "analysis", "viz", "pages", "streamlit", "plotly", "rouge_score"}


def test_viz_needs_no_torch():
    loaded = loaded_by(modules_of("viz"))
    assert "plotly" in loaded and "torch" not in loaded and "model" not in loaded
