"""The paper profile's LLM settings fit the prompts it sends (stop at [END]), the client honours a stop sequence an
endpoint ignored, and a shipped profile whose replica folders are missing says how to build them."""
from __future__ import annotations

import pytest

from nli_lib.llm import PROMPTS
from nli_lib.profile import ProfileError, load_profile
from test_llm import cache_path, fake, make_client  # noqa: F401 - fixtures


def test_the_paper_profile_stops_where_its_prompts_end():
    llm = load_profile("paper").llm
    asking = [k for k in ("atoms.A1", "atoms.B1", "atoms.C1", "atoms.C2") if "[END]" in PROMPTS[k].template]
    assert asking, "the atoms prompts ask for [END]"
    assert list(llm.stop) == ["[END]"] and llm.max_tokens is not None


def test_the_client_cuts_an_answer_at_a_stop_the_endpoint_ignored(fake, make_client):  # noqa: F811
    fake.script.append(("ok", "1. There is a man.\n2. The man climbs.\n[END]\nSENTENCE: Two brothers climb."))
    result = make_client(stop=("[END]",)).chat("decompose")
    assert fake.requests[-1]["body"]["stop"] == ["[END]"]
    assert result.text == "1. There is a man.\n2. The man climbs.\n" and result.finish_reason == "stop"
    fake.script.append(("ok", "e\nThe hypothesis follows. [END]"))
    assert make_client().chat("no stop asked").text == "e\nThe hypothesis follows. [END]"  # kept as it came


def test_missing_replicas_say_how_to_build_them(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))  # a fresh clone: no .cache/replicas here
    with pytest.raises(ProfileError) as err:
        load_profile("replica")
    message = str(err.value)
    assert "replicas the companion builds" in message and "python -m nli_lib.replicas .cache/replicas" in message
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(ProfileError) as err:  # another missing folder gets no such advice
        load_profile(text="tier: paper\nnli_model: ./models/mine\n")
    assert "nli_lib.replicas" not in str(err.value)
