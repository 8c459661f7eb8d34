"""The SLURM profile: GPU jobs reach a GPU partition and only they ask for a GPU (unit tests: read the files), and
the modern config's plan with it stays at a few submissions per model with submittable group requests (a dry run:
tests/slurm/plan.py prints every planned submission of the DAG Snakemake builds with the profile)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml
from conftest import copy_project
from helpers import slurm_plan as plan

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.plan
def test_slurm_profile_lets_gpu_jobs_reach_a_gpu_partition_and_only_them(workflow_rules):
    """Partitions come from the plugin's partition selection (profiles/slurm/partitions.yaml): a job asking for a
    GPU fits only a partition with GPUs; no rule pins a partition (that would send TF-IDF jobs to the GPU one)."""
    profile = yaml.safe_load((ROOT / "profiles" / "slurm" / "config.yaml").read_text())
    partitions = yaml.safe_load((ROOT / profile["slurm-partition-config"]).read_text())["partitions"]
    assert any(p.get("max_gpu", 0) >= 1 for p in partitions.values()), partitions
    assert any(p.get("max_gpu", 0) == 0 for p in partitions.values()), partitions
    assert "slurm_partition" not in profile["default-resources"]
    rules = {name for name, rule in workflow_rules["rules"].items() if "gpu" in rule["resources"]}
    assert {"embed", "embed_batch", "embed_shard", "pretrain"} <= rules, rules
    for rule in rules:
        spec = profile["set-resources"].get(rule)
        assert spec, f"profiles/slurm: no set-resources for the GPU rule {rule!r}"
        assert "slurm_partition" not in spec and "gpu_model" not in spec, (rule, spec)
        assert spec.get("runtime") and spec.get("mem_mb"), (rule, spec)


class _Resources(dict):
    __getattr__ = dict.__getitem__


def test_documented_gpu_model_expression_asks_no_gpu_for_tfidf():
    """The plugin turns gpu_model into --gpus=MODEL:N even for gpu=0; the documented expression leaves it empty
    for jobs without a model input (TF-IDF): no --gpus at all."""
    pytest.importorskip("snakemake_executor_plugin_slurm")
    from snakemake_executor_plugin_slurm.utils import set_gres_string

    expression = "'a100' if input.model else ''"
    assert expression in (ROOT / "profiles" / "slurm" / "config.yaml").read_text()
    for model_input, gpu, expected in ((["resources/models/m"], 1, " --gpus=a100:1"), ([], 0, "")):
        gpu_model = eval(expression, {"input": _Resources(model=model_input)})  # as Snakemake evaluates it
        job = type("Job", (), {"resources": _Resources(gpu=gpu, gpu_model=gpu_model)})()
        assert set_gres_string(job) == expected, (model_input, gpu_model)
    plain = type("Job", (), {"resources": _Resources(gpu=0, gpu_model="a100")})()
    assert set_gres_string(plain) == " --gpus=a100:0"  # why a plain gpu_model under embed is wrong


# documented in docs/slurm.md ("Submissions per model")
MAX_SUBMISSIONS_PER_MODEL = 10
BUDGET = {"_cores": 16, "mem_mb": 16000}


@pytest.mark.workflow
def test_modern_config_submits_a_few_jobs_per_model_with_submittable_groups(tmp_path):
    planned = plan(copy_project(tmp_path), "--configfile", "config/modern.yaml")
    modern = yaml.safe_load((ROOT / "config" / "modern.yaml").read_text())
    submitted = [job for job in planned if not job["local"]]
    per_model = Counter(job["models"][0] for job in submitted if len(job["models"]) == 1)
    assert set(per_model) == set(modern["models"]), per_model
    assert max(per_model.values()) <= MAX_SUBMISSIONS_PER_MODEL, per_model
    # 6 GPU embedding jobs (one per dataset) + one group with all reduce/cluster/scoring/view jobs, per model
    assert set(per_model.values()) == {7}, per_model
    assert not [job for job in submitted if len(job["models"]) > 1]  # no submission mixes models
    groups = [job for job in submitted if job["group"] and job["group"].startswith("cpu-")]
    assert len(groups) == len(modern["models"])
    for group in groups:
        assert set(group["rules"]) == {"reduce", "cluster", "mteb_v2", "cluster_view"}, group["rules"]
        assert len(group["rules"]) == 6 * (3 + 14 + 1 + 1), group["group"]  # reduce, cluster, mteb_v2, view
        # the request stays within the per-submission budget, not the sum of ~100 jobs
        for key, limit in BUDGET.items():
            assert 0 < group["resources"][key] <= limit, (group["group"], key, group["resources"])
        assert group["resources"].get("gpu") in (None, 0)
    embeds = [job for job in submitted if job["rules"] == ["embed"]]
    assert {job["resources"]["gpu"] for job in embeds if job["models"] == ["tfidf"]} == {0}
    assert {job["resources"]["gpu"] for job in embeds if job["models"] != ["tfidf"]} == {1}
    assert len(submitted) == 7 * len(modern["models"]) + 12, Counter(tuple(j["rules"]) for j in submitted)


@pytest.mark.workflow
def test_sharded_embedding_adds_only_the_shard_jobs(tmp_path):
    """embed.shard_size: the shard plans (checkpoint embed_plan) run on the login node and each merge runs in its
    model's group, so a model submits its shard jobs (GPU; planned once the datasets are counted) and one group;
    TF-IDF is not sharded (still 6 embed jobs and a group)."""
    work = copy_project(tmp_path)
    (work / "config" / "shards.yaml").write_text("embed: {shard_size: 20000}\n")
    planned = plan(work, "--configfile", "config/modern.yaml", "config/shards.yaml")
    modern = yaml.safe_load((ROOT / "config" / "modern.yaml").read_text())
    assert {tuple(job["rules"]) for job in planned if job["local"] and "embed_plan" in job["rules"]} == {
        ("embed_plan",)
    }
    assert sum(job["rules"] == ["embed_plan"] for job in planned) == 6  # one per dataset, local
    submitted = Counter(job["models"][0] for job in planned if not job["local"] and len(job["models"]) == 1)
    for model in modern["models"]:
        groups = [j for j in planned if j["group"] == f"cpu-{model}"]
        assert len(groups) == 1, model
        assert ("embed_merge" in groups[0]["rules"]) == (model != "tfidf"), groups[0]["rules"]
        assert submitted[model] == (7 if model == "tfidf" else 1), (model, submitted)  # + the shards, once planned


@pytest.mark.plan
def test_slurm_profile_keeps_the_memory_estimates_of_reduce_and_cluster_jobs(workflow_rules):
    """reduce and cluster declare mem_mb from the memory guard's estimate (x attempt): the profile must not
    replace it by a fixed number (too little for Ward on a 26k-text split, far too much for k-means on 2-D)."""
    profile = yaml.safe_load((ROOT / "profiles" / "slurm" / "config.yaml").read_text())
    memory = {
        rule: workflow_rules["rules"][rule]["resources"].get("mem_mb")
        for rule in ("reduce", "cluster", "cluster_batch")
    }
    assert memory == {
        "reduce": "reduce_mem_mb()",
        "cluster": "cluster_mem_mb()",
        "cluster_batch": "cluster_batch_mem_mb()",
    }
    for rule in ("reduce", "cluster", "cluster_batch"):
        assert "mem_mb" not in (profile["set-resources"].get(rule) or {}), rule
