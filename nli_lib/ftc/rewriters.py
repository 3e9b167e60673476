"""Which FSP rewriter a profile runs, which paper rows it is set beside, and how many priming examples it had.

* `make_rewriter(params, dev)`: the profile's ``rewriter:`` section (a base LM: GPT-Neo / GPT2-XL, in-process
  or at an endpoint's /v1/completions), else its ``llm:`` section, else the offline stand-ins. An LLM is
  primed with the paper's printed Table 13/14 rows filled up to 20 per label with regex-labelled e-SNLI dev
  pairs (companion-derived; `fewshot.shot_sets`).
* `paper_rewriter(rewriter)`: the paper's rewriter it IS — only what the profile declares (``as:``), never a
  guess from the model id. GPT-Neo2.7B is Table 4's (and Tables 5, 6, 12's) rewriter; GPT-Neo1.3B and GPT2-xl
  have Table 11 rows. An undeclared rewriter (the offline stand-ins, any other LLM) is a stand-in set beside
  no paper row: `fsp_quantity` gives None for it.
* `shots_used(rows)`: how many priming examples the FSP prompts held (fewer than 20 where the context was
  too small, e.g. GPT2-XL's 1,024 tokens), per pipeline and step, for the output tables.

>>> from nli_lib.ftc.fewshot import FewShotRewriter
>>> stand_in = FewShotRewriter.offline()
>>> paper_rewriter(stand_in) is None, fsp_quantity(stand_in, "fsp-fsp", "C") is None
(True, True)
>>> fsp_quantity(stand_in, "regex-regex", "C")            # regex rows do not depend on the rewriter
('ftc-table-11', 'METEOR regex regex-regex C human')
>>> import dataclasses; neo13 = dataclasses.replace(stand_in, paper_system="GPT-Neo1.3B")
>>> fsp_quantity(neo13, "fsp-regex", "N[A]")
('ftc-table-11', 'METEOR GPT-Neo1.3B fsp-regex N[A] human')
"""
from __future__ import annotations

import dataclasses
from typing import Mapping

import pandas as pd

from .fewshot import PAPER_SHOTS, FewShotRewriter, shot_sets
from .paper import REWRITERS

TABLE4_REWRITER = "GPT-Neo2.7B"  # the rewriter of Tables 4, 5, 6 and 12 ("the largest and best performing model")


def make_rewriter(params: Mapping, dev: pd.DataFrame | None = None, *, seed: int = 0, pool_per_label: int = 200,
                  cache=None) -> FewShotRewriter:
    """The FSP rewriter of a profile (see module doc); `dev` (e-SNLI dev) supplies the extra priming rows.

    Only the ``rewriter:`` section's ``as:`` declares one of FTC's rewriters (anything else raises); the ``llm:``
    section's ``as:`` names the system it is for other papers (e.g. llama-3-8b-it), so an LLM from there is a
    stand-in rewriter unless one of its names is an FTC rewriter.
    """
    from ..llm import make_llm
    from .analysis import balanced_sample
    from .pipeline import counterfactual_rows

    client = make_llm(params, section="rewriter", cache=cache)
    if client is not None:
        declared = client.paper_system
        if declared is not None and declared not in REWRITERS:
            raise ValueError(f"rewriter declared as {declared!r}: FTC's rewriters are {REWRITERS}")
    else:  # the llm section's `as:` names what it is for atoms/FactNLI: for FTC it is a stand-in unless it
        client = make_llm(params, cache=cache)  # names one of FTC's rewriters
        if client is None:
            return FewShotRewriter.offline(cache=cache)
        names = (client.paper_system,) if isinstance(client.paper_system, str) else client.paper_system or ()
        declared = next((n for n in names if n in REWRITERS), None)
    pool = None if dev is None else counterfactual_rows(balanced_sample(dev, pool_per_label, seed=seed), "regex",
                                                        "regex")
    rewriter = FewShotRewriter.from_llm(client, shots=shot_sets(pool, n=PAPER_SHOTS, seed=seed))
    return dataclasses.replace(rewriter, paper_system=declared)


def paper_rewriter(rewriter: FewShotRewriter) -> str | None:
    """The paper's rewriter `rewriter` is declared to be (GPT-Neo2.7B, GPT-Neo1.3B, GPT2-xl), or None."""
    return rewriter.paper_system if rewriter.paper_system in REWRITERS else None


def is_table4_rewriter(rewriter: FewShotRewriter) -> bool:
    """Whether FSP results may be set beside Tables 4, 5, 6 and 12 (declared GPT-Neo2.7B)."""
    return paper_rewriter(rewriter) == TABLE4_REWRITER


def fsp_quantity(rewriter: FewShotRewriter, pipeline: str, slot: str,
                 explanations: str = "human") -> tuple[str, str] | None:
    """(ref, quantity) of the Table 11 value a METEOR result of `pipeline` and `slot` is set beside; None when
    the pipeline uses FSP and the rewriter is not declared as one of the paper's."""
    if pipeline == "regex-regex":
        return "ftc-table-11", f"METEOR regex regex-regex {slot} {explanations}"
    system = paper_rewriter(rewriter)
    if system is None:
        return None
    return "ftc-table-11", f"METEOR {system} {pipeline} {slot} {explanations}"


def meteor_beside_paper(t4: pd.DataFrame, rewriter: FewShotRewriter) -> pd.DataFrame:
    """Table 4/11 METEOR (`quality_table` output: pipeline × slot) in long form with the paper's value of the
    declared rewriter's row (`paper`, and `paper_row` naming it); empty for an undeclared rewriter's FSP rows."""
    from ..paper_values import paper_value

    long = t4.melt(id_vars="pipeline", var_name="slot", value_name="ours")
    long = long[~long["pipeline"].str.startswith("copy")].reset_index(drop=True)
    refs = [fsp_quantity(rewriter, p, s) for p, s in zip(long["pipeline"], long["slot"])]
    long["paper_row"] = [q[1] if q else "" for q in refs]
    long["paper"] = [paper_value(*q) if q else float("nan") for q in refs]
    long["ours_fsp"] = ["regex" if p == "regex-regex" else rewriter.name for p in long["pipeline"]]
    long["declared_as"] = paper_rewriter(rewriter) or "(undeclared: stand-in)"
    return long


def shots_used(rows: pd.DataFrame) -> pd.DataFrame:
    """Priming examples in the FSP prompts sent, per pipeline and step: prompts, min / median / max shots, and
    how many prompts left examples out to fit the model's context (`cut`).

    >>> rows = pd.DataFrame({"pipeline": ["fsp-fsp"] * 3, "pair_id": [1, 2, 3], "slot": ["C", "E", "C"],
    ...                      "extract_shots": [20, 20, 20], "transform_shots": [20, 14, None],
    ...                      "extract_shots_dropped": [0, 0, 0], "transform_shots_dropped": [0, 6, 0]})
    >>> shots_used(rows)[["pipeline", "step", "prompts", "min", "max", "cut"]].values.tolist()
    [['fsp-fsp', 'extract', 3, 20, 20, 0], ['fsp-fsp', 'transform', 2, 14, 20, 1]]
    """
    out = []
    for pipeline, g in rows.groupby("pipeline", sort=False):
        per_pair = g.drop_duplicates(["pair_id"] + [c for c in ("explanation",) if c in g])
        for step in ("extract", "transform"):
            sent = per_pair[per_pair[f"{step}_shots"].notna()]
            if sent.empty:
                continue
            shots = sent[f"{step}_shots"].astype(int)
            out.append({"pipeline": pipeline, "step": step, "prompts": len(sent), "min": int(shots.min()),
                        "median": float(shots.median()), "max": int(shots.max()),
                        "cut": int((sent[f"{step}_shots_dropped"] > 0).sum())})
    return pd.DataFrame(out, columns=["pipeline", "step", "prompts", "min", "median", "max", "cut"])


def shots_note(rows: pd.DataFrame) -> str:
    """One phrase for captions: the priming examples the FSP prompts held.

    >>> shots_note(pd.DataFrame({"pipeline": ["fsp-fsp"] * 2, "pair_id": [1, 2], "extract_shots": [20, 20],
    ...                          "transform_shots": [12, 20], "extract_shots_dropped": [0, 0],
    ...                          "transform_shots_dropped": [8, 0]}))
    'FSP shots per prompt: extract 20, transform 12–20 (1 of 2 prompts cut to fit the context)'
    """
    table = shots_used(rows)
    if table.empty:
        return "FSP shots per prompt: no FSP prompt sent"
    parts = []
    for step, g in table.groupby("step", sort=False):
        lo, hi, cut = int(g["min"].min()), int(g["max"].max()), int(g["cut"].sum())
        span = f"{lo}" if lo == hi else f"{lo}–{hi}"
        parts.append(f"{step} {span}" + (f" ({cut} of {int(g['prompts'].sum())} prompts cut to fit the context)"
                                         if cut else ""))
    return "FSP shots per prompt: " + ", ".join(parts)
