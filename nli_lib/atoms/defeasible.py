"""§5 Atoms in defeasible inference: atom labels, critical atoms, Table 3, and the δ-SNLI-TEST pipeline.

A δ-SNLI atomic sub-problem is (P, aᵢ, U): does U strengthen, weaken or leave unchanged the belief in aᵢ?
Labels use the paper's five-point scale -2 (strongly weakens) .. 0 (no effect) .. +2 (strongly strengthens),
plus 'invalid'. Label sources, always named in the `label_source` column:

* gold: a CSV in the documented format (`read_gold_labels`; example: data/fixtures/atoms_gold_labels_example.csv),
  e.g. written by the notebook's annotation tool (`annotate.AnnotationTool`);
* silver, paper profile: Prompt C.2 (more / less / none -> +1 / -1 / 0; no magnitude, so every atom with the
  example's polarity is critical);
* silver, offline: `silver_labels_nli`, the NLI model's belief shift (documented below).

Critical atoms (§5.2): among an example's valid, labelled atoms, those whose label has the example's polarity
(+ for strengtheners, - for weakeners) with the largest magnitude; ties give several critical atoms, and an
example with no atom of its polarity has none.

>>> df = pd.DataFrame({"pair_id": ["x"] * 5, "update_type": ["strengthener"] * 5, "label": [2, "invalid", 0, 1, 2]})
>>> mark_critical(df)["critical"].tolist()        # Table 1 row 2: a1 and a5 are critical
[True, False, False, False, True]
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..evaluation import wilcoxon_rho
from ..llm import PROMPTS
from .exemplars import atom_shots, dnli_shots

SCALE = (-2, -1, 0, 1, 2)
SCALE_NAMES = {-2: "strongly weakens", -1: "weakens", 0: "no effect", 1: "strengthens", 2: "strongly strengthens"}
GOLD_REQUIRED = ("atom", "label")
GOLD_KEYS = ("pair_id",)  # or all of premise, hypothesis, update
GOLD_COLUMNS = ("pair_id", "premise", "hypothesis", "update", "update_type", "atom", "label", "annotator", "note")
THREE_WAY = ("strengthener", "weakener", "no effect")


# --------------------------------------------------------------------------------------------------------------
# Labels: parsing, gold CSV files
# --------------------------------------------------------------------------------------------------------------

def parse_label(value) -> int | str | None:
    """-2..2 (ints, '+2', '−1', floats like 2.0) or 'invalid'; blank -> None; anything else raises ValueError.

    >>> [parse_label(v) for v in ["+2", "-1", 0, "2.0", "invalid", "", "−2"]]
    [2, -1, 0, 2, 'invalid', None, -2]
    """
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    text = str(value).strip().replace("−", "-").replace("–", "-")
    if not text:
        return None
    if text.lower() == "invalid":
        return "invalid"
    try:
        number = float(text)
    except ValueError:
        raise ValueError(f"atom label {value!r} is not -2..+2 or 'invalid'") from None
    if number != int(number) or int(number) not in SCALE:
        raise ValueError(f"atom label {value!r} is not -2..+2 or 'invalid'")
    return int(number)


def _key(text) -> str:
    return re.sub(r"\s+", " ", str(text)).strip().lower()


def read_gold_labels(path: str | Path, dnli: pd.DataFrame | None = None) -> pd.DataFrame:
    """Read atom labels in the companion's gold CSV format and join them to δ-SNLI rows.

    Format (UTF-8 CSV, header row; see data/fixtures/atoms_gold_labels_example.csv):

    ===========  ==================================================================================
    pair_id      δ-SNLI test id as `load_dnli` gives it (dnli-snli-test-NNNNNN); or leave it empty and
                 give premise, hypothesis and update (matched case- and whitespace-insensitively)
    atom         the atom text (any atoms: the file defines the atom set it labels)
    label        -2, -1, 0, +1, +2 (strongly weakens .. strongly strengthens) or 'invalid'
    annotator    optional: who labelled it
    note         optional
    ===========  ==================================================================================

    With `dnli` (load_dnli output) rows are matched to δ-SNLI and get premise/hypothesis/update/update_type;
    unmatched rows raise ValueError naming them. Blank labels are dropped (unfinished annotation).
    """
    raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in GOLD_REQUIRED if c not in raw.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; required {GOLD_REQUIRED} plus pair_id or "
                         "premise/hypothesis/update")
    if "pair_id" not in raw.columns and not {"premise", "hypothesis", "update"} <= set(raw.columns):
        raise ValueError(f"{path}: needs a pair_id column or premise, hypothesis and update columns")
    out = raw.copy()
    for col in GOLD_COLUMNS:
        if col not in out.columns:
            out[col] = ""
    labels = []
    for i, v in enumerate(out["label"]):
        try:
            labels.append(parse_label(v))
        except ValueError as exc:
            raise ValueError(f"{path}:{i + 2}: {exc}") from None
    out["label"] = labels
    out = out[out["label"].notna() & (out["atom"].str.strip() != "")].copy()
    out["label_source"] = f"gold:{Path(path).name}"
    if dnli is not None:
        out = _match_dnli(out, dnli, path)
    return out[list(GOLD_COLUMNS) + ["label_source"]].reset_index(drop=True)


def _match_dnli(gold: pd.DataFrame, dnli: pd.DataFrame, path) -> pd.DataFrame:
    by_id = dnli.set_index("pair_id")
    by_text = {(_key(p), _key(h), _key(u)): pid for pid, p, h, u in
               zip(dnli["pair_id"], dnli["premise"], dnli["hypothesis"], dnli["update"])}
    ids, unmatched = [], []
    for i, r in gold.iterrows():
        pid = r["pair_id"].strip()
        if not pid:
            pid = by_text.get((_key(r["premise"]), _key(r["hypothesis"]), _key(r["update"])), "")
        if pid not in by_id.index:
            unmatched.append(i + 2)
        ids.append(pid)
    if unmatched:
        raise ValueError(
            f"{path}: rows {unmatched[:10]} match no δ-SNLI example (pair_id or premise/hypothesis/update)"
        )
    gold = gold.assign(pair_id=ids)
    for col in ("premise", "hypothesis", "update", "update_type"):
        gold[col] = gold["pair_id"].map(by_id[col])
    return gold


def write_labels(labels: pd.DataFrame, path: str | Path) -> Path:
    """Write labels in the gold CSV format (labels as -2..+2 with sign, or 'invalid')."""
    out = labels.copy()
    for col in GOLD_COLUMNS:
        if col not in out.columns:
            out[col] = ""
    out["label"] = out["label"].apply(lambda v: v if isinstance(v, str) else f"{int(v):+d}" if v != 0 else "0")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    out[list(GOLD_COLUMNS)].to_csv(path, index=False)
    return path


def to_three_way(label) -> str | None:
    """-2..-1 -> weakener, 0 -> no effect, 1..2 -> strengthener; 'invalid'/None -> None."""
    if label is None or isinstance(label, str) or (isinstance(label, float) and np.isnan(label)):
        return None
    return "strengthener" if label > 0 else "weakener" if label < 0 else "no effect"


# --------------------------------------------------------------------------------------------------------------
# Sub-problems and silver labels
# --------------------------------------------------------------------------------------------------------------

def subproblems(dnli: pd.DataFrame, validated: pd.DataFrame) -> pd.DataFrame:
    """(P, aᵢ, U) rows: every δ-SNLI example × the valid atoms of its (P, H)."""
    valid = validated.loc[validated["valid"], ["premise", "hypothesis", "atom"]].drop_duplicates()
    cols = ["pair_id", "premise", "hypothesis", "update", "update_type"]
    return dnli[cols].merge(valid, on=["premise", "hypothesis"], how="inner").reset_index(drop=True)


def silver_labels_nli(sub: pd.DataFrame, nli, thresholds: tuple[float, float] = (0.2, 0.6)) -> pd.DataFrame:
    """Offline silver labels: how much U shifts the NLI model's belief in aᵢ given P.

    belief(x, a) = P(entailment | x, a) - P(contradiction | x, a) in [-1, 1];
    shift = belief(P + " " + U, a) - belief(P, a) in [-2, 2];
    label = 0 if |shift| < t0, ±1 if t0 <= |shift| < t1, ±2 if |shift| >= t1 (sign of the shift).

    An estimate, not an annotation: it inherits the NLI model's errors, and U's effect on a is read through
    an entailment model that was never trained on defeasible updates. Measured with `silver_diagnostics`, the
    offline MiniLM's shift barely separates real updates from placebo ones (AUC ≈ 0.5) and correlates only
    weakly with the example's direction: use gold labels for conclusions. Adds shift, label, label_source.
    """
    t0, t1 = thresholds
    e, c = list(nli.labels).index("entailment"), list(nli.labels).index("contradiction")
    pa = sub[["premise", "atom"]].drop_duplicates()
    before = nli.predict_proba(pa["premise"].tolist(), pa["atom"].tolist())
    pa = pa.assign(belief_before=before[:, e] - before[:, c])
    pua = sub[["premise", "update", "atom"]].drop_duplicates()
    after = nli.predict_proba((pua["premise"] + " " + pua["update"]).tolist(), pua["atom"].tolist())
    pua = pua.assign(belief_after=after[:, e] - after[:, c])
    out = sub.merge(pa, on=["premise", "atom"], how="left").merge(pua, on=["premise", "update", "atom"], how="left")
    out["shift"] = out["belief_after"] - out["belief_before"]
    mag = out["shift"].abs()
    out["label"] = (np.sign(out["shift"]) * np.where(mag < t0, 0, np.where(mag < t1, 1, 2))).astype(int)
    out["label"] = out["label"].astype(object)
    out["label_source"] = f"silver:nli-belief-shift({nli.name}; t={t0},{t1})"
    return out


def _chat_parsed(llm, template: str, rows: pd.DataFrame, hypothesis_col: str, shots: Sequence[dict]) -> list:
    """One parsed C.1 / C.2 answer (`Parsed`) per row; failures and unparsable answers are counted by the client.

    Exemplars about the row's own premise are left out of its prompt. The default exemplars come from δ-SNLI
    train/dev (`exemplars`), whose premises never occur in test; the guard covers exemplars a caller passes."""
    t = PROMPTS[template]
    results = llm.chat_many([t.render(context=p, hypothesis=h, evidence=u,
                                      shots=[s for s in shots if _key(s["premise"]) != _key(p)])
                             for p, h, u in zip(rows["premise"], rows[hypothesis_col], rows["update"])], progress=False)
    return llm.parse_many(t, results)


def _chat_labels(llm, template: str, rows: pd.DataFrame, hypothesis_col: str, shots: Sequence[dict]) -> list:
    """One C.1 / C.2 label per row; None where the call failed or the answer did not parse (never a guess)."""
    return [p.value if p.ok else None for p in _chat_parsed(llm, template, rows, hypothesis_col, shots)]


def silver_labels_llm(sub: pd.DataFrame, llm, shots: Sequence[dict] | None = None) -> pd.DataFrame:
    """Paper-profile silver labels with Prompt C.2: more/less/none -> +1/-1/0 ('invalid' kept).

    A failed call or an unparsable answer leaves the label None with the reason in `label_error` (counted in
    the call ledger); `prepare_dsnli` sets such sub-problems aside in `DSNLIAtoms.unlabeled`.
    """
    shots = atom_shots() if shots is None else shots
    parsed = _chat_parsed(llm, "atoms.C2", sub, "atom", shots)
    conv = {"strengthener": 1, "weakener": -1, "no effect": 0, "invalid": "invalid"}
    out = sub.copy()
    out["label"] = pd.Series([conv.get(p.value) if p.ok else None for p in parsed], index=out.index, dtype=object)
    out["label_error"] = [None if p.ok else p.error for p in parsed]
    out["label_source"] = f"silver:C.2({getattr(llm, 'model', 'llm')}; ±1/0 only)"
    return out


# --------------------------------------------------------------------------------------------------------------
# Critical atoms
# --------------------------------------------------------------------------------------------------------------

def is_valid_label(labels: pd.Series) -> pd.Series:
    """True where an atom label is not 'invalid', as a boolean mask even for no rows: `Series.apply` on an
    empty Series returns dtype object, and indexing a frame with that selects columns (none), not rows - the
    paper tier's KeyError 'label' when no atom of a sample passed validation.

    >>> is_valid_label(pd.Series([1, "invalid", 0], dtype=object)).tolist()
    [True, False, True]
    >>> is_valid_label(pd.Series([], dtype=object)).dtype
    dtype('bool')
    """
    return labels.apply(lambda v: not (isinstance(v, str) and v == "invalid")).astype(bool)


def _numeric(label) -> float:
    if label is None or isinstance(label, str):
        return np.nan
    try:
        return float(label)
    except (TypeError, ValueError):
        return np.nan


def mark_critical(df: pd.DataFrame, label_col: str = "label") -> pd.DataFrame:
    """Add `critical`: the valid atoms with the strongest label of the example's polarity (ties all critical)."""
    out = df.copy()
    value = out[label_col].apply(_numeric)
    polarity = np.where(out["update_type"] == "strengthener", 1.0, -1.0)
    signed = value * polarity  # > 0 when the atom moves with the example's label
    out["_signed"] = signed.where(signed > 0)
    best = out.groupby("pair_id")["_signed"].transform("max")
    out["critical"] = (out["_signed"].notna() & (out["_signed"] == best)).astype(bool)
    return out.drop(columns="_signed")


def example_summary(labeled: pd.DataFrame) -> pd.DataFrame:
    """Per example: atoms, valid labelled atoms, critical atoms, label counts -2..+2, weakener share."""
    lab = labeled.copy()
    lab["value"] = lab["label"].apply(_numeric)
    valid = lab[lab["value"].notna()]
    g = valid.groupby("pair_id")
    out = pd.DataFrame({"n_atoms": lab.groupby("pair_id").size(), "n_valid": g.size(),
                        "n_critical": g["critical"].sum()}).fillna(0)
    for v in SCALE:
        out[f"n_{v:+d}" if v else "n_0"] = valid.assign(hit=valid["value"] == v).groupby("pair_id")["hit"].sum()
    out = out.fillna(0).astype(int)
    out["weakener_share"] = out[["n_-2", "n_-1"]].sum(axis=1) / out["n_valid"].replace(0, np.nan)
    out["strengthener_share"] = out[["n_+1", "n_+2"]].sum(axis=1) / out["n_valid"].replace(0, np.nan)
    out["critical_share"] = out["n_critical"] / out["n_valid"].replace(0, np.nan)
    meta = labeled.drop_duplicates("pair_id").set_index("pair_id")[["update_type"]]
    return meta.join(out, how="right").reset_index()


# --------------------------------------------------------------------------------------------------------------
# Model predictions on full examples and on atoms
# --------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DefeasiblePredictor:
    """A δ-NLI model for Table 3: full examples (binary) and atomic sub-problems (binary or 3-way)."""

    name: str  # model name
    tier: str  # offline | paper
    kind: str  # "encoder" (binary, fine-tuned) | "llm" (C.1 full / C.2 atoms)
    model: object  # a Classifier over dnli_frame rows, or a chat client
    full_shots: tuple = ()  # C.1 exemplars (llm)
    atom_shots: tuple = ()  # C.2 exemplars (llm)
    train_set: str = ""  # what an encoder was fine-tuned on (`pipeline.DeltaTrain.name`); '' for a prompted LLM

    @property
    def ternary(self) -> bool:
        return self.kind == "llm"

    def predict_full(self, dnli: pd.DataFrame) -> list:
        if self.kind == "encoder":
            from ..models import dnli_frame

            return self.model.predict(*_cols(dnli_frame(dnli)))
        return _chat_labels(self.model, "atoms.C1", dnli, "hypothesis", self.full_shots)

    def predict_atoms(self, sub: pd.DataFrame) -> list:
        if self.kind == "encoder":
            from ..models import dnli_frame

            return self.model.predict(*_cols(dnli_frame(sub.assign(hypothesis=sub["atom"]))))
        return _chat_labels(self.model, "atoms.C2", sub, "atom", self.atom_shots)


def _cols(frame: pd.DataFrame):
    return frame["premise"].tolist(), frame["hypothesis"].tolist()


def encoder_predictor(model, train_set: str = "") -> DefeasiblePredictor:
    """A fine-tuned δ-NLI classifier (labels strengthener/weakener) as a Table 3 model; `train_set` names the
    data it was fine-tuned on (Table 3's `train_set` column)."""
    return DefeasiblePredictor(model.name, model.tier, "encoder", model, train_set=train_set)


def llm_predictor(llm, full_shots: Sequence[dict] | None = None, atom_shots_: Sequence[dict] | None = None,
                  seed: int = 0) -> DefeasiblePredictor:
    """A prompted LLM: C.1 with 10 balanced δ-SNLI train exemplars (full examples), C.2 with 12 balanced atom
    exemplars of δ-SNLI train/dev examples (`exemplars.atom_shots`)."""
    return DefeasiblePredictor(f"{llm.model} (C.1/C.2)", "paper", "llm", llm,
                               tuple(dnli_shots(10, seed) if full_shots is None else full_shots),
                               tuple(atom_shots(seed=seed) if atom_shots_ is None else atom_shots_))


def predict(predictor: DefeasiblePredictor, dnli: pd.DataFrame, labeled: pd.DataFrame):
    """(full rows: pair_id, label, pred, correct; atom rows: labeled + pred, gold3, correct)."""
    full = dnli[["pair_id", "premise", "hypothesis", "update", "update_type"]].copy()
    full["label"] = full["update_type"]
    full["pred"] = predictor.predict_full(full)
    full["answered"] = full["pred"].notna()
    full["correct"] = full["pred"] == full["label"]  # an unanswered example (pred None) counts as wrong
    atoms = labeled[labeled["label"].apply(_numeric).notna()].copy()
    atoms["pred"] = predictor.predict_atoms(atoms) if len(atoms) else []
    atoms["answered"] = atoms["pred"].notna()
    atoms["gold3"] = atoms["label"].apply(to_three_way)
    atoms["correct"] = atoms["pred"] == atoms["gold3"]
    atoms["scored"] = True if predictor.ternary else atoms["gold3"] != "no effect"
    full["model"] = atoms["model"] = predictor.name
    return full, atoms


def table3_row(name: str, tier: str, full: pd.DataFrame, atoms: pd.DataFrame, ternary: bool) -> dict:
    """One Table 3 row (percentages) from `predict` outputs.

    Atom and critical-atom accuracy are over scored sub-problems (binary models: non-neutral atoms only).
    P(full ✓ | critical ✓) is full accuracy over examples whose scored critical sub-problems are *all* right,
    P(full ✓ | critical ✗) over examples with at least one of them wrong (§5.2); examples without a critical atom
    enter neither. A model's unanswered examples and sub-problems (failed call, unparsable answer) count as wrong;
    `unanswered_full` and `unanswered_atoms` say how many there were.
    """
    scored = atoms[atoms["scored"]]
    crit = scored[scored["critical"]]
    per_ex = crit.groupby("pair_id")["correct"].all()  # all critical sub-problems of the example solved?
    full_ok = full.set_index("pair_id")["correct"]
    ok = full_ok.reindex(per_ex.index[per_ex.values]).dropna().astype(bool)
    bad = full_ok.reindex(per_ex.index[~per_ex.values]).dropna().astype(bool)
    pct = lambda s: 100.0 * float(s.mean()) if len(s) else float("nan")  # noqa: E731
    return {"model": name, "tier": tier, "n_full": len(full), "full_accuracy": pct(full["correct"]),
            "n_atoms": len(scored), "atom_accuracy": pct(scored["correct"]), "n_critical": len(crit),
            "critical_accuracy": pct(crit["correct"]), "p_full_given_critical_correct": pct(ok),
            "p_full_given_critical_wrong": pct(bad), "n_examples_critical_correct": len(ok),
            "n_examples_critical_wrong": len(bad),
            "unanswered_full": int((~full["answered"]).sum()) if "answered" in full else 0,
            "unanswered_atoms": int((~scored["answered"]).sum()) if "answered" in scored else 0,
            "atoms_scored": "all (3-way)" if ternary else "non-neutral only (binary model)*"}


def table3(results: Mapping[str, tuple], predictors: Mapping[str, DefeasiblePredictor], label_source: str,
           self_labelled: Sequence[str] = ()) -> pd.DataFrame:
    """Table 3 from {name: (full, atoms)} `predict` outputs; every row carries the label source and, in
    `train_set`, what the model was fine-tuned on (prompted LLMs: 'none (prompted)').

    Models in `self_labelled` produced the (silver) labels themselves: their atom-level columns would only
    measure agreement with their own answers, so they are blanked (NaN) and flagged.
    """
    rows = []
    for n, (f, a) in results.items():
        row = table3_row(n, predictors[n].tier, f, a, predictors[n].ternary)
        if n in set(self_labelled):
            for col in (
                "atom_accuracy",
                "critical_accuracy",
                "p_full_given_critical_correct",
                "p_full_given_critical_wrong",
            ):
                row[col] = np.nan
            row["atoms_scored"] = "not scored: this model produced the silver labels"
        row["train_set"] = predictors[n].train_set or "none (prompted)"
        rows.append(row)
    return pd.DataFrame(rows).assign(label_source=label_source)


# --------------------------------------------------------------------------------------------------------------
# Dataset statistics (Table 5, δ-SNLI column) and the end-to-end pipeline
# --------------------------------------------------------------------------------------------------------------

def dsnli_statistics(dnli: pd.DataFrame, validated: pd.DataFrame, labeled: pd.DataFrame) -> dict:
    """Table 5, δ-SNLI column: counts and label shares of the sub-problems (labels from `labeled`)."""
    value = labeled["label"].apply(_numeric)
    valid = labeled[value.notna()]
    v = value[value.notna()]
    strat = (dnli["update_type"] == "strengthener").mean() * 100
    return {
        "delta-SNLI test examples": len(dnli),
        "delta-SNLI % strengtheners (label)": round(strat, 1),
        "delta-SNLI % weakeners (label)": round(100 - strat, 1),
        "delta-SNLI unique hypotheses": dnli["hypothesis"].nunique(),
        "delta-SNLI unique generated atoms": validated["atom"].nunique(),
        "delta-SNLI unique valid atoms": valid["atom"].nunique(),
        "delta-SNLI unique atomic sub-problems": len(valid[["pair_id", "atom"]].drop_duplicates()),
        "delta-SNLI % strengtheners (atoms)": round(100 * float((v > 0).mean()), 1) if len(v) else np.nan,
        "delta-SNLI % weakeners (atoms)": round(100 * float((v < 0).mean()), 1) if len(v) else np.nan,
        "delta-SNLI % no effect (atoms)": round(100 * float((v == 0).mean()), 1) if len(v) else np.nan,
        "delta-SNLI unique critical atoms before grouping": labeled.loc[labeled["critical"], "atom"].nunique(),
        "delta-SNLI examples with a valid atom": valid["pair_id"].nunique(),
    }


def dsnli_test(quick: bool = False, seed: int = 0, groups: int = 20) -> pd.DataFrame:
    """δ-SNLI-TEST (1,837 examples, impossible updates removed); quick: all updates of `groups` seeded P-H pairs."""
    from ..data.loaders import load_dnli

    df = load_dnli("snli", "test", drop_impossible=True)
    if quick:
        pairs = df[["premise", "hypothesis"]].drop_duplicates().sample(n=groups, random_state=seed)
        df = df.merge(pairs, on=["premise", "hypothesis"])
    return df.reset_index(drop=True)


@dataclass
class DSNLIAtoms:
    """Everything behind the δ-SNLI analyses: examples, generated/validated atoms, labelled sub-problems."""

    examples: pd.DataFrame  # δ-SNLI-TEST rows used
    generated: pd.DataFrame  # generate_atoms output for the hypotheses
    validated: pd.DataFrame  # (P, H, atom) rows with h_entails / p_entails / valid
    labeled: pd.DataFrame  # valid sub-problems with label, label_source and critical
    label_source: str  # where the atom labels came from
    generator: str  # atom generator name
    validator: str  # NLI model used for pruning
    unlabeled: pd.DataFrame = field(default_factory=pd.DataFrame)  # sub-problems without a label (+ label_error)


def prepare_dsnli(generator, validator, examples: pd.DataFrame, gold: pd.DataFrame | None = None,
                  silver_llm=None, thresholds: tuple[float, float] = (0.2, 0.6)) -> DSNLIAtoms:
    """Generate, validate and label δ-SNLI atoms, then mark critical atoms.

    Label source, in order of preference: `gold` (read_gold_labels output: its atoms and labels are used as
    they are, 'invalid' rows dropped), `silver_llm` (Prompt C.2), otherwise the NLI belief shift of `validator`.
    """
    from .generate import generate_atoms, usable, validate_atoms

    ph = examples[["premise", "hypothesis"]].drop_duplicates()
    generated = generate_atoms(ph["hypothesis"].tolist(), generator)
    rows = ph.merge(usable(generated).rename(columns={"sentence": "hypothesis"}), on="hypothesis")
    validated = validate_atoms(rows, validator, check_premise=True)
    if gold is not None:
        g = gold[gold["pair_id"].isin(set(examples["pair_id"]))]
        labeled = g[is_valid_label(g["label"])].copy()
        source = labeled["label_source"].iloc[0] if len(labeled) else "gold (empty)"
    else:
        sub = subproblems(examples, validated)
        labeled = (silver_labels_llm(sub, silver_llm) if silver_llm is not None
                   else silver_labels_nli(sub, validator, thresholds))
        missing = labeled["label"].apply(_unlabeled).astype(bool)  # bool even when empty (see is_valid_label)
        unlabeled = labeled[missing].reset_index(drop=True)
        labeled = labeled[~missing & is_valid_label(labeled["label"])]
        source = labeled["label_source"].iloc[0] if len(labeled) else "silver (empty)"
    labeled = mark_critical(labeled.reset_index(drop=True))
    return DSNLIAtoms(examples, generated, validated, labeled, source, generator.name, validator.name,
                      unlabeled if gold is None else pd.DataFrame())


def label_agreement(gold: pd.DataFrame, other: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Agreement of two label sets on the same (pair_id, atom) sub-problems: exact, 3-way (sign), Kendall's τ.

    The paper reports τ = 0.79 between its two annotators (100 sub-problems); here it measures how far a
    silver source is from gold labels (e.g. the paper's printed labels in the fixture file).
    """
    from scipy.stats import kendalltau

    a = gold[["pair_id", "atom", "label"]].rename(columns={"label": "gold"})
    b = other[["pair_id", "atom", "label"]].rename(columns={"label": "other"})
    rows = a.merge(b, on=["pair_id", "atom"], how="inner")
    g, o = rows["gold"].apply(_numeric), rows["other"].apply(_numeric)
    keep = g.notna() & o.notna()
    rows = rows.assign(exact=(g == o) & keep, same_direction=(np.sign(g) == np.sign(o)) & keep)
    tau = kendalltau(g[keep], o[keep]).statistic if keep.sum() > 1 else np.nan
    return rows, {
        "sub_problems": int(keep.sum()),
        "exact_agreement_%": 100 * float(rows.loc[keep, "exact"].mean()) if keep.any() else np.nan,
        "direction_agreement_%": 100 * float(rows.loc[keep, "same_direction"].mean()) if keep.any() else np.nan,
        "kendall_tau": float(tau) if tau == tau else np.nan,
    }


def silver_for_gold(
    gold: pd.DataFrame, nli=None, llm=None, thresholds: tuple[float, float] = (0.2, 0.6)
) -> pd.DataFrame:
    """Silver labels (NLI belief shift, or C.2 with `llm`) for the atoms of a gold file (its valid rows)."""
    sub = gold[is_valid_label(gold["label"])][["pair_id", "premise", "hypothesis", "update",
                                                                "update_type", "atom"]]
    return silver_labels_llm(sub, llm) if llm is not None else silver_labels_nli(sub, nli, thresholds)


# --------------------------------------------------------------------------------------------------------------
# How far to trust silver labels: placebo updates, agreement with the example's direction
# --------------------------------------------------------------------------------------------------------------

SUB_COLUMNS = ["pair_id", "premise", "hypothesis", "update", "update_type", "atom"]


def placebo_subproblems(sub: pd.DataFrame, n: int = 400, seed: int = 0) -> pd.DataFrame:
    """A seeded sample of sub-problems whose update is replaced by one written for a *different* P-H pair.

    Such a placebo update should leave the atom's belief unchanged; comparing the silver score of real and
    placebo updates shows how much of the score is U's effect and how much is noise from appending any
    sentence to P. Returns SUB_COLUMNS plus `real_update`.
    """
    rows = sub[SUB_COLUMNS].drop_duplicates(["pair_id", "atom"]).sample(n=min(n, len(sub)), random_state=seed)
    pool = sub[["premise", "hypothesis", "update"]].drop_duplicates("update").reset_index(drop=True)
    rng = np.random.default_rng(seed)
    new = []
    for p, h in zip(rows["premise"], rows["hypothesis"]):
        other = pool[(pool["premise"] != p) | (pool["hypothesis"] != h)]
        new.append(other["update"].iloc[int(rng.integers(len(other)))] if len(other) else None)
    out = rows.assign(real_update=rows["update"], update=new)
    return out[out["update"].notna()].reset_index(drop=True)


def silver_diagnostics(labeled: pd.DataFrame, placebo: pd.DataFrame | None = None, score_col: str = "shift") -> dict:
    """Checks of a label set that need no gold labels (the paper's gold labels are not released).

    * `direction_corr`: correlation of the atom score (`score_col`, else the -2..2 label) with the example's
      polarity (+1 strengthener, -1 weakener). Gold labels correlate strongly (46% strengthening and 31%
      weakening atoms, mostly in the example's direction); 0 means the labels ignore U's direction.
    * `examples_with_critical_%`: examples with at least one valid atom labelled in their direction (the
      paper: 97%, i.e. 70 of 1,761 without).
    * `placebo_auc` (needs `placebo` scored the same way): P(|score| of a real update > |score| of a placebo
      update), 0.5 when the scorer cannot tell U from an unrelated sentence.

    >>> lab = pd.DataFrame({"pair_id": ["a", "a", "b"], "update_type": ["strengthener"] * 2 + ["weakener"],
    ...                     "label": [2, 0, -1], "critical": [True, False, True], "shift": [0.8, 0.0, -0.3]})
    >>> d = silver_diagnostics(lab, pd.DataFrame({"shift": [0.1, -0.05]}))
    >>> d["examples_with_critical_%"], d["placebo_auc"], round(d["direction_corr"], 2)
    (100.0, 0.6667, 0.71)
    """
    value = labeled[score_col] if score_col in labeled else labeled["label"].apply(_numeric)
    value = pd.to_numeric(value, errors="coerce")
    polarity = np.where(labeled["update_type"] == "strengthener", 1.0, -1.0)
    keep = value.notna().to_numpy()
    corr = float(np.corrcoef(value[keep], polarity[keep])[0, 1]) if keep.sum() > 2 and value[keep].std() > 0 else np.nan
    per_ex = labeled.groupby("pair_id")["critical"].any()
    out = {"sub_problems": int(keep.sum()), "examples": int(per_ex.size), "direction_corr": corr,
           "examples_with_critical_%": 100 * float(per_ex.mean()) if len(per_ex) else np.nan,
           "nonzero_labels_%": 100 * float((labeled["label"].apply(_numeric) != 0).mean()) if len(labeled) else np.nan}
    if placebo is not None and score_col in labeled and len(placebo):
        real = np.abs(value[keep].to_numpy())
        fake = np.abs(pd.to_numeric(placebo[score_col], errors="coerce").dropna().to_numpy())
        auc = wilcoxon_rho(real, fake)["rho"]  # P(|real| > |placebo|) + ½ P(tie)
        out.update(
            {
                "placebo_sub_problems": len(fake),
                "placebo_auc": round(float(auc), 4),
                "median_abs_score_real": float(np.median(real)),
                "median_abs_score_placebo": float(np.median(fake)),
            }
        )
    return out


# --------------------------------------------------------------------------------------------------------------
# Per-example rows for the explorer
# --------------------------------------------------------------------------------------------------------------

def _unlabeled(v) -> bool:
    """No label: None or NaN (a failed call or an unparsable answer)."""
    return v is None or (isinstance(v, float) and np.isnan(v))


def _label_text(v) -> str:
    """A label as shown in records: '+2', '0', 'invalid'; 'unlabeled' when the labelling call gave no answer.

    >>> [_label_text(v) for v in (2, -1, 0, "invalid", None, float("nan"))]
    ['+2', '-1', '0', 'invalid', 'unlabeled', 'unlabeled']
    """
    if _unlabeled(v):
        return "unlabeled"
    return v if isinstance(v, str) else f"{int(v):+d}" if v else "0"


def example_records(results: Mapping[str, tuple], labeled: pd.DataFrame, label_source: str = "") -> pd.DataFrame:
    """One row per (model, δ-SNLI example): texts, full label and prediction, its atoms with their labels,
    its critical atoms and whether the model solved all of them (the rows behind Table 3 and Figure 2)."""
    lab = labeled.copy()
    lab["text"] = [f"{a} ({_label_text(v)}{', critical' if c else ''})" for a, v, c in
                   zip(lab["atom"], lab["label"], lab["critical"])]
    atoms = lab.groupby("pair_id")["text"].agg(" | ".join).rename("atoms")
    crit = lab[lab["critical"]].groupby("pair_id")["atom"].agg(" | ".join).rename("critical_atoms")
    summary = example_summary(labeled).set_index("pair_id")[["n_valid", "n_critical", "weakener_share"]]
    frames = []
    for full, atom_rows in results.values():
        scored = atom_rows[atom_rows["scored"] & atom_rows["critical"]]
        solved = scored.groupby("pair_id")["correct"].all().map({True: "all correct", False: "some wrong"})
        f = full[["pair_id", "premise", "hypothesis", "update", "update_type", "pred", "correct", "model"]].copy()
        f = f.join(summary, on="pair_id").join(atoms, on="pair_id").join(crit, on="pair_id")
        f["critical_solved"] = f["pair_id"].map(solved).fillna("no scored critical atom")
        f["n_valid"] = f["n_valid"].fillna(0).astype(int)
        f["n_critical"] = f["n_critical"].fillna(0).astype(int)
        frames.append(f)
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return out.assign(label_source=label_source)


def subproblem_records(results: Mapping[str, tuple], label_source: str = "") -> pd.DataFrame:
    """One row per (model, atomic sub-problem): atom, its label (and silver score), critical flag, prediction."""
    cols = ["model", "pair_id", "premise", "hypothesis", "update", "update_type", "atom", "label", "gold3", "critical",
            "pred", "correct", "scored", "shift"]
    frames = [atoms.reindex(columns=cols) for _, atoms in results.values()]
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)
    out["label"] = out["label"].apply(_label_text)
    return out.assign(label_source=label_source)
