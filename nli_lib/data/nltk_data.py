"""NLTK resources read straight from the nltk_data zips of the data mirror (no nltk.download).

    >>> load_stopwords() >= {"the", "a"}                                   # doctest: +SKIP
    True
    >>> load_pos_tagger().tag("A man is playing a guitar .".split())[:2]   # doctest: +SKIP
    [('A', 'DT'), ('man', 'NN')]

Both files come from `fetch()` (sha256-verified); the tagger's pickle is read with an unpickler that builds
builtin containers only, so nothing in it executes. The tagger's answers are kept in the call cache
(`PosTagger`): a run that tags only sentences earlier runs tagged never reads the model nor imports nltk.
"""
from __future__ import annotations

import atexit
import functools
import io
import pickle
import zipfile
from pathlib import Path
from typing import Any

from .fetch import DataError, fetch


def load_stopwords(lang: str = "english", *, path: str | Path | None = None) -> frozenset[str]:
    """NLTK's stop-word list for `lang` (179 English words), read from stopwords.zip."""
    path = fetch("nltk/stopwords") if path is None else Path(path)
    with zipfile.ZipFile(path) as zf:
        names = {Path(n).name: n for n in zf.namelist() if not n.endswith("/") and Path(n).name != "README"}
        if lang not in names:
            raise ValueError(f"no stop-word list {lang!r} in {path}; available: {sorted(names)}")
        text = zf.read(names[lang]).decode("utf-8")
    return frozenset(w.strip() for w in text.split("\n") if w.strip())


class _PlainDataUnpickler(pickle.Unpickler):
    """Unpickles only builtin containers: the tagger pickle holds dicts, sets, strings and floats."""

    def find_class(self, module: str, name: str) -> Any:
        if module in ("builtins", "__builtin__") and name in ("set", "frozenset"):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a tagger pickle")


@functools.lru_cache(maxsize=4)
def _tagger_from(path: str) -> Any:
    from nltk.tag.perceptron import PerceptronTagger

    with zipfile.ZipFile(path) as zf:
        member = next((n for n in zf.namelist() if n.endswith(".pickle")), None)
        if member is None:
            raise DataError(f"{path} holds no .pickle tagger model")
        weights, tagdict, classes = _PlainDataUnpickler(io.BytesIO(zf.read(member))).load()
    tagger = PerceptronTagger(load=False)
    tagger.model.weights, tagger.tagdict, tagger.classes, tagger.model.classes = weights, tagdict, classes, classes
    return tagger


TAG_NAMESPACE = "pos_tags"  # the call cache's table of tagger answers


class PosTagger:
    """NLTK's averaged perceptron POS tagger (Penn tags) with its answers kept in the call cache: `tag(words)`
    answers from memory, else from the cache (namespace 'pos_tags', key: the model file's sha256, nltk's version
    and the words), else from the model itself. The model is unpickled (and nltk imported, ~1 s) only for a
    sentence no earlier run tagged; new answers are stored by `flush` (at notebook finish and process exit).

    >>> tagger = PosTagger("/no/such/tagger.zip", "sha-of-the-model")
    >>> tagger._memo["A\x1fdog"] = ["DT", "NN"]       # as if read from the cache
    >>> tagger.tag(["A", "dog"]), tagger.model_loaded
    ([('A', 'DT'), ('dog', 'NN')], False)
    """

    def __init__(self, path: str | Path, sha256: str):
        self.path, self.sha256 = str(path), sha256
        self._memo: dict[str, list[str]] = {}  # words joined by \x1f -> tags
        self._new: dict[str, list[str]] = {}  # answers of the model not yet stored
        self._model = None
        self._stored = None  # (cache, {key hash: value JSON}): the cache's answers, read at the first miss

    @property
    def model_loaded(self) -> bool:
        return self._model is not None

    def _key(self, words: list[str]) -> dict:
        return {"model": self.sha256, "nltk": _nltk_version(), "words": words}

    def tag(self, words) -> list[tuple[str, str]]:
        """[(word, Penn tag)] for a tokenized sentence, as `nltk.tag.perceptron.PerceptronTagger.tag`."""
        words = [str(w) for w in words]
        joined = "\x1f".join(words)
        tags = self._memo.get(joined)
        if tags is None:
            from ..cache import default_cache

            cache = default_cache()
            if self._stored is None or self._stored[0] is not cache:  # one query, then lookups in memory
                self._stored = (cache, cache.all_values(TAG_NAMESPACE))
            tags = cache.lookup(TAG_NAMESPACE, self._stored[1], self._key(words), validate=_tags_check(len(words)))
            if tags is None:
                if self._model is None:
                    self._model = _tagger_from(self.path)
                    atexit.register(self.flush)
                tags = [t for _, t in self._model.tag(words)]
                self._new[joined] = tags
            self._memo[joined] = tags
        return list(zip(words, tags))

    def flush(self) -> int:
        """Store the model's new answers in the call cache; returns how many."""
        if not self._new:
            return 0
        from ..cache import default_cache

        items = [(self._key(joined.split("\x1f") if joined else []), tags) for joined, tags in self._new.items()]
        default_cache().put_many(TAG_NAMESPACE, items)
        self._new.clear()
        return len(items)


@functools.lru_cache(maxsize=1)
def _nltk_version() -> str:
    from importlib.metadata import version

    return version("nltk")


def _tags_check(n: int):
    def check(value) -> str | None:
        ok = isinstance(value, list) and len(value) == n and all(isinstance(t, str) for t in value)
        return None if ok else f"not {n} tags"

    return check


_TAGGERS: list[PosTagger] = []  # every tagger of this process (`flush_pos_tags`)


@functools.lru_cache(maxsize=4)
def _pos_tagger(path: str, sha256: str) -> PosTagger:
    _TAGGERS.append(PosTagger(path, sha256))
    return _TAGGERS[-1]


def load_pos_tagger(*, path: str | Path | None = None) -> PosTagger:
    """NLTK's averaged perceptron POS tagger (`PosTagger`), from the old-format pickle in the nltk_data zip.

    fetch() verifies the zip's sha256 before it is unpickled (and only builtin containers are accepted); a zip
    given by `path` is named by its own sha256. One tagger per process:
    `load_pos_tagger().tag('A man is playing a guitar .'.split())`.
    """
    if path is None:
        from .fetch import load_manifest

        return _pos_tagger(str(Path(fetch("nltk/averaged_perceptron_tagger")).resolve()),
                           load_manifest()["nltk/averaged_perceptron_tagger"].sha256)
    from ..filehash import sha256_file

    return _pos_tagger(str(Path(path).resolve()), sha256_file(path))


def flush_pos_tags() -> int:
    """Store every process tagger's new answers in the call cache (`PosTagger.flush`); returns how many."""
    return sum(t.flush() for t in _TAGGERS)
