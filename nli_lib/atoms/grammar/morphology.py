"""English morphology for atoms: articles, plurals, gerunds, and noun/verb lemmas checked against WordNet.

>>> article("orange vest"), pluralize("fireman"), gerund("run"), Morph(None).noun("Men"), Morph(None).verb("ran")
('an', 'firemen', 'running', 'man', 'run')
"""
from __future__ import annotations

import functools
import re

from .lexicon import IRREGULAR_NOUNS, IRREGULAR_VERBS, PLURAL_OF

_VOWELS = set("aeiou")


def article(phrase: str) -> str:
    """'a' or 'an' for the phrase that follows (by its first letter; 'hour'/'honest' special-cased)."""
    first = phrase.split()[0].lower() if phrase.split() else ""
    if first.startswith(("hour", "honest", "honor", "heir")):
        return "an"
    if first.startswith(("uni", "use", "usu", "one", "eu", "ubiq")) or first in {"u", "uk", "us"}:
        return "a"
    return "an" if first[:1] in _VOWELS else "a"


def pluralize(noun: str) -> str:
    """Simple English plural of the last word of a (compound) noun."""
    words = noun.split()
    last = words[-1]
    low = last.lower()
    if low in PLURAL_OF:
        out = PLURAL_OF[low]
    elif low.endswith("man") and low not in {"human", "german"}:
        out = last[:-3] + "men"
    elif re.search(r"(s|x|z|ch|sh)$", low):
        out = last + "es"
    elif re.search(r"[^aeiou]y$", low):
        out = last[:-1] + "ies"
    else:
        out = last + "s"
    return " ".join(words[:-1] + [out])


def gerund(lemma: str) -> str:
    """'climb' -> 'climbing', 'dance' -> 'dancing', 'run' -> 'running', 'lie' -> 'lying'."""
    low = lemma.lower()
    if low.endswith("ie"):
        return lemma[:-2] + "ying"
    if low.endswith("e") and not low.endswith(("ee", "ye", "oe")) and low not in {"be"}:
        return lemma[:-1] + "ing"
    if (len(low) <= 4 and len(low) >= 3 and low[-1] not in _VOWELS | {"w", "x", "y"} and low[-2] in _VOWELS
            and low[-3] not in _VOWELS):
        return lemma + lemma[-1] + "ing"
    return lemma + "ing"


def third_person(lemma: str) -> str:
    """Third person singular present: 'go' -> 'goes', 'carry' -> 'carries', 'watch' -> 'watches', 'have' -> 'has'.

    >>> [third_person(v) for v in ("go", "carry", "watch", "have", "maintain", "play")]
    ['goes', 'carries', 'watches', 'has', 'maintains', 'plays']
    """
    low = lemma.lower()
    if low in {"have", "be", "do"}:
        return {"have": "has", "be": "is", "do": "does"}[low]
    if re.search(r"(s|x|z|ch|sh|o)$", low):
        return lemma + "es"
    if re.search(r"[^aeiou]y$", low):
        return lemma[:-1] + "ies"
    return lemma + "s"


def singular_candidates(low: str) -> list[str]:
    """Possible singulars of a lower-cased plural noun, most specific first (check them against WordNet).

    >>> singular_candidates("ladies"), singular_candidates("boxes"), singular_candidates("glass")
    (['lady', 'ladi', 'ladie'], ['box', 'boxe'], [])
    """
    candidates = []
    if low.endswith("ies"):
        candidates.append(low[:-3] + "y")
    if low.endswith("es"):
        candidates.append(low[:-2])
    if low.endswith("s") and not low.endswith("ss"):
        candidates.append(low[:-1])
    return candidates


class Morph:
    """Noun/verb lemmatisation checked against WordNet's lemma index (`wordnet` None: every candidate is known)."""

    def __init__(self, wordnet):
        self.wn = wordnet

    def _known(self, word: str, pos: str) -> bool:
        return bool(self.wn.synsets(word, pos)) if self.wn is not None else True

    @functools.lru_cache(maxsize=20000)  # noqa: B019  (one per RuleDecomposer, which lives for the process)
    def noun(self, word: str) -> str:
        low = word.lower()
        if low in IRREGULAR_NOUNS:
            return IRREGULAR_NOUNS[low]
        if low.endswith("men") and self._known(low[:-3] + "man", "n"):
            return low[:-3] + "man"
        for c in singular_candidates(low):
            if self._known(c, "n"):
                return c
        return low

    @functools.lru_cache(maxsize=20000)  # noqa: B019  (one per RuleDecomposer, which lives for the process)
    def verb(self, word: str) -> str:
        low = word.lower()
        if low in IRREGULAR_VERBS:
            return IRREGULAR_VERBS[low]
        candidates = []
        if low.endswith("ies"):
            candidates.append(low[:-3] + "y")
        if low.endswith("es"):
            candidates.append(low[:-2])
        if low.endswith("s"):
            candidates.append(low[:-1])
        if low.endswith("ied"):
            candidates.append(low[:-3] + "y")
        if low.endswith("ed"):
            candidates += [low[:-2], low[:-1]]
            if len(low) > 4 and low[-3] == low[-4]:
                candidates.append(low[:-3])
        if low.endswith("ing"):
            candidates += [low[:-3], low[:-3] + "e"]
            if len(low) > 5 and low[-4] == low[-5]:
                candidates.append(low[:-4])
        for c in candidates:
            if c and self._known(c, "v"):
                return c
        return candidates[0] if candidates else low
