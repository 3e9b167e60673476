"""Reproduction scorecard: every paper number beside ours, the model that produced ours, and the gap.

The paper's numbers are data (data/paper_values/<paper>.csv); ours are recorded by the notebooks with
`nb.out.score(ref, quantity, ours, model)` into tables/<notebook>/scorecard.jsonl. `build_scorecard` joins
the two: one row per (paper value, model that computed it), and one row per paper value nobody computed,
carrying the reason from the CSV's `reason` column.

    >>> paper = pd.DataFrame([{"paper": "taxinli", "ref": "taxinli-table-2", "quantity": "total datapoints",
    ...                        "value": 10071.0, "setting": "", "reason": ""},
    ...                       {"paper": "factnli", "ref": "factnli-table-2", "quantity": "GPT-4o L=3",
    ...                        "value": 61.0, "setting": "", "reason": "needs GPT-4o (paper profile)"}])
    >>> ours = pd.DataFrame([{"ref": "taxinli-table-2", "quantity": "total datapoints", "paper": 10071.0,
    ...                       "ours": 10071.0, "model": "data", "tier": "offline", "notebook": "50_x",
    ...                       "quick": False, "note": ""}])
    >>> build_scorecard(paper, ours)[["quantity", "ours", "status"]].values.tolist()
    [['total datapoints', 10071.0, 'match'], ['GPT-4o L=3', nan, 'not computed: needs GPT-4o (paper profile)']]

Status: `match` when ours equals the paper's value to within 1 % (relative) or 0.005 (absolute, for
values printed as fractions); `close` within 10 % relative; `differs` otherwise. A match or a gap says
nothing by itself: the `model` column tells whether ours came from the paper's own data/predictions or
from a different (usually much smaller, offline) model.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from .config import REPO_ROOT
from .outputs import scorecard_entries
from .paper_values import paper_values_frame

COLUMNS = ["paper", "ref", "quantity", "setting", "paper_value", "ours", "difference", "rel_difference", "status",
           "model", "tier", "notebook", "quick", "note"]


def classify(paper: float, ours: float) -> str:
    """'match' | 'close' | 'differs' (see module docstring).

    >>> classify(76.0, 76.4), classify(0.52, 0.524), classify(76.0, 72.0), classify(76.0, 50.0)
    ('match', 'match', 'close', 'differs')
    >>> classify(76.0, float("nan"))
    'not computed: the recorded value is not a number'
    """
    if not (np.isfinite(ours) and np.isfinite(paper)):  # e.g. a metric undefined on a tiny quick sample
        return "not computed: the recorded value is not a number"
    gap = abs(ours - paper)
    if gap <= 0.005 or gap <= 0.01 * abs(paper):
        return "match"
    return "close" if gap <= 0.10 * abs(paper) else "differs"


def build_scorecard(paper: pd.DataFrame | None = None, ours: pd.DataFrame | None = None) -> pd.DataFrame:
    """Join the paper's values with our recorded entries (see module docstring)."""
    paper = paper_values_frame() if paper is None else paper
    ours = scorecard_entries() if ours is None else ours
    if "reason" not in paper:
        paper = paper.assign(reason="")
    rows = []
    by_key = {key: grp for key, grp in ours.groupby(["ref", "quantity"])} if len(ours) else {}
    for v in paper.itertuples(index=False):
        base = {"paper": v.paper, "ref": v.ref, "quantity": v.quantity, "setting": v.setting or "",
                "paper_value": float(v.value)}
        entries = by_key.get((v.ref, v.quantity))
        if entries is None:
            reason = v.reason if isinstance(v.reason, str) and v.reason else "not computed by the companion"
            rows.append({**base, "ours": np.nan, "difference": np.nan, "rel_difference": np.nan,
                         "status": f"not computed: {reason}"})
            continue
        for e in entries.itertuples(index=False):
            diff = e.ours - v.value
            rows.append({**base, "ours": e.ours, "difference": diff,
                         "rel_difference": diff / abs(v.value) if v.value else np.nan,
                         "status": classify(v.value, e.ours), "model": e.model, "tier": e.tier,
                         "notebook": e.notebook, "quick": e.quick, "note": e.note})
    return pd.DataFrame(rows, columns=COLUMNS)


def summary(card: pd.DataFrame) -> pd.DataFrame:
    """Per paper: values in the paper, values we computed (any model), matches/close/differs, not computed."""
    card = card.assign(computed=~card.status.str.startswith("not computed"))
    per_value = card.groupby(["paper", "ref", "quantity"], sort=False).agg(
        computed=("computed", "any"), best=("status", lambda s: _best(s)))
    out = per_value.groupby("paper").agg(
        paper_values=("computed", "size"), computed=("computed", "sum"),
        match=("best", lambda s: (s == "match").sum()), close=("best", lambda s: (s == "close").sum()),
        differs=("best", lambda s: (s == "differs").sum()))
    out["not_computed"] = out.paper_values - out.computed
    out.loc["all"] = out.sum()
    return out.reset_index()


def _best(statuses: pd.Series) -> str:
    for status in ("match", "close", "differs"):
        if (statuses == status).any():
            return status
    return "not computed"


def reasons(card: pd.DataFrame) -> pd.DataFrame:
    """Why values are not computed: paper, reason, number of values, an example quantity."""
    missing = card[card.status.str.startswith("not computed")]
    if missing.empty:
        return pd.DataFrame(columns=["paper", "reason", "values", "example"])
    missing = missing.assign(reason=missing.status.str.removeprefix("not computed: "))
    return (missing.groupby(["paper", "reason"]).agg(values=("quantity", "size"), example=("quantity", "first"))
            .reset_index().sort_values(["paper", "values"], ascending=[True, False]))


def figure(card: pd.DataFrame):
    """Left: coverage per paper (match / close / differs / not computed). Right: ours vs paper (log-log)."""
    import matplotlib.pyplot as plt

    summ = summary(card).set_index("paper").drop(index="all")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    colours = {"match": "#2a9d8f", "close": "#e9c46a", "differs": "#e76f51", "not_computed": "#bbbbbb"}
    left = np.zeros(len(summ))
    for col, colour in colours.items():
        ax1.barh(summ.index, summ[col], left=left, color=colour, label=col.replace("_", " "))
        left += summ[col].to_numpy()
    ax1.set_xlabel("paper values")
    ax1.set_title("what the companion computes, per paper")
    ax1.legend(loc="lower right", fontsize=8)
    done = card[~card.status.str.startswith("not computed")]
    done = done[(done.paper_value > 0) & (done.ours > 0)]
    for paper, grp in done.groupby("paper"):
        ax2.scatter(grp.paper_value, grp.ours, s=14, alpha=0.7, label=paper)
    if len(done):
        lo, hi = min(done.paper_value.min(), done.ours.min()), max(done.paper_value.max(), done.ours.max())
        ax2.plot([lo, hi], [lo, hi], color="grey", lw=0.8, ls="--")
        ax2.set_xscale("log")
        ax2.set_yscale("log")
        ax2.legend(fontsize=8)
    ax2.set_xlabel("paper's value")
    ax2.set_ylabel("ours (tier/model in the table)")
    ax2.set_title("ours vs the paper's (dashed: equal)")
    fig.tight_layout()
    return fig


START, END = "<!-- scorecard:start -->", "<!-- scorecard:end -->"


def readme_section(card: pd.DataFrame, source: str = "tables/scorecard.csv") -> str:
    """Markdown for the README's "What reproduces and what doesn't" section."""
    summ = summary(card)
    lines = [START, "", f"_Generated by notebook 90 from `{source}`; do not edit by hand._", "",
             summ.rename(columns={"paper_values": "paper values", "not_computed": "not computed"})
             .to_markdown(index=False), ""]
    tiers = sorted({f"{t} / {m}" for t, m in zip(card.tier.dropna(), card.model.dropna())})
    quick = card.quick.dropna().astype(bool).any()
    if tiers:
        more = f", and {len(tiers) - 8} more" if len(tiers) > 8 else ""
        lines.append(f"Our values come from {len(tiers)} tier / model combinations (column `model` of `{source}`): "
                     + ", ".join(tiers[:8]) + more + ".")
    else:
        lines.append("Our values come from: (no run recorded yet).")
    if quick:
        lines += ["", "**These numbers come from a `--quick` run (small samples); run `./run_all.sh` for the full "
                      "offline numbers.**"]
    lines += ["", "Within 1 % of the paper (a reproduction where ours comes from the paper's data or shipped "
                  "predictions; a coincidence where it comes from a different model: see the `model` column):", ""]
    exact = card[(card.status == "match")].drop_duplicates(["ref", "quantity"])  # one line per paper value
    for paper, grp in exact.groupby("paper"):
        examples = "; ".join(f"{q} = {o:g}" for q, o in zip(grp.quantity.head(4), grp.ours.head(4)))
        lines.append(f"- **{paper}** ({len(grp)}): {examples}{' …' if len(grp) > 4 else ''}")
    lines += ["", "Not reproduced, and why:", ""]
    for r in reasons(card).itertuples(index=False):
        lines.append(f"- **{r.paper}** · {r.reason} ({r.values} values, e.g. “{r.example}”)")
    lines += ["", END]
    return "\n".join(lines)


def update_readme(section: str, readme: Path = REPO_ROOT / "README.md", start: str = START, end: str = END) -> bool:
    """Replace the text between the markers in README.md; returns whether the file changed."""
    text = readme.read_text()
    if start not in text or end not in text:
        raise ValueError(f"{readme} lacks the markers {start} … {end}")
    new = re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: section.strip(), text, flags=re.S)
    changed = new != text
    if changed:
        readme.write_text(new)
    return changed


GALLERY_START, GALLERY_END = "<!-- gallery:start -->", "<!-- gallery:end -->"


def gallery_section(index: pd.DataFrame, refs: list[str]) -> str:
    """Markdown image gallery of the first figure registered under each ref (paths relative to the repo)."""
    figs = index[index.kind == "figure"]
    lines = [GALLERY_START, ""]
    for ref in refs:
        hit = figs[figs.ref == ref]
        if len(hit):
            row = hit.iloc[0]
            lines += [f"**{ref}** — {row.caption} _(tier: {row.tier}; models: {row.models or 'none'})_", "",
                      f"![{ref}]({row.path})", ""]
    lines.append(GALLERY_END)
    return "\n".join(lines)
