"""Every page of the app under streamlit.testing.v1.AppTest with the real model (no browser)."""
from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from helpers import CORPUS, LONG, ROOT, SHORT, charts, new_app, range_slider, spec, summarize, summarize_button  # noqa: F401

PAGES = ["pages/summary.py", "pages/bert_attention.py", "pages/sentence_encoder.py",
         "pages/masks_positions.py", "pages/learn.py"]


@pytest.fixture(scope="module")
def summarizer_loaded(summarizer):
    return summarizer  # loads the real model once, before the first AppTest


def test_before_summarize_an_info_on_every_page(summarizer_loaded):
    from ui.chart import spec as sent

    def preload(at):
        return [c for c in at.sidebar.get("bidi_component") if c.proto.component_name == "microscope_chart"]

    at = new_app()
    warm = [sent(preload(at)[0].proto.bytes).get("warm")]
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception
        assert len(charts(at)) == 0 and "Summarize" in at.info[0].value
        assert [c.key for c in preload(at)] == ["plotly_preload"]  # plotly.js loads now
        warm.append(sent(preload(at)[0].proto.bytes).get("warm"))
    # with a token map to draw once off-screen (ui.figures.preload_plotly), the same every run: the kind
    # the BERT page draws (one exact map shown, every other trace hidden, head and layer buttons), unrelayed
    first = warm[0]
    assert first and all(w == first for w in warm)
    assert [t["type"] for t in first["data"]] == ["heatmap"] * len(first["data"]) and len(first["data"]) > 2
    assert [t["visible"] for t in first["data"]] == [True] + [False] * (len(first["data"]) - 1)
    assert [m["name"] for m in first["layout"]["updatemenus"]] == ["layer", "head"] and first["layout"].get("meta") is None


def test_empty_document_is_a_message_not_a_traceback(summarizer_loaded):
    at = summarize(new_app(), "   \n  ")
    assert at.error and "empty" in at.error[0].value.lower()
    assert len(charts(at)) == 0


def test_summary_page(summarizer_loaded):
    at = summarize(new_app(), SHORT, k=2)
    assert charts(at)[0].key == "score_bars" and json.loads(spec(charts(at)[0]))["data"][0]["type"] == "bar"
    assert [b.label for b in at.main.get("download_button")] == ["Text .txt", "Markdown .md", "Scores .csv",
                                                                "Trace .npz", "Report .html"]
    assert at.get("html")                               # the shaded document
    assert "2 of" in at.header[0].value


def test_example_picker_and_results_survive_page_switches(summarizer_loaded):
    at = new_app()
    name = next(o for o in at.selectbox(key="example").options if "Insurance" in o)
    at.selectbox(key="example").set_value(name).run()
    assert at.text_area(key="document").value.startswith("Insurance bosses plead guilty")
    summarize_button(at).click().run()
    for page in PAGES + ["pages/summary.py"]:
        at.switch_page(page).run()
        assert not at.exception and len(charts(at)) >= 1
    assert at.text_area(key="document").value.startswith("Insurance bosses")


def test_bert_attention_views_and_selectors(summarizer_loaded):
    at = summarize(new_app(), LONG)
    at.switch_page("pages/bert_attention.py").run()
    assert len(charts(at)) == 1
    first = spec(charts(at)[0])
    assert '"dtype":"u2"' in first and "query %{y}" in first      # uint16 weights, token hover
    menus = json.loads(first)["layout"]["updatemenus"]            # heads and layers switch in the browser
    assert [b["label"] for m in menus if m["name"] == "head" for b in m["buttons"]] == ["mean"] + [str(h) for h in range(1, 13)]
    assert [b["label"] for m in menus if m["name"] == "layer" for b in m["buttons"]] == [str(l) for l in range(1, 7)]
    assert "bert_head" not in [w.key for w in at.selectbox]       # no second head picker
    at.selectbox(key="bert_layer").set_value(5).run()
    assert "layer 6, head 1" in spec(charts(at)[0]) and spec(charts(at)[0]) != first
    at.checkbox(key="bert_hide").check().run()
    assert "[SEP]" not in spec(charts(at)[0])
    assert "weight 0.%{z:04d}" in spec(charts(at)[0])               # hover: the true weight, always
    sqrt = spec(charts(at)[0])
    at.selectbox(key="bert_scale").set_value("linear").run()
    bar = lambda js: json.loads(js)["data"][0]["colorbar"]["title"]["text"]  # noqa: E731  (JSON may escape √)
    assert spec(charts(at)[0]) != sqrt and "√ scale" in bar(sqrt) and "√ scale" not in bar(spec(charts(at)[0]))
    at.selectbox(key="bert_colors").set_value("Magma").run()
    assert "rgb(0, 0, 4)" in spec(charts(at)[0]).lower()        # magma's first colour
    views = {"All heads of a layer": 12, "All layers × heads": 1, "Sentence × sentence": 1}  # the overview: one mosaic
    for view, n_heatmaps in views.items():
        at.segmented_control(key="bert_view").set_value(view).run()
        assert not at.exception and len(charts(at)) == 1
        data = json.loads(spec(charts(at)[0]))["data"]
        assert [d["type"] for d in data] == ["heatmap"] * n_heatmaps
    at.selectbox(key="bert_head").set_value(3).run()                # the sentence view picks its head
    assert "layer 6, head 4" in spec(charts(at)[0])                  # the layer outlived the views without it
    at.switch_page("pages/learn.py").run()
    at.switch_page("pages/bert_attention.py").run()
    assert "mass, layer 6, head 4" in spec(charts(at)[0])           # and a page switch


def test_window_switch_changes_tokens(summarizer_loaded):
    at = summarize(new_app(), LONG)
    at.switch_page("pages/bert_attention.py").run()
    before = spec(charts(at)[0])
    at.selectbox(key="window").set_value(1).run()
    assert any("window 2 of 2" in c.value for c in at.caption) and spec(charts(at)[0]) != before


def test_sentence_encoder_page(summarizer_loaded):
    at = summarize(new_app(), SHORT)
    at.switch_page("pages/sentence_encoder.py").run()
    assert len(charts(at)) == 1
    s = spec(charts(at)[0])
    data = json.loads(s)["data"]
    assert [d["type"] for d in data] == ["heatmap", "bar"]
    assert any(label.startswith("★") for label in data[0]["y"])             # selected sentences marked
    at.selectbox(key="inter_head").set_value(7).run()
    assert "head 8" in spec(charts(at)[0])


def test_masks_page(summarizer_loaded):
    at = summarize(new_app(), SHORT)
    at.switch_page("pages/masks_positions.py").run()
    titles = [spec(c) for c in charts(at)]
    assert len(titles) == 14
    for words in ("padding mask", "Extended additive mask", "[CLS] mask", "Inter-encoder mask",
                  "segment ids", "Sinusoidal positional encoding", "learned position embeddings",
                  "Padding mask (attention_mask)", "Additive mask on BERT", "mask_cls", "encoder (BERT)"):
        assert any(words in t for t in titles), words
    padding = next(json.loads(t) for t in titles if "Padding mask (attention_mask)" in t)["data"][0]
    assert padding["y"] == ["document 1", "document 2", "document 3"]   # this document + 2 examples, padded
    row = next(t for t in titles if "padding:" in t)                       # the padded document's attention row
    assert "total weight 0.0e+00" in row
    at.toggle(key="causal").set_value(True).run()
    assert any("decoder (causal)" in spec(c) for c in charts(at))


def test_learn_page(summarizer_loaded):
    at = summarize(new_app(), SHORT)
    at.switch_page("pages/learn.py").run()
    assert len(charts(at)) == 8 and not at.exception
    probs = next(spec(c) for c in charts(at) if "softmax" in spec(c))
    at.selectbox(key="learn_query").set_value(5).run()
    assert next(spec(c) for c in charts(at) if "softmax" in spec(c)) != probs
    assert "token 6" in spec(charts(at)[0])  # 1-based in the interface


@pytest.mark.parametrize("name", ["one_sentence.txt", "no_punctuation.txt", "control_chars.txt", "unicode.txt",
                                  "html.txt"])
def test_bad_input_corpus_is_summarised(summarizer_loaded, name):
    text = (CORPUS / name).read_bytes().decode("utf-8")
    at = summarize(new_app(), text, k=2)
    assert not at.error and charts(at)[0].key == "score_bars"
    shown = "".join(h.proto.body for h in at.get("html"))
    assert "<script>" not in shown and "onerror=" not in shown.replace("onerror=&quot;", "")


@pytest.mark.parametrize("text,message", [("", "empty"), ("\n\t  \n", "empty"),
                                          ("The council met again today. " * 72_000, "the limit is 100,000")])
def test_refused_input_is_one_message_and_keeps_the_text(summarizer_loaded, text, message):
    at = summarize(new_app(), text)
    assert len(at.error) == 1 and message in at.error[0].value and len(charts(at)) == 0
    assert at.text_area(key="document").value == text  # nothing lost


@pytest.mark.parametrize("name,message", [("binary.bin", "looks like a binary file"), ("latin1.txt", "is not UTF-8 text")])
def test_bad_upload_is_a_message_and_keeps_the_text(summarizer_loaded, name, message):
    """AppTest cannot drive st.file_uploader: call the uploader's callback with the file."""
    from types import SimpleNamespace

    from ui import widgets as common

    state = {"upload": SimpleNamespace(name=name, getvalue=(CORPUS / name).read_bytes), "document": "kept"}
    with pytest.MonkeyPatch.context() as m:
        m.setattr(common.st, "session_state", state)
        common.load_upload()
    assert state["document"] == "kept" and message in state["error"]


def test_figure_cache_shares_one_figure_between_sessions_and_is_bounded():
    """Two browser sessions (AppTest) on the same document's BERT attention page get the same
    figure object from the server-wide cache, hence the same bytes; the cache stays within its
    byte budget."""
    import json

    import plotly.graph_objects as go
    import plotly.io
    from streamlit.testing.v1 import AppTest

    from ui.chart import figure_bytes as figure_bytes_sent
    from ui.chart import themed
    from ui.cache import BoundedCache, figure_bytes
    from ui.resources import figure_cache
    from viz import alt

    figure_cache.clear()  # a new, empty cache for this test
    specs, sent = [], []
    for _ in range(2):
        at = summarize(AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run(), SHORT)
        at.switch_page("pages/bert_attention.py").run()
        assert not at.exception
        specs.append(spec(charts(at)[0]))
        sent.append(charts(at)[0].element.proto.bytes)
    assert specs[0] == specs[1]
    cache = figure_cache()
    maps = [v for k, (v, _) in cache._items.items() if "token_heatmap" in k]
    assert len(maps) == 1 and "head 1:" in maps[0].layout.title.text  # built once, for both sessions
    # what was sent is the figure's own JSON, themed as Streamlit's element would (its template's
    # layout, a bold title), the bytes made once when the figure was cached
    plain = json.loads(plotly.io.to_json(maps[0], validate=False))
    assert json.loads(specs[0]) == themed(plain) and specs[0] != json.dumps(plain)
    assert json.loads(specs[0])["layout"]["title"]["text"] == f"<b>{maps[0].layout.title.text}</b>"
    assert figure_bytes_sent(maps[0]) is maps[0]._chart_bytes and maps[0]._chart_bytes in sent[0]
    # its "As text" table, made once too, is the one the figure describes, and the page shows it
    assert maps[0]._alt_table == alt.table_html(maps[0]) and "<table" in maps[0]._alt_table
    assert any(maps[0]._alt_table in e.proto.body for e in at.get("html"))
    assert 0 < cache.nbytes <= cache.max_bytes and len(cache) <= cache.max_entries
    assert figure_bytes(maps[0]) > figure_bytes(go.Figure(maps[0]))  # the copy for the wire counts
    small = BoundedCache(max_entries=100, max_bytes=3 * figure_bytes(go.Figure(maps[0])), size=figure_bytes)
    for layer in range(5):  # copies of the figure, as if for five layers
        small.get(layer, lambda: go.Figure(maps[0]))
        assert small.nbytes <= small.max_bytes
    assert len(small) == 3


def test_a_pasted_document_s_first_map_is_built_before_the_click(summarizer_loaded):
    """Issue 71: a document pasted on the BERT page is summarized ahead (ui.runs.ahead) and its
    one-head map built there too, on the session's layer, head and settings; the click draws that
    figure from the cache, built once, and starts All layers × heads, which that view then draws."""
    import time

    from ui.resources import figure_cache
    from ui.runs import sha

    at = new_app()
    at.switch_page("pages/bert_attention.py").run()
    at.session_state["bert_layer"], at.session_state["bert_head"] = 2, 1
    at.session_state["bert_colors"], at.session_state["bert_scale"], at.session_state["bert_hide"] = "Blues", "log", True
    text = "Built ahead. " + SHORT  # a document no other test has summarized
    at.text_area(key="document").set_value(text)
    at.number_input(key="k").set_value(3)
    at.run()
    built_ahead = lambda name: [k for k in list(figure_cache()._items) if name in k and sha(text) in k[0]]  # noqa: E731
    maps, mosaics = (lambda: built_ahead("token_heatmap")), (lambda: built_ahead("overview"))
    deadline = time.time() + 120
    while not maps() and time.time() < deadline:
        time.sleep(0.2)
    assert len(maps()) == 1, "the map was not built ahead"
    built = figure_cache()._items[maps()[0]][0]
    summarize_button(at).click().run()
    assert not at.exception
    shown = charts(at)[0]
    assert "BERT layer 3, head 2" in shown.figure["layout"]["title"]["text"] and len(maps()) == 1
    assert built._chart_bytes in shown.element.proto.bytes  # the figure built ahead, not a second one
    # then, from the click's run, the page's "All layers × heads" in the session's colours and contrast (ui.figures.later)
    while not mosaics() and time.time() < deadline:
        time.sleep(0.2)
    assert len(mosaics()) == 1
    at.segmented_control(key="bert_view").set_value("All layers × heads").run()
    assert not at.exception and len(mosaics()) == 1
    assert figure_cache()._items[mosaics()[0]][0]._chart_bytes in charts(at)[0].element.proto.bytes


def test_wording_plurals_a_title_left_out_of_the_maps_and_no_bare_status_box(summarizer_loaded):
    """Issue 34 item 7: "1 sentences under 5 words"; the title missing from the BERT maps without
    a word; a bare "✓ Attributed." box on Why."""
    at = summarize(new_app(), SHORT)
    assert any("1 sentence under 5 words is shown" in c.value for c in at.caption), [c.value for c in at.caption]
    at.switch_page("pages/bert_attention.py").run()
    assert any(c.value.startswith("Not in these maps: sentence 1 (“Insurance bosses plead guilty”)")
               for c in at.caption)
    at.switch_page("pages/why.py").run()
    assert not at.exception and not at.get("expandable") and not at.status


def test_after_switching_to_the_untrained_model(summarizer_loaded):
    """Issue 34 item 7: "Side by side with" read "Choose an option" (its kept model is the one
    now shown) and the untrained warning sat at the foot of the sidebar."""
    at = summarize(new_app(), SHORT)
    untrained = next(o for o in at.selectbox(key="weights").options if o.startswith("untrained"))
    shipped = at.selectbox(key="weights").value
    at.selectbox(key="summary_other").set_value(untrained).run()
    at.selectbox(key="weights").set_value(untrained).run()
    summarize_button(at).click().run()
    assert not at.exception and at.selectbox(key="summary_other").index == 0  # "— no second model —"
    texts = [getattr(e, "label", None) or getattr(e, "value", "") for e in at.sidebar]
    note = next(n for n, t in enumerate(texts) if "untrained: scores are random" in str(t))
    assert note < texts.index("Summarize")


def test_a_language_the_model_cannot_read_is_said_above_the_summary(summarizer_loaded):
    from tests.test_model import CHINESE

    at = summarize(new_app(), CHINESE, k=1)
    assert not at.exception and "This model reads English" in at.warning[0].value
    at = summarize(new_app(), SHORT)
    assert not any("reads English" in w.value for w in at.warning)


def test_a_long_document_asks_before_whole_document_analyses(summarizer_loaded):
    """Heads and Why on a document of more than LONG_WINDOWS BERT windows: an estimate and a Run
    button first, nothing computed on sight; Run computes it with a Stop button beside."""
    from benchmarks.long_document import document
    from ui.runs import LONG_WINDOWS

    at = summarize(new_app(), document(14_000))
    assert len(summarizer_loaded.encode(document(14_000), None).window_starts) > LONG_WINDOWS
    at.switch_page("pages/heads.py").run()  # the window's statistics at once, importance when asked
    assert not at.exception and "BERT windows of this long document" in at.info[0].value
    assert "importance (gradient)" not in at.dataframe[0].value.columns
    next(b for b in at.button if b.key == "ask_gradient").click().run()
    assert not at.exception and "importance (gradient)" in at.dataframe[0].value.columns
    at.switch_page("pages/why.py").run()
    assert not at.exception and not charts(at) and "BERT windows of this long document" in at.info[0].value
    next(b for b in at.button if b.key == "ask_why").click().run()
    assert not at.exception and charts(at)


def test_contribution_views_on_both_encoders_the_scoreboard_and_learn(summarizer_loaded, summarizer):
    """BERT attention and Sentence encoder: Show = norm-weighted / ALTI draw analysis.mixing's maps
    (checked against a direct call); Why: the scoreboard's verdict and table; Learn: the [SEP] head."""
    from analysis.mixing import mixing, sep_head

    at = summarize(new_app(), SHORT)
    mix = mixing(summarizer, SHORT)
    at.switch_page("pages/bert_attention.py").run()
    attention = spec(charts(at)[0])
    at.segmented_control(key="bert_show").set_value("norm-weighted").run()
    assert not at.exception and len(charts(at)) == 1
    norm = json.loads(spec(charts(at)[0]))
    assert spec(charts(at)[0]) != attention and sum(len(m["buttons"]) for m in norm["layout"]["updatemenus"] if m["name"] == "head") == 13
    assert any("mixing ratio" in c.value and f"{mix.mixing_ratio[0]:.0%}" in c.value for c in at.caption)
    at.segmented_control(key="bert_show").set_value("ALTI").run()
    alti = json.loads(spec(charts(at)[0]))
    assert "ALTI, layer 1" in alti["layout"]["title"]["text"] and "contribution" in spec(charts(at)[0])
    assert "layer 1 input token (contributing)" in alti["data"][0]["hovertemplate"]
    at.radio(key="bert_alti").set_value("composed to the input").run()
    composed = json.loads(spec(charts(at)[0]))
    assert "composed" in composed["layout"]["title"]["text"]
    assert composed["data"][0]["hovertemplate"].startswith("top-layer token")
    at.segmented_control(key="bert_show").set_value("value zeroing").run()
    assert not at.exception and not charts(at)   # asked for, not run on sight
    next(b for b in at.button if b.key == "bert_vz_run").click().run()
    from analysis.mixing import value_zeroing

    vz, totals = value_zeroing(summarizer, SHORT, 0)
    data = json.loads(spec(charts(at)[0]))["data"][0]
    shown = np.frombuffer(base64.b64decode(data["z"]["bdata"]), np.uint16).reshape(vz.shape)
    assert "Value zeroing, layer 1" in spec(charts(at)[0]) and np.abs(shown / 1e4 - vz).max() < 1e-4
    assert any(f"median {np.median(totals):.3g}" in c.value for c in at.caption)
    at.switch_page("pages/sentence_encoder.py").run()
    at.segmented_control(key="inter_show").set_value("ALTI").run()
    data = json.loads(spec(charts(at)[0]))["data"][0]
    shown = np.frombuffer(base64.b64decode(data["customdata"]["bdata"]), np.float32).reshape(mix.inter_alti.shape)
    assert np.allclose(shown, mix.inter_alti_layer[0], atol=1e-3)   # float16 on the way, as attention
    at.segmented_control(key="inter_show").set_value("norm-weighted").run()
    assert not at.exception and "norm-weighted share" in spec(charts(at)[0])
    at.switch_page("pages/learn.py").run()
    at.toggle(key="learn_sep").set_value(True).run()
    found = sep_head(summarizer.trace(SHORT).bert_attention, mix)
    assert any(f"Layer {found['layer'] + 1}, head {found['head'] + 1}" in m.value for m in at.markdown)
    at.switch_page("pages/why.py").run()
    next(b for b in at.button if b.key == "why_scoreboard_run").click().run()
    board = next(i.value for i in at.info if i.icon == ":material/verified:")  # the scoreboard's verdict
    assert not at.exception and ("Trust" in board or "No explanation" in board)
    table = next(d.value for d in at.dataframe if "method" in d.value.columns)
    assert {"raw attention (last layer, mean of heads)", "random order"} <= set(table["method"])


# ---------------------------------------------------------------- what is shown is what the controls say (issue 41)

def title(at) -> str:
    return json.loads(spec(charts(at)[0]))["layout"]["title"]["text"]


def test_a_new_document_draws_its_own_sentence_range_not_the_last_ones(summarizer_loaded):
    """A range picked on one document is not applied to the next: the map after a new Summarize
    covers the new document's whole window, as its slider says."""
    at = summarize(new_app(), SHORT)
    at.switch_page("pages/bert_attention.py").run()
    range_slider(at).set_value((3, 7)).run()  # sentences 3-7 (1-based, as shown)
    T_short = int(next(c.value for c in at.caption if " tokens · " in c.value).split()[0])
    assert f"{T_short} × {T_short}" not in title(at)  # the picked range: fewer tokens than the window
    summarize(at, LONG)
    T = int(next(c.value for c in at.caption if " tokens · " in c.value).split()[0])
    s = range_slider(at)
    assert s.value == (int(s.min), int(s.max)) and s.max - s.min + 1 > 6  # the whole window, not 3-7
    assert f"{T} × {T} tokens" in title(at), (T, title(at))


def test_sentence_encoder_alti_offers_only_the_pickers_that_apply(summarizer_loaded):
    """ALTI is per layer: no Head picker; composed: no Layer picker either. What is offered
    changes the map."""
    at = summarize(new_app(), SHORT)
    at.switch_page("pages/sentence_encoder.py").run()
    assert not at.warning and not at.exception
    at.segmented_control(key="inter_show").set_value("ALTI").run()
    keys = {s.key for s in at.selectbox}
    assert "inter_layer" in keys and "inter_head" not in keys
    one = spec(charts(at)[0])
    at.selectbox(key="inter_layer").set_value(1).run()
    assert spec(charts(at)[0]) != one and "ALTI, layer 2" in title(at)
    at.radio(key="inter_alti").set_value("composed").run()
    assert not {"inter_layer", "inter_head"} & {s.key for s in at.selectbox} and "composed" in title(at)
    at.segmented_control(key="inter_show").set_value("attention").run()
    assert {"inter_layer", "inter_head"} <= {s.key for s in at.selectbox}


def test_choices_show_what_is_active_and_the_scoreboard_picker_keeps_its_choice(summarizer_loaded):
    """What if's Document B shows Edits as chosen while Edits is what B is; every View/Show
    control must keep a choice (a second click on the chosen one does not clear it); the
    scoreboard's value-zeroing picker still reads "leave out" after a run with it."""
    at = summarize(new_app(), SHORT)
    at.switch_page("pages/what_if.py").run()
    assert at.segmented_control(key="whatif_source").value == "Edits"
    at.switch_page("pages/why.py").run()
    picker = at.selectbox(key="why_vz")
    assert picker.value == "— leave out —"
    next(b for b in at.button if b.key == "why_scoreboard_run").click().run()
    assert at.selectbox(key="why_vz").value == "— leave out —" and not at.exception
    assert "None" not in " ".join(map(str, at.dataframe[0].value.to_numpy().ravel()))
    assert any("random orders spread" in c.value for c in at.caption)
    for page, key in (("bert_attention", "bert_view"), ("bert_attention", "bert_show"), ("heads", "heads_view"),
                      ("sentence_encoder", "inter_show"), ("what_if", "whatif_source")):
        at.switch_page(f"pages/{page}.py").run()
        assert at.segmented_control(key=key).proto.required, key


def test_each_kind_of_chart_is_explained_once_in_plain_words(summarizer_loaded):
    """Issue 50: "What am I looking at?" under the first chart of each kind on a page, not under
    every chart (Masks & positions draws 14 charts of two kinds)."""
    from viz.plain import PLAIN

    at = summarize(new_app(), SHORT)
    plain = lambda: [e for e in at.expander if e.label == "What am I looking at?"]  # noqa: E731
    assert [e.markdown[0].value for e in plain()] == [PLAIN["scores"]]
    at.switch_page("pages/masks_positions.py").run()
    assert not at.exception and len(charts(at)) > 10
    assert sorted(e.markdown[0].value for e in plain()) == sorted([PLAIN["masks"], PLAIN["positions"]])
