"""Training: the smoke configuration learns, the [CLS]-only top layer is exact, and the saved
checkpoint loads through Summarizer.load with the scores training saw."""
import math
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from model import load
from model.bert import BertConfig, BertLayer, extended_mask
from training.cache import encode_labels, fresh_summarizer, lower_layers
from training.data import DEFAULT_DATA, named_split
from model.summarizer import DEFAULT_CHECKPOINT, Summarizer
from training.ship import compare, half_checkpoint
from training.train import init_from, lr_factor, parse, top_scores, train, trainable

REPO = Path(__file__).resolve().parents[1]
needs_data = pytest.mark.skipif(not (DEFAULT_DATA / "cnndm_train.jsonl.gz").is_file(),
                                reason="../shared/data not available")


def test_cls_layer_equals_the_full_layer_at_cls_rows():
    torch.manual_seed(0)
    layer = BertLayer(BertConfig(hidden_size=32, num_attention_heads=4, intermediate_size=64)).eval()
    x = torch.randn(2, 11, 32)  # [B, T, D]
    mask = extended_mask(torch.tensor([[1] * 11, [1] * 8 + [0] * 3]))  # [B, 1, 1, T]
    cls = torch.tensor([[0, 4, 7], [0, 3, 5]])  # [B, S]
    full = layer(x, mask)[torch.arange(2)[:, None], cls]  # [B, S, D]
    assert torch.allclose(layer(x, mask, rows=cls), full, atol=1e-5)


def test_lr_schedule_warms_up_then_decays():
    assert lr_factor(1, 10) == pytest.approx(0.1)
    assert lr_factor(10, 10) == pytest.approx(1.0)
    assert lr_factor(40, 10) == pytest.approx(0.5)


def test_init_from_a_checkpoint_keeps_the_backbone_layers_it_lacks():
    model = fresh_summarizer().model
    params = trainable(model, 1)  # fine-tune layers 1-5 starting from the shipped weights (2-5)
    before = {n: p.clone() for n, p in params.items()}
    init_from(DEFAULT_CHECKPOINT, params)
    sd, _ = load.read_state_dict(DEFAULT_CHECKPOINT)
    assert "bert.encoder.layer.1.output.dense.weight" not in sd  # the backbone's layer 1 is kept
    for n, p in params.items():
        assert torch.equal(p, sd[n].float() if n in sd else before[n]), n
    for trained in ("ext_layer.", "bert.encoder.layer.5."):  # what the shipped file holds is copied
        assert any(not torch.equal(p, before[n]) for n, p in params.items() if n.startswith(trained))
    with pytest.raises(ValueError, match="ext_layer"):
        init_from(DEFAULT_CHECKPOINT, {"ext_layer.not_there": torch.nn.Parameter(torch.zeros(1))})


RECIPES = {"top layers fine-tuned, [CLS]": ["--layer", "4", "--pooling", "cls", "--sentence-scale", "1"],  # BertSum
           "frozen backbone, mean pooling": ["--layer", "6", "--pooling", "mean", "--sentence-scale", "4"]}


@pytest.fixture(scope="module", params=list(RECIPES))
def smoke(request, tmp_path_factory):
    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("smoke") / "ckpt.safetensors"
    args = parse(["--smoke", "--out", str(out), *RECIPES[request.param]])
    return train(args), out, args.layer


@needs_data
def test_smoke_training_decreases_the_loss(smoke):
    history = [h["loss"] for h in smoke[0]["history"]]
    assert len(history) == 3 and all(math.isfinite(x) for x in history)
    assert history[-1] < 0.7 * history[0], history


@needs_data
def test_checkpoint_holds_only_the_trained_part_and_loads(smoke):
    result, path, layer = smoke
    with safe_open(path, "pt") as f:
        keys, meta = set(f.keys()), f.metadata()
    trained = ("ext_layer.", *(f"bert.encoder.layer.{i}." for i in range(layer, 6)))
    assert all(k.startswith(trained) for k in keys) and all(any(k.startswith(p) for k in keys) for p in trained)
    assert "ext_layer.pos_emb.pe" not in keys
    assert meta["backbone_sha256"] == load.sha256(load.backbone_weights_file(load.default_backbone_dir()))
    assert (meta["inter_layers"], meta["inter_heads"]) == ("2", "8")

    s = Summarizer.load(checkpoint=path, device="cpu")
    s.max_windows = 1  # BertSum's single 512-token input, what training sees
    doc = named_split("cnndm-train", DEFAULT_DATA, 1)[0]
    enc, _ = encode_labels(s, doc)
    model = result["model"].eval()
    with torch.no_grad():
        ours = top_scores(model, layer, lower_layers(model.bert, enc, layer)[None], torch.tensor([enc.cls_positions]))[0]
    summary = s.summarize(doc.text)
    theirs = torch.tensor([summary.scores[i] for i in enc.input_sentences])
    assert torch.allclose(ours, theirs, atol=1e-5)
    assert s.weights == "trained"


def test_shipped_checkpoint_is_small_complete_and_loads_by_default():
    path = REPO / "model" / "weights" / "bertsumext-minilm.safetensors"
    assert path == DEFAULT_CHECKPOINT and path.stat().st_size <= 30e6
    with safe_open(path, "pt") as f:
        keys, meta = set(f.keys()), f.metadata()
    finetuned = {i for i in meta["finetuned_layers"].split(",") if i}  # "" = the backbone is frozen
    assert {k.split(".")[0] for k in keys} == {"ext_layer"} | ({"bert"} if finetuned else set())
    assert {k.split(".")[3] for k in keys if k.startswith("bert.")} == finetuned
    assert meta["backbone_sha256"] == load.sha256(load.backbone_weights_file(load.default_backbone_dir()))
    assert meta["train_command"].startswith("python -m training.train") and meta["stored_dtype"] == "float16"
    s = Summarizer.load(device="cpu")
    assert s.weights == "trained"
    assert (s.model.pooling, s.model.scale) == (meta["sentence_pooling"], float(meta["sentence_scale"]))
    text = ("The council approved the new budget on Monday after a long debate. "
            "Critics said the plan cuts too deeply into school funding this year. "
            "The mayor defended the cuts as necessary to balance the city's books. "
            "A final vote on the school spending plan is expected next month.")
    assert len(s.summarize(text, k=2).selected) == 2


def test_a_float16_checkpoint_is_half_the_size_and_summarizes_like_float32(tmp_path):
    sd, meta = load.read_state_dict(DEFAULT_CHECKPOINT)
    torch.manual_seed(0)  # float32 weights with bits float16 cannot hold, as training writes them
    sd = {k: (v.float() + 1e-4 * torch.randn(v.shape)).contiguous() for k, v in sd.items()}
    src, dst = tmp_path / "f32.safetensors", tmp_path / "f16.safetensors"
    save_file(sd, str(src), metadata=meta)
    half_checkpoint(src, dst)
    assert dst.stat().st_size < 0.51 * src.stat().st_size
    with safe_open(dst, "pt") as f:
        assert f.metadata() == {**meta, "stored_dtype": "float16"}
        assert {f.get_tensor(k).dtype for k in f.keys()} == {torch.float16}
    a, b = (Summarizer.load(checkpoint=p, device="cpu") for p in (src, dst))
    assert all(p.dtype == torch.float32 for p in b.model.parameters())
    report = compare(a, b, [p.read_text() for p in sorted((REPO / "examples").glob("*.txt"))])
    assert report["documents"] >= 3 and report["summaries_changed"] == 0
    assert 0 < report["max_score_difference"] < 2e-3, report

    save_file({"ext_layer.wo.weight": torch.full((1, 4), 1e6)}, str(src))
    with pytest.raises(ValueError, match="overflows float16"):
        half_checkpoint(src, dst)
