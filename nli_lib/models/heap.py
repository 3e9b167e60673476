"""Keep large memory blocks in glibc's heap while a model trains, instead of mapping and unmapping them.

    >>> with large_blocks_on_heap() as active:
    ...     block = bytearray(64 << 20)   # on glibc: taken from the heap, not from a fresh mmap
    >>> active in (True, False)
    True

Why: glibc's malloc gives every block above its mmap threshold (which glibc raises to at most 32 MiB on a
64-bit machine) a mapping of its own and unmaps it on free, so the next block of that size faults in fresh,
zeroed pages from the kernel. A training step frees and allocates such a block every step: the word
embeddings' dense gradient, 30,522 x 384 floats (47 MB) for MiniLM, ~11,500 pages. Keeping it in the heap
saves those page faults every step, which matters for short (phrase-length) pairs, whose steps are short; for
whole sentence pairs the gain is within noise. The arithmetic is the same, so the trained weights are bit for
bit the same, and no cache key changes.

How: while the context is open, `mallopt(M_MMAP_MAX, 0)` (no block gets a mapping of its own) and a trim
threshold of `HELD_FREE_BYTES` (freed memory at the top of the heap stays for the next step instead of being
handed back). When the last context closes, glibc's defaults for mappings come back with the mmap threshold
at the 32 MiB its dynamic scheme reaches and a trim threshold of twice that, and `malloc_trim(0)` hands the
free heap back to the kernel. The fixed thresholds matter: setting a trim threshold once switches glibc's
dynamic thresholds off for good, and an mmap threshold left at its 128 KiB start made every later scoring
batch fault its activations in (float32 scoring much slower).

Trade-off: a process-wide allocator setting for the time a model trains, through ctypes. Elsewhere (macOS,
musl, Windows) the context does nothing and yields False. Scoring is left alone: its blocks stay under the
threshold, so keeping them in the heap would change nothing.
"""
from __future__ import annotations

import contextlib
import ctypes
import threading
from typing import Iterator

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_MMAP_MAX = -1, -3, -4  # mallopt parameters (glibc's malloc.h)
DEFAULT_MMAP_MAX = 65536  # glibc's default number of mapped blocks
MMAP_THRESHOLD_AFTER = 32 << 20  # the most glibc's dynamic threshold reaches on a 64-bit machine
TRIM_THRESHOLD_AFTER = 2 * MMAP_THRESHOLD_AFTER  # glibc keeps trim at twice the mmap threshold
HELD_FREE_BYTES = 1 << 30  # free memory the heap may keep at its top while a model trains

_lock = threading.Lock()
_open = 0  # contexts open now (training runs one at a time, but nesting stays correct)


def glibc() -> ctypes.CDLL | None:
    """The running process's C library when it is glibc (it has `gnu_get_libc_version`), else None."""
    try:
        libc = ctypes.CDLL(None)
    except (OSError, TypeError):  # Windows has no "the process itself" library
        return None
    return libc if hasattr(libc, "gnu_get_libc_version") and hasattr(libc, "mallopt") else None


@contextlib.contextmanager
def large_blocks_on_heap() -> Iterator[bool]:
    """Inside, glibc keeps every block in its heap and keeps freed memory there (module docstring); yields
    whether it applies (False on other C libraries, where nothing changes)."""
    global _open
    libc = glibc()
    if libc is None:
        yield False
        return
    with _lock:
        if _open == 0:
            libc.mallopt(M_MMAP_MAX, 0)
            libc.mallopt(M_TRIM_THRESHOLD, HELD_FREE_BYTES)
        _open += 1
    try:
        yield True
    finally:
        with _lock:
            _open -= 1
            if _open == 0:
                libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_AFTER)
                libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_AFTER)
                libc.mallopt(M_MMAP_MAX, DEFAULT_MMAP_MAX)
                libc.malloc_trim(0)
