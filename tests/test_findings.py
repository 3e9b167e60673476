"""The sentences result sections end with (nli_lib.findings), the models a saved output names, and the rule that
keeps our results out of the notebooks' typed prose."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from nli_lib.findings import against_paper, finding

ROOT = Path(__file__).resolve().parents[1]


def entry(**kw):
    return {"ref": "taxinli-table-3", "quantity": "RoBERTa matched", "ours": 0.7312, "model": "minilm-taxinli",
            "tier": "offline", "basis": "stand-in", "note": "", **kw}


def test_a_stand_in_is_never_graded_however_close():
    text = finding(entry(ours=0.8401, n=9815), paper=0.84, setting="RoBERTa-large")
    assert text == ("RoBERTa matched: ours 0.840 (n = 9,815, minilm-taxinli, offline tier; not graded: a stand-in, "
                    "not the paper's model) against the paper's 0.84 (Table 3, RoBERTa-large).")


def test_like_for_like_numbers_are_graded_with_their_agreement():
    assert "graded: match (from the paper's data)" in finding(entry(ours=1837.0, basis="data", tier="data"), 1837.0)
    assert "ours 1,837 (data (release files); graded" in finding(entry(ours=1837.0, basis="data", tier="data",
                                                                       model="data (release files)"), 1837.0)
    close = finding(entry(ours=48.04, basis="released", tier="data"), 51.46, "NB")
    assert close == ("RoBERTa matched: ours 48.04 (minilm-taxinli, from the data; graded: close (from the paper's "
                     "released predictions)) against the paper's 51.46 (Table 3, NB).")
    assert "graded: differs" in finding(entry(ours=20.0, basis="data"), 51.46)


@pytest.mark.parametrize("basis, why", [("sample", "our own sample or parameter, not the paper's"),
                                        ("subset", "another population than the paper's"),
                                        ("unstated", "a setting the paper does not state")])
def test_not_graded_bases_say_why(basis, why):
    assert f"not graded: {why})" in finding(entry(ours=51.46, basis=basis), 51.46)


def test_a_missing_paper_value_is_said_not_invented():
    text = against_paper([entry(ref="atoms-table-5", quantity="made up", basis="data")],
                         lookup=lambda ref, q: (_ for _ in ()).throw(KeyError(q)))
    assert "the paper prints no value for it in Table 5." in text and "against the paper's" not in text
    assert "1 of our numbers stands beside the paper's: 1 no paper value (not graded)" in text


def test_sections_select_quantities_count_all_and_show_a_few():
    es = [entry(quantity=f"q{i}", ours=float(i), basis="data") for i in range(6)]
    text = against_paper(es, n={"q1": 12, "q5": 3}, limit=2, lookup=lambda ref, q: (float(q[1:]), "BERT"))
    assert text.startswith("**Against the paper** (Table 3): 6 of our numbers stand beside the paper's: 6 match")
    assert "q0: ours 0 (minilm" in text and "q1: ours 1 (n = 12," in text and "q2:" not in text
    assert text.endswith("… and 4 more in the table above and the scorecard (notebook 90).")
    picked = against_paper(es, quantities=["q5", "q0"], n=7, lookup=lambda ref, q: (1.0, ""))
    assert picked.index("q5:") < picked.index("q0:") and "n = 7," in picked and "2 of our numbers" in picked
    assert "nothing scored" in against_paper([], lookup=lambda ref, q: (1.0, ""))
    mixed = [entry(quantity=f"q{i}", model="NB" if i < 3 else "ours", basis="data") for i in range(4)]
    shown = against_paper(mixed, limit=2, lookup=lambda ref, q: (1.0, ""))
    assert "q0: ours" in shown and "q3: ours" in shown and "q1:" not in shown  # one line per model first


def test_a_withheld_number_is_counted_not_graded():
    text = against_paper([entry(ours=float("nan"), basis="data", note="failed its sanity gate")],
                         lookup=lambda ref, q: (0.84, ""))
    assert "1 not computed (not graded)" in text and "ours no value" in text and "_failed its sanity gate_" in text


def test_a_quick_run_says_so():
    assert "(minilm-taxinli, offline tier, quick run; not graded" in finding(entry(quick=True), 0.84)


def test_an_entry_note_is_kept_beside_its_sentence():
    assert finding(entry(note="on the 3815 overlap rows"), 0.84).endswith(" _on the 3815 overlap rows_")


# --- the session: models derived, the sentence from the run's own scorecard entries ---------------------------

@pytest.fixture
def session(tmp_path, monkeypatch):
    from nli_lib.notebook import NotebookSession
    from nli_lib.outputs import Outputs
    from nli_lib.profile import load_profile

    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    stem, params = "51_taxinli_error_analysis", {"tier": "offline", "seed": 0, "quick": True}
    return NotebookSession(name=stem, profile=load_profile(text="tier: offline\nseed: 0\n"), params=params,
                           out=Outputs(stem, params=params, tier="offline"))


def sidecar(root: Path, name: str) -> dict:
    return json.loads((root / f"tables/51_taxinli_error_analysis/{name}.json").read_text())


def test_saved_tables_list_the_models_they_used(session, tmp_path, monkeypatch):
    """Without `models=`, a sidecar lists the table's own model column and the models nli_model handed out since
    the last save; an explicit list wins; a model-free output names none (as before: sidecars unchanged)."""
    from nli_lib.context import RunContext

    monkeypatch.setattr(RunContext, "nli_model", lambda self, spec=None: type("M", (), {"name": spec or "minilm"}))
    session.nli_model()
    table = pd.DataFrame({"system": ["a", "b"], "model": ["tfidf-logreg", "data"], "n": [1, 2]})
    session.save(table, "table-3-accuracy")
    session.save(table, "stand-ins", main="a")  # nothing loaded since the last save: only the table's column
    session.nli_model("bert")
    session.save(table, "fig-5-accuracy-by-category", models=["explicit"])
    session.nli_model("roberta")
    with session.out.data_only():
        session.save(table, "fig-5-accuracy-by-category-common-rows")
    session.finish()
    assert sidecar(tmp_path, "table-3-accuracy")["models"] == ["tfidf-logreg", "minilm"]
    assert sidecar(tmp_path, "stand-ins")["models"] == ["tfidf-logreg"]
    assert sidecar(tmp_path, "fig-5-accuracy-by-category")["models"] == ["explicit"]
    assert sidecar(tmp_path, "fig-5-accuracy-by-category-common-rows")["models"] == []


def test_a_declared_line_up_is_what_saved_outputs_name(session, tmp_path):
    """`nb.uses` once replaces `models=` on every save; an explicit list still wins, also for a model-free
    output, which otherwise names none."""
    session.uses(["minilm", type("M", (), {"name": "tfidf-logreg"})()])
    table = pd.DataFrame({"system": ["a"], "model": ["other"]})
    session.save(table, "table-3-accuracy")
    session.save(table, "stand-ins", models=["explicit"], main="a")
    with session.out.data_only():
        session.save(table, "fig-5-accuracy-by-category")  # model-free: its model column names no model
        session.save(table, "fig-5-accuracy-by-category-common-rows", models=["shipped predictions"])
    session.finish()
    assert sidecar(tmp_path, "table-3-accuracy")["models"] == ["minilm", "tfidf-logreg"]
    assert sidecar(tmp_path, "stand-ins")["models"] == ["explicit"]
    assert sidecar(tmp_path, "fig-5-accuracy-by-category")["models"] == []
    assert sidecar(tmp_path, "fig-5-accuracy-by-category-common-rows")["models"] == ["shipped predictions"]


def test_the_session_writes_its_sentence_from_what_it_scored(session):
    session.out.score("taxinli-table-3", "NB matched", 51.4548, "naive Bayes (release)", basis="subset",
                      note="the 3815 overlap rows")
    md = session.against_paper("taxinli-table-3", n=3815).data
    assert "NB matched: ours 51.45 (n = 3,815, naive Bayes (release), offline tier, quick run; " \
           "not graded: another population than the paper's) against the paper's 51.46 (Table 3" in md
    assert "the paper prints 8 numbers here; this run set none of ours" in session.against_paper("taxinli-table-3",
                                                                                                  models=["x"]).data
    assert "prints no number here" in session.against_paper("atoms-sec-5.2").data
    assert "the paper prints 4 numbers here, none computed by the companion: needs the paper's human NLI labels" \
        in session.against_paper("ftc-table-9").data  # every value carries its reason in the paper values


def test_without_a_ref_the_sentence_covers_what_the_section_recorded(session):
    """No typed ref: the entries scored since the previous sentence, under whatever refs they are filed."""
    session.out.score("taxinli-table-3", "NB matched", 51.45, "nb", basis="subset")
    session.out.score("taxinli-table-2", "total datapoints", 10071, "data", basis="data")
    first = session.against_paper().data
    assert "(Table 3, Table 2): 2 of our numbers" in first
    session.out.score("taxinli-table-3", "NB mismatched", 51.7, "nb", basis="subset")
    second = session.against_paper().data
    assert "NB mismatched" in second and "NB matched" not in second and "1 of our numbers" in second
    assert "No number of ours recorded here" in session.against_paper().data
    assert "NB matched" in session.against_paper("taxinli-table-3").data  # a ref: everything under it


# --- no typed results in the paper notebooks' prose -----------------------------------------------------------

PAPER_NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").glob("[1-5][0-9]_*.ipynb"))
NUMBER = re.compile(r"(?<![\w.§\-/])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|\d+)(\s?%)?(?![\w\-/]|[.,]\d)")
CITES_PAPER = re.compile(r"\b(paper|papers|authors|[Tt]hey report|prints?)\b")


def typed_numbers(markdown: str):
    """(number, sentence, text before, text after) for each number in prose that the rule checks: decimals, percentages and counts of
    1,000 or more. Code spans (settings, names) and § / Table / Figure / Appendix / Prompt numbers are skipped."""
    prose = re.sub(r"`[^`]*`", "``", markdown)
    for sentence in re.split(r"(?<=[.;!?])\s+|\n\s*[*-]\s+|\n#+\s", prose):
        for m in NUMBER.finditer(sentence):
            before = sentence[:m.start()].rstrip()
            if re.search(r"(§|\b(Tables?|Figures?|Appendix|Prompt|Eq\.?|Section)\s*(\d+[–-])?)$", before):
                continue
            digits = m.group(1).replace(",", "")
            if re.fullmatch(r"(19|20)\d\d", digits) and not m.group(2):
                continue  # a year
            if m.group(2) or "." in digits or int(digits) >= 1000:
                yield m.group(0), sentence, before, sentence[m.end():]


def ours_of(stem: str) -> set[float]:
    """Every number in the notebook's committed outputs (tables and scorecard)."""
    found: set[float] = set()
    for path in (ROOT / "tables" / stem).glob("*.csv"):
        frame = pd.read_csv(path)
        found |= {float(v) for v in frame.select_dtypes("number").to_numpy().ravel() if pd.notna(v)}
    card = ROOT / "tables" / stem / "scorecard.jsonl"
    if card.is_file():
        found |= {float(json.loads(line)["ours"]) for line in card.read_text().splitlines()}
    return found


def paper_prints(stem: str) -> set[float]:
    from nli_lib.paper_values import values

    paper = stem.split("_")[1]
    return {v.value for v in values() if v.paper == paper}


def printed_as(token: str, values: set[float]) -> bool:
    """Whether one of `values` reads as `token` at the token's precision (a percentage also as a fraction)."""
    text = token.replace(",", "").replace("%", "").strip()
    decimals = len(text.split(".")[1]) if "." in text else 0
    x = float(text)
    scales = (1, 100) if "%" in token else (1,)
    return any(round(v * s, decimals) == x for v in values for s in scales)


def significant(token: str) -> int:
    """Significant digits of a typed number: '0.778' 3, '7,727' 4, '1,000' 1, '0.90' 1, '45 %' 2."""
    return len(re.sub(r"\D", "", token).strip("0"))


SETTING = re.compile(r"([=<>≤≥~]\s*|\b(above|below|at least|at most|chance)\s)$")
LEVEL = re.compile(r"^\s*(CI|interval|credible|confidence)\b")


def typed_results(path: Path) -> list[str]:
    """The rule the paper notebooks' prose keeps, over one notebook (see the test below)."""
    ours, paper, typed = ours_of(path.stem), paper_prints(path.stem), []
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "markdown"]
    for cell in cells:
        for token, sentence, before, after in typed_numbers("".join(cell["source"])):
            digits = significant(token)
            if not (digits >= 3 or (digits == 2 and ("%" in token or printed_as(token, ours)))):
                continue
            if SETTING.search(before) or LEVEL.search(after):
                continue
            if CITES_PAPER.search(sentence) and printed_as(token, paper):
                continue
            typed.append(f"{path.stem}: {token!r} in {' '.join(sentence.split())[:140]!r}")
    return typed


def test_paper_notebooks_type_none_of_our_results():
    """Our numbers reach the prose only through generated sentences (`nb.against_paper`), so they can never
    disagree with the tables. The rule, over every markdown cell of notebooks 10-54: a number with three or more
    significant digits (0.778, 7,727, 60.4 %), a percentage with two (18 %), or any two-digit number that reads as
    one of the notebook's committed outputs, is a typed result and fails, unless it is
      * a paper citation: the paper prints it (its paper-values CSV, at the printed precision, a percentage also
        as a fraction) and its sentence names the paper ("the paper reports 0.96", "Table 5 prints 3,263");
      * a setting: in a code span (`β2 = 0.999`), after = < > ≤ ≥ ~ / above / below / at least / at most, or a
        level before CI / interval / credible;
      * a reference: after §, Table, Figure, Appendix, Prompt, Section."""
    typed = [line for path in PAPER_NOTEBOOKS for line in typed_results(path)]
    assert not typed, "typed results in notebook prose (generate them with nb.against_paper):\n" + "\n".join(typed)


def test_the_prose_rule_catches_a_typed_result_and_lets_a_citation_pass():
    sentences = dict((t, s) for t, s, _, _ in typed_numbers("It falls from 0.778 to 0.732 on `lr = 0.125` (§3.2, Table "
                                                      "15). The paper reports 86.7% on 1,837 pairs."))
    assert list(sentences) == ["0.778", "0.732", "86.7%", "1,837"]
    assert printed_as("86.7%", {0.867}) and printed_as("1,837", {1837.0}) and not printed_as("0.778", {0.767})
    assert CITES_PAPER.search(sentences["86.7%"]) and not CITES_PAPER.search(sentences["0.778"])
