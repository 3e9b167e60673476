"""Answers that are no answer (refusals, negations, lists of options, invented pairs, copied exemplars), and the
failure gate counting junk that later checks catch, with the bad answers shown and written to a file."""
from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from nli_lib import calls
from nli_lib.atoms.generate import AtomGenerator, copied_exemplar_atoms, generate_atoms
from nli_lib.cache import CallCache
from nli_lib.llm import PROMPTS, OfflineLLM


class ModelLike(OfflineLLM):
    """A scripted model counted in the ledger as an LLM (the failure gate counts rejected answers of LLMs only)."""

    ledger_kind = "llm"


def _model(answer, name: str) -> ModelLike:
    return ModelLike(answer if callable(answer) else (lambda m: answer), name=name, cache=CallCache(":memory:"))


# ------------------------------------------------------------------------------------------------
# Parsers
# ------------------------------------------------------------------------------------------------

NOT_ANSWERS = [  # (prompt, answer, what the error says)
    ("atoms.B1", "I'm afraid I can't determine whether this is entailment, neutral or contradiction.", "refusal"),
    ("atoms.B1", "I can't say whether it is entailment or contradiction.", "refusal"),
    ("atoms.B1", "It's impossible to tell; I would not label this as entailment.", "negated"),
    ("atoms.B1", "I am not sure. It might be entailment or contradiction.", "list of options"),
    ("atoms.B1", "Entailment or neutral, depending on the reading.", "list of options"),
    ("atoms.B1", "(e) or (c)", "list of options"),
    ("atoms.B1", "Premise: A woman is wearing a white dress and dancing.\nHypothesis: A woman is dancing.\n"
                 "The hypothesis follows logically from the premise.", "pair of its own"),
    ("atoms.B1", "**Premise:** Two dogs play.\ne", "pair of its own"),
    ("atoms.A1", "No. I refuse.", "refusal"),
    ("atoms.A1", "Lo siento, pero no puedo ayudar con esa solicitud.", "refusal"),
    ("atoms.A1", "Je suis désolé, je ne peux pas répondre.", "refusal"),
    ("atoms.C1", "The evidence does not make the hypothesis more or less likely to be true", "negated"),
    ("atoms.C1", "It is no more likely than before.", "negated"),
    ("atoms.C2", "The evidence does not make the hypothesis more or less likely to be true", "negated"),
    ("atoms.C2", "It is no more likely than before.", "negated"),
    ("atoms.C1", "More or less the same as before.", "more or less"),
    ("phrasis.relation", "It is not EQUI.", "negated"),
    ("phrasis.relation", "I would not call this EQUIVALENT.", "negated"),
    ("phrasis.relation", "EQUI or SIMI", "list of options"),
    ("phrasis.relation", "FORW/BACK", "list of options"),
]


@pytest.mark.parametrize("key, answer, why", NOT_ANSWERS)
def test_refusals_negations_lists_and_invented_pairs_are_not_answers(key, answer, why):
    parsed = PROMPTS[key].parse(answer)
    assert not parsed.ok and parsed.value is None, parsed
    assert why in parsed.error


GOOD = [  # answers that were and stay accepted
    ("atoms.B1", "e\nThe hypothesis follows logically from the information contained in the premise. [END]",
     "entailment"),
    ("atoms.B1", "(n) cannot tell", "neutral"),
    ("atoms.B1", "Neutral. It is unclear whether the man is asleep.", "neutral"),
    ("atoms.B1", "Answer: c\nA desert is not a field. [END]", "contradiction"),
    ("atoms.B1", "The hypothesis contradicts the premise: a man cannot be asleep and running.", "contradiction"),
    ("atoms.B1", "c, because a desert is not a field", "contradiction"),
    ("atoms.B1", "Entailment: nothing in the hypothesis goes beyond the premise.", "entailment"),
    ("atoms.C1", "more\nThe evidence is not about the weather. [END]", "strengthener"),
    ("atoms.C1", "The hypothesis is less likely.", "weakener"),
    ("atoms.C2", "none\nNo more and no less likely. [END]", "no effect"),
    ("atoms.C2", "The likelihood is unchanged; it is no more likely.", "no effect"),
    ("phrasis.relation", "The phrases are not related.", "UNR"),
    ("phrasis.relation", "REL, because both are animals", "REL"),
    ("phrasis.relation", "backward entailment", "BACK"),
    ("atoms.A1", "1. I'm afraid of dogs.\n2. The speaker is afraid.\n[END]", ["I'm afraid of dogs.",
                                                                            "The speaker is afraid."]),
    ("atoms.A1", "SENTENCE: The juggler performs.\nThe performance is at a party.\n[END]",
     ["The juggler performs.", "The performance is at a party."]),
    ("atoms.A1", "- Atom 1: There is a juggler.\n- Atom 2: The juggler performs.", ["There is a juggler.",
                                                                                    "The juggler performs."]),
]


@pytest.mark.parametrize("key, answer, value", GOOD)
def test_good_answers_still_parse(key, answer, value):
    parsed = PROMPTS[key].parse(answer)
    assert parsed.ok and parsed.value == value, parsed


def test_a1_atoms_copied_from_the_prompts_exemplars_are_rejected():
    shots = [{"sentence": "Two brothers are climbing a tree to get down their Frisbee.",
              "atoms": ["There are two people.", "The two people are brothers.",
                        "Two brothers are climbing a tree to get down their Frisbee."]},
             {"sentence": "The man dances.", "atoms": ["There is a person.", "The person is a man.",
                                                       "The person dances."]}]
    sentence = "A man climbs a mountain."
    copied = "Two brothers are climbing a tree to get down their Frisbee."
    assert copied_exemplar_atoms(["There is a person.", "The person is a man.", copied], sentence, shots) == [copied]
    # the same atoms are fine for the exemplar's own sentence (the exemplars double as evaluation items)
    assert copied_exemplar_atoms([copied], shots[0]["sentence"], shots) == []

    answer = f"1. There is a person.\n2. {copied}\n[END]"
    llm = _model(answer, "copies-exemplars")
    before = calls.snapshot()
    out = generate_atoms([sentence], AtomGenerator(llm, "copier", "paper", shots=tuple(shots)), checker=None)
    assert out["parse_ok"].tolist() == [False] and out["status"].tolist() == ["failed"]
    assert "copied from the prompt's exemplars" in out["error"].iloc[0]
    row = calls.summary(since=before).loc[llm.label]
    assert (row.requests, row.rejected, row.failure_rate) == (1, 1, 1.0)


# ------------------------------------------------------------------------------------------------
# The failure gate
# ------------------------------------------------------------------------------------------------

def test_malformed_atoms_count_toward_the_gate_for_models_not_stand_ins():
    from nli_lib.atoms.grammar.wellformed import AtomCheck

    def judge(atom, sentence, sole):
        return AtomCheck("malformed" if "blah" in atom else "ok", "no finite verb" if "blah" in atom else "")

    answers = {"The cat sleeps.": "1. There is a cat.\n2. The cat sleeps.\n[END]",
               "The dog runs.": "1. There is a dog.\n2. blah blah\n[END]"}

    def answer(messages):
        return answers[messages[-1]["content"].split("SENTENCE:")[-1].split("\n")[0].strip()]

    for cls, counted in ((ModelLike, 1), (OfflineLLM, 0)):
        llm = cls(answer, name=f"atoms-{cls.__name__}", cache=CallCache(":memory:"))
        before = calls.snapshot()
        out = generate_atoms(list(answers), AtomGenerator(llm, "g", "paper"), checker=judge)
        assert out["status"].tolist() == ["ok", "ok", "ok", "malformed"]
        row = calls.summary(since=before).loc[llm.label]
        assert (row.requests, row.unparsable, row.rejected) == (2, 0, 1)
        assert row.failure_rate == counted / 2


def test_malformed_fsp_counterfactuals_count_toward_the_gate():
    from nli_lib.ftc import FewShotRewriter, counterfactual_rows

    def answer(messages):
        text = messages[-1]["content"]
        if "Explanation:" in text.split("\n")[-2] or text.rstrip().endswith("A:"):
            return "A: dog\nB: cat"
        return "cat cat cat the the"  # a counterfactual no check lets through

    llm = _model(answer, "ftc-junk")
    labs = ("entailment", "neutral", "contradiction")
    rewriter = FewShotRewriter({lab: llm for lab in labs}, {lab: llm for lab in labs}, name="junk", tier="paper")
    df = pd.DataFrame({"pair_id": [1, 2], "premise": ["A dog runs .", "A dog sits ."],
                       "hypothesis": ["A dog runs .", "A dog sits ."], "label": ["contradiction"] * 2,
                       "explanation_1": ["A dog is not a cat .", "A dog is not a cat ."]})
    before = calls.snapshot()
    rows = counterfactual_rows(df, "fsp", "fsp", rewriter, verify=False)
    malformed_pairs = rows.loc[rows["status"] == "malformed", "pair_id"].nunique()
    assert malformed_pairs == 2, rows[["status", "reason", "x_cf"]]
    row = calls.summary(since=before).loc[llm.label]
    assert row.rejected == malformed_pairs and row.unparsable == 0
    assert row.failure_rate == round(malformed_pairs / row.requests, 4)


def test_a_failed_check_shows_raw_answers_and_writes_all_of_them(tmp_path):
    llm = _model("I am not sure. It might be entailment or contradiction.", "unsure-model")
    before = calls.snapshot()
    t = PROMPTS["atoms.B1"]
    prompts = [t.render(premise=f"p{i}", hypothesis="h") for i in range(5)]
    parsed = llm.parse_many(t, llm.chat_many(prompts, progress=False))
    assert not any(p.ok for p in parsed)
    with pytest.raises(calls.TooManyFailures) as err:
        calls.check(0.02, since=before, answers_dir=tmp_path)
    message = str(err.value)
    assert "5 of 5 requests failed (0 errors, 5 unparsable answers; 0 retries)" in message
    assert "atoms.B1: 'I am not sure. It might be entailment or contradiction.' -> a list of options" in message
    (written,) = tmp_path.glob("answers-*.jsonl")
    assert str(written) in message
    lines = [json.loads(x) for x in written.read_text().splitlines()]
    assert len(lines) == 5 and {x["source"] for x in lines} == {llm.label}
    assert lines[0]["raw"].startswith("I am not sure") and "list of options" in lines[0]["why"]
    assert re.search(r"all 5 are in \S+answers-", message)


def test_a_failed_check_says_when_it_kept_only_the_first_bad_answers(tmp_path, monkeypatch):
    monkeypatch.setattr(calls, "MAX_KEPT_ANSWERS", 2)
    ledger = calls.CallLedger()
    for i in range(5):
        ledger.count("llm", "m @ x", requests=1)
        ledger.note_answer("llm", "m @ x", "atoms.B1", f"junk {i}", "no NLI label")
    with pytest.raises(calls.TooManyFailures, match=r"the first 2 of 5 are in \S+answers-") as err:
        ledger.check(0.02, answers_dir=tmp_path)
    assert "5 of 5 requests failed (0 errors, 5 unparsable answers; 0 retries)" in str(err.value)
    (written,) = tmp_path.glob("answers-*.jsonl")
    assert [json.loads(x)["raw"] for x in written.read_text().splitlines()] == ["junk 0", "junk 1"]


def test_a_neutral_explanation_in_the_first_person_plural_is_no_refusal():
    """e-SNLI writes neutral explanations as "we can not tell if ...": a reason for n, not a refusal to answer."""
    parsed = PROMPTS["atoms.B1"].parse("We can not tell if the woman is relaxed, so the answer is neutral.")
    assert parsed.ok and parsed.value == "neutral"
