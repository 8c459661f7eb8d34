"""What a killed training job needs to continue where it stopped, shared by adaptive pre-training
(:mod:`tecb.adapt.pretrain`) and the training for clustering (:mod:`tecb.adapt.training`).

A job writes its state every N optimizer steps with :func:`save` (atomically: a job killed while writing leaves
the previous state) and, started again, reads it with :func:`load`, which hands it back only when it was written
for the same job: the state carries the job's :func:`fingerprint` (a digest of everything that decides the job's
result), and a state of other settings or data is ignored with a log line. :func:`random_states` /
:func:`restore_random_states` capture every random generator the training draws from (Python's, NumPy's and
torch's global ones, CUDA's, and the job's own NumPy ``Generator`` objects), so a resumed job draws the numbers a
job that ran through would have drawn; with the weights, the optimizer and the batch order it ends with the same
bytes.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np

from tecb import io


def fingerprint(fields: dict) -> str:
    """The sha256 of ``fields`` as canonical JSON (sorted keys; values JSON cannot write, by their ``str``)."""
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()


def random_states(generators=()) -> dict:
    """The states of Python's, NumPy's, torch's (and CUDA's) global generators and of ``generators`` (NumPy
    ``Generator`` objects), for :func:`restore_random_states`."""
    import torch

    return {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "generators": [g.bit_generator.state for g in generators],
    }


def restore_random_states(states: dict, generators=()) -> None:
    """Put back what :func:`random_states` captured (``generators``: the same objects, in the same order)."""
    import torch

    random.setstate(states["python"])
    np.random.set_state(states["numpy"])
    torch.set_rng_state(states["torch"])
    if states["cuda"]:
        torch.cuda.set_rng_state_all(states["cuda"])
    for generator, saved in zip(generators, states["generators"], strict=True):
        generator.bit_generator.state = saved


def save(path, job_fingerprint: str, state: dict) -> None:
    """``state`` (tensors, optimizer states, positions) with the job's fingerprint, written atomically to ``path``."""
    import torch

    with io.atomic_path(path) as tmp:
        torch.save({"fingerprint": job_fingerprint, **state}, tmp)


def load(path, job_fingerprint: str, log) -> dict | None:
    """The state saved at ``path`` for this job, or None: none there, unreadable, or written for another job (other
    settings or data), each said in ``log``; such a file is left for the job's next save to replace."""
    import torch

    if path is None or not Path(path).exists():
        return None
    try:
        state = torch.load(path, weights_only=False)
    except Exception as exc:  # a damaged file: start over, saying so
        log(f"resume state {path} unreadable ({type(exc).__name__}: {exc}); starting from the beginning")
        return None
    if not isinstance(state, dict) or state.get("fingerprint") != job_fingerprint:
        log(f"resume state {path} belongs to other settings or data; ignored, starting from the beginning")
        return None
    return state


def remove(path) -> None:
    """The job has ended: nothing to resume."""
    if path is not None:
        Path(path).unlink(missing_ok=True)
