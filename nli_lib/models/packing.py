"""Faster CPU inference: a model's linear layers through oneDNN with weights packed once (int8: `int8.py`).

On x86 CPUs PyTorch runs a float32 `nn.Linear` through MKL. On AMD CPUs MKL takes its AVX2 code path, while oneDNN's
AVX-512 kernels, given weights packed once in their blocked layout, run at about twice its rate
(benchmarks/nli_throughput.py measures both and takes the faster as the roofline). A linear layer is ~90 % of a
MiniLM forward pass, so this is most of the speed of our float32 path. On an AVX2 CPU the gain is smaller (~5 % in
the model, with scoring streams: `can_pack`). The arithmetic stays float32 (only the summation order differs: logits
within ~1e-5), and bfloat16 weights go through the same kernels (AVX-512 BF16; AVX2 packs float32 only).

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
import itertools
import warnings

import torch  # imported only where a model runs (hf.py imports this module lazily)

PACK_BATCH_HINT = 64  # rows the packed layout is tuned for (any row count works)
PROBE_ATOL = {"float32": 1e-3, "bfloat16": 5e-2}  # largest |logit gap| packed vs plain on the probe batch, by
# weight dtype (typically ~1e-5 in float32; ~2e-3 in bfloat16, whose rounding step is 2^-8)


def onednn_linear_available() -> bool:
    """True when this torch has oneDNN's packed linear kernels (x86 builds; they run on AVX2 too)."""
    ops = getattr(torch.ops, "mkldnn", None)
    try:
        return bool(torch.backends.mkldnn.is_available() and ops is not None
                    and hasattr(ops, "_linear_pointwise") and hasattr(ops, "_reorder_linear_weight"))
    except (AttributeError, RuntimeError):
        return False


def can_pack(dtype: str = "float32") -> bool:
    """True when we pack weights of `dtype`: oneDNN's packed linear kernels exist and the CPU runs them, float32
    from AVX2 up, bfloat16 only with AVX-512 or AMX (oneDNN has no bf16 path on AVX2).

    Why pack on AVX2 too: there packing runs level with MKL when one stream uses every core, but with scoring
    streams (`streams`, one core each) it is faster, because oneDNN's one-thread kernels keep their speed where
    MKL's lose it (probabilities within 1e-5, the same labels)."""
    if not onednn_linear_available():
        return False
    try:
        capability = torch.backends.cpu.get_cpu_capability()
    except (AttributeError, RuntimeError):
        return False
    return capability in ("AVX512", "AMX") or (capability == "AVX2" and dtype == "float32")


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


def is_exact_gelu(act) -> bool:
    """True for transformers' GELUActivation computing torch's erf GELU (what oneDNN's 'gelu' + 'none' does)."""
    return type(act).__name__ == "GELUActivation" and getattr(act, "act", None) is torch.nn.functional.gelu


def pack_linear_layers(model):
    """Replace every `nn.Linear` of `model` (in place) by a packed one; fuse `dense` + exact GELU pairs (the
    intermediate layer of BERT-style encoders). Returns the model. Weights must be float32 or bfloat16."""
    for module in list(model.modules()):
        dense, act = getattr(module, "dense", None), getattr(module, "intermediate_act_fn", None)
        if isinstance(dense, torch.nn.Linear) and act is not None and is_exact_gelu(act):
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
    if not can_pack(dtype) or weight.device.type != "cpu" or dtype not in PROBE_ATOL:
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
    inputs (with MiniLM-L6 eager wins below ~50 tokens and loses well above). The two differ only in summation
    order (probabilities within ~1e-5).
    A forward pre-hook reads the batch's length and calls transformers' `set_attn_implementation` when it has
    to change; a model that cannot switch (or does not use SDPA) is returned untouched. Trade-off: the switch
    changes the model's config, so streams scoring batches at once run the batches of one implementation at a time
    (`attention_phases`)."""
    can_switch = getattr(model, "_can_set_attn_implementation", None)
    if getattr(model.config, "_attn_implementation", None) != "sdpa" or not (can_switch and can_switch()):
        return model

    def choose(module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids is None:
            ids = kwargs.get("inputs_embeds")
        if ids is None:
            return
        use_attention_for(module, ids.shape[1])

    model.register_forward_pre_hook(choose, with_kwargs=True)
    setattr(model, SWITCH, max_tokens)
    return model


SWITCH = "_nli_eager_max_tokens"  # set on a model by `eager_attention_for_short_inputs`: its eager limit


def attention_for(model, tokens: int) -> str | None:
    """The attention implementation `eager_attention_for_short_inputs` gives `model` for batches of `tokens`
    tokens ('eager' or 'sdpa'), or None when the model does not switch."""
    limit = getattr(model, SWITCH, None)
    return None if limit is None else ("eager" if tokens <= limit else "sdpa")


def use_attention_for(model, tokens: int) -> None:
    """Switch `model` to the attention `attention_for` gives batches of `tokens` tokens (nothing when it does not
    switch, or is switched already)."""
    wanted = attention_for(model, tokens)
    if wanted is not None and model.config._attn_implementation != wanted:
        model.set_attn_implementation(wanted)


def attention_phases(model, batches: list) -> list[list]:
    """`batches` ((key, tokenizer output) pairs, in order) cut into runs of consecutive batches that get the same
    attention implementation (`attention_for`; one run when the model does not switch). Streams scoring batches
    at once (`models.streams`) run one phase at a time, switched before it starts: a switch while another stream
    is mid-forward would change that stream's attention halfway.

    >>> class Model: _nli_eager_max_tokens = 64
    >>> batch = lambda n: (n, {"input_ids": torch.zeros(2, n)})
    >>> [[key for key, _ in phase] for phase in attention_phases(Model(), [batch(9), batch(64), batch(65)])]
    [[9, 64], [65]]
    """
    def wanted(item):
        return attention_for(model, item[1]["input_ids"].shape[1]) if "input_ids" in item[1] else None

    return [list(run) for _, run in itertools.groupby(batches, key=wanted)]
