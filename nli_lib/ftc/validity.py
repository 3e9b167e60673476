"""Is a generated counterfactual hypothesis a well-formed sentence? An explicit, small set of checks.

Every counterfactual any pipeline produces (regex, FSP stand-ins, an LLM) goes through `check_counterfactual`
before it may be marked ok: a rule-based rewriter that splices a span into a sentence easily leaves
"A person is person .", "at a at a restaurant" or "The in their later years .". The checks compare the
counterfactual with its original hypothesis and flag only what the rewrite *introduced* (e-SNLI hypotheses
are crowd-written captions, often without a verb; a problem already in the hypothesis is not the rewriter's).
Words are POS-tagged with NLTK's averaged perceptron tagger (data mirror, `load_pos_tagger`); the word after a
modal (and its adverbs) is read as a base verb ("can not simultaneously kick": the tagger says JJ).

=========================  =====================================================================================
check                      flags (introduced by the rewrite, i.e. absent from the hypothesis)
=========================  =====================================================================================
``unchanged``              x_cf equals x after normalisation (except slot N[B]: Proposition 3 keeps the neutral
                           claim, as Table 14's second neutral row does)
``nothing_kept``           slots E and C: none of x's content words (two or more) survives (a substitution keeps
                           its context: "Humans working ." -> "Two men .")
``repeated_ngram``         an n-gram (n ≤ 4) right after itself: "young young", "at a at a", "for lunch for lunch"
``repeated_word``          a content word of the inserted text that now occurs more often than in x and also in
                           the kept text ("A woman is woman", "Biking outdoors are biking outdoors")
``determiner_no_noun``     a/an/the/possessive not followed by a noun ("The someone" included): "A preparing a steak",
                           "The in their …",
                           "A happy is happy"
``copula_bare_noun``       is/are (+ adverb) + singular noun without determiner: "A person is person who stands",
                           "Woman is simultaneously hand papers"; is/was + a plural or -s form: "No one is people
                           riding", "The dog is runs around", "A man is synonyms a group" (read by word form: the
                           tagger misreads such splices, "runs" as VBN, "synonyms" as PDT)
``copula_verb``            is/are/was/were + a verb, subordinator, relative or subject pronoun ("Someone is
                           simultaneously be selling …", "A kid is since …", "The boy is who hits …", "… are they
                           race …"); a lexical verb + a verb
                           ("holding use pom poms"); two -ing verbs in a row unless the first takes a gerund
                           ("are rephrasing doing", not "going fishing")
``agreement``              number disagreement: "One man are …", "a boats", "a two dogs", "Some two men", "Two man",
                           "a small two women", "one two", "some man", a/an before a mass noun ("in a water"), a plural
                           subject head with is/was ("The gentlemen with the red plaid shirt is"),
                           "Two young girl" (a numeral's head noun read by word form, across adjectives),
                           a/an before a compound with a plural head ("watching a shuttle launches"),
                           "cheerleaders poms"
``intransitive_object``    a verb that takes no direct object, inserted by the rewrite, now followed by a noun phrase:
                           "speaking a group of people", "are sitting moves" (companion-authored verb list)
``subjectless``            x starts with its subject, x_cf with a verb, preposition or auxiliary:
                           "Read a newspaper …", "Walking on the sidewalk smile ."; "There are" + no noun phrase
``unresolved_pronoun``     x_cf starts with a pronoun (other than x's own) whose referent it lost ("It is for food .",
                           "they are singing" -> "it is in a program", the explanation's
                           generic "You are wearing dresses ."); a gendered pronoun with no antecedent left ("His
                           jersey is on the chair"); an inserted it/them/him for a replaced noun ("watching it")
``no_finite_verb``         x has a main-clause finite verb and x_cf none, nor is it a caption (a noun phrase and right
                           after it a participle or preposition: "A track athlete carrying a large pole", as Table
                           14 prints): "Some of the light show .", "A soccer when players are challenged ."
``clause_inserted``        the inserted text brings a second main-clause verb: "… a stroll he is in front of …"
``dangling_end``           x_cf ends in a preposition, determiner, conjunction, auxiliary or subject pronoun
``preposition_object``     a kept preposition right before inserted text that is no noun phrase (a verb, or an
                           adjective/participle reaching no noun): "playing with limited to machine guns"
``orphaned_object``        the replaced text ended in a preposition whose object stays, the inserted one in an
                           adjective, adverb or noun: "milling about the city street" -> "being busy the city street"
                           ; a verb's particle kept after inserted text ending in a noun ("… the stadium down")
``other_claim_kept``       slots C and N[A] (y_cf entailment), given the premise: another ';'-separated claim of the
                           explanation, relating a premise-only word to a hypothesis-only word, left unapplied
                           ("a child and man are not the same ; someone fixing a hotdog is not necessarily happy":
                           "the child was happy" -> "the man was happy" still need not follow)
``relation_words``         the inserted text brings words about the explanation, not the scene ("means", "another
                           wording for", "a simplified version of", "first sentence", "description")
``pronoun_gender``         a gendered noun replaced by one of the other gender while a kept pronoun still refers to
                           the old one ("A woman smiles to his left"); an inserted possessive that disagrees with
                           the singular subject ("She was calling their husband")
``stray_quote``            a quote mark of the explanation spliced in ("A person with umbrella ' absolutely …")
``being_as_place``         a kept in/inside/into before an inserted person or animal: a place replaced by a being
                           ("is sitting in young male", "is taking place in a woman")
``phrase_kind_mismatch``   the replaced and the inserted text are different kinds of phrase (noun phrase for a
                           verb phrase, …; the inserted text is also tagged on its own, since in context the
                           tagger reads "The play soccer" as nouns, and where it came from: "a jumping kick" in
                           the explanation is a noun phrase, so "is jumping kick with bears" replaces a verb with
                           a determiner-less noun phrase); any predicate may follow a copula
=========================  =====================================================================================

>>> check_counterfactual("A person is sitting between two televisions .",
...                      "A person is person who stands between two televisions .", "C").reason
"repeated_word: 'person'; copula_bare_noun: 'is person'; phrase_kind_mismatch: 'sitting' (VBG) → 'person who stands' \
(bare NP)"
>>> check_counterfactual("There is a cat running", "There is a dog running", "C")
Validity(status='ok', reason='')
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache

from ..text import clitic_tokens, untokenize_ptb
from .text import AUXILIARIES, FUNCTION_WORDS, stem

CHECKS = ("unchanged", "nothing_kept", "repeated_ngram", "repeated_word", "determiner_no_noun", "copula_bare_noun",
          "copula_verb", "agreement", "intransitive_object", "subjectless", "unresolved_pronoun", "no_finite_verb",
          "clause_inserted", "dangling_end", "phrase_kind_mismatch", "preposition_object", "orphaned_object",
          "other_claim_kept", "relation_words", "pronoun_gender", "stray_quote", "being_as_place")

DETERMINER_WORDS = frozenset("a an the his her their its my your our".split())
COPULAS = frozenset("is are was were be being been am".split())
FINITE = frozenset({"VBZ", "VBP", "VBD", "MD"})
NOUN = frozenset({"NN", "NNS", "NNP", "NNPS"})
# Tags a noun phrase may hold between its determiner and its noun.
NP_INSIDE = frozenset({"JJ", "JJR", "JJS", "RB", "RBR", "RBS", "CD", "VBN", "VBG", "CC", "POS", "HYPH", ","})
SUBJECT_START = frozenset({"DT", "PDT", "PRP", "PRP$", "CD", "EX", "JJ", "JJR", "JJS"}) | NOUN
BAD_START = frozenset({"VB", "VBZ", "VBP", "VBD", "MD", "IN", "TO", "CC", "VBN", "WDT", "WRB", "WP"})
BAD_END = frozenset({"IN", "TO", "DT", "CC", "PRP$", "MD", "WDT", "WP", "WRB", "PDT"})
SUBJECT_PRONOUNS = frozenset("he she they we i".split())
# Singular nouns that read well right after a copula without a determiner ("is home", "are part of").
BARE_PREDICATE_NOUNS = frozenset("home outside inside part alone asleep awake downstairs upstairs indoors outdoors "
                                 "abroad ashore afloat aboard nearby there here".split())
# A main-clause verb after one of these belongs to a subordinate or coordinate clause.
SUBORDINATORS = frozenset("who that which while and or but as because when where if since whose whom so".split())
COLLECTIVE = frozenset("couple group family team crowd police staff band class audience pair crew "
                       "people".split())
NUMBERS = frozenset("two three four five six seven eight nine ten several many".split())
PLURAL_MODIFIERS = frozenset("sports clothes arms glasses goods news pants jeans sunglasses shorts overalls series "
                             "species headphones scissors savings sales customs".split())
SUBORDINATING = frozenset("since because while although though if when whereas unless until".split())
# Verbs that take a bare infinitive right after them ("go play", "help clean").
BARE_INFINITIVE_VERBS = frozenset("go goes going went come comes coming came help helps helping helped let lets "
                                  "make makes made see sees saw watch watches hear hears".split())
# "you"/"we": the generic subject of an explanation ("you can be standing and not dancing").
PRONOUN_STARTS = frozenset("he she it they him her them this that these those you we".split())
# Words ending in -s that are not plurals after a copula ("is outdoors", "is sideways", "is lots of fun").
NOT_PLURAL_S = frozenset("lots always perhaps nowadays sideways afterwards towards backwards forwards upwards "
                         "downwards outwards besides whereas canvas christmas".split()) | BARE_PREDICATE_NOUNS
IRREGULAR_PLURALS = frozenset("men women children people feet teeth mice geese police sheep fish deer cattle "
                              "clergy".split())
# Mass nouns that take no a/an (companion-authored, common in SNLI): "a dog is in a water".
MASS_NOUNS = frozenset("water grass sand snow mud dirt furniture equipment luggage information advice traffic "
                       "clothing music homework garbage trash money attire graffiti jewelry footwear scenery".split())
# Nouns for people (and animals): no place for 'in'/'inside'/'into' ("The photo is taking place in a woman").
BEING_NOUNS = frozenset("man men woman women boy boys girl girls guy guys person people child children kid kids "
                        "male female baby lady gentleman dog dogs cat cats".split())
# Quantifiers that never precede a numeral ("a two dogs", "some two men"; "another two", "every two" are fine).
NO_NUMERAL_AFTER = frozenset("a an some this".split())
# Verbs that take no direct object (companion-authored): after one of them a noun phrase needs a preposition
# ("speaking to a group", "sitting on the moves"). Base forms; -s/-ing/past forms are derived below.
_INTRANSITIVE = {"speak": "spoke spoken", "talk": "", "sit": "sat sitting", "sleep": "slept", "smile": "smiling",
                 "laugh": "", "arrive": "arriving", "chat": "chatting chatted", "nap": "napping napped",
                 "kneel": "knelt", "frown": "", "giggle": "giggling", "yawn": "", "stare": "staring",
                 "gaze": "gazing", "glance": "glancing", "listen": ""}
INTRANSITIVE_FORMS = frozenset(f for base, extra in _INTRANSITIVE.items()
                               for f in [base, base + "s", base + "ing", base + "ed", *extra.split()])
# Objects an intransitive verb may still take ("speaking English", "arrived home").
INTRANSITIVE_OBJECTS = frozenset("english spanish french german chinese italian japanese language languages sign "
                                 "home".split())
# -ing verbs that take an -ing complement ("going fishing", "keeps running").
GERUND_TAKING = frozenset("going coming keeping stopping starting finishing quitting enjoying avoiding trying "
                          "practicing practising continuing beginning considering resuming getting doing".split())
PREDICATE_KINDS = frozenset({"ADJ", "PP", "ADV", "VBG", "VBN", "NP"})
POSTMODIFIER_KINDS = frozenset({"PP", "VBG", "VBN"})
PREPOSITIONS = frozenset("in on at with near by under over behind beside inside outside into onto through across "
                         "along around from for of off up down against among between toward towards without".split())


@dataclass(frozen=True)
class Validity:
    """The verdict of the well-formedness checks on one counterfactual."""

    status: str  # 'ok' or 'malformed'
    reason: str = ""  # '; '-joined '<check>: <evidence>' for every check that fired ('' when ok)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


_TAGGER = None


def _default_tagger():
    global _TAGGER
    if _TAGGER is None:
        from ..data.nltk_data import load_pos_tagger

        _TAGGER = load_pos_tagger()
    return _TAGGER


# -ing words the tagger reads as nouns after a determiner ("a walking while …") are verbs unless they are
# among these common -ing nouns.
ING_NOUNS = frozenset("""
building clothing ceiling ring king thing something nothing anything everything evening morning wedding swing string
sibling painting drawing meeting bedding railing sling wing spring pudding stocking icing frosting awning ending
beginning outing opening gathering crossing landing parking setting siding ping bring darling duckling earring
offspring sterling lightning ceiling filling stuffing topping dumpling wording
""".split())


# The tagger reads unknown agent nouns as adjectives ("A man is surfer": JJ); -er words tagged JJ are nouns
# unless they are among these adjectives.
ER_ADJECTIVES = frozenset("""
clever bitter proper tender sober eager super other former inner outer upper under over silver slender sheer
later latter lower utter whether never ever ever together rather either neither sinister
""".split())


# Prepositions the tagger does not know (or reads as nouns/adjectives out of context: "amidst" NN).
CLOSED_PREPOSITIONS = frozenset("amid amidst among amongst beneath underneath atop via within throughout despite "
                                "upon onto into toward towards".split())


# Past participles that end in neither -d, -n nor -t ("come", "hung", "stuck", "swum").
IRREGULAR_PARTICIPLES = frozenset("come become overcome made hung sung dug rung clung flung slung strung stung swung "
                                  "wrung stuck struck drunk sunk shrunk stunk swum".split())


def _retag(w: str, t: str) -> str:
    if w in CLOSED_PREPOSITIONS and t in ("NN", "NNS", "JJ", "VB", "VBP"):
        return "IN"
    if t == "VBN" and not w.endswith(("d", "n", "t")) and w not in IRREGULAR_PARTICIPLES:
        return "VB"  # "The raft is fill with", "are simultaneously kick": a base form, no participle
    if t == "NN" and w.endswith("ing") and len(w) > 4 and w not in ING_NOUNS:
        return "VBG"
    if t == "JJ" and w.endswith("er") and len(w) > 4 and w not in ER_ADJECTIVES:
        return "NN"
    return t


INDEFINITE_PRONOUNS = frozenset("someone somebody everyone everybody anyone anybody nobody".split())


def _after_modal(tagged: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The word after a modal (and its adverbs: "can not simultaneously kick") is a base verb, whatever the
    tagger read ("kick" JJ, "demonstrate" JJ); an -s word right after a preposition or 'to' is a plural noun
    ("next to dogs": the tagger says VB), right after an indefinite pronoun a verb ("someone dances": NNS).

    >>> _after_modal([("can", "MD"), ("not", "RB"), ("simultaneously", "RB"), ("kick", "JJ"), ("and", "CC")])[3]
    ('kick', 'VB')
    >>> _after_modal([("next", "JJ"), ("to", "TO"), ("dogs", "VB")])[2], _after_modal([("to", "TO"), ("kiss", "VB")])[1]
    (('dogs', 'NNS'), ('kiss', 'VB'))
    """
    out = list(tagged)
    for i, (_, t) in enumerate(tagged):
        if t != "MD":
            continue
        j = i + 1
        while j < len(out) and out[j][1] in ("RB", "RBR", "RBS"):
            j += 1
        if j < len(out) and out[j][1] in ("JJ", "NN", "VBN", "VBP", "VBD"):
            out[j] = (out[j][0], "VB")
    for i in range(1, len(out)):  # "someone dances": an -s word after an indefinite pronoun is its verb
        if out[i][1] == "NNS" and out[i - 1][0] in INDEFINITE_PRONOUNS:
            out[i] = (out[i][0], "VBZ")
    for i in range(1, len(out)):  # "walking next to dogs": no -s verb follows a preposition or 'to'
        if out[i - 1][1] in ("IN", "TO") and (out[i][1] == "VBZ" or (out[i][1] == "VB" and _plural_form(out[i][0]))):
            out[i] = (out[i][0], "NNS")
    return out


def _tag_words(ws: list[str], tagger) -> tuple[tuple[str, str], ...]:
    tagged = _after_modal(tagger.tag(ws)) if ws else []
    return tuple((w, _retag(w, t)) for w, t in tagged)


@lru_cache(maxsize=100_000)
def _tag_cached(text: str) -> tuple[tuple[str, str], ...]:
    return _tag_words(clitic_tokens(text), _default_tagger())


def tag(text: str, tagger=None) -> list[tuple[str, str]]:
    """(lower-cased token, Penn tag) for `text` (`tokens`; -ing words outside `ING_NOUNS` tagged NN -> VBG,
    -er words outside `ER_ADJECTIVES` tagged JJ -> NN, a "VBN" that has no participle form -> VB)."""
    if tagger is None:
        return list(_tag_cached(str(text)))
    return list(_tag_words(clitic_tokens(text), tagger))


def phrase_kind(tags: list[str], after_determiner: bool = False) -> str:
    """Kind of a word run by its first words: 'NP', 'ADJ', 'VBN', 'VBG', 'V', 'PP', 'ADV', 'DET' or 'OTHER'.

    Leading determiners are skipped; an adjective/participle/adverb run that reaches a noun is an NP.

    >>> phrase_kind(["DT", "JJ", "NN"]), phrase_kind(["VBG", "DT", "NN"]), phrase_kind(["JJ", "WRB", "IN"])
    ('NP', 'VBG', 'ADJ')
    """
    i = 0
    while i < len(tags) and tags[i] in ("DT", "PDT", "PRP$"):
        i, after_determiner = i + 1, True
    if i == len(tags):
        return "DET"
    if tags[i].startswith("RB") and i + 1 < len(tags) and tags[i + 1].startswith("VB"):
        i += 1  # "simultaneously kick": the adverb's verb decides
    first = tags[i]
    if first in NOUN or first in ("PRP", "EX"):
        return "NP"
    if first == "CD":
        return "NP"
    if first in ("JJ", "JJR", "JJS", "VBN", "RB", "RBR", "RBS") or (first == "VBG" and after_determiner):
        j = i
        while j < len(tags) and tags[j] in NP_INSIDE:
            j += 1
        if j < len(tags) and tags[j] in NOUN:
            return "NP"
        return {"VBN": "VBN", "VBG": "VBG"}.get(first, "ADV" if first.startswith("RB") else "ADJ")
    if first == "VBG":
        return "VBG"
    if first in ("VB", "VBZ", "VBP", "VBD", "MD"):
        return "V"
    if first in ("IN", "TO"):
        return "PP"
    return "OTHER"


_COMPATIBLE = {frozenset(p) for p in (("ADJ", "VBN"), ("ADJ", "ADV"), ("PP", "ADV"), ("NP", "DET"))}


def _kinds_compatible(a: str, b: str, predicate: bool) -> bool:
    if a == b or frozenset((a, b)) in _COMPATIBLE or "OTHER" in (a, b):
        return True
    return predicate and a in PREDICATE_KINDS and b in PREDICATE_KINDS


def _adjacent_repeats(ws: list[str]) -> set[str]:
    out = set()
    for n in range(1, 5):
        for i in range(len(ws) - 2 * n + 1):
            gram = ws[i : i + n]
            if gram == ws[i + n : i + 2 * n] and (n > 1 or gram[0] not in ("that", "had")):
                out.add(" ".join(gram))
    return out


def _determiner_problems(tagged: list[tuple[str, str]]) -> set[str]:
    out = set()
    for i, (w, t) in enumerate(tagged):
        if w not in DETERMINER_WORDS or t not in ("DT", "PRP$"):
            continue
        j = i + 1
        while j < len(tagged) and tagged[j][1] in NP_INSIDE:
            j += 1
        if j >= len(tagged) or tagged[j][1] not in NOUN | {"CD"} or tagged[j][0] in INDEFINITE_PRONOUNS:
            end = min(j + 1, len(tagged))
            out.add(" ".join(x for x, _ in tagged[i:end]))
    return out


def _plural_form(w: str) -> bool:
    """Whether `w` looks like a plural noun (or an -s verb) by its form alone.

    >>> [_plural_form(w) for w in ("runs", "synonyms", "people", "firemen", "girl", "glass", "nervous", "outdoors")]
    [True, True, True, True, False, False, False, False]
    """
    if w in IRREGULAR_PLURALS or (w.endswith("men") and len(w) > 4):
        return True
    return len(w) > 3 and w.endswith("s") and w not in NOT_PLURAL_S and \
        not w.endswith(("ss", "us", "is", "ous", "ics", "ness", "ways", "wards"))


def _bare_nouns(tagged: list[tuple[str, str]]) -> set[str]:
    """is/are (+ adverbs) + singular noun without determiner; is/was (+ adverbs) + a plural or -s form.

    >>> sorted(_bare_nouns([("no", "DT"), ("one", "NN"), ("is", "VBZ"), ("people", "NNS"), ("riding", "VBG")]))
    ['is people']
    """
    out = set()
    for i, (w, _) in enumerate(tagged[:-1]):
        if w not in COPULAS - {"be", "being", "been", "am"}:
            continue
        j = i + 1
        while j < len(tagged) - 1 and tagged[j][1] in ("RB", "RBR", "RBS"):
            j += 1
        nxt, t = tagged[j]
        if nxt in BARE_PREDICATE_NOUNS:
            continue
        singular_noun = t == "NN" and not _plural_form(nxt)
        plural_after_is = w in ("is", "was") and (t == "NNS" or (
            t not in ("RB", "RBR", "RBS", "IN", "TO", "DT", "PRP", "PRP$", "CC", "WDT")
            and _plural_form(nxt)))
        if singular_noun or plural_after_is:
            out.add(" ".join(x for x, _ in tagged[i : j + 1]))
    return out


def _past_one_adverb(tagged: list[tuple[str, str]], j: int) -> int:
    """`j`, or `j + 1` when the word at `j` is an adverb ("is simultaneously be": the verb after the adverb).

    >>> tagged = [("is", "VBZ"), ("simultaneously", "RB"), ("be", "VB")]
    >>> _past_one_adverb(tagged, 1), _past_one_adverb(tagged[::2], 1)
    (2, 1)
    """
    return j + (j < len(tagged) and tagged[j][1] in ("RB", "RBR", "RBS"))


def _copula_verbs(tagged: list[tuple[str, str]]) -> set[str]:
    """Copula + (adverb) + verb, subordinator or subject pronoun; copula + to + verb; copula + being + preposition;
    a lexical verb + a bare or
    finite verb; two -ing verbs in a row unless the first takes a gerund (`GERUND_TAKING`).

    >>> sorted(_copula_verbs([("men", "NNS"), ("are", "VBP"), ("rephrasing", "VBG"), ("doing", "VBG")]))
    ['rephrasing doing']
    >>> _copula_verbs([("men", "NNS"), ("are", "VBP"), ("going", "VBG"), ("fishing", "VBG")])
    set()
    """
    out = set()
    for i, (w, t) in enumerate(tagged):
        if w in COPULAS - {"be", "being", "been"}:
            j = _past_one_adverb(tagged, i + 1)
            if j < len(tagged) and (tagged[j][1] in ("VB", "VBP", "VBZ", "VBD") or tagged[j][0] in SUBORDINATING
                                    or tagged[j][0] in ("who", "whom", "whose", "which")
                                    or tagged[j][0] in SUBJECT_PRONOUNS):
                out.add(" ".join(x for x, _ in tagged[i : j + 1]))
            elif i + 2 < len(tagged) and tagged[i + 1][0] == "to" and tagged[i + 2][1] == "VB":
                out.add(" ".join(x for x, _ in tagged[i : i + 3]))  # "are to touch a kangaroo": an infinitive
            elif i + 2 < len(tagged) and tagged[i + 1][0] == "being" and tagged[i + 2][0] in PREPOSITIONS:
                out.add(" ".join(x for x, _ in tagged[i : i + 3]))  # "are being in black jackets"
        elif w in ("do", "does", "did"):
            j = _past_one_adverb(tagged, i + 1)
            if j < len(tagged) and tagged[j][1] in ("VBG", "VBN", "VBZ", "VBD"):
                out.add(" ".join(x for x, _ in tagged[i : j + 1]))
        elif t.startswith("VB") and w not in AUXILIARIES and w not in BARE_INFINITIVE_VERBS and i + 1 < len(tagged) \
                and tagged[i + 1][1] in ("VB", "VBP", "VBZ", "VBD"):
            out.add(f"{w} {tagged[i + 1][0]}")
        elif t == "VBG" and w not in GERUND_TAKING and w not in AUXILIARIES and i + 1 < len(tagged) \
                and tagged[i + 1][1] == "VBG" and tagged[i + 1][0] not in ING_NOUNS:
            out.add(f"{w} {tagged[i + 1][0]}")  # "are rephrasing doing street repairs"
    return out


def _existential_without_subject(tagged: list[tuple[str, str]]) -> bool:
    """'there is/are/was/were' right before a preposition, adverb or verb: "There are inside a restaurant ."

    >>> _existential_without_subject([("there", "EX"), ("are", "VBP"), ("inside", "IN"), ("a", "DT")])
    True
    """
    return len(tagged) > 2 and tagged[0][0] == "there" and tagged[1][0] in COPULAS and \
        (tagged[2][1] in ("IN", "TO", "RB", "RBR", "RBS") or tagged[2][1].startswith("VB")) and \
        tagged[2][0] not in ("no", "not", "always", "also", "still", "only", "just")


def _plural_looking(w: str, t: str) -> bool:
    return t == "NNS" or (t in ("VBZ", "NN") and len(w) > 3 and w.endswith("s")
                          and not w.endswith(("ss", "us", "is", "ous", "ics", "ness")))


def _numeral_heads(tagged: list[tuple[str, str]]) -> set[str]:
    """A number word (two, several, …), its adjectives, and a head noun that is not plural by its form ("two young
    girl"; the tagger calls "girl" NNS after "two"). The head is the last noun of the noun run after the adjectives.

    >>> sorted(_numeral_heads([("two", "CD"), ("young", "JJ"), ("girl", "NNS"), ("and", "CC")]))
    ['two young girl']
    >>> _numeral_heads([("two", "CD"), ("dog", "NN"), ("walkers", "NNS"), ("run", "VBP")])
    set()
    """
    out = set()
    for i, (w, _) in enumerate(tagged):
        if w not in NUMBERS:
            continue
        j = i + 1
        while j < len(tagged) and tagged[j][1] in ("JJ", "JJR", "JJS", "VBN", "HYPH"):
            j += 1
        k = j
        while k < len(tagged) and tagged[k][1] in NOUN:
            k += 1
        if k > j:
            head = tagged[k - 1][0]
            if not _plural_form(head) and head not in COLLECTIVE:
                out.add(" ".join(x for x, _ in tagged[i:k]))
    return out


def _compound_plural(tagged: list[tuple[str, str]], i: int, j: int) -> set[str]:
    """a/an at `i`, its noun compound from `j` with a plural head: "a rescue workers searches …", "watching a
    shuttle launches". The head may be a verb ("A shuttle launches .") unless a/an follows a verb or a preposition
    (object position) or a finite verb follows the head."""
    k = j
    while k < len(tagged) and tagged[k][1] in NOUN:
        k += 1
    if k - j < 2 or tagged[i + 1][0] == "few":
        return set()
    head, head_tag = tagged[k - 1]
    if head in PLURAL_MODIFIERS or not (head_tag == "NNS" or _plural_form(head)):
        return set()
    before = tagged[i - 1] if i > 0 else ("", "")
    object_position = before[0] not in SUBORDINATORS and (before[1].startswith("VB") or before[1] in ("IN", "TO"))
    verb_follows = k < len(tagged) and tagged[k][1] in FINITE
    # the key is the noun run alone, so that a changed adjective before it ("an angry man grills" -> "a happy man
    # grills", where the tagger reads "grills" as a plural) does not make it new
    return {" ".join(w for w, _ in tagged[j:k])} if object_position or verb_follows else set()


def _agreement(tagged: list[tuple[str, str]]) -> set[str]:
    """Number disagreements (module table): determiner/numeral/noun/verb pairs, and `_numeral_heads`.

    >>> sorted(_agreement([("some", "DT"), ("two", "CD"), ("men", "NNS"), ("standing", "VBG")]))
    ['some two']
    >>> _agreement([("group", "NN"), ("of", "IN"), ("people", "NNS"), ("is", "VBZ"), ("riding", "VBG")])
    set()
    >>> sorted(_agreement([("a", "DT"), ("rescue", "NN"), ("workers", "NNS"), ("searches", "VBZ")]))
    ['rescue workers']
    """
    out = set()
    for i, (w1, _) in enumerate(tagged[:-1]):
        if w1 in ("a", "an"):  # a/an (adjectives) plural noun or numeral: "a large buildings", "a small two"
            j = i + 1
            while j < len(tagged) - 1 and tagged[j][1] in ("JJ", "JJR", "JJS", "RB", "RBR", "RBS"):
                j += 1
            if j > i + 1 and ((_plural_looking(*tagged[j]) and tagged[j][1] != "VBZ") or tagged[j][0] in NUMBERS):
                out.add(" ".join(w for w, _ in tagged[i : j + 1]))
            if tagged[j][0] in MASS_NOUNS and (j + 1 >= len(tagged) or tagged[j + 1][1] not in NOUN):
                out.add(" ".join(w for w, _ in tagged[i : j + 1]))  # "in a water" (not "a water bottle")
            out |= _compound_plural(tagged, i, j)
    for k, ((w1, t1), (w2, t2)) in enumerate(zip(tagged, tagged[1:])):
        of_collective = k >= 2 and tagged[k - 1][0] == "of" and tagged[k - 2][0] in COLLECTIVE | {"lot", "number"}
        if (t1 == "NN" and w1 not in COLLECTIVE and w2 in ("are", "were")) \
                or (t1 == "NNS" and w2 in ("is", "was") and not of_collective) \
                or (w1 in ("a", "an") and (_plural_looking(w2, t2) or t2 == "CD")) \
                or (w1 in NO_NUMERAL_AFTER and w2 in NUMBERS) or (w1 in NUMBERS | {"one"} and w2 in NUMBERS) \
                or (w1 in ("some", "many", "several", "few") and w2 in SINGULAR_BEINGS) \
                or (t1 == "NNS" and t2 in ("NN", "NNS") and w1 not in PLURAL_MODIFIERS):
            out.add(f"{w1} {w2}")
    return out | _numeral_heads(tagged)


def _subject_end(tagged: list[tuple[str, str]]) -> int | None:
    """Index of the first verb or preposition after the first word: where the subject noun phrase ends (the
    tagger's noun/adjective confusions inside it do not matter: "A track athlete(JJ) gets …")."""
    return next((k for k, (w, t) in enumerate(tagged) if k > 0 and (t.startswith("VB") or t == "MD"
                                                                    or w in PREPOSITIONS)), None)


def _participle_caption(tagged: list[tuple[str, str]]) -> bool:
    """An SNLI-style caption: a noun phrase, then right away a participle or a preposition ("A track athlete
    carrying a large pole", Table 14; "Men on bikes")."""
    tags = [t for _, t in tagged]
    if phrase_kind(tags) != "NP":
        return False
    end = _subject_end(tagged)
    return end is not None and (tags[end] in ("VBG", "VBN") or tagged[end][0] in PREPOSITIONS) and \
        any(t in NOUN or t in ("PRP", "CD") for t in tags[:end])  # "The performing auto repair": no noun first


def _pronoun_alone(tagged: list[tuple[str, str]]) -> bool:
    """The text starts with a pronoun standing for a noun phrase ("It is …"), not a determiner ("This guy …").

    >>> _pronoun_alone([("it", "PRP"), ("is", "VBZ")]), _pronoun_alone([("this", "DT"), ("guy", "NN")])
    (True, False)
    """
    if not tagged or tagged[0][0] not in PRONOUN_STARTS:
        return False
    return len(tagged) == 1 or tagged[1][1] not in NOUN | {"JJ", "JJR", "JJS", "CD", "VBG", "VBN"}


GENDERED = {**dict.fromkeys("man men boy boys guy guys gentleman gentlemen father son husband brother king".split(),
                            "m"),
            **dict.fromkeys("woman women girl girls lady ladies mother daughter wife sister queen".split(), "f")}
GENDER_PRONOUNS = {**dict.fromkeys("he him his himself".split(), "m"),
                   **dict.fromkeys("she her hers herself".split(), "f")}


SINGULAR_BEINGS = frozenset("man woman boy girl guy lady person child kid dog".split())  # "some man standing"
SINGULAR_GENDERED = frozenset("man boy guy gentleman father son husband brother king woman girl lady mother daughter "
                              "wife sister queen".split())


def _antecedentless(tagged: list[tuple[str, str]]) -> set[str]:
    """Gendered pronouns (he, his, her, …) with no singular noun, noun of their gender or pronoun of their gender
    before them: "His jersey is on the chair", "The children are her kids".

    >>> _antecedentless([("the", "DT"), ("children", "NNS"), ("are", "VBP"), ("her", "PRP$"), ("kids", "NNS")])
    {'her'}
    >>> _antecedentless([("a", "DT"), ("child", "NN"), ("rides", "VBZ"), ("his", "PRP$"), ("bike", "NN")])
    set()
    """
    out, seen = set(), set()
    for w, t in tagged:
        gender = GENDER_PRONOUNS.get(w)
        if gender is not None and gender not in seen and "any" not in seen:
            out.add(w)
        if gender is not None:
            seen.add(gender)
        elif w in GENDERED:
            seen.add(GENDERED[w])
        elif t in ("NN", "NNP") and w not in INDEFINITE_PRONOUNS | {"one"}:
            seen.add("any")
    return out


def _trailing_adverbs(x: list[tuple[str, str]], ops, hw: list[str]) -> set[str]:
    """An inserted noun phrase that drags an -ly adverb of the explanation along: "are people generally together",
    "a person with umbrella absolutely is outside".

    >>> x = [("men", "NNS"), ("are", "VBP"), ("people", "NNS"), ("generally", "RB"), ("together", "RB")]
    >>> _trailing_adverbs(x, [("equal", 0, 2, 0, 2), ("replace", 2, 4, 2, 4), ("equal", 4, 5, 4, 5)], [])
    {'people generally'}
    """
    out = set()
    for op, _, _, j1, j2 in ops:
        if op == "equal" or j2 - j1 < 2:
            continue
        w, t = x[j2 - 1]
        if t.startswith("RB") and w.endswith("ly") and w not in hw and \
                phrase_kind([t2 for _, t2 in x[j1 : j2 - 1]]) == "NP":
            out.add(f"{x[j2 - 2][0]} {w}")
    return out


def _being_as_place(x: list[tuple[str, str]], ops) -> set[str]:
    """A kept in/inside/into before an inserted noun phrase whose head names a person or an animal: a place
    replaced by a being ("is sitting in young male", "is taking place in a woman", "An animal is in dog").

    >>> x = [("someone", "NN"), ("is", "VBZ"), ("sitting", "VBG"), ("in", "IN"), ("young", "JJ"), ("male", "NN")]
    >>> _being_as_place(x, [("equal", 0, 4, 0, 4), ("replace", 4, 7, 4, 6)])
    {'in young male'}
    """
    out = set()
    modifiers = ("DT", "PRP$", "JJ", "JJR", "JJS", "CD", "VBN")
    for op, _, _, j1, j2 in ops:
        if op == "equal" or j2 <= j1:
            continue
        start = j1  # the noun phrase may begin in the kept text: "in a" + "woman"
        while start > 0 and x[start - 1][1] in modifiers:
            start -= 1
        if start == 0 or x[start - 1][0] not in ("in", "inside", "into"):
            continue
        k = start
        while k < len(x) and x[k][1] in modifiers:
            k += 1
        run = k
        while run < len(x) and x[run][1] in NOUN:
            run += 1
        if j1 < run and run > k and x[run - 1][0] in BEING_NOUNS and (run == len(x) or x[run][0] != "'s"):
            out.add(" ".join(w for w, _ in x[start - 1 : run]))
    return out


def _head_agreement(tagged: list[tuple[str, str]]) -> set[str]:
    """The subject's head noun (the last noun before the first verb or preposition) and the first main verb
    disagree in number: "The gentlemen with the red plaid shirt is speaking".

    >>> sorted(_head_agreement([("the", "DT"), ("gentlemen", "NNS"), ("with", "IN"), ("a", "DT"), ("hat", "NN"),
    ...                         ("is", "VBZ"), ("speaking", "VBG")]))
    ['gentlemen … is']
    """
    end, main = _subject_end(tagged), main_finite(tagged)
    if end is None or not main:
        return set()
    nouns = [w for w, t in tagged[:end] if t in NOUN]
    verb = tagged[main[0]][0]
    if nouns and verb in ("is", "was") and _plural_form(nouns[-1]) and nouns[-1] not in PLURAL_MODIFIERS \
            and not any(w in ("and", "or") for w, _ in tagged[:end]):
        return {f"{nouns[-1]} … {verb}"}
    return set()


def _pronoun_for_noun(h: list[tuple[str, str]], x: list[tuple[str, str]], ops) -> set[str]:
    """An inserted it/them/him in place of text that named a noun: its referent is gone ("watching a sunset" ->
    "watching it", "teaching the boy how to …" -> "teaching him").

    >>> h = [("men", "NNS"), ("watching", "VBG"), ("a", "DT"), ("sunset", "NN")]
    >>> x = [("men", "NNS"), ("watching", "VBG"), ("it", "PRP")]
    >>> _pronoun_for_noun(h, x, [("equal", 0, 2, 0, 2), ("replace", 2, 4, 2, 3)])
    {'it'}
    """
    out = set()
    for op, i1, i2, j1, j2 in ops:
        if op == "replace" and any(t in NOUN for _, t in h[i1:i2]):
            out |= {w for w, _ in x[j1:j2] if w in ("it", "them", "him") and w not in {v for v, _ in h}}
    # an inserted object pronoun right before a kept noun: "a child enjoys it summer vacation"
    inserted = {j for op, _, _, j1, j2 in ops if op != "equal" for j in range(j1, j2)}
    out |= {f"{w} {x[j + 1][0]}" for j, (w, _) in enumerate(x[:-1])
            if j in inserted and w in ("it", "them", "him") and x[j + 1][1] in NOUN and j + 1 not in inserted}
    return out


def _pronoun_gender(x: list[tuple[str, str]], h: list[tuple[str, str]], ops) -> set[str]:
    """A gendered noun replaced by one of the other gender while a kept pronoun still refers to the old one:
    "A man smiles to his left" -> "A woman smiles to his left"; an inserted possessive that disagrees with the
    kept singular subject: "She was calling their husband", "A girl … his".

    >>> h = [("a", "DT"), ("man", "NN"), ("smiles", "VBZ"), ("to", "TO"), ("his", "PRP$"), ("left", "NN")]
    >>> x = [("a", "DT"), ("woman", "NN"), ("smiles", "VBZ"), ("to", "TO"), ("his", "PRP$"), ("left", "NN")]
    >>> sorted(_pronoun_gender(x, h, [("equal", 0, 1, 0, 1), ("replace", 1, 2, 1, 2), ("equal", 2, 6, 2, 6)]))
    ['his']
    """
    kept = {j for op, _, _, j1, j2 in ops if op == "equal" for j in range(j1, j2)}
    out = set()
    for op, i1, i2, j1, j2 in ops:
        if op != "replace":
            continue
        old = {GENDERED[w] for w, _ in h[i1:i2] if w in GENDERED}
        new = {GENDERED[w] for w, _ in x[j1:j2] if w in GENDERED}
        if len(old) == 1 and len(new) == 1 and old != new:
            out |= {w for j, (w, _) in enumerate(x) if j in kept and GENDER_PRONOUNS.get(w) in old}
    # an inserted possessive that disagrees with a kept singular subject ("She was calling their husband")
    subject = next((w for w, _ in x[:2] if w in GENDER_PRONOUNS or w in SINGULAR_GENDERED), None)
    if subject is not None and (0 in kept or 1 in kept):
        gender = GENDER_PRONOUNS.get(subject) or GENDERED[subject]
        inserted = [w for j, (w, _) in enumerate(x) if j not in kept]
        out |= {w for w in inserted if w == "their" or (w == "his" and gender == "f")}
    return out


# Words that talk about the explanation's relation or reasoning, not the scene: spliced in with a span, they leave
# the template's wording in the sentence ("playing in water means you", "another wording for", "a simplified version
# of", "a guy because he is a man"); "word"/"way" only before "for"/"of".
RELATION_WORDS = frozenset("mean means meaning implies imply implied implying indicates indicate wording rewording "
                           "rephrasing rephrase paraphrase paraphrasing synonym synonyms synonymous version "
                           "restatement generalization description descriptions sentence statement because therefore "
                           "thus hence necessarily".split())


def _relation_words(x: list[tuple[str, str]], inserted: list[int], hw: list[str]) -> set[str]:
    """Inserted words of `RELATION_WORDS` the hypothesis does not have (and 'word for', 'way of').

    >>> sorted(_relation_words([("a", "DT"), ("simplified", "JJ"), ("version", "NN"), ("of", "IN")], [1, 2, 3], []))
    ['version']
    """
    out = set()
    for j in inserted:
        w = x[j][0]
        nxt = x[j + 1][0] if j + 1 < len(x) else ""
        if w not in hw and (w in RELATION_WORDS or (w, nxt) in (("word", "for"), ("way", "of"))):
            out.add(w)
    return out


def main_finite(tagged: list[tuple[str, str]]) -> list[int]:
    """Indices of main-clause finite verbs: those with no subordinator, relative pronoun or conjunction between
    them and the previous main verb (or the sentence start; there a conjunction joins subjects).

    >>> main_finite([("an", "DT"), ("adult", "NN"), ("and", "CC"), ("a", "DT"), ("child", "NN"), ("are", "VBP"),
    ...               ("people", "NNS"), ("are", "VBP"), ("on", "IN")])
    [5, 7]
    """
    out: list[int] = []
    for i, (_, t) in enumerate(tagged):
        since = tagged[out[-1] + 1 : i] if out else tagged[:i]
        # before the first verb, and/or/but join the subject's noun phrases ("An adult and two children are …")
        blocking = SUBORDINATORS - {"and", "or", "but"} if not out else SUBORDINATORS
        if t in FINITE and not any(w in blocking for w, _ in since):
            out.append(i)
    return out


def _with_source_tags(x: list[tuple[str, str]], ops, source: list[tuple[str, str]]
                      ) -> tuple[list[tuple[str, str]], set[int]]:
    """`x` with the tags of each inserted run that occurs verbatim in the source text (the explanation the span
    came from) replaced by its tags there: "play soccer" spliced after "The" is tagged NN NN in the
    counterfactual but VB NN in "any boy can play soccer". Also the start indices of the inserted runs that
    follow a determiner in the source ("jumping kick" in "a jumping kick is n't wrestling")."""
    out, src, after_det = list(x), [w for w, _ in source], set()
    for op, _, _, j1, j2 in ops:
        if op == "equal" or j2 <= j1:
            continue
        run = [w for w, _ in x[j1:j2]]
        for k in range(len(src) - len(run) + 1):
            if src[k : k + len(run)] == run:
                out[j1:j2] = source[k : k + len(run)]
                if k > 0 and source[k - 1][0] in DETERMINER_WORDS:
                    after_det.add(j1)
                break
    return out, after_det


def _intransitive_objects(x: list[tuple[str, str]], inserted: set[int]) -> set[str]:
    """An inserted intransitive verb (`INTRANSITIVE_FORMS`, not after a determiner), maybe with its particle
    ("sitting down"), right before a noun phrase.

    >>> sorted(_intransitive_objects([("a", "DT"), ("man", "NN"), ("is", "VBZ"), ("speaking", "VBG"), ("a", "DT"),
    ...                               ("group", "NN")], {3}))
    ['speaking a']
    """
    out = set()
    for j in sorted(inserted):
        w = x[j][0]
        if w not in INTRANSITIVE_FORMS or j + 1 >= len(x) or (j > 0 and x[j - 1][1] in ("DT", "PRP$")):
            continue
        k = j + 1 + (x[j + 1][0] in PARTICLES and j + 2 < len(x))  # "sitting down three red balls"
        nxt, t = x[k]
        if t in NOUN | {"DT", "PRP$", "CD"} and nxt not in INTRANSITIVE_OBJECTS | BARE_PREDICATE_NOUNS and \
                not any(w2 in INTRANSITIVE_OBJECTS for w2, _ in x[k : k + 3]) and k not in inserted:
            out.add(" ".join(v for v, _ in x[j : k + 1]))
    return out


# Prepositions of place: a copula's predicate ("are in the park"; not "are during a game").
PLACE_PREPOSITIONS = PREPOSITIONS - {"for", "of", "from", "without", "toward", "towards"} | \
    {"inside", "outside", "atop", "beneath", "underneath", "next", "amid", "amidst", "within"}
# Words after which an adjective or participle alone is an object ("dressed in black", "at least", "for free").
ADJECTIVE_OBJECT_PREPOSITIONS = frozenset("than as like".split())
COLOURS = frozenset("black white red blue green yellow orange purple pink brown gray grey silver gold".split())


def _preposition_objects(x: list[tuple[str, str]], ops) -> set[str]:
    """A kept preposition right before inserted text that is no noun phrase (a verb, an adjective or a participle
    that reaches no noun, a second preposition): "playing with limited to machine guns".

    >>> ops = [("equal", 0, 5, 0, 5), ("insert", 5, 5, 5, 7), ("equal", 5, 8, 7, 10)]
    >>> sorted(_preposition_objects([("the", "DT"), ("children", "NNS"), ("are", "VBP"), ("playing", "VBG"),
    ...     ("with", "IN"), ("limited", "JJ"), ("to", "TO"), ("machine", "NN"), ("guns", "NNS"), (".", ".")], ops))
    ['with limited']
    """
    out = set()
    for op, _, _, j1, j2 in ops:
        if op not in ("insert", "replace") or j1 == 0 or j2 <= j1:
            continue
        prep, first = x[j1 - 1][0], x[j1][0]
        if prep not in PREPOSITIONS or prep in ADJECTIVE_OBJECT_PREPOSITIONS or first in COLOURS:
            continue
        kind = phrase_kind([t for _, t in x[j1:]], after_determiner=False)
        if kind in ("V", "VBN", "ADJ", "PP"):
            out.add(f"{prep} {first}")
    return out


PARTICLES = frozenset("down up off out away back around over".split())


def _orphaned_particles(h: list[tuple[str, str]], x: list[tuple[str, str]], ops) -> set[str]:
    """A verb's particle kept after inserted text that now ends in a noun: "A boy is sitting down" -> "A boy
    sitting in the empty stadium down".

    >>> h = [("boy", "NN"), ("sitting", "VBG"), ("down", "RP")]
    >>> x = [("boy", "NN"), ("sitting", "VBG"), ("in", "IN"), ("the", "DT"), ("stadium", "NN"), ("down", "RP")]
    >>> _orphaned_particles(h, x, [("equal", 0, 2, 0, 2), ("insert", 2, 2, 2, 5), ("equal", 2, 3, 5, 6)])
    {'stadium down'}
    """
    out = set()
    for op, _, i2, j1, j2 in ops:
        if op in ("insert", "replace") and j2 < len(x) and i2 < len(h) and i2 > 0 and j2 > j1 and \
                x[j2][0] in PARTICLES and h[i2][0] == x[j2][0] and h[i2 - 1][1].startswith("VB") and \
                x[j2 - 1][1] in NOUN:
            out.add(f"{x[j2 - 1][0]} {x[j2][0]}")
    return out


def _orphaned_objects(h: list[tuple[str, str]], x: list[tuple[str, str]], ops) -> set[str]:
    """The replaced text ended in a preposition whose noun phrase follows and stays; the inserted text ends in an
    adjective, adverb or noun, which takes no object: "milling about the city street" -> "being busy the city
    street". (An inserted verb or preposition may take it: "looking at the dog" -> "petting the dog", "standing
    inside a restaurant" -> "sitting outside a restaurant", whatever the tag of "outside".)

    >>> h = [("people", "NNS"), ("are", "VBP"), ("milling", "VBG"), ("about", "IN"), ("the", "DT"), ("street", "NN")]
    >>> x = [("people", "NNS"), ("are", "VBP"), ("being", "VBG"), ("busy", "JJ"), ("the", "DT"), ("street", "NN")]
    >>> sorted(_orphaned_objects(h, x, [("equal", 0, 2, 0, 2), ("replace", 2, 4, 2, 4), ("equal", 4, 6, 4, 6)]))
    ['busy the']
    """
    out = set()
    for op, i1, i2, j1, j2 in ops:
        if op != "replace" or i2 >= len(h) or j2 >= len(x) or i2 <= i1 or j2 <= j1:
            continue
        if h[i2 - 1][1] in ("IN", "RP") and h[i2][1] in NOUN | {"DT", "PRP$", "CD"} and \
                x[j2 - 1][1] in NOUN | {"JJ", "JJR", "JJS", "RB", "RBR", "RBS"} and x[j2 - 1][0] not in PREPOSITIONS:
            out.add(f"{x[j2 - 1][0]} {x[j2][0]}")
    return out


def _content_stems(text: str) -> set[str]:
    return {stem(w) for w in clitic_tokens(str(text).lower()) if w.isalpha() and w not in FUNCTION_WORDS}


def other_claims_kept(premise: str, hypothesis: str, x_cf: str, explanation: str) -> list[str]:
    """Claims of an explanation (clauses split at ';' and ',') that the counterfactual leaves
    unapplied: a clause that shares no
    word with what the rewrite changed, relates a word found only in the premise to one found only in the
    hypothesis, and whose hypothesis word x_cf still holds. Returns those kept hypothesis words (stems).

    >>> other_claims_kept("A man fixing a hotdog .", "the child was happy", "the man was happy",
    ...                   "a child and man are not the same ; someone fixing a hotdog is not necessarily happy .")
    ['happi']
    >>> other_claims_kept("A man fixing a hotdog .", "the child was happy", "the man was happy",
    ...                   "a child and man are not the same .")
    []
    >>> other_claims_kept("Businessman walking .", "A guy jogs in a sweatsuit .", "A guy walks in a sweatsuit .",
    ...                   "a man is either walking or jogging , and a businessman would not wear a sweatsuit .")
    ['sweatsuit']
    """
    clauses = [c for c in re.split(r";|,", str(explanation)) if c.strip()]
    if len(clauses) < 2:
        return []
    p, h, x = _content_stems(premise), _content_stems(hypothesis), _content_stems(x_cf)
    changed = (h - x) | (x - h)
    kept: set[str] = set()
    for clause in clauses:
        words = _content_stems(clause)
        hyp_only, premise_only = (words & h) - p, (words & p) - h
        if not words & changed and premise_only and hyp_only & x:
            kept |= hyp_only & x
    return sorted(kept)


def check_counterfactual(hypothesis: str, x_cf: str | None, slot: str = "E", tagger=None,
                         source: str | None = None, premise: str | None = None) -> Validity:
    """Run every check of the module table on `x_cf` against its `hypothesis` (see module doc). `source`:
    the explanation the spans came from; inserted words found in it verbatim keep the tags they have there.
    With `premise` and `source`, slots C and N[A] (whose y_cf is entailment) are also checked for
    `other_claims_kept`.

    >>> check_counterfactual("A man is at a restaurant .", "A man is at a at a restaurant .").reason
    "repeated_ngram: 'at a'; determiner_no_noun: 'a at'"
    >>> check_counterfactual("The men are older .", "The in their later years .").status
    'malformed'
    """
    if x_cf is None or not str(x_cf).strip():
        return Validity("malformed", "empty")
    problems: list[str] = []
    if untokenize_ptb(x_cf) == untokenize_ptb(hypothesis) and slot != "N[B]":
        problems.append("unchanged: counterfactual = hypothesis")
    h, x = tag(hypothesis, tagger), tag(x_cf, tagger)
    hw, xw = [w for w, _ in h], [w for w, _ in x]
    if not x:
        return Validity("malformed", "empty")
    ops = difflib.SequenceMatcher(a=hw, b=xw, autojunk=False).get_opcodes()
    source_after_det: set[int] = set()
    if source:
        x, source_after_det = _with_source_tags(x, ops, tag(source, tagger))
    inserted = [j for op, _, _, j1, j2 in ops if op != "equal" for j in range(j1, j2)]
    kept = [j for op, _, _, j1, j2 in ops if op == "equal" for j in range(j1, j2)]

    if slot in ("E", "C") and sum(w not in FUNCTION_WORDS for w in hw) > 1 and \
            not any(xw[j] not in FUNCTION_WORDS for j in kept):
        problems.append("nothing_kept: the whole hypothesis was replaced")
    rep = _adjacent_repeats(xw) - _adjacent_repeats(hw)
    if rep:
        problems.append("repeated_ngram: " + ", ".join(repr(r) for r in sorted(rep)))
    h_count: dict[str, int] = {}
    for w in hw:
        h_count[stem(w)] = h_count.get(stem(w), 0) + 1
    x_count: dict[str, int] = {}
    for w in xw:
        x_count[stem(w)] = x_count.get(stem(w), 0) + 1
    kept_stems = {stem(xw[j]) for j in kept}
    doubled = sorted({xw[j] for j in inserted if xw[j] not in FUNCTION_WORDS and stem(xw[j]) in kept_stems
                      and x_count[stem(xw[j])] > h_count.get(stem(xw[j]), 0)})
    if doubled and not rep:
        problems.append("repeated_word: " + ", ".join(repr(w) for w in doubled))
    det = _determiner_problems(x) - _determiner_problems(h)
    if det:
        problems.append("determiner_no_noun: " + ", ".join(repr(d) for d in sorted(det)))
    bare = _bare_nouns(x) - _bare_nouns(h)
    if bare:
        problems.append("copula_bare_noun: " + ", ".join(repr(b) for b in sorted(bare)))
    cop = _copula_verbs(x) - _copula_verbs(h)
    if cop:
        problems.append("copula_verb: " + ", ".join(repr(c) for c in sorted(cop)))
    agree = (_agreement(x) | _head_agreement(x)) - (_agreement(h) | _head_agreement(h))
    if agree:
        problems.append("agreement: " + ", ".join(repr(a) for a in sorted(agree)))
    objects = _intransitive_objects(x, set(inserted))
    if objects:
        problems.append("intransitive_object: " + ", ".join(repr(o) for o in sorted(objects)))
    if h and h[0][1] in SUBJECT_START and (x[0][1] in BAD_START or (x[0][1] == "VBG" and h[0][1] != "VBG")):
        problems.append(f"subjectless: starts with {x[0][0]!r} ({x[0][1]})")
    elif _existential_without_subject(x) and not _existential_without_subject(h):
        problems.append(f"subjectless: {' '.join(xw[:3])!r} has no noun phrase after 'there'")
    if _pronoun_alone(x) and (not _pronoun_alone(h) or xw[0] != hw[0]):  # "they are singing" -> "it is in …"
        problems.append(f"unresolved_pronoun: {xw[0]!r}")
    elif _pronoun_for_noun(h, x, ops) or (_antecedentless(x) - _antecedentless(h)):
        lost = _pronoun_for_noun(h, x, ops) | (_antecedentless(x) - _antecedentless(h))
        problems.append("unresolved_pronoun: " + ", ".join(repr(w) for w in sorted(lost)))
    if main_finite(h) and not main_finite(x) and not _participle_caption(x):
        problems.append("no_finite_verb")
    if inserted and len(main_finite(x)) > len(main_finite(h)) and \
            any(x[j][1] in FINITE for j in inserted):
        problems.append("clause_inserted: " + repr(" ".join(xw[j] for j in inserted)))
    quotes = [q for q in ("'", "`", "``", "''", '"') if str(x_cf).split().count(q) > str(hypothesis).split().count(q)]
    if quotes:
        problems.append("stray_quote: " + ", ".join(repr(q) for q in quotes))
    trailing = _trailing_adverbs(x, ops, hw)
    if trailing:
        problems.append("phrase_kind_mismatch: " + ", ".join(repr(a) for a in sorted(trailing)))
    beings = _being_as_place(x, ops)
    if beings:
        problems.append("being_as_place: " + ", ".join(repr(b) for b in sorted(beings)))
    relation = _relation_words(x, inserted, hw)
    if relation:
        problems.append("relation_words: " + ", ".join(repr(w) for w in sorted(relation)))
    gender = _pronoun_gender(x, h, ops)
    if gender:
        problems.append("pronoun_gender: " + ", ".join(repr(w) for w in sorted(gender)))
    preps = _preposition_objects(x, ops)
    if preps:
        problems.append("preposition_object: " + ", ".join(repr(o) for o in sorted(preps)))
    orphaned = _orphaned_objects(h, x, ops) | _orphaned_particles(h, x, ops)
    if orphaned:
        problems.append("orphaned_object: " + ", ".join(repr(o) for o in sorted(orphaned)))
    if premise is not None and source and slot in ("C", "N[A]"):
        kept_claims = other_claims_kept(premise, hypothesis, x_cf, source)
        if kept_claims:
            problems.append("other_claim_kept: " + ", ".join(repr(w) for w in kept_claims))
    last_x, last_h = x[-1], h[-1] if h else ("", "")
    if (last_x[1] in BAD_END or last_x[0] in SUBJECT_PRONOUNS or last_x[0] in COPULAS) and \
            (last_x[1] != last_h[1] or last_x[0] != last_h[0]):
        problems.append(f"dangling_end: {last_x[0]!r}")
    for op, i1, i2, j1, j2 in ops:
        if op != "replace":
            continue
        before = hw[i1 - 1] if i1 > 0 else ""
        after_det = i1 > 0 and h[i1 - 1][1] in ("DT", "PRP$")
        kh = phrase_kind([t for _, t in h[i1:i2]], after_det)
        kx = phrase_kind([t for _, t in x[j1:j2]], after_det)
        alone = phrase_kind([t for _, t in tag(" ".join(xw[j1:j2]), tagger)], after_det)  # tagged out of context
        predicate = before in COPULAS
        if i1 > 0 and h[i1 - 1][1] in NOUN and {kh, kx} <= POSTMODIFIER_KINDS and _subject_end(h) == i1:
            continue  # after the subject, a participle and a prepositional phrase both modify it ("boy in a swing")
        if slot.startswith("N[") and kh == "V" and kx == "VBG" and _subject_end(h) == i1 and \
                _participle_caption(x) and not any(t in FINITE for _, t in x):
            # a neutral counterfactual may restate x as a caption (Table 14: "A track athlete carrying …"); a C/E
            # substitution keeps x's syntactic structure (§2.4)
            continue
        verbal_for_noun = {kh, alone} in ({"NP", "V"}, {"NP", "VBG"})
        prenominal = i2 < len(h) and j2 < len(x) and h[i2][1] in NOUN and x[j2][1] in NOUN
        one_word = [t for _, t in h[i1:i2] + x[j1:j2] if t not in ("DT", "PRP$")]
        if prenominal and {kh, kx} == {"ADJ", "NP"} and len(one_word) == 2:
            continue  # one modifier word for another before the same noun ("a blue scarf" / "an orange scarf")
        # in the explanation the inserted text followed a determiner: a noun phrase ("a jumping kick"), now in a
        # verb's place without its determiner ("is jumping kick with bears")
        nouns = [w for w, t in x[j1:j2] if t in NOUN]
        bare_np_for_verb = j1 in source_after_det and kh in ("V", "VBG") and x[j1][1] not in ("DT", "PRP$") and \
            phrase_kind([t for _, t in x[j1:j2]], True) == "NP" and bool(nouns) and not _plural_form(nouns[-1])
        # after a copula, a progressive verb replaced by a time/other non-place phrase or a bare noun phrase: "are
        # during a game", "are people"
        odd_predicate = predicate and kh == "VBG" and j1 < len(x) and (
            (kx == "PP" and xw[j1] not in PLACE_PREPOSITIONS and xw[j1 : j1 + 2] != ["about", "to"])
            or (kx == "NP" and x[j1][1] in NOUN))
        if odd_predicate:
            kx = "PP" if kx == "PP" else "bare NP"
        if not _kinds_compatible(kh, kx, predicate) or (verbal_for_noun and not predicate) or bare_np_for_verb \
                or odd_predicate:
            kx = kx if not _kinds_compatible(kh, kx, predicate) else "NP" if bare_np_for_verb else alone
            problems.append(f"phrase_kind_mismatch: {' '.join(hw[i1:i2])!r} ({kh}) → {' '.join(xw[j1:j2])!r} ({kx})")
    return Validity("malformed", "; ".join(problems)) if problems else Validity("ok", "")


def check_rows(hypotheses, counterfactuals, slots, sources=None, tagger=None, premises=None) -> list[Validity]:
    """`check_counterfactual` for parallel sequences (one verdict per row; `sources`: the explanations,
    `premises`: the premises)."""
    sources = [None] * len(hypotheses) if sources is None else sources
    premises = [None] * len(hypotheses) if premises is None else premises
    return [check_counterfactual(h, x, s, tagger, z, p)
            for h, x, s, z, p in zip(hypotheses, counterfactuals, slots, sources, premises)]


def check_cached(items) -> list[Validity]:
    """`check_counterfactual` with the default tagger on each (hypothesis, x_cf, slot, source, premise) of `items`,
    kept in the file cache (`filecache.cached_verdicts`: under the items and `filecache.library_state`, so these
    rules and the tagger's data): a warm FTC notebook checks no counterfactual again (~1–3 s in each of 30–32).

    >>> h = "A man is sleeping ."
    >>> [v.status for v in check_cached([(h, "A woman is sleeping .", "C", None, None), (h, "", "C", None, None)])]
    ['ok', 'malformed']
    """
    from .. import filecache

    items = [[None if v is None else str(v) for v in item] for item in items]

    def judge() -> list[tuple[str, str]]:
        from ..data.nltk_data import load_pos_tagger

        load_pos_tagger()  # noted (fetched) here, also when this process loaded the tagger before
        return [(v.status, v.reason) for v in (check_counterfactual(h, x, s, None, z, p) for h, x, s, z, p in items)]

    return [Validity(*v) for v in filecache.cached_verdicts("counterfactual_checks", items, judge,
                                                            "cached counterfactual checks", ("ok", "malformed"))]
