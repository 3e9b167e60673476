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
from functools import cached_property
from typing import Callable, Sequence

import pandas as pd

from ..llm import PROMPTS, OfflineLLM, make_llm
from ..ruletable import RuleTable
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


# The QUD rules of `RuleQUDGenerator.question`, in the order they are tried: the first that answers gives the QUD.
QUD_RULES = RuleTable("QUD rule")


class _ParsedAtom:
    """An atom as the QUD rules read it: its text, and (when a rule asks) its subject and predicate words, the
    subject's generic ('the person', plural?) and, after is/are/was/were, the complement's words (`comp`)."""

    def __init__(self, rules: "RuleQUDGenerator", atom: str):
        self.rules = rules
        self.text = re.sub(r"\s+", " ", str(atom)).strip().rstrip(".!").strip()
        self.low = self.text.lower()

    @cached_property
    def _split(self) -> tuple[list[str], list[str]]:
        return self.rules._split(self.text)

    @property
    def subj(self) -> list[str]:
        return self._split[0]

    @property
    def pred(self) -> list[str]:
        return self._split[1]

    @cached_property
    def _generic(self) -> tuple[str, bool]:
        return self.rules._generic(self.subj)

    @property
    def gen(self) -> str:
        return self._generic[0]

    @property
    def plural(self) -> bool:
        return self._generic[1]

    @property
    def be_word(self) -> str:
        return "are" if self.plural else "is"

    @cached_property
    def plower(self) -> list[str]:
        return [w.lower() for w in self.pred]

    @property
    def be(self) -> bool:
        return self.plower[0] in {"is", "are", "was", "were"}

    @property
    def comp(self) -> list[str] | None:
        """The words after is/are/was/were (None when the predicate is no copula with a complement)."""
        return self.plower[1:] if self.be and len(self.plower) >= 2 else None

    @cached_property
    def people(self) -> bool:
        return self.rules.category(self.subj[-1].lower()) in {"person", "group"}


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
        """(QUD, pattern) for one atom: the answer of the first rule of `QUD_RULES` that takes it ((None,
        'unmatched') when only a rule without a question does):

        >>> print(QUD_RULES.table())
        existence     There is/are ...: how many (a number), else who or what is there
        cleft         The thing/place/one (that) X is/are Y: what (where) X is/does
        purpose       The purpose of/for X is to ..., There is a purpose for X: why X is doing it
        no_predicate  no subject or no predicate: unmatched
        negated       is/are not ...: unmatched
        about_to      is about/trying/going/... to <verb>: what X is about to do
        relationship  is/are + a relationship word (sisters, a couple, ...): the relationship between them
        identity      is/are a/an ..., a person is/are people words: who (people) or what X is
        wearing       is/are wearing/dressed ...: what X is wearing
        color         is/are + one colour word: what colour X is
        feeling       is/are (+ one word) + a feeling: how X feels
        age           is/are + an age word or 'years', in up to three words: how old X is
        size          is/are (+ one word) + a size: how tall/big/... X is
        location      is/are + a place word: where X is
        used_for      is/are for ...: what X is for
        condition     is/are + up to three words, no -ing: what X is like (people), X's condition
        progressive   is/are + an -ing verb: the activity rules (`_activity`) on the verb's complement
        event         has/have been ..., has/have + a participle: what happened to X
        possession    has/have ...: what X has
        activity      the activity rules (`_activity`): when, where, how, with whom, what X does
        """
        return QUD_RULES.first(self, _ParsedAtom(self, atom))

    @QUD_RULES.rule("existence", "There is/are ...: how many (a number), else who or what is there")
    def _existence(self, a: _ParsedAtom):
        m = re.match(r"^there (is|are) (.+)$", a.low)
        if not m or a.low.startswith("there is a purpose"):
            return None
        rest = m.group(2).split()
        if rest and (rest[0] in NUMBERS or rest[0].isdigit()):
            noun = rest[-1]
            what = "people" if self.category(noun) in {"person", "group"} else noun
            return f"How many {what} are there?", "existence"
        return ("Who is there?" if self.category(rest[-1]) in {"person", "group"} else "What is there?"), "existence"

    @QUD_RULES.rule("cleft", "The thing/place/one (that) X is/are Y: what (where) X is/does")
    def _cleft(self, a: _ParsedAtom):
        m = re.match(r"^the (thing|things|place|one) (?:that )?(.+) (is|are) (.+)$", a.low)
        if not m:
            return None
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

    @QUD_RULES.rule("purpose", "The purpose of/for X is to ..., There is a purpose for X: why X is doing it")
    def _purpose(self, a: _ParsedAtom):
        m = re.match(r"^the purpose (?:of|for) (.+?) is to (.+)$", a.low)
        if not (m or a.low.startswith("there is a purpose")):
            return None
        target = m.group(1) if m else re.sub(r"^there is a purpose for ", "", a.low)
        subj, rest = self._split(target)
        gen, plural = self._generic(subj)
        verb = " ".join(rest) if rest else "doing this"
        return f"Why {'are' if plural else 'is'} {gen} {verb}?", "purpose"

    @QUD_RULES.rule("no_predicate", "no subject or no predicate: unmatched")
    def _no_predicate(self, a: _ParsedAtom):
        return (None, "unmatched") if not a.subj or not a.pred else None

    @QUD_RULES.rule("negated", "is/are not ...: unmatched")
    def _negated(self, a: _ParsedAtom):
        return (None, "unmatched") if a.comp and a.comp[0] == "not" else None

    @QUD_RULES.rule("about_to", "is about/trying/going/... to <verb>: what X is about to do")
    def _about_to(self, a: _ParsedAtom):
        comp = a.comp
        if comp and len(comp) >= 3 and comp[0] in CATENATIVE and comp[1] == "to" and comp[2] not in DETERMINERS:
            return f"What {a.be_word} {a.gen} {comp[0]} to do?", "activity"
        return None

    @QUD_RULES.rule("relationship",
                    "is/are + a relationship word (sisters, a couple, ...): the relationship between them")
    def _relationship(self, a: _ParsedAtom):
        if a.comp and (a.comp[0] in RELATIONSHIPS or (a.people and a.comp[-1] in RELATIONSHIPS)):
            return f"What is the relationship between {a.gen if a.plural else 'the people'}?", "relationship"
        return None

    @QUD_RULES.rule("identity", "is/are a/an ..., a person is/are people words: who (people) or what X is")
    def _identity(self, a: _ParsedAtom):
        comp = a.comp
        if not comp:
            return None
        if comp[0] in {"a", "an"} or (a.people and comp[-1] not in COLORS | FEELINGS | AGES | SIZES and
                                       not comp[0].endswith("ing") and comp[0] not in LOCATIVE and
                                       self.category(comp[-1]) in {"person", "group"}):
            return (f"Who {a.be_word} {a.gen}?" if a.people else
                    f"What {a.be_word} {self._noun_phrase(a.subj)}?"), "identity"
        return None

    @QUD_RULES.rule("wearing", "is/are wearing/dressed ...: what X is wearing")
    def _wearing(self, a: _ParsedAtom):
        return (f"What {a.be_word} {a.gen} wearing?", "wearing") if a.comp and a.comp[0] in ("wearing", "dressed") \
            else None

    @QUD_RULES.rule("color", "is/are + one colour word: what colour X is")
    def _color(self, a: _ParsedAtom):
        if a.comp and len(a.comp) == 1 and a.comp[-1] in COLORS:
            return f"What color {a.be_word} {self._noun_phrase(a.subj)}?", "color"
        return None

    @QUD_RULES.rule("feeling", "is/are (+ one word) + a feeling: how X feels")
    def _feeling(self, a: _ParsedAtom):
        if a.comp and len(a.comp) <= 2 and a.comp[-1] in FEELINGS:
            return f"How {'do' if a.plural else 'does'} {a.gen} feel?", "feeling"
        return None

    @QUD_RULES.rule("age", "is/are + an age word or 'years', in up to three words: how old X is")
    def _age(self, a: _ParsedAtom):
        if a.comp and len(a.comp) <= 3 and (a.comp[-1] in AGES or "years" in a.comp):
            return f"How old {a.be_word} {a.gen}?", "age"
        return None

    @QUD_RULES.rule("size", "is/are (+ one word) + a size: how tall/big/... X is")
    def _size(self, a: _ParsedAtom):
        if not (a.comp and len(a.comp) <= 2 and a.comp[-1] in SIZES):
            return None
        head = a.comp[-1]
        size = head if head in {"tall", "big", "large", "long", "heavy"} else "big"
        return f"How {size} {a.be_word} {a.gen}?", "size"

    @QUD_RULES.rule("location", "is/are + a place word: where X is")
    def _location(self, a: _ParsedAtom):
        if a.comp and a.comp[0] in LOCATIVE and not a.comp[0].endswith("ing"):
            return f"Where {a.be_word} {a.gen}?", "location"
        return None

    @QUD_RULES.rule("used_for", "is/are for ...: what X is for")
    def _used_for(self, a: _ParsedAtom):
        return (f"What {a.be_word} {self._noun_phrase(a.subj)} for?", "purpose") if a.comp and a.comp[0] == "for" \
            else None

    @QUD_RULES.rule("condition", "is/are + up to three words, no -ing: what X is like (people), X's condition")
    def _condition(self, a: _ParsedAtom):
        if not (a.comp and not a.comp[0].endswith("ing") and len(a.comp) <= 3):
            return None
        if a.people:
            return f"What {a.be_word} {a.gen} like?", "condition"
        return f"What is the condition of {a.gen}?", "condition"

    @QUD_RULES.rule("progressive", "is/are + an -ing verb: the activity rules (`_activity`) on the verb's complement")
    def _progressive(self, a: _ParsedAtom):
        if a.comp and a.comp[0].endswith("ing"):
            return self._activity(a.gen, a.plural, ["is" if not a.plural else "are"] + a.comp, progressive=True)
        return None

    @QUD_RULES.rule("event", "has/have been ..., has/have + a participle: what happened to X")
    def _event(self, a: _ParsedAtom):
        p = a.plower
        if p[0] in {"has", "have"} and len(p) >= 2 and (p[1] == "been" or (
                len(p) == 2 and re.search(r"(ed|en)$", p[1]))):  # "has spilled", "has been vandalised"
            return f"What happened to {a.gen}?", "event"
        return None

    @QUD_RULES.rule("possession", "has/have ...: what X has")
    def _possession(self, a: _ParsedAtom):
        if a.plower[0] in {"has", "have"} and len(a.plower) >= 2:
            return f"What {'do' if a.plural else 'does'} {a.gen} have?", "object"
        return None

    @QUD_RULES.rule("activity", "the activity rules (`_activity`): when, where, how, with whom, what X does")
    def _any_activity(self, a: _ParsedAtom):
        return self._activity(a.gen, a.plural, a.plower, progressive=a.be)

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
