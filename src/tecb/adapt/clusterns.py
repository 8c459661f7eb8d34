"""ClusterNS (Deng et al., 2023): SimCSE with clustering-aware negative sampling (Algorithm 1, Eq. 1-8).

In-batch k-means with cosine similarity: after a warm-up, K centroids are picked from a mini-batch by
farthest-first selection (each next centroid the sample least similar to the last one); at every later step each
sample joins its most similar centroid and the centroids move by momentum towards their members' mean (Eq. 7-8).
Each sample's second-nearest centroid is its hard negative (Eq. 2); the other in-batch samples of its own cluster
are false negatives, kept in the InfoNCE denominator as Eq. (2) writes it and constrained by the bidirectional
margin loss (Eq. 4-5); the objective is Eq. (6). The centroids carry no gradient (the authors' code detaches them).
"""

from __future__ import annotations

from tecb.adapt import simcse
from tecb.adapt.simcse import (
    cosine_matrix,
    full_precision,
    infonce_loss,
    phase_settings,
    text_batches,
    two_views,
    view_maker,
)
from tecb.adapt.training import Phase

# ClusterNS Appendix A (grid) with the values of the authors' released run script (run_non_prompt.sh: 2 GPUs x
# 256 = total batch 512, lr 5e-5, K 128, similarity threshold 0.4, L_bml weight 1e-4, alpha 0.2, beta 0.5, max
# length 32, 1 epoch; its train.py: temperature 0.05, momentum gamma 1e-3, hard-negative weight mu 1 (logit 0)).
# Clustering starts at the first step >= warmup_steps whose mean in-batch cosine is <= similarity_threshold (the
# paper's "a few steps after the training starts"; the authors' code uses the threshold alone: warmup_steps 0). L_bml
# is averaged over all N x N entries as the authors' code does (bml_reduction all_pairs; false_negatives: over the
# false-negative pairs only).
# min_steps as SimCSE's (the two are compared at one budget): ClusterNS needs steps to reach its threshold and cluster.
DEFAULTS = {
    **simcse.DEFAULTS,  # SimCSE's, in its order, but for:
    "lr": 5e-5,
    "batch_size": 512,
    "n_clusters": 128,
    "momentum": 1e-3,
    "hard_negative_weight": 1.0,
    "bml_weight": 1e-4,
    "bml_alpha": 0.2,
    "bml_beta": 0.5,
    "similarity_threshold": 0.4,
    "warmup_steps": 0,
    "bml_reduction": "all_pairs",
}


def farthest_first(z, k: int, first: int) -> list[int]:
    """Indices of ``k`` rows of ``z`` as initial centroids: ``first``, then each time the not yet chosen row least
    (cosine) similar to the last chosen one (ClusterNS §3.3, Centroids Initialization)."""
    import torch

    if k > z.shape[0]:
        raise ValueError(f"n_clusters {k} exceeds the batch of {z.shape[0]}")
    sim = cosine_matrix(z, z)
    chosen = [int(first)]
    for _ in range(1, k):
        row = sim[chosen[-1]].clone()
        row[chosen] = torch.inf
        chosen.append(int(torch.argmin(row)))
    return chosen


def assign(z, centroids):
    """Each sample's cluster: its most cosine-similar centroid."""
    return cosine_matrix(z, centroids).argmax(dim=1)


def momentum_update(centroids, z, labels, momentum: float):
    """Eq. (7)-(8): ``c_i <- (1 - gamma) c_i + gamma * mean of C_i``; a centroid without members stays."""
    import torch

    k = centroids.shape[0]
    onehot = torch.nn.functional.one_hot(labels, k).to(z.dtype)  # (N, K)
    counts = onehot.sum(0)
    means = (onehot.T @ z) / counts.clamp(min=1).unsqueeze(1)
    moved = (1 - momentum) * centroids + momentum * means
    return torch.where((counts > 0).unsqueeze(1), moved, centroids)


def hard_negative_index(z, centroids):
    """Each sample's second most similar centroid (c_i2, ClusterNS §3.2, Hard Negatives)."""
    return cosine_matrix(z, centroids).topk(2, dim=1).indices[:, 1]


def false_negative_mask(labels):
    """``mask[i, j]``: j != i is in i's cluster (x_i^*, the false negatives of x_i)."""
    import torch

    same = labels.unsqueeze(0) == labels.unsqueeze(1)
    return same & ~torch.eye(len(labels), dtype=torch.bool, device=labels.device)


BML_REDUCTIONS = ("all_pairs", "false_negatives")


def bml_loss(z1, z2, mask, alpha: float, beta: float, reduction: str = "all_pairs"):
    """Eq. (4)-(5): ``Delta_ij = cos(x_i, x_j^+) - cos(x_i, x_i^+)``, ``ReLU(Delta + alpha) + ReLU(-Delta - beta)``.

    ``all_pairs`` (the authors' code): Delta is multiplied by the false-negative ``mask`` and the term averaged over
    all N x N entries, so an entry outside the mask adds the constant ``ReLU(alpha) + ReLU(-beta)`` and no gradient;
    the gradient of each false-negative pair is divided by N^2. ``false_negatives``: the mean over the mask's pairs
    only (0 without any), N^2 / |mask| times stronger."""
    import torch

    if reduction not in BML_REDUCTIONS:
        raise ValueError(f"bml_reduction {reduction!r} is not one of {', '.join(BML_REDUCTIONS)}")
    cos = cosine_matrix(z1, z2)
    delta = cos - cos.diagonal().unsqueeze(1)
    if reduction == "all_pairs":
        delta = delta * mask.to(delta.dtype)
        return (torch.relu(delta + alpha) + torch.relu(-delta - beta)).mean()
    delta = delta[mask]
    if delta.numel() == 0:
        return cos.sum() * 0.0
    return (torch.relu(delta + alpha) + torch.relu(-delta - beta)).mean()


class BatchKMeans:
    """The centroid state of Algorithm 1 (lines 3-7)."""

    def __init__(self, n_clusters: int, momentum: float, similarity_threshold: float, warmup_steps: int):
        self.k, self.momentum = int(n_clusters), float(momentum)
        self.threshold, self.warmup_steps = float(similarity_threshold), int(warmup_steps)
        self.centroids = None
        self.started_at = None

    def state_dict(self) -> dict:
        """The centroids and the step clustering started at (what a resumed run puts back)."""
        return {"centroids": self.centroids, "started_at": self.started_at}

    def load_state_dict(self, state: dict) -> None:
        self.centroids, self.started_at = state["centroids"], state["started_at"]

    def step(self, z1, z2, t: int, rng):
        """Advance by one training step; return ``(labels, hard negatives)`` or ``None`` before clustering starts."""
        z1 = full_precision(z1.detach())
        if self.centroids is None:
            mean_cos = float(cosine_matrix(z1, z2.detach()).mean())
            if t >= self.warmup_steps and mean_cos <= self.threshold and z1.shape[0] >= self.k:
                self.centroids = z1[farthest_first(z1, self.k, int(rng.integers(z1.shape[0])))].clone()
                self.started_at = t
            return None  # line 3-5: initialise only; clustering from the next step (t > S)
        self.centroids = momentum_update(self.centroids, z1, assign(z1, self.centroids), self.momentum)
        labels = assign(z1, self.centroids)
        return labels, self.centroids[hard_negative_index(z1, self.centroids)]


def clusterns_loss(z1, z2, clusters, settings: dict):
    """Eq. (6) given the clustering of this step (``None``: plain SimCSE, Eq. 1)."""
    if clusters is None:
        return infonce_loss(z1, z2, settings["temperature"])
    labels, hard = clusters
    contrastive = infonce_loss(z1, z2, settings["temperature"], hard=hard, hard_weight=settings["hard_negative_weight"])
    bml = bml_loss(
        z1, z2, false_negative_mask(labels), settings["bml_alpha"], settings["bml_beta"], settings["bml_reduction"]
    )
    return contrastive + settings["bml_weight"] * bml


def phases(*, model, data, settings: dict, rng, device: str) -> list[Phase]:
    texts = list(data.texts)
    if len(texts) < 2:
        raise ValueError(f"clusterns needs at least 2 training texts, got {len(texts)}")
    if int(settings["n_clusters"]) < 2:
        raise ValueError(
            f"clusterns: n_clusters must be at least 2 (a second-nearest centroid), got {settings['n_clusters']}"
        )
    kmeans = BatchKMeans(
        settings["n_clusters"], settings["momentum"], settings["similarity_threshold"], settings["warmup_steps"]
    )
    counter = {"t": 0}
    # what ran: the first clustering step, k, and how many batches had hard negatives (every clustered one) and
    # false negatives (two samples of one cluster); without clustering ClusterNS is plain SimCSE
    info = {
        "clustering_started_at": None,
        "n_clusters": int(settings["n_clusters"]),
        "batches": 0,
        "batches_with_hard_negatives": 0,
        "batches_with_false_negatives": 0,
    }

    ratio, crop_rng = view_maker(settings, rng)
    info["augmentation"] = settings["augmentation"]

    def loss(idx):
        z1, z2 = two_views(model, [texts[i] for i in idx], device, ratio, crop_rng)
        clusters = kmeans.step(z1, z2, counter["t"], rng)
        info["clustering_started_at"] = kmeans.started_at
        info["batches"] += 1
        if clusters is not None:
            info["batches_with_hard_negatives"] += 1
            info["batches_with_false_negatives"] += int(bool(false_negative_mask(clusters[0]).any()))
        counter["t"] += 1
        return clusterns_loss(z1, z2, clusters, settings)

    return [
        Phase(
            info=info,
            name="clusterns",
            batches=text_batches(len(texts), settings["batch_size"]),
            loss=loss,
            state=[kmeans, counter] + ([crop_rng] if crop_rng is not None else []),  # put back in a resumed run
            **phase_settings(settings),
        )
    ]
