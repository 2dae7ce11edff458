"""The bad-input corpus (tests/bad_inputs) through the command line: a correct result or a
one-line message with a non-zero exit, never a traceback."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from model.__main__ import main

CORPUS = Path(__file__).parent / "bad_inputs"


def run(capsys, *argv) -> tuple[int, dict | None, str]:
    code = main(["summarize", *map(str, argv), "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


@pytest.mark.parametrize("name,message", [
    ("empty.txt", "The document is empty"),
    ("whitespace.txt", "The document is empty"),
    ("binary.bin", "looks like a binary file"),
    ("latin1.txt", "is not UTF-8 text (byte 0xe9 at position 6)"),
])
def test_refused_with_one_line(capsys, name, message):
    code, out, err = run(capsys, CORPUS / name)
    assert code == 1 and out is None
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err


@pytest.mark.parametrize("name,n_sentences", [
    ("one_sentence.txt", 1), ("no_punctuation.txt", 1), ("control_chars.txt", 3), ("unicode.txt", 6), ("html.txt", 3),  # unicode: its Japanese line ends twice at 。
])
def test_summarised(capsys, name, n_sentences):
    code, out, _ = run(capsys, CORPUS / name, "--k", "2")
    assert code == 0 and len(out["sentences"]) == n_sentences
    assert out["selected"] and all(out["scores"][i] is not None for i in out["selected"])
    assert not any(c in s for s in out["sentences"] for c in "\x00\x07\x1b\x7f\r")


def test_text_is_kept_verbatim(capsys):
    _, out, _ = run(capsys, CORPUS / "html.txt")
    assert out["sentences"][0].startswith('<script>alert("xss")</script>')
    _, out, _ = run(capsys, CORPUS / "unicode.txt")
    assert "🎉🎶" in out["sentences"][0] and any("東京" in s for s in out["sentences"])


def test_two_megabyte_paste_names_the_limit(capsys, tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("The council met again today. " * 72_000)  # ~2 MB
    code, out, err = run(capsys, big)
    assert code == 1 and "characters; the limit is 100,000" in err


@pytest.mark.parametrize("content,message", [
    (b"not a checkpoint at all", "not a loadable PyTorch checkpoint"),
    (b"\x00" * 100, "not a loadable PyTorch checkpoint"),
])
def test_bad_checkpoint_file(capsys, tmp_path, content, message):
    ckpt = tmp_path / "model.pt"
    ckpt.write_bytes(content)
    code, _, err = run(capsys, CORPUS / "one_sentence.txt", "--checkpoint", ckpt)
    assert code == 1 and message in err and err.count("\n") == 1


def test_wrong_shape_checkpoint(capsys, tmp_path):
    torch.save({"model": {"ext_layer.wo.weight": torch.zeros(1, 3)}}, tmp_path / "w.pt")
    code, _, err = run(capsys, CORPUS / "one_sentence.txt", "--checkpoint", tmp_path / "w.pt")
    assert code == 1 and "'wo.weight' has shape (1, 3), the model expects (1, 384)" in err


def test_not_safetensors(capsys, tmp_path):
    (tmp_path / "w.safetensors").write_bytes(b"garbage")
    code, _, err = run(capsys, CORPUS / "one_sentence.txt", "--checkpoint", tmp_path / "w.safetensors")
    assert code == 1 and "not a safetensors file" in err
