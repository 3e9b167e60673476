"""§3.2 online page source: Wikipedia through the MediaWiki API, level by level on new pages.

The paper queries Wikipedia with the previous premise p(t-1) at every level. p(t-1) is p(t-2) plus the facts
fused at level t-1, so what a level can find that the previous one could not comes from those facts (Appendix
G: the L1 facts name Carnaby Street and Soho, the L2 facts are about London and 1960s fashion). So the search
terms of a level are the terms of the text added at the previous level (level 1: of the premise itself), and
a page that gave snippets at an earlier level is never used again: the search asks for `search_depth` hits per
term and takes the first `results_per_term` unused ones. (Searching p(t-1)'s own first nouns again, as this
module did before, repeats level 1's pages, whose sentences are all pooled: L=3 then adds no facts.)

Terms: proper-name runs first ("Carnaby Street", "City of Westminster", the pages a fact is about), then the
text's WordNet nouns (`text.query_nouns`), `max_terms` at most.

Requests: every response is cached by URL in the call cache (namespace "http"), so a re-run or a replay needs
no network. HTTP 429, 5xx, timeouts and dropped connections are retried with exponential backoff (a server's
Retry-After is honoured up to `retry_max_s`); other errors, or retries exhausted, raise `RetrievalError`.
Each request is counted in the call ledger (`nli_lib.calls`, kind "retrieval"), so failures show in the
notebook's call summary and count against `max_failure_rate`. Wikimedia's User-Agent policy asks every
client for contact information: `user_agent` (profile key `paper_models.factnli.user_agent`) must hold a URL
or an e-mail address for any API host but a local one.

>>> wiki = WikipediaPages("http://127.0.0.1:9/w/api.php", cache=CallCache(":memory:"), terms=str.split)
>>> wiki.terms_for("A woman walks", new_text="Soho is in London")
['Soho', 'is', 'in', 'London']
"""
from __future__ import annotations

import json
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Callable

from .. import calls
from ..cache import CallCache, ReplayMiss, default_cache
from ..text import WORD, normalise
from .paper import LOCAL_HOSTS, WIKIPEDIA_API, has_contact
from .retrieval import Page, RetrievalError
from .text import pos_tag, query_nouns, split_sentences

SEARCH_VERSION = "new-facts-v1"  # what a level searches with (part of `name`, so of every level's cache key)
RETRYABLE_STATUS = (429, 500, 502, 503, 504)
_NAME_JOINERS = {"of", "de", "the", "and", "upon", "on"}  # inside a name: "City of Westminster"


def proper_names(text: str) -> list[str]:
    """Runs of capitalised proper nouns (NNP/NNPS; "of"/"the" may join two), in order, de-duplicated.

    Needs the POS tagger from the data mirror (tests/test_factnli.py runs the example with the mirror).

    >>> proper_names("Carnaby Street is a shopping street in Soho, City of Westminster.")  # doctest: +SKIP
    ['Carnaby Street', 'Soho', 'City of Westminster']
    """
    toks = WORD.findall(str(text))
    tagged = pos_tag(toks)
    out, run = [], []
    for i, (word, tag) in enumerate(tagged):
        if tag in ("NNP", "NNPS") and word[:1].isupper():
            run.append(word)
            continue
        nxt = tagged[i + 1] if i + 1 < len(tagged) else ("", "")
        if run and word.lower() in _NAME_JOINERS and nxt[1] in ("NNP", "NNPS") and nxt[0][:1].isupper():
            run.append(word)
            continue
        if run:
            out.append(" ".join(run))
        run = []
    if run:
        out.append(" ".join(run))
    return list(dict.fromkeys(out))


class WikipediaPages:
    """Online page source: MediaWiki full-text search per term, then the intro extract of each new page.

    `api_url` may point at any MediaWiki API (tests use a local stand-in on 127.0.0.1). `replay_only=True`
    never touches the network. `terms` (text -> search terms) replaces the default proper names + nouns.
    `sleep` is the backoff's wait (tests pass a recorder).
    """

    def __init__(self, api_url: str = WIKIPEDIA_API, results_per_term: int = 1, max_terms: int = 6,
                 timeout_s: float = 20.0, cache: CallCache | None = None, wordnet=None, replay_only: bool = False,
                 user_agent: str | None = None, terms: Callable[[str], list[str]] | None = None,
                 search_depth: int = 5, max_retries: int = 5, retry_base_s: float = 1.0,
                 retry_max_s: float = 60.0, sleep: Callable[[float], None] = time.sleep):
        host = urllib.parse.urlparse(api_url).hostname or ""
        if not replay_only and host not in LOCAL_HOSTS and not has_contact(user_agent or ""):
            raise ValueError(
                f"Wikipedia retrieval from {api_url} needs a User-Agent with contact information (Wikimedia's "
                f"User-Agent policy), got {user_agent!r}. Fix: set paper_models.factnli.user_agent in the profile, "
                f"e.g. 'nli-companion/0.1 (https://example.org/you; you@example.org)', or set "
                f"paper_models.factnli.retrieval: wordnet (offline pages)")
        if search_depth < results_per_term:
            raise ValueError("search_depth must be >= results_per_term")
        self.terms_fn = terms
        self.api_url, self.results_per_term, self.max_terms = api_url, results_per_term, max_terms
        self.search_depth, self.timeout_s, self.replay_only = search_depth, timeout_s, replay_only
        self.user_agent = user_agent or "nli-companion/0.1 (FactNLI replication)"
        self.max_retries, self.retry_base_s, self.retry_max_s, self.sleep = (max_retries, retry_base_s,
                                                                             retry_max_s, sleep)
        self._cache, self._wordnet = cache, wordnet
        self.name = (f"wikipedia({api_url},k={results_per_term},depth={search_depth},terms={max_terms},"
                     f"{SEARCH_VERSION})")
        self.source = f"wikipedia @ {api_url}"  # its row in the call ledger

    @property
    def cache(self) -> CallCache:
        return self._cache or default_cache()

    # -- requests ----------------------------------------------------------------------------------------------
    def _backoff(self, attempt: int, retry_after: str | None) -> float:
        delay = min(self.retry_max_s, self.retry_base_s * 2 ** (attempt - 1)) + random.uniform(0, self.retry_base_s)
        try:  # honour a server's Retry-After when it is short
            delay = max(delay, min(float(retry_after), self.retry_max_s))
        except (TypeError, ValueError):
            pass
        return delay

    def _get(self, params: dict) -> dict:
        """The JSON answer for `params`: from the cache, else over HTTP with retries (RetrievalError when failed)."""
        url = self.api_url + "?" + urllib.parse.urlencode(sorted({**params, "format": "json"}.items()))
        key = {"url": url}
        hit = self.cache.get("http", key)
        if hit is not None:
            calls.count("retrieval", self.source, requests=1, cache_hits=1)
            return hit
        if self.replay_only:
            raise ReplayMiss(f"replay-only Wikipedia retrieval: {url} is not cached")
        calls.count("retrieval", self.source, requests=1)
        req = urllib.request.Request(url, headers={"User-Agent": self.user_agent})
        attempt = 0
        while True:
            calls.count("retrieval", self.source, calls=1)
            retry_after, problem = None, None
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:  # noqa: S310 - URL from api_url
                    data = json.loads(resp.read().decode("utf-8"))
                break
            except urllib.error.HTTPError as exc:
                problem = f"HTTP {exc.code}"
                if exc.code not in RETRYABLE_STATUS:
                    return self._fail(url, problem, attempt)
                retry_after = exc.headers.get("Retry-After") if exc.headers else None
            except (urllib.error.URLError, socket.timeout, TimeoutError, ConnectionError) as exc:
                problem = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
            except json.JSONDecodeError as exc:
                return self._fail(url, f"not JSON ({exc})", attempt)
            if attempt >= self.max_retries:
                return self._fail(url, problem, attempt)
            attempt += 1
            calls.count("retrieval", self.source, retries=1)
            self.sleep(self._backoff(attempt, retry_after))
        if "error" in data:
            return self._fail(url, f"API error {data['error']}", attempt)
        self.cache.put("http", key, data)
        return data

    def _fail(self, url: str, problem: str, attempt: int):
        calls.count("retrieval", self.source, errors=1)
        tries = f" after {attempt + 1} attempts" if attempt else ""
        raise RetrievalError(f"{self.source}: {problem}{tries} ({url})")

    # -- search ------------------------------------------------------------------------------------------------
    def terms_for(self, query: str, new_text: str | None = None) -> list[str]:
        """The search terms of one level: those of `new_text` (what the previous level added to the query),
        or of the whole query at level 1 or when the previous level added nothing."""
        text = new_text if new_text and new_text.strip() else query
        if self.terms_fn is not None:
            return list(self.terms_fn(text))[: self.max_terms]
        if self._wordnet is None:
            from ..data.wordnet import load_wordnet

            self._wordnet = load_wordnet()
        terms = [*proper_names(text), *query_nouns(text, self._wordnet)]
        return list(dict.fromkeys(terms))[: self.max_terms]

    def search(self, query: str, exclude: frozenset | set = frozenset(), new_text: str | None = None,
               used: frozenset | set = frozenset()) -> list[Page]:
        """New pages for one level: per term (`terms_for`), the first `results_per_term` search hits that are
        not in `used` (page sources that gave snippets at earlier levels) nor found for an earlier term; pages
        whose sentences are all in `exclude` (normalised sentences pooled earlier) are dropped after fetching.
        Raises RetrievalError when a request fails for good."""
        titles: list[str] = []
        for term in self.terms_for(query, new_text):
            data = self._get({"action": "query", "list": "search", "srsearch": term,
                              "srlimit": self.search_depth, "srnamespace": 0})
            hits = [hit["title"] for hit in data.get("query", {}).get("search", [])]
            fresh = [t for t in hits if f"wikipedia:{t}" not in used and t not in titles]
            titles += fresh[: self.results_per_term]
        pages: list[Page] = []
        for start in range(0, len(titles), 20):  # prop=extracts with exintro serves up to 20 titles a request
            chunk = titles[start : start + 20]
            data = self._get({"action": "query", "prop": "extracts", "exintro": 1, "explaintext": 1,
                              "redirects": 1, "exlimit": "max", "titles": "|".join(chunk)})
            found = data.get("query", {})
            by_title = {p.get("title"): p.get("extract", "") for p in found.get("pages", {}).values()}
            for r in found.get("redirects", []) + found.get("normalized", []):
                by_title.setdefault(r["from"], by_title.get(r["to"], ""))
            for title in chunk:
                sentences = tuple(split_sentences(by_title.get(title, "")))
                if any(normalise(x) not in exclude for x in sentences):
                    pages.append(Page(f"wikipedia:{title}", title, sentences))
        return pages
