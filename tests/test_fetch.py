"""Downloads through a local HTTP server that cuts, lies about or leaves out the length of what it sends.

A download is checked (length against Content-Length and the manifest's `bytes`, sha256 against the
manifest) before the file takes its final name; a failed transfer leaves no file (no temporary `.*.partial`), and an
online-only file's checksum is pinned only after a complete transfer.
"""
from __future__ import annotations

import hashlib
import importlib
from pathlib import Path

import pytest

from nli_lib.data.fetch import DataError

from stand_ins import byte_server, isolated_data_cache, toy_manifest

fetch_mod = importlib.import_module("nli_lib.data.fetch")
BODY = b"premise\thypothesis\tlabel\n" + b"A wug sleeps.\tA wug rests.\tentailment\n" * 4000  # ~150 KB
SHA = hashlib.sha256(BODY).hexdigest()


def manifest_for(tmp_path: Path, url: str, sha256: str = "", size: int | None = None) -> dict:
    return toy_manifest(tmp_path, url, sha256, size)


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    return isolated_data_cache(tmp_path, monkeypatch)


def files_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


def serve(headers=None, body=BODY, cut=None, status=200):
    return byte_server(lambda path: (status, {"Content-Length": str(len(body)), **(headers or {})}, body, cut))


def test_complete_download_is_verified_and_pinned(tmp_path, cache):
    with serve() as url:
        manifest = manifest_for(tmp_path, f"{url}/toy.tsv")
        path = fetch_mod.fetch("toy/data", manifest)
    assert path.read_bytes() == BODY and files_in(cache) == ["toy.tsv", "toy.tsv.sha256"]
    assert path.with_name("toy.tsv.sha256").read_text() == SHA


@pytest.mark.parametrize("sha256", ["", SHA], ids=["online-only", "with-checksum"])
def test_connection_cut_mid_body_leaves_nothing(tmp_path, cache, sha256):
    """Content-Length promises the whole body, the server closes after a third (reads just end early)."""
    with serve(cut=len(BODY) // 3) as url:
        manifest = manifest_for(tmp_path, f"{url}/toy.tsv", sha256)
        with pytest.raises(DataError, match=rf"incomplete: {len(BODY) // 3} bytes received, the server announced "
                                            rf"{len(BODY)} \(Content-Length\). Nothing was kept"):
            fetch_mod.fetch("toy/data", manifest)
    assert files_in(cache) == []  # no data file, no temporary file, no pinned checksum


def test_incomplete_read_leaves_nothing(tmp_path, cache, monkeypatch):
    """http.client raises IncompleteRead mid-stream (it did leave a temporary file behind before)."""
    import http.client
    import io
    import urllib.request

    class Cut(io.BytesIO):
        headers = {"Content-Length": str(len(BODY))}

        def read(self, size=-1):
            if self.tell():
                raise http.client.IncompleteRead(b"partial", len(BODY))
            return super().read(1000)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout=None: Cut(BODY))
    with pytest.raises(DataError, match=r"could not download toy/data .*IncompleteRead.*after 1000 bytes"):
        fetch_mod.fetch("toy/data", manifest_for(tmp_path, "http://127.0.0.1:9/toy.tsv"))
    assert files_in(cache) == []


def test_chunked_transfer_cut_before_the_last_chunk_leaves_nothing(tmp_path, cache):
    with byte_server(lambda path: (200, {"Transfer-Encoding": "chunked"}, BODY, len(BODY) // 2)) as url:
        manifest = manifest_for(tmp_path, f"{url}/toy.tsv")
        with pytest.raises(DataError, match="could not download toy/data"):
            fetch_mod.fetch("toy/data", manifest)
    assert files_in(cache) == []


def test_complete_chunked_transfer_is_pinned(tmp_path, cache):
    with byte_server(lambda path: (200, {"Transfer-Encoding": "chunked"}, BODY, None)) as url:
        path = fetch_mod.fetch("toy/data", manifest_for(tmp_path, f"{url}/toy.tsv"))
    assert path.read_bytes() == BODY and path.with_name("toy.tsv.sha256").read_text() == SHA


def test_body_shorter_than_the_manifest_size_is_refused(tmp_path, cache):
    """The server announces (and sends) a truncated file; the manifest's `bytes` catches it."""
    short = BODY[: len(BODY) // 2]
    with serve(body=short) as url:
        manifest = manifest_for(tmp_path, f"{url}/toy.tsv", size=len(BODY))
        with pytest.raises(DataError, match=rf"has {len(short)} bytes, the manifest expects {len(BODY)}"):
            fetch_mod.fetch("toy/data", manifest)
    assert files_in(cache) == []


def test_lying_content_length_is_caught_by_the_checksum(tmp_path, cache):
    """Content-Length claims fewer bytes than the file has: the client stops there; the sha256 disagrees."""
    with serve(headers={"Content-Length": str(len(BODY) - 100)}) as url:
        manifest = manifest_for(tmp_path, f"{url}/toy.tsv", SHA)
        with pytest.raises(DataError, match="checksum mismatch for toy/data .*Nothing was kept"):
            fetch_mod.fetch("toy/data", manifest)
    assert files_in(cache) == []


def test_unverifiable_length_is_not_pinned(tmp_path, cache):
    """No Content-Length, no chunked encoding, no manifest size: a cut transfer looks complete, so no pin."""
    def respond(path):
        return 200, {}, BODY, None

    with byte_server(respond) as url:
        manifest = manifest_for(tmp_path, f"{url}/toy.tsv")
        with pytest.raises(DataError, match="cannot be checked for completeness .* not pinned"):
            fetch_mod.fetch("toy/data", manifest)
        assert files_in(cache) == []
        fetch_mod.fetch("toy/data", manifest_for(tmp_path, f"{url}/toy.tsv", size=len(BODY)))  # a size is enough
    assert files_in(cache) == ["toy.tsv", "toy.tsv.sha256"]


def test_http_error_leaves_nothing(tmp_path, cache):
    with serve(status=503, body=b"busy") as url:
        with pytest.raises(DataError, match="HTTP Error 503"):
            fetch_mod.fetch("toy/data", manifest_for(tmp_path, f"{url}/toy.tsv"))
    assert files_in(cache) == []


def test_unpinned_leftover_file_is_not_trusted(tmp_path, cache):
    """An online-only file without a pinned checksum (e.g. from an older version) may be truncated: refused."""
    manifest = manifest_for(tmp_path, "http://127.0.0.1:9/toy.tsv")
    dest = cache / "data" / "toy" / "toy.tsv"
    dest.parent.mkdir(parents=True)
    dest.write_bytes(BODY[:100])
    with pytest.raises(DataError, match=r"no pinned checksum .*delete .*toy\.tsv and fetch again"):
        fetch_mod.fetch("toy/data", manifest)


def test_interrupt_mid_download_leaves_nothing(tmp_path, cache, monkeypatch):
    """Ctrl-C (KeyboardInterrupt) during the transfer: the temporary file is removed too."""
    import tqdm.auto

    real = tqdm.auto.tqdm

    class Interrupting(real):
        def update(self, n=1):
            raise KeyboardInterrupt

    monkeypatch.setattr(tqdm.auto, "tqdm", Interrupting)
    with serve() as url:
        with pytest.raises(KeyboardInterrupt):
            fetch_mod.fetch("toy/data", manifest_for(tmp_path, f"{url}/toy.tsv"))
    assert files_in(cache) == []
