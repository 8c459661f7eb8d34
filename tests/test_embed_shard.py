"""Sharded embedding (tecb.embed.shard): a dataset embedded in shards and merged gives the same bytes as one job."""

import hashlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tecb.embed import encode
from tecb.embed.shard import embed_shard, merge_shards, shard_ranges
from tecb.embed.tiny_bert import create_tiny_bert
from tecb.io import read_embeddings

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
        embed_shard(tmp_path / "t.parquet", tmp_path / "o.parquet", {"kind": "tfidf"}, {}, start=0, stop=1, seed=1)


@pytest.mark.slow
def test_sharded_equals_unsharded_byte_for_byte(tmp_path):
    model_dir = create_tiny_bert(tmp_path / "tiny", TEXTS[:500], seed=3, max_position_embeddings=32)
    spec = {"kind": "tiny-bert", "path": str(model_dir), "max_seq_length": 16}  # some texts are truncated
    options = {"batch_size": 64, "device": "cpu"}
    texts = tmp_path / "texts.parquet"
    pq.write_table(pa.table({"text_id": pa.array(range(N), pa.int32()), "text": TEXTS}), texts)

    whole = tmp_path / "whole.parquet"
    encode.embed_dataset(texts, whole, spec, options, seed=1, dataset="d")
    shards = []
    for i, (start, stop) in enumerate(shard_ranges(N, encode.CHUNK_SIZE)):
        shards.append(tmp_path / f"shard{i}.parquet")
        embed_shard(texts, shards[-1], spec, options, start=start, stop=stop, seed=1, dataset="d")
    assert len(shards) == 3
    merged = tmp_path / "merged.parquet"
    merge_shards(shards, merged)

    meta = read_embeddings(whole)[1]
    assert 0 < meta["truncated_fraction"] < 1  # the long-text statistics are really merged, not trivial
    assert read_embeddings(merged)[1] == meta
    assert hashlib.sha256(merged.read_bytes()).hexdigest() == hashlib.sha256(whole.read_bytes()).hexdigest()
