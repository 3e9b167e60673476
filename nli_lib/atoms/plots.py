"""Figures of the atoms paper: Figure 2 (rug plot), Figure 5 (label distribution), Figures 6-7 (atoms per example).

All take the per-example summary of `defeasible.example_summary` (or the labelled sub-problems) and return
a matplotlib Figure; the label source goes in the title so no figure hides where its labels came from.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Patch

from .defeasible import SCALE, SCALE_NAMES

HUE = {"strengthener": (0.13, 0.55, 0.13), "weakener": (0.80, 0.15, 0.15)}
SHADE = {-2: 1.0, -1: 0.75, 0: 0.45, 1: 0.25, 2: 0.10}  # dark = weakening atoms, light = strengthening atoms
COUNT_COLS = {-2: "n_-2", -1: "n_-1", 0: "n_0", 1: "n_+1", 2: "n_+2"}


def rug_order(summary: pd.DataFrame) -> pd.DataFrame:
    """Examples with at least one valid atom, left to right by weakener-label share (ties: strengthener share)."""
    s = summary[summary["n_valid"] > 0].copy()
    return s.sort_values(
        ["weakener_share", "strengthener_share", "pair_id"], ascending=[True, False, True]
    ).reset_index(drop=True)


def rug_plot(summary: pd.DataFrame, label_source: str = "", ax=None):
    """Figure 2: one vertical slice per example, hue = full label, shading = its atoms' -2..+2 distribution."""
    s = rug_order(summary)
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(12, 3.2))
    x = np.arange(len(s))
    bottom = np.zeros(len(s))
    for v in SCALE:
        share = s[COUNT_COLS[v]] / s["n_valid"]
        colors = [(*HUE[t], SHADE[v]) for t in s["update_type"]]
        ax.bar(x, share, bottom=bottom, width=1.0, color=colors, linewidth=0)
        bottom += share.to_numpy()
    ax.set_xlim(-0.5, len(s) - 0.5)
    ax.set_ylim(0, 1)
    ax.set_xticks([])
    ax.set_ylabel("share of atom labels\n(−2 bottom … +2 top)")
    ax.set_xlabel(f"{len(s)} δ-SNLI examples, ordered by share of weakening atom labels")
    handles = [Patch(color=HUE["strengthener"], label="strengthener (full label)"),
               Patch(color=HUE["weakener"], label="weakener (full label)")]
    handles += [Patch(color=(0.3, 0.3, 0.3, SHADE[v]), label=f"{v:+d} {SCALE_NAMES[v]}" if v else "0 no effect")
                for v in SCALE]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    ax.set_title(f"Atomic sub-problem labels per δ-SNLI example — labels: {label_source}", fontsize=10)
    fig.tight_layout()
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
