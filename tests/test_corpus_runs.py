"""What the Corpus page opens and accepts (ui/corpus_runs.py, the page under AppTest), and
duplicate ids in a corpus (analysis/corpus.py): no Ray here."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from analysis.corpus import read_input
from ui import corpus_runs as C
from helpers import ROOT


def test_duplicate_ids_are_made_unique_in_line_order_and_reported(tmp_path):
    path = tmp_path / "in.jsonl"
    rows = [{"id": "../../x", "text": "one"}, {"id": "../../x", "text": "two"}, {"id": "b", "text": "three"},
            {"id": "../../x", "text": "four"}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    seen: dict[str, int] = {}
    docs = list(read_input(path, set(), seen=seen))
    assert [d["id"] for d in docs] == ["../../x", "../../x#2", "b", "../../x#3"]
    assert [d["text"] for d in docs] == ["one", "two", "three", "four"]  # each opens as itself
    assert [d["id"] for d in read_input(path, {"../../x", "../../x#2"})] == ["b", "../../x#3"]  # a rerun: the same names
    assert {i: n for i, n in seen.items() if n > 1} == {"../../x": 3}  # what run() reports as duplicate_ids


@pytest.mark.parametrize("data, message", [(b"", "The file is empty"), (b"\n \n\t\n", "only blank lines"),
                                           (b'{"text": "x"}\n' * 201, "has 201 documents")])
def test_uploads_that_cannot_run_get_one_line(data, message):
    with pytest.raises(ValueError, match=message):
        C.check_upload(data)
    assert len(C.check_upload(b'{"text": "a"}\n\n{"text": "b"}\n')) == 2


@pytest.mark.parametrize("name", ["../x", "/etc", "a/b", "..", ".", "run/../../other", "x" * 300])
def test_a_path_outside_the_corpus_root_is_refused(name, tmp_path, monkeypatch):
    monkeypatch.setenv("MICROSCOPE_CORPUS_ROOT", str(tmp_path / "root"))
    with pytest.raises(ValueError, match="not a corpus run of this server"):
        C.run_dir(name)
    assert C.run_dir("upload-1") == (tmp_path / "root" / "upload-1").resolve()


def test_runs_lists_the_example_then_the_root_newest_first_and_prune_keeps_the_newest(tmp_path, monkeypatch):
    monkeypatch.setenv("MICROSCOPE_CORPUS_ROOT", str(tmp_path))
    for n, name in enumerate(["old", "mid", "new"]):
        (tmp_path / name).mkdir()
        (tmp_path / name / "report.json").write_text("{}")
        os.utime(tmp_path / name, (time.time() - 100 + n, time.time() - 100 + n))
        os.utime(tmp_path / name / "report.json", (time.time() - 100 + n, time.time() - 100 + n))
    (tmp_path / "failed-run").mkdir()  # no report.json: not listed, but pruned like the others
    os.utime(tmp_path / "failed-run", (time.time() - 200,) * 2)
    assert list(C.runs()) == [C.EXAMPLE_NAME, "new", "mid", "old"]
    C.prune(keep=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mid", "new"]
    os.utime(tmp_path / "mid", (time.time() - 8 * 86400,) * 2)
    C.prune(keep=20, days=7)
    assert [p.name for p in tmp_path.iterdir()] == ["new"]
    (tmp_path / "newer").mkdir()
    (tmp_path / "newer" / "data").write_bytes(b"x" * 2 ** 20)
    C.prune(keep=20, max_mb=0.5)  # past the size limit: even the newest goes, then the rest
    assert list(tmp_path.iterdir()) == []


def corpus_page(root: Path):
    from streamlit.testing.v1 import AppTest

    os.environ["MICROSCOPE_CORPUS_ROOT"] = str(root)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page("pages/corpus.py").run()
    return at


def test_the_corpus_page_opens_the_shipped_example_for_a_newcomer(tmp_path):
    at = corpus_page(tmp_path)
    assert not at.exception and not at.error
    assert at.selectbox(key="corpus_run").value == C.EXAMPLE_NAME
    report = json.loads((C.EXAMPLE / "report.json").read_text())
    assert at.metric[0].value == f"{report['documents']:,}" and report["documents"] == 50
    assert report["rouge"] and "heads" in report  # references and head statistics
    assert not [t for t in at.text_input if not t.key.startswith(("class_resume", "story_"))]  # no free path box: the server's folders are not browsable


@pytest.mark.parametrize("broken", ["not json", json.dumps({"documents": 3}), None])
def test_a_broken_run_is_one_line_not_a_traceback(tmp_path, broken):
    run = tmp_path / "broken-run"
    run.mkdir()
    (run / "report.json").write_text(broken if broken is not None else (C.EXAMPLE / "report.json").read_text())
    at = corpus_page(tmp_path)
    at.selectbox(key="corpus_run").set_value("broken-run").run()
    assert not at.exception and len(at.error) == 1 and "cannot be read" in at.error[0].value
    assert "Error" not in at.error[0].value  # words, not an exception's class name


def test_an_aggregate_that_fails_is_named_and_the_summaries_are_kept(tmp_path, monkeypatch):
    """Issue 60: the report's ROUGE failing (rouge-score missing, as on an app-only install before)
    loses nothing: the summaries are written, the report names what failed, no traceback."""
    import analysis.corpus as AC

    src = tmp_path / "in.jsonl"
    docs = [{"id": "a", "text": "One. Two.", "reference": "One."}, {"id": "b", "text": "Three. Four.", "reference": "x"}]
    src.write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tmp_path / "shards").mkdir()
    (tmp_path / "shards" / "summaries-0.jsonl").write_text("".join(json.dumps(
        {"id": d["id"], "sentences": d["text"].split(" "), "selected": [0], "lead": [0], "reference": [d["reference"]]})
        + "\n" for d in docs))

    def missing(*args):
        raise ModuleNotFoundError("No module named 'rouge_score'")

    monkeypatch.setattr(AC, "rouge_vs_lead", missing)
    report = AC.merge(tmp_path, str(src), 3, {})
    assert report["rouge"] is None and "rouge_score" in report["not_computed"]["rouge"]
    assert report["summarized"] == 2 and len((tmp_path / "summaries.jsonl").read_text().splitlines()) == 2
