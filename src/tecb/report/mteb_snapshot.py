"""The snapshot of MTEB's published German clustering scores (``reference/mteb_published_de.csv``), built from a
local clone of mteb's results repository (``embeddings-benchmark/results``) for the ``kind: mteb`` models of the
given configs.

One row per (model, revision folder, task) found under ``results/{org}__{name}/{revision}/{task}.json`` for the
four German clustering tasks and their ``.v2`` versions, with the repository's last commit touching that file
(``source_commit``) and its path. A model with no such file gets a row in the second file,
``mteb_published_de_missing.csv``, saying so: the leaderboard then knows the score is not published rather than
missing from the snapshot.

    python -m tecb.report.mteb_snapshot RESULTS_CLONE reference/ config/modern.yaml config/leaderboard-de.yaml
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import yaml

from tecb.report.mteb_results import MTEB_TASKS

TASKS = [*MTEB_TASKS.values(), *(f"{task}.v2" for task in MTEB_TASKS.values())]
COLUMNS = [
    "model",
    "model_revision",
    "task",
    "main_score",
    "v_measure_std",
    "n_measures",
    "dataset_revision",
    "mteb_version",
    "source_commit",
    "source_path",
]


def mteb_model_names(configs: list[str | Path]) -> list[str]:
    """The mteb names of the ``kind: mteb`` models of the configs, in order, once each."""
    names: list[str] = []
    for config in configs:
        for spec in (yaml.safe_load(Path(config).read_text(encoding="utf-8")).get("models") or {}).values():
            if spec.get("kind") == "mteb" and spec["name"] not in names:
                names.append(spec["name"])
    return names


def _n_measures(scores: dict) -> int:
    measures = scores.get("v_measures") or []
    if isinstance(measures, dict):  # the .v2 tasks: per hierarchy level
        measures = next(iter(measures.values()), [])
    return len(measures)


def _test_scores(result: dict) -> dict:
    """The test split's scores: ``scores.test[0]`` (mteb >= 1.11), or the older files' ``test`` mapping (their
    ``main_score`` is the V-measure)."""
    if "scores" in result:
        return result["scores"]["test"][0]
    test = dict(result["test"])
    test.setdefault("main_score", test["v_measure"])
    return test


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def snapshot(repo: str | Path, models: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(published rows, models without one)`` from the results repository ``repo`` (a clone or a bare mirror:
    read at its ``HEAD`` through git)."""
    repo = Path(repo)
    rows, missing = [], []
    for model in models:
        folder = "results/" + model.replace("/", "__")
        paths = set(_git(repo, "ls-tree", "-r", "--name-only", "HEAD", folder + "/").split())
        found = [p for p in sorted(paths) if p.count("/") == 3 and p.rsplit("/", 1)[1][: -len(".json")] in TASKS]
        for path in found:
            result = json.loads(_git(repo, "show", f"HEAD:{path}"))
            scores = _test_scores(result)
            rows.append(
                {
                    "model": model,
                    "model_revision": path.split("/")[2],
                    "task": path.rsplit("/", 1)[1][: -len(".json")],
                    "main_score": round(float(scores["main_score"]), 6),
                    "v_measure_std": round(float(scores.get("v_measure_std", float("nan"))), 6),
                    "n_measures": _n_measures(scores),
                    "dataset_revision": result.get("dataset_revision"),
                    "mteb_version": result.get("mteb_version"),
                    "source_commit": _git(repo, "log", "-1", "--format=%H", "HEAD", "--", path).strip(),
                    "source_path": path,
                }
            )
        if not found:
            why = "no results folder" if not paths else "no German clustering task in its results"
            missing.append({"model": model, "reason": f"not published: {why} in the results repository"})
    return pd.DataFrame(rows, columns=COLUMNS), pd.DataFrame(missing, columns=["model", "reason"])


def write_snapshot(repo: str | Path, out_dir: str | Path, configs: list[str | Path]) -> tuple[Path, Path]:
    """Write ``mteb_published_de.csv`` and ``mteb_published_de_missing.csv`` into ``out_dir``: the configs' models
    and those the snapshot already there lists (a refresh drops none)."""
    out_dir = Path(out_dir)
    paths = out_dir / "mteb_published_de.csv", out_dir / "mteb_published_de_missing.csv"
    models = mteb_model_names(configs)
    if paths[0].exists():
        models += [m for m in pd.read_csv(paths[0])["model"].drop_duplicates() if m not in models]
    published, missing = snapshot(repo, models)
    published.to_csv(paths[0], index=False)
    missing.to_csv(paths[1], index=False)
    return paths


if __name__ == "__main__":
    import sys

    if len(sys.argv) < 4:
        sys.exit("usage: python -m tecb.report.mteb_snapshot RESULTS_CLONE OUT_DIR CONFIG [CONFIG ...]")
    for written in write_snapshot(sys.argv[1], sys.argv[2], sys.argv[3:]):
        print(written)
