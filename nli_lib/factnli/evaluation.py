"""§4 evaluation: accuracy per level (Table 2), length and fact growth (Fig. 3), confusion matrices (Fig. 4),
the NO-FILTER ablation (Table 3), the Appendix D controls (Table 7) and the §4.5 automatic diagnostics.

Every function returns a summary DataFrame built from per-example rows that are returned too (or are the
input), so error analysis is one step away:

>>> preds = predict_variants({"full": data.items}, {"minilm": model})        # doctest: +SKIP
>>> accuracy_by_level(preds)                                                # doctest: +SKIP
>>> preds.query("model == 'minilm' and level == 3 and not correct")         # doctest: +SKIP

Accuracy is a percentage (as printed in the paper) with a Wilson 95% interval.
"""
from __future__ import annotations

import copy
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..config import LABELS
from ..evaluation import confusion, wilson_interval
from .filtering import NLIJudge

LONG_CONTEXT = 256  # tokens: an L=3 SNLI pair runs to ~150 tokens; 128-token models would cut the premise


def long_context(model, max_length: int = LONG_CONTEXT):
    """A view of an HF classifier that truncates at `max_length` tokens (same weights, own cache key).

    The offline MiniLM is fine-tuned at 128 tokens (64 in --quick); augmented premises are much longer and
    longest-first truncation would silently drop the fused facts. Non-HF models are returned unchanged.
    """
    if not hasattr(model, "max_length") or getattr(model, "max_length", 0) >= max_length:
        return model
    view = copy.copy(model)
    view.max_length = max_length
    base = str(getattr(model, "fingerprint", model.name)).split("|max_len=")[0]
    view._fingerprint = f"{base}|max_len={max_length}"
    return view


# --------------------------------------------------------------------------------------------------------------
# Predictions
# --------------------------------------------------------------------------------------------------------------

def predict_variants(frames: Mapping[str, pd.DataFrame], models: Mapping[str, object]) -> pd.DataFrame:
    """predict_frame of every model on every variant's items; one row per (model, variant, pair, level)."""
    out = []
    for variant, df in frames.items():
        base = df[["pair_id", "level", "label", "premise", "hypothesis"]].copy()
        base["variant"] = variant
        for name, model in models.items():
            pred = model.predict_frame(base)
            pred["model"], pred["tier"] = name, getattr(model, "tier", "offline")
            out.append(pred)
    cols = ["model", "tier", "variant", "pair_id", "level", "label", "pred", "correct",
            *[f"p_{lab}" for lab in LABELS], "premise", "hypothesis"]
    return pd.concat(out, ignore_index=True)[cols] if out else pd.DataFrame(columns=cols)


def accuracy_long(preds: pd.DataFrame) -> pd.DataFrame:
    """model, tier, variant, level, n, accuracy (%), Wilson 95% CI (%)."""
    rows = []
    for (model, tier, variant, level), g in preds.groupby(["model", "tier", "variant", "level"], sort=False):
        k, n = int(g["correct"].sum()), len(g)
        lo, hi = wilson_interval(k, n)
        rows.append({"model": model, "tier": tier, "variant": variant, "level": int(level), "n": n,
                     "accuracy": 100 * k / n, "ci_low": 100 * lo, "ci_high": 100 * hi})
    return pd.DataFrame(rows)


def accuracy_by_level(preds: pd.DataFrame, variant: str = "full") -> pd.DataFrame:
    """Table 2: one row per model, Acc L=0..L (%) and the drop from L=0 to the deepest level."""
    acc = accuracy_long(preds[preds["variant"] == variant])
    if acc.empty:
        return acc
    wide = acc.pivot_table(index=["model", "tier"], columns="level", values="accuracy", sort=False)
    wide.columns = [f"Acc L={c}" for c in wide.columns]
    wide = wide.reset_index()
    n = acc.groupby("model", sort=False)["n"].max()
    wide.insert(2, "n", wide["model"].map(n))
    deepest = max(acc["level"])
    wide[f"drop L0→L{deepest}"] = wide["Acc L=0"] - wide[f"Acc L={deepest}"]
    return wide


def paper_table(ref: str, models: Sequence[str], columns: Sequence[str], dataset: str = "SNLI") -> pd.DataFrame:
    """The paper's printed rows of a table (from data/paper_values/factnli.csv) in our column names."""
    from ..paper_values import VALUES

    rows = []
    for m in models:
        row = {"model": m, "tier": "paper (printed)"}
        for c in columns:
            q = f"{m} {dataset} {c}" if dataset else f"{m} {c}"
            hit = [v.value for v in VALUES if v.ref == ref and v.quantity == q]
            row[c] = hit[0] if hit else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------------------
# Fig. 3: length growth and fused facts by level; Fig. 4: confusion matrices
# --------------------------------------------------------------------------------------------------------------

def growth_by_level(items: pd.DataFrame) -> pd.DataFrame:
    """Fig. 3 data per level: mean premise/hypothesis words, step increments, mean fused facts per record."""
    g = items.groupby("level")
    out = pd.DataFrame({
        "n": g.size(), "premise_words": g["premise_words"].mean(), "hypothesis_words": g["hyp_words"].mean(),
        "premise_facts": g["n_premise_facts"].mean(), "hypothesis_facts": g["n_hyp_facts"].mean(),
    }).reset_index()
    out["Δ premise_words"] = out["premise_words"].diff()
    out["Δ hypothesis_words"] = out["hypothesis_words"].diff()
    out["premise ×L0"] = out["premise_words"] / out["premise_words"].iloc[0]
    out["hypothesis ×L0"] = out["hypothesis_words"] / out["hypothesis_words"].iloc[0]
    return out


def figure3(growth: pd.DataFrame, title: str = ""):
    """(a) mean words per level, premise solid / hypothesis dashed; (b) mean fused facts per record, L>=1."""
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.6))
    a.plot(growth["level"], growth["premise_words"], "o-", label="premise")
    a.plot(growth["level"], growth["hypothesis_words"], "s--", label="hypothesis")
    a.set_xlabel("level L")
    a.set_ylabel("mean words")
    a.set_xticks(growth["level"])
    a.legend()
    a.set_title("(a) length by level")
    g = growth[growth["level"] >= 1]
    x = np.arange(len(g))
    for off, col, lab in ((-0.2, "premise_facts", "Prem"), (0.2, "hypothesis_facts", "Hypo")):
        bars = b.bar(x + off, g[col], width=0.4, label=lab)
        for rect, v in zip(bars, g[col]):
            b.annotate(f"{v:.2f}", (rect.get_x() + rect.get_width() / 2, rect.get_height()), ha="center",
                       va="bottom", fontsize=8)
    b.set_xticks(x, [f"L={int(v)}" for v in g["level"]])
    b.set_ylabel("fused facts per record")
    b.legend()
    b.set_title("(b) fused facts by level")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def confusions(preds: pd.DataFrame, variant: str = "full") -> dict:
    """{(model, level): row-normalised confusion matrix} (gold rows × predicted columns)."""
    sub = preds[preds["variant"] == variant]
    return {(m, int(lv)): confusion(g, LABELS, normalize=True) for (m, lv), g in sub.groupby(["model", "level"], sort=False)}


def figure4(mats: dict, title: str = ""):
    """Grid of confusion matrices: one row per model, one column per level."""
    import matplotlib.pyplot as plt

    models = list(dict.fromkeys(m for m, _ in mats))
    levels = sorted({lv for _, lv in mats})
    fig, axes = plt.subplots(len(models), len(levels), figsize=(2.6 * len(levels), 2.5 * len(models)), squeeze=False)
    short = [lab[0].upper() for lab in LABELS]
    for i, m in enumerate(models):
        for j, lv in enumerate(levels):
            ax = axes[i][j]
            mat = mats.get((m, lv))
            if mat is None:
                ax.set_axis_off()
                continue
            ax.imshow(mat.values, vmin=0, vmax=1, cmap="Blues")
            for r in range(mat.shape[0]):
                for c in range(mat.shape[1]):
                    v = mat.values[r, c]
                    ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=8,
                            color="white" if v > 0.6 else "black")
            ax.set_xticks(range(3), short)
            ax.set_yticks(range(3), short)
            ax.set_title(f"{m}\nL={lv}", fontsize=8)
            if j == 0:
                ax.set_ylabel("gold")
            if i == len(models) - 1:
                ax.set_xlabel("predicted")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------------------------------------------
# Table 3 (NO-FILTER) and Table 7 (controls)
# --------------------------------------------------------------------------------------------------------------

def ablation_table(preds: pd.DataFrame) -> pd.DataFrame:
    """Table 3 (+ level sensitivity): Acc L=0, Acc L=t Full and Acc L=t No-Filter for t = 1..L, per model."""
    acc = accuracy_long(preds)
    rows = []
    for (model, tier), g in acc.groupby(["model", "tier"], sort=False):
        row = {"model": model, "tier": tier}
        base = g[(g["variant"] == "full") & (g["level"] == 0)]
        row["n"] = int(base["n"].iloc[0]) if len(base) else 0
        row["Acc L=0"] = float(base["accuracy"].iloc[0]) if len(base) else np.nan
        for variant, label in (("full", "Full"), ("no-filter", "No-Filter")):
            for _, r in g[(g["variant"] == variant) & (g["level"] > 0)].sort_values("level").iterrows():
                row[f"Acc L={int(r['level'])}, {label}"] = r["accuracy"]
        rows.append(row)
    return pd.DataFrame(rows)


def controls_table(preds: pd.DataFrame, lengths: Mapping[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """Table 7: Original, FactNLI L=1, Rewrite, Unrelated-Facts accuracy (%) per model (+ mean lengths row)."""
    acc = accuracy_long(preds)
    pick = {"Original": ("full", 0), "FactNLI L=1": ("full", 1), "Rewrite": ("rewrite", 1),
            "Unrelated-Facts": ("unrelated-facts", 1)}
    rows = []
    for (model, tier), g in acc.groupby(["model", "tier"], sort=False):
        row = {"model": model, "tier": tier}
        for col, (variant, level) in pick.items():
            hit = g[(g["variant"] == variant) & (g["level"] == level)]
            row[col] = float(hit["accuracy"].iloc[0]) if len(hit) else np.nan
        rows.append(row)
    out = pd.DataFrame(rows)
    if lengths:
        row = {"model": "mean words (premise + hypothesis)", "tier": "data"}
        for col, (variant, level) in pick.items():
            df = lengths.get(variant)
            if df is not None:
                sub = df[df["level"] == level]
                row[col] = float((sub["premise_words"] + sub["hyp_words"]).mean())
        out = pd.concat([out, pd.DataFrame([row])], ignore_index=True)
    return out


# --------------------------------------------------------------------------------------------------------------
# §4.5 automatic diagnostics
# --------------------------------------------------------------------------------------------------------------

def diagnostics(items: pd.DataFrame, judge: NLIJudge, long_judge: NLIJudge | None = None,
                label_model=None) -> pd.DataFrame:
    """Per item (level >= 1) the four automatic proxies of §4.5, judged by the NLI judge M:

    * label_pred / label_preserved: M's label for (p(t), h(t)) and whether it equals the gold (baseline)
      label; label_stable: whether it equals M's own label at L=0;
    * conflict: some pair among {p} ∪ fused premise facts has CONTRADICTS (either order);
    * n_redundant / n_facts: fused facts entailed by p or by another fused fact;
    * n_supported / n_checks: fused facts entailed by the final text that holds them (p(t) for premise
      facts, h(t) for hypothesis facts).

    `long_judge` (default: `judge` over a long-context view of its model) scores facts against the long
    texts; `label_model` (default: that long-context model) gives the labels. `items` must hold the L=0 rows
    too (for label_stable). Readability (a human Likert rating in the paper) has no automatic proxy here.
    """
    long_judge = long_judge or NLIJudge(long_context(judge.model), judge.tau_e, judge.tau_c)
    labels_model = label_model or long_context(judge.model)
    deep = items[items["level"] >= 1]
    groups: dict[str, list[str]] = {}
    for p, g in deep.groupby("orig_premise"):
        facts = max(g["premise_facts"], key=len)
        groups[p] = list(dict.fromkeys([p, *facts]))
    judge.prefetch([(a, b) for members in groups.values() for a in members for b in members if a != b])
    fact_checks = [(r.premise, f) for r in deep.itertuples() for f in r.premise_facts] + \
                  [(r.hypothesis, f) for r in deep.itertuples() for f in r.hyp_facts]
    long_judge.prefetch(fact_checks)
    probs = labels_model.predict_proba(items["premise"].tolist(), items["hypothesis"].tolist()) if len(items) else np.zeros((0, 3))
    model_labels = list(getattr(labels_model, "labels", LABELS))
    pred = pd.Series([model_labels[i] for i in np.asarray(probs).argmax(axis=1)], index=items.index) if len(items) else pd.Series(dtype=str)
    base = {pid: pred[idx] for idx, pid in zip(items.index, items["pair_id"]) if items.at[idx, "level"] == 0}
    rows = []
    for idx, r in deep.iterrows():
        members = [r["orig_premise"], *r["premise_facts"]]
        conflict = any(judge.contradicts(a, b) for a in members for b in members if a != b)
        redundant = sum(any(judge.entails(g, f) for g in members if g != f) for f in r["premise_facts"])
        supported = sum(long_judge.entails(r["premise"], f) for f in r["premise_facts"]) + \
            sum(long_judge.entails(r["hypothesis"], f) for f in r["hyp_facts"])
        rows.append({"pair_id": r["pair_id"], "variant": r.get("variant", "full"), "level": int(r["level"]),
                     "label": r["label"], "label_pred": pred[idx], "label_preserved": pred[idx] == r["label"],
                     "label_stable": pred[idx] == base.get(r["pair_id"], pred[idx]), "conflict": conflict,
                     "n_facts": len(r["premise_facts"]), "n_redundant": int(redundant),
                     "n_checks": len(r["premise_facts"]) + len(r["hyp_facts"]), "n_supported": int(supported)})
    return pd.DataFrame(rows)


def diagnostics_table(rows: pd.DataFrame, judge_name: str = "") -> pd.DataFrame:
    """Tables 4/5 (automatic proxies): per variant and level, label preservation, conflict, redundancy,
    factuality (%), with the judge that produced them."""
    out = []
    for (variant, level), g in rows.groupby(["variant", "level"], sort=False):
        out.append({"variant": variant, "level": level, "n": len(g),
                    "Label pres. (%)": 100 * g["label_preserved"].mean(),
                    "Label stable vs L=0 (%)": 100 * g["label_stable"].mean(),
                    "Conflict (%)": 100 * g["conflict"].mean(),
                    "Redundancy (%)": 100 * g["n_redundant"].sum() / max(1, g["n_facts"].sum()),
                    "Factuality (%)": 100 * g["n_supported"].sum() / max(1, g["n_checks"].sum()),
                    "judge": judge_name})
    return pd.DataFrame(out)
