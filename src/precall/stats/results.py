"""Result objects of :mod:`precall.stats` and the normal-theory helpers they share."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from .._core import normal
from .._core.validate import check_allocation, check_number, check_numbers

__all__ = ["BootstrapResult", "ConfidenceInterval", "DelongCovariance", "PairedComparison", "UnpairedComparison"]

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
    resample : str
        ``"rows"`` (rows drawn with replacement) or ``"counts"`` (each cell's
        count drawn from its multinomial: the same distribution without weights).
    n_blocks : int or None
        The score blocks the runs were merged into (the most of any column): with
        ``"counts"``, the cells' blocks; with ``"rows"`` (several class columns,
        ``resample="auto"``), each column's runs counted over at most this many
        blocks.  An approximation, the replicates shifted onto the exact
        estimate (see :func:`precall.stats.bootstrap_ci`); None when every run
        of tied scores is counted on its own (exact).
    seed : int, tuple of int or None
        The ``random_state`` given, when it is a seed (an int, or a sequence of
        ints): the same seed on the same data gives the same result.  None when
        ``random_state`` was None (fresh entropy) or a ``Generator``,
        ``BitGenerator`` or ``SeedSequence``, whose state is not recorded; the
        text then says ``"no seed"``.
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
    resample: str = "rows"
    n_blocks: int | None = None
    seed: int | tuple[int, ...] | None = None

    @property
    def resampling(self) -> str:
        """How replicates were drawn, in words (``"counts over 4096 score blocks"``)."""
        return _resampling_text(self.resample, self.n_blocks)

    def __str__(self) -> str:
        return (
            f"{self.metric}: {ConfidenceInterval.__str__(self)}; "
            f"{self.n_resamples} resamples ({self.resampling}), {seed_text(self.seed)}, "
            f"{self.n_degenerate} degenerate"
        )


def seed_text(seed: int | tuple[int, ...] | None) -> str:
    """``"seed 7"``, ``"seed (1, 2)"`` or ``"no seed"`` (None: fresh entropy or a generator)."""
    return "no seed" if seed is None else f"seed {seed}"


def recorded_seed(random_state: Any) -> int | tuple[int, ...] | None:
    """The seed a result records for a checked ``random_state`` (:func:`_check_random_state`):
    an int as given, a sequence of ints as a tuple, None for None, a ``Generator``,
    ``BitGenerator`` or ``SeedSequence``."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, (bool, np.bool_)):
        return int(random_state)
    if isinstance(random_state, (list, tuple, np.ndarray)):  # a sequence of ints (numpy's entropy)
        values = np.asarray(random_state)
        if values.dtype.kind in "iu":
            return tuple(int(v) for v in values.ravel())
    return None


def _resampling_text(resample: str | None, n_blocks: int | None) -> str:
    """``"rows"``, ``"counts"`` (exact) or ``"counts over N score blocks"`` / ``"rows counted
    over N score blocks per column"`` (approximate)."""
    if n_blocks is None:
        return resample or "none"
    if resample == "rows":
        return f"rows counted over {n_blocks} score blocks per column"
    return f"counts over {n_blocks} score blocks"


@dataclass(frozen=True)
class UnpairedComparison:
    """Two ROC-AUCs on independent samples (two test sets, two disjoint slices): DeLong's
    unpaired test, pROC's ``roc.test(paired = FALSE, method = "delong")``.

    Attributes
    ----------
    estimate_a, estimate_b : float
        The AUC of the first and of the second sample; ``difference`` is the first minus the second,
        ``low`` / ``high`` its interval ``difference +- t(df, (1 + level) / 2) * standard_error``
        at ``level``.
    difference, low, high, level : float
    statistic : float
        pROC's ``D = difference / sqrt(V_a + V_b)`` (each V DeLong's variance of one AUC).
    df : float
        Welch-Satterthwaite's ``(V_a + V_b)**2 / (V_a**2 / (n_a - 1) + V_b**2 / (n_b - 1))``
        (n the samples of each curve), as pROC.
    p_value : float
        Two-sided, of Student's t with ``df`` (pROC's ``2 * pt(-abs(D), df)``).
    standard_error : float
        ``sqrt(V_a + V_b)``.
    n_a, n_b : int
        Samples of each curve.
    """

    estimate_a: float
    estimate_b: float
    difference: float
    low: float
    high: float
    level: float
    statistic: float
    df: float
    p_value: float
    standard_error: float
    n_a: int
    n_b: int
    method: str = "delong-unpaired"

    def __str__(self) -> str:
        return (f"AUC {self.estimate_a:.6g} - {self.estimate_b:.6g} = {self.difference:.6g} "
                f"[{self.low:.6g}, {self.high:.6g}] ({self.level:.4g}); D = {self.statistic:.4g}, "
                f"df = {self.df:.4g}, p = {normal.p_text(self.p_value)}")


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
        Two-sided p-value of no difference.  DeLong: the normal p-value of
        ``z``.  Bootstrap: from the same replicates as the interval, the
        smallest ``1 - level`` whose interval (same ``method``) excludes 0, so
        the interval excludes 0 exactly when ``p_value < 1 - level``; it is not
        resolved below ``p_resolution`` (reported as that bound).
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
    resample : str or None
        For the bootstrap: ``"rows"`` or ``"counts"`` (as in :class:`BootstrapResult`).
    n_blocks : int or None
        The score blocks of each model's columns (as in :class:`BootstrapResult`;
        None: exact runs).
    p_method : str
        ``"normal"`` (of ``z``: DeLong) or ``"bootstrap"`` (from the replicates).
    p_resolution : float or None
        For the bootstrap: the smallest p-value the replicates resolve (one over
        the defined replicates); a ``p_value`` at this bound means "at most".
    seed : int, tuple of int or None
        For the bootstrap: the seed given as ``random_state`` (as in
        :class:`BootstrapResult`: None for None or a generator); None for DeLong.

    Notes
    -----
    When the difference's standard error is 0, ``statistic`` is 0 for no
    difference and ``copysign(inf, difference)`` otherwise (DeLong's
    ``p_value`` then 1 or 0), as :class:`UnpairedComparison` and
    :func:`precall.stats.compare_slices` report it.
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
    resample: str | None = None
    n_blocks: int | None = None
    p_method: str = "normal"
    p_resolution: float | None = None
    seed: int | tuple[int, ...] | None = None

    @property
    def resampling(self) -> str:
        """How replicates were drawn, in words (``"none"`` for DeLong)."""
        return _resampling_text(self.resample, self.n_blocks)

    @property
    def p_text(self) -> str:
        """The p-value as text: ``"< 0.0005"`` where the bootstrap does not resolve it, ``"< 1e-323"``
        for 0 (below the smallest double, as the command line prints it)."""
        if self.p_resolution is not None and self.p_value <= self.p_resolution:
            return f"< {self.p_resolution:.2g}"
        if self.p_value == 0:
            return normal.p_text(self.p_value)
        return f"{self.p_value:.4g}"

    def __str__(self) -> str:
        text = (
            f"{self.metric}: A {self.estimate_a:.6g}, B {self.estimate_b:.6g}, "
            f"A - B {self.difference:.6g} [{self.low:.6g}, {self.high:.6g}] "
            f"({self.level:.4g} {self.method}); z = {self.statistic:.4g}, "
            f"p = {self.p_text} ({self.p_method})"
        )
        if self.n_resamples is None:
            return text
        return (f"{text}; {self.n_resamples} resamples ({self.resampling}), {seed_text(self.seed)}, "
                f"{self.n_degenerate} degenerate")


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
    return check_number(level, "level", low=0, high=1, low_open=True, high_open=True,
                        hint="the confidence level, e.g. 0.95")


def _check_resamples(n_resamples: Any, values_per_resample: int, low: int = 2) -> int:
    """``n_resamples``: a whole number >= ``low`` whose replicates (``values_per_resample``
    float64 each) fit in memory."""
    n = check_number(n_resamples, "n_resamples", low=low, integer=True, hint="e.g. 2000")
    check_allocation(n, 8 * values_per_resample, "n_resamples", hint="draw fewer resamples")
    return n


def _check_random_state(random_state: Any) -> Any:
    """A seed numpy's ``default_rng`` takes: None, a non-negative whole number (or a
    sequence of them), a ``SeedSequence``, ``BitGenerator`` or ``Generator``."""
    if random_state is None or isinstance(
            random_state, (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence)):
        return random_state
    hint = "None, a seed such as 0, or a numpy.random.Generator"
    if isinstance(random_state, (list, tuple, np.ndarray)):
        return check_numbers(random_state, "random_state", low=0, integer=True, hint=hint)
    return check_number(random_state, "random_state", low=0, integer=True, hint=hint)


def _normal_interval(center: float, sd: float, level: float) -> tuple[float, float]:
    half = normal.isf((1 - level) / 2) * sd  # 1 - level is exact: no rounding near level = 1
    return center - half, center + half


def _z_statistic(difference: float, sd: float) -> float:
    """``difference / sd``; for ``sd == 0``: 0 for no difference (identical models, pROC's z = 0),
    else ``copysign(inf, difference)`` (a difference with no spread: p = 0, as the unpaired test
    and :func:`precall.stats.compare_slices` report it); NaN where either is NaN."""
    if sd > 0:
        return difference / sd
    if math.isnan(sd) or math.isnan(difference):
        return math.nan
    return 0.0 if difference == 0 else math.copysign(math.inf, difference)


