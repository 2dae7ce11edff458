"""How big a batch an analysis may run at once, from the device the model is on.

On the 2-core CPU these were measured on, bigger batches were slower per item once the batch's
tensors left the cache, so the CPU keeps each analysis's own small budget. A GPU is the
opposite: its time is fixed per call, so a batch is as big as the memory free now allows.
"""
from __future__ import annotations

import torch

GPU_SHARE = 0.25  # of the GPU memory free at the call: room for the model, other sessions, the allocator


def batch_bytes(device: torch.device | str, cpu_bytes: int) -> int:
    """Bytes one batch's largest tensor may take: ``cpu_bytes`` on the CPU, on a GPU a quarter of
    the memory free now (never less than ``cpu_bytes``)."""
    device = torch.device(device)
    if device.type != "cuda":
        return cpu_bytes
    free, _ = torch.cuda.mem_get_info(device)
    return max(cpu_bytes, int(free * GPU_SHARE))
