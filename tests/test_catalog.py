"""What the Snakemake workflow catalog needs to list the workflow under "standardized usage": the main workflow in
`workflow/Snakefile`, configuration instructions in `config/README.md` (the catalog shows that file as written) and
the usage in `.snakemake-workflow-catalog.yml`, whose claims (flags, conda, report) hold for this workflow."""

from __future__ import annotations

import re
import shlex

import pytest
import yaml
from conftest import ROOT, copy_project, run_snakemake

CATALOG = ROOT / ".snakemake-workflow-catalog.yml"
RULES = ROOT / "workflow" / "rules"
# The keys the catalog reads from the usage file; anything else is ignored there, so a typo would silently vanish.
USAGE_KEYS = {
    "mandatory-flags": {"desc", "flags"},
    "software-stack-deployment": {"conda", "apptainer", "apptainer+conda"},
    "report": None,
}


def usage() -> dict:
    return yaml.safe_load(CATALOG.read_text(encoding="utf-8"))["usage"]


@pytest.mark.plan
def test_the_main_workflow_is_workflow_snakefile(workflow_rules):
    """The catalog requires workflow/Snakefile; a root Snakefile would shadow it (snakemake looks there first); every
    rules file is one Snakemake includes (under some config)."""
    assert (ROOT / "workflow" / "Snakefile").is_file()
    assert not (ROOT / "Snakefile").exists(), "a root Snakefile shadows workflow/Snakefile"
    assert "workflow/Snakefile" in workflow_rules["included"]
    rule_files = {p.relative_to(ROOT).as_posix() for p in RULES.rglob("*.smk")}
    orphans = sorted(rule_files - set(workflow_rules["included"]))
    assert orphans == [], f"rule files included by nothing: {orphans}"


def _all_rules_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(RULES.rglob("*.smk")))


def test_the_usage_file_has_only_keys_the_catalog_reads():
    found = usage()
    assert set(found) <= set(USAGE_KEYS), f"unknown usage keys: {sorted(set(found) - set(USAGE_KEYS))}"
    for key, allowed in USAGE_KEYS.items():
        if allowed is not None and key in found:
            unknown = set(found[key]) - allowed
            assert not unknown, f"usage.{key}: unknown keys {sorted(unknown)} (allowed: {sorted(allowed)})"
    assert isinstance(found["report"], bool)
    assert all(isinstance(v, bool) for v in found["software-stack-deployment"].values())


def test_the_mandatory_flags_are_snakemake_options():
    """The catalog appends these flags to its example commands: each must be an option snakemake accepts."""
    from snakemake.cli import get_argument_parser

    flags = usage()["mandatory-flags"]["flags"]
    args = get_argument_parser().parse_args(shlex.split(flags))
    assert args.resources, "the GPU resource flag did not parse as --resources"
    for flag in re.findall(r"--[a-z-]+", flags):
        assert flag in usage()["mandatory-flags"]["desc"], f"the description does not explain {flag}"


@pytest.mark.plan
def test_the_claimed_software_stack_and_report_exist(workflow_rules):
    """`conda: true`: every conda env a rule names exists; `report: true`: the workflow declares a report."""
    found = usage()
    text = _all_rules_text()
    if found["software-stack-deployment"].get("conda"):
        rules = [r for r in workflow_rules["rules"].values() if r["conda"]]
        envs = {((ROOT / r["snakefile"]).parent / r["conda"]).resolve() for r in rules}
        assert len(envs) >= 5, envs
        missing = sorted(str(e.relative_to(ROOT)) for e in envs if not e.is_file())
        assert missing == [], f"conda envs named by rules but missing: {missing}"
    if found["report"]:
        assert re.search(r'^report: "[^"]+"', text, flags=re.M), "usage says report: true, the workflow has none"
        assert re.search(r"report\(", text), "no rule output is marked for the report"


def test_config_readme_exists_for_the_catalog_to_show():
    """The catalog shows config/README.md as the workflow's configuration page."""
    text = (ROOT / "config" / "README.md").read_text(encoding="utf-8")
    assert text.startswith("# "), "config/README.md should open with a title"
    assert "config/README.md" in CATALOG.read_text(encoding="utf-8")


@pytest.mark.workflow
def test_snakemake_finds_workflow_snakefile_from_the_project_folder(tmp_path):
    """`snakemake` with no -s, run in the cloned folder (as the catalog's usage says), plans the quick start."""
    work = copy_project(tmp_path)
    flags = shlex.split(usage()["mandatory-flags"]["flags"])
    proc = run_snakemake(work, "-n", "--configfile", "config/quickstart.yaml", "--cores", "1", *flags)
    assert "results/quickstart/tables/table2.md" in proc.stdout
