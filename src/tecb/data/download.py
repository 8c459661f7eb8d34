"""Downloads of raw sources: resumable, checked by SHA-256, written atomically (design §7, §9)."""

from __future__ import annotations

import shutil
import tarfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from tecb.io import atomic_path, file_sha256

CHUNK = 1 << 20


class ChecksumError(ValueError):
    """A download's SHA-256 differs from the expected one."""


def download(url: str, dest: str | Path, sha256: str | None = None, log=print) -> Path:
    """Download ``url`` to ``dest``, resuming a partial ``dest.part`` with an HTTP Range request."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    have = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            mode = "ab" if have and response.status == 206 else "wb"
            log(f"resuming {url} at byte {have}" if mode == "ab" else f"downloading {url}")
            with open(part, mode) as fh:
                shutil.copyfileobj(response, fh, CHUNK)
    except urllib.error.HTTPError as err:
        if not (err.code == 416 and have):  # 416: the partial file is already complete
            raise
        log(f"{url}: {part} already complete ({have} bytes)")
    actual = file_sha256(part)
    if sha256 and actual != sha256.lower():
        part.unlink()
        raise ChecksumError(f"{url}: SHA-256 mismatch: expected {sha256}, got {actual}")
    log(f"{url} -> {dest} (sha256 {actual})")
    part.replace(dest)
    return dest


def extract_member(archive: str | Path, member: str, dest: str | Path) -> Path:
    """Extract the file named ``member`` (any folder inside the archive) from a zip or tar archive."""
    archive, dest = Path(archive), Path(dest)
    if not archive.is_file():
        raise FileNotFoundError(f"{archive}: no such file")
    try:
        _extract(archive, member, dest)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as err:
        if isinstance(err, OSError) and (err.errno is not None or str(err).startswith(f"{archive}: no member")):
            raise  # a real I/O error (disk full, permissions) or a missing member: not a damaged archive
        raise ValueError(
            f"{archive}: truncated or corrupt archive, cannot extract {member} ({err}); delete it and download it again"
        ) from None
    return dest


def _extract(archive: Path, member: str, dest: Path) -> None:
    with atomic_path(dest) as tmp, open(tmp, "wb") as out:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                names = [n for n in zf.namelist() if Path(n).name == member]
                if not names:
                    raise FileNotFoundError(f"{archive}: no member {member}")
                with zf.open(names[0]) as src:
                    shutil.copyfileobj(src, out, CHUNK)
        else:
            with tarfile.open(archive) as tf:
                infos = [i for i in tf.getmembers() if Path(i.name).name == member and i.isfile()]
                if not infos:
                    raise FileNotFoundError(f"{archive}: no member {member}")
                shutil.copyfileobj(tf.extractfile(infos[0]), out, CHUNK)


def fetch(
    url: str,
    dest: str | Path,
    sha256: str | None = None,
    member: str | None = None,
    archive: str | Path | None = None,
    log=print,
) -> Path:
    """Download ``url`` to ``dest``; with ``member``, download the archive to ``archive`` (``sha256`` is the
    archive's) and extract that member to ``dest``."""
    if not url:
        raise ValueError(f"{dest}: no download address configured; set the source's `url` or a local `path`")
    if member is None:
        return download(url, dest, sha256, log)
    if archive is None:
        raise ValueError(f"{dest}: extracting {member!r} needs the path the archive is downloaded to")
    return extract_member(download(url, archive, sha256, log), member, Path(dest))
