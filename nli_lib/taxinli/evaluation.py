"""The systems notebooks 51-54 score beside the paper's shipped predictions, and what each stands for.

    >>> systems = our_systems(nb)                      # doctest: +SKIP
    >>> systems.main, systems.counterparts        # doctest: +SKIP
    ('minilm-taxinli-train', {'minilm-taxinli-train': 'BERT', 'bow-naive-bayes': 'NB'})

The line-up is the profile's models (`systems.profile_classifiers`: its NLI model, baselines, the
bag-of-words naive Bayes, extra models), plus

* offline (the profile's NLI model is `offline:minilm-esnli`): the MNLI-domain stand-in
  (`standin.mnli_domain_model`), which is the **main stand-in**: it is put beside the paper's BERT; the
  e-SNLI-only model is shown beside it, with no paper counterpart;
* `paper_models.taxinli.mnli_finetune` (paper tier): encoders fine-tuned on MNLI train here
  (`mnli.mnli_finetuned`), each beside the paper system it follows (relation "same architecture": our
  fine-tune, not the paper's model, so its scorecard basis stays stand-in), when MultiNLI is at hand;
  otherwise `notes` says what is missing;
* models the profile declares to be a paper system (`as:`) beside that system (relation "declared").
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..context import RunContext
from . import mnli, standin
from .systems import RELATIONS, declared_system, profile_classifiers, stand_ins

STANDIN_KEY = "taxinli:" + standin.NAME  # where a session keeps the MNLI-domain stand-in (nb.models)


@dataclass(frozen=True)
class Systems:
    """The systems of one notebook run."""

    classifiers: dict  # system name -> classifier, in display order
    counterparts: dict  # system -> paper system (stand-in) or (paper system, relation); see systems.counterpart
    main: str  # the main stand-in: the system put beside the paper's BERT, singled out in examples
    notes: tuple = ()  # what could not be included and why (e.g. MultiNLI missing for the MNLI fine-tunes)


def uses_offline_model(ctx: RunContext) -> bool:
    """Whether the profile's NLI model is the offline one (MiniLM fine-tuned on e-SNLI here)."""
    from ..lineup import OFFLINE_MODELS

    return ctx.profile.ref("nli_model").id in OFFLINE_MODELS


def mnli_domain_stand_in(ctx: RunContext):
    """The MNLI-domain stand-in of this run (trained or loaded once per session, kept in ctx.models)."""
    if STANDIN_KEY not in ctx.models:
        ctx.models[STANDIN_KEY] = standin.mnli_domain_model(
            quick=ctx.quick, epochs=ctx.profile.nli_epochs, seed=ctx.seed, settings=ctx.profile.inference,
            train_rows=ctx.profile.quick_train_rows)
    return ctx.models[STANDIN_KEY]


def mnli_finetunes(ctx: RunContext, path=None) -> tuple[dict, dict, tuple]:
    """(classifiers, counterparts, notes) for `paper_models.taxinli.mnli_finetune` (paper system -> base),
    paper tier only (the offline tier loads no paper model). Each base is fine-tuned on MNLI train once
    (cached); nothing when the key is empty; a note naming what is missing when MultiNLI is not at hand
    (`mnli.available`), never a download. `path`: an archive (tests)."""
    settings = ctx.profile.paper_models.taxinli
    if ctx.profile.tier != "paper" or not settings.mnli_finetune:
        return {}, {}, ()
    bases = ctx.profile.refs("paper_models.taxinli.mnli_finetune")  # resolved, in the mapping's order
    if path is None and not mnli.available():
        return {}, {}, (mnli.missing_note(f"Fine-tuning {', '.join(r.given for r in bases)} on MNLI "
                                          f"(paper_models.taxinli.mnli_finetune)"),)
    classifiers, counterparts = {}, {}
    for paper_sys, base in zip(settings.mnli_finetune, bases):
        key = f"taxinli:mnli-ft:{base.id}"
        if key not in ctx.models:
            ctx.models[key] = mnli.mnli_finetuned(
                base.id, quick=ctx.quick, seed=ctx.seed, epochs=settings.mnli_epochs, lr=settings.mnli_lr,
                batch_size=settings.mnli_batch_size, path=path, settings=ctx.profile.inference)
        clf = ctx.models[key]
        classifiers[clf.name] = clf
        counterparts[clf.name] = (paper_sys, RELATIONS[3])
    return classifiers, counterparts, ()


def our_systems(ctx: RunContext, mnli_path=None) -> Systems:
    """Our systems for notebooks 51-54 (see the module docstring); `ctx` is the notebook session. Models the
    profile declares to be a paper system (`as:`) are put beside it as (system, 'declared')."""
    ours = profile_classifiers(ctx)
    first = next(iter(ours))
    if uses_offline_model(ctx):
        clf = mnli_domain_stand_in(ctx)
        ours = {first: ours[first], clf.name: clf, **{k: v for k, v in ours.items() if k != first}}
        main = clf.name
    else:
        main = first
    tuned, tuned_counterparts, notes = mnli_finetunes(ctx, path=mnli_path)
    ours.update(tuned)
    declared = ctx.profile.paper_systems
    counterparts = {name: (declared_system(getattr(clf, "name", name), declared), RELATIONS[1])
                    for name, clf in ours.items() if declared_system(getattr(clf, "name", name), declared)}
    counterparts = {**stand_ins(ours, main=main, declared=declared), **counterparts, **tuned_counterparts}
    return Systems(classifiers=ours, counterparts=counterparts, main=main, notes=notes)


@dataclass(frozen=True)
class Evaluation:
    """The shipped predictions and our line-up scored on the TaxiNLI ∩ MNLI-dev rows (notebooks 51-53)."""

    dev: object  # load_taxinli("mnli_dev"): the 7,727 rows with the shipped NB / ESIM / BERT predictions
    sample: object  # the rows our systems are scored on: all of them in full runs, a stratified sample in quick
    systems: Systems  # our systems and what each stands for
    rows: object  # systems.system_rows: one row per (system, example)
    gates: tuple = ()  # models.gate.Gate of every fine-tuned system, on the rows it was scored on
    withheld: dict = field(default_factory=dict)  # system -> (paper system, relation), when it failed its gate

    @property
    def models(self) -> list[str]:
        """The models behind every number (for the outputs' sidecars)."""
        return sorted(self.rows["model"].unique())


def evaluate(ctx: RunContext) -> Evaluation:
    """Load the MNLI-dev rows, build the line-up and score it (predictions cached per pair, so notebooks
    52-53 reuse notebook 51's)."""
    from .loaders import load_taxinli
    from .systems import evaluation_sample, score_models, system_rows

    dev = load_taxinli("mnli_dev")
    sample = evaluation_sample(dev, quick=ctx.quick, seed=ctx.seed)
    systems = our_systems(ctx)
    scored = score_models(sample, systems.classifiers)
    gates, systems, withheld = gate_systems(systems, scored, sample)
    rows = system_rows(dev, {name: frame for name, frame in scored.items() if name in systems.classifiers})
    return Evaluation(dev=dev, sample=sample, systems=systems, rows=rows, gates=gates, withheld=withheld)


def gate_systems(systems: Systems, scored: dict, sample) -> tuple[tuple, Systems, dict]:
    """The sanity gate (`nli_lib.models.gate`) for every fine-tuned system (one with a training log) on the
    MNLI-dev rows it was scored on, which no stand-in trains on (`standin.training_data`). A system that fails
    leaves the line-up, so notebooks 51-54 show none of its numbers (a failed main stand-in hands that role,
    examples and probes, to the first system left, without its paper counterpart). Returns (gates, the systems
    without the
    failed ones, failed system -> (the paper system it stood for, relation): `systems.counterpart`)."""
    from ..models.gate import sanity_gate
    from .systems import counterpart

    gates, withheld = [], {}
    for name, clf in systems.classifiers.items():
        if not getattr(clf, "train_log", None) or name not in scored:
            continue
        frame = scored[name]
        gate = sanity_gate(sample.loc[frame.index, "label"].tolist(), frame["pred"].tolist(), model=name,
                           where="TaxiNLI ∩ MNLI-dev pairs (never trained on)")
        gates.append(gate)
        if not gate.passed:
            withheld[name] = counterpart(name, name, systems.counterparts)
    if withheld:
        kept = {k: v for k, v in systems.classifiers.items() if k not in withheld}
        main = systems.main if systems.main in kept else next((k for k in kept if k in scored), "")
        systems = replace(systems, classifiers=kept, main=main,
                          counterparts={k: v for k, v in systems.counterparts.items() if k not in withheld})
    return tuple(gates), systems, withheld


def stand_in_table(systems: Systems):
    """Our fine-tuned systems: name, what it stands for, its training rows by source, epochs and held-out
    accuracy (from the training log); classical baselines have no log and are left out."""
    import pandas as pd

    from ..models.training import trained_rows

    out = []
    for name, clf in systems.classifiers.items():
        log = getattr(clf, "train_log", None)
        if not log:
            continue
        paper = systems.counterparts.get(name, "")
        paper_sys, relation = paper if isinstance(paper, tuple) else (paper, "stand-in" if paper else "")
        rows = getattr(clf, "training_rows", None) or {"rows": trained_rows(clf)}
        out.append({"system": name, "main": name == systems.main, "paper_system": paper_sys, "relation": relation,
                    "training_rows": ", ".join(f"{k}: {v}" for k, v in rows.items()),
                    "epochs": len(log), "held_out_accuracy": log[-1].get("eval_accuracy"),
                    "held_out_n": log[-1].get("eval_n")})
    return pd.DataFrame(out)


def withheld_scores(ev: Evaluation):
    """Table 3 scorecard rows (ref, quantity, model, basis, note) for the systems whose numbers a failed gate
    withholds: where `systems.table3_scores` would have set them (beside their paper system, per split), the
    note being the gate's reason. Record them with `ours` NaN (`Outputs.score`): the scorecard shows
    'not computed: <reason>'."""
    import pandas as pd

    from .systems import model_label

    reasons = {g.model: g.reason() for g in ev.gates}
    rows = [{"ref": "taxinli-table-3", "quantity": f"{paper_sys} {split}",
             "model": model_label(name, relation, paper_sys), "basis": "stand-in", "note": reasons[name]}
            for name, (paper_sys, relation) in ev.withheld.items() if paper_sys
            for split in ("matched", "mismatched")]
    return pd.DataFrame(rows, columns=["ref", "quantity", "model", "basis", "note"])
