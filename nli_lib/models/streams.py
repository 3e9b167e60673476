"""Scoring batches in several CPU streams at once: threads that each run whole batches on a share of the cores.

A forward pass of a small encoder at NLI lengths is a chain of short operations (a MiniLM-L6 batch of 64 pairs:
~200 of them, most well under a millisecond). Spread over two cores, each operation pays for waking and joining
the second thread, and the Python between operations leaves both cores idle. Two streams, each scoring its own
batches on one core, keep both cores busy instead (what ONNX Runtime and OpenVINO call throughput mode). Torch
releases the GIL inside every operation, so the streams overlap.

With the offline model on 2 cores, two streams of one thread score more pairs per second than one stream of two
threads, in float32 and in int8 (benchmarks/README.md). The numbers stay the pair's own: a batch is scored whole
by one stream, and a float32 matmul on one thread sums in the same order as on two up to ~2e-7 (int8:
identical).

    >>> import torch
    >>> batches = [(i, torch.full((2,), float(i))) for i in range(5)]
    >>> done = dict(score_in_streams(lambda x: x * 2, batches, streams=2))
    >>> [done[i].tolist() for i in range(5)]
    [[0.0, 0.0], [2.0, 2.0], [4.0, 4.0], [6.0, 6.0], [8.0, 8.0]]

Trade-offs: a stream runs its operations on its own share of the cores, so one batch takes longer (latency) while
more batches finish per second (throughput); a model shared by the streams must keep no per-call state in its
modules (our int8 layers keep theirs per thread: `models.int8`), and its attention implementation must not be
switched while the streams run (`models.packing.attention_phases`). torch's intra-op thread count is
process-wide: while the streams run, other threads of the process that start torch work get one thread each.
"""
from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch  # imported only where a model runs (hf.py imports this module lazily)

MAX_STREAMS = 2  # streams `auto_streams` picks at most (the gain is known on 2 cores only)


def auto_streams(device: str, threads: int | None = None) -> int:
    """Streams for scoring on `device`: MAX_STREAMS on a CPU with at least that many intra-op threads, else 1
    (one stream on a GPU, where one batch at a time already keeps it busy).

    >>> auto_streams("cpu", threads=2), auto_streams("cpu", threads=1), auto_streams("cuda", threads=8)
    (2, 1, 1)
    """
    threads = torch.get_num_threads() if threads is None else threads
    return min(MAX_STREAMS, threads) if device == "cpu" else 1


def score_in_streams(forward: Callable[[Any], Any], batches: Iterable[tuple[Any, Any]], streams: int,
                     threads: int | None = None) -> Iterator[tuple[Any, Any]]:
    """Yield (key, forward(batch)) for every (key, batch) of `batches`, in the order they finish, computed by
    `streams` threads that each take the next batch and run it with threads // streams intra-op threads
    (`threads`: default torch's now). The caller's thread count is restored when the last batch is done.
    A batch that raises stops the other streams after their current batch and is raised here. `forward` runs
    in worker threads: it must set up thread-local torch state itself (`torch.inference_mode()`)."""
    threads = torch.get_num_threads() if threads is None else threads
    items = list(batches)
    if streams <= 1 or len(items) <= 1:
        for key, batch in items:
            yield key, forward(batch)
        return
    per_stream = max(1, threads // streams)
    todo: queue.SimpleQueue = queue.SimpleQueue()
    for item in items:
        todo.put(item)
    done: queue.SimpleQueue = queue.SimpleQueue()
    stop = threading.Event()

    def work() -> None:
        torch.set_num_threads(per_stream)  # this thread's OpenMP / MKL thread count
        while not stop.is_set():
            try:
                key, batch = todo.get_nowait()
            except queue.Empty:
                break
            try:
                done.put((key, forward(batch), None))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, which raises it
                stop.set()
                done.put((key, None, exc))
                break
        done.put(None)  # this stream is finished

    workers = [threading.Thread(target=work, name=f"nli-stream-{i}", daemon=True) for i in range(streams)]
    for worker in workers:
        worker.start()
    running = len(workers)
    try:
        while running:
            try:
                got = done.get(timeout=0.1)  # a timed wait, so Ctrl-C reaches this thread
            except queue.Empty:
                continue
            if got is None:
                running -= 1
                continue
            key, result, exc = got
            if exc is not None:
                raise exc
            yield key, result
    finally:
        stop.set()  # an error, or the caller stopped early (KeyboardInterrupt): no new batch starts
        for worker in workers:
            worker.join()
        torch.set_num_threads(threads)
