"""DeLong's variance, covariance, confidence interval and paired test of ROC-AUCs (pROC's)."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from .. import metrics
from .._core.normal import t_isf, t_two_sided_p, two_sided_p
from .._core.sort import sorted_split
from .._core.undefined import undefined
from .._core.validate import BinaryInput, check_binary, check_choice, check_on_undefined
from .bootstrap import BOOTSTRAP_METHODS, DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_ci
from .results import (
    ConfidenceInterval,
    DelongCovariance,
    PairedComparison,
    UnpairedComparison,
    _check_level,
    _normal_interval,
    _z_statistic,
)

__all__ = ["roc_auc_ci", "roc_auc_covariance", "roc_auc_test", "roc_auc_test_unpaired", "roc_auc_variance",
           "unpaired_delong"]

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


def _delong(data: BinaryInput, policy: Any) -> tuple[float, float]:
    """AUC and DeLong variance of validated, unweighted binary input."""
    p, q = sorted_split(data)
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


def row_placements(positive: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, float]:
    """Every row's placement in row order (``V10`` of a positive: the share of negatives below
    it; ``V01`` of a negative: the share of positives above it; ties counting half) and the
    AUC, as :func:`_sorted_placements` computes them (at least one row of each class)."""
    p_rows, q_rows = np.flatnonzero(positive), np.flatnonzero(~positive)
    p_order = p_rows[np.argsort(scores[p_rows], kind="stable")]
    q_order = q_rows[np.argsort(scores[q_rows], kind="stable")]
    v10, v01, auc = _sorted_placements(scores[p_order], scores[q_order])
    place = np.empty(scores.shape[0])
    place[p_order] = v10
    place[q_order] = v01
    return place, auc


def stratified_variance(terms: np.ndarray, stratum: np.ndarray) -> float:
    """The variance of ``sum(terms)`` when the cases are independent and identically distributed
    within each stratum (``stratum``: ids 0..k-1): ``sum_k n_k * s_k**2``, ``s_k**2`` the sample
    variance (``n_k - 1``) of the stratum's terms; a stratum of one case adds nothing (a stratified
    resample redraws it).  With ``terms`` ``V10 / m`` and ``V01 / n`` and the classes as strata it
    is DeLong's ``S10 / m + S01 / n``."""
    k = int(stratum.max()) + 1 if stratum.size else 0
    count = np.bincount(stratum, minlength=k)
    mean = np.bincount(stratum, weights=terms, minlength=k) / np.maximum(count, 1)
    deviation = terms - mean[stratum]
    squares = np.bincount(stratum, weights=deviation * deviation, minlength=k)
    several = count > 1
    return float(np.sum(count[several] / (count[several] - 1) * squares[several]))


def subset_delong(positive: np.ndarray, scores: np.ndarray, subset: np.ndarray, place: np.ndarray,
                  auc: float) -> tuple[float, float, float, float]:
    """ROC-AUC of the rows ``subset`` (indices) against the AUC of all rows, which contain them.

    ``place`` and ``auc`` are :func:`row_placements` of all rows.  The two AUCs share the subset's
    cases, so their difference is not that of independent samples: each case's share of
    ``AUC_subset - AUC_all`` (to first order, DeLong's structural components) is
    ``V10_subset / m_subset - V10_all / m`` for a positive of the subset, ``V01_subset / n_subset -
    V01_all / n`` for a negative of it, and ``-V10_all / m`` or ``-V01_all / n`` for the other rows;
    the variance is :func:`stratified_variance` over four strata (in the subset or not, by class),
    as a bootstrap stratified the same way draws them.  The log of the ratio likewise, from the
    shares divided by their AUC.  Returns the subset's AUC, the difference, its variance and the
    variance of ``log(AUC_subset / AUC_all)`` (NaN with fewer than two of a class in the subset;
    exactly 0 for a subset of every row).
    """
    pos = positive[subset]
    m_s = int(pos.sum())
    n_s = pos.shape[0] - m_s
    if m_s < 2 or n_s < 2:
        nan = math.nan
        return nan, nan, nan, nan
    own, auc_s = row_placements(pos, scores[subset])
    m = int(positive.sum())
    n = positive.shape[0] - m
    whole = np.where(positive, place / m, place / n)
    part = np.zeros(positive.shape[0])
    part[subset] = np.where(pos, own / m_s, own / n_s)
    inside = np.zeros(positive.shape[0], dtype=np.int64)
    inside[subset] = 2
    stratum = inside + positive
    variance = stratified_variance(part - whole, stratum)
    log_variance = math.nan
    if auc_s > 0 and auc > 0:
        log_variance = stratified_variance(part / auc_s - whole / auc, stratum)
    return auc_s, auc_s - auc, variance, log_variance


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

    See Also
    --------
    roc_auc_ci : the interval built from it.

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

    See Also
    --------
    roc_auc_test : the paired test built from it.

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
    if matrix.shape[1] == 0:
        raise ValueError(
            "`y_scores` must have at least one column, one column of scores per model (n_samples, k); got "
            f"an array of shape {matrix.shape}"
        )
    return _covariance([_binary_unweighted(y_true, matrix[:, j], pos_label) for j in range(matrix.shape[1])])


def _covariance(columns: list[BinaryInput]) -> DelongCovariance:
    """:func:`roc_auc_covariance` of validated columns (the same labels)."""
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
    n_resamples: int = DEFAULT_RESAMPLES,
    stratified: bool = True,
    random_state: Any = DEFAULT_SEED,
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
        Fewer than two positives or negatives: DeLong's variance is undefined
        (NaN bounds with a warning by default; a number is taken as the
        variance), and so is a bootstrap interval (:func:`bootstrap_ci`: NaN
        bounds with a warning by default; a number is taken as both bounds).

    Returns
    -------
    ConfidenceInterval (a :class:`BootstrapResult` for the bootstrap)

    See Also
    --------
    roc_auc_variance : the variance alone.
    bootstrap_ci : intervals for any metric, with weights.

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
            on_undefined=on_undefined,
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
    y_true: Any, score_a: Any, score_b: Any, *, level: float = 0.95, pos_label: Any = None,
    on_undefined: Any = "warn",
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
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        With fewer than two positives or negatives the variance of the
        difference is undefined: the AUCs and their difference are returned
        (NaN without a class) with NaN bounds, statistic and p-value and a
        warning by default; a number is taken as that variance (as in
        :func:`roc_auc_ci`).

    Returns
    -------
    PairedComparison

    See Also
    --------
    bootstrap_test : the paired bootstrap, for any metric.
    roc_auc_covariance : the covariance of several columns.

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
    policy = check_on_undefined(on_undefined)
    columns = [_binary_unweighted(y_true, a, pos_label), _binary_unweighted(y_true, b, pos_label)]
    m = int(columns[0].positive.sum())
    n = columns[0].n_samples - m
    if m < 2 or n < 2:  # no DeLong variance: the AUCs, and the policy's variance of the difference
        estimate_a, estimate_b = (_delong(c, "nan")[0] for c in columns)
        variance = undefined("DeLong variance", _ONE_CLASS_DELONG.format(m=m, n=n), float("nan"), policy,
                             stacklevel=3)
    else:
        cov = _covariance(columns)
        estimate_a, estimate_b = float(cov.auc[0]), float(cov.auc[1])
        c = cov.covariance
        variance = max(c[0, 0] + c[1, 1] - 2 * c[0, 1], 0.0)
    difference = estimate_a - estimate_b
    sd = float(np.sqrt(variance)) if variance >= 0 else float("nan")
    z = _z_statistic(difference, sd)
    low, high = _normal_interval(difference, sd, level)
    return PairedComparison(estimate_a, estimate_b, difference, low, high, level, z, two_sided_p(z), sd, "delong",
                            "roc_auc")




def unpaired_delong(auc_a: float, var_a: float, n_a: int, auc_b: float, var_b: float, n_b: int, level: float
                    ) -> UnpairedComparison:
    """pROC's unpaired DeLong test from each curve's AUC, DeLong variance and sample count."""
    variance = var_a + var_b
    difference = auc_a - auc_b
    if math.isnan(variance) or math.isnan(difference):  # a sample without a DeLong variance (< 2 per class)
        nan = math.nan
        return UnpairedComparison(auc_a, auc_b, difference, nan, nan, level, nan, nan, nan, nan, n_a, n_b)
    sd = math.sqrt(variance) if variance >= 0 else math.nan
    if sd == 0:  # pROC divides by zero here; the degenerate answer
        statistic, df, p = (0.0 if difference == 0 else math.copysign(math.inf, difference)), math.inf, \
            (1.0 if difference == 0 else 0.0)
        return UnpairedComparison(auc_a, auc_b, difference, difference, difference, level, statistic, df, p, 0.0,
                                  n_a, n_b)
    statistic = difference / sd
    df = variance**2 / (var_a**2 / (n_a - 1) + var_b**2 / (n_b - 1))
    half = t_isf((1.0 - level) / 2.0, df) * sd if math.isfinite(sd) else math.nan
    return UnpairedComparison(auc_a, auc_b, difference, difference - half, difference + half, level, statistic, df,
                              t_two_sided_p(statistic, df), sd, n_a, n_b)


def roc_auc_test_unpaired(
    y_true_a: Any, score_a: Any, y_true_b: Any, score_b: Any, *, level: float = 0.95, pos_label: Any = None,
    on_undefined: Any = "warn",
) -> UnpairedComparison:
    """DeLong's test of two ROC-AUCs on independent samples (pROC's ``roc.test(paired = FALSE,
    method = "delong")``): two test sets, or two disjoint slices of one.

    Parameters
    ----------
    y_true_a, score_a : array-like of shape (n_a,)
        The first sample's labels and scores.
    y_true_b, score_b : array-like of shape (n_b,)
        The second sample's (any length; no sample is shared).
    level : float, default=0.95
        Confidence level of the difference's interval.
    pos_label : label, default=None
        As in :func:`roc_auc_variance`, for both samples.
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        A sample with fewer than two positives or negatives has no DeLong
        variance: NaN statistic and p-value, with a warning by default.

    Returns
    -------
    UnpairedComparison
        ``statistic`` is pROC's D, ``df`` its Welch-Satterthwaite degrees of
        freedom, ``p_value`` two-sided from Student's t.

    See Also
    --------
    roc_auc_test : two models on the same samples (paired).

    Examples
    --------
    >>> from precall import stats
    >>> t = stats.roc_auc_test_unpaired([0, 0, 1, 0, 1, 1], [.1, .3, .35, .4, .8, .9],
    ...                                 [0, 1, 0, 1, 0, 1, 1], [.2, .3, .6, .5, .1, .9, .4])
    >>> round(t.difference, 4), round(t.statistic, 4), round(t.df, 2), round(t.p_value, 4)
    (0.1389, 0.4527, 9.57, 0.6609)
    """
    level = _check_level(level)
    policy = check_on_undefined(on_undefined)
    a = _binary_unweighted(y_true_a, score_a, pos_label)
    b = _binary_unweighted(y_true_b, score_b, pos_label)
    auc_a, var_a = _delong(a, policy)
    auc_b, var_b = _delong(b, policy)
    return unpaired_delong(auc_a, var_a, a.n_samples, auc_b, var_b, b.n_samples, level)
