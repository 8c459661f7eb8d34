"""Embedding reruns (issues 16.1, 15.1, 15.2): exactly the changes that alter vectors re-embed.

A tiny BERT as a `kind: local` model on a small custom dataset: after one run, `snakemake -n` plans
nothing for a new display name, batch size or thread count, and plans the embed job for a new prompt
or for overwritten weights (even when the new file's mtime is older). And config/modern.yaml plans.
"""

from __future__ import annotations

import json
import os
import re

import pyarrow.parquet as pq
import pytest
import yaml
from conftest import copy_project, run_snakemake
from helpers import job_counts

from tecb.embed.tiny_bert import create_tiny_bert

pytestmark = pytest.mark.workflow

TARGETS = ["results/embeddings/tiny-local/News.parquet", "results/embeddings/tfidf/News.parquet"]


def planned(work, config) -> dict[str, int]:
    """Jobs `snakemake -n` plans for ``config`` (rule -> count; empty when nothing is to be done)."""
    (work / "config" / "h4.yaml").write_text(yaml.safe_dump(config))
    return job_counts(run_snakemake(work, "--configfile", "config/h4.yaml", "-n", "--cores", "1", *TARGETS).stdout)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    work = copy_project(tmp_path_factory.mktemp("embedwf") / "proj")
    rows = [
        ("Tor Spiel Mannschaft Trainer", "sport"),
        ("Regierung Wahl Partei Minister", "politik"),
        ("Theater Roman Konzert Museum", "kultur"),
    ] * 8
    (work / "news.tsv").write_text(
        "text\tlabel\n" + "".join(f"{t} Nummer {i}\t{lab}\n" for i, (t, lab) in enumerate(rows))
    )
    create_tiny_bert(work / "my-model", [t for t, _ in rows], seed=3, vocab_size=200)
    config = {
        "seed": 42,
        "sources": {"news": {"builder": "custom", "path": "news.tsv"}},
        "datasets": {"News": {"source": "news", "text_column": "text", "label_column": "label", "n_splits": 2}},
        "models": {
            "tiny-local": {"name": "Tiny", "kind": "local", "path": "my-model", "prompt": "Thema: "},
            "tfidf": {"name": "TF-IDF", "kind": "tfidf", "dim": 8},
        },
        "embed": {"device": "cpu", "batch_size": 4, "threads": 1},
        "algorithms": {"kmeans": {"method": "minibatch_kmeans"}},
        "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
    }
    (work / "config" / "h4.yaml").write_text(yaml.safe_dump(config))
    run_snakemake(work, "--configfile", "config/h4.yaml", "--cores", "1", *TARGETS)
    return work, config


def test_embedding_records_settings_digest_and_long_text_stats(project):
    work, _ = project
    meta = json.loads(pq.read_schema(work / TARGETS[0]).metadata[b"tecb"])
    digest = json.loads((work / "results/models/tiny-local.sha256.json").read_text())
    assert meta["model_sha256"] == digest["sha256"] and "model.safetensors" in digest["files"]
    assert meta["prompt"] == "Thema: " and meta["kind"] == "local"
    assert meta["truncated_fraction"] == 0.0 and meta["token_coverage"] == 1.0
    # how the job ran is its timings file's, not the embeddings file's (whose bytes depend on its cache key only)
    timings = json.loads((work / "results/timings/embed/tiny-local/News.json").read_text())
    assert timings["batch_size"] == 4 and "batch_size" not in meta and meta["source"] is None
    n = meta["n_texts"]
    assert f"encoded {n}/{n} texts (100%)" in (work / "logs/embed/tiny-local/News.log").read_text()


def test_reruns_follow_what_decides_the_vectors(project):
    work, config = project
    assert planned(work, config) == {}
    renamed = json.loads(json.dumps(config))
    renamed["models"]["tiny-local"]["name"] = "Another display name"
    renamed["models"]["tiny-local"]["batch_size"] = 2
    renamed["embed"].update(batch_size=16, threads=2)
    assert planned(work, renamed) == {}
    reprompted = json.loads(json.dumps(config))
    reprompted["models"]["tiny-local"]["prompt"] = "Nachricht: "
    assert planned(work, reprompted) == {"embed": 1}  # tiny-local only: TF-IDF is untouched
    repooled = json.loads(json.dumps(config))
    repooled["models"]["tiny-local"]["pooling"] = "cls"
    assert planned(work, repooled) == {"embed": 1}


def test_overwritten_weights_re_embed_even_with_an_older_mtime(project):
    work, config = project
    weights = work / "my-model" / "model.safetensors"
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same times: nothing to do
    assert planned(work, config) == {}
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    os.utime(weights, ns=(stat.st_atime_ns - 10**9, stat.st_mtime_ns - 10**9))  # as `cp -p` of an older file would
    assert planned(work, config) == {"model_digest": 1, "embed": 1}


def test_modern_config_plans(tmp_path):
    """config/modern.yaml over the defaults: 11 models of mteb's registry (kind: mteb) + TF-IDF on the paper's six
    datasets; nothing mteb holds (revision, prompt, dtype, remote code) is copied into the config (issue 37)."""
    import mteb

    from tecb.embed import mteb_model
    from tecb.embed.spec import encoder_settings

    work = copy_project(tmp_path / "proj")
    out = run_snakemake(work, "--configfile", "config/modern.yaml", "-n", "--cores", "2", "--resources", "gpu=1").stdout
    counts = job_counts(out)
    modern = yaml.safe_load((work / "config" / "modern.yaml").read_text())
    hub = [k for k, m in modern["models"].items() if m.get("kind") == "mteb"]
    assert counts["prefetch_model"] == len(hub) == 11
    assert counts["embed"] == 6 * len(modern["models"])
    assert counts["models_table"] == 1 and counts["leaderboard"] == 1
    assert "results/modern/embeddings/qwen3-embedding-0.6b/BlurbsClusteringS2S.parquet" in out
    text = (work / "config" / "modern.yaml").read_text()
    held = {"id", "revision", "prompt", "prompt_name", "dtype", "trust_remote_code", "max_seq_length", "pooling"}
    for key in hub:  # each model cites its model card, and leaves to mteb what mteb holds
        block = text[: text.index(f"\n  {key}:")].rsplit("\n\n", 1)[-1]
        assert "https://" in block, key
        assert not held & set(modern["models"][key]), key
        meta = mteb.get_model_meta(modern["models"][key]["name"])
        settings = encoder_settings(modern["models"][key], {}, "BlurbsClusteringS2S")
        assert settings["revision"] == meta.revision and re.fullmatch(r"[0-9a-f]{40}", settings["revision"]), key
    name = {k: m.get("name") for k, m in modern["models"].items()}
    assert mteb.get_model_meta(name["sentence-t5-xxl"]).revision == "4d122282ba80e807e9e6eb8c358269e92796365d"
    # MTEB's prompt rule for clustering: a prompt for the task or the task type, never the query/document prompts
    e5 = mteb.get_model_meta(name["me5-large"]).loader_kwargs["model_prompts"]
    assert mteb_model.expected_prompt(e5, "RedditClustering") is None
    nomic = mteb.get_model_meta(name["nomic-embed-text-v2-moe"]).loader_kwargs["model_prompts"]
    assert mteb_model.expected_prompt(nomic, "BlurbsClusteringS2S") == "clustering: "
    # both scoring protocols and the AMI tables are planned
    assert counts["mteb_v2"] == 6 * len(modern["models"]) and counts["mteb_v2_table"] == 1
    assert "results/modern/tables/table2_ami.md" in out and "results/modern/tables/table_mteb_v2.md" in out
