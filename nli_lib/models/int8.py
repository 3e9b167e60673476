"""int8 inference on x86 CPUs: every linear layer in int8 with an input range calibrated once.

    >>> _ = torch.manual_seed(0)
    >>> class Tiny(torch.nn.Module):
    ...     def __init__(self): super().__init__(); self.fc = torch.nn.Linear(8, 3)
    ...     def forward(self, x): return self.fc(x)
    >>> q = quantize_int8(Tiny().eval(), [{"x": torch.randn(16, 8)}])
    >>> type(q.fc).__name__, tuple(q(torch.randn(2, 8)).shape)
    ('CalibratedInt8Linear', (2, 3))

Scheme: weights int8 with one symmetric scale per output channel; each layer's input quantised to uint8 with one
fixed scale and zero point, the min..max its input took in float32 over calibration batches (min-max
calibration, ONNX Runtime's default for static quantisation; values outside are clipped); int32 accumulation;
oneDNN's int8 matmul (`torch.ops.onednn.qlinear_pointwise`, the kernel torch.compile's x86 int8 lowering uses).

Why fixed ranges rather than torch's dynamic quantisation (our int8 path until 2026-11-24): dynamic quantisation
takes each layer's input scale from the whole batch, so a pair's probabilities depended on the pairs it happened
to be batched with (offline model, 2,000 SNLI-test pairs scored again in other batches: 5.3 % of labels
changed), and a cache keyed by the pair could not hold them. Fixed ranges make a pair's result its own, up to
float32 rounding, which can cross a rounding step (scored again in batches of 16: no label moved, probabilities
by at most 0.004). They also
kept more labels equal to float32 (96.7 % vs 94.5 %). Clipping the ranges at a percentile instead of min-max lost
labels (88.5 % at the 99.99th on held-out e-SNLI dev pairs): BERT-style encoders carry a few large outlier
channels that clipping destroys.

Speed (same 2,000 pairs, 2 cores, pairs/s; float32 ~670): torch's dynamic quantisation ~1,200; one fbgemm call a
layer with fixed ranges ~1,290; this module ~1,560, from two fusions that leave the numbers as they were:
  - layers reading the same tensor (a transformer's query, key and value) quantise it once (`_SharedInput`);
  - a BERT-style feed-forward block (`intermediate.dense` + exact GELU, then `output.dense`) runs the GELU inside
    the first matmul and writes its result straight in the second layer's uint8 input format, so the widest
    activation of the model is never written in float32 (that GELU alone took ~12 % of the int8 time).
The fusion is applied only where calibration saw the second layer read exactly the block's output.
"""
from __future__ import annotations

import warnings

import torch  # imported only where a model runs (hf.py imports this module lazily)

from .packing import is_exact_gelu


def int8_input_levels() -> int:
    """Input levels of the int8 path on this CPU: 256 (uint8) where the kernel accumulates uint8 x int8 products
    in 32 bits (AVX-512 VNNI), 128 elsewhere. Without VNNI, x86 int8 kernels add pairs of products in 16 bits,
    which full-range inputs overflow (saturate: two 255 x 127 products exceed 32,767); torch's own x86
    quantisation configs halve the input range there (`reduce_range`) for the same reason. Measured with 128
    levels on the VNNI machine: 93.3 % of labels equal to float32 instead of 96.7 %. The count is in the cache
    key."""
    try:
        return 256 if torch.cpu._is_vnni_supported() else 128
    except (AttributeError, RuntimeError):  # a torch without the probe: the safe range
        return 128


def int8_kernels_available() -> bool:
    """Whether this torch runs oneDNN's int8 matmul on this CPU (x86 builds with AVX2 or better; not ARM)."""
    ops = getattr(torch.ops, "onednn", None)
    try:
        return (torch.backends.mkldnn.is_available() and ops is not None and hasattr(ops, "qlinear_pointwise")
                and torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512", "AMX"))
    except (AttributeError, RuntimeError):
        return False


def _qparams(lo: float, hi: float, levels: int) -> tuple[float, int]:
    """(scale, zero point) mapping lo..hi (widened to hold 0) onto 0..levels-1.

    >>> scale, zero_point = _qparams(-1.0, 1.55, 256)
    >>> round(scale, 6), zero_point
    (0.01, 100)
    """
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)  # the range must hold 0 (padding, ReLU zeros)
    scale = max((hi - lo) / (levels - 1), 1e-12)
    return scale, min(levels - 1, max(0, round(-lo / scale)))


def _to_uint8(x: torch.Tensor, scale: float, zero_point: int) -> torch.Tensor:
    """x quantised to uint8 (one fused pass: torch's quantize_per_tensor, whose deprecation warning is silenced;
    torch is pinned, and the plain-op equivalent takes four passes over memory, ~1.8x as long)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.quantize_per_tensor(x.float().contiguous(), scale, zero_point, torch.quint8).int_repr()


class _SharedInput:
    """Quantises a tensor once for the sibling layers that read it one after another (query, key, value): the
    last tensor seen is kept, with its quantised copy, and reused while the same tensor object comes back."""

    def __init__(self):
        self.x = self.q = self.key = None

    def __call__(self, x: torch.Tensor, scale: float, zero_point: int) -> torch.Tensor:
        if x is not self.x or self.key != (scale, zero_point):
            self.x, self.key = x, (scale, zero_point)
            self.q = _to_uint8(x, scale, zero_point)
        return self.q


class CalibratedInt8Linear(torch.nn.Module):
    """`nn.Linear` in int8 (module docstring): input range `lo`..`hi` in `levels` steps. Takes float input, or uint8
    input already in this layer's input format (from a fused producer). With `gelu`, the exact GELU runs inside the
    matmul; with `out_format` (scale, zero point), the result is written as uint8 in that format instead of float32.

    >>> _ = torch.manual_seed(0)
    >>> lin, x = torch.nn.Linear(8, 3), torch.randn(4, 8)
    >>> q = CalibratedInt8Linear(lin, float(x.min()), float(x.max()))
    >>> bool((q(x) - lin(x)).abs().max() < 0.05), bool(torch.equal(q(x[:1]), q(x)[:1]))
    (True, True)
    """

    def __init__(self, linear: torch.nn.Linear, lo: float, hi: float, levels: int = 256, *, gelu: bool = False,
                 out_format: tuple[float, int] | None = None, shared: _SharedInput | None = None):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        weight = linear.weight.detach().float()
        self.register_buffer("weight_scale", (weight.abs().amax(dim=1) / 127).clamp(min=1e-12))
        int_weight = torch.clamp(torch.round(weight / self.weight_scale[:, None]), -127, 127).to(torch.int8)
        self.register_buffer("packed_weight", torch.ops.onednn.qlinear_prepack(int_weight, None))
        self.register_buffer("weight_zero_point", torch.zeros(self.out_features, dtype=torch.int32))
        self.register_buffer("bias", None if linear.bias is None else linear.bias.detach().float().clone())
        self.scale, self.zero_point = _qparams(lo, hi, levels)
        self.gelu, self.out_format, self.shared = gelu, out_format, shared

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype == torch.uint8:  # written in this layer's input format by its fused producer
            xq = x
        elif self.shared is not None:
            xq = self.shared(x, self.scale, self.zero_point)
        else:
            xq = _to_uint8(x, self.scale, self.zero_point)
        post, algorithm = ("gelu", "none") if self.gelu else ("none", "")  # algorithm 'none': erf GELU
        out_scale, out_zero, out_dtype = (*self.out_format, None) if self.out_format else (1.0, 0, torch.float32)
        return torch.ops.onednn.qlinear_pointwise(xq, self.scale, self.zero_point, self.packed_weight,
                                                  self.weight_scale, self.weight_zero_point, self.bias, out_scale,
                                                  out_zero, out_dtype, post, [], algorithm)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, scale={self.scale:.4g}, "
                f"zero_point={self.zero_point}, gelu={self.gelu}, uint8_out={self.out_format is not None}")


def _feed_forward_blocks(model) -> dict[str, str]:
    """{block name: its consumer linear's name} for BERT-style feed-forward blocks: a module `X.intermediate`
    with a plain `dense` and an exact GELU, and a plain linear `X.output.dense` beside it."""
    modules = dict(model.named_modules())
    found = {}
    for name, module in modules.items():
        if name.rsplit(".", 1)[-1] != "intermediate":
            continue
        dense, act = getattr(module, "dense", None), getattr(module, "intermediate_act_fn", None)
        consumer = name[: -len("intermediate")] + "output.dense"
        if type(dense) is torch.nn.Linear and is_exact_gelu(act) and type(modules.get(consumer)) is torch.nn.Linear:
            found[name] = consumer
    return found


def calibrate(model, batches) -> tuple[dict[str, tuple[float, float]], dict[str, str]]:
    """(min, max) of the input of every plain `nn.Linear` of `model` by module name, over the forward passes of
    `batches` (tokenizer outputs; padding positions count like tokens, so fixed batches give fixed ranges), and the
    feed-forward blocks (`_feed_forward_blocks`: block -> consumer) whose consumer read exactly the block's output
    in every pass.

    >>> m = torch.nn.Sequential(torch.nn.Linear(2, 2))
    >>> class Seq(torch.nn.Module):
    ...     def __init__(self): super().__init__(); self.body = m
    ...     def forward(self, x): return self.body(x)
    >>> calibrate(Seq(), [{"x": torch.tensor([[1.0, -3.0]])}, {"x": torch.tensor([[5.0, 0.5]])}])
    ({'body.0': (-3.0, 5.0)}, {})
    """
    ranges, hooks, modules = {}, [], dict(model.named_modules())
    blocks = _feed_forward_blocks(model)
    last_out, direct = {}, {block: True for block in blocks}
    consumers = {consumer: block for block, consumer in blocks.items()}

    def record(name):
        def hook(module, args):
            x = args[0].detach()
            lo, hi = ranges.get(name, (float("inf"), float("-inf")))
            ranges[name] = (min(lo, float(x.min())), max(hi, float(x.max())))
            if name in consumers:
                direct[consumers[name]] &= args[0] is last_out.get(consumers[name])
        return hook

    def remember(block):
        def hook(module, args, output):
            last_out[block] = output
        return hook

    for name, module in modules.items():
        if type(module) is torch.nn.Linear:
            hooks.append(module.register_forward_pre_hook(record(name)))
        if name in blocks:
            hooks.append(module.register_forward_hook(remember(name)))
    try:
        with torch.inference_mode():
            for batch in batches:
                model(**batch)
    finally:
        for hook in hooks:
            hook.remove()
    return ranges, {block: blocks[block] for block, ok in direct.items() if ok and blocks[block] in ranges}


def quantize_int8(model, calibration_batches, levels: int | None = None, fuse: bool = True):
    """`model` (eval mode, CPU, float32) with every plain `nn.Linear` swapped, in place, for a
    `CalibratedInt8Linear` whose input range `calibrate` measured on `calibration_batches`, in `levels` input
    steps (default: `int8_input_levels()`); sibling layers share one quantisation of a shared input, and
    feed-forward blocks are fused (module docstring; `fuse=False`: neither, same numbers, slower). Layers the
    calibration never reached keep float32.
    Returns the model; raises ValueError where torch has no x86 int8 kernels (ARM builds). The caller keys
    caches by the calibration data (`models.hf.INT8_SCHEME` and the calibration pairs' hash)."""
    if not int8_kernels_available():
        raise ValueError("precision int8 runs oneDNN's x86 int8 kernels, which this torch or CPU lacks (not an "
                         "x86 build with AVX2 or better); use bfloat16")
    levels = int8_input_levels() if levels is None else levels
    ranges, fused = calibrate(model, calibration_batches)
    modules = dict(model.named_modules())
    for block, consumer in fused.items() if fuse else ():  # from the float32 layer; the consumer is converted
        module = modules[block]  # below, in the format written here
        module.dense = CalibratedInt8Linear(module.dense, *ranges[f"{block}.dense"], levels, gelu=True,
                                            out_format=_qparams(*ranges[consumer], levels))
        module.intermediate_act_fn = torch.nn.Identity()
    for parent_name, parent in list(modules.items()):
        shared = _SharedInput() if fuse else None
        for name, child in list(parent.named_children()):
            full = f"{parent_name}.{name}" if parent_name else name
            if type(child) is torch.nn.Linear and full in ranges:
                setattr(parent, name, CalibratedInt8Linear(child, *ranges[full], levels, shared=shared))
    return model
