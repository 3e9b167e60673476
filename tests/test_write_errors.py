"""Errors that name their path and the fix: an unwritable cache folder, a full disk while writing or downloading
data, and a corrupt file in a shared data mirror (not the user's to delete)."""
from __future__ import annotations

import errno
import hashlib
import importlib
import io
import os
from pathlib import Path

import pytest

from nli_lib import atomic, filecache
from nli_lib.config import WriteError, cache_dir
from nli_lib.data.fetch import DataError

from stand_ins import byte_server, isolated_data_cache, toy_manifest

fetch_mod = importlib.import_module("nli_lib.data.fetch")
BODY = b"premise\thypothesis\tlabel\n" + b"A wug sleeps.\tA wug rests.\tentailment\n" * 100
SHA = hashlib.sha256(BODY).hexdigest()
GITHUB = "https://raw.githubusercontent.com/o/r/" + "0" * 40 + "/toy/dev.tsv"  # a mirrored file's URL


def _refuse_under(monkeypatch, root: Path, code: int) -> None:
    """Make creating anything under `root` fail with `code` (a read-only file system, or a full disk, seen as the
    OS reports it; the tests run as root here, whom chmod does not stop)."""
    real_mkdir, real_mkstemp = os.mkdir, atomic.tempfile.mkstemp

    def mkdir(path, *args, **kwargs):
        if str(path).startswith(str(root)):
            raise OSError(code, os.strerror(code), str(path))
        return real_mkdir(path, *args, **kwargs)

    def mkstemp(*args, dir=None, **kwargs):
        if str(dir).startswith(str(root)):
            raise OSError(code, os.strerror(code), str(dir))
        return real_mkstemp(*args, dir=dir, **kwargs)

    monkeypatch.setattr(os, "mkdir", mkdir)
    monkeypatch.setattr(atomic.tempfile, "mkstemp", mkstemp)


def test_an_empty_read_only_cache_folder_is_named_with_the_fix(tmp_path, monkeypatch):
    """It said `OSError: [Errno 30] Read-only file system: '.../parsed_data'`, not which setting to change."""
    cache = tmp_path / "ro-cache"
    cache.mkdir()
    monkeypatch.setenv("NLI_CACHE_DIR", str(cache))
    _refuse_under(monkeypatch, cache, errno.EROFS)
    with pytest.raises(WriteError) as caught:
        cache_dir("parsed_data")
    message = str(caught.value)
    assert f"cannot write {cache / 'parsed_data'} (Read-only file system), in the cache folder {cache}" in message
    assert "Fix: make it writable, or point NLI_CACHE_DIR at a folder you can write to" in message
    assert caught.value.errno == errno.EROFS and isinstance(caught.value, OSError)  # `except OSError` still holds


@pytest.mark.mirror
def test_loading_data_into_an_empty_read_only_cache_names_the_folder(tmp_path, monkeypatch):
    """The user's path: parsing a data file stores the parsed rows in the cache (`parsed_data`). Everything on the
    way that only caches for speed (the code-hash summaries) goes on without the cache; the store says where."""
    from nli_lib.data import rows
    from nli_lib.data.loaders import load_esnli

    cache = tmp_path / "ro-cache"
    cache.mkdir()
    monkeypatch.setenv("NLI_CACHE_DIR", str(cache))
    monkeypatch.setattr(rows, "_FRAMES", {})  # parsed afresh even when another test of this process loaded it
    _refuse_under(monkeypatch, cache, errno.EROFS)
    with pytest.raises(WriteError, match=rf"cannot write {cache / 'parsed_data'} \(Read-only file system\), in the "
                                         rf"cache folder {cache}\. Fix: .*NLI_CACHE_DIR"):
        load_esnli("dev")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_cache_folder_for_real(tmp_path, monkeypatch):
    cache = tmp_path / "ro-cache"
    cache.mkdir(mode=0o555)
    monkeypatch.setenv("NLI_CACHE_DIR", str(cache))
    with pytest.raises(WriteError, match=r"cannot write .*parsed_data.*NLI_CACHE_DIR"):
        cache_dir("parsed_data")


def test_a_full_disk_while_writing_names_the_file_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))

    def save(path: Path, value) -> None:
        path.write_text("half of it")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as write(2) reports it: no file name

    fmt = filecache.FileFormat(".json", save, filecache.JSON.load)
    path = filecache.cache_path("parsed_data", "k", fmt)
    with pytest.raises(WriteError) as caught:
        filecache.cached(path, fmt, lambda: {"rows": 3})
    assert f"no space left to write {path} (No space left on device), in the cache folder {tmp_path / 'cache'}" \
        in str(caught.value)
    assert "Fix: free space on that disk, or point NLI_CACHE_DIR at a folder on another disk" in str(caught.value)
    assert list(path.parent.iterdir()) == []  # no partial file under any name

    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path / "out"))
    _refuse_under(monkeypatch, tmp_path / "out", errno.ENOSPC)
    with pytest.raises(WriteError, match=r"no space left to write .*index\.csv.*point NLI_OUTPUT_DIR at a folder"):
        atomic.write_text(tmp_path / "out/tables/index.csv", "ref\n")


def _manifest(tmp_path: Path, url: str, offline: str = "yes") -> dict:
    return toy_manifest(tmp_path, url, SHA, len(BODY), key="toy/dev", offline=offline)


@pytest.fixture()
def data_env(tmp_path, monkeypatch):
    isolated_data_cache(tmp_path, monkeypatch)


def test_a_full_disk_during_a_download_names_the_file_not_the_network(tmp_path, monkeypatch, data_env):
    class Full(io.BytesIO):
        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    real_open = open
    monkeypatch.setattr(fetch_mod, "open", lambda path, mode="r", *a, **k: Full() if "w" in mode
                        else real_open(path, mode, *a, **k), raising=False)
    with byte_server(lambda path: (200, {"Content-Length": str(len(BODY))}, BODY, None)) as url:
        manifest = _manifest(tmp_path, url + "/toy/dev.tsv", offline="no")
        with pytest.raises(WriteError) as caught:
            fetch_mod.fetch("toy/dev", manifest)
    assert "no space left to write" in str(caught.value) and "dev.tsv" in str(caught.value)
    assert "NLI_CACHE_DIR" in str(caught.value) and "No network" not in str(caught.value)


def test_a_corrupt_file_in_a_shared_mirror_is_not_the_users_to_delete(tmp_path, monkeypatch, data_env):
    manifest = _manifest(tmp_path, GITHUB)
    mirror = tmp_path / "mirror"
    copy = mirror / manifest["toy/dev"].mirror_relpath
    copy.parent.mkdir(parents=True)
    copy.write_bytes(BODY[:-10])
    monkeypatch.setenv("NLI_DATA_MIRROR", str(mirror))
    with pytest.raises(DataError) as caught:
        fetch_mod.fetch("toy/dev", manifest)
    message = str(caught.value)
    assert f"in the shared data mirror (NLI_DATA_MIRROR={mirror}): {copy} has sha256" in message and SHA in message
    assert "tell whoever maintains that mirror" in message and "point NLI_DATA_MIRROR at another mirror" in message
    assert "Delete it" not in message and "delete" not in message.lower()

    monkeypatch.delenv("NLI_DATA_MIRROR")  # the user's own cache: deleting is the fix there
    own = fetch_mod._cache_path(manifest["toy/dev"])
    own.parent.mkdir(parents=True)
    own.write_bytes(BODY[:-10])
    with pytest.raises(DataError, match=r"cached file .*Delete it and fetch again"):
        fetch_mod.fetch("toy/dev", manifest)
