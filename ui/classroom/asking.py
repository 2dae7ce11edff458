"""A lesson step's question that takes answers (issue 49), under the step's text: a student's
control (saved to the class at once, changeable until the reveal, kept over a reload), the
teacher's live count and chart of the class's answers with Reveal and a CSV of every answer, and
for someone stepping alone their own Reveal. After the reveal: the model's answer beside the
class's, and how many got it."""
from __future__ import annotations

import numpy as np
import streamlit as st

from ui.classroom.answers import as_csv, asks_of, give, left, mine, of_step, refused_words, reveal, revealed, sit, step_id
from ui.questions import MODELS, Ask, Refused, described, is_right, model_answer, read_number, valid
from ui.classroom.session import JOINED, LEADER, SESSION, STEP, TEACHING, client
from ui.classroom.store import attendance
from ui.errors import shared
from viz.common import markdown_text, plural

TALLY_S = 2.0  # the teacher's count and chart are read again this often (three small reads: revealed?, the
               # step's answers with the class's seats, attendance)


def asked() -> tuple[dict, Ask, object] | None:
    """The lesson step, its question and the result it asks about (None: no question here, or no
    result yet: that is said)."""
    s = st.session_state.get(STEP)
    if not s or not s.get("ask"):
        return None
    from ui.runs import current_trace

    trace = current_trace()
    if trace is None:
        st.caption("Summarize the lesson's document to answer (the question needs its sentences and heads).")
        return None
    return s, Ask.from_dict(s["ask"]), trace


def question_panel(store) -> None:
    """Under the step's text: what this session does with the step's question, by role (homework:
    ui.classroom.homework.question_panel)."""
    found = asked()
    if found is None:
        return
    s, ask, trace = found
    if st.session_state.get(TEACHING):
        teacher_side(store, st.session_state[TEACHING], s, ask, trace)
    elif st.session_state.get(JOINED):
        student_side(store, st.session_state[JOINED], s, ask, trace)
    else:
        alone_side(s, ask, trace)


def model_pick(trace) -> list[int]:
    return sorted(trace.summary.selected)


def shape(ask: Ask, trace) -> tuple[int, int]:
    a = trace.bert_attention if ask.model == "bert" else trace.inter_attention
    return int(a.shape[0]), int(a.shape[1])


def checked(ask: Ask, value, trace) -> tuple[object, bool | None]:
    """(the answer as stored, whether it is right) or Refused."""
    value = valid(ask, value, len(trace.summary.sentences), st.session_state.get("k", 3), shape(ask, trace))
    return value, is_right(ask, value, model_pick(trace))


def control(ask: Ask, s: dict, trace, stored, locked: bool):
    """The answer control (keyboard first); → the answer it now holds, in stored form, or None."""
    key = f"answer_{step_id(s)}"
    if ask.kind == "choice":
        if key not in st.session_state and stored is not None:
            st.session_state[key] = stored
        return st.radio("Your answer", range(len(ask.options)), key=key, disabled=locked,
                        format_func=lambda i: f"{chr(65 + i)}. {markdown_text(ask.options[i])}",
                        **({} if key in st.session_state else {"index": None}))
    if ask.kind == "sentences":
        # one toggle per sentence number (the document is on the page above): a click or Space picks
        # exactly one; no "select all" or "select N matches" to pick more than was meant
        n, want = len(trace.summary.sentences), ask.pick_of(st.session_state.get("k", 3))
        if key not in st.session_state and stored is not None:
            st.session_state[key] = list(stored)
        picked = st.pills(f"Your answer: the {want} sentences the model will pick (by number)", range(n), key=key,
                          selection_mode="multi", disabled=locked, format_func=lambda i: f"{i + 1}") or []
        if not locked:  # (a toolbar of toggles, WAI-ARIA's pattern: one Tab stop, arrows inside, aria-pressed)
            st.caption(KEYS.replace("Space or Enter to pick", "Space or Enter to pick or unpick"))
        if len(picked) != want and not locked:
            st.caption(f"Pick {want}: {len(picked)} picked" + (" (too many: take one off)." if len(picked) > want
                                                                 else " so far."))
        return sorted(picked) if len(picked) == want else None
    if ask.kind == "head":
        L, H = shape(ask, trace)
        keys = (f"{key}_layer", f"{key}_head")
        if keys[0] not in st.session_state and stored is not None:
            st.session_state[keys[0]], st.session_state[keys[1]] = stored
        c = st.columns(2)
        layer = c[0].selectbox("Layer", range(L), key=keys[0], format_func=lambda i: f"{i + 1}", disabled=locked,
                               placeholder="Layer…", **({} if keys[0] in st.session_state else {"index": None}))
        head = c[1].selectbox("Head", range(H), key=keys[1], format_func=lambda i: f"{i + 1}", disabled=locked,
                              placeholder="Head…", **({} if keys[1] in st.session_state else {"index": None}))
        if not locked:
            head_rows(key, (layer, head), (L, H), MODELS[ask.model])
        return [layer, head] if layer is not None and head is not None else None
    if key not in st.session_state and stored is not None:
        st.session_state[key] = f"{float(stored):g}"
    typed = st.text_input(f"Your answer, from {ask.low:g} to {ask.high:g}{f' (in {ask.unit})' if ask.unit else ''}",
                          key=key, disabled=locked, max_chars=40, placeholder="8.5 or 8,5",
                          help="A point or a comma for the decimals, as you write them.")
    try:  # as the student writes it (8,5 is 8.5, never 85), or refused in one sentence
        value = read_number(typed or "", ask.unit)
    except ValueError as e:
        st.error(str(e))
        return None
    if value is not None and not ask.low <= value <= ask.high:
        st.error(f"{value:g} is not from {ask.low:g} to {ask.high:g}: answer within the range.")
        return None
    return value


def sent(ask: Ask, s: dict, trace) -> bool:
    """Whether what the browser left in the control's keys is something the control can hold (a
    crafted message can put anything there, and Streamlit would turn ∞ into a number in range)."""
    key, get = f"answer_{step_id(s)}", st.session_state.get
    whole = lambda x, n: isinstance(x, int) and not isinstance(x, bool) and 0 <= x < n  # noqa: E731
    if ask.kind == "choice":
        return get(key) is None or whole(get(key), len(ask.options))
    if ask.kind == "sentences":
        v, n = get(key), len(trace.summary.sentences)
        return v is None or isinstance(v, list) and len(set(v)) == len(v) <= n and all(whole(i, n) for i in v)
    if ask.kind == "head":
        L, H = shape(ask, trace)
        return all(get(k) is None or whole(get(k), n) for k, n in ((f"{key}_layer", L), (f"{key}_head", H)))
    v = get(key)
    return v is None or isinstance(v, str) and len(v) <= 40  # (what it says is read, and checked, by control)


def held(ask: Ask, s: dict, trace, stored, locked: bool):
    """``control``, unless the browser sent something no control gives (a crafted message): said in
    one sentence, the control emptied, the stored answer left as it was."""
    if not sent(ask, s, trace):
        for key in [k for k in st.session_state if str(k).startswith(f"answer_{step_id(s)}")]:
            del st.session_state[key]
        st.error("That answer is not one this question takes: answer again.")
        return None
    try:
        return control(ask, s, trace, stored, locked)
    except (TypeError, ValueError, KeyError, IndexError):
        st.error("That answer is not one this question takes: answer again.")
        return None


KEYS = "Keys: Tab to the numbers, ← → to move between them, Space or Enter to pick, Tab to leave."


def head_rows(key: str, picked: tuple, shape: tuple[int, int], model: str) -> None:
    """One tap picks a head: a row of head numbers per layer (a toggle group each, as the sentence
    picker; a Plotly grid took two taps on a phone: the first only hovered). The picked head is
    pressed in its row; a tap anywhere sets both pickers above."""
    L, H = shape
    with st.container(key=f"{key}_grid"):
        st.caption(f"…or tap a head of {model}: a row per layer. {KEYS}")
        for layer in range(L):
            row = f"{key}_row{layer}"
            st.session_state[row] = picked[1] if picked[0] == layer else None  # (before the row is drawn this run)
            st.pills(f"Layer {layer + 1}", range(H), key=row, format_func=lambda h: f"{h + 1}",
                     on_change=tapped_head, args=(key, layer, shape))


def tapped_head(key: str, layer: int, shape: tuple[int, int]) -> None:
    """A tap on a row of the head grid: that layer and head go to the two pickers (a value that is no
    head, as only a tampered message could send, is ignored; a tap on the picked head keeps it)."""
    head = st.session_state.get(f"{key}_row{layer}")
    if isinstance(head, int) and 0 <= layer < shape[0] and 0 <= head < shape[1]:
        st.session_state[f"{key}_layer"], st.session_state[f"{key}_head"] = layer, head


def student_side(store, code: str, s: dict, ask: Ask, trace) -> None:
    sid, seat = step_id(s), st.session_state.get(SESSION)
    if seat is None:
        return
    done = bool(s.get("revealed")) or shared(revealed, store, code, sid, default=False)
    stored = shared(mine, store, code, sid, seat)
    gone = not done and shared(left, store, code, sid, seat, default=False)  # left to explore while it was hidden
    value = held(ask, s, trace, stored, locked=done or gone)
    if gone:
        st.caption(":material/lock: You left to explore while the answer was hidden, so your answer stays as it was "
                   + (f"({markdown_text(described(ask, stored))})." if stored is not None else "(none)."))
        return
    if not done and value is not None and value != stored:
        try:
            value, right = checked(ask, value, trace)
        except Refused as e:
            st.error(str(e))
            return
        if why := shared(sit, store, code, seat, client(), default=None):  # (joined while the store was down)
            st.warning(refused_words(why))
            return
        given = shared(give, store, code, sid, seat, value, right, default=None)  # None: the store is down
        if given is False:
            st.warning("The answers to this step are closed (the teacher revealed it).")
            return
        if given is None:
            st.caption(":material/cloud_off: Not saved yet: the class's store cannot be reached. Your answer is "
                       "sent again with your next click, once it is back.")
            return
        stored = value
    if not done:
        if stored is not None and value != stored:  # the control holds less than an answer (2 of 3 picked)
            st.caption(f"Your saved answer is still {markdown_text(described(ask, stored))}: it changes when you "
                       "finish the new one.")
        else:
            st.caption(":material/check_circle: **Answered.** You can change it until the teacher "
                       + ("shows the class's answers." if ask.opinion else "reveals the answer.")
                       if stored is not None else "Not answered yet: your teacher sees only how many answered, not who.")
        return
    yours(ask, stored, trace)
    rows = shared(of_step, store, code, sid, default=[]) or []
    results(ask, [r[1] for r in rows], trace, f"answers_{sid}")


def alone_side(s: dict, ask: Ask, trace) -> None:
    """Stepping a lesson alone: the answer stays in this session; Reveal when ready."""
    value = held(ask, s, trace, None, locked=bool(s.get("revealed")))
    if not s.get("revealed"):
        if st.button(reveal_label(ask), key=f"reveal_{step_id(s)}", icon=":material/visibility:"):
            st.session_state[STEP] = {**s, "revealed": True}
            st.rerun()
        return
    try:
        value = checked(ask, value, trace)[0] if value is not None else None
    except Refused:
        value = None
    yours(ask, value, trace)


def reveal_label(ask: Ask) -> str:
    """The reveal button's words: an opinion has no model's answer to reveal."""
    return "Show the class's answers" if ask.opinion and ask.kind != "sentences" else "Reveal the model's answer"


def yours(ask: Ask, value, trace) -> None:
    """The model's answer and, if given, this student's, right or not (in words and a symbol)."""
    answer = model_answer(ask, model_pick(trace))
    st.markdown(f"**The model's answer:** {markdown_text(answer)}" if answer else
                "**No right answer:** this question asks for an opinion.")
    if value is None:
        st.caption("You did not answer this one.")
        return
    right = is_right(ask, value, model_pick(trace))
    verdict = "" if right is None else (" — :material/check: right" if right else " — :material/close: not this time")
    extra = ""
    if ask.kind == "sentences":
        extra = f" ({len(set(value) & set(model_pick(trace)))} of {len(model_pick(trace))} are the model's)"
    st.markdown(f"**Your answer:** {markdown_text(described(ask, value))}{verdict}{extra}")


def results(ask: Ask, values: list, trace, key: str, shown: bool = True) -> None:
    """The class's answers as a chart (with its "As text"); ``shown``: with the model's answer
    marked, how many got it, and for sentences the overlap and the class's favourites."""
    from ui.figures import plot
    from viz import answers as V

    if not values:
        st.caption("No answers yet.")
        return
    pick = model_pick(trace)
    if ask.kind == "choice":
        counts = np.bincount(values, minlength=len(ask.options))
        fig = V.choice_chart(counts, ask.options, ask.right if shown else None)
    elif ask.kind == "sentences":
        counts = np.bincount([i for v in values for i in v], minlength=len(trace.summary.sentences))
        fig = V.sentence_chart(counts, trace.summary.sentences, pick if shown else None)
    elif ask.kind == "head":
        counts = np.zeros(shape(ask, trace), dtype=np.int64)
        for layer, head in values:
            counts[layer, head] += 1
        fig = V.head_chart(counts, ask.right if shown else None, MODELS[ask.model])
    else:
        fig = V.number_chart(values, ask.answer if shown else None, ask.tolerance, ask.unit, ask.low, ask.high)
    plot(fig, key=key)
    if not shown:
        return
    rights = [is_right(ask, v, pick) for v in values]
    if rights and rights[0] is not None:
        st.markdown(f"**{sum(rights)} of {plural(len(values), 'answer')} right.**")
    if ask.kind == "sentences":
        overlap = np.mean([len(set(v) & set(pick)) for v in values])
        favourite = sorted(np.argsort(-counts, kind="stable")[:len(pick)].tolist())
        st.markdown(f"On average **{overlap:.1f} of {len(pick)}** sentences picked are the model's. The class's "
                    f"favourites: {', '.join(str(i + 1) for i in favourite)}; the model's: "
                    f"{', '.join(str(i + 1) for i in pick)}.")


def reveal_button(store, code: str, s: dict) -> None:
    """The teacher's Reveal, in the bar above the page with Back, Next and Answers and End
    (ui.classroom.steps.step_text): on a projector at 1280×720 they are all on the first screen."""
    ask = Ask.from_dict(s["ask"])
    st.button(reveal_label(ask), key=f"reveal_{step_id(s)}", icon=":material/visibility:", type="primary",
              on_click=revealing, args=(store, code, s), width="stretch",
              help="Shows every student the class's answers" + ("" if ask.opinion else " and the model's")
                   + "; answers to this step close.")


def revealing(store, code: str, s: dict) -> None:
    if shared(reveal, store, code, step_id(s), st.session_state.get(LEADER, ""), default=False):
        st.session_state[STEP] = {**s, "revealed": True}


@st.fragment(run_every=TALLY_S)
def teacher_side(store, code: str, s: dict, ask: Ask, trace) -> None:
    """Live: "17 of 24 answered"; the class's answers as CSV; after Reveal (in the bar above), the class's answers
    (a chart, and its "As text"). Before it they are drawn only in the teacher's console
    (ui.classroom.console), since this page may be projected. Read again every TALLY_S."""
    from ui import figures

    figures.forget_kind("answers")  # a fragment's rerun draws the chart again: its plain words too
    sid = step_id(s)
    done = bool(s.get("revealed")) or bool(shared(revealed, store, code, sid, default=False))
    rows = shared(of_step, store, code, sid, default=[]) or []
    connected = (shared(attendance, store, code, default=(0, 0)) or (0, 0))[0]
    st.markdown(f"**{len(rows)} of {plural(max(connected, len(rows)), 'student')} answered**"
                + (" · revealed" if done else " · answers are open"))
    if done and not s.get("revealed"):  # revealed before (Back to this step), or from the console: the class
        st.session_state[STEP] = {**s, "revealed": True}  # sees it, and the bar above has no Reveal any more
        st.rerun()
    from ui.classroom.steps import OWN

    own = dict(st.session_state.get(OWN, {}))  # (read here: the CSV is made on another thread)
    st.download_button("Answers as CSV", lambda: answers_csv(store, code, own), file_name=f"class_{code}_answers.csv",
                         mime="text/csv", key=f"answers_csv_{sid}", on_click="ignore", icon=":material/download:",
                         help="Every answer of this class: seat, step, answer, right.")
    if done:
        results(ask, [r[1] for r in rows], trace, f"answers_{sid}")
        return
    from ui.classroom.store import console_link

    st.caption("The room's answers stay off this page until you reveal them (it may be on the projector): they are "
               "in your console, with your note and the next step.")
    href = shared(console_link, store, code, st.context.url or "", default="") or "/"
    st.link_button("Open the teacher's console", href, icon=":material/co_present:",
                   help="A window of your own beside this one: keep it off the projector.")


def answers_csv(store, code: str, own: dict) -> str:
    """The class's answers as CSV, made only when the teacher clicks (on a thread of its own, so no
    Streamlit call here), with the shipped lessons' and this session's own lessons' questions."""
    from ui.tour import lessons
    from ui.store import Unavailable

    try:
        return as_csv(store, code, asks_of({**lessons(), **own}))
    except Unavailable as e:
        return f"# not made: {e}; download it again in a moment\n"
