"""The full MultiNLI dev sets and fine-tuning on MNLI, where the paper used them (§4.1, Table 3).

The paper's Table 3 is accuracy on the full MNLI dev sets (9,815 matched / 9,832 mismatched pairs with a
gold label), and its BERT / RoBERTa are fine-tuned on MNLI train. MultiNLI is online-only (manifest key
MNLI_KEY, ~227 MB): notebooks use it when a reader has fetched it once and otherwise say what is missing
(`missing_note`); they never start the download themselves.

    >>> dev = full_dev_sets(quick=False)                                   # doctest: +SKIP
    >>> table3_full_dev(dev, {"mine": clf.predict_frame(dev)})             # doctest: +SKIP
    >>> mnli_finetuned("google-bert/bert-base-uncased", epochs=3)          # doctest: +SKIP
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

import pandas as pd

from ..config import LABELS
from .systems import FULL_DEV, OVERLAP, accuracy_row, counterpart, stratified_sample  # noqa: F401

MNLI_KEY = "mnli_full/multinli_1.0.zip"  # manifest key of the official MultiNLI 1.0 archive
DEV_SPLITS = {"matched": "dev_matched", "mismatched": "dev_mismatched"}  # Table 3 split -> load_mnli split


def available() -> bool:
    """Whether the MultiNLI archive is at hand without network (offline mirror or download cache)."""
    from ..data import fetch

    return fetch.available(MNLI_KEY)


def missing_note(what: str) -> str:
    """What is missing and how to fetch it, for `what` (e.g. 'Table 3 on the full MNLI dev sets').

    >>> print(missing_note("Table 3 on the full dev sets"))   # doctest: +ELLIPSIS
    Table 3 on the full dev sets needs MultiNLI 1.0 (manifest key mnli_full/multinli_1.0.zip, ~227 MB, ...
    """
    return (f"{what} needs MultiNLI 1.0 (manifest key {MNLI_KEY}, ~227 MB, online-only), which is neither in the "
            f"offline mirror nor in the download cache. Fetch it once with network access: "
            f"`env -u NLI_DATA_MIRROR nli-companion fetch {MNLI_KEY}` (the mirror serves no online-only file), "
            f"then re-run this notebook.")


def full_dev_sets(quick: bool = False, seed: int = 0, n_quick: int = 400,
                  path: str | Path | None = None) -> pd.DataFrame:
    """MNLI dev matched + mismatched (pairs with a gold label), with a `split` column ('matched' /
    'mismatched'); quick runs: a seeded, label-stratified sample of `n_quick` pairs per split. `path`: an
    archive laid out like multinli_1.0.zip (tests); otherwise the manifest file (never downloaded here:
    check `available()` first, `load_mnli` would fetch it)."""
    from ..data.loaders import load_mnli

    parts = []
    for split, member in DEV_SPLITS.items():
        df = load_mnli(member, path=path).assign(split=split)
        parts.append(stratified_sample(df, n_quick, seed) if quick else df)
    return pd.concat(parts, ignore_index=True)


def table3_full_dev(dev: pd.DataFrame, scored: Mapping[str, pd.DataFrame],
                    stand_ins: Mapping | None = None) -> pd.DataFrame:
    """Table 3 on the full MNLI dev sets: per system and split, n, correct, accuracy with a Wilson 95%
    interval, the paper's value and the relation to the paper's system (`systems.counterpart`); same columns
    as `systems.table3` plus `rows` = FULL_DEV. `scored`: system -> `predict_frame` over `dev` rows."""
    from ..paper_values import paper_value

    out = []
    for system, frame in scored.items():
        sub = dev.loc[frame.index]
        correct = (frame["pred"].to_numpy() == sub["label"].to_numpy()).astype(int)
        model, tier = frame.attrs.get("model", system), frame.attrs.get("tier", "offline")
        paper_sys, relation = counterpart(system, model, stand_ins)
        for split in DEV_SPLITS:
            mask = (sub["split"] == split).to_numpy()
            r = {"system": system, "model": model, "tier": tier, "split": split,
                 **accuracy_row(pd.DataFrame({"correct": correct[mask]})), "paper_system": paper_sys,
                 "relation": relation, "rows": FULL_DEV}
            try:
                r["paper"] = paper_value("taxinli-table-3", f"{paper_sys} {split}")
            except KeyError:
                r["paper"] = float("nan")
            out.append(r)
    table = pd.DataFrame(out)
    if len(table):
        table["accuracy_pct"] = 100 * table["accuracy"]
        table["difference_pct"] = table["accuracy_pct"] - table["paper"]
    return table


def model_stem(base: str) -> str:
    """Short name of a hub id or folder: its last path part.

    >>> model_stem("google-bert/bert-base-uncased"), model_stem("/models/my-roberta/")
    ('bert-base-uncased', 'my-roberta')
    """
    return Path(str(base).rstrip("/")).name


def mnli_finetuned(base: str, quick: bool = False, seed: int = 0, epochs: int = 3, lr: float = 2e-5,
                   batch_size: int = 32, max_length: int = 128, path: str | Path | None = None,
                   progress: bool | None = None, settings=None):
    """`base` (hub id or folder) fine-tuned on MNLI train, as the paper's BERT / RoBERTa were (§4.1: "the
    procedures followed in Devlin et al. (2019); Liu et al. (2019b)": the defaults are BERT's GLUE settings,
    3 epochs, lr 2e-5, batch 32, 128 tokens). The model is named '<stem>-mnli-ft' ('-quick' in quick runs:
    1 epoch over QUICK_TRAIN_ROWS seeded rows, 64 tokens) and cached like every fine-tuned model. Training
    accuracy is logged on 1,000 dev-matched pairs (200 quick), never used to choose anything. `path`: a
    multinli_1.0.zip-like archive (tests); otherwise the manifest file (check `available()` first). `settings`:
    how the result scores (`nli_lib.inference.InferenceSettings`; None: the defaults)."""
    from ..data.loaders import load_mnli
    from ..models import QUICK_TRAIN_ROWS
    from ..models.training import TrainSpec, finetune

    train = load_mnli("train", path=path)
    if quick:
        train = train.sample(n=min(QUICK_TRAIN_ROWS, len(train)), random_state=seed)
    held = load_mnli("dev_matched", path=path)
    held = held.sample(n=min(200 if quick else 1000, len(held)), random_state=seed)
    spec = TrainSpec(base=base, labels=LABELS, epochs=1 if quick else epochs, lr=lr, batch_size=batch_size,
                     max_length=64 if quick else max_length, seed=seed)
    name = f"{model_stem(base)}-mnli-ft" + ("-quick" if quick else "")
    return finetune(spec, train, held, name=name, tier="paper", progress=progress, settings=settings)


def full_dev_table3(classifiers: Mapping[str, object], stand_ins: Mapping | None = None, quick: bool = False,
                    seed: int = 0, path: str | Path | None = None) -> tuple[pd.DataFrame, str]:
    """(Table 3 on the full MNLI dev sets for every classifier, '') when MultiNLI is at hand (or `path`
    names an archive), else (an empty frame, `missing_note`): nothing is downloaded here."""
    if path is None and not available():
        return pd.DataFrame(), missing_note("Table 3 on the full MNLI dev sets (9,815 matched / 9,832 mismatched)")
    dev = full_dev_sets(quick=quick, seed=seed, path=path)
    scored = {name: clf.predict_frame(dev) for name, clf in classifiers.items()}
    return table3_full_dev(dev, scored, stand_ins), ""
