"""Scratch memory of the compiled passes, kept between calls.

A first write to fresh memory takes a page fault for each 4 KiB page, about 2 us on this project's
machine (a virtual machine): 1e6 rows of keys and steps took 3,600-4,900 faults a call, 7-10 ms,
whenever glibc had given the previous call's memory back to the system, which it does or not by
where the blocks happen to lie in its heap (``benchmarks/bench_faults.py``, ``docs/benchmarks.md``).
:func:`empty` hands out arrays from blocks that stay mapped between calls:

* a block is free again when nothing refers to it (its reference count: every view of it refers to
  it); a request takes the smallest free block that holds it;
* a block is kept only for a size (within 1/8) that an earlier call requested too
  (:func:`next_call`): a single call keeps nothing, so that its peak is what the allocator makes
  of it (freed memory is reused by any later allocation, whereas a kept block serves only
  :func:`empty`);
* at most :data:`KEPT` bytes are kept, blocks of at most :data:`LARGEST` each; past that the oldest
  go first (one still in use is freed with its arrays), and :func:`release` lets them all go.

Requests under :data:`SMALLEST` bytes are numpy's own. Without the GIL (a free-threaded build)
nothing is kept: the reference counts would not say whether a block is in use.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np

__all__ = ["KEPT", "LARGEST", "SMALLEST", "empty", "kept_bytes", "next_call", "release"]

SMALLEST = 1 << 16
"""Bytes under which :func:`empty` is ``np.empty``."""

LARGEST = 1 << 25
"""Bytes of the largest block kept between calls (32 MiB: 4e6 int64 entries); larger ones are
numpy's own, freed with their arrays (numpy asks for huge pages from 4 MiB)."""

KEPT = 1 << 27
"""Bytes of blocks kept between calls, at most (128 MiB: the blocks of a call on about 2e6 rows)."""

_lock = threading.Lock()
_blocks: list[np.ndarray] = []  # (uint8) the blocks kept, oldest first
_keep = getattr(sys, "_is_gil_enabled", lambda: True)()
_call = 0  # calls begun (:func:`next_call`)
_seen: dict[int, int] = {}  # a size class -> the call that first requested it


def _refs(blocks: list[np.ndarray], i: int) -> int:
    return sys.getrefcount(blocks[i])


def _free_refs() -> int:
    """The reference count :func:`_refs` reads for a block nothing else refers to."""
    probe = [np.empty(1, dtype=np.uint8)]
    return _refs(probe, 0)


_FREE = _free_refs()


def _size_class(nbytes: int) -> int:
    """``nbytes`` rounded up to a multiple of :data:`SMALLEST` and to 8 to 15 sixteenths of a power of
    two (at most 1/8 more): nearby sizes (another sample of the same rows) share blocks."""
    size = -(-nbytes // SMALLEST) * SMALLEST
    step = max(SMALLEST, 1 << max(size.bit_length() - 4, 0))
    return -(-size // step) * step


def next_call() -> None:
    """A new call begins (:func:`precall._core.validate.check_binary`): sizes requested before it are
    kept from now on."""
    global _call
    with _lock:
        _call += 1
        if len(_seen) > 1024:  # a bounded record
            _seen.clear()


def empty(count: int, dtype: Any) -> np.ndarray:
    """An uninitialised array of ``count`` entries of ``dtype``, for one call's buffers: from the
    smallest free block kept between calls that holds it, else from a new block, kept when a request
    of its size came in an earlier call (module docstring).

    >>> a = empty(100_000, np.int64)
    >>> a.shape, a.dtype, a.flags.c_contiguous
    ((100000,), dtype('int64'), True)
    """
    dtype = np.dtype(dtype)
    nbytes = count * dtype.itemsize
    if nbytes < SMALLEST or not _keep:
        return np.empty(count, dtype=dtype)
    size = _size_class(nbytes)
    if size > LARGEST:
        return np.empty(count, dtype=dtype)
    with _lock:
        blocks = _blocks
        best = -1
        for i in range(len(blocks)):
            fits = size <= blocks[i].nbytes
            if fits and (best < 0 or blocks[i].nbytes < blocks[best].nbytes) and _refs(blocks, i) == _FREE:
                best = i
        if best >= 0:
            raw = blocks.pop(best)
            blocks.append(raw)  # the newest
            return raw[:nbytes].view(dtype)
        first = _seen.setdefault(size, _call)
        if first == _call:  # a size new to this call: numpy's, freed with its arrays (one call keeps nothing)
            return np.empty(count, dtype=dtype)
        raw = np.empty(size, dtype=np.uint8)
        total = sum(b.nbytes for b in blocks) + size
        while total > KEPT and blocks:  # the oldest go first (one in use is freed with its arrays)
            total -= blocks[0].nbytes
            del blocks[0]
        if total <= KEPT:
            blocks.append(raw)
        return raw[:nbytes].view(dtype)


def kept_bytes() -> int:
    """Bytes of the blocks kept between calls (free or in use)."""
    with _lock:
        return sum(b.nbytes for b in _blocks)


def release() -> None:
    """Let every block kept between calls go (those in use are freed with their arrays)."""
    with _lock:
        _blocks.clear()
        _seen.clear()
