"""The switches of the embed and cluster stages (embed.batch, embed.cache_dir, embed.shard_size, cluster.batch)
choose the granularity of the jobs, never the bytes (issues 36 item 1, 55 item 1), asserted at three levels:

- configs: all 16 combinations are served (none is refused), the workflow has no `ruleorder`, and a dry run of
  each combination names exactly one rule for each output (the embeddings file's writer decided per model by
  workflow/rules/functions/embed.smk);
- jobs: the embed stage's writers (embed, embed_batch, embed_plan + embed_shard + embed_merge), each with the store
  off and on, run in this process by their own workflow scripts on one dataset with TF-IDF and the tiny BERT,
  write the same bytes and record the same cache key (the cluster job per configuration against the cluster batch:
  tests/test_cluster_batch.py);
- products: exactly two runs to all targets, the default and every switch on (conftest.all_switches_run, shared
  with the files that copy it), write the same bytes; both start from one prepared project (the dataset, the tiny
  BERT and the chance floor, which no switch reaches) and run none of those jobs again."""

from __future__ import annotations

import hashlib
import itertools
import re
import runpy
import sys
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import (
    ALL_SWITCHES,
    DEFAULT_SWITCHES,
    ROOT,
    SWITCHED_ARGS,
    SWITCHED_UPSTREAM_RULES,
    copy_project,
    copy_run,
    run_snakemake,
    switch_config,
    write_switched_config,
)
from helpers import planned_outputs

from tecb.embed.shard import plan_shards
from tecb.embed.spec import encoder_settings, vector_seed
from tecb.embed.tiny_bert import create_tiny_bert
from tecb.io import read_embeddings

#: (embed.batch, embed.cache_dir set, embed.shard_size set, cluster.batch)
SWITCHES = list(itertools.product([False, True], repeat=4))
DEFAULT = DEFAULT_SWITCHES


def _name(switches) -> str:
    names = ("embed_batch", "cache", "shard", "cluster_batch")
    return "+".join(n for n, on in zip(names, switches, strict=True) if on) or "default"


@pytest.mark.plan
def test_the_workflow_has_no_ruleorder(workflow_rules):
    """Each output has one writer by the switches' table (functions/embed.smk), never by a `ruleorder`."""
    assert workflow_rules["ruleorder"] == []
    assert {"embed", "embed_batch", "embed_merge"} <= set(workflow_rules["rules"])  # read under the switches


def _expected_writer(model: str, switches) -> str:
    """The rule that writes a demo model's embeddings files (functions/embed.smk: per shard, per model, per
    dataset); the store (embed.cache_dir) changes none: each writer's job uses it itself."""
    embed_batch, _, shard, _ = switches
    if shard and model == "tiny-bert":  # a transformer: embedded per shard
        return "embed_merge"
    if embed_batch:
        return "embed_batch"
    return "embed"


@pytest.mark.workflow
@pytest.mark.plan
@pytest.mark.parametrize("switches", SWITCHES, ids=_name)
def test_each_combination_plans_one_writer_per_output(tmp_path, switches):
    work = copy_project(tmp_path / "p")
    (work / "config" / "switches.yaml").write_text(yaml.safe_dump(switch_config(switches, str(tmp_path / "cache"))))
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


@pytest.mark.workflow
@pytest.mark.plan
@pytest.mark.parametrize("switches", [s for s in SWITCHES if not s[3]], ids=_name)
def test_a_config_is_shown_only_the_embed_rules_that_can_match_it(tmp_path, switches):
    """A rule no model of the config needs (by the writer table, functions/embed.smk) is not defined: the demo's
    models under each combination of the embed switches are shown exactly the rules that write their files."""
    work = copy_project(tmp_path / "p")
    (work / "config" / "switches.yaml").write_text(yaml.safe_dump(switch_config(switches, str(tmp_path / "cache"))))
    demo = yaml.safe_load((work / "config" / "demo.yaml").read_text())
    writers = {_expected_writer(m, switches) for m in demo["models"]}
    expected = writers | ({"embed_plan", "embed_shard"} if switches[2] else set())
    listed = _listed_rules(work, "config/demo.yaml", "config/switches.yaml")
    assert "all" in listed and "tiny_bert" in listed, sorted(listed)
    assert listed & SWITCHED_RULES == expected, sorted(listed)


@pytest.mark.workflow
@pytest.mark.plan
def test_the_papers_config_is_shown_one_embed_writer(tmp_path):
    """The paper's config (hub models, one job per (model, dataset), no store, no shards): only `embed`."""
    assert _listed_rules(copy_project(tmp_path / "p")) & SWITCHED_RULES == {"embed"}


# --- the embed stage's jobs in this process: every writer, with the store off and on ---------------------------

SCRIPTS = ROOT / "workflow" / "scripts"
#: one dataset of texts of many lengths: with chunks of 64 texts and shards of 150, three shards
GRID_TEXTS = [f"Text {i}: " + "ein langer Satz über Bücher " * (i % 13) + ("Sport" if i % 3 else "Kultur")
              for i in range(300)]  # fmt: skip
GRID_EMBED = {"batch_size": 16, "device": "cpu", "threads": 1, "chunk_size": 64, "dtype": "float32"}
#: the writers of the switches' table (functions/embed.smk): "shard" is embed_plan + embed_shard + embed_merge for
#: the tiny BERT and the embed job for TF-IDF (which is not sharded), as embed.shard_size without embed.batch
WRITERS = ("embed", "embed_batch", "shard")
GRID = [(w, store) for w in WRITERS for store in (False, True)]


class Names(SimpleNamespace):
    """A Snakemake Namedlist: attributes, `get`, and `[i]` for the positional ones (``items``)."""

    def get(self, key, default=None):
        return getattr(self, key, default)

    def __getitem__(self, i):
        return self.items[i]


def _run_script(name, monkeypatch, **job) -> None:
    """``workflow/scripts/{name}.py`` run in this process as Snakemake runs it, its ``snakemake`` object ``job``
    (its stdout and stderr sent to its log, restored after; its end-of-process call a no-op)."""
    import tecb.runlog

    monkeypatch.setattr(sys, "stdout", sys.stdout)
    monkeypatch.setattr(sys, "stderr", sys.stderr)
    monkeypatch.setattr(tecb.runlog, "finish", lambda: None)
    runpy.run_path(str(SCRIPTS / f"{name}.py"), init_globals={"snakemake": SimpleNamespace(**job)})


@pytest.fixture(scope="module")
def grid_inputs(tmp_path_factory):
    """The dataset's texts and a tiny BERT built from them: the inputs every configuration of the grid reads."""
    folder = tmp_path_factory.mktemp("grid")
    texts = folder / "texts.parquet"
    pq.write_table(pa.table({"text_id": pa.array(range(len(GRID_TEXTS)), pa.int32()), "text": GRID_TEXTS}), texts)
    model = create_tiny_bert(folder / "tiny-bert", GRID_TEXTS, seed=3, max_position_embeddings=32)
    return texts, model


def _grid_run(folder: Path, writer: str, store: bool, texts: Path, model: Path, monkeypatch) -> dict[str, Path]:
    """Each model's embeddings file written in ``folder`` by the jobs of ``writer`` with the store off or on, the
    jobs' params as the rules resolve them (functions/embed.smk: encoder_settings, vector_seed)."""
    embed = {**GRID_EMBED, "batch": writer == "embed_batch", "shard_size": 150 if writer == "shard" else None,
             "cache_dir": str(folder / "store") if store else None}  # fmt: skip
    specs = {"tfidf": {"kind": "tfidf", "dim": 32}, "tiny-bert": {"kind": "tiny-bert", "path": str(model)}}
    config = {"embed": embed, "models": specs}
    files = {}
    for name, spec in specs.items():
        settings, seed = encoder_settings(spec, embed, "D"), vector_seed(spec["kind"], 42)
        job = {"config": config, "threads": 1, "wildcards": Names(model=name, dataset="D")}
        inputs = {"model": [] if spec["kind"] == "tfidf" else [str(model)], "digest": []}
        out = {"embeddings": str(folder / name / "D.parquet"), "timings": str(folder / "timings" / name / "D.json")}
        log = [str(folder / "logs" / f"{name}.log")]
        if writer == "embed_batch":
            _run_script("embed_batch", monkeypatch, **job, log=log, input=Names(texts=[str(texts)], **inputs),
                        output=Names(embeddings=[out["embeddings"]], timings=[out["timings"]],
                                     batch_keys=str(folder / name / "batch_keys.json")),
                        params=Names(datasets=["D"], settings={"D": settings}, seed=seed, kind=spec["kind"]))  # fmt: skip
        elif writer == "shard" and spec["kind"] != "tfidf":
            plan = folder / "shards" / "D.json"
            _run_script("embed_plan", monkeypatch, log=log, input=Names(texts=str(texts)),
                        output=Names(items=[str(plan)]), params=Names(shard_size=150, chunk_size=64))  # fmt: skip
            ranges = yaml.safe_load(plan.read_text())["shards"]
            assert (
                ranges
                == [[0, 128], [128, 256], [256, 300]]
                == [list(r) for r in plan_shards(texts, shard_size=150, chunk_size=64)["shards"]]
            )
            shards = {"shards": [], "timings": []}
            for start, stop in ranges:
                shards["shards"].append(str(folder / "shards" / name / f"{start}-{stop}.parquet"))
                shards["timings"].append(str(folder / "shards" / name / f"{start}-{stop}.json"))
                _run_script("embed_shard", monkeypatch, **job, log=log, input=Names(texts=str(texts), **inputs),
                            output=Names(embeddings=shards["shards"][-1], timings=shards["timings"][-1]),
                            params=Names(settings=settings, seed=seed, start=start, stop=stop))  # fmt: skip
            _run_script("embed_merge", monkeypatch, **job, log=log, input=Names(**shards, **inputs),
                        output=Names(**out), params=Names())  # fmt: skip
        else:
            _run_script("embed", monkeypatch, **job, log=log, input=Names(texts=str(texts), **inputs),
                        output=Names(**out), params=Names(settings=settings, seed=seed))  # fmt: skip
        files[name] = Path(out["embeddings"])
    return files


@pytest.fixture(scope="module")
def grid_default(tmp_path_factory, grid_inputs):
    """The default's files (one embed job per model, no store): {model: (bytes, cache key)}."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        files = _grid_run(tmp_path_factory.mktemp("default"), "embed", False, *grid_inputs, monkeypatch)
    return {m: (p.read_bytes(), read_embeddings(p)[1]["cache_key"]) for m, p in files.items()}


@pytest.mark.slow
@pytest.mark.parametrize(("writer", "store"), GRID[1:], ids=[f"{w}-store-{'on' if s else 'off'}" for w, s in GRID[1:]])
def test_each_writer_with_the_store_off_and_on_writes_the_default_jobs_bytes_and_key(
    tmp_path, grid_inputs, grid_default, monkeypatch, writer, store
):
    files = _grid_run(tmp_path, writer, store, *grid_inputs, monkeypatch)
    assert set(files) == set(grid_default) == {"tfidf", "tiny-bert"}
    for model, path in files.items():
        data, key = grid_default[model]
        assert len(key) == 64, key
        assert read_embeddings(path)[1]["cache_key"] == key, model
        assert path.read_bytes() == data, (model, writer, store)
        if store:  # the run's file is the store's entry of its key, the one way the store is filled
            assert (tmp_path / "store" / f"{key}.parquet").read_bytes() == data, model
    if writer == "shard":  # the shards are the run's own, merged
        assert sorted(p.name for p in (tmp_path / "shards" / "tiny-bert").glob("*.parquet")) == [
            "0-128.parquet",
            "128-256.parquet",
            "256-300.parquet",
        ]


# --- two runs to all targets: the default and every switch on, the same bytes ----------------------------------

#: what records time (as tests/test_reproducible.py) or the switches themselves (the run's config in the report)
TIMED = ("benchmarks", "timings", "logs")
#: bookkeeping a switch adds: the keys of batches, the shard plans
BOOKKEEPING = re.compile(r"(^embeddings/[^/]+/batch_keys\.json$|^cluster_keys/|^shards/)")
#: the embed stage's files under results/sw/ (with the upstream ones; its rules: SWITCHED_RULES)
EMBED_STAGE = re.compile(
    r"^(datasets|models|chance|embeddings|shards)/|^(timings|benchmarks)/(embed|embed_shard|chance)/"
)


def _hashes(results) -> dict[str, str]:
    out = {}
    for path in sorted(results.rglob("*")):
        rel = path.relative_to(results).as_posix()
        timed = any(p in TIMED for p in rel.split("/")) or "runtime" in rel.rsplit("/", 1)[-1]
        if path.is_file() and not timed and rel != "report/config.yaml":
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _ran_rules(output: str, rules) -> list[str]:
    return [r for r in rules if re.search(rf"^(local)?(rule|checkpoint) {r}:", output, flags=re.M)]


@pytest.mark.workflow
def test_every_switch_on_writes_the_defaults_bytes(tmp_path, switched_prepared, all_switches_run):
    """The default run and the all-switches run (each from a copy of the prepared project, which they must not
    build again): the same bytes, but for the switches' bookkeeping; a finished run plans nothing; with the store,
    every writer served its files from the store's entries."""
    switched = all_switches_run / "p"
    assert not _ran_rules((all_switches_run / "run.log").read_text(), SWITCHED_UPSTREAM_RULES)
    assert "Nothing to be done" in (all_switches_run / "dry-run.log").read_text()
    store = switched / "resources" / "embedding-cache"
    for path in (switched / "results" / "sw" / "embeddings").rglob("*.parquet"):
        entry = store / f"{read_embeddings(path)[1]['cache_key']}.parquet"
        assert entry.read_bytes() == path.read_bytes() and entry.with_suffix(".json").exists(), path

    work = copy_run(switched_prepared, tmp_path / "p")
    write_switched_config(work, DEFAULT)
    assert not _ran_rules(run_snakemake(work, *SWITCHED_ARGS).stdout, SWITCHED_UPSTREAM_RULES)
    assert "Nothing to be done" in run_snakemake(work, "-n", *SWITCHED_ARGS).stdout
    default, hashes = _hashes(work / "results" / "sw"), _hashes(switched / "results" / "sw")
    assert any(p.startswith("embeddings/tiny-bert/") for p in default), sorted(default)
    assert any(p.startswith("cluster_keys/") for p in hashes), sorted(hashes)  # the switches were on
    differ = sorted(p for p in default if hashes.get(p) != default[p])
    assert not differ, differ
    extra = sorted(p for p in set(hashes) - set(default) if not BOOKKEEPING.search(p))
    assert not extra, extra


@pytest.mark.workflow
@pytest.mark.parametrize("cluster_batch", [False, True], ids=["cluster_batch-off", "cluster_batch-on"])
def test_the_cluster_switch_reaches_no_embed_job(tmp_path, all_switches_run, cluster_batch):
    """From the all-switches run's embeddings (every file after the embed stage removed), cluster.batch on or off
    plans no job of the embed stage or upstream of it."""
    work = copy_run(all_switches_run / "p", tmp_path / "p")
    results = work / "results" / "sw"
    for path in sorted(results.rglob("*"), reverse=True):  # files before their folders
        if path.is_file() and not EMBED_STAGE.match(path.relative_to(results).as_posix()):
            path.unlink()
    write_switched_config(work, (*ALL_SWITCHES[:3], cluster_batch))
    planned = {rule for rule, _ in planned_outputs(run_snakemake(work, "-n", *SWITCHED_ARGS).stdout)}
    assert planned & {"cluster_batch" if cluster_batch else "cluster"}, sorted(planned)
    assert not planned & {*SWITCHED_UPSTREAM_RULES, *SWITCHED_RULES}, sorted(planned)
