"""Arms on frozen vectors (issue 54 items 1a, 3(i) and 4): a model's cached embeddings in, new embeddings out, for
the benchmark's own clustering and scoring. No encoder is trained; each arm is a plain function of NumPy arrays,
fitted on the data its protocol allows and applied to the evaluated texts' vectors.

- :func:`fit_whitening` / :func:`apply_whitening`: centring + whitening (Su et al., 2021: ``W = U diag(1/sqrt(s))``
  of the covariance ``U diag(s) U^T``, so that the fitted vectors' covariance is the identity); label-free.
- :func:`fit_all_but_the_top` / :func:`apply_all_but_the_top`: Mu & Viswanath (2018): the common mean and the top
  ``D`` principal directions removed; label-free.
- :func:`fit_self_training`: a DEC/SCCL-style head (Xie et al., 2016, Eq. 1-3; SCCL's clustering head): a linear map
  and K centroids trained to sharpen the Student-t soft assignment towards its target distribution; label-free.
- :func:`fit_label_head`: a head trained on labels with cross-entropy (``classifier``) or supervised contrastive
  loss (``supcon``, Khosla et al., 2020, Eq. 2), a fixed number of epochs and the last one kept (no selection).
  On the evaluated labels it is the positive control (a leak on purpose: a harness that scores it must show a large
  gain); on half of the categories (:func:`label_halves`), scored on the other half, it is a label-disjoint arm.
- :func:`fit_ridge_map` and :func:`fit_infonce_map`: a title's vector mapped toward its text's (title -> blurb),
  fitted on (title, text) pairs of books the benchmark never evaluates.

Every fitted arm is a :class:`Head`: ``head.transform(x)`` gives the new vectors (float64, rows as ``x``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

#: the arms the workflow runs, by name: what each fits on (``unlabelled``: the evaluated texts' vectors, no label;
#: ``labels``: the evaluated labels, a control; ``half_labels``: half of the categories; ``pairs``: unseen
#: (title, text) pairs) and how Table 6 names it
ARMS = {
    "whitening": ("unlabelled", "centring + whitening"),
    "all_but_the_top": ("unlabelled", "all-but-the-top"),
    "self_training": ("unlabelled", "DEC self-training head"),
    "label_head": ("labels", "label head (POSITIVE CONTROL: evaluated labels)"),
    "disjoint_supcon": ("half_labels", "SupCon head, label-disjoint"),
    "title_blurb_ridge": ("pairs", "title→blurb (ridge)"),
    "title_blurb_infonce": ("pairs", "title→blurb (InfoNCE head)"),
}


@dataclass
class Head:
    """A fitted arm: ``transform(x) = f((x - mean) @ weight + bias)`` with ``f`` the ReLU/tanh of ``activation``
    (``"none"``: linear), then, for ``project``, the removal of the rows' components along ``project``'s columns
    (all-but-the-top). ``info``: what the fit reports (its loss at the start and end, epochs, ...)."""

    mean: np.ndarray
    weight: np.ndarray | None = None
    bias: np.ndarray | None = None
    activation: str = "none"
    project: np.ndarray | None = None
    info: dict = field(default_factory=dict)

    def transform(self, x) -> np.ndarray:
        z = np.asarray(x, dtype=np.float64) - self.mean
        if self.project is not None:
            z = z - (z @ self.project) @ self.project.T
        if self.weight is not None:
            z = z @ self.weight
        if self.bias is not None:
            z = z + self.bias
        if self.activation == "tanh":
            z = np.tanh(z)
        elif self.activation == "relu":
            z = np.maximum(z, 0.0)
        return z


def _matrix(x, name: str = "x") -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or len(x) < 2:
        raise ValueError(f"{name}: a matrix of at least 2 vectors is needed, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name}: has values that are not finite")
    return x


# --- label-free --------------------------------------------------------------------------------------------------


def fit_whitening(x, *, n_components: int | None = None, eps: float = 1e-9) -> Head:
    """Centring + whitening fitted on ``x``: ``(x - mu) @ U[:, :k] diag(1 / sqrt(s[:k]))`` with ``U diag(s) U^T`` the
    covariance of ``x`` (``n_components`` k: the top k directions, None: every direction whose variance exceeds
    ``eps`` times the largest), so that the fitted vectors' covariance is the identity (of size k)."""
    x = _matrix(x)
    mean = x.mean(axis=0)
    cov = np.cov(x - mean, rowvar=False, bias=True)
    s, u = np.linalg.eigh(cov)
    order = np.argsort(s)[::-1]
    s, u = s[order], u[:, order]
    keep = int(np.sum(s > eps * max(s[0], 0.0))) if n_components is None else int(n_components)
    if not 1 <= keep <= len(s) or s[keep - 1] <= 0:
        raise ValueError(f"whitening: {keep} components asked, the covariance has {int(np.sum(s > 0))} above 0")
    weight = u[:, :keep] / np.sqrt(s[:keep])
    return Head(mean=mean, weight=weight, info={"components": keep})


def fit_all_but_the_top(x, *, n_components: int) -> Head:
    """Mu & Viswanath's post-processing fitted on ``x``: ``x - mu`` less its projection on the top ``n_components``
    principal directions of ``x - mu`` (their rule of thumb: D about d / 100)."""
    x = _matrix(x)
    d = int(n_components)
    if not 0 <= d < x.shape[1]:
        raise ValueError(f"all_but_the_top: n_components must be in [0, {x.shape[1]}), got {n_components}")
    mean = x.mean(axis=0)
    _, _, vt = np.linalg.svd(x - mean, full_matrices=False)
    return Head(mean=mean, project=vt[:d].T, info={"components_removed": d})


def default_top(dim: int) -> int:
    """Mu & Viswanath's D for vectors of ``dim`` dimensions: about ``dim / 100``, at least 1."""
    return max(1, int(round(dim / 100)))


# --- trained heads -----------------------------------------------------------------------------------------------


def _torch_setup(seed: int):
    import torch

    torch.manual_seed(int(seed))
    return torch


def _linear(torch, d_in: int, d_out: int, *, identity: bool = False):
    layer = torch.nn.Linear(d_in, d_out).double()
    if identity:
        with torch.no_grad():
            layer.weight.copy_(torch.eye(d_out, d_in, dtype=torch.float64))
            layer.bias.zero_()
    return layer


def _head_of(mean, layer, activation: str, info: dict) -> Head:
    return Head(
        mean=mean,
        weight=layer.weight.detach().numpy().T.copy(),
        bias=layer.bias.detach().numpy().copy(),
        activation=activation,
        info=info,
    )


def supcon_loss(z, labels, temperature: float):
    """Khosla et al.'s supervised contrastive loss (Eq. 2, ``L_out``), on the L2-normalised rows of ``z``: for each
    anchor with at least one positive, ``-1/|P(i)| sum_p log(exp(z_i.z_p / t) / sum_{a != i} exp(z_i.z_a / t))``,
    averaged over those anchors."""
    import torch

    z = torch.nn.functional.normalize(z, dim=1)
    logits = z @ z.T / float(temperature)
    n = z.shape[0]
    eye = torch.eye(n, dtype=torch.bool)
    logits = logits.masked_fill(eye, float("-inf"))
    log_prob = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    positive = (labels.unsqueeze(0) == labels.unsqueeze(1)) & ~eye
    counts = positive.sum(1)
    has = counts > 0
    if not bool(has.any()):
        return z.sum() * 0.0
    per_anchor = -(log_prob.masked_fill(~positive, 0.0).sum(1)[has]) / counts[has]
    return per_anchor.mean()


@dataclass(frozen=True)
class HeadTraining:
    """A label head's training settings (:func:`fit_label_head`): ``dim`` outputs, Adam at ``lr`` for ``epochs``
    epochs of ``batch_size`` mini-batches, ``temperature`` for :func:`supcon_loss`."""

    dim: int = 256
    epochs: int = 100
    lr: float = 1e-3
    batch_size: int = 256
    temperature: float = 0.1


def fit_label_head(
    x, labels: Sequence, *, kind: str = "supcon", training: HeadTraining = HeadTraining(), seed: int
) -> Head:
    """A head ``tanh(W (x - mu) + b)`` of ``training.dim`` outputs trained on ``labels`` (``kind``: ``classifier``,
    its outputs fed to a linear classifier under cross-entropy; ``supcon``, :func:`supcon_loss` on its outputs) with
    Adam for ``training.epochs`` epochs of seeded mini-batches, the last epoch kept (no selection, nothing held out)."""
    dim, epochs, lr, batch_size = training.dim, training.epochs, training.lr, training.batch_size
    temperature = training.temperature
    if kind not in ("classifier", "supcon"):
        raise ValueError(f"label head kind must be classifier or supcon, got {kind!r}")
    x = _matrix(x)
    if len(labels) != len(x):
        raise ValueError(f"label head: {len(x)} vectors but {len(labels)} labels")
    names, y = np.unique(np.asarray(labels, dtype=object).astype(str), return_inverse=True)
    if len(names) < 2:
        raise ValueError("label head: at least 2 labels are needed")
    torch = _torch_setup(seed)
    mean = x.mean(axis=0)
    xt = torch.from_numpy(x - mean)
    yt = torch.from_numpy(y.astype(np.int64))
    layer = _linear(torch, x.shape[1], int(dim))
    classifier = _linear(torch, int(dim), len(names)) if kind == "classifier" else None
    params = list(layer.parameters()) + (list(classifier.parameters()) if classifier is not None else [])
    optimizer = torch.optim.Adam(params, lr=float(lr))
    rng = np.random.default_rng(seed)

    def loss_of(idx):
        z = torch.tanh(layer(xt[idx]))
        if classifier is not None:
            return torch.nn.functional.cross_entropy(classifier(z), yt[idx])
        return supcon_loss(z, yt[idx], temperature)

    losses = _fit(torch, optimizer, loss_of, len(x), epochs, batch_size, rng)
    info = {"kind": kind, "labels": len(names), "epochs": int(epochs), "loss_start": losses[0], "loss_end": losses[-1]}
    return _head_of(mean, layer, "tanh", info)


def _fit(torch, optimizer, loss_of, n: int, epochs: int, batch_size: int, rng) -> list[float]:
    """Seeded mini-batch epochs of ``loss_of(index array)``; the full-data loss before the first and after the last."""
    everything = np.arange(n)
    with torch.no_grad():
        losses = [float(loss_of(everything))]
    for _ in range(int(epochs)):
        _fit_epoch(optimizer, loss_of, n, batch_size, rng)
    with torch.no_grad():
        losses.append(float(loss_of(everything)))
    return [round(v, 6) for v in losses]


def label_halves(labels: Sequence, *, seed: int) -> tuple[list[str], list[str]]:
    """The categories of ``labels`` cut into two halves by ``seed`` (sorted names, a seeded permutation): the first
    trains a label-disjoint head, the second is evaluated."""
    names = sorted({str(v) for v in labels})
    if len(names) < 4:
        raise ValueError(f"label_halves: at least 4 categories are needed, got {len(names)}")
    order = np.random.default_rng(seed).permutation(len(names))
    half = len(names) // 2
    return sorted(names[i] for i in order[:half]), sorted(names[i] for i in order[half:])


def student_t_assignment(z, centroids, alpha: float = 1.0):
    """DEC Eq. (1): ``q_ij = (1 + |z_i - mu_j|^2 / alpha)^(-(alpha + 1) / 2)``, normalised over j."""
    import torch

    d2 = torch.cdist(z, centroids) ** 2
    q = (1.0 + d2 / alpha) ** (-(alpha + 1.0) / 2.0)
    return q / q.sum(1, keepdim=True)


def target_distribution(q):
    """DEC Eq. (3): ``p_ij = (q_ij^2 / f_j) / sum_j' (q_ij'^2 / f_j')``, ``f_j = sum_i q_ij``."""
    weight = q**2 / q.sum(0)
    return weight / weight.sum(1, keepdim=True)


def fit_self_training(
    x,
    *,
    n_clusters: int,
    epochs: int = 50,
    lr: float = 1e-3,
    batch_size: int = 256,
    update_every: int = 1,
    seed: int,
) -> Head:
    """A DEC/SCCL-style clustering head on unlabelled vectors: ``z = W (x - mu) + b`` (started at the identity) and
    ``n_clusters`` centroids (started by k-means on the centred vectors) trained to lower ``KL(P || Q)`` (DEC Eq. 2),
    Q the Student-t assignment (:func:`student_t_assignment`), P its sharpened target (:func:`target_distribution`)
    recomputed on all vectors every ``update_every`` epochs; the last epoch kept. No label is read."""
    x = _matrix(x)
    if not 2 <= int(n_clusters) < len(x):
        raise ValueError(f"self_training: n_clusters must be in [2, {len(x)}), got {n_clusters}")
    torch, mean, xt, layer, centroids = _self_training_start(x, n_clusters, seed)
    optimizer = torch.optim.Adam(list(layer.parameters()) + [centroids], lr=float(lr))
    rng = np.random.default_rng(seed)
    target = {}

    def refresh():
        with torch.no_grad():
            target["p"] = target_distribution(student_t_assignment(layer(xt), centroids))

    def loss_of(idx):
        q = student_t_assignment(layer(xt[idx]), centroids)
        p = target["p"][idx]
        return (p * (torch.log(p) - torch.log(q))).sum(1).mean()

    def confidence() -> float:  # the mean largest soft assignment: how sharp the clusters are
        with torch.no_grad():
            return round(float(student_t_assignment(layer(xt), centroids).max(1).values.mean()), 6)

    refresh()
    first = confidence()
    for epoch in range(int(epochs)):
        if epoch and epoch % int(update_every) == 0:
            refresh()
        _fit_epoch(optimizer, loss_of, len(x), batch_size, rng)
    info = {
        "n_clusters": int(n_clusters),
        "epochs": int(epochs),
        "confidence_start": first,
        "confidence_end": confidence(),
    }
    return _head_of(mean, layer, "none", info)


def _self_training_start(x: np.ndarray, n_clusters: int, seed: int):
    """A self-training head's start: ``(torch, mean, centred vectors, identity map, k-means centroids)``."""
    from sklearn.cluster import KMeans

    torch = _torch_setup(seed)
    mean = x.mean(axis=0)
    xt = torch.from_numpy(x - mean)
    layer = _linear(torch, x.shape[1], x.shape[1], identity=True)
    start = KMeans(n_clusters=int(n_clusters), n_init=10, random_state=int(seed)).fit(x - mean).cluster_centers_
    centroids = torch.nn.Parameter(torch.from_numpy(start.copy()))
    return torch, mean, xt, layer, centroids


def _fit_epoch(optimizer, loss_of, n: int, batch_size: int, rng) -> None:
    order = rng.permutation(n)
    for start in range(0, n, int(batch_size)):
        idx = order[start : start + int(batch_size)]
        if len(idx) < 2:
            continue
        optimizer.zero_grad()
        loss_of(idx).backward()
        optimizer.step()


# --- title -> text -----------------------------------------------------------------------------------------------


def fit_ridge_map(titles, texts, *, alpha: float = 1.0) -> Head:
    """Ridge regression from a title's vector to its text's: ``W = (Xc^T Xc + alpha I)^-1 Xc^T Yc`` on the centred
    pairs, ``b = mean(Y)``; ``transform(title vectors)`` predicts where their texts' vectors lie."""
    x, y = _matrix(titles, "titles"), _matrix(texts, "texts")
    if len(x) != len(y):
        raise ValueError(f"ridge map: {len(x)} titles but {len(y)} texts")
    mx, my = x.mean(axis=0), y.mean(axis=0)
    xc, yc = x - mx, y - my
    weight = np.linalg.solve(xc.T @ xc + float(alpha) * np.eye(x.shape[1]), xc.T @ yc)
    residual = float(np.mean(np.sum((xc @ weight - yc) ** 2, axis=1)))
    return Head(
        mean=mx, weight=weight, bias=my, info={"alpha": float(alpha), "pairs": len(x), "mse": round(residual, 6)}
    )


def info_nce(queries, keys, temperature: float):
    """In-batch InfoNCE of L2-normalised ``queries`` against their own row of ``keys`` (the other rows: negatives)."""
    import torch

    q = torch.nn.functional.normalize(queries, dim=1)
    k = torch.nn.functional.normalize(keys, dim=1)
    logits = q @ k.T / float(temperature)
    return torch.nn.functional.cross_entropy(logits, torch.arange(len(q)))


def fit_infonce_map(
    titles,
    texts,
    *,
    epochs: int = 20,
    lr: float = 1e-3,
    batch_size: int = 256,
    temperature: float = 0.05,
    seed: int,
) -> Head:
    """A linear map (started at the identity) of title vectors trained by in-batch InfoNCE to find each title's own
    text vector among the batch's (the texts' vectors fixed): E5's own pre-training signal, on frozen vectors."""
    x, y = _matrix(titles, "titles"), _matrix(texts, "texts")
    if len(x) != len(y) or x.shape[1] != y.shape[1]:
        raise ValueError(f"InfoNCE map: titles {x.shape} and texts {y.shape} must pair row by row, one width")
    torch = _torch_setup(seed)
    mean = np.zeros(x.shape[1])
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    layer = _linear(torch, x.shape[1], y.shape[1], identity=True)
    optimizer = torch.optim.Adam(layer.parameters(), lr=float(lr))
    rng = np.random.default_rng(seed)

    def loss_of(idx):
        return info_nce(layer(xt[idx]), yt[idx], temperature)

    losses = _fit(torch, optimizer, loss_of, len(x), epochs, batch_size, rng)
    info = {"pairs": len(x), "epochs": int(epochs), "loss_start": losses[0], "loss_end": losses[-1]}
    return _head_of(mean, layer, "none", info)
