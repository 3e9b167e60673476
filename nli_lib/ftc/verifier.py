"""A verifier learned from the hand judgements: is a counterfactual that passed the rules likely correct?

The rules of `validity` catch the malformations they were written for; out of sample they leave about one ok
counterfactual in five garbled (issue 16). The verifier scores each rule-passing counterfactual with a small
logistic regression on cheap, offline features and abstains below a threshold (`status` malformed, reason
``low_verifier_score: p=0.41``). Its coefficients, feature names, threshold, training batches and a hash of the
gold rows it was fit on live in `data/fixtures/ftc/verifier.json` (`fit_verifier` remakes it, deterministically).

Features (`features`, `feature_matrix`), per (hypothesis x, counterfactual x_cf):

* the edit, read from a word diff of x and x_cf: words inserted / deleted, number of edited runs, whether the
  inserted or deleted words hold a pronoun, determiner or preposition, length ratio, number of new n-grams;
* corpus evidence: the word bigrams/trigrams of x_cf (with sentence-boundary marks) that x does not have, i.e.
  those the edit made, looked up in a reference corpus of real sentences (`NgramCorpus`: e-SNLI dev+test, CAD
  train, δ-SNLI train; the pair's own premise and hypothesis left out): the share of them no sentence holds, how
  many unseen ones are made only of common words (a bad splice rather than a rare word), the rarest bigram;
* tagger evidence (validity's tagger): the phrase kinds of the deleted and inserted runs differ, x_cf lost x's
  main finite verb;
* categorical: pipeline, slot, label, and the transform's direction (span A found in x). Template ids are left
  out: only regex extraction has them and most are rare in the gold set.

Fit (`fit_verifier`): on every judged item of the training batches (ok or not under the rules, so that the
garbled texts the rules catch teach it too), standardised features, L2 strength 1/REGULARISATION_C; the
threshold is the smallest of THRESHOLDS whose leave-one-batch-out precision on rule-passing items reaches
TARGET_PRECISION, pooled and on the tuning batch (the one batch judged after the rules' last revision), with
pooled recall >= MIN_RECALL. TaxiNLI (MNLI) sentences were tried in the corpus and lowered the CV ranking.

>>> f = features("Two dogs run on the grass .", "Two cats run on the grass .")
>>> (f["words_inserted"], f["words_deleted"], f["edit_runs"], f["touches_pronoun"])
(1, 1, 1, 0)
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from ..config import REPO_ROOT

COMMON_WORD = 20  # a word in at least this many corpus sentences is common: an unseen n-gram of common words is
# evidence of a bad splice, one with a rare word may just be rare
TOKENS_VERSION = 2  # bump when `tokens` or the n-gram table changes: the corpus cache is keyed by it
VERIFIER_PATH = REPO_ROOT / "data" / "fixtures" / "ftc" / "verifier.json"
PRONOUNS = frozenset("he she it they him her them his hers its their theirs we us our you your i me my one".split())
DETERMINERS = frozenset("a an the this that these those some any each every no another".split())
PREPOSITIONS = frozenset("in on at by for with from into onto over under about near behind beside between "
                         "through across around along against toward towards of to up down out off inside "
                         "outside during while".split())
# corpus files (manifest keys) and the columns read from each loader
CORPUS_KEYS = ("esnli/s1.dev", "esnli/s2.dev", "esnli/s1.test", "esnli/s2.test", "cad/original.train",
               "cad/revised_hypothesis.train", "cad/revised_premise.train",
               "dsnli_train_subset/aflite_train_examples")


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens, punctuation dropped, clitics split ("man's" and PTB "man 's" alike).

    >>> tokens("A man 's dog , running.") == tokens("A man's dog, running .")
    True
    """
    return re.findall(r"[a-z0-9]+", str(text).lower())


def ngrams(words: Sequence[str], n: int) -> set[str]:
    """The n-grams of `words` with boundary marks <s> and </s>, as space-joined strings.

    >>> sorted(ngrams(["a", "dog"], 2))
    ['<s> a', 'a dog', 'dog </s>']
    """
    padded = ["<s>", *words, "</s>"]
    return {" ".join(padded[i:i + n]) for i in range(len(padded) - n + 1)}


def _hashes(grams) -> np.ndarray:
    """Stable 64-bit hashes of strings (blake2b), for the corpus tables."""
    import hashlib

    return np.array([int.from_bytes(hashlib.blake2b(g.encode("utf-8"), digest_size=8).digest(), "little")
                     for g in grams], dtype=np.uint64)


@dataclass(frozen=True)
class NgramCorpus:
    """Sentence frequencies of word bigrams and trigrams in a reference corpus of real sentences."""

    grams: np.ndarray  # sorted unique 64-bit hashes of the corpus n-grams (n = 2, 3)
    counts: np.ndarray  # number of distinct corpus sentences holding each n-gram
    sentences: np.ndarray  # sorted hashes of the distinct sentences (their token strings)
    memo: dict = field(default_factory=dict, compare=False, repr=False)  # sentence -> its n-grams if held

    @classmethod
    def from_sentences(cls, sentences) -> "NgramCorpus":
        """Count each n-gram once per distinct sentence (after `tokens`).

        >>> c = NgramCorpus.from_sentences(["A dog runs .", "a dog runs", "A cat runs ."])
        >>> c.count(["a dog", "dog runs", "cat sleeps"])
        [1, 1, 0]
        """
        distinct = sorted({" ".join(tokens(s)) for s in sentences} - {""})
        grams: list[str] = []
        for s in distinct:
            words = s.split()
            grams += [*ngrams(words, 1), *ngrams(words, 2), *ngrams(words, 3)]
        values, counts = np.unique(_hashes(grams), return_counts=True)
        return cls(values, counts.astype(np.int32), np.unique(_hashes(distinct)))

    def _own_ngrams(self, sentence: str) -> frozenset[str]:
        """The n-grams of a (token-joined) sentence when the corpus holds it, else none (memoised)."""
        if sentence not in self.memo:
            sh = _hashes([sentence])[0]
            k = np.searchsorted(self.sentences, sh)
            words = sentence.split()
            held = k < len(self.sentences) and self.sentences[k] == sh
            self.memo[sentence] = frozenset(ngrams(words, 1) | ngrams(words, 2) | ngrams(words, 3)) if held \
                else frozenset()
        return self.memo[sentence]

    def count(self, grams: Sequence[str], exclude: Sequence[str] = ()) -> list[int]:
        """Sentence frequency of each n-gram, less one for each of the `exclude` sentences (the pair being
        checked) that is in the corpus and holds it."""
        if not grams:
            return []
        h = _hashes(grams)
        at = np.clip(np.searchsorted(self.grams, h), 0, len(self.grams) - 1)
        found = self.grams[at] == h
        out = np.where(found, self.counts[at], 0).astype(int)
        for sentence in {" ".join(tokens(s)) for s in exclude} - {""}:
            own = self._own_ngrams(sentence)
            if own:
                out = out - np.array([g in own for g in grams], dtype=int)
        return [max(int(v), 0) for v in out]


def _corpus_sentences() -> list[str]:
    from ..data.loaders import load_dsnli_train_subset, load_esnli
    from .loaders import load_cad

    out: list[str] = []
    for split in ("dev", "test"):
        e = load_esnli(split)
        out += e["premise"].tolist() + e["hypothesis"].tolist()
    for kind in ("original", "revised_hypothesis", "revised_premise"):
        c = load_cad(kind, "train")
        out += c["premise"].tolist() + c["hypothesis"].tolist()
    d = load_dsnli_train_subset()
    out += d["premise"].tolist() + d["hypothesis"].tolist() + d["update"].tolist()
    return out


def corpus_key() -> str:
    """Cache key of the reference corpus: the corpus files' sha256 (manifest) and TOKENS_VERSION."""
    from ..data.fetch import load_manifest
    from ..hashing import json_hash

    manifest = load_manifest()
    return json_hash({"files": {k: manifest[k].sha256 for k in CORPUS_KEYS}, "tokens": TOKENS_VERSION}, length=20)


@lru_cache(maxsize=1)
def reference_corpus() -> NgramCorpus:
    """The reference `NgramCorpus`, built once (~60k distinct sentences) and cached as plain arrays (.npz)."""
    from .. import filecache

    path = filecache.cache_path("ftc-ngrams", corpus_key(), filecache.LAYERS)

    def build():
        c = NgramCorpus.from_sentences(_corpus_sentences())
        return [c.grams, c.counts, c.sentences]

    def validate(layers):
        ok = len(layers) == 3 and len(layers[0]) == len(layers[1]) and layers[0].dtype == np.uint64
        return None if ok else "not three aligned arrays"

    grams, counts, sentences = filecache.cached_derived(path, build, "FTC n-gram corpus", fmt=filecache.LAYERS,
                                                        validate=validate)
    return NgramCorpus(grams, counts, sentences)


def _edit(x: list[str], x_cf: list[str]) -> tuple[list[str], list[str], int, list[str]]:
    """(inserted words, deleted words, edited runs, new n-grams of x_cf that x lacks)."""
    ops = [o for o in difflib.SequenceMatcher(a=x, b=x_cf, autojunk=False).get_opcodes() if o[0] != "equal"]
    inserted = [w for _, _, _, j1, j2 in ops for w in x_cf[j1:j2]]
    deleted = [w for _, i1, i2, _, _ in ops for w in x[i1:i2]]
    new = sorted((ngrams(x_cf, 2) | ngrams(x_cf, 3)) - (ngrams(x, 2) | ngrams(x, 3)))
    return inserted, deleted, len(ops), new


def _tag_features(hypothesis: str, x_cf: str, inserted: list[str], deleted: list[str]) -> dict:
    from .validity import main_finite, phrase_kind, tag

    tagged_x, tagged_cf = tag(hypothesis), tag(x_cf)
    kind_ins = phrase_kind([t for _, t in tag(" ".join(inserted))]) if inserted else "NONE"
    kind_del = phrase_kind([t for _, t in tag(" ".join(deleted))]) if deleted else "NONE"
    return {"kind_changed": int(kind_ins != kind_del),
            "lost_finite_verb": int(bool(main_finite(tagged_x)) and not main_finite(tagged_cf))}


def features(hypothesis: str, x_cf: str, premise: str = "", corpus: NgramCorpus | None = None) -> dict:
    """Numeric features of one counterfactual (see module doc); `corpus` None: no corpus features."""
    x, cf = tokens(hypothesis), tokens(x_cf)
    inserted, deleted, runs, new = _edit(x, cf)
    touched = set(inserted) | set(deleted)
    out = {"words_inserted": len(inserted), "words_deleted": len(deleted), "edit_runs": runs,
           "touches_pronoun": int(bool(touched & PRONOUNS)), "touches_determiner": int(bool(touched & DETERMINERS)),
           "touches_preposition": int(bool(touched & PREPOSITIONS)),
           "length_ratio": round(len(cf) / max(len(x), 1), 4), "new_ngrams": len(new)}
    if corpus is not None:
        counts = corpus.count(new, exclude=(premise, hypothesis))
        bi = [c for g, c in zip(new, counts) if g.count(" ") == 1]
        tri = [c for g, c in zip(new, counts) if g.count(" ") == 2]
        out["unseen_bigram_share"] = round(sum(c == 0 for c in bi) / len(bi), 4) if bi else 0.0
        out["unseen_trigram_share"] = round(sum(c == 0 for c in tri) / len(tri), 4) if tri else 0.0
        out["unseen_bigrams"] = sum(c == 0 for c in bi)
        words = sorted({w for g in new for w in g.split()})
        common = {w for w, k in zip(words, corpus.count(words, exclude=(premise, hypothesis))) if k >= COMMON_WORD}
        out["unseen_common_bigrams"] = sum(c == 0 and set(g.split()) <= common for g, c in zip(new, counts)
                                           if g.count(" ") == 1)
        out["unseen_common_trigrams"] = sum(c == 0 and set(g.split()) <= common for g, c in zip(new, counts)
                                            if g.count(" ") == 2)
        out["rarest_bigram_log"] = round(float(np.log1p(min(bi))), 4) if bi else float(np.log1p(1000))
    out.update(_tag_features(hypothesis, x_cf, inserted, deleted))
    return out


REASON = "low_verifier_score"  # the reason a rule-passing counterfactual the verifier doubts is not ok
CATEGORIES = {"pipeline": ("regex-regex", "regex-fsp", "fsp-regex", "fsp-fsp"), "slot": ("E", "C", "N[A]", "N[B]"),
              "label": ("entailment", "contradiction", "neutral")}
NUMERIC = ("words_inserted", "words_deleted", "edit_runs", "touches_pronoun", "touches_determiner",
           "touches_preposition", "length_ratio", "new_ngrams", "unseen_bigram_share", "unseen_trigram_share",
           "unseen_bigrams", "unseen_common_bigrams", "unseen_common_trigrams", "rarest_bigram_log", "kind_changed",
           "lost_finite_verb", "a_in_hypothesis")
FEATURES = NUMERIC + tuple(f"{k}={v}" for k, vs in CATEGORIES.items() for v in vs)
REGULARISATION_C = 0.3  # inverse L2 strength of the logistic regression (standardised features)
THRESHOLDS = tuple(round(0.5 + 0.05 * i, 2) for i in range(10))  # candidate thresholds, smallest first
TARGET_PRECISION, MIN_RECALL = 0.92, 0.5


def feature_matrix(rows, corpus: NgramCorpus | None = None) -> np.ndarray:
    """One row of FEATURES per item; `rows` is a DataFrame with hypothesis, x_cf (or counterfactual), premise,
    pipeline, slot, label and A (the extracted span; '' or None when unknown)."""
    from .text import find_span

    corpus = reference_corpus() if corpus is None else corpus
    n = len(rows)
    column = {c: rows[c].tolist() if c in rows else [None] * n for c in ("premise", "A", *CATEGORIES)}
    text = rows["x_cf" if "x_cf" in rows else "counterfactual"].tolist()
    out = []
    for i, (hypothesis, x_cf) in enumerate(zip(rows["hypothesis"].tolist(), text)):
        f = features(hypothesis, x_cf, column["premise"][i] or "", corpus)
        a = column["A"][i]
        f["a_in_hypothesis"] = int(bool(a) and find_span(hypothesis, str(a)) is not None)
        vec = [float(f[name]) for name in NUMERIC]
        vec += [float(str(column[k][i]) == v) for k, vs in CATEGORIES.items() for v in vs]
        out.append(vec)
    return np.array(out, dtype=float).reshape(len(out), len(FEATURES))


@dataclass(frozen=True)
class Verifier:
    """A fitted logistic regression on FEATURES (standardisation folded in) and its abstention threshold."""

    mean: tuple[float, ...]  # per-feature mean of the training rows
    scale: tuple[float, ...]  # per-feature standard deviation (1 where constant)
    coef: tuple[float, ...]  # logistic-regression weights on the standardised features
    intercept: float  # bias
    threshold: float  # an ok counterfactual scoring below it is not ok
    info: dict  # training batches, gold rows hash, CV precision/recall at the threshold, ...

    def probability(self, X: np.ndarray) -> np.ndarray:
        """P(judged correct) per row of a FEATURES matrix.

        >>> v = Verifier((0.0,) * len(FEATURES), (1.0,) * len(FEATURES), (0.0,) * len(FEATURES), 0.0, 0.5, {})
        >>> v.probability(np.zeros((1, len(FEATURES)))).tolist()
        [0.5]
        """
        z = (X - np.array(self.mean)) / np.array(self.scale) @ np.array(self.coef) + self.intercept
        return 1.0 / (1.0 + np.exp(-z))

    def to_json(self) -> dict:
        return {"features": list(FEATURES), "mean": list(self.mean), "scale": list(self.scale),
                "coef": list(self.coef), "intercept": self.intercept, "threshold": self.threshold, **self.info}

    @classmethod
    def from_json(cls, d: dict) -> "Verifier":
        if d.get("features") != list(FEATURES):
            raise ValueError(f"{VERIFIER_PATH}: feature names differ from verifier.FEATURES: refit (fit_verifier)")
        info = {k: v for k, v in d.items() if k not in ("features", "mean", "scale", "coef", "intercept",
                                                        "threshold")}
        return cls(tuple(d["mean"]), tuple(d["scale"]), tuple(d["coef"]), float(d["intercept"]),
                   float(d["threshold"]), info)


def _fit(X: np.ndarray, y: np.ndarray, threshold: float = 0.5, info: dict | None = None) -> Verifier:
    from sklearn.linear_model import LogisticRegression

    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    m = LogisticRegression(C=REGULARISATION_C, max_iter=2000).fit((X - mean) / scale, y)
    return Verifier(tuple(np.round(mean, 8).tolist()), tuple(np.round(scale, 8).tolist()),
                    tuple(np.round(m.coef_[0], 8).tolist()), round(float(m.intercept_[0]), 8), threshold, info or {})


def cross_validated(X: np.ndarray, y: np.ndarray, batches: np.ndarray) -> np.ndarray:
    """Leave-one-batch-out probabilities: each batch scored by a model fit on the other batches."""
    p = np.full(len(y), np.nan)
    for b in sorted(set(batches)):
        held = batches == b
        p[held] = _fit(X[~held], y[~held]).probability(X[held])
    return p


def precision_recall(p: np.ndarray, y: np.ndarray, rule_ok: np.ndarray, threshold: float) -> tuple[float, float, int]:
    """(precision, recall, n kept) of 'rule ok and p >= threshold' against the judgements y, recall over the
    rule-ok correct items.

    >>> precision_recall(np.array([.9, .8, .3, .95]), np.array([1, 0, 1, 1]), np.array([1, 1, 1, 0]), 0.5)
    (0.5, 0.5, 2)
    """
    rule_ok, y = rule_ok.astype(bool), y.astype(bool)
    keep = rule_ok & (p >= threshold)
    n = int(keep.sum())
    return (round(float(y[keep].mean()), 4) if n else float("nan"),
            round(float((keep & y).sum() / max((rule_ok & y).sum(), 1)), 4), n)


def gold_rows_hash(gold) -> str:
    """sha256 of the gold rows a verifier is fit on (the columns it reads), in file order."""
    from ..hashing import json_hash

    cols = ["pair_id", "pipeline", "slot", "label", "premise", "hypothesis", "A", "counterfactual", "judged_correct",
            "batch"]
    return json_hash(gold[cols].astype(str).values.tolist(), length=20)


def fit_verifier(compared, train_batches: Sequence[str], tuning_batch: str, corpus: NgramCorpus | None = None
                 ) -> Verifier:
    """Fit the verifier on every judged item of `train_batches` (`gold.gold_comparison` output: the judgement,
    and `ok` = the rules pass now) and choose its threshold by leave-one-batch-out CV: the smallest of THRESHOLDS
    where the rule-ok items' CV precision is >= TARGET_PRECISION both pooled and on `tuning_batch` (the in-sample
    batch judged after the rules' last revision, the only one where the rules are out of sample), with pooled
    recall >= MIN_RECALL. Raises when no threshold qualifies."""
    train = compared[compared["batch"].isin(train_batches) & ~compared["stale"].astype(bool)].reset_index(drop=True)
    X = feature_matrix(train, corpus)
    y = train["judged_correct"].astype(bool).to_numpy()
    batches, rule_ok = train["batch"].to_numpy(), train["ok"].astype(bool).to_numpy()
    p = cross_validated(X, y, batches)
    tuning = batches == tuning_batch
    for t in THRESHOLDS:
        prec, rec, n = precision_recall(p, y, rule_ok, t)
        t_prec, t_rec, t_n = precision_recall(p[tuning], y[tuning], rule_ok[tuning], t)
        if prec >= TARGET_PRECISION and t_prec >= TARGET_PRECISION and rec >= MIN_RECALL:
            info = {"train_batches": list(train_batches), "tuning_batch": tuning_batch, "n_train": len(train),
                    "gold_rows_hash": gold_rows_hash(train), "C": REGULARISATION_C, "tokens_version": TOKENS_VERSION,
                    "cv": {"precision": prec, "recall": rec, "n_ok": n, "tuning_precision": t_prec,
                           "tuning_recall": t_rec, "tuning_n_ok": t_n}}
            return _fit(X, y, t, info)
    raise ValueError(f"no threshold in {THRESHOLDS} reaches CV precision {TARGET_PRECISION} with recall >= "
                     f"{MIN_RECALL}")


@lru_cache(maxsize=1)
def load_verifier(path: str | Path | None = None) -> Verifier:
    """The committed verifier (data/fixtures/ftc/verifier.json)."""
    return Verifier.from_json(json.loads(Path(path or VERIFIER_PATH).read_text(encoding="utf-8")))


def fingerprint() -> str:
    """What the verifier's verdicts depend on besides the row: the committed fit (verifier.json bytes) and the
    reference corpus (`corpus_key`); for the key of anything cached from `counterfactual_rows` output.

    >>> len(fingerprint())
    16
    """
    from ..hashing import digest

    return digest(VERIFIER_PATH.read_bytes(), corpus_key(), length=16)


def low_scores(rows, verifier: Verifier | None = None) -> list[str]:
    """For each row (see `feature_matrix`): '' when the verifier's probability reaches its threshold, else the
    reason 'low_verifier_score: p=0.41'."""
    if len(rows) == 0:
        return []
    verifier = load_verifier() if verifier is None else verifier
    p = verifier.probability(feature_matrix(rows))
    return ["" if q >= verifier.threshold else f"{REASON}: p={q:.2f}" for q in p]
