"""The tables, records and scorecard frames the FTC notebooks (30–32) show: the wrangling behind their cells.

Each function takes what a notebook computed and returns the frame it saves, so a cell reads as the call and
its result. Scorecard frames have the columns `Outputs.score_frame` reads (ref, quantity, ours, model, note);
the notebook passes the basis. Which paper rows an FSP result may stand beside is decided in `rewriters`
(`is_table4_rewriter`, `fsp_quantity`): an undeclared rewriter (the offline stand-ins) is set beside none.

>>> cf = pd.DataFrame({"pipeline": ["regex-regex"] * 3, "slot": ["C", "E", "N[A]"],
...                    "status": ["ok", "malformed", "malformed"],
...                    "reason": ["", "malformed: agreement: 'a boats'", "malformed: copula_verb: x; subjectless: y"]})
>>> status_table(cf).to_dict("records")
[{'pipeline': 'regex-regex', 'malformed': 2, 'ok': 1}]
>>> checks_fired(cf).to_dict("records")
[{'check': 'copula_verb', 'regex-regex': 1}, {'check': 'agreement', 'regex-regex': 1}, \
{'check': 'subjectless', 'regex-regex': 1}]
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .analysis import balanced_sample, quality_table, with_paper
from .logic import PROPOSITIONS, SHORT, counterfactual_targets
from .rewriters import fsp_quantity, is_table4_rewriter
from .validity import CHECKS

RELATIONS = {"entailment": "A ⇔ B", "contradiction": "¬(A ⇔ B)", "neutral": "¬(A ⇒ B)"}
# METEOR tables of notebook 30: output name -> (reference, produced counterfactuals only)
METEOR_TABLES = {"table-4-meteor-vs-other-explanations": ("other explanations", False),
                 "table-4-meteor-vs-other-explanations-produced": ("other explanations", True),
                 "table-4-meteor-vs-fsp-fsp": ("pipeline fsp-fsp", False),
                 "table-4-meteor-vs-hypothesis": ("original hypothesis", False)}
SCORE_COLUMNS = ["ref", "quantity", "ours", "model", "note"]


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)


# ---------------------------------------------------------------------------------------------------
# Notebook 30: counterfactuals
# ---------------------------------------------------------------------------------------------------

def label_derivation_table() -> pd.DataFrame:
    """Tables 1–2 as implemented in `logic`: one row per (label, counterfactual slot).

    >>> label_derivation_table()[["label y", "slot", "y_cf"]].values.tolist()
    [['E', 'E', 'E'], ['C', 'C', 'E'], ['N', 'N[A]', 'E'], ['N', 'N[B]', 'N']]
    """
    return pd.DataFrame([{"label y": SHORT[lab], "formula": PROPOSITIONS[lab][0], "meaning": PROPOSITIONS[lab][1],
                          "R(A,B)": RELATIONS[lab], "slot": t.slot, "counterfactual formula": t.formula,
                          "y_cf": SHORT[t.y_cf]}
                         for lab in ("entailment", "contradiction", "neutral") for t in counterfactual_targets(lab)])


def rewrite_summary(rewrites: pd.DataFrame) -> pd.DataFrame:
    """Per pipeline: slots, produced (ok), exact matches and mean METEOR against the paper's printed rewrites."""
    return (rewrites.groupby("pipeline", sort=False)
            .agg(slots=("slot", "size"), produced=("ok", "sum"), exact=("exact", "sum"), METEOR=("meteor", "mean"))
            .reset_index())


def status_table(cf: pd.DataFrame) -> pd.DataFrame:
    """Counterfactual slots per pipeline (rows) and status (columns: failed / malformed / ok), with the ok slots
    split into rewrites and unchanged copies of the hypothesis when `cf` has the texts (`coverage_table`)."""
    out = cf.pivot_table(index="pipeline", columns="status", values="slot", aggfunc="size", fill_value=0)
    out.columns.name = None
    out = out.reset_index()
    if {"x_cf", "hypothesis"} <= set(cf.columns):
        cov = coverage_table(cf).set_index("pipeline")
        out = out.assign(**{c: out["pipeline"].map(cov[c]) for c in ("ok rewrites", "ok copies", "coverage")})
    return out


def is_copy(cf: pd.DataFrame) -> pd.Series:
    """Per row: an ok counterfactual that is the hypothesis unchanged (up to case and tokenisation); N[B] may keep
    the hypothesis (Proposition 3), so such rows pass the checks without rewriting anything."""
    from ..text import untokenize_ptb

    same = [untokenize_ptb(str(x)).lower() == untokenize_ptb(str(h)).lower()
            for x, h in zip(cf["x_cf"], cf["hypothesis"])]
    return cf["ok"].astype(bool) & pd.Series(same, index=cf.index)


def coverage_table(cf: pd.DataFrame) -> pd.DataFrame:
    """Per pipeline and over all: slots, ok, ok rewrites, ok copies (the hypothesis unchanged), coverage (ok
    rewrites per slot) and the copies' share of the ok slots.

    >>> cf = pd.DataFrame({"pipeline": ["p"] * 4, "ok": [True, True, False, False],
    ...                    "x_cf": ["A dog runs .", "A cat sits .", None, "x"],
    ...                    "hypothesis": ["A cat runs .", "A cat sits .", "A cat .", "y"]})
    >>> coverage_table(cf).iloc[-1][["slots", "ok rewrites", "ok copies", "coverage"]].astype(float).tolist()
    [4.0, 1.0, 1.0, 0.25]
    """
    rows = cf.assign(copy=is_copy(cf), rewrite=lambda d: d["ok"].astype(bool) & ~d["copy"])
    parts = [*rows.groupby("pipeline", sort=False), ("all", rows)]
    return pd.DataFrame([{"pipeline": name, "slots": len(g), "ok": int(g["ok"].sum()),
                          "ok rewrites": int(g["rewrite"].sum()), "ok copies": int(g["copy"].sum()),
                          "coverage": round(g["rewrite"].mean(), 4) if len(g) else float("nan"),
                          "copies of ok": round(g["copy"].sum() / g["ok"].sum(), 4) if g["ok"].sum() else float("nan")}
                         for name, g in parts])


def coverage_line(cf: pd.DataFrame, by: str | None = None) -> str:
    """One line printed beside every FTC table: how many slots the table's numbers rest on (with `by`, one line
    per value of that column, e.g. the sensitivity conditions).

    >>> cf = pd.DataFrame({"pipeline": ["p"] * 4, "ok": [True, True, False, False],
    ...                    "x_cf": ["A dog runs .", "A cat sits .", None, "x"],
    ...                    "hypothesis": ["A cat runs .", "A cat sits .", "A cat .", "y"]})
    >>> print(coverage_line(cf))  # doctest: +NORMALIZE_WHITESPACE
    coverage: 1 of 4 slots (25.0%) have an ok counterfactual that rewrites the hypothesis;
    1 more ok slot copies it unchanged (50.0% of ok)
    """
    if by is not None:
        return "\n".join(f"{key}: {coverage_line(g)}" for key, g in cf.groupby(by, sort=False))
    t = coverage_table(cf).iloc[-1]
    return (f"coverage: {t['ok rewrites']} of {t['slots']} slots ({100 * t['coverage']:.1f}%) have an ok "
            f"counterfactual that rewrites the hypothesis;\n{t['ok copies']} more ok slot"
            f"{'' if t['ok copies'] == 1 else 's'} cop{'ies' if t['ok copies'] == 1 else 'y'} it unchanged"
            + (f" ({100 * t['copies of ok']:.1f}% of ok)" if t["ok"] else ""))


def checks_fired(cf: pd.DataFrame) -> pd.DataFrame:
    """How often each well-formedness check (`validity.CHECKS`, in that order, then the learned verifier's
    `verifier.REASON`) fires on malformed rows, per pipeline; one row may fire several checks."""
    from .verifier import REASON

    fired = (cf.loc[cf["status"] == "malformed", ["pipeline", "reason"]]
             .assign(check=lambda d: d["reason"].str.replace("malformed: ", "", regex=False)
                     .str.split(" \\[").str[0].str.split("; ")).explode("check"))
    fired["check"] = fired["check"].str.split(":").str[0]
    table = fired.pivot_table(index="check", columns="pipeline", values="reason", aggfunc="size", fill_value=0)
    table.columns.name = None
    return table.reindex([c for c in (*CHECKS, REASON) if c in table.index]).reset_index()


def gold_report(rewriter) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The gold set compared with the current offline pipelines (`gold.gold_comparison`) and its precision table
    (overall, per pipeline, per batch), with the generator version now and the versions the items were judged
    with. The gold set judges the offline generators: an LLM rewriter is replaced by the offline stand-ins."""
    from .fewshot import FewShotRewriter
    from .gold import load_gold, precision_table
    from .pipeline import pipeline_version
    from .verifier import fingerprint

    offline = rewriter if getattr(rewriter, "tier", None) == "offline" else FewShotRewriter.offline()
    compared = cached_gold_comparison(load_gold(), offline)
    compared["kind"] = np.where(is_copy(compared.assign(x_cf=compared["counterfactual"])), "copy", "rewrite")
    table = precision_table(compared)
    table["generator version now"] = pipeline_version()
    table["verifier now"] = fingerprint()  # the learned verifier's fit and corpus (`verifier.fingerprint`)
    table["judged with"] = ", ".join(sorted(set(compared["pipeline_version"])))
    return compared, table


def cached_gold_comparison(gold: pd.DataFrame, rewriter) -> pd.DataFrame:
    """`gold.gold_comparison` (~2.4 s: the pipelines on every gold input; notebooks 30-32 each ask for it), kept
    in the file cache (`filecache.cached_derived`) under the gold rows, the rewriter's name, tier and shots, and
    `filecache.library_state` (library sources, data files, package versions)."""
    from .. import filecache
    from ..hashing import frame_hash
    from .gold import gold_comparison

    shots = {"/".join(k): v for k, v in getattr(rewriter, "shots", {}).items()}
    inputs = {"gold": frame_hash(gold), "rewriter": rewriter.name, "tier": rewriter.tier, "shots": shots}
    path = filecache.derived_path("ftc_gold_comparison", inputs, filecache.FRAMES)
    return filecache.cached_derived(path, lambda: {"compared": gold_comparison(gold, rewriter)},
                                    "cached gold comparison", fmt=filecache.FRAMES)["compared"]


def precision_lines(table: pd.DataFrame) -> str:
    """The precision table's overall and held-out lines, for printing beside the tables.

    >>> t = pd.DataFrame([{"by": "all", "group": "all", "n_items": 10, "n_stale": 0, "n_ok": 8, "n_ok_correct": 7,
    ...                    "precision": 0.875, "precision_lo": 0.53, "precision_hi": 0.98, "recall": 1.0,
    ...                    "n_correct": 7}])
    >>> print(precision_lines(t))
    gold set: 10 hand-judged items, 0 stale (text changed since judged)
    precision of ok (all batches, mostly in sample): 7/8 = 0.875 (95% CI 0.530–0.980); recall 1.000 (n=7)
    """
    s = table.iloc[0]
    lines = [f"gold set: {s.n_items} hand-judged items, {s.n_stale} stale (text changed since judged)",
             f"precision of ok (all batches, mostly in sample): {s.n_ok_correct}/{s.n_ok} = {s.precision:.3f} "
             f"(95% CI {s.precision_lo:.3f}–{s.precision_hi:.3f}); recall {s.recall:.3f} (n={s.n_correct})"]
    from .gold import HELD_OUT_BATCH

    kinds = table[table["by"] == "kind"] if "by" in table else table.iloc[:0]
    for k in kinds.itertuples(index=False):
        kind = "unchanged copies of the hypothesis (nothing rewritten)" if k.group == "copy" else "rewrites"
        lines.append(f"  ok {kind}: {k.n_ok_correct}/{k.n_ok} judged correct")
    held = table[(table["by"] == "batch") & (table["group"] == HELD_OUT_BATCH)] if "by" in table else table.iloc[:0]
    if len(held):
        h = held.iloc[0]
        lines.append(f"held-out batch {HELD_OUT_BATCH} (judged after the checks' last revision; the out-of-sample "
                     f"estimate): {h.n_ok_correct}/{h.n_ok} = {h.precision:.3f} (95% CI {h.precision_lo:.3f}–"
                     f"{h.precision_hi:.3f}); target ≥ 0.90")
    return "\n".join(lines)


def gold_precision_note(rewriter) -> str:
    """One printed paragraph for notebooks 31/32: the gold-set precision of the counterfactuals they score when
    the FSP steps are the offline stand-ins; for another rewriter, that the gold set does not measure it."""
    if getattr(rewriter, "tier", None) != "offline":
        return (f"FSP steps {rewriter.name}: not measured by the gold set (it judges the offline stand-ins); "
                "the well-formedness checks still apply")
    return judged_lines() + "\nthe team's gold set (notebook 30; the checks were tuned on it, so mostly in " \
        "sample):\n" + precision_lines(gold_report(rewriter)[1])


def judged_lines() -> str:
    """The offline pipelines' precision on their fresh judged sample (`nli_lib.judged`: rewrites only, drawn
    after the code's last change), its coverage, the unchanged copies apart, and the staleness notice if any."""
    from .. import judged

    return judged.lines("ftc")[0]


def priming_pool_validity(dev: pd.DataFrame, n_per_label: int, seed: int = 0) -> pd.DataFrame:
    """Per label: regex-regex counterfactuals produced on a balanced e-SNLI dev sample, and how many pass the
    checks (only those prime the 20-shot prompts)."""
    from .pipeline import counterfactual_rows

    rows = counterfactual_rows(balanced_sample(dev, n_per_label, seed=seed), "regex", "regex")
    produced = rows[rows["status"] != "failed"]
    return (produced.assign(valid=produced["ok"]).groupby("label")["valid"]
            .agg(produced="size", valid="sum").reset_index())


def meteor_tables(long: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The four METEOR tables of notebook 30 (`METEOR_TABLES`), by output name."""
    return {name: quality_table(long, ref, produced_only=produced)
            for name, (ref, produced) in METEOR_TABLES.items()}


def meteor_score_frame(beside: pd.DataFrame, rewriter, note: str) -> pd.DataFrame:
    """Scorecard rows of notebook 30: Table 4 (human explanations) for regex-regex, and for FSP pipelines only
    when the rewriter is declared GPT-Neo2.7B; the Table 11 row of the declared rewriter (`fsp_quantity`).

    >>> from nli_lib.ftc.fewshot import FewShotRewriter
    >>> beside = pd.DataFrame({"pipeline": ["regex-regex", "fsp-fsp"], "slot": ["C", "C"], "ours": [0.5, 0.4]})
    >>> meteor_score_frame(beside, FewShotRewriter.offline(), "n")[["ref", "quantity", "model"]].values.tolist()
    [['ftc-table-4', 'METEOR regex-regex C human', 'regex'], ['ftc-table-11', 'METEOR regex regex-regex C human', \
'regex']]
    """
    rows = []
    for r in beside.itertuples(index=False):
        who = "regex" if r.pipeline == "regex-regex" else rewriter.name
        if r.pipeline == "regex-regex" or is_table4_rewriter(rewriter):
            rows.append({"ref": "ftc-table-4", "quantity": f"METEOR {r.pipeline} {r.slot} human", "ours": r.ours,
                         "model": who, "note": note})
        found = fsp_quantity(rewriter, r.pipeline, r.slot)  # None: an undeclared rewriter's FSP row
        if found is not None:
            rows.append({"ref": found[0], "quantity": found[1], "ours": r.ours, "model": who, "note": note})
    return _frame(rows)


# ---------------------------------------------------------------------------------------------------
# Notebook 31: the metric's validation (Table 5)
# ---------------------------------------------------------------------------------------------------

def rho_beside_paper(val_cad: pd.DataFrame, val_x2: pd.DataFrame, rewriter, pipeline: str = "fsp-fsp"
                     ) -> pd.DataFrame:
    """ρ of `pipeline` for both references (CAD, explanation_2) beside the paper's Table 5 (filtered) and Table
    10 (unfiltered). The paper's FTC rows are GPT-Neo2.7B's: blank beside an undeclared rewriter (LAS/LRA stay)."""
    parts = [v[v["pipeline"] == pipeline][["slot", "metric", "rho", "p_value", "n1", "n0"]].assign(reference=name)
             for name, v in (("CAD", val_cad), ("explanation_2", val_x2))]
    out = with_paper(pd.concat(parts, ignore_index=True), "ftc-table-5", lambda r: f"rho {r['metric']} {r['slot']}")
    out = with_paper(out, "ftc-table-10", lambda r: f"rho {r['metric']} {r['slot']}", "paper (unfiltered, Table 10)")
    if not is_table4_rewriter(rewriter):
        out.loc[~out["metric"].isin(["LAS", "LRA"]), ["paper", "paper (unfiltered, Table 10)"]] = np.nan
    return out


def table5_score_frame(beside: pd.DataFrame, model: str, simulator: str, rewriter, alpha: float) -> pd.DataFrame:
    """Scorecard rows of notebook 31 (Table 5, filtered): the CAD reference only (explanation_2 is built by the
    same rewriter and task model as the scores it validates: never scored); FTC rows only for a rewriter
    declared GPT-Neo2.7B; LAS/LRA rows name the simulator.

    >>> from nli_lib.ftc.fewshot import FewShotRewriter
    >>> beside = pd.DataFrame({"reference": ["CAD", "CAD", "explanation_2"], "metric": ["LAS", "FTC-K", "LAS"],
    ...                        "slot": ["C", "C", "C"], "rho": [0.6, 0.7, 0.9], "n1": 3, "n0": 2, "p_value": 0.2})
    >>> table5_score_frame(beside, "m", "sim", FewShotRewriter.offline(), 0.7)[["quantity", "model"]].values.tolist()
    [['rho LAS C', 'm + sim']]
    """
    rows = []
    for r in beside.itertuples(index=False):
        if r.reference != "CAD" or r.rho != r.rho:
            continue
        pair_metric = r.metric in ("LAS", "LRA")
        if not pair_metric and not is_table4_rewriter(rewriter):  # Table 5's FSP is GPT-Neo2.7B
            continue
        note = (f"reference: CAD human revision; n agree {r.n1} / disagree {r.n0}; p={r.p_value:.3g}; "
                f"e-SNLI test text premises; α={alpha}")
        rows.append({"ref": "ftc-table-5", "quantity": f"rho {r.metric} {r.slot}", "ours": r.rho,
                     "model": f"{model} + {simulator if pair_metric else rewriter.name}", "note": note})
    return _frame(rows)


def agreement_records(scored: pd.DataFrame, merged_cad: pd.DataFrame, merged_x2: pd.DataFrame) -> pd.DataFrame:
    """Per counterfactual (every pipeline): prediction, FTC, LAS/LRA of the pair, and the agreement with each
    reference (CAD revision, explanation_2 counterfactual), for the explorer."""
    keys = ["pipeline", "pair_id", "slot"]
    agree = (merged_cad[keys + ["ref_hypothesis", "ref_pred", "agree"]]
             .rename(columns={"ref_hypothesis": "CAD x_cf", "ref_pred": "pred on CAD x_cf", "agree": "agree CAD"})
             .merge(merged_x2[keys + ["ref_hypothesis", "agree"]]
                    .rename(columns={"ref_hypothesis": "explanation_2 x_cf", "agree": "agree explanation_2"}),
                    on=keys, how="outer"))
    keep = ["pair_id", "pipeline", "label", "slot", "y_cf", "ok", "pred", "pred_cf", "ftc_delta", "ftc_k", "ftc_w",
            "las", "lra", "premise", "hypothesis", "explanation", "A", "B", "x_cf", "reason"]
    return scored[[c for c in keep if c in scored]].merge(agree, on=keys, how="left")


# ---------------------------------------------------------------------------------------------------
# Notebook 32: sensitivity (Tables 6 and 12)
# ---------------------------------------------------------------------------------------------------

TABLE6_COLUMNS = ("BER", "MET", "LAS", "LRA", "FTC-K")


def table6_beside_paper(t6: pd.DataFrame, rewriter) -> pd.DataFrame:
    """Our Table 6 columns beside the paper's (`paper BER`, …); the paper's FTC-K is GPT-Neo2.7B's: blank beside
    an undeclared rewriter."""
    paper = pd.DataFrame({"condition": t6["condition"]})
    for col in TABLE6_COLUMNS:
        paper = with_paper(paper, "ftc-table-6", lambda r, c=col: f"{c} {r['condition']}", f"paper {col}")
    if not is_table4_rewriter(rewriter):
        paper["paper FTC-K"] = np.nan
    return t6[["x", "u", "y", "condition", "MET", "LAS", "LRA", "FTC-K"]].merge(paper, on="condition")


def table6_score_frame(t6: pd.DataFrame, model: str, simulator: str, rewriter, note: str) -> pd.DataFrame:
    """Scorecard rows of Table 6: MET (METEOR), LAS and LRA (task model + simulator) and, for a rewriter declared
    GPT-Neo2.7B only, FTC-K (fsp-fsp); one row per condition with a value."""
    who = {"MET": "METEOR (nltk)", "LAS": f"{model} + {simulator}", "LRA": f"{model} + {simulator}"}
    if is_table4_rewriter(rewriter):
        who["FTC-K"] = f"{model} + {rewriter.name} (fsp-fsp)"
    return _frame([{"ref": "ftc-table-6", "quantity": f"{col} {row['condition']}", "ours": row[col], "model": m,
                    "note": note}
                   for row in t6.to_dict("records") for col, m in who.items() if row.get(col) == row.get(col)])


def table12_beside_paper(t12: pd.DataFrame, rewriter) -> pd.DataFrame:
    """Table 12 in long form (condition, quantity `<metric> <pipeline>`, ours) beside the paper's value; the
    paper's FSP columns are GPT-Neo2.7B's: only regex-regex is beside ours for an undeclared rewriter."""
    long = t12.melt(id_vars=["x", "u", "y", "condition"], var_name="quantity", value_name="ours")
    long = with_paper(long, "ftc-table-12", lambda r: f"{r['quantity']} {r['condition']}")
    if not is_table4_rewriter(rewriter):
        long.loc[~long["quantity"].str.endswith("regex-regex"), "paper"] = np.nan
    return long


def table12_score_frame(long: pd.DataFrame, model: str, rewriter, note: str) -> pd.DataFrame:
    """Scorecard rows of Table 12: the paper's gpt-gpt, gpt-regex, … columns are our fsp-fsp, fsp-regex, …
    pipelines; FSP pipelines only for a rewriter declared GPT-Neo2.7B.

    >>> from nli_lib.ftc.fewshot import FewShotRewriter
    >>> long = pd.DataFrame({"quantity": ["FTC-K regex-regex", "FTC-K fsp-fsp"], "condition": "x only",
    ...                      "ours": [0.1, 0.2]})
    >>> table12_score_frame(long, "m", FewShotRewriter.offline(), "n")[["quantity", "model"]].values.tolist()
    [['FTC-K regex-regex x only', 'm + regex']]
    """
    rows = []
    for r in long.dropna(subset=["ours"]).itertuples(index=False):
        metric, pipe = r.quantity.split(" ")
        if pipe != "regex-regex" and not is_table4_rewriter(rewriter):
            continue
        who = f"{model} + " + ("regex" if pipe == "regex-regex" else rewriter.name)
        rows.append({"ref": "ftc-table-12", "quantity": f"{metric} {pipe} {r.condition}", "ours": r.ours,
                     "model": who, "note": note})
    return _frame(rows)


def sensitivity_records(scored: pd.DataFrame) -> pd.DataFrame:
    """Every (pair, condition, pipeline, slot): the borrowed explanation, its donor, the counterfactual and FTC."""
    keep = ["pair_id", "condition", "pipeline", "label", "slot", "y_cf", "ok", "pred", "pred_cf", "ftc_delta",
            "ftc_k", "ftc_w", "premise", "hypothesis", "explanation", "donor_pair_id", "donor_label",
            "donor_hypothesis", "A", "B", "x_cf", "reason"]
    return scored[[c for c in keep if c in scored]]


def las_lra_records(simulated: pd.DataFrame, conditions: pd.DataFrame, similarity: pd.DataFrame) -> pd.DataFrame:
    """Per (pair, condition): simulator labels, LAS_i, LRA_i, and METEOR (and cosine) of the explanation."""
    keys = ["pair_id", "condition"]
    out = simulated.merge(conditions[keys + ["hypothesis", "explanation"]], on=keys)
    sim_cols = ["MET"] + (["COS"] if "COS" in similarity else [])
    return out.merge(similarity[keys + sim_cols], on=keys, how="left")
