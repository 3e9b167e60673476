"""Regenerate the data manifest from a mirror's SHA256SUMS.tsv (run by maintainers, not at run time).

    python data/build_manifest.py ../shared/data/SHA256SUMS.tsv > nli_lib/resources/manifest.csv

Each mirrored file becomes one row keyed `<dataset>/<name>`; online-only full datasets are appended
from ONLINE_ONLY with their official URLs (sha256 from KNOWN_SHA256 where published, else pinned by fetch()
beside the first download).
"""
import csv
import re
import sys

LICENCES = {
    "microsoft/TaxiNLI": "Computational Use of Data Agreement",
    "ilopezgazpio/PhrasIS-baselines": "see LICENSE in source repo",
    "rudinger/defeasible-nli": "see LICENSE in source repo",
    "nehasrikn/paraphrase-nlu-internal": "none stated",
    "OanaMariaCamburu/e-SNLI": "see LICENSE in source repo",
    "Deltaus/sBiMPM": "none stated (SNLI: CC BY-SA 4.0)",
    "jsbaan/calibration-on-disagreement-data": "CC BY-NC 4.0",
    "acmi-lab/counterfactually-augmented-data": "Apache-2.0",
    "nltk/nltk_data": "see nltk_data",
    "globalwordnet/english-wordnet": "CC BY 4.0",
}

DNLI = "https://raw.githubusercontent.com/rudinger/defeasible-nli/c675ffc1b0eec5fa56287f08490da8ed43c1ecc5"
ESNLI = "https://raw.githubusercontent.com/OanaMariaCamburu/e-SNLI/7b585a3f077fdea899780eb0473940522ae44a2e"
# The official SNLI / MultiNLI archives cannot be pinned to a commit; their sha256 is the one widely published
# for these archives (e.g. by ParlAI's and NLIDatasets.jl's download definitions), so fetch() verifies them.
# The GitHub-hosted files below are pinned by commit; their sha256 is pinned beside the download on first use.
KNOWN_SHA256 = {
    "snli_1.0.zip": "afb3d70a5af5d8de0d9d81e2637e0fb8c22d1235c2749d83125ca43dab0dbd3e",
    "multinli_1.0.zip": "049f507b9e36b1fcb756cfd5aeb3b7a0cfcb84bf023793652987f7e7e0957822",
}
ONLINE_ONLY = [
    ("snli_full", "snli_1.0.zip", "all", "https://nlp.stanford.edu/projects/snli/snli_1.0.zip", "CC BY-SA 4.0"),
    ("mnli_full", "multinli_1.0.zip", "train+dev", "https://cims.nyu.edu/~sbowman/multinli/multinli_1.0.zip",
     "see MultiNLI licence (OANC / CC BY-SA 3.0 parts)"),
    ("dnli_full", "snli.train", "train", f"{DNLI}/data/defeasible-nli/defeasible-snli/train.jsonl", "see LICENSE"),
    ("dnli_full", "atomic.train", "train", f"{DNLI}/data/defeasible-nli/defeasible-atomic/train.jsonl", "see LICENSE"),
    ("dnli_full", "social.train", "train", f"{DNLI}/data/defeasible-nli/defeasible-social/train.jsonl", "see LICENSE"),
    ("dnli_full", "social.dev", "dev", f"{DNLI}/data/defeasible-nli/defeasible-social/dev.jsonl", "see LICENSE"),
    ("dnli_full", "social.test", "test", f"{DNLI}/data/defeasible-nli/defeasible-social/test.jsonl", "see LICENSE"),
    ("esnli_train", "esnli_train_1.csv", "train", f"{ESNLI}/dataset/esnli_train_1.csv", "see LICENSE"),
    ("esnli_train", "esnli_train_2.csv", "train", f"{ESNLI}/dataset/esnli_train_2.csv", "see LICENSE"),
]


def classify(repo: str, path: str) -> tuple[str, str, str]:
    """(dataset, name, split) for a mirrored file."""
    base = path.rsplit("/", 1)[-1]
    if base.startswith("LICENSE") or base.startswith("README"):
        return "docs", f"{repo.split('/')[1]}.{base}", "-"
    if repo == "microsoft/TaxiNLI":
        dev = "MNLIDev" in base
        return "taxinli", "mnli_dev" if dev else "taxinli10k", "mnli-dev" if dev else "mnli-train+dev"
    if repo == "ilopezgazpio/PhrasIS-baselines":
        _, split, source, pol, _ = base.split(".")
        return "phrasis", f"{split}.{source}.{pol}", split
    if repo == "rudinger/defeasible-nli":
        sub = path.split("/")[-2].replace("defeasible-", "")
        split = base.replace(".jsonl", "")
        return "dnli", f"{sub}.{split}", split
    if repo == "nehasrikn/paraphrase-nlu-internal":
        return "dsnli_train_subset", "aflite_train_examples", "train"
    if repo == "OanaMariaCamburu/e-SNLI":
        stem, split = base.rsplit(".", 1)
        return "esnli", f"{stem.replace('preproc1_', '')}.{split}", split
    if repo == "Deltaus/sBiMPM":
        split = re.search(r"_(dev|test)\.jsonl", base).group(1)
        return "snli_subset", split, split
    if repo == "jsbaan/calibration-on-disagreement-data":
        return "chaosnli", base.replace("chaosNLI_", "").replace(".jsonl", ""), "dev"
    if repo == "acmi-lab/counterfactually-augmented-data":
        kind = path.split("/")[-2]
        split = base.replace(".tsv", "")
        return "cad", f"{kind}.{split}", split
    if repo == "nltk/nltk_data":
        return "nltk", base.replace(".zip", ""), "-"
    if repo == "globalwordnet/english-wordnet":
        return "oewn", base.replace(".yaml", ""), "-"
    raise ValueError(f"unclassified mirror file {repo}/{path}")


def main(sums_path: str) -> None:
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["key", "dataset", "split", "url", "sha256", "bytes", "licence", "offline"])
    with open(sums_path) as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            repo = row["source_repo"]
            rel = row["path"].split(f"github/{repo}/", 1)[1]
            dataset, name, split = classify(repo, rel)
            url = f"https://raw.githubusercontent.com/{repo}/{row['source_commit']}/{rel}"
            out.writerow([f"{dataset}/{name}", dataset, split, url, row["sha256"], row["bytes"], LICENCES[repo], "yes"])
    for dataset, name, split, url, lic in ONLINE_ONLY:
        out.writerow([f"{dataset}/{name}", dataset, split, url, KNOWN_SHA256.get(name, ""), "", lic, "no"])


if __name__ == "__main__":
    main(sys.argv[1])
