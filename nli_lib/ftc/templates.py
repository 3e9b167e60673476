"""§2.4 "extract and transform with regex": the extraction templates of Tables 15 (E), 16 (C), 17 (N).

Each template is compiled from its printed form: `A` and `B` are the two spans, `R<k>` an alternation
of the family's word lists, anything else a literal word. Templates run on `text.normalize`d
explanations. Matching rules (companion choices, stated because the paper does not print them):

* a template that starts with a span starts at a clause boundary (text start or after , . ; : ! ?);
  spans never cross those punctuation marks; a template ending in a span runs to the clause end;
* between a span and the next literal a comma and one resumptive pronoun may sit
  ("just because A, it does not mean B"), except before a copula (is/are);
* spans lose leading determiners ('the dog' -> 'dog', as in Table 13's gold spans), a leading 'that' (also
  'imply that', left when R3 lacks 'necessarily imply' and P7 matches 'does not necessarily imply that B'),
  leading connectives and a leading 'be' ('just because', 'even if', 'and', 'so', 'be' of "can't be A if B"),
  and trailing conjunctions ('A but' -> 'A'); a span of function words only ('there', 'who') does not count;
* a span never runs across a clause connective: so/then/therefore/thus/hence followed by a subject
  ("people hiking up a mountain so they are in the mountain": P7 "A are B" would take A = "… a mountain so
  they"; the match is skipped and P6 "A so B" splits the clauses, A = "people hiking up a mountain");
* when several templates match, the most specific one wins: the most connective letters (the template's
  own words in the match: not A, B, spaces, punctuation or a resumptive pronoun), then the shorter spans
  A + B, then the earliest start, then the printed order. All matching templates are still reported
  (`Extraction.matched`), so per-template hit rates can count either.

Printed quirks kept as printed: Table 17 lists "there is more A than B" twice (P2, P3) and two different
P12s (the second is `P12b` here); Table 16's P3 and P12 are both "A R1 be B". A duplicate can never be
the selected template (the first copy wins the tie), which the hit-rate tables show as 0.

>>> extract_regex("a dog is not a cat .", "contradiction")
Extraction(label='contradiction', template='P1', A='dog', B='cat', matched=('P1', 'P4', 'P6'))
>>> e = extract_regex("Just because he has a mop, does not mean he has a broom.", "neutral")
>>> e.template, e.A, e.B
('P4', 'he has a mop', 'he has a broom')
>>> extract_regex("protective gear is a piece of safety equipment", "entailment").template
'P1'
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..text import untokenize_ptb, word_spans
from .logic import as_label
from .text import FUNCTION_WORDS, strip_determiners

# Word lists (the R<k> rows of each table).
E_WORDS = {
    "R1": ("a", "an", "a type of", "a way of saying", "the same as", "a rephrasing of", "a form of",
           "another form of", "synonymous with"),
    "R2": ("is", "are"),
    "R3": ("synonyms",),
    "R4": ("then", "so", "must be", "has to be", "have to be"),
}
C_WORDS = {
    "R1": ("cant", "cannot", "can't", "can not"),
    "R2": ("at the same time", "simultaneously", "at once"),
    "R3": ("is", "are"),
    "R4": ("not the same as", "not", "the opposite of", "different than"),
    "R5": ("he", "she", "they"),
    "R6": ("a", "an"),
}
N_WORDS = {
    "R1": ("is", "are"),
    "R2": ("not all", "not every"),
    "R3": ("mean", "necessarily mean", "make", "necessarily make", "imply", "indicate"),
    "R4": ("does not", "doesnt", "doesn't"),
    "R5": ("did not", "didn't", "didnt"),
}

# (id, printed pattern) in printed order.
E_PATTERNS = (("P1", "A is R1 B"), ("P2", "A implies B"), ("P3", "A and B are R3"),
              ("P4", "A and B R2 the same thing"), ("P5", "if A then B"), ("P6", "A R4 B"), ("P7", "A R2 B"))
C_PATTERNS = (("P1", "A R3 not R6 B"), ("P2", "R1 be A and B R2"), ("P3", "A R1 be B"), ("P4", "A R3 R4 B"),
              ("P5", "R3 either A or B"), ("P6", "A R3 not B"), ("P7", "A R3 different than B"),
              ("P8", "R1 be A if R3 B"), ("P9", "R1 be A if R5 is B"), ("P13", "R1 A if B"),
              ("P10", "A and B R3 different"), ("P11", "A would not be able to B"), ("P12", "A R1 be B"))
N_PATTERNS = (("P1", "R2 A R1 B"), ("P2", "there is more A than B"), ("P3", "there is more A than B"),
              ("P4", "just because A R4 R3 B"), ("P5", "A R1 not necessarily B"), ("P6", "A R4 have to be B"),
              ("P7", "A R4 necessarily B"), ("P8", "A R4 R3 B"), ("P9", "can A without B"),
              ("P10", "could be A not just B"), ("P12", "we R5 know A to B"), ("P11", "we R5 know if A or B"),
              ("P12b", "we can't tell if A is B"), ("P13", "if A then B"), ("P14", "this R4 imply A or B"),
              ("P15", "A and B R1 two different"), ("P16", "A and B R1 different"),
              ("P17", "not everyone A will B"), ("P18", "A may not be B"), ("P19", "it cannot be assumed that A is B"),
              ("P20", "some A or B"), ("P21", "A might not be B"), ("P22", "there is not evidence A or B"),
              ("P23", "R4 have to be A to B"), ("P24", "no way to know A or B"))

FAMILIES = {"entailment": (E_PATTERNS, E_WORDS, "Table 15"), "contradiction": (C_PATTERNS, C_WORDS, "Table 16"),
            "neutral": (N_PATTERNS, N_WORDS, "Table 17")}

_SPAN = r"(?:[^,.;:!?]|(?<=\d)[.,](?=\d))+?"  # spans stop at punctuation, but not inside a number ("9.99")
_CLAUSE_START = r"(?:^|(?<=[,.;:!?]))\s*"
# After a span: a comma or space, then optionally a resumptive pronoun (group gap<k>: not connective text).
_GAP_AFTER_SPAN = r"(?:\s*,\s*|\s+)(?P<gap{k}>(?:it|this|that|they)\s+)?"


@dataclass(frozen=True)
class Template:
    """One extraction rule of Tables 15–17."""

    label: str  # family: entailment (Table 15), contradiction (16), neutral (17)
    id: str  # printed id, e.g. 'P4' ('P12b' for Table 17's second P12)
    pattern: str  # as printed, e.g. 'just because A R4 R3 B'
    regex: re.Pattern  # compiled matcher with groups A and B


def _literal(word: str) -> str:
    return r"\b" + re.escape(word).replace(r"\ ", r"\s+") + r"\b"


def compile_pattern(pattern: str, word_lists: dict[str, tuple[str, ...]]) -> re.Pattern:
    """Regex for a printed template such as 'A R3 not R6 B'."""
    parts, prev_span = [], False
    elements = pattern.split()
    for k, el in enumerate(elements):
        is_span = el in ("A", "B")
        if k == 0:
            parts.append(_CLAUSE_START if is_span else "")
        else:
            copula = el in ("is", "are") or (el in word_lists and "is" in word_lists[el])
            gap = (_GAP_AFTER_SPAN.format(k=k) if not copula else r"(?:\s*,\s*|\s+)") if prev_span else r"\s+"
            parts.append(r"(?:\s*,\s*|\s+)" if is_span else gap)
        if is_span:
            parts.append(f"(?P<{el}>{_SPAN})")
        elif re.fullmatch(r"R\d+", el):
            alts = sorted(word_lists[el], key=len, reverse=True)
            parts.append("(?:" + "|".join(_literal(a) for a in alts) + ")")
        else:
            parts.append(_literal(el))
        prev_span = is_span
    if elements[-1] in ("A", "B"):
        parts.append(r"\s*(?=[,;:!?]|\.(?!\d)|$)")
    return re.compile("".join(parts))


TEMPLATES: dict[str, tuple[Template, ...]] = {
    label: tuple(Template(label, tid, pat, compile_pattern(pat, word_lists)) for tid, pat in patterns)
    for label, (patterns, word_lists, _) in FAMILIES.items()
}


# e-SNLI annotators often write "A is part of the overall description of B" or "A is a rephrasing of B": the
# span is B, not the meta phrase (substituting "part of the overall description of …" is never a sentence).
_META_PREFIX = re.compile(r"^(?:(?:a|an|the)\s+)?(?:(?:(?:part|all|some)\s+of\s+the\s+)?(?:overall\s+|same\s+|"
                          r"more\s+\w+\s+)?(?:description|descriptions|sentence|statement|picture|scene)\s+of|"
                          r"(?:rephrasing|paraphrase|paraphrasing|restatement|rewording|rephrase|generalization|summary)"
                          r"\s+of|(?:another|other|different)\s+(?:way|word|words|term)\s+(?:of\s+saying|to\s+say|for))"
                          r"\s+(?:the\s+|a\s+|an\s+)?")


def clean_span(span: str) -> str:
    """Trim a captured span: connectives and determiners in front, conjunctions at the end, and a meta prefix
    ("part of the overall description of", "a paraphrase of").

    >>> clean_span("part of the overall description of the dog with a ball"), clean_span("a paraphrase of carrying it")
    ('dog with a ball', 'carrying it')
    >>> clean_span("overall description of the dog"), clean_span("more detailed descriptions of man and costume")
    ('dog', 'man and costume')

    >>> clean_span("just because the man is using stereo equipment")
    'man is using stereo equipment'
    >>> clean_span("be a person"), clean_span("on a hill but")
    ('person', 'on a hill')
    """
    s = span.strip(" ,.;:!?\"'")
    s = re.sub(r"^(?:(?:imply|implies|mean|means|indicate|indicates|suggest|suggests)\s+that\s+)", "", s)
    s = re.sub(r"^(?:(?:that|if|whether|and|but|or|so|because|then|just|even|be)\s+)+", "", s)
    s = re.sub(r"(?:\s+(?:and|but|or|so|then|because|if))+$", "", s)
    s = strip_determiners(s).strip()
    return _META_PREFIX.sub("", s).strip() or s


_CLAUSE_CONNECTIVE = re.compile(r"\b(?:so|then|therefore|thus|hence)\s+(?:he|she|they|it|we|you|i|there|the|a|an|this|"
                                r"that|these|those|his|her|their|its|one|someone|somebody|people|everyone)\b")


def crosses_clause(span: str) -> bool:
    """Whether a raw span runs across a clause connective ('… a mountain so they …').

    >>> crosses_clause("people hiking up a mountain so they"), crosses_clause("a boy so happy")
    (True, False)
    """
    return bool(_CLAUSE_CONNECTIVE.search(span))


def has_content(span: str) -> bool:
    return any(w not in FUNCTION_WORDS for w, _, _ in word_spans(span))


@dataclass(frozen=True)
class Extraction:
    """Spans A and B extracted from one explanation (A = B = None when no template fits)."""

    label: str  # template family used
    template: str | None  # id of the selected template, or None
    A: str | None
    B: str | None
    matched: tuple[str, ...] = ()  # ids of every template that matched (printed order)

    @property
    def ok(self) -> bool:
        return self.template is not None


def _connective_letters(m: re.Match) -> int:
    """Letters of the template's own words in a match: everything but A, B and resumptive pronouns."""
    keep = [True] * (m.end() - m.start())
    for name, value in m.groupdict().items():
        if value is not None and (name in ("A", "B") or name.startswith("gap")):
            for i in range(m.start(name) - m.start(), m.end(name) - m.start()):
                keep[i] = False
    return sum(1 for ch, k in zip(m.group(0), keep) if k and ch.isalnum())


def template_matches(explanation: str, label: str) -> list[tuple[Template, str, str, int, int]]:
    """Every template of `label`'s family that matches: (template, A, B, start, connective letters)."""
    text = untokenize_ptb(explanation)
    out = []
    for t in TEMPLATES[as_label(label)]:
        for m in t.regex.finditer(text):
            if crosses_clause(m.group("A")) or crosses_clause(m.group("B")):
                continue
            a, b = clean_span(m.group("A")), clean_span(m.group("B"))
            if has_content(a) and has_content(b):
                out.append((t, a, b, m.start(), _connective_letters(m)))
                break
    return out


def extract_regex(explanation: str, label: str) -> Extraction:
    """Regex extraction of (A, B) with the family of `label` (most specific matching template wins:
    most connective letters, then shorter A + B, then earliest start, then printed order).

    >>> e = extract_regex("jockeys are people , so jockeys riding horses are people riding horses .", "E")
    >>> e.template, e.A, e.B                       # P7 ('are', 3 letters) beats P6 ('so', 2 letters)
    ('P7', 'jockeys', 'people')
    >>> e = extract_regex("the man ca n't be speaking if everyone is silent .", "C")
    >>> e.template, e.A, e.B                       # P3 and P13 tie on letters; P13's spans are shorter
    ('P13', 'speaking', 'everyone is silent')
    """
    label = as_label(label)
    hits = template_matches(explanation, label)
    if not hits:
        return Extraction(label, None, None, None, ())
    order = {t.id: i for i, t in enumerate(TEMPLATES[label])}
    best = min(hits, key=lambda h: (-h[4], len(h[1]) + len(h[2]), h[3], order[h[0].id]))
    return Extraction(label, best[0].id, best[1], best[2], tuple(h[0].id for h in hits))


def template_table() -> "pd.DataFrame":  # noqa: F821
    """Every template as printed (family, table, id, pattern) — the appendix tables as a frame."""
    import pandas as pd

    rows = [{"label": label, "table": FAMILIES[label][2], "template": t.id, "pattern": t.pattern}
            for label, ts in TEMPLATES.items() for t in ts]
    return pd.DataFrame(rows)
