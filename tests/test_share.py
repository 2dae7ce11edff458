"""Share, export and trust (AppTest, real model): results never shown as current when they are
not, links that restore the view, document text always shown as text, the first screen."""
from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest

from helpers import CORPUS, SHORT, charts, new_app, range_slider, spec, summarize

ROOT = Path(__file__).resolve().parents[1]
PAYLOADS = (CORPUS / "payloads.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module", autouse=True)
def model_loaded(summarizer):
    return summarizer


def warnings(at) -> str:
    """The warnings as they read (Markdown escapes removed)."""
    return re.sub(r"\\(.)", r"\1", " ".join(w.value for w in at.warning))


def test_edited_inputs_mark_the_result_out_of_date_and_the_settings_are_shown():
    at = summarize(new_app(), SHORT, k=2)
    assert "Out of date" not in warnings(at)
    caption = " ".join(c.value for c in at.caption)
    assert "k = 2" in caption and "trigram blocking on" in caption
    at.text_area(key="document").set_value(SHORT + " One more sentence was added at the end today.").run()
    assert "Out of date" in warnings(at) and "the document" in warnings(at)
    assert charts(at)[0].key == "score_bars"  # the old result stays visible, marked
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
    assert not at.exception and charts(at)[0].key == "score_bars"
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
    assert fresh.text_area(key="document").value.startswith("Assurance") and charts(fresh)[0].key == "score_bars"
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
    named = ""  # the caption under the Sentences slider names the range's two ends: every sentence in turn
    for n in range(int(range_slider(at).min), int(range_slider(at).max) + 1):  # sentence numbers, 1-based
        range_slider(at).set_range(n, n).run()
        named += next(c.value for c in at.caption if c.value.startswith("sentence ")) + " "
    assert r"\[click h" in named and r"\:red\[" in named and r"\<b\>" in named
    assert not re.search(r"(?<!\\)[\[\]*$<>:]", named)  # every Markdown/LaTeX/directive character escaped
    assert all(isinstance(v, int) for v in range_slider(at).value)  # the thumbs: sentence numbers only
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

    from ui import widgets as common

    state = {"upload": SimpleNamespace(name="utf16.txt", getvalue=(CORPUS / "utf16.txt").read_bytes)}
    with pytest.MonkeyPatch.context() as m:
        m.setattr(common.st, "session_state", state)
        common.load_upload()
    assert state["document"].startswith("The council met") and "error" not in state


# ---------------------------------------------------------------- a stranger's input (issue 25)

def test_urls_and_addresses_in_a_document_never_become_links():
    """The caption names the document by its first words and the Sentences slider by each
    sentence's: a bare URL there stays text (an invisible joiner breaks Streamlit's autolink)."""
    at = summarize(new_app(), "http://evil.example/start is where the story began on Monday.\n" + PAYLOADS)
    caption = next(c.value for c in at.caption if c.value.startswith("Result for"))
    assert "evil" in caption and not re.search(r"(?i)(?<!\\):|://|www\.|@\w", caption.replace("\u2060", "|"))
    at.switch_page("pages/bert_attention.py").run()
    named = next(c.value for c in at.caption if c.value.startswith("sentence "))  # under the Sentences slider
    plain = re.sub(r"\\(.)", r"\1", named.replace("\u2060", "|"))
    assert "evil" in plain and not re.search(r"(?i)://|www\.|@\w", plain), named


@pytest.mark.parametrize("query, named", [({"k": "abc"}, "k=abc"), ({"k": "0"}, "k=0"), ({"tb": "maybe"}, "tb=maybe"),
                                          ({"layer": "x"}, "layer=x"), ({"head": "-2"}, "head=-2"),
                                          ({"w": "../../etc/passwd"}, "w=../../etc/passwd")])
def test_a_bad_link_parameter_is_named_and_the_rest_restores(query, named):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params.update(doc="bbc_insurance_bosses", **query)
    at.run()
    assert not at.exception and named in warnings(at) and "the rest of the link is restored" in warnings(at)
    assert at.text_area(key="document").value.startswith("Insurance bosses")  # the document is kept
    assert charts(at)[0].key == "score_bars"                                                # and summarized


def test_a_link_to_a_layer_or_head_the_model_lacks_says_so():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params.update(doc="bbc_insurance_bosses", layer="99", head="3", view="Sentence × sentence")
    at.run()
    at.switch_page("pages/bert_attention.py").run()
    assert "has no layer 99" in warnings(at) and not at.exception
    assert "layer 1, head 3" in json.loads(spec(charts(at)[0]))["layout"]["title"]["text"]


def test_an_unexpected_error_is_one_line_with_an_id_and_no_traceback(monkeypatch, caplog):
    import viz.summary

    def broken(*args, **kwargs):
        raise RuntimeError("/srv/secret/path exploded")

    monkeypatch.setattr(viz.summary, "score_bars", broken)
    at = summarize(new_app(), SHORT.replace("Insurance", "Unexpected"))
    assert not at.exception
    (error,) = [e.value for e in at.error]
    assert "error id" in error and "/srv/secret" not in error and "Traceback" not in error
    error_id = re.search(r"error id (\w+)", error)[1]
    assert any(error_id in r.getMessage() and r.exc_info for r in caplog.records)  # logged with the traceback


def test_error_details_are_off_in_the_browser():
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] == "none"


@pytest.mark.parametrize("cell, safe", [("=1+1", "'=1+1"), ("+1+1", "'+1+1"), ("@SUM(A1)", "'@SUM(A1)"),
                                        ("-2+3", "'-2+3"), ("\t=x", "'\t=x"), ("-0.5", "-0.5"), ("+3", "+3"),
                                        ("plain text", "plain text"), (0.25, 0.25)])
def test_csv_cells_a_spreadsheet_would_run_are_neutralised(cell, safe):
    import csv
    import io

    from ui.export import csv_text, spreadsheet_safe

    assert spreadsheet_safe(cell) == safe
    rows = list(csv.reader(io.StringIO(csv_text([["text"], [cell]]))))
    assert rows[1][0] == str(safe)


def test_scores_csv_and_tables_go_through_the_neutraliser():
    import pandas as pd

    from model.trace import Summary
    from ui.export import frame_csv, scores_csv

    s = Summary(sentences=("=HYPERLINK(\"http://evil.example\",\"x\") here.", "A normal one."), spans=((0, 1), (2, 3)),
                scores=(-0.5, 0.5), selected=(1,), too_short=(), truncated=(), tokens_cut=0, device="cpu",
                weights="trained", backbone="x")
    lines = scores_csv(s, ["below top k", "selected"]).splitlines()
    assert lines[1].startswith("1,-0.500000,below top k,\"'=HYPERLINK(") and lines[2].endswith("A normal one.")
    assert frame_csv(pd.DataFrame({"head": ["=cmd|' /C calc'!A0"], "value": [1.5]})).splitlines()[1].startswith("'=cmd")


def test_the_why_page_says_when_a_position_was_never_seen_in_training(summarizer):
    """The call-centre article has two BERT windows; the weights were trained on first windows
    only, so a sentence of the second window has a position share that is partly extrapolated."""
    from helpers import LONG

    at = summarize(new_app(), LONG)
    at.switch_page("pages/why.py").run()
    trace = summarizer.trace(LONG)  # the same split into windows as the app's
    second = {int(j) for j in trace.input_sentences[trace.windows[1][0]:]}
    scored = [int(o.split(":")[0].split()[0]) - 1 for o in at.selectbox(key="why_sentence").options]
    first, later = [i for i in scored if i not in second], [i for i in scored if i in second]
    assert later and first
    at.selectbox(key="why_sentence").set_value(later[0]).run()
    text = " ".join(h.proto.body for h in at.get("html"))
    assert "past the input the scorer was trained on" in text and "partly extrapolated" in text
    at.selectbox(key="why_sentence").set_value(first[0]).run()
    assert "extrapolated" not in " ".join(h.proto.body for h in at.get("html")
                                          if f"Sentence {first[0] + 1}</b>" in h.proto.body)


def test_the_report_shows_the_settings_verbatim(summarizer):
    """The report's settings line is text, not Markdown: backslashes and markup come out as typed."""
    from ui.widgets import result_caption
    from viz.report import html_report

    text = "C:\\Users\\x wrote *this* [doc] and <b>that</b> for the team on Monday morning."
    trace = summarizer.trace(text)
    line = result_caption(trace, dict(text=text, k=3, block_trigram=True, weights="w\\x.pt"), {}, plain=True)
    assert "C:\\Users\\x wrote *this* [doc]" in line and "w\\x.pt" in line and "\u2060" not in line
    assert "C:\\Users\\x wrote *this* [doc] and &lt;b&gt;" in html_report("t", line, [], "", [])


def test_the_caption_escapes_the_device_name(summarizer):
    """On a GPU the caption ends in "cuda:0": its colon is escaped like the document's (the
    caption test above then passes there as here), and plain text keeps it as it is."""
    import dataclasses

    from ui.widgets import result_caption

    trace = summarizer.trace("The council met on Monday to vote on the new budget for the town.")
    trace = dataclasses.replace(trace, summary=dataclasses.replace(trace.summary, device="cuda:0"))
    params = dict(text="The council met.", k=3, block_trigram=True, weights="w.pt")
    assert result_caption(trace, params, {}).endswith("cuda\\:0")
    assert result_caption(trace, params, {}, plain=True).endswith("cuda:0")
