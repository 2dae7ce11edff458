"""Stories (issue 50): saved views with notes in the store on SQLite and PostgreSQL, their limits,
the offline deck, and in AppTest: add, reorder, retitle, remove, save, reopen by link (a copy when
another edits it), present step by step (a step whose document is gone says so), bad links."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ui import present, story
from ui.stories import MAX_STEPS, BadStory, Story, load, moved, owns, save
from ui.tour import Step, story_tour
from ui.view import View

ROOT = Path(__file__).resolve().parents[1]
VIEW = View("", "id:0123456789abcdef", 3, True, "x")


def test_a_story_is_saved_by_its_maker_and_copied_by_anyone_else(store):
    steps = [Step(VIEW, "<b>not bold</b>", title="One")]
    made = save(store, Story(story_tour("Mine", steps)))
    assert re.fullmatch(r"[A-Za-z0-9_-]{16}", made.id) and owns(store, made.id, made.owner)
    back = load(store, made.id)
    assert back.tour == made.tour and back.owner is None and back.steps[0].key  # every step has a widget name
    assert (back.title, back.steps[0].title, back.steps[0].text) == ("Mine", "One", "<b>not bold</b>")
    again = save(store, made.with_steps(steps + [Step(VIEW, "", title="Two")]))
    assert (again.id, again.owner) == (made.id, made.owner) and len(load(store, made.id).steps) == 2  # updated
    copy = save(store, Story(made.tour, made.id, None))  # anyone else: a copy, the original stays
    assert copy.id != made.id and len(load(store, made.id).steps) == 2 and len(load(store, copy.id).steps) == 1
    assert not owns(store, made.id, copy.owner)
    with pytest.raises(BadStory, match="at most 50 steps"):
        save(store, Story(story_tour("", steps * (MAX_STEPS + 1))))
    for bad in ("", "x" * 16 + "'", "../../etc/passwd", "A" * 16):
        with pytest.raises(BadStory) as e:
            load(store, bad)
        assert len(str(e.value)) < 120 and str(e.value).count(".") <= 2
    assert [s["title"] for s in moved([{"title": t} for t in "abc"], 0, 1)] == ["b", "a", "c"]
    assert [s["title"] for s in moved([{"title": t} for t in "abc"], 2, 5)] == ["a", "b", "c"]


def test_the_deck_is_one_offline_file_with_every_text_escaped():
    import numpy as np
    import plotly.graph_objects as go

    from viz.deck import Slide, deck_html

    fig = go.Figure(go.Bar(x=np.array([1.0, 2.0]), y=["a", "</script><script>alert(1)</script>"]))
    deck = deck_html("T", [Slide("<i>Title</i>", "a <script>note</script>\nline 2", fig, "**Bold** words", ["s1"], "k = 3"),
                           Slide("Two", "", None, missing="gone")])
    assert deck.count("<section class='slide'") == 2 and "&lt;i&gt;Title&lt;/i&gt;" in deck
    assert "a &lt;script&gt;note&lt;/script&gt;" in deck and "<b>Bold</b> words" in deck
    assert "</script><script>alert(1)" not in deck  # a figure's text cannot close its script
    assert "<script src" not in deck and "<link" not in deck  # plotly.js inline (the browser test: no request)


def test_a_slide_labels_every_picked_and_oracle_sentence_on_its_own_bar():
    """Issue 72: thinned to fit a slide, a crowded axis still labels every ★ and ◆ sentence, each
    on its own category (tickvals, not nticks), the others a thinning step apart; the font shrinks
    only where two kept labels are neighbours."""
    import numpy as np

    from viz.deck import LABEL_PX, MIN_FONT, for_slide, slide_labels
    from viz.quality import overlap_chart

    n, model, oracle = 33, [3, 5, 26], [2, 3, 27]
    fig = overlap_chart([f"Sentence {i}." for i in range(n)], np.linspace(0, 1, n), model, oracle)
    slide = for_slide(fig, height=396)  # the presenter's chart at 1280×720 under a note
    cats, ticks = slide_labels(slide)["yaxis"][0], list(slide.layout.yaxis.tickvals)
    assert len(cats) == n and set(ticks) <= set(cats) and slide.layout.yaxis.tickmode == "array"
    marked = {cats[i] for i in {*model, *oracle}}
    assert marked <= set(ticks), sorted(marked - set(ticks))  # sentence 27 labelled, on its own bar
    at = sorted(cats.index(t) for t in ticks)
    step = -(-n // ((396 - 190) // LABEL_PX))
    assert all(min(abs(i - j) for j in at if j != i) >= step for i in at if cats[i] not in marked)
    assert MIN_FONT <= slide.layout.yaxis.tickfont.size < 12  # 2◆ 3★◆: neighbours, in a smaller font
    roomy = for_slide(fig, height=900)
    assert roomy.layout.yaxis.tickfont.size is None and len(roomy.layout.yaxis.tickvals) == n  # room for all


# ---------------------------------------------------------------- in the app (AppTest)

from helpers import SHORT, button, charts, new_app, opened, summarize  # noqa: E402
from viz.quality import CELL  # noqa: E402


def add(at, title: str, note: str = ""):
    at.text_input(key="story_new_title").set_value(title)
    at.text_area(key="story_new_note").set_value(note)
    return button(at, "story_add").click().run()


def test_a_story_made_reordered_saved_and_reopened_by_link(summarizer):
    from ui.resources import document_store

    at = summarize(new_app(), SHORT)
    add(at, "The summary", "Three sentences <b>kept</b>.")
    at.switch_page("pages/bert_attention.py").run()
    at.session_state["bert_layer"], at.session_state["bert_head"] = 1, 2
    at.run()
    add(at, "A head", "Layer 2, head 3.")
    at.switch_page("pages/sentence_encoder.py").run()
    add(at, "The encoder")
    assert not at.exception
    steps = at.session_state[story.STORY].steps
    assert [s.title for s in steps] == ["The summary", "A head", "The encoder"]
    assert steps[1].page == "bert_attention" and steps[1].view.pickers["bert_head"] == 2
    at.selectbox(key="story_pick").set_value(0).run()
    button(at, "story_down").click().run()  # the summary after the head
    assert at.selectbox(key="story_pick").value == 1  # the moved step stays picked
    at.selectbox(key="story_pick").set_value(0).run()
    uid = at.session_state[story.STORY].steps[0].key
    at.text_input(key=f"story_title_{uid}").set_value("Layer 2, head 3").run()
    at.selectbox(key="story_pick").set_value(2).run()
    button(at, "story_remove").click().run()
    story_id = at.session_state[story.STORY].id
    saved = load(document_store(), story_id)
    assert [s.title for s in saved.steps] == ["Layer 2, head 3", "The summary"]
    assert f"?story={story_id}" in " ".join(c.value for c in at.get("code"))

    other = opened({"story": story_id})  # another machine: the link opens the same story
    assert [s.title for s in other.session_state[story.STORY].steps] == ["Layer 2, head 3", "The summary"]
    add(summarize(other, SHORT), "Mine")  # editing someone else's story makes a copy
    assert other.session_state[story.STORY].id != story_id and len(load(document_store(), story_id).steps) == 2
    assert any("your own copy" in i.value for i in other.info)

    bad = opened({"story": "nope"})
    assert any("not one this app makes" in i.value for i in bad.info) and not bad.exception


def test_present_steps_through_the_story_and_a_lost_document_says_so(summarizer):
    from ui.resources import document_store

    at = summarize(new_app(), SHORT)
    at.switch_page("pages/bert_attention.py").run()
    at.session_state["bert_layer"], at.session_state["bert_head"] = 1, 2
    at.run()
    add(at, "A head", "Look at the line under the diagonal.")
    at.switch_page("pages/summary.py").run()
    add(at, "The summary", "<script>alert(1)</script>")
    mine = at.session_state[story.STORY]
    gone = mine.steps[0].view.but(doc="id:ffffffffffffffff")  # a document the store lost
    story_id = save(document_store(), Story(mine.with_steps([*mine.steps, Step(gone, "still here", title="Lost *here*")]).tour)).id

    show = opened({"story": story_id, "present": "1"})  # (the page's own title, hidden, comes first)
    assert not show.exception and show.session_state[present.PRESENT] == 0
    assert show.title[-1].value == "A head" and "layer 2, head 3" in charts(show)[0].proto.spec.lower()
    assert [c.key for c in charts(show)] == ["present_chart_0"]  # the slide's chart only
    assert any("Step 1 of 3" in h.proto.body for h in show.get("html"))
    show.session_state[present.PRESENT] = 1  # what → sends (a key the browser listens for)
    show.run()
    assert show.title[-1].value == "The summary" and charts(show)[0].key == "present_chart_1"
    assert any("&lt;script&gt;alert(1)&lt;/script&gt;" in h.proto.body for h in show.get("html"))  # a note is text
    show.session_state[present.PRESENT] = 2
    show.run()
    assert show.title[-1].value == "Lost \\*here\\*"  # a title is text: its asterisks escaped, not italics
    assert any("no longer on this server" in w.value for w in show.warning)
    assert any("still here" in h.proto.body for h in show.get("html"))
    show.session_state[present.PRESENT] = 0
    show.run()
    assert show.title[-1].value == "A head" and not show.exception  # back: from the cache


def test_presenting_computes_the_next_slides_ahead(summarizer, monkeypatch):
    """Issue 71: after a restart, the first slide is computed, then every other one out of sight
    under it, so stepping on runs no page (step 2 waited 22-26 s)."""
    from ui import resources

    at = summarize(new_app(), SHORT)
    add(at, "The summary")
    at.switch_page("pages/bert_attention.py").run()
    add(at, "A head")
    at.switch_page("pages/sentence_encoder.py").run()
    add(at, "Sentences")
    steps = at.session_state[story.STORY].steps
    resources.slide_cache.clear()  # a restart
    show = opened({"story": at.session_state[story.STORY].id, "present": "1"})
    assert not show.exception and show.title[-1].value == "The summary"
    assert [resources.slide_cache().peek(present.key_of(s.view)) is not None for s in steps] == [True] * 3
    monkeypatch.setattr(present, "compute", lambda *a: pytest.fail("a slide computed again"))
    for n, title in ((1, "A head"), (2, "Sentences"), (0, "The summary")):
        show.session_state[present.PRESENT] = n
        show.run()
        assert not show.exception and show.title[-1].value == title and charts(show)[0].key == f"present_chart_{n}"


@pytest.mark.browser
def test_the_exports_html_and_pdf(summarizer, tmp_path):
    """Make the HTML and PDF: every step computed once; the deck has a slide per step; the PDF a
    page per step with its title and note (pdftotext)."""
    import shutil
    import subprocess

    at = summarize(new_app(), SHORT)
    add(at, "The summary", "Three sentences kept.")
    at.switch_page("pages/bert_attention.py").run()
    add(at, "First head", "Layer 1.")
    button(at, "story_export").click().run()
    assert not at.exception, at.exception
    made = at.session_state[present.EXPORTS]
    assert made["html"].count("<section class='slide'") == 2 and made["pdf"][:4] == b"%PDF", made["pdf_error"]
    assert not present.active()
    pdf = tmp_path / "story.pdf"
    pdf.write_bytes(made["pdf"])
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    pages = text.split("\f")
    assert len([p for p in pages if p.strip()]) == 2, [p[:80] for p in pages]
    assert "The summary" in pages[0] and "Three sentences kept." in pages[0] and "First head" in pages[1]


@pytest.mark.slow
def test_a_how_good_slide_and_a_contrast_slide_carry_their_numbers(summarizer, tmp_path):
    """Issue 72: a step may show the Summary page's ROUGE table (this model, Lead-k, the oracle) and
    its verdict, and the Why contrast's slide its verdict, both scores, the content/place split and
    the heads over its words; the deck has them and so does the PDF (pdftotext)."""
    import shutil
    import subprocess

    at = new_app()
    at.text_area(key="reference").set_value("Insurance executives pleaded guilty to fraud.\nMarsh said Bewlay left.")
    at = summarize(at, SHORT)
    rouge = at.dataframe[0].value
    at.selectbox(key="story_chart").set_value("quality_rouge").run()  # a chart of the page's, for the slide
    add(at, "How good", "Against a reference.")
    at.switch_page("pages/why.py").run()
    at.selectbox(key="story_chart").set_value("why_versus_words").run()
    add(at, "Why not that one", "")
    assert [s.view.chart for s in at.session_state[present.STORY].steps] == ["quality_rouge", "why_versus_words"]
    button(at, "story_export").click().run()
    assert not at.exception, at.exception
    made = at.session_state[present.EXPORTS]
    deck = made["html"].split("<section class='slide'")
    model = rouge[rouge["summary"].str.startswith("This model")].iloc[0]
    for col in ("ROUGE-1", "ROUGE-2", "ROUGE-L"):
        assert f"<td style='{CELL}'>{model[col]}</td>" in deck[1]  # the page's own figures, in its table
    assert "Lead-3" in deck[1] and "Greedy oracle" in deck[1] and "Ranked by ROUGE-1, the model is <b>" in deck[1]
    assert all(w in deck[2] for w in ("Score of", "Its content", "Its place", "The heads that tipped it", "BERT"))
    if shutil.which("pdftotext") is None or made["pdf"] is None:
        pytest.skip("pdftotext (poppler-utils) or Chromium is not installed")
    pdf = tmp_path / "story.pdf"
    pdf.write_bytes(made["pdf"])
    pages = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True,
                           check=True).stdout.split("\f")
    assert "ROUGE-1" in pages[0] and str(model["ROUGE-1"]) in pages[0] and "Ranked by ROUGE-1" in pages[0], pages[0]
    assert "Score of" in pages[1] and "Its content" in pages[1] and "tipped it" in pages[1], pages[1]


def test_a_story_explored_step_by_step_in_the_live_app(summarizer):
    """Any tour is played alone with Back/Next (issue 59): a step's view opens in the live app (its
    page, document and controls) with its text above the page; the link's reader explores it too."""
    from viz.common import markdown_text

    at = summarize(new_app(), SHORT)
    add(at, "The summary", "Three sentences <b>kept</b>.")
    at.switch_page("pages/bert_attention.py").run()
    at.session_state["bert_layer"], at.session_state["bert_head"] = 1, 2
    at.run()
    add(at, "A head", "Layer 2, head 3.")
    at.switch_page("pages/sentence_encoder.py").run()
    at.selectbox(key="story_pick").set_value(0).run()
    button(at, "story_walk_here").click().run()
    assert not at.exception and at.title[0].value == "Summary"
    said = " ".join(m.value for m in at.markdown)
    assert "Step 1 of 2: The summary" in said and markdown_text("Three sentences <b>kept</b>.") in said  # text
    assert button(at, "story_walk_back").disabled
    at.session_state["bert_layer"], at.session_state["bert_head"] = 4, 0  # what the user changed meanwhile
    button(at, "story_walk_next").click().run()
    assert at.title[0].value == "BERT attention" and (at.session_state["bert_layer"], at.session_state["bert_head"]) == (1, 2)
    assert "Step 2 of 2: A head" in " ".join(m.value for m in at.markdown) and button(at, "story_walk_next").disabled
    other = opened({"story": at.session_state[story.STORY].id})  # the link's reader, on another machine
    button(other, "story_walk_start").click().run()
    assert not other.exception and other.title[0].value == "Summary" and other.session_state["document"] == SHORT
    button(other, "story_banner_close").click().run()
    assert not any("Step 1 of 2" in m.value for m in other.markdown)
