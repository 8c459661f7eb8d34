"""Model downloads from the Hugging Face hub, done once by a local rule (design §7).

:func:`prefetch_model` resolves the requested revision to a commit, downloads that snapshot into
``resources/models/{model}`` (atomically) and records the commit in ``.tecb_revision``. Offline
(``HF_HUB_OFFLINE=1``) it copies the snapshot from the local Hugging Face cache instead, so a model
fetched earlier with ``huggingface-cli download`` can be used on a machine without network.

Remote code in other repositories. Some ``trust_remote_code`` models (jina-embeddings-v3,
gte-multilingual-base, nomic-embed-text-v2-moe) keep their modelling code in another hub repository,
named in ``auto_map`` as ``"owner/repo--module.Class"`` (``config.json``, ``tokenizer_config.json``, a
sentence-transformers module's config, or a module type in ``modules.json``). transformers would fetch
that repository at load time, which an offline embed job cannot. :func:`vendor_remote_code` therefore
downloads the Python files of each such repository into the model folder and rewrites the references to
the local modules (``"module.Class"``), so transformers loads them from the folder itself, whatever
``HF_HOME`` the embed job has. ``auto_map`` has no syntax for a revision (transformers fetches ``main``
unless told a ``code_revision``): each code repository is resolved to a commit at prefetch time (or to the
revision given in ``code_revisions``) and its commit, files and the rewritten references are recorded in
``.tecb_remote_code.json``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

from tecb.io import atomic_dir

REVISION_FILE = ".tecb_revision"
REMOTE_CODE_FILE = ".tecb_remote_code.json"
COMMIT = re.compile(r"^[0-9a-f]{40}$")
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")
# weights for other frameworks and export formats: never read by the embed step, often the bulk of a repo
IGNORE_PATTERNS = [
    "*.h5",
    "*.msgpack",
    "*.ot",
    "*.onnx",
    "onnx/*",
    "openvino/*",
    "tf_model*",
    "flax_model*",
    "rust_model*",
    "coreml/*",
    "*.tflite",
]
# what transformers imports from a code repository: its Python modules
CODE_PATTERNS = ["*.py"]


def is_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def recorded_commit(out_dir: str | Path) -> str | None:
    """The commit recorded in a prefetched model directory, or ``None``."""
    marker = Path(out_dir) / REVISION_FILE
    return marker.read_text().strip() or None if marker.exists() else None


# --- remote code named in auto_map -------------------------------------------------------------------


def split_reference(reference: str) -> tuple[str | None, str]:
    """``"owner/repo--module.Class"`` -> ``("owner/repo", "module.Class")``; a reference into the model's own
    repository (``"module.Class"``) -> ``(None, "module.Class")`` (transformers' ``--`` syntax)."""
    if "--" not in reference:
        return None, reference
    repo, local = reference.split("--", 1)
    if not REPO_ID.match(repo) or "--" in local:
        raise ValueError(f"{reference!r} is not a remote-code reference 'owner/repo--module.Class'")
    return repo, local


def _auto_map_references(auto_map) -> list[tuple[str, str]]:
    """``(key, reference)`` of an ``auto_map``: string values, and the string items of list values (the
    tokenizer's ``[slow, fast]`` pair, where one may be null)."""
    refs = []
    for key, value in (auto_map or {}).items():
        items = value if isinstance(value, (list, tuple)) else [value]
        refs += [(key, item) for item in items if isinstance(item, str) and item]
    return refs


def _config_files(model_dir: Path) -> list[Path]:
    """The JSON files that may carry an ``auto_map``: at the top of the folder and in the folder of every
    sentence-transformers module (``modules.json``)."""
    folders = [model_dir]
    modules = model_dir / "modules.json"
    if modules.exists():
        for module in json.loads(modules.read_text()):
            sub = model_dir / (module.get("path") or "")
            if sub.is_dir() and sub.resolve() != model_dir.resolve():
                folders.append(sub)
    return [f for folder in folders for f in sorted(folder.glob("*.json")) if not f.name.startswith(".")]


def remote_code_references(model_dir: str | Path) -> dict[str, list[str]]:
    """The hub repositories whose code a model folder names, each with where it is named
    (``"config.json: auto_map.AutoModel"``, ``"modules.json: 0.type"``), in the order found."""
    model_dir = Path(model_dir)
    found: dict[str, list[str]] = {}
    for path in _config_files(model_dir):
        try:
            data = json.loads(path.read_text())
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue  # not a config (e.g. a vocabulary); transformers would not read an auto_map from it either
        where = path.relative_to(model_dir).as_posix()
        if path.name == "modules.json" and isinstance(data, list):
            for i, module in enumerate(data):
                repo, _ = split_reference(str(module.get("type", "")))
                if repo:
                    found.setdefault(repo, []).append(f"{where}: {i}.type")
        elif isinstance(data, dict) and isinstance(data.get("auto_map"), dict):
            for key, reference in _auto_map_references(data["auto_map"]):
                repo, _ = split_reference(reference)
                if repo:
                    found.setdefault(repo, []).append(f"{where}: auto_map.{key}")
    return found


def _localize(value):
    """A reference (or list of them) with the ``owner/repo--`` prefix removed."""
    if isinstance(value, (list, tuple)):
        return [_localize(v) for v in value]
    return split_reference(value)[1] if isinstance(value, str) else value


def _rewrite_references(model_dir: Path) -> dict[str, dict]:
    """Point every remote reference at the module now in the folder; returns ``{file: {key: [old, new]}}``."""
    changed: dict[str, dict] = {}
    for path in _config_files(model_dir):
        try:
            data = json.loads(path.read_text())
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
        where = path.relative_to(model_dir).as_posix()
        edits = {}
        if path.name == "modules.json" and isinstance(data, list):
            for i, module in enumerate(data):
                if "--" in str(module.get("type", "")):
                    edits[f"{i}.type"] = [module["type"], _localize(module["type"])]
                    module["type"] = _localize(module["type"])
        elif isinstance(data, dict) and isinstance(data.get("auto_map"), dict):
            for key, value in data["auto_map"].items():
                new = _localize(value)
                if new != value:
                    edits[f"auto_map.{key}"] = [value, new]
                    data["auto_map"][key] = new
        if edits:
            path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
            changed[where] = edits
    return changed


def _copy_modules(repo: str, folder, commit: str, where: list, model_dir: Path, origin: dict) -> list[str]:
    """Copy the code repository's Python modules (from ``folder``) into ``model_dir``; return their relative paths.
    ``origin`` (vendored file -> repository) is updated; a module that would overwrite a different file is an
    error."""
    files = sorted(
        p.relative_to(folder).as_posix()
        for p in Path(folder).rglob("*.py")
        if ".cache" not in p.relative_to(folder).parts
    )
    if not files:
        raise FileNotFoundError(f"{repo}@{commit}: no Python module (named in {', '.join(where)})")
    for rel in files:
        source, target = Path(folder) / rel, model_dir / rel
        if target.exists() and target.read_bytes() != source.read_bytes():
            owner = origin.get(rel, "the model's own repository")
            raise ValueError(
                f"remote code of {repo}: {rel} differs from the file of the same name from {owner}; "
                "cannot put both into one model folder"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        origin.setdefault(rel, repo)
    return files


def vendor_remote_code(
    model_dir: str | Path,
    fetch: Callable[[str, str | None], tuple[Path, str]],
    code_revisions: Mapping[str, str] | None = None,
    log=print,
) -> dict:
    """Copy the Python files of every code repository a model names (:func:`remote_code_references`) into
    ``model_dir`` and rewrite the references to them, so the model loads with ``trust_remote_code`` offline.

    ``fetch(repo_id, revision)`` returns ``(folder holding the repository's files, commit)``; ``revision`` is
    ``code_revisions[repo_id]`` or ``None`` (the default branch). A file of a code repository that would
    overwrite a different file of the model (or of another code repository) is an error. Returns and writes
    the record (``.tecb_remote_code.json``); nothing when the model names no other repository.
    """
    model_dir = Path(model_dir)
    repos = remote_code_references(model_dir)
    code_revisions = dict(code_revisions or {})
    unused = sorted(set(code_revisions) - set(repos))
    if unused:
        raise ValueError(
            f"code_revisions names {unused}, but the model's configs name no code in them "
            f"(they name: {sorted(repos) or 'none'})"
        )
    if not repos:
        return {}
    record: dict = {"repositories": {}, "rewritten": {}}
    origin: dict[str, str] = {}  # vendored file -> repository it came from
    for repo, where in repos.items():
        revision = code_revisions.get(repo)
        folder, commit = fetch(repo, revision)
        files = _copy_modules(repo, folder, commit, where, model_dir, origin)
        record["repositories"][repo] = {
            "requested": revision or "main",
            "commit": commit,
            "files": files,
            "named_in": where,
        }
        log(
            f"remote code {repo}@{commit}: {len(files)} module(s) copied into the model folder "
            f"(named in {', '.join(where)})"
        )
    record["rewritten"] = _rewrite_references(model_dir)
    (model_dir / REMOTE_CODE_FILE).write_text(json.dumps(record, indent=2) + "\n")
    return record


# --- prefetch --------------------------------------------------------------------------------------


def prefetch_model(
    repo_id: str,
    out_dir: str | Path,
    revision: str | None = None,
    log=print,
    cache_dir: str | Path | None = None,
    code_revisions: Mapping[str, str] | None = None,
) -> str:
    """Download a model snapshot into ``out_dir``; record the resolved commit in ``out_dir/.tecb_revision``.

    Code repositories the model names in ``auto_map`` are vendored into ``out_dir`` (:func:`vendor_remote_code`;
    ``code_revisions`` pins them: ``{repo_id: revision}``). Does nothing when ``out_dir`` already holds the
    requested commit with its remote code. Errors name the model and the revision (never a token).
    """
    if not REPO_ID.match(repo_id or ""):
        raise ValueError(f"model id {repo_id!r} is not a Hugging Face id (owner/name)")
    out_dir = Path(out_dir)
    have = recorded_commit(out_dir)
    if have and revision and COMMIT.match(revision) and have == revision and not remote_code_references(out_dir):
        log(f"{repo_id}@{revision} already in {out_dir}")
        return have
    what = f"{repo_id}@{revision or 'main'}"
    try:
        if is_offline():
            commit = _copy_from_cache(repo_id, out_dir, revision, cache_dir, code_revisions, log)
            log(f"{what} -> {out_dir} (commit {commit}, copied from the local cache: HF_HUB_OFFLINE=1)")
        else:
            commit = _download(repo_id, out_dir, revision, cache_dir, code_revisions, log)
            log(f"{what} -> {out_dir} (commit {commit})")
    except Exception as error:  # noqa: BLE001 - re-raised with the model named
        hint = (
            "not in the local Hugging Face cache; run the prefetch with network access (a login node)"
            if is_offline()
            else "is the id right and the hub reachable? (set HF_TOKEN for gated models)"
        )
        raise RuntimeError(
            f"prefetch of {what} failed: {type(error).__name__}: {error if _safe(error) else ''} {hint}".replace(
                "  ", " "
            )
        ) from error
    return commit


def _safe(error: Exception) -> bool:
    """Our own messages (no hub response in them) can be shown; others may quote a token."""
    return isinstance(error, (ValueError, FileNotFoundError)) and "hf_" not in str(error)


def _download(repo_id: str, out_dir: Path, revision: str | None, cache_dir, code_revisions=None, log=print) -> str:
    from huggingface_hub import HfApi, snapshot_download

    commit = HfApi().model_info(repo_id, revision=revision).sha
    with atomic_dir(out_dir) as tmp:
        snapshot_download(repo_id, revision=commit, local_dir=tmp, cache_dir=cache_dir, ignore_patterns=IGNORE_PATTERNS)
        shutil.rmtree(Path(tmp) / ".cache", ignore_errors=True)  # download bookkeeping of local_dir mode
        vendor_remote_code(tmp, lambda repo, rev: _fetch_code(repo, rev, cache_dir), code_revisions, log)
        (Path(tmp) / REVISION_FILE).write_text(commit + "\n")
    return commit


def _fetch_code(repo_id: str, revision: str | None, cache_dir) -> tuple[Path, str]:
    """A code repository's Python files, online, at ``revision`` resolved to a commit."""
    from huggingface_hub import HfApi, snapshot_download

    commit = HfApi().model_info(repo_id, revision=revision).sha
    folder = snapshot_download(repo_id, revision=commit, cache_dir=cache_dir, allow_patterns=CODE_PATTERNS)
    return Path(folder), commit


def _cached_code(repo_id: str, revision: str | None, cache_dir) -> tuple[Path, str]:
    """A code repository's files from the local Hugging Face cache (offline)."""
    from huggingface_hub import snapshot_download

    folder = Path(snapshot_download(repo_id, revision=revision, cache_dir=cache_dir, local_files_only=True))
    return folder, folder.name


def _copy_from_cache(
    repo_id: str, out_dir: Path, revision: str | None, cache_dir, code_revisions=None, log=print
) -> str:
    from huggingface_hub import snapshot_download

    snapshot = Path(snapshot_download(repo_id, revision=revision, cache_dir=cache_dir, local_files_only=True))
    commit = snapshot.name  # cache layout: models--owner--name/snapshots/<commit>/
    with atomic_dir(out_dir) as tmp:
        shutil.copytree(snapshot, tmp, dirs_exist_ok=True, symlinks=False)
        vendor_remote_code(tmp, lambda repo, rev: _cached_code(repo, rev, cache_dir), code_revisions, log)
        (Path(tmp) / REVISION_FILE).write_text(commit + "\n")
    return commit
