"""Several models side by side: one table of headlines, and paired tests on the items they share.

Every lens keeps, per model, one value per item for the quantities that can be paired (`LensResult.items`:
correctness of a pair, consistency of an example, the FTC of a counterfactual). Two models are compared on
the items both have a value for: McNemar's exact test and a paired bootstrap interval for 0/1 quantities, the
paired bootstrap alone for real-valued ones (`paired`).

    >>> from nli_lib.diagnose.lenses import LensResult
    >>> a = LensResult("toy", "toy", "A", items={"accuracy": ("binary", pd.Series([1., 1, 1, 0], index=list("wxyz")))})
    >>> b = LensResult("toy", "toy", "B", items={"accuracy": ("binary", pd.Series([0., 0, 1], index=list("wxy")))})
    >>> row = paired_tests({"A": [a], "B": [b]}).iloc[0].to_dict()
    >>> [int(row[k]) for k in ("n", "a_only", "b_only")], float(row["p_value"])  # 3 shared items: 2 * (1/2)**2
    ([3, 2, 0], 0.5)
"""
from __future__ import annotations

from itertools import combinations
from typing import Mapping

import pandas as pd

from .paired import mcnemar, paired_bootstrap

COLUMNS = ["lens", "quantity", "model_a", "model_b", "n", "a", "b", "difference", "ci_low", "ci_high", "test",
           "p_value", "a_only", "b_only"]


def side_by_side(results: Mapping[str, list]) -> pd.DataFrame:
    """One row per (lens, headline quantity), one column per model: 'value [low, high] (n)'; a lens that did
    not apply to a model shows its status."""
    rows: dict[tuple, dict] = {}
    for model, lens_results in results.items():
        for r in lens_results:
            if r.status != "ok":
                rows.setdefault((r.lens, "—"), {})[model] = r.status
                continue
            for h in r.headlines:
                rows.setdefault((r.lens, h["quantity"]), {})[model] = cell(h)
    out = pd.DataFrame([{"lens": k[0], "quantity": k[1], **v} for k, v in rows.items()])
    return out.reindex(columns=["lens", "quantity", *results]).fillna("")


def cell(h: Mapping) -> str:
    """A headline as text: value, 95% interval, n.

    >>> cell({"value": 81.25, "ci_low": 72.0, "ci_high": 88.1, "n": 80, "unit": "%"})
    '81.2 [72.0, 88.1] (n=80)'
    """
    if h["value"] != h["value"]:
        return f"— (n={h['n']})"
    digits = 1 if h.get("unit") in ("%", "points") else 3
    return f"{h['value']:.{digits}f} [{h['ci_low']:.{digits}f}, {h['ci_high']:.{digits}f}] (n={h['n']})"


def _pair(kind: str, a: pd.Series, b: pd.Series, seed: int) -> dict:
    a, b = a[~a.index.duplicated()], b[~b.index.duplicated()]
    shared = a.index.intersection(b.index)
    x, y = a.loc[shared].to_numpy(dtype=float), b.loc[shared].to_numpy(dtype=float)
    boot = paired_bootstrap(x, y, seed=seed, binary=kind == "binary")
    row = {"n": len(shared), "a": float(x.mean()) if len(x) else float("nan"),
           "b": float(y.mean()) if len(y) else float("nan"), "difference": boot["difference"],
           "ci_low": boot["ci_low"], "ci_high": boot["ci_high"], "a_only": None, "b_only": None}
    if kind == "binary":
        m = mcnemar(x, y)
        return {**row, "test": "McNemar exact", "p_value": m["p_value"], "a_only": m["a_only"], "b_only": m["b_only"]}
    return {**row, "test": "paired bootstrap", "p_value": boot["p_value"]}


def paired_tests(results: Mapping[str, list], seed: int = 0) -> pd.DataFrame:
    """Every pair of models, every pairable quantity of every lens both ran: the COLUMNS above (a, b: the
    models' means on the shared items; difference: a - b with its paired-bootstrap 95% interval)."""
    by_model = {m: {r.lens: r for r in rs if r.status == "ok"} for m, rs in results.items()}
    rows = []
    for model_a, model_b in combinations(list(results), 2):
        for lens, ra in by_model[model_a].items():
            rb = by_model[model_b].get(lens)
            if rb is None:
                continue
            for quantity, (kind, values) in ra.items.items():
                if quantity in rb.items:
                    rows.append({"lens": lens, "quantity": quantity, "model_a": model_a, "model_b": model_b,
                                 **_pair(kind, values, rb.items[quantity][1], seed)})
    out = pd.DataFrame(rows, columns=COLUMNS)
    return out.astype({"a_only": "Int64", "b_only": "Int64", "n": int})
