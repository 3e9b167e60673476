"""Detectors of FTC's well-formedness checks (`validity`): each reads a tagged sentence (and, for some, the edit
that made it from the hypothesis) and returns the offending word runs. `validity.check_counterfactual` runs them
on both the hypothesis and its counterfactual and reports only what the rewrite introduced.

>>> sorted(determiner_problems([("the", "DT"), ("in", "IN"), ("their", "PRP$"), ("years", "NNS")]))
['the in']
"""
from __future__ import annotations

from .postag import (
    BARE_PREDICATE_NOUNS,
    FINITE,
    INDEFINITE_PRONOUNS,
    ING_NOUNS,
    NOUN,
    NP_INSIDE,
    SUBORDINATORS,
    main_finite,
    phrase_kind,
    plural_form,
)
from .text import AUXILIARIES

DETERMINER_WORDS = frozenset("a an the his her their its my your our".split())
COPULAS = frozenset("is are was were be being been am".split())
SUBJECT_START = frozenset({"DT", "PDT", "PRP", "PRP$", "CD", "EX", "JJ", "JJR", "JJS"}) | NOUN
BAD_START = frozenset({"VB", "VBZ", "VBP", "VBD", "MD", "IN", "TO", "CC", "VBN", "WDT", "WRB", "WP"})
BAD_END = frozenset({"IN", "TO", "DT", "CC", "PRP$", "MD", "WDT", "WP", "WRB", "PDT"})
SUBJECT_PRONOUNS = frozenset("he she they we i".split())
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

_COMPATIBLE = {frozenset(p) for p in (("ADJ", "VBN"), ("ADJ", "ADV"), ("PP", "ADV"), ("NP", "DET"))}


def kinds_compatible(a: str, b: str, predicate: bool) -> bool:
    if a == b or frozenset((a, b)) in _COMPATIBLE or "OTHER" in (a, b):
        return True
    return predicate and a in PREDICATE_KINDS and b in PREDICATE_KINDS


def adjacent_repeats(ws: list[str]) -> set[str]:
    out = set()
    for n in range(1, 5):
        for i in range(len(ws) - 2 * n + 1):
            gram = ws[i : i + n]
            if gram == ws[i + n : i + 2 * n] and (n > 1 or gram[0] not in ("that", "had")):
                out.add(" ".join(gram))
    return out


def determiner_problems(tagged: list[tuple[str, str]]) -> set[str]:
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


def bare_nouns(tagged: list[tuple[str, str]]) -> set[str]:
    """is/are (+ adverbs) + singular noun without determiner; is/was (+ adverbs) + a plural or -s form.

    >>> sorted(bare_nouns([("no", "DT"), ("one", "NN"), ("is", "VBZ"), ("people", "NNS"), ("riding", "VBG")]))
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
        singular_noun = t == "NN" and not plural_form(nxt)
        plural_after_is = w in ("is", "was") and (t == "NNS" or (
            t not in ("RB", "RBR", "RBS", "IN", "TO", "DT", "PRP", "PRP$", "CC", "WDT")
            and plural_form(nxt)))
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


def copula_verbs(tagged: list[tuple[str, str]]) -> set[str]:
    """Copula + (adverb) + verb, subordinator or subject pronoun; copula + to + verb; copula + being + preposition;
    a lexical verb + a bare or
    finite verb; two -ing verbs in a row unless the first takes a gerund (`GERUND_TAKING`).

    >>> sorted(copula_verbs([("men", "NNS"), ("are", "VBP"), ("rephrasing", "VBG"), ("doing", "VBG")]))
    ['rephrasing doing']
    >>> copula_verbs([("men", "NNS"), ("are", "VBP"), ("going", "VBG"), ("fishing", "VBG")])
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


def existential_without_subject(tagged: list[tuple[str, str]]) -> bool:
    """'there is/are/was/were' right before a preposition, adverb or verb: "There are inside a restaurant ."

    >>> existential_without_subject([("there", "EX"), ("are", "VBP"), ("inside", "IN"), ("a", "DT")])
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
            if not plural_form(head) and head not in COLLECTIVE:
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
    if head in PLURAL_MODIFIERS or not (head_tag == "NNS" or plural_form(head)):
        return set()
    before = tagged[i - 1] if i > 0 else ("", "")
    object_position = before[0] not in SUBORDINATORS and (before[1].startswith("VB") or before[1] in ("IN", "TO"))
    verb_follows = k < len(tagged) and tagged[k][1] in FINITE
    # the key is the noun run alone, so that a changed adjective before it ("an angry man grills" -> "a happy man
    # grills", where the tagger reads "grills" as a plural) does not make it new
    return {" ".join(w for w, _ in tagged[j:k])} if object_position or verb_follows else set()


def agreement(tagged: list[tuple[str, str]]) -> set[str]:
    """Number disagreements (`validity` module table): determiner/numeral/noun/verb pairs, and `_numeral_heads`.

    >>> sorted(agreement([("some", "DT"), ("two", "CD"), ("men", "NNS"), ("standing", "VBG")]))
    ['some two']
    >>> agreement([("group", "NN"), ("of", "IN"), ("people", "NNS"), ("is", "VBZ"), ("riding", "VBG")])
    set()
    >>> sorted(agreement([("a", "DT"), ("rescue", "NN"), ("workers", "NNS"), ("searches", "VBZ")]))
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


def subject_end(tagged: list[tuple[str, str]]) -> int | None:
    """Index of the first verb or preposition after the first word: where the subject noun phrase ends (the
    tagger's noun/adjective confusions inside it do not matter: "A track athlete(JJ) gets …")."""
    return next((k for k, (w, t) in enumerate(tagged) if k > 0 and (t.startswith("VB") or t == "MD"
                                                                    or w in PREPOSITIONS)), None)


def participle_caption(tagged: list[tuple[str, str]]) -> bool:
    """An SNLI-style caption: a noun phrase, then right away a participle or a preposition ("A track athlete
    carrying a large pole", Table 14; "Men on bikes")."""
    tags = [t for _, t in tagged]
    if phrase_kind(tags) != "NP":
        return False
    end = subject_end(tagged)
    return end is not None and (tags[end] in ("VBG", "VBN") or tagged[end][0] in PREPOSITIONS) and \
        any(t in NOUN or t in ("PRP", "CD") for t in tags[:end])  # "The performing auto repair": no noun first


def pronoun_alone(tagged: list[tuple[str, str]]) -> bool:
    """The text starts with a pronoun standing for a noun phrase ("It is …"), not a determiner ("This guy …").

    >>> pronoun_alone([("it", "PRP"), ("is", "VBZ")]), pronoun_alone([("this", "DT"), ("guy", "NN")])
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


def antecedentless(tagged: list[tuple[str, str]]) -> set[str]:
    """Gendered pronouns (he, his, her, …) with no singular noun, noun of their gender or pronoun of their gender
    before them: "His jersey is on the chair", "The children are her kids".

    >>> antecedentless([("the", "DT"), ("children", "NNS"), ("are", "VBP"), ("her", "PRP$"), ("kids", "NNS")])
    {'her'}
    >>> antecedentless([("a", "DT"), ("child", "NN"), ("rides", "VBZ"), ("his", "PRP$"), ("bike", "NN")])
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


def trailing_adverbs(x: list[tuple[str, str]], ops, hw: list[str]) -> set[str]:
    """An inserted noun phrase that drags an -ly adverb of the explanation along: "are people generally together",
    "a person with umbrella absolutely is outside".

    >>> x = [("men", "NNS"), ("are", "VBP"), ("people", "NNS"), ("generally", "RB"), ("together", "RB")]
    >>> trailing_adverbs(x, [("equal", 0, 2, 0, 2), ("replace", 2, 4, 2, 4), ("equal", 4, 5, 4, 5)], [])
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


def being_as_place(x: list[tuple[str, str]], ops) -> set[str]:
    """A kept in/inside/into before an inserted noun phrase whose head names a person or an animal: a place
    replaced by a being ("is sitting in young male", "is taking place in a woman", "An animal is in dog").

    >>> x = [("someone", "NN"), ("is", "VBZ"), ("sitting", "VBG"), ("in", "IN"), ("young", "JJ"), ("male", "NN")]
    >>> being_as_place(x, [("equal", 0, 4, 0, 4), ("replace", 4, 7, 4, 6)])
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


def head_agreement(tagged: list[tuple[str, str]]) -> set[str]:
    """The subject's head noun (the last noun before the first verb or preposition) and the first main verb
    disagree in number: "The gentlemen with the red plaid shirt is speaking".

    >>> sorted(head_agreement([("the", "DT"), ("gentlemen", "NNS"), ("with", "IN"), ("a", "DT"), ("hat", "NN"),
    ...                         ("is", "VBZ"), ("speaking", "VBG")]))
    ['gentlemen … is']
    """
    end, main = subject_end(tagged), main_finite(tagged)
    if end is None or not main:
        return set()
    nouns = [w for w, t in tagged[:end] if t in NOUN]
    verb = tagged[main[0]][0]
    if nouns and verb in ("is", "was") and plural_form(nouns[-1]) and nouns[-1] not in PLURAL_MODIFIERS \
            and not any(w in ("and", "or") for w, _ in tagged[:end]):
        return {f"{nouns[-1]} … {verb}"}
    return set()


def pronoun_for_noun(h: list[tuple[str, str]], x: list[tuple[str, str]], ops) -> set[str]:
    """An inserted it/them/him in place of text that named a noun: its referent is gone ("watching a sunset" ->
    "watching it", "teaching the boy how to …" -> "teaching him").

    >>> h = [("men", "NNS"), ("watching", "VBG"), ("a", "DT"), ("sunset", "NN")]
    >>> x = [("men", "NNS"), ("watching", "VBG"), ("it", "PRP")]
    >>> pronoun_for_noun(h, x, [("equal", 0, 2, 0, 2), ("replace", 2, 4, 2, 3)])
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


def pronoun_gender(x: list[tuple[str, str]], h: list[tuple[str, str]], ops) -> set[str]:
    """A gendered noun replaced by one of the other gender while a kept pronoun still refers to the old one:
    "A man smiles to his left" -> "A woman smiles to his left"; an inserted possessive that disagrees with the
    kept singular subject: "She was calling their husband", "A girl … his".

    >>> h = [("a", "DT"), ("man", "NN"), ("smiles", "VBZ"), ("to", "TO"), ("his", "PRP$"), ("left", "NN")]
    >>> x = [("a", "DT"), ("woman", "NN"), ("smiles", "VBZ"), ("to", "TO"), ("his", "PRP$"), ("left", "NN")]
    >>> sorted(pronoun_gender(x, h, [("equal", 0, 1, 0, 1), ("replace", 1, 2, 1, 2), ("equal", 2, 6, 2, 6)]))
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


def relation_words(x: list[tuple[str, str]], inserted: list[int], hw: list[str]) -> set[str]:
    """Inserted words of `RELATION_WORDS` the hypothesis does not have (and 'word for', 'way of').

    >>> sorted(relation_words([("a", "DT"), ("simplified", "JJ"), ("version", "NN"), ("of", "IN")], [1, 2, 3], []))
    ['version']
    """
    out = set()
    for j in inserted:
        w = x[j][0]
        nxt = x[j + 1][0] if j + 1 < len(x) else ""
        if w not in hw and (w in RELATION_WORDS or (w, nxt) in (("word", "for"), ("way", "of"))):
            out.add(w)
    return out


def with_source_tags(x: list[tuple[str, str]], ops, source: list[tuple[str, str]]
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


def intransitive_objects(x: list[tuple[str, str]], inserted: set[int]) -> set[str]:
    """An inserted intransitive verb (`INTRANSITIVE_FORMS`, not after a determiner), maybe with its particle
    ("sitting down"), right before a noun phrase.

    >>> sorted(intransitive_objects([("a", "DT"), ("man", "NN"), ("is", "VBZ"), ("speaking", "VBG"), ("a", "DT"),
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


def preposition_objects(x: list[tuple[str, str]], ops) -> set[str]:
    """A kept preposition right before inserted text that is no noun phrase (a verb, an adjective or a participle
    that reaches no noun, a second preposition): "playing with limited to machine guns".

    >>> ops = [("equal", 0, 5, 0, 5), ("insert", 5, 5, 5, 7), ("equal", 5, 8, 7, 10)]
    >>> sorted(preposition_objects([("the", "DT"), ("children", "NNS"), ("are", "VBP"), ("playing", "VBG"),
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


def orphaned_particles(h: list[tuple[str, str]], x: list[tuple[str, str]], ops) -> set[str]:
    """A verb's particle kept after inserted text that now ends in a noun: "A boy is sitting down" -> "A boy
    sitting in the empty stadium down".

    >>> h = [("boy", "NN"), ("sitting", "VBG"), ("down", "RP")]
    >>> x = [("boy", "NN"), ("sitting", "VBG"), ("in", "IN"), ("the", "DT"), ("stadium", "NN"), ("down", "RP")]
    >>> orphaned_particles(h, x, [("equal", 0, 2, 0, 2), ("insert", 2, 2, 2, 5), ("equal", 2, 3, 5, 6)])
    {'stadium down'}
    """
    out = set()
    for op, _, i2, j1, j2 in ops:
        if op in ("insert", "replace") and j2 < len(x) and i2 < len(h) and i2 > 0 and j2 > j1 and \
                x[j2][0] in PARTICLES and h[i2][0] == x[j2][0] and h[i2 - 1][1].startswith("VB") and \
                x[j2 - 1][1] in NOUN:
            out.add(f"{x[j2 - 1][0]} {x[j2][0]}")
    return out


def orphaned_objects(h: list[tuple[str, str]], x: list[tuple[str, str]], ops) -> set[str]:
    """The replaced text ended in a preposition whose noun phrase follows and stays; the inserted text ends in an
    adjective, adverb or noun, which takes no object: "milling about the city street" -> "being busy the city
    street". (An inserted verb or preposition may take it: "looking at the dog" -> "petting the dog", "standing
    inside a restaurant" -> "sitting outside a restaurant", whatever the tag of "outside".)

    >>> h = [("people", "NNS"), ("are", "VBP"), ("milling", "VBG"), ("about", "IN"), ("the", "DT"), ("street", "NN")]
    >>> x = [("people", "NNS"), ("are", "VBP"), ("being", "VBG"), ("busy", "JJ"), ("the", "DT"), ("street", "NN")]
    >>> sorted(orphaned_objects(h, x, [("equal", 0, 2, 0, 2), ("replace", 2, 4, 2, 4), ("equal", 4, 6, 4, 6)]))
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
