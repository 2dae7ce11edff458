"""The What-if page under AppTest with the shipped model: edits, both summaries, the aligned
table, head changes, activation patching, a link carrying the edits, exports (the analysis
itself: tests/test_compare.py; in Chromium: tests/test_browser.py)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from helpers import SHORT, charts, new_app, spec, summarize

pytestmark = pytest.mark.slow


def what_if(at):
    at.switch_page("pages/what_if.py").run()
    assert not at.exception, at.exception
    return at


def picker(at, label: str):
    """The What-if page's sentence pickers (keyed by B's text: a new B, new pickers)."""
    return next(s for s in at.selectbox if s.label == label)


def add_edit(at, kind: str, sentence: int, **args):
    at.selectbox(key="whatif_kind").set_value(kind).run()
    picker(at, "Sentence").set_value(sentence).run()
    for key, value in args.items():
        if key == "whatif_with":
            picker(at, "With").set_value(value).run()
        else:
            (at.text_input if key == "whatif_text" else at.selectbox)(key=key).set_value(value).run()
    at.button(key="whatif_add").click().run()
    assert not at.exception, at.exception
    return at


def test_an_edit_shows_both_summaries_scores_heads_and_patching(summarizer):
    at = what_if(summarize(new_app(), SHORT))
    assert any("B is the same as A" in i.value for i in at.info)
    add_edit(at, "move", 0, whatif_to="end")
    assert at.session_state["whatif_edits"] == ["move:1:end"]
    next(b for b in at.button if b.label == "Link to this view").click().run()
    assert json.loads(at.query_params["edits"]) == ["move:1:end"]  # the link carries the edits, not the text
    assert [h.value for h in at.header][:2] == ["A: the document", "B: edited"]
    table = at.dataframe[0].value
    moved = table[table["A #"] == "1"].iloc[0]
    assert moved["change"] == "moved" and moved["B #"] == str(len(table))   # the lead is now last
    assert not table.isna().any().any() and "None" not in table.to_numpy().astype(str)  # text, never "None"
    from analysis.compare import compare
    from analysis.edits import apply_edits

    b = apply_edits(SHORT, ["move:1:end"], summarizer)
    expected = compare(summarizer, SHORT, b)
    shown_b = [np.nan if x in ("—", "not scored") else float(x) for x in table["score B"]]
    assert np.allclose(shown_b, np.array(expected.scores_b, dtype=float), atol=5e-4, equal_nan=True)
    keys = [c.key for c in charts(at)]
    assert keys[:3] == ["whatif_change", "whatif_map_a_plot", "whatif_map_b_plot"]
    change = json.loads(spec(charts(at)[0]))
    assert [d["type"] for d in change["data"]] == ["heatmap", "heatmap"]
    at.selectbox(key="whatif_head").set_value(("bert", 5, 3)).run()   # open a head in A and B
    assert "layer 6, head 4" in spec(charts(at)[1]) and "layer 6, head 4" in spec(charts(at)[2])
    at.checkbox(key="whatif_heads").uncheck().run()                    # quick: no BERT heads
    at.button(key="whatif_patch").click().run()
    assert not at.exception and "whatif_components" in [c.key for c in charts(at)]
    bars = json.loads(spec(next(c for c in charts(at) if c.key == "whatif_components")))
    assert "position row" in json.dumps(bars) and len(at.metric) == 3
    assert {b.label for b in at.main.get("download_button")} == {"Comparison .csv", "HTML report"}


def test_edits_are_undone_cleared_and_a_bad_one_is_one_line(summarizer):
    at = what_if(summarize(new_app(), SHORT))
    add_edit(at, "delete", 1)
    add_edit(at, "replace", 0, whatif_text="=HYPERLINK(\"http://evil.example\") A new first sentence here.")
    assert at.session_state["whatif_edits"][0] == "delete:2" and len(at.session_state["whatif_edits"]) == 2
    replaced = at.dataframe[0].value.query("change == 'replaced'")["sentence"].tolist()
    assert replaced and replaced[0].endswith('→ =HYPERLINK("http://evil.example") A new first sentence here.')
    at.button(key="whatif_undo").click().run()
    assert at.session_state["whatif_edits"] == ["delete:2"]
    at.button(key="whatif_clear").click().run()
    assert at.session_state["whatif_edits"] == [] and any("B is the same as A" in i.value for i in at.info)
    add_edit(at, "replace", 0, whatif_text="   ")                       # an empty replacement is refused
    assert any("the text is empty" in e.value for e in at.error) and at.session_state["whatif_edits"] == []


def test_a_link_carries_the_edits_and_names_a_bad_one(summarizer):
    from streamlit.testing.v1 import AppTest

    from helpers import ROOT

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params.update({"doc": "bbc_insurance_bosses", "edits": json.dumps(["move:1:end", "spin:2"])})
    at.run()
    assert any("spin" in w.value and "unknown" in w.value for w in at.warning), [w.value for w in at.warning]  # named
    at.switch_page("pages/what_if.py").run()
    assert not at.exception
    assert at.session_state["whatif_edits"] == ["move:1:end"]
    assert at.dataframe[0].value["change"].tolist().count("moved") >= 1


def test_a_pasted_b_is_aligned_with_a(summarizer):
    at = what_if(summarize(new_app(), SHORT))
    at.segmented_control(key="whatif_source").set_value("Pasted text").run()
    from analysis.edits import sentences

    kept = sentences(SHORT)
    at.text_area(key="whatif_b").set_value("\n".join(kept[:2] + kept[3:])).run()  # sentence 3 deleted
    assert not at.exception
    table = at.dataframe[0].value
    assert table.query("change == 'deleted'")["A #"].tolist() == ["3"]
    assert (table["change"] == "kept").sum() == len(kept) - 1
