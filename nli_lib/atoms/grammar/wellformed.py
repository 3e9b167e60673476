"""Is an atom a well-formed, self-contained sentence? A check of any generator's atoms (rules or an LLM).

Every atom gets a status and, unless it is `ok`, the reason:

* `unparsed`:  the generator returned the sentence whole (the rules could not analyse it): not an atom;
* `malformed`: the atom breaks a rule below: no finite verb, a copula without a complement, a preposition
  without its object, "a" before a plural noun, subject-verb disagreement, a pronoun as the answer of a
  pseudo-cleft, a repeated word; or, against the source sentence, a noun whose determiner or preposition the
  atom dropped ("The person jumps castle." from "... jumps onto his friends sand castle");
* `ok`: none of them fired. Passing the check is necessary, not sufficient: the atoms' precision is
  measured against the team's hand-judged gold set (`nli_lib.atoms.gold`).

The rules read POS tags of the atom from the same repaired perceptron tagger the decomposer uses.

>>> from nli_lib.atoms.grammar.tagging import Tok
>>> class Tags:  # a stand-in tagger: one tag per word from a dict
...     table = {"the": "DT", "rock": "NN", "is": "VBZ", "currently": "RB", "skipping": "VBG", "a": "DT",
...              "there": "EX", "dogs": "NNS", "person": "NN", "jumps": "VBZ", "castle": "NN", "onto": "IN",
...              "his": "PRP$", "friends": "NNS", "sand": "NN", "at": "IN"}
...     def tag(self, text):
...         words = text.rstrip(".").split()
...         return [Tok(w if i else w.lower(), self.table.get(w.lower(), "NN")) for i, w in enumerate(words)]
>>> check = AtomChecker(Tags())
>>> check("The rock is currently.").reason
'copula with a non-predicative adverb: currently'
>>> check("There are a dogs.").reason
"'a' before a plural noun: dogs"
>>> check("The person jumps castle.", "The person jumps onto his friends sand castle.").reason
'dropped the preposition before: castle'
>>> check("The rock is skipping.").status
'ok'
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...ruletable import RuleTable
from .lexicon import BE, COLORS, HAVE, MASS_NOUNS, NON_PREDICATIVE

CHECK_VERSION = "atom-check-v1"  # bump when the rules change (it is part of the generated rows' provenance)

STATUSES = ("ok", "malformed", "unparsed")
NONFINITE_BE_HAVE = {"be", "been", "being", "having"}
LIGHT_VERB_LEMMAS = {"take", "make", "hold", "wear", "carry", "get", "give", "put", "use", "bring", "buy", "grab",
                     "contain", "own", "receive", "show", "keep", "throw", "catch", "hit", "have"}  # need an object
LINKING_LEMMAS = {"get", "become", "look", "seem", "feel", "stay", "remain", "grow", "turn", "appear", "sound",
                  "smell", "taste", "go", "come", "keep", "sit", "stand", "lie", "lay", "play", "work", "walk", "run",
                  "ride", "arrive", "leave", "wait", "rest", "relax", "pose", "jump", "dance", "swim", "finish"}


def _lemma(word: str) -> str:
    """A rough verb lemma for the closed lists above ('gets' -> 'get', 'holding' -> 'hold', 'took' -> 'take')."""
    irregular = {"took": "take", "made": "make", "held": "hold", "wore": "wear", "got": "get", "gave": "give",
                 "brought": "bring", "bought": "buy", "kept": "keep", "threw": "throw", "caught": "catch",
                 "has": "have", "had": "have", "having": "have", "taken": "take", "given": "give", "worn": "wear",
                 "thrown": "throw", "gotten": "get", "sat": "sit", "stood": "stand", "ran": "run", "went": "go"}
    if word in irregular:
        return irregular[word]
    for suffix, repl in (("ing", ""), ("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", "e")):
        stem = word[: -len(suffix)] + repl if word.endswith(suffix) else None
        if stem and (stem in LIGHT_VERB_LEMMAS or stem in LINKING_LEMMAS):
            return stem
    if word.endswith("ing") and len(word) > 5 and word[-4] == word[-5]:
        return word[:-4]  # "getting" -> "get"
    return word
FINITE_TAGS = {"VBZ", "VBP", "VBD", "MD"}
NOUN_TAGS = {"NN", "NNS", "NNP", "NNPS"}
NP_INNER_TAGS = {"JJ", "JJR", "JJS", "NN", "NNS", "NNP", "NNPS", "CD", "POS", "HYPH"}
DETERMINER_WORDS = {"a", "an", "the", "this", "that", "these", "those", "his", "her", "their", "its", "my", "our",
                    "your", "some", "several", "many", "few", "no", "each", "every", "another", "any", "both", "all",
                    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
# adverbs that can stand alone after "is" ("The person is outside."); others ("currently", "just") cannot
PREDICATIVE_ADVERBS = {"outside", "inside", "outdoors", "indoors", "together", "home", "alone", "there", "here",
                       "upstairs", "downstairs", "nearby", "away", "abroad", "asleep", "awake", "alive", "barefoot",
                       "shirtless", "out", "in", "up", "down", "off", "on", "over", "back", "around", "ahead",
                       "behind", "underwater", "overseas", "ashore", "aboard", "apart", "online", "afloat", "adrift",
                       "ready", "late", "early", "busy", "fine", "well", "open", "closed"}
# words after a verb that may end an atom (particles of phrasal verbs: "sweeps up", "cools down")
PARTICLES = {"up", "down", "out", "off", "away", "over", "back", "around", "along", "about", "on", "in", "through",
             "by", "together", "apart", "aside", "forward", "ahead", "behind", "outside", "inside", "home"}
INDEFINITES = {"something", "someone", "somebody", "anything", "anyone", "nothing", "nobody", "everything"}
WHOLE_SUBJECTS = {"nobody", "no", "none", "nothing", "noone", "everyone", "everybody", "everything", "all", "each",
                  "every", "neither"}  # quantified / negative subjects: such a sentence is not a conjunction of atoms
PLURAL_WORDS = {"people", "men", "women", "children", "they", "we", "others", "both", "police"}
COLLECTIVE_NOUNS = {"people", "police", "group", "couple", "family", "team", "crowd", "band", "staff", "audience"}
OBJECT_PRONOUNS = {"he", "she", "it", "they", "him", "her", "them", "we", "us", "i", "me"}
# verbs whose atoms legitimately put a noun straight after the verb although the source had a preposition
# ("in a vest" -> "is wearing a vest"; "the men 's bikes" -> "have bikes")
REALISATION_VERBS = {"wearing", "wears", "wear", "has", "have", "had", "is", "are", "was", "were"}


@dataclass(frozen=True)
class AtomCheck:
    """The outcome of checking one atom."""

    status: str  # ok | malformed | unparsed
    reason: str  # empty when ok; otherwise the first rule that fired, with the offending words

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", str(text).lower()).strip()


# The grammar rules of an atom alone (`AtomChecker._grammar`), in order: the first that finds a problem names it. A
# rule answers None when it finds none.
GRAMMAR_RULES = RuleTable("atom grammar rule")
# The rules on each word of an atom (the `words` grammar rule), in order at each word.
WORD_RULES = RuleTable("atom word rule")


class AtomChecker:
    """Well-formedness of atoms (see the module docstring); `tagger` has `.tag(text) -> list[Tok]`."""

    name = CHECK_VERSION

    def __init__(self, tagger, is_adjective=None, is_verb_form=None, is_plural=None):
        self.tagger = tagger
        self.is_adjective = is_adjective or (lambda word: False)  # WordNet: may "is <word>." end an atom?
        self.is_verb_form = is_verb_form or (lambda word: False)  # an inflected verb ("pours", "ate") mis-tagged
        self.is_plural = is_plural or (lambda word: False)  # a plural noun mis-tagged as singular ("giraffes")

    def __call__(self, atom: str, sentence: str | None = None, sole: bool = False) -> AtomCheck:
        return self.check(atom, sentence, sole)

    def check(self, atom: str, sentence: str | None = None, sole: bool = False) -> AtomCheck:
        """Status and reason of `atom`; with `sentence` (what it was decomposed from) the source rules run too.
        `sole`: the atom is the only one the generator gave for `sentence` (so a copy of it is no analysis)."""
        text = str(atom).strip()
        words = _norm(text).split()
        if sole and sentence is not None and _norm(text) == _norm(sentence) and (
                len(words) > 5 or words[0] in WHOLE_SUBJECTS):  # "Bruce Springsteen is a singer." is atomic itself
            return AtomCheck("unparsed", "the sentence returned whole: not decomposed")
        reason = self._shape(text)
        if reason:
            return AtomCheck("malformed", reason)
        toks = self.tagger.tag(text)
        reason = self._grammar(toks)
        if not reason and sentence is not None:
            reason = self._against_source(toks, self.tagger.tag(str(sentence)))
        return AtomCheck("malformed", reason) if reason else AtomCheck("ok", "")

    # -- rules on the atom alone -------------------------------------------------------------------------
    @staticmethod
    def _shape(text: str) -> str:
        if not text:
            return "empty atom"
        if not text[0].isupper():
            return "does not start with a capital letter"
        if not text.endswith("."):
            return "does not end with a period"
        words = _norm(text).split()
        if len(words) < 2:
            return "fewer than two words"
        for a, b in zip(words, words[1:]):
            if a == b and a not in {"that", "had"}:
                return f"repeated word: {a}"
        return ""

    def _grammar(self, toks) -> str:
        """The problem the first rule of `GRAMMAR_RULES` finds in the tagged atom ('' when none does):

        >>> print(GRAMMAR_RULES.table())
        no_finite_verb             no finite verb (nor a mis-tagged one: "The can spilled.")
        light_verb_object          a verb that needs an object ends the atom ("The person makes.")
        adjective_after_verb       an adjective after a non-linking verb ends the atom
        words                      the first problem of `WORD_RULES` at any word, words left to right
        cleft_pronoun              a pronoun as the answer of a pseudo-cleft ("The thing ... is it.")
        pronoun_complement         a pronoun as the complement of a noun subject ("The dog is it.")
        bare_singular_noun         a bare singular count noun after the copula ("The man is doctor.")
        non_predicative_adjective  a non-predicative adjective after the copula
        adjective_after_noun       an adjective after a noun at the end ("The man wears hat red.")
        agreement                  number agreement (`_agreement`)
        >>> print(WORD_RULES.table())
        article_plural           a/an before a plural noun (not a compound: "a grounds crew")
        copula_end               a copula that ends the atom
        copula_bare_phrase       a copula with a bare of/to phrase ("is of", "is to the")
        copula_adverb            a copula with an adverb that is no predicate ("is very")
        copula_verb              a copula followed by a verb
        preposition_end          a preposition that ends the atom (not a verb's particle)
        preposition_finite_verb  a preposition followed by a finite verb
        """
        low = [t.low for t in toks]
        tags = [t.tag for t in toks]
        return GRAMMAR_RULES.first(self, toks, low, tags)

    @GRAMMAR_RULES.rule("no_finite_verb", 'no finite verb (nor a mis-tagged one: "The can spilled.")')
    def _no_finite_verb(self, toks, low, tags):
        finite = [i for i, t in enumerate(toks) if (t.tag in FINITE_TAGS or t.low in (BE | HAVE) - NONFINITE_BE_HAVE)
                  and not (i > 0 and low[i - 1] in NONFINITE_BE_HAVE)]
        if not finite and not any((t.low.endswith("ed") and t.tag in {"VB", "VBN"} or t.tag in NOUN_TAGS | {"JJ"}
                                   and self.is_verb_form(t.low) or t.tag in {"VB", "VBN", "NN"} and tags[i - 1] == "NNS"
                                   and self.is_verb_form(t.low + "s")) and i > 1 and tags[i - 1] in NOUN_TAGS
                                  for i, t in enumerate(toks)):  # "The can spilled.", "The dog ate." (mis-tagged)
            return "no finite verb"
        return None

    @GRAMMAR_RULES.rule("light_verb_object", 'a verb that needs an object ends the atom ("The person makes.")')
    def _light_verb_object(self, toks, low, tags):
        last = toks[-1]
        if len(toks) >= 3 and last.tag in {"VB", "VBP", "VBZ", "VBD", "VBN", "VBG"} and \
                _lemma(last.low) in LIGHT_VERB_LEMMAS and tags[-2] not in {"RB"} and not (
                    last.tag in {"VBN", "VBD"} and low[-2] in BE | {"get", "gets", "got", "been"}):  # passives
            return f"a verb that needs an object has none: {last.word}"
        return None

    @GRAMMAR_RULES.rule("adjective_after_verb", "an adjective after a non-linking verb ends the atom")
    def _adjective_after_verb(self, toks, low, tags):
        last = toks[-1]
        if len(toks) >= 3 and last.tag in {"JJ", "JJR", "JJS"} and tags[-2].startswith("VB") and low[-2] not in BE \
                and _lemma(low[-2]) not in LINKING_LEMMAS and not (_lemma(low[-2]) == "wear" and last.low in COLORS):
            return f"an adjective after a non-linking verb: {toks[-2].word} {last.word}"
        return None

    @GRAMMAR_RULES.rule("words", "the first problem of `WORD_RULES` at any word, words left to right")
    def _words(self, toks, low, tags):
        for i in range(len(toks)):
            found = WORD_RULES.first(self, toks, low, tags, i)
            if found is not None:
                return found
        return None

    @WORD_RULES.rule("article_plural", 'a/an before a plural noun (not a compound: "a grounds crew")')
    def _article_plural(self, toks, low, tags, i):
        n, t = len(toks), toks[i]
        nxt = toks[i + 1] if i + 1 < n else None
        if not (t.low in {"a", "an"} and t.tag == "DT") or (nxt is not None and nxt.low in {"few", "lot", "couple"}):
            return None
        k = i + 1
        while k < n and toks[k].tag in {"JJ", "JJR", "JJS", "VBN", "VBG", "CD", "RB"}:
            k += 1
        if k < n and toks[k].tag == "NNS" and toks[k].low not in {"pants", "jeans", "shorts", "glasses",
                                                                    "sunglasses", "series", "news"} and \
                not (k + 1 < n and toks[k + 1].tag in {"NN", "NNS"}):  # "a grounds crew": a compound
            return f"'{t.low}' before a plural noun: {toks[k].word}"
        return None

    @staticmethod
    def _copula_at(low, i: int) -> bool:
        """A copula at `i` (not existential "there is")."""
        return low[i] in BE and (i == 0 or low[i - 1] != "there")

    @WORD_RULES.rule("copula_end", "a copula that ends the atom")
    def _copula_end(self, toks, low, tags, i):
        return "copula without a complement" if self._copula_at(low, i) and i + 1 == len(toks) else None

    @WORD_RULES.rule("copula_bare_phrase", 'a copula with a bare of/to phrase ("is of", "is to the")')
    def _copula_bare_phrase(self, toks, low, tags, i):
        n = len(toks)
        if not (self._copula_at(low, i) and i + 1 < n):
            return None
        t, nxt = toks[i], toks[i + 1]
        if nxt.low == "of" or nxt.low in {"to", "into", "onto", "towards", "toward"} and (
                i + 2 >= n or toks[i + 2].tag != "VB"):
            return f"copula with a bare '{nxt.low}' phrase: {t.word} {nxt.word}"
        return None

    @WORD_RULES.rule("copula_adverb", 'a copula with an adverb that is no predicate ("is very")')
    def _copula_adverb(self, toks, low, tags, i):
        n = len(toks)
        if not (self._copula_at(low, i) and i + 1 < n):
            return None
        nxt = toks[i + 1]
        if nxt.tag == "RB" and nxt.low not in PREDICATIVE_ADVERBS and not self.is_adjective(nxt.low) and not (
                i + 2 < n and (toks[i + 2].tag.startswith("VB") or toks[i + 2].tag in
                               {"JJ", "DT", "IN", "RB", "CD", "PRP$"} | NOUN_TAGS)):
            return f"copula with a non-predicative adverb: {nxt.word}"
        return None

    @WORD_RULES.rule("copula_verb", "a copula followed by a verb")
    def _copula_verb(self, toks, low, tags, i):
        if not (self._copula_at(low, i) and i + 1 < len(toks)):
            return None
        nxt = toks[i + 1]
        return f"copula followed by a verb: {nxt.word}" if nxt.tag in {"VB", "VBP", "VBZ", "MD"} and nxt.low not in BE \
            else None

    @staticmethod
    def _preposition_at(toks, i: int) -> bool:
        t = toks[i]
        return t.tag in {"IN", "TO"} and t.low not in {"that", "because", "while", "as", "if", "whether"}

    @WORD_RULES.rule("preposition_end", "a preposition that ends the atom (not a verb's particle)")
    def _preposition_end(self, toks, low, tags, i):
        t = toks[i]
        if self._preposition_at(toks, i) and i + 1 == len(toks) and not (
                t.low in PARTICLES and i > 0 and tags[i - 1].startswith("VB")):
            return f"preposition without an object: {t.word}"
        return None

    @WORD_RULES.rule("preposition_finite_verb", "a preposition followed by a finite verb")
    def _preposition_finite_verb(self, toks, low, tags, i):
        if self._preposition_at(toks, i) and i + 1 < len(toks):
            t, nxt = toks[i], toks[i + 1]
            if nxt.tag in {"VBZ", "VBP", "VBD", "MD"} and t.low != "to":
                return f"preposition followed by a finite verb: {t.word} {nxt.word}"
        return None

    @GRAMMAR_RULES.rule("cleft_pronoun", 'a pronoun as the answer of a pseudo-cleft ("The thing ... is it.")')
    def _cleft_pronoun(self, toks, low, tags):
        if low[0] == "the" and len(low) > 3 and low[-2] == "is" and low[1] == "thing" and low[-1] in OBJECT_PRONOUNS:
            return f"a pronoun as the answer of a pseudo-cleft: {toks[-1].word}"
        return None

    @GRAMMAR_RULES.rule("pronoun_complement", 'a pronoun as the complement of a noun subject ("The dog is it.")')
    def _pronoun_complement(self, toks, low, tags):
        if len(low) >= 3 and low[-2] in BE and low[-1] in OBJECT_PRONOUNS and low[0] not in OBJECT_PRONOUNS | {
                "this", "that"}:
            return f"a pronoun as the complement of a noun subject: {toks[-1].word}"
        return None

    @GRAMMAR_RULES.rule("bare_singular_noun", 'a bare singular count noun after the copula ("The man is doctor.")')
    def _bare_singular_noun(self, toks, low, tags):
        if len(low) >= 3 and low[-2] in BE and tags[-1] == "NN" and low[-1] not in MASS_NOUNS | INDEFINITES and \
                low[0] not in OBJECT_PRONOUNS | {"this", "that", "there"}:
            return f"a bare singular noun after the copula: {toks[-1].word}"
        return None

    @GRAMMAR_RULES.rule("non_predicative_adjective", "a non-predicative adjective after the copula")
    def _non_predicative_adjective(self, toks, low, tags):
        if len(low) >= 4 and low[-1] in NON_PREDICATIVE and low[-2] in BE:
            return f"a non-predicative adjective after the copula: {toks[-1].word}"
        return None

    @GRAMMAR_RULES.rule("adjective_after_noun", 'an adjective after a noun at the end ("The man wears hat red.")')
    def _adjective_after_noun(self, toks, low, tags):
        if len(low) >= 4 and tags[-1] in {"JJ", "JJR", "JJS"} and tags[-2] in NOUN_TAGS and tags[-3] != "CD" and \
                low[-2] not in {"years", "feet", "inches", "meters", "months", "weeks", "days"}:
            return f"an adjective after a noun at the end: {toks[-2].word} {toks[-1].word}"
        return None

    @GRAMMAR_RULES.rule("agreement", "number agreement (`_agreement`)")
    def _agreement_rule(self, toks, low, tags):
        return self._agreement(toks)

    def _agreement(self, toks) -> str:
        low = [t.low for t in toks]
        if low[0] == "there" and len(low) > 2:
            verb, rest = low[1], toks[2:]
            k = next((i for i, t in enumerate(rest) if t.tag in NOUN_TAGS), None)
            while k is not None and k + 1 < len(rest) and rest[k + 1].tag in NOUN_TAGS:
                k += 1  # the last noun of a compound ("a grounds crew")
            head = rest[k] if k is not None else None
            if verb == "is" and rest[0].tag == "CD" and rest[0].low not in {"one", "1"}:
                return f"'there is' before a number: {rest[0].word}"
            if verb == "are" and rest[0].low in {"a", "an"} and not (len(rest) > 1 and rest[1].low in {"few", "lot",
                                                                                                        "couple"}):
                return f"'there are' before '{rest[0].low}'"
            if verb == "is" and head is not None and head.tag == "NNS" and rest[0].low in {"a", "an", "one"}:
                return f"'there is' before a plural noun: {head.word}"
            return ""
        # subject: the words before the first finite verb, when they form a simple NP
        k = next((i for i, t in enumerate(toks) if t.tag in FINITE_TAGS or t.low in BE | HAVE), None)
        if k is None or k == 0:
            return ""
        subject = toks[:k]
        if any(t.tag in {"IN", "CC", "WDT", "WP", "VBG", "VBN"} or t.low == "and" for t in subject):
            return ""  # coordinated or modified subjects: no agreement rule
        head = subject[-1]
        verb = toks[k].low
        plural = head.tag in {"NNS", "NNPS"} or self.is_plural(head.low) or head.low in PLURAL_WORDS
        singular = head.tag in {"NN", "NNP"} and not plural and head.low not in COLLECTIVE_NOUNS
        if plural and (verb in {"is", "was", "has"} or (toks[k].tag == "VBZ" and verb not in BE | HAVE)):
            return f"plural subject with a singular verb: {head.word} {toks[k].word}"
        if singular and (verb in {"are", "were"} or verb == "have" and toks[k].tag == "VBP"):
            return f"singular subject with a plural verb: {head.word} {toks[k].word}"
        return ""

    # -- rules against the source sentence ---------------------------------------------------------------
    @staticmethod
    def _source_np(src, i: int) -> tuple[int, bool, str]:
        """(start index, has a determiner, word before the NP) of the source NP whose head is src[i]."""
        k = i
        while k > 0 and (src[k - 1].tag in NP_INNER_TAGS or src[k - 1].tag in {"VBG", "VBN"} and k > 1 and
                         src[k - 2].tag in {"DT", "PRP$", "JJ"}):  # "the riding lessons", not "ordering food"
            k -= 1
        has_det = any(t.tag == "POS" for t in src[k:i]) or any(t.low in DETERMINER_WORDS for t in src[k:i])
        before = src[k - 1] if k > 0 else None
        if before is not None and (before.tag in {"DT", "PRP$", "WP$"} or before.low in DETERMINER_WORDS):
            has_det = True
            k -= 1
            before = src[k - 1] if k > 0 else None
        return k, has_det, (before.low if before is not None and before.tag in {"IN", "TO"} else "")

    def _against_source(self, toks, src) -> str:
        src_nouns = {}
        for i, t in enumerate(src):
            if t.tag in {"NN", "NNS"} and (i + 1 == len(src) or src[i + 1].tag not in {"NN", "NNS"}):
                src_nouns.setdefault(t.low, []).append(self._source_np(src, i))
        for i, t in enumerate(toks):
            if t.tag not in {"NN", "NNS"} or (i + 1 < len(toks) and toks[i + 1].tag in {"NN", "NNS"}):
                continue  # heads only
            if t.low not in src_nouns or t.low in {"person", "people", "group", "thing", "something", "purpose"}:
                continue
            k = i
            while k > 0 and (toks[k - 1].tag in NP_INNER_TAGS - {"POS"} or toks[k - 1].tag in {"VBG", "VBN"} and
                             k > 1 and toks[k - 2].tag in {"DT", "PRP$", "JJ"}):  # "a flying surfboard"
                k -= 1
            before = toks[k - 1] if k > 0 else None
            bare = before is None or not (before.tag in {"DT", "PRP$", "WP$", "POS"} or before.low in DETERMINER_WORDS)
            sources = src_nouns[t.low]
            after_verb = before is not None and before.tag.startswith("VB") and before.low not in REALISATION_VERBS
            if not bare:
                after_det = toks[k - 2] if k > 1 else None
                after_verb = after_det is not None and after_det.tag.startswith("VB") and \
                    after_det.low not in REALISATION_VERBS
            if after_verb and all(prep and prep not in {"of"} for _, _, prep in sources):
                return f"dropped the preposition before: {t.word}"
            if t.tag == "NN" and bare and t.low not in MASS_NOUNS and all(has_det for _, has_det, _ in sources) \
                    and i > 1:
                return f"dropped the determiner of: {t.word}"
        return ""


def default_checker() -> AtomChecker:
    """The checker over the decomposer's repaired tagger (tagger and WordNet from the data mirror)."""
    from ..decompose import default_decomposer

    rules = default_decomposer()
    lex, morph = rules.lexicon, rules.morph

    def is_verb_form(word: str) -> bool:
        lemma = morph.verb(word)
        return lemma != word and lex.is_pos(lemma, "v") and not word.endswith("ing")

    return AtomChecker(rules, is_adjective=lambda word: lex.is_pos(word, "a") or lex.is_pos(word, "s"),
                       is_verb_form=is_verb_form, is_plural=lambda word: morph.noun(word) != word)
