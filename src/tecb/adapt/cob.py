"""COB, Clustering Optimization as Blackbox (Kashyapi & Dietz, 2021): supervised training on many small labelled
clustering instances through a discrete clustering solver.

Per instance: pairwise Euclidean distances ``D`` of the embeddings go into HAC (average linkage, the true number
of clusters) which returns the adjacency matrix ``A`` (``A_ij = 1``: same cluster, diagonal 1); the loss is
``L = sum_ij |A_ij - T_ij|`` (``T``: the gold adjacency; it decides the RAND index, RI = 1 - L / (2 * C(n, 2)))
plus ``r * (mean intra-cluster distance - mean inter-cluster distance)`` over ``D`` (§3.4). The embeddings are those of
the authors' model: the encoder's pooled output through a ``Dense(256, tanh)`` head (bounded, so that the
regulariser and lambda = 90 keep the scale they were tuned for; ``projection_dim``). The gradient of the
solver is the blackbox one of Vlastelica et al. (2020): with ``dL/dA`` from the loss, the solver runs again on
``D' = max(D + lambda * dL/dA, 0)`` and ``dL/dD = -(A - A') / lambda``.
"""

from __future__ import annotations

import numpy as np

from tecb.adapt.training import (
    Phase,
    add_projection_head,
    chunked,
    embed,
    heads_of,
    hold_out,
    optimizer_settings,
    validation_score,
)

# COB §4 / Table 3 (20NG: lambda 90, r 1.0; instances of 50 documents) and the authors' released training code
# (batch of 1 instance, 1 epoch, 10 % linear warm-up, sentence-transformers' fit defaults: AdamW lr 2e-5, weight
# decay 0.01, gradient norm 1; max length: the SBERT default 128); the authors' model ends in Dense(256, tanh) after
# the pooling (projection_dim; 0: none). instance_size is read by the protocol code. The authors keep the epoch with
# the best validation score: validation_fraction of the training instances (training side only, never the evaluated
# data) are held out for it (0: no selection, the last epoch).
FIT_DEFAULTS = {  # the authors' sentence-transformers fit settings, COB's and its triplet baseline's
    "lr": 2e-5,
    "batch_size": 1,
    "epochs": 1,
    "max_length": 128,
    "warmup_ratio": 0.1,
    "weight_decay": 0.01,
    "max_grad_norm": 1.0,
}
DEFAULTS = {
    **FIT_DEFAULTS,
    "lambda_": 90.0,
    "regularization": 1.0,
    "instance_size": 50,
    "projection_dim": 256,
    "validation_fraction": 0.2,
    "head_lr": None,  # the added head's own learning rate (None: lr, the authors' one rate)
}


def hac_adjacency(distances: np.ndarray, n_clusters: int) -> np.ndarray:
    """The solver: HAC (average linkage) on a precomputed distance matrix; the adjacency matrix of its clusters."""
    from sklearn.cluster import AgglomerativeClustering

    labels = AgglomerativeClustering(n_clusters=int(n_clusters), metric="precomputed", linkage="average").fit_predict(
        np.asarray(distances, dtype=np.float64)
    )
    return (labels[:, None] == labels[None, :]).astype(np.float64)


def _blackbox():
    import torch

    class BlackboxClustering(torch.autograd.Function):
        """``D -> A`` by the solver; backward by one more solver call on the perturbed input."""

        @staticmethod
        def forward(ctx, distances, lambda_, n_clusters):
            d = distances.detach().cpu().double().numpy()
            adjacency = hac_adjacency(d, n_clusters)
            ctx.d, ctx.adjacency, ctx.lambda_, ctx.n_clusters = d, adjacency, float(lambda_), int(n_clusters)
            return torch.from_numpy(adjacency).to(distances.device, distances.dtype)

        @staticmethod
        def backward(ctx, grad_adjacency):
            g = grad_adjacency.detach().cpu().double().numpy()
            better = hac_adjacency(np.maximum(ctx.d + ctx.lambda_ * g, 0.0), ctx.n_clusters)
            grad = -(ctx.adjacency - better) / ctx.lambda_
            return torch.from_numpy(grad).to(grad_adjacency.device, grad_adjacency.dtype), None, None

    return BlackboxClustering


def gold_adjacency(labels) -> np.ndarray:
    labels = np.asarray(labels)
    return (labels[:, None] == labels[None, :]).astype(np.float64)


def euclidean_distances(x):
    """Pairwise Euclidean distances with a zero (and differentiable) diagonal."""
    import torch

    diff = x.unsqueeze(1) - x.unsqueeze(0)
    return torch.sqrt((diff * diff).sum(-1) + torch.eye(x.shape[0], device=x.device, dtype=x.dtype) * 1e-12 + 1e-12)


def cob_loss(embeddings, labels, lambda_: float, regularization: float):
    """The COB loss of one instance: ``sum |A - T|`` through the blackbox solver + ``r`` * (intra - inter) mean
    distance. ``embeddings``: (n, d) tensor; ``labels``: the instance's gold labels."""
    import torch

    t = torch.from_numpy(gold_adjacency(labels)).to(embeddings.device, torch.float32)
    n_clusters = len(set(labels))
    d = euclidean_distances(embeddings.float())
    a = _blackbox().apply(d, lambda_, n_clusters)
    error = (a * (1 - t) + (1 - a) * t).sum()  # = sum |A - T| for 0/1 matrices, linear in A
    intra = (d * t).sum() / t.sum()
    inter = (d * (1 - t)).sum() / (1 - t).sum().clamp(min=1)
    return error + regularization * (intra - inter)


def check_instances(instances, method: str) -> None:
    if not instances:
        raise ValueError(f"{method} needs labelled clustering instances (TrainingData.instances), got none")
    for i, (texts, labels) in enumerate(instances):
        if len(texts) != len(labels):
            raise ValueError(f"{method}: instance {i} has {len(texts)} texts but {len(labels)} labels")


def phases(*, model, data, settings: dict, rng, device: str) -> list[Phase]:
    check_instances(data.instances, "cob")
    instances, held_out = hold_out(
        [(list(t), list(y)) for t, y in data.instances], settings["validation_fraction"], rng
    )
    # an instance with one cluster (or one text) gives the solver nothing to decide: no gradient, skipped
    usable = [i for i, (t, y) in enumerate(instances) if len(t) > 2 and 1 < len(set(y)) < len(t)]
    if not usable:
        raise ValueError("cob: no instance has between 2 and n-1 clusters")
    head = add_projection_head(model, settings["projection_dim"], device)

    def batches(rng):
        return chunked([usable[i] for i in rng.permutation(len(usable))], int(settings["batch_size"]))

    def loss(batch):
        total = 0.0
        for i in batch:
            texts, labels = instances[i]
            total = total + cob_loss(
                embed(model, texts, device), labels, settings["lambda_"], settings["regularization"]
            )
        return total / len(batch)

    return [
        Phase(
            info={
                "instances": len(usable),
                "skipped_instances": len(instances) - len(usable),
                "validation_instances": len(held_out),
                **head,
            },
            name="cob",
            batches=batches,
            loss=loss,
            **optimizer_settings(settings),
            heads=heads_of(model),
            validate=(lambda: validation_score(model, held_out, device)) if held_out else None,
        )
    ]
