"""The one View (issue 56): every control of every page, defined once in ui.view, travels unchanged
by link, lesson file, store, story, slide, export and class. The round trip is one table-driven
test over the registry, so a control added to ui.view.PAGES is covered with no new test."""
from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from ui import view as V

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- the registry and its codecs (no app)

def test_every_kept_control_of_every_page_is_in_the_registry():
    """A page's controls are what it keeps (``keep``/``state.keep``) or gives a fixed key whose value
    it reads: each is declared for that page, so links, stories and classes carry it."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / "pages").glob("*.py"):
        page = "" if path.stem == "summary" else path.stem
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "keep" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                found.setdefault(page, set()).add(node.args[0].value)
    for page, keys in found.items():  # (the Heads page also opens a head on the BERT page: that page's controls)
        assert keys <= set(V.CONTROLS), (page, keys - set(V.CONTROLS))
    pages = {"" if p.stem == "summary" else p.stem for p in (ROOT / "pages").glob("*.py")}
    assert set(V.PAGES) == pages  # a page of the registry is a page of the app, and every page has its entry


def samples() -> dict:
    return {c.key: c.sample for c in V.CONTROLS.values() if c.sample is not None} | {"whatif_b": "B text."}


@pytest.mark.parametrize("key", sorted(V.CONTROLS))
def test_each_control_round_trips_through_every_codec(key):
    value = samples().get(key)
    if value is None:
        pytest.skip("no sample: set by the app test")
    view = V.View("why", "d", 3, True, "w", 0, None, {key: value})
    documents = {}

    def put(text):  # (the document store's part: ui.link.kept_id)
        documents["id:b"] = text
        return "id:b"

    assert V.View.from_query(view.to_query(put), "why", documents.get) == (view, [])  # a link
    assert V.from_toml(V.to_toml({key: value})) == ({key: value}, [])                 # a lesson file
    stored = json.loads(json.dumps(view.to_store()))                                   # the store: JSON, lists for tuples
    assert V.View.from_store(stored) == (view, [])


@pytest.mark.parametrize("key", [c.key for c in V.HEADER])
def test_each_header_field_round_trips_and_is_checked(key):
    """The result's fields (document, k, trigram blocking, weights, window, reference, chart) are
    controls like the rest: each codec carries a value other than the default, and a bad one is named."""
    c = next(c for c in V.HEADER if c.key == key)
    view = V.View("bert_attention", "bbc_call_centres", pickers={"bert_layer": 2}).but(**{key: c.sample})
    assert V.View.from_query(view.to_query(), "bert_attention") == (view, [])
    assert V.View.from_store(json.loads(json.dumps(view.to_store()))) == (view, [])
    bad = {"doc": "../../etc/passwd", "k": "11", "tb": "maybe", "w": "x" * 301, "win": "0", "ref": "<b>",
           "chart": "y" * 301}[key]
    back, problems = V.View.from_query({**view.to_query(), c.name: bad}, "bert_attention")
    assert len(problems) == 1 and problems[0].startswith(f"{c.name}=") and getattr(back, key) == c.default, problems


def test_numbers_are_one_based_outside_and_bad_values_are_one_sentence():
    assert V.View("", "d", 3, False, None, 1, None, {"bert_layer": 0, "bert_head": None}).to_query() \
        == {"doc": "d", "k": "3", "tb": "0", "win": "2", "layer": "1", "head": "mean"}
    assert V.to_toml({"learn_layer": 0, "heads_off": [("bert", 4, 2)]}) == {"learn_layer": 1, "heads_off": ["bert:5.3"]}
    view, problems = V.View.from_query({"layer": "0", "head": "x", "view": "Nope", "bert_range": "5-2",
                                        "heads_off": "bert:0:1", "edits": "[1]", "unknown": "1", "causal": "2"})
    assert view.pickers == {} and len(problems) == 7, problems
    assert all(p.count(".") <= 1 and len(p) < 200 for p in problems), problems
    assert V.View.from_query({"layer": "9" * 5000})[1] == ["layer is too long to be a setting (5,000 characters)"]
    deep = "[" * 5000 + "]" * 5000  # a crafted nesting: refused in one sentence, never a RecursionError
    assert V.View.from_query({"edits": deep})[0].pickers == {} and len(V.View.from_query({"edits": deep})[1]) == 1


def test_a_stored_view_takes_only_controls_values():
    view, problems = V.View.from_store({"pickers": {"bert_layer": -1, "heads_off": [["bert", 1, 2]], "x": 1,
                                                    "document": "not a control"}, "k": 0, "page": "../x"})
    assert view.pickers == {"heads_off": [("bert", 1, 2)]} and len(problems) == 2 and view.k == 3 and view.page == ""


def test_colour_scales_start_at_0_and_end_at_exactly_1():
    from viz.common import SCALES, weight_colorscale
    from viz.palette import SEQUENTIAL

    for name in SEQUENTIAL:
        for scale in SCALES:
            stops = [x for x, _ in weight_colorscale(name, scale)]
            assert stops[0] == 0 and stops[-1] == 1 and stops == sorted(stops), (name, scale, stops[-1])


# ---------------------------------------------------------------- the round trip in the app (AppTest)

from helpers import SHORT, button, new_app, opened, summarize, summarize_button  # noqa: E402

SCRIPTS = {page: f"pages/{page or 'summary'}.py" for page in V.PAGES}


def page_samples(page: str) -> dict:
    """A value other than the default for every control of ``page`` (ui.view's samples, completed
    where the right value depends on this server: documents to batch with, a corpus run)."""
    from ui.widgets import example_text, examples

    out = {c.key: samples()[c.key] for c in V.controls(page) if c.key in samples()}
    if page == "masks_positions":  # one other document (the default batches two): the padded one not shown
        name, path = [(n, p) for n, p in examples().items() if example_text(p) != SHORT][-1]
        out["batch_docs"] = [name]
        out["batch_doc"] = 0 if len(example_text(path)) < len(SHORT) else 1
    if page == "what_if":
        from analysis.edits import sentences

        out["whatif_b"] = "\n".join(sentences(SHORT)[:-1])  # B: A without its last sentence
    if page == "corpus":
        from ui.corpus_runs import EXAMPLE, corpus_root

        shutil.copytree(EXAMPLE, corpus_root() / "cli-run", dirs_exist_ok=True)  # a run of the server's own
        out["corpus_run"] = "cli-run"
    return out


def shown(at, page: str) -> dict:
    return {c.key: at.session_state[c.key] for c in V.controls(page) if c.key in at.session_state}


def fresh(query: dict | None = None, page: str | None = None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    if page is not None:
        at.switch_page(SCRIPTS[page])
    at.query_params.update(query or {})
    return at.run()


@pytest.mark.slow
@pytest.mark.parametrize("page", list(V.PAGES))
def test_every_control_travels_unchanged(page, summarizer):
    """Every control of the page set to a value other than its default survives: Link → a fresh
    session; Add to story → the story's link presented in a fresh session → the HTML export; and
    a class student following the teacher."""
    from ui import classroom as C, present, story

    want = page_samples(page)
    at = summarize(new_app(), SHORT)
    at.switch_page(SCRIPTS[page]).run()
    declared = {c.key: c.default for c in V.controls(page) if c.default is not None and c.key in at.session_state}
    assert {k: at.session_state[k] for k in declared} == declared  # the page shows the defaults the registry declares
    for _ in range(2):  # twice: a control that resets another on change (a new head opens on its own head)
        for key, value in want.items():
            at.session_state[key] = value
        at.run()
    assert not at.exception and shown(at, page) == want, (at.exception, shown(at, page))
    assert not at.warning, [w.value for w in at.warning]

    button(at, "link_sync").click().run()  # Link to this view
    query = dict(at.query_params)
    assert {V.CONTROLS[k].name for k in want} <= set(query), query
    assert not set(query) & {c.name for p, cs in V.PAGES.items() if p != page for c in cs} - \
        {c.name for c in V.controls(page)}  # no other page's settings
    linked = fresh(query, page)
    assert not linked.exception and shown(linked, page) == want, shown(linked, page)
    assert not linked.warning, [w.value for w in linked.warning]

    at.text_input(key="story_new_title").set_value(f"Step of {page or 'summary'}")
    button(at, "story_add").click().run()
    step = at.session_state[story.STORY].steps[-1]
    assert V.View.from_store(json.loads(json.dumps(step.view.to_store())))[0].pickers == want
    shown_slide = fresh({"story": at.session_state[story.STORY].id, "present": "1"})
    assert not shown_slide.exception and shown(shown_slide, page) == want, shown(shown_slide, page)
    button(at, "story_export").click().run()
    made = at.session_state[present.EXPORTS]
    assert not at.exception and made["html"].count("<section class='slide'") == 1
    assert shown(at, page) == want  # the export's slide was made from the view, taken whole

    if page == "corpus":
        return  # a class follows a document's pages
    button(at, "class_start").click().run()
    code = at.session_state[C.TEACHING]
    student = fresh({"class": code})
    assert not student.exception and shown(student, page) == want, shown(student, page)


@pytest.mark.slow
def test_a_heads_importance_slide_after_a_restart_shows_the_ablation(summarizer):
    """Results a page computes on request (the exact ablation) are computed for a slide: after a
    restart (every server cache emptied) the slide still shows the ablation, not the gradient alone."""
    from helpers import chart_text, charts
    from ui import resources, story

    def restart():  # every result the server holds, gone
        for cache in (resources.trace_cache, resources.result_cache, resources.figure_cache, resources.slide_cache):
            cache.clear()

    restart()
    at = summarize(new_app(), SHORT)
    at.switch_page("pages/heads.py").run()
    at.segmented_control(key="heads_view").set_value("Importance").run()
    assert "ablation |ΔL|" not in chart_text(charts(at)[0])  # on the page: the gradient until Run is clicked
    button(at, "story_add").click().run()
    restart()
    show = fresh({"story": at.session_state[story.STORY].id, "present": "1"})
    assert not show.exception and "ablation |ΔL|" in chart_text(charts(show)[0])


@pytest.mark.slow
def test_links_open_what_they_name(summarizer):
    """A story link opens its story (a banner, Present one click away); a copy puts its own link in
    the address bar; a lesson link opens the lesson at its first step; a step shows the chart it names."""
    from helpers import charts
    from ui import classroom as C, present, story

    at = summarize(new_app(), SHORT)
    at.switch_page("pages/why.py").run()
    at.selectbox(key="story_chart").set_value("why_words").run()  # the words, not the position chart
    button(at, "story_add").click().run()
    story_id = at.session_state[story.STORY].id
    assert at.session_state[story.STORY].steps[0].view.chart == "why_words"

    other = fresh({"story": story_id})
    banner = " ".join(m.value for m in other.markdown)
    assert "Story:" in banner and "1 step" in banner and not other.exception
    button(other, "story_banner_present").click().run()
    assert other.session_state[present.PRESENT] == 0 and not charts(other)  # the words' slide: HTML, no chart
    assert any("raised the score" in h.proto.body for h in other.get("html")), [h.proto.body[:200] for h in other.get("html")]
    other.session_state[present.PRESENT] = None
    del other.session_state[present.PRESENT]
    summarize(other, SHORT)
    button(other, "story_add").click().run()  # someone else's story: a copy, and the address bar says so
    assert other.session_state[story.STORY].id != story_id and other.query_params["story"] == other.session_state[story.STORY].id

    lesson = fresh({"lesson": "attention_in_20_minutes"})
    assert not lesson.exception and lesson.session_state[C.STEP]["step"] == 0
    assert lesson.session_state["document"] and charts(lesson) is not None
    bad = fresh({"lesson": "no_such_lesson"})
    assert any("not a lesson of this server" in w.value for w in bad.warning)


def test_a_head_is_written_one_way_and_read_in_both():
    """Issue 69: one Head, one parse and one label; the links made before ("bert:5:3") still open."""
    from analysis.heads import head_label
    from model.__main__ import parse_heads
    from model.heads import Head

    h = Head.parse("bert:5.3")
    assert h == ("bert", 4, 2) == Head.parse("bert:5:3") and h.spec == "bert:5.3" and h.label == "BERT 5.3"
    assert head_label("inter", 0, 1) == Head("inter", 0, 1).label == "Sentence encoder 1.2"
    assert parse_heads("bert:5.3, inter:1.2") == (("bert", 4, 2), ("inter", 0, 1))
    assert V.CONTROLS["heads_off"].kind.url([h, ("inter", 0, 1)]) == "bert:5.3,inter:1.2"
    assert V.CONTROLS["heads_off"].kind.from_url("bert:5:3,inter:1.2") == [h, ("inter", 0, 1)]
    for bad in ("bert:0.1", "gpt:1.1", "bert:1", "bert:1.1.1", 5):
        with pytest.raises(ValueError):
            Head.parse(bad)


@pytest.mark.slow
def test_the_reference_sentence_travels_in_a_link_and_starts_afresh_on_another_reference(summarizer):
    """Issue 69: the Summary page's "Reference sentence" picker was left out of links (picked 3,
    came back 1). Its value belongs to one reference: another one starts it at the first."""
    from ui.widgets import REFERENCE

    at = opened({"doc": "bbc_insurance_bosses"})
    assert at.session_state[REFERENCE] and at.selectbox(key="quality_ref").value == 0
    at.selectbox(key="quality_ref").set_value(2).run()
    button(at, "link_sync").click().run()
    assert at.query_params["quality_ref"] == "3" and at.query_params["ref"].startswith("id:")
    again = opened(dict(at.query_params))
    assert not again.exception and again.selectbox(key="quality_ref").value == 2
    again.text_area(key=REFERENCE).set_value("Insurance bosses met.\nThey talked.").run()
    summarize_button(again).click().run()
    assert again.selectbox(key="quality_ref").value == 0  # a sentence of the old reference is not one of this one


def test_a_chart_picked_on_one_page_is_not_kept_for_another(summarizer):
    """Issue 72: "Chart on the slide" kept "Sentence scores" on the Heads page, and the slide fell back
    to the first chart without a word. A step added on another page names one of that page's charts."""
    from helpers import charts
    from ui import story

    at = summarize(new_app(), SHORT)
    at.switch_page("pages/why.py").run()
    at.selectbox(key="story_chart").set_value("why_words").run()
    at.switch_page("pages/sentence_encoder.py").run()
    drawn = [c.key for c in charts(at)]
    button(at, "story_add").click().run()
    chart = at.session_state[story.STORY].steps[-1].view.chart
    assert chart != "why_words" and (chart is None or chart in drawn), (chart, drawn)
