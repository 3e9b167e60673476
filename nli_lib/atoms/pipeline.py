"""The notebooks' model line-ups and end-to-end runs (short calls, so notebooks stay narrative).

    nb = start(globals())
    run = snli_consistency(nb)                 # Table 2 / Table 6 inputs for every model of the profile
    dr = defeasible_run(nb)                    # δ-SNLI atoms, labels, critical atoms, predictions (Tables 3-4)

Offline profile: the profile's NLI model (MiniLM fine-tuned on e-SNLI dev), the TF-IDF baseline(s), the
rule-based atom generator, the MiniLM δ-NLI classifier and a TF-IDF δ-NLI baseline. Paper profile adds hub
NLI models (`extra_models`), the LLM through Prompts A.1/B.1/C.1/C.2, and the profile's
`paper_models.atoms.dnli_encoders` (default roberta-large / deberta-v3-large) fine-tuned with the paper's
settings (2 epochs, lr 2e-5, batch 32). Every δ-NLI encoder trains on the full δ-SNLI train set when it was
fetched, else on the mirror's 8,872-example subset (`dsnli_train`); Table 3's `train_set` column says which.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import pandas as pd

from ..config import REPO_ROOT, user_path
from ..context import RunContext, Sizes
from ..llm import make_llm
from ..models.baselines import QUICK_BASELINE_ROWS
from .consistency import run_consistency, snli_shots, snli_test_sample
from .defeasible import (
    DSNLIAtoms,
    dsnli_test,
    encoder_predictor,
    llm_predictor,
    predict,
    prepare_dsnli,
    read_gold_labels,
    silver_labels_llm,
    silver_labels_nli,
)
from .generate import atom_generator, attach_atoms, generate_atoms

SNLI_SAMPLE = Sizes(quick=80, full=1000)  # SNLI-TEST-SAMPLE (§4: 1,000 SNLI test pairs)
PLACEBO_UPDATES = Sizes(quick=100, full=400)  # placebo sub-problems the silver labels are checked on (label_check)
# the atoms Tables 1 and 7 print, with their labels (a gold file in `read_gold_labels` format)
GOLD_LABELS_EXAMPLE = REPO_ROOT / "data" / "fixtures" / "atoms_gold_labels_example.csv"
QUICK_GROUPS = 16  # δ-SNLI P-H pairs (with all their updates) in quick runs (full: all 203)
GOLD_ENV = "NLI_ATOMS_GOLD"  # path of a gold atom-label CSV (read_gold_labels format) to use instead of silver


def snli_models(ctx: RunContext) -> list:
    """The profile's NLI models for §4 (`nli_lib.lineup`: main model, baselines, extra models), and the LLM
    with Prompt B.1 (12 balanced e-SNLI-dev shots)."""
    from ..lineup import lineup, load_classifier

    models = []
    for ref in lineup(ctx.profile, llm=True):
        if ref.kind == "prompted":
            models.append(load_classifier(ref, llm=make_llm(ctx.params), shots=snli_shots(12, ctx.seed)))
        else:
            models.append(ctx.nli_model(ref))
    return models


@dataclass
class SNLIRun:
    """§4 inputs and outputs: SNLI-TEST-SAMPLE, its atoms, and per model the consistency rows."""

    examples: pd.DataFrame  # SNLI-TEST-SAMPLE
    atoms: pd.DataFrame  # generate_atoms output
    rows: pd.DataFrame  # example × atom rows
    generator: str  # atom generator name
    per_example: dict = field(default_factory=dict)  # model -> consistency_frame
    per_atom: dict = field(default_factory=dict)  # model -> atom_judgements
    tiers: dict = field(default_factory=dict)  # model -> tier
    models: list = field(default_factory=list)  # the classifiers themselves


def snli_consistency(ctx: RunContext, models=None) -> SNLIRun:
    """Generate atoms for SNLI-TEST-SAMPLE (`SNLI_SAMPLE` pairs) and run every model through the §4.1 checks."""
    examples = snli_test_sample(ctx.size(SNLI_SAMPLE), ctx.seed)
    gen = atom_generator(make_llm(ctx.params))
    atoms = generate_atoms(examples["hypothesis"].tolist(), gen)
    rows = attach_atoms(examples[["pair_id", "premise", "hypothesis", "label"]], atoms)
    run = SNLIRun(examples, atoms, rows, gen.name)
    run.models = list(models or snli_models(ctx))
    for model in run.models:
        per, judged = run_consistency(model, examples, rows)
        run.per_example[model.name], run.per_atom[model.name], run.tiers[model.name] = per, judged, model.tier
    return run


FULL_TRAIN_KEY = "dnli_full/snli.train"  # the full δ-SNLI train set: online-only (not in the offline mirror)


@dataclass(frozen=True)
class DeltaTrain:
    """The δ-SNLI training set the Table 3 encoders are fine-tuned on, and how outputs name it."""

    rows: pd.DataFrame = field(repr=False)  # δ-NLI rows (load_dnli columns; impossible updates dropped)
    name: str  # what it is, as Table 3's `train_set` column and caption state it
    full: bool  # True: the full δ-SNLI train set; False: the mirror's 8,872-example subset

    def sample_name(self, n: int | None = None) -> str:
        """The name, or that of a seeded `n`-row sample of it (quick runs) when `n` is below its size.

        >>> t = DeltaTrain(pd.DataFrame({"x": range(5)}), "δ-SNLI train subset", False)
        >>> t.sample_name(), t.sample_name(2), t.sample_name(9)
        ('δ-SNLI train subset', '2-row sample of δ-SNLI train subset', 'δ-SNLI train subset')
        """
        return f"{n:,}-row sample of {self.name}" if n is not None and n < len(self.rows) else self.name


def dsnli_train() -> DeltaTrain:
    """The full δ-SNLI train set when the mirror or the data cache holds it (`fetch.available`: fetched once with
    `nli-companion fetch dnli_full/snli.train`), else the mirror's AFLite subset, named as such."""
    from ..data.fetch import available
    from ..data.loaders import load_dnli, load_dsnli_train_subset

    if available(FULL_TRAIN_KEY):
        rows = load_dnli("snli", "train", drop_impossible=True)
        return DeltaTrain(rows, f"δ-SNLI train (full, {len(rows):,} examples)", True)
    rows = load_dsnli_train_subset()
    return DeltaTrain(rows, f"δ-SNLI train subset ({len(rows):,} AFLite examples; the full train set is not "
                            f"fetched: nli-companion fetch {FULL_TRAIN_KEY})", False)


def dnli_predictors(ctx: RunContext, train: DeltaTrain | None = None) -> dict:
    """Table 3 models: the offline δ-NLI MiniLM, a TF-IDF δ-NLI baseline; paper: fine-tuned encoders + LLM.

    Every encoder is fine-tuned on `train` (default `dsnli_train()`: the full δ-SNLI train set when fetched,
    else the subset; quick runs a seeded sample of it) and says so in its `train_set`."""
    from ..data.loaders import load_dnli
    from ..models import DNLI_LABELS, TrainSpec, dnli_frame, finetune, fit_baseline, offline_dnli_model

    train = train or dsnli_train()
    rows = dnli_frame(train.rows)
    quick_rows = rows.sample(n=min(QUICK_BASELINE_ROWS, len(rows)), random_state=ctx.seed)
    preds = {}
    quick_train = ctx.profile.quick_train_rows
    main = offline_dnli_model(quick=ctx.quick, seed=ctx.seed, progress=False, train_rows=quick_train,
                              train=train.rows)
    preds[main.name] = encoder_predictor(main, train.sample_name(quick_train if ctx.quick else None))
    if ctx.profile.baselines:
        sub = quick_rows if ctx.quick else rows
        tf = fit_baseline("tfidf-logreg", False, ctx.seed, labels=DNLI_LABELS, train=sub)
        tf.name = "tfidf-logreg-dsnli" + (f" (quick: {len(sub)} rows)" if ctx.quick else "")
        preds[tf.name] = encoder_predictor(tf, train.sample_name(len(sub)))
    if ctx.tier == "paper":
        dev = dnli_frame(load_dnli("snli", "dev", drop_impossible=True))
        for ref in ctx.profile.refs("paper_models.atoms.dnli_encoders"):
            spec = TrainSpec(base=ref.id, base_revision=ref.revision, labels=DNLI_LABELS, epochs=1 if ctx.quick else 2,
                             lr=2e-5, batch_size=32, max_length=128, seed=ctx.seed)
            clf = finetune(spec, quick_rows if ctx.quick else rows,
                           dev.sample(n=min(1000, len(dev)), random_state=ctx.seed),
                           name=re.sub(r"[^A-Za-z0-9._-]+", "_", ref.name) + "-dsnli", tier="paper", progress=False)
            clf.name = f"{ref.name} (δ-SNLI fine-tuned)"  # the entry's name: its `as:` may declare it a paper row
            preds[clf.name] = encoder_predictor(clf, train.sample_name(len(quick_rows) if ctx.quick else None))
    llm = make_llm(ctx.params)
    if llm is not None:
        p = llm_predictor(llm, seed=ctx.seed)
        preds[p.name] = p
    return preds


@dataclass
class DefeasibleRun:
    """§5-6 inputs and outputs: atoms and labels (`data`), models and their predictions."""

    data: DSNLIAtoms
    predictors: dict
    results: dict  # model -> (full rows, atom rows) from defeasible.predict
    self_labelled: tuple = ()  # predictors whose own answers are the silver labels (atom metrics blanked)
    same_network: tuple = ()  # predictors fine-tuned from the network that produced the silver labels
    labeller: object = None  # sub-problems -> labelled frame (the silver source; None for gold labels)
    _check: dict = field(default_factory=dict, repr=False)

    def table3(self):
        from .defeasible import table3

        t3 = table3(self.results, self.predictors, self.data.label_source, self.self_labelled)
        t3["labels_from_same_network"] = t3["model"].isin(self.same_network)
        return t3

    def label_check(self, n_placebo: int = 400, seed: int = 0) -> dict:
        """The silver labels against the project's checks (placebo updates, label direction), computed once.

        {passes, failed, diagnostics, placebo}; gold labels pass by definition (nothing to check here).
        """
        if not self._check:
            from .defeasible import placebo_subproblems, silver_diagnostics
            from .silver import check

            if self.labeller is None:
                self._check.update(passes=True, failed=[], diagnostics={}, placebo=None)
            else:
                placebo = self.labeller(placebo_subproblems(self.data.labeled, n=n_placebo, seed=seed))
                diag = silver_diagnostics(self.data.labeled, placebo)
                self._check.update(**check(diag), diagnostics=diag, placebo=placebo)
        return self._check

    def demo_note(self) -> str:
        """'' when the atom labels can support results; otherwise the warning every label-dependent output carries."""
        verdict = self.label_check()
        if verdict["passes"]:
            return ""
        return ("METHOD DEMONSTRATION, not a result: the silver atom labels fail the project's checks ("
                + "; ".join(verdict["failed"]) + "). ")

    def encoder_training(self) -> str:
        """What the run's fine-tuned encoders were trained on, for captions ('no fine-tuned encoder' if none).

        >>> p = type("P", (), {"kind": "encoder", "train_set": "δ-SNLI train subset"})()
        >>> DefeasibleRun(None, {"a": p, "b": p}, {}).encoder_training()
        'δ-SNLI train subset'
        """
        sets = sorted({p.train_set for p in self.predictors.values() if p.kind == "encoder" and p.train_set})
        return "; ".join(sets) or "no fine-tuned encoder"

    def correct(self) -> dict:
        """model -> Series(pair_id -> full prediction correct), for inferential consistency."""
        return {name: full.set_index("pair_id")["correct"] for name, (full, _) in self.results.items()}


def gold_labels(path: str | None = None):
    """Gold atom labels from `path` or $NLI_ATOMS_GOLD (None when neither is set)."""
    from ..data.loaders import load_dnli

    path = path or os.environ.get(GOLD_ENV)
    if not path:
        return None
    return read_gold_labels(user_path(path), dnli=load_dnli("snli", "test", drop_impossible=True))


def defeasible_run(ctx: RunContext, gold_path: str | None = None, predictors: dict | None = None,
                   examples: pd.DataFrame | None = None) -> DefeasibleRun:
    """δ-SNLI-TEST atoms (generated, validated, labelled, critical) and every Table 3 model's predictions.

    `examples` overrides the δ-SNLI rows (default: all 1,837; quick: all updates of QUICK_GROUPS P-H pairs).
    """
    if examples is None:
        examples = dsnli_test(quick=ctx.quick, seed=ctx.seed, groups=QUICK_GROUPS)
    llm = make_llm(ctx.params)
    gen = atom_generator(llm)
    data = prepare_dsnli(gen, ctx.nli_model(), examples, gold=gold_labels(gold_path), silver_llm=llm)
    predictors = predictors if predictors is not None else dnli_predictors(ctx)
    results = {name: predict(p, examples, data.labeled) for name, p in predictors.items()}
    gold_used = data.label_source.startswith("gold")
    same = tuple(n for n, p in predictors.items() if not gold_used and llm is not None and p.kind == "llm"
                 and getattr(p.model, "model", None) == llm.model)
    nli = ctx.nli_model()
    network = tuple(n for n, p in predictors.items() if not gold_used and llm is None and p.kind == "encoder"
                    and derived_from(p.model, nli))
    labeller = None if gold_used else (lambda sub: silver_labels_llm(sub, llm)) if llm is not None else (
        lambda sub: silver_labels_nli(sub, nli))
    return DefeasibleRun(data, predictors, results, same, network, labeller)


def derived_from(model, base) -> bool:
    """Whether `model` was fine-tuned here starting from `base`'s weights: its train_log's `base_identity` (the
    base's content fingerprint when it was trained) equals `base.weights_id`. Identity, not the folder path the
    log also records, so a cache that was moved or copied (another NLI_CACHE_DIR, another clone) still answers.

    >>> derived_from(object(), object())
    False
    """
    log = Path(str(getattr(model, "model_dir", ""))) / "train_log.json"
    identity = getattr(base, "weights_id", None)
    if identity is None or not log.is_file():
        return False
    return json.loads(log.read_text()).get("base_identity") == identity


def paper_reference(ref: str, metrics: dict) -> pd.DataFrame:
    """The paper's printed rows of a table, from resources/paper_values/atoms.csv, one row per model.

    Quantities are stored as '<model> <metric>'; `metrics` maps our column names to those metric texts.
    Rows carry tier 'paper (printed)' so they are never mistaken for numbers computed here.
    """
    from ..paper_values import paper_values_frame

    frame = paper_values_frame("atoms")
    frame = frame[frame["ref"] == ref]
    rows: dict = {}
    for quantity, value in zip(frame["quantity"], frame["value"]):
        split = split_quantity(quantity, metrics.values())
        if split is None:
            continue
        model, metric = split
        col = next(c for c, m in metrics.items() if m == metric)
        rows.setdefault(model, {"model": model, "tier": "paper (printed)"})[col] = value
    return pd.DataFrame(list(rows.values()))


def split_quantity(quantity: str, metrics) -> tuple[str, str] | None:
    """('<paper model>', '<metric>') of a per-model paper quantity; the longest matching metric wins.

    >>> split_quantity("llama-3-8b-it critical atom accuracy", ["atom accuracy", "critical atom accuracy"])
    ('llama-3-8b-it', 'critical atom accuracy')
    """
    found = [m for m in metrics if quantity.endswith(" " + m)]
    if not found:
        return None
    metric = max(found, key=len)
    return quantity[: -len(metric) - 1], metric


PAPER_ATOM_GENERATOR = "llama-3-8b-instruct"  # the paper's atom generator (§3.1, Prompt A.1)


def table_scores(ours: pd.DataFrame, ref: str, metrics: dict, main: str, declared: Mapping,
                 inputs_basis: str, note: str = "") -> pd.DataFrame:
    """Scorecard rows (ref, quantity, ours, model, basis, note) for our Table 2/3/4/6 beside every per-model
    value the paper prints.

    Each paper row '<paper model> <metric>' gets our row of the model the profile declares to be that paper
    model (`declared`: the profile's `paper_systems`, see `nli_lib.basis`), with basis 'paper-model' when the
    inputs are the paper's too (`inputs_basis`: the basis of the atoms / labels the models were scored on);
    otherwise our `main` model's row (offline: the MiniLM classifier) as a 'stand-in'. Paper rows of models
    we have no stand-in for (the 'Human' row) and NaN values are skipped.

    >>> t = pd.DataFrame({"model": ["minilm-dsnli", "gpt-4o-2024-08-06 (C.1)"], "full_accuracy": [70.0, 92.0]})
    >>> rows = table_scores(t, "atoms-table-3", {"full_accuracy": "full example accuracy"}, "minilm-dsnli",
    ...                     {"gpt-4o-2024-08-06": "gpt-4o-08-06"}, inputs_basis="data")
    >>> rows.loc[rows.quantity.str.startswith("gpt-4o-08"), ["ours", "model", "basis"]].values.tolist()
    [[92.0, 'gpt-4o-2024-08-06 (C.1)', 'paper-model']]
    >>> rows.loc[rows.quantity.str.startswith("llama-3-8b"), ["ours", "model", "basis"]].values.tolist()
    [[70.0, 'minilm-dsnli', 'stand-in']]
    """
    from ..basis import declares
    from ..paper_values import paper_values_frame

    records = ours.to_dict("records")
    main_row = next((r for r in records if r["model"] == main), None)
    if main_row is None:
        raise KeyError(f"main model {main!r} is not a row of the table ({list(ours['model'])})")
    frame = paper_values_frame("atoms")
    rows = []
    for quantity in frame.loc[frame["ref"] == ref, "quantity"]:
        split = split_quantity(quantity, metrics.values())
        if split is None or split[0].lower() == "human":
            continue
        paper_model, metric = split
        row = next((r for r in records if declares(declared, r["model"], paper_model)), None)
        basis = "paper-model" if row is not None and inputs_basis != "stand-in" else "stand-in"
        row = row or main_row
        value = row[next(c for c, m in metrics.items() if m == metric)]
        if pd.notna(value):
            rows.append({"ref": ref, "quantity": quantity, "ours": float(value), "model": row["model"],
                         "basis": basis, "note": note})
    return pd.DataFrame(rows, columns=["ref", "quantity", "ours", "model", "basis", "note"])


def paper_atom_check(model) -> pd.DataFrame:
    """The model on the paper's printed SNLI items (Table 1 rows 3-4 and §2.1): full pairs and (P, aᵢ) atoms."""
    from .prompts import NLI_EXAMPLES

    items = pd.DataFrame([dict(r) for r in NLI_EXAMPLES])
    out = model.predict_frame(items)
    out["model"], out["tier"] = model.name, model.tier
    return out[["source", "kind", "premise", "hypothesis", "label", "pred", "correct", "model", "tier"]]
