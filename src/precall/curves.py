"""Curves from the count table: precision-recall, ROC and DET.

Each function returns the same arrays as scikit-learn 1.9's function of the
same name (same sentinel points, same order, same dtypes), as a NamedTuple so
``p, r, t = precall.precision_recall_curve(y, s)`` works as a drop-in.  The
``*_from_counts`` functions read a count table's columns (thresholds, TP, FP,
totals), so :class:`precall.ThresholdTable` and the public functions share them.
The curves' ``plot`` methods are attached by the package (:mod:`precall`), which draws
with :mod:`precall.plot` when one is called: nothing here imports the presentation layer.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np

from ._core.sort import table_arrays
from ._core.steps import reweighting
from ._core.undefined import UndefinedMetricWarning
from ._core.validate import check_binary, check_bool

__all__ = [
    "DetCurve",
    "PrecisionRecallCurve",
    "RocCurve",
    "det_curve",
    "precision_recall_curve",
    "roc_curve",
]


class PrecisionRecallCurve(NamedTuple):
    """Precision and recall at every threshold (recall decreasing).

    The last point (recall 0, precision 1) has no threshold, as in scikit-learn.
    """

    precision: np.ndarray
    recall: np.ndarray
    thresholds: np.ndarray



class RocCurve(NamedTuple):
    """False and true positive rates at every kept threshold (increasing FPR).

    The first threshold is ``+inf``: nothing is predicted positive.
    """

    fpr: np.ndarray
    tpr: np.ndarray
    thresholds: np.ndarray



class DetCurve(NamedTuple):
    """False positive and false negative rates (decreasing FPR)."""

    fpr: np.ndarray
    fnr: np.ndarray
    thresholds: np.ndarray


def _keep_corners(keep_where: np.ndarray) -> np.ndarray:
    """Indices of rows to keep: first, last, and those flagged in between."""
    return np.flatnonzero(np.concatenate([[True], keep_where, [True]]))


def _tp_changes(tp: np.ndarray) -> np.ndarray:
    # keep a row when tp changes from the previous or to the next row
    return np.logical_or(np.diff(tp[:-1]), np.diff(tp[1:]))


def pr_curve_from_counts(
    thresholds: np.ndarray, tp: np.ndarray, fp: np.ndarray, n_pos: float, *, drop_intermediate: bool = False
) -> PrecisionRecallCurve:
    """The precision-recall curve of a count table (see :func:`precision_recall_curve`)."""
    tp = tp.astype(np.float64)
    fp = fp.astype(np.float64)
    if drop_intermediate and fp.shape[0] > 2:
        idx = _keep_corners(_tp_changes(tp))
        tp, fp, thresholds = tp[idx], fp[idx], thresholds[idx]
    ps = tp + fp
    precision = np.where(ps != 0, tp / np.where(ps != 0, ps, 1.0), 0.0)
    if n_pos == 0:
        warnings.warn(
            "No positive class found in y_true, recall is set to one for all thresholds.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        recall = np.ones_like(tp)
    else:
        recall = tp / n_pos
    return PrecisionRecallCurve(
        np.concatenate([precision[::-1], [1.0]]),
        np.concatenate([recall[::-1], [0.0]]),
        np.ascontiguousarray(thresholds[::-1]),
    )


def roc_curve_from_counts(
    thresholds: np.ndarray, tp: np.ndarray, fp: np.ndarray, n_pos: float, n_neg: float, *,
    drop_intermediate: bool = True,
) -> RocCurve:
    """The ROC curve of a count table (see :func:`roc_curve`)."""
    tp = tp.astype(np.float64)
    fp = fp.astype(np.float64)
    if drop_intermediate and fp.shape[0] > 2:
        idx = _keep_corners(np.logical_or(np.diff(fp, 2), np.diff(tp, 2)))
        tp, fp, thresholds = tp[idx], fp[idx], thresholds[idx]
    tp = np.concatenate([[0.0], tp])
    fp = np.concatenate([[0.0], fp])
    thresholds = np.concatenate([[np.inf], thresholds.astype(np.float64)])
    if n_neg <= 0:
        warnings.warn(
            "No negative samples in y_true, false positive value should be meaningless",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        fpr = np.full(fp.shape, np.nan)
    else:
        fpr = fp / n_neg
    if n_pos <= 0:
        warnings.warn(
            "No positive samples in y_true, true positive value should be meaningless",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        tpr = np.full(tp.shape, np.nan)
    else:
        tpr = tp / n_pos
    return RocCurve(fpr, tpr, thresholds)


def det_curve_from_counts(
    thresholds: np.ndarray, tp: np.ndarray, fp: np.ndarray, n_pos: float, n_neg: float, *,
    drop_intermediate: bool = False,
) -> DetCurve:
    """The DET curve of a count table (see :func:`det_curve`)."""
    tp = np.concatenate([[0.0], tp.astype(np.float64)])
    fp = np.concatenate([[0.0], fp.astype(np.float64)])
    thresholds = np.concatenate([[np.inf], thresholds.astype(np.float64)])
    if drop_intermediate and fp.shape[0] > 2:
        idx = _keep_corners(_tp_changes(tp))
        tp, fp, thresholds = tp[idx], fp[idx], thresholds[idx]
    if n_pos == 0 or n_neg == 0:
        raise ValueError(
            "Only one class is present in y_true. Detection error tradeoff curve is "
            "not defined in that case."
        )
    fn = n_pos - tp
    first = np.searchsorted(fp, fp[0], side="right")
    start = first - 1 if first > 0 else None
    stop = np.searchsorted(tp, tp[-1]) + 1
    sl = slice(start, stop)
    return DetCurve(fp[sl][::-1] / n_neg, fn[sl][::-1] / n_pos, thresholds[sl][::-1])


def precision_recall_curve(
    y_true: Any,
    y_score: Any,
    *,
    pos_label: Any = None,
    sample_weight: Any = None,
    drop_intermediate: bool = False,
    prevalence: float | None = None,
) -> PrecisionRecallCurve:
    """Precision-recall pairs at every distinct score; scikit-learn's curve.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels; {0, 1}, {-1, 1}, bool, or any labels with ``pos_label``.
    y_score : array-like of shape (n_samples,)
        Scores; higher means more likely positive.
    pos_label : int, float, bool or str, default=None
        The positive label.  None means 1, allowed only when the labels are a
        subset of {0, 1} or {-1, 1}.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.  Zero-weight samples add no threshold.
    drop_intermediate : bool, default=False
        Drop the rows where TP does not change from the rows on both sides.
    prevalence : float in [1e-300, 1), default=None
        The curve if positives made up this share of the data: the negatives
        are reweighted by ``(1 - pi) / pi * n_pos / n_neg``
        (:meth:`ThresholdTable.at_prevalence`).  Recall does not change,
        precision does.

    Returns
    -------
    PrecisionRecallCurve
        ``(precision, recall, thresholds)``: recall decreasing, with the final
        point (recall 0, precision 1) that has no threshold.

    See Also
    --------
    average_precision : the area under it, by convention.
    ThresholdTable.precision_recall_curve : the same from a table.

    Examples
    --------
    >>> import precall
    >>> p, r, t = precall.precision_recall_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> p
    array([0.5       , 0.66666667, 0.5       , 1.        , 1.        ])
    >>> r
    array([1. , 1. , 0.5, 0.5, 0. ])
    >>> t
    array([0.1 , 0.35, 0.4 , 0.8 ])
    """
    drop_intermediate = check_bool(drop_intermediate, "drop_intermediate")
    thresholds, tp, fp, n_pos, n_neg = table_arrays(check_binary(y_true, y_score, sample_weight, pos_label), "group")
    if prevalence is not None:
        r = reweighting(n_pos, n_neg, prevalence)
        fp, tp, n_pos = r.negatives(fp), r.positives(tp), r.n_pos_at
    return pr_curve_from_counts(thresholds, tp, fp, n_pos, drop_intermediate=drop_intermediate)


def roc_curve(
    y_true: Any,
    y_score: Any,
    *,
    pos_label: Any = None,
    sample_weight: Any = None,
    drop_intermediate: bool = True,
) -> RocCurve:
    """Receiver operating characteristic; scikit-learn's curve.

    Parameters
    ----------
    y_true, y_score, pos_label, sample_weight
        As in :func:`precision_recall_curve`.
    drop_intermediate : bool, default=True
        Drop thresholds whose point lies on a straight line between its
        neighbours (they do not change the curve or its area).

    Returns
    -------
    RocCurve
        ``(fpr, tpr, thresholds)`` starting at (0, 0) with threshold ``+inf``.

    See Also
    --------
    roc_auc : the area under it.
    ThresholdTable.roc_curve : the same from a table.

    Examples
    --------
    >>> import precall
    >>> fpr, tpr, thr = precall.roc_curve([1, 1, 2, 2], [0.1, 0.4, 0.35, 0.8], pos_label=2)
    >>> fpr
    array([0. , 0. , 0.5, 0.5, 1. ])
    >>> tpr
    array([0. , 0.5, 0.5, 1. , 1. ])
    >>> thr
    array([ inf, 0.8 , 0.4 , 0.35, 0.1 ])
    """
    drop_intermediate = check_bool(drop_intermediate, "drop_intermediate")
    counts = table_arrays(check_binary(y_true, y_score, sample_weight, pos_label), "group")
    return roc_curve_from_counts(*counts, drop_intermediate=drop_intermediate)


def det_curve(
    y_true: Any,
    y_score: Any,
    *,
    pos_label: Any = None,
    sample_weight: Any = None,
    drop_intermediate: bool = False,
) -> DetCurve:
    """Detection error tradeoff: false positive and false negative rates.

    Parameters
    ----------
    y_true, y_score, pos_label, sample_weight
        As in :func:`precision_recall_curve`.
    drop_intermediate : bool, default=False
        Drop thresholds where TP does not change from both neighbours.

    Returns
    -------
    DetCurve
        ``(fpr, fnr, thresholds)`` with FPR decreasing.

    Raises
    ------
    ValueError
        When ``y_true`` has a single class (the curve is undefined).

    See Also
    --------
    roc_curve : the same operating points in ROC space.

    Examples
    --------
    >>> import precall
    >>> fpr, fnr, thr = precall.det_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> fpr
    array([0.5, 0.5, 0. ])
    >>> fnr
    array([0. , 0.5, 0.5])
    """
    drop_intermediate = check_bool(drop_intermediate, "drop_intermediate")
    counts = table_arrays(check_binary(y_true, y_score, sample_weight, pos_label), "group")
    return det_curve_from_counts(*counts, drop_intermediate=drop_intermediate)
