"""FTC (faithfulness through counterfactuals): label derivation, regex families, transforms, FTC-δ/K/W,
Wilcoxon ρ, METEOR, the FSP path (offline stand-ins and a local OpenAI-compatible server), sensitivity
donors and the noise check. Tiny hand-made inputs only; no data mirror needed except where marked."""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from nli_lib.cache import CallCache
from nli_lib.config import LABELS
from nli_lib.ftc import (
    TEMPLATES,
    FewShotRewriter,
    cost_matrix,
    counterfactual_rows,
    counterfactual_targets,
    derived_label,
    exemplar_rows,
    explanation_reference,
    extract_regex,
    ftc_delta,
    ftc_kl,
    ftc_scores,
    ftc_wasserstein,
    hit_rates,
    meteor,
    metric_validation,
    pathological_explanations,
    regex_transform,
    relation,
    rho_table,
    score_rows,
    shot_sets,
    wasserstein,
    wilcoxon_rho,
)
from nli_lib.ftc.fewshot import align_transform, query_explanation, query_transform, rule_extract
from nli_lib.ftc.metrics import EPS, OEWNForMeteor
from nli_lib.ftc.text import find_span, substitute
from nli_lib.llm import PROMPTS, LLMClient, LLMConfig
from nli_lib.text import untokenize_ptb

from kit import RuleClassifier, tiny_bert
from stand_ins import chat_completion, local_server, no_proxy

# ------------------------------------------------------------------------------------------------
# §2.2 label derivation (Table 2)
# ------------------------------------------------------------------------------------------------

def test_label_derivation_table_2():
    assert [(t.slot, t.y_cf) for t in counterfactual_targets("entailment")] == [("E", "entailment")]
    assert [(t.slot, t.y_cf) for t in counterfactual_targets("C")] == [("C", "entailment")]
    assert [(t.slot, t.y_cf) for t in counterfactual_targets("neutral")] == [("N[A]", "entailment"), ("N[B]", "neutral")]
    assert derived_label("neutral", "N[B]") == "neutral" and derived_label("contradiction") == "entailment"
    with pytest.raises(ValueError):
        derived_label("neutral")  # two counterfactuals: slot needed
    with pytest.raises(ValueError):
        derived_label("entailment", "N[A]")
    assert relation("neutral", "walking", "going home") == "¬(walking ⇒ going home)"
    assert relation("entailment", "a", "b") == "(a ⇔ b)"


# ------------------------------------------------------------------------------------------------
# §2.3 FTC-δ, FTC-K, FTC-W on hand-computed vectors
# ------------------------------------------------------------------------------------------------

def test_ftc_delta_kl_wasserstein_by_hand():
    p = [0.6, 0.3, 0.1]  # E, N, C
    assert ftc_delta(p, "entailment") == 1.0 and ftc_delta(p, "neutral") == 0.0
    assert ftc_kl(p, "entailment") == pytest.approx(1 + math.log(0.6))          # 0.48917
    assert ftc_kl(p, "neutral") == pytest.approx(1 + math.log(0.3))             # -0.20397
    assert ftc_wasserstein(p, "entailment") == pytest.approx(1 - (0.3 * 0.7 + 0.1 * 1.0))  # 0.69
    assert ftc_wasserstein(p, "neutral") == pytest.approx(1 - 0.7 * (0.6 + 0.1))           # 0.51
    assert ftc_wasserstein(p, "entailment", alpha=0.5) == pytest.approx(1 - (0.15 + 0.1))  # 0.75
    # one-hot on the target: perfect scores; on the opposite label: FTC-W = 0
    assert ftc_kl([1, 0, 0], "entailment") == 1.0 and ftc_wasserstein([0, 0, 1], "entailment") == 0.0
    assert ftc_kl([0, 0, 1], "entailment") == pytest.approx(1 + math.log(EPS))  # clipped, finite


def test_ftc_vectorised_matches_scalar():
    probs = np.array([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6], [0.1, 0.8, 0.1]])
    ys = ["entailment", "entailment", "neutral"]
    s = ftc_scores(probs, ys, alpha=0.7)
    assert s["ftc_delta"].tolist() == [1.0, 0.0, 1.0]
    assert s["ftc_k"] == pytest.approx([ftc_kl(p, y) for p, y in zip(probs, ys)])
    assert s["ftc_w"] == pytest.approx([0.69, 1 - (0.2 * 0.7 + 0.6), 1 - 0.7 * 0.2])


def test_ftc_k_direction_is_the_finite_kl():
    from nli_lib.ftc import kl_divergence

    p = [0.6, 0.3, 0.1]
    # KL(onehot(E) ‖ p) = −ln .6 = 0.5108 (finite): FTC-K = 1 − 0.5108; the other order is infinite
    assert kl_divergence([1, 0, 0], p) == pytest.approx(-math.log(0.6))
    assert kl_divergence(p, [1, 0, 0]) == math.inf
    assert ftc_kl(p, "entailment") == pytest.approx(1 - kl_divergence([1, 0, 0], p))
    # general case by hand: KL((.5,.5,0) ‖ (.25,.25,.5)) = ln 2
    assert kl_divergence([0.5, 0.5, 0], [0.25, 0.25, 0.5]) == pytest.approx(math.log(2))


def test_wasserstein_cost_and_transport():
    c = cost_matrix(0.7)
    assert c.tolist() == [[0, 0.7, 1], [0.7, 0, 0.7], [1, 0.7, 0]]
    with pytest.raises(ValueError):
        cost_matrix(1.5)
    # one-hot targets: the transport problem equals the closed form used by FTC-W
    for p in ([0.6, 0.3, 0.1], [0.2, 0.5, 0.3]):
        for j, y in enumerate(LABELS):
            assert 1 - wasserstein(p, np.eye(3)[j], c) == pytest.approx(ftc_wasserstein(p, y))
    # general case by hand: E .5 N .5 -> N .5 C .5 costs .5 (E->C) with alpha .7, .4 (E->N, N->C) with alpha .2
    assert wasserstein([0.5, 0.5, 0], [0, 0.5, 0.5], cost_matrix(0.7)) == pytest.approx(0.5)
    assert wasserstein([0.5, 0.5, 0], [0, 0.5, 0.5], cost_matrix(0.2)) == pytest.approx(0.2)


# ------------------------------------------------------------------------------------------------
# §3.3 Wilcoxon rank-sum ρ = U / (n1 n0)
# ------------------------------------------------------------------------------------------------

def test_rho_against_hand_computed_u():
    # pairs (a, b): 3>1, 3>2, 3=3 (½), 4>all (3), 5>all (3): U = 8.5 of 9
    res = wilcoxon_rho([3, 4, 5], [1, 2, 3])
    assert res["U"] == 8.5 and res["rho"] == pytest.approx(8.5 / 9) and (res["n1"], res["n0"]) == (3, 3)
    assert wilcoxon_rho([1, 2], [3, 4])["rho"] == 0.0
    assert wilcoxon_rho([1, 2, 3], [1, 2, 3])["rho"] == pytest.approx(0.5)
    empty = wilcoxon_rho([1.0, float("nan")], [])
    assert math.isnan(empty["rho"]) and empty["n1"] == 1


def test_wilcoxon_rho_is_the_roc_auc_of_the_two_groups():
    """ρ = U / (n1·n0) is the AUC of telling group1 from group0 by the value (the atoms part's placebo AUC)."""
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    for _ in range(10):
        a, b = rng.integers(0, 5, size=int(rng.integers(1, 30))), rng.integers(0, 5, size=int(rng.integers(1, 30)))
        auc = roc_auc_score([1] * len(a) + [0] * len(b), np.r_[a, b])
        assert wilcoxon_rho(a, b)["rho"] == pytest.approx(auc)


def test_metric_validation_groups_and_table():
    scored = pd.DataFrame({"pair_id": list("abcdef"), "slot": ["C"] * 6, "pipeline": ["fsp-fsp"] * 6, "ok": True,
                           "ftc_delta": [1, 1, 1, 0, 0, 1.0], "ftc_k": [0.9, 0.8, 0.7, 0.1, 0.2, 0.3],
                           "ftc_w": [0.9, 0.8, 0.7, 0.1, 0.2, 0.3]})
    ref = pd.DataFrame({"pair_id": list("abcdef"), "slot": ["C"] * 6, "ref_label": ["entailment"] * 6,
                        "ref_pred": ["entailment"] * 3 + ["neutral"] * 3})
    long, merged = metric_validation(scored, ref)
    k = long[long["metric"] == "FTC-K"].iloc[0]
    assert k["rho"] == 1.0 and (k["n1"], k["n0"]) == (3, 3)
    d = long[long["metric"] == "FTC-δ"].iloc[0]  # agree (1,1,1) vs disagree (0,0,1): U = 3+3+1.5 = 7.5
    assert d["U"] == 7.5 and d["rho"] == pytest.approx(7.5 / 9)
    assert merged["agree"].sum() == 3
    assert rho_table(long).set_index("metric").loc["FTC-K", "C"] == "1.000"


def test_metric_validation_without_a_reference_is_an_empty_table_not_a_crash():
    """A rewriter that made no counterfactual from the other explanation (seen with a 135M model behind
    llama-server: notebook 31 stopped with KeyError 'pipeline') gives no reference: the long table has its
    columns and no rows, and the Table 5 layout is empty."""
    scored = pd.DataFrame({"pair_id": ["a"], "slot": ["C"], "pipeline": ["fsp-fsp"], "ok": [False],
                           "x_cf": [None], "y_cf": [None], "pred_cf": [None], "ftc_delta": [float("nan")],
                           "ftc_k": [float("nan")], "ftc_w": [float("nan")]})
    ref = explanation_reference(scored, "fsp-fsp")
    long, merged = metric_validation(scored, ref)
    assert ref.empty and long.empty and merged.empty and "pipeline" in long and "significant" in long
    assert rho_table(long, "fsp-fsp").empty


# ------------------------------------------------------------------------------------------------
# §2.4 regex families: the paper's example explanations (Table 13 rows) and every template
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("explanation,label,template,a,b", [
    ("a dog is not a cat.", "C", "P1", "dog", "cat"),
    ("One cannot be happy and angry at the same time.", "C", "P2", "happy", "angry"),
    ("Star is not balloon", "C", "P4", "star", "balloon"),  # P4 and P6 tie; printed order
    ("kneeling and eating are different actions .", "C", "P10", "kneeling", "eating"),
    ("the man is either painting or taking a photograph .", "C", "P5", "painting", "taking a photograph"),
    ("The guy on the phone is sitting at a desk.", "E", "P7", "guy on the phone", "sitting at a desk"),
    ("If your pausing for a photo then they are having their photo taken", "E", "P5", "your pausing for a photo",
     "they are having their photo taken"),
    ("protective gear is a piece of safety equipment", "E", "P1", "protective gear", "piece of safety equipment"),
    ("in the park implies outside .", "E", "P2", "in the park", "outside"),
    ("Just because he has a mop, does not mean he has a broom.", "N", "P4", "he has a mop", "he has a broom"),
    ("Just because a track athlete is carrying a large pole it does not mean they gets ready for their turn at the "
     "pole vault.", "N", "P4", "track athlete is carrying a large pole", "they gets ready for their turn at the pole vault"),
    ("Looking on does not mean waiting for their turn", "N", "P8", "looking on", "waiting for their turn"),
    ("not all women in red jackets are tall", "N", "P1", "women in red jackets", "tall"),
    ("a cloudy day does n't necessarily imply that it is going to rain soon .", "N", "P7", "cloudy day",
     "it is going to rain soon"),
])
def test_regex_families_on_paper_style_explanations(explanation, label, template, a, b):
    ex = extract_regex(explanation, label)
    assert (ex.template, ex.A, ex.B) == (template, a, b)


def test_every_table_13_row_through_the_regex_family_of_its_label():
    """All 15 printed extraction rows: which the templates get exactly right, and what they give otherwise."""
    from nli_lib.ftc.logic import LONG
    from nli_lib.ftc.prompts import FTC_EXTRACT_EXAMPLES
    from nli_lib.ftc.text import strip_determiners

    def same(x, y):
        return x is not None and strip_determiners(untokenize_ptb(x)) == strip_determiners(untokenize_ptb(y))

    exact = {}
    for short, rows in FTC_EXTRACT_EXAMPLES.items():
        for i, r in enumerate(rows):
            ex = extract_regex(r["explanation"], LONG[short])
            exact[(short, i)] = same(ex.A, r["A"]) and same(ex.B, r["B"])
    assert {k for k, v in exact.items() if v} == {("C", 2), ("C", 3), ("C", 4), ("E", 0), ("E", 1), ("E", 2)}
    # E row 1 is exact because spans lose a meta prefix ("a generalization of many people" -> "many people")
    assert extract_regex("People is a generalization of many people.", "E").B == "many people"
    # the other rows: template spans differ from the hand-labelled ones (or no template fits)
    assert extract_regex("No way to know that is alone because he lost his friends in a war.", "N").ok is False


def test_table_14_rows_through_the_regex_transform():
    from nli_lib.ftc.prompts import FTC_TRANSFORM_EXAMPLES

    got = [regex_transform(r["hyp_original"], r["A"], r["B"], "contradiction")[0].x_cf
           for r in FTC_TRANSFORM_EXAMPLES["CE"]]
    gold = [r["hyp_cf"] for r in FTC_TRANSFORM_EXAMPLES["CE"]]
    same = [untokenize_ptb(g) == untokenize_ptb(x) for g, x in zip(gold, got)]
    assert same == [True, False, True, True, True]  # row 2 keeps "have": "The two men have at a construction site."
    n = FTC_TRANSFORM_EXAMPLES["N"][1]  # A track athlete: x_cf[A] = B replaced by A, x_cf[B] = hypothesis kept
    rows = regex_transform(n["hyp_original"], n["A"], n["B"], "neutral")
    assert [r.x_cf for r in rows] == ["A track athlete carrying a large pole.", n["hyp_original"]]


def test_most_specific_template_wins():
    # P7 'are' (3 connective letters) beats P6 ', so' (2; the comma is not counted)
    ex = extract_regex("Jockeys are people, so jockeys riding horses are people riding horses.", "E")
    assert (ex.template, ex.A, ex.B) == ("P7", "jockeys", "people") and {"P6", "P7"} <= set(ex.matched)
    # P3 'A can't be B' and P13 'can't A if B' tie on letters; the shorter spans win
    ex = extract_regex("children can not be playing if they are watching tv .", "C")
    assert (ex.template, ex.A, ex.B) == ("P13", "playing", "they are watching tv") and "P3" in ex.matched
    # spans lose leading connectives and trailing conjunctions; a wh-word is no span
    assert extract_regex("just because a dog is tied up does not necessarily imply that it is their dog .",
                         "N").A == "dog is tied up"
    assert not extract_regex("a girl feeds a boy , who might not be her brother .", "N").ok


def test_no_template_for_paper_examples_outside_the_families():
    # Table 13 rows the printed templates do not cover (the paper's regex N scores are near zero)
    assert not extract_regex("There is no evidence that the women talking to the man outside the building are sad",
                             "neutral").ok
    assert not extract_regex("Jail cells aren't pastel-colored or a classroom.", "contradiction").ok


def test_every_printed_template_matches_its_own_filled_pattern():
    fills = {"A": "red cat", "B": "blue dog"}
    from nli_lib.ftc.templates import FAMILIES

    for label, templates in TEMPLATES.items():
        words = FAMILIES[label][1]
        for t in templates:
            text = " ".join(fills.get(el) or (words[el][0] if re.fullmatch(r"R\d+", el) else el)
                            for el in t.pattern.split())
            ex = extract_regex(text, label)
            assert t.id in ex.matched, (label, t.id, text, ex)


def test_normalize_reattaches_ptb_clitics():
    assert untokenize_ptb("`` a man '' ca n't be sleeping .") == "a man can't be sleeping"
    assert untokenize_ptb("he does n't mean they 're here .") == "he doesn't mean they're here"


# ------------------------------------------------------------------------------------------------
# Transform: stem-tolerant substitution, slots, failures
# ------------------------------------------------------------------------------------------------

def test_substitution_is_stem_tolerant_and_keeps_determiners():
    assert find_span("Two kids are walking home .", "walk home").kind == "stem"
    assert find_span("A dog runs", "the dog").kind == "exact"  # determiner optional
    assert substitute("The dog is barking at the girl .", "dog", "an animal") == "The animal is barking at the girl ."
    assert substitute("an angry man grills", "angry", "happy") == "a happy man grills"  # article agreement
    assert substitute("A man sleeps", "cat", "dog") is None
    # words the replacement repeats (by stem) from around the match are not doubled
    assert substitute("There are people playing the piano", "playing the piano", "people in the photo") == \
        "There are people in the photo"
    assert substitute("A young boy jumps into sand .", "jumps into sand", "young boy leaping into sand") == \
        "A young boy leaping into sand ."
    assert substitute("Group of men knitting gloves .", "men", "handling a net while knitting gloves") == \
        "Group of handling a net while knitting gloves ."
    assert substitute("a man sleeps", "man", "man") == "a man sleeps"  # at least one word stays


def test_regex_transform_slots_table_14_and_figure_2():
    assert regex_transform("There is a cat running", "cat", "dog", "contradiction")[0].x_cf == "There is a dog running"
    fig2 = regex_transform("The woman is standing on a snake", "standing on a snake", "sitting on a fake alligator",
                           "contradiction")[0]
    assert (fig2.slot, fig2.y_cf, fig2.x_cf) == ("C", "entailment", "The woman is sitting on a fake alligator")
    n = regex_transform("Two kids walk home from school .", "walking down a sidewalk", "walk home from school", "neutral")
    assert [(r.slot, r.y_cf) for r in n] == [("N[A]", "entailment"), ("N[B]", "neutral")]
    assert n[0].x_cf == "Two kids walking down a sidewalk ."
    miss = regex_transform("A man sleeps .", "cat", "dog", "entailment")[0]
    assert miss.x_cf is None and "neither span" in miss.reason


def test_counterfactual_rows_keep_failures_and_flag_unchanged():
    df = pd.DataFrame({
        "pair_id": ["p1", "p2", "p3", "p4"], "premise": ["u"] * 4,
        "hypothesis": ["There is a cat running .", "A man sleeps .", "The girl threw the basketball .", "A dog runs ."],
        "label": ["contradiction", "entailment", "neutral", "entailment"],
        "explanation_1": ["a dog is not a cat .", "nothing to see here", "two girls playing basketball does n't imply "
                          "that the girl threw the basketball", "a dog is a dog ."]})
    rows = counterfactual_rows(df, "regex", "regex")
    assert len(rows) == 5  # 1 + 1 + 2 (neutral) + 1
    r1 = rows[rows["pair_id"] == "p1"].iloc[0]
    assert r1["ok"] and r1["x_cf"] == "There is a dog running ." and r1["y_cf"] == "entailment"
    r2 = rows[rows["pair_id"] == "p2"].iloc[0]
    assert not r2["ok"] and r2["reason"].startswith("extract: no template")
    p3 = rows[rows["pair_id"] == "p3"].set_index("slot")
    assert p3.loc["N[B]", "ok"] and not p3.loc["N[B]", "changed"]  # N[B] may keep the hypothesis
    r4 = rows[rows["pair_id"] == "p4"].iloc[0]
    assert not r4["ok"] and r4["status"] == "malformed" and r4["reason"].startswith("malformed: unchanged")
    assert r1["status"] == "ok" and r2["status"] == "failed" and p3.loc["N[B]", "status"] == "ok"


def test_counterfactual_checks_are_kept_in_the_file_cache(tmp_path, monkeypatch):
    """The well-formedness verdicts of a pipeline's counterfactuals are read back on a second run (a warm FTC
    notebook checks nothing again), with the same rows; a changed counterfactual is checked afresh."""
    from nli_lib.ftc import validity

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path))
    checked = []
    real = validity.check_counterfactual
    monkeypatch.setattr(validity, "check_counterfactual", lambda *a, **k: (checked.append(a[1]), real(*a, **k))[1])
    df = pd.DataFrame({"pair_id": ["p1", "p4"], "premise": ["u", "u"], "hypothesis": ["There is a cat running .",
                       "A dog runs ."], "label": ["contradiction", "entailment"],
                       "explanation_1": ["a dog is not a cat .", "a dog is a dog ."]})
    first = counterfactual_rows(df, "regex", "regex", verify=False)
    assert sorted(checked) == ["A dog runs .", "There is a dog running ."]
    pd.testing.assert_frame_equal(counterfactual_rows(df, "regex", "regex", verify=False), first)
    assert len(checked) == 2  # read back
    again = counterfactual_rows(df.assign(explanation_1=["a bird is not a cat .", "a dog is a dog ."]), "regex",
                                "regex", verify=False)
    assert again["x_cf"].iloc[0] == "There is a bird running ." and len(checked) == 4
    assert first["status"].tolist() == ["ok", "malformed"] and first["reason"].iloc[1].startswith("malformed: unchanged")


def test_hit_rates_counts_on_a_tiny_frame():
    df = pd.DataFrame({"pair_id": ["a", "b", "c"], "hypothesis": ["There is a cat .", "A man sleeps .", "x"],
                       "label": ["contradiction", "contradiction", "entailment"],
                       "explanation_1": ["a dog is not a cat .", "blah", "cowboy is a man ."]})
    hr = hit_rates(df, explanation_cols=("explanation_1",))
    c = hr["per_label"].set_index("label").loc["contradiction"]
    assert (c["explanations"], c["extracted"], c["counterfactual_rate[C]"]) == (2, 1, 0.5)
    t = hr["per_template"].set_index(["label", "template"])
    assert t.loc[("contradiction", "P1"), "n_selected"] == 1 and t.loc[("contradiction", "P4"), "n_matched"] == 1
    assert t.loc[("contradiction", "P1"), "rate_selected"] == 0.5
    assert t.loc[("contradiction", "P1"), "n_counterfactual"] == 1 and t.loc[("contradiction", "P1"), "cf_rate_of_selected"] == 1.0
    assert t.loc[("entailment", "P1"), "n_selected"] == 1 and t.loc[("entailment", "P1"), "cf_rate_of_selected"] == 0.0
    assert math.isnan(t.loc[("contradiction", "P2"), "cf_rate_of_selected"])  # never selected
    assert (hr["rows"]["failure"] != "").sum() == 2  # 'blah' (no template) and 'x' (spans not in hypothesis)


# ------------------------------------------------------------------------------------------------
# FSP: offline stand-ins through the prompts, and the paper path against a local server
# ------------------------------------------------------------------------------------------------

def test_offline_stand_ins_answer_the_ftc_prompts_and_are_cached():
    cache = CallCache(":memory:")
    rw = FewShotRewriter.offline(cache=cache)
    msgs = PROMPTS["ftc.extract.C"].render(explanation="one cannot be happy and angry at the same time .")
    assert query_explanation(msgs) == "one cannot be happy and angry at the same time ."
    out = rw.extract(["one cannot be happy and angry at the same time ."], ["contradiction"])
    assert out[0].ok and out[0].value == {"A": "happy", "B": "angry"}
    rw.extract(["one cannot be happy and angry at the same time ."], ["contradiction"])
    assert rw.extract_clients["contradiction"].stats()["hits"] == 1
    tmsgs = PROMPTS["ftc.transform.N"].render(hypothesis="H .", A="a", B="b")
    assert query_transform(tmsgs) == ("H .", "a", "b")
    tr = rw.transform(["an angry man grills vegetables ."], ["angry"], ["happy"], ["contradiction"])
    assert tr[0].value == "a happy man grills vegetables ."
    n = rw.transform(["The skateboarders are waiting for their turn at a competition ."], ["looking"],
                     ["waiting for their turn"], ["neutral"])
    assert n[0].value["A"] == "The skateboarders are looking at a competition ."


def test_pipelines_stack_without_a_pandas_dtype_warning():
    """Rows of regex and FSP pipelines stack with one dtype per column: the shot counts are nullable integers
    in every pipeline, so pandas' all-NA concat FutureWarning never reaches an FTC page."""
    import warnings

    from nli_lib.ftc.pipeline import all_pipelines

    df = pd.DataFrame({"pair_id": ["p1"], "premise": ["u"], "hypothesis": ["There is a cat running ."],
                       "label": ["contradiction"], "explanation_1": ["a dog is not a cat ."]})
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        rows = all_pipelines(df, FewShotRewriter.offline(cache=CallCache(":memory:")))
    assert str(rows["extract_shots"].dtype) == str(rows["transform_shots"].dtype) == "Int64"
    assert rows.loc[rows["pipeline"] == "regex-regex", "extract_shots"].isna().all()


def test_rule_extract_and_align_transform():
    assert rule_extract("just because he has a mop, does not mean he has a broom", "neutral") == ("he has a mop",
                                                                                                   "he has a broom")
    assert rule_extract("nothing here", "entailment") is None
    assert align_transform("A man sleeps .", "cat", "dog", "entailment") == "A man sleeps ."  # nothing to substitute


def test_exemplar_rows_fill_to_20_with_flagged_pool_rows():
    printed = exemplar_rows("extract", "contradiction", n=None)
    assert len(printed) == 5 and printed[0]["A"] == "jail cells"
    pool = pd.DataFrame({"pair_id": [f"p{i}" for i in range(30)], "label": "contradiction", "ok": True,
                         "explanation": [f"a dog{i} is not a cat" for i in range(30)], "A": "dog", "B": "cat",
                         "hypothesis": "There is a cat", "x_cf": "There is a dog", "slot": "C"})
    rows = exemplar_rows("extract", "contradiction", n=20, pool=pool)
    assert len(rows) == 20 and rows[:5] == printed and all(r["source"].startswith("companion") for r in rows[5:])
    assert len(exemplar_rows("transform", "contradiction", n=20, pool=pool)) == 20
    # C and E share one transformation set (Table 14): extra rows from both labels, identical for both
    mixed = pd.concat([pool, pool.assign(pair_id=[f"e{i}" for i in range(30)], label="entailment",
                                         x_cf="There is an animal")], ignore_index=True)
    tc, te = (exemplar_rows("transform", lab, n=20, pool=mixed) for lab in ("contradiction", "entailment"))
    assert tc == te and {r["hyp_cf"] for r in tc[5:]} == {"There is a dog", "There is an animal"}


def _ftc_answer(prompts):
    """OpenAI-compatible stand-in: answers FTC extraction/transformation prompts in their formats."""

    def answer(method, path, body):
        user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
        prompts.append(user)
        if user.rstrip().endswith("A:"):
            text = "A: angry\nB: happy"
        elif "Counterfactual:" in user:
            text = "A happy man grills vegetables .\n\nHypothesis: (model kept going)"
        else:
            text = "?"
        return 200, chat_completion(body["model"], text)

    return answer


def test_paper_path_through_a_local_openai_compatible_server(monkeypatch):
    pytest.importorskip("openai")
    prompts = []
    monkeypatch.setenv("FTC_TEST_KEY", "sk-test")
    no_proxy(monkeypatch)
    with local_server(_ftc_answer(prompts)) as url:
        client = LLMClient(LLMConfig(base_url=f"{url}/v1", model="fake-neo", api_key_env="FTC_TEST_KEY",
                                     max_retries=0, concurrency=1), cache=CallCache(":memory:"))
        pool = pd.DataFrame({"pair_id": [f"p{i}" for i in range(30)], "label": "contradiction", "ok": True,
                             "explanation": [f"a dog{i} is not a cat" for i in range(30)], "A": "dog", "B": "cat",
                             "hypothesis": "There is a cat", "x_cf": "There is a dog", "slot": "C"})
        rw = FewShotRewriter.from_llm(client, shots=shot_sets(pool, n=20))
        df = pd.DataFrame({"pair_id": ["q"], "premise": ["u"], "hypothesis": ["An angry man grills vegetables ."],
                           "label": ["contradiction"], "explanation_1": ["one can't be happy and angry"]})
        rows = counterfactual_rows(df, "fsp", "fsp", rw, verify=False)  # the LLM path + rules (verifier: below)
        assert rows.iloc[0]["x_cf"] == "A happy man grills vegetables ." and rows.iloc[0]["ok"]
        assert rows.attrs["fsp_model"] == "fake-neo"
        assert prompts[0].count("Explanation: ") == 21  # 20 priming rows + the query
        assert "Jail cells aren’t pastel-colored" in prompts[0]
        n_requests = len(prompts)
        counterfactual_rows(df, "fsp", "fsp", rw)  # cached: no new request
        assert len(prompts) == n_requests
        client.close()


# ------------------------------------------------------------------------------------------------
# Scoring with a task model, METEOR
# ------------------------------------------------------------------------------------------------

def test_score_rows_adds_probabilities_and_ftc():
    rows = pd.DataFrame({"pair_id": ["a", "b"], "premise": ["u", "u"], "hypothesis": ["a cat", "a cat"],
                         "label": ["contradiction", "entailment"], "slot": ["C", "E"], "y_cf": ["entailment"] * 2,
                         "x_cf": ["a dog", None], "ok": [True, False], "pipeline": ["regex-regex"] * 2})
    s = score_rows(rows, RuleClassifier(lambda p, h: [0.6, 0.3, 0.1] if "dog" in h else [0.2, 0.5, 0.3], name="fixed"))
    assert s.loc[0, "pred"] == "neutral" and s.loc[0, "pred_cf"] == "entailment"
    assert s.loc[0, "ftc_w"] == pytest.approx(0.69) and s.loc[0, "ftc_k"] == pytest.approx(1 + math.log(0.6))
    assert math.isnan(s.loc[1, "ftc_k"]) and s.loc[1, "pred_cf"] is None


class _TinyWordNet:
    def __init__(self, groups):
        self.groups = groups

    def synsets(self, lemma, pos=None):
        return [i for i, g in enumerate(self.groups) if lemma in g]

    def lemmas(self, synset_id):
        return list(self.groups[synset_id])


class _PosWordNet:
    """Synset ids '<word>-<pos>' for the listed (lemma, pos) entries; lemmas are the id's words."""

    def __init__(self, entries):
        self.entries = entries  # {(lemma, pos): [lemma names]}

    def synsets(self, lemma, pos=None):
        return [f"{lemma}-{p}" for (w, p) in self.entries if w == lemma and (pos is None or p == pos)]

    def lemmas(self, synset_id):
        lemma, pos = synset_id.rsplit("-", 1)
        return self.entries[(lemma, pos)]


def test_oewn_adapter_follows_nltk_morphy_per_part_of_speech():
    wn = OEWNForMeteor(_PosWordNet({("walking", "n"): ["walking", "walk_of_life"], ("walk", "v"): ["walk", "stroll"],
                                    ("dog", "n"): ["dog", "hound"], ("large", "a"): ["large", "big"]}))
    # like nltk: 'walking' is a noun itself and, by the verb rule -ing -> '', the verb 'walk': both sets
    assert wn.synset_ids("walking") == ["walking-n", "walk-v"]
    assert wn.synset_ids("Dogs") == ["dog-n"] and wn.synset_ids("larger") == ["large-a"]
    assert wn.synset_ids("ran") == []  # irregular forms need nltk's exception lists (not in OEWN)
    # 'stroll' is a synonym of the verb reading of 'walking' only: found through the verb's base form
    nouns_only = OEWNForMeteor(_PosWordNet({("walking", "n"): ["walking", "walk_of_life"]}))
    assert meteor("the dog is walking", ["the dog is stroll"], wordnet=wn) > \
        meteor("the dog is walking", ["the dog is stroll"], wordnet=nouns_only)


def test_worked_examples_show_whole_pairs_in_table_3_order():
    from nli_lib.ftc import worked_examples

    scored = pd.DataFrame({
        "pair_id": ["n1", "n1", "c1", "e1", "n2", "n2"], "pipeline": "fsp-fsp",
        "label": ["neutral", "neutral", "contradiction", "entailment", "neutral", "neutral"],
        "slot": ["N[B]", "N[A]", "C", "E", "N[A]", "N[B]"], "ok": [True, True, True, True, True, False],
        "y_cf": ["neutral", "entailment", "entailment", "entailment", "entailment", "neutral"],
        "premise": "u", "hypothesis": "x", "pred": "neutral", "x_cf": ["xb", "xa", "xc", "xe", "xa2", None],
        "pred_cf": ["neutral", "entailment", "neutral", "entailment", "entailment", None], "explanation": "z",
        "A": "a", "B": "b", "ftc_delta": 1.0, "ftc_k": 0.5, "ftc_w": 0.7})
    ex = worked_examples(scored, per_label=1)
    assert ex["pair_id"].tolist() == ["c1", "e1", "n1", "n1"]  # n2 lacks x_cf[B]
    assert ex["slot"].tolist() == ["C", "E", "N[A]", "N[B]"]
    assert ex.loc[2, "counterfactual"] == "f(u, xa) → entailment" and ex.loc[2, "R(A,B)"] == "¬(a ⇒ b)"


def test_meteor_with_an_offline_wordnet_adapter():
    wn = OEWNForMeteor(_TinyWordNet([("dog", "hound"), ("run", "sprint")]))
    assert wn.synsets("dogs")[0].lemmas()[1].name() == "hound"  # plural folded like nltk's morphy
    with_syn = meteor("the hound runs fast", ["the dog runs fast"], wordnet=wn)
    without = meteor("the hound runs fast", ["the dog runs fast"], wordnet=OEWNForMeteor(_TinyWordNet([])))
    assert with_syn > without
    assert meteor("the dog runs fast", ["the dog runs fast"], wordnet=wn) > 0.9
    assert meteor(None, ["the dog runs"], wordnet=wn) == 0.0  # failed counterfactual
    assert math.isnan(meteor("x", [], wordnet=wn))


def test_meteor_stems_each_word_once_with_the_scores_of_nltks_own_stemmer():
    from nltk.translate.meteor_score import meteor_score

    from nli_lib.ftc import metrics
    from nli_lib.text import words

    wn = OEWNForMeteor(_TinyWordNet([("dog", "hound"), ("run", "sprint")]))
    cases = [("the hounds were running quickly", ["a dog runs quick", "dogs ran"]),
             ("nobody is sleeping", ["the sleepers sleep", "a man is sleeping"]), ("cats nap", ["cat napping"])]
    memo = metrics._meteor_stemmer().memo
    memo.clear()
    for hyp, refs in cases:  # nltk's default stemmer (a fresh PorterStemmer each call) gives the same scores
        plain = meteor_score([words(r) for r in refs], words(hyp), wordnet=wn)
        assert meteor(hyp, refs, wordnet=wn) == pytest.approx(plain, abs=0)
    assert {"running", "hounds", "sleepers", "napping"} <= {w for w, _ in memo}  # stemmed through the memo
    size = len(memo)
    meteor(*cases[0], wordnet=wn)
    assert len(memo) == size  # a second call stems nothing new


# ------------------------------------------------------------------------------------------------
# §3.4 donors for pathological explanations; LRA-style noise check
# ------------------------------------------------------------------------------------------------

def test_pathological_donors_share_only_one_input():
    pool = pd.DataFrame({
        "pair_id": ["a", "b", "c", "d", "e"],
        "premise": ["P1", "P1", "P2", "P3", "P3"],
        "hypothesis": ["a man plays guitar", "a man sleeps", "a man plays a guitar outside", "a dog runs", "cats nap"],
        "label": ["entailment", "contradiction", "neutral", "entailment", "neutral"],
        "explanation_1": ["za", "zb", "zc", "zd", "ze"], "explanation_2": "", "explanation_3": ""})
    cond = pathological_explanations(pool.iloc[[0]], pool, seed=0).set_index("condition")
    assert cond.loc["x,u,y", "explanation"] == "za"
    assert cond.loc["u only", "donor_pair_id"] == "b"           # same premise, other label
    assert cond.loc["y only", "donor_pair_id"] == "d"           # same label, other premise
    assert cond.loc["x only", "donor_pair_id"] == "c"           # nearest hypothesis, other premise and label
    assert cond.loc["x only", "explanation"] == "zc"


def test_noise_label_flips_zero_noise_and_cache(tmp_path):
    from nli_lib.ftc import noise_label_flips
    from nli_lib.models.hf import HFClassifier

    cache = CallCache(":memory:")
    clf = HFClassifier(tiny_bert(tmp_path / "bert", layers=1), max_length=16, batch_size=2, progress=False, cache=cache)
    df = pd.DataFrame({"pair_id": ["a", "b", "c"], "premise": ["a man sleeps .", "a dog runs .", "a man runs ."],
                       "hypothesis": ["a man is .", "a dog sleeps .", "a dog ."], "label": ["entailment", "neutral", "contradiction"]})
    zero = noise_label_flips(clf, df, scales=(0.0,), cache=cache)
    assert not zero["flipped"].any()  # no noise: same predictions as the clean model
    big = noise_label_flips(clf, df, scales=(50.0,), seed=1, cache=cache)
    again = noise_label_flips(clf, df, scales=(50.0,), seed=1, cache=cache)
    assert big["pred_noisy"].tolist() == again["pred_noisy"].tolist()
    assert cache.stats()["ftc.noise"]["hits"] >= 3
    warm = HFClassifier(clf.model_path, max_length=16, batch_size=2, progress=False, cache=cache)
    assert noise_label_flips(warm, df, scales=(50.0,), seed=1, cache=cache).equals(again)
    assert warm._model is None  # a fully cached call never loads the weights


def test_shot_sets_from_a_regex_pool_cover_every_prompt():
    df = pd.DataFrame({
        "pair_id": [f"n{i}" for i in range(3)] + [f"c{i}" for i in range(3)], "premise": "u",
        "hypothesis": ["The girl threw the basketball ."] * 3 + ["There is a cat running ."] * 3,
        "label": ["neutral"] * 3 + ["contradiction"] * 3,
        "explanation_1": ["two girls playing basketball does n't imply that the girl threw the basketball"] * 3
        + ["a dog is not a cat ."] * 3})
    pool = counterfactual_rows(df, "regex", "regex")
    shots = shot_sets(pool, n=7)
    assert set(shots) == {(s, lab) for s in ("extract", "transform") for lab in LABELS}
    n_tr = shots[("transform", "neutral")]
    assert len(n_tr) == 7 and n_tr[-1]["hyp_cf"].startswith("A: ") and "; B: " in n_tr[-1]["hyp_cf"]
    assert len(shots[("extract", "entailment")]) == 5  # nothing to add from the pool: printed rows only
    msgs = PROMPTS["ftc.transform.N"].render(shots=n_tr, hypothesis="H", A="a", B="b")
    assert msgs[-1]["content"].count("Counterfactual:") == 8


# ------------------------------------------------------------------------------------------------
# LAS / LRA (simulate.py) on hand-computed labels; the simulator; Table 5 with pair-level metrics
# ------------------------------------------------------------------------------------------------

def test_las_and_lra_by_hand():
    from nli_lib.ftc import las_rows, las_score, lra_score

    # ŷ = E C N E; sim(x,e) = E C C N; sim(x) = E N C E; sim(e) = E C N N
    rows = las_rows(list("ECNE"), list("ECCN"), list("ENCE"), list("ECNN"))
    assert rows["delta"].tolist() == [0, 1, 0, -1] and rows["leak"].tolist() == [1, 1, 1, 0]
    s = las_score(rows)
    assert (s["LAS0"], s["n0"], s["n1"]) == (-1.0, 1, 3) and s["LAS1"] == pytest.approx(1 / 3)
    assert s["LAS"] == pytest.approx(0.5 * (-1 + 1 / 3))  # macro average over the leakage groups
    # F (label survives noise) = 1 1 0 0 vs Z = Δ = 0 1 0 -1: agree on examples 2 and 3
    assert lra_score([True, True, False, False], rows["delta"])["LRA"] == 0.5
    only_leaking = las_score(rows[rows["leak"] == 1])
    assert only_leaking["LAS"] == pytest.approx(1 / 3) and math.isnan(only_leaking["LAS0"])


def test_simulator_uses_the_explanation_and_the_dropout_formats():
    from nli_lib.ftc import Simulator, las_lra_rows, las_lra_summary, las_score

    rng = np.random.default_rng(0)
    words = {"entailment": "same thing", "neutral": "not necessarily", "contradiction": "cannot be both"}
    labels = rng.choice(LABELS, size=120)
    df = pd.DataFrame({"pair_id": [f"p{i}" for i in range(120)], "premise": "a person is outside",
                       "hypothesis": [f"someone stands {i % 7}" for i in range(120)],
                       "explanation_1": [f"it is {words[y]} here" for y in labels]})
    sim = Simulator().fit(df, labels)  # the pair says nothing about the label; the explanation says all
    test = df.assign(explanation=df["explanation_1"])
    rows = las_lra_rows(sim, test, labels, robust=[True] * len(df))
    assert (rows["sim_xe"] == rows["task_pred"]).mean() == 1.0 and (rows["sim_e"] == rows["task_pred"]).mean() == 1.0
    assert (rows["sim_x"] == rows["task_pred"]).mean() < 0.6
    assert rows["delta"].mean() > 0.4 and las_score(rows)["LAS"] > 0.4
    assert rows["lra"].tolist() == (rows["delta"] == 1).astype(float).tolist()
    summ = las_lra_summary(rows)
    assert summ["sim(x,e) = ŷ"] == 1.0 and summ["LRA"] == rows["lra"].mean() and summ["label survives noise (F)"] == 1.0
    with pytest.raises(RuntimeError):
        Simulator().predict(test, "xe")


def test_simulator_labels_are_kept_in_the_file_cache_and_fitted_only_on_a_miss(tmp_path, monkeypatch):
    """A second simulator fitted on the same rows and targets answers the same rows from the file cache without
    fitting (a warm notebook 31 or 32); other targets, other rows asked about or another C fit afresh."""
    from nli_lib.ftc import Simulator

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path))
    fits = []
    real = Simulator._fit_now
    monkeypatch.setattr(Simulator, "_fit_now", lambda self: (fits.append(self.C), real(self)))
    labels = ["entailment", "neutral", "contradiction"] * 10
    df = pd.DataFrame({"pair_id": [f"p{i}" for i in range(30)], "premise": [f"a dog runs {i}" for i in range(30)],
                       "hypothesis": [f"an animal {labels[i][:4]} moves" for i in range(30)],
                       "explanation_1": [f"it says {y}" for y in labels]})
    test = df.assign(explanation=df["explanation_1"])
    first = Simulator().fit(df, labels).predict_all(test)
    assert len(fits) == 1 and set(first) == {"xe", "x", "e"} and len(first["xe"]) == 30
    assert Simulator().fit(df, labels).predict_all(test) == first and len(fits) == 1  # read back, not fitted
    Simulator().fit(df, labels[::-1]).predict_all(test)  # other targets
    Simulator().fit(df, labels).predict_all(test.head(5))  # other rows asked about
    Simulator(C=0.1).fit(df, labels).predict_all(test)  # another setting
    assert fits == [1.0, 1.0, 1.0, 0.1]


def test_simulator_of_a_model_that_always_says_one_label():
    """A task model that gives one label for every pair (a constant replica, a collapsed fine-tune) is simulated
    exactly by that label: Δ = 0 everywhere, LAS 0, nothing fails for want of a second class."""
    from nli_lib.ftc import Simulator, las_lra_rows, las_score

    df = pd.DataFrame({"pair_id": ["a", "b", "c"], "premise": ["p one", "p two", "p three"],
                       "hypothesis": ["h one", "h two", "h three"], "explanation_1": ["e one", "e two", "e three"]})
    sim = Simulator().fit(df, ["contradiction"] * 3)
    rows = las_lra_rows(sim, df.assign(explanation=df["explanation_1"]), ["contradiction"] * 3)
    assert set(rows["sim_xe"]) == set(rows["sim_x"]) == {"contradiction"} and rows["delta"].tolist() == [0, 0, 0]
    assert las_score(rows)["LAS"] == 0.0 and "constant" in sim.name


def test_metric_validation_adds_las_lra_on_every_row_with_a_reference():
    from nli_lib.ftc import attach_pair_scores

    scored = pd.DataFrame({"pair_id": list("abcd"), "slot": "C", "pipeline": "fsp-fsp", "ok": [True, True, True, False],
                           "ftc_delta": [1, 0, 1, np.nan], "ftc_k": [0.9, 0.1, 0.5, np.nan],
                           "ftc_w": [0.9, 0.1, 0.5, np.nan]})
    pairs = pd.DataFrame({"pair_id": list("abcd"), "las": [1.0, 0.0, 0.0, -1.0], "lra": [1.0, 0.0, 1.0, 0.0]})
    scored = attach_pair_scores(scored, pairs)
    ref = pd.DataFrame({"pair_id": list("abcd"), "slot": "C", "ref_label": "entailment",
                        "ref_pred": ["entailment", "neutral", "entailment", "neutral"]})
    long, _ = metric_validation(scored, ref)
    las = long[long["metric"] == "LAS"].iloc[0]
    assert (las["n1"], las["n0"]) == (2, 2) and las["U"] == 3.5  # (1,0) vs (0,-1): 1>0, 1>-1, 0=0 (½), 0>-1
    k = long[long["metric"] == "FTC-K"].iloc[0]
    assert (k["n1"], k["n0"]) == (2, 1) and k["rho"] == 1.0  # the failed counterfactual drops out
    assert rho_table(long)["metric"].tolist() == ["LAS", "LRA", "FTC-δ", "FTC-K", "FTC-W"]


def test_sensitivity_table_reports_las_and_lra_per_condition():
    from nli_lib.ftc import sensitivity_table

    scored = pd.DataFrame({"pair_id": ["a", "a"], "condition": ["x,u,y", "y only"], "pipeline": "fsp-fsp",
                           "ok": True, "ftc_delta": [1.0, 0.0], "ftc_k": [0.5, -1.0], "ftc_w": [0.8, 0.2]})
    simulated = pd.DataFrame({"pair_id": ["a", "a"], "condition": ["x,u,y", "y only"], "delta": [1, -1],
                              "leak": [1, 1], "lra": [1.0, 0.0]})
    t = sensitivity_table(scored, simulated=simulated).set_index("condition")
    assert t.loc["x,u,y", "LAS"] == 1.0 and t.loc["y only", "LAS"] == -1.0 and t.loc["y only", "LRA"] == 0.0
    assert t.loc["y only", "FTC-K"] == -1.0 and t.loc["y only", "y"] == "✓" and t.loc["y only", "x"] == ""


def test_sensitivity_per_label_and_rho_faithful_vs_pathological():
    from nli_lib.ftc import sensitivity_by_slot, sensitivity_rho

    scored = pd.DataFrame({
        "pair_id": ["a", "b", "c", "a", "b", "c"], "pipeline": "fsp-fsp", "slot": "C",
        "condition": ["x,u,y"] * 3 + ["y only"] * 3, "ok": [True, True, True, True, True, False],
        "ftc_delta": [1.0, 1.0, 0.0, 0.0, 1.0, np.nan], "ftc_k": [0.5, 0.2, -1.0, -2.0, 0.1, np.nan],
        "ftc_w": [0.8, 0.6, 0.2, 0.1, 0.5, np.nan]})
    t = sensitivity_by_slot(scored).set_index("condition")
    assert t.loc["y only", "coverage"] == pytest.approx(2 / 3) and t.loc["y only", "FTC-K"] == pytest.approx(-0.95)
    assert t.loc["x,u,y", "FTC-δ"] == pytest.approx(2 / 3) and t.loc["x,u,y", "FTC-W"] == pytest.approx(1.6 / 3)
    rho = sensitivity_rho(scored).set_index(["pathological", "slot", "metric"])
    # FTC-K faithful (.5, .2, -1) vs pathological (-2, .1): pairs won 2 + 2 + 1 = 5 of 6
    assert rho.loc[("y only", "C", "FTC-K"), "U"] == 5 and rho.loc[("y only", "C", "FTC-K"), "rho"] == pytest.approx(5 / 6)


# ------------------------------------------------------------------------------------------------
# The paper's printed counterfactuals; failure kinds of the hit-rate rows
# ------------------------------------------------------------------------------------------------

def test_printed_rewrites_through_the_regex_pipeline():
    from nli_lib.ftc import PAPER_REWRITES, printed_rewrites

    assert sum(len(r[-1]) for r in PAPER_REWRITES) == 9
    rows = printed_rewrites().set_index("source")  # no rewriter: regex-regex only
    assert set(rows["pipeline"]) == {"regex-regex"} and len(rows) == 9
    fig2 = rows.loc["Figure 2"]
    assert fig2["x_cf"] == "The woman is sitting on a fake alligator" and fig2["exact"] and fig2["meteor"] > 0.99
    intro = rows.loc["§1 example"]
    assert (intro["A"], intro["B"], intro["exact"]) == ("dog", "animal", True)
    fig7 = rows.loc["Figure 7"]  # "The man is on a lake with a monoboard": no Table 16 template
    assert not fig7["ok"] and fig7["meteor"] == 0.0


def test_hit_rates_are_computed_once_per_input_and_library(tmp_path, monkeypatch):
    from nli_lib import outputs
    from nli_lib.ftc import analysis

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path))
    calls = []
    compute = analysis.regex_hit_rates
    monkeypatch.setattr(analysis, "regex_hit_rates", lambda *a: calls.append(1) or compute(*a))
    df = pd.DataFrame({"pair_id": ["a"], "hypothesis": ["There is a cat ."], "label": ["contradiction"],
                       "explanation_1": ["a dog is not a cat ."]})
    first = hit_rates(df, ["explanation_1"])
    again = hit_rates(df, ["explanation_1"])
    assert len(calls) == 1  # read back from the file cache
    pd.testing.assert_frame_equal(first["rows"], again["rows"], check_exact=True)
    hit_rates(df.assign(explanation_1="a dog is not a bird ."), ["explanation_1"])
    assert len(calls) == 2  # another input
    monkeypatch.setattr(outputs, "nli_lib_hash", lambda: "edited-library")
    hit_rates(df, ["explanation_1"])
    assert len(calls) == 3  # the same input after a library edit
    hit_rates(df, ["explanation_1"], cached=False)
    assert len(calls) == 4


def test_hit_rate_failure_kinds():
    df = pd.DataFrame({"pair_id": list("abc"), "hypothesis": ["There is a cat .", "A man sleeps .", "A dog runs ."],
                       "label": ["contradiction", "contradiction", "entailment"],
                       "explanation_1": ["a dog is not a cat .", "blah", "a dog is a dog ."]})
    rows = hit_rates(df, explanation_cols=("explanation_1",))["rows"].set_index("pair_id")
    assert rows.loc["a", "failure_kind"] == "" and rows.loc["b", "failure_kind"] == "no template"
    assert rows.loc["c", "failure_kind"] == "counterfactual = hypothesis"
    assert rows.loc["c", "failure"] == "E: malformed: unchanged: counterfactual = hypothesis"


# ------------------------------------------------------------------------------------------------
# Well-formedness checks, the P6/P7 template rule, the priming filter, gold-set precision (issue 16)
# ------------------------------------------------------------------------------------------------



@pytest.mark.mirror
@pytest.mark.parametrize("hypothesis, x_cf, slot, check", [
    ("A person is sitting between two televisions .", "A person is person who stands between two televisions .", "C",
     "copula_bare_noun"),
    ("A man is at a restaurant .", "A man is at a at a restaurant .", "C", "repeated_ngram"),
    ("A young man working .", "A young young working .", "C", "repeated_ngram"),
    ("A man is sitting .", "A man is man preparing food .", "N[A]", "repeated_word"),
    ("They purchase food for lunch .", "They purchase for lunch for lunch .", "E", "repeated_ngram"),
    ("A woman in a dress prepares a steak .", "A preparing a steak in a dress prepares a steak .", "N[B]",
     "determiner_no_noun"),
    ("The men are older .", "The in their later years .", "E", "determiner_no_noun"),
    ("A man is reading a newspaper on break .", "Read a newspaper without being on a break .", "N[B]", "subjectless"),
    ("Some of the lights are yellow .", "Some of the light show .", "N[A]", "no_finite_verb"),
    ("A man in a coat takes a stroll outdoors .", "A man in a coat takes a stroll he is in front of a building .", "E",
     "clause_inserted"),
    ("A dog runs in the field .", "A dog runs in the .", "C", "dangling_end"),
    ("A dog runs .", "A dog runs .", "E", "unchanged"),
    ("Two men are playing frisbee .", "One man are playing frisbee .", "C", "agreement"),
    ("Someone is begging for money .", "Someone is simultaneously be selling artwork .", "C", "copula_verb"),
    ("Six people are dressing old school for a play .", "It is for a play .", "N[B]", "unresolved_pronoun"),
    ("Humans working .", "Two men .", "E", "nothing_kept"),
    ("A group of workers on their lunch break .", "A group of busy when on their lunch break .", "C",
     "phrase_kind_mismatch"),
    # issue 16, gold-set false positives: splices the tagger misreads, read by word form
    ("No one is riding a bike .", "No one is people riding a bike .", "C", "copula_bare_noun"),
    ("The dog is running .", "The dog is runs around a track .", "E", "copula_bare_noun"),
    ("Woman is keeping the paper to herself .", "Woman is simultaneously hand papers to the children .", "C",
     "copula_bare_noun"),
    ("Some people standing", "Some two men standing", "E", "agreement"),
    ("Two children together .", "Two young girl and a toddler together .", "E", "agreement"),
    ("A worker searches a ruined building .", "A rescue workers searches a ruined building .", "E", "agreement"),
    ("A group of people are watching a shuttle launch .", "A group of people are watching a shuttle launches .",
     "N[B]", "agreement"),
    ("A man is addressing a group of people .", "A man is speaking a group of people .", "E", "intransitive_object"),
    ("Three humans are practicing their square-dancing moves .", "Three humans are sitting moves .", "C",
     "intransitive_object"),
    ("The men are repairing the streets .", "The men are rephrasing doing street repairs .", "E", "copula_verb"),
    ("The boy is good at tennis .", "The boy is who hits a tennis ball .", "N[A]", "copula_verb"),
    ("There are people in a restaurant .", "There are inside a restaurant .", "E", "subjectless"),
    ("Two women are dancing in the street wearing dresses .", "You are wearing dresses .", "N[B]",
     "unresolved_pronoun"),
    ("A boy is watching a woman .", "A boy is watching a waling amidst boxes .", "E", "determiner_no_noun"),
])
def test_validity_flags_hand_written_malformed_counterfactuals(hypothesis, x_cf, slot, check):
    from nli_lib.ftc.validity import check_counterfactual

    v = check_counterfactual(hypothesis, x_cf, slot)
    assert not v.ok and v.status == "malformed" and check in v.reason, v.reason


@pytest.mark.mirror
@pytest.mark.parametrize("hypothesis, x_cf, slot", [
    ("There is a cat running", "There is a dog running", "C"),
    ("A man in safety equipment is working on a piece of metal .", "A man in protective gear is working on a piece of metal .", "E"),
    ("The woman is standing on a snake", "The woman is sitting on a fake alligator", "C"),
    ("An angry man grills vegetables on a barbecue .", "A happy man grills vegetables on a barbecue .", "C"),
    ("The children are inside .", "The children are playing in the street .", "C"),
    ("A track athlete gets ready for their turn at the pole vault .", "A track athlete carrying a large pole .", "N[A]"),
    ("A track athlete gets ready for their turn at the pole vault .",
     "A track athlete gets ready for their turn at the pole vault .", "N[B]"),  # Table 14 keeps x for N[B]
    ("A woman wearing a blue scarf is working at a factory .", "A woman wearing an orange scarf is working at a factory .", "C"),
    ("boy swimming", "boy in a swing", "C"),
    ("Men are sitting on a bench .", "Men are going fishing on a bench .", "C"),  # -ing complement of 'going'
    ("Everyone is riding rollerblades .", "A group of people is riding rollerblades .", "N[A]"),  # collective head
    ("A man is addressing a crowd .", "A man is speaking English to a crowd .", "E"),  # a language as object
    ("Two people are standing .", "Two dog walkers are standing .", "C"),  # a numeral's compound: plural head
    ("The man is outside .", "The man is outdoors .", "E"),  # -s word that is no plural
])
def test_validity_passes_hand_written_good_counterfactuals(hypothesis, x_cf, slot):
    from nli_lib.ftc.validity import check_counterfactual

    assert check_counterfactual(hypothesis, x_cf, slot) == __import__("nli_lib.ftc.validity", fromlist=["x"]).Validity("ok")


@pytest.mark.mirror
def test_validity_reads_a_noun_phrase_where_the_explanation_wrote_it():
    from nli_lib.ftc.validity import check_counterfactual

    h, x = "a child is wrestling with bears", "a child is jumping kick with bears"
    assert check_counterfactual(h, x, "C").ok  # in the counterfactual alone the tagger reads a verb phrase
    v = check_counterfactual(h, x, "C", source="a jumping kick is n't wrestling .")  # 'a jumping kick': a noun phrase
    assert not v.ok and "phrase_kind_mismatch" in v.reason, v.reason


@pytest.mark.mirror
def test_validity_reads_spliced_spans_with_the_explanations_tags():
    from nli_lib.ftc.validity import check_counterfactual

    h, x = "The boy is wearing shin guards .", "The play soccer is wearing shin guards ."
    assert check_counterfactual(h, x, "N[B]").ok  # in context the tagger reads "play soccer" as nouns
    assert not check_counterfactual(h, x, "N[B]", source="any boy can play soccer .").ok


@pytest.mark.mirror
@pytest.mark.parametrize("hypothesis, x_cf, check", [
    # issue 16, seed47 false positives: a preposition left without its noun phrase
    ("The kids are playing with toys .", "The kids are playing with limited to toys .", "preposition_object"),
    ("A man sits on a bench .", "A man sits on to the bench .", "preposition_object"),  # a second preposition
    ("A man is looking at the sea .", "A man is happy the sea .", "orphaned_object"),
    ("People are milling about the city street .", "People are being busy the city street .", "orphaned_object"),
])
def test_validity_flags_a_preposition_without_its_object(hypothesis, x_cf, check):
    from nli_lib.ftc.validity import check_counterfactual

    v = check_counterfactual(hypothesis, x_cf, "C")
    assert not v.ok and check in v.reason, v.reason


@pytest.mark.mirror
@pytest.mark.parametrize("hypothesis, x_cf, source", [
    ("A man is looking at the dog .", "A man is petting the dog .", None),  # an inserted verb takes the object
    # a preposition takes it, whatever its tag ('outside' is RB in the explanation)
    ("The man is standing inside a restaurant .", "The man is sitting outside a restaurant .",
     "a man sitting outside can not be standing inside at the same time ."),
    ("A woman is dressed in white .", "A woman is dressed in black .", None),  # a colour after a preposition
    ("The kids are playing with toys .", "The kids are playing with old toys .", None),  # an adjective + noun
])
def test_validity_passes_prepositions_that_keep_an_object(hypothesis, x_cf, source):
    from nli_lib.ftc.validity import check_counterfactual

    v = check_counterfactual(hypothesis, x_cf, "C", source=source)
    assert v.ok, v.reason


@pytest.mark.mirror
@pytest.mark.parametrize("hypothesis, x_cf, slot, check", [
    # issue 16, seed53 false positives
    ("The kids are wet .", "The kids are swimming in a lake means you .", "E", "relation_words"),
    ("A boy is in a park .", "A boy is in a smaller version of a big park .", "E", "relation_words"),
    ("A man waves to his friend .", "A girl waves to his friend .", "C", "pronoun_gender"),
    ("Two men are petting a dog .", "Two men are to pet a dog .", "E", "copula_verb"),
    ("This guy is holding a bottle of beer .", "It is a bottle of beer .", "N[B]", "unresolved_pronoun"),
])
def test_validity_flags_seed53_malformations(hypothesis, x_cf, slot, check):
    from nli_lib.ftc.validity import check_counterfactual

    v = check_counterfactual(hypothesis, x_cf, slot)
    assert not v.ok and check in v.reason, v.reason


@pytest.mark.mirror
@pytest.mark.parametrize("hypothesis, x_cf, check", [
    # issue 16, seed59 false positives
    ("Four men are standing on a hill watching a sunset .", "Four men are watching it .", "unresolved_pronoun"),
    ("The two men are wearing hats .", "The two men are being in hats .", "copula_verb"),
    ("She was calling her friend .", "She was calling their friend .", "pronoun_gender"),
    ("A girl is reading a book .", "A girl is reading his book .", "pronoun_gender"),
    # issue 16, seed61 false positives
    ("A small group of people are eating .", "A small two men of people are eating .", "agreement"),
    ("A man and a child are on a boat .", "A man and a child are people are on a bench .", "clause_inserted"),
    ("A man with a hat sits .", "A part of his overall description with a hat sits .", "relation_words"),
    ("A person is mowing grass on a mower .", "A person is mowing grass on a first sentence mower .", "relation_words"),
    ("A boy juggling three red balls .", "A boy sitting down three red balls .", "intransitive_object"),
    ("A boy is sitting down .", "A boy is sitting in the empty stadium down .", "orphaned_object"),
    # issue 16, seed67 false positives
    ("A man is wearing his jersey in his office .", "His jersey is on the chair .", "unresolved_pronoun"),
    ("A woman and her kids climb the stairs .", "The children are her kids .", "unresolved_pronoun"),
    ("A person is outside .", "A person with umbrella ' absolutely is outside .", "stray_quote"),
    ("Some men are watching TV together .", "Some men are people generally together .", "phrase_kind_mismatch"),
    ("There is one woman in the picture .", "There is one two in the picture .", "agreement"),
    ("A dog is in a pond .", "A dog is in a water .", "agreement"),
    ("someone dances with a ribbon", "ribbon dancer", "no_finite_verb"),
    # issue 16, seed71 false positives
    ("The photo is taking place in a gym .", "The photo is taking place in a woman .", "being_as_place"),
    ("Someone is sitting in front of a computer .", "Someone is sitting in young male .", "being_as_place"),
    ("The gentleman is speaking to a lady .", "The gentlemen with the red shirt is speaking to a lady .", "agreement"),
    ("A young man wears a tuxedo .", "A young man wears a tribal attire .", "agreement"),
    # issue 16, seed73 false positives
    ("The men are teaching the boy how to carve .", "The men are teaching him .", "unresolved_pronoun"),
    ("they are singing in a program", "it is in a christmas program", "unresolved_pronoun"),
    # issue 16, seed79 false positives
    ("Two people are playing football .", "Two people are during a game of football .", "phrase_kind_mismatch"),
    ("A group of girls are laughing .", "A group of girls are people .", "phrase_kind_mismatch"),
    ("There are some people on a road .", "There are some man standing on a road .", "agreement"),
    ("The person is snowboarding .", "The someone is snowboarding .", "determiner_no_noun"),
    # seed89
    ("a guy in brown jumps up", "a guy because he is a man in brown jumps up", "relation_words"),
    ("The raft is empty .", "The raft is fill with 6 people .", "copula_verb"),
    ("a child enjoys summer vacation", "a child enjoys it summer vacation", "unresolved_pronoun"),
])
def test_validity_flags_gold_batch_malformations(hypothesis, x_cf, check):
    """False positives of the gold batches (issue 16), each caught by the named check since its revision."""
    from nli_lib.ftc.validity import check_counterfactual

    v = check_counterfactual(hypothesis, x_cf, "C")
    assert not v.ok and check in v.reason, v.reason


@pytest.mark.mirror
@pytest.mark.parametrize("hypothesis, x_cf", [
    # seed59
    ("She was calling her friend .", "She was calling her husband ."),  # the possessive agrees
    ("A boy is reading a book .", "A boy is reading his book ."),
    ("The men are being loud .", "The men are being quiet ."),  # 'being' + adjective,
    # seed61
    ("A man and a child are on a boat .", "A man and a child are on a bench ."),  # a coordinated subject
    ("A boy is sitting down .", "A boy is lying down ."),  # the particle still follows a verb
    ("A group of people are eating .", "A group of two men are eating ."),
    # seed67
    ("A boy rides his bike .", "A child rides his bike ."),  # a singular noun may be the pronoun's antecedent
    ("A man is holding a cup .", "A man is holding a water bottle ."),  # a mass noun as a modifier
    ("A man is running quickly .", "A man is walking slowly ."),  # an -ly adverb after a verb,
    # seed71
    ("A dog is in a car .", "A dog is in a woman's car ."),  # a possessive names the place's owner
    ("A woman sits in a chair .", "A woman sits in a boat ."),  # a place for a place
    ("A group of kids is playing .", "A group of boys is playing ."),  # the head is 'group'
    ("The man with two dogs is walking .", "The man with two dogs on a leash is walking ."),  # the head is 'man',
    # seed79
    ("Two people are playing football .", "Two people are in a park ."),  # a place after the copula
    ("The kids are playing .", "The kids are eating food ."),  # a verb phrase for a verb phrase
    ("There are some people on a road .", "There are some women on a road ."),
    # seed89
    ("The man is standing .", "The man is stuck in the mud ."),  # an irregular participle
    ("A boy catches a ball in the park .", "A boy catches a ball and holds it in the park ."),  # no noun after it,
    # seed53
    ("A man waves to his friend .", "A boy waves to his friend ."),  # same gender: 'his' still agrees
    ("A man waves to his friend .", "A man waves to his brother ."),  # the noun replaced is not the pronoun's
    ("The man is walking next to dogs .", "The man is walking next to trees ."),  # 'dogs' is no verb after 'to'
    ("The kids are on a fieldtrip", "The kids are doing sightseeing"),  # 'doing' takes an -ing noun
    ("He is holding a bottle of beer .", "He is holding a bottle of juice ."),  # the pronoun was x's
    ("A man is resting .", "A man is about to jump ."),  # 'about to' is no copula + infinitive
    ("A man holds a bottle .", "This man holds a bottle ."),  # "this" as a determiner is no pronoun start,
])
def test_validity_passes_gold_batch_lookalikes(hypothesis, x_cf):
    """Well-formed counterfactuals that look like those false positives: the checks leave them ok."""
    from nli_lib.ftc.validity import check_counterfactual

    v = check_counterfactual(hypothesis, x_cf, "C")
    assert v.ok, v.reason


@pytest.mark.mirror
def test_validity_second_claim_joined_by_and():
    from nli_lib.ftc.validity import check_counterfactual

    premise, h, x = "A businessman walking .", "A guy is jogging in a sweatsuit .", "A guy is walking in a sweatsuit ."
    z = "a man is either walking or jogging , and a businessman would not likely be wearing a sweatsuit ."
    v = check_counterfactual(h, x, "C", source=z, premise=premise)
    assert not v.ok and v.reason == "other_claim_kept: 'sweatsuit'", v.reason
    assert check_counterfactual(h, x, "C", source="a man is either walking or jogging .", premise=premise).ok


@pytest.mark.mirror
def test_validity_passes_the_hypothesis_own_pronoun_start():
    from nli_lib.ftc.validity import check_counterfactual

    assert check_counterfactual("They are singing .", "They are dancing .", "C").ok


@pytest.mark.mirror
def test_validity_second_claim_after_a_comma():
    from nli_lib.ftc.validity import check_counterfactual

    premise, h = "A woman stands on a wall , pointing her camera .", "A woman is holding a hot dog , sitting on a wall ."
    x = "A woman is pointing a camera , sitting on a wall ."
    z = "pointing a camera is not holding a hot dog , stands is the opposite of sitting"
    v = check_counterfactual(h, x, "C", source=z, premise=premise)
    assert not v.ok and "other_claim_kept: 'sit'" in v.reason, v.reason


@pytest.mark.mirror
def test_validity_a_caption_needs_a_noun_before_its_participle():
    from nli_lib.ftc.validity import check_counterfactual

    source = "performing auto repair does n't mean that the man is a mechanic ."  # 'performing': a participle here
    v = check_counterfactual("The man is a mechanic .", "The performing auto repair .", "N[A]", source=source)
    assert not v.ok and v.reason == "no_finite_verb", v.reason
    assert check_counterfactual("The man is a mechanic .", "The man performing auto repair .", "N[A]",
                                source=source).ok


@pytest.mark.mirror
def test_validity_reads_the_word_after_a_modal_as_a_verb():
    from nli_lib.ftc.validity import check_counterfactual, tag

    assert ("kick", "VB") in tag("the women can not simultaneously kick and demonstrate punches")
    h, x = "Two women are demonstrating punches .", "Two women are simultaneously kick ."
    v = check_counterfactual(h, x, "C", source="the women can not simultaneously kick and demonstrate punches")
    assert not v.ok and "copula_verb: 'are simultaneously kick'" in v.reason, v.reason


@pytest.mark.mirror
def test_validity_flags_a_second_claim_left_unapplied():
    from nli_lib.ftc.validity import check_counterfactual

    premise, h, x = "A woman runs on a beach .", "A man sleeps on a beach .", "A woman sleeps on a beach ."
    two_claims = "a woman is not a man ; running is not sleeping ."
    v = check_counterfactual(h, x, "C", source=two_claims, premise=premise)
    assert not v.ok and v.reason == "other_claim_kept: 'sleep'", v.reason
    assert check_counterfactual(h, x, "C", source="a woman is not a man .", premise=premise).ok  # one claim
    assert check_counterfactual(h, x, "C", source=two_claims).ok  # no premise: the check cannot run
    assert check_counterfactual(h, "A woman runs on a beach .", "C", source=two_claims, premise=premise).ok  # both
    # N[B] keeps the neutral claim (y_cf neutral): another neutral claim left unapplied does not change that
    assert check_counterfactual(h, x, "N[B]", source=two_claims, premise=premise).ok


@pytest.mark.mirror
def test_pipeline_passes_the_premise_to_the_claim_check():
    df = pd.DataFrame({"pair_id": ["p1"], "premise": ["A cat runs in a field ."],
                       "hypothesis": ["A dog is sleeping in a field ."], "label": ["contradiction"],
                       "explanation_1": ["a cat is not a dog ; running is not sleeping ."]})
    rows = counterfactual_rows(df, "regex", "regex")
    assert rows["x_cf"].tolist() == ["A cat is sleeping in a field ."] and rows["status"].tolist() == ["malformed"]
    assert "other_claim_kept: 'sleep'" in rows["reason"].iloc[0]


@pytest.mark.mirror
def test_hit_rates_and_priming_rows_pass_the_premise_to_the_claim_check():
    from nli_lib.ftc.analysis import hit_rates
    from nli_lib.ftc.fewshot import exemplar_rows

    df = pd.DataFrame({"pair_id": ["p1"], "premise": ["A cat runs in a field ."],
                       "hypothesis": ["A dog is sleeping in a field ."], "label": ["contradiction"],
                       "explanation_1": ["a cat is not a dog ; running is not sleeping ."]})
    row = hit_rates(df, ["explanation_1"])["rows"].iloc[0]
    assert row["x_cf[C]"] == "A cat is sleeping in a field ." and not row["ok[C]"]
    pool = counterfactual_rows(df, "regex", "regex").assign(ok=True)  # a pool whose own flag says ok
    printed = exemplar_rows("transform", "contradiction", n=None)
    assert len(exemplar_rows("transform", "contradiction", n=len(printed) + 1, pool=pool)) == len(printed)


@pytest.mark.mirror
def test_pipeline_rows_carry_status_and_malformed_is_never_ok():
    df = pd.DataFrame({"pair_id": ["p1", "p2"], "premise": ["u", "u"],
                       "hypothesis": ["A person is sitting between two televisions .", "There is a cat running ."],
                       "label": ["contradiction", "contradiction"],
                       "explanation_1": ["a person who stands can not be sitting .", "a dog is not a cat ."]})
    rows = counterfactual_rows(df, "regex", "regex").set_index("pair_id")
    assert rows.loc["p1", "status"] == "malformed" and not rows.loc["p1", "ok"]
    assert rows.loc["p1", "reason"].startswith("malformed: ")
    assert rows.loc["p2", "status"] == "ok" and rows.loc["p2", "ok"]


def test_p6_beats_p7_when_p7s_span_crosses_so():
    e = extract_regex("people hiking up a mountain so they are in the mountain .", "entailment")
    assert (e.template, e.A, e.B) == ("P6", "people hiking up a mountain", "they are in the mountain")
    assert set(e.matched) == {"P6"}  # P7's match ('people hiking up a mountain so they' | 'in the mountain') is skipped
    # the Table 13 row where P7 is right keeps P7: its spans cross no connective
    j = extract_regex("jockeys are people , so jockeys riding horses are people riding horses .", "entailment")
    assert (j.template, j.A, j.B) == ("P7", "jockeys", "people")


@pytest.mark.mirror
def test_priming_rows_from_the_regex_pool_must_pass_the_checks():
    pool = pd.DataFrame({
        "pair_id": ["g1", "b1", "b2"], "label": "contradiction", "ok": True, "slot": "C",
        "explanation": ["a dog is not a cat", "a person who stands can not be sitting", "x is not y"],
        "A": ["dog", "person who stands", "y"], "B": ["cat", "sitting", "x"],
        "hypothesis": ["There is a cat running .", "A person is sitting .", "A man is at a restaurant ."],
        "x_cf": ["There is a dog running .", "A person is person who stands .", "A man is at a at a restaurant ."]})
    rows = exemplar_rows("transform", "contradiction", n=20, pool=pool)
    extra = [r for r in rows if r.get("source", "").startswith("companion")]
    assert [r["hyp_cf"] for r in extra] == ["There is a dog running ."]  # the two malformed pool rows do not prime


def test_gold_precision_and_recall_by_hand():
    from nli_lib.ftc.gold import precision_summary

    # 10 live items: ok & correct 6, ok & incorrect 2, not ok & correct 1, not ok & incorrect 1; 2 stale items ignored
    compared = pd.DataFrame({
        "ok": [True] * 8 + [False] * 2 + [True, False],
        "judged_correct": [True] * 6 + [False] * 2 + [True, False] + [False, True],
        "stale": [False] * 10 + [True, True]})
    s = precision_summary(compared)
    assert (s["n_items"], s["n_stale"], s["n_ok"], s["n_ok_correct"], s["n_correct"]) == (12, 2, 8, 6, 7)
    assert s["precision"] == 0.75 and s["recall"] == round(6 / 7, 4)
    # Wilson 95% interval for 6/8 by hand: centre (0.75 + 1.96²/16)/(1 + 1.96²/8), half-width as in evaluation.py
    z, n, p = 1.96, 8, 0.75
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (s["precision_lo"], s["precision_hi"]) == (round(centre - half, 4), round(centre + half, 4))


@pytest.mark.mirror
def test_gold_comparison_matches_by_input_and_reports_changed_text(tmp_path):
    from nli_lib.ftc.gold import gold_comparison, load_gold, precision_summary

    gold = load_gold()
    assert len(gold) >= 100 and set(gold["pipeline"]) == {"regex-regex", "regex-fsp", "fsp-regex", "fsp-fsp"}
    sub = gold[gold["pipeline"] == "regex-regex"].head(6).copy()
    sub.iloc[0, sub.columns.get_loc("counterfactual")] = "A text the pipeline does not produce ."
    path = tmp_path / "gold.csv"
    sub.to_csv(path, index=False)
    compared = gold_comparison(load_gold(path))
    assert compared["stale"].tolist() == [True] + [False] * 5  # matched by (pair, pipeline, slot), text compared
    assert precision_summary(compared)["n_stale"] == 1


def test_ftc_notebooks_save_exactly_what_the_catalog_declares():
    """Every `nb.save(obj, "name")` of notebooks 30-32 names a declared output, and every declared output is saved
    (an f-string name is a pattern; notebook 30 saves `report.METEOR_TABLES` by variable); no cell writes through
    nb.out.table/figure/records."""
    import json
    import re

    from nli_lib.catalog import specs
    from nli_lib.config import REPO_ROOT
    from nli_lib.ftc.report import METEOR_TABLES

    for stem in ("30_ftc_counterfactuals", "31_ftc_metric", "32_ftc_sensitivity"):
        cells = json.loads((REPO_ROOT / "notebooks" / f"{stem}.ipynb").read_text())["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        assert not re.search(r"nb\.out\.(table|figure|records)\(", code), stem
        saved = re.findall(r"nb\.save\([^\n]*?,\s*(f?)\"([^\"]+)\"", code)
        patterns = [re.compile((re.sub(r"\\\{[^}]*\\\}", ".+", re.escape(n)) if f else re.escape(n)) + "$")
                    for f, n in saved]
        if stem.startswith("30"):
            assert "nb.save(t.round(3), name," in code
            patterns += [re.compile(re.escape(n) + "$") for n in METEOR_TABLES]
        declared = {s.name for s in specs(stem)}
        for p in patterns:
            assert any(p.match(d) for d in declared), (stem, p.pattern, "saved but not declared")
        for d in declared:
            assert any(p.match(d) for p in patterns), (stem, d, "declared but never saved")


def test_make_rewriter_takes_ftc_declarations_from_the_rewriter_section_only():
    """The llm section's `as:` names its system for atoms/FactNLI (the shipped paper profile: llama-3-8b-it):
    as FTC's rewriter that LLM is a stand-in, not an error; the rewriter section's `as:` must be an FTC rewriter."""
    from nli_lib.ftc import make_rewriter, paper_rewriter

    llm = {"base_url": "http://127.0.0.1:9/v1", "model": "some-chat-model", "api_key_env": "NO_SUCH_KEY_VAR"}
    chat = make_rewriter({"llm": {**llm, "as": ["llama-3-8b-it", "Llama-3-8B-Instruct"]}})
    assert chat.tier == "paper" and paper_rewriter(chat) is None
    neo = make_rewriter({"llm": llm, "rewriter": {**llm, "model": "EleutherAI/gpt-neo-1.3B", "as": "GPT-Neo1.3B"}})
    assert paper_rewriter(neo) == "GPT-Neo1.3B"
    with pytest.raises(ValueError, match="FTC's rewriters"):
        make_rewriter({"rewriter": {**llm, "as": "llama-3-8b-it"}})


def test_agreement_boxes_are_dodged_and_counted_even_when_one_group_is_empty():
    """A panel where every pair disagrees (a constant task model) still draws each box in its group's half of the
    slot, carries n under every group ("n = 0" for the empty one) and keeps the legend outside the axes."""
    import matplotlib

    matplotlib.use("Agg")
    from nli_lib.ftc import plot_agreement_boxes

    merged = pd.DataFrame([{"pipeline": "fsp-fsp", "slot": s, "agree": False, "ftc_k": -7.0007 + 1e-5 * i}
                           for s in ("C", "N[A]") for i in range(6)])
    fig = plot_agreement_boxes({"CAD": merged})
    ax = fig.axes[0]
    boxes = [p.get_path().get_extents() for p in ax.patches]
    assert len(boxes) == 2 and all(b.x0 >= i - 0.01 for b, i in zip(sorted(boxes, key=lambda b: b.x0), (0, 1)))
    assert sorted(t.get_text() for t in ax.texts) == ["n = 0", "n = 0", "n = 6", "n = 6"]
    assert not ax.yaxis.get_major_formatter().get_useOffset()
    legend = fig.axes[0].get_legend()
    assert legend is not None and legend.get_bbox_to_anchor().x0 >= ax.get_window_extent().x1 - 1


def test_ftc_groups_below_the_minimum_n_show_their_points_not_a_box():
    """n = 1..4 draws no box (a box of one value is a bare line), only the points; n >= MIN_BOX_N draws a box."""
    import matplotlib

    matplotlib.use("Agg")
    from nli_lib.figures import MIN_BOX_N
    from nli_lib.ftc import plot_ftc_distributions

    rows = [{"ok": True, "slot": "C", "condition": "x,u,y", "ftc_k": 0.1 * i} for i in range(MIN_BOX_N)]
    rows += [{"ok": True, "slot": "N[A]", "condition": c, "ftc_k": -0.5} for c in ("x,u,y", "y only")]
    fig = plot_ftc_distributions(pd.DataFrame(rows))
    ax = fig.axes[0]
    assert len(ax.patches) == 1  # the one group with MIN_BOX_N values
    points = sum(len(c.get_offsets()) for c in ax.collections)
    assert points == MIN_BOX_N + 2  # every value is drawn, boxed or not
    assert sorted(t.get_text() for t in ax.texts) == sorted(["n = 5", "n = 0", "n = 1", "n = 1"])


def test_ftc_groups_without_an_ok_counterfactual_show_n_0_not_a_crash():
    """A rewriter whose every counterfactual failed its checks (a 135M model behind llama-server: notebook 32
    stopped with ZeroDivisionError) still gets its figure: every slot and condition it was asked about, n = 0."""
    import matplotlib

    matplotlib.use("Agg")
    from nli_lib.ftc import plot_ftc_distributions

    rows = [{"ok": False, "slot": s, "condition": c, "ftc_k": float("nan")} for s in ("C", "E")
            for c in ("x only", "y only")]
    ax = plot_ftc_distributions(pd.DataFrame(rows)).axes[0]
    assert [t.get_text() for t in ax.texts] == ["n = 0"] * 4 and not ax.patches
    assert [t.get_text() for t in ax.get_xticklabels()] == ["C", "E"]


def test_precision_lines_report_the_held_out_batch_beside_the_overall_precision():
    from nli_lib.ftc.gold import HELD_OUT_BATCH, precision_table
    from nli_lib.ftc.report import precision_lines

    compared = pd.DataFrame({"pipeline": "regex-regex", "batch": ["early"] * 3 + [HELD_OUT_BATCH] * 2,
                             "ok": True, "judged_correct": [True, True, True, True, False], "stale": False})
    lines = precision_lines(precision_table(compared)).splitlines()
    assert lines[1].startswith("precision of ok (all batches, mostly in sample): 4/5 = 0.800") and lines[2].startswith("held-out batch")
    assert ": 1/2 = 0.500" in lines[2]
    assert len(precision_lines(precision_table(compared[compared["batch"] == "early"])).splitlines()) == 2


def test_gold_comparison_is_computed_once_per_gold_rewriter_and_library(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from nli_lib import outputs
    from nli_lib.ftc import gold, report

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path))
    calls = []
    monkeypatch.setattr(gold, "gold_comparison", lambda g, r: calls.append(1) or g.assign(ok=True, stale=False))
    rows = pd.DataFrame({"pair_id": ["p1"], "counterfactual": ["A dog runs ."], "judged_correct": [True]})
    offline = SimpleNamespace(name="offline://ftc-rules+align", tier="offline", shots={})
    first = report.cached_gold_comparison(rows, offline)
    again = report.cached_gold_comparison(rows, offline)
    assert len(calls) == 1 and again["ok"].tolist() == [True]
    pd.testing.assert_frame_equal(first, again, check_exact=True)
    report.cached_gold_comparison(rows.assign(judged_correct=False), offline)  # a re-judged item
    report.cached_gold_comparison(rows, SimpleNamespace(**{**vars(offline), "shots": {("extract", "E"): [{"x": 1}]}}))
    monkeypatch.setattr(outputs, "nli_lib_hash", lambda: "edited-library")
    report.cached_gold_comparison(rows, offline)
    assert len(calls) == 4


# ---------------------------------------------------------------------------------------------------------------
# The learned verifier (issue 16): features, abstention, the committed fit
# ---------------------------------------------------------------------------------------------------------------

def test_verifier_edit_features_by_hand():
    from nli_lib.ftc.verifier import features

    f = features("A man waves .", "He waves .")  # 'a man' deleted, 'he' inserted, one run
    assert (f["words_inserted"], f["words_deleted"], f["edit_runs"]) == (1, 2, 1)
    assert (f["touches_pronoun"], f["touches_determiner"], f["touches_preposition"]) == (1, 1, 0)
    # new n-grams: '<s> he', 'he waves', '<s> he waves', 'he waves </s>'; 2 of 3 words
    assert f["new_ngrams"] == 4 and f["length_ratio"] == 0.6667
    assert "unseen_bigram_share" not in f  # no corpus, no corpus features


@pytest.mark.mirror  # the tagger of the tag features
def test_verifier_corpus_features_by_hand(monkeypatch):
    from nli_lib.ftc import verifier
    from nli_lib.ftc.verifier import NgramCorpus, features

    corpus = NgramCorpus.from_sentences(["A man is running on the beach .", "The girl is running .", "A man sits ."])
    x = "A man is sitting on the beach ."
    # new n-grams 'is running', 'running on', 'man is running', 'is running on', 'running on the': all in sentence 1
    f = features(x, "A man is running on the beach .", "", corpus)
    assert (f["unseen_bigram_share"], f["unseen_trigram_share"], f["unseen_bigrams"]) == (0.0, 0.0, 0)
    assert f["rarest_bigram_log"] == round(math.log1p(1), 4)  # 'running on' in 1 sentence ('is running' in 2)
    # the pair's own premise is left out of the counts: only 'is running' (the girl) is still seen
    f = features(x, "A man is running on the beach .", "A man is running on the beach .", corpus)
    assert (f["unseen_bigram_share"], f["unseen_trigram_share"], f["unseen_bigrams"]) == (0.5, 1.0, 1)
    # a bad splice: 'is sits', 'sits on' never seen; with every word common (>= 1 sentence) they count as such
    f = features(x, "A man is sits on the beach .", "", corpus)
    assert (f["unseen_bigram_share"], f["unseen_bigrams"], f["unseen_common_bigrams"]) == (1.0, 2, 0)
    monkeypatch.setattr(verifier, "COMMON_WORD", 1)
    f = features(x, "A man is sits on the beach .", "", corpus)
    assert (f["unseen_common_bigrams"], f["unseen_common_trigrams"]) == (2, 3)


def test_verifier_corpus_cache_key_holds_the_tokenisation_version(monkeypatch):
    from nli_lib.ftc import verifier

    key = verifier.corpus_key()
    monkeypatch.setattr(verifier, "TOKENS_VERSION", verifier.TOKENS_VERSION + 1)
    assert verifier.corpus_key() != key


@pytest.mark.mirror
def test_verifier_abstains_on_a_garbled_splice_and_keeps_its_well_formed_twin():
    """Both pass the rules; the verifier doubts 'seated through the waves' (a bigram no real sentence has)."""
    from nli_lib.ftc.report import checks_fired

    df = pd.DataFrame({"pair_id": ["g", "w"], "premise": ["A woman stands in the sea ."] * 2,
                       "hypothesis": ["A young woman is running through the waves ."] * 2,
                       "label": ["contradiction"] * 2,
                       "explanation_1": ["one can not be seated and running at the same time",
                                         "one can not be walking and running at the same time"]})
    rules = counterfactual_rows(df, "regex", "regex", verify=False)
    assert rules["x_cf"].tolist() == ["A young woman is seated through the waves .",
                                      "A young woman is walking through the waves ."]
    assert rules["ok"].tolist() == [True, True]
    rows = counterfactual_rows(df, "regex", "regex")
    assert rows["ok"].tolist() == [False, True] and rows["status"].tolist() == ["malformed", "ok"]
    assert re.fullmatch(r"malformed: low_verifier_score: p=0\.\d\d \[B→A \(exact\)\]", rows.at[0, "reason"])
    assert checks_fired(rows).values.tolist() == [["low_verifier_score", 1]]


@pytest.mark.mirror
def test_verifier_fixture_is_the_deterministic_fit_of_the_gold_and_meets_its_cv_claim():
    from nli_lib.ftc.gold import gold_comparison, load_gold
    from nli_lib.ftc.verifier import (
        TARGET_PRECISION,
        cross_validated,
        feature_matrix,
        fit_verifier,
        gold_rows_hash,
        load_verifier,
        precision_recall,
    )

    committed = load_verifier()
    compared = gold_comparison(load_gold(), FewShotRewriter.offline(), verify=False)
    refit = fit_verifier(compared, committed.info["train_batches"], committed.info["tuning_batch"])
    assert refit.threshold == committed.threshold and refit.info == committed.info
    assert np.allclose(refit.coef, committed.coef, atol=1e-6) and abs(refit.intercept - committed.intercept) < 1e-6
    train = compared[compared["batch"].isin(committed.info["train_batches"])].reset_index(drop=True)
    assert gold_rows_hash(train) == committed.info["gold_rows_hash"]
    assert "seed97" not in committed.info["train_batches"] and "seed103" not in committed.info["train_batches"]
    # the threshold's CV precision, recomputed here: what the fixture claims, and at least the target
    y, ok = train["judged_correct"].astype(bool).to_numpy(), train["ok"].to_numpy()
    p = cross_validated(feature_matrix(train), y, train["batch"].to_numpy())
    precision, recall, n_ok = precision_recall(p, y, ok, committed.threshold)
    assert (precision, recall, n_ok) == tuple(committed.info["cv"][k] for k in ("precision", "recall", "n_ok"))
    assert precision >= TARGET_PRECISION and recall >= 0.5
