"""ui/chart.py: what the app's chart element sends for a figure (its JSON, themed as Streamlit's
element would theme it), made once for a shared figure."""
from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio


def test_a_figure_is_sent_as_its_json_with_the_themes_layout_and_a_bold_title():
    from ui import chart

    fig = go.Figure(go.Heatmap(z=np.arange(12, dtype=np.uint16).reshape(3, 4)), layout=dict(title="a <i>map</i>"))
    plain = json.loads(pio.to_json(fig, validate=False))
    before = json.dumps(plain)
    themed = chart.themed(plain)
    assert json.dumps(plain) == before  # the figure's own dict is not changed (a shared figure's)
    assert themed["data"] is plain["data"] and themed["data"][0]["z"] == {"dtype": "u2", "bdata": plain["data"][0]["z"]["bdata"], "shape": "3, 4"}
    assert themed["layout"]["title"]["text"] == "<b>a <i>map</i></b>"
    assert themed["layout"]["template"]["layout"] == chart.THEME_LAYOUT
    assert themed["layout"]["template"]["data"] == plain["layout"]["template"]["data"]  # the theme's colours, from ui.figures
    assert json.loads(chart.encode(fig)) == themed
    untitled = chart.themed(json.loads(pio.to_json(go.Figure(), validate=False)))
    assert "title" not in untitled["layout"] or not untitled["layout"]["title"].get("text")


def test_a_shared_figure_keeps_its_bytes_and_a_new_one_is_encoded_each_time():
    from ui import chart
    from ui.figures import wired

    fig = go.Figure(go.Bar(x=[1, 2], y=[3, 4]))
    assert chart.figure_bytes(fig) == chart.figure_bytes(fig) and chart.figure_bytes(fig) is not chart.figure_bytes(fig)
    wired(fig)
    assert chart.figure_bytes(fig) is fig._chart_bytes is chart.figure_bytes(fig)
    assert chart.spec(fig._chart_bytes)["data"][0]["type"] == "bar"
