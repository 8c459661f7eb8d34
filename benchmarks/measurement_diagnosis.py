"""Issue 53.6, why the text-level bootstrap misses narrow (benchmarks/measurement_simulation.md): in the
simulation (:mod:`tecb.report.simulation`, which can re-cluster) the true variance of a contrast over runs is
split into what the bootstrap's parts (:func:`tecb.report.bootstrap.paired_parts`) estimate and what they miss.

Per run under the null (a new pool of texts, its splits, two encoders' embeddings: the "data"): the contrast D
(mean over splits of the difference, V-measure x 100) at R = 10 and R = 1, the bootstrap's variance parts (its
replicates; the split-level term, of which the restarts' variance / R), and D again (a) with new k-means seeds on
the same splits (the clustering's own noise given the data: E[(D - D_a)^2] / 2) and (b) with new splits and seeds
from the same pool (everything given the pool: E[(D - D_b)^2] / 2). Over the runs: Var(D), the mean of the
bootstrap's SE^2 and its parts, the conditional parts, and the gap Var(D) - mean SE^2 with a bootstrap-over-runs
SE. Then, for a few runs, the refitting bootstrap: the same replicate weights, every split re-clustered on its
resampled texts (R restarts), against the fixed-prediction replicates: what the fixed predictions cannot see (the
"clustering response": k-means' partition moving with the pool), less the restarts' noise of the refits.

    nice -n 10 python benchmarks/measurement_diagnosis.py --design tenkgnad_p2p --runs 240 --refit-runs 8 \
        --out benchmarks/measurement_diagnosis
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from tecb.report import bootstrap, stats
from tecb.report import simulation as sim

R = 10
RESAMPLES = 200


def _design(key: str) -> sim.Design:
    return dataclasses.replace(sim.DESIGNS[key], pool=sim.REAL_POOLS[key], effect=sim.REAL_EFFECTS[key])


def _splits(design, genre, fine, rng):
    splits = sim._splits(design, genre, fine, rng)
    keep = stats.usable_splits(np.array([idx.size for _, idx, _ in splits]))
    return [s for s, k in zip(splits, keep) if k]


def _contrast(scored, pick: int) -> float:
    """D: the seeds' (or the second encoder's) mean minus the base, mean over splits, x 100."""
    return float((np.mean([s[pick] for s in scored[1:]], axis=0) - scored[0][pick]).mean() * 100)


def _parts(scored, splits, restarts: int) -> dict:
    """The bootstrap's variance parts of D (as :func:`tecb.report.simulation.test_bootstrap` computes them)."""
    kinds = [k for k, _, _ in splits]
    strata = kinds if len(set(kinds)) > 1 else None
    keep = slice(None) if restarts > 1 else slice(0, 1)
    members, pool = bootstrap._positions([idx for _, idx, _ in splits])
    weights = bootstrap.resample_weights(pool, n_resamples=RESAMPLES, seed=0)
    labels = [y for _, _, y in splits]
    sides = [
        bootstrap.replicates([[c[keep] for c in s[4]]], members=members, labels=labels, weights=weights) for s in scored
    ]
    a = sides[1]
    if len(sides) > 2:
        a = bootstrap.Replicates(
            *(
                np.concatenate([getattr(s, f) for s in sides[1:]], axis=int(f == "boot"))
                for f in ("boot", "observed", "noise")
            )
        )
    d, parts = bootstrap.paired_parts(a, sides[0], strata=strata, response=False)
    n_split_parts = len(set(kinds))
    split_level = parts[1 : 1 + n_split_parts]
    restart = (a.noise.sum(axis=0) / len(a.observed) ** 2 + sides[0].noise[0]) if restarts > 1 else None
    diff_boot = a.boot.mean(axis=1) - sides[0].boot.mean(axis=1)
    diff = a.observed.mean(axis=0) - sides[0].observed.mean(axis=0)
    kind_of = np.asarray(kinds, dtype=object)
    spread = explained = 0.0  # the split-level term's two halves, as variances of the mean over splits
    for kind in dict.fromkeys(kinds):
        idx = np.flatnonzero(kind_of == kind)
        if idx.size > 1:
            scale = (idx.size / len(kinds)) ** 2 / idx.size
            spread += scale * float(diff[idx].var(ddof=1))
            centred = diff_boot[:, idx] - diff_boot[:, idx].mean(axis=0)
            explained += scale * float(centred.var(axis=1, ddof=1).mean())
    return {
        "spread": spread,
        "explained": explained,
        "se2": sum(v for v, _ in parts),
        "replicates": parts[0][0],
        "split_level": sum(v for v, _ in split_level),
        "seeds": sum(v for v, _ in parts[1 + n_split_parts :]),
        "restarts": float(restart.sum() / len(splits) ** 2) if restart is not None else np.nan,
        "df": stats._decide(d, parts, 0.95).df,
    }


def _runs(design, rng):
    """Null runs of ``design`` (its population drawn first from ``rng``): per run the pool's labels, its usable
    splits, the encoders' embeddings (the base first) and their scores at R restarts."""
    population = sim.geometry(design, rng)
    while True:
        genre, fine, position, deviation = sim._pool(design, population, rng)
        splits = _splits(design, genre, fine, rng)
        embeddings = [
            sim._embed(position, deviation, design.separation, design.noise, rng)
            for _ in range(1 + max(design.seeds, 1))
        ]
        yield genre, fine, splits, embeddings, [sim._score(e, splits, R, rng) for e in embeddings]


def diagnose(key: str, runs: int, seed: int) -> pd.DataFrame:
    design, rng = _design(key), np.random.default_rng(seed)
    rows = []
    for _, (genre, fine, splits, embeddings, scored) in zip(range(runs), _runs(design, rng)):
        again = [sim._score(e, splits, R, rng) for e in embeddings]  # new seeds, same splits
        other = _splits(design, genre, fine, rng)
        redrawn = [sim._score(e, other, R, rng) for e in embeddings]  # new splits and seeds, same pool
        row = {}
        for restarts, pick in ((R, 0), (1, 1)):
            row |= {f"D@R{restarts}": _contrast(scored, pick), f"reseeded@R{restarts}": _contrast(again, pick)}
            row[f"splits@R{restarts}"] = _contrast(redrawn, pick)
            row |= {f"{k}@R{restarts}": v for k, v in _parts(scored, splits, restarts).items()}
        rows.append(row)
    return pd.DataFrame(rows)


def summary(per_run: pd.DataFrame, restarts: int, rng) -> dict:
    """Var(D) over runs beside the bootstrap's mean SE^2 and its parts, and the conditional parts."""
    r = f"@R{restarts}"
    d = per_run[f"D{r}"]

    def gap(frame):
        return float(frame[f"D{r}"].var(ddof=1) - frame[f"se2{r}"].mean())

    boot = [gap(per_run.iloc[rng.integers(0, len(per_run), len(per_run))]) for _ in range(2000)]
    init = float(((d - per_run[f"reseeded{r}"]) ** 2).mean() / 2)
    given_pool = float(((d - per_run[f"splits{r}"]) ** 2).mean() / 2)
    var = float(d.var(ddof=1))
    se2 = per_run[f"se2{r}"]
    # a candidate read off the table (not wired): the split-level spread beyond the restarts and the replicates'
    # own across-split spread taken as the clustering response, shared by the splits as the text part is, so the
    # replicates' part scaled by their ratio (R > 1 only: at R = 1 the restarts' variance is not known)
    ratio = (per_run[f"spread{r}"] - per_run[f"restarts{r}"]) / per_run[f"explained{r}"]
    scaled = per_run[f"replicates{r}"] * np.maximum(ratio, 1.0) + per_run[f"restarts{r}"]
    return {
        "R": restarts,
        "runs": len(per_run),
        "true variance": var,
        "mean SE^2": float(per_run[f"se2{r}"].mean()),
        "SE / true SD": float(np.sqrt(per_run[f"se2{r}"].mean() / var)),
        "gap": gap(per_run),
        "gap SE": float(np.std(boot, ddof=1)),
        "replicates part": float(per_run[f"replicates{r}"].mean()),
        "split-level part": float(per_run[f"split_level{r}"].mean()),
        "of which restarts": float(per_run[f"restarts{r}"].mean()),
        "seeds part": float(per_run[f"seeds{r}"].mean()),
        "clustering given the data": init,
        "splits and clustering given the pool": given_pool,
        "the pool's part": var - given_pool,
        "null runs within 1.96 SE": float((d.abs() <= 1.96 * np.sqrt(se2)).mean()),
        "candidate: mean SE^2": float(scaled.mean()),
        "candidate: null runs within 1.96 SE": float((d.abs() <= 1.96 * np.sqrt(scaled)).mean())
        if scaled.notna().all()
        else np.nan,
    }


def refit(key: str, runs: int, replicates: int, seed: int) -> pd.DataFrame:
    """Per run: the fixed-prediction replicates' variance of D and the refitting replicates' (each split
    re-clustered on its resampled texts, R restarts) less their restarts' noise, same weights."""
    design, rng = _design(key), np.random.default_rng(seed)
    rows = []
    for run, (_, _, splits, embeddings, scored) in zip(range(runs), _runs(design, rng)):
        weights = bootstrap.resample_weights(design.pool, n_resamples=replicates, seed=run)
        shape = (replicates, len(embeddings), len(splits))
        fixed, refitted, noise = np.zeros(shape), np.zeros(shape), np.zeros(shape)
        for j, (_, idx, labels) in enumerate(splits):
            for e, emb in enumerate(embeddings):
                fixed[:, e, j] = bootstrap.split_scores(weights, members=idx, labels=labels, clusters=scored[e][4][j])[
                    0
                ]
                for b in range(replicates):
                    drawn = np.repeat(np.arange(idx.size), weights[b, idx].astype(int))
                    values = sim._v_measure(labels[drawn], sim._kmeans(emb[idx][drawn], len(np.unique(labels)), R, rng))
                    refitted[b, e, j], noise[b, e, j] = values.mean(), values.var(ddof=1) / R
        contrast = lambda x: (x[:, 1:].mean(axis=1) - x[:, 0]).mean(axis=1) * 100  # noqa: E731
        restarts = float((noise[:, 1:].sum(axis=1) / (len(embeddings) - 1) ** 2 + noise[:, 0]).sum(axis=1).mean())
        restarts *= 100**2 / len(splits) ** 2
        fixed_var, refit_var = float(contrast(fixed).var(ddof=1)), float(contrast(refitted).var(ddof=1))
        rows.append(
            {"fixed predictions": fixed_var, "refitted": refit_var, "refits' restarts": restarts}
            | {"clustering response": refit_var - restarts - fixed_var}
        )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--design", default="tenkgnad_p2p")
    parser.add_argument("--runs", type=int, default=240)
    parser.add_argument("--refit-runs", type=int, default=8)
    parser.add_argument("--replicates", type=int, default=40, help="refitting replicates per run")
    parser.add_argument("--out", required=True, help="output stem (.csv: per run, .md)")
    args = parser.parse_args()
    start = time.perf_counter()
    per_run = diagnose(args.design, args.runs, seed=53)
    rng = np.random.default_rng(0)
    table = pd.DataFrame([summary(per_run, r, rng) for r in (R, 1)])
    table.index = pd.Index([f"R{r}" for r in table.pop("R")], name="row")
    fits = refit(args.design, args.refit_runs, args.replicates, seed=53)
    seconds = round(time.perf_counter() - start)
    out = Path(args.out)
    per_run.round(5).to_csv(out.with_suffix(".csv"), index=False)
    rows = table.T.round(3)
    rows.index.name = "variance of D (V-measure x 100)^2"
    means = fits.mean()
    lines = [
        "# Why the text-level bootstrap misses narrow (issue 53.6)",
        "",
        f"`python benchmarks/measurement_diagnosis.py {' '.join(sys.argv[1:])}` ({seconds} s): "
        f"{_design(args.design).name}, the pool of the real design, under the null, the population (geometry, seed 53) "
        "of benchmarks/measurement_simulation.py. Per-run values: the .csv beside this.",
        "",
        rows.to_markdown(),
        "",
        f"Refitting bootstrap, {args.refit_runs} runs x {args.replicates} replicates (same weights; means over "
        "the runs; the response's SE over runs "
        f"{fits['clustering response'].std(ddof=1) / np.sqrt(len(fits)):.3f}):",
        "",
        means.round(3).to_frame("mean").to_markdown(),
        "",
    ]
    out.with_suffix(".md").write_text("\n".join(lines), encoding="utf-8")
    response = means.to_frame("refit").T.assign(
        **{"response SE": fits["clustering response"].std(ddof=1) / np.sqrt(len(fits))}
    )
    pd.concat([table, response]).round(4).to_csv(out.with_name(out.name + "_summary.csv"), index_label="row")


if __name__ == "__main__":
    main()
