"""The MNLI-domain stand-in: MiniLM fine-tuned on MNLI-domain data that is offline and never evaluated.

The offline NLI model (`offline:minilm-esnli`) sees only SNLI captions and scores below the bag-of-words
baseline shipped with TaxiNLI on its MNLI-dev rows. Of the 10,071 TaxiNLI rows, 2,344 are not in
taxinli10k_MNLIDev.tsv; one of them is a mojibake copy of a dev row (`load_mnli_from_taxinli` drops it), so
2,343 distinct pairs drawn from MNLI *train* remain, none of them an evaluated row (the 7,727 MNLI-dev pairs
of notebooks 51-54). This stand-in is all-MiniLM-L6-v2 fine-tuned exactly like the
offline model (`nli_lib.models.offline_spec`, `finetune`; the cache key covers the data) on those pairs plus
e-SNLI dev (the offline model's data), so it has seen the MNLI genres and their sentences.

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
QUICK_ROWS_PER_SOURCE = 500  # quick runs: seeded rows from each source (TaxiNLI-train, e-SNLI dev)


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
    from ..data.loaders import load_mnli_from_taxinli, load_taxinli

    mnli_pairs = load_mnli_from_taxinli() if mnli_pairs is None else mnli_pairs
    evaluated = load_taxinli("mnli_dev") if evaluated is None else evaluated
    rows = mnli_pairs.loc[~mnli_pairs["in_mnli_dev"].astype(bool),
                          ["premise", "hypothesis", "label", "pair_id", "genre"]]
    return disjoint_from(rows, evaluated).assign(source="taxinli-mnli-train").reset_index(drop=True)


def training_data(quick: bool = False, seed: int = 0, mnli_rows: pd.DataFrame | None = None,
                  esnli: pd.DataFrame | None = None, evaluated: pd.DataFrame | None = None) -> pd.DataFrame:
    """The stand-in's training rows: the TaxiNLI MNLI-train pairs and e-SNLI dev (the offline model's
    data), with a `source` column; quick runs take QUICK_ROWS_PER_SOURCE seeded rows of each. Checked once
    more against the evaluated rows (`disjoint_from`) after joining.
    """
    from ..data.loaders import load_esnli, load_taxinli

    evaluated = load_taxinli("mnli_dev") if evaluated is None else evaluated
    mnli_rows = taxinli_train_rows(evaluated=evaluated) if mnli_rows is None else mnli_rows
    esnli = (load_esnli("dev") if esnli is None else esnli).assign(source="e-snli-dev")
    parts = [mnli_rows.assign(source="taxinli-mnli-train"), esnli]
    if quick:
        parts = [p.sample(n=min(QUICK_ROWS_PER_SOURCE, len(p)), random_state=seed) for p in parts]
    both = pd.concat([p[["premise", "hypothesis", "label", "source"]] for p in parts], ignore_index=True)
    return disjoint_from(both, evaluated)


def mnli_domain_model(quick: bool = False, epochs: int = 2, seed: int = 0, progress: bool | None = None,
                      precision: str = "float32", train: pd.DataFrame | None = None):
    """all-MiniLM-L6-v2 fine-tuned on `training_data` with the offline model's settings (`offline_spec`:
    2 epochs, lr 4e-5, batch 32, 128 tokens; quick: 1 epoch, lr 2e-4, batch 16, 64 tokens) and its held-out
    log (SNLI test pairs). Cached like every fine-tuned model (`models.training.model_dir`)."""
    from ..data.loaders import load_esnli
    from ..models import offline_spec
    from ..models.training import finetune

    train = training_data(quick=quick, seed=seed) if train is None else train
    held_out = load_esnli("test").sample(n=200 if quick else 1000, random_state=seed)
    spec = offline_spec(quick, epochs=epochs, seed=seed)
    clf = finetune(spec, train, held_out, name=NAME + ("-quick" if quick else ""), progress=progress,
                   precision=precision)
    clf.training_rows = train["source"].value_counts().to_dict()
    return clf
