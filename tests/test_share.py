"""Share, export and trust (AppTest, real model): results never shown as current when they are
not, links that restore the view, document text always shown as text, the first screen."""
from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest

from test_app import CORPUS, SHORT, charts, navigation_not_pages_dir, new_app, spec, summarize  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
PAYLOADS = (CORPUS / "payloads.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module", autouse=True)
def model_loaded(summarizer):
    return summarizer


def warnings(at) -> str:
    return " ".join(w.value for w in at.warning)


def test_edited_inputs_mark_the_result_out_of_date_and_the_settings_are_shown():
    at = summarize(new_app(), SHORT, k=2)
    assert "Out of date" not in warnings(at)
    caption = " ".join(c.value for c in at.caption)
    assert "k = 2" in caption and "trigram blocking on" in caption
    at.text_area(key="document").set_value(SHORT + " One more sentence was added at the end today.").run()
    assert "Out of date" in warnings(at) and "the document" in warnings(at)
    assert len(charts(at)) == 1  # the old result stays visible, marked
    at.number_input(key="k").set_value(3).run()
    assert "the document, k changed" in warnings(at)


def test_an_edited_example_is_no_longer_named_as_the_example():
    at = new_app()
    name = next(o for o in at.selectbox(key="example").options if "Insurance" in o)
    at.selectbox(key="example").set_value(name).run()
    at.text_area(key="document").set_value(at.text_area(key="document").value + " Edited.").run()
    assert at.selectbox(key="example").value is None


def test_first_screen_explains_and_tries_an_example():
    at = new_app()
    assert "Attention microscope" in at.title[0].value and len(charts(at)) == 0
    next(b for b in at.button if b.label == "Try an example").click().run()
    assert not at.exception and len(charts(at)) == 1
    assert at.selectbox(key="example").value is not None


def test_a_link_restores_document_settings_and_pickers():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params.update(doc="bbc_insurance_bosses", k="2", tb="0", layer="5", head="4")
    at.run()
    assert not at.exception and not at.error
    assert at.number_input(key="k").value == 2 and at.checkbox(key="block_trigram").value is False
    assert at.text_area(key="document").value.startswith("Insurance bosses")
    at.switch_page("pages/bert_attention.py").run()
    assert "BERT layer 5, head 4" in json.loads(spec(charts(at)[0]))["layout"]["title"]["text"]


def test_a_pasted_document_gets_a_link_while_the_server_holds_it():
    at = summarize(new_app(), SHORT.replace("Insurance", "Assurance"), k=2)
    assert "doc" not in at.query_params  # the address bar changes when asked
    next(b for b in at.button if b.label == "Link to this view").click().run()
    doc = at.query_params["doc"]
    assert doc.startswith("id:") and at.query_params["k"] == "2"
    from streamlit.testing.v1 import AppTest

    fresh = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    fresh.query_params.update(doc=doc, k="2")
    fresh.run()
    assert fresh.text_area(key="document").value.startswith("Assurance") and len(charts(fresh)) == 1
    gone = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    gone.query_params.update(doc="id:0000000000000000")
    gone.run()
    assert "no longer on this server" in gone.error[0].value and len(charts(gone)) == 0


def test_an_interrupted_summarize_is_reported():
    at = new_app()
    at.session_state["_summarize_running"] = True
    at.run()
    assert "did not finish" in warnings(at)
    at.run()
    assert "did not finish" not in warnings(at)  # once


def test_document_text_is_text_in_widgets_and_figures():
    at = summarize(new_app(), PAYLOADS)
    assert not at.error and "\u202e" not in at.get("html")[0].proto.body  # bidi override blanked
    at.switch_page("pages/bert_attention.py").run()
    options = " ".join(at.select_slider(key="bert_range").options)
    assert r"\[click h" in options and r"\:red\[" in options and r"\<b\>" in options
    assert not re.search(r"(?<!\\)[\[\]*$<>:]", options)  # every Markdown/LaTeX/directive character escaped
    at.segmented_control(key="bert_view").set_value("Sentence × sentence").run()
    figure = spec(charts(at)[0])
    assert "&lt;b&gt;bold" in figure and "<b>bold" not in figure                    # Plotly's HTML escaped
    at.switch_page("pages/learn.py").run()
    options = at.selectbox(key="learn_query").options   # a selectbox shows plain text: no escaping needed
    assert any(o.endswith(" <") for o in options) and not any(o.endswith(" \\<") for o in options)


def test_learn_page_causal_mask_hides_later_keys():
    at = summarize(new_app(), SHORT)
    at.switch_page("pages/learn.py").run()
    at.selectbox(key="learn_query").set_value(5).run()
    at.toggle(key="causal").set_value(True).run()
    probs = json.loads(next(spec(c) for c in charts(at) if "softmax" in spec(c)))["data"][0]["y"]
    y = np.frombuffer(base64.b64decode(probs["bdata"]), dtype=np.float32)  # a typed array, as sent
    assert y[6:].max() < 1e-6 and abs(y[:6].sum() - 1) < 1e-4   # keys after token 6 get nothing


def test_utf16_upload_is_read_as_text():
    from types import SimpleNamespace

    from pages import common

    state = {"upload": SimpleNamespace(name="utf16.txt", getvalue=(CORPUS / "utf16.txt").read_bytes)}
    with pytest.MonkeyPatch.context() as m:
        m.setattr(common.st, "session_state", state)
        common.load_upload()
    assert state["document"].startswith("The council met") and "error" not in state
