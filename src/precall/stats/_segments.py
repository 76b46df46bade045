"""Sums of a (rows, replicates) matrix over segments of rows (internal; used by :mod:`._resample`).

``segment_sums(counts, order, bounds)`` gives, for each segment ``g``, the sum of
the rows ``counts[order[bounds[g]:bounds[g + 1]]]``: (segments, replicates)
int64.  A bootstrap block holds each row's multiplicity in ``m`` replicates as
one row of ``counts`` (``m`` bytes: one cache line at ``m = 64``), so a column's
per-run counts for all ``m`` replicates are one pass over the rows in that
column's order.

Two implementations giving the same integers: numpy (``np.add.reduceat`` of the
gathered rows: the test oracle) and, when the kernel choice takes the compiled
passes (:func:`precall.set_kernel`; numba, the ``fast`` extra), a compiled loop
(``precall._core.compiled.row_segment_sums``) that adds each row into its segment
without the gathered copy.  Without numba, :class:`precall.stats._resample.Multiplicities` counts by
one weighted ``bincount`` per replicate and column instead (faster in numpy than
``add.reduceat`` on this layout), and :func:`passes` says which is in use.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core import backend

__all__ = ["passes", "segment_sums", "segment_sums_numpy"]


def segment_sums_numpy(counts: np.ndarray, order: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Per-segment sums of the rows of ``counts`` (n, m) taken in ``order``; segment ``g``
    is ``order[bounds[g]:bounds[g + 1]]`` (non-empty, ``bounds[-1] == len(order)``)."""
    if bounds.shape[0] < 2:
        return np.zeros((0, counts.shape[1]), dtype=np.int64)
    return np.add.reduceat(counts[order], bounds[:-1], axis=0, dtype=np.int64)


def passes(n: int) -> Any:
    """The compiled passes (``precall._core.compiled``) when the kernel choice
    (:func:`precall.set_kernel`) takes them for ``n`` rows, else None."""
    return backend.compiled(n)


def segment_sums(counts: np.ndarray, order: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """As :func:`segment_sums_numpy`, by the compiled loop when the kernel choice takes it."""
    fast = passes(counts.shape[0])
    if fast is None or bounds.shape[0] < 2:
        return segment_sums_numpy(counts, order, bounds)
    out = np.zeros((bounds.shape[0] - 1, counts.shape[1]), dtype=np.int64)
    fast.row_segment_sums(np.ascontiguousarray(counts), order.astype(np.int64, copy=False),
                          bounds.astype(np.int64, copy=False), out)
    return out
