"""The random-head control (issue 42, item 4): the base model with exactly the projection head a COB or triplet job
of the same seed starts from, trained not at all.

COB and its triplet baseline put a ``Dense(projection_dim, tanh)`` head after the pooling
(:func:`tecb.adapt.training.add_projection_head`) and save it with the adapted model, so their rows measure the head
and the training together; an untrained random head alone can move the V-measure. This control adds the same head
in the same place, at the same point of :func:`tecb.adapt.training.train` (after the base model's step-0 score,
from torch's generator seeded by the job's seed, as theirs), makes no optimizer step, and is scored like every arm:
the base at step 0, the model with the head after its phase (recorded as step 1, with 0 optimizer steps). A COB or
triplet row is read against it: ``COB − random head`` is what the training added beyond its head
(docs/adaptation.md). The head is the same only where ``projection_dim`` is the method's (the workflow checks it).
"""

from __future__ import annotations

from tecb.adapt.training import Phase, add_projection_head

# the head of COB's and triplet's defaults (their projection_dim)
DEFAULTS = {"projection_dim": 256}


def phases(*, model, data, settings: dict, rng, device: str) -> list[Phase]:
    """One phase without a batch: the head added (the model changes), nothing trained."""
    head = add_projection_head(model, settings["projection_dim"], device)
    return [
        Phase(
            name="random_head",
            batches=lambda rng: [],
            loss=lambda batch: None,
            lr=0.0,
            epochs=0,
            warmup_ratio=0.0,
            weight_decay=0.0,
            max_grad_norm=0.0,
            train_encoder=False,
            info={"control": "no training", **head},
        )
    ]
