"""The switches of the embed and cluster stages (embed.batch, embed.cache_dir, embed.shard_size, cluster.batch)
choose the granularity of the jobs, never the bytes (issue 36 item 1): all 16 combinations are served (none is
refused), the workflow has no `ruleorder`, a dry run of each combination names exactly one rule for each output
(the embeddings file's writer decided per model by workflow/rules/functions/embed.smk), and each combination run to
all targets writes the default's bytes. The runs start from copies of one prepared project (:func:`prepared`: the
dataset, the tiny BERT and the chance floor, which no switch reaches, built once), and must not run those jobs
again. A combination with cluster.batch starts from the finished run of its three embed switches (cluster.batch
off) with every file after the embed stage removed (:func:`_embedded`): cluster.batch reaches no embed job, so it
must run none, and every file it writes again is compared."""

from __future__ import annotations

import hashlib
import itertools
import re
import shutil
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, copy_project, run_snakemake
from helpers import planned_outputs

from tecb.io import read_embeddings

pytestmark = pytest.mark.workflow

#: (embed.batch, embed.cache_dir set, embed.shard_size set, cluster.batch)
SWITCHES = list(itertools.product([False, True], repeat=4))
DEFAULT = (False, False, False, False)


def _name(switches) -> str:
    names = ("embed_batch", "cache", "shard", "cluster_batch")
    return "+".join(n for n, on in zip(names, switches, strict=True) if on) or "default"


def _switch_config(switches, cache_dir: str) -> dict:
    embed_batch, cache, shard, cluster_batch = switches
    return {
        "embed": {
            "batch": embed_batch,
            "cache_dir": cache_dir if cache else None,
            "shard_size": 150 if shard else None,  # two shards of whole 64-text chunks (0-128, 128-221)
        },
        "cluster": {"batch": cluster_batch},
    }


def test_the_workflow_has_no_ruleorder():
    files = [ROOT / "workflow" / "Snakefile", *sorted((ROOT / "workflow" / "rules").rglob("*.smk"))]
    found = [f"{p.relative_to(ROOT)}:{i}" for p in files for i, line in enumerate(p.read_text().splitlines(), 1)
             if re.match(r"\s*ruleorder\s*:", line)]  # fmt: skip
    assert not found, found


def _expected_writer(model: str, switches) -> str:
    """The rule that writes a demo model's embeddings files (functions/embed.smk: per shard, per model, per
    dataset); the store (embed.cache_dir) changes none: each writer's job uses it itself."""
    embed_batch, _, shard, _ = switches
    if shard and model == "tiny-bert":  # a transformer: embedded per shard
        return "embed_merge"
    if embed_batch:
        return "embed_batch"
    return "embed"


@pytest.mark.parametrize("switches", SWITCHES, ids=_name)
def test_each_combination_plans_one_writer_per_output(tmp_path, switches):
    work = copy_project(tmp_path / "p")
    (work / "config" / "switches.yaml").write_text(yaml.safe_dump(_switch_config(switches, str(tmp_path / "cache"))))
    proc = run_snakemake(
        work, "-n", "--configfile", "config/demo.yaml", "config/switches.yaml", "--cores", "1", "--resources", "gpu=1"
    )
    writers: dict[str, list[str]] = {}
    for rule, outputs in planned_outputs(proc.stdout):
        for path in outputs:
            writers.setdefault(path, []).append(rule)
    assert writers, proc.stdout[-3000:]
    twice = {p: r for p, r in writers.items() if len(r) > 1}
    assert not twice, twice
    demo = yaml.safe_load((work / "config" / "demo.yaml").read_text())
    for model in demo["models"]:
        path = f"results/demo/embeddings/{model}/BlurbsClusteringS2S.parquet"
        assert writers.get(path) == [_expected_writer(model, switches)], (model, writers.get(path))


#: the embed stage's rules that the switches choose among (functions/embed.smk's table EMBED_WRITERS)
SWITCHED_RULES = {"embed", "embed_batch", "embed_plan", "embed_shard", "embed_merge"}


def _listed_rules(work, *configfiles) -> set[str]:
    proc = run_snakemake(work, "-n", "--list-rules", *(("--configfile", *configfiles) if configfiles else ()))
    return {line.split()[0] for line in proc.stdout.splitlines() if line and not line.startswith(" ")}


@pytest.mark.parametrize("switches", [s for s in SWITCHES if not s[3]], ids=_name)
def test_a_config_is_shown_only_the_embed_rules_that_can_match_it(tmp_path, switches):
    """A rule no model of the config needs (by the writer table, functions/embed.smk) is not defined: the demo's
    models under each combination of the embed switches are shown exactly the rules that write their files."""
    work = copy_project(tmp_path / "p")
    (work / "config" / "switches.yaml").write_text(yaml.safe_dump(_switch_config(switches, str(tmp_path / "cache"))))
    demo = yaml.safe_load((work / "config" / "demo.yaml").read_text())
    writers = {_expected_writer(m, switches) for m in demo["models"]}
    expected = writers | ({"embed_plan", "embed_shard"} if switches[2] else set())
    listed = _listed_rules(work, "config/demo.yaml", "config/switches.yaml")
    assert "all" in listed and "tiny_bert" in listed, sorted(listed)
    assert listed & SWITCHED_RULES == expected, sorted(listed)


def test_the_papers_config_is_shown_one_embed_writer(tmp_path):
    """The paper's config (hub models, one job per (model, dataset), no store, no shards): only `embed`."""
    assert _listed_rules(copy_project(tmp_path / "p")) & SWITCHED_RULES == {"embed"}


# --- every combination run to all targets: the default's bytes -------------------------------------------------

DATASET = "TenKGnadClusteringS2S"
#: a small config over the demo's: one dataset, a TF-IDF and the tiny BERT (sharded with embed.shard_size: chunks
#: of 64 texts in every combination, as the chunk size is an embedding setting), a raw and a reduced configuration
TINY = {
    "run": "sw",
    "datasets": {DATASET: {"source": "million_posts", "text": "s2s", "n_splits": 3}},
    "models": {
        "tfidf": {"name": "TF-IDF + SVD", "kind": "tfidf", "dim": 32},
        "tiny-bert": {"name": "tiny BERT (random init)", "kind": "tiny-bert"},
    },
    "embed": {"batch_size": 16, "threads": 1, "chunk_size": 64},
    "configurations": [{"algorithm": "kmeans", "reduction": "none"}, {"algorithm": "kmeans", "reduction": "pca"}],
    "tables": {"chance": {"n_draws": 10}, "per_kind": False},
    "scoring": {"protocols": ["paper"]},
    "pretrain": {"enabled": False},
}
#: what records time (as tests/test_reproducible.py) or the switches themselves (the run's config in the report)
TIMED = ("benchmarks", "timings", "logs")
#: bookkeeping a switch adds: the keys of batches, the shard plans
BOOKKEEPING = re.compile(r"(^embeddings/[^/]+/batch_keys\.json$|^cluster_keys/|^shards/)")


def _hashes(results) -> dict[str, str]:
    out = {}
    for path in sorted(results.rglob("*")):
        rel = path.relative_to(results).as_posix()
        timed = any(p in TIMED for p in rel.split("/")) or "runtime" in rel.rsplit("/", 1)[-1]
        if path.is_file() and not timed and rel != "report/config.yaml":
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


#: The tiny config's outputs that no switch reaches (the dataset, the tiny BERT, the chance floor: made from the
#: raw files, texts and splits only), with the jobs that write them and the raw files: built once in
#: :func:`prepared`, each combination runs from a copy of it.
UPSTREAM = (
    f"results/sw/datasets/{DATASET}/texts.parquet",
    f"results/sw/datasets/{DATASET}/splits.parquet",
    "results/sw/models/tiny-bert",
    f"results/sw/chance/{DATASET}.parquet",
)
UPSTREAM_RULES = ("demo_data", "build_dataset", "tiny_bert", "chance")
ARGS = ("--configfile", "config/demo.yaml", "config/tiny.yaml", "--cores", "1", "--resources", "gpu=1")


def _write_tiny_config(work, switches) -> None:
    config = {**TINY, **_switch_config(switches, "resources/embedding-cache")}
    config["embed"] = {**TINY["embed"], **config["embed"]}
    (work / "config" / "tiny.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """A copy of the project with :data:`UPSTREAM` built (under the default switches), its `.snakemake/` records
    included; a combination's run starts from a copy of it and must not run those jobs again."""
    work = copy_project(tmp_path_factory.mktemp("prepared"))
    _write_tiny_config(work, DEFAULT)
    run_snakemake(work, *UPSTREAM, *ARGS)  # the targets before --resources, which takes several values
    return work


#: the embed stage's files under results/sw/ (with the upstream ones; its rules: SWITCHED_RULES): what a
#: combination with cluster.batch starts from (:func:`_embedded`)
EMBED_STAGE = re.compile(
    r"^(datasets|models|chance|embeddings|shards)/|^(timings|benchmarks)/(embed|embed_shard|chance)/"
)
#: finished runs by their switches: (folder, hashes), each run once (this module's tests share one pytest worker)
_FINISHED: dict[tuple, tuple[Path, dict[str, str]]] = {}


def _embedded(tmp_path_factory, prepared, switches) -> Path:
    """The finished run of ``switches``' embed switches with cluster.batch off (run first if not yet), copied, with
    every file after the embed stage (not :data:`EMBED_STAGE`) removed from its results."""
    sibling = (*switches[:3], False)
    if sibling not in _FINISHED:
        _run_all(tmp_path_factory, prepared, sibling)
    work = tmp_path_factory.mktemp(_name(switches)) / "p"
    shutil.copytree(_FINISHED[sibling][0], work, symlinks=True)  # mtimes kept
    results = work / "results" / "sw"
    for path in sorted(results.rglob("*"), reverse=True):  # files before their folders
        if path.is_file() and not EMBED_STAGE.match(path.relative_to(results).as_posix()):
            path.unlink()
    return work


def _run_all(tmp_path_factory, prepared, switches) -> dict[str, str]:
    if switches in _FINISHED:  # run before, as the start of a combination with cluster.batch
        return _FINISHED[switches][1]
    if switches[3]:  # cluster.batch: from its embed switches' embeddings, no embed job may run
        work, unreached = _embedded(tmp_path_factory, prepared, switches), (*UPSTREAM_RULES, *sorted(SWITCHED_RULES))
    else:
        work, unreached = tmp_path_factory.mktemp(_name(switches)) / "p", UPSTREAM_RULES
        shutil.copytree(prepared, work, symlinks=True)  # src/ and the numba cache stay links; mtimes kept
    _write_tiny_config(work, switches)
    proc = run_snakemake(work, *ARGS)
    rerun = [r for r in unreached if re.search(rf"^(local)?rule {r}:", proc.stdout, flags=re.M)]
    assert not rerun, f"the switches reran {rerun}, which no switch reaches"
    assert "Nothing to be done" in run_snakemake(work, "-n", *ARGS).stdout  # a finished run plans nothing
    if switches[1]:  # every writer (embed, embed_merge, embed_batch) served its files from the store's entries
        store = work / "resources" / "embedding-cache"
        for path in (work / "results" / "sw" / "embeddings").rglob("*.parquet"):
            entry = store / f"{read_embeddings(path)[1]['cache_key']}.parquet"
            assert entry.read_bytes() == path.read_bytes() and entry.with_suffix(".json").exists(), path
    _FINISHED[switches] = (work, _hashes(work / "results" / "sw"))
    return _FINISHED[switches][1]


@pytest.fixture(scope="module")
def default_hashes(tmp_path_factory, prepared):
    return _run_all(tmp_path_factory, prepared, DEFAULT)


@pytest.mark.slow
@pytest.mark.parametrize("switches", [s for s in SWITCHES if s != DEFAULT], ids=_name)
def test_each_combination_writes_the_defaults_bytes(tmp_path_factory, prepared, default_hashes, switches):
    hashes = _run_all(tmp_path_factory, prepared, switches)
    assert any(p.startswith("embeddings/tiny-bert/") for p in default_hashes), sorted(default_hashes)
    differ = sorted(p for p in default_hashes if hashes.get(p) != default_hashes[p])
    assert not differ, differ
    extra = sorted(p for p in set(hashes) - set(default_hashes) if not BOOKKEEPING.search(p))
    assert not extra, extra
