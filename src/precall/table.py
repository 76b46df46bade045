"""The count table: TP and FP at every threshold, and the facade over the kernels.

:class:`ThresholdTable` is the public table: one row per distinct score
(``ties="group"``) or per sample (``ties="stable"``), in decreasing score order,
with the cumulative true and false positives at that row.  Every curve
(:mod:`precall.curves`) and every number (the kernels of
:mod:`precall._core.conventions`) derives from it; its methods are the
conveniences that call them.  :func:`threshold_table` builds it from labels and
scores through the one front door (:mod:`precall._core.validate`) and the one
sort (:mod:`precall._core.sort`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._core import conventions
from ._core.conventions import APTerms
from ._core.evaluation import Evaluation, evaluation_from_steps
from ._core.sort import group_ends, table_arrays
from ._core.steps import Steps, reweighting, steps_from_table
from ._core.text import threshold_texts
from ._core.undefined import NO_POSITIVES, ONE_CLASS_ROC, undefined
from ._core.validate import (
    Ties,
    check_binary,
    check_on_undefined,
    check_options,
    check_number,
    check_probability,
)
from .curves import (
    DetCurve,
    PrecisionRecallCurve,
    RocCurve,
    det_curve_from_counts,
    pr_curve_from_counts,
    roc_curve_from_counts,
)

__all__ = ["OperatingPoint", "ThresholdTable", "threshold_table"]


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


def _complement(total: float, counts: np.ndarray) -> np.ndarray:
    """``total - counts``, staying in integers when both are whole numbers."""
    if counts.dtype.kind in "iu" and float(total).is_integer():
        return int(total) - counts
    return total - counts


BEST_POINTS = ("youden", "closest")
"""The criteria of :meth:`ThresholdTable.operating_point` ``best=``: Youden's index and the
point closest to the ROC curve's corner (0, 1)."""


@dataclass(frozen=True)
class OperatingPoint:
    """One row of a :class:`ThresholdTable`: predict positive at ``score >= threshold``.

    ``precision`` is 0 when nothing is predicted positive (as the table's
    column); ``f1`` is ``2 P R / (P + R)`` (0 when both are 0).
    """

    threshold: float
    tp: float
    fp: float
    tn: float
    fn: float
    precision: float
    recall: float
    fpr: float
    f1: float


def _fmt(x: Any) -> str:
    if isinstance(x, (float, np.floating)):
        return f"{x:.6g}"
    return str(x)


@dataclass(frozen=True, eq=False)
class ThresholdTable:
    """TP and FP at every threshold: the one table every curve and area comes from.

    Rows are in decreasing score order.  With ``ties="group"`` there is one row
    per distinct score (samples with equal scores are predicted positive
    together, as in scikit-learn); with ``ties="stable"`` one row per sample,
    equal scores kept in input order (the seeds' rank tables, pycocotools).

    Parameters
    ----------
    thresholds : ndarray of shape (n_rows,)
        Decreasing scores; row ``i`` predicts positive every sample scored
        ``>= thresholds[i]`` (for ``ties="stable"``: the first ``i + 1``
        samples in rank order).
    tp, fp : ndarray of shape (n_rows,)
        Cumulative true and false positives at each row (integers without
        weights, float64 with them).
    n_pos, n_neg : float
        Total positive and negative weight.  ``n_pos`` may exceed ``tp[-1]``:
        in detection, ground truths that no detection found still count.
    ties : {"group", "stable"}
        How the rows treat equal scores: the rows, the PR curve, the AP
        conventions and the operating points at a recall, precision or
        threshold follow it; ROC-AUC (full and partial), the ROC and DET
        curves, AUPRG and the best ROC points group ties whatever it is, as
        the functions do (:meth:`grouped`).

    Examples
    --------
    >>> import precall
    >>> t = precall.threshold_table([0, 1, 1, 0], [0.1, 0.9, 0.4, 0.4])
    >>> t.tp, t.fp
    (array([1, 2, 2]), array([0, 1, 2]))
    >>> t.precision
    array([1.        , 0.66666667, 0.5       ])
    >>> round(t.average_precision(method="voc2010"), 4)  # 0.5 * 1 + 0.5 * 2/3
    0.8333
    """

    thresholds: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    n_pos: float
    n_neg: float
    ties: Ties = "group"

    def __post_init__(self) -> None:
        self._validate()
        _freeze(self)

    def _validate(self) -> None:
        check_options(ties=self.ties)
        t = np.asarray(self.thresholds)
        tp = np.asarray(self.tp)
        fp = np.asarray(self.fp)
        for name, a in (("thresholds", t), ("tp", tp), ("fp", fp)):
            if a.ndim != 1:
                raise ValueError(f"`{name}` must be 1-D; got shape {a.shape}")
            if a.dtype.kind not in "iuf":
                raise TypeError(f"`{name}` must be numeric; got dtype {a.dtype}")
            if a.dtype.kind == "f" and not np.isfinite(a).all():
                raise ValueError(f"`{name}` must be finite")
        if not (t.shape == tp.shape == fp.shape):
            raise ValueError(
                "`thresholds`, `tp` and `fp` must have the same length; got "
                f"{t.shape[0]}, {tp.shape[0]} and {fp.shape[0]}"
            )
        if t.shape[0] == 0:
            raise ValueError("a ThresholdTable must have at least one row; got 0")
        dt = np.diff(t)
        if self.ties == "group" and (dt >= 0).any():
            raise ValueError("`thresholds` must be strictly decreasing with ties='group'")
        if self.ties == "stable" and (dt > 0).any():
            raise ValueError("`thresholds` must be non-increasing with ties='stable'")
        for name, a in (("tp", tp), ("fp", fp)):
            if (a < 0).any() or (np.diff(a) < 0).any():
                raise ValueError(f"`{name}` must be non-negative and non-decreasing")
        check_number(self.n_pos, "n_pos", low=0)
        check_number(self.n_neg, "n_neg", low=0)
        if not (np.isfinite(self.n_pos) and self.n_pos >= tp[-1]):
            raise ValueError(f"`n_pos` must be at least tp[-1] = {tp[-1]}; got {self.n_pos}")
        if not (np.isfinite(self.n_neg) and self.n_neg >= fp[-1]):
            raise ValueError(f"`n_neg` must be at least fp[-1] = {fp[-1]}; got {self.n_neg}")

    # -- derived columns -------------------------------------------------
    def __len__(self) -> int:
        return int(self.thresholds.shape[0])

    @property
    def fn(self) -> np.ndarray:
        """False negatives at each row: ``n_pos - tp``."""
        return _complement(self.n_pos, self.tp)

    @property
    def tn(self) -> np.ndarray:
        """True negatives at each row: ``n_neg - fp``."""
        return _complement(self.n_neg, self.fp)

    @property
    def precision(self) -> np.ndarray:
        """``tp / (tp + fp)`` at each row (0 where nothing is predicted positive)."""
        tp = self.tp.astype(np.float64)
        ps = tp + self.fp
        return np.where(ps != 0, tp / np.where(ps != 0, ps, 1.0), 0.0)

    @property
    def recall(self) -> np.ndarray:
        """``tp / n_pos`` at each row (NaN when there are no positives)."""
        if self.n_pos == 0:
            return np.full(len(self), np.nan)
        return self.tp / self.n_pos

    tpr = recall

    @property
    def fpr(self) -> np.ndarray:
        """``fp / n_neg`` at each row (NaN when there are no negatives)."""
        if self.n_neg == 0:
            return np.full(len(self), np.nan)
        return self.fp / self.n_neg

    def grouped(self) -> "ThresholdTable":
        """The same table with equal thresholds merged into one row (``ties="group"``)."""
        if self.ties == "group":
            return self
        ends = group_ends(self.thresholds)
        return trusted_table(
            thresholds=self.thresholds[ends], tp=self.tp[ends], fp=self.fp[ends],
            n_pos=self.n_pos, n_neg=self.n_neg, ties="group",
        )

    def at_prevalence(self, prevalence: float) -> "ThresholdTable":
        """The table reweighted so that positives make up ``prevalence`` of the weight.

        Every negative's weight is multiplied by ``(1 - pi) / pi * n_pos / n_neg``
        (``pi = prevalence``); the positives are unchanged.  The PR curve and
        every AP convention of the result answer "what would this be if
        positives were ``pi`` of the population", assuming the scores of each
        class are distributed as in this data.  TPR and FPR, hence the ROC
        curve and ROC-AUC, do not change.  The counts become float64.  Where
        the reweighted counts would come near the ends of float range (weights
        near 1e300 or 1e-300 at an extreme prevalence), every count is
        rescaled, ``n_pos`` to [0.5, 1) by a power of two
        (:func:`~precall._core.steps.reweighting`): every rate and metric is
        the same, and no count overflows or underflows.

        Parameters
        ----------
        prevalence : float in [1e-300, 1)
            The share of positives to evaluate at (e.g. the deployment rate).

        Returns
        -------
        ThresholdTable

        Raises
        ------
        ValueError
            If ``prevalence`` is not in [1e-300, 1), or the table has no positive
            or no negative weight.

        Examples
        --------
        >>> import precall
        >>> t = precall.threshold_table([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1])
        >>> u = t.at_prevalence(0.2)          # 2 positives: negatives now weigh 8
        >>> u.n_pos, u.n_neg
        (2.0, 8.0)
        >>> u.fp
        array([0., 4., 4., 8.])
        >>> round(t.average_precision(), 4), round(u.average_precision(), 4)
        (0.8333, 0.6667)
        """
        r = reweighting(self.n_pos, self.n_neg, prevalence)
        return trusted_table(
            thresholds=self.thresholds, tp=r.positives(self.tp), fp=r.negatives(self.fp), n_pos=float(r.n_pos_at),
            n_neg=float(r.n_neg_at), ties=self.ties,
        )

    def _steps(self) -> Steps:
        """The rows where TP increases, with the FP count just above each (what every kernel reads)."""
        return steps_from_table(self.thresholds, self.tp, self.fp, self.n_pos, self.n_neg)

    # -- curves and metrics: conveniences over curves.py and the kernels -----
    def precision_recall_curve(self, *, drop_intermediate: bool = False) -> PrecisionRecallCurve:
        """Precision-recall curve; see :func:`precall.precision_recall_curve`."""
        return pr_curve_from_counts(self.thresholds, self.tp, self.fp, self.n_pos,
                                    drop_intermediate=drop_intermediate)

    def roc_curve(self, *, drop_intermediate: bool = True) -> RocCurve:
        """ROC curve; see :func:`precall.roc_curve`.  One point per distinct score whatever
        ``ties`` (the ROC curve groups ties: a stable table's order within a run of equal
        scores is the input's, which would otherwise draw another curve)."""
        t = self.grouped()
        return roc_curve_from_counts(t.thresholds, t.tp, t.fp, t.n_pos, t.n_neg,
                                     drop_intermediate=drop_intermediate)

    def det_curve(self, *, drop_intermediate: bool = False) -> DetCurve:
        """DET curve; see :func:`precall.det_curve`.  One point per distinct score whatever
        ``ties``, as :meth:`roc_curve` (the same operating points in other axes)."""
        t = self.grouped()
        return det_curve_from_counts(t.thresholds, t.tp, t.fp, t.n_pos, t.n_neg,
                                     drop_intermediate=drop_intermediate)

    def average_precision(
        self, *, method: str = "step", recall_grid: str = "reference", on_undefined: Any = "warn"
    ) -> float:
        """Average precision by the named convention; see :func:`precall.average_precision`."""
        check_options(method=method, recall_grid=recall_grid)
        policy = check_on_undefined(on_undefined)
        if self.n_pos == 0:
            return undefined("average precision", NO_POSITIVES, 0.0, policy)
        return float(conventions.ap(self._steps(), method, recall_grid)[0])

    def roc_auc(self, *, max_fpr: float | None = None, on_undefined: Any = "warn") -> float:
        """ROC-AUC (optionally McClish's partial AUC); see :func:`precall.roc_auc`.  ROC-AUC
        groups ties whatever ``ties``: a stable table's area is that of its grouped rows."""
        policy = check_on_undefined(on_undefined)
        if max_fpr is not None:
            max_fpr = check_probability(max_fpr, "max_fpr")
        if self.n_pos == 0 or self.n_neg == 0:
            return undefined("ROC AUC", ONE_CLASS_ROC, float("nan"), policy)
        return float(conventions.roc_auc(self.grouped()._steps(), max_fpr)[0])

    def evaluate(self, *, recall_grid: str = "reference", on_undefined: Any = "warn") -> Evaluation:
        """Every convention at once; see :func:`precall.evaluate`."""
        check_options(recall_grid=recall_grid)
        return evaluation_from_steps(
            self._steps(), self.grouped()._steps(), ties=self.ties, n_samples=None,
            recall_grid=recall_grid, policy=check_on_undefined(on_undefined),
        )

    # -- presentation ----------------------------------------------------
    def _point(self, row: int, threshold: float | None = None) -> OperatingPoint:
        if row < 0:  # above the first row: nothing predicted positive
            p = r = f = 0.0
            return OperatingPoint(float(threshold), 0.0, 0.0, self.n_neg, self.n_pos, p, r, f, 0.0)
        p, r = float(self.precision[row]), float(self.recall[row])
        f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
        return OperatingPoint(
            float(self.thresholds[row]), float(self.tp[row]), float(self.fp[row]), float(self.tn[row]),
            float(self.fn[row]), p, r, float(self.fpr[row]), f1,
        )

    def operating_point(
        self, *, recall: float | None = None, precision: float | None = None, threshold: float | None = None,
        best: str | None = None,
    ) -> OperatingPoint:
        """The operating point at a target recall, precision or threshold, or the best one
        by a ROC criterion (give one).

        ``recall=r``: the highest threshold whose recall is at least r.
        ``precision=p``: of the rows with precision at least p, the one with the
        highest recall (at its highest threshold).  ``threshold=t``: predict
        positive every sample scored ``>= t`` (the last row at or above t; a
        point predicting nothing when t exceeds every score).  ``best="youden"``:
        the threshold with the largest Youden index ``TPR - FPR``;
        ``best="closest"``: the one closest to the ROC corner (0, 1), the least
        ``(1 - TPR)^2 + FPR^2`` (pROC's ``coords(x = "best", best.method =
        "youden" | "closest.topleft")``); the highest threshold among equals,
        over the distinct scores.

        Examples
        --------
        >>> import precall
        >>> t = precall.threshold_table([1, 0, 1, 1, 0], [0.9, 0.8, 0.7, 0.6, 0.2])
        >>> t.operating_point(recall=0.6).threshold
        0.7
        >>> t.operating_point(precision=0.75).recall
        1.0
        """
        given = [name for name, v in (("recall", recall), ("precision", precision), ("threshold", threshold),
                                      ("best", best)) if v is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of `recall`, `precision`, `threshold`, `best`; got {given or 'none'}")
        if best is not None:
            return self._best_point(best)
        if threshold is not None:
            t = check_number(threshold, "threshold")
            # thresholds decrease: rows at or above t are a prefix
            row = int(np.searchsorted(-self.thresholds, -t, side="right")) - 1
            return self._point(row, t)
        target = check_probability(recall if recall is not None else precision, given[0], open_low=False)
        if recall is not None:
            reached = np.flatnonzero(self.recall >= target)
            if reached.size == 0:
                raise ValueError(
                    f"`recall` {target:g} is never reached; the highest recall is {float(self.recall[-1]):g}"
                )
            return self._point(int(reached[0]))
        ok = np.flatnonzero(self.precision >= target)
        if ok.size == 0:
            raise ValueError(
                f"`precision` {target:g} is never reached; the highest precision is {float(self.precision.max()):g}"
            )
        best_recall = self.recall[ok].max()
        return self._point(int(ok[self.recall[ok] == best_recall][0]))

    def _best_point(self, criterion: str) -> OperatingPoint:
        """:meth:`operating_point` ``best=criterion`` (one of :data:`BEST_POINTS`)."""
        if criterion not in BEST_POINTS:
            raise ValueError(f"`best` must be one of {', '.join(map(repr, BEST_POINTS))}; got {criterion!r}")
        table = self.grouped()  # a criterion of the ROC curve: one row per distinct score
        if table.n_pos <= 0 or table.n_neg <= 0:
            raise ValueError(f"`best` {criterion!r} needs positives and negatives; got {table.n_pos:g} positive "
                             f"and {table.n_neg:g} negative")
        tpr, fpr = table.recall, table.fpr
        value = tpr - fpr if criterion == "youden" else -((1.0 - tpr) ** 2 + fpr ** 2)
        row = int(np.argmax(value))  # the first (highest threshold) among equals
        return table._point(row)

    def ap_terms(self, method: str = "step", *, recall_grid: str = "reference") -> APTerms:
        """The terms that sum to this table's AP by ``method`` (:class:`precall.APTerms`): what
        ``precall explain`` prints and the plots draw."""
        return conventions.ap_terms(self._steps(), method, recall_grid)

    @property
    def precision_envelope(self) -> np.ndarray:
        """The best precision at this row's recall or beyond (VOC's interpolated precision)."""
        p = self.precision
        return np.maximum.accumulate(p[::-1])[::-1]

    def _columns(self) -> dict[str, np.ndarray]:
        cols: dict[str, np.ndarray] = {}
        if self.ties == "stable":
            cols["rank"] = np.arange(1, len(self) + 1)
        cols["threshold"] = self.thresholds
        cols["tp"] = self.tp
        cols["fp"] = self.fp
        cols["fn"] = self.fn
        cols["tn"] = self.tn
        cols["precision"] = self.precision
        cols["recall"] = self.recall
        cols["fpr"] = self.fpr
        return cols

    def to_text(self, max_rows: int | None = 20) -> str:
        """Render the table as aligned text, like the seeds' rank tables.

        Parameters
        ----------
        max_rows : int or None, default=20
            Show at most this many rows (the first and last halves); None shows all.
        """
        if max_rows is not None:
            max_rows = check_number(max_rows, "max_rows", low=1, integer=True, hint="or None for every row")
        cols = self._columns()
        n = len(self)
        if max_rows is None or n <= max_rows:
            rows = list(range(n))
            cut = None
        else:
            head = max(1, max_rows // 2)
            tail = max(1, max_rows - head)
            rows = list(range(head)) + list(range(n - tail, n))
            cut = head
        cells = [[_fmt(cols[c][i].item()) for c in cols] for i in rows]
        # thresholds by the one rule of a rank table's column (``precall explain``'s): 6 significant digits,
        # more where a neighbouring distinct threshold would print the same
        at = list(cols).index("threshold")
        for cell, text in zip(cells, threshold_texts(self.thresholds, 6, rows)):
            cell[at] = text
        if cut is not None:
            cells.insert(cut, ["..."] * len(cols))
        header = list(cols)
        widths = [max(len(h), *(len(r[j]) for r in cells)) for j, h in enumerate(header)]
        lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths))]
        lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells]
        summary = (
            f"ThresholdTable: {n} rows (ties={self.ties!r}), "
            f"n_pos={_fmt(self.n_pos)}, n_neg={_fmt(self.n_neg)}"
        )
        return summary + "\n" + "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return (
            f"ThresholdTable(n_rows={len(self)}, n_pos={_fmt(self.n_pos)}, "
            f"n_neg={_fmt(self.n_neg)}, ties={self.ties!r})"
        )

    def to_pandas(self) -> Any:
        """The table as a :class:`pandas.DataFrame` (needs the ``pandas`` extra)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError(
                "ThresholdTable.to_pandas needs pandas; install it with "
                "`pip install 'precall[pandas]'`"
            ) from None
        return pd.DataFrame(self._columns())


def _freeze(table: ThresholdTable) -> None:
    for name in ("thresholds", "tp", "fp"):
        object.__setattr__(table, name, _readonly(np.asarray(getattr(table, name))))
    object.__setattr__(table, "n_pos", float(table.n_pos))
    object.__setattr__(table, "n_neg", float(table.n_neg))


def trusted_table(thresholds: np.ndarray, tp: np.ndarray, fp: np.ndarray, n_pos: float, n_neg: float,
                  ties: str = "group") -> ThresholdTable:
    """A :class:`ThresholdTable` of arrays precall built itself (internal: no checks)."""
    table = object.__new__(ThresholdTable)
    for name, value in (("thresholds", thresholds), ("tp", tp), ("fp", fp), ("n_pos", n_pos), ("n_neg", n_neg),
                        ("ties", ties)):
        object.__setattr__(table, name, value)
    _freeze(table)
    return table


def table_of(data: Any, ties: str) -> ThresholdTable:
    """The table of validated input (:class:`precall._core.validate.BinaryInput`)."""
    return trusted_table(*table_arrays(data, ties), ties)  # type: ignore[arg-type]


def threshold_table(
    y_true, y_score, *, sample_weight=None, pos_label=None, ties="group"
) -> ThresholdTable:
    """Sort once and count: TP and FP at every threshold.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels; {0, 1}, {-1, 1}, bool, or any labels with ``pos_label``.
    y_score : array-like of shape (n_samples,)
        Scores; higher means more likely positive.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights; zero-weight samples add no row.
    pos_label : int, float, bool or str, default=None
        The positive label; None means 1, allowed for labels in {0, 1} or {-1, 1}.
    ties : {"group", "stable"}, default="group"
        One row per distinct score, or one row per sample with equal scores in
        input order.

    Returns
    -------
    ThresholdTable

    See Also
    --------
    ThresholdTable : the table and its methods (curves, every AP, ROC-AUC, operating points).
    evaluate : every number without keeping the table.

    Examples
    --------
    >>> import precall
    >>> table = precall.threshold_table([1, 0, 1, 1, 0], [0.9, 0.8, 0.7, 0.7, 0.2])
    >>> table.thresholds
    array([0.9, 0.8, 0.7, 0.2])
    >>> table.tp, table.fp
    (array([1, 1, 3, 3]), array([0, 1, 1, 2]))
    >>> print(table.to_text())  # doctest: +NORMALIZE_WHITESPACE
    ThresholdTable: 4 rows (ties='group'), n_pos=3, n_neg=2
    threshold  tp  fp  fn  tn  precision  recall  fpr
          0.9   1   0   2   2          1  0.333333    0
          0.8   1   1   2   1        0.5  0.333333  0.5
          0.7   3   1   0   1       0.75         1  0.5
          0.2   3   2   0   0        0.6         1    1
    """
    check_options(ties=ties)
    return table_of(check_binary(y_true, y_score, sample_weight, pos_label), ties)
