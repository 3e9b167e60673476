"""Realisation: atoms as sentences from the chunks of a clause (the Neo-Davidsonian conjuncts, in words).

Entities get existence atoms with the WordNet hypernym for people ("There is a person." / "The person is a
man."), adjectives and clothing get attribute atoms, the verb with its subject an action atom, and every
object, prepositional phrase, adverb and purpose an argument atom. Two styles: "incremental" ("The person is
riding on the sidewalk.") and the paper's pseudo-"cleft" ("The thing the person is riding on is the sidewalk.").

>>> out = AtomList("example")
>>> out.add("the person  stands on a dock .", "argument"); out.add("The person stands on a dock", "argument")
>>> [a.text for a in out.atoms]
['The person stands on a dock.']
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...ruletable import RuleTable
from . import RULES_VERSION
from .chunking import NP, VP
from .lexicon import (
    ASPECT_ADVERBS,
    BE,
    DO,
    GENERIC_PERSON,
    HAVE,
    LIGHT_VERBS,
    MASS_NOUNS,
    MODALS,
    NUMBER_WORDS,
    POSSESSIVES,
    SUBORDINATORS,
    TIME_WORDS,
)
from .morphology import article, gerund, pluralize, third_person
from .tagging import Tok


@dataclass(frozen=True)
class Atom:
    """One generated atom."""

    text: str  # the atomic sentence, capitalised, ending in a period
    kind: str  # entity | type | attribute | action | argument | purpose | clause | whole
    source: str = RULES_VERSION  # generator that produced it


@dataclass
class Ctx:
    """Referring expressions used so far in one sentence, and its main subject (for pronouns)."""

    used: set  # referring expressions already given to an entity ("the person", "the other dog")
    main: NP | None  # the main clause's subject, once its atoms are out


class AtomList:
    """Atoms of one sentence, deduplicated case-insensitively, in order; `add` finishes each sentence."""

    def __init__(self, source: str):
        self.atoms: list[Atom] = []
        self._seen: set[str] = set()
        self.source = source

    def add(self, text: str, kind: str) -> None:
        text = finish(text)
        key = text.lower()
        if text and key not in self._seen:
            self._seen.add(key)
            self.atoms.append(Atom(text, kind, self.source))


def finish(text: str) -> str:
    """Spaces normalised, 'n't' spelt out, capitalised, ending in a period.

    >>> finish("the dog does n't bark ,")
    'The dog does not bark.'
    """
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,.;:!?])", r"\1", text).rstrip(" ,;:")
    text = re.sub(r"\bn't\b", "not", text)
    text = re.sub(r"(\w) '(s|re|ll|ve|m|d)\b", r"\1'\2", text)  # "he 's" -> "he's" (PTB-tokenised input)
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _of_text(realiser, np_: NP) -> str:
    """' of <NP>' for the first "of" post-modifier of np_ ("the top of Everest"), else ''."""
    inner = next((m[2] for m in np_.mods if m[0] == "pp" and m[1] == "of"), None)
    return f" of {realiser._np_text(inner)}" if inner is not None else ""


def _add_be(vp: VP, be: str, participles: bool = False) -> None:
    """Give a VP without a finite verb its "is"/"are": "(the person) trying to escape" -> "is trying to escape";
    with `participles` also a bare past participle ("(the web) painted on the face" -> "is painted ...")."""
    if any(a.lower() in (BE | HAVE | DO | MODALS) - {"be", "been", "being", "having"} for a in vp.aux):
        return
    lead = next((w for w in [*vp.aux, vp.verb] if w.lower() not in ASPECT_ADVERBS), "")
    if lead.lower().endswith("ing") or (participles and vp.verb_tag == "VBN" and not vp.aux):
        vp.aux = [be] + vp.aux


def _number_word(k: int) -> str:
    return NUMBER_WORDS.get(k, str(k))


# How a predicate becomes atoms (`Realiser._predicate`): the first form that fits the verb phrase writes them.
PREDICATES = RuleTable("predicate form")


class Realiser:
    """Atoms of a chunked clause; `chunker` re-chunks subordinate clauses, `lexicon` answers WordNet questions."""

    def __init__(self, lexicon, chunker, style: str = "incremental"):
        self.lex, self.chunker, self.style = lexicon, chunker, style

    @property
    def morph(self):
        return self.lex.morph

    def category(self, noun: str) -> str:
        return self.lex.category(noun)

    def realise(self, subj: NP, vp: VP | None, out: AtomList) -> None:
        """Add the atoms of a clause (subject entity first, then its predicate) to `out`."""
        ctx = Ctx(used=set(), main=None)
        self._entity(subj, ctx, out, is_subject=True)
        ctx.main = subj
        if vp is not None:
            self._predicate(subj, vp, ctx, out)

    # entity atoms -----------------------------------------------------------------------------------------
    def _ref(self, np_: NP, ctx: Ctx) -> str:
        """Referring expression for an entity ('the person', 'the people', 'the vest', 'the group')."""
        if np_.ref:
            return np_.ref
        if np_.pron:
            low = np_.pron.lower()
            if low in {"he", "she", "him", "her", "they", "them"} and ctx.main is not None and ctx.main.ref:
                np_.ref = ctx.main.ref
            else:
                np_.ref = np_.pron
            return np_.ref
        if np_.conj:
            cats = [self.category(c.head_text) for c in np_.conj]
            if all(c in {"person", "group"} for c in cats):
                ref = "the people"
            else:
                heads = [self.morph.noun(c.head[-1]) if c.head else c.pron for c in np_.conj]
                ref = "the " + pluralize(heads[0]) if len(set(heads)) == 1 else " and ".join(
                    ("" if c.proper else "the ") + c.head_text for c in np_.conj)
        else:
            target = np_.of_np or np_
            cat = self.category(target.head_text)
            if np_.of_np is None and cat == "group":
                ref = "the group"
            elif cat in {"person"}:  # "a group of climbers": the people (but "a family of cats": the cats)
                ref = "the people" if (target.plural or np_.of_np is not None) else "the person"
            elif target.proper:  # a name refers by itself: "Lilly", not "the Lilly"
                ref = target.head_text
            else:
                ref = "the " + target.head_text
        if ref in ctx.used and not np_.conj:
            ref = "the " + (np_.of_np or np_).head_text
            if ref in ctx.used:
                ref = "the other " + (np_.of_np or np_).head_text
        ctx.used.add(ref)
        np_.ref = ref
        return ref

    def _plural_ref(self, ref: str, np_: NP) -> bool:
        if ref in {"the people"} or " and " in ref:
            return True
        if ref in {"the person", "the group"}:
            return False
        return (np_.of_np or np_).plural

    def _entity(self, np_: NP, ctx: Ctx, out: AtomList, is_subject: bool) -> None:
        """Existence, type and attribute atoms of an entity, then its post-modifiers."""
        if np_.pron:
            self._ref(np_, ctx)
            return
        ref = self._ref(np_, ctx)
        be = "are" if self._plural_ref(ref, np_) else "is"
        if np_.conj:
            self._coordinated_entity(np_, ref, ctx, out)
            return
        if np_.possessor is not None:  # "the men 's bikes": the owner's atoms, then "The people have bikes."
            owner = np_.possessor
            self._entity(owner, ctx, out, is_subject=False)
            have = "have" if self._plural_ref(owner.ref, owner) else "has"
            out.add(f"{_cap(owner.ref)} {have} {self._np_text(np_, indefinite=True)}.", "argument")
        target = np_.of_np or np_
        cat = self.category(target.head_text)
        group_of = np_.of_np is not None and self.category(np_.head_text) == "group" and cat == "person"
        if ref in {"the person", "the people"} or group_of:
            self._people_entity(np_, target, ref, be, cat, group_of, out)
        elif ref == "the group":
            self._group_entity(np_, out)
        else:
            self._thing_entity(target, ref, be, cat, out)
        self._np_modifiers(np_, ref, ctx, out)
        if np_.of_np is not None and np_.of_np is not target:
            self._np_modifiers(np_.of_np, ref, ctx, out)
        elif np_.of_np is not None:
            self._np_modifiers(np_.of_np, ref, ctx, out)

    def _coordinated_entity(self, np_: NP, ref: str, ctx: Ctx, out: AtomList) -> None:
        """Coordinated noun phrases: people ("a man and a woman"), two of one kind each with its attributes ("a big
        brown dog and a tiny black dog"), or each conjunct on its own; then each one's post-modifiers."""
        if ref == "the people":
            singles = all(not c.plural for c in np_.conj)  # "a man and a woman" -> two; "four men and a boy" -> ?
            out.add(f"There are {_number_word(len(np_.conj)) + ' ' if singles else ''}people.", "entity")
            members = [self._np_text(c, indefinite=True) for c in np_.conj]
            if any(c.head_text.lower() not in GENERIC_PERSON for c in np_.conj):
                out.add(f"The people are {_join(members)}.", "type")
            for c in np_.conj:
                for adj in c.adjs:
                    out.add(f"The {c.head_text} is {adj}.", "attribute")
        elif len({self.morph.noun(c.head[-1]) if c.head else "" for c in np_.conj}) == 1 and all(
                c.head and not c.plural and not c.proper for c in np_.conj):
            # "a big brown dog and a tiny black dog": two dogs, each with its own attributes
            noun = self.morph.noun(np_.conj[0].head[-1])
            out.add(f"There are {_number_word(len(np_.conj))} {pluralize(noun)}.", "entity")
            for k, c in enumerate(np_.conj):
                for adj in c.adjs:
                    out.add(f"{'One' if k == 0 else 'Another'} {noun} is {adj}.", "attribute")
        else:
            for c in np_.conj:
                if not c.proper:
                    out.add(f"There {'are' if c.plural else 'is'} {self._np_text(c, indefinite=True)}.", "entity")
                for adj in c.adjs:
                    out.add(f"The {c.head_text} {'are' if c.plural else 'is'} {adj}.", "attribute")
        for c in np_.conj:
            self._np_modifiers(c, ref if len(np_.conj) == 1 else "the " + c.head_text, ctx, out)

    def _people_entity(self, np_: NP, target: NP, ref: str, be: str, cat: str, group_of: bool,
                       out: AtomList) -> None:
        """A person, people or a group of people: existence, type (unless generic) and attribute atoms."""
        if group_of:
            out.add(f"There is {article(np_.head_text)} {np_.head_text} of people.", "entity")
        elif ref == "the people":
            num = target.num or (np_.num if np_.num else "")
            out.add(f"There are {num + ' ' if num else ''}people.", "entity")
        else:
            out.add("There is a person.", "entity")
        head = target.head_text
        if head.lower() not in GENERIC_PERSON and cat == "person":
            noun = head if (ref == "the person" or target.plural) else pluralize(head)
            noun += _of_text(self, target)  # "The people are members of the band."
            out.add(f"The {'people are' if ref == 'the people' else 'person is'} "
                    f"{(article(noun) + ' ') if ref == 'the person' else ''}{noun}.", "type")
        for adj in target.adjs + (np_.adjs if np_.of_np is not None else []):
            out.add(f"{_cap(ref)} {be} {adj}.", "attribute")

    def _group_entity(self, np_: NP, out: AtomList) -> None:
        """A group noun standing for people ("a crowd"): a group of people, its type and attributes."""
        out.add("There is a group of people.", "entity")
        if np_.head_text.lower() != "group":
            out.add(f"The group is {article(np_.head_text)} {np_.head_text}.", "type")
        for adj in np_.adjs:
            out.add(f"The group is {adj}.", "attribute")

    def _thing_entity(self, target: NP, ref: str, be: str, cat: str, out: AtomList) -> None:
        """Any other entity: existence (not for a name), "an animal" for an animal, and attribute atoms."""
        if not target.proper:
            out.add(f"There {'are' if target.plural else 'is'} {self._np_text(target, indefinite=True)}.", "entity")
        if cat == "animal" and self.morph.noun(target.head[-1]) != "animal":
            out.add(f"There {'are animals' if target.plural else 'is an animal'}.", "type")
        for adj in target.adjs:
            out.add(f"{_cap(ref)} {be} {adj}.", "attribute")

    def _np_modifiers(self, np_: NP, ref: str, ctx, out) -> None:
        be = "are" if self._plural_ref(ref, np_) else "is"
        for mod in np_.mods:
            if mod[0] == "pp" and mod[1] == "of":  # inside the NP's text; only the inner noun's own atoms
                inner = mod[2]
                for m in inner.conj or [inner]:
                    if m.pron or not m.head:
                        continue
                    mref = ("" if m.proper else "the ") + m.head_text
                    for adj in m.adjs:
                        out.add(f"{_cap(mref)} {'are' if m.plural else 'is'} {adj}.", "attribute")
                    self._np_modifiers(m, mref, ctx, out)
            elif mod[0] == "pp":
                prep, inner = mod[1], mod[2]
                if prep == "in" and self.category(inner.head_text) == "clothing":
                    self._object_atoms(ref, f"{be} wearing", inner, ctx, out, kind="attribute")
                elif prep == "with" and self.category(inner.head_text) == "clothing":
                    self._object_atoms(ref, f"{be} wearing", inner, ctx, out, kind="attribute")
                elif prep == "with" and self.category(inner.head_text) not in {"person", "group", "animal"}:
                    # "a man with a beard": possession ("has a beard"), not company ("is with a beard")
                    have = "have" if be == "are" else "has"
                    self._object_atoms(ref, have, inner, ctx, out, kind="attribute", plain=True)
                else:
                    self._object_atoms(ref, f"{be} {prep}", inner, ctx, out, kind="argument", plain=True)
            elif mod[0] == "adj":
                out.add(f"{_cap(ref)} {be} {mod[1]}.", "attribute")
            elif mod[0] == "vp":
                vp: VP = mod[1]
                _add_be(vp, be, participles=True)
                holder = NP(ref=ref)
                holder.plural_tag = be == "are"
                self._predicate(holder, vp, ctx, out)

    def _np_text(self, np_: NP, indefinite: bool = False) -> str:
        """Surface text of an NP without post-modifiers; adjectives dropped (they get their own atoms)."""
        if np_.conj:
            return _join([self._np_text(c, indefinite) for c in np_.conj])
        if np_.pron:
            return np_.pron
        head = np_.head_text
        plural = np_.plural and not np_.conj
        det = np_.det
        if det.startswith("poss:") and det[5:] in POSSESSIVES and not indefinite:
            det = det[5:]  # "his mom" stays "his mom" (the possessor is in the atom), never "the mom"
        elif det.startswith("poss:"):
            det = "" if (plural or np_.num) else ("the" if not indefinite else article(head))
        elif det in {"the", "this", "that", "these", "those"}:
            det = ("" if (plural or np_.num or head.split()[-1].lower() in MASS_NOUNS) else article(head)) \
                if indefinite else "the"  # "the grass" -> "There is grass.", "the dog" -> "There is a dog."
        elif det in {"a", "an"}:
            det = article(head)
        # a bare singular noun stays bare: mass nouns ("grass", "soccer", "by hand") and names
        if np_.of_np is not None:
            head = f"{head} of {self._np_text(np_.of_np)}"
        head += _of_text(self, np_)
        words = [w for w in (det, np_.num, head) if w]
        return " ".join(words)

    def _object_atoms(self, subj_ref: str, verb_group: str, np_: NP, ctx, out, kind="argument", plain=False) -> None:
        """'<subj> <verb group> <object>' per conjunct, then the object's attributes and modifiers."""
        members = np_.conj or [np_]
        for m in members:
            text = self._np_text(m)
            if self.style == "cleft" and not plain and not m.pron and (m.det or m.num or m.plural):
                out.add(f"{_cap(subj_ref)} {verb_group} something.", kind)
                out.add(f"The thing {subj_ref} {verb_group} is {self._np_text(m, indefinite=True)}.", kind)
            else:
                out.add(f"{_cap(subj_ref)} {verb_group} {text}.", kind)
            if m.pron:
                continue
            if m.possessor is not None and not m.possessor.pron:
                owner = m.possessor
                oref = owner.head_text if owner.proper else "the " + owner.head_text
                have = "have" if owner.plural else "has"
                out.add(f"{_cap(oref)} {have} {self._np_text(m, indefinite=True)}.", "argument")
            if m.head and m.head[-1].lower() in TIME_WORDS:
                continue
            mref = ("" if (m.of_np or m).proper else "the ") + (m.of_np or m).head_text + (
                _of_text(self, m) if m.of_np is None else "")  # "the part of the course", not "the part"
            if self.category(m.head_text) == "person" and "the person" not in ctx.used and subj_ref != "the person":
                pass
            be = "are" if m.plural else "is"
            for adj in m.adjs:
                out.add(f"{_cap(mref)} {be} {adj}.", "attribute")
            if m.of_np is not None:
                for adj in m.of_np.adjs:
                    out.add(f"The {m.of_np.head_text} {'are' if m.of_np.plural else 'is'} {adj}.", "attribute")
            self._np_modifiers(m, mref, ctx, out)

    # predicate atoms --------------------------------------------------------------------------------------
    def _predicate(self, subj: NP, vp: VP, ctx, out) -> None:
        """Atoms of `vp` said of `subj`: its auxiliaries and verb agree with the subject's referring expression,
        the first form of `PREDICATES` that fits writes the atoms, then come each coordinated verb phrase and
        subordinate clause:

        >>> print(PREDICATES.table())
        negated  a negated predicate is one atom (its parts are not entailed on their own)
        copula   is + predicate nouns (type), adjectives, prepositional phrases (clothing: wearing), adverbs
        verbal   the action, its objects, arguments that carry the object, adverbs and purposes
        """
        ref = subj.ref or self._ref(subj, ctx)
        plural = self._plural_ref(ref, subj)
        self._agree(vp, ref, plural)
        PREDICATES.first(self, vp, ref, plural, ctx, out)
        for extra in vp.extra:
            _add_be(extra, "are" if plural else "is")
            self._predicate(subj, extra, ctx, out)
        for toks in vp.clauses:
            self._subclause(toks, ctx, out)

    def _agree(self, vp: VP, ref: str, plural: bool) -> None:
        """The auxiliaries and the verb of `vp` take the number of `ref` (in place)."""
        vp_aux = [("are" if plural else "is") if (a in {"is", "are"})
                  else ("were" if plural else "was") if a in {"was", "were"}
                  else ("have" if plural else "has") if a in {"has", "have"} and vp.aux and a == vp.aux[0] else a
                  for a in vp.aux]
        vp.aux = vp_aux
        if vp.copula and vp.verb.lower() in BE:
            vp.verb = ("are" if plural else "is") if vp.verb.lower() in {"is", "are", "'s", "'re", "am"} else (
                "were" if plural else "was") if vp.verb.lower() in {"was", "were"} else vp.verb
        elif not vp.aux and vp.verb_tag in {"VBZ", "VBP"} and ref.lower() not in {"i", "you", "we", "they"}:
            # the verb agrees with the referring expression: "a group of climbers celebrates" -> "the people
            # celebrate", "a grounds crew maintain" -> "the grounds crew maintains"
            lemma = self.morph.verb(vp.verb)
            if plural and vp.verb_tag == "VBZ" and self.lex.is_pos(lemma, "v"):
                vp.verb, vp.verb_tag = lemma, "VBP"
            elif not plural and vp.verb_tag == "VBP" and self.lex.is_pos(lemma, "v"):
                vp.verb, vp.verb_tag = third_person(lemma), "VBZ"

    @PREDICATES.rule("negated", "a negated predicate is one atom (its parts are not entailed on their own)")
    def _negated_predicate(self, vp: VP, ref: str, plural: bool, ctx, out):
        if not vp.negated:
            return None
        words = []
        for t in vp.raw:
            if t.low in SUBORDINATORS or t.tag == "WRB" or t.word in {",", ";"} or (t.low == "and" and words):
                break
            words.append(self._resolve_word(t, ctx))
        out.add(f"{_cap(ref)} {' '.join(words)}.", "action")
        return True

    @PREDICATES.rule("copula",
                     "is + predicate nouns (type), adjectives, prepositional phrases (clothing: wearing), adverbs")
    def _copula_predicate(self, vp: VP, ref: str, plural: bool, ctx, out):
        if not vp.copula:
            return None
        group, S = vp.group(), _cap(ref)
        for np_ in vp.pred_nps:
            for m in np_.conj or [np_]:
                out.add(f"{S} {group} {self._np_text(m, indefinite=True)}.", "type")
                for adj in m.adjs:
                    out.add(f"{S} {group} {adj}.", "attribute")
                self._np_modifiers(m, ref, ctx, out)
        for adj in vp.adjs:
            out.add(f"{S} {group} {adj}.", "attribute")
        carrier = f"{group} {vp.adjs[-1]}" if vp.adjs and not vp.pred_nps else group  # "is open at night"
        for prep, np_ in vp.pps:
            if isinstance(np_, VP):
                continue
            if prep == "in" and self.category(np_.head_text) == "clothing":
                self._object_atoms(ref, f"{group} wearing", np_, ctx, out, kind="attribute")
            else:
                self._object_atoms(ref, f"{carrier} {prep}", np_, ctx, out, kind="argument", plain=True)
        for adv in vp.advs:
            out.add(f"{S} {group} {adv}.", "argument")
        return True

    @PREDICATES.rule("verbal", "the action, its objects, arguments that carry the object, adverbs and purposes")
    def _verbal_predicate(self, vp: VP, ref: str, plural: bool, ctx, out):
        group = vp.group()
        objects = self._action_and_objects(vp, ref, group, ctx, out)
        # arguments carry the object: "kisses his girlfriend on the beach", not "kisses on the beach"
        self._arguments(vp, ref, f"{group} {objects}" if vp.objects else group, ctx, out)
        for purpose in vp.purposes:
            self._purpose(ref, plural, vp, purpose, ctx, out)
        return True

    def _action_and_objects(self, vp: VP, ref: str, group: str, ctx, out) -> str:
        """The action atom and the object atoms of a verbal predicate; the objects' text."""
        S = _cap(ref)
        lemma = self.morph.verb(vp.verb)
        light = lemma in LIGHT_VERBS and vp.objects
        if light:
            if self.style == "cleft" or len(vp.objects) > 0:
                out.add(f"{S} {group} something.", "action")
        elif not (lemma == "be" and (vp.objects or vp.adjs or vp.pps)) and not (vp.particle and vp.objects):
            # no bare "be" ("wants to be a player"); no particle without its object: "picks up the ball",
            # "goes down the street" give no "The person picks up." or "The tram goes down."
            out.add(f"{S} {group}.", "action")
        objects = " ".join(self._np_text(o) for o in vp.objects)
        way = len(vp.objects) == 1 and vp.objects[0].head and vp.objects[0].head[-1].lower() == "way" and \
            vp.objects[0].det.startswith("poss:")  # "work his way through": an idiom, no "works" / "way" atoms
        if way:
            if not (vp.pps or vp.advs):
                out.add(f"{S} {group} {objects}.", "argument")
            out.atoms = [a for a in out.atoms if a.text not in {f"{S} {group}.", f"{S} {group} something."}]
            out._seen -= {f"{S} {group}.".lower(), f"{S} {group} something.".lower()}
        elif len(vp.objects) > 1:  # "is giving his brother a ride": both objects in one atom
            out.add(f"{S} {group} {objects}.", "argument")
        for obj in [] if way else vp.objects[-1:] if len(vp.objects) > 1 else vp.objects:
            self._object_atoms(ref, group, obj, ctx, out)
        return objects

    def _arguments(self, vp: VP, ref: str, carrier: str, ctx, out) -> None:
        """The atoms of a verbal predicate's prepositional phrases and adverbs, each said with `carrier`."""
        S = _cap(ref)
        for prep, np_ in vp.pps:
            if isinstance(np_, VP):  # "by running"
                out.add(f"{S} {carrier} {prep} {self._vp_text(np_, ctx)}.", "argument")
                continue
            if np_.head and np_.head[-1].lower() in TIME_WORDS:
                out.add(f"{S} {carrier} {prep} {self._np_text(np_)}.", "argument")
                continue
            if self.style == "cleft":
                self._object_atoms(ref, f"{carrier} {prep}", np_, ctx, out)
            else:
                self._object_atoms(ref, f"{carrier} {prep}", np_, ctx, out, plain=True)
        for adv in vp.advs:
            out.add(f"{S} {carrier} {adv}.", "argument")

    def _purpose(self, ref, plural, vp: VP, purpose: VP, ctx, out) -> None:
        """The paper's purpose pattern (Table 1 row 3)."""
        verb_ing = vp.verb if vp.verb_tag == "VBG" else gerund(self.morph.verb(vp.verb))
        obj = f" {self._np_text(vp.objects[0])}" if vp.objects and not vp.objects[0].pron else ""
        event = f"{ref} {verb_ing}{obj}"
        out.add(f"There is a purpose for {event}.", "purpose")
        pverb = purpose.verb + (f" {purpose.particle}" if purpose.particle else "")
        if purpose.objects:
            out.add(f"The purpose of {event} is to {pverb} something.", "purpose")
            be = "are" if plural else "is"
            for o in purpose.objects:
                for m in o.conj or [o]:
                    thing = self._np_text(m, indefinite=True)
                    out.add(f"The thing {ref} {be} trying to {pverb} is {thing}.", "purpose")
        else:
            out.add(f"The purpose of {event} is to {self._vp_text(purpose, ctx)}.", "purpose")

    def _vp_text(self, vp: VP, ctx) -> str:
        return " ".join(self._resolve_word(t, ctx) for t in vp.raw)

    def _resolve_word(self, tok: Tok, ctx) -> str:
        return tok.word

    def _subclause(self, toks: list[Tok], ctx, out) -> None:
        if not toks:
            return
        saved = self.chunker.subject_region
        try:
            subj, vp, kind = self.chunker.clause(list(toks))
        finally:
            self.chunker.subject_region = saved
        if subj is None or kind in {"fail", "negative"}:
            return
        if subj.pron and subj.pron.lower() in {"he", "she", "they", "him", "her", "them"} and ctx.main is not None:
            subj.ref = ctx.main.ref
        else:
            self._entity(subj, ctx, out, is_subject=False)
        if vp is not None:
            self._predicate(subj, vp, ctx, out)

