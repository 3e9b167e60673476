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

from ..text import WORD, normalise, word_count
from .glosses import DETERMINERS, GLOSS_RULES_VERSION, LABEL_TEXT, PRONOMINAL, Countability, definition_sentences
from .senses import SENSE_THRESHOLDS, SenseChoice, SenseChooser, context_sentence, register_label
from .text import Snippet, pos_tag, query_nouns, split_sentences, stopwords, strip_parentheticals


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
        toks = WORD.findall(strip_parentheticals(LABEL_TEXT.sub("", str(self.wn.definition(synset_id)), count=1)))
        first = toks[0].lower() if toks else ""
        if first in ("a", "an", "one", "any", "each") or first in PRONOMINAL:
            return False
        if first in DETERMINERS:  # "the gracefulness of ..."
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
        is silent about: it gets a page only when it names the kind of something in the scene, a direct
        hypernym of a sense chosen in the premise or fixed by a page ("a hill is a local elevation of the
        land": elevation as the hill's kind, not the event of raising). The other nouns of a definition
        ("a cowboy hat is worn by ranch hands", "a radiotelephone communicates by radio waves") are not in
        the scene: following them wrote facts about ranches and wavelengths into a scene with neither, so
        with `scene_check` they get no page ('not in the scene'). Every sense, however it was chosen, passes
        `SenseChooser.vet` (no confident sense: 'sense_uncertain', no page)."""
        terms, contexts, first = self._noun_contexts(query)
        choices = self.chooser.choose_many(list(zip(terms, contexts)))
        fixed = {t: self.page_sense(t, c) for t, c in zip(terms, contexts) if c != first}
        scene = {fixed.get(t) if c != first else choice.synset for t, c, choice in zip(terms, contexts, choices)}
        genus = {h for sid in scene - {None} for h in self.wn.hypernyms(sid)}  # "a hill is a ... elevation"
        out = []
        for term, context, choice in zip(terms, contexts, choices):
            choice = self.scene_clue(choice) if self.scene_check else choice
            if fixed.get(term) is not None and fixed[term] != choice.synset:
                choice = self.chooser.vet(SenseChoice(term, context, fixed[term], choice.scores, "sense of its page"))
            if context == first or fixed.get(term) is not None:
                out.append(choice)
                continue
            kinds = [sid for sid in self.chooser.candidates(term) if sid in genus]
            if len(kinds) == 1:  # the noun names the kind of a thing in the scene: that sense, as WordNet says
                out.append(self.chooser.vet(SenseChoice(term, context, kinds[0], choice.scores,
                                                        "hypernym of a scene sense")))
            elif self.scene_check and choice.synset is not None:
                out.append(SenseChoice(term, context, None, choice.scores, "not in the scene"))
            else:
                out.append(choice)
        return out

    def scene_clue(self, choice: SenseChoice) -> SenseChoice:
        """`choice`, unless the words around the noun settle its sense against the embedding's pick:

        * the noun before it names one sense only, in that sense's lemmas ("a baby stroller": WordNet's
          'baby buggy, baby carriage, ..., stroller', not someone who strolls): that sense ('named by its
          modifier'). Lemmas, not glosses: "a city street" is not the street "of a city viewed as a depressed
          environment";
        * a colour noun worn ("the player in the orange", "a girl wearing pink"): the colour of the clothes,
          an attribute with no page, whatever else the word means ('a colour worn', no sense).

        >>> pages = WordNetPages.__new__(WordNetPages)
        >>> pages.wn = type("W", (), {"synsets": lambda self, w, p: {"baby": ["b"]}.get(w, []),
        ...     "lemmas": lambda self, s: {"w": ["stroller"], "v": ["baby buggy", "stroller"]}[s],
        ...     "hypernym_closure": lambda self, s: set()})()
        >>> pages.chooser = type("C", (), {"candidates": lambda self, t: ["w", "v"]})()
        >>> c = SenseChoice("stroller", "A baby stroller sits beside her.", "w", (), "best in context")
        >>> chosen = pages.scene_clue(c)
        >>> chosen.synset, chosen.reason
        ('v', 'named by its modifier')
        """
        term, context = choice.term, choice.context
        candidates = self.chooser.candidates(term)
        before = re.search(rf"\b(\w+)\s+{re.escape(term)}(?:e?s)?\b", context, flags=re.IGNORECASE)
        modifier = before.group(1).lower() if before else ""
        if modifier and modifier not in stopwords() and self.wn.synsets(modifier, "n"):
            named = [sid for sid in candidates
                     if re.search(rf"\b{re.escape(modifier)}\b", " ".join(self.wn.lemmas(sid)).lower())]
            if len(named) == 1:
                return SenseChoice(term, context, named[0], choice.scores, "named by its modifier")
        worn = re.search(rf"\b(?:in|wearing|wears|dressed in)\s+(?:the\s+|all\s+)?{re.escape(term)}\b", context,
                         flags=re.IGNORECASE)
        if worn and any(self._colours() & self.wn.hypernym_closure(sid) for sid in candidates):
            return SenseChoice(term, context, None, choice.scores, "a colour worn")
        return choice

    def _colours(self) -> set[str]:
        """WordNet's colour senses ('color, colour, coloring'): a noun with one under it can be a colour."""
        if not hasattr(self, "_colour_ids"):
            self._colour_ids = set(self.wn.synsets("color", "n")) | set(self.wn.synsets("chromatic color", "n"))
        return self._colour_ids

    def _noun_contexts(self, query: str) -> tuple[list[str], list[str], str]:
        """The query nouns `sense_choices` reads, the sentence each is read in, and the query's first sentence."""
        terms = query_nouns(query, self.wn, modifiers=False)
        return terms, [context_sentence(query, t) for t in terms], next(iter(split_sentences(query)), "")

    def prepare(self, queries: Sequence[str]) -> None:
        """Choose the senses `sense_choices` will need for all `queries` at once, in one encoder call.

        `SenseChooser.choose_many` keeps each choice, so the per-query calls that follow encode nothing.
        One call for a whole level instead of one per premise, so the encoder batches texts of similar length
        instead of encoding ~10 texts a call. The choices are those of the per-query calls: a
        choice depends on its (noun, sentence) only."""
        items = []
        for query in queries:
            terms, contexts, _ = self._noun_contexts(query)
            items += zip(terms, contexts)
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
