"""The count table: one sort of the scores, TP and FP at every threshold.

Two objects live here.

:class:`ThresholdTable` is the public table: one row per distinct score
(``ties="group"``) or per sample (``ties="stable"``), in decreasing score order,
with the cumulative true and false positives at that row.  Every curve derives
from it.

:class:`Steps` is the private reduction every scalar metric needs: only the rows
where TP increases ("steps"), each with the FP count at that row and at the row
just above it.  Precision is highest on the first row of a run of equal TP, and
recall changes only at those rows, so every AP convention, ROC-AUC and the best
F1 are functions of the steps alone.  For unweighted input with grouped ties the
steps are computed without the table and without ``argsort``: the positives'
and the negatives' scores are sorted separately (``np.sort``) and the negatives
are counted with ``searchsorted``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ._validate import BinaryInput

if TYPE_CHECKING:  # pragma: no cover
    from .curves import DetCurve, PrecisionRecallCurve, RocCurve
    from .evaluate import Evaluation

__all__ = [
    "OperatingPoint",
    "Steps",
    "ThresholdTable",
    "Ties",
    "build_steps",
    "build_steps_and_grouped",
    "build_table",
    "distinct_counts",
    "negative_scale",
    "reweight_steps",
    "steps_from_sorted",
]

Ties = Literal["group", "stable"]
TIES: tuple[str, ...] = ("group", "stable")


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


@dataclass(frozen=True)
class Steps:
    """The operating points where TP increases (internal).

    ``tp`` and ``fp`` are the cumulative counts at the step, ``dtp`` the positive
    weight the step adds, ``fp_prev`` the FP count at the operating point just
    above (0 at the top).  The point above is the origin (nothing predicted
    positive) exactly when ``tp - dtp + fp_prev == 0``.
    """

    thresholds: np.ndarray
    tp: np.ndarray
    dtp: np.ndarray
    fp: np.ndarray
    fp_prev: np.ndarray
    n_pos: float
    n_neg: float
    exact: bool  # integer counts (no weights): sums are exact


_INT64_MAX = np.int64(np.iinfo(np.int64).max)


_CHUNK = 1 << 20  # elements per chunk for in-place passes (bounded temporaries)


def _flip_negative_magnitudes(v: np.ndarray, sign_bit: int) -> None:
    """In place: IEEE bit patterns (as int64) to integers in numeric order."""
    for start in range(0, v.shape[0], _CHUNK):
        part = v[start : start + _CHUNK]
        mask = part >> sign_bit  # 0 for positive, -1 for negative numbers
        mask &= (1 << sign_bit) - 1
        part ^= mask


def _descending_key(scores: np.ndarray) -> tuple[np.ndarray, int]:
    """Unsigned integers that decrease as the scores increase, and their bit width.

    Floats are read through their IEEE bits (``-0.0`` first made ``+0.0``);
    flipping the magnitude bits of negative numbers makes integer order equal
    numeric order.  Integers are used as they are.
    """
    kind, size = scores.dtype.kind, scores.dtype.itemsize
    if kind == "f" and size <= 4:
        v = (scores.astype(np.float32) + np.float32(0.0)).view(np.int32).astype(np.int64)
        _flip_negative_magnitudes(v, 31)
        width = 32
    elif kind == "f":
        v = (scores.astype(np.float64, copy=False) + 0.0).view(np.int64)
        _flip_negative_magnitudes(v, 63)
        width = 64
    elif kind == "u" and size == 8:
        v = scores.view(np.int64) ^ np.int64(np.iinfo(np.int64).min)
        width = 64
    elif size <= 4:  # 32-bit or narrower integers: shift into [0, 2**32)
        v = scores.astype(np.int64)
        if kind == "i":
            v += 1 << 31
        width = 32
    else:
        v = scores.astype(np.int64)
        width = 64
    if width == 32:
        if kind == "f":
            v += 1 << 31  # signed 32-bit order -> [0, 2**32)
        d = np.int64((1 << 32) - 1) - v
        return d.view(np.uint64), 32
    v ^= _INT64_MAX
    return v.view(np.uint64), 64


def _stable_descending_sort(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The permutation sorting ``scores`` decreasingly, equal scores in input
    order, and the sorted scores.

    One ``np.sort`` (SIMD) of the 64-bit keys ``score_key << b | index``, where
    ``b`` bits hold the index, replaces a merge-sort ``argsort`` (4x faster at
    1e7).  For 32-bit scores the key holds the whole score and the order is
    exact; for 64-bit scores only the top ``64 - b`` bits fit, so two different
    scores may share a key and be ordered by index instead: such inversions
    are found and those groups re-sorted exactly.
    """
    n = scores.shape[0]
    if n < 2:
        return np.arange(n, dtype=np.int64), scores.copy()
    if scores.dtype.itemsize > 8 or n > 2**40:
        # wider than 64 bits (longdouble): a merge sort, stable by construction
        order = n - 1 - np.argsort(scores[::-1], kind="stable")[::-1]
        return order, scores[order]
    shift = max(1, (n - 1).bit_length())
    key, width = _descending_key(scores)
    drop = max(0, width + shift - 64)
    if drop:
        key >>= np.uint64(drop)
    key <<= np.uint64(shift)
    for start in range(0, n, _CHUNK):
        part = key[start : start + _CHUNK]
        part |= np.arange(start, start + part.shape[0], dtype=np.uint64)
    key.sort()
    key &= np.uint64((1 << shift) - 1)
    order = key.view(np.int64)
    s = scores[order]
    bad = np.flatnonzero(s[1:] > s[:-1])
    if bad.size:
        # collisions of truncated keys: re-sort each affected group exactly
        group = _descending_key(s)[0] >> np.uint64(drop)
        groups = np.unique(group[bad])
        lo = np.searchsorted(group, groups, side="left")
        hi = np.searchsorted(group, groups, side="right")
        lengths = hi - lo
        pos = np.repeat(lo - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
        sub = order[pos]
        full_key, _ = _descending_key(scores[sub])
        order[pos] = sub[np.lexsort((sub, full_key))]
        s[pos] = scores[order[pos]]
    return order, s


def _group_ends(sorted_desc: np.ndarray) -> np.ndarray:
    """Index of the last element of each run of equal values."""
    ends = _run_ends(sorted_desc)
    return np.arange(sorted_desc.shape[0]) if ends is None else ends


def build_table(data: BinaryInput, ties: Ties) -> "ThresholdTable":
    """Build the :class:`ThresholdTable` of validated input."""
    scores, positive, weight = data.scores, data.positive, data.weight
    if weight is None and ties == "group":
        # Distinct values and their multiplicities from one np.sort; the
        # positives per value from a sort of the positives alone.
        a = np.sort(scores)[::-1]
        ends = _group_ends(a)
        thresholds = a[ends]
        total = ends + 1
        p = np.sort(scores[positive])[::-1]
        tp = np.zeros(thresholds.shape[0], dtype=np.int64)
        if p.size:
            p_ends = _group_ends(p)
            # thresholds are decreasing: search in the reversed (increasing) view
            asc = thresholds[::-1]
            rows = thresholds.shape[0] - 1 - np.searchsorted(asc, p[p_ends])
            tp[rows] = np.diff(p_ends, prepend=-1)
            np.cumsum(tp, out=tp)
        fp = total - tp
        n_pos, n_neg = float(p.size), float(scores.size - p.size)
    else:
        ranked = _rank(data)
        rows = _run_ends(ranked.scores) if ties == "group" else None
        if rows is None:
            thresholds, tp, fp = ranked.scores, ranked.tp, ranked.fp
        else:
            thresholds, tp, fp = ranked.scores[rows], ranked.tp[rows], ranked.fp[rows]
        n_pos, n_neg = ranked.n_pos, ranked.n_neg
    return ThresholdTable(
        thresholds=thresholds, tp=tp, fp=fp, n_pos=n_pos, n_neg=n_neg, ties=ties, _checked=True
    )


def _sorted_split(data: BinaryInput) -> tuple[np.ndarray, np.ndarray]:
    """The positives' and the negatives' scores, each sorted increasingly (in place)."""
    p = data.scores[data.positive]
    p.sort()
    q = data.scores[~data.positive]
    q.sort()
    return p, q


def _steps_unweighted(data: BinaryInput, ties: Ties) -> Steps | None:
    """Steps of unweighted input from ``np.sort`` of each class, without argsort.

    Returns None for ``ties="stable"`` when a positive and a negative share a
    score: their input order matters then, and only the full order gives it.
    """
    p, q = _sorted_split(data)
    return steps_from_sorted(p, q, ties)


def distinct_counts(sorted_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of an increasingly sorted array and how often each occurs (int64)."""
    n = sorted_values.size
    if n == 0:
        return sorted_values, np.zeros(0, dtype=np.int64)
    starts = np.insert(np.flatnonzero(sorted_values[1:] != sorted_values[:-1]) + 1, 0, 0)
    return sorted_values[starts], np.diff(np.append(starts, n))


def steps_from_sorted(p: np.ndarray, q: np.ndarray, ties: Ties = "group") -> Steps | None:
    """Steps from the positives' and the negatives' scores, each sorted increasingly.

    The arrays are only read.  Returns None for ``ties="stable"`` when a score is
    shared across the classes (see :func:`_steps_unweighted`).
    """
    n_pos, n_neg = p.size, q.size
    if n_pos == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Steps(p, empty, empty, empty, empty, 0.0, float(n_neg), True)
    values, counts = distinct_counts(p)  # distinct positive scores, increasing
    below = np.searchsorted(q, values, side="left")  # negatives scored < value
    tied = below < n_neg
    tied[tied] = q[below[tied]] == values[tied]  # a negative has exactly this score
    below_or_equal = below
    if tied.any():
        below_or_equal = below.copy()
        below_or_equal[tied] = np.searchsorted(q, values[tied], side="right")
    if ties == "group":
        return Steps(
            values[::-1], np.cumsum(counts[::-1]), counts[::-1], (n_neg - below)[::-1],
            (n_neg - below_or_equal)[::-1], float(n_pos), float(n_neg), True,
        )
    if tied.any():
        return None
    # stable without shared scores: one step per positive, in any order within
    # a run of equal positive scores
    fp = np.repeat(n_neg - below, counts)[::-1]
    ones = np.ones(n_pos, dtype=np.int64)
    return Steps(
        p[::-1], np.arange(1, n_pos + 1, dtype=np.int64), ones, fp, fp,
        float(n_pos), float(n_neg), True,
    )


@dataclass(frozen=True)
class _Ranked:
    """Samples in stable decreasing score order with per-sample cumulative TP
    and FP (internal; the stage between the permutation and table or steps)."""

    scores: np.ndarray
    positive: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    exact: bool

    @property
    def n_pos(self) -> float:
        return float(self.tp[-1])

    @property
    def n_neg(self) -> float:
        return float(self.fp[-1])


def _rank(data: BinaryInput) -> _Ranked:
    """Sort once (stable, decreasing) and accumulate; arrays reused in place.

    Weighted sums are float64 in stable order, exactly as scikit-learn forms
    them (``cumsum(y * w)`` and ``cumsum((1 - y) * w)``).
    """
    order, s = _stable_descending_sort(data.scores)
    y = data.positive[order]
    if data.weight is None:
        del order
        tp = np.cumsum(y, dtype=np.int64)
        fp = np.arange(1, y.shape[0] + 1, dtype=np.int64)
        fp -= tp
        return _Ranked(s, y, tp, fp, True)
    w = data.weight[order]
    del order
    wp = np.where(y, w, 0.0)
    w -= wp  # the negatives' weights (exactly w or 0)
    return _Ranked(s, y, np.cumsum(wp, out=wp), np.cumsum(w, out=w), False)


def _run_ends(sorted_desc: np.ndarray) -> np.ndarray | None:
    """Last index of each run of equal scores; None when all scores differ."""
    distinct = sorted_desc[1:] != sorted_desc[:-1]
    if distinct.all():
        return None
    return np.append(np.flatnonzero(distinct), sorted_desc.shape[0] - 1)


def _steps_from_ranked(r: _Ranked, ties: Ties) -> Steps:
    """The steps of ranked samples; only the step rows are gathered."""
    ends = _run_ends(r.scores) if ties == "group" else None
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
    return Steps(r.scores[rows], tp, tp - tp_above, r.fp[rows], fp_prev, r.n_pos, r.n_neg, r.exact)


def build_steps(data: BinaryInput, ties: Ties) -> Steps:
    """The steps of validated input, without building the full table."""
    if data.weight is None:
        steps = _steps_unweighted(data, ties)
        if steps is not None:
            return steps
    return _steps_from_ranked(_rank(data), ties)


def build_steps_and_grouped(data: BinaryInput, ties: Ties) -> tuple[Steps, Steps]:
    """The steps for ``ties`` and for grouped ties (ROC-AUC is always grouped),
    from one sort.

    The two are the same object unless ``ties="stable"`` splits a run of equal
    scores shared by positives and negatives.
    """
    if data.weight is None:
        steps = _steps_unweighted(data, ties)
        if steps is not None:
            return steps, steps
    ranked = _rank(data)
    steps = _steps_from_ranked(ranked, ties)
    if ties == "group":
        return steps, steps
    return steps, _steps_from_ranked(ranked, "group")


def negative_scale(n_pos: float, n_neg: float, prevalence: Any) -> float:
    """The factor on the negatives' weight that makes positives ``prevalence`` of the total.

    ``(1 - pi) / pi * n_pos / n_neg``: after it, ``n_pos / (n_pos + scaled n_neg) = pi``.
    Raises ``ValueError`` for a prevalence outside (0, 1) or a class without weight.
    """
    from ._validate import check_prevalence

    pi = check_prevalence(prevalence)
    for name, total in (("positives", n_pos), ("negatives", n_neg)):
        if total <= 0:
            raise ValueError(
                f"cannot reweight to `prevalence` {pi:g}: the data have no {name} (total weight "
                f"{total:g}), so the precision at another class ratio is unknown; evaluate data "
                "with both classes, or drop `prevalence`"
            )
    return (1.0 - pi) / pi * n_pos / n_neg


def reweight_steps(steps: Steps, prevalence: Any) -> Steps:
    """The steps with the negatives' weight scaled to reach ``prevalence`` (float64 counts)."""
    c = negative_scale(steps.n_pos, steps.n_neg, prevalence)
    return Steps(
        steps.thresholds, steps.tp.astype(np.float64), steps.dtp.astype(np.float64),
        steps.fp * c, steps.fp_prev * c, steps.n_pos, steps.n_neg * c, False,
    )


def _complement(total: float, counts: np.ndarray) -> np.ndarray:
    """``total - counts``, staying in integers when both are whole numbers."""
    if counts.dtype.kind in "iu" and float(total).is_integer():
        return int(total) - counts
    return total - counts


@dataclass(frozen=True)
class OperatingPoint:
    """One row of a :class:`ThresholdTable`: predict positive at ``score >= threshold``.

    ``precision`` is 0 when nothing is predicted positive (as the table's
    column); ``f1`` is ``2 P R / (P + R)`` (0 when both are 0).
    """

    threshold: float
    tp: float
    fp: float
    tn: float
    fn: float
    precision: float
    recall: float
    fpr: float
    f1: float


def _fmt(x: Any) -> str:
    if isinstance(x, (float, np.floating)):
        return f"{x:.6g}"
    return str(x)


@dataclass(frozen=True, eq=False)
class ThresholdTable:
    """TP and FP at every threshold: the one table every curve and area comes from.

    Rows are in decreasing score order.  With ``ties="group"`` there is one row
    per distinct score (samples with equal scores are predicted positive
    together, as in scikit-learn); with ``ties="stable"`` one row per sample,
    equal scores kept in input order (the seeds' rank tables, pycocotools).

    Parameters
    ----------
    thresholds : ndarray of shape (n_rows,)
        Decreasing scores; row ``i`` predicts positive every sample scored
        ``>= thresholds[i]`` (for ``ties="stable"``: the first ``i + 1``
        samples in rank order).
    tp, fp : ndarray of shape (n_rows,)
        Cumulative true and false positives at each row (integers without
        weights, float64 with them).
    n_pos, n_neg : float
        Total positive and negative weight.  ``n_pos`` may exceed ``tp[-1]``:
        in detection, ground truths that no detection found still count.
    ties : {"group", "stable"}
        How the rows treat equal scores.

    Examples
    --------
    >>> import precall
    >>> t = precall.threshold_table([0, 1, 1, 0], [0.1, 0.9, 0.4, 0.4])
    >>> t.tp, t.fp
    (array([1, 2, 2]), array([0, 1, 2]))
    >>> t.precision
    array([1.        , 0.66666667, 0.5       ])
    >>> round(t.average_precision(method="voc2010"), 4)  # 0.5 * 1 + 0.5 * 2/3
    0.8333
    """

    thresholds: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    n_pos: float
    n_neg: float
    ties: Ties = "group"
    _checked: bool = field(default=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self._checked:
            self._validate()
        for name in ("thresholds", "tp", "fp"):
            object.__setattr__(self, name, _readonly(np.asarray(getattr(self, name))))
        object.__setattr__(self, "n_pos", float(self.n_pos))
        object.__setattr__(self, "n_neg", float(self.n_neg))

    def _validate(self) -> None:
        from ._validate import check_choice

        check_choice(self.ties, "ties", TIES)
        t = np.asarray(self.thresholds)
        tp = np.asarray(self.tp)
        fp = np.asarray(self.fp)
        for name, a in (("thresholds", t), ("tp", tp), ("fp", fp)):
            if a.ndim != 1:
                raise ValueError(f"`{name}` must be 1-D; got shape {a.shape}")
            if a.dtype.kind not in "iuf":
                raise TypeError(f"`{name}` must be numeric; got dtype {a.dtype}")
            if a.dtype.kind == "f" and not np.isfinite(a).all():
                raise ValueError(f"`{name}` must be finite")
        if not (t.shape == tp.shape == fp.shape):
            raise ValueError(
                "`thresholds`, `tp` and `fp` must have the same length; got "
                f"{t.shape[0]}, {tp.shape[0]} and {fp.shape[0]}"
            )
        if t.shape[0] == 0:
            raise ValueError("a ThresholdTable must have at least one row; got 0")
        dt = np.diff(t)
        if self.ties == "group" and (dt >= 0).any():
            raise ValueError("`thresholds` must be strictly decreasing with ties='group'")
        if self.ties == "stable" and (dt > 0).any():
            raise ValueError("`thresholds` must be non-increasing with ties='stable'")
        for name, a in (("tp", tp), ("fp", fp)):
            if (a < 0).any() or (np.diff(a) < 0).any():
                raise ValueError(f"`{name}` must be non-negative and non-decreasing")
        if not (np.isfinite(self.n_pos) and self.n_pos >= tp[-1]):
            raise ValueError(f"`n_pos` must be at least tp[-1] = {tp[-1]}; got {self.n_pos}")
        if not (np.isfinite(self.n_neg) and self.n_neg >= fp[-1]):
            raise ValueError(f"`n_neg` must be at least fp[-1] = {fp[-1]}; got {self.n_neg}")

    # -- derived columns -------------------------------------------------
    def __len__(self) -> int:
        return int(self.thresholds.shape[0])

    @property
    def fn(self) -> np.ndarray:
        """False negatives at each row: ``n_pos - tp``."""
        return _complement(self.n_pos, self.tp)

    @property
    def tn(self) -> np.ndarray:
        """True negatives at each row: ``n_neg - fp``."""
        return _complement(self.n_neg, self.fp)

    @property
    def precision(self) -> np.ndarray:
        """``tp / (tp + fp)`` at each row (0 where nothing is predicted positive)."""
        tp = self.tp.astype(np.float64)
        ps = tp + self.fp
        return np.where(ps != 0, tp / np.where(ps != 0, ps, 1.0), 0.0)

    @property
    def recall(self) -> np.ndarray:
        """``tp / n_pos`` at each row (NaN when there are no positives)."""
        if self.n_pos == 0:
            return np.full(len(self), np.nan)
        return self.tp / self.n_pos

    tpr = recall

    @property
    def fpr(self) -> np.ndarray:
        """``fp / n_neg`` at each row (NaN when there are no negatives)."""
        if self.n_neg == 0:
            return np.full(len(self), np.nan)
        return self.fp / self.n_neg

    def grouped(self) -> "ThresholdTable":
        """The same table with equal thresholds merged into one row (``ties="group"``)."""
        if self.ties == "group":
            return self
        ends = _group_ends(self.thresholds)
        return ThresholdTable(
            thresholds=self.thresholds[ends], tp=self.tp[ends], fp=self.fp[ends],
            n_pos=self.n_pos, n_neg=self.n_neg, ties="group", _checked=True,
        )

    def at_prevalence(self, prevalence: float) -> "ThresholdTable":
        """The table reweighted so that positives make up ``prevalence`` of the weight.

        Every negative's weight is multiplied by ``(1 - pi) / pi * n_pos / n_neg``
        (``pi = prevalence``); the positives are unchanged.  The PR curve and
        every AP convention of the result answer "what would this be if
        positives were ``pi`` of the population", assuming the scores of each
        class are distributed as in this data.  TPR and FPR, hence the ROC
        curve and ROC-AUC, do not change.  The counts become float64.

        Parameters
        ----------
        prevalence : float in (0, 1)
            The share of positives to evaluate at (e.g. the deployment rate).

        Returns
        -------
        ThresholdTable

        Raises
        ------
        ValueError
            If ``prevalence`` is not in (0, 1), or the table has no positive
            or no negative weight.

        Examples
        --------
        >>> import precall
        >>> t = precall.threshold_table([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1])
        >>> u = t.at_prevalence(0.2)          # 2 positives: negatives now weigh 8
        >>> u.n_pos, u.n_neg
        (2.0, 8.0)
        >>> u.fp
        array([0., 4., 4., 8.])
        >>> round(t.average_precision(), 4), round(u.average_precision(), 4)
        (0.8333, 0.6667)
        """
        c = negative_scale(self.n_pos, self.n_neg, prevalence)
        return ThresholdTable(
            thresholds=self.thresholds, tp=self.tp.astype(np.float64), fp=self.fp * c,
            n_pos=self.n_pos, n_neg=self.n_neg * c, ties=self.ties, _checked=True,
        )

    def steps(self) -> Steps:
        """The rows where TP increases, with the FP count just above each."""
        tp = self.tp
        dtp = np.diff(tp, prepend=np.zeros(1, dtype=tp.dtype))
        idx = np.flatnonzero(dtp > 0)
        fp_prev = np.where(idx > 0, self.fp[np.maximum(idx - 1, 0)], 0)
        fp_prev = fp_prev.astype(self.fp.dtype, copy=False)
        return Steps(
            self.thresholds[idx],
            tp[idx],
            dtp[idx],
            self.fp[idx],
            fp_prev,
            self.n_pos,
            self.n_neg,
            tp.dtype.kind in "iu" and self.fp.dtype.kind in "iu",
        )

    # -- curves and metrics (conveniences over curves.py / scores.py) ----
    def precision_recall_curve(self, *, drop_intermediate: bool = False) -> "PrecisionRecallCurve":
        """Precision-recall curve; see :func:`precall.precision_recall_curve`."""
        from .curves import pr_curve_from_table

        return pr_curve_from_table(self, drop_intermediate=drop_intermediate)

    def roc_curve(self, *, drop_intermediate: bool = True) -> "RocCurve":
        """ROC curve; see :func:`precall.roc_curve`."""
        from .curves import roc_curve_from_table

        return roc_curve_from_table(self, drop_intermediate=drop_intermediate)

    def det_curve(self, *, drop_intermediate: bool = False) -> "DetCurve":
        """DET curve; see :func:`precall.det_curve`."""
        from .curves import det_curve_from_table

        return det_curve_from_table(self, drop_intermediate=drop_intermediate)

    def average_precision(
        self, *, method: str = "step", recall_grid: str = "reference", on_undefined: Any = "warn"
    ) -> float:
        """Average precision by the named convention; see :func:`precall.average_precision`."""
        from .scores import ap_from_steps

        return ap_from_steps(
            self.steps(), method=method, recall_grid=recall_grid, on_undefined=on_undefined
        )

    def roc_auc(self, *, max_fpr: float | None = None, on_undefined: Any = "warn") -> float:
        """ROC-AUC; see :func:`precall.roc_auc`."""
        from .scores import roc_auc_from_table

        return roc_auc_from_table(self, max_fpr=max_fpr, on_undefined=on_undefined)

    def evaluate(self, *, recall_grid: str = "reference", on_undefined: Any = "warn") -> "Evaluation":
        """Every convention at once; see :func:`precall.evaluate`."""
        from .evaluate import evaluation_from_steps

        return evaluation_from_steps(
            self.steps(), self.grouped().steps(), ties=self.ties, n_samples=None,
            recall_grid=recall_grid, on_undefined=on_undefined,
        )

    # -- presentation ----------------------------------------------------
    def _point(self, row: int, threshold: float | None = None) -> OperatingPoint:
        if row < 0:  # above the first row: nothing predicted positive
            p = r = f = 0.0
            return OperatingPoint(float(threshold), 0.0, 0.0, self.n_neg, self.n_pos, p, r, f, 0.0)
        p, r = float(self.precision[row]), float(self.recall[row])
        f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
        return OperatingPoint(
            float(self.thresholds[row]), float(self.tp[row]), float(self.fp[row]), float(self.tn[row]),
            float(self.fn[row]), p, r, float(self.fpr[row]), f1,
        )

    def operating_point(
        self, *, recall: float | None = None, precision: float | None = None, threshold: float | None = None
    ) -> OperatingPoint:
        """The operating point at a target recall, precision or threshold (give one).

        ``recall=r``: the highest threshold whose recall is at least r.
        ``precision=p``: of the rows with precision at least p, the one with the
        highest recall (at its highest threshold).  ``threshold=t``: predict
        positive every sample scored ``>= t`` (the last row at or above t; a
        point predicting nothing when t exceeds every score).

        Examples
        --------
        >>> import precall
        >>> t = precall.threshold_table([1, 0, 1, 1, 0], [0.9, 0.8, 0.7, 0.6, 0.2])
        >>> t.operating_point(recall=0.6).threshold
        0.7
        >>> t.operating_point(precision=0.75).recall
        1.0
        """
        given = [name for name, v in (("recall", recall), ("precision", precision), ("threshold", threshold))
                 if v is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of `recall`, `precision`, `threshold`; got {given or 'none'}")
        if threshold is not None:
            t = float(threshold)
            if not np.isfinite(t):
                raise ValueError(f"`threshold` must be finite; got {threshold!r}")
            # thresholds decrease: rows at or above t are a prefix
            row = int(np.searchsorted(-self.thresholds, -t, side="right")) - 1
            return self._point(row, t)
        from ._validate import check_probability

        target = check_probability(recall if recall is not None else precision, given[0], open_low=False)
        if recall is not None:
            reached = np.flatnonzero(self.recall >= target)
            if reached.size == 0:
                raise ValueError(
                    f"`recall` {target:g} is never reached; the highest recall is {float(self.recall[-1]):g}"
                )
            return self._point(int(reached[0]))
        ok = np.flatnonzero(self.precision >= target)
        if ok.size == 0:
            raise ValueError(
                f"`precision` {target:g} is never reached; the highest precision is {float(self.precision.max()):g}"
            )
        best_recall = self.recall[ok].max()
        return self._point(int(ok[self.recall[ok] == best_recall][0]))

    def ap_terms(self, method: str = "step", *, recall_grid: str = "reference") -> Any:
        """The terms that sum to this table's AP by ``method`` (:class:`precall.scores.APTerms`)."""
        from .scores import ap_terms_from_steps

        return ap_terms_from_steps(self.steps(), method=method, recall_grid=recall_grid)

    @property
    def precision_envelope(self) -> np.ndarray:
        """The best precision at this row's recall or beyond (VOC's interpolated precision)."""
        p = self.precision
        return np.maximum.accumulate(p[::-1])[::-1]

    def plot(self, kind: str = "pr", *, ax: Any = None, label: str = "model", **kwargs: Any) -> Any:
        """Draw this table's PR curve (``kind="pr"``) or ROC curve (``"roc"``) with
        :mod:`precall.plot` (matplotlib, the ``plot`` extra); returns the Axes.

        ``kwargs`` go to :func:`precall.plot.draw_pr` (``method``, ``envelope``,
        ``eleven_point``, ``baseline``) or :func:`precall.plot.draw_roc`
        (``shade``, ``max_fpr``).
        """
        from . import plot

        if kind not in ("pr", "roc"):
            raise ValueError(f"`kind` must be 'pr' or 'roc'; got {kind!r}")
        ax = plot._axes(ax)
        if kind == "pr":
            plot.setup_pr_axes(ax)
            plot.draw_pr(ax, self, label=label, **kwargs)
            ax.legend(loc="lower left", fontsize=8)
        else:
            plot.setup_roc_axes(ax)
            plot.draw_roc(ax, self, label=label, **kwargs)
            ax.legend(loc="lower right", fontsize=8)
        return ax

    def _columns(self) -> dict[str, np.ndarray]:
        cols: dict[str, np.ndarray] = {}
        if self.ties == "stable":
            cols["rank"] = np.arange(1, len(self) + 1)
        cols["threshold"] = self.thresholds
        cols["tp"] = self.tp
        cols["fp"] = self.fp
        cols["fn"] = self.fn
        cols["tn"] = self.tn
        cols["precision"] = self.precision
        cols["recall"] = self.recall
        cols["fpr"] = self.fpr
        return cols

    def to_text(self, max_rows: int | None = 20) -> str:
        """Render the table as aligned text, like the seeds' rank tables.

        Parameters
        ----------
        max_rows : int or None, default=20
            Show at most this many rows (the first and last halves); None shows all.
        """
        cols = self._columns()
        n = len(self)
        if max_rows is None or n <= max_rows:
            rows = list(range(n))
            cut = None
        else:
            head = max(1, max_rows // 2)
            tail = max(1, max_rows - head)
            rows = list(range(head)) + list(range(n - tail, n))
            cut = head
        cells = [[_fmt(cols[c][i].item()) for c in cols] for i in rows]
        if cut is not None:
            cells.insert(cut, ["..."] * len(cols))
        header = list(cols)
        widths = [max(len(h), *(len(r[j]) for r in cells)) for j, h in enumerate(header)]
        lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths))]
        lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells]
        summary = (
            f"ThresholdTable: {n} rows (ties={self.ties!r}), "
            f"n_pos={_fmt(self.n_pos)}, n_neg={_fmt(self.n_neg)}"
        )
        return summary + "\n" + "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return (
            f"ThresholdTable(n_rows={len(self)}, n_pos={_fmt(self.n_pos)}, "
            f"n_neg={_fmt(self.n_neg)}, ties={self.ties!r})"
        )

    def to_pandas(self) -> Any:
        """The table as a :class:`pandas.DataFrame` (needs the ``pandas`` extra)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError(
                "ThresholdTable.to_pandas needs pandas; install it with "
                "`pip install 'precall[pandas]'`"
            ) from None
        return pd.DataFrame(self._columns())
