"""The workflow deployed as a Snakemake module, the way `snakedeploy deploy-workflow` writes it: a folder of its
own with `config/config.yaml` and a Snakefile holding `module tecb: snakefile: <clone>/workflow/Snakefile` and
`use rule * from tecb`. It dry-runs and runs the quick start there, outputs in that folder, the clone untouched."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import copy_project, run_snakemake
from helpers import job_counts

import tecb

ROOT = Path(__file__).resolve().parents[1]

DEPLOYED_SNAKEFILE = """configfile: "config/config.yaml"


module tecb:
    snakefile:
        "{snakefile}"
    config:
        config


use rule * from tecb
"""


def _pinned_versions() -> dict[str, str]:
    pyproject = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    citation = re.search(r"^version: (\S+)", (ROOT / "CITATION.cff").read_text(), re.M).group(1)
    return {"pyproject.toml": pyproject, "CITATION.cff": citation, "tecb.__version__": tecb.__version__}


def test_one_version_number_to_pin_and_the_docs_name_it():
    versions = _pinned_versions()
    assert len(set(versions.values())) == 1, versions
    version = versions["pyproject.toml"]
    deployment = (ROOT / "docs" / "deployment.md").read_text()
    assert f"v{version}" in deployment and "use rule * from tecb" in deployment
    assert "docs/deployment.md" in (ROOT / "README.md").read_text()
    catalog = (ROOT / ".snakemake-workflow-catalog.yml").read_text()
    assert "module" in catalog and "docs/deployment.md" in catalog
    assert "use rule * from tecb" in (ROOT / "config" / "README.md").read_text()


@pytest.mark.workflow
def test_a_module_deployment_runs_the_quickstart_in_its_own_folder(tmp_path):
    clone = copy_project(tmp_path / "clone")
    deployed = tmp_path / "deployed"
    (deployed / "workflow").mkdir(parents=True)
    (deployed / "config").mkdir()
    shutil.copy(clone / "config" / "quickstart.yaml", deployed / "config" / "config.yaml")
    snakefile = DEPLOYED_SNAKEFILE.format(snakefile=clone / "workflow" / "Snakefile")
    (deployed / "workflow" / "Snakefile").write_text(snakefile)
    target = "results/quickstart/tables/table2.md"
    plan = job_counts(run_snakemake(deployed, "-n", "--cores", "1").stdout)
    assert plan["tables"] == 1 and plan["embed_batch"] == 2 and plan["build_dataset"] == 3, plan
    run_snakemake(deployed, target, "--cores", "2", "--resources", "gpu=1")
    table = (deployed / target).read_text()
    assert "TF-IDF + SVD" in table and "TF-IDF + SVD (64 dims)" in table
    assert not (clone / "results").exists() and not (clone / "resources").exists()
    assert job_counts(run_snakemake(deployed, "-n", "--cores", "1", target).stdout) == {}
