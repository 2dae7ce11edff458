"""A story step's question, made in the Story panel (issue 59): the four kinds a lesson asks
(ui.questions), the right answer set or left out (an opinion), the model's own answer
filled in where it can be computed: the head the step's view shows, or the head highest on a
statistic of the Heads page (``fill_head``), a share measured on the step's document
(``fill_number``); "which sentences" is always the model's summary when played. Checked by the lesson checker's own rules (questions.table_problems)
and said in the editor's words, so the story downloads as a lesson file that passes the checker."""
from __future__ import annotations

import numpy as np
import streamlit as st

from ui.questions import KINDS, MODELS, from_toml, table_problems
from viz.common import markdown_text

ASKS = {"choice": "Options", "sentences": "Which sentences", "head": "Which head", "number": "A number"}
WORDS = {"options": "Options: write 2 to 6, one per line, each different.",
         "range": "Range: the lowest must be below the highest."}  # the checker's words for keys the editor names


def shown_head(step, model: str) -> tuple[int, int]:
    """The head the step's view shows (from 1), the model's answer a head question starts from."""
    p = step.view.pickers
    opened = p.get("heads_pick")
    if isinstance(opened, (list, tuple)) and len(opened) == 3 and opened[0] == model:
        return int(opened[1]) + 1, int(opened[2]) + 1
    prefix = "bert" if model == "bert" else "inter"
    return int(p.get(f"{prefix}_layer", 0)) + 1, int(p.get(f"{prefix}_head", 0)) + 1


def measured(store, step, importance: bool = False) -> dict | None:
    """The Heads page's statistics of every head ({"bert"|"inter": {name: [L, H]}}) on the step's
    document and settings, from the server's result cache, and with ``importance`` "importance" too
    (what the Heads page ranks by: the exact ablation when anyone on this server computed it, else
    the gradient estimate, computed here once); None: its document is no longer on this server."""
    from analysis import heads as AH
    from ui.arrival import document_of
    from ui.errors import shared
    from ui.models import weights_choices
    from ui.resources import get_model
    from ui.runs import cached, head_stats, peek, run_trace

    view = step.view
    text = shared(document_of, store, view.doc)
    if not text:
        return None
    weights = view.w if view.w in weights_choices() else st.session_state.get("weights")
    params = dict(text=text, k=view.k, block_trigram=view.tb, weights=weights or weights_choices()[0],
                  device=st.session_state.get("device") or "cpu")
    stats = head_stats(params, run_trace(**params, window=view.win))
    if not importance:
        return stats
    ablation = peek("ablation", params)
    importance = ablation.importance if ablation is not None else cached("gradient", params, lambda: dict(zip(
        AH.PARTS, AH.importance_gradient(get_model(params["weights"], params["device"]), text, view.k, view.tb))),
        model_run=True)
    return {part: {IMPORTANCE: np.asarray(importance[part]), **stats[part]} for part in stats}


IMPORTANCE = "importance"


def statistics(model: str) -> dict[str, str]:
    """What "Fill in the model's head" may rank heads by: importance first, then the statistics."""
    from analysis import heads as AH

    return {IMPORTANCE: "importance (what the Heads page ranks by)",
            **(AH.BERT_STATS if model == "bert" else AH.INTER_STATS)}


def shown_statistic(step, model: str) -> str:
    """The statistic the step's view shows: a Heads step's statistic on its Statistics view, else importance."""
    from ui.view import default

    p = step.view.pickers
    if step.page == "heads" and p.get("heads_view", default("heads_view")) == "Statistics":
        return p.get("heads_stat" if model == "bert" else "heads_inter_stat") or IMPORTANCE
    return IMPORTANCE


SHARES = ("cls", "first_cls", "sep", "punctuation", "previous", "next", "same_sentence", "other_sentences")  # 0-1


def fill_head(store, step, uid: str) -> None:
    """The model's answer to "which head": the one highest on the picked statistic, on the step's document."""
    model = st.session_state.get(f"q_model_{uid}") or "bert"
    name = st.session_state.get(f"q_stat_{model}_{uid}") or IMPORTANCE
    stats = measured(store, step, importance=name == IMPORTANCE)
    if stats is None:
        st.session_state[f"q_wrong_{uid}"] = ["This step's document is no longer on this server: fill it in yourself."]
        return
    m = stats[model][name]
    layer, head = (int(i) for i in np.unravel_index(int(np.argmax(m)), m.shape))
    st.session_state.update({f"q_layer_{uid}": layer + 1, f"q_head_{uid}": head + 1, f"q_has_right_{uid}": True,
                             f"q_filled_{uid}": ("head", f"Filled in: the head highest on {statistics(model)[name]} on this "
                                                         f"step's document, layer {layer + 1}, head {head + 1} "
                                                         f"({m[layer, head]:.3g}).")})
    st.session_state.pop(f"q_wrong_{uid}", None)


def fill_number(store, step, uid: str) -> None:
    """The model's answer to a number question: the picked share of a BERT head on the step's document, in %."""
    stats = measured(store, step)
    if stats is None:
        st.session_state[f"q_wrong_{uid}"] = ["This step's document is no longer on this server: fill it in yourself."]
        return
    name = st.session_state.get(f"q_nstat_{uid}") or SHARES[0]
    layer, head = int(st.session_state.get(f"q_nlayer_{uid}") or 1), int(st.session_state.get(f"q_nhead_{uid}") or 1)
    L, H = stats["bert"][name].shape
    if not (1 <= layer <= L and 1 <= head <= H):
        st.session_state[f"q_wrong_{uid}"] = [f"The model has BERT layers 1-{L} and heads 1-{H}."]
        return
    value = round(100 * float(stats["bert"][name][layer - 1, head - 1]), 1)
    st.session_state.update({f"q_answer_{uid}": value, f"q_has_right_{uid}": True, f"q_unit_{uid}": "%",
                             f"q_low_{uid}": 0.0, f"q_high_{uid}": 100.0,
                             f"q_tolerance_{uid}": st.session_state.get(f"q_tolerance_{uid}") or 10.0,
                             f"q_filled_{uid}": ("number", f"Filled in: BERT layer {layer}, head {head}'s "
                                                           f"{statistics('bert')[name]} on this step's document, "
                                                           f"{value:g} %.")})
    st.session_state.pop(f"q_wrong_{uid}", None)


def table(uid: str, step) -> dict:
    """The editor's values as a lesson's [steps.answer] table (numbers from 1)."""
    g = lambda name, default=None: st.session_state.get(f"q_{name}_{uid}", default)  # noqa: E731
    kind = g("kind")
    if kind == "choice":
        options = [o.strip() for o in (g("options") or "").splitlines() if o.strip()]
        right = [options.index(r) + 1 for r in g("right") or [] if r in options]
        return {"kind": kind, "options": options, **({"right": right} if right else {})}
    if kind == "sentences":
        return {"kind": kind, "pick": int(g("pick") or step.view.k)}
    if kind == "head":
        right = [[int(g("layer")), int(g("head"))]] if g("has_right", True) else []
        return {"kind": kind, "model": g("model") or "bert", **({"right": right} if right else {})}
    out = {"kind": "number", "unit": g("unit") or "", "range": [float(g("low", 0.0)), float(g("high", 100.0))]}
    if g("has_right", False):
        out.update(answer=float(g("answer") or 0.0), tolerance=float(g("tolerance") or 0.0))
    return out


def save(step, i: int, keep) -> None:
    """The Save button's callback: the question checked as a lesson file's would be, kept (``keep(i,
    question=…, ask=…)``) or said."""
    from ui.tour import model_shapes

    uid = step.key
    asked = (st.session_state.get(f"q_text_{uid}") or "").strip()
    found = table(uid, step)
    wrong = [WORDS.get(k, m[:1].upper() + m[1:] + ".") for k, m in table_problems(found, model_shapes())]
    if not asked:
        wrong.insert(0, "Write the question itself.")
    if wrong:
        st.session_state[f"q_wrong_{uid}"] = wrong
        return
    st.session_state.pop(f"q_wrong_{uid}", None)
    keep(i, question=asked, ask=from_toml(found))


def remove(step, i: int, keep) -> None:
    for key in [k for k in st.session_state if k.startswith("q_") and k.endswith(f"_{step.key}")]:
        del st.session_state[key]  # the editor starts again from no question
    keep(i, question="", ask=None)


def defaults(step) -> dict:
    """The editor's first values: the saved question's, else the model's answer where the step's
    view gives it (the head it shows) and plain defaults."""
    k = step.view.k
    layer, head = shown_head(step, "bert")
    out = {"text": step.question, "options": "", "right": [], "pick": k, "model": "bert",
           "has_right": True, "layer": layer, "head": head, "low": 0.0, "high": 100.0, "unit": "",
           "answer": 0.0, "tolerance": 0.0, "nlayer": layer, "nhead": head,
           "stat_bert": shown_statistic(step, "bert"), "stat_inter": shown_statistic(step, "inter")}
    ask = step.ask
    if ask is None:
        return {**out, "kind": None}
    out["kind"] = ask.kind
    if ask.kind == "choice":
        out.update(options="\n".join(ask.options), right=[ask.options[r] for r in ask.right])
    elif ask.kind == "sentences":
        out["pick"] = ask.pick or k
    elif ask.kind == "head":
        layer, head = (ask.right[0][0] + 1, ask.right[0][1] + 1) if ask.right else shown_head(step, ask.model)
        out.update(model=ask.model, has_right=bool(ask.right), layer=layer, head=head)
    else:
        out.update(has_right=ask.answer is not None, answer=ask.answer or 0.0, tolerance=ask.tolerance, unit=ask.unit,
                   low=ask.low, high=ask.high)
    return out


def editor(store, step, i: int, keep) -> None:
    """Step ``i``'s question (``step``: a ui.tour.Step): its kind, text and answer (the model's filled
    in on request); Save checks it, then ``keep(i, question=…, ask=…)`` keeps it."""
    uid = step.key
    for name, value in defaults(step).items():  # (set once; the widgets below take no value of their own)
        st.session_state.setdefault(f"q_{name}_{uid}", value)
    with st.expander("Its question", icon=":material/quiz:"):  # (one label: a new one would close it)
        if step.ask:
            st.caption(f"Saved: {markdown_text(step.question)}")
        kind = st.selectbox("Kind", KINDS, key=f"q_kind_{uid}", format_func=ASKS.get, placeholder="No question",
                            help="Options: one or more right, or none (an opinion). Which sentences will the model "
                                 "pick. Which head (a layer and a head). A number in a range.")
        if kind is None:
            return
        st.text_input("Question", key=f"q_text_{uid}", max_chars=300)
        if kind == "choice":
            st.text_area("Options, one per line (2 to 6)", key=f"q_options_{uid}", height=110)
            options = [o.strip() for o in (st.session_state.get(f"q_options_{uid}") or "").splitlines() if o.strip()]
            st.session_state[f"q_right_{uid}"] = [r for r in st.session_state[f"q_right_{uid}"] if r in options]
            st.multiselect("Right answers (none: an opinion)", options, key=f"q_right_{uid}")
        elif kind == "sentences":
            st.number_input("How many sentences", 1, 10, key=f"q_pick_{uid}")
            st.caption("The right answer is the model's own summary, computed when the step is played.")
        elif kind == "head":
            st.radio("Of", list(MODELS), key=f"q_model_{uid}", format_func=lambda m: MODELS[m][:1].upper() + MODELS[m][1:],
                     horizontal=True)
            st.checkbox("It has a right answer", key=f"q_has_right_{uid}")
            c = st.columns(2)
            c[0].number_input("Layer", 1, 48, key=f"q_layer_{uid}",
                              help="Filled in with the head this step shows: change it if the answer is another.")
            c[1].number_input("Head", 1, 64, key=f"q_head_{uid}")
            model = st.session_state.get(f"q_model_{uid}") or "bert"
            names = statistics(model)
            st.selectbox("…or the model's: the head highest on", list(names), key=f"q_stat_{model}_{uid}",
                         format_func=names.get, help="Computed on this step's document, as the Heads page does.")
            st.button("Fill in the model's head", key=f"q_fill_head_{uid}", on_click=fill_head,
                      args=(store, step, uid), width="stretch")
        else:
            c = st.columns(3)
            c[0].number_input("Lowest", key=f"q_low_{uid}")
            c[1].number_input("Highest", key=f"q_high_{uid}")
            c[2].text_input("Unit", key=f"q_unit_{uid}", max_chars=12, placeholder="%")
            if st.checkbox("It has a right answer", key=f"q_has_right_{uid}"):
                c = st.columns(2)
                c[0].number_input("Right answer", key=f"q_answer_{uid}")
                c[1].number_input("Right within ±", 0.0, key=f"q_tolerance_{uid}")
            names = statistics("bert")
            st.selectbox("…or the model's: a share measured on this document", SHARES, key=f"q_nstat_{uid}",
                         format_func=names.get, help="Of the BERT head below, in % (0-100), as the Heads page computes it.")
            c = st.columns(2)
            c[0].number_input("Of layer", 1, 48, key=f"q_nlayer_{uid}")
            c[1].number_input("head", 1, 64, key=f"q_nhead_{uid}")
            st.button("Fill in the measured share", key=f"q_fill_number_{uid}", on_click=fill_number,
                      args=(store, step, uid), width="stretch")
        filled_kind, filled = st.session_state.get(f"q_filled_{uid}") or (None, "")
        if filled_kind == kind:  # what the last Fill in put in, for this kind
            st.caption(markdown_text(filled))
        st.button("Save the question", key=f"q_save_{uid}", type="primary", on_click=save,
                  args=(step, i, keep), width="stretch")
        if step.ask:
            st.button("Remove the question", key=f"q_remove_{uid}", on_click=remove, args=(step, i, keep),
                      width="stretch")
        for problem in st.session_state.get(f"q_wrong_{uid}", []):
            st.error(markdown_text(problem))
