"""Rehydrate Reddit submission ids through the official API with PRAW (design §6, §9).

The paper ships only submission ids. :func:`rehydrate` fetches them with ``reddit.info`` in batches
of 100, appends every finished batch to a JSONL checkpoint (so an interrupted run resumes without
refetching), backs off on 429 (honouring ``retry-after``) and 5xx, and writes
``submissions.parquet`` (the schema of :mod:`tecb.data.sources.reddit`) in id-list order.

Credentials come from ``praw.ini`` or ``praw_*`` environment variables and never reach a log, an
output or an exception text: every message goes through a scrubber holding the secret values.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from tecb.data import download
from tecb.data.sources.reddit import SUBMISSIONS_SCHEMA
from tecb.io import write_json, write_table, write_text

BATCH = 100
_ID = re.compile(r"^[0-9a-z]{1,13}$")
SECRET_KEYS = ("client_id", "client_secret", "password", "refresh_token", "username")
CREDENTIALS_HELP = (
    "Reddit API credentials are missing. Rehydrating the Reddit submissions needs your own (free) "
    "read-only 'script' app: create one at https://www.reddit.com/prefs/apps, then either set the "
    "environment variables praw_client_id and praw_client_secret (and optionally praw_user_agent), or "
    "put client_id / client_secret in a praw.ini section (https://praw.readthedocs.io/en/stable/"
    "getting_started/configuration/prawini.html) and name it in config `sources.reddit.praw_site`. "
    "Alternatively set `sources.reddit.path` to a submissions.parquet you already have."
)
DEFAULT_USER_AGENT = "python:tecb-rehydrate:v0.1 (German text embedding clustering benchmark)"


class IdListError(ValueError):
    """The submission id list is malformed; the message names file, line and field."""


class CredentialsError(RuntimeError):
    """No usable Reddit API credentials."""


class RehydrateError(RuntimeError):
    """Rehydration failed (message scrubbed of credentials)."""


# --- id list --------------------------------------------------------------------------------


def read_ids(path: str | Path) -> tuple[list[str], int]:
    """Read an id list (header ``id``, one base36 id per line); return distinct ids in first-seen
    order and the number of lines read. A ``t3_`` prefix is accepted and stripped."""
    import io

    from tecb.data.sources.files import read_text

    ids, seen, n = [], set(), 0
    with io.StringIO(read_text(path)) as fh:  # not UTF-8 / truncated .gz: an error naming the file and line
        header = fh.readline().strip().lstrip("\ufeff")
        if header != "id":
            raise IdListError(f"{path}, line 1: expected the header 'id', got {header[:40]!r}")
        for lineno, line in enumerate(fh, start=2):
            value = line.strip()
            if not value:
                continue
            n += 1
            value = value.lower().removeprefix("t3_")
            if not _ID.match(value):
                raise IdListError(f"{path}, line {lineno}: field id {value[:40]!r} is not a base36 submission id")
            if value not in seen:
                seen.add(value)
                ids.append(value)
    if not ids:
        raise IdListError(f"{path}: no submission ids")
    return ids, n


def write_ids(ids: list[str], path: str | Path) -> None:
    write_text("id\n" + "".join(f"{i}\n" for i in ids), path)


def prepare_ids(dest, path=None, url=None, sha256=None, log=print) -> list[str]:
    """Read the id list from a local ``path`` or download ``url`` (SHA-256 checked), deduplicate it
    and write it to ``dest``."""
    if path:
        ids, n_lines = read_ids(path)
        origin = path
    elif url:
        Path(dest).parent.mkdir(parents=True, exist_ok=True)
        # named like tecb.io's temporaries, so a killed run's leftover is removed at the next start
        with tempfile.TemporaryDirectory(
            prefix=f".{Path(dest).name}.download.", suffix=".tmp", dir=Path(dest).parent
        ) as tmp:
            raw = download.download(url, Path(tmp) / "submission_ids.txt", sha256=sha256, log=log)
            ids, n_lines = read_ids(raw)
        origin = url
    else:
        raise IdListError("config: sources.reddit needs `ids_path` or `ids_url` (or `path` to a submissions.parquet)")
    write_ids(ids, dest)
    log(f"{origin}: {n_lines} ids, {len(ids)} distinct -> {dest}")
    return ids


# --- credentials and scrubbing --------------------------------------------------------------


class Scrubber:
    """Replaces known secret values in any text by ``***``."""

    def __init__(self, secrets=()):
        self.secrets = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)

    def add(self, *values) -> None:
        self.secrets = sorted(set(self.secrets) | {v for v in values if v and len(str(v)) >= 4}, key=len, reverse=True)

    def __call__(self, text) -> str:
        text = str(text)
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text


def _env_secrets() -> list[str]:
    return [v for k, v in os.environ.items() if k.lower().startswith("praw_") and k.lower()[5:] in SECRET_KEYS]


def make_reddit(settings: dict | None = None, scrub: Scrubber | None = None):
    """A read-only ``praw.Reddit`` from praw.ini / ``praw_*`` variables plus ``settings``
    (``praw_site``, ``user_agent``, ``oauth_url``, ``reddit_url``, ``timeout``)."""
    import praw
    from praw.exceptions import MissingRequiredAttributeException

    settings = {k: v for k, v in (settings or {}).items() if v is not None}
    scrub = scrub or Scrubber()
    scrub.add(*_env_secrets())
    kwargs = {"check_for_updates": False}
    for key in ("oauth_url", "reddit_url", "timeout"):
        if key in settings:
            kwargs[key] = settings[key]
    if not os.environ.get("praw_user_agent"):
        kwargs["user_agent"] = settings.get("user_agent") or DEFAULT_USER_AGENT
    try:
        reddit = praw.Reddit(site_name=settings.get("praw_site") or None, **kwargs)
    except MissingRequiredAttributeException:
        raise CredentialsError(CREDENTIALS_HELP) from None
    except Exception as exc:  # a broken praw.ini, an unknown site, ...
        raise CredentialsError(f"could not configure PRAW: {scrub(exc)}") from None
    scrub.add(
        *(getattr(reddit.config, k, None) for k in SECRET_KEYS if isinstance(getattr(reddit.config, k, None), str))
    )
    if not isinstance(reddit.config.client_secret, str) and not isinstance(reddit.config.client_id, str):
        raise CredentialsError(CREDENTIALS_HELP)
    reddit.read_only = True
    return reddit


# --- checkpoint -----------------------------------------------------------------------------


def read_checkpoint(path: str | Path) -> dict[str, dict | None]:
    """``{id: record or None (not found)}`` from a JSONL checkpoint; a torn last line is ignored."""
    done: dict[str, dict | None] = {}
    path = Path(path)
    if not path.exists():
        return done
    lines = path.read_text(encoding="utf-8").split("\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            if i >= len(lines) - 2:  # the batch being written when the run was killed
                break
            raise ValueError(f"{path}, line {i + 1}: not valid JSON; delete the checkpoint to refetch") from None
        found = {r["id"]: r for r in entry["found"]}
        for sid in entry["requested"]:
            done[sid] = found.get(sid)
    return done


def append_checkpoint(path: str | Path, requested: list[str], found: list[dict]) -> None:
    """Append one finished batch as one JSON line, flushed and fsynced (a torn tail is cut first)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _cut_torn_tail(path)
    line = json.dumps({"requested": requested, "found": found}, ensure_ascii=False) + "\n"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


def _cut_torn_tail(path: Path) -> None:
    """Drop a partial last line left by a run killed while writing it."""
    if not path.exists() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return
    with open(path, "r+b") as fh:
        fh.truncate(data.rfind(b"\n") + 1)


# --- fetching -------------------------------------------------------------------------------


def submission_record(sub) -> dict:
    """The columns we keep from a PRAW ``Submission``. Reads the returned data only (``vars``): a
    plain attribute access on a missing field would make PRAW fetch the post once more."""
    data = vars(sub)
    subreddit = data.get("subreddit")
    return {
        "id": data["id"],
        "subreddit": getattr(subreddit, "display_name", None) or (str(subreddit) if subreddit else None),
        "title": data.get("title") or "",
        "selftext": data.get("selftext") or "",
        "created_utc": float(data.get("created_utc") or 0.0),
    }


@dataclass
class Summary:
    requested: int = 0
    from_checkpoint: int = 0
    fetched_now: int = 0
    found: int = 0
    missing: int = 0
    removed: int = 0
    deleted: int = 0
    requests: int = 0
    retries: dict = field(default_factory=dict)

    def text(self) -> str:
        return (
            f"{self.requested} ids: {self.found} found, {self.missing} missing (unknown or inaccessible), "
            f"{self.removed} removed, {self.deleted} deleted; {self.from_checkpoint} from the checkpoint, "
            f"{self.fetched_now} fetched in this run in {self.requests} request(s); retries {self.retries}"
        )


def _wait_seconds(exc, attempt: int, backoff: float, max_wait: float) -> float:
    """Seconds to wait after ``exc``: ``retry-after`` / ``x-ratelimit-reset`` if given, else exponential."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    for key in ("retry-after", "x-ratelimit-reset"):
        value = headers.get(key)
        if value is not None:
            try:
                return min(max(float(value), 0.0), max_wait)
            except ValueError:
                pass
    return min(backoff * 2**attempt, max_wait)


def fetch_batch(
    reddit,
    ids: list[str],
    summary: Summary,
    log,
    scrub: Scrubber,
    max_retries: int = 8,
    backoff: float = 2.0,
    max_wait: float = 600.0,
) -> list[dict]:
    """``reddit.info`` for up to 100 ids, retried on 429 and 5xx; returns the found records."""
    from prawcore.exceptions import RequestException, ServerError, TooManyRequests

    for attempt in range(max_retries + 1):
        try:
            summary.requests += 1
            return [submission_record(s) for s in reddit.info(fullnames=[f"t3_{i}" for i in ids])]
        except (TooManyRequests, ServerError, RequestException) as exc:
            kind = "429" if isinstance(exc, TooManyRequests) else type(exc).__name__
            summary.retries[kind] = summary.retries.get(kind, 0) + 1
            if attempt == max_retries:
                raise RehydrateError(scrub(f"giving up after {max_retries + 1} attempts: {kind}: {exc}")) from None
            wait = _wait_seconds(exc, attempt, backoff, max_wait)
            log(scrub(f"  {kind} ({exc}); waiting {wait:.1f} s before retry {attempt + 1}/{max_retries}"))
            time.sleep(wait)
    raise AssertionError("unreachable")  # the loop returns or raises


def submissions_table(ids: list[str], done: dict[str, dict | None]) -> pa.Table:
    """The found submissions in id-list order."""
    rows = [done[i] for i in ids if done.get(i)]
    return pa.Table.from_pylist(
        [{f.name: r[f.name] for f in SUBMISSIONS_SCHEMA} for r in rows], schema=SUBMISSIONS_SCHEMA
    )


def _write_outputs(ids: list[str], done: dict, summary: Summary, output, summary_path) -> None:
    """The submissions file (every id, in the list's order) and the summary's counts (and its file, if asked)."""
    rows = [done[i] for i in ids if done.get(i)]
    summary.found = len(rows)
    summary.missing = len(ids) - len(rows)
    summary.removed = sum((r["selftext"] or "").strip() == "[removed]" for r in rows)
    summary.deleted = sum((r["selftext"] or "").strip() == "[deleted]" for r in rows)
    write_table(submissions_table(ids, done), output)
    if summary_path:
        write_json({k: v for k, v in summary.__dict__.items()}, summary_path)


def rehydrate(
    ids_path, output, checkpoint, settings: dict | None = None, summary_path=None, log=print, reddit=None
) -> Summary:
    """Rehydrate the ids of ``ids_path`` into ``output`` (Parquet), resuming from ``checkpoint``."""
    settings = dict(settings or {})
    scrub = Scrubber()
    scrub.add(*_env_secrets())
    safe_log = lambda message: log(scrub(message))  # noqa: E731
    handler = _LogHandler(safe_log)  # prawcore's own retry warnings, scrubbed, into our log
    logging.getLogger("prawcore").addHandler(handler)
    try:
        ids, _ = read_ids(ids_path)
        done = read_checkpoint(checkpoint)
        todo = [i for i in ids if i not in done]
        summary = Summary(requested=len(ids), from_checkpoint=len(ids) - len(todo))
        batch = min(int(settings.get("batch_size") or BATCH), BATCH)  # the API's maximum is 100
        safe_log(
            f"{len(ids)} distinct ids; {summary.from_checkpoint} already in {checkpoint}; "
            f"{len(todo)} to fetch in {-(-len(todo) // batch)} batch(es) of {batch}"
        )
        if todo:
            reddit = reddit or make_reddit(settings, scrub)
            started = time.monotonic()
            retries = {"max_retries": int(settings.get("max_retries", 8))}
            retries["backoff"] = float(settings.get("backoff_seconds", 2.0))
            for start in range(0, len(todo), batch):
                chunk = todo[start : start + batch]
                found = fetch_batch(reddit, chunk, summary, safe_log, scrub, **retries)
                found = [r for r in found if r["id"] in set(chunk)]
                append_checkpoint(checkpoint, chunk, found)
                for sid in chunk:
                    done[sid] = None
                done.update({r["id"]: r for r in found})
                summary.fetched_now += len(chunk)
                elapsed = time.monotonic() - started
                safe_log(
                    f"batch {start // batch + 1}: {len(found)}/{len(chunk)} found; "
                    f"{summary.from_checkpoint + summary.fetched_now}/{len(ids)} ids done ({elapsed:.0f} s)"
                )
        _write_outputs(ids, done, summary, output, summary_path)
        safe_log(summary.text())
        return summary
    except (CredentialsError, IdListError, RehydrateError):
        raise
    except Exception as exc:  # anything else: never let a secret escape in the message
        raise RehydrateError(scrub(f"{type(exc).__name__}: {exc}")) from None
    finally:
        logging.getLogger("prawcore").removeHandler(handler)


class _LogHandler(logging.Handler):
    def __init__(self, log):
        super().__init__(logging.WARNING)
        self.log = log

    def emit(self, record):
        self.log(f"  prawcore: {record.getMessage()}")
