"""Bootstrap confidence intervals and paired tests for any metric, counted over one sort."""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .. import metrics
from .._core.conventions import ap as kernel_ap
from .._core.conventions import roc_auc as kernel_roc_auc
from .._core.steps import Steps
from .._core.validate import check_binary, check_choice, check_multi, is_multi
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
from .results import (
    _NORMAL,
    BootstrapResult,
    PairedComparison,
    _check_level,
    _two_sided_p,
    _z_statistic,
)

__all__ = ["BOOTSTRAP_METHODS", "bootstrap_ci", "bootstrap_test"]

BOOTSTRAP_METHODS: tuple[str, ...] = ("percentile", "bca")

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
    evaluators: list[_Evaluator], rng: np.random.Generator, rows: _Rows, n_resamples: int,
    progress: Callable[[float], None] | None = None,
) -> list[np.ndarray]:
    parts: list[list[np.ndarray]] = [[] for _ in evaluators]
    done = 0
    for draws in draw_blocks(rng, rows.n, n_resamples, rows.strata):
        for part, ev in zip(parts, evaluators):
            part.append(ev.resampled(draws))
        done += draws.m
        if progress is not None:
            progress(done / n_resamples)
    return [np.concatenate(p) for p in parts]


def _check_progress(progress: Any) -> Callable[[float], None] | None:
    if progress is not None and not callable(progress):
        raise TypeError(f"`progress` must be a callable taking the fraction done (0 to 1), or None; got {progress!r}")
    return progress


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
    progress: Any = None,
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
    progress : callable, default=None
        Called with the fraction of resamples done (0 to 1) after each block of
        replicates (a progress bar, or a way to stop: raise from it).

    Returns
    -------
    BootstrapResult

    See Also
    --------
    bootstrap_test : two models on the same resamples.
    roc_auc_ci : DeLong's interval, without resampling.

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
    (replicates,) = _replicates([ev], rng, rows, int(n_resamples), _check_progress(progress))
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
    progress: Any = None,
) -> PairedComparison:
    """Paired bootstrap comparison of two models scored on the same samples.

    Both models are evaluated on the same resampled rows; the interval is the
    bootstrap interval (``method``) of the difference ``metric(A) -
    metric(B)``, and ``z`` the difference over the replicate differences'
    standard deviation, with a two-sided normal p-value (pROC's bootstrap
    ``roc.test``).

    Parameters
    ----------
    metric, y_true, sample_weight, n_resamples, level, method, stratified, random_state, progress
        As in :func:`bootstrap_ci`.
    score_a, score_b : array-like
        The two models' scores on the same samples.

    Returns
    -------
    PairedComparison

    See Also
    --------
    bootstrap_ci : one model.
    roc_auc_test : DeLong's paired test.

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
    rep_a, rep_b = _replicates(evaluators, rng, rows, int(n_resamples), _check_progress(progress))
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


