"""The public metrics: average precision by convention, ROC-AUC, and every number at once.

Each function takes binary, multi-class (1-D labels, one score column per
class) or multi-label (indicator matrix) input, validates it once
(:mod:`precall._core.validate`), sorts each problem once and hands the steps to
the kernels of :mod:`precall._core.conventions`; multi-class and multi-label
input goes through the averaging of :mod:`precall.multiclass`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._core.evaluation import Evaluation, evaluation_from_keys, evaluation_from_steps
from ._core.metric import Metric
from ._core.steps import reweight, row_steps, steps_and_grouped, steps_of
from ._core.undefined import NO_POSITIVES, ONE_CLASS_ROC
from ._core.validate import (
    AVERAGES,
    check_binary,
    check_bool,
    check_multi,
    check_on_undefined,
    check_options,
    is_multi,
)
from .multiclass import (
    MultiEvaluation,
    average_columns,
    check_average,
    column_metric,
    class_columns,
    evaluate_classes,
    hand_till,
    samples_average,
)

from .table import ThresholdTable
from .table import threshold_table as _threshold_table
from .slices import SlicedEvaluation, SlicedMultiEvaluation, SlicedTables, evaluate_class_slices, SlicedValues, evaluate_slices, metric_slices, slice_codes, table_slices

__all__ = ["Metric", "average_precision", "evaluate", "metric", "roc_auc", "score"]

# the data options of a metric function: how to read the data, not what to measure
DATA_OPTIONS: tuple[str, ...] = ("sample_weight", "pos_label", "labels", "prevalence")


def metric(measure: str = "average_precision", /, **options: Any) -> Metric:
    """A :class:`Metric` value: the quantity and its options, without the data.

    Parameters
    ----------
    measure : {"average_precision", "roc_auc", "best_f1"}
        The quantity.
    **options
        Its options, as the metric functions take them: ``method``, ``ties``,
        ``recall_grid``, ``max_fpr``, ``average``, ``multi_class``,
        ``on_undefined``.

    Returns
    -------
    Metric
        Frozen, hashable and picklable; :func:`score` computes it on data, and
        :mod:`precall.stats` resamples it (by counts where the data allow).

    See Also
    --------
    score : compute a metric value on data.
    precall.stats.bootstrap_ci : its confidence interval.

    Examples
    --------
    >>> import precall
    >>> m = precall.metric("average_precision", method="coco")
    >>> m
    Metric(measure='average_precision', method='coco', ties='group', recall_grid='reference', max_fpr=None, average='macro', multi_class='ovr', on_undefined='warn')
    >>> precall.score(m, [0, 1, 1, 0], [0.2, 0.9, 0.4, 0.5]) == precall.average_precision(
    ...     [0, 1, 1, 0], [0.2, 0.9, 0.4, 0.5], method="coco")
    True
    """
    return Metric(measure, **options)


def _metric_of(func_measure: str, options: dict[str, Any]) -> tuple[Metric, dict[str, Any]]:
    """Split a metric function's keyword options into its :class:`Metric` and its data options."""
    data = {k: options[k] for k in DATA_OPTIONS if k in options}
    return Metric(func_measure, **{k: v for k, v in options.items() if k not in DATA_OPTIONS}), data


def _builds(measure: str) -> Any:
    """Mark a public metric function as building ``Metric(measure, ...)`` from its options
    (:mod:`precall.stats` reads it to resample the metric by counts)."""

    def mark(func: Any) -> Any:
        func.precall_metric = lambda **options: _metric_of(measure, options)
        return func

    return mark


def score(
    metric: Metric,
    y_true: Any,
    y_score: Any,
    *,
    sample_weight: Any = None,
    pos_label: Any = None,
    labels: Any = None,
    prevalence: float | None = None,
    by: Any = None,
    min_support: int = 0,
) -> float | np.ndarray | SlicedValues:
    """Compute a :class:`Metric` on data: binary, multi-class or multi-label.

    Parameters
    ----------
    metric : Metric
        What to compute (:func:`metric`).
    y_true, y_score, sample_weight, pos_label, labels, prevalence, by, min_support
        As in :func:`average_precision` (``prevalence``: binary AP and best F1 only).

    Returns
    -------
    float, ndarray of shape (n_classes,) when ``metric.average`` is None, or
    :class:`~precall.SlicedValues` with ``by``

    See Also
    --------
    metric : build the value.
    average_precision, roc_auc : the same with the options as keywords.

    Examples
    --------
    >>> import precall
    >>> precall.score(precall.metric("roc_auc"), [0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    if not isinstance(metric, Metric):
        raise TypeError(f"`metric` must be a precall.Metric (precall.metric(...)); got {metric!r:.80}")
    policy = metric.on_undefined
    roc = metric.measure == "roc_auc"
    if prevalence is not None and roc:
        raise ValueError("`prevalence` does not change ROC-AUC; got prevalence with measure='roc_auc'. Drop it")
    if by is not None:
        return _sliced_score(metric, y_true, y_score, sample_weight, pos_label, labels, prevalence, by, min_support)
    if not is_multi(y_true, y_score, labels):
        data = check_binary(y_true, y_score, sample_weight, pos_label, pos_label_rule="greater" if roc else "strict")
        steps = steps_of(data, metric.ties)  # type: ignore[arg-type]
        if prevalence is not None:
            steps = reweight(steps, prevalence)
        return metric.value(steps)
    _no_prevalence(prevalence)
    _no_pos_label(pos_label)
    data = check_multi(y_true, y_score, sample_weight, labels)
    average = metric.average
    if roc and metric.multi_class == "ovo":
        if data.multilabel:
            raise ValueError(
                "`multi_class='ovo'` needs multi-class `y_true` (one label per sample); got "
                "a multi-label indicator matrix. Use multi_class='ovr'"
            )
        if metric.max_fpr is not None:
            raise ValueError("`max_fpr` (partial AUC) is not available for multi-class input")
        if average is None:
            raise NotAvailableError(
                "`average=None` is not available with multi_class='ovo' (one value per pair of classes is not "
                "returned, as in scikit-learn); use average='macro' or 'weighted', or multi_class='ovr'"
            )
        return hand_till(data, check_average(average, ("macro", "weighted")) or "macro", policy)
    if roc:
        check_average(average, AVERAGES if data.multilabel else ("macro", "weighted", "micro"))
        if metric.max_fpr is not None and not data.multilabel:
            raise ValueError(
                "`max_fpr` (partial AUC) is not available for multi-class input; got "
                f"max_fpr={metric.max_fpr!r}. Use max_fpr=None"
            )
    if average == "samples":
        if metric.measure == "average_precision":
            undefined_args = ("average precision", NO_POSITIVES, 0.0)
        elif roc:
            undefined_args = ("ROC AUC", ONE_CLASS_ROC, float("nan"))
        else:
            undefined_args = ("F1", NO_POSITIVES, 0.0)
        return samples_average(data, lambda s, y: metric.kernel(row_steps(s, y, metric.ties)),  # type: ignore[arg-type]
                               undefined_args, policy)
    return average_columns(data, column_metric(metric), average)


def _sliced_input(y_true: Any, y_score: Any, sample_weight: Any, pos_label: Any, labels: Any, prevalence: Any,
                  by: Any, rule: str) -> tuple[Any, Any, np.ndarray, np.ndarray]:
    """Validated binary input, the slice codes of all rows and of the rows kept (zero weights
    set aside), and each slice's number of rows given."""
    if is_multi(y_true, y_score, labels):
        raise ValueError(
            "`by` applies to binary input; got multi-class or multi-label input. Evaluate each class column "
            "as a binary problem (y_true == c, y_score[:, c]) with by=..."
        )
    if prevalence is not None:
        raise ValueError(f"`prevalence` is not available with `by`; got prevalence={prevalence!r}. Drop one")
    data = check_binary(y_true, y_score, sample_weight, pos_label, pos_label_rule=rule)  # type: ignore[arg-type]
    codes = slice_codes(by, data.n_samples)
    kept = codes.codes
    if data.scores.shape[0] < data.n_samples:  # zero weights were set aside
        kept = kept[np.asarray(sample_weight, dtype=np.float64).ravel() > 0]
    return data, codes, kept, codes.rows()


def _sliced_classes(y_true: Any, y_score: Any, sample_weight: Any, pos_label: Any, labels: Any, prevalence: Any,
                    by: Any, ties: str, recall_grid: str, policy: Any, min_support: Any) -> SlicedMultiEvaluation:
    """``evaluate(by=)`` of multi-class or multi-label input: each class by the sliced binary path."""
    _no_prevalence(prevalence)
    _no_pos_label(pos_label)
    data = check_multi(y_true, y_score, sample_weight, labels)
    overall = evaluate_classes(data, ties=ties, recall_grid=recall_grid, policy=policy)
    n = int(np.shape(y_true)[0])
    codes = slice_codes(by, n)
    kept = codes.codes
    if data.scores.shape[0] < n:  # zero weights were set aside
        kept = kept[np.asarray(sample_weight, dtype=np.float64).ravel() > 0]
    if data.weight is None:
        support = np.stack([np.bincount(kept, weights=col, minlength=codes.m) for col in data.positive.T], axis=1)
    else:  # each slice's positive weight summed as multiclass sums it on the slice's rows
        order = np.argsort(kept, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(np.bincount(kept, minlength=codes.m))])
        support = np.zeros((codes.m, data.scores.shape[1]))
        for i in range(codes.m):
            rows = order[bounds[i]:bounds[i + 1]]
            support[i] = (data.positive[rows] * data.weight[rows][:, None]).sum(axis=0)
    return evaluate_class_slices(list(class_columns(data)), data.classes, codes, kept,
                                 codes.rows(), support.astype(np.float64), ties=ties,
                                 recall_grid=recall_grid, policy=policy, overall=overall, min_support=min_support)


def _sliced_score(metric: Metric, y_true: Any, y_score: Any, sample_weight: Any, pos_label: Any, labels: Any,
                  prevalence: Any, by: Any, min_support: Any) -> SlicedValues:
    rule = "greater" if metric.measure == "roc_auc" else "strict"
    data, codes, kept, n_samples = _sliced_input(y_true, y_score, sample_weight, pos_label, labels, prevalence, by,
                                                 rule)
    return metric_slices(metric, data, codes, kept, n_samples, min_support=min_support)  # type: ignore[arg-type]


def _no_prevalence(prevalence: Any) -> None:
    if prevalence is not None:
        raise ValueError(
            f"`prevalence` applies to binary input; got multi-class or multi-label input and "
            f"prevalence={prevalence!r}. Evaluate each class as a binary problem "
            "(precall.per_class_tables(...)[c].at_prevalence(pi)) with its own prevalence"
        )


def _no_pos_label(pos_label: Any) -> None:
    if pos_label is not None and not (isinstance(pos_label, (int, float, np.number)) and pos_label == 1):
        raise ValueError(
            f"`pos_label` applies to binary input; with multi-class or multi-label input each class is in turn the "
            f"positive one (scikit-learn fixes it to 1); got pos_label={pos_label!r}. Drop `pos_label`"
        )


class NotAvailableError(ValueError, NotImplementedError):
    """An option combination precall (like scikit-learn) does not compute; a ``ValueError``
    that is also the ``NotImplementedError`` scikit-learn raises for it."""


@_builds("average_precision")
def average_precision(
    y_true: Any,
    y_score: Any,
    *,
    method: str = "step",
    ties: str = "group",
    sample_weight: Any = None,
    pos_label: Any = None,
    average: str | None = "macro",
    labels: Any = None,
    recall_grid: str = "reference",
    on_undefined: Any = "warn",
    prevalence: float | None = None,
    by: Any = None,
    min_support: int = 0,
) -> float | np.ndarray | SlicedValues:
    """Average precision (PR-AUC) by a named convention; binary, multi-class or multi-label.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_classes)
        Binary labels ({0, 1}, {-1, 1}, bool, or any labels with ``pos_label``),
        class labels (multi-class, with a 2-D ``y_score``), or a 0/1 indicator
        matrix (multi-label).
    y_score : array-like of shape (n_samples,) or (n_samples, n_classes)
        Scores, higher meaning more likely positive; one column per class for
        multi-class and multi-label input.
    method : {"step", "voc2007", "voc2010", "coco", "trapezoid", "interpolated"}, default="step"
        The convention (:data:`precall.CONVENTIONS`); ``"step"`` is scikit-learn's
        ``average_precision_score``.
    ties : {"group", "stable"}, default="group"
        ``"group"``: equal scores form one operating point (order-independent,
        scikit-learn).  ``"stable"``: one point per sample, equal scores in
        input order (Detectron's ``voc_eval``, pycocotools).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    pos_label : int, float, bool or str, default=None
        Binary input: the positive label; None means 1, allowed only for labels
        in {0, 1} or {-1, 1}.
    average : {"macro", "weighted", "micro", "samples"} or None, default="macro"
        Multi-class / multi-label: how per-class values are combined (see
        :mod:`precall.multiclass`); None returns the per-class values.  Ignored
        for binary input, as in scikit-learn.
    labels : array-like, default=None
        The class of each column of ``y_score``; default the sorted labels of
        ``y_true`` (multi-class) or ``0..k-1`` (multi-label).
    recall_grid : {"reference", "exact"}, default="reference"
        For ``"voc2007"`` and ``"coco"``: the reference codes' floating-point
        recall grids, or the exact ``k/10`` / ``k/100``.
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        Without positives: ``"warn"`` returns 0.0 with an
        :class:`~precall.UndefinedMetricWarning` (scikit-learn), ``"nan"`` NaN,
        ``"raise"`` raises ``ValueError``, a number is returned as given.
    prevalence : float in [1e-300, 1), default=None
        Binary input: the AP if positives made up this share of the data, the
        negatives reweighted by ``(1 - pi) / pi * n_pos / n_neg``
        (:meth:`ThresholdTable.at_prevalence`).  Needs both classes.
    by : array-like of shape (n_samples,), several of them, a dict or a pandas DataFrame, default=None
        Binary input: the slice of every row (country, device, ...); several
        columns give their intersections.  The result is then a
        :class:`~precall.SlicedValues`: the value of every slice (equal, bit for
        bit, to this function on the slice's rows) and of all rows, from one
        sort (:mod:`precall.slices`).  Missing values (None, NaN, "") are the
        slice ``"(missing)"``.
    min_support : int, default=0
        With ``by``: slices with fewer rows are reported but not ranked.

    Returns
    -------
    float, ndarray of shape (n_classes,) when ``average=None``, or SlicedValues with ``by``

    See Also
    --------
    evaluate : every convention, ROC-AUC and more from one sort.
    ThresholdTable.ap_terms : the terms that sum to each convention's AP.
    precall.stats.bootstrap_ci : a confidence interval for any convention.

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
    >>> y3 = [0, 0, 1, 1, 2, 2]
    >>> s3 = [[0.7, 0.2, 0.1], [0.4, 0.3, 0.3], [0.1, 0.8, 0.1],
    ...       [0.2, 0.3, 0.5], [0.4, 0.4, 0.2], [0.1, 0.2, 0.7]]
    >>> round(precall.average_precision(y3, s3), 4)
    0.7778
    >>> precall.average_precision(y3, s3, average=None).round(4)
    array([0.8333, 0.75  , 0.75  ])
    """
    value = Metric("average_precision", method=method, ties=ties, recall_grid=recall_grid, average=average,
                   on_undefined=on_undefined)
    return score(value, y_true, y_score, sample_weight=sample_weight, pos_label=pos_label, labels=labels,
                 prevalence=prevalence, by=by, min_support=min_support)


@_builds("roc_auc")
def roc_auc(
    y_true: Any,
    y_score: Any,
    *,
    max_fpr: float | None = None,
    sample_weight: Any = None,
    pos_label: Any = None,
    average: str | None = "macro",
    multi_class: str = "ovr",
    labels: Any = None,
    on_undefined: Any = "warn",
    by: Any = None,
    min_support: int = 0,
) -> float | np.ndarray | SlicedValues:
    """Area under the ROC curve; binary, one-vs-rest or one-vs-one multi-class, or multi-label.

    Parameters
    ----------
    y_true, y_score, sample_weight, labels
        As in :func:`average_precision`.
    max_fpr : float in (0, 1], default=None
        The McClish-standardised partial AUC over FPR in [0, max_fpr] (0.5 for
        chance, 1 for a perfect ranking), as scikit-learn; binary and
        multi-label input only.
    pos_label : label, default=None
        Binary input only; None follows ``roc_auc_score``: of two labels, the
        greater (in sorted order) is positive.
    average : {"macro", "weighted", "micro", "samples"} or None, default="macro"
        ``"samples"`` only for multi-label input.
    multi_class : {"ovr", "ovo"}, default="ovr"
        ``"ovr"``: each class against the rest.  ``"ovo"``: Hand & Till (2001),
        the mean over pairs of classes of the average of the two one-against-one
        AUCs, each from only the samples of the pair; ``average="weighted"``
        weights each pair by its share of the samples (of the weight, with
        ``sample_weight``, which scikit-learn does not take here).
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        With a single class present: NaN with an
        :class:`~precall.UndefinedMetricWarning` by default (scikit-learn),
        ``"nan"`` NaN silently, ``"raise"`` raises, a number is returned as given.
    by, min_support
        As in :func:`average_precision`: the ROC-AUC of every slice.

    Returns
    -------
    float, ndarray of shape (n_classes,) when ``average=None``, or SlicedValues with ``by``

    See Also
    --------
    evaluate : ROC-AUC with every AP convention from one sort.
    precall.stats.roc_auc_ci : DeLong's confidence interval (pROC's ``ci.auc``).

    Examples
    --------
    >>> import precall
    >>> precall.roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    >>> y = [0, 0, 1, 1, 2, 2]
    >>> s = [[0.7, 0.2, 0.1], [0.4, 0.3, 0.3], [0.1, 0.8, 0.1],
    ...      [0.2, 0.3, 0.5], [0.4, 0.4, 0.2], [0.1, 0.2, 0.7]]
    >>> round(precall.roc_auc(y, s), 4)
    0.8333
    """
    value = Metric("roc_auc", max_fpr=max_fpr, average=average, multi_class=multi_class,
                   on_undefined=on_undefined)
    return score(value, y_true, y_score, sample_weight=sample_weight, pos_label=pos_label, labels=labels, by=by,
                 min_support=min_support)


def evaluate(
    y_true: Any,
    y_score: Any,
    *,
    sample_weight: Any = None,
    pos_label: Any = None,
    labels: Any = None,
    ties: str = "group",
    recall_grid: str = "reference",
    on_undefined: Any = "warn",
    prevalence: float | None = None,
    by: Any = None,
    min_support: int = 0,
    overwrite_y_score: bool = False,
) -> Evaluation | MultiEvaluation | SlicedEvaluation:
    """Every AP convention, ROC-AUC, the prevalence and the best-F1 point, from one sort.

    With each AP its context: the minimum any ranking of these class counts
    could get and the AP normalised by it, the baseline (prevalence), and the
    area under the precision-recall-gain curve.  Multi-class and multi-label
    input gives the :class:`~precall.Evaluation` of each class and the macro,
    weighted and micro averages (and Hand & Till's one-vs-one ROC-AUC).

    Parameters
    ----------
    y_true, y_score, sample_weight, pos_label, labels, ties, recall_grid, on_undefined
        As in :func:`average_precision`.  ``pos_label=None`` needs binary labels
        in {0, 1} or {-1, 1}.
    prevalence : float in [1e-300, 1), default=None
        Binary input: evaluate as if positives made up this share of the data
        (negatives reweighted, :meth:`ThresholdTable.at_prevalence`): every AP,
        the minimum AP, AUPRG, the best F1, ``prevalence`` and ``n_neg`` are
        those at ``prevalence``; ROC-AUC does not change.
    by, min_support
        As in :func:`average_precision`: a :class:`~precall.SlicedEvaluation`
        with every number of every slice (each equal, bit for bit, to
        ``evaluate`` of the slice's rows), the overall evaluation, the worst
        slices first; ``.to_frame()``, ``.to_dict()``, ``.to_csv()``, ``.to_text()``.
    overwrite_y_score : bool, default=False
        Allow the sort to use ``y_score``'s memory (as scipy's ``overwrite_a``): its
        values may come back in another order, no longer row by row with ``y_true``.
        Taken by binary, unweighted scores (a writeable contiguous array) with
        ``ties="group"``: when the compiled kernel runs (float32/float64), the sort's
        keys are written over the scores (no array of keys: ``precall evaluate`` holds
        the rows once) and the scores left in decreasing order; on the numpy route
        the positives' scores are moved to the front and the negatives' behind them,
        each part sorted in place (no copy of the scores); otherwise ignored.  The
        numbers are the same either way.

    Returns
    -------
    Evaluation, MultiEvaluation for multi-class / multi-label input, or with ``by`` a SlicedEvaluation
    (binary) or a SlicedMultiEvaluation (multi-class / multi-label: per slice every class's
    evaluation and the macro and weighted averages)

    See Also
    --------
    average_precision, roc_auc : one number.
    threshold_table : the count table itself, for curves and plots.

    Notes
    -----
    Memory: with binary unweighted input, grouped ties and no ``prevalence``, the
    steps are not held as arrays once they would be large (from 2**19 positives,
    when their 48 bytes a step would pass half the scores' bytes): the numbers are
    computed a chunk of steps at a time, from the sorted keys with the compiled
    kernel (with ``overwrite_y_score``, the keys written over the scores), from the
    sorted positives and negatives on the numpy route (a node of numpy's pairwise
    summation tree at a time), the same bits.

    Examples
    --------
    >>> import precall
    >>> y = [0, 0, 1, 0, 1, 1, 0, 1, 1, 1]
    >>> s = [0.65, 0.1, 0.15, 0.43, 0.97, 0.24, 0.82, 0.7, 0.32, 0.84]
    >>> result = precall.evaluate(y, s)
    >>> round(result.average_precision["voc2007"], 6), round(result.roc_auc, 6)
    (0.80303, 0.583333)
    >>> result.best_f1.threshold
    0.15
    >>> round(result.min_average_precision["step"], 6), abs(round(result.auprg, 6))  # AUPRG 0 (to rounding)
    (0.436243, 0.0)
    >>> round(precall.evaluate(y, s, prevalence=0.01).average_precision["step"], 6)
    0.342181
    >>> multi = precall.evaluate([0, 1, 2, 1], [[.8, .1, .1], [.2, .7, .1], [.1, .2, .7], [.3, .4, .3]])
    >>> multi.average_precision["macro"]["step"], multi.roc_auc["ovo"]
    (1.0, 1.0)
    """
    check_options(ties=ties, recall_grid=recall_grid)
    policy = check_on_undefined(on_undefined)
    overwrite = check_bool(overwrite_y_score, "overwrite_y_score")
    if by is not None and is_multi(y_true, y_score, labels):
        return _sliced_classes(y_true, y_score, sample_weight, pos_label, labels, prevalence, by, ties, recall_grid,
                               policy, min_support)
    if by is not None:
        data, codes, kept, n_samples = _sliced_input(y_true, y_score, sample_weight, pos_label, labels, prevalence,
                                                     by, "strict")
        return evaluate_slices(data, codes, kept, n_samples, ties=ties, recall_grid=recall_grid, policy=policy,
                               min_support=min_support)  # type: ignore[arg-type]
    if is_multi(y_true, y_score, labels):
        _no_prevalence(prevalence)
        data = check_multi(y_true, y_score, sample_weight, labels)
        return evaluate_classes(data, ties=ties, recall_grid=recall_grid, policy=policy)
    binary = check_binary(y_true, y_score, sample_weight, pos_label)
    if prevalence is None:  # at many positives, no array of the steps (the compiled pass over the sorted keys)
        result = evaluation_from_keys(binary, ties=ties, recall_grid=recall_grid, policy=policy, overwrite=overwrite)
        if result is not None:
            return result
    steps, grouped = steps_and_grouped(binary, ties, overwrite=overwrite)  # type: ignore[arg-type]
    if prevalence is not None:
        steps, grouped = reweight(steps, prevalence), reweight(grouped, prevalence)
    return evaluation_from_steps(steps, grouped, ties=ties, n_samples=binary.n_samples, recall_grid=recall_grid,
                                 policy=policy)


def threshold_table(
    y_true: Any, y_score: Any, *, sample_weight: Any = None, pos_label: Any = None, ties: str = "group",
    by: Any = None, min_support: int = 0, on_undefined: Any = "warn",
) -> ThresholdTable | SlicedTables:
    """Sort once and count: TP and FP at every threshold (:func:`precall.table.threshold_table`),
    or with ``by`` the table of every slice.

    Parameters
    ----------
    y_true, y_score, sample_weight, pos_label, ties
        As in :func:`precall.table.threshold_table` (binary input).
    by, min_support
        As in :func:`average_precision`: a :class:`~precall.SlicedTables` whose
        ``result[name]`` is the table of the slice's rows (equal to ``threshold_table`` of
        them) and ``overall`` the table of all rows; a summary per slice (rows, support,
        prevalence, step AP, ROC-AUC) with ``to_text`` / ``to_dict`` / ``to_csv`` / ``to_frame``.
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        With ``by``: the summary's step AP of a slice without positives and ROC-AUC of a slice of
        one class, as in :func:`evaluate` with ``by`` (the same numbers, one warning for all such
        slices).  A table itself holds counts only.

    Returns
    -------
    ThresholdTable, or SlicedTables with ``by``

    See Also
    --------
    evaluate : every number of the table (or of each slice) at once.

    Examples
    --------
    >>> import precall
    >>> y, s = [1, 0, 1, 1, 0, 0], [0.9, 0.8, 0.7, 0.7, 0.2, 0.6]
    >>> t = precall.threshold_table(y, s, by=["a", "a", "a", "b", "b", "b"])
    >>> t["a"].tp, t["b"].fp
    (array([1, 1, 2]), array([0, 1, 2]))
    """
    check_options(ties=ties)
    policy = check_on_undefined(on_undefined)
    if by is None:
        return _threshold_table(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label, ties=ties)
    data, codes, kept, n_samples = _sliced_input(y_true, y_score, sample_weight, pos_label, None, None, by, "strict")
    return table_slices(data, codes, kept, n_samples, ties=ties, min_support=min_support,  # type: ignore[arg-type]
                        on_undefined=policy)
