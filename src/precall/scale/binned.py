"""Binned accumulation: O(bins) memory, every metric with guaranteed bounds.

``Accumulator(bins=N, score_range=(lo, hi))`` (or ``bins=edges``) keeps only each bin's positive and negative weight: O(N) memory whatever the
data (scores outside the range count in the end bins).  Inside a bin the order
is unknown, so ``average_precision()`` and ``roc_auc()`` return a
:class:`Bounded` value: the metric with each bin as one threshold, and bounds
that hold for every arrangement inside the bins (ties grouped or not, any
weights).  The bins' end points (cumulative TP and FP at each bin boundary) are
the same in every arrangement; inside bin b, entered with (T, F) and holding
(P_b, N_b):

* every precision inside the bin is at most U_b = (T + P_b) / (T + F + P_b)
  (all positives first) and, at positive weight x, at least
  (T + x) / (T + F + N_b + x) (all negatives first);
* step AP: each positive's precision <= U_b, so the "positives first, one step"
  table bounds it above; below, the precision at x is increasing, so any
  arrangement's sum is at least its integral, the Davis & Goadrich area of the
  "negatives first" table;
* the envelope conventions (voc2010, voc2007, coco): inner points only add to
  the envelope (so the table of bin end points bounds below) and none exceeds
  U_b at a recall below the bin's end (so "positives first" bounds above);
* trapezoid: below, "negatives first" with the positives as one step (the
  trapezoid rule under-estimates the concave precision curve); above, the
  integral of the "positives first" curve, which every trapezoid sum under it
  stays below;
* interpolated: "negatives first" and "positives first" tables;
* ROC-AUC: the pairs inside a bin count 0 (low), 1/2 (value) or 1 (high).

The tests check with hypothesis that the exact value (grouped or stable ties,
with weights) always lies inside.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core import conventions
from .._core.sort import cumulative_sums
from .._core.steps import steps_from_table
from .._core.validate import check_allocation, check_number, check_numbers

__all__ = ["Bounded", "binned_average_precision", "binned_roc_auc", "edges_of"]


@dataclass(frozen=True)
class Bounded:
    """A metric value with guaranteed bounds ``low <= exact <= high``."""

    value: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.value:.6g} (bounds [{self.low:.6g}, {self.high:.6g}])"


BIN_BYTES = 32
"""What one bin costs a binned table: its edge, score, positive and negative count (8 bytes each)."""


def edges_of(bins: Any, score_range: Any, n_classes: int = 1) -> np.ndarray | None:
    """The bin edges of ``bins`` (a number of bins over ``score_range``, or the edges), every
    number checked and the tables' size (``n_classes`` of them) bounded before allocating."""
    if bins is None:
        if score_range is not None:
            raise ValueError("`score_range` goes with `bins=N`")
        return None
    if np.ndim(bins) == 0:
        n_bins = check_number(bins, "bins", low=1, integer=True, hint="a number of bins, or an array of edges")
        check_allocation(n_bins, BIN_BYTES * n_classes, "bins",
                         hint=f"choose fewer bins ({n_classes} table(s) of {BIN_BYTES} bytes a bin)")
        if score_range is None:
            raise ValueError("`bins=N` needs `score_range=(low, high)` (or pass the edges themselves)")
        bounds = check_numbers(score_range, "score_range", min_len=2, hint="(low, high)")
        if len(bounds) != 2 or not bounds[0] < bounds[1]:
            raise ValueError(f"`score_range` must be (low, high) with low < high; got {score_range!r:.80}")
        return np.linspace(bounds[0], bounds[1], n_bins + 1)
    if score_range is not None:  # the edges say the range: a second one would be ignored
        raise ValueError("`score_range` goes with `bins=N`; with the edges of the bins given, leave it out (the "
                         "edges span the range)")
    edges = check_numbers(bins, "bins", min_len=2, hint="the edges of the bins, strictly increasing")
    if (np.diff(edges) <= 0).any():
        raise ValueError(f"`bins` as edges must be strictly increasing; got {bins!r:.80}")
    check_allocation(edges.size, BIN_BYTES * n_classes, "bins", hint="choose fewer edges")
    return edges


def _bin_counts(pos: np.ndarray, neg: np.ndarray, arrangement: str) -> tuple[np.ndarray, ...]:
    """The count table of binned counts (bins in increasing score order): each bin as one
    threshold, or as two points in a row, its positives first or its negatives first."""
    used = np.flatnonzero((pos > 0) | (neg > 0))[::-1]  # decreasing score
    if used.size == 0:
        raise ValueError("the accumulator has seen no row with positive weight yet")
    p, n = pos[used], neg[used]
    rank = -np.arange(used.size, dtype=np.float64)  # any decreasing thresholds
    if arrangement == "grouped":
        tp, fp = cumulative_sums(p), cumulative_sums(n)  # weights: compensated, as in memory
        return rank, tp, fp
    zero = np.zeros_like(p)
    first_p, first_n = (p, zero) if arrangement == "positives first" else (zero, n)
    second_p, second_n = (zero, n) if arrangement == "positives first" else (p, zero)
    dp = np.column_stack([first_p, second_p]).ravel()
    dn = np.column_stack([first_n, second_n]).ravel()
    tp, fp = cumulative_sums(dp), cumulative_sums(dn)
    return np.repeat(rank, 2), tp, fp




def _ap(pos: np.ndarray, neg: np.ndarray, arrangement: str, method: str, recall_grid: str) -> float:
    thresholds, tp, fp = _bin_counts(pos, neg, arrangement)
    steps = steps_from_table(thresholds, tp, fp, tp[-1], fp[-1])
    if steps.n_pos[0] == 0:
        return float("nan")
    return float(conventions.ap(steps, method, recall_grid)[0])


def binned_average_precision(pos: np.ndarray, neg: np.ndarray, method: str, recall_grid: str) -> Bounded:
    """AP of binned counts (bins in increasing score order) with bounds that hold for every
    arrangement inside the bins (the argument is in the module docstring)."""
    value = _ap(pos, neg, "grouped", method, recall_grid)
    low_arrangement, low_method = "negatives first", method
    high_method = method
    if method in ("voc2010", "voc2007", "coco"):
        low_arrangement = "grouped"  # only the bins' end points are certain
    elif method == "step":
        low_method = "interpolated"  # positives spread after the negatives: the integral
    elif method == "trapezoid":
        high_method = "interpolated"  # positives spread ahead of the negatives: the integral
    low = _ap(pos, neg, low_arrangement, low_method, recall_grid)
    high = _ap(pos, neg, "positives first", high_method, recall_grid)
    return Bounded(value, low, high)


def binned_roc_auc(pos: np.ndarray, neg: np.ndarray) -> Bounded:
    """ROC-AUC of binned counts: the pairs inside a bin count 0 (low), 1/2 (value) or 1 (high)."""
    n_pos, n_neg = float(pos.sum()), float(neg.sum())
    if n_pos == 0 or n_neg == 0:
        return Bounded(float("nan"), float("nan"), float("nan"))
    p, q = pos / n_pos, neg / n_neg  # shares: no product of two weights is formed
    below = 1.0 - np.cumsum(q[::-1])[::-1]  # the negatives' share in lower bins
    cross = float(np.sum(p * below))
    inside = float(np.sum(p * q))
    return Bounded(cross + inside / 2, cross, cross + inside)
