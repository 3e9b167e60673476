"""Hugging Face sequence classifiers (any hub id or local directory) behind the companion protocol.

    >>> clf = HFClassifier("roberta-large-mnli")          # paper profile: hub id     # doctest: +SKIP
    >>> clf = HFClassifier("/path/to/finetuned-dir")      # offline: local directory  # doctest: +SKIP
    >>> clf.predict(["A man plays."], ["A person plays."])  # doctest: +SKIP
    ['entailment']

Label order comes from the model's `config.id2label` and is mapped onto ours by name (so an MNLI model
whose head is (contradiction, neutral, entailment) still returns columns in our order). Generic names
such as LABEL_0 are refused unless `label_order` says what each head unit means.

Inference tokenizes all pairs in one fast-tokenizer call, sorts them by token count (pairs of similar length
share a batch, so little padding), pads each batch to its own longest pair, and restores the original order.
The speed techniques below, and the hidden-state file cache, sit behind one entry point, `models.speed.SpeedPath`;
the settings they run with are one `nli_lib.inference.InferenceSettings` (`HFClassifier.settings`).
On an x86 CPU the model's linear layers run on oneDNN with pre-packed weights (`packing`: about 2x MKL's
float32 speed on AMD CPUs with AVX-512, ~5 % on AVX2; bfloat16 weights are packed on AVX-512 only). Where
the head reads the last layer's first token alone (BERT, RoBERTa, ELECTRA-style classifiers), scoring runs that
layer for that token only (`first_token`: ~14 % faster, same numbers). On a CPU, batches are scored in two
streams at once, each on its share of the cores (`streams`: `HFClassifier(..., streams=1)` turns it off; up to
~20 % more pairs/s, probabilities within ~2e-7).
benchmarks/nli_throughput.py compares the path with the tools a user would pick instead and with the
machine's matmul roofline.

Precision: float32 by default, so numbers do not depend on the machine. Two opt-in fast paths (profile key
`precision`): "bfloat16" runs weights and activations in bfloat16 (fast on a CPU with AVX-512 BF16 or AMX and on
GPUs, very slow on CPUs without bf16 units); "int8" runs the linear layers in int8 (one weight scale per output
channel, input ranges calibrated once on 512 e-SNLI dev pairs, so a pair's labels do not depend on the pairs
batched with it, with SmoothQuant smoothing and a few outlier channels in float32; x86 CPUs only (oneDNN's int8
kernels); `int8.quantize_int8`). Both change some labels:
benchmarks/nli_throughput.py measures their speed and their label agreement with float32. The precision (and
int8's scheme) is part of the cache fingerprint, so they never mix. A cached probability belongs to its pair
alone, so it must not depend on the batch the pair was scored in: scored again in other batch sizes, float32
moves by ~2e-6 at most, int8 by ~1e-3 (a float32 rounding difference can cross an int8 rounding step) and
bfloat16 by ~6e-3 (padding changes its rounding), labels staying put. That is why int8's input ranges are fixed:
torch's dynamic quantisation takes them from the whole batch, which moves labels.

int8 checks its unsure pairs: a pair whose two most probable labels are within INT8_RECHECK_MARGIN (0.05) of each
other under int8 is scored again, at `recheck_precision` (bfloat16 where the device computes it natively, float32
elsewhere), and that answer is kept. int8's label changes sit at small margins, so this restores most of them for
a few per cent of its speed (with ~2 % of pairs scored twice, the labels equal to float32's go from ~99 % to
~99.6 % on held-out pairs). The margin is the smallest that keeps 99.5 % of the labels on SNLI-test pairs outside
the benchmark's; bfloat16 is the second pass because float32 costs nearly twice as much for ~0.1 point more.
`HFClassifier(..., recheck_margin=0)` is int8 alone. Whether a
pair is checked is decided by its own int8 margin, so its answer is its own (a float32 rounding difference could
move a margin across 0.05 only within ~1e-3 of it). Both settings are in the cache key, and `rechecked` counts
the pairs scored twice.
"""
from __future__ import annotations

import functools
import itertools
import os
import platform
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

from .. import provenance
from ..config import LABELS
from ..inference import INT8_RECHECK_MARGIN, PRECISIONS, InferenceSettings  # noqa: F401  (re-exported)
from ..phases import phase
from ..progress import progress, show_progress  # noqa: F401  (show_progress: re-exported for the model layer)
from .base import Classifier, text_hash
from .loading import (  # noqa: F401
    ModelLoadError,
    ModelSource,
    load_error,
    load_pretrained,
    resolve_model,
    source_fingerprint,
    weights_fingerprint,
)
from .speed import SpeedPath, cached_layers, read_layers, write_layers  # noqa: F401  (read/write: re-exported)

_ALIASES = {
    "entailment": "entailment", "entail": "entailment", "entailed": "entailment", "e": "entailment",
    "neutral": "neutral", "n": "neutral",
    "contradiction": "contradiction", "contradict": "contradiction", "c": "contradiction",
    "strengthener": "strengthener", "weakener": "weakener",
}


INT8_SCHEME = "calibrated-minmax-smooth0.7-fp32outliers16-clipped-residualadd-onednn"  # what precision "int8"
# computes (int8.quantize_int8: SmoothQuant alpha int8.SMOOTHING_ALPHA, int8.OUTLIER_CHANNELS float32 channels, input
# codes clipped at the levels' top, skip connections added inside the matmul), in the cache key with the calibration
# pairs' hash and the input levels: a new scheme gets a new name, so it never reuses another's probabilities
INT8_CALIBRATION_PAIRS = 512  # e-SNLI dev pairs (seeded sample) whose float32 activations set the int8 input ranges
INT8_RECHECK_BATCH = 8  # pairs a batch in that second pass: its pairs spread over every length, so a larger batch
# pads more (8 was the fastest of 4-24 for the benchmark's unsure pairs)
INT8_CALIBRATION_BATCH = 64  # fixed batch size of the calibration passes (padding counts, so it fixes the ranges)


@functools.lru_cache(maxsize=1)
def int8_calibration_pairs() -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """(premises, hypotheses, hash of both) of the int8 calibration set: INT8_CALIBRATION_PAIRS e-SNLI dev pairs,
    sampled with seed 0. The same English NLI pairs calibrate every model; they are dev pairs, never the test
    pairs a benchmark scores. Missing data raises the loader's error (which file, how to get it)."""
    from ..data.loaders import load_esnli

    dev = load_esnli("dev").sample(n=INT8_CALIBRATION_PAIRS, random_state=0)
    premises, hypotheses = tuple(dev["premise"].astype(str)), tuple(dev["hypothesis"].astype(str))
    return premises, hypotheses, text_hash(*premises, "\x1e", *hypotheses)


PROBE_PAIRS = (["A man is playing a guitar on stage.", "Two dogs run through the snow."],
               ["A person plays music.", "The animals are asleep."])  # checks a packed model against the plain one


def quiet_transformers() -> None:
    """Silence load reports and weight-loading progress bars (they flood executed notebooks)."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


GPU_DRIVER_PATHS = ("/dev/nvidiactl", "/proc/driver/nvidia", "/dev/kfd")  # NVIDIA, and AMD ROCm (torch.cuda too)


def no_gpu_driver(paths: Sequence[str] | None = None) -> bool:
    """True on Linux when no GPU driver is present, so torch.cuda cannot be available: `pick_device` then says
    'cpu' without importing torch (~1.3 s in a notebook whose model calls are all cached). Elsewhere False.

    >>> no_gpu_driver(paths=["/nonexistent"]) == sys.platform.startswith("linux")
    True
    """
    paths = GPU_DRIVER_PATHS if paths is None else paths
    return sys.platform.startswith("linux") and not any(Path(p).exists() for p in paths)


def pick_device(device: str | None = None) -> str:
    """`device` when given; else 'cuda' when torch sees a GPU, else 'cpu'."""
    if device:
        return device
    if "torch" not in sys.modules and no_gpu_driver():
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    return "cpu"


@functools.lru_cache(maxsize=1)
def cpu_has_bf16() -> bool:
    """True when this CPU has bf16 arithmetic units (AVX-512 BF16 or AMX; read from /proc/cpuinfo on Linux)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return any(f in flags for f in (" avx512_bf16", " amx_bf16"))


def native_bf16(device: str) -> bool | None:
    """Whether `device` computes bf16 in hardware: a CUDA GPU of compute capability 8.0 or later (Ampere on; ROCm
    GPUs) or an x86 CPU with AVX-512 BF16 or AMX. None where we cannot tell (ARM or other CPUs, MPS). torch's
    own `is_bf16_supported()` also says yes where it only emulates bf16 (a T4 or V100), so emulation is asked
    to be left out. Imports torch only for a GPU.

    >>> native_bf16("mps") is None
    True
    """
    if device.startswith("cuda"):
        import torch

        return bool(torch.cuda.is_bf16_supported(including_emulation=False))
    if device == "cpu" and platform.machine().lower() in ("x86_64", "amd64"):
        return cpu_has_bf16()
    return None


def read_id2label(source: ModelSource) -> dict:
    """id2label of a model: a local folder's config.json is read as JSON (no torch import); a hub model's
    config goes through `AutoConfig` at its pinned commit.

    >>> import json, tempfile; d = tempfile.mkdtemp(); _ = open(f"{d}/config.json", "w").write(json.dumps(
    ...     {"id2label": {"0": "ENTAILMENT", "1": "NEUTRAL", "2": "CONTRADICTION"}}))
    >>> read_id2label(resolve_model(d))
    {0: 'ENTAILMENT', 1: 'NEUTRAL', 2: 'CONTRADICTION'}
    """
    if source.local_dir is not None:
        import json

        config_file = source.local_dir / "config.json"
        try:
            config = json.loads(config_file.read_text())
        except (OSError, ValueError) as exc:
            raise load_error(source.name, "config (config.json)", exc) from exc
        n = config.get("num_labels") or len(config.get("id2label") or {}) or 2  # transformers' default: 2 labels
        return {int(k): v for k, v in (config.get("id2label") or {}).items()} or {i: f"LABEL_{i}" for i in range(n)}
    from transformers import AutoConfig

    quiet_transformers()
    return dict(load_pretrained(AutoConfig, source, "config").id2label)


def set_padding(tokenizer, config=None):
    """Make batches of unequal length work for every family; returns the tokenizer.

    A tokenizer without a pad token (GPT-2) pads with its EOS token (else SEP, else UNK), and the model
    `config`, when given, always takes the tokenizer's pad id: a decoder's classification head finds each
    row's last real token through `config.pad_token_id`, and transformers 5's GPT-NeoX tokenizer (Pythia)
    pads with <|padding|> while the checkpoint's config names no pad token ("Cannot handle batch sizes > 1
    if no padding token is defined").

    >>> class Tok: pad_token, eos_token, sep_token, unk_token, pad_token_id = None, "</s>", None, None, 7
    >>> class Config: pad_token_id = None
    >>> config = Config(); set_padding(Tok(), config).pad_token, config.pad_token_id
    ('</s>', 7)
    """
    if tokenizer.pad_token is None:
        pad = tokenizer.eos_token or tokenizer.sep_token or tokenizer.unk_token
        if pad is None:
            raise ModelLoadError(f"tokenizer {type(tokenizer).__name__} has no pad, eos, sep or unk token to pad "
                                 f"batches with")
        tokenizer.pad_token = pad
    if config is not None:
        config.pad_token_id = tokenizer.pad_token_id
    return tokenizer


PADDED_KEYS = ("input_ids", "attention_mask", "token_type_ids")  # the tokenizer outputs pad_batch pads itself


def pad_batch(tokenizer, enc, rows) -> dict:
    """Rows `rows` of the unpadded tokenizer output `enc`, padded to their longest as int64 tensors: what
    `tokenizer.pad(..., return_tensors="pt")` returns (input ids with the pad id, attention mask with 0, token
    types with the tokenizer's pad type id, on the tokenizer's padding side), built with numpy in one pass per
    key: the tokenizer's own pad loops over rows in Python, a large share of the scoring time on a GPU. Keys
    beyond those three go to `tokenizer.pad`.

    >>> class Tok: pad_token_id, pad_token_type_id, padding_side = 0, 0, "right"
    >>> out = pad_batch(Tok(), {"input_ids": [[5, 6, 7], [8]], "attention_mask": [[1, 1, 1], [1]]}, [1, 0])
    >>> out["input_ids"].tolist(), out["attention_mask"].tolist()
    ([[8, 0, 0], [5, 6, 7]], [[1, 0, 0], [1, 1, 1]])
    """
    import torch

    if any(key not in PADDED_KEYS for key in enc):
        return dict(tokenizer.pad({k: [enc[k][i] for i in rows] for k in enc}, return_tensors="pt"))
    lengths = np.fromiter((len(enc["input_ids"][i]) for i in rows), dtype=np.int64, count=len(rows))
    columns = np.arange(int(lengths.max(initial=0)))[None, :]
    real = (columns < lengths[:, None] if tokenizer.padding_side == "right"
            else columns >= columns.shape[1] - lengths[:, None])
    fill = {"input_ids": tokenizer.pad_token_id, "attention_mask": 0, "token_type_ids": tokenizer.pad_token_type_id}
    out = {}
    for key in enc:
        padded = np.full(real.shape, fill[key], dtype=np.int64)
        padded[real] = np.fromiter(itertools.chain.from_iterable(enc[key][i] for i in rows), dtype=np.int64,
                                   count=int(lengths.sum()))
        out[key] = torch.from_numpy(padded)
    return out


def map_label_order(id2label: dict, labels: Sequence[str], label_order: Sequence[str] | None = None,
                    model_name: str = "") -> list[int]:
    """Index of the head unit for each of `labels`.

    >>> map_label_order({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}, LABELS)
    [2, 1, 0]
    """
    n = len(id2label)
    if label_order is not None and len(label_order) != n:
        raise ModelLoadError(f"label_order {list(label_order)} names {len(label_order)} output units, but model "
                             f"{model_name or '?'} has {n}; give one name per unit, in the head's order")
    names = list(label_order) if label_order else [str(id2label[i]) for i in range(n)]
    normal = [_ALIASES.get(name.strip().lower(), name.strip()) for name in names]
    missing = [lab for lab in labels if lab not in normal]
    if missing or len(names) != len(labels):
        raise ModelLoadError(
            f"model {model_name or '?'}: cannot map its labels {names} onto {list(labels)} (missing {missing}). "
            f"Fix: pass label_order=[...] naming what each output unit means, in the head's order"
        )
    return [normal.index(lab) for lab in labels]


def warn_if_bf16_emulated(device: str) -> bool:
    """Warn (RuntimeWarning) that bfloat16 inference on `device` is emulated where it has no bf16 units
    (`native_bf16`: an x86 CPU without AVX-512 BF16 or AMX, a GPU older than Ampere): there it is the
    slow path, not a fast one (several times slower than float32 on an AVX2-only CPU). Devices we cannot judge
    (ARM CPUs, MPS) are not warned about. Returns whether it warned."""
    if native_bf16(device) is not False:
        return False
    import warnings

    if device == "cpu":
        said = ("precision bfloat16 on a CPU without bf16 units (AVX-512 BF16 or AMX) is emulated: ~6x slower "
                "than float32 (28 against 183 pairs/s measured on an AVX2-only CPU); precision int8 is this "
                "CPU's fast path")
    else:
        said = (f"precision bfloat16 on {device}, a GPU without bf16 units (compute capability below 8.0), is "
                f"emulated and may be slower than float32")
    warnings.warn(said, RuntimeWarning, stacklevel=3)
    return True


class HFClassifier(Classifier):
    """`AutoModelForSequenceClassification` from a hub id or a local directory."""

    def __init__(
        self,
        model: str | os.PathLike,
        labels: Sequence[str] = LABELS,
        label_order: Sequence[str] | None = None,
        name: str | None = None,
        tier: str | None = None,
        max_length: int | None = None,
        batch_size: int | None = None,
        device: str | None = None,
        precision: str | None = None,
        progress: bool | None = None,
        cache=None,
        revision: str | None = None,
        streams: int | None = None,
        recheck_margin: float | None = None,
        settings: InferenceSettings | None = None,
    ):
        """`settings`: how it scores (`nli_lib.inference.InferenceSettings`; default: its defaults); each of
        max_length, batch_size, device, precision, streams and recheck_margin, when given, replaces that setting."""
        super().__init__(cache)
        self.model_path = model.name if isinstance(model, ModelSource) else str(model)
        self.label_order = tuple(label_order) if label_order else None  # as given (None: the config's names)
        self.labels = tuple(labels)
        # a missing folder, an unknown hub id or an offline hub without a cached copy fails here, by name
        self.source = model if isinstance(model, ModelSource) else resolve_model(model, revision)
        self.revision = self.source.commit  # the hub commit every file is loaded from (None: a local folder)
        self.tier = tier or ("offline" if self.source.local_dir is not None else "paper")
        # outputs never name a model by a local path: a folder is named by its own name (a hub id by itself)
        self.name = name or (self.source.local_dir.name if self.source.local_dir is not None else self.model_path)
        self.settings = (settings or InferenceSettings()).given(
            max_length=max_length, batch_size=batch_size, device=device, precision=precision, streams=streams,
            recheck_margin=recheck_margin)
        self.rechecked = 0  # pairs scored twice so far (int8 margin under recheck_margin)
        self._rechecker: HFClassifier | None = None
        self.progress = show_progress() if progress is None else progress
        self._device = self.settings.device
        # Only the config is read here; tokenizer and weights load on first use (`model`, `tokenizer`), so a
        # warm run whose predictions are all cached never loads a model (nor, for a local directory, imports
        # torch/transformers: about 2 s per notebook).
        self.unit_for_label = map_label_order(read_id2label(self.source), self.labels, label_order, self.model_path)
        self.weights_id = source_fingerprint(self.source)
        self._model = self._tokenizer = None

    @property
    def device(self) -> str:
        if self._device is None:
            self._device = pick_device()
        return self._device

    @property
    def precision(self) -> str:
        return self.settings.precision

    @property
    def recheck_margin(self) -> float:
        """int8 pairs whose two most probable labels are closer than this are scored again (0: none; module
        docstring)."""
        return self.settings.margin

    @property
    def streams(self) -> int | None:
        return self.settings.streams

    @property
    def max_length(self) -> int:
        return self.settings.max_length

    @max_length.setter
    def max_length(self, value: int) -> None:  # a view at another window (factnli.context.with_length)
        self.settings = self.settings.replace(max_length=int(value))

    @property
    def batch_size(self) -> int:
        return self.settings.batch_size

    @batch_size.setter
    def batch_size(self, value: int) -> None:
        self.settings = self.settings.replace(batch_size=int(value))

    @property
    def ran(self) -> dict:
        """The settings this classifier runs with, defaults filled in (device, margin, second-pass precision,
        streams): what a record of its numbers should say."""
        return {**self.settings.as_run(self.device, self.recheck_precision), "streams": self.scoring_streams}

    @property
    def model(self):
        """The `AutoModelForSequenceClassification` (loaded on first access, same revision as the config)."""
        if self._model is None:
            if self.precision == "int8" and self.device != "cpu":
                raise ValueError(f"precision int8 runs on the CPU only (device {self.device}); "
                                 f"use bfloat16 on {self.device}")
            if self.precision == "bfloat16":
                warn_if_bf16_emulated(self.device)
            with phase("loading"):
                import torch
                from transformers import AutoModelForSequenceClassification

                quiet_transformers()
                # .bin weights are read by torch.load(weights_only=True) in transformers 5: tensors only, no code
                model = load_pretrained(AutoModelForSequenceClassification, self.source, "weights")
                set_padding(self.tokenizer, model.config)
                model = model.to(self.device).eval()
                if self.precision == "bfloat16":
                    model = model.to(torch.bfloat16)
                probe = {k: v.to(self.device) for k, v in self.tokenizer(
                    *PROBE_PAIRS, truncation=True, max_length=self.max_length, padding=True,
                    return_tensors="pt").items()}
                self._model = self.speed.prepare(model, probe, self._calibration_batches)
        return self._model

    @property
    def speed(self) -> SpeedPath:
        """The speed techniques of this model at its precision on its device (`models.speed`)."""
        return SpeedPath(self.precision, self.device, self.scoring_streams)

    def _calibration_batches(self):
        """The int8 calibration pairs (`int8_calibration_pairs`), tokenised in batches of INT8_CALIBRATION_BATCH."""
        premises, hypotheses, _ = int8_calibration_pairs()
        return (batch for _, batch in self._batches(list(premises), list(hypotheses),
                                                    batch_size=INT8_CALIBRATION_BATCH))

    @property
    def tokenizer(self):
        if self._tokenizer is None:
            with phase("loading"):
                from transformers import AutoTokenizer

                quiet_transformers()
                self._tokenizer = set_padding(load_pretrained(AutoTokenizer, self.source, "tokenizer"))
        return self._tokenizer

    @property
    def fingerprint(self) -> str:
        """Weights identity (content hash or hub commit), head-unit order, token limit and precision: every
        setting that changes a probability (so a corrected `label_order` never reuses swapped columns)."""
        provenance.note_model(self.model_path, "hf")  # results keyed by this model: the runner re-checks it
        units = ",".join(map(str, self.unit_for_label))
        recheck = f"|recheck<{self.recheck_margin:g}:{self.recheck_precision}" if self.recheck_margin else ""
        return (f"{self.weights_id}|units={units}|max_len={self.max_length}"
                f"{self._precision_tag}{recheck}")

    @property
    def recheck_precision(self) -> str:
        """The precision unsure int8 pairs are scored again at: bfloat16 where the device computes bf16 natively
        (a pair there costs ~1.4 int8 pairs, against ~2.5 in float32), float32 elsewhere."""
        return "bfloat16" if native_bf16(self.device) else "float32"

    @property
    def scoring_streams(self) -> int:
        """Streams batches are scored in: `streams`, or `models.streams.auto_streams` for this device."""
        from .streams import auto_streams

        return self.streams or auto_streams(self.device)

    @property
    def _precision_tag(self) -> str:
        """The precision's part of a cache key: empty for float32 (keys from before precisions existed stay valid)."""
        if self.precision == "int8":  # input levels and weight range: (256, 127), or 7-bit weights where 8 saturate
            from .int8 import int8_levels

            levels, weight_max = int8_levels()
            return f"|int8:{INT8_SCHEME}:levels={levels}:weights={weight_max}:{int8_calibration_pairs()[2]}"
        return "" if self.precision == "float32" else f"|{self.precision}"

    def _batches(self, premises: list[str], hypotheses: list[str] | None, batch_size: int | None = None):
        """Yield (indices, tokenized batch): all pairs tokenized in one call, sorted by token count, batches of
        `batch_size` (default: the classifier's) each padded to its own longest pair."""
        batch_size = batch_size or self.batch_size
        enc = self.tokenizer(premises, hypotheses if hypotheses else None, truncation=True,
                             max_length=self.max_length)
        order = np.argsort([len(ids) for ids in enc["input_ids"]], kind="stable")
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            yield idx, {k: v.to(self.device) for k, v in pad_batch(self.tokenizer, enc, idx).items()}

    def _predict_proba_uncached(self, premises: list[str], hypotheses: list[str] | None,
                                batch_size: int | None = None) -> np.ndarray:
        import torch

        out = np.zeros((len(premises), len(self.labels)))
        model = self.model  # loads (and packs) the weights before the first batch
        batches = list(self._batches(premises, hypotheses, batch_size))

        def probabilities(enc):
            with torch.inference_mode():
                logits = model(**enc).logits.float()
                return torch.softmax(logits, dim=-1).cpu().numpy()

        with progress(total=len(batches), desc=self.name, unit="batch",
                      bar=self.progress and len(batches) >= 2) as bar:
            for idx, probs in self.speed.score(model, batches, probabilities):
                out[idx] = probs[:, self.unit_for_label]
                bar.update()
        return self._recheck(out, premises, hypotheses) if self.recheck_margin else out

    def _recheck(self, probs: np.ndarray, premises: list[str], hypotheses: list[str] | None) -> np.ndarray:
        """`probs` with every row whose two largest values are within `recheck_margin` of each other replaced by
        the pair's probabilities at `recheck_precision` (in batches of INT8_RECHECK_BATCH pairs over the scoring
        streams); counted in `rechecked`."""
        top_two = np.sort(probs, axis=1)[:, -2:]
        unsure = np.flatnonzero(top_two[:, -1] - top_two[:, 0] < self.recheck_margin)
        if len(unsure):
            if self._rechecker is None or self._rechecker.settings != self._second_pass_settings:
                self._rechecker = self.second_pass()
            probs[unsure] = self._rechecker._predict_proba_uncached(
                [premises[i] for i in unsure], [hypotheses[i] for i in unsure] if hypotheses else None,
                batch_size=min(self.batch_size, INT8_RECHECK_BATCH))
            self.rechecked += len(unsure)
        return probs

    @property
    def _second_pass_settings(self) -> InferenceSettings:
        return self.settings.replace(precision=self.recheck_precision)

    def second_pass(self) -> HFClassifier:
        """The classifier unsure int8 pairs are scored again by: the same files, head order, name and call cache,
        at `recheck_precision` with no recheck of its own; a classifier of its own (its own loaded model)."""
        return HFClassifier(self.source, labels=self.labels, label_order=self.label_order, name=self.name,
                            tier=self.tier, settings=self._second_pass_settings, progress=False, cache=self._cache)

    def hidden_states(self, premises: Sequence[str], hypotheses: Sequence[str] | None = None,
                      pooling: str = "cls+max") -> list[np.ndarray]:
        """Per-layer pooled representations: a list (embeddings layer first) of (n, d or 2d) arrays.

        pooling: 'cls' ([CLS] vector), 'max' (max over non-padding tokens), 'mean', or 'cls+max'
        (the TaxiNLI paper's concatenation of max-pooled tokens and [CLS]). Cached on disk per call.
        """
        premises, hypotheses = (
            [str(p) for p in premises],
            [str(h) for h in hypotheses] if hypotheses is not None else None,
        )
        # keyed by what changes a hidden state: the weights, the token limit and the precision (not the head order)
        key = text_hash(f"{self.weights_id}|max_len={self.max_length}{self._precision_tag}", pooling, *premises, "\x1e",
                        *(hypotheses or []))

        def compute():
            with phase("scoring"):
                return pooled_hidden_states(self.model, self.tokenizer, premises, hypotheses, pooling=pooling,
                                            max_length=self.max_length, batch_size=self.batch_size,
                                            device=self.device, batches=self._batches)

        return cached_layers(key, len(premises), compute)


def pool(hidden, mask, pooling: str):
    """Pool one layer's token vectors (batch, seq, d) with the attention mask."""
    import torch

    m = mask.unsqueeze(-1).to(hidden.dtype)
    parts = []
    for kind in pooling.split("+"):
        if kind == "cls":
            parts.append(hidden[:, 0])
        elif kind == "max":
            parts.append(hidden.masked_fill(m == 0, float("-inf")).max(dim=1).values)
        elif kind == "mean":
            parts.append((hidden * m).sum(1) / m.sum(1).clamp(min=1))
        else:
            raise ValueError(f"unknown pooling {kind!r}")
    order = {"max": 0, "cls": 1, "mean": 2}  # paper order: max-pool first, then [CLS]
    parts = [p for _, p in sorted(zip(pooling.split("+"), parts), key=lambda t: order[t[0]])]
    return torch.cat(parts, dim=-1)


def pooled_hidden_states(model, tokenizer, premises, hypotheses, pooling, max_length, batch_size, device, batches=None):
    """Shared by classifiers and bare encoders: per-layer pooled vectors in the input order."""
    import torch

    layers: list[np.ndarray] | None = None
    if batches is None:
        def batches(p, h):
            for start in range(0, len(p), batch_size):
                idx = np.arange(start, min(start + batch_size, len(p)))
                enc = tokenizer([p[i] for i in idx], [h[i] for i in idx] if h else None, truncation=True,
                                max_length=max_length, padding=True, return_tensors="pt")
                yield idx, {k: v.to(device) for k, v in enc.items()}
    with torch.inference_mode():
        for idx, enc in batches(premises, hypotheses):
            out = model(**enc, output_hidden_states=True)
            pooled = [pool(h, enc["attention_mask"], pooling).float().cpu().numpy() for h in out.hidden_states]
            if layers is None:
                layers = [np.zeros((len(premises), p.shape[1]), dtype=np.float32) for p in pooled]
            for layer, p in zip(layers, pooled):
                layer[idx] = p
    return layers or []
