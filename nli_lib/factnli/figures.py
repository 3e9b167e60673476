"""FactNLI figures a reader can read: the filter of one level (Fig. 2b analogue) and accuracy by level.

`draw_filter` draws every candidate of a level and the truth set it was checked against, numbered, with
the full texts in a key beside the graph (nothing clipped): truth elements (squares, T1..) on the left,
candidates the truth set rejected (grey circles) in the middle with the blocking edge (red: contradicts,
orange dashes: entails), and the retained candidates on the right with their neutral edges (grey), the
entailments among them (purple arrows) and the maximum clique (filled blue).

`accuracy_figure` draws accuracy by level per model with Wilson 95% intervals, each model's points shifted
sideways so intervals never sit on top of each other, the n per level in the legend and a chance line.
"""
from __future__ import annotations

import textwrap
from typing import Sequence

import numpy as np
import pandas as pd

from .filtering import FilterResult

_STYLE = {"contradicts truth set": ("tab:red", "-"), "entailed by truth set": ("tab:orange", "--")}


def filter_layout(result: FilterResult, truth: Sequence[str]) -> dict:
    """Node positions: truth set at x=0, rejected candidates at x=1, retained candidates on a circle at x~2.6."""
    pos = {}
    truth = list(dict.fromkeys(truth))
    for i, t in enumerate(truth):
        pos[("T", t)] = (0.0, _spread(i, len(truth)))
    rejected = [c for c in result.candidates if c not in result.retained]
    for i, c in enumerate(rejected):
        pos[("C", c)] = (1.0, _spread(i, len(rejected)))
    n = len(result.retained)
    for i, c in enumerate(result.retained):
        angle = np.pi / 2 - 2 * np.pi * i / max(n, 1)
        pos[("C", c)] = (2.6 + (0.55 * np.cos(angle) if n > 1 else 0), 0.8 * np.sin(angle) if n > 1 else 0.0)
    return pos


def _spread(i: int, n: int) -> float:
    return 0.0 if n <= 1 else 1.0 - 2.0 * i / (n - 1)


def filter_key(result: FilterResult, truth: Sequence[str]) -> list[tuple[str, str, str]]:
    """(node id, status, text) for every truth element and candidate, in drawing order.

    >>> from nli_lib.factnli.filtering import TableJudge, filter_facts
    >>> r = filter_facts(["t"], ["a", "b"], TableJudge({("t", "b"): "contradiction"}))
    >>> filter_key(r, ["t"])
    [('T1', 'truth set', 't'), ('C1', 'selected', 'a'), ('C2', 'contradicts T1', 'b')]
    """
    truth = list(dict.fromkeys(truth))
    tid = {t: f"T{i + 1}" for i, t in enumerate(truth)}
    rows = [(tid[t], "truth set", t) for t in truth]
    for i, c in enumerate(result.candidates):
        decision, blocking = result.decisions.get(c, ("", ""))
        status = decision
        if blocking in tid:
            status = f"{decision.split()[0]} {tid[blocking]}"
        rows.append((f"C{i + 1}", status, c))
    return rows


def draw_filter(result: FilterResult, truth: Sequence[str], title: str = "", width: float = 12.0):
    """The level's filter as a figure: graph on the left, a key with every full text on the right."""
    import matplotlib.pyplot as plt

    truth = list(dict.fromkeys(truth))
    key = filter_key(result, truth)
    lines = sum(len(textwrap.wrap(f"{k} [{s}] {t}", 62)) for k, s, t in key)
    height = max(4.5, 0.22 * lines + 1.2)
    fig, (ax, kx) = plt.subplots(1, 2, figsize=(width, height), gridspec_kw={"width_ratios": [1.1, 1]})
    pos = filter_layout(result, truth)
    ids = {("T", t): k for k, _, t in key[: len(truth)]}
    ids.update({("C", c): k for k, _, c in key[len(truth):]})
    for c in result.candidates:  # truth-set rejections: the blocking element and the kind of relation
        decision, blocking = result.decisions.get(c, ("", ""))
        if decision in _STYLE and ("T", blocking) in pos:
            colour, style = _STYLE[decision]
            (x0, y0), (x1, y1) = pos[("T", blocking)], pos[("C", c)]
            ax.annotate("", (x1, y1), (x0, y0), arrowprops=dict(arrowstyle="-|>", color=colour, linestyle=style,
                                                                 shrinkA=9, shrinkB=9, lw=1.2))
    for u, v in result.neutral_graph.edges():
        (x0, y0), (x1, y1) = pos[("C", u)], pos[("C", v)]
        ax.plot([x0, x1], [y0, y1], color="0.75", lw=1, zorder=1)
    for u, v in result.entailment_graph.edges():
        ax.annotate("", pos[("C", v)], pos[("C", u)], arrowprops=dict(arrowstyle="-|>", color="tab:purple",
                                                                      shrinkA=9, shrinkB=9, lw=1.2))
    for node, (x, y) in pos.items():
        kind, text = node
        if kind == "T":
            style = dict(marker="s", color="0.85", markeredgecolor="0.3")
        elif text in result.clique:
            style = dict(marker="o", color="tab:blue", markeredgecolor="tab:blue")
        elif text in result.retained:
            style = dict(marker="o", color="white", markeredgecolor="tab:blue")
        else:
            style = dict(marker="o", color="0.6", markeredgecolor="0.35")
        ax.plot([x], [y], markersize=17, zorder=3, linestyle="none", **style)
        ax.text(x, y, ids[node], ha="center", va="center", fontsize=7, zorder=4,
                color="white" if text in result.clique and kind == "C" else "black")
    rejected_label = "rejected by\ntruth set" + ("" if any(k == "C" and t not in result.retained for k, t in pos)
                                                   else "\n(none)")
    for x, label in ((0, "truth set"), (1, rejected_label), (2.6, "retained: neutral graph")):
        ax.text(x, 1.28, label, ha="center", va="bottom", fontsize=8, color="0.3")
    ax.set_xlim(-0.4, 3.4)
    ax.set_ylim(-1.7, 1.5)
    ax.set_axis_off()
    handles = [plt.Line2D([], [], color="tab:red", label="contradicts (truth → candidate)"),
               plt.Line2D([], [], color="tab:orange", linestyle="--", label="entails (truth → candidate)"),
               plt.Line2D([], [], color="0.75", label="neutral pair"),
               plt.Line2D([], [], color="tab:purple", label="entailment between retained"),
               plt.Line2D([], [], marker="o", color="tab:blue", linestyle="none", label="maximum clique (fused)"),
               plt.Line2D([], [], marker="o", color="white", markeredgecolor="tab:blue", linestyle="none",
                          label="retained, outside clique")]
    ax.legend(handles=handles, loc="lower center", fontsize=7, ncol=2, frameon=False, bbox_to_anchor=(0.5, -0.08))
    kx.set_axis_off()
    text_lines = []
    for k, status, text in key:
        wrapped = textwrap.wrap(f"{k} [{status}] {text}", 62, subsequent_indent="      ")
        text_lines += wrapped
    kx.text(0, 1, "\n".join(text_lines), va="top", ha="left", fontsize=7.5, family="monospace",
            transform=kx.transAxes)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


PAPER_AVERAGE = "Average"  # the paper's Table 2 row averaging its models


def paper_accuracy_by_level(dataset: str = "SNLI") -> pd.DataFrame:
    """The paper's Table 2 accuracies (%) on `dataset` (SNLI | MNLI) as rows (model, level, accuracy), read from
    the paper values ('<model> <dataset> Acc L=<level>').

    >>> t = paper_accuracy_by_level(); sorted(set(t["level"])), "RoBERTa-large" in set(t["model"])
    ([0, 1, 2, 3], True)
    """
    from ..paper_values import paper_values_frame

    frame = paper_values_frame("factnli")
    frame = frame[frame["ref"] == "factnli-table-2"]
    parts = frame["quantity"].str.extract(rf"^(?P<model>.+) {dataset} Acc L=(?P<level>\d+)$")
    out = parts.assign(accuracy=frame["value"].to_numpy()).dropna(subset=["model"])
    return out.astype({"level": int}).reset_index(drop=True)


def _paper_curves(ax, paper: pd.DataFrame, dataset: str) -> None:
    """The paper's models as a grey band (lowest to highest per level) and its average as a dashed line."""
    models = paper[paper["model"] != PAPER_AVERAGE]
    if len(models):
        span = models.groupby("level")["accuracy"].agg(["min", "max"])
        ax.fill_between(span.index, span["min"], span["max"], color="0.85", zorder=0,
                        label=f"paper: its {models['model'].nunique()} models' range ({dataset} test)")
    mean = paper[paper["model"] == PAPER_AVERAGE].sort_values("level")
    if len(mean):
        ax.plot(mean["level"], mean["accuracy"], color="0.3", ls="--", lw=1.2, marker="D", markersize=5,
                markerfacecolor="white", label="paper: average of its models")


def accuracy_figure(acc: pd.DataFrame, title: str = "", chance: float = 100 / 3, paper: pd.DataFrame | None = None,
                    dataset: str = "SNLI"):
    """Accuracy (%) by level per model with Wilson 95% intervals, models dodged sideways (`accuracy_long` rows),
    over the paper's Table 2 on `dataset` (`paper`; default `paper_accuracy_by_level(dataset)`): its models' range
    as a grey band and their average as a dashed line.

    >>> acc = pd.DataFrame({"model": ["a", "a", "b", "b"], "tier": "offline", "level": [0, 1, 0, 1], "n": 10,
    ...                     "accuracy": [80, 60, 70, 50], "ci_low": [50, 30, 40, 20], "ci_high": [95, 85, 90, 80]})
    >>> fig = accuracy_figure(acc); [round(x, 2) for x in fig.axes[0].containers[0].lines[0].get_xdata()]
    [-0.06, 0.94]
    """
    import matplotlib.pyplot as plt

    models = list(dict.fromkeys(acc["model"]))
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    paper = paper_accuracy_by_level(dataset) if paper is None else paper
    _paper_curves(ax, paper[paper["level"].isin(set(acc["level"]))], dataset)
    width = 0.12 if len(models) > 1 else 0.0
    markers = "osD^v<>p"
    for i, model in enumerate(models):
        g = acc[acc["model"] == model].sort_values("level")
        shift = (i - (len(models) - 1) / 2) * width
        ns = sorted(set(g["n"]))
        n_text = f"n={ns[0]}" if len(ns) == 1 else f"n={ns[0]}–{ns[-1]}"
        ax.errorbar(g["level"] + shift, g["accuracy"], yerr=[g["accuracy"] - g["ci_low"], g["ci_high"] - g["accuracy"]],
                    marker=markers[i % len(markers)], capsize=4, lw=1.5, elinewidth=1.2,
                    label=f"{model} ({g['tier'].iloc[0]}, {n_text} per level)")
    ax.axhline(chance, color="0.6", linestyle=":", lw=1)
    ax.text(acc["level"].min() - 0.35, chance, "chance", va="bottom", ha="left", fontsize=7, color="0.4")
    levels = sorted(acc["level"].unique())
    ax.set_xticks(levels, [f"L={int(v)}" for v in levels])
    ax.set_xlim(min(levels) - 0.4, max(levels) + 0.4)
    ax.set_ylim(0, 100)
    ax.set_ylabel("accuracy (%), Wilson 95% CI")
    ax.set_xlabel("augmentation level")
    ax.grid(axis="y", color="0.92")
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: labels[i].startswith("paper:"))  # ours first, then the paper
    ax.legend([handles[i] for i in order], [labels[i] for i in order], fontsize=8.5, loc="upper center",
              bbox_to_anchor=(0.5, -0.16), frameon=False)  # below the axes: never on a point
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig
