"""Offline retrieval: which WordNet noun sense a query noun has in its sentence (word-sense choice).

WordNet lists every sense of a noun ("dog": the animal; "a dull unattractive unpleasant girl or woman"; ...).
Pooling senses puts false scene facts in the pool, so exactly one sense is chosen per query noun, or none.

The rule (`SenseChooser`), stated once:

1. Candidates are the noun's senses in WordNet order (most frequent first), without senses whose gloss
   carries a register label (slang, informal, figurative, offensive, ...): those are usages, not encyclopedic
   facts about the thing in the scene.
2. Each candidate k is written as "a kind of <direct hypernym>: <gloss>" with the noun itself masked
   (a gloss that repeats the noun, "shaped like the head of a horse", would otherwise match any context that
   mentions it); that text and the context, the query sentence the noun occurs in (the premise at level 1,
   the fused fact it came from at later levels), are embedded with all-MiniLM-L6-v2 (unit vectors).
3. score(k) = cosine(sense text k, context) - prior * k: a rarer sense must fit the context better by
   `prior` per rank step to beat a more frequent one.
4. The best-scoring sense is chosen when it beats the runner-up by at least `margin`; otherwise the noun is
   ambiguous in this context and contributes no page (counted, never guessed). A single candidate is chosen.
5. Confidence (`SenseChooser.vet`, also applied to senses the page source fixes another way): a chosen sense
   that is not the noun's first (most frequent) one must lead the best other sense by `rare_margin`; an
   abstract sense (under WordNet's 'abstract entity' and not under 'physical entity': acts, groups, events,
   attributes, communication) must lead by `abstract_margin` and is never taken as a noun's only sense.
   Otherwise the noun abstains with the reason 'sense_uncertain (...)'. Calibrated on the 679 hand-judged
   gold facts (all generators) whose deciding sense the current chooser reproduces: fused facts of abstract
   senses were judged correct 73.6 % of the time (121), of physical ones 92.5 % (558); a rarer sense chosen
   over the first 69 % (29); the margin itself predicts little once the sense's kind is known.

Measured on 30 hand-labelled ambiguous SNLI-style cases (dog, bank, bat, stage, glass, ...): the first
sense alone is right for 21; the rule chooses 23 of them and is right on 20 (87 %), skipping 7 as
ambiguous. The gold set in data/fixtures/factnli/ measures the resulting fused facts.

>>> class Toy:  # a two-sense WordNet and a bag-of-words encoder
...     def synsets(self, term, pos): return ["1-n", "2-n"]
...     def definition(self, s): return {"1-n": "a domestic animal that barks", "2-n": "an unattractive woman"}[s]
...     def lemmas(self, s): return ["dog"]
...     def hypernyms(self, s): return []
>>> chooser = SenseChooser(Toy(), BagOfWords(), prior=0.1, margin=0.0)
>>> [c.synset for c in chooser.choose_many([("dog", "The animal barks at a cat."),
...                                          ("dog", "An unattractive woman walks.")])]
['1-n', '2-n']
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..text import normalise
from .text import split_sentences

SENSE_RULE_VERSION = "sense-context-v4"  # part of WordNetPages.name (so of every cache key): bump when the rule changes
#: The confidence thresholds of the offline pages (`WordNetPages`), calibrated on the judged gold facts.
SENSE_THRESHOLDS = {"prior": 0.1, "margin": 0.04, "rare_margin": 0.15, "abstract_margin": 0.3}

#: Leading gloss labels that mark a usage rather than a thing ("(slang) a businessman dressed in a business suit").
REGISTER_LABELS = {"slang", "informal", "figurative", "colloquial", "offensive", "disparaging", "derogatory",
                   "vulgar", "obscene", "ethnic slur", "archaic", "obsolete", "dated", "humorous", "euphemism",
                   "jocular", "pejorative", "nonstandard", "baby talk", "childish", "rare"}
_LABEL = re.compile(r"^\s*\(([^()]*)\)")


def leading_label(definition: str) -> str:
    """The parenthesised label a gloss starts with, lower-cased ('' if none).

    >>> leading_label("(baseball) a turn trying to get a hit"), leading_label("a club used for hitting a ball")
    ('baseball', '')
    """
    m = _LABEL.match(str(definition))
    return m.group(1).strip().lower() if m else ""


def register_label(definition: str) -> str:
    """The register label of a gloss (slang, informal, figurative, ...), '' when it has none.

    >>> register_label("(slang) a businessman dressed in a business suit"), register_label("(law) the seat")
    ('slang', '')
    """
    label = leading_label(definition)
    return label if any(label.startswith(r) for r in REGISTER_LABELS) else ""


def context_sentence(query: str, term: str) -> str:
    """The first sentence of `query` that contains `term` (plural or not); the whole query when none does.

    At level 1 that is the premise; a noun that entered through a fact fused at an earlier level is read in
    that fact's sentence. (Adding the premise to such a sentence was tried and chose worse senses: gold
    precision 80.8 % against 86.7 % on same-seed samples.)

    >>> context_sentence("A dog runs. Additionally, a genus is a taxonomic group.", "genus")
    'Additionally, a genus is a taxonomic group.'
    >>> context_sentence("A dog runs. Additionally, a genus is a taxonomic group.", "dog")
    'A dog runs.'
    """
    key = normalise(term)
    for sentence in split_sentences(query):
        text = f" {normalise(sentence)} "
        if f" {key} " in text or f" {key}s " in text or f" {key}es " in text:
            return sentence
    return str(query)


def _mask(text: str, term: str) -> str:
    for word in sorted({term, *term.split()}, key=len, reverse=True):
        text = re.sub(r"\b" + re.escape(word) + r"(?:s|es)?\b", " ", text, flags=re.I)
    return re.sub(r"\s+", " ", text).strip()


@dataclass(frozen=True)
class SenseChoice:
    """The sense chosen for one query noun in one context, with the scores behind it."""

    term: str  # the query noun (a WordNet lemma)
    context: str  # the query sentence the noun occurs in (the premise, or a fused fact)
    synset: str | None  # the chosen synset id; None when no sense is chosen
    scores: tuple  # ((synset id, score), ...) for every candidate, in WordNet order
    reason: str  # 'only sense' | 'best in context' | 'ambiguous (margin ...)' | 'sense_uncertain (...)' | ...


class BagOfWords:
    """A deterministic stand-in encoder (hashed bag of words, unit vectors) for examples and tests."""

    fingerprint = "bag-of-words-64"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in normalise(t).split():
                out[i, sum(map(ord, w)) % 64] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


class SenseChooser:
    """Chooses one WordNet noun sense per (term, context) by embedding similarity (see the module docstring)."""

    def __init__(self, wordnet, encoder, prior: float = 0.1, margin: float = 0.04, rare_margin: float | None = None,
                 abstract_margin: float | None = None):
        self.wn, self.encoder, self.prior, self.margin = wordnet, encoder, float(prior), float(margin)
        self.rare_margin = None if rare_margin is None else float(rare_margin)  # None: no check
        self.abstract_margin = None if abstract_margin is None else float(abstract_margin)  # None: no check
        self.name = (f"{SENSE_RULE_VERSION}(prior={self.prior},margin={self.margin},rare={self.rare_margin},"
                     f"abstract={self.abstract_margin},enc={getattr(encoder, 'fingerprint', type(encoder).__name__)})")
        self._memo: dict[tuple[str, str], SenseChoice] = {}
        self._roots: tuple[set, set] | None = None

    def is_abstract(self, synset: str) -> bool:
        """Is the sense abstract: under WordNet's 'abstract entity' and not under 'physical entity'? (A WordNet
        without 'abstract entity' has no abstract sense.)"""
        if self._roots is None:
            self._roots = (set(self.wn.synsets("abstract entity", "n")), set(self.wn.synsets("physical entity", "n")))
        abstract, physical = self._roots
        if not abstract:
            return False
        above = self.wn.hypernym_closure(synset) | {synset}
        return bool(above & abstract) and not above & physical

    def vet(self, choice: SenseChoice) -> SenseChoice:
        """`choice`, or the same noun with no sense and reason 'sense_uncertain (...)' when the chosen sense is not
        confident (rule 5 of the module docstring): a rarer sense without a lead of `rare_margin` over the best
        other sense, an abstract sense without a lead of `abstract_margin` (or as the noun's only sense).

        >>> class Toy:  # 'ring' the jewellery (physical, first) or a group of people (abstract, second)
        ...     table = {"abstract entity": ["abs-n"], "ring": ["jewel-n", "gang-n"]}
        ...     def synsets(self, term, pos): return self.table.get(term, [])
        ...     def hypernym_closure(self, s): return {"gang-n": {"abs-n"}}.get(s, set())
        ...     def lemmas(self, s): return ["ring"]
        ...     def definition(self, s): return ""
        >>> chooser = SenseChooser(Toy(), BagOfWords(), rare_margin=0.15, abstract_margin=0.3)
        >>> def choice(sid, scores): return SenseChoice("ring", "A ring.", sid, scores, "best in context")
        >>> chooser.vet(choice("jewel-n", (("jewel-n", 0.5), ("gang-n", 0.45)))).reason
        'best in context'
        >>> chooser.vet(choice("gang-n", (("jewel-n", 0.3), ("gang-n", 0.5)))).reason
        'sense_uncertain (abstract sense, margin 0.200 < 0.3)'
        >>> chooser.vet(choice("gang-n", (("jewel-n", 0.1), ("gang-n", 0.5)))).synset
        'gang-n'
        """
        sid = choice.synset
        if sid is None:
            return choice
        scores = dict(choice.scores)
        others = [v for k, v in scores.items() if k != sid]
        gap = scores[sid] - max(others) if sid in scores and others else float("inf")
        why = ""
        if self.abstract_margin is not None and self.is_abstract(sid):
            if gap == float("inf"):
                why = "abstract sense, its only sense"
            elif gap < self.abstract_margin:
                why = f"abstract sense, margin {gap:.3f} < {self.abstract_margin}"
        if not why and self.rare_margin is not None and gap < self.rare_margin \
                and sid != next(iter(self.candidates(choice.term)), None):
            why = f"not the first sense, margin {gap:.3f} < {self.rare_margin}"
        return SenseChoice(choice.term, choice.context, None, choice.scores, f"sense_uncertain ({why})") if why \
            else choice

    def candidates(self, term: str) -> list[str]:
        """Noun senses of `term` in WordNet order; a lower-case term skips proper-noun senses ('sun' vs 'Sun');
        register-labelled senses are left out."""
        ids = self.wn.synsets(term, "n")
        if term[:1].islower():
            exact = [i for i in ids if term in self.wn.lemmas(i) or term.replace(" ", "_") in self.wn.lemmas(i)]
            ids = exact or ids
        return [i for i in ids if not register_label(self.wn.definition(i))]

    def sense_text(self, synset: str, term: str) -> str:
        """'a kind of <hypernym>: <gloss>' with the term masked (what is compared with the context)."""
        above = [self.wn.lemmas(h)[0] for h in self.wn.hypernyms(synset) if self.wn.lemmas(h)]
        gloss = _mask(self.wn.definition(synset), term)
        return f"a kind of {above[0]}: {gloss}" if above else gloss

    def choose_many(self, items: Sequence[tuple[str, str]], vetted: bool = True) -> list[SenseChoice]:
        """One SenseChoice per (term, context); all embeddings in one encoder call. `vetted`: each passed
        through `vet` (False: the best sense in context, however unsure, e.g. to compare two readings)."""
        todo = [it for it in dict.fromkeys(items) if it not in self._memo]
        cands = {it: self.candidates(it[0]) for it in todo}
        texts = {(it, s): self.sense_text(s, it[0]) for it in todo if len(cands[it]) > 1 for s in cands[it]}
        contexts = [it[1] for it in todo if len(cands[it]) > 1]
        unique = list(dict.fromkeys([*contexts, *texts.values()]))
        vecs = dict(zip(unique, self.encoder.encode(unique))) if unique else {}
        for it in todo:
            ids = cands[it]
            if not ids:
                self._memo[it] = SenseChoice(*it, None, (), "no encyclopedic sense")
                continue
            if len(ids) == 1:
                self._memo[it] = SenseChoice(*it, ids[0], ((ids[0], 1.0),), "only sense")
                continue
            c = np.asarray(vecs[it[1]])
            scores = [float(np.asarray(vecs[texts[(it, s)]]) @ c) - self.prior * k for k, s in enumerate(ids)]
            order = sorted(range(len(ids)), key=lambda k: (-scores[k], k))
            gap = scores[order[0]] - scores[order[1]]
            table = tuple((s, round(v, 4)) for s, v in zip(ids, scores))
            if gap < self.margin:
                self._memo[it] = SenseChoice(*it, None, table, f"ambiguous (margin {gap:.3f} < {self.margin})")
            else:
                self._memo[it] = SenseChoice(*it, ids[order[0]], table, "best in context")
        return [self.vet(self._memo[it]) if vetted else self._memo[it] for it in items]
