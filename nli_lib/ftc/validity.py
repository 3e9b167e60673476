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
``phrase_kind_mismatch``   the replaced and the inserted text are different kinds of phrase (noun phrase for a
                           verb phrase, …; the inserted text is also tagged on its own, since in context the
                           tagger reads "The play soccer" as nouns, and where it came from: "a jumping kick" in
                           the explanation is a noun phrase, so "is jumping kick with bears" replaces a verb with
                           a determiner-less noun phrase); any predicate may follow a copula
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
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

from ..ruletable import RuleTable
from ..text import clitic_tokens, untokenize_ptb
from .postag import FINITE, NOUN, main_finite, phrase_kind, plural_form, tag
from .text import FUNCTION_WORDS, stem
from .wellformed import (
    BAD_END,
    BAD_START,
    COPULAS,
    PLACE_PREPOSITIONS,
    POSTMODIFIER_KINDS,
    SUBJECT_PRONOUNS,
    SUBJECT_START,
    adjacent_repeats,
    agreement,
    antecedentless,
    bare_nouns,
    being_as_place,
    copula_verbs,
    determiner_problems,
    existential_without_subject,
    head_agreement,
    intransitive_objects,
    kinds_compatible,
    orphaned_objects,
    orphaned_particles,
    participle_caption,
    preposition_objects,
    pronoun_alone,
    pronoun_for_noun,
    pronoun_gender,
    relation_words,
    subject_end,
    trailing_adverbs,
    with_source_tags,
)

# The checks in the module table's order (the order reports list them in); `RULES` says how each is found.
CHECKS = ("unchanged", "nothing_kept", "repeated_ngram", "repeated_word", "determiner_no_noun", "copula_bare_noun",
          "copula_verb", "agreement", "intransitive_object", "subjectless", "unresolved_pronoun", "no_finite_verb",
          "clause_inserted", "dangling_end", "phrase_kind_mismatch", "preposition_object", "orphaned_object",
          "other_claim_kept", "relation_words", "pronoun_gender", "stray_quote", "being_as_place")


@dataclass(frozen=True)
class Validity:
    """The verdict of the well-formedness checks on one counterfactual."""

    status: str  # 'ok' or 'malformed'
    reason: str = ""  # '; '-joined '<check>: <evidence>' for every check that fired ('' when ok)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class Edit:
    """What the rules read: the hypothesis `h` and its counterfactual `x`, tagged (the inserted runs found in
    `source` with the tags they have there), and the word-level edit (`difflib` opcodes) from one to the other."""

    hypothesis: str
    x_cf: str
    slot: str
    tagger: object
    source: str | None
    premise: str | None
    h: list[tuple[str, str]]
    x: list[tuple[str, str]]
    ops: list[tuple[str, int, int, int, int]]
    source_after_det: set[int] = field(default_factory=set)  # inserted runs that follow a determiner in `source`

    @cached_property
    def hw(self) -> list[str]:
        return [w for w, _ in self.h]

    @cached_property
    def xw(self) -> list[str]:
        return [w for w, _ in self.x]

    @cached_property
    def inserted(self) -> list[int]:
        return [j for op, _, _, j1, j2 in self.ops if op != "equal" for j in range(j1, j2)]

    @cached_property
    def kept(self) -> list[int]:
        return [j for op, _, _, j1, j2 in self.ops if op == "equal" for j in range(j1, j2)]


# in the order they run, which is the order a reason lists the problems in
RULES = RuleTable("counterfactual check", CHECKS)


def _listed(found) -> list[str]:
    """One problem listing the sorted `found`, or none."""
    return [", ".join(repr(f) for f in sorted(found))] if found else []


@RULES.rule("unchanged", "x_cf is x after normalisation (slot N[B] may keep x)")
def _unchanged(e: Edit) -> list[str]:
    same = untokenize_ptb(e.x_cf) == untokenize_ptb(e.hypothesis)
    return ["counterfactual = hypothesis"] if same and e.slot != "N[B]" else []


@RULES.rule("nothing_kept", "slots E and C: none of x's content words (two or more) survives")
def _nothing_kept(e: Edit) -> list[str]:
    if e.slot in ("E", "C") and sum(w not in FUNCTION_WORDS for w in e.hw) > 1 and \
            not any(e.xw[j] not in FUNCTION_WORDS for j in e.kept):
        return ["the whole hypothesis was replaced"]
    return []


def _new_repeats(e: Edit) -> set[str]:
    return adjacent_repeats(e.xw) - adjacent_repeats(e.hw)


@RULES.rule("repeated_ngram", "a new n-gram (n ≤ 4) right after itself")
def _repeated_ngram(e: Edit) -> list[str]:
    return _listed(_new_repeats(e))


@RULES.rule("repeated_word",
            "an inserted content word now more often than in x, also in the kept text (no repeated n-gram)")
def _repeated_word(e: Edit) -> list[str]:
    h_count, x_count = Counter(stem(w) for w in e.hw), Counter(stem(w) for w in e.xw)
    kept_stems = {stem(e.xw[j]) for j in e.kept}
    doubled = {e.xw[j] for j in e.inserted if e.xw[j] not in FUNCTION_WORDS and stem(e.xw[j]) in kept_stems
               and x_count[stem(e.xw[j])] > h_count[stem(e.xw[j])]}
    return [] if _new_repeats(e) else _listed(doubled)


@RULES.rule("determiner_no_noun", "a determiner or possessive not followed by a noun")
def _determiner_no_noun(e: Edit) -> list[str]:
    return _listed(determiner_problems(e.x) - determiner_problems(e.h))


@RULES.rule("copula_bare_noun", "a copula before a singular noun without determiner, or is/was before a plural")
def _copula_bare_noun(e: Edit) -> list[str]:
    return _listed(bare_nouns(e.x) - bare_nouns(e.h))


@RULES.rule("copula_verb", "a copula before a verb, subordinator or pronoun; verb + verb; two -ing verbs")
def _copula_verb(e: Edit) -> list[str]:
    return _listed(copula_verbs(e.x) - copula_verbs(e.h))


@RULES.rule("agreement", "number disagreement between determiner, numeral, noun and verb")
def _agreement(e: Edit) -> list[str]:
    return _listed((agreement(e.x) | head_agreement(e.x)) - (agreement(e.h) | head_agreement(e.h)))


@RULES.rule("intransitive_object", "an inserted verb that takes no object, now before a noun phrase")
def _intransitive_object(e: Edit) -> list[str]:
    return _listed(intransitive_objects(e.x, set(e.inserted)))


@RULES.rule("subjectless", "x starts with its subject, x_cf with a verb or preposition; 'there is' + no noun phrase")
def _subjectless(e: Edit) -> list[str]:
    h, x = e.h, e.x
    if h and h[0][1] in SUBJECT_START and (x[0][1] in BAD_START or (x[0][1] == "VBG" and h[0][1] != "VBG")):
        return [f"starts with {x[0][0]!r} ({x[0][1]})"]
    if existential_without_subject(x) and not existential_without_subject(h):
        return [f"{' '.join(e.xw[:3])!r} has no noun phrase after 'there'"]
    return []


@RULES.rule("unresolved_pronoun", "a pronoun whose referent the rewrite lost")
def _unresolved_pronoun(e: Edit) -> list[str]:
    if pronoun_alone(e.x) and (not pronoun_alone(e.h) or e.xw[0] != e.hw[0]):  # "they are singing" -> "it is in …"
        return [repr(e.xw[0])]
    return _listed(pronoun_for_noun(e.h, e.x, e.ops) | (antecedentless(e.x) - antecedentless(e.h)))


@RULES.rule("no_finite_verb", "x has a main-clause finite verb, x_cf none and is no caption")
def _no_finite_verb(e: Edit) -> list[str]:
    return [""] if main_finite(e.h) and not main_finite(e.x) and not participle_caption(e.x) else []


@RULES.rule("clause_inserted", "the inserted text brings a second main-clause finite verb")
def _clause_inserted(e: Edit) -> list[str]:
    if e.inserted and len(main_finite(e.x)) > len(main_finite(e.h)) and any(e.x[j][1] in FINITE for j in e.inserted):
        return [repr(" ".join(e.xw[j] for j in e.inserted))]
    return []


@RULES.rule("stray_quote", "a quote mark of the explanation spliced in")
def _stray_quote(e: Edit) -> list[str]:
    x_words, h_words = str(e.x_cf).split(), str(e.hypothesis).split()
    quotes = [q for q in ("'", "`", "``", "''", '"') if x_words.count(q) > h_words.count(q)]
    return [", ".join(repr(q) for q in quotes)] if quotes else []


@RULES.rule("phrase_kind_mismatch", "an inserted noun phrase that drags an -ly adverb of the explanation along")
def _trailing_adverb(e: Edit) -> list[str]:
    return _listed(trailing_adverbs(e.x, e.ops, e.hw))


@RULES.rule("being_as_place", "a kept in/inside/into before an inserted person or animal")
def _being_as_place(e: Edit) -> list[str]:
    return _listed(being_as_place(e.x, e.ops))


@RULES.rule("relation_words", "inserted words about the explanation, not the scene")
def _relation_words(e: Edit) -> list[str]:
    return _listed(relation_words(e.x, e.inserted, e.hw))


@RULES.rule("pronoun_gender", "a kept pronoun of the replaced noun's gender; an inserted possessive of the wrong one")
def _pronoun_gender(e: Edit) -> list[str]:
    return _listed(pronoun_gender(e.x, e.h, e.ops))


@RULES.rule("preposition_object", "a kept preposition before inserted text that is no noun phrase")
def _preposition_object(e: Edit) -> list[str]:
    return _listed(preposition_objects(e.x, e.ops))


@RULES.rule("orphaned_object", "a kept object or particle after inserted text that cannot take it")
def _orphaned_object(e: Edit) -> list[str]:
    return _listed(orphaned_objects(e.h, e.x, e.ops) | orphaned_particles(e.h, e.x, e.ops))


@RULES.rule("other_claim_kept",
            "slots C and N[A], given premise and source: another claim of the explanation unapplied")
def _other_claim_kept(e: Edit) -> list[str]:
    if e.premise is not None and e.source and e.slot in ("C", "N[A]"):
        return _listed(other_claims_kept(e.premise, e.hypothesis, e.x_cf, e.source))
    return []


@RULES.rule("dangling_end", "x_cf ends in a preposition, determiner, conjunction, auxiliary or subject pronoun")
def _dangling_end(e: Edit) -> list[str]:
    last_x, last_h = e.x[-1], e.h[-1] if e.h else ("", "")
    if (last_x[1] in BAD_END or last_x[0] in SUBJECT_PRONOUNS or last_x[0] in COPULAS) and \
            (last_x[1] != last_h[1] or last_x[0] != last_h[0]):
        return [repr(last_x[0])]
    return []


def _kinds_may_differ(e: Edit, i1: int, i2: int, j1: int, j2: int, kh: str, kx: str) -> bool:
    """Replacements whose phrase kinds may differ: after the subject noun, a participle and a prepositional phrase
    both modify it ("boy in a swing"); a neutral counterfactual may restate x as a caption (Table 14: "A track
    athlete carrying …"; a C/E substitution keeps x's syntactic structure, §2.4); one modifier word for another
    before the same noun ("a blue scarf" / "an orange scarf")."""
    h, x = e.h, e.x
    if i1 > 0 and h[i1 - 1][1] in NOUN and {kh, kx} <= POSTMODIFIER_KINDS and subject_end(h) == i1:
        return True
    if e.slot.startswith("N[") and kh == "V" and kx == "VBG" and subject_end(h) == i1 and \
            participle_caption(x) and not any(t in FINITE for _, t in x):
        return True
    prenominal = i2 < len(h) and j2 < len(x) and h[i2][1] in NOUN and x[j2][1] in NOUN
    one_word = [t for _, t in h[i1:i2] + x[j1:j2] if t not in ("DT", "PRP$")]
    return prenominal and {kh, kx} == {"ADJ", "NP"} and len(one_word) == 2


def _bare_np_for_verb(e: Edit, j1: int, j2: int, kh: str) -> bool:
    """In the explanation the inserted text followed a determiner: a noun phrase ("a jumping kick"), now in a
    verb's place without its determiner ("is jumping kick with bears")."""
    x = e.x
    nouns = [w for w, t in x[j1:j2] if t in NOUN]
    return j1 in e.source_after_det and kh in ("V", "VBG") and x[j1][1] not in ("DT", "PRP$") and \
        phrase_kind([t for _, t in x[j1:j2]], True) == "NP" and bool(nouns) and not plural_form(nouns[-1])


def _odd_predicate(e: Edit, j1: int, kh: str, kx: str, predicate: bool) -> bool:
    """After a copula, a progressive verb replaced by a time/other non-place phrase or a bare noun phrase: "are
    during a game", "are people"."""
    x, xw = e.x, e.xw
    return predicate and kh == "VBG" and j1 < len(x) and (
        (kx == "PP" and xw[j1] not in PLACE_PREPOSITIONS and xw[j1 : j1 + 2] != ["about", "to"])
        or (kx == "NP" and x[j1][1] in NOUN))


def _kind_mismatch(e: Edit, i1: int, i2: int, j1: int, j2: int) -> str | None:
    """The evidence when the text at h[i1:i2], replaced by x[j1:j2], is another kind of phrase (the inserted text is
    also tagged on its own, since in context the tagger reads "The play soccer" as nouns); any predicate may
    follow a copula."""
    h, x, hw, xw = e.h, e.x, e.hw, e.xw
    after_det = i1 > 0 and h[i1 - 1][1] in ("DT", "PRP$")
    kh = phrase_kind([t for _, t in h[i1:i2]], after_det)
    kx = phrase_kind([t for _, t in x[j1:j2]], after_det)
    alone = phrase_kind([t for _, t in tag(" ".join(xw[j1:j2]), e.tagger)], after_det)  # tagged out of context
    predicate = (hw[i1 - 1] if i1 > 0 else "") in COPULAS
    if _kinds_may_differ(e, i1, i2, j1, j2, kh, kx):
        return None
    verbal_for_noun = {kh, alone} in ({"NP", "V"}, {"NP", "VBG"})
    bare_np_for_verb = _bare_np_for_verb(e, j1, j2, kh)
    odd_predicate = _odd_predicate(e, j1, kh, kx, predicate)
    if odd_predicate:
        kx = "PP" if kx == "PP" else "bare NP"
    compatible = kinds_compatible(kh, kx, predicate)
    if compatible and not (verbal_for_noun and not predicate) and not bare_np_for_verb and not odd_predicate:
        return None
    kx = kx if not compatible else "NP" if bare_np_for_verb else alone
    return f"{' '.join(hw[i1:i2])!r} ({kh}) → {' '.join(xw[j1:j2])!r} ({kx})"


@RULES.rule("phrase_kind_mismatch", "replaced and inserted text are different kinds of phrase")
def _replaced_phrase_kind(e: Edit) -> list[str]:
    found = [_kind_mismatch(e, i1, i2, j1, j2) for op, i1, i2, j1, j2 in e.ops if op == "replace"]
    return [f for f in found if f is not None]


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


def _edit(hypothesis: str, x_cf: str, slot: str, tagger, source: str | None, premise: str | None) -> Edit | None:
    """The `Edit` the rules read (None when x_cf has no token)."""
    h, x = tag(hypothesis, tagger), tag(x_cf, tagger)
    if not x:
        return None
    ops = difflib.SequenceMatcher(a=[w for w, _ in h], b=[w for w, _ in x], autojunk=False).get_opcodes()
    source_after_det: set[int] = set()
    if source:
        x, source_after_det = with_source_tags(x, ops, tag(source, tagger))
    return Edit(hypothesis, x_cf, slot, tagger, source, premise, h, x, ops, source_after_det)


def check_counterfactual(hypothesis: str, x_cf: str | None, slot: str = "E", tagger=None,
                         source: str | None = None, premise: str | None = None) -> Validity:
    """Run every rule of `RULES` on `x_cf` against its `hypothesis` (checks: see the module table). `source`:
    the explanation the spans came from; inserted words found in it verbatim keep the tags they have there.
    With `premise` and `source`, slots C and N[A] (whose y_cf is entailment) are also checked for
    `other_claims_kept`. The reason lists each problem as '<check>: <evidence>', in the order the rules run:

    >>> print(RULES.table())
    unchanged             x_cf is x after normalisation (slot N[B] may keep x)
    nothing_kept          slots E and C: none of x's content words (two or more) survives
    repeated_ngram        a new n-gram (n ≤ 4) right after itself
    repeated_word         an inserted content word now more often than in x, also in the kept text (no repeated n-gram)
    determiner_no_noun    a determiner or possessive not followed by a noun
    copula_bare_noun      a copula before a singular noun without determiner, or is/was before a plural
    copula_verb           a copula before a verb, subordinator or pronoun; verb + verb; two -ing verbs
    agreement             number disagreement between determiner, numeral, noun and verb
    intransitive_object   an inserted verb that takes no object, now before a noun phrase
    subjectless           x starts with its subject, x_cf with a verb or preposition; 'there is' + no noun phrase
    unresolved_pronoun    a pronoun whose referent the rewrite lost
    no_finite_verb        x has a main-clause finite verb, x_cf none and is no caption
    clause_inserted       the inserted text brings a second main-clause finite verb
    stray_quote           a quote mark of the explanation spliced in
    phrase_kind_mismatch  an inserted noun phrase that drags an -ly adverb of the explanation along
    being_as_place        a kept in/inside/into before an inserted person or animal
    relation_words        inserted words about the explanation, not the scene
    pronoun_gender        a kept pronoun of the replaced noun's gender; an inserted possessive of the wrong one
    preposition_object    a kept preposition before inserted text that is no noun phrase
    orphaned_object       a kept object or particle after inserted text that cannot take it
    other_claim_kept      slots C and N[A], given premise and source: another claim of the explanation unapplied
    dangling_end          x_cf ends in a preposition, determiner, conjunction, auxiliary or subject pronoun
    phrase_kind_mismatch  replaced and inserted text are different kinds of phrase
    >>> check_counterfactual("A man is at a restaurant .", "A man is at a at a restaurant .").reason
    "repeated_ngram: 'at a'; determiner_no_noun: 'a at'"
    >>> check_counterfactual("The men are older .", "The in their later years .").status
    'malformed'
    """
    if x_cf is None or not str(x_cf).strip():
        return Validity("malformed", "empty")
    edit = _edit(hypothesis, x_cf, slot, tagger, source, premise)
    if edit is None:
        return Validity("malformed", "empty")
    problems = [f"{r.name}: {evidence}" if evidence else r.name for r in RULES for evidence in r.apply(edit)]
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
