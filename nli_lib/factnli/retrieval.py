"""§3.2 facts acquisition, step 1: premise-conditioned retrieval of a snippet pool P(t).

The paper queries Wikipedia with the previous premise p(t-1), takes each page's introductory summary,
splits it into sentences, embeds them with all-MiniLM-L6-v2 and keeps those whose cosine to the query is
>= tau. Two page sources share that pipeline (`SnippetRetriever`):

* `wikipedia.WikipediaPages` (online): MediaWiki search per term of the text the previous level added, new
  pages only, intro extracts over HTTP with retries, every response cached (namespace "http");
* `WordNetPages` (offline): Open English WordNet from the data mirror as a small encyclopedia. A "page" is
  the one noun synset chosen for each query noun in its sentence (`senses.SenseChooser`: MiniLM similarity
  of gloss and sentence, with a frequency prior and a margin below which the noun is skipped), plus that
  synset's direct hypernyms; its "intro summary" is the gloss written as definitional sentences ("A street
  is a thoroughfare that is lined with buildings."). Usage examples ("the dog barked all night") are never
  used: they describe some other scene, not a fact about this one.

>>> pages = WordNetPages()                                   # doctest: +SKIP
>>> [p.title for p in pages.search("A woman looks into a window on a city street .")][:3]   # doctest: +SKIP
['woman', 'window', 'city street']

Trade-offs, stated plainly: WordNet glosses are short and generic next to Wikipedia intros (fewer named
entities, dates and places), so offline facts are definitional ("A guitar is a stringed instrument.").
Page search is one lookup per term in both retrievers (a whole 100-word premise is a poor search query);
the embedding threshold against the whole p(t-1) then does the premise-conditioned selection, as in the paper.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol, Sequence

import numpy as np

from ..text import WORD, letter_tokens, normalise, word_count
from .senses import SENSE_THRESHOLDS, SenseChoice, SenseChooser, context_sentence, leading_label, register_label
from .text import Snippet, finish, pos_tag, query_nouns, split_sentences, strip_parentheticals


@dataclass(frozen=True)
class Page:
    """A retrieved page: its source id, title and intro summary split into sentences."""

    source: str  # 'oewn:04341737-n' or 'wikipedia:Carnaby Street'
    title: str  # page title (WordNet: the lemma searched for)
    sentences: tuple[str, ...]  # introductory summary, one sentence per item


class PageSource(Protocol):
    name: str

    def search(self, query: str, exclude: frozenset | set = frozenset(), new_text: str | None = None,
               used: frozenset | set = frozenset()) -> list[Page]:
        """Pages for a query p(t-1), most relevant first, skipping pages whose sentences are all in `exclude`.

        `new_text`: what the previous level added to the query (its fused facts; None at level 1); `used`:
        sources of the pages that gave snippets at earlier levels. `wikipedia.WikipediaPages` searches the
        terms of `new_text` and skips `used` pages; `WordNetPages` says how it reaches new pages."""


class RetrievalError(RuntimeError):
    """A page request that failed for good (a non-retryable status, or retries exhausted)."""


class FailedPool(list):
    """The (empty) pool of a query whose page search failed for good; `error` says why. Falsy like an empty
    pool, so no extraction call is made for it; the level loop records the failure.

    >>> pool = FailedPool("HTTP 503 after 6 attempts")
    >>> bool(pool), pool.error
    (False, 'HTTP 503 after 6 attempts')
    """

    def __init__(self, error: str):
        super().__init__()
        self.error = error


# --------------------------------------------------------------------------------------------------------------
# Offline: Open English WordNet as an encyclopedia
# --------------------------------------------------------------------------------------------------------------

GLOSS_RULES_VERSION = "gloss-rules-v16"  # part of WordNetPages.name (and so of every cache key): bump when rules change
_DETERMINERS = {"a", "an", "the", "any", "one", "some", "each", "every", "either", "all", "two"}
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
    label = leading_label(definition)
    frame = ""
    if label:
        if register_label(definition) or label.split()[0] in _DIALECTS or label.startswith(_CONSTRUCTIONS):
            return []  # a usage of the word, not a fact about the thing
        if not label.startswith(_USAGE_MARKERS):
            frame = "In " + _LABEL_TEXT.match(str(definition)).group(1).strip() + ", "
        definition = _LABEL_TEXT.sub("", str(definition), count=1)
    out, subject, plural = [], None, False
    title_plural = _is_plural(title)
    proper = title[:1].isupper() and not (countable is not None and _common_capitalised(title)
                                          and countable(_title_head(title)))
    for k, part in enumerate(str(definition).split(";")):
        gloss = strip_parentheticals(part).split(":", 1)[0].strip(" ,.:")  # "herbage: grown as lawns" -> "herbage"
        toks = WORD.findall(gloss)
        if len(toks) < 2:
            continue
        tags = [t for _, t in pos_tag(toks)]
        first = toks[0].lower()
        if k > 0 and subject is not None and first in _QUANTIFIERS:  # "many are ...", "some having ..."
            if toks[1].lower() in ("are", "have", "were", "had") or tags[1] in ("VBP", "VBD", "MD"):
                plural_subject = subject if plural else (_plural(title) if not proper else "")
                if (
                    plural_subject
                ):  # "Many herbs are flowering garden plants."; "others are ..." -> "Other herbs are ..."
                    quantifier = "other" if first == "others" else first
                    rest = " ".join(gloss.split()[1:])
                    out.append(_framed(frame, f"{quantifier} {plural_subject[:1].lower() + plural_subject[1:]} {rest}"))
            continue  # a quantified fragment without a finite verb ("some having ...") is no sentence
        if subject is None and len(tags) > 1 and (tags[0] in ("NNS", "NN") or first in _QUANTIFIERS) and \
                tags[1] in ("VBP", "VBZ", "VBD"):
            return out  # the gloss is a clause about something else ("players buy chances ..."): no sentence
        if _META.search(gloss) or _QUOTED.search(gloss):
            continue  # about the word, not the thing ("commonly used to refer to a whole limb", "‘Negro’ and ...")
        if subject is None:  # the first part decides the subject's form: "A street" (count), "Water" or "Birds"
            bare_plural = first not in _DETERMINERS and _head_tag(toks, tags) == "NNS"
            counted = first in ("a", "an") or first in _PRONOMINAL
            if countable is not None:
                head = _title_head(title)  # a gloss "a ..." counts for a word WordNet's text rarely uses
                counted = first in _PRONOMINAL or countable(head) or (first in ("a", "an") and (
                    countable(head, 2) or not countable.frequent(head)))
                if first == "the":
                    counted = body_part or not countable.frequent(head)
                    if not counted and countable(head):  # "the profession of teaching": 'an education' in a
                        return out  # sense WordNet also counts; "Yard is the enclosed land" without: unsure
                elif not counted and countable(head, 1) and not title_plural and not proper \
                        and not bare_plural:
                    return out  # "Pedestrian is a person.", "Sidewalk is a walk ...": WordNet writes "a <head>" too
            if proper:
                subject = title
            elif title_plural:  # "pants", "people": no article, plural verb
                subject, plural = title, True
            elif bare_plural and (countable is None or countable(_title_head(title))):  # "bird: ... vertebrates"
                subject, plural = _plural(title), True
            elif mass and not (first == "the" and countable is not None and countable.definite(_title_head(title))):
                subject = title  # "Air is a mixture of gases ...", "Agility is the gracefulness of ..."; not "Sky is"
            elif counted and first == "the" and body_part:  # "the front of the human head" -> "The face is"
                subject = f"the {title}"
            elif counted:
                subject = f"{_article(title)} {title}"
            elif countable is not None and not countable.frequent(_title_head(title)):
                return out  # "Seagull is mostly white aquatic bird.": a rare noun gives no evidence of mass
            elif countable is not None and countable.definite(_title_head(title)):
                subject = f"the {title}"  # "The sky is the atmosphere ...": WordNet writes "the sky"
            else:  # mass-noun style gloss: "water: binary compound that ..."
                subject = title
            subject = subject[:1].upper() + subject[1:]
        if k > 0 and first in _ANAPHORS:  # "this instrument has four strings" -> "A violin has four strings"
            i = next((j for j, t in enumerate(tags[:4]) if t in ("VBZ", "VBP", "VBD", "MD")), None)
            if i is not None and i > 0:
                rest = toks_text = gloss.split()
                if len(toks_text) == len(toks):
                    rest = toks_text[i:]
                    if plural and tags[i] == "VBZ":
                        rest[0] = _plural_verb(rest[0])
                    out.append(_framed(frame, f"{subject} {' '.join(rest)}", proper))
            continue
        if k > 0 and tags[0] == "DT" and any(t in ("VBZ", "VBP", "VBD", "MD") for t in tags[1:5]):
            continue  # a later part with a subject of its own ("the bird flies south"): not about the title
        if k > 0:  # later parts may be verb phrases about the subject: "occurs in many breeds"
            verb_tags = [t for _, t in pos_tag(["It", *toks])][1:]
            i = next((j for j, t in enumerate(verb_tags) if not t.startswith("RB")), 0)
            finite = tags[i] in ("VBZ", "VBP", "MD") or (verb_tags[i] == "VBZ" and toks[i].endswith("s"))
            if finite and not _number_agrees(toks, tags):
                continue  # "has shaped crown": a bare singular count noun after the verb
            if finite:  # "occurs in many breeds"; not "often worn over ..." (a participle)
                if plural and verb_tags[i] == "VBZ":  # "Pants occurs ..." -> "Pants occur ..."
                    words_ = gloss.split()
                    words_[i] = _plural_verb(words_[i])
                    gloss = " ".join(words_)
                out.append(_framed(frame, f"{subject} {gloss}", proper))
                continue
        if first not in _DETERMINERS and first not in _PRONOMINAL and _premodified_noun(tags) \
                and not plural:
            first_noun = next((t for t in tags if t.startswith("NN")), "NN")
            noun = next((w for w, t in zip(toks, tags) if t.startswith("NN")), "")
            gerund = tags[0] == "VBG" and title.split()[0].lower().endswith("ing")  # "paying attention: paying ..."
            if first_noun == "NN" and not gerund and (countable is None or countable(noun, 1)
                                                      or not countable.frequent(noun)):
                gloss = f"{_article(gloss)} {gloss}"
        counted_subject = not plural and subject.lower().startswith(("a ", "an "))
        if not _copula_agrees(plural, toks, tags, countable, counted=counted_subject) or not _number_agrees(toks, tags):
            continue  # "A vertebrate is animals having ...", "Species are taxonomic group ...": no sentence
        out.append(_framed(frame, f"{subject} {'are' if plural else 'is'} {gloss}", proper))
    return out


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
    return not (head == "NN" and first not in _DETERMINERS and first not in _PRONOMINAL and countable(noun))


_LABEL_TEXT = re.compile(r"^\s*\(([^()]*)\)\s*")
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


_PRONOMINAL = {"someone", "somebody", "something", "anyone", "anybody", "anything", "one"}  # "someone who ..."
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


_MATTER, _FOOD = "00021007-n", "00021445-n"  # OEWN: matter ('that which has mass ...'), food/nutrient
_MASS_ROOTS = {"00024444-n", "00034512-n"}  # OEWN: attribute (with state, feeling), phenomenon


class WordNetPages:
    """Offline page source: one WordNet noun sense per query noun (chosen in context) and its direct hypernyms;
    a page's summary is its gloss as definitional sentences (usage examples are never used)."""

    def __init__(self, wordnet=None, encoder=None, hypernyms: bool = True, max_terms: int = 8,
                 prior: float = SENSE_THRESHOLDS["prior"], margin: float = SENSE_THRESHOLDS["margin"],
                 scene_check: bool = True, rare_margin: float | None = SENSE_THRESHOLDS["rare_margin"],
                 abstract_margin: float | None = SENSE_THRESHOLDS["abstract_margin"]):
        if wordnet is None:
            from ..data.wordnet import load_wordnet

            wordnet = load_wordnet()
        if encoder is None:
            from ..models import SentenceEncoder

            encoder = SentenceEncoder(progress=False)
        self.wn = wordnet
        self.chooser = SenseChooser(wordnet, encoder, prior=prior, margin=margin, rare_margin=rare_margin,
                                    abstract_margin=abstract_margin)
        self.hypernyms, self.max_terms, self.scene_check = hypernyms, max_terms, scene_check
        self.name = (f"oewn-pages({self.chooser.name},hyper={int(hypernyms)},terms={max_terms},"
                     f"scene={int(scene_check)},{GLOSS_RULES_VERSION})")
        self._pages: dict[tuple[str, str], Page] = {}
        self._facts: dict[tuple[str, str], set[str]] = {}
        self._countable: Countability | None = None
        self.choices: list[SenseChoice] = []  # every sense choice made by `search`, in order (for inspection)

    def page(self, synset_id: str, title: str) -> Page:
        key = (synset_id, title)
        if key not in self._pages:
            if self._countable is None:
                self._countable = Countability(self.wn)
            sentences = definition_sentences(title, self.wn.definition(synset_id), self._countable,
                                             body_part=self.is_body_part(synset_id),
                                             mass=self.is_mass(synset_id, title))
            self._pages[key] = Page(f"oewn:{synset_id}", title, tuple(dict.fromkeys(sentences)))
        return self._pages[key]

    def is_body_part(self, synset_id: str) -> bool:
        """Is the synset a body part (WordNet's 'body part' among its hypernyms)?

        Such glosses read "The face is ..."."""
        parts = {s for s in self.wn.synsets("body part", "n")}
        return bool(parts & (self.wn.hypernym_closure(synset_id) | {synset_id})) if parts else False

    def is_mass(self, synset_id: str, title: str) -> bool:
        """Is the noun a mass noun in this sense, so its subject takes no article? Evidence from the synset
        itself, not from the word's other senses: a usage example with a mass quantifier ("open a window and
        let in some air": "Air is a mixture of gases ..."), or the synset is matter (not food: "a hot dog"), an
        attribute (a state, a feeling) or a phenomenon whose gloss opens with "the" ("the gracefulness of
        ...") or with a bare noun WordNet never writes after "a" ("(physics) electromagnetic radiation ...");
        not "a violent weather condition", "branching, hair-like structure" ("a structure" in WordNet)."""
        word = re.escape(title.lower())
        if any(re.search(rf"\b(?:some|much|little|less|more)\s+{word}\b(?!s)", e.lower())
               for e in self.wn.examples(synset_id)):
            return True
        above = self.wn.hypernym_closure(synset_id) | {synset_id}
        if not (above & _MASS_ROOTS or (_MATTER in above and _FOOD not in above)):
            return False
        toks = WORD.findall(strip_parentheticals(_LABEL_TEXT.sub("", str(self.wn.definition(synset_id)), count=1)))
        first = toks[0].lower() if toks else ""
        if first in ("a", "an", "one", "any", "each") or first in _PRONOMINAL:
            return False
        if first in _DETERMINERS:  # "the gracefulness of ..."
            return True
        if self._countable is None:
            self._countable = Countability(self.wn)
        head = next((w for w, t in pos_tag(toks[:6]) if t.startswith("NN")), "")
        return bool(head) and not self._countable(head, 1)  # "electromagnetic radiation"; not "hair-like structure"

    def sense_choices(self, query: str) -> list[SenseChoice]:
        """The sense chosen for each noun of `query`, in its sentence (None where ambiguous).

        Nouns that premodify another noun are not searched (`text.query_nouns` with `modifiers=False`). A noun
        first met in a fused fact whose page it titles ("Meanwhile, a swimmer is a person." from the page of
        'swimmer' as a person who swims) keeps that page's sense (`page_sense`): the fact fixed the sense in
        which the noun entered the scene, and choosing again from that short sentence can drift to another
        sense ("a swimmer is a trained athlete"). Any other noun first met in a fused fact is one the premise
        is silent about: it takes the sense that is a direct hypernym of a sense chosen in the query ("a hill
        is a local elevation of the land": elevation as the hill's kind, not the event of raising), else
        the sense chosen in its fact only when the premise agrees with it and it is the noun's first
        (most frequent) sense; a rarer sense ("the sun" as its rays) is skipped, with its reason. Every sense,
        however it was chosen, passes `SenseChooser.vet` (no confident sense: 'sense_uncertain', no page)."""
        terms, contexts, first = self._noun_contexts(query)
        choices = self.chooser.choose_many(list(zip(terms, contexts)))
        fixed = {t: self.page_sense(t, c) for t, c in zip(terms, contexts) if c != first}
        scene = [(t, first) for t, c in zip(terms, contexts) if c != first and fixed[t] is None]
        in_scene = dict(zip(scene, self.chooser.choose_many(scene, vetted=False))) if self.scene_check else {}
        chosen = {fixed.get(t) or c.synset for t, c in zip(terms, choices)} - {None}
        genus = {h for sid in chosen for h in self.wn.hypernyms(sid)}  # "a hill is a ... elevation of the land"
        out = []
        for term, context, choice in zip(terms, contexts, choices):
            if fixed.get(term) is not None and fixed[term] != choice.synset:
                choice = self.chooser.vet(SenseChoice(term, context, fixed[term], choice.scores, "sense of its page"))
            if context == first or fixed.get(term) is not None:
                out.append(choice)
                continue
            kinds = [sid for sid in self.chooser.candidates(term) if sid in genus]
            if len(kinds) == 1:  # the noun names the kind of a thing in the scene: that sense, as WordNet says
                out.append(self.chooser.vet(SenseChoice(term, context, kinds[0], choice.scores,
                                                        "hypernym of a scene sense")))
                continue
            other = in_scene.get((term, first))
            if other is not None and choice.synset is not None and other.synset != choice.synset:
                choice = SenseChoice(term, context, None, choice.scores, "premise disagrees")
            elif self.scene_check and choice.synset is not None and \
                    choice.synset != next(iter(self.chooser.candidates(term)), None):
                choice = SenseChoice(term, context, None, choice.scores, "premise silent, not the first sense")
            out.append(choice)
        return out

    def _noun_contexts(self, query: str) -> tuple[list[str], list[str], str]:
        """The query nouns `sense_choices` reads, the sentence each is read in, and the query's first sentence."""
        terms = query_nouns(query, self.wn, modifiers=False)
        return terms, [context_sentence(query, t) for t in terms], next(iter(split_sentences(query)), "")

    def prepare(self, queries: Sequence[str]) -> None:
        """Choose the senses `sense_choices` will need for all `queries` at once, in one encoder call.

        `SenseChooser.choose_many` keeps each choice, so the per-query calls that follow encode nothing.
        One call for a whole level instead of one per premise, so the encoder batches texts of similar length
        instead of encoding ~10 texts a call. The choices are those of the per-query calls: a
        choice depends on its (noun, sentence) only. The scene readings (noun, first sentence) are included for
        nouns first met in a fused fact; the few whose page fixes their sense (`page_sense`) are chosen without
        being used."""
        items = []
        for query in queries:
            terms, contexts, first = self._noun_contexts(query)
            items += zip(terms, contexts)
            if self.scene_check:
                items += [(t, first) for t, c in zip(terms, contexts) if c != first]
        self.chooser.choose_many(items, vetted=False)

    def page_sense(self, term: str, sentence: str) -> str | None:
        """The sense of `term` whose page gives the fact `sentence` (after its connective), None if none does.

        >>> pages = WordNetPages.__new__(WordNetPages)
        >>> pages.chooser = type("C", (), {"candidates": lambda self, t: ["1-n", "2-n"]})()
        >>> pages._facts = {("1-n", "swimmer"): {"a swimmer is a trained athlete"},
        ...                 ("2-n", "swimmer"): {"a swimmer is a person"}}
        >>> pages.page_sense("swimmer", "Meanwhile, a swimmer is a person."), pages.page_sense("swimmer", "A swimmer.")
        ('2-n', None)
        """
        key = f" {normalise(sentence)}"
        hits = [sid for sid in self.chooser.candidates(term)
                if any(key.endswith(f" {fact}") for fact in self.page_facts(sid, term))]
        return hits[0] if len(hits) == 1 else None

    def page_facts(self, synset_id: str, title: str) -> set[str]:
        """Normalised facts the offline extractor writes from the page of `synset_id` titled `title`."""
        key = (synset_id, title)
        if key not in self._facts:
            from .extraction import atomize

            self._facts[key] = {normalise(f) for s in self.page(synset_id, title).sentences for f in atomize(s)}
        return self._facts[key]

    def sense_table(self, query: str):
        """`sense_choices` as a table: term, chosen synset, why, and the chosen sense's gloss ('' where none)."""
        import pandas as pd

        return pd.DataFrame([{"term": s.term, "chosen": s.synset, "reason": s.reason,
                              "gloss": self.wn.definition(s.synset) if s.synset else ""}
                             for s in self.sense_choices(query)], columns=["term", "chosen", "reason", "gloss"])

    def hypernym_title(self, synset_id: str, choices: Sequence[SenseChoice]) -> str:
        """The title of a hypernym's page: its first lemma that no query noun uses in another sense ('' if none).

        The premise's 'machine' (an exercise bicycle) and a pedal's hypernym 'machine, simple machine' are two
        senses: that page is titled "simple machine", so no "A machine is a device for overcoming resistance".

        >>> pages = WordNetPages.__new__(WordNetPages)
        >>> pages.wn = type("W", (), {"lemmas": lambda self, s: ["machine", "simple machine"]})()
        >>> c = [SenseChoice("machine", "A man on a machine.", "device-n", (), "best in context")]
        >>> pages.hypernym_title("lever-kind-n", c), pages.hypernym_title("lever-kind-n", [])
        ('simple machine', 'machine')
        """
        other = {c.term.lower() for c in choices if c.synset is not None and c.synset != synset_id}
        return next((lemma for lemma in self.wn.lemmas(synset_id) if lemma.lower() not in other), "")

    def search(self, query: str, exclude: frozenset | set = frozenset(), new_text: str | None = None,
               used: frozenset | set = frozenset()) -> list[Page]:
        """Pages of the first `max_terms` query nouns with a chosen sense that still offer a sentence not in
        `exclude` (normalised sentences pooled at earlier levels), then the chosen senses' direct hypernyms.

        New pages per level without `new_text` or `used`: a noun counts toward `max_terms` only while its page
        offers an unpooled sentence, so once the premise's own nouns are spent, the nouns of the facts fused
        at the previous level (the end of the query) get the pages. A WordNet page holds one or two gloss
        sentences, and one that scored below tau at one level may pass at the next (the query has grown), so
        pages are not skipped whole as Wikipedia's are."""
        choices = self.sense_choices(query)
        self.choices += choices
        found: dict[str, Page] = {}
        above: list[tuple[str, str]] = []
        productive = 0
        for choice in choices:
            if productive >= self.max_terms:
                break
            sid = choice.synset
            if sid is None:
                continue
            page = found.setdefault(sid, self.page(sid, choice.term))
            productive += any(normalise(x) not in exclude for x in page.sentences)
            if self.hypernyms:
                above += [(h, self.hypernym_title(h, choices)) for h in self.wn.hypernyms(sid)]
        for sid, title in above:  # direct hypernyms after all the query's own pages
            if title and sid not in found and sid in self.wn and not register_label(self.wn.definition(sid)):
                found[sid] = self.page(sid, title)
        return [p for p in found.values() if any(normalise(x) not in exclude for x in p.sentences)]


# --------------------------------------------------------------------------------------------------------------
# Shared: sentence pool with the embedding threshold
# --------------------------------------------------------------------------------------------------------------

@dataclass
class SnippetRetriever:
    """Pages -> sentences -> cosine(query, sentence) >= tau -> the pool P(t) (best first, at most max_snippets)."""

    pages: PageSource  # WordNetPages (offline) or WikipediaPages (online)
    encoder: object  # SentenceEncoder (all-MiniLM-L6-v2), cached embeddings
    tau: float = 0.25  # the paper's "fixed, moderate threshold" (value not printed; companion choice)
    max_snippets: int = 8  # pool size cap per level (companion choice: bounds the NLI filter's cost)
    min_words: int = 4  # lexical hygiene: shorter sentences are dropped
    max_words: int = 60  # lexical hygiene: longer sentences (lists, tables) are dropped
    _last_scores: dict = field(default_factory=dict, repr=False)

    @property
    def fingerprint(self) -> str:
        return (f"{self.pages.name}|{getattr(self.encoder, 'fingerprint', type(self.encoder).__name__)}|tau={self.tau}"
                f"|k={self.max_snippets}|w={self.min_words}-{self.max_words}")

    def retrieve_many(self, queries: Sequence[str], exclude: Sequence[set] | None = None,
                      new_texts: Sequence[str | None] | None = None,
                      used: Sequence[set] | None = None) -> list[list[Snippet]]:
        """The pool for each query; `exclude[i]` holds normalised sentences already pooled at earlier levels,
        `new_texts[i]` what the previous level added to query i, `used[i]` the page sources it used (see
        `PageSource.search`). A query whose page search failed for good gets a `FailedPool`."""
        exclude = exclude or [set() for _ in queries]
        new_texts = new_texts or [None for _ in queries]
        used = used or [set() for _ in queries]
        candidates: list[list[tuple[str, Page]]] = []
        failed: dict[int, str] = {}
        if hasattr(self.pages, "prepare"):  # e.g. WordNetPages: every query's senses in one encoder call
            self.pages.prepare(queries)
        for i, (query, skip) in enumerate(zip(queries, exclude)):
            seen, rows = set(skip), []
            try:
                pages = self.pages.search(query, exclude=skip, new_text=new_texts[i], used=used[i])
            except RetrievalError as exc:
                failed[i] = str(exc)
                pages = []
            for page in pages:
                for sentence in page.sentences:
                    key = normalise(sentence)
                    if key in seen or not (self.min_words <= word_count(sentence) <= self.max_words):
                        continue
                    seen.add(key)
                    rows.append((sentence, page))
            candidates.append(rows)
        texts = list(dict.fromkeys([*queries, *(s for rows in candidates for s, _ in rows)]))
        vectors = dict(zip(texts, self.encoder.encode(texts))) if texts else {}
        pools: list[list[Snippet]] = []
        for i, (query, rows) in enumerate(zip(queries, candidates)):
            if i in failed:
                pools.append(FailedPool(failed[i]))
                continue
            if not rows:
                pools.append([])
                continue
            q = vectors[query]
            scores = np.array([float(vectors[s] @ q) for s, _ in rows])
            order = np.argsort(-scores, kind="stable")
            pool = [Snippet(rows[i][0], rows[i][1].source, rows[i][1].title, round(float(scores[i]), 4))
                    for i in order if scores[i] >= self.tau][: self.max_snippets]
            pools.append(pool)
        return pools
