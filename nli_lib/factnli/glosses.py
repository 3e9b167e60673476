"""WordNet glosses as encyclopedic sentences (`definition_sentences`), the offline pages' "intro summaries".

A gloss is a noun phrase or verb phrase without a subject ("a thoroughfare that is lined with buildings"); a
page needs sentences about its title ("A street is a thoroughfare ..."). Which subject form fits (an article or
none, singular or plural) comes from WordNet's own text (`Countability`) and the gloss; the rules are two rule
tables (`GLOSS_PARTS`, `SUBJECT_FORMS`) that `definition_sentences` shows.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from ..ruletable import RuleTable
from ..text import WORD, letter_tokens
from .senses import leading_label, register_label
from .text import finish, pos_tag, strip_parentheticals

GLOSS_RULES_VERSION = "gloss-rules-v16"  # part of WordNetPages.name (and so of every cache key): bump when rules change
DETERMINERS = {"a", "an", "the", "any", "one", "some", "each", "every", "either", "all", "two"}
_FINITE = ("VBZ", "VBP", "VBD", "MD")


def _article(word: str) -> str:
    from ..decomposer import article

    return article(word)


def definition_sentences(title: str, definition: str, countable=None, body_part: bool = False,
                         mass: bool = False) -> list[str]:
    """A WordNet noun gloss as encyclopedic sentences about `title` (one per ';'-separated part).

    Parentheticals: elaborations are dropped, restricting ones kept (`text.strip_parentheticals`); a leading
    subject-field label becomes a frame ("(baseball) ..." -> "In baseball, ..."); usage markers ("(usually
    plural)") are dropped; a register label (slang, informal, ...) gives no sentence at all. Number: a plural
    title ("pants", "people") takes "are" and plural verbs. The subject's article follows WordNet's own use of
    the noun (`Countability`); a noun that WordNet writes with "a" only once or twice, too rarely to count it,
    gives no sentence unless its gloss starts with "the" (neither "Pedestrian is a person." nor a guessed "A").
    A mass sense takes no article, whatever other senses of the word do: `mass` (the caller's evidence from the
    synset, `WordNetPages.is_mass`): "Air is a mixture of gases ...", not "An air is ..."; a noun WordNet writes
    after "the" keeps it with a "the ..." gloss ("The sky is the atmosphere ...", not "Sky is ...").
    A capitalised title with a lower-case head WordNet counts ("Black person") is a common noun: an article.
    Parts that quote words (‘Negro’) are about the words, not the thing: no sentence.

    Each part goes to the rules of `GLOSS_PARTS` in order; the first that answers gives its sentence, none, or
    the end of the gloss. The first part that reaches the `subject` rule fixes the subject's form, by the first
    rule of `SUBJECT_FORMS` that fits:

    >>> print(GLOSS_PARTS.table())
    quantified      a later part opening with a quantifier: "Many herbs are ..." (no finite verb: no sentence)
    other_subject   a first part that is a clause about something else ("players buy chances"): no sentences at all
    about_the_word  a part about the word, not the thing ("used to refer to", quoted words): no sentence
    subject         the first part fixes the subject's form (`SUBJECT_FORMS`), or ends the gloss when unsure
    anaphor         a later part opening with "this instrument" ...: the subject with the part's verb phrase
    own_subject     a later part with a subject of its own ("the bird flies south"): no sentence
    verb_phrase     a later part that is a finite verb phrase: the subject with it ("A dog occurs in many breeds.")
    article         a bare singular count noun opening the gloss gets "a"/"an"
    copula          subject + is/are + the gloss, when its number agrees
    >>> print(SUBJECT_FORMS.table())
    proper        a proper name: the title as it is ("Galina")
    plural_title  a plural title ("pants", "people"): no article, plural verb
    bare_plural   a gloss with a bare plural head ("vertebrates ..."): the title's plural ("Birds are")
    mass          a mass sense: no article ("Air is"), unless WordNet and the gloss both say "the ..."
    body_part     a body part glossed with "the ...": "The face is"
    counted       a count noun: "a"/"an" ("A street is")
    rare          a noun WordNet's text rarely uses, with no article: unsure, the gloss ends
    definite      a noun WordNet writes after "the": "The sky is"
    bare          otherwise the title alone, a mass-noun style gloss ("water: binary compound ...")

    Needs the POS tagger from the data mirror (so the examples are skipped as doctests; tests/test_factnli.py
    runs them with the mirror).

    >>> street = "a thoroughfare (usually including sidewalks) that is lined with buildings"
    >>> definition_sentences("street", street)  # doctest: +SKIP
    ['A street is a thoroughfare that is lined with buildings.']
    >>> definition_sentences("dog", "a member of the genus Canis; occurs in many breeds")  # doctest: +SKIP
    ['A dog is a member of the genus Canis.', 'A dog occurs in many breeds.']
    >>> water = "binary compound that occurs at room temperature as a clear liquid"
    >>> definition_sentences("water", water)  # doctest: +SKIP
    ['Water is a binary compound that occurs at room temperature as a clear liquid.']
    >>> definition_sentences("laborer", "someone who works with their hands")  # doctest: +SKIP
    ['A laborer is someone who works with their hands.']
    >>> definition_sentences("bird", "warm-blooded egg-laying vertebrates characterized by feathers")  # doctest: +SKIP
    ['Birds are warm-blooded egg-laying vertebrates characterized by feathers.']
    >>> herb = "a plant lacking a woody stem; many are garden plants; some having odours"
    >>> definition_sentences("herb", herb)  # doctest: +SKIP
    ['A herb is a plant lacking a woody stem.', 'Many herbs are garden plants.']
    >>> definition_sentences("bat", "(baseball) a turn trying to get a hit")  # doctest: +SKIP
    ['In baseball, a bat is a turn trying to get a hit.']
    >>> definition_sentences("air", "a mixture of gases required for breathing", mass=True)  # doctest: +SKIP
    ['Air is a mixture of gases required for breathing.']
    >>> pants = "(usually in the plural) a garment extending from the waist to the ankle"
    >>> definition_sentences("pants", pants)  # doctest: +SKIP
    ['Pants are a garment extending from the waist to the ankle.']
    """
    framed = _gloss_frame(definition)
    if framed is None:
        return []  # a usage of the word, not a fact about the thing
    frame, definition = framed
    proper = title[:1].isupper() and not (countable is not None and _common_capitalised(title)
                                          and countable(_title_head(title)))
    d = _Gloss(title, frame, countable, body_part, mass, proper, _is_plural(title))
    out: list[str] = []
    for k, part in enumerate(str(definition).split(";")):
        gloss = strip_parentheticals(part).split(":", 1)[0].strip(" ,.:")  # "herbage: grown as lawns" -> "herbage"
        toks = WORD.findall(gloss)
        if len(toks) < 2:
            continue
        d.k, d.gloss, d.toks, d.tags, d.first = k, gloss, toks, [t for _, t in pos_tag(toks)], toks[0].lower()
        answer = GLOSS_PARTS.first(d)
        if answer is _STOP:
            return out
        if answer is not _SKIP:
            out.append(answer)
    return out


def _gloss_frame(definition: str) -> tuple[str, str] | None:
    """(frame, the definition without its leading label): "(baseball) a turn ..." -> ("In baseball, ", "a turn
    ..."); a usage marker gives no frame; None for a register, dialect or construction label (no facts)."""
    label = leading_label(definition)
    frame = ""
    if label:
        if register_label(definition) or label.split()[0] in _DIALECTS or label.startswith(_CONSTRUCTIONS):
            return None
        if not label.startswith(_USAGE_MARKERS):
            frame = "In " + LABEL_TEXT.match(str(definition)).group(1).strip() + ", "
        definition = LABEL_TEXT.sub("", str(definition), count=1)
    return frame, definition


@dataclass
class _Gloss:
    """What the gloss rules read and set: the title's facts, the subject the first part fixed, the current part."""

    title: str
    frame: str
    countable: object  # `Countability` or None
    body_part: bool
    mass: bool
    proper: bool
    title_plural: bool
    subject: str | None = None
    plural: bool = False
    k: int = 0  # the part's index
    gloss: str = ""
    toks: list = field(default_factory=list)
    tags: list = field(default_factory=list)
    first: str = ""  # the part's first word, lower-cased


# A rule answers None (the next rule's turn), a sentence, _SKIP (none from this part) or _STOP (none from the rest).
_SKIP, _STOP = object(), object()
GLOSS_PARTS = RuleTable("gloss part")
SUBJECT_FORMS = RuleTable("subject form")


@GLOSS_PARTS.rule("quantified",
                  'a later part opening with a quantifier: "Many herbs are ..." (no finite verb: no sentence)')
def _quantified_part(d: _Gloss):
    if not (d.k > 0 and d.subject is not None and d.first in _QUANTIFIERS):  # "many are ...", "some having ..."
        return None
    toks, tags = d.toks, d.tags
    if toks[1].lower() in ("are", "have", "were", "had") or tags[1] in ("VBP", "VBD", "MD"):
        plural_subject = d.subject if d.plural else (_plural(d.title) if not d.proper else "")
        if plural_subject:  # "Many herbs are flowering garden plants."; "others are ..." -> "Other herbs are ..."
            quantifier = "other" if d.first == "others" else d.first
            rest = " ".join(d.gloss.split()[1:])
            return _framed(d.frame, f"{quantifier} {plural_subject[:1].lower() + plural_subject[1:]} {rest}")
    return _SKIP  # a quantified fragment without a finite verb ("some having ...") is no sentence


@GLOSS_PARTS.rule("other_subject",
                  'a first part that is a clause about something else ("players buy chances"): no sentences at all')
def _other_subject(d: _Gloss):
    if d.subject is None and len(d.tags) > 1 and (d.tags[0] in ("NNS", "NN") or d.first in _QUANTIFIERS) and \
            d.tags[1] in ("VBP", "VBZ", "VBD"):
        return _STOP  # the gloss is a clause about something else ("players buy chances ..."): no sentence
    return None


@GLOSS_PARTS.rule("about_the_word",
                  'a part about the word, not the thing ("used to refer to", quoted words): no sentence')
def _about_the_word(d: _Gloss):
    # "commonly used to refer to a whole limb", "‘Negro’ and ..."
    return _SKIP if _META.search(d.gloss) or _QUOTED.search(d.gloss) else None


@GLOSS_PARTS.rule("subject", "the first part fixes the subject's form (`SUBJECT_FORMS`), or ends the gloss when unsure")
def _subject(d: _Gloss):
    if d.subject is not None:
        return None
    # the first part decides the subject's form: "A street" (count), "Water" or "Birds"
    bare_plural = d.first not in DETERMINERS and _head_tag(d.toks, d.tags) == "NNS"
    counted = _counted(d, bare_plural)
    if counted is _STOP:
        return _STOP
    form = SUBJECT_FORMS.first(d, counted, bare_plural)
    if form is _STOP:
        return _STOP
    subject, d.plural = form
    d.subject = subject[:1].upper() + subject[1:]
    return None


def _counted(d: _Gloss, bare_plural: bool):
    """Does the first part count the title ("a ...")? By the gloss, and by WordNet's text when known (a gloss
    "a ..." counts for a word WordNet's text rarely uses); _STOP when WordNet's evidence and the gloss disagree."""
    first, countable = d.first, d.countable
    counted = first in ("a", "an") or first in PRONOMINAL
    if countable is None:
        return counted
    head = _title_head(d.title)
    counted = first in PRONOMINAL or countable(head) or (first in ("a", "an") and (
        countable(head, 2) or not countable.frequent(head)))
    if first == "the":
        counted = d.body_part or not countable.frequent(head)
        if not counted and countable(head):  # "the profession of teaching": 'an education' in a
            return _STOP  # sense WordNet also counts; "Yard is the enclosed land" without: unsure
    elif not counted and countable(head, 1) and not d.title_plural and not d.proper and not bare_plural:
        return _STOP  # "Pedestrian is a person.", "Sidewalk is a walk ...": WordNet writes "a <head>" too
    return counted


@SUBJECT_FORMS.rule("proper", 'a proper name: the title as it is ("Galina")')
def _proper_subject(d: _Gloss, counted: bool, bare_plural: bool):
    return (d.title, False) if d.proper else None


@SUBJECT_FORMS.rule("plural_title", 'a plural title ("pants", "people"): no article, plural verb')
def _plural_title_subject(d: _Gloss, counted: bool, bare_plural: bool):
    return (d.title, True) if d.title_plural else None


@SUBJECT_FORMS.rule("bare_plural",
                    'a gloss with a bare plural head ("vertebrates ..."): the title\'s plural ("Birds are")')
def _bare_plural_subject(d: _Gloss, counted: bool, bare_plural: bool):
    if bare_plural and (d.countable is None or d.countable(_title_head(d.title))):  # "bird: ... vertebrates"
        return _plural(d.title), True
    return None


@SUBJECT_FORMS.rule("mass", 'a mass sense: no article ("Air is"), unless WordNet and the gloss both say "the ..."')
def _mass_subject(d: _Gloss, counted: bool, bare_plural: bool):
    if d.mass and not (d.first == "the" and d.countable is not None and d.countable.definite(_title_head(d.title))):
        return d.title, False  # "Air is a mixture of gases ...", "Agility is the gracefulness of ..."; not "Sky is"
    return None


@SUBJECT_FORMS.rule("body_part", 'a body part glossed with "the ...": "The face is"')
def _body_part_subject(d: _Gloss, counted: bool, bare_plural: bool):
    # "the front of the human head" -> "The face is"
    return (f"the {d.title}", False) if counted and d.first == "the" and d.body_part else None


@SUBJECT_FORMS.rule("counted", 'a count noun: "a"/"an" ("A street is")')
def _counted_subject(d: _Gloss, counted: bool, bare_plural: bool):
    return (f"{_article(d.title)} {d.title}", False) if counted else None


@SUBJECT_FORMS.rule("rare", "a noun WordNet's text rarely uses, with no article: unsure, the gloss ends")
def _rare_subject(d: _Gloss, counted: bool, bare_plural: bool):
    # "Seagull is mostly white aquatic bird.": a rare noun gives no evidence of mass
    return _STOP if d.countable is not None and not d.countable.frequent(_title_head(d.title)) else None


@SUBJECT_FORMS.rule("definite", 'a noun WordNet writes after "the": "The sky is"')
def _definite_subject(d: _Gloss, counted: bool, bare_plural: bool):
    # "The sky is the atmosphere ...": WordNet writes "the sky"
    return (f"the {d.title}", False) if d.countable is not None and d.countable.definite(_title_head(d.title)) else None


@SUBJECT_FORMS.rule("bare", 'otherwise the title alone, a mass-noun style gloss ("water: binary compound ...")')
def _bare_subject(d: _Gloss, counted: bool, bare_plural: bool):
    return d.title, False


@GLOSS_PARTS.rule("anaphor",
                  'a later part opening with "this instrument" ...: the subject with the part\'s verb phrase')
def _anaphor(d: _Gloss):
    if not (d.k > 0 and d.first in _ANAPHORS):  # "this instrument has four strings" -> "A violin has four strings"
        return None
    tags = d.tags
    i = next((j for j, t in enumerate(tags[:4]) if t in ("VBZ", "VBP", "VBD", "MD")), None)
    if i is not None and i > 0:
        rest = toks_text = d.gloss.split()
        if len(toks_text) == len(d.toks):
            rest = toks_text[i:]
            if d.plural and tags[i] == "VBZ":
                rest[0] = _plural_verb(rest[0])
            return _framed(d.frame, f"{d.subject} {' '.join(rest)}", d.proper)
    return _SKIP


@GLOSS_PARTS.rule("own_subject", 'a later part with a subject of its own ("the bird flies south"): no sentence')
def _own_subject(d: _Gloss):
    if d.k > 0 and d.tags[0] == "DT" and any(t in ("VBZ", "VBP", "VBD", "MD") for t in d.tags[1:5]):
        return _SKIP  # a later part with a subject of its own ("the bird flies south"): not about the title
    return None


@GLOSS_PARTS.rule("verb_phrase",
                  'a later part that is a finite verb phrase: the subject with it ("A dog occurs in many breeds.")')
def _verb_phrase(d: _Gloss):
    if d.k == 0:  # later parts may be verb phrases about the subject: "occurs in many breeds"
        return None
    toks, tags = d.toks, d.tags
    verb_tags = [t for _, t in pos_tag(["It", *toks])][1:]
    i = next((j for j, t in enumerate(verb_tags) if not t.startswith("RB")), 0)
    finite = tags[i] in ("VBZ", "VBP", "MD") or (verb_tags[i] == "VBZ" and toks[i].endswith("s"))
    if finite and not _number_agrees(toks, tags):
        return _SKIP  # "has shaped crown": a bare singular count noun after the verb
    if not finite:  # "often worn over ...": a participle
        return None
    gloss = d.gloss
    if d.plural and verb_tags[i] == "VBZ":  # "Pants occurs ..." -> "Pants occur ..."
        words_ = gloss.split()
        words_[i] = _plural_verb(words_[i])
        gloss = " ".join(words_)
    return _framed(d.frame, f"{d.subject} {gloss}", d.proper)


@GLOSS_PARTS.rule("article", 'a bare singular count noun opening the gloss gets "a"/"an"')
def _article_for_bare_noun(d: _Gloss):
    toks, tags, countable = d.toks, d.tags, d.countable
    if d.first not in DETERMINERS and d.first not in PRONOMINAL and _premodified_noun(tags) and not d.plural:
        first_noun = next((t for t in tags if t.startswith("NN")), "NN")
        noun = next((w for w, t in zip(toks, tags) if t.startswith("NN")), "")
        gerund = tags[0] == "VBG" and d.title.split()[0].lower().endswith("ing")  # "paying attention: paying ..."
        if first_noun == "NN" and not gerund and (countable is None or countable(noun, 1)
                                                  or not countable.frequent(noun)):
            d.gloss = f"{_article(d.gloss)} {d.gloss}"
    return None  # the copula rule writes the sentence


@GLOSS_PARTS.rule("copula", "subject + is/are + the gloss, when its number agrees")
def _copula(d: _Gloss):
    counted_subject = not d.plural and d.subject.lower().startswith(("a ", "an "))
    if not _copula_agrees(d.plural, d.toks, d.tags, d.countable, counted=counted_subject) or \
            not _number_agrees(d.toks, d.tags):
        return _SKIP  # "A vertebrate is animals having ...", "Species are taxonomic group ...": no sentence
    return _framed(d.frame, f"{d.subject} {'are' if d.plural else 'is'} {d.gloss}", d.proper)


_PLURAL_DETERMINERS = {"many", "several", "various", "numerous", "few", "two", "three", "four", "both", "these",
                       "those"}


def _number_agrees(toks: Sequence[str], tags: Sequence[str]) -> bool:
    """No plural determiner before a singular head ("of any of numerous herbaceous plant") and no bare
    singular noun right after 'has'/'have' ("has shaped crown and usually a brim"), as WordNet glosses
    sometimes have.

    >>> _number_agrees(["of", "numerous", "herbaceous", "plant"], ["IN", "JJ", "JJ", "NN"])
    False
    >>> _number_agrees(["has", "shaped", "crown", "and", "a", "brim"], ["VBZ", "VBN", "NN", "CC", "DT", "NN"])
    False
    >>> _number_agrees(["has", "four", "strings"], ["VBZ", "CD", "NNS"])
    True
    """
    for i, word in enumerate(toks):
        low = word.lower()
        if low in _PLURAL_DETERMINERS or low in ("has", "have"):
            j = i + 1
            while j < len(toks) and tags[j] in ("JJ", "JJR", "JJS", "VBN", "VBG"):
                j += 1
            modified = j > i + 1  # "has shaped crown"; not "has water" (a mass noun needs no article)
            singular = j < len(toks) and tags[j] in ("NN", "NNS") and not toks[j].lower().endswith("s")
            if singular and (low in _PLURAL_DETERMINERS or modified):  # the tagger may call 'crown' NNS
                return False
    return True


def _title_head(title: str) -> str:
    """The head word of a title: its last word, or the last before 'of' ('body of water' -> 'body').

    >>> _title_head("city street"), _title_head("body of water")
    ('street', 'body')
    """
    return title.split(" of ", 1)[0].rsplit(" ", 1)[-1]


def _copula_agrees(plural: bool, toks: Sequence[str], tags: Sequence[str], countable=None,
                   counted: bool = False) -> bool:
    """Does a gloss read as the complement of 'is' (`plural` False) or 'are'? Its first noun phrase's head
    must not be a plural after 'is' ("is animals having ...", "is a heavy-duty clothes"), unless a
    quantifier opens it ("is any of various mammals"), nor a bare singular count noun after 'are' ("are
    taxonomic group"); without `countable` there is no check. "the <plurals>" agrees with a mass subject
    ("Clothing is the garments people wear"), not with a `counted` one ("An art is the products of ...").

    >>> _copula_agrees(False, ["animals", "having", "a", "skeleton"], ["NNS", "VBG", "DT", "NN"])
    True
    >>> _copula_agrees(False, ["animals", "having", "a", "skeleton"], ["NNS", "VBG", "DT", "NN"], countable=len)
    False
    >>> _copula_agrees(True, ["taxonomic", "group", "whose"], ["JJ", "NN", "WP$"], countable=len)
    False
    >>> _copula_agrees(False, ["any", "of", "various", "mammals"], ["DT", "IN", "JJ", "NNS"], countable=len)
    True
    """
    if countable is None or not toks:
        return True
    first = toks[0].lower()
    if first in _QUANTIFIERS or first in ("any", "one", "each", "either", "none", "all"):
        return True
    noun, head = "", ""
    for i, (word, tag) in enumerate(zip(toks, tags)):  # the first noun phrase: "animal or plant group"
        if tag.startswith("NN"):
            noun, head = word, tag
        elif not (tag in ("JJ", "JJR", "JJS", "CD", "VBN", "CC") or (i == 0 and tag == "DT")):
            break
    if not plural:  # "the garments people wear" agrees with a mass subject ("Clothing is ...")
        return head != "NNS" or (first in ("the", "these", "those") and not counted)
    return not (head == "NN" and first not in DETERMINERS and first not in PRONOMINAL and countable(noun))


LABEL_TEXT = re.compile(r"^\s*\(([^()]*)\)\s*")
#: Leading labels that only say how the word is used in number: dropped ("(usually plural) ...").
_USAGE_MARKERS = ("usually", "often", "sometimes", "plural", "used", "trademark", "singular")
#: Leading labels that describe a construction, not a thing ("(with ‘in’) guardianship over").
_CONSTRUCTIONS = ("with ", "followed by", "usually followed by", "often followed by", "preceded by", "in the ",
                  "usually with", "often with", "as in")
#: Leading labels naming a language or dialect: the gloss is a usage, not a fact ("(Yiddish) a big shot ...").
_DIALECTS = {"yiddish", "british", "scottish", "irish", "australian", "canadian", "french", "latin", "german",
             "spanish", "italian", "hebrew", "literary", "formerly", "chiefly", "old-fashioned"}
#: Plurals that do not end in -s (and so are not caught by the tagger test in `_is_plural` reliably).
_IRREGULAR_PLURALS = {"people", "children", "men", "women", "police", "cattle", "feet", "teeth", "mice", "geese",
                      "clergy", "folk", "livestock", "poultry"}


def _framed(frame: str, sentence: str, proper: bool = False) -> str:
    """'In baseball, ' + 'A bat is ...' -> 'In baseball, a bat is ...' (a capitalised title keeps its case)."""
    if not frame:
        return finish(sentence)
    keep = proper
    return finish(frame + (sentence if keep else sentence[:1].lower() + sentence[1:]))


def _is_plural(title: str) -> bool:
    """Is a WordNet lemma a plural form ('pants', 'people', 'tank tops')? Tagger NNS, -ics and -ss excepted.

    >>> _is_plural("people"), _is_plural("bus"), _is_plural("physics"), _is_plural("glass")  # doctest: +SKIP
    (True, False, False, False)
    """
    last = _title_head(title).lower()  # "body of water", "group of birds": the head decides
    if last in _IRREGULAR_PLURALS:
        return True
    if not last.endswith("s") or last.endswith(("ss", "us", "is", "ics", "ous")):
        return False
    return pos_tag([last])[0][1] == "NNS"


def _plural_verb(verb: str) -> str:
    """'occurs' -> 'occur', 'has' -> 'have', 'is' -> 'are', 'carries' -> 'carry', 'reaches' -> 'reach'."""
    low = verb.lower()
    irregular = {"is": "are", "has": "have", "was": "were", "does": "do"}
    if low in irregular:
        return irregular[low]
    if low.endswith("ies") and len(low) > 4:
        return verb[:-3] + "y"
    if low.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return verb[:-2]
    return verb[:-1] if low.endswith("s") else verb


PRONOMINAL = {"someone", "somebody", "something", "anyone", "anybody", "anything", "one"}  # "someone who ..."
_QUANTIFIERS = {"many", "some", "most", "few", "several", "all", "both", "others"}  # "…; many are garden plants"
_CHUNK_END = {"IN", "WDT", "WP", "TO", "VBN", "VBD", "VBZ", "VBP", "MD"}


_ANAPHORS = {"this", "these", "it", "they"}
#: A quoted word in a gloss: the gloss talks about words ("‘Negro’ and ‘Negroid’ are archaic").
_QUOTED = re.compile(r"[‘“\"]\s*[A-Za-z][\w-]*\s*[’”\"]")


def _common_capitalised(title: str) -> bool:
    """Is a capitalised title a common noun: several words with a lower-case head ('Black person', 'French
    fries'), so it takes an article like any count noun? ('Eiffel Tower', 'Sun' are names.)

    >>> _common_capitalised("Black person"), _common_capitalised("Eiffel Tower"), _common_capitalised("Sun")
    (True, False, False)
    """
    words = title.split()
    return len(words) > 1 and words[-1][:1].islower()
_META = re.compile(r"\b(used to refer to|alternative names? for|term for|name for|the word|refers? to)\b", re.I)


def _premodified_noun(tags: Sequence[str]) -> bool:
    """Does the gloss start with a noun phrase without determiner: adjectives/participles then a noun
    ('bowed stringed instrument' yes; 'propelled with a paddle', 'being a person', 'cut and dried as hay' no)?

    >>> _premodified_noun(["VBN", "NN"]), _premodified_noun(["NN", "CC", "VBN", "IN", "NN"])
    (True, False)
    """
    for i, tag in enumerate(tags[:4]):
        if tag.startswith("NN"):  # not a participle the tagger called a noun: "cut and dried as hay"
            return not (i == 0 and len(tags) > 2 and tags[1] == "CC" and tags[2] in ("VBN", "VBD"))
        if tag not in ("JJ", "JJR", "JJS", "CD", "VBN", "VBG", "VBD", "CC") or (i == 0 and tag in ("VBD", "CC")):
            return False
    return False


def _head_tag(toks: Sequence[str], tags: Sequence[str]) -> str:
    """Penn tag of the head (last noun) of a gloss's first noun phrase: 'domestic or game birds' -> NNS,
    'fresh fruits and vegetable grown for ...' -> NN, 'thoroughfare that is ...' -> NN ('' if none)."""
    head = ""
    for i, (word, tag) in enumerate(zip(toks, tags)):
        if i > 0 and (tag in _CHUNK_END or word.lower() in ("that", "which", "who")):
            break
        if tag.startswith("NN"):
            head = tag
    return head


def _plural(title: str) -> str:
    """'bird' -> 'birds', 'gallinaceous bird' -> 'gallinaceous birds', 'berry' -> 'berries', 'box' -> 'boxes'."""
    head, _, last = title.rpartition(" ")
    if last.endswith(("s", "x", "z", "ch", "sh")):
        last += "es"
    elif last.endswith("y") and last[-2:-1] not in ("a", "e", "i", "o", "u"):
        last = last[:-1] + "ies"
    else:
        last += "s"
    return f"{head} {last}" if head else last


class Countability:
    """Is a noun countable? Evidence from WordNet's own text: it follows "a"/"an" and is then followed by a
    function word or punctuation ("a violin that ...", "a container;"), at least `min_uses` times in all
    glosses and usage examples. Mass nouns ("clothing", "furniture", "water", "equipment") never are.

    >>> c = Countability(texts=["a violin with strings", "a violin;", "a violin of", "water in a water bottle"])
    >>> c("violin"), c("water"), c("clothing")
    (True, False, False)
    """

    FOLLOWERS = {"that", "which", "who", "whose", "or", "and", "with", "in", "of", "for", "on", "to", "is", "was",
                 "from", "by", "at", "as", "used", "made", "having", "but", "when", "where", "into", "without"}

    def __init__(self, wordnet=None, texts=None, min_uses: int = 3):
        if texts is None:
            ids = getattr(wordnet, "_synsets", ())
            texts = (t for sid in ids for t in (wordnet.definition(sid), *wordnet.examples(sid)))
        self.min_uses, self.counts, self.seen, self.the = min_uses, {}, {}, {}
        for text in texts:
            w = letter_tokens(text)
            for x in w:
                self.seen[x] = self.seen.get(x, 0) + 1
            for a, b, c in zip(w, w[1:], [*w[2:], "."]):
                if a in ("a", "an") and (c in self.FOLLOWERS or not c[0].isalpha()):
                    self.counts[b] = self.counts.get(b, 0) + 1
                if a == "the":
                    self.the[b] = self.the.get(b, 0) + 1

    def frequent(self, word: str, min_seen: int = 10) -> bool:
        """Does WordNet's text use the word at least `min_seen` times (so no "a <word>" is evidence of mass)?"""
        return self.seen.get(str(word).lower(), 0) >= min_seen

    def definite(self, word: str, share: float = 0.5) -> bool:
        """Does WordNet's text write the word after "the" in at least `share` of its uses ("the sky", "the sun")?"""
        low = str(word).lower()
        return self.frequent(low) and self.the.get(low, 0) >= share * self.seen[low]

    def __call__(self, word: str, min_uses: int | None = None) -> bool:
        return self.counts.get(str(word).lower(), 0) >= (self.min_uses if min_uses is None else min_uses)
