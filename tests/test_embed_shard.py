"""Sharded embedding (tecb.embed.shard, config embed.shard_size): a dataset embedded in shards and merged gives the
same bytes as one job, in the library and in the workflow."""

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import (
    ALL_SWITCHES,
    ROOT,
    SWITCHED_ARGS,
    SWITCHED_DATASET,
    copy_run,
    run_snakemake,
    write_switched_config,
)

from tecb.config import layered_config
from tecb.configcheck import ConfigError, validated_config
from tecb.embed import encode
from tecb.embed.shard import embed_shard, merge_shards, merge_timings, plan_shards, shard_ranges
from tecb.embed.spec import encoder_settings
from tecb.embed.tiny_bert import create_tiny_bert
from tecb.io import read_embeddings, write_json

# more than two chunks of encode.CHUNK_SIZE (4096), with duplicates and lengths that differ (sorting matters)
N = 2 * encode.CHUNK_SIZE + 301
TEXTS = [f"Text {i % 5000} " + "sehr lang " * (i % 11) + ("über Bücher" if i % 3 else "über Sport") for i in range(N)]


def test_shard_ranges_are_whole_chunks():
    c = encode.CHUNK_SIZE
    assert shard_ranges(2 * c + 5, c) == [(0, c), (c, 2 * c), (2 * c, 2 * c + 5)]
    assert shard_ranges(2 * c + 5, c + 7) == [(0, c), (c, 2 * c), (2 * c, 2 * c + 5)]  # rounded down to chunks
    assert shard_ranges(10, 3) == [(0, 10)]  # at least one chunk
    assert shard_ranges(3 * c, 2 * c) == [(0, 2 * c), (2 * c, 3 * c)]


def test_tfidf_is_not_sharded(tmp_path):
    with pytest.raises(ValueError, match="TF-IDF cannot be sharded"):
        job = encode.EmbedJob(tmp_path / "t.parquet", tmp_path / "o.parquet", {"kind": "tfidf"}, {}, seed=1)
        embed_shard(job, start=0, stop=1)


@pytest.mark.slow
def test_sharded_equals_unsharded_byte_for_byte(tmp_path):
    model_dir = create_tiny_bert(tmp_path / "tiny", TEXTS[:500], seed=3, max_position_embeddings=32)
    spec = {"kind": "tiny-bert", "path": str(model_dir), "max_seq_length": 16}  # some texts are truncated
    options = {"batch_size": 64, "device": "cpu"}
    texts = tmp_path / "texts.parquet"
    pq.write_table(pa.table({"text_id": pa.array(range(N), pa.int32()), "text": TEXTS}), texts)

    whole = tmp_path / "whole.parquet"
    encode.embed_dataset(encode.EmbedJob.from_spec(texts, whole, spec, options, seed=1, dataset="d"))
    shards = []
    for i, (start, stop) in enumerate(shard_ranges(N, encode.CHUNK_SIZE)):
        shards.append(tmp_path / f"shard{i}.parquet")
        embed_shard(
            encode.EmbedJob.from_spec(texts, shards[-1], spec, options, seed=1, dataset="d"), start=start, stop=stop
        )
    assert len(shards) == 3
    merged = tmp_path / "merged.parquet"
    merge_shards(shards, merged)

    meta = read_embeddings(whole)[1]
    assert 0 < meta["truncated_fraction"] < 1  # the long-text statistics are really merged, not trivial
    assert read_embeddings(merged)[1] == meta
    assert hashlib.sha256(merged.read_bytes()).hexdigest() == hashlib.sha256(whole.read_bytes()).hexdigest()


# --- the workflow (config embed.shard_size, workflow/rules/embed_shard.smk) ------------------------------------


def test_plan_and_timings(tmp_path):
    texts = tmp_path / "texts.parquet"
    pq.write_table(
        pa.table({"text_id": pa.array(range(240), pa.int32()), "text": [f"t{i}" for i in range(240)]}), texts
    )
    plan = plan_shards(texts, shard_size=150, chunk_size=64)
    assert plan == {"n_texts": 240, "shard_size": 150, "chunk_size": 64, "shards": [(0, 128), (128, 240)]}
    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    write_json({"seconds": 1.5, "n_texts": 128, "texts_per_second": 85.3}, paths[0])
    write_json({"seconds": 0.5, "n_texts": 112, "texts_per_second": 224.0}, paths[1])
    merged = merge_timings(paths, tmp_path / "m.json")
    assert merged == {
        "seconds": 2.0,
        "n_texts": 240,
        "texts_per_second": 120.0,
        "shards": 2,
        "shard_seconds": [1.5, 0.5],
    }


def test_chunk_size_is_a_setting_only_where_it_is_not_the_default():
    spec = {"kind": "tiny-bert", "path": "m"}
    assert "chunk_size" not in encoder_settings(spec, {"chunk_size": encode.CHUNK_SIZE})  # as before the key
    assert encoder_settings(spec, {"chunk_size": 64})["chunk_size"] == 64
    assert "chunk_size" not in encoder_settings({"kind": "tfidf"}, {"chunk_size": 64})


@pytest.mark.parametrize("value", [0, -5, 2.5, "100", True])
def test_a_bad_shard_size_is_refused_naming_the_key(tmp_path, value):
    path = tmp_path / "my.yaml"
    path.write_text(yaml.safe_dump({"embed": {"shard_size": value}}))
    with pytest.raises(ConfigError, match=r"embed\.shard_size: (expected \['integer', 'null'\]|-?\d+ is less than)"):
        validated_config(layered_config(ROOT, tmp_path, [path]), ROOT / "workflow" / "schemas" / "config.schema.yaml")


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _ran(output: str) -> Counter:
    """The jobs a run started, by rule (each job's header in what it printed)."""
    return Counter(re.findall(r"^(?:local)?(?:rule|checkpoint) (\w+):$", output, flags=re.M))


@pytest.mark.workflow
def test_the_all_switches_run_shards_the_tiny_bert_into_the_stores_entry(tmp_path, all_switches_run):
    """embed.shard_size in the shared all-switches run (conftest.all_switches_run: shards of 150 texts, the store,
    embed.batch, cluster.batch): the tiny BERT's dataset is embedded in 2 shard jobs and merged by embed_merge into
    the store's entry (the same bytes as the run's file; that these are the bytes of one unsharded embed job:
    tests/test_embed_switches.py, with the default run); TF-IDF is not sharded (one embed_batch job). The shards are
    temporary; a finished run plans nothing, nor does another shard size or the store turned off."""
    work, dataset = all_switches_run / "p", SWITCHED_DATASET
    ran = _ran(Path(all_switches_run / "run.log").read_text())
    assert ran["embed_shard"] == 2 and ran["embed_merge"] == 1 and ran["embed_plan"] == 1, ran
    assert ran["embed_batch"] == 1 and "embed" not in ran, ran  # TF-IDF, in one job
    plan = json.loads((work / "results/sw/shards" / f"{dataset}.json").read_text())
    assert plan["n_texts"] > 128 and plan["shards"] == [[0, 128], [128, plan["n_texts"]]], plan
    assert not list((work / "results/sw/shards/tiny-bert").rglob("*.parquet"))  # shards are temporary
    assert "Nothing to be done" in Path(all_switches_run / "dry-run.log").read_text()  # a finished run plans nothing
    other = copy_run(work, tmp_path / "p")
    write_switched_config(other, ALL_SWITCHES, shard_size=100)
    embeddings = [f"results/sw/embeddings/{m}/{dataset}.parquet" for m in ("tfidf", "tiny-bert")]
    # nor another size (of the embeddings: the report's copy of the config changes with it)
    assert "Nothing to be done" in run_snakemake(other, "-n", *embeddings, *SWITCHED_ARGS).stdout
    write_switched_config(other, (True, False, True, True))  # nor the store off: it is no setting that re-embeds
    assert "Nothing to be done" in run_snakemake(other, "-n", *embeddings, *SWITCHED_ARGS).stdout

    tiny = work / "results/sw/embeddings/tiny-bert" / f"{dataset}.parquet"
    meta = read_embeddings(tiny)[1]
    assert meta["n_texts"] == plan["n_texts"] and meta["chunk_size"] == 64
    assert "computed into the cache" in (work / "logs/sw/embed_merge/tiny-bert" / f"{dataset}.log").read_text()
    assert _sha(tiny) == _sha(work / "resources/embedding-cache" / f"{meta['cache_key']}.parquet")
    timings = json.loads((work / f"results/sw/timings/embed/tiny-bert/{dataset}.json").read_text())
    assert timings["n_texts"] == plan["n_texts"] and timings["shards"] == 2
