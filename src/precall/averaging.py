"""Multi-class and multi-label input: a binary metric plus an averaging rule.

Each column of ``y_score`` is one binary problem (its class against the rest);
the binary metric (any AP convention, or ROC-AUC) is computed per column from
that column's own sort, and the per-class values are averaged:

``"macro"``     the plain mean over classes (mAP);
``"weighted"``  the mean weighted by each class's positive weight (support);
``"micro"``     the binary metric of all (sample, class) cells pooled;
``"samples"``   the mean over samples of the metric of each row (its classes
                ranked by score), weighted by ``sample_weight``;
``None``        the per-class values.

These equal scikit-learn's ``average_precision_score`` and ``roc_auc_score``
(``multi_class="ovr"``) wherever scikit-learn accepts the input.  Classes with
no positives follow the binary policy (``on_undefined``): by default AP 0 with a
warning, counted as 0 in the mean, as scikit-learn does.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any, Callable, Iterator

import numpy as np

from ._rowwise import row_ap, row_roc_auc, row_steps
from ._counts import ThresholdTable, build_steps, build_table, steps_from_sorted
from ._validate import (
    BinaryInput,
    MultiInput,
    check_choice,
    check_multi,
    check_on_undefined,
    check_probability,
    is_multi,
)
from .scores import (
    AP_METHODS,
    NO_POSITIVES,
    ONE_CLASS_ROC,
    RECALL_GRIDS,
    TIES,
    ap_from_steps,
    roc_auc_from_steps,
    roc_auc_from_table,
    undefined,
)
from .scores import average_precision as binary_average_precision
from .scores import roc_auc as binary_roc_auc

__all__ = [
    "AVERAGES",
    "MeanAveragePrecision",
    "average_precision",
    "label_ranking_average_precision",
    "mean_average_precision",
    "per_class_tables",
    "roc_auc",
]

AVERAGES: tuple[str, ...] = ("macro", "weighted", "micro", "samples")

BinaryMetric = Callable[[BinaryInput], float]
RowMetric = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _check_average(average: Any, allowed: tuple[str, ...]) -> str | None:
    if average is None:
        return None
    if not isinstance(average, str) or average not in allowed:
        raise ValueError(
            f"`average` must be one of {', '.join(repr(a) for a in allowed)} or None; "
            f"got {average!r}"
        )
    return average


def _column(scores: np.ndarray, positive: np.ndarray, weight: np.ndarray | None) -> BinaryInput:
    return BinaryInput(np.ascontiguousarray(scores), np.ascontiguousarray(positive), weight, True, scores.shape[0])


def _ap_metric(method: str, ties: str, recall_grid: str, policy: Any) -> BinaryMetric:
    """The binary AP of one column, by convention."""

    def metric(col: BinaryInput) -> float:
        steps = build_steps(col, ties)  # type: ignore[arg-type]
        return ap_from_steps(steps, method=method, recall_grid=recall_grid, on_undefined=policy)

    return metric


_BLOCK_COLUMNS = 16  # columns transposed at a time (memory: 16 x n scores)
_BLOCK_ROWS = 1024  # rows per transposed tile (a tile stays in cache)


def _transposed(a: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Columns ``start:stop`` of a C-ordered 2-D array as contiguous rows.

    Copied tile by tile: a plain ``a[:, start:stop].T.copy()`` reads a whole
    cache line per element and is about 5x slower on large inputs.
    """
    n = a.shape[0]
    out = np.empty((stop - start, n), dtype=a.dtype)
    for r in range(0, n, _BLOCK_ROWS):
        out[:, r : r + _BLOCK_ROWS] = a[r : r + _BLOCK_ROWS, start:stop].T
    return out


def _columns(data: MultiInput) -> Iterator[BinaryInput]:
    """Each class's binary problem, its column made contiguous a block at a time."""
    s, y, w = data.scores, data.positive, data.weight
    k = s.shape[1]
    if not s.flags.c_contiguous or not y.flags.c_contiguous:
        s, y = np.ascontiguousarray(s), np.ascontiguousarray(y)
    for start in range(0, k, _BLOCK_COLUMNS):
        stop = min(start + _BLOCK_COLUMNS, k)
        scores, positive = _transposed(s, start, stop), _transposed(y, start, stop)
        for j in range(stop - start):
            yield _column(scores[j], positive[j], w)
        del scores, positive


_ROW_CELLS = 1 << 22  # cells per block of rows for average="samples"


def _samples(data: MultiInput, row_metric: RowMetric, undefined_args: tuple[str, str, float], policy: Any) -> float:
    """``average="samples"``: the metric of each row, in blocks of rows, averaged.

    Rows where the metric is undefined (no positive; for ROC-AUC also no
    negative) follow the binary policy once for all of them.
    """
    s, y, w = data.scores, data.positive, data.weight
    n, k = s.shape
    block = max(1, _ROW_CELLS // k)
    per_row = np.concatenate([row_metric(s[i : i + block], y[i : i + block]) for i in range(0, n, block)])
    bad = np.isnan(per_row)
    if bad.any():
        name, message, default = undefined_args
        message = f"{int(bad.sum())} of {n} samples: {message}"
        per_row[bad] = undefined(name, message, default, policy, stacklevel=5)
    return float(np.average(per_row, weights=w))


def _average(data: MultiInput, metric: BinaryMetric, average: str | None) -> float | np.ndarray:
    """Apply ``metric`` per class (or pooled) and average (not "samples": :func:`_samples`)."""
    s, y, w = data.scores, data.positive, data.weight
    k = s.shape[1]
    if average == "micro":
        return metric(_column(s.ravel(), y.ravel(), None if w is None else np.repeat(w, k)))
    per_class = np.array([metric(col) for col in _columns(data)])
    if average is None:
        return per_class
    if average == "weighted":
        support = y.sum(axis=0) if w is None else (y * w[:, None]).sum(axis=0)
        if np.isclose(support.sum(), 0.0):
            return 0.0
        per_class[support == 0] = 0.0
        return float(np.average(per_class, weights=support))
    return float(np.mean(per_class))


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
) -> float | np.ndarray:
    """Average precision (PR-AUC) by a named convention; binary, multi-class or multi-label.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_classes)
        Binary labels, class labels (multi-class, with a 2-D ``y_score``), or a
        0/1 indicator matrix (multi-label).
    y_score : array-like of shape (n_samples,) or (n_samples, n_classes)
        Scores; for multi-class and multi-label input one column per class.
    method, ties, sample_weight, recall_grid, on_undefined
        As in :func:`precall.scores.average_precision` (the binary function):
        ``method`` is one of :data:`precall.AP_METHODS`, applied per class.
    pos_label : label, default=None
        Binary input only: the positive label.
    average : {"macro", "weighted", "micro", "samples"} or None, default="macro"
        How per-class values are combined (see :mod:`precall.averaging`);
        ignored for binary input, as in scikit-learn.
    labels : array-like, default=None
        The class of each column of ``y_score``.  Default: the sorted labels
        of ``y_true`` (multi-class) or ``0..k-1`` (multi-label).
    prevalence : float in (0, 1), default=None
        Binary input only: the AP with the negatives reweighted so that
        positives are this share of the data (see
        :func:`precall.scores.average_precision`).

    Returns
    -------
    float, or ndarray of shape (n_classes,) when ``average=None``

    Examples
    --------
    >>> import precall
    >>> y = [0, 0, 1, 1, 2, 2]
    >>> s = [[0.7, 0.2, 0.1], [0.4, 0.3, 0.3], [0.1, 0.8, 0.1],
    ...      [0.2, 0.3, 0.5], [0.4, 0.4, 0.2], [0.1, 0.2, 0.7]]
    >>> round(precall.average_precision(y, s), 4)
    0.7778
    >>> precall.average_precision(y, s, average=None).round(4)
    array([0.8333, 0.75  , 0.75  ])
    """
    check_choice(method, "method", AP_METHODS)
    check_choice(ties, "ties", TIES)
    check_choice(recall_grid, "recall_grid", RECALL_GRIDS)
    policy = check_on_undefined(on_undefined)
    if not is_multi(y_true, y_score, labels):
        _check_average(average, AVERAGES)
        return binary_average_precision(
            y_true, y_score, method=method, ties=ties, sample_weight=sample_weight,
            pos_label=pos_label, recall_grid=recall_grid, on_undefined=policy, prevalence=prevalence,
        )
    if prevalence is not None:
        raise ValueError(
            f"`prevalence` applies to binary input; got multi-class or multi-label input and "
            f"prevalence={prevalence!r}. Evaluate each class as a binary problem "
            "(precall.per_class_tables(...)[c].at_prevalence(pi)) with its own prevalence"
        )
    avg = _check_average(average, AVERAGES)
    data = check_multi(y_true, y_score, sample_weight, labels)

    if avg == "samples":
        return _samples(
            data, lambda s, y: row_ap(row_steps(s, y, ties), method, recall_grid),
            ("average precision", NO_POSITIVES, 0.0), policy,
        )
    metric = _ap_metric(method, ties, recall_grid, policy)
    return _average(data, metric, avg)


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
) -> float | np.ndarray:
    """Area under the ROC curve; binary, one-vs-rest multi-class, or multi-label.

    Parameters
    ----------
    y_true, y_score, sample_weight, labels
        As in :func:`average_precision`.
    max_fpr : float in (0, 1], default=None
        McClish-standardised partial AUC (binary and multi-label input only, as
        scikit-learn).
    pos_label : label, default=None
        Binary input only; None follows ``roc_auc_score`` (the greater label).
    average : {"macro", "weighted", "micro", "samples"} or None, default="macro"
        ``"samples"`` only for multi-label input.
    multi_class : {"ovr", "ovo"}, default="ovr"
        ``"ovr"``: each class against the rest.  ``"ovo"``: Hand & Till (2001),
        the mean over pairs of classes (a, b) of the average of AUC(a vs b on
        column a) and AUC(b vs a on column b), using only the samples of a and
        b; ``average="weighted"`` weights each pair by its share of the samples.
        Beyond scikit-learn, ``"ovo"`` accepts ``sample_weight``: each pairwise
        AUC is the weighted binary AUC of the pair's samples, and a pair's
        share is its share of the total weight.  Unlike scikit-learn, the
        scores need not be probabilities summing to 1: each AUC only ranks
        one column.
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        For a class (or the input) with a single class present: NaN with a
        warning by default, as scikit-learn.

    Returns
    -------
    float, or ndarray of shape (n_classes,) when ``average=None``

    Examples
    --------
    >>> import precall
    >>> y = [0, 0, 1, 1, 2, 2]
    >>> s = [[0.7, 0.2, 0.1], [0.4, 0.3, 0.3], [0.1, 0.8, 0.1],
    ...      [0.2, 0.3, 0.5], [0.4, 0.4, 0.2], [0.1, 0.2, 0.7]]
    >>> round(precall.roc_auc(y, s), 4)
    0.8333
    """
    policy = check_on_undefined(on_undefined)
    if not is_multi(y_true, y_score, labels):
        _check_average(average, AVERAGES)
        return binary_roc_auc(
            y_true, y_score, max_fpr=max_fpr, sample_weight=sample_weight,
            pos_label=pos_label, on_undefined=policy,
        )
    check_choice(multi_class, "multi_class", ("ovr", "ovo"))
    data = check_multi(y_true, y_score, sample_weight, labels)
    if multi_class == "ovo":
        if data.multilabel:
            raise ValueError(
                "`multi_class='ovo'` needs multi-class `y_true` (one label per sample); got "
                "a multi-label indicator matrix. Use multi_class='ovr'"
            )
        if max_fpr is not None and max_fpr != 1:
            raise ValueError("`max_fpr` (partial AUC) is not available for multi-class input")
        avg = _check_average(average, ("macro", "weighted"))
        return _hand_till(data, avg or "macro", policy)
    allowed = AVERAGES if data.multilabel else ("macro", "weighted", "micro")
    avg = _check_average(average, allowed)
    if max_fpr is not None:
        max_fpr = check_probability(max_fpr, "max_fpr")
        if not data.multilabel and max_fpr != 1:
            raise ValueError(
                "`max_fpr` (partial AUC) is not available for multi-class input; got "
                f"max_fpr={max_fpr!r}. Use max_fpr=None"
            )

    def metric(col: BinaryInput) -> float:
        if max_fpr is None or max_fpr == 1:
            return roc_auc_from_steps(build_steps(col, "group"), policy=policy)
        return roc_auc_from_table(build_table(col, "group"), max_fpr=max_fpr, on_undefined=policy)

    if avg == "samples":
        return _samples(
            data, lambda s, y: row_roc_auc(row_steps(s, y, "group"), max_fpr),
            ("ROC AUC", ONE_CLASS_ROC, float("nan")), policy,
        )
    return _average(data, metric, avg)


def _hand_till(data: MultiInput, average: str, policy: Any) -> float:
    """One-vs-one ROC-AUC (Hand & Till 2001) over the pairs of present classes.

    Without weights, each column is sorted once per class block and every
    pairwise AUC is counted from those sorted blocks (no sort per pair).
    """
    y, s, w = data.positive, data.scores, data.weight
    present = np.flatnonzero(y.any(axis=0))
    total = y.shape[0] if w is None else float(w.sum())
    members = {c: np.flatnonzero(y[:, c]) for c in present.tolist()}
    if w is None:
        blocks = {(c, col): np.sort(s[rows, col]) for c, rows in members.items() for col in members}

        def pair_auc(pos: int, neg: int) -> float:
            steps = steps_from_sorted(blocks[pos, pos], blocks[neg, pos])
            return roc_auc_from_steps(steps, policy=policy)  # type: ignore[arg-type]
    else:

        def pair_auc(pos: int, neg: int) -> float:
            rows = np.concatenate([members[pos], members[neg]])
            col = _column(s[rows, pos], y[rows, pos], w[rows])  # type: ignore[index]
            return roc_auc_from_steps(build_steps(col, "group"), policy=policy)

    pair_scores, shares = [], []
    for a, b in combinations(members, 2):
        pair_scores.append((pair_auc(a, b) + pair_auc(b, a)) / 2)
        n_ab = members[a].size + members[b].size
        if w is not None:
            n_ab = float(w[members[a]].sum() + w[members[b]].sum())
        shares.append(n_ab / total)
    if not pair_scores:
        return undefined(
            "ROC AUC", "Only one class is present in y_true; one-vs-one ROC AUC needs two.",
            float("nan"), policy, stacklevel=3,
        )
    return float(np.average(pair_scores, weights=shares if average == "weighted" else None))


def label_ranking_average_precision(
    y_true: Any, y_score: Any, *, sample_weight: Any = None
) -> float:
    """Label ranking average precision; scikit-learn's ``label_ranking_average_precision_score``.

    For each sample, each relevant label j scores the fraction of relevant
    labels among the labels ranked at or above j (score >= score of j); the
    sample's value is the mean over its relevant labels, 1 when it has no
    relevant label or only relevant labels; the result is the (weighted) mean
    over samples.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_labels)
        0/1 indicator matrix of relevant labels.
    y_score : array-like of shape (n_samples, n_labels)
        Scores of each label for each sample.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights of the samples.

    Returns
    -------
    float

    Examples
    --------
    >>> import precall
    >>> precall.label_ranking_average_precision([[1, 0, 0], [0, 0, 1]],
    ...                                         [[0.75, 0.5, 1], [1, 0.2, 0.1]])
    0.41666666666666663
    """
    if np.ndim(y_true) != 2:
        raise ValueError(
            "`y_true` must be a 2-D 0/1 indicator matrix (n_samples, n_labels); got an "
            f"array of {np.ndim(y_true)} dimension(s)"
        )
    data = check_multi(y_true, y_score, sample_weight)
    y, s = data.positive, data.scores
    n, k = s.shape
    per_sample = np.ones(n)
    n_relevant = y.sum(axis=1)
    ranked = np.flatnonzero((n_relevant > 0) & (n_relevant < k))
    chunk = max(1, 4_000_000 // (k * k))
    for start in range(0, ranked.size, chunk):
        rows = ranked[start : start + chunk]
        sr, yr = s[rows], y[rows]
        at_or_above = sr[:, None, :] >= sr[:, :, None]  # [i, j, l]: label l ranked at or above j
        rank = at_or_above.sum(axis=2)
        relevant_above = (at_or_above & yr[:, None, :]).sum(axis=2)
        ratio = np.where(yr, relevant_above / rank, 0.0)
        per_sample[rows] = ratio.sum(axis=1) / n_relevant[rows]
    return float(np.average(per_sample, weights=data.weight))


@dataclass(frozen=True)
class MeanAveragePrecision:
    """Mean of per-class AP, with the per-class values and which were undefined.

    Attributes
    ----------
    value : float
        The mean AP (NaN when every class is undefined and ``absent="skip"``).
    per_class : ndarray of shape (n_classes,)
        AP of each class (NaN for undefined classes).
    classes : ndarray
        The class of each entry.
    undefined : ndarray of bool
        Classes with no positive in ``y_true`` (AP undefined).
    method, ties, absent : str
        The convention, the tie rule and the policy for undefined classes.
    """

    value: float
    per_class: np.ndarray
    classes: np.ndarray
    undefined: np.ndarray
    method: str
    ties: str
    absent: str

    def to_text(self) -> str:
        """Per-class table and the mean, as aligned text."""
        names = [str(c) for c in self.classes.tolist()]
        width = max([len("class")] + [len(n) for n in names])
        lines = [f"{'class'.ljust(width)}  AP ({self.method}, ties={self.ties!r})"]
        for name, ap, und in zip(names, self.per_class, self.undefined):
            lines.append(f"{name.ljust(width)}  " + ("undefined (no positives)" if und else f"{ap:.6f}"))
        rule = "counted as 0" if self.absent == "zero" else "skipped"
        lines.append(f"{'mAP'.ljust(width)}  {self.value:.6f}  (undefined classes {rule})")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


def mean_average_precision(
    y_true: Any,
    y_score: Any,
    *,
    method: str = "step",
    ties: str = "group",
    sample_weight: Any = None,
    labels: Any = None,
    recall_grid: str = "reference",
    absent: str = "zero",
) -> MeanAveragePrecision:
    """Mean average precision over classes (mAP), with the per-class table.

    Parameters
    ----------
    y_true, y_score, method, ties, sample_weight, labels, recall_grid
        As in :func:`average_precision` (multi-class or multi-label input).
    absent : {"zero", "skip"}, default="zero"
        Classes with no positives have no AP.  ``"zero"`` counts them as 0 in
        the mean (scikit-learn's ``average_precision_score``); ``"skip"``
        leaves them out (pycocotools).  No warning is raised: the result's
        ``undefined`` field names them.

    Returns
    -------
    MeanAveragePrecision

    Examples
    --------
    >>> import precall
    >>> y = [[1, 0, 0], [0, 1, 0], [1, 1, 0]]
    >>> s = [[0.9, 0.2, 0.1], [0.3, 0.8, 0.4], [0.6, 0.7, 0.2]]
    >>> result = precall.mean_average_precision(y, s, absent="skip")
    >>> result.undefined
    array([False, False,  True])
    >>> result.value
    1.0
    """
    check_choice(method, "method", AP_METHODS)
    check_choice(ties, "ties", TIES)
    check_choice(recall_grid, "recall_grid", RECALL_GRIDS)
    check_choice(absent, "absent", ("zero", "skip"))
    data = check_multi(y_true, y_score, sample_weight, labels)

    metric = _ap_metric(method, ties, recall_grid, "nan")
    per_class = _average(data, metric, None)
    undefined_classes = ~data.positive.any(axis=0)
    if absent == "zero":
        value = float(np.mean(np.where(undefined_classes, 0.0, per_class)))
    else:
        defined = per_class[~undefined_classes]
        value = float(np.mean(defined)) if defined.size else float("nan")
    return MeanAveragePrecision(
        value, per_class, data.classes, undefined_classes, method, ties, absent  # type: ignore[arg-type]
    )


def per_class_tables(
    y_true: Any, y_score: Any, *, sample_weight: Any = None, labels: Any = None, ties: str = "group"
) -> dict[Any, ThresholdTable]:
    """The :class:`ThresholdTable` of each class (one against the rest), by class.

    Examples
    --------
    >>> import precall
    >>> tables = precall.per_class_tables([0, 1, 2, 1], [[.8, .1, .1], [.2, .7, .1],
    ...                                                  [.1, .2, .7], [.3, .4, .3]])
    >>> sorted(tables), tables[1].tp
    ([0, 1, 2], array([1, 2, 2, 2]))
    """
    check_choice(ties, "ties", TIES)
    data = check_multi(y_true, y_score, sample_weight, labels)
    return {
        cls: build_table(_column(data.scores[:, c], data.positive[:, c], data.weight), ties)  # type: ignore[arg-type]
        for c, cls in enumerate(data.classes.tolist())
    }
