"""Appendix D: questions under discussion (QUDs) for critical atoms.

Paper profile: Prompt D.1 with the six atom -> QUD pairs of Table 9 (gpt-4o outputs the paper validated) as
exemplars, through the cached LLM client at temperature 0.01 (the paper used gpt-4o with 15 unprinted exemplars).
Figure 3's questions are QUDs of the whole hypothesis and keep "the man" rather than a generic, unlike the D.1
mapping the paper describes, so they are evaluation items (`qud_exemplar_check`), not exemplars.

Offline: `RuleQUDGenerator`, a COMPANION-AUTHORED rule-based question generator for the common atom patterns
(marked as such in every output). Like the paper's exemplars it maps specific people to generics ("girl" ->
"person") so equivalent inferences share a QUD. Patterns, in order:

==============  =================================================  ===========================================
pattern         atom                                               QUD
==============  =================================================  ===========================================
existence       There are two people.                              How many people are there?
cleft           The thing the grandpa is wearing is a shirt.       What is the person wearing?
purpose         The purpose of the people climbing ... is to ...   Why are the people climbing?
relationship    The two women are sisters.                         What is the relationship between the two people?
identity        The person is a man.                               Who is the person?
color           The dog is brown.                                  What color is the dog?
feeling/age/..  The person is tired. / The man is old.             How does the person feel? / How old is ...?
condition       The bike is brand new.                             What is the condition of the object?
wearing         The person is wearing a vest.                      What is the person wearing?
location        The person is on a dock.                           Where is the person?
time            The people wait at night.                          When are the people waiting?
manner          The person practices briefly.                      How is the person practicing?
object          The person is playing a guitar.                    What is the person playing?
activity        The kids are waiting. / The person stands.         What are the people doing?
                The person is about to take a ride.                What is the person about to do?
event           The can has spilled.                               What happened to the object?
==============  =================================================  ===========================================

An atom no pattern matches gets no QUD (pattern 'unmatched'), and is counted as such: never a made-up one.
"""
from __future__ import annotations

import re
from typing import Callable, Sequence

import pandas as pd

from ..llm import PROMPTS, OfflineLLM, make_llm
from .prompts import QUD_EXAMPLES

QUD_RULES_VERSION = "qud-rules-v4"  # v4: no rule -> a declared non-answer (None), not a text
AUX = {"is", "are", "was", "were", "has", "have", "had", "does", "do", "did"}
RELATIONSHIPS = {"sister", "sisters", "brother", "brothers", "friend", "friends", "couple", "family", "mother",
                 "father", "daughter", "son", "husband", "wife", "girlfriend", "boyfriend", "parents", "siblings",
                 "coworkers", "teammates", "strangers", "partners", "cousins", "twins", "married", "related",
                 "relatives", "classmates", "mom", "dad", "grandmother", "grandfather", "neighbors", "colleagues"}
COLORS = {"red", "orange", "yellow", "green", "blue", "purple", "pink", "black", "white", "brown", "gray", "grey",
          "silver", "gold", "golden", "tan", "beige", "blond", "blonde", "dark", "colorful"}
FEELINGS = {"happy", "sad", "tired", "nervous", "angry", "excited", "bored", "upset", "scared", "afraid", "calm",
            "anxious", "hungry", "thirsty", "sleepy", "exhausted", "proud", "worried", "relaxed", "cold", "hot"}
AGES = {"young", "old", "elderly", "older", "younger", "teenage", "adult"}
SIZES = {"tall", "short", "big", "small", "large", "tiny", "huge", "fat", "thin", "heavy", "long"}
LOCATIVE = {"in", "on", "at", "near", "by", "under", "inside", "outside", "beside", "behind", "next", "above", "below",
            "across", "along", "around", "through", "into", "onto", "over", "between", "outdoors", "indoors", "home",
            "there", "here", "upstairs", "downstairs", "nearby", "away", "toward", "towards"}
TIME = {"today", "tonight", "yesterday", "tomorrow", "night", "morning", "evening", "afternoon", "summer", "winter",
        "noon", "midnight", "dawn", "dusk", "now"}
DETERMINERS = {"a", "an", "the", "some", "his", "her", "their", "its", "my", "our", "your", "this", "that"}
CATENATIVE = {
    "about",
    "trying",
    "going",
    "ready",
    "preparing",
    "planning",
    "waiting",
    "getting",
    "learning",
    "starting",
}
NUMBERS = {"two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "several", "many"}


class RuleQUDGenerator:
    """Companion-authored rule-based QUD generator (see the module table). `question(atom)` -> (QUD, pattern)."""

    name = QUD_RULES_VERSION

    def __init__(self, category: Callable[[str], str] | None = None):
        if category is None:
            from .decompose import default_decomposer

            category = default_decomposer().category
        self.category = category

    # the subject NP and the rest -------------------------------------------------------------------------
    @staticmethod
    def _split(text: str) -> tuple[list[str], list[str]]:
        words = text.split()
        for i, w in enumerate(words):
            if w.lower() in AUX and i > 0:
                return words[:i], words[i:]
        # no auxiliary: the subject is "the/a (number) (adj) noun", the verb the first word ending in -s/-ed
        for i, w in enumerate(words[1:], 1):
            if i >= 2 and re.search(r"(s|ed)$", w.lower()) and not w[:1].isupper():
                return words[:i], words[i:]
        return words[:2], words[2:]

    def _generic(self, subject: list[str], keep_animals: bool = True) -> tuple[str, bool]:
        """('the person' | 'the people' | 'the two people' | 'the dog' | 'the object', plural?)."""
        if len(subject) >= 3 and "and" in [w.lower() for w in subject[1:-1]]:  # "Lilly and Sally", "the man and ..."
            i = [w.lower() for w in subject].index("and", 1)
            parts = [self._generic(subject[:i])[0], self._generic(subject[i + 1:])[0]]
            people = all(p.startswith("the ") and p.endswith(("person", "people")) for p in parts)
            return ("the people" if people else "the objects"), True
        if subject and all(w[:1].isupper() for w in subject) and subject[0].lower() not in DETERMINERS | NUMBERS and \
                self.category(subject[-1].lower()) == "thing" and (len(subject) > 1 or not subject[0].endswith("s")):
            return "the person", False  # a name ("Galina", "Serina Williams") stands for a person
        words = [w.lower() for w in subject]
        for rel in ("that", "who", "which"):  # "the vest that the person wears": the head is before the relative
            if rel in words[1:]:
                words = words[: words.index(rel, 1)]
        nums = [w for w in words if w in NUMBERS or w.isdigit()]
        noun = words[-1] if words else "thing"
        cat = "person" if noun in {"others", "they", "them", "everyone"} else self.category(noun)
        plural = (
            bool(nums)
            or noun.endswith("s")
            and not noun.endswith("ss")
            or noun in {"people", "men", "women", "children"}
        )
        if cat in {"person", "group"}:
            if plural or cat == "group":
                return ("the " + (nums[0] + " " if nums else "") + "people"), True
            return "the person", False
        if cat == "animal" and keep_animals:
            return "the " + " ".join(w for w in words if w not in {"the", "a", "an"}), plural
        return ("the objects" if plural else "the object"), plural

    def _noun_phrase(self, subject: list[str]) -> str:
        words = [w.lower() for w in subject]
        return "the " + " ".join(words[1:] if words and words[0] in {"the", "a", "an"} else words)

    def question(self, atom: str) -> tuple[str | None, str]:
        """(QUD, pattern) for one atom; (None, 'unmatched') when no rule applies."""
        text = re.sub(r"\s+", " ", str(atom)).strip().rstrip(".!").strip()
        low = text.lower()
        m = re.match(r"^there (is|are) (.+)$", low)
        if m and not low.startswith("there is a purpose"):
            rest = m.group(2).split()
            if rest and (rest[0] in NUMBERS or rest[0].isdigit()):
                noun = rest[-1]
                what = "people" if self.category(noun) in {"person", "group"} else noun
                return f"How many {what} are there?", "existence"
            return (
                "Who is there?" if self.category(rest[-1]) in {"person", "group"} else "What is there?"
            ), "existence"
        m = re.match(r"^the (thing|things|place|one) (?:that )?(.+) (is|are) (.+)$", low)
        if m:
            subj, rest = self._split(m.group(2))
            gen, plural = self._generic(subj)
            if not rest:
                return None, "unmatched"
            if rest[0] in AUX:
                vp = " ".join(rest[1:])
                wh = "Where" if m.group(1) == "place" else "What"
                return f"{wh} {rest[0]} {gen} {vp}?", "cleft"
            do, tail = "do" if plural else "does", " " + " ".join(rest[1:]) if rest[1:] else ""
            return f"What {do} {gen} {_base(rest[0])}{tail}?", "cleft"
        m = re.match(r"^the purpose (?:of|for) (.+?) is to (.+)$", low)
        if m or low.startswith("there is a purpose"):
            target = m.group(1) if m else re.sub(r"^there is a purpose for ", "", low)
            subj, rest = self._split(target)
            gen, plural = self._generic(subj)
            verb = " ".join(rest) if rest else "doing this"
            return f"Why {'are' if plural else 'is'} {gen} {verb}?", "purpose"
        subj, pred = self._split(text)
        if not subj or not pred:
            return None, "unmatched"
        gen, plural = self._generic(subj)
        plower = [w.lower() for w in pred]
        be = plower[0] in {"is", "are", "was", "were"}
        if be and len(plower) >= 2:
            comp = plower[1:]
            if comp[0] == "not":
                return None, "unmatched"
            if (
                len(comp) >= 3 and comp[0] in CATENATIVE and comp[1] == "to" and comp[2] not in DETERMINERS
            ):  # "about to take"
                return f"What {'are' if plural else 'is'} {gen} {comp[0]} to do?", "activity"
            head = comp[-1]
            people = self.category(subj[-1].lower()) in {"person", "group"}
            if comp[0] in RELATIONSHIPS or (people and head in RELATIONSHIPS):
                return f"What is the relationship between {gen if plural else 'the people'}?", "relationship"
            if comp[0] in {"a", "an"} or (people and comp[-1] not in COLORS | FEELINGS | AGES | SIZES and
                                           not comp[0].endswith("ing") and comp[0] not in LOCATIVE and
                                           self.category(head) in {"person", "group"}):
                return (f"Who {'are' if plural else 'is'} {gen}?" if people else
                        f"What {'are' if plural else 'is'} {self._noun_phrase(subj)}?"), "identity"
            if comp[0] == "wearing" or (comp[0] == "dressed"):
                return f"What {'are' if plural else 'is'} {gen} wearing?", "wearing"
            if len(comp) == 1 and head in COLORS:
                return f"What color {'are' if plural else 'is'} {self._noun_phrase(subj)}?", "color"
            if len(comp) <= 2 and head in FEELINGS:
                return f"How {'do' if plural else 'does'} {gen} feel?", "feeling"
            if len(comp) <= 3 and (head in AGES or "years" in comp):
                return f"How old {'are' if plural else 'is'} {gen}?", "age"
            if len(comp) <= 2 and head in SIZES:
                size = head if head in {"tall", "big", "large", "long", "heavy"} else "big"
                return f"How {size} {'are' if plural else 'is'} {gen}?", "size"
            if comp[0] in LOCATIVE and not comp[0].endswith("ing"):
                return f"Where {'are' if plural else 'is'} {gen}?", "location"
            if comp[0] == "for":
                return f"What {'are' if plural else 'is'} {self._noun_phrase(subj)} for?", "purpose"
            if not comp[0].endswith("ing") and len(comp) <= 3:
                if people:
                    return f"What {'are' if plural else 'is'} {gen} like?", "condition"
                return f"What is the condition of {gen}?", "condition"
            if comp[0].endswith("ing"):
                return self._activity(gen, plural, ["is" if not plural else "are"] + comp, progressive=True)
        if plower[0] in {"has", "have"} and len(plower) >= 2 and (plower[1] == "been" or (
                len(plower) == 2 and re.search(r"(ed|en)$", plower[1]))):  # "has spilled", "has been vandalised"
            return f"What happened to {gen}?", "event"
        if plower[0] in {"has", "have"} and len(plower) >= 2:
            return f"What {'do' if plural else 'does'} {gen} have?", "object"
        return self._activity(gen, plural, plower, progressive=be)

    def _activity(self, gen: str, plural: bool, pred: list[str], progressive: bool) -> tuple[str | None, str]:
        aux = "are" if plural else "is"
        if progressive:
            verb, rest = pred[1], pred[2:]
            verb_phrase = verb
        else:
            verb, rest = pred[0], pred[1:]
            verb_phrase = _ing(_base(verb))
        if rest and rest[0] in {"up", "down", "out", "off", "away", "over", "back"} and not (len(rest) > 1):
            verb_phrase, rest = f"{verb_phrase} {rest[0]}", []
        if not rest or rest == ["something"]:
            return f"What {aux} {gen} doing?", "activity"
        if rest[0] in TIME or rest[-1] in TIME or rest[0] in {"before", "after", "during", "until"}:
            return f"When {aux} {gen} {verb_phrase}?", "time"
        if rest[0] in LOCATIVE or (len(rest) >= 2 and rest[0] == "next"):
            return f"Where {aux} {gen} {verb_phrase}?", "location"
        if len(rest) == 1 and rest[0].endswith("ly"):
            return f"How {aux} {gen} {verb_phrase}?", "manner"
        if rest[0] == "with":
            return f"Who {aux} {gen} {verb_phrase} with?", "companion"
        if rest[0] in {"to", "for"} and len(rest) >= 2:
            return f"Where {aux} {gen} {verb_phrase} {rest[0]}?" if rest[
                0
            ] == "to" else f"Who {aux} {gen} {verb_phrase} for?", "argument"
        if rest[0] in {"a", "an", "the", "some"} or rest[0] in NUMBERS or len(rest) <= 3:
            return f"What {aux} {gen} {verb_phrase}?", "object"
        return None, "unmatched"

    def generate(self, messages) -> str | None:
        """OfflineLLM generate function: read the sentence from a rendered D.1 prompt, answer one question
        (None when no rule applies: the client records a non-answer, counted apart from model failures)."""
        content = messages[-1]["content"] if isinstance(messages, list) else str(messages)
        sentence = re.findall(r"Sentence:\s*(.*)", content)[-1].strip()
        question, _ = self.question(sentence)
        return f"Question: {question}" if question else None


_IRREGULAR_BASE = {"is": "be", "are": "be", "has": "have", "does": "do", "goes": "go"}


def _base(verb: str) -> str:
    v = verb.lower()
    if v in _IRREGULAR_BASE:
        return _IRREGULAR_BASE[v]
    if v.endswith("ies"):
        return v[:-3] + "y"
    if re.search(r"(ches|shes|sses|xes|zes)$", v):
        return v[:-2]
    if v.endswith("s") and not v.endswith("ss"):
        return v[:-1]
    return v


def _ing(lemma: str) -> str:
    from .decompose import gerund

    return gerund(lemma)


def qud_generator(llm=None, category=None):
    """(client, name, tier, shots): Prompt D.1 through an LLM (paper) or the rule generator (offline)."""
    if llm is None:
        rules = RuleQUDGenerator(category)
        return (
            OfflineLLM(rules.generate, name=QUD_RULES_VERSION),
            f"{QUD_RULES_VERSION} (companion-authored rules)",
            "offline",
            (),
        )
    client = llm if hasattr(llm, "chat_many") else make_llm({"llm": llm})
    shots = tuple({"atom": r["atom"], "qud": r["qud"]} for r in QUD_EXAMPLES if r["source"] == "atoms Table 9")
    return client, f"{client.model} (D.1, {len(shots)}-shot)", "paper", shots


def generate_quds(atoms: Sequence[str], llm=None, category=None, temperature: float = 0.01) -> pd.DataFrame:
    """QUD per unique atom: atom, qud (None when unanswered/unmatched), qud_error (why), generator, tier (+ pattern
    offline)."""
    client, name, tier, shots = qud_generator(llm, category)
    unique = list(dict.fromkeys(str(a) for a in atoms))
    t = PROMPTS["atoms.D1"]
    extra = {"temperature": temperature} if tier == "paper" else {}
    results = client.chat_many([t.render(critical_atom=a, shots=list(shots)) for a in unique], progress=False, **extra)
    parsed = client.parse_many(t, results)
    rows = [{"atom": atom, "qud": p.value if p.ok else None, "qud_error": None if p.ok else p.error}
            for atom, p in zip(unique, parsed)]
    out = pd.DataFrame(rows, columns=["atom", "qud", "qud_error"]).assign(generator=name, tier=tier)
    if tier == "offline":  # which rule answered (or 'unmatched'), for error analysis
        rules = RuleQUDGenerator(category)
        out["pattern"] = [rules.question(a)[1] for a in out["atom"]]
    out.attrs["generator"], out.attrs["tier"] = name, tier
    return out


def qud_exemplar_check(category=None) -> pd.DataFrame:
    """The rule generator on the paper's printed atom -> QUD pairs (Table 9, Figure 3), side by side."""
    rules = RuleQUDGenerator(category)
    rows = []
    for r in QUD_EXAMPLES:
        q, pattern = rules.question(r["atom"])
        rows.append({"atom": r["atom"], "paper_qud": r["qud"], "rule_qud": q, "pattern": pattern,
                     "exact_match": (q or "").lower() == r["qud"].lower(), "source": r["source"]})
    return pd.DataFrame(rows)
