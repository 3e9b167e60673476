"""Scorecard (notebook 90) and example explorer (notebook 91) on small hand-made inputs.

Other robustness checks live beside the code they test: corrupt cache entries (test_core), checksum
mismatches and interrupted downloads (test_loaders), malformed rows (test_loaders), unparsable LLM answers
and API failures that keep finished results (test_llm), interrupted runs and training (test_robustness).
"""
from __future__ import annotations

import math

import pandas as pd
import pytest

from nli_lib import explorer, scorecard
from nli_lib.outputs import Outputs, list_records, load_records, scorecard_entries


@pytest.fixture
def out(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    return Outputs("50_demo", params={"quick": False}, tier="offline", seed=0)


def test_score_validates_key_and_rewrites_entries(out):
    out.score("taxinli-table-2", "total datapoints", 10070, "data")
    out.score("taxinli-table-2", "total datapoints", 10071, "data")  # same key + model: replaced, not duplicated
    out.score("atoms-table-5", "delta-SNLI test examples", 1837, "data")
    assert scorecard_entries().empty  # staged until the run succeeds
    out.publish()
    entries = scorecard_entries()
    assert len(entries) == 2 and entries.ours.tolist() == [10071.0, 1837.0]
    with pytest.raises(KeyError, match="no paper value"):
        out.score("taxinli-table-2", "no such quantity", 1, "data")


def test_scorecard_statuses_and_summary():
    paper = pd.DataFrame([
        {"paper": "p", "ref": "p-table-1", "quantity": "a", "value": 100.0, "setting": "", "reason": ""},
        {"paper": "p", "ref": "p-table-1", "quantity": "b", "value": 0.50, "setting": "", "reason": ""},
        {"paper": "p", "ref": "p-table-1", "quantity": "c", "value": 80.0, "setting": "", "reason": "needs GPT-4o"},
        {"paper": "q", "ref": "q-table-1", "quantity": "d", "value": 10.0, "setting": "", "reason": ""},
    ])
    ours = pd.DataFrame([
        {"ref": "p-table-1", "quantity": "a", "ours": 100.9, "model": "data", "tier": "offline", "notebook": "x",
         "quick": False, "note": ""},   # 0.9 % off -> match
        {"ref": "p-table-1", "quantity": "b", "ours": 0.46, "model": "m1", "tier": "offline", "notebook": "x",
         "quick": False, "note": ""},   # 8 % off -> close
        {"ref": "p-table-1", "quantity": "b", "ours": 0.30, "model": "m2", "tier": "offline", "notebook": "x",
         "quick": False, "note": ""},   # 40 % off -> differs
    ])
    card = scorecard.build_scorecard(paper, ours)
    assert card.status.tolist() == ["match", "close", "differs", "not computed: needs GPT-4o",
                                    "not computed: not computed by the companion"]
    assert math.isclose(card.difference[0], 0.9) and math.isclose(card.rel_difference[2], -0.4)
    summ = scorecard.summary(card).set_index("paper")
    # value b counts once, by its best model (close); c and d are not computed
    assert summ.loc["p"].tolist() == [3, 2, 1, 1, 0, 1] and summ.loc["all"].tolist() == [4, 2, 1, 1, 0, 2]
    why = scorecard.reasons(card)
    assert why.reason.tolist() == ["needs GPT-4o", "not computed by the companion"]


def test_readme_section_replaces_only_between_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{scorecard.START}\nold\n{scorecard.END}\noutro\n")
    section = f"{scorecard.START}\nnew table\n{scorecard.END}"
    assert scorecard.update_readme(section, readme) is True
    assert readme.read_text() == f"intro\n{section}\noutro\n"
    assert scorecard.update_readme(section, readme) is False
    readme.write_text("no markers")
    with pytest.raises(ValueError, match="markers"):
        scorecard.update_readme(section, readme)


def test_records_roundtrip_and_sampling(out):
    df = pd.DataFrame({"label": ["e", "n", "c"] * 5, "atoms": [["a", "b"]] * 15, "text": [f"t{i}" for i in range(15)]})
    out.records(df, "demo", "taxinli-fig-5", filters=["label", "missing"], text=["text"], max_rows=10)
    out.publish()
    meta = list_records().iloc[0]
    assert (meta["name"], meta["filters"], meta["n_rows"]) == ("demo", ["label"], 10)
    back = load_records("50_demo", "demo")
    assert len(back) == 10 and back.atoms[0] == '["a", "b"]'
    with pytest.raises(FileNotFoundError, match="run notebook"):
        load_records("50_demo", "nope")


def test_filter_records_by_value_and_search():
    df = pd.DataFrame({"level": [1, 2, 2, 3], "label": ["e", "n", "e", "e"],
                       "premise": ["A dog runs", "A cat", "Dogs bark", "x"]})
    assert explorer.filter_records(df, {"level": "2"}).index.tolist() == [1, 2]
    assert explorer.filter_records(df, {"level": explorer.ALL, "label": "e"}, search="DOG",
                                   text=["premise"]).index.tolist() == [0, 2]
    assert explorer.filter_records(df, {}, search="zebra").empty


def test_browse_widget_filters_and_shows_a_record():
    pytest.importorskip("ipywidgets")
    df = pd.DataFrame({"label": ["e", "n", "c"] * 4, "facts": ['["f1", "f2"]'] * 12, "premise": [f"p{i}" for i in range(12)]})
    box = explorer.browse(df, filters=["label"], text=["premise"], page_size=5, title="demo")
    dropdown = box.children[0].children[0]
    status, pick, detail = box.children[2], box.children[4], box.children[5]
    assert "12 of 12" in status.value and "page 1/3" in status.value
    dropdown.value = "n"
    assert "4 of 12" in status.value and list(pick.options) == ["1", "4", "7", "10"]
    pick.value = "4"
    assert "p4" in detail.value and "f2" in detail.value
