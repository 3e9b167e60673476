"""Dataset statistics for notebook 00: file verification, sizes, and the papers' data-only table rows.

    >>> sizes = dataset_sizes()                       # doctest: +SKIP
    >>> int(sizes.query("dataset == 'e-SNLI' and split == 'test'")["rows"].iloc[0])   # doctest: +SKIP
    9824

Each function returns a DataFrame; the paper-comparison ones also carry the paper's value beside ours
(`nli_lib.paper_values`), so a mismatch is visible at a glance.
"""
from __future__ import annotations

import pandas as pd

from ..paper_values import beside_paper
from . import loaders
from .fetch import DataError, available, fetch, load_manifest, sha256_file


def verify_offline_files(quick: bool = False) -> pd.DataFrame:
    """Fetch (mirror/cache/download) and verify every offline manifest file; one row per file.

    quick: only the first file of each dataset family.
    """
    rows, seen = [], set()
    for key, entry in load_manifest().items():
        if not entry.offline or (quick and entry.dataset in seen):
            continue
        seen.add(entry.dataset)
        try:
            path = fetch(key)
            rows.append({"key": key, "dataset": entry.dataset, "bytes": path.stat().st_size,
                         "sha256_ok": sha256_file(path) == entry.sha256, "licence": entry.licence, "error": ""})
        except DataError as exc:
            rows.append({"key": key, "dataset": entry.dataset, "bytes": None, "sha256_ok": False,
                         "licence": entry.licence, "error": str(exc)})
    return pd.DataFrame(rows)


def check_verified(files: pd.DataFrame) -> None:
    """Raise DataError with the first failing file's full message (path, URL and fix) when any file of a
    `verify_offline_files` frame failed, followed by how many others failed and which.

    >>> ok = pd.DataFrame({"key": ["a/b"], "sha256_ok": [True], "error": [""]})
    >>> check_verified(ok)
    >>> bad = pd.DataFrame({"key": ["a/b", "c/d"], "sha256_ok": [False, False], "error": ["a/b: mirror file /m/x "
    ...     "is missing (NLI_DATA_MIRROR=/m). Check the mirror directory, or unset NLI_DATA_MIRROR.", "c/d: ..."]})
    >>> check_verified(bad)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nli_lib.data.fetch.DataError: a/b: mirror file /m/x is missing ... [1 more of 2 offline files failed too: c/d]
    """
    failed = files[~files["sha256_ok"].astype(bool)]
    if len(failed):
        first = failed.iloc[0]
        message = first["error"] or f"{first['key']}: sha256 differs from the manifest"
        more = (f" [{len(failed) - 1} more of {len(files)} offline files failed too: {', '.join(failed['key'][1:])}]"
                if len(failed) > 1 else "")
        raise DataError(message + more)


def dataset_sizes() -> pd.DataFrame:
    """Rows, label distribution and dropped-row counts of every NLI-style dataset the companion loads (the
    papers' own data through their packages' loaders)."""
    from ..ftc.loaders import load_cad
    from ..phrasis.loaders import load_phrasis
    from ..taxinli.loaders import load_taxinli

    specs = [
        ("e-SNLI", "dev", lambda: loaders.load_esnli("dev")),
        ("e-SNLI", "test", lambda: loaders.load_esnli("test")),
        ("SNLI jsonl subset", "dev", lambda: loaders.load_snli_jsonl("dev")),
        ("SNLI jsonl subset", "test", lambda: loaders.load_snli_jsonl("test")),
        ("ChaosNLI", "snli", lambda: loaders.load_chaosnli("snli")),
        ("ChaosNLI", "mnli_m", lambda: loaders.load_chaosnli("mnli_m")),
        ("TaxiNLI", "taxinli10k", lambda: load_taxinli("taxinli10k")),
        ("TaxiNLI", "mnli_dev", lambda: load_taxinli("mnli_dev")),
        ("δ-NLI snli", "dev", lambda: loaders.load_dnli("snli", "dev")),
        ("δ-NLI snli", "test", lambda: loaders.load_dnli("snli", "test")),
        ("δ-NLI atomic", "dev", lambda: loaders.load_dnli("atomic", "dev")),
        ("δ-NLI atomic", "test", lambda: loaders.load_dnli("atomic", "test")),
        ("δ-SNLI train subset", "train", loaders.load_dsnli_train_subset),
        ("PhrasIS", "train", lambda: load_phrasis("train")),
        ("PhrasIS", "test", lambda: load_phrasis("test")),
        ("CAD original", "test", lambda: load_cad("original", "test")),
        ("CAD revised_hypothesis", "test", lambda: load_cad("revised_hypothesis", "test")),
        ("CAD revised_premise", "test", lambda: load_cad("revised_premise", "test")),
    ]
    rows = []
    for dataset, split, load in specs:
        df = load()
        dist = df["label"].value_counts(normalize=True).round(3).to_dict()
        rows.append(
            {
                "dataset": dataset,
                "split": split,
                "rows": len(df),
                "dropped_malformed": df.attrs.get("dropped", 0),
                "labels": ", ".join(f"{k}: {v:.1%}" for k, v in sorted(dist.items())),
            }
        )
    return pd.DataFrame(rows)


def dsnli_test_statistics(tier: str = "data") -> pd.DataFrame:
    """Data-computable rows of the atoms paper's Table 5 (δ-SNLI column), beside the paper's values."""
    test = loaders.load_dnli("snli", "test", drop_impossible=True)
    share = test["update_type"].value_counts(normalize=True) * 100
    ours = {
        "delta-SNLI test examples": len(test),
        "delta-SNLI % strengtheners (label)": round(float(share.get("strengthener", 0)), 1),
        "delta-SNLI % weakeners (label)": round(float(share.get("weakener", 0)), 1),
        "delta-SNLI unique hypotheses": test["hypothesis"].nunique(),
    }
    return beside_paper(ours, "atoms-table-5", tier=tier, model="none (data)")


MNLI_KEY = "mnli_full/multinli_1.0.zip"


def factnli_sizes(tier: str = "data", download: bool = False) -> pd.DataFrame:
    """FactNLI Table 1: the SNLI test size from e-SNLI test; the MNLI validation sizes from the online-only
    MultiNLI archive when it is at hand (fetched before, or download=True), else NaN with what to do."""
    table = beside_paper({"SNLI test size": len(loaders.load_esnli("test"))}, "factnli-table-1", tier=tier,
                         model="none (data)")
    quantities = {"MNLI validation_matched size": "dev_matched", "MNLI validation_mismatched size": "dev_mismatched"}
    if download or available(MNLI_KEY):
        mnli = {q: len(loaders.load_mnli(split)) for q, split in quantities.items()}
        online = beside_paper(mnli, "factnli-table-1", tier=tier, model="none (data)")
    else:
        online = beside_paper(dict.fromkeys(quantities, float("nan")), "factnli-table-1", tier="online only",
                              model=f"needs {MNLI_KEY}: factnli_sizes(download=True) fetches it (~227 MB)")
    return pd.concat([table, online], ignore_index=True)


def esnli_sizes(tier: str = "data") -> pd.DataFrame:
    """e-SNLI dev/test sizes. Of the five papers only FactNLI prints one (SNLI test = e-SNLI test, 9,824);
    the dev size (9,842, SNLI dev minus no-gold pairs) has no printed counterpart, so its paper value is NaN."""
    ours = {"SNLI test size": len(loaders.load_esnli("test")), "e-SNLI dev size": len(loaders.load_esnli("dev"))}
    return beside_paper(ours, "factnli-table-1", tier=tier, model="none (data)").assign(
        dataset=["e-SNLI test", "e-SNLI dev"])


def phrasis_total(tier: str = "data") -> pd.DataFrame:
    """PhrasIS pairs in all eight files beside the paper's 'over 10K' (§3's text; a lower bound: ours should
    exceed it)."""
    from ..phrasis.loaders import load_phrasis

    total = len(load_phrasis())
    out = beside_paper({"PhrasIS phrase pairs (train + test)": total}, "phrasis-sec-3", tier=tier,
                       model="none (data)")
    return out.assign(meets_lower_bound=out["ours"] >= out["paper"])


def phrasis_counts() -> pd.DataFrame:
    """PhrasIS pairs per split × source × polarity, with the label distribution."""
    from ..phrasis.loaders import load_phrasis

    df = load_phrasis()
    counts = df.groupby(["split", "source", "polarity"]).size().rename("pairs").reset_index()
    labels = pd.crosstab([df["split"], df["source"], df["polarity"]], df["label"]).reset_index()
    return counts.merge(labels, on=["split", "source", "polarity"])
