"""SBERT with triplet loss, COB's supervised baseline (Kashyapi & Dietz, 2021, §4; Reimers & Gurevych, 2019).

Triplets are mined from the same labelled clustering instances COB trains on, as the COB authors' code does:
every triple of an instance's texts with exactly two distinct labels gives one (anchor, positive, negative)
triplet, anchor and positive sharing a label; a random ``1 / triplet_fraction`` of each instance's triplets is
kept. The loss is sentence-transformers' ``TripletLoss`` with its defaults (Euclidean distance, margin 5), the
loss the COB baseline was trained with: ``max(||a - p|| - ||a - n|| + margin, 0)``.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from tecb.adapt.cob import FIT_DEFAULTS, check_instances
from tecb.adapt.training import (
    Phase,
    add_projection_head,
    chunked,
    encode_features,
    heads_of,
    hold_out,
    optimizer_settings,
    validation_score,
)

# COB's released baseline (run_triplets_model with the script defaults): batch 1, 1 epoch, 10 % warm-up,
# sentence-transformers' fit defaults (AdamW lr 2e-5, weight decay 0.01, gradient norm 1), TripletLoss defaults
# (Euclidean, margin 5), 1/25 of the triplets (triple_fraction 25); instances of 50 texts (20NG, COB §4); the same
# Dense(256, tanh) head as COB's model (projection_dim; 0: none). max_triplets_per_instance bounds the mining so the
# job costs about what COB's does (None: the authors' 1/25): a 50-text instance of 10 labels of 5 texts has 4,500
# triplets, 180 at 1/25, i.e. 540 text encodings where COB encodes the instance's 50 once; 17 triplets (51
# encodings) cost about what COB's step does. Model selection as COB's (validation_fraction of the instances held
# out, the epoch with the best validation V-measure kept).
DEFAULTS = {
    **FIT_DEFAULTS,
    "margin": 5.0,
    "triplet_fraction": 25,
    "instance_size": 50,
    "projection_dim": 256,
    "max_triplets_per_instance": 17,
    "validation_fraction": 0.2,
    "head_lr": None,  # the added head's own learning rate (None: lr)
}


def instance_triplets(labels) -> list[tuple[int, int, int]]:
    """All (anchor, positive, negative) index triplets of one instance: one per triple with exactly two labels."""
    out = []
    for i, j, k in combinations(range(len(labels)), 3):
        a, b, c = labels[i], labels[j], labels[k]
        if len({a, b, c}) != 2:
            continue
        if a == b:
            out.append((i, j, k))
        elif b == c:
            out.append((j, k, i))
        else:
            out.append((i, k, j))
    return out


def mine_triplets(
    instances, fraction: int, rng: np.random.Generator, max_per_instance: int | None = None
) -> list[tuple[str, str, str]]:
    """``len // fraction`` random triplets of each instance (at least one where it has any), at most
    ``max_per_instance`` (None: no bound)."""
    out = []
    for texts, labels in instances:
        triplets = instance_triplets(list(labels))
        if not triplets:
            continue
        keep = max(1, len(triplets) // int(fraction))
        if max_per_instance:
            keep = min(keep, int(max_per_instance))
        for t in rng.choice(len(triplets), size=keep, replace=False):
            i, j, k = triplets[int(t)]
            out.append((texts[i], texts[j], texts[k]))
    return out


def triplet_loss(anchor, positive, negative, margin: float):
    """The reference formula (used by the tests against sentence-transformers' implementation)."""
    import torch

    return torch.relu(
        torch.linalg.vector_norm(anchor - positive, dim=-1)
        - torch.linalg.vector_norm(anchor - negative, dim=-1)
        + margin
    ).mean()


def phases(*, model, data, settings: dict, rng, device: str) -> list[Phase]:
    from sentence_transformers.sentence_transformer.losses import TripletLoss

    check_instances(data.instances, "triplet")
    instances, held_out = hold_out(data.instances, settings["validation_fraction"], rng)
    triplets = mine_triplets(instances, settings["triplet_fraction"], rng, settings["max_triplets_per_instance"])
    if not triplets:
        raise ValueError("triplet: no instance has a triplet (two texts of one label and one of another)")
    head = add_projection_head(model, settings["projection_dim"], device)
    loss_fn = TripletLoss(model, triplet_margin=float(settings["margin"]))

    def loss(batch):
        columns = [[triplets[i][c] for i in batch] for c in range(3)]
        return loss_fn([encode_features(model, col, device) for col in columns], None)

    return [
        Phase(
            info={
                "triplets": len(triplets),
                "instances": len(instances),
                "validation_instances": len(held_out),
                **head,
            },
            name="triplet",
            batches=lambda rng: chunked(rng.permutation(len(triplets)), int(settings["batch_size"])),
            loss=loss,
            chance_loss=lambda batch: float(settings["margin"]),  # ||a - p|| = ||a - n||
            **optimizer_settings(settings),
            heads=heads_of(model),
            validate=(lambda: validation_score(model, held_out, device)) if held_out else None,
        )
    ]
