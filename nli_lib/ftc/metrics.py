"""§2.3 FTC-δ, FTC-K, FTC-W; §3.2 METEOR (nltk, with a WordNet that works offline).

FTC = 1 − d(p(ŷ_cf), p(y_cf)), where p(ŷ_cf) is the task model's distribution on (u, x_cf) and p(y_cf)
the one-hot distribution of the derived counterfactual label. Label order is LABELS = (E, N, C).

* FTC-δ: d = 1[argmax p(ŷ_cf) ≠ y_cf]  ->  1 when the model predicts y_cf, else 0.
* FTC-K: d = KL(p(y_cf) ‖ p(ŷ_cf)) = −log p(ŷ_cf = y_cf)  ->  1 + log p; upper bound 1, no lower bound
  (footnote 19: "the KL term ... has lower bound 0 and no upper bound"). Direction: eq. (1) writes
  d(p(ŷ_cf), p(y_cf)), but with a one-hot p(y_cf) the other order, KL(p(ŷ_cf) ‖ p(y_cf)), is +∞ for
  every softmax output (`kl_divergence` shows both), while the paper reports finite FTC-K means
  (Table 6: 0.126 … −0.245); KL from the derived label to the model is the reading that gives them
  (it is also what torch's `kl_div(log p̂, onehot)` computes). Probabilities are clipped at `EPS` = 1e-12
  so a zero gives a finite score (≈ −26.6).
* FTC-W: d = Wasserstein-1 with ground distance 1 between E and C and α between N and either
  (α = 0.7 by default, as in Table 5). For a one-hot target all mass moves to y_cf, so
  d = Σ_j p_j · c(j, y_cf); `wasserstein` solves the general transport problem (same value; tested).

Worked example (hand-computed): p = (E .6, N .3, C .1), y_cf = E, α = .7:
FTC-δ = 1; FTC-K = 1 + ln .6 = 0.4892; FTC-W = 1 − (.3 · .7 + .1 · 1) = 0.69.

>>> p = [0.6, 0.3, 0.1]
>>> ftc_delta(p, "entailment"), round(ftc_kl(p, "entailment"), 4), round(ftc_wasserstein(p, "entailment"), 4)
(1.0, 0.4892, 0.69)
>>> round(ftc_wasserstein(p, "neutral"), 4)             # 1 − .7 · (.6 + .1)
0.51
>>> round(kl_divergence([1, 0, 0], p), 4), kl_divergence(p, [1, 0, 0])   # −ln .6; the other order diverges
(0.5108, inf)
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np

from ..config import LABELS
from .logic import as_label

ALPHA = 0.7  # default distance between N and E/C for FTC-W (Table 5: α = 0.7)
EPS = 1e-12  # probability floor for FTC-K


def _index(y: str, labels: Sequence[str] = LABELS) -> int:
    return list(labels).index(as_label(y))


def cost_matrix(alpha: float = ALPHA, labels: Sequence[str] = LABELS) -> np.ndarray:
    """Ground distances between labels: 1 between E and C, α between N and E/C, 0 on the diagonal."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError("alpha must lie in [0, 1]")
    short = {"entailment": "E", "neutral": "N", "contradiction": "C"}
    names = [short[as_label(x)] for x in labels]
    c = np.zeros((len(names), len(names)))
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if a != b:
                c[i, j] = alpha if "N" in (a, b) else 1.0
    return c


def kl_divergence(p: Sequence[float], q: Sequence[float]) -> float:
    """KL(p ‖ q) = Σ_i p_i log(p_i / q_i) in nats (0 log 0 = 0; +∞ where q_i = 0 < p_i)."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    support = p > 0
    if np.any(q[support] <= 0):
        return float("inf")
    return float(np.sum(p[support] * np.log(p[support] / q[support])))


def ftc_delta(p: Sequence[float], y_cf: str, labels: Sequence[str] = LABELS) -> float:
    """1 if the model's argmax on the counterfactual is y_cf, else 0."""
    return float(int(np.argmax(p)) == _index(y_cf, labels))


def ftc_kl(p: Sequence[float], y_cf: str, labels: Sequence[str] = LABELS, eps: float = EPS) -> float:
    """1 − KL(onehot(y_cf) ‖ p) = 1 + log p[y_cf] (direction: module doc)."""
    return float(1.0 + np.log(max(float(p[_index(y_cf, labels)]), eps)))


def ftc_wasserstein(p: Sequence[float], y_cf: str, alpha: float = ALPHA, labels: Sequence[str] = LABELS) -> float:
    """1 − W1(p, onehot(y_cf)) with `cost_matrix(alpha)`: 1 − Σ_j p_j c(j, y_cf)."""
    c = cost_matrix(alpha, labels)
    return float(1.0 - np.dot(np.asarray(p, dtype=float), c[:, _index(y_cf, labels)]))


def wasserstein(p: Sequence[float], q: Sequence[float], cost: np.ndarray) -> float:
    """Earth mover's distance between two label distributions under a ground-cost matrix (linear program)."""
    from scipy.optimize import linprog

    p, q = np.asarray(p, float), np.asarray(q, float)
    k = len(p)
    a_eq = np.zeros((2 * k, k * k))
    for i in range(k):
        a_eq[i, i * k : (i + 1) * k] = 1.0  # row sums = p
        a_eq[k + i, i::k] = 1.0  # column sums = q
    res = linprog(np.asarray(cost, float).ravel(), A_eq=a_eq, b_eq=np.concatenate([p, q]), bounds=(0, None),
                  method="highs")
    if not res.success:
        raise ValueError(f"transport problem failed: {res.message}")
    return float(res.fun)


def ftc_scores(probs: np.ndarray, y_cf: Sequence[str], alpha: float = ALPHA,
               labels: Sequence[str] = LABELS) -> dict[str, np.ndarray]:
    """Vectorised FTC-δ/K/W for an (n, k) probability array and n derived labels."""
    probs = np.asarray(probs, dtype=float)
    idx = np.array([_index(y, labels) for y in y_cf], dtype=int)
    rows = np.arange(len(idx))
    c = cost_matrix(alpha, labels)
    return {
        "ftc_delta": (probs.argmax(axis=1) == idx).astype(float),
        "ftc_k": 1.0 + np.log(np.clip(probs[rows, idx], EPS, None)),
        "ftc_w": 1.0 - (probs * c[:, idx].T).sum(axis=1),
    }


# ---------------------------------------------------------------------------------------------------
# METEOR with a WordNet that works offline
# ---------------------------------------------------------------------------------------------------

class _Lemma:
    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def name(self) -> str:
        return self._name


class _Synset:
    __slots__ = ("_lemmas",)

    def __init__(self, lemmas):
        self._lemmas = [_Lemma(m.replace(" ", "_")) for m in lemmas]

    def lemmas(self):
        return self._lemmas


# nltk's WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS (detachment rules of WordNet's morphy)
_MORPHY_RULES = {
    "n": (("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
          ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}


class OEWNForMeteor:
    """The Open English WordNet (the companion's mirror copy) behind the interface nltk's METEOR uses.

    nltk calls `wordnet.synsets(word)` and `lemma.name()`; multi-word lemmas are written with '_' so
    nltk skips them exactly as it does with its own WordNet. `synsets` follows nltk's: for every part
    of speech, the word itself and its morphy base forms (nltk's detachment rules, applied once) that
    WordNet lists under that part of speech, all their synsets together. nltk's exception lists
    (irregular forms such as 'ran' -> 'run') are not in the OEWN sources and are not applied.
    """

    source = "Open English WordNet (companion mirror)"

    def __init__(self, wordnet=None):
        if wordnet is None:
            from ..data.wordnet import load_wordnet

            wordnet = load_wordnet()
        self._wn = wordnet
        self._cache: dict[str, list] = {}

    @staticmethod
    def _forms(word: str, pos: str) -> list[str]:
        """The word and its base forms under `pos` by nltk's morphy rules (duplicates removed)."""
        forms = [word] + [word[: -len(old)] + new for old, new in _MORPHY_RULES[pos] if word.endswith(old)]
        return list(dict.fromkeys(f for f in forms if f))

    def synset_ids(self, word: str) -> list:
        """Synset ids nltk's `wordnet.synsets(word)` would return, in the same order (pos, then form)."""
        word = word.lower()
        ids = []
        for pos in _MORPHY_RULES:
            for form in self._forms(word, pos):
                ids.extend(self._wn.synsets(form, pos=pos))
        return list(dict.fromkeys(ids))

    def synsets(self, word: str):
        if word not in self._cache:
            self._cache[word] = [_Synset(self._wn.lemmas(i)) for i in self.synset_ids(word)]
        return self._cache[word]


@lru_cache(maxsize=1)
def meteor_wordnet():
    """(wordnet object, source description): nltk's WordNet when installed, else the mirror's OEWN."""
    try:
        from nltk.corpus import wordnet

        wordnet.synsets("dog")
        return wordnet, "NLTK WordNet 3.0 (nltk_data)"
    except LookupError:
        wn = OEWNForMeteor()
        return wn, wn.source


@lru_cache(maxsize=1)
def _meteor_stemmer():
    """nltk's Porter stemmer (METEOR's default, same mode) remembering every word it stemmed: METEOR stems each
    word of a hypothesis and its references again at every call (~half of its time on notebook 32's 1,196
    explanations), and stemming is a function of the word alone.

    >>> s = _meteor_stemmer(); s.stem("running")
    'run'
    >>> n = len(s.memo); s.stem("running"), len(s.memo) == n, s is _meteor_stemmer()   # remembered, one stemmer
    ('run', True, True)
    """
    from nltk.stem.porter import PorterStemmer

    class MemoPorterStemmer(PorterStemmer):
        def __init__(self):
            super().__init__()
            self.memo: dict[tuple[str, bool], str] = {}

        def stem(self, word: str, to_lowercase: bool = True) -> str:
            key = (word, to_lowercase)
            if key not in self.memo:
                self.memo[key] = super().stem(word, to_lowercase=to_lowercase)
            return self.memo[key]

    return MemoPorterStemmer()


def meteor(hypothesis: str, references: Sequence[str], wordnet=None) -> float:
    """nltk METEOR of `hypothesis` against one or more references (lower-cased word tokens), with nltk's Porter
    stemmer (memoised: `_meteor_stemmer`).

    A missing hypothesis (failed rewrite) scores 0, as an empty output would.
    """
    from nltk.translate.meteor_score import meteor_score

    from ..text import words

    refs = [words(r) for r in references if isinstance(r, str) and r.strip()]
    if not refs:
        return float("nan")
    if not isinstance(hypothesis, str) or not hypothesis.strip():
        return 0.0
    wn = wordnet if wordnet is not None else meteor_wordnet()[0]
    return float(meteor_score(refs, words(hypothesis), stemmer=_meteor_stemmer(), wordnet=wn))
