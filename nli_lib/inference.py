"""Inference settings: how a neural classifier scores pairs, as one frozen object.

Built once from the profile (`Profile.inference`: its `precision`; the rest keep their defaults) and passed as one
argument from the notebook session through `lineup.load_classifier`, the model families and fine-tuning down to
`models.hf.HFClassifier`, which reads every setting from it. The allowed values are defined here, once.

    >>> s = InferenceSettings(precision="int8")
    >>> s.precision, s.margin, s.max_length
    ('int8', 0.05, 128)
    >>> s.replace(max_length=64).max_length, s.replace(recheck_margin=0).margin
    (64, 0.0)
    >>> InferenceSettings(precision="float16")
    Traceback (most recent call last):
    ...
    ValueError: precision must be one of ('float32', 'bfloat16', 'int8'), not 'float16'

Which of them change a probability, and so enter the cache key, is the classifier's to say
(`HFClassifier.fingerprint`: precision, token limit, int8's recheck; never the batch size, device or streams).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

PRECISIONS = ("float32", "bfloat16", "int8")  # inference precisions (models.hf's docstring says what each does)
INT8_RECHECK_MARGIN = 0.05  # int8 pairs whose top-two probabilities are closer are scored again (models.hf)


@dataclass(frozen=True)
class InferenceSettings:
    """How a Hugging Face classifier scores: the settings a user may choose, validated on construction."""

    precision: str = "float32"  # number format of weights and activations, one of PRECISIONS
    max_length: int = 128  # tokens a pair is truncated to
    batch_size: int = 64  # pairs a forward pass (sorted by length, so little padding)
    recheck_margin: float | None = None  # int8 only: pairs whose top-two gap is under it are scored again; None: 0.05
    device: str | None = None  # 'cpu', 'cuda', ...; None: a GPU when torch sees one, else the CPU
    streams: int | None = None  # CPU scoring streams; None: models.streams.auto_streams for the device

    def __post_init__(self):
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, not {self.precision!r}")
        if self.recheck_margin is not None and self.precision != "int8":
            raise ValueError(f"recheck_margin applies to precision int8, not {self.precision}")
        if not 0.0 <= self.margin <= 1.0:
            raise ValueError(f"recheck_margin must be within 0..1, not {self.recheck_margin!r}")
        if self.max_length < 1 or self.batch_size < 1 or (self.streams is not None and self.streams < 1):
            raise ValueError(f"max_length, batch_size and streams must be positive: {self}")

    @property
    def margin(self) -> float:
        """The recheck margin in effect: `recheck_margin` (INT8_RECHECK_MARGIN when None) under int8, else 0."""
        if self.precision != "int8":
            return 0.0
        return float(INT8_RECHECK_MARGIN if self.recheck_margin is None else self.recheck_margin)

    def replace(self, **changes) -> InferenceSettings:
        """A copy with `changes` (checked again); a change of precision drops a margin only int8 takes."""
        if changes.get("precision", "int8") != "int8" and "recheck_margin" not in changes:
            changes["recheck_margin"] = None
        return dataclasses.replace(self, **changes)

    def given(self, **overrides) -> InferenceSettings:
        """A copy with the `overrides` that are not None (keyword arguments a caller left unset keep ours)."""
        return self.replace(**{k: v for k, v in overrides.items() if v is not None})

    def as_run(self, device: str, recheck_precision: str | None = None) -> dict:
        """What a classifier with these settings ran with on `device`: every setting with its default filled in
        (the device picked, the margin in effect, the precision unsure int8 pairs were scored again at)."""
        out = {**dataclasses.asdict(self), "device": device, "recheck_margin": self.margin}
        if self.margin:
            out["recheck_precision"] = recheck_precision
        return out
