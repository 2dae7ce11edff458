"""The one View: what a page shows, and every control that changes it, defined once (issue 56).

A view is a dict ::

    {"page": "bert_attention",            # the page's URL path ("" = Summary)
     "doc": "bbc_call_centres",           # an example's stem, or "id:" + 16 hex (ui.link.doc_id)
     "k": 3, "tb": True, "w": "bertsumext-minilm.safetensors", "win": 0,
     "pickers": {"bert_layer": 4, "bert_head": None, ...},   # session keys → values, 0-based
     "chart": "bert_token"}               # which chart of the page a slide shows (None: its main one)

Each page declares its controls in ``PAGES`` (session key, kind, a non-default ``sample`` the
round-trip test sets). Links (``to_query``/``from_query``), lessons (``from_toml``/``to_toml``)
and the store (``from_store``) read and write views through these, and 0-based vs 1-based is
converted in one place: the control's kind. A new control added to ``PAGES`` travels by link,
story, slide, lesson and class with no further code. No Streamlit here: callers pass the session
state (any mutable mapping)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from analysis.statistics import BERT_STATS, INTER_STATS
from ui.kinds import PARTS, Bad, Choice, Document, Edits, Flag, Heads, Index, Kind, Number, Partly, Span, Text, Texts
from viz.palette import SCALES
from viz.palette import SEQUENTIAL as COLORSCALES

BERT_VIEWS = ("One head", "All heads of a layer", "All layers × heads", "Sentence × sentence", "Rollout")
BERT_SHOW = ("attention", "norm-weighted", "ALTI", "value zeroing")
INTER_SHOW = ("attention", "norm-weighted", "ALTI", "score by layer")
WORD_METHODS = ("grad-input", "integrated-gradients", "occlusion")  # analysis.attribution.METHODS (without torch)
HEADS_VIEWS = ("Statistics", "Importance", "Switch heads off", "What fine-tuning changed")
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

    @property
    def name(self) -> str:
        return self.url or self.key


def _c(key, kind, sample, url="", what=""):
    return Control(key, kind, sample, url, what or key.split("_", 1)[-1].replace("_", " "))


LAYER, HEAD = Index(), Index(None, "mean")
# controls that index a model's layers or heads (lesson files are checked against the model's shape)
DIMENSIONS = {"bert_layer": ("bert", 0), "bert_head": ("bert", 1), "learn_layer": ("bert", 0), "learn_head": ("bert", 1),
              "batch_layer": ("bert", 0), "batch_head": ("bert", 1), "heads_map_head": ("bert", 1),
              "why_vz": ("bert", 0), "inter_layer": ("inter", 0), "inter_head": ("inter", 1)}
CAUSAL = _c("causal", Flag(), True, what="causal mask")
PAGES: dict[str, tuple[Control, ...]] = {
    "": (_c("summary_other", Text(), "untrained (random scorer)", what="second model"),),
    "why": (_c("why_sentence", Index(), 1, what="sentence"),
            _c("why_vz", Index(LEAVE_OUT, "none"), 0, what="value zeroing layer"),
            _c("why_board", Flag(), True, what="scoreboard"),
            _c("why_exact", Flag(), True, what="heads switched off exactly"),
            _c("why_i", Index(), 2, what="sentence chosen"), _c("why_j", Index(), 1, what="sentence it is compared with"),
            _c("why_route_show", Flag(), True, what="route drawn"),
            _c("why_route", Index(), 6, what="sentence whose route is drawn"),
            _c("why_route_min", Number(0.01, 0.9), 0.5, what="route threshold"),
            _c("why_method", Choice(WORD_METHODS), "occlusion", what="attribution method"),
            _c("why_methods", Flag(), True, what="methods compared")),
    "bert_attention": (
        _c("bert_view", Choice(BERT_VIEWS), "All heads of a layer", "view"),
        _c("bert_layer", LAYER, 4, "layer"), _c("bert_head", HEAD, 2, "head"),
        _c("bert_colors", Choice(COLORSCALES), "Magma", "colors", "colour scale"),
        _c("bert_scale", Choice(SCALES), "log", "scale", "contrast"),
        _c("bert_hide", Flag(), True, what="hide [CLS]/[SEP]"),
        _c("bert_range", Span(), (2, 4), what="sentence range"),
        _c("bert_show", Choice(BERT_SHOW), "ALTI"),
        _c("bert_alti", Choice(("this layer", "composed to the input")), "composed to the input", what="ALTI level"),
        _c("bert_level", Choice(("token", "sentence")), "sentence", what="cells")),
    "sentence_encoder": (
        _c("inter_show", Choice(INTER_SHOW), "norm-weighted"),
        _c("inter_alti", Choice(("this layer", "composed")), "composed", what="ALTI level"),
        _c("inter_layer", LAYER, 1, "ilayer"), _c("inter_head", HEAD, 3, "ihead"),
        _c("inter_colors", Choice(COLORSCALES), "Cividis", what="colour scale"),
        _c("inter_lens", Choice(("tuned", "raw")), "raw", what="lens")),
    "masks_positions": (
        _c("batch_docs", Texts(), [], what="documents batched"),
        _c("batch_layer", LAYER, 2), _c("batch_head", Index(), 1), _c("batch_doc", Index(), 0, what="document"),
        CAUSAL),
    "heads": (
        _c("heads_view", Choice(HEADS_VIEWS), "Importance"),
        _c("heads_stat", Choice(tuple(BERT_STATS)), "sep", what="BERT statistic"),
        _c("heads_inter_stat", Choice(tuple(INTER_STATS)), "earlier", what="sentence-encoder statistic"),
        _c("heads_colors", Choice(COLORSCALES), "Blues", what="colour scale"),
        _c("heads_pick", Heads(one=True), ("bert", 1, 2), what="head opened"),
        _c("heads_map_head", HEAD, 5, what="head shown"),
        _c("heads_off", Heads(), [("bert", 0, 1), ("inter", 0, 0)], what="heads switched off"),
        _c("heads_ft_stat", Choice(tuple(BERT_STATS)), "next", what="fine-tuning statistic"),
        _c("heads_ft_colors", Choice(COLORSCALES), "YlOrRd", what="fine-tuning colour scale"),
        _c("heads_other", Text(), "untrained (random scorer)", what="second model")),
    "what_if": (
        _c("whatif_source", Choice(("Edits", "Pasted text")), "Pasted text", what="document B"),
        _c("whatif_edits", Edits(), ["delete:1"], "edits"),
        _c("whatif_b", Document(), None, what="pasted document B"),
        _c("whatif_head", Heads(one=True), ("bert", 0, 1), what="head opened"),
        _c("whatif_patch_sentence", Index(), 1, what="patched sentence"),
        _c("whatif_heads", Flag(), False, what="every BERT head")),
    "corpus": (
        _c("corpus_run", Text(), None, what="corpus run"),
        _c("corpus_part", Choice(PARTS), "inter", what="encoder"),
        _c("corpus_stat", Text(), "entropy", what="statistic")),
    "learn": (
        _c("learn_layer", LAYER, 3), _c("learn_head", Index(), 6), _c("learn_query", Index(), 4, what="query token"),
        CAUSAL, _c("learn_sep", Flag(), True, what="head that looks at [SEP]")),
}
NOT_VIEW = {"whatif_kind": "the kind of edit being composed (the edits made are the view's)"}  # kept, not shown
CONTROLS: dict[str, Control] = {c.key: c for cs in PAGES.values() for c in cs}  # by session key
BY_NAME: dict[str, Control] = {c.name: c for c in CONTROLS.values()}           # by URL name
PER_RESULT = {"bert_range", "batch_doc", "why_sentence", "why_board", "why_methods", "why_i", "why_j", "why_route", "heads_map_head"}
# ^ values that belong to one result (a sentence, a range): a new Summarize starts them at their default,
#   unless a view set them for it (``taken``)
TAKEN = "_view_taken"  # the per-result keys a view set, not yet drawn: kept for the result the view names
DOCUMENTS = {c.key for c in CONTROLS.values() if isinstance(c.kind, Document)}


def controls(page: str) -> tuple[Control, ...]:
    return PAGES.get(page, ())


# ---------------------------------------------------------------- a view from a session, and back
def current(state, page: str, params: dict | None, doc: str | None, chart: str | None = None,
            ref: str | None = None) -> dict:
    """The view ``state`` shows on ``page`` for the result ``params`` (whose document is ``doc``;
    None before a Summarize; ``ref``: the reference summary's id, if any): only that page's
    controls, those the session has a value for."""
    result = {"doc": doc, "k": params["k"], "tb": params["block_trigram"], "w": params["weights"],
              "win": int(state.get("window", 0) or 0)} if params is not None else {"doc": None}
    return {"page": page, **result, "pickers": {c.key: state[c.key] for c in controls(page) if c.key in state},
            "chart": chart, **({"ref": ref} if ref else {})}


def take(state, pickers: dict, keep, complete: bool = False) -> None:
    """Write a view's pickers into ``state`` (each through ``keep``, so it outlives runs that do not
    draw it). ``complete`` (a class's or a slide's whole view): every control the view does not name
    goes back to its default."""
    for key, value in pickers.items():
        if key in CONTROLS:
            state[keep(key)] = value
            if key in PER_RESULT:
                state.setdefault(TAKEN, set()).add(key)
    if complete:
        for c in CONTROLS.values():
            if c.key not in pickers:
                state.pop(c.key, None)


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


# ---------------------------------------------------------------- codecs
def _checked(c: Control, read, raw) -> tuple[Any, str | None]:
    try:
        return read(raw), None
    except Partly as e:  # the part that could be read, and what could not
        return e.value, f"{c.name} {e}"
    except (Bad, TypeError, ValueError, KeyError, IndexError, RecursionError) as e:
        shown = raw if isinstance(raw, str) else json.dumps(raw, default=str)[:60]
        why = str(e) if isinstance(e, Bad) else "cannot be read"
        return None, f"{c.name}={str(shown)[:60]} {why}"


def to_query(view: dict, doc_id=None) -> dict[str, str]:
    """A view as a link's query parameters (numbers from 1). ``doc_id(text)``: a Document value's
    id in the document store (without one, such values are left out)."""
    out = {"doc": view["doc"], "k": str(view["k"]), "tb": "1" if view["tb"] else "0"} if view.get("doc") else {}
    if view.get("w"):
        out["w"] = view["w"]
    if view.get("win"):
        out["win"] = str(view["win"] + 1)
    if view.get("ref"):
        out["ref"] = view["ref"]
    for key, value in view["pickers"].items():
        c = CONTROLS.get(key)
        if c is None or value is None and not isinstance(c.kind, Index):
            continue
        if isinstance(c.kind, Document):
            if doc_id is None:
                continue
            ref = doc_id(value)
            if ref is not None:  # (None: the store is down; the link leaves it out)
                out[c.name] = ref
            continue
        out[c.name] = c.kind.url(value)
    return out


def from_query(q: dict, get_doc=None) -> tuple[dict, list[str]]:
    """A link's pickers (session keys → values) and the problems of those it could not read, one
    sentence each. Names of any page are read (old links named BERT's layer "layer"). ``get_doc(id)``:
    a Document value's text (None: no longer on this server)."""
    pickers, problems = {}, []
    for name, raw in q.items():
        c = BY_NAME.get(name)
        if c is None:
            continue
        if len(raw) > MAX_QUERY:
            problems.append(f"{name} is too long to be a setting ({len(raw):,} characters)")
            continue
        if isinstance(c.kind, Document):
            text = get_doc(raw) if get_doc is not None else None
            if text is None:
                problems.append(f"{name}: its document is no longer on this server")
            else:
                pickers[c.key] = text
            continue
        value, problem = _checked(c, c.kind.from_url, raw)
        if problem:
            problems.append(problem)
        if not problem or value is not None:  # (a part read: kept, the rest named)
            pickers[c.key] = value
    return pickers, problems


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


def from_store(view: dict) -> tuple[dict, list[str]]:
    """A view as the store's JSON gives it back: its pickers in their session form (tuples again),
    those that are not a control's value left out with a problem each."""
    pickers, problems = {}, []
    for key, raw in (view.get("pickers") or {}).items():
        c = CONTROLS.get(key)
        if c is None:
            continue
        value, problem = _checked(c, c.kind.stored, raw)
        if problem:
            problems.append(problem)
        if not problem or value is not None:
            pickers[key] = value
    return {**view, "pickers": pickers}, problems


def beyond(pickers: dict, shapes: dict) -> list[tuple[str, str]]:
    """The pickers that name a layer or head ``shapes`` ({"bert": (layers, heads), "inter": …})
    does not have: [(key, one sentence)]."""
    out = []
    for key, value in pickers.items():
        heads = value if key == "heads_off" else [value] if key in ("heads_pick", "whatif_head") else []
        for part, layer, head in heads:
            L, H = shapes[part]
            if layer >= L or head >= H:
                out.append((key, f"{key}: the model has no {part} layer {layer + 1}, head {head + 1} "
                                 f"(layers 1-{L}, heads 1-{H})"))
        if key in DIMENSIONS and isinstance(value, int):
            part, axis = DIMENSIONS[key]
            if value >= shapes[part][axis]:
                what = ("layer", "head")[axis]
                out.append((key, f"{key} = {value + 1}: the model's {'BERT' if part == 'bert' else 'sentence encoder'} "
                                 f"has {what}s 1 to {shapes[part][axis]}"))
    return out
