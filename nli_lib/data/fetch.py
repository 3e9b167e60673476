"""Manifest-driven file access: mirror or download, always sha256-verified.

    >>> path = fetch("esnli/s1.dev")          # doctest: +SKIP
    >>> path.name                              # doctest: +SKIP
    's1.dev'

Resolution order for a manifest key:
1. `NLI_DATA_MIRROR` set: the mirror file `github/<owner>/<repo>/<path>` that corresponds to the URL
   `https://raw.githubusercontent.com/<owner>/<repo>/<commit>/<path>`.
2. Already downloaded into `$NLI_CACHE_DIR/data/` (verified again).
3. Download with a progress bar to a temporary file; check its length (Content-Length, manifest `bytes`) and
   sha256, then rename it atomically. A failed or short transfer leaves no file behind; an online-only file
   (no sha256 in the manifest) has its checksum pinned beside it only after a complete transfer.

Every file the process touches is recorded (key -> sha256) through `nli_lib.provenance`, so outputs can state
the exact data they were computed from and the runner can skip notebooks whose data did not change.
"""
from __future__ import annotations

import csv
import hashlib
import os
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .. import provenance
from ..atomic import commit, discard, temp_beside, write_text
from ..config import NO_SPACE, cache_dir, mirror_dir, write_error
from ..filehash import sha256_file  # noqa: F401  (memoised per file state; re-exported for loaders and stats)
from ..phases import phase
from ..resources import MANIFEST, resource_path

MANIFEST_PATH = resource_path(MANIFEST)  # nli_lib/resources/manifest.csv, shipped with the package


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
                key=row["key"],
                dataset=row["dataset"],
                split=row["split"],
                url=row["url"],
                sha256=row["sha256"],
                bytes=int(row["bytes"]) if row["bytes"] else None,
                licence=row["licence"],
                offline=row["offline"] == "yes",
            )
            for row in csv.DictReader(fh)
        }


def _how_to_get(entry: ManifestEntry) -> str:
    mirror_hint = (
        f"or set NLI_DATA_MIRROR to a mirror directory containing {entry.mirror_relpath}"
        if entry.mirror_relpath else "(this file is not part of the offline mirror)"
    )
    return f"Download it from {entry.url} (needs network) {mirror_hint}."


def _verify(entry: ManifestEntry, path: Path, origin: str) -> str:
    digest = sha256_file(path)
    if entry.sha256 and digest != entry.sha256 and origin == "mirror":  # shared: not the user's to delete
        raise DataError(
            f"checksum mismatch for {entry.key} in the shared data mirror (NLI_DATA_MIRROR={mirror_dir()}): {path} "
            f"has sha256 {digest}, the manifest expects {entry.sha256}. The mirror's copy is corrupt or a different "
            f"version; leave it (others read it too). Fix: tell whoever maintains that mirror (this message names "
            f"the file and both checksums), and meanwhile point NLI_DATA_MIRROR at another mirror, or unset it to "
            f"download {entry.url} into your own cache (needs network)."
        )
    if entry.sha256 and digest != entry.sha256:
        raise DataError(
            f"checksum mismatch for {entry.key} ({origin} file {path}): expected sha256 {entry.sha256}, got {digest}. "
            f"The file is corrupt or a different version. Delete it and fetch again. {_how_to_get(entry)}"
        )
    return digest


def _pin_path(dest: Path) -> Path:
    """Where the checksum of an online-only file is pinned (beside it)."""
    return dest.with_name(dest.name + ".sha256")


def _download(entry: ManifestEntry, dest: Path) -> str:
    """Download `entry` to `dest`; returns its sha256. The bytes go to a temporary file beside it and are
    checked before the file takes its final name: length against Content-Length and the manifest's `bytes`,
    sha256 against the manifest. Any failure (dropped connection, IncompleteRead, short or long body, wrong
    checksum, Ctrl-C) removes the temporary file. An online-only file's checksum is pinned beside it only
    after such a complete, length-checked transfer."""
    import http.client

    from tqdm.auto import tqdm

    tmp = temp_beside(dest)
    try:
        digest, size, declared, chunked = hashlib.sha256(), 0, None, False  # hashed as the bytes arrive
        try:
            with open(tmp, "wb") as out, urllib.request.urlopen(entry.url, timeout=60) as resp:
                declared = resp.headers.get("Content-Length")
                declared = int(declared) if declared and declared.strip().isdigit() else None
                chunked = "chunked" in str(resp.headers.get("Transfer-Encoding", "")).lower()
                quiet = os.environ.get("NLI_PROGRESS") == "0"  # the runner turns bars off in executed notebooks
                with tqdm(total=declared, unit="B", unit_scale=True, desc=entry.key, leave=False, disable=quiet) as bar:
                    for block in iter(lambda: resp.read(1 << 16), b""):
                        out.write(block)
                        digest.update(block)
                        size += len(block)
                        bar.update(len(block))
        except (urllib.error.URLError, OSError, TimeoutError, http.client.HTTPException, ValueError) as exc:
            if isinstance(exc, OSError) and exc.errno in NO_SPACE:  # the disk, not the network
                raise write_error(exc, dest) from exc
            raise DataError(
                f"could not download {entry.key} from {entry.url}: {type(exc).__name__}: {exc} (after {size} bytes; "
                f"nothing was kept). No network? Set NLI_DATA_MIRROR to an offline mirror (e.g. ../shared/data) "
                f"containing {entry.mirror_relpath or entry.filename}."
            ) from exc
        retry = (f"Nothing was kept; fetch again (a proxy or a dropped connection can cut a transfer). "
                 f"{_how_to_get(entry)}")
        if declared is not None and size != declared:
            raise DataError(f"download of {entry.key} from {entry.url} is incomplete: {size} bytes received, the "
                            f"server announced {declared} (Content-Length). {retry}")
        if entry.bytes is not None and size != entry.bytes:
            raise DataError(f"download of {entry.key} from {entry.url} has {size} bytes, the manifest expects "
                            f"{entry.bytes}. {retry}")
        sha = digest.hexdigest()
        if entry.sha256 and sha != entry.sha256:
            raise DataError(f"checksum mismatch for {entry.key} (download from {entry.url}): expected sha256 "
                            f"{entry.sha256}, got {sha}. The server sent a different or damaged file. {retry}")
        if not entry.sha256:  # online-only: pin only what is known to be complete
            if declared is None and entry.bytes is None and not chunked:
                raise DataError(f"download of {entry.key} from {entry.url} cannot be checked for completeness (no "
                                f"Content-Length, no chunked encoding, no size in the manifest), so its checksum is "
                                f"not pinned. Add its size to the `bytes` column of {MANIFEST_PATH}. {retry}")
            pin = _pin_path(dest)
            if pin.is_file() and pin.read_text().strip() != sha:
                raise DataError(f"{entry.key}: the file at {entry.url} changed since it was first downloaded (pinned "
                                f"sha256 {pin.read_text().strip()}, now {sha}). Delete {pin} to accept the new "
                                f"version.")
            write_text(pin, sha)
        commit(tmp, dest)  # atomic: only a complete, verified file has the final name
        return sha
    finally:
        discard(tmp)  # gone already after commit; removed on any failure or Ctrl-C


def _note_use(key: str, digest: str) -> None:
    """Remember a fetched file (provenance keeps the runner's $NLI_RUN_RECORD current)."""
    provenance.note_data(key, digest)


@phase("loading")
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
    if not entry.sha256:  # online-only file: its checksum was pinned after a complete download
        pin = _pin_path(dest)
        if not pin.is_file():
            raise DataError(f"{entry.key}: {dest} has no pinned checksum ({pin} is missing), so it cannot be told "
                            f"from a truncated download. Fix: delete {dest} and fetch again.")
        digest = sha256_file(dest)
        if pin.read_text().strip() != digest:
            raise DataError(f"{entry.key}: {dest} changed since first download (sha256 {digest}, pinned "
                            f"{pin.read_text().strip()}); delete it and re-fetch")
        _note_use(key, digest)
        return dest
    _note_use(key, _verify(entry, dest, "cached"))
    return dest


def select(manifest: dict[str, ManifestEntry], names=(), online: bool = False) -> list[ManifestEntry]:
    """The entries `nli-companion fetch` gets: those named by key or dataset, or, with no name, every file the
    offline mirror carries (and the online-only ones too when `online`). An unknown name raises DataError.

    >>> m = {e.key: e for e in (ManifestEntry("snli/dev", "snli", "dev", "u1", "s", 1, "CC", True),
    ...                         ManifestEntry("snli/test", "snli", "test", "u2", "s", 1, "CC", True),
    ...                         ManifestEntry("mnli/all", "mnli", "-", "u3", "", None, "CC", False))}
    >>> [e.key for e in select(m)], [e.key for e in select(m, online=True)], [e.key for e in select(m, ["mnli"])]
    (['snli/dev', 'snli/test'], ['snli/dev', 'snli/test', 'mnli/all'], ['mnli/all'])
    """
    unknown = [n for n in names if n not in manifest and all(e.dataset != n for e in manifest.values())]
    if unknown:
        raise DataError(f"{unknown} name neither a key nor a dataset of the data manifest {MANIFEST_PATH}; known "
                        f"datasets: {sorted({e.dataset for e in manifest.values()})}")
    if names:
        return [e for e in manifest.values() if e.key in names or e.dataset in names]
    return [e for e in manifest.values() if e.offline or online]


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
