"""Word attributions by three methods and their faithfulness (issue 73): Integrated Gradients
against a plain Riemann-sum implementation on a toy model and complete on the real one,
occlusion against one forward per word, the deletion and insertion curves (the [MASK]ed document
at both ends), the methods over documents with intervals, the command lines, the Why page."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from helpers import DOC, SHORT, tiny_backbone
from model.hooks import intervene
from model.inter_encoder import InterEncoderConfig
from model.summarizer import Summarizer


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Summarizer:
    d = tiny_backbone(tmp_path_factory.mktemp("tiny_attribution"), layers=2, heads=2, hidden=16)
    return Summarizer.load(d, inter=InterEncoderConfig(d_model=16, layers=2, heads=2, d_ff=32))


def plain_ig(s: Summarizer, text: str, i: int, j: int | None, steps: int = 400) -> np.ndarray:
    """Integrated Gradients the long way: one window at a time is not needed (the toy document has
    one), the midpoint rule with many steps, one forward and backward per step, the [MASK] baseline
    built from the token ids."""
    from model.summarizer import best_part

    enc = s.encode(text, s.max_windows)
    assert len(enc.window_starts) == 1
    inp = s.window_inputs(enc, *enc.window(0))
    with torch.no_grad():
        x = s.word_embeddings(inp["input_ids"]).float()  # [1, T, D]
        special = torch.tensor([t in ("[CLS]", "[SEP]") for t in enc.tokens], device=s.device)
        mask = s.word_embeddings(torch.tensor(s.token_id("[MASK]")))
        base = torch.where(special[None, :, None], x, mask)
        scores = s.score(enc)
    pi = best_part(enc.input_sentences, scores, i)
    pj = None if j is None else best_part(enc.input_sentences, scores, j)
    total = torch.zeros_like(x)
    for n in range(steps):
        alpha = (n + 0.5) / steps
        z = (base + alpha * (x - base)).requires_grad_()
        with intervene(s.model, {"bert.embed.word": lambda value, m, a: z}):
            p = s.score_vectors(s.model.sentence_vectors(**inp)).float()[0]
        f = p[pi] - (p[pj] if pj is not None else 0)
        total += torch.autograd.grad(f, z)[0]
    return ((x - base) * total / steps).sum(-1)[0].detach().cpu().numpy()  # [T]


def test_integrated_gradients_equals_a_plain_implementation_on_a_toy_model(tiny):
    from analysis import attribution as A
    from analysis.explain import word_weights, words

    for j in (None, 3):
        ours = A.attribute(tiny, DOC, 1, j, "integrated-gradients", baseline="mask", steps=24)
        w = words(tiny, tiny.encode(DOC, tiny.max_windows), DOC)
        ref = word_weights(w, plain_ig(tiny, DOC, 1, j))
        got = np.array([x["weight"] for x in ours["words"]])
        assert np.abs(ref).max() > 1e-4
        assert np.allclose(got, ref, atol=2e-3 * np.abs(ref).max() + 1e-6), (got, ref)
        # completeness: the words add up to the gap minus the gap at the baseline
        assert abs(ours["delta"]) < 1e-3 * max(abs(ours["gap"] - ours["baseline_gap"]), 1e-3) + 1e-5


def test_occlusion_is_the_score_without_each_word(tiny):
    from analysis import attribution as A
    from analysis.explain import words

    ours = A.attribute(tiny, DOC, 2, None, "occlusion", baseline="mask")
    enc = tiny.encode(DOC, tiny.max_windows)
    w = words(tiny, enc, DOC)
    inp = tiny.window_inputs(enc, *enc.window(0))
    p = A.prepare(tiny, DOC, 2)
    for word in (0, 4, int(w.token_word.max())):
        ids = inp["input_ids"].clone()
        ids[0, torch.from_numpy(w.token_word == word)] = tiny.token_id("[MASK]")
        with torch.no_grad():
            s = tiny.score_vectors(tiny.model.sentence_vectors(**{**inp, "input_ids": ids}))[0]
        assert ours["words"][word]["weight"] == pytest.approx(float(p.scores[p.parts[0]] - s[p.parts[0]]), abs=1e-5)
    assert ours["baseline"] == "mask" and ours["gap"] == pytest.approx(float(p.scores[p.parts[0]]), abs=1e-6)
    # a notebook draws it: every word in a span with its weight, the text escaped
    tricky = DOC.replace("Monday", "<b>Monday</b> & co")
    drawn = A.attribute(tiny, tricky, 2, None, "occlusion")
    shown = drawn._repr_html_()
    assert "&lt;b&gt;Monday&lt;/b&gt;" in shown and "<b>Monday" not in shown
    assert shown.count("<span ") == len(drawn["words"]) == len(ours["words"]) + 2  # "&", "co"
    assert f'title="{drawn["words"][0]["weight"]:+.4f}"' in shown


def test_the_curves_end_at_the_masked_document_and_a_ranking_by_the_truth_beats_random(tiny):
    from analysis import attribution as A

    occ = np.array([x["weight"] for x in A.attribute(tiny, DOC, 1, None, "occlusion", baseline="mask")["words"]])
    c = A.curves(tiny, DOC, 1, {"occlusion": occ, "reversed": -occ}, fractions=(0.2, 0.5, 1.0), orders=3)
    for m in ("occlusion", "reversed", "random"):
        v = c["methods"][m]
        assert v["deletion"][-1] == pytest.approx(c["score"] - c["masked"], abs=1e-5)  # everything deleted
        assert v["insertion"][-1] == pytest.approx(c["score"] - c["masked"], abs=1e-5)  # everything restored
    assert c["methods"]["occlusion"]["deletion"][0] > c["methods"]["reversed"]["deletion"][0]
    with pytest.raises(ValueError, match="not scored|no sentence"):
        A.attribute(tiny, DOC, 99, None, "occlusion")
    with pytest.raises(ValueError, match="differs by nothing"):
        A.attribute(tiny, DOC, 1, 1, "occlusion")


@pytest.mark.slow
def test_on_the_real_model_ig_is_complete_and_the_methods_compare_over_documents(summarizer):
    from analysis import attribution as A
    from helpers import LONG

    for text in (SHORT, LONG):  # one window, two windows
        s = summarizer.summarize(text)
        i = s.selected[0]
        j = next(n for n, x in enumerate(s.scores) if x is not None and n not in s.selected)
        for target in (None, j):
            a = A.attribute(summarizer, text, i, target, "integrated-gradients")
            moved = a["gap"] - a["baseline_gap"]
            assert abs(a["delta"]) <= 0.01 * abs(moved) + 1e-9, a  # the words account for the gap (points doubled)
            assert abs(a["baseline_gap"]) == min(abs(g) for g in a["baselines"].values())
    cmp = A.compare(summarizer, [SHORT, SHORT[:700], "   "], ("grad-input", "integrated-gradients"), orders=2)
    assert cmp["documents"] == 2 and set(cmp["aopc"]) == {"grad-input", "integrated-gradients", "random"}
    assert [d["document"] for d in cmp["skipped"]] == [2] and "empty" in cmp["skipped"][0]["why"]
    for m, v in cmp["aopc"].items():
        for k in ("deletion", "insertion"):
            assert v[k]["low"] <= v[k]["mean"] <= v[k]["high"]


@pytest.mark.slow
def test_the_command_lines(summarizer, tmp_path, capsys):
    from analysis.__main__ import main

    f = tmp_path / "doc.txt"
    f.write_text(SHORT, encoding="utf-8")
    s = summarizer.summarize(SHORT)
    assert main(["explain", str(f), "--sentence", str(s.selected[0]), "--method", "integrated-gradients",
                 "--steps", "16"]) == 0
    out = json.loads(capsys.readouterr().out)
    c = out["completeness"][str(s.selected[0])]
    assert abs(c["delta"]) < 0.05 * abs(c["gap"] - c["baseline_gap"]) and "Integrated Gradients" in out["method"]
    assert main(["explain", str(f), "--sentence", "2", "--versus", "4", "--method", "occlusion"]) == 0
    out = json.loads(capsys.readouterr().out)["contrast"]
    assert out["completeness"]["baseline"] in ("mask", "pad", "zero") and "occlusion" in out["method"]
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": n, "text": t}) + "\n" for n, t in enumerate([SHORT, SHORT[:600]])))
    assert main(["attribution", str(docs), "--methods", "grad-input,occlusion", "--orders", "2"]) == 0
    out = json.loads(capsys.readouterr().out)["faithfulness"]
    assert out["documents"] == 2 and set(out["aopc"]) == {"grad-input", "occlusion", "random"}
    assert main(["attribution", str(docs), "--methods", "lime"]) == 1 and "lime" in capsys.readouterr().err
    # the lens and the route, with a sentence number (not the encoder's part index)
    assert main(["lens", str(f)]) == 0
    lens = json.loads(capsys.readouterr().out)["lens"]
    assert len(lens["inter"]) == 3 and len(lens["bert_raw"]) == 6
    assert [x is None for x in lens["inter"][-1]] == [x is None for x in s.scores]
    assert main(["route", str(f), "--sentence", "2", "--threshold", "0.5"]) == 0
    r = json.loads(capsys.readouterr().out)["route"]
    top = next(n for n in r["nodes"] if n["stage"] == "enc" and n["layer"] == 2)
    assert top["label"] == "sentence 2" and top["index"] == 1  # sentence 1 (the title) is too short: part 1
    assert main(["route", str(f), "--sentence", "0"]) == 1 and "not scored" in capsys.readouterr().err
    assert main(["route", str(f), "--sentence", "99"]) == 1 and "numbered 0 to" in capsys.readouterr().err
    assert main(["mixing", str(f), "--sentence", "99"]) == 1
    assert "numbered 0 to 8 here" in capsys.readouterr().err  # (it said "sentence 100 is not scored")


@pytest.mark.slow
def test_the_why_page_offers_the_methods_and_compares_them(summarizer):
    from helpers import charts, new_app, spec, summarize

    at = summarize(new_app(), SHORT)
    at.switch_page("pages/why.py").run()
    assert not at.exception and at.session_state["why_method"] == "grad-input"
    at.segmented_control(key="why_method").set_value("integrated-gradients").run()
    assert not at.exception
    assert any("convergence delta" in c.value for c in at.caption)
    at.toggle(key="why_methods").set_value(True).run()
    assert not at.exception and any("AOPC" in c.value for c in at.caption)
    assert any("Deletion: the score" in spec(c) for c in charts(at))


@pytest.mark.browser
def test_in_chromium_the_why_page_switches_method_and_draws_the_comparison(server, browser):
    """The real app: Integrated Gradients picked on the Why page (its completeness said under the
    words), then the three methods compared (both curves drawn)."""
    from browsing import go_to, idle, open_app, summarize as click_summarize

    page = open_app(browser, server)
    click_summarize(page, SHORT)
    page.get_by_text("Result for Insurance", exact=False).first.wait_for(timeout=120_000)
    idle(page)
    go_to(page, "Why this summary")
    page.get_by_role("radio", name="Integrated Gradients").click(timeout=120_000)
    idle(page)
    page.get_by_text("convergence delta").first.wait_for(timeout=120_000)
    assert "Traceback" not in page.content()
    page.get_by_text("Compare the three methods").click()
    idle(page)
    chart = page.locator(".js-plotly-plot").filter(has_text="Deletion: the score")
    chart.wait_for(timeout=120_000)
    assert chart.locator(".scatterlayer .trace").count() == 8  # 4 lines × 2 panels
    assert page.get_by_text("AOPC: the mean change").is_visible()
    page.close()
