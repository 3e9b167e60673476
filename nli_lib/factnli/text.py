"""Small text helpers shared by the FactNLI steps: sentences, query keywords, pronouns, parentheticals.

Tokenising and normalising live in `nli_lib.text` (`punct_tokens`, `word_count`, `normalise`, `WORD`).

>>> split_sentences("Carnaby Street is in Soho. It is pedestrianised! St. Mary's is near.")
['Carnaby Street is in Soho.', 'It is pedestrianised!', "St. Mary's is near."]
>>> has_deictic_pronoun("The street is busy and it is long."), has_deictic_pronoun("A street that is long.")
(True, False)
>>> has_deictic_pronoun("There were two men on the bus."), has_deictic_pronoun("There the bus stopped.")
(False, True)
>>> finish("the dog barked all night")
'The dog barked all night.'

Trade-off: regular expressions and NLTK's perceptron tagger (from the data mirror), not a parser; the rules
err on the side of dropping a sentence they cannot make self-contained.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Sequence

from ..text import WORD


@dataclass(frozen=True)
class Snippet:
    """One sentence of a page summary kept in the pool P(t) (retrieval writes it, extraction reads it)."""

    text: str  # the sentence
    source: str  # page source id it comes from
    title: str  # page title
    score: float  # cosine similarity to the query p(t-1)

#: Prompt B.1 rule 4 lists "it, they, he, she, this, that, former, latter, here, there"; their object and
#: possessive forms count too. "that" is only deictic when it does not introduce a relative/complement clause.
PRONOUNS = {"it", "its", "they", "them", "their", "theirs", "he", "him", "his", "she", "her", "hers", "former",
            "latter", "this", "these", "those", "here", "we", "us", "our", "you", "your", "i", "me", "my", "one's",
            "someone's", "itself", "themselves", "himself", "herself"}
DEICTIC_START = {"that", "there", "this", "these", "those", "here"}  # only as the first word ("There is ...")
ABBREVIATIONS = {"st", "mr", "mrs", "ms", "dr", "prof", "jr", "sr", "vs", "etc", "e.g", "i.e", "inc", "ltd", "co",
                 "mt", "ft", "no", "u.s", "u.k", "jan", "feb", "aug", "sept", "oct", "nov", "dec", "c", "ca"}


def finish(text: str) -> str:
    """Whitespace normalised, tokenizer spaces before punctuation removed, capitalised, final period."""
    text = re.sub(r"\s+", " ", str(text)).strip()
    text = re.sub(r"\s+([,.;:!?])", r"\1", text).strip(" ,;:")
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences at . ! ? followed by a capital/digit, keeping common abbreviations whole."""
    text = re.sub(r"\s+", " ", str(text)).strip()
    if not text:
        return []
    out, start = [], 0
    for m in re.finditer(r"[.!?]+[\"')\]]*\s+(?=[A-Z0-9\"'(])", text):
        before = text[start : m.start()].split()
        last = before[-1].lower().rstrip(".") if before else ""
        if text[m.start()] == "." and (last in ABBREVIATIONS or re.fullmatch(r"[a-z]", last)):
            continue
        out.append(text[start : m.end()].strip())
        start = m.end()
    out.append(text[start:].strip())
    return [s for s in out if s]


def has_deictic_pronoun(sentence: str) -> bool:
    """True when the sentence uses a pronoun Prompt B.1 forbids (it, they, he, she, this, that, here, there, ...)."""
    toks = [t.lower() for t in WORD.findall(sentence)]
    if not toks:
        return False
    existential = toks[0] == "there" and len(toks) > 1 and toks[1] in {"is", "are", "was", "were", "be", "has", "have"}
    if toks[0] in DEICTIC_START and not existential:  # "There were two women on the bus." is not deictic
        return True
    return any(t in PRONOUNS for t in toks)


#: First words of a parenthetical that restricts or negates what it is attached to: dropping it would make the
#: sentence say more than its source ("an abrupt departure (without saying farewell)", "(not necessarily married)").
RESTRICTING_ASIDES = {"not", "never", "no", "without", "except", "excluding", "but", "only", "unlike", "rather"}


def meaning_bearing(aside: str) -> bool:
    """Does a parenthetical's content restrict or negate its sentence (so it must be kept)?

    Kept: asides that start with a negation or restriction (`RESTRICTING_ASIDES`), or that say "as opposed
    to". Dropped (an elaboration the rest stays true without): hedges and examples ("usually ...",
    "especially ...", "e.g. ...", "such as ..."), restatements and alternatives ("a loose clot or air bubble").

    >>> meaning_bearing("without saying farewell"), meaning_bearing("not necessarily married")
    (True, True)
    >>> meaning_bearing("usually including sidewalks"), meaning_bearing("especially hunting")
    (False, False)
    """
    toks = [t.lower() for t in WORD.findall(aside)]
    return bool(toks) and (toks[0] in RESTRICTING_ASIDES or "as opposed to" in " ".join(toks))


def strip_parentheticals(text: str, keep_meaning: bool = True) -> str:
    """Remove (...) and [...] asides that only elaborate; keep those that restrict or negate (`meaning_bearing`).

    >>> strip_parentheticals("a thoroughfare (usually including sidewalks) that is lined with buildings")
    'a thoroughfare that is lined with buildings'
    >>> strip_parentheticals("an abrupt and unannounced departure (without saying farewell)")
    'an abrupt and unannounced departure (without saying farewell)'
    >>> strip_parentheticals("a departure (without saying farewell)", keep_meaning=False)
    'a departure'
    """
    kept: list[str] = []

    def replace(m: re.Match) -> str:
        if keep_meaning and meaning_bearing(m.group(1)):
            kept.append(m.group(0).strip())
            return f" \x00{len(kept) - 1}\x00"
        return ""

    prev = None
    while prev != text:
        prev, text = text, re.sub(r"\s*[(\[]([^()\[\]\x00]*)[)\]]", replace, text)
    text = re.sub(r"\x00(\d+)\x00", lambda m: kept[int(m.group(1))], text)
    return re.sub(r"\s+", " ", text).strip()


@functools.lru_cache(maxsize=1)
def tagger():
    from ..data.nltk_data import load_pos_tagger

    return load_pos_tagger()


@functools.lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    from ..data.nltk_data import load_stopwords

    return load_stopwords()


def pos_tag(words_: Sequence[str]) -> list[tuple[str, str]]:
    """Penn tags from NLTK's perceptron tagger (mirror copy)."""
    return list(tagger().tag(list(words_))) if words_ else []


GENERIC_NOUNS = {"thing", "things", "something", "someone", "one", "ones", "part", "kind", "type", "lot", "way",
                 "side", "front", "back", "top", "bottom", "end", "use", "time", "times", "other", "others"}


def query_nouns(query: str, wordnet=None, max_terms: int | None = None, modifiers: bool = True) -> list[str]:
    """Noun lemmas of a query in order of appearance (compounds such as 'tank top' first), de-duplicated.

    Used as the page-search terms of both retrievers (a title search per noun, like a Wikipedia page search).
    With `wordnet`, a term is kept only if WordNet knows it as a noun; plurals are reduced by WordNet lookup.
    `modifiers=False` leaves out a noun that premodifies the next singular noun without forming a WordNet compound
    with it ('tie' and 'die' in "a tie die shirt", 'pullover' in "a pullover shirt", 'round' tagged as a noun
    in "a round object"), or one coordinated with an adjective ('moral' in "moral or legal standing"): such a
    word describes its head, and its own senses (a necktie, a gambling die, a
    sweater, a round of ammunition) are rarely the thing in the scene.

    >>> class WN:  # a toy WordNet that knows four nouns
    ...     def synsets(self, term, pos): return ["x"] if term in {"boy", "tie", "shirt", "city street"} else []
    >>> query_nouns("A boy in a tie shirt walks down a city street.", WN())  # doctest: +SKIP
    ['boy', 'tie', 'shirt', 'city street']
    >>> query_nouns("A boy in a tie shirt walks down a city street.", WN(), modifiers=False)  # doctest: +SKIP
    ['boy', 'shirt', 'city street']
    """
    toks = WORD.findall(str(query))
    tagged = pos_tag(toks)
    listed = {(a.lower(), b.lower()) for a, b in re.findall(r"(\w+)\s*[,;:]\s*(\w+)", str(query))}  # "a, b"
    stop = stopwords()
    out: list[str] = []
    i = 0
    while i < len(tagged):
        word, tag = tagged[i]
        low = word.lower()
        if i + 1 < len(tagged) and wordnet is not None and tag.startswith(("NN", "JJ", "VBG")) \
                and tagged[i + 1][0].isalpha():  # "tank top": the tagger often calls 'top' an adjective
            pair = f"{low} {tagged[i + 1][0].lower()}"
            lemma = noun_lemma(pair, wordnet)
            if lemma:
                out.append(lemma)
                i += 2
                continue
        if not modifiers and tag.startswith("NN") and i + 1 < len(tagged) and tagged[i + 1][1] == "NN" \
                and not re.search(r"[^s]s$", tagged[i + 1][0].lower()) \
                and (low, tagged[i + 1][0].lower()) not in listed:  # "A dog barks": 'barks' tagged NN
            i += 1  # a premodifying noun ("a pullover shirt"): it describes the next noun
            continue
        if not modifiers and tag.startswith("NN") and i + 2 < len(tagged) and tagged[i + 1][1] == "CC" \
                and tagged[i + 2][1] == "JJ":
            i += 1  # coordinated with an adjective ("moral or legal standing"): an adjective itself
            continue
        if tag.startswith("NN") and low not in stop and low not in GENERIC_NOUNS and len(low) > 2 \
                and not low.isdigit():
            lemma = noun_lemma(low, wordnet) if wordnet is not None else low
            if lemma:
                out.append(lemma)
        i += 1
    out = list(dict.fromkeys(out))
    return out[:max_terms] if max_terms else out


def noun_lemma(word: str, wordnet) -> str | None:
    """The WordNet noun lemma of `word` (plural reduced), or None when WordNet has no such noun."""
    from ..decomposer import singular_candidates

    low = word.lower()
    candidates = [low, *singular_candidates(low)]
    if low.endswith("es") and low[:-1] in candidates:  # 'slopes' -> 'slope' before 'slop', 'games' -> 'game'
        candidates.remove(low[:-1])                    # before 'gam' ('boxes' -> 'box': 'boxe' is no noun)
        candidates.insert(candidates.index(low[:-2]), low[:-1])
    if low.endswith("men"):
        candidates.append(low[:-3] + "man")
    for c in candidates:  # the surface form first: 'pants' and 'glasses' are lemmas of their own
        if wordnet.synsets(c, "n"):
            return c
    return None
