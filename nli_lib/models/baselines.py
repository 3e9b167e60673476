"""Classical pair classifiers (scikit-learn) behind the same protocol as the neural models.

    >>> clf = TfidfPairClassifier("logreg").fit(train_df)           # doctest: +SKIP
    >>> clf.predict_frame(test_df)["correct"].mean()                 # doctest: +SKIP

Features (`PairFeaturizer`): TF-IDF of the premise, TF-IDF of the hypothesis (separate vocabularies so a
word's role is kept), TF-IDF of hypothesis words absent from the premise, and dense overlap features
(share of hypothesis tokens in the premise, length difference, negation words on either side).
`NaiveBayesPairClassifier` is the paper-style bag-of-words multinomial NB (TaxiNLI's NB baseline):
counts of premise words and of hypothesis words, prefixed so the two sides stay distinct.

Caching: a classifier's fingerprint holds every setting (`settings()`) and a hash of its training data, so its
predictions come from the call cache on a re-run and a changed C, seed or label set never reuses them;
`nli_lib.models.fit_cached` also stores the fitted estimators on disk in the skops format (no pickle: loading
cannot run code), since fitting TF-IDF + a linear model on e-SNLI dev takes tens of seconds on 2 cores.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..config import LABELS
from ..hashing import stable_json, text_hash
from ..text import bow_tokens
from .base import Classifier

MAX_FEATURES = 20000  # TF-IDF vocabulary size per block
LOGREG_MAX_ITER = 2000  # iterations of the logistic regression solver
NEGATIONS = frozenset("no not never nobody nothing none n't cannot neither nor without".split())
# The vectorizers name their tokenizer function; files fitted before it moved to nli_lib.text name this alias
# (skops resolves it by module and name), so it stays importable here.
tokens = bow_tokens


def split_spaces(text: str) -> list[str]:
    """The tokenizer of pre-tokenised documents (a named function, so stored vectorizers can name it).

    >>> split_spaces("p:a h:b")
    ['p:a', 'h:b']
    """
    return text.split()


def overlap_features(premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
    """Dense features: hyp-in-prem share, prem-in-hyp share, length diff, negation in P, negation in H.

    >>> overlap_features(["a man sleeps"], ["a man"]).round(2).tolist()
    [[1.0, 0.67, -0.1, 0.0, 0.0]]
    """
    rows = []
    for p, h in zip(premises, hypotheses):
        tp, th = bow_tokens(p), bow_tokens(h)
        sp_, sh = set(tp), set(th)
        rows.append([
            len(sh & sp_) / max(len(sh), 1), len(sh & sp_) / max(len(sp_), 1),
            float(np.clip((len(th) - len(tp)) / 10, -1, 1)),
            float(bool(sp_ & NEGATIONS)), float(bool(sh & NEGATIONS)),
        ])
    return np.asarray(rows, dtype=float)


class PairFeaturizer:
    """TF-IDF (premise | hypothesis | hypothesis-only-words) + overlap features."""

    def __init__(self, max_features: int = MAX_FEATURES):
        from sklearn.feature_extraction.text import TfidfVectorizer

        def make():
            return TfidfVectorizer(tokenizer=bow_tokens, token_pattern=None, lowercase=False, ngram_range=(1, 2),
                                   max_features=max_features, sublinear_tf=True)

        self.vp, self.vh, self.vnew = make(), make(), make()

    @staticmethod
    def _new_words(premises, hypotheses):
        return [" ".join(w for w in bow_tokens(h) if w not in set(bow_tokens(p))) for p, h in zip(premises, hypotheses)]

    def fit_transform(self, premises, hypotheses):
        return sp.hstack([self.vp.fit_transform(premises), self.vh.fit_transform(hypotheses),
                          self.vnew.fit_transform(self._new_words(premises, hypotheses)),
                          sp.csr_matrix(overlap_features(premises, hypotheses))]).tocsr()

    def transform(self, premises, hypotheses):
        return sp.hstack([self.vp.transform(premises), self.vh.transform(hypotheses),
                          self.vnew.transform(self._new_words(premises, hypotheses)),
                          sp.csr_matrix(overlap_features(premises, hypotheses))]).tocsr()


def one_thread():
    """A context in which BLAS and OpenMP (scikit-learn's loss functions) run one thread: a fit or prediction then
    sums in one order, so its numbers do not depend on OMP_NUM_THREADS or the cores of the machine (the TF-IDF
    logistic regression's SNLI-test count moved by one pair with the thread count)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


class SklearnPairClassifier(Classifier):
    """A scikit-learn pair classifier: `settings()` names every knob, `fitted_parts()` every fitted estimator."""

    tier = "offline"

    def __init__(self, labels: Sequence[str] = LABELS, cache=None):
        super().__init__(cache)
        self.labels = tuple(labels)
        self._fp = None
        self._restore = None  # set by fit_cached: restores the stored fit on first use (warm runs never load it)

    def _predict_proba_uncached(self, premises, hypotheses):
        if self._restore is not None:
            restore, self._restore = self._restore, None
            restore(self)
        with one_thread():
            return self._predict(premises, hypotheses)

    def _predict(self, premises: list[str], hypotheses: list[str]) -> np.ndarray:
        """(n, len(labels)) probabilities from the fitted estimators."""
        raise NotImplementedError

    def settings(self) -> dict:
        """Every setting that changes a prediction (JSON-able); subclasses extend it."""
        return {"class": type(self).__name__, "labels": list(self.labels)}

    def fitted_parts(self) -> dict:
        """The fitted scikit-learn objects, by name (what `nli_lib.models.fit_cached` stores)."""
        raise NotImplementedError

    def restore_parts(self, parts: dict) -> None:
        """Put stored `fitted_parts()` back (the inverse of fitted_parts)."""
        raise NotImplementedError

    def fit(self, df: pd.DataFrame, premise_col: str = "premise", hypothesis_col: str = "hypothesis"):
        p, h = df[premise_col].astype(str).tolist(), df[hypothesis_col].astype(str).tolist()
        y = df["label"].to_numpy()
        unknown = set(y) - set(self.labels)
        if unknown:
            raise ValueError(f"labels {sorted(unknown)} not in {self.labels}")
        with one_thread():
            self._fit(p, h, y)
        self.set_fingerprint(df, premise_col, hypothesis_col)
        return self

    def set_fingerprint(self, df: pd.DataFrame, premise_col: str = "premise", hypothesis_col: str = "hypothesis"):
        """Fingerprint = name | hash of settings() | hash of the training rows (called by fit and on restore)."""

        rows = ("\t".join(map(str, row)) for row in zip(df[premise_col].astype(str), df[hypothesis_col].astype(str),
                                                        df["label"]))
        self._fp = f"{self.name}|{text_hash(stable_json(self.settings()))}|{text_hash(*rows)}"

    @property
    def fingerprint(self) -> str:
        if self._fp is None:
            raise RuntimeError(f"{self.name} is not fitted: call .fit(train_df) first")
        return self._fp

    def _proba_in_label_order(self, est, X) -> np.ndarray:
        probs = est.predict_proba(X)
        out = np.zeros((X.shape[0], len(self.labels)))
        for j, cls in enumerate(est.classes_):
            out[:, self.labels.index(cls)] = probs[:, j]
        return out


class TfidfPairClassifier(SklearnPairClassifier):
    """TF-IDF + overlap features with logistic regression ('logreg') or a calibrated linear SVM ('svm')."""

    def __init__(self, kind: str = "logreg", labels: Sequence[str] = LABELS, C: float = 1.0, cache=None, seed: int = 0):
        super().__init__(labels, cache)
        if kind not in ("logreg", "svm"):
            raise ValueError("kind must be 'logreg' or 'svm'")
        self.kind, self.C, self.seed = kind, C, seed
        self.name = f"tfidf-{kind}"

    def settings(self) -> dict:
        return {**super().settings(), "kind": self.kind, "C": self.C, "seed": self.seed,
                "max_features": MAX_FEATURES, "max_iter": LOGREG_MAX_ITER, "calibration_cv": 3, "threads": 1}

    def _fit(self, p, h, y):
        from sklearn.calibration import CalibratedClassifierCV
        from sklearn.linear_model import LogisticRegression
        from sklearn.svm import LinearSVC

        self.feats = PairFeaturizer()
        X = self.feats.fit_transform(p, h)
        if self.kind == "logreg":
            self.est = LogisticRegression(C=self.C, max_iter=LOGREG_MAX_ITER, random_state=self.seed)
        else:
            self.est = CalibratedClassifierCV(LinearSVC(C=self.C, random_state=self.seed), cv=3)
        self.est.fit(X, y)

    def fitted_parts(self) -> dict:
        return {"vp": self.feats.vp, "vh": self.feats.vh, "vnew": self.feats.vnew, "est": self.est}

    def restore_parts(self, parts: dict) -> None:
        self.feats = PairFeaturizer()
        self.feats.vp, self.feats.vh, self.feats.vnew, self.est = parts["vp"], parts["vh"], parts["vnew"], parts["est"]

    def _predict(self, premises, hypotheses):
        return self._proba_in_label_order(self.est, self.feats.transform(premises, hypotheses))


class NaiveBayesPairClassifier(SklearnPairClassifier):
    """Multinomial NB over bag-of-words counts of 'p:word' and 'h:word' tokens (additive smoothing `alpha`)."""

    name = "bow-naive-bayes"

    def __init__(self, labels: Sequence[str] = LABELS, alpha: float = 1.0, cache=None):
        super().__init__(labels, cache)
        self.alpha = alpha

    def settings(self) -> dict:
        return {**super().settings(), "alpha": self.alpha}

    @staticmethod
    def _docs(p, h):
        return [" ".join([f"p:{w}" for w in bow_tokens(a)] + [f"h:{w}" for w in bow_tokens(b)]) for a, b in zip(p, h)]

    def _fit(self, p, h, y):
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.naive_bayes import MultinomialNB

        self.vec = CountVectorizer(tokenizer=split_spaces, token_pattern=None, lowercase=False)
        self.est = MultinomialNB(alpha=self.alpha).fit(self.vec.fit_transform(self._docs(p, h)), y)

    def fitted_parts(self) -> dict:
        return {"vec": self.vec, "est": self.est}

    def restore_parts(self, parts: dict) -> None:
        self.vec, self.est = parts["vec"], parts["est"]

    def _predict(self, premises, hypotheses):
        return self._proba_in_label_order(self.est, self.vec.transform(self._docs(premises, hypotheses)))


QUICK_BASELINE_ROWS = 2000  # --quick: baselines are fitted on a seeded sample of e-SNLI dev this size


def fit_baseline(name: str, quick: bool = False, seed: int = 0, labels=None, train: pd.DataFrame | None = None):
    """A classical baseline ('tfidf-logreg', 'tfidf-svm', 'naive-bayes') fitted on `train` (default: e-SNLI dev;
    quick: a seeded QUICK_BASELINE_ROWS sample, said in its name), through `fit_cached`: fitted once per
    settings and training rows, then loaded (skops, never pickle). The one constructor of every baseline."""
    from ..data.loaders import load_esnli
    from .fitted import fit_cached

    if train is None:
        train = load_esnli("dev")
        if quick:
            train = train.sample(n=min(QUICK_BASELINE_ROWS, len(train)), random_state=seed)
    kw = {"labels": tuple(labels)} if labels else {}
    if name == "naive-bayes":
        make = lambda: NaiveBayesPairClassifier(**kw)  # noqa: E731
    elif name in ("tfidf-logreg", "tfidf-svm"):
        make = lambda: TfidfPairClassifier(name.split("-")[1], seed=seed, **kw)  # noqa: E731
    else:
        raise ValueError(f"unknown baseline {name!r}; baselines: tfidf-logreg, tfidf-svm, naive-bayes")
    clf = fit_cached(make, train, name=name)
    if quick:
        clf.name = f"{clf.name} (quick: {len(train)} rows)"
    return clf
