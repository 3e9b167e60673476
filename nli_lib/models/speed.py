"""`HFClassifier`'s speed techniques behind one entry point, `SpeedPath`, and its hidden-state file cache.

`hf.HFClassifier` loads a model, tokenises pairs and turns logits into probabilities; what makes that fast is
here, each technique in its own module:

* at load (`SpeedPath.prepare`): precision int8 quantises the linear layers with input ranges calibrated on
  fixed e-SNLI dev pairs (`int8.quantize_int8`); on an x86 CPU, float32 and bfloat16 run the linear layers on
  pre-packed oneDNN weights (`packing.packed_copy`), float32 with eager attention for short inputs; where the head
  reads the last layer's first token alone, that layer is set up to run for it only (`first_token`);
* at scoring (`SpeedPath.score`): the first-token shortcut switched on, one attention implementation per length
  phase (`packing.attention_phases`), and batches scored in CPU streams (`streams.score_in_streams`);
* hidden states (`cached_layers`): per-layer pooled vectors kept on disk, one .npz per call.

Each technique checks itself against the plain model on probe pairs, or documents the tolerance it keeps; the
cache key of every result is the classifier's (`HFClassifier.fingerprint`), never this module's.

    >>> SpeedPath(precision="float32", device="cpu", streams=2)
    SpeedPath(precision='float32', device='cpu', streams=2)
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

from .. import filecache
from ..config import cache_dir


@dataclass(frozen=True)
class SpeedPath:
    """The techniques that apply to one model at one precision on one device."""

    precision: str  # one of inference.PRECISIONS
    device: str  # 'cpu', 'cuda', ...
    streams: int  # batches scored at once on a CPU (models.streams)

    def prepare(self, model, probe: dict, calibration: Callable[[], Iterable[dict]]):
        """`model` (loaded, on its device, at its dtype) made fast: int8 quantisation calibrated on the batches
        `calibration()` yields (precision int8), packed oneDNN weights (x86 CPU, float32 / bfloat16), the
        first-token forward. `probe`: a tokenised batch each technique checks itself on."""
        if self.precision == "int8":
            from .int8 import quantize_int8

            model = quantize_int8(model, calibration())
        elif self.device == "cpu":  # linear layers on oneDNN, packed weights
            from .packing import packed_copy

            model = packed_copy(model, probe)
            if self.precision == "float32":
                from .packing import eager_attention_for_short_inputs

                model = eager_attention_for_short_inputs(model)
        from .first_token import install_first_token_forward  # the head reads one token of the last layer

        install_first_token_forward(model, probe, precision=self.precision)
        return model

    def score(self, model, batches: Sequence[tuple], probabilities: Callable) -> Iterator[tuple]:
        """(indices, probabilities(batch)) of every (indices, batch) of `batches`, in the order the streams
        finish them, with the first-token shortcut on and one attention implementation per length phase."""
        from .first_token import first_token_only
        from .packing import attention_phases, use_attention_for
        from .streams import score_in_streams

        with first_token_only(model):
            for phase in attention_phases(model, batches):  # one attention implementation while streams run
                use_attention_for(model, phase[0][1]["input_ids"].shape[1])
                yield from score_in_streams(probabilities, phase, self.streams)


def cached_layers(key: str, n_rows: int, compute: Callable[[], list[np.ndarray]]) -> list[np.ndarray]:
    """The per-layer arrays stored under `key` (cache folder hidden_states/), else `compute()`'s, stored there.
    Arrays are too large for the SQLite call cache: one .npz per call, keyed like a cache entry."""
    path = cache_dir("hidden_states") / f"{key}.npz"
    layers = read_layers(path, n_rows)
    if layers is None:
        layers = compute()
        write_layers(path, layers)
    return layers


def read_layers(path: Path, n_rows: int) -> list[np.ndarray] | None:
    """Per-layer arrays stored by `write_layers`, or None when absent. A damaged file, or one whose arrays are
    not `n_rows` rows of finite numbers, is removed with a warning naming it (the caller recomputes)."""
    def check(layers) -> str | None:
        return ("no layers" if not layers else
                next((f"layer {i} has shape {a.shape}, expected ({n_rows}, d)" for i, a in enumerate(layers)
                      if a.ndim != 2 or a.shape[0] != n_rows), None)
                or next((f"layer {i} holds NaN or infinite values" for i, a in enumerate(layers)
                         if not np.isfinite(a).all()), None))

    return filecache.read(path, filecache.LAYERS, validate=check, what="cached hidden states",
                          redo="recomputing them")


def write_layers(path: Path, layers: Sequence[np.ndarray]) -> None:
    """Store per-layer arrays as one .npz, atomically (a partial file never has the final name)."""
    filecache.write(path, layers, filecache.LAYERS)
