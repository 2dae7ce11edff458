"""Helpers the test modules share (fixtures live in conftest.py): the example texts, the app under
Streamlit's AppTest (a new session, Summarize, its charts), and a tiny random BERT on disk."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import orjson
import torch
from safetensors.torch import save_file

from model.bert import BertConfig, BertModel

ROOT = Path(__file__).resolve().parents[1]
LONG = (ROOT / "examples" / "bbc_call_centres.txt").read_text(encoding="utf-8")    # 2 BERT windows
SHORT = (ROOT / "examples" / "bbc_insurance_bosses.txt").read_text(encoding="utf-8")
CORPUS = ROOT / "tests" / "bad_inputs"


def new_app():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    return at.run()


def opened(query: dict | None = None, page: str | None = None):
    """A new session opened at an address: its query (?class=, ?story=, ?homework=, ?seat=) and
    optionally a page's script."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    if page is not None:
        at.switch_page(page)
    at.query_params.update(query or {})
    return at.run()


def button(at, key: str):
    """The button with this widget key."""
    return next(b for b in at.button if b.key == key)


def shared_store():
    """The store the app's sessions share (links, stories, classes) in this test process."""
    from ui.resources import document_store

    return document_store()


def summarize_button(at):
    return next(b for b in at.button if b.label == "Summarize")


def summarize(at, text: str, k: int = 3):
    at.text_area(key="document").set_value(text)
    at.number_input(key="k").set_value(k)
    summarize_button(at).click().run()
    assert not at.exception, at.exception
    return at


class Chart:
    """A chart of the app's chart element (ui/chart.py) as AppTest holds it: its ``key``, the
    figure and config it sent, and the figure's JSON as ``proto.spec`` (as st.plotly_chart's was)."""

    def __init__(self, element):
        from ui.chart import spec as sent

        self.key, self.element = element.key, element
        data = sent(element.proto.bytes)
        self.figure, self.config = data["figure"], data["config"]
        self.proto = SimpleNamespace(spec=orjson.dumps(self.figure).decode(), config=json.dumps(self.config))


def charts(at):
    """The pages' charts (not the sidebar's blank one that preloads plotly.js in the browser)."""
    return [Chart(e) for e in at.get("bidi_component")
            if e.proto.component_name == "microscope_chart" and e.key != "plotly_preload"]


def range_slider(at):
    """BERT attention's Sentences slider (its key names the result it belongs to)."""
    return next(s for s in at.slider if s.key.startswith("bert_range"))


def spec(chart) -> str:
    return chart.proto.spec


def chart_text(chart) -> str:
    """A chart's spec as text: Plotly writes "★" as \\u2605 without orjson (a fresh virtualenv) and as is with it."""
    import json

    return json.dumps(json.loads(chart.proto.spec), ensure_ascii=False)



WORDS = "the a of to and in is was it on for he she said that with by at news oil price growth".split()
DOC = ("The oil price rose again on Monday in London. Analysts said the growth was a surprise to them. "
       "He said that it was news for the market. She said the price is high for a week. "
       "It was said by the news that growth is on. The end.")


def tiny_backbone(directory: Path, layers=2, heads=2, hidden=16, seed=0) -> Path:
    """A random BERT in Hugging Face layout: config.json, vocab.txt, model.safetensors."""
    directory.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ","] + WORDS + [f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz"] + list("abcdefghijklmnopqrstuvwxyz")
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n")
    cfg = dict(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
               intermediate_size=4 * hidden, max_position_embeddings=128, hidden_act="gelu", model_type="bert")
    (directory / "config.json").write_text(json.dumps(cfg))
    torch.manual_seed(seed)
    bert = BertModel(BertConfig.from_json(directory / "config.json"))
    save_file({k: v.contiguous() for k, v in bert.state_dict().items()}, directory / "model.safetensors")
    return directory
