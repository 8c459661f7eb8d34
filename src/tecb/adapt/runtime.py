"""What adaptive pre-training (:mod:`tecb.adapt.pretrain`) and training for clustering (:mod:`tecb.adapt.training`,
:mod:`tecb.adapt.jobs`) both run under: the device a job trains on, its mixed precision, its seeded global
generators. Light at import: torch is imported inside the functions."""

from __future__ import annotations

import random
from contextlib import contextmanager

import numpy as np


@contextmanager
def seeded_global_rngs(seed: int):
    """Seed Python's, NumPy's and torch's global generators (dropout, TSDAE's noise) for the block, then put
    back the states they had: the training is reproducible and the caller's process state is left as found."""
    import torch

    states = random.getstate(), np.random.get_state()
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices):
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)  # all devices
        try:
            yield
        finally:
            random.setstate(states[0])
            np.random.set_state(states[1])


def resolve_device(device: str | None) -> str:
    """The device a job trains on: ``device`` as given, or where it is None, empty or ``auto`` CUDA where torch
    sees a GPU, else the CPU."""
    import torch

    if device in (None, "", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def mixed_precision(device: str):
    """``(autocast, scaler, precision)`` for ``device``: bf16 (or fp16 with a grad scaler) autocast on CUDA;
    on the CPU none (a null context, no scaler, ``float32``)."""
    import contextlib

    import torch

    if not device.startswith("cuda"):
        return contextlib.nullcontext, None, "float32"
    dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    scaler = torch.amp.GradScaler("cuda") if dtype == torch.float16 else None
    return (lambda: torch.autocast("cuda", dtype=dtype)), scaler, str(dtype).replace("torch.", "")
