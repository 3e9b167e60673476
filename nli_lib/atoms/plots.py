"""Figures of the atoms paper: Figure 2 (rug plot), Figure 5 (label distribution), Figures 6-7 (atoms per example),
Table 2 by predicted label and Table 4 with intervals.

All take the per-example summary of `defeasible.example_summary` (or the labelled sub-problems) and return
a matplotlib Figure; the label source goes in the title so no figure hides where its labels came from.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Patch

from .. import figures
from ..figures import NOTE_GID
from .defeasible import SCALE, SCALE_NAMES

HUE = {"strengthener": (0.13, 0.55, 0.13), "weakener": (0.80, 0.15, 0.15)}
# one opaque colour per atom label (diverging: red = weakens, grey = no effect, green = strengthens)
LABEL_COLOURS = {-2: (0.70, 0.09, 0.09), -1: (0.95, 0.55, 0.50), 0: (0.82, 0.82, 0.82), 1: (0.55, 0.80, 0.52),
                 2: (0.10, 0.50, 0.17)}
COUNT_COLS = {-2: "n_-2", -1: "n_-1", 0: "n_0", 1: "n_+1", 2: "n_+2"}


def rug_order(summary: pd.DataFrame) -> pd.DataFrame:
    """Examples with at least one valid atom, left to right by weakener-label share (ties: strengthener share)."""
    s = summary[summary["n_valid"] > 0].copy()
    s["_strong_w"], s["_strong_s"] = s["n_-2"] / s["n_valid"], s["n_+2"] / s["n_valid"]
    keys = ["weakener_share", "strengthener_share", "_strong_w", "_strong_s", "pair_id"]
    s = s.sort_values(keys, ascending=[True, False, True, False, True]).reset_index(drop=True)
    return s.drop(columns=["_strong_w", "_strong_s"])


def rug_image(s: pd.DataFrame, height: int = 100) -> np.ndarray:
    """(height, n, 3) RGB array: column i is example i's atom labels stacked -2 (bottom) .. +2 (top), each label
    as tall as its share of the example's valid atoms.

    >>> s = pd.DataFrame({"n_valid": [2], "n_-2": [1], "n_-1": [0], "n_0": [0], "n_+1": [0], "n_+2": [1]})
    >>> img = rug_image(s, height=4)
    >>> [tuple(img[r, 0]) == LABEL_COLOURS[v] for r, v in ((0, 2), (3, -2))]
    [True, True]
    """
    img = np.ones((height, len(s), 3))
    for i, (_, row) in enumerate(s.iterrows()):
        top = 0.0
        for v in SCALE:  # row 0 of the image is the top of the figure (imshow origin 'upper' flipped below)
            share = row[COUNT_COLS[v]] / row["n_valid"] if row["n_valid"] else 0.0
            lo, hi = int(round(top * height)), int(round((top + share) * height))
            img[height - hi: height - lo, i] = LABEL_COLOURS[v]
            top += share
    return img


def rug_plot(summary: pd.DataFrame, label_source: str = "", warning: str = ""):
    """Figure 2, readable at any size: one panel per full label (strengtheners, weakeners), one column per
    example (ordered by its share of weakening atom labels) filled with opaque colours for its atoms' labels.

    The paper draws all examples in one strip with the full label as hue and the atom labels as shading; with
    ~1,600 examples each slice is narrower than a pixel and light shades vanish, so the full label is the
    panel here and each atom label has its own colour (a per-pixel image, no sub-pixel bars). `warning` (e.g.
    that the labels are a method demonstration) is printed in red under the title.
    """
    s = rug_order(summary)
    fig, axes = plt.subplots(2, 1, figsize=(11, 4.6), sharey=True)
    for ax_, kind in zip(axes, ("strengthener", "weakener")):
        part = s[s["update_type"] == kind].reset_index(drop=True)
        if len(part):
            ax_.imshow(rug_image(part), aspect="auto", interpolation="nearest", extent=(0, len(part), 0, 1))
        ax_.set_xlim(0, max(len(part), 1))
        ax_.set_ylim(0, 1)
        ax_.set_yticks([0, 0.5, 1])
        ax_.set_ylabel("share of\natom labels")
        no_dir = int((part["n_critical"] == 0).sum()) if "n_critical" in part else 0
        ax_.set_title(f"{kind}s (full label): {len(part)} examples, {no_dir} without an atom in their direction",
                      fontsize=9, color=HUE[kind], loc="left")
        for side in ("top", "right"):
            ax_.spines[side].set_visible(False)
    axes[-1].set_xlabel("examples, left to right by share of weakening atom labels")
    handles = [Patch(color=LABEL_COLOURS[v], label=f"{v:+d} {SCALE_NAMES[v]}" if v else "0 no effect")
               for v in reversed(SCALE)]
    fig.legend(handles=handles, loc="center right", fontsize=8, frameon=False, title="atom label", title_fontsize=8)
    fig.suptitle(f"Figure 2: atomic sub-problem labels per δ-SNLI example — labels: {label_source}", fontsize=10)
    if warning:
        fig.text(0.5, 0.925, warning, ha="center", fontsize=9, color=(0.75, 0.0, 0.0), gid=NOTE_GID)
    fig.tight_layout(rect=(0, 0, 0.84, 0.91 if warning else 0.95))
    return fig


def label_distribution(labeled: pd.DataFrame, label_source: str = ""):
    """Figure 5: counts of the fine-grained labels over all valid atomic sub-problems."""
    values = pd.to_numeric(
        labeled["label"].where(labeled["label"].apply(lambda v: not isinstance(v, str))), errors="coerce"
    )
    counts = values.value_counts().reindex(SCALE, fill_value=0)
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.bar([f"{v:+d}" if v else "0" for v in SCALE], counts.values,
           color=[(0.8, 0.15, 0.15), (0.9, 0.5, 0.5), (0.7, 0.7, 0.7), (0.5, 0.8, 0.5), (0.13, 0.55, 0.13)])
    for i, c in enumerate(counts.values):
        ax.text(i, c, f"{100 * c / max(counts.sum(), 1):.1f}%", ha="center", va="bottom", fontsize=8)
    ax.set_xlabel("atom label (−2 strongly weakens … +2 strongly strengthens)")
    ax.set_ylabel("atomic sub-problems")
    ax.set_title(f"Fine-grained atom labels — {label_source}", fontsize=9)
    fig.tight_layout()
    return fig


def atoms_per_example(summary: pd.DataFrame, label_source: str = ""):
    """Figure 6: number of (valid) atoms per example (top) and number of critical atoms (bottom)."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 5))
    for ax, col, name in ((top, "n_valid", "valid atoms"), (bottom, "n_critical", "critical atoms")):
        counts = summary[col].value_counts().sort_index()
        ax.bar(counts.index.astype(int), counts.values, color="steelblue")
        ax.set_xlabel(f"{name} per example")
        ax.set_ylabel("examples")
    top.set_title(f"Atoms per δ-SNLI example — labels: {label_source}", fontsize=9)
    fig.tight_layout()
    return fig


def critical_share(summary: pd.DataFrame, label_source: str = ""):
    """Figure 7: share of an example's valid atoms that are critical; the text gives the share of examples at 1."""
    s = summary[summary["n_valid"] > 0]
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.hist(s["critical_share"].dropna(), bins=np.linspace(0, 1, 11), color="slateblue", edgecolor="white")
    all_share = 100 * float((s["critical_share"] == 1).mean()) if len(s) else float("nan")
    ax.set_xlabel("critical atoms / valid atoms")
    ax.set_ylabel("updates (examples)")
    ax.set_title(f"{all_share:.0f}% of updates target all valid atoms at once — labels: {label_source}", fontsize=9)
    fig.tight_layout()
    return fig


def consistency_by_label(t2: pd.DataFrame, tier: str, paper: pd.DataFrame | None = None):
    """Table 2 columns 5-7 (logical consistency by predicted label) as grouped bars, one group per model: ours,
    then the paper's printed rows (`paper`; default: its Table 2 from the paper values) hatched beside them."""
    from .report import TABLE2_METRICS, paper_reference

    cols = ["consistency_pred_entailment", "consistency_pred_neutral", "consistency_pred_contradiction"]
    paper = paper_reference("atoms-table-2", TABLE2_METRICS) if paper is None else paper
    groups = [(str(m), r, False) for m, r in t2.set_index("model")[cols].iterrows()]
    groups += [(f"paper: {m}", r, True) for m, r in paper.set_index("model")[cols].iterrows()]
    colors = figures.palette(3)
    fig, ax = plt.subplots(figsize=(9, 3.8))
    width = 0.8 / len(cols)
    for i, (_, row, printed) in enumerate(groups):
        for j, col in enumerate(cols):
            ax.bar(i - 0.4 + width * (j + 0.5), row[col], width, color=colors[j], alpha=0.5 if printed else 1.0,
                   hatch="///" if printed else None, edgecolor="0.25" if printed else colors[j], linewidth=0.6)
    ax.axvline(len(t2) - 0.5, color="0.4", lw=0.8, ls=":")
    ax.set_xticks(range(len(groups)), [g[0] for g in groups], rotation=25, ha="right", fontsize=9)
    ax.set_ylabel("logical consistency (%)")
    ax.set_ylim(0, 100)
    handles = [Patch(color=c, label=col.rsplit("_", 1)[-1]) for c, col in zip(colors, cols)]
    handles.append(Patch(facecolor="white", edgecolor="0.25", hatch="///", label="printed in the paper\n(Table 2)"))
    ax.legend(handles=handles, title="predicted label", loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=9)
    ax.set_title(f"Consistency by predicted label, ours (left) and the paper's (hatched) — tier {tier}\n"
                 "no bar: the model never predicted it", fontsize=10)
    fig.tight_layout()
    return fig


def ic_intervals(t4: pd.DataFrame, tier: str, label_source: str, warning: str = "",
                 paper: pd.DataFrame | None = None):
    """Table 4 as points with their bootstrap 95% intervals, one row per model (None when no bucket was scored),
    below them the paper's printed I_C per model (`paper`; default: its Table 4 from the paper values) as open
    diamonds; the axis spans I_C's range, 50-100% (θ² + (1 − θ)² ≥ ½); `warning` (e.g. the method-demonstration
    note) is printed on the figure."""
    from .report import TABLE4_METRICS, paper_reference

    if not len(t4) or t4["buckets"].sum() <= 0:
        return None
    paper = paper_reference("atoms-table-4", TABLE4_METRICS) if paper is None else paper
    rows = len(t4) + len(paper)
    fig, ax = plt.subplots(figsize=(6.5, 1.4 + 0.32 * rows))
    ic, low, high = (t4[c].to_numpy(dtype=float) for c in ("inferential_consistency", "ci_low", "ci_high"))
    ax.errorbar(ic, range(len(t4)), xerr=[ic - low, high - ic], fmt="o", capsize=3,
                label="ours (bootstrap 95% CI)")
    at = range(len(t4), rows)
    figures.paper_marks(ax, at, paper["inferential_consistency"].tolist(), horizontal=True,
                        label="printed in the paper (Table 4)")
    if len(paper):
        ax.axhline(len(t4) - 0.5, color="0.5", lw=0.8, ls=":")
    ax.set_yticks(range(rows), [*t4["model"], *(f"paper: {m}" for m in paper["model"])], fontsize=9)
    ax.set_ylim(rows - 0.4, -0.6)
    ax.set_xlim(48, 102)
    ax.set_xlabel("inferential consistency (%)")
    ax.legend(fontsize=8, loc="lower left")
    title = f"I_C with bootstrap 95% CI — {tier}\nlabels: {label_source}"
    ax.set_title(f"{warning}\n{title}" if warning else title, fontsize=9, color="darkred" if warning else "black",
                 gid=NOTE_GID if warning else None)
    fig.tight_layout()
    return fig
