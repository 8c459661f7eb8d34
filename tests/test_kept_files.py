"""Every file a run keeps is written again by the same command once deleted, and a damaged one that the DAG reads
is named and written again (issue 46, item 2). The kinds of files are generated from a finished run of a tiny
config in the modes that keep the most bookkeeping (the shared all-switches run, conftest.all_switches_run: the
embedding store, the shard plans, the embed and cluster batches' keys, the chance draws), not typed: each must be a target of `all` (so that its deletion plans its writer under every trigger
setting: a missing target is planned under any of them), and, all deleted at once, the same command with the
strictest setting (`--rerun-triggers mtime`) writes each again."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import SWITCHED_ARGS, SWITCHED_DATASET, SWITCHED_TINY, copy_run, run_snakemake
from helpers import planned_inputs

pytestmark = pytest.mark.workflow

DATASET = SWITCHED_DATASET
RUN = SWITCHED_TINY["run"]
#: the kinds of files the fault sweep found never written again once deleted (and the store's key files, which
#: are no longer written: the embed jobs compute their keys themselves)
FOUND = (
    "chance/{dataset}.parquet",
    "datasets/{dataset}/splits.parquet",
    "shards/{dataset}.json",
)


def _snakemake(work, *args, check=True):
    return run_snakemake(work, *args, *SWITCHED_ARGS, check=check)


@pytest.fixture(scope="module")
def kept_run(tmp_path_factory, all_switches_run) -> Path:
    """A copy of the finished all-switches run (TF-IDF and the tiny BERT, sharded, with the embedding store, the
    embed and cluster batches and the chance floor)."""
    return copy_run(all_switches_run / "p", tmp_path_factory.mktemp("kept") / "w")


def _kinds(work: Path) -> dict[str, Path]:
    """One file of each kind the run keeps under results/{run}/ (a kind: its path with the model, the dataset
    and numbers replaced), from what the run wrote. Left out: the `benchmark:` files (durations, no rule's
    output) and the files inside a directory output (Snakemake's `.snakemake_timestamp` marks it: the
    directory is the output)."""
    root = work / "results" / RUN
    directories = {p.parent for p in root.rglob(".snakemake_timestamp")}
    kinds = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("benchmarks/") or any(d in path.parents for d in directories):
            continue
        kind = rel.replace(DATASET, "{dataset}")
        for model in SWITCHED_TINY["models"]:
            kind = re.sub(rf"(^|/|__){re.escape(model)}(/|$)", r"\1{model}\2", kind)
        kinds.setdefault(re.sub(r"\d+", "{n}", kind), path)
    return kinds


def _targets_of_all(work: Path) -> set[str]:
    """The input files of the `all` rule (a dry run forcing only it lists them)."""
    return set(planned_inputs(_snakemake(work, "-n", "--forcerun", "all").stdout, "all"))


def test_every_kind_of_kept_file_is_a_target_and_written_again_by_the_same_command(kept_run):
    """A file is written again after it is deleted, whatever the triggers, exactly when `all` names it: Snakemake
    plans a job for a missing file only when the target asks for it (or a job that reads it runs), not when the
    job that read it is up to date, nor when its job's other outputs exist."""
    work = kept_run
    kinds = _kinds(work)
    # the files the fault sweep found never written again are among the generated kinds
    for kind in FOUND:
        assert kind in kinds, sorted(kinds)
    assert len(kinds) >= 20, sorted(kinds)
    targets = _targets_of_all(work)
    assert [k for k, p in kinds.items() if str(p.relative_to(work)) not in targets] == []

    # every kind deleted at once: the same command, with the strictest triggers, writes each again (the same
    # bytes, but for durations)
    before = {p: p.read_bytes() for p in kinds.values()}
    for path in kinds.values():
        path.unlink()
    _snakemake(work, "--rerun-triggers", "mtime")
    assert [k for k, p in kinds.items() if not p.exists()] == []
    timed = ("timings/", "report/runtimes")
    changed = [k for k, p in kinds.items() if p.read_bytes() != before[p] and not k.startswith(timed)]
    assert changed == []


def test_a_damaged_shard_plan_is_named_and_written_again(kept_run):
    """Read while the DAG is built: never a bare JSONDecodeError; the same command names the file, removes it and
    writes it again (the same bytes), with no job but its writer's."""
    work = kept_run
    root = work / "results" / RUN
    damaged = [root / "shards" / f"{DATASET}.json"]
    before = {p: p.read_bytes() for p in damaged}
    damaged[0].write_text(json.dumps({"n_texts": 1}))  # JSON, but not a plan
    proc = _snakemake(work)
    for path in damaged:
        assert f"WARNING {path.relative_to(work)}: damaged" in proc.stdout, proc.stdout[-3000:]
        assert path.read_bytes() == before[path]
    assert "JSONDecodeError" not in proc.stdout
