"""Honest evaluation (issue 20, part 1): per-document ROUGE and the bootstrap interval of a paired
difference, the detokenized ("raw") form of the PTB articles, the "= lead" share; and a training
run interrupted and resumed from state.pt ends where an uninterrupted one does."""
import functools
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors import safe_open

from model.load import DEFAULT_CHECKPOINT
from model.text import split_sentences
from training import cache as cache_mod
from training import train as train_mod
from training.data import DEFAULT_DATA, Doc, named_split, raw_text
from training.evaluate import lead, raw_form, summarise
from training.metrics import KEYS, bootstrap_ci, rouge, rouge_per_doc

needs_data = pytest.mark.skipif(not (DEFAULT_DATA / "cnndm_train.jsonl.gz").is_file(),
                                reason="../shared/data not available")


# ---------------------------------------------------------------- metrics

def test_rouge_is_the_mean_of_the_per_document_scores():
    preds = [["the cat sat on the mat ."], ["a dog ran ."], ["nothing in common"]]
    refs = [["the cat sat on the mat ."], ["the dog ran home ."], ["zebra"]]
    per_doc = rouge_per_doc(preds, refs)
    assert per_doc.shape == (3, 3)
    assert per_doc[0] == pytest.approx([100, 100, 100])
    assert per_doc[2] == pytest.approx([0, 0, 0])
    assert 0 < per_doc[1, 0] < 100
    assert list(rouge(preds, refs).values()) == pytest.approx(per_doc.mean(0).tolist())
    assert list(rouge(preds, refs)) == list(KEYS)


def test_rouge_score_lowercases_and_ignores_punctuation():
    """Why raw (detokenized, capitalised) summaries can be scored against the PTB highlights."""
    ptb = rouge_per_doc([["the 35 - year - old suspect , who was ill , died ."]], [["the suspect died ."]])
    raw = rouge_per_doc([["The 35-year-old suspect, who was ill, died."]], [["the suspect died ."]])
    assert raw == pytest.approx(ptb)


def test_bootstrap_ci_covers_the_mean_and_narrows_with_more_documents():
    rng = np.random.default_rng(1)
    small, large = rng.normal(1.0, 5.0, 400), rng.normal(1.0, 5.0, 4000)
    m, lo, hi = bootstrap_ci(small)
    assert m == pytest.approx(small.mean()) and lo < m < hi
    assert lo < 1.0 < hi
    width = hi - lo
    assert width == pytest.approx(2 * 1.96 * small.std() / np.sqrt(400), rel=0.15)  # the normal interval
    m2, lo2, hi2 = bootstrap_ci(large)
    assert lo2 < 1.0 < hi2
    assert (hi2 - lo2) < width / 2.5  # ~ 1/sqrt(10)
    assert bootstrap_ci(small) == bootstrap_ci(small)  # seeded
    assert bootstrap_ci(small, level=0.5)[2] - bootstrap_ci(small, level=0.5)[1] < width
    assert bootstrap_ci([0.0] * 10) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        bootstrap_ci([])


# ---------------------------------------------------------------- raw text

@pytest.mark.parametrize("ptb, raw", [
    ("new delhi ( cnn ) in an unusual raid , thousands stormed a jail . the 35 - year - old suspect died .",
     "New delhi (CNN) in an unusual raid, thousands stormed a jail. The 35-year-old suspect died."),
    ("( cnn ) -- what ? \" no . \" then he left .", "(CNN) -- What? \"No.\" Then he left."),
    ("-lrb- cnn -rrb- -- i 'm sure it 's `` fine '' , he said ; it did n't work !",
     "(CNN) -- I'm sure it's \"fine\", he said; it didn't work!"),
    ("' we will win , ' he said . st james ' park is full .", "'We will win,' he said. St james' park is full."),
    ("she paid $ 5 for 50 % of it : ‘ yes ’ , she said ...", "She paid $5 for 50% of it: ‘yes’, she said..."),
    ("the u.s. ' s role in iraq .", "The u.s.'s role in iraq."),
    ("", ""),
])
def test_raw_text_undoes_ptb_tokenization(ptb, raw):
    assert raw_text(ptb) == raw
    assert raw_text(ptb) == raw_text(ptb)


def test_raw_form_splits_like_the_app_and_relabels():
    ptb = ("the suspect was arrested on friday . police said he was 35 . \" we are sure , \" an officer said . "
           "the weather was fine .")
    doc = Doc(ptb, [ptb[a:b] for a, b in split_sentences(ptb)], ["the suspect , 35 , was arrested friday ."], [])
    (raw,) = raw_form([doc])
    assert raw.text == raw_text(ptb) and raw.reference == doc.reference
    assert raw.sentences == [raw.text[a:b] for a, b in split_sentences(raw.text)]
    assert raw.sentences[0] == "The suspect was arrested on friday."
    assert len(raw.labels) == len(raw.sentences) and raw.labels[0] == 1  # capital T costs the oracle nothing


# ---------------------------------------------------------------- = lead, deltas

def test_summarise_reports_lead_share_and_paired_deltas():
    docs = [Doc("", [f"sentence {j} of doc {i} ." for j in range(5)], ["sentence 0 of doc"], [0] * 5)
            for i in range(6)]
    per_doc = np.array([[50.0, 20.0, 40.0]] * 6)
    rows = [{"name": "Lead-3", "per_doc": per_doc, "picks": [tuple(lead(d, 3)) for d in docs]},
            {"name": "same as lead", "per_doc": per_doc.copy(), "picks": [(2, 0, 1)] * 6},
            {"name": "half", "per_doc": per_doc + np.array([[2.0, 0, 0]] * 3 + [[0.0, 0, 0]] * 3),
             "picks": [(0, 1, 2)] * 3 + [(0, 1, 4)] * 3}]
    out = {e["name"]: e for e in summarise(rows, docs, lambda d: 3, "Lead-3")}
    assert out["Lead-3"]["equals_lead"] == 1.0 and out["Lead-3"]["delta_vs_lead"] is None
    assert out["same as lead"]["equals_lead"] == 1.0  # order of the picks does not matter
    assert out["same as lead"]["delta_vs_lead"]["rouge1"] == {"mean": 0.0, "low": 0.0, "high": 0.0}
    assert out["half"]["equals_lead"] == 0.5
    d = out["half"]["delta_vs_lead"]["rouge1"]
    assert d["mean"] == pytest.approx(1.0) and d["low"] <= 1.0 <= d["high"]
    json.dumps(list(out.values()))  # the --json dump


# ---------------------------------------------------------------- resumable cache and training

_named_split = functools.lru_cache(named_split)  # read and label each split once per session

TRAIN = ["--n", "8", "--shard-size", "4", "--valid-n", "4", "--batch", "2", "--epochs", "3",
         "--log-every", "2", "--eval-every", "4", "--warmup", "2"]  # 12 steps, validation at 4, 8, 12


@pytest.fixture(scope="module")
def tiny_cache(tmp_path_factory):
    """A layer-6 disk cache of 8 training documents (2 shards) and 4 validation documents."""
    torch.set_num_threads(1)
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cache_mod, "named_split", _named_split)
        for argv in (["--split", "cnndm-train", "--n", "8"], ["--split", "cnndm-valid", "--n", "4"]):
            cache_mod.main([*argv, "--shard-size", "4", "--cache", str(cache)])
    return cache


@needs_data
def test_cache_resumes_after_an_interruption_and_when_n_grows(tmp_path, monkeypatch, tiny_cache):
    monkeypatch.setattr(cache_mod, "named_split", _named_split)
    real, calls = cache_mod.write_shard, []

    def write_shard(path, *args):
        calls.append(path.name)
        if path.name == "shard_0001" and len(calls) == 2:
            raise KeyboardInterrupt  # stopped while shard 1 is being written
        real(path, *args)

    monkeypatch.setattr(cache_mod, "write_shard", write_shard)
    argv = ["--split", "cnndm-train", "--shard-size", "4", "--cache", str(tmp_path)]
    with pytest.raises(KeyboardInterrupt):
        cache_mod.main([*argv, "--n", "6"])
    calls.clear()
    cache_mod.main([*argv, "--n", "6"])  # resumed: shard 0 is skipped
    assert calls == ["shard_0001"]
    calls.clear()
    cache_mod.main([*argv, "--n", "8"])  # more documents: the short last shard (2 of 4) is rebuilt
    assert calls == ["shard_0001"]
    calls.clear()
    cache_mod.main([*argv, "--n", "8"])
    assert calls == []
    for i in range(2):  # the same bytes as a cache built in one go
        path = cache_mod.shard_path(tmp_path, "cnndm-train", 6, i)
        ref = cache_mod.shard_path(tiny_cache, "cnndm-train", 6, i)
        assert path.with_suffix(".json").read_text() == ref.with_suffix(".json").read_text()
        assert np.array_equal(np.load(path.with_suffix(".npy")), np.load(ref.with_suffix(".npy")))
    with pytest.raises(ValueError, match="shard-size"):
        cache_mod.main(["--split", "cnndm-train", "--n", "8", "--shard-size", "3", "--cache", str(tmp_path)])


@needs_data
@pytest.mark.parametrize("recipe", [[], pytest.param(["--layer", "0", "--forward-batch", "2"], marks=pytest.mark.slow)],
                         ids=["cached_one_per_forward", "every_layer_batched_by_length"])  # (the second: 49 s here)
def test_killed_and_resumed_training_equals_an_uninterrupted_run(tmp_path, monkeypatch, tiny_cache, recipe):
    """Killed while writing state.pt after step 6 (its log line is written, the state file
    is half-written): the resume starts from step 4's state.pt, drops step 6's log line, redoes
    steps 5-6, and ends with the weights, log and best checkpoint of a run never stopped. Both
    from the layer cache one document per forward (the shipped recipe) and, with --layer 0, every
    layer trained from the token ids, two documents per forward batched by length."""
    monkeypatch.setattr(train_mod, "named_split", _named_split)

    def run(name, *extra):
        args = train_mod.parse([*TRAIN, "--cache", str(tiny_cache), "--run-dir", str(tmp_path / name),
                                "--out", str(tmp_path / f"{name}.safetensors"), *recipe, *extra])
        out = train_mod.train(args)
        return {n: p.detach().clone() for n, p in train_mod.trainable(out["model"], args.layer).items()}

    def log(name):
        rows = [json.loads(ln) for ln in (tmp_path / name / "log.jsonl").read_text().splitlines()]
        return [{k: v for k, v in r.items() if k not in ("seconds", "saved")} for r in rows]

    whole = run("whole")
    real_save, saves = torch.save, []

    def save(obj, path, *args, **kwargs):
        saves.append(path)
        if len(saves) == 3:  # step 6's state
            Path(path).write_bytes(b"half a file")
            raise KeyboardInterrupt
        real_save(obj, path, *args, **kwargs)

    monkeypatch.setattr(torch, "save", save)
    with pytest.raises(KeyboardInterrupt):
        run("parts")
    monkeypatch.setattr(torch, "save", real_save)
    assert [r["step"] for r in log("parts")] == [2, 4, 6]
    assert torch.load(tmp_path / "parts" / "state.pt", weights_only=False)["state"]["step"] == 4
    resumed = run("parts", "--resume")
    assert resumed.keys() == whole.keys()
    for n in whole:
        assert torch.equal(resumed[n], whole[n]), n
    assert log("parts") == log("whole")
    assert [r["step"] for r in log("whole")] == [2, 4, 6, 8, 10, 12]
    with safe_open(tmp_path / "whole.safetensors", "pt") as a, safe_open(tmp_path / "parts.safetensors", "pt") as b:
        assert a.keys() == b.keys() and all(torch.equal(a.get_tensor(k), b.get_tensor(k)) for k in a.keys())
        assert a.metadata()["step"] == b.metadata()["step"]
        legs = json.loads(b.metadata()["train_legs"])
    state = torch.load(tmp_path / "parts" / "state.pt", weights_only=False)["state"]
    assert [leg["start_step"] for leg in state["legs"]] == [0, 4] and (state["step"], state["docs_done"]) == (12, 24)
    assert legs[0]["start_step"] == 0


@needs_data
def test_from_doc_caches_and_trains_only_the_later_documents(tmp_path, monkeypatch, tiny_cache):
    """--from-doc: a run that continues on the documents an earlier run did not read."""
    monkeypatch.setattr(cache_mod, "named_split", _named_split)
    monkeypatch.setattr(train_mod, "named_split", _named_split)
    cache_mod.main(["--split", "cnndm-train", "--n", "8", "--shard-size", "4", "--from-doc", "4",
                    "--cache", str(tmp_path)])
    assert [p.name for p in (tmp_path / "cnndm-train_L6").glob("*.json")] == ["shard_0001.json"]
    shards = train_mod.shards_on_disk(tiny_cache, "cnndm-train", 6, 8, 4, wait=False, first=4)
    assert sorted(c.doc for shard in shards for c in shard) == [4, 5, 6, 7]
    args = train_mod.parse([*TRAIN, "--from-doc", "4", "--cache", str(tiny_cache), "--run-dir", str(tmp_path / "run"),
                            "--out", str(tmp_path / "out.safetensors")])
    train_mod.train(args)
    state = torch.load(tmp_path / "run" / "state.pt", weights_only=False)["state"]
    assert (state["step"], state["docs_done"]) == (6, 12)  # 3 epochs × documents 4-7, 2 a step
    for bad in ("3", "8"):
        with pytest.raises(SystemExit):
            train_mod.parse([*TRAIN, "--from-doc", bad])


@needs_data
def test_a_run_from_init_validates_its_starting_point_first(tmp_path, monkeypatch, tiny_cache):
    """--init: step 0 is validated and saved as the best so far, so a continued run ends with
    the checkpoint it started from unless one of its steps scores higher on validation."""
    monkeypatch.setattr(train_mod, "named_split", _named_split)
    args = train_mod.parse([*TRAIN, "--max-steps", "2", "--eval-every", "0", "--init", str(DEFAULT_CHECKPOINT),
                            "--cache", str(tiny_cache), "--run-dir", str(tmp_path / "run"),
                            "--out", str(tmp_path / "out.safetensors")])
    train_mod.train(args)
    log = [json.loads(ln) for ln in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert log[0]["step"] == 0 and "rouge1" in log[0] and log[0]["saved"]
    with safe_open(tmp_path / "out.safetensors", "pt") as f:
        assert f.metadata()["step"] in ("0", "2")  # the start, or step 2 if it validated higher
