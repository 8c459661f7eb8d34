"""Seconds and peak memory per (reduction, algorithm) on one synthetic Reddit-sized split.

Each reduction and each clustering runs in its own child process, so its peak RSS (``ru_maxrss``
from ``os.wait4``) is its own. Synthetic data: ``--n`` points in ``--dim`` dimensions drawn around
``--labels`` Gaussian centres (seeded). Reductions are computed once and shared, as in the workflow.

    nice .venv/bin/python benchmarks/cluster_bench.py --n 26000 --dim 768 --out benchmarks/cluster_results.md
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONFIGURATIONS = [
    ("none", "kmeans"),
    ("none", "agglomerative"),
    ("pca", "kmeans"),
    ("pca", "agglomerative"),
    ("pca", "hdbscan"),
    ("pca", "dbstream"),
    ("umap", "kmeans"),
    ("umap", "agglomerative"),
    ("umap", "hdbscan"),
    ("umap", "dbstream"),
    ("pca_umap", "kmeans"),
    ("pca_umap", "agglomerative"),
    ("pca_umap", "hdbscan"),
    ("pca_umap", "dbstream"),
]
REDUCTIONS = {
    "pca": {"method": "pca", "n_components": 2},
    "umap": {"method": "umap", "n_components": 2, "metric": "cosine"},
    "pca_umap": {"method": "pca_umap", "pca_components": 50, "n_components": 2, "metric": "cosine"},
}
ALGORITHMS = {
    "kmeans": {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}},
    "agglomerative": {"method": "agglomerative"},
    "hdbscan": {"method": "hdbscan"},
    "dbstream": {"method": "dbstream"},
}


def data(n, dim, labels, seed=42):
    import numpy as np

    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(labels, dim)).astype(np.float32)
    y = rng.integers(0, labels, size=n)
    x = centres[y] + rng.normal(scale=0.8, size=(n, dim)).astype(np.float32)
    return x.astype(np.float32), y


def child(args):
    """Run one step in this process; print seconds and V-measure."""
    import numpy as np

    from tecb.cluster import algorithms as cluster
    from tecb.cluster import reduce
    from tecb.cluster.metrics import score

    work = Path(args.work)
    x, y = data(args.n, args.dim, args.labels)
    if args.step == "reduce":
        start = time.perf_counter()
        coords = reduce.reduce(x, seed=42, **REDUCTIONS[args.reduction])
        seconds = time.perf_counter() - start
        np.save(work / f"{args.reduction}.npy", coords)
        print(f"RESULT {seconds:.2f} nan nan")
        return
    points = x if args.reduction == "none" else np.load(work / f"{args.reduction}.npy")
    spec = dict(ALGORITHMS[args.algorithm])
    start = time.perf_counter()
    pred = cluster.cluster(points, spec["method"], len(set(y.tolist())), seed=42, **spec.get("params", {}))
    seconds = time.perf_counter() - start
    s = score(y, pred)
    print(f"RESULT {seconds:.2f} {s['v_measure']:.4f} {s['n_clusters']}")


def run_child(argv):
    proc = subprocess.Popen(
        [sys.executable, __file__, *argv],
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1"),
    )
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    line = [row for row in out.splitlines() if row.startswith("RESULT")]
    if status != 0 or not line:
        return None, usage.ru_maxrss / 1024, out[-300:]
    return line[0].split()[1:], usage.ru_maxrss / 1024, ""


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=26000)
    p.add_argument("--dim", type=int, default=768)
    p.add_argument("--labels", type=int, default=50)
    p.add_argument("--out", default="benchmarks/cluster_results.md")
    p.add_argument("--step", choices=["reduce", "cluster"])
    p.add_argument("--reduction")
    p.add_argument("--algorithm")
    p.add_argument("--work")
    args = p.parse_args()
    if args.step:
        return child(args)
    common = ["--n", str(args.n), "--dim", str(args.dim), "--labels", str(args.labels)]
    lines = [
        f"# Clustering benchmark: one synthetic split of {args.n} x {args.dim}, {args.labels} labels",
        "",
        f"Command: `nice .venv/bin/python benchmarks/cluster_bench.py --n {args.n} --dim {args.dim} "
        f"--labels {args.labels}` (one child process per step, 1 BLAS thread, {os.cpu_count()} CPUs, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}). Peak memory = child's max RSS "
        "(includes ~250 MB of Python + imports + the synthetic data).",
        "",
        "| step | reduction | algorithm | seconds | peak RSS (MB) | V-measure | clusters |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory() as work:
        for reduction in REDUCTIONS:
            res, rss, err = run_child(["--step", "reduce", "--reduction", reduction, "--work", work, *common])
            lines.append(f"| reduce | {reduction} | — | {res[0] if res else 'FAILED ' + repr(err)} | {rss:.0f} | | |")
            print(lines[-1], flush=True)
        for reduction, algorithm in CONFIGURATIONS:
            res, rss, err = run_child(
                ["--step", "cluster", "--reduction", reduction, "--algorithm", algorithm, "--work", work, *common]
            )
            cells = res if res else [f"FAILED {err!r}", "", ""]
            lines.append(f"| cluster | {reduction} | {algorithm} | {cells[0]} | {rss:.0f} | {cells[1]} | {cells[2]} |")
            print(lines[-1], flush=True)
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
