"""Issue 27, what if: edits, the alignment of A's and B's sentences, the comparison (identical
documents change nothing), activation patching (patch nothing = 0, patch everything = 1, the
batched variants equal plain hooks on a full forward, a sentence in a second BERT window), the
command line and the figures."""
from __future__ import annotations

import argparse
import json
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

from analysis import compare as C

from analysis import alignment as AL

from analysis import edits as E

from analysis import patching as P
from model.hooks import intervene, points

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = {p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").glob("*.txt"))}
LONG = EXAMPLES["bbc_call_centres.txt"]  # 33 sentences, two BERT windows
MID = EXAMPLES["bbc_edwards_idowu.txt"]  # 13 sentences, one window
SHORT = EXAMPLES["bbc_insurance_bosses.txt"]  # 9 sentences; sentence 1 (the title) too short to be fed


def sentences(summarizer, text):
    return E.encode(summarizer, text).sentences


# --- edits -----------------------------------------------------------------------------------

@pytest.mark.parametrize("spec, edit", [
    ("delete:3", E.Delete(2)), ("move:1:end", E.Move(0, "end")), ("move:4:start", E.Move(3, "start")),
    ("move:2:5", E.Move(1, 4)), ("replace:2:New text: with a colon.", E.Replace(1, "New text: with a colon.")),
    ("mask:1:Idowu", E.Mask(0, "Idowu")), ("swap:1:2", E.Swap(0, 1))])
def test_parse_edit_and_back(spec, edit):
    assert E.parse_edit(spec) == edit and str(edit) == spec


@pytest.mark.parametrize("spec", ["", "delete", "delete:", "delete:0", "delete:x", "delete:1:2", "move:1",
                                  "move:1:middle", "move:0:end", "replace:2", "replace:2:   ", "mask:1",
                                  "mask:1:", "swap:1", "swap:a:2", "swap:1:2:3", "frobnicate:1"])
def test_parse_errors_name_the_edit_in_one_line(spec):
    with pytest.raises(ValueError) as e:
        E.parse_edit(spec)
    assert repr(spec) in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("spec, says", [("delete:10", "no sentence 10"), ("swap:1:99", "no sentence 99"),
                                        ("move:2:10", "no sentence 10"), ("mask:2:zebra", "has no word 'zebra'")])
def test_edits_past_the_document_are_refused(summarizer, spec, says):
    with pytest.raises(ValueError, match=says) as e:
        E.apply_edits(SHORT, [spec], summarizer)
    assert repr(spec) in str(e.value)


def test_edits_give_the_edited_sentences(summarizer):
    a = sentences(summarizer, MID)
    assert sentences(summarizer, E.apply_edits(MID, [], summarizer)) == a
    assert sentences(summarizer, E.apply_edits(MID, ["move:1:end"], summarizer)) == a[1:] + a[:1]
    assert sentences(summarizer, E.apply_edits(MID, ["move:13:start"], summarizer)) == a[-1:] + a[:-1]
    assert sentences(summarizer, E.apply_edits(MID, ["move:2:4"], summarizer)) == a[:1] + a[2:4] + a[1:2] + a[4:]
    assert sentences(summarizer, E.apply_edits(MID, ["swap:1:3"], summarizer)) == (a[2], a[1], a[0]) + a[3:]
    assert sentences(summarizer, E.apply_edits(MID, ["delete:2"], summarizer)) == a[:1] + a[2:]
    new = "The athletics federation announced a new coaching programme on Monday."
    assert sentences(summarizer, E.apply_edits(MID, [f"replace:3:{new}"], summarizer)) == a[:2] + (new,) + a[3:]
    # one after the other: after deleting sentence 1, the old sentence 3 is sentence 2
    assert sentences(summarizer, E.apply_edits(MID, ["delete:1", "delete:2"], summarizer)) == a[1:2] + a[3:]
    # a headline without a full stop moved into the body stays its own sentence (a line break ends it)
    assert sentences(summarizer, E.apply_edits(MID, ["move:1:5"], summarizer))[4] == a[0]


def test_mask_changes_exactly_the_words_wordpieces(summarizer):
    """Every WordPiece of the word, and nothing else, becomes BERT's [MASK] token (one token:
    model/text.py's tokenizer alone would read the text "[MASK]" as three)."""
    assert summarizer.tokenizer.tokenize(["[MASK]"])[0] == ["[", "mask", "]"]
    b = E.apply_edits(MID, ["mask:3:Idowu"], summarizer)
    ea, eb = E.encode(summarizer, MID), E.encode(summarizer, b)
    assert len(ea.tokens) == len(eb.tokens) and ea.window_starts == eb.window_starts
    diff = [t for t, (x, y) in enumerate(zip(ea.tokens, eb.tokens)) if x != y]
    pieces = summarizer.tokenizer.tokenize(["Idowu"])[0]
    assert len(pieces) > 1 and len(diff) == len(pieces)  # one sentence, one occurrence, every piece
    assert [ea.tokens[t] for t in diff] == pieces and {eb.tokens[t] for t in diff} == {"[MASK]"}
    assert {eb.input_ids[t] for t in diff} == {summarizer.tokenizer.vocab["[MASK]"]}
    assert all(ea.token_sentence[t] == 2 for t in diff) and diff == list(range(diff[0], diff[0] + len(pieces)))


# --- alignment -------------------------------------------------------------------------------

def kinds(alignment):
    return [(r.a, r.b, r.kind) for r in alignment]


def test_alignment_follows_moved_sentences():
    assert kinds(AL.align(list("abcd"), list("bcda"))) == [(0, 3, "moved"), (1, 0, "kept"), (2, 1, "kept"), (3, 2, "kept")]
    swapped = kinds(AL.align(list("abcd"), list("cbad")))
    assert sorted(k for *_, k in swapped) == ["kept", "kept", "moved", "moved"] and [(a, b) for a, b, _ in swapped] == \
        [(0, 2), (1, 1), (2, 0), (3, 3)]


def test_alignment_marks_deleted_new_and_replaced():
    assert kinds(AL.align(list("abcd"), list("acd"))) == [(0, 0, "kept"), (1, None, "deleted"), (2, 1, "kept"), (3, 2, "kept")]
    assert kinds(AL.align(list("abc"), list("abxc"))) == [(0, 0, "kept"), (1, 1, "kept"), (None, 2, "new"), (2, 3, "kept")]
    assert kinds(AL.align(list("abc"), list("axc"))) == [(0, 0, "kept"), (1, 1, "replaced"), (2, 2, "kept")]
    assert kinds(AL.align(list("abc"), list("xbc"))) == [(0, 0, "replaced"), (1, 1, "kept"), (2, 2, "kept")]
    assert kinds(AL.align(list("abc"), list("abx"))) == [(0, 0, "kept"), (1, 1, "kept"), (2, 2, "replaced")]
    # a replacement of two sentences: pairs in order, the extra one new
    assert kinds(AL.align(list("abc"), list("axyc"))) == [(0, 0, "kept"), (1, 1, "replaced"), (None, 2, "new"), (2, 3, "kept")]


def test_alignment_matches_duplicates_in_order():
    assert kinds(AL.align(["x", "y", "x"], ["x", "x", "y"])) == [(0, 0, "kept"), (1, 2, "moved"), (2, 1, "kept")]
    assert kinds(AL.align(["x", "x"], ["x"])) == [(0, 0, "kept"), (1, None, "deleted")]


# --- the comparison --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["bbc_insurance_bosses.txt", "bbc_call_centres.txt"])
def test_identical_documents_change_nothing(summarizer, name):
    c = C.compare(summarizer, EXAMPLES[name], EXAMPLES[name])
    assert all(r.kind == "kept" and r.a == r.b for r in c.alignment)
    assert all(d == 0.0 for d in c.delta if d is not None) and c.summary_a.scores == c.summary_b.scores
    assert not c.entered and not c.left and c.summary_a.selected == c.summary_b.selected
    assert c.bert_change.shape == (6, 12) and c.inter_change.shape == (2, 8)
    assert not c.bert_change.any() and not c.inter_change.any()  # exactly zero
    enc = E.encode(summarizer, EXAMPLES[name])
    assert c.aligned_tokens == len(enc.tokens) and c.aligned_parts == len(enc.input_sentences)


def test_moving_an_unscored_sentence_changes_no_attention(summarizer):
    """Sentence 1 of SHORT is too short to be fed: moving it leaves the model's input as it was."""
    c = C.compare(summarizer, SHORT, E.apply_edits(SHORT, ["move:1:end"], summarizer))
    assert not c.bert_change.any() and not c.inter_change.any()
    assert c.alignment[0].kind == "moved" and c.delta[0] is None


def test_moving_the_lead(summarizer):
    b = E.apply_edits(MID, ["move:2:end"], summarizer)
    c = C.compare(summarizer, MID, b)
    row = next(r for r in c.alignment if r.a == 1)
    assert (row.b, row.kind) == (12, "moved")
    assert c.bert_change.max() > 0.01 and c.inter_change.max() > 0.01 and (c.bert_change >= 0).all()
    assert c.bert_change.max() <= 1 and c.inter_change.max() <= 1
    for r, x, y, d in zip(c.alignment, c.scores_a, c.scores_b, c.delta):
        assert x == c.summary_a.scores[r.a] and y == c.summary_b.scores[r.b] and d == pytest.approx(y - x)
    in_a = {n for n, r in enumerate(c.alignment) if r.a in c.summary_a.selected}
    in_b = {n for n, r in enumerate(c.alignment) if r.b in c.summary_b.selected}
    assert {e.row for e in c.entered} == in_b - in_a and {e.row for e in c.left} == in_a - in_b
    assert all(e.reason.startswith("selected, the ") for e in c.entered)
    js = c.to_json()
    assert json.loads(json.dumps(js)) == js and len(js["alignment"]) == 13


def test_deleting_and_replacing(summarizer):
    new = "The athletics federation announced a new coaching programme on Monday."
    c = C.compare(summarizer, MID, E.apply_edits(MID, ["delete:2", f"replace:3:{new}"], summarizer))
    assert kinds(c.alignment)[:4] == [(0, 0, "kept"), (1, None, "deleted"), (2, 1, "kept"), (3, 2, "replaced")]
    assert c.scores_b[1] is None and c.delta[1] is None and c.status_b[1] is None
    if 1 in c.summary_a.selected:
        assert any(e.a == 1 and e.reason.startswith("deleted in B") for e in c.left)


# --- activation patching ---------------------------------------------------------------------

def test_hooks_act_for_the_calling_thread_only_and_always_go(summarizer):
    """model.hooks.intervene on an output point and an input point: this thread only, removed on exit
    (also after an error); an unknown point is refused."""
    m = summarizer.model
    lin, _ = points(m)["bert.0.attn.z"]  # the input of BERT layer 1's output projection
    x = torch.ones(1, 2, lin.in_features)
    plain = lin(x)
    with torch.no_grad(), intervene(m, {"bert.0.attn.z": lambda z, module, args: z * 0}):
        assert torch.equal(lin(x), lin.bias.expand_as(plain))
        other = []
        t = threading.Thread(target=lambda: other.append(lin(x)))
        t.start()
        t.join()
        assert torch.equal(other[0], plain)
    q, _ = points(m)["bert.0.attn.q"]
    with pytest.raises(RuntimeError), intervene(m, {"bert.0.attn.q": lambda out, module, args: out * 0}):
        raise RuntimeError
    with pytest.raises(KeyError, match="no hook point"), intervene(m, {"bert.0.attn.nope": lambda *a: None}):
        pass
    assert torch.equal(lin(x), plain) and not lin._forward_pre_hooks and not q._forward_hooks


@pytest.fixture(scope="module")
def moved(summarizer):
    """SHORT with its lead (sentence 2) moved to the end, patched for that sentence, every head."""
    b = E.apply_edits(SHORT, ["move:2:end"], summarizer)
    return b, P.patch(summarizer, SHORT, b, 1)


def test_patch_nothing_is_0_and_everything_is_1(moved):
    _, p = moved
    row = {(r.kind, r.layer, r.head): r for r in p.rows}
    assert abs(p.score_a - p.score_b) > 0.01  # the move changed the score
    assert abs(row["none", None, None].fraction) < 1e-4
    assert abs(row["all", None, None].fraction - 1) < 1e-4 and abs(row["all", None, None].score - p.score_a) < 1e-5
    # the sentence's own output of the last sentence-encoder layer decides its score alone
    assert abs(row["inter.resid_post", 1, None].fraction - 1) < 1e-4
    # BERT's top layer on the sentence's tokens is its vector (the mean of those tokens)
    assert abs(row["bert.resid_post", 5, None].fraction - row["vector", None, None].fraction) < 1e-4
    assert all(np.isfinite(r.fraction) and np.isfinite(r.score) for r in p.rows)
    assert p.grid("bert.attn.z").shape == (6, 12) and p.grid("inter.attn.z").shape == (2, 8)
    assert p.grid("bert.resid_post").shape == (6,) and p.grid("inter.pe").shape == (1,)
    assert not np.isnan(p.grid("bert.attn.z")).any()


def test_patched_parts_are_named_by_the_models_hook_points(moved, summarizer):
    """Issue 69: a row's kind is its hook point with the layer left out; ``point`` names it whole,
    and every such name is one of model.hooks.points; heads are labelled as model.heads.Head does."""
    from model.hooks import points

    _, p = moved
    named = {P.point(r) for r in p.rows} - {None}
    assert named <= set(points(summarizer.model)) and {"bert.5.resid_post", "bert.0.attn.z", "inter.1.attn.z",
                                                       "inter.pe", "bert.embed"} <= named
    assert {P.point(r) for r in p.rows if r.kind in ("none", "all", "vector")} == {None}
    head = next(r for r in p.rows if r.kind == "inter.attn.z" and (r.layer, r.head) == (1, 7))
    assert P.row_label(head) == "Sentence encoder 2.8" and P.point(head) == "inter.1.attn.z"
    assert p.to_json()["rows"][-1]["point"] == "inter.1.attn.z"


def test_batched_patches_equal_plain_hooks_on_a_full_forward(summarizer, moved):
    """A BERT head, a BERT layer and a sentence-encoder head patched by a hook in the model's own
    forward (the whole window, every layer) give the batched, row-restricted scores."""
    b, p = moved
    s = E.masking(summarizer)
    ea, eb = E.encode(summarizer, SHORT), E.encode(summarizer, b)
    A, B = P._states(s, ea, P._only_part(ea, 1, "A")), P._states(s, eb, P._only_part(eb, p.sentence_b, "B"))
    dh, dh2 = 384 // 12, 384 // 8
    row = {(r.kind, r.layer, r.head): r.score for r in p.rows}

    def score_with(bert=None, inter=None):
        with torch.inference_mode():
            with intervene(s.model, bert or {}):
                vecs = s.model.sentence_vectors(**B.inputs)  # one window: the whole document
            with intervene(s.model, inter or {}):
                return float(s.score_vectors(vecs)[0, B.part])

    def bert_head(layer, h):
        def fn(z, module, args):
            x = z.clone()
            x[0, B.rows, h * dh:(h + 1) * dh] = A.ctx[layer, A.rows, h * dh:(h + 1) * dh]
            return x
        return {f"bert.{layer}.attn.z": fn}

    def bert_layer(layer):
        def fn(out, module, args):
            out = out.clone()
            out[0, B.rows] = A.hidden[layer + 1, A.rows]
            return out
        return {f"bert.{layer}.resid_post": fn}

    def inter_head(layer, h):
        def fn(z, module, args):
            x = z.clone()
            x[0, B.part, h * dh2:(h + 1) * dh2] = A.inter_ctx[layer, A.part, h * dh2:(h + 1) * dh2]
            return x
        return {f"inter.{layer}.attn.z": fn}

    assert score_with() == pytest.approx(p.score_b, abs=1e-5)
    for layer, h in ((0, 3), (2, 7), (5, 0)):
        assert score_with(bert_head(layer, h)) == pytest.approx(row["bert.attn.z", layer, h], abs=1e-5)
    for layer in (1, 4):
        assert score_with(bert_layer(layer)) == pytest.approx(row["bert.resid_post", layer, None], abs=1e-5)
    assert score_with(inter=inter_head(0, 2)) == pytest.approx(row["inter.attn.z", 0, 2], abs=1e-5)


def test_patching_across_bert_windows(summarizer):
    """The lead of LONG sits in window 1 of A and, moved to the end, in window 2 of B; a sentence
    in window 2 of A is patched from its place there."""
    b = E.apply_edits(LONG, ["move:1:end"], summarizer)
    p = P.patch(summarizer, LONG, b, 0, bert_heads=False)
    assert (p.window_a, p.window_b) == (0, 1) and p.sentence_b == 32
    row = {(r.kind, r.layer, r.head): r.fraction for r in p.rows}
    assert abs(row["none", None, None]) < 1e-4 and abs(row["all", None, None] - 1) < 1e-4
    assert all(np.isfinite(r.fraction) for r in p.rows) and not any(r.kind == "bert.attn.z" for r in p.rows)
    q = P.patch(summarizer, LONG, b, 29, bert_heads=False)
    assert q.window_a == 1 and q.sentence_b == 28
    assert abs(q.grid("none")[0]) < 1e-4 and abs(q.grid("all")[0] - 1) < 1e-4


def test_patching_refuses_what_it_cannot_patch(summarizer):
    b = E.apply_edits(SHORT, ["delete:3"], summarizer)
    with pytest.raises(ValueError, match="sentence 3 of A is deleted in B"):
        P.patch(summarizer, SHORT, b, 2)
    with pytest.raises(ValueError, match="sentence 1 of A is not scored"):
        P.patch(summarizer, SHORT, b, 0)
    with pytest.raises(ValueError, match="no sentence 20"):
        P.patch(summarizer, SHORT, b, 19)


# --- command line and figures ----------------------------------------------------------------

def test_cli(tmp_path, capsys):
    from analysis.__main__ import main

    a = tmp_path / "a.txt"
    a.write_text(SHORT, encoding="utf-8")
    assert main(["compare", str(a), "--edit", "move:2:end", "--patch", "2", "--no-bert-heads", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["edits"] == ["move:2:end"] and len(out["alignment"]) == 9
    assert out["a"]["sentences"][1] == out["b"]["sentences"][8] and len(out["b"]["status"]) == 9
    assert {"a": 1, "b": 8, "kind": "moved"}.items() <= out["alignment"][1].items()
    assert np.array(out["head_change"]["bert"]).shape == (6, 12) and "total-variation" in out["head_change"]["method"]
    rows = {(r["kind"], r["layer"], r["head"]): r for r in out["patching"]["rows"]}
    assert abs(rows["all", None, None]["fraction"] - 1) < 1e-4 and "Vig et al. 2020" in out["patching"]["method"]


def test_cli_two_files_and_errors(summarizer, tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(SHORT, encoding="utf-8")
    b.write_text(SHORT.replace("Mr Bewlay", "Mr Smith"), encoding="utf-8")
    args = lambda **kw: argparse.Namespace(**{"file": str(a), "file_b": None, "edit": [], "patch": None,  # noqa: E731
                                              "bert_heads": False, "k": 3, "block": True, **kw})
    out = C.cli(args(file_b=str(b)), summarizer)
    assert [r["kind"] for r in out["alignment"]] == ["kept"] * 6 + ["replaced"] + ["kept"] * 2 and out["edits"] == []
    out = C.cli(args(file_b=str(b), edit=["delete:7"]), summarizer)  # edits apply to B when it is given
    assert [r["kind"] for r in out["alignment"]][6] == "deleted" and out["edits"] == ["delete:7"]
    for kw, says in (({}, "needs a second document"), (dict(file="-", file_b="-"), "only one of A and B"),
                     (dict(edit=["swap:1"]), "bad edit 'swap:1'"), (dict(edit=["delete:1"], patch=0), "from 1"),
                     (dict(edit=["delete:2"], patch=2), "sentence 2 of A is deleted in B")):
        with pytest.raises(ValueError, match=says):
            C.cli(args(**kw), summarizer)


def test_figures_are_typed_arrays(moved):
    from viz import what_if as V

    _, p = moved
    rng = np.random.default_rng(0)
    figs = [V.change_maps(rng.random((6, 12)), rng.random((2, 8))), V.head_patching_map(p.grid("bert.attn.z")),
            V.component_bars(*p.components())]
    for fig in figs:
        for trace in fig.data:
            v = trace.z if trace.type == "heatmap" else trace.x
            assert isinstance(v, np.ndarray) and v.dtype == np.float32, (trace.type, type(v))
    assert [t.name for t in figs[0].data] == ["BERT", "Sentence encoder"] and list(figs[0].data[0].y) == list("123456")
    assert "activation patching" in figs[1].layout.title.text and figs[1].data[0].zmid == 0
    labels, fractions, kinds_ = p.components()
    assert "position row" in labels and "BERT layer 6" in labels and "Sentence encoder 2.8" in labels
    assert {t.name for t in figs[2].data} >= {"position row", "sentence vector", "BERT layers", "encoder layers"}
    assert "Vig et al. 2020" in V.PATCH_CAPTION
