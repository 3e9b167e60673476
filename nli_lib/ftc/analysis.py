"""The FTC analyses as functions returning tables plus the per-example rows behind them.

* `hit_rates`: §2.4 regex coverage per label and per template (Tables 15–17) on e-SNLI, failures as rows;
* `score_rows` / `ftc_summary`: §2.3 FTC-δ/K/W from the task model's probabilities on (u, x_cf);
* `quality_long` / `quality_table`: §3.2 METEOR of counterfactuals (Table 4/11 layout);
* `cad_reference`, `explanation_reference`, `metric_validation`: §3.3 Wilcoxon ρ (Table 5 layout);
* `worked_examples`, `printed_examples`: Table 3-style rows and the paper's Table 13/14 rows;
* `plot_ftc_distributions`: FTC per label and condition.

Offline, u is the e-SNLI text premise (the paper used e-SNLI-VE images, to avoid word overlap between u
and x_cf), and there are no human-written counterfactuals or human labels on them; see each function.
"""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..config import LABELS
from ..context import Sizes
from ..evaluation import wilcoxon_rho
from ..text import spaceless_key, untokenize_ptb
from .logic import SLOTS, counterfactual_targets, relation
from .metrics import ALPHA, ftc_scores, meteor
from .pipeline import PIPELINES, pipeline_name, regex_transform
from .templates import extract_regex, template_table
from .validity import CHECKS, check_counterfactual

METRICS = ("ftc_delta", "ftc_k", "ftc_w")
PAIR_METRICS = ("las", "lra")  # per-pair LAS/LRA scores (`simulate.las_lra_rows`), Table 5's first two rows
METRIC_NAMES = {"ftc_delta": "FTC-δ", "ftc_k": "FTC-K", "ftc_w": "FTC-W", "las": "LAS", "lra": "LRA"}
EXPLANATION_COLS = ("explanation_1", "explanation_2", "explanation_3")


COUNTERFACTUAL_SAMPLE = Sizes(quick=10, full=100)  # notebook 30: e-SNLI test pairs per label (the paper: 100)
METRIC_SAMPLE = Sizes(quick=12, full=100)  # notebook 31: CAD-revised e-SNLI test pairs per label (the paper: 100)
SENSITIVITY_SAMPLE = Sizes(quick=6, full=100)  # notebook 32: e-SNLI test pairs per label
QUICK_PIPELINES = (("regex", "regex"), ("fsp", "fsp"))  # notebook 32's quick runs: the two pure pipelines


def balanced_sample(df: pd.DataFrame, n_per_label: int | None, seed: int = 0) -> pd.DataFrame:
    """`n_per_label` pairs of each label (all when None), in a seeded random order."""
    if n_per_label is None:
        return df.reset_index(drop=True)
    parts = [g.sample(n=min(n_per_label, len(g)), random_state=seed) for _, g in df.groupby("label", sort=True)]
    return pd.concat(parts).reset_index(drop=True)


# ---------------------------------------------------------------------------------------------------
# §2.4 regex hit rates
# ---------------------------------------------------------------------------------------------------

def _failure_kind(failure: str) -> str:
    """Short category of a hit-rate failure message (for filtering): '' when every slot was produced well-formed.

    >>> _failure_kind("N[A]: malformed: unchanged: counterfactual = hypothesis")
    'counterfactual = hypothesis'
    >>> _failure_kind("C: malformed: no_finite_verb")
    'malformed'
    """
    if not failure:
        return ""
    if failure.startswith("extract"):
        return "no template"
    if "neither span" in failure or "not in hypothesis" in failure:
        return "span not in hypothesis"
    fired = {c for c in CHECKS if f"{c}:" in failure or failure.endswith(c)}
    return "counterfactual = hypothesis" if fired == {"unchanged"} else "malformed"


def hit_rates(df: pd.DataFrame, explanation_cols: Sequence[str] = EXPLANATION_COLS,
              cached: bool = True) -> dict[str, pd.DataFrame]:
    """Regex extraction and transformation coverage on e-SNLI explanations (`regex_hit_rates`), kept in the
    file cache (`filecache.cached_derived`; ~10 s for the 29,526 explanations of e-SNLI dev, ~0.3 s read back)
    under `hit_rates_inputs` and `filecache.library_state` (library sources, data, fixtures, packages).
    cached=False computes it afresh."""
    if not cached:
        return regex_hit_rates(df, explanation_cols)
    from .. import filecache

    path = filecache.derived_path("ftc_hit_rates", hit_rates_inputs(df, explanation_cols), filecache.FRAMES)
    return filecache.cached_derived(path, lambda: regex_hit_rates(df, explanation_cols), "cached regex hit rates",
                                    fmt=filecache.FRAMES)


def hit_rates_inputs(df: pd.DataFrame, explanation_cols: Sequence[str] = EXPLANATION_COLS) -> dict:
    """What `regex_hit_rates` is given: a hash of the pairs' columns it uses, and the explanation columns (the
    library, the tagger model and package versions join them in `filecache.derived_path`).

    >>> df = pd.DataFrame({"pair_id": [1], "hypothesis": ["A dog runs."], "label": ["neutral"],
    ...                    "explanation_1": ["A dog is an animal."]})
    >>> hit_rates_inputs(df, ["explanation_1"]) == hit_rates_inputs(df.copy(), ["explanation_1"])
    True
    >>> hit_rates_inputs(df, ["explanation_1"]) != hit_rates_inputs(df.assign(label="entailment"), ["explanation_1"])
    True
    """
    from ..hashing import frame_hash

    cols = [c for c in ("pair_id", "premise", "hypothesis", "label", *explanation_cols) if c in df]
    return {"pairs": frame_hash(df[cols]), "columns": list(explanation_cols)}


def regex_hit_rates(df: pd.DataFrame, explanation_cols: Sequence[str] = EXPLANATION_COLS) -> dict[str, pd.DataFrame]:
    """Regex extraction and transformation coverage on e-SNLI explanations.

    Returns {"per_label", "per_template", "rows"}: per label the share of explanations some template
    extracts from and the share of counterfactual slots the regex transform then produces well-formed
    (`validity.check_counterfactual`; a malformed one does not count); per template
    how often it is the selected one, how often it matches at all, and how often its extraction then
    gives every counterfactual slot of the label (`n_counterfactual`; `cf_rate_of_selected` = that share
    of its selections); `rows` has one row per explanation (template, A, B, every matching template, the
    regex counterfactuals, and why it failed).
    """
    records = []
    for col in explanation_cols:
        premises = df["premise"] if "premise" in df else pd.Series([None] * len(df), index=df.index)
        for r, premise in zip(df[["pair_id", "hypothesis", "label", col]].itertuples(index=False), premises):
            z = getattr(r, col)
            if not isinstance(z, str) or not z.strip():
                continue
            ex = extract_regex(z, r.label)
            rec = {"pair_id": r.pair_id, "explanation_col": col, "label": r.label, "hypothesis": r.hypothesis,
                   "explanation": z, "template": ex.template, "A": ex.A, "B": ex.B, "matched": ",".join(ex.matched),
                   "extracted": ex.ok}
            rewrites = regex_transform(r.hypothesis, ex.A, ex.B, r.label) if ex.ok else []
            problems = []
            for t in counterfactual_targets(r.label):
                rw = next((w for w in rewrites if w.slot == t.slot), None)
                verdict = (check_counterfactual(r.hypothesis, rw.x_cf, t.slot, source=z, premise=premise)
                           if rw is not None and rw.x_cf
                           else None)
                ok = verdict is not None and verdict.ok
                rec[f"x_cf[{t.slot}]"] = rw.x_cf if rw else None
                rec[f"ok[{t.slot}]"] = ok
                rec["all_slots_ok"] = rec.get("all_slots_ok", True) and ok
                if rw is not None and rw.x_cf is None:
                    problems.append(f"{t.slot}: {rw.reason}")
                elif verdict is not None and not ok:
                    problems.append(f"{t.slot}: malformed: {verdict.reason}")
            rec["failure"] = "extract: no template matched" if not ex.ok else "; ".join(problems)
            rec["failure_kind"] = _failure_kind(rec["failure"])
            records.append(rec)
    rows = pd.DataFrame(records)
    per_label = []
    for label in LABELS:
        sub = rows[rows["label"] == label]
        slots = [t.slot for t in counterfactual_targets(label)]
        entry = {"label": label, "table": {"entailment": "Table 15", "contradiction": "Table 16",
                                          "neutral": "Table 17"}[label],
                 "explanations": len(sub), "extracted": int(sub["extracted"].sum()),
                 "extract_rate": sub["extracted"].mean() if len(sub) else np.nan}
        for slot in slots:
            entry[f"counterfactual_rate[{slot}]"] = sub[f"ok[{slot}]"].mean() if len(sub) else np.nan
        per_label.append(entry)
    per_template = template_table()
    counts = []
    for r in per_template.itertuples(index=False):
        sub = rows[rows["label"] == r.label]
        n = max(len(sub), 1)
        chosen = sub["template"] == r.template
        selected = int(chosen.sum())
        matched = int(sub["matched"].str.split(",").apply(lambda ids, t=r.template: t in ids).sum()) if len(sub) else 0
        produced = int(sub.loc[chosen, "all_slots_ok"].sum()) if selected else 0
        counts.append({"n_selected": selected, "rate_selected": selected / n, "n_matched": matched,
                       "rate_matched": matched / n, "n_counterfactual": produced,
                       "cf_rate_of_selected": produced / selected if selected else np.nan})
    per_template = pd.concat([per_template, pd.DataFrame(counts)], axis=1)
    return {"per_label": pd.DataFrame(per_label), "per_template": per_template, "rows": rows}


# ---------------------------------------------------------------------------------------------------
# §2.3 FTC from the task model
# ---------------------------------------------------------------------------------------------------

def score_rows(rows: pd.DataFrame, model, alpha: float = ALPHA) -> pd.DataFrame:
    """Add the model's probabilities on (u, x) and (u, x_cf), its predictions, and FTC-δ/K/W (ok rows).

    Failed rows keep NaN scores. Model calls go through the call cache (duplicates are computed once).
    """
    out = rows.copy().reset_index(drop=True)
    labels = list(model.labels)
    pairs = out[["premise", "hypothesis"]].drop_duplicates()
    p_orig = model.predict_proba(pairs["premise"].tolist(), pairs["hypothesis"].tolist())
    orig = {(p, h): v for p, h, v in zip(pairs["premise"], pairs["hypothesis"], p_orig)}
    po = np.array([orig[(p, h)] for p, h in zip(out["premise"], out["hypothesis"])]).reshape(len(out), len(labels))
    out["pred"] = [labels[i] for i in po.argmax(axis=1)] if len(out) else []
    ok = out["ok"].to_numpy(dtype=bool)
    pc = np.full((len(out), len(labels)), np.nan)
    if ok.any():
        pc[ok] = model.predict_proba(out.loc[ok, "premise"].tolist(), out.loc[ok, "x_cf"].tolist())
    for j, lab in enumerate(labels):
        out[f"p_{lab}"] = po[:, j]
        out[f"p_cf_{lab}"] = pc[:, j]
    out["pred_cf"] = [labels[int(np.argmax(v))] if k else None for v, k in zip(pc, ok)]
    for m in METRICS:
        out[m] = np.nan
    if ok.any():
        scores = ftc_scores(pc[ok], out.loc[ok, "y_cf"].tolist(), alpha=alpha, labels=labels)
        for m in METRICS:
            out.loc[ok, m] = scores[m]
    out.attrs.update(model=model.name, tier=getattr(model, "tier", "offline"), alpha=alpha)
    return out


def ftc_summary(scored: pd.DataFrame, by: Sequence[str] = ("pipeline", "slot")) -> pd.DataFrame:
    """Per group: pairs, counterfactual coverage, mean FTC-δ/K/W over produced counterfactuals."""
    rows = []
    for key, g in scored.groupby(list(by), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        ok = g[g["ok"]]
        rows.append({**dict(zip(by, key)), "n": len(g), "coverage": g["ok"].mean(),
                     "orig_accuracy": (g["pred"] == g["label"]).mean() if "pred" in g else np.nan,
                     **{METRIC_NAMES[m]: ok[m].mean() if len(ok) else np.nan for m in METRICS}})
    out = pd.DataFrame(rows)
    if "slot" in by:
        out["slot"] = pd.Categorical(out["slot"], SLOTS, ordered=True)
        out = out.sort_values([c for c in by if c != "slot"] + ["slot"], kind="stable").reset_index(drop=True)
        out["slot"] = out["slot"].astype(str)
    return out


# ---------------------------------------------------------------------------------------------------
# §3.2 quality of counterfactuals (METEOR)
# ---------------------------------------------------------------------------------------------------

def quality_long(by_explanation: Mapping[str, pd.DataFrame], reference_pipeline: str = "fsp-fsp",
                 wordnet=None) -> pd.DataFrame:
    """METEOR of each pipeline's counterfactuals (from explanation_1) against three kinds of reference.

    `by_explanation` maps explanation column -> stacked pipeline rows (`all_pipelines` output) for the
    same pairs. References (there are no human counterfactuals offline):

    * 'other explanations': the same pipeline's counterfactuals from explanation_2 and _3 of the pair
      (multi-reference METEOR; the paper's three human rewrites are the analogue);
    * f'pipeline {reference_pipeline}': that pipeline's counterfactual from explanation_1;
    * 'original hypothesis': how much of x survives (1.0 = no rewrite).

    A failed counterfactual scores 0 (as an empty output would); `quality_table(produced_only=True)`
    averages produced ones only. A pseudo-pipeline 'copy (x_cf = x)' shows what leaving the hypothesis
    unchanged would score (its 'other explanations' references are the fsp-fsp ones).
    Returns per-example rows (pipeline, slot, reference, pair_id, meteor, produced).
    """
    first = by_explanation["explanation_1"]
    others = [v for k, v in by_explanation.items() if k != "explanation_1"]
    index = {}
    for frame in others:
        for r in frame[frame["ok"]].itertuples(index=False):
            index.setdefault((r.pipeline, r.pair_id, r.slot), []).append(r.x_cf)
    ref_pipe = {(r.pair_id, r.slot): r.x_cf for r in first[(first["pipeline"] == reference_pipeline) & first["ok"]]
                .itertuples(index=False)}
    copy = first.drop_duplicates(["pair_id", "slot"]).assign(pipeline="copy (x_cf = x)", ok=True)
    copy["x_cf"] = copy["hypothesis"]
    records = []
    for r in pd.concat([first, copy], ignore_index=True).itertuples(index=False):
        hyp = r.x_cf if r.ok else None
        pipe_for_refs = "fsp-fsp" if r.pipeline.startswith("copy") else r.pipeline
        refs = {
            "other explanations": index.get((pipe_for_refs, r.pair_id, r.slot), []),
            f"pipeline {reference_pipeline}": [ref_pipe[(r.pair_id, r.slot)]]
            if (r.pair_id, r.slot) in ref_pipe
            else [],
            "original hypothesis": [r.hypothesis],
        }
        for name, rr in refs.items():
            if not rr or (name.startswith("pipeline") and r.pipeline == reference_pipeline):
                continue
            records.append({"pipeline": r.pipeline, "slot": r.slot, "reference": name, "pair_id": r.pair_id,
                            "produced": bool(r.ok), "meteor": meteor(hyp, rr, wordnet=wordnet)})
    return pd.DataFrame(records)


def quality_rows(by_explanation: Mapping[str, pd.DataFrame], long: pd.DataFrame) -> pd.DataFrame:
    """Per-example rows behind `quality_table`: explanation_1 counterfactuals of every pipeline, the other
    explanations' counterfactuals (the references), and one METEOR column per reference kind."""
    first = by_explanation["explanation_1"].copy()
    for col, frame in by_explanation.items():
        if col == "explanation_1":
            continue
        ref = frame[["pipeline", "pair_id", "slot", "explanation", "x_cf"]].rename(
            columns={"explanation": col, "x_cf": f"x_cf from {col}"})
        first = first.merge(ref, on=["pipeline", "pair_id", "slot"], how="left")
    wide = long[~long["pipeline"].str.startswith("copy")].pivot_table(
        index=["pipeline", "pair_id", "slot"], columns="reference", values="meteor", aggfunc="first")
    wide.columns = [f"METEOR vs {c}" for c in wide.columns]
    return first.merge(wide.reset_index(), on=["pipeline", "pair_id", "slot"], how="left")


def quality_table(
    long: pd.DataFrame, reference: str = "other explanations", produced_only: bool = False
) -> pd.DataFrame:
    """Table 4 layout: rows = pipelines (extract, transform), columns = C, E, N[A], N[B]; mean METEOR."""
    sub = long[long["reference"] == reference]
    if produced_only:
        sub = sub[sub["produced"]]
    table = sub.pivot_table(index="pipeline", columns="slot", values="meteor", aggfunc="mean")
    table = table.reindex(columns=[s for s in SLOTS if s in table.columns])
    order = [pipeline_name(e, t) for e, t in PIPELINES] + ["copy (x_cf = x)"]
    table = table.reindex([p for p in order if p in table.index])
    table.columns.name = None
    return table.reset_index()


# ---------------------------------------------------------------------------------------------------
# §3.3 metric validation: does FTC separate agreement from disagreement on new counterfactual input?
# ---------------------------------------------------------------------------------------------------

def cad_pairs(esnli: pd.DataFrame, split: str = "test") -> pd.DataFrame:
    """The e-SNLI pairs that CAD (Kaushik et al. 2020) revised in `split` (matched on premise and hypothesis)."""
    from .loaders import load_cad

    orig = load_cad("original", split)
    keys = set(zip(orig["premise"].map(spaceless_key), orig["hypothesis"].map(spaceless_key)))
    mask = [(a, b) in keys for a, b in zip(esnli["premise"].map(spaceless_key), esnli["hypothesis"].map(spaceless_key))]
    return esnli[mask].reset_index(drop=True)


def cad_reference(pairs: pd.DataFrame, model, split: str = "test") -> pd.DataFrame:
    """Human counterfactuals with human labels for the C and N[A] slots, from CAD (Kaushik et al. 2020).

    CAD revised each original SNLI pair's hypothesis towards the two other labels. A revision of a
    contradiction (or neutral) pair labelled entailment is a human-written counterfactual with the label
    FTC derives for slot C (N[A]). CAD revisions were written without the e-SNLI explanation (the
    paper's were written from it), so this is a looser reference. Pairs are matched on premise and
    hypothesis text. Returns pair_id, slot, ref_hypothesis, ref_label, ref_pred, p_ref_<label>.
    """
    from .loaders import load_cad

    orig = load_cad("original", split)
    rev = load_cad("revised_hypothesis", split)
    lookup = {
        (spaceless_key(p), spaceless_key(h)): pid
        for p, h, pid in zip(pairs["premise"], pairs["hypothesis"], pairs["pair_id"])
    }
    orig_pid = {
        i: lookup.get((spaceless_key(p), spaceless_key(h)))
        for i, (p, h) in enumerate(zip(orig["premise"], orig["hypothesis"]))
    }
    orig_label = dict(enumerate(orig["label"]))
    slot_for = {("contradiction", "entailment"): "C", ("neutral", "entailment"): "N[A]"}
    rows = []
    for r in rev.itertuples(index=False):
        pid = orig_pid.get(r.orig_index)
        slot = slot_for.get((orig_label.get(r.orig_index), r.label))
        if pid is not None and slot is not None:
            rows.append({"pair_id": pid, "slot": slot, "premise": r.premise, "ref_hypothesis": r.hypothesis,
                         "ref_label": r.label, "ref_source": f"CAD revised_hypothesis {split}"})
    ref = pd.DataFrame(rows, columns=["pair_id", "slot", "premise", "ref_hypothesis", "ref_label", "ref_source"])
    if len(ref):
        probs = model.predict_proba(ref["premise"].tolist(), ref["ref_hypothesis"].tolist())
        ref["ref_pred"] = [model.labels[i] for i in probs.argmax(axis=1)]
        for j, lab in enumerate(model.labels):
            ref[f"p_ref_{lab}"] = probs[:, j]
    else:
        ref["ref_pred"] = []
    return ref.drop(columns=["premise"])


def explanation_reference(
    scored: pd.DataFrame, pipeline: str = "fsp-fsp", source: str = "explanation_2"
) -> pd.DataFrame:
    """Reference counterfactuals built from another explanation of the same pair (`source`).

    Stands in for the paper's filtered setting (human label = derived label, Table 5): ref_label = y_cf,
    ref_pred = the model's prediction on that other counterfactual.
    """
    sub = scored[(scored["pipeline"] == pipeline) & scored["ok"]]
    return pd.DataFrame({"pair_id": sub["pair_id"], "slot": sub["slot"], "ref_hypothesis": sub["x_cf"],
                         "ref_label": sub["y_cf"], "ref_pred": sub["pred_cf"],
                         "ref_source": f"{pipeline} counterfactual from {source}"}).reset_index(drop=True)


def attach_pair_scores(scored: pd.DataFrame, pair_scores: pd.DataFrame) -> pd.DataFrame:
    """Copy of `scored` with the per-pair LAS/LRA columns of `pair_scores` (pair_id, las[, lra]) merged in."""
    cols = ["pair_id"] + [c for c in PAIR_METRICS if c in pair_scores]
    out = scored.drop(columns=[c for c in cols[1:] if c in scored]).merge(
        pair_scores[cols].drop_duplicates("pair_id"), on="pair_id", how="left")
    out.attrs.update(scored.attrs)
    return out


VALIDATION_COLUMNS = ["pipeline", "slot", "metric", "U", "rho", "p_value", "n1", "n0", "significant"]


def metric_validation(scored: pd.DataFrame, reference: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Wilcoxon rank-sum ρ of each metric between 'model agrees' and 'model disagrees' groups.

    Agreement: the model's prediction on the reference counterfactual equals the reference label. FTC is
    computed on the pipeline's own counterfactual (from explanation_1); rows where the pipeline produced
    none have NaN FTC and drop out of the FTC tests (n1/n0 count what remains). LAS/LRA columns, when
    `scored` has them (`attach_pair_scores`), belong to the pair's explanation and are tested on every
    row with a reference. Returns (long table: `VALIDATION_COLUMNS`, no rows when no example has a reference,
    e.g. a rewriter that produced no counterfactual from the other explanation; merged per-example rows).
    """
    ref = reference.drop_duplicates(["pair_id", "slot"])
    merged = scored.merge(ref, on=["pair_id", "slot"], how="inner")
    merged["agree"] = merged["ref_pred"] == merged["ref_label"]
    metrics = [m for m in PAIR_METRICS if m in merged] + list(METRICS)
    rows = []
    for (pipe, slot), g in merged.groupby(["pipeline", "slot"], sort=False):
        for m in metrics:
            res = wilcoxon_rho(g.loc[g["agree"], m], g.loc[~g["agree"], m])
            rows.append({"pipeline": pipe, "slot": slot, "metric": METRIC_NAMES[m], **res,
                         "significant": bool(res["p_value"] < 0.05) if res["p_value"] == res["p_value"] else False})
    return pd.DataFrame(rows, columns=VALIDATION_COLUMNS), merged


def rho_table(long: pd.DataFrame, pipeline: str = "fsp-fsp") -> pd.DataFrame:
    """Table 5 layout for one pipeline: rows = LAS, LRA (when computed), FTC variants; columns = slots;
    'ρ*' (* p < 0.05)."""
    sub = long[long["pipeline"] == pipeline]
    cell = sub.assign(
        cell=[("" if r != r else f"{r:.3f}" + ("*" if s else "")) for r, s in zip(sub["rho"], sub["significant"])]
    )
    table = cell.pivot(index="metric", columns="slot", values="cell")
    order = [METRIC_NAMES[m] for m in PAIR_METRICS + METRICS if METRIC_NAMES[m] in table.index]
    table = table.reindex(index=order, columns=[s for s in SLOTS if s in table.columns])
    table.columns.name = None
    return table.reset_index()


def with_paper(
    long: pd.DataFrame, ref: str, quantity: Callable[[pd.Series], str], column: str = "paper"
) -> pd.DataFrame:
    """Copy of `long` with the paper's value (`ref`, quantity(row)) in `column` (NaN where none is printed)."""
    from ..paper_values import paper_value

    def look(row):
        try:
            return paper_value(ref, quantity(row))
        except KeyError:
            return np.nan

    out = long.copy()
    out[column] = [look(r) for _, r in out.iterrows()]
    return out


# ---------------------------------------------------------------------------------------------------
# Worked examples (Table 3) and the paper's printed rows (Tables 13, 14)
# ---------------------------------------------------------------------------------------------------

def worked_examples(scored: pd.DataFrame, pipeline: str = "fsp-fsp", per_label: int = 1, seed: int = 0) -> pd.DataFrame:
    """Table 3 style, one block per pair: original f(u, x) → ŷ, each counterfactual f(u, x_cf) → ŷ_cf with
    its derived label, the explanation, R(A, B) and FTC-δ/K/W.

    `per_label` pairs per original label (C, E, N as in Table 3), drawn (seeded) from the pairs whose
    counterfactual slots `pipeline` all produced, so a neutral pair shows x_cf[A] and x_cf[B] together.
    """
    sub = scored[scored["pipeline"] == pipeline]
    complete = sub.groupby("pair_id")["ok"].all()
    sub = sub[sub["pair_id"].isin(complete[complete].index)]
    picks = []
    for label in ("contradiction", "entailment", "neutral"):
        ids = sub.loc[sub["label"] == label, "pair_id"].drop_duplicates()
        for pid in ids.sample(n=min(per_label, len(ids)), random_state=seed):
            g = sub[sub["pair_id"] == pid]
            picks.append(g.assign(_order=g["slot"].map({s: i for i, s in enumerate(SLOTS)})).sort_values("_order"))
    if not picks:
        return pd.DataFrame()
    ex = pd.concat(picks)
    return pd.DataFrame({
        "pair_id": ex["pair_id"], "slot": ex["slot"], "premise": ex["premise"],
        "original": [f"f(u, {h}) → {p}" for h, p in zip(ex["hypothesis"], ex["pred"])],
        "counterfactual": [f"f(u, {x}) → {p}" for x, p in zip(ex["x_cf"], ex["pred_cf"])],
        "expected y_cf": ex["y_cf"], "explanation": ex["explanation"],
        "R(A,B)": [relation(lab, a, b) for lab, a, b in zip(ex["label"], ex["A"], ex["B"])],
        **{METRIC_NAMES[m]: ex[m].round(3) for m in METRICS},
    }).reset_index(drop=True)


def printed_examples(rewriter=None) -> dict[str, pd.DataFrame]:
    """The paper's Table 13 (extraction) and Table 14 (transformation) rows through our regex / FSP steps.

    Extraction: gold spans vs regex and (if `rewriter`) FSP spans, with exact-match flags (determiners and
    case ignored). Transformation: gold counterfactual vs regex substitution and FSP, with METEOR.
    """
    from .logic import LONG
    from .prompts import FTC_EXTRACT_EXAMPLES, FTC_TRANSFORM_EXAMPLES
    from .text import strip_determiners

    def same(a, b):
        return (
            a is not None
            and b is not None
            and strip_determiners(untokenize_ptb(a)) == strip_determiners(untokenize_ptb(b))
        )

    ex_rows = []
    for short, rows in FTC_EXTRACT_EXAMPLES.items():
        label = LONG[short]
        fsp = (
            rewriter.extract([r["explanation"] for r in rows], [label] * len(rows)) if rewriter else [None] * len(rows)
        )
        for r, f in zip(rows, fsp):
            rx = extract_regex(r["explanation"], label)
            fa, fb = (f.value["A"], f.value["B"]) if f is not None and f.ok else (None, None)
            ex_rows.append({"label": short, "explanation": r["explanation"], "gold A": r["A"], "gold B": r["B"],
                            "regex template": rx.template, "regex A": rx.A, "regex B": rx.B,
                            "regex exact": same(rx.A, r["A"]) and same(rx.B, r["B"]),
                            "fsp A": fa, "fsp B": fb, "fsp exact": same(fa, r["A"]) and same(fb, r["B"])})
    tr_rows = []
    for group, rows in FTC_TRANSFORM_EXAMPLES.items():
        label = "neutral" if group == "N" else "contradiction"
        fsp = (rewriter.transform([r["hyp_original"] for r in rows], [r["A"] for r in rows], [r["B"] for r in rows],
                                  [label] * len(rows)) if rewriter else [None] * len(rows))
        for r, f in zip(rows, fsp):
            rx = {w.slot: w.x_cf for w in regex_transform(r["hyp_original"], r["A"], r["B"], label)}
            if group == "N":
                gold = dict(part.split(": ", 1) for part in r["hyp_cf"].split("; "))
                fv = f.value if f is not None and f.ok else {}
                for s, key in (("N[A]", "A"), ("N[B]", "B")):
                    tr_rows.append({"label": "N", "slot": s, "hypothesis": r["hyp_original"], "A": r["A"], "B": r["B"],
                                    "gold": gold[key], "regex": rx.get(s), "fsp": fv.get(key)})
            else:
                tr_rows.append(
                    {
                        "label": "C/E",
                        "slot": "C/E",
                        "hypothesis": r["hyp_original"],
                        "A": r["A"],
                        "B": r["B"],
                        "gold": r["hyp_cf"],
                        "regex": next(iter(rx.values())),
                        "fsp": f.value if f is not None and f.ok else None,
                    }
                )
    tr = pd.DataFrame(tr_rows)
    tr["regex METEOR"] = [meteor(h, [g]) for h, g in zip(tr["regex"], tr["gold"])]
    tr["fsp METEOR"] = [meteor(h, [g]) if rewriter else np.nan for h, g in zip(tr["fsp"], tr["gold"])]
    return {"extract": pd.DataFrame(ex_rows), "transform": tr}


# The paper's own rewrites: (source, label, hypothesis, explanation, {slot: counterfactual}), as printed.
PAPER_REWRITES = (
    ("§1 example", "entailment", "The dog is barking at the girl.", "The dog is an animal.",
     {"E": "The animal is barking at the girl."}),
    ("Figure 2", "contradiction", "The woman is standing on a snake",
     "Standing on a snake is not the same as sitting on a fake alligator",
     {"C": "The woman is sitting on a fake alligator"}),
    ("Table 3 row 1", "contradiction", "There are people playing the piano",
     "The people in the photo are not playing the piano. They are instead playing other woodwind instruments.",
     {"C": "There are people playing woodwind instruments."}),
    ("Table 3 row 2", "entailment", "A man in safety equipment is working on a piece of metal.",
     "Protective gear is a piece of safety equipment",
     {"E": "A man in protective gear is working on a piece of metal."}),
    ("Table 3 row 3", "neutral", "Two kids walk home from school.",
     "Kids walking down a sidewalk are not necessarily going home from school.",
     {"N[A]": "Two kids are walking down a sidewalk.", "N[B]": "Two kids are going home from school."}),
    ("Figure 5", "contradiction", "Two men shooting each other.", "Dogs and men are different species.",
     {"C": "Two dogs are shooting each other."}),
    ("Figure 6", "contradiction", "A dog is sitting on a porch.",
     "A dog cannot be running and sitting at the same time.", {"C": "A dog is running on a porch."}),
    ("Figure 7", "contradiction", "Man riding a motorcycle.", "The man is on a lake with a monoboard.",
     {"C": "Man riding a monoboard."}),
)


def printed_rewrites(rewriter=None, pipelines: Sequence[tuple[str, str]] = PIPELINES, wordnet=None) -> pd.DataFrame:
    """The paper's printed counterfactual rewrites (§1, Fig. 2, Table 3, Figs. 5–7) through our pipelines.

    These are the only human-written counterfactuals the paper prints (9 slots). Per (example, slot,
    pipeline): spans, our counterfactual, METEOR against the paper's, and whether they are equal after
    normalisation. FSP pipelines need `rewriter`; without one only regex-regex runs.
    """
    from .pipeline import counterfactual_rows

    df = pd.DataFrame([{"pair_id": f"paper-{i}", "premise": "", "hypothesis": h, "label": lab, "explanation_1": z,
                        "source": src} for i, (src, lab, h, z, _) in enumerate(PAPER_REWRITES)])
    gold = {(f"paper-{i}", slot): cf for i, (*_, cfs) in enumerate(PAPER_REWRITES) for slot, cf in cfs.items()}
    pipes = [p for p in pipelines if rewriter is not None or p == ("regex", "regex")]
    rows = pd.concat([counterfactual_rows(df, e, t, rewriter) for e, t in pipes], ignore_index=True)
    rows = rows.merge(df[["pair_id", "source"]], on="pair_id")
    rows["paper_x_cf"] = [gold[(p, s)] for p, s in zip(rows["pair_id"], rows["slot"])]
    rows["meteor"] = [meteor(x if ok else None, [g], wordnet=wordnet) for x, ok, g in
                      zip(rows["x_cf"], rows["ok"], rows["paper_x_cf"])]
    rows["exact"] = [
        bool(ok) and untokenize_ptb(x) == untokenize_ptb(g)
        for x, ok, g in zip(rows["x_cf"], rows["ok"], rows["paper_x_cf"])
    ]
    return rows[["source", "label", "slot", "hypothesis", "explanation", "pipeline", "A", "B", "x_cf", "ok", "reason",
                 "paper_x_cf", "meteor", "exact"]]


# ---------------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------------

def plot_ftc_distributions(scored: pd.DataFrame, metric: str = "ftc_k", hue: str = "condition", title: str = ""):
    """FTC values per counterfactual slot (x) and `hue` (e.g. condition or pipeline): a box where a group holds at
    least `figures.MIN_BOX_N` values, its points always, and `n = k` under every group (empty groups included).

    The legend sits outside the axes (right), so it never covers a group.
    """
    import matplotlib.pyplot as plt

    from nli_lib import figures

    data = scored[scored["ok"]].copy()
    order = [s for s in SLOTS if s in set(scored["slot"])]  # a slot or hue level with no ok counterfactual: n = 0
    has_hue = hue in data
    hue_order = list(dict.fromkeys(scored[hue])) if has_hue else []
    colors = figures.palette(max(len(hue_order), 1))
    fig, ax = plt.subplots(figsize=(9, 4.2))
    shown = figures.boxes_or_points(ax, data, "slot", metric, hue if has_hue else None, order, hue_order, colors)
    ax.ticklabel_format(axis="y", useOffset=False)  # an offset ("−7" above the axis) would sit over the groups
    figures.label_counts(ax, shown, rotate=len(hue_order) > 2)
    ax.set_xlabel("counterfactual slot (original label → y_cf)")
    ax.set_ylabel(METRIC_NAMES.get(metric, metric))
    ax.set_title(title, fontsize=10)
    ax.legend(handles=figures.group_handles(hue_order, colors) if has_hue else figures.group_handles([], []),
              title=hue if has_hue else None, fontsize=9, title_fontsize=9, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    return fig


def plot_agreement_boxes(references: Mapping[str, pd.DataFrame], pipeline: str = "fsp-fsp", metric: str = "ftc_k",
                         title: str = ""):
    """One panel per reference (name -> `metric_validation`'s merged rows): `metric` per slot for the pairs where
    the model agrees / disagrees with the reference label (the two groups of the rank-sum test); a box where a
    group holds at least `figures.MIN_BOX_N` values, its points always, `n = k` under every group.

    The legend sits outside the axes (right).
    """
    import matplotlib.pyplot as plt

    from nli_lib import figures

    colors = figures.palette(2)
    fig, axes = plt.subplots(1, len(references), figsize=(11, 4.2), sharey=True, squeeze=False)
    axes = axes[0]
    panels = []
    for ax, (name, merged) in zip(axes, references.items()):
        g = merged[merged["pipeline"] == pipeline]
        slots = [s for s in SLOTS if s in set(g["slot"])]
        shown = figures.boxes_or_points(ax, g, "slot", metric, "agree", slots, [True, False], colors)
        ax.ticklabel_format(axis="y", useOffset=False)
        ax.set_title(f"reference: {name}", fontsize=10)
        ax.set_xlabel("counterfactual slot")
        panels.append((ax, shown))
    axes[0].set_ylabel(f"{METRIC_NAMES.get(metric, metric)} ({pipeline} counterfactual)")
    for k, (ax, shown) in enumerate(panels):
        figures.label_counts(ax, shown, grow=k == 0)  # the y axis is shared: grow it once
    axes[-1].legend(handles=figures.group_handles(["agrees", "disagrees"], colors), title="model vs reference label",
                    fontsize=9, title_fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig
