"""Lessons: TOML files in lessons/ (title, document (an example) or document_text, k, [[steps]]
with a page, a view, a text, a question, optionally a document of its own (document or
document_text), and, for a question that takes answers, [steps.answer]), stepped alone or for a
class (ui.classroom.steps). No Streamlit. docs/classes.md describes the format; ``problems`` says what
is wrong with a file (also from the command line: ui/classroom/check.py)."""
from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ui.classroom.questions import Ask, from_toml, table_problems
from ui import view as V
from viz.common import without_images as text_only

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ROOT / "lessons"
MAX_LESSON_BYTES = 200_000


@dataclass(frozen=True)
class Step:
    page: str          # a page's URL path ("" = Summary)
    view: dict         # session keys → values (layers and heads 0-based here, 1-based in the file)
    text: str          # what to look at
    question: str
    ask: Ask | None = None  # what answer the question takes (None: a question to think or talk about)
    document: str = ""       # the step's own document (an example's file stem), or
    document_text: str = ""  # … the document itself; neither: the lesson's


@dataclass(frozen=True)
class Lesson:
    name: str
    title: str
    document: str      # an example's file stem ("" when the lesson carries its own text)
    k: int
    steps: tuple[Step, ...]
    text: str = ""     # the document itself (document_text: a pasted document, made in the app)

    def document_of(self, n: int) -> tuple[str, str]:
        """Step ``n``'s document: (an example's file stem, "") or ("", the text itself); a step
        without one of its own plays the lesson's."""
        s = self.steps[n]
        return (s.document, s.document_text) if s.document or s.document_text else (self.document, self.text)


def parse(text: str, name: str) -> Lesson:
    """A lesson from its TOML text (checked first: ``problems``); its views through ui.view (numbers
    from 1); its texts without images."""
    d = tomllib.loads(text)
    steps = tuple(Step(s.get("page", ""), V.from_toml(s.get("view", {}))[0], text_only(s["text"]),
                       text_only(s.get("question", "")), from_toml(s["answer"]) if "answer" in s else None,
                       s.get("document", ""), s.get("document_text", ""))
                  for s in d["steps"])
    return Lesson(name, text_only(d["title"]), d.get("document", ""), int(d.get("k", 3)), steps,
                  d.get("document_text", ""))


def load_lesson(path: Path) -> Lesson:
    return _parsed(path, path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _parsed(path: Path, mtime: int) -> Lesson:  # (every run of every page lists the lessons: parsed once a file)
    return parse(path.read_text(encoding="utf-8"), path.stem)


def lessons() -> dict[str, Lesson]:
    return {p.stem: load_lesson(p) for p in sorted(LESSONS.glob("*.toml"))}


def script_of(page: str) -> str:
    return f"pages/{page or 'summary'}.py"


def documents() -> set[str]:
    return {p.stem for p in (ROOT / "examples").iterdir() if p.suffix in (".txt", ".md")}


@functools.lru_cache(maxsize=1)
def model_shapes() -> dict[str, tuple[int, int]]:
    """(layers, heads) of BERT and of the sentence encoder of the model lessons run on (the shipped
    weights on the embedded backbone), read from their files: no model is built."""
    from safetensors import safe_open

    from model.load import backbone_config, default_backbone_dir

    cfg = backbone_config(default_backbone_dir())
    shipped = sorted((ROOT / "model" / "weights").glob("*.safetensors"))
    meta = {}
    if shipped:
        with safe_open(str(shipped[0]), "np") as f:
            meta = f.metadata() or {}
    return {"bert": (cfg.num_hidden_layers, cfg.num_attention_heads),
            "inter": (int(meta.get("inter_layers", 2)), int(meta.get("inter_heads", 8)))}


def problems(text: str, shapes: dict | None = None) -> list[tuple[int, str]]:
    """What is wrong with a lesson file, as (line, problem), line from 1 (0: the file as a whole).
    Empty: it loads and every step opens. Layers and heads are checked against ``shapes`` (default:
    the model lessons run on)."""
    shapes = shapes or model_shapes()
    try:
        d = tomllib.loads(text)
    except RecursionError:  # a crafted nesting (arrays in arrays …): one sentence, not the parser's crash
        return [(0, "it is nested too deeply to be a lesson")]
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"line (\d+)", str(e))
        line = int(m.group(1)) if m else len(text.splitlines()) if "end of document" in str(e) else 0
        return [(line, f"not valid TOML: {e}")]
    lines = text.splitlines()
    heads = [i + 1 for i, line in enumerate(lines) if re.match(r"\s*\[\[\s*steps\s*\]\]", line)]

    def line_of(key: str, n: int | None = None, table: str | None = None) -> int:
        """The line of ``key`` (in step n, in its [steps.TABLE] if given), else of its step, else 0."""
        start = heads[n] if n is not None and n < len(heads) else 1
        end = heads[n + 1] if n is not None and n + 1 < len(heads) else len(lines) + 1
        inside = table is None
        for i in range(start, end):
            if table is not None and re.match(rf"\s*\[\s*steps\.{table}\s*\]", lines[i - 1]):
                inside = True
            if inside and re.match(rf"\s*{re.escape(key)}\s*=", lines[i - 1]):
                return i
        return start if n is not None else 0

    def document_problems(t: dict, n: int | None = None) -> list[tuple[int, str]]:
        """The lesson's document (a step's own, when ``n`` is given: optional)."""
        where = "" if n is None else f"step {n + 1}: "
        if "document" in t and "document_text" in t:
            return [(line_of("document", n), where + "a document (an example's name) or a document_text (the document "
                                                     "itself), not both")]
        if "document" not in t and "document_text" not in t:
            return [] if n is not None else [(0, "the lesson needs a document (an example's name) or a document_text "
                                                 "(the document itself)")]
        if "document_text" in t and (not isinstance(t["document_text"], str) or not t["document_text"].strip()):
            return [(line_of("document_text", n), where + "document_text must be the document itself (a text)")]
        if "document" in t and (not isinstance(t["document"], str) or t["document"] not in documents()):
            return [(line_of("document", n), where + f"document {t['document']!r} is not one of the examples "
                                                     f"({', '.join(sorted(documents()))})")]
        return []

    out = []
    if not isinstance(d.get("title"), str) or not d["title"].strip():
        out.append((line_of("title"), "the lesson needs a title (a text)"))
    out += document_problems(d)
    if not isinstance(d.get("k", 3), int) or not 1 <= d.get("k", 3) <= 10:
        out.append((line_of("k"), "k must be a whole number from 1 to 10"))
    steps = d.get("steps")
    if not isinstance(steps, list) or not steps:
        return out + [(0, "the lesson needs at least one [[steps]]")]
    pages = {p.stem for p in (ROOT / "pages").glob("*.py")}
    for n, s in enumerate(steps):
        where = f"step {n + 1}: "
        if not isinstance(s.get("text"), str) or not s["text"].strip():
            out.append((line_of("text", n), where + "it needs a text (what to look at)"))
        if not isinstance(s.get("page", ""), str) or (s.get("page") or "summary") not in pages:
            out.append((line_of("page", n), where + f"page {s.get('page')!r} is not a page of the app "
                                                    f"(\"\" for Summary, or one of {', '.join(sorted(pages - {'summary'}))})"))
        if isinstance(s.get("view"), dict):
            pickers, wrong = V.from_toml(s["view"])
            out += [(line_of(key, n, "view"), where + problem) for key, problem in wrong + V.beyond(pickers, shapes)]
        elif "view" in s:
            out.append((line_of("view", n), where + "view must be a table: [steps.view]"))
        out += document_problems(s, n)
        unknown = set(s) - {"page", "text", "question", "view", "answer", "document", "document_text"}
        out += [(line_of(k, n), where + f"unknown key {k!r}") for k in sorted(unknown)]
        if "answer" not in s:
            continue
        if not isinstance(s["answer"], dict):
            out.append((line_of("answer", n), where + "answer must be a table: [steps.answer]"))
            continue
        if not isinstance(s.get("question"), str) or not s["question"].strip():
            out.append((line_of("answer", n, "answer"), where + "a step that takes answers needs a question"))
        out += [(line_of(key, n, "answer") if key else line_of("kind", n, "answer"), where + problem)
                for key, problem in table_problems(s["answer"], shapes)]
        if s["answer"].get("kind") == "sentences" and s.get("page", "") != "":
            out.append((line_of("page", n), where + "a sentences question belongs on the Summary page (page = \"\"), "
                                                    "where the model's choice is hidden until the reveal"))
    return sorted(out)
