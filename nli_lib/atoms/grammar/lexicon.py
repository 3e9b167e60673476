"""Closed word classes, and the WordNet questions the decomposer asks about open-class words.

Small closed lists decide function words ("is", "while", "who"); Open English WordNet decides open-class
questions such as "is this noun a person, an animal, a garment?" (`Lexicon.category`).

>>> from nli_lib.atoms.grammar.morphology import Morph
>>> lex = Lexicon(None, Morph(None))             # no WordNet: the closed lists only
>>> lex.category("women"), lex.category("a team"), lex.category("teams"), lex.category("vest")
('person', 'group', 'thing', 'thing')
"""
from __future__ import annotations

import functools

BE = {"is", "are", "was", "were", "be", "been", "being", "am", "'s", "'re"}
HAVE = {"has", "have", "had", "having"}
DO = {"does", "do", "did"}
NEG = {"not", "n't", "never", "no"}
MODALS = {"can", "could", "may", "might", "will", "would", "shall", "should", "must", "ca", "wo"}
GROUP_NOUNS = {"group", "crowd", "team", "teams", "couple", "family", "choir", "band", "bunch", "pair", "gang",
               "audience",
               "class", "troop", "squad", "party", "orchestra", "groups", "crowds", "families", "couples"}
PERSON_WORDS = {"person", "people", "persons", "someone", "somebody", "guy", "guys", "male", "males", "female",
                "females", "kid", "kids", "individual", "adult", "adults", "youth", "friend", "friends", "man", "men",
                "woman", "women", "boy", "boys", "girl", "girls", "child", "children", "lady", "ladies", "baby",
                "toddler", "teenager", "teen", "worker", "workers", "player", "players"}
GENERIC_PERSON = {"person", "people", "persons", "someone", "somebody", "individual"}
NOT_PERSON = {"hand", "hands", "model", "head", "back", "star", "fan", "light", "board"}
NEGATIVE_SUBJECTS = {"nobody", "noone", "none", "nothing", "no"}
QUANTIFIED = {"everyone", "everybody", "everything", "all", "each", "every", "neither", "nor"}
SUBORDINATORS = {"while", "as", "when", "before", "after", "because", "since", "until", "whilst", "though", "unless",
                 "although", "if", "once"}
RELATIVES = {"who", "that", "which", "whose", "whom"}
CATENATIVE = {"try", "attempt", "prepare", "start", "begin", "continue", "want", "need", "plan", "decide", "hope",
              "learn", "like", "love", "struggle", "refuse", "seem", "appear", "fail", "pretend", "intend", "ready"}
POSTURE = {"sit", "stand", "lie", "kneel", "walk", "run", "lean", "crouch", "squat", "stay", "wait", "ride", "lay",
           "float", "swim", "hang", "rest", "pose", "jog", "dance", "laugh", "smile", "work", "play", "relax"}
CATENATIVE_ADJ = {"ready", "about", "going", "able", "set", "trying", "preparing", "eager"}
LIGHT_VERBS = {"have", "take", "make", "hold", "wear", "carry", "get", "give", "put", "do", "use", "bring", "buy",
               "grab", "contain", "own", "receive", "sell", "show", "keep", "pull", "push", "throw", "catch", "hit",
               "say"}
ING_NOUNS = {"building", "buildings", "meeting", "meetings", "painting", "paintings", "drawing", "drawings", "clothing",
             "ceiling", "wedding", "weddings", "evening", "morning", "railing", "sibling", "siblings", "pudding",
             "frosting", "icing", "awning", "bedding", "carving", "dwelling", "filling", "landing", "lightning",
             "outing", "recording", "seating", "setting", "siding", "stocking", "stockings", "topping", "writing",
             "shooting", "crossing", "opening", "gathering", "parking", "housing", "lighting", "stuffing",
             "boxing", "sailing", "bowling", "fishing", "skiing", "hiking", "camping"}  # "-ing" heads of compounds
SPATIAL_PARTICLES = {"down", "up", "across", "through", "over", "along", "around", "into", "off", "past", "under",
                     "toward", "towards"}  # tagged RP/RB before an NP after an object: a preposition
CLOSED_PREPOSITIONS = {"towards", "toward", "onto", "into", "beside", "beneath", "underneath", "upon", "amongst",
                       "among", "alongside", "throughout", "atop", "amid", "via"}  # never nouns or verbs
MASS_NOUNS = {"grass", "water", "snow", "sand", "food", "dirt", "mud", "ice", "rain", "hair", "paint", "traffic",
              "music", "money", "fire", "smoke", "coffee", "beer", "wine", "milk", "juice", "bread", "equipment",
              "furniture", "clothing", "luggage", "garbage", "trash", "wood", "concrete", "pavement", "hay", "dust",
              "foam", "soup", "rice", "pasta", "meat", "tea", "soda", "laundry", "gear", "machinery", "mail",
              "graffiti", "shade", "sunlight", "air", "mist", "fog", "smog", "grease", "oil", "gravel", "soil",
              "mulch", "lumber", "rubble", "debris", "confetti", "candy", "chocolate", "cheese", "butter", "sugar",
              "salt", "cotton", "wool", "leather", "silk", "metal", "plastic", "cardboard", "clay", "steel"}
NON_PREDICATIVE = {"other", "same", "only", "own", "entire", "whole", "various", "several", "many", "more", "most",
                   "main", "next", "first", "second", "third", "fourth", "fifth", "last", "former", "latter",
                   "certain", "previous", "following", "final", "few", "single", "lone", "sole", "double",
                   "extra"}  # "the other children": never "... is other"
ADJ_NOUN_IDIOMS = {("old", "friend"), ("old", "friends"), ("best", "friend"), ("best", "friends"),
                   ("tight", "quarters"), ("close", "quarters"), ("hot", "dog"), ("hot", "dogs"), ("high", "school"),
                   ("hot", "air"), ("good", "time"), ("great", "time"), ("hard", "time"), ("fun", "time"),
                   ("little", "league"), ("big", "brother"), ("little", "brother"), ("big", "sister"),
                   ("little", "sister")}  # "old friends" are not old: the adjective stays with the noun
MULTIWORD_ADVERBS = (("back", "and", "forth"), ("up", "and", "down"), ("side", "by", "side"))
POSSESSIVES = {"his", "her", "their", "its", "my", "our", "your"}
ASPECT_ADVERBS = {"also", "still", "just", "now", "currently", "already", "always", "often", "usually", "again",
                  "really", "actually", "even", "probably", "slowly", "quickly", "happily", "finally"}
LINKING_VERBS = {"get", "become", "look", "seem", "feel", "stay", "remain", "grow", "turn", "appear", "sound",
                 "smell", "taste"}  # + adjective: "get ready", "look happy"
NONFACTIVE = {"if", "unless", "whether", "so"}  # clauses whose content the sentence does not assert
OBJECT_CONTROL = {"get", "want", "ask", "tell", "allow", "help", "teach", "encourage", "force", "convince", "invite",
                  "persuade", "expect", "need", "wait", "watch", "let", "urge", "remind", "order", "beg"}
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
          "silver", "gold", "golden", "tan", "beige", "maroon", "navy", "teal", "turquoise", "violet", "blond",
          "blonde"}
PLURAL_OF = {"person": "people", "man": "men", "woman": "women", "child": "children", "foot": "feet", "mouse": "mice"}

# multi-word prepositions, merged into one IN token after tagging ("in front of the ruins")
MULTIWORD_PREPS = (("in", "front", "of"), ("on", "top", "of"), ("in", "the", "middle", "of"), ("next", "to"),
                   ("out", "of"), ("close", "to"), ("ahead", "of"), ("because", "of"), ("instead", "of"))
PARTITIVES = {"some", "several", "many", "most", "all", "both", "few"}  # "some of the people" -> the people
SUBJECT_PRONOUNS = {"he", "she", "they", "we", "i"}  # after an object: a relative clause without "that"
QUANTITY_NOUNS = {"load", "lot", "lots", "pile", "number"}  # "a lot of people": the people after "of"
POSTNOMINAL_WORDS = {"alone", "together", "outside", "inside", "nearby", "there", "here", "home", "ready", "asleep",
                     "awake", "alive", "barefoot", "shirtless", "upstairs", "downstairs", "outdoors", "indoors"}
NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


class Lexicon:
    """WordNet-backed word-class questions (`wordnet` None: closed lists only, for tests without the mirror)."""

    def __init__(self, wordnet, morph):
        self.wn, self.morph = wordnet, morph
        self._person_root = self._root("person")
        self._animal_root = self._root("animal")
        self._clothing_roots = [r for r in (self._root("clothing"), self._root("garment"), self._root("headdress"),
                                            self._root("footwear")) if r]

    def _root(self, lemma: str) -> str | None:
        if self.wn is None:
            return None
        ids = self.wn.synsets(lemma, "n")
        return ids[0] if ids else None

    @functools.lru_cache(maxsize=20000)  # noqa: B019  (one per RuleDecomposer, which lives for the process)
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
                ids = [i for i in ids if any(name[:1].islower() for name in self.wn.lemmas(i))] or ids
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

    def is_common(self, low: str) -> bool:
        """Whether a (sentence-initial) word is a common word, not a name."""
        if self.wn is None:
            return low in PERSON_WORDS or low in {"a", "an", "the", "two", "three", "some"}
        return bool(self.wn.synsets(low)) or bool(self.wn.synsets(self.morph.noun(low))) or low in {
            "a", "an", "the", "two", "three", "four", "five", "some", "several", "many", "this", "these", "those",
            "there", "people", "it", "they", "he", "she", "someone", "nobody", "no"}

    def is_pos(self, word: str, pos: str) -> bool:
        """Whether WordNet knows `word` with part of speech `pos` ('n', 'v', 'a', 'r'); False without WordNet."""
        return self.wn is not None and bool(self.wn.synsets(word, pos))

