"""int8 inference on x86 CPUs: every linear layer in int8 with an input range calibrated once.

    >>> _ = torch.manual_seed(0)
    >>> class Tiny(torch.nn.Module):
    ...     def __init__(self): super().__init__(); self.fc = torch.nn.Linear(8, 3)
    ...     def forward(self, x): return self.fc(x)
    >>> q = quantize_int8(Tiny().eval(), [{"x": torch.randn(16, 8)}])
    >>> type(q.fc).__name__, tuple(q(torch.randn(2, 8)).shape)
    ('CalibratedInt8Linear', (2, 3))

Scheme: weights int8 with one symmetric scale per output channel; each layer's input quantised to uint8 with one
fixed scale and zero point, from the min..max its input took in float32 over calibration batches (min-max
calibration, ONNX Runtime's default for static quantisation; values outside are clipped); int32 accumulation;
oneDNN's int8 matmul (`torch.ops.onednn.qlinear_pointwise`, the kernel torch.compile's x86 int8 lowering uses).
One scale for a whole input loses the narrow channels next to a few wide ones (BERT-style encoders carry outlier
channels), so each layer's channels are evened out first (`_plans`):
  - SmoothQuant (Xiao et al., 2023; migration strength alpha = SMOOTHING_ALPHA) for every layer whose input
    arrives in float32: the input is multiplied by 1/s per channel before quantisation, the weight
    columns by s (the same product; `smoothing_factors`);
  - the OUTLIER_CHANNELS widest input channels of each feed-forward block's second layer computed in float32
    (LLM.int8's decomposition, Dettmers et al., 2022), their product added inside the int8 matmul: that input is
    the GELU's output, written in uint8 by the fused first layer, where no per-channel factor can be applied.
alpha was chosen on held-out pairs (e-SNLI dev pairs outside the calibration set, SNLI-test pairs outside the
benchmark's 2,000), never the benchmark's: 0.7 kept the most labels equal to float32. Per-layer alphas
(SmoothQuant's auto-tuning), bias correction, GPTQ rounding of the weights, one range per token and float32
channels on more layers were tried and left out: they kept no more labels, or cost more speed than they gained.
What is left of int8's label changes is the activations' rounding, which no input scheme tried removes with the
offline model, so precision "int8" as shipped adds a step: `HFClassifier` scores the pairs this module's int8 is
unsure of again, in bfloat16 or float32 (`hf.INT8_RECHECK_MARGIN`), for ~5 % of the speed.

Why fixed ranges rather than torch's dynamic quantisation: dynamic quantisation takes each layer's input scale
from the whole batch, so a pair's probabilities depend on the pairs it happens to be batched with (scored again
in other batches, labels change), and a cache keyed by the pair could not hold them. Fixed ranges, per-channel
factors and per-token float32 channels make a pair's result its own, up to float32 rounding, which can cross a
rounding step. Clipping the ranges at a percentile instead of min-max loses many labels.

Speed: the smoothing multiplications and the float32 channels cost some speed against one range a layer; the
fusions below win speed back and leave the numbers as they were:
  - layers reading the same tensor (a transformer's query, key and value, planned together) smooth and
    quantise it once (`_SharedInput`);
  - a BERT-style feed-forward block (`intermediate.dense` + exact GELU, then `output.dense`) runs the GELU inside
    the first matmul and writes its result straight in the second layer's uint8 input format, so the widest
    activation of the model is never written in float32 (a separate GELU is a large share of the int8 time); the
    first layer also writes the second's float32 outlier channels (`_Handoff`);
  - the quantised input is handed to the kernel without a copy (`_to_uint8`).
The fusion is applied only where calibration saw the second layer read exactly the block's output. One more
changes float32 rounding only: each block output (attention output, feed-forward output) adds its skip
connection inside the matmul (`fuse_residual_adds`; probabilities within ~0.015, no label moved on the
benchmark's pairs): it saves the separate adds, and the LayerNorm after them runs faster reading the kernel's
fresh output.
"""
from __future__ import annotations

import threading
import types
import warnings

import torch  # imported only where a model runs (hf.py imports this module lazily)

from .packing import is_exact_gelu

OUTLIER_CHANNELS = 16  # input channels per layer kept in float32: the widest by calibrated range (module docstring)
SMOOTHING_ALPHA = 0.7  # SmoothQuant's migration strength (chosen on held-out pairs: module docstring)


def int8_levels() -> tuple[int, int]:
    """(input levels, largest int8 weight) of the int8 path on this CPU: (256, 127) where the kernel accumulates
    uint8 x int8 products in 32 bits (AVX-512 VNNI), (256, 63) elsewhere. Without VNNI, x86 int8 kernels add
    pairs of products in 16 bits with saturation, so two 255 x 127 products (64,770) overflow 32,767 while two
    255 x 63 (32,130) do not: the weights get 7 bits (ONNX Runtime's `reduce_range` does the same). Halving the
    inputs instead (128 levels, torch's `reduce_range`) costs more labels on held-out pairs, because what is left
    of our label changes is the activations' rounding. Both numbers are in the cache key."""
    try:
        vnni = torch.cpu._is_vnni_supported()
    except (AttributeError, RuntimeError):  # a torch without the probe: the safe range
        vnni = False
    return (256, 127) if vnni else (256, 63)


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


def _to_uint8(x: torch.Tensor, scale: float, zero_point: int, multiplier: torch.Tensor | None = None,
              levels: int = 256) -> torch.Tensor:
    """x (times the per-channel `multiplier`, SmoothQuant's 1/s, when given) quantised to uint8 in one fused pass
    (torch's quantize_per_tensor, whose deprecation warning is silenced; torch is pinned, and the plain-op
    equivalent takes four passes over memory, ~1.8x as long). The uint8 tensor shares the quantised tensor's bytes
    (`int_repr()` would copy them: ~3x the cost of the quantisation). quantize_per_tensor clips at 255, so with
    fewer `levels` the codes above levels - 1 (inputs beyond the calibrated range) are clipped here, in place:
    left at up to 255, they would saturate the 16-bit pair sums the halved range exists to avoid.

    >>> _to_uint8(torch.tensor([-1.0, 0.0, 1.5, 9.0]), scale=0.02, zero_point=50, levels=128).tolist()
    [0, 50, 125, 127]
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        x = x if multiplier is None else x * multiplier
        q = torch.quantize_per_tensor(x.float().contiguous(), scale, zero_point, torch.quint8)
    codes = torch.empty(0, dtype=torch.uint8).set_(q.untyped_storage(), q.storage_offset(), q.shape, q.stride())
    return codes.clamp_max_(levels - 1) if levels < 256 else codes


def outlier_channels(lo: torch.Tensor, hi: torch.Tensor, count: int = OUTLIER_CHANNELS) -> torch.Tensor:
    """Indices of the input channels kept in float32: the `count` widest by calibrated magnitude (at most an
    eighth of the channels; none below 8 channels), in ascending order.

    >>> outlier_channels(torch.tensor([-1.0, -9, 0, -1, 0, 0, 0, -2]), torch.tensor([1.0, 2, 30, 1, 1, 1, 1, 1]), 2)
    tensor([2])
    """
    count = min(count, lo.numel() // 8)
    widest = torch.maximum(lo.abs(), hi.abs()).argsort(descending=True, stable=True)[:count]
    return widest.sort().values


def smoothing_factors(lo: torch.Tensor, hi: torch.Tensor, weight: torch.Tensor,
                      alpha: float = SMOOTHING_ALPHA) -> torch.Tensor:
    """SmoothQuant's per-channel factors s_j = max|x_j|^alpha / max|W_:j|^(1 - alpha): the layer computes
    (x / s) (W s)^T, the same product, with the input's channels evened out before one scale covers them all.

    >>> smoothing_factors(torch.tensor([-4.0, 0.0]), torch.tensor([1.0, 0.25]), torch.tensor([[1.0, 4.0]]), alpha=0.5)
    tensor([2.0000, 0.2500])
    """
    x_max = torch.maximum(lo.abs(), hi.abs()).clamp(min=1e-5)
    w_max = weight.abs().amax(dim=0).clamp(min=1e-5)
    return (x_max ** alpha / w_max ** (1 - alpha)).clamp(min=1e-5)


def _int8_rows(weight: torch.Tensor, weight_max: int = 127) -> tuple[torch.Tensor, torch.Tensor]:
    """(int8 weight, one symmetric scale per output row): round(w / scale) with scale = max|row| / weight_max.

    >>> _int8_rows(torch.tensor([[1.0, -0.25]]), weight_max=63)
    (tensor([[ 63, -16]], dtype=torch.int8), tensor([0.0159]))
    """
    scale = (weight.abs().amax(dim=1) / weight_max).clamp(min=1e-12)
    return torch.clamp(torch.round(weight / scale[:, None]), -weight_max, weight_max).to(torch.int8), scale


class _SharedInput(threading.local):
    """Smooths and quantises a tensor once for the sibling layers that read it one after another (query, key,
    value, planned with the same factors and range): the last tensor seen is kept, with its quantised copy, and
    reused while the same tensor object comes back in the same format. Kept per thread, so streams scoring
    batches with one model at once (`models.streams`) never see each other's tensors."""

    def __init__(self):
        self.x = self.q = self.key = None

    def __call__(self, x: torch.Tensor, scale: float, zero_point: int, multiplier: torch.Tensor | None,
                 levels: int = 256) -> torch.Tensor:
        key = (scale, zero_point, None if multiplier is None else multiplier.data_ptr(), levels)
        if x is not self.x or self.key != key:
            self.x, self.key = x, key
            self.q = _to_uint8(x, scale, zero_point, multiplier, levels)
        return self.q


class _Handoff(threading.local):
    """Carries a fused producer's float32 outlier channels to its consumer, beside the uint8 tensor it wrote (the
    uint8 format saturates them). The consumer must pass back that same tensor. Kept per thread (`_SharedInput`)."""

    def __init__(self):
        self.uint8 = self.outliers = None

    def put(self, uint8: torch.Tensor, outliers: torch.Tensor) -> None:
        self.uint8, self.outliers = uint8, outliers

    def take(self, uint8: torch.Tensor) -> torch.Tensor:
        if uint8 is not self.uint8:
            raise RuntimeError("int8: a fused layer got uint8 input that its producer did not write")
        return self.outliers


class CalibratedInt8Linear(torch.nn.Module):
    """`nn.Linear` in int8 (module docstring): input range `lo`..`hi` in `levels` steps, weights within
    +-`weight_max` (defaults: this CPU's, `int8_levels`; 8-bit weights would saturate the kernel's 16-bit pair sums
    on a CPU without VNNI). `outliers`:
    input channels computed in float32 instead (their int8 weights are zero, so their clipped uint8 values do not
    count); `input_multiplier`: SmoothQuant's 1/s per input channel (the input is multiplied by it before
    quantisation, the weight columns by s; siblings pass one tensor object, so their shared quantisation is done
    once). Takes float input, or uint8 input already in this layer's input format from a fused producer (with the
    producer's float32 outlier channels in `handoff`). With `gelu`, the exact GELU runs inside the matmul; with
    `out_format` (scale, zero point, in this layer's `levels`), the result is written as uint8 in that format
    instead of float32, and `consumer_outliers` (channels of the result) are computed again in float32 for the
    consumer.

    >>> _ = torch.manual_seed(0)
    >>> lin, x = torch.nn.Linear(8, 3), torch.randn(4, 8)
    >>> q = CalibratedInt8Linear(lin, float(x.min()), float(x.max()))
    >>> bool((q(x) - lin(x)).abs().max() < 0.05), bool(torch.equal(q(x[:1]), q(x)[:1]))
    (True, True)
    """

    def __init__(self, linear: torch.nn.Linear, lo: float, hi: float, levels: int | None = None,
                 weight_max: int | None = None, *,
                 outliers: torch.Tensor | None = None, input_multiplier: torch.Tensor | None = None, gelu: bool = False,
                 out_format: tuple[float, int] | None = None, consumer_outliers: torch.Tensor | None = None,
                 shared: _SharedInput | None = None, handoff: _Handoff | None = None):
        super().__init__()
        if outliers is not None and (gelu or input_multiplier is not None):
            raise ValueError("int8: float32 outlier channels are added after the matmul, so they cannot precede "
                             "a fused GELU or be combined with smoothing")
        self.in_features, self.out_features = linear.in_features, linear.out_features
        weight = linear.weight.detach().float().clone()
        bias = None if linear.bias is None else linear.bias.detach().float().clone()
        self.register_buffer("outliers", None if outliers is None or not len(outliers) else outliers.clone())
        self.register_buffer("outlier_weight", None)
        if self.outliers is not None:  # float32 (k, out) weight of the outlier channels; theirs is 0 in int8
            self.outlier_weight = weight[:, self.outliers].t().contiguous()
            weight[:, self.outliers] = 0.0
        self.register_buffer("input_multiplier", input_multiplier)  # not copied: siblings share the object
        if input_multiplier is not None:
            weight = weight / input_multiplier[None, :]
        cpu_levels, cpu_weight_max = int8_levels()
        self.levels = cpu_levels if levels is None else levels
        self.weight_max = cpu_weight_max if weight_max is None else weight_max
        int_weight, weight_scale = _int8_rows(weight, self.weight_max)
        self.register_buffer("weight_scale", weight_scale)
        self.register_buffer("packed_weight", torch.ops.onednn.qlinear_prepack(int_weight, None))
        self.register_buffer("weight_zero_point", torch.zeros(self.out_features, dtype=torch.int32))
        self.register_buffer("bias", bias)
        self.register_buffer("consumer_outliers", None)
        if consumer_outliers is not None and len(consumer_outliers):  # the same int8 rows, float32 output
            self.consumer_outliers = consumer_outliers.clone()
            self.register_buffer("side_weight", torch.ops.onednn.qlinear_prepack(int_weight[consumer_outliers],
                                                                                 None))
            self.register_buffer("side_scale", weight_scale[consumer_outliers].contiguous())
            self.register_buffer("side_bias", None if bias is None else bias[consumer_outliers].contiguous())
        self.scale, self.zero_point = _qparams(lo, hi, self.levels)
        self.gelu, self.out_format, self.shared, self.handoff = gelu, out_format, shared, handoff

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None = None) -> torch.Tensor:
        """The layer's output for `x`; plus `residual` (float32, the output's shape), added inside the matmul
        (a transformer block's skip connection: `fuse_residual_adds`), when given."""
        side = None
        if x.dtype == torch.uint8:  # written in this layer's input format by its fused producer
            xq = x
            if self.outliers is not None:
                side = self.handoff.take(x)
        else:
            if self.outliers is not None:
                side = x.reshape(-1, self.in_features).index_select(1, self.outliers)
            multiplier = self.input_multiplier
            xq = (self.shared(x, self.scale, self.zero_point, multiplier, self.levels) if self.shared is not None
                  else _to_uint8(x, self.scale, self.zero_point, multiplier, self.levels))
        post, algorithm = ("gelu", "none") if self.gelu else ("none", "")  # algorithm 'none': erf GELU
        out_scale, out_zero, out_dtype = (*self.out_format, None) if self.out_format else (1.0, 0, torch.float32)
        if residual is not None and (self.out_format is not None or self.gelu):
            raise ValueError("int8: a residual is added to a float32 result without activation only")
        if side is None and residual is None:
            out = torch.ops.onednn.qlinear_pointwise(xq, self.scale, self.zero_point, self.packed_weight,
                                                     self.weight_scale, self.weight_zero_point, self.bias,
                                                     out_scale, out_zero, out_dtype, post, [], algorithm)
        else:  # the float32 outlier channels' product (and the bias, or the residual), added inside the matmul
            bias = self.bias
            if residual is not None:
                other = residual.reshape(-1, self.out_features)
                if side is not None:
                    other = torch.addmm(other, side, self.outlier_weight)
            else:
                other, bias = (side @ self.outlier_weight if self.bias is None
                               else torch.addmm(self.bias, side, self.outlier_weight)), None
            out = torch.ops.onednn.qlinear_pointwise.binary(
                xq, self.scale, self.zero_point, self.packed_weight, self.weight_scale, self.weight_zero_point,
                other.contiguous().view(*xq.shape[:-1], self.out_features), bias, out_scale, out_zero, out_dtype,
                1.0, 0, "add", 1.0, "none", [], "")
        if self.out_format is not None and self.levels < 256:  # the consumer's codes stop at levels - 1 too
            out.clamp_max_(self.levels - 1)
        if self.consumer_outliers is not None:
            self.handoff.put(out, torch.ops.onednn.qlinear_pointwise(
                xq, self.scale, self.zero_point, self.side_weight, self.side_scale,
                self.weight_zero_point[: len(self.consumer_outliers)], self.side_bias, 1.0, 0, torch.float32,
                post, [], algorithm).reshape(-1, len(self.consumer_outliers)))
        return out

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, scale={self.scale:.4g}, "
                f"zero_point={self.zero_point}, float32_channels="
                f"{0 if self.outliers is None else len(self.outliers)}, "
                f"smoothed={self.input_multiplier is not None}, gelu={self.gelu}, "
                f"uint8_out={self.out_format is not None}")


def _residual_forward(self, hidden_states: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
    """A BERT-style block output (`LayerNorm(dense(hidden_states) + input_tensor)`, dropout off in eval mode)
    with the skip connection added inside the int8 matmul (`fuse_residual_adds`)."""
    return self.LayerNorm(self.dense(hidden_states, residual=input_tensor))


def fuse_residual_adds(model, atol: float = 1e-4) -> int:
    """Give every BERT-style block output of `model` (a module with an int8 `dense` writing float32, a
    `LayerNorm`, and forward(hidden_states, input_tensor) = LayerNorm(dense(hidden_states) + input_tensor): the
    attention output and the feed-forward output of BERT, RoBERTa, XLM-R, ELECTRA, DeBERTa) a forward that adds
    the skip connection inside the matmul (oneDNN's binary post-op) instead of in a separate pass over memory.
    Each is installed only when it gives the module's own output on a random batch within `atol` (the sums
    differ in order only); returns how many were installed. The separate adds are a pass over memory per block
    that the matmul can do on its way out.

    >>> class Out(torch.nn.Module):
    ...     def __init__(self):
    ...         super().__init__(); self.dense, self.LayerNorm = torch.nn.Linear(8, 8), torch.nn.LayerNorm(8)
    ...     def forward(self, hidden_states, input_tensor):
    ...         return self.LayerNorm(self.dense(hidden_states) + input_tensor)
    >>> _ = torch.manual_seed(0)
    >>> batch = {"hidden_states": torch.randn(2, 3, 8), "input_tensor": torch.randn(2, 3, 8)}
    >>> out = Out().eval()
    >>> want = out(**batch)
    >>> q = quantize_int8(out, [batch], fuse=False)
    >>> fuse_residual_adds(q), "forward" in vars(q), bool((q(**batch) - want).abs().max() < 0.1)
    (1, True, True)
    """
    import inspect

    installed = 0
    generator = torch.Generator().manual_seed(0)
    for module in model.modules():
        dense, norm = getattr(module, "dense", None), getattr(module, "LayerNorm", None)
        if (not isinstance(dense, CalibratedInt8Linear) or dense.out_format is not None or dense.gelu
                or not isinstance(norm, torch.nn.LayerNorm) or "forward" in vars(module)):
            continue
        try:
            if list(inspect.signature(module.forward).parameters) != ["hidden_states", "input_tensor"]:
                continue
        except (TypeError, ValueError):
            continue
        hidden = torch.randn(2, 3, dense.in_features, generator=generator)
        skip = torch.randn(2, 3, dense.out_features, generator=generator)
        with torch.inference_mode():
            want = module(hidden, skip)
            module.forward = types.MethodType(_residual_forward, module)
            try:
                gap = float((module(hidden, skip) - want).abs().max())
            except Exception:  # noqa: BLE001 - a layout we did not foresee: the module keeps its own forward
                gap = float("inf")
        if gap <= atol:
            installed += 1
        else:
            del module.forward
    return installed


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


def calibrate(model, batches) -> tuple[dict[str, tuple[torch.Tensor, torch.Tensor]], dict[str, str]]:
    """(per-channel min, per-channel max) of the input of every plain `nn.Linear` of `model` by module name, over
    the forward passes of `batches` (tokenizer outputs; padding positions count like tokens, so fixed batches give
    fixed ranges), and the feed-forward blocks (`_feed_forward_blocks`: block -> consumer) whose consumer read
    exactly the block's output in every pass.

    >>> m = torch.nn.Sequential(torch.nn.Linear(2, 2))
    >>> class Seq(torch.nn.Module):
    ...     def __init__(self): super().__init__(); self.body = m
    ...     def forward(self, x): return self.body(x)
    >>> ranges, fused = calibrate(Seq(), [{"x": torch.tensor([[1.0, -3.0]])}, {"x": torch.tensor([[5.0, 0.5]])}])
    >>> ranges["body.0"], fused
    ((tensor([ 1., -3.]), tensor([5.0000, 0.5000])), {})
    """
    ranges, hooks, modules = {}, [], dict(model.named_modules())
    blocks = _feed_forward_blocks(model)
    last_out, direct = {}, {block: True for block in blocks}
    consumers = {consumer: block for block, consumer in blocks.items()}

    def record(name):
        def hook(module, args):
            x = args[0].detach().float()
            x = x.reshape(-1, x.shape[-1])
            lo, hi = x.amin(dim=0), x.amax(dim=0)
            if name in ranges:
                lo, hi = torch.minimum(ranges[name][0], lo), torch.maximum(ranges[name][1], hi)
            ranges[name] = (lo, hi)
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


def int8_plan(weight: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, outliers: bool,
              alpha: float = SMOOTHING_ALPHA):
    """(input range lo, hi, outlier channels or None, input multiplier 1/s or None) of a layer with `weight`
    (siblings reading one input: their weights stacked) from its calibrated per-channel input range: with its
    OUTLIER_CHANNELS widest input channels in float32 and the int8 range over the others (`outliers`), or
    smoothed (SmoothQuant, `smoothing_factors` with `alpha`) and the int8 range over the smoothed input.

    >>> lo, hi = torch.tensor([-1.0, -9, 0, -1, 0, 0, 0, -2]), torch.tensor([1.0, 2, 30, 1, 1, 1, 1, 1])
    >>> int8_plan(torch.ones(1, 8), lo, hi, outliers=True)
    (-9.0, 2.0, tensor([2]), None)
    >>> low, high, _, multiplier = int8_plan(torch.ones(1, 2), torch.tensor([-4.0, 0]), torch.tensor([1.0, 9]), False,
    ...                                      alpha=0.5)
    >>> low, high, multiplier
    (-2.0, 3.0, tensor([0.5000, 0.3333]))
    """
    if not outliers:
        multiplier = torch.reciprocal(smoothing_factors(lo, hi, weight.detach().float(), alpha))
        return float((lo * multiplier).min()), float((hi * multiplier).max()), None, multiplier
    channels = outlier_channels(lo, hi)
    keep = torch.ones(lo.numel(), dtype=torch.bool)
    keep[channels] = False
    return float(lo[keep].min()), float(hi[keep].max()), (channels if len(channels) else None), None


def _plans(model, ranges: dict) -> dict:
    """`int8_plan` of every calibrated layer: float32 outlier channels for the second layer of each feed-forward
    block (its input, a GELU's output, arrives in uint8 from the fused first layer, where no per-channel factor
    can be applied), smoothing for every other layer. Sibling layers with the same calibrated input (query, key,
    value) are planned together, so they share one quantised input."""
    modules = dict(model.named_modules())
    consumers = set(_feed_forward_blocks(model).values())
    groups = {}  # (parent, its child layers with this exact input range) -> names
    for name in ranges:
        parent = name.rsplit(".", 1)[0] if "." in name else ""
        twin = None if name in consumers else next(
            (key for key in groups if key[0] == parent and key[1] not in consumers
             and all(torch.equal(a, b) for a, b in zip(ranges[key[1]], ranges[name]))), None)
        groups.setdefault(twin or (parent, name), []).append(name)
    plans = {}
    for (_, first), names in groups.items():
        weight = torch.cat([modules[n].weight.detach() for n in names])
        plan = int8_plan(weight, *ranges[first], outliers=first in consumers)
        plans.update({n: plan for n in names})
    return plans


def quantize_int8(model, calibration_batches, levels: int | None = None, fuse: bool = True,
                  weight_max: int | None = None):
    """`model` (eval mode, CPU, float32) with every plain `nn.Linear` swapped, in place, for a
    `CalibratedInt8Linear` planned (`_plans`) from the input ranges `calibrate` measured on `calibration_batches`,
    in `levels` input steps with weights within +-`weight_max` (defaults: `int8_levels()`). Sibling layers share
    one quantisation of a shared input, and feed-forward blocks are fused (module docstring; `fuse=False`:
    neither, same numbers, slower).
    Layers the calibration never reached keep float32.
    Returns the model; raises ValueError where torch has no x86 int8 kernels (ARM builds). The caller keys
    caches by the calibration data (`models.hf.INT8_SCHEME` and the calibration pairs' hash)."""
    if not int8_kernels_available():
        raise ValueError("precision int8 runs oneDNN's x86 int8 kernels, which this torch or CPU lacks (not an "
                         "x86 build with AVX2 or better); use bfloat16")
    ranges, fused = calibrate(model, calibration_batches)
    modules = dict(model.named_modules())
    plans = _plans(model, ranges)
    for block, consumer in fused.items() if fuse else ():  # from the float32 layers
        lo, hi, _, multiplier = plans[f"{block}.dense"]
        c_lo, c_hi, c_outliers, _ = plans[consumer]
        handoff = _Handoff()
        second = CalibratedInt8Linear(modules[consumer], c_lo, c_hi, levels, weight_max, outliers=c_outliers,
                                      handoff=handoff)
        parent_name, child = consumer.rsplit(".", 1)
        setattr(modules[parent_name], child, second)
        module = modules[block]  # writes its result in the second layer's input format
        module.dense = CalibratedInt8Linear(module.dense, lo, hi, levels, weight_max, input_multiplier=multiplier,
                                            gelu=True, out_format=(second.scale, second.zero_point),
                                            consumer_outliers=c_outliers, handoff=handoff)
        module.intermediate_act_fn = torch.nn.Identity()
    for parent_name, parent in list(modules.items()):
        shared = _SharedInput() if fuse else None
        for name, child in list(parent.named_children()):
            full = f"{parent_name}.{name}" if parent_name else name
            if type(child) is torch.nn.Linear and full in plans:
                lo, hi, outliers, multiplier = plans[full]
                setattr(parent, name, CalibratedInt8Linear(child, lo, hi, levels, weight_max, outliers=outliers,
                                                           input_multiplier=multiplier, shared=shared))
    if fuse:
        fuse_residual_adds(model)
    return model
