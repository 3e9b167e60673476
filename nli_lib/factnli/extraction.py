"""§3.2 facts acquisition, step 2: atomic facts from the snippet pool, through Prompt B.1.

One interface for both tiers: a `FactExtractor` sends Prompt B.1 (``PROMPTS["factnli.B1"]``, SNIPPETS = the
pool, numbered) through a cached chat client and parses ``{"facts": [{"text": ...}]}``.

* paper profile: an `LLMClient` (the paper used GPT-4o);
* offline profile: `OfflineLLM` over `atomize`, a rule-based extractor that reads the snippets out of the
  rendered B.1 prompt and answers in B.1's JSON format (plus a "snippet" index per fact), so its answers are
  cached and parsed exactly like an LLM's.

`atomize` follows B.1's rules as far as rules can: source-only (it only deletes and splits, never adds a
content word), minimality (one fact per clause: relative clauses after a definitional noun, coordinated
verb phrases and ';' parts are split off and given the subject), no cross extraction (each fact comes
from one snippet), no ambiguous references (a subject pronoun in a later clause is replaced by the
snippet's first subject when number agrees; any fact that still has a B.1 pronoun is dropped).

>>> window = "A window is a framework of wood that contains a glass windowpane and is built into a wall."
>>> atomize(window)  # doctest: +SKIP
['A window is a framework of wood.', 'A window contains a glass windowpane.', 'A window is built into a wall.']
>>> atomize("The dog barked all night and it woke the neighbours.")   # doctest: +SKIP
['The dog barked all night.', 'The dog woke the neighbours.']
>>> atomize("He lives on Nassau Street.")   # doctest: +SKIP
[]

Provenance: every fact keeps the page source, title and snippet it came from (for an LLM's answer, the
snippet with the largest word overlap, since B.1's output schema carries only the text).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Sequence

from ..llm import PROMPTS, OfflineLLM
from ..text import WORD, normalise, punct_tokens
from .text import Snippet, finish, has_deictic_pronoun, pos_tag, strip_parentheticals

EXTRACT_RULES_VERSION = "factnli-extract-rules-v8"  # names the OfflineLLM cache namespace: bump when rules change

_RELATIVE = {"that", "which", "who"}
_BE = {"is", "are", "was", "were"}
_FINITE = {"VBZ", "VBP", "VBD", "MD"}
_SPLIT_SUBORDINATORS = {"while", "whereas"}
#: Determiners whose noun's relative clause restricts it: "is the skin that ...", "is any collection ... that ...".
_RESTRICTED = {"the", "any", "every", "all", "each"}
#: Heads whose relative clause is the whole content: "someone who works ..." must not become "X is someone."
_PRONOMINAL_HEADS = {"someone", "somebody", "something", "anyone", "anybody", "anything", "everyone", "everybody",
                     "everything", "nobody", "nothing", "one", "ones"}


@dataclass(frozen=True)
class Fact:
    """A candidate or fused fact with its provenance."""

    text: str  # the atomic sentence
    source: str = ""  # page id of its snippet ('oewn:…' / 'wikipedia:…'); '' for premise atoms
    title: str = ""  # page title
    snippet: str = ""  # the snippet sentence it was extracted from
    score: float = float("nan")  # cosine of its snippet to the query (retrieval relevance)


# --------------------------------------------------------------------------------------------------------------
# The rule-based extractor
# --------------------------------------------------------------------------------------------------------------

def _subject_span(toks: list[str], tags: list[str]) -> int | None:
    """Index of the first finite verb (the subject is toks[:index]); None for fragments."""
    for i, t in enumerate(tags):
        if t in _FINITE and i > 0:
            return i
    return None


def _definite(subject: str) -> str:
    """'A dog' -> 'The dog' (for a resolved pronoun in a later clause)."""
    return re.sub(r"^(a|an)\s+", "The ", subject, flags=re.I) if re.match(r"^(a|an)\s", subject, re.I) else subject


def _clauses(sentence: str) -> list[str]:
    """Split at ';', at ', and'/'and'/'but' + a clause with its own subject, and at while/whereas."""
    parts = [p.strip() for p in sentence.split(";") if p.strip()]
    out = []
    for part in parts:
        toks = punct_tokens(part)
        tags = [t for _, t in pos_tag(toks)]
        start = 0
        for i in range(1, len(toks) - 2):
            low = toks[i].lower()
            if low in ("and", "but") or low in _SPLIT_SUBORDINATORS:
                rest_tags = tags[i + 1 : i + 6]
                # a new clause: (pronoun | determiner ... noun) followed by a finite verb within a few tokens
                rest_words = [w.lower() for w in toks[i + 1 : i + 6]]
                verb = next((j for j, t in enumerate(rest_tags) if t in _FINITE and j > 0), None)
                if rest_tags and (rest_tags[0] == "PRP" or rest_tags[0] in ("DT", "NNP")) and verb is not None \
                        and not {"and", "or"} & set(rest_words[:verb]):  # "and a body and is played": no clause
                    out.append(" ".join(toks[start:i]).rstrip(" ,"))
                    start = i + 1
        out.append(" ".join(toks[start:]))
    return [c for c in (re.sub(r"\s+([,.;:!?'])", r"\1", c).strip(" ,") for c in out) if c]


def _split_predicate(subject: str, predicate_toks: list[str], predicate_tags: list[str]) -> list[str]:
    """Facts from one clause's predicate: copula + noun + relative clause split; coordinated VPs split.

    Not split: a relative clause after a pronominal head ("is someone who works ...") or after a definite
    head ("is the skin that covers the top of the head": "X is the skin" alone is false) or a quantified one
    ("is any collection of particles that is visible": "X is any collection of particles" is false), and "and" + a
    past form after a copula or a non-past verb ("is a group ... associated by ... and regarded as ...":
    the tagger's VBD there is a participle, and the split would leave the fragment "X regarded as ...").
    """
    facts = []
    toks, tags = list(predicate_toks), list(predicate_tags)
    if toks and toks[0].lower() in _BE:  # "is a framework of wood that contains ... and is built ..."
        for i in range(2, len(toks)):
            if toks[i].lower() in _RELATIVE and tags[i - 1].startswith("NN") and i + 1 < len(toks) and \
                    toks[i - 1].lower() not in _PRONOMINAL_HEADS and toks[1].lower() not in _RESTRICTED and \
                    (tags[i + 1] in _FINITE or tags[i + 1].startswith(("VB", "MD", "RB"))):
                if (toks[i + 1].lower() in ("are", "were", "have") or tags[i + 1] == "VBP") and \
                        not _plural_subject(subject):
                    break  # "a body of students who are taught": the clause's verb agrees with 'students'
                facts.append(f"{subject} {' '.join(toks[:i])}")
                toks, tags = toks[i + 1 :], tags[i + 1 :]
                break
    # coordinated verb phrases sharing the subject: "contains a pane and is built into a wall"
    past_main = bool(toks) and tags[0] == "VBD" and toks[0].lower() not in _BE  # "barked ... and woke ..."
    start = 0
    for i in range(1, len(toks) - 1):
        nxt, nxt_tag = toks[i + 1].lower(), tags[i + 1]
        finite = nxt in _BE or (nxt_tag in _FINITE and (nxt_tag != "VBD" or past_main))
        if toks[i].lower() == "and" and finite:
            facts.append(f"{subject} {' '.join(toks[start:i])}")
            start = i + 1
    facts.append(f"{subject} {' '.join(toks[start:])}")
    return facts


def _plural_subject(subject: str) -> bool:
    """'Birds', 'Pants', 'Many herbs' are plural subjects; 'A class', 'Water' are not."""
    words_ = subject.split()
    return bool(words_) and words_[0].lower() not in ("a", "an", "the", "this") and \
        pos_tag([words_[-1]])[0][1] in ("NNS", "NNPS")


def atomize(sentence: str) -> list[str]:
    """Atomic, self-contained facts of one snippet sentence (see the module docstring); [] when none."""
    text = strip_parentheticals(str(sentence)).strip()
    # examples after "e.g." are no part of the definition, and tokens would cut the abbreviation at its full
    # stops ("... touching the ground as e g bears and human beings."): the examples go; "i.e." is "that is"
    text = re.sub(r",?\s*\b(?:as\s+|such\s+as\s+)?e\.\s?g\.,?\s[^;,.)]*", "", text)
    text = re.sub(r"\bi\.\s?e\.,?", "that is", text)
    facts: list[str] = []
    first_subject: tuple[str, bool] | None = None  # (subject text, plural?)
    for clause in _clauses(text):
        toks = [t for t in punct_tokens(clause) if t not in (".", "!", "?")]
        tags = [t for _, t in pos_tag(toks)]
        v = _subject_span(toks, tags)
        if v is None:
            continue
        subject = " ".join(toks[:v])
        low = subject.lower()
        if first_subject is None:
            if not has_deictic_pronoun(subject) or low in ("there",):
                first_subject = (subject, any(t in ("NNS", "NNPS") for t in tags[:v]))
        elif low in ("it", "they") and first_subject[1] == (low == "they"):
            subject = _definite(first_subject[0])
        for fact in _split_predicate(subject, toks[v:], tags[v:]):
            fact = finish(re.sub(r"\s+([,.;:!?')\]])|([(\[])\s+", r"\1\2", fact))
            if len(WORD.findall(fact)) >= 3 and not has_deictic_pronoun(fact):
                facts.append(fact)
    return list(dict.fromkeys(facts))


# --------------------------------------------------------------------------------------------------------------
# Prompt B.1 through a cached client
# --------------------------------------------------------------------------------------------------------------

def snippets_from_b1(messages) -> list[str]:
    """The numbered SNIPPETS of a rendered B.1 prompt."""
    content = messages[-1]["content"] if isinstance(messages, list) else str(messages)
    m = re.search(r"\[Inputs\]\n(.*?)\n\n\[Rules\]", content, re.S)
    if not m:
        raise ValueError("not a FactNLI B.1 prompt: no [Inputs] ... [Rules] block")
    return [re.sub(r"^\d+\.\s*", "", line).strip() for line in m.group(1).splitlines() if line.strip()]


def rule_answer(messages) -> str:
    """The offline B.1 answer: JSON facts, each with the 1-based index of its snippet."""
    facts = [{"text": f, "snippet": k} for k, s in enumerate(snippets_from_b1(messages), 1) for f in atomize(s)]
    return json.dumps({"facts": facts}, ensure_ascii=False)


def _attribute(fact: str, snippets: Sequence[Snippet]) -> int:
    words_ = set(normalise(fact).split())
    overlaps = [len(words_ & set(normalise(s.text).split())) for s in snippets]
    return max(range(len(snippets)), key=lambda k: (overlaps[k], -k))


def parse_b1(text: str, snippets: Sequence[Snippet]) -> tuple[list[Fact], str | None]:
    """Facts of a B.1 answer with their snippets; (facts, error or None). Unparsable answers give no facts."""
    parsed = PROMPTS["factnli.B1"].parse(text)
    if not parsed.ok:
        return [], parsed.error
    indices: list[int | None] = []
    try:  # the offline extractor also returns the snippet index of each fact
        obj = json.loads(text)
        indices = [item.get("snippet") if isinstance(item, dict) else None for item in obj.get("facts", [])]
    except (json.JSONDecodeError, AttributeError):
        pass
    facts = []
    for i, fact in enumerate(parsed.value):
        k = indices[i] - 1 if i < len(indices) and isinstance(indices[i], int) and 0 < indices[i] <= len(snippets) \
            else _attribute(fact, snippets)
        s = snippets[k]
        facts.append(Fact(fact, s.source, s.title, s.text, s.score))
    return facts, None


@dataclass(frozen=True)
class FactExtractor:
    """Prompt B.1 through a cached chat client (an LLM endpoint, or the offline rules)."""

    client: object  # LLMClient or OfflineLLM
    name: str  # generator name printed beside results
    tier: str  # 'paper' | 'offline'

    def extract_many(self, pools: Sequence[Sequence[Snippet]], progress: bool = False) -> list[list[Fact] | None]:
        """Candidate facts C(t) for each pool (de-duplicated, in snippet order); an empty pool makes no call.

        A failed call or an unparsable answer gives None (counted by the client), not "no facts": `[]` means
        the model found nothing to extract.
        """
        todo = [i for i, pool in enumerate(pools) if pool]
        prompts = [PROMPTS["factnli.B1"].render(SNIPPETS=[s.text for s in pools[i]]) for i in todo]
        results = self.client.chat_many(prompts, progress=progress) if prompts else []
        out: list[list[Fact] | None] = [[] for _ in pools]
        for i, res, parsed in zip(todo, results, self.client.parse_many(PROMPTS["factnli.B1"], results)):
            if not parsed.ok:
                out[i] = None
                continue
            facts, _ = parse_b1(res.text, pools[i])
            seen, unique = set(), []
            for f in facts:
                if normalise(f.text) not in seen:
                    seen.add(normalise(f.text))
                    unique.append(f)
            out[i] = unique
        return out


def rule_extractor(cache=None) -> FactExtractor:
    """The offline extractor: `atomize` behind the B.1 interface, cached as an OfflineLLM."""
    return FactExtractor(OfflineLLM(rule_answer, name=EXTRACT_RULES_VERSION, cache=cache),
                         name=EXTRACT_RULES_VERSION, tier="offline")


def llm_extractor(client) -> FactExtractor:
    """Prompt B.1 through an LLM endpoint (`client`: an LLMClient)."""
    return FactExtractor(client, name=getattr(client, "model", "llm"), tier="paper")
