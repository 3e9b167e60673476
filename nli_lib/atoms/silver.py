"""Silver atom labels without gold: candidate formulations and the checks that decide whether one carries signal.

The paper's atom labels are an author's judgements (not released). Offline, a label for (P, aᵢ, U) must come
from a model, and the project checks every such label set with two tests that need no gold labels
(`defeasible.silver_diagnostics`):

* placebo: the score of the real update must exceed the score of an update written for another P-H pair
  (AUC of |score|; 0.5 = the scorer cannot tell U from an unrelated sentence);
* direction: nearly every example should have an atom labelled in its own direction (paper: 97%).

`SILVER_CHECKS` are the pass marks; `check` applies them. Formulations here, each returning `sub` with
`shift` (the signed score in [-1, 1] or [-2, 2]), `label` (-2..2) and `label_source`:

* `dnli_atom_scores`: the δ-NLI model on the atomic sub-problem (P, aᵢ, U), P(strengthener) - P(weakener).
  Caution: that model was fine-tuned (on δ-SNLI train) from the same e-SNLI network that validates the
  atoms, and it reads mostly U, so its direction agrees with the example's label almost by construction;
  the placebo check is the informative one;
* `update_nli_scores`: does U alone entail (+) or contradict (-) the atom? [P(e) - P(c)](U ⊨ aᵢ);
* `relevance_weighted`: the δ-NLI direction scaled by how related U is to the atom, 1 - P(neutral)(U, aᵢ)
  (an update about something else should leave the atom alone);
* the project's original `defeasible.silver_labels_nli` (the NLI belief shift of P+U against P).

>>> sub = pd.DataFrame({"shift": [0.1, 0.7, -0.3, -0.9]})
>>> to_labels(sub["shift"], (0.2, 0.6)).tolist()
[0, 2, -1, -2]
>>> check({"placebo_auc": 0.72, "examples_with_critical_%": 95.0})["passes"]
True
>>> check({"placebo_auc": 0.46, "examples_with_critical_%": 25.1})["failed"]
['placebo AUC 0.46 < 0.65', 'examples without an atom in their direction 74.9% > 10%']
"""
from __future__ import annotations

import numpy as np
import pandas as pd

#: Pass marks: a label set whose |score| separates real from placebo updates (AUC >= 0.65) and that gives
#: at most 10% of examples no atom in the example's direction (the paper's gold labels: 3%).
SILVER_CHECKS = {"placebo_auc_min": 0.65, "no_direction_max_pct": 10.0}


def to_labels(score: pd.Series, thresholds: tuple[float, float] = (0.2, 0.6)) -> pd.Series:
    """-2..2 from a signed score: |s| < t0 -> 0, t0 <= |s| < t1 -> ±1, |s| >= t1 -> ±2."""
    t0, t1 = thresholds
    mag = score.abs()
    return (np.sign(score) * np.where(mag < t0, 0, np.where(mag < t1, 1, 2))).astype(int)


def _with_labels(sub: pd.DataFrame, score, thresholds, source: str) -> pd.DataFrame:
    out = sub.copy()
    out["shift"] = np.asarray(score, dtype=float)
    out["label"] = to_labels(out["shift"], thresholds).astype(object)
    out["label_source"] = f"silver:{source}; t={thresholds[0]},{thresholds[1]}"
    return out


def dnli_atom_scores(sub: pd.DataFrame, dnli, thresholds=(0.2, 0.6)) -> pd.DataFrame:
    """P(strengthener) - P(weakener) of the δ-NLI model `dnli` on (P, aᵢ, U) (premise + atom, update)."""
    from ..models import dnli_frame

    frame = dnli_frame(sub.assign(hypothesis=sub["atom"]))
    proba = dnli.predict_proba(frame["premise"].tolist(), frame["hypothesis"].tolist())
    s, w = list(dnli.labels).index("strengthener"), list(dnli.labels).index("weakener")
    return _with_labels(sub, proba[:, s] - proba[:, w], thresholds, f"dnli-atom({dnli.name})")


def update_nli_scores(sub: pd.DataFrame, nli, thresholds=(0.2, 0.6)) -> pd.DataFrame:
    """[P(entailment) - P(contradiction)] of the NLI model with the update as premise and the atom as hypothesis."""
    proba = nli.predict_proba(sub["update"].tolist(), sub["atom"].tolist())
    e, c = list(nli.labels).index("entailment"), list(nli.labels).index("contradiction")
    return _with_labels(sub, proba[:, e] - proba[:, c], thresholds, f"update-nli({nli.name})")


def relevance_weighted(sub: pd.DataFrame, dnli, nli, thresholds=(0.2, 0.6)) -> pd.DataFrame:
    """δ-NLI direction on (P, aᵢ, U) times U's relevance to aᵢ, 1 - P(neutral | U, aᵢ)."""
    direction = dnli_atom_scores(sub, dnli, thresholds)["shift"].to_numpy()
    proba = nli.predict_proba(sub["update"].tolist(), sub["atom"].tolist())
    relevance = 1.0 - proba[:, list(nli.labels).index("neutral")]
    return _with_labels(sub, direction * relevance, thresholds,
                        f"dnli-atom x update-relevance({dnli.name}, {nli.name})")


def check(diagnostics: dict, marks: dict = SILVER_CHECKS) -> dict:
    """Does a label set pass the project's checks? {passes, failed: [reasons]} from silver_diagnostics output."""
    failed = []
    auc = diagnostics.get("placebo_auc", float("nan"))
    if not auc >= marks["placebo_auc_min"]:
        failed.append(f"placebo AUC {auc:.2f} < {marks['placebo_auc_min']:.2f}")
    missing = 100.0 - diagnostics.get("examples_with_critical_%", float("nan"))
    if not missing <= marks["no_direction_max_pct"]:
        failed.append(f"examples without an atom in their direction {missing:.1f}% > "
                      f"{marks['no_direction_max_pct']:g}%")
    return {"passes": not failed, "failed": failed}


def compare(sub: pd.DataFrame, placebo: pd.DataFrame, formulations: dict) -> pd.DataFrame:
    """One row per formulation: silver_diagnostics on `sub` (critical atoms marked) and its placebo, and `check`.

    `formulations`: name -> function(frame) returning the frame with shift and label (e.g. a lambda over
    `dnli_atom_scores`). Each is applied to the real sub-problems and to the placebo ones.
    """
    from .defeasible import mark_critical, silver_diagnostics

    rows = []
    for name, fn in formulations.items():
        real = fn(sub)
        labelled = real["label"].apply(lambda v: v is not None and v != "invalid").astype(bool)  # bool if empty
        real = mark_critical(real[labelled].reset_index(drop=True))
        diag = {"placebo_auc": float("nan"), **silver_diagnostics(real, fn(placebo))}  # nan: nothing to compare
        verdict = check(diag)
        rows.append({"formulation": name, "label_source": real["label_source"].iloc[0] if len(real) else "",
                     **diag, "passes": verdict["passes"], "failed_checks": "; ".join(verdict["failed"])})
    return pd.DataFrame(rows)
