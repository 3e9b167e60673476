"""Characterisation tests of the library's rule code: each rule function, run over real inputs, must give exactly
the outputs it gave when its fixture was written (before the function was made table-driven).

A fixture (`tests/characterisation/NAME.json`) maps a case key (a dataset id and how the input was built from it)
to "input digest:output digest". Inputs are rebuilt here from the data mirror's rows by deterministic code, so no
dataset text is committed: a different input digest means the case generator (or the data) changed, not the rule;
such cases are left out, up to `MAX_MOVED` of them. Rewrite a fixture (only on a commit whose rule code is the reference) with
`NLI_WRITE_CHARACTERISATION=NAME[,NAME…] pytest tests/test_characterisation.py -k TEST`.

>>> digest(["ok", ""])
'a9496acf2e'
"""
from __future__ import annotations

import hashlib
import json
import os
import random
from pathlib import Path
from typing import Callable, Iterable

import pandas as pd
import pytest

FIXTURES = Path(__file__).parent / "characterisation"
WRITE_ENV = "NLI_WRITE_CHARACTERISATION"
# Share of cases whose input may differ from the fixture's and be left out (some inputs come from library code
# that others change, e.g. the FTC regex pipeline's counterfactuals); every other case must give the same output.
MAX_MOVED = 0.1


def digest(value) -> str:
    """A short, stable digest of a JSON-able value (tuples read as lists)."""
    return hashlib.sha256(json.dumps(value, ensure_ascii=False).encode()).hexdigest()[:10]


def characterise(name: str, cases: Iterable[tuple[str, list]], run: Callable[..., object]) -> dict[str, object]:
    """Compare `run(*inputs)` on every (key, inputs) of `cases` with fixture `name` (or write it, see module doc);
    returns the outputs by key, for coverage checks."""
    outputs, seen = {}, {}
    for key, inputs in cases:
        assert key not in seen, f"duplicate case key {key}"
        out = run(*inputs)
        outputs[key] = out
        seen[key] = f"{digest(inputs)}:{digest(out)}"
    path = FIXTURES / f"{name}.json"
    if name in os.environ.get(WRITE_ENV, "").split(","):
        FIXTURES.mkdir(exist_ok=True)
        path.write_text(json.dumps({"function": name, "cases": seen}, indent=0, sort_keys=True) + "\n")
        return outputs
    fixture = json.loads(path.read_text())["cases"]
    assert seen.keys() == fixture.keys(), "the case generator changed: rewrite the fixture from the reference code"
    moved = [k for k in fixture if seen[k].split(":")[0] != fixture[k].split(":")[0]]
    assert len(moved) <= MAX_MOVED * len(fixture), \
        f"{len(moved)} inputs differ from the fixture's (the generator or the data changed), e.g. {moved[:3]}"
    changed = [k for k in fixture if k not in moved and seen[k] != fixture[k]]
    assert not changed, f"{len(changed)} of {len(fixture)} outputs changed, e.g. {changed[:5]}"
    return outputs


def _esnli(split: str, n: int):
    from nli_lib.data.loaders import load_esnli

    return load_esnli(split).head(n)


def _splice(rng: random.Random, words: list[str], donor: list[str]) -> str:
    """`words` with a run of 1-3 of them replaced by a run of 1-4 `donor` words (what a careless rewriter does)."""
    i1 = rng.randrange(len(words))
    i2 = min(len(words), i1 + rng.randint(1, 3))
    j1 = rng.randrange(len(donor))
    return " ".join(words[:i1] + donor[j1 : j1 + rng.randint(1, 4)] + words[i2:])


def counterfactual_cases(n: int = 450) -> Iterable[tuple[str, list]]:
    """(key, [hypothesis, x_cf, slot, tagger, source, premise]) from e-SNLI test rows: the regex pipeline's
    counterfactuals, the offline FSP stand-in's, and random splices of explanation words into the hypothesis
    (with and without source/premise), plus degenerate inputs."""
    from nli_lib.ftc.fewshot import align_transform, rule_extract
    from nli_lib.ftc.logic import counterfactual_targets
    from nli_lib.ftc.pipeline import regex_transform
    from nli_lib.ftc.templates import extract_regex

    yield "empty/none", ["A man .", None, "E", None, None, None]
    yield "empty/blank", ["A man .", "  ", "C", None, None, None]
    yield "empty/punct", ["A man .", "''", "C", None, None, None]
    for r in _esnli("test", n).itertuples():
        h, z, pid = r.hypothesis, r.explanation_1, r.pair_id
        slots = [t.slot for t in counterfactual_targets(r.label)]
        ex = extract_regex(z, r.label)
        if ex.ok:
            for k, rw in enumerate(regex_transform(h, ex.A, ex.B, r.label)):
                if rw.x_cf:
                    yield f"{pid}/regex/{k}", [h, rw.x_cf, rw.slot, None, z, r.premise]
        spans = rule_extract(z, r.label)
        if spans:
            out = align_transform(h, spans[0], spans[1], r.label)
            for k, (slot, x) in enumerate(zip(slots, [out] if isinstance(out, str) else out)):
                yield f"{pid}/align/{k}", [h, x, slot, None, z, r.premise]
        rng = random.Random(pid)
        for k, donor in enumerate((z, r.explanation_2, r.premise)):
            if not h.split() or not str(donor).split():
                continue
            x = _splice(rng, h.split(), str(donor).split())
            slot = rng.choice(("E", "C", "N[A]", "N[B]"))
            source, premise = (z, r.premise) if k < 2 else (None, None)
            yield f"{pid}/splice/{k}", [h, x, slot, None, source, premise]


@pytest.mark.mirror
def test_check_counterfactual_characterised():
    from nli_lib.ftc.validity import CHECKS, check_counterfactual

    outputs = characterise("check_counterfactual", counterfactual_cases(),
                           lambda *a: list(check_counterfactual(*a).__dict__.values()))
    fired = {part.split(":")[0] for _, reason in outputs.values() for part in reason.split("; ") if part}
    assert set(CHECKS) <= fired, f"no case fires {sorted(set(CHECKS) - fired)}"
    assert sum(status == "ok" for status, _ in outputs.values()) > 100


# e-SNLI test rows past the first few hundred with a sentence that takes a rare tagger repair (a caption's verb read
# as a plural noun after a participle phrase: "A man wearing a hat walks ..."), when WordNet answers
RARE_REPAIR_ROWS = ("esnli-test-002450", "esnli-test-003008", "esnli-test-004209", "esnli-test-004748",
                    "esnli-test-006583")


def atoms_sentences(n: int = 750, extra: tuple[str, ...] = ()) -> Iterable[tuple[str, str]]:
    """(key, sentence): the premise, the hypothesis and the first explanation of the first `n` e-SNLI test rows,
    then of the rows `extra` names."""
    rows = _esnli("test", 10_000)
    for r in pd.concat([rows.head(n), rows[rows["pair_id"].isin(extra)]]).itertuples():
        yield f"{r.pair_id}/premise", r.premise
        yield f"{r.pair_id}/hypothesis", r.hypothesis
        yield f"{r.pair_id}/explanation_1", r.explanation_1


@pytest.fixture(scope="module", params=["closed", pytest.param("wordnet", marks=pytest.mark.slow)])
def rule_decomposers(request):
    """The rule decomposer in both styles (`.by_style`) with the mirror's tagger, and which fixtures and how many
    e-SNLI rows go with it: with the closed word lists only (fast), and with Open English WordNet, whose answers
    (categories, verb lemmas) decide more of the rules (its parse takes a minute or two on a cold cache)."""
    from types import SimpleNamespace

    from nli_lib.atoms.decompose import RuleDecomposer

    closed = request.param == "closed"
    by_style = {style: RuleDecomposer(style, wordnet=None if closed else "load") for style in ("incremental", "cleft")}
    return SimpleNamespace(by_style=by_style, suffix="" if closed else "_wordnet", rows=750 if closed else 300,
                           extra=() if closed else RARE_REPAIR_ROWS, qud_rows=250 if closed else 100)


@pytest.mark.mirror
def test_atoms_tagger_characterised(rule_decomposers):
    """The atoms tagger (`grammar.tagging.Tagger`: the perceptron's tags and their repairs)."""
    dec, rd = rule_decomposers.by_style["incremental"], rule_decomposers
    outputs = characterise(f"atoms_tags{rd.suffix}", ((k, [s]) for k, s in atoms_sentences(rd.rows, rd.extra)),
                           lambda s: [[t.word, t.tag] for t in dec.tag(s)])
    assert sum(any(tag == "VBZ" for _, tag in v) for v in outputs.values()) > 0.2 * len(outputs)


@pytest.mark.mirror
def test_chunker_characterised(rule_decomposers):
    """`Chunker.clause` (and so `_complements`): the subject, the predicate with its complements, and the kind."""
    import copy

    dec, rd = rule_decomposers.by_style["incremental"], rule_decomposers
    outputs = characterise(f"chunker_clause{rd.suffix}", ((k, [s]) for k, s in atoms_sentences(rd.rows, rd.extra)),
                           lambda s: repr(dec.chunker.clause(copy.deepcopy(dec.tag(s)))))
    assert sum("'clause')" in v for v in outputs.values()) > 0.2 * len(outputs)


@pytest.mark.mirror
@pytest.mark.parametrize("style", ["incremental", "cleft"])
def test_realiser_characterised(rule_decomposers, style):
    """The atoms of each sentence (`Realiser`, `_predicate` included), with their kinds."""
    dec, rd = rule_decomposers.by_style[style], rule_decomposers
    outputs = characterise(f"atoms_{style}{rd.suffix}", ((k, [s]) for k, s in atoms_sentences(rd.rows, rd.extra)),
                           lambda s: [[a.text, a.kind] for a in dec.decompose_records(s)])
    assert sum(len(v) > 2 for v in outputs.values()) > 0.2 * len(outputs)


def qud_atoms(by_style, n: int = 250) -> Iterable[tuple[str, list]]:
    """(key, [atom]): the paper's printed atoms, and the atoms the rule decomposers (`by_style`) make of the first
    `n` e-SNLI test rows' sentences, each once (keyed by its digest)."""
    from nli_lib.atoms.prompts import QUD_EXAMPLES

    atoms = [r["atom"] for r in QUD_EXAMPLES]
    for _, sentence in atoms_sentences(n):
        for dec in by_style.values():
            atoms += [a.text for a in dec.decompose_records(sentence)]
    for atom in dict.fromkeys(atoms):
        yield f"atom/{digest(atom)}", [atom]


@pytest.mark.mirror
def test_qud_question_characterised(rule_decomposers):
    """`RuleQUDGenerator.question`: the QUD and the pattern of each atom."""
    from nli_lib.atoms.quds import RuleQUDGenerator

    rd = rule_decomposers
    rules = RuleQUDGenerator(rd.by_style["incremental"].category)
    outputs = characterise(f"qud_question{rd.suffix}", qud_atoms(rd.by_style, rd.qud_rows),
                           lambda a: list(rules.question(a)))
    patterns = {pattern for _, pattern in outputs.values()}
    assert {"existence", "cleft", "purpose", "identity", "location", "activity", "unmatched"} <= patterns



# Glosses the docstring and tests of `definition_sentences` show (quantified parts, plural titles, verb phrases)
DEFINITION_EXAMPLES = [
    ("herb", "a plant lacking a permanent woody stem; many are flowering garden plants; some having medicinal "
             "properties; some are pests", False),
    ("herb", "a plant lacking a woody stem; others are garden plants", False),
    ("pants", "(usually in the plural) a garment extending from the waist to the ankle; occurs in many cuts", False),
    ("people", "(plural) any group of human beings; this group has shaped history; lives in cities", False),
    ("bird", "warm-blooded egg-laying vertebrates characterized by feathers; flies south in winter", False),
    ("dog", "a member of the genus Canis; occurs in many breeds; has shaped crown", False),
    ("water", "binary compound that occurs at room temperature as a clear liquid", False),
    ("air", "a mixture of gases required for breathing", True),
    ("bat", "(baseball) a turn trying to get a hit", False),
    ("violin", "bowed stringed instrument; this instrument has four strings", False),
]


def definition_cases(wn, countable, n: int = 200) -> Iterable[tuple[str, list]]:
    """(key, [title, gloss, with countability?, body_part, mass]) for every noun sense of the query nouns of the
    first `n` e-SNLI test premises and for each sense's direct hypernyms (titled by their first lemma), as
    `WordNetPages.page` would ask `definition_sentences`: once with WordNet's countability and the sense's own
    body-part and mass evidence, once with neither."""
    from types import SimpleNamespace

    from nli_lib.factnli.retrieval import WordNetPages
    from nli_lib.factnli.text import query_nouns

    for k, (title, gloss, mass) in enumerate(DEFINITION_EXAMPLES):
        yield f"example/{k}/wordnet", [title, gloss, True, False, mass]
        yield f"example/{k}/plain", [title, gloss, False, False, mass]
    pages, seen = SimpleNamespace(wn=wn, _countable=countable), set()  # what is_body_part/is_mass read
    for r in _esnli("test", n).itertuples():
        for term in dict.fromkeys(query_nouns(r.premise, wn) + query_nouns(r.hypothesis, wn)):
            for sid in wn.synsets(term, "n"):
                for s, title in [(sid, term), *((h, wn.lemmas(h)[0]) for h in wn.hypernyms(sid))]:
                    if (s, title) in seen:
                        continue
                    seen.add((s, title))
                    gloss = wn.definition(s)
                    body, mass = WordNetPages.is_body_part(pages, s), WordNetPages.is_mass(pages, s, title)
                    yield f"{s}/{digest(title)}/wordnet", [title, gloss, True, body, mass]
                    yield f"{s}/{digest(title)}/plain", [title, gloss, False, False, False]


@pytest.mark.mirror
@pytest.mark.slow  # parses the real Open English WordNet on a cold cache
def test_definition_sentences_characterised():
    """`definition_sentences` on the glosses `WordNetPages` would turn into pages for e-SNLI premises."""
    from nli_lib.data.wordnet import load_wordnet
    from nli_lib.factnli.retrieval import Countability, definition_sentences

    wn = load_wordnet()
    countable = Countability(wn)
    outputs = characterise("definition_sentences", definition_cases(wn, countable),
                           lambda title, gloss, counted, body, mass:
                           definition_sentences(title, gloss, countable if counted else None, body, mass))
    assert sum(bool(v) for v in outputs.values()) > 0.5 * len(outputs)


def checked_atoms(by_style, n: int) -> Iterable[tuple[str, list]]:
    """(key, [atom, sentence or None]): each atom the rule decomposers (`by_style`) make of the first `n` e-SNLI test
    rows' sentences, with its sentence, and each sentence alone as an atom (keyed by digest)."""
    cases = {}
    for _, sentence in atoms_sentences(n):
        cases[f"alone/{digest(sentence)}"] = [sentence, None]
        for dec in by_style.values():
            for a in dec.decompose_records(sentence):
                cases[f"atom/{digest([a.text, sentence])}"] = [a.text, sentence]
    yield from cases.items()


@pytest.mark.mirror
def test_atom_checker_characterised(rule_decomposers):
    """`AtomChecker.check` (`_grammar` and the source rules): the status and reason of each atom."""
    from nli_lib.atoms.grammar.wellformed import AtomChecker, default_checker

    rd = rule_decomposers
    checker = default_checker() if rd.suffix else AtomChecker(rd.by_style["incremental"])
    outputs = characterise(f"atom_check{rd.suffix}", checked_atoms(rd.by_style, rd.qud_rows),
                           lambda atom, sentence: list(checker.check(atom, sentence).__dict__.values()))
    statuses = {status for status, _ in outputs.values()}
    assert {"ok", "malformed"} <= statuses and sum(s == "malformed" for s, _ in outputs.values()) > 50
