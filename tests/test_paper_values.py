"""Each paper value is filed where the paper prints it: the number (as printed: 1,837 · 0.82 · 7.7k · 14–20)
occurs in the lines of the table, figure or section its `ref` names (the transcription check).

`SPANS` gives, per ref, the line ranges of the paper's text (../shared/papers/*.txt, 1-based, inclusive) that
hold it: a table or figure with its caption (its label, e.g. `Table 3:`, must lie in its first or last range),
a section from its heading to the next, less the tables and figures set in it. A value whose number is not in
its ref's lines fails, naming the refs whose lines do hold it; a ref without a span fails too, so a value filed
under a new table or section comes with the lines that hold it. Skipped where the papers are absent (a failure
under CI=true).
"""
from __future__ import annotations

import re

import pytest

from nli_lib.paper_values import unprinted, values

from kit import paper_text

SPANS: dict[str, list[tuple[int, int]]] = {
    "atoms-table-2": [(120, 131)], "atoms-table-3": [(172, 183)], "atoms-table-4": [(261, 271)],
    "atoms-table-5": [(362, 374)], "atoms-table-6": [(376, 384)], "atoms-fig-7": [(527, 527)],
    "atoms-sec-3.2": [(78, 89), (97, 101)], "atoms-sec-5.1": [(158, 171), (184, 190)],
    "atoms-sec-6": [(215, 219), (221, 260), (272, 282)], "atoms-sec-A.1": [(394, 407), (430, 432)],
    "atoms-sec-D": [(494, 497), (507, 508), (510, 518)],
    "factnli-table-1": [(236, 241)], "factnli-table-2": [(316, 327)], "factnli-table-3": [(393, 397)],
    "factnli-table-4": [(400, 408)], "factnli-table-5": [(418, 422)], "factnli-table-6": [(438, 445)],
    "factnli-table-7": [(834, 842)], "factnli-table-8": [(907, 913)], "factnli-table-9": [(923, 930)],
    "factnli-sec-4.3": [(304, 315), (331, 337)],
    "ftc-table-4": [(606, 621)], "ftc-table-5": [(718, 734)], "ftc-table-6": [(838, 849)],
    "ftc-table-9": [(1313, 1319)], "ftc-table-10": [(1329, 1340)], "ftc-table-11": [(1383, 1407)],
    "ftc-table-12": [(1411, 1418)], "ftc-sec-3.2": [(580, 605), (622, 672)],
    "ftc-sec-3.3": [(673, 715), (735, 799)],
    "phrasis-table-1": [(53, 63)], "phrasis-table-2": [(103, 117)], "phrasis-table-3": [(155, 179)],
    "phrasis-table-4": [(197, 221)], "phrasis-table-5": [(233, 257)], "phrasis-table-6": [(265, 289)],
    "phrasis-table-7": [(299, 323)], "phrasis-sec-3": [(81, 96)], "phrasis-sec-4": [(137, 148)],
    "taxinli-table-2": [(444, 463)], "taxinli-table-3": [(537, 561)], "taxinli-fig-3": [(479, 481)],
    "taxinli-fig-6": [(587, 595)], "taxinli-fig-7": [(623, 650)], "taxinli-fig-9": [(833, 838)],
    "taxinli-sec-3.1.1": [(402, 424), (426, 434)], "taxinli-sec-3.2": [(435, 443), (464, 478), (482, 508)],
    "taxinli-sec-4.1": [(528, 536), (562, 573)], "taxinli-sec-5": [(609, 618), (651, 702)],
}

NUMBER = re.compile(r"(?<![\w.])[-−–]?\d[\d,]*(?:\.\d+)?(?:[kK](?![a-zA-Z]))?")
STARS = re.compile(r"^LR stars (\S+)$")


def printed_numbers(text: str) -> set[float]:
    """Every number printed in `text`, as a value: thousands commas dropped, a 'k' suffix multiplied out, the
    end of a range ('14–20', '5–8×') read without its dash.

    >>> sorted(printed_numbers("1,837 pairs; 7.7k examples; premises 14–20; κ = 0.82 (−0.2)"))
    [-0.2, 0.2, 0.82, 14.0, 20.0, 1837.0, 7700.0]
    """
    out = set()
    for m in NUMBER.finditer(text):
        s = m.group().replace(",", "")
        scale = 1000.0 if s[-1] in "kK" else 1.0
        s = s.rstrip("kK")
        dash = s[0] in "-−–"
        magnitude = float(s.lstrip("-−–")) * scale
        out.add(magnitude)
        if dash and m.group()[0] != "–":
            out.add(-magnitude)
    return out


def stars(text: str, term: str) -> int:
    """How many stars follow `term` in a figure's list of significant coefficients (0: not listed).

    >>> stars("Significant LR coefficients: syntactic**, negation***, Length2**; where p", "negation")
    3
    >>> stars("Significant LR coefficients: syntactic**, negation***", "lexical")
    0
    """
    listed = text.split("Significant LR coefficients:", 1)[-1].split("where p")[0]
    found = re.search(rf"(?<![\w-]){re.escape(term)}(\**)", listed)
    return len(found.group(1)) if found else 0


def lines_of(paper: str, ref: str) -> str:
    lines = paper_text(paper).splitlines()
    return "\n".join(line for a, b in SPANS[ref] for line in lines[a - 1:b])


LAYER = re.compile(r"^(?P<system>BERT|RoBERTa) (?P<target>.+) layer$")  # 'BERT syntactic layer': Fig. 7's labels
CELL = re.compile(r"^(?P<row>[^|(]+) \| (?P<column>[\w-]+)$")  # 'DeBERTa v3 B | Positives-I': a table's row and column


def holds(paper: str, ref: str, quantity: str, value: float) -> bool:
    """Whether the lines of `ref` print `value`: for `LR stars <term>`, that many stars after the term; for a
    figure's `<system> <target> layer`, in the sub-caption of that target and system; for a table cell
    `<row> | <column>`, on the line of that row (a quantity naming a row the table lacks fails)."""
    text = lines_of(paper, ref)
    star, cell, layer = STARS.match(quantity), CELL.match(quantity), LAYER.match(quantity)
    if star:
        return stars(text, star.group(1)) == value
    if layer and "-fig-" in ref:  # a sub-caption: '(c) Syntactic coloured at BERTBASE layer 11'
        found = re.search(rf"{re.escape(layer.group('target'))} coloured at\s+{layer.group('system')}\w*\s+layer "
                          rf"{value:g}\b", text, flags=re.I)
        return found is not None
    if cell and "-table-" in ref:
        text = "\n".join(line for line in text.splitlines() if line.startswith(cell.group("row") + "\t"))
    return any(abs(n - value) <= 1e-9 for n in printed_numbers(text))


def _label(ref: str) -> str | None:
    kind, _, number = ref.split("-", 1)[1].partition("-")
    return {"table": f"Table {number}:", "fig": f"Figure {number}:"}.get(kind)


@pytest.mark.parametrize("ref", sorted(SPANS))
def test_each_span_holds_its_table_figure_or_section(ref):
    """A table's or figure's lines hold its label and no other's; a section's first line is its heading."""
    paper = ref.split("-")[0]
    text = lines_of(paper, ref)
    labels = set(re.findall(r"(?:Table|Figure) \d+:", text))
    if _label(ref) is None:  # a section: its number heads the first range, and no table or figure is in it
        number = ref.split("-sec-")[1]
        first = paper_text(paper).splitlines()[SPANS[ref][0][0] - 1:SPANS[ref][0][0] + 2]
        assert re.search(rf"(^|\s|#){re.escape(number)}\.?(\s|$)", " ".join(first)), f"{ref} starts at {first}"
        assert not labels, f"{ref}: its lines hold {labels}"
    else:
        assert labels == {_label(ref)}, f"{ref}: its lines hold {labels or 'no label'}"


def test_every_paper_value_is_printed_where_its_ref_says():
    wrong, unspanned = [], set()
    for v in values():
        if v.ref not in SPANS:
            unspanned.add(v.ref)
            continue
        if not holds(v.paper, v.ref, v.quantity, v.value):
            elsewhere = [r for r in SPANS if r.startswith(f"{v.paper}-") and holds(v.paper, r, v.quantity, v.value)]
            wrong.append(f"{v.ref} · {v.quantity} = {v.value:g} (printed under: {elsewhere or 'none'})")
    assert not (wrong or unspanned), (f"refs without lines in SPANS: {sorted(unspanned)}; {len(wrong)} values not "
                                      f"printed where their ref says:\n" + "\n".join(wrong))


def test_the_check_fails_a_value_filed_under_the_wrong_table():
    assert holds("atoms", "atoms-sec-3.2", "validity agreement Cohen kappa", 0.82)
    assert not holds("atoms", "atoms-table-5", "validity agreement Cohen kappa", 0.82)
    assert holds("taxinli", "taxinli-fig-6", "LR stars negation", 3)
    assert not holds("taxinli", "taxinli-fig-9", "LR stars syntactic", 2)
    assert not holds("factnli", "factnli-table-2", "Premise words L=3 (low end)", 101)
    assert holds("taxinli", "taxinli-fig-7", "RoBERTa knowledge layer", 21)
    assert not holds("taxinli", "taxinli-fig-7", "RoBERTa syntactic layer", 21)  # §5's text, not a sub-caption
    assert holds("taxinli", "taxinli-sec-5", "RoBERTa syntactic layer", 21)
    assert holds("phrasis", "phrasis-sec-4", "prior feature-based SVM best accuracy | Positives", 52)
    assert not holds("phrasis", "phrasis-table-3", "prior feature-based SVM best accuracy | Positives", 0.52)
    assert holds("phrasis", "phrasis-table-4", "Pythia 160 | Positives-H", 0.34)
    assert not holds("phrasis", "phrasis-table-3", "Pythia 160 | Positives-H", 0.34)  # 0.34 is another row's


# --------------------------------------------------------------------------------------------------------------
# Figures whose numbers the papers do not print
# --------------------------------------------------------------------------------------------------------------

def test_figures_that_print_no_number_have_no_paper_value_and_the_rest_only_their_printed_ones():
    notes = unprinted()
    assert {"atoms-fig-6", "factnli-fig-4", "phrasis-fig-2", "phrasis-fig-3", "taxinli-fig-5", "taxinli-fig-8"} <= set(
        notes)
    filed = {v.ref for v in values()}
    for ref, note in notes.items():
        paper, number = ref.split("-")[0], ref.split("-fig-")[1]
        assert re.search(rf"Figure {number}:", paper_text(paper)), f"{ref}: no such figure in the paper"
        if note.startswith("prints no number"):
            assert ref not in filed, f"{ref} is noted as printing no number but has paper values"
        else:
            assert note.startswith("prints only") and ref in filed, ref


def test_the_scorecard_lists_the_figures_without_printed_numbers():
    import pandas as pd

    from nli_lib import scorecard

    card = pd.DataFrame({"paper": ["p"], "ref": ["r"], "quantity": ["a"], "status": ["not computed: x"],
                         "quick": [False], "basis": [None], "model": [None], "ours": [float("nan")]})
    section = scorecard.reproduction_section(card)
    assert "Figures whose numbers the paper does not print" in section
    assert "- **atoms** · atoms-fig-6: prints no number: histograms of atoms" in section
    assert "- **taxinli** · taxinli-fig-9: prints only the caption's significance stars" in section


# --------------------------------------------------------------------------------------------------------------
# The refiled and new values reach the scorecard under their ref, with their basis
# --------------------------------------------------------------------------------------------------------------

def test_refiled_and_new_values_reach_the_scorecard_under_their_section(tmp_path, monkeypatch):
    """The library functions the notebooks score through (score_frame: a row's ref wins) file each value under
    the section that prints it; the scorecard grades the data counts and never grades a stand-in."""
    import pandas as pd

    from nli_lib import scorecard
    from nli_lib.factnli.evaluation import growth_by_level, growth_scores
    from nli_lib.outputs import Outputs, scorecard_entries
    from nli_lib.paper_values import beside_paper
    from nli_lib.phrasis.report import prior_svm_accuracy
    from nli_lib.taxinli.dataset import EVALUATED, table2
    from nli_lib.taxinli.taxonomy import COLUMNS

    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    out = Outputs("50_demo", params={"quick": False}, tier="offline", seed=0)
    taxi = pd.DataFrame({"label": ["neutral"] * 3, "genre": ["fiction"] * 3, "general_q2": [1] * 3,
                         "subject_q2": [1] * 3, "object_q2": [0] * 3, **{c: [0] * 3 for c in COLUMNS}})
    t2 = table2(taxi, pd.DataFrame({"taxinli_row": [0, 1]}))
    out.score_frame(t2.assign(model="data"), ref="taxinli-table-2", basis="data")
    svm = pd.DataFrame({"model": ["feature-svm"] * 2, "scenario": ["Positives-A", "All-A"], "accuracy": [0.5, 0.8],
                        "tier": ["offline"] * 2})
    out.score_frame(prior_svm_accuracy(svm)[1], basis="stand-in")
    growth = growth_by_level(pd.DataFrame({"level": [0, 3], "premise_words": [10, 90], "hyp_words": [5, 40],
                                           "n_premise_facts": [0, 9], "n_hyp_facts": [0, 4]}))
    pairs = pd.DataFrame({"premise": ["one two"], "hypothesis": ["a"]})
    g = growth_scores(growth, pairs, "gen", {})
    out.score_frame(g, basis=g["basis"])
    counts = beside_paper({"delta-SNLI test examples": 1837, "delta-SNLI P-H pairs with a valid atom": 12},
                          "atoms-table-5", "offline", filed={"delta-SNLI P-H pairs with a valid atom": "atoms-sec-6"})
    out.score_frame(counts.assign(model="gen"), ref="atoms-table-5", basis="stand-in")
    out.publish()
    card = scorecard.build_scorecard(ours=scorecard_entries()).dropna(subset=["ours"]).set_index("quantity")
    expect = {EVALUATED: ("taxinli-sec-4.1", "data", 2.0, "differs"),  # 2 of 3 hand-made rows vs the paper's 7.7k
              "prior feature-based SVM best accuracy | Positives": ("phrasis-sec-4", "stand-in", 50.0, "stand-in"),
              "prior feature-based SVM best accuracy | All": ("phrasis-sec-4", "stand-in", 80.0, "stand-in"),
              "Premise words L=0 (low end)": ("factnli-sec-4.3", "data", 2.0, "differs"),
              "Premise words L=3 (low end)": ("factnli-sec-4.3", "stand-in", 90.0, "stand-in"),
              "delta-SNLI P-H pairs with a valid atom": ("atoms-sec-6", "stand-in", 12.0, "stand-in"),
              "datapoints overlapping MNLI dev": ("taxinli-table-2", "data", 2.0, "differs")}
    for quantity, (ref, basis, ours, status) in expect.items():
        assert tuple(card.loc[quantity, ["ref", "basis", "ours", "status"]]) == (ref, basis, ours, status), quantity
    assert card.loc[EVALUATED, "paper_value"] == 7700


def test_every_declared_output_names_a_table_or_figure_outputs_accept():
    """Values may be filed under a section; a saved output still names a table or figure (Outputs refuses any other
    ref when the notebook saves it, so a catalog entry naming a section fails here, before a run)."""
    from nli_lib import outputs
    from nli_lib.catalog import companion
    from nli_lib.papers import declared, registry

    catalogs = [companion.OUTPUTS] + [declared(p, "OUTPUTS", {}) for p in registry()]
    refs = {s.ref for catalog in catalogs for specs in catalog.values() for s in specs}
    for ref in sorted(refs):
        outputs._check_ref(ref)
