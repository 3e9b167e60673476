"""The machine's limit for an encoder's forward pass: matmul throughput at the model's shapes x FLOPs per pair.

FLOPs of one sequence of L tokens through a BERT-style encoder (d = hidden size, f = feed-forward size; one
multiply-add = 2 FLOPs), per layer: Q, K, V and output projections 4 x 2·L·d², attention scores and their
weighted sum 2 x 2·L²·d, feed-forward 2 x 2·L·d·f; then the pooler (2·d²) and the classifier (2·d·k).
Layer norms, softmax, GELU and embedding look-ups are not counted: the limit is what the matmuls alone need.
A head that reads the last layer's first token alone (`first_token_head`: BERT's pooler, RoBERTa's head) needs
that layer's keys and values for every token (2 x 2·L·d²) and the rest for one token: its query and output
projections 2 x 2·d², its scores and weighted sum 2 x 2·L·d, its feed-forward 2 x 2·d·f
(`nli_lib.models.first_token` computes exactly that).

    >>> tiny = EncoderShape(layers=2, hidden=4, intermediate=8, labels=3)
    >>> pair_flops(tiny, tokens=5)  # per layer 8·5·16 + 4·25·4 + 4·5·4·8 = 1680; x2 layers; + 2·16 + 2·4·3
    3416
    >>> first = EncoderShape(layers=2, hidden=4, intermediate=8, labels=3, first_token_head=True)
    >>> pair_flops(first, tokens=5)  # 1680 + last layer 4·5·16 + 4·16 + 4·5·4 + 4·4·8 = 592; + 56
    2328
    >>> roofline_pairs_per_s(gflops=100.0, flops_per_pair=0.5e9)
    200.0

`matmul_gflops` times `torch.matmul` (and, where the CPU has them, oneDNN's packed linear kernels: see
`nli_lib.models.packing`) on the model's linear-layer shapes at a batch's token count; the faster is the
machine's matmul throughput, and `roofline_pairs_per_s` turns it into pairs per second. The int8 limit
(`dtype='int8'`, kernel 'int_mm' or 'onednn', the faster) counts the int8 matmuls alone: quantising and
dequantising activations come on top.
"""
from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class EncoderShape:
    """The sizes of a BERT-style encoder that set its FLOPs."""

    layers: int  # transformer blocks
    hidden: int  # model width d
    intermediate: int  # feed-forward width f
    labels: int  # classifier outputs k
    pooler: bool = True  # a d x d pooler before the classifier (BERT); False for heads without one
    first_token_head: bool = False  # the head reads the last layer's first token alone, and only that is computed

    @classmethod
    def from_config(cls, config, first_token_head: bool = False) -> EncoderShape:
        """From a transformers config (num_hidden_layers, hidden_size, intermediate_size, num_labels)."""
        return cls(layers=config.num_hidden_layers, hidden=config.hidden_size,
                   intermediate=config.intermediate_size, labels=config.num_labels,
                   first_token_head=first_token_head)

    def linear_shapes(self) -> list[tuple[int, int, int]]:
        """(in, out, how many per layer) of every linear layer in a transformer block.

        >>> EncoderShape(layers=6, hidden=384, intermediate=1536, labels=3).linear_shapes()
        [(384, 384, 4), (384, 1536, 1), (1536, 384, 1)]
        """
        return [(self.hidden, self.hidden, 4), (self.hidden, self.intermediate, 1), (self.intermediate, self.hidden, 1)]


def pair_flops(shape: EncoderShape, tokens: int) -> int:
    """FLOPs of one forward pass over one sequence of `tokens` tokens (module docstring)."""
    L, d, f = tokens, shape.hidden, shape.intermediate
    per_layer = 8 * L * d * d + 4 * L * L * d + 4 * L * d * f
    head = (2 * d * d if shape.pooler else 0) + 2 * d * shape.labels
    if not shape.first_token_head:
        return shape.layers * per_layer + head
    last = 4 * L * d * d + 4 * d * d + 4 * L * d + 4 * d * f  # keys and values for all L; the rest for 1 token
    return (shape.layers - 1) * per_layer + last + head


def mean_pair_flops(shape: EncoderShape, token_counts: Iterable[int]) -> float:
    """Mean FLOPs per pair over real (unpadded) token counts.

    >>> mean_pair_flops(EncoderShape(layers=2, hidden=4, intermediate=8, labels=3), [5, 5])
    3416.0
    """
    counts = list(token_counts)
    if not counts:
        raise ValueError("no token counts")
    return sum(pair_flops(shape, n) for n in counts) / len(counts)


def roofline_pairs_per_s(gflops: float, flops_per_pair: float) -> float:
    """Pairs per second a machine doing `gflops` GFLOP/s of matmuls could score at most."""
    return gflops * 1e9 / flops_per_pair


def matmul_gflops(shape: EncoderShape, rows: int, dtype: str = "float32", kernel: str = "matmul",
                  min_seconds: float = 0.5, device: str = "cpu", streams: int = 1) -> float:
    """GFLOP/s of the model's linear-layer matmuls at `rows` tokens (a batch's token count), weighted like a
    forward pass (4 d x d, one d x f, one f x d); `kernel` 'matmul' (torch.matmul), 'onednn' (packed) or, with
    dtype 'int8', 'int_mm' (torch._int_mm: int8 x int8 summed in int32) or 'onednn' (oneDNN's uint8 x int8
    matmul with a prepacked weight and a float32 result, the kernel our int8 path runs: `models.int8`; its inputs
    take 128 levels, which no x86 kernel saturates). GFLOP/s counts an int8 multiply-add as 2 ops too. Which int8
    kernel is faster depends on the CPU: with AVX-512 VNNI `torch._int_mm` runs about twice bfloat16's rate, while
    without VNNI (AVX2) it falls back to a plain loop and only oneDNN's int8 matmul is fast.

    Each shape runs for about `min_seconds / 3` after a warm-up; the result is total FLOPs / total time. With
    `streams` > 1 (CPU), that many threads run the shape at once, each on its share of torch's intra-op threads,
    and their matmuls count together: the machine's throughput as our scoring streams use it
    (`models.streams`), which can exceed one matmul's on all the threads."""
    import torch

    from .models.packing import PACK_BATCH_HINT

    if kernel == "int_mm" and dtype != "int8" or dtype == "int8" and kernel not in ("int_mm", "onednn"):
        raise ValueError(f"int8 runs on kernel 'int_mm' or 'onednn', and 'int_mm' runs int8 only (kernel "
                         f"{kernel!r}, dtype {dtype!r})")
    torch_dtype = getattr(torch, dtype)
    flops, seconds = 0.0, 0.0
    for n_in, n_out, count in shape.linear_shapes():
        if dtype == "int8":
            x = torch.randint(-127, 128, (rows, n_in), dtype=torch.int8, device=device)
            w = torch.randint(-127, 128, (n_out, n_in), dtype=torch.int8, device=device)
        else:
            x = torch.randn(rows, n_in, dtype=torch_dtype, device=device)
            w = torch.randn(n_out, n_in, dtype=torch_dtype, device=device)
        if kernel == "int_mm":
            wt = w.t().contiguous()

            def step(x=x, wt=wt):
                return torch._int_mm(x, wt)
        elif kernel == "onednn" and dtype == "int8":
            packed = torch.ops.onednn.qlinear_prepack(w, None)
            codes = torch.randint(0, 128, (rows, n_in), dtype=torch.uint8, device=device)
            scales, zeros = torch.ones(n_out), torch.zeros(n_out, dtype=torch.int32)

            def step(codes=codes, packed=packed, scales=scales, zeros=zeros):
                return torch.ops.onednn.qlinear_pointwise(codes, 0.01, 64, packed, scales, zeros, None, 1.0, 0,
                                                          torch.float32, "none", [], "")
        elif kernel == "matmul":
            wt = w.t()

            def step(x=x, wt=wt):
                return torch.matmul(x, wt)
        elif kernel == "onednn":
            packed = torch.ops.mkldnn._reorder_linear_weight(w, PACK_BATCH_HINT)

            def step(x=x, packed=packed):
                return torch.ops.mkldnn._linear_pointwise(x, packed, None, "none", [], "")
        else:
            raise ValueError(f"kernel must be 'matmul', 'onednn' or 'int_mm', not {kernel!r}")
        per_call = _seconds_per_call(step, min_seconds / 3, device, streams)
        flops += count * 2.0 * rows * n_in * n_out  # a forward pass runs this shape `count` times per layer
        seconds += count * per_call
    return flops / seconds / 1e9


def _seconds_per_call(step, seconds: float, device: str, streams: int = 1) -> float:
    """Wall seconds per call of `step` (after 3 warm-up calls), run for about `seconds`; with `streams` > 1, that
    many threads call it at once (each with torch's intra-op threads divided among them) and the calls of all
    of them count: total wall time / total calls."""
    import threading

    import torch

    def run(counts: list, at: int, start: threading.Barrier | None) -> None:
        for _ in range(3):
            step()
        _sync(device)
        if start is not None:
            start.wait()
        n, started = 0, time.perf_counter()
        while True:
            step()
            n += 1
            if n % 5 == 0:
                _sync(device)
                if time.perf_counter() - started >= seconds:
                    break
        counts[at] = (n, time.perf_counter() - started)

    if streams <= 1 or device != "cpu":
        counts = [None]
        run(counts, 0, None)
        return counts[0][1] / counts[0][0]
    threads = torch.get_num_threads()
    counts, start = [None] * streams, threading.Barrier(streams)

    def stream(at: int) -> None:
        torch.set_num_threads(max(1, threads // streams))
        run(counts, at, start)

    workers = [threading.Thread(target=stream, args=(i,)) for i in range(streams)]
    try:
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        torch.set_num_threads(threads)
    return max(wall for _, wall in counts) / sum(n for n, _ in counts)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()
