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

    ``resample="counts"`` (unweighted data, grouped ties, counted metrics)
    draws the counts instead of the rows: per stratum, a multinomial of the
    stratum's size over its cells (the rows of a run of tied scores; for a
    paired test, of a run in each model), which is the row bootstrap's
    distribution at O(cells) per replicate.  When there are more than
    ``max_cells`` cells (continuous scores), consecutive runs are merged into
    score blocks and the blocked statistic's replicates are shifted onto the
    exact estimate (``n_blocks`` of the result; the statistics are in
    :func:`bootstrap_ci`).  :func:`bootstrap_cis` and :func:`bootstrap_tests`
    evaluate several metrics on one set of resamples.

    Degenerate replicates: a replicate on which the metric is undefined (a
    class with no positives, or for ROC-AUC no negatives; a callable returning
    NaN or raising ``ValueError``) is left out of the interval and counted in
    ``n_degenerate``, as pROC drops its NA replicates.  Stratified resampling of
    binary and multi-class data never produces one.  A class of a single row
    (one positive or one negative, of the binary problem or of a class column)
    leaves the interval itself undefined, stratified or not: the resamples only
    repeat that row.  Its bounds then follow ``on_undefined`` (NaN with an
    :class:`~precall.UndefinedMetricWarning` by default), as DeLong's variance
    below two of a class does; so does an undefined BCa interval.  Every result
    records its ``seed`` (the int given as ``random_state``; None for None or a
    generator).

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
    differences.  A difference without spread (sd 0) has ``z = copysign(inf,
    difference)``, as DeLong's paired and unpaired tests (whose p is then 0).
"""


from __future__ import annotations

from .bootstrap import BOOTSTRAP_METHODS, DEFAULT_RESAMPLES, DEFAULT_SEED, MAX_CELLS, RESAMPLE_MODES, bootstrap_ci, bootstrap_cis, bootstrap_test, bootstrap_tests
from .delong import roc_auc_ci, roc_auc_covariance, roc_auc_test, roc_auc_test_unpaired, roc_auc_variance
from .slices import REFERENCES, SliceComparison, SlicePair, compare_slices, holm, slice_seed
from .results import BootstrapResult, ConfidenceInterval, DelongCovariance, PairedComparison, UnpairedComparison

__all__ = [
    "BOOTSTRAP_METHODS",
    "BootstrapResult",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "ConfidenceInterval",
    "DelongCovariance",
    "MAX_CELLS",
    "PairedComparison",
    "REFERENCES",
    "RESAMPLE_MODES",
    "SliceComparison",
    "SlicePair",
    "bootstrap_ci",
    "bootstrap_cis",
    "bootstrap_test",
    "bootstrap_tests",
    "compare_slices",
    "holm",
    "roc_auc_ci",
    "roc_auc_covariance",
    "roc_auc_test",
    "roc_auc_test_unpaired",
    "UnpairedComparison",
    "roc_auc_variance",
    "slice_seed",
]

