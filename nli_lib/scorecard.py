"""Reproduction scorecard: every paper number beside ours, the model that produced ours, and the gap.

The paper's numbers are data (nli_lib/resources/paper_values/<paper>.csv); ours are recorded by the notebooks with
`nb.out.score(ref, quantity, ours, model, basis=...)` / `nb.out.score_frame(frame, basis=...)` into
tables/<notebook>/scorecard.jsonl. `build_scorecard` joins the two: one row per (paper value, model that
computed it), and one row per paper value nobody computed, carrying the reason from the CSV's `reason` column.

    >>> paper = pd.DataFrame([{"paper": "taxinli", "ref": "taxinli-table-2", "quantity": "total datapoints",
    ...                        "value": 10071.0, "setting": "", "reason": ""},
    ...                       {"paper": "factnli", "ref": "factnli-table-2", "quantity": "GPT-4o L=3",
    ...                        "value": 61.0, "setting": "", "reason": "needs GPT-4o (paper profile)"}])
    >>> ours = pd.DataFrame([{"ref": "taxinli-table-2", "quantity": "total datapoints", "paper": 10071.0,
    ...                       "ours": 10071.0, "model": "data", "basis": "data", "tier": "data",
    ...                       "notebook": "50_x", "quick": False, "note": ""}])
    >>> build_scorecard(paper, ours)[["quantity", "ours", "status"]].values.tolist()
    [['total datapoints', 10071.0, 'match'], ['GPT-4o L=3', nan, 'not computed: needs GPT-4o (paper profile)']]

Status depends on the entry's basis (`nli_lib.basis`). Like for like (data, released predictions, the
paper's own model): `match` when ours equals the paper's value to within 1 % (relative) or 0.005
(absolute, for values printed as fractions); `close` within 10 % relative; `differs` otherwise. Any
other model or generator: `stand-in`, whatever the gap (the difference columns still show it): a
stand-in landing near the paper's number is a coincidence, not a reproduction. Our own sample or parameter,
another population than the paper's, or a setting the paper does not state (`basis.NOT_GRADED`): `not
graded`, however near. An entry recorded without a number (`ours` NaN: a stand-in whose numbers are
withheld, e.g. one that failed its sanity gate) reads `not computed: <its note>`.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from .basis import BASES, LIKE_FOR_LIKE, NOT_GRADED
from .config import REPO_ROOT
from .outputs import scorecard_entries
from .paper_values import paper_values_frame, unprinted

COLUMNS = ["paper", "ref", "quantity", "setting", "paper_value", "ours", "difference", "rel_difference", "status",
           "basis", "model", "tier", "notebook", "quick", "note"]
AGREEMENT = ("match", "close", "differs")  # statuses of like-for-like entries, best first
NOT_GRADED_STATUS = "not graded"  # status of an entry on a NOT_GRADED basis (our sample, a subset, ...)
SUMMARY_COLUMNS = ["paper", "paper_values", "like_for_like", "match", "close", "differs", "not_graded",
                   "stand_in", "not_computed"]


def classify(paper: float, ours: float, basis: str, bound: str = "") -> str:
    """'match' | 'close' | 'differs' for a like-for-like basis, 'not graded' for our sample, another
    population or an unstated setting (`basis.NOT_GRADED`), 'stand-in' otherwise (see module docstring).

    >>> classify(76.0, 76.4, "data"), classify(0.52, 0.524, "released"), classify(76.0, 72.0, "data")
    ('match', 'match', 'close')
    >>> classify(76.0, 50.0, "paper-model"), classify(76.0, 76.4, "stand-in")
    ('differs', 'stand-in')
    >>> classify(1000.0, 1000.0, "sample"), classify(84.7, 84.7, "subset"), classify(2.0, 2.0, "unstated")
    ('not graded', 'not graded', 'not graded')
    >>> classify(76.0, float("nan"), "data")
    'not computed: the recorded value is not a number'

    A value the paper prints as a bound ("over 10K": `bound="lower"`) is met by any number past it:
    >>> classify(10000.0, 10214.0, "data", bound="lower"), classify(10000.0, 9500.0, "data", bound="lower")
    ('match', 'close')
    """
    if basis not in BASES:
        raise ValueError(f"basis {basis!r} is not one of {BASES}")
    if not (np.isfinite(ours) and np.isfinite(paper)):  # e.g. a metric undefined on a tiny quick sample
        return "not computed: the recorded value is not a number"
    if basis in NOT_GRADED:
        return NOT_GRADED_STATUS
    if basis not in LIKE_FOR_LIKE:
        return "stand-in"
    gap = abs(ours - paper)
    if (bound == "lower" and ours > paper) or (bound == "upper" and ours < paper):
        return "match"
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
            status = classify(v.value, e.ours, e.basis, getattr(v, "bound", "") or "")
            if not np.isfinite(e.ours) and isinstance(e.note, str) and e.note:  # withheld: the note says why
                status = f"not computed: {e.note}"
            rows.append({**base, "ours": e.ours, "difference": diff,
                         "rel_difference": diff / abs(v.value) if v.value else np.nan,
                         "status": status, "basis": e.basis, "model": e.model,
                         "tier": e.tier, "notebook": e.notebook, "quick": e.quick, "note": e.note})
    return pd.DataFrame(rows, columns=COLUMNS)


def summary(card: pd.DataFrame) -> pd.DataFrame:
    """Per paper, each printed value counted once: like-for-like (by its best agreement: match / close /
    differs), else not graded (our sample, another population, an unstated setting), else stand-in only,
    else not computed.

    >>> card = pd.DataFrame({"paper": ["p"] * 6, "ref": ["r"] * 6, "quantity": ["a", "a", "b", "c", "d", "d"],
    ...                      "status": ["stand-in", "close", "stand-in", "not computed: needs X", "stand-in",
    ...                                 "not graded"]})
    >>> summary(card).set_index("paper").loc["p", ["like_for_like", "close", "not_graded", "stand_in",
    ...                                            "not_computed"]].tolist()
    [1, 1, 1, 1, 1]
    """
    per_value = card.groupby(["paper", "ref", "quantity"], sort=False).agg(best=("status", _best))
    out = per_value.groupby("paper").agg(
        paper_values=("best", "size"), **{s: ("best", lambda b, s=s: int((b == s).sum())) for s in AGREEMENT},
        not_graded=("best", lambda b: int((b == NOT_GRADED_STATUS).sum())),
        stand_in=("best", lambda b: int((b == "stand-in").sum())),
        not_computed=("best", lambda b: int((b == "not computed").sum())))
    out["like_for_like"] = out[list(AGREEMENT)].sum(axis=1)
    out.loc["all"] = out.sum()
    return out.reset_index()[SUMMARY_COLUMNS]


def _best(statuses: pd.Series) -> str:
    for status in (*AGREEMENT, NOT_GRADED_STATUS, "stand-in"):
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


STATUS_COLOURS = {"match": "#009e73", "close": "#e69f00", "differs": "#d55e00", "not_graded": "#cc79a7",
                  "stand_in": "#56b4e9", "not_computed": "#dddddd"}
"""One colour per status, the same in every panel (Okabe-Ito, told apart by colour-blind readers); no colour
means a paper."""

REL_LIMITS = (-300.0, 1000.0)
"""The relative-difference panels' x range in %: an entry beyond it sits on the edge as a triangle pointing out."""


def relative_percent(paper: pd.Series, ours: pd.Series) -> pd.Series:
    """(ours − paper) / |paper| in %; a printed 0 gives 0 when ours is 0 too, else ±inf (drawn on the edge).

    >>> relative_percent(pd.Series([80.0, -2.0, 0.0, 0.0]), pd.Series([88.0, -1.0, 0.0, 0.3])).tolist()
    [10.0, 50.0, 0.0, inf]
    """
    paper, ours = paper.astype(float), ours.astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = 100 * (ours - paper) / paper.abs()
    return rel.where(paper != 0, np.where(ours == paper, 0.0, np.sign(ours - paper) * np.inf))


def _status_key(status: str) -> str:
    return {"stand-in": "stand_in", NOT_GRADED_STATUS: "not_graded"}.get(status, status)


def _relative_panel(ax, part: pd.DataFrame, papers: list[str], title: str) -> None:
    """One row per paper: each entry's relative difference (symlog %, linear within ±1 %), coloured by status;
    bands at ±1 % (match) and ±10 % (close)."""
    lo, hi = REL_LIMITS
    ax.axvspan(-10, 10, color="0.93", zorder=0)
    ax.axvspan(-1, 1, color="0.82", zorder=0)
    ax.axvline(0, color="0.3", lw=0.8, zorder=1)
    rng = np.random.default_rng(0)
    rel = relative_percent(part.paper_value, part.ours)
    for status in [x for x in (*AGREEMENT, NOT_GRADED_STATUS, "stand-in") if x in set(part.status)]:
        grp = part[part.status == status]
        r = rel.loc[grp.index].to_numpy()
        y = np.array([papers.index(p) for p in grp.paper]) + rng.uniform(-0.28, 0.28, len(grp))
        colour = STATUS_COLOURS[_status_key(status)]
        inside = (r >= lo) & (r <= hi)
        ax.scatter(r[inside], y[inside], s=22, color=colour, edgecolors="0.2", linewidths=0.3, alpha=0.85,
                   zorder=3, label=f"{status} ({len(grp)})")
        for side, marker in ((r < lo, "<"), (r > hi, ">")):
            ax.scatter(np.full(side.sum(), lo if marker == "<" else hi), y[side], s=40, marker=marker,
                       color=colour, edgecolors="0.2", linewidths=0.3, zorder=3, clip_on=False)
    ax.set_xscale("symlog", linthresh=1, linscale=0.6)
    ax.set_xlim(lo, hi)
    ax.set_xticks([-100, -10, -1, 0, 1, 10, 100, 1000], ["−100", "−10", "−1", "0", "1", "10", "100", "1000"])
    ax.set_yticks(range(len(papers)), papers)
    ax.set_ylim(len(papers) - 0.5, -0.5)
    ax.set_xlabel("ours vs the paper: (ours − paper) / |paper|, %  (shaded: ±1 %, ±10 %; ◀ ▶ beyond the axis)")
    ax.set_title(f"{title}: {len(part)} entries", fontsize=11, loc="left")
    if len(part):
        ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, title="status",
                  title_fontsize=9)


def figure(card: pd.DataFrame):
    """Top: each paper value once, by status (like-for-like agreement, not graded, stand-in, not computed).
    Below: every recorded entry's relative difference from the paper's value, one row per paper, like-for-like
    entries and the ungraded rest (stand-ins, our samples, other populations) in separate panels. Zeros stay
    (ours 0 is −100 %; a printed 0 is 0 % or off the axis); each colour is one status in every panel."""
    import matplotlib.pyplot as plt

    summ = summary(card).set_index("paper").drop(index="all")
    fig, (ax1, ax2, ax3) = plt.subplots(3, 1, figsize=(10, 11), gridspec_kw={"height_ratios": [1, 1, 1.3]})
    left = np.zeros(len(summ))
    for col, colour in STATUS_COLOURS.items():
        ax1.barh(summ.index, summ[col], left=left, color=colour, edgecolor="white", linewidth=0.5,
                 label={"stand_in": "stand-in"}.get(col, col.replace("_", " ")))
        left += summ[col].to_numpy()
    ax1.set_xlabel("paper values (each counted once)")
    ax1.set_title("what the companion computes, per paper", fontsize=11, loc="left")
    ax1.set_ylim(len(summ) - 0.5, -0.5)
    ax1.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, title="status",
               title_fontsize=9)
    recorded = card[~card.status.str.startswith("not computed")]
    papers = list(summ.index)
    _relative_panel(ax2, recorded[recorded.status.isin(AGREEMENT)], papers,
                    "like for like (the paper's data, released predictions or model)")
    _relative_panel(ax3, recorded[recorded.status.isin(["stand-in", NOT_GRADED_STATUS])], papers,
                    "not graded (stand-ins, our samples, other populations)")
    fig.tight_layout()
    return fig


START, END = "<!-- scorecard:start -->", "<!-- scorecard:end -->"  # REPRODUCTION.md's generated block
SUMMARY_START, SUMMARY_END = "<!-- scorecard-summary:start -->", "<!-- scorecard-summary:end -->"  # README's
REPRODUCTION = "REPRODUCTION.md"  # the full account: counts, like-for-like matches, every reason not reproduced
README = "README.md"  # the front page: the counts and the gallery


def _counts_table(card: pd.DataFrame) -> str:
    names = {"paper_values": "paper values", "like_for_like": "like for like", "not_graded": "not graded",
             "stand_in": "stand-in", "not_computed": "not computed"}
    return summary(card).rename(columns=names).to_markdown(index=False)


def reproduction_section(card: pd.DataFrame, source: str = "tables/scorecard.csv") -> str:
    """Markdown for REPRODUCTION.md: the per-paper counts by status (like for like, stand-in, not computed),
    the like-for-like values within 1 %, and every reason a value is not reproduced."""
    lines = [START, "", f"_Generated by notebook 90 from `{source}`; do not edit by hand._", "",
             "Each value the paper prints is counted once. **Like for like**: ours comes from the paper's data, "
             "its released predictions or (paper profile) its own model, and is graded match (≤ 1 %), close "
             "(≤ 10 %) or differs. **Not graded**: ours is a number of our own sample or a parameter we chose, "
             "comes from another population than the paper's (n in the note), or rests on a setting the paper "
             "does not state (shown under each reading). **Stand-in**: ours comes from another model or "
             "generator (offline MiniLM, scikit-learn baselines, rule-based stand-ins for the LLM steps); it is "
             "shown beside the paper's value with its difference and never graded.", "", _counts_table(card), ""]
    done = card[~card.status.str.startswith("not computed")]
    per_basis = done.groupby("basis").size().reindex(list(BASES), fill_value=0)
    models = sorted(set(done.model.dropna()))
    if len(done):
        lines.append(f"Our {len(done)} recorded values by basis (column `basis` of `{source}`): "
                     + ", ".join(f"{b} {n}" for b, n in per_basis.items()) + f"; from {len(models)} models or "
                     "sources (column `model`).")
    else:
        lines.append("Our values come from: (no run recorded yet).")
    lines += _quick_warning(card)
    lines += ["", "Within 1 % of the paper, like for like (the paper's data, released predictions or own model):", ""]
    exact = card[card.status == "match"].drop_duplicates(["ref", "quantity"])  # one line per paper value
    for paper, grp in exact.groupby("paper"):
        examples = "; ".join(f"{q} = {o:g}" for q, o in zip(grp.quantity.head(4), grp.ours.head(4)))
        lines.append(f"- **{paper}** ({len(grp)}): {examples}{' …' if len(grp) > 4 else ''}")
    if exact.empty:
        lines.append("- none")
    lines += ["", "Not reproduced, and why:", ""]
    for r in reasons(card).itertuples(index=False):
        lines.append(f"- **{r.paper}** · {r.reason} ({r.values} values, e.g. “{r.example}”)")
    lines += ["", "Figures whose numbers the paper does not print (nothing is read off a plot, so they have no paper "
                  "value, or only what their captions print):", ""]
    lines += [f"- **{ref.split('-')[0]}** · {ref}: {note}" for ref, note in unprinted().items()]
    lines += ["", END]
    return "\n".join(lines)


def _quick_warning(card: pd.DataFrame) -> list[str]:
    if card.quick.dropna().astype(bool).any():
        return ["", "**These numbers come from a `--quick` run (small samples); run `./run_all.sh` for the full "
                    "offline numbers.**"]
    return []


def summary_section(card: pd.DataFrame, source: str = "tables/scorecard.csv") -> str:
    """Markdown for README.md: the per-paper counts by status and a link to REPRODUCTION.md, which lists
    the matches and every reason a value is not reproduced.

    >>> card = pd.DataFrame({"paper": ["p", "p"], "ref": ["r", "r"], "quantity": ["a", "b"], "quick": [False] * 2,
    ...                      "status": ["match", "not computed: needs X"]})
    >>> "Of the 2 values the papers print, 1 are computed like for like (1 match, 0 close" in summary_section(card)
    True
    """
    summ = summary(card).set_index("paper").loc["all"]
    lines = [SUMMARY_START, "", f"_Generated by notebook 90 from `{source}`; do not edit by hand._", "",
             _counts_table(card), *_quick_warning(card), "",
             f"Of the {summ.paper_values} values the papers print, {summ.like_for_like} are computed like for like "
             f"({summ.match} match, {summ.close} close, {summ.differs} differ), {summ.not_graded} more are shown "
             f"but not graded (our own sample, another population, an unstated setting) and {summ.stand_in} "
             f"more are set beside a stand-in; [{REPRODUCTION}]({REPRODUCTION}) lists the matches and why each "
             f"other value is not reproduced.", SUMMARY_END]
    return "\n".join(lines)


def update_block(path: Path, section: str, start: str = START, end: str = END) -> bool:
    """Replace the text between the markers `start` … `end` in the file `path`; returns whether it changed."""
    text = path.read_text()
    if start not in text or end not in text:
        raise ValueError(f"{path} lacks the markers {start} … {end}")
    new = re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: section.strip(), text, flags=re.S)
    changed = new != text
    if changed:
        path.write_text(new)
    return changed


GALLERY_START, GALLERY_END = "<!-- gallery:start -->", "<!-- gallery:end -->"


def gallery_section(index: pd.DataFrame, refs: list[str]) -> str:
    """Markdown image gallery of the first figure registered under each ref (paths relative to the repo).
    A ref without a registered figure raises KeyError; an empty models or caption cell (NaN once the index
    is read from CSV) reads 'none' / ''.

    >>> index = pd.DataFrame([{"ref": "companion-fig-90", "kind": "figure", "path": "figures/90/s.png",
    ...                        "tier": "offline", "models": float("nan"), "caption": "status"}])
    >>> print(gallery_section(index, ["companion-fig-90"]).splitlines()[2])
    **companion-fig-90** — status _(tier: offline; models: none)_
    """
    figs = index[index.kind == "figure"]
    missing = [ref for ref in refs if not (figs.ref == ref).any()]
    if missing:
        raise KeyError(f"no figure is registered under {missing}; registered figure refs: {sorted(set(figs.ref))}")
    lines = [GALLERY_START, ""]
    for ref in refs:
        row = figs[figs.ref == ref].iloc[0]
        models = row.models if isinstance(row.models, str) and row.models else "none"
        caption = row.caption if isinstance(row.caption, str) else ""
        lines += [f"**{ref}** — {caption} _(tier: {row.tier}; models: {models})_", "", f"![{ref}]({row.path})", ""]
    lines.append(GALLERY_END)
    return "\n".join(lines)


def write_markdown(card: pd.DataFrame, index: pd.DataFrame, gallery: list[str], root: Path = REPO_ROOT) -> list[str]:
    """Regenerate the blocks notebook 90 owns: REPRODUCTION.md's scorecard block, and README.md's summary block
    and figure gallery. Returns the names of the files that changed (KeyError for a gallery ref no figure has)."""
    blocks = [(REPRODUCTION, reproduction_section(card), START, END),
              (README, summary_section(card), SUMMARY_START, SUMMARY_END),
              (README, gallery_section(index, gallery), GALLERY_START, GALLERY_END)]
    changed = [name for name, section, start, end in blocks if update_block(root / name, section, start, end)]
    return sorted(set(changed))
