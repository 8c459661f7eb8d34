"""`snakemake prefetch`, the paper's step 1, runs every network rule the config needs against local stand-ins:
a 127.0.0.1 HTTP server (GermEval zip, One Million Posts archive, Reddit id list), a fake Reddit API and a local
Hugging Face cache (a published dataset, a hub model); afterwards the rest of the run needs none of them."""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import json
import os
import tarfile
import threading
from pathlib import Path

import pytest
import yaml
from conftest import copy_project, run_snakemake
from fake_reddit import FakeReddit, make_posts
from helpers import job_counts

from tecb.data import demo

CLIENT_ID = "prefetch-client-id"
SECRET = "PREFETCH-SECRET-42"
MODEL_COMMIT = "b" * 40
DATA_COMMIT = "c" * 40
NETWORK_RULES = {
    "download_germeval2019",
    "download_million_posts",
    "download_published",
    "reddit_ids",
    "rehydrate_reddit",
    "prefetch_model",
}


def _hub_cache(root: Path, kind: str, repo: str, commit: str, files: dict[str, str]) -> None:
    """A repository in the Hugging Face cache layout (what `huggingface_hub` reads with HF_HUB_OFFLINE=1)."""
    repo_dir = root / f"{kind}--{repo.replace('/', '--')}"
    (repo_dir / "refs").mkdir(parents=True)
    (repo_dir / "refs" / "main").write_text(commit)
    for name, text in files.items():
        path = repo_dir / "snapshots" / commit / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _served(folder: Path):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *args: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


@pytest.mark.workflow
def test_prefetch_runs_every_network_rule_then_the_run_needs_none(tmp_path):
    workdir = copy_project(tmp_path / "project")
    www = tmp_path / "www"
    www.mkdir()
    demo.write_germeval_zip(www / "germeval.zip", books_per_genre=4, seed=1)
    corpus = demo.write_million_posts_sqlite(tmp_path / "corpus.sqlite3", articles_per_topic=3, seed=1)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:bz2") as tar:
        tar.add(corpus, arcname="million_post_corpus/corpus.sqlite3")
    (www / "mpc.tar.bz2").write_bytes(buffer.getvalue())
    posts = make_posts(120, n_subreddits=12)
    (www / "ids.txt").write_text("id\n" + "\n".join(posts) + "\n")
    cache = tmp_path / "hf-cache"
    _hub_cache(cache, "models", "org/tiny", MODEL_COMMIT, {"config.json": '{"model_type": "bert"}'})
    split = {"sentences": [f"Satz {i}" for i in range(12)], "labels": [f"l{i % 3}" for i in range(12)]}
    _hub_cache(cache, "datasets", "org/published", DATA_COMMIT, {"test.jsonl": json.dumps(split) + "\n"})

    httpd = _served(www)
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    env = {k: v for k, v in os.environ.items() if not k.lower().startswith("praw_")}
    env.update(praw_client_id=CLIENT_ID, praw_client_secret=SECRET, HF_HUB_CACHE=str(cache), HOME=str(tmp_path))
    try:
        with FakeReddit(posts, CLIENT_ID, SECRET) as fake:
            config = {
                "sources": {
                    "germeval2019": {
                        "url": f"{base}/germeval.zip",
                        "sha256": hashlib.sha256((www / "germeval.zip").read_bytes()).hexdigest(),
                    },
                    "million_posts": {"url": f"{base}/mpc.tar.bz2"},
                    "reddit": {
                        "ids_url": f"{base}/ids.txt",
                        "oauth_url": fake.url,
                        "reddit_url": fake.url,
                        "user_agent": "tecb-test",
                    },
                    "published_test": {"builder": "published", "repo_id": "org/published", "revision": DATA_COMMIT},
                },
                "datasets": {
                    "BlurbsClusteringS2S": {"source": "germeval2019", "text": "s2s"},
                    "TenKGnadClusteringS2S": {"source": "million_posts", "text": "s2s"},
                    "RedditClusteringS2S": {"source": "reddit", "text": "s2s"},
                    "PublishedS2S": {"source": "published_test"},
                },
                "models": {
                    "tfidf": {"kind": "tfidf", "dim": 8},
                    "tiny": {"id": "org/tiny", "revision": MODEL_COMMIT},
                },
                "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
            }
            (workdir / "config" / "prefetch_test.yaml").write_text(yaml.safe_dump(config))
            args = ("--configfile", "config/prefetch_test.yaml", "--cores", "1")
            plan = job_counts(run_snakemake(workdir, *args, "-n", "prefetch", env=env).stdout)
            assert set(plan) == NETWORK_RULES | {"prefetch"}, plan
            run_snakemake(workdir, *args, "prefetch", env=env)
            n_requests = len(fake.info_requests)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert n_requests == 2  # 120 ids, 100 per request
    for rule_log in ("germeval2019", "million_posts", "published_test"):
        assert (workdir / "logs" / "download" / f"{rule_log}.log").exists(), rule_log
    assert (workdir / "resources/downloads/germeval2019t1-public-data-final.zip").read_bytes() == (
        www / "germeval.zip"
    ).read_bytes()
    assert (workdir / "resources/downloads/million_post_corpus/corpus.sqlite3").read_bytes() == corpus.read_bytes()
    assert json.loads((workdir / "resources/published/published_test/test.jsonl").read_text()) == split
    assert (workdir / "resources/models/tiny/.tecb_revision").read_text().strip() == MODEL_COMMIT
    assert "120 found" in (workdir / "logs/reddit/rehydrate.log").read_text()
    # done: nothing left to fetch, and the rest of the run plans no job that needs the network
    assert job_counts(run_snakemake(workdir, *args, "-n", "prefetch", env=env).stdout) == {}
    rest = job_counts(run_snakemake(workdir, *args, "-n", env=env).stdout)
    assert "embed" in rest or "embed_batch" in rest, rest
    assert not NETWORK_RULES & set(rest), rest


@pytest.mark.workflow
def test_the_papers_prefetch_plans_its_downloads_reddit_and_every_hub_model(tmp_path):
    workdir = copy_project(tmp_path / "project")
    paper = yaml.safe_load((workdir / "config" / "config.yaml").read_text())
    plan = job_counts(run_snakemake(workdir, "-n", "prefetch").stdout)
    assert plan == {
        "download_germeval2019": 1,
        "download_million_posts": 1,
        "reddit_ids": 1,
        "rehydrate_reddit": 1,
        "prefetch_model": len(paper["models"]),
        "prefetch": 1,
    }
