"""Rule-based Neo-Davidsonian decomposition of a sentence into atoms (the offline stand-in for Prompt A.1).

The paper prompts llama-3-8b-instruct with hand-built Neo-Davidsonian exemplars (§3.1). Offline, this module
does the same job with rules over NLTK's perceptron POS tags (from the data mirror) and Open English WordNet:

* entities: existence atoms with the WordNet hypernym for people ("There is a person." / "The person is a
  man."; "There are two people." / "The people are men."), counts, group nouns ("a group of males");
* attributes: one atom per adjective ("The vest is orange."), clothing ("in a vest" -> "is wearing a vest");
* actions: the verb with its subject ("The person stands."), negation kept whole;
* arguments: one atom per object, prepositional phrase and adverb, carrying the object ("The person stands on
  a dock.", "The person kisses his girlfriend on the beach."); "of" phrases stay in their noun phrase ("The
  people are members of the band."); possessive determiners stay ("his mom", never "the mom");
* purposes ("There is a purpose for ..."), subordinate clauses (because / where / while / when, also fronted:
  "While X, Y" reads as "Y while X"; non-factive if / unless / so clauses give no atoms), relative clauses on
  subjects and objects, passives ("The goods are being sold by the vendors.", get-passives), fronted
  prepositional phrases, coordinated verbs and clauses ("... and one is jumping"), verbless captions ("A dog
  sleeping on the porch." -> "The dog is sleeping on the porch."), possessives ("The men 's bikes" -> "The
  people have bikes."; "a man with a beard" -> "The person has a beard."), names ("Galina", never "the Galina").

Every generated atom is checked by `grammar.wellformed` (status ok / malformed / unparsed and a reason), and the
rules' precision is measured against the team's gold set (`nli_lib.atoms.gold`).

>>> decompose("A man in an orange vest stands on a dock.")          # doctest: +SKIP
['There is a person.', 'The person is a man.', 'The person is wearing a vest.', 'The vest is orange.',
 'The person stands.', 'The person stands on a dock.']

Two output styles: "incremental" (default; "The person is riding on the sidewalk.") and "cleft", the
paper's pseudo-cleft form for arguments ("The person is riding on something." / "The thing the person is
riding on is the sidewalk."). The paper notes clefts are out of domain for SNLI-trained encoders, so the
incremental style is the default for the offline NLI model.

Trade-offs, stated plainly: a POS-tag grammar, not a parser. Prepositional phrases after an object attach
to the verb except "of"/"for" (which attach to the noun); a past participle right after a noun modifies that
noun, a present participle the subject; tagging errors on headline-style captions can
produce odd atoms, which the §3.2 validation (H must entail the atom) prunes. A sentence the rules cannot
analyse (negated subjects such as "Nobody ...", expletive "it") is returned whole as its single atom.
Library helpers for other papers: `decompose`, `decompose_records`, `RuleDecomposer.explain`. The parts live in
`nli_lib.atoms.grammar` (lexicon, morphology, tagging, chunking, realisation); this module ties them.
"""
from __future__ import annotations

import functools

from .grammar import RULES_VERSION
from .grammar.chunking import Chunker
from .grammar.lexicon import Lexicon
from .grammar.morphology import Morph, article, gerund, pluralize, singular_candidates  # noqa: F401 (public API)
from .grammar.realise import Atom, AtomList, Realiser
from .grammar.tagging import Tagger, Tok


class RuleDecomposer:
    """Neo-Davidsonian atoms from POS-tag rules; see the module docstring.

    `tagger` (NLTK PerceptronTagger) and `wordnet` (nli_lib WordNet) default to the data-mirror loaders;
    `wordnet=None` uses the closed word lists only (tests that must not touch the mirror).
    """

    name = RULES_VERSION

    def __init__(self, style: str = "incremental", tagger=None, wordnet="load"):
        if style not in ("incremental", "cleft"):
            raise ValueError("style must be 'incremental' or 'cleft'")
        self.style = style
        if tagger is None:
            from ..data.loaders import load_pos_tagger

            tagger = load_pos_tagger()
        if isinstance(wordnet, str) and wordnet == "load":
            from ..data.loaders import load_wordnet

            wordnet = load_wordnet()
        self.tagger, self.wn = tagger, wordnet
        self.morph = Morph(wordnet)
        self.lexicon = Lexicon(wordnet, self.morph)
        self.chunker = Chunker(self.lexicon)
        self.realiser = Realiser(self.lexicon, self.chunker, style)
        self._tagger = Tagger(tagger, self.lexicon)

    @property
    def cache_name(self) -> str:
        return f"{RULES_VERSION}-{self.style}"

    def category(self, noun: str) -> str:
        """'person' | 'animal' | 'clothing' | 'group' | 'thing' for a (compound) noun."""
        return self.lexicon.category(noun)

    def tag(self, sentence: str) -> list[Tok]:
        """Tokens of `sentence` with repaired perceptron tags."""
        return self._tagger.tag(sentence)

    def decompose(self, sentence: str) -> list[str]:
        """Atoms of `sentence` as strings (deduplicated, in order)."""
        return [a.text for a in self.decompose_records(sentence)]

    def decompose_records(self, sentence: str) -> list[Atom]:
        """Atoms of `sentence` with their kind (entity, type, attribute, action, argument, purpose, clause)."""
        toks = self.tag(sentence)
        out = AtomList(self.cache_name)
        if not toks:
            return []
        try:
            subj, vp, kind = self.chunker.clause(toks)
        except RecursionError:  # pragma: no cover - pathological input
            subj, vp, kind = None, None, "fail"
        expletive = subj is not None and subj.pron and subj.pron.lower() in {"it", "this", "that"}
        if kind in {"fail", "negative", "empty"} or subj is None or expletive:
            out.add(sentence, "whole")
            return out.atoms
        self.realiser.realise(subj, vp, out)
        if not out.atoms:
            out.add(sentence, "whole")
        return out.atoms

    __call__ = decompose

    def explain(self, sentence: str) -> dict:
        """Tags, the clause analysis and the atoms (for debugging a decomposition in a notebook)."""
        toks = self.tag(sentence)
        subj, vp, kind = self.chunker.clause(list(toks)) if toks else (None, None, "empty")
        return {"tags": [(t.word, t.tag) for t in toks], "kind": kind, "subject": subj, "predicate": vp,
                "atoms": self.decompose_records(sentence)}


# --------------------------------------------------------------------------------------------------------------
# Module-level helpers
# --------------------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=2)
def default_decomposer(style: str = "incremental") -> RuleDecomposer:
    """The process-wide rule decomposer (tagger and WordNet from the data mirror)."""
    return RuleDecomposer(style=style)


def decompose(sentence: str, style: str = "incremental") -> list[str]:
    """Atoms of one sentence with the rule-based decomposer (see the module docstring)."""
    return default_decomposer(style).decompose(sentence)


def decompose_records(sentence: str, style: str = "incremental") -> list[Atom]:
    """Like `decompose`, with each atom's kind."""
    return default_decomposer(style).decompose_records(sentence)
