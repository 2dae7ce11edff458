"""The tour (issue 59): an ordered list of views with text, which a story and a lesson both are.
One module owns it; a class plays a tour and sits above it (ui.classroom), as do the story panel
(ui.story), presenting (ui.present) and homework. No Streamlit.

A tour has a title, a default document (an example's file stem, or the text itself), a summary
length k and steps; a step is a ui.view.View (its page, document, k, trigram blocking, weights,
window, chart and controls), the text the audience reads, an optional title, a private note for
whoever presents or teaches, an optional question (text, and the answer it takes:
ui.questions.Ask), and the document and reference summary as text where a file carries them. Homes:
- shipped files, ``lessons/*.toml`` (read-only; a teacher's own file loads the same way): ``parse``,
  and ``problems`` says what is wrong with one by line (docs/classes.md: the format;
  ``python -m ui.classroom.check``);
- a story (ui.stories.Story): a tour made in the app, with an id and an owner, saved in the store;
  its views name their document by the store's id of its text (or an example's name), so its steps
  carry no text of their own;
- a class or homework keeps the tour it plays in the store as JSON (``to_json``/``from_json``).
``as_story``, ``playable`` and ``lesson_toml`` go from one home to the other and back unchanged in
every field (tests/test_tour.py)."""
from __future__ import annotations

import functools
import json
import re
import secrets
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from ui import view as V
from ui.questions import Ask, from_toml, table_problems
from ui.questions import to_toml as answer_to_toml
from viz.text import plain_text as text_only

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "lessons"
MAX_LESSON_BYTES = 200_000
MAX_TITLE, MAX_NOTE = 120, 4000  # characters of a tour's or step's title; of a step's text or private note
MAX_REFERENCE = 10_000  # characters of a step's reference summary (analysis.quality.MAX_REFERENCE_CHARS, without numpy)


@dataclass(frozen=True)
class Step:
    view: V.View       # its page, its document (an example's file stem; None: ``document_text``), k, trigram
    #                    blocking, weights, window, chart and controls (layers and heads 0-based here, 1-based in the file)
    text: str          # what to look at
    question: str = ""
    ask: Ask | None = None  # what answer the question takes (None: a question to think or talk about)
    document_text: str = ""  # the document itself, when it is not an example
    title: str = ""          # its title ("": "<the tour's title>: step n")
    private: str = ""        # the note only whoever presents or teaches reads
    reference_text: str = ""  # the reference summary the view was made with ("": none, or an example's own)
    key: str = field(default="", compare=False)  # a name for its widgets in the Story panel (kept as it moves)

    @property
    def page(self) -> str:
        return self.view.page


def step_title(tour_title: str, n: int, title: str = "") -> str:
    """Step ``n``'s title (0-based n): its own, else "<the tour's title>: step n+1"."""
    return title or f"{tour_title}: step {n + 1}"


@dataclass(frozen=True)
class Tour:
    name: str
    title: str
    document: str      # an example's file stem ("" when the tour carries its own text)
    k: int
    steps: tuple[Step, ...]
    text: str = ""     # the document itself (document_text: a pasted document, made in the app)

    def document_of(self, n: int) -> tuple[str, str]:
        """Step ``n``'s document: (an example's file stem, "") or ("", the text itself)."""
        s = self.steps[n]
        return s.view.doc or "", s.document_text


def parse(text: str, name: str) -> Tour:
    """A tour from a lesson file's TOML text (checked first: ``problems``); its views through
    ui.view (numbers from 1; a step without a document of its own plays the lesson's, at the
    lesson's k unless its view names one); its texts without images."""
    d = tomllib.loads(text)
    k = int(d.get("k", 3))
    steps = []
    for s in d["steps"]:
        own = "document" in s or "document_text" in s
        stem, own_text = (s.get("document", ""), s.get("document_text", "")) if own else \
            (d.get("document", ""), d.get("document_text", ""))
        view = V.View.from_toml(s.get("view", {}), s.get("page", ""), stem or None, k)[0]
        steps.append(Step(view, text_only(s["text"]), text_only(s.get("question", "")),
                          from_toml(s["answer"]) if "answer" in s else None, own_text, text_only(s.get("title", "")),
                          text_only(s.get("private", "")), s.get("reference_text", "")))
    return Tour(name, text_only(d["title"]), d.get("document", ""), k, tuple(steps), d.get("document_text", ""))


def load_lesson(path: Path) -> Tour:
    return _parsed(path, path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _parsed(path: Path, mtime: int) -> Tour:  # (every run of every page lists the lessons: parsed once a file)
    return parse(path.read_text(encoding="utf-8"), path.stem)


def lessons() -> dict[str, Tour]:
    return {p.stem: load_lesson(p) for p in sorted(LESSONS.glob("*.toml"))}


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
            view, wrong = V.View.from_toml(s["view"])
            out += [(line_of(key, n, "view"), where + problem) for key, problem in wrong + V.beyond(view.pickers, shapes)]
        elif "view" in s:
            out.append((line_of("view", n), where + "view must be a table: [steps.view]"))
        out += document_problems(s, n)
        for key, most in (("title", MAX_TITLE), ("private", MAX_NOTE), ("reference_text", MAX_REFERENCE)):
            if key in s and (not isinstance(s[key], str) or len(s[key]) > most):
                out.append((line_of(key, n), where + f"{key} must be a text of at most {most:,} characters"))
        unknown = set(s) - {"page", "text", "question", "view", "answer", "document", "document_text", "title",
                            "private", "reference_text"}
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


def story_tour(title: str, steps) -> Tour:
    """A story's tour: its title and steps (the first step's k is the tour's)."""
    steps = tuple(steps)
    return Tour("story", title, "", steps[0].view.k if steps else 3, steps)


def as_story(tour: Tour, weights: str | None = None, ids: dict[str, str] | None = None) -> Tour:
    """A lesson as a story. A step's document (its own, else the lesson's): an example's file name,
    read as a link's, or a document_text by ``ids[text]``, the id under which the store keeps it (a
    reference summary likewise); the weights its view names, else ``weights``; its title spelled out."""
    out, ids = [], ids or {}
    for n, s in enumerate(tour.steps):
        stem, text = tour.document_of(n)
        view = s.view.but(doc=stem or ids.get(text), w=s.view.w or weights,
                          ref=ids.get(s.reference_text) if s.reference_text else None)
        out.append(replace(s, view=view, document_text="", reference_text="", title=step_title(tour.title, n, s.title),
                           key=secrets.token_hex(6)))
    return story_tour(tour.title, out)


def playable(story: Tour, name: str, documents: dict, references: dict | None = None) -> Tour:
    """A story as a tour a class plays, with no lesson file between (the inverse of ``as_story``):
    each step carries its document and reference summary as text; ``documents`` and ``references``
    as ``lesson_toml`` takes them."""
    gone = [n + 1 for n, s in enumerate(story.steps) if not documents.get(s.view.doc)]
    if gone:
        raise ValueError(f"The document of step {gone[0]} is no longer on this server: it cannot be taught.")
    out = []
    for s in story.steps:
        doc = documents[s.view.doc]
        out.append(replace(s, view=s.view.but(doc=doc.get("document") or None, ref=None),
                           document_text=doc.get("document_text", ""),
                           reference_text=(references or {}).get(s.view.ref, "") if s.view.ref else ""))
    first = documents[story.steps[0].view.doc]
    return Tour(name, story.title, first.get("document", ""), story.steps[0].view.k, tuple(out),
                first.get("document_text", ""))


def to_json(tour: Tour) -> str:
    """The tour as the store keeps it (the lesson a class or homework plays): JSON, every field."""
    return json.dumps({"title": tour.title, "document": tour.document, "k": tour.k, "text": tour.text,
                       "steps": [{"view": s.view.to_store(), "text": s.text, "question": s.question,
                                  "ask": s.ask.to_dict() if s.ask else None, "document_text": s.document_text,
                                  "title": s.title, "private": s.private, "reference_text": s.reference_text}
                                 for s in tour.steps]}, ensure_ascii=False)


def from_json(text: str, name: str) -> Tour:
    """A tour as ``to_json`` keeps it (its views checked again: ui.view)."""
    d = json.loads(text)
    steps = tuple(Step(V.View.from_store(s["view"])[0], text_only(s["text"]), text_only(s["question"]),
                       Ask.from_dict(s["ask"]) if s.get("ask") else None, s["document_text"], text_only(s["title"]),
                       text_only(s["private"]), s["reference_text"]) for s in d["steps"])
    return Tour(name, text_only(d["title"]), d["document"], int(d["k"]), steps, d["text"])


def load(text: str, name: str) -> Tour:
    """A tour as the store holds it: its JSON (``to_json``), or a lesson file's TOML (what it held before)."""
    return from_json(text, name) if text.lstrip().startswith("{") else parse(text, name)


def _quoted(text: str) -> str:
    """A TOML basic string (escapes: backslash, quote, newline, control characters)."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return '"' + "".join(c if ord(c) >= 0x20 else f"\\u{ord(c):04x}" for c in out) + '"'


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return _quoted(v)
    return "[" + ", ".join(_value(x) for x in v) + "]"


def lesson_toml(story: Tour, documents: dict, references: dict | None = None) -> str:
    """A story as a lesson file, or ValueError with one sentence. ``documents``: each step's view
    "doc" → {"document": a shipped example's file stem} or {"document_text": the document itself};
    ``references``: a view's "ref" → the reference summary's text. The first step's document and k
    are the lesson's; a step on another document, or at another k, names its own. Every field of a
    step comes back from the file (``parse``, ``as_story``)."""
    steps, title = story.steps, story.title
    gone = [n + 1 for n, s in enumerate(steps) if not documents.get(s.view.doc)]
    if gone:
        raise ValueError(f"The document of step {gone[0]} is no longer on this server: it cannot go in a lesson file.")
    first, k = documents[steps[0].view.doc], steps[0].view.k
    lines = [f"title = {_quoted(title or 'A lesson')}", *(f"{key} = {_quoted(v)}" for key, v in first.items()),
             f"k = {k}"]
    for n, s in enumerate(steps):
        view, own = s.view, documents[s.view.doc]
        lines += ["", "[[steps]]", f"page = {_quoted(view.page)}", f"text = {_quoted(s.text.strip() or s.title or '…')}"]
        if s.title and s.title != step_title(title or "A lesson", n):  # its own title
            lines.append(f"title = {_quoted(s.title)}")
        if s.private.strip():
            lines.append(f"private = {_quoted(s.private)}")
        if own != first:  # a step on a document of its own
            lines += [f"{key} = {_quoted(v)}" for key, v in own.items()]
        if view.ref and (references or {}).get(view.ref):  # (one no longer here: its example's, or none)
            lines.append(f"reference_text = {_quoted(references[view.ref])}")
        if s.question or s.ask:
            lines.append(f"question = {_quoted(s.question.strip() or s.title or 'What do you see?')}")
        if s.ask:
            lines.append("[steps.answer]")
            lines += [f"{key} = {_value(v)}" for key, v in answer_to_toml(s.ask.to_dict()).items()]
        table = view.to_toml(k)
        if table:
            lines.append("[steps.view]")
            lines += [f"{key} = {_value(v)}" for key, v in table.items()]
    return "\n".join(lines) + "\n"


def answer_space(a: Ask) -> list[str]:
    """A question's space to answer on a handout, in lines (numbers from 1, as on screen)."""
    if a.kind == "choice":
        return [f"☐ {o}" for o in a.options]
    if a.kind == "sentences":
        return [f"Sentences ({a.pick or 'the summary'}): ______   ______   ______"]
    if a.kind == "head":
        return [f"{'BERT' if a.model == 'bert' else 'Sentence encoder'} layer ______   head ______"]
    return [f"Your answer: ______ {a.unit}".rstrip() + f"   (between {a.low:g} and {a.high:g})"]


def answer_words(a: Ask, picked: tuple[int, ...]) -> str:
    """The answer a handout's last page gives for a question ("" never: an opinion says so)."""
    from ui.questions import model_answer

    said = model_answer(a, list(picked) if a.kind == "sentences" and picked else None)
    return said or ("an opinion: no right answer" if a.opinion else "the model's answer, on the step's page")
