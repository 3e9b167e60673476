"""Figure helpers shared by the papers' plots: groups too small for a box, the paper's value beside ours, and a
method-demonstration note printed in the image itself.

Readers see the book's figures about 800 px wide, so every helper here writes text at 8 pt or more.

>>> import matplotlib; matplotlib.use("Agg")
>>> import matplotlib.pyplot as plt, pandas as pd
>>> fig, ax = plt.subplots()
>>> data = pd.DataFrame({"slot": ["C"] * 6 + ["E"] * 2, "v": [1, 2, 3, 4, 5, 6, 1, 2]})
>>> shown = boxes_or_points(ax, data, "slot", "v", None, ["C", "E", "N"])
>>> [(g["x"], g["n"], g["box"]) for g in shown]
[('C', 6, True), ('E', 2, False), ('N', 0, False)]
>>> label_counts(ax, shown); sorted(t.get_text() for t in ax.texts)
['n = 0', 'n = 2', 'n = 6']
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

MIN_BOX_N = 5
"""A group with fewer values than this is drawn as its points only: a box of one to four values draws quartiles that
are not there (seaborn draws n = 1 as a bare line and leaves n = 0 as a gap a reader cannot tell from missing data).
"""

PAPER_STYLE = {"marker": "D", "color": "black", "markersize": 6, "markerfacecolor": "white", "markeredgewidth": 1.4,
               "linestyle": "none", "zorder": 5}
"""The paper's value: an open black diamond, the same in every figure."""


def palette(n: int) -> list:
    """`n` colours a colour-blind reader tells apart (seaborn's "colorblind", then "tab20" past ten)."""
    import seaborn as sns

    return list(sns.color_palette("colorblind" if n <= 10 else "tab20", n))


def _group_centre(i: int, j: int, n_levels: int, width: float = 0.8) -> float:
    """Centre of hue level `j` inside category `i` (seaborn's dodge layout: `width` split evenly)."""
    return i if n_levels == 1 else i - width / 2 + width / n_levels * (j + 0.5)


def boxes_or_points(ax, data: pd.DataFrame, x: str, y: str, hue: str | None, order: Sequence,
                    hue_order: Sequence = (), colors: Sequence | None = None, min_n: int = MIN_BOX_N,
                    seed: int = 0) -> list[dict]:
    """Per (`x`, `hue`) group: a box when it holds at least `min_n` values, and always its points; `n = k` under
    every group, "n = 0" included, so an empty group stays visible. Returns one dict per group
    (x, hue, n, centre, box).

    Groups are dodged like seaborn's (width 0.8 split across hue levels); the y range grows at the bottom to make
    room for the counts. Jitter is seeded, so the same data draws the same image.
    """
    levels = list(hue_order) if hue and len(hue_order) else [None]
    colors = list(colors) if colors is not None else palette(len(levels))
    width = 0.8 / len(levels)
    rng = np.random.default_rng(seed)
    shown = []
    for i, xv in enumerate(order):
        for j, hv in enumerate(levels):
            sub = data[(data[x] == xv) & (data[hue] == hv)] if hue else data[data[x] == xv]
            values = sub[y].dropna().to_numpy(dtype=float)
            centre = _group_centre(i, j, len(levels))
            box = len(values) >= min_n
            if box:
                ax.boxplot([values], positions=[centre], widths=width * 0.8, patch_artist=True, showfliers=False,
                           manage_ticks=False, orientation="vertical",
                           boxprops={"facecolor": colors[j], "alpha": 0.55, "edgecolor": "0.2"},
                           medianprops={"color": "0.1", "linewidth": 1.5}, whiskerprops={"color": "0.2"},
                           capprops={"color": "0.2"})
            if len(values):
                jitter = rng.uniform(-1, 1, len(values)) * width * (0.15 if box else 0.25)
                ax.scatter(centre + jitter, values, s=10 if box else 28, color=colors[j], edgecolors="0.15",
                           linewidths=0.5, alpha=0.8 if box else 1.0, zorder=3)
            shown.append({"x": xv, "hue": hv, "n": len(values), "centre": centre, "box": box})
    ax.set_xticks(range(len(order)), [str(o) for o in order])
    ax.set_xlim(-0.5, len(order) - 0.5)
    return shown


def label_counts(ax, shown: list[dict], rotate: bool = False, grow: bool = True) -> None:
    """Write each group's n ("n = 0" in grey italics) just above the bottom of the axes, under its group; `grow`
    extends the y range downwards so no count sits on a point (shared y axes: grow once, on the first)."""
    if grow:
        lo, hi = ax.get_ylim()
        ax.set_yticks([t for t in ax.get_yticks() if lo <= t <= hi])  # no ticks in the room made for the counts
        ax.set_ylim(lo - 0.14 * (hi - lo), hi)
    for g in shown:
        ax.text(g["centre"], 0.015, f"n = {g['n']}", transform=ax.get_xaxis_transform(), ha="center", va="bottom",
                fontsize=9, rotation=90 if rotate else 0, color="0.45" if g["n"] == 0 else "0.15",
                style="italic" if g["n"] == 0 else "normal")


def group_handles(labels: Sequence[str], colors: Sequence, min_n: int = MIN_BOX_N) -> list:
    """Legend handles: one coloured patch per group label, and a note on what a group below `min_n` shows."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=c, alpha=0.55, edgecolor="0.2", label=str(lab)) for lab, c in zip(labels, colors)]
    handles.append(Line2D([], [], marker="o", color="0.5", markeredgecolor="0.15", linestyle="none",
                          label=f"points only: n < {min_n}"))
    return handles


def paper_marks(ax, positions: Sequence[float], values: Sequence[float | None], *, horizontal: bool = False,
                label: str = "paper") -> int:
    """Draw the paper's value at each position (None/NaN: the paper prints none there) as an open black diamond;
    returns how many were drawn. `horizontal`: positions are on the y axis (a horizontal bar chart)."""
    pairs = [(p, v) for p, v in zip(positions, values) if v is not None and not pd.isna(v)]
    if not pairs:
        return 0
    ps, vs = zip(*pairs)
    xs, ys = (vs, ps) if horizontal else (ps, vs)
    ax.plot(xs, ys, label=label, **PAPER_STYLE)
    return len(pairs)


NOTE_GID = "demonstration-note"  # the gid of a figure's method-demonstration text (`demonstration_note`)


def demonstration_note(fig, text: str, fontsize: float = 9) -> bool:
    """Print a method-demonstration warning inside the image (a boxed note above the axes, wrapped to the figure's
    width), so that it travels with the PNG wherever the figure is shown, not only in its caption and sidecar.
    Returns False, drawing nothing, when `text` is empty or the figure already shows such a note (an artist with
    gid `NOTE_GID`, e.g. a plot that prints the warning in its title)."""
    import textwrap

    from matplotlib.text import Text

    if not text.strip() or any(t.get_gid() == NOTE_GID for t in fig.findobj(Text)):
        return False
    width = max(int(fig.get_figwidth() * 72 / (fontsize * 0.55)), 40)  # characters that fit across the figure
    fig.text(0.5, 1.0, "\n".join(textwrap.wrap(f"⚠ {text.strip()}", width)), ha="center", va="bottom",
             fontsize=fontsize, color="#7a3b00", gid=NOTE_GID,
             bbox={"boxstyle": "round,pad=0.4", "facecolor": "#fff4e0", "edgecolor": "#d08a2e"})
    return True
