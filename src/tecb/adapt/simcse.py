"""Unsupervised SimCSE (Gao et al., 2021): each sentence is encoded twice, the two dropout masks are the only
augmentation, and InfoNCE over the in-batch negatives pulls the two views together (ClusterNS, Eq. 1)."""

from __future__ import annotations

import numpy as np

from tecb.adapt.training import Phase, chunked, embed

# SimCSE §3 / Appendix A (unsupervised BERT-base): batch 64, lr 3e-5, max length 32, 1 epoch, temperature 0.05,
# dropout 0.1 (the model's own); no warm-up, AdamW with the linear decay of HF's Trainer, no weight decay. The 32
# tokens are the paper's sentences'; on a P2P dataset (title and text) training reads p2p_max_length tokens
# (None: the length the benchmark embeds with), so it sees the text it is evaluated on.
# min_steps: at least this many steps (epochs added; tecb.adapt.training.epochs_for): the paper's one epoch over
# 10^6 Wikipedia sentences is ~15,000 steps, one epoch over a German S2S dataset a few dozen.
DEFAULTS = {
    "lr": 3e-5,
    "batch_size": 64,
    "epochs": 1,
    "max_length": 32,
    "p2p_max_length": None,
    "min_steps": 500,
    "temperature": 0.05,
    "warmup_ratio": 0.0,
    "weight_decay": 0.0,
    "max_grad_norm": 1.0,
}


def full_precision(x):
    """``x`` in float32 if it is half precision (autocast), else as it is."""
    import torch

    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


def cosine_matrix(a, b):
    """Cosine similarities of every row of ``a`` with every row of ``b`` (half precision computed in float32)."""
    import torch.nn.functional as F

    a, b = full_precision(a), full_precision(b)
    return F.normalize(a, dim=-1) @ F.normalize(b.to(a.dtype), dim=-1).T


def infonce_loss(z1, z2, temperature: float, hard=None, hard_weight: float = 1.0):
    """Eq. (1) (``hard`` None) or Eq. (2): ``-log e^{s_ii/t} / sum_j (e^{s_ij/t} + mu e^{h_ij/t})`` averaged over
    the batch, with ``s_ij = cos(z1_i, z2_j)``, ``h_ij = cos(z1_i, hard_j)`` and ``mu = hard_weight``."""
    import math

    import torch
    import torch.nn.functional as F

    logits = cosine_matrix(z1, z2) / temperature
    if hard is not None:
        logits = torch.cat([logits, cosine_matrix(z1, hard) / temperature + math.log(hard_weight)], dim=1)
    return F.cross_entropy(logits, torch.arange(z1.shape[0], device=z1.device))


def two_views(model, texts: list[str], device: str):
    """The two dropout views of ``texts``: one forward pass over the texts twice (different dropout masks)."""
    z = embed(model, list(texts) + list(texts), device)
    return z[: len(texts)], z[len(texts) :]


def text_batches(n: int, batch_size: int):
    """An epoch of index batches (random order); a last batch of one text has no negatives and is dropped."""

    def draw(rng: np.random.Generator) -> list:
        return [b for b in chunked(rng.permutation(n), int(batch_size)) if len(b) > 1]

    return draw


def phases(*, model, data, settings: dict, rng, device: str) -> list[Phase]:
    texts = list(data.texts)
    if len(texts) < 2:
        raise ValueError(f"simcse needs at least 2 training texts, got {len(texts)}")

    def loss(idx):
        z1, z2 = two_views(model, [texts[i] for i in idx], device)
        return infonce_loss(z1, z2, settings["temperature"])

    return [
        Phase(
            name="simcse",
            batches=text_batches(len(texts), settings["batch_size"]),
            loss=loss,
            lr=settings["lr"],
            epochs=settings["epochs"],
            warmup_ratio=settings["warmup_ratio"],
            weight_decay=settings["weight_decay"],
            max_grad_norm=settings["max_grad_norm"],
            min_steps=int(settings["min_steps"]),
        )
    ]
