"""Tokens and part-of-speech tags: PTB-style tokenising, NLTK's perceptron tagger, and repairs of its frequent
errors on SNLI captions (checked against WordNet word classes).

>>> [t.word for t in tokenize("The boy can't stand in front of it.")]
['The', 'boy', 'can', "n't", 'stand', 'in front of', 'it']
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...ruletable import RuleTable
from .lexicon import CLOSED_PREPOSITIONS, COLORS, ING_NOUNS, MULTIWORD_ADVERBS, MULTIWORD_PREPS, SUBORDINATORS


@dataclass
class Tok:
    """One token and its Penn Treebank tag (repairs change the tag in place)."""

    word: str  # the word as written (a merged multi-word preposition keeps its spaces)
    tag: str  # Penn Treebank tag

    @property
    def low(self) -> str:
        return self.word.lower()


# words, with contractions split the PTB way ("don't" -> do n't)
_TOKEN = re.compile(r"[A-Za-z]+(?=n't\b)|n't|[A-Za-z0-9]+(?='(?:s|re|ll|ve|m|d)\b)|'(?:s|re|ll|ve|m|d)\b"
                    r"|[A-Za-z0-9]+(?:[-'][A-Za-z0-9]+)*|[^\sA-Za-z0-9]")  # clitics split: "it's" -> it 's
_CONTRACTED = {"ca": "can", "wo": "will", "sha": "shall"}  # "can't" -> ca n't -> can not
_DROP = {"``", "''", '"', "`", "'", "“", "”", "(", ")", "[", "]"}


def words_of(sentence: str) -> list[str]:
    """The sentence's words (quotes and brackets dropped, contractions split, final punctuation removed)."""
    words = [w for w in _TOKEN.findall(sentence.replace("’", "'")) if w not in _DROP]
    words = [_CONTRACTED.get(w.lower(), w) if i + 1 < len(words) and words[i + 1] == "n't" else w
             for i, w in enumerate(words)]
    while words and words[-1] in {".", "!", "?", ",", ";", ":"}:
        words.pop()
    return words


class _FixedTags:
    """A stand-in tagger for the doctest: a tag per word from a dict (NN when unknown)."""

    def __init__(self, tags: dict):
        self.tags = tags

    def tag(self, words):
        return [(w, self.tags.get(w.lower(), "NN")) for w in words]


def tokenize(sentence: str, tagger=None) -> list[Tok]:
    """Tokens of `sentence` with `tagger`'s tags (no repairs; default: a dict tagger, for examples)."""
    tagger = tagger or _FixedTags({"the": "DT", "does": "VBZ", "not": "RB", "stand": "VB", "in": "IN", "of": "IN"})
    return merge_preps([Tok(w, t) for w, t in tagger.tag(words_of(sentence))])


# Repairs of one token's tag (`Tagger._repair`), tried in order: the first that applies settles the token. A rule
# answers None when it does not apply.
WORD_REPAIRS = RuleTable("word repair")  # closed word lists
WORDNET_REPAIRS = RuleTable("WordNet repair")  # word classes checked in WordNet


def _retag(t: Tok, tag: str) -> bool:
    t.tag = tag
    return True


class Tagger:
    """Tokens with repaired perceptron tags; `lexicon` answers the WordNet questions of the repairs."""

    def __init__(self, tagger, lexicon):
        self.tagger, self.lex = tagger, lexicon

    @property
    def morph(self):
        return self.lex.morph

    def tag(self, sentence: str) -> list[Tok]:
        """Tokens of `sentence` with tags (sentence-initial common words lower-cased, multi-word preps merged)."""
        words = words_of(sentence)
        if not words:
            return []
        if words[0][:1].isupper() and not words[0].isupper() and self.lex.is_common(words[0].lower()):
            words[0] = words[0].lower()  # sentence-initial capital of a common word ("Friends wait ...")
        tags = self.tagger.tag(words)
        toks = merge_preps([Tok(w, t) for w, t in tags])
        self._repair(toks)
        return toks

    def _repair(self, toks: list[Tok]) -> None:
        """Fix frequent perceptron-tagger errors on SNLI captions, using WordNet to check word classes: each token
        gets the first repair of `WORD_REPAIRS` that applies (closed word lists), a sentence-initial "there" is
        existential, a word after a possessive 's a noun, then (with WordNet) the first of `WORDNET_REPAIRS`;
        then headline verbs (per clause) and compounds:

        >>> print(WORD_REPAIRS.table())
        negation            n't -> not (RB)
        closed_preposition  a closed-class preposition is IN ("running towards its owner", tagged NNS)
        possessive_her      her before a noun or adjective is PRP$ ("chatting with her friend", tagged PRP)
        can_noun            can after a determiner, adjective or noun is NN ("a garbage can", tagged MD)
        plural_people       people, men, women, children are NNS
        someone             someone, somebody are NN
        time_adverb         today, tonight, yesterday, tomorrow are RB
        place_adverb        outside, home, together, ... are RB (not before a noun phrase, not "his home")
        >>> print(WORDNET_REPAIRS.table())
        adjective_noun    an adjective WordNet knows only as a noun is one ("musician", "fire" (truck))
        ly_adverb         an -ly word WordNet knows as an adverb is RB ("briefly")
        colour_adjective  a colour before a noun is JJ ("an orange vest", "a brown dog")
        to_infinitive     a verb after "to" is VB ("to sing", "to work")
        ing_verb          an -ing word WordNet knows as a verb, not after a determiner, is VBG ("a boy swimming")
        """
        n = len(toks)
        for i, t in enumerate(toks):
            prev = toks[i - 1] if i else None
            nxt = toks[i + 1] if i + 1 < n else None
            low = t.low
            WORD_REPAIRS.first(self, t, low, prev, nxt, i)
            if i == 0 and low == "there":
                t.tag = "EX"
            if prev is not None and prev.tag == "POS" and t.tag in {"WP", "WDT", "VB", "VBP", "IN", "RB"} and \
                    self.lex.is_pos(self.morph.noun(low), "n"):
                t.tag = "NNS" if self.morph.noun(low) != low else "NN"  # "the man 's hat" (tagged WP)
            if self.lex.wn is not None:
                WORDNET_REPAIRS.first(self, t, low, prev, nxt, i)
        start = 0
        for end in [k for k, t in enumerate(toks) if t.low in SUBORDINATORS or t.word in {",", ";"}] + [n]:
            self._headline_verb(toks[start:end])  # per clause: "... while her child swims"
            start = end + 1
        self._plural_noun_verb(toks)
        self._compound_verb_tag(toks)
        return toks

    @WORD_REPAIRS.rule("negation", "n't -> not (RB)")
    def _negation(self, t: Tok, low: str, prev, nxt, i: int):
        if low != "n't":
            return None
        t.word, t.tag = "not", "RB"
        return True

    @WORD_REPAIRS.rule("closed_preposition",
                       'a closed-class preposition is IN ("running towards its owner", tagged NNS)')
    def _closed_preposition(self, t: Tok, low: str, prev, nxt, i: int):
        return _retag(t, "IN") if low in CLOSED_PREPOSITIONS else None

    @WORD_REPAIRS.rule("possessive_her",
                       'her before a noun or adjective is PRP$ ("chatting with her friend", tagged PRP)')
    def _possessive_her(self, t: Tok, low: str, prev, nxt, i: int):
        if low == "her" and nxt is not None and (nxt.tag in {"NN", "NNS", "JJ", "JJR", "JJS", "NNP"}):
            return _retag(t, "PRP$")
        return None

    @WORD_REPAIRS.rule("can_noun", 'can after a determiner, adjective or noun is NN ("a garbage can", tagged MD)')
    def _can_noun(self, t: Tok, low: str, prev, nxt, i: int):
        if low == "can" and prev and (prev.tag in {"DT", "JJ", "PRP$"} or (
                prev.tag in {"NN", "NNS"} and not (nxt is not None and nxt.tag in {"VB", "RB"}))):
            return _retag(t, "NN")
        return None

    @WORD_REPAIRS.rule("plural_people", "people, men, women, children are NNS")
    def _plural_people(self, t: Tok, low: str, prev, nxt, i: int):
        return _retag(t, "NNS") if low in {"people", "men", "women", "children"} else None

    @WORD_REPAIRS.rule("someone", "someone, somebody are NN")
    def _someone(self, t: Tok, low: str, prev, nxt, i: int):
        return _retag(t, "NN") if low in {"someone", "somebody"} else None

    @WORD_REPAIRS.rule("time_adverb", "today, tonight, yesterday, tomorrow are RB")
    def _time_adverb(self, t: Tok, low: str, prev, nxt, i: int):
        return _retag(t, "RB") if low in {"today", "tonight", "yesterday", "tomorrow"} else None

    @WORD_REPAIRS.rule("place_adverb", 'outside, home, together, ... are RB (not before a noun phrase, not "his home")')
    def _place_adverb(self, t: Tok, low: str, prev, nxt, i: int):
        if not (low in {"outside", "inside", "outdoors", "indoors", "together", "home", "alone", "there", "here",
                        "upstairs", "downstairs", "nearby", "away"} and t.tag != "EX"):
            return None
        if not (low in {"outside", "inside"} and nxt and nxt.tag in {"DT", "PRP$", "CD"}):
            if not (low == "home" and prev and prev.tag in {"DT", "PRP$", "JJ"}):
                t.tag = "RB"
        return True  # the word is settled, changed or not

    @WORDNET_REPAIRS.rule("adjective_noun",
                          'an adjective WordNet knows only as a noun is one ("musician", "fire" (truck))')
    def _adjective_noun(self, t: Tok, low: str, prev, nxt, i: int):
        if t.tag == "JJ" and low not in COLORS and not self.lex.is_pos(low, "a") and \
                self.lex.is_pos(self.morph.noun(low), "n"):
            return _retag(t, "NNS" if self.morph.noun(low) != low else "NN")
        return None

    @WORDNET_REPAIRS.rule("ly_adverb", 'an -ly word WordNet knows as an adverb is RB ("briefly")')
    def _ly_adverb(self, t: Tok, low: str, prev, nxt, i: int):
        return _retag(t, "RB") if t.tag in {"NN", "JJ"} and low.endswith("ly") and self.lex.is_pos(low, "r") else None

    @WORDNET_REPAIRS.rule("colour_adjective", 'a colour before a noun is JJ ("an orange vest", "a brown dog")')
    def _colour_adjective(self, t: Tok, low: str, prev, nxt, i: int):
        return _retag(t, "JJ") if t.tag == "NN" and low in COLORS and nxt is not None and nxt.tag.startswith("NN") \
            else None

    @WORDNET_REPAIRS.rule("to_infinitive", 'a verb after "to" is VB ("to sing", "to work")')
    def _to_infinitive(self, t: Tok, low: str, prev, nxt, i: int):
        if prev is not None and prev.tag == "TO" and t.tag in {"VBG", "VBP", "NN", "VBD", "JJ"} and \
                self.lex.is_pos(low, "v") and not (nxt is not None and nxt.tag == "POS"):
            return _retag(t, "VB")
        return None

    @WORDNET_REPAIRS.rule("ing_verb",
                          'an -ing word WordNet knows as a verb, not after a determiner, is VBG ("a boy swimming")')
    def _ing_verb(self, t: Tok, low: str, prev, nxt, i: int):
        if t.tag in {"NN", "JJ"} and low.endswith("ing") and len(low) > 5 and (prev is None or prev.tag not in {
                "DT", "JJ", "PRP$", "IN", "POS", "CD"}) and self.lex.is_pos(self.morph.verb(low), "v") and i > 0 \
                and not (prev.tag in {"NN", "NNS"} and low in ING_NOUNS):
            return _retag(t, "VBG")  # "outside reading and singing", "a boy swimming" (not "a work meeting")
        return None

    def _plural_noun_verb(self, toks: list[Tok]) -> None:
        """Headline verbs tagged as plural nouns, before any verb: "the man dances", "A youth skateboards by a
        mural" (not "... of")."""
        n = len(toks)
        for i in range(1, n):
            if any(t.tag.startswith("VB") or t.tag == "MD" for t in toks[:i]):
                break
            t = toks[i]
            if t.tag == "NNS" and toks[i - 1].tag in {"NN", "NNP"} and (i + 1 == n or toks[i + 1].tag in {
                    "IN", "DT", "RB", "RP", "TO", "PRP$", "PRP", "JJ", "CD"}) and \
                    self.lex.is_pos(self.morph.verb(t.low), "v"):
                if i + 1 < n and toks[i + 1].tag == "IN" and toks[i + 1].low == "of":
                    continue
                t.tag = "VBZ"
                break

    def _compound_verb_tag(self, toks: list[Tok]) -> None:
        """A verb tag between two nouns after the main verb: a compound ("onto his friends sand castle")."""
        n = len(toks)
        for i in range(1, n - 1):
            t = toks[i]
            if t.tag in {"VB", "VBP"} and toks[i - 1].tag in {"NN", "NNS"} and toks[i + 1].tag in {"NN", "NNS"} and \
                    any(x.tag in {"VBZ", "VBP", "VBD", "MD"} for x in toks[: i - 1]) and self.lex.is_pos(t.low, "n"):
                t.tag = "NN"

    def _headline_verb(self, toks: list[Tok]) -> None:
        """A sentence without a finite verb whose subject head is followed by an '-s' word that WordNet knows as
        a verb, then more words: that word is the verb ("A man skis in the wilderness", "A girl pours water")."""
        n = len(toks)
        if any(t.tag in {"VBZ", "VBP", "VBD", "MD"} for t in toks):
            return
        i = 1 if n and toks[0].low in SUBORDINATORS else 0
        while i < n and toks[i].tag in {"DT", "CD", "JJ", "PRP$"}:
            i += 1
        if i >= n or toks[i].tag not in {"NN", "NNP", "NNS"}:
            return
        if i + 1 < n and toks[i].tag == "NNS" and toks[i + 1].tag in {"NN", "VB"} and (
                i + 2 == n or toks[i + 2].tag in {"IN", "DT", "PRP$", "RB", "RP"}) and \
                self.morph.verb(toks[i + 1].low) == toks[i + 1].low and self.lex.is_pos(toks[i + 1].low, "v"):
            toks[i + 1].tag = "VBP"  # a plural subject: "Two boys jump.", "Three men pound on some drums"
            return
        while i + 1 < n and toks[i + 1].tag in {"NN", "NNP"} and not toks[i + 1].low.endswith("s"):
            i += 1  # compound subject ("A health worker ...")
        i = self._past_group_of(toks, i)
        if i is None:
            return
        k = i + 1
        if k < n and toks[k].tag in {"VBG", "VBN"}:  # "A woman wearing a hat walks her dog": after the participle
            self._verb_after_participle(toks, k)
            return
        if k >= n or toks[k].tag not in {"NN", "NNS"} or not toks[k].low.endswith("s") or k + 1 < n and \
                toks[k + 1].tag not in {"IN", "DT", "PRP$", "RB", "RP", "TO", "NN", "NNS", "JJ", "CD"}:
            return
        lemma = self.morph.verb(toks[k].low)
        if lemma != toks[k].low and self.lex.is_pos(lemma, "v"):
            toks[k].tag = "VBZ"

    @staticmethod
    def _past_group_of(toks: list[Tok], i: int) -> int | None:
        """The head after "<group noun at i> of ..." ("A group of climbers celebrates at ..."), `i` when no "of"
        follows, None when no noun heads the "of" phrase."""
        n = len(toks)
        if i + 2 < n and toks[i + 1].low == "of":
            i += 2
            while i < n and toks[i].tag in {"DT", "CD", "JJ", "PRP$"}:
                i += 1
            while i + 1 < n and toks[i].tag in {"NN", "NNS"} and toks[i + 1].tag in {"NN", "NNS"} and \
                    not toks[i + 1].low.endswith("s"):
                i += 1
            if i >= n or toks[i].tag not in {"NN", "NNS"}:
                return None
        return i

    def _verb_after_participle(self, toks: list[Tok], k: int) -> None:
        """After a participle phrase from `k`, the first -s noun before a determiner, particle or preposition that is
        not clothing, a person or an animal is the verb, if WordNet knows its lemma as one ("walks her dog")."""
        n = len(toks)
        for j in range(k + 2, n - 1):
            t = toks[j]
            if t.tag in {"NN", "NNS"} and t.low.endswith("s") and (toks[j + 1].tag in {"DT", "PRP$", "RP"} or
                                                                   toks[j + 1].low in CLOSED_PREPOSITIONS) \
                    and self.lex.category(t.low) not in {"clothing", "person", "animal"}:
                lemma = self.morph.verb(t.low)
                if lemma != t.low and self.lex.is_pos(lemma, "v"):
                    t.tag = "VBZ"
                return


_MULTIWORDS_BY_FIRST: dict[str, list[tuple[str, ...]]] = {}  # first word -> multi-word units, in list order
for _mw in MULTIWORD_PREPS + MULTIWORD_ADVERBS:
    _MULTIWORDS_BY_FIRST.setdefault(_mw[0], []).append(_mw)


def merge_preps(toks: list) -> list:
    """Merge MULTIWORD_PREPS into single IN tokens ('in front of' keeps its words), MULTIWORD_ADVERBS into RB.
    Only the units starting with a token's word are tried (the first of them that matches wins).

    >>> [(t.word, t.tag) for t in merge_preps([Tok("A", "DT"), Tok("dog", "NN"), Tok("runs", "VBZ"),
    ...     Tok("back", "RB"), Tok("and", "CC"), Tok("forth", "RB"), Tok("in", "IN"), Tok("front", "NN"),
    ...     Tok("of", "IN"), Tok("us", "PRP")])]
    [('A', 'DT'), ('dog', 'NN'), ('runs', 'VBZ'), ('back and forth', 'RB'), ('in front of', 'IN'), ('us', 'PRP')]
    """
    out, i = [], 0
    while i < len(toks):
        for mw in _MULTIWORDS_BY_FIRST.get(toks[i].low, ()):
            if tuple(t.low for t in toks[i : i + len(mw)]) == mw:
                tag = "RB" if mw in MULTIWORD_ADVERBS else "IN"  # "back and forth" is one adverb
                out.append(Tok(" ".join(t.word for t in toks[i : i + len(mw)]), tag))
                i += len(mw)
                break
        else:
            out.append(toks[i])
            i += 1
    return out
