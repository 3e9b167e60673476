"""§4 Atoms in traditional NLI: logical consistency between a model's full (P, H) label and its atom labels.

A model judges (1) the full pair (P, H), (2) H ⊨ aᵢ for every generated atom (an atom is *valid for that
model* when it predicts entailment), (3) (P, aᵢ) for its valid atoms. Rules of §4.1, on the model's own
labels:

1. full entailment     -> every valid aᵢ is entailed by P;
2. full contradiction  -> at least one valid aᵢ contradicts P;
3. full neutral        -> at least one valid aᵢ is neutral and none contradicts P (all others neutral or entailed).

Label induction (atomic inference, Table 2 last column): all aᵢ entailed -> entailment; any aᵢ contradicted ->
contradiction; otherwise neutral. Completeness (Appendix A.1, Table 6): an example's verdict depends on the
atoms covering H when the full prediction is contradiction, or neutral with every valid atom entailed.

Worked example (Table 1, row 4; gold and model say contradiction):

>>> is_consistent("contradiction", ["entailment", "contradiction", "entailment"])
True
>>> induce_label(["entailment", "contradiction", "entailment"])
'contradiction'
>>> is_consistent("neutral", ["entailment", "entailment"]), depends_on_completeness("neutral", ["entailment"])
(False, True)

Examples where the model admits no atom as valid: rule 1 holds vacuously, rules 2 and 3 fail, and the
induced label is entailment (an empty conjunction). `consistency_frame(..., empty="exclude")` drops them
instead; the tables report how many there were either way.

A model that gave no answer (label None: a failed LLM call, an unparsable answer) for the full pair or for one
of an example's atoms leaves that example unjudged: `unanswered` is True, its verdicts are NA, and Tables 2
and 6 are computed over the judged examples with the unanswered ones counted beside them.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..config import LABELS

E, N, C = LABELS


def is_consistent(full: str, atom_labels: Sequence[str]) -> bool:
    """§4.1 rules: is the full label consistent with the (P, aᵢ) labels of the valid atoms?"""
    labels = list(atom_labels)
    if full == E:
        return all(x == E for x in labels)
    if full == C:
        return any(x == C for x in labels)
    if full == N:
        return any(x == N for x in labels) and not any(x == C for x in labels)
    raise ValueError(f"unknown NLI label {full!r}")


def induce_label(atom_labels: Sequence[str]) -> str:
    """Atomic inference: all entailed -> E; any contradiction -> C; else N (empty list -> E, vacuously)."""
    labels = list(atom_labels)
    if any(x == C for x in labels):
        return C
    if all(x == E for x in labels):
        return E
    return N


def depends_on_completeness(full: str, atom_labels: Sequence[str]) -> bool:
    """Appendix A.1: the verdict needs complete atoms for predicted C, and for predicted N with all atoms E."""
    labels = list(atom_labels)
    return full == C or (full == N and all(x == E for x in labels))


# --------------------------------------------------------------------------------------------------------------
# Running a model over examples and atoms
# --------------------------------------------------------------------------------------------------------------

def atom_judgements(model, rows: pd.DataFrame) -> pd.DataFrame:
    """The model's H ⊨ aᵢ judgement and, for atoms it admits, its (P, aᵢ) label.

    `rows`: one per (example, atom) with pair_id, premise, hypothesis, atom. Adds h_pred, valid (h_pred ==
    entailment) and p_pred (NaN for atoms the model rejects). Distinct pairs are scored once.
    """
    out = rows.copy()
    ha = out[["hypothesis", "atom"]].drop_duplicates()
    ha["h_pred"] = model.predict(ha["hypothesis"].tolist(), ha["atom"].tolist()) if len(ha) else []
    out = out.merge(ha, on=["hypothesis", "atom"], how="left")
    out["valid"] = out["h_pred"] == E  # an unanswered H ⊨ a (None) admits nothing; `unanswered` records it
    pa = out.loc[out["valid"], ["premise", "atom"]].drop_duplicates()
    pa["p_pred"] = model.predict(pa["premise"].tolist(), pa["atom"].tolist()) if len(pa) else []
    out = out.merge(pa, on=["premise", "atom"], how="left")
    out.loc[~out["valid"], "p_pred"] = np.nan  # the same (P, a) may be admitted for another hypothesis
    out["unanswered"] = out["h_pred"].isna() | (out["valid"] & out["p_pred"].isna())
    out["model"] = model.name
    return out


def consistency_frame(full: pd.DataFrame, judged: pd.DataFrame, empty: str = "literal") -> pd.DataFrame:
    """Per example: gold label, full prediction, atom labels, consistency, induced label, completeness.

    `full`: pair_id, label, pred (the model's full predictions). `judged`: atom_judgements output.
    `empty`: 'literal' applies the rules to examples without valid atoms; 'exclude' drops them.
    """
    valid = judged[judged["valid"]].groupby("pair_id")["p_pred"].agg(list)
    n_atoms = judged.groupby("pair_id")["atom"].size()
    gaps = judged[judged["unanswered"]].groupby("pair_id").size() if "unanswered" in judged else pd.Series(dtype=int)
    out = full[["pair_id", "premise", "hypothesis", "label", "pred"]].copy()
    out["atom_labels"] = out["pair_id"].map(valid).apply(lambda v: v if isinstance(v, list) else [])
    out["n_atoms"] = out["pair_id"].map(n_atoms).fillna(0).astype(int)
    out["n_valid"] = out["atom_labels"].apply(len)
    if empty == "exclude":
        out = out[out["n_valid"] > 0].copy()
    elif empty != "literal":
        raise ValueError("empty must be 'literal' or 'exclude'")
    out["correct"] = out["pred"] == out["label"]
    out["unanswered"] = out["pred"].isna() | (out["pair_id"].map(gaps).fillna(0) > 0)
    judged_ = ~out["unanswered"]
    verdict = lambda fn, *cols: pd.array([fn(*v) if ok else pd.NA for ok, *v in  # noqa: E731
                                          zip(judged_, *(out[c] for c in cols))], dtype=object)
    out["consistent"] = pd.array(verdict(is_consistent, "pred", "atom_labels"), dtype="boolean")
    out["induced"] = verdict(induce_label, "atom_labels")
    out["induced_correct"] = pd.array([pd.NA if i is pd.NA else i == g for i, g in zip(out["induced"], out["label"])],
                                      dtype="boolean")
    out["completeness_dependent"] = pd.array(verdict(depends_on_completeness, "pred", "atom_labels"), dtype="boolean")
    return out.reset_index(drop=True)


def _pct(mask: pd.Series) -> float:
    return 100.0 * float(mask.astype(bool).mean()) if len(mask) else float("nan")


def _judged(df: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The examples with every answer the rules need, and how many were left out for a missing answer."""
    if "unanswered" not in df:
        return df, 0
    gap = df["unanswered"].astype(bool)
    return df[~gap], int(gap.sum())


def table2(frames: Mapping[str, pd.DataFrame], tiers: Mapping[str, str] | str = "offline") -> pd.DataFrame:
    """Table 2: accuracy, overall consistency, on correct/incorrect, by predicted label, induced accuracy (%)."""
    rows = []
    for model, df in frames.items():
        df, unanswered = _judged(df)
        row = {"model": model, "tier": tiers if isinstance(tiers, str) else tiers[model], "n": len(df),
               "unanswered": unanswered, "full_accuracy": _pct(df["correct"]), "consistency": _pct(df["consistent"]),
               "consistency_correct": _pct(df.loc[df["correct"], "consistent"]),
               "consistency_incorrect": _pct(df.loc[~df["correct"], "consistent"])}
        for lab in LABELS:
            row[f"consistency_pred_{lab}"] = _pct(df.loc[df["pred"] == lab, "consistent"])
        row["induced_accuracy"] = _pct(df["induced_correct"])
        row["no_valid_atoms"] = int((df["n_valid"] == 0).sum())
        rows.append(row)
    return pd.DataFrame(rows)


def table6(frames: Mapping[str, pd.DataFrame], tiers: Mapping[str, str] | str = "offline") -> pd.DataFrame:
    """Table 6: % of examples whose consistency verdict depends on the completeness of the atoms."""
    rows = []
    for m, df in frames.items():
        df, unanswered = _judged(df)
        rows.append({"model": m, "tier": tiers if isinstance(tiers, str) else tiers[m], "n": len(df),
                     "unanswered": unanswered, "completeness_dependent_pct": _pct(df["completeness_dependent"])})
    return pd.DataFrame(rows)


def run_consistency(model, examples: pd.DataFrame, atom_rows: pd.DataFrame, empty: str = "literal"):
    """Full predictions + atom judgements + per-example consistency for one model -> (per-example, per-atom)."""
    full = model.predict_frame(examples)
    judged = atom_judgements(model, atom_rows)
    return consistency_frame(full, judged, empty=empty), judged


# --------------------------------------------------------------------------------------------------------------
# Paper profile: prompted LLMs as NLI models (Prompt B.1, 12 balanced SNLI-dev exemplars)
# --------------------------------------------------------------------------------------------------------------

def snli_test_sample(n: int = 1000, seed: int = 0) -> pd.DataFrame:
    """SNLI-TEST-SAMPLE: `n` seeded random SNLI test pairs (SNLI test = e-SNLI test, 9,824 pairs)."""
    from ..data.loaders import load_esnli

    test = load_esnli("test")
    return test.sample(n=min(n, len(test)), random_state=seed).reset_index(drop=True)


def balanced_shots(
    df: pd.DataFrame, n: int, labels: Sequence[str], seed: int = 0, label_col: str = "label"
) -> list[dict]:
    """`n` seeded rows evenly split over `labels` (interleaved so no label dominates the prompt's end)."""
    per = n // len(labels)
    picked = [df[df[label_col] == lab].sample(n=per, random_state=seed) for lab in labels]
    rows = []
    for i in range(per):
        for frame in picked:
            rows.append(frame.iloc[i].to_dict())
    return rows


def snli_shots(n: int = 12, seed: int = 0) -> list[dict]:
    """12 SNLI dev exemplars for Prompt B.1, 4 per label, with their first e-SNLI explanation."""
    from ..data.loaders import load_esnli

    dev = load_esnli("dev")
    rows = balanced_shots(dev, n, LABELS, seed=seed)
    return [{"premise": r["premise"], "hypothesis": r["hypothesis"], "label": r["label"],
             "explanation": str(r.get("explanation_1", "")).strip().capitalize()} for r in rows]


# --------------------------------------------------------------------------------------------------------------
# Per-example rows for the explorer
# --------------------------------------------------------------------------------------------------------------

def consistency_records(per_example: Mapping[str, pd.DataFrame], per_atom: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per (model, SNLI example): texts, gold, full and induced labels, consistency, and the atoms with
    the model's two judgements ('atom [H⊨a: entailment → P: neutral]'); the rows behind Tables 2 and 6."""
    frames = []
    for model, per in per_example.items():
        judged = per_atom[model]
        text = [f"{a} [H⊨a: {h} → P: {p if v else '-'}]" for a, h, p, v in
                zip(judged["atom"], judged["h_pred"], judged["p_pred"], judged["valid"])]
        atoms = judged.assign(text=text).groupby("pair_id")["text"].agg(" | ".join).rename("atoms")
        f = per.drop(columns=["atom_labels"]).join(atoms, on="pair_id")
        f["outcome"] = ["unanswered" if pd.isna(c) else "consistent" if c else "inconsistent" for c in f["consistent"]]
        frames.append(f.assign(model=model))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
