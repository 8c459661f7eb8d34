"""Model downloads from the Hugging Face hub, done once by a local rule (design §7)."""

from __future__ import annotations

from pathlib import Path

from tecb.io import atomic_dir

REVISION_FILE = ".tecb_revision"


def prefetch_model(repo_id: str, out_dir: str | Path, revision: str | None = None, log=print) -> str:
    """Download a model snapshot into ``out_dir``; record the resolved commit in ``out_dir/.tecb_revision``."""
    from huggingface_hub import HfApi, snapshot_download

    commit = HfApi().model_info(repo_id, revision=revision).sha
    with atomic_dir(out_dir) as tmp:
        snapshot_download(repo_id, revision=commit, local_dir=tmp)
        (Path(tmp) / REVISION_FILE).write_text(commit + "\n")
    log(f"{repo_id}@{revision or 'main'} -> {out_dir} (commit {commit})")
    return commit
