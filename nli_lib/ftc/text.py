"""Text helpers for FTC: stem-tolerant span search and substitution (§2.4).

e-SNLI ships PTB-tokenised, lower-cased explanations ("a lady ca n't be young and old ."). The regex
templates are written for plain text, so `nli_lib.text.untokenize_ptb` re-attaches clitics and drops quote
tokens first.

Substitution is what both transform steps need: find a phrase of the explanation in the hypothesis and
put another phrase in its place. `find_span` looks for the phrase's words as a contiguous run, first
verbatim (case-insensitive), then by Porter stem ("walking" ~ "walk": the paper's "stemmed word
replacement"); leading determiners of the phrase are optional, and the hypothesis keeps its own.

>>> find_span("Two kids are walking home .", "walk home").kind
'stem'
>>> substitute("The dog is barking at the girl .", "dog", "an animal")
'The animal is barking at the girl .'
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..text import word_spans, words

DETERMINERS = frozenset({"a", "an", "the", "some", "this", "that", "these", "those"})
# Function words: a span made only of these carries no content (e.g. A = "there" in "there is a man").
FUNCTION_WORDS = frozenset("""
a an the some any this that these those there here it its they them their he him his she her we us our you your
i me my one ones is are was were be been being am do does did not no nor n't and or but if then so than as of to
in on at by for with from up down out into onto over under about s 's can can't cannot could would should will
may might must has have had just because also very too all every each both either neither same different
who whom whose which what where when while
""".split())
AUXILIARIES = frozenset("is are was were be been being has have had do does did can could will would may might "
                        "must should".split())

_STEMMER = None


@lru_cache(maxsize=50_000)
def stem(word: str) -> str:
    """Porter stem (nltk), with irregular plurals folded ('women' -> 'woman')."""
    global _STEMMER
    if _STEMMER is None:
        from nltk.stem.porter import PorterStemmer

        _STEMMER = PorterStemmer()
    word = {"women": "woman", "men": "man", "children": "child", "people": "person", "feet": "foot"}.get(word, word)
    return _STEMMER.stem(word)


def strip_determiners(phrase: str) -> str:
    """Drop leading determiners and a leading 'that' ('the dog' -> 'dog')."""
    ws = str(phrase).strip().split()
    while ws and ws[0].lower() in DETERMINERS:
        ws = ws[1:]
    return " ".join(ws)


@dataclass(frozen=True)
class SpanMatch:
    """Where a phrase was found in a text."""

    start: int  # character offsets in the searched text
    end: int
    kind: str  # 'exact' (same words), 'stem' (same Porter stems) or 'partial' (aligned content words)
    score: float = 1.0  # share of the phrase's content words covered (1.0 for exact/stem)


def _find_run(seq: list[str], sub: list[str]) -> int:
    n = len(sub)
    for i in range(len(seq) - n + 1):
        if seq[i : i + n] == sub:
            return i
    return -1


def find_span(text: str, phrase: str) -> SpanMatch | None:
    """First occurrence of `phrase` in `text` as whole words: verbatim, then by stem (None if absent).

    Leading determiners of the phrase are optional ("the dog" matches "a dog" at "dog").
    """
    tw = word_spans(text)
    pw = words(phrase)
    if not tw or not pw or all(w in FUNCTION_WORDS for w in pw):
        return None
    candidates = [pw]
    trimmed = list(pw)
    while trimmed and trimmed[0] in DETERMINERS:
        trimmed = trimmed[1:]
    if trimmed and trimmed != pw:
        candidates.append(trimmed)
    surface = [w for w, _, _ in tw]
    stems = [stem(w) for w in surface]
    for kind, seq, fn in (("exact", surface, lambda x: x), ("stem", stems, stem)):
        for cand in candidates:
            i = _find_run(seq, [fn(w) for w in cand])
            if i >= 0:
                return SpanMatch(tw[i][1], tw[i + len(cand) - 1][2], kind)
    return None


def align_span(text: str, phrase: str, min_score: float = 0.5, max_extra: int = 2) -> SpanMatch | None:
    """Fuzzy alignment: the shortest window of `text` covering most of the phrase's content stems.

    Tries `find_span` first. Otherwise every window of the text up to len(phrase)+max_extra words is
    scored by the share of the phrase's content stems it contains (ties: shorter, earlier window); a
    window must cover at least `min_score` of them and start/end on a covered or phrase word.

    >>> m = align_span("Two kids walk home from school .", "going home from school")
    >>> "Two kids walk home from school ."[m.start:m.end], m.kind
    ('home from school', 'partial')
    """
    exact = find_span(text, phrase)
    if exact:
        return exact
    tw = word_spans(text)
    pw = words(phrase)
    target = {stem(w) for w in pw if w not in FUNCTION_WORDS}
    if not tw or not target:
        return None
    phrase_stems = {stem(w) for w in pw}
    stems = [stem(w) for w, _, _ in tw]
    best = None
    for i in range(len(tw)):
        if stems[i] not in phrase_stems:
            continue
        for j in range(i, min(len(tw), i + len(pw) + max_extra)):
            if stems[j] not in phrase_stems:
                continue
            covered = target & set(stems[i : j + 1])
            score = len(covered) / len(target)
            key = (score, -(j - i), -i)
            if score >= min_score and (best is None or key > best[0]):
                best = (key, i, j, score)
    if best is None:
        return None
    _, i, j, score = best
    return SpanMatch(tw[i][1], tw[j][2], "partial", round(score, 3))


def _trim_overlap(before: str, rep: str, after: str) -> str:
    """`rep` without the words it repeats (by stem) from the text right before or after the match.

    Spans often carry the subject or verb the text already has around the match ("Two kids walk" +
    "kids walking down a sidewalk"); keeping both would double them. Only runs with a content word count,
    and at least one word of `rep` stays.

    >>> _trim_overlap("A young boy ", "young boy leaping into sand", " at a playground .")
    'leaping into sand'
    >>> _trim_overlap("Two ", "going home from school", " home from school .")
    'going'
    """
    bw, rw, aw = word_spans(before), word_spans(rep), word_spans(after)
    stems = lambda ws: [stem(w) for w, _, _ in ws]  # noqa: E731
    content = lambda ws: any(w not in FUNCTION_WORDS for w, _, _ in ws)  # noqa: E731
    for k in range(min(len(bw), len(rw) - 1), 0, -1):
        if stems(bw[-k:]) == stems(rw[:k]) and content(rw[:k]):
            rep, rw = rep[rw[k][1]:], word_spans(rep[rw[k][1]:])
            break
    for k in range(min(len(aw), len(rw) - 1), 0, -1):
        if stems(rw[-k:]) == stems(aw[:k]) and content(rw[-k:]):
            rep = rep[: rw[-k - 1][2]]
            break
    return rep.strip()


_PREDICATE_START = frozenset("in on at near outside inside under behind beside next into onto over".split())


def _drop_repeated_subject(before: str, rep: str) -> str:
    """`rep` without a leading noun phrase the sentence already has before the match, when a predicate follows.

    A span often names the subject with its predicate ("man sitting outside"); put after "The man is", only
    the predicate belongs there. Dropped: the repeated words (by stem; determiners optional) and a following
    who/that/which (+ is/are), when what is left starts with an -ing word or a preposition.

    >>> _drop_repeated_subject("The man is ", "man sitting outside"), _drop_repeated_subject("A dog chases a ", "dog")
    ('sitting outside', 'dog')
    """
    rw, bw = word_spans(rep), word_spans(before)
    k = 0
    while k < len(rw) and rw[k][0] in DETERMINERS:
        k += 1
    before_stems = [stem(w) for w, _, _ in bw]
    for n in range(len(rw) - k - 1, 0, -1):
        run = [stem(w) for w, _, _ in rw[k : k + n]]
        if any(w not in FUNCTION_WORDS for w, _, _ in rw[k : k + n]) and _find_run(before_stems, run) >= 0:
            i = k + n
            if i < len(rw) and rw[i][0] in ("who", "that", "which"):
                i += 1 + (i + 1 < len(rw) and rw[i + 1][0] in ("is", "are"))
            if i < len(rw) and (rw[i][0].endswith("ing") or rw[i][0] in _PREDICATE_START):
                return rep[rw[i][1]:]
            break
    return rep


def replace_at(text: str, match: SpanMatch, replacement: str) -> str:
    """Put `replacement` at `match`: words it repeats from the text around the match are dropped
    (`_trim_overlap`, `_drop_repeated_subject`), and its leading determiner when the text already has one there."""
    before = text[: match.start]
    prev = word_spans(before)[-1:] if before.strip() else []
    rep = _drop_repeated_subject(before, _trim_overlap(before, replacement.strip(), text[match.end :]))
    if prev and prev[0][0] in DETERMINERS and before[prev[0][2]:].strip() == "":
        rep = strip_determiners(rep) or rep
    head = (word_spans(rep)[:1] or [("", 0, 0)])[0][0]
    if prev and prev[0][0] in ("a", "an") and before[prev[0][2]:].strip() == "" and head and head not in FUNCTION_WORDS:
        article = "an" if rep[0].lower() in "aeiou" else "a"  # keep "a/an" in agreement with the new word
        cased = article.capitalize() if before[prev[0][1]].isupper() else article
        before = before[: prev[0][1]] + cased + before[prev[0][2]:]
    if match.start == 0 and text[:1].isupper():
        rep = rep[:1].upper() + rep[1:]
    return (before + rep + text[match.end :]).strip()


def substitute(text: str, phrase: str, replacement: str) -> str | None:
    """`text` with the first (stem-tolerant) occurrence of `phrase` replaced by `replacement`, or None."""
    m = find_span(text, phrase)
    return None if m is None else replace_at(text, m, replacement)

