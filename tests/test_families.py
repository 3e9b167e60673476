"""Seams with names: model families (`nli_lib.families`, a profile entry's `kind:`), LLM providers
(`nli_lib.llm.factory`) and the inference settings (`nli_lib.inference`)."""
from __future__ import annotations

import dataclasses
import typing

import pytest

from nli_lib import families
from nli_lib.cache import CallCache
from nli_lib.lineup import lineup, llm_ref, load_classifier
from nli_lib.llm import OfflineLLM
from nli_lib.models.prompted import PromptNLIClassifier
from nli_lib.profile import ModelEntry, ModelRef, ProfileError, load_profile


def test_kind_is_inferred_from_the_id_when_omitted():
    p = load_profile(text="tier: paper\nnli_model: tfidf-svm\nextra_models: [roberta-large-mnli]\n"
                          "llm: {base_url: 'http://127.0.0.1:1/v1', model: m}")
    assert [(m.id, m.kind) for m in lineup(p, llm=True)] == [
        ("tfidf-svm", "baseline"), ("tfidf-logreg", "baseline"), ("roberta-large-mnli", "hf"), ("m", "prompted")]
    assert load_profile("offline").ref("nli_model").kind == "offline"


def test_kind_as_written_is_kept_and_an_omitted_kind_is_not_recorded():
    p = load_profile(text="tier: paper\nextra_models: [{id: roberta-large-mnli, kind: hf}, {id: org/m}]")
    assert [r.kind for r in p.refs("extra_models")] == ["hf", "hf"]
    written, omitted = p.params()["extra_models"]
    assert written["kind"] == "hf" and "kind" not in omitted  # sidecar params of profiles without kind: unchanged


def test_the_schema_accepts_exactly_the_kinds_of_the_family_table():
    assert typing.get_args(typing.get_args(ModelEntry.model_fields["kind"].annotation)[0]) == families.ENTRY_KINDS
    assert set(families.ENTRY_KINDS) == {k for k, f in families.FAMILIES.items() if f.entry} == \
        {"offline", "baseline", "hf"}
    with pytest.raises(ProfileError, match="extra_models.0.kind: Input should be 'offline', 'baseline' or 'hf'"):
        load_profile(text="tier: paper\nextra_models: [{id: org/m, kind: prompted}]")


def test_a_kind_that_cannot_load_the_id_is_a_profile_problem():
    with pytest.raises(ProfileError, match=r"extra_models\[0\].kind: kind baseline cannot load 'org/m'.*Fix: leave "
                                           r"kind out \(this id is hf\)"):
        load_profile(text="tier: paper\nextra_models: [{id: org/m, kind: baseline}]")
    with pytest.raises(ProfileError, match=r"nli_model.kind: kind hf cannot load 'tfidf-logreg'"):
        load_profile(text="tier: paper\nnli_model: {id: tfidf-logreg, kind: hf}")


def test_load_classifier_loads_through_the_family_table(monkeypatch):
    """A new family is one row of the table: a member of that kind loads through it, with the load options."""
    seen = []
    echo = families.Family("echo", "a test family", lambda model_id: True,
                           lambda ref, **options: seen.append((ref, options)) or f"echo:{ref.id}")
    monkeypatch.setitem(families.FAMILIES, "echo", echo)
    assert load_classifier(ModelRef(key="k", id="org/model", name="m", kind="echo"), quick=True, progress=False) \
        == "echo:org/model"
    ref, options = seen[0]
    assert (ref.name, options["quick"], options["progress"]) == ("m", True, False)


def test_the_prompted_family_is_the_llm_behind_prompt_b1():
    p = load_profile(text="tier: paper\nllm: {base_url: 'http://127.0.0.1:1/v1', model: m}")
    llm = OfflineLLM(lambda messages: "e\nSure. [END]", name="always-e", cache=CallCache(":memory:"))
    clf = load_classifier(llm_ref(p), llm=llm, shots=[{"premise": "p", "hypothesis": "h", "label": "neutral"}])
    assert isinstance(clf, PromptNLIClassifier) and len(clf.shots) == 1
    assert clf.predict(["A dog runs."], ["An animal runs."]) == ["entailment"]
    with pytest.raises(ValueError, match="needs its client. Fix: pass llm="):
        load_classifier(llm_ref(p))


# ------------------------------------------------------------------------------------------------------------
# LLM providers (nli_lib.llm.factory)
# ------------------------------------------------------------------------------------------------------------

def test_the_provider_is_inferred_from_base_url_and_builds_its_client():
    from nli_lib.llm import LLMClient, make_llm
    from nli_lib.llm.local import LocalLLM

    assert isinstance(make_llm({"llm": {"base_url": "http://127.0.0.1:1/v1", "model": "m"}}), LLMClient)
    assert isinstance(make_llm({"llm": {"model": "gpt2", "provider": "in-process"}}), LocalLLM)  # loads lazily
    assert isinstance(make_llm({"llm": {"model": "gpt2"}}), LocalLLM)


def test_make_llm_builds_through_the_provider_table(monkeypatch):
    from nli_lib.llm import factory

    built = []
    fake = dataclasses.replace(factory.PROVIDERS["openai-compatible"],
                               client=lambda config, cache=None: built.append(config) or "client")
    monkeypatch.setitem(factory.PROVIDERS, "openai-compatible", fake)
    assert factory.make_llm({"llm": {"base_url": "http://h/v1", "model": "m", "stop": ["[END]"], "as": "GPT2-xl"}}) \
        == "client"
    assert (built[0].stop, built[0].paper_system, built[0].base_url) == (("[END]",), "GPT2-xl", "http://h/v1")


def test_the_schema_accepts_exactly_the_providers_of_the_table_and_checks_them_against_base_url():
    from nli_lib.llm import factory, make_llm

    assert typing.get_args(typing.get_args(factory.LLMSection.model_fields["provider"].annotation)[0]) == \
        tuple(factory.PROVIDERS) == ("openai-compatible", "in-process")
    with pytest.raises(ProfileError, match="llm: Value error, provider openai-compatible is an OpenAI-compatible.*"
                                           "Fix: give base_url"):
        load_profile(text="tier: paper\nllm: {model: m, provider: openai-compatible}")
    with pytest.raises(ValueError, match="rewriter: Value error, provider in-process .*Fix: remove base_url"):
        make_llm({"rewriter": {"model": "m", "base_url": "http://h/v1", "provider": "in-process"}}, section="rewriter")
    with pytest.raises(ValueError, match="llm.provider: Input should be 'openai-compatible' or 'in-process'"):
        make_llm({"llm": {"model": "m", "provider": "vllm"}})


def test_make_llm_takes_the_profiles_checked_section_and_records_provider_only_when_written():
    from nli_lib.llm import LLMClient, make_llm

    p = load_profile(text="tier: paper\nllm: {base_url: 'http://127.0.0.1:1/v1', model: m, provider: openai-compatible}")
    assert isinstance(make_llm({"llm": p.llm}), LLMClient) and p.params()["llm"]["provider"] == "openai-compatible"
    assert "provider" not in load_profile("paper").params()["llm"]  # sidecar params of shipped profiles: unchanged
    with pytest.raises(ValueError, match="llm.api_key: unknown key") as err:
        make_llm({"llm": {"base_url": "u", "model": "m", "api_key": "sk-" + "x" * 40}})
    assert "xxxx" not in str(err.value)
