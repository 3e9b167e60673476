"""Rule-based Neo-Davidsonian decomposition of a sentence into atoms (the offline stand-in for Prompt A.1).

The paper prompts llama-3-8b-instruct with hand-built Neo-Davidsonian exemplars (§3.1). Offline, this module
does the same job with rules over NLTK's perceptron POS tags (from the data mirror) and Open English WordNet:

* entities: existence atoms with the WordNet hypernym for people ("There is a person." / "The person is a
  man."; "There are two people." / "The people are men."), counts, group nouns ("a group of males");
* attributes: one atom per adjective ("The vest is orange."), clothing ("in a vest" -> "is wearing a vest");
* actions: the verb with its subject ("The person stands."), negation kept whole;
* arguments: one atom per object, prepositional phrase and adverb ("The person stands on a dock.");
* purposes ("There is a purpose for ..."), subordinate and relative clauses, coordinated verbs and clauses
  ("... and one is jumping"), verbless captions ("A dog sleeping on the porch." -> "The dog is sleeping on the
  porch."), possessives ("The men 's bikes" -> "The people have bikes."), names ("Galina", never "the Galina").

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
Library helpers for other papers: `decompose`, `decompose_records`, `RuleDecomposer.explain`.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

RULES_VERSION = "atoms-rules-v3"  # change when the rules change: it names the OfflineLLM cache namespace

# --------------------------------------------------------------------------------------------------------------
# Word lists (small, closed classes; WordNet decides open-class questions such as "is this noun a person?")
# --------------------------------------------------------------------------------------------------------------

BE = {"is", "are", "was", "were", "be", "been", "being", "am", "'s", "'re"}
HAVE = {"has", "have", "had", "having"}
DO = {"does", "do", "did"}
NEG = {"not", "n't", "never", "no"}
GROUP_NOUNS = {"group", "crowd", "team", "teams", "couple", "family", "choir", "band", "bunch", "pair", "gang", "audience",
               "class", "troop", "squad", "party", "orchestra", "groups", "crowds", "families", "couples"}
PERSON_WORDS = {"person", "people", "persons", "someone", "somebody", "guy", "guys", "male", "males", "female",
                "females", "kid", "kids", "individual", "adult", "adults", "youth", "friend", "friends", "man", "men",
                "woman", "women", "boy", "boys", "girl", "girls", "child", "children", "lady", "ladies", "baby",
                "toddler", "teenager", "teen", "worker", "workers", "player", "players"}
GENERIC_PERSON = {"person", "people", "persons", "someone", "somebody", "individual"}
NOT_PERSON = {"hand", "hands", "model", "head", "back", "star", "fan", "light", "board"}
NEGATIVE_SUBJECTS = {"nobody", "noone", "none", "nothing", "no"}
QUANTIFIED = {"everyone", "everybody", "everything", "all", "each", "every", "neither", "nor"}
SUBORDINATORS = {"while", "as", "when", "before", "after", "because", "since", "until", "whilst", "though",
                 "although", "if", "once"}
RELATIVES = {"who", "that", "which", "whose", "whom"}
CATENATIVE = {"try", "attempt", "prepare", "start", "begin", "continue", "want", "need", "plan", "decide", "hope",
              "learn", "like", "love", "struggle", "refuse", "seem", "appear", "fail", "pretend", "intend", "ready"}
POSTURE = {"sit", "stand", "lie", "kneel", "walk", "run", "lean", "crouch", "squat", "stay", "wait", "ride", "lay",
           "float", "swim", "hang", "rest", "pose", "jog", "dance", "laugh", "smile", "work", "play", "relax"}
CATENATIVE_ADJ = {"ready", "about", "going", "able", "set", "trying", "preparing", "eager"}
LIGHT_VERBS = {"have", "take", "make", "hold", "wear", "carry", "get", "give", "put", "do", "use", "bring", "buy",
               "grab", "contain", "own", "receive", "sell", "show", "keep", "pull", "push", "throw", "catch", "hit", "say"}
ING_NOUNS = {"building", "buildings", "meeting", "meetings", "painting", "paintings", "drawing", "drawings", "clothing",
             "ceiling", "wedding", "weddings", "evening", "morning", "railing", "sibling", "siblings", "pudding",
             "frosting", "icing", "awning", "bedding", "carving", "dwelling", "filling", "landing", "lightning",
             "outing", "recording", "seating", "setting", "siding", "stocking", "stockings", "topping", "writing",
             "shooting", "crossing", "opening", "gathering", "parking", "housing", "lighting", "stuffing",
             "boxing", "sailing", "bowling", "fishing", "skiing", "hiking", "camping"}  # "-ing" heads of compounds
SPATIAL_PARTICLES = {"down", "up", "across", "through", "over", "along", "around", "into", "off", "past", "under",
                     "toward", "towards"}  # tagged RP/RB before an NP after an object: a preposition
NOUN_ATTACHING_PREPS = {"of", "for"}  # after an object, these modify the noun; other preps modify the verb
TIME_WORDS = {"today", "tonight", "yesterday", "tomorrow", "now", "night", "morning", "evening", "afternoon", "day",
              "summer", "winter", "spring", "fall", "autumn", "weekend", "noon", "midnight", "dawn", "dusk"}
IRREGULAR_NOUNS = {"men": "man", "women": "woman", "children": "child", "people": "person", "feet": "foot",
                   "teeth": "tooth", "geese": "goose", "mice": "mouse", "policemen": "policeman",
                   "firemen": "fireman", "fishermen": "fisherman", "businessmen": "businessman", "oxen": "ox"}
IRREGULAR_VERBS = {"is": "be", "are": "be", "was": "be", "were": "be", "am": "be", "been": "be", "has": "have",
                   "had": "have", "does": "do", "did": "do", "ran": "run", "sat": "sit", "stood": "stand",
                   "went": "go", "gone": "go", "made": "make", "took": "take", "taken": "take", "got": "get",
                   "gave": "give", "given": "give", "ate": "eat", "eaten": "eat", "saw": "see", "seen": "see",
                   "held": "hold", "wore": "wear", "worn": "wear", "rode": "ride", "ridden": "ride", "swam": "swim",
                   "threw": "throw", "thrown": "throw", "caught": "catch", "brought": "bring", "bought": "buy",
                   "sold": "sell", "told": "tell", "said": "say", "says": "say", "lay": "lie", "lying": "lie",
                   "fell": "fall", "fallen": "fall", "won": "win", "lost": "lose", "left": "leave", "met": "meet",
                   "sang": "sing", "sung": "sing", "drank": "drink", "drove": "drive", "flew": "fly", "hung": "hang",
                   "dug": "dig", "slept": "sleep", "kept": "keep", "led": "lead", "read": "read", "put": "put",
                   "cut": "cut", "hit": "hit", "set": "set", "shot": "shoot", "spun": "spin", "built": "build",
                   "dying": "die", "tying": "tie"}
COLORS = {"red", "orange", "yellow", "green", "blue", "purple", "pink", "black", "white", "brown", "gray", "grey",
          "silver", "gold", "golden", "tan", "beige", "maroon", "navy", "teal", "turquoise", "violet", "blond", "blonde"}
PLURAL_OF = {"person": "people", "man": "men", "woman": "women", "child": "children", "foot": "feet", "mouse": "mice"}


# --------------------------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Atom:
    """One generated atom."""

    text: str  # the atomic sentence, capitalised, ending in a period
    kind: str  # entity | type | attribute | action | argument | purpose | clause | whole
    source: str = RULES_VERSION  # generator that produced it


@dataclass
class _Tok:
    word: str
    tag: str

    @property
    def low(self) -> str:
        return self.word.lower()


@dataclass
class _NP:
    """A noun phrase: determiner, number, adjectives, head (possibly a compound), post-modifiers."""

    det: str = ""
    num: str = ""
    adjs: list = field(default_factory=list)
    head: list = field(default_factory=list)  # noun words (compound), last is the head noun
    pron: str = ""  # when the NP is a pronoun
    conj: list = field(default_factory=list)  # coordinated NPs (self is the first)
    mods: list = field(default_factory=list)  # post-modifiers: ("pp", prep, NP) | ("adj", word) | ("vp", VP) | ("rel", clause-tokens)
    of_np: "_NP | None" = None  # "a group of males": the NP after a group noun
    possessor: "_NP | None" = None  # "the men 's bikes": the NP before the possessive 's
    proper: bool = False  # a bare proper name ("Lilly"): referred to by name, no existence atom
    ref: str = ""  # referring expression assigned during generation

    @property
    def head_text(self) -> str:
        if self.conj:
            return " and ".join(c.head_text for c in self.conj)
        return " ".join(self.head) if self.head else self.pron

    @property
    def plural(self) -> bool:
        if self.conj:
            return True
        if self.pron:
            return self.pron.lower() in {"they", "them", "we", "us", "these", "those"} | set(_NUMBER_WORDS.values())
        if self.num and self.num.lower() not in {"one", "1", "a"}:
            return True
        last = self.head[-1].lower() if self.head else ""
        if last in IRREGULAR_NOUNS or last in {"people", "police", "cattle"}:
            return True
        return self._plural_tag  # also for a head-less holder NP that only carries a referring expression

    _plural_tag: bool = False


@dataclass
class _VP:
    """A verb group with its complements; `subject` is filled in by the caller."""

    aux: list = field(default_factory=list)  # auxiliaries and catenative material before the main verb
    verb: str = ""  # main verb word as written
    verb_tag: str = ""
    particle: str = ""
    negated: bool = False
    copula: bool = False  # a bare "is/are" with a non-verbal complement
    objects: list = field(default_factory=list)  # NPs
    pred_nps: list = field(default_factory=list)  # predicate nominals of a copula
    adjs: list = field(default_factory=list)  # predicate adjectives (or adjectival phrases) of a copula
    pps: list = field(default_factory=list)  # (prep, NP)
    advs: list = field(default_factory=list)  # adverbs / adverbial words
    purposes: list = field(default_factory=list)  # _VP of "to <verb> ..."
    extra: list = field(default_factory=list)  # coordinated / participial VPs sharing the subject
    clauses: list = field(default_factory=list)  # subordinate clauses (token lists)
    raw: list = field(default_factory=list)  # all tokens of the predicate, for negated atoms
    last_np: "_NP | None" = None  # the object / PP noun phrase that ends at `last_np_end`
    last_np_end: int = -1  # token index right after last_np (a participle there modifies it)

    def group(self) -> str:
        words = [*self.aux, self.verb] + ([self.particle] if self.particle else [])
        return " ".join(w for w in words if w)


# --------------------------------------------------------------------------------------------------------------
# Morphology
# --------------------------------------------------------------------------------------------------------------

_VOWELS = set("aeiou")


def article(phrase: str) -> str:
    """'a' or 'an' for the phrase that follows (by its first letter; 'hour'/'honest' special-cased)."""
    first = phrase.split()[0].lower() if phrase.split() else ""
    if first.startswith(("hour", "honest", "honor", "heir")):
        return "an"
    if first.startswith(("uni", "use", "usu", "one", "eu", "ubiq")) or first in {"u", "uk", "us"}:
        return "a"
    return "an" if first[:1] in _VOWELS else "a"


def pluralize(noun: str) -> str:
    """Simple English plural of the last word of a (compound) noun."""
    words = noun.split()
    last = words[-1]
    low = last.lower()
    if low in PLURAL_OF:
        out = PLURAL_OF[low]
    elif low.endswith("man") and low not in {"human", "german"}:
        out = last[:-3] + "men"
    elif re.search(r"(s|x|z|ch|sh)$", low):
        out = last + "es"
    elif re.search(r"[^aeiou]y$", low):
        out = last[:-1] + "ies"
    else:
        out = last + "s"
    return " ".join(words[:-1] + [out])


def gerund(lemma: str) -> str:
    """'climb' -> 'climbing', 'dance' -> 'dancing', 'run' -> 'running', 'lie' -> 'lying'."""
    low = lemma.lower()
    if low.endswith("ie"):
        return lemma[:-2] + "ying"
    if low.endswith("e") and not low.endswith(("ee", "ye", "oe")) and low not in {"be"}:
        return lemma[:-1] + "ing"
    if (len(low) <= 4 and len(low) >= 3 and low[-1] not in _VOWELS | {"w", "x", "y"} and low[-2] in _VOWELS
            and low[-3] not in _VOWELS):
        return lemma + lemma[-1] + "ing"
    return lemma + "ing"


def singular_candidates(low: str) -> list[str]:
    """Possible singulars of a lower-cased plural noun, most specific first (check them against WordNet).

    >>> singular_candidates("ladies"), singular_candidates("boxes"), singular_candidates("glass")
    (['lady', 'ladi', 'ladie'], ['box', 'boxe'], [])
    """
    candidates = []
    if low.endswith("ies"):
        candidates.append(low[:-3] + "y")
    if low.endswith("es"):
        candidates.append(low[:-2])
    if low.endswith("s") and not low.endswith("ss"):
        candidates.append(low[:-1])
    return candidates


class _Morph:
    """Noun/verb lemmatisation checked against WordNet's lemma index."""

    def __init__(self, wordnet):
        self.wn = wordnet

    def _known(self, word: str, pos: str) -> bool:
        return bool(self.wn.synsets(word, pos)) if self.wn is not None else True

    @functools.lru_cache(maxsize=20000)
    def noun(self, word: str) -> str:
        low = word.lower()
        if low in IRREGULAR_NOUNS:
            return IRREGULAR_NOUNS[low]
        if low.endswith("men") and self._known(low[:-3] + "man", "n"):
            return low[:-3] + "man"
        for c in singular_candidates(low):
            if self._known(c, "n"):
                return c
        return low

    @functools.lru_cache(maxsize=20000)
    def verb(self, word: str) -> str:
        low = word.lower()
        if low in IRREGULAR_VERBS:
            return IRREGULAR_VERBS[low]
        candidates = []
        if low.endswith("ies"):
            candidates.append(low[:-3] + "y")
        if low.endswith("es"):
            candidates.append(low[:-2])
        if low.endswith("s"):
            candidates.append(low[:-1])
        if low.endswith("ied"):
            candidates.append(low[:-3] + "y")
        if low.endswith("ed"):
            candidates += [low[:-2], low[:-1]]
            if len(low) > 4 and low[-3] == low[-4]:
                candidates.append(low[:-3])
        if low.endswith("ing"):
            candidates += [low[:-3], low[:-3] + "e"]
            if len(low) > 5 and low[-4] == low[-5]:
                candidates.append(low[:-4])
        for c in candidates:
            if c and self._known(c, "v"):
                return c
        return candidates[0] if candidates else low


# --------------------------------------------------------------------------------------------------------------
# The decomposer
# --------------------------------------------------------------------------------------------------------------

# multi-word prepositions, merged into one IN token after tagging ("in front of the ruins")
MULTIWORD_PREPS = (("in", "front", "of"), ("on", "top", "of"), ("in", "the", "middle", "of"), ("next", "to"),
                   ("out", "of"), ("close", "to"), ("ahead", "of"), ("because", "of"), ("instead", "of"))
PARTITIVES = {"some", "several", "many", "most", "all", "both", "few"}  # "some of the people" -> the people
SUBJECT_PRONOUNS = {"he", "she", "they", "we", "i"}  # after an object: a relative clause without "that"

# words, with contractions split the PTB way ("don't" -> do n't)
_TOKEN = re.compile(r"[A-Za-z]+(?=n't\b)|n't|[A-Za-z0-9]+(?:[-'’][A-Za-z0-9]+)*|'s|[^\sA-Za-z0-9]")
_CONTRACTED = {"ca": "can", "wo": "will", "sha": "shall"}  # "can't" -> ca n't -> can not
_DROP = {"``", "''", '"', "`", "'", "“", "”", "(", ")", "[", "]"}


class RuleDecomposer:
    """Neo-Davidsonian atoms from POS-tag rules; see the module docstring.

    `tagger` (NLTK PerceptronTagger) and `wordnet` (nli_lib WordNet) default to the data-mirror loaders.
    Pass `wordnet=None, person_words=...` only in tests that must not touch the mirror.
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
        self.morph = _Morph(wordnet)
        self._person_root = self._root("person")
        self._animal_root = self._root("animal")
        self._clothing_roots = [r for r in (self._root("clothing"), self._root("garment"), self._root("headdress"),
                                            self._root("footwear")) if r]

    @property
    def cache_name(self) -> str:
        return f"{RULES_VERSION}-{self.style}"

    # -- WordNet categories ---------------------------------------------------------------------------------
    def _root(self, lemma: str) -> str | None:
        if self.wn is None:
            return None
        ids = self.wn.synsets(lemma, "n")
        return ids[0] if ids else None

    @functools.lru_cache(maxsize=20000)
    def category(self, noun: str) -> str:
        """'person' | 'animal' | 'clothing' | 'group' | 'thing' for a (compound) noun."""
        low = noun.lower()
        last = low.split()[-1] if low.split() else low
        if last in GROUP_NOUNS:
            return "group" if self.morph.noun(last) == last else "thing"  # "a team" vs "two teams"
        if low in PERSON_WORDS or last in PERSON_WORDS:
            return "person"
        if last in NOT_PERSON or self.wn is None:
            return "thing"
        for form in dict.fromkeys([low, self.morph.noun(low) if " " not in low else low, self.morph.noun(last)]):
            ids = self.wn.synsets(form, "n")
            if form.islower():  # "job" is not the Biblical Job: skip proper-name senses of a common noun
                ids = [i for i in ids if any(l[:1].islower() for l in self.wn.lemmas(i))] or ids
            ids = ids[:3]
            if not ids:
                continue
            closures = [self.wn.hypernym_closure(i) for i in ids]
            if self._animal_root and self._animal_root in closures[0]:
                return "animal"
            if any(r in closures[0] for r in self._clothing_roots):
                return "clothing"
            if self._person_root and (self._person_root in closures[0] or
                                      sum(self._person_root in c for c in closures) * 2 > len(closures)):
                return "person"
            return "thing"
        return "thing"

    # -- tokens and tags ------------------------------------------------------------------------------------
    def tag(self, sentence: str) -> list[_Tok]:
        words = [w for w in _TOKEN.findall(sentence.replace("’", "'")) if w not in _DROP]
        words = [_CONTRACTED.get(w.lower(), w) if i + 1 < len(words) and words[i + 1] == "n't" else w
                 for i, w in enumerate(words)]
        while words and words[-1] in {".", "!", "?", ",", ";", ":"}:
            words.pop()
        if not words:
            return []
        if words[0][:1].isupper() and not words[0].isupper() and self._common(words[0].lower()):
            words[0] = words[0].lower()  # sentence-initial capital of a common word ("Friends wait ...")
        tags = self.tagger.tag(words)
        toks = _merge_preps([_Tok(w, t) for w, t in tags])
        self._repair(toks)
        return toks

    def _common(self, low: str) -> bool:
        if self.wn is None:
            return low in PERSON_WORDS or low in {"a", "an", "the", "two", "three", "some"}
        return bool(self.wn.synsets(low)) or bool(self.wn.synsets(self.morph.noun(low))) or low in {
            "a", "an", "the", "two", "three", "four", "five", "some", "several", "many", "this", "these", "those",
            "there", "people", "it", "they", "he", "she", "someone", "nobody", "no"}

    def _pos(self, word: str, pos: str) -> bool:
        return self.wn is not None and bool(self.wn.synsets(word, pos))

    def _repair(self, toks: list[_Tok]) -> None:
        """Fix frequent perceptron-tagger errors on SNLI captions, using WordNet to check word classes."""
        n = len(toks)
        for i, t in enumerate(toks):
            prev = toks[i - 1] if i else None
            nxt = toks[i + 1] if i + 1 < n else None
            low = t.low
            if low == "n't":
                t.word, t.tag = "not", "RB"
            elif low == "can" and prev and prev.tag in {"DT", "JJ", "PRP$"}:
                t.tag = "NN"
            elif low in {"people", "men", "women", "children"}:
                t.tag = "NNS"
            elif low in {"someone", "somebody"}:
                t.tag = "NN"
            elif low in {"today", "tonight", "yesterday", "tomorrow"}:
                t.tag = "RB"
            elif low in {"outside", "inside", "outdoors", "indoors", "together", "home", "alone", "there", "here",
                         "upstairs", "downstairs", "nearby", "away"} and t.tag != "EX":
                if not (low in {"outside", "inside"} and nxt and nxt.tag in {"DT", "PRP$", "CD"}):
                    if not (low == "home" and prev and prev.tag in {"DT", "PRP$", "JJ"}):
                        t.tag = "RB"
            if i == 0 and low == "there":
                t.tag = "EX"
            if prev is not None and prev.tag == "POS" and t.tag in {"WP", "WDT", "VB", "VBP", "IN", "RB"} and \
                    self._pos(self.morph.noun(low), "n"):
                t.tag = "NNS" if self.morph.noun(low) != low else "NN"  # "the man 's hat" (tagged WP)
            if self.wn is None:
                continue
            if t.tag == "JJ" and low not in COLORS and not self._pos(low, "a") and self._pos(self.morph.noun(low), "n"):
                t.tag = "NNS" if self.morph.noun(low) != low else "NN"  # "musician", "fire" (truck)
            elif t.tag in {"NN", "JJ"} and low.endswith("ly") and self._pos(low, "r"):
                t.tag = "RB"  # "briefly"
            elif t.tag == "NN" and low in COLORS and nxt is not None and nxt.tag.startswith("NN"):
                t.tag = "JJ"  # "an orange vest", "a brown dog"
            elif prev is not None and prev.tag == "TO" and t.tag in {"VBG", "VBP", "NN", "VBD", "JJ"} and \
                    self._pos(low, "v") and not (nxt is not None and nxt.tag == "POS"):
                t.tag = "VB"  # "to sing", "to work"
            elif t.tag in {"NN", "JJ"} and low.endswith("ing") and len(low) > 5 and (prev is None or prev.tag not in {
                    "DT", "JJ", "PRP$", "IN", "POS", "CD"}) and self._pos(self.morph.verb(low), "v") and i > 0 and not (
                    prev.tag in {"NN", "NNS"} and low in ING_NOUNS):
                t.tag = "VBG"  # "outside reading and singing", "a boy swimming" (not "a work meeting")
        if not any(t.tag.startswith("VB") or t.tag == "MD" for t in toks[:-1] if True):
            pass
        # headline verbs tagged as plural nouns: "the man dances", "A youth skateboards by a mural"
        for i in range(1, n):
            if any(t.tag.startswith("VB") or t.tag == "MD" for t in toks[:i]):
                break
            t = toks[i]
            if t.tag == "NNS" and toks[i - 1].tag in {"NN", "NNP"} and (i + 1 == n or toks[i + 1].tag in {
                    "IN", "DT", "RB", "RP", "TO", "PRP$", "PRP", "JJ", "CD"}) and self._pos(self.morph.verb(t.low), "v"):
                if i + 1 < n and toks[i + 1].tag == "IN" and toks[i + 1].low == "of":
                    continue
                t.tag = "VBZ"
                break
        return toks

    # -- noun phrases ---------------------------------------------------------------------------------------
    def _np(self, toks: list[_Tok], i: int) -> tuple[_NP | None, int]:
        """One base NP starting at i (no coordination, no post-modifiers)."""
        n, np_ = len(toks), _NP()
        if i + 2 < n and toks[i].low in PARTITIVES and toks[i + 1].low == "of":  # "some of the people"
            inner, k = self._np(toks, i + 2)
            if inner is not None:
                inner._plural_tag = inner._plural_tag or bool(inner.head) and inner.head[-1].lower() in IRREGULAR_NOUNS
                return inner, k
        if i < n and toks[i].tag in {"PRP", "EX"} and toks[i].low != "there":
            np_.pron = toks[i].word
            return np_, i + 1
        if i < n and toks[i].low in {"someone", "somebody", "everyone", "everybody", "something", "anyone", "nobody"}:
            np_.head = [toks[i].low]
            return np_, i + 1
        j = i
        if j < n and (toks[j].tag in {"DT", "PRP$", "WP$"} or toks[j].low in {"some", "several", "many", "few"}):
            np_.det = toks[j].low if toks[j].tag != "PRP$" else "poss:" + toks[j].low
            j += 1
        if j < n and toks[j].tag == "CD":
            np_.num = toks[j].word.lower()
            j += 1
        pre: list[_Tok] = []
        while j < n:
            t = toks[j]
            if t.tag in {"JJ", "JJR", "JJS", "NN", "NNS", "NNP", "NNPS", "VBN", "VBG", "CD", "HYPH"} or (
                    t.word == "," and pre and j + 1 < n and toks[j + 1].tag in {"JJ", "VBN"}) or (
                    t.low == "and" and pre and pre[-1].tag == "JJ" and j + 1 < n and toks[j + 1].tag == "JJ"):
                if t.tag in {"JJ", "JJR", "JJS"} and any(p.tag.startswith("NN") for p in pre) and (
                        (j + 1 < n and toks[j + 1].tag == "TO") or
                        ((j + 1 == n or toks[j + 1].tag == "IN" or toks[j + 1].word == ",")
                         and not self._pos(t.low, "n"))):
                    break  # "a truck ready to move": a post-nominal adjective (but "a tank top": a mis-tagged noun)
                if t.tag in {"VBN", "VBG"}:  # participle as prenominal adjective only if a noun follows
                    if any(p.tag.startswith("NN") for p in pre):
                        break  # "teams playing soccer": a reduced relative, not a prenominal participle
                    k = j + 1
                    while k < n and toks[k].tag in {"JJ", "VBN", "VBG"}:
                        k += 1
                    if not (k < n and toks[k].tag.startswith("NN")):
                        break
                pre.append(t)
                j += 1
                continue
            break
        # the head is the trailing run of nouns; anything before it is an adjective/modifier
        k = len(pre)
        while k > 0 and pre[k - 1].tag.startswith("NN"):
            k -= 1
        if k == len(pre):  # no noun: not an NP (bare adjectives)
            if np_.det or np_.num:
                if pre:  # "the red", "two young" - take the last word as the head
                    np_.adjs = [t.word for t in pre[:-1] if t.tag not in {",", "CC"} and t.low != "and" and t.word != ","]
                    np_.head = [pre[-1].word]
                    return np_, j
                if np_.num:  # "one is jumping": a bare number is a pronoun-like subject
                    if np_.det:
                        np_.head = [np_.num]
                    else:
                        np_.pron = np_.num
                    np_.num = ""
                    return np_, j
                if np_.det in {"this", "that", "these", "those", "some", "all", "both", "each", "another"}:
                    np_.pron = np_.det
                    np_.det = ""
                    return np_, j
            return None, i
        np_.adjs = [t.word for t in pre[:k] if t.word != "," and t.low != "and"]
        np_.head = [t.word for t in pre[k:]]
        np_._plural_tag = pre[-1].tag in {"NNS", "NNPS"}
        np_.proper = not np_.det and not np_.num and all(t.tag in {"NNP", "NNPS"} for t in pre[k:])
        if j + 1 < n and toks[j].tag == "POS":  # "the men 's bikes": the possessed NP, owned by np_
            k1 = j + 1
            while k1 < n - 1 and toks[k1].tag == "RB":  # "this person 's only job"
                k1 += 1
            owned, k2 = self._np(toks, k1)
            if owned is not None and owned.head and not owned.pron:
                owned.possessor, owned.det = np_, owned.det or "poss:'s"
                return owned, k2
        return np_, j

    def _np_coord(self, toks, i, allow_mods=True):
        first, j = self._np(toks, i)
        if first is None:
            return None, i
        j = self._np_mods(toks, j, first) if allow_mods else j
        items = [first]
        while j < len(toks) - 1 and (toks[j].low in {"and", "or"} or (toks[j].word == "," and toks[j + 1].low in {"and"})):
            k = j + 1 if toks[j].word != "," else j + 2
            if k < len(toks) and toks[k].tag.startswith("VB"):
                break
            nxt, k2 = self._np(toks, k)
            if nxt is None:
                break
            k2 = self._np_mods(toks, k2, nxt) if allow_mods else k2
            items.append(nxt)
            j = k2
        if len(items) > 1:
            return _NP(conj=items), j
        return first, j

    def _np_mods(self, toks, j, np_: _NP, participles: bool = True) -> int:
        """Post-modifiers of np_: 'of' groups, PPs, participles, relatives, post-nominal adjectives.

        `participles=False` inside a PP object: a participle after "a man in a red shirt" modifies the man.
        """
        n = len(toks)
        while j < n:
            t = toks[j]
            if t.low == "of" and j + 1 < n:
                inner, k = self._np(toks, j + 1)
                if inner is not None:
                    if np_.head and np_.head[-1].lower() in GROUP_NOUNS | {"load", "lot", "lots", "pile", "number"}:
                        np_.of_np = inner
                    else:
                        np_.mods.append(("pp", "of", inner))
                    j = self._np_mods(toks, k, inner) if inner.head and inner.head[-1].lower() not in TIME_WORDS else k
                    continue
                break
            if t.tag == "IN" and t.low not in SUBORDINATORS | {"that", "than"} and j + 1 < n:
                inner, k = self._np_coord(toks, j + 1, allow_mods=False)
                if inner is not None and self._is_subject_region:
                    np_.mods.append(("pp", t.low, inner))
                    j = self._np_mods(toks, k, inner, participles=False)
                    continue
                break
            if t.tag in {"VBG", "VBN"} and self._is_subject_region and participles:
                vp, k = self._vp(toks, j, participle=True)
                if vp is not None:
                    np_.mods.append(("vp", vp))
                    j = k
                    continue
                break
            if t.low in RELATIVES and t.tag in {"WDT", "WP", "IN", "DT"} and j + 1 < n:
                k = j + 1
                if toks[k].tag.startswith("VB") or toks[k].tag == "MD" or toks[k].low in BE | HAVE | DO:
                    vp, k2 = self._vp(toks, k)
                    if vp is not None:
                        np_.mods.append(("vp", vp))
                        j = k2
                        continue
                break
            if t.tag in {"JJ", "RB"} and t.low in {"alone", "together", "outside", "inside", "nearby", "there", "here",
                                                   "home", "ready", "asleep", "awake", "alive", "barefoot", "shirtless",
                                                   "upstairs", "downstairs", "outdoors", "indoors"} and self._is_subject_region:
                np_.mods.append(("adj", t.low))
                j += 1
                continue
            break
        return j

    _is_subject_region = True

    # -- verb phrases ---------------------------------------------------------------------------------------
    def _vp(self, toks, i, participle: bool = False):
        """Verb group at i and its complements. `participle`: a VBG/VBN modifier without auxiliaries."""
        n, vp, j = len(toks), _VP(), i
        start = i
        while j < n:
            t = toks[j]
            if t.tag == "MD" or t.low in DO and j + 1 < n and (toks[j + 1].low in NEG or toks[j + 1].tag == "VB"):
                vp.aux.append(t.low)
            elif t.low in NEG and (vp.aux or vp.verb):
                vp.negated = True
                vp.aux.append(t.low if t.low != "n't" else "not")
            elif t.low in BE | HAVE and (j + 1 < n and (toks[j + 1].tag in {"VBG", "VBN", "VBD", "RB"} or toks[j + 1].low in BE | NEG | {"about", "going"})):
                vp.aux.append(t.low)
                if toks[j + 1].tag == "RB" and toks[j + 1].low not in NEG | {"also", "still", "just", "now"}:
                    # "is outside": a copula with an adverbial complement
                    vp.verb, vp.verb_tag, vp.copula = vp.aux.pop(), t.tag, True
                    j += 1
                    break
            elif t.tag == "RB" and t.low in {"also", "still", "just", "now", "currently", "already"} and (vp.aux or participle):
                vp.aux.append(t.low)
            elif t.tag.startswith("VB"):
                vp.verb, vp.verb_tag = t.word, t.tag
                j += 1
                break
            else:
                break
            j += 1
        if not vp.verb:
            if vp.aux and vp.aux[-1] in BE:  # "is" followed by a non-verbal complement
                vp.verb, vp.copula = vp.aux.pop(), True
            elif vp.aux and vp.aux[-1] in HAVE:
                vp.verb = vp.aux.pop()
            else:
                return None, i
        lemma = self.morph.verb(vp.verb)
        if lemma == "be" and not (j < n and toks[j].tag in {"VBG", "VBN"}):
            vp.copula = True
        # catenatives: "is trying to finish", "are getting ready to run", "is about to take"
        while j + 1 < n:
            if toks[j].tag == "TO" and toks[j + 1].tag == "VB" and (self.morph.verb(vp.verb) in CATENATIVE or vp.verb.lower() in CATENATIVE_ADJ):
                vp.aux += [vp.verb, "to"]
                vp.verb, vp.verb_tag = toks[j + 1].word, "VB"
                vp.copula = False
                j += 2
                continue
            if toks[j].low in CATENATIVE_ADJ and toks[j + 1].tag == "TO" and j + 2 < n and toks[j + 2].tag == "VB":
                vp.aux += [vp.verb, toks[j].low, "to"]
                vp.verb, vp.verb_tag = toks[j + 2].word, "VB"
                vp.copula = False
                j += 3
                continue
            break
        if vp.copula and j < n and toks[j].low in CATENATIVE_ADJ and j + 2 < n and toks[j + 1].tag == "TO" and toks[j + 2].tag == "VB":
            vp.aux += [vp.verb, toks[j].low, "to"]
            vp.verb, vp.verb_tag, vp.copula = toks[j + 2].word, "VB", False
            j += 3
        if j < n and toks[j].tag == "RP":
            vp.particle = toks[j].low
            j += 1
        if (j < n and toks[j].tag == "VBG" and not vp.copula and not vp.particle and
                self.morph.verb(vp.verb) not in POSTURE and vp.verb.lower() not in BE | HAVE):
            vp.aux.append(vp.verb)  # gerund complement: "is contemplating buying", "keeps walking"
            vp.verb, vp.verb_tag = toks[j].word, "VBG"
            j += 1
            if j < n and toks[j].tag == "RP":
                vp.particle = toks[j].low
                j += 1
        j = self._complements(toks, j, vp, participle)
        vp.raw = toks[start:j]
        return vp, j

    def _complements(self, toks, j, vp: _VP, participle: bool) -> int:
        n = len(toks)
        saved = self._is_subject_region
        self._is_subject_region = False
        try:
            while j < n:
                t = toks[j]
                if t.word in {",", ";", ":"}:
                    if participle and not (j + 1 < n and toks[j + 1].tag in {"VBG"}):
                        break
                    j += 1
                    continue
                if vp.copula and not vp.pred_nps and not vp.adjs and t.tag in {"JJ", "JJR", "JJS", "VBN"} and not (
                        j + 1 < n and toks[j + 1].tag.startswith("NN")):
                    k = j
                    phrase = []
                    while k < n and (toks[k].tag in {"JJ", "JJR", "JJS", "VBN", "RB"} or (toks[k].low in {"and", ","} and k + 1 < n and toks[k + 1].tag in {"JJ", "VBN"})):
                        phrase.append(toks[k])
                        k += 1
                    vp.adjs += [p.word for p in phrase if p.tag != "RB" and p.low not in {"and", ","}]
                    j = k
                    continue
                if vp.copula and t.tag == "CD" and j + 2 < n and toks[j + 2].tag == "JJ":  # "100 years old"
                    vp.adjs.append(" ".join(x.word for x in toks[j : j + 3]))
                    j += 3
                    continue
                if t.tag == "PRP" and t.low in SUBJECT_PRONOUNS and (vp.objects or vp.pps or vp.pred_nps):
                    while j < n and toks[j].word not in {",", ";"}:  # a relative clause without "that": skip it
                        j += 1
                    continue
                if t.tag in {"DT", "PRP$", "CD", "JJ", "NN", "NNS", "NNP", "NNPS", "PRP"} or t.low in {"someone", "something"}:
                    if t.tag == "JJ" and not vp.copula:
                        k = j
                        while k < n and toks[k].tag in {"JJ", "RB"}:
                            k += 1
                        if not (k < n and toks[k].tag.startswith("NN")):
                            vp.advs.append(t.word)
                            j += 1
                            continue
                    np_, k = self._np_coord(toks, j, allow_mods=False)
                    if np_ is None:
                        j += 1
                        continue
                    k = self._obj_mods(toks, k, np_)
                    (vp.pred_nps if vp.copula else vp.objects).append(np_)
                    vp.last_np, vp.last_np_end = np_, k
                    j = k
                    continue
                if t.tag == "TO" and j + 1 < n and toks[j + 1].tag == "VB":
                    sub, k = self._vp(toks, j + 1, participle=True)
                    if sub is not None:
                        vp.purposes.append(sub)
                        j = k
                        continue
                if t.tag in {"IN", "TO"} and t.low not in SUBORDINATORS | RELATIVES and j + 1 < n:
                    if toks[j + 1].tag in {"VBG"}:  # "by running", "for cleaning"
                        sub, k = self._vp(toks, j + 1, participle=True)
                        if sub is not None:
                            vp.pps.append((t.low, sub))
                            j = k
                            continue
                    k = self._attach_pp(vp, toks, j, t.low)
                    if k is not None:
                        j = k
                        continue
                    if toks[j + 1].tag in {"RB", "JJ"}:
                        vp.advs.append(f"{t.low} {toks[j + 1].word}")
                        j += 2
                        continue
                    j += 1
                    continue
                if t.tag in {"RP", "RB"} and t.low in SPATIAL_PARTICLES and (vp.objects or vp.pps) and j + 1 < n and (
                        toks[j + 1].tag in {"DT", "PRP$", "CD"}):
                    k = self._attach_pp(vp, toks, j, t.low)
                    if k is not None:
                        j = k
                        continue
                if t.low in {"before", "after", "since", "until", "during"} and not any(
                        x.tag.startswith("VB") or x.tag == "MD" for x in toks[j + 1:]):
                    np_, k = self._np_coord(toks, j + 1, allow_mods=False)
                    if np_ is not None:
                        vp.pps.append((t.low, np_))
                        j = k
                        continue
                if t.low == "that" and j > 0 and not toks[j - 1].tag.startswith("NN") and \
                        (end := self._clause_end(toks, j + 1)) is not None:  # "mad that it is ...", "knows that the dog ..."
                    vp.clauses.append(toks[j + 1 : end])
                    j = end
                    continue
                if t.low in SUBORDINATORS or t.tag == "WRB":
                    k = j + 1
                    end = k
                    while end < n and toks[end].low not in {",", ";"}:
                        end += 1
                    if k < n and toks[k].tag == "VBG":
                        sub, k2 = self._vp(toks, k, participle=True)
                        if sub is not None:
                            vp.extra.append(sub)
                            j = k2
                            continue
                    vp.clauses.append(toks[k:end])
                    j = end
                    continue
                if t.low in {"and", "or", "but", "then"} and j + 1 < n:
                    k = j + 1
                    end = self._clause_end(toks, k)
                    if end is not None:  # "... and one is jumping over a hurdle": a clause with its own subject
                        vp.clauses.append(toks[k:end])
                        j = end
                        continue
                    if toks[k].tag.startswith("VB") or toks[k].tag == "MD" or toks[k].low in BE | HAVE | DO:
                        sub, k2 = self._vp(toks, k, participle=toks[k].tag in {"VBG", "VBN"} and participle)
                        if sub is not None:
                            if not sub.aux and sub.verb_tag in {"VBG", "VBN"} and vp.aux:
                                sub.aux = [a for a in vp.aux if a in BE | HAVE | {"not"}]
                                sub.negated = vp.negated
                            vp.extra.append(sub)
                            j = k2
                            continue
                    j += 1
                    continue
                if t.tag == "VBN" and vp.last_np is not None and j == vp.last_np_end:
                    sub, k = self._vp(toks, j, participle=True)
                    if sub is not None:
                        owner = vp.last_np.conj[-1] if vp.last_np.conj else vp.last_np
                        owner.mods.append(("vp", sub))
                        j = k
                        continue
                if t.tag == "VBG" or (t.tag == "VBN" and not participle):
                    sub, k = self._vp(toks, j, participle=True)
                    if sub is not None:
                        vp.extra.append(sub)
                        j = k
                        continue
                if t.tag in {"RB", "RP", "JJ", "JJR", "RBR"}:
                    if t.low in NEG:
                        vp.negated = True
                    vp.advs.append(t.word)
                    j += 1
                    continue
                j += 1  # anything else (stray tokens) is skipped
        finally:
            self._is_subject_region = saved
        return j

    def _clause_end(self, toks, k: int) -> int | None:
        """End index of a clause with its own subject starting at k ('a woman reads'), else None."""
        n = len(toks)
        if k >= n or toks[k].tag.startswith("VB") or toks[k].tag in {"MD", "RB", "IN", "TO"}:
            return None
        saved = self._is_subject_region
        self._is_subject_region = False
        try:
            subj, j = self._np(toks, k)
        finally:
            self._is_subject_region = saved
        if subj is None or j >= n:
            return None
        t = toks[j]
        if not (t.tag in {"VBZ", "VBP", "VBD", "MD"} or t.low in BE | {"has", "have", "had"}):
            return None
        end = j
        while end < n and toks[end].word not in {",", ";"}:
            end += 1
        return end

    def _obj_mods(self, toks, k, np_: _NP) -> int:
        """Modifiers of an object NP: 'of'/'for' PPs, relative clauses, participles right after the noun."""
        n = len(toks)
        while k < n:
            t = toks[k]
            if t.low in NOUN_ATTACHING_PREPS and k + 1 < n:
                if toks[k + 1].tag == "VB" or toks[k + 1].tag == "VBG" and t.low == "for":
                    break
                inner, k2 = self._np_coord(toks, k + 1, allow_mods=False)
                if inner is None:
                    break
                if t.low == "of" and np_.head and np_.head[-1].lower() in GROUP_NOUNS | {"load", "lot", "lots", "pile", "number", "pair", "couple"}:
                    np_.of_np = inner
                else:
                    np_.mods.append(("pp", t.low, inner))
                k = k2
                continue
            if t.low in RELATIVES and t.tag in {"WDT", "WP", "IN", "DT"} and k + 1 < n and (
                    toks[k + 1].tag.startswith("VB") or toks[k + 1].tag == "MD"):
                sub, k2 = self._vp(toks, k + 1)
                if sub is not None:
                    np_.mods.append(("vp", sub))
                    k = k2
                    continue
            break
        return k

    # -- clause ---------------------------------------------------------------------------------------------
    def _clause(self, toks: list[_Tok]):
        """(subject NP or None, VP or None, kind) for a token list."""
        if not toks:
            return None, None, "empty"
        if toks[0].tag == "EX" or (toks[0].low == "there" and len(toks) > 1 and toks[1].low in BE):
            j = 1
            while j < len(toks) and (toks[j].low in BE | NEG):
                j += 1
            self._is_subject_region = True
            subj, k = self._np_coord(toks, j)
            if subj is None:
                return None, None, "fail"
            rest = toks[k:]
            vp = None
            if rest:
                vp, _ = self._vp([_Tok("is" if not subj.plural else "are", "VBZ")] + rest, 0)
                if vp is not None and not (vp.pps or vp.advs or vp.adjs or vp.pred_nps or vp.extra or vp.objects or vp.purposes):
                    vp = None
            return subj, vp, "existential"
        if toks[0].low in NEGATIVE_SUBJECTS | QUANTIFIED:  # "Nobody ...", "Everyone ...": not a conjunction of atoms
            return None, None, "negative"
        self._is_subject_region = True
        subj, j = self._np_coord(toks, 0)
        if subj is None:
            return None, None, "fail"
        if j >= len(toks):
            return subj, None, "caption"
        if toks[j].tag == "VBD" and any(t.tag in {"VBZ", "VBP", "MD"} or t.low in BE for t in toks[j + 1:]):
            toks[j].tag = "VBN"  # "A man dressed in red plays guitar": participle, not the main verb
            subj, j = self._np_coord(toks, 0)
            if j >= len(toks):
                return subj, None, "caption"
        self._is_subject_region = False
        vp, k = self._vp(toks, j)
        if vp is None:
            return subj, None, "caption"
        return subj, vp, "clause"

    # -- atom generation ------------------------------------------------------------------------------------
    def _attach_pp(self, vp, toks, j: int, prep: str) -> int | None:
        """Attach (prep, NP starting at j+1, with its modifiers) to `vp`; the index after it, or None if no NP."""
        np_, k = self._np_coord(toks, j + 1, allow_mods=False)
        if np_ is None:
            return None
        k = self._obj_mods(toks, k, np_)
        vp.pps.append((prep, np_))
        vp.last_np, vp.last_np_end = np_, k
        return k

    def decompose(self, sentence: str) -> list[str]:
        """Atoms of `sentence` as strings (deduplicated, in order)."""
        return [a.text for a in self.decompose_records(sentence)]

    def decompose_records(self, sentence: str) -> list[Atom]:
        """Atoms of `sentence` with their kind (entity, type, attribute, action, argument, purpose, clause)."""
        toks = self.tag(sentence)
        out = _AtomList(self.cache_name)
        if not toks:
            return []
        try:
            subj, vp, kind = self._clause(toks)
        except RecursionError:  # pragma: no cover - pathological input
            subj, vp, kind = None, None, "fail"
        if kind in {"fail", "negative", "empty"} or subj is None or (subj.pron and subj.pron.lower() in {"it", "this", "that"}):
            out.add(sentence, "whole")
            return out.atoms
        ctx = _Ctx(used=set(), main=None)
        self._entity(subj, ctx, out, is_subject=True)
        ctx.main = subj
        if vp is not None:
            self._predicate(subj, vp, ctx, out)
        if not out.atoms:
            out.add(sentence, "whole")
        return out.atoms

    __call__ = decompose

    def explain(self, sentence: str) -> dict:
        """Tags, the clause analysis and the atoms (for debugging a decomposition in a notebook)."""
        toks = self.tag(sentence)
        subj, vp, kind = self._clause(list(toks)) if toks else (None, None, "empty")
        return {"tags": [(t.word, t.tag) for t in toks], "kind": kind, "subject": subj, "predicate": vp,
                "atoms": self.decompose_records(sentence)}

    # entity atoms -----------------------------------------------------------------------------------------
    def _ref(self, np_: _NP, ctx: "_Ctx") -> str:
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
            elif cat in {"person"} or (np_.of_np is not None and self.category(np_.head_text) == "group"):
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

    def _plural_ref(self, ref: str, np_: _NP) -> bool:
        if ref in {"the people"} or " and " in ref:
            return True
        if ref in {"the person", "the group"}:
            return False
        return (np_.of_np or np_).plural

    def _entity(self, np_: _NP, ctx: "_Ctx", out: "_AtomList", is_subject: bool) -> None:
        """Existence, type and attribute atoms of an entity, then its post-modifiers."""
        if np_.pron:
            self._ref(np_, ctx)
            return
        ref = self._ref(np_, ctx)
        be = "are" if self._plural_ref(ref, np_) else "is"
        if np_.conj:
            if ref == "the people":
                singles = all(not c.plural for c in np_.conj)  # "a man and a woman" -> two; "four men and a boy" -> ?
                out.add(f"There are {_number_word(len(np_.conj)) + ' ' if singles else ''}people.", "entity")
                members = [self._np_text(c, indefinite=True) for c in np_.conj]
                if any(c.head_text.lower() not in GENERIC_PERSON for c in np_.conj):
                    out.add(f"The people are {_join(members)}.", "type")
                for c in np_.conj:
                    for adj in c.adjs:
                        out.add(f"The {c.head_text} is {adj}.", "attribute")
            else:
                for c in np_.conj:
                    if not c.proper:
                        out.add(f"There {'are' if c.plural else 'is'} {self._np_text(c, indefinite=True)}.", "entity")
                    for adj in c.adjs:
                        out.add(f"The {c.head_text} {'are' if c.plural else 'is'} {adj}.", "attribute")
            for c in np_.conj:
                self._np_modifiers(c, ref if len(np_.conj) == 1 else "the " + c.head_text, ctx, out)
            return
        if np_.possessor is not None:  # "the men 's bikes": the owner's atoms, then "The people have bikes."
            owner = np_.possessor
            self._entity(owner, ctx, out, is_subject=False)
            have = "have" if self._plural_ref(owner.ref, owner) else "has"
            out.add(f"{_cap(owner.ref)} {have} {self._np_text(np_, indefinite=True)}.", "argument")
        target = np_.of_np or np_
        cat = self.category(target.head_text)
        group_of = np_.of_np is not None and self.category(np_.head_text) == "group"
        if ref in {"the person", "the people"} or group_of:
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
                out.add(f"The {'people are' if ref == 'the people' else 'person is'} "
                        f"{(article(noun) + ' ') if ref == 'the person' else ''}{noun}.", "type")
            for adj in target.adjs + (np_.adjs if np_.of_np is not None else []):
                out.add(f"{_cap(ref)} {be} {adj}.", "attribute")
        elif ref == "the group":
            out.add("There is a group of people.", "entity")
            if np_.head_text.lower() != "group":
                out.add(f"The group is {article(np_.head_text)} {np_.head_text}.", "type")
            for adj in np_.adjs:
                out.add(f"The group is {adj}.", "attribute")
        else:
            if not target.proper:
                out.add(f"There {'are' if target.plural else 'is'} {self._np_text(target, indefinite=True)}.", "entity")
            if cat == "animal" and self.morph.noun(target.head[-1]) != "animal":
                out.add(f"There {'are animals' if target.plural else 'is an animal'}.", "type")
            for adj in target.adjs:
                out.add(f"{_cap(ref)} {be} {adj}.", "attribute")
        self._np_modifiers(np_, ref, ctx, out)
        if np_.of_np is not None and np_.of_np is not target:
            self._np_modifiers(np_.of_np, ref, ctx, out)
        elif np_.of_np is not None:
            self._np_modifiers(np_.of_np, ref, ctx, out)

    def _np_modifiers(self, np_: _NP, ref: str, ctx, out) -> None:
        be = "are" if self._plural_ref(ref, np_) else "is"
        for mod in np_.mods:
            if mod[0] == "pp":
                prep, inner = mod[1], mod[2]
                if prep == "in" and self.category(inner.head_text) == "clothing":
                    self._object_atoms(ref, f"{be} wearing", inner, ctx, out, kind="attribute")
                elif prep == "with" and self.category(inner.head_text) == "clothing":
                    self._object_atoms(ref, f"{be} wearing", inner, ctx, out, kind="attribute")
                else:
                    self._object_atoms(ref, f"{be} {prep}", inner, ctx, out, kind="argument", plain=True)
            elif mod[0] == "adj":
                out.add(f"{_cap(ref)} {be} {mod[1]}.", "attribute")
            elif mod[0] == "vp":
                vp: _VP = mod[1]
                if not vp.aux and vp.verb_tag in {"VBG", "VBN"}:
                    vp.aux = [be]
                holder = _NP(ref=ref)
                holder._plural_tag = be == "are"
                self._predicate(holder, vp, ctx, out)

    def _np_text(self, np_: _NP, indefinite: bool = False) -> str:
        """Surface text of an NP without post-modifiers; adjectives dropped (they get their own atoms)."""
        if np_.conj:
            return _join([self._np_text(c, indefinite) for c in np_.conj])
        if np_.pron:
            return np_.pron
        head = np_.head_text
        plural = np_.plural and not np_.conj
        det = np_.det
        if det.startswith("poss:"):
            det = "" if (plural or np_.num) else ("the" if not indefinite else article(head))
        elif det in {"the", "this", "that", "these", "those"}:
            det = ("" if (plural or np_.num) else article(head)) if indefinite else "the"
        elif det in {"a", "an"}:
            det = article(head)
        # a bare singular noun stays bare: mass nouns ("grass", "soccer", "by hand") and names
        if np_.of_np is not None:
            head = f"{head} of {self._np_text(np_.of_np)}"
        words = [w for w in (det, np_.num, head) if w]
        return " ".join(words)

    def _object_atoms(self, subj_ref: str, verb_group: str, np_: _NP, ctx, out, kind="argument", plain=False) -> None:
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
            mref = ("" if (m.of_np or m).proper else "the ") + (m.of_np or m).head_text
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
    def _predicate(self, subj: _NP, vp: _VP, ctx, out) -> None:
        ref = subj.ref or self._ref(subj, ctx)
        plural = self._plural_ref(ref, subj)
        vp_aux = [("are" if plural else "is") if (a in {"is", "are"}) else ("were" if plural else "was") if a in {"was", "were"}
                  else ("have" if plural else "has") if a in {"has", "have"} and vp.aux and a == vp.aux[0] else a
                  for a in vp.aux]
        vp.aux = vp_aux
        if vp.copula and vp.verb.lower() in BE:
            vp.verb = ("are" if plural else "is") if vp.verb.lower() in {"is", "are", "'s", "'re", "am"} else (
                "were" if plural else "was") if vp.verb.lower() in {"was", "were"} else vp.verb
        group = vp.group()
        S = _cap(ref)
        if vp.negated:  # a negated predicate is one atom (its parts are not entailed on their own)
            words = []
            for t in vp.raw:
                if t.low in SUBORDINATORS or t.tag == "WRB" or t.word in {",", ";"} or (t.low == "and" and words):
                    break
                words.append(self._resolve_word(t, ctx))
            out.add(f"{S} {' '.join(words)}.", "action")
            for extra in vp.extra:
                if not extra.aux and extra.verb_tag in {"VBG"}:
                    extra.aux = ["are" if plural else "is"]
                self._predicate(subj, extra, ctx, out)
            for toks in vp.clauses:
                self._subclause(toks, ctx, out)
            return
        if vp.copula:
            for np_ in vp.pred_nps:
                for m in np_.conj or [np_]:
                    out.add(f"{S} {group} {self._np_text(m, indefinite=True)}.", "type")
                    for adj in m.adjs:
                        out.add(f"{S} {group} {adj}.", "attribute")
                    self._np_modifiers(m, ref, ctx, out)
            for adj in vp.adjs:
                out.add(f"{S} {group} {adj}.", "attribute")
            for prep, np_ in vp.pps:
                if isinstance(np_, _VP):
                    continue
                if prep == "in" and self.category(np_.head_text) == "clothing":
                    self._object_atoms(ref, f"{group} wearing", np_, ctx, out, kind="attribute")
                else:
                    self._object_atoms(ref, f"{group} {prep}", np_, ctx, out, kind="argument", plain=True)
            for adv in vp.advs:
                out.add(f"{S} {group} {adv}.", "argument")
        else:
            lemma = self.morph.verb(vp.verb)
            light = lemma in LIGHT_VERBS and vp.objects
            if light:
                if self.style == "cleft" or len(vp.objects) > 0:
                    out.add(f"{S} {group} something.", "action")
            else:
                out.add(f"{S} {group}.", "action")
            for obj in vp.objects:
                self._object_atoms(ref, group, obj, ctx, out)
            carrier = group
            if light and vp.objects:
                carrier = f"{group} {self._np_text(vp.objects[0])}"
            for prep, np_ in vp.pps:
                if isinstance(np_, _VP):  # "by running"
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
            for purpose in vp.purposes:
                self._purpose(ref, plural, vp, purpose, ctx, out)
        for extra in vp.extra:
            if not extra.aux and extra.verb_tag in {"VBG"}:
                extra.aux = ["are" if plural else "is"]
            self._predicate(subj, extra, ctx, out)
        for toks in vp.clauses:
            self._subclause(toks, ctx, out)

    def _purpose(self, ref, plural, vp: _VP, purpose: _VP, ctx, out) -> None:
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
                    out.add(f"The thing {ref} {be} trying to {pverb} is {self._np_text(m, indefinite=True)}.", "purpose")
        else:
            out.add(f"The purpose of {event} is to {self._vp_text(purpose, ctx)}.", "purpose")

    def _vp_text(self, vp: _VP, ctx) -> str:
        return " ".join(self._resolve_word(t, ctx) for t in vp.raw)

    def _resolve_word(self, tok: _Tok, ctx) -> str:
        if tok.tag == "PRP$" and ctx.main is not None:
            return "the"
        return tok.word

    def _subclause(self, toks: list[_Tok], ctx, out) -> None:
        if not toks:
            return
        saved = self._is_subject_region
        try:
            subj, vp, kind = self._clause(list(toks))
        finally:
            self._is_subject_region = saved
        if subj is None or kind in {"fail", "negative"}:
            return
        if subj.pron and subj.pron.lower() in {"he", "she", "they", "him", "her", "them"} and ctx.main is not None:
            subj.ref = ctx.main.ref
        else:
            self._entity(subj, ctx, out, is_subject=False)
        if vp is not None:
            self._predicate(subj, vp, ctx, out)


@dataclass
class _Ctx:
    used: set
    main: _NP | None


class _AtomList:
    def __init__(self, source: str):
        self.atoms: list[Atom] = []
        self._seen: set[str] = set()
        self.source = source

    def add(self, text: str, kind: str) -> None:
        text = _finish(text)
        key = text.lower()
        if text and key not in self._seen:
            self._seen.add(key)
            self.atoms.append(Atom(text, kind, self.source))


def _merge_preps(toks: list) -> list:
    """Merge MULTIWORD_PREPS into single IN tokens ('in front of' keeps its words)."""
    out, i = [], 0
    while i < len(toks):
        for mw in MULTIWORD_PREPS:
            if tuple(t.low for t in toks[i : i + len(mw)]) == mw:
                out.append(_Tok(" ".join(t.word for t in toks[i : i + len(mw)]), "IN"))
                i += len(mw)
                break
        else:
            out.append(toks[i])
            i += 1
    return out


def _finish(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,.;:!?])", r"\1", text).rstrip(" ,;:")
    text = re.sub(r"\bn't\b", "not", text)
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


_NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def _number_word(k: int) -> str:
    return _NUMBER_WORDS.get(k, str(k))


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
