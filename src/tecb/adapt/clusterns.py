"""ClusterNS (Deng et al., 2023): SimCSE with clustering-aware negative sampling (Algorithm 1, Eq. 1-8).

In-batch k-means with cosine similarity: after a warm-up, K centroids are picked from a mini-batch by
farthest-first selection (each next centroid the sample least similar to the last one); at every later step each
sample joins its most similar centroid and the centroids move by momentum towards their members' mean (Eq. 7-8).
Each sample's second-nearest centroid is its hard negative (Eq. 2); the other in-batch samples of its own cluster
are false negatives, kept in the InfoNCE denominator as Eq. (2) writes it and constrained by the bidirectional
margin loss (Eq. 4-5); the objective is Eq. (6). The centroids carry no gradient (the authors' code detaches them).

K (``n_clusters``) and the threshold sigma (``similarity_threshold``) may be ``auto``: resolved once, at the first
training batch before any update (K: the paper's 4 texts per cluster of the batch, :func:`ratio_n_clusters`; sigma:
:func:`auto_threshold`). :func:`auto_n_clusters` (the best silhouette over k) is kept as a tool, no longer the rule:
on e5's title batches it chose K = 2, 16 texts per cluster.
"""

from __future__ import annotations

import numpy as np

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

#: the value of ``n_clusters`` / ``similarity_threshold`` resolved from the first training batch
AUTO = "auto"
#: k-means restarts per candidate k of :func:`auto_n_clusters`
AUTO_N_INIT = 4
#: texts per cluster of an ``auto`` K (:func:`ratio_n_clusters`): the authors' run, batch 512 with K 128 (their
#: Appendix A grid: batch 256 or 512, K 96, 128 or 256, i.e. 2 to 5.3 texts per cluster)
TEXTS_PER_CLUSTER = 4
#: how an ``auto`` value was chosen, as the job's record and Table 6's ``ran`` column say it
AUTO_RULES = {
    "n_clusters": f"batch / {TEXTS_PER_CLUSTER}, the paper's ratio",
    "similarity_threshold": "step-0 mean in-batch cosine",
}


def ratio_n_clusters(batch: int) -> int:
    """K ``auto``: the batch over :data:`TEXTS_PER_CLUSTER` (rounded half up), at least 2 (a second-nearest centroid)
    and at most the batch less one (a cluster of two: a false negative is possible): 8 at batch 32, 128 at 512."""
    if int(batch) < 3:
        raise ValueError(f"clusterns: n_clusters auto needs a batch of at least 3 texts, got {batch}")
    return min(max(2, int(np.floor(int(batch) / TEXTS_PER_CLUSTER + 0.5))), int(batch) - 1)


def off_diagonal_cosine(z1, z2=None) -> float:
    """The mean cosine of ``z1_i`` with ``z2_j`` over the pairs ``i != j`` (``z2`` None: ``z1`` itself): the
    in-batch cosine of different texts, the positive pairs on the diagonal left out."""
    sim = cosine_matrix(z1, z1 if z2 is None else z2)
    n = sim.shape[0]
    if n < 2:
        raise ValueError(f"an in-batch cosine needs at least 2 samples, got {n}")
    return float((sim.sum() - sim.diagonal().sum()) / (n * (n - 1)))


def auto_threshold(z1, z2=None) -> float:
    """sigma ``auto``: the step-0 batch's mean off-diagonal cosine (:func:`off_diagonal_cosine`), so that the
    start rule (the same statistic at most sigma) holds at step 0 and clustering starts there, as for a model
    already past SimCSE's uniformity phase."""
    return off_diagonal_cosine(z1, z2)


def silhouettes(z, *, k_max: int, seed: int, k_min: int = 2) -> dict[int, float | None]:
    """The cosine silhouette of k-means on the L2-normalised rows of ``z`` for each k in ``[k_min, k_max]`` (sklearn
    ``KMeans``, :data:`AUTO_N_INIT` restarts, ``random_state`` ``seed``, one thread: on a batch this small more
    threads only wait for each other); None where k-means found fewer than 2 or more than n - 1 distinct clusters
    (no silhouette)."""
    import warnings

    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score
    from threadpoolctl import threadpool_limits

    x = np.asarray(z.detach().float().cpu().numpy() if hasattr(z, "detach") else z, dtype=np.float64)
    x = x / np.linalg.norm(x, axis=1, keepdims=True).clip(min=1e-12)
    distances = np.clip(1.0 - x @ x.T, 0.0, 2.0)  # cosine distances, computed once for every k
    np.fill_diagonal(distances, 0.0)
    out = {}
    for k in range(int(k_min), int(k_max) + 1):
        with warnings.catch_warnings(), threadpool_limits(1):
            warnings.simplefilter("ignore")  # fewer distinct points than k: sklearn warns, the labels say it
            labels = KMeans(n_clusters=k, n_init=AUTO_N_INIT, random_state=int(seed)).fit_predict(x)
        found = len(np.unique(labels))
        valid = 2 <= found <= len(x) - 1
        out[k] = float(silhouette_score(distances, labels, metric="precomputed")) if valid else None
    return out


def best_k(scores: dict[int, float | None]) -> int:
    """The k of the best silhouette in ``scores`` (:func:`silhouettes`; scores equal to 10 decimals: the smaller
    k); 2 where no k has a silhouette."""
    rounded = {k: round(v, 10) for k, v in scores.items() if v is not None}
    if not rounded:
        return 2
    best = max(rounded.values())
    return min(k for k, v in rounded.items() if v == best)


def auto_n_clusters(z, *, k_max: int, seed: int) -> int:
    """K ``auto``: the k in ``[2, k_max]`` whose k-means on ``z`` has the best cosine silhouette (:func:`silhouettes`,
    ties: the smaller k, :func:`best_k`)."""
    return best_k(silhouettes(z, k_max=k_max, seed=seed))


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
    """The centroid state of Algorithm 1 (lines 3-7). ``n_clusters`` and ``similarity_threshold`` may be
    :data:`AUTO`: resolved at the first step from its batch (``seed``: the random state of :func:`auto_n_clusters`);
    an ``auto`` threshold is compared with the mean *off-diagonal* in-batch cosine (:func:`off_diagonal_cosine`, the
    statistic it was resolved from), a fixed one as before with the mean over all N x N view pairs."""

    def __init__(
        self, n_clusters, momentum: float, similarity_threshold, warmup_steps: int, *, seed: int | None = None
    ):
        self.k = AUTO if n_clusters == AUTO else int(n_clusters)
        self.threshold = AUTO if similarity_threshold == AUTO else float(similarity_threshold)
        self.momentum, self.warmup_steps = float(momentum), int(warmup_steps)
        self.off_diagonal = self.threshold == AUTO
        self.seed = seed
        self.auto: dict = {}  # how each auto setting was resolved (what the job's record says)
        self.centroids = None
        self.started_at = None
        if self.k == AUTO and seed is None:
            raise ValueError("n_clusters auto needs a seed (the random state of its k-means)")

    def state_dict(self) -> dict:
        """The centroids, the step clustering started at and K and sigma as resolved (what a resumed run puts
        back)."""
        return {
            "centroids": self.centroids,
            "started_at": self.started_at,
            "k": self.k,
            "threshold": self.threshold,
            "auto": self.auto,
        }

    def load_state_dict(self, state: dict) -> None:
        self.centroids, self.started_at = state["centroids"], state["started_at"]
        self.k, self.threshold, self.auto = state["k"], state["threshold"], dict(state["auto"])

    def report(self) -> dict:
        """What the job's record says about K and sigma: ``n_clusters`` (None while an auto K is unresolved),
        and for an auto setting how it was chosen (``n_clusters_auto``; ``similarity_threshold`` and
        ``similarity_threshold_auto``); a fixed sigma is not repeated (the settings hold it)."""
        out = {"n_clusters": None if self.k == AUTO else self.k}
        if "n_clusters" in self.auto:
            out["n_clusters_auto"] = self.auto["n_clusters"]
        if "similarity_threshold" in self.auto:
            out["similarity_threshold"] = round(self.threshold, 6)
            out["similarity_threshold_auto"] = self.auto["similarity_threshold"]
        return out

    def resolve(self, z1, z2) -> None:
        """K and sigma where ``auto``, from the first step's batch (its two views, no gradient, before any update):
        sigma by :func:`auto_threshold`, K by the paper's texts per cluster (:func:`ratio_n_clusters`) of the batch;
        the cosine silhouette of k-means at that K on the first view is recorded beside it (:func:`silhouettes`),
        a measure of how clustered the batch is, not a choice."""
        if self.threshold == AUTO:
            self.threshold = auto_threshold(z1, z2)
            self.auto["similarity_threshold"] = {"rule": AUTO_RULES["similarity_threshold"]}
        if self.k == AUTO:
            self.k = ratio_n_clusters(z1.shape[0])
            scores = silhouettes(z1, k_max=self.k, seed=self.seed, k_min=self.k)
            self.auto["n_clusters"] = {
                "rule": AUTO_RULES["n_clusters"],
                "batch": int(z1.shape[0]),
                "silhouette": None if scores.get(self.k) is None else round(scores[self.k], 6),
                "n_init": AUTO_N_INIT,
                "random_state": int(self.seed),
            }

    def step(self, z1, z2, t: int, rng):
        """Advance by one training step; return ``(labels, hard negatives)`` or ``None`` before clustering starts."""
        z1 = full_precision(z1.detach())
        if AUTO in (self.k, self.threshold):
            self.resolve(z1, full_precision(z2.detach()))
        if self.centroids is None:
            if self.off_diagonal:
                mean_cos = off_diagonal_cosine(z1, full_precision(z2.detach()))
            else:
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


def batch_kmeans(settings: dict, rng) -> BatchKMeans:
    """The in-batch k-means of ``settings`` (K and sigma numbers or :data:`AUTO`, checked here); an auto K's
    k-means random state is drawn from the job's generator ``rng`` (drawn only then: fixed K runs as before)."""
    for key in ("n_clusters", "similarity_threshold"):
        if isinstance(settings[key], str) and settings[key] != AUTO:
            raise ValueError(f"clusterns: {key} must be a number or {AUTO!r}, got {settings[key]!r}")
    if settings["n_clusters"] != AUTO and int(settings["n_clusters"]) < 2:
        raise ValueError(
            f"clusterns: n_clusters must be at least 2 (a second-nearest centroid), got {settings['n_clusters']}"
        )
    seed = int(rng.integers(2**31)) if settings["n_clusters"] == AUTO else None
    return BatchKMeans(
        settings["n_clusters"],
        settings["momentum"],
        settings["similarity_threshold"],
        settings["warmup_steps"],
        seed=seed,
    )


def phases(*, model, data, settings: dict, rng, device: str) -> list[Phase]:
    texts = list(data.texts)
    if len(texts) < 2:
        raise ValueError(f"clusterns needs at least 2 training texts, got {len(texts)}")
    ratio, crop_rng = view_maker(settings, rng)
    kmeans = batch_kmeans(settings, rng)
    counter = {"t": 0}
    # what ran: the first clustering step, k (and sigma, where auto: how they were resolved), and how many batches
    # had hard negatives (every clustered one) and false negatives (two samples of one cluster); without clustering
    # ClusterNS is plain SimCSE
    info = {
        "clustering_started_at": None,
        **kmeans.report(),
        "batches": 0,
        "batches_with_hard_negatives": 0,
        "batches_with_false_negatives": 0,
    }
    info["augmentation"] = settings["augmentation"]

    def loss(idx):
        z1, z2 = two_views(model, [texts[i] for i in idx], device, ratio, crop_rng)
        clusters = kmeans.step(z1, z2, counter["t"], rng)
        info["clustering_started_at"] = kmeans.started_at
        info.update(kmeans.report())
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
