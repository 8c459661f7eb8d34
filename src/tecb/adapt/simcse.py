"""Unsupervised SimCSE (Gao et al., 2021): each sentence is encoded twice, the two dropout masks are the only
augmentation, and InfoNCE over the in-batch negatives pulls the two views together (ClusterNS, Eq. 1)."""

from __future__ import annotations

import math

import numpy as np

from tecb.adapt.training import Phase, chunked, embed

# SimCSE §3 / Appendix A (unsupervised BERT-base): batch 64, lr 3e-5, max length 32, 1 epoch, temperature 0.05,
# dropout 0.1 (the model's own); no warm-up, AdamW with the linear decay of HF's Trainer, no weight decay. The 32
# tokens are the paper's sentences'; on a P2P dataset (title and text) training reads p2p_max_length tokens
# (None: the length the benchmark embeds with), so it sees the text it is evaluated on.
# min_steps: at least this many steps (epochs added; tecb.adapt.training.epochs_for): the paper's one epoch over
# 10^6 Wikipedia sentences is ~15,000 steps, one epoch over a German S2S dataset a few dozen. augmentation: the two
# views differ by dropout alone (the paper) or, ``cropping``, each is also a random contiguous span of crop_ratio of
# the text's words (a later study found cropping better than dropout for unsupervised SimCSE; the ratio is ours).
DEFAULTS = {
    "lr": 3e-5,
    "batch_size": 64,
    "epochs": 1,
    "max_length": 32,
    "p2p_max_length": None,
    "min_steps": 500,
    "augmentation": "dropout",
    "crop_ratio": 0.8,
    "temperature": 0.05,
    "warmup_ratio": 0.0,
    "weight_decay": 0.0,
    "max_grad_norm": 1.0,
}

#: The settings a :class:`~tecb.adapt.training.Phase` takes as they are (every method's DEFAULTS holds them).
PHASE_SETTINGS = ("lr", "epochs", "warmup_ratio", "weight_decay", "max_grad_norm")


def phase_settings(settings: dict) -> dict:
    """The keywords of a :class:`~tecb.adapt.training.Phase` read from a method's ``settings``: its optimiser's
    (lr, warm-up, weight decay, gradient clipping), its epochs and its least number of steps."""
    return {**{key: settings[key] for key in PHASE_SETTINGS}, "min_steps": int(settings["min_steps"])}


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


AUGMENTATIONS = ("dropout", "cropping")


def crop(text: str, ratio: float, rng: np.random.Generator) -> str:
    """A random contiguous span of ``ceil(ratio * n)`` of the text's ``n`` words (the whole text if shorter)."""
    words = text.split()
    keep = max(1, int(np.ceil(float(ratio) * len(words))))
    if keep >= len(words):
        return text
    start = int(rng.integers(len(words) - keep + 1))
    return " ".join(words[start : start + keep])


def two_views(model, texts: list[str], device: str, crop_ratio: float | None = None, rng=None, counts=None):
    """The two views of ``texts``: one forward pass over the texts twice (different dropout masks); with
    ``crop_ratio`` each view is also an independent random crop (:func:`crop`, drawn from ``rng``). ``counts``
    (a dict): ``views`` and ``views_cropped`` (a view shorter than its text) are added to."""
    first, second = list(texts), list(texts)
    if crop_ratio is not None:
        first = [crop(t, crop_ratio, rng) for t in texts]
        second = [crop(t, crop_ratio, rng) for t in texts]
    if counts is not None:
        counts["views"] = counts.get("views", 0) + 2 * len(texts)
        cut = sum(v != t for t, v in zip(texts + texts, first + second))
        counts["views_cropped"] = counts.get("views_cropped", 0) + cut
    z = embed(model, first + second, device)
    return z[: len(texts)], z[len(texts) :]


def view_maker(settings: dict, rng: np.random.Generator):
    """``(crop_ratio, generator)`` for :func:`two_views` under the setting ``augmentation`` (dropout: no crop)."""
    augmentation = settings["augmentation"]
    if augmentation not in AUGMENTATIONS:
        raise ValueError(f"augmentation {augmentation!r} is not one of {', '.join(AUGMENTATIONS)}")
    if augmentation == "dropout":
        return None, None
    if not 0 < float(settings["crop_ratio"]) <= 1:
        raise ValueError(f"crop_ratio must be in (0, 1], got {settings['crop_ratio']}")
    return float(settings["crop_ratio"]), np.random.default_rng(int(rng.integers(2**32)))


def text_batches(n: int, batch_size: int):
    """An epoch of index batches (random order); a last batch of one text has no negatives and is dropped."""

    def draw(rng: np.random.Generator) -> list:
        return [b for b in chunked(rng.permutation(n), int(batch_size)) if len(b) > 1]

    return draw


def phases(*, model, data, settings: dict, rng, device: str) -> list[Phase]:
    texts = list(data.texts)
    if len(texts) < 2:
        raise ValueError(f"simcse needs at least 2 training texts, got {len(texts)}")

    ratio, crop_rng = view_maker(settings, rng)
    # what the views were: the share of them a crop shortened is what Table 6 prints (a ratio that cuts nothing is
    # dropout again); a resumed run puts the counts back with the rest of the phase's info
    info = {"augmentation": settings["augmentation"], "views": 0, "views_cropped": 0}
    if ratio is not None:
        info["crop_ratio"] = ratio

    def loss(idx):
        z1, z2 = two_views(model, [texts[i] for i in idx], device, ratio, crop_rng, counts=info)
        return infonce_loss(z1, z2, settings["temperature"])

    return [
        Phase(
            name="simcse",
            batches=text_batches(len(texts), settings["batch_size"]),
            loss=loss,
            chance_loss=lambda idx: math.log(len(idx)),  # Eq. (1) with every cosine equal
            info=info,
            state=[crop_rng] if crop_rng is not None else [],  # the crops drawn so far (a resumed run)
            **phase_settings(settings),
        )
    ]
