"""A misbehaving OpenAI-compatible endpoint, for proving that the LLM client survives bad servers.

`FaultyEndpoint` answers ``POST /v1/chat/completions`` and ``/v1/completions`` on the loopback interface only, in
one of these modes (or a seeded mix of them, one mode drawn per request):

==============  ====================================================================================
ok              a normal answer: the last user message (or the prompt) echoed, ``finish_reason: stop``
429             HTTP 429 with ``Retry-After: 0``
500             HTTP 500 with an OpenAI error body
hang            accepts the request and answers nothing until `hang_s` passes or the endpoint stops
bad_json        HTTP 200 whose body is not JSON
huge            HTTP 200 whose answer is `huge_bytes` long (5 MB by default), whatever max_tokens says; sent
                with its Content-Length, or in chunks without one (``chunked=True``)
empty_choices   HTTP 200 with ``"choices": []``
echo_headers    HTTP 200 whose answer is every request header, Authorization included
==============  ====================================================================================

It is bounded and stops by itself: at most `max_requests` requests are answered, a hanging request is
released after `hang_s`, and the server shuts down `lifetime_s` after it started (so a test that dies
leaves nothing listening). Every request is logged in `requests` with the time it arrived (monotonic), so a
test can check that nothing was sent after a given moment.

>>> import json, urllib.request
>>> with FaultyEndpoint(mode="empty_choices") as fe:
...     req = urllib.request.Request(fe.url + "/chat/completions", json.dumps(
...         {"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode())
...     json.load(urllib.request.urlopen(req))["choices"], fe.count("empty_choices")
([], 1)

Run it by hand (for a soak of the notebooks against it; Ctrl-C or `--lifetime-s` stops it)::

    python -m nli_lib.llm.faults --mix ok=0.7,500=0.1,429=0.1,bad_json=0.05,huge=0.05 --port 8010
"""
from __future__ import annotations

import argparse
import ipaddress
import json
import random
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Mapping

MODES = ("ok", "429", "500", "hang", "bad_json", "huge", "empty_choices", "echo_headers")


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


class FaultyEndpoint:
    """The endpoint; use it in a ``with`` block (or call `start` / `stop`). `url` is its base URL (``.../v1``)."""

    def __init__(self, mode: str = "ok", *, mix: Mapping[str, float] | None = None, seed: int = 0,
                 host: str = "127.0.0.1", port: int = 0, hang_s: float = 30.0, huge_bytes: int = 5_000_000,
                 lifetime_s: float = 300.0, max_requests: int = 10_000, chunked: bool = False):
        for name in ([mode] if mix is None else list(mix)):
            if name not in MODES:
                raise ValueError(f"FaultyEndpoint: unknown mode {name!r}; modes: {', '.join(MODES)}")
        if not _is_loopback(host):
            raise ValueError(f"FaultyEndpoint serves the loopback interface only, not {host!r}")
        self.mode, self.mix, self.hang_s, self.huge_bytes = mode, dict(mix) if mix else None, hang_s, huge_bytes
        self.lifetime_s, self.max_requests, self.chunked = lifetime_s, max_requests, chunked
        self.requests: list[dict] = []  # {"t": monotonic time, "path", "mode", "headers"}
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _Server((host, port), _handler(self))
        self._threads: list[threading.Thread] = []
        self._closed = False
        self.url = f"http://{host}:{self._server.server_address[1]}/v1"

    # -- life ---------------------------------------------------------------------------------------
    def start(self) -> FaultyEndpoint:
        serve = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        timer = threading.Thread(target=self._expire, daemon=True)
        self._threads = [serve, timer]
        for t in self._threads:
            t.start()
        return self

    def _expire(self) -> None:
        if not self._stopping.wait(self.lifetime_s):
            self.stop()

    def stop(self) -> None:
        """Release hanging requests and close the listening socket (idempotent, from any thread)."""
        self._stopping.set()
        with self._lock:
            threads, self._threads = self._threads, []
            closed, self._closed = self._closed, True
        if closed:
            return
        if threads:
            self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FaultyEndpoint:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- bookkeeping --------------------------------------------------------------------------------
    def count(self, mode: str | None = None, since: float | None = None) -> int:
        """Requests received (in `mode`; after monotonic time `since`)."""
        with self._lock:
            return sum(1 for r in self.requests
                       if (mode is None or r["mode"] == mode) and (since is None or r["t"] > since))

    def _next_mode(self, path: str, headers: dict) -> str | None:
        with self._lock:
            if len(self.requests) >= self.max_requests:
                return None
            if self.mix:
                names, weights = zip(*self.mix.items())
                mode = self._rng.choices(names, weights)[0]
            else:
                mode = self.mode
            self.requests.append({"t": time.monotonic(), "path": path, "mode": mode, "headers": headers})
            return mode

    # -- answers ------------------------------------------------------------------------------------
    def answer(self, mode: str, path: str, body: dict, headers: dict) -> tuple[int, dict, bytes]:
        """(status, extra headers, body bytes) for one request in `mode`."""
        chat = path.rstrip("/").endswith("/chat/completions")
        if mode == "429":
            return 429, {"Retry-After": "0"}, _error_body(429, "rate limited (FaultyEndpoint)")
        if mode == "500":
            return 500, {}, _error_body(500, "internal error (FaultyEndpoint)")
        if mode == "bad_json":
            return 200, {}, b'{"id": "x", "choices": [{"message": {"content": "e"'  # cut off
        if mode == "hang":
            self._stopping.wait(self.hang_s)
            return 500, {}, _error_body(500, "released after hanging (FaultyEndpoint)")
        if mode == "huge":
            text = ("entailment " * (self.huge_bytes // 11 + 1))[: self.huge_bytes]
        elif mode == "echo_headers":
            text = "\n".join(f"{k}: {v}" for k, v in headers.items())
        elif chat:
            users = [str(m.get("content", "")) for m in body.get("messages") or [] if isinstance(m, dict)
                     and m.get("role") == "user"]
            text = f"echo: {users[-1] if users else ''}"
        else:
            text = f"echo: {body.get('prompt', '')}"
        choice = ({"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"} if chat
                  else {"index": 0, "text": text, "logprobs": None, "finish_reason": "stop"})
        payload = {"id": "faulty", "object": "chat.completion" if chat else "text_completion",
                   "created": int(time.time()), "model": body.get("model", ""),
                   "choices": [] if mode == "empty_choices" else [choice],
                   "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        return 200, {}, json.dumps(payload).encode()


def _error_body(status: int, message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": "faulty_endpoint", "code": status}}).encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 256

    def handle_error(self, request, client_address):  # a client that hung up: nothing to report
        pass


def _handler(endpoint: FaultyEndpoint):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):  # noqa: N802
            length = min(int(self.headers.get("Content-Length") or 0), 10_000_000)
            raw = self.rfile.read(length)
            headers = dict(self.headers.items())
            mode = endpoint._next_mode(self.path, headers)
            if mode is None:
                status, extra, data = 503, {}, _error_body(503, "request budget of the FaultyEndpoint spent")
            else:
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {}
                status, extra, data = endpoint.answer(mode, self.path, body if isinstance(body, dict) else {},
                                                      headers)
            chunked = endpoint.chunked and mode == "huge"
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header(*(("Transfer-Encoding", "chunked") if chunked else ("Content-Length", str(len(data)))))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                if not chunked:
                    self.wfile.write(data)
                    return
                for i in range(0, len(data), 65536):
                    part = data[i:i + 65536]
                    self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")
            except OSError:  # the client gave up (timeout, interrupt, an answer too long)
                self.close_connection = True

        def log_message(self, *args):
            pass

    return Handler


def _parse_mix(text: str) -> dict[str, float]:
    """'ok=0.7,500=0.3' -> {'ok': 0.7, '500': 0.3}."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, weight = part.partition("=")
        out[name.strip()] = float(weight or 1)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m nli_lib.llm.faults", description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", default="ok", choices=MODES)
    ap.add_argument("--mix", help="modes drawn per request with these weights, e.g. ok=0.8,500=0.1,hang=0.1")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1", help="a loopback address")
    ap.add_argument("--port", type=int, default=0, help="0: a free port (printed)")
    ap.add_argument("--hang-s", type=float, default=30.0)
    ap.add_argument("--lifetime-s", type=float, default=3600.0, help="stop by itself after this many seconds")
    ap.add_argument("--max-requests", type=int, default=100_000)
    args = ap.parse_args(argv)
    endpoint = FaultyEndpoint(args.mode, mix=_parse_mix(args.mix) if args.mix else None, seed=args.seed,
                              host=args.host, port=args.port, hang_s=args.hang_s, lifetime_s=args.lifetime_s,
                              max_requests=args.max_requests).start()
    print(f"faulty endpoint on {endpoint.url} (stops after {args.lifetime_s:g} s)", flush=True)
    try:
        endpoint._stopping.wait()
    except KeyboardInterrupt:
        pass
    finally:
        endpoint.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
