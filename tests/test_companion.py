"""Scorecard (notebook 90) and example explorer (notebook 91) on small hand-made inputs.

Other robustness checks live beside the code they test: corrupt cache entries (test_core), checksum
mismatches and interrupted downloads (test_loaders), malformed rows (test_loaders), unparsable LLM answers
and API failures that keep finished results (test_llm), interrupted runs and training (test_robustness).
"""
from __future__ import annotations

import math
import re

import nbformat
import pandas as pd
import pytest

from nli_lib import explorer, scorecard
from nli_lib.config import REPO_ROOT
from nli_lib.outputs import Outputs, list_records, load_records, scorecard_entries


@pytest.fixture
def out(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    return Outputs("50_demo", params={"quick": False}, tier="offline", seed=0)


def test_score_validates_key_and_rewrites_entries(out):
    out.score("taxinli-table-2", "total datapoints", 10070, "data", basis="data")
    out.score("taxinli-table-2", "total datapoints", 10071, "data", basis="data")  # same key + model: replaced
    out.score("atoms-table-5", "delta-SNLI test examples", 1837, "data", basis="data")
    assert scorecard_entries().empty  # staged until the run succeeds
    out.publish()
    entries = scorecard_entries()
    assert len(entries) == 2 and entries.ours.tolist() == [10071.0, 1837.0]
    with pytest.raises(KeyError, match="no paper value"):
        out.score("taxinli-table-2", "no such quantity", 1, "data", basis="data")


def test_score_needs_a_valid_basis_and_labels_model_free_entries_tier_data(out):
    with pytest.raises(TypeError):
        out.score("taxinli-table-2", "total datapoints", 10071, "data")  # no default basis
    for bad in ("offline", "", None, "Data"):
        with pytest.raises(ValueError, match="basis"):
            out.score("taxinli-table-2", "total datapoints", 10071, "data", basis=bad)
    with pytest.raises(ValueError, match="paper profile"):  # an offline run never has the paper's model
        out.score("taxinli-table-3", "BERT matched", 84.0, "minilm-esnli", basis="paper-model")
    assert out.scored == []
    data = out.score("taxinli-table-2", "total datapoints", 10071, "data", basis="data")
    released = out.score("taxinli-table-3", "NB matched", 51.0, "NB predictions", basis="released")
    stand = out.score("taxinli-table-3", "BERT matched", 84.0, "minilm-esnli", basis="stand-in")
    assert (data["tier"], released["tier"], stand["tier"]) == ("data", "data", "offline")
    out.publish()
    assert scorecard_entries().basis.tolist() == ["data", "released", "stand-in"]
    with out.data_only():  # a model-free block holds no model's number
        with pytest.raises(ValueError, match="model-free"):
            out.score("taxinli-table-3", "BERT matched", 84.0, "minilm-esnli", basis="stand-in")
    paper = Outputs("50_demo", params={"paper_systems": {"roberta-large-mnli": "RoBERTa"}}, tier="paper")
    assert paper.score("taxinli-table-3", "RoBERTa matched", 90.0, "roberta-large-mnli",
                       basis="paper-model")["tier"] == "paper"


def test_scorecard_entries_without_a_basis_are_refused(out, tmp_path):
    out.score("taxinli-table-2", "total datapoints", 10071, "data", basis="data")
    old = tmp_path / "tables" / "99_old" / "scorecard.jsonl"
    old.parent.mkdir(parents=True)
    old.write_text('{"ref": "taxinli-table-2", "quantity": "total datapoints", "paper": 10071, "ours": 10071, '
                   '"model": "data", "tier": "offline", "notebook": "99_old", "quick": false, "note": ""}\n')
    with pytest.raises(ValueError, match="rerun notebook 99_old"):
        scorecard_entries()


def test_score_frame_takes_one_basis_or_one_per_row(out):
    frame = pd.DataFrame([
        {"quantity": "total datapoints", "ours": 10071, "model": "data", "note": "n"},
        {"quantity": "datapoints overlapping MNLI train", "ours": float("nan"), "model": "data", "note": ""},
        {"quantity": "not printed", "ours": 3.0, "model": "data", "note": "", "paper": float("nan")},
    ]).assign(paper=[10071.0, 2343.0, float("nan")])
    assert out.score_frame(frame, ref="taxinli-table-2", basis="data", note="all rows") == 1
    assert out.scored[0]["note"] == "n; all rows" and out.scored[0]["basis"] == "data"
    rows = pd.DataFrame({"ref": ["taxinli-table-3", "taxinli-table-3"], "quantity": ["NB matched", "BERT matched"],
                         "ours": [51.0, 80.0], "model": ["NB predictions", "minilm-esnli"],
                         "basis": ["released", "stand-in"]})
    assert out.score_frame(rows, basis=rows["basis"]) == 2
    assert [e["basis"] for e in out.scored[1:]] == ["released", "stand-in"]
    with pytest.raises(ValueError, match="2 rows"):
        out.score_frame(rows, basis=["released"])
    with pytest.raises(TypeError):
        out.score_frame(rows)  # no default basis
    with pytest.raises(ValueError, match="no ref"):
        out.score_frame(rows.drop(columns="ref"), basis="released")


def test_model_basis_only_from_the_profiles_declaration(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    declared = {"roberta-large-mnli": ["RoBERTa", "RoBERTa-large"]}
    paper = Outputs("50_demo", params={"paper_systems": declared}, tier="paper")
    assert paper.model_basis({"RoBERTa": "roberta-large-mnli (NLI fine-tuned)"}) == "paper-model"
    assert paper.model_basis({"RoBERTa": "FacebookAI/roberta-large-mnli"}) == "stand-in"  # lookalike id
    assert paper.model_basis({"BERT": "roberta-large-mnli"}) == "stand-in"  # declared as another system
    assert paper.model_basis({"RoBERTa-large": "roberta-large-mnli", "GPT-4o": "rule-fuser"}) == "stand-in"
    assert Outputs("50_demo", params={}, tier="paper").model_basis({"RoBERTa": "roberta-large-mnli"}) == "stand-in"


def test_data_only_block_writes_tier_data_sidecars(out, tmp_path):
    import json

    with out.data_only():
        out.table(pd.DataFrame({"n": [1]}), "counts", ref="taxinli-table-2")
    out.table(pd.DataFrame({"acc": [0.5]}), "accuracy", ref="taxinli-table-3", models=["m"])
    out.publish()
    side = lambda name: json.loads((tmp_path / "tables" / "50_demo" / f"{name}.json").read_text())["tier"]  # noqa: E731
    assert (side("counts"), side("accuracy"), out.tier) == ("data", "offline", "offline")


def _entry(quantity, ours, basis, model="m", ref="p-table-1"):
    return {"ref": ref, "quantity": quantity, "ours": ours, "model": model, "basis": basis,
            "tier": "data" if basis in ("data", "released") else "offline", "notebook": "x", "quick": False,
            "note": ""}


PAPER = pd.DataFrame([
    {"paper": "p", "ref": "p-table-1", "quantity": "a", "value": 100.0, "setting": "", "reason": ""},
    {"paper": "p", "ref": "p-table-1", "quantity": "b", "value": 0.50, "setting": "", "reason": ""},
    {"paper": "p", "ref": "p-table-1", "quantity": "c", "value": 80.0, "setting": "", "reason": "needs GPT-4o"},
    {"paper": "p", "ref": "p-table-1", "quantity": "e", "value": 50.0, "setting": "", "reason": ""},
    {"paper": "q", "ref": "q-table-1", "quantity": "d", "value": 10.0, "setting": "", "reason": ""},
    {"paper": "q", "ref": "q-table-1", "quantity": "f", "value": 20.0, "setting": "", "reason": ""},
])
OURS = pd.DataFrame([
    _entry("a", 100.9, "data", "data"),            # 0.9 % off, like for like -> match
    _entry("b", 0.46, "released", "NB"),          # 8 % off -> close
    _entry("b", 0.30, "paper-model", "bert"),      # 40 % off -> differs
    _entry("e", 50.2, "stand-in", "minilm"),       # 0.4 % off, but another model -> stand-in, never match
    _entry("f", 20.1, "stand-in", "minilm", ref="q-table-1"),
    _entry("f", 30.0, "data", "data", ref="q-table-1"),  # 50 % off, like for like -> differs
])


def test_scorecard_statuses_follow_the_basis():
    card = scorecard.build_scorecard(PAPER, OURS)
    assert card.status.tolist() == ["match", "close", "differs", "not computed: needs GPT-4o", "stand-in",
                                    "not computed: not computed by the companion", "stand-in", "differs"]
    assert math.isclose(card.difference[0], 0.9) and math.isclose(card.rel_difference[2], -0.4)
    assert math.isclose(card.difference[4], 0.2)  # a stand-in still shows its difference
    assert card.basis.tolist()[:3] == ["data", "released", "paper-model"]
    with pytest.raises(ValueError, match="basis"):
        scorecard.build_scorecard(PAPER, OURS.assign(basis="offline"))
    why = scorecard.reasons(card)
    assert why.reason.tolist() == ["needs GPT-4o", "not computed by the companion"]


def test_summary_counts_each_value_once_by_like_for_like_then_stand_in():
    summ = scorecard.summary(scorecard.build_scorecard(PAPER, OURS)).set_index("paper")
    cols = ["paper_values", "like_for_like", "match", "close", "differs", "stand_in", "not_computed"]
    assert [c for c in summ.columns if c != "not_graded"] == cols and summ["not_graded"].eq(0).all()
    # p: a match, b close (its differs entry does not count again), e stand-in only, c not computed
    assert summ.loc["p", cols].tolist() == [4, 2, 1, 1, 0, 1, 1]
    # q: f has a stand-in within 1 % and a like-for-like entry 50 % off: like for like wins, it differs
    assert summ.loc["q", cols].tolist() == [2, 1, 0, 0, 1, 0, 1]
    assert summ.loc["all", cols].tolist() == [6, 3, 1, 1, 1, 1, 2]


def test_reproduction_block_counts_by_status_and_lists_only_like_for_like_matches():
    section = scorecard.reproduction_section(scorecard.build_scorecard(PAPER, OURS))
    table = [line for line in section.splitlines() if line.startswith("| p ") or line.startswith("| all ")]
    assert [[c.strip() for c in row.strip("|").split("|")] for row in table] == [
        ["p", "4", "2", "1", "1", "0", "0", "1", "1"], ["all", "6", "3", "1", "1", "1", "0", "1", "2"]]
    assert "| paper   |   paper values |   like for like |" in section and "stand-in" in section
    within = section.split("Within 1 %")[1].split("Not reproduced")[0]
    assert "a = 100.9" in within and "e = 50.2" not in within and "f = 20.1" not in within
    assert "data 2, released 1, paper-model 1, stand-in 2" in section


UNGRADED_PAPER = pd.DataFrame([
    {"paper": "p", "ref": "p-table-1", "quantity": q, "value": v, "setting": "", "reason": ""}
    for q, v in (("sample size", 1000.0), ("share", 36.0), ("overlap acc", 84.7), ("stars", 2.0), ("wF", 0.66))])
UNGRADED_OURS = pd.DataFrame([
    _entry("sample size", 1000.0, "sample", "none (data)"),   # our own parameter: equal, still not a match
    _entry("share", 35.8, "sample", "none (data)"),           # our sample's share
    _entry("overlap acc", 84.7, "subset", "BERT release"),    # the paper's predictions on other rows
    _entry("overlap acc", 70.0, "stand-in", "minilm"),
    _entry("stars", 2.0, "unstated", "BERT release, lengths in characters"),
    _entry("stars", 1.0, "unstated", "BERT release, lengths in words"),
    {**_entry("wF", float("nan"), "stand-in", "minilm"), "note": "withheld: minilm failed its sanity gate"},
])


def test_our_samples_subsets_and_unstated_settings_are_shown_but_never_graded():
    card = scorecard.build_scorecard(UNGRADED_PAPER, UNGRADED_OURS)
    assert card.status.tolist() == ["not graded", "not graded", "not graded", "stand-in", "not graded",
                                    "not graded", "not computed: withheld: minilm failed its sanity gate"]
    assert card.ours.tolist()[:3] == [1000.0, 35.8, 84.7]  # shown beside the paper's value
    summ = scorecard.summary(card).set_index("paper")
    assert summ.loc["p", ["paper_values", "like_for_like", "match", "not_graded", "stand_in",
                          "not_computed"]].tolist() == [5, 0, 0, 4, 0, 1]
    assert scorecard.reasons(card).reason.tolist() == ["withheld: minilm failed its sanity gate"]
    section = scorecard.reproduction_section(card)
    assert "- none" in section.split("Within 1 %")[1].split("Not reproduced")[0]
    assert "sample 2, subset 1, unstated 2" in section
    assert "4 more are shown but not graded" in scorecard.summary_section(card)


def test_block_replaces_only_between_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{scorecard.START}\nold\n{scorecard.END}\noutro\n")
    section = f"{scorecard.START}\nnew table\n{scorecard.END}"
    assert scorecard.update_block(readme, section) is True
    assert readme.read_text() == f"intro\n{section}\noutro\n"
    assert scorecard.update_block(readme, section) is False
    readme.write_text("no markers")
    with pytest.raises(ValueError, match="markers"):
        scorecard.update_block(readme, section)


def test_notebook_90_writes_the_reasons_to_reproduction_and_a_summary_with_the_gallery_to_readme(tmp_path):
    """REPRODUCTION.md gets the full block (every reason not reproduced); README.md only the counts, a link and
    the gallery, whose figures come from the index as read back from CSV (an empty models cell is no 'nan')."""
    card = scorecard.build_scorecard(PAPER, OURS)
    (tmp_path / "README.md").write_text(f"# front\n{scorecard.SUMMARY_START}\n{scorecard.SUMMARY_END}\n"
                                        f"{scorecard.GALLERY_START}\n{scorecard.GALLERY_END}\n")
    (tmp_path / "REPRODUCTION.md").write_text(f"# reproduction\n{scorecard.START}\n{scorecard.END}\n")
    pd.DataFrame([{"ref": "companion-fig-90", "kind": "figure", "path": "figures/90_scorecard/scorecard.png",
                   "notebook": "90_scorecard", "tier": "offline", "models": "", "caption": "values by status"},
                  {"ref": "p-fig-1", "kind": "figure", "path": "figures/10_p/f.png", "notebook": "10_p",
                   "tier": "offline", "models": "minilm;tfidf", "caption": "a figure"}]).to_csv(tmp_path / "i.csv",
                                                                                                  index=False)
    index = pd.read_csv(tmp_path / "i.csv")
    changed = scorecard.write_markdown(card, index, ["companion-fig-90", "p-fig-1"], root=tmp_path)
    assert changed == ["README.md", "REPRODUCTION.md"]
    readme, full = (tmp_path / "README.md").read_text(), (tmp_path / "REPRODUCTION.md").read_text()
    assert "needs GPT-4o" in full and "Not reproduced, and why" in full and "needs GPT-4o" not in readme
    assert "| all " in readme and "[REPRODUCTION.md](REPRODUCTION.md)" in readme
    assert "models: none" in readme and "nan" not in readme and "models: minilm;tfidf" in readme
    assert "![p-fig-1](figures/10_p/f.png)" in readme
    assert scorecard.write_markdown(card, index, ["companion-fig-90", "p-fig-1"], root=tmp_path) == []
    with pytest.raises(KeyError, match="ftc-fig-1"):  # a gallery ref no figure is registered under
        scorecard.write_markdown(card, index, ["companion-fig-90", "ftc-fig-1"], root=tmp_path)


def test_gallery_of_notebook_90_asks_only_for_registered_figures():
    """Every ref in notebook 90's GALLERY has a figure in the committed tables/index.csv (no 'ftc-fig-1' that
    nothing registers)."""
    import ast

    import nbformat

    from nli_lib.config import REPO_ROOT

    cells = nbformat.read(REPO_ROOT / "notebooks" / "90_scorecard.ipynb", as_version=4).cells
    code = next(c.source for c in cells if c.cell_type == "code" and "GALLERY = [" in c.source)
    gallery = next(ast.literal_eval(node.value) for node in ast.parse(code).body
                   if isinstance(node, ast.Assign) and node.targets[0].id == "GALLERY")
    index = pd.read_csv(REPO_ROOT / "tables" / "index.csv")
    assert any(ref.startswith("ftc-") for ref in gallery)  # every paper has a figure in the gallery
    assert set(gallery) <= set(index[index.kind == "figure"].ref), set(gallery) - set(index.ref)


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
    controls = box.children[0]
    dropdown = controls.children[0]
    # the filters wrap onto more rows instead of widening the page (a horizontal scrollbar hid them)
    assert controls.layout.flex_flow == "row wrap" and box.children[2].layout.overflow == "auto"
    status, pick, detail = box.children[1], box.children[3], box.children[4]
    assert "12 of 12" in status.value and "page 1/3" in status.value
    dropdown.value = "n"
    assert "4 of 12" in status.value and list(pick.options) == ["1", "4", "7", "10"]
    pick.value = "4"
    assert "p4" in detail.value and "f2" in detail.value


SCORE_CALL = re.compile(r"\b(?:nb\.out|out|self)\.score(?:_frame)?\(")


def _calls(source: str) -> list[str]:
    """The argument text of every `out.score(...)` / `out.score_frame(...)` call in `source`."""
    found = []
    for m in SCORE_CALL.finditer(source):
        depth, i = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(source[i], 0)
            i += 1
        found.append(source[m.end():i - 1])
    return found


def test_every_scoring_call_states_its_basis():
    """Static check over every notebook and library module: each score / score_frame call passes basis=, and
    the library scores in one place only (Outputs.score_frame; no per-paper scoring helper)."""
    calls = {}
    for path in sorted((REPO_ROOT / "notebooks").glob("*.ipynb")):
        source = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
        calls[path.stem] = _calls(source)
    library = {str(p.relative_to(REPO_ROOT)): _calls(p.read_text()) for p in (REPO_ROOT / "nli_lib").rglob("*.py")}
    # outputs.py holds the one helper; scorecard.py only names it in its docstring
    assert {where for where, found in library.items() if found} == {"nli_lib/outputs.py", "nli_lib/scorecard.py"}
    calls.update(library)
    missing = [(where, args[:80]) for where, found in calls.items() for args in found if "basis=" not in args]
    assert not missing, f"score calls without basis=: {missing}"
    scoring = {where for where, found in calls.items() if found and where[:2].isdigit()}
    assert scoring == {"00_data_and_statistics", "10_atoms_decomposition", "11_atoms_snli_consistency",
                       "12_atoms_defeasible", "13_atoms_inferential", "20_phrasis_baselines", "21_phrasis_coherence",
                       "30_ftc_counterfactuals", "31_ftc_metric", "32_ftc_sensitivity", "40_factnli_augment",
                       "41_factnli_evaluation", "50_taxinli_dataset", "51_taxinli_error_analysis",
                       "52_taxinli_factor_analysis", "54_taxinli_representations"}
    assert _calls('nb.out.score("r", "q", f(1), "m", note=g(x))') == ['"r", "q", f(1), "m", note=g(x)']
