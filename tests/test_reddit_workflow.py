"""The workflow builds both Reddit datasets from a fake Reddit API (real PRAW, tiny config)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from conftest import copy_project, run_snakemake
from fake_reddit import FakeReddit, make_posts

CLIENT_ID = "wf-client-id-77"
SECRET = "WORKFLOW-PLANTED-SECRET-e1"


@pytest.mark.workflow
def test_workflow_rehydrates_and_builds_both_reddit_datasets(tmp_path):
    workdir = copy_project(tmp_path / "project")
    posts = make_posts(700, n_subreddits=60, removed={"x0002", "x0100"}, deleted={"x0004"})
    ids = list(posts) + ["zz404"]
    (tmp_path / "ids.txt").write_text("id\n" + "\n".join(ids + ids[:30]) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.lower().startswith("praw_")}
    env.update(praw_client_id=CLIENT_ID, praw_client_secret=SECRET, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path))
    with FakeReddit(posts, CLIENT_ID, SECRET, script=[(429, {"retry-after": "0.2"})]) as fake:
        config = {
            "seed": 42,
            "sources": {
                "reddit": {
                    "ids_path": str(tmp_path / "ids.txt"),
                    "oauth_url": fake.url,
                    "reddit_url": fake.url,
                    "backoff_seconds": 0.05,
                    "user_agent": "tecb-test",
                }
            },
            "datasets": {
                "RedditClusteringS2S": {"source": "reddit", "text": "s2s"},
                "RedditClusteringP2P": {"source": "reddit", "text": "p2p"},
            },
            "models": {"tfidf": {"kind": "tfidf", "dim": 16}},
            "embed": {"device": "cpu"},
            "algorithms": {"kmeans": {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}}},
            "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
            "cluster": {"threads": 1},
        }
        (workdir / "config" / "reddit_test.yaml").write_text(yaml.safe_dump(config))
        targets = [f"results/scores/tfidf/{d}/none/kmeans.parquet" for d in config["datasets"]]
        proc = run_snakemake(workdir, "--configfile", "config/reddit_test.yaml", "--cores", "1", *targets, env=env)
        n_requests = len(fake.info_requests)
    assert n_requests == 8 + 1  # 701 distinct ids in batches of 100, plus the 429
    sub = pq.read_table(workdir / "resources/reddit/submissions.parquet")
    assert sub.num_rows == 700
    rehydrate_log = (workdir / "logs/reddit/rehydrate.log").read_text()
    assert "701 ids: 700 found, 1 missing" in rehydrate_log and "2 removed, 1 deleted" in rehydrate_log
    assert "731 ids, 701 distinct" in (workdir / "logs/reddit/ids.log").read_text()
    for name in config["datasets"]:
        splits = pq.read_table(workdir / f"results/datasets/{name}/splits.parquet")
        texts = pq.read_table(workdir / f"results/datasets/{name}/texts.parquet").column("text").to_pylist()
        labels = splits.column("label").to_pylist()
        per_split = {}
        for s, label in zip(splits.column("split").to_pylist(), labels):
            per_split.setdefault(s, Counter())[label] += 1
        assert sorted(per_split) == list(range(10))
        assert all(10 <= len(c) <= 50 for c in per_split.values())
        assert all("http" not in t and "[removed]" not in t and "[deleted]" not in t for t in texts)
        scores = pq.read_table(workdir / f"results/scores/tfidf/{name}/none/kmeans.parquet")
        assert scores.num_rows == 10
    # a second run has nothing to do: the rehydrated file is reused, no request is made
    again = run_snakemake(workdir, "--configfile", "config/reddit_test.yaml", "--cores", "1", *targets, "-n", env=env)
    assert "Nothing to be done" in again.stdout
    # no credential anywhere; no raw Reddit text in any log
    title = posts["x0001"]["title"]
    for path in Path(workdir).rglob("*"):
        if path.is_file() and "config" not in path.parts:
            data = path.read_bytes()
            assert SECRET.encode() not in data and CLIENT_ID.encode() not in data, path
            if path.suffix == ".log":
                assert title.encode() not in data, path
    assert SECRET not in proc.stdout and CLIENT_ID not in proc.stdout
