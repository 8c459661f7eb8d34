"""Downloads against a local HTTP server: full, resumed (HTTP Range), checksum mismatch, archive member."""

from __future__ import annotations

import hashlib
import http.server
import io
import tarfile
import threading
import urllib.error
from pathlib import Path

import pytest

from tecb.data import download


class RangeHandler(http.server.BaseHTTPRequestHandler):
    files: dict[str, bytes] = {}
    ranges: list[str] = []

    def do_GET(self):  # noqa: N802 (http.server API)
        data = self.files.get(self.path)
        if data is None:
            self.send_error(404)
            return
        rng = self.headers.get("Range")
        self.ranges.append(rng or "")
        start = int(rng.split("=")[1].rstrip("-")) if rng else 0
        if start >= len(data):
            self.send_error(416)
            return
        self.send_response(206 if rng else 200)
        if rng:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        self.wfile.write(data[start:])

    def log_message(self, *args):
        pass


@pytest.fixture()
def server():
    RangeHandler.files = {}
    RangeHandler.ranges = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), RangeHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", RangeHandler
    httpd.shutdown()
    httpd.server_close()


PAYLOAD = bytes(range(256)) * 4096  # 1 MiB


def test_download_verifies_sha256(server, tmp_path):
    base, handler = server
    handler.files["/data.bin"] = PAYLOAD
    out = download.download(
        f"{base}/data.bin", tmp_path / "d" / "data.bin", hashlib.sha256(PAYLOAD).hexdigest(), log=lambda m: None
    )
    assert out.read_bytes() == PAYLOAD
    assert not (tmp_path / "d" / "data.bin.part").exists()


def test_resumes_partial_download_with_range(server, tmp_path):
    base, handler = server
    handler.files["/data.bin"] = PAYLOAD
    dest = tmp_path / "data.bin"
    (tmp_path / "data.bin.part").write_bytes(PAYLOAD[:300_000])
    messages = []
    download.download(f"{base}/data.bin", dest, hashlib.sha256(PAYLOAD).hexdigest(), log=messages.append)
    assert handler.ranges == ["bytes=300000-"]
    assert dest.read_bytes() == PAYLOAD
    assert any("resuming" in m for m in messages)


def test_checksum_mismatch_shows_both_hashes_and_leaves_nothing(server, tmp_path):
    base, handler = server
    handler.files["/data.bin"] = PAYLOAD
    wrong = "0" * 64
    with pytest.raises(download.ChecksumError) as err:
        download.download(f"{base}/data.bin", tmp_path / "data.bin", wrong, log=lambda m: None)
    assert wrong in str(err.value) and hashlib.sha256(PAYLOAD).hexdigest() in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_fetch_extracts_member_from_tar_bz2(server, tmp_path):
    base, handler = server
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:bz2") as tf:
        info = tarfile.TarInfo("million_post_corpus/corpus.sqlite3")
        info.size = 5
        tf.addfile(info, io.BytesIO(b"hello"))
    handler.files["/million_post_corpus.tar.bz2"] = buf.getvalue()
    out = download.fetch(
        f"{base}/million_post_corpus.tar.bz2",
        tmp_path / "mpc" / "corpus.sqlite3",
        member="corpus.sqlite3",
        archive=tmp_path / "mpc" / "archive.tar.bz2",
        log=lambda m: None,
    )
    assert Path(out).read_bytes() == b"hello"
    assert sorted(p.name for p in (tmp_path / "mpc").iterdir()) == ["archive.tar.bz2", "corpus.sqlite3"]  # declared
    with pytest.raises(ValueError, match="needs the path the archive is downloaded to"):
        download.fetch(f"{base}/million_post_corpus.tar.bz2", tmp_path / "x.sqlite3", member="corpus.sqlite3")


def test_fetch_without_url_asks_for_a_path(tmp_path):
    with pytest.raises(ValueError, match="local `path`"):
        download.fetch(None, tmp_path / "x.zip")


def test_complete_partial_file_is_accepted_on_416(server, tmp_path):
    base, handler = server
    handler.files["/data.bin"] = PAYLOAD
    (tmp_path / "data.bin.part").write_bytes(PAYLOAD)
    download.download(
        f"{base}/data.bin", tmp_path / "data.bin", hashlib.sha256(PAYLOAD).hexdigest(), log=lambda m: None
    )
    assert (tmp_path / "data.bin").read_bytes() == PAYLOAD and handler.ranges == [f"bytes={len(PAYLOAD)}-"]


def test_server_ignoring_range_restarts_from_scratch(server, tmp_path, monkeypatch):
    base, handler = server
    handler.files["/data.bin"] = PAYLOAD
    monkeypatch.setattr(handler, "do_GET", _full_get)
    (tmp_path / "data.bin.part").write_bytes(b"garbage" * 10)
    download.download(
        f"{base}/data.bin", tmp_path / "data.bin", hashlib.sha256(PAYLOAD).hexdigest(), log=lambda m: None
    )
    assert (tmp_path / "data.bin").read_bytes() == PAYLOAD


def _full_get(self):
    data = self.files[self.path]
    self.send_response(200)
    self.send_header("Content-Length", str(len(data)))
    self.end_headers()
    self.wfile.write(data)


def test_missing_file_raises_http_error(server, tmp_path):
    base, _ = server
    with pytest.raises(urllib.error.HTTPError):
        download.download(f"{base}/nope.bin", tmp_path / "nope.bin", log=lambda m: None)
    assert not (tmp_path / "nope.bin").exists()
