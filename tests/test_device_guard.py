"""Device mix-ups caught without a GPU: every analysis entry point runs under tests/device_guard.py
(the model on a pretend device, every torch call checked as CUDA would check it), on a short
and on a two-window document, and gives what it gives unguarded. The guard itself is tested
against the mix-ups CUDA raises on and the moves CUDA allows. Its limits are in its docstring;
tests/test_gpu.py runs the same entry points on a real GPU where there is one."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from device_guard import DeviceGuard, DeviceMixError, guarded

ROOT = Path(__file__).resolve().parents[1]
LONG = (ROOT / "examples" / "bbc_call_centres.txt").read_text(encoding="utf-8")  # 2 BERT windows
SHORT = ("The oil price rose again on Monday in London. Analysts said the growth was a surprise to them. "
         "He said that it was news for the market and for the banks. The end came late on a Friday evening.")

pytestmark = pytest.mark.slow


def test_the_guard_raises_where_cuda_raises_and_allows_what_cuda_allows():
    lin = torch.nn.Linear(4, 3)
    with DeviceGuard(lin) as g:
        w = lin.weight                                        # [3, 4] on the model's device
        host = torch.from_numpy(np.arange(2))
        with pytest.raises(DeviceMixError, match="index_select"):
            w.index_select(0, host)                           # compare.attention_change's bug
        with pytest.raises(DeviceMixError):
            torch.zeros(3, 4) + w                             # a host tensor meets a device one
        total = torch.zeros(3)
        with pytest.raises(DeviceMixError):
            total += w.sum(1)                                 # summing into a host accumulator
        with pytest.raises(DeviceMixError, match="NumPy"):
            w.detach().numpy()                                # .numpy() without .cpu()
        with pytest.raises(DeviceMixError, match="NumPy"):
            np.asarray(w.detach())
        with pytest.raises(DeviceMixError, match="indexed"):
            torch.ones(5)[w.argmax(1)]                        # a host tensor, device indices
        # what CUDA allows: host scalars, host indices into a device tensor, explicit moves
        assert (w * torch.tensor(2.0)).shape == (3, 4)
        assert w[host].shape == (2, 4)
        moved = host.to(w.device)                             # device=x.device follows x
        assert w.index_select(0, moved).shape == (2, 4)
        assert w.detach().cpu().numpy().shape == (3, 4)
        assert torch.arange(2, device=w.device).add(moved).tolist() == [0, 2]
        total.copy_(w.sum(1))
        assert [t.shape for t in w] == [(4,)] * 3             # iterating keeps the side
        assert lin(torch.ones(1, 4, device=w.device)).shape == (1, 3)
        with pytest.raises(DeviceMixError):
            lin(torch.ones(1, 4))                             # a host input to the model
    assert g.calls > 10


def entry_points(s, text):
    from analysis import compare as C
    from analysis import edits as ED
    from analysis import patching as P
    from analysis import explain as E
    from analysis import heads as Hd
    from analysis import mixing as M
    from analysis import faithfulness as FA
    from analysis.corpus import summarize_one
    from analysis import attribution as A
    from analysis.layers import layer_scores
    from analysis.route import sentence_route

    b = ED.apply_edits(text, [ED.parse_edit("move:1:end")], s)
    first = s.summarize(text).selected[0]
    last = len(s.encode(text, None).window_starts) - 1
    return {
        "summarize": lambda: s.summarize(text).scores,
        "trace": lambda: s.trace(text, window=last).bert_attention,
        "batch_trace": lambda: s.batch_trace([SHORT, text]).scores,
        "explain": lambda: E.explain(s, text, 3, True)["attributions"],
        "attribute": lambda: [w.weight for w in E.attribute(s, text, [first])[first]],
        "importance_gradient": lambda: Hd.importance_gradient(s, text)[0],
        "importance_ablation": lambda: Hd.importance_ablation(s, text).importance,
        "compare": lambda: C.compare(s, text, b).bert_change,
        "patch": lambda: [r.fraction for r in P.patch(s, text, b, 1, bert_heads=False).rows],
        "mixing": lambda: M.mixing(s, text, window=last).alti_input,
        "value_zeroing_bert": lambda: M.value_zeroing(s, text, 1)[0],
        "value_zeroing_inter": lambda: M.value_zeroing(s, text, "inter:1")[0],
        "scoreboard": lambda: FA.faithfulness(s, text, first, fractions=(0.2,), orders=2)["scopes"]["all"]["random"],
        "corpus_worker": lambda: summarize_one(s, {"id": "x", "text": text}, 3, True, True, True)[0]["scores"],
        "integrated_gradients": lambda: [w["weight"] for w in A.attribute(s, text, first, None, "integrated-gradients",
                                                                          steps=4, tolerance=1.0)["words"]],
        "occlusion": lambda: [w["weight"] for w in A.attribute(s, text, first, None, "occlusion")["words"]],
        "curves": lambda: A.curves(s, text, first, {}, fractions=(0.2,), orders=1)["methods"]["random"],
        "lens": lambda: layer_scores(s, text)["bert_tuned"],
        "route": lambda: sorted(sentence_route(s, text, first, 0.5)[0].nodes.values()),
        "run_with_cache": lambda: s.run_with_cache(text, pattern=r"inter\..*")[1].stack("resid_post", "inter"),
    }


def same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and not all(isinstance(x, (int, float, type(None))) for x in a):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return np.allclose(np.array(a, dtype=float), np.array(b, dtype=float), atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("text", [SHORT, LONG], ids=["short", "two_windows"])
def test_every_analysis_entry_point_keeps_its_tensors_on_the_models_device(summarizer, text):
    """Nothing crosses between the host and the model's device but by an explicit move, and the
    pretend device changes no result. Each runs unguarded first, so whatever an entry point keeps
    between calls (a tokenizer, a copy of the summarizer) was made before the device was (a
    cache that kept the old device would be caught here, and would fail on CUDA)."""
    for name, call in entry_points(summarizer, text).items():
        want = call()
        with guarded(summarizer) as guard:
            try:
                got = call()
            except DeviceMixError as e:
                pytest.fail(f"{name}: {e}")
        assert guard.calls > 100, name                        # the guard saw the model run
        assert same(got, want), name


def test_training_step_keeps_its_tensors_on_the_models_device():
    """One backward of training.train's loss: from cached lower layers (the shipped recipe) and,
    with --layer 0, every layer from the token ids, two documents padded into one forward."""
    from training.cache import Cached, fresh_summarizer
    from training.train import batch_loss

    s = fresh_summarizer()
    enc = s.encode(SHORT, 1)
    D = s.model.bert.config.hidden_size
    labels = torch.tensor([1.0, 0, 0, 1])
    cls = torch.tensor(enc.cls_positions)
    cached = Cached(0, torch.randn(len(enc.tokens), D), cls, labels, list(enc.input_sentences))  # host, as read from disk
    ids = Cached(0, None, cls, labels, list(enc.input_sentences), enc.input_ids, enc.segment_ids)
    short = Cached(1, None, cls[:2], labels[:2], [0, 1], enc.input_ids[:cls[2]], enc.segment_ids[:cls[2]])
    for start, examples in ((4, [cached]), (0, [ids, short])):
        with guarded(s) as guard:
            loss, n = batch_loss(s.model, start, examples, s.device, orders=[torch.randperm(len(e.labels))
                                                                            for e in examples])
            loss.backward()
        assert n == sum(len(e.labels) for e in examples) and guard.calls > 10 and torch.isfinite(loss)
