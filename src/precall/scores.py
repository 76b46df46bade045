"""Scalar metrics: every average-precision convention by name, and ROC-AUC.

All of them are computed from the *steps* of the count table (the rows where TP
increases, with the FP count at the row and just above it): recall changes only
there, and precision is highest there within a run of equal TP, so the area,
envelope, interpolation and ROC formulas need nothing else.

The conventions
===============

Notation: the operating points are ranked by decreasing threshold; at point
``k`` the cumulative weights are ``TP_k`` and ``FP_k``, ``P`` is the total
positive weight (``n_pos``), ``R_k = TP_k / P``, ``P_k = TP_k / (TP_k + FP_k)``.
With ``ties="group"`` a point is a distinct score (scikit-learn); with
``ties="stable"`` a point is one sample, equal scores in input order (the
seeds' rank tables, Detectron's ``voc_eval``, pycocotools).

.. list-table::
   :header-rows: 1

   * - name
     - formula
     - sentinels, grid
     - used by
   * - ``step``
     - ``sum_k (R_k - R_{k-1}) P_k``, no interpolation
     - none
     - scikit-learn ``average_precision_score``; TREC "average precision"
   * - ``voc2007``
     - ``(1/11) sum_{t in grid} max{P_k : R_k >= t}`` (0 when no ``R_k >= t``)
     - grid ``np.arange(0., 1.1, 0.1)`` (``recall_grid="reference"``) or the
       exact ``k/10``
     - PASCAL VOC 2007 devkit, Detectron ``voc_ap(use_07_metric=True)``
   * - ``voc2010``
     - area under the precision envelope ``max{P_j : R_j >= r}``
     - points (0, 0) in front and (1, 0) at the end; rectangles where recall changes
     - PASCAL VOC 2010+ devkit, Detectron ``voc_ap`` (seeds 000 / 003)
   * - ``coco``
     - mean over 101 recall thresholds ``r`` of the envelope at the first point with
       ``R_k >= r`` (0 past the last recall), precision ``TP/(TP+FP+eps)``
     - grid ``np.linspace(0, 1, 101)`` (reference) or exact ``k/100``;
       ``eps = np.spacing(1)`` as pycocotools
     - pycocotools ``COCOeval.accumulate``, torchmetrics, Ultralytics (COCO mode)
   * - ``trapezoid``
     - trapezoidal area under the PR points, starting at (R 0, P 1)
     - scikit-learn's final point (recall 0, precision 1)
     - ``sklearn.metrics.auc(recall, precision)``; seed 001's "too optimistic" PR-AUC
   * - ``interpolated``
     - Davis & Goadrich: between consecutive points TP grows by 1 per unit and FP by
       ``(FP_b - FP_a)/(TP_b - TP_a)``; the area of that curve in closed form
     - starts at (TP 0, FP 0)
     - PRROC ``auc.integral``, Keras ``AUC(curve="PR", summation_method="interpolation")``

Seed worked examples (``../shared/seeds/README.md``): scores
``[0.65, 0.1, 0.15, 0.43, 0.97, 0.24, 0.82, 0.7, 0.32, 0.84]`` with labels
``[0, 0, 1, 0, 1, 1, 0, 1, 1, 1]`` give step 0.768849, voc2010 0.791667, voc2007
0.803030, trapezoid 0.748016 and ROC-AUC 0.583333.

The recall grids
================

The reference codes build their grids in floating point: Detectron's
``np.arange(0., 1.1, 0.1)`` holds 0.30000000000000004 and 0.7000000000000001,
pycocotools' ``np.linspace`` holds 0.07000000000000001, and so on, so a recall
of exactly 3/10 does *not* reach the 0.3 threshold there.  ``recall_grid=
"reference"`` (the default) reproduces those grids, and so the reference
numbers to the last bit; ``recall_grid="exact"`` compares ``10 TP >= k P``
(``100 TP >= k P``), exact for integer counts.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ._counts import Steps, ThresholdTable, build_steps, build_table, reweight_steps
from ._validate import check_binary, check_choice, check_on_undefined, check_probability
from ._warnings import UndefinedMetricWarning
from .curves import roc_curve_from_table

__all__ = [
    "AP_METHODS",
    "APTerms",
    "CONVENTIONS",
    "Convention",
    "average_precision",
    "roc_auc",
]

RECALL_GRIDS: tuple[str, ...] = ("reference", "exact")
TIES: tuple[str, ...] = ("group", "stable")


@dataclass(frozen=True)
class Convention:
    """How one AP convention turns a PR curve into one number."""

    name: str
    summary: str
    formula: str
    sentinels: str
    used_by: str
    reference: str
    reference_ties: str
    seed_values: str


CONVENTIONS: dict[str, Convention] = {
    c.name: c
    for c in (
        Convention(
            "step",
            "precision at each recall step, weighted by the recall gained (no interpolation)",
            "sum_k (R_k - R_{k-1}) * P_k",
            "none",
            "scikit-learn average_precision_score",
            "scikit-learn User Guide, 'Precision, recall and F-measures'",
            "group: equal scores are one threshold",
            "seed 000/003 example 0.768849; seed 001 example 0.643849; seed 004 example 0.638889",
        ),
        Convention(
            "voc2007",
            "PASCAL VOC 11-point interpolated AP",
            "mean over t in {0, 0.1, ..., 1} of max{P_k : R_k >= t} (0 if none)",
            "grid np.arange(0., 1.1, 0.1) or exact k/10 (recall_grid)",
            "PASCAL VOC 2007 devkit, Detectron voc_ap(use_07_metric=True)",
            "Everingham et al., IJCV 88 (2010), sec. 4.2",
            "per detection; Detectron ranks with an unstable np.argsort(-score), so its tie "
            "order is arbitrary: precall's 'stable' (input order) is the reproducible choice",
            "seed 000/003 example 0.803030; seed 001 example 0.670307 (stable); seed 004 example 0.75",
        ),
        Convention(
            "voc2010",
            "area under the precision envelope (all points)",
            "sum over recall changes of (R_k - R_{k-1}) * max{P_j : R_j >= R_k}",
            "(0, 0) in front, (1, 0) at the end",
            "PASCAL VOC 2010+ devkit, Detectron voc_ap",
            "Everingham et al., PASCAL VOC 2012 development kit, sec. 3.4.1",
            "per detection, as voc2007",
            "seed 000/003 example 0.791667; seed 001 example 0.662067 (stable, the seed's 0.6621); "
            "seed 004 example 0.75",
        ),
        Convention(
            "coco",
            "COCO 101-point interpolated AP",
            "mean over r in {0, 0.01, ..., 1} of the envelope at the first R_k >= r (0 past the last recall)",
            "grid np.linspace(0, 1, 101) or exact k/100; precision TP/(TP+FP+eps)",
            "pycocotools COCOeval.accumulate",
            "Lin et al., 'Microsoft COCO', ECCV 2014; cocoapi cocoeval.py",
            "stable: np.argsort(-score, kind='mergesort') per image, then across images",
            "not in the seeds",
        ),
        Convention(
            "trapezoid",
            "trapezoidal area under the PR points (optimistic: linear interpolation)",
            "sum_k (R_k - R_{k-1}) * (P_{k-1} + P_k) / 2",
            "starts at scikit-learn's point (recall 0, precision 1)",
            "sklearn.metrics.auc(recall, precision)",
            "Davis & Goadrich, ICML 2006, sec. 4 (why it is optimistic)",
            "group, as scikit-learn's precision_recall_curve",
            "seed 000/003 example 0.748016 (seed 001 calls it too optimistic)",
        ),
        Convention(
            "interpolated",
            "Davis & Goadrich interpolation between operating points, integrated exactly",
            "integral of TP/(TP+FP) d(TP/P) with FP linear in TP between points",
            "starts at (TP 0, FP 0)",
            "PRROC auc.integral, Keras AUC(summation_method='interpolation')",
            "Davis & Goadrich, ICML 2006, sec. 4; Keilwagen et al., PLoS ONE 2014",
            "group: points are distinct thresholds",
            "not in the seeds",
        ),
    )
}

AP_METHODS: tuple[str, ...] = tuple(CONVENTIONS)


# ---------------------------------------------------------------------------
# undefined results
def undefined(metric: str, message: str, default: float, policy: Any, stacklevel: int = 4) -> float:
    """Apply the undefined-metric policy (see :func:`average_precision`)."""
    if policy == "warn":
        warnings.warn(message, UndefinedMetricWarning, stacklevel=stacklevel)
        return default
    if policy == "nan":
        return float("nan")
    if policy == "raise":
        raise ValueError(f"{metric} is undefined: {message}")
    return float(policy)


NO_POSITIVES = (
    "No positive class found in y_true, recall is set to one for all thresholds; "
    "average precision is undefined and reported as 0.0 (scikit-learn's convention). "
    "Choose another result with on_undefined='nan', 'raise' or a number"
)
ONE_CLASS_ROC = (
    "Only one class is present in y_true. ROC AUC score is not defined in that case. "
    "Choose another result than NaN with on_undefined='raise' or a number"
)


# ---------------------------------------------------------------------------
# kernels on the steps
def _precision(tp: np.ndarray, fp: np.ndarray) -> np.ndarray:
    return tp / (tp + fp)


def step_sum(s: Steps) -> float:
    """Sum of (positive weight x precision) over the steps: step AP times P."""
    return float(np.sum(s.dtp * _precision(s.tp.astype(np.float64), s.fp)))


def _ap_step(s: Steps) -> float:
    return step_sum(s) / s.n_pos


def _envelope(precision: np.ndarray) -> np.ndarray:
    """Running maximum from the right: the best precision at recall >= R_k."""
    return np.maximum.accumulate(precision[::-1])[::-1]


def _grid_points(s: Steps, n_points: int, grid: str, reference_grid: np.ndarray) -> np.ndarray:
    """Index of the first step reaching each recall threshold (len(s.tp) if none)."""
    if grid == "reference":
        recall = s.tp / s.n_pos
        return np.searchsorted(recall, reference_grid, side="left")
    # exact: first k with TP_k * (n_points - 1) >= j * P, decided on the counts
    scaled = s.tp * float(n_points - 1)
    targets = np.arange(n_points, dtype=np.float64) * s.n_pos
    return np.searchsorted(scaled, targets, side="left")


_VOC07_GRID = np.arange(0.0, 1.1, 0.1)  # Detectron's voc_ap grid, float artefacts included
_COCO_GRID = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)


def grid_precisions(s: Steps, method: str, grid: str) -> np.ndarray:
    """The envelope at each recall threshold of "voc2007" (11) or "coco" (101): the
    best precision at recall >= the threshold, 0 where no step reaches it."""
    tp = s.tp.astype(np.float64)
    if method == "voc2007":
        n_points, reference, pr = 11, _VOC07_GRID, _precision(tp, s.fp)
    else:
        n_points, reference, pr = 101, _COCO_GRID, tp / (s.fp + tp + np.spacing(1))  # pycocotools' denominator
    env = np.append(_envelope(pr), 0.0)
    return env[_grid_points(s, n_points, grid, reference)]


def grid_average(points: np.ndarray, method: str, grid: str) -> float:
    """The mean of :func:`grid_precisions`, summed as each reference does."""
    if method == "coco":
        return float(np.mean(points))
    if grid == "exact":
        return math.fsum(points.tolist()) / 11.0  # correctly rounded: 1.0 when perfect
    ap = 0.0
    for p in points:  # accumulated as Detectron does (may give 1 + 2**-52)
        ap = ap + p / 11.0
    return float(ap)


def _ap_voc2007(s: Steps, grid: str) -> float:
    return grid_average(grid_precisions(s, "voc2007", grid), "voc2007", grid)


def _ap_voc2010(s: Steps) -> float:
    # Detectron's voc_ap(use_07_metric=False), literally, on the step points
    mrec = np.concatenate(([0.0], s.tp / s.n_pos, [1.0]))
    mpre = np.concatenate(([0.0], _precision(s.tp.astype(np.float64), s.fp), [0.0]))
    mpre = _envelope(mpre)
    i = np.flatnonzero(mrec[1:] != mrec[:-1])
    return float(np.sum((mrec[i + 1] - mrec[i]) * mpre[i + 1]))


def _ap_coco(s: Steps, grid: str) -> float:
    return grid_average(grid_precisions(s, "coco", grid), "coco", grid)


def _prev_precision(s: Steps) -> np.ndarray:
    """Precision at the point above each step; 1 at the origin (scikit-learn's sentinel)."""
    tp_prev = (s.tp - s.dtp).astype(np.float64)
    ps = tp_prev + s.fp_prev
    return np.where(ps > 0, tp_prev / np.where(ps > 0, ps, 1.0), 1.0)


def trapezoid_sum(s: Steps) -> float:
    """Sum of (positive weight x (precision above + precision)): trapezoid AP times 2P."""
    prec = _precision(s.tp.astype(np.float64), s.fp)
    return float(np.sum(s.dtp * (_prev_precision(s) + prec)))


def _ap_trapezoid(s: Steps) -> float:
    return trapezoid_sum(s) / 2.0 / s.n_pos


def _interpolated_areas(s: Steps) -> np.ndarray:
    """Davis & Goadrich's area of each step (in TP units: divide by P for AP)."""
    # Between A = (a, fa) and B = (a + d, fb): TP = a + x, FP = fa + slope * x.
    # integral_0^d (a + x) / (b + c x) dx with b = a + fa, c = 1 + slope
    #   = d / c + (a * slope - fa) / c**2 * log(1 + c d / b)      (b > 0)
    #   = d / c                                                   (b = 0: a = fa = 0)
    # (in place: the step arrays can hold millions of rows)
    d = s.dtp.astype(np.float64)
    fa = s.fp_prev.astype(np.float64)
    a = s.tp - d
    slope = s.fp - fa
    slope /= d
    c = slope + 1.0
    b = a + fa
    area = d / c
    log_coef = slope
    log_coef *= a
    log_coef -= fa  # a * slope - fa
    del a, fa
    log_coef /= c
    log_coef /= c
    ratio = d
    ratio *= c
    del c
    started = b > 0
    np.divide(ratio, b, out=ratio, where=started)
    ratio[~started] = 0.0
    np.log1p(ratio, out=ratio)
    log_coef *= ratio
    area += log_coef
    return area


def _ap_interpolated(s: Steps) -> float:
    return float(np.sum(_interpolated_areas(s)) / s.n_pos)


def twice_fp_area(s: Steps) -> int | float:
    """Sum of (positive weight x (FP above + FP)): twice the ROC area above the curve
    times P x N, an integer without weights."""
    if s.exact:
        return int(np.sum(s.dtp * (s.fp_prev + s.fp), dtype=np.int64))
    return float(np.sum(s.dtp * (s.fp_prev + s.fp)))


def roc_auc_from_sum(twice_above: int | float, n_pos: float, n_neg: float, exact: bool) -> float:
    """ROC-AUC from :func:`twice_fp_area` (summed over any split of the steps)."""
    if exact:
        total = 2 * int(n_pos) * int(n_neg)
        return (total - int(twice_above)) / total
    return 1.0 - float(twice_above) / (2.0 * n_pos * n_neg)


def _roc_auc_full(s: Steps) -> float:
    """Trapezoidal ROC-AUC = 1 - integral of FPR dTPR, exact in integers without weights."""
    return roc_auc_from_sum(twice_fp_area(s), s.n_pos, s.n_neg, s.exact)


_AP_KERNELS: dict[str, Callable[[Steps, str], float]] = {
    "step": lambda s, g: _ap_step(s),
    "voc2007": _ap_voc2007,
    "voc2010": lambda s, g: _ap_voc2010(s),
    "coco": _ap_coco,
    "trapezoid": lambda s, g: _ap_trapezoid(s),
    "interpolated": lambda s, g: _ap_interpolated(s),
}


def ap_from_steps(
    steps: Steps, *, method: str = "step", recall_grid: str = "reference", on_undefined: Any = "warn"
) -> float:
    """Average precision of precomputed steps (internal; validates options)."""
    check_choice(method, "method", AP_METHODS)
    check_choice(recall_grid, "recall_grid", RECALL_GRIDS)
    policy = check_on_undefined(on_undefined)
    if steps.n_pos == 0:
        return undefined("average precision", NO_POSITIVES, 0.0, policy)
    return _AP_KERNELS[method](steps, recall_grid)


@dataclass(frozen=True)
class APTerms:
    """The terms whose sum is an average precision: why the conventions differ.

    Term ``i`` is ``weight[i] * precision[i]``: a recall width (``step``,
    ``voc2010``, ``trapezoid``, ``interpolated``: the recall gained at a step;
    ``voc2007`` / ``coco``: 1/11 or 1/101 per grid point) times the precision
    the convention uses there (the step's precision; the envelope; the
    trapezoid's mean of the two ends; Davis & Goadrich's mean precision over
    the step; the envelope at the grid point).  ``recall`` is the recall at the
    end of the width, or the grid threshold.

    Attributes
    ----------
    method : str
    recall, weight, precision : ndarray
    value : float
        The AP as :func:`precall.average_precision` computes it; equal to
        ``contributions.sum()`` up to rounding.
    """

    method: str
    recall: np.ndarray
    weight: np.ndarray
    precision: np.ndarray
    value: float

    @property
    def contributions(self) -> np.ndarray:
        """``weight * precision`` for each term."""
        return self.weight * self.precision

    def __len__(self) -> int:
        return int(self.recall.shape[0])


def ap_terms_from_steps(steps: Steps, *, method: str = "step", recall_grid: str = "reference") -> APTerms:
    """The terms of ``method``'s AP on the steps (see :class:`APTerms`)."""
    check_choice(method, "method", AP_METHODS)
    check_choice(recall_grid, "recall_grid", RECALL_GRIDS)
    if steps.n_pos == 0:
        raise ValueError("average precision has no terms without positives (n_pos = 0)")
    value = _AP_KERNELS[method](steps, recall_grid)
    tp = steps.tp.astype(np.float64)
    recall = tp / steps.n_pos
    width = steps.dtp / steps.n_pos
    precision = _precision(tp, steps.fp)
    if method == "step":
        return APTerms(method, recall, width, precision, value)
    if method == "trapezoid":
        return APTerms(method, recall, width, (_prev_precision(steps) + precision) / 2.0, value)
    if method == "interpolated":
        return APTerms(method, recall, width, _interpolated_areas(steps) / steps.dtp, value)
    if method == "voc2010":
        env = _envelope(precision)
        tail = 1.0 - recall[-1]
        if tail > 0:  # the (1, 0) sentinel: recall never reached counts with precision 0
            return APTerms(method, np.append(recall, 1.0), np.append(width, tail), np.append(env, 0.0), value)
        return APTerms(method, recall, width, env, value)
    n_points, grid = (11, _VOC07_GRID) if method == "voc2007" else (101, _COCO_GRID)
    if method == "coco":
        precision = tp / (steps.fp + tp + np.spacing(1))
    env = np.append(_envelope(precision), 0.0)
    idx = _grid_points(steps, n_points, recall_grid, grid)
    thresholds = grid if recall_grid == "reference" else np.arange(n_points) / (n_points - 1)
    return APTerms(method, thresholds.copy(), np.full(n_points, 1.0 / n_points), env[idx], value)


def all_ap_from_steps(steps: Steps, *, recall_grid: str, policy: Any) -> dict[str, float]:
    """Every AP convention of the same steps."""
    if steps.n_pos == 0:
        value = undefined("average precision", NO_POSITIVES, 0.0, policy, stacklevel=5)
        return {m: value for m in AP_METHODS}
    return {m: _AP_KERNELS[m](steps, recall_grid) for m in AP_METHODS}


def roc_auc_from_steps(steps: Steps, *, policy: Any) -> float:
    """Full ROC-AUC of the steps, with the undefined policy for one class."""
    if steps.n_pos == 0 or steps.n_neg == 0:
        return undefined("ROC AUC", ONE_CLASS_ROC, float("nan"), policy, stacklevel=5)
    return _roc_auc_full(steps)


def roc_auc_from_table(table: ThresholdTable, *, max_fpr: float | None = None, on_undefined: Any = "warn") -> float:
    """ROC-AUC (optionally McClish-standardised partial AUC) of a table."""
    policy = check_on_undefined(on_undefined)
    if max_fpr is not None:
        max_fpr = check_probability(max_fpr, "max_fpr")
    if table.n_pos == 0 or table.n_neg == 0:
        return undefined("ROC AUC", ONE_CLASS_ROC, float("nan"), policy)
    if max_fpr is None or max_fpr == 1:
        return _roc_auc_full(table.steps())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        fpr, tpr, _ = roc_curve_from_table(table, drop_intermediate=True)
    # add one point at max_fpr by linear interpolation (scikit-learn's rule)
    stop = int(np.searchsorted(fpr, max_fpr, "right"))
    x_interp = [fpr[stop - 1], fpr[stop]]
    y_interp = [tpr[stop - 1], tpr[stop]]
    tpr = np.append(tpr[:stop], np.interp(max_fpr, x_interp, y_interp))
    fpr = np.append(fpr[:stop], max_fpr)
    partial_auc = float(np.trapezoid(tpr, fpr))
    # McClish: 0.5 for a non-discriminant classifier, 1 for a perfect one
    min_area = 0.5 * max_fpr**2
    max_area = max_fpr
    return 0.5 * (1 + (partial_auc - min_area) / (max_area - min_area))


# ---------------------------------------------------------------------------
# public functions
def average_precision(
    y_true: Any,
    y_score: Any,
    *,
    method: str = "step",
    ties: str = "group",
    sample_weight: Any = None,
    pos_label: Any = None,
    recall_grid: str = "reference",
    on_undefined: Any = "warn",
    prevalence: float | None = None,
) -> float:
    """Average precision (PR-AUC) by a named convention.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels; {0, 1}, {-1, 1}, bool, or any labels with ``pos_label``.
    y_score : array-like of shape (n_samples,)
        Scores; higher means more likely positive.
    method : {"step", "voc2007", "voc2010", "coco", "trapezoid", "interpolated"}, default="step"
        The convention; see :data:`CONVENTIONS` and this module's docstring.
        ``"step"`` is scikit-learn's ``average_precision_score``.
    ties : {"group", "stable"}, default="group"
        ``"group"``: equal scores form one operating point (order-independent,
        scikit-learn).  ``"stable"``: one point per sample, equal scores in
        input order (Detectron's ``voc_eval``, pycocotools, the seed tables).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    pos_label : int, float, bool or str, default=None
        The positive label; None means 1, allowed only for labels in {0, 1}
        or {-1, 1}.
    recall_grid : {"reference", "exact"}, default="reference"
        For ``"voc2007"`` and ``"coco"``: the reference codes' floating-point
        recall grids, or the exact ``k/10`` / ``k/100``.
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        What to return when there are no positives: ``"warn"`` returns 0.0 with
        an :class:`UndefinedMetricWarning` (scikit-learn's behaviour), ``"nan"``
        returns NaN, ``"raise"`` raises ``ValueError``, a number is returned
        as given.
    prevalence : float in (0, 1), default=None
        The AP if positives made up this share of the data (the deployment
        rate rather than the test set's): the negatives are reweighted by
        ``(1 - pi) / pi * n_pos / n_neg`` (:meth:`ThresholdTable.at_prevalence`).
        Needs both classes.

    Returns
    -------
    float
        The average precision in [0, 1].

    Examples
    --------
    >>> import precall
    >>> y = [0, 0, 1, 0, 1, 1, 0, 1, 1, 1]
    >>> s = [0.65, 0.1, 0.15, 0.43, 0.97, 0.24, 0.82, 0.7, 0.32, 0.84]
    >>> round(precall.average_precision(y, s), 6)
    0.768849
    >>> round(precall.average_precision(y, s, method="voc2010"), 6)
    0.791667
    >>> round(precall.average_precision(y, s, prevalence=0.01), 6)  # at 1% positives
    0.342181
    """
    check_choice(method, "method", AP_METHODS)
    check_choice(ties, "ties", TIES)
    check_choice(recall_grid, "recall_grid", RECALL_GRIDS)
    policy = check_on_undefined(on_undefined)
    data = check_binary(y_true, y_score, sample_weight, pos_label)
    steps = build_steps(data, ties)  # type: ignore[arg-type]
    if prevalence is not None:
        steps = reweight_steps(steps, prevalence)
    return ap_from_steps(steps, method=method, recall_grid=recall_grid, on_undefined=policy)


def roc_auc(
    y_true: Any,
    y_score: Any,
    *,
    max_fpr: float | None = None,
    sample_weight: Any = None,
    pos_label: Any = None,
    on_undefined: Any = "warn",
) -> float:
    """Area under the ROC curve; scikit-learn's binary ``roc_auc_score``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_score : array-like of shape (n_samples,)
        Scores; higher means more likely positive.
    max_fpr : float in (0, 1], default=None
        If given, the McClish-standardised partial AUC over FPR in [0, max_fpr]
        (0.5 for chance, 1 for a perfect ranking), as scikit-learn.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    pos_label : int, float, bool or str, default=None
        The positive label.  None follows ``roc_auc_score``: of two labels,
        the greater (in sorted order) is positive.
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        When ``y_true`` has one class: ``"warn"`` returns NaN with an
        :class:`UndefinedMetricWarning` (scikit-learn), ``"nan"`` NaN silently,
        ``"raise"`` raises ``ValueError``, a number is returned as given.

    Returns
    -------
    float

    Examples
    --------
    >>> import precall
    >>> precall.roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    policy = check_on_undefined(on_undefined)
    if max_fpr is not None:
        max_fpr = check_probability(max_fpr, "max_fpr")
    data = check_binary(y_true, y_score, sample_weight, pos_label, pos_label_rule="greater")
    if max_fpr is None or max_fpr == 1:
        return roc_auc_from_steps(build_steps(data, "group"), policy=policy)
    return roc_auc_from_table(build_table(data, "group"), max_fpr=max_fpr, on_undefined=policy)
