"""The house: which room may import which (checked on every import in every file, including
imports inside functions), what a fresh interpreter loads for model/ and viz/, the app shell
(ui/) without import circles and with a class store that needs no Streamlit, only model/ naming
the network's modules, and no file of ui/ over 400 lines."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("model", "training", "analysis", "viz", "studies", "ui", "pages")
# room → the rooms it may import (the arrows all point down: no circle is possible)
ALLOWED = {"model": set(), "training": {"model"}, "analysis": {"model", "training"}, "viz": set(),
           "studies": {"model", "training", "analysis", "viz"},
           "ui": {"model", "training", "analysis", "viz"},
           "pages": {"model", "training", "analysis", "viz", "ui", "pages"}}


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


def ui_imports(path: Path) -> set[str]:
    """The ui modules a file of ui/ imports (absolute imports, also inside functions)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ui"):
            base = node.module
            out |= {f"{base}.{a.name}" if (ROOT / Path(*base.split("."), f"{a.name}.py")).exists() else base
                    for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("ui.")}
    return out - {"ui"}


def ui_graph() -> dict[str, set[str]]:
    mods = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
            for p in (ROOT / "ui").rglob("*.py")}
    return {m: {i for i in ui_imports(p) if i in mods and i != m} for m, p in mods.items()}


def test_the_app_shell_has_no_import_circle_and_its_files_stay_small():
    graph = ui_graph()
    assert {"ui.runs", "ui.figures", "ui.classroom.store", "ui.classroom.lead"} <= set(graph)
    seen, done = set(), set()

    def visit(m, path):
        assert m not in path, "import circle: " + " → ".join(path[path.index(m):] + [m])
        if m in done:
            return
        for n in sorted(graph[m]):
            visit(n, path + [m])
        done.add(m)

    for m in sorted(graph):
        visit(m, [])
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "ui").rglob("*.py")
            if (n := p.read_text(encoding="utf-8").count("\n")) > 400}
    assert not long, long


def test_the_class_store_and_lessons_need_no_streamlit():
    """ui/classroom's store part (the class in the store, the throttle, the version files, the
    answers), its lessons, questions and lesson checker, and the stories' store part import no
    Streamlit, directly or through the ui modules they import."""
    graph = ui_graph()
    todo, reached = ["ui.classroom.store", "ui.tour", "ui.questions", "ui.classroom.answers",
                     "ui.classroom.check", "ui.stories"], set()
    while todo:
        m = todo.pop()
        if m not in reached:
            reached.add(m)
            todo += graph[m]
    for m in reached:
        path = ROOT / Path(*m.split(".")).with_suffix(".py")
        assert "streamlit" not in imports(path), f"{m} imports Streamlit"


def test_only_model_names_the_networks_modules():
    """Everything outside model/ (and training/, which writes the checkpoints under their module
    names) reaches the network through named hook points (model/hooks.py): no hook registered and
    no module path such as ``encoder.layer[…]`` anywhere else."""
    words = ("register_forward", "encoder.layer", "transformer_inter", ".self_attn", "attention.self",
             "embeddings.")
    for room in ("analysis", "ui", "pages", "viz", "studies"):
        for path in sorted((ROOT / room).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            found = [w for w in words if w in text]
            assert not found, f"{path.relative_to(ROOT)} names {found}"


def test_the_view_and_the_tour_import_without_torch_or_plotly():
    """Issue 69: ui.view (the registry of controls), ui.tour and ui.stories (lessons and stories, pure
    data) load neither the model's nor the figures' libraries (it took 4.9 s)."""
    loaded = loaded_by(["ui.view", "ui.tour", "ui.questions", "ui.stories"])
    assert "ui" in loaded and not loaded & {"torch", "plotly", "streamlit", "pandas"}
