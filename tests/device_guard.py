"""Catch a CPU/GPU tensor mix-up on a machine without a GPU.

On CUDA, an op that meets a CUDA tensor and a CPU tensor (not a 0-dim scalar) raises "Expected
all tensors to be on the same device", and ``.numpy()`` of a CUDA tensor raises too. On the CPU
both work, so a CPU-only test suite never sees the bug. ``DeviceGuard`` gives the CPU a second,
pretend device and tracks, per tensor, which of the two it lives on:

- the model runs on ``FAKE = torch.device("cpu", 0)``: a real CPU device (every kernel runs as
  usual), but an object different from the host's ``torch.device("cpu")``, so the guard can tell
  "to the model's device" (``device=model.device``, ``.to(model.device)``) from "to the host"
  (``.cpu()``, ``torch.from_numpy``, any factory given no device);
- a ``torch.overrides.TorchFunctionMode`` sees every torch call made in the block: it marks the
  outputs "on the model's device" when a call was asked for that device, or, asked for none, when
  an input was; it raises ``DeviceMixError`` where CUDA would raise: an op given tensors from both
  sides (0-dim host tensors excepted, as CUDA accepts them as scalars), a host tensor indexed by a
  device one, and ``.numpy()`` / ``np.asarray`` of a device tensor;
- ``tensor.device`` answers ``FAKE`` for a tensor on the model's side, so code that builds a
  tensor ``device=x.device`` is followed as it would be on CUDA.

What it cannot see (so the CUDA tests in tests/test_gpu.py remain the last word): tensors made in
other threads (torch function modes are per thread: the AppTests run a page in a thread of their
own), work in other processes, and the kernels' own device rules beyond the ones above (an op
CUDA supports for mixed devices that is not exempted here would be a false alarm, and the
reverse a miss). Allowed across the two, as on CUDA: ``copy_``, ``to``/``cpu``/``cuda``,
indexing a device tensor with host indices, assigning into a tensor.
"""
from __future__ import annotations

from contextlib import contextmanager

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten
from torch.utils.weak import WeakTensorKeyDictionary

FAKE = torch.device("cpu", 0)
HOST = torch.device("cpu")
Tensor = torch.Tensor

MOVES = {Tensor.to, Tensor.cpu, Tensor.cuda, Tensor.copy_, Tensor.__setitem__, Tensor.set_}
TO_NUMPY = {Tensor.numpy, Tensor.__array__}


class DeviceMixError(RuntimeError):
    """What CUDA would have raised."""


def _is_fake(device) -> bool:
    d = torch.device(device) if isinstance(device, (str, int)) else device
    return d.type == "cuda" or (d.type == "cpu" and d.index is not None)


class DeviceGuard(TorchFunctionMode):
    """Within the block, track which tensors live on the model's (pretend) device; the model's
    parameters and buffers start there. See the module docstring."""

    def __init__(self, *modules: torch.nn.Module):
        super().__init__()
        self.on_device = WeakTensorKeyDictionary()
        for m in modules:
            for t in (*m.parameters(), *m.buffers()):
                self.on_device[t] = True
        self.calls = 0  # torch calls seen: a guard that saw nothing checked nothing

    def fake(self, t) -> bool:
        return isinstance(t, Tensor) and t in self.on_device

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.calls += 1
        if func == Tensor.device.__get__:
            return FAKE if self.fake(args[0]) else func(*args, **kwargs)
        tensors = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, Tensor)]
        name = getattr(func, "__qualname__", getattr(func, "__name__", str(func)))
        if func in TO_NUMPY and self.fake(args[0]):
            raise DeviceMixError(f"{name}: to NumPy from the model's device (CUDA: call .cpu() first)")
        if func is Tensor.__getitem__:
            index = [t for t in tree_flatten(args[1:])[0] if isinstance(t, Tensor)]
            if not self.fake(args[0]) and any(self.fake(t) for t in index):
                raise DeviceMixError("a host tensor indexed by a tensor on the model's device")
        elif func not in MOVES:
            sides = {self.fake(t) for t in tensors if self.fake(t) or t.dim() > 0}
            if len(sides) == 2:
                shapes = [(tuple(t.shape), "model" if self.fake(t) else "host") for t in tensors]
                raise DeviceMixError(f"{name} got tensors on the model's device and on the host: {shapes}")
        out = func(*args, **kwargs)
        if func is Tensor.__iter__:  # its items come from an unbind the mode does not see
            items = list(out)
            self._mark(items, self._side(func, args, kwargs, tensors))
            return iter(items)
        self._mark(tree_flatten(out)[0], self._side(func, args, kwargs, tensors))
        return out

    def _side(self, func, args, kwargs, tensors) -> bool:
        """Whether a call's outputs live on the model's device."""
        target = self._target(func, args, kwargs)
        return target if target is not None else any(self.fake(t) for t in tensors[:1 if func in MOVES else None])

    def _mark(self, outputs, fake: bool) -> None:
        for t in outputs:
            if isinstance(t, Tensor):
                if fake:
                    self.on_device[t] = True
                else:
                    self.on_device.pop(t, None)

    def _target(self, func, args, kwargs):
        """The side a call was asked for: True (model's device), False (host), None (not asked)."""
        if func is Tensor.cpu:
            return False
        if func is Tensor.cuda:
            return True
        if func is Tensor.to:
            for a in (*args[1:], kwargs.get("device"), kwargs.get("other")):
                if isinstance(a, Tensor):
                    return self.fake(a)
                if isinstance(a, (str, torch.device)) or (isinstance(a, int) and not isinstance(a, bool)):
                    return _is_fake(a)
            return None
        if func in MOVES:
            return None
        device = kwargs.get("device")
        if device is not None:
            return _is_fake(device)
        if not any(isinstance(a, Tensor) for a in tree_flatten((args, kwargs))[0]):
            return False  # a factory given no device: the host (torch's default device)
        return None


@contextmanager
def guarded(summarizer):
    """Run ``summarizer`` on the pretend device within the block (its model moved there for
    the block's duration): yields the guard."""
    old = summarizer.device
    summarizer.device = FAKE
    guard = DeviceGuard(summarizer.model)
    try:
        with guard:
            yield guard
    finally:
        summarizer.device = old
