"""POS tags for FTC's well-formedness checks: NLTK's averaged perceptron tagger, corrected where it misreads
rewritten captions, and the phrase kinds and main-clause verbs the checks read off the tags.

The tagger (data mirror, `load_pos_tagger`) is trained on newswire; spliced counterfactuals are not. `tag` fixes
what it gets wrong there: the word after a modal (and its adverbs) is a base verb ("can not simultaneously kick":
the tagger says JJ), -ing words it calls nouns are verbs unless common -ing nouns ("a walking while"), unknown
agent nouns it calls adjectives are nouns ("is surfer"), prepositions it does not know are prepositions.

>>> tag("A man can not simultaneously kick .")[5]
('kick', 'VB')
>>> phrase_kind([t for _, t in tag("a jumping kick")])
'NP'
"""
from __future__ import annotations

from functools import lru_cache

from ..text import clitic_tokens

FINITE = frozenset({"VBZ", "VBP", "VBD", "MD"})
NOUN = frozenset({"NN", "NNS", "NNP", "NNPS"})
# Tags a noun phrase may hold between its determiner and its noun.
NP_INSIDE = frozenset({"JJ", "JJR", "JJS", "RB", "RBR", "RBS", "CD", "VBN", "VBG", "CC", "POS", "HYPH", ","})
# A main-clause verb after one of these belongs to a subordinate or coordinate clause.
SUBORDINATORS = frozenset("who that which while and or but as because when where if since whose whom so".split())
# Singular nouns that read well right after a copula without a determiner ("is home", "are part of").
BARE_PREDICATE_NOUNS = frozenset("home outside inside part alone asleep awake downstairs upstairs indoors outdoors "
                                 "abroad ashore afloat aboard nearby there here".split())
# Words ending in -s that are not plurals after a copula ("is outdoors", "is sideways", "is lots of fun").
NOT_PLURAL_S = frozenset("lots always perhaps nowadays sideways afterwards towards backwards forwards upwards "
                         "downwards outwards besides whereas canvas christmas".split()) | BARE_PREDICATE_NOUNS
IRREGULAR_PLURALS = frozenset("men women children people feet teeth mice geese police sheep fish deer cattle "
                              "clergy".split())
INDEFINITE_PRONOUNS = frozenset("someone somebody everyone everybody anyone anybody nobody".split())


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

_TAGGER = None


def _default_tagger():
    global _TAGGER
    if _TAGGER is None:
        from ..data.nltk_data import load_pos_tagger

        _TAGGER = load_pos_tagger()
    return _TAGGER


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
        if out[i - 1][1] in ("IN", "TO") and (out[i][1] == "VBZ" or (out[i][1] == "VB" and plural_form(out[i][0]))):
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


def plural_form(w: str) -> bool:
    """Whether `w` looks like a plural noun (or an -s verb) by its form alone.

    >>> [plural_form(w) for w in ("runs", "synonyms", "people", "firemen", "girl", "glass", "nervous", "outdoors")]
    [True, True, True, True, False, False, False, False]
    """
    if w in IRREGULAR_PLURALS or (w.endswith("men") and len(w) > 4):
        return True
    return len(w) > 3 and w.endswith("s") and w not in NOT_PLURAL_S and \
        not w.endswith(("ss", "us", "is", "ous", "ics", "ness", "ways", "wards"))


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
