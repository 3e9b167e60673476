"""Figures of the PhrasIS notebooks: contingency matrices (Figs 2-3) and the coherence comparison.

The coherence comparison draws one panel per scenario and, per model, two bars (seen, unseen). A bar's
full length is SoftCoh and its dark part HardCoh: HardCoh <= SoftCoh by definition, so the light part is
the share of pairs that are coherent but wrong, and no series can hide another. Scenarios are categories,
so nothing joins them with a line.

>>> summary = pd.DataFrame({"model": ["svm"] * 2, "split": ["seen", "unseen"], "scenario": ["All-A"] * 2,
...                         "SoftCoh": [0.9, 0.8], "HardCoh": [0.6, 0.5], "n_pairs": [40, 50],
...                         "tier": ["offline"] * 2})
>>> fig = plot_coherence(summary)
>>> [ax.get_title() for ax in fig.axes], len(fig.axes[0].patches), len(fig.axes[0].lines)  # and the paper's row
(['All-A (40 seen / 50 unseen pairs)'], 8, 1)
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .data import SCENARIO_KEYS

SPLIT_COLOURS = {"seen": "tab:blue", "unseen": "tab:orange"}  # seen: validation pairs; unseen: test pairs
SPLIT_NAMES = {"seen": "seen (validation)", "unseen": "unseen (test)"}
BY_CONSTRUCTION_MARK = " †"  # appended to the name of a model coherent by construction


def plot_contingency(frame: pd.DataFrame, labels: Sequence[str], title: str):
    """Raw-count and row-normalised contingency matrices side by side (as the paper's Figs 2-3)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ..evaluation import confusion

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    sns.heatmap(confusion(frame, labels), annot=True, fmt="d", cmap="Blues", ax=axes[0], cbar=False)
    sns.heatmap(confusion(frame, labels, normalize=True), annot=True, fmt=".2f", cmap="Blues", vmin=0, vmax=1,
                ax=axes[1], cbar=False)
    axes[0].set_title("raw counts", fontsize=9)
    axes[1].set_title("normalised by gold label", fontsize=9)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def contingency_figure(rows: pd.DataFrame, summary: pd.DataFrame, model: str, scenario: str = "Positives-A"):
    """`plot_contingency` of one model's test predictions (`predict_rows`) on one scenario, titled with its
    tier and weighted F (from `f1_summary`)."""
    from .data import scenario as scenario_by_key

    frame = rows[(rows["model"] == model) & (rows["scenario"] == scenario)]
    if not len(frame):
        raise ValueError(f"no test predictions of {model!r} on {scenario}")
    score = summary.set_index(["model", "scenario"]).loc[(model, scenario), "weighted_F1"]
    return plot_contingency(frame, scenario_by_key(scenario).labels,
                            f"{model} ({frame['tier'].iloc[0]}) on {scenario}: weighted F {score:.2f}")


def _panel_grid(scenarios: Sequence[str]) -> tuple[int, int]:
    """Rows x columns holding exactly the scenarios: tracks x sources when that grid is full, else one row."""
    tracks = list(dict.fromkeys(s.split("-")[0] for s in scenarios))
    sources = list(dict.fromkeys(s.split("-")[1] for s in scenarios))
    return (len(tracks), len(sources)) if len(tracks) * len(sources) == len(scenarios) else (1, len(scenarios))


PAPER_BEST = "paper's best (Tables 4-7)"  # the row of `paper_best_coherence` in the coherence comparison


def paper_best_coherence() -> pd.DataFrame:
    """The paper's best printed SoftCoh and HardCoh per scenario and split (Tables 4-7, each the highest value of
    any of its models; HardCoh <= SoftCoh still holds), as `coherence_summary` rows of model `PAPER_BEST`."""
    from .analysis import paper_long
    from .paper import COHERENCE_TABLES

    rows: dict = {}
    for number, (split, metric) in COHERENCE_TABLES.items():
        best = paper_long(f"phrasis-table-{number}").groupby("scenario")["value"].max()
        for scenario, value in best.items():
            rows.setdefault((split, scenario), {"model": PAPER_BEST, "split": split, "scenario": scenario,
                                                "tier": "paper (printed)"})[metric] = value
    return pd.DataFrame(list(rows.values()))


def plot_coherence(summary: pd.DataFrame, models: Sequence[str] | None = None, by_construction: Sequence[str] = (),
                   paper: pd.DataFrame | None = None):
    """SoftCoh and HardCoh of every model on seen and unseen pairs (rows of `coherence_summary`), and in the last
    row, hatched, the paper's best printed values (`paper`; default `paper_best_coherence()`).

    One panel per scenario present (tracks as rows, sources as columns; no empty panel), models on the y
    axis in `models` order (default: as they appear). Per model: a seen and an unseen bar; the whole bar is
    SoftCoh, its dark part HardCoh. A (model, split) without a score is written 'n/a' on its row instead of
    being left blank. Models in `by_construction` (coherent by construction, `TrainedModels.by_construction`)
    carry a dagger and a footnote.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    paper = paper_best_coherence() if paper is None else paper
    printed = list(dict.fromkeys(paper["model"]))
    summary = pd.concat([summary, paper[paper["scenario"].isin(set(summary["scenario"]))]], ignore_index=True)
    models = [*(models or dict.fromkeys(summary["model"][~summary["model"].isin(printed)])), *printed]
    printed = set(printed)
    scenarios = [k for k in SCENARIO_KEYS if k in set(summary["scenario"])]
    if not models or not scenarios:
        raise ValueError("nothing to plot: the summary has no model or no known scenario")
    nrows, ncols = _panel_grid(scenarios)
    height = 0.45 * len(models) + 1.1
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.9 * ncols + 2.6, height * nrows + 0.9), sharex=True,
                             sharey=True, squeeze=False)
    y = np.arange(len(models))
    offsets = {"seen": -0.2, "unseen": 0.2}
    values = summary.set_index(["model", "split", "scenario"])
    for ax, key in zip(axes.flat, scenarios):
        for split, dy in offsets.items():
            for i, model in enumerate(models):
                if (model, split, key) not in values.index:
                    ax.text(0.01, y[i] + dy, "n/a", va="center", fontsize=8, color="0.4")
                    continue
                cell = values.loc[(model, split, key)]
                colour = SPLIT_COLOURS[split]
                hatch = "///" if model in printed else None
                ax.barh(y[i] + dy, cell["SoftCoh"], height=0.38, color=colour, alpha=0.3, edgecolor=colour,
                        linewidth=0.6, hatch=hatch)
                ax.barh(y[i] + dy, cell["HardCoh"], height=0.38, color=colour, hatch=hatch, edgecolor="white",
                        linewidth=0)
        if printed:
            ax.axhline(len(models) - len(printed) - 0.5, color="0.4", lw=0.8, ls=":")
        n = summary[summary["scenario"] == key].dropna(subset=["n_pairs"]).groupby("split")["n_pairs"].max()
        counts = " / ".join(f"{int(n[s])} {s}" for s in offsets if s in n.index)
        ax.set_title(f"{key} ({counts} pairs)", fontsize=9)
        ax.set_xlim(0, 1.0)
        ax.set_xticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
    marked = set(by_construction)
    axes[0, 0].set_yticks(y)
    axes[0, 0].set_yticklabels([m + (BY_CONSTRUCTION_MARK if m in marked else "") for m in models], fontsize=10)
    axes[0, 0].invert_yaxis()
    for row in axes:
        row[0].tick_params(axis="y", labelsize=10)
    for ax in axes[-1]:
        ax.set_xlabel("coherence", fontsize=10)
    shades = (("SoftCoh", 0.3), ("HardCoh", 1.0))
    handles = [Patch(facecolor=SPLIT_COLOURS[s], alpha=alpha, edgecolor=SPLIT_COLOURS[s],
                     label=f"{m}, {SPLIT_NAMES[s]}") for s in offsets for m, alpha in shades]
    if printed:
        handles.append(Patch(facecolor="white", edgecolor="0.3", hatch="///", label="printed in the paper"))
    note = ("† coherent by construction: SoftCoh is 1 whatever it predicts (not ranked)"
            if marked & set(models) else "")
    legend_inches = 1.05 if note else 0.85  # two rows of 10 pt entries under a 10 pt title
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=10, frameon=False,
               title="bar = SoftCoh, dark part = HardCoh" + (f"\n{note}" if note else ""), title_fontsize=10)
    fig.tight_layout(rect=(0, legend_inches / fig.get_figheight(), 1, 1))
    return fig


__all__ = ["plot_contingency", "contingency_figure", "plot_coherence", "paper_best_coherence", "PAPER_BEST",
           "SPLIT_COLOURS", "BY_CONSTRUCTION_MARK"]
