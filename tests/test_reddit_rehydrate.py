"""Rehydration with the real PRAW library against a fake Reddit API on 127.0.0.1 (tests/fake_reddit.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from fake_reddit import FakeReddit, make_posts

from tecb.data import rehydrate

CLIENT_ID = "fake-client-id-42"
SECRET = "PLANTED-SECRET-9f3a7c"
REMOVED, DELETED = {"x0003", "x0110"}, {"x0005"}
UNKNOWN = ["zz001", "zz002"]


@pytest.fixture
def creds(monkeypatch, tmp_path):
    for key in list(os.environ):
        if key.lower().startswith("praw_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("praw_client_id", CLIENT_ID)
    monkeypatch.setenv("praw_client_secret", SECRET)
    monkeypatch.setenv("HOME", str(tmp_path))  # no praw.ini of the developer's
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)


def _ids_file(tmp_path, posts, extra=()):
    path = tmp_path / "ids.txt"
    ids = list(posts) + list(extra)
    path.write_text("id\n" + "\n".join(ids + ids[:7]) + "\n")  # with duplicates, like the real list
    return path


def _settings(fake, **more):
    return {"oauth_url": fake.url, "reddit_url": fake.url, "backoff_seconds": 0.05, **more}


def _run(tmp_path, fake, name="out", **kw):
    logged = []
    summary = rehydrate.rehydrate(
        tmp_path / "ids.txt",
        tmp_path / f"{name}.parquet",
        tmp_path / f"{name}.jsonl",
        _settings(fake, **kw),
        summary_path=tmp_path / f"{name}.json",
        log=logged.append,
    )
    return summary, logged


@pytest.mark.slow
def test_rehydrate_unknown_removed_deleted_429_and_500(tmp_path, creds):
    posts = make_posts(250, removed=REMOVED, deleted=DELETED)
    _ids_file(tmp_path, posts, UNKNOWN)
    script = [(429, {"retry-after": "0.6"}), (500, {})]
    with FakeReddit(posts, CLIENT_ID, SECRET, script=script) as fake:
        t0 = time.monotonic()
        summary, logged = _run(tmp_path, fake)
        elapsed = time.monotonic() - t0
        requests = fake.info_requests
    assert elapsed >= 0.6  # the retry-after header was honoured
    assert summary.retries == {"429": 1}
    assert any("429" in m and "waiting 0.6 s" in m for m in logged)
    # 3 batches + the 429 + the 500 (retried by prawcore itself), at most 100 ids each
    assert len(requests) == 5 and max(len(r) for r in requests) == 100
    assert (summary.requested, summary.found, summary.missing) == (252, 250, 2)
    assert (summary.removed, summary.deleted) == (2, 1)
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.schema.names == ["id", "subreddit", "title", "selftext", "created_utc"]
    assert table.column("id").to_pylist() == list(posts)  # id-list order, unknown ids absent
    assert table.column("selftext").null_count == 0
    assert any("252 ids: 250 found, 2 missing" in m and "2 removed, 1 deleted" in m for m in logged)
    assert any(m.startswith("batch 3: 50/52 found") for m in logged)


def test_interrupted_run_resumes_and_fetches_only_the_rest(tmp_path, creds):
    posts = make_posts(450)
    _ids_file(tmp_path, posts)
    with FakeReddit(posts, CLIENT_ID, SECRET, fail_after=2) as fake:  # the 3rd request fails for good
        with pytest.raises(Exception, match="403|Forbidden"):
            _run(tmp_path, fake)
    assert not (tmp_path / "out.parquet").exists()
    assert len(rehydrate.read_checkpoint(tmp_path / "out.jsonl")) == 200
    with FakeReddit(posts, CLIENT_ID, SECRET) as fake:
        summary, _ = _run(tmp_path, fake)
        fetched = fake.fetched_ids
    assert sorted(fetched) == sorted(list(posts)[200:])  # nothing refetched
    assert (summary.from_checkpoint, summary.fetched_now, summary.found) == (200, 250, 450)
    assert pq.read_table(tmp_path / "out.parquet").column("id").to_pylist() == list(posts)
    with FakeReddit(posts, CLIENT_ID, SECRET) as fake:  # a complete checkpoint: no request at all
        _run(tmp_path, fake)
        assert fake.info_requests == [] and fake.token_requests == 0


@pytest.mark.slow
def test_killed_then_resumed_run_equals_an_uninterrupted_one(tmp_path, creds):
    posts = make_posts(600, removed=REMOVED, deleted=DELETED)
    _ids_file(tmp_path, posts, UNKNOWN)
    with FakeReddit(posts, CLIENT_ID, SECRET) as fake:
        _run(tmp_path, fake, name="whole")
    # After two batches the fake API stalls (each later request hangs far longer than the client's timeout), so
    # the run cannot finish before it is killed, however slow this machine is: no wall-clock limit in the test.
    with FakeReddit(posts, CLIENT_ID, SECRET, delay_after=2, delay=300.0) as fake:
        code = (
            "import sys; from tecb.data import rehydrate; "
            f"rehydrate.rehydrate('ids.txt', 'killed.parquet', 'killed.jsonl', {_settings(fake, max_retries=0)!r})"
        )
        proc = subprocess.Popen(
            [sys.executable, "-c", code], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        # wait on the condition (two batches checkpointed), or for the process to end on its own
        while len(rehydrate.read_checkpoint(tmp_path / "killed.jsonl")) < 200 and proc.poll() is None:
            time.sleep(0.05)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    done = rehydrate.read_checkpoint(tmp_path / "killed.jsonl")
    assert 200 <= len(done) < 602 and not (tmp_path / "killed.parquet").exists()
    with FakeReddit(posts, CLIENT_ID, SECRET) as fake:
        summary, _ = _run(tmp_path, fake, name="killed")
        assert not set(fake.fetched_ids) & set(done)
    assert summary.from_checkpoint == len(done)
    whole = pq.read_table(tmp_path / "whole.parquet")
    assert whole.num_rows == 600  # every known post (removed/deleted too: the builder drops them)
    assert pq.read_table(tmp_path / "killed.parquet").equals(whole)
    assert (tmp_path / "killed.parquet").read_bytes() == (tmp_path / "whole.parquet").read_bytes()


def test_wrong_credentials_fail_clearly_and_without_the_secret(tmp_path, creds):
    posts = make_posts(5)
    _ids_file(tmp_path, posts)
    with FakeReddit(posts, CLIENT_ID, "another-secret") as fake:
        with pytest.raises(rehydrate.RehydrateError) as info:
            _run(tmp_path, fake)
    assert SECRET not in str(info.value) and CLIENT_ID not in str(info.value)


@pytest.mark.slow
def test_planted_secret_never_reaches_logs_or_outputs(tmp_path, creds):
    posts = make_posts(150, removed=REMOVED)
    _ids_file(tmp_path, posts, UNKNOWN)
    log_file = tmp_path / "rehydrate.log"
    code = (
        "from tecb.data import rehydrate; from tecb.runlog import open_log; "
        f"rehydrate.rehydrate('ids.txt', 'out.parquet', 'out.jsonl', SETTINGS, summary_path='out.json', "
        f"log=open_log('{log_file}'))"
    )
    with FakeReddit(posts, CLIENT_ID, SECRET, script=[(429, {"retry-after": "0.1"}), (500, {})]) as fake:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        proc = subprocess.run(
            [sys.executable, "-c", code.replace("SETTINGS", repr(_settings(fake)))],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
        )
    assert proc.returncode == 0, proc.stderr
    assert "Retrying due to 500" in log_file.read_text()  # prawcore's own warnings land in the log too
    files = [p for p in Path(tmp_path).rglob("*") if p.is_file() and p.name != "ids.txt"]
    assert {"out.parquet", "out.jsonl", "out.json", "rehydrate.log"} <= {p.name for p in files}
    for path in files:
        data = path.read_bytes()
        assert SECRET.encode() not in data and CLIENT_ID.encode() not in data, path
    assert SECRET not in proc.stdout + proc.stderr
