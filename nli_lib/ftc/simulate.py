"""LAS and LRA, the two faithfulness metrics FTC is compared with (§3.3–3.4, §4, Appendix 7.4), offline.

Both rest on a **simulator**: a model that predicts the task model's label ŷ (not the gold label) from
the input x (premise u + hypothesis) and/or an explanation e. With ŷ_i the task model's prediction on
(u_i, x_i) and sim(·) the simulator's:

* **LAS** (leakage-adjusted simulatability, Hase et al. 2020):
  Δ_i = 1[sim(x_i, e_i) = ŷ_i] − 1[sim(x_i) = ŷ_i]; leakage k_i = 1[sim(e_i) = ŷ_i];
  LAS = ½ (mean_{k=0} Δ + mean_{k=1} Δ). (The paper prints 1/n0 in front of both sums; n1 is meant.)
* **LRA** (label–rationale association, Wiegreffe et al. 2021), as the paper prints it (eqs. 2–4):
  F_i = 1[ŷ_i | x_i = ŷ_i | x'_i] (the task model's label survives Gaussian noise on its input
  embeddings, `sensitivity.noise_label_flips`), Z_i = Δ_i, LRA = mean 1[F_i = Z_i].

Per-example scores (for Table 5's rank-sum test): LAS_i = Δ_i (the leakage adjustment is a group-level
reweighting, applied to the aggregate only) and LRA_i = 1[F_i = Z_i].

**Offline simulator** (`Simulator`): TF-IDF + logistic regression — the companion's `PairFeaturizer`
for x and a TF-IDF block for e — trained on e-SNLI pairs disjoint from those evaluated, with the task
model's predictions as targets and the input dropout the paper used (training rows weighted 0.4 x+e,
0.4 x only, 0.2 e only; each pair appears in all three formats with those weights, the expectation of
random dropout). The paper's simulators were neural models trained on e-SNLI-VE with generated
explanations; here the explanations are the human e-SNLI ones. In Wiegreffe et al. the explanation is
re-generated from the noisy input; with fixed (human or borrowed) explanations Z_i does not depend on
the noise, which is what the printed formula computes.

Worked example (hand-computed): ŷ = (E, C, N, E), sim(x, e) = (E, C, C, N), sim(x) = (E, N, C, E),
sim(e) = (E, C, N, N): Δ = (0, 1, 0, −1), k = (1, 1, 1, 0); LAS = ½ (−1 + 1/3) = −1/3.
With F = (1, 1, 0, 0): 1[F = Z] = (0, 1, 1, 0), LRA = 0.5.

>>> rows = las_rows(["E", "C", "N", "E"], ["E", "C", "C", "N"], ["E", "N", "C", "E"], ["E", "C", "N", "N"])
>>> rows["delta"].tolist(), rows["leak"].tolist(), round(las_score(rows)["LAS"], 4)
([0, 1, 0, -1], [1, 1, 1, 0], -0.3333)
>>> lra_score([True, True, False, False], rows["delta"])["LRA"]
0.5
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..config import LABELS
from ..text import untokenize_ptb

FORMATS = {"xe": 0.4, "x": 0.4, "e": 0.2}  # Hase et al. input dropout as the FTC paper reports it (App. 7.4)


@dataclass
class Simulator:
    """Predicts a task model's label from (premise, hypothesis), the explanation, or both (TF-IDF + logreg)."""

    C: float = 1.0  # inverse regularisation of the logistic regression
    seed: int = 0  # random_state of the solver
    labels: tuple = LABELS  # label set (columns of predict_proba)
    name: str = "tfidf-logreg simulator"  # printed beside LAS/LRA numbers
    n_train: int = 0  # training pairs (each in three formats)
    _fitted: dict = field(default_factory=dict, repr=False)  # vectorizers and estimator, once fitted
    _train: tuple | None = field(default=None, repr=False)  # (rows, targets, explanation column) given to `fit`

    def _blocks(self, df: pd.DataFrame, explanation_col: str, fit: bool = False):
        """(pair block, explanation block) of feature rows for df."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        from ..models.baselines import PairFeaturizer

        p, h = df["premise"].astype(str).tolist(), df["hypothesis"].astype(str).tolist()
        z = [
            untokenize_ptb(t)
            for t in (df[explanation_col].fillna("").astype(str) if explanation_col in df else [""] * len(df))
        ]
        if fit:
            self._fitted["x"] = PairFeaturizer(max_features=20000)
            self._fitted["e"] = TfidfVectorizer(ngram_range=(1, 2), max_features=20000, sublinear_tf=True)
            return self._fitted["x"].fit_transform(p, h), self._fitted["e"].fit_transform(z)
        return self._fitted["x"].transform(p, h), self._fitted["e"].transform(z)

    @staticmethod
    def _assemble(xb, eb, fmt: str):
        """Feature matrix for input format `fmt`: the withheld block is zeroed; two flags say what is present."""
        n = xb.shape[0]
        xb = xb if "x" in fmt else sp.csr_matrix(xb.shape)
        eb = eb if "e" in fmt else sp.csr_matrix(eb.shape)
        flags = sp.csr_matrix(np.tile([float("x" in fmt), float("e" in fmt)], (n, 1)))
        return sp.hstack([xb, eb, flags]).tocsr()

    def fit(self, df: pd.DataFrame, target: Sequence[str], explanation_col: str = "explanation_1") -> "Simulator":
        """Train on `df` (premise, hypothesis, `explanation_col`) to predict `target` (the task model's labels).

        The rows are kept and fitted on first need: `predict_all` keeps its answers in the file cache under the
        training rows, targets, settings and the rows asked about, so a warm run fits nothing (TF-IDF and the
        logistic regression: ~3 s in each of notebooks 31 and 32)."""
        target = list(target)
        self._train = (df.reset_index(drop=True), target, explanation_col)
        self._fitted = {}
        if len(set(target)) == 1:  # a task model that always gives one label is simulated exactly by that label
            self.name = f"{self.name} (constant: the task model always says {target[0]})"
        self.n_train = len(df)
        return self

    def _fit_now(self) -> None:
        """Fit the vectorizers and the estimator on the rows `fit` kept."""
        from sklearn.linear_model import LogisticRegression

        df, target, explanation_col = self._train
        xb, eb = self._blocks(df, explanation_col, fit=True)
        X = sp.vstack([self._assemble(xb, eb, fmt) for fmt in FORMATS]).tocsr()
        weights = np.concatenate([np.full(len(df), w) for w in FORMATS.values()])
        y = np.tile(np.asarray(target, dtype=object), len(FORMATS))
        if len(set(y)) == 1:
            from sklearn.dummy import DummyClassifier

            self._fitted["est"] = DummyClassifier(strategy="constant", constant=y[0]).fit(X, y)
        else:  # saga: ~1 s on 3 × 9.5k rows where lbfgs takes ~35 s (same convex objective, looser tolerance)
            self._fitted["est"] = LogisticRegression(C=self.C, solver="saga", tol=1e-3, max_iter=1000,
                                                     random_state=self.seed).fit(X, y, sample_weight=weights)

    def predict(self, df: pd.DataFrame, fmt: str, explanation_col: str = "explanation") -> list[str]:
        """Simulated labels with inputs `fmt`: 'xe' (pair + explanation), 'x' (pair only), 'e' (explanation only)."""
        return self.predict_all(df, explanation_col)[fmt]

    def predict_all(self, df: pd.DataFrame, explanation_col: str = "explanation") -> dict[str, list[str]]:
        """{'xe', 'x', 'e'} -> simulated labels for every row of df, kept in the file cache
        (`filecache.cached_derived`) under the training rows and targets, C, seed, labels, the rows of `df` and
        `filecache.library_state` (this code and scikit-learn's version)."""
        from .. import filecache
        from ..hashing import json_hash

        if self._train is None:
            raise RuntimeError("Simulator is not fitted: call .fit(train_df, task_model_predictions) first")

        def compute() -> dict[str, list[str]]:
            if "est" not in self._fitted:
                self._fit_now()
            xb, eb = self._blocks(df, explanation_col)
            return {fmt: [str(v) for v in self._fitted["est"].predict(self._assemble(xb, eb, fmt))] for fmt in FORMATS}

        def problem(value) -> str | None:
            ok = (isinstance(value, dict) and list(value) == list(FORMATS)
                  and all(isinstance(v, list) and len(v) == len(df) and all(isinstance(x, str) for x in v)
                          for v in value.values()))
            return None if ok else "not one simulated label per pair and input format"

        train, target, train_col = self._train
        inputs = {"train": _rows_hash(train, train_col), "target": json_hash([str(t) for t in target]),
                  "asked": _rows_hash(df, explanation_col), "settings": [self.C, self.seed, list(self.labels)],
                  "formats": FORMATS}
        path = filecache.derived_path("ftc_simulator", inputs, filecache.JSON)
        return filecache.cached_derived(path, compute, "cached simulator labels", validate=problem)

    def simulate(
        self, df: pd.DataFrame, task_pred: Sequence[str], explanation_col: str = "explanation"
    ) -> pd.DataFrame:
        """Per example: the three simulated labels, Δ and leakage (`las_rows`), keyed by df's pair_id."""
        sim = self.predict_all(df, explanation_col)
        rows = las_rows(task_pred, sim["xe"], sim["x"], sim["e"])
        rows.insert(0, "pair_id", df["pair_id"].to_numpy())
        return rows


def _rows_hash(df: pd.DataFrame, explanation_col: str) -> str:
    """Hash of what the simulator reads of each row: premise, hypothesis and the explanation ('' when absent)."""
    from ..hashing import json_hash

    z = df[explanation_col].fillna("").astype(str).tolist() if explanation_col in df else [""] * len(df)
    return json_hash([df["premise"].astype(str).tolist(), df["hypothesis"].astype(str).tolist(), z])


def las_rows(
    task_pred: Sequence[str], sim_xe: Sequence[str], sim_x: Sequence[str], sim_e: Sequence[str]
) -> pd.DataFrame:
    """Per example: ŷ, the simulator's labels, Δ = 1[sim(x,e)=ŷ] − 1[sim(x)=ŷ] and leakage k = 1[sim(e)=ŷ]."""
    y, xe, x, e = (np.asarray(list(v), dtype=object) for v in (task_pred, sim_xe, sim_x, sim_e))
    return pd.DataFrame({"task_pred": y, "sim_xe": xe, "sim_x": x, "sim_e": e,
                         "delta": (xe == y).astype(int) - (x == y).astype(int), "leak": (e == y).astype(int)})


def las_score(rows: pd.DataFrame) -> dict:
    """LAS = ½ (mean Δ over non-leaking + mean Δ over leaking examples); an empty group is left out."""
    groups = {k: rows.loc[rows["leak"] == k, "delta"] for k in (0, 1)}
    means = [g.mean() for g in groups.values() if len(g)]
    return {"LAS": float(np.mean(means)) if means else np.nan, "LAS0": groups[0].mean() if len(groups[0]) else np.nan,
            "LAS1": groups[1].mean() if len(groups[1]) else np.nan, "n0": len(groups[0]), "n1": len(groups[1])}


def lra_values(robust: Sequence[bool], delta: Sequence[int]) -> np.ndarray:
    """Per example 1[F = Z]: F = 1[label survives the noise], Z = Δ."""
    return (np.asarray(list(robust), dtype=int) == np.asarray(list(delta), dtype=int)).astype(int)


def lra_score(robust: Sequence[bool], delta: Sequence[int]) -> dict:
    """LRA = mean 1[F = Z] (eqs. 2–4 of the paper)."""
    v = lra_values(robust, delta)
    return {
        "LRA": float(v.mean()) if len(v) else np.nan,
        "n": len(v),
        "robust_rate": float(np.mean(list(robust))) if len(v) else np.nan,
    }


def simulator_training_pairs(
    pool: pd.DataFrame, exclude: Sequence[str], n: int | None = None, seed: int = 0
) -> pd.DataFrame:
    """Pairs of `pool` not in `exclude` (pair ids), all or a seeded sample of `n`, for training the simulator."""
    train = pool[~pool["pair_id"].isin(set(exclude))]
    if n is not None and n < len(train):
        train = train.sample(n=n, random_state=seed)
    return train.reset_index(drop=True)


def fit_simulator(model, pool: pd.DataFrame, exclude: Sequence[str], n: int | None = None, seed: int = 0) -> Simulator:
    """A `Simulator` of `model` trained on pool pairs outside `exclude` (targets: the model's cached predictions)."""
    train = simulator_training_pairs(pool, exclude, n=n, seed=seed)
    target = model.predict(train["premise"].tolist(), train["hypothesis"].tolist())
    sim = Simulator(seed=seed, labels=tuple(model.labels))
    sim.name = f"tfidf-logreg simulator of {model.name} ({len(train)} e-SNLI test pairs)"
    sim.fit(train, target)
    return sim


def las_lra_rows(sim: Simulator, df: pd.DataFrame, task_pred: Sequence[str], robust: Sequence[bool] | None = None,
                 explanation_col: str = "explanation") -> pd.DataFrame:
    """Per example of `df`: simulated labels, Δ (= per-example LAS), leakage, and with `robust` (F) LRA_i."""
    rows = sim.simulate(df, task_pred, explanation_col)
    rows["las"] = rows["delta"].astype(float)
    if robust is not None:
        rows["robust"] = np.asarray(list(robust), dtype=bool)
        rows["lra"] = lra_values(rows["robust"], rows["delta"]).astype(float)
    return rows


def las_lra_summary(rows: pd.DataFrame) -> dict:
    """One row of aggregates over `las_lra_rows` output: how often each simulator input reproduces ŷ,
    leakage, LAS (with its two groups), the share of labels surviving the noise (F) and LRA."""
    las = las_score(rows)
    return {"pairs": len(rows), "sim(x,e) = ŷ": float((rows["sim_xe"] == rows["task_pred"]).mean()),
            "sim(x) = ŷ": float((rows["sim_x"] == rows["task_pred"]).mean()),
            "sim(e) = ŷ (leaking)": float(rows["leak"].mean()), "LAS0": las["LAS0"], "LAS1": las["LAS1"],
            "LAS": las["LAS"], "label survives noise (F)": float(rows["robust"].mean()) if "robust" in rows else np.nan,
            "LRA": float(rows["lra"].mean()) if "lra" in rows else np.nan}
