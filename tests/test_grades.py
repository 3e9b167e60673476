"""Grades that mean what they say: the bases that are shown but never graded, values printed only in a paper's
text filed under its section, and the sanity gate every fine-tuned stand-in passes before its numbers are shown."""
from __future__ import annotations

import pytest

from nli_lib.basis import NOT_GRADED, check_basis, entry_tier
from nli_lib.models.gate import majority_label, sanity_gate
from nli_lib.paper_values import paper_value

# --------------------------------------------------------------------------------------------------- the gate

GOLD = ["a"] * 10 + ["b"] * 5 + ["c"] * 5  # held-out gold labels: 50 % a


def test_a_model_that_learned_passes_the_gate():
    pred = ["a"] * 8 + ["b", "b"] + ["b"] * 4 + ["a"] + ["c"] * 4 + ["b"]  # 16 of 20 right, three labels used
    gate = sanity_gate(GOLD, pred, majority="a", model="m")
    assert (gate.accuracy, gate.baseline, gate.top_label, gate.top_share) == (0.8, 0.5, "a", 0.45)
    assert gate.passed and gate.failures == ()
    assert gate.line().startswith("sanity gate PASSED · m: accuracy 0.800 vs majority baseline 0.500 (always a)")


def test_always_answering_the_majority_label_fails_three_ways():
    gate = sanity_gate(GOLD, ["a"] * 20, majority="a", model="m")
    assert not gate.passed and len(gate.failures) == 3
    assert "not above the majority-class baseline 0.500 (always a)" in gate.failures[0]
    assert gate.failures[1] == "collapsed: a is 100% of the predictions (gold: 50%)"
    assert gate.failures[2] == "ignores b (gold 25%, predicted 0%), c (gold 25%, predicted 0%)"
    assert "FAILED" in gate.line() and gate.line().endswith("its numbers are withheld")
    assert gate.reason().startswith("withheld: m failed its sanity gate on 20 held-out data: accuracy 0.500")


def test_below_or_at_the_baseline_fails_even_with_varied_answers():
    pred = ["b", "c"] * 10  # varied, but never a: right on 3 of the 5 b rows and 3 of the 5 c rows
    gate = sanity_gate(GOLD, pred, majority="a")
    assert gate.accuracy == 0.3 and gate.baseline == 0.5 and gate.top_share == 0.5
    assert [f.split(" is ")[0] for f in gate.failures] == ["accuracy 0.300", "ignores a (gold 50%, predicted 0%)"]
    # the baseline answers the training set's majority label, not the held-out one: 'b' gives 0.25
    assert sanity_gate(GOLD, pred, majority="b").baseline == 0.25


def test_a_collapse_fails_even_above_the_baseline():
    gold = ["a"] * 80 + ["b"] * 7 + ["c"] * 7 + ["d"] * 6  # a 80 %: not skewed past 90 %
    pred = ["a"] * 80 + ["b"] * 5 + ["a"] * 15  # 85 right, above 'always b' (0.07), but a is 95 % of answers
    gate = sanity_gate(gold, pred, majority="b")
    assert gate.accuracy == 0.85 and gate.baseline == 0.07
    assert gate.failures == ("collapsed: a is 95% of the predictions (gold: 80%)",)  # b, c, d: each under 10 %


def test_a_model_that_ignores_frequent_labels_fails_above_the_baseline_and_under_90_percent():
    """The PhrasIS MiniLM's failure: two of six labels answered, the directional ones never."""
    gold = ["SIMI"] * 26 + ["EQUI"] * 20 + ["BACK"] * 20 + ["FORW"] * 18 + ["REL"] * 15 + ["OPPO"]
    pred = ["SIMI"] * 26 + ["EQUI"] * 20 + ["SIMI"] * 20 + ["EQUI"] * 18 + ["SIMI"] * 14 + ["REL"] * 2
    gate = sanity_gate(gold, pred, majority="SIMI")
    assert gate.accuracy == 0.47 and gate.baseline == 0.26 and gate.top_share == 0.6
    assert gate.failures == ("ignores BACK (gold 20%, predicted 0%), FORW (gold 18%, predicted 0%), "
                             "REL (gold 15%, predicted 2%)",)
    enough = pred[:84] + ["REL"] * 3 + pred[87:]  # REL predicted 5 % (over a fifth of 15 %): not ignored
    assert [lab for lab, _, _ in sanity_gate(gold, enough, majority="SIMI").ignored_labels] == ["BACK", "FORW"]


def test_a_skewed_gold_set_excuses_a_skewed_prediction():
    gold = ["a"] * 95 + ["b"] * 5
    pred = ["a"] * 95 + ["b"] * 4 + ["a"]  # 99 right: 96 % a, as skewed as gold (95 %)
    gate = sanity_gate(gold, pred, majority="a")
    assert gate.top_share == 0.96 and gate.passed
    assert not sanity_gate(gold, ["a"] * 100, majority="a").passed  # only as good as the baseline


def test_the_gate_needs_predictions_and_matching_lengths():
    assert sanity_gate([], [], majority="a").failures == ("no held-out predictions to judge",)
    with pytest.raises(ValueError, match="2 gold labels for 1 predictions"):
        sanity_gate(["a", "b"], ["a"])
    assert majority_label(["b", "a", "a", "b", "c"]) == "b" and sanity_gate(GOLD, GOLD).majority == "a"


def test_phrasis_fine_tuned_models_that_fail_the_gate_are_withheld():
    """A collapsed PhrasIS model leaves the line-up (no table, figure or scorecard number of notebooks 20-22)
    and its scorecard entry says why; a model that learned stays."""
    import math

    from nli_lib import phrasis as phr
    from test_phrasis import synthetic_phrasis

    splits = phr.load_splits(train=synthetic_phrasis(6), test=synthetic_phrasis(4, seed=3), seed=0)
    gold = dict(zip(zip(splits.test["premise"], splits.test["hypothesis"]), splits.test["label"]))

    class Answers:
        name = "fake"

        def __init__(self, answer):
            self.answer = answer

        def predict(self, premises, hypotheses):
            return [self.answer(p, h) for p, h in zip(premises, hypotheses)]

    oracle, simi = Answers(lambda p, h: gold[p, h]), Answers(lambda p, h: "SIMI")
    trained = phr.TrainedModels()
    trained.specs["ft"] = phr.FamilySpec("ft", "minilm")
    trained.specs["svm"] = phr.FamilySpec("svm", "feature-svm")  # not fine-tuned: never gated
    trained.models["ft"] = {"Positives-I": simi, "Positives-H": oracle}
    trained.models["svm"] = {"Positives-I": simi}
    phr.gate_fine_tuned(trained, splits, scenarios=[phr.scenario("Positives-I"), phr.scenario("Positives-H")])
    assert trained.models["ft"] == {"Positives-H": oracle} and trained.withheld == {"ft": {"Positives-I": simi}}
    assert trained.models["svm"] == {"Positives-I": simi}
    lines = trained.gate_lines()
    assert len(lines) == 2 and lines[0].startswith("Positives-I: sanity gate FAILED · ft (Positives-I)")
    assert lines[1].startswith("Positives-H: sanity gate PASSED")
    withheld = phr.withheld_scores(trained, "phrasis-table-3")
    best = phr.paper_best("phrasis-table-3").set_index("scenario").loc["Positives-I", "model"]
    assert withheld[["quantity", "model", "basis"]].values.tolist() == [[f"{best} | Positives-I", "ft", "stand-in"]]
    assert withheld["note"].iloc[0].startswith("withheld: ft (Positives-I) failed its sanity gate on")
    assert not math.isnan(paper_value("phrasis-table-3", f"{best} | Positives-I"))
    trained.models["ft"] = {"Positives-I": simi}  # a family with nothing left leaves the line-up
    phr.gate_fine_tuned(trained, splits, scenarios=[phr.scenario("Positives-I")])
    assert "ft" not in trained.models and "ft" not in trained.families


# --------------------------------------------------------------------------------------------------- bases


def test_our_samples_are_model_free_and_subsets_keep_the_outputs_tier():
    assert set(NOT_GRADED) == {"sample", "subset", "unstated"}
    assert entry_tier("sample", "offline") == "data"
    assert (entry_tier("subset", "offline"), entry_tier("unstated", "data")) == ("offline", "data")
    for basis in NOT_GRADED:  # a model-free notebook (tier data) may record them
        assert check_basis(basis, "data") == basis
    with pytest.raises(ValueError, match="model-free"):
        check_basis("stand-in", "data")


# --------------------------------------------------------------------------------------------------- filing


@pytest.mark.parametrize("ref, quantity, value, old_ref", [
    ("atoms-sec-3.2", "validity agreement Cohen kappa", 0.82, "atoms-table-5"),
    ("atoms-sec-3.2", "pruned atoms judged valid by the author %", 95.7, "atoms-table-5"),
    ("atoms-sec-5.1", "atom label agreement Kendall tau", 0.79, "atoms-table-5"),
    ("atoms-sec-6", "unique QUDs of critical atoms", 223, "atoms-table-9"),
    ("atoms-sec-A.1", "examples without an atom in the label's direction", 70, "atoms-table-7"),
    ("ftc-sec-3.3", "Fleiss kappa of human labels on x_cf", 0.51, "ftc-table-5"),
    ("taxinli-sec-3.1.1", "average inference accuracy", 86.7, "taxinli-fig-2"),
    ("taxinli-sec-3.2", "boolean-quantifier pairs from telephone genre (%)", 25, "taxinli-fig-4"),
    ("atoms-sec-5.1", "non-neutral atoms %", 80, "atoms-fig-5"),
    ("atoms-sec-6", "delta-SNLI examples with a valid atom", 1761, "atoms-table-5"),
    ("atoms-sec-6", "delta-SNLI P-H pairs with a valid atom", 193, "atoms-table-5"),
    ("atoms-sec-6", "delta-SNLI unique critical atoms before grouping", 429, "atoms-table-5"),
    ("atoms-sec-6", "top critical atom 'The person is a man' examples", 20, "atoms-table-4"),
    ("factnli-sec-4.3", "Premise words L=0 (low end)", 14, "factnli-fig-3"),
    ("factnli-sec-4.3", "Hypothesis growth L=0 to L=3 (x, high end)", 10, "factnli-fig-3"),
    ("ftc-sec-3.2", "annotated pairs per label", 100, "ftc-table-4"),
    ("phrasis-sec-3", "PhrasIS phrase pairs (train + test)", 10000, "phrasis-table-1"),
    ("phrasis-sec-4", "prior feature-based SVM best accuracy | All", 81, "phrasis-table-3"),
    ("taxinli-sec-5", "BERT NLI label layer", 6, "taxinli-fig-7"),
    ("taxinli-sec-5", "RoBERTa syntactic layer", 21, "taxinli-fig-7"),
])
def test_values_printed_only_in_the_text_are_filed_under_their_section(ref, quantity, value, old_ref):
    assert paper_value(ref, quantity) == value
    with pytest.raises(KeyError):
        paper_value(old_ref, quantity)


def test_taxinli_fine_tuned_systems_that_fail_the_gate_leave_the_line_up():
    """A collapsed TaxiNLI stand-in is dropped from notebooks 51-54's line-up; its Table 3 entries say why."""
    import pandas as pd

    from nli_lib.taxinli.evaluation import Evaluation, Systems, gate_systems, withheld_scores

    sample = pd.DataFrame({"label": ["entailment", "neutral", "contradiction"] * 4}, index=range(10, 22))

    class Tuned:  # a fine-tuned system: it has a training log
        train_log = [{"epoch": 1}]

    def frame(pred):
        return pd.DataFrame({"pred": pred}, index=sample.index)

    systems = Systems(classifiers={"good": Tuned(), "flat": Tuned(), "nb": object()},
                      counterparts={"flat": "BERT", "nb": "NB"}, main="flat")
    scored = {"good": frame(sample["label"].tolist()), "flat": frame(["entailment"] * 12),
              "nb": frame(["neutral"] * 12)}  # the naive Bayes has no training log: never gated
    gates, kept, withheld = gate_systems(systems, scored, sample)
    assert [(g.model, g.passed) for g in gates] == [("good", True), ("flat", False)]
    assert list(kept.classifiers) == ["good", "nb"] and "flat" not in kept.counterparts
    assert kept.main == "good"  # the failed main stand-in hands its role to the first system left
    assert withheld == {"flat": ("BERT", "stand-in")}
    ev = Evaluation(dev=None, sample=sample, systems=kept, rows=None, gates=gates, withheld=withheld)
    scores = withheld_scores(ev)
    assert scores[["quantity", "model", "basis"]].values.tolist() == [
        ["BERT matched", "flat (stand-in for BERT)", "stand-in"], ["BERT mismatched", "flat (stand-in for BERT)",
                                                                  "stand-in"]]
    assert scores["note"].str.startswith("withheld: flat failed its sanity gate on 12 TaxiNLI").all()


# --------------------------------------------------------------------------------------------------- bounds

def test_a_value_the_paper_prints_as_a_bound_is_met_by_any_number_past_it():
    """PhrasIS §3 says 'over 10K' phrase pairs: our count 10,214 from the released data meets it (match), in the
    scorecard and in the notebook's generated sentence alike; a count under it is graded by its gap."""
    import pandas as pd

    from nli_lib.findings import finding
    from nli_lib.paper_values import bound_of
    from nli_lib.scorecard import build_scorecard

    ref, quantity = "phrasis-sec-3", "PhrasIS phrase pairs (train + test)"
    assert bound_of(ref, quantity) == "lower"
    paper = pd.DataFrame([{"paper": "phrasis", "ref": ref, "quantity": quantity, "value": 10000.0,
                           "setting": "", "reason": "", "bound": "lower"}])
    entry = {"ref": ref, "quantity": quantity, "paper": 10000.0, "model": "data", "basis": "data", "tier": "data",
             "notebook": "00_x", "quick": False, "note": ""}
    ours = pd.DataFrame([{**entry, "ours": 10214.0}, {**entry, "ours": 9600.0, "model": "data (other count)"}])
    assert build_scorecard(paper, ours)["status"].tolist() == ["match", "close"]
    assert "graded: match" in finding({**entry, "ours": 10214.0}, paper=10000.0)


def test_a_paper_values_file_with_an_unknown_bound_is_refused(tmp_path):
    from nli_lib.paper_values import load_values
    from nli_lib.papers import Paper

    csv = tmp_path / "paper_values.csv"
    csv.write_text("ref,quantity,value,setting,reason,bound\nx-table-1,q,1,,,about\n")
    paper = Paper(name="x", label="X", title="X", prefix="7", section="X", package="x", folder=tmp_path, values=csv)
    with pytest.raises(ValueError, match="bound 'about' is not one of"):
        load_values((paper,))


def test_one_value_per_ref_and_quantity(monkeypatch):
    """Lookups read one index of (ref, quantity): a paper-values CSV that files two numbers under one key is an
    error naming both, never a silent first-or-last pick; each registered value is found by its own key."""
    from nli_lib import paper_values as pv

    for v in pv.values():
        assert pv.lookup(v.ref, v.quantity) is v and pv.bound_of(v.ref, v.quantity) == v.bound
    twice = [pv.PaperValue("x", "x-table-1", "accuracy", 0.5, "", "", ""),
             pv.PaperValue("x", "x-table-1", "accuracy", 0.6, "", "", "")]
    monkeypatch.setattr(pv, "_values_of", lambda papers: tuple(twice))
    with pytest.raises(ValueError, match=r"two values for 'accuracy' under 'x-table-1' \(0.5 and 0.6\)"):
        pv._index_of.__wrapped__(())
