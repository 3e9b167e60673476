"""Bounded responses for the LLM client: an httpx transport that stops reading a response body past a limit
derived from the call's max_tokens (`answer_limits`), so an endpoint that ignores max_tokens cannot make the
client read, parse or store megabytes.

`BATCH` is per-thread state the client sets for the request it sends: ``max_bytes`` (the body bound of this
call) and ``stop`` (the Event an interrupt of `CachedChat.chat_many` sets).
"""
from __future__ import annotations

import functools
import threading

BATCH = threading.local()


def answer_limits(max_tokens: int | None) -> tuple[int, int]:
    """(characters, bytes): the longest answer text accepted for a call with `max_tokens`, and the longest
    response body read for it. An answer beyond them is a failure (`ResponseTooLarge`), never parsed or stored.

    A token is rarely more than a few characters; 32 per token (plus 1024) is far above any real answer, yet
    bounds what an endpoint that ignores max_tokens can make us read and store. The body bound allows each
    character its longest JSON escape (a surrogate pair, 12 bytes) plus 64 KiB for the rest of the response.
    Without max_tokens, 4096 tokens are assumed.

    >>> answer_limits(512)
    (17408, 274432)
    """
    chars = 32 * int(max_tokens or 4096) + 1024
    return chars, 12 * chars + 65536


class ResponseTooLarge(Exception):
    """A response body or answer longer than `answer_limits` allows (an endpoint ignoring max_tokens)."""


@functools.cache
def _bounded_stream_class():
    """An httpx SyncByteStream over another, raising `ResponseTooLarge` once more than `limit` bytes have come
    (made on first use: httpx is imported only when a request is sent)."""
    import httpx

    class BoundedStream(httpx.SyncByteStream):
        def __init__(self, stream, limit: int):
            self._stream, self._limit = stream, limit

        def __iter__(self):
            seen = 0
            for chunk in self._stream:
                seen += len(chunk)
                if seen > self._limit:
                    raise ResponseTooLarge(f"response body over {self._limit} bytes")
                yield chunk

        def close(self) -> None:
            self._stream.close()

    return BoundedStream


def bounded_transport(**kwargs):
    """An httpx transport whose responses are read at most `BATCH.max_bytes` bytes far (a declared longer
    Content-Length fails before the body is read). Asks for an uncompressed body, so the bound is the size."""
    import httpx

    class BoundedTransport(httpx.HTTPTransport):
        def handle_request(self, request):
            request.headers["Accept-Encoding"] = "identity"
            response = super().handle_request(request)
            limit = getattr(BATCH, "max_bytes", None)
            if limit is None:
                return response
            try:
                declared = int(response.headers.get("content-length") or 0)
            except ValueError:
                declared = 0
            if declared > limit:
                response.close()
                raise ResponseTooLarge(f"response body of {declared} bytes, over {limit}")
            response.stream = _bounded_stream_class()(response.stream, limit)
            return response

    return BoundedTransport(**kwargs)
