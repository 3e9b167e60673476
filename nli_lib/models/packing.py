"""Faster CPU inference: a model's linear layers through oneDNN with weights packed once, or quantised to int8.

On x86 CPUs PyTorch runs a float32 `nn.Linear` through MKL. On AMD CPUs MKL takes its AVX2 code path: about
100 GFLOP/s a core on the Zen 5 EPYC we develop on, while oneDNN's AVX-512 kernels, given weights packed once
in their blocked layout, reach about 235 GFLOP/s (benchmarks/nli_throughput.py measures both and takes the
faster as the roofline). A linear layer is ~90 % of a MiniLM forward pass, so this is most of the speed of our
float32 path. The arithmetic stays float32 (only the summation order differs: logits within ~1e-5), and
bfloat16 weights go through the same kernels (AVX-512 BF16).

`pack_linear_layers(model)` swaps every `nn.Linear` for a `PackedLinear` holding the packed weight, and fuses
the exact (erf) GELU of BERT-style intermediate layers into their linear layer. `packed_copy(model, probe)`
does it on a copy and keeps the copy only when its outputs on a probe batch match the original's (else the
original model is returned, with a warning): a kernel or layout we did not foresee costs speed, never numbers.

    >>> _ = torch.manual_seed(0)
    >>> mlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    >>> packed = pack_linear_layers(copy.deepcopy(mlp)) if can_pack() else mlp
    >>> x = torch.randn(5, 8)
    >>> bool(torch.allclose(packed(x), mlp(x), atol=1e-5))
    True
"""
from __future__ import annotations

import copy
import warnings

import torch  # imported only where a model runs (hf.py imports this module lazily)

PACK_BATCH_HINT = 64  # rows the packed layout is tuned for (any row count works)
PROBE_ATOL = {"float32": 1e-3, "bfloat16": 5e-2}  # largest |logit gap| packed vs plain on the probe batch, by
# weight dtype (measured: ~1e-5 in float32; ~2e-3 in bfloat16, whose rounding step is 2^-8)


def can_pack() -> bool:
    """True when this torch has oneDNN's packed linear kernels and the CPU runs them (x86 with AVX-512)."""
    ops = getattr(torch.ops, "mkldnn", None)
    try:
        available = (torch.backends.mkldnn.is_available() and ops is not None
                     and hasattr(ops, "_linear_pointwise") and hasattr(ops, "_reorder_linear_weight"))
    except (AttributeError, RuntimeError):
        return False
    return bool(available) and torch.backends.cpu.get_cpu_capability() in ("AVX512", "AMX")


class PackedLinear(torch.nn.Module):
    """`nn.Linear` (optionally followed by the exact GELU) on oneDNN with a pre-packed weight."""

    def __init__(self, linear: torch.nn.Linear, gelu: bool = False):
        super().__init__()
        self.in_features, self.out_features, self.gelu = linear.in_features, linear.out_features, gelu
        weight = linear.weight.detach()
        self.register_buffer("packed_weight", torch.ops.mkldnn._reorder_linear_weight(weight, PACK_BATCH_HINT))
        self.register_buffer("bias", None if linear.bias is None else linear.bias.detach().clone())
        self.attr, self.algorithm = ("gelu", "none") if gelu else ("none", "")  # algorithm 'none': erf GELU

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.mkldnn._linear_pointwise(x, self.packed_weight, self.bias, self.attr, [], self.algorithm)

    @property
    def weight(self) -> torch.Tensor:
        """A 0-element tensor of the weight's dtype and device, for model code that reads only
        `linear.weight.dtype` (T5's feed-forward casts its input to it); the weight itself is packed."""
        return self.packed_weight.new_empty(0)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, gelu={self.gelu}"


def _is_exact_gelu(act) -> bool:
    """True for transformers' GELUActivation computing torch's erf GELU (what oneDNN's 'gelu' + 'none' does)."""
    return type(act).__name__ == "GELUActivation" and getattr(act, "act", None) is torch.nn.functional.gelu


def pack_linear_layers(model):
    """Replace every `nn.Linear` of `model` (in place) by a packed one; fuse `dense` + exact GELU pairs (the
    intermediate layer of BERT-style encoders). Returns the model. Weights must be float32 or bfloat16."""
    for module in list(model.modules()):
        dense, act = getattr(module, "dense", None), getattr(module, "intermediate_act_fn", None)
        if isinstance(dense, torch.nn.Linear) and act is not None and _is_exact_gelu(act):
            module.dense, module.intermediate_act_fn = PackedLinear(dense, gelu=True), torch.nn.Identity()
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if type(child) is torch.nn.Linear:
                setattr(module, name, PackedLinear(child))
    return model


def packed_copy(model, probe: dict, atol: float | None = None):
    """A packed copy of an eval-mode HF model when packing is possible and the copy's logits on the `probe`
    batch (tokenizer output) match the original's within `atol` (default: PROBE_ATOL of the weights' dtype);
    otherwise the original model."""
    weight = next(model.parameters())
    dtype = str(weight.dtype).removeprefix("torch.")
    if not can_pack() or weight.device.type != "cpu" or dtype not in PROBE_ATOL:
        return model
    atol = PROBE_ATOL[dtype] if atol is None else atol
    try:
        packed = pack_linear_layers(copy.deepcopy(model))
        with torch.inference_mode():
            want, got = model(**probe).logits.float(), packed(**probe).logits.float()
        gap = float((want - got).abs().max())
    except Exception as exc:  # noqa: BLE001 - an unforeseen layer or kernel: the plain model still works
        warnings.warn(f"oneDNN packing failed ({type(exc).__name__}: {exc}); using the plain model (slower)",
                      RuntimeWarning, stacklevel=2)
        return model
    if not gap <= atol:
        warnings.warn(f"oneDNN-packed model differs from the plain one by {gap:.2g} on a probe batch (> {atol}); "
                      f"using the plain model (slower)", RuntimeWarning, stacklevel=2)
        return model
    return packed


EAGER_ATTENTION_MAX_TOKENS = 64  # padded batch length up to which eager attention beats torch's SDPA on the CPU


def eager_attention_for_short_inputs(model, max_tokens: int = EAGER_ATTENTION_MAX_TOKENS):
    """`model` (a transformers model on the CPU, attention 'sdpa') switching to eager attention for batches of at
    most `max_tokens` tokens, and back to SDPA for longer ones; returns the model.

    On the CPU, torch's scaled-dot-product attention with a padding mask runs a flash kernel whose per-call cost
    dominates at NLI lengths; the plain matmul + softmax of eager attention is faster there and slower on long
    inputs. Measured with the offline model (MiniLM-L6, 2 cores, batches of 64, ms per batch, sdpa vs eager):
    24 tokens 85 vs 75, 48 tokens 164 vs 156, 96 tokens 379 vs 528; 2,000 SNLI-test pairs (27.5 tokens on
    average) 617-634 vs 656-695 pairs/s. The two differ only in summation order (probabilities within ~1e-5).
    A forward pre-hook reads the batch's length and calls transformers' `set_attn_implementation` when it has
    to change; a model that cannot switch (or does not use SDPA) is returned untouched. Trade-off: the switch
    changes the model's config, so one model must not score batches from two threads at once (nothing in the
    library does; HFClassifier scores one batch at a time)."""
    can_switch = getattr(model, "_can_set_attn_implementation", None)
    if getattr(model.config, "_attn_implementation", None) != "sdpa" or not (can_switch and can_switch()):
        return model

    def choose(module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids is None:
            ids = kwargs.get("inputs_embeds")
        if ids is None:
            return
        wanted = "eager" if ids.shape[1] <= max_tokens else "sdpa"
        if module.config._attn_implementation != wanted:
            module.set_attn_implementation(wanted)

    model.register_forward_pre_hook(choose, with_kwargs=True)
    return model


def int8_input_levels() -> int:
    """Input levels of the int8 path on this CPU: 256 (uint8) where fbgemm accumulates uint8 x int8 products in 32
    bits (AVX-512 VNNI), 128 elsewhere. Without VNNI fbgemm adds pairs of products in 16 bits, which full-range
    inputs overflow (saturate: a pair of 255 x 127 products exceeds 32,767); torch's own x86 quantisation
    configs halve the input range there (`reduce_range`) for the same reason. Measured with 128 levels on the
    VNNI machine: 93.3 % of labels equal to float32 instead of 96.7 %. The count is in the cache key."""
    try:
        return 256 if torch.cpu._is_vnni_supported() else 128
    except (AttributeError, RuntimeError):  # a torch without the probe: the safe range
        return 128


def int8_kernels_available() -> bool:
    """Whether this torch has fbgemm, whose kernels the int8 path runs (x86 builds; not ARM's qnnpack)."""
    return "fbgemm" in torch.backends.quantized.supported_engines


class CalibratedInt8Linear(torch.nn.Module):
    """`nn.Linear` in int8 with a fixed input scale: weights int8 with one symmetric scale per output channel;
    the input quantised to `levels` steps (256: uint8; 128 where the kernel would saturate, `int8_input_levels`)
    with the scale and zero point of the range `lo`..`hi` seen in calibration (values outside it are clipped);
    int32 accumulation and a float32 result, in one fbgemm call
    (`torch.ops.quantized.linear_with_input_q_dq_qweight_dq_output_fp32`). A row's result depends on that row
    alone, unlike torch's dynamic quantisation, whose input scale is taken from the whole batch.

    >>> _ = torch.manual_seed(0)
    >>> lin, x = torch.nn.Linear(8, 3), torch.randn(4, 8)
    >>> q = CalibratedInt8Linear(lin, float(x.min()), float(x.max()))
    >>> bool((q(x) - lin(x)).abs().max() < 0.05), bool(torch.equal(q(x[:1]), q(x)[:1]))
    (True, True)
    """

    def __init__(self, linear: torch.nn.Linear, lo: float, hi: float, levels: int = 256):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        weight = linear.weight.detach().float()
        scales = (weight.abs().amax(dim=1) / 127).clamp(min=1e-12).double()
        with warnings.catch_warnings():  # torch deprecates quantized tensors; its fbgemm kernels still take them
            warnings.simplefilter("ignore", UserWarning)
            qweight = torch.quantize_per_channel(weight, scales, torch.zeros_like(scales, dtype=torch.long), 0,
                                                 torch.qint8)
        bias = None if linear.bias is None else linear.bias.detach().float()
        self.packed = torch.ops.quantized.linear_prepack(qweight, bias)
        lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)  # the range must hold 0 (padding, ReLU zeros)
        self.scale = max((hi - lo) / (levels - 1), 1e-12)
        self.zero_point = min(levels - 1, max(0, round(-lo / self.scale)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.quantized.linear_with_input_q_dq_qweight_dq_output_fp32(
            x.float(), self.scale, self.zero_point, self.packed)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, scale={self.scale:.4g}, "
                f"zero_point={self.zero_point}")


def linear_input_ranges(model, batches) -> dict[str, tuple[float, float]]:
    """(min, max) of the input of every plain `nn.Linear` of `model`, by module name, over the forward passes
    of `batches` (tokenizer outputs); padding positions count like tokens, so fixed batches give fixed ranges.

    >>> m = torch.nn.Sequential(torch.nn.Linear(2, 2))
    >>> class Seq(torch.nn.Module):
    ...     def __init__(self): super().__init__(); self.body = m
    ...     def forward(self, x): return self.body(x)
    >>> linear_input_ranges(Seq(), [{"x": torch.tensor([[1.0, -3.0]])}, {"x": torch.tensor([[5.0, 0.5]])}])
    {'body.0': (-3.0, 5.0)}
    """
    ranges, hooks = {}, []

    def record(name):
        def hook(module, args):
            x = args[0].detach()
            lo, hi = ranges.get(name, (float("inf"), float("-inf")))
            ranges[name] = (min(lo, float(x.min())), max(hi, float(x.max())))
        return hook

    for name, module in model.named_modules():
        if type(module) is torch.nn.Linear:
            hooks.append(module.register_forward_pre_hook(record(name)))
    try:
        with torch.inference_mode():
            for batch in batches:
                model(**batch)
    finally:
        for hook in hooks:
            hook.remove()
    return ranges


def quantize_int8(model, calibration_batches, levels: int | None = None):
    """`model` (eval mode, CPU, float32) with every plain `nn.Linear` swapped, in place, for a
    `CalibratedInt8Linear` whose input range is the min..max that `calibration_batches` (tokenizer outputs)
    produced at that layer in float32 (min-max calibration, ONNX Runtime's default for static quantisation),
    in `levels` input steps (default: `int8_input_levels()`). Layers the calibration never reached keep float32.
    Returns the model; raises ValueError where torch has no fbgemm (ARM). The caller keys caches by the
    calibration data (`models.hf.INT8_SCHEME` and the calibration pairs' hash).

    Why a calibrated range rather than torch's dynamic quantisation (this module's int8 path before
    2026-11-24): dynamic quantisation takes each layer's input scale from the whole batch, so a pair's
    probabilities depended on the pairs it happened to be batched with (measured, offline model, 2,000
    SNLI-test pairs: 5.3 % of labels changed when the same pairs were scored in other batches), and a cache
    keyed by the pair could not hold them. Fixed ranges make a pair's result its own (up to float32 rounding
    upstream, which can cross a rounding step: at most 3e-4 in probability, measured); they also kept more
    labels equal to float32 (96.7 % vs 94.5 %) and ran ~5 % faster (one kernel, no range pass). Clipping the range at
    a percentile instead of min-max lost labels (88.5 % at the 99.99th on held-out e-SNLI dev pairs): BERT-style
    encoders carry a few large outlier channels that clipping destroys.

    >>> _ = torch.manual_seed(0)
    >>> class Tiny(torch.nn.Module):
    ...     def __init__(self): super().__init__(); self.fc = torch.nn.Linear(8, 3)
    ...     def forward(self, x): return self.fc(x)
    >>> q = quantize_int8(Tiny().eval(), [{"x": torch.randn(16, 8)}])
    >>> type(q.fc).__name__, tuple(q(torch.randn(2, 8)).shape)
    ('CalibratedInt8Linear', (2, 3))
    """
    if not int8_kernels_available():
        raise ValueError(f"precision int8 runs torch's fbgemm kernels, which this torch lacks (quantized engines "
                         f"{torch.backends.quantized.supported_engines}: not an x86 build); use bfloat16")
    levels = int8_input_levels() if levels is None else levels
    ranges = linear_input_ranges(model, calibration_batches)
    for prefix, module in list(model.named_modules()):
        for name, child in list(module.named_children()):
            full = f"{prefix}.{name}" if prefix else name
            if type(child) is torch.nn.Linear and full in ranges:
                setattr(module, name, CalibratedInt8Linear(child, *ranges[full], levels=levels))
    return model
