"""The stand-ins' judged samples (issue 51): precision, interval and coverage on hand-computed cases, the staleness
notice, and the committed judged files."""
from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from nli_lib import judged


def write_sample(folder, name="atoms", hash_="aaa", ok=(1, 1, 0, 1), strata=("dsnli", "dsnli", "snli", "snli"),
                 coverage=None):
    items = pd.DataFrame({"item": range(1, len(ok) + 1), "stratum": list(strata), "input": "h", "output": "a",
                          "ok": list(ok), "why": "", "code_hash": hash_})
    items.to_csv(folder / f"{name}.csv", index=False)
    meta = {"stand_in": name, "code_hash": hash_, "coverage": coverage or {"unit": "slots", "inputs": 40,
                                                                          "outputs": 4}}
    (folder / f"{name}.json").write_text(json.dumps(meta))


def test_precision_and_interval_by_hand():
    # 3 of 4 ok, Wilson 95 % (z² = 3.8415): denominator 1 + z²/4 = 1.96037, centre (0.75 + z²/8) / 1.96037
    # = 0.62753, half-width 1.96 * sqrt(0.75 * 0.25 / 4 + z²/64) / 1.96037 = 0.32689 -> (0.3006, 0.9544)
    table = judged.precision(pd.DataFrame({"stratum": ["a", "a", "b", "b"], "ok": [1, 1, 0, 1]}))
    top = table.iloc[0]
    assert (top["stratum"], top["n"], top["k"], top["precision"]) == ("all", 4, 3, 0.75)
    assert (top["ci_low"], top["ci_high"]) == pytest.approx((0.3006, 0.9544), abs=1e-4)
    assert table.set_index("stratum").loc["b", ["n", "k", "precision"]].tolist() == [2, 1, 0.5]
    # blank judgements are not counted
    blank = judged.precision(pd.DataFrame({"stratum": ["a", "a"], "ok": [1, float("nan")]}))
    assert blank.iloc[0][["n", "k"]].tolist() == [1, 1]
    assert math.isnan(judged.rate(0, 0)["precision"])


def test_coverage_by_hand():
    # 20 of 200, Wilson 95 %: denominator 1 + z²/200 = 1.01921, centre (0.1 + z²/400) / 1.01921 = 0.10754,
    # half-width 1.96 * sqrt(0.1 * 0.9 / 200 + z²/160000) / 1.01921 = 0.04187 -> (0.0657, 0.1494)
    c = judged.coverage({"coverage": {"inputs": 200, "outputs": 20, "unit": "slots"}})
    assert (c["coverage"], c["inputs"], c["outputs"], c["unit"]) == (0.1, 200, 20, "slots")
    assert (c["coverage_low"], c["coverage_high"]) == pytest.approx((0.0657, 0.1494), abs=1e-4)


def test_notice_only_when_the_code_changed(tmp_path):
    write_sample(tmp_path, hash_="aaa")
    table, note = judged.report("atoms", tmp_path, current="aaa")
    assert note == ""
    table, note = judged.report("atoms", tmp_path, current="bbb")
    assert "older than the current stand-in" in note and "python -m nli_lib.judged draw atoms" in note
    assert "aaa" in note and "bbb" in note
    row = table[(table["stratum"] == "all") & (table["judgement"] == "ok")].iloc[0]
    assert (row["n"], row["k"], row["coverage"], row["judged_code"]) == (4, 3, 0.1, "aaa")


def test_show_prints_the_notice(tmp_path, capsys, monkeypatch):
    write_sample(tmp_path, hash_="aaa")
    monkeypatch.setattr(judged, "code_hash", lambda spec: "bbb")
    judged.show("atoms", tmp_path)
    out = capsys.readouterr().out
    assert "3/4 judged ok = 0.750" in out and "coverage 4/40 slots" in out and "NOTE: judged against code older" in out
    assert "by dsnli 2/2 = 1.000" in out and "snli 1/2 = 0.500" in out  # the strata
    monkeypatch.setattr(judged, "code_hash", lambda spec: "aaa")
    judged.show("atoms", tmp_path)
    assert "NOTE" not in capsys.readouterr().out


def test_status_check_exits_1_when_stale(tmp_path, monkeypatch):
    for name, spec in judged.STAND_INS.items():
        write_sample(tmp_path, name=name, hash_="aaa")
        if "scene" in spec.judgements:
            pd.read_csv(tmp_path / f"{name}.csv").assign(scene=1).to_csv(tmp_path / f"{name}.csv", index=False)
    from nli_lib.judged.__main__ import main

    monkeypatch.setattr(judged, "code_hash", lambda spec: "aaa")
    assert main(["status", "--check"], tmp_path) == 0
    monkeypatch.setattr(judged, "code_hash", lambda spec: "bbb")
    assert main(["status"], tmp_path) == 0  # a report
    assert main(["status", "--check"], tmp_path) == 1


def test_copies_are_reported_apart(tmp_path):
    write_sample(tmp_path, name="ftc", coverage={"unit": "slots", "inputs": 40, "outputs": 4, "ok": 6,
                                                 "ok_copies": 2,
                                                 "per_pipeline": {"p": {"slots": 40, "ok": 6, "ok_copies": 2}}})
    text, _ = judged.lines("ftc", tmp_path, current="aaa")
    assert "coverage by p 4/40 (+2 copies)" in text
    assert "unchanged copies of the hypothesis marked ok: 2 of 6 ok slots" in text and "NOTE" not in text


def test_load_rejects_bad_files(tmp_path):
    write_sample(tmp_path, ok=(1, 2, 0, 1))
    with pytest.raises(ValueError, match="other than 1, 0 or blank"):
        judged.load("atoms", tmp_path)
    write_sample(tmp_path)
    frame = pd.read_csv(tmp_path / "atoms.csv", dtype=str)
    frame.loc[0, "code_hash"] = "zzz"
    frame.to_csv(tmp_path / "atoms.csv", index=False)
    with pytest.raises(ValueError, match="drawn from code"):
        judged.load("atoms", tmp_path)


def test_code_hash_follows_the_stand_ins_code_only(tmp_path):
    from nli_lib import codehash

    g = codehash.graph()
    spec = judged.STAND_INS["atoms"]
    before = judged.code_hash(spec, g)
    text = dict(g.text)
    try:
        g.text["nli_lib.atoms.grammar.realise"] = "changed"
        assert judged.code_hash(spec, g) != before  # a rule module of the stand-in
        g.text = dict(text)
        g.text["nli_lib.runguard"] = "changed"
        assert judged.code_hash(spec, g) == before  # the library around it
    finally:
        g.text = text


@pytest.mark.parametrize("name", sorted(judged.STAND_INS))
def test_committed_samples_are_judged_and_current(name):
    """Every committed sample loads, every item is judged, with a reason for each 0, and its coverage is recorded.
    Whether its code hash is the current one is not a CI failure: a change to a stand-in's code is legitimate
    before its new sample is judged, and the notebooks print the notice (`judged.show`); `python -m nli_lib.judged
    status --check` is the strict gate. Here it is reported as a warning."""
    sample = judged.load(name)
    assert sample.unjudged() == 0 and len(sample.items) >= 50
    zeros = sample.items[(sample.items[list(sample.spec.judgements)] == 0).any(axis=1)]
    assert (zeros["why"].str.len() > 0).all()
    assert judged.coverage(sample.meta)["inputs"] > 0
    note = judged.notice(sample)
    if note:
        import warnings

        warnings.warn(note, stacklevel=1)


def test_ftc_coverage_counts_copies_apart_from_rewrites():
    from nli_lib.ftc.report import coverage_line, coverage_table, precision_lines, status_table

    cf = pd.DataFrame({"pipeline": ["a", "a", "a", "b", "b"], "slot": ["E", "N[B]", "C", "N[B]", "C"],
                       "status": ["ok", "ok", "failed", "ok", "malformed"], "ok": [True, True, False, True, False],
                       "x_cf": ["A dog runs.", "A cat  sits .", None, "Two men.", "x"],
                       "hypothesis": ["A cat runs.", "a cat sits.", "h", "Two men talk.", "y"]})
    table = coverage_table(cf).set_index("pipeline")
    # a: 3 slots, 2 ok, one of them the hypothesis again (case and spacing aside); b: 2 slots, 1 ok rewrite
    assert table.loc["a", ["slots", "ok", "ok rewrites", "ok copies"]].tolist() == [3, 2, 1, 1]
    assert table.loc["all", ["ok rewrites", "ok copies", "coverage", "copies of ok"]].tolist() == [2, 1, 0.4, 0.3333]
    assert "2 of 5 slots (40.0%)" in coverage_line(cf) and "1 more ok slot copies it" in coverage_line(cf)
    status = status_table(cf).set_index("pipeline")
    assert status.loc["a", ["ok", "ok rewrites", "ok copies"]].tolist() == [2, 1, 1]
    gold = pd.DataFrame([{"by": "all", "group": "all", "n_items": 5, "n_stale": 0, "n_ok": 4, "n_ok_correct": 3,
                          "precision": 0.75, "precision_lo": 0.3, "precision_hi": 0.95, "recall": 1.0, "n_correct": 3},
                         {"by": "kind", "group": "copy", "n_ok": 2, "n_ok_correct": 2},
                         {"by": "kind", "group": "rewrite", "n_ok": 2, "n_ok_correct": 1}])
    lines = precision_lines(gold)
    assert "ok rewrites: 1/2 judged correct" in lines and "unchanged copies of the hypothesis" in lines


def test_draw_writes_blank_judgements_and_the_code_hash(tmp_path, monkeypatch):
    monkeypatch.setattr(judged, "code_hash", lambda spec: "abc")

    def make(n, seed):
        return pd.DataFrame({"item": [1, 2], "stratum": "s", "input": "h", "output": ["a", "b"]}), \
            {"coverage": {"inputs": 4, "outputs": 2}}

    judged.draw("atoms", 2, 5, make, tmp_path)
    sample = judged.load("atoms", tmp_path)
    assert sample.unjudged() == 2 and set(sample.items["code_hash"]) == {"abc"}
    assert (sample.meta["code_hash"], sample.meta["seed"], sample.meta["n"]) == ("abc", 5, 2)
