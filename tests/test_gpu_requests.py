"""Only encoders that can use a GPU ask for one (`resources: gpu`): transformers always, a `kind: python` object
unless `embed.device` is cpu, TF-IDF, static and precomputed models never; so under `--resources gpu=1` the CPU
encoders of a CPU machine run in parallel, one GPU job at a time."""

from __future__ import annotations

import re

import pytest
import yaml
from conftest import DEMO_SOURCES, copy_project, run_snakemake

CONFIG = {
    "run": "gputest",
    "sources": DEMO_SOURCES,
    "datasets": {"BlurbsClusteringS2S": {"source": "germeval2019", "text": "s2s"}},
    "models": {
        "tfidf": {"kind": "tfidf", "dim": 8},
        "py": {"kind": "python", "object": "tecb.embed.packaged:TokenlearnStatic"},
        "tiny": {"kind": "tiny-bert"},
    },
    "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
}


def _embed_gpus(output: str) -> dict[str, int]:
    gpus = {}
    for block in re.split(r"\n(?=(?:local)?(?:rule|checkpoint) \w+:)", output):
        if block.strip().startswith("rule embed:"):
            model = re.search(r"wildcards: model=([^,\s]+)", block).group(1)
            gpus[model] = int(re.search(r"resources: .*\bgpu=(\d+)", block).group(1))
    return gpus


@pytest.mark.workflow
def test_only_gpu_capable_encoders_ask_for_a_gpu(tmp_path):
    work = copy_project(tmp_path / "project")
    (work / "config" / "gpu.yaml").write_text(yaml.safe_dump(CONFIG))
    plans = {
        device: _embed_gpus(
            run_snakemake(
                work,
                "--configfile",
                "config/gpu.yaml",
                "--config",
                f"embed={{device: {device}}}",
                "-n",
                "--resources",
                "gpu=1",
                "--cores",
                "2",
            ).stdout
        )
        for device in ("cpu", "auto")
    }
    assert plans == {"cpu": {"tfidf": 0, "py": 0, "tiny": 1}, "auto": {"tfidf": 0, "py": 1, "tiny": 1}}
