"""Text completions (base LMs), the local OpenAI-compatible server, FTC's context-fitted shots and rewriter
declarations: fast tests against the server's fixed-latency echo backend and scripted clients (no model).
The same paths with a real model (SmolLM2-135M-Instruct) are in test_llm_real.py."""
from __future__ import annotations

import threading
import time

import pandas as pd
import pytest

from nli_lib import calls
from nli_lib.cache import CallCache, ReplayMiss
from nli_lib.ftc import FewShotRewriter, counterfactual_rows, fsp_quantity, make_rewriter, meteor_beside_paper, paper_rewriter, shots_used
from nli_lib.ftc.fewshot import PAPER_SHOTS
from nli_lib.llm import PROMPTS, LLMClient, LLMConfig, OfflineLLM, make_llm
from nli_lib.llm.context import TokenBudget, completion_prompt
from nli_lib.llm.server import FixedLatency, answer, serve
from nli_lib.profile import ProfileError, key_table, load_profile

from stand_ins import no_proxy


class Recording(FixedLatency):
    """The echo backend, remembering what each request asked for."""

    def __init__(self, latency_s: float = 0.0, parallel: int = 8):
        super().__init__(latency_s, parallel)
        self.seen: list[dict] = []
        self.lock = threading.Lock()

    def generate(self, prompt, *, api, max_tokens, temperature, stop, seed):
        with self.lock:
            self.seen.append({"api": api, "prompt": prompt, "max_tokens": max_tokens, "stop": stop})
        return super().generate(prompt, api=api, max_tokens=max_tokens, temperature=temperature, stop=stop, seed=seed)


@pytest.fixture
def echo(monkeypatch):
    no_proxy(monkeypatch)
    backend = Recording()
    with serve(backend, name="base-lm") as url:
        backend.url = url
        yield backend


MSGS = [{"role": "system", "content": "Complete the example."}, {"role": "user", "content": "Explanation: x\nA:"}]


# ---------------------------------------------------------------------------------------------------
# Completions over HTTP: request, cache key, replay, ledger
# ---------------------------------------------------------------------------------------------------

def test_completions_endpoint_sends_the_plain_prompt_and_caches_on_it(echo, tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    cfg = dict(base_url=echo.url, model="base-lm", api="completions", max_tokens=3, stop=["\n\n"], max_retries=0)
    llm = LLMClient(LLMConfig(**cfg), cache=cache)
    before = calls.snapshot()
    with llm:
        result = llm.chat(MSGS)
    assert echo.seen == [{"api": "completions", "prompt": "Explanation: x\nA:", "max_tokens": 3, "stop": ["\n\n"]}]
    assert result.text == "Explanation: x A:" and result.finish_reason == "stop"
    assert result.usage["completion_tokens"] == 3
    key = llm.cache_key(MSGS)
    assert key["prompt"] == completion_prompt(MSGS) and "messages" not in key  # the key holds what was sent
    with LLMClient(LLMConfig(**cfg), cache=cache) as warm:
        again = warm.chat(MSGS)
    assert again.cached and len(echo.seen) == 1  # a warm run sends nothing
    row = calls.summary(since=before).loc[llm.label]
    assert (row.requests, row.cache_hits, row.calls, row.errors) == (2, 1, 1, 0)
    replay = LLMClient(LLMConfig(**{**cfg, "replay_only": True}), cache=cache)
    with pytest.raises(ReplayMiss, match="No stored call has this prompt"):
        replay.chat([{"role": "user", "content": "another prompt"}])


def test_chat_keys_keep_their_layout(echo, tmp_path):
    """The new config fields do not enter a chat call's key: caches filled before them still answer."""
    with LLMClient(LLMConfig(base_url=echo.url, model="base-lm"), cache=CallCache(":memory:")) as llm:
        key = llm.cache_key(MSGS)
        assert set(key) == {"model", "messages", "params", "sample"}
        assert set(key["params"]) == {"temperature", "max_tokens", "stop"}
        assert llm.chat(MSGS).text == "Explanation: x A:"  # the echo of the last user message
    assert echo.seen[-1]["api"] == "chat" and echo.seen[-1]["prompt"] == MSGS  # sent as messages


def test_server_answers_like_the_openai_api():
    backend = FixedLatency(latency_s=0.0, parallel=1)
    ok = answer(backend, "m", "/v1/completions", {"model": "m", "prompt": "one two three. four", "max_tokens": 10,
                                                 "stop": ["."]})
    assert ok[0] == 200 and ok[1]["choices"][0]["text"] == "one two three" and ok[1]["object"] == "text_completion"
    chat = answer(backend, "m", "/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "a b"}]})
    assert chat[1]["choices"][0]["message"] == {"role": "assistant", "content": "a b"}
    assert chat[1]["usage"] == {"prompt_tokens": 2, "completion_tokens": 2, "total_tokens": 4}
    assert answer(backend, "m", "/v1/completions", {"model": "other", "prompt": "x"})[0] == 404  # as vLLM does
    assert answer(backend, "m", "/v1/completions", {"model": "m", "prompt": 3})[0] == 400
    assert answer(backend, "m", "/v1/completions", {"model": "m", "prompt": "x", "max_tokens": -1})[0] == 400
    assert answer(backend, "m", "/v1/models", None)[1]["data"][0]["id"] == "m"


def test_server_404_is_not_retried_and_counts_as_an_error(echo):
    llm = LLMClient(LLMConfig(base_url=echo.url, model="not-served", api="completions", max_retries=3,
                              retry_base_s=0.001), cache=CallCache(":memory:"))
    before = calls.snapshot()
    with llm:
        out = llm.chat_many(["p"], progress=False)
    assert not out[0].ok and "NotFoundError" in out[0].error and out[0].attempts == 1
    assert calls.summary(since=before).loc[llm.label, "errors"] == 1


def test_server_serves_requests_in_parallel(monkeypatch):
    no_proxy(monkeypatch)
    backend = FixedLatency(latency_s=0.3, parallel=16)
    with serve(backend, name="echo") as url:
        with LLMClient(LLMConfig(base_url=url, model="echo", concurrency=16), cache=CallCache(":memory:")) as llm:
            start = time.perf_counter()
            out = llm.chat_many([f"prompt {i}" for i in range(16)], progress=False)
            elapsed = time.perf_counter() - start
    assert all(r.ok for r in out)
    assert elapsed < 0.3 * 16 / 3, elapsed  # one at a time would take 4.8 s


# ---------------------------------------------------------------------------------------------------
# Profile: rewriter section, `as`, in-process models
# ---------------------------------------------------------------------------------------------------

def test_profile_rewriter_section_and_declaration(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))
    (tmp_path / "neo").mkdir()
    p = load_profile(text="tier: paper\nrewriter: {model: ./neo, api: completions, as: GPT-Neo1.3B, "
                          "context_tokens: 2048}\n")
    assert p.rewriter.model == str(tmp_path / "neo") and p.rewriter.paper_system == "GPT-Neo1.3B"
    assert p.params()["rewriter"]["as"] == "GPT-Neo1.3B"  # written back under its profile key
    client = make_llm(p.params(), section="rewriter")
    assert type(client).__name__ == "LocalLLM" and client.model == "neo" and client.paper_system == "GPT-Neo1.3B"
    assert client.label == "neo @ in-process"  # outputs never name a local absolute path
    with pytest.raises(ProfileError, match="rewriter.as: 'GPT-Neo-2.7B' is not one of FTC's rewriters"):
        load_profile(text="rewriter: {base_url: 'http://h/v1', model: m, as: GPT-Neo-2.7B}")
    with pytest.raises(ProfileError, match="rewriter.model: no local model folder"):
        load_profile(text="rewriter: {model: ./missing, api: completions}")
    with pytest.raises(ProfileError, match="api: Input should be 'chat' or 'completions'"):
        load_profile(text="llm: {base_url: 'http://h/v1', model: m, api: complete}")
    table = key_table()
    assert "| `llm.as` |" in table and "| `llm.api` | chat \\| completions |" in table and "| `rewriter` |" in table


# ---------------------------------------------------------------------------------------------------
# FTC: shots fitted to the context, recorded per call; rewriter rows from the declaration only
# ---------------------------------------------------------------------------------------------------

class WordBudgetLLM(OfflineLLM):
    """An offline rewriter whose context holds `context` words (one word = one token)."""

    def __init__(self, generate, name, context: int, max_new: int = 8):
        super().__init__(generate, name=name, cache=CallCache(":memory:"))
        self.context, self.max_new = context, max_new
        self.prompts: list[str] = []

    def token_budget(self, max_new_tokens=None):
        return TokenBudget(self.context, self.max_new, lambda m: len(completion_prompt(m).split()))


def _many_shots(n: int = PAPER_SHOTS) -> dict:
    rows = [{"explanation": f"a dog{i} is not a cat{i} .", "A": f"dog{i}", "B": f"cat{i}"} for i in range(n)]
    return {("extract", lab): rows for lab in ("entailment", "neutral", "contradiction")}


def test_ftc_shots_are_dropped_to_fit_the_context_and_recorded():
    seen = []

    def generate(messages):
        seen.append(completion_prompt(messages))
        return "A: dog\nB: cat"

    budget_words = 60
    client = WordBudgetLLM(generate, "tiny-context", context=budget_words)
    rewriter = FewShotRewriter({lab: client for lab in ("entailment", "neutral", "contradiction")},
                               {lab: client for lab in ("entailment", "neutral", "contradiction")},
                               name="tiny", tier="paper", shots=_many_shots())
    short = "A dog is not a cat ."
    longer = "The " + "very " * 20 + "old dog is not a cat ."
    parsed = rewriter.extract([short, longer], ["contradiction", "contradiction"])
    assert all(p.ok for p in parsed)
    assert all(len(s.split()) <= budget_words - client.max_new for s in seen)  # every prompt fits
    assert 0 < parsed[1].shots < parsed[0].shots < PAPER_SHOTS  # the longer query keeps fewer examples
    assert parsed[0].dropped == PAPER_SHOTS - parsed[0].shots
    # one more example would not have fitted: the most that fit are kept
    extra = rewriter.shots[("extract", "contradiction")][: parsed[0].shots + 1]
    prompt = PROMPTS["ftc.extract.C"].render(shots=extra, explanation=short)
    assert len(completion_prompt(prompt).split()) > budget_words - client.max_new


def test_ftc_prompt_too_long_even_without_shots_is_a_counted_failure():
    client = WordBudgetLLM(lambda m: "A: dog\nB: cat", "no-room", context=12)
    rewriter = FewShotRewriter({lab: client for lab in ("entailment", "neutral", "contradiction")}, {},
                               name="no-room", tier="paper", shots=_many_shots())
    before = calls.snapshot()
    parsed = rewriter.extract(["one two three four five six seven eight nine ten"], ["contradiction"])
    assert not parsed[0].ok and "PromptTooLong" in parsed[0].error and parsed[0].shots is None
    row = calls.summary(since=before).loc[client.label]
    assert (row.requests, row.errors, row.calls) == (1, 1, 0)


def test_pipeline_rows_and_shots_table_say_how_many_shots_were_used():
    client = WordBudgetLLM(lambda m: "A: dog\nB: cat", "rows", context=70)
    labs = ("entailment", "neutral", "contradiction")
    rewriter = FewShotRewriter({lab: client for lab in labs}, {lab: client for lab in labs},
                               name="rows", tier="paper", shots=_many_shots())
    df = pd.DataFrame({"pair_id": [1, 2], "premise": ["p", "p"], "hypothesis": ["A dog runs .", "A dog runs ."],
                       "label": ["contradiction", "contradiction"],
                       "explanation_1": ["A dog is not a cat .", "The " + "big " * 15 + "dog is not a cat ."]})
    rows = counterfactual_rows(df, "fsp", "regex", rewriter)
    assert rows["extract_shots"].notna().all() and rows["transform_shots"].isna().all()
    assert (rows["extract_shots"] + rows["extract_shots_dropped"] == PAPER_SHOTS).all()
    table = shots_used(rows)
    assert table[["step", "prompts", "cut"]].values.tolist() == [["extract", 2, 2]]


def test_rewriter_paper_rows_come_from_the_declaration_only(monkeypatch):
    no_proxy(monkeypatch)
    base = {"base_url": "http://127.0.0.1:9/v1", "api": "completions"}
    guessed = make_rewriter({"rewriter": {**base, "model": "EleutherAI/gpt-neo-1.3B"}})
    assert paper_rewriter(guessed) is None  # never guessed from the id
    assert fsp_quantity(guessed, "fsp-fsp", "C") is None
    declared = make_rewriter({"rewriter": {**base, "model": "my-neo", "as": "GPT-Neo1.3B"}})
    assert fsp_quantity(declared, "fsp-fsp", "C") == ("ftc-table-11", "METEOR GPT-Neo1.3B fsp-fsp C human")
    t4 = pd.DataFrame({"pipeline": ["regex-regex", "fsp-fsp"], "C": [0.5, 0.6]})
    beside = meteor_beside_paper(t4, guessed)
    assert beside.set_index("pipeline").loc["regex-regex", "paper"] == 0.69  # regex rows need no rewriter
    assert pd.isna(beside.set_index("pipeline").loc["fsp-fsp", "paper"])
    assert meteor_beside_paper(t4, declared).set_index("pipeline").loc["fsp-fsp", "paper"] == 0.769
    gpt2 = make_rewriter({"llm": {**base, "model": "gpt2-xl", "as": "GPT2-xl"}})  # the llm section is used too
    assert fsp_quantity(gpt2, "regex-fsp", "E") == ("ftc-table-11", "METEOR GPT2-xl regex-fsp E human")
    assert paper_rewriter(make_rewriter({})) is None and make_rewriter({}).tier == "offline"
    # the llm section's `as:` may name another paper's system (atoms, FactNLI): for FTC that LLM is a stand-in
    assert paper_rewriter(make_rewriter({"llm": {**base, "model": "gpt-4o", "as": "gpt-4o"}})) is None
    with pytest.raises(ValueError, match="FTC's rewriters"):
        make_rewriter({"rewriter": {**base, "model": "gpt-4o", "as": "gpt-4o"}})



def test_parallel_answers_are_stored_in_batches_and_all_before_return(monkeypatch, tmp_path):
    no_proxy(monkeypatch)
    cache = CallCache(tmp_path / "c.sqlite")
    commits = []
    real = cache.put_many
    def slow_put_many(ns, items):  # a commit that waits for a disk sync (50 ms): answers arriving meanwhile queue
        commits.append(len(items))
        time.sleep(0.05)
        return real(ns, items)

    monkeypatch.setattr(cache, "put_many", slow_put_many)
    with serve(FixedLatency(latency_s=0.2, parallel=40), name="echo") as url:
        llm = LLMClient(LLMConfig(base_url=url, model="echo", concurrency=40), cache=cache)
        out = llm.chat_many([f"prompt {i}" for i in range(40)], progress=False)
        assert all(r.ok and not r.cached for r in out)
        assert sum(commits) == 40 and len(commits) < 40  # batched commits, every answer stored by the return
        assert all(r.cached for r in llm.chat_many([f"prompt {i}" for i in range(40)], progress=False))
        pools = [c for c in llm._sdk_clients if c is not None]
        assert len(pools) == 3  # 40 workers over ceil(40 / 16) pools
        llm.close()  # every pool's kept-alive connections closed now, not when the garbage collector finds them
        assert all(sdk._client.is_closed for sdk in pools) and llm._sdk_clients == [None] * 3
        with llm:  # a request after close() opens a new pool, and leaving the block closes it
            assert llm.chat("one more prompt").ok
            pool = next(c for c in llm._sdk_clients if c is not None)
        assert pool._client.is_closed


def test_b1_parser_does_not_read_a_negated_label_word():
    parse = PROMPTS["atoms.B1"].parse
    assert not parse("The hypothesis is not entailed by the premise.").ok  # SmolLM2's answer, once
    assert "negated label word" in parse("This isn't a contradiction.").error
    assert parse("Entailment. The premise does not say more.").value == "entailment"
