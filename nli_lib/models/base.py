"""The one protocol every classifier in the companion follows, with the call cache built in.

A classifier maps (premise, hypothesis) pairs to an (n, k) probability array whose columns follow
`self.labels` (for NLI always ("entailment", "neutral", "contradiction")). Subclasses implement
`_predict_proba_uncached`; `predict_proba` looks every pair up in the on-disk call cache first, so a
re-run makes no model calls and an interrupted run resumes. A cached row that is not a probability vector over
`labels` (wrong length, NaN, not summing to 1) is reported with a warning and recomputed, never used.

>>> import numpy as np
>>> class Always(Classifier):
...     labels, name, tier = ("entailment", "neutral", "contradiction"), "always-neutral", "offline"
...     def _predict_proba_uncached(self, p, h): return np.tile([0.1, 0.8, 0.1], (len(p), 1))
>>> Always(cache=CallCache(":memory:")).predict(["A man sleeps."], ["A person sleeps."])
['neutral']

A row of NaN probabilities is a pair the model could not answer (a failed LLM call, an unparsable answer):
its predicted label is None, never a guess, and `predict_frame` marks it wrong (`answered` False).
Every `predict_proba` is counted in the call ledger (`nli_lib.calls`): pairs asked, cache hits, pairs computed.
"""
from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from typing import Sequence

import numpy as np
import pandas as pd

from .. import calls
from ..cache import CallCache, default_cache, probability_check
from ..config import LABELS
from ..hashing import text_hash  # noqa: F401  (re-exported: the model layer's fingerprints use it)
from ..phases import phase

CACHE_NAMESPACE = "classifier"
CHUNK = 2048  # pairs per cache round-trip: bounds memory and loses at most one chunk on interruption


def has_attributes(obj, *names: str) -> bool:
    """Whether `obj` has every attribute in `names`, asked without evaluating any: `HFClassifier.model` and
    `.tokenizer` are lazy properties, and `hasattr` on them would load transformers and the weights in a run
    whose answers are all cached.

    >>> class Lazy:
    ...     loads, max_length = 0, 128
    ...     @property
    ...     def tokenizer(self):
    ...         Lazy.loads += 1
    >>> has_attributes(Lazy(), "tokenizer", "max_length"), Lazy.loads, has_attributes("tfidf", "tokenizer")
    (True, 0, False)
    """
    missing = object()
    return all(inspect.getattr_static(obj, name, missing) is not missing for name in names)


def labels_of(probs: np.ndarray, labels: Sequence[str]) -> list[str | None]:
    """The most probable label of each row; None for a row with NaN (the model gave no answer).

    >>> labels_of(np.array([[0.2, 0.8], [np.nan, np.nan]]), ("yes", "no"))
    ['no', None]
    """
    probs = np.asarray(probs, dtype=float)
    if probs.size == 0:
        return []
    unanswered = np.isnan(probs).any(axis=1)
    best = np.nan_to_num(probs, nan=-1.0).argmax(axis=1)
    return [None if gap else labels[i] for i, gap in zip(best, unanswered)]


class Classifier(ABC):
    """Pair classifier with cached `predict_proba`, `predict` and `predict_frame`."""

    labels: tuple[str, ...] = LABELS  # column order of the probability array
    name: str = "classifier"  # human-readable model id, printed beside every number it produces
    tier: str = "offline"  # 'offline' or 'paper'

    def __init__(self, cache: CallCache | None = None):
        self._cache = cache

    @property
    def cache(self) -> CallCache:
        return self._cache or default_cache()

    @property
    def fingerprint(self) -> str:
        """Identity of the exact model (weights + settings) for cache keys. Override when name is not enough."""
        return self.name

    @abstractmethod
    def _predict_proba_uncached(self, premises: list[str], hypotheses: list[str]) -> np.ndarray:
        """(n, len(labels)) probabilities, computed by the model."""

    @phase("scoring")
    def predict_proba(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        """(n, len(labels)) probabilities; cached per pair."""
        premises, hypotheses = [str(p) for p in premises], [str(h) for h in hypotheses]
        if len(premises) != len(hypotheses):
            raise ValueError(f"{len(premises)} premises but {len(hypotheses)} hypotheses")
        out = np.zeros((len(premises), len(self.labels)), dtype=np.float64)
        computed = 0
        valid = probability_check(len(self.labels))  # an invalid cached row is reported and recomputed
        for start in range(0, len(premises), CHUNK):
            p, h = premises[start : start + CHUNK], hypotheses[start : start + CHUNK]
            keys = [{"model": self.fingerprint, "labels": list(self.labels), "p": a, "h": b} for a, b in zip(p, h)]
            cached = self.cache.get_many(CACHE_NAMESPACE, keys, validate=valid)
            missing = sorted({i for i, v in enumerate(cached) if v is None}, key=lambda i: (p[i], h[i]))
            unique: dict[tuple[str, str], list[int]] = {}
            for i in missing:
                unique.setdefault((p[i], h[i]), []).append(i)
            if unique:
                pairs = list(unique)
                computed += len(pairs)
                probs = np.asarray(
                    self._predict_proba_uncached([a for a, _ in pairs], [b for _, b in pairs]), dtype=float
                )
                if probs.shape != (len(pairs), len(self.labels)):
                    raise ValueError(f"{self.name} returned probabilities of shape {probs.shape} for {len(pairs)} "
                                     f"pairs and {len(self.labels)} labels")
                self.cache.put_many(
                    CACHE_NAMESPACE, [(keys[unique[pair][0]], probs[j].tolist()) for j, pair in enumerate(pairs)]
                )
                for j, pair in enumerate(pairs):
                    for i in unique[pair]:
                        cached[i] = probs[j].tolist()
            out[start : start + len(p)] = np.asarray(cached, dtype=float)
        calls.count("classifier", self.name, requests=len(premises), cache_hits=len(premises) - computed,
                    calls=computed)
        return out

    def predict(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[str]:
        """Predicted label strings."""
        return labels_of(self.predict_proba(premises, hypotheses), self.labels)

    def predict_frame(
        self, df: pd.DataFrame, premise_col: str = "premise", hypothesis_col: str = "hypothesis"
    ) -> pd.DataFrame:
        """Copy of df with `pred`, `answered`, `p_<label>` columns and, when df has `label`, `correct`.

        The returned rows are the raw examples behind any score computed from them. An unanswered pair has
        pred None and counts as wrong; `answered` says which they are.
        """
        probs = self.predict_proba(df[premise_col].tolist(), df[hypothesis_col].tolist())
        out = df.copy()
        out["pred"] = labels_of(probs, self.labels)
        out["answered"] = out["pred"].notna()
        for j, lab in enumerate(self.labels):
            out[f"p_{lab}"] = probs[:, j]
        if "label" in out:
            out["correct"] = out["pred"] == out["label"]
        out.attrs["model"] = self.name
        out.attrs["tier"] = self.tier
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, tier={self.tier!r}, labels={self.labels})"
