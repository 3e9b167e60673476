"""NLTK resources read straight from the nltk_data zips of the data mirror (no nltk.download).

    >>> load_stopwords() >= {"the", "a"}                                   # doctest: +SKIP
    True
    >>> load_pos_tagger().tag("A man is playing a guitar .".split())[:2]   # doctest: +SKIP
    [('A', 'DT'), ('man', 'NN')]

Both files come from `fetch()` (sha256-verified); the tagger's pickle is read with an unpickler that builds
builtin containers only, so nothing in it executes.
"""
from __future__ import annotations

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


def load_pos_tagger(*, path: str | Path | None = None) -> Any:
    """NLTK's averaged perceptron POS tagger (Penn tags) from the old-format pickle in the nltk_data zip.

    fetch() verifies the zip's sha256 before it is unpickled (and only builtin containers are accepted).
    The tagger is cached per process: `load_pos_tagger().tag('A man is playing a guitar .'.split())`.
    """
    path = fetch("nltk/averaged_perceptron_tagger") if path is None else Path(path)
    return _tagger_from(str(Path(path).resolve()))
