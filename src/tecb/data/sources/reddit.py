"""Reddit submissions: the rehydrated table and the paper's cleaning rules (design §6).

Raw Reddit data must not be redistributed: it lives under ``resources/`` on the user's machine.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

SUBMISSIONS_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("subreddit", pa.string()),
        ("title", pa.string()),
        ("selftext", pa.string()),
        ("created_utc", pa.float64()),
    ]
)
REMOVED = {"[removed]", "[deleted]"}

_MD_LINK = re.compile(r"\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)")
_URL = re.compile(r"(?:https?://|www\.)[^\s<>()\[\]]+", re.I)


class RedditFormatError(ValueError):
    """The submissions table breaks its contract; the message names file, record and field."""


def clean_text(text: str | None) -> str:
    """Markdown links -> their text, URLs removed, whitespace collapsed; ``None`` -> ``""``."""
    if text is None:
        return ""
    text = _MD_LINK.sub(r"\1", text)
    text = _URL.sub("", text)
    return " ".join(text.split())


def read_submissions(path: str | Path) -> pa.Table:
    """Read ``submissions.parquet`` and check its columns."""
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as err:
        raise RedditFormatError(
            f"{path}: cannot read as Parquet ({err}); the file is incomplete or damaged: delete "
            "it and run the rehydrate_reddit rule again (it resumes from its checkpoint)"
        ) from None
    missing = [f.name for f in SUBMISSIONS_SCHEMA if f.name not in table.column_names]
    if missing:
        raise RedditFormatError(f"{path}: missing column(s) {', '.join(missing)}")
    return table


def usable_submissions(table: pa.Table, source: str = "submissions") -> tuple[list[dict], dict[str, int]]:
    """Apply the paper's rules: drop removed/deleted posts, clean texts; return rows and drop counts."""
    rows, dropped = [], {"removed": 0, "deleted": 0, "empty title": 0, "duplicate id": 0}
    seen = set()
    for i, rec in enumerate(table.select(["id", "subreddit", "title", "selftext"]).to_pylist()):
        if not rec["subreddit"]:
            raise RedditFormatError(f"{source}, record {i} (id={rec['id']}): field subreddit is empty")
        if rec["id"] in seen:
            dropped["duplicate id"] += 1
            continue
        seen.add(rec["id"])
        selftext = (rec["selftext"] or "").strip()
        if selftext in REMOVED:
            dropped[selftext.strip("[]")] += 1
            continue
        title = clean_text(rec["title"])
        if not title:
            dropped["empty title"] += 1
            continue
        rows.append({"id": rec["id"], "subreddit": rec["subreddit"], "title": title, "selftext": clean_text(selftext)})
    return rows, dropped
