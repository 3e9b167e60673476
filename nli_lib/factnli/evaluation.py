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

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..config import LABELS
from ..evaluation import confusion, wilson_interval
from .context import sized_view
from .filtering import NLIJudge
from .fusion import check_fusion
from .paper import JUDGE_SYSTEM
from .pipeline import MNLI_POOLED, MNLI_SPLITS, SNLI_TEST

# --------------------------------------------------------------------------------------------------------------
# Predictions
# --------------------------------------------------------------------------------------------------------------

def predict_variants(frames: Mapping[str, pd.DataFrame], models: Mapping[str, object],
                     dataset: str = SNLI_TEST) -> pd.DataFrame:
    """predict_frame of every model on every variant's items of one `dataset`; one row per (model, variant,
    pair, level)."""
    out = []
    for variant, df in frames.items():
        base = df[["pair_id", "level", "label", "premise", "hypothesis"]].copy()
        base["variant"] = variant
        for name, model in models.items():
            pred = model.predict_frame(base)
            pred["model"], pred["tier"], pred["dataset"] = name, getattr(model, "tier", "offline"), dataset
            out.append(pred)
    cols = ["model", "tier", "dataset", "variant", "pair_id", "level", "label", "pred", "correct",
            *[f"p_{lab}" for lab in LABELS], "premise", "hypothesis"]
    return pd.concat(out, ignore_index=True)[cols] if out else pd.DataFrame(columns=cols)


def predict_datasets(frames: Mapping[str, Mapping[str, pd.DataFrame]], models: Mapping[str, object]) -> pd.DataFrame:
    """`predict_variants` per dataset (`frames`: dataset -> variant -> items), one frame with a dataset column."""
    parts = [predict_variants(variants, models, dataset=name) for name, variants in frames.items()]
    return pd.concat(parts, ignore_index=True)


def pool_datasets(preds: pd.DataFrame, parts: Sequence[str] = tuple(MNLI_SPLITS),
                  name: str = MNLI_POOLED) -> pd.DataFrame:
    """`preds` plus the rows of the datasets `parts` once more under dataset `name`, so accuracies are also
    computed over their union (the paper's MNLI column: validation matched + mismatched). Unchanged when
    none of `parts` is present.

    >>> p = pd.DataFrame({"dataset": ["a", "b", "c"], "correct": [True, False, True]})
    >>> pool_datasets(p, ["a", "b"], "a+b")["dataset"].tolist()
    ['a', 'b', 'c', 'a+b', 'a+b']
    """
    hit = preds[preds["dataset"].isin(list(parts))]
    if hit.empty:
        return preds
    return pd.concat([preds, hit.assign(dataset=name)], ignore_index=True)


def _keys(frame: pd.DataFrame, *names: str) -> list[str]:
    """`names` with 'dataset' after model/tier when the frame has that column."""
    names = list(names)
    return [*names[:2], "dataset", *names[2:]] if "dataset" in frame else names


def accuracy_long(preds: pd.DataFrame) -> pd.DataFrame:
    """model, tier, [dataset,] variant, level, n, accuracy (%), Wilson 95% CI (%)."""
    keys = _keys(preds, "model", "tier", "variant", "level")
    rows = []
    for values, g in preds.groupby(keys, sort=False):
        k, n = int(g["correct"].sum()), len(g)
        lo, hi = wilson_interval(k, n)
        row = dict(zip(keys, values))
        rows.append({**row, "level": int(row["level"]), "n": n, "accuracy": 100 * k / n, "ci_low": 100 * lo,
                     "ci_high": 100 * hi})
    return pd.DataFrame(rows)


def accuracy_by_level(preds: pd.DataFrame, variant: str = "full") -> pd.DataFrame:
    """Table 2: one row per model (and dataset), Acc L=0..L (%) and the drop from L=0 to the deepest level."""
    acc = accuracy_long(preds[preds["variant"] == variant])
    if acc.empty:
        return acc
    index = _keys(acc, "model", "tier")
    wide = acc.pivot_table(index=index, columns="level", values="accuracy", sort=False)
    wide.columns = [f"Acc L={c}" for c in wide.columns]
    n = acc.groupby(index, sort=False)["n"].max()
    wide.insert(0, "n", n.reindex(wide.index))
    wide = wide.reset_index()
    deepest = max(acc["level"])
    wide[f"drop L0→L{deepest}"] = wide["Acc L=0"] - wide[f"Acc L={deepest}"]
    return wide


#: Table 2's printed rows, in its order.
TABLE2_ROWS = ("RoBERTa-large", "DeBERTa-v3-large", "Llama-3-8B-Instruct", "Qwen2.5-14B-Instruct", "GPT-4o",
               "DeepSeek-V3", "DeepSeek-R1", "Average")
#: Table 8's printed rows (Appendix F: levels generated by Qwen2.5-14B-Instruct, SNLI).
TABLE8_ROWS = ("GPT-4o", "DeepSeek-V3", "Qwen2.5-14B-Instruct")
#: Our dataset name -> the paper's word for it in Table 2's quantities.
PAPER_DATASET = {SNLI_TEST: "SNLI", MNLI_POOLED: "MNLI"}


def table2(preds: pd.DataFrame) -> pd.DataFrame:
    """Table 2: ours per model and dataset (SNLI test; each MNLI validation set and their union when
    scored), then the paper's printed SNLI and MNLI rows (dataset named as ours)."""
    ours = accuracy_by_level(pool_datasets(preds))
    levels = [c for c in ours.columns if c.startswith("Acc L=")]
    paper = [paper_table("factnli-table-2", TABLE2_ROWS, levels, dataset=word).assign(dataset=ours_name)
             for ours_name, word in PAPER_DATASET.items()]
    paper = pd.concat(paper, ignore_index=True)
    deepest = levels[-1].removeprefix("Acc L=")
    paper[f"drop L0→L{deepest}"] = paper["Acc L=0"] - paper[levels[-1]]
    return pd.concat([ours, paper[[c for c in ours.columns if c in paper]]], ignore_index=True)


def table8(table: pd.DataFrame) -> pd.DataFrame:
    """Table 8 (Appendix F): our SNLI rows of `table` (Table 2's layout) above the paper's rows for levels
    generated by Qwen2.5-14B-Instruct."""
    ours = table[(table["dataset"] == SNLI_TEST) & (table["tier"] != "paper (printed)")]
    levels = [c for c in ours.columns if c.startswith("Acc L=")]
    paper = paper_table("factnli-table-8", TABLE8_ROWS, levels).assign(dataset=SNLI_TEST)
    return pd.concat([ours, paper], ignore_index=True)[["model", "tier", "dataset", "n", *levels]]


def paper_table(ref: str, models: Sequence[str], columns: Sequence[str], dataset: str = "SNLI") -> pd.DataFrame:
    """The paper's printed rows of a table (from resources/paper_values/factnli.csv) in our column names."""
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
    """(a) mean words per level, premise solid / hypothesis dashed; (b) mean fused facts per record, L>=1.

    `growth`: `growth_by_level` rows, with a `dataset` column for several datasets (one colour each, as the
    paper's SNLI and MNLI panels)."""
    import matplotlib.pyplot as plt

    growth = growth if "dataset" in growth else growth.assign(dataset="")
    names = list(dict.fromkeys(growth["dataset"]))
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.6))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    width = 0.8 / (2 * len(names))
    for k, name in enumerate(names):
        g = growth[growth["dataset"] == name].sort_values("level")
        tag = f"{name}: " if name else ""
        a.plot(g["level"], g["premise_words"], "o-", color=colours[2 * k % len(colours)], label=f"{tag}premise")
        a.plot(g["level"], g["hypothesis_words"], "s--", color=colours[(2 * k + 1) % len(colours)],
               label=f"{tag}hypothesis")
        deep = g[g["level"] >= 1]
        x = np.arange(len(deep))
        for j, (col, side) in enumerate((("premise_facts", "Prem"), ("hypothesis_facts", "Hypo"))):
            off = (2 * k + j - (2 * len(names) - 1) / 2) * width
            bars = b.bar(x + off, deep[col], width=width, label=f"{tag}{side}",
                         color=colours[(2 * k + j) % len(colours)])
            for rect, v in zip(bars, deep[col]):
                b.annotate(f"{v:.2f}", (rect.get_x() + rect.get_width() / 2, rect.get_height()), ha="center",
                           va="bottom", fontsize=7)
        b.set_xticks(x, [f"L={int(v)}" for v in deep["level"]])
    a.set_xlabel("level L")
    a.set_ylabel("mean words")
    a.set_xticks(sorted(growth["level"].unique()))
    a.legend(fontsize=7)
    a.set_title("(a) length by level")
    b.set_ylabel("fused facts per record")
    b.legend(fontsize=7)
    b.set_title("(b) fused facts by level")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def confusions(preds: pd.DataFrame, variant: str = "full") -> dict:
    """{(model, level): row-normalised confusion matrix} (gold rows × predicted columns)."""
    sub = preds[preds["variant"] == variant]
    return {
        (m, int(lv)): confusion(g, LABELS, normalize=True) for (m, lv), g in sub.groupby(["model", "level"], sort=False)
    }


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


def prediction_mix(preds: pd.DataFrame) -> pd.DataFrame:
    """Share (%) of each predicted label per model, variant and level, beside the gold mix of the same rows.

    A variant that drives a model to one label (e.g. 'entailment' when both sides gain the same wording)
    shows here, separately from its accuracy.

    >>> p = pd.DataFrame({"model": "m", "variant": "full", "level": [0, 0, 1, 1], "pred": ["entailment", "neutral",
    ...                   "entailment", "entailment"], "label": ["entailment", "neutral", "entailment", "neutral"]})
    >>> prediction_mix(p)[["pred entailment (%)", "pred neutral (%)", "gold entailment (%)"]].values.tolist()
    [[50.0, 50.0, 50.0], [100.0, 0.0, 50.0]]
    """
    rows = []
    for (model, variant, level), g in preds.groupby(["model", "variant", "level"], sort=False):
        row = {"model": model, "variant": variant, "level": int(level), "n": len(g)}
        row.update({f"pred {lab} (%)": 100 * float((g["pred"] == lab).mean()) for lab in LABELS})
        row.update({f"gold {lab} (%)": 100 * float((g["label"] == lab).mean()) for lab in LABELS})
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


def table3(preds: pd.DataFrame) -> pd.DataFrame:
    """Table 3: `ablation_table` of the SNLI-test predictions of the full framework and NO-FILTER, then the
    paper's printed rows."""
    snli = preds[(preds["dataset"] == SNLI_TEST) & preds["variant"].isin(["full", "no-filter"])]
    paper = paper_table("factnli-table-3", ["RoBERTa-large", "GPT-4o"], TABLE_COLUMNS["factnli-table-3"],
                        dataset="")
    return pd.concat([ablation_table(snli), paper], ignore_index=True)


def table7(preds: pd.DataFrame, lengths: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Table 7: `controls_table` of the SNLI-test predictions (with the mean-length row), then the paper's
    printed rows."""
    paper = paper_table("factnli-table-7", ["GPT-4o", "DeepSeek-V3", "DeBERTa-v3-large", "Qwen2.5-14B-Instruct"],
                        TABLE_COLUMNS["factnli-table-7"], dataset="")
    return pd.concat([controls_table(preds[preds["dataset"] == SNLI_TEST], lengths), paper], ignore_index=True)


def changed_by_filter(full: pd.DataFrame, no_filter: pd.DataFrame) -> float:
    """Share (%) of (pair, level >= 1) items whose fused premise facts differ between the full framework and
    NO-FILTER (items of both variants).

    >>> f = pd.DataFrame({"pair_id": [1, 1, 2], "level": [0, 1, 1], "premise_facts": [[], ["a"], ["b"]]})
    >>> changed_by_filter(f, f.assign(premise_facts=[[], ["a"], ["b", "c"]]))
    50.0
    """
    def facts(items):
        deep = items[items["level"] > 0]
        return deep.set_index(["pair_id", "level"])["premise_facts"].map(tuple)

    same = facts(full) == facts(no_filter).reindex(facts(full).index)
    return 100 * (1 - float(same.mean())) if len(same) else float("nan")


def flipped_pairs(preds: pd.DataFrame, model: str, level: int, dataset: str = SNLI_TEST) -> pd.DataFrame:
    """Pairs `model` gets right at L=0 and wrong at `level` (full framework, `dataset`): the pairs behind the
    drop; attrs['right_at_L0'] holds how many it got right at L=0.

    >>> p = pd.DataFrame({"model": "m", "dataset": "SNLI test", "variant": "full", "pair_id": [1, 1, 2, 2],
    ...                   "level": [0, 3, 0, 3], "correct": [True, False, True, True]})
    >>> out = flipped_pairs(p, "m", 3); out["pair_id"].tolist(), out.attrs["right_at_L0"]
    ([1], 2)
    """
    p = preds[(preds["model"] == model) & (preds["variant"] == "full") & (preds["dataset"] == dataset)]
    right0 = set(p[(p["level"] == 0) & p["correct"]]["pair_id"])
    out = p[(p["level"] == level) & ~p["correct"].astype(bool) & p["pair_id"].isin(right0)]
    out.attrs["right_at_L0"] = len(right0)
    return out


# --------------------------------------------------------------------------------------------------------------
# §4.5 automatic diagnostics
# --------------------------------------------------------------------------------------------------------------

def support_pairs(text: str, fact: str, k: int = 2) -> list[tuple[str, str]]:
    """(sentence, fact) pairs for a sentence-level factuality check: the `k` sentences of `text` sharing
    the most words with `fact` (Jaccard; ties by position).

    Short-context NLI models cannot judge a 150-word text against a fact (the offline MiniLM never
    reaches P(entailment) >= 0.8 on whole L=3 premises, even for facts they contain verbatim), so a fact
    counts as entailed by the text when one of its most related sentences entails it — the max-over-
    sentences reading of SummaC (Laban et al., 2022), with a lexical pre-selection to bound the cost.

    >>> fused = "A man sleeps. Additionally, a bench is a seat. Meanwhile, a park is green."
    >>> support_pairs(fused, "A bench is a seat.", k=1)
    [('Additionally, a bench is a seat.', 'A bench is a seat.')]
    """
    from ..text import normalise
    from .text import split_sentences

    sentences = split_sentences(text) or [str(text)]
    fw = set(normalise(fact).split())

    def overlap(i: int) -> float:
        sw = set(normalise(sentences[i]).split())
        return len(fw & sw) / max(1, len(fw | sw))

    order = sorted(range(len(sentences)), key=lambda i: (-overlap(i), i))
    return [(sentences[i], fact) for i in order[:k]]


def diagnostics(items: pd.DataFrame, judge: NLIJudge, long_judge: NLIJudge | None = None,
                label_model=None, support: str = "sentences", k: int = 2) -> pd.DataFrame:
    """Per item (level >= 1) the four automatic proxies of §4.5, judged by the NLI judge M:

    * label_pred / label_preserved: M's label for (p(t), h(t)) and whether it equals the gold (baseline)
      label; label_stable: whether it equals M's own label at L=0;
    * conflict: some pair among {p} ∪ fused premise facts has CONTRADICTS, in either order;
      conflict_forward: only CONTRADICTS(a, b) with a before b in the fused order — the one direction
      Appendix C's truth-set test checks (NLI judges are not symmetric); conflict_pair names the first hit;
    * n_redundant / n_facts: fused facts entailed by p or by another fused fact;
    * factuality, the share of fused facts the final text carries (p(t) for premise facts, h(t) for
      hypothesis facts; §4.5's "retained facts entailed by the final text"). It measures the data, not
      the judge: a fact the text contains verbatim (`fusion.check_fusion`: as written, first letter's case
      free) is entailed by identity and counted in n_verbatim without asking any model; only the others
      (an LLM fuser's paraphrases) go to the judge (n_nli_checked), supported by one of the text's `k`
      most related sentences (support="sentences", `support_pairs`) or by the whole text (support="text",
      `long_judge`). n_supported = n_verbatim + NLI-supported; n_checks = all fused facts. It says whether
      the fuser kept the facts, not whether the facts are true (the gold set measures that).

    `long_judge` (default: `judge` over a view of its model sized to the items, `context.sized_view`) is
    used by support="text"; `label_model` (default: the same sized view) gives the labels. `items` must hold
    the L=0 rows too (for label_stable). Readability (a human Likert rating) has no automatic proxy here.
    """
    if support not in ("sentences", "text"):
        raise ValueError("support must be 'sentences' or 'text'")
    sized = sized_view(judge.model, {"items": items}) if judge.model is not None else None
    long_judge = long_judge or NLIJudge(sized, judge.tau_e, judge.tau_c)
    labels_model = label_model or sized
    deep = items[items["level"] >= 1]
    groups: dict[str, list[str]] = {}
    for p, g in deep.groupby("orig_premise"):
        facts = max(g["premise_facts"], key=len)
        groups[p] = list(dict.fromkeys([p, *facts]))
    judge.prefetch([(a, b) for members in groups.values() for a in members for b in members if a != b])
    checks = [(r.premise, f) for r in deep.itertuples() for f in r.premise_facts] + \
             [(r.hypothesis, f) for r in deep.itertuples() for f in r.hyp_facts]
    verbatim = {c: check_fusion(c[0], "", [c[1]])["fact_counts"][0] > 0 for c in dict.fromkeys(checks)}
    checks = [c for c in checks if not verbatim[c]]  # only paraphrased facts need a judge
    if support == "text":
        long_judge.prefetch(checks)
        supported_by = long_judge.entails
    else:
        windows = {c: support_pairs(*c, k=k) for c in dict.fromkeys(checks)}
        judge.prefetch([pair for pairs in windows.values() for pair in pairs])

        def supported_by(text, fact):
            return any(judge.entails(s, f) for s, f in windows[(text, fact)])

    probs = (
        labels_model.predict_proba(items["premise"].tolist(), items["hypothesis"].tolist())
        if len(items)
        else np.zeros((0, 3))
    )
    model_labels = list(getattr(labels_model, "labels", LABELS))
    pred = (
        pd.Series([model_labels[i] for i in np.asarray(probs).argmax(axis=1)], index=items.index)
        if len(items)
        else pd.Series(dtype=str)
    )
    base = {pid: pred[idx] for idx, pid in zip(items.index, items["pair_id"]) if items.at[idx, "level"] == 0}
    rows = []
    for idx, r in deep.iterrows():
        members = list(dict.fromkeys([r["orig_premise"], *r["premise_facts"]]))
        hits = [
            (a, b) for i, a in enumerate(members) for j, b in enumerate(members) if i != j and judge.contradicts(a, b)
        ]
        forward = [(a, b) for a, b in hits if members.index(a) < members.index(b)]
        redundant = sum(any(judge.entails(g, f) for g in members if g != f) for f in r["premise_facts"])
        held = [(r["premise"], f) for f in r["premise_facts"]] + [(r["hypothesis"], f) for f in r["hyp_facts"]]
        n_verbatim = sum(verbatim[c] for c in held)
        judged = [c for c in held if not verbatim[c]]
        supported = n_verbatim + sum(supported_by(*c) for c in judged)
        rows.append({"pair_id": r["pair_id"], "variant": r.get("variant", "full"), "level": int(r["level"]),
                     "label": r["label"], "label_pred": pred[idx], "label_preserved": pred[idx] == r["label"],
                     "label_stable": pred[idx] == base.get(r["pair_id"], pred[idx]), "conflict": bool(hits),
                     "conflict_forward": bool(forward), "conflict_pair": " ⊥ ".join(hits[0]) if hits else "",
                     "n_facts": len(r["premise_facts"]), "n_redundant": int(redundant),
                     "n_checks": len(held), "n_verbatim": int(n_verbatim), "n_nli_checked": len(judged),
                     "n_supported": int(supported)})
    return pd.DataFrame(rows, columns=DIAGNOSTIC_COLUMNS)  # the columns also when no item reached L >= 1


DIAGNOSTIC_COLUMNS = ["pair_id", "variant", "level", "label", "label_pred", "label_preserved", "label_stable",
                      "conflict", "conflict_forward", "conflict_pair", "n_facts", "n_redundant", "n_checks",
                      "n_verbatim", "n_nli_checked", "n_supported"]  # one row of `diagnostics` per item


def diagnostics_table(rows: pd.DataFrame, judge_name: str = "") -> pd.DataFrame:
    """Tables 4/5 (automatic proxies): per variant and level, label preservation, conflict, redundancy,
    factuality (%), with the judge that produced them."""
    out = []
    for (variant, level), g in rows.groupby(["variant", "level"], sort=False):
        out.append(
            {
                "variant": variant,
                "level": level,
                "n": len(g),
                "Label pres. (%)": 100 * g["label_preserved"].mean(),
                "Label stable vs L=0 (%)": 100 * g["label_stable"].mean(),
                "Conflict (%)": 100 * g["conflict"].mean(),
                "Conflict, fused order (%)": 100 * g["conflict_forward"].mean() if "conflict_forward" in g else np.nan,
                "Redundancy (%)": 100 * g["n_redundant"].sum() / max(1, g["n_facts"].sum()),
                "Factuality (%)": 100 * g["n_supported"].sum() / max(1, g["n_checks"].sum()),
                "Verbatim (%)": 100 * g["n_verbatim"].sum() / max(1, g["n_checks"].sum())
                if "n_verbatim" in g
                else np.nan,
                "facts judged by NLI": int(g["n_nli_checked"].sum()) if "n_nli_checked" in g else 0,
                "judge": judge_name,
            }
        )
    return pd.DataFrame(out, columns=DIAGNOSTICS_TABLE_COLUMNS)  # the columns also when there is no row


DIAGNOSTICS_TABLE_COLUMNS = ["variant", "level", "n", "Label pres. (%)", "Label stable vs L=0 (%)", "Conflict (%)",
                             "Conflict, fused order (%)", "Redundancy (%)", "Factuality (%)", "Verbatim (%)",
                             "facts judged by NLI", "judge"]


AUDIT_METRICS = ("Label pres. (%)", "Conflict (%)", "Redundancy (%)", "Factuality (%)", "Readability")


def audit_tables(diag: pd.DataFrame, deepest: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(Table 4, Table 5) layouts: our `diagnostics_table` rows of the full framework per level, then the
    paper's human audit per level; ours at the deepest level for both variants, then the paper's Full and
    No-Filter rows at L=3."""
    metrics = list(AUDIT_METRICS)
    human = [{"variant": "full (paper, human audit)", "level": lv,
              **paper_table("factnli-table-4", [f"L={lv}"], metrics, dataset="").iloc[0][metrics].to_dict()}
             for lv in (1, 2, 3)]
    human.append({"variant": "no-filter (paper, human audit)", "level": 3,
                  **paper_table("factnli-table-5", ["No-Filter"], metrics, dataset="").iloc[0][metrics].to_dict()})
    human = pd.DataFrame(human)
    table4 = pd.concat([diag[diag["variant"] == "full"], human.iloc[:3]], ignore_index=True)
    table5 = pd.concat([diag[diag["level"] == deepest], human.iloc[[2, 3]]], ignore_index=True)
    return table4, table5


def table9(diag: pd.DataFrame) -> pd.DataFrame:
    """Table 9 layout (Appendix F): our diagnostics of the full framework per level, then the paper's human
    audit of the GPT-4o- and the Qwen2.5-14B-Instruct-generated data."""
    metrics = list(AUDIT_METRICS)
    human = pd.DataFrame([{"variant": f"{name} (paper, human audit)",
                           **paper_table("factnli-table-9", [name], metrics, dataset="").iloc[0][metrics].to_dict()}
                          for name in ("GPT", "Qwen")])
    return pd.concat([diag[diag["variant"] == "full"], human], ignore_index=True)


# --------------------------------------------------------------------------------------------------------------
# Scorecard: which paper row each of our numbers is set beside
# --------------------------------------------------------------------------------------------------------------

#: The paper's fine-tuned encoder rows, in the order a stand-in is set beside them (the first one the table prints).
ENCODER_ROWS = ("RoBERTa-large", "DeBERTa-v3-large")


def _rows_of(ref: str) -> list[str]:
    from ..paper_values import VALUES

    return list(dict.fromkeys(v.quantity.split(" ")[0] for v in VALUES if v.ref == ref))


#: The generator of the paper's FactNLI levels (Tables 2, 3, 7; §4.3 lengths) and the judge of its filter: our
#: levels are the paper's only when the profile declares our generator (and, when given, our judge) to be them.
PAPER_GENERATOR = "GPT-4o"
#: Appendix F's generator (Tables 8-9): our levels stand beside Table 8 only when declared to be its output.
QWEN_GENERATOR = "Qwen2.5-14B-Instruct"
FACTNLI_GENERATORS = (PAPER_GENERATOR, QWEN_GENERATOR)
PAPER_JUDGE_SYSTEM = JUDGE_SYSTEM  # our name for the filter's cross-encoder (one of nli_lib.factnli.paper.SYSTEMS)


def levels_stand_for(generator: str, judge: str | None = None, paper_generator: str = PAPER_GENERATOR) -> dict:
    """paper system -> our model, for everything that made the levels (generator, and the filter's judge)."""
    return {paper_generator: generator, **({PAPER_JUDGE_SYSTEM: judge} if judge else {})}


def accuracy_scores(table: pd.DataFrame, ref: str, columns: Mapping[str, str], declared: Mapping, generator: str,
                    note: str = "", stand_in: str | None = None, judge: str | None = None,
                    paper_generator: str = PAPER_GENERATOR) -> pd.DataFrame:
    """Scorecard rows (ref, quantity, ours, model, basis, note) for a wide accuracy table.

    `columns` maps our column to the paper's quantity suffix, e.g. {"Acc L=1": "SNLI Acc L=1"}. A model the
    profile declares (`declared`: its `paper_systems`, filled from `as:`, see `nli_lib.basis`) to be one of
    the paper's rows is scored against that row, with basis 'paper-model' when the levels are the paper's
    too (`generator`, and `judge` when given, declared to be the table's `paper_generator` and the paper's
    cross-encoder). The `stand_in` model (the profile's NLI model, a fine-tuned encoder) is set beside the
    paper's first printed fine-tuned encoder row as a 'stand-in'; every other model is skipped (the paper has
    no row for it). Nothing is read from a model's name.

    >>> t = pd.DataFrame({"model": ["minilm-esnli", "tfidf-logreg", "roberta-large"], "Acc L=0": [80.0, 60.0, 85.0]})
    >>> accuracy_scores(t, "factnli-table-2", {"Acc L=0": "SNLI Acc L=0"}, {}, "factnli-fuse-template-v1",
    ...                 stand_in="minilm-esnli")[["quantity", "ours", "model", "basis"]].values.tolist()
    [['RoBERTa-large SNLI Acc L=0', 80.0, 'minilm-esnli', 'stand-in']]
    """
    from ..basis import declares, model_basis

    rows = _rows_of(ref)
    out = []
    for r in table.to_dict("records"):
        model = str(r["model"])
        row = next((x for x in rows if declares(declared, model, x)), None)
        if row is not None:
            basis = model_basis(declared, {row: model, **levels_stand_for(generator, judge, paper_generator)})
        elif stand_in is not None and model == stand_in:
            row, basis = next((x for x in ENCODER_ROWS if x in rows), None), "stand-in"
        if row is None:
            continue
        extra = "" if basis == "paper-model" else \
            f"stand-in: {model} on levels by {generator}, beside the paper's {row}"
        for ours_col, suffix in columns.items():
            value = r.get(ours_col)
            if value is not None and pd.notna(value):
                out.append({"ref": ref, "quantity": f"{row} {suffix}", "ours": float(value), "model": model,
                            "basis": basis, "note": "; ".join(x for x in (extra, note) if x)})
    return pd.DataFrame(out, columns=["ref", "quantity", "ours", "model", "basis", "note"])


#: Our columns scored against each accuracy table (Table 2 and 8: every level, per dataset).
TABLE_COLUMNS = {"factnli-table-3": ("Acc L=0", "Acc L=3, Full", "Acc L=3, No-Filter"),
                 "factnli-table-7": ("Original", "FactNLI L=1", "Rewrite", "Unrelated-Facts")}


def table_scores(table: pd.DataFrame, ref: str, declared: Mapping, generator: str,
                 generator_system: str | None = None, note: str = "", stand_in: str | None = None,
                 judge: str | None = None) -> pd.DataFrame:
    """Scorecard rows of one of our accuracy tables (`table2`, `ablation_table`, `controls_table`; paper and
    data rows in it are left out), through `accuracy_scores`:

    * Table 2: SNLI-test rows beside its SNLI columns, MNLI matched+mismatched rows beside its MNLI columns;
    * Tables 3 and 7: the columns of TABLE_COLUMNS;
    * Table 8: SNLI-test rows, only when the profile declares the generator (`generator_system`) to be
      Appendix F's Qwen2.5-14B-Instruct; otherwise none: levels written by anything else (the offline
      template fuser, GPT-4o, another LLM) are never set beside Table 8.

    >>> t = pd.DataFrame({"model": ["minilm-esnli"], "tier": ["offline"], "dataset": ["SNLI test"],
    ...                   "Acc L=1": [60.0]})
    >>> table_scores(t, "factnli-table-2", {}, "factnli-fuse-template-v1",
    ...              stand_in="minilm-esnli")[["quantity", "basis"]].values.tolist()
    [['RoBERTa-large SNLI Acc L=1', 'stand-in']]
    >>> table_scores(t, "factnli-table-8", {}, "factnli-fuse-template-v1", generator_system=None).empty
    True
    """
    ours = table[~table["tier"].isin(["paper (printed)", "data"])]
    levels = [c for c in ours.columns if c.startswith("Acc L=")]
    if ref == "factnli-table-2":
        parts = [accuracy_scores(ours[ours["dataset"] == name], ref, {c: f"{word} {c}" for c in levels},
                                 declared, generator, note, stand_in, judge) for name, word in PAPER_DATASET.items()]
        return pd.concat([p for p in parts if len(p)] or parts[:1], ignore_index=True)
    if ref == "factnli-table-8":
        if generator_system != QWEN_GENERATOR:
            return pd.DataFrame(columns=["ref", "quantity", "ours", "model", "basis", "note"])
        return accuracy_scores(ours[ours["dataset"] == SNLI_TEST], ref, {c: f"SNLI {c}" for c in levels},
                               declared, generator, note, stand_in, judge, paper_generator=QWEN_GENERATOR)
    return accuracy_scores(ours, ref, {c: c for c in TABLE_COLUMNS[ref]}, declared, generator, note, stand_in, judge)


def growth_scores(growth: pd.DataFrame, snli_test: pd.DataFrame, generator: str, declared: Mapping,
                  note: str = "", judge: str | None = None,
                  mnli_validation: pd.DataFrame | None = None) -> pd.DataFrame:
    """Scorecard rows for §4.3's text (the lengths behind Fig. 3(a), which prints no number): L=0 lengths of all of
    SNLI test (basis data) beside the low end of the paper's SNLI/MNLI range, and of all of MNLI validation matched
    + mismatched (`mnli_validation`, when at hand) beside its high end; L=3 lengths and growth factors of our SNLI
    levels (`growth`, by `generator`: 'paper-model' only where the profile declares it the paper's GPT-4o) beside
    the low end."""
    from ..basis import model_basis
    from ..text import word_count

    p0, h0 = snli_test["premise"].map(word_count).mean(), snli_test["hypothesis"].map(word_count).mean()
    rows = [("Premise words L=0 (low end)", p0, "none (data)", "data",
             "all of SNLI test; the paper prints 14–20 over SNLI/MNLI"),
            ("Hypothesis words L=0 (low end)", h0, "none (data)", "data",
             "all of SNLI test; the paper prints 7–10 over SNLI/MNLI")]
    if mnli_validation is not None and len(mnli_validation):
        m = f"all {len(mnli_validation):,} pairs of MNLI validation matched + mismatched"
        rows += [("Premise words L=0 (high end)", mnli_validation["premise"].map(word_count).mean(), "none (data)",
                  "data", f"{m}; the paper prints 14–20 over SNLI/MNLI"),
                 ("Hypothesis words L=0 (high end)", mnli_validation["hypothesis"].map(word_count).mean(),
                  "none (data)", "data", f"{m}; the paper prints 7–10 over SNLI/MNLI")]
    g = growth.set_index("level")
    if 3 in g.index:
        basis = model_basis(declared, levels_stand_for(generator, judge))
        rows += [("Premise words L=3 (low end)", g.at[3, "premise_words"], generator, basis, note),
                 ("Hypothesis words L=3 (low end)", g.at[3, "hypothesis_words"], generator, basis, note),
                 ("Premise growth L=0 to L=3 (x, low end)", g.at[3, "premise ×L0"], generator, basis, note),
                 ("Hypothesis growth L=0 to L=3 (x, low end)", g.at[3, "hypothesis ×L0"], generator, basis, note)]
    return pd.DataFrame([{"ref": "factnli-sec-4.3", "quantity": q, "ours": float(v), "model": m, "basis": b, "note": n}
                         for q, v, m, b, n in rows])


# --------------------------------------------------------------------------------------------------------------
# Per-example rows for the explorer (notebook 91)
# --------------------------------------------------------------------------------------------------------------

def prediction_records(preds: pd.DataFrame) -> pd.DataFrame:
    """The predictions behind Tables 2/3/7 and Fig. 4, with `right_at_L0` (the model was right on the original
    pair) and `flipped` (right at L=0, wrong here): the pairs behind an accuracy drop.

    >>> p = pd.DataFrame({"model": ["m"] * 3, "variant": ["full"] * 3, "pair_id": [1, 1, 2], "level": [0, 1, 1],
    ...                   "correct": [True, False, True]})
    >>> prediction_records(p)[["level", "right_at_L0", "flipped"]].values.tolist()
    [[0, True, False], [1, True, True], [1, False, False]]
    """
    base = preds[(preds["variant"] == "full") & (preds["level"] == 0)].set_index(["model", "pair_id"])["correct"]
    out = preds.copy()
    key = pd.MultiIndex.from_arrays([out["model"], out["pair_id"]])
    out["right_at_L0"] = base.reindex(key).astype("boolean").fillna(False).astype(bool).to_numpy()
    out["flipped"] = out["right_at_L0"] & ~out["correct"].astype(bool)
    return out


def diagnostic_records(rows: pd.DataFrame, frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The §4.5 diagnostic rows with the texts and facts they judged (`frames`: variant -> items)."""
    texts = pd.concat([df.assign(variant=v) for v, df in frames.items()], ignore_index=True)
    texts = texts[["variant", "pair_id", "level", "premise", "hypothesis", "premise_facts", "hyp_facts"]]
    return rows.merge(texts, on=["variant", "pair_id", "level"], how="left")
