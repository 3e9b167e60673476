"""The fine-tuning a run will do and the models it will download: `training_jobs`, `downloads`, `Device`.

A job's work: steps = ceil(rows / batch) × epochs; tokens ≤ steps × batch × max_length (every pair counted at
the spec's token limit: an upper bound, as batches are padded only to their longest pair); training FLOPs
≈ 6 × parameters × tokens (forward 2, backward 4 per parameter and token; Kaplan et al. 2020), evaluation left
out. GPU-hours on a device = FLOPs / (its peak dense bf16 throughput × an assumed utilisation) / 3600.

>>> job = TrainingJob("11", "m", rows=1000, epochs=2, batch_size=32, max_length=128, params=10_000_000)
>>> job.steps, job.tokens, job.flops
(64, 262144, 15728640000000)
>>> f'{DEVICES["h100"].hours(job.flops, utilisation=0.5):.3e}'  # 1.573e13 / (989e12 × 0.5) / 3600 s
'8.835e-06'
"""
from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..context import RunContext


@dataclass(frozen=True)
class Device:
    """An accelerator's peak dense bf16 tensor throughput (vendor datasheet, no sparsity)."""

    name: str
    peak_flops: float  # FLOP/s
    source: str

    def hours(self, flops: float, utilisation: float) -> float:
        """Hours to do `flops` at `utilisation` of the peak."""
        if not 0 < utilisation <= 1:
            raise ValueError(f"utilisation must be in (0, 1], not {utilisation}")
        return flops / (self.peak_flops * utilisation) / 3600


DEVICES = {d.name: d for d in (
    Device("h100", 989e12, "NVIDIA H100 SXM datasheet: 989 TFLOPS dense BF16"),
    Device("h200", 989e12, "NVIDIA H200 SXM datasheet: 989 TFLOPS dense BF16 (H100's compute, more memory)"),
    Device("a100", 312e12, "NVIDIA A100 datasheet: 312 TFLOPS dense BF16"),
    Device("l4", 121e12, "NVIDIA L4 datasheet: 121 TFLOPS dense BF16 (242 with sparsity)"),
)}
DEFAULT_UTILISATION = 0.3  # fraction of peak a small-encoder fine-tune sustains (short sequences, small batches):
# an assumption, stated beside every estimate; pass --utilisation to use your own measurement


@dataclass(frozen=True)
class TrainingJob:
    """One fine-tuning of a notebook."""

    notebook: str  # the first notebook that trains it
    model: str  # what is trained (its base, and the data)
    rows: int
    epochs: int
    batch_size: int
    max_length: int
    params: int | None  # parameters of the base's weights (None: not available offline)
    cached: bool | None = None  # already trained (its cache folder holds it); None: unknown before its base is

    @property
    def steps(self) -> int:
        return math.ceil(self.rows / self.batch_size) * self.epochs

    @property
    def tokens(self) -> int:
        return self.steps * self.batch_size * self.max_length

    @property
    def flops(self) -> int | None:
        return None if self.params is None else 6 * self.params * self.tokens


@functools.lru_cache(maxsize=None)
def count_params(model: str) -> int | None:
    """Parameters of a model's weights, from the header of its safetensors file(s) (no weights read, nothing
    imported); None when no safetensors file is in the folder or in the local Hugging Face cache (the hub is
    never asked here)."""
    folder = _weights_folder(model)
    files = sorted(folder.glob("*.safetensors")) if folder is not None else []
    if not files:
        return None
    total = 0
    for path in files:
        with open(path, "rb") as f:
            header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
        total += sum(math.prod(t["shape"]) for name, t in header.items() if name != "__metadata__")
    return int(total)


def _weights_folder(model: str) -> Path | None:
    """The folder holding a model's files: itself, or its snapshot in the local Hugging Face cache."""
    if Path(model).is_dir():
        return Path(model)
    try:
        from ..models.loading import cached_commit, hub_cache_dir

        commit = cached_commit(model)
    except Exception:  # noqa: BLE001 - not a hub id, or an unreadable cache
        return None
    if commit is None:
        return None
    folder = hub_cache_dir() / ("models--" + model.replace("/", "--")) / "snapshots" / commit
    return folder if folder.is_dir() else None


def _cached(spec, train, name: str, held) -> bool | None:
    from ..models.training import model_dir

    try:
        return (model_dir(spec, train, name, held) / "train_log.json").is_file()
    except Exception:  # noqa: BLE001 - a base that is not there yet (trained earlier in the run) or not local
        return None


def _job(notebook: str, name: str, spec, train, held=None, cache_name: str | None = None) -> TrainingJob:
    return TrainingJob(notebook, name, len(train), spec.epochs, spec.batch_size, spec.max_length,
                       count_params(spec.base), None if cache_name is None else _cached(spec, train, cache_name, held))


def _offline_models(ctx: RunContext) -> list[TrainingJob]:
    """The offline MiniLM on e-SNLI dev (the profile's NLI model when it is ours) and its δ-SNLI fine-tune
    (notebooks 12-13 train it in both tiers)."""
    from ..data.loaders import load_esnli
    from ..models.named import DNLI_LABELS, offline_spec

    jobs, quick, seed, rows = [], ctx.quick, ctx.seed, ctx.profile.quick_train_rows

    def _sample(df, quick: bool, seed: int, n: int):  # models.named's quick-run training sample
        return df.sample(n=min(n, len(df)), random_state=seed) if quick else df

    spec = offline_spec(quick, epochs=ctx.profile.nli_epochs, seed=seed)
    train = _sample(load_esnli("dev"), quick, seed, rows)
    held = load_esnli("test").sample(n=200 if quick else 1000, random_state=seed)
    minilm = "offline:minilm-esnli (all-MiniLM-L6-v2 on e-SNLI dev)"
    jobs.append(_job("01", minilm, spec, train, held, "minilm-esnli" + ("-quick" if quick else "")))
    from ..atoms.pipeline import dsnli_train
    from ..models import dnli_frame

    dtrain = _sample(dnli_frame(dsnli_train().rows), quick, seed, rows)
    dspec = offline_spec(quick, labels=DNLI_LABELS, epochs=1, seed=seed,
                         **({} if quick else {"lr": 1e-4, "batch_size": 16}))
    jobs.append(TrainingJob("12", "minilm-dsnli (the offline NLI model on δ-SNLI train)", len(dtrain), dspec.epochs,
                            dspec.batch_size, dspec.max_length, count_params(spec.base)))
    return jobs


def _paper_models(ctx: RunContext) -> list[TrainingJob]:
    """The paper tier's fine-tunes: Table 3's δ-NLI encoders (notebook 12) and TaxiNLI's MNLI fine-tunes
    (notebook 51)."""
    from ..atoms.pipeline import dsnli_train
    from ..models import TrainSpec, dnli_frame
    from ..models.baselines import QUICK_BASELINE_ROWS
    from ..models.named import DNLI_LABELS

    jobs, quick, seed = [], ctx.quick, ctx.seed
    rows = dnli_frame(dsnli_train().rows)
    train = rows.sample(n=min(QUICK_BASELINE_ROWS, len(rows)), random_state=seed) if quick else rows
    for ref in ctx.profile.refs("paper_models.atoms.dnli_encoders"):
        spec = TrainSpec(base=ref.id, base_revision=ref.revision, labels=DNLI_LABELS, epochs=1 if quick else 2,
                         lr=2e-5, batch_size=32, max_length=128, seed=seed)
        jobs.append(TrainingJob("12", f"{ref.name} on δ-SNLI train", len(train), spec.epochs, spec.batch_size,
                                spec.max_length, _params(ref.id)))
    tax = ctx.profile.paper_models.taxinli
    for system, base in (tax.mnli_finetune or {}).items():
        base = getattr(base, "id", base)
        n = MNLI_TRAIN_ROWS if not quick else 1000
        jobs.append(TrainingJob("51", f"{base} on MNLI train (as {system})", n, 1 if quick else tax.mnli_epochs,
                                tax.mnli_batch_size, 64 if quick else 128, _params(base)))
    return jobs


def _phrasis_models(ctx: RunContext) -> list[TrainingJob]:
    """PhrasIS (notebook 20): the offline MiniLM and, in the paper tier, every hub family, one fine-tune per
    training unit (scenario) on all its train rows (`train_family`); a search adds `search_trials` fits on the
    80 % part per unit, counted at the search space's largest epochs and smallest batch (a bound)."""
    from ..phrasis import evaluate as ev
    from ..phrasis.data import SCENARIOS, load_splits

    splits = load_splits(quick=ctx.quick, seed=ctx.seed)
    paper = ctx.profile.paper_models.phrasis
    trials = paper.search_trials if ctx.tier == "paper" else 0
    families = ev.profile_families(ctx.profile)
    jobs = []
    if any(f.kind == "minilm" for f in families):
        params = count_params(_minilm())
        for unit in SCENARIOS:  # one training unit per scenario (train_family's default)
            spec = ev.minilm_spec(unit.labels, ctx.quick, ev.MINILM_EPOCHS[unit.track], ctx.seed)
            jobs.append(TrainingJob("20", f"{ev.MINILM.name} · {unit.key}", len(splits.fit_rows(unit)), spec.epochs,
                                    spec.batch_size, spec.max_length, params))
    hub = [f for f in families if f.kind == "hf"]
    params = {f.name: _params(f.base, f.systems) for f in hub}
    by_key = {sc.key: sc for sc in SCENARIOS}
    for family, key, fit80, _, spec, _ in ev.hub_search_units(hub, splits, quick=ctx.quick, seed=ctx.seed,
                                                              hub_epochs=paper.epochs):
        jobs.append(TrainingJob("20", f"{family} · {key}", len(splits.fit_rows(by_key[key])), spec.epochs,
                                spec.batch_size, spec.max_length, params[family]))
        if trials:
            jobs.append(TrainingJob("20", f"{family} · {key} · search ({trials} trials, bound)", len(fit80) * trials,
                                    3, 16, spec.max_length, params[family]))
    return jobs


def _minilm() -> str:
    from ..models.training import minilm_path

    return minilm_path()


def _params(base: str, systems=()) -> int | None:
    """Parameters from the base's weights files, else the size PhrasIS Table 2 prints for the system it is declared
    to be (# P, millions), else None."""
    found = count_params(base)
    if found is not None:
        return found
    from ..paper_values import paper_value

    for system in systems:
        try:
            return int(paper_value("phrasis-table-2", f"{system} parameters (M)") * 1e6)
        except (KeyError, ValueError, LookupError):
            continue
    return None


MNLI_TRAIN_ROWS = 392_702  # MultiNLI 1.0 train pairs (Williams et al. 2018, Table 3); the archive is online-only


def training_jobs(ctx: RunContext) -> list[TrainingJob]:
    """Every fine-tuning the run will do (see the module docstring for what is counted)."""
    jobs = _offline_models(ctx) + _phrasis_models(ctx)
    if ctx.tier == "paper":
        jobs += _paper_models(ctx)
    return jobs


def training_table(jobs: list[TrainingJob], device: Device, utilisation: float = DEFAULT_UTILISATION) -> pd.DataFrame:
    """One row per job: rows, epochs, batch, steps, tokens (bound), params, FLOPs, GPU-hours on `device`."""
    rows = []
    for j in jobs:
        flops = j.flops
        rows.append({"notebook": j.notebook, "model": j.model, "rows": j.rows, "epochs": j.epochs,
                     "batch": j.batch_size, "steps": j.steps, "tokens_max": j.tokens, "params": j.params,
                     "flops": flops,
                     f"{device.name}_hours": None if flops is None else device.hours(flops, utilisation),
                     "cached": {True: "yes", False: "no", None: "?"}[j.cached]})
    return pd.DataFrame(rows)


# -- downloads ---------------------------------------------------------------------------------------------------
def _hub_ids(ctx: RunContext) -> list[tuple[str, str]]:
    """(profile key, hub id) of every model the run may load that is a hub id (not a folder or our own)."""
    from ..profile import MODEL_KEYS

    found = []
    for key in MODEL_KEYS:
        if ctx.tier == "offline" and key.startswith("paper_models"):
            continue
        found += [(ref.key, ref.id) for ref in ctx.profile.refs(key) if ref.kind == "hf" and not ref.is_folder]
    tax = ctx.profile.paper_models.taxinli if ctx.tier == "paper" else None
    for system, base in ((tax.mnli_finetune or {}).items() if tax else ()):
        found.append((f"paper_models.taxinli.mnli_finetune.{system}", getattr(base, "id", base)))
    for section in ("llm", "rewriter"):
        sec = getattr(ctx.profile, section, None)
        if sec is None:
            continue
        if not sec.base_url and not Path(sec.model).is_dir():
            found.append((f"{section}.model", sec.model))
        if sec.tokenizer and not Path(sec.tokenizer).is_dir():
            found.append((f"{section}.tokenizer", sec.tokenizer))
    return list(dict.fromkeys(found))


def _local_size(repo_id: str) -> int | None:
    """Bytes of a model's files in the local Hugging Face cache, or None when it is not there."""
    from ..models.loading import hub_cache_dir

    folder = hub_cache_dir() / ("models--" + repo_id.replace("/", "--")) / "blobs"
    if not folder.is_dir():
        return None
    return sum(f.stat().st_size for f in folder.iterdir() if f.is_file())


def downloads(ctx: RunContext) -> pd.DataFrame:
    """Every hub model of the profile: in the local cache (its size there), or to download (size unknown
    offline: the hub's metadata is not asked)."""
    rows = []
    for key, repo in _hub_ids(ctx):
        size = _local_size(repo)
        rows.append({"key": key, "model": repo, "status": "cached" if size is not None else "download",
                     "size": f"{size / 1e9:.2f} GB on disk" if size is not None else "size unknown offline"})
    return pd.DataFrame(rows, columns=["key", "model", "status", "size"])
