"""Validation in one room, one job adapter per stage (issue 45 items 2 and 3).

- Every check of the config runs in :mod:`tecb.configcheck`: the Snakefile calls
  :func:`tecb.configcheck.workflow_config` (the same function ``python -m tecb.configcheck`` runs) and no ``.smk``
  file raises or defines a check; the workflow and ``tecb.configcheck`` give the same verdict on the bad configs of
  tests/test_bad_inputs.py's table (a workflow test, ``snakemake -n`` per case: every case of a check that moved
  out of the .smk files, a third of the others).
- One list of model kinds: the schema's enum is ``tecb.embed.spec.KINDS``; no other file spells a group of kinds.
- The scripts under workflow/scripts/ never read ``snakemake.config``: a stage's execution options are resolved
  once, in its library (``from_job``), or in the rule's params.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, WORKFLOW_FILES, copy_project, run_snakemake

from tecb.config import ConfigError, layered_config

SMK_FILES = sorted((ROOT / "workflow").rglob("*.smk")) + [ROOT / "workflow" / "Snakefile"]
SCRIPTS = sorted((ROOT / "workflow" / "scripts").glob("*.py"))


def test_no_smk_file_checks_the_config():
    """.smk files wire rules: no `raise`, no check_* function; the Snakefile's raises only turn the library's
    errors into Snakemake's."""
    for path in SMK_FILES:
        text = path.read_text()
        assert not re.search(r"^\s*def check_\w+\(", text, re.M), f"{path.name} defines a config check"
        if path.name != "Snakefile":
            assert not re.search(r"\braise\b", text), f"{path.name} raises: put the check in tecb.configcheck"
    snakefile = (ROOT / "workflow" / "Snakefile").read_text()
    assert "workflow_config(" in snakefile
    assert "validated_config" not in snakefile and "expand_prompt_variants" not in snakefile


def test_no_script_reads_the_config():
    """A job's execution options come from its stage's library (from_job) or its params, never snakemake.config."""
    readers = [p.name for p in SCRIPTS if "snakemake.config" in p.read_text()]
    assert readers == []


def test_one_list_of_model_kinds():
    """The schema's kinds are tecb.embed.spec.KINDS; the groups of kinds are spec's (TRANSFORMER_KINDS, ...), and no
    other file of the library or the workflow spells one of those groups out again."""
    from tecb.embed import spec

    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    entry = schema["properties"]["models"]["additionalProperties"]
    assert set(entry["properties"]["kind"]["enum"]) == set(spec.KINDS)
    groups = [spec.KINDS, spec.TRANSFORMER_KINDS, spec.FILELESS_KINDS, spec.CPU_KINDS]
    for group in groups:
        assert set(group) <= set(spec.KINDS)
    literal = re.compile(r"[(\[]((?:\s*\"[\w-]+\"\s*,?)+)\s*[)\]]")
    copies = []
    for path in [*(ROOT / "src" / "tecb").rglob("*.py"), *SMK_FILES]:
        if path.name == "spec.py" and path.parent.name == "embed":
            continue
        for match in literal.finditer(path.read_text()):
            names = set(re.findall(r"\"([\w-]+)\"", match.group(1)))
            if any(names == set(group) for group in groups):
                copies.append(f"{path.relative_to(ROOT)}: {match.group(0)}")
    assert copies == []


# --- the same verdict: the workflow and tecb.configcheck on each bad config of the table ---------------------------


#: the table's cases of the checks that were in the workflow's .smk files (all run), and every SAMPLE-th other case
FIRST_MOVED, LAST_MOVED = "dataset names no source", "adapt reply without a forum source"
SAMPLE = 3


def _cases():
    """(name, make) of the table's cases run through the workflow (a `snakemake -n` is ~4-6 CPU-s): every case of
    a check that moved from the .smk files into tecb.configcheck, and every third other one (all stages, the
    preflight's included); YAML syntax cases are the loader's, before either."""
    import test_bad_inputs

    names = [name for name, _, _ in test_bad_inputs.CASES]
    moved = range(names.index(FIRST_MOVED), names.index(LAST_MOVED) + 1)
    return [
        (name, make)
        for i, (name, make, _) in enumerate(test_bad_inputs.CASES)
        if not isinstance(make, tuple) and (i in moved or i % SAMPLE == 0)
    ]


def _configcheck_verdict(work: Path, make) -> list[str]:
    """The lines of tecb.configcheck's message on the case (as test_bad_inputs runs it), [] when it passes."""
    import test_bad_inputs

    from tecb.configcheck import check_config

    cfg = make(work, copy.deepcopy(test_bad_inputs.base_config()))
    (work / "mine.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    try:
        check_config(layered_config(ROOT, work, [work / "mine.yaml"]), test_bad_inputs.SCHEMA, cache_dir=None)
    except (ConfigError, ValueError) as err:
        return [line.strip() for line in str(err).splitlines() if line.strip()]
    return []


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return copy_project(tmp_path_factory.mktemp("verdicts") / "project")


@pytest.mark.workflow
def test_the_workflow_and_configcheck_give_the_same_verdict(project, tmp_path, monkeypatch):
    """Each case of the bad-input table (:func:`_cases`), in a folder of its own beside links to the project copy:
    `snakemake -n` stops, before any job, with every line of the message `tecb.configcheck` gives."""
    import test_bad_inputs

    differ = []
    for i, (name, make) in enumerate(_cases()):
        work = tmp_path / f"case{i}"
        work.mkdir()
        for part in [*WORKFLOW_FILES, "src"]:  # not .snakemake/: each case's preflight starts without a cache
            if (project / part).exists():
                (work / part).symlink_to(project / part, target_is_directory=(project / part).is_dir())
        monkeypatch.chdir(work)
        test_bad_inputs.write(work / "data" / "mine.tsv", test_bad_inputs.GOOD_TSV)
        expected = _configcheck_verdict(work, make)
        assert expected, f"{name}: tecb.configcheck accepts it"
        proc = run_snakemake(work, "-n", "--configfile", "mine.yaml", "--cores", "1", check=False)
        missing = [line for line in expected if line not in proc.stdout]
        if proc.returncode == 0 or missing:
            differ.append(
                f"{name}: rc {proc.returncode}, not in the workflow's output: {missing}\n{proc.stdout[-800:]}"
            )
    assert differ == []


@pytest.mark.workflow
def test_the_workflow_locates_yaml_mistakes_as_configcheck_does(project, tmp_path, monkeypatch):
    """Every YAML case of the bad-input table (a tab, a bad indent, an unclosed bracket, a key given twice, a list
    at the top) given as `--configfile`: `snakemake -n` stops before any job with configcheck's message (the file,
    the line). Snakemake reads the files before the workflow's code and refused a tab or a list without saying where;
    the project's logger plugin (both profiles) now prints where."""
    import test_bad_inputs

    from tecb.config import load_yaml

    cases = [(name, make) for name, make, _ in test_bad_inputs.CASES if isinstance(make, tuple)]
    fragments = {name: f for name, make, f in test_bad_inputs.CASES if isinstance(make, tuple)}
    assert len(cases) >= 6
    differ = []
    for i, (name, make) in enumerate(cases):
        work = tmp_path / f"yaml{i}"
        work.mkdir()
        for part in [*WORKFLOW_FILES, "src"]:
            if (project / part).exists():
                (work / part).symlink_to(project / part, target_is_directory=(project / part).is_dir())
        monkeypatch.chdir(work)
        test_bad_inputs.write(work / "mine.yaml", make[1])
        with pytest.raises(ConfigError) as expected:  # what `python -m tecb.configcheck mine.yaml` prints
            load_yaml("mine.yaml")
        proc = run_snakemake(work, "-n", "--configfile", "mine.yaml", "--cores", "1", check=False)
        missing = [f for f in [str(expected.value), *fragments[name]] if f not in proc.stdout]
        if proc.returncode == 0 or missing or "Job stats" in proc.stdout:
            differ.append(
                f"{name}: rc {proc.returncode}, not in the workflow's output: {missing}\n{proc.stdout[-800:]}"
            )
    assert differ == []
