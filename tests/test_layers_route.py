"""Where the choice is made and the route to a score (issue 61): the read-outs after every stage
(the last equals the model's scores; BERT's top layer read raw through the encoder too), the
tuned lens shipped with the weights, and the route graph's edges (at threshold 0 each node's
shares are its ALTI row); both as views of their pages."""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from helpers import SHORT

pytestmark = pytest.mark.slow


def test_the_last_read_out_is_the_models_score_and_the_lens_ships_with_the_weights(summarizer):
    from analysis.layers import LENS, layer_scores, load_lens

    r = layer_scores(summarizer, SHORT)
    scores = summarizer.summarize(SHORT).scores
    L, L2 = summarizer.size()[0], len(r["inter"]) - 1
    assert len(r["bert_raw"]) == L and L2 == 2
    for row in (r["inter"][-1], r["bert_raw"][-1]):  # after the encoder's last layer; BERT's top layer, raw
        assert np.allclose([np.nan if x is None else x for x in row], [np.nan if x is None else x for x in scores],
                           atol=1e-5, equal_nan=True)
    A, b, meta = load_lens(LENS)
    assert A.shape == (L, 384, 384) and b.shape == (L, 384) and r["bert_tuned"] is not None
    r2 = r["lens"]["r2_validation"]
    assert len(r2) == L and r2 == sorted(r2) and r2[-1] > 0.95  # held-out: deeper layers are nearer the top


def test_the_route_at_threshold_0_is_alti_and_a_threshold_prunes_it(summarizer):
    from analysis.mixing import mixing
    from analysis.route import route

    mix = mixing(summarizer, SHORT, 0)
    part = int(mix.parts[len(mix.parts) // 2])
    full = route(mix, part, 0.0)
    out = defaultdict(float)
    for upper, lower, share, flow in full.edges:
        out[upper] += share
    L, L2 = len(mix.alti_layer), len(mix.inter_alti_layer)
    rows = {("enc", l): mix.inter_alti_layer[l - 1].sum(1) for l in range(1, L2 + 1)}
    rows |= {("bert", l): mix.alti_layer[l - 1].sum(1) for l in range(1, L + 1)}
    window = {int(p): n for n, p in enumerate(mix.parts)}
    for (stage, layer, i), total in out.items():
        expected = mix.pooling[window[i]].sum() if stage == "enc" and layer == 0 else rows[(stage, layer)][i]
        assert total == pytest.approx(expected, abs=1e-5), (stage, layer, i)
    assert full.nodes[("enc", L2, part)] == 1.0
    assert sum(f for (s, l, _), f in full.nodes.items() if s == "bert" and l == 0) == pytest.approx(
        sum(mix.pooling[window[p]].sum() * f for (s, l, p), f in full.nodes.items() if s == "enc" and l == 0 and p in window),
        abs=1e-4)  # the flow reaching the words is what the window's sentences pass down
    sizes = [len(route(mix, part, t).edges) for t in (0.0, 0.1, 0.3, 0.6)]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] < sizes[0]


def test_both_are_views_of_their_pages(summarizer):
    from helpers import chart_text, charts, new_app, summarize

    at = summarize(new_app(), SHORT)
    at.switch_page("pages/sentence_encoder.py").run()
    at.segmented_control(key="inter_show").set_value("score by layer").run()
    assert not at.exception and [c.key for c in charts(at)] == ["inter_layers"]
    at.segmented_control(key="inter_lens").set_value("raw").run()
    assert "raw" in charts(at)[0].proto.spec
    at.switch_page("pages/why.py").run()
    assert "why_route_graph" not in [c.key for c in charts(at)]  # on request: ALTI of every layer takes seconds
    at.toggle(key="why_route_show").set_value(True).run()
    assert "why_route_graph" in [c.key for c in charts(at)] and not at.exception
    at.slider(key="why_route_min").set_value(0.8).run()
    assert "0.80 × the strongest" in chart_text(charts(at)[[c.key for c in charts(at)].index("why_route_graph")])
