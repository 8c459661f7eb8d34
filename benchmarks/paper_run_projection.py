"""Project the CPU side of the paper's full run (12 models x 6 datasets x 14 configurations) from measurements.

Measures the per-split cost of every (reduction, algorithm) of the paper config at three sizes on synthetic
768-d embeddings (Gaussian clusters, unit norm), fits ``seconds = a * n^b`` per step, and projects the
core-hours and the 16-core makespan of all reduce and cluster jobs from the paper's split sizes, for

- **before**: as first shipped: one reduce job per (model, dataset) (all three reductions, numba compiling
  umap in every process), one cluster job per (model, dataset) running all 14 configurations and reserving
  ``cluster.threads: 4`` cores, Ward by scikit-learn, HDBSCAN with its default 4 core-distance workers;
- **after**: one reduce job per (model, dataset, reduction) with umap's compiled code cached on disk and small
  splits' exact neighbours computed in compiled code (:func:`tecb.cluster.reduce.small_data_knn`, same coordinates), one
  cluster job per (model, dataset, reduction, algorithm) declaring the cores it uses, Ward on the exact
  faster routes (:func:`tecb.cluster.algorithms.ward`), HDBSCAN's workers = the job's threads.

Every single-threaded step is timed in CPU seconds (``time.process_time``, BLAS limited to one thread), which
is robust on a shared machine; HDBSCAN's default (worker processes) is timed in wall seconds. The makespan is
a greedy longest-job-first simulation on 16 cores (reduce before its cluster jobs; embeddings ready at 0).

    nice .venv/bin/python benchmarks/paper_run_projection.py                    # writes the .md beside it
    nice .venv/bin/python benchmarks/paper_run_projection.py --sizes 500 1000 2000 --out /tmp/quick.md
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

REDUCTIONS = {
    "pca": {"method": "pca", "n_components": 2},
    "umap": {"method": "umap", "n_components": 2, "metric": "cosine"},
    "pca_umap": {"method": "pca_umap", "pca_components": 50, "n_components": 2, "metric": "cosine"},
}
CONFIGURATIONS = [
    ("kmeans", "none"),
    ("kmeans", "pca"),
    ("kmeans", "umap"),
    ("kmeans", "pca_umap"),
    ("agglomerative", "none"),
    ("agglomerative", "pca"),
    ("agglomerative", "umap"),
    ("agglomerative", "pca_umap"),
    ("hdbscan", "pca"),
    ("hdbscan", "umap"),
    ("hdbscan", "pca_umap"),
    ("dbstream", "pca"),
    ("dbstream", "umap"),
    ("dbstream", "pca_umap"),
]
METHODS = {"kmeans": "minibatch_kmeans", "agglomerative": "agglomerative", "hdbscan": "hdbscan", "dbstream": "dbstream"}
N_MODELS = 12
CORES = 16


# --- the paper's split sizes ---------------------------------------------------------------------------------


def paper_split_sizes() -> dict[str, list[int]]:
    """Split sizes per dataset, from the paper's Table 1 (reference/paper_table1.csv) and the split recipes.

    Blurbs: 20 random samples of 10-100% of the 16,425 books (two label levels) + 8 one-genre splits
    (partitioning the books; smallest 177), the random ones scaled so that split items / unique texts = 9.85.
    TenKGnad: 10 random samples of 10-100% of the articles, scaled to 4.47 items per text, within the
    table's 1,436..9,962. Reddit: 10 splits of 10-50 subreddits, spread evenly over the table's 9,288..26,221.
    Seed 42 for the fractions.
    """
    import csv

    table = {row["dataset"]: row for row in csv.DictReader(open(ROOT / "reference" / "paper_table1.csv"))}
    rng = np.random.default_rng(42)
    out = {}
    books = int(table["BlurbsClusteringS2S"]["split_size_max"])  # 16,425
    shares = np.array([0.47, 0.17, 0.13, 0.09, 0.06, 0.04, 0.03, 0.0108])
    genre = np.maximum(177, np.round(shares / shares.sum() * books)).astype(int)
    fractions = rng.uniform(0.1, 1.0, 20)
    for name in ("BlurbsClusteringS2S", "BlurbsClusteringP2P"):
        target = 9.85 * int(table[name]["unique_samples"]) - genre.sum()
        rand = np.minimum(books, np.round(fractions * books * target / (fractions * books).sum())).astype(int)
        out[name] = sorted(rand.tolist() + genre.tolist(), reverse=True)
    fractions = rng.uniform(0.1, 1.0, 10)
    for name in ("TenKGnadClusteringS2S", "TenKGnadClusteringP2P"):
        row = table[name]
        n = int(row["unique_samples"])
        sizes = fractions * n * 4.47 * n / (fractions * n).sum()
        sizes = np.clip(np.round(sizes), int(row["split_size_min"]), int(row["split_size_max"])).astype(int)
        out[name] = sorted(sizes.tolist(), reverse=True)
    for name in ("RedditClusteringS2S", "RedditClusteringP2P"):
        row = table[name]
        out[name] = (
            np.round(np.linspace(int(row["split_size_max"]), int(row["split_size_min"]), 10)).astype(int).tolist()
        )
    return out


# --- measurements --------------------------------------------------------------------------------------------


def embeddings(n, dim=768, labels=30, seed=42):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(labels, dim))
    y = rng.integers(0, labels, size=n)
    x = centres[y] + rng.normal(scale=1.6, size=(n, dim))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32), y


def cpu(fn, *args, **kwargs):
    start = time.process_time()
    out = fn(*args, **kwargs)
    return time.process_time() - start, out


def wall(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - start, out


#: umap's regimes (umap-learn 0.5): below 4,096 points all pairwise distances are computed through
#: scikit-learn with a Python-level callable (quadratic, slow); from 4,096 NN-descent; 500 epochs up to
#: 10,000 points, 200 above.
UMAP_REGIMES = (("umap < 4096", 0, 4096), ("umap 4096-10000", 4096, 10_001), ("umap > 10000", 10_001, 10**9))


def umap_regime(n):
    return next(name for name, lo, hi in UMAP_REGIMES if lo <= n < hi)


def stock_reduce(x, name, spec):
    """A UMAP reduction without :func:`tecb.cluster.reduce.small_data_knn` (umap's own neighbour search)."""
    from tecb.cluster import reduce
    from tecb.cluster.spectral import seeded_umap_class

    if name == "pca_umap":
        x = reduce.pca(x, spec["pca_components"], seed=42)
    reducer = seeded_umap_class()(
        n_components=spec["n_components"], metric=spec["metric"], random_state=42, n_neighbors=15
    )
    return reducer.fit_transform(x).astype(np.float32)


def measure(sizes, dim, log, umap_sizes=()) -> tuple[dict, list[str]]:
    """``{(step, variant): [(n, seconds), ...]}`` for every reduction and (algorithm, reduction), before/after.

    Reductions are timed at ``sizes`` and ``umap_sizes`` (umap's costs are fitted per regime); the clusterings
    at ``sizes``, on those reductions."""
    import hdbscan as hdbscan_lib
    from sklearn.cluster import AgglomerativeClustering
    from sklearn.metrics import adjusted_rand_score
    from threadpoolctl import threadpool_limits

    from tecb.cluster import algorithms as cluster
    from tecb.cluster import reduce

    costs: dict[tuple[str, str], list[tuple[int, float]]] = {}
    checks = []
    with threadpool_limits(1):
        reduce.reduce(embeddings(200, dim)[0], "umap", seed=42)  # compile numba once: steady state from here on
        reduce.reduce(embeddings(4200, 64)[0], "umap", seed=42)  # and NN-descent's code
        for n in sorted(set(sizes) | set(umap_sizes)):
            x, y = embeddings(n, dim)
            k = len(np.unique(y))
            points = {"none": x}
            for name, spec in REDUCTIONS.items():
                spec = dict(spec)
                t, points[name] = cpu(reduce.reduce, x, spec.pop("method"), seed=42, **spec)
                if name == "pca":
                    costs.setdefault((f"reduce {name}", "all sizes"), []).append((n, t))
                    log(f"n={n} reduce {name}: {t:.2f} s")
                    continue
                t_old = t
                if n < reduce.SMALL_DATA:  # before: umap's own small-data route (pairwise distances from Python)
                    t_old, old = cpu(stock_reduce, x, name, spec)
                    if not np.array_equal(old, points[name]):
                        raise AssertionError(f"n={n} {name}: the small-data neighbours changed the coordinates")
                    checks.append(f"n={n} {name}: coordinates == umap's own small-data route (bit-identical)")
                for variant, seconds in (("before", t_old), ("after", t)):
                    costs.setdefault((f"reduce {name}", f"{umap_regime(n)} | {variant}"), []).append((n, seconds))
                log(f"n={n} reduce {name}: before {t_old:.2f} s, after {t:.2f} s")
            if n not in sizes:
                continue
            for algorithm, reduction in CONFIGURATIONS:
                p = points[reduction]
                step = f"{algorithm} on {reduction}"
                if algorithm == "agglomerative":
                    t_old, old = cpu(AgglomerativeClustering(n_clusters=k).fit_predict, p)
                    t_new, new = cpu(cluster.cluster, p, "agglomerative", k)
                    ari = adjusted_rand_score(old, new)
                    checks.append(
                        f"n={n} Ward on {reduction}: adjusted Rand(scikit-learn, tecb.cluster.algorithms.ward) = {ari}"
                    )
                    if ari != 1.0:
                        raise AssertionError(checks[-1])
                elif algorithm == "hdbscan":
                    t_old, _ = wall(hdbscan_lib.HDBSCAN().fit_predict, np.asarray(p, dtype=np.float64))
                    t_new, _ = cpu(cluster.cluster, p, "hdbscan", k, threads=1)
                else:
                    t_new, _ = cpu(cluster.cluster, p, METHODS[algorithm], k)
                    t_old = t_new
                costs.setdefault((step, "before"), []).append((n, t_old))
                costs.setdefault((step, "after"), []).append((n, t_new))
                log(f"n={n} {step}: before {t_old:.2f} s, after {t_new:.2f} s")
    return costs, checks


def _child_cpu(code: str, env: dict | None = None) -> float:
    """CPU seconds (user + sys) of a fresh Python process running ``code``."""
    before = os.times()
    subprocess.run(
        [sys.executable, "-c", code], check=True, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL
    )
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def fixed_costs(log) -> dict[str, float]:
    """Per-process costs: starting Python with the job's imports, and the first UMAP of a process."""
    src = str(ROOT / "src")
    umap_code = (
        f"import sys, os; sys.path.insert(0, {src!r}); from tecb.cluster import reduce;"
        "os.environ.get('CACHE') and reduce.cache_umap_compilation();"
        "import numpy as np; x = np.random.default_rng(0).normal(size=(1000, 64)).astype(np.float32);"
        "reduce.reduce(x, 'umap', seed=42){second}"
    )
    env = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    out = {}
    out["cluster job imports"] = _child_cpu(
        f"import sys; sys.path.insert(0, {src!r}); import snakemake.script, pyarrow.parquet, tecb.cluster.algorithms, "
        "tecb.cluster.metrics, tecb.io, sklearn.cluster, hdbscan, fastcluster, threadpoolctl",
        env,
    )
    with tempfile.TemporaryDirectory() as cache:
        cold = _child_cpu(umap_code.format(second=""), env)
        twice = _child_cpu(umap_code.format(second="; reduce.reduce(x, 'umap', seed=42)"), env)
        env_cache = {**env, "NUMBA_CACHE_DIR": cache, "CACHE": "1"}
        _child_cpu(umap_code.format(second=""), env_cache)  # fills the cache
        warm = _child_cpu(umap_code.format(second=""), env_cache)
    out["reduce job imports"] = _child_cpu(
        f"import sys; sys.path.insert(0, {src!r}); import snakemake.script, pyarrow.parquet, tecb.io, tecb.cluster.reduce, "
        "umap, pynndescent, threadpoolctl",
        env,
    )
    steady = twice - cold
    out["reduce job, first UMAP, no cache"] = cold
    out["reduce job, first UMAP, cache filled"] = warm
    out["one UMAP (1000 x 64), steady state"] = steady
    out["compile cost per process, no cache"] = max(0.0, cold - steady - out["reduce job imports"])
    out["compile cost per process, cache"] = max(0.0, warm - steady - out["reduce job imports"])
    for k, v in out.items():
        log(f"{k}: {v:.2f} s CPU")
    return out


# --- projection ----------------------------------------------------------------------------------------------


def fit(points):
    n, t = np.array(points, dtype=float).T
    t = np.maximum(t, 1e-4)
    b, log_a = np.polyfit(np.log(n), np.log(t), 1)
    return float(np.exp(log_a)), float(b)


def simulate(jobs, cores=CORES):
    """Greedy longest-first list scheduling: ``jobs`` = [(name, threads, seconds, deps, mem_mb)].

    Returns (makespan seconds, peak declared memory MB of the jobs running at once)."""
    remaining = {j[0]: set(j[3]) for j in jobs}
    spec = {j[0]: j for j in jobs}
    dependents: dict[str, list[str]] = {}
    for name, _, _, deps, _ in jobs:
        for d in deps:
            dependents.setdefault(d, []).append(name)
    ready = [(-spec[n][2], n) for n, deps in remaining.items() if not deps]
    heapq.heapify(ready)
    running, now, free, mem, peak_mem = [], 0.0, cores, 0.0, 0.0
    while ready or running:
        waiting = []
        while ready:
            item = heapq.heappop(ready)
            threads = min(spec[item[1]][1], cores)
            if threads <= free:
                free -= threads
                mem += spec[item[1]][4]
                heapq.heappush(running, (now + spec[item[1]][2], item[1], threads))
            else:
                waiting.append(item)
        peak_mem = max(peak_mem, mem)
        for item in waiting:
            heapq.heappush(ready, item)
        end, name, threads = heapq.heappop(running)
        now, free, mem = end, free + threads, mem - spec[name][4]
        for child in dependents.get(name, []):
            remaining[child].discard(name)
            if not remaining[child]:
                heapq.heappush(ready, (-spec[child][2], child))
    return now, peak_mem


def step_cost(fits, step, variant, n):
    """Projected seconds of one split of ``n`` items (umap/pca_umap: the fit of ``n``'s regime)."""
    if step in ("reduce umap", "reduce pca_umap"):
        variant = f"{umap_regime(n)} | {variant}"
    elif step == "reduce pca":
        variant = "all sizes"
    a, b = fits[(step, variant)]
    return a * n**b


def project(fits, fixed, sizes_by_dataset, dim, threads_config):
    from tecb.cluster import algorithms as cluster
    from tecb.cluster import reduce

    def cost(step, variant, n):
        return step_cost(fits, step, variant, n)

    out = {}
    imports = fixed["cluster job imports"]
    for variant in ("before", "after"):
        jobs, cpu_total = [], 0.0
        for model in range(N_MODELS):
            for dataset, sizes in sizes_by_dataset.items():
                md = f"m{model}/{dataset}"
                n_max = max(sizes)
                red_mem = {
                    r: 500 + reduce.memory_estimate(REDUCTIONS[r]["method"], n_max, dim) / 1e6 for r in REDUCTIONS
                }
                if variant == "before":
                    t = (
                        fixed["reduce job imports"]
                        + fixed["compile cost per process, no cache"]
                        + sum(cost(f"reduce {r}", "before", n) for r in REDUCTIONS for n in sizes)
                    )
                    jobs.append((f"reduce {md}", 1, t, [], max(red_mem.values())))
                    t = imports + sum(cost(f"{a} on {r}", "before", n) for a, r in CONFIGURATIONS for n in sizes)
                    mem = 500 + max(
                        cluster.memory_estimate(
                            METHODS[a],
                            n_max,
                            dim if r == "none" else 2,
                            {"linkage": "ward", "route": "sklearn"} if a == "agglomerative" else None,
                        )
                        / 1e6
                        for a, r in CONFIGURATIONS
                    )
                    jobs.append((f"cluster {md}", 4, t, [f"reduce {md}"], mem))
                    cpu_total += jobs[-2][2] + jobs[-1][2]
                    continue
                for r in REDUCTIONS:
                    t = (
                        fixed["reduce job imports"]
                        + fixed["compile cost per process, cache"]
                        + sum(cost(f"reduce {r}", "after", n) for n in sizes)
                    )
                    jobs.append((f"reduce {md}/{r}", 1, t, [], red_mem[r]))
                    cpu_total += t
                for a, r in CONFIGURATIONS:
                    t = imports + sum(cost(f"{a} on {r}", "after", n) for n in sizes)
                    threads = cluster.threads_used(METHODS[a], threads_config)
                    mem = 500 + cluster.memory_estimate(METHODS[a], n_max, dim if r == "none" else 2) / 1e6
                    jobs.append((f"cluster {md}/{r}/{a}", threads, t, [] if r == "none" else [f"reduce {md}/{r}"], mem))
                    cpu_total += t
        makespan, peak = simulate(jobs)
        out[variant] = {
            "jobs": len(jobs),
            "cpu_hours": cpu_total / 3600,
            "reserved_core_hours": sum(j[1] * j[2] for j in jobs) / 3600,
            "makespan_hours": makespan / 3600,
            "peak_mem_gb": peak / 1000,
            "longest_job_s": max(j[2] for j in jobs),
        }
    # CPU per step (after), to show where the time goes
    steps = {}
    for sizes in sizes_by_dataset.values():
        for r in REDUCTIONS:
            for variant in ("before", "after"):
                key = (f"reduce {r}", variant)
                steps[key] = steps.get(key, 0) + N_MODELS * sum(cost(f"reduce {r}", variant, n) for n in sizes)
        for a, r in CONFIGURATIONS:
            for variant in ("before", "after"):
                key = (f"{a} on {r}", variant)
                steps[key] = steps.get(key, 0) + N_MODELS * sum(cost(f"{a} on {r}", variant, n) for n in sizes)
    return out, steps


def render(args, sizes, costs, fits, fixed, checks, result, steps, sizes_by_dataset, elapsed):
    lines = [
        "# Paper run projection: CPU side (reduce + cluster) of 12 models x 6 datasets x 14 configurations",
        "",
        f"Command: `nice .venv/bin/python benchmarks/paper_run_projection.py --sizes {' '.join(map(str, sizes))} "
        f"--umap-sizes {' '.join(map(str, args.umap_sizes))}` "
        f"(this file; {elapsed / 60:.1f} min on a shared 2-core machine, BLAS limited to 1 thread; synthetic "
        f"{args.dim}-d unit-norm embeddings around 30 centres). Measured per split at n = "
        f"{', '.join(map(str, sizes))}; fitted `seconds = a * n^b`; projected to the paper's split sizes "
        "(below) for 12 models (all taken as 768-d; three are 1024-d, one 384-d: +4% on the dimension-bound "
        "steps). Makespan: greedy longest-job-first on 16 cores, reduce jobs before their cluster jobs, "
        "embeddings ready at 0 (the GPU side is not included).",
        "",
        "## Result",
        "",
        "| | jobs | CPU core-hours (used) | core-hours reserved (threads x time) | makespan on 16 cores (h) "
        "| longest job (s) | peak declared memory (GB) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for variant in ("before", "after"):
        r = result[variant]
        lines.append(
            f"| {variant} | {r['jobs']} | {r['cpu_hours']:.2f} | {r['reserved_core_hours']:.2f} | "
            f"{r['makespan_hours']:.2f} | {r['longest_job_s']:.0f} | {r['peak_mem_gb']:.1f} |"
        )
    after = result["after"]
    met = after["reserved_core_hours"] <= 8 and after["makespan_hours"] <= 0.6
    lines += ["", f"Targets (≤ 8 core-hours, ≤ 0.6 h makespan on 16 cores): **{'met' if met else 'NOT met'}**.", ""]
    lines += [
        "## Where the CPU goes (projected core-hours over the whole run)",
        "",
        "| step | before | after |",
        "|---|---:|---:|",
    ]
    for r in REDUCTIONS:
        lines.append(
            f"| reduce {r} | {steps[(f'reduce {r}', 'before')] / 3600:.2f} | "
            f"{steps[(f'reduce {r}', 'after')] / 3600:.2f} |"
        )
    for a, r in CONFIGURATIONS:
        lines.append(
            f"| {a} on {r} | {steps[(f'{a} on {r}', 'before')] / 3600:.2f} | "
            f"{steps[(f'{a} on {r}', 'after')] / 3600:.2f} |"
        )
    n_reduce_before, n_reduce_after = N_MODELS * 6, N_MODELS * 6 * 3
    n_cluster_after = N_MODELS * 6 * 14
    lines += ["", "Per-process costs (CPU seconds, fresh process):", ""]
    lines += [f"- {k}: {v:.2f} s" for k, v in fixed.items()]
    lines += [
        f"- so the umap compile costs {n_reduce_before} x {fixed['compile cost per process, no cache']:.1f} s"
        f" = {n_reduce_before * fixed['compile cost per process, no cache'] / 3600:.2f} core-hours before, "
        f"{n_reduce_after} x {fixed['compile cost per process, cache']:.1f} s after (cache); "
        f"starting {n_cluster_after} cluster + {n_reduce_after} reduce processes costs "
        f"{(n_cluster_after * fixed['cluster job imports'] + n_reduce_after * fixed['reduce job imports']) / 3600:.2f}"
        " core-hours (included above)."
    ]
    lines += [
        "",
        "## Measured per-split seconds and fitted growth",
        "",
        "| step | variant | " + " | ".join(f"n={n}" for n in sizes) + " | fit a·n^b: b | at 26,221 (s) |",
        "|---|---|" + "---:|" * len(sizes) + "---:|---:|",
    ]
    for (step, variant), pts in costs.items():
        a, b = fits[(step, variant)]
        if step.startswith("reduce"):
            lines.append(
                f"| {step} | {variant.replace(' | ', ', ')} | "
                + ", ".join(f"n={n}: {t:.3f}" for n, t in pts)
                + f" | {b:.2f} | {a * 26221**b:.1f} if in this regime |"
            )
            continue
        lines.append(
            f"| {step} | {variant} | "
            + " | ".join(f"{t:.3f}" for _, t in pts)
            + f" | {b:.2f} | {step_cost(fits, step, variant, 26221):.1f} |"
        )
    lines += [
        "",
        "Cross-check: scikit-learn Ward on one 26,000 x 768 split measured 225.5 s on this machine "
        "(benchmarks/cluster_results_26k.md); the fit above gives the 'agglomerative on none, before' row.",
        "",
        "## Exactness",
        "",
    ]
    lines += [f"- {c}" for c in checks]
    lines += ["", "## Split sizes used (paper Table 1 + split recipes, `paper_split_sizes`)", ""]
    for name, s in sizes_by_dataset.items():
        lines.append(f"- {name}: {len(s)} splits, {sum(s):,} items, {min(s):,}..{max(s):,}")
    lines += [
        "",
        "Raw numbers: " + json.dumps({"fits": {f"{k[0]} | {k[1]}": v for k, v in fits.items()}, "result": result}),
        "",
    ]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs=3, default=[2000, 5000, 9000])
    parser.add_argument(
        "--umap-sizes",
        type=int,
        nargs="*",
        default=[1000, 3500, 12000, 20000],
        help="further sizes for the reductions (umap: at least two per regime with --sizes)",
    )
    parser.add_argument("--dim", type=int, default=768)
    parser.add_argument(
        "--threads", type=int, default=None, help="cluster.threads for the 'after' jobs (default: config/config.yaml's)"
    )
    parser.add_argument("--out", default=str(Path(__file__).with_suffix(".md")))
    args = parser.parse_args(argv)
    import yaml

    threads = args.threads or yaml.safe_load(open(ROOT / "config" / "config.yaml")).get("cluster", {}).get("threads", 2)
    start = time.perf_counter()
    log = lambda m: print(m, flush=True)  # noqa: E731
    fixed = fixed_costs(log)
    costs, checks = measure(sorted(args.sizes), args.dim, log, umap_sizes=args.umap_sizes)
    fits = {k: fit(v) for k, v in costs.items()}
    sizes_by_dataset = paper_split_sizes()
    result, steps = project(fits, fixed, sizes_by_dataset, args.dim, threads)
    text = render(
        args,
        sorted(args.sizes),
        costs,
        fits,
        fixed,
        checks,
        result,
        steps,
        sizes_by_dataset,
        time.perf_counter() - start,
    )
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
