"""Manifest-driven file access: mirror or download, always sha256-verified.

    >>> path = fetch("esnli/s1.dev")          # doctest: +SKIP
    >>> path.name                              # doctest: +SKIP
    's1.dev'

Resolution order for a manifest key:
1. `NLI_DATA_MIRROR` set: the mirror file `github/<owner>/<repo>/<path>` that corresponds to the URL
   `https://raw.githubusercontent.com/<owner>/<repo>/<commit>/<path>`.
2. Already downloaded into `$NLI_CACHE_DIR/data/` (verified again).
3. Download with a progress bar to a temporary file, verify, then rename atomically.

Every file the process touches is recorded (key -> sha256) through `nli_lib.provenance`, so outputs can state
the exact data they were computed from and the runner can skip notebooks whose data did not change.
"""
from __future__ import annotations

import csv
import hashlib
import os
import re
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .. import provenance
from ..config import REPO_ROOT, cache_dir, mirror_dir

MANIFEST_PATH = REPO_ROOT / "data" / "manifest.csv"
_VERIFIED: dict[tuple[str, int, float], str] = {}  # (path, size, mtime) -> sha256, to hash each file once


class DataError(RuntimeError):
    """A data file is missing, unreachable or corrupt. The message names the file, the URL and the fix."""


@dataclass(frozen=True)
class ManifestEntry:
    key: str  # '<dataset>/<name>', e.g. 'esnli/s1.dev'
    dataset: str  # dataset family, e.g. 'esnli'
    split: str  # 'dev', 'test', 'train', ... or '-'
    url: str  # canonical URL pinned to a commit where the host allows it
    sha256: str  # expected checksum ('' for online-only files we have never seen)
    bytes: int | None  # expected size
    licence: str  # licence of the source
    offline: bool  # True when the offline mirror carries the file

    @property
    def mirror_relpath(self) -> str | None:
        """Path inside a mirror, 'github/<owner>/<repo>/<path>' (None for non-GitHub URLs)."""
        m = re.match(r"https://raw\.githubusercontent\.com/([^/]+)/([^/]+)/[0-9a-f]{40}/(.+)$", self.url)
        return f"github/{m.group(1)}/{m.group(2)}/{m.group(3)}" if m else None

    @property
    def filename(self) -> str:
        return self.url.rsplit("/", 1)[-1]


def load_manifest(path: Path = MANIFEST_PATH) -> dict[str, ManifestEntry]:
    """All manifest entries by key."""
    with open(path, newline="") as fh:
        return {
            row["key"]: ManifestEntry(
                key=row["key"], dataset=row["dataset"], split=row["split"], url=row["url"], sha256=row["sha256"],
                bytes=int(row["bytes"]) if row["bytes"] else None, licence=row["licence"], offline=row["offline"] == "yes",
            )
            for row in csv.DictReader(fh)
        }


def sha256_file(path: Path) -> str:
    """sha256 of a file, memoised by (path, size, mtime)."""
    st = path.stat()
    memo = (str(path), st.st_size, st.st_mtime)
    if memo not in _VERIFIED:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        _VERIFIED[memo] = h.hexdigest()
    return _VERIFIED[memo]


def _how_to_get(entry: ManifestEntry) -> str:
    mirror_hint = (
        f"or set NLI_DATA_MIRROR to a mirror directory containing {entry.mirror_relpath}"
        if entry.mirror_relpath else "(this file is not part of the offline mirror)"
    )
    return f"Download it from {entry.url} (needs network) {mirror_hint}."


def _verify(entry: ManifestEntry, path: Path, origin: str) -> str:
    digest = sha256_file(path)
    if entry.sha256 and digest != entry.sha256:
        raise DataError(
            f"checksum mismatch for {entry.key} ({origin} file {path}): expected sha256 {entry.sha256}, got {digest}. "
            f"The file is corrupt or a different version. Delete it and fetch again. {_how_to_get(entry)}"
        )
    return digest


def _download(entry: ManifestEntry, dest: Path) -> None:
    from tqdm.auto import tqdm

    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(entry.url, timeout=60) as resp:
            total = int(resp.headers.get("Content-Length") or 0) or None
            quiet = os.environ.get("NLI_PROGRESS") == "0"  # the runner turns bars off in executed notebooks
            with tqdm(total=total, unit="B", unit_scale=True, desc=entry.key, leave=False, disable=quiet) as bar:
                for block in iter(lambda: resp.read(1 << 16), b""):
                    out.write(block)
                    bar.update(len(block))
        os.replace(tmp, dest)  # atomic: a half-written file never has the final name
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        Path(tmp).unlink(missing_ok=True)
        raise DataError(
            f"could not download {entry.key} from {entry.url}: {exc}. "
            f"No network? Set NLI_DATA_MIRROR to an offline mirror (e.g. ../shared/data) "
            f"containing {entry.mirror_relpath or entry.filename}."
        ) from exc


def _note_use(key: str, digest: str) -> None:
    """Remember a fetched file (provenance keeps the runner's $NLI_RUN_RECORD current)."""
    provenance.note_data(key, digest)


def fetch(key: str, manifest: dict[str, ManifestEntry] | None = None) -> Path:
    """Local, verified path of the manifest file `key` (mirror, cache or download)."""
    manifest = manifest or load_manifest()
    if key not in manifest:
        raise DataError(f"{key!r} is not in the data manifest {MANIFEST_PATH}; known datasets: "
                        f"{sorted({e.dataset for e in manifest.values()})}")
    entry = manifest[key]
    mirror = mirror_dir()
    if mirror is not None and entry.mirror_relpath and (entry.offline or (mirror / entry.mirror_relpath).is_file()):
        path = mirror / entry.mirror_relpath
        if not path.is_file():
            raise DataError(
                f"{entry.key}: mirror file {path} is missing (NLI_DATA_MIRROR={mirror}). "
                f"Check the mirror directory, or unset NLI_DATA_MIRROR to download from {entry.url}."
            )
        _note_use(key, _verify(entry, path, "mirror"))
        return path
    dest = _cache_path(entry)
    if mirror is not None and not entry.offline and not dest.is_file():
        raise DataError(f"{entry.key} is online-only (not in the offline mirror {mirror}): download it from "
                        f"{entry.url} with network access (unset NLI_DATA_MIRROR to let the companion download it).")
    if not dest.is_file():
        _download(entry, dest)
    if not entry.sha256:  # online-only file: trust on first use, pin the checksum next to it
        pin = dest.with_name(dest.name + ".sha256")
        digest = sha256_file(dest)
        if pin.exists() and pin.read_text().strip() != digest:
            raise DataError(f"{entry.key}: {dest} changed since first download (sha256 {digest}); delete it and re-fetch")
        if not pin.exists():
            pin.write_text(digest)
        _note_use(key, digest)
        return dest
    _note_use(key, _verify(entry, dest, "cached"))
    return dest


def _cache_path(entry: ManifestEntry) -> Path:
    """Where a download of `entry` lives in the data cache."""
    return cache_dir("data") / (entry.mirror_relpath or f"{entry.dataset}/{entry.filename}")


def available(key: str, manifest: dict[str, ManifestEntry] | None = None) -> bool:
    """Whether `fetch(key)` can be served without network (the mirror or the download cache holds the file).

    Online-only datasets are large; notebooks use them when a reader has fetched them once
    (`fetch("mnli_full/multinli_1.0.zip")`) and otherwise say what is missing, instead of downloading silently.
    """
    manifest = manifest or load_manifest()
    if key not in manifest:
        raise DataError(f"{key!r} is not in the data manifest {MANIFEST_PATH}")
    entry, mirror = manifest[key], mirror_dir()
    if mirror is not None and entry.mirror_relpath and (mirror / entry.mirror_relpath).is_file():
        return True
    return _cache_path(entry).is_file()


used_data = provenance.used_data  # manifest keys and sha256s of every file fetched so far in this process
