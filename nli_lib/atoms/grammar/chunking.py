"""Chunking: noun phrases, verb groups with their complements, and clauses, from repaired POS tags.

A POS-tag grammar, not a parser. Prepositional phrases after an object attach to the verb except "of"/"for"
(which attach to the noun); a past participle right after a noun modifies that noun, a present participle the
subject. `Chunker.clause` returns (subject NP, predicate VP, kind) for a token list.

>>> from nli_lib.atoms.grammar.tagging import Tok
>>> from nli_lib.atoms.grammar.lexicon import Lexicon
>>> from nli_lib.atoms.grammar.morphology import Morph
>>> toks = [Tok(w, t) for w, t in [("A", "DT"), ("man", "NN"), ("stands", "VBZ"), ("on", "IN"), ("a", "DT"),
...                                  ("dock", "NN")]]
>>> subj, vp, kind = Chunker(Lexicon(None, Morph(None))).clause(toks)
>>> subj.head_text, vp.verb, [(p, np_.head_text) for p, np_ in vp.pps], kind
('man', 'stands', [('on', 'dock')], 'clause')
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...ruletable import RuleTable
from .lexicon import (
    ADJ_NOUN_IDIOMS,
    ASPECT_ADVERBS,
    BE,
    CATENATIVE,
    CATENATIVE_ADJ,
    DO,
    GROUP_NOUNS,
    HAVE,
    IRREGULAR_NOUNS,
    LIGHT_VERBS,
    LINKING_VERBS,
    NEG,
    NEGATIVE_SUBJECTS,
    NON_PREDICATIVE,
    NONFACTIVE,
    NOUN_ATTACHING_PREPS,
    NUMBER_WORDS,
    OBJECT_CONTROL,
    PARTITIVES,
    POSTNOMINAL_WORDS,
    POSTURE,
    QUANTIFIED,
    QUANTITY_NOUNS,
    RELATIVES,
    SPATIAL_PARTICLES,
    SUBJECT_PRONOUNS,
    SUBORDINATORS,
    TIME_WORDS,
)
from .tagging import Tok


@dataclass
class NP:
    """A noun phrase: determiner, number, adjectives, head (possibly a compound), post-modifiers."""

    det: str = ""
    num: str = ""
    adjs: list = field(default_factory=list)
    head: list = field(default_factory=list)  # noun words (compound), last is the head noun
    pron: str = ""  # when the NP is a pronoun
    conj: list = field(default_factory=list)  # coordinated NPs (self is the first)
    mods: list = field(default_factory=list)  # post-modifiers: ("pp", prep, NP) | ("adj", word) | ("vp", VP)
    of_np: "NP | None" = None  # "a group of males": the NP after a group noun
    possessor: "NP | None" = None  # "the men 's bikes": the NP before the possessive 's
    proper: bool = False  # a bare proper name ("Lilly"): referred to by name, no existence atom
    ref: str = ""  # referring expression assigned during generation

    @property
    def head_text(self) -> str:
        if self.conj:
            return " and ".join(c.head_text for c in self.conj)
        return " ".join(self.head) if self.head else self.pron

    @property
    def plural(self) -> bool:
        if self.conj:
            return True
        if self.pron:
            return self.pron.lower() in {"they", "them", "we", "us", "these", "those"} | set(NUMBER_WORDS.values())
        if self.num and self.num.lower() not in {"one", "1", "a"}:
            return True
        last = self.head[-1].lower() if self.head else ""
        if last in IRREGULAR_NOUNS or last in {"people", "police", "cattle"}:
            return True
        return self.plural_tag  # also for a head-less holder NP that only carries a referring expression

    plural_tag: bool = False


@dataclass
class VP:
    """A verb group with its complements; `subject` is filled in by the caller."""

    aux: list = field(default_factory=list)  # auxiliaries and catenative material before the main verb
    verb: str = ""  # main verb word as written
    verb_tag: str = ""
    particle: str = ""
    negated: bool = False
    copula: bool = False  # a bare "is/are" with a non-verbal complement
    objects: list = field(default_factory=list)  # NPs
    pred_nps: list = field(default_factory=list)  # predicate nominals of a copula
    adjs: list = field(default_factory=list)  # predicate adjectives (or adjectival phrases) of a copula
    pps: list = field(default_factory=list)  # (prep, NP)
    advs: list = field(default_factory=list)  # adverbs / adverbial words
    purposes: list = field(default_factory=list)  # VP of "to <verb> ..."
    extra: list = field(default_factory=list)  # coordinated / participial VPs sharing the subject
    clauses: list = field(default_factory=list)  # subordinate clauses (token lists)
    raw: list = field(default_factory=list)  # all tokens of the predicate, for negated atoms
    last_np: "NP | None" = None  # the object / PP noun phrase that ends at `last_np_end`
    last_np_end: int = -1  # token index right after last_np (a participle there modifies it)

    def group(self) -> str:
        words = [*self.aux, self.verb] + ([self.particle] if self.particle else [])
        return " ".join(w for w in words if w)


# How a predicate's complements are read, token by token (`Chunker._complements`): the first rule that takes the
# token answers the index after what it consumed, or `_STOP`.
COMPLEMENTS = RuleTable("complement")
_STOP = object()


class Chunker:
    """Noun phrases, verb groups and clauses over tagged tokens (`lexicon` answers WordNet questions).

    `subject_region` is True while chunking a subject, where post-modifiers (PPs, participles) attach to the
    noun; inside a predicate they attach to the verb. It is state: save and restore it around nested calls.
    """

    subject_region = True

    def __init__(self, lexicon):
        self.lex = lexicon

    @property
    def morph(self):
        return self.lex.morph

    # -- noun phrases ---------------------------------------------------------------------------------------
    def _np(self, toks: list[Tok], i: int) -> tuple[NP | None, int]:
        """One base NP starting at i (no coordination, no post-modifiers)."""
        short = self._np_shortcut(toks, i)
        if short is not None:
            return short
        np_ = NP()
        j = self._np_determiner(toks, i, np_)
        pre, j = self._np_premodifiers(toks, j)
        # the head is the trailing run of nouns; anything before it is an adjective/modifier
        k = len(pre)
        while k > 0 and pre[k - 1].tag.startswith("NN"):
            k -= 1
        if k == len(pre):  # no noun: not an NP (bare adjectives)
            return self._headless_np(np_, pre, i, j)
        self._np_head(np_, pre, k)
        return self._possessed(toks, j, np_)

    def _np_shortcut(self, toks: list[Tok], i: int) -> tuple[NP, int] | None:
        """"some of the people" (the inner NP), a pronoun, an indefinite pronoun: (NP, the index after it)."""
        n = len(toks)
        if i + 2 < n and toks[i].low in PARTITIVES and toks[i + 1].low == "of":  # "some of the people"
            inner, k = self._np(toks, i + 2)
            if inner is not None:
                inner.plural_tag = inner.plural_tag or bool(inner.head) and inner.head[-1].lower() in IRREGULAR_NOUNS
                return inner, k
        if i < n and toks[i].tag in {"PRP", "EX"} and toks[i].low != "there":
            return NP(pron=toks[i].word), i + 1
        if i < n and toks[i].low in {"someone", "somebody", "everyone", "everybody", "something", "anyone", "nobody"}:
            return NP(head=[toks[i].low]), i + 1
        return None

    def _np_determiner(self, toks: list[Tok], j: int, np_: NP) -> int:
        """A determiner (or possessive) and a number at `j` into `np_`; the index after them."""
        n = len(toks)
        if j < n and (toks[j].tag in {"DT", "PRP$", "WP$"} or toks[j].low in {"some", "several", "many", "few"}):
            np_.det = toks[j].low if toks[j].tag != "PRP$" else "poss:" + toks[j].low
            j += 1
            if np_.det in {"a", "an"} and j < n and toks[j].low == "few":
                np_.det = "a few"  # "a few dogs": a plural determiner, not the adjective "few"
                j += 1
        if j < n and toks[j].tag == "CD":
            np_.num = toks[j].word.lower()
            j += 1
        return j

    def _np_premodifiers(self, toks: list[Tok], j: int) -> tuple[list[Tok], int]:
        """The adjectives, participles and nouns of a noun phrase from `j`, and the index after them."""
        n = len(toks)
        pre: list[Tok] = []
        while j < n:
            t = toks[j]
            if t.tag in {"JJ", "JJR", "JJS", "NN", "NNS", "NNP", "NNPS", "VBN", "VBG", "CD", "HYPH"} or (
                    t.word == "," and pre and j + 1 < n and toks[j + 1].tag in {"JJ", "VBN"}) or (
                    t.low == "and" and pre and pre[-1].tag == "JJ" and j + 1 < n and toks[j + 1].tag == "JJ"):
                if t.tag in {"JJ", "JJR", "JJS"} and any(p.tag.startswith("NN") for p in pre) and (
                        (j + 1 < n and toks[j + 1].tag == "TO") or
                        ((j + 1 == n or toks[j + 1].tag == "IN" or toks[j + 1].word == ",")
                         and not self.lex.is_pos(t.low, "n"))):
                    break  # "a truck ready to move": a post-nominal adjective (but "a tank top": a mis-tagged noun)
                if t.tag in {"VBN", "VBG"}:  # participle as prenominal adjective only if a noun follows
                    if any(p.tag.startswith("NN") for p in pre):
                        break  # "teams playing soccer": a reduced relative, not a prenominal participle
                    k = j + 1
                    while k < n and toks[k].tag in {"JJ", "VBN", "VBG"}:
                        k += 1
                    if not (k < n and toks[k].tag.startswith("NN")):
                        break
                pre.append(t)
                j += 1
                continue
            break
        return pre, j

    @staticmethod
    def _headless_np(np_: NP, pre: list[Tok], i: int, j: int) -> tuple[NP | None, int]:
        """A noun phrase without a noun: "the red", "two young" (the last word heads it), "one" or "this" (a
        pronoun); anything else is no noun phrase (None, i)."""
        if np_.det or np_.num:
            if pre:  # "the red", "two young" - take the last word as the head
                np_.adjs = [t.word for t in pre[:-1]
                            if t.tag not in {",", "CC"} and t.low != "and" and t.word != ","]
                np_.head = [pre[-1].word]
                return np_, j
            if np_.num:  # "one is jumping": a bare number is a pronoun-like subject
                if np_.det:
                    np_.head = [np_.num]
                else:
                    np_.pron = np_.num
                np_.num = ""
                return np_, j
            if np_.det in {"this", "that", "these", "those", "some", "all", "both", "each", "another"}:
                np_.pron = np_.det
                np_.det = ""
                return np_, j
        return None, i

    def _np_head(self, np_: NP, pre: list[Tok], k: int) -> None:
        """Head (the nouns from `k`, or an idiom's or compound's word before them) and adjectives of `np_`."""
        while 0 < k < len(pre) and (pre[k - 1].low, pre[k].low) in ADJ_NOUN_IDIOMS:
            k -= 1  # "old friends", "tight quarters": the adjective belongs to the noun
        if 0 < k < len(pre) - 1 and pre[k - 1].tag.startswith("JJ") and \
                self.lex.is_pos(f"{pre[k - 1].low} {pre[k].low}", "n"):
            k -= 1  # "a heavy metal band", "high school students": the adjective is part of the first noun
        if 0 < k < len(pre) and pre[k - 1].tag == "VBG" and self.lex.category(
                " ".join(t.word for t in pre[k:])) not in {"person", "animal", "group"}:
            k -= 1  # "riding lessons", "a swimming pool": a compound noun (but "a sleeping baby" is sleeping)
        np_.adjs = [t.word for t in pre[:k] if t.word != "," and t.low != "and" and t.low not in NON_PREDICATIVE
                    and t.tag != "JJS"]  # "the biggest competition": a superlative is no attribute on its own
        np_.head = [t.word for t in pre[k:]]
        np_.plural_tag = pre[-1].tag in {"NNS", "NNPS"}
        np_.proper = not np_.det and not np_.num and all(t.tag in {"NNP", "NNPS"} for t in pre[k:])

    def _possessed(self, toks: list[Tok], j: int, np_: NP) -> tuple[NP, int]:
        """`np_` and the index after it, or, before a possessive 's, the NP it owns ("the men 's bikes")."""
        n = len(toks)
        if j + 1 < n and toks[j].tag == "POS":  # "the men 's bikes": the possessed NP, owned by np_
            k1 = j + 1
            while k1 < n - 1 and toks[k1].tag == "RB":  # "this person 's only job"
                k1 += 1
            owned, k2 = self._np(toks, k1)
            if owned is not None and owned.head and not owned.pron:
                owned.possessor, owned.det = np_, owned.det or "poss:'s"
                return owned, k2
        return np_, j

    def _np_coord(self, toks, i, allow_mods=True):
        first, j = self._np(toks, i)
        if first is None:
            return None, i
        j = self._np_mods(toks, j, first) if allow_mods else j
        items = [first]
        while j < len(toks) - 1 and (toks[j].low in {"and", "or"} or
                                     (toks[j].word == "," and toks[j + 1].low in {"and"})):
            k = j + 1 if toks[j].word != "," else j + 2
            if k < len(toks) and toks[k].tag.startswith("VB"):
                break
            nxt, k2 = self._np(toks, k)
            if nxt is None:
                break
            if first.det in {"a", "an", "the"} and not (nxt.det or nxt.num or nxt.pron or nxt.proper or nxt.plural):
                nxt.det = first.det  # "a shirt and helmet": the determiner is shared
            k2 = self._np_mods(toks, k2, nxt) if allow_mods else k2
            items.append(nxt)
            j = k2
        if len(items) > 1:
            return NP(conj=items), j
        return first, j

    def _np_mods(self, toks, j, np_: NP, participles: bool = True) -> int:
        """Post-modifiers of np_: 'of' groups, PPs, participles, relatives, post-nominal adjectives.

        `participles=False` inside a PP object: a participle after "a man in a red shirt" modifies the man.
        """
        n = len(toks)
        while j < n:
            t = toks[j]
            if t.low == "of" and j + 1 < n:
                inner, k = self._np(toks, j + 1)
                if inner is not None:
                    if np_.head and np_.head[-1].lower() in GROUP_NOUNS | QUANTITY_NOUNS:
                        np_.of_np = inner
                    else:
                        np_.mods.append(("pp", "of", inner))
                    j = self._np_mods(toks, k, inner) if inner.head and inner.head[-1].lower() not in TIME_WORDS else k
                    continue
                break
            if t.tag == "IN" and t.low not in SUBORDINATORS | {"that", "than"} and j + 1 < n:
                inner, k = self._np_coord(toks, j + 1, allow_mods=False)
                if inner is not None and self.subject_region:
                    np_.mods.append(("pp", t.low, inner))
                    j = self._np_mods(toks, k, inner, participles=False)
                    continue
                break
            if t.tag in {"VBG", "VBN"} and self.subject_region and participles:
                vp, k = self._vp(toks, j, participle=True)
                if vp is not None:
                    np_.mods.append(("vp", vp))
                    j = k
                    continue
                break
            if t.low in RELATIVES and t.tag in {"WDT", "WP", "IN", "DT"} and j + 1 < n:
                k = j + 1
                if toks[k].tag.startswith("VB") or toks[k].tag == "MD" or toks[k].low in BE | HAVE | DO:
                    vp, k2 = self._vp(toks, k)
                    if vp is not None:
                        np_.mods.append(("vp", vp))
                        j = k2
                        continue
                break
            if t.tag in {"JJ", "RB"} and t.low in POSTNOMINAL_WORDS and self.subject_region:
                np_.mods.append(("adj", t.low))
                j += 1
                continue
            break
        return j

    # -- verb phrases ---------------------------------------------------------------------------------------
    def _vp(self, toks, i, participle: bool = False):
        """Verb group at i and its complements. `participle`: a VBG/VBN modifier without auxiliaries."""
        vp = VP()
        start = i
        j = self._verb_group(toks, i, vp, participle)
        if not vp.verb:
            if vp.aux and vp.aux[-1] in BE:  # "is" followed by a non-verbal complement
                vp.verb, vp.copula = vp.aux.pop(), True
            elif vp.aux and vp.aux[-1] in HAVE:
                vp.verb = vp.aux.pop()
            else:
                return None, i
        j = self._catenatives(toks, j, vp)
        j = self._verb_extras(toks, j, vp)
        j = self._complements(toks, j, vp, participle)
        vp.raw = toks[start:j]
        return vp, j

    def _verb_group(self, toks, j: int, vp: VP, participle: bool) -> int:
        """Auxiliaries, negation, aspect adverbs and the main verb from `j` into `vp`; the index after them."""
        n = len(toks)
        while j < n:
            t = toks[j]
            if t.tag == "MD" or t.low in DO and j + 1 < n and (toks[j + 1].low in NEG or toks[j + 1].tag == "VB"):
                vp.aux.append(t.low)
            elif t.low in NEG and (vp.aux or vp.verb):
                vp.negated = True
                vp.aux.append(t.low if t.low != "n't" else "not")
            elif t.low in BE | HAVE and (j + 1 < n and (toks[j + 1].tag in {"VBG", "VBN", "VBD", "RB"} or
                                                        toks[j + 1].low in BE | NEG | {"about", "going"})):
                vp.aux.append(t.low)
                if toks[j + 1].tag == "RB" and toks[j + 1].low not in NEG | ASPECT_ADVERBS and not (
                        j + 2 < n and toks[j + 2].tag in {"VBG", "VBN", "JJ", "JJR", "JJS"}):
                    # "is outside": a copula with an adverbial complement ("is currently skipping": an aspect)
                    vp.verb, vp.verb_tag, vp.copula = vp.aux.pop(), t.tag, True
                    j += 1
                    break
            elif t.tag == "RB" and (t.low in ASPECT_ADVERBS and (vp.aux or participle) or (
                    j + 1 < n and toks[j + 1].tag in {"VBZ", "VBP", "VBD", "VBN"} and (
                        t.low.endswith("ly") or t.low in ASPECT_ADVERBS))):
                vp.aux.append(t.low)  # "is still running"; "just purchased", "slowly walks"
            elif t.tag.startswith("VB"):
                vp.verb, vp.verb_tag = t.word, t.tag
                j += 1
                break
            else:
                break
            j += 1
        return j

    def _catenatives(self, toks, j: int, vp: VP) -> int:
        """A copula without a participle after it; catenatives ("is trying to finish", "are getting ready to run",
        "is about to take"): the last verb is the main verb, the rest auxiliaries. The index after them."""
        n = len(toks)
        lemma = self.morph.verb(vp.verb)
        if lemma == "be" and not (j < n and toks[j].tag in {"VBG", "VBN"}):
            vp.copula = True
        # catenatives: "is trying to finish", "are getting ready to run", "is about to take"
        while j + 1 < n:
            if toks[j].tag == "TO" and toks[j + 1].tag == "VB" and (
                    self.morph.verb(vp.verb) in CATENATIVE or vp.verb.lower() in CATENATIVE_ADJ):
                vp.aux += [vp.verb, "to"]
                vp.verb, vp.verb_tag = toks[j + 1].word, "VB"
                vp.copula = False
                j += 2
                continue
            if toks[j].low in CATENATIVE_ADJ and toks[j + 1].tag == "TO" and j + 2 < n and toks[j + 2].tag == "VB":
                vp.aux += [vp.verb, toks[j].low, "to"]
                vp.verb, vp.verb_tag = toks[j + 2].word, "VB"
                vp.copula = False
                j += 3
                continue
            break
        if (vp.copula and j < n and toks[j].low in CATENATIVE_ADJ and j + 2 < n and toks[j + 1].tag == "TO"
                and toks[j + 2].tag == "VB"):
            vp.aux += [vp.verb, toks[j].low, "to"]
            vp.verb, vp.verb_tag, vp.copula = toks[j + 2].word, "VB", False
            j += 3
        return j

    def _verb_extras(self, toks, j: int, vp: VP) -> int:
        """A particle, a linking verb's adjective, a get-passive, a gerund complement; the index after them."""
        n = len(toks)
        if j < n and toks[j].tag == "RP":
            vp.particle = toks[j].low
            j += 1
        if not vp.copula and self.morph.verb(vp.verb) in LINKING_VERBS and j < n and toks[j].tag == "JJ" and not (
                j + 1 < n and toks[j + 1].tag in {"NN", "NNS", "JJ"}):
            vp.particle = toks[j].word  # "get ready", "look happy": the adjective belongs to the verb
            j += 1
        if self.morph.verb(vp.verb) == "get" and j < n and toks[j].tag in {"VBN", "VBD"} and \
                self.morph.verb(toks[j].low) != toks[j].low:
            vp.aux.append(vp.verb)  # "may get thrown out": a get-passive
            vp.verb, vp.verb_tag = toks[j].word, "VBN"
            j += 1
            if j < n and toks[j].tag in {"RP"}:
                vp.particle = toks[j].low
                j += 1
        if (j < n and toks[j].tag == "VBG" and not vp.copula and not vp.particle and
                self.morph.verb(vp.verb) not in POSTURE and vp.verb.lower() not in BE | HAVE and
                not (j + 1 < n and toks[j + 1].tag in {"NN", "NNS"})):
            vp.aux.append(vp.verb)  # gerund complement: "is contemplating buying", "keeps walking"
            vp.verb, vp.verb_tag = toks[j].word, "VBG"
            j += 1
            if j < n and toks[j].tag == "RP":
                vp.particle = toks[j].low
                j += 1
        return j

    def _complements(self, toks, j, vp: VP, participle: bool) -> int:
        """Complements of `vp` from token `j`; the index where they end. Each token goes to the first rule of
        `COMPLEMENTS` that takes it (an `_STOP` answer ends the complements there):

        >>> print(COMPLEMENTS.table())
        participle_end        a finite verb ends a participle phrase ("A woman wearing a hat | walks her dog")
        punctuation           , ; : skipped (in a participle phrase they end it unless an -ing verb follows)
        predicate_adjectives  a copula's adjective phrase ("is completely nude", "is tall and thin")
        age                   a copula's number + noun + adjective ("is 100 years old")
        bare_relative         a subject pronoun after a complement: a relative clause without "that", skipped
        noun_phrase           an object or a copula's predicate noun (an adjective before no noun: an adverb)
        purpose               to + verb: a purpose (an object's action, "get her dog to go", left out)
        preposition           a preposition: by/for + -ing, a prepositional phrase, "at least", or skipped
        spatial_particle      down/up/... + a noun phrase after a complement: a prepositional phrase
        time_phrase           before/after/since/until/during + a noun phrase, no verb after it
        that_clause           "that" + a clause with its own subject ("mad that it is", "knows that the dog")
        nonfactive            if/unless/...: a clause that is not entailed, skipped to the next comma
        subordinate           a subordinator or wh-adverb: an -ing phrase sharing the subject, or a clause
        coordination          and/or/but/then: a clause with its own subject, a coordinated verb, or skipped
        object_participle     a past participle right after an object modifies it ("a ball thrown by a boy")
        participle_phrase     an -ing phrase (a past participle outside participle phrases) sharing the subject
        adverb                an adverb, particle or adjective: an adverbial word (a negation negates the verb)
        stray                 anything else is skipped
        """
        saved = self.subject_region
        self.subject_region = False
        try:
            while j < len(toks):
                k = COMPLEMENTS.first(self, toks, j, vp, participle)
                if k is _STOP:
                    break
                j = k
        finally:
            self.subject_region = saved
        return j

    @COMPLEMENTS.rule("participle_end",
                      'a finite verb ends a participle phrase ("A woman wearing a hat | walks her dog")')
    def _finite_after_participle(self, toks, j, vp: VP, participle: bool):
        return _STOP if participle and toks[j].tag in {"VBZ", "VBP", "MD"} else None

    @COMPLEMENTS.rule("punctuation", ", ; : skipped (in a participle phrase they end it unless an -ing verb follows)")
    def _punctuation(self, toks, j, vp: VP, participle: bool):
        if toks[j].word not in {",", ";", ":"}:
            return None
        if participle and not (j + 1 < len(toks) and toks[j + 1].tag in {"VBG"}):
            return _STOP
        return j + 1

    @COMPLEMENTS.rule("predicate_adjectives", 'a copula\'s adjective phrase ("is completely nude", "is tall and thin")')
    def _predicate_adjectives(self, toks, j, vp: VP, participle: bool):
        n, t = len(toks), toks[j]
        degree = t.tag == "RB" and j + 1 < n and toks[j + 1].tag in {"JJ", "JJR", "JJS"}  # "completely nude"
        if not (vp.copula and not vp.pred_nps and not vp.adjs and (t.tag in {"JJ", "JJR", "JJS", "VBN"} or degree)
                and not (j + 1 + degree < n and toks[j + 1 + degree].tag.startswith("NN"))):
            return None
        k = j
        phrase = []
        while k < n and (toks[k].tag in {"JJ", "JJR", "JJS", "VBN", "RB"} or (
                toks[k].low in {"and", ","} and k + 1 < n and toks[k + 1].tag in {"JJ", "VBN"})):
            phrase.append(toks[k])
            k += 1
        vp.adjs += [p.word for p in phrase if p.tag != "RB" and p.low not in {"and", ","}]
        return k

    @COMPLEMENTS.rule("age", 'a copula\'s number + noun + adjective ("is 100 years old")')
    def _age(self, toks, j, vp: VP, participle: bool):
        if vp.copula and toks[j].tag == "CD" and j + 2 < len(toks) and toks[j + 2].tag == "JJ":  # "100 years old"
            vp.adjs.append(" ".join(x.word for x in toks[j : j + 3]))
            return j + 3
        return None

    @COMPLEMENTS.rule("bare_relative",
                      'a subject pronoun after a complement: a relative clause without "that", skipped')
    def _bare_relative(self, toks, j, vp: VP, participle: bool):
        t = toks[j]
        if not (t.tag == "PRP" and t.low in SUBJECT_PRONOUNS and (vp.objects or vp.pps or vp.pred_nps)):
            return None
        while j < len(toks) and toks[j].word not in {",", ";"}:  # a relative clause without "that": skip it
            j += 1
        return j

    @COMPLEMENTS.rule("noun_phrase", "an object or a copula's predicate noun (an adjective before no noun: an adverb)")
    def _noun_phrase(self, toks, j, vp: VP, participle: bool):
        n, t = len(toks), toks[j]
        if not (t.tag in {"DT", "PRP$", "CD", "JJ", "NN", "NNS", "NNP", "NNPS", "PRP"} or t.low in {
                "someone", "something"} or (t.tag == "VBG" and j + 1 < n and toks[j + 1].tag in {"NN", "NNS"}
                                            and not (vp.objects or vp.pps or vp.copula)
                                            and self.morph.verb(vp.verb) in LIGHT_VERBS)):
            return None
        if t.tag == "JJ" and not vp.copula:
            k = j
            while k < n and toks[k].tag in {"JJ", "RB"}:
                k += 1
            if not (k < n and toks[k].tag.startswith("NN")):
                vp.advs.append(t.word)
                return j + 1
        np_, k = self._np_coord(toks, j, allow_mods=False)
        if np_ is None:
            return j + 1
        k = self._obj_mods(toks, k, np_)
        (vp.pred_nps if vp.copula else vp.objects).append(np_)
        vp.last_np, vp.last_np_end = np_, k
        return k

    @COMPLEMENTS.rule("purpose", 'to + verb: a purpose (an object\'s action, "get her dog to go", left out)')
    def _purpose(self, toks, j, vp: VP, participle: bool):
        if not (toks[j].tag == "TO" and j + 1 < len(toks) and toks[j + 1].tag == "VB"):
            return None
        sub, k = self._vp(toks, j + 1, participle=True)
        if sub is None:
            return None
        controlled = (vp.objects and self.morph.verb(vp.verb) in OBJECT_CONTROL) or (
            vp.pps and vp.pps[-1][0] == "for" and vp.last_np_end == j)
        if not controlled:  # the object's action ("get her dog to go") is left out, not misread
            vp.purposes.append(sub)
        return k

    @COMPLEMENTS.rule("preposition", 'a preposition: by/for + -ing, a prepositional phrase, "at least", or skipped')
    def _preposition(self, toks, j, vp: VP, participle: bool):
        t = toks[j]
        if not (t.tag in {"IN", "TO"} and t.low not in SUBORDINATORS | RELATIVES and j + 1 < len(toks)):
            return None
        if toks[j + 1].tag in {"VBG"}:  # "by running", "for cleaning"
            sub, k = self._vp(toks, j + 1, participle=True)
            if sub is not None:
                vp.pps.append((t.low, sub))
                return k
        k = self._attach_pp(vp, toks, j, t.low)
        if k is not None:
            return k
        if toks[j + 1].tag in {"RB", "JJ"}:
            vp.advs.append(f"{t.low} {toks[j + 1].word}")
            return j + 2
        return j + 1

    @COMPLEMENTS.rule("spatial_particle", "down/up/... + a noun phrase after a complement: a prepositional phrase")
    def _spatial_particle(self, toks, j, vp: VP, participle: bool):
        t = toks[j]
        if t.tag in {"RP", "RB"} and t.low in SPATIAL_PARTICLES and (vp.objects or vp.pps) and j + 1 < len(toks) and (
                toks[j + 1].tag in {"DT", "PRP$", "CD"}):
            return self._attach_pp(vp, toks, j, t.low)
        return None

    @COMPLEMENTS.rule("time_phrase", "before/after/since/until/during + a noun phrase, no verb after it")
    def _time_phrase(self, toks, j, vp: VP, participle: bool):
        t = toks[j]
        if t.low in {"before", "after", "since", "until", "during"} and not any(
                x.tag.startswith("VB") or x.tag == "MD" for x in toks[j + 1:]):
            np_, k = self._np_coord(toks, j + 1, allow_mods=False)
            if np_ is not None:
                vp.pps.append((t.low, np_))
                return k
        return None

    @COMPLEMENTS.rule("that_clause", '"that" + a clause with its own subject ("mad that it is", "knows that the dog")')
    def _that_clause(self, toks, j, vp: VP, participle: bool):
        if toks[j].low == "that" and j > 0 and not toks[j - 1].tag.startswith("NN") and \
                (end := self._clause_end(toks, j + 1)) is not None:  # "mad that it is", "knows that the dog"
            vp.clauses.append(toks[j + 1 : end])
            return end
        return None

    @COMPLEMENTS.rule("nonfactive", "if/unless/...: a clause that is not entailed, skipped to the next comma")
    def _nonfactive(self, toks, j, vp: VP, participle: bool):
        if not (toks[j].low in NONFACTIVE and j > 0):
            return None
        while j < len(toks) and toks[j].word not in {",", ";"}:
            j += 1  # "if this man fails to catch the ball": not entailed; skipped
        return j

    @COMPLEMENTS.rule("subordinate", "a subordinator or wh-adverb: an -ing phrase sharing the subject, or a clause")
    def _subordinate(self, toks, j, vp: VP, participle: bool):
        n, t = len(toks), toks[j]
        if not (t.low in SUBORDINATORS or t.tag == "WRB"):
            return None
        k = j + 1
        end = k
        while end < n and toks[end].low not in {",", ";"}:
            end += 1
        if k < n and toks[k].tag == "VBG":
            sub, k2 = self._vp(toks, k, participle=True)
            if sub is not None:
                vp.extra.append(sub)
                return k2
        vp.clauses.append(toks[k:end])
        return end

    @COMPLEMENTS.rule("coordination", "and/or/but/then: a clause with its own subject, a coordinated verb, or skipped")
    def _coordination(self, toks, j, vp: VP, participle: bool):
        if not (toks[j].low in {"and", "or", "but", "then"} and j + 1 < len(toks)):
            return None
        k = j + 1
        end = self._clause_end(toks, k)
        if end is not None:  # "... and one is jumping over a hurdle": a clause with its own subject
            vp.clauses.append(toks[k:end])
            return end
        if toks[k].tag.startswith("VB") or toks[k].tag == "MD" or toks[k].low in BE | HAVE | DO:
            sub, k2 = self._vp(toks, k, participle=toks[k].tag in {"VBG", "VBN"} and participle)
            if sub is not None:
                if not sub.aux and sub.verb_tag in {"VBG", "VBN"} and vp.aux:
                    sub.aux = [a for a in vp.aux if a in BE | HAVE | {"not"}]
                    sub.negated = vp.negated
                vp.extra.append(sub)
                return k2
        return j + 1

    @COMPLEMENTS.rule("object_participle",
                      'a past participle right after an object modifies it ("a ball thrown by a boy")')
    def _object_participle(self, toks, j, vp: VP, participle: bool):
        t = toks[j]
        if (t.tag == "VBN" or t.low == "being" and j + 1 < len(toks) and toks[j + 1].tag in {"VBN", "VBD"}) and \
                vp.last_np is not None and j == vp.last_np_end:
            sub, k = self._vp(toks, j, participle=True)
            if sub is not None:
                owner = vp.last_np.conj[-1] if vp.last_np.conj else vp.last_np
                owner.mods.append(("vp", sub))
                return k
        return None

    @COMPLEMENTS.rule("participle_phrase",
                      "an -ing phrase (a past participle outside participle phrases) sharing the subject")
    def _participle_phrase(self, toks, j, vp: VP, participle: bool):
        t = toks[j]
        if t.tag == "VBG" or (t.tag == "VBN" and not participle):
            sub, k = self._vp(toks, j, participle=True)
            if sub is not None:
                vp.extra.append(sub)
                return k
        return None

    @COMPLEMENTS.rule("adverb", "an adverb, particle or adjective: an adverbial word (a negation negates the verb)")
    def _adverb(self, toks, j, vp: VP, participle: bool):
        t = toks[j]
        if t.tag not in {"RB", "RP", "JJ", "JJR", "RBR"}:
            return None
        if t.low in NEG:
            vp.negated = True
        vp.advs.append(t.word)
        return j + 1

    @COMPLEMENTS.rule("stray", "anything else is skipped")
    def _stray(self, toks, j, vp: VP, participle: bool):
        return j + 1

    def _clause_end(self, toks, k: int) -> int | None:
        """End index of a clause with its own subject starting at k ('a woman reads'), else None."""
        n = len(toks)
        if k >= n or toks[k].tag.startswith("VB") or toks[k].tag in {"MD", "RB", "IN", "TO"}:
            return None
        saved = self.subject_region
        self.subject_region = False
        try:
            subj, j = self._np(toks, k)
        finally:
            self.subject_region = saved
        if subj is None or j >= n:
            return None
        t = toks[j]
        if not (t.tag in {"VBZ", "VBP", "VBD", "MD"} or t.low in BE | {"has", "have", "had"}):
            return None
        end = j
        while end < n and toks[end].word not in {",", ";"}:
            end += 1
        return end

    def _obj_mods(self, toks, k, np_: NP) -> int:
        """Modifiers of an object NP: 'of'/'for' PPs, relative clauses, participles right after the noun."""
        n = len(toks)
        while k < n:
            t = toks[k]
            if t.low in NOUN_ATTACHING_PREPS and k + 1 < n:
                if toks[k + 1].tag == "VB" or toks[k + 1].tag == "VBG" and t.low == "for":
                    break
                inner, k2 = self._np_coord(toks, k + 1, allow_mods=False)
                if inner is None:
                    break
                if t.low == "of" and np_.head and np_.head[-1].lower() in GROUP_NOUNS | QUANTITY_NOUNS | {
                        "pair", "couple"}:
                    np_.of_np = inner
                else:
                    np_.mods.append(("pp", t.low, inner))
                k = k2
                continue
            if t.low in RELATIVES and t.tag in {"WDT", "WP", "IN", "DT"} and k + 1 < n and (
                    toks[k + 1].tag.startswith("VB") or toks[k + 1].tag == "MD"):
                sub, k2 = self._vp(toks, k + 1)
                if sub is not None:
                    np_.mods.append(("vp", sub))
                    k = k2
                    continue
            break
        return k

    # -- clause ---------------------------------------------------------------------------------------------
    def clause(self, toks: list[Tok]):
        """(subject NP or None, VP or None, kind) for a token list."""
        if not toks:
            return None, None, "empty"
        toks = self.unfront(toks)
        if toks[0].tag == "EX" or (toks[0].low == "there" and len(toks) > 1 and toks[1].low in BE):
            j = 1
            while j < len(toks) and (toks[j].low in BE | NEG):
                if toks[j].low in NEG:
                    return None, None, "negative"  # "There is no volleyball": not a conjunction of atoms
                j += 1
            self.subject_region = True
            subj, k = self._np_coord(toks, j)
            if subj is None:
                return None, None, "fail"
            rest = toks[k:]
            vp = None
            if rest:
                vp, _ = self._vp([Tok("is" if not subj.plural else "are", "VBZ")] + rest, 0)
                if vp is not None and not (vp.pps or vp.advs or vp.adjs or vp.pred_nps or vp.extra or vp.objects
                                           or vp.purposes):
                    vp = None
            return subj, vp, "existential"
        if toks[0].low in NEGATIVE_SUBJECTS | QUANTIFIED:  # "Nobody ...", "Everyone ...": not a conjunction of atoms
            return None, None, "negative"
        self.subject_region = True
        subj, j = self._np_coord(toks, 0)
        if subj is None:
            return None, None, "fail"
        if j >= len(toks):
            return subj, None, "caption"
        if toks[j].tag == "VBD" and any(t.tag in {"VBZ", "VBP", "MD"} or t.low in BE for t in toks[j + 1:]):
            toks[j].tag = "VBN"  # "A man dressed in red plays guitar": participle, not the main verb
            subj, j = self._np_coord(toks, 0)
            if j >= len(toks):
                return subj, None, "caption"
        self.subject_region = False
        vp, k = self._vp(toks, j)
        if vp is None:
            return subj, None, "caption"
        return subj, vp, "clause"
    def unfront(self, toks: list[Tok]) -> list[Tok]:
        """A fronted prepositional phrase, adverb, participle or subordinate clause moved to the end of the
        sentence ("At a cafe, a man reads" -> "a man reads At a cafe"); other token lists unchanged."""
        n = len(toks)
        first = toks[0]
        fronted = (first.tag == "IN" and first.low not in {"that"}) or first.tag in {"RB", "VBG", "VBN"} or \
            first.low in SUBORDINATORS
        if not fronted or first.low in NONFACTIVE or (first.tag == "RB" and first.low == "there"):
            return toks
        comma = next((k for k, t in enumerate(toks) if t.word == ","), None)
        if comma is not None and 0 < comma < n - 2:
            if first.tag == "IN" and first.low not in SUBORDINATORS and any(
                    t.tag in {"VBZ", "VBP", "VBD", "MD"} for t in toks[:comma]):
                return toks
            return toks[comma + 1:] + toks[:comma]
        if first.tag == "IN" and first.low not in SUBORDINATORS:  # "In the park a boy is running"
            saved = self.subject_region
            np_, k = self._np_coord(toks, 1, allow_mods=False)
            self.subject_region = saved
            if np_ is not None and k < n and toks[k].tag in {"DT", "CD", "PRP$", "NNS", "NNP"} and any(
                    t.tag in {"VBZ", "VBP", "VBD", "MD"} for t in toks[k:]):
                return toks[k:] + toks[:k]
        return toks

    # -- prepositional phrases of a predicate --------------------------------------------------------------
    def _attach_pp(self, vp, toks, j: int, prep: str) -> int | None:
        """Attach (prep, NP starting at j+1, with its modifiers) to `vp`; the index after it, or None if no NP."""
        np_, k = self._np_coord(toks, j + 1, allow_mods=False)
        if np_ is None:
            return None
        k = self._obj_mods(toks, k, np_)
        vp.pps.append((prep, np_))
        vp.last_np, vp.last_np_end = np_, k
        return k
