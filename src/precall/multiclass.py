"""Multi-class and multi-label input: a binary metric plus an averaging rule (scikit-learn's
``_average_binary_score``), and the multi-class evaluation.

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

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import combinations, permutations
from typing import Any, Callable, Iterator

import numpy as np

from ._core import conventions
from ._core.evaluation import Evaluation, evaluation_from_steps
from ._core.metric import Metric
from ._core.sort import (Ranked, ascending_key, distinct_counts, ranked_counts, run_ends, sorted_scores, sorted_split,
                         stable_descending_sort)
from ._core.steps import Steps, positives_tied, steps_and_grouped, steps_from_ranked, steps_from_sorted, steps_of
from ._core.undefined import NO_POSITIVES, ONE_CLASS_ROC, undefined
from ._core.validate import (
    AVERAGES,
    BinaryInput,
    MultiInput,
    check_multi,
    check_options,
)
from .table import ThresholdTable, table_of

__all__ = [
    "MeanAveragePrecision",
    "MultiEvaluation",
    "class_columns",
    "label_ranking_average_precision",
    "macro_pr_curve",
    "macro_roc_curve",
    "mean_average_precision",
    "per_class_tables",
]

BinaryMetric = Callable[[BinaryInput], float]
RowMetric = Callable[[np.ndarray, np.ndarray], np.ndarray]


def check_average(average: Any, allowed: tuple[str, ...] = AVERAGES) -> str | None:
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


def binary_ap(steps: Steps, method: str, recall_grid: str, policy: Any) -> float:
    """One problem's AP by ``method``, the undefined policy without positives."""
    if steps.n_pos[0] == 0:
        return undefined("average precision", NO_POSITIVES, 0.0, policy, stacklevel=5)
    return float(conventions.ap(steps, method, recall_grid)[0])


def binary_roc_auc(steps: Steps, policy: Any, max_fpr: float | None = None) -> float:
    """One problem's ROC-AUC (grouped steps), the undefined policy with one class."""
    if steps.n_pos[0] == 0 or steps.n_neg[0] == 0:
        return undefined("ROC AUC", ONE_CLASS_ROC, float("nan"), policy, stacklevel=5)
    return float(conventions.roc_auc(steps, max_fpr)[0])


def column_metric(metric: Metric) -> BinaryMetric:
    """The binary value of ``metric`` on one column (its class against the rest)."""

    def value(col: BinaryInput) -> float:
        return metric.value(steps_of(col, metric.ties))  # type: ignore[arg-type]

    return value


def average_values(values: np.ndarray, support: np.ndarray, average: str) -> np.ndarray:
    """Average per-class values of ``m`` problems at once: ``values`` and ``support`` of
    shape ``(m, k)`` (``support`` may be ``(k,)``), ``average`` "macro" (the plain mean: a
    NaN class makes the row NaN) or "weighted" (by support); shape ``(m,)``.  The one
    averaging rule of the bootstrap's replicates and of :func:`average_columns`."""
    if average == "macro":
        return values.mean(axis=1)
    support = np.broadcast_to(support, values.shape)
    return (values * support).sum(axis=1) / support.sum(axis=1)


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


def _contiguous_columns(a: np.ndarray) -> Iterator[np.ndarray]:
    """The columns of a 2-D array, each contiguous, transposed a block of columns at a time."""
    a = a if a.flags.c_contiguous else np.ascontiguousarray(a)
    for start in range(0, a.shape[1], _BLOCK_COLUMNS):
        block = _transposed(a, start, min(start + _BLOCK_COLUMNS, a.shape[1]))
        yield from block
        del block


def class_columns(data: MultiInput) -> Iterator[BinaryInput]:
    """Each class's binary problem, its column made contiguous a block at a time."""
    for scores, positive in zip(_contiguous_columns(data.scores), _contiguous_columns(data.positive)):
        yield _column(scores, positive, data.weight)


_ROW_CELLS = 1 << 22  # cells per block of rows for average="samples"


def samples_average(data: MultiInput, row_metric: RowMetric, undefined_args: tuple[str, str, float], policy: Any) -> float:
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


def average_columns(data: MultiInput, metric: BinaryMetric, average: str | None) -> float | np.ndarray:
    """Apply ``metric`` per class (or pooled) and average (not "samples": :func:`_samples`)."""
    s, y, w = data.scores, data.positive, data.weight
    k = s.shape[1]
    if average == "micro":
        return metric(_column(s.ravel(), y.ravel(), None if w is None else np.repeat(w, k)))
    per_class = np.array([metric(col) for col in class_columns(data)])
    if average is None:
        return per_class
    if average == "weighted":
        return _weighted(per_class, _support(data))
    return float(np.mean(per_class))


def hand_till(data: MultiInput, average: str, policy: Any,
              pair_auc: dict[tuple[int, int], float] | None = None) -> float:
    """One-vs-one ROC-AUC (Hand & Till 2001) over the pairs of present classes.

    ``pair_auc[a, b]`` is the AUC of column ``a`` separating class ``a`` from
    class ``b`` (column indices); computed here when not given.
    """
    y, w = data.positive, data.weight
    sizes = y.sum(axis=0)
    present = np.flatnonzero(sizes).tolist()
    total = y.shape[0] if w is None else float(w.sum())
    members: dict[int, np.ndarray] = {}
    if w is not None or pair_auc is None:
        members = {c: np.flatnonzero(y[:, c]) for c in present}
    if pair_auc is None:
        pair_auc = _pairwise_auc(data, members, policy)
    pair_scores, shares = [], []
    for a, b in combinations(present, 2):
        pair_scores.append((pair_auc[a, b] + pair_auc[b, a]) / 2)
        n_ab = int(sizes[a] + sizes[b])
        if w is not None:
            n_ab = float(w[members[a]].sum() + w[members[b]].sum())
        shares.append(n_ab / total)
    if not pair_scores:
        return undefined(
            "ROC AUC", "Only one class is present in y_true; one-vs-one ROC AUC needs two.",
            float("nan"), policy, stacklevel=3,
        )
    return float(np.average(pair_scores, weights=shares if average == "weighted" else None))


def _pairwise_auc(data: MultiInput, members: dict[int, np.ndarray], policy: Any) -> dict[tuple[int, int], float]:
    """The AUC of column ``a`` for class ``a`` against class ``b``, for every pair of present classes.

    Without weights, each class's rows of each column are sorted once and every
    pairwise AUC is counted from those sorted blocks (no sort per pair).
    """
    s, y, w = data.scores, data.positive, data.weight
    auc: dict[tuple[int, int], float] = {}
    if w is not None:
        for a, b in permutations(members, 2):
            rows = np.concatenate([members[a], members[b]])
            col = _column(s[rows, a], y[rows, a], w[rows])
            auc[a, b] = binary_roc_auc(steps_of(col, "group"), policy)
        return auc
    # each class's rows of each column sorted once; then, per column a, the steps of class
    # a's scores against every other class b as one batch (m = the b's), one kernel call
    cols = list(members)
    blocks = {(c, col): sorted_scores(s[rows, col]) for c, rows in members.items() for col in cols}
    for a in cols:
        values, counts = distinct_counts(blocks[a, a])
        others = [b for b in cols if b != a]
        if not others:
            continue
        n_neg = np.array([blocks[b, a].size for b in others])
        below = np.stack([np.searchsorted(blocks[b, a], values, side="left") for b in others])
        at_or_below = below.copy()  # differs only where a negative has exactly the value
        for j, b in enumerate(others):
            q = blocks[b, a]
            inside = below[j] < q.size
            tied = np.zeros(values.size, dtype=bool)
            tied[inside] = q[below[j][inside]] == values[inside]
            if tied.any():
                at_or_below[j, tied] = np.searchsorted(q, values[tied], side="right")
        shape = below.shape
        tp = np.broadcast_to(np.cumsum(counts[::-1]), shape)
        steps = Steps(tp, (n_neg[:, None] - below)[:, ::-1], np.broadcast_to(counts[::-1], shape),
                      (n_neg[:, None] - at_or_below)[:, ::-1], np.full(len(others), float(blocks[a, a].size)),
                      n_neg.astype(np.float64), None, True, True)
        auc.update(zip(((a, b) for b in others), conventions.roc_auc(steps).tolist()))
    return auc


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

    See Also
    --------
    average_precision : with ``average="samples"``, the per-sample AP of each row's classes.

    Examples
    --------
    >>> import precall
    >>> precall.label_ranking_average_precision([[1, 0, 0], [0, 0, 1]],
    ...                                         [[0.75, 0.5, 1], [1, 0.2, 0.1]])
    0.41666666666666663
    """
    if hasattr(y_true, "toarray"):  # a scipy.sparse indicator matrix, as scikit-learn accepts
        y_true = y_true.toarray()
    if hasattr(y_score, "toarray"):
        y_score = y_score.toarray()
    if np.ndim(y_true) != 2:
        raise ValueError(
            "`y_true` must be a 2-D 0/1 indicator matrix (n_samples, n_labels); got an "
            f"array of {np.ndim(y_true)} dimension(s)"
        )
    if np.shape(y_true) != np.shape(y_score):
        raise ValueError(
            f"`y_true` and `y_score` must have the same shape; got {np.shape(y_true)} and {np.shape(y_score)}"
        )
    truth = np.asarray(y_true)
    if truth.shape[1] == 1:  # one label: every sample ranks it first, so each scores 1 (scikit-learn)
        check_multi(np.c_[truth, truth], np.c_[np.asarray(y_score), np.asarray(y_score)], sample_weight)
        return 1.0
    data = check_multi(truth, y_score, sample_weight)
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

    See Also
    --------
    average_precision : the mean alone, with any ``average``.
    per_class_tables : each class's count table.

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
    check_options(method=method, ties=ties, recall_grid=recall_grid, absent=absent)
    data = check_multi(y_true, y_score, sample_weight, labels)

    per_class = average_columns(data, column_metric(Metric("average_precision", method=method, ties=ties, recall_grid=recall_grid, on_undefined="nan")), None)
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

    Parameters
    ----------
    y_true, y_score, sample_weight, labels
        As in :func:`precall.average_precision` (multi-class or multi-label input).
    ties : {"group", "stable"}, default="group"
        How each table treats equal scores.

    Returns
    -------
    dict of class to ThresholdTable

    See Also
    --------
    mean_average_precision : the per-class AP and their mean.
    evaluate : every number of every class.

    Examples
    --------
    >>> import precall
    >>> tables = precall.per_class_tables([0, 1, 2, 1], [[.8, .1, .1], [.2, .7, .1],
    ...                                                  [.1, .2, .7], [.3, .4, .3]])
    >>> sorted(tables), tables[1].tp
    ([0, 1, 2], array([1, 2, 2, 2]))
    """
    check_options(ties=ties)
    data = check_multi(y_true, y_score, sample_weight, labels)
    return {
        cls: table_of(_column(data.scores[:, c], data.positive[:, c], data.weight), ties)
        for c, cls in enumerate(data.classes.tolist())
    }


# ---------------------------------------------------------------------------
# macro-average curves (drawn by precall.plot and the report)
# The macro average of k per-class curves, drawn as one curve whose area is the
# macro average of the areas:
#
# * PR: mean precision at a common recall grid, the union of the classes'
#   recalls.  Each class's step curve is constant on each interval of that grid
#   ((R_{n-1}, R_n] at the precision of its threshold), so the mean step curve's
#   area is the mean of the step APs: the macro AP (step).  A class without
#   positives has no curve and counts as precision 0 (its AP counts 0 in the mean).
# * ROC: mean TPR over a common FPR grid, the union of the classes' FPRs, as
#   scikit-learn's ROC example draws it; at an FPR where some class's curve rises
#   vertically the mean is taken on both sides, so the polyline's trapezoid area
#   is the mean of the classes' AUCs: the macro one-vs-rest ROC-AUC.  A class with
#   one kind of sample (no ROC curve) is left out, as its AUC is undefined.
def macro_pr_curve(tables: Sequence[ThresholdTable]) -> tuple[np.ndarray, np.ndarray]:
    """The macro-average PR curve: mean precision at the union of the classes' recalls.

    Parameters
    ----------
    tables : sequence of ThresholdTable
        One class each (one against the rest), e.g. the values of
        :func:`precall.per_class_tables`.

    Returns
    -------
    recall, precision : ndarray
        In scikit-learn's order (recall decreasing, ending at ``(0, 1)``), to be
        drawn as steps (``drawstyle="steps-post"``): each recall interval
        ``(r_{j+1}, r_j]`` at the mean over classes of the precision of each
        class's step curve there.  Its area, ``-sum(diff(recall) *
        precision[:-1])``, is the macro step AP (a class without positives
        counting 0).

    See Also
    --------
    macro_roc_curve : the same for ROC curves.
    precall.evaluate : the macro AP (``average_precision["macro"]``).

    Examples
    --------
    >>> import numpy as np, precall
    >>> from precall.multiclass import macro_pr_curve
    >>> y = [0, 1, 2, 1, 0, 2]
    >>> s = np.eye(3)[[0, 1, 2, 0, 0, 1]] + 0.1
    >>> r, p = macro_pr_curve(list(precall.per_class_tables(y, s).values()))
    >>> area = -np.sum(np.diff(r) * p[:-1])
    >>> bool(np.isclose(area, precall.average_precision(y, s, average="macro")))
    True
    """
    if not tables:
        raise ValueError("`tables` must hold at least one class's table; got none")
    curves = []
    for table in tables:
        if table.n_pos > 0:
            curve = table.precision_recall_curve()
            curves.append((curve.recall[::-1], curve.precision[::-1]))  # recall increasing
    grid = np.unique(np.concatenate([r for r, _ in curves] + [np.array([0.0, 1.0])]))
    total = np.zeros(grid.size)
    for recall, precision in curves:
        # the step value on (previous grid point, r]: the first point whose recall reaches r (of
        # equal recalls, the one with the fewest false positives, as the step sum takes)
        total += precision[np.minimum(np.searchsorted(recall, grid, side="left"), recall.size - 1)]
    return grid[::-1], total[::-1] / len(tables)


def _sides(grid: np.ndarray, xp: np.ndarray, fp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A polyline through ``(xp, fp)`` (``xp`` non-decreasing, spanning ``grid``) at each
    ``grid`` point: the value coming from the left and leaving to the right (they differ
    where the polyline rises vertically)."""
    n = xp.size
    last = np.clip(np.searchsorted(xp, grid, side="right") - 1, 0, n - 1)  # last vertex at or before
    first = np.clip(np.searchsorted(xp, grid, side="left"), 0, n - 1)  # first vertex at or after
    vertex = xp[first] == grid
    width = np.where(vertex, 1.0, xp[first] - xp[last])
    mid = fp[last] + (fp[first] - fp[last]) * np.where(vertex, 0.0, (grid - xp[last]) / width)
    return np.where(vertex, fp[first], mid), np.where(vertex, fp[last], mid)


MACRO_ROC_UNDEFINED = (
    "No class has both positive and negative samples, so every class's ROC curve is undefined and so is "
    "their macro-average: its points are NaN"
)


def macro_roc_curve(tables: Sequence[ThresholdTable]) -> tuple[np.ndarray, np.ndarray]:
    """The macro-average ROC curve: mean TPR over the union of the classes' FPRs.

    Parameters
    ----------
    tables : sequence of ThresholdTable
        One class each (one against the rest), e.g. the values of
        :func:`precall.per_class_tables`; ROC uses each table's grouped form.

    Returns
    -------
    fpr, tpr : ndarray
        A polyline from ``(0, 0)`` to ``(1, 1)``: at each FPR of any class's ROC
        curve, the mean TPR of the classes coming from the left and leaving to
        the right (scikit-learn's example interpolates the mean TPR on such a
        grid; the two sides keep the vertical rises).  Its trapezoid area is the
        macro one-vs-rest ROC-AUC.  Classes with one kind of sample are left out;
        when every class has one kind (all rows of one label), the curve is
        undefined: ``[nan], [nan]`` with an :class:`~precall.UndefinedMetricWarning`,
        as :func:`precall.roc_curve` of one class.

    See Also
    --------
    macro_pr_curve : the same for PR curves.
    precall.roc_auc : the macro one-vs-rest AUC (``average="macro"``).

    Examples
    --------
    >>> import precall
    >>> from precall.multiclass import macro_roc_curve
    >>> tables = precall.per_class_tables(["a", "b", "c", "c"], [[.6, .3, .1], [.2, .5, .3],
    ...                                                         [.1, .3, .6], [.3, .4, .3]])
    >>> fpr, tpr = macro_roc_curve(list(tables.values()))
    >>> fpr.tolist(), tpr.tolist()  # doctest: +NORMALIZE_WHITESPACE
    ([0.0, 0.0, 0.3333333333333333, 0.5, 1.0], [0.0, 0.8333333333333334, 0.9444444444444443, 1.0, 1.0])
    """
    curves = []
    for table in tables:
        if table.n_pos > 0 and table.n_neg > 0:
            curve = table.grouped().roc_curve(drop_intermediate=True)
            curves.append((curve.fpr, curve.tpr))
    if not curves:  # undefined, as the ROC curve of one class (NaN rates with a warning)
        if not tables:
            raise ValueError("`tables` must hold at least one class's table; got none")
        undefined("the macro-average ROC curve", MACRO_ROC_UNDEFINED, float("nan"), "warn", stacklevel=3)
        return np.array([np.nan]), np.array([np.nan])
    grid = np.unique(np.concatenate([f for f, _ in curves]))
    left, right = np.zeros(grid.size), np.zeros(grid.size)
    for fpr, tpr in curves:
        a, b = _sides(grid, fpr, tpr)
        left += a
        right += b
    x = np.repeat(grid, 2)
    y = np.empty(x.size)
    y[0::2], y[1::2] = left / len(curves), right / len(curves)
    keep = np.r_[True, (np.diff(x) != 0) | (np.diff(y) != 0)]
    return x[keep], y[keep]


@dataclass(frozen=True)
class MultiEvaluation:
    """Every convention for each class (one against the rest) and the averages, from one
    sort per class; :func:`precall.evaluate` of multi-class or multi-label input.

    Attributes
    ----------
    classes : ndarray
        The class of each column of ``y_score``.
    per_class : tuple of Evaluation
        The binary :class:`~precall.Evaluation` of each class, in the order of ``classes``.
    support : ndarray
        Positive weight (row count without weights) of each class.
    average_precision : dict of str to dict of str to float
        ``average_precision[average][method]`` for ``"macro"``, ``"weighted"`` and
        ``"micro"`` (as :func:`precall.average_precision` with that ``average``).
    roc_auc : dict of str to float
        One-vs-rest ``"macro"``, ``"weighted"``, ``"micro"``; and ``"ovo"`` (Hand & Till,
        multi-class input only).
    multilabel : bool
    ties, recall_grid : str
    """

    classes: np.ndarray
    per_class: tuple[Evaluation, ...]
    support: np.ndarray
    average_precision: dict[str, dict[str, float]]
    roc_auc: dict[str, float]
    multilabel: bool
    ties: str
    recall_grid: str

    def per_class_average_precision(self, method: str = "step") -> np.ndarray:
        """AP of each class by ``method``."""
        return np.array([e.average_precision[method] for e in self.per_class])

    @property
    def per_class_roc_auc(self) -> np.ndarray:
        """One-vs-rest ROC-AUC of each class."""
        return np.array([e.roc_auc for e in self.per_class])


def evaluate_classes(data: MultiInput, *, ties: str, recall_grid: str, policy: Any,
                     micro: bool = True, ovo: bool = True) -> MultiEvaluation:
    """The :class:`MultiEvaluation` of validated multi-class or multi-label input.

    Each class is sorted once (its :class:`Evaluation`); the macro and weighted
    averages come from the per-class values.  Without weights, each column's
    sort also gives its positives' and negatives' sorted scores, merged for
    ``micro`` (every (sample, class) cell pooled), and, for multi-class input,
    the class of every row in that column's order, whose running counts give
    every one-vs-one pair's AUC (``ovo``) without another sort.  With weights,
    ``micro`` and ``ovo`` sort again (:func:`_micro_steps`, :func:`hand_till`).
    """
    per_class = []
    halves: list[tuple[np.ndarray, np.ndarray]] | None = [] if micro and data.weight is None else None
    pair_auc: dict[tuple[int, int], float] | None = None
    if data.weight is None and not data.multilabel:
        pair_auc = {}
        sizes = data.positive.sum(axis=0).tolist()
        for c, (ranked, twice) in enumerate(_ranked_classes(data, ovo)):
            steps = steps_from_ranked(ranked, ties)  # type: ignore[arg-type]
            grouped = steps if ties == "group" else steps_from_ranked(ranked, "group")
            per_class.append(evaluation_from_steps(steps, grouped, ties=ties, n_samples=data.scores.shape[0],
                                                   recall_grid=recall_grid, policy=policy))
            if halves is not None:
                halves.append((ranked.scores[ranked.positive][::-1], ranked.scores[~ranked.positive][::-1]))
            for b, tw in enumerate(twice):
                if b != c and sizes[b]:
                    pair_auc[c, b] = conventions.roc_auc_from_sum(tw, sizes[c], sizes[b], True)
    else:
        for col in class_columns(data):
            steps = None
            if halves is not None:  # unweighted: the sorted halves, kept for the micro average
                p, q = sorted_split(col)
                halves.append((p, q))
                steps = steps_from_sorted(p, q, ties)  # type: ignore[arg-type]
            if steps is None:
                steps, grouped = steps_and_grouped(col, ties)  # type: ignore[arg-type]
            else:  # as steps_and_grouped: the grouped steps where positives tie with each other
                grouped = steps if ties == "group" or not positives_tied(steps) else steps_from_sorted(p, q)
            per_class.append(evaluation_from_steps(steps, grouped, ties=ties, n_samples=col.n_samples,
                                                   recall_grid=recall_grid, policy=policy))
    support = _support(data).astype(np.float64)
    methods = list(conventions.CONVENTIONS)
    ap = {m: np.array([e.average_precision[m] for e in per_class]) for m in methods}
    auc = np.array([e.roc_auc for e in per_class])
    averages: dict[str, dict[str, float]] = {
        "macro": {m: float(np.mean(ap[m])) for m in methods},
        "weighted": {m: _weighted(ap[m], support) for m in methods},
    }
    rocs = {"macro": float(np.mean(auc)), "weighted": _weighted(auc, support)}
    if micro:
        steps, grouped = _micro_steps(data, ties, halves)
        averages["micro"] = {m: binary_ap(steps, m, recall_grid, policy) for m in methods}
        rocs["micro"] = binary_roc_auc(grouped, policy)
    if ovo and not data.multilabel:
        rocs["ovo"] = hand_till(data, "macro", policy, pair_auc)
    return MultiEvaluation(data.classes, tuple(per_class), support, averages, rocs, data.multilabel, ties,
                           recall_grid)


def _ranked_classes(data: MultiInput, pairs: bool) -> Iterator[tuple[Ranked, list[int]]]:
    """Multi-class input without weights: each column sorted once (stable, decreasing),
    as the :class:`Ranked` problem of its class, and (``pairs``) ``twice[b]``, the
    integer :func:`~precall._core.conventions.twice_fp_area` of the column's class
    against each class ``b`` alone (Hand & Till's pairs).

    ``twice[b]`` sums, over class ``b``'s rows, the column's class rows ranked
    below plus those ranked at or below (a tie counts once): the rows' classes
    in the column's order and the running count of its positives give it with
    one ``bincount``, no sort per pair.
    """
    n, k = data.scores.shape
    label = data.positive.argmax(axis=1)  # multi-class: every row has exactly one class
    for c, scores in enumerate(_contiguous_columns(data.scores)):
        order, sorted_scores = stable_descending_sort(scores)
        lab = label[order]
        del order
        ranked = ranked_counts(sorted_scores, lab == c)
        tp = ranked.tp
        n_c = int(tp[-1]) if n else 0
        if not (pairs and n_c):
            yield ranked, []
            continue
        ends = run_ends(sorted_scores)
        if ends is None:  # no ties: 2 x (positives ranked below the row)
            per_row = 2 * (n_c - tp)
        else:  # (below its run) + (at or below its run)
            starts = np.append(0, ends[:-1] + 1)
            above_run = np.where(starts > 0, tp[starts - 1], 0)
            per_run = 2 * n_c - tp[ends] - above_run
            per_row = np.repeat(per_run, ends - starts + 1)
        per_row[ranked.positive] = 0
        if 2.0 * n_c * n < 2.0**53:  # float sums of integers stay exact
            twice = np.bincount(lab, weights=per_row, minlength=k).astype(np.int64).tolist()
        else:
            twice = [int(per_row[lab == b].sum(dtype=np.int64)) for b in range(k)]
        yield ranked, twice


def _micro_steps(data: MultiInput, ties: str, halves: list[tuple[np.ndarray, np.ndarray]] | None
                 ) -> tuple[Steps, Steps]:
    """The steps of every (sample, class) cell pooled (``average="micro"``).

    Without weights the pooled positives and negatives are the per-class sorted
    halves merged (a stable sort of sorted runs is a merge: about 2.5x faster
    than sorting the n * k cells afresh); the pooled steps follow from them as
    from any sorted halves.
    """
    if halves is not None:
        p, q = (np.concatenate([h[i] for h in halves]) for i in (0, 1))
        keys = ascending_key(p), ascending_key(q)
        if keys[0] is not None and keys[1] is not None:
            p, q = keys  # no threshold is shown: the merge runs on integer keys
        p.sort(kind="stable")
        q.sort(kind="stable")
        steps = steps_from_sorted(p, q, ties)  # type: ignore[arg-type]
        if steps is not None:
            tied = ties != "group" and positives_tied(steps)  # as steps_and_grouped
            grouped = replace(steps_from_sorted(p, q), thresholds=None) if tied else None  # type: ignore[arg-type]
            steps = replace(steps, thresholds=None)
            return steps, grouped if grouped is not None else steps
    s, y, w = data.scores, data.positive, data.weight
    pooled = _column(s.ravel(), y.ravel(), None if w is None else np.repeat(w, s.shape[1]))
    return steps_and_grouped(pooled, ties)  # type: ignore[arg-type]


def _support(data: MultiInput) -> np.ndarray:
    """Each class's positive weight (its row count without weights)."""
    y, w = data.positive, data.weight
    return y.sum(axis=0) if w is None else (y * w[:, None]).sum(axis=0)


def _weighted(values: np.ndarray, support: np.ndarray) -> float:
    """The support-weighted mean, as scikit-learn's ``average="weighted"`` (0 without support)."""
    if not support.sum() > 0:  # scikit-learn tests isclose(., 0): not invariant under scaling the weights
        return 0.0
    return float(np.average(np.where(support == 0, 0.0, values), weights=support))
