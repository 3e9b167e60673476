"""Lexical and WordNet analysis of a phrase pair: SVM features, offline relation rules, §5.2 phenomena.

One `analyze(phrase1, phrase2)` call aligns the two phrases: shared and unshared content lemmas, WordNet
links between the unshared words (synonym, hyponym in either direction, antonym, co-hyponym = shared
hypernym within two levels), numbers, plural/singular pairs, prepositions and quantifiers. Everything
else derives from it:

* `dense_features` - directional numbers for the feature-based SVM (each "1 over 2" feature has its
  "2 over 1" mirror, so the classifier can tell FORW from BACK);
* `rule_relation` - a rule-based labeller that stands in for an LLM in the offline profile;
* `phenomena` - the §5.2 error-analysis categories (prepositions in one/both phrases, numerals,
  plural/singular, near-synonyms, added words, plus quantifiers).

Worked example with a hand-made WordNet (the real one is the Open English WordNet from the data mirror):

>>> wn = toy_wordnet()
>>> a = analyze("Two trains", "The train", wordnet=wn, stopwords={"the", "a"})
>>> a.plural_pairs, rule_relation(a)
((('trains', 'train'),), 'FORW')
>>> rule_relation(analyze("a black dog", "the German shepherd", wordnet=wn, stopwords={"the", "a"}))
'SIMI'
>>> rule_relation(analyze("a dog", "an animal", wordnet=wn, stopwords={"a", "an"}))
'FORW'

Trade-offs: the lemmatiser is a few suffix rules checked against WordNet (no morphological analyser is
available offline), and "plural" is read off the surface form, so a third-person verb ('runs') can pass
for a plural noun. WordNet lookups use the three most frequent senses of a word, which keeps rare senses
from linking everything to everything.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable

import numpy as np

from ..text import phrase_tokens

PREPOSITIONS = frozenset("""about above across after against along amid among around as at before behind below beneath
beside besides between beyond by despite down during except for from in inside into like near of off on onto out
outside over past per since than through throughout till to toward towards under underneath unlike until up upon
via with within without""".split())
QUANTIFIERS = frozenset("""all any both each every everyone everybody everything few many most much no none nobody
nothing several some someone somebody something""".split())
NEGATIONS = frozenset("no not never nobody nothing none n't without".split())
UNIVERSAL = frozenset("all every everyone everybody everything each".split())  # natural logic: entail the
EXISTENTIAL = frozenset("some someone somebody something".split())  # existential ('everyone' => 'someone')
CARDINALS = {w: float(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
CARDINALS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
                  "hundred": 100, "hundreds": 100, "thousand": 1000, "thousands": 1000, "million": 1e6, "millions": 1e6,
                  "dozen": 12, "dozens": 12, "billion": 1e9})
IRREGULAR_PLURALS = {"men": "man", "women": "woman", "children": "child", "people": "person", "feet": "foot",
                     "teeth": "tooth", "mice": "mouse", "geese": "goose", "police": "police", "sheep": "sheep",
                     "fish": "fish", "deer": "deer", "oxen": "ox", "dice": "die", "lives": "life", "wives": "wife",
                     "knives": "knife", "leaves": "leaf", "wolves": "wolf", "shelves": "shelf"}
WN_SENSES = 3  # senses per word used for WordNet links
COHYPONYM_DEPTH = 2  # near-synonyms: senses sharing a hypernym at most this many levels up
FEATURE_VERSION = 1  # bump when dense_features changes (part of model fingerprints)


def number_value(token: str) -> float | None:
    """Numeric value of a digit token or cardinal word, else None.

    >>> number_value("1,000"), number_value("twenty"), number_value("dog")
    (1000.0, 20.0, None)
    """
    if token in CARDINALS:
        return float(CARDINALS[token])
    try:
        return float(token.replace(",", ""))
    except ValueError:
        return None


# --------------------------------------------------------------------------------------------------------------
# WordNet helpers (cached per WordNet object)
# --------------------------------------------------------------------------------------------------------------

_DEFAULTS: dict = {}


def default_wordnet():
    """The Open English WordNet from the data layer (loaded once)."""
    if "wordnet" not in _DEFAULTS:
        from ..data.wordnet import load_wordnet

        _DEFAULTS["wordnet"] = load_wordnet()
    return _DEFAULTS["wordnet"]


def default_stopwords() -> frozenset[str]:
    """NLTK English stop words minus quantifiers and negations (they decide entailment direction)."""
    if "stopwords" not in _DEFAULTS:
        from ..data.nltk_data import load_stopwords

        _DEFAULTS["stopwords"] = frozenset(load_stopwords()) - QUANTIFIERS - NEGATIONS
    return _DEFAULTS["stopwords"]


class _WN:
    """Memoised lookups over one WordNet object."""

    _instances: dict[int, "_WN"] = {}

    def __init__(self, wn):
        self.wn = wn
        self.senses = lru_cache(maxsize=None)(self._senses)
        self.above = lru_cache(maxsize=None)(self._above)
        self.near = lru_cache(maxsize=None)(self._near)
        self.lemma = lru_cache(maxsize=None)(self._lemma)

    @classmethod
    def of(cls, wn) -> "_WN":
        if id(wn) not in cls._instances:
            cls._instances[id(wn)] = cls(wn)
        return cls._instances[id(wn)]

    def _senses(self, word: str) -> tuple[str, ...]:
        return tuple(self.wn.synsets(word)[:WN_SENSES])

    def _above(self, word: str) -> frozenset[str]:
        return frozenset(h for s in self.senses(word) for h in self.wn.hypernym_closure(s))

    def _near(self, word: str) -> frozenset[str]:
        """Own senses and hypernyms up to COHYPONYM_DEPTH levels."""
        return frozenset(self.senses(word)) | frozenset(
            h for s in self.senses(word) for h in self.wn.hypernym_closure(s, depth=COHYPONYM_DEPTH))

    def _lemma(self, word: str) -> tuple[str, bool]:
        """(lemma, looks plural). Irregular plurals first, then suffix rules checked against WordNet."""
        if word in IRREGULAR_PLURALS:
            return IRREGULAR_PLURALS[word], IRREGULAR_PLURALS[word] != word
        if number_value(word) is not None or len(word) <= 3:
            return word, False
        if self.senses(word) and not word.endswith("s"):
            return word, False
        rules = [("ies", "y", True), ("ves", "f", True), ("es", "", True), ("s", "", True), ("ing", "", False),
                 ("ing", "e", False), ("ied", "y", False), ("ed", "", False), ("ed", "e", False)]
        for suffix, repl, plural in rules:
            if word.endswith(suffix) and len(word) - len(suffix) >= 2:
                stem = word[: -len(suffix)] + repl
                if self.senses(stem):
                    return stem, plural
                if suffix == "ing" and len(stem) > 2 and stem[-1] == stem[-2] and self.senses(stem[:-1]):
                    return stem[:-1], False  # running -> run
        return word, False

    def synonyms(self, a: str, b: str) -> bool:
        return bool(set(self.senses(a)) & set(self.senses(b)))

    def hyponym_of(self, a: str, b: str) -> bool:
        """a is more specific than b (a sense of b lies above a sense of a)."""
        return bool(set(self.senses(b)) & self.above(a))

    def antonyms(self, a: str, b: str) -> bool:
        return b in {x.lower() for x in self.wn.antonyms(a)} or a in {x.lower() for x in self.wn.antonyms(b)}

    def cohyponyms(self, a: str, b: str) -> bool:
        return bool(self.near(a) & self.near(b))


# --------------------------------------------------------------------------------------------------------------
# Pair analysis
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairAnalysis:
    """Alignment of two phrases (lemmas are lower-case; pairs are (word of phrase 1, word of phrase 2))."""

    tokens1: tuple[str, ...]  # all tokens of phrase 1
    tokens2: tuple[str, ...]
    content1: frozenset  # content lemmas (stop words removed; quantifiers, negations and numbers kept)
    content2: frozenset
    shared: frozenset  # content lemmas in both
    only1: frozenset  # content lemmas only in phrase 1
    only2: frozenset
    synonyms: tuple = ()  # unshared words sharing a WordNet synset
    hyponyms12: tuple = ()  # word of 1 a hyponym of word of 2 (or universal vs existential quantifier): FORW
    hyponyms21: tuple = ()  # word of 2 is a hyponym of word of 1 (BACK evidence)
    antonyms: tuple = ()  # WordNet antonym links
    cohyponyms: tuple = ()  # near-synonyms: shared hypernym within COHYPONYM_DEPTH levels, no closer link
    numbers1: tuple = ()  # numeric values in phrase 1
    numbers2: tuple = ()
    plural_pairs: tuple = ()  # (w1, w2) with the same lemma, differing in number
    plural1: int = 0  # plural-looking content words in phrase 1
    plural2: int = 0
    preps1: tuple = ()  # prepositions in phrase 1, in order
    preps2: tuple = ()
    quant1: tuple = ()  # quantifiers in phrase 1
    quant2: tuple = ()
    related: bool = False  # any WordNet link or shared content at all
    wn_units: tuple = field(default=(), repr=False)  # multi-word WordNet entries found (e.g. 'german shepherd')


def _units(toks: list[str], w: _WN) -> list[str]:
    """Adjacent token pairs that are WordNet entries ('hold on', 'german shepherd')."""
    return [f"{a} {b}" for a, b in zip(toks, toks[1:]) if w.senses(f"{a} {b}")]


def analyze(phrase1: str, phrase2: str, wordnet=None, stopwords: Iterable[str] | None = None) -> PairAnalysis:
    """Align two phrases lexically and through WordNet (see the module docstring)."""
    w = _WN.of(wordnet if wordnet is not None else default_wordnet())
    stop = frozenset(stopwords) if stopwords is not None else default_stopwords()
    t1, t2 = phrase_tokens(phrase1), phrase_tokens(phrase2)
    lem1 = {tok: w.lemma(tok) for tok in t1 if tok not in stop}
    lem2 = {tok: w.lemma(tok) for tok in t2 if tok not in stop}
    c1, c2 = frozenset(x for x, _ in lem1.values()), frozenset(x for x, _ in lem2.values())
    shared, only1, only2 = c1 & c2, c1 - c2, c2 - c1
    plural_pairs = tuple(sorted((a, b) for a, (la, pa) in lem1.items() for b, (lb, pb) in lem2.items()
                                if la == lb and a != b and pa != pb))
    u1 = sorted(only1 | {u for u in _units(t1, w) if u not in {*_units(t2, w)}})
    u2 = sorted(only2 | {u for u in _units(t2, w) if u not in {*_units(t1, w)}})
    syn, h12, h21, ant, coh = [], [], [], [], []
    for a in u1:
        for b in u2:
            if number_value(a) is not None or number_value(b) is not None:
                continue
            if a in UNIVERSAL and b in EXISTENTIAL:
                h12.append((a, b))
            elif b in UNIVERSAL and a in EXISTENTIAL:
                h21.append((a, b))
            elif w.antonyms(a, b):
                ant.append((a, b))
            elif w.synonyms(a, b):
                syn.append((a, b))
            elif w.hyponym_of(a, b):
                h12.append((a, b))
            elif w.hyponym_of(b, a):
                h21.append((a, b))
            elif w.cohyponyms(a, b):
                coh.append((a, b))
    nums1 = tuple(v for t in t1 if (v := number_value(t)) is not None)
    nums2 = tuple(v for t in t2 if (v := number_value(t)) is not None)
    return PairAnalysis(
        tokens1=tuple(t1), tokens2=tuple(t2), content1=c1, content2=c2, shared=shared, only1=only1, only2=only2,
        synonyms=tuple(syn), hyponyms12=tuple(h12), hyponyms21=tuple(h21), antonyms=tuple(ant), cohyponyms=tuple(coh),
        numbers1=nums1, numbers2=nums2, plural_pairs=plural_pairs,
        plural1=sum(p for _, p in lem1.values()), plural2=sum(p for _, p in lem2.values()),
        preps1=tuple(t for t in t1 if t in PREPOSITIONS), preps2=tuple(t for t in t2 if t in PREPOSITIONS),
        quant1=tuple(t for t in t1 if t in QUANTIFIERS), quant2=tuple(t for t in t2 if t in QUANTIFIERS),
        related=bool(shared or syn or h12 or h21 or ant or coh),
        wn_units=tuple(u for u in u1 + u2 if " " in u),
    )


def _linked(pairs: Iterable[tuple[str, str]], side: int) -> set[str]:
    """Words covered by the links on one side (a multi-word unit covers each of its words)."""
    return {word for p in pairs for word in p[side].split()}


def rule_relation(a: PairAnalysis) -> str:
    """A PhrasIS label from hand-written rules over the alignment (symmetric: swapping phrases swaps FORW/BACK).

    1. an antonym link -> OPPO;
    2. same non-numeric content: differing numbers -> the larger count (or the only counted side) entails,
       else a plural side entails its singular, else EQUI;
    3. every unshared word linked (synonym/hyponym): all synonyms -> EQUI, hyponyms one way -> FORW/BACK;
    4. extra unlinked words on one side only (and no hyponym link against it) -> that side is more specific;
    5. any shared word or WordNet link -> SIMI; otherwise UNR. REL is never produced (no rule separates it
       from SIMI reliably).
    """
    if a.antonyms:
        return "OPPO"
    words1 = {x for x in a.only1 if number_value(x) is None}
    words2 = {x for x in a.only2 if number_value(x) is None}
    n1, n2 = set(a.numbers1), set(a.numbers2)
    if not words1 and not words2:
        if not a.content1 and not a.content2:
            return "EQUI" if set(a.tokens1) == set(a.tokens2) else "UNR"
        if n1 != n2:
            if n1 and n2:
                return "FORW" if max(n1) > max(n2) else "BACK"
            return "FORW" if n1 else "BACK"
        if a.plural1 != a.plural2:
            return "FORW" if a.plural1 > a.plural2 else "BACK"
        return "EQUI"
    links = a.synonyms + a.hyponyms12 + a.hyponyms21
    free1, free2 = words1 - _linked(links, 0), words2 - _linked(links, 1)
    if not free1 and not free2:
        if not a.hyponyms12 and not a.hyponyms21:
            return "EQUI"
        if not a.hyponyms21:
            return "FORW"
        if not a.hyponyms12:
            return "BACK"
    elif free1 and not free2 and not a.hyponyms21:
        return "FORW"
    elif free2 and not free1 and not a.hyponyms12:
        return "BACK"
    return "SIMI" if a.related else "UNR"


def dense_features(a: PairAnalysis) -> list[float]:
    """Numeric features for the SVM; mirrored pairs keep direction recoverable."""
    l1, l2 = len(a.tokens1), len(a.tokens2)
    c1, c2 = len(a.content1), len(a.content2)
    union = len(a.content1 | a.content2)
    tok_union = len(set(a.tokens1) | set(a.tokens2))
    n1, n2 = max(a.numbers1, default=0.0), max(a.numbers2, default=0.0)
    rule = rule_relation(a)
    return [
        l1, l2, l1 - l2, c1, c2, c1 - c2,
        len(set(a.tokens1) & set(a.tokens2)) / tok_union if tok_union else 0.0,
        len(a.shared) / union if union else 0.0,
        len(a.shared) / c1 if c1 else 0.0, len(a.shared) / c2 if c2 else 0.0,
        float(not a.only1 and not a.only2), len(a.only1), len(a.only2),
        len(a.synonyms), len(a.hyponyms12), len(a.hyponyms21), len(a.antonyms), len(a.cohyponyms),
        float(bool(a.numbers1)), float(bool(a.numbers2)), float(np.sign(n1 - n2)) if a.numbers1 and a.numbers2 else 0.0,
        a.plural1, a.plural2, a.plural1 - a.plural2, len(a.plural_pairs),
        len(a.preps1), len(a.preps2), float(bool(a.preps1) and bool(a.preps2) and a.preps1[0] != a.preps2[0]),
        len(a.quant1), len(a.quant2), float(a.related),
        *[float(rule == lab) for lab in ("EQUI", "FORW", "BACK", "SIMI", "OPPO", "UNR")],
    ]


DENSE_NAMES = ["len1", "len2", "len_diff", "content1", "content2", "content_diff", "jaccard_tokens", "jaccard_content",
               "shared_over_1", "shared_over_2", "same_content", "only1", "only2", "wn_synonyms", "wn_hyponym_1of2",
               "wn_hyponym_2of1", "wn_antonyms", "wn_cohyponyms", "num1", "num2", "num_sign", "plural1", "plural2",
               "plural_diff", "plural_pairs", "preps1", "preps2", "preps_differ", "quant1", "quant2", "related",
               "rule_EQUI", "rule_FORW", "rule_BACK", "rule_SIMI", "rule_OPPO", "rule_UNR"]


def phenomena(a: PairAnalysis) -> dict[str, object]:
    """§5.2 categories of a pair.

    preposition: 'both (same)', 'both (different)', 'one', 'none' - whether each phrase carries a preposition
    (and whether the first prepositions agree); numeral / plural_singular / near_synonym / added_words /
    quantifier: bool. plural_singular needs a word in both phrases with the same lemma in different number
    ('trains' / 'train'); near_synonym a WordNet synonym or co-hyponym link between unshared words
    ('rally' / 'march'); added_words means one phrase is the other plus extra content words (the paper's
    "adding an adjective to a context": 'Two girls' / 'Two blonde girls').

    >>> tags = phenomena(analyze("Two big trains", "in the train", wordnet=toy_wordnet(), stopwords={"the"}))
    >>> tags["preposition"], tags["numeral"], tags["plural_singular"], tags["added_words"]
    ('one', True, True, True)
    """
    if a.preps1 and a.preps2:
        prep = "both (same)" if a.preps1[0] == a.preps2[0] else "both (different)"
    else:
        prep = "one" if (a.preps1 or a.preps2) else "none"
    extra1 = {w for w in a.only1 if w not in PREPOSITIONS and number_value(w) is None}
    extra2 = {w for w in a.only2 if w not in PREPOSITIONS and number_value(w) is None}
    return {"preposition": prep, "numeral": bool(a.numbers1 or a.numbers2), "plural_singular": bool(a.plural_pairs),
            "near_synonym": bool(a.synonyms or a.cohyponyms),
            "added_words": bool(a.shared) and bool(extra1) != bool(extra2), "quantifier": bool(a.quant1 or a.quant2)}


def toy_wordnet():
    """A six-synset WordNet for examples and tests (dog < canine < animal; german shepherd < dog; train)."""
    from ..data.wordnet import WordNet

    synsets = {
        "animal-n": ["n", "a living organism", [], [], ["animal"]],
        "canine-n": ["n", "a dog-like mammal", [], ["animal-n"], ["canine"]],
        "dog-n": ["n", "a domestic canine", [], ["canine-n"], ["dog", "domestic dog"]],
        "shepherd-n": ["n", "a breed of dog", [], ["dog-n"], ["German shepherd"]],
        "cat-n": ["n", "a feline", [], ["animal-n"], ["cat"]],
        "train-n": ["n", "a railway vehicle", [], [], ["train"]],
        "black-a": ["a", "dark", [], [], ["black"]], "white-a": ["a", "light", [], [], ["white"]],
    }
    index = {"animal": ["animal-n"], "canine": ["canine-n"], "dog": ["dog-n"], "domestic dog": ["dog-n"],
             "german shepherd": ["shepherd-n"], "cat": ["cat-n"], "train": ["train-n"], "black": ["black-a"],
             "white": ["white-a"]}
    return WordNet(synsets, index, {"black": ["white"], "white": ["black"]})
