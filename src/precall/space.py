"""PR space, ROC space and class imbalance.

Davis & Goadrich (ICML 2006, Theorem 3.1): for a data set of ``P`` positives
and ``N`` negatives, an operating point is one pair of counts (TP, FP), so it
is one point in ROC space ``(FP / N, TP / P)`` and one point in PR space
``(TP / P, TP / (TP + FP))``: the two curves of a model correspond one to one
(:func:`pr_from_roc`, :func:`roc_from_pr`).  The ROC point does not depend on
the class ratio; the PR point does, which is why the same model has a
different PR curve and AP at another prevalence
(:meth:`precall.ThresholdTable.at_prevalence`).

What a PR number should be read against:

* the **baseline**: a random ranking has expected precision equal to the
  prevalence ``pi = P / (P + N)`` at every recall;
* the **unachievable region** (Boyd, Santos Costa, Davis & Page, ICML 2012,
  "Unachievable region in precision-recall space and its effect on empirical
  evaluation"): at recall ``r`` no ranking has precision below
  ``r P / (r P + N)`` (all negatives ranked first), :func:`min_precision`;
  hence a minimum AP for the class counts, :func:`min_average_precision`,
  and the AP normalised by it, ``(AP - AP_min) / (1 - AP_min)``;
* **precision-recall gain** (Flach & Kull, NeurIPS 2015): precision and recall
  rescaled harmonically so that the always-positive classifier is at 0 and a
  perfect one at 1, :func:`precision_recall_gain_curve` and :func:`auprg`.

The minimum AP of each convention
=================================

For unit-weight positives (``n_pos`` a count) and negatives of total weight
``n_neg``, the minimum over every ranking (every assignment of scores) is
reached by ranking every negative above every positive.  Checked against
brute force over all orderings (and all tie patterns) of small class counts in
the tests.

============  ======================================================  ===============================
method        minimum                                                 reached by
============  ======================================================  ===============================
step          ``(1/P) sum_{i=1..P} i / (i + N)`` (Boyd et al.)        negatives first, any order
voc2007       ``pi`` (the envelope is ``pi`` at every recall)         negatives first
voc2010       ``pi``                                                  negatives first
coco          ``P / (P + N + eps)`` (pycocotools' precision)          negatives first
trapezoid     ``pi / 2`` with ``ties="group"`` (one tied run of all   negatives first, then every
              positives: the trapezoid joins precision 0 to ``pi``);  positive tied (group); else
              with ``ties="stable"`` the step formula's trapezoid      negatives first
interpolated  ``1 - (N/P) log(1 + P/N)`` (the area under the minimum  negatives first
              precision curve, Davis & Goadrich's interpolation)
============  ======================================================  ===============================

(``N = 0``: every ranking has AP 1.)  The minimum is a property of counts.
Sample weights are read as repeated rows: whole weights on the positives count
as that many positives; with fractional positive weights there is no count,
the minimum depends on how the weight is split, and it is reported as NaN.
The negatives' weight may be anything (only its total matters).  For
detection tables (``n_pos`` larger than the final TP) the bound assumes every
positive is ranked; ground truths never detected can take the AP below it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._core import conventions
from ._core.evaluation import auprg as auprg_of_steps
from ._core.evaluation import gains, normalized_average_precision
from ._core.steps import reweight, steps_of
from ._core.undefined import undefined
from ._core.validate import (MAX_ALLOCATION_BYTES, check_binary, check_bool, check_count, check_number,
                             check_on_undefined)
from .table import ThresholdTable, table_of

__all__ = [
    "PrecisionRecallGainCurve",
    "PrecisionRecallPoints",
    "RocPoints",
    "auprg",
    "min_average_precision",
    "min_precision",
    "normalized_average_precision",
    "pr_from_roc",
    "precision_recall_gain_curve",
    "roc_from_pr",
]


class PrecisionRecallPoints(NamedTuple):
    """Operating points in PR space."""

    precision: np.ndarray
    recall: np.ndarray


class RocPoints(NamedTuple):
    """Operating points in ROC space."""

    fpr: np.ndarray
    tpr: np.ndarray


class PrecisionRecallGainCurve(NamedTuple):
    """The precision-recall-gain curve where recall gain is in [0, 1] (increasing).

    ``thresholds`` is NaN at the first point when it is the interpolated
    crossing of recall gain 0 (between two thresholds).
    """

    precision_gain: np.ndarray
    recall_gain: np.ndarray
    thresholds: np.ndarray


# ---------------------------------------------------------------------------
# checks
def _unit_interval(x: Any, name: str) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype.kind not in "iuf" or a.dtype.kind == "f" and a.dtype.itemsize > 8:
        raise TypeError(f"`{name}` must be an array of numbers; got dtype {a.dtype}")
    a = np.atleast_1d(a.astype(np.float64))
    if a.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D; got shape {a.shape}")
    bad = ~((a >= 0) & (a <= 1))  # also NaN
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"`{name}` must be rates in [0, 1]; got {float(a[i])!r} at index {i}")
    return a


def _pair(x: Any, y: Any, x_name: str, y_name: str) -> tuple[np.ndarray, np.ndarray]:
    a, b = _unit_interval(x, x_name), _unit_interval(y, y_name)
    if a.shape != b.shape:
        raise ValueError(f"`{x_name}` and `{y_name}` must have the same length; got {a.size} and {b.size}")
    return a, b


def _class_totals(n_pos: Any, n_neg: Any) -> tuple[float, float]:
    return check_count(n_pos, "n_pos", positive=True), check_count(n_neg, "n_neg", positive=True)


# ---------------------------------------------------------------------------
# the correspondence
def _dg_points(tp: np.ndarray, fp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Davis & Goadrich's interpolation: between consecutive points A and B, one
    point per positive, ``TP = x`` and ``FP = FP_A + (x - TP_A)(FP_B - FP_A)/(TP_B - TP_A)``."""
    d = np.diff(tp)
    whole = np.round(d)
    d = np.where(np.abs(d - whole) <= 1e-9 * np.maximum(1.0, whole), whole, d)  # float noise of tpr * P
    added = float(np.maximum(np.ceil(d) - 1, 0).sum())  # checked before the points are made (about 40 bytes each)
    if added * 40 > MAX_ALLOCATION_BYTES:
        raise ValueError(f"interpolate would add {added:.4g} points (one per positive between the given points), "
                         f"more than {MAX_ALLOCATION_BYTES // 40:,} (8 GiB): rescale n_pos and n_neg (the points' "
                         "precision depends on their ratio) or leave out interpolate")
    n_mid = np.maximum(np.ceil(d) - 1, 0).astype(np.int64)
    total = tp.size + int(n_mid.sum())
    if total == tp.size:
        return tp, fp
    # each original point, preceded by the intermediate points of the segment ending at it
    seg = np.repeat(np.arange(d.size), n_mid)
    j = np.arange(seg.size) - np.repeat(np.cumsum(n_mid) - n_mid, n_mid) + 1.0
    x = tp[seg] + j
    f = fp[seg] + j * (fp[seg + 1] - fp[seg]) / d[seg]
    where_points = np.arange(tp.size) + np.concatenate([[0], np.cumsum(n_mid)])
    out_tp, out_fp = np.empty(total), np.empty(total)
    out_tp[where_points], out_fp[where_points] = tp, fp
    mid = np.ones(total, dtype=bool)
    mid[where_points] = False
    out_tp[mid], out_fp[mid] = x, f
    return out_tp, out_fp


def pr_from_roc(
    fpr: Any, tpr: Any, *, n_pos: float, n_neg: float, interpolate: bool = False
) -> PrecisionRecallPoints:
    """Map ROC points to PR points for a data set of ``n_pos`` positives and ``n_neg`` negatives.

    Davis & Goadrich's Theorem 3.1: the point ``(fpr, tpr)`` has counts
    ``TP = tpr * n_pos`` and ``FP = fpr * n_neg``, hence recall ``tpr`` and
    precision ``TP / (TP + FP)``.  At the origin (nothing predicted positive)
    precision is set to 1, scikit-learn's convention for its final PR point.

    Parameters
    ----------
    fpr, tpr : array-like of shape (n_points,)
        False and true positive rates in [0, 1].
    n_pos, n_neg : float
        Total positive and negative weight (> 0).  Only their ratio matters,
        but for ``interpolate``, which adds a point per positive.
    interpolate : bool, default=False
        Davis & Goadrich's interpolation for sparse points: between consecutive
        points A and B (in increasing order) add one point per positive,
        ``TP = x`` for ``x = TP_A + 1, TP_A + 2, ... < TP_B`` and
        ``FP = FP_A + (x - TP_A) (FP_B - FP_A) / (TP_B - TP_A)``: the ROC
        segment is straight, the PR curve between A and B is not.  The
        points must then be in ROC order (both rates non-decreasing).  The area
        under this curve is ``average_precision(method="interpolated")``.

    Returns
    -------
    PrecisionRecallPoints
        ``(precision, recall)``, in the order of the input.

    See Also
    --------
    roc_from_pr : the inverse map.
    average_precision : ``method="interpolated"`` integrates the interpolated curve.

    Examples
    --------
    >>> import precall
    >>> p, r = precall.pr_from_roc([0.0, 0.25, 0.5], [0.5, 0.5, 1.0], n_pos=2, n_neg=4)
    >>> p
    array([1. , 0.5, 0.5])
    >>> r
    array([0.5, 0.5, 1. ])
    >>> precall.pr_from_roc([0.0, 1.0], [0.0, 1.0], n_pos=3, n_neg=3, interpolate=True).precision
    array([1. , 0.5, 0.5, 0.5])
    """
    fpr, tpr = _pair(fpr, tpr, "fpr", "tpr")
    p, n = _class_totals(n_pos, n_neg)
    interpolate = check_bool(interpolate, "interpolate")
    tp, fp = tpr * p, fpr * n
    if interpolate:
        if (np.diff(fpr) < 0).any() or (np.diff(tpr) < 0).any():
            raise ValueError(
                "`fpr` and `tpr` must be non-decreasing with interpolate=True (points in ROC order); "
                "sort the points by threshold, decreasing"
            )
        tp, fp = _dg_points(tp, fp)
    ps = tp + fp
    precision = np.divide(tp, ps, out=np.ones_like(tp), where=ps > 0)
    return PrecisionRecallPoints(precision, np.minimum(tp / p, 1.0))


_UNACHIEVABLE_TOLERANCE = 1e-9


def roc_from_pr(precision: Any, recall: Any, *, n_pos: float, n_neg: float) -> RocPoints:
    """Map PR points to ROC points for a data set of ``n_pos`` positives and ``n_neg`` negatives.

    The inverse of :func:`pr_from_roc`: ``TP = recall * n_pos``, ``FP = TP (1 -
    precision) / precision``, ``fpr = FP / n_neg``, ``tpr = recall``.  At recall
    0 the point is the origin when precision > 0 (scikit-learn's final point has
    precision 1); precision 0 at recall 0 (only negatives predicted positive)
    leaves FP unknown, and ``fpr`` is NaN there.

    Parameters
    ----------
    precision, recall : array-like of shape (n_points,)
        In [0, 1].
    n_pos, n_neg : float
        Total positive and negative weight (> 0).

    Returns
    -------
    RocPoints
        ``(fpr, tpr)``, in the order of the input.

    Raises
    ------
    ValueError
        For a point no ranking of these counts reaches: precision 0 with
        recall > 0, or precision below ``recall * n_pos / (recall * n_pos +
        n_neg)`` (the unachievable region; FPR would exceed 1).

    See Also
    --------
    pr_from_roc : the inverse map.
    min_precision : the unachievable region.

    Examples
    --------
    >>> import precall
    >>> fpr, tpr = precall.roc_from_pr([1.0, 0.5, 0.5], [0.5, 0.5, 1.0], n_pos=2, n_neg=4)
    >>> fpr
    array([0.  , 0.25, 0.5 ])
    """
    precision, recall = _pair(precision, recall, "precision", "recall")
    p, n = _class_totals(n_pos, n_neg)
    tp = recall * p
    found = recall > 0
    bad = found & (precision == 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"`precision` is 0 at index {i} with recall {float(recall[i])!r} > 0: no operating point has "
            "true positives and precision 0"
        )
    fp = np.zeros_like(tp)
    np.divide(tp * (1.0 - precision), precision, out=fp, where=found)
    fpr = fp / n
    over = fpr > 1.0 + _UNACHIEVABLE_TOLERANCE
    if over.any():
        i = int(np.flatnonzero(over)[0])
        floor = float(min_precision(recall[i], n_pos=p, n_neg=n))
        raise ValueError(
            f"`precision` {float(precision[i])!r} at recall {float(recall[i])!r} (index {i}) is below {floor!r}, the "
            f"lowest precision any ranking of n_pos={p:g}, n_neg={n:g} reaches at that recall "
            "(the unachievable region); check the counts"
        )
    fpr = np.minimum(fpr, 1.0)
    fpr[~found & (precision == 0)] = np.nan
    return RocPoints(fpr, recall.copy())


# ---------------------------------------------------------------------------
# the unachievable region and the minimum AP
def min_precision(recall: Any, *, n_pos: float, n_neg: float) -> np.ndarray:
    """The lowest precision any ranking reaches at ``recall``: ``r P / (r P + N)``.

    Reached by ranking every negative above the positives (Boyd et al. 2012);
    the area below this curve is the unachievable region of PR space.

    Parameters
    ----------
    recall : array-like
        Recalls in [0, 1].
    n_pos : float
        Total positive weight (> 0).
    n_neg : float
        Total negative weight (>= 0).

    Returns
    -------
    ndarray
        The same shape as ``recall`` (0 at recall 0).

    See Also
    --------
    min_average_precision : the area under this edge, by convention.
    plot.draw_unachievable : shades the region.

    Examples
    --------
    >>> import precall
    >>> precall.min_precision([0.0, 0.5, 1.0], n_pos=10, n_neg=90)
    array([0.        , 0.05263158, 0.1       ])
    """
    if np.ndim(recall) == 0:  # one recall: an option, checked as every numeric option is
        recall = check_number(recall, "recall", low=0, high=1)
    r = np.asarray(recall)
    flat = _unit_interval(r.ravel(), "recall")
    p = check_count(n_pos, "n_pos", positive=True)
    n = check_count(n_neg, "n_neg")
    tp = flat * p
    out = np.divide(tp, tp + n, out=np.zeros_like(tp), where=tp > 0)
    return out.reshape(r.shape)


def min_average_precision(
    n_pos: float, n_neg: float, *, method: str = "step", ties: str = "group", recall_grid: str = "reference"
) -> float:
    """The smallest AP any ranking of ``n_pos`` positives and ``n_neg`` negatives can get.

    For ``method="step"`` this is Boyd et al.'s (2012) minimum,
    ``(1/P) sum_{i=1..P} i / (i + N)``, reached by ranking every negative first;
    the other conventions' minima are in the table of :mod:`precall.space`.
    With 10 positives and 90 negatives the step AP cannot go below 0.0567,
    not 0 (a random ranking gets about the prevalence, 0.1).

    Parameters
    ----------
    n_pos : int
        The number of positives (a whole number >= 1, unit weights).
    n_neg : float
        The total negative weight (>= 0; need not be whole, e.g. after
        :meth:`~precall.ThresholdTable.at_prevalence`).
    method : str, default="step"
        The AP convention (:data:`precall.AP_METHODS`).
    ties : {"group", "stable"}, default="group"
        The tie rule the AP is computed with: only ``"trapezoid"`` depends on
        it (tying every positive lowers its minimum to ``pi / 2``).
    recall_grid : {"reference", "exact"}, default="reference"
        As in :func:`precall.average_precision`.

    Returns
    -------
    float

    See Also
    --------
    min_precision : the unachievable region's edge at each recall.
    normalized_average_precision : the AP rescaled by this minimum.

    Examples
    --------
    >>> import precall
    >>> round(precall.min_average_precision(10, 90), 4)
    0.0567
    >>> precall.min_average_precision(2, 2, method="voc2010")
    0.5
    """
    return conventions.min_average_precision(n_pos, n_neg, method, ties, recall_grid)


def prg_curve_from_table(table: ThresholdTable) -> PrecisionRecallGainCurve:
    """The PRG curve of a table's grouped rows (see :func:`precision_recall_gain_curve`)."""
    t = table.grouped()
    p, n = t.n_pos, t.n_neg
    if p <= 0 or n <= 0:
        raise ValueError(
            f"the precision-recall-gain curve needs both classes; got n_pos={p:g}, n_neg={n:g}"
        )
    tp = np.concatenate([[0.0], t.tp.astype(np.float64)])
    fp = np.concatenate([[0.0], t.fp.astype(np.float64)])
    thresholds = np.concatenate([[np.inf], t.thresholds.astype(np.float64)])
    t0 = p * (p / (p + n))
    # a row whose TP equals P^2 / (P + N) up to rounding (weights, prevalence) lies on
    # recall gain 0: it is the curve's first point, with no crossing added before it
    on_zero = np.abs(tp - t0) <= 1e-12 * t0
    kept = np.flatnonzero((tp >= t0) | on_zero)
    if kept.size == 0:  # recall never reaches the prevalence (detection)
        empty = np.zeros(0)
        return PrecisionRecallGainCurve(empty, empty, empty)
    first = int(kept[0])
    x, f, thr = tp[kept], fp[kept], thresholds[kept]
    if not on_zero[first]:  # add the crossing of recall gain 0 on the segment from the row above
        a, fa = tp[first - 1], fp[first - 1]
        f0 = fa + (t0 - a) / (tp[first] - a) * (fp[first] - fa)
        x, f, thr = np.r_[t0, x], np.r_[f0, f], np.r_[np.nan, thr]
    else:
        x = x.copy()
        x[0] = t0
    rg, pg = gains(x, f, p, n)
    rg[0] = 0.0  # TP = t0 is recall gain 0 by construction (its formula gave -2.2e-16)
    return PrecisionRecallGainCurve(pg, rg, thr)


def precision_recall_gain_curve(
    y_true: Any, y_score: Any, *, sample_weight: Any = None, pos_label: Any = None, prevalence: float | None = None
) -> PrecisionRecallGainCurve:
    """Flach & Kull's precision-recall-gain curve, where recall gain is in [0, 1].

    With prevalence ``pi``, precision gain ``(prec - pi) / ((1 - pi) prec)``
    and recall gain ``(rec - pi) / ((1 - pi) rec)``: the always-positive
    classifier is at (1, 0), a perfect one reaches (1, 1).  One point per
    distinct score (ties grouped, as the authors' ``prg`` package), in
    decreasing threshold order; points with recall gain < 0 (recall below the
    prevalence) are cut and the curve starts at its crossing of recall gain 0,
    interpolated on the straight ROC segment (as ``prg``).  Precision gain can
    be negative (precision below the prevalence).

    Parameters
    ----------
    y_true, y_score, sample_weight, pos_label
        As in :func:`precall.precision_recall_curve`.
    prevalence : float in [1e-300, 1), default=None
        Evaluate at this prevalence (:meth:`~precall.ThresholdTable.at_prevalence`).

    Returns
    -------
    PrecisionRecallGainCurve
        ``(precision_gain, recall_gain, thresholds)``.

    See Also
    --------
    auprg : its area.
    precision_recall_curve : the curve in PR space.

    Examples
    --------
    >>> import precall
    >>> pg, rg, thr = precall.precision_recall_gain_curve([1, 1, 0, 0, 1, 0], [0.8, 0.8, 0.6, 0.4, 0.4, 0.2])
    >>> rg
    array([0. , 0.5, 0.5, 1. , 1. ])
    >>> pg.round(4)
    array([1.    , 1.    , 0.5   , 0.3333, 0.    ])
    """
    table = table_of(check_binary(y_true, y_score, sample_weight, pos_label), "group")
    if prevalence is not None:
        table = table.at_prevalence(prevalence)
    return prg_curve_from_table(table)


def auprg(
    y_true: Any,
    y_score: Any,
    *,
    sample_weight: Any = None,
    pos_label: Any = None,
    prevalence: float | None = None,
    on_undefined: Any = "warn",
) -> float:
    """Area under the precision-recall-gain curve (Flach & Kull, NeurIPS 2015).

    The trapezoidal area under :func:`precision_recall_gain_curve` (no convex
    hull) over recall gain in [0, 1], parts with negative precision gain
    counted negatively: ``calc_auprg`` of the authors' ``prg`` package.  0.5
    is not "random" here: the always-positive classifier has AUPRG 0, and a
    random ranking about 0 too (it sits near precision gain 0).  Keras'
    thresholded ``AUC`` approximations bucket the scores and are not this.

    Parameters
    ----------
    y_true, y_score, sample_weight, pos_label, prevalence
        As in :func:`precision_recall_gain_curve`.
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        When a class is missing (no gain is defined): NaN with an
        :class:`~precall.UndefinedMetricWarning` by default.

    Returns
    -------
    float

    See Also
    --------
    precision_recall_gain_curve : the curve whose area this is.
    evaluate : AUPRG with every AP convention.

    Examples
    --------
    >>> import precall
    >>> round(precall.auprg([1, 1, 0, 0, 1, 0], [0.8, 0.8, 0.6, 0.4, 0.4, 0.2]), 7)  # prg's example
    0.7083333
    """
    policy = check_on_undefined(on_undefined)
    steps = steps_of(check_binary(y_true, y_score, sample_weight, pos_label), "group")
    if steps.n_pos[0] <= 0 or steps.n_neg[0] <= 0:
        return undefined(
            "AUPRG", "precision-recall gain needs both classes in y_true; AUPRG is undefined "
            "(NaN). Choose another result with on_undefined='raise' or a number", float("nan"), policy,
        )
    if prevalence is not None:
        steps = reweight(steps, prevalence)
    return auprg_of_steps(steps)
