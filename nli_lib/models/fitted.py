"""Fitted scikit-learn pair classifiers stored on disk in a format that cannot run code (skops, never pickle).

    >>> clf = fit_cached(lambda: TfidfPairClassifier("logreg", C=0.5), train_df, name="tfidf-logreg")  # doctest: +SKIP

The file is `$NLI_CACHE_DIR/models/<name>-<key>.skops`; `key` hashes the class, its `settings()` (C, seed, ...),
`version` (bump it when the feature code changes) and the training rows. It holds only the classifier's
`fitted_parts()` (vectorizers, scalers, estimators), read back with `skops.io.load` and an explicit list of
trusted types: anything else in the file (a planted object, a reference to `os.system`) is refused before it is
built, the file is reported with a warning and the classifier is fitted again. Nothing in the cache directory
is ever unpickled: files from older versions (`*.pkl`) are left alone and reported once.

Trade-off: skops files are ~1.2x the size of a pickle and load in about the same time (tens of ms here); the
price of not executing a stranger's cache.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from .. import filecache
from ..hashing import stable_json, text_hash
from ..phases import phase

SUFFIX = ".skops"
# Types a stored classifier may hold beyond skops' own defaults (scikit-learn estimators, numpy, scipy):
# the named tokenizer functions of our vectorizers and the fitted pieces of a calibrated SVM. Nothing else loads.
TRUSTED_TYPES = [
    "nli_lib.text.bow_tokens",
    "nli_lib.models.baselines.tokens",  # the same function, as files fitted before it moved name it
    "nli_lib.models.baselines.split_spaces",
    "sklearn.calibration._CalibratedClassifier",
    "sklearn.calibration._SigmoidCalibration",
]


def fit_key(clf, train: pd.DataFrame, version: str = "") -> str:
    """Hash of everything that determines a fitted classifier: class, settings(), version, training rows."""
    rows = ("\t".join(map(str, r)) for r in zip(train["premise"], train["hypothesis"], train["label"]))
    return text_hash(type(clf).__name__, stable_json(clf.settings()), version, *rows)


def _report_old_pickles(folder: Path, name: str) -> None:
    old = sorted(folder.glob(f"{name}-*.pkl"))
    if old:
        warnings.warn(f"{len(old)} pickled model file(s) in {folder} ({old[0].name}, ...) are ignored: nothing in "
                      f"the cache is unpickled. Delete them to silence this warning.", RuntimeWarning, stacklevel=3)


def load_parts(path: Path) -> dict:
    """The fitted parts stored in `path` (skops with TRUSTED_TYPES only); raises on anything else."""
    import skops.io as sio

    parts = sio.load(path, trusted=TRUSTED_TYPES)
    if not isinstance(parts, dict):
        raise TypeError(f"expected a dict of fitted parts, found {type(parts).__name__}")
    return parts


def _dump_parts(path: Path, parts: dict) -> None:
    import skops.io as sio

    sio.dump(parts, path)


SKOPS = filecache.FileFormat(SUFFIX, _dump_parts, lambda path: load_parts(path))  # fitted parts, trusted types only


def plain_vocabularies(parts: dict) -> dict:
    """`parts` with every vectorizer's `vocabulary_` as {term: Python int}, in place; returns `parts`.

    A vectorizer with `max_features` maps terms to numpy int64 indices, and skops writes each numpy scalar as a
    file of its own inside the zip (checking the zip's name list each time): our 3 x 20,000-term TF-IDF models
    took ~40 s each to store (45 MB); with plain ints 1 s (30 MB). Same mapping, same predictions.

    >>> from sklearn.feature_extraction.text import CountVectorizer
    >>> vec = CountVectorizer(max_features=10).fit(["a cat sat", "a dog sat"])
    >>> type(vec.vocabulary_["cat"]).__name__, type(plain_vocabularies({"vec": vec})["vec"].vocabulary_["cat"]).__name__
    ('int64', 'int')
    """
    for part in parts.values():
        vocabulary = getattr(part, "vocabulary_", None)
        if isinstance(vocabulary, dict):
            part.vocabulary_ = {term: int(index) for term, index in vocabulary.items()}
    return parts


def save_parts(path: Path, parts: dict) -> None:
    """Store fitted parts atomically (a partial file never has the final name), vocabularies as plain ints."""
    filecache.write(path, plain_vocabularies(parts), SKOPS)


def _check_restored(clf, train: pd.DataFrame) -> None:
    """A restored classifier must answer like a fitted one: finite probabilities over its labels."""
    import numpy as np

    head = train.head(3)
    probs = np.asarray(clf._predict(head["premise"].astype(str).tolist(),
                                                   head["hypothesis"].astype(str).tolist()), dtype=float)
    if probs.shape != (len(head), len(clf.labels)) or not np.isfinite(probs).all():
        raise ValueError(f"restored classifier answers with shape {probs.shape} or non-finite values")


def fit_cached(make, train: pd.DataFrame, name: str, version: str = ""):
    """Fit a scikit-learn pair classifier once per (settings, version, training data); later calls load it.

    `make()` returns an unfitted classifier with `settings()`, `fitted_parts()` and `restore_parts()`
    (`nli_lib.models.baselines.SklearnPairClassifier`). A stored fit is read only when a prediction is not in
    the call cache (a warm run reads nothing, and does not import skops). A stored file that cannot be
    read, holds an untrusted type or does not fit the classifier is reported (RuntimeWarning naming it) and
    replaced by a fresh fit.

    The data files the fit read (WordNet for the PhrasIS features, say) are recorded beside the stored fit
    (`<file>.uses.json`, as `filecache.cached_derived` does) and noted again when it is reused, so the outputs of a
    warm run list the same data as a cold one. A stored fit without that record is fitted again.
    """
    from .. import provenance

    clf = make()
    path = filecache.cache_path("models", f"{name}-{fit_key(clf, train, version)}", SKOPS)
    uses_path = path.with_name(path.name + filecache.USES_SUFFIX)
    _report_old_pickles(path.parent, name)
    uses = filecache.read(uses_path, filecache.JSON, filecache.uses_problem, f"{name} (its record of the data used)") \
        if path.is_file() else None
    if uses is None:
        with phase("training"), provenance.recording() as used:
            clf.fit(train)
        save_parts(path, clf.fitted_parts())
        filecache.write(uses_path, used, filecache.JSON)
        return clf
    provenance.replay(uses)

    @phase("loading")
    def restore(target) -> None:
        def fits(parts: dict) -> None:  # raises when the parts do not make a working classifier
            target.restore_parts(parts)
            _check_restored(target, train)

        if filecache.read(path, SKOPS, validate=fits, what="cached model", redo="fitting it again") is None:
            target.fit(train)  # damaged or untrusted: refit rather than crash or reuse
            save_parts(path, target.fitted_parts())

    clf.set_fingerprint(train)
    clf._restore = restore
    return clf
