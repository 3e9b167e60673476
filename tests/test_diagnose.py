"""Diagnose: the paired tests on hand-computed cases; the command on two real models, a replica and bad models."""
from __future__ import annotations

import json

import numpy as np
import pytest

from nli_lib.diagnose.paired import mcnemar, paired_bootstrap


def test_mcnemar_counts_only_the_items_the_models_disagree_on():
    # 10 items: both right on 5, both wrong on 2, only A right on 3, never only B: p = 2 * (1/2)**3 = 0.25
    a = [1] * 5 + [0] * 2 + [1] * 3
    b = [1] * 5 + [0] * 2 + [0] * 3
    assert mcnemar(a, b) == {"n": 10, "a_only": 3, "b_only": 0, "p_value": 0.25}
    # the same discordant items among many more agreements give the same p-value
    assert mcnemar(a + [1] * 100, b + [1] * 100)["p_value"] == 0.25
    # 1 vs 9 discordant: 2 * P(X <= 1 | 10, 1/2) = 2 * 11 / 1024
    assert mcnemar([1] + [0] * 9, [0] + [1] * 9)["p_value"] == pytest.approx(22 / 1024)
    assert mcnemar([1, 0, 1], [1, 0, 1])["p_value"] == 1.0  # no disagreement: no evidence
    # symmetric in A and B
    assert mcnemar(b, a)["p_value"] == 0.25 and mcnemar(b, a)["b_only"] == 3


def test_paired_bootstrap_difference_interval_and_p_value():
    same = paired_bootstrap([1, 0, 1, 1], [1, 0, 1, 1])
    assert (same["difference"], same["ci_low"], same["ci_high"], same["p_value"]) == (0.0, 0.0, 0.0, 1.0)
    always = paired_bootstrap([1, 1, 1], [0, 0, 0], n_boot=200)
    assert (always["difference"], always["ci_low"], always["ci_high"], always["p_value"]) == (1.0, 1.0, 1.0, 0.0)
    # A better on 30 of 200 items, B on 10: difference 0.1; the interval holds it and excludes 0
    rng = np.random.default_rng(1)
    base = rng.integers(0, 2, 200)
    a, b = base.copy(), base.copy()
    a[:30], b[:30] = 1, 0
    b[30:40], a[30:40] = 1, 0
    r = paired_bootstrap(a, b, n_boot=4000, seed=3)
    assert r["difference"] == pytest.approx(0.1)
    assert 0 < r["ci_low"] < 0.1 < r["ci_high"] < 0.2 and r["p_value"] < 0.01
    assert paired_bootstrap(a, b, n_boot=4000, seed=3) == r  # seeded: the same numbers again


def test_paired_tests_refuse_unpaired_or_non_binary_input():
    with pytest.raises(ValueError, match="same items"):
        mcnemar([1, 0], [1, 0, 1])
    with pytest.raises(ValueError, match="0/1"):
        paired_bootstrap([0.5, 1], [1, 0])


def test_paired_bootstrap_compares_real_valued_scores_and_mean_interval():
    from nli_lib.diagnose.paired import mean_interval

    # per-item scores, B always 0.25 below A: the difference is 0.25 in every resample
    a = [0.5, 0.75, 1.0, 0.25]
    r = paired_bootstrap(a, [x - 0.25 for x in a], n_boot=500, binary=False)
    assert (r["difference"], r["ci_low"], r["ci_high"], r["p_value"]) == pytest.approx((0.25, 0.25, 0.25, 0.0))
    with pytest.raises(ValueError, match="0/1"):
        paired_bootstrap(a, a)  # real values need binary=False
    with pytest.raises(ValueError, match="finite"):
        paired_bootstrap([0.5, float("nan")], [0.5, 0.5], binary=False)
    m = mean_interval([0.0, 1.0] * 50, n_boot=2000)
    assert m["n"] == 100 and m["mean"] == 0.5 and 0.38 < m["ci_low"] < 0.5 < m["ci_high"] < 0.62
    assert mean_interval([float("nan")])["n"] == 0


# ---------------------------------------------------------------------------------------------------------------
# The diagnose itself: validation, lenses on real models, the report, the cache
# ---------------------------------------------------------------------------------------------------------------

# Two real models that fit in seconds (the offline MiniLM would be fine-tuned first in the tests' fresh cache):
# the profile's line-up is exactly them, so the notebooks' own calls score the same models.
PROFILE = "tier: offline\nnli_model: tfidf-svm\nbaselines: [naive-bayes]\n"
MODELS = ["tfidf-svm", "naive-bayes"]


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    from nli_lib.context import RunContext

    path = tmp_path_factory.mktemp("diagnose") / "two-baselines.yaml"
    path.write_text(PROFILE)
    return RunContext.from_profile(str(path), quick=True)


def _made(summary, name: str) -> int:
    return int(summary.loc[name, "calls"]) if name in summary.index else 0


@pytest.fixture(scope="module")
def diagnosed(ctx):
    """The notebooks' own calls first (11: snli_consistency, 51: taxinli.evaluate), then three diagnoses: the
    models the notebooks scored (atoms, taxinli), the same plus FTC, and that again."""
    from nli_lib import calls, taxinli
    from nli_lib.atoms.pipeline import snli_consistency
    from nli_lib.diagnose.command import diagnose

    snli_consistency(ctx)
    taxinli.evaluate(ctx)
    runs = []
    for lenses in (["atoms", "taxinli"], ["atoms", "taxinli", "ftc"], ["atoms", "taxinli", "ftc"]):
        before = calls.snapshot()
        report = diagnose(MODELS, ctx=ctx, lenses=lenses)
        runs.append((report, calls.summary(since=before)))
    return runs


@pytest.mark.mirror
@pytest.mark.slow  # the atoms lens checks its atoms against the real WordNet (parsed once per test session)
def test_diagnosing_what_the_notebooks_scored_asks_no_model_and_a_second_diagnose_asks_none(diagnosed):
    (after_notebooks, used1), (with_ftc, used2), (again, used3) = diagnosed
    names = list(after_notebooks.results)
    assert names == ["tfidf-svm (quick: 2000 rows)", "bow-naive-bayes (quick: 2000 rows)"]
    # the lenses asked the same pairs the notebooks had asked: every answer came from the call cache
    assert after_notebooks.run["calls"]["calls"] == 0 and after_notebooks.run["calls"]["cache_hits"] > 1000
    assert all(_made(used1, n) == 0 for n in names)
    assert all(_made(used2, n) > 0 for n in names)  # FTC's counterfactuals were new to both models
    assert again.run["calls"]["calls"] == 0 and all(_made(used3, n) == 0 for n in names)
    assert again.run["calls"]["requests"] == with_ftc.run["calls"]["requests"] > 0
    assert again.as_dict() == with_ftc.as_dict() | {"run": again.as_dict()["run"]}  # the same numbers


@pytest.mark.mirror
@pytest.mark.slow
def test_two_models_side_by_side_with_paired_tests_on_the_same_items(diagnosed, tmp_path):
    report, _ = diagnosed[1]
    a, b = report.results
    table = report.side_by_side
    assert list(table.columns) == ["lens", "quantity", a, b]
    assert {"full example accuracy", "overall logical consistency", "accuracy", "FTC-δ", "FTC-K"} <= set(table.quantity)
    paired = report.paired.set_index(["lens", "quantity"])
    acc = paired.loc[("atoms", "full example accuracy")]
    assert acc["n"] == 80 and acc["test"] == "McNemar exact"  # notebook 11's quick SNLI-TEST-SAMPLE
    # recomputed by hand from the per-item correctness the lens kept: discordant counts and the exact p-value
    ra, rb = (report.results[m][0].items["full example accuracy"][1] for m in (a, b))
    assert acc["a_only"] == int(((ra == 1) & (rb == 0)).sum()) and acc["b_only"] == int(((ra == 0) & (rb == 1)).sum())
    assert acc["p_value"] == pytest.approx(mcnemar(ra.loc[rb.index], rb)["p_value"])
    assert acc["a"] * 100 == pytest.approx(report.results[a][0].headline("full example accuracy")["value"])
    assert paired.loc[("ftc", "FTC-K"), "test"] == "paired bootstrap"
    assert paired.loc[("taxinli", "accuracy"), "n"] == report.results[a][1].headline("accuracy")["n"]
    # every headline has an interval around it and its n; the papers' systems beside it are never graded
    for lens in report.results[a]:
        assert lens.status == "ok", lens.reason
        for h in lens.headlines:
            assert h["n"] > 0 and (h["ci_low"] <= h["value"] <= h["ci_high"] or h["value"] != h["value"])
        assert all(row["graded"] is False and row["basis"] == "stand-in" for row in lens.beside)
    atoms = report.results[a][0]
    assert {"gpt-4o-2024-08-06"} <= {row["system"] for row in atoms.beside}
    assert atoms.weakest and atoms.weakest[0]["examples"] and "atoms" in atoms.weakest[0]["examples"][0]
    assert atoms.gate.startswith("sanity gate PASSED")
    paths = report.write(tmp_path / "out")
    saved = json.loads(paths["json"].read_text(), parse_constant=pytest.fail)  # strict JSON: no NaN, no Infinity
    assert [m["name"] for m in saved["models"]] == [a, b] and saved["paired"] and saved["lenses"][a][0]["headlines"]
    page = paths["markdown"].read_text()
    assert "## Paired tests on the same items" in page and "McNemar exact" in page and "Weakest categories" in page


def test_a_model_that_is_not_a_3_way_nli_classifier_is_refused_before_anything_runs(tmp_path, capsys):
    pytest.importorskip("transformers")
    from nli_lib import calls, replicas
    from nli_lib.context import RunContext
    from nli_lib.diagnose.candidates import DiagnoseError
    from nli_lib.diagnose.command import diagnose, main

    base = replicas.build_replica("roberta", tmp_path / "no-head")  # a base model: the default 2-label head
    ids = replicas.build_replica("label-ids", tmp_path / "label-ids")  # LABEL_0..2: nothing says which is which
    ctx = RunContext.from_profile("offline", quick=True)
    before = calls.snapshot()
    with pytest.raises(DiagnoseError) as err:
        diagnose([str(base), str(ids), str(tmp_path / "missing"), "tfidf-svm"], ctx=ctx)
    said = str(err.value)
    assert "no-head: its head has 2 output units (LABEL_0, LABEL_1); a 3-way NLI classifier has 3" in said
    assert "label-ids: id2label (LABEL_0, LABEL_1, LABEL_2) cannot be mapped onto" in said and "label_order" in said
    assert "no local model folder" in said and "missing" in said
    assert ctx.models == {} and calls.summary(since=before).empty  # nothing was loaded, fitted or asked
    with pytest.raises(DiagnoseError, match="no lens 'nope'"):
        diagnose(["tfidf-svm"], ctx=ctx, lenses=["nope"])
    with pytest.raises(DiagnoseError, match="no MODEL given"):
        diagnose([], ctx=ctx)
    with pytest.raises(DiagnoseError, match="has none"):
        diagnose(["llm"], ctx=ctx)  # the offline profile has no llm: endpoint
    assert main([str(base), "--out", str(tmp_path / "r")]) == 2
    assert "its head has 2 output units" in capsys.readouterr().err and not (tmp_path / "r").exists()


@pytest.mark.mirror
def test_a_replica_family_model_is_diagnosed_and_its_collapse_reported_as_failed(ctx, tmp_path):
    pytest.importorskip("transformers")
    from nli_lib import replicas
    from nli_lib.diagnose.command import diagnose

    folder = replicas.build_replica("bert", tmp_path / "bert-replica")  # labels in another order; biased head
    report = diagnose([str(folder)], ctx=ctx, lenses=["taxinli"])
    (taxinli,) = report.results["bert-replica"]
    # the head always picks unit 0, which id2label calls neutral: the model collapsed onto one label
    assert taxinli.status == "failed" and "collapsed: neutral is 100% of the predictions" in taxinli.reason
    assert taxinli.headlines == [] and taxinli.items == {}  # numbers withheld
    assert "**FAILED**" in report.markdown() and "bert-replica (taxinli)" in report.markdown()


def test_the_command_lists_its_lenses_and_its_help(capsys):
    from nli_lib.cli import main
    from nli_lib.diagnose import registry as lenses

    assert main(["diagnose", "--list-lenses"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()] == list(lenses.names())
    assert "[opt-in: --phrasis]" in out.splitlines()[-1]
    with pytest.raises(SystemExit) as ex:
        main(["diagnose", "--help"])
    assert ex.value.code == 0 and "MODEL" in capsys.readouterr().out
    assert [lens.name for lens in lenses.chosen()] == ["atoms", "ftc", "factnli", "taxinli"]
    assert [lens.name for lens in lenses.chosen(phrasis=True)][-1] == "phrasis"


@pytest.mark.mirror
@pytest.mark.slow  # A.1's atoms are checked against the real WordNet
def test_an_llm_endpoint_is_diagnosed_as_a_prompted_classifier(tmp_path, monkeypatch):
    """`llm`: the profile's OpenAI-compatible endpoint answering Prompt B.1 (and A.1 for the atoms), over HTTP."""
    import re

    from nli_lib.context import RunContext
    from nli_lib.diagnose.command import diagnose

    from stand_ins import chat_completion, local_server, no_proxy

    def answer(method, path, body):
        content = body["messages"][-1]["content"]
        if "SENTENCE:" in content:  # Prompt A.1: the atoms of a hypothesis
            return 200, chat_completion(body["model"], "1. There is a person.\n2. The person is outside.\n[END]")
        hypothesis = re.findall(r"Hypothesis: (.*)", content)[-1]  # Prompt B.1: one label
        return 200, chat_completion(body["model"], ("e" if hypothesis.startswith("There is") else "n")
                                    + "\nBecause. [END]")

    no_proxy(monkeypatch)
    with local_server(answer) as url:
        profile = tmp_path / "endpoint.yaml"
        profile.write_text(f"tier: paper\nbaselines: []\nllm: {{base_url: '{url}/v1', model: toy-llm}}\n")
        ctx = RunContext.from_profile(str(profile), quick=True)
        report = diagnose(["llm"], ctx=ctx, lenses=["atoms"])
    (name,) = report.results
    assert name.startswith("toy-llm") and report.run["calls"]["calls"] > 0
    (atoms,) = report.results[name]
    # it says neutral for every full pair: a collapse onto one label, reported as failed, never a number
    assert atoms.status == "failed" and "collapsed: neutral" in atoms.reason


@pytest.mark.mirror
def test_the_phrasis_estimate_counts_the_rows_and_steps_the_fine_tunes_take(ctx, monkeypatch, tmp_path):
    """Before training, the PhrasIS lens says how many optimiser steps it will take: the same units, rows and steps
    `phrasis.train_family` then trains (the fine-tune itself is replaced by a recorder here)."""
    import math

    pytest.importorskip("transformers")
    from nli_lib import replicas
    from nli_lib.diagnose.candidates import Candidate
    from nli_lib.diagnose.lens_phrasis import estimate, family
    from nli_lib.models import training
    from nli_lib.phrasis import load_splits
    from nli_lib.phrasis.evaluate import MINILM_EPOCHS, train_family
    from nli_lib.profile import ModelRef

    trained = []
    monkeypatch.setattr(training, "finetune", lambda spec, rows, *a, **k: trained.append(
        math.ceil(len(rows) / spec.batch_size) * spec.epochs) or object())
    splits = load_splits(quick=True, seed=0)
    encoder = replicas.build_replica("bert", tmp_path / "my-encoder")
    for ref in (ModelRef("", str(encoder), "my-encoder", kind="hf"),
                ModelRef("", "offline:minilm-esnli", "offline:minilm-esnli", kind="offline")):
        spec, trained[:] = family(Candidate("m", ref)), []
        plan = estimate(spec, splits, ctx)
        train_family(spec, splits, quick=True, seed=ctx.seed, epochs=MINILM_EPOCHS,
                     hub_epochs=ctx.profile.paper_models.phrasis.epochs)
        assert plan["units"] == len(trained) == 6 and plan["steps"] == sum(trained) > 0 and plan["cached"] == 0


@pytest.mark.mirror
def test_the_phrasis_lens_refits_a_baseline_on_phrasis_and_reports_its_coherence(ctx):
    from nli_lib.diagnose.command import diagnose

    report = diagnose(["naive-bayes"], ctx=ctx, lenses=["phrasis"])
    (phrasis,) = next(iter(report.results.values()))
    assert phrasis.status == "ok" and [h["quantity"] for h in phrasis.headlines] == [
        "SoftCoh unseen", "HardCoh unseen", "SoftCoh seen", "HardCoh seen"]
    soft = phrasis.items["SoftCoh (all scenarios)"][1]
    unseen = soft[soft.index.str.contains("|unseen|", regex=False)]
    assert phrasis.headline("SoftCoh unseen")["n"] == len(unseen) and \
        phrasis.headline("SoftCoh unseen")["value"] == pytest.approx(100 * unseen.mean())
    # HardCoh also needs both directions right: never above SoftCoh
    assert phrasis.headline("HardCoh unseen")["value"] <= phrasis.headline("SoftCoh unseen")["value"]
    assert {row["ref"] for row in phrasis.beside} == {f"phrasis-table-{n}" for n in (4, 5, 6, 7)}
    assert "re-fitted on PhrasIS" in phrasis.notes[0]
