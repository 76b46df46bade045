"""The registry of conventions and their kernels: every AP convention by name, and ROC-AUC.

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
tutorials' rank tables, Detectron's ``voc_eval``, pycocotools).

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
     - PASCAL VOC 2010+ devkit, Detectron ``voc_ap``
   * - ``coco``
     - mean over 101 recall thresholds ``r`` of the envelope at the first point with
       ``R_k >= r`` (0 past the last recall), precision ``TP/(TP+FP+eps)``
     - grid ``np.linspace(0, 1, 101)`` (reference) or exact ``k/100``;
       ``eps = np.spacing(1)`` as pycocotools
     - pycocotools ``COCOeval.accumulate``, torchmetrics, Ultralytics (COCO mode)
   * - ``trapezoid``
     - trapezoidal area under the PR points, starting at (R 0, P 1)
     - scikit-learn's final point (recall 0, precision 1)
     - ``sklearn.metrics.auc(recall, precision)`` (optimistic: linear interpolation)
   * - ``interpolated``
     - Davis & Goadrich: between consecutive points TP grows by 1 per unit and FP by
       ``(FP_b - FP_a)/(TP_b - TP_a)``; the area of that curve in closed form
     - starts at (TP 0, FP 0)
     - PRROC ``auc.integral``, Keras ``AUC(curve="PR", summation_method="interpolation")``

A worked example: scores
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

Each :class:`Convention` of :data:`CONVENTIONS` carries its kernel, a function of
:class:`~precall._core.steps.Steps` (one problem or a batch) returning one value
per problem, and its minimum over all rankings; the in-memory metrics,
``average="samples"``, the bootstrap, the score-range partial sums, detection
and the plots all go through these functions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from . import backend
from .steps import Steps, one_problem, row_sum, segment_sums, tree_leaves, tree_total
from .validate import AP_METHODS, check_count, check_options

__all__ = [
    "APTerms",
    "CONVENTIONS",
    "COCO_GRID",
    "Convention",
    "VOC07_GRID",
    "ap",
    "ap_terms",
    "at_most_one",
    "defined_ap",
    "grid_average",
    "grid_bounds",
    "grid_precisions",
    "interpolated_areas",
    "min_average_precision",
    "precision_of",
    "roc_auc",
    "roc_auc_from_sum",
    "roc_auc_from_twice",
    "step_sum",
    "trapezoid_sum",
    "twice_fp_area",
    "voc2010_sum",
    "worst_precision_sums",
]

# the recall grids of the reference codes, float artefacts included (see the module docstring)
VOC07_GRID = np.arange(0.0, 1.1, 0.1)  # Detectron's voc_ap
COCO_GRID = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)  # pycocotools
#: the conventions that average the precision envelope at a recall grid (their terms: 1/11 or 1/101 each)
GRID_METHODS: tuple[str, ...] = ("voc2007", "coco")


# ---------------------------------------------------------------------------
# pieces shared by the kernels (each formula once)
def _safe_divide(num: np.ndarray, den: np.ndarray, default: float) -> np.ndarray:
    """``num / den`` where ``den > 0``, else ``default``."""
    num, den = np.broadcast_arrays(num, den)
    out = np.full(num.shape, default, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _precision(s: Steps) -> np.ndarray:
    """``TP / (TP + FP)`` at each step (0 at an empty leading run)."""
    tp = s.tp.astype(np.float64)
    den = np.add(tp, s.fp, dtype=np.float64)
    if s.dense:
        return np.divide(tp, den, out=den)  # in place: at 1e7 rows each array is tens of MB
    return _safe_divide(tp, den, 0.0)


def precision_of(s: Steps) -> np.ndarray:
    """The precision at each step that the step, trapezoid, voc2010 and voc2007 kernels read (pass it
    to :func:`ap` to compute it once for all of them)."""
    return _precision(s)


def _prev_precision(s: Steps) -> np.ndarray:
    """Precision at the point above each step; 1 at the origin (scikit-learn's sentinel)."""
    tp_prev = s.tp_prev.astype(np.float64)
    ps = tp_prev + s.fp_prev
    return np.where(ps > 0, tp_prev / np.where(ps > 0, ps, 1.0), 1.0)


def _coco_precision(s: Steps) -> np.ndarray:
    """pycocotools' precision ``TP / (TP + FP + eps)``, ``eps = np.spacing(1)`` in units of the
    smallest weight.

    With counts (no weights) the unit is 1: pycocotools exactly.  With weights the
    unit is each problem's smallest positive step weight (the smallest positive
    weight the counts resolve), so that scaling every weight by a constant changes
    nothing (pycocotools' absolute ``eps`` would make a weighted COCO AP depend on
    the weights' unit: 0.779 becomes 0.00027 with weights x 1e-20).
    """
    tp = s.tp.astype(np.float64)
    if s.exact:
        return tp / (s.fp + tp + np.spacing(1))
    return tp / (s.fp + tp + np.spacing(1) * _weight_unit(s)[:, None])


def _weight_unit(s: Steps) -> np.ndarray:
    """Per problem, the smallest positive weight a step adds (1 where there is none): the unit of
    the weights, scaled with them (differences of cumulative sums are not used: their rounding
    residue is no unit)."""
    unit = np.where(s.dtp > 0, s.dtp, np.inf).min(axis=1, initial=np.inf)
    return np.where(np.isfinite(unit), unit, 1.0)


def _envelope(precision: np.ndarray) -> np.ndarray:
    """Running maximum from the right along each row: the best precision at recall >= R_k."""
    return np.maximum.accumulate(precision[:, ::-1], axis=1)[:, ::-1]


# ---------------------------------------------------------------------------
# the kernels: (m, R) steps in, one value per problem out
def step_sum(s: Steps, precision: np.ndarray | None = None) -> np.ndarray:
    """Sum of (positive weight x precision) over the steps: step AP times P (``precision``:
    :func:`_precision` of ``s`` when computed already)."""
    if precision is None:  # its own array: the terms overwrite it (the same products)
        terms = _precision(s)
        terms *= s.dtp
        return row_sum(terms, s)
    return row_sum(s.dtp * precision, s)


def trapezoid_sum(s: Steps, precision: np.ndarray | None = None) -> np.ndarray:
    """Sum of (positive weight x (precision above + precision)): trapezoid AP times 2P."""
    return row_sum(s.dtp * (_prev_precision(s) + (_precision(s) if precision is None else precision)), s)


def interpolated_areas(s: Steps) -> np.ndarray:
    """Davis & Goadrich's area of each step, (m, R), in TP units (divide by P for AP).

    Between A = (a, fa) and B = (a + d, fb): TP = a + x, FP = fa + slope * x, and
    ``integral_0^d (a + x) / (b + c x) dx`` with ``b = a + fa``, ``c = 1 + slope``
    is ``d / c + (a * slope - fa) / c**2 * log(1 + c d / b)`` (``b > 0``), ``d / c``
    (``b = 0``: the origin).  In place: the step arrays can hold millions of rows.
    """
    # a step's weight can vanish from the cumulative sums (a weight of 1e-17 after 1): it adds nothing
    step = None if s.dense and bool(np.all(s.dtp > 0)) else s.dtp > 0
    d = s.dtp.astype(np.float64) if step is None else np.where(step, s.dtp, 1).astype(np.float64)
    fa = s.fp_prev.astype(np.float64)
    a = s.tp - d
    slope = s.fp - fa
    slope /= d
    if step is not None:  # no step, no slope: a weight's scale squared (a * slope) would overflow
        slope[~step] = 0.0
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
    return area if step is None else np.where(step, area, 0.0)


def voc2010_sum(s: Steps, floor: np.ndarray | None = None, *, sentinel: bool = True,
                precision: np.ndarray | None = None) -> np.ndarray:
    """Detectron's ``voc_ap`` on the steps: the sum over recall changes of the recall
    gained times the precision envelope, with its sentinels (0, 0) in front and
    (1, 0) at the end (the same floats, added in the same order).

    ``floor`` (m,) raises the envelope to the best precision of steps not in
    ``s`` (the lower score ranges) and ``sentinel=False`` drops the (1, 0) term:
    a score range's part of the sum.
    """
    m, r = s.tp.shape
    recall = s.tp / s.n_pos[:, None]
    before = np.empty_like(recall)
    if r:
        before[:, 0] = (s.tp[:, 0] - s.dtp[:, 0]) / s.n_pos
        before[:, 1:] = recall[:, :-1]
    env = _envelope(_precision(s) if precision is None else precision)
    if floor is not None:
        env = np.maximum(env, np.asarray(floor, dtype=np.float64).reshape(-1, 1))
    width = recall - before
    terms = width * env
    changed = width != 0
    if m == 1:  # only the recall changes, as Detectron's `np.where(mrec[1:] != mrec[:-1])`
        kept = terms[0][changed[0]]
        if sentinel and (r == 0 or recall[0, -1] != 1.0):
            kept = np.append(kept, 0.0)  # (1 - R_K) times the sentinel precision 0
        return np.array([np.sum(kept)])
    if s.lengths is not None:  # a ragged batch: each row as the one problem above
        inside = np.arange(r) < s.lengths[:, None]
        last = recall[:, -1] if r else np.zeros(m)
        tail = (sentinel & ((s.lengths == 0) | (last != 1.0)))[:, None]
        return row_sum(np.concatenate([terms, np.zeros((m, 1))], axis=1), s,
                       np.concatenate([changed & inside, tail], axis=1))
    return np.sum(np.where(changed, terms, 0.0), axis=1)


GRID_TIE = 2.0**-48
"""How near (relative) a recall from weights may come to a grid point ``k / (n - 1)`` and count as
reaching it exactly (:func:`grid_bounds`): 16 units in the last place at 1, where the weights' sums
and their ratio are within about 4 (each weight rounded once by its scale, the sums compensated)."""


def grid_bounds(n_points: int, grid: str, reference: np.ndarray) -> np.ndarray:
    """The least recall from weights that reaches each point of a grid of ``n_points`` (:func:`_grid_indices`).

    Counts compare ``TP / P`` with the reference grid's floats (``grid="reference"``) or
    ``TP * (n - 1)`` with ``k * P`` (``"exact"``), where a recall equal to ``k / (n - 1)`` is that
    rational exactly.  Weights are rounded where they are scaled and summed, so such a recall
    lands an ulp either side of the point and a float comparison would depend on the weights'
    scale (voc2007 moved by 3% with every weight times 0.1).  A recall within :data:`GRID_TIE`
    of ``k / (n - 1)`` is therefore taken as equal to it, and reaches the point exactly when the
    counts do: always for ``"exact"``; for ``"reference"`` when ``fl(k / (n - 1))`` is at least the
    grid's float (not at 0.3, 0.6 and 0.7 of VOC 2007's ``np.arange``).  Integer weights give the
    counts' points (a recall of integers is this near a point only if it is the point, below
    ``2**41`` positives), and any scale of them the same points.
    """
    q = np.arange(n_points, dtype=np.float64) / float(n_points - 1)
    tie = q >= reference if grid == "reference" else np.ones(n_points, dtype=bool)
    return np.where(tie, q * (1.0 - GRID_TIE), np.nextafter(q * (1.0 + GRID_TIE), np.inf))


def _grid_indices(s: Steps, n_points: int, grid: str, reference: np.ndarray, snap: bool = True) -> np.ndarray:
    """(m, n_points): the first step of each row reaching each recall threshold (R if none).

    Long rows search once per row; short rows (``average="samples"``: a few
    classes, many rows) compare every threshold with every step at once.  Steps of weights
    (not ``s.exact``) compare their recall with :func:`grid_bounds` (``snap``: the grid is the
    convention's, not detection's own thresholds).
    """
    m, runs = s.tp.shape
    idx = np.empty((m, n_points), dtype=np.int64)
    if snap and not s.exact:  # weights: the recall against the bounds of the grid's points
        reference, grid = grid_bounds(n_points, grid, reference), "reference"
    with np.errstate(invalid="ignore", divide="ignore"):
        if runs >= 256 or m == 1:
            for i in range(m):  # cumulative counts only grow: one search per row
                if grid == "reference":
                    idx[i] = np.searchsorted(s.tp[i] / s.n_pos[i], reference, side="left")
                else:  # exact: first step with TP * (n_points - 1) >= j * P, on the counts
                    scaled = s.tp[i] * float(n_points - 1)
                    idx[i] = np.searchsorted(scaled, np.arange(n_points, dtype=np.float64) * s.n_pos[i], side="left")
        else:  # every threshold against every step, all rows at once, in blocks of rows of bounded size
            if grid == "reference":
                values, limits = s.tp / s.n_pos[:, None], np.broadcast_to(reference, (m, n_points))
            else:
                values = s.tp * (n_points - 1)
                limits = np.arange(n_points) * s.n_pos[:, None]
            block = max(1, _GRID_CELLS // max(runs * n_points, 1))
            for lo in range(0, m, block):
                below = values[lo:lo + block, :, None] < limits[lo:lo + block, None, :]
                idx[lo:lo + block] = below.sum(axis=1)
    return idx


_GRID_CELLS = 1 << 22  # comparisons of one block of _grid_indices' short rows (4 MB of booleans)


def grid_precisions(s: Steps, method: str, grid: str = "reference", thresholds: np.ndarray | None = None,
                    precision: np.ndarray | None = None) -> np.ndarray:
    """(m, n_points): the envelope at each recall threshold of ``"voc2007"`` (11) or
    ``"coco"`` (101; pycocotools' precision): the best precision at recall >= the
    threshold, 0 where no step reaches it.  ``thresholds`` replaces the reference
    grid (detection's ``recall_thresholds``)."""
    if method == "voc2007":
        reference, precision = VOC07_GRID, _precision(s) if precision is None else precision
    else:
        reference, precision = COCO_GRID, _coco_precision(s)
    if thresholds is not None:
        reference, grid = np.asarray(thresholds, dtype=np.float64), "reference"
    with np.errstate(invalid="ignore", divide="ignore"):
        env = np.concatenate([_envelope(precision), np.zeros((s.tp.shape[0], 1))], axis=1)
    idx = _grid_indices(s, reference.size, grid, reference, snap=thresholds is None)
    return np.take_along_axis(env, idx, axis=1)


def grid_average(points: np.ndarray, method: str, grid: str) -> np.ndarray:
    """The mean of :func:`grid_precisions` per row, summed as each reference does."""
    if method == "coco":
        return np.add.reduce(points, axis=1) / points.shape[1]  # np.mean's sum and division, without its checks
    if grid == "exact":  # correctly rounded: 1.0 when perfect
        return np.array([math.fsum(row) / 11.0 for row in points.tolist()])
    if points.shape[0] <= 8:  # a few rows: the same IEEE operations on Python floats, without numpy's per-call cost
        out = []
        for row in points.tolist():
            total = 0.0
            for v in row:
                total = total + v / 11.0
            out.append(total)
        return np.array(out)
    acc = np.zeros(points.shape[0])
    for j in range(points.shape[1]):  # accumulated as Detectron does (may give 1 + 2**-52)
        acc = acc + points[:, j] / 11.0
    return acc


# (``precision``: :func:`_precision` of ``s`` when computed already, as :func:`ap` passes it on)
def _ap_step(s: Steps, grid: str, precision: np.ndarray | None = None) -> np.ndarray:
    return step_sum(s, precision) / s.n_pos


def _ap_voc2007(s: Steps, grid: str, precision: np.ndarray | None = None) -> np.ndarray:
    return grid_average(grid_precisions(s, "voc2007", grid, precision=precision), "voc2007", grid)


def _ap_voc2010(s: Steps, grid: str, precision: np.ndarray | None = None) -> np.ndarray:
    return voc2010_sum(s, precision=precision)


def _ap_coco(s: Steps, grid: str, precision: np.ndarray | None = None) -> np.ndarray:
    return grid_average(grid_precisions(s, "coco", grid), "coco", grid)


def _ap_trapezoid(s: Steps, grid: str, precision: np.ndarray | None = None) -> np.ndarray:
    return trapezoid_sum(s, precision) / 2.0 / s.n_pos


def _ap_interpolated(s: Steps, grid: str, precision: np.ndarray | None = None) -> np.ndarray:
    return row_sum(interpolated_areas(s), s) / s.n_pos


def unit_interval(values: Any) -> Any:
    """Clip rounding out of [0, 1] (and turn -0.0 into 0.0); NaN stays NaN.

    An AP is a precision averaged over recall, so it lies in [0, 1]; a sum of floats can
    land an ulp outside (Detectron's literal ``sum(p) / 11`` of eleven precisions 1.0 is
    1.0000000000000002).  precall reports the AP in [0, 1]: at most one ulp from the
    reference's literal sum, and only where that sum left the interval.
    """
    if type(values) is float or type(values) is np.float64:  # one number: as np.clip gives it, without its cost
        return np.float64((0.0 if values < 0.0 else 1.0 if values > 1.0 else values) + 0.0)
    return np.clip(values, 0.0, 1.0) + 0.0


def at_most_one(values: Any) -> Any:
    """Clip rounding above 1 (and turn -0.0 into 0.0); NaN stays NaN: AUPRG's range.

    The area under the PRG curve is at most 1 (recall gain spans [0, 1], precision gain is
    at most 1) but can be negative (parts below precision gain 0 count negatively, as the
    ``prg`` package's ``calc_auprg``), so only its upper end is clipped: a perfect ranking's
    float sum 1.0000000000000002 is reported as 1.0, as :func:`unit_interval` does for an AP.
    """
    if type(values) is float or type(values) is np.float64:  # one number, as np.minimum gives it
        return np.float64((1.0 if values > 1.0 else values) + 0.0)
    return np.minimum(values, 1.0) + 0.0


def ap(s: Steps, method: str, grid: str = "reference", precision: np.ndarray | None = None) -> np.ndarray:
    """AP of each problem by ``method`` (NaN where a problem has no positive weight), in [0, 1]
    (:func:`unit_interval`); ``precision``: :func:`_precision` of ``s``, when several conventions
    share it (``evaluation.batch_numbers``)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.asarray(CONVENTIONS[method].kernel(s, grid, precision), dtype=np.float64)
    return defined_ap(s.n_pos, out)


def defined_ap(n_pos: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A kernel's values as :func:`ap` returns them: in [0, 1], NaN where ``n_pos`` is 0."""
    return np.where(n_pos > 0, unit_interval(values), np.nan)


# ---------------------------------------------------------------------------
# ROC-AUC
def twice_fp_area(s: Steps) -> np.ndarray:
    """Per problem, twice the ROC area above the curve, summed over the steps.

    Without weights (``exact``): the integer ``sum(dtp * (fp_prev + fp))``, that is
    twice the area times P x N (int64 while ``2 P N`` stays below 2**62, else
    Python integers: exact at any count).  With weights: the same sum in units of
    P x N, ``sum(dtp / P * (fp_prev / N + fp / N))``, so that no product of two
    weights is formed and scaling every weight by a constant changes nothing
    (no underflow at 1e-200, no overflow at 1e200).
    """
    if s.exact:
        big = bool(np.any(2.0 * s.n_pos * s.n_neg >= 2.0**62))
        if not big:
            return np.sum(s.dtp * (s.fp_prev + s.fp), axis=1, dtype=np.int64)
        dtp, fp_prev, fp = (a.astype(object) for a in (s.dtp, s.fp_prev, s.fp))
        return np.array([sum(row) for row in (dtp * (fp_prev + fp)).tolist()], dtype=object)
    with np.errstate(invalid="ignore", divide="ignore"):
        n_neg = s.n_neg[:, None]
        return row_sum(s.dtp / s.n_pos[:, None] * (s.fp_prev / n_neg + s.fp / n_neg), s)


def roc_auc_from_sum(twice_above: Any, n_pos: float, n_neg: float, exact: bool) -> float:
    """ROC-AUC from :func:`twice_fp_area` (summed over any split of the steps)."""
    if exact:
        total = 2 * int(n_pos) * int(n_neg)
        return (total - int(twice_above)) / total
    return 1.0 - float(twice_above) / 2.0


def roc_auc_from_twice(twice: np.ndarray, n_pos: np.ndarray, n_neg: np.ndarray, exact: bool) -> np.ndarray:
    """ROC-AUC of each problem from its :func:`twice_fp_area` (NaN where a problem has one class)."""
    defined = (n_pos > 0) & (n_neg > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if exact:
            out = np.array([roc_auc_from_sum(t, p, n, True) if ok else np.nan for t, p, n, ok in
                            zip(twice.tolist(), n_pos.tolist(), n_neg.tolist(), defined.tolist())])
        else:
            out = 1.0 - twice / 2.0
    return np.where(defined, out, np.nan)


def _roc_pieces(s: Steps) -> tuple[np.ndarray, ...]:
    """The ROC polyline of each problem as pieces (x0, x1, y0, y1) in counts: before each
    step the flat piece from the point above the previous step, the step itself, and
    the flat tail to (N, TP_K)."""
    m, r = s.tp.shape
    zero = np.zeros((m, 1), dtype=s.fp.dtype)
    fp_before = np.concatenate([zero, s.fp], axis=1)[:, :r]
    tp_prev = s.tp_prev
    last_tp = s.tp[:, -1:] if r else np.zeros((m, 1), dtype=s.tp.dtype)
    last_fp = s.fp[:, -1:] if r else zero
    x0 = np.concatenate([fp_before, s.fp_prev, last_fp], axis=1)
    x1 = np.concatenate([s.fp_prev, s.fp, s.n_neg[:, None]], axis=1)
    y0 = np.concatenate([tp_prev, tp_prev, last_tp], axis=1)
    y1 = np.concatenate([tp_prev, s.tp, last_tp], axis=1)
    return x0, x1, y0, y1


def roc_auc(s: Steps, max_fpr: float | None = None) -> np.ndarray:
    """ROC-AUC of each problem (NaN where a problem has one class).

    The full area is ``1 - integral of FPR dTPR``, exact in integers without
    weights.  With ``max_fpr`` (McClish's standardised partial AUC, as
    scikit-learn): the trapezoids of the ROC polyline left of ``max_fpr``, the
    piece crossing it cut where linear interpolation reaches it, then
    ``0.5 * (1 + (A - max_fpr**2 / 2) / (max_fpr - max_fpr**2 / 2))``.
    """
    P, N = s.n_pos, s.n_neg
    m, r = s.tp.shape
    defined = (P > 0) & (N > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if max_fpr is None or max_fpr == 1:
            return roc_auc_from_twice(twice_fp_area(s), P, N, s.exact)
        else:
            x0, x1, y0, y1 = (a / d[:, None] for a, d in zip(_roc_pieces(s), (N, N, P, P)))
            x_end = np.minimum(x1, max_fpr)
            width = x_end - x0
            inside = width > 0
            slope = _safe_divide(y1 - y0, x1 - x0, 0.0)
            y_end = y0 + slope * width
            pieces = np.where(inside, width * (y0 + y_end) / 2.0, 0.0)
            keep = None
            if s.lengths is not None:  # [before each step | each step | the tail]: the real steps of each
                real = np.arange(r) < s.lengths[:, None]
                keep = np.concatenate([real, real, np.ones((m, 1), dtype=bool)], axis=1)
            area = row_sum(pieces, s, keep)
            min_area, max_area = 0.5 * max_fpr**2, max_fpr
            out = 0.5 * (1 + (area - min_area) / (max_area - min_area))
    return np.where(defined, out, np.nan)


# ---------------------------------------------------------------------------
# the terms of one problem's AP: what `explain` prints and the plots draw
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


def ap_terms(s: Steps, method: str = "step", recall_grid: str = "reference") -> APTerms:
    """The terms of ``method``'s AP on one problem's steps (see :class:`APTerms`)."""
    check_options(method=method, recall_grid=recall_grid)
    if s.m != 1:
        raise ValueError(f"the terms are those of one problem; got {s.m}")
    if s.n_pos[0] == 0:
        raise ValueError("average precision has no terms without positives (n_pos = 0)")
    value = float(ap(s, method, recall_grid)[0])
    n_pos = float(s.n_pos[0])
    tp = s.tp[0].astype(np.float64)
    recall = tp / n_pos
    width = s.dtp[0] / n_pos
    precision = _precision(s)[0]
    if method == "step":
        return APTerms(method, recall, width, precision, value)
    if method == "trapezoid":
        return APTerms(method, recall, width, (_prev_precision(s)[0] + precision) / 2.0, value)
    if method == "interpolated":
        return APTerms(method, recall, width, interpolated_areas(s)[0] / s.dtp[0], value)
    if method == "voc2010":
        env = _envelope(precision[None, :])[0]
        tail = 1.0 - recall[-1] if recall.size else 1.0
        if tail > 0:  # the (1, 0) sentinel: recall never reached counts with precision 0
            return APTerms(method, np.append(recall, 1.0), np.append(width, tail), np.append(env, 0.0), value)
        return APTerms(method, recall, width, env, value)
    n_points, reference = (11, VOC07_GRID) if method == "voc2007" else (101, COCO_GRID)
    points = grid_precisions(s, method, recall_grid)[0]
    thresholds = reference if recall_grid == "reference" else np.arange(n_points) / (n_points - 1)
    return APTerms(method, thresholds.copy(), np.full(n_points, 1.0 / n_points), points, value)


# ---------------------------------------------------------------------------
# the minimum AP of each convention (Boyd et al. 2012 for "step")
def _worst_precision_sum(n_pos: int, n_neg: float) -> float:
    """``sum_{i=1..P} i / (i + N)``: the precision sum of the worst ranking.

    Up to ``2**20`` positives the terms are added (:func:`worst_precision_sums`); beyond, the first
    1000 terms are added and the rest is the Euler-Maclaurin sum of
    ``f(x) = x / (N + x)`` over ``(1000, P]`` to the fifth derivative, whose
    remainder is below ``1e-4 * N / (N + 1000)**8`` (under ``1e-16`` relative):
    O(1) for any P, so a weight of 1e12 or a merged count of 1e15 answers at once.
    """
    if n_pos <= _EXACT_TERMS:  # the terms added in numpy's pairwise order, by either kernel
        return float(worst_precision_sums(np.array([float(n_pos)]), np.array([float(n_neg)]))[0])
    k = _HEAD_TERMS
    i = np.arange(1, k + 1, dtype=np.float64)
    head = float(np.sum(i / (i + n_neg)))
    p, n = float(n_pos), float(n_neg)
    u = (p - k) / (n + k)  # integral of x / (N + x) over [k, P] = k u + N (u - log(1 + u))
    integral = k * u + n * _x_minus_log1p(u)

    def derivatives(x: float) -> tuple[float, float, float, float]:
        # f and its 1st, 3rd and 5th derivatives at x, as products of 1 / (N + x): no overflow
        r = 1.0 / (n + x)
        q = n * r  # N / (N + x)
        return 1.0 - q, q * r, 6.0 * q * r * r * r, 120.0 * q * r * r * r * r * r

    fp, d1p, d3p, d5p = derivatives(p)
    fk, d1k, d3k, d5k = derivatives(float(k))
    tail = integral + (fp - fk) / 2.0 + (d1p - d1k) / 12.0 - (d3p - d3k) / 720.0 + (d5p - d5k) / 30240.0
    return head + tail


def worst_precision_sums(n_pos: np.ndarray, n_neg: np.ndarray) -> np.ndarray:
    """:func:`_worst_precision_sum` of many pairs (``n_pos`` whole numbers >= 1), bit for bit:
    the pairs of up to ``2**20`` positives as one segmented sum of their terms
    (:func:`~precall._core.steps.segment_sums`, numpy's pairwise order; the compiled
    ``worst_precision_sums`` when the kernel choice takes it), the others one by one."""
    pf = np.asarray(n_pos, dtype=np.float64)  # compared as floats: a weight sum may pass 2**63
    n = np.asarray(n_neg, dtype=np.float64)
    out = np.empty(pf.shape[0])
    fits = pf <= _EXACT_TERMS
    every = bool(fits.all())  # the usual case (evaluate, slices): no index arrays
    small: Any = slice(None) if every else np.flatnonzero(fits)
    p = pf[small].astype(np.int64)
    fast = backend.compiled(int(p.sum())) if p.size else None
    if fast is not None:  # the same trees of the same terms, no array of them
        sub = np.empty(p.size)
        fast.worst_precision_sums(p, n[small], sub)
        out[small] = sub
    elif p.size:
        sub = np.empty(p.size)
        long = p > _TERMS_AT_ONCE  # one pair at a time, a node of numpy's tree at a time: no array of P terms
        for j in np.flatnonzero(long).tolist():
            sub[j] = _tree_precision_sum(int(p[j]), float(n[small][j]))
        lengths = p[~long]
        starts = np.cumsum(lengths) - lengths
        i = np.arange(1, int(lengths.sum()) + 1, dtype=np.int64) - np.repeat(starts, lengths)
        terms = i.astype(np.float64)
        terms /= terms + np.repeat(n[small][~long], lengths)
        if lengths.size <= _FEW_PAIRS:  # np.sum of each segment itself: the same bits, no segmented machinery
            sub[~long] = [np.sum(terms[a:a + k]) for a, k in zip(starts.tolist(), lengths.tolist())]
        else:
            sub[~long] = segment_sums(terms, starts, lengths)
        out[small] = sub
    for j in ([] if every else np.flatnonzero(~fits).tolist()):
        out[j] = _worst_precision_sum(int(pf[j]), float(n[j]))
    return out


_TERMS_AT_ONCE = 1 << 16  # terms of worst_precision_sums' numpy route held at once (a pair with more: by nodes)
_FEW_PAIRS = 8  # up to this many pairs, worst_precision_sums' numpy route sums each pair's terms by np.sum
# (evaluate's one pair at 1,000 rows: segment_sums' machinery took 200-400 us of its 760)


def _tree_precision_sum(n_pos: int, n_neg: float) -> float:
    """``sum_{i=1..P} i / (i + N)`` as ``np.sum`` adds the array of its terms, each node of numpy's tree of
    at most :data:`_TERMS_AT_ONCE` terms made and summed alone."""
    sums = {}
    for a, size in tree_leaves(n_pos, _TERMS_AT_ONCE):
        terms = np.arange(a + 1, a + size + 1, dtype=np.int64).astype(np.float64)
        terms /= terms + n_neg
        sums[a] = np.sum(terms)
    return float(tree_total(n_pos, _TERMS_AT_ONCE, sums))


def _x_minus_log1p(u: float) -> float:
    """``u - log(1 + u)`` without cancellation for small ``u``."""
    if u > 1e-3:
        return u - math.log1p(u)
    total, term, k = 0.0, -u, 2  # sum_{k>=2} (-1)^k u^k / k
    while True:
        term *= -u
        step = term / k
        total += step
        if abs(step) < 1e-18 * max(total, 1e-300):
            return total
        k += 1


_EXACT_TERMS = 1 << 20
_HEAD_TERMS = 1000


def one_step_averages(n_pos: np.ndarray, n_neg: np.ndarray, grid: str = "reference") -> dict[str, np.ndarray]:
    """Per (P, N) pair (``N > 0``), the AP by every convention of the one step (TP, FP) = (P, N) of
    :func:`_one_step` (every negative first, then every positive tied: recall 1 at precision
    ``P / (P + N)``, the point above it (0, N)), before :func:`defined_ap`'s clip: each kernel's
    floating-point operations on that step written out, vectorised over the pairs, so the same bits
    as the kernels without a batch of steps (``tests/test_slices.py`` compares them with
    :func:`min_average_precision`).  ``step`` is that step's AP too, not Boyd's minimum."""
    p = np.asarray(n_pos, dtype=np.float64)
    n = np.asarray(n_neg, dtype=np.float64)
    whole = (n == np.round(n)) & (n < 2.0**53) & (p < 2.0**53)  # _one_step's integer counts
    eps = np.spacing(1)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        x = p / (p + n)  # _precision
        coco = p / (n + p + np.where(whole, eps, eps * p))  # _coco_precision: eps in units of the step's weight
        if grid == "exact":  # grid_average: every grid point reached at recall 1
            voc07 = np.array([math.fsum([v] * 11) / 11.0 for v in x.tolist()])
        else:  # eleven terms x / 11 added in order from 0, as Detectron adds them (a running sum: in order)
            terms = np.repeat((x / 11.0)[:, None], VOC07_GRID.size, axis=1)
            voc07 = np.add.accumulate(terms, axis=1)[:, -1] + 0.0
        coco_mean = np.empty(p.shape[0])
        for lo in range(0, p.shape[0], _ROWS):  # np.mean's pairwise sums of the 101 points, a block of rows at once
            block = np.repeat(coco[lo:lo + _ROWS, None], COCO_GRID.size, axis=1)
            coco_mean[lo:lo + _ROWS] = np.add.reduce(block, axis=1) / COCO_GRID.size
        return {
            "step": p * x / p, "voc2007": voc07, "voc2010": x, "coco": coco_mean,
            "trapezoid": p * (0.0 + x) / 2.0 / p,  # precision 0 above the step, x at it
            # Davis & Goadrich with slope 0: P - N log1p(P / N) (``interpolated_areas``: c = 1)
            "interpolated": (p - n * np.log1p(p * 1.0 / n)) / p,
        }


_ROWS = 1 << 12  # rows of 101 COCO points summed at once (one_step_averages)


def one_step_average(n_pos: float, n_neg: float, grid: str = "reference") -> dict[str, float]:
    """:func:`one_step_averages` of one pair (``N > 0``) on Python floats: each value by the same IEEE
    operations in the same order (numpy's ``log1p`` and its pairwise sum of the 101 COCO points by
    numpy itself, on arrays of the same shapes), without numpy's cost per call on arrays of one
    value (``evaluate``'s minimum AP; ``tests/test_slices.py`` holds the two to the public minimum)."""
    p, n = float(n_pos), float(n_neg)
    whole = n == round(n) and n < 2.0**53 and p < 2.0**53
    eps = float(np.spacing(1))
    x = p / (p + n)
    coco = p / (n + p + (eps if whole else eps * p))
    if grid == "exact":
        voc07 = math.fsum([x] * 11) / 11.0
    else:  # np.add.accumulate of the eleven terms: a running sum from the first
        term = x / 11.0
        voc07 = term
        for _ in range(VOC07_GRID.size - 1):
            voc07 = voc07 + term
        voc07 += 0.0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        coco_mean = float(np.add.reduce(np.full((1, COCO_GRID.size), coco), axis=1)[0] / COCO_GRID.size)
        log = float(np.log1p(np.array([p * 1.0 / n]))[0])
    return {"step": p * x / p, "voc2007": voc07, "voc2010": x, "coco": coco_mean,
            "trapezoid": p * (0.0 + x) / 2.0 / p, "interpolated": (p - n * log) / p}


def _one_step(n_pos: float, n_neg: float) -> Steps:
    """Every negative ranked first, then every positive in one tied run."""
    whole = float(n_neg).is_integer() and float(n_neg) < 2.0**53 and float(n_pos) < 2.0**53
    dtype = np.int64 if whole else np.float64
    tp = np.array([n_pos], dtype=dtype)
    fp = np.array([n_neg], dtype=dtype)
    return one_problem(np.zeros(1), tp, tp, fp, fp, float(n_pos), float(n_neg), whole)


def _min_boyd(p: float, n: float, ties: str, grid: str) -> float:
    return _worst_precision_sum(int(p), n) / p


def _min_one_step(method: str) -> Callable[[float, float, str, str], float]:
    def minimum(p: float, n: float, ties: str, grid: str) -> float:
        return float(ap(_one_step(p, n), method, grid)[0])
    return minimum


def _min_trapezoid(p: float, n: float, ties: str, grid: str) -> float:
    if ties == "group":  # negatives first, then every positive tied: precision 0 joined to pi
        return _min_one_step("trapezoid")(p, n, ties, grid)
    # trapezoids between consecutive worst-ranking points, from precision 0 above the first
    return (_worst_precision_sum(int(p), n) - p / (p + n) / 2.0) / p


def min_average_precision(n_pos: Any, n_neg: Any, method: str = "step", ties: str = "group",
                          recall_grid: str = "reference") -> float:
    """The smallest AP any ranking of ``n_pos`` positives (a whole number) and negatives
    of total weight ``n_neg`` gets by ``method`` (1 without negatives)."""
    check_options(method=method, ties=ties, recall_grid=recall_grid)
    p = check_count(n_pos, "n_pos", positive=True, whole=True)
    n = check_count(n_neg, "n_neg")
    if n == 0:
        return 1.0
    return CONVENTIONS[method].minimum(p, n, ties, recall_grid)


# ---------------------------------------------------------------------------
# the registry
@dataclass(frozen=True)
class Convention:
    """How one AP convention turns a PR curve into one number: its formula, grid and
    sentinels, its tie rule, its minimum, where it comes from, and its kernel."""

    name: str
    summary: str
    formula: str
    sentinels: str
    used_by: str
    reference: str
    reference_ties: str
    seed_values: str
    minimum_formula: str = ""
    kernel: Callable[[Steps, str, np.ndarray | None], np.ndarray] = field(default=None, repr=False, compare=False)  # type: ignore[assignment]
    minimum: Callable[[float, float, str, str], float] = field(default=None, repr=False, compare=False)  # type: ignore[assignment]

    @property
    def example_values(self) -> str:
        """Worked examples of this convention (same as ``seed_values``)."""
        return self.seed_values


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
            "worked example 0.768849; the tutorials' stable example 0.643849; a tied example 0.638889",
            minimum_formula="(1/P) sum_{i=1..P} i / (i + N) (Boyd et al. 2012)",
            kernel=_ap_step,
            minimum=_min_boyd,
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
            "worked example 0.803030; the tutorials' stable example 0.670307 (stable); a tied example 0.75",
            minimum_formula="pi = P / (P + N): the envelope is pi at every recall",
            kernel=_ap_voc2007,
            minimum=_min_one_step("voc2007"),
        ),
        Convention(
            "voc2010",
            "area under the precision envelope (all points)",
            "sum over recall changes of (R_k - R_{k-1}) * max{P_j : R_j >= R_k}",
            "(0, 0) in front, (1, 0) at the end",
            "PASCAL VOC 2010+ devkit, Detectron voc_ap",
            "Everingham et al., PASCAL VOC 2012 development kit, sec. 3.4.1",
            "per detection, as voc2007",
            "worked example 0.791667; the tutorials' stable example 0.662067 (stable, the seed's 0.6621); "
            "a tied example 0.75",
            minimum_formula="pi",
            kernel=_ap_voc2010,
            minimum=_min_one_step("voc2010"),
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
            minimum_formula="P / (P + N + eps) (pycocotools' precision)",
            kernel=_ap_coco,
            minimum=_min_one_step("coco"),
        ),
        Convention(
            "trapezoid",
            "trapezoidal area under the PR points (straight lines between them; can differ from step AP either way)",
            "sum_k (R_k - R_{k-1}) * (P_{k-1} + P_k) / 2",
            "starts at scikit-learn's point (recall 0, precision 1)",
            "sklearn.metrics.auc(recall, precision)",
            "Davis & Goadrich, ICML 2006, sec. 4 (why it is optimistic)",
            "group, as scikit-learn's precision_recall_curve",
            "worked example 0.748016",
            minimum_formula="pi / 2 with ties='group' (every positive tied after the negatives); with 'stable' the trapezoids of the worst ranking",
            kernel=_ap_trapezoid,
            minimum=_min_trapezoid,
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
            minimum_formula="1 - (N/P) log(1 + P/N)",
            kernel=_ap_interpolated,
            minimum=_min_one_step("interpolated"),
        ),
    )
}


if tuple(CONVENTIONS) != AP_METHODS:  # pragma: no cover - the registry and the option names are one list
    raise ImportError("precall: the conventions registry does not match AP_METHODS")
