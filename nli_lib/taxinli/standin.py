"""The MNLI-domain stand-in: MiniLM fine-tuned on MNLI-domain data that is offline and never evaluated.

The offline NLI model (`offline:minilm-esnli`) sees only SNLI captions and scores below the bag-of-words
baseline shipped with TaxiNLI on its MNLI-dev rows. Of the 10,071 TaxiNLI rows, 2,344 are not in
taxinli10k_MNLIDev.tsv; one of them is a mojibake copy of a dev row (`load_mnli_from_taxinli` drops it), so
2,343 distinct pairs drawn from MNLI *train* remain, none of them an evaluated row (the 7,727 MNLI-dev pairs
of notebooks 51-54). This stand-in is the offline NLI model (all-MiniLM-L6-v2 fine-tuned on e-SNLI dev,
`offline_nli_model`) fine-tuned further on those pairs with the same settings (`nli_lib.models.offline_spec`,
`finetune`; the cache key covers the base model's weights and the data), so it has seen the e-SNLI data, then
the MNLI genres and their sentences.

Trade-off: two stages instead of one joint fine-tune on both sets. The first stage is the offline model every
notebook trains anyway, so the stand-in costs only the 2,343-row stage (about a fifth of the joint run's
training steps), and a joint fine-tune scored no better (59.7 % on the 7,727 evaluated rows); the two-stage
one is reported in notebook 51's stand-ins table.

    >>> clf = mnli_domain_model(quick=True)                       # doctest: +SKIP
    >>> clf.name                                                   # doctest: +SKIP
    'minilm-taxinli-train-quick'

`training_data` refuses to return rows that overlap the evaluated rows (`disjoint_from`), so the guarantee
"never evaluated" is checked every time the model is built, not only in the tests.
"""
from __future__ import annotations

import re

import pandas as pd

NAME = "minilm-taxinli-train"  # the stand-in's model name ("-quick" appended in quick runs)
QUICK_ROWS = 500  # quick runs: seeded TaxiNLI MNLI-train rows of the second stage


def pair_keys(df: pd.DataFrame) -> pd.Series:
    """A pair's identity across copies: lower-cased ASCII letters and digits of premise and hypothesis
    (copies in the release differ in mojibake, spacing and punctuation).

    >>> pair_keys(pd.DataFrame({"premise": ["R\\u00e9publique, 15th."], "hypothesis": ["It is old!"]})).tolist()
    ['rpublique15th|itisold']
    """
    def fold(text: str) -> str:
        return re.sub(r"[^a-z0-9]", "", str(text).lower())

    return df["premise"].map(fold) + "|" + df["hypothesis"].map(fold)


def disjoint_from(train: pd.DataFrame, evaluated: pd.DataFrame) -> pd.DataFrame:
    """`train` unchanged when none of its pairs is an evaluated pair (`pair_keys`); ValueError naming the
    first shared pairs otherwise.

    >>> ev = pd.DataFrame({"premise": ["A man sleeps."], "hypothesis": ["He rests."]})
    >>> len(disjoint_from(pd.DataFrame({"premise": ["A dog."], "hypothesis": ["An animal."]}), ev))
    1
    >>> disjoint_from(pd.DataFrame({"premise": ["a man sleeps"], "hypothesis": ["He rests"]}), ev)
    Traceback (most recent call last):
    ...
    ValueError: 1 training pair(s) are evaluated rows: ['amansleeps|herests']
    """
    shared = pair_keys(train).isin(set(pair_keys(evaluated)))
    if shared.any():
        raise ValueError(f"{int(shared.sum())} training pair(s) are evaluated rows: "
                         f"{pair_keys(train)[shared].head(3).tolist()}")
    return train


def taxinli_train_rows(mnli_pairs: pd.DataFrame | None = None, evaluated: pd.DataFrame | None = None) -> pd.DataFrame:
    """The TaxiNLI pairs drawn from MNLI train (2,343 distinct; `load_mnli_from_taxinli` rows with
    in_mnli_dev False), checked against the evaluated MNLI-dev rows (`load_taxinli("mnli_dev")`).

    Columns premise, hypothesis, label, pair_id, genre, source ('taxinli-mnli-train').
    """
    from .loaders import load_mnli_from_taxinli, load_taxinli

    mnli_pairs = load_mnli_from_taxinli() if mnli_pairs is None else mnli_pairs
    evaluated = load_taxinli("mnli_dev") if evaluated is None else evaluated
    rows = mnli_pairs.loc[~mnli_pairs["in_mnli_dev"].astype(bool),
                          ["premise", "hypothesis", "label", "pair_id", "genre"]]
    return disjoint_from(rows, evaluated).assign(source="taxinli-mnli-train").reset_index(drop=True)


def training_data(quick: bool = False, seed: int = 0, mnli_rows: pd.DataFrame | None = None,
                  evaluated: pd.DataFrame | None = None) -> pd.DataFrame:
    """The second stage's training rows: the TaxiNLI MNLI-train pairs (`taxinli_train_rows`) with a `source`
    column; quick runs take QUICK_ROWS seeded rows. Checked once more against the evaluated rows
    (`disjoint_from`) after sampling."""
    from .loaders import load_taxinli

    evaluated = load_taxinli("mnli_dev") if evaluated is None else evaluated
    rows = taxinli_train_rows(evaluated=evaluated) if mnli_rows is None else mnli_rows
    if quick:
        rows = rows.sample(n=min(QUICK_ROWS, len(rows)), random_state=seed)
    rows = rows.assign(source="taxinli-mnli-train")[["premise", "hypothesis", "label", "source"]]
    return disjoint_from(rows.reset_index(drop=True), evaluated)


def mnli_domain_model(quick: bool = False, epochs: int = 2, seed: int = 0, progress: bool | None = None,
                      settings=None, train: pd.DataFrame | None = None,
                      train_rows: int | None = None):
    """The offline NLI model (`offline_nli_model(quick, epochs, seed, train_rows)`: the first stage, e-SNLI dev)
    fine-tuned further on `training_data` with its settings (`offline_spec`: 2 epochs, lr 4e-5, batch 32,
    128 tokens; quick: 1 epoch, lr 2e-4, batch 16, 64 tokens), and its held-out log (SNLI test pairs). Cached
    like every fine-tuned model (`models.training.model_dir`; the key holds the base model's weights).
    `training_rows` on the result counts both stages' rows by source."""
    from ..data.loaders import load_esnli
    from ..models import QUICK_TRAIN_ROWS, offline_nli_model, offline_spec
    from ..models.training import finetune, trained_rows

    train_rows = train_rows or QUICK_TRAIN_ROWS
    base = offline_nli_model(quick=quick, epochs=epochs, seed=seed, progress=progress, train_rows=train_rows)
    train = training_data(quick=quick, seed=seed) if train is None else train
    held_out = load_esnli("test").sample(n=200 if quick else 1000, random_state=seed)
    spec = offline_spec(quick, epochs=epochs, seed=seed, base=str(base.model_dir))
    clf = finetune(spec, train, held_out, name=NAME + ("-quick" if quick else ""), progress=progress,
                   settings=settings)
    clf.training_rows = {f"e-snli-dev (first stage, {base.name})": trained_rows(base),
                         **train["source"].value_counts().to_dict()}
    return clf
