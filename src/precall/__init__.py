"""precall: precision-recall and ROC curves, every average-precision convention by name.

Sort the scores once; cumulative counts of the labels give TP and FP at every
threshold (:class:`ThresholdTable`); every curve and every area follows from
that one table.  See :mod:`precall.scores` for the conventions.
"""

from __future__ import annotations

from ._counts import OperatingPoint, ThresholdTable
from .accumulate import Accumulator
from ._validate import check_binary as _check_binary
from ._warnings import UndefinedMetricWarning
from .curves import (
    DetCurve,
    PrecisionRecallCurve,
    RocCurve,
    det_curve,
    precision_recall_curve,
    roc_curve,
)
from .evaluate import Evaluation, F1Point, evaluate
from .averaging import (
    MeanAveragePrecision,
    average_precision,
    label_ranking_average_precision,
    mean_average_precision,
    per_class_tables,
    roc_auc,
)
from .scores import AP_METHODS, CONVENTIONS, Convention
from .space import (
    PrecisionRecallGainCurve,
    PrecisionRecallPoints,
    RocPoints,
    auprg,
    min_average_precision,
    min_precision,
    normalized_average_precision,
    pr_from_roc,
    precision_recall_gain_curve,
    roc_from_pr,
)
from . import stats  # noqa: E402  (uses the public metrics above)

__version__ = "0.1.0"

__all__ = [
    "AP_METHODS",
    "Accumulator",
    "CONVENTIONS",
    "Convention",
    "DetCurve",
    "Evaluation",
    "F1Point",
    "MeanAveragePrecision",
    "OperatingPoint",
    "PrecisionRecallCurve",
    "PrecisionRecallGainCurve",
    "PrecisionRecallPoints",
    "RocCurve",
    "RocPoints",
    "ThresholdTable",
    "UndefinedMetricWarning",
    "auprg",
    "average_precision",
    "det_curve",
    "evaluate",
    "label_ranking_average_precision",
    "mean_average_precision",
    "min_average_precision",
    "min_precision",
    "normalized_average_precision",
    "per_class_tables",
    "pr_from_roc",
    "precision_recall_curve",
    "precision_recall_gain_curve",
    "roc_auc",
    "roc_curve",
    "roc_from_pr",
    "stats",
    "threshold_table",
]


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
    from ._counts import TIES, build_table
    from ._validate import check_choice

    check_choice(ties, "ties", TIES)
    return build_table(_check_binary(y_true, y_score, sample_weight, pos_label), ties)
