"""A lesson's steps computed ahead (issue 58): when a class starts on a lesson, a background
thread computes, in lesson order, the model results each step's page needs (the Trace of its BERT
window, what each token used, the words' attributions, the heads' statistics and importance, What if's comparison)
into the server-wide result cache, before the teacher gets there; every student's page then draws
from the cache. The keys are the pages' own (ui.runs.cached, ui.runs.run_trace), so a step is
computed once whoever asks first. No Streamlit calls here: it runs outside any session."""
from __future__ import annotations

import logging
import threading

from ui.tour import Tour
from ui.view import value

_STARTED: set[tuple] = set()  # (class code, lesson name, document): warmed once per server process
_LOCK = threading.Lock()


def results_for(page: str, view: dict) -> tuple[str, ...]:
    """What a step's page computes from the model beyond the Trace (its view's pickers decide)."""
    if page == "why":
        return ("explanation",)
    if page == "masks_positions":  # its padded batch of this document and two others (3 forwards)
        return ("batch",)
    if page == "what_if":  # A and B compared (2 forwards, every window's attention)
        return ("whatif",)
    if page == "heads":
        return ("stats",) + (("gradient",) if value(view, "heads_view") != "What fine-tuning changed" else ())
    if (page == "bert_attention" and value(view, "bert_show") != "attention"
            or page == "sentence_encoder" and value(view, "inter_show") != "attention"
            or page == "learn" and value(view, "learn_sep")):
        return ("mixing",)
    return ()


def warm(lesson: Tour, class_params: dict, texts: list[str | None] | None = None) -> list[tuple[int, str]]:
    """Compute every step's results in lesson order (``class_params``: the class's Summarize
    settings; ``texts``: each step's document, None: the class's); → what was computed, (step, result)."""
    from analysis import heads as AH
    from ui.resources import get_model, model_slots
    from ui.runs import cached, head_stats, run_trace, trace_key

    model = get_model(class_params["weights"], class_params["device"])
    k, block = class_params["k"], class_params["block_trigram"]
    done = []
    for n, step in enumerate(lesson.steps):
        text = (texts[n] if texts else None) or class_params["text"]  # a step may play a document of its own
        params = {**class_params, "text": text}
        trace = run_trace(text, k, block, params["weights"], params["device"])
        for what in results_for(step.page, step.view.pickers):
            if what == "explanation":
                from analysis.explain import explain

                def compute():
                    with model_slots():
                        return explain(model, text, k, block, None, mask_heads=(), trace=trace)
                cached("explanation", params, compute, None)
            elif what == "stats":
                head_stats(params, trace)
            elif what == "gradient" and len(trace.windows) <= 4:  # a long document's: only when asked (ui.runs.asked)
                cached("gradient", params, lambda: dict(zip(AH.PARTS, AH.importance_gradient(model, text, k, block))),
                       model_run=True)
            elif what == "batch":
                from ui.runs import run_batch
                from ui.widgets import batch_texts

                # (the page's layer picker starts at its first layer)
                run_batch(params, batch_texts(text, step.view.pickers.get("batch_docs")),
                          step.view.pickers.get("batch_layer", 0))
            elif what == "whatif":
                from analysis import compare as C, edits as E
                from ui.runs import sha

                pickers = step.view.pickers  # B as the page makes it from the step's view
                text_b = (E.edited(text, value(pickers, "whatif_edits") or [], model)[0]
                          if value(pickers, "whatif_source") == "Edits" else value(pickers, "whatif_b") or text)
                if text_b != text:  # (the same text: the page compares nothing)
                    cached("whatif", params, lambda: C.compare(model, text, text_b, k, block), sha(text_b),
                           model_run=True)
            elif what == "mixing":
                from analysis.mixing import mixing

                cached("mixing", params, lambda: mixing(model, text, trace.window, trace.summary.masked_heads),
                       trace_key(trace), model_run=True)
            done.append((n, what))
    return done


def start(code: str, lesson: Tour, params: dict, texts=None) -> bool:
    """Warm ``lesson`` for the class ``code`` in a background thread (once per class, lesson and
    document in this process); → whether a thread was started. ``texts``: each step's document, or
    a function giving them, read in that thread (every run of a class asks: most are not the first)."""
    key = (code, lesson.name, params["text"], params["k"], params["block_trigram"], params["weights"])
    with _LOCK:
        if key in _STARTED:
            return False
        _STARTED.add(key)

    def run():
        try:
            warm(lesson, params, texts() if callable(texts) else texts)
        except Exception:  # noqa: BLE001  a step that fails here is computed (and said) on its page
            logging.getLogger("microscope").exception("class %s: warming lesson %s", code, lesson.name)

    threading.Thread(target=run, name=f"warm-{code}", daemon=True).start()
    return True
