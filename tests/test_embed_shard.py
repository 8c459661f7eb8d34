"""Sharded embedding (tecb.embed.shard, config embed.shard_size): a dataset embedded in shards and merged gives the
same bytes as one job, in the library and in the workflow."""

import hashlib
import json
import re
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import ROOT, copy_project, run_snakemake
from helpers import small_embed_config

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
    encode.embed_dataset(encode.EmbedJob(texts, whole, spec, options, seed=1, dataset="d"))
    shards = []
    for i, (start, stop) in enumerate(shard_ranges(N, encode.CHUNK_SIZE)):
        shards.append(tmp_path / f"shard{i}.parquet")
        embed_shard(encode.EmbedJob(texts, shards[-1], spec, options, seed=1, dataset="d"), start=start, stop=stop)
    assert len(shards) == 3
    merged = tmp_path / "merged.parquet"
    merge_shards(shards, merged)

    meta = read_embeddings(whole)[1]
    assert 0 < meta["truncated_fraction"] < 1  # the long-text statistics are really merged, not trivial
    assert read_embeddings(merged)[1] == meta
    assert hashlib.sha256(merged.read_bytes()).hexdigest() == hashlib.sha256(whole.read_bytes()).hexdigest()


# --- the workflow (config embed.shard_size, workflow/rules/embed_shard.smk) ------------------------------------

DATASET = "TenKGnadClusteringS2S"  # 240 unique texts in the demo data
# chunks of 64 texts (the default 4096 would make the demo one chunk); 100 texts a shard: 4 shards of 64 texts
WF_CONFIG = small_embed_config(DATASET, chunk_size=64, shard_size=100)


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


def _ran(proc) -> Counter:
    """The jobs a run started, by rule (each job's header in the log)."""
    return Counter(re.findall(r"^(?:local)?(?:rule|checkpoint) (\w+):$", proc.stdout, flags=re.M))


@pytest.mark.workflow
def test_sharded_run_writes_the_unsharded_bytes(tmp_path):
    """embed.shard_size: the tiny BERT's dataset is embedded in 4 shard jobs and merged into the bytes one embed job
    writes (in the same run folder: the model is built there and its path is in the file); TF-IDF is not sharded.
    With the embedding store on, embed_merge merges the shards into the store's entry: the same bytes again."""
    work = copy_project(tmp_path / "w")
    targets = [f"results/a/embeddings/{m}/{DATASET}.parquet" for m in WF_CONFIG["models"]]
    tiny = work / targets[1]

    def run(name, embed, *extra):
        config = {**WF_CONFIG, "embed": {**WF_CONFIG["embed"], **embed}}
        (work / "config" / f"{name}.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        return run_snakemake(work, "--configfile", f"config/{name}.yaml", "--config", "run=a", "--cores", "2", *extra,
                             *targets)  # fmt: skip

    sharded = _ran(run("sharded", {}))
    assert sharded["embed_shard"] == 4 and sharded["embed_merge"] == 1 and sharded["embed_plan"] == 1, sharded
    assert sharded["embed"] == 1, sharded  # TF-IDF, in one job
    plan = json.loads((work / "results/a/shards" / f"{DATASET}.json").read_text())
    assert plan["n_texts"] == 240 and plan["shards"] == [[0, 64], [64, 128], [128, 192], [192, 240]], plan
    assert not list((work / "results/a/shards/tiny-bert").rglob("*.parquet"))  # shards are temporary
    assert "Nothing to be done" in run("sharded", {}, "-n").stdout  # a finished run plans nothing
    assert "Nothing to be done" in run("other-size", {"shard_size": 150}, "-n").stdout  # nor for another size
    expected = _sha(tiny)
    meta = read_embeddings(tiny)[1]
    assert meta["n_texts"] == 240 and meta["chunk_size"] == 64

    tiny.unlink()
    unsharded = _ran(run("unsharded", {"shard_size": None}))
    assert unsharded == Counter({"embed": 1}), unsharded
    assert _sha(tiny) == expected

    tiny.unlink()
    cached = _ran(run("cached", {"cache_dir": "resources/embedding-cache", "shard_size": 150}))
    assert cached["embed_shard"] == 2 and cached["embed_merge"] == 1, cached  # 2 shards, merged into the entry
    assert "embed" not in cached, cached  # TF-IDF's file is kept: the store is no setting that re-embeds
    assert "computed into the cache" in (work / "logs/a/embed_merge/tiny-bert" / f"{DATASET}.log").read_text()
    assert (
        _sha(tiny)
        == expected
        == _sha(work / "resources/embedding-cache" / f"{read_embeddings(tiny)[1]['cache_key']}.parquet")
    )
    timings = json.loads((work / f"results/a/timings/embed/tiny-bert/{DATASET}.json").read_text())
    assert timings["n_texts"] == 240 and timings["shards"] == 2
