"""Model downloads from the Hugging Face hub, done once by a local rule (design §7).

:func:`prefetch_model` resolves the requested revision to a commit, downloads that snapshot into
``resources/models/{model}`` (atomically) and records the commit in ``.tecb_revision``. Offline
(``HF_HUB_OFFLINE=1``) it copies the snapshot from the local Hugging Face cache instead, so a model
fetched earlier with ``huggingface-cli download`` can be used on a machine without network.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from tecb.io import atomic_dir

REVISION_FILE = ".tecb_revision"
COMMIT = re.compile(r"^[0-9a-f]{40}$")
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")
# weights for other frameworks and export formats: never read by the embed step, often the bulk of a repo
IGNORE_PATTERNS = ["*.h5", "*.msgpack", "*.ot", "*.onnx", "onnx/*", "openvino/*", "tf_model*", "flax_model*",
                   "rust_model*", "coreml/*", "*.tflite"]


def is_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def recorded_commit(out_dir: str | Path) -> str | None:
    """The commit recorded in a prefetched model directory, or ``None``."""
    marker = Path(out_dir) / REVISION_FILE
    return marker.read_text().strip() or None if marker.exists() else None


def prefetch_model(repo_id: str, out_dir: str | Path, revision: str | None = None, log=print,
                   cache_dir: str | Path | None = None) -> str:
    """Download a model snapshot into ``out_dir``; record the resolved commit in ``out_dir/.tecb_revision``.

    Does nothing when ``out_dir`` already holds the requested commit. Errors name the model and the
    revision (never a token).
    """
    if not REPO_ID.match(repo_id or ""):
        raise ValueError(f"model id {repo_id!r} is not a Hugging Face id (owner/name)")
    out_dir = Path(out_dir)
    have = recorded_commit(out_dir)
    if have and revision and COMMIT.match(revision) and have == revision:
        log(f"{repo_id}@{revision} already in {out_dir}")
        return have
    what = f"{repo_id}@{revision or 'main'}"
    try:
        if is_offline():
            commit = _copy_from_cache(repo_id, out_dir, revision, cache_dir)
            log(f"{what} -> {out_dir} (commit {commit}, copied from the local cache: HF_HUB_OFFLINE=1)")
        else:
            commit = _download(repo_id, out_dir, revision, cache_dir)
            log(f"{what} -> {out_dir} (commit {commit})")
    except Exception as error:  # noqa: BLE001 - re-raised with the model named
        hint = ("not in the local Hugging Face cache; run the prefetch with network access (a login node)"
                if is_offline() else "is the id right and the hub reachable? (set HF_TOKEN for gated models)")
        raise RuntimeError(f"prefetch of {what} failed: {type(error).__name__}: {hint}") from error
    return commit


def _download(repo_id: str, out_dir: Path, revision: str | None, cache_dir) -> str:
    from huggingface_hub import HfApi, snapshot_download

    commit = HfApi().model_info(repo_id, revision=revision).sha
    with atomic_dir(out_dir) as tmp:
        snapshot_download(repo_id, revision=commit, local_dir=tmp, cache_dir=cache_dir,
                          ignore_patterns=IGNORE_PATTERNS)
        shutil.rmtree(Path(tmp) / ".cache", ignore_errors=True)  # download bookkeeping of local_dir mode
        (Path(tmp) / REVISION_FILE).write_text(commit + "\n")
    return commit


def _copy_from_cache(repo_id: str, out_dir: Path, revision: str | None, cache_dir) -> str:
    from huggingface_hub import snapshot_download

    snapshot = Path(snapshot_download(repo_id, revision=revision, cache_dir=cache_dir, local_files_only=True))
    commit = snapshot.name  # cache layout: models--owner--name/snapshots/<commit>/
    with atomic_dir(out_dir) as tmp:
        shutil.copytree(snapshot, tmp, dirs_exist_ok=True, symlinks=False)
        (Path(tmp) / REVISION_FILE).write_text(commit + "\n")
    return commit
