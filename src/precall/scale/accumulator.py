"""Exact streaming: an accumulator of (score, positive weight, negative weight).

:class:`Accumulator` keeps, for every distinct score seen, the total positive
and negative weight: memory grows with the number of distinct scores, not with
rows.  ``update`` adds a batch, ``merge`` combines two accumulators (associative
and commutative: any split of the data into batches, merged in any order, gives
the same state), and ``table()`` returns the :class:`precall.ThresholdTable`
that :func:`precall.threshold_table` builds from all the rows at once, so every
curve, AP convention and plot works on it.  ``to_bytes`` / ``from_bytes`` ship
the state between processes in a versioned ``.npz`` payload (no pickle).

Counts stay integers while no batch has weights (the table is then identical to
the in-memory one, bit for bit); with weights they are float64 sums per score,
each within about half an ulp of the exact sum (:func:`score_sums`; one more
rounding per merge), and the table's cumulative weights their compensated
cumsum (:func:`precall._core.sort.compensated_cumsum`, as in memory): within
about an ulp of the exact sums.

Binned mode (``Accumulator(bins=N, score_range=(lo, hi))`` or ``bins=edges``)
keeps only each bin's positive and negative weight, O(N) memory; its results are
:class:`~precall.scale.binned.Bounded` (see :mod:`precall.scale.binned`).
"""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np

from .._core import conventions
from .._core.evaluation import evaluation_from_steps
from .._core.sort import compensated_cumsum, cumulative_sums, distinct_counts, sorted_scores
from .._core.steps import Steps, one_problem, reweight
from .._core.undefined import NO_POSITIVES, ONE_CLASS_ROC, undefined
from .._core.validate import (
    check_binary, check_labels, check_multi, check_on_undefined, check_options, check_pos_label, check_prevalence, check_prevalences, is_multi, label_kind,
    zero_weight_batch,
)
from .._core.metric import Metric
from ..multiclass import average_values
from ..table import ThresholdTable, trusted_table
from .binned import Bounded, binned_average_precision, binned_roc_auc, edges_of

__all__ = ["Accumulator", "Bounded"]

_FORMAT = "precall.Accumulator"
_VERSION = 1


_Run = tuple  # (sorted distinct scores, positive weights, negative weights)
_U32 = 1 << 32
_ROWS = 1 << 24  # at most this many unweighted rows wait to be sorted together into one run
_MIN_ROWS = 1 << 20  # and at least this many (fewer rows per sort: more, smaller merges)
_PROBE = 1 << 16  # rows whose distinct share decides between the two
_EXACT = 2**53  # every integer of magnitude at most 2**53 is a float64; beyond it, neighbours round to one float
_MAX_COUNT = 2**63 - 1  # an int64 count: the rows of one table (positives plus negatives) stay at most this


def float_scores(scores: np.ndarray) -> np.ndarray:
    """The scores as the accumulators hold them: float32 scores stay float32 (half the state), others
    float64, -0.0 as 0.0 (as in the in-memory sort).  An integer score beyond 2**53 in magnitude is
    refused, as the readers refuse it: a float64 cannot hold it (neighbouring integers would tie, where
    the in-memory functions keep them apart)."""
    if scores.dtype.kind in "iu" and scores.dtype.itemsize == 8 and scores.size:  # (32 bits or fewer: exact)
        beyond = scores > _EXACT if scores.dtype.kind == "u" else (scores > _EXACT) | (scores < -_EXACT)
        if beyond.any():
            at = tuple(int(i) for i in np.argwhere(beyond)[0])
            where = f"index {at[0]}" if len(at) == 1 else f"row {at[0]}, column {at[1]}"
            raise ValueError(
                f"`y_score` {scores[at].item()} ({where}) is an integer beyond 2**53, which the accumulator's "
                "float64 scores cannot hold exactly (neighbouring values would tie); rescale the scores (e.g. "
                "subtract their minimum) or evaluate the arrays in memory (precall.evaluate), which keeps them "
                "exact")
    dtype = np.float32 if scores.dtype == np.float32 else np.float64
    return scores.astype(dtype) + dtype(0.0)


def count_total(*counts: np.ndarray) -> int:
    """The exact sum of non-negative integer count arrays (a Python int: the high and low 32 bits of
    each count summed apart, so no sum overflows); 0 for weights (floats, which do not overflow)."""
    total = 0
    for a in counts:
        if a.dtype.kind not in "iu":
            continue
        a = a.astype(np.uint64, copy=False)
        total += (int((a >> np.uint64(32)).sum(dtype=np.uint64)) << 32) + int(
            (a & np.uint64(0xFFFFFFFF)).sum(dtype=np.uint64))
    return total


def check_count(total: int, what: str) -> int:
    """``total`` (rows counted in one table) if an int64 count holds it, else a ``ValueError``."""
    if total > _MAX_COUNT:
        raise ValueError(
            f"{what} would count {total} rows in one table, beyond the 2**63 - 1 an int64 count holds (the "
            "counts would wrap round to negative numbers); merge fewer states, or pass weights (float sums) "
            "instead of repeated rows")
    return total


def _count_dtype(*runs: _Run) -> np.dtype:
    """uint32 counts while no count can reach 2**32 (12 bytes per float32 score), else int64 or float64."""
    dtype = np.result_type(*(r[1].dtype for r in runs))
    if dtype == np.uint32 and sum(int(r[1].sum(dtype=np.int64)) + int(r[2].sum(dtype=np.int64))
                                  for r in runs) >= _U32:
        return np.dtype(np.int64)
    return dtype


def _runs(sorted_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values of a sorted array and how often each occurs (uint32 when they fit)."""
    values, counts = distinct_counts(sorted_scores)
    return values, counts.astype(np.uint32) if sorted_scores.size < _U32 else counts


def _merge_two(a: _Run, b: _Run) -> _Run:
    """Linear merge of two states: the union of the scores, weights of equal scores summed.

    Memory: the output plus O(len(b)) index arrays; no sort.
    """
    if a[0].size < b[0].size:
        a, b = b, a
    (sa, pa, na), (sb, pb, nb) = a, b
    dtype = _count_dtype(a, b)
    pos = np.searchsorted(sa, sb)
    hit = pos < sa.size
    hit[hit] = sa[pos[hit]] == sb[hit]
    new = ~hit
    shift = np.cumsum(new)  # new scores of b up to each of b's scores
    size = sa.size + int(shift[-1]) if sb.size else sa.size
    at_new = (pos + shift - 1)[new]  # output slot of each new score
    at_hit = (pos + shift)[hit]  # output slot of the equal score of a
    del pos, shift
    old = np.ones(size, dtype=bool)
    old[at_new] = False
    out = []
    for x, y, kind in ((sa, sb, np.result_type(sa.dtype, sb.dtype)), (pa, pb, dtype), (na, nb, dtype)):
        z = np.empty(size, dtype=kind)
        z[old] = x
        z[at_new] = y[new]
        if x is not sa:
            z[at_hit] += y[hit].astype(kind, copy=False)
        out.append(z)
    return out[0], out[1], out[2]


class _Runs:
    """Sorted runs waiting to be merged, kept like a binary counter: a run is merged
    with the one below it when that one is no larger, so n rows cost O(n log n) in
    linear merges and the runs never hold much more than the largest."""

    def __init__(self) -> None:
        self.stack: list[_Run] = []
        self.rows: list[tuple[np.ndarray, np.ndarray]] = []  # unweighted batches not yet sorted
        self.n_rows = 0
        self.distinct_share: float | None = None  # distinct scores / rows in the first rows

    def add_rows(self, positives: np.ndarray, negatives: np.ndarray) -> None:
        """Unweighted rows wait, then are sorted together into one run: sorting many rows
        at once is cheaper than merging many small runs.

        The first ``_MIN_ROWS`` rows tell how many distinct scores the data have
        (the share of distinct values among ``_PROBE`` of them).
        Mostly distinct (continuous scores: the state grows as the rows do), up to
        ``_ROWS`` rows wait at a time; else as many as the distinct scores held, at
        least ``_MIN_ROWS``.  Either way the waiting rows take no more memory than
        one chunk plus the state will (2**20 rows for a few distinct scores: about
        80 MB less than waiting for 2**24).
        """
        self.rows.append((positives, negatives))
        self.n_rows += positives.size + negatives.size
        if self.distinct_share is None:
            if self.n_rows < _MIN_ROWS:
                return
            probe = sorted_scores(np.concatenate([np.concatenate(r) for r in self.rows])[:_PROBE])
            self.distinct_share = (1 + np.count_nonzero(probe[1:] != probe[:-1])) / max(probe.size, 1)
        held = self.stack[0][0].size if self.stack else 0
        limit = _ROWS if self.distinct_share >= 0.5 else min(_ROWS, max(_MIN_ROWS, held))
        if self.n_rows >= limit:
            self._sort_rows()

    def _sort_rows(self) -> None:
        if self.rows:
            p = sorted_scores(np.concatenate([p for p, _ in self.rows]))
            n = sorted_scores(np.concatenate([n for _, n in self.rows]))
            self.rows, self.n_rows = [], 0
            self.push(state_from_sorted(p, n))

    def push(self, run: _Run) -> None:
        self.stack.append(run)
        while len(self.stack) > 1 and self.stack[-2][0].size <= self.stack[-1][0].size:
            top = self.stack.pop()
            self.stack[-1] = _merge_two(self.stack[-1], top)

    def collapse(self) -> _Run:
        """Everything waiting as one run (there must be something)."""
        self._sort_rows()
        while len(self.stack) > 1:
            top = self.stack.pop()
            self.stack[-1] = _merge_two(self.stack[-1], top)
        return self.stack[0]


def state_from_sorted(positives: np.ndarray, negatives: np.ndarray) -> _Run:
    """The state of unweighted rows given the positives' and the negatives' scores, each
    sorted increasingly: (distinct scores, positive counts, negative counts)."""
    ps, pc = _runs(positives)
    ns, nc = _runs(negatives)
    return _merge_two((ps, pc, np.zeros(ps.size, dtype=nc.dtype)), (ns, np.zeros(ns.size, dtype=pc.dtype), nc))


def table_of_state(scores: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> ThresholdTable:
    """The grouped :class:`ThresholdTable` of a state (increasing scores); scores whose
    weight is all zero add no threshold, as in memory."""
    seen = (pos > 0) | (neg > 0)
    if not seen.all():
        scores, pos, neg = scores[seen], pos[seen], neg[seen]
    del seen
    if scores.size == 0:
        raise ValueError("the accumulator has seen no row with positive weight yet")
    tp, fp = cumulative_sums(pos[::-1]), cumulative_sums(neg[::-1])  # weights: compensated, as in memory
    return trusted_table(scores[::-1], tp, fp, tp[-1], fp[-1], "group")


def score_sums(inverse: np.ndarray, values: np.ndarray, size: int, plain: np.ndarray | None = None) -> np.ndarray:
    """The sum of the non-negative ``values`` of each of ``size`` scores (``inverse``: each row's
    score), within about half an ulp of the exact sum however many rows share a score, where a
    weighted ``np.bincount`` (a sequential sum per score) drifts with them.

    Rump, Ogita and Oishi's error-free extraction, twice: with ``sigma`` a power of two per score at
    least ``2**ceil(log2(rows + 2))`` times its largest value, each value splits exactly into a
    high part ``(sigma + v) - sigma`` (a multiple of ``sigma``'s last bit, so the high parts of a
    score add exactly in any order) and the rest ``v - high``; the rests split again the same way,
    and the last rests, below the sum's last bit by ~2**-100, are added by ``np.bincount``.  Scores
    whose sums come near the float64 maximum keep the plain sums, and so do all when no score has
    more than two rows (one rounding: already correctly rounded).  ``plain`` (one flag a score): scores
    that keep the plain sums all the same (the scores of groups summed together whose own rows had at
    most two a score, as if each group were summed alone).

    >>> x, rows = np.full(10, 0.1), np.zeros(10, dtype=np.int64)
    >>> float(np.bincount(rows, weights=x)[0]), float(score_sums(rows, x, 1)[0])
    (0.9999999999999999, 1.0)
    """
    sums = np.bincount(inverse, weights=values, minlength=size)
    rows = np.bincount(inverse, minlength=size)
    if rows.max(initial=0) <= 2 or (plain is not None and plain.all()):  # one rounding at most: the plain
        return sums  # sums are correctly rounded
    grow = np.frexp(rows + 2.0)[1]  # 2**grow > rows + 2
    top = np.frexp(sums)[1] + grow  # sigma = 2**top >= (rows + 2) * max, as sums >= max (non-negative)
    safe = top < 1000
    top = np.where(safe, top, 0)
    out, rest = [], values
    for _ in range(2):
        sigma = np.ldexp(1.0, top)[inverse]  # 0.0 below the subnormals: the rests are then added as they are
        high = (sigma + rest) - sigma
        rest = rest - high
        out.append(np.bincount(inverse, weights=high, minlength=size))
        top = top - 53 + grow  # the rests are at most half of sigma's last bit
    last = np.bincount(inverse, weights=rest, minlength=size)
    if plain is not None:
        safe &= ~plain
    return np.where(safe, out[0] + (out[1] + last), sums)


def _weighted_run(s: np.ndarray, positive: np.ndarray, weight: np.ndarray) -> _Run:
    """One weighted batch as a state: ``np.unique`` and the weight sums (:func:`score_sums`)."""
    distinct, inverse = np.unique(s, return_inverse=True)
    p = score_sums(inverse, np.where(positive, weight, 0.0), distinct.size)
    n = score_sums(inverse, np.where(positive, 0.0, weight), distinct.size)
    return distinct, p, n


_BLOCK = 1 << 16  # distinct scores per block of the compensated sums of :func:`_steps`


def _cumulative_at(values: np.ndarray, *at: np.ndarray) -> list[np.ndarray]:
    """``compensated_cumsum(values)`` at each increasing index array of ``at`` (0.0 at -1),
    block by block: O(len(at)) memory beyond ``values``."""
    out = [np.zeros(a.size) for a in at]
    carry = np.zeros(2)
    for start in range(0, values.shape[0], _BLOCK):
        stop = min(start + _BLOCK, values.shape[0])
        cum = compensated_cumsum(values[start:stop], carry=carry)
        for a, o in zip(at, out):
            lo, hi = np.searchsorted(a, [start, stop])
            o[lo:hi] = cum[a[lo:hi] - start]
    return out


def _steps(scores: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> Steps:
    """The grouped steps of a state (increasing scores) without building the table:
    O(steps) memory beyond the state.  Counts: the FP count at each step is the sum of
    the negatives since the step before (``np.add.reduceat``); weights: TP and FP are
    compensated sums (:func:`precall._core.sort.compensated_cumsum`, as in memory) read at
    the steps block by block."""
    p, n = pos[::-1], neg[::-1]
    exact = p.dtype.kind in "iu" and n.dtype.kind in "iu"
    count = np.int64 if exact else np.float64
    idx = np.flatnonzero(p)
    dtp = p[idx].astype(count)
    if not exact:
        fp, fp_prev, last = _cumulative_at(n.astype(np.float64, copy=False), idx, idx - 1, np.array([n.size - 1]))
        tp = compensated_cumsum(dtp)
        return one_problem(scores[::-1][idx], tp, dtp, fp, fp_prev, float(tp[-1]) if tp.size else 0.0,
                           float(last[0]), False)
    n_neg = n.sum(dtype=count)
    if idx.size == 0:
        return one_problem(scores[:0], dtp, dtp, dtp, dtp, 0.0, float(n_neg), True)
    starts = np.concatenate(([0], idx[:-1] + 1))
    fp = np.add.reduceat(n, starts, dtype=count)
    fp[-1] = n[starts[-1]:idx[-1] + 1].sum(dtype=count)  # reduceat's last segment runs to the end
    np.cumsum(fp, out=fp)
    tp = np.cumsum(dtp)
    return one_problem(scores[::-1][idx], tp, dtp, fp, fp - n[idx].astype(count), float(tp[-1]), float(n_neg),
                       True)


def _class_totals(state: Steps | tuple[np.ndarray, np.ndarray]) -> tuple[float, float]:
    """The positive and negative count (or weight) of an exact accumulator's steps or a binned one's
    bins."""
    if isinstance(state, Steps):
        return float(state.n_pos[0]), float(state.n_neg[0])
    totals = float(np.sum(state[0])), float(np.sum(state[1]))
    if not sum(totals) > 0:  # as the exact accumulator's steps (nothing to be undefined yet)
        raise ValueError("the accumulator has seen no row with positive weight yet")
    return totals


class Accumulator:
    """Exact PR/ROC state of a stream of labelled scores (binary or one table per class).

    Parameters
    ----------
    pos_label : label, default=None
        The positive label of binary input (as :func:`precall.threshold_table`);
        fixed for the accumulator's life.
    labels : array-like, default=None
        Multi-class or multi-label input: the class of each score column, fixed
        for the accumulator's life (required for multi-class input, since a
        batch may not hold every class).

    Examples
    --------
    >>> import precall
    >>> acc = precall.Accumulator()
    >>> acc.update([0, 1, 1], [0.1, 0.9, 0.4]).update([0, 1], [0.4, 0.2])
    Accumulator(binary, 4 distinct scores, n_pos=3, n_neg=2)
    >>> acc.table().tp
    array([1, 2, 3, 3])
    >>> round(acc.table().average_precision(), 6) == round(precall.average_precision(
    ...     [0, 1, 1, 0, 1], [0.1, 0.9, 0.4, 0.4, 0.2]), 6)
    True
    """

    def __init__(
        self, *, pos_label: Any = None, labels: Any = None, bins: Any = None,
        score_range: tuple[float, float] | None = None,
    ) -> None:
        self.pos_label = check_pos_label(pos_label)
        self.labels = None if labels is None else check_labels(labels)  # as in memory: 1-D, one kind, unique, no NaN
        self.edges = edges_of(bins, score_range, 1 if self.labels is None else max(self.labels.size, 1))
        k = 1 if self.labels is None else self.labels.size
        self._pending = [_Runs() for _ in range(k)]  # exact: batches' states waiting to be merged
        self._counted = [0] * k  # the rows counted (integer counts) in each table: at most _MAX_COUNT
        if self.edges is None:
            self._scores = [np.zeros(0, dtype=np.float32) for _ in range(k)]
            self._pos = [np.zeros(0, dtype=np.uint32) for _ in range(k)]
            self._neg = [np.zeros(0, dtype=np.uint32) for _ in range(k)]
        else:  # one slot per bin, in increasing score order
            n_bins = self.edges.size - 1
            self._scores = [(self.edges[:-1] + self.edges[1:]) / 2 for _ in range(k)]
            self._pos = [np.zeros(n_bins, dtype=np.int64) for _ in range(k)]
            self._neg = [np.zeros(n_bins, dtype=np.int64) for _ in range(k)]

    # -- feeding ------------------------------------------------------------
    @property
    def multi(self) -> bool:
        return self.labels is not None

    def _count(self, rows: int) -> None:
        """Count ``rows`` more rows (integer counts) in every table, refused past an int64 count
        before any table changes."""
        self._counted = [check_count(n + rows, "this batch") for n in self._counted]

    def _add(self, c: int, scores: np.ndarray, positive: np.ndarray, weight: np.ndarray | None) -> None:
        s = scores  # float_scores of the batch, its rows counted (the callers, before any table changes)
        if self.edges is not None:  # binned: scores outside the range go to the end bins
            slot = np.clip(np.searchsorted(self.edges, s, side="right") - 1, 0, self.edges.size - 2)
            n_bins = self.edges.size - 1
            if weight is None:
                p = np.bincount(slot[positive], minlength=n_bins)
                n = np.bincount(slot[~positive], minlength=n_bins)
            else:
                p = score_sums(slot, np.where(positive, weight, 0.0), n_bins)
                n = score_sums(slot, np.where(positive, 0.0, weight), n_bins)
            dtype = np.result_type(self._pos[c].dtype, p.dtype)
            self._pos[c] = self._pos[c].astype(dtype) + p
            self._neg[c] = self._neg[c].astype(dtype) + n
            return
        # batches become sorted runs (unweighted rows sorted some at a time (_Runs.add_rows), the
        # positives' and the negatives' scores apart with np.sort); runs of similar size
        # are merged linearly (a binary counter): n rows cost O(n log n), memory stays
        # near the state's
        if weight is None:
            self._pending[c].add_rows(s[positive], s[~positive])
        else:
            self._pending[c].push(_weighted_run(s, positive, weight))

    def _flush(self, c: int | None = None) -> None:
        if self.edges is not None:
            return
        for i in range(len(self._pending)) if c is None else (c,):
            runs = self._pending[i]
            if runs.stack or runs.rows:
                run = runs.collapse()
                self._scores[i], self._pos[i], self._neg[i] = run
                runs.stack[:] = [run]

    def update(self, y_true: Any, y_score: Any, *, sample_weight: Any = None) -> "Accumulator":
        """Add a batch (validated as the in-memory functions validate it); returns ``self``.

        A batch whose weights are all zero is checked and adds nothing.  The state holds
        float scores and int64 counts: an integer score beyond 2**53 (which a float64
        would tie with its neighbours) and a batch that would count more than 2**63 - 1
        rows in one table are refused, the state unchanged.
        """
        def rows() -> Any:  # a batch of zero weights: its labels and scores checked alone
            if self.multi:
                return check_multi(y_true, y_score, None, self.labels)
            return check_binary(y_true, y_score, None, self.pos_label, batch=True)

        if zero_weight_batch(sample_weight, np.shape(y_true)[0] if np.ndim(y_true) else 0, rows) is not None:
            return self
        if self.multi:
            data = check_multi(y_true, y_score, sample_weight, self.labels)
            scores = float_scores(data.scores)  # every column checked before any table changes
            if data.weight is None:
                self._count(scores.shape[0])
            for c in range(scores.shape[1]):
                self._add(c, scores[:, c], data.positive[:, c], data.weight)
            return self
        if is_multi(y_true, y_score):
            raise ValueError(
                "this accumulator is binary; for multi-class or multi-label input create it with "
                "`labels=` (the class of each score column)"
            )
        data = check_binary(y_true, y_score, sample_weight, self.pos_label, batch=True)
        scores = float_scores(data.scores)
        if data.weight is None:
            self._count(scores.shape[0])
        self._add(0, scores, data.positive, data.weight)
        return self

    def merge(self, other: "Accumulator") -> "Accumulator":
        """A new accumulator holding both states (associative and commutative)."""
        if not isinstance(other, Accumulator):
            raise TypeError(f"`other` must be an Accumulator; got {type(other).__name__}")
        same_labels = (self.labels is None and other.labels is None) or (
            self.labels is not None and other.labels is not None and np.array_equal(self.labels, other.labels))
        if not same_labels or not _same_label(self.pos_label, other.pos_label):
            raise ValueError(
                "can only merge accumulators with the same `pos_label` and `labels` (of one type: numbers "
                f"compare by value, strings and bytes are other labels); got pos_label={self.pos_label!r} and "
                f"{other.pos_label!r}" + ("" if same_labels else f", labels={_shown(self.labels)} and "
                                          f"{_shown(other.labels)}"))
        same_bins = (self.edges is None and other.edges is None) or (
            self.edges is not None and other.edges is not None and np.array_equal(self.edges, other.edges))
        if not same_bins:
            raise ValueError("can only merge accumulators with the same bins (or both exact)")
        out = Accumulator(pos_label=self.pos_label, labels=self.labels, bins=self.edges)
        out._counted = [check_count(a + b, "the merge") for a, b in zip(self._counted, other._counted)]
        self._flush()
        other._flush()
        if self.edges is not None:
            for c in range(len(self._pos)):
                out._pos[c] = self._pos[c] + other._pos[c]
                out._neg[c] = self._neg[c] + other._neg[c]
            return out
        for c in range(len(self._scores)):
            for state in (self, other):
                if state._scores[c].size:
                    out._pending[c].push((state._scores[c], state._pos[c], state._neg[c]))
            out._flush(c)
        return out

    # -- results --------------------------------------------------------------
    def table(self, label: Any = None) -> ThresholdTable:
        """The grouped :class:`ThresholdTable` of everything seen (of class ``label``
        for multi-class input), as :func:`precall.threshold_table` builds it."""
        if self.edges is not None:
            raise ValueError(
                "a binned accumulator has no exact table: use average_precision() or roc_auc(), which "
                "return the value with guaranteed bounds"
            )
        c = self._index(label)
        self._flush(c)
        return table_of_state(self._scores[c], self._pos[c], self._neg[c])

    def tables(self) -> dict[Any, ThresholdTable]:
        """Multi-class / multi-label: the table of each class, by class."""
        if not self.multi:
            return {None: self.table()}
        return {lab: self.table(lab) for lab in self.labels.tolist()}  # type: ignore[union-attr]

    def _index(self, label: Any) -> int:
        if not self.multi:
            if label is not None:
                raise ValueError("a binary accumulator has one table; call table() without a label")
            return 0
        if label is None:
            raise ValueError(f"name the class: table(label) with one of {self.labels.tolist()}")  # type: ignore[union-attr]
        hits = np.flatnonzero(self.labels == label)
        if hits.size == 0:
            raise ValueError(f"`label` {label!r} is not one of {self.labels.tolist()}")  # type: ignore[union-attr]
        return int(hits[0])

    def _steps(self, label: Any = None) -> Steps:
        """The grouped steps of everything seen (internal: what every metric needs)."""
        if self.edges is not None:
            raise ValueError("a binned accumulator has no exact steps: use average_precision() or roc_auc()")
        c = self._index(label)
        self._flush(c)
        if not (self._pos[c].any() or self._neg[c].any()):
            raise ValueError("the accumulator has seen no row with positive weight yet")
        return _steps(self._scores[c], self._pos[c], self._neg[c])

    def evaluate(self, *, recall_grid: str = "reference", on_undefined: Any = "warn", label: Any = None,
                 prevalence: float | None = None) -> Any:
        """:func:`precall.evaluate` (grouped ties) of everything seen, from the steps
        alone: the full table is never built, so the peak stays near the state's size.
        ``prevalence`` as in :func:`precall.evaluate` (the negatives reweighted).

        >>> import precall
        >>> acc = precall.Accumulator().update([0, 1, 1, 0, 1], [0.1, 0.9, 0.4, 0.4, 0.2])
        >>> acc.evaluate().average_precision == precall.evaluate([0, 1, 1, 0, 1], [0.1, 0.9, 0.4, 0.4, 0.2]
        ...                                                      ).average_precision
        True
        """
        if prevalence is not None:
            prevalence = check_prevalence(prevalence)
        return self.evaluations((prevalence,), recall_grid=recall_grid, on_undefined=on_undefined, label=label)[0]

    def evaluations(self, prevalences: Any, *, recall_grid: str = "reference", on_undefined: Any = "warn",
                    label: Any = None) -> list[Any]:
        """:meth:`evaluate` at each of ``prevalences`` (None: the data's own), from one
        computation of the steps."""
        check_options(recall_grid=recall_grid)
        policy = check_on_undefined(on_undefined)
        prevalences = check_prevalences(prevalences)
        steps = self._steps(label)
        out = []
        for pi in prevalences:
            at = steps if pi is None else reweight(steps, pi)
            out.append(evaluation_from_steps(at, at, ties="group", n_samples=None, recall_grid=recall_grid,
                                             policy=policy))
        return out

    def average_precision(self, *, method: str = "step", recall_grid: str = "reference",
                          label: Any = None, on_undefined: Any = "warn") -> Bounded:
        """AP by ``method`` with guaranteed bounds (equal to the value when exact).

        Binned: within a bin the order of positives and negatives is unknown.
        The value treats each bin as one threshold; the bounds hold for every
        arrangement inside the bins (:mod:`precall.scale.binned`).  Without
        positives AP is undefined: ``on_undefined`` as in
        :func:`precall.average_precision` (0.0 with a warning by default), the
        value and both bounds.
        """
        check_options(method=method, recall_grid=recall_grid)
        policy = check_on_undefined(on_undefined)
        state = self._steps(label) if self.edges is None else self._binned(label)
        if not _class_totals(state)[0] > 0:
            v = undefined("average precision", NO_POSITIVES, 0.0, policy, stacklevel=3)
            return Bounded(v, v, v)
        if isinstance(state, Steps):
            v = float(conventions.ap(state, method, recall_grid)[0])
            return Bounded(v, v, v)
        return binned_average_precision(*state, method, recall_grid)

    def roc_auc(self, *, label: Any = None, on_undefined: Any = "warn") -> Bounded:
        """ROC-AUC with guaranteed bounds: the pairs inside a bin count 0 (low), 1/2
        (value, a bin as one threshold) or 1 (high).  Without positives or negatives it
        is undefined: ``on_undefined`` as in :func:`precall.roc_auc` (NaN with a warning
        by default), the value and both bounds."""
        policy = check_on_undefined(on_undefined)
        state = self._steps(label) if self.edges is None else self._binned(label)
        n_pos, n_neg = _class_totals(state)
        if not (n_pos > 0 and n_neg > 0):
            v = undefined("ROC AUC", ONE_CLASS_ROC, float("nan"), policy, stacklevel=3)
            return Bounded(v, v, v)
        if isinstance(state, Steps):
            v = float(conventions.roc_auc(state)[0])
            return Bounded(v, v, v)
        return binned_roc_auc(*state)

    def score(self, metric: Metric, *, label: Any = None) -> Any:
        """A :class:`precall.Metric` of everything seen, exactly (the accumulator's steps are
        grouped, so ``metric.ties`` must be "group").  Multi-class / multi-label: of class
        ``label``, or (``label=None``) the metric's ``average`` over the classes ("macro",
        "weighted", or None for the per-class values).

        >>> import precall
        >>> acc = precall.Accumulator().update([0, 1, 1, 0, 1], [0.1, 0.9, 0.4, 0.4, 0.2])
        >>> m = precall.metric("average_precision", method="voc2010")
        >>> acc.score(m) == precall.score(m, [0, 1, 1, 0, 1], [0.1, 0.9, 0.4, 0.4, 0.2])
        True
        """
        if not isinstance(metric, Metric):
            raise TypeError(f"`metric` must be a precall.Metric (precall.metric(...)); got {metric!r:.80}")
        if metric.ties != "group":
            raise ValueError(
                f"an Accumulator holds grouped ties (one step per distinct score); got {metric.name} with "
                "ties='stable'. Use ties='group'"
            )
        if not self.multi or label is not None:
            return metric.value(self._steps(label))
        if metric.average not in (None, "macro", "weighted") or metric.multi_class != "ovr":
            raise ValueError(
                f"an Accumulator averages classes 'macro' or 'weighted' (or None: per class); got "
                f"average={metric.average!r}, multi_class={metric.multi_class!r}. Pool the cells yourself "
                "for 'micro'"
            )
        steps = [self._steps(lab) for lab in self.labels.tolist()]  # type: ignore[union-attr]
        values = np.array([[metric.value(st) for st in steps]])
        if metric.average is None:
            return values[0]
        support = np.array([[float(st.n_pos[0]) for st in steps]])
        return float(average_values(values, support, metric.average)[0])

    def _binned(self, label: Any) -> tuple[np.ndarray, np.ndarray]:
        c = self._index(label)
        return self._pos[c], self._neg[c]

    @property
    def n_distinct(self) -> int:
        self._flush()
        return int(sum(s.size for s in self._scores))

    def __repr__(self) -> str:
        self._flush()
        kind = "binary" if not self.multi else f"{self.labels.size} classes"  # type: ignore[union-attr]
        text = f"Accumulator({kind}, {self.n_distinct} distinct scores"
        if not self.multi:
            text += f", n_pos={self._pos[0].sum():g}, n_neg={self._neg[0].sum():g}"
        return text + ")"

    # -- shipping ---------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The state as a versioned ``.npz`` payload (no pickle): see :meth:`from_bytes`."""
        self._flush()
        try:
            meta = json.dumps({
                "format": _FORMAT, "version": _VERSION,
                "pos_label": _plain(self.pos_label),
                "labels": None if self.labels is None else [_plain(v) for v in self.labels.tolist()],
                "binned": self.edges is not None,
            })
        except TypeError:
            raise TypeError("`pos_label` and `labels` must be strings, numbers or booleans to be shipped") from None
        arrays = {"meta": np.frombuffer(meta.encode("utf-8"), dtype=np.uint8)}
        if self.edges is not None:
            arrays["edges"] = self.edges
        for c in range(len(self._scores)):
            arrays[f"scores_{c}"] = self._scores[c]
            arrays[f"pos_{c}"] = self._pos[c]
            arrays[f"neg_{c}"] = self._neg[c]
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, payload: bytes) -> "Accumulator":
        """Rebuild an accumulator from :meth:`to_bytes`.

        The payload is checked before anything is allocated: a zip of stored
        (uncompressed) ``.npy`` members only, whose declared sizes, shapes and
        dtypes agree with each other and with the payload's size, a metadata
        record with exactly the fields :meth:`to_bytes` writes, and one table of
        finite, sorted, distinct scores with finite non-negative counts per
        class.  Anything else raises ``ValueError`` (memory stays within a small
        multiple of the payload's size).
        """
        if not isinstance(payload, (bytes, bytearray, memoryview)):
            raise TypeError(f"`payload` must be bytes; got {type(payload).__name__}")
        data = bytes(payload)
        arrays = _read_payload(data)
        meta = _payload_meta(arrays.pop("meta"))
        labels, binned = meta["labels"], meta["binned"]
        k = 1 if labels is None else len(labels)
        expected = {f"{kind}_{c}" for c in range(k) for kind in ("scores", "pos", "neg")} | (
            {"edges"} if binned else set())
        if set(arrays) != expected:
            extra, missing = sorted(set(arrays) - expected), sorted(expected - set(arrays))
            raise ValueError(f"corrupt Accumulator payload: {k} table(s) declared, but arrays "
                             f"{'missing ' + str(missing[:5]) if missing else ''}"
                             f"{' unexpected ' + str(extra[:5]) if extra else ''}")
        edges = arrays.get("edges") if binned else None
        try:
            out = cls(pos_label=meta["pos_label"], labels=labels, bins=edges)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"corrupt Accumulator payload: {exc}") from None
        for c in range(k):
            s, p, n = arrays[f"scores_{c}"], arrays[f"pos_{c}"], arrays[f"neg_{c}"]
            _check_table(c, s, p, n, None if out.edges is None else out.edges.size - 1)
            out._scores[c], out._pos[c], out._neg[c] = s, p, n
            out._counted[c] = count_total(p, n)
            if out.edges is None and s.size:
                out._pending[c].push((s, p, n))
        return out


_SCORE_DTYPES = {np.dtype(np.float32), np.dtype(np.float64)}
_COUNT_DTYPES = {np.dtype(np.uint32), np.dtype(np.int64), np.dtype(np.float64)}
_MAX_LABELS = 1 << 16


def _read_payload(data: bytes) -> dict[str, np.ndarray]:
    """The payload's arrays, every member's size, header and dtype checked before reading it."""
    import zipfile

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:  # an entry's version
        raise ValueError(f"not a precall Accumulator payload: {exc}") from None
    if len(infos) > 3 * _MAX_LABELS + 2:
        raise ValueError(f"corrupt Accumulator payload: {len(infos)} members")
    declared = 0
    for info in infos:
        if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
            raise ValueError(
                f"corrupt Accumulator payload: member {info.filename!r} is compressed ({info.compress_size} bytes "
                f"declaring {info.file_size}); precall writes stored members only, so the size cannot be trusted")
        declared += info.file_size
    if declared > len(data):
        raise ValueError(f"corrupt Accumulator payload: members declare {declared} bytes in a payload of {len(data)}")
    arrays: dict[str, np.ndarray] = {}
    for info in infos:
        name = info.filename[:-4] if info.filename.endswith(".npy") else None
        if name is None or not name.replace("_", "").isalnum():
            raise ValueError(f"corrupt Accumulator payload: unexpected member {info.filename!r}")
        try:
            with archive.open(info) as fh:
                version = np.lib.format.read_magic(fh)
                if version not in ((1, 0), (2, 0)):
                    raise ValueError(f"member {name!r}: .npy format version {version} is not one precall writes")
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, fortran, dtype = read_header(fh)  # the header only (at most 10 kB)
                if dtype.hasobject or len(shape) != 1 or dtype.kind not in "uif" or fortran:
                    raise ValueError(f"member {name!r}: a 1-D numeric array is expected; got {dtype}, shape {shape}")
                if shape[0] * dtype.itemsize > info.file_size:
                    raise ValueError(f"member {name!r} declares {shape[0]} values in {info.file_size} bytes")
                raw = fh.read(shape[0] * dtype.itemsize)
                if len(raw) != shape[0] * dtype.itemsize:
                    raise ValueError(f"member {name!r} is truncated")
                arrays[name] = np.frombuffer(raw, dtype=dtype).copy()
        except ValueError as exc:
            raise ValueError(f"corrupt Accumulator payload: {exc}") from None
        except Exception as exc:  # zip or header errors of a foreign file: all "not ours"
            raise ValueError(f"not a precall Accumulator payload: {exc}") from None
    if "meta" not in arrays:
        raise ValueError("not a precall Accumulator payload (no metadata)")
    return arrays


def _payload_meta(raw: np.ndarray) -> dict[str, Any]:
    """The metadata record, every field checked."""
    if raw.dtype != np.uint8 or raw.size > 1 << 24:
        raise ValueError("corrupt Accumulator payload: bad metadata record")
    try:
        meta = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ValueError("not a precall Accumulator payload (metadata is not JSON)") from None
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise ValueError("not a precall Accumulator payload (no format marker)")
    version = meta.get("version")
    if type(version) is not int or version != _VERSION:
        raise ValueError(f"Accumulator payload version {version!r} is not supported (this precall reads version "
                         f"{_VERSION})")
    if set(meta) != {"format", "version", "pos_label", "labels", "binned"}:
        raise ValueError(f"corrupt Accumulator payload: metadata fields {sorted(meta)}")
    scalar = (str, int, float, bool, type(None))
    if not isinstance(meta["pos_label"], scalar):
        raise ValueError(f"corrupt Accumulator payload: pos_label must be a string, number or boolean; got "
                         f"{type(meta['pos_label']).__name__}")
    labels = meta["labels"]
    if labels is not None:
        if not isinstance(labels, list) or not labels or len(labels) > _MAX_LABELS:
            raise ValueError("corrupt Accumulator payload: labels must be a non-empty list (at most 65536)")
        kinds = {type(v) for v in labels}
        if not all(isinstance(v, (str, int, float, bool)) for v in labels) or len(kinds) != 1:
            raise ValueError("corrupt Accumulator payload: labels must be strings or numbers of one type")
        if len(set(labels)) != len(labels):
            raise ValueError("corrupt Accumulator payload: labels must be unique")
    if type(meta["binned"]) is not bool:
        raise ValueError("corrupt Accumulator payload: binned must be true or false")
    return meta


def _check_table(c: int, s: np.ndarray, p: np.ndarray, n: np.ndarray, n_bins: int | None) -> None:
    problem = None
    if not (s.shape == p.shape == n.shape):
        problem = "arrays of different lengths"
    elif s.dtype not in _SCORE_DTYPES or p.dtype not in _COUNT_DTYPES or n.dtype not in _COUNT_DTYPES:
        problem = f"dtypes {s.dtype}, {p.dtype}, {n.dtype}"
    elif p.dtype != n.dtype:
        problem = "positive and negative counts of different dtypes"
    elif not np.isfinite(s).all() or (n_bins is None and (np.diff(s) <= 0).any()):
        problem = "scores not finite, sorted and distinct"
    elif not (np.isfinite(p).all() and np.isfinite(n).all() and (p >= 0).all() and (n >= 0).all()):
        problem = "counts not finite and non-negative"
    elif n_bins is not None and s.size != n_bins:
        problem = f"{s.size} bins where the edges give {n_bins}"
    elif count_total(p, n) > _MAX_COUNT:
        problem = f"counts adding up to {count_total(p, n)} rows, beyond the 2**63 - 1 an int64 count holds"
    if problem is not None:
        raise ValueError(f"corrupt Accumulator payload: table {c}: {problem}")


def _same_label(a: Any, b: Any) -> bool:
    """One label: equal and of one kind (1 == 1.0 == True; "1" is not 1, b"1" is not "1")."""
    if a is None or b is None:
        return a is None and b is None
    kinds = np.array([a], dtype=object), np.array([b], dtype=object)
    return label_kind(kinds[0]) == label_kind(kinds[1]) and bool(a == b)


def _shown(labels: np.ndarray | None) -> str:
    return "None" if labels is None else repr(labels.tolist())[:80]


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(value)
