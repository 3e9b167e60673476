"""The tables of notebooks 10-13 assembled from the pipeline's results (the notebooks show the call and the result).

Each function turns results into the frame a notebook saves or prints; none computes a model output itself.
Paper rows come from `pipeline.paper_reference`, counts beside the paper's from `paper_values.beside_paper`.

>>> frame = pd.DataFrame({"model": ["none (data)", "none (our SNLI test sample)", "rules"]})
>>> basis_column(frame, "stand-in").tolist()
['data', 'sample', 'stand-in']
"""
from __future__ import annotations

import pandas as pd

from ..context import RunContext
from ..paper_values import beside_paper
from .pipeline import paper_reference

DATA_MODEL = "none (data)"  # the model column of counts that depend on the data only
SAMPLE_MODEL = "none (our SNLI test sample)"  # counts of the SNLI test sample we drew (the paper's is unreleased)

# Our column -> the paper's metric text ('<paper model> <metric>' quantities of resources/paper_values/atoms.csv)
TABLE2_METRICS = {"full_accuracy": "full example accuracy", "consistency": "overall logical consistency",
                  "consistency_correct": "consistency on correct", "consistency_incorrect": "consistency on incorrect",
                  "consistency_pred_entailment": "consistency pred entailment",
                  "consistency_pred_neutral": "consistency pred neutral",
                  "consistency_pred_contradiction": "consistency pred contradiction",
                  "induced_accuracy": "induced atom label accuracy"}
TABLE6_METRICS = {"completeness_dependent_pct": "completeness-dependent %"}
TABLE3_METRICS = {"full_accuracy": "full example accuracy", "atom_accuracy": "atom accuracy",
                  "critical_accuracy": "critical atom accuracy",
                  "p_full_given_critical_correct": "P(full correct | critical correct)",
                  "p_full_given_critical_wrong": "P(full correct | critical wrong)"}
TABLE4_METRICS = {"inferential_consistency": "inferential consistency"}


def basis_column(frame: pd.DataFrame, model_basis: str) -> pd.Series:
    """Per row: 'data' for counts of the paper's data alone (model 'none (data)'), 'sample' for counts of the
    sample we drew ('none (our SNLI test sample)': never graded, `nli_lib.basis`), else `model_basis`."""
    return frame["model"].map({DATA_MODEL: "data", SAMPLE_MODEL: "sample"}).fillna(model_basis)


def beside_paper_rows(ours: pd.DataFrame, ref: str, metrics: dict, **columns) -> pd.DataFrame:
    """Our rows, then the paper's printed rows of `ref` (tier 'paper (printed)'), `columns` set on the latter."""
    return pd.concat([ours, paper_reference(ref, metrics).assign(**columns)], ignore_index=True)


# --------------------------------------------------------------------------------------------------------------
# Notebook 10: generation, coverage, Table 5 counts, well-formedness, pruning
# --------------------------------------------------------------------------------------------------------------

def rule_atoms_on_paper_sentences(style: str = "incremental") -> pd.DataFrame:
    """The rule decomposer's atoms of every sentence the paper decomposes, one line per sentence."""
    from .decompose import default_decomposer
    from .generate import PAPER_DECOMPOSITIONS

    rules = default_decomposer(style)
    side = pd.DataFrame([{"sentence": item["sentence"], "source": item["source"], "rule_atom": a.text, "kind": a.kind}
                         for item in PAPER_DECOMPOSITIONS for a in rules.decompose_records(item["sentence"])])
    return side.groupby(["source", "sentence"], sort=False)["rule_atom"].apply(" | ".join).to_frame()


COVERAGE_COLUMNS = ["generator", "paper_atoms", "covered", "coverage", "missed_by_paper", "missed_recovered",
                    "generated_atoms", "nli_model", "tier"]


def paper_atom_coverage(generators, model, tier: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per sentence and generator, per paper atom) coverage of the paper's atoms; LLM generators leave one out."""
    from .generate import PAPER_DECOMPOSITIONS, coverage, generate_atoms

    sentences = [d["sentence"] for d in PAPER_DECOMPOSITIONS]
    summaries, details = [], []
    for gen in generators:
        atoms = generate_atoms(sentences, gen, leave_one_out=True)
        summary, detail = coverage(PAPER_DECOMPOSITIONS, atoms, model)
        summaries.append(summary.assign(generator=gen.name, generator_tier=gen.tier, nli_model=model.name, tier=tier))
        details.append(detail.assign(generator=gen.name))
    detail = pd.concat(details, ignore_index=True).assign(nli_model=model.name, tier=tier)
    return pd.concat(summaries, ignore_index=True), detail


SNLI_DATA_ROWS = ("SNLI test sample examples", "SNLI sample % entailment", "SNLI sample % contradiction",
                  "SNLI sample % neutral", "SNLI unique hypotheses")


def snli_table5(snli: pd.DataFrame, atoms: pd.DataFrame, generator: str, tier: str) -> pd.DataFrame:
    """Table 5, SNLI column: counts of our sample (model 'none (our SNLI test sample)') and atom counts of
    `generator`, beside the paper's. The paper's 1,000 SNLI test examples are unreleased: the size, label shares
    and hypotheses of the sample we draw in their place describe our run, not the paper's data (basis 'sample').

    Table 5 prints 3,263 both as unique generated atoms and as unique atomic sub-problems; both are compared
    with our (example, atom) pairs. Only usable (well-formed) atoms count."""
    from .generate import usable

    ok = usable(atoms)
    per_h = ok.groupby("sentence").size()
    pairs = snli[["pair_id", "premise", "hypothesis"]].merge(ok.rename(columns={"sentence": "hypothesis"}))
    example_atoms = len(pairs[["pair_id", "atom"]].drop_duplicates())
    shares = snli["label"].value_counts(normalize=True) * 100
    stats = {
        "SNLI test sample examples": len(snli),
        "SNLI sample % entailment": round(shares.get("entailment", 0), 1),
        "SNLI sample % contradiction": round(shares.get("contradiction", 0), 1),
        "SNLI sample % neutral": round(shares.get("neutral", 0), 1),
        "SNLI unique hypotheses": snli["hypothesis"].nunique(),
        "SNLI unique generated atoms": example_atoms,
        "SNLI unique atomic sub-problems": example_atoms,
        "SNLI distinct atom strings": ok["atom"].nunique(),
        "SNLI distinct (premise, atom) pairs": len(pairs[["premise", "atom"]].drop_duplicates()),
        "SNLI atoms per hypothesis (mean)": round(per_h.mean(), 2),
        "SNLI hypotheses without an ok atom": int(snli["hypothesis"].nunique() - per_h.size),
    }
    data = {k: v for k, v in stats.items() if k in SNLI_DATA_ROWS}
    generated = {k: v for k, v in stats.items() if k not in SNLI_DATA_ROWS}
    return pd.concat([beside_paper(data, "atoms-table-5", tier="data", model=SAMPLE_MODEL),
                      beside_paper(generated, "atoms-table-5", tier=tier, model=generator)], ignore_index=True)


def snli_atom_records(atoms: pd.DataFrame, generator) -> pd.DataFrame:
    """The generated SNLI atoms (hypothesis, atom, status, reason ...); the rules also say each atom's kind."""
    rows = atoms.dropna(subset=["atom"])[["sentence", "atom_index", "atom", "status", "reason", "generator", "tier"]]
    rows = rows.rename(columns={"sentence": "hypothesis"})
    if generator.tier == "offline":  # the rule decomposer says what kind of conjunct each atom is
        from .decompose import default_decomposer

        rules = default_decomposer("incremental")
        kind = {(h, a.text): a.kind for h in rows["hypothesis"].unique() for a in rules.decompose_records(h)}
        rows["kind"] = [kind.get((h, a), "") for h, a in zip(rows["hypothesis"], rows["atom"])]
    return rows


def atoms_by_sentence(atoms: pd.DataFrame) -> pd.DataFrame:
    """Usable atoms joined per sentence, for a quick look."""
    from .generate import usable

    return usable(atoms).groupby("sentence")["atom"].apply(" | ".join).to_frame()


def dsnli_atoms(dnli: pd.DataFrame, generator, model) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(generated atoms of the δ-SNLI hypotheses, their §3.2 validation against premise and hypothesis)."""
    from .generate import generate_atoms, usable, validate_atoms

    ph = dnli[["premise", "hypothesis"]].drop_duplicates()
    generated = generate_atoms(ph["hypothesis"].tolist(), generator)
    rows = ph.merge(usable(generated).rename(columns={"sentence": "hypothesis"}), on="hypothesis")
    return generated, validate_atoms(rows, model, check_premise=True)


DSNLI_ATOM_ROWS = ("delta-SNLI unique generated atoms", "delta-SNLI unique valid atoms",
                   "delta-SNLI unique atomic sub-problems", "delta-SNLI P-H pairs with a valid atom")
# δ-SNLI counts computed with Table 5's that the paper prints in §6's text, not in the table
SEC_6 = {q: "atoms-sec-6" for q in ("delta-SNLI P-H pairs with a valid atom", "delta-SNLI examples with a valid atom",
                                    "delta-SNLI unique critical atoms before grouping")}


def dsnli_table5(dnli: pd.DataFrame, validated: pd.DataFrame, model: str, tier: str) -> pd.DataFrame:
    """Table 5, δ-SNLI column (label-independent rows) beside the paper's; 'valid' = automatic pruning only."""
    valid = validated[validated["valid"]]
    sub = dnli.merge(valid[["premise", "hypothesis", "atom"]])
    stats = {
        "delta-SNLI test examples": len(dnli),
        "delta-SNLI % strengtheners (label)": round(100 * (dnli["update_type"] == "strengthener").mean(), 1),
        "delta-SNLI % weakeners (label)": round(100 * (dnli["update_type"] == "weakener").mean(), 1),
        "delta-SNLI unique hypotheses": dnli["hypothesis"].nunique(),
        "delta-SNLI unique generated atoms": validated["atom"].nunique(),
        "delta-SNLI unique valid atoms": valid["atom"].nunique(),
        "delta-SNLI unique atomic sub-problems": len(sub[["pair_id", "atom"]].drop_duplicates()),
        "delta-SNLI P-H pairs with a valid atom": len(valid[["premise", "hypothesis"]].drop_duplicates()),
    }
    return beside_paper(stats, "atoms-table-5", tier=tier, model=model, filed=SEC_6)


def dsnli_atom_scores(table5: pd.DataFrame, generator_basis: str) -> tuple[pd.DataFrame, pd.Series]:
    """The δ-SNLI atom rows of Table 5 to score, and their bases: the generated-atom count depends on the
    generator only; the other rows on automatic pruning (the paper also validated by hand), stand-ins. The
    data-only rows are scored by notebook 00."""
    rows = table5[table5["quantity"].isin(DSNLI_ATOM_ROWS)]
    basis = rows["quantity"].map({"delta-SNLI unique generated atoms": generator_basis}).fillna("stand-in")
    return rows, basis


def atom_status(snli_atoms: pd.DataFrame, dsnli_atoms: pd.DataFrame, generator: str,
                tier: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(atoms per data set and well-formedness status, the atoms whose status is not ok)."""
    checked = pd.concat([snli_atoms.assign(data="SNLI-TEST-SAMPLE"), dsnli_atoms.assign(data="delta-SNLI-TEST")],
                        ignore_index=True)
    status = checked.groupby(["data", "status"]).size().unstack(fill_value=0).reset_index()
    status = status.assign(generator=generator, checker=checked["checker"].iloc[0], tier=tier)
    return status, checked[checked["status"] != "ok"][["data", "sentence", "atom", "status", "reason"]]


def gold_precision(generator, tier: str) -> tuple[pd.DataFrame, str]:
    """The rules' precision against the team's gold set (per source) and the one-line note with its warning."""
    from .generate import generate_atoms
    from .gold import gold_note, precision_table, read_gold

    gold = read_gold()
    current = generate_atoms(gold["sentence"].unique().tolist(), generator)
    table = precision_table(gold, current, generator.name).assign(tier=tier)
    return table, gold_note(table.iloc[0].to_dict(), gold["decomposer"].iloc[0], generator.name)


def pruning_records(validated: pd.DataFrame, generator: str, validator: str, tier: str) -> pd.DataFrame:
    """One row per (hypothesis, atom): its §3.2 outcome (pruned: H does not entail / P entails, or valid)."""
    outcome = validated["h_entails"].map({False: "pruned: H does not entail"}).fillna(
        validated["p_entails"].map({True: "pruned: P entails", False: "valid"}))
    cols = ["premise", "hypothesis", "atom", "p_h_entails", "p_p_entails", "outcome"]
    pruned = validated.assign(outcome=outcome)[cols].drop_duplicates(["hypothesis", "atom"])
    return pruned.assign(generator=generator, validator=validator, tier=tier)


# --------------------------------------------------------------------------------------------------------------
# Notebook 11: Tables 2 and 6
# --------------------------------------------------------------------------------------------------------------

def consistency_rows(run) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per model and example, per model and atom) rows behind Tables 2 and 6."""
    from .consistency import consistency_records

    per_example = consistency_records(run.per_example, run.per_atom).assign(atoms_by=run.generator)
    per_atom = pd.concat(run.per_atom.values(), ignore_index=True)[
        ["model", "pair_id", "premise", "hypothesis", "label", "atom", "h_pred", "valid", "p_pred"]]
    return per_example, per_atom


def inconsistent_examples(run, model: str | None = None, k: int = 8) -> str:
    """The first `k` inconsistent examples of `model` (default: the first) with its atom judgements, as text."""
    model = model or next(iter(run.per_example))
    per, atoms = run.per_example[model], run.per_atom[model]
    lines = []
    for r in per[~per["consistent"]].head(k).itertuples():
        lines.append(f"\n[{r.label} → pred {r.pred}, induced {r.induced}] P: {r.premise}\n   H: {r.hypothesis}")
        for a in atoms[atoms["pair_id"] == r.pair_id].itertuples():
            lines.append(f"     {'✓' if a.valid else '✗'} {a.atom:<55} H⊨a: {a.h_pred:<13} "
                         f"P→a: {a.p_pred if a.valid else '-'}")
    return "\n".join(lines)


def paper_items_summary(models) -> pd.DataFrame:
    """Each model's accuracy on the paper's printed SNLI items (Table 1 rows 3-4, §2.1), full pairs and atoms."""
    from .pipeline import paper_atom_check

    check = pd.concat([paper_atom_check(m) for m in models], ignore_index=True)
    return check.groupby(["model", "tier", "kind"])["correct"].agg(["size", "mean"]).rename(
        columns={"size": "items", "mean": "accuracy"}).reset_index()


# --------------------------------------------------------------------------------------------------------------
# Notebook 12: silver-label checks, Table 3, Table 5 label rows
# --------------------------------------------------------------------------------------------------------------

def atom_quality_note(generator: str) -> str:
    """The rules' precision against the gold set in one line ('' when the atoms come from another generator)."""
    from .generate import generate_atoms, rule_generator
    from .gold import gold_note, precision, read_gold

    rules = rule_generator()
    if generator != rules.name:
        return ""
    gold = read_gold()
    current = generate_atoms(gold["sentence"].unique().tolist(), rules)
    return gold_note(precision(gold, current), gold["decomposer"].iloc[0], generator)


def diagnostics_table(run, tier: str) -> pd.DataFrame:
    """The silver labels' checks (`DefeasibleRun.label_check`) as one row, with the verdict."""
    verdict = run.label_check()
    return pd.DataFrame([{**verdict["diagnostics"], "passes_checks": verdict["passes"],
                          "failed_checks": "; ".join(verdict["failed"]), "label_source": run.data.label_source,
                          "tier": tier}])


def dnli_encoder(run):
    """The run's first fine-tuned δ-NLI encoder (the offline MiniLM)."""
    return next(p.model for p in run.predictors.values() if p.kind == "encoder" and hasattr(p.model, "model_dir"))


def compare_formulations(run, nli, tier: str) -> pd.DataFrame:
    """Four silver-label formulations checked on the same real and placebo sub-problems (`silver.compare`)."""
    from . import silver
    from .defeasible import SUB_COLUMNS, silver_labels_nli

    dnli = dnli_encoder(run)
    real = run.data.labeled[SUB_COLUMNS].drop_duplicates(["pair_id", "atom"]).reset_index(drop=True)
    placebo = run.label_check()["placebo"]
    placebo = placebo[SUB_COLUMNS] if placebo is not None else real.head(0)
    formulations = {
        "NLI belief shift (P+U vs P)": lambda s: silver_labels_nli(s, nli),
        "δ-NLI model on (P, atom, U)": lambda s: silver.dnli_atom_scores(s, dnli),
        "NLI(U → atom)": lambda s: silver.update_nli_scores(s, nli),
        "δ-NLI direction × relevance of U": lambda s: silver.relevance_weighted(s, dnli, nli),
    }
    return silver.compare(real, placebo, formulations).assign(tier=tier)


def silver_vs_paper_labels(gold_path, nli, llm, tier: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(the paper's printed atom labels, agreement rows with the update, the one-row agreement table) of this
    profile's silver labels on exactly those atoms."""
    from ..data.loaders import load_dnli
    from .defeasible import label_agreement, read_gold_labels, silver_for_gold

    paper_gold = read_gold_labels(gold_path, dnli=load_dnli("snli", "test", drop_impossible=True))
    silver = silver_for_gold(paper_gold, nli=nli, llm=llm)
    rows, agree = label_agreement(paper_gold, silver)
    table = pd.DataFrame([{**agree, "silver_source": silver["label_source"].iloc[0], "tier": tier,
                           "paper_annotator_tau": 0.79}])
    return paper_gold, rows.merge(silver[["pair_id", "atom", "update"]], on=["pair_id", "atom"]), table


LABEL_SCORE_ROWS = ("delta-SNLI % strengtheners (atoms)", "delta-SNLI % weakeners (atoms)",
                    "delta-SNLI % no effect (atoms)", "delta-SNLI examples with a valid atom", "non-neutral atoms %",
                    "updates targeting all valid atoms %", "examples without an atom in the label's direction",
                    "examples without an atom in the label's direction %")


def table5_label_rows(data, summary: pd.DataFrame, tier: str) -> pd.DataFrame:
    """δ-SNLI statistics that depend on the atom labels (Table 5 with the text of §5.1, §6 and App. A.1, and
    Fig. 7's caption), beside the paper's; `summary` is `example_summary(data.labeled)`."""
    from .defeasible import dsnli_statistics

    stats = dsnli_statistics(data.examples, data.validated, data.labeled)
    with_atoms = summary[summary["n_valid"] > 0]
    model = f"{data.generator} + {data.validator}"
    no_direction = with_atoms["n_critical"] == 0
    extra = {
        "atoms-sec-5.1": {"non-neutral atoms %": round(100 - stats["delta-SNLI % no effect (atoms)"], 1)},
        "atoms-fig-7": {"updates targeting all valid atoms %":
                        round(100 * float((with_atoms["critical_share"] == 1).mean()), 1)},
        "atoms-sec-A.1": {"examples without an atom in the label's direction": int(no_direction.sum()),
                          "examples without an atom in the label's direction %":
                              round(100 * float(no_direction.mean()), 1)},
    }
    frames = [beside_paper(stats, "atoms-table-5", tier=tier, model=model, filed=SEC_6)]
    frames += [beside_paper(values, ref, tier=tier, model=model).assign(ref=ref) for ref, values in extra.items()]
    t5 = pd.concat(frames, ignore_index=True).assign(label_source=data.label_source)
    t5["ref"] = t5["ref"].fillna("atoms-table-5")
    return t5


def label_score_rows(t5: pd.DataFrame):
    """(ref, rows) of the label-dependent rows of `table5_label_rows` that go to the scorecard."""
    return t5[t5["quantity"].isin(LABEL_SCORE_ROWS)].groupby("ref")


def gold_file_run(ctx: RunContext, run, gold_path, gold: pd.DataFrame):
    """`run`'s models again, on the δ-SNLI-TEST examples that the gold file `gold_path` labels (`gold` is its
    `read_gold_labels` frame), with those labels: the gold path end to end."""
    from ..data.loaders import load_dnli
    from .pipeline import defeasible_run

    dnli = load_dnli("snli", "test", drop_impossible=True)
    examples = dnli[dnli["pair_id"].isin(set(gold["pair_id"]))]
    return defeasible_run(ctx, gold_path=str(gold_path), predictors=run.predictors, examples=examples)


def full_vs_critical(run, model: str | None = None) -> pd.DataFrame:
    """Sub-problems of `model` (default: the first) where the full prediction and the critical atom disagree."""
    full, atoms = run.results[model or next(iter(run.results))]
    crit = atoms[atoms["critical"] & atoms["scored"]].merge(
        full[["pair_id", "correct"]].rename(columns={"correct": "full_correct"}))
    return crit[crit["full_correct"] != crit["correct"]][
        ["hypothesis", "update", "update_type", "atom", "label", "pred", "full_correct"]]


# --------------------------------------------------------------------------------------------------------------
# Notebook 13: grouping, Table 4, top critical atoms, QUDs
# --------------------------------------------------------------------------------------------------------------

def critical_atoms(data) -> pd.DataFrame:
    """(pair_id, atom) of every critical atom of the labelled sub-problems."""
    return data.labeled.loc[data.labeled["critical"], ["pair_id", "atom"]].drop_duplicates()


def grouping_summary(graph, edges: pd.DataFrame, cliques, embedder: str, nli: str, tier: str,
                     label_source: str) -> pd.DataFrame:
    """One row: unique critical atoms, candidate pairs, edges and maximal cliques of the equivalence graph."""
    return pd.DataFrame([{
        "unique critical atoms": graph.number_of_nodes(), "candidate pairs (cosine ≥ 0.75)": len(edges),
        "edges (and mutual entailment)": graph.number_of_edges(),
        "maximal cliques (unique critical atoms)": len(cliques),
        "embedder": embedder, "nli_model": nli, "tier": tier, "label_source": label_source}])


PAPER_TOP_ATOMS = {  # the paper's two largest buckets (§6) -> their quantity in resources/paper_values/atoms.csv
    "The others are friends of the person.": "top critical atom 'The others are friends of the person' examples",
    "The person is a man.": "top critical atom 'The person is a man' examples",
}


def paper_top_atoms(critical: pd.DataFrame, encoder, nli, model: str, label_source: str,
                    tier: str) -> pd.DataFrame:
    """For the paper's two top critical atoms: how many of our examples have it (or an equivalent atom, by the
    graph's rule) as a critical atom; rows carry ref, quantity, ours and model for the scorecard."""
    from ..paper_values import paper_value
    from .inferential import equivalent_examples

    rows = []
    for atom, quantity in PAPER_TOP_ATOMS.items():
        hits = equivalent_examples(atom, critical, encoder, nli)
        rows.append({"paper atom": atom, "examples": hits["pair_id"].nunique(),
                     "paper": paper_value("atoms-sec-6", quantity),
                     "our atoms": " | ".join(sorted(hits["atom"].unique())), "label_source": label_source,
                     "tier": tier, "ref": "atoms-sec-6", "quantity": quantity,
                     "ours": hits["pair_id"].nunique(), "model": model})
    return pd.DataFrame(rows)


def qud_summary(quds: pd.DataFrame, label_source: str) -> pd.DataFrame:
    """One row: critical atoms, those with a QUD, unique QUDs and their share, the generator."""
    answered = quds["qud"].notna()
    unique = quds.loc[answered, "qud"].nunique()
    return pd.DataFrame([{"critical atoms": len(quds), "with a QUD": int(answered.sum()), "unique QUDs": unique,
                          "unique QUDs / critical atoms %": 100 * unique / max(len(quds), 1),
                          "generator": quds.attrs["generator"], "tier": quds.attrs["tier"],
                          "label_source": label_source}])


def qud_table(check: pd.DataFrame, quds: pd.DataFrame) -> pd.DataFrame:
    """The paper's printed atom -> QUD pairs beside the generator's (`quds.qud_exemplar_check`), then the QUDs
    of our critical atoms (`quds.generate_quds`), told apart by `kind`."""
    return pd.concat([check.assign(kind="paper exemplar"), quds.assign(kind="critical atom")], ignore_index=True)
