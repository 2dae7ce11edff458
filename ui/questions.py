"""Questions that take answers (issue 49): a lesson step may ask for one of four kinds of answer,
and a student predicts before the model's answer is revealed. No Streamlit.

    choice     2-6 options; one or more marked right, or none (an opinion)
    sentences  which sentences will the model pick? (its summary: hidden until the reveal)
    head       which head does X? (a layer and a head of BERT or of the sentence encoder)
    number     a number in a range (0-100 unless the lesson says), right within a tolerance

An answer is checked here before it is stored (``valid``): a value a widget could not have sent
(an option that does not exist, a sentence out of range, megabytes of text) is refused with one
sentence (``Refused``) and stored nowhere."""
from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass

from model.heads import Head
from ui.kinds import Index

KINDS = ("choice", "sentences", "head", "number")
MODELS = {"bert": "BERT", "inter": "the sentence encoder"}
MAX_ANSWER_CHARS = 400  # a stored answer's JSON: the longest a real one is (10 sentence numbers) is ~40
MAX_NUMBER = 1e9


class Refused(ValueError):
    """An answer that no control of its question could have given (the message: one sentence)."""


@dataclass(frozen=True)
class Ask:
    """What a step asks for. Indices are 0-based here (1-based in lesson files and on screen)."""
    kind: str
    options: tuple[str, ...] = ()          # choice
    right: tuple = ()                      # choice: option indices; head: (layer, head) pairs; () = an opinion
    pick: int = 0                          # sentences: how many (0: the lesson's k)
    model: str = "bert"                    # head: "bert" or "inter"
    answer: float | None = None            # number (None: an opinion)
    tolerance: float = 0.0                 # number: right within ± this
    unit: str = ""                         # number: shown after it ("%")
    low: float = 0.0                       # number: what a student may answer, from low …
    high: float = 100.0                    # … to high (the lesson's range; 0-100 unless it says)

    def to_dict(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_dict(d: dict) -> "Ask":
        right = tuple(tuple(r) if isinstance(r, list) else r for r in d.get("right", ()))
        return Ask(**{**d, "options": tuple(d.get("options", ())), "right": right})

    @property
    def opinion(self) -> bool:
        return not self.right and self.answer is None

    def pick_of(self, k: int) -> int:
        return self.pick or k


ONE = Index()  # an option, layer or head: 0-based inside, 1-based in a lesson file (ui.kinds converts)


def from_toml(table: dict) -> Ask:
    """A step's ``[steps.answer]`` table (already checked by lessons.problems) → an Ask."""
    kind = table["kind"]
    if kind == "choice":
        from viz.text import plain_text

        return Ask(kind, options=tuple(plain_text(o) for o in table["options"]),
                   right=tuple(ONE.inn(r) for r in table.get("right", ())))
    if kind == "sentences":
        return Ask(kind, pick=int(table.get("pick", 0)))
    if kind == "head":
        return Ask(kind, model=table.get("model", "bert"),
                   right=tuple((ONE.inn(l), ONE.inn(h)) for l, h in table.get("right", ())))
    low, high = table.get("range", (0, 100))
    return Ask(kind, answer=None if "answer" not in table else float(table["answer"]),
               tolerance=float(table.get("tolerance", 0)), unit=str(table.get("unit", "")), low=float(low),
               high=float(high))


def read_number(text: str, unit: str = "") -> float | None:
    """A number as a person types it, in either convention: "8.5" and "8,5" (a decimal comma) are
    8.5; "1 234,5", "1.234,5" and "1,234.5" are 1234.5 (the last separator is the decimal one);
    a trailing ``unit`` ("80%") is allowed; "-0" is 0. "" → None. ValueError, one sentence, for
    anything else, and for "1,234" or "1.234.5", which could be read two ways or none."""
    s = text.strip().replace("\u2212", "-")
    if unit and s.endswith(unit):
        s = s[:-len(unit)].strip()
    for space in (" ", "\u00a0", "\u202f", "'"):  # thousands written with spaces or apostrophes
        s = s.replace(space, "")
    if not s:
        return None
    said = f"“{text.strip()[:20]}” is not a number: write it with digits, and a point or a comma for the decimals (8.5 or 8,5)."
    if not re.fullmatch(r"[-+]?[\d.,]+", s) or not any(c.isdigit() for c in s):
        raise ValueError(said)
    points, commas = s.count("."), s.count(",")
    if points and commas:  # both: the last one is the decimal separator, the other groups thousands
        decimal = "." if s.rfind(".") > s.rfind(",") else ","
        group = "," if decimal == "." else "."
        if s.count(decimal) > 1:
            raise ValueError(said)
        s = s.replace(group, "").replace(decimal, ".")
    elif points > 1 or commas > 1:  # 1.234.567 or 1,234,567: thousands only
        mark = "." if points else ","
        if not re.fullmatch(rf"[-+]?\d{{1,3}}(\{mark}\d{{3}})+", s):
            raise ValueError(said)
        s = s.replace(mark, "")
    elif commas == 1:
        if re.fullmatch(r"[-+]?\d{1,3},\d{3}", s):  # 1,234: a thousand and more, or one and a bit?
            raise ValueError(f"“{text.strip()[:20]}” could be read two ways: write {s.replace(',', '')} for the "
                             f"whole number, or {s.replace(',', '.')} for the decimal.")
        s = s.replace(",", ".")
    return float(s) + 0.0  # (-0.0 + 0.0 is 0.0)


def to_toml(ask: dict) -> dict:
    """An ``Ask.to_dict()`` as a lesson's [steps.answer] table (numbers from 1)."""
    a = Ask.from_dict(ask)
    if a.kind == "choice":
        return {"kind": "choice", "options": list(a.options), **({"right": [ONE.out(r) for r in a.right]} if a.right else {})}
    if a.kind == "sentences":
        return {"kind": "sentences", **({"pick": a.pick} if a.pick else {})}
    if a.kind == "head":
        return {"kind": "head", "model": a.model,
                **({"right": [[ONE.out(l), ONE.out(h)] for l, h in a.right]} if a.right else {})}
    return {"kind": "number", **({"answer": a.answer, "tolerance": a.tolerance} if a.answer is not None else {}),
            "unit": a.unit, "range": [a.low, a.high]}


def table_problems(table: dict, shapes: dict | None = None) -> list[tuple[str | None, str]]:
    """What is wrong with a ``[steps.answer]`` table: (the key it is about or None, the problem).
    ``shapes``: {"bert": (layers, heads), "inter": …} of the model the lesson runs on (heads checked)."""
    known = {"choice": {"kind", "options", "right"}, "sentences": {"kind", "pick"},
             "head": {"kind", "model", "right"}, "number": {"kind", "answer", "tolerance", "unit", "range"}}
    kind = table.get("kind")
    if kind not in KINDS:
        return [("kind", f"kind must be one of {', '.join(KINDS)} (it is {kind!r})")]
    out = [(k, f"unknown key {k!r} for a {kind} question (known: {', '.join(sorted(known[kind]))})")
           for k in table if k not in known[kind]]
    right = table.get("right", [])
    if kind == "choice":
        options = table.get("options")
        if not isinstance(options, list) or not 2 <= len(options) <= 6 or not all(
                isinstance(o, str) and o.strip() for o in options):
            return out + [("options", "options must be a list of 2 to 6 texts")]
        if len(set(options)) != len(options):
            out.append(("options", "two options are the same"))
        if not isinstance(right, list) or not all(isinstance(r, int) and 1 <= r <= len(options) for r in right):
            out.append(("right", f"right must list option numbers from 1 to {len(options)} (or be left out for an opinion)"))
    elif kind == "sentences":
        if not isinstance(table.get("pick", 1), int) or not 1 <= table.get("pick", 1) <= 10:
            out.append(("pick", "pick must be a whole number from 1 to 10 (or left out: the lesson's k)"))
    elif kind == "head":
        if table.get("model", "bert") not in MODELS:
            out.append(("model", "model must be \"bert\" or \"inter\" (the sentence encoder)"))
        if not isinstance(right, list) or not all(
                isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) and x >= 1 for x in r) for r in right):
            out.append(("right", "right must list [layer, head] pairs, each from 1 (e.g. right = [[4, 5]])"))
        elif shapes and table.get("model", "bert") in shapes:
            L, H = shapes[table.get("model", "bert")]
            out += [("right", f"{MODELS[table.get('model', 'bert')]} has layers 1 to {L} and heads 1 to {H}: "
                              f"there is no layer {r[0]}, head {r[1]}") for r in right if r[0] > L or r[1] > H]
    else:
        for key in ("answer", "tolerance"):
            if key in table and (isinstance(table[key], bool) or not isinstance(table[key], (int, float))
                                 or not math.isfinite(table[key]) or abs(table[key]) > MAX_NUMBER):
                out.append((key, f"{key} must be a number"))
        if isinstance(table.get("tolerance", 0), (int, float)) and table.get("tolerance", 0) < 0:
            out.append(("tolerance", "tolerance must be 0 or more"))
        if "tolerance" in table and "answer" not in table:
            out.append(("tolerance", "a tolerance needs an answer"))
        if not isinstance(table.get("unit", ""), str) or len(table.get("unit", "")) > 12:
            out.append(("unit", "unit must be a short text (e.g. \"%\")"))
        bounds = table.get("range", [0, 100])
        if (not isinstance(bounds, list) or len(bounds) != 2 or not all(
                isinstance(b, (int, float)) and not isinstance(b, bool) and math.isfinite(b) for b in bounds)
                or bounds[0] >= bounds[1] or max(map(abs, bounds)) > MAX_NUMBER):
            out.append(("range", "range must be [lowest, highest], two numbers (default [0, 100])"))
        elif isinstance(table.get("answer"), (int, float)) and not bounds[0] <= table["answer"] <= bounds[1]:
            out.append(("answer", f"the answer {table['answer']:g} is outside the range {bounds[0]:g} to {bounds[1]:g}"))
    return out


def valid(ask: Ask, value, n_sentences: int = 0, k: int = 3, shape: tuple[int, int] = (0, 0)):
    """The answer as stored (JSON-able), or Refused. ``n_sentences``: the document's; ``k``: the
    class's summary length; ``shape``: (layers, heads) of the asked model."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        raise Refused("That answer is not one this question takes.") from None
    if len(text) > MAX_ANSWER_CHARS:
        raise Refused("That answer is far longer than any this question takes: refused.")
    if ask.kind == "choice":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < len(ask.options):
            raise Refused(f"There is no such option: pick one of the {len(ask.options)} shown.")
        return value
    if ask.kind == "sentences":
        want = ask.pick_of(k)
        if (not isinstance(value, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in value)
                or len(set(value)) != len(value)):
            raise Refused("Pick sentences by their numbers, each once.")
        if not all(0 <= i < n_sentences for i in value):
            raise Refused(f"The document has sentences 1 to {n_sentences}: that one is not there.")
        if len(value) != want:
            raise Refused(f"Pick exactly {want} sentences.")
        return sorted(value)
    if ask.kind == "head":
        if (not isinstance(value, list) or len(value) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in value)
                or not (0 <= value[0] < shape[0] and 0 <= value[1] < shape[1])):
            raise Refused(f"{MODELS[ask.model]} has layers 1 to {shape[0]} and heads 1 to {shape[1]}: "
                          "that head is not there.")
        return list(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or abs(value) > MAX_NUMBER:
        raise Refused("That is not a number this question takes.")
    if not ask.low <= value <= ask.high:
        raise Refused(f"Answer with a number from {ask.low:g} to {ask.high:g}{ask.unit}.")
    return float(value)


def is_right(ask: Ask, value, model_pick: list[int] | None = None) -> bool | None:
    """Whether an answer is right (None: an opinion, no right answer). ``model_pick``: the model's
    sentences, for a sentences question (right = the same set)."""
    if ask.kind == "choice":
        return value in ask.right if ask.right else None
    if ask.kind == "sentences":
        return None if model_pick is None else sorted(value) == sorted(model_pick)
    if ask.kind == "head":
        return tuple(value) in ask.right if ask.right else None
    return None if ask.answer is None else abs(value - ask.answer) <= ask.tolerance + 1e-9


def described(ask: Ask, value) -> str:
    """An answer in words (1-based, as on screen)."""
    if ask.kind == "choice":
        return ask.options[value]
    if ask.kind == "sentences":
        return "sentences " + ", ".join(str(i + 1) for i in sorted(value))
    if ask.kind == "head":  # as every page labels a head (model.heads.Head: "BERT 2.9")
        return Head(ask.model, value[0], value[1]).label
    return f"{value:g}{ask.unit}"


def model_answer(ask: Ask, model_pick: list[int] | None = None) -> str:
    """The right answer in words ('' for an opinion)."""
    if ask.kind == "choice":
        return " or ".join(ask.options[i] for i in ask.right)
    if ask.kind == "sentences":
        return described(ask, model_pick) if model_pick is not None else ""
    if ask.kind == "head":
        return " or ".join(described(ask, list(r)) for r in ask.right)
    if ask.answer is None:
        return ""
    return f"{ask.answer:g}{ask.unit}" + (f" (± {ask.tolerance:g})" if ask.tolerance else "")
