"""A fake Reddit API on 127.0.0.1 for driving the real PRAW library in tests.

Serves the OAuth token endpoint (``POST /api/v1/access_token``, HTTP basic auth with the client
credentials) and ``GET /api/info?id=t3_a,t3_b``. ``script`` is a list of canned failures consumed by
successive ``/api/info`` requests (``(status, headers)``); ``delay_after`` slows down every info
request after the first n (to let a test kill a run in the middle); ``fail_after`` answers 403 to
every info request after the first n (an interruption PRAW does not retry).
"""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse


def make_posts(n: int, n_subreddits: int = 12, removed=(), deleted=()) -> dict[str, dict]:
    """``n`` synthetic German submissions over ``n_subreddits`` subreddits, keyed by base36 id."""
    posts = {}
    for k in range(n):
        sid = f"x{k:04d}"
        sub = f"sub{k % n_subreddits}"
        selftext = (
            f"Text über Thema {k % n_subreddits} mit [einem Link](https://example.org/{k}) und www.example.de Nr {k}"
        )
        if k % 7 == 0:
            selftext = ""  # a link post
        if sid in removed:
            selftext = "[removed]"
        if sid in deleted:
            selftext = "[deleted]"
        posts[sid] = {
            "id": sid,
            "name": f"t3_{sid}",
            "subreddit": sub,
            "title": f"Titel {k} in {sub}",
            "selftext": selftext,
            "created_utc": 1.6e9 + k,
            "author": "someone",
        }
    return posts


class FakeReddit:
    def __init__(
        self,
        posts: dict[str, dict],
        client_id: str,
        client_secret: str,
        script=(),
        delay_after: int | None = None,
        delay: float = 0.5,
        fail_after: int | None = None,
    ):
        self.posts = posts
        self.expected_auth = "Basic " + base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
        self.script = list(script)
        self.delay_after, self.delay, self.fail_after = delay_after, delay, fail_after
        self.info_requests: list[list[str]] = []  # ids of every info request (including failed ones)
        self.token_requests = 0
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    @property
    def fetched_ids(self) -> list[str]:
        return [i for ids in self.info_requests for i in ids]

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def _send(self, status, body, headers=None):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                form = parse_qs(self.rfile.read(length).decode())
                if urlparse(self.path).path.rstrip("/") != "/api/v1/access_token":
                    return self._send(404, {"error": 404})
                with fake.lock:
                    fake.token_requests += 1
                if self.headers.get("authorization") != fake.expected_auth:
                    return self._send(401, {"error": "invalid_grant"})
                if form.get("grant_type") != ["client_credentials"]:
                    return self._send(400, {"error": "unsupported_grant_type"})
                self._send(
                    200, {"access_token": "fake-token", "token_type": "bearer", "expires_in": 86400, "scope": "*"}
                )

            def do_GET(self):
                url = urlparse(self.path)
                if url.path.rstrip("/") != "/api/info":
                    return self._send(404, {"error": 404})
                if self.headers.get("authorization") != "bearer fake-token":
                    return self._send(401, {"error": 401})
                names = [n for n in parse_qs(url.query).get("id", [""])[0].split(",") if n]
                ids = [n.removeprefix("t3_") for n in names]
                with fake.lock:
                    fake.info_requests.append(ids)
                    n = len(fake.info_requests)
                    canned = fake.script.pop(0) if fake.script else None
                if fake.fail_after is not None and n > fake.fail_after:
                    return self._send(403, {"error": 403, "message": "Forbidden"})
                if fake.delay_after is not None and n > fake.delay_after:
                    time.sleep(fake.delay)
                if canned is not None:
                    status, headers = canned
                    return self._send(status, {"error": status}, headers)
                children = [{"kind": "t3", "data": fake.posts[i]} for i in ids if i in fake.posts]
                self._send(
                    200,
                    {
                        "kind": "Listing",
                        "data": {"after": None, "before": None, "dist": len(children), "children": children},
                    },
                )

        return Handler
