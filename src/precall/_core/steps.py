"""Steps: the one representation every metric kernel reads, with a batch axis (numpy only).

Recall changes only at the operating points where TP grows, and within a run of
equal TP precision is highest at the first point, so every AP convention,
ROC-AUC, AUPRG and the best F1 are functions of those points alone: the
*steps*.  A step carries the cumulative TP and FP at the point, the positive
weight it adds (``dtp``) and the FP count at the point just above it
(``fp_prev``; the point above is the origin exactly when ``tp - dtp + fp_prev
== 0``).

:class:`Steps` holds ``m`` problems at once as ``(m, R)`` arrays: ``m = 1`` for
one binary problem, ``m`` = bootstrap replicates, samples (``average="samples"``)
or IoU thresholds (detection) for the others.  Rows of a batch may hold *empty
runs* (``dtp = 0``: a run of only negatives, or a run nobody was drawn into):
such an entry repeats the counts above it and adds nothing to any metric.
``dense=True`` says there is none (every entry of every row is a step), which
the builders of one problem guarantee.

Builders: :func:`steps_from_sorted` (unweighted, the two classes sorted apart, no
permutation), :func:`steps_of` (any validated input), :func:`steps_from_table`
(table rows), :func:`steps_from_counts` (per-run counts of many problems),
:func:`row_steps` (each row of a score matrix ranks its columns) and
:func:`reweight` (the negatives reweighted to a prevalence).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from . import backend, scratch
from .sort import (Ranked, carried_keys, cumulative_sums, descending_key_scores, distinct_counts, rank, run_ends,
                   scratch_arrays, sorted_index_keys, sorted_split, tagged_keys, tagged_scores, untag_scores)
from .validate import BinaryInput, Ties, check_prevalence

__all__ = [
    "KeySteps",
    "SplitSteps",
    "Steps",
    "key_steps",
    "Reweighting",
    "reweighting",
    "no_steps",
    "one_problem",
    "reweight",
    "row_steps",
    "compiled_steps",
    "carried_steps",
    "ranked_steps",
    "positives_tied",
    "steps_and_grouped",
    "tagged_steps",
    "steps_from_counts",
    "steps_from_ranked",
    "steps_from_sorted",
    "steps_from_table",
    "steps_of",
    "row_sum",
    "windowed",
    "segment_sums",
    "split_steps",
    "tree_leaves",
    "tree_total",
]


@dataclass(frozen=True)
class Steps:
    """The steps of ``m`` binary problems: arrays of shape ``(m, R)``.

    Attributes
    ----------
    tp, fp : ndarray of shape (m, R)
        Cumulative TP and FP at each step (int64 without weights, else float64).
    dtp : ndarray of shape (m, R)
        Positive weight the step adds (0 for an empty run).
    fp_prev : ndarray of shape (m, R)
        FP at the operating point just above the step.
    n_pos, n_neg : ndarray of shape (m,)
        Total positive and negative weight (``n_pos`` may exceed the last TP:
        detection ground truths never found).
    thresholds : ndarray of shape (R,) or None
        The score of each step (one problem only).
    exact : bool
        Integer counts: ROC-AUC and the step sums are exact.
    dense : bool
        No empty runs: every entry of every row is a step.
    lengths : ndarray of shape (m,) or None
        A ragged batch (slices): row ``i``'s steps are its first ``lengths[i]``
        entries, the rest pads it (empty runs repeating its last counts).  The
        kernels then sum each row over its own steps exactly as they sum one
        problem (:func:`row_sum`), so each value equals the one problem's bit
        for bit.
    """

    tp: np.ndarray
    fp: np.ndarray
    dtp: np.ndarray
    fp_prev: np.ndarray
    n_pos: np.ndarray
    n_neg: np.ndarray
    thresholds: np.ndarray | None = None
    exact: bool = False
    dense: bool = True
    lengths: np.ndarray | None = None

    @property
    def m(self) -> int:
        """Number of problems."""
        return int(self.tp.shape[0])

    @property
    def tp_prev(self) -> np.ndarray:
        """TP at the operating point just above each step."""
        return self.tp - self.dtp


def _leaf_sums(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """numpy's pairwise sum of segments of at most 128 values (below 8: in order; else eight
    accumulators over the whole blocks of 8, combined pairwise, then the rest in order)."""
    out = np.full(starts.shape[0], -0.0)
    small = lengths < 8
    if small.any():
        s, n = starts[small], lengths[small]
        res = np.full(s.shape[0], -0.0)
        for i in range(int(n.max())):
            on = i < n
            res[on] += values[s[on] + i]
        out[small] = res
    for width in (16, 32, 64, 128):  # padded blocks at most twice the segments
        sel = ~small & (lengths <= width) & ((lengths > width // 2) | (width == 16))
        if not sel.any():
            continue
        s, n = starts[sel], lengths[sel]
        whole = n - n % 8
        inside = np.arange(width) < n[:, None]
        block = np.where(inside, values[np.where(inside, s[:, None] + np.arange(width), 0)], 0.0)
        r = block[:, :8].copy()
        for b in range(1, width // 8):
            on = 8 * b < whole
            r[on] += block[on, 8 * b : 8 * b + 8]
        res = ((r[:, 0] + r[:, 1]) + (r[:, 2] + r[:, 3])) + ((r[:, 4] + r[:, 5]) + (r[:, 6] + r[:, 7]))
        rows = np.arange(s.shape[0])
        for t in range(7):
            on = t < n % 8
            res[on] += block[rows[on], whole[on] + t]
        out[sel] = res
    return out


def segment_sums(values: np.ndarray, starts: Any, lengths: Any) -> np.ndarray:
    """``np.sum(values[s : s + n])`` of every segment, bit for bit, without a loop over segments.

    numpy sums a float64 array pairwise (halves cut at a multiple of 8 down to blocks of
    at most 128 values): the segments are cut the same way, level by level for all
    segments at once, their blocks summed as numpy sums them and the halves added back
    up the same tree.  ``np.add.reduceat`` is no substitute: it adds the first value
    to the pairwise sum of the rest, another rounding.  ``tests/test_slices.py`` checks
    this against ``np.sum`` on segments up to 3e5 values.
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    s = np.asarray(starts, dtype=np.int64)
    n = np.asarray(lengths, dtype=np.int64)
    fast = backend.compiled(values.shape[0])
    if fast is not None:  # the same tree, walked by the compiled loop
        return fast.segment_sums(values, s, n)
    levels = []
    while True:
        big = n > 128
        levels.append((s, n, big))
        if not big.any():
            break
        half = n[big] // 2
        half -= half % 8
        s = np.stack([s[big], s[big] + half], axis=1).ravel()
        n = np.stack([half, n[big] - half], axis=1).ravel()
    below = np.zeros(0)
    for s, n, big in reversed(levels):
        val = np.empty(s.shape[0])
        val[~big] = _leaf_sums(values, s[~big], n[~big])
        val[big] = below[0::2] + below[1::2]
        below = val
    return below + 0.0  # a reduction starts from the identity +0.0


def tree_leaves(n: int, limit: int) -> list[tuple[int, int]]:
    """The nodes of numpy's pairwise summation tree of ``n`` values (halves cut at a multiple of 8,
    :func:`segment_sums`) that hold at most ``limit`` values, in order: ``np.sum``
    of each is that node's sum, bit for bit (``limit >= 128``)."""
    out: list[tuple[int, int]] = []

    def walk(start: int, size: int) -> None:
        if size <= limit:
            out.append((start, size))
            return
        half = size // 2 - (size // 2) % 8
        walk(start, half)
        walk(start + half, size - half)

    walk(0, n)
    return out


def tree_total(n: int, limit: int, sums: dict[int, np.ndarray]) -> np.ndarray:
    """The sums of ``n`` values as ``np.sum`` gives them, from the sums of :func:`tree_leaves`
    (keyed by their start; arrays: several sums added element by element)."""

    def walk(start: int, size: int) -> np.ndarray:
        if size <= limit:
            return sums[start]
        half = size // 2 - (size // 2) % 8
        return walk(start, half) + walk(start + half, size - half)

    return walk(0, n) + 0.0


def row_sum(values: np.ndarray, s: Steps, keep: np.ndarray | None = None) -> np.ndarray:
    """The sum of each row of ``values`` (m, R') over the problem's own entries.

    ``np.sum(values, axis=1)`` for a batch whose rows are all steps; for a ragged batch
    (``s.lengths``) the sum of the entries ``keep`` marks (default: the first
    ``lengths[i]``), in order, exactly as that row alone would be summed.
    """
    if s.lengths is None:
        return np.sum(values, axis=1)
    if keep is None:
        keep = np.arange(values.shape[1]) < s.lengths[:, None]
    counts = keep.sum(axis=1)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    return segment_sums(values[keep], starts, counts)


def one_problem(
    thresholds: np.ndarray, tp: np.ndarray, dtp: np.ndarray, fp: np.ndarray, fp_prev: np.ndarray,
    n_pos: float, n_neg: float, exact: bool,
) -> Steps:
    """The steps of one problem from 1-D arrays (views, no copy)."""
    return Steps(tp[None, :], fp[None, :], dtp[None, :], fp_prev[None, :], np.array([float(n_pos)]),
                 np.array([float(n_neg)]), thresholds, exact, True)


def no_steps(n_pos: float, n_neg: float, exact: bool = True) -> Steps:
    """One problem without a step (no positive ranked)."""
    empty = np.zeros(0, dtype=np.int64 if exact else np.float64)
    return one_problem(np.zeros(0), empty, empty, empty, empty, n_pos, n_neg, exact)


def _negatives_below(q: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """For increasing ``values``, the negatives (``q``, sorted increasingly) scored below each and at or
    below each, and whether a negative shares any of the values."""
    below = np.searchsorted(q, values, side="left")  # negatives scored < value
    tied = below < q.size
    tied[tied] = q[below[tied]] == values[tied]  # a negative has exactly this score
    shared = bool(tied.any())
    below_or_equal = below
    if shared:
        below_or_equal = below.copy()
        below_or_equal[tied] = np.searchsorted(q, values[tied], side="right")
    return below, below_or_equal, shared


def steps_from_sorted(p: np.ndarray, q: np.ndarray, ties: Ties = "group") -> Steps | None:
    """Steps from the positives' and the negatives' scores, each sorted increasingly.

    The arrays are only read.  Returns None for ``ties="stable"`` when a score is
    shared across the classes: their input order matters then, and only the
    full order (:func:`precall._core.sort.rank`) gives it.
    """
    n_pos, n_neg = p.size, q.size
    if n_pos == 0:
        empty = np.zeros(0, dtype=np.int64)
        return one_problem(p, empty, empty, empty, empty, 0.0, float(n_neg), True)
    values, counts = distinct_counts(p)  # distinct positive scores, increasing
    below, below_or_equal, shared = _negatives_below(q, values)
    if ties == "group":
        return one_problem(
            values[::-1], np.cumsum(counts[::-1]), counts[::-1], (n_neg - below)[::-1],
            (n_neg - below_or_equal)[::-1], float(n_pos), float(n_neg), True,
        )
    if shared:
        return None
    # stable without shared scores: one step per positive, in any order within
    # a run of equal positive scores
    fp = np.repeat(n_neg - below, counts)[::-1]
    ones = np.ones(n_pos, dtype=np.int64)
    return one_problem(p[::-1], np.arange(1, n_pos + 1, dtype=np.int64), ones, fp, fp, float(n_pos), float(n_neg),
                       True)


def positives_tied(steps: Steps) -> bool:
    """Whether two of one problem's stable-ties steps share a threshold (positives tied with each other,
    and with no negative, else :func:`steps_from_sorted` gives None): their grouped-ties steps are then
    others, one step a run, and AUPRG's sum over them another float (ROC-AUC's integers are the same),
    so ``evaluate`` with stable ties takes those for both numbers, as with a score shared by both classes."""
    t = steps.thresholds.reshape(-1)
    return bool(np.any(t[1:] == t[:-1]))


def steps_from_ranked(r: Ranked, ties: Ties) -> Steps:
    """The steps of ranked samples; only the step rows are gathered."""
    ends = run_ends(r.scores) if ties == "group" else None
    if ends is None:  # a row per sample: the positive samples are the steps
        idx = np.flatnonzero(r.positive)
        rows = idx
    else:
        starts = np.append(0, ends[:-1] + 1)
        idx = np.flatnonzero(np.logical_or.reduceat(r.positive, starts))
        rows = ends[idx]
    first = idx == 0
    above = np.where(first, 0, idx - 1)
    rows_above = above if ends is None else ends[above]
    tp = r.tp[rows]
    tp_above = np.where(first, 0, r.tp[rows_above])
    fp_prev = np.where(first, 0, r.fp[rows_above])
    return one_problem(r.scores[rows], tp, tp - tp_above, r.fp[rows], fp_prev, r.n_pos, r.n_neg, r.exact)


def _step_bound(data: BinaryInput) -> int:
    """Room for the steps of a compiled pass: a step holds a positive, and the pass writes one entry ahead."""
    return int(np.count_nonzero(data.positive)) + 1


def _trimmed(a: np.ndarray, j: int) -> np.ndarray:
    """The first ``j`` entries (a copy when they are less than half: the rest is freed)."""
    return a[:j].copy() if 2 * j < a.shape[0] else a[:j]


def tagged_steps(data: BinaryInput, tagged: tuple[np.ndarray, int], ties: Ties, module: Any) -> Steps | None:
    """The steps of unweighted input from its sorted label-tagged keys (:func:`sort.tagged_keys`)
    by the compiled pass; None for stable ties when a score is shared by both classes."""
    key, k = tagged
    bound = _step_bound(data)
    n_pos, n_neg = bound - 1, key.shape[0] - bound + 1
    mag = scratch.empty(bound, np.uint64)
    tp, dtp, fp, fp_prev = scratch_arrays(4, bound, np.int64)
    j, j_front = module.tagged_steps(key, k, ties == "stable", mag, tp, dtp, fp, fp_prev)
    if j < 0:
        return None
    thresholds = tagged_scores(_trimmed(mag, j), j_front, data.scores.dtype)
    tp, dtp, fp, fp_prev = (_trimmed(a, j) for a in (tp, dtp, fp, fp_prev))
    return one_problem(thresholds, tp, dtp, fp, fp_prev, float(n_pos), float(n_neg), True)


def ranked_steps(data: BinaryInput, sorted_keys: tuple[np.ndarray, int, int, int], ties: Ties,
                 module: Any) -> Steps:
    """The steps of validated input from its sorted index keys (:func:`sort.sorted_index_keys`,
    consumed) by the compiled pass: the numbers of ``steps_from_ranked(rank(data), ties)``."""
    key, shift, width, drop = sorted_keys
    weighted = data.weight is not None
    bound = int(np.count_nonzero(data.positive))  # a step holds a positive (this pass writes none ahead)
    rows = scratch.empty(bound, np.int64)
    tp, dtp, fp, fp_prev = scratch_arrays(4, bound, np.float64)
    weight = data.weight if weighted else np.zeros(0)
    order = key.view(np.int64)
    scores = data.scores.astype(np.float32) if data.scores.dtype == np.float16 else data.scores  # exact
    j, n_pos, n_neg = module.ranked_steps(key, shift, width == 32 and not drop, scores,
                                          data.positive, weight, weighted, ties == "stable", rows, tp, dtp, fp,
                                          fp_prev)
    thresholds = data.scores[order[rows[:j]]]
    arrays = [_trimmed(a, j) for a in (tp, dtp, fp, fp_prev)]
    if not weighted:
        arrays = [a.astype(np.int64) for a in arrays]
    tp, dtp, fp, fp_prev = arrays
    return one_problem(thresholds, tp, dtp, fp, fp_prev, n_pos, n_neg, not weighted)


def carried_steps(data: BinaryInput, carried: tuple[np.ndarray, np.ndarray], ties: Ties, module: Any) -> Steps:
    """The steps of validated input from its exact score keys sorted carrying the signed weights
    (:func:`sort.carried_keys`, reusable for both tie rules) by the compiled pass: the numbers of
    :func:`ranked_steps` and of ``steps_from_ranked(rank(data), ties)``."""
    key, signed = carried
    weighted = data.weight is not None
    bound = _step_bound(data)
    step_key = scratch.empty(bound, np.int64)
    tp, dtp, fp, fp_prev = scratch_arrays(4, bound, signed.dtype)  # int64 counts without weights
    j, n_pos, n_neg = module.carried_steps(key, signed, ties == "stable", step_key, tp, dtp, fp, fp_prev)
    thresholds = descending_key_scores(step_key[:j].view(np.uint64), data.scores.dtype, module)  # one compiled pass
    tp, dtp, fp, fp_prev = (_trimmed(a, j) for a in (tp, dtp, fp, fp_prev))
    return one_problem(thresholds, tp, dtp, fp, fp_prev, float(n_pos), float(n_neg), not weighted)


def _carried_pair(data: BinaryInput, carried: tuple[np.ndarray, np.ndarray], ties: Ties, grouped: bool,
                  module: Any) -> tuple[Steps, Steps]:
    """The steps for ``ties`` and, when ``grouped``, for grouped ties, from the sorted exact keys."""
    steps = carried_steps(data, carried, ties, module)
    return steps, carried_steps(data, carried, "group", module) if grouped and ties != "group" else steps


def _exact_order_steps(data: BinaryInput, ties: Ties, grouped: bool, module: Any) -> tuple[Steps, Steps]:
    """The steps for ``ties`` and, when ``grouped``, for grouped ties, from one sort of the rows in
    exact order: the score keys carrying the signed weights, or (a ``-0.0`` score) the index keys."""
    carried = carried_keys(data.scores, data.positive, data.weight, module)
    if carried is not None:
        return _carried_pair(data, carried, ties, grouped, module)
    keys = sorted_index_keys(data.scores, module)
    if grouped and ties != "group":
        key, *rest = keys
        other = ranked_steps(data, (key.copy(), *rest), "group", module)  # type: ignore[arg-type]
        return ranked_steps(data, keys, ties, module), other
    steps = ranked_steps(data, keys, ties, module)
    return steps, steps


SHARED_LIKELY = 1 << 14
"""Rows of scores of at most 32 bits from which stable ties go straight to the exact keys (:func:`compiled_steps`)."""


def _shared_likely(scores: np.ndarray) -> bool:
    """Whether a score shared by both classes is likely enough that unweighted stable ties go straight to the
    exact keys, skipping the label-tagged sort, which cannot give their steps then (a second sort; 1.0 of
    3.6 ms at 1e5 float32 scores): scores of at most 32 bits (float32 has 2**23 values in [0.5, 1)) and at
    least :data:`SHARED_LIKELY` rows."""
    return scores.dtype.itemsize <= 4 and scores.shape[0] >= SHARED_LIKELY


def compiled_steps(data: BinaryInput, ties: Ties, grouped: bool = False, overwrite: bool = False
                   ) -> tuple[Steps, Steps] | None:
    """The steps for ``ties`` (and for grouped ties when ``grouped``) by the compiled passes,
    or None when the numpy route is to run (the kernel choice, :mod:`precall._core.backend`;
    no positive; scores wider than 64 bits).  The same numbers as the numpy route.  With
    ``overwrite`` and grouped ties (whose steps never need the rows' order again), unweighted
    float scores are sorted in their own memory (:func:`sort.tagged_keys`) and left there in
    decreasing order."""
    n = data.scores.shape[0]
    module = backend.compiled(n)
    if module is None or n < 2 or data.scores.dtype.itemsize > 8 or n > 2**40 or not data.positive.any():
        return None
    if data.weight is None and ties == "stable" and _shared_likely(data.scores):
        carried = carried_keys(data.scores, data.positive, None, module)  # None at a -0.0: as below
        if carried is not None:
            pair = _carried_pair(data, carried, ties, grouped, module)
            backend.ran("numba")
            return pair
    if data.weight is None:
        in_place = overwrite and ties == "group"
        tagged = tagged_keys(data.scores, data.positive, module, overwrite=in_place)
        if tagged is None:  # 64-bit integers or a -0.0: the sign of a zero threshold is numpy's to pick
            return None
        steps = tagged_steps(data, tagged, ties, module)
        if in_place and np.may_share_memory(tagged[0], data.scores):  # the keys were written over the scores
            untag_scores(*tagged, module)
        if steps is not None:
            backend.ran("numba")
            if grouped and ties != "group" and positives_tied(steps):  # not in place: the keys are there
                return steps, tagged_steps(data, tagged, "group", module)  # type: ignore[return-value]
            return steps, steps
        if grouped:  # stable ties split a shared score; ROC-AUC's grouped steps from the same keys
            stable = _exact_order_steps(data, ties, False, module)[0]
            backend.ran("numba")
            return stable, tagged_steps(data, tagged, "group", module)  # type: ignore[return-value]
    pair = _exact_order_steps(data, ties, grouped, module)
    backend.ran("numba")
    return pair


WINDOWED_MIN = 1 << 19
"""Positives from which :func:`key_steps` may hold ``evaluate``'s steps as the sorted keys: below, their
arrays (:data:`STEP_BYTES` a step, 25 MB at this many) are small, and the keys' route's fixed costs (a
pass for the checkpoints, numpy's ``log1p`` a chunk at a time) show: 5% of ``evaluate`` at 1e5 rows, half
of them positive; at 1e6 the two routes are within the timer's noise, at 1e7 the keys' is 6% faster."""

STEP_BYTES = 48
"""A step's bytes as arrays: four int64 counts, its score's key, the Davis & Goadrich ratio."""


def windowed(n_pos: int, n: int, itemsize: int) -> bool:
    """Whether ``evaluate`` of ``n`` scores of ``itemsize`` bytes with ``n_pos`` positives holds its
    steps as the sorted keys (:func:`key_steps`): from :data:`WINDOWED_MIN` positives, when their
    arrays would take more than half the scores' bytes (``precall evaluate``'s memory, issue 27)."""
    return n_pos >= WINDOWED_MIN and 2 * STEP_BYTES * n_pos > n * itemsize


CHECKPOINT_ROWS = 256
"""Rows between two checkpoints of :class:`KeySteps` (a window is walked from the one before it)."""


@dataclass(frozen=True)
class KeySteps:
    """One problem's grouped-ties steps held as its sorted label-tagged keys (:func:`sort.tagged_keys`),
    no array of the steps' size: ``checkpoints[c]`` is a place of the decreasing order where a run
    starts, about :data:`CHECKPOINT_ROWS` apart, and the positives and steps above it, from which the
    compiled ``key_window`` writes any steps again.  ``below``: the steps whose TP is below
    ``n_pos * (n_pos / (n_pos + n_neg))`` (AUPRG's recall gain 0); ``front``: the steps of
    non-negative scores."""

    key: np.ndarray
    k: int
    checkpoints: np.ndarray
    n_checkpoints: int
    length: int
    below: int
    front: int
    n_pos: float
    n_neg: float
    dtype: np.dtype

    def step(self, j: int, module: Any) -> Steps:
        """The one-problem steps of step ``j`` alone, its threshold read from its key."""
        tp, dtp, fp, fp_prev = (np.empty(2, dtype=np.int64) for _ in range(4))  # and the spare entry
        mag = np.empty(2, dtype=np.uint64)
        module.key_window(self.key, self.k, self.checkpoints, self.n_checkpoints, j, j + 1, mag, tp, dtp, fp, fp_prev)
        tp, dtp, fp, fp_prev = (a[:1] for a in (tp, dtp, fp, fp_prev))
        thresholds = tagged_scores(mag[:1], 1 if j < self.front else 0, self.dtype)
        return one_problem(thresholds, tp, dtp, fp, fp_prev, self.n_pos, self.n_neg, True)


def key_steps(data: BinaryInput, ties: Ties, module: Any, overwrite: bool = False) -> KeySteps | None:
    """``data``'s grouped-ties steps as :class:`KeySteps` (the sort, then checkpoints counted by the
    compiled ``key_checkpoints``), or None where ``evaluate`` is to build them as arrays: weights,
    stable ties, not :func:`windowed`, no exact key, or ``2 P N >= 2**62`` (twice the ROC area counted
    in Python integers).  With ``overwrite`` the keys may be written over the scores
    (:func:`sort.tagged_keys`; :func:`sort.untag_scores` puts them back)."""
    n = data.scores.shape[0]
    if data.weight is not None or ties != "group" or data.scores.dtype.itemsize > 8 or n > 2**40:
        return None
    n_pos = int(np.count_nonzero(data.positive))
    n_neg = n - n_pos
    if not windowed(n_pos, n, data.scores.dtype.itemsize) or 2.0 * n_pos * n_neg >= 2.0**62:
        return None
    tagged = tagged_keys(data.scores, data.positive, module, overwrite=overwrite)
    if tagged is None:
        return None
    key, k = tagged
    p, q = float(n_pos), float(n_neg)
    checkpoints = np.empty((n // CHECKPOINT_ROWS + 4, 3), dtype=np.int64)
    length, below, front, count = module.key_checkpoints(key, k, CHECKPOINT_ROWS, p * (p / (p + q)), checkpoints)
    return KeySteps(key, k, checkpoints, int(count), int(length), int(below), int(front), p, q, data.scores.dtype)


SPLIT_ROWS = 1 << 16
"""Rows of the sorted positives between two checkpoints of :class:`SplitSteps`."""


def _run_starts(p: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """The rows ``lo`` to ``hi - 1`` of the sorted ``p`` where a run of equal values starts."""
    block = p[lo:hi]
    starts = np.flatnonzero(block[1:] != block[:-1]) + (lo + 1)
    return starts if lo > 0 and p[lo] == p[lo - 1] else np.r_[lo, starts]


@dataclass(frozen=True)
class SplitSteps:
    """One problem's grouped-ties steps held as its positives' and negatives' scores, each sorted
    increasingly (:func:`sort.sorted_split`), no array of the steps' size: the numpy route's
    :class:`KeySteps`.  Step ``j`` (decreasing scores) is the run ``length - 1 - j`` of equal
    positive scores (increasing); ``runs[c]`` counts the runs that start in the first
    ``c * SPLIT_ROWS`` positives, from which :meth:`steps` finds any run again.  ``below``: the steps
    whose TP is below ``n_pos * (n_pos / (n_pos + n_neg))`` (AUPRG's recall gain 0)."""

    p: np.ndarray
    q: np.ndarray
    runs: np.ndarray
    length: int
    below: int
    n_pos: float
    n_neg: float

    def _starts(self, c: int) -> np.ndarray:
        """The rows of ``p`` where a run starts, in checkpoint block ``c``."""
        return _run_starts(self.p, c * SPLIT_ROWS, min((c + 1) * SPLIT_ROWS, self.p.shape[0]))

    def runs_before(self, row: int) -> int:
        """The runs that start before ``row`` of ``p``."""
        if row <= 0:
            return 0
        if row >= self.p.shape[0]:
            return self.length
        c = row // SPLIT_ROWS
        return int(self.runs[c]) + int(np.searchsorted(self._starts(c), row, side="left"))

    def _start(self, r: int) -> int:
        """The first row of run ``r`` (``p``'s length for the run past the last)."""
        if r >= self.length:
            return int(self.p.shape[0])
        c = int(np.searchsorted(self.runs, r, side="right")) - 1
        return int(self._starts(c)[r - int(self.runs[c])])

    def steps(self, a: int, b: int) -> Steps:
        """Steps ``a`` to ``b - 1`` as one problem's :class:`Steps` (their counts those of the whole
        problem, as :func:`steps_from_sorted` gives them)."""
        lo, hi = self._start(self.length - b), self._start(self.length - a)
        values, counts = distinct_counts(self.p[lo:hi])
        below, below_or_equal, _ = _negatives_below(self.q, values)
        n_neg = self.q.shape[0]
        tp = self.p.shape[0] - lo - (np.cumsum(counts) - counts)  # the positives from each run's start on
        return one_problem(values[::-1], tp[::-1], counts[::-1], (n_neg - below)[::-1],
                           (n_neg - below_or_equal)[::-1], self.n_pos, self.n_neg, True)


def split_steps(data: BinaryInput, ties: Ties, overwrite: bool = False) -> SplitSteps | None:
    """``data``'s grouped-ties steps as :class:`SplitSteps` (the numpy route), or None where ``evaluate``
    is to build them as arrays: weights, stable ties, not :func:`windowed`, or ``2 P N >= 2**62``.
    With ``overwrite`` the scores are sorted in their own memory (:func:`sort.sorted_split`)."""
    n = data.scores.shape[0]
    if data.weight is not None or ties != "group":
        return None
    n_pos = int(np.count_nonzero(data.positive))
    n_neg = n - n_pos
    if not windowed(n_pos, n, data.scores.dtype.itemsize) or 2.0 * n_pos * n_neg >= 2.0**62:
        return None
    p, q = sorted_split(data, overwrite)
    runs = np.zeros((n_pos + SPLIT_ROWS - 1) // SPLIT_ROWS + 1, dtype=np.int64)
    for c, lo in enumerate(range(0, n_pos, SPLIT_ROWS)):
        runs[c + 1] = _run_starts(p, lo, min(lo + SPLIT_ROWS, n_pos)).size
    np.cumsum(runs, out=runs)
    pf, qf = float(n_pos), float(n_neg)
    split = SplitSteps(p, q, runs, int(runs[-1]), 0, pf, qf)
    # recall gain 0: a step is below it when TP < t0, that is TP <= ceil(t0) - 1, a run starting at or after
    # row P - ceil(t0) + 1 of the increasing positives
    t0 = pf * (pf / (pf + qf))
    return replace(split, below=split.length - split.runs_before(n_pos - math.ceil(t0) + 1))


def steps_of(data: BinaryInput, ties: Ties) -> Steps:
    """The steps of validated input, without building the full table."""
    fast = compiled_steps(data, ties)
    if fast is not None:
        return fast[0]
    backend.ran("numpy")
    if data.weight is None:
        steps = steps_from_sorted(*sorted_split(data), ties)
        if steps is not None:
            return steps
    return steps_from_ranked(rank(data), ties)


def steps_and_grouped(data: BinaryInput, ties: Ties, overwrite: bool = False) -> tuple[Steps, Steps]:
    """The steps for ``ties`` and for grouped ties (ROC-AUC is always grouped), from one sort.

    The two are the same object unless ``ties="stable"`` splits a run of equal
    scores shared by positives and negatives.  ``overwrite``: ``data.scores`` may be
    reordered (:func:`compiled_steps`).
    """
    fast = compiled_steps(data, ties, grouped=True, overwrite=overwrite)
    if fast is not None:
        return fast
    backend.ran("numpy")
    if data.weight is None:  # grouped ties never need the rows' order again: the split may be in place
        split = sorted_split(data, overwrite and ties == "group")
        steps = steps_from_sorted(*split, ties)
        if steps is not None:
            return steps, steps if ties == "group" or not positives_tied(steps) else steps_from_sorted(*split)
    ranked = rank(data)
    steps = steps_from_ranked(ranked, ties)
    if ties == "group":
        return steps, steps
    return steps, steps_from_ranked(ranked, "group")


def steps_from_table(thresholds: np.ndarray, tp: np.ndarray, fp: np.ndarray, n_pos: float, n_neg: float) -> Steps:
    """The steps of a count table's rows (thresholds decreasing, cumulative TP and FP)."""
    dtp = np.diff(tp, prepend=np.zeros(1, dtype=tp.dtype))
    idx = np.flatnonzero(dtp > 0)
    fp_prev = np.where(idx > 0, fp[np.maximum(idx - 1, 0)], 0).astype(fp.dtype, copy=False)
    exact = tp.dtype.kind in "iu" and fp.dtype.kind in "iu"
    return one_problem(thresholds[idx], tp[idx], dtp[idx], fp[idx], fp_prev, n_pos, n_neg, exact)


def steps_from_counts(pos: np.ndarray, neg: np.ndarray, n_pos: Any = None) -> Steps:
    """The steps of ``m`` problems from per-run counts ``(m, R)`` of positives and
    negatives, runs in decreasing score order (a run may be empty).

    ``n_pos`` (m,) is each problem's total positive weight when it exceeds the
    positives ranked (detection: ground truths never found).
    """
    tp, fp = cumulative_sums(pos), cumulative_sums(neg)  # counts exact, weights compensated
    m = pos.shape[0]
    total = tp[:, -1].astype(np.float64) if n_pos is None else np.broadcast_to(
        np.asarray(n_pos, dtype=np.float64), (m,))
    n_neg = fp[:, -1].astype(np.float64) if fp.shape[1] else np.zeros(m)
    if n_pos is None and not tp.shape[1]:
        total = np.zeros(m)
    exact = tp.dtype.kind in "iu" and fp.dtype.kind in "iu"
    return Steps(tp, fp, pos, fp - neg, total, n_neg, None, exact, False)


def _descending_stable(scores: np.ndarray) -> np.ndarray:
    """Per-row order by decreasing score, equal scores in column order."""
    k = scores.shape[1]
    ascending = np.argsort(scores[:, ::-1], axis=1, kind="stable")
    return (k - 1 - ascending)[:, ::-1]


def row_steps(scores: np.ndarray, positive: np.ndarray, ties: Ties) -> Steps:
    """The steps of each row of ``scores`` (n, k) against ``positive`` (n, k): every
    row ranks its k columns (``average="samples"``).

    Rank ``j`` of a row is column ``j``.  With grouped ties a run's samples are
    all counted at its last rank; its other ranks are empty runs.
    """
    n, k = scores.shape
    order = _descending_stable(scores)
    y = np.take_along_axis(positive, order, axis=1)
    if ties != "group":
        del order
        pos = y.astype(np.int64)
        return steps_from_counts(pos, 1 - pos)
    s = np.take_along_axis(scores, order, axis=1)
    del order
    run_end = np.ones((n, k), dtype=bool)
    run_end[:, :-1] = s[:, 1:] != s[:, :-1]
    tp = np.cumsum(y, axis=1, dtype=np.int64)
    fp = np.arange(1, k + 1, dtype=np.int64) - tp

    def per_run(cum: np.ndarray) -> np.ndarray:
        at_end = np.where(run_end, cum, 0)
        above = np.zeros_like(at_end)  # the count at the previous run's end
        above[:, 1:] = np.maximum.accumulate(at_end, axis=1)[:, :-1]
        return np.where(run_end, cum - above, 0)

    return steps_from_counts(per_run(tp), per_run(fp))


#: The reweighted counts are used as they are while the sizes the kernels form from them stay within
#: [2**-1000, 2**1016] (about 9e-302 to 7e305); else every count of the problem is rescaled (:func:`reweighting`)
WEIGHT_RANGE = (2.0**-1000, 2.0**1016)


@dataclass(frozen=True)
class Reweighting:
    """How the counts of one or ``m`` problems change to a prevalence (:func:`reweighting`).

    Attributes
    ----------
    pos : ndarray of shape () or (m,)
        The factor on positive counts: 1, or a power of two where the counts are rescaled.
    neg : ndarray of shape () or (m,)
        The factor on negative counts where they are not rescaled.
    n_neg : ndarray of shape () or (m,)
        The negatives' total weight before.
    n_pos_at, n_neg_at : ndarray of shape () or (m,)
        The totals after.
    rescaled : ndarray of bool of shape () or (m,)
        The problems whose counts are rescaled: a negative count becomes its share of
        ``n_neg`` times ``n_neg_at`` (the factor alone could overflow).
    """

    pos: np.ndarray
    neg: np.ndarray
    n_neg: np.ndarray
    n_pos_at: np.ndarray
    n_neg_at: np.ndarray
    rescaled: np.ndarray

    @staticmethod
    def _per_row(factor: np.ndarray, counts: np.ndarray) -> np.ndarray:
        return factor[:, None] if factor.ndim == 1 and counts.ndim == 2 else factor

    def positives(self, counts: Any) -> np.ndarray:
        """Positive counts (TP, dTP) at the prevalence, float64."""
        x = np.asarray(counts)
        if not self.rescaled.any():
            return x.astype(np.float64)
        return x * self._per_row(self.pos, x)

    def negatives(self, counts: Any) -> np.ndarray:
        """Negative counts (FP) at the prevalence, float64."""
        x = np.asarray(counts)
        if not self.rescaled.any():
            return x * self._per_row(self.neg, x)
        with np.errstate(over="ignore", invalid="ignore"):
            kept = x * self._per_row(self.neg, x)
            moved = x / self._per_row(self.n_neg, x) * self._per_row(self.n_neg_at, x)  # a rate first
        return np.where(self._per_row(self.rescaled, x), moved, kept)


def reweighting(n_pos: Any, n_neg: Any, prevalence: Any) -> Reweighting:
    """The counts' change that makes positives ``prevalence`` of the total weight: the
    negatives' weight times ``(1 - pi) / pi * n_pos / n_neg``.

    The factor is the odds times a ratio of weights, ``(1 - pi) / pi * (n_pos / n_neg)``, so no
    product of two weights forms.  The counts are used as they are while the sizes the kernels
    form from them lie in :data:`WEIGHT_RANGE`: the reweighted negative weight ``N' = P (1 - pi) / pi``,
    AUPRG's ``P^2 / (P + N') = P pi`` and ``(P / N') P``.  Else (weights near 1e300 at a small or a
    large prevalence, near 1e-300 at a small one) every count is rescaled: the positives' by the
    power of two that brings ``n_pos`` into [0.5, 1) (exact), the negatives' as their share of
    ``n_neg`` times the reweighted total ``(1 - pi) / pi * n_pos'``.  Those sizes then lie between
    ``pi / 2`` and ``1 / pi``, and every rate and metric (a ratio of counts) is what the true counts
    give (``tests/test_weight_scale.py``).  ``n_pos``, ``n_neg``: floats or arrays of shape (m,).

    Raises ``ValueError`` for a prevalence outside [1e-300, 1)
    (:func:`~precall._core.validate.check_prevalence`) or a class without weight.
    """
    pi = check_prevalence(prevalence)
    for name, total in (("positives", n_pos), ("negatives", n_neg)):
        if np.any(np.asarray(total) <= 0):
            raise ValueError(
                f"cannot reweight to `prevalence` {pi:g}: the data have no {name} (total weight "
                f"{float(np.min(total)):g}), so the precision at another class ratio is unknown; evaluate "
                "data with both classes, or drop `prevalence`"
            )
    p, q = np.asarray(n_pos, dtype=np.float64), np.asarray(n_neg, dtype=np.float64)
    odds = (1.0 - pi) / pi  # at most 1e300
    with np.errstate(over="ignore", under="ignore"):
        c = odds * (p / q)
        fits = np.isfinite(c) & (c > 0)
        for size in (p * odds, p * pi, p / odds):  # N', P^2 / (P + N'), (P / N') P
            fits = fits & (size >= WEIGHT_RANGE[0]) & (size <= WEIGHT_RANGE[1])
        mantissa, exponent = np.frexp(p)
        pos = np.where(fits, 1.0, np.ldexp(1.0, -exponent))
        n_pos_at = np.where(fits, p, mantissa)
        n_neg_at = np.where(fits, q * c, odds * mantissa)
    return Reweighting(pos, c, q, n_pos_at, n_neg_at, ~fits)


def reweight(steps: Steps, prevalence: Any) -> Steps:
    """The steps with the negatives' weight scaled to reach ``prevalence`` (float64 counts;
    every count rescaled where the kernels' sizes would leave :data:`WEIGHT_RANGE`,
    :func:`reweighting`)."""
    r = reweighting(steps.n_pos, steps.n_neg, prevalence)
    return Steps(r.positives(steps.tp), r.negatives(steps.fp), r.positives(steps.dtp), r.negatives(steps.fp_prev),
                 r.n_pos_at, r.n_neg_at, steps.thresholds, False, steps.dense)
