"""The SLURM profile sends every rule that asks for a GPU to the GPU partition (unit test: reads the files)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def gpu_rules() -> set[str]:
    """Rules whose `resources:` declare `gpu=` (embed: 1 for neural models; pretrain: 1)."""
    found = set()
    for smk in (ROOT / "workflow" / "rules").glob("*.smk"):
        for name, body in re.findall(r"^rule (\w+):\n((?:[ \t]+.*\n|\n)+)", smk.read_text(), flags=re.M):
            if re.search(r"^\s+resources:\s*\n(?:\s{8,}.*\n)*?\s{8,}gpu\s*=", body, flags=re.M):
                found.add(name)
    return found


def test_slurm_profile_maps_every_gpu_rule_to_the_gpu_partition():
    profile = yaml.safe_load((ROOT / "profiles" / "slurm" / "config.yaml").read_text())
    rules = gpu_rules()
    assert {"embed", "pretrain"} <= rules, rules
    for rule in rules:
        spec = profile["set-resources"].get(rule)
        assert spec, f"profiles/slurm: no set-resources for the GPU rule {rule!r}"
        assert spec.get("slurm_partition") == "gpu", (rule, spec)
        assert spec.get("runtime") and spec.get("mem_mb"), (rule, spec)


def test_slurm_profile_keeps_the_memory_estimates_of_reduce_and_cluster_jobs():
    """reduce and cluster declare mem_mb from the memory guard's estimate (x attempt): the profile must not
    replace it by a fixed number (too little for Ward on a 26k-text split, far too much for k-means on 2-D)."""
    profile = yaml.safe_load((ROOT / "profiles" / "slurm" / "config.yaml").read_text())
    cluster_smk = (ROOT / "workflow" / "rules" / "cluster.smk").read_text()
    assert "mem_mb=cluster_mem_mb" in cluster_smk and "mem_mb=reduce_mem_mb" in cluster_smk
    for rule in ("reduce", "cluster"):
        assert "mem_mb" not in (profile["set-resources"].get(rule) or {}), rule
