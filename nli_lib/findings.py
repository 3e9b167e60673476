"""The sentence a result section ends with: what we found against what the paper found, written from the numbers.

A notebook never types a result into its prose. After a table or figure it calls `nb.against_paper(ref)`, which
takes the scorecard entries this run recorded for that paper table (`Outputs.score`: our value, model, tier,
basis, note), looks the paper's value up by (ref, quantity) in the paper values (`nli_lib.paper_values`) and says
how the two relate (`nli_lib.basis`): graded with its agreement (`scorecard.classify`), or not graded and why.

    >>> entry = {"ref": "taxinli-table-3", "quantity": "RoBERTa matched", "ours": 0.7312, "model": "minilm-taxinli",
    ...          "tier": "offline", "basis": "stand-in", "n": 9815}
    >>> import textwrap
    >>> print(textwrap.fill(finding(entry, paper=0.84, setting="RoBERTa-large"), 110))
    RoBERTa matched: ours 0.731 (n = 9,815, minilm-taxinli, offline tier; not graded: a stand-in, not the paper's
    model) against the paper's 0.84 (Table 3, RoBERTa-large).

The numbers are formatted, never rounded into agreement: ours keeps three significant decimals below 1, two
below 100, one above; the paper's is printed as stored.
"""
from __future__ import annotations

import math
from typing import Iterable, Mapping

from .basis import LIKE_FOR_LIKE, NOT_GRADED

WHY_NOT_GRADED = {  # basis -> why its number is shown beside the paper's and never graded
    "stand-in": "a stand-in, not the paper's model",
    "sample": "our own sample or parameter, not the paper's",
    "subset": "another population than the paper's",
    "unstated": "a setting the paper does not state",
}
GRADED_AS = {"data": "the paper's data", "released": "the paper's released predictions",
             "paper-model": "the paper's model"}
KINDS = {"table": "Table", "fig": "Figure", "sec": "§"}


def ref_label(ref: str) -> str:
    """'taxinli-table-3' -> 'Table 3', 'atoms-fig-5' -> 'Figure 5', 'atoms-sec-A.1' -> '§A.1'.

    >>> ref_label("taxinli-table-3"), ref_label("atoms-fig-5"), ref_label("atoms-sec-A.1")
    ('Table 3', 'Figure 5', '§A.1')
    """
    _, kind, number = ref.split("-", 2)
    label = KINDS.get(kind, kind)
    return f"{label}{number}" if label == "§" else f"{label} {number}"


def ours_text(value: float) -> str:
    """Our number as a reader reads it: an integer with thousands separators, else three significant decimals
    below 1, two below 100, one above.

    >>> ours_text(9815.0), ours_text(0.73124), ours_text(51.4547), ours_text(123.456), ours_text(float("nan"))
    ('9,815', '0.731', '51.45', '123.5', 'no value')
    """
    if not math.isfinite(value):
        return "no value"
    if float(value).is_integer():
        return f"{int(value):,}"
    digits = 3 if abs(value) < 1 else 2 if abs(value) < 100 else 1
    return f"{value:,.{digits}f}"


def paper_text(value: float) -> str:
    """The paper's value as stored (as printed).

    >>> paper_text(0.84), paper_text(1837.0), paper_text(51.46)
    ('0.84', '1,837', '51.46')
    """
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.10g}"


def basis_text(basis: str, paper: float | None, ours: float, bound: str = "") -> str:
    """'graded: <agreement> (<what ours is computed from>)' or 'not graded: <why>'.

    >>> basis_text("data", 1837.0, 1837.0), basis_text("subset", 51.46, 51.45)
    ("graded: match (from the paper's data)", "not graded: another population than the paper's")
    >>> basis_text("paper-model", None, 0.5)
    "not graded: the paper prints no value for it (from the paper's model)"
    """
    if not math.isfinite(ours):
        return "not computed"
    if basis in NOT_GRADED or basis not in LIKE_FOR_LIKE:
        return f"not graded: {WHY_NOT_GRADED.get(basis, 'a stand-in, not the paper model')}"
    if paper is None:
        return f"not graded: the paper prints no value for it (from {GRADED_AS[basis]})"
    from .scorecard import classify

    return f"graded: {classify(paper, ours, basis, bound)} (from {GRADED_AS[basis]})"


def finding(entry: Mapping, paper: float | None, setting: str = "") -> str:
    """One sentence for one scorecard entry (keys quantity, ours, model, tier, basis, ref; optional n, note) and
    the paper's value for it (None when the paper prints none)."""
    ours = float(entry["ours"])
    n = entry.get("n")
    who = [f"n = {int(n):,}"] if n is not None and not _missing(n) else []
    model = str(entry["model"])
    data = entry["tier"] == "data"
    who += [model] if data and model.startswith("data") else \
        [model, "from the data" if data else f"{entry['tier']} tier"]
    who += ["quick run"] if entry.get("quick") else []  # a quick run may use samples (the caption says which)
    grade = basis_text(entry["basis"], paper, ours, _bound(entry))
    head = f"{entry['quantity']}: ours {ours_text(ours)} ({', '.join(who)}; {grade})"
    where = ref_label(entry["ref"]) + (f", {setting}" if setting else "")
    tail = f" against the paper's {paper_text(paper)} ({where})." if paper is not None else \
        f"; the paper prints no value for it in {where}."
    note = entry.get("note")
    return head + tail + (f" _{note}_" if isinstance(note, str) and note else "")


def _bound(entry: Mapping) -> str:
    """How the paper prints the value of `entry` ('' exactly, 'lower' for "over X"; `paper_values.bound_of`)."""
    from .paper_values import bound_of

    return bound_of(entry.get("ref", ""), entry.get("quantity", ""))


def _missing(x) -> bool:
    return isinstance(x, float) and math.isnan(x)


def tally(entries: list[Mapping], papers: list[float | None]) -> str:
    """One sentence counting entries by how they relate to the paper's values.

    >>> print(tally([{"basis": "stand-in", "ours": 1.0}, {"basis": "data", "ours": 2.0},
    ...              {"basis": "data", "ours": 9.0}, {"basis": "data", "ours": 9.0}], [1.0, 2.0, 2.0, 2.0]))
    4 of our numbers stand beside the paper's: 1 match, 2 differ (graded); 1 stand-in (not graded).
    """
    counts: dict[str, int] = {}
    for e, p in zip(entries, papers):
        label = basis_text(e["basis"], p, float(e["ours"]), _bound(e)).split(" (")[0]
        key = label if label == "not computed" else label.removeprefix("graded: ") if label.startswith("graded") else \
            {"stand-in": "stand-in"}.get(e["basis"], e["basis"] if e["basis"] in WHY_NOT_GRADED else "no paper value")
        counts[key] = counts.get(key, 0) + 1
    plural = {"match": "match", "close": "close", "differs": "differ"}  # '2 differ', '1 differs'
    graded = [f"{counts[k]} {k if counts[k] == 1 else plural[k]}" for k in ("match", "close", "differs")
              if k in counts]
    rest = [f"{v} {k}" for k, v in counts.items() if k not in ("match", "close", "differs")]
    parts = [", ".join(graded) + " (graded)"] if graded else []
    parts += [", ".join(rest) + " (not graded)"] if rest else []
    verb = "numbers stands" if len(entries) == 1 else "numbers stand"
    return f"{len(entries)} of our {verb} beside the paper's: {'; '.join(parts)}."


def nothing_scored(refs: Iterable[str], printed: int, reasons: Iterable[str] = ()) -> str:
    """The sentence of a section with no number of ours beside the paper's: what the paper prints there, and
    why the companion does not compute it (the paper values' `reason` column), when it says.

    >>> nothing_scored(["atoms-sec-5.2"], 0)
    '**Against the paper** (§5.2): the paper prints no number here, so ours stand alone.'
    >>> nothing_scored(["ftc-table-9"], 4, ["needs the paper's human labels"]).split(": ", 1)[1]
    "the paper prints 4 numbers here, none computed by the companion: needs the paper's human labels."
    >>> nothing_scored(["taxinli-fig-7"], 11).split(";")[0]
    '**Against the paper** (Figure 7): the paper prints 11 numbers here'
    """
    where = ", ".join(ref_label(r) for r in refs)
    if not printed:
        return f"**Against the paper** ({where}): the paper prints no number here, so ours stand alone."
    numbers = f"{printed:,} number{'s' * (printed != 1)}"
    why = "; ".join(dict.fromkeys(r for r in reasons if r))
    if why:
        return f"**Against the paper** ({where}): the paper prints {numbers} here, none computed by the companion: " \
            f"{why}."
    return (f"**Against the paper** ({where}): the paper prints {numbers} here; this run set none of ours beside "
            f"them (the scorecard, notebook 90, says why).")


def against_paper(entries: Iterable[Mapping], quantities: Iterable[str] | None = None, n=None, limit: int = 4,
                  lookup=None) -> str:
    """Markdown: a tally of `entries` (scorecard entries of one run) and one sentence per entry, for the entries
    whose quantity is in `quantities` (all when None), at most `limit` sentences (the tally counts them all).

    `n` is the number of examples behind ours: one int for all, or {quantity: n}. `lookup(ref, quantity)` gives
    (paper value, setting) or raises KeyError (default: `nli_lib.paper_values`). No entry: a sentence saying so.
    """
    lookup = lookup or paper_lookup
    entries = list(entries)
    if quantities is not None:
        wanted = list(quantities)
        entries = sorted((e for e in entries if e["quantity"] in wanted), key=lambda e: wanted.index(e["quantity"]))
    else:  # the sentences shown cover every model first (the first entry of each), then the rest in order
        firsts = list({e["model"]: id(e) for e in reversed(entries)}.values())
        entries = sorted(entries, key=lambda e: id(e) not in firsts)
    if not entries:
        return "_No number of ours recorded for this against the paper's (nothing scored here in this run)._"
    papers, settings = [], []
    for e in entries:
        try:
            value, setting = lookup(e["ref"], e["quantity"])
        except KeyError:
            value, setting = None, ""
        papers.append(value)
        settings.append(setting)
    sizes = n if isinstance(n, Mapping) else {}
    lines = [f"- {finding({**e, 'n': sizes.get(e['quantity'], None if sizes else n)}, p, s)}"
             for e, p, s in list(zip(entries, papers, settings))[:limit]]
    more = f"\n- … and {len(entries) - limit} more in the table above and the scorecard (notebook 90)." \
        if len(entries) > limit else ""
    head = f"**Against the paper** ({', '.join(dict.fromkeys(ref_label(e['ref']) for e in entries))}): "
    return head + tally(entries, papers) + "\n\n" + "\n".join(lines) + more


def paper_lookup(ref: str, quantity: str) -> tuple[float, str]:
    """(value, setting) of the paper's number for (ref, quantity); KeyError when the paper prints none."""
    from .paper_values import lookup

    found = lookup(ref, quantity)
    if found is None:
        raise KeyError((ref, quantity))
    return found.value, found.setting

