"""The leaderboard table (issue 37.4) on the shipped snapshot of MTEB's published German clustering scores."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from tecb.report.leaderboard import TASK_REVISIONS, leaderboard, ours_paper, ours_v2, read_published, to_markdown

SNAPSHOT = Path(__file__).resolve().parents[1] / "reference" / "mteb_published_de.csv"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_REVISION = "8b3219a92973c328a8e22fadcfa821b5dc75636a"


@pytest.fixture
def published():
    return read_published(SNAPSHOT)


def test_snapshot_names_its_source_for_every_value(published):
    assert len(published) >= 6 and published.main_score.between(0, 1).all()
    assert published.source_commit.str.fullmatch(r"[0-9a-f]{40}").all()
    assert all(
        p.startswith(f"results/{m.replace('/', '__')}/{r}/{t}.json")
        for m, r, t, p in zip(published.model, published.model_revision, published.task, published.source_path)
    )
    minilm = published[published.model == MINILM].set_index("task")
    # the MiniLM's published TenKGnad and Blurbs scores (mteb 1.18.0's results files)
    assert minilm.loc["TenKGnadClusteringS2S", "main_score"] == 0.133183
    assert minilm.loc["BlurbsClusteringP2P", "main_score"] == 0.199438


def _summary(rows):
    return pd.DataFrame(
        [{"model": m, "dataset": d, "reduction": "none", "algorithm": "kmeans", "v_measure": v} for m, d, v in rows],
        columns=["model", "dataset", "reduction", "algorithm", "v_measure"],
    )


def test_published_and_ours_side_by_side_with_honest_comparability(published):
    pub = published[published.model == MINILM].set_index("task").main_score
    summary = _summary(
        [
            ("minilm", "BlurbsClusteringS2S", pub["BlurbsClusteringS2S"] + 0.001),  # within the published spread
            ("minilm", "TenKGnadClusteringS2S", pub["TenKGnadClusteringS2S"] + 0.05),  # 5 points off: reported
            ("minilm", "BlurbsClusteringP2P", 0.25),  # splits built here: not mteb's task data
        ]
    )
    tasks = {
        "BlurbsClusteringS2S": "BlurbsClusteringS2S",
        "TenKGnadClusteringS2S": "TenKGnadClusteringS2S",
        "BlurbsClusteringP2P": None,
    }
    v2 = ours_v2(
        pd.DataFrame(
            {
                "model": ["minilm"],
                "dataset": ["BlurbsClusteringS2S"],
                "v_measure": [0.2],
                "mteb_task": ["BlurbsClusteringS2S.v2"],
                "comparable": [False],
                "not_comparable_because": ["seed 1 (mteb: 42)"],
            }
        )
    )
    ours = pd.concat([ours_paper(summary, tasks), v2])
    table = leaderboard(published, ours, {"minilm": (MINILM, MINILM_REVISION)}, {"minilm": "MiniLM"}).set_index("task")
    assert set(table.index) == set(published[published.model == MINILM].task)  # every published task, once
    assert {"BlurbsClusteringS2S", "TenKGnadClusteringP2P", "BlurbsClusteringS2S.v2"} <= set(table.index)
    s2s = table.loc["BlurbsClusteringS2S"]
    assert s2s.comparable and s2s.status == "comparable" and s2s.difference == pytest.approx(0.1)
    assert s2s.published == pytest.approx(9.3845) and s2s.ours == pytest.approx(9.4845)
    gnad = table.loc["TenKGnadClusteringS2S"]
    assert gnad.comparable and gnad.difference == pytest.approx(5.0)
    assert "differs by more than the published spread" in gnad.status
    assert gnad.spread == pytest.approx(100 * 0.013186 / math.sqrt(10))
    p2p = table.loc["BlurbsClusteringP2P"]
    assert not p2p.comparable and math.isnan(p2p.difference) and p2p.ours == pytest.approx(25.0)
    assert p2p.status.startswith("not comparable: the paper protocol's BlurbsClusteringP2P is not mteb's task data")
    assert table.loc["TenKGnadClusteringP2P"].status == (
        "not comparable: no project score on this task (dataset or protocol not in this run)"
    )
    assert table.loc["BlurbsClusteringS2S.v2"].status == "not comparable: seed 1 (mteb: 42)"
    md = to_markdown(table.reset_index())
    assert "| MiniLM | TenKGnadClusteringS2S | 13.32 | 18.32 | 5.00 |" in md
    commit = published[(published.model == MINILM) & (published.task == "TenKGnadClusteringS2S")].source_commit.iloc[0]
    assert f"embeddings-benchmark/results@{commit}:results/" in md


def test_another_revision_or_dataset_revision_is_not_comparable(published):
    summary = _summary([("m", "BlurbsClusteringS2S", 0.1)])
    ours = ours_paper(summary, {"BlurbsClusteringS2S": "BlurbsClusteringS2S"})
    row = leaderboard(published, ours, {"m": (MINILM, "main")}).set_index("task").loc["BlurbsClusteringS2S"]
    assert not row.comparable and f"published for revision {MINILM_REVISION}, run with main" in row.status
    old = published.assign(dataset_revision="0" * 40)
    row = leaderboard(old, ours, {"m": (MINILM, MINILM_REVISION)}).set_index("task").loc["BlurbsClusteringS2S"]
    assert not row.comparable and TASK_REVISIONS["BlurbsClusteringS2S"] in row.status


def test_a_model_without_a_published_score_gets_one_row_saying_why(published):
    """A model of the run that the snapshot has no value for: one row with the reason the snapshot's builder
    recorded (``mteb_published_de_missing.csv``), else that the snapshot has none (issue 44 item 2)."""
    ours = ours_paper(_summary([]), {})
    table = leaderboard(published, ours, {"x": ("tecb/x", "rev")}, missing={"tecb/x": "not published: because"})
    assert len(table) == 1 and table.status.iloc[0] == "not published: because" and not table.comparable.iloc[0]
    table = leaderboard(published, ours, {"x": ("tecb/x", "rev")})
    assert "no published score in the snapshot" in table.status.iloc[0]
    assert "n/a" in to_markdown(table)


def test_every_mteb_model_of_the_shipped_configs_is_published_or_says_why(published):
    """reference/: every `kind: mteb` model of config/modern.yaml and config/leaderboard-de.yaml has published rows
    or a reason in mteb_published_de_missing.csv, never both (tecb.report.mteb_snapshot wrote them)."""
    from tecb.report.leaderboard import read_missing
    from tecb.report.mteb_snapshot import mteb_model_names

    configs = [SNAPSHOT.parents[1] / "config" / name for name in ("modern.yaml", "leaderboard-de.yaml")]
    missing = read_missing(SNAPSHOT)
    for name in mteb_model_names(configs):
        assert (name in set(published.model)) != (name in missing), name


def test_the_snapshot_builder_reads_a_results_repository(tmp_path):
    """tecb.report.mteb_snapshot on a two-commit results repository: the rows, the commit each file came from, a
    model without German clustering results named as missing."""
    import json
    import subprocess

    from tecb.report.mteb_snapshot import snapshot

    repo = tmp_path / "results-repo"
    folder = repo / "results" / "org__model" / "abc123"
    folder.mkdir(parents=True)
    (repo / "results" / "org__other" / "r1").mkdir(parents=True)
    (repo / "results" / "org__other" / "r1" / "STS22.json").write_text("{}")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    scores = {"main_score": 0.25, "v_measure_std": 0.05, "v_measures": [0.2, 0.3]}
    (folder / "BlurbsClusteringS2S.json").write_text(
        json.dumps({"dataset_revision": "d1", "mteb_version": "1.18.0", "scores": {"test": [scores]}})
    )
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    (folder / "TenKGnadClusteringP2P.v2.json").write_text(  # the older format; v2's measures per level
        json.dumps(
            {
                "dataset_revision": "d2",
                "mteb_version": "1.12.75",
                "test": {"v_measure": 0.5, "v_measures": {"Level 0": [0.5] * 10}},
            }
        )
    )
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "two"], check=True)
    first, second = subprocess.run([*git, "log", "--format=%H"], capture_output=True, text=True).stdout.split()[::-1]
    rows, missing = snapshot(repo, ["org/model", "org/other", "org/none"])
    assert rows[["task", "main_score", "n_measures", "source_commit"]].values.tolist() == [
        ["BlurbsClusteringS2S", 0.25, 2, first],
        ["TenKGnadClusteringP2P.v2", 0.5, 10, second],
    ]
    assert set(rows.model_revision) == {"abc123"}
    assert missing.model.tolist() == ["org/other", "org/none"]
    assert "no German clustering task" in missing.reason[0] and "no results folder" in missing.reason[1]


SIZE_CLASSES = [(0, 150e6), (150e6, 600e6), (600e6, 1e9), (1e9, math.inf)]


def test_leaderboard_config_takes_the_best_published_model_of_each_size_class(published):
    """config/leaderboard-de.yaml: per size class, the snapshot's best TenKGnadClusteringP2P model (its ranking)."""
    import yaml

    mteb = pytest.importorskip("mteb")
    from tecb.embed.mteb_model import model_meta

    config = yaml.safe_load((SNAPSHOT.parents[1] / "config" / "leaderboard-de.yaml").read_text())
    chosen = {m["name"] for m in config["models"].values()}
    assert all(m["kind"] == "mteb" for m in config["models"].values())
    ranked = published[published.task == "TenKGnadClusteringP2P"]
    size = {name: model_meta(name).n_parameters for name in ranked.model}
    for low, high in SIZE_CLASSES:
        in_class = ranked[[low < size[n] <= high for n in ranked.model]]
        best = set(in_class.sort_values("main_score").model.tail(1))
        assert best == chosen & {n for n in size if low < size[n] <= high}, (low, high)
        assert all(mteb.get_model_meta(n).languages and "deu-Latn" in mteb.get_model_meta(n).languages for n in best)


def test_the_leaderboard_config_scores_mtebs_own_task_data():
    """config/leaderboard-de.yaml's datasets are MTEB's task data (published splits at mteb's revisions, mteb's
    k-means and seed): its leaderboard rows can compare."""
    from tecb.config import layered_config
    from tecb.configcheck import validated_config
    from tecb.report.mteb_results import mteb_task_of

    root = SNAPSHOT.parents[1]
    config = validated_config(
        layered_config(root, root, [root / "config" / "leaderboard-de.yaml"]),
        root / "workflow" / "schemas" / "config.schema.yaml",
    )
    tasks = {
        name: mteb_task_of(d, config["sources"], kmeans=config["algorithms"]["kmeans"], seed=config["seed"])
        for name, d in config["datasets"].items()
    }
    assert tasks == {name: name for name in config["datasets"]} and len(tasks) == 4


def test_a_published_value_without_its_per_split_values_has_no_spread(published):
    """Some results files (an external submission, mteb 1.0's) list no per-split values: n_measures 0, spread n/a,
    and a comparable difference is shown without the spread's mark rather than dividing by zero."""
    lone = published[published.model == MINILM].head(1).assign(n_measures=0)
    task = lone.task.iloc[0]
    ours = ours_paper(_summary([("m", task, 0.5)]), {task: task})
    row = leaderboard(lone, ours, {"m": (MINILM, MINILM_REVISION)}).iloc[0]
    assert math.isnan(row.spread) and row.comparable and row.status == "comparable"
