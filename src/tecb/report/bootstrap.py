"""A text-level bootstrap over saved predictions (issue 53, item 2, second option).

The texts of a dataset's pool (its unique text ids) are resampled with replacement; in each replicate every
split's V-measure is recomputed from the FIXED predicted clusters and true labels of its texts, each text
weighted by how often the replicate drew it (a weighted contingency table), and averaged over splits as the
tables do. A contrast is paired: both sides (model A and B, a method's seeds and its base) see the same
replicate, so what the two share through their texts cancels. No linear model and no overlap factor: the
splits' overlap is in the replicates, since a text drawn twice counts twice in every split that holds it.

What the replicates cannot see, because the predictions are held fixed, is added beside them
(:func:`contrast_test`): the split-level noise (the clustering's own noise and the draw of a split's texts),
independent across splits, per split kind the larger of the restarts' variance / R (each split's states; R >
1) and the kind's spread of per-split differences less the spread the text replicates already explain (method
of moments; at R = 1 the only estimate); and for a side with several training seeds the variance of its mean
over seeds that the replicates and restarts do not explain (method of moments, seeds - 1 degrees of freedom). The interval and p are a t with Welch-Satterthwaite degrees of
freedom over these parts (:func:`tecb.report.stats._decide`), so p < 1 - confidence exactly when the interval
excludes 0, and p is never 0. docs/statistics.md says why.

Not seen by the replicates: how k-means' partition itself moves when the pool of texts changes (its centres are
fitted on the texts), which splits that share texts share (the clustering response; benchmarks/measurement_diagnosis.md
measures it). ``response=True`` adds an estimate of it where the restarts are known (:func:`_response_parts`);
the tables use it (the default; at R = 1 it changes nothing). docs/statistics.md says how narrow the interval reads without it.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tecb.report import stats

#: the tables' scale: V-measure x 100
SCALE = 100.0


#: replicates drawn and tabulated at a time (:func:`resample_weights`, :func:`split_scores`): bounds their
#: replicates x texts arrays (issue 56); no number depends on it
BLOCK = 50


def v_measure_tables(tables: np.ndarray) -> np.ndarray:
    """V-measure of each weighted contingency table of ``tables`` (... x labels x clusters), as scikit-learn's
    ``v_measure_score`` for integer counts (homogeneity 1 with one label, completeness 1 with one cluster)."""
    from scipy.special import xlogy

    t = np.asarray(tables, dtype=float)
    n = t.sum(axis=(-2, -1))
    safe = np.where(n > 0, n, 1.0)
    pl, pc = t.sum(-1) / safe[..., None], t.sum(-2) / safe[..., None]
    h_l, h_c = -xlogy(pl, pl).sum(-1), -xlogy(pc, pc).sum(-1)
    joint = t / safe[..., None, None]
    outer = pl[..., :, None] * pc[..., None, :]
    mutual = np.where(joint > 0, xlogy(joint, joint) - xlogy(joint, np.where(outer > 0, outer, 1.0)), 0.0)
    mutual = np.maximum(mutual.sum(axis=(-2, -1)), 0.0)
    eps = 1e-12
    hom = np.where(h_l > eps, mutual / np.where(h_l > eps, h_l, 1.0), 1.0)
    com = np.where(h_c > eps, mutual / np.where(h_c > eps, h_c, 1.0), 1.0)
    total = hom + com
    return np.where(total > 0, 2 * hom * com / np.where(total > 0, total, 1.0), 0.0)


def _codes(values) -> tuple[np.ndarray, int]:
    _, codes = np.unique(np.asarray(values), return_inverse=True)
    return codes.ravel(), int(codes.max()) + 1 if codes.size else 0


def split_scores(weights: np.ndarray, *, members: np.ndarray, labels, clusters) -> np.ndarray:
    """One split's V-measure under each replicate's text ``weights`` (replicates x pool texts): ``members``
    are the split's texts as positions in the pool, ``labels`` their true labels, ``clusters`` their predicted
    clusters (states x texts, or one row). Returns the states' mean per replicate and each state's value
    under unit weights (the observed scores)."""
    members = np.asarray(members)
    lab, n_lab = _codes(labels)
    states = np.atleast_2d(np.asarray(clusters))
    if states.shape[1] != members.size or lab.size != members.size:
        raise ValueError(f"a split of {members.size} texts has {lab.size} labels and {states.shape[1]} clusters")
    w = np.asarray(weights)
    values = np.empty((states.shape[0], w.shape[0] + 1))  # column 0: the observed (unit) weights
    for s, row in enumerate(states):
        clu, n_clu = _codes(row)
        cells = n_lab * n_clu
        cell = lab * n_clu + clu
        table = np.empty((w.shape[0] + 1, cells))
        table[0] = np.bincount(cell, weights=np.ones(members.size), minlength=cells)
        # BLOCK replicates at a time: each cell sums the same weights in the same order as all at once would
        for start in range(0, w.shape[0], BLOCK):
            block = np.asarray(w[start : start + BLOCK][:, members], dtype=float)
            flat = (np.arange(block.shape[0])[:, None] * cells + cell[None, :]).ravel()
            counts = np.bincount(flat, weights=block.ravel(), minlength=block.shape[0] * cells)
            table[1 + start : 1 + start + block.shape[0]] = counts.reshape(block.shape[0], cells)
        values[s] = v_measure_tables(table.reshape(w.shape[0] + 1, n_lab, n_clu))
    return values[:, 1:].mean(axis=0), values[:, 0]


def resample_weights(pool: int, *, n_resamples: int, seed: int | Sequence[int]) -> np.ndarray:
    """Multinomial bootstrap weights (``n_resamples`` x ``pool``): how often each of the pool's texts is drawn
    when ``pool`` texts are drawn with replacement."""
    rng = np.random.default_rng(seed)
    out, p = np.empty((n_resamples, pool)), np.full(pool, 1.0 / pool)
    for start in range(0, n_resamples, BLOCK):  # the same draws as all at once, without their int64 copy
        out[start : start + BLOCK] = rng.multinomial(pool, p, size=min(BLOCK, n_resamples - start))
    return out


@dataclass(frozen=True)
class Replicates:
    """One side's cells (its seeds x its splits) under the replicates of one pool: ``boot`` replicates x seeds x
    splits, ``observed`` seeds x splits (unit weights), ``noise`` the restarts' variance / R of each cell (NaN
    at one state), all V-measure x :data:`SCALE`. Sides computed with the same weights pair column by column."""

    boot: np.ndarray
    observed: np.ndarray
    noise: np.ndarray

    def columns(self, keep) -> Replicates:
        """These cells on the splits ``keep`` (positions or a mask)."""
        return Replicates(boot=self.boot[..., keep], observed=self.observed[:, keep], noise=self.noise[:, keep])


def replicates(side: Sequence, *, members: Sequence, labels: Sequence, weights: np.ndarray) -> Replicates:
    """:class:`Replicates` of ``side`` (per seed, per split the predicted clusters, states x texts) on the splits
    ``members`` (positions in the pool) with true ``labels``, under ``weights`` (:func:`resample_weights`)."""
    seeds = len(side)
    if not seeds:
        raise ValueError("a side has no seeds")
    boot = np.empty((weights.shape[0], seeds, len(members)))
    observed, noise = np.empty((seeds, len(members))), np.full((seeds, len(members)), np.nan)
    for i, per_split in enumerate(side):
        if len(per_split) != len(members):
            raise ValueError(f"{len(members)} splits but predictions for {len(per_split)}")
        for j, (m, y, c) in enumerate(zip(members, labels, per_split)):
            boot[:, i, j], states = split_scores(weights, members=m, labels=y, clusters=c)
            observed[i, j] = states.mean()
            if states.size > 1:
                noise[i, j] = states.var(ddof=1) / states.size
    return Replicates(boot=boot * SCALE, observed=observed * SCALE, noise=noise * SCALE**2)


def _positions(texts: Sequence) -> tuple[list[np.ndarray], int]:
    """Each split's texts as positions in the pool (the union of every split's text ids)."""
    pool = {t: i for i, t in enumerate(dict.fromkeys(t for split in texts for t in np.asarray(split).tolist()))}
    return [np.array([pool[t] for t in np.asarray(split).tolist()], dtype=int) for split in texts], len(pool)


def _split_kinds(strata, n_splits: int) -> np.ndarray:
    """Each split's kind (``strata``; None: one kind), checked against the number of splits."""
    kinds = np.asarray(list(strata) if strata is not None else [None] * n_splits, dtype=object)
    if kinds.size != n_splits:
        raise ValueError(f"{n_splits} splits but {kinds.size} split kinds")
    return kinds


def _split_noise(diff_boot, diff, restart_noise, strata) -> list[tuple[float, float]]:
    """Per split kind: (contribution to the variance of the mean over splits, df) of the noise independent
    across splits: the larger of the restarts' variance / R and the kind's spread less what the replicates
    explain."""
    n_splits = diff.size
    kinds = _split_kinds(strata, n_splits)
    centred = diff_boot - diff_boot.mean(axis=0)
    parts = []
    for kind in dict.fromkeys(kinds.tolist()):
        idx = np.flatnonzero(kinds == kind)
        weight = idx.size / n_splits
        restarts = float(np.mean(restart_noise[idx])) if np.all(np.isfinite(restart_noise[idx])) else np.nan
        if idx.size < 2:
            if np.isfinite(restarts):
                parts.append((weight**2 * restarts / idx.size, 1e6))
            continue
        spread = float(diff[idx].var(ddof=1))
        explained = float(centred[:, idx].var(axis=1, ddof=1).mean())
        residual = max(spread - explained, 0.0)
        if np.isfinite(restarts) and restarts >= residual:
            parts.append((weight**2 * restarts / idx.size, 1e6))
        else:
            parts.append((weight**2 * residual / idx.size, idx.size - 1.0))
    return parts


def contrast_test(
    a: Sequence,
    b: Sequence | None,
    *,
    texts: Sequence,
    labels: Sequence,
    strata=None,
    confidence: float = 0.95,
    response: bool = True,
    **draws,
) -> stats.MeanTest:
    """The paired text-level bootstrap test of the mean over splits of ``a`` minus ``b`` (module docstring).

    ``texts``, ``labels``: per split its text ids and true labels; ``a``, ``b``: per training seed (one for a
    plain model) per split the predicted clusters of those texts (states x texts, or one row); ``b`` None:
    ``a``'s level against 0 (a table cell). ``strata``: each split's kind. Scores as V-measure x 100 (as the tables). Deterministic for a ``seed``.
    ``response``: the clustering response as :func:`paired_parts` (the tables' default; False: without it).
    ``draws``: ``seed`` (required) and ``n_resamples`` (default 1000), checked as :func:`tecb.report.stats.contrast_test`
    checks its own."""
    stats._check_draws("contrast_test", draws)
    members, pool = _positions(texts)
    if len(labels) != len(members):
        raise ValueError(f"{len(members)} splits but labels for {len(labels)}")
    weights = resample_weights(pool, n_resamples=draws.get("n_resamples", 1000), seed=draws["seed"])
    side_a = replicates(a, members=members, labels=labels, weights=weights)
    side_b = None if b is None else replicates(b, members=members, labels=labels, weights=weights)
    return stats._decide(*paired_parts(side_a, side_b, strata=strata, response=response), confidence)


def paired_parts(
    a: Replicates, b: Replicates | None, *, strata, response: bool = True
) -> tuple[float, list[tuple[float, float]]]:
    """The mean over splits of ``a``'s seeds' mean minus ``b``'s (None: 0) and the parts of its variance,
    (contribution, df) each (module docstring): the replicates' variance, the split-level noise per kind
    (``strata``: each split's kind) and each side's seeds. ``response`` (where every split has restarts): the
    split-level spread beyond the restarts and the replicates' own across-split spread read as the clustering
    response, shared by splits that share texts as the text part is: :func:`_response_parts`."""
    diff_boot, diff, noise = a.boot.mean(axis=1), a.observed.mean(axis=0), a.noise.sum(axis=0) / len(a.observed) ** 2
    if b is not None:
        diff_boot, diff = diff_boot - b.boot.mean(axis=1), diff - b.observed.mean(axis=0)
        noise = noise + b.noise.sum(axis=0) / len(b.observed) ** 2
    parts = [(float(diff_boot.mean(axis=1).var(ddof=1)), diff_boot.shape[0] - 1.0)]
    if response and np.all(np.isfinite(noise)):
        parts += _response_parts(diff_boot, diff, noise, strata, replicates=parts[0][0])
    else:
        parts += _split_noise(diff_boot, diff, noise, strata)
    for side in (a, b):
        if side is not None and len(side.observed) > 1:
            parts.append(_seed_part(side))
    return float(diff.mean()), parts


def _response_parts(diff_boot, diff, restart_noise, strata, *, replicates: float) -> list[tuple[float, float]]:
    """The split level at R > 1 with the clustering response (benchmarks/measurement_diagnosis.md): per kind the
    restarts' variance / R (independent across splits); and what the kinds' spread of per-split differences holds
    beyond the restarts and beyond the replicates' own across-split spread (the fixed predictions' text part),
    as a ratio ρ to that text part, pooled over the kinds (each weighted as in the mean over splits). k-means'
    centres are fitted on a split's texts, so its response to the texts is a mean over them as the text part is,
    and shares the text part's overlap between splits: it adds ρ times the replicates' variance (not ρ times an
    independent split term), with the spread's degrees of freedom."""
    n_splits = diff.size
    kinds = _split_kinds(strata, n_splits)
    centred = diff_boot - diff_boot.mean(axis=0)
    parts, beyond, explained, df = [], 0.0, 0.0, 0.0
    for kind in dict.fromkeys(kinds.tolist()):
        idx = np.flatnonzero(kinds == kind)
        scale = (idx.size / n_splits) ** 2 / idx.size
        restarts = float(np.mean(restart_noise[idx]))
        parts.append((scale * restarts, 1e6))
        if idx.size < 2:
            continue
        spread = float(diff[idx].var(ddof=1))
        text = float(centred[:, idx].var(axis=1, ddof=1).mean())
        beyond += scale * (spread - restarts - text)
        explained += scale * text
        df += idx.size - 1.0
    rho = beyond / explained if explained > 0 else 0.0
    if rho > 0:
        parts.append((rho * replicates, df))
    return parts


def _seed_part(side: Replicates) -> tuple[float, float]:
    """(contribution, df) of a side's training seeds: the variance of its mean over seeds that neither the texts
    (the spread of the seeds' means within a replicate) nor the restarts explain, method of moments, with seeds
    - 1 degrees of freedom (the seeds' shared text variance is in the replicates already)."""
    seeds, splits = side.observed.shape
    means = side.observed.mean(axis=1)
    boot = side.boot.mean(axis=2)
    explained = float((boot - boot.mean(axis=0)).var(axis=1, ddof=1).mean())
    clustering = float(side.noise.sum(axis=1).mean()) / splits**2 if np.all(np.isfinite(side.noise)) else 0.0
    residual = max(float(means.var(ddof=1)) - explained - clustering, 0.0)
    return residual / seeds, seeds - 1.0


#: replicates of the tables' bootstrap (each model's replicates are computed once per dataset and paired with
#: every other model's: the same weights)
TABLE_RESAMPLES = 1000


def split_predictions(splits: pd.DataFrame, labels: pd.DataFrame, *, source: str) -> dict[int, tuple]:
    """Split id -> (text ids, true labels, predicted clusters: states x texts) from a dataset's splits file
    (``split``, ``text_id``, ``label``) and a cluster job's labels file (``split``, ``text_id``, ``cluster``, and
    ``state`` at R > 1; ``source`` names it in errors), each split's texts in the splits file's order."""
    missing = {"split", "text_id", "cluster"} - set(labels.columns)
    if missing:
        raise ValueError(f"{source}: labels file lacks column(s) {sorted(missing)}")
    if "state" not in labels:
        labels = labels.assign(state=0)
    gold = {int(s): g for s, g in splits.groupby("split", sort=True)}
    out = {}
    for s, group in labels.groupby("split", sort=True):
        if int(s) not in gold:
            raise ValueError(f"{source}: split {int(s)} is not in the dataset's splits file")
        want = gold[int(s)]
        ids = want.text_id.to_numpy()
        states = [g for _, g in group.groupby("state", sort=True)]
        # rows are in the split's row order (tecb.cluster.algorithms.labels_table): a text may repeat in a split
        if any(not np.array_equal(g.text_id.to_numpy(), ids) for g in states):
            raise ValueError(
                f"{source}: split {int(s)}: its texts differ from the splits file's (or a state lacks some)"
            )
        clusters = np.stack([g.cluster.to_numpy() for g in states])
        out[int(s)] = (want.text_id.to_numpy(), want.label.to_numpy(), clusters)
    return out


class TablePairs:
    """The paired bootstrap for a table (:func:`tecb.report.stats.table_statistics`): per dataset one set of
    weights over its pool (the splits file's unique text ids), per key (model, dataset, reduction, algorithm)
    its :class:`Replicates` on every split it has predictions for, computed once; :meth:`parts` pairs two keys
    on given splits. ``predictions``: key -> split id -> (text ids, labels, clusters) (:func:`split_predictions`);
    ``pools``: dataset -> its splits file's text ids."""

    def __init__(self, predictions: Mapping, pools: Mapping, *, n_resamples: int = TABLE_RESAMPLES, seed: int):
        self.predictions, self.n_resamples, self.seed = predictions, n_resamples, seed
        self.positions = {
            d: {t: i for i, t in enumerate(dict.fromkeys(np.asarray(ids).tolist()))} for d, ids in pools.items()
        }
        self.cache: dict = {}

    def _replicates(self, key) -> tuple[list, Replicates]:
        if key not in self.cache:
            dataset, per_split = key[1], self.predictions[key]
            pos = self.positions[dataset]
            stream = [self.seed, zlib.crc32(str(dataset).encode())]  # each dataset its own draws, by name
            weights = resample_weights(len(pos), n_resamples=self.n_resamples, seed=stream)
            ids = sorted(per_split)
            members = [np.array([pos[t] for t in per_split[s][0].tolist()]) for s in ids]
            side = [[per_split[s][2] for s in ids]]
            reps = replicates(side, members=members, labels=[per_split[s][1] for s in ids], weights=weights)
            self.cache[key] = (ids, reps)
        return self.cache[key]

    def parts(self, key_a, key_b, splits: Sequence, kinds) -> tuple[float, list] | None:
        """(mean difference a - b over ``splits``, its variance parts) as :func:`paired_parts`, in the score
        files' units (V-measure, not x 100: Table 2's statistics work in them), ``kinds``: each of those splits'
        kind or None; None where either key has no predictions for every one of them."""
        if key_a not in self.predictions or key_b not in self.predictions:
            return None
        (ids_a, a), (ids_b, b) = self._replicates(key_a), self._replicates(key_b)
        splits = [int(s) for s in splits]
        if not set(splits) <= set(ids_a) or not set(splits) <= set(ids_b):
            return None
        a = a.columns([ids_a.index(s) for s in splits])
        b = b.columns([ids_b.index(s) for s in splits])
        diff, parts = paired_parts(a, b, strata=kinds)
        return diff / SCALE, [(v / SCALE**2, df) for v, df in parts]  # in the score files' units, as the table


# --- declared memory (the tables rule's mem_mb) ----------------------------------------------------------------


def memory_estimate(*, pool: int, splits, n_resamples: int = TABLE_RESAMPLES) -> int:
    """Bytes :class:`TablePairs` needs for one key's replicates on a dataset of ``pool`` texts, ``splits`` its
    (texts, true labels x predicted clusters) each: the weights (replicates x pool, float64), :data:`BLOCK`
    replicates' draws and columns at the largest split and pool, and the largest split's contingency tables with
    :func:`v_measure_tables`' temporaries (7 x replicates x cells), plus 8 MB of small arrays. Measured in fresh
    processes (MB, estimate in brackets): 179 at 20,000 texts (186), 93 at a 9,000-text split (99), 518 at 100 x
    100 cells (579), 1,973 at 200 x 200 (2,260); the paper-scale shapes: 487 at RedditClusteringP2P's 40,305 texts,
    26,221 in a split, 50 x 50 (534), 607 at BlurbsClusteringP2P's 18,084, 16,425, 93 x 93 (672)."""
    r, splits = n_resamples, list(splits)
    texts = max((t for t, _ in splits), default=0)
    cells = max((c for _, c in splits), default=0)
    return 8 * r * pool + 56 * (r + 1) * cells + 8 * BLOCK * (2 * pool + 3 * texts) + 8_000_000


#: the tables job's declaration without the bootstrap (Snakemake's default, which it ran in before issue 56)
TABLES_DEFAULT_MB = 1000


def job_memory_mb(splits: Mapping, labels, *, n_resamples: int = TABLE_RESAMPLES) -> int:
    """Memory to declare (Snakemake ``mem_mb``) for the tables job: ``splits`` dataset -> splits file, ``labels``
    (dataset, labels file) of each key its bootstrap reads. :data:`tecb.cluster.algorithms.HEADROOM` x
    (:data:`~tecb.cluster.algorithms.BASE_MB` + the largest :func:`memory_estimate` of a key: the keys' replicates
    are computed one at a time), at least :data:`TABLES_DEFAULT_MB`; that alone while an input does not exist yet
    (Snakemake evaluates resources again when the job is ready to run)."""
    import os

    from tecb import io
    from tecb.cluster.algorithms import BASE_MB, HEADROOM

    labels = [(d, p) for d, p in labels]
    if not labels or not all(os.path.exists(p) for p in list(splits.values()) + [p for _, p in labels]):
        return TABLES_DEFAULT_MB
    shapes = {}
    for dataset in dict.fromkeys(d for d, _ in labels):
        gold = io.read_parquet_columns(splits[dataset], ["split", "text_id", "label"], "splits").to_pandas()
        shapes[dataset] = (
            gold.text_id.nunique(),
            gold.groupby("split").agg(texts=("label", "size"), n=("label", "nunique")),
        )
    largest = 0
    for dataset, path in labels:
        pool, gold = shapes[dataset]
        names = [c for c in ("split", "state", "cluster") if c in io.read_parquet_schema(path, "labels").names]
        found = io.read_parquet_columns(path, names, "labels").to_pandas()
        clusters = found.groupby([c for c in ("split", "state") if c in names]).cluster.nunique().groupby(level=0).max()
        per_split = gold.join(clusters.rename("clusters"), how="inner")
        cells = zip(per_split.texts, per_split.n * per_split.clusters)
        largest = max(largest, memory_estimate(pool=pool, splits=cells, n_resamples=n_resamples))
    return max(TABLES_DEFAULT_MB, int(HEADROOM * (BASE_MB + -(-largest // 1_000_000))))
