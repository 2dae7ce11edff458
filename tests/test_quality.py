"""How good is this summary (issue 60): ROUGE beside Lead-k and the oracle, equal to rouge-score's
and training/oracle.py's on the same texts; the alignment of a verbatim sentence; the Summary page
with a pasted reference and with an example's own; the reference kept by a link."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from analysis.quality import align, in_words, quality, reference_sentences

ROOT = Path(__file__).resolve().parents[1]
DOC = ["The council approved the new budget on Monday.", "Taxes will rise by two percent next year.",
       "The mayor said the vote was close.", "Schools get more money for teachers.", "It rained all day."]


def test_rouge_equals_rouge_score_and_the_oracle_equals_training_oracle():
    from rouge_score import rouge_scorer

    from training.oracle import greedy_selection

    ref = "The council passed a budget that raises taxes.\nSchools get more money."
    q = quality(DOC, [2, 4], ref, 2)
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeLsum"], use_stemmer=True)
    for name, picked in q.systems.items():
        direct = scorer.score("\n".join(reference_sentences(ref)), "\n".join(DOC[i] for i in picked))
        for key in ("rouge1", "rouge2", "rougeLsum"):
            assert q.rouge[name][key] == pytest.approx((100 * direct[key].precision, 100 * direct[key].recall,
                                                        100 * direct[key].fmeasure))
    assert q.systems["oracle"] == greedy_selection(DOC, reference_sentences(ref), 2)
    assert q.systems["lead"] == [0, 1] and q.systems["model"] == [2, 4]
    assert q.rank() == 3 and q.adds_nothing == [2, 4]  # the mayor and the rain share no phrase with the reference
    assert re.match(r"The model's summary covers \d+% of the reference's words; Lead-2", in_words(q, 2))
    assert q.overlap[3] > q.overlap[4] == 0 and q.covers[4] == 0


def test_a_title_line_is_not_the_leads_first_sentence():
    """Issue 72: the examples open with a headline; Lead-k counted it as its first sentence, which
    flattered the model. A first line with no sentence-final punctuation is a title: Lead-k starts
    after it, and the words say so; a first sentence that ends like one is not a title."""
    from analysis.quality import has_title

    ref = "The council passed a budget that raises taxes.\nSchools get more money."
    q = quality(["Council passes budget"] + DOC, [3, 5], ref, 2)
    assert q.titled and q.systems["lead"] == [1, 2] and "Lead-2 (the first 2 sentences after the title)" in in_words(q, 2)
    assert not quality(DOC, [2, 4], ref, 2).titled
    assert has_title(["Call centre users 'lose patience'", "a.", "b.", "c.", "d."], 3)
    assert not has_title(["He said: \"Yes.\"", "a.", "b.", "c.", "d."], 3)  # ends like a sentence
    assert not has_title(["A title", "a.", "b."], 3)  # no more than k sentences after it: no lead to skip to
    assert not has_title([" ".join(["word"] * 25), "a.", "b.", "c.", "d."], 3)  # too long for a headline
    assert "greedy oracle" in in_words(q, 2)


def test_a_reference_sentence_copied_verbatim_is_aligned_to_that_sentence():
    from analysis.quality import _tokens

    words = [_tokens(s) for s in DOC]
    for i, s in enumerate(DOC):
        assert align(_tokens(s), words)[0] == (i, 1.0) and len(align(_tokens(s), words)) == 1
    assert align(_tokens("Zebras dance quickly."), words) == []  # in other words: nothing
    with pytest.raises(ValueError, match="empty"):
        quality(DOC, [0], "  \n ", 2)


@pytest.mark.slow
def test_the_summary_page_with_a_pasted_reference_and_an_examples_own(summarizer):
    from helpers import SHORT, charts, new_app, summarize

    at = new_app()
    at.text_area(key="reference").set_value("Insurance executives pleaded guilty to fraud.\nMarsh said Bewlay left.")
    at = summarize(at, SHORT.replace("Insurance bosses", "Insurers' bosses"))  # pasted: not the example
    table = at.dataframe[0].value
    assert list(table["summary"].str.split().str[0]) == ["This", "Lead-3", "Greedy"] and len(table) == 3
    assert "quality_overlap" in [c.key for c in charts(at)] and at.selectbox(key="quality_ref")
    assert any("covers" in m.value and "oracle" in m.value for m in at.markdown)

    example = new_app()
    name = next(o for o in example.selectbox(key="example").options if "Insurance" in o)
    example.selectbox(key="example").set_value(name).run()  # no pasting: the example brings its reference
    assert example.text_area(key="reference").value.startswith("Another three US insurance executives")
    next(b for b in example.button if b.label == "Summarize").click().run()
    assert len(example.dataframe[0].value) == 3 and not example.exception
    lead = example.dataframe[0].value.iloc[1]  # the example opens with its headline: the lead starts after it
    assert "after the title" in lead["summary"] and lead["sentences"] == "2, 3, 4", dict(lead)
    verbatim = example.selectbox(key="quality_ref").options
    example.selectbox(key="quality_ref").set_value(1).run()  # "The highest ranking executive …" is sentence 5
    assert any(c.value.startswith("Draws on sentence 5") for c in example.caption), [c.value for c in example.caption]
    assert verbatim and not example.exception

    example.text_area(key="document").set_value(SHORT + " A new last sentence was added here.").run()
    assert example.text_area(key="reference").value == ""  # the example's reference went with the example

    next(b for b in at.button if b.key == "link_sync").click().run()  # a link keeps the reference
    from streamlit.testing.v1 import AppTest

    linked = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    linked.query_params.update(dict(at.query_params))
    linked.run()
    assert "ref" in at.query_params and linked.text_area(key="reference").value.startswith("Insurance executives")
    assert len(linked.dataframe[0].value) == 3


@pytest.mark.slow
def test_a_story_step_and_a_class_keep_the_reference(summarizer):
    from streamlit.testing.v1 import AppTest

    from helpers import SHORT, new_app, summarize
    from ui import classroom as C, story

    at = new_app()
    at.text_area(key="reference").set_value("Executives pleaded guilty.")
    at = summarize(at, SHORT.replace("Insurance", "Assurance"))
    next(b for b in at.button if b.key == "story_add").click().run()
    assert at.session_state[story.STORY].steps[-1].view.ref
    shown = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    shown.query_params.update({"story": at.session_state[story.STORY].id, "present": "1"})
    shown.run()
    assert shown.session_state["reference"] == "Executives pleaded guilty."
    next(b for b in at.button if b.key == "class_start").click().run()
    student = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    student.query_params["class"] = at.session_state[C.TEACHING]
    student.run()
    assert student.session_state["reference"] == "Executives pleaded guilty." and len(student.dataframe[0].value) == 3
