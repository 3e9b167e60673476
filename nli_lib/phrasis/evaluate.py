"""Train the model families of a profile per scenario, score weighted F (Table 3) and coherence (Tables 4-7).

The metric is weighted F1 (`nli_lib.evaluation.weighted_f1`).

Training follows §4 where the offline tier allows it: a model is selected on the seeded 80/20 validation
split and re-trained on the whole training set ("re-trained on the full training data and evaluated on the
corresponding PhrasIS test track"); the §5 "seen" coherence split is that validation set, the "unseen" split
the test set. There is one model per scenario (six per family), as the paper's own numbers require: with one
model per track, the A scenario's coherence would be a pair-weighted mean of I and H and could never lie
outside [I, H], yet in Tables 4-7 it does in 39 model-track cells by more than one printed unit
(`analysis.paper_a_outside_i_h`). `per_scenario=False` trains one model per track on both sources instead
(half the training pairs: I and H together are A). The feature SVM's C is chosen on validation; the
fine-tuned MiniLM uses fixed hyper-parameters (no search offline); hub models in the paper profile can run
the paper's Optuna search (`search_trials`) and are trained with the paper's AdamW epsilon (1e-6) with or
without it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import pandas as pd

from ..context import RunContext
from ..evaluation import weighted_f1
from ..models.base import Classifier
from ..text import slug
from .coherence import reversed_pairs, score_pairs, summarize
from .data import SCENARIOS, PhrasisSplits, Scenario
from .loaders import PHRASIS_LABELS
from .models import PAPER_ADAM_EPS, PAPER_MODELS, FeatureSVMClassifier

SVM_GRID = (0.03, 0.1, 0.3, 1.0)  # C values tried on validation (full mode)
CLASSICAL = ("feature-svm", "tfidf-logreg", "tfidf-svm", "naive-bayes")


@dataclass(frozen=True)
class FamilySpec:
    """How to build one model family (one classifier per scenario, or per track)."""

    name: str  # display name in tables, e.g. 'feature-svm', 'MiniLM-L6 fine-tuned', 'DeBERTa v3 B'
    kind: str  # 'feature-svm' | 'tfidf-logreg' | 'tfidf-svm' | 'naive-bayes' | 'minilm' | 'hf'
    base: str = ""  # hub id or local directory (kind 'hf')
    arch: str = "classical"  # 'classical' | 'encoder' | 'decoder' | 'encoder-decoder' | 'hub model'
    systems: tuple[str, ...] = ()  # the paper systems the profile declares `base` to be (`as:`)
    revision: str | None = None  # hub revision of `base`


MINILM = FamilySpec("MiniLM-L6 fine-tuned", "minilm", arch="encoder")


def offline_families(baselines: Iterable[str] = ("tfidf-logreg",)) -> list[FamilySpec]:
    """feature-svm, the profile's classical baselines (re-fitted on PhrasIS), and MiniLM fine-tuned 6/7-way."""
    names = ["feature-svm", *[b for b in (baselines or []) if b in CLASSICAL and b != "feature-svm"]]
    return [FamilySpec(n, n) for n in dict.fromkeys(names)] + [MINILM]


def hub_family(ref) -> FamilySpec:
    """The family of a profile model (`nli_lib.profile.ModelRef`): named by the Table 2 row its `as:` declares
    (and of that row's architecture), else by the model's own name.

    >>> from nli_lib.profile import ModelRef
    >>> hub_family(ModelRef("m", "/models/gpt2", "gpt2", systems=("GPT-2 S",))).name, \\
    ...     hub_family(ModelRef("m", "/models/gpt2", "gpt2")).name
    ('GPT-2 S', 'gpt2')
    """
    printed = {m.name: m for m in PAPER_MODELS}
    row = next((s for s in ref.systems if s in printed), None)
    return FamilySpec(row or ref.name, "hf", base=ref.id, arch=printed[row].family if row else "hub model",
                      systems=tuple(ref.systems), revision=ref.revision)


def paper_families(refs=None) -> list[FamilySpec]:
    """The PhrasIS models to fine-tune: `refs` (the profile's `paper_models.phrasis.models`; None: all 18 of
    Table 2 from their hub ids, each declared), in the profile's order."""
    if refs is None:
        from ..profile import load_profile

        refs = load_profile(text="tier: paper").refs("paper_models.phrasis.models")
    return [hub_family(r) for r in refs]


def hub_families(refs) -> list[FamilySpec]:
    """Profile models (e.g. its extra_models, `ModelRef`s) fine-tuned like the paper's."""
    return [hub_family(r) for r in refs or []]


def profile_families(profile) -> list[FamilySpec]:
    """Families a notebook trains, from the profile (`nli_lib.lineup`): the offline ones always (feature-svm,
    its baselines re-fitted, MiniLM); in the paper tier its `paper_models.phrasis.models`; its `extra_models`
    fine-tuned the same way."""
    from ..lineup import lineup

    families = offline_families([r.id for r in lineup(profile, main=False, extra=False)])
    if profile.tier == "paper":
        families += paper_families(profile.refs("paper_models.phrasis.models"))
    known = {f.base for f in families}
    return families + [f for f in hub_families(profile.refs("extra_models")) if f.base not in known]


def zero_shot_models(llm_profile=None, nli=None, shots: int = 0, track: str = "all", neutral_label: str | None = None,
                     cache=None) -> dict:
    """Untrained models scored beside the fine-tuned ones on one track: the phrase-relation prompt answered by
    the profile's LLM (its `llm` section: an OpenAI-compatible endpoint; offline, the rule-based stand-in
    through OfflineLLM) and, when given, a 3-way NLI model asked both ways. Like the fine-tuned classifiers,
    they choose among the track's labels: All, seven; Positives, six (the prompt without UNR, and NLI's
    neutral-both-ways as SIMI instead of UNR). `cache` defaults to the process-wide call cache.
    Returns {display name: Classifier}; the names do not depend on the track.

    >>> from nli_lib.cache import CallCache
    >>> models = zero_shot_models(track="positives", cache=CallCache(":memory:"))
    >>> [(name, clf.labels[-1]) for name, clf in models.items()]
    [('prompted: phrasis-rules-v1 (rule-based stand-in)', 'OPPO')]
    """
    from ..llm import make_llm
    from .data import POSITIVE_LABELS, TRACKS
    from .models import NLIRelationClassifier, PromptedRelationClassifier, offline_relation_llm

    if track not in TRACKS:
        raise ValueError(f"track must be one of {TRACKS}, got {track!r}")
    labels = POSITIVE_LABELS if track == "positives" else PHRASIS_LABELS
    llm = make_llm({"llm": llm_profile}, cache=cache) if llm_profile else None
    prompted = PromptedRelationClassifier(llm if llm is not None else offline_relation_llm(cache=cache), shots=shots,
                                          labels=labels)
    models = {f"prompted: {prompted.llm.model}" + ("" if llm is not None else " (rule-based stand-in)"): prompted}
    if nli is not None:
        models[f"NLI both ways: {nli.name}"] = NLIRelationClassifier(nli, neutral_label=neutral_label, labels=labels)
    return models


PROMPT_SHOTS = 0  # exemplars (the paper's Table 1 pairs) in notebooks 21-22's phrase-relation prompt: zero-shot
ERROR_SCENARIO = "Positives-A"  # notebook 22's scenario: the paper's manual evaluation looks at the positive track


def add_zero_shot(trained: "TrainedModels", llm_profile=None, nli=None, shots: int = PROMPT_SHOTS, cache=None,
                  scenarios: Sequence[Scenario] = SCENARIOS) -> list[str]:
    """Add the zero-shot models of both tracks to `trained` (each scenario gets its track's classifier);
    returns their display names."""
    names = []
    for track in dict.fromkeys(sc.track for sc in scenarios):
        for name, clf in zero_shot_models(llm_profile, nli=nli, shots=shots, track=track, cache=cache).items():
            trained.add_fixed(name, clf, [sc for sc in scenarios if sc.track == track])
            names.append(name)
    return list(dict.fromkeys(names))


@dataclass
class TrainedModels:
    """Classifiers by family and scenario key, with the selection log behind them."""

    models: dict = field(default_factory=dict)  # family name -> {scenario key -> Classifier}
    log: list = field(default_factory=list)  # one dict per candidate setting tried on validation
    specs: dict = field(default_factory=dict)  # family name -> FamilySpec (None for zero-shot models)
    gates: dict = field(default_factory=dict)  # (family, scenario key) -> models.gate.Gate of a fine-tuned model
    withheld: dict = field(default_factory=dict)  # family name -> {scenario key -> the Gate it failed}

    def add_fixed(self, name: str, clf: Classifier, scenarios: Sequence[Scenario] = SCENARIOS) -> None:
        """A model used as is for `scenarios` (prompted LLM, NLI model asked both ways); other scenarios of an
        already added `name` keep their classifier."""
        self.models.setdefault(name, {}).update({sc.key: clf for sc in scenarios})
        self.specs[name] = None

    def get(self, family: str, key: str) -> Classifier:
        return self.models[family][key]

    @property
    def families(self) -> list[str]:
        return list(self.models)

    @property
    def paper_models(self) -> list[str]:
        """Families that are the paper's own models: the profile declares their base the Table 2 model they
        are named after (`as:`) - the declaration behind basis 'paper-model'."""
        return [name for name, spec in self.specs.items() if spec is not None and name in spec.systems]

    @property
    def fine_tuned(self) -> list[str]:
        """Families fine-tuned here (the offline MiniLM, hub models): the ones set beside the paper's."""
        return [name for name, spec in self.specs.items() if spec is not None and spec.kind in ("minilm", "hf")]

    @property
    def trained_here(self) -> list[str]:
        """Families trained on PhrasIS (classical and fine-tuned), i.e. not the zero-shot models."""
        return [name for name, spec in self.specs.items() if spec is not None]

    @property
    def by_construction(self) -> list[str]:
        """Families coherent by construction (`coherent_by_construction`: an NLI model asked both ways, the
        offline rules): reversing a pair only swaps what they compute, so their SoftCoh is 1 whatever they
        predict and their HardCoh is their accuracy. They are shown, never ranked as "our best" model."""
        return [name for name, by_key in self.models.items()
                if any(getattr(clf, "coherent_by_construction", False) for clf in by_key.values())]

    @property
    def contenders(self) -> list[str]:
        """Families that may be named our best model: every family but `by_construction`."""
        excluded = set(self.by_construction)
        return [name for name in self.models if name not in excluded]

    def selection(self) -> pd.DataFrame:
        return pd.DataFrame(self.log)

    def gate_lines(self) -> list[str]:
        """One line per gated model and scenario: PASSED, or FAILED with why (its numbers are withheld)."""
        return [f"{key}: {gate.line()}" for (_, key), gate in self.gates.items()]


def gate_fine_tuned(trained: TrainedModels, splits: PhrasisSplits, scenarios: Sequence[Scenario] = SCENARIOS
                    ) -> TrainedModels:
    """The sanity gate (`nli_lib.models.gate`) for every fine-tuned family on every scenario, on the scenario's
    test pairs (held out from training), the baseline answering its training rows' most frequent label. A
    model that fails leaves `trained.models` for `trained.withheld`, so no table, figure or scorecard entry of
    notebooks 20-22 shows its numbers (`withheld_scores` records why)."""
    from ..models.gate import majority_label, sanity_gate

    for family in trained.fine_tuned:
        for sc in scenarios:
            clf = trained.models.get(family, {}).get(sc.key)
            rows = splits.test_rows(sc)
            if clf is None or not len(rows):
                continue
            pred = clf.predict(rows["premise"].tolist(), rows["hypothesis"].tolist())
            gate = sanity_gate(rows["label"].tolist(), pred, majority=majority_label(splits.fit_rows(sc)["label"]),
                               model=f"{family} ({sc.key})", where="test pairs (held out)")
            trained.gates[family, sc.key] = gate
            if not gate.passed:
                trained.withheld.setdefault(family, {})[sc.key] = trained.models[family].pop(sc.key)
        if family in trained.models and not trained.models[family]:
            del trained.models[family]
    return trained


def withheld_scores(trained: TrainedModels, ref: str) -> pd.DataFrame:
    """Scorecard rows (ref, quantity, model, basis, note) for the numbers a failed gate withholds: each
    withheld model and scenario where `analysis.paper_comparisons` would have set it, i.e. beside the paper's
    best model of the scenario in `ref`; the note is the gate's reason. Record them with `ours` NaN
    (`Outputs.score`), which the scorecard shows as 'not computed: <reason>'."""
    from .analysis import paper_best

    best = paper_best(ref).set_index("scenario")
    rows = [{"ref": ref, "quantity": f"{best.loc[key, 'model']} | {key}", "model": family, "basis": "stand-in",
             "note": trained.gates[family, key].reason()}
            for family, by_key in trained.withheld.items() for key in by_key if key in best.index]
    return pd.DataFrame(rows, columns=["ref", "quantity", "model", "basis", "note"])


def train_seconds(clf) -> float | None:
    """Seconds the fine-tune took when the model was trained (the epochs of its `train_log`; a cached model
    keeps the time of the run that built it, so the selection log is the same cold and warm); None when the
    log has no times.

    >>> class Clf: train_log = [{"epoch": 1, "seconds": 12.25}, {"epoch": 2, "seconds": 10.0}]
    >>> train_seconds(Clf()), train_seconds(object())
    (22.2, None)
    """
    times = [e.get("seconds") for e in getattr(clf, "train_log", None) or []]
    return round(sum(times), 1) if times and None not in times else None


def _units(scenarios: Sequence[Scenario], per_scenario: bool) -> dict[str, Scenario]:
    """scenario key -> the scenario whose training data its model uses."""
    return {sc.key: sc if per_scenario else Scenario(sc.track, "all") for sc in scenarios}


def _fit_classical(spec: FamilySpec, rows: pd.DataFrame, labels, seed: int, C: float = 1.0) -> Classifier:
    from ..models import fit_cached
    from ..models.baselines import NaiveBayesPairClassifier, TfidfPairClassifier
    from .features import FEATURE_VERSION

    if spec.kind == "feature-svm":
        make = lambda: FeatureSVMClassifier(labels=labels, C=C, seed=seed)  # noqa: E731
    elif spec.kind == "naive-bayes":
        make = lambda: NaiveBayesPairClassifier(labels=labels)  # noqa: E731
    else:
        make = lambda: TfidfPairClassifier(spec.kind.split("-")[1], labels=labels, seed=seed)  # noqa: E731
    # fitted once per (settings, training rows), then loaded (skops): notebooks 20-22 share the models
    return fit_cached(make, rows, name=f"phrasis-{spec.kind}", version=f"features-v{FEATURE_VERSION}")


MINILM_EPOCHS = {"positives": 8, "all": 1}  # full runs: ~540-1,070 / ~200-400 optimisation steps at batch 16


def minilm_spec(labels, quick: bool, epochs: int, seed: int):
    """Fixed hyper-parameters of the offline MiniLM (phrases are short: 48 tokens cover any pair).

    Full runs: learning rate 1e-4 and batch 16, for `MINILM_EPOCHS` epochs. A 6-way head on the ~1,000-2,000
    pairs of a Positives scenario needs several hundred steps: with 2 epochs (~110 steps on Positives-I) the
    loss stays near its start and the model answers SIMI and EQUI only, never the directional FORW / BACK, and
    fails its sanity gate (`nli_lib.models.gate`); 8 epochs let it learn every label. The All track keeps one
    epoch (its scenarios are three times larger: ~200-400 steps); the gate withholds any model that did not
    learn. Quick runs keep the spine's quick settings (1 epoch, 2e-4, batch 32): they only show that the
    pipeline runs.
    """
    from ..models import offline_spec

    if quick:
        return offline_spec(True, labels=labels, epochs=epochs, seed=seed, max_length=32, batch_size=32)
    return offline_spec(False, labels=labels, epochs=epochs, seed=seed, max_length=48, batch_size=16, lr=1e-4)


def hub_spec(base: str, labels, epochs: int, seed: int, revision: str | None = None):
    """Default hyper-parameters of a hub model when no search is run (AdamW epsilon: the paper's 1e-6).

    >>> hub_spec("roberta-base", ("EQUI", "FORW"), epochs=3, seed=0).adam_eps
    1e-06
    """
    from ..models import TrainSpec

    return TrainSpec(base=base, base_revision=revision, labels=tuple(labels), epochs=epochs, lr=2e-5,
                     batch_size=16, max_length=64, warmup_ratio=0.1, weight_decay=0.01, seed=seed,
                     adam_eps=PAPER_ADAM_EPS)


def _hub_unit(spec: FamilySpec, unit: Scenario, quick: bool, hub_epochs: int | Mapping[str, int], seed: int):
    """(TrainSpec without a search, training name) of a hub family's training unit."""
    n_epochs = int(hub_epochs[unit.track] if isinstance(hub_epochs, Mapping) else hub_epochs)
    tspec = hub_spec(spec.base, unit.labels, n_epochs, seed, spec.revision)
    return tspec, f"phrasis-{slug(spec.name)}-{unit.key}" + ("-quick" if quick else "")


def hub_search_units(families: Sequence[FamilySpec], splits: PhrasisSplits, scenarios: Sequence[Scenario] = SCENARIOS,
                     per_scenario: bool = True, quick: bool = False, seed: int = 0,
                     hub_epochs: int | Mapping[str, int] = 3) -> list[tuple]:
    """The searches `train_family` runs for the hub families: (family, unit key, 80% rows, validation rows,
    TrainSpec, search name), one per distinct training unit, so `nli-companion sweep` searches exactly those."""
    units = []
    for spec in families:
        if spec.kind != "hf":
            continue
        seen = set()
        for unit in _units(scenarios, per_scenario).values():
            if unit.key in seen:
                continue
            seen.add(unit.key)
            tspec, name = _hub_unit(spec, unit, quick, hub_epochs, seed)
            units.append((spec.name, unit.key, splits.fit_rows(unit, final=False), splits.validation_rows(unit),
                          tspec, name + "-search"))
    return units


def train_family(spec: FamilySpec, splits: PhrasisSplits, scenarios: Sequence[Scenario] = SCENARIOS,
                 per_scenario: bool = True, quick: bool = False, seed: int = 0,
                 epochs: int | Mapping[str, int] = MINILM_EPOCHS, hub_epochs: int | Mapping[str, int] = 3,
                 svm_grid: Sequence[float] | None = None, search_trials: int = 0, progress: bool = False,
                 out: TrainedModels | None = None, sweep: tuple[str, str] | None = None) -> TrainedModels:
    """Train (or load cached) classifiers of one family for `scenarios`; returns/extends a TrainedModels.

    Each training unit selects its setting on validation (trained on the 80% part), then re-trains on all
    train rows of the unit, as in §4. Units are scenarios (default: Positives-I is trained on the Positives
    image pairs only, ...) or, with `per_scenario=False`, tracks (the track's A model, trained on images and
    headlines, serves its I, H and A scenarios). `epochs` (the offline MiniLM)
    and `hub_epochs` (hub models without a search) are one number or one per track, e.g. {"positives": 2, "all": 1}.
    `sweep` = (storage, study prefix): hub models take the best setting of the finished `nli-companion sweep`
    study of their unit instead of searching here (`models.search_or_read`).
    """
    from ..models.training import finetune

    out = out or TrainedModels()
    out.specs[spec.name] = spec
    built: dict[str, Classifier] = {}
    grid = tuple(svm_grid) if svm_grid is not None else ((1.0,) if quick else SVM_GRID)
    for key, unit in _units(scenarios, per_scenario).items():
        if unit.key in built:
            out.models.setdefault(spec.name, {})[key] = built[unit.key]
            continue
        fit_all, fit80, val = splits.fit_rows(unit), splits.fit_rows(unit, final=False), splits.validation_rows(unit)
        labels = unit.labels
        if spec.kind in CLASSICAL:
            C = 1.0
            if spec.kind == "feature-svm" and len(grid) > 1:
                scores = {}
                for c in grid:
                    cand = _fit_classical(spec, fit80, labels, seed, C=c)
                    scores[c] = weighted_f1(val["label"], cand.predict(val["premise"], val["hypothesis"]))
                    out.log.append({"family": spec.name, "unit": unit.key, "setting": f"C={c}",
                                    "validation_wF1": scores[c], "n_train": len(fit80), "n_validation": len(val)})
                C = max(scores, key=lambda c: (scores[c], -c))
            clf = _fit_classical(spec, fit_all, labels, seed, C=C)
            out.log.append({"family": spec.name, "unit": unit.key,
                            "setting": f"final C={C}" if spec.kind == "feature-svm" else "final",
                            "validation_wF1": None, "n_train": len(fit_all), "n_validation": None,
                            "train_seconds": None})
        else:
            if spec.kind == "minilm":
                n_epochs = int(epochs[unit.track] if isinstance(epochs, Mapping) else epochs)
                tspec, name = minilm_spec(labels, quick, n_epochs, seed), f"phrasis-minilm-{unit.key}" + (
                    "-quick" if quick else "")
            else:
                tspec, name = _hub_unit(spec, unit, quick, hub_epochs, seed)
            tier = "offline" if spec.kind == "minilm" else "paper"
            if search_trials and spec.kind == "hf":
                from .models import search_or_read

                tspec, trials = search_or_read(fit80, val, tspec, search_trials, name + "-search", sweep)
                for _, t in trials.iterrows():
                    params = {k[7:]: t[k] for k in t.index if k.startswith("params_")}
                    out.log.append({"family": spec.name, "unit": unit.key, "setting": str(params),
                                    "validation_wF1": t["value"], "n_train": len(fit80), "n_validation": len(val)})
            clf = finetune(tspec, fit_all, None, name=name, tier=tier, progress=progress)
            setting = (f"final lr={tspec.lr} epochs={tspec.epochs} batch={tspec.batch_size} "
                       f"warmup={tspec.warmup_ratio} wd={tspec.weight_decay} adam_eps={tspec.adam_eps:g}"
                       + (f" base={Path(str(tspec.base)).name}" if spec.kind == "hf" else ""))
            out.log.append({"family": spec.name, "unit": unit.key, "setting": setting, "validation_wF1": None,
                            "n_train": len(fit_all), "n_validation": None, "train_seconds": train_seconds(clf)})
        built[unit.key] = clf
        out.models.setdefault(spec.name, {})[key] = clf
    return out


def train_models(families: Sequence[FamilySpec], splits: PhrasisSplits, **kwargs) -> TrainedModels:
    """`train_family` for each family, into one TrainedModels."""
    out = TrainedModels()
    for spec in families:
        train_family(spec, splits, out=out, **kwargs)
    return out


def train_profile(ctx: RunContext, splits: PhrasisSplits, **kwargs) -> TrainedModels:
    """Every family of a notebook's profile (`profile_families`), trained or loaded from the model cache with
    the profile's settings (`paper_models.phrasis`: models, epochs, search trials; the run's quick flag and
    seed): the one call notebooks 20-22 share, so all three score the same models, and every fine-tuned one
    through the sanity gate (`gate_fine_tuned`). `kwargs` go to `train_family` (e.g. `per_scenario=False`)."""
    paper = ctx.profile.paper_models.phrasis
    families = profile_families(ctx.profile)
    settings = dict(quick=ctx.quick, seed=ctx.seed, epochs=MINILM_EPOCHS, hub_epochs=paper.epochs,
                    search_trials=paper.search_trials if ctx.tier == "paper" else 0,
                    sweep=(paper.search_storage, paper.search_study) if paper.search_storage else None)
    return gate_fine_tuned(train_models(families, splits, **{**settings, **kwargs}), splits)


def _tier(clf: Classifier) -> str:
    return getattr(clf, "tier", "offline")


def predict_rows(trained: TrainedModels, splits: PhrasisSplits, which: str = "test",
                 scenarios: Sequence[Scenario] = SCENARIOS) -> pd.DataFrame:
    """Per-example predictions of every family on every scenario's test (or 'validation') rows."""
    frames = []
    for family, by_key in trained.models.items():
        for sc in scenarios:
            if sc.key not in by_key:
                continue
            clf = by_key[sc.key]
            rows = splits.test_rows(sc) if which == "test" else splits.validation_rows(sc)
            if not len(rows):
                continue
            fr = clf.predict_frame(rows)
            columns = ["pair_id", "source", "polarity", "phrase1", "phrase2", "label", "pred", "correct"]
            frames.append(fr[columns].assign(model=family, model_id=clf.name, tier=_tier(clf), scenario=sc.key))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def f1_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Long table: model, tier, scenario, n, weighted F1, accuracy."""
    out = []
    for (model, scenario), part in rows.groupby(["model", "scenario"], sort=False):
        out.append(
            {
                "model": model,
                "tier": part["tier"].iloc[0],
                "model_id": part["model_id"].iloc[0],
                "scenario": scenario,
                "n": len(part),
                "weighted_F1": round(weighted_f1(part["label"], part["pred"]), 4),
                "accuracy": round(float(part["correct"].mean()), 4),
            }
        )
    return pd.DataFrame(out)


def wide(summary: pd.DataFrame, value: str, scenarios: Sequence[str] | None = None) -> pd.DataFrame:
    """model x scenario table of `value` (Table 3 layout), with the tier beside the model."""
    table = summary.pivot_table(index="model", columns="scenario", values=value, aggfunc="first", sort=False)
    cols = [c for c in (scenarios or [s.key for s in SCENARIOS]) if c in table.columns]
    table = table[cols].reset_index()
    table.insert(1, "tier", table["model"].map(summary.groupby("model", sort=False)["tier"].first()))
    return table


def coherence_rows(trained: TrainedModels, splits: PhrasisSplits, scenarios: Sequence[Scenario] = SCENARIOS,
                   splits_to_score: Sequence[str] = ("seen", "unseen")) -> pd.DataFrame:
    """Per-pair coherence rows (see coherence.pair_table) for every family, scenario and split.

    seen = validation EQUI/FORW/BACK pairs + reversals (the model was re-trained on them, §5);
    unseen = test EQUI/FORW/BACK pairs + reversals.
    """
    frames = []
    for sc in scenarios:
        sources = {"seen": splits.validation_rows(sc), "unseen": splits.test_rows(sc)}
        for split in splits_to_score:
            pairs = reversed_pairs(sources[split])
            if not len(pairs):
                continue
            for family, by_key in trained.models.items():
                if sc.key in by_key:
                    frames.append(score_pairs(by_key[sc.key], pairs).assign(model=family, scenario=sc.key, split=split))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def coherence_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """SoftCoh / HardCoh (and accuracy on each direction) per model, split and scenario."""
    return summarize(rows, by=("model", "split", "scenario"))


def parameter_millions(clf: Classifier) -> float | None:
    """Parameters of a transformers classifier (backbone + head) in millions; None for other classifiers."""
    model = getattr(clf, "model", None)
    if model is None or not hasattr(model, "parameters"):
        return None
    return sum(p.numel() for p in model.parameters()) / 1e6


def model_sizes(trained: TrainedModels) -> pd.DataFrame:
    """Table 2 beside ours: for every fine-tuned hub family the parameters of the loaded classifier (the head
    adds a few thousand) and, for a family declared one of the paper's models, the size the paper prints."""
    printed = {m.name: m for m in PAPER_MODELS}
    rows = []
    for family, by_key in trained.models.items():
        spec = trained.specs.get(family)
        if spec is None or spec.kind != "hf":
            continue
        clf = next(iter(by_key.values()))
        m = printed.get(family) if family in trained.paper_models else None  # only a declared model: its row
        rows.append({"model": family, "paper_hub_id": m.hub_id if m else "", "family": spec.arch,
                     "paper (M)": float(m.params.rstrip("M")) if m else float("nan"),
                     "ours (M)": parameter_millions(clf), "tier": _tier(clf)})
    return pd.DataFrame(rows, columns=["model", "paper_hub_id", "family", "paper (M)", "ours (M)", "tier"])


def best_model(summary: pd.DataFrame, scenario: str, value: str, exclude: Iterable[str] = ()) -> list[str]:
    """Models ranked by `value` on one scenario (best first), without `exclude` (e.g. the models coherent by
    construction, `TrainedModels.by_construction`).

    >>> s = pd.DataFrame({"model": ["svm", "nli both ways", "minilm"], "scenario": ["All-A"] * 3,
    ...                   "SoftCoh": [0.8, 1.0, 0.7]})
    >>> best_model(s, "All-A", "SoftCoh", exclude=["nli both ways"])
    ['svm', 'minilm']
    """
    part = summary[(summary["scenario"] == scenario) & ~summary["model"].isin(list(exclude))]
    return part.sort_values(value, ascending=False, kind="stable")["model"].tolist()


__all__ = ["weighted_f1", "FamilySpec", "profile_families", "hub_family", "train_profile", "zero_shot_models",
           "add_zero_shot", "MINILM", "offline_families", "paper_families", "hub_families", "TrainedModels",
           "train_family", "train_models", "predict_rows", "f1_summary", "wide", "coherence_rows", "coherence_summary",
           "best_model", "minilm_spec", "hub_spec", "MINILM_EPOCHS", "parameter_millions", "model_sizes",
           "gate_fine_tuned", "withheld_scores"]
