"""PhrasIS evaluation scenarios and the seeded 80/20 train/validation split (paper §3-§4).

Two tracks (Positives: the six related labels, no UNR pairs; All: all seven labels) times three sources
(Images, Headlines, All = both) give the paper's six evaluation scenarios:

>>> [s.key for s in SCENARIOS]
['Positives-I', 'Positives-H', 'Positives-A', 'All-I', 'All-H', 'All-A']
>>> scenario("Positives-H").labels
('EQUI', 'FORW', 'BACK', 'SIMI', 'REL', 'OPPO')

Validation is an 80/20 split of train, stratified by (source, polarity, label) and seeded; one split serves
every scenario (a scenario's validation rows are the split's rows that belong to it), so the "seen"
coherence split of §5 is the same pairs whichever model is scored on it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from .loaders import PHRASIS_LABELS

POSITIVE_LABELS = tuple(label for label in PHRASIS_LABELS if label != "UNR")
TRACKS = ("positives", "all")
SOURCES = ("images", "headlines", "all")
TRACK_NAMES = {"positives": "Positives", "all": "All"}
SOURCE_CODES = {"images": "I", "headlines": "H", "all": "A"}
STRATA = ("source", "polarity", "label")  # columns the validation split and quick samples are stratified by
QUICK_SIZES = {"train": {"positives": 400, "negatives": 300}, "test": {"positives": 300, "negatives": 200}}


@dataclass(frozen=True)
class Scenario:
    """One of the six evaluation scenarios."""

    track: str  # 'positives' (related pairs only, 6 labels) or 'all' (7 labels, UNR included)
    source: str  # 'images', 'headlines' or 'all' (both sources)

    def __post_init__(self):
        if self.track not in TRACKS or self.source not in SOURCES:
            raise ValueError(f"scenario needs track in {TRACKS} and source in {SOURCES}, "
                             f"got {self.track!r}, {self.source!r}")

    @property
    def key(self) -> str:
        """Short name used as a table column, e.g. 'Positives-I'."""
        return f"{TRACK_NAMES[self.track]}-{SOURCE_CODES[self.source]}"

    @property
    def labels(self) -> tuple[str, ...]:
        """Output labels of a classifier trained for this scenario."""
        return POSITIVE_LABELS if self.track == "positives" else PHRASIS_LABELS

    def select(self, df: pd.DataFrame) -> pd.DataFrame:
        """Rows of df (PhrasIS schema) that belong to this scenario.

        >>> df = pd.DataFrame({"source": ["images", "headlines", "images"],
        ...                    "polarity": ["positives"] * 2 + ["negatives"]})
        >>> scenario("Positives-I").select(df).index.tolist(), scenario("All-I").select(df).index.tolist()
        ([0], [0, 2])
        """
        keep = pd.Series(True, index=df.index)
        if self.track == "positives":
            keep &= df["polarity"] == "positives"
        if self.source != "all":
            keep &= df["source"] == self.source
        return df[keep]


SCENARIOS = tuple(Scenario(t, s) for t in TRACKS for s in SOURCES)
SCENARIO_KEYS = tuple(s.key for s in SCENARIOS)


def scenario(key: str) -> Scenario:
    """Scenario by key ('Positives-I', ..., 'All-A')."""
    for s in SCENARIOS:
        if s.key == key:
            return s
    raise KeyError(f"unknown scenario {key!r}; known: {list(SCENARIO_KEYS)}")


def stratified_take(df: pd.DataFrame, frac: float, seed: int, by: Sequence[str] = STRATA) -> pd.Index:
    """Index of a seeded sample holding round(frac * n) rows of every stratum (at least 0, at most n).

    >>> df = pd.DataFrame({"label": ["A"] * 10 + ["B"] * 5})
    >>> chosen = stratified_take(df, 0.2, seed=0, by=["label"])
    >>> sorted(df.loc[chosen, "label"].value_counts().items())
    [('A', 2), ('B', 1)]
    """
    rng = np.random.default_rng(seed)
    chosen = []
    for _, group in df.groupby(list(by), sort=True):
        k = int(round(frac * len(group)))
        chosen.extend(rng.choice(group.index.to_numpy(), size=k, replace=False).tolist())
    return pd.Index(sorted(chosen))


def validation_mask(train: pd.DataFrame, frac: float = 0.2, seed: int = 0) -> pd.Series:
    """Boolean Series: True for the stratified, seeded validation share of `train` (the paper's 80/20 split)."""
    mask = pd.Series(False, index=train.index)
    mask[stratified_take(train, frac, seed)] = True
    return mask


def quick_sample(df: pd.DataFrame, sizes: dict[str, int], seed: int) -> pd.DataFrame:
    """Seeded stratified sample with sizes[polarity] rows per polarity (quick mode)."""
    parts = []
    for polarity, n in sizes.items():
        part = df[df["polarity"] == polarity]
        if len(part):
            parts.append(part.loc[stratified_take(part, min(1.0, n / len(part)), seed)])
    return pd.concat(parts).sort_index() if parts else df.iloc[:0]


@dataclass(frozen=True)
class PhrasisSplits:
    """Train (with the validation flag), test, and how they were drawn."""

    train: pd.DataFrame  # all train pairs (both sources, both polarities); column `validation` marks the 20%
    test: pd.DataFrame  # all test pairs
    seed: int = 0  # seed of the validation split (and of quick samples)
    quick: bool = False  # True when train/test are seeded quick-mode samples

    def fit_rows(self, sc: Scenario, final: bool = True) -> pd.DataFrame:
        """Training rows of a scenario: all train (final model, as in the paper) or only the 80% part."""
        rows = sc.select(self.train)
        return rows if final else rows[~rows["validation"]]

    def validation_rows(self, sc: Scenario) -> pd.DataFrame:
        rows = sc.select(self.train)
        return rows[rows["validation"]]

    def test_rows(self, sc: Scenario) -> pd.DataFrame:
        return sc.select(self.test)

    def label_counts(self, which: str = "test") -> pd.DataFrame:
        """Pairs per gold label (rows) and scenario (columns) of the test (or 'train') set."""
        rows = self.test if which == "test" else self.train
        counts = {sc.key: sc.select(rows)["label"].value_counts() for sc in SCENARIOS}
        return pd.DataFrame(counts).reindex([lab for lab in PHRASIS_LABELS]).fillna(0).astype(int)

    def sizes(self) -> pd.DataFrame:
        """Pairs per scenario in train / validation / test, and the reversible (EQUI/FORW/BACK) pairs of each."""
        rows = []
        for sc in SCENARIOS:
            val, test = self.validation_rows(sc), self.test_rows(sc)
            directional = ["EQUI", "FORW", "BACK"]
            rows.append({"scenario": sc.key, "labels": len(sc.labels), "train": len(self.fit_rows(sc)),
                         "train (80%)": len(self.fit_rows(sc, final=False)), "validation (20%)": len(val),
                         "test": len(test),
                         "seen pairs (validation EQUI/FORW/BACK)": int(val["label"].isin(directional).sum()),
                         "unseen pairs (test EQUI/FORW/BACK)": int(test["label"].isin(directional).sum()),
                         "quick sample": self.quick})
        return pd.DataFrame(rows)


def load_splits(quick: bool = False, seed: int = 0, frac: float = 0.2, train: pd.DataFrame | None = None,
                test: pd.DataFrame | None = None) -> PhrasisSplits:
    """PhrasIS train/test through the loader; quick mode takes seeded stratified samples (QUICK_SIZES)."""
    from .loaders import load_phrasis

    train = load_phrasis("train") if train is None else train
    test = load_phrasis("test") if test is None else test
    if quick:
        train = quick_sample(train, QUICK_SIZES["train"], seed)
        test = quick_sample(test, QUICK_SIZES["test"], seed)
    train = train.assign(validation=validation_mask(train, frac, seed))
    return PhrasisSplits(train=train, test=test, seed=seed, quick=quick)
