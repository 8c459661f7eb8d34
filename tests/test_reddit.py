"""Reddit without the network: id lists, checkpoints, scrubbing, credentials, cleaning and splits."""

from __future__ import annotations

import os
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import SHARED

from tecb.data import datasets, rehydrate
from tecb.data.sources import reddit


def test_read_ids_deduplicates_in_first_seen_order(tmp_path):
    path = tmp_path / "ids.txt"
    path.write_text("id\nabc1\nzz9\nabc1\n\nT3_Q0\nzz9\n", encoding="utf-8")
    ids, n_lines = rehydrate.read_ids(path)
    assert ids == ["abc1", "zz9", "q0"]
    assert n_lines == 5
    rehydrate.write_ids(ids, tmp_path / "out.txt")
    assert (tmp_path / "out.txt").read_text() == "id\nabc1\nzz9\nq0\n"


@pytest.mark.parametrize(
    "text, where",
    [("ids\nabc\n", "line 1"), ("id\nabc\nnot-an-id\n", "line 3"), ("id\n", "no submission ids")],
)
def test_read_ids_errors_name_file_and_line(tmp_path, text, where):
    path = tmp_path / "bad.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(rehydrate.IdListError, match=where) as info:
        rehydrate.read_ids(path)
    assert str(path) in str(info.value)


@pytest.mark.skipif(not (SHARED / "data/reddit/submission_ids.txt").exists(), reason="no shared data")
def test_real_id_list_has_40759_distinct_ids(tmp_path):
    ids = rehydrate.prepare_ids(
        tmp_path / "ids.txt", path=SHARED / "data/reddit/submission_ids.txt", log=lambda m: None
    )
    assert len(ids) == 40759 == len(set(ids))
    assert rehydrate.read_ids(tmp_path / "ids.txt") == (ids, 40759)


def test_prepare_ids_needs_a_source(tmp_path):
    with pytest.raises(rehydrate.IdListError, match="ids_path"):
        rehydrate.prepare_ids(tmp_path / "ids.txt")


def test_checkpoint_roundtrip_ignores_a_torn_last_line(tmp_path):
    ck = tmp_path / "ck.jsonl"
    rec = {"id": "a", "subreddit": "s", "title": "t", "selftext": "", "created_utc": 1.0}
    rehydrate.append_checkpoint(ck, ["a", "b"], [rec])
    with open(ck, "a") as fh:
        fh.write('{"requested": ["c"], "fou')  # killed while writing
    assert rehydrate.read_checkpoint(ck) == {"a": rec, "b": None}
    rehydrate.append_checkpoint(ck, ["c"], [])  # the torn line is cut, the new batch readable
    assert rehydrate.read_checkpoint(ck) == {"a": rec, "b": None, "c": None}


def test_checkpoint_corruption_in_the_middle_is_an_error(tmp_path):
    ck = tmp_path / "ck.jsonl"
    ck.write_text('{"requested": ["a"], "found": []}\nGARBAGE\n{"requested": ["b"], "found": []}\n')
    with pytest.raises(ValueError, match="line 2"):
        rehydrate.read_checkpoint(ck)


def test_scrubber_removes_secrets():
    scrub = rehydrate.Scrubber(["hunter2-secret", "abc"])  # too short values are not scrubbed
    assert scrub("token hunter2-secret!") == "token ***!"
    assert "abc" in scrub("abc")


def test_missing_credentials_explain_what_to_do(tmp_path, monkeypatch):
    for key in list(os.environ):
        if key.lower().startswith("praw_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(rehydrate.CredentialsError) as info:
        rehydrate.make_reddit({})
    text = str(info.value)
    assert "praw_client_id" in text and "praw.ini" in text and "reddit.com/prefs/apps" in text


def test_a_secret_in_an_unexpected_error_is_scrubbed(tmp_path, monkeypatch):
    secret = "PLANTED-s3cret-value"
    monkeypatch.setenv("praw_client_secret", secret)

    class Exploding:
        def info(self, fullnames):
            raise RuntimeError(f"connection failed for client secret {secret}")

    (tmp_path / "ids.txt").write_text("id\nabc\n")
    logged = []
    with pytest.raises(rehydrate.RehydrateError) as info:
        rehydrate.rehydrate(
            tmp_path / "ids.txt", tmp_path / "out.parquet", tmp_path / "ck.jsonl", log=logged.append, reddit=Exploding()
        )
    assert secret not in str(info.value) and "***" in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert not any(secret in m for m in logged)
    assert not (tmp_path / "out.parquet").exists()


# --- cleaning and splits ---------------------------------------------------------------------


def _submissions(tmp_path, n_subreddits=60, per=4):
    rows = []
    for s in range(n_subreddits):
        for k in range(per):
            rows.append(
                {
                    "id": f"i{s}x{k}",
                    "subreddit": f"sub{s}",
                    "title": f"Titel {s}/{k} [mehr](http://a.b/c)",
                    "selftext": None if k == 0 else f"Text {s} {k} siehe https://x.y/z?q=1 und [hier](https://e.de)",
                    "created_utc": 1.0,
                }
            )
    rows[1]["selftext"] = "[removed]"
    rows[2]["selftext"] = "[deleted]"
    path = tmp_path / "submissions.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=reddit.SUBMISSIONS_SCHEMA), path)
    return path, rows


def test_usable_submissions_apply_the_paper_rules(tmp_path):
    path, _ = _submissions(tmp_path)
    rows, dropped = reddit.usable_submissions(reddit.read_submissions(path))
    assert dropped["removed"] == 1 and dropped["deleted"] == 1
    assert len(rows) == 60 * 4 - 2
    by_id = {r["id"]: r for r in rows}
    assert by_id["i0x0"]["selftext"] == ""  # None -> "", never NaN
    assert by_id["i0x0"]["title"] == "Titel 0/0 mehr"
    assert by_id["i0x3"]["selftext"] == "Text 0 3 siehe und hier"
    assert all("http" not in r["title"] + r["selftext"] for r in rows)


@pytest.mark.parametrize("variant", ["s2s", "p2p"])
def test_build_reddit_draws_10_to_50_whole_subreddits(tmp_path, variant):
    path, _ = _submissions(tmp_path)
    ds = datasets.build_reddit(path, variant, seed=42)
    again = datasets.build_reddit(path, variant, seed=42)
    assert ds.texts == again.texts and ds.splits == again.splits
    assert len(ds.splits) == 10
    usable = Counter(r["subreddit"] for r in reddit.usable_submissions(reddit.read_submissions(path))[0])
    for _ids, labels in ds.splits:
        counts = Counter(labels)
        assert 10 <= len(counts) <= 50
        assert all(counts[s] == usable[s] for s in counts)  # all submissions of each drawn subreddit
    assert len({len(set(labels)) for _, labels in ds.splits}) > 1  # the number of subreddits varies
    if variant == "p2p":
        assert any(t.startswith("Titel 0/3 mehr Text 0 3") for t in ds.texts)
    else:
        assert all(t.startswith("Titel") and "Text" not in t for t in ds.texts)
    other = datasets.build_reddit(path, variant, seed=7)
    assert other.splits != ds.splits


def test_prepare_ids_downloads_and_checks_the_sha256(tmp_path):
    import functools
    import hashlib
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    from tecb.data.download import ChecksumError

    (tmp_path / "www").mkdir()
    body = b"id\nabc\nabd\nabc\n"
    (tmp_path / "www" / "submission_ids.txt").write_bytes(body)

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=tmp_path / "www"))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/submission_ids.txt"
    try:
        good = hashlib.sha256(body).hexdigest()
        ids = rehydrate.prepare_ids(tmp_path / "out/ids.txt", url=url, sha256=good, log=lambda m: None)
        assert ids == ["abc", "abd"]
        assert (tmp_path / "out/ids.txt").read_text() == "id\nabc\nabd\n"
        assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["ids.txt"]  # no leftovers
        with pytest.raises(ChecksumError, match="SHA-256 mismatch"):
            rehydrate.prepare_ids(tmp_path / "bad/ids.txt", url=url, sha256="0" * 64, log=lambda m: None)
        assert not (tmp_path / "bad/ids.txt").exists()
    finally:
        server.shutdown()
        server.server_close()
