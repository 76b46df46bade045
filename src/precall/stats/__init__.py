"""Uncertainty and comparison: DeLong and bootstrap confidence intervals, paired tests.

DeLong (ROC-AUC only)
    The AUC is the mean of the positives' *placements* ``V10(x) = P(neg < x) +
    P(neg = x) / 2`` (the share of negatives ranked below each positive, ties
    counting half); equally the mean of the negatives' ``V01(y) = P(pos > y) +
    P(pos = y) / 2``.  DeLong, DeLong & Clarke-Pearson (1988) estimate its
    variance from these structural components::

        var(AUC) = S10 / m + S01 / n,
        S10 = sum_i (V10_i - AUC)^2 / (m - 1),  S01 = sum_j (V01_j - AUC)^2 / (n - 1)

    with ``m`` positives and ``n`` negatives; for several score columns the same
    sums with cross products give the covariance matrix.  The placements come
    from the two classes' sorted scores (Sun & Xu 2014: midranks, here as
    ``searchsorted`` counts of the positives among the negatives and cumulative
    counts back), so the cost is that of the two sorts.  The interval is
    ``AUC +- z * sqrt(var)`` clipped to [0, 1], and the paired test of two
    columns is ``z = (AUC_a - AUC_b) / sqrt(var_a + var_b - 2 cov_ab)`` with a
    two-sided normal p-value and the interval ``difference +- z * sd``: pROC's
    ``var``, ``ci.auc`` and ``roc.test(method="delong")``.  Unlike pROC, the
    direction is never flipped: higher scores mean positive, as in
    :func:`precall.roc_auc`.  DeLong takes no sample weights (pROC neither); use
    the bootstrap for weighted data.

Bootstrap (any metric)
    :func:`bootstrap_ci` and :func:`bootstrap_test` resample the rows with
    replacement (``stratified=True``: within each class of a 1-D ``y_true``, so
    every replicate keeps the class counts; multi-label rows are resampled
    without strata).  For precall's ``average_precision`` (every convention,
    binary or macro/weighted over classes) and ``roc_auc`` (full or partial,
    binary or one-vs-rest macro/weighted) the input is sorted once and each
    replicate is a vector of integer counts over the sorted runs, so a
    replicate costs O(n) and no sort (:mod:`precall._resample`): it is the
    metric of the original rows weighted by the number of times each was
    drawn (times ``sample_weight``).  Other metrics (micro or samples
    averages, one-vs-one, any callable) are called on each resample.

    Degenerate replicates: a replicate on which the metric is undefined (a
    class with no positives, or for ROC-AUC no negatives; a callable returning
    NaN or raising ``ValueError``) is left out of the interval and counted in
    ``n_degenerate``, as pROC drops its NA replicates.  Stratified resampling of
    binary and multi-class data never produces one.

    Intervals: ``"percentile"`` takes the ``alpha/2`` and ``1 - alpha/2``
    quantiles of the replicates (linear interpolation, ``numpy.quantile``);
    ``"bca"`` is Efron's bias-corrected and accelerated interval (Efron &
    Tibshirani 1993, 14.3), the bias from the share of replicates below the
    estimate (ties counting half) and the acceleration from a jackknife:
    leave-one-out up to 2000 rows, else 1000 random groups of rows.  Both
    follow ``scipy.stats.bootstrap``; without strata and in one block the draws
    are its draws (``rng.integers(0, n, (n_resamples, n))``).  The paired test
    reports ``z = difference / sd(replicate differences)`` with a two-sided
    normal p-value (pROC's bootstrap ``roc.test``) and the interval of the
    differences.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, Callable, Iterator

import numpy as np

from .. import metrics
from .._core.steps import Steps
from .._core.conventions import ap as kernel_ap, roc_auc as kernel_roc_auc
from .._core.undefined import undefined
from ._resample import (
    Draws,
    RankedColumn,
    draw_blocks,
    jackknife_description,
    jackknife_groups,
    leave_out_steps,
    rank_column,
    resample_steps,
)
from .._core.validate import (
    BinaryInput,
    check_binary,
    check_choice,
    check_multi,
    check_on_undefined,
    check_probability,
    is_multi,
)

__all__ = [
    "BOOTSTRAP_METHODS",
    "BootstrapResult",
    "ConfidenceInterval",
    "DelongCovariance",
    "PairedComparison",
    "bootstrap_ci",
    "bootstrap_test",
    "roc_auc_ci",
    "roc_auc_covariance",
    "roc_auc_test",
    "roc_auc_variance",
]

_NORMAL = NormalDist()
BOOTSTRAP_METHODS: tuple[str, ...] = ("percentile", "bca")


# ---------------------------------------------------------------------------
# results
@dataclass(frozen=True)
class ConfidenceInterval:
    """A point estimate with a two-sided confidence interval.

    Attributes
    ----------
    estimate : float
        The metric on the data.
    low, high : float
        The interval's bounds.
    level : float
        Its confidence level (0.95 for 95%).
    method : str
        ``"delong"``, ``"percentile"`` or ``"bca"``.
    standard_error : float
        DeLong's ``sqrt(var)``, or the standard deviation of the bootstrap
        replicates.
    """

    estimate: float
    low: float
    high: float
    level: float
    method: str
    standard_error: float

    def __iter__(self) -> Iterator[float]:
        """``low, high = interval``."""
        return iter((self.low, self.high))

    def __str__(self) -> str:
        return (
            f"{self.estimate:.6g} [{self.low:.6g}, {self.high:.6g}] "
            f"({self.level:.4g} {self.method}, SE {self.standard_error:.3g})"
        )


@dataclass(frozen=True)
class BootstrapResult(ConfidenceInterval):
    """A bootstrap confidence interval and the replicates behind it.

    Attributes
    ----------
    replicates : ndarray of shape (n_resamples,)
        The metric on each resample, in draw order; NaN for degenerate ones.
    n_resamples : int
        Resamples drawn.
    n_degenerate : int
        Resamples on which the metric was undefined, left out of the interval.
    stratified : bool
        Whether rows were resampled within classes.
    reuses_sort : bool
        True when replicates were counted over the one sort of the input;
        False when the metric was called on every resample.
    bias_correction, acceleration : float or None
        BCa's ``z0`` and ``a`` (None for the percentile interval).
    jackknife : str or None
        How BCa's jackknife split the rows.
    metric : str
        The metric and its options.
    """

    replicates: np.ndarray = field(repr=False)
    n_resamples: int
    n_degenerate: int
    stratified: bool
    reuses_sort: bool
    bias_correction: float | None
    acceleration: float | None
    jackknife: str | None
    metric: str

    def __str__(self) -> str:
        return (
            f"{self.metric}: {ConfidenceInterval.__str__(self)}; "
            f"{self.n_resamples} resamples, {self.n_degenerate} degenerate"
        )


@dataclass(frozen=True)
class PairedComparison:
    """Two models scored on the same samples: their metrics, the difference,
    its confidence interval and a two-sided test of no difference.

    Attributes
    ----------
    estimate_a, estimate_b : float
        The metric of each model.
    difference : float
        ``estimate_a - estimate_b``.
    low, high : float
        Confidence interval of the difference.
    level : float
        Its confidence level.
    statistic : float
        ``z = difference / standard_error``.
    p_value : float
        Two-sided normal p-value of ``z``.
    standard_error : float
        DeLong's standard deviation of the difference, or the standard
        deviation of the replicate differences.
    method : str
        ``"delong"``, ``"percentile"`` or ``"bca"`` (the interval of a bootstrap).
    metric : str
        The metric and its options.
    n_resamples, n_degenerate : int or None
        For the bootstrap: resamples drawn, and those left out as degenerate.
    replicates : ndarray or None
        For the bootstrap: the replicate differences (NaN where degenerate).
    """

    estimate_a: float
    estimate_b: float
    difference: float
    low: float
    high: float
    level: float
    statistic: float
    p_value: float
    standard_error: float
    method: str
    metric: str
    n_resamples: int | None = None
    n_degenerate: int | None = None
    replicates: np.ndarray | None = field(default=None, repr=False)

    def __str__(self) -> str:
        return (
            f"{self.metric}: A {self.estimate_a:.6g}, B {self.estimate_b:.6g}, "
            f"A - B {self.difference:.6g} [{self.low:.6g}, {self.high:.6g}] "
            f"({self.level:.4g} {self.method}); z = {self.statistic:.4g}, "
            f"p = {self.p_value:.4g}"
        )


@dataclass(frozen=True)
class DelongCovariance:
    """DeLong's AUCs of several score columns and their covariance matrix.

    Attributes
    ----------
    auc : ndarray of shape (k,)
    covariance : ndarray of shape (k, k)
        ``covariance[i, i]`` is the variance of column i's AUC.
    n_pos, n_neg : int
    """

    auc: np.ndarray
    covariance: np.ndarray
    n_pos: int
    n_neg: int


# ---------------------------------------------------------------------------
# normal-theory helpers
def _check_level(level: Any) -> float:
    value = check_probability(level, "level")
    if value >= 1:
        raise ValueError(f"`level` must be in (0, 1), e.g. 0.95; got {level!r}")
    return value


def _two_sided_p(z: float) -> float:
    if np.isnan(z):
        return float("nan")
    return 2.0 * _NORMAL.cdf(-abs(z))


def _normal_interval(center: float, sd: float, level: float) -> tuple[float, float]:
    half = _NORMAL.inv_cdf(0.5 + level / 2) * sd
    return center - half, center + half


def _z_statistic(difference: float, sd: float) -> float:
    if sd > 0:
        return difference / sd
    return 0.0 if difference == 0 else float("nan")  # identical models: z = 0 (pROC)


# ---------------------------------------------------------------------------
# DeLong
def _search_negatives(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each positive (``p`` and ``q`` sorted increasingly): the negatives
    below it (``lo``) and at or below it (``hi``); ``hi`` is ``lo`` when no
    positive shares a score with a negative."""
    n = q.shape[0]
    lo = np.searchsorted(q, p, side="left")
    inside = lo < n
    tied = np.zeros(p.shape[0], dtype=bool)
    tied[inside] = q[lo[inside]] == p[inside]
    if not tied.any():
        return lo, lo
    hi = lo.copy()
    hi[tied] = np.searchsorted(q, p[tied], side="right")
    return lo, hi


def _sorted_placements(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Placements from the positives' and the negatives' scores, each sorted
    increasingly: V10 of each positive and V01 of each negative (in those sorted
    orders), and the AUC as an exact ratio of counts.

    Only the positives are searched among the negatives.  A negative at index j
    has ``#{i: hi_i <= j}`` positives below it and ``#{i: lo_i <= j}`` at or
    below it: two cumulative ``bincount``s, O(n + m log n) in all.
    """
    m, n = p.shape[0], q.shape[0]
    lo, hi = _search_negatives(p, q)
    twice_below = lo + hi  # negatives below each positive, ties counting half, times 2
    pos_below = np.cumsum(np.bincount(hi, minlength=n + 1)[:n])
    pos_at_or_below = pos_below if hi is lo else np.cumsum(np.bincount(lo, minlength=n + 1)[:n])
    twice_above = 2 * m - pos_below - pos_at_or_below  # positives above each negative, times 2
    auc = float(twice_below.sum()) / (2.0 * m * n)
    return twice_below / (2.0 * n), twice_above / (2.0 * m), auc


def _sorted_variance(p: np.ndarray, q: np.ndarray) -> tuple[float, float]:
    """AUC and DeLong variance from the sorted classes, in O(m) memory beyond the sort.

    The negatives' placements take only 2m + 1 values: with ``E`` the sorted
    union of every ``lo_i`` and ``hi_i``, the negatives at indices
    ``E[t-1] <= j < E[t]`` all have ``2m - t`` (twice their positives above), so
    their sum of squares is a sum over those 2m + 1 segments, weighted by length.
    """
    m, n = p.shape[0], q.shape[0]
    lo, hi = _search_negatives(p, q)
    twice_below = lo + hi
    auc = float(twice_below.sum()) / (2.0 * m * n)
    d10 = twice_below / (2.0 * n) - auc
    edges = np.sort(np.concatenate([lo, hi]))
    length = np.diff(edges, prepend=0, append=n)  # negatives per segment t = 0..2m
    d01 = 1.0 - np.arange(2 * m + 1) / (2.0 * m) - auc
    variance = float(d10 @ d10) / ((m - 1) * m) + float(length @ (d01 * d01)) / ((n - 1) * n)
    return auc, variance


_ONE_CLASS_DELONG = (
    "DeLong's variance needs at least two positives and two negatives; got {m} "
    "positive(s) and {n} negative(s). The result is NaN"
)


def _split_sorted(data: BinaryInput) -> tuple[np.ndarray, np.ndarray]:
    p = data.scores[data.positive]
    q = data.scores[~data.positive]
    p.sort()
    q.sort()
    return p, q


def _delong(data: BinaryInput, policy: Any) -> tuple[float, float]:
    """AUC and DeLong variance of validated, unweighted binary input."""
    p, q = _split_sorted(data)
    m, n = p.shape[0], q.shape[0]
    if m < 2 or n < 2:
        auc = float("nan")
        if m and n:
            lo, hi = _search_negatives(p, q)
            auc = float((lo + hi).sum()) / (2.0 * m * n)
        value = undefined(
            "DeLong variance", _ONE_CLASS_DELONG.format(m=m, n=n), float("nan"), policy, stacklevel=4
        )
        return auc, value
    return _sorted_variance(p, q)


def _binary_unweighted(y_true: Any, y_score: Any, pos_label: Any) -> BinaryInput:
    return check_binary(y_true, y_score, None, pos_label, pos_label_rule="greater")


def roc_auc_variance(
    y_true: Any, y_score: Any, *, pos_label: Any = None, on_undefined: Any = "warn"
) -> float:
    """DeLong's variance of the ROC-AUC (pROC's ``var(roc)``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_score : array-like of shape (n_samples,)
        Scores; higher means more likely positive.
    pos_label : label, default=None
        The positive label; None takes the greater of two labels, as
        :func:`precall.roc_auc`.
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        With fewer than two positives or negatives the variance is undefined:
        NaN with an :class:`~precall.UndefinedMetricWarning` by default.

    Returns
    -------
    float

    Examples
    --------
    >>> from precall import stats
    >>> round(stats.roc_auc_variance([0, 0, 1, 0, 1, 1], [0.1, 0.3, 0.35, 0.4, 0.8, 0.9]), 6)
    0.024691
    """
    policy = check_on_undefined(on_undefined)
    return _delong(_binary_unweighted(y_true, y_score, pos_label), policy)[1]


def roc_auc_covariance(y_true: Any, y_scores: Any, *, pos_label: Any = None) -> DelongCovariance:
    """DeLong's covariance matrix of the AUCs of several score columns on the same samples.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_scores : array-like of shape (n_samples, k)
        One column of scores per model.
    pos_label : label, default=None
        As in :func:`roc_auc_variance`.

    Returns
    -------
    DelongCovariance

    Examples
    --------
    >>> from precall import stats
    >>> y = [0, 0, 1, 0, 1, 1]
    >>> s = [[0.1, 0.2], [0.3, 0.6], [0.35, 0.5], [0.4, 0.3], [0.8, 0.7], [0.9, 0.4]]
    >>> cov = stats.roc_auc_covariance(y, s)
    >>> cov.auc.round(4), cov.covariance.round(4)
    (array([0.8889, 0.7778]), array([[ 0.0247, -0.0062],
           [-0.0062,  0.0617]]))
    """
    matrix = np.asarray(y_scores)
    if matrix.ndim != 2:
        raise ValueError(
            "`y_scores` must be 2-D, one column of scores per model (n_samples, k); got "
            f"an array of shape {matrix.shape}"
        )
    columns = [_binary_unweighted(y_true, matrix[:, j], pos_label) for j in range(matrix.shape[1])]
    k = len(columns)
    positive = columns[0].positive
    m, n = int(positive.sum()), int((~positive).sum())
    if m < 2 or n < 2:
        raise ValueError(_ONE_CLASS_DELONG.format(m=m, n=n).replace("The result is NaN", "Nothing to estimate"))
    v10 = np.empty((m, k))
    v01 = np.empty((n, k))
    auc = np.empty(k)
    for j, data in enumerate(columns):
        p, q = data.scores[positive], data.scores[~positive]
        p_order, q_order = np.argsort(p), np.argsort(q)  # samples stay aligned across columns
        v10_sorted, v01_sorted, auc[j] = _sorted_placements(p[p_order], q[q_order])
        v10[p_order, j] = v10_sorted
        v01[q_order, j] = v01_sorted
    v10 -= auc
    v01 -= auc
    covariance = (v10.T @ v10) / ((m - 1) * m) + (v01.T @ v01) / ((n - 1) * n)
    return DelongCovariance(auc, covariance, m, n)


def roc_auc_ci(
    y_true: Any,
    y_score: Any,
    *,
    level: float = 0.95,
    method: str = "delong",
    pos_label: Any = None,
    sample_weight: Any = None,
    n_resamples: int = 2000,
    stratified: bool = True,
    random_state: Any = None,
    on_undefined: Any = "warn",
) -> ConfidenceInterval:
    """Confidence interval of the ROC-AUC: DeLong (pROC's ``ci.auc``) or a bootstrap.

    Parameters
    ----------
    y_true, y_score, pos_label
        As in :func:`precall.roc_auc` (binary input).
    level : float, default=0.95
        Confidence level.
    method : {"delong", "percentile", "bca"}, default="delong"
        ``"delong"``: ``AUC +- z * sqrt(var)``, clipped to [0, 1] as pROC
        does.  ``"percentile"``/``"bca"``: :func:`bootstrap_ci` of
        :func:`precall.roc_auc`.
    sample_weight, n_resamples, stratified, random_state
        Bootstrap only (DeLong takes no weights).
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        DeLong: fewer than two positives or negatives gives NaN bounds with a
        warning by default.

    Returns
    -------
    ConfidenceInterval (a :class:`BootstrapResult` for the bootstrap)

    Examples
    --------
    >>> from precall import stats
    >>> ci = stats.roc_auc_ci([0, 0, 1, 0, 1, 1], [0.1, 0.3, 0.35, 0.4, 0.8, 0.9])
    >>> round(ci.estimate, 4), round(ci.low, 4), round(ci.high, 4)
    (0.8889, 0.5809, 1.0)
    """
    check_choice(method, "method", ("delong", *BOOTSTRAP_METHODS))
    level = _check_level(level)
    if method != "delong":
        metric = metrics.roc_auc
        if pos_label is not None:
            metric = functools.partial(metrics.roc_auc, pos_label=pos_label)
        return bootstrap_ci(
            metric, y_true, y_score, sample_weight=sample_weight, n_resamples=n_resamples,
            level=level, method=method, stratified=stratified, random_state=random_state,
        )
    if sample_weight is not None:
        raise TypeError(
            "`sample_weight` is not supported by DeLong's method (pROC neither); use "
            "method='percentile' or 'bca' for a weighted bootstrap"
        )
    policy = check_on_undefined(on_undefined)
    auc, variance = _delong(_binary_unweighted(y_true, y_score, pos_label), policy)
    sd = float(np.sqrt(variance))
    low, high = _normal_interval(auc, sd, level)
    return ConfidenceInterval(auc, max(low, 0.0), min(high, 1.0), level, "delong", sd)


def roc_auc_test(
    y_true: Any, score_a: Any, score_b: Any, *, level: float = 0.95, pos_label: Any = None
) -> PairedComparison:
    """DeLong's test of two correlated ROC-AUCs (pROC's ``roc.test(method="delong")``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels, shared by both models.
    score_a, score_b : array-like of shape (n_samples,)
        The two models' scores on the same samples.
    level : float, default=0.95
        Confidence level of the difference's interval.
    pos_label : label, default=None
        As in :func:`roc_auc_variance`.

    Returns
    -------
    PairedComparison

    Examples
    --------
    >>> from precall import stats
    >>> y = [0, 0, 1, 0, 1, 1, 0, 1]
    >>> t = stats.roc_auc_test(y, [.1, .3, .35, .4, .8, .9, .2, .6], [.2, .1, .5, .3, .7, .4, .6, .3])
    >>> round(t.difference, 4), round(t.statistic, 3), round(t.p_value, 3)
    (0.1562, 0.707, 0.48)
    """
    level = _check_level(level)
    a, b = np.asarray(score_a), np.asarray(score_b)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(
            f"`score_a` and `score_b` must be 1-D score arrays; got shapes {a.shape} and {b.shape}"
        )
    if a.shape != b.shape:
        raise ValueError(
            f"`score_a` and `score_b` must have the same length (the same samples); got "
            f"{a.shape[0]} and {b.shape[0]}"
        )
    cov = roc_auc_covariance(y_true, np.column_stack([a, b]), pos_label=pos_label)
    difference = float(cov.auc[0] - cov.auc[1])
    c = cov.covariance
    sd = float(np.sqrt(max(c[0, 0] + c[1, 1] - 2 * c[0, 1], 0.0)))
    z = _z_statistic(difference, sd)
    low, high = _normal_interval(difference, sd, level)
    return PairedComparison(
        float(cov.auc[0]), float(cov.auc[1]), difference, low, high, level, z,
        _two_sided_p(z), sd, "delong", "roc_auc",
    )


# ---------------------------------------------------------------------------
# bootstrap: which metric, and how each replicate is computed
# precall's own metrics, counted over one sort (by module and name: one function per metric)
_KINDS = {"average_precision": "ap", "roc_auc": "roc"}
_NAMED: dict[str, Callable[..., Any]] = {
    "average_precision": metrics.average_precision,
    "roc_auc": metrics.roc_auc,
}



@dataclass(frozen=True)
class _Metric:
    func: Callable[..., Any]
    options: dict[str, Any]
    kind: str  # "ap", "roc" or "callable"
    name: str


def _resolve_metric(metric: Any) -> _Metric:
    if isinstance(metric, str):
        if metric not in _NAMED:
            raise ValueError(
                f"`metric` must be a precall metric function or one of "
                f"{', '.join(repr(k) for k in _NAMED)}; got {metric!r}"
            )
        metric = _NAMED[metric]
    if not callable(metric):
        raise TypeError(
            "`metric` must be a callable metric(y_true, y_score, ...) such as "
            f"precall.average_precision, or its name; got {metric!r}"
        )
    func, options = metric, {}
    while isinstance(func, functools.partial):
        if func.args:
            raise TypeError(
                "`metric` as a functools.partial must bind options by keyword "
                "(e.g. partial(precall.average_precision, method='voc2007')); got "
                f"positional arguments {func.args!r}"
            )
        options = {**func.keywords, **options}
        func = func.func
    kind = _KINDS.get(getattr(func, "__qualname__", ""), "callable") if getattr(func, "__module__", "") == \
        metrics.__name__ else "callable"
    name = getattr(func, "__name__", type(func).__name__)
    if options:
        name += "(" + ", ".join(f"{k}={v!r}" for k, v in options.items()) + ")"
    return _Metric(func, options, kind, name)


@dataclass(frozen=True)
class _Counted:
    """A metric computed from per-run counts over one sort of each column."""

    columns: list[RankedColumn]
    value: Callable[[list[Steps]], np.ndarray]


_AP_OPTIONS = {"method", "ties", "recall_grid", "pos_label", "average", "labels", "on_undefined"}
_ROC_OPTIONS = {"max_fpr", "pos_label", "average", "multi_class", "labels", "on_undefined"}


def _counted(metric: _Metric, y_true: Any, y_score: Any, weight: Any) -> _Counted | None:
    """The counted form of a precall metric, or None where it has none."""
    opts = metric.options
    if metric.kind == "ap" and set(opts) <= _AP_OPTIONS:
        ties = opts.get("ties", "group")
        method, grid = opts.get("method", "step"), opts.get("recall_grid", "reference")

        def one(r: Steps) -> np.ndarray:
            return kernel_ap(r, method, grid)
    elif metric.kind == "roc" and set(opts) <= _ROC_OPTIONS and opts.get("multi_class", "ovr") == "ovr":
        ties, max_fpr = "group", opts.get("max_fpr")

        def one(r: Steps) -> np.ndarray:
            return kernel_roc_auc(r, max_fpr)
    else:
        return None
    if not is_multi(y_true, y_score, opts.get("labels")):
        rule = "greater" if metric.kind == "roc" else "strict"
        data = check_binary(y_true, y_score, weight, opts.get("pos_label"), pos_label_rule=rule)
        return _Counted([rank_column(data.scores, data.positive, ties)], lambda steps: one(steps[0]))
    average = opts.get("average", "macro")
    if average not in ("macro", "weighted"):
        return None
    multi = check_multi(y_true, y_score, weight, opts.get("labels"))
    undefined = ~multi.positive.any(axis=0)
    if metric.kind == "roc":
        undefined |= multi.positive.all(axis=0)
    if undefined.any():
        raise ValueError(
            f"the metric is undefined for class(es) {multi.classes[undefined].tolist()!r} "
            "of the data (no positives, or for ROC-AUC no negatives), so it cannot be "
            "bootstrapped; leave those classes out of `labels`"
        )
    columns = [
        rank_column(multi.scores[:, c], multi.positive[:, c], ties) for c in range(multi.scores.shape[1])
    ]

    def averaged(steps: list[Steps]) -> np.ndarray:
        values = np.column_stack([one(r) for r in steps])
        if average == "macro":
            return values.mean(axis=1)  # a NaN column makes the replicate NaN
        support = np.column_stack([r.n_pos for r in steps])
        return (values * support).sum(axis=1) / support.sum(axis=1)

    return _Counted(columns, averaged)


def _call(metric: _Metric, y_true: Any, y_score: Any, weight: Any) -> float:
    kwargs = dict(metric.options)
    if metric.kind != "callable":
        kwargs["on_undefined"] = "nan"  # undefined on a replicate: degenerate
    if weight is not None:
        kwargs["sample_weight"] = weight
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = metric.func(y_true, y_score, **kwargs)
    except ValueError:
        return float("nan")
    value = np.asarray(value, dtype=np.float64)
    if value.ndim != 0:
        raise TypeError(
            "`metric` must return one number; got an array of shape "
            f"{value.shape} (for per-class values bootstrap each class separately)"
        )
    return float(value)


@dataclass(frozen=True)
class _Rows:
    """The rows being resampled (zero-weight rows set aside) and their strata."""

    y_true: np.ndarray
    weight: np.ndarray | None
    keep: np.ndarray | None  # rows kept from the input (None: all)
    strata: list[np.ndarray] | None

    @property
    def n(self) -> int:
        return int(self.y_true.shape[0])

    def take(self, a: Any) -> np.ndarray:
        arr = np.asarray(a)
        return arr if self.keep is None else arr[self.keep]


def _rows(y_true: Any, sample_weight: Any, stratified: bool) -> _Rows:
    y = np.asarray(y_true)
    keep, weight = None, None
    if sample_weight is not None:
        weight = np.asarray(sample_weight, dtype=np.float64)
        if not (weight > 0).all():
            keep = np.flatnonzero(weight > 0)
            y, weight = y[keep], weight[keep]
    strata = None
    if stratified and y.ndim == 1:
        _, inverse = np.unique(y, return_inverse=True)
        strata = [np.flatnonzero(inverse == c) for c in range(int(inverse.max()) + 1)]
    return _Rows(y, weight, keep, strata)


class _Evaluator:
    """One model's replicate values: counted over one sort, or called per resample."""

    def __init__(self, metric: _Metric, rows: _Rows, y_score: Any) -> None:
        self.metric = metric
        self.rows = rows
        self.y_score = rows.take(y_score)
        self.counted = _counted(metric, rows.y_true, self.y_score, rows.weight)

    def _counted_values(self, steps: list[Steps]) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.counted.value(steps)  # type: ignore[union-attr]

    def resampled(self, draws: Draws) -> np.ndarray:
        w = self.rows.weight
        if self.counted is not None:
            return self._counted_values([resample_steps(c, draws, w) for c in self.counted.columns])
        out = np.empty(draws.m)
        for i, rows in enumerate(draws.rows()):
            rows = np.sort(rows)  # the drawn rows, in input order
            out[i] = _call(self.metric, self.rows.y_true[rows], self.y_score[rows], None if w is None else w[rows])
        return out

    def left_out(self, members: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        w = self.rows.weight
        if self.counted is not None:
            return self._counted_values([leave_out_steps(c, members, sizes, w) for c in self.counted.columns])
        out = np.empty(sizes.shape[0])
        start = 0
        for g, size in enumerate(sizes):
            keep = np.ones(self.rows.n, dtype=bool)
            keep[members[start : start + size]] = False
            start += size
            out[g] = _call(self.metric, self.rows.y_true[keep], self.y_score[keep], None if w is None else w[keep])
        return out


def _check_resampling(n_resamples: Any, method: Any, stratified: Any) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 2:
        raise ValueError(f"`n_resamples` must be an integer >= 2, e.g. 2000; got {n_resamples!r}")
    check_choice(method, "method", BOOTSTRAP_METHODS)
    if not isinstance(stratified, (bool, np.bool_)):
        raise TypeError(f"`stratified` must be True or False; got {stratified!r}")


def _estimate(metric: _Metric, y_true: Any, y_score: Any, sample_weight: Any) -> float:
    kwargs = dict(metric.options)
    if sample_weight is not None:
        kwargs["sample_weight"] = sample_weight
    value = np.asarray(metric.func(y_true, y_score, **kwargs), dtype=np.float64)
    if value.ndim != 0:
        raise TypeError(
            "`metric` must return one number; got an array of shape "
            f"{value.shape} (average=None gives per-class values: bootstrap a scalar average)"
        )
    if np.isnan(value):
        raise ValueError(
            f"{metric.name} is undefined (NaN) on the input, so it cannot be bootstrapped"
        )
    return float(value)


def _percentile_of_score(values: np.ndarray, score: float) -> float:
    """Share of ``values`` below ``score``, ties counting half (as scipy's BCa)."""
    return float((np.count_nonzero(values < score) + np.count_nonzero(values <= score)) / (2 * values.size))


def _interval(
    estimate: float, replicates: np.ndarray, jackknife: np.ndarray | None, level: float, method: str
) -> tuple[float, float, float | None, float | None]:
    """Bounds (and BCa's z0 and a) from the finite replicates."""
    finite = replicates[~np.isnan(replicates)]
    if finite.size < 2:
        raise ValueError(
            f"only {finite.size} of {replicates.size} resamples gave a defined value; "
            "use stratified=True or more data"
        )
    alpha = (1 - level) / 2
    if method == "percentile":
        low, high = np.quantile(finite, [alpha, 1 - alpha])
        return float(low), float(high), None, None
    assert jackknife is not None
    share = _percentile_of_score(finite, estimate)
    jack = jackknife[~np.isnan(jackknife)]
    d = jack.mean() - jack
    denominator = float(np.sum(d * d)) ** 1.5
    a = float(np.sum(d * d * d)) / (6.0 * denominator) if denominator > 0 else 0.0
    if share <= 0 or share >= 1:
        warnings.warn(
            "The BCa interval is undefined: every replicate lies on one side of the "
            "estimate. Its bounds are NaN; use method='percentile'",
            RuntimeWarning,
            stacklevel=4,
        )
        return float("nan"), float("nan"), float(np.copysign(np.inf, share - 0.5)), a
    z0 = _NORMAL.inv_cdf(share)
    bounds = []
    for z in (_NORMAL.inv_cdf(alpha), _NORMAL.inv_cdf(1 - alpha)):
        num = z0 + z
        bounds.append(_NORMAL.cdf(z0 + num / (1 - a * num)))
    low, high = np.quantile(finite, bounds)
    return float(low), float(high), z0, a


def _jackknife(evaluators: list[_Evaluator], rng: np.random.Generator, n: int) -> list[np.ndarray]:
    parts: list[list[np.ndarray]] = [[] for _ in evaluators]
    for members, sizes in jackknife_groups(rng, n):
        for part, ev in zip(parts, evaluators):
            part.append(ev.left_out(members, sizes))
    return [np.concatenate(p) for p in parts]


def _replicates(
    evaluators: list[_Evaluator], rng: np.random.Generator, rows: _Rows, n_resamples: int
) -> list[np.ndarray]:
    parts: list[list[np.ndarray]] = [[] for _ in evaluators]
    for draws in draw_blocks(rng, rows.n, n_resamples, rows.strata):
        for part, ev in zip(parts, evaluators):
            part.append(ev.resampled(draws))
    return [np.concatenate(p) for p in parts]


def bootstrap_ci(
    metric: Any,
    y_true: Any,
    y_score: Any,
    *,
    sample_weight: Any = None,
    n_resamples: int = 2000,
    level: float = 0.95,
    method: str = "percentile",
    stratified: bool = True,
    random_state: Any = None,
) -> BootstrapResult:
    """Bootstrap confidence interval of any precall metric (or any metric callable).

    Parameters
    ----------
    metric : callable or str
        ``precall.average_precision`` or ``precall.roc_auc`` (their names work
        too), options bound with ``functools.partial`` (e.g.
        ``partial(precall.average_precision, method="voc2007", ties="stable")``),
        or any ``metric(y_true, y_score[, sample_weight=...])`` returning a
        number.  precall's AP (every convention; binary, or macro/weighted
        over classes) and ROC-AUC (full or ``max_fpr``; binary, or one-vs-rest
        macro/weighted) are counted over one sort; anything else is called on
        each resample.
    y_true, y_score
        As the metric takes them (binary, multi-class or multi-label).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative row weights; zero-weight rows are set aside before
        resampling.
    n_resamples : int, default=2000
    level : float, default=0.95
    method : {"percentile", "bca"}, default="percentile"
    stratified : bool, default=True
        Resample within each class of a 1-D ``y_true`` (multi-label input is
        always resampled by rows without strata).
    random_state : None, int or numpy.random.Generator
        Seed or generator; the same one gives the same result.

    Returns
    -------
    BootstrapResult

    Examples
    --------
    >>> import functools, precall
    >>> from precall import stats
    >>> y = [0, 0, 1, 0, 1, 1, 0, 1, 1, 1]
    >>> s = [0.65, 0.1, 0.15, 0.43, 0.97, 0.24, 0.82, 0.7, 0.32, 0.84]
    >>> ci = stats.bootstrap_ci(functools.partial(precall.average_precision, method="voc2010"),
    ...                         y, s, n_resamples=500, random_state=0)
    >>> round(ci.estimate, 6), ci.low < ci.estimate < ci.high, ci.n_degenerate
    (0.791667, True, 0)
    """
    _check_resampling(n_resamples, method, stratified)
    level = _check_level(level)
    m = _resolve_metric(metric)
    estimate = _estimate(m, y_true, y_score, sample_weight)
    rng = np.random.default_rng(random_state)
    rows = _rows(y_true, sample_weight, bool(stratified))
    ev = _Evaluator(m, rows, y_score)
    (replicates,) = _replicates([ev], rng, rows, int(n_resamples))
    jack = _jackknife([ev], rng, rows.n)[0] if method == "bca" else None
    low, high, z0, a = _interval(estimate, replicates, jack, level, method)
    finite = replicates[~np.isnan(replicates)]
    return BootstrapResult(
        estimate, low, high, level, method, float(np.std(finite, ddof=1)),
        replicates, int(n_resamples), int(replicates.size - finite.size), rows.strata is not None,
        ev.counted is not None, z0, a, jackknife_description(rows.n) if method == "bca" else None,
        m.name,
    )


def bootstrap_test(
    metric: Any,
    y_true: Any,
    score_a: Any,
    score_b: Any,
    *,
    sample_weight: Any = None,
    n_resamples: int = 2000,
    level: float = 0.95,
    method: str = "percentile",
    stratified: bool = True,
    random_state: Any = None,
) -> PairedComparison:
    """Paired bootstrap comparison of two models scored on the same samples.

    Both models are evaluated on the same resampled rows; the interval is the
    bootstrap interval (``method``) of the difference ``metric(A) -
    metric(B)``, and ``z`` the difference over the replicate differences'
    standard deviation, with a two-sided normal p-value (pROC's bootstrap
    ``roc.test``).  Parameters as :func:`bootstrap_ci`.

    Returns
    -------
    PairedComparison

    Examples
    --------
    >>> import precall
    >>> from precall import stats
    >>> y = [0, 0, 1, 0, 1, 1, 0, 1, 1, 1]
    >>> a = [0.65, 0.1, 0.15, 0.43, 0.97, 0.24, 0.82, 0.7, 0.32, 0.84]
    >>> b = [0.2, 0.1, 0.6, 0.3, 0.9, 0.5, 0.4, 0.8, 0.7, 0.75]
    >>> t = stats.bootstrap_test(precall.roc_auc, y, a, b, n_resamples=500, random_state=0)
    >>> round(t.difference, 4), t.low < t.difference < t.high
    (-0.4167, True)
    """
    _check_resampling(n_resamples, method, stratified)
    level = _check_level(level)
    m = _resolve_metric(metric)
    est_a = _estimate(m, y_true, score_a, sample_weight)
    est_b = _estimate(m, y_true, score_b, sample_weight)
    rng = np.random.default_rng(random_state)
    rows = _rows(y_true, sample_weight, bool(stratified))
    evaluators = [_Evaluator(m, rows, score_a), _Evaluator(m, rows, score_b)]
    rep_a, rep_b = _replicates(evaluators, rng, rows, int(n_resamples))
    diffs = rep_a - rep_b
    jack = None
    if method == "bca":
        jack_a, jack_b = _jackknife(evaluators, rng, rows.n)
        jack = jack_a - jack_b
    difference = est_a - est_b
    low, high, _, _ = _interval(difference, diffs, jack, level, method)
    finite = diffs[~np.isnan(diffs)]
    sd = float(np.std(finite, ddof=1))
    z = _z_statistic(difference, sd)
    return PairedComparison(
        est_a, est_b, difference, low, high, level, z, _two_sided_p(z), sd, method, m.name,
        int(n_resamples), int(diffs.size - finite.size), diffs,
    )

