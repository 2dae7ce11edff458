"""Issue 16, why this summary: the selection with its reasons, position vs content, word
attributions (and their faithfulness), attention rollout, the command line and the pages."""
from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from analysis import explain as X
from conftest import synthetic_trace
from model.summarizer import select
from model.trace import Summary
from helpers import charts, new_app, summarize

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = {p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").glob("*.txt"))}
LONG, SHORT = EXAMPLES["bbc_call_centres.txt"], EXAMPLES["bbc_insurance_bosses.txt"]

# Sentence 1 scores highest but shares "new budget for" with sentence 2: trigram blocking must
# skip it for lower-scored ones.
BLOCKED_DOC = """The city council approved a new budget for the public library on Monday night.
Council members said the new budget for the public library would add two branches next year.
The mayor praised the vote and thanked residents who had spoken at the meeting.
Some residents had asked for longer opening hours on weekends and during school holidays.
Work on the first branch is expected to begin in the spring, officials said.
The library has not been expanded since it opened more than forty years ago."""

# More documents for the faithfulness check (written for these tests).
WRITTEN = [
    """Heavy rain flooded dozens of homes in the northern valley town of Carrow overnight.
Emergency crews used boats to reach families trapped on upper floors as the river burst its banks.
The regional weather service had issued its highest warning on Tuesday afternoon.
More than three hundred people spent the night in a school gym turned into a shelter.
Local shops opened their doors to offer hot drinks and blankets to those who had fled.
Engineers will inspect the old stone bridge, which was closed after water reached its arches.
Forecasters expect the rain to ease by Thursday, but warn that the river will stay high for days.""",
    """A small software company in Leeds has agreed to be bought by a larger American rival for 40 million pounds.
The firm makes scheduling tools used by hospitals to plan staff shifts and operating theatres.
Its founders, who started the business in a spare bedroom ten years ago, will stay on to run it.
Shareholders are expected to approve the deal at a meeting next month.
Analysts said the purchase gives the buyer a foothold in the British health market.
The company employs ninety people and says no jobs will be lost as a result of the sale.""",
    """The national orchestra will tour five cities this autumn after two years without travelling.
Its new conductor, appointed in the spring, chose a programme of music by living composers.
Tickets for the opening concert in the capital sold out within an hour of going on sale.
The orchestra lost a third of its funding last year and has relied on private donors since.
Players said they were glad to perform outside the capital again after such a long gap.
The tour ends in December with a free concert for schoolchildren in the eastern port city.""",
]


@pytest.fixture(scope="module")
def explained(summarizer):
    """explain() of every document once (default: the selected sentences)."""
    docs = {**EXAMPLES, "blocked": BLOCKED_DOC, **{f"written{n}": t for n, t in enumerate(WRITTEN)}}
    return {name: (text, X.explain(summarizer, text, k=3)) for name, text in docs.items()}


def summary_of(scores, sentences, k=3, block=True, too_short=(), truncated=()):
    return Summary(tuple(sentences), tuple((0, 1) for _ in sentences), tuple(scores),
                   select(list(scores), tuple(sentences), k, block), tuple(too_short), tuple(truncated), 0,
                   "cpu", "trained", "test")


# ---------------------------------------------------------------- the selection, explained

def test_every_status_on_hand_made_scores():
    sents = ["The council said the plan would cost more.",    # 0 rank 1: selected
             "Critics said the plan would cost more than that.",  # 1 rank 2: shares "the plan would"
             "Officials expect work to start in May this year.",  # 2 rank 3: selected
             "Too short.",                                     # 3 too short
             "Residents will be asked for their views soon.",  # 4 rank 4: selected
             "A second phase could follow in a few years.",    # 5 rank 5: below k
             "Past the limit and never fed to the model."]     # 6 not fed
    s = summary_of([0.9, 0.8, 0.5, None, 0.4, 0.3, None], sents, too_short=(3,), truncated=(6,))
    st = X.selection(s, 3, True)
    assert [x.status for x in st] == ["selected", "trigram-blocked", "selected", "too-short", "selected",
                                      "below-k", "not-fed"]
    assert set(x.status for x in st) == set(X.STATUSES)
    assert s.selected == (0, 2, 4) and [x.rank for x in st] == [1, 2, 3, None, 4, 5, None]
    assert st[1].blocked_by == 0 and st[1].trigram == ("said", "the", "plan")  # first shared, reading order
    assert "sentence 1" in st[1].reason and "“said the plan”" in st[1].reason  # 1-based for people
    without = X.selection(summary_of(s.scores, sents, block=False, too_short=(3,), truncated=(6,)), 3, False)
    assert [x.status for x in without][:3] == ["selected", "selected", "selected"]
    with pytest.raises(ValueError):
        X.selection(s, 2, True)  # not how this summary was made


def test_trigram_blocking_skips_a_higher_score_through_the_model(explained):
    _, ex = explained["blocked"]
    assert ex["status"][0] == "trigram-blocked"
    assert ex["blocked_by"][0] == {"sentence": 1, "trigram": ["new", "budget", "for"]}
    assert ex["scores"][0] > min(ex["scores"][i] for i in ex["selected"])  # a lower one got in
    for name, (_, e) in explained.items():  # every blocked sentence of every document: the reason holds
        for i in (i for i, st in enumerate(e["status"]) if st == "trigram-blocked"):
            j, tri = e["blocked_by"][i]["sentence"], e["blocked_by"][i]["trigram"]
            assert j in e["selected"], name
            assert " ".join(tri) in " ".join(e["sentences"][i].lower().split()), name
            assert " ".join(tri) in " ".join(e["sentences"][j].lower().split()), name
            assert e["scores"][i] > min(e["scores"][k] for k in e["selected"]), name


def test_too_short_and_not_fed_through_the_model(summarizer, explained):
    _, ex = explained["bbc_insurance_bosses.txt"]
    assert ex["status"][0] == "too-short" and ex["scores"][0] is None   # the title
    assert all(a["weight"] == 0 for a in ex["attributions"][str(ex["selected"][0])]
               if a["start"] < ex["spans"][0][1])                      # not fed to BERT: weight 0
    one_window = copy.copy(summarizer)
    one_window.max_windows = 1                                          # BertSum's single 512-token input
    cut = X.explain(one_window, LONG, k=3, sentences=[])
    assert "not-fed" in cut["status"] and cut["truncated"]["sentences"]
    assert all(cut["scores"][i] is None for i, s in enumerate(cut["status"]) if s == "not-fed")
    counts = {s: cut["status"].count(s) for s in X.STATUSES}
    assert counts["selected"] == 3 and sum(counts.values()) == len(cut["sentences"])


# ---------------------------------------------------------------- position vs content

def test_position_ablation(summarizer):
    enc = X.encode(summarizer, SHORT)
    real = summarizer.summarize(SHORT).scores
    assert X.position_scores(summarizer, enc, "real") == real            # exactly: the rows it uses
    neutral, shuffled = X.position_scores(summarizer, enc), X.position_scores(summarizer, SHORT, "shuffled")
    scored = [i for i, s in enumerate(real) if s is not None]
    assert all(neutral[i] is not None and neutral[i] != real[i] for i in scored)
    assert any(abs(shuffled[i] - real[i]) > 1e-3 for i in scored)
    assert [i for i, s in enumerate(neutral) if s is None] == [i for i, s in enumerate(real) if s is None]
    with pytest.raises(ValueError):
        X.position_scores(summarizer, enc, "sideways")


def test_explain_json_shape_and_hooks_removed(summarizer, explained):
    text, ex = explained["bbc_edwards_idowu.txt"]
    n = len(ex["sentences"])
    for key in ("scores", "status", "blocked_by", "position_score", "rank", "reason"):
        assert len(ex[key]) == n, key
    assert ex["scores"] == list(summarizer.summarize(text).scores)  # the same forward, the same numbers
    assert ex["selected"] == list(summarizer.summarize(text).selected)
    assert sorted(ex["attributions"]) == sorted(str(i) for i in ex["selected"])
    words = ex["attributions"][str(ex["selected"][0])]
    assert [text[a["start"]:a["end"]] for a in words] == text.split()  # one span per word, in order
    json.dumps(ex)
    bert = summarizer.model.bert
    assert not bert.embeddings.word_embeddings._forward_hooks
    assert not any(m._forward_hooks for m in summarizer.model.modules())


def test_cli(summarizer, capsys, tmp_path):
    from analysis.__main__ import main

    f = tmp_path / "doc.txt"
    f.write_text(BLOCKED_DOC, encoding="utf-8")
    assert main(["explain", str(f), "--json", "--k", "2", "--sentence", "2", "--sentence", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sorted(out["attributions"]) == ["0", "2"] and len(out["selected"]) == 2
    assert set(out["status"]) <= set(X.STATUSES)
    assert main(["explain", str(f), "--sentence", "99"]) == 1  # a message, not a traceback
    assert "no sentence 99" in capsys.readouterr().err


# ---------------------------------------------------------------- faithfulness

def delete_words(text: str, spans) -> str:
    out, pos = [], 0
    for a, b in sorted(spans):
        out.append(text[pos:a])
        pos = b
        while pos < len(text) and text[pos] == " ":
            pos += 1
    return "".join(out) + text[pos:]


def deletion(summarizer, text: str, own: list[dict], effect, k: int, runs: int, rng):
    """Faithfulness by deletion, one protocol for every explanation: ``effect`` of the summary after
    deleting the k words of ``own`` most attributed (None: the document no longer splits the same),
    and its mean over ``runs`` draws of k random words of ``own`` (None: no draw counted)."""
    def deleted(words):
        return effect(summarizer.summarize(delete_words(text, [(w["start"], w["end"]) for w in words])))

    top = deleted(sorted(own, key=lambda w: -w["weight"])[:k])
    rand = [d for d in (deleted([own[j] for j in rng.choice(len(own), k, replace=False)]) for _ in range(runs))
            if d is not None]
    return top, float(np.mean(rand)) if rand else None


def test_deleting_the_most_attributed_words_lowers_the_score_more_than_random(summarizer, explained):
    """Deletion test (Samek et al. 2017; DeYoung et al. 2020's comprehensiveness): for each
    selected sentence, delete its K words with the largest attribution, or K random words of it
    (R draws); the score drop of the sentence, averaged over 3 shipped + 4 written documents.
    The last word (with the full stop) is never deleted, so the sentence split stays the same."""
    K, R = 3, 3
    rng = np.random.default_rng(0)
    top_drops, random_drops = [], []
    for name, (text, ex) in explained.items():
        n = len(ex["sentences"])
        for i in ex["selected"]:
            a, b = ex["spans"][i]
            own = [w for w in ex["attributions"][str(i)] if a <= w["start"] < b][:-1]
            if len(own) < K + 3:
                continue

            def drop(after):
                if len(after.sentences) != n or after.scores[i] is None:
                    return None
                return ex["scores"][i] - after.scores[i]

            top, rand = deletion(summarizer, text, own, drop, K, R, rng)
            if top is not None and rand is not None:
                top_drops.append(top)
                random_drops.append(rand)
    top_mean, random_mean = float(np.mean(top_drops)), float(np.mean(random_drops))
    print(f"\nfaithfulness over {len(top_drops)} selected sentences of {len(explained)} documents: deleting the "
          f"{K} most-attributed words lowers the score by {top_mean:.3f} on average, {K} random words by "
          f"{random_mean:.3f} (gap {top_mean - random_mean:+.3f}; top > random in "
          f"{sum(t > r for t, r in zip(top_drops, random_drops))} of {len(top_drops)})")
    assert len(top_drops) >= 12
    assert top_mean > random_mean + 0.05


@pytest.mark.parametrize("text", [BLOCKED_DOC, LONG])
def test_bfloat16_gradients_rank_words_as_float32_and_the_trace_is_reused(summarizer, text):
    """The default precision computes the gradients in bfloat16 where the CPU has it; the
    words' weights stay those of float32 (within 3% of the largest, the same top words), and the scores,
    statuses and position scores are float32 whichever precision and whether or not the
    app's Trace supplies the sentence vectors."""
    f32 = X.explain(summarizer, text, precision="float32")
    b16 = X.explain(summarizer, text, precision="bfloat16")
    traced = X.explain(summarizer, text, trace=summarizer.trace(text))
    assert f32["precision"] == "float32" and b16["precision"] == "bfloat16"
    for ex in (b16, traced):
        assert ex["scores"] == f32["scores"] == list(summarizer.summarize(text).scores)
        for key in ("status", "selected", "position_score", "position_score_shuffled"):
            assert ex[key] == f32[key], key
    for i in f32["selected"]:
        a = np.array([w["weight"] for w in f32["attributions"][str(i)]])
        b = np.array([w["weight"] for w in b16["attributions"][str(i)]])
        assert np.corrcoef(a, b)[0, 1] > 0.999 and np.allclose(a, b, atol=0.03 * np.abs(a).max())
        assert len(set(np.argsort(-a)[:5]) & set(np.argsort(-b)[:5])) >= 4  # near-ties may swap
    with pytest.raises(ValueError, match="another document"):
        X.explain(summarizer, text, trace=summarizer.trace(SHORT))
    with pytest.raises(ValueError, match="precision"):
        X.attribution_dtype(summarizer, "float8")


# ---------------------------------------------------------------- rollout

def test_rollout_rows_sum_to_one(summarizer):
    t = synthetic_trace()
    r = X.rollout(t)
    assert r.shape == (len(t.tokens),) * 2 and r.dtype == np.float32
    assert np.allclose(r.sum(-1), 1, atol=1e-4) and (r >= 0).all()
    draw, sents = X.sentence_draw(t, r)
    assert draw.shape == (len(t.cls_positions), len(t.tokens)) and np.allclose(draw.sum(-1), 1, atol=1e-4)
    assert list(sents) == list(t.input_sentences)
    # one layer by hand: 0.5·mean_h A + 0.5·I, rows renormalised
    one = dataclasses.replace(t, bert_attention=t.bert_attention[:1])
    a = t.bert_attention[0].astype(np.float32).mean(0)
    assert np.allclose(X.rollout(one), 0.5 * a + 0.5 * np.eye(len(a)), atol=1e-5)
    # heads switched off are left out of the mean
    off = dataclasses.replace(one, summary=dataclasses.replace(t.summary, masked_heads=(("bert", 0, 0),)))
    a_on = t.bert_attention[0, 1:].astype(np.float32).mean(0)
    assert np.allclose(X.rollout(off), 0.5 * a_on + 0.5 * np.eye(len(a)), atol=1e-5)
    real = summarizer.trace(SHORT)
    assert np.allclose(X.rollout(real).sum(-1), 1, atol=1e-4)


def test_attribution_of_every_sentence_and_progress(summarizer):
    seen = []
    words = X.attribute(summarizer, BLOCKED_DOC, [3, 1], progress=lambda done, total: seen.append((done, total)))
    assert sorted(words) == [1, 3] and seen == [(1, 2), (2, 2)]
    assert all(isinstance(w, X.WordSpan) for w in words[1]) and len(words[1]) == len(BLOCKED_DOC.split())
    assert any(w.weight > 0 for w in words[1]) and any(w.weight < 0 for w in words[1])
    with pytest.raises(ValueError):
        X.explain(summarizer, SHORT, sentences=[0])  # the title is too short: nothing to attribute
    plain = X.attribute(summarizer, BLOCKED_DOC, [1], rule="plain")[1]
    assert [w.weight for w in plain] != [w.weight for w in words[1]]


# ---------------------------------------------------------------- the pages

def test_summary_page_shows_statuses(summarizer):
    at = summarize(new_app(), BLOCKED_DOC)  # sentence 1 is skipped for sentence 2 (test above)
    shown = "".join(h.proto.body for h in at.get("html"))
    assert "skipped by trigram blocking" in shown and "new budget for" in shown and "selected sentence 2" in shown
    bars = json.loads(charts(at)[0].proto.spec)
    names = [d.get("name") for d in bars["data"][1:]]
    assert "★ selected" in names and "⊘ skipped: trigram blocking" in names and "below the top k" in names


def test_why_page(summarizer):
    at = summarize(new_app(), SHORT)
    at.switch_page("pages/why.py").run()
    assert not at.exception, at.exception
    figs = charts(at)
    assert len(figs) == 1 and "Score with and without its position" in figs[0].proto.spec
    shown = "".join(h.proto.body for h in at.get("html"))
    assert "rgba(33,102,172" in shown and "rgba(179,88,6" in shown   # raised (blue) and lowered (orange) words
    assert "with a neutral position" in shown
    summary = summarizer.summarize(SHORT)
    pick = at.selectbox(key="why_sentence")
    assert pick.value == summary.selected[0]                        # the first selected sentence
    other = next(i for i, x in enumerate(summary.scores) if x is not None and i not in summary.selected)
    pick.set_value(other).run()
    assert not at.exception
    assert f"Sentence {other + 1}" in "".join(h.proto.body for h in at.get("html"))
    at.switch_page("pages/summary.py").run()
    at.switch_page("pages/why.py").run()
    assert at.selectbox(key="why_sentence").value == other            # kept across pages
    summarize(at, BLOCKED_DOC)                                          # a new summary starts over
    assert at.selectbox(key="why_sentence").value == summarizer.summarize(BLOCKED_DOC).selected[0]
    assert not at.exception


def test_rollout_view(summarizer):
    at = summarize(new_app(), SHORT)
    at.switch_page("pages/bert_attention.py").run()
    at.segmented_control(key="bert_view").set_value("Rollout").run()
    assert not at.exception
    specs = [c.proto.spec for c in charts(at)]
    assert len(specs) == 2 and all('"dtype":"u2"' in s for s in specs)
    assert "Attention rollout" in specs[0] and "draws from" in specs[1]


def test_figures_escape_text_and_send_typed_arrays(explained):
    from viz import explain as V

    text, ex = explained["blocked"]
    evil = '<script>alert(1)</script> & <img src=x onerror="y"> **bold**'
    page = evil + "\n" + text
    spans = np.array([[0, 8], [9, 17]], dtype=np.int64)
    shown = V.word_highlight_html(page, spans, np.array([0.5, -0.25], dtype=np.float32), target=(0, 20))
    assert "<script>" not in shown and "<img" not in shown and "&lt;img src=x" in shown and "**bold**" in shown
    assert "rgba(33,102,172,0.80)" in shown and "rgba(179,88,6,0.44)" in shown  # opacity ∝ |weight| / max
    fig = V.position_chart(ex)
    assert all(isinstance(d.x, np.ndarray) and d.x.dtype == np.float32 for d in fig.data)
    assert len(fig.data[2].x) == sum(s is not None for s in ex["scores"])
    assert "sentence 2: score" in V.position_reading(ex, 1)            # 1-based for people
    up, down = V.top_words(text, [(w["start"], w["end"]) for w in ex["attributions"]["1"]],
                           [w["weight"] for w in ex["attributions"]["1"]])
    assert up and down
    t = synthetic_trace()
    r = X.rollout(t)
    heat = V.rollout_heatmap(t, r)
    assert heat.data[0].z.dtype == np.uint16 and heat.data[0].z.shape == r.shape  # weights in 1/10,000
    draw, sents = X.sentence_draw(t, r)
    assert V.sentence_draw_heatmap(t, draw, sents).data[0].z.shape == draw.shape


def test_window_by_window_gradients_match_the_kept_graph(summarizer):
    """Past KEEP_WINDOWS windows BERT runs again one window at a time (bounded memory): the
    same attributions as one forward keeping every window's graph."""
    kept = X.attribute(summarizer, LONG, [3, 20])
    seen = []
    again = X.attribute(summarizer, LONG, [3, 20], keep_windows=0, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, 2), (2, 2)]                                     # per window
    for i in (3, 20):
        a, b = np.array([w.weight for w in kept[i]]), np.array([w.weight for w in again[i]])
        assert np.allclose(a, b, atol=1e-6 + 1e-4 * np.abs(a).max())
