"""How far the demo's Table 2 depends on the CPU's numeric kernels (issue 21.6).

The demo's Table 2 (k-means on raw embeddings) is recomputed with the library's own functions (the workflow's
``embed_dataset`` and ``run_configuration``, the demo's model and k-means settings, BLAS/OpenMP on one thread as
the demo's cluster jobs run) from already built demo datasets, once per setting, each in a fresh process:

- ``OPENBLAS_CORETYPE`` = the machine's default kernels, ``Haswell`` (AVX2) and ``Prescott`` (SSE3): numpy's,
  scipy's and scikit-learn's wheels bundle OpenBLAS, which honours it at load time;
- the default kernels with 2 BLAS/OpenMP threads in the embedding step (the TF-IDF SVD).

For each setting it records the largest embedding difference from the default run and every Table 2 cell that
differs (mean V-measure x 100 over the splits, as Table 2 prints it), and separates the two sources: the same
default-kernel embeddings clustered under each kernel ("cluster only").

    nice -n 10 .venv/bin/python benchmarks/blas_kernels.py --demo results/demo
    # results/demo needs datasets/ and models/tiny-bert (snakemake --configfile config/demo.yaml --until embed)

Writes ``benchmarks/blas_kernels.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # this checkout's library
from tecb.report.tables import PAPER_DATASETS as DATASETS  # noqa: E402

MODELS = {  # config/demo.yaml
    "tfidf": {"name": "TF-IDF + SVD", "kind": "tfidf", "dim": 256},
    "tfidf-64": {"name": "TF-IDF + SVD (64 dims)", "kind": "tfidf", "dim": 64},
    "tiny-bert": {"name": "tiny BERT (random init)", "kind": "tiny-bert"},
}
KMEANS = {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}}
SETTINGS = {  # name -> (environment, embedding threads)
    "default kernels": ({}, 1),
    "Haswell": ({"OPENBLAS_CORETYPE": "Haswell"}, 1),
    "Prescott": ({"OPENBLAS_CORETYPE": "Prescott"}, 1),
    "default kernels, 2 threads in the embedding step": ({}, 2),
}
SEED = 42


def worker(demo: Path, out: Path, embed_threads: int, embeddings_from: Path | None) -> None:
    """Embed (unless ``embeddings_from``) and cluster every (model, dataset) into ``out``."""
    import pandas as pd
    import threadpoolctl
    import torch

    from tecb.cluster.algorithms import ClusterFiles, run_configuration
    from tecb.embed.encode import EmbedJob, embed_dataset
    from tecb.embed.spec import encoder_settings

    torch.set_num_threads(1)
    blas = [i.get("architecture") for i in threadpoolctl.threadpool_info() if i.get("internal_api") == "openblas"]
    rows = []
    for model, spec in MODELS.items():
        spec = {**spec, "path": str(demo / "models" / "tiny-bert")} if spec["kind"] == "tiny-bert" else spec
        for dataset in DATASETS:
            data = demo / "datasets" / dataset
            emb = out / f"{model}.{dataset}.parquet"
            if embeddings_from is None:
                with threadpoolctl.threadpool_limits(embed_threads):
                    embed_dataset(
                        EmbedJob(
                            texts=data / "texts.parquet",
                            embeddings=emb,
                            model_spec=encoder_settings(spec, {}, dataset),
                            embed_options={"batch_size": 32, "device": "cpu"},
                            seed=SEED,
                            dataset=dataset,
                        ),
                        log=lambda *a: None,
                    )
            else:
                emb = embeddings_from / emb.name
            scores = out / f"{model}.{dataset}.scores.parquet"
            with threadpoolctl.threadpool_limits(1):
                run_configuration(
                    KMEANS,
                    files=ClusterFiles(
                        splits=data / "splits.parquet",
                        scores=scores,
                        timings=out / "t.parquet",
                        labels=out / "l.parquet",
                        embeddings=emb,
                    ),
                    seed=SEED,
                    threads=1,
                    log=lambda *a: None,
                )
            for r in pd.read_parquet(scores).to_dict("records"):
                rows.append({"model": model, "dataset": dataset, "split": r["split"], "v_measure": r["v_measure"]})
    pd.DataFrame(rows).to_parquet(out / "scores.parquet")
    (out / "blas.json").write_text(json.dumps(blas))


def run_worker(demo: Path, out: Path, env: dict, embed_threads: int, embeddings_from: Path | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, __file__, "--demo", str(demo), "--worker", str(out), "--embed-threads", str(embed_threads)]
    if embeddings_from is not None:
        cmd += ["--embeddings-from", str(embeddings_from)]
    full_env = {**os.environ, **env, "PYTHONPATH": str(HERE.parent / "src")}
    full_env.pop("OPENBLAS_NUM_THREADS", None)
    subprocess.run(cmd, check=True, env=full_env)


def compare(ref: Path, other: Path, embeddings: bool) -> tuple[float | None, list[dict], int]:
    """Largest embedding difference, the differing Table 2 cells and the number of differing split scores."""
    import numpy as np
    import pandas as pd

    from tecb.io import read_embeddings

    max_diff = None
    if embeddings:
        max_diff = 0.0
        for model in MODELS:
            for dataset in DATASETS:
                a, _ = read_embeddings(ref / f"{model}.{dataset}.parquet")
                b, _ = read_embeddings(other / f"{model}.{dataset}.parquet")
                max_diff = max(max_diff, float(np.abs(a.astype(float) - b.astype(float)).max()))
    sa, sb = pd.read_parquet(ref / "scores.parquet"), pd.read_parquet(other / "scores.parquet")
    joined = sa.merge(sb, on=["model", "dataset", "split"], suffixes=("_ref", "_other"))
    n_splits = int((joined.v_measure_ref != joined.v_measure_other).sum())
    cells = joined.groupby(["model", "dataset"], sort=False)[["v_measure_ref", "v_measure_other"]].mean() * 100
    diff = []
    for (model, dataset), r in cells.iterrows():
        a, b = round(r.v_measure_ref, 2), round(r.v_measure_other, 2)
        if a != b:
            diff.append({"model": MODELS[model]["name"], "dataset": dataset, "default": a, "this": b})
    return max_diff, diff, n_splits


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--demo", type=Path, required=True, help="a demo run's results folder (datasets/, models/)")
    ap.add_argument("--worker", type=Path)
    ap.add_argument("--embed-threads", type=int, default=1)
    ap.add_argument("--embeddings-from", type=Path)
    ap.add_argument("--out", type=Path, default=HERE / "blas_kernels.md")
    args = ap.parse_args()
    if args.worker:
        worker(args.demo.resolve(), args.worker, args.embed_threads, args.embeddings_from)
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        dirs = {}
        for i, (name, (env, threads)) in enumerate(SETTINGS.items()):
            dirs[name] = tmp / f"s{i}"
            run_worker(args.demo, dirs[name], env, threads)
        ref = dirs["default kernels"]
        cluster_only = {}
        for name, (env, _) in SETTINGS.items():
            if env:
                cluster_only[name] = tmp / f"c{len(cluster_only)}"
                run_worker(args.demo, cluster_only[name], env, 1, embeddings_from=ref)
        blas = json.loads((ref / "blas.json").read_text())
        lines = [
            "# The demo's Table 2 under other CPU kernels",
            "",
            "`benchmarks/blas_kernels.py` (see its docstring): the demo's k-means-on-raw Table 2 (3 models x 6 "
            "datasets, 18 cells, "
            f"V-measure x 100 with 2 decimals) recomputed per setting in a fresh process. Machine: "
            f"{_cpu()}; default OpenBLAS kernels here: {', '.join(dict.fromkeys(blas))}.",
            "",
            "| setting | max abs embedding difference | split scores that differ | Table 2 cells that differ |",
            "|---|---:|---:|---|",
        ]
        for name in SETTINGS:
            if name == "default kernels":
                continue
            emb, cells, n = compare(ref, dirs[name], embeddings=True)
            lines.append(f"| {name} | {emb:.3g} | {n} | {_cells(cells)} |")
        for name, path in cluster_only.items():
            _, cells, n = compare(ref, path, embeddings=False)
            lines.append(f"| {name}, cluster only (default-kernel embeddings) | 0 | {n} | {_cells(cells)} |")
        n_cells = len(MODELS) * len(DATASETS)
        lines += ["", f"Cells: {n_cells} per setting (the Average column follows from them).", ""]
        args.out.write_text("\n".join(lines) + "\n")
        print("\n".join(lines))


def _cells(cells: list[dict]) -> str:
    if not cells:
        return "none"
    return "; ".join(f"{c['model']} {c['dataset']}: {c['default']:.2f} -> {c['this']:.2f}" for c in cells)


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    main()
