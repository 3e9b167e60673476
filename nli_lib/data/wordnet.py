"""Open English WordNet: a small read-only `WordNet` over its YAML sources, parsed once and cached as JSON.

    >>> wn = load_wordnet()                                   # doctest: +SKIP
    >>> wn.is_hypernym("animal", "dog"), sorted(wn.antonyms("black"))[:1]   # doctest: +SKIP
    (True, ['white'])
"""
from __future__ import annotations

import contextlib
import gc
import json
import logging
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from .. import filecache
from ..hashing import json_hash
from .fetch import DataError, fetch, load_manifest, sha256_file

_log = logging.getLogger(__name__)


_WORDNET_FORMAT = 1  # bump when the cached parsed form changes


def _lemma_key(word: str) -> str:
    return word.strip().lower().replace("_", " ")


@dataclass(frozen=True)
class Synset:
    id: str  # e.g. '02086723-n'; the last letter is the part of speech (n, v, a, s = satellite adjective, r)
    pos: str
    definition: str
    examples: tuple[str, ...]
    hypernyms: tuple[str, ...]
    lemmas: tuple[str, ...]


class WordNet:
    """A small read-only WordNet over the Open English WordNet YAML sources.

    Synset ids look like '02086723-n'. Lemma lookup is case-insensitive and treats '_' as a space. Hypernyms
    include instance hypernyms where the source has them. Build it with `load_wordnet()`.
    """

    def __init__(self, synsets: dict[str, list], index: dict[str, list[str]], antonyms: dict[str, list[str]],
                 sources: Sequence[str] = ()):
        self._synsets = synsets  # id -> [pos, definition, examples, hypernyms, members]
        self._index = index  # lemma key -> synset ids, most frequent sense first
        self._antonyms = antonyms  # lemma key -> antonym lemmas
        self.sources = list(sources)

    def __len__(self) -> int:
        return len(self._synsets)

    def __contains__(self, synset_id: str) -> bool:
        return synset_id in self._synsets

    def _get(self, synset_id: str) -> list:
        try:
            return self._synsets[synset_id]
        except KeyError:
            raise KeyError(f"unknown synset id {synset_id!r}") from None

    def synset(self, synset_id: str) -> Synset:
        pos, definition, examples, hypernyms, members = self._get(synset_id)
        return Synset(synset_id, pos, definition, tuple(examples), tuple(hypernyms), tuple(members))

    def synsets(self, lemma: str, pos: str | None = None) -> list[str]:
        """Synset ids of `lemma`; pos in n, v, a (including satellites s), s, r."""
        ids = self._index.get(_lemma_key(lemma), [])
        if pos is None:
            return list(ids)
        wanted = {"a", "s"} if pos == "a" else {pos}
        return [i for i in ids if self._synsets[i][0] in wanted]

    def hypernyms(self, synset_id: str) -> list[str]:
        return list(self._get(synset_id)[3])

    def hypernym_closure(self, synset_id: str, depth: int | None = None) -> set[str]:
        """All synsets above `synset_id` (excluding itself), at most `depth` levels up."""
        self._get(synset_id)  # unknown ids raise KeyError, as in the other lookups
        seen, frontier = set(), deque([(synset_id, 0)])
        while frontier:
            current, level = frontier.popleft()
            if depth is not None and level >= depth:
                continue
            for parent in self._synsets.get(current, [None, None, None, ()])[3]:
                if parent not in seen:
                    seen.add(parent)
                    frontier.append((parent, level + 1))
        return seen

    def lemmas(self, synset_id: str) -> list[str]:
        return list(self._get(synset_id)[4])

    def definition(self, synset_id: str) -> str:
        return self._get(synset_id)[1]

    def examples(self, synset_id: str) -> list[str]:
        return list(self._get(synset_id)[2])

    def synonyms(self, word: str, pos: str | None = None) -> set[str]:
        """Lemmas sharing a synset with `word`, other than `word` itself."""
        key = _lemma_key(word)
        return {m for i in self.synsets(word, pos) for m in self._synsets[i][4] if _lemma_key(m) != key}

    def antonyms(self, word: str) -> set[str]:
        """Lemmas linked to a sense of `word` by an antonym relation."""
        return set(self._antonyms.get(_lemma_key(word), []))

    def is_hypernym(self, word_a: str, word_b: str, pos: str | None = None) -> bool:
        """True when some sense of word_a lies above some sense of word_b ('animal' is a hypernym of 'dog')."""
        above = {h for s in self.synsets(word_b, pos) for h in self.hypernym_closure(s)}
        return any(s in above for s in self.synsets(word_a, pos))


def _parse_synsets(data: dict, into: dict[str, list]) -> None:
    for synset_id, s in (data or {}).items():
        examples = [e["text"] if isinstance(e, dict) else e for e in s.get("example", [])]
        hypernyms = [*s.get("hypernym", []), *s.get("instance_hypernym", [])]
        pos = s.get("partOfSpeech") or synset_id[-1]
        definition = "; ".join(str(d) for d in s.get("definition", []))
        members = [str(m) for m in s.get("members", [])]
        into[synset_id] = [pos, definition, [str(e) for e in examples], hypernyms, members]


def _parse_entries(data: dict, index: dict[str, list[str]], sense_lemma: dict[str, str],
                   antonym_senses: dict[str, list[str]]) -> None:
    for lemma, by_pos in (data or {}).items():
        lemma = str(lemma)  # YAML turns some lemmas ('1', 'true') into numbers/bools
        ids = index.setdefault(_lemma_key(lemma), [])
        for entry in by_pos.values():
            for sense in entry.get("sense", []):
                if sense["synset"] not in ids:
                    ids.append(sense["synset"])
                sense_lemma[sense["id"]] = lemma
                if sense.get("antonym"):
                    antonym_senses.setdefault(_lemma_key(lemma), []).extend(sense["antonym"])


def _parse_wordnet(files: Sequence[Path]) -> dict:
    """The synsets, lemma index and antonyms of OEWN's YAML `files`. Even with libyaml, PyYAML builds its ~4
    million objects in Python, and the cyclic garbage collector would rescan them again and again: with the
    collector paused the 73 files parse in ~15 s instead of ~55 s here (same result, same peak memory)."""
    import yaml

    synsets, index, sense_lemma, antonym_senses = {}, {}, {}, {}
    for path in files:
        with open(path, encoding="utf-8") as fh, _gc_paused():
            data = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        if path.name.startswith("entries-"):
            _parse_entries(data, index, sense_lemma, antonym_senses)
        else:
            _parse_synsets(data, synsets)
    antonyms = {k: sorted({sense_lemma[s] for s in senses if s in sense_lemma}) for k, senses in antonym_senses.items()}
    return {"format": _WORDNET_FORMAT, "synsets": synsets, "index": index, "antonyms": antonyms}


def _wordnet_file(path: Path) -> bool:
    """Synset (noun./verb./adj./adv.) and entries-* YAML files; not frames.yaml."""
    return path.name.startswith(("noun.", "verb.", "adj.", "adv.", "entries-"))


_WORDNETS: dict[str, WordNet] = {}


def load_wordnet(*, paths: Sequence[str | Path] | None = None) -> WordNet:
    """Open English WordNet from its YAML sources (the manifest's oewn/* files, or `paths`).

    Parsing all YAML takes tens of seconds, so the parsed form is cached as JSON under
    cache_dir('wordnet'), keyed by the files' sha256s; later loads read the cache, and the WordNet object is
    also kept in-process.
    """
    if paths is None:
        keys = [k for k in load_manifest() if k.startswith("oewn/") and k != "oewn/frames"]
        files, sources = [fetch(k) for k in keys], keys
    else:
        files = [Path(p) for p in paths]
        sources = [str(p) for p in files]
    files = [f for f in files if _wordnet_file(f)]
    if not files:
        raise DataError("no Open English WordNet YAML files (noun.*, verb.*, adj.*, adv.*, entries-*) given")
    digest = json_hash([_WORDNET_FORMAT, sorted((f.name, sha256_file(f)) for f in files)])
    if digest not in _WORDNETS:
        _WORDNETS[digest] = WordNet(**_cached_parse(files, digest), sources=sources)
    return _WORDNETS[digest]


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _load_parsed(path: Path) -> dict:
    with _gc_paused():  # the collector would rescan the growing containers many times (2-3x slower)
        return json.loads(path.read_text(encoding="utf-8"))


_PARSED_WORDNET = filecache.FileFormat(".json", filecache.JSON.save, _load_parsed)
_WORDNET_PARTS = ("synsets", "index", "antonyms")


def _parsed_problem(data) -> str | None:
    if not isinstance(data, dict) or data.get("format") != _WORDNET_FORMAT:
        return f"not the parsed form of format {_WORDNET_FORMAT}"
    missing = [k for k in _WORDNET_PARTS if not isinstance(data.get(k), dict)]
    return f"missing {missing}" if missing else None


def _cached_parse(files: Sequence[Path], digest: str) -> dict:
    path = filecache.cache_path("wordnet", f"oewn-{digest[:24]}", _PARSED_WORDNET)

    def parse() -> dict:
        start = time.perf_counter()
        data = _parse_wordnet(files)
        _log.info("parsed %d WordNet YAML files in %.0f s; cached in %s", len(files), time.perf_counter() - start,
                  path)
        return data

    data = filecache.cached(path, _PARSED_WORDNET, parse, validate=_parsed_problem, what="WordNet cache")
    return {k: data[k] for k in _WORDNET_PARTS}
