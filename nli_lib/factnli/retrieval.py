"""§3.2 facts acquisition, step 1: premise-conditioned retrieval of a snippet pool P(t).

The paper queries Wikipedia with the previous premise p(t-1), takes each page's introductory summary,
splits it into sentences, embeds them with all-MiniLM-L6-v2 and keeps those whose cosine to the query is
>= tau. Two page sources share that pipeline (`SnippetRetriever`):

* `WikipediaPages` (online): MediaWiki search per query noun + intro extracts, over HTTP, every response
  cached in the call cache (namespace "http"), so a re-run or a replay needs no network;
* `WordNetPages` (offline): Open English WordNet from the data mirror as a small encyclopedia. A "page" is
  a noun synset found by a lemma search for each query noun (plus its direct hypernyms); its "intro
  summary" is the gloss written as definitional sentences ("A street is a thoroughfare that is lined
  with buildings.") followed by the synset's usage examples.

>>> pages = WordNetPages()                                   # doctest: +SKIP
>>> [p.title for p in pages.search("A woman looks into a window on a city street .")][:3]   # doctest: +SKIP
['woman', 'window', 'city street']

Trade-offs, stated plainly: WordNet glosses are short and generic next to Wikipedia intros (fewer named
entities, dates and places), so offline facts are definitional ("A guitar is a stringed instrument.").
Page search is one lookup per query noun in both retrievers (a whole 100-word premise is a poor search
query); the embedding threshold then does the premise-conditioned selection, as in the paper.
"""
from __future__ import annotations

import json
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Protocol, Sequence

import numpy as np

from ..cache import CallCache, default_cache
from ..profile import FACTNLI_WIKIPEDIA_API
from .text import (finish, normalise, pos_tag, query_nouns, split_sentences, strip_parentheticals, words,
                   WORD)


@dataclass(frozen=True)
class Page:
    """A retrieved page: its source id, title and intro summary split into sentences."""

    source: str  # 'oewn:04341737-n' or 'wikipedia:Carnaby Street'
    title: str  # page title (WordNet: the lemma searched for)
    sentences: tuple[str, ...]  # introductory summary, one sentence per item


@dataclass(frozen=True)
class Snippet:
    """One sentence of a page summary kept in the pool P(t)."""

    text: str  # the sentence
    source: str  # page source id it comes from
    title: str  # page title
    score: float  # cosine similarity to the query p(t-1)


class PageSource(Protocol):
    name: str

    def search(self, query: str, exclude: frozenset | set = frozenset()) -> list[Page]:
        """Pages for a query, most relevant first, skipping pages whose sentences are all in `exclude`."""


# --------------------------------------------------------------------------------------------------------------
# Offline: Open English WordNet as an encyclopedia
# --------------------------------------------------------------------------------------------------------------

GLOSS_RULES_VERSION = "gloss-rules-v3"  # part of WordNetPages.name (and so of every cache key): bump when rules change
_DETERMINERS = {"a", "an", "the", "any", "one", "some", "each", "every", "either", "all", "two"}
_FINITE = ("VBZ", "VBP", "VBD", "MD")


def _article(word: str) -> str:
    from ..atoms.decompose import article

    return article(word)


def definition_sentences(title: str, definition: str) -> list[str]:
    """A WordNet noun gloss as encyclopedic sentences about `title` (one per ';'-separated part).

    Needs the POS tagger from the data mirror (so the examples are skipped as doctests; tests/test_factnli.py
    runs them with the mirror).

    >>> definition_sentences("street", "a thoroughfare (usually including sidewalks) that is lined with buildings")  # doctest: +SKIP
    ['A street is a thoroughfare that is lined with buildings.']
    >>> definition_sentences("dog", "a member of the genus Canis; occurs in many breeds")  # doctest: +SKIP
    ['A dog is a member of the genus Canis.', 'A dog occurs in many breeds.']
    >>> definition_sentences("water", "binary compound that occurs at room temperature as a clear liquid")  # doctest: +SKIP
    ['Water is a binary compound that occurs at room temperature as a clear liquid.']
    >>> definition_sentences("laborer", "someone who works with their hands")  # doctest: +SKIP
    ['A laborer is someone who works with their hands.']
    >>> definition_sentences("bird", "warm-blooded egg-laying vertebrates characterized by feathers")  # doctest: +SKIP
    ['Birds are warm-blooded egg-laying vertebrates characterized by feathers.']
    >>> definition_sentences("herb", "a plant lacking a woody stem; many are garden plants; some having odours")  # doctest: +SKIP
    ['A herb is a plant lacking a woody stem.', 'Many herbs are garden plants.']
    """
    out, subject, plural = [], None, False
    for k, part in enumerate(str(definition).split(";")):
        gloss = strip_parentheticals(part).strip(" ,.:")
        toks = WORD.findall(gloss)
        if len(toks) < 2:
            continue
        tags = [t for _, t in pos_tag(toks)]
        first = toks[0].lower()
        if k > 0 and subject is not None and first in _QUANTIFIERS:  # "many are ...", "some having ..."
            if toks[1].lower() in ("are", "have", "were", "had") or tags[1] in ("VBP", "VBD", "MD"):
                plural_subject = subject if plural else (_plural(title) if title[:1].islower() else "")
                if plural_subject:  # "Many herbs are flowering garden plants."; "others are ..." -> "Other herbs are ..."
                    quantifier = "other" if first == "others" else first
                    rest = " ".join(gloss.split()[1:])
                    out.append(finish(f"{quantifier} {plural_subject[:1].lower() + plural_subject[1:]} {rest}"))
            continue  # a quantified fragment without a finite verb ("some having ...") is no sentence
        if subject is None:  # the first part decides the subject's form: "A street" (count), "Water" or "Birds"
            bare_plural = first not in _DETERMINERS and _head_tag(toks, tags) == "NNS"
            counted = first in ("a", "an") or first in _PRONOMINAL
            if title[:1].isupper():
                subject = title
            elif bare_plural and not title.lower().endswith("s"):  # "bird: warm-blooded ... vertebrates"
                subject, plural = _plural(title), True
            elif counted:
                subject = f"{_article(title)} {title}"
            else:  # mass-noun style gloss: "water: binary compound that ..."
                subject = title
                plural = title.lower().endswith("s") and not title.lower().endswith(("ss", "us", "is")) and "NNS" in tags[:3]
            subject = subject[:1].upper() + subject[1:]
        if k > 0:  # later parts may be verb phrases about the subject: "occurs in many breeds"
            verb_tags = [t for _, t in pos_tag(["It", *toks])][1:]
            i = next((j for j, t in enumerate(verb_tags) if not t.startswith("RB")), 0)
            finite = tags[i] in ("VBZ", "VBP", "MD") or (verb_tags[i] == "VBZ" and toks[i].endswith("s"))
            if finite:  # "occurs in many breeds"; not "often worn over ..." (a participle)
                out.append(finish(f"{subject} {gloss}"))
                continue
        if first not in _DETERMINERS and first not in _PRONOMINAL and tags[0] in ("JJ", "NN", "JJR", "JJS", "CD") \
                and not plural:
            first_noun = next((t for t in tags if t.startswith("NN")), "NN")
            if first_noun == "NN":
                gloss = f"{_article(gloss)} {gloss}"
        out.append(finish(f"{subject} {'are' if plural else 'is'} {gloss}"))
    return out


_PRONOMINAL = {"someone", "somebody", "something", "anyone", "anybody", "anything", "one"}  # "someone who ..."
_QUANTIFIERS = {"many", "some", "most", "few", "several", "all", "both", "others"}  # "…; many are garden plants"
_CHUNK_END = {"IN", "WDT", "WP", "TO", "VBN", "VBD", "VBZ", "VBP", "MD"}


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


def example_sentence(example: str) -> str | None:
    """A WordNet usage example as a sentence, or None when it is a fragment (no finite verb)."""
    text = str(example).strip().strip("\"'“”‘’").strip()
    toks = WORD.findall(text)
    if len(toks) < 3 or not any(t in _FINITE for _, t in pos_tag(toks)):
        return None
    return finish(text)


class WordNetPages:
    """Offline page source: WordNet noun synsets found by lemma search, summaries from glosses and examples."""

    def __init__(self, wordnet=None, senses_per_term: int = 2, hypernyms: bool = True, max_terms: int = 8,
                 examples: bool = True):
        if wordnet is None:
            from ..data.loaders import load_wordnet

            wordnet = load_wordnet()
        self.wn = wordnet
        self.senses_per_term, self.hypernyms, self.max_terms, self.examples = senses_per_term, hypernyms, max_terms, examples
        self.name = (f"oewn-pages(senses={senses_per_term},hyper={int(hypernyms)},terms={max_terms},ex={int(examples)},"
                     f"{GLOSS_RULES_VERSION})")
        self._pages: dict[tuple[str, str], Page] = {}

    def page(self, synset_id: str, title: str) -> Page:
        key = (synset_id, title)
        if key not in self._pages:
            sentences = definition_sentences(title, self.wn.definition(synset_id))
            if self.examples:
                sentences += [s for s in map(example_sentence, self.wn.examples(synset_id)) if s]
            self._pages[key] = Page(f"oewn:{synset_id}", title, tuple(dict.fromkeys(sentences)))
        return self._pages[key]

    def senses(self, term: str) -> list[str]:
        """Noun synsets of `term`, most frequent first; a lower-case term skips proper-noun senses ('sun' vs 'Sun')."""
        ids = self.wn.synsets(term, "n")
        if term[:1].islower():
            exact = [i for i in ids if term in self.wn.lemmas(i) or term.replace(" ", "_") in self.wn.lemmas(i)]
            ids = exact or ids
        return ids

    def search(self, query: str, exclude: frozenset | set = frozenset()) -> list[Page]:
        """Pages of the first `max_terms` query nouns that still offer a sentence not in `exclude`
        (normalised sentences pooled at earlier levels), then their direct hypernyms' pages."""
        found: dict[str, Page] = {}
        above: list[tuple[str, str]] = []
        productive = 0
        for term in query_nouns(query, self.wn):
            if productive >= self.max_terms:
                break
            new = False
            for sid in self.senses(term)[: self.senses_per_term]:
                page = found.setdefault(sid, self.page(sid, term))
                new |= any(normalise(x) not in exclude for x in page.sentences)
                if self.hypernyms:
                    above += [(h, self.wn.lemmas(h)[0]) for h in self.wn.hypernyms(sid) if self.wn.lemmas(h)]
            productive += new
        for sid, title in above:  # direct hypernyms after all the query's own pages
            if sid not in found and sid in self.wn:
                found[sid] = self.page(sid, title)
        return [p for p in found.values() if any(normalise(x) not in exclude for x in p.sentences)]


# --------------------------------------------------------------------------------------------------------------
# Online: Wikipedia (MediaWiki API), every response cached
# --------------------------------------------------------------------------------------------------------------

class WikipediaPages:
    """Online page source: MediaWiki full-text search per query noun, then the intro extract of each page.

    `api_url` may point at any MediaWiki API (tests use a local stand-in on 127.0.0.1). Responses are cached
    by URL in the call cache (namespace "http"); `replay_only=True` never touches the network.
    """

    def __init__(self, api_url: str = FACTNLI_WIKIPEDIA_API, results_per_term: int = 1,
                 max_terms: int = 6, timeout_s: float = 20.0, cache: CallCache | None = None, wordnet=None,
                 replay_only: bool = False, user_agent: str = "nli-companion/0.1 (FactNLI replication; research)",
                 terms=None):
        self.terms_fn = terms  # query -> search terms; default: the query's nouns (query_nouns)
        self.api_url, self.results_per_term, self.max_terms = api_url, results_per_term, max_terms
        self.timeout_s, self.user_agent, self.replay_only = timeout_s, user_agent, replay_only
        self._cache, self._wordnet = cache, wordnet
        self.name = f"wikipedia({api_url},k={results_per_term},terms={max_terms})"

    @property
    def cache(self) -> CallCache:
        return self._cache or default_cache()

    def _get(self, params: dict) -> dict:
        url = self.api_url + "?" + urllib.parse.urlencode(sorted({**params, "format": "json"}.items()))
        key = {"url": url}
        hit = self.cache.get("http", key)
        if hit is not None:
            return hit
        if self.replay_only:
            from ..cache import ReplayMiss

            raise ReplayMiss(f"replay-only Wikipedia retrieval: {url} is not cached")
        req = urllib.request.Request(url, headers={"User-Agent": self.user_agent})
        with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:  # noqa: S310 - URL built from api_url
            data = json.loads(resp.read().decode("utf-8"))
        self.cache.put("http", key, data)
        return data

    def _terms(self, query: str) -> list[str]:
        if self.terms_fn is not None:
            return list(self.terms_fn(query))[: self.max_terms]
        if self._wordnet is None:
            from ..data.loaders import load_wordnet

            self._wordnet = load_wordnet()
        return query_nouns(query, self._wordnet, max_terms=self.max_terms)

    def search(self, query: str, exclude: frozenset | set = frozenset()) -> list[Page]:
        """Pages of the query's nouns (one search each, `max_terms` searches at most); pages whose sentences
        are all in `exclude` (pooled at earlier levels) are dropped after fetching."""
        titles: list[str] = []
        for term in self._terms(query):
            data = self._get({"action": "query", "list": "search", "srsearch": term,
                              "srlimit": self.results_per_term, "srnamespace": 0})
            titles += [hit["title"] for hit in data.get("query", {}).get("search", [])]
        titles = list(dict.fromkeys(titles))
        pages: list[Page] = []
        for start in range(0, len(titles), 20):  # prop=extracts with exintro serves up to 20 titles a request
            chunk = titles[start : start + 20]
            data = self._get({"action": "query", "prop": "extracts", "exintro": 1, "explaintext": 1,
                              "redirects": 1, "exlimit": "max", "titles": "|".join(chunk)})
            by_title = {p.get("title"): p.get("extract", "") for p in data.get("query", {}).get("pages", {}).values()}
            for r in data.get("query", {}).get("redirects", []) + data.get("query", {}).get("normalized", []):
                by_title.setdefault(r["from"], by_title.get(r["to"], ""))
            for title in chunk:
                extract = by_title.get(title, "")
                sentences = tuple(split_sentences(extract))
                if any(normalise(x) not in exclude for x in sentences):
                    pages.append(Page(f"wikipedia:{title}", title, sentences))
        return pages


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

    def retrieve_many(self, queries: Sequence[str], exclude: Sequence[set] | None = None) -> list[list[Snippet]]:
        """The pool for each query; `exclude[i]` holds normalised sentences already pooled at earlier levels."""
        exclude = exclude or [set() for _ in queries]
        candidates: list[list[tuple[str, Page]]] = []
        for query, skip in zip(queries, exclude):
            seen, rows = set(skip), []
            for page in self.pages.search(query, exclude=skip):
                for sentence in page.sentences:
                    key = normalise(sentence)
                    if key in seen or not (self.min_words <= words(sentence) <= self.max_words):
                        continue
                    seen.add(key)
                    rows.append((sentence, page))
            candidates.append(rows)
        texts = list(dict.fromkeys([*queries, *(s for rows in candidates for s, _ in rows)]))
        vectors = dict(zip(texts, self.encoder.encode(texts))) if texts else {}
        pools = []
        for query, rows in zip(queries, candidates):
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
