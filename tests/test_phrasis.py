"""PhrasIS causal coherence: reversal, SoftCoh/HardCoh, weighted F1, scenarios, features, models (tiny data only)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nli_lib import phrasis as phr
from nli_lib.cache import CallCache
from nli_lib.evaluation import weighted_f1
from nli_lib.phrasis.features import toy_wordnet
from nli_lib.phrasis.loaders import PHRASIS_LABELS

from kit import RuleClassifier, TableClassifier, tiny_bert
from stand_ins import chat_completion, local_server, no_proxy

STOP = {"the", "a", "an", "in", "on", "of", "is", "are"}


def frame(rows):
    """PhrasIS-schema frame from (phrase1, phrase2, label[, source, polarity]) tuples."""
    out = []
    for i, r in enumerate(rows):
        p1, p2, label = r[:3]
        source = r[3] if len(r) > 3 else "images"
        polarity = r[4] if len(r) > 4 else ("negatives" if label == "UNR" else "positives")
        out.append({"phrase1": p1, "phrase2": p2, "premise": p1, "hypothesis": p2, "label": label, "source": source,
                    "polarity": polarity, "pair_id": f"{source}.{polarity}.{i}"})
    return pd.DataFrame(out)


# ------------------------------------------------------------------------------------------------ reversal


def test_reverse_label_swaps_direction_and_keeps_symmetric_labels():
    assert phr.reverse_label("FORW") == "BACK" and phr.reverse_label("BACK") == "FORW"
    for label in ("EQUI", "SIMI", "REL", "OPPO", "UNR"):
        assert phr.reverse_label(label) == label
    for label in PHRASIS_LABELS:  # an involution
        assert phr.reverse_label(phr.reverse_label(label)) == label
    with pytest.raises(ValueError):
        phr.reverse_label("entailment")


def test_reversed_pairs_duplicates_only_directional_pairs_swapped():
    df = frame([("Everyone is hungry", "Someone is hungry", "FORW"), ("22 dead", "89 dead", "BACK"),
                ("clings", "hold on", "EQUI"), ("smiling", "are posing", "REL"), ("says", "Syria peace", "UNR"),
                ("February 25", "April 21", "SIMI"), ("Doing back flip", "Jumping headfirst", "OPPO")])
    out = phr.reversed_pairs(df)
    assert len(out) == 6 and set(out["orig_label"]) == {"FORW", "BACK", "EQUI"}
    orig = out[out["direction"] == "original"].set_index("pair_id")
    rev = out[out["direction"] == "reversed"].set_index("pair_id").loc[orig.index]
    assert (rev["phrase1"] == orig["phrase2"]).all() and (rev["phrase2"] == orig["phrase1"]).all()
    assert (rev["premise"] == orig["hypothesis"]).all() and (rev["hypothesis"] == orig["premise"]).all()
    assert rev["label"].tolist() == ["BACK", "FORW", "EQUI"]
    # originals and reversals alternate, so a pair's two rows stay together
    assert out["direction"].tolist() == ["original", "reversed"] * 3


# ------------------------------------------------------------------------------------- SoftCoh / HardCoh

# Hand-computed example (gold y, f(x), f(x_rev)); y_rev = Rev(y):
#  1 FORW: FORW / BACK -> coherent and correct          SC 1 HC 1
#  2 EQUI: EQUI / EQUI -> coherent and correct          SC 1 HC 1
#  3 BACK: SIMI / SIMI -> coherent (Rev(SIMI)=SIMI), wrong  SC 1 HC 0
#  4 FORW: FORW / FORW -> incoherent                    SC 0 HC 0
#  5 FORW: BACK / FORW -> coherent but both wrong       SC 1 HC 0
# SoftCoh = 4/5 = 0.8, HardCoh = 2/5 = 0.4
GOLD = ["FORW", "EQUI", "BACK", "FORW", "FORW"]
PRED = ["FORW", "EQUI", "SIMI", "FORW", "BACK"]
PRED_REV = ["BACK", "EQUI", "SIMI", "FORW", "FORW"]


def test_soft_and_hard_coherence_on_a_hand_computed_example():
    gold_rev = phr.reverse_labels(GOLD)
    assert phr.soft_coherent(PRED, PRED_REV).tolist() == [True, True, True, False, True]
    assert phr.hard_coherent(PRED, PRED_REV, GOLD, gold_rev).tolist() == [True, True, False, False, False]
    assert phr.soft_coh(PRED, PRED_REV) == pytest.approx(0.8)
    assert phr.hard_coh(PRED, PRED_REV, GOLD, gold_rev) == pytest.approx(0.4)
    assert np.isnan(phr.soft_coh([], []))


def Lookup(table, labels=PHRASIS_LABELS) -> TableClassifier:  # noqa: N802 - reads like the fake it builds
    """Predicts from a {(premise, hypothesis): label} table (no model, no disk cache)."""
    return TableClassifier(table, labels=labels, default=None, name="lookup")


def test_score_pairs_runs_a_classifier_on_both_directions_and_matches_the_hand_example():
    df = frame([(f"p{i}", f"h{i}", g) for i, g in enumerate(GOLD)])
    table = {**{(f"p{i}", f"h{i}"): p for i, p in enumerate(PRED)}, **{(f"h{i}", f"p{i}"): p for i, p in enumerate(PRED_REV)}}
    rows = phr.score_pairs(Lookup(table), phr.reversed_pairs(df))
    assert rows["pred"].tolist() == PRED and rows["pred_rev"].tolist() == PRED_REV
    assert rows["label_rev"].tolist() == ["BACK", "EQUI", "FORW", "BACK", "BACK"]
    s = phr.summarize(rows.assign(model="lookup", split="unseen", scenario="Positives-I"))
    assert s.loc[0, "SoftCoh"] == pytest.approx(0.8) and s.loc[0, "HardCoh"] == pytest.approx(0.4)
    assert s.loc[0, "n_pairs"] == 5
    wide = phr.coherence_table(s, "HardCoh", "unseen")
    assert wide.loc[0, "Positives-I"] == pytest.approx(0.4) and wide.loc[0, "n_pairs"] == "5"


def test_pair_table_refuses_pairs_without_their_reversal():
    df = phr.reversed_pairs(frame([("a", "b", "FORW"), ("c", "d", "EQUI")])).assign(pred="SIMI")
    with pytest.raises(ValueError, match="lack"):
        phr.pair_table(df.iloc[:-1])


# ----------------------------------------------------------------------------------------------- weighted F1


def test_weighted_f1_agrees_with_scikit_learn():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(0)
    for trial in range(20):
        n = int(rng.integers(1, 60))
        gold = rng.choice(PHRASIS_LABELS[: 3 + trial % 5], size=n)
        pred = rng.choice(PHRASIS_LABELS[trial % 3:], size=n)  # labels absent on either side
        ours = weighted_f1(gold, pred)
        theirs = f1_score(gold, pred, average="weighted", zero_division=0)
        assert ours == pytest.approx(theirs, abs=1e-4)
    # hand-computed: FORW F1 1/2 (support 2), BACK 2/3 (support 1), SIMI 0 (support 1) -> (1 + 2/3) / 4
    assert weighted_f1(["FORW", "FORW", "BACK", "SIMI"], ["FORW", "BACK", "BACK", "FORW"]) == pytest.approx(5 / 12)
    assert weighted_f1(["A", "A", "B"], ["A", "B", "B"]) == pytest.approx(2 / 3 * 2 / 3 + 1 / 3 * 2 / 3)  # unrounded
    # a missing prediction (failed call) is a wrong one: FORW F1 2/3 (support 2), BACK 0 -> 4/9
    assert weighted_f1(["FORW", "FORW", "BACK"], ["FORW", None, float("nan")]) == pytest.approx(4 / 9)
    with pytest.raises(ValueError):
        weighted_f1(["FORW"], [])


# ------------------------------------------------------------------------------------- scenarios and splits


def synthetic_phrasis(n_per: int = 10, seed: int = 0) -> pd.DataFrame:
    """Tiny PhrasIS-like frame: both sources, positives with 4 labels, UNR negatives."""
    rng = np.random.default_rng(seed)
    words = ["dog", "cat", "man", "train", "water", "street", "car", "child"]
    rows = []
    for source in ("images", "headlines"):
        for label in ("EQUI", "FORW", "BACK", "SIMI", "UNR"):
            for _ in range(n_per):
                w, v = rng.choice(words, 2, replace=False)
                p1, p2 = {"EQUI": (f"the {w}", f"a {w}"), "FORW": (f"big {w}", f"the {w}"),
                          "BACK": (f"a {w}", f"small {w}"), "SIMI": (f"a {w}", f"the {v}"),
                          "UNR": (f"is {w}", f"on {v} street")}[label]
                rows.append((p1, p2, label, source))
    return frame(rows)


def test_scenarios_select_tracks_and_sources():
    df = synthetic_phrasis(2)
    assert len(phr.SCENARIOS) == 6 and phr.SCENARIO_KEYS[0] == "Positives-I"
    assert set(phr.scenario("Positives-A").select(df)["label"]) == {"EQUI", "FORW", "BACK", "SIMI"}
    assert "UNR" in set(phr.scenario("All-H").select(df)["label"])
    assert set(phr.scenario("All-H").select(df)["source"]) == {"headlines"}
    assert "UNR" not in phr.scenario("Positives-I").labels and len(phr.scenario("All-I").labels) == 7
    with pytest.raises(KeyError):
        phr.scenario("Positives-X")


def test_validation_split_is_stratified_seeded_and_shared_by_scenarios():
    train = synthetic_phrasis(10)
    splits = phr.load_splits(train=train, test=synthetic_phrasis(3, seed=1), seed=7)
    val = splits.train[splits.train["validation"]]
    assert (val.groupby(["source", "label"]).size() == 2).all()  # 20% of every stratum of 10
    again = phr.load_splits(train=train, test=synthetic_phrasis(3, seed=1), seed=7)
    assert again.train["validation"].equals(splits.train["validation"])
    other = phr.load_splits(train=train, test=synthetic_phrasis(3, seed=1), seed=8)
    assert not other.train["validation"].equals(splits.train["validation"])
    sc = phr.scenario("Positives-I")
    assert len(splits.fit_rows(sc)) == 40 and len(splits.fit_rows(sc, final=False)) == 32
    assert len(splits.validation_rows(sc)) == 8 and not splits.validation_rows(sc).index.isin(
        splits.fit_rows(sc, final=False).index).any()
    sizes = splits.sizes().set_index("scenario")
    assert sizes.loc["All-A", "train"] == 100 and sizes.loc["Positives-A", "seen pairs (validation EQUI/FORW/BACK)"] == 12


# ------------------------------------------------------------------------------- features, rules, phenomena


def test_rules_follow_natural_logic_on_the_paper_examples():
    wn = toy_wordnet()
    rel = lambda a, b: phr.rule_relation(phr.analyze(a, b, wordnet=wn, stopwords=STOP))  # noqa: E731
    assert rel("Everyone is hungry", "Someone is hungry") == "FORW"  # Figure 1
    assert rel("22 dead", "89 dead") == "BACK"  # Table 1: the larger count entails the smaller
    assert rel("Two trains", "The train") == "FORW" and rel("women", "woman") == "FORW"  # Appendix A.1
    assert rel("a dog", "an animal") == "FORW" and rel("a black dog", "a white dog") == "OPPO"
    assert rel("a dog", "the dog") == "EQUI" and rel("says", "Syria peace") == "UNR"


def test_rules_are_coherent_under_reversal():
    wn = toy_wordnet()
    pairs = [("Two trains", "The train"), ("a dog", "an animal"), ("a black dog", "the German shepherd"),
             ("big dog", "a dog"), ("22 dead", "89 dead"), ("everyone", "someone"), ("a cat", "a dog"), ("x", "y")]
    fwd = [phr.rule_relation(phr.analyze(a, b, wordnet=wn, stopwords=STOP)) for a, b in pairs]
    bwd = [phr.rule_relation(phr.analyze(b, a, wordnet=wn, stopwords=STOP)) for a, b in pairs]
    assert phr.soft_coh(fwd, bwd) == 1.0


def test_phenomena_tags():
    wn = toy_wordnet()
    tag = lambda a, b: phr.phenomena(phr.analyze(a, b, wordnet=wn, stopwords=STOP))  # noqa: E731
    assert tag("in the water", "the water")["preposition"] == "one"
    assert tag("on the grass", "through the snow")["preposition"] == "both (different)"
    assert tag("in the city", "in town")["preposition"] == "both (same)"
    t = tag("Two trains", "The train")
    assert t["numeral"] and t["plural_singular"] and not t["near_synonym"] and not t["added_words"]
    assert tag("a dog", "a cat")["near_synonym"]  # co-hyponyms under 'animal'
    assert tag("everyone", "someone")["quantifier"]
    # plural/singular needs the same lemma in different number, not just a plural word somewhere
    assert not tag("London Marathon runners", "London Marathon")["plural_singular"]
    assert tag("London Marathon runners", "London Marathon")["added_words"]  # one phrase = other + words
    assert tag("Two girls", "Two blonde girls")["added_words"] and not tag("a dog", "a cat")["added_words"]
    assert not tag("in the water", "the water")["added_words"]  # a preposition is not an added content word


def test_dense_features_are_mirrored_under_reversal():
    wn = toy_wordnet()
    f = phr.dense_features(phr.analyze("big dog", "an animal", wordnet=wn, stopwords=STOP))
    g = phr.dense_features(phr.analyze("an animal", "big dog", wordnet=wn, stopwords=STOP))
    names = phr.features.DENSE_NAMES
    assert len(f) == len(names)
    ix = names.index
    assert f[ix("len_diff")] == -g[ix("len_diff")] and f[ix("wn_hyponym_1of2")] == g[ix("wn_hyponym_2of1")] == 1
    assert f[ix("rule_FORW")] == g[ix("rule_BACK")] == 1


@pytest.mark.mirror
@pytest.mark.slow  # parses the real Open English WordNet on a cold cache
def test_rules_are_coherent_on_real_phrasis_pairs():
    from nli_lib.phrasis.loaders import load_phrasis

    test = load_phrasis("test", polarity="positives").sample(n=150, random_state=0)
    fwd = [phr.rule_relation(phr.analyze(a, b)) for a, b in zip(test["phrase1"], test["phrase2"])]
    bwd = [phr.rule_relation(phr.analyze(b, a)) for a, b in zip(test["phrase1"], test["phrase2"])]
    assert phr.soft_coh(fwd, bwd) == 1.0
    assert set(fwd) <= set(PHRASIS_LABELS)


# ------------------------------------------------------------------------------------------------- models


def test_feature_svm_learns_direction_and_fingerprints_its_settings():
    df = synthetic_phrasis(6)
    pos = df[df["label"] != "UNR"]
    wn = toy_wordnet()
    clf = phr.FeatureSVMClassifier(labels=phr.POSITIVE_LABELS, C=1.0, wordnet=wn, stopwords=STOP,
                                   cache=CallCache(":memory:")).fit(pos)
    probs = clf.predict_proba(pos["premise"], pos["hypothesis"])
    assert probs.shape == (len(pos), 6) and np.allclose(probs.sum(1), 1)
    pred = clf.predict(["huge cat", "a cat"], ["the cat", "tiny cat"])
    assert pred == ["FORW", "BACK"]
    other = phr.FeatureSVMClassifier(labels=phr.POSITIVE_LABELS, C=0.1, wordnet=wn, stopwords=STOP).fit(pos)
    assert clf.fingerprint != other.fingerprint


def test_train_models_per_scenario_and_per_track_and_coherence_rows(monkeypatch):
    monkeypatch.setattr(phr.features, "_DEFAULTS", {"wordnet": toy_wordnet(), "stopwords": frozenset(STOP)})
    splits = phr.load_splits(train=synthetic_phrasis(10), test=synthetic_phrasis(4, seed=3), seed=0)
    fams = [f for f in phr.offline_families(["tfidf-logreg", "naive-bayes"]) if f.kind != "minilm"]
    per = phr.train_models(fams, splits, per_scenario=True, svm_grid=(0.1, 1.0))
    track = phr.train_models(fams, splits, per_scenario=False, quick=True)
    assert per.get("feature-svm", "Positives-I") is not per.get("feature-svm", "Positives-H")
    assert track.get("feature-svm", "Positives-I") is track.get("feature-svm", "Positives-A")
    assert per.get("feature-svm", "Positives-I").labels == phr.POSITIVE_LABELS
    log = per.selection()
    assert {"C=0.1", "C=1.0"} <= set(log["setting"]) and log["validation_wF1"].notna().any()
    rows = phr.predict_rows(per, splits)
    summary = phr.f1_summary(rows)
    assert len(summary) == 3 * 6 and summary["weighted_F1"].between(0, 1).all()
    table = phr.wide(summary, "weighted_F1")
    assert list(table.columns[2:]) == list(phr.SCENARIO_KEYS)
    coh = phr.coherence_rows(per, splits)
    assert set(coh["split"]) == {"seen", "unseen"} and (coh["hard"] <= coh["soft"]).all()
    n_unseen = coh[(coh["split"] == "unseen") & (coh["scenario"] == "All-A") & (coh["model"] == "feature-svm")]
    assert len(n_unseen) == 4 * 3 * 2  # EQUI/FORW/BACK test pairs, both sources
    cs = phr.coherence_summary(coh)
    assert (cs["HardCoh"] <= cs["SoftCoh"]).all()
    best = phr.beside_paper_table(cs[cs["split"] == "unseen"], "phrasis-table-6", "SoftCoh")
    assert best.loc[best["scenario"] == "Positives-A", "paper best"].iloc[0] == pytest.approx(0.84)


def test_prompted_classifier_parses_leaves_failures_unlabelled_and_goes_through_the_llm_cache():
    from nli_lib.llm import OfflineLLM

    answers = {"a dog": "Label: FORW", "a cat": "I am not sure.", "a car": "UNRELATED"}
    calls = []

    def generate(messages):
        p1, _ = phr.phrases_from_prompt(messages)
        calls.append(p1)
        return answers[p1]

    cache = CallCache(":memory:")
    clf = phr.PromptedRelationClassifier(OfflineLLM(generate, name="fake", cache=cache), shots=2)
    assert clf.predict(["a dog", "a cat", "a car"], ["an animal"] * 3) == ["FORW", None, "UNR"]  # no made-up UNR
    assert clf.predict(["a dog"], ["an animal"]) == ["FORW"] and calls.count("a dog") == 1  # cached answer
    table = clf.answers(["a dog", "a cat"], ["an animal"] * 2)
    assert table["ok"].tolist() == [True, False] and table["label_used"].tolist() == ["FORW", None]
    positives = phr.PromptedRelationClassifier(OfflineLLM(generate, name="fake", cache=cache),
                                               labels=phr.POSITIVE_LABELS)
    assert positives.predict(["a car"], ["an animal"]) == [None]  # UNR is not a Positives label: no label
    assert "not one of" in positives.answers(["a car"], ["an animal"])["error"].iloc[0]
    msg = clf.messages(["a dog"], ["an animal"])[0][-1]["content"]
    assert "PHRASE 1: clings" in msg and msg.rstrip().endswith("PHRASE 1: a dog\nPHRASE 2: an animal\nLabel:")


def test_prompted_classifier_does_not_freeze_failed_calls():
    from nli_lib.llm import OfflineLLM

    state = {"fail": True}

    def generate(messages):
        if state["fail"]:
            raise RuntimeError("endpoint down")
        return "EQUI"

    clf = phr.PromptedRelationClassifier(OfflineLLM(generate, name="flaky", cache=CallCache(":memory:")))
    assert clf.predict(["x"], ["y"]) == [None] and clf.answers(["x"], ["y"])["ok"].tolist() == [False]
    state["fail"] = False
    assert clf.predict(["x"], ["y"]) == ["EQUI"]


def test_offline_rule_llm_is_an_offline_prompted_model():
    llm = phr.offline_relation_llm(wordnet=toy_wordnet(), stopwords=STOP, cache=CallCache(":memory:"))
    clf = phr.PromptedRelationClassifier(llm)
    assert clf.tier == "offline"
    df = frame([("a dog", "an animal", "FORW"), ("Two trains", "The train", "FORW"), ("a cat", "the cat", "EQUI")])
    rows = phr.score_pairs(clf, phr.reversed_pairs(df))
    assert rows["soft"].all() and rows["hard"].all()


def ThreeWay(cache=None) -> RuleClassifier:  # noqa: N802 - reads like the fake it builds
    """3-way NLI stub: entailment when every word of the hypothesis is in the premise, else neutral."""
    return RuleClassifier(lambda p, h: [1, 0, 0] if set(h.split()) <= set(p.split()) else [0, 1, 0],
                          name="subset-nli", cache=cache)


def test_nli_both_ways_is_coherent_by_construction():
    clf = phr.NLIRelationClassifier(ThreeWay(CallCache(":memory:")), neutral_label="SIMI")
    assert clf.predict(["big dog", "dog", "dog", "cat"], ["dog", "big dog", "dog", "dog"]) == ["FORW", "BACK", "EQUI", "SIMI"]
    assert phr.NLIRelationClassifier(ThreeWay(CallCache(":memory:"))).neutral_label == "UNR"  # 7 labels: UNR
    with pytest.raises(ValueError):
        phr.NLIRelationClassifier(ThreeWay(CallCache(":memory:")), neutral_label="UNR", labels=phr.POSITIVE_LABELS)
    df = frame([("big red dog", "red dog", "FORW"), ("dog", "a cat", "BACK"), ("cat", "cat", "EQUI")])
    rows = phr.score_pairs(clf, phr.reversed_pairs(df))
    assert rows["soft"].all() and rows["hard"].tolist() == [True, False, True]
    with pytest.raises(ValueError):
        phr.NLIRelationClassifier(Lookup({}))


def test_zero_shot_models_offline_profile():
    models = phr.zero_shot_models(None, nli=ThreeWay(CallCache(":memory:")), cache=CallCache(":memory:"))
    names = list(models)
    assert names[0].startswith("prompted: phrasis-rules") and names[1] == "NLI both ways: subset-nli"
    assert all(m.tier == "offline" and m.labels == PHRASIS_LABELS for m in models.values())
    six = phr.zero_shot_models(None, nli=ThreeWay(CallCache(":memory:")), track="positives", cache=CallCache(":memory:"))
    assert list(six) == names and all(m.labels == phr.POSITIVE_LABELS for m in six.values())
    with pytest.raises(ValueError):
        phr.zero_shot_models(None, track="images")


def test_zero_shot_models_choose_among_the_tracks_labels(monkeypatch):
    monkeypatch.setattr(phr.features, "_DEFAULTS", {"wordnet": toy_wordnet(), "stopwords": frozenset(STOP)})
    cache = CallCache(":memory:")
    trained = phr.TrainedModels()
    names = phr.add_zero_shot(trained, None, nli=ThreeWay(CallCache(":memory:")), cache=cache)
    prompted, nli = names
    # unrelated phrases: UNR in the All track; the Positives prompt offers no UNR, so the rules answer REL
    assert trained.get(prompted, "All-I").predict(["says"], ["Syria peace"]) == ["UNR"]
    assert trained.get(prompted, "Positives-H").predict(["says"], ["Syria peace"]) == ["REL"]
    assert trained.get(prompted, "Positives-A").template.name == "phrasis.relation[positives]"
    # NLI neutral both ways: UNR in All (its commonest label), SIMI in Positives
    assert trained.get(nli, "All-A").predict(["dog"], ["cat"]) == ["UNR"]
    assert trained.get(nli, "Positives-A").predict(["dog"], ["cat"]) == ["SIMI"]
    assert trained.get(nli, "All-A") is not trained.get(nli, "Positives-A") and set(trained.models[nli]) == set(phr.SCENARIO_KEYS)


def test_positives_prompt_drops_only_the_unr_definition_and_exemplar():
    from nli_lib.llm import PROMPTS

    seven, six = phr.relation_template(PHRASIS_LABELS), phr.relation_template(phr.POSITIVE_LABELS)
    assert seven is PROMPTS["phrasis.relation"]
    a = seven.render(shots=8, phrase1="x", phrase2="y")[-1]["content"]
    b = six.render(shots=8, phrase1="x", phrase2="y")[-1]["content"]
    assert a.replace(phr.models.UNR_LINE, "").replace("PHRASE 1: says\nPHRASE 2: Syria peace\nLabel: UNR\n\n", "") == b
    assert "UNR" not in b and b.count("PHRASE 1:") == 8  # 7 exemplars + the query


# --------------------------------------------------------------------------------------- paper profile bits


def test_paper_models_and_families(tmp_path, monkeypatch):
    from nli_lib.profile import load_profile

    assert len(phr.PAPER_MODELS) == 18
    assert {m.family for m in phr.PAPER_MODELS} == {"encoder", "decoder", "encoder-decoder"}
    (tmp_path / "models" / "gpt2").mkdir(parents=True)
    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    offline = phr.profile_families(load_profile(text="baselines: [tfidf-logreg, naive-bayes]\n"
                                                     "extra_models: [models/gpt2]"))
    assert [f.name for f in offline] == ["feature-svm", "tfidf-logreg", "naive-bayes", "MiniLM-L6 fine-tuned", "gpt2"]
    paper = phr.profile_families(load_profile(text=(
        "tier: paper\nbaselines: []\npaper_models:\n  phrasis:\n    models:\n"
        "      - {id: microsoft/deberta-v3-base, as: DeBERTa v3 B}\n      - models/gpt2\n")))
    # a declared model is its Table 2 row; an undeclared one keeps its own name, whatever it is
    assert [(f.name, f.base, f.arch, f.systems) for f in paper if f.kind == "hf"] == [
        ("DeBERTa v3 B", "microsoft/deberta-v3-base", "encoder", ("DeBERTa v3 B",)),
        ("gpt2", str(tmp_path / "models/gpt2"), "hub model", ())]
    every = phr.profile_families(load_profile(text="tier: paper\nbaselines: []"))
    assert len(every) == 18 + 2  # the default: all of Table 2 (+ feature-svm, MiniLM), each declared
    assert all(f.name in f.systems for f in every if f.kind == "hf")


def test_paper_values_cover_tables_3_to_7():
    for number in range(3, 8):
        long = phr.paper_long(f"phrasis-table-{number}")
        assert len(long) == 18 * 6, number
    t3 = phr.paper_wide("phrasis-table-3").set_index("model")
    assert t3.loc["DeBERTa v3 B", "Positives-A"] == 0.75 and t3.loc["Flan-T5 S", "Positives-H"] == 0.34
    soft = phr.paper_long("phrasis-table-6").set_index(["model", "scenario"])["value"]
    hard = phr.paper_long("phrasis-table-7").set_index(["model", "scenario"])["value"]
    assert (hard <= soft.loc[hard.index]).all()  # HardCoh <= SoftCoh holds in the paper's tables too


def test_paper_search_uses_the_papers_space_and_weighted_f1(monkeypatch, tmp_path):
    pytest.importorskip("optuna")
    import nli_lib.models.training as training
    from nli_lib.models import TrainSpec

    seen = []

    class Fake:
        def __init__(self, spec, path):
            self.spec, self.model_dir = spec, path

        def predict(self, premises, hypotheses):  # better with more epochs: the search must find epochs=10
            return ["FORW" if self.spec.epochs >= 8 else "BACK"] * len(list(premises))

    def fake_finetune(spec, train_df, eval_df=None, name="m", **kw):
        path = tmp_path / name
        path.mkdir()
        seen.append(spec)
        return Fake(spec, path)

    monkeypatch.setattr(training, "finetune", fake_finetune)
    monkeypatch.setattr(phr.models, "with_head_dropout", lambda base, p: f"{base}@dropout={round(p, 1)}")
    val = frame([("a", "b", "FORW"), ("c", "d", "FORW")])
    best, trials = phr.paper_search(val, val, TrainSpec(base="x", labels=phr.POSITIVE_LABELS), n_trials=12, name="s")
    assert len(trials) == 12 and best.epochs >= 8 and best.adam_eps == 1e-6  # the final model trains like the trials
    for spec in seen:
        assert 1e-6 <= spec.lr <= 1e-4 and spec.batch_size in (8, 16, 32, 64) and 1 <= spec.epochs <= 10
        assert 0.01 <= spec.warmup_ratio <= 0.10 and 0 <= spec.weight_decay <= 0.1
        assert spec.adam_eps == 1e-6  # the paper's AdamW epsilon
        assert spec.base in {f"x@dropout={p / 10}" for p in range(6)}  # head dropout 0..0.5, step 0.1
    assert best.base == f"x@dropout={trials.loc[trials['value'].idxmax(), 'params_head_dropout']:.1f}"
    assert len(list(tmp_path.iterdir())) == 1  # only the best trial's model directory is kept
    seen.clear()
    no_dropout, _ = phr.paper_search(val, val, TrainSpec(base="x", labels=phr.POSITIVE_LABELS), n_trials=2, name="n",
                                     space={"head_dropout": None})
    assert no_dropout.base == "x" and all(spec.base == "x" for spec in seen)


def tiny_bert_2way(path):
    """A one-layer BERT classifier (two labels) with its tokenizer in `path` (no download)."""
    return tiny_bert(path, {0: "LABEL_0", 1: "LABEL_1"}, layers=1, hidden=8, intermediate=16)


def test_the_papers_models_train_with_its_adam_eps_and_notebook_20_says_what_the_code_does():
    import json
    import re
    from pathlib import Path

    from nli_lib.phrasis.evaluate import hub_spec

    assert phr.PAPER_ADAM_EPS == 1e-6  # §4 (vii)
    assert hub_spec("roberta-base", phr.POSITIVE_LABELS, epochs=3, seed=0).adam_eps == phr.PAPER_ADAM_EPS
    minilm_eps = phr.minilm_spec(phr.POSITIVE_LABELS, quick=False, epochs=2, seed=0).adam_eps
    cells = json.loads((Path(__file__).parents[1] / "notebooks" / "20_phrasis_baselines.ipynb").read_text())["cells"]
    text = " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    stated = re.findall(r"ε = (1e-\d+)", text)
    assert [float(x) for x in stated] == [phr.PAPER_ADAM_EPS, minilm_eps], stated  # the paper's models, then MiniLM
    assert "Not reproduced: AdamW" not in text


def test_selection_log_names_the_adam_eps_of_each_final_model(monkeypatch):
    import nli_lib.models.training as training

    monkeypatch.setattr(training, "finetune", lambda spec, *a, **k: Lookup({}, labels=spec.labels))
    splits = phr.load_splits(train=synthetic_phrasis(3), test=synthetic_phrasis(1, seed=3), seed=0)
    spec = phr.FamilySpec("RoBERTa B", "hf", base="roberta-base", arch="encoder")
    log = phr.train_family(spec, splits, scenarios=[phr.scenario("All-A")]).selection()
    assert log["setting"].str.contains("adam_eps=1e-06").all()


def test_selection_log_gives_the_training_time_recorded_with_the_model(monkeypatch):
    """A fine-tuned model's `train_seconds` come from its train log (the run that trained it), so a cached
    model reports its training time, not the ~0 s this run spent loading it."""
    import nli_lib.models.training as training

    def cached_model(spec, *a, **k):
        clf = Lookup({}, labels=spec.labels)
        clf.train_log = [{"epoch": 1, "seconds": 30.5}, {"epoch": 2, "seconds": 29.5}]
        return clf

    monkeypatch.setattr(training, "finetune", cached_model)
    splits = phr.load_splits(train=synthetic_phrasis(3), test=synthetic_phrasis(1, seed=3), seed=0)
    spec = phr.FamilySpec("RoBERTa B", "hf", base="roberta-base", arch="encoder")
    log = phr.train_family(spec, splits, scenarios=[phr.scenario("All-A")]).selection()
    assert log["train_seconds"].tolist() == [60.0]


def test_with_head_dropout_sets_the_heads_dropout_without_copying_weights(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    from transformers import AutoModelForSequenceClassification

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    torch.manual_seed(0)
    base = tiny_bert_2way(tmp_path / "tiny")
    out = phr.with_head_dropout(str(base), 0.3)
    assert phr.with_head_dropout(str(base), 0.3) == out != phr.with_head_dropout(str(base), 0.0)
    from pathlib import Path

    weights = [f for f in Path(out).iterdir() if f.suffix in (".safetensors", ".bin")]
    assert weights and all(f.is_symlink() for f in weights)
    model = AutoModelForSequenceClassification.from_pretrained(out)
    assert model.dropout.p == pytest.approx(0.3)  # BERT's head reads classifier_dropout
    assert AutoModelForSequenceClassification.from_pretrained(str(base)).dropout.p == pytest.approx(0.1)
    from nli_lib.models.hf import weights_fingerprint

    assert weights_fingerprint(out) != weights_fingerprint(phr.with_head_dropout(str(base), 0.0))  # distinct cache keys
    # the other encoder families keep their head dropout under other config names
    from transformers import (
        AlbertConfig,
        AlbertForSequenceClassification,
        DebertaV2Config,
        DebertaV2ForSequenceClassification,
    )

    small = dict(vocab_size=16, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16,
                 max_position_embeddings=16)
    for cls, config in ((DebertaV2ForSequenceClassification, DebertaV2Config(**small)),
                        (AlbertForSequenceClassification, AlbertConfig(embedding_size=8, **small))):
        path = tmp_path / cls.__name__
        cls(config).save_pretrained(path)
        model = AutoModelForSequenceClassification.from_pretrained(phr.with_head_dropout(str(path), 0.4))
        assert model.dropout.p == pytest.approx(0.4), cls.__name__
        if hasattr(model, "pooler"):  # DeBERTa's context pooler belongs to the head too
            assert model.pooler.dropout.p == pytest.approx(0.4)


def test_phenomenon_table_counts_incoherence_and_simi_share():
    rows = pd.DataFrame({
        "phrase1": ["in the water", "on the grass", "Two trains", "a dog"],
        "phrase2": ["the water", "through the snow", "The train", "a cat"],
        "label": ["FORW", "BACK", "FORW", "EQUI"], "label_rev": ["BACK", "FORW", "BACK", "EQUI"],
        "pred": ["FORW", "SIMI", "FORW", "SIMI"], "pred_rev": ["BACK", "FORW", "FORW", "SIMI"]})
    rows["soft"] = phr.soft_coherent(rows["pred"], rows["pred_rev"])
    rows["hard"] = phr.hard_coherent(rows["pred"], rows["pred_rev"], rows["label"], rows["label_rev"])
    tagged = phr.add_phenomena(rows, wordnet=toy_wordnet(), stopwords=STOP)
    t = phr.phenomenon_table(tagged).set_index(["phenomenon", "value"])
    assert t.loc[("all pairs", ""), "soft_incoherent"] == 2 and t.loc[("all pairs", ""), "hard_incoherent"] == 3
    assert t.loc[("preposition", "both (different)"), "soft_incoherence_rate"] == 1.0
    assert t.loc[("preposition", "one"), "soft_incoherence_rate"] == 0.0
    assert t.loc[("numeral", True), "simi_share_of_incoherent"] == 0.0  # FORW / FORW: no SIMI involved
    assert t.loc[("all pairs", ""), "simi_share_of_incoherent"] == 0.5
    # exactly one direction right: 'on the grass' (reversed right), 'Two trains' (original right); 'a dog' neither
    assert t.loc[("all pairs", ""), "one_direction_right"] == 2
    assert t.loc[("preposition", "one"), "one_direction_right_rate"] == 0.0
    d = phr.direction_table(tagged).set_index("gold (original)")
    assert d.loc["FORW", "n_pairs"] == 2 and d.loc["FORW", "SoftCoh"] == 0.5
    ex = phr.phenomenon_examples(tagged, "preposition", "both (different)")
    assert ex["phrase1"].tolist() == ["on the grass"]
    patterns = phr.incoherent_patterns(tagged)
    assert patterns["pairs"].sum() == 2


# ------------------------------------------------------------------------------ paper values and scorecard


def test_paper_best_breaks_ties_by_the_models_mean_like_the_papers_bold_face():
    best = phr.paper_best("phrasis-table-6").set_index("scenario")
    assert best.loc["All-H", "model"] == "DeBERTa v3 B"  # ALBERT v2 L ties at 0.75 but is printed first
    assert best.loc["All-A", "model"] == "DeBERTa v3 B"  # ties with Flan-T5 S at 0.80
    assert best.loc["Positives-I", "model"] == "DeBERTa v3 L" and best.loc["Positives-I", "value"] == 0.85


def test_paper_comparisons_pair_our_models_with_the_right_paper_cell():
    ours = pd.DataFrame({"model": ["MiniLM-L6 fine-tuned", "RoBERTa B", "feature-svm"],
                         "scenario": ["Positives-H", "Positives-H", "Positives-H"], "HardCoh": [0.5, 0.4, 0.3]})
    comps = phr.paper_comparisons(ours, "phrasis-table-7", "HardCoh", ["MiniLM-L6 fine-tuned", "RoBERTa B"],
                                  paper_models=["RoBERTa B"])
    assert comps["quantity"].tolist() == ["DeBERTa v3 L | Positives-H", "RoBERTa B | Positives-H"]
    assert comps["ours"].tolist() == [0.5, 0.4] and "different model" in comps["note"].iloc[0]
    assert comps["basis"].tolist() == ["stand-in", "paper-model"]
    # a family named like a paper model but not built from the paper's hub id is a stand-in
    other = phr.paper_comparisons(ours, "phrasis-table-7", "HardCoh", ["RoBERTa B"], paper_models=[])
    assert other[["quantity", "basis"]].values.tolist() == [["DeBERTa v3 L | Positives-H", "stand-in"]]
    declared = phr.FamilySpec("RoBERTa B", "hf", base="FacebookAI/roberta-base", systems=("RoBERTa B",))
    trained = phr.TrainedModels(specs={"RoBERTa B": declared, "MiniLM-L6 fine-tuned": phr.MINILM,
                                       "RoBERTa B lookalike": phr.FamilySpec("RoBERTa B", "hf", base="my/roberta"),
                                       "prompted": None})
    assert trained.paper_models == ["RoBERTa B"]  # only the family whose base is declared that Table 2 row


def test_paper_values_csv_has_a_reason_exactly_where_the_offline_run_scores_nothing():
    from nli_lib.paper_values import paper_values_frame

    pv = paper_values_frame("phrasis")
    assert len(pv) == 1 + 18 + 2 + 5 * 18 * 6 and pv[["ref", "quantity"]].duplicated().sum() == 0
    scored = {(f"phrasis-table-{n}", f"{r.model} | {r.scenario}") for n in range(3, 8)
              for r in phr.paper_best(f"phrasis-table-{n}").itertuples()}
    scored |= {("phrasis-sec-3", "PhrasIS phrase pairs (train + test)")}
    scored |= {("phrasis-sec-4", f"prior feature-based SVM best accuracy | {t}") for t in ("Positives", "All")}
    for r in pv.itertuples():
        assert (r.reason == "") == ((r.ref, r.quantity) in scored), (r.ref, r.quantity, r.reason)
    sizes = pv[pv["ref"] == "phrasis-table-2"].set_index("quantity")["value"]
    assert sizes["ALBERT v2 B parameters (M)"] == 11.8 and sizes["Flan-T5 S parameters (M)"] == 60


def test_find_examples_orients_the_gold_label_as_printed():
    data = frame([("for democracy march", "for huge democracy rally", "BACK"), ("clings", "hold on", "EQUI")])
    data = data.assign(split="test")
    out = phr.find_examples(data).set_index("phrase1")
    assert out.loc["for huge democracy rally", "gold (as printed)"] == "FORW"  # stored reversed: Rev(BACK)
    assert out.loc["for huge democracy rally", "agrees"] and out.loc["clings", "agrees"]
    assert not out.loc["22 dead", "found"] and out["found"].sum() == 2


def test_find_examples_finds_pairs_written_as_prose_after_normalising():
    # Table 1 prints "Doing back flip" / "Jumping headfirst"; the release writes the pair tokenised
    data = frame([("jumping head first", "doing a back flip", "OPPO"), ("22 dead", "89 Dead", "BACK"),
                  ("22-dead", "89 dead", "SIMI")]).assign(split="test")
    out = phr.find_examples(data).set_index("phrase1")
    flip = out.loc["Doing back flip"]
    assert flip["found"] and flip["match"] == "normalised" and flip["gold (as printed)"] == "OPPO" and flip["agrees"]
    assert (flip["data phrase1"], flip["data phrase2"]) == ("doing a back flip", "jumping head first")
    # an exact hit wins over a normalised one ("22-dead" only matches after removing punctuation)
    dead = out.loc["22 dead"]
    assert dead["match"] == "exact" and dead["candidates"] == 1 and dead["gold (as printed)"] == "BACK"
    assert phr.match_key("with it 's eyes -LRB- Harp -RRB-") == "withitseyesharp"
    assert phr.match_key("The dog") == phr.match_key("dog") and phr.match_key("in the water") != phr.match_key("water")
    assert not out.loc["Everyone is hungry", "found"]


@pytest.mark.mirror
def test_every_table_1_pair_is_in_the_release():
    from nli_lib.phrasis.loaders import load_phrasis

    found = phr.find_examples(load_phrasis()).set_index("phrase1")
    table1 = found[found["where in the paper"] == "Table 1"]
    assert table1["found"].all() and table1["agrees"].all(), table1[["found", "match", "gold (as printed)"]]
    flip = found.loc["Doing back flip"]
    assert flip["match"] == "normalised" and flip["split"] == "test" and flip["source"] == "images"
    assert (flip["data phrase1"], flip["data phrase2"]) == ("doing a back flip", "jumping head first")
    assert (table1["match"] == "exact").sum() == 7


def test_models_coherent_by_construction_are_never_our_best():
    cache = CallCache(":memory:")
    trained = phr.TrainedModels()
    trained.add_fixed("svm", Lookup({}))
    names = phr.add_zero_shot(trained, None, nli=ThreeWay(CallCache(":memory:")), cache=cache)
    assert trained.by_construction == names  # the NLI model asked both ways and the offline rules
    assert trained.contenders == ["svm"]

    class RealLLM:  # any chat model: answers each direction on its own
        model, label = "some-llm", "some-llm"

    assert not phr.PromptedRelationClassifier(RealLLM()).coherent_by_construction
    summary = pd.DataFrame({"model": ["svm", *names], "scenario": ["Positives-A"] * 3, "SoftCoh": [0.7, 1.0, 1.0],
                            "tier": ["offline"] * 3})
    assert phr.best_model(summary, "Positives-A", "SoftCoh", exclude=trained.by_construction) == ["svm"]
    beside = phr.beside_paper_table(summary, "phrasis-table-6", "SoftCoh", exclude=trained.by_construction)
    row = beside.iloc[0]
    assert row["our best model"] == "svm" and row["our best SoftCoh"] == 0.7
    assert row[phr.NOT_RANKED] == ", ".join(names) and row[f"SoftCoh · {names[1]}"] == 1.0


def test_coherence_figure_has_bars_per_model_and_split_no_lines_and_no_empty_panel():
    import matplotlib

    matplotlib.use("Agg")
    rows = []
    for model, soft, hard in (("svm", 0.8, 0.5), ("nli both ways", 1.0, 0.3)):
        for split, shift in (("seen", 0.1), ("unseen", 0.0)):
            for key in ("Positives-I", "Positives-H", "Positives-A", "All-A"):
                rows.append({"model": model, "split": split, "scenario": key, "SoftCoh": soft - shift / 2,
                             "HardCoh": hard - shift, "n_pairs": 10 if split == "seen" else 20, "tier": "offline"})
    summary = pd.DataFrame(rows)
    summary = summary[~((summary["model"] == "svm") & (summary["split"] == "seen") & (summary["scenario"] == "All-A"))]
    no_paper = pd.DataFrame(columns=["model", "split", "scenario", "SoftCoh", "HardCoh", "tier"])  # ours only
    fig = phr.plot_coherence(summary, by_construction=["nli both ways"], paper=no_paper)
    # four scenarios that do not fill a tracks x sources grid: one row of four panels, none empty
    assert [ax.get_title().split(" ")[0] for ax in fig.axes] == ["Positives-I", "Positives-H", "Positives-A", "All-A"]
    for ax in fig.axes:
        assert not ax.lines  # categories are never joined by a line
        bars = [(round(p.get_y() + p.get_height() / 2, 3), round(p.get_width(), 3)) for p in ax.patches]
        key = ax.get_title().split(" ")[0]
        part = summary[summary["scenario"] == key]
        assert len(bars) == 2 * len(part)  # SoftCoh and HardCoh of every (model, split) present
        for r in part.itertuples():
            y = ["svm", "nli both ways"].index(r.model) + (-0.2 if r.split == "seen" else 0.2)
            assert {(round(y, 3), round(r.SoftCoh, 3)), (round(y, 3), round(r.HardCoh, 3))} <= set(bars)
        heights = {round(p.get_height(), 3) for p in ax.patches}
        assert heights == {0.38}  # seen and unseen bars 0.4 apart: they never overlap
    missing = [t.get_text() for t in fig.axes[3].texts]
    assert missing == ["n/a"]  # svm has no seen score on All-A: said, not left blank
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["svm", "nli both ways †"]


def test_dedupe_tracks_keeps_a_rows_of_per_track_models_only():
    rows = pd.DataFrame({"scenario": ["Positives-I", "Positives-A", "Positives-H", "All-I", "All-A"],
                         "model": ["m"] * 5, "model_id": ["pos", "pos", "pos-h", "all", "all"],
                         "pair_id": ["a", "a", "b", "a", "a"]})
    out = phr.dedupe_tracks(rows)
    # Positives-I repeats the A row of the same classifier; Positives-H came from its own (per-scenario) model
    assert out["scenario"].tolist() == ["Positives-A", "Positives-H", "All-A"]
    assert out["track"].tolist() == ["Positives", "Positives", "All"]


def test_train_family_defaults_to_one_model_per_scenario(monkeypatch):
    monkeypatch.setattr(phr.features, "_DEFAULTS", {"wordnet": toy_wordnet(), "stopwords": frozenset(STOP)})
    splits = phr.load_splits(train=synthetic_phrasis(6), test=synthetic_phrasis(2, seed=3), seed=0)
    out = phr.train_family(phr.FamilySpec("feature-svm", "feature-svm"), splits, svm_grid=(1.0,))
    models = [out.get("feature-svm", key) for key in phr.SCENARIO_KEYS]
    assert len({id(m) for m in models}) == 6  # six classifiers, one per scenario
    # each final model saw its own scenario's training pairs: I and H one source each, A both
    final = out.selection().set_index("unit")["n_train"]
    assert final["Positives-I"] == final["Positives-H"] == 6 * 4 and final["Positives-A"] == 2 * 6 * 4
    assert final["All-I"] == 6 * 5 and final["All-A"] == 2 * 6 * 5
    per_track = phr.train_family(phr.FamilySpec("feature-svm", "feature-svm"), splits, svm_grid=(1.0,),
                                 per_scenario=False)
    assert per_track.get("feature-svm", "All-I") is per_track.get("feature-svm", "All-A")
    assert phr.model_sizes(out).empty  # no paper model trained


def test_one_model_per_track_puts_a_between_i_and_h_so_the_papers_tables_rule_it_out(monkeypatch):
    """The argument behind the per-scenario default, checked both ways: with one model per track, every A
    coherence score lies in [I, H]; the paper's Tables 4-7 break that in 54 cells (39 by more than 0.01)."""
    monkeypatch.setattr(phr.features, "_DEFAULTS", {"wordnet": toy_wordnet(), "stopwords": frozenset(STOP)})
    splits = phr.load_splits(train=synthetic_phrasis(12), test=synthetic_phrasis(6, seed=3), seed=0)
    fams = [f for f in phr.offline_families(["tfidf-logreg"]) if f.kind != "minilm"]
    per_track = phr.train_models(fams, splits, per_scenario=False, svm_grid=(1.0,))
    summary = phr.coherence_summary(phr.coherence_rows(per_track, splits))
    wide = summary.pivot_table(index=["model", "split"], columns="scenario", values=["SoftCoh", "HardCoh"])
    for metric in ("SoftCoh", "HardCoh"):
        for track in ("Positives", "All"):
            i, h, a = (wide[(metric, f"{track}-{s}")] for s in "IHA")
            assert ((a >= np.minimum(i, h) - 1e-12) & (a <= np.maximum(i, h) + 1e-12)).all()
    cells = phr.paper_a_outside_i_h()
    assert len(cells) == 54 and int(cells["beyond_one_unit"].sum()) == 39
    by_table = cells[cells["beyond_one_unit"]].groupby("ref").size().to_dict()
    assert by_table == {"phrasis-table-4": 13, "phrasis-table-5": 12, "phrasis-table-6": 7, "phrasis-table-7": 7}
    # hand-read from Table 6: RoBERTa B, Positives: I 0.71, H 0.54, A 0.77 -> 0.06 above I
    row = cells[(cells["ref"] == "phrasis-table-6") & (cells["model"] == "RoBERTa B") & (cells["track"] == "Positives")]
    assert row[["I", "H", "A", "gap"]].values.tolist() == [[0.71, 0.54, 0.77, 0.06]]
    # a cell inside [I, H] is not listed (Table 6, DeBERTa v3 B, All: I 0.82, H 0.75, A 0.80)
    assert not ((cells["model"] == "DeBERTa v3 B") & (cells["ref"] == "phrasis-table-6")
                & (cells["track"] == "All")).any()


def test_train_profile_trains_the_profiles_families_per_scenario(monkeypatch):
    import types

    import nli_lib.models.training as training

    seen = []
    splits = phr.load_splits(train=synthetic_phrasis(5), test=synthetic_phrasis(2, seed=3), seed=0)
    answers = dict(zip(zip(splits.test["premise"], splits.test["hypothesis"]), splits.test["label"]))

    def fake_finetune(spec, train_df, eval_df=None, name="m", tier=None, progress=None):
        seen.append(name)
        return Lookup(answers, labels=spec.labels)  # right on every test pair: passes the sanity gate

    monkeypatch.setattr(training, "finetune", fake_finetune)
    monkeypatch.setattr(phr.features, "_DEFAULTS", {"wordnet": toy_wordnet(), "stopwords": frozenset(STOP)})
    from nli_lib.profile import load_profile

    nb = types.SimpleNamespace(tier="offline", quick=True, seed=0,
                               profile=load_profile(text="tier: offline\nbaselines: [tfidf-logreg]\n"))
    trained = phr.train_profile(nb, splits)
    assert trained.families == ["feature-svm", "tfidf-logreg", phr.MINILM.name]
    assert seen == [f"phrasis-minilm-{key}-quick" for key in phr.SCENARIO_KEYS]  # six MiniLM models
    assert trained.fine_tuned == [phr.MINILM.name] and trained.trained_here == trained.families
    assert len(trained.gates) == 6 and all(g.passed for g in trained.gates.values())  # every one gated
    seen.clear()
    phr.train_profile(nb, splits, per_scenario=False)
    assert seen == ["phrasis-minilm-Positives-A-quick", "phrasis-minilm-All-A-quick"]


def test_parameter_millions_counts_a_transformers_model(tmp_path):
    pytest.importorskip("torch")
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(tiny_bert(tmp_path / "tiny", layers=1, hidden=8))
    clf = type("C", (), {"model": model})()
    assert phr.parameter_millions(clf) == pytest.approx(sum(p.numel() for p in model.parameters()) / 1e6)
    assert phr.parameter_millions(Lookup({})) is None


def test_zero_shot_prompted_model_talks_to_an_openai_compatible_endpoint(tmp_path, monkeypatch):
    """Paper-profile path: the profile's `llm` section -> LLMClient -> phrasis.relation prompt, via a local server."""
    requests = []
    answers = {"a dog": "FORW", "an animal": "Label: BACK", "x": "no idea"}

    def answer(method, path, body):
        requests.append(body)
        p1, _ = phr.phrases_from_prompt(body["messages"])
        return 200, chat_completion(body["model"], answers[p1])

    monkeypatch.setenv("PHRASIS_TEST_KEY", "sk-test")
    no_proxy(monkeypatch)
    with local_server(answer) as url:
        profile = {"base_url": f"{url}/v1", "model": "fake-llm",
                   "api_key_env": "PHRASIS_TEST_KEY", "max_retries": 0, "timeout_s": 5}
        models = phr.zero_shot_models(profile, shots=2, cache=CallCache(tmp_path / "calls.sqlite"))
        (name, clf), = models.items()
        assert name == "prompted: fake-llm" and clf.tier == "paper"
        df = frame([("a dog", "an animal", "FORW")])
        rows = phr.score_pairs(clf, phr.reversed_pairs(df))
        assert rows[["pred", "pred_rev", "soft", "hard"]].values.tolist() == [["FORW", "BACK", True, True]]
        assert clf.predict(["x"], ["y"]) == [None]  # unparsable answer -> no label, never a stand-in
        n = len(requests)
        clf.predict(["a dog"], ["an animal"])
        assert len(requests) == n  # answered from the call cache
        # the two directions go out concurrently: find the forward request rather than trusting the order
        user = next(r["messages"][-1]["content"] for r in requests
                    if phr.phrases_from_prompt(r["messages"]) == ("a dog", "an animal"))
        assert "PHRASE 1: clings" in user and user.rstrip().endswith("PHRASE 1: a dog\nPHRASE 2: an animal\nLabel:")
        assert "UNR (unrelated)" in user  # the All prompt
        positives = phr.zero_shot_models(profile, shots=2, track="positives", cache=CallCache(tmp_path / "calls.sqlite"))
        (clf6,) = positives.values()
        assert clf6.predict(["a dog"], ["an animal"]) == ["FORW"] and len(requests) == n + 1  # a different prompt
        assert "UNR" not in requests[-1]["messages"][-1]["content"]


def test_minilm_family_gets_per_track_epochs_and_trains_once_per_track(monkeypatch):
    import nli_lib.models.training as training

    seen = []

    def fake_finetune(spec, train_df, eval_df=None, name="m", tier=None, progress=None):
        seen.append((name, spec.epochs, spec.labels, len(train_df)))
        return Lookup({}, labels=spec.labels)

    monkeypatch.setattr(training, "finetune", fake_finetune)
    splits = phr.load_splits(train=synthetic_phrasis(5), test=synthetic_phrasis(2, seed=3), seed=0)
    out = phr.train_family(phr.MINILM, splits, epochs={"positives": 3, "all": 1}, per_scenario=False)
    assert [(n, e, len(lab), rows) for n, e, lab, rows in seen] == [
        ("phrasis-minilm-Positives-A", 3, 6, 40), ("phrasis-minilm-All-A", 1, 7, 50)]
    assert out.get(phr.MINILM.name, "Positives-H") is out.get(phr.MINILM.name, "Positives-A")
    seen.clear()
    phr.train_family(phr.MINILM, splits, epochs={"positives": 3, "all": 1})  # default: one per scenario
    assert [(n, e, rows) for n, e, _, rows in seen] == [
        ("phrasis-minilm-Positives-I", 3, 20), ("phrasis-minilm-Positives-H", 3, 20),
        ("phrasis-minilm-Positives-A", 3, 40), ("phrasis-minilm-All-I", 1, 25), ("phrasis-minilm-All-H", 1, 25),
        ("phrasis-minilm-All-A", 1, 50)]


# ------------------------------------------------------------------------------------------------ notebooks

PHRASIS_NOTEBOOKS = ("20_phrasis_baselines", "21_phrasis_coherence", "22_phrasis_error_analysis")


def notebook_code(stem: str) -> list[str]:
    import json
    from pathlib import Path

    cells = json.loads((Path(__file__).parents[1] / "notebooks" / f"{stem}.ipynb").read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def saved_names(code: str) -> list:
    """The output names of the nb.save calls in `code`: a string, or a regex for an f-string name."""
    import ast
    import re

    names = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "save" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "nb":
            name = node.args[1]
            if isinstance(name, ast.Constant):
                names.append(name.value)
            else:  # f"fig-{number}-contingency"
                parts = [re.escape(v.value) if isinstance(v, ast.Constant) else r"\d+" for v in name.values]
                names.append(re.compile("".join(parts) + "$"))
    return names


@pytest.mark.parametrize("stem", PHRASIS_NOTEBOOKS)
def test_notebooks_save_declared_outputs_only_through_the_catalog(stem):
    """Every output goes through nb.save with a name the catalog declares, every declared output is saved,
    no caption is written in a cell, and code lines stay within 100 characters."""
    import re

    from nli_lib import catalog

    code = "\n".join(notebook_code(stem))
    assert not re.search(r"nb\.out\.(table|figure|records)\(", code)
    assert "caption=" not in code and "quick sample" not in code.lower()
    declared = {s.name for s in catalog.specs(stem)}
    names = saved_names(code)
    literal = {n for n in names if isinstance(n, str)}
    assert literal <= declared, literal - declared
    patterns = [n for n in names if not isinstance(n, str)]
    assert declared == literal | {d for d in declared if any(p.match(d) for p in patterns)}
    long_lines = [line for line in code.splitlines() if len(line) > 100]
    assert not long_lines, long_lines
