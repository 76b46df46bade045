"""Sums of a (rows, replicates) matrix over segments of rows (internal; used by :mod:`._resample`).

``segment_sums(counts, order, bounds)`` gives, for each segment ``g``, the sum of
the rows ``counts[order[bounds[g]:bounds[g + 1]]]``: (segments, replicates)
int64.  A bootstrap block holds each row's multiplicity in ``m`` replicates as
one row of ``counts`` (``m`` bytes: one cache line at ``m = 64``), so a column's
per-run counts for all ``m`` replicates are one pass over the rows in that
column's order.

Two implementations giving the same integers: numpy (``np.add.reduceat`` of the
gathered rows: the test oracle) and, when numba is installed (the ``fast``
extra), a compiled loop that adds each row into its segment without the gathered
copy.  Without numba, :class:`precall.stats._resample.Multiplicities` counts by
one weighted ``bincount`` per replicate and column instead (faster in numpy than
``add.reduceat`` on this layout), and :func:`compiled` says which is in use.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["compiled", "segment_sums", "segment_sums_numpy"]


def segment_sums_numpy(counts: np.ndarray, order: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Per-segment sums of the rows of ``counts`` (n, m) taken in ``order``; segment ``g``
    is ``order[bounds[g]:bounds[g + 1]]`` (non-empty, ``bounds[-1] == len(order)``)."""
    if bounds.shape[0] < 2:
        return np.zeros((0, counts.shape[1]), dtype=np.int64)
    return np.add.reduceat(counts[order], bounds[:-1], axis=0, dtype=np.int64)


def _compile() -> Callable[..., Any] | None:
    """The compiled loop, or None without numba (the numpy path is then used)."""
    try:
        import numba
    except ImportError:
        return None

    @numba.njit(cache=True, nogil=True)
    def _sums(counts, order, bounds, out):  # pragma: no cover - compiled
        m = counts.shape[1]
        for g in range(bounds.shape[0] - 1):
            acc = out[g]
            for i in range(bounds[g], bounds[g + 1]):
                row = counts[order[i]]
                for r in range(m):
                    acc[r] += row[r]

    return _sums


_COMPILED: list[Callable[..., Any] | None] = []  # compiled on first use


def compiled() -> Callable[..., Any] | None:
    """The numba loop (compiled once per process), or None when numba is not installed."""
    if not _COMPILED:
        _COMPILED.append(_compile())
    return _COMPILED[0]


def segment_sums(counts: np.ndarray, order: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """As :func:`segment_sums_numpy`, by the compiled loop when numba is installed."""
    loop = compiled()
    if loop is None or bounds.shape[0] < 2:
        return segment_sums_numpy(counts, order, bounds)
    out = np.zeros((bounds.shape[0] - 1, counts.shape[1]), dtype=np.int64)
    loop(np.ascontiguousarray(counts), order.astype(np.int64, copy=False), bounds.astype(np.int64, copy=False),
         out)
    return out
