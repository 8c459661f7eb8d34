"""The SLURM profile, run for real: a single-node SLURM (munge, mariadb + slurmdbd, slurmctld, slurmd with one
fake GPU) is installed and started by tests/slurm/start.sh, a tiny config runs through
`--workflow-profile profiles/slurm` exactly as the README says, and its scores must equal a local run's; the SLURM
run embeds the tiny BERT in shards (embed.shard_size) with the embedding store on (embed.cache_dir: the store's
entries computed by the jobs on the cluster's nodes) and must write the local, unsharded run's bytes."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import DEMO_SOURCES, ROOT, copy_project, run_snakemake
from helpers import slurm_plan as plan

from tecb.io import read_embeddings

pytestmark = [pytest.mark.slurm, pytest.mark.workflow]

# Opt-in: tests/slurm/start.sh installs SLURM with apt-get as root. CI sets TECB_TEST_SLURM=1 (.ci/run).
OPT_IN = os.environ.get("TECB_TEST_SLURM") == "1"

SCRIPTS = ROOT / "tests" / "slurm"
STATE = Path(os.environ.get("TECB_SLURM_STATE", "/tmp/tecb-slurm"))
SKIP_RC = 3  # start.sh: "cannot run here" (not root, no SLURM and no apt-get)

# tfidf (no GPU) + tiny-bert (GPU) on one small dataset; kmeans on raw and PCA embeddings (PCA exercises the
# reduction inside the grouped cluster_batch job). Chain: build -> tiny_bert -> embed -> cluster_batch -> tables.
TINY = {
    "seed": 42,
    "sources": DEMO_SOURCES,
    "datasets": {"TenKGnadClusteringS2S": {"source": "million_posts", "text": "s2s"}},
    "models": {
        "tfidf": {"name": "TF-IDF + SVD", "kind": "tfidf", "dim": 64},
        "tiny-bert": {"name": "tiny BERT (random init)", "kind": "tiny-bert"},
    },
    "embed": {"batch_size": 32, "device": "cpu", "chunk_size": 64},  # 64: the demo's 240 texts are 4 chunks
    "reductions": {"pca": {"method": "pca", "n_components": 2}},
    "algorithms": {"kmeans": {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}}},
    "configurations": [{"algorithm": "kmeans", "reduction": "none"}, {"algorithm": "kmeans", "reduction": "pca"}],
    "cluster": {"threads": 1, "batch": True},  # one cluster_batch job per (model, dataset), as the demo
}


# the SLURM run of test_slurm_profile_matches_local_run: the tiny BERT in 2 shards of 128 and 112 texts, with the
# embedding store (embed.cache_dir), filled by the jobs on the cluster's nodes
SHARD_SIZE = 128
STORE = "resources/embedding-cache"

# The profile's first sacct poll comes 5 s after a submission, the next 10 s later: a test job (5-10 s, most of it
# the job step's Snakemake starting) is seen finished ~20 s after its submission. Polling 1 s after a submission
# (the next one 11 s after it) halves the waiting on this one-node cluster, whose jobs run one after another
# (~12 in the two tests); every other profile key is used as the README gives it.
POLL_SOONER = ("--slurm-init-seconds-before-status-checks", "1")


def _project(dest: Path) -> Path:
    copy_project(dest)
    if (ROOT / "envs").is_dir() and not (dest / "envs").exists():  # rules may name conda envs (envs/*.yaml)
        shutil.copytree(ROOT / "envs", dest / "envs")
    (dest / "config" / "tiny.yaml").write_text(yaml.safe_dump(TINY, sort_keys=False))
    sharded = dict(TINY, embed={**TINY["embed"], "shard_size": SHARD_SIZE, "cache_dir": STORE})
    (dest / "config" / "tiny-sharded.yaml").write_text(yaml.safe_dump(sharded, sort_keys=False))
    return dest


def _scores(workdir: Path) -> pd.DataFrame:
    df = pd.read_parquet(workdir / "results" / "scores.parquet").drop(columns=["seconds"], errors="ignore")
    keys = ["model", "dataset", "reduction", "algorithm", "split"]
    return df.sort_values(keys).reset_index(drop=True)


@pytest.fixture(scope="module")
def slurm_env():
    """A running single-node SLURM; stops exactly the daemons it started, also when the test fails."""
    if not OPT_IN:
        pytest.skip(
            "SLURM test is opt-in (it installs SLURM with apt-get as root): set TECB_TEST_SLURM=1; CI does (.ci/run)"
        )
    if shutil.which("bash") is None:
        pytest.skip("bash is missing")
    start = subprocess.run(["bash", str(SCRIPTS / "start.sh"), str(STATE)], capture_output=True, text=True)
    try:
        if start.returncode == SKIP_RC:
            pytest.skip(f"no SLURM here: {start.stdout.strip().splitlines()[-1]}")
        assert start.returncode == 0, f"tests/slurm/start.sh failed:\n{start.stdout}\n{start.stderr}"
        yield dict(os.environ, SLURM_CONF=str(STATE / "etc" / "slurm.conf"), PATH=os.environ["PATH"] + ":/usr/sbin")
    finally:
        subprocess.run(["bash", str(SCRIPTS / "stop.sh"), str(STATE)])


def test_slurm_profile_matches_local_run(slurm_env, tmp_path):
    pytest.importorskip("snakemake_executor_plugin_slurm")
    since = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() - 2))

    cluster = _project(tmp_path / "cluster")
    local = _project(tmp_path / "local")
    # planned before the datasets exist: the shard jobs appear once the checkpoint embed_plan has counted the texts
    planned = [job for job in plan(cluster, "--configfile", "config/tiny-sharded.yaml") if not job["local"]]
    with ThreadPoolExecutor(1) as pool:  # the local run overlaps the SLURM run's polling
        local_run = pool.submit(run_snakemake, local, "--configfile", "config/tiny.yaml", "--cores", "1")
        # the README's command (SLURM_CONF only points the clients at the test cluster's configuration)
        proc = run_snakemake(
            cluster,
            "--workflow-profile", "profiles/slurm", "--configfile", "config/tiny-sharded.yaml", *POLL_SOONER,
            env={"SLURM_CONF": slurm_env["SLURM_CONF"], "PATH": slurm_env["PATH"]},
        )  # fmt: skip
        local_run.result()

    # same numbers as the local run (only the timing column may differ)
    pd.testing.assert_frame_equal(_scores(cluster), _scores(local))
    assert (cluster / "results" / "tables" / "table2.md").is_file()
    # the tiny BERT's embeddings merged from 2 shard jobs: byte for byte the local run's single embed job's file;
    # with the store on the cluster, each the store's entry of its key, computed into it by its job on a node
    # (reuse across run folders: tests/test_embed_cache.py)
    dataset = next(iter(TINY["datasets"]))
    for model, writer in (("tfidf", "embed"), ("tiny-bert", "embed_merge")):
        path = Path("results", "embeddings", model, f"{dataset}.parquet")
        assert (cluster / path).read_bytes() == (local / path).read_bytes(), path
        entry = cluster / STORE / f"{read_embeddings(cluster / path)[1]['cache_key']}.parquet"
        assert entry.read_bytes() == (cluster / path).read_bytes() and entry.with_suffix(".json").exists(), path
        assert "computed into the cache" in (cluster / "logs" / writer / model / f"{dataset}.log").read_text()

    # what SLURM actually ran (from slurmdbd, as on a real cluster)
    acct = subprocess.run(
        ["sacct", "-a", "-X", "-n", "-P", "-S", since, "--format=JobID,Comment,Partition,ReqTRES,State"],
        capture_output=True, text=True, env=slurm_env, check=True,
    ).stdout  # fmt: skip
    jobs = [line.split("|")[1:] for line in acct.strip().splitlines()]  # (comment, partition, tres, state)
    assert jobs and all(state == "COMPLETED" for *_, state in jobs), acct
    gpu_embed = [j for j in jobs if j[0].startswith("rule_embed_shard_wildcards_tiny-bert_")]
    cpu_embed = [j for j in jobs if j[0].startswith("rule_embed_wildcards_tfidf_")]
    assert len(gpu_embed) == 2 and len(cpu_embed) == 1, acct  # tiny-bert: 2 shards; TF-IDF: not sharded
    assert not any(j[0].startswith("rule_embed_wildcards_tiny-bert_") for j in jobs), acct
    assert all(j[1] == "gpu" and "gres/gpu=1" in j[2] for j in gpu_embed), f"tiny-bert shard without a GPU:\n{acct}"
    # partitions chosen by the plugin from profiles/slurm/partitions.yaml: no GPU asked -> the CPU partition
    assert cpu_embed[0][1] == "cpu" and "gres/gpu" not in cpu_embed[0][2], f"tfidf embed job on a GPU:\n{acct}"
    assert not any("gres/gpu" in j[2] for j in jobs if not j[0].startswith("rule_embed_")), acct
    assert all(j[1] == "cpu" for j in jobs if not j[0].startswith(("rule_embed_", "rule_tiny_bert_"))), acct
    # download/demo rules stayed local; all cluster_batch jobs of a model (each also writing its cluster view; and
    # the tiny BERT's embed_merge) went as ONE grouped job (group cpu-{model}); as many submissions as the dry run
    # with the profile planned, plus the shard jobs (known only once embed_plan has run)
    comments = [j[0] for j in jobs]
    assert not any("demo_data" in c for c in comments), acct
    # (an ungrouped job's comment is rule_{rule}_wildcards_...; a group job's rule_{group}_{rules})
    assert not any(
        c.startswith(("rule_reduce_", "rule_cluster_", "rule_cluster_view_", "rule_embed_merge_", "rule_embed_plan_"))
        for c in comments
    ), acct
    assert sorted(c for c in comments if c.startswith("rule_cpu-")) == [
        "rule_cpu-tfidf_cluster_batch",  # TINY: cluster.batch (no reduce, cluster or cluster_view jobs)
        "rule_cpu-tiny-bert_cluster_batch_embed_merge",
    ], acct
    assert sum(c.startswith("rule_build_dataset_") for c in comments) == 1, acct
    assert len(jobs) == len(planned) + len(gpu_embed), (acct, planned)
    assert "submitted with SLURM jobid" in proc.stdout
