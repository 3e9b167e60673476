"""LLM client, offline stand-in and prompt templates, against a scripted local OpenAI-compatible server.

The server (127.0.0.1, random free port, a thread) speaks POST /v1/chat/completions. Each test scripts
its behaviour: ``fake.script`` is a queue of actions consumed one per request (("ok", text),
("status", code), ("slow", seconds)); when it is empty the server echoes the last user message, and
answers 400 (echoing the Authorization header, as some real APIs do) to prompts containing "FAIL400".
"""
from __future__ import annotations

import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import pytest

from nli_lib import calls
from nli_lib.atoms import prompts as AP
from nli_lib.cache import CallCache, ReplayMiss
from nli_lib.factnli import prompts as FP
from nli_lib.ftc import prompts as FTC
from nli_lib.llm import PROMPTS, LLMCallError, LLMClient, LLMConfig, LLMError, LLMResult, OfflineLLM, Parsed, make_llm
from nli_lib.llm import prompts as P
from nli_lib.phrasis import prompts as PP

from kit import paper_text

SENTINEL = "sk-test-SENTINEL-9f8e7d6c5b4a"
KEY_ENV = "NLI_TEST_LLM_KEY"


# ------------------------------------------------------------------------------------------------
# Fake OpenAI-compatible server
# ------------------------------------------------------------------------------------------------

class FakeOpenAI:
    def __init__(self):
        self.script: list[tuple] = []
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.in_flight = self.max_in_flight = 0  # concurrent requests being answered (now, at most)

    def next_action(self, body: dict) -> tuple:
        with self.lock:
            if self.script:
                return self.script.pop(0)
        last = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
        if "FAIL400" in last:
            return ("status", 400)
        return ("ok", f"echo: {last}")

    @property
    def n(self) -> int:
        return len(self.requests)


def _completion(model: str, text: str) -> dict:
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
    }


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802
        fake: FakeOpenAI = self.server.fake
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        auth = self.headers.get("Authorization", "")
        with fake.lock:
            fake.requests.append({"path": self.path, "body": body, "auth": auth})
            fake.in_flight += 1
            fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
        self._answer(fake, body, auth)

    def _answer(self, fake, body, auth):
        try:
            status, data = self._reply(fake, body, auth)
        finally:
            # done before the answer is sent: once the client has it, it may send its next request at once
            with fake.lock:
                fake.in_flight -= 1
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (timeout test)
            pass

    def _reply(self, fake, body, auth):
        action = fake.next_action(body)
        if self.path.rstrip("/") != "/v1/chat/completions":
            action = ("status", 404)
        status, payload = 200, None
        if action[0] == "slow":
            time.sleep(action[1])
            payload = _completion(body["model"], "slow answer")
        elif action[0] == "status":
            status = action[1]
            payload = {"error": {"message": f"scripted {status}; you sent {auth}", "type": "test", "code": status}}
        else:
            payload = _completion(body["model"], action[1])
        return status, json.dumps(payload).encode()

    def log_message(self, *args):
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request, client_address):
        pass


@pytest.fixture
def fake():
    server = _Server(("127.0.0.1", 0), _Handler)
    server.fake = FakeOpenAI()
    server.fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server.fake
    server.shutdown()
    server.server_close()


@pytest.fixture
def cache_path(tmp_path):
    return tmp_path / "calls.sqlite"


@pytest.fixture
def make_client(fake, cache_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SENTINEL)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)

    def make(**settings) -> LLMClient:
        cfg = dict(base_url=fake.url, model="fake-model", api_key_env=KEY_ENV, timeout_s=0.5, max_retries=3,
                   retry_base_s=0.001, retry_max_s=0.01, concurrency=3)
        cfg.update(settings)
        made.append(LLMClient(LLMConfig(**cfg), cache=CallCache(cache_path)))
        return made[-1]

    made: list[LLMClient] = []
    yield make
    for client in made:  # their kept-alive connections, closed before the fake server stops
        client.close()


MSG = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Premise: A man sleeps. Hypothesis: ..."}]


# ------------------------------------------------------------------------------------------------
# Client: cache, keys, replay
# ------------------------------------------------------------------------------------------------

def test_chat_then_cache_hit_makes_no_request(fake, make_client):
    llm = make_client()
    first = llm.chat(MSG)
    assert isinstance(first, LLMResult) and not first.cached
    assert first.text == "echo: Premise: A man sleeps. Hypothesis: ..."
    assert first.usage["prompt_tokens"] == 7 and first.finish_reason == "stop" and first.created > 0
    assert fake.n == 1 and fake.requests[0]["auth"] == f"Bearer {SENTINEL}"  # the key is used ...
    assert fake.requests[0]["body"]["temperature"] == 0.0 and fake.requests[0]["body"]["max_tokens"] == 512

    second = llm.chat(MSG)
    assert second.cached and second.text == first.text and second.created == first.created
    assert fake.n == 1  # zero HTTP requests for a hit
    fresh = make_client().chat(MSG)  # a new client on the same cache file: still no request
    assert fresh.cached and fake.n == 1
    s = llm.stats()
    assert (s["hits"], s["misses"], s["calls"], s["prompt_tokens"], s["completion_tokens"]) == (1, 1, 1, 7, 3)


def test_sample_index_and_overrides_change_the_key(fake, make_client):
    llm = make_client()
    assert llm.cache_key(MSG, sample=0) != llm.cache_key(MSG, sample=1)
    llm.chat(MSG)
    assert not llm.chat(MSG, sample=1).cached and fake.n == 2
    assert llm.chat(MSG, sample=1).cached and fake.n == 2
    assert not llm.chat(MSG, temperature=0.7).cached and fake.n == 3
    assert fake.requests[-1]["body"]["temperature"] == 0.7
    other_model = make_client(model="other-model")
    assert not other_model.chat(MSG).cached and fake.n == 4
    key = llm.cache_key(MSG, sample=2)
    assert set(key) == {"model", "messages", "params", "sample"} and key["messages"] == MSG  # no endpoint


def test_stop_sequences_are_sent(fake, make_client):
    make_client(stop=("[END]",)).chat("hi")
    assert fake.requests[-1]["body"]["stop"] == ["[END]"]


def test_replay_only_miss_raises_and_hit_works(fake, make_client):
    replay = make_client(replay_only=True)
    with pytest.raises(ReplayMiss) as err:
        replay.chat(MSG)
    text = str(err.value)
    assert "Premise: A man sleeps." in text and "endpoint" in text and "replay_only: false" in text
    with pytest.raises(ReplayMiss):
        replay.chat_many([MSG, "another prompt"], progress=False)
    assert fake.n == 0  # nothing was sent

    make_client().chat(MSG)  # fill the cache with an endpoint
    assert fake.n == 1
    hit = replay.chat(MSG)
    assert hit.cached and hit.text.startswith("echo:") and fake.n == 1
    assert replay.chat_many([MSG], progress=False)[0].cached


def test_replay_miss_message_shows_first_80_chars(make_client):
    long = "x" * 200
    with pytest.raises(ReplayMiss) as err:
        make_client(replay_only=True).chat(long)
    assert "x" * 80 in str(err.value) and "x" * 81 not in str(err.value)


def test_a_cache_filled_through_one_endpoint_replays_through_another(fake, make_client):
    make_client().chat(MSG)  # filled through the fake server's URL
    other = make_client(base_url="http://gpu-node-7.invalid:8000/v1", replay_only=True)
    hit = other.chat(MSG)
    assert hit.cached and hit.text.startswith("echo:") and fake.n == 1
    assert hit.endpoint == fake.url  # where the answer came from is kept beside it
    assert other.chat_many([MSG], progress=False)[0].endpoint == fake.url


def test_entries_of_the_old_key_layout_are_still_read(cache_path, make_client):
    old_key = {"endpoint": "http://gpu-node-7:8000/v1", "model": "fake-model", "messages": MSG,
               "params": {"temperature": 0.0, "max_tokens": 512, "stop": None}, "sample": 0}
    CallCache(cache_path).put("llm", old_key, {"text": "old answer", "usage": {}, "finish_reason": "stop", "created": 1.0})
    replay = make_client(replay_only=True)
    hit = replay.chat(MSG)
    assert hit.cached and hit.text == "old answer" and hit.endpoint == "http://gpu-node-7:8000/v1"
    assert [r.text for r in replay.chat_many([MSG, MSG], progress=False)] == ["old answer", "old answer"]
    with pytest.raises(ReplayMiss):
        replay.chat(MSG, temperature=0.5)  # another decoding parameter is another call, old layout or not


def test_a_replay_miss_says_which_part_of_the_call_differs(fake, make_client):
    make_client().chat(MSG)
    cases = [(dict(model="gpt-4o-mini"), {}, "model (stored 'fake-model', asked 'gpt-4o-mini')"),
             ({}, dict(temperature=0.7), "params.temperature (stored 0.0, asked 0.7)"),
             (dict(max_tokens=64), {}, "params.max_tokens (stored 512, asked 64)"),
             ({}, dict(sample=3), "sample (stored 0, asked 3)")]
    for settings, call, expected in cases:
        with pytest.raises(ReplayMiss) as err:
            make_client(replay_only=True, **settings).chat(MSG, **call)
        text = str(err.value)
        assert "1 stored call(s) have these messages but differ in: " + expected in text, text
        assert text.count("(stored ") == 1, text  # only the field that differs is named
    with pytest.raises(ReplayMiss) as err:
        make_client(replay_only=True, model="gpt-4o-mini").chat_many([MSG, "new prompt"], progress=False)
    assert "2 of 2 calls not cached" in str(err.value) and "model (stored 'fake-model'" in str(err.value)
    with pytest.raises(ReplayMiss, match="No stored call has these messages"):
        make_client(replay_only=True).chat("a prompt nobody sent")


def test_every_request_is_counted_in_the_call_ledger(fake, make_client):
    before = calls.snapshot()
    fake.script = [("status", 500)] * 6  # a dead endpoint: every request fails, retries exhausted
    llm = make_client(max_retries=1, concurrency=1)
    results = llm.chat_many(["a", "b", "c"], progress=False)
    assert [r.ok for r in results] == [False, False, False]
    row = calls.summary(since=before).loc[llm.label]
    assert (row["requests"], row["calls"], row["retries"], row["errors"], row["failure_rate"]) == (3, 6, 3, 3, 1.0)
    with pytest.raises(calls.TooManyFailures) as err:
        calls.check(0.02, since=before)
    assert llm.label in str(err.value) and "3 of 3 requests failed (3 errors, 0 unparsable answers; 3 retries)" in str(err.value)

    before = calls.snapshot()
    t = PROMPTS["atoms.B1"]
    prompts = [t.render(premise=f"p{i}", hypothesis="h") for i in range(4)]
    fake.script = [("ok", "e"), ("ok", "Sorry, I can't help with that."), ("ok", "n"), ("ok", "c")]
    parsed = make_client(concurrency=1).parse_many(t, make_client(concurrency=1).chat_many(prompts, progress=False))
    assert [p.ok for p in parsed] == [True, False, True, True] and parsed[1].error.startswith("refusal")
    again = make_client().chat_many(prompts, progress=False)  # a warm run serves the refusal from the cache ...
    make_client().parse_many(t, again)  # ... and counts it again: it is still not an answer
    row = calls.summary(since=before).loc[llm.label]
    assert (row["requests"], row["cache_hits"], row["calls"], row["unparsable"]) == (8, 4, 4, 2)
    assert row["failure_rate"] == 0.25
    assert calls.check(0.3, since=before).loc[llm.label, "requests"] == 8  # under the limit: no error


def test_parse_many_never_guesses(fake, make_client):
    t = PROMPTS["atoms.B1"]
    llm = make_client()
    results = llm.chat_many(["fine", "broken FAIL400"], progress=False)
    parsed = llm.parse_many(t, results)
    assert not parsed[0].ok and parsed[0].value is None  # "echo: fine" has no label word
    assert not parsed[1].ok and parsed[1].value is None and parsed[1].error.startswith("call failed: LLMCallError")
    rel = PROMPTS["phrasis.relation"]
    fake.script = [("ok", "UNR")]
    limited = llm.parse_many(rel, llm.chat_many(["phrases"], progress=False), allowed=("EQUI", "FORW"))
    assert not limited[0].ok and "not one of" in limited[0].error


def test_an_answer_cut_at_max_tokens_says_so(make_client, monkeypatch):
    """An unparsable answer that ended at max_tokens (finish_reason 'length') says so in its error and in the
    ledger's kept answer; one that ended by itself does not."""
    from nli_lib.llm.client import LLMResult

    monkeypatch.setattr(calls, "LEDGER", calls.CallLedger())  # a fresh ledger: the process's may be full
    t, before = PROMPTS["atoms.B1"], calls.snapshot()
    cut = LLMResult("Premise: A man sleeps on the", False, {"completion_tokens": 8}, "length")
    done = LLMResult("I cannot tell.", False, {"completion_tokens": 4}, "stop")
    llm = make_client()
    parsed = llm.parse_many(t, [cut, done])
    assert "cut at max_tokens: 8 tokens" in parsed[0].error and "max_tokens" not in parsed[1].error
    kept = calls.LEDGER.answers(since=before, source=llm.label)
    assert [("cut at max_tokens" in a["why"]) for a in kept] == [True, False]


def test_a_stand_in_without_a_rule_says_so(cache_path):
    before = calls.snapshot()
    rules = OfflineLLM(lambda m: None if "odd" in m[-1]["content"] else "Question: Who is there?", name="qud-test",
                       cache=CallCache(cache_path))
    t = PROMPTS["atoms.D1"]
    prompts = [t.render(critical_atom=a) for a in ("There is a man.", "An odd atom.")]
    parsed = rules.parse_many(t, rules.chat_many(prompts, progress=False))
    assert parsed[0].value == "Who is there?" and not parsed[1].ok and parsed[1].error.startswith("no answer")
    warm = OfflineLLM(lambda m: "never called", name="qud-test", cache=CallCache(cache_path))
    assert not warm.parse_many(t, warm.chat_many(prompts, progress=False))[1].ok  # the non-answer is cached as one
    row = calls.summary(since=before).loc["offline://qud-test"]
    assert (row["kind"], row["requests"], row["no_answer"], row["unparsable"], row["failure_rate"]) == \
        ("stand-in", 4, 2, 0, 0.0)


# ------------------------------------------------------------------------------------------------
# Retries
# ------------------------------------------------------------------------------------------------

def test_retry_after_429(fake, make_client):
    fake.script = [("status", 429)]
    llm = make_client()
    assert llm.chat(MSG).text.startswith("echo:")
    assert fake.n == 2 and llm.stats()["retries"] == 1 and llm.stats()["calls"] == 2


def test_retry_after_500_twice(fake, make_client):
    fake.script = [("status", 500), ("status", 503)]
    llm = make_client()
    assert not llm.chat(MSG).cached
    assert fake.n == 3 and llm.stats()["retries"] == 2 and llm.stats()["errors"] == 0


def test_retry_after_timeout(fake, make_client):
    fake.script = [("slow", 1.5)]
    llm = make_client(timeout_s=0.3)
    t0 = time.monotonic()
    result = llm.chat(MSG)
    assert result.text.startswith("echo:") and time.monotonic() - t0 < 1.4
    assert fake.n == 2 and llm.stats()["retries"] == 1


def test_no_retry_on_400_and_key_scrubbed(fake, make_client):
    llm = make_client()
    with pytest.raises(LLMCallError) as err:
        llm.chat("please FAIL400 now")
    assert fake.n == 1 and llm.stats()["retries"] == 0 and llm.stats()["errors"] == 1
    assert err.value.status == 400 and err.value.attempts == 1
    assert "scripted 400" in str(err.value) and "***" in str(err.value)  # the server echoed the key ...
    assert SENTINEL not in str(err.value) and SENTINEL not in repr(err.value)  # ... and we removed it
    assert err.value.__cause__ is None and err.value.__context__ is None  # no SDK exception (with headers) attached


def test_retries_are_bounded(fake, make_client):
    fake.script = [("status", 500)] * 10
    llm = make_client(max_retries=2)
    with pytest.raises(LLMCallError) as err:
        llm.chat(MSG)
    assert fake.n == 3 and err.value.attempts == 3 and llm.stats()["retries"] == 2


def test_connection_errors_are_retried(make_client):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = make_client(base_url=f"http://127.0.0.1:{port}/v1", max_retries=2)
    with pytest.raises(LLMCallError) as err:
        llm.chat(MSG)
    assert err.value.kind == "APIConnectionError" and llm.stats()["retries"] == 2 and llm.stats()["calls"] == 3


# ------------------------------------------------------------------------------------------------
# Batches
# ------------------------------------------------------------------------------------------------

def test_chat_many_keeps_others_when_one_item_fails(fake, make_client):
    prompts = ["item a", "item b FAIL400", "item c", "item d"]
    llm = make_client()
    results = llm.chat_many(prompts, progress=False)
    assert [type(r) for r in results] == [LLMResult, LLMError, LLMResult, LLMResult]
    assert [r.ok for r in results] == [True, False, True, True]
    assert "400" in results[1].error and SENTINEL not in results[1].error and results[1].kind == "LLMCallError"
    assert results[2].text == "echo: item c" and fake.n == 4 and llm.stats()["errors"] == 1

    again = make_client().chat_many(prompts, progress=True)  # resumes: only the failed item is re-sent
    assert fake.n == 5
    assert [r.cached for r in again if isinstance(r, LLMResult)] == [True, True, True]


def test_chat_many_respects_the_concurrency_limit(fake, make_client):
    fake.script = [("slow", 0.15)] * 8
    llm = make_client(concurrency=2)
    results = llm.chat_many([f"prompt {i}" for i in range(8)], progress=False)
    assert all(r.ok for r in results) and fake.n == 8
    assert fake.max_in_flight == 2  # parallel, but never more than the limit
    fake.max_in_flight = 0
    llm1 = make_client(concurrency=1)
    fake.script = [("slow", 0.05)] * 3
    llm1.chat_many([f"other {i}" for i in range(3)], progress=False)
    assert fake.max_in_flight == 1


def test_chat_many_samples_order_and_duplicates(fake, make_client):
    llm = make_client()
    results = llm.chat_many(["p", "q", "p"], samples=2, progress=False)
    assert len(results) == 6 and fake.n == 4  # (p,0) (p,1) (q,0) (q,1); the repeated p is sent once
    assert [r.text for r in results] == ["echo: p", "echo: p", "echo: q", "echo: q", "echo: p", "echo: p"]
    samples_sent = sorted((r["body"]["messages"][-1]["content"]) for r in fake.requests)
    assert samples_sent == ["p", "p", "q", "q"]
    assert llm.chat("p", sample=1).cached


def test_stats_table(fake, make_client):
    llm = make_client()
    llm.chat_many(["a", "b"], progress=False)
    llm.chat("a")
    table = llm.stats_table()
    assert isinstance(table, pd.DataFrame) and len(table) == 1
    row = table.iloc[0]
    assert (row["hits"], row["misses"], row["calls"], row["prompt_tokens"]) == (1, 2, 2, 14)
    assert table.index[0] == f"fake-model @ {fake.url}"


# ------------------------------------------------------------------------------------------------
# The API key never leaks
# ------------------------------------------------------------------------------------------------

def test_api_key_never_stored_or_shown(fake, make_client, cache_path):
    fake.script = [("status", 429)]
    llm = make_client()
    results = llm.chat_many(["one", "two FAIL400", "three"], progress=False)
    llm.chat("four")
    with pytest.raises(LLMCallError) as err:
        llm.chat("five FAIL400")
    assert any(r["auth"] == f"Bearer {SENTINEL}" for r in fake.requests)  # it was sent to the server

    shown = [repr(llm), str(llm), repr(llm.config), repr(results), str(results), repr(err.value), str(err.value),
             repr(llm.stats()), llm.stats_table().to_string(), json.dumps(llm.cache_key("one"))]
    for text in shown:
        assert SENTINEL not in text
    llm.cache._conn.execute("PRAGMA wal_checkpoint(FULL)")
    files = [p for p in cache_path.parent.iterdir() if p.name.startswith(cache_path.name)]
    assert files
    for path in files:
        assert SENTINEL.encode() not in path.read_bytes()
    assert b"echo: one" in cache_path.read_bytes()  # the answers are there


def test_make_llm_from_profile(cache_path):
    assert make_llm({"llm": None}) is None
    assert make_llm({"llm": "offline"}) is None
    assert make_llm({}) is None
    llm = make_llm({"llm": {"base_url": "http://127.0.0.1:1/v1", "model": "m", "temperature": 0, "stop": ["[END]"]}},
                   cache=CallCache(cache_path))
    assert isinstance(llm, LLMClient) and llm.config.stop == ("[END]",) and llm.config.temperature == 0
    with pytest.raises(ValueError) as err:
        make_llm({"llm": {"base_url": "u", "model": "m", "api_key": SENTINEL}})
    assert SENTINEL not in str(err.value)
    with pytest.raises(ValueError, match="llm.temprature: unknown key"):
        make_llm({"llm": {"base_url": "u", "model": "m", "temprature": 0}})


# ------------------------------------------------------------------------------------------------
# OfflineLLM
# ------------------------------------------------------------------------------------------------

def test_offline_llm_uses_the_cache(cache_path):
    calls = []

    def generate(messages):
        calls.append(messages)
        return "e\nA man is a person. [END]"

    llm = OfflineLLM(generate, name="rules-v1", cache=CallCache(cache_path))
    t = PROMPTS["atoms.B1"]
    msgs = t.render(premise="A man sleeps.", hypothesis="A person sleeps.")
    first, second = llm.chat(msgs), llm.chat(msgs)
    assert len(calls) == 1 and not first.cached and second.cached
    assert t.parse(second.text).value == "entailment"
    assert llm.cache_key(msgs)["model"] == "offline://rules-v1" and first.endpoint == "offline://rules-v1"

    warm = OfflineLLM(generate, name="rules-v1", cache=CallCache(cache_path))
    assert all(r.cached for r in warm.chat_many([msgs, msgs], progress=False)) and len(calls) == 1
    OfflineLLM(generate, name="rules-v2", cache=CallCache(cache_path)).chat(msgs)
    assert len(calls) == 2  # another generator name is another key
    assert llm.stats()["calls"] == 1 and llm.stats_table().index[0] == "offline://rules-v1"


def test_offline_llm_errors_and_replay(cache_path):
    def generate(messages):
        if "boom" in messages[-1]["content"]:
            raise RuntimeError("generator failed")
        return "ok"

    llm = OfflineLLM(generate, name="g", cache=CallCache(cache_path))
    results = llm.chat_many(["fine", "boom"], progress=False)
    assert isinstance(results[0], LLMResult) and isinstance(results[1], LLMError)
    assert "generator failed" in results[1].error
    replay = OfflineLLM(generate, name="g", cache=CallCache(cache_path), replay_only=True)
    assert replay.chat("fine").cached
    with pytest.raises(ReplayMiss):
        replay.chat("boom")


# ------------------------------------------------------------------------------------------------
# Prompt templates
# ------------------------------------------------------------------------------------------------

FIELDS = {
    "sentence": "A man in an orange vest stands on a dock.", "premise": "A man sleeps on a bench.",
    "hypothesis": "A man is resting.", "context": "A man sleeps on a bench.", "evidence": "He is snoring.",
    "critical_atom": "The dog is brown.", "SNIPPETS": ["Carnaby Street is pedestrianised.", "It is in Soho."],
    "ANCHOR_TEXT": "A woman looks into a window.", "FACT_LIST_JSON": ["Carnaby Street is pedestrianised."],
    "explanation": "A dog is not a cat.", "A": "dog", "B": "cat", "phrase1": "2 car bombs", "phrase2": "Car bombing",
}

# key -> (well-formed answer, expected value, malformed answer)
ANSWERS = {
    "atoms.A1": ("FACTS:\n1. There is a man.\n2) The man wears a vest.\n- The vest is orange.\n[END]",
                 ["There is a man.", "The man wears a vest.", "The vest is orange."], "[END]"),
    "atoms.B1": ("'c'\nSleeping is not resting... actually it is. [END]", "contradiction", "Maybe? Hard to say."),
    "atoms.C1": ("More.\nSnoring shows he is asleep. [END]", "strengthener", "It depends on the situation."),
    "atoms.C2": ("none\nThe evidence is unrelated. [END]", "no effect", "I think it could go either way."),
    "atoms.D1": ("Question: What color is the dog?", "What color is the dog?", "The dog is brown."),
    "factnli.B1": ('```json\n{"facts": [{"text": "Carnaby Street is pedestrianised.,"}, {"text": "Carnaby Street is in Soho."}]}\n```',
                   ["Carnaby Street is pedestrianised.", "Carnaby Street is in Soho."], "Facts: Carnaby Street."),
    "factnli.B2": ('{"fusion_result": "A woman looks into a window on pedestrianised Carnaby Street."}',
                   "A woman looks into a window on pedestrianised Carnaby Street.", '{"result": "x"}'),
    "ftc.extract.C": (" dog\nB: cat", {"A": "dog", "B": "cat"}, "dog and cat"),
    "ftc.extract.E": ("A: guy on the phone\nB: sitting at a desk\n\nExplanation: next",
                      {"A": "guy on the phone", "B": "sitting at a desk"}, ""),
    "ftc.extract.N": ("A: looking\nB: waiting for their turn", {"A": "looking", "B": "waiting for their turn"},
                      "A: looking"),
    "ftc.transform.C": (" There is a cat running\n\nHypothesis: more", "There is a cat running", "   "),
    "ftc.transform.E": ("Counterfactual: The animal is barking at the girl.", "The animal is barking at the girl.", ""),
    "ftc.transform.N": (" A: The man is looking.; B: The man waits for his turn.",
                        {"A": "The man is looking.", "B": "The man waits for his turn."}, "The man is looking."),
    "phrasis.relation": ("FORW (forward entailment)", "FORW", "These phrases are about bombs."),
}


def test_registry_keys():
    assert set(PROMPTS) == set(ANSWERS)
    assert all(t.name == k for k, t in PROMPTS.items())


@pytest.mark.parametrize("key", sorted(ANSWERS))
def test_prompt_renders_and_parses(key):
    t = PROMPTS[key]
    messages = t.render(**{f: FIELDS[f] for f in t.fields})
    assert messages[-1]["role"] == "user" and all(isinstance(m["content"], str) for m in messages)
    user = messages[-1]["content"]
    for name in t.fields:
        assert "{" + name + "}" not in user
    assert "{shots}" not in user
    good, expected, bad = ANSWERS[key]
    parsed = t.parse(good)
    assert isinstance(parsed, Parsed) and parsed.ok, parsed.error
    assert parsed.value == expected and parsed.raw == good
    broken = t.parse(bad)
    assert not broken.ok and broken.value is None and broken.raw == bad and broken.error
    assert not t.parse(None).ok  # never raises


def test_render_details():
    with pytest.raises(KeyError, match="premise"):
        PROMPTS["atoms.B1"].render(hypothesis="h")
    zero = PROMPTS["atoms.A1"].render(sentence="S.")[-1]["content"]
    two = PROMPTS["atoms.A1"].render(sentence="S.", shots=2)[-1]["content"]
    assert "A man is trying to finish" not in zero and "A man is trying to finish" in two
    assert two.endswith("SENTENCE: S.\n\nFACTS:")
    own = PROMPTS["atoms.B1"].render(premise="p", hypothesis="h", shots=[
        {"premise": "A dog runs.", "hypothesis": "An animal runs.", "label": "entailment", "explanation": "Dogs are animals."}])
    assert "Hypothesis: An animal runs." in own[-1]["content"] and "\ne\nDogs are animals.\n[END]" in own[-1]["content"]
    ftc = PROMPTS["ftc.extract.C"].render(explanation="A cat is not a dog.")
    assert ftc[0]["role"] == "system" and ftc[-1]["content"].count("Explanation:") == 6
    assert ftc[-1]["content"].endswith("Explanation: A cat is not a dog.\nA:")
    n = PROMPTS["ftc.transform.N"].render(hypothesis="h", A="a", B="b")[-1]["content"]
    assert "Counterfactual: A: The skateboarders are looking.; B: The skateboarders are waiting for their turn." in n
    assert PROMPTS["ftc.transform.C"].exemplars == PROMPTS["ftc.transform.E"].exemplars
    fused = PROMPTS["factnli.B2"].render(anchor_text="Anchor.", fact_list_json=["F one."])[-1]["content"]
    assert 'Anchor.\n{"facts": [{"text": "F one."}]}' in fused and '"fusion_result": "<fused_paragraph>"' in fused
    snip = PROMPTS["factnli.B1"].render(SNIPPETS=["s1", "s2"])[-1]["content"]
    assert "[Inputs]\n1. s1\n2. s2\n" in snip and 'return {"facts": []} exactly.' in snip


def test_parsers_are_tolerant():
    nli = PROMPTS["atoms.B1"].parse
    for text, label in [("e", "entailment"), ("N.", "neutral"), ("Answer: c", "contradiction"),
                        ("**Entailment** - the premise says so", "entailment"), ("(n) cannot tell", "neutral"),
                        ("The hypothesis contradicts the premise.\n[END]", "contradiction")]:
        assert nli(text).value == label, text
    assert P.parse_facts('{"facts": []}') == []
    assert P.parse_facts('{"facts": [{"text": "a"}, {"text": "b"},]}') == ["a", "b"]
    assert P.parse_scale5("(+1)") == 1 and P.parse_scale5("strongly strengthens") == 2
    assert P.parse_scale5("invalid") == "invalid" and P.parse_scale5("0, no effect") == 0
    with pytest.raises(ValueError):
        P.parse_scale5("very much")
    c2 = PROMPTS["atoms.C2"].parse
    assert c2("less\nbecause") .value == "weakener" and c2("-2").value == "weakener" and c2("+1").value == "strengthener"
    assert c2("invalid atom").value == "invalid"
    rel = PROMPTS["phrasis.relation"].parse
    assert rel("unrelated").value == "UNR" and rel("Label: REL").value == "REL" and rel("backward entailment").value == "BACK"
    assert rel("Similar").value == "SIMI" and rel("OPPOSITION").value == "OPPO" and rel("EQUIVALENT").value == "EQUI"
    assert P.parse_atoms('["a1", "a2"]') == ["a1", "a2"]
    assert P.parse_atoms("$a_1$: There is a person.\n$a_2$: The person is a man.") == ["There is a person.", "The person is a man."]


def test_unparsable_answers_from_the_server(fake, make_client):
    fake.script = [("ok", "I am not sure what you mean."), ("ok", "")]
    llm = make_client()
    t = PROMPTS["atoms.B1"]
    answers = llm.chat_many([t.render(premise="p1", hypothesis="h"), t.render(premise="p2", hypothesis="h")],
                            progress=False)
    parsed = [t.parse(a.text) for a in answers]
    assert [p.ok for p in parsed] == [False, False]
    assert {p.raw for p in parsed} == {"I am not sure what you mean.", ""}


MESSY = [  # answers real models give that are no answer: refusals, disclaimers, echoes of the prompt, nothing
    ("atoms.A1", "Sorry, I can't help with that."),
    ("atoms.A1", "I'm sorry, but I cannot decompose this sentence as it may contain sensitive content."),
    ("atoms.A1", "1. There is a man.\n2. Sorry, I can't provide more facts about this.\n[END]"),
    ("atoms.A1", '["There is a man.", "I cannot help with the rest of this request."]'),
    ("atoms.A1", "As an AI language model, I can only list what the sentence says."),
    ("atoms.A1", ""),
    ("atoms.A1", "   \n[END]"),
    ("atoms.A1", "You are an expert linguist. You are given a sentence. Generate a list of atomic facts that are "
                 "strictly logically entailed from the given sentence."),
    ("atoms.B1", "I apologize, but I cannot determine whether the hypothesis follows from the premise."),
    ("atoms.B1", "As an AI, I do not judge; it could be entailment or neutral."),
    ("atoms.B1", "Read the premise and hypothesis and select the correct answer from the three answer labels (e, n, c)."),
    ("atoms.C1", "Does the evidence make the hypothesis about the situation more or less likely to be true?\nmore"),
    ("atoms.C2", "Unfortunately, I cannot say: none of the options fits, the evidence is more or less unrelated."),
    ("atoms.D1", "I'm sorry, what is the question?"),
    ("atoms.D1", "Question: Sorry, could you clarify which sentence?"),
    ("factnli.B1", '{"facts": [{"text": "I cannot extract facts from these snippets."}]}'),
    ("factnli.B2", '{"fusion_result": "Sorry, I cannot fuse these facts."}'),
    ("phrasis.relation", "I'm unable to determine the relation (UNR?)."),
    ("phrasis.relation", "\n\n"),
]


@pytest.mark.parametrize("key,answer", MESSY)
def test_refusals_and_junk_are_unparsable(key, answer):
    parsed = PROMPTS[key].parse(answer)
    assert not parsed.ok and parsed.value is None and parsed.raw == answer and parsed.error, parsed


def test_the_echo_check_splits_a_templates_wording_once_for_any_number_of_answers(monkeypatch):
    import dataclasses
    import re

    template = dataclasses.replace(PROMPTS["atoms.C1"])  # a fresh instance: nothing computed yet
    splits = []
    real_split = re.split
    monkeypatch.setattr(re, "split", lambda *a, **k: splits.append(1) or real_split(*a, **k))
    echo = "Does the evidence make the hypothesis about the situation more or less likely to be true?\nmore"
    for _ in range(50):
        assert template.parse("more").ok and not template.parse(echo).ok
    assert len(splits) == 1


@pytest.mark.parametrize("key,answer,value", [
    ("atoms.B1", "e\nThe hypothesis follows logically from the information contained in the premise. [END]", "entailment"),
    ("atoms.A1", "Sure! Here are the facts:\n1. The man is sorry.\n2. The man cannot swim.\n[END]",
     ["The man is sorry.", "The man cannot swim."]),
    ("atoms.D1", "Question: Why is the man sorry?", "Why is the man sorry?"),
    ("atoms.C2", "none\nSorry-looking faces do not change the likelihood. [END]", "no effect"),
])
def test_answers_that_merely_mention_sorry_still_parse(key, answer, value):
    assert PROMPTS[key].parse(answer).value == value


def test_exemplar_rows():
    assert {len(v) for v in FTC.FTC_EXTRACT_EXAMPLES.values()} == {5}
    assert len(FTC.FTC_TRANSFORM_EXAMPLES["CE"]) == 5 and len(FTC.FTC_TRANSFORM_EXAMPLES["N"]) == 4
    assert len(AP.QUD_EXAMPLES) == 9 and AP.QUD_EXAMPLES[1] == {"atom": "The dog is brown.", "qud": "What color is the dog?",
                                                              "source": "atoms Table 9"}
    critical = [r["hypothesis"] for r in AP.DEFEASIBLE_ATOM_EXAMPLES if r["critical"] and r["scale"] is not None]
    assert critical == ["The thing the person is trying to do is finish.", "The person is a garbage man.",
                        "The person is sweeping up a spill."]
    assert {r["label"] for r in AP.NLI_EXAMPLES} == {"entailment", "neutral", "contradiction"}
    assert all(r["label"] in P.PHRASE_LABELS for r in PP.PHRASIS_EXAMPLES)


# ------------------------------------------------------------------------------------------------
# Wording checked against the papers' text (skipped where the papers are not present; a failure in CI)
# ------------------------------------------------------------------------------------------------

def _norm(text: str) -> str:
    """Drop PDF artefacts: bold markers, margin line numbers, hyphenated line breaks, whitespace."""
    text = text.replace("**", "").replace("<b>", "").replace("</b>", "")
    text = re.sub(r"(?m)^[ \t]*\d{3,}[ \t]?", "", text)
    text = re.sub(r"(?<=[.])\d{3,}(?=\s)", "", text)
    text = re.sub(r"-[ \t]*\n\s*", "", text)
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize("key", ["atoms.A1", "atoms.B1", "atoms.C1", "atoms.C2", "atoms.D1", "factnli.B1", "factnli.B2"])
def test_verbatim_prompts_match_the_papers(key):
    t = PROMPTS[key]
    text = t.template.replace("{shots}", "").replace("{critical_atom}", "critical atom")
    assert _norm(text) in _norm(paper_text(t.paper))


def test_exemplar_strings_are_in_the_papers():
    strings = {"ftc": [], "atoms": [], "phrasis": [], "factnli": []}
    for rows in FTC.FTC_EXTRACT_EXAMPLES.values():
        strings["ftc"] += [s for r in rows for s in (r["explanation"], r["A"], r["B"])]
    for rows in FTC.FTC_TRANSFORM_EXAMPLES.values():
        for r in rows:
            strings["ftc"] += [r["hyp_original"], r["A"], r["B"]]
            strings["ftc"] += [x.strip().rstrip(";") for x in re.split(r"\b[AB]: ", r["hyp_cf"]) if x.strip()]
    for r in AP.ATOM_DECOMPOSITIONS:
        strings["atoms"] += [r["sentence"], *r["atoms"], *r["invalid_atoms"], *r.get("missing_atoms", [])]
    for r in AP.NLI_EXAMPLES + AP.DEFEASIBLE_EXAMPLES + AP.DEFEASIBLE_ATOM_EXAMPLES:
        strings["atoms"] += [r["premise"], r["hypothesis"], r.get("update", "")]
    strings["atoms"] += [s for r in AP.QUD_EXAMPLES for s in (r["atom"], r["qud"])]
    strings["phrasis"] += [s for r in PP.PHRASIS_EXAMPLES for s in (r["phrase1"], r["phrase2"])]
    c = FP.FACTNLI_CASE_STUDY
    strings["factnli"] += [c["premise"], c["hypothesis"], *c["L1_facts"], c["L1_premise"], c["L1_hypothesis"]]
    for paper, items in strings.items():
        text = _norm(paper_text(paper))
        missing = [s for s in items if s and _norm(s) not in text]
        assert not missing, (paper, missing)
