"""Local HTTP stand-ins for online services (OpenAI-compatible chat, Wikipedia), shared by the paper tests.

    with local_server(lambda method, path, body: (200, {"ok": True})) as url: ...

`answer(method, path, body)` returns (status, JSON object); `body` is the parsed JSON request body (None for GET).
Proxies are cleared by `no_proxy(monkeypatch)` so the clients talk to 127.0.0.1 directly.
"""
from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from nli_lib.llm.server import send_json


def chat_completion(model: str, text: str) -> dict:
    """A minimal OpenAI chat.completion response carrying `text`."""
    return {"id": "c", "object": "chat.completion", "created": 1, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


@contextmanager
def local_server(answer):
    """Serve `answer` on 127.0.0.1 (random port); yields the base URL 'http://127.0.0.1:<port>'."""

    class Handler(BaseHTTPRequestHandler):
        def _reply(self, method: str, body):
            send_json(self, *answer(method, self.path, body))

        def do_GET(self):  # noqa: N802
            self._reply("GET", None)

        def do_POST(self):  # noqa: N802
            self._reply("POST", json.loads(self.rfile.read(int(self.headers["Content-Length"]))))

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def no_proxy(monkeypatch) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)


@contextmanager
def byte_server(respond):
    """Serve raw bytes on 127.0.0.1, with control over headers and where the body stops (for download tests).

    `respond(path)` returns (status, headers dict, body bytes, bytes to send before the connection is cut or
    None for all). A 'Transfer-Encoding: chunked' header sends the body as one chunk (cut: no final chunk).
    Yields the base URL.
    """

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):  # noqa: N802
            status, headers, body, cut = respond(self.path)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Connection", "close")
            self.end_headers()
            chunked = "chunked" in headers.get("Transfer-Encoding", "")
            sent = body if cut is None else body[:cut]
            if chunked:
                self.wfile.write(f"{len(body):x}\r\n".encode() + sent + (b"\r\n0\r\n\r\n" if cut is None else b""))
            else:
                self.wfile.write(sent)
            self.wfile.flush()
            self.close_connection = True

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def toy_manifest(folder, url: str, sha256: str, size: int | None, key: str = "toy/data",
                 offline: str = "no") -> dict:
    """A one-file data manifest (`folder`/manifest.csv, loaded) whose file `key` lives at `url`."""
    import csv

    from nli_lib.data.fetch import load_manifest

    path = folder / "manifest.csv"
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["key", "dataset", "split", "url", "sha256", "bytes", "licence",
                                                "offline"])
        writer.writeheader()
        writer.writerow({"key": key, "dataset": key.split("/")[0], "split": "dev", "url": url, "sha256": sha256,
                         "bytes": "" if size is None else size, "licence": "test", "offline": offline})
    return load_manifest(path)


def isolated_data_cache(tmp_path, monkeypatch):
    """A fresh cache in `tmp_path`/cache, no mirror, no run record, no progress bars, nothing noted yet, no proxy:
    where a download test fetches. Returns the cache folder."""
    from nli_lib import provenance

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("NLI_DATA_MIRROR", raising=False)
    monkeypatch.delenv("NLI_RUN_RECORD", raising=False)
    monkeypatch.setenv("NLI_PROGRESS", "0")
    monkeypatch.setattr(provenance, "DATA", {})
    no_proxy(monkeypatch)
    return tmp_path / "cache"
