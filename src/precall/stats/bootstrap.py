"""Bootstrap confidence intervals and paired tests for any metric, counted over one sort."""

from __future__ import annotations

import functools
import math
import os
import sys
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .. import metrics
from ..multiclass import average_values
from .._core import normal
from .._core.metric import MEASURES, Metric
from .._core.steps import Steps, steps_from_counts
from .._core.undefined import undefined
from .._core.validate import (check_binary, check_bool, check_choice, check_multi, check_number, check_on_undefined,
                              is_multi)
from ._resample import (
    CellDesign,
    Draws,
    Multiplicities,
    RankedColumn,
    blocked_column,
    cell_steps,
    column_segments,
    full_steps,
    count_design,
    draw_blocks,
    draw_counts,
    jackknife_description,
    jackknife_groups,
    leave_out_cells,
    leave_out_steps,
    rank_column,
    resample_steps,
)
from .results import (
    BootstrapResult,
    PairedComparison,
    _check_level,
    _check_random_state,
    _check_resamples,
    _z_statistic,
    recorded_seed,
)

__all__ = ["BOOTSTRAP_METHODS", "DEFAULT_RESAMPLES", "DEFAULT_SEED", "MAX_CELLS", "RESAMPLE_MODES", "bootstrap_ci", "bootstrap_cis", "bootstrap_test",
           "bootstrap_tests"]

BOOTSTRAP_METHODS: tuple[str, ...] = ("percentile", "bca")
RESAMPLE_MODES: tuple[str, ...] = ("rows", "counts", "auto")
DEFAULT_RESAMPLES = 2000  # every interval of the package, library and command line
DEFAULT_SEED = 0  # every interval of the package: runs repeat unless a seed (or None) is given
MAX_CELLS = 1 << 15  # resample="counts": cells drawn per replicate (2000 replicates in a few seconds)

# ---------------------------------------------------------------------------
# bootstrap: which metric, and how each replicate is computed
# A precall.Metric value (given, named, or built by a public metric function from its
# options) is counted over one sort; any other callable is called on each resample.
_NAMED: dict[str, Callable[..., Any]] = {
    "average_precision": metrics.average_precision,
    "roc_auc": metrics.roc_auc,
}


@dataclass(frozen=True)
class _Metric:
    value: Metric | None  # the metric value; None for a user callable
    data: dict[str, Any]  # its data options (pos_label, labels, prevalence)
    func: Callable[..., Any] | None  # a user callable (value is None)
    options: dict[str, Any]  # the callable's bound keyword options
    name: str

    @property
    def kind(self) -> str:
        return "callable" if self.value is None else self.value.measure


def _resolve_metric(metric: Any) -> _Metric:
    if isinstance(metric, Metric):
        return _Metric(metric, {}, None, {}, metric.name)
    if isinstance(metric, str):
        if metric not in _NAMED and metric not in MEASURES:
            raise ValueError(
                f"`metric` must be a precall.Metric, a metric function or one of "
                f"{', '.join(repr(k) for k in MEASURES)}; got {metric!r}"
            )
        value = Metric(metric)
        return _Metric(value, {}, None, {}, value.name)
    if not callable(metric):
        raise TypeError(
            "`metric` must be a precall.Metric (precall.metric(...)), a callable metric(y_true, y_score, ...) "
            f"such as precall.average_precision, or its name; got {metric!r}"
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
    build = getattr(func, "precall_metric", None)
    if build is not None and "sample_weight" not in options:
        value, data = build(**options)
        return _Metric(value, data, None, {}, value.name)
    name = getattr(func, "__name__", type(func).__name__)
    if options:
        name += "(" + ", ".join(f"{k}={v!r}" for k, v in options.items()) + ")"
    return _Metric(None, {}, func, options, name)


@dataclass(frozen=True)
class _Counted:
    """A metric computed from per-run counts over one sort of each column."""

    columns: list[RankedColumn]
    value: Callable[[list[Steps]], np.ndarray]
    ties: str
    names: tuple[Any, ...] | None = None  # the class of each column (None: one binary column)


class _RankCache:
    """One sort per distinct (scores, positives, ties) within a call: the metrics of
    one model share their ranked columns (and, with ``resample="counts"``, their cells)."""

    def __init__(self) -> None:
        self._seen: list[tuple[np.ndarray, np.ndarray, str, RankedColumn]] = []

    def __call__(self, scores: np.ndarray, positive: np.ndarray, ties: str) -> RankedColumn:
        for s, p, t, col in self._seen:
            if t == ties and s.shape == scores.shape and np.array_equal(p, positive) and np.array_equal(s, scores):
                return col
        col = rank_column(scores, positive, ties)
        self._seen.append((scores, positive, ties, col))
        return col


def _counted(metric: _Metric, y_true: Any, y_score: Any, weight: Any,
             rank: Callable[[np.ndarray, np.ndarray, str], RankedColumn] = rank_column) -> _Counted | None:
    """The counted form of a metric value: its kernel on each replicate's steps (the class
    columns averaged by :func:`precall.multiclass.average_values`), or None where a replicate
    needs the rows (a user callable, ``prevalence``, the micro / samples / one-vs-one averages)."""
    value = metric.value
    if value is None or metric.data.get("prevalence") is not None:
        return None
    ties = value.ties
    labels = metric.data.get("labels")
    if not is_multi(y_true, y_score, labels):
        rule = "greater" if value.measure == "roc_auc" else "strict"
        data = check_binary(y_true, y_score, weight, metric.data.get("pos_label"), pos_label_rule=rule)
        return _Counted([rank(data.scores, data.positive, ties)], lambda steps: value.kernel(steps[0]), ties)
    average = value.average
    if average not in ("macro", "weighted") or value.multi_class != "ovr":
        return None
    multi = check_multi(y_true, y_score, weight, labels)
    undefined = ~multi.positive.any(axis=0)
    if value.measure == "roc_auc":
        undefined |= multi.positive.all(axis=0)
    if undefined.any():
        fix = ("leave those columns out of `y_true` and `y_score`" if multi.multilabel else
               "leave those classes out of `labels` and their columns out of `y_score`")
        raise ValueError(
            f"the metric is undefined for class(es) {multi.classes[undefined].tolist()!r} "
            "of the data (no positives, or for ROC-AUC no negatives), so it cannot be "
            f"bootstrapped; {fix}"
        )
    columns = [rank(multi.scores[:, c], multi.positive[:, c], ties) for c in range(multi.scores.shape[1])]

    def averaged(steps: list[Steps]) -> np.ndarray:
        values = np.column_stack([value.kernel(r) for r in steps])
        support = np.column_stack([r.n_pos for r in steps]) if average == "weighted" else values
        return average_values(values, support, average)

    return _Counted(columns, averaged, ties, tuple(multi.classes.tolist()))


def _replicate_value(value: Metric, multi: bool) -> Metric:
    """The metric each replicate (and each jackknife subsample) computes, without warnings.

    A value undefined on a replicate is NaN: the replicate is left out of the interval and
    counted in ``n_degenerate`` (a resample that lost a class the metric needs).  The rows of
    ``average="samples"`` (``multi``: multi-class or multi-label input) are the exception: a
    sample without a relevant label (for ROC-AUC also one with every label relevant) is
    undefined by its own row, whatever the resample, and the estimate scores it by the metric's
    policy (by default scikit-learn's value: AP 0, ROC-AUC NaN), so every replicate scores it the
    same way: the value the policy gives it, without the warning."""
    if not (multi and value.average == "samples"):
        return value.with_policy("nan")
    policy = value.on_undefined
    if policy == "warn":  # the value the warning comes with (metrics.score's samples rule)
        policy = float("nan") if value.measure == "roc_auc" else 0.0
    if policy == "raise" or (isinstance(policy, float) and math.isnan(policy)):
        policy = "nan"  # "raise": the estimate raised already wherever a sample is undefined
    return value.with_policy(policy)


def _call(metric: _Metric, y_true: Any, y_score: Any, weight: Any, replicate: Metric | None = None) -> float:
    """The metric on one resample (``replicate``: the metric value it computes,
    :func:`_replicate_value`; NaN where it is undefined on the resample)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if metric.value is not None:  # undefined on a replicate: degenerate
                value = metrics.score(metric.value.with_policy("nan") if replicate is None else replicate,
                                      y_true, y_score, sample_weight=weight, **metric.data)
            else:
                kwargs = dict(metric.options)
                if weight is not None:
                    kwargs["sample_weight"] = weight
                value = metric.func(y_true, y_score, **kwargs)  # type: ignore[misc]
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

    def __init__(self, metric: _Metric, rows: _Rows, y_score: Any, rank: _RankCache | None = None) -> None:
        self.metric = metric
        self.rows = rows
        self.y_score = rows.take(y_score)
        self.counted = _counted(metric, rows.y_true, self.y_score, rows.weight,
                                rank_column if rank is None else rank)
        self.replicate: Metric | None = None
        if metric.value is not None and self.counted is None:
            multi = is_multi(rows.y_true, self.y_score, metric.data.get("labels"))
            self.replicate = _replicate_value(metric.value, multi)

    def counted_values(self, steps: list[Steps]) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.counted.value(steps)  # type: ignore[union-attr]

    def called(self, draws: Draws) -> np.ndarray:
        """A metric without a counted form: called on each resample's rows."""
        w = self.rows.weight
        out = np.empty(draws.m)
        for i, rows in enumerate(draws.rows()):
            rows = np.sort(rows)  # the drawn rows, in input order
            out[i] = _call(self.metric, self.rows.y_true[rows], self.y_score[rows], None if w is None else w[rows],
                           self.replicate)
        return out

    def called_left_out(self, members: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """A metric without a counted form: called on the data less each group."""
        w = self.rows.weight
        out = np.empty(sizes.shape[0])
        start = 0
        for g, size in enumerate(sizes):
            keep = np.ones(self.rows.n, dtype=bool)
            keep[members[start : start + size]] = False
            start += size
            out[g] = _call(self.metric, self.rows.y_true[keep], self.y_score[keep], None if w is None else w[keep],
                           self.replicate)
        return out


def _check_resampling(n_resamples: Any, method: Any, stratified: Any, resample: Any, max_cells: Any,
                      level: Any, random_state: Any, on_undefined: Any, n_values: int
                      ) -> tuple[int, int, float, Any, Any]:
    """Every option of a bootstrap: ``n_resamples``, ``max_cells``, ``level``, the seed and the
    undefined policy checked (``n_values`` replicate vectors are kept), the choices and
    ``stratified``."""
    n = _check_resamples(n_resamples, n_values)
    check_choice(method, "method", BOOTSTRAP_METHODS)
    check_bool(stratified, "stratified")
    check_choice(resample, "resample", RESAMPLE_MODES)
    cells = check_number(max_cells, "max_cells", low=256, integer=True, hint=f"e.g. {MAX_CELLS}")
    return n, cells, _check_level(level), _check_random_state(random_state), check_on_undefined(on_undefined)


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # precall's own files


def _user_stacklevel() -> int:
    """The ``stacklevel`` of :func:`undefined` called by the caller of this function that
    points a warning at the first frame outside precall (the user's call, whichever public
    function it went through)."""
    frame = sys._getframe(1)
    level = 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE + os.sep):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


_ONE_ROW_CLASS = (
    "A bootstrap interval needs at least two rows of each class: the resamples of a class of one row "
    "only repeat that row, so they cannot show how the class varies; got {detail}. The interval is "
    "undefined and its bounds are NaN. Choose another result with on_undefined='raise' or a number"
)


def _one_row_class(ev: _Evaluator, positives: dict[int, int]) -> str | None:
    """Where the rows of ``ev`` have a class of one row (of positive weight), in words; None
    when every class has none or at least two.  A counted metric: a class column with one
    positive or one negative; a metric called on each resample of 1-D labels: a label held by
    one row.  ``positives``: each ranked column's positives, by ``id``, counted once a call."""
    if ev.counted is not None:
        names = ev.counted.names
        for k, col in enumerate(ev.counted.columns):
            if id(col) not in positives:
                positives[id(col)] = int(np.count_nonzero(col.code & 1))
            m = positives[id(col)]
            n = int(col.code.shape[0]) - m
            if m == 1 or n == 1:
                where = "" if names is None else f" in the column of class {names[k]!r}"
                return f"{m} positive(s) and {n} negative(s){where}"
        return None
    y = ev.rows.y_true
    if y.ndim == 1 and y.size:
        labels, counts = np.unique(y, return_counts=True)
        if (counts == 1).any():
            return f"one row of class {labels[counts == 1][0]!r}"
    return None


def _undefined_bounds(metrics: list[_Metric], groups: list[list[_Evaluator]], policy: Any) -> list[float | None]:
    """For each metric (its evaluators in ``groups``: one model, or both of a paired test): the
    bounds of an interval that a class of one row leaves undefined (the ``on_undefined`` policy:
    NaN with an :class:`~precall.UndefinedMetricWarning`, NaN, a ``ValueError`` or the number
    given), or None when the interval is defined.  One warning for the metrics of one cause
    (the six AP conventions of the same rows)."""
    said: dict[str, float] = {}
    positives: dict[int, int] = {}
    out: list[float | None] = []
    for metric, evaluators in zip(metrics, groups):
        detail = next((d for d in (_one_row_class(ev, positives) for ev in evaluators) if d is not None), None)
        if detail is not None and detail not in said:
            said[detail] = undefined(f"The bootstrap interval of {metric.name}",
                                     _ONE_ROW_CLASS.format(detail=detail), float("nan"), policy,
                                     stacklevel=_user_stacklevel())
        out.append(None if detail is None else said[detail])
    return out


def _degenerate_reason(metric: _Metric, rows: _Rows) -> str:
    """Why a replicate of ``metric`` can be undefined, and what helps, in words."""
    help_ = ("stratified=True keeps every class's count" if rows.y_true.ndim == 1 and rows.strata is None
             else "more data helps")
    if metric.value is None:
        return f"the metric returned NaN or raised a ValueError on the others: {help_}"
    needs = "a positive and a negative" if metric.value.measure == "roc_auc" else "a positive"
    if rows.y_true.ndim != 1:  # multi-label rows: resampled without strata
        return (f"the others lack a class the metric needs ({needs} in a label column; multi-label rows are "
                "resampled without strata): more data helps")
    return f"the others lack a class the metric needs ({needs}): {help_}"


def _estimate(metric: _Metric, y_true: Any, y_score: Any, sample_weight: Any) -> float:
    if metric.value is not None:
        value = np.asarray(metrics.score(metric.value, y_true, y_score, sample_weight=sample_weight,
                                         **metric.data), dtype=np.float64)
    else:
        kwargs = dict(metric.options)
        if sample_weight is not None:
            kwargs["sample_weight"] = sample_weight
        value = np.asarray(metric.func(y_true, y_score, **kwargs), dtype=np.float64)  # type: ignore[misc]
    if value.ndim != 0:
        raise TypeError(
            "`metric` must return one number; got an array of shape "
            f"{value.shape} (average=None gives per-class values: bootstrap a scalar average)"
        )
    undefined = bool(np.isnan(value))
    value_ = metric.value
    if value_ is None:
        if undefined:
            raise ValueError(f"{metric.name} is undefined on the input (it returned NaN), so it cannot be "
                             "bootstrapped")
        return float(value)
    multi = is_multi(y_true, y_score, metric.data.get("labels"))
    samples = multi and value_.average == "samples"  # replicates fill undefined samples as the estimate
    per_class = multi and value_.average in ("macro", "weighted") and value_.multi_class == "ovr"
    if not undefined and value_.on_undefined != "nan" and not per_class and not samples:  # classes: named
        # when counted; a value the policy filled in (AP 0 without positives) is undefined on
        # every resample as well (the replicates' rule, _replicate_value)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            undefined = bool(np.isnan(metrics.score(_replicate_value(value_, multi), y_true, y_score,
                                                    sample_weight=sample_weight, **metric.data)))
    if undefined:
        if samples:
            raise ValueError(_undefined_samples(metric.name, value_, y_true, y_score, sample_weight,
                                                metric.data.get("labels")))
        raise ValueError(
            f"{metric.name} is undefined on the input (no positive or no negative samples), so it "
            "cannot be bootstrapped"
        )
    return float(value)


def _undefined_samples(name: str, value: Metric, y_true: Any, y_score: Any, sample_weight: Any,
                       labels: Any) -> str:
    """Why an ``average="samples"`` estimate is undefined: its undefined samples, which the
    metric's policy leaves NaN."""
    positive = check_multi(y_true, y_score, sample_weight, labels).positive  # rows of positive weight
    bad = ~positive.any(axis=1)
    what, example = "no relevant label", "0.0"
    if value.measure == "roc_auc":
        bad |= positive.all(axis=1)
        what, example = "no relevant label or every label relevant", "0.5"
    default = "'warn' (NaN for ROC-AUC, as scikit-learn)" if value.on_undefined == "warn" else repr(
        value.on_undefined)
    return (f"{name} with average='samples' is undefined on the input: {int(bad.sum())} of {bad.size} "
            f"samples have {what}, and the metric's on_undefined={default} makes their values NaN, so it "
            "cannot be bootstrapped; give the metric a number for those samples (e.g. precall.metric("
            f"'{value.measure}', average='samples', on_undefined={example})), which every replicate gives them too")


_BCA_UNDEFINED = (
    "The BCa interval is undefined: {reason}. Its bounds are NaN; use method='percentile', or "
    "choose another result with on_undefined='raise' or a number"
)


def _percentile_of_score(values: np.ndarray, score: float) -> float:
    """Share of ``values`` below ``score``, ties counting half (as scipy's BCa)."""
    return float((np.count_nonzero(values < score) + np.count_nonzero(values <= score)) / (2 * values.size))


def _interval(
    estimate: float, replicates: np.ndarray, jackknife: np.ndarray | None, level: float, method: str,
    name: str = "the metric", policy: Any = "warn", degenerate: str = "",
) -> tuple[float, float, float | None, float | None]:
    """Bounds (and BCa's z0 and a) from the finite replicates; an undefined BCa interval
    (every replicate on one side of the estimate, or no defined jackknife value) has the
    bounds of the ``on_undefined`` ``policy``.  ``degenerate``: why a replicate can be
    undefined, and what helps (:func:`_degenerate_reason`), for the error of too few."""
    finite = replicates[~np.isnan(replicates)]
    if finite.size < 2:
        raise ValueError(
            f"only {finite.size} of {replicates.size} resamples gave a defined value of {name}"
            + (f" ({degenerate})" if degenerate else "")
        )
    alpha = (1 - level) / 2
    if method == "percentile":
        low, high = np.quantile(finite, [alpha, 1 - alpha])
        return float(low), float(high), None, None
    assert jackknife is not None
    share = _percentile_of_score(finite, estimate)
    jack = jackknife[~np.isnan(jackknife)]
    if not jack.size:
        bound = undefined(f"The BCa interval of {name}", _BCA_UNDEFINED.format(
            reason="the metric is undefined on every jackknife subsample, so there is no acceleration"),
            float("nan"), policy, stacklevel=_user_stacklevel())
        return bound, bound, None, None
    d = jack.mean() - jack
    denominator = float(np.sum(d * d)) ** 1.5
    a = float(np.sum(d * d * d)) / (6.0 * denominator) if denominator > 0 else 0.0
    if share <= 0 or share >= 1:
        bound = undefined(f"The BCa interval of {name}", _BCA_UNDEFINED.format(
            reason="every replicate lies on one side of the estimate"), float("nan"), policy,
            stacklevel=_user_stacklevel())
        return bound, bound, float(np.copysign(np.inf, share - 0.5)), a
    z0 = normal.ppf(share)
    bounds = []
    for z in (normal.ppf(alpha), normal.isf(alpha)):
        num = z0 + z
        denominator = 1 - a * num
        # BCa's adjusted z runs to +-inf as num reaches 1 / a; past it the formula turns back
        # (and at it divides by zero): the percentile is then the end of the replicates
        adjusted = z0 + num / denominator if denominator > 0 else math.copysign(math.inf, num)
        bounds.append(normal.cdf(adjusted))
    low, high = np.quantile(finite, bounds)
    return float(low), float(high), z0, a


def _quantile_position(sorted_values: np.ndarray, x: float, side: str = "left") -> float:
    """The probability q at which ``numpy.quantile(values, q)`` (linear) reaches ``x``: 0 below
    the smallest value, 1 above the largest; where several values equal ``x`` the quantile is
    ``x`` over a range of q, its first end with ``side="left"`` and its last with ``"right"``."""
    n = sorted_values.size
    k = int(np.searchsorted(sorted_values, x, side=side))
    if k == 0:
        return 0.0
    if k == n:
        return 1.0
    lo, hi = float(sorted_values[k - 1]), float(sorted_values[k])
    return (k - 1 + (x - lo) / (hi - lo)) / (n - 1)


def interval_p_value(replicates: np.ndarray, z0: float | None, a: float | None, method: str) -> tuple[float, float]:
    """Two-sided p-value of "no difference" from the replicate differences: the smallest
    ``1 - level`` whose interval (percentile or BCa, as :func:`_interval` computes it)
    excludes 0, and the resolution ``1 / replicates`` below which it is not resolved.

    The interval's lower bound is above 0 once its tail passes the last quantile at 0, its upper
    bound below 0 once its tail passes the first: so replicates tied at 0 (two models that rank
    alike) keep the p-value high, 1 when every replicate is 0."""
    finite = np.sort(replicates[~np.isnan(replicates)])
    resolution = 1.0 / finite.size
    first = _quantile_position(finite, 0.0, "left")  # the quantiles at 0: from here ...
    last = _quantile_position(finite, 0.0, "right")  # ... to here
    if method == "bca" and z0 is not None and np.isfinite(z0):
        first, last = _bca_position(first, z0, a), _bca_position(last, z0, a)
    p = 2.0 * min(last, 1.0 - first)
    return min(1.0, max(p, resolution)), resolution


def _bca_position(q: float, z0: float, a: float | None) -> float:
    """The tail whose BCa bound is the quantile ``q`` (BCa's bound at tail alpha is the quantile
    Phi(z0 + w / (1 - a w)), w = z0 + z_alpha, solved for alpha)."""
    if not 0.0 < q < 1.0:
        return q
    t = normal.ppf(q) - z0
    denominator = 1.0 + (a or 0.0) * t
    return normal.cdf(t / denominator - z0) if denominator > 0 else q


def _distinct_columns(evaluators: list[_Evaluator]) -> tuple[list[RankedColumn], list[list[int] | None]]:
    """The ranked columns of the counted evaluators, each once (the metrics of one model
    share theirs, :class:`_RankCache`), and each evaluator's columns as indices into them
    (None: called on each resample)."""
    columns: list[RankedColumn] = []
    index: list[list[int] | None] = []
    for ev in evaluators:
        if ev.counted is None:
            index.append(None)
            continue
        ids = []
        for col in ev.counted.columns:
            k = next((i for i, c in enumerate(columns) if c is col), len(columns))
            if k == len(columns):
                columns.append(col)
            ids.append(k)
        index.append(ids)
    return columns, index


def _jackknife(evaluators: list[_Evaluator], rng: np.random.Generator, n: int,
               columns: list[RankedColumn] | None = None) -> list[np.ndarray]:
    own, index = _distinct_columns(evaluators)
    columns = own if columns is None else columns
    w = evaluators[0].rows.weight
    parts: list[list[np.ndarray]] = [[] for _ in evaluators]
    for members, sizes in jackknife_groups(rng, n):
        steps = [leave_out_steps(c, members, sizes, w) for c in columns]
        for part, ev, ids in zip(parts, evaluators, index):
            part.append(ev.called_left_out(members, sizes) if ids is None
                        else ev.counted_values([steps[k] for k in ids]))
    return [np.concatenate(p) for p in parts]


def _replicates(
    evaluators: list[_Evaluator], rng: np.random.Generator, rows: _Rows, n_resamples: int,
    progress: Callable[[float], None] | None = None, columns: list[RankedColumn] | None = None,
) -> list[np.ndarray]:
    """Every evaluator's replicates from one set of row draws.  Without weights the counted
    columns are counted from the rows' multiplicities, a block of replicates at a time
    (:class:`~._resample.Multiplicities`): the same counts as one ``bincount`` per replicate
    and column.  ``columns``: the ranked columns to count (default: the evaluators' own; the
    blocked columns of :func:`_blocked_rows` replace them)."""
    own, index = _distinct_columns(evaluators)  # each counted once a block, for every metric
    columns = own if columns is None else columns
    parts: list[list[np.ndarray]] = [[] for _ in evaluators]
    held = None
    if rows.weight is None and columns:
        held = Multiplicities(rows.n, n_resamples, rows.strata, max(2 * c.n_runs for c in columns))
        segments = [column_segments(c, rows.strata) for c in columns]

    def counted(steps: list[Steps]) -> None:
        for part, ev, ids in zip(parts, evaluators, index):
            if ids is not None:
                part.append(ev.counted_values([steps[k] for k in ids]))

    done = 0
    for draws in draw_blocks(rng, rows.n, n_resamples, rows.strata):
        for part, ev, ids in zip(parts, evaluators, index):
            if ids is None:
                part.append(ev.called(draws))
        if held is None:
            counted([resample_steps(c, draws, rows.weight) for c in columns])
        else:
            for i in range(draws.m):
                held.add(draws, i)
                if held.full or done + i + 1 == n_resamples:
                    counted(held.all_steps(segments))
                    held.clear()
        done += draws.m
        if progress is not None:
            progress(done / n_resamples)
    return [np.concatenate(p) for p in parts]


def _check_progress(progress: Any) -> Callable[[float], None] | None:
    if progress is not None and not callable(progress):
        raise TypeError(f"`progress` must be a callable taking the fraction done (0 to 1), or None; got {progress!r}")
    return progress


# ---------------------------------------------------------------------------
# one set of draws for every metric (and both models of a paired test)
@dataclass(frozen=True)
class _Drawn:
    """Every evaluator's replicates (and jackknife values for BCa), and how they were drawn."""

    replicates: list[np.ndarray]
    jackknife: list[np.ndarray] | None
    resample: str
    n_blocks: int | None  # counts over score blocks (None: exact)


def _stratum_ids(rows: _Rows) -> np.ndarray | None:
    if rows.strata is None:
        return None
    ids = np.empty(rows.n, dtype=np.int64)
    for k, members in enumerate(rows.strata):
        ids[members] = k
    return ids


def _counts_refusal(evaluators: list[_Evaluator], rows: _Rows) -> str | None:
    """Why these metrics cannot be drawn as counts of cells (None: they can).  The one place
    the counts-or-rows choice is made: ``resample="auto"`` takes counts exactly when this is
    None, and ``resample="counts"`` raises it."""
    if rows.weight is not None:
        return ("resample='counts' draws how many times each cell of rows is drawn, so it takes no "
                "`sample_weight`; use resample='rows' for weighted data")
    for ev in evaluators:
        if ev.counted is None:
            return (f"resample='counts' needs a precall.Metric counted over one sort (average precision, "
                    f"ROC-AUC or best F1: binary, or macro/weighted over classes, without prevalence); "
                    f"{ev.metric.name} is called on each resample, so use resample='rows'")
        if ev.counted.ties != "group":
            return (f"resample='counts' draws counts of runs of tied scores, which needs ties='group'; "
                    f"{ev.metric.name} orders tied scores by input position, so use resample='rows'")
    return None


def _check_counts(evaluators: list[_Evaluator], rows: _Rows) -> None:
    """``resample="counts"`` draws whole rows' counts of grouped runs: say why not otherwise."""
    reason = _counts_refusal(evaluators, rows)
    if reason is not None:
        raise ValueError(reason)


def _by_counts(evaluators: list[_Evaluator], estimates: list[float], rng: np.random.Generator, rows: _Rows,
               n_resamples: int, bca: bool, progress: Callable[[float], None] | None, max_cells: int) -> _Drawn:
    """Replicates as multinomial cell counts over one :class:`CellDesign` shared by every evaluator."""
    _check_counts(evaluators, rows)
    columns, index = _distinct_columns(evaluators)  # every evaluator is counted (checked)
    design: CellDesign = count_design(columns, _stratum_ids(rows), max_cells)

    def values(counts: np.ndarray) -> list[np.ndarray]:
        steps = cell_steps(design, counts)
        return [ev.counted_values([steps[k] for k in ids]) for ev, ids in zip(evaluators, index)]  # type: ignore[union-attr]

    parts: list[list[np.ndarray]] = [[] for _ in evaluators]
    done = 0
    for counts in draw_counts(rng, design, n_resamples):
        for part, v in zip(parts, values(counts)):
            part.append(v)
        done += counts.shape[0]
        if progress is not None:
            progress(done / n_resamples)
    replicates = [np.concatenate(p) for p in parts]
    jackknife = None
    if bca:
        jparts: list[list[np.ndarray]] = [[] for _ in evaluators]
        for members, sizes in jackknife_groups(rng, rows.n, design.n_cells):
            for part, v in zip(jparts, values(leave_out_cells(design, members, sizes))):
                part.append(v)
        jackknife = [np.concatenate(p) for p in jparts]
    if not design.exact:  # the blocked statistic's bootstrap, moved onto the exact estimate
        blocked = values(design.size[None, :])
        replicates = [r + (est - float(b[0])) for r, est, b in zip(replicates, estimates, blocked)]
    return _Drawn(replicates, jackknife, "counts", None if design.exact else design.n_blocks)


_MIN_COLUMN_RUNS = 2048  # blocked rows: each column keeps at least this many runs (or score blocks)


def _blocked_rows(evaluators: list[_Evaluator], estimates: list[float], rng: np.random.Generator, rows: _Rows,
                  n_resamples: int, bca: bool, progress: Callable[[float], None] | None,
                  max_cells: int) -> _Drawn:
    """The row bootstrap of several class columns (the draws of ``resample="rows"``), each column
    counted over at most ``max(max_cells // columns, 2048)`` score blocks; the blocked statistic's
    replicates are shifted by ``estimate - blocked estimate``, as with counts over score blocks."""
    columns, index = _distinct_columns(evaluators)
    blocked = [blocked_column(c, max(max_cells // len(columns), _MIN_COLUMN_RUNS)) for c in columns]
    replicates = _replicates(evaluators, rng, rows, n_resamples, progress, blocked)
    jackknife = _jackknife(evaluators, rng, rows.n, blocked) if bca else None
    if all(b is c for b, c in zip(blocked, columns)):  # every column fits: the exact row bootstrap
        return _Drawn(replicates, jackknife, "rows", None)
    whole = [full_steps(b) for b in blocked]
    shifted = []
    for r, ev, ids, est in zip(replicates, evaluators, index, estimates):
        at_data = float(ev.counted_values([whole[k] for k in ids])[0])  # type: ignore[union-attr]
        shifted.append(r + (est - at_data))
    return _Drawn(shifted, jackknife, "rows", max(b.n_runs for b in blocked))


def _draw(evaluators: list[_Evaluator], estimates: list[float], rng: np.random.Generator, rows: _Rows,
          n_resamples: int, bca: bool, progress: Any, resample: str, max_cells: int) -> _Drawn:
    progress = _check_progress(progress)
    if resample == "auto":
        # binary problems: counts of cells; class columns: rows (their joint cells would need very
        # coarse blocks), each column counted over score blocks
        binary = all(ev.counted is not None and len(ev.counted.columns) == 1 for ev in evaluators)
        countable = _counts_refusal(evaluators, rows) is None
        if binary and countable:
            resample = "counts"
        elif countable:
            return _blocked_rows(evaluators, estimates, rng, rows, n_resamples, bca, progress, max_cells)
        else:
            resample = "rows"
    if resample == "counts":
        return _by_counts(evaluators, estimates, rng, rows, n_resamples, bca, progress, int(max_cells))
    replicates = _replicates(evaluators, rng, rows, n_resamples, progress)
    jackknife = _jackknife(evaluators, rng, rows.n) if bca else None
    return _Drawn(replicates, jackknife, "rows", None)


def _resolve_metrics(metrics: Any, single: str) -> list[_Metric]:
    if callable(metrics) or isinstance(metrics, str) or not isinstance(metrics, (list, tuple)) or not metrics:
        raise TypeError(
            f"`metrics` must be a non-empty list of metrics (for one metric use {single}); got {metrics!r}"
        )
    return [_resolve_metric(m) for m in metrics]


def bootstrap_cis(
    metrics: Any,
    y_true: Any,
    y_score: Any,
    *,
    sample_weight: Any = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    method: str = "percentile",
    stratified: bool = True,
    random_state: Any = DEFAULT_SEED,
    progress: Any = None,
    resample: str = "auto",
    max_cells: int = MAX_CELLS,
    on_undefined: Any = "warn",
) -> list[BootstrapResult]:
    """Bootstrap confidence intervals of several metrics from one set of resamples.

    Every metric is evaluated on the same replicates (one draw, every kernel
    run on the batch), so ``bootstrap_cis([m], ...)[0]`` equals
    ``bootstrap_ci(m, ...)`` and the intervals of six AP conventions cost one
    draw.

    Parameters
    ----------
    metrics : list of callable or str
        Metrics as :func:`bootstrap_ci` takes them.
    y_true, y_score, sample_weight, n_resamples, level, method, stratified, random_state, progress
        As in :func:`bootstrap_ci`.
    resample : {"rows", "counts", "auto"}, default="auto"
        As in :func:`bootstrap_ci`; with ``"counts"`` the metrics share one set
        of cells.
    max_cells : int, default=32768
        As in :func:`bootstrap_ci`.
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        As in :func:`bootstrap_ci`, for each metric.

    Returns
    -------
    list of BootstrapResult
        One per metric, in order.

    See Also
    --------
    bootstrap_ci : one metric.
    bootstrap_tests : several metrics of two models.

    Examples
    --------
    >>> import functools, precall
    >>> from precall import stats
    >>> y = [0, 0, 1, 0, 1, 1, 0, 1, 1, 1]
    >>> s = [0.65, 0.1, 0.15, 0.43, 0.97, 0.24, 0.82, 0.7, 0.32, 0.84]
    >>> step, auc = stats.bootstrap_cis([precall.average_precision, precall.roc_auc], y, s,
    ...                                 n_resamples=500, random_state=0, resample="counts")
    >>> step.resample, step.low < step.estimate < step.high, auc.n_resamples
    ('counts', True, 500)
    """
    resolved = _resolve_metrics(metrics, "bootstrap_ci")
    n_resamples, max_cells, level, random_state, policy = _check_resampling(
        n_resamples, method, stratified, resample, max_cells, level, random_state, on_undefined, len(resolved))
    estimates = [_estimate(m, y_true, y_score, sample_weight) for m in resolved]
    rng = np.random.default_rng(random_state)
    rows = _rows(y_true, sample_weight, bool(stratified))
    rank = _RankCache()
    evaluators = [_Evaluator(m, rows, y_score, rank) for m in resolved]
    undefined_bounds = _undefined_bounds(resolved, [[ev] for ev in evaluators], policy)
    drawn = _draw(evaluators, estimates, rng, rows, int(n_resamples), method == "bca", progress, resample,
                  max_cells)
    results = []
    for k, (m, ev, estimate) in enumerate(zip(resolved, evaluators, estimates)):
        replicates = drawn.replicates[k]
        finite = replicates[~np.isnan(replicates)]
        bound = undefined_bounds[k]
        if bound is None:
            jack = drawn.jackknife[k] if drawn.jackknife is not None else None
            low, high, z0, a = _interval(estimate, replicates, jack, level, method, m.name, policy,
                                         _degenerate_reason(m, rows))
            se = float(np.std(finite, ddof=1))
        else:  # a class of one row: the replicates cannot show its variation
            low, high, z0, a, se = bound, bound, None, None, float("nan")
        results.append(BootstrapResult(
            estimate, low, high, level, method, se,
            replicates, int(n_resamples), int(replicates.size - finite.size), rows.strata is not None,
            ev.counted is not None, z0, a, jackknife_description(rows.n) if method == "bca" else None,
            m.name, drawn.resample, drawn.n_blocks, recorded_seed(random_state),
        ))
    return results


def bootstrap_ci(
    metric: Any,
    y_true: Any,
    y_score: Any,
    *,
    sample_weight: Any = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    method: str = "percentile",
    stratified: bool = True,
    random_state: Any = DEFAULT_SEED,
    progress: Any = None,
    resample: str = "auto",
    max_cells: int = MAX_CELLS,
    on_undefined: Any = "warn",
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
    random_state : None, int or numpy.random.Generator, default=0
        Seed or generator; the same one gives the same result.  The default
        (:data:`DEFAULT_SEED`) is the one every command and plot of precall uses,
        so the same data give the same interval everywhere; None draws fresh.
        The result's ``seed`` records an int (or a sequence of ints) given here,
        and is None for None or a generator (whose state is not recorded).
    progress : callable, default=None
        Called with the fraction of resamples done (0 to 1) after each block of
        replicates (a progress bar, or a way to stop: raise from it).
    resample : {"rows", "counts", "auto"}, default="auto"
        ``"rows"`` draws row indices, O(n) per replicate (without strata and in
        one block, ``scipy.stats.bootstrap``'s draws).  ``"counts"`` draws each
        replicate's count of rows in every *cell* (the rows of one stratum and
        one run of tied scores) directly: per stratum a multinomial of the
        stratum's size over its cells in proportion to their sizes, which is
        exactly the distribution of the row bootstrap's counts, at O(cells) per
        replicate.  It needs a counted precall metric, ``ties="group"`` and no
        ``sample_weight`` (a ``ValueError`` says which is missing).  ``"auto"``
        takes ``"counts"`` where it applies to binary problems; for class
        columns (macro / weighted averages, where the joint cells of the columns
        would need very coarse blocks) it draws rows (the draws of ``"rows"``)
        and counts each column over at most ``max(max_cells // columns, 2048)``
        score blocks, the replicates shifted onto the exact estimate
        (``n_blocks`` says so); otherwise ``"rows"``.  Every command and plot of
        precall uses it, and the result's ``resample`` says which was taken.
        Without weights the drawn rows are counted from their multiplicities, a
        block of replicates at a time (compiled with numba when the ``fast``
        extra is installed: the same numbers, faster).
    max_cells : int, default=32768
        With ``"counts"``: when the runs make more cells (continuous scores:
        about one run per row), consecutive runs are merged into score blocks
        (cut where the cumulative positives cross a multiple of P / B or the
        negatives of N / B: each block holds at most 1/B of either class), B
        halving until the cells fit.  The replicates are then those of the
        blocked statistic, shifted by ``estimate - blocked estimate``: the
        interval is the exact estimate plus the blocked bootstrap's spread
        around its own estimate (percentile: its quantiles; BCa: the bias
        correction from the same shifted replicates, the acceleration from a
        jackknife of the blocked statistic).  ``n_blocks`` of the result says
        that this was done and with how many blocks.  For class columns drawn
        as rows (``"auto"``), each column keeps at most ``max(max_cells //
        columns, 2048)`` runs or blocks, shifted in the same way.
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        The policy (:class:`~precall.UndefinedMetricWarning`) for an interval
        the resamples cannot give.  A class of a single row (one positive or
        one negative of the metric's binary problem or of a class column of
        a macro / weighted average; for a metric called on each resample of
        1-D labels, a label held by one row) is drawn as itself in every
        stratified resample, and unstratified as itself or not at all, so the
        replicates never show how that class varies (with one positive, every
        replicate's positives have one score): the interval would be a
        confident zero or near-zero width.  It is undefined, as DeLong's
        variance below two of a class (:func:`roc_auc_ci`): by default NaN
        bounds (and a NaN ``standard_error``) with the warning; ``"nan"``
        without it; ``"raise"`` a ``ValueError`` before any resample is
        drawn; a number, both bounds that number.  The same policy covers a
        BCa interval that is undefined (every replicate on one side of the
        estimate).  The estimate and the replicates are kept.  A metric
        undefined on the data itself (no positives) raises a ``ValueError``
        whatever the policy: there is nothing to resample.  A replicate on
        which the metric is undefined (a resample without some class) is
        left out and counted in ``n_degenerate``; but with
        ``average="samples"`` a sample without a relevant label is undefined
        by its own row, so every replicate gives it the value the estimate
        gives it (the metric's own ``on_undefined``: by default AP 0, as
        scikit-learn's samples average).

    Returns
    -------
    BootstrapResult

    See Also
    --------
    bootstrap_test : two models on the same resamples.
    bootstrap_cis : several metrics from one set of resamples.
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
    if isinstance(metric, (list, tuple)):
        raise TypeError("`metric` must be one metric; for several use bootstrap_cis (one set of resamples)")
    return bootstrap_cis([metric], y_true, y_score, sample_weight=sample_weight, n_resamples=n_resamples,
                         level=level, method=method, stratified=stratified, random_state=random_state,
                         progress=progress, resample=resample, max_cells=max_cells,
                         on_undefined=on_undefined)[0]


def bootstrap_tests(
    metrics: Any,
    y_true: Any,
    score_a: Any,
    score_b: Any,
    *,
    sample_weight: Any = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    method: str = "percentile",
    stratified: bool = True,
    random_state: Any = DEFAULT_SEED,
    progress: Any = None,
    resample: str = "auto",
    max_cells: int = MAX_CELLS,
    on_undefined: Any = "warn",
) -> list[PairedComparison]:
    """Paired bootstrap comparisons of two models for several metrics, from one set of resamples.

    With ``resample="counts"`` the cells are the joint (stratum, block of A,
    block of B) cells of the rows, so both models are resampled on the same
    rows; each replicate's cell counts are then summed to each model's blocks.
    The blocks of both models coarsen together until the non-empty joint cells
    fit ``max_cells``.

    Parameters
    ----------
    metrics : list of callable or str
        Metrics as :func:`bootstrap_ci` takes them.
    y_true, score_a, score_b, sample_weight, n_resamples, level, method, stratified, random_state, progress
        As in :func:`bootstrap_test`.
    resample, max_cells, on_undefined
        As in :func:`bootstrap_ci`.

    Returns
    -------
    list of PairedComparison
        One per metric, in order.

    See Also
    --------
    bootstrap_test : one metric.
    bootstrap_cis : several metrics of one model.

    Examples
    --------
    >>> import precall
    >>> from precall import stats
    >>> y = [0, 0, 1, 0, 1, 1, 0, 1, 1, 1]
    >>> a = [0.65, 0.1, 0.15, 0.43, 0.97, 0.24, 0.82, 0.7, 0.32, 0.84]
    >>> (t,) = stats.bootstrap_tests([precall.roc_auc], y, a, a, n_resamples=200, random_state=0,
    ...                              resample="counts")
    >>> t.difference, float(abs(t.replicates).max())
    (0.0, 0.0)
    """
    resolved = _resolve_metrics(metrics, "bootstrap_test")
    n_resamples, max_cells, level, random_state, policy = _check_resampling(
        n_resamples, method, stratified, resample, max_cells, level, random_state, on_undefined,
        3 * len(resolved))
    estimates = []
    for m in resolved:
        estimates += [_estimate(m, y_true, score_a, sample_weight), _estimate(m, y_true, score_b, sample_weight)]
    rng = np.random.default_rng(random_state)
    rows = _rows(y_true, sample_weight, bool(stratified))
    rank = _RankCache()
    evaluators = [ev for m in resolved for ev in (_Evaluator(m, rows, score_a, rank),
                                                  _Evaluator(m, rows, score_b, rank))]
    undefined_bounds = _undefined_bounds(resolved, [evaluators[2 * k : 2 * k + 2] for k in range(len(resolved))],
                                         policy)
    drawn = _draw(evaluators, estimates, rng, rows, int(n_resamples), method == "bca", progress, resample,
                  max_cells)
    results = []
    for k, m in enumerate(resolved):
        est_a, est_b = estimates[2 * k], estimates[2 * k + 1]
        diffs = drawn.replicates[2 * k] - drawn.replicates[2 * k + 1]
        jack = None
        if drawn.jackknife is not None:
            jack = drawn.jackknife[2 * k] - drawn.jackknife[2 * k + 1]
        difference = est_a - est_b
        finite = diffs[~np.isnan(diffs)]
        bound = undefined_bounds[k]
        resolution: float | None
        if bound is None:
            low, high, z0, a = _interval(difference, diffs, jack, level, method, m.name, policy,
                                         _degenerate_reason(m, rows))
            sd = float(np.std(finite, ddof=1))
            z = _z_statistic(difference, sd)
            p, resolution = interval_p_value(diffs, z0, a, method)
        else:  # a class of one row: no interval, no test
            low = high = bound
            sd = z = p = float("nan")
            resolution = None
        results.append(PairedComparison(
            est_a, est_b, difference, low, high, level, z, p, sd, method, m.name,
            int(n_resamples), int(diffs.size - finite.size), diffs, drawn.resample, drawn.n_blocks,
            "bootstrap", resolution, recorded_seed(random_state),
        ))
    return results


def bootstrap_test(
    metric: Any,
    y_true: Any,
    score_a: Any,
    score_b: Any,
    *,
    sample_weight: Any = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    method: str = "percentile",
    stratified: bool = True,
    random_state: Any = DEFAULT_SEED,
    progress: Any = None,
    resample: str = "auto",
    max_cells: int = MAX_CELLS,
    on_undefined: Any = "warn",
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
    resample, max_cells
        As in :func:`bootstrap_ci`; with ``"counts"`` the cells are joint over
        both models (:func:`bootstrap_tests`).
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        As in :func:`bootstrap_ci`: with a class of one row the interval of the
        difference is undefined (its bounds by the policy; ``statistic``,
        ``p_value`` and ``standard_error`` NaN).

    Returns
    -------
    PairedComparison

    See Also
    --------
    bootstrap_ci : one model.
    bootstrap_tests : several metrics from one set of resamples.
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
    if isinstance(metric, (list, tuple)):
        raise TypeError("`metric` must be one metric; for several use bootstrap_tests (one set of resamples)")
    return bootstrap_tests([metric], y_true, score_a, score_b, sample_weight=sample_weight,
                           n_resamples=n_resamples, level=level, method=method, stratified=stratified,
                           random_state=random_state, progress=progress, resample=resample,
                           max_cells=max_cells, on_undefined=on_undefined)[0]
