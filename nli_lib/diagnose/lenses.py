"""What a lens returns (`LensResult`) and the helpers the lenses share; the lenses themselves are found by name in
`nli_lib.diagnose.registry`.

A lens applies one paper's method to one 3-way NLI classifier, through the same functions (and so the same
call cache) as that paper's notebook: a model the run already scored is not asked again. Every lens has `name`,
`paper` (its registry name, `nli_lib.papers`), `summary` (one line), `opt_in` (it trains: run only when asked)
and `run(ctx, candidate) -> LensResult`. A lens that cannot look at a model says why (`LensResult.status` "not
applicable" with its `reason`), never a number it did not compute.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

EXAMPLES = 3  # examples shown per weakest category
WEAKEST = 3  # weakest categories shown per lens


@dataclass
class LensResult:
    """What one lens found for one model (the report's unit; `as_dict` is its JSON)."""

    lens: str
    paper: str
    model: str
    status: str = "ok"  # ok | not applicable | failed (a model that collapsed: numbers withheld)
    reason: str = ""  # why not applicable / failed
    headlines: list = field(default_factory=list)  # {quantity, value, ci_low, ci_high, n, unit, note}
    beside: list = field(default_factory=list)  # the paper's systems: {system, quantity, value, ref, basis, note}
    weakest: list = field(default_factory=list)  # {category, value, ci_low, ci_high, n, examples: [...]}
    tables: dict = field(default_factory=dict)  # name -> DataFrame shown in the report (breakdowns)
    items: dict = field(default_factory=dict)  # quantity -> (kind 'binary'|'real', Series by item id): pairing
    notes: list = field(default_factory=list)  # what the numbers rest on (sample, generator, stand-ins)
    gate: str = ""  # the sanity gate's line (`nli_lib.models.gate`), where the lens judges one

    def headline(self, quantity: str) -> dict:
        return next(h for h in self.headlines if h["quantity"] == quantity)

    def as_dict(self) -> dict:
        return {"lens": self.lens, "paper": self.paper, "model": self.model, "status": self.status,
                "reason": self.reason, "headlines": self.headlines, "beside": self.beside, "weakest": self.weakest,
                "tables": {k: _records(v) for k, v in self.tables.items()}, "notes": self.notes, "gate": self.gate,
                "paired_quantities": {k: kind for k, (kind, _) in self.items.items()}}


class Lens:
    """The base of the lens objects: what the registry and the report read, and a fresh result for one model."""

    name = paper = summary = ""
    opt_in = False  # True: it trains, so it runs only when asked (--phrasis)

    def result(self, candidate) -> LensResult:
        return LensResult(lens=self.name, paper=self.paper, model=candidate.name)


def _records(frame: pd.DataFrame) -> list[dict]:
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


# ---------------------------------------------------------------------------------------------------------------
# Helpers the lenses share
# ---------------------------------------------------------------------------------------------------------------

def proportion(quantity: str, correct, note: str = "") -> dict:
    """A headline share (%) of a 0/1 series with its Wilson 95% interval and n.

    >>> proportion("accuracy", pd.Series([1, 1, 0, 1]))["value"]
    75.0
    """
    from ..evaluation import wilson_interval

    x = pd.Series(correct).dropna().astype(bool)
    k, n = int(x.sum()), len(x)
    lo, hi = wilson_interval(k, n) if n else (float("nan"), float("nan"))
    return {"quantity": quantity, "value": 100 * k / n if n else float("nan"), "ci_low": 100 * lo,
            "ci_high": 100 * hi, "n": n, "unit": "%", "interval": "Wilson 95%", "note": note}


def mean_of(quantity: str, values, note: str = "", unit: str = "", seed: int = 0) -> dict:
    """A headline mean with a percentile-bootstrap 95% interval over items (`paired.mean_interval`)."""
    from .paired import mean_interval

    r = mean_interval(pd.Series(values, dtype=float).to_numpy(), seed=seed)
    return {"quantity": quantity, "value": r["mean"], "ci_low": r["ci_low"], "ci_high": r["ci_high"], "n": r["n"],
            "unit": unit, "interval": "bootstrap 95%", "note": note}


def paper_beside(candidate, ref: str, suffixes: dict, note: str) -> list[dict]:
    """The paper's printed values under `ref` whose quantity ends with one of `suffixes` (paper suffix -> our
    headline quantity), one row per printed system. Basis: `paper-model` only where the profile declares our
    model to be that system (`as:`), else `stand-in`; in a diagnose every row is context, never a grade (our
    samples are not the paper's population)."""
    from ..paper_values import values

    rows = []
    for v in values():
        if v.ref != ref:
            continue
        for suffix, ours in suffixes.items():
            if v.quantity.endswith(suffix):
                system = v.quantity[: -len(suffix)].strip()
                declared = system in candidate.systems
                rows.append({"system": system, "quantity": ours, "value": v.value, "ref": ref,
                             "setting": v.setting, "basis": "paper-model" if declared else "stand-in",
                             "graded": False, "note": note if not v.reason else f"{note}; {v.reason}"})
    return rows


def weakest_categories(frame: pd.DataFrame, category: str, correct: str, columns, min_n: int = 5,
                       k: int = WEAKEST, seed: int = 0) -> list[dict]:
    """The `k` categories of `frame[category]` with the lowest accuracy (among those with at least `min_n`
    items), each with its Wilson interval and up to EXAMPLES wrong examples (`columns`), seeded.

    >>> f = pd.DataFrame({"c": list("aaaaabbbbb"), "ok": [1, 1, 1, 1, 0, 0, 0, 1, 0, 0], "x": range(10)})
    >>> [(w["category"], w["value"], len(w["examples"])) for w in weakest_categories(f, "c", "ok", ["x"], k=1)]
    [('b', 20.0, 3)]
    """
    out = []
    for cat, g in frame.groupby(category, sort=True):
        if len(g) < min_n:
            continue
        row = proportion(str(cat), g[correct])
        wrong = g[~g[correct].astype(bool)]
        examples = wrong.sample(n=min(EXAMPLES, len(wrong)), random_state=seed)[list(columns)] if len(wrong) else wrong
        out.append({"category": str(cat), "value": row["value"], "ci_low": row["ci_low"], "ci_high": row["ci_high"],
                    "n": row["n"], "examples": _records(examples)})
    return sorted(out, key=lambda r: (r["value"], r["category"]))[:k]


def apply_gate(out: LensResult, gold, pred, where: str) -> LensResult:
    """The sanity gate on the lens's gold labels and the model's predictions: a model that beats no
    majority-class guess or collapses onto one label is reported as failed, its numbers withheld (the reason
    says why). Items the model left unanswered count as wrong.

    >>> r = apply_gate(LensResult("l", "p", "m", headlines=[{"quantity": "accuracy"}]), list("aabc"), list("aaaa"),
    ...                "toy pairs")
    >>> r.status, r.headlines, r.reason.startswith("sanity gate FAILED")
    ('failed', [], True)
    """
    from ..models.gate import sanity_gate

    gate = sanity_gate(list(gold), [p if isinstance(p, str) else "(no answer)" for p in pred], model=out.model,
                       where=where)
    out.gate = gate.line()
    if not gate.passed:
        out.status, out.reason = "failed", gate.line()
        out.headlines, out.beside, out.weakest, out.items, out.tables = [], [], [], {}, {}
    return out


def not_applicable(lens: Lens, candidate, reason: str) -> LensResult:
    out = lens.result(candidate)
    out.status, out.reason = "not applicable", reason
    return out
