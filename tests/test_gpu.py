"""On a CUDA GPU, the same results as on the CPU (float32 both): the paper's model at BERT-base
size (random weights, written at test time) through summarize, trace, explain, head ablation and
context mixing. Marked ``cuda``, skipped where there is none. No Streamlit here, so a bare GPU
machine with torch runs it."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from model.summarizer import Summarizer

ROOT = Path(__file__).resolve().parents[1]
ARTICLE = (ROOT / "examples" / "bbc_call_centres.txt").read_text(encoding="utf-8")
SHORT = ("The oil price rose again on Monday in London. Analysts said the growth was a surprise to them. "
         "He said that it was news for the market and for the banks. The end came late on a Friday evening.")

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


@pytest.fixture(scope="module")
def gpu(presumm_base):
    return Summarizer.load(*presumm_base, device="cuda")


def test_gpu_matches_cpu(gpu, presumm_model):
    """Summarize, trace, explain and head ablation on the GPU equal the CPU's (float32 both)."""
    from analysis.explain import explain
    from analysis.heads import ablation_importance

    a, b = presumm_model.trace(ARTICLE), gpu.trace(ARTICLE)
    assert a.summary.selected == b.summary.selected
    assert np.allclose(np.array(a.summary.scores, dtype=float), np.array(b.summary.scores, dtype=float), atol=1e-4)
    assert np.abs(a.bert_attention.astype(np.float32) - b.bert_attention.astype(np.float32)).max() < 2e-3
    assert isinstance(b.bert_attention, np.ndarray)  # moved to CPU NumPy once, in trace()
    ea, eb = explain(presumm_model, SHORT, 3, True), explain(gpu, SHORT, 3, True)
    assert np.allclose(ea["position_score"], eb["position_score"], atol=1e-4)
    ia, ib = ablation_importance(presumm_model, SHORT), ablation_importance(gpu, SHORT)
    assert np.allclose(ia["bert"], ib["bert"], atol=1e-4)


def test_mixing_on_gpu_matches_cpu(gpu, presumm_model):
    """Norms, ALTI (BERT and the sentence encoder), value zeroing and the scoreboard's deletions
    on the GPU equal the CPU's."""
    from analysis import mixing as M

    a, b = M.mixing(presumm_model, ARTICLE), M.mixing(gpu, ARTICLE)
    assert np.allclose(a.norm_layer, b.norm_layer, atol=1e-3, rtol=1e-3)
    assert np.allclose(a.alti_input, b.alti_input, atol=1e-4)
    assert np.allclose(a.inter_alti, b.inter_alti, atol=1e-4)
    assert np.allclose(a.mixing_ratio, b.mixing_ratio, atol=1e-4)
    za, _ = M.value_zeroing(presumm_model, SHORT, 11)
    zb, _ = M.value_zeroing(gpu, SHORT, 11)
    assert np.allclose(za, zb, atol=1e-6)
    first = presumm_model.summarize(SHORT).selected[0]
    fa = M.faithfulness(presumm_model, SHORT, first, fractions=(0.2,), orders=10)
    fb = M.faithfulness(gpu, SHORT, first, fractions=(0.2,), orders=10)
    assert np.allclose(fa["scopes"]["all"]["random"]["comprehensiveness"],
                       fb["scopes"]["all"]["random"]["comprehensiveness"], atol=1e-4)
