"""The LLM client against a misbehaving endpoint (`nli_lib.llm.faults.FaultyEndpoint`): interrupts, a dead or
hanging server, oversized and malformed answers, an endpoint echoing the request headers."""
from __future__ import annotations

import signal
import socket
import threading
import time

import pytest

from nli_lib import calls
from nli_lib.cache import CallCache
from nli_lib.llm import PROMPTS, EndpointDown, LLMClient, LLMConfig, LLMError, LLMResult
from nli_lib.llm.client import NAMESPACE
from nli_lib.llm.faults import FaultyEndpoint
from nli_lib.llm.transport import answer_limits

from stand_ins import no_proxy

SENTINEL = "sk-faults-SENTINEL-0a1b2c3d4e5f"
KEY_ENV = "NLI_TEST_FAULTS_KEY"


@pytest.fixture
def client(tmp_path, monkeypatch):
    """make(url, **config) -> an LLMClient on a fresh cache at tmp_path/calls.sqlite (closed after the test)."""
    no_proxy(monkeypatch)
    monkeypatch.setenv(KEY_ENV, SENTINEL)
    made = []

    def make(url: str, **settings) -> LLMClient:
        cfg = dict(base_url=url, model="m", api_key_env=KEY_ENV, timeout_s=5.0, max_retries=2, retry_base_s=0.001,
                   retry_max_s=0.01, concurrency=4)
        made.append(LLMClient(LLMConfig(**{**cfg, **settings}), cache=CallCache(tmp_path / "calls.sqlite")))
        return made[-1]

    yield make
    for c in made:
        c.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stored_bytes(llm: LLMClient, path) -> bytes:
    llm.cache._conn.execute("PRAGMA wal_checkpoint(FULL)")
    return b"".join(p.read_bytes() for p in path.parent.iterdir() if p.name.startswith(path.name))


# ------------------------------------------------------------------------------------------------
# Ctrl-C
# ------------------------------------------------------------------------------------------------

def test_ctrl_c_against_a_hanging_endpoint_returns_at_once_and_sends_no_retry(client):
    """A real SIGINT to the main thread while four requests hang: chat_many raises within a couple of seconds,
    and when the endpoint later answers them with a (retryable) 500, nothing more is sent."""
    with FaultyEndpoint("hang", hang_s=2.5) as fe:
        llm = client(fe.url, timeout_s=30, max_retries=5, retry_base_s=0.05, retry_max_s=0.1)
        interrupted_at = []

        def interrupt():
            while fe.count() < 4:  # every worker's request is in flight
                time.sleep(0.01)
            interrupted_at.append(time.monotonic())
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

        threading.Thread(target=interrupt, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            llm.chat_many([f"prompt {i}" for i in range(12)], progress=False)
        took = time.monotonic() - interrupted_at[0]
        time.sleep(3.0)  # the hanging requests are answered with a 500 meanwhile: a retry would come now
        assert took < 2.0, f"chat_many took {took:.1f} s to return after the interrupt"
        assert fe.count(since=interrupted_at[0]) == 0, "requests were sent after the interrupt"
        assert fe.count() == 4


# ------------------------------------------------------------------------------------------------
# Circuit breaker
# ------------------------------------------------------------------------------------------------

def test_a_dead_endpoint_fails_fast_naming_it(client):
    """Connection refused on every attempt, default backoff (1 s, doubling): 183 prompts x 6 attempts would take
    about half an hour; the breaker stops after BREAKER_FAILURES attempts and names the endpoint."""
    url = f"http://127.0.0.1:{_free_port()}/v1"
    llm = client(url, max_retries=5, retry_base_s=1.0, retry_max_s=60.0)
    t0 = time.monotonic()
    with pytest.raises(EndpointDown, match=rf"127\.0\.0\.1:{url.split(':')[2][:-3]}.*unreachable.*stopped calling"):
        llm.chat_many([f"prompt {i}" for i in range(183)], progress=False)
    took = time.monotonic() - t0
    assert took < 30, f"{took:.0f} s to give up on a dead endpoint"
    assert llm.stats()["calls"] <= LLMClient.BREAKER_FAILURES + llm.concurrency
    with pytest.raises(EndpointDown):  # later calls of the client fail at once, sending nothing
        llm.chat("another prompt")
    assert llm.stats()["calls"] <= LLMClient.BREAKER_FAILURES + llm.concurrency


def test_timeouts_open_the_breaker_but_server_errors_do_not(client):
    with FaultyEndpoint("hang", hang_s=5) as fe:
        llm = client(fe.url, timeout_s=0.2, max_retries=5)
        with pytest.raises(EndpointDown, match="APITimeoutError"):
            llm.chat_many([f"p{i}" for i in range(20)], progress=False)
        assert fe.count() <= LLMClient.BREAKER_FAILURES + llm.concurrency
    with FaultyEndpoint("500") as fe:  # a server that answers, badly: retried, then an error per item
        llm = client(fe.url, max_retries=1)
        results = llm.chat_many([f"q{i}" for i in range(12)], progress=False)
        assert all(isinstance(r, LLMError) and "500" in r.error for r in results)
        assert fe.count() == 24


# ------------------------------------------------------------------------------------------------
# Oversized answers
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("huge_bytes, chunked, why", [
    (5_000_000, False, "response body of 5000"),  # a declared Content-Length: refused before the body is read
    (5_000_000, True, "response body over"),  # no Content-Length: reading stops at the bound
    (20_000, False, "an answer of 20000 characters"),  # within the byte bound, over the text bound
], ids=["content-length", "chunked", "text"])
def test_an_oversized_answer_is_a_failure_never_parsed_or_stored(client, tmp_path, huge_bytes, chunked, why):
    assert answer_limits(16)[0] < 20_000 < answer_limits(16)[1]
    with FaultyEndpoint("huge", huge_bytes=huge_bytes, chunked=chunked) as fe:
        llm = client(fe.url, max_tokens=16)
        before = calls.snapshot()
        results = llm.chat_many(["Premise: a. Hypothesis: b."], progress=False)
        (parsed,) = llm.parse_many(PROMPTS["atoms.B1"], results)
        assert isinstance(results[0], LLMError) and "ResponseTooLarge" in results[0].error and why in results[0].error
        assert fe.count() == 1  # not retried: the endpoint would send it again
        assert not parsed.ok and parsed.value is None  # the answer is all "entailment ...": never a label
        row = calls.summary(since=before).loc[llm.label]
        assert row.errors == 1 and row.failure_rate == 1.0  # counted toward the notebook's failure gate
        assert llm.cache.get(NAMESPACE, llm.cache_key("Premise: a. Hypothesis: b.")) is None
        assert b"entailment entailment" not in _stored_bytes(llm, tmp_path / "calls.sqlite")


# ------------------------------------------------------------------------------------------------
# The other modes
# ------------------------------------------------------------------------------------------------

def test_an_endpoint_echoing_the_request_headers_never_gets_the_key_stored(client, tmp_path):
    with FaultyEndpoint("echo_headers") as fe:
        llm = client(fe.url)
        fresh = llm.chat("hello")
        sent = [{k.lower(): v for k, v in r["headers"].items()} for r in fe.requests]
        assert sent[0]["authorization"] == f"Bearer {SENTINEL}"  # it was sent, and echoed ...
        assert "authorization: bearer ***" in fresh.text.lower() and SENTINEL not in fresh.text  # ... not kept
        again = client(fe.url).chat("hello")
        assert again.cached and SENTINEL not in again.text
        assert SENTINEL.encode() not in _stored_bytes(llm, tmp_path / "calls.sqlite")


@pytest.mark.parametrize("mode, attempts, what", [
    ("429", 3, "RateLimitError"),  # retried, max_retries=2
    ("500", 3, "InternalServerError"),
    ("bad_json", 1, ""),  # a 200 the SDK cannot read: an error in the slot, not a crash
    ("empty_choices", 1, "no choices"),
])
def test_each_misbehaviour_gives_an_error_in_its_slot(client, mode, attempts, what):
    with FaultyEndpoint(mode) as fe:
        llm = client(fe.url, concurrency=2)
        results = llm.chat_many(["one", "two"], progress=False)
        assert [type(r) for r in results] == [LLMError, LLMError]
        assert all(what in r.error for r in results)
        assert fe.count() == 2 * attempts
        assert llm.cache.get(NAMESPACE, llm.cache_key("one")) is None


def test_a_mix_of_faults_leaves_the_good_answers_cached(client):
    with FaultyEndpoint(mix={"ok": 0.6, "500": 0.2, "429": 0.1, "empty_choices": 0.1}, seed=3) as fe:
        llm = client(fe.url, max_retries=3)
        results = llm.chat_many([f"item {i}" for i in range(40)], progress=False)
        good = [r for r in results if isinstance(r, LLMResult)]
        assert 0 < len(good) < 40 and fe.count("ok") == len(good)
        assert all(r.text == f"echo: item {i}" for i, r in enumerate(results) if isinstance(r, LLMResult))
        warm = client(fe.url).chat_many([f"item {i}" for i in range(40)], progress=False)
        assert sum(isinstance(r, LLMResult) and r.cached for r in warm) == len(good)


def test_the_endpoint_serves_loopback_only_and_stops_by_itself():
    with pytest.raises(ValueError, match="loopback"):
        FaultyEndpoint(host="0.0.0.0")
    fe = FaultyEndpoint(lifetime_s=0.3).start()
    port = int(fe.url.split(":")[2].split("/")[0])
    time.sleep(0.8)
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0  # nothing listens any more


def test_the_key_is_scrubbed_from_completions_answers_too(client, tmp_path):
    with FaultyEndpoint("echo_headers") as fe:
        llm = client(fe.url, api="completions")
        result = llm.chat("Explanation: x\nA:")
        assert fe.requests[0]["path"].endswith("/v1/completions")
        assert "bearer ***" in result.text.lower() and SENTINEL not in result.text
        assert SENTINEL.encode() not in _stored_bytes(llm, tmp_path / "calls.sqlite")


def test_endpoint_down_carries_no_sdk_exception(client):
    """The SDK's exception holds the request, Authorization header included: EndpointDown must not chain it."""
    llm = client(f"http://127.0.0.1:{_free_port()}/v1", max_retries=20, concurrency=1)
    with pytest.raises(EndpointDown) as err:
        llm.chat("hello")
    assert err.value.__cause__ is None and err.value.__context__ is None
    assert SENTINEL not in str(err.value) and err.value.attempts == LLMClient.BREAKER_FAILURES
