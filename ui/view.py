"""The one View: what a page shows, and every control that changes it, defined once (issues 56, 69).

A ``View`` is a frozen value ::

    View(page="bert_attention",           # the page's URL path ("" = Summary)
         doc="bbc_call_centres",           # an example's stem, or "id:" + 16 hex (ui.link.doc_id)
         k=3, tb=True, w="bertsumext-minilm.safetensors", win=0, ref=None,
         pickers={"bert_layer": 4, "bert_head": None, ...},   # session keys → values, 0-based
         chart="bert_token")               # which chart of the page a slide shows (None: its main one)

Its header fields (``HEADER``) and each page's controls (``PAGES``) are ``Control``s: a session key,
a kind (how it is written outside the app, and checked when read back), its default, whether it
belongs to one result (``per_result``) and which model dimension it indexes. Three codecs read and
write a whole view through them: a link's query (``to_query``/``from_query``), the store's JSON
(``to_store``/``from_store``) and a lesson step's [steps.view] table (``to_toml``/``from_toml``,
the pickers; a lesson names its document and k itself). 0-based vs 1-based is converted in one
place, the control's kind. A new control added to ``PAGES`` travels by link, story, slide, lesson
and class with no further code. How a view arrives in a session is ui.arrival. No Streamlit here:
callers pass the session state (any mutable mapping)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from analysis.statistics import BERT_STATS, INTER_STATS
from ui.kinds import (PARTS, Bad, Choice, DocName, Document, Edits, Flag, Heads, Index, Kind, Number, Partly, Span, Text,
                      Texts, Whole)
from viz.palette import SCALES
from viz.palette import SEQUENTIAL as COLORSCALES

BERT_VIEWS = ("One head", "All heads of a layer", "All layers × heads", "Sentence × sentence", "Rollout")
BERT_SHOW = ("attention", "norm-weighted", "ALTI", "value zeroing")
INTER_SHOW = ("attention", "norm-weighted", "ALTI", "score by layer")
WORD_METHODS = ("grad-input", "integrated-gradients", "occlusion")  # analysis.attribution.METHODS (without torch)
HEADS_VIEWS = ("Statistics", "Importance", "Switch heads off", "What fine-tuning changed")
EDIT_KINDS = ("move", "delete", "replace", "mask", "swap")  # What if's edits (pages/what_if.py names them)
LEAVE_OUT = "— leave out —"  # the Why page's value zeroing not asked for (an option of its own, not None)
NO_SECOND = "— no second model —"  # no side-by-side model (likewise)
MAX_QUERY = 4000  # characters of a URL value read at most (a longer one is refused whole)


# ---------------------------------------------------------------- the controls of every page
@dataclass(frozen=True)
class Control:
    key: str                 # the session key (the widget's), also its name in a lesson file
    kind: Kind
    sample: Any = None       # a value other than the default (the round-trip test sets it)
    url: str = ""            # its name in a link (default: the key)
    what: str = ""           # how the page names it, for one-sentence problems
    default: Any = None      # what the page shows before anyone sets it (None: the page decides, from its result)
    per_result: bool = False  # it belongs to one result (a sentence, a range): a new Summarize starts it afresh
    dimension: tuple[str, int] | None = None  # ("bert" | "inter", 0: layers | 1: heads) it indexes

    @property
    def name(self) -> str:
        return self.url or self.key


def _c(key, kind, sample, url="", what="", default=None, per_result=False, dim=None):
    if default is None and isinstance(kind, Choice):
        default = kind.options[0]  # (a select box or radio without index=: its first option)
    if default is None and isinstance(kind, Flag):
        default = False
    return Control(key, kind, sample, url, what or key.split("_", 1)[-1].replace("_", " "), default, per_result, dim)


LAYER, HEAD = Index(), Index(None, "mean")
BERT_LAYER, BERT_HEAD, INTER_LAYER, INTER_HEAD = ("bert", 0), ("bert", 1), ("inter", 0), ("inter", 1)
CAUSAL = _c("causal", Flag(), True, what="causal mask")
PAGES: dict[str, tuple[Control, ...]] = {
    "": (_c("summary_other", Text(), "untrained (random scorer)", what="second model"),
         _c("quality_ref", Index(), 1, what="reference sentence", per_result=True)),
    "why": (_c("why_sentence", Index(), 1, what="sentence", per_result=True),
            _c("why_vz", Index(LEAVE_OUT, "none"), 0, what="value zeroing layer", dim=BERT_LAYER),
            _c("why_board", Flag(), True, what="scoreboard", per_result=True),
            _c("why_exact", Flag(), True, what="heads switched off exactly"),
            _c("why_i", Index(), 2, what="sentence chosen", per_result=True),
            _c("why_j", Index(), 1, what="sentence it is compared with", per_result=True),
            _c("why_route_show", Flag(), True, what="route drawn"),
            _c("why_route", Index(), 6, what="sentence whose route is drawn", per_result=True),
            _c("why_route_min", Number(0.01, 0.9), 0.5, what="route threshold", default=0.3),
            _c("why_method", Choice(WORD_METHODS), "occlusion", what="attribution method"),
            _c("why_methods", Flag(), True, what="methods compared", per_result=True)),
    "bert_attention": (
        _c("bert_view", Choice(BERT_VIEWS), "All heads of a layer", "view"),
        _c("bert_layer", LAYER, 4, "layer", dim=BERT_LAYER), _c("bert_head", HEAD, 2, "head", dim=BERT_HEAD),
        _c("bert_colors", Choice(COLORSCALES), "Magma", "colors", "colour scale"),
        _c("bert_scale", Choice(SCALES), "log", "scale", "contrast"),
        _c("bert_hide", Flag(), True, what="hide [CLS]/[SEP]"),
        _c("bert_range", Span(), (2, 4), what="sentence range", per_result=True),
        _c("bert_show", Choice(BERT_SHOW), "ALTI"),
        _c("bert_alti", Choice(("this layer", "composed to the input")), "composed to the input", what="ALTI level"),
        _c("bert_level", Choice(("token", "sentence")), "sentence", what="cells")),
    "sentence_encoder": (
        _c("inter_show", Choice(INTER_SHOW), "norm-weighted"),
        _c("inter_alti", Choice(("this layer", "composed")), "composed", what="ALTI level"),
        _c("inter_layer", LAYER, 1, "ilayer", dim=INTER_LAYER), _c("inter_head", HEAD, 3, "ihead", dim=INTER_HEAD),
        _c("inter_colors", Choice(COLORSCALES), "Cividis", what="colour scale"),
        _c("inter_lens", Choice(("tuned", "raw")), "raw", what="lens")),
    "masks_positions": (
        _c("batch_docs", Texts(), [], what="documents batched"),
        _c("batch_layer", LAYER, 2, dim=BERT_LAYER), _c("batch_head", Index(), 1, dim=BERT_HEAD),
        _c("batch_doc", Index(), 0, what="document", per_result=True),
        CAUSAL),
    "heads": (
        _c("heads_view", Choice(HEADS_VIEWS), "Importance"),
        _c("heads_stat", Choice(tuple(BERT_STATS)), "sep", what="BERT statistic"),
        _c("heads_inter_stat", Choice(tuple(INTER_STATS)), "earlier", what="sentence-encoder statistic"),
        _c("heads_colors", Choice(COLORSCALES), "Blues", what="colour scale"),
        _c("heads_pick", Heads(one=True), ("bert", 1, 2), what="head opened"),
        _c("heads_map_head", HEAD, 5, what="head shown", per_result=True, dim=BERT_HEAD),
        _c("heads_off", Heads(), [("bert", 0, 1), ("inter", 0, 0)], what="heads switched off"),
        _c("heads_ft_stat", Choice(tuple(BERT_STATS)), "next", what="fine-tuning statistic"),
        _c("heads_ft_colors", Choice(COLORSCALES), "YlOrRd", what="fine-tuning colour scale"),
        _c("heads_other", Text(), "untrained (random scorer)", what="second model")),
    "what_if": (
        _c("whatif_source", Choice(("Edits", "Pasted text")), "Pasted text", what="document B"),
        _c("whatif_edits", Edits(), ["delete:1"], "edits"),
        _c("whatif_kind", Choice(EDIT_KINDS), "mask", what="kind of edit being composed"),
        _c("whatif_b", Document(), None, what="pasted document B"),
        _c("whatif_head", Heads(one=True), ("bert", 0, 1), what="head opened"),
        _c("whatif_patch_sentence", Index(), 1, what="patched sentence"),
        _c("whatif_heads", Flag(), False, what="every BERT head", default=True)),
    "corpus": (
        _c("corpus_run", Text(), None, what="corpus run"),
        _c("corpus_part", Choice(PARTS), "inter", what="encoder"),
        _c("corpus_stat", Text(), "entropy", what="statistic")),
    "learn": (
        _c("learn_layer", LAYER, 3, dim=BERT_LAYER), _c("learn_head", Index(), 6, dim=BERT_HEAD),
        _c("learn_query", Index(), 4, what="query token"),
        CAUSAL, _c("learn_sep", Flag(), True, what="head that looks at [SEP]")),
}
CONTROLS: dict[str, Control] = {c.key: c for cs in PAGES.values() for c in cs}  # by session key
BY_NAME: dict[str, Control] = {c.name: c for c in CONTROLS.values()}           # by URL name
TAKEN = "_view_taken"  # the per-result keys a view set, not yet drawn: kept for the result the view names
HEADER: tuple[Control, ...] = (  # the result a view shows, and the chart a slide shows: controls like the rest
    _c("doc", DocName(), "bbc_call_centres", what="document"),
    _c("k", Whole(1, 10, "a summary length"), 2, what="summary length", default=3),
    _c("tb", Flag(), False, what="trigram blocking", default=True),
    _c("w", Text(), "bertsumext-minilm.safetensors", what="model"),
    _c("win", Index(), 1, what="BERT window", default=0),
    _c("ref", DocName(), "id:0123456789abcdef", what="reference summary"),
    _c("chart", Text(), "bert_token", what="chart"))
HEADER_KEYS = {c.key for c in HEADER}
NOT_IN_TOML = {"doc", "ref"}  # a lesson step names its document and reference by text (document_text, reference_text)


def controls(page: str) -> tuple[Control, ...]:
    return PAGES.get(page, ())


def default(key: str):
    """What a control's page shows before anyone sets it (None: the page decides from its result)."""
    return CONTROLS[key].default


def value(pickers, key: str):
    """A control's value in a view's ``pickers``, else its default."""
    return pickers.get(key, CONTROLS[key].default)


# ---------------------------------------------------------------- the view: one frozen value
@dataclass(frozen=True)
class View:
    """What a page shows: its result (document, k, trigram blocking, weights, BERT window, reference
    summary), its controls (``pickers``: session keys → values, 0-based) and the chart a slide shows.
    ``doc`` None: no result (the Corpus page's view has none)."""
    page: str = ""
    doc: str | None = None
    k: int = 3
    tb: bool = True
    w: str | None = None
    win: int = 0
    ref: str | None = None
    pickers: dict = field(default_factory=dict)
    chart: str | None = None

    @classmethod
    def of(cls, state, page: str, params: dict | None, doc: str | None, chart: str | None = None,
           ref: str | None = None) -> "View":
        """The view ``state`` shows on ``page`` for the result ``params`` (whose document is ``doc``;
        None before a Summarize; ``ref``: the reference summary's id, if any): only that page's
        controls, those the session has a value for."""
        pickers = {c.key: state[c.key] for c in controls(page) if c.key in state}
        if params is None:
            return cls(page, pickers=pickers, chart=chart)
        return cls(page, doc, params["k"], params["block_trigram"], params["weights"], int(state.get("window", 0) or 0),
                   ref or None, pickers, chart)

    def but(self, **changes) -> "View":
        return replace(self, **changes)

    # ------------------------------------------------------------ the store's JSON
    def to_store(self) -> dict:
        """The view as the store keeps it (JSON: tuples become lists; ``from_store`` reads it back)."""
        out = {"page": self.page, "doc": self.doc, "k": self.k, "tb": self.tb, "w": self.w, "win": self.win,
               "pickers": dict(self.pickers), "chart": self.chart}
        return {**out, "ref": self.ref} if self.ref else out

    @classmethod
    def from_store(cls, d: dict) -> tuple["View", list[str]]:
        """A view as the store's JSON gives it back, every field checked: its pickers in their session
        form (tuples again); what is not a control's value is left out, with a problem each."""
        d = d if isinstance(d, dict) else {}
        problems: list[str] = []
        header = {}
        for c in HEADER:
            if d.get(c.key) is not None:
                value, problem = _checked(c, c.kind.stored, d[c.key])
                problems += [problem] if problem else []
                if value is not None:
                    header[c.key] = value
        pickers = {}
        for key, raw in (d.get("pickers") or {}).items() if isinstance(d.get("pickers"), dict) else ():
            c = CONTROLS.get(key)
            if c is None:
                continue
            value, problem = _checked(c, c.kind.stored, raw)
            problems += [problem] if problem else []
            if not problem or value is not None:
                pickers[key] = value
        page = d.get("page") if isinstance(d.get("page"), str) and d.get("page") in PAGES else ""
        return cls(page, **header, pickers=pickers), problems

    # ------------------------------------------------------------ a lesson step's [steps.view]
    def to_toml(self, k: int = 3) -> dict:
        """The view as a lesson step's [steps.view] table (numbers from 1): its result's fields that
        differ from the defaults (k: from the lesson's ``k``), then its controls. The page, the document
        and the reference summary are the step's own keys (a lesson file carries documents as text, not
        as this server's ids)."""
        head = {c.key: c.kind.out(getattr(self, c.key)) for c in HEADER if c.key not in NOT_IN_TOML
                and getattr(self, c.key) is not None and getattr(self, c.key) != (k if c.key == "k" else c.default)}
        return {**head, **to_toml(self.pickers)}

    @classmethod
    def from_toml(cls, table: dict, page: str = "", doc: str | None = None, k: int = 3
                  ) -> tuple["View", list[tuple[str, str]]]:
        """A lesson step's [steps.view] table → (its View on ``page`` with ``doc``, [(key, problem)]);
        ``k``: the lesson's, unless the table names its own."""
        header, problems = {"k": k}, []
        for c in HEADER:
            if c.key in table and c.key not in NOT_IN_TOML:
                value, problem = _checked(c, c.kind.inn, table[c.key])
                if problem:
                    problems.append((c.key, problem))
                elif value is not None:
                    header[c.key] = value
        pickers, wrong = from_toml({key: v for key, v in table.items() if key not in HEADER_KEYS})
        return cls(page, doc, **header, pickers=pickers), problems + wrong

    # ------------------------------------------------------------ a link's query
    def to_query(self, doc_id=None) -> dict[str, str]:
        """The view as a link's query parameters (numbers from 1; the page is the link's path).
        ``doc_id(text)``: a Document value's id in the document store (without one, such values are
        left out). The result's fields only with a document."""
        out = {}
        for c in HEADER:
            v = getattr(self, c.key)
            if self.doc and v is not None and (c.key in ("doc", "k", "tb") or v != c.default):
                out[c.name] = c.kind.url(v)
        for key, v in self.pickers.items():
            c = CONTROLS.get(key)
            if c is None or v is None and not isinstance(c.kind, Index):
                continue
            if isinstance(c.kind, Document):
                if doc_id is None:
                    continue
                ref = doc_id(v)
                if ref is not None:  # (None: the store is down; the link leaves it out)
                    out[c.name] = ref
                continue
            out[c.name] = c.kind.url(v)
        return out

    @classmethod
    def from_query(cls, q: dict, page: str = "", get_doc=None) -> tuple["View", list[str]]:
        """A link's view and the problems of what it could not read, one sentence each (a field it
        could not read takes its default). Controls of any page are read (old links named BERT's
        layer "layer"). ``get_doc(id)``: a Document value's text (None: no longer on this server)."""
        header, problems = {}, []
        for c in HEADER:
            raw = q.get(c.name)
            if raw is None or raw == "":
                continue
            value, problem = _read(c, raw)
            if problem:
                problems.append(problem + (f" (using {c.kind.url(c.default)})" if c.default is not None else ""))
            elif value is not None:
                header[c.key] = value
        pickers = {}
        for name, raw in q.items():
            c = BY_NAME.get(name)
            if c is None:
                continue
            if isinstance(c.kind, Document) and len(raw) <= MAX_QUERY:
                text = get_doc(raw) if get_doc is not None else None
                if text is None:
                    problems.append(f"{name}: its document is no longer on this server")
                else:
                    pickers[c.key] = text
                continue
            value, problem = _read(c, raw)
            if problem:
                problems.append(problem)
            if not problem or value is not None:  # (a part read: kept, the rest named)
                pickers[c.key] = value
        return cls(page, **header, pickers=pickers), problems


def _read(c: Control, raw: str) -> tuple[Any, str | None]:
    if len(raw) > MAX_QUERY:
        return None, f"{c.name} is too long to be a setting ({len(raw):,} characters)"
    return _checked(c, c.kind.from_url, raw)


def fresh(state, key: str, result) -> bool:
    """A per-result picker at a new result: True (and forgotten) when its value was picked on
    another result and no view set it for this one. ``result``: the shown result's key."""
    mark = f"_{key}_result"
    taken = state.get(TAKEN, set())
    if key in taken:
        taken.discard(key)
        state[mark] = result
        return False
    new = state.get(mark) != result
    state[mark] = result
    if new:
        state.pop(key, None)
    return new


# ---------------------------------------------------------------- codecs of the controls
def _checked(c: Control, read, raw) -> tuple[Any, str | None]:
    try:
        return read(raw), None
    except Partly as e:  # the part that could be read, and what could not
        return e.value, f"{c.name} {e}"
    except (Bad, TypeError, ValueError, KeyError, IndexError, RecursionError) as e:
        shown = raw if isinstance(raw, str) else json.dumps(raw, default=str)[:60]
        why = str(e) if isinstance(e, Bad) else "cannot be read"
        return None, f"{c.name}={str(shown)[:60]} {why}"


def to_toml(pickers: dict) -> dict:
    """A view's pickers as a lesson's [steps.view] table (numbers from 1)."""
    return {k: CONTROLS[k].kind.out(v) for k, v in pickers.items() if k in CONTROLS and v is not None}


def from_toml(table: dict) -> tuple[dict, list[tuple[str, str]]]:
    """A lesson's [steps.view] table → (pickers, [(key, problem)])."""
    pickers, problems = {}, []
    for key, raw in table.items():
        c = CONTROLS.get(key)
        if c is None:
            problems.append((key, f"view key {key!r} is not a control of any page"))
            continue
        value, problem = _checked(c, c.kind.inn, raw)
        if problem:
            problems.append((key, problem))
        if not problem or value is not None:
            pickers[key] = value
    return pickers, problems


def beyond(pickers: dict, shapes: dict) -> list[tuple[str, str]]:
    """The pickers that name a layer or head ``shapes`` ({"bert": (layers, heads), "inter": …})
    does not have: [(key, one sentence)]."""
    out = []
    for key, value in pickers.items():
        c = CONTROLS.get(key)
        if c is None:
            continue
        heads = ([] if not isinstance(c.kind, Heads) or value is None else [value] if c.kind.one else value)
        for part, layer, head in heads:
            L, H = shapes[part]
            if layer >= L or head >= H:
                out.append((key, f"{key}: the model has no {part} layer {layer + 1}, head {head + 1} "
                                 f"(layers 1-{L}, heads 1-{H})"))
        if c.dimension and isinstance(value, int) and not isinstance(value, bool):
            part, axis = c.dimension
            if value >= shapes[part][axis]:
                what = ("layer", "head")[axis]
                out.append((key, f"{key} = {value + 1}: the model's {'BERT' if part == 'bert' else 'sentence encoder'} "
                                 f"has {what}s 1 to {shapes[part][axis]}"))
    return out
