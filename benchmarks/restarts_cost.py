"""What ``scoring.restarts`` costs (issue 53 item 1): CPU seconds of one clustering configuration at R = 1 and R = 10.

Each of the demo's 14 configurations (config/demo.yaml's algorithms and reductions) clusters and scores with the
library's own :func:`tecb.cluster.algorithms.cluster_splits`, the function both execution modes run, once at R = 1
and once at R = 10 (:func:`~tecb.cluster.algorithms.with_restarts`), in this process with BLAS/OpenMP on one thread
(as the demo's cluster jobs run: ``cluster.threads: 1``), timed in CPU seconds of the thread that runs them
(``time.thread_time``: the machine's other load does not count, nor idle library threads spinning, such as
numba's after the UMAPs, which inflated a whole-process ``process_time`` several-fold on the loaded machine). Only the clustering and scoring are timed: a reduction is computed once and
restarts never repeat it. Each configuration runs once untimed on the same data first (a first call's
setup would otherwise count against R = 1). Two inputs:

- **demo size**: the TF-IDF + SVD model (256 dims) of a demo run on ``--datasets`` (default: TenKGnad S2S, 10
  splits of 149 texts on average; ``--demo``: a ``results/demo`` folder with ``datasets/``, ``embeddings/`` and
  ``reduced/``); per configuration the CPU seconds of one cluster job (all splits of one dataset), averaged over
  the datasets;
- **a 2,000-text split**: the titles of GermEval 2019's dev blurbs (``--blurbs``, 2,079 books; label: the first
  top-level genre) embedded by the same TF-IDF + SVD (256 dims), reduced by the demo's three reductions, one split.

Beside the cost: the V-measure at R = 1, the mean of the 10 states and their SD (the clustering noise one run
carries).

    nice -n 10 .venv/bin/python benchmarks/restarts_cost.py --demo results/demo \\
        --blurbs ../shared/data/real/germeval2019/blurbs_dev.txt

Writes ``benchmarks/restarts_cost.md``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# one thread in every OpenMP/BLAS runtime, set before any is loaded: threadpoolctl limits the runtimes it finds,
# but a second OpenMP runtime loaded later (hdbscan, umap's numba) left scikit-learn's k-means kernels spinning at
# their barriers on the loaded machine, which counted as this thread's CPU (x20 for k-means)
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_name] = "1"

import numpy as np  # noqa: E402
import yaml  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))  # this checkout's library

DEMO = yaml.safe_load((ROOT / "config" / "demo.yaml").read_text())
SEED = DEMO["seed"]
MODEL = "tfidf"
RESTARTS = (1, 10)
DATASETS = ("TenKGnadClusteringS2S",)


def configurations() -> list[tuple[str, str, dict]]:
    """``(algorithm, reduction, spec)`` of the demo's configurations, in its order."""
    return [(c["algorithm"], c["reduction"], DEMO["algorithms"][c["algorithm"]]) for c in DEMO["configurations"]]


def timed(data, spec: dict, restarts: int) -> tuple[float, list[dict]]:
    """CPU seconds and score rows of :func:`cluster_splits` on ``data`` (``[(split, points, labels)]``)."""
    from tecb.cluster.algorithms import cluster_splits, with_restarts

    start = time.thread_time()
    rows = cluster_splits(data, with_restarts(spec, restarts), seed=SEED, log=lambda m: None, threads=1)[0]
    return time.thread_time() - start, rows


def noise(rows: list[dict]) -> tuple[float, float]:
    """The mean over splits of the restart-averaged V-measure and of its SD over the states (x 100)."""
    means = [r["v_measure"] for r in rows]
    sds = [np.std(r["v_measure_restarts"], ddof=1) if len(r["v_measure_restarts"]) > 1 else 0.0 for r in rows]
    return 100 * float(np.mean(means)), 100 * float(np.mean(sds))


def measure(points: dict[str, list], label: str) -> list[dict]:
    """One record per configuration: CPU seconds at each R and the V-measures; ``points``: reduction -> data."""
    out = []
    for algorithm, reduction, spec in configurations():
        data = points[reduction]
        seconds, rows = {}, {}
        timed(data, spec, 1)  # untimed: first calls on this data (BLAS buffers, caches) would count against R = 1
        for r in RESTARTS:
            seconds[r], rows[r] = timed(data, spec, r)
        v10, sd10 = noise(rows[10])
        out.append(
            {
                "configuration": f"{algorithm} / {reduction}",
                "splits": len(data),
                "texts": int(np.mean([len(y) for _, _, y in data])),
                "cpu1": seconds[1],
                "cpu10": seconds[10],
                "states": rows[10][0]["restarts"],
                "v1": 100 * float(np.mean([r["v_measure"] for r in rows[1]])),
                "v10": v10,
                "sd10": sd10,
            }
        )
        print(f"{label} {algorithm}/{reduction}: {seconds[1]:.2f} -> {seconds[10]:.2f} CPU-s", flush=True)
    return out


def demo_points(demo: Path, datasets) -> list[dict[str, list]]:
    """Per demo dataset: reduction (and ``none``) -> ``[(split, points, labels)]`` of the TF-IDF model."""
    from tecb.cluster.algorithms import load_points

    per_dataset = []
    for dataset in datasets:
        splits = demo / "datasets" / dataset / "splits.parquet"
        points = {"none": load_points(splits, embeddings_path=demo / "embeddings" / MODEL / f"{dataset}.parquet")}
        for r in DEMO["reductions"]:
            points[r] = load_points(splits, reduced_path=demo / "reduced" / MODEL / dataset / f"{r}.parquet")
        per_dataset.append({r: [(s, x, y) for s, _, x, y in data] for r, data in points.items()})
    return per_dataset


def blurbs_points(path: Path) -> tuple[dict[str, list], int]:
    """One split of the dev blurbs' titles (label: first top-level genre): reduction (and ``none``) -> data."""
    from tecb.cluster.reduce import reduce
    from tecb.data.sources.germeval import read_blurbs
    from tecb.embed.encode import tfidf_vectors

    books = [b for b in read_blurbs(path) if b.genres(0)]
    labels = np.array([b.genres(0)[0] for b in books], dtype=object)
    x = tfidf_vectors([b.title for b in books], dim=DEMO["models"][MODEL]["dim"], seed=SEED)
    points = {"none": [(0, x, labels)]}
    for r, spec in DEMO["reductions"].items():
        spec = dict(spec)
        points[r] = [(0, reduce(x, spec.pop("method"), seed=SEED, **spec), labels)]
    return points, len(np.unique(labels))


def table(records: list[dict]) -> list[str]:
    lines = [
        "| configuration | splits | texts per split | CPU-s R = 1 | CPU-s R = 10 | ratio | states run | V R = 1 | "
        "V mean of 10 | SD over states |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in records:
        lines.append(
            f"| {r['configuration']} | {r['splits']} | {r['texts']} | {r['cpu1']:.2f} | {r['cpu10']:.2f} | "
            f"{r['cpu10'] / max(r['cpu1'], 1e-9):.1f} | {r['states']} | {r['v1']:.2f} | {r['v10']:.2f} | "
            f"{r['sd10']:.2f} |"
        )
    one, ten = sum(r["cpu1"] for r in records), sum(r["cpu10"] for r in records)
    lines.append(f"| all 14 | | | {one:.2f} | {ten:.2f} | {ten / one:.1f} | | | | |")
    return lines


def averaged(per_dataset: list[list[dict]]) -> list[dict]:
    """The records of the demo datasets averaged per configuration (one cluster job's cost on a demo dataset)."""
    out = []
    for i, first in enumerate(per_dataset[0]):
        group = [records[i] for records in per_dataset]
        out.append(
            {
                "configuration": first["configuration"],
                "states": first["states"],
                **{k: float(np.mean([g[k] for g in group])) for k in ("splits", "texts")},
                **{k: float(np.mean([g[k] for g in group])) for k in ("cpu1", "cpu10", "v1", "v10", "sd10")},
            }
        )
    for r in out:
        r["splits"], r["texts"] = round(r["splits"]), round(r["texts"])
    return out


def summary(name: str, records: list[dict]) -> str:
    """One quotable line: the k-means configurations' and all 14's cost ratios."""
    kmeans = [r for r in records if r["configuration"].startswith("kmeans")]
    k1, k10 = sum(r["cpu1"] for r in kmeans), sum(r["cpu10"] for r in kmeans)
    a1, a10 = sum(r["cpu1"] for r in records), sum(r["cpu10"] for r in records)
    return (
        f"Summary, {name}: the 4 k-means configurations {k1:.2f} -> {k10:.2f} CPU-s ({k10 / k1:.1f}x); "
        f"all 14 configurations {a1:.2f} -> {a10:.2f} CPU-s ({a10 / a1:.1f}x)"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--demo", type=Path, required=True, help="a results/demo folder")
    parser.add_argument("--blurbs", type=Path, required=True, help="GermEval 2019's blurbs_dev.txt")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), help="demo datasets (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=HERE / "restarts_cost.md")
    args = parser.parse_args(argv)

    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        rng = np.random.default_rng(0)  # untimed warm-up: every method's imports
        y = np.repeat(np.array(["a", "b"], dtype=object), 20)
        for _, _, spec in configurations():
            timed([(0, rng.normal(size=(40, 2)), y)], spec, 2)
        per_dataset = demo_points(args.demo, args.datasets)
        demo = averaged([measure(points, dataset) for dataset, points in zip(args.datasets, per_dataset)])
        blurbs_data, n_labels = blurbs_points(args.blurbs)
        blurbs = measure(blurbs_data, "blurbs")
    n_texts = blurbs[0]["texts"]
    text = [
        "# What scoring.restarts costs per clustering configuration",
        "",
        "Written by `benchmarks/restarts_cost.py` (its docstring says how): CPU seconds of the clustering thread",
        "(`time.thread_time`; BLAS and OpenMP on one thread, as `cluster.threads: 1`) of clustering and scoring with",
        "`tecb.cluster.algorithms.cluster_splits`, the function the cluster jobs and the cluster batch run, at",
        "`scoring.restarts` 1 and 10; reductions computed once, outside the timing (restarts never repeat them).",
        "Ward and HDBSCAN are deterministic and run once at any R (states run: 1). The V columns are x 100, means over",
        "the splits; SD over states: the SD of the 10 states' V-measures (the clustering noise of one run), mean over",
        "the splits. Measured on the shared 2-core machine with `nice -n 10`: CPU seconds, not wall time; one",
        "measurement each.",
        "",
        summary("demo size", demo),
        "",
        summary(f"one {n_texts}-text split", blurbs),
        "",
        "## Demo size: the TF-IDF + SVD model (256 dims) of a demo run, one cluster job (all splits of a dataset),"
        f" mean over {', '.join(args.datasets)}",
        "",
        *table(demo),
        "",
        f"## One {n_texts}-text split: the titles of GermEval 2019's dev blurbs ({n_labels} top-level genres),"
        f" TF-IDF + SVD (256 dims)",
        "",
        *table(blurbs),
        "",
    ]
    args.out.write_text("\n".join(text))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
