"""Dropout whose masks numpy draws: the same dropout, ~2x cheaper on a CPU (`TrainSpec.dropout_rng="numpy"`).

    >>> import numpy as np, torch
    >>> masks = NumpyMasks(np.random.default_rng(0))
    >>> y = masks.apply(torch.ones(100, 1000), 0.1)
    >>> round(float((y == 0).float().mean()), 2), round(float(y.max()), 4)   # a tenth zeroed, the rest / 0.9
    (0.1, 1.1111)

Why: torch draws a CPU dropout mask with `bernoulli_`, about three times slower an element than numpy's PCG64 draws
float32 uniforms, and a BERT-style encoder draws one for every block output, every attention map and the embeddings
(19 masks a step for MiniLM-L6), so a training step is several per cent shorter. The masks are what torch would
compute from its own draws: keep each element with probability 1 - p (a float32 uniform >= p), scale the kept ones
by 1 / (1 - p) in the input's dtype (`torch.nn.functional.dropout`'s `input * bernoulli(1 - p) / (1 - p)`). Other
draws give other masks, so a model trained with them is another model: `dropout_rng` is a TrainSpec field (in the
cache key).

Where the masks are used (`numpy_dropout`, for the duration of a `with`):
  - every `torch.nn.Dropout` module of the model is replaced by a `NumpyDropout`;
  - a model whose attention goes through transformers' attention interface (BERT, RoBERTa, ModernBERT, ...)
    runs `attention_with_numpy_dropout`: eager attention with the attention map's dropout drawn here. Its
    scaled-dot-product attention on a CPU would fall back to its unfused math path for dropout, with torch's
    masks and a check of every row for -inf; eager attention is the same computation (float32 softmax under
    bf16 autocast), without either.
A model whose attention cannot be set that way keeps its attention-map dropout, drawn by torch (seeded by
`TrainSpec.seed` as before): the result is still reproducible, only less of the speed-up is had.

A last layer trained for its first token alone (`models.first_token`, `TrainSpec.first_token_training`) draws its
three masks inside `first_row_masks(tokens)`: each is drawn for every token, as the full layer's would be, and
only the first token's row is used. The draws stay in step, so both forwards train with the same masks.

Trade-off: on a GPU, torch's dropout is one fused kernel and numpy's masks would have to be copied to the device,
so `training.auto_dropout_rng` picks "numpy" for CPUs only.
"""
from __future__ import annotations

import contextlib
import contextvars
import math

import numpy as np
import torch

ATTENTION = "nli-numpy-dropout"  # the attention implementation registered with transformers for training

_ACTIVE: contextvars.ContextVar[NumpyMasks | None] = contextvars.ContextVar("numpy_masks", default=None)


class NumpyMasks:
    """Dropout masks from one numpy Generator (draws in call order, so a seeded generator repeats a run)."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.elements = 0  # uniforms drawn so far
        self.rows: int | None = None  # while set (`first_row_masks`), a one-row input's mask is drawn for this many

    def apply(self, x: torch.Tensor, p: float) -> torch.Tensor:
        """`x` with each element zeroed with probability p and the others scaled by 1 / (1 - p)."""
        if p == 0:
            return x
        if p == 1:
            return x * 0
        drawn = tuple(x.shape)
        if self.rows is not None and len(drawn) >= 2 and drawn[-2] == 1:
            drawn = (*drawn[:-2], self.rows, drawn[-1])  # drawn as the full layer's; its first row is used
        uniforms = self.rng.random(math.prod(drawn), dtype=np.float32).reshape(drawn)
        self.elements += uniforms.size
        if drawn != tuple(x.shape):
            uniforms = uniforms[..., :1, :]
        keep = torch.from_numpy(uniforms >= np.float32(p)).view(x.shape)
        noise = keep.to(device=x.device, dtype=x.dtype)
        noise.div_(1 - p)
        return x * noise


class NumpyDropout(torch.nn.Module):
    """A `torch.nn.Dropout` (same p, same train/eval behaviour) whose masks come from `masks`."""

    def __init__(self, p: float, masks: NumpyMasks):
        super().__init__()
        self.p, self.masks = p, masks

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.masks.apply(x, self.p) if self.training else x

    def extra_repr(self) -> str:
        return f"p={self.p}"


def attention_with_numpy_dropout(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """transformers' eager attention (scores, additive mask, softmax, dropout, weighted values) with the
    attention map's dropout drawn by the active `numpy_dropout`."""
    masks = _ACTIVE.get()
    if masks is None:
        raise RuntimeError(f"attention {ATTENTION!r} runs only inside models.dropout.numpy_dropout")
    scaling = query.size(-1) ** -0.5 if scaling is None else scaling
    weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        weights = weights + attention_mask
    weights = torch.nn.functional.softmax(weights, dim=-1)
    if module.training and dropout:
        weights = masks.apply(weights, dropout)
    return torch.matmul(weights, value).transpose(1, 2).contiguous(), weights


@contextlib.contextmanager
def first_row_masks(tokens: int):
    """Inside the `with`, the active `numpy_dropout`'s mask for an input with one row (its second-to-last
    dimension: one token of a block output, one query of an attention map) is drawn for `tokens` rows and its
    first row used, the draws a full layer of `tokens` tokens makes. Without an active `numpy_dropout` (torch
    draws the masks) it does nothing.

        >>> masks = NumpyMasks(np.random.default_rng(0))
        >>> full = masks.apply(torch.ones(2, 5, 4), 0.5)
        >>> masks = NumpyMasks(np.random.default_rng(0))
        >>> token = _ACTIVE.set(masks)
        >>> with first_row_masks(5):
        ...     first = masks.apply(torch.ones(2, 1, 4), 0.5)
        >>> _ACTIVE.reset(token)
        >>> torch.equal(first, full[:, :1]), masks.elements
        (True, 40)
    """
    masks = _ACTIVE.get()
    if masks is None:
        yield
        return
    before, masks.rows = masks.rows, tokens
    try:
        yield
    finally:
        masks.rows = before


def _register_attention() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    AttentionInterface.register(ATTENTION, attention_with_numpy_dropout)
    AttentionMaskInterface.register(ATTENTION, eager_mask)  # the additive float mask eager attention adds


@contextlib.contextmanager
def numpy_dropout(model, masks: NumpyMasks):
    """Inside the `with`, `model`'s dropout masks come from `masks` (module docstring); on leaving it the model's
    own Dropout modules and attention implementation are back, so it saves and scores as before."""
    swapped = []
    for parent in model.modules():
        for name, child in parent.named_children():
            if type(child) is torch.nn.Dropout and not child.inplace:
                swapped.append((parent, name, child))
    for parent, name, child in swapped:
        setattr(parent, name, NumpyDropout(child.p, masks).train(child.training))  # the model's mode, not a new one's
    attention = model.config._attn_implementation
    settable = getattr(model, "_can_set_attn_implementation", lambda: False)()
    token = _ACTIVE.set(masks)
    try:
        if settable:
            _register_attention()
            model.set_attn_implementation(ATTENTION)
        yield model
    finally:
        if settable:
            model.set_attn_implementation(attention)
        _ACTIVE.reset(token)
        for parent, name, child in swapped:
            setattr(parent, name, child)
