"""precall: precision-recall and ROC curves, every average-precision convention by name.

Sort the scores once; cumulative counts of the labels give TP and FP at every
threshold (:class:`ThresholdTable`); every curve and every area follows from
that one table.  :data:`CONVENTIONS` names each convention (formula, grid,
sentinels, tie rule, minimum, reference).

The package reads top-down (``docs/design.md``): ``_core`` (the one front door
of validation, the one sort, the steps, the kernel of each convention), then
``table`` and ``curves``, ``space``, ``multiclass`` and ``metrics``, then
``stats``, ``scale`` (streaming, binned, score ranges), ``detection``, and the
presentation: ``plot`` (with ``report``), ``readers`` and ``cli``.  ``plot``,
``report``, ``dask`` and ``detection`` are loaded on first use (matplotlib and
dask only then).
"""

from __future__ import annotations

import importlib
from typing import Any

from . import stats
from ._core.backend import last_kernel, set_kernel
from ._core.conventions import CONVENTIONS, APTerms, Convention
from ._core.evaluation import Evaluation, F1Point, normalized_average_precision
from ._core.undefined import UndefinedMetricWarning
from ._core.validate import AP_METHODS
from ._version import __version__
from .curves import (
    DetCurve,
    PrecisionRecallCurve,
    RocCurve,
    det_curve,
    precision_recall_curve,
    roc_curve,
)
from ._core.metric import Metric
from .metrics import average_precision, evaluate, metric, roc_auc, score, threshold_table
from .multiclass import (
    MeanAveragePrecision,
    MultiEvaluation,
    label_ranking_average_precision,
    mean_average_precision,
    per_class_tables,
)
from .scale import Accumulator, Bounded, SlicedAccumulator
from .space import (
    PrecisionRecallGainCurve,
    PrecisionRecallPoints,
    RocPoints,
    auprg,
    min_average_precision,
    min_precision,
    pr_from_roc,
    precision_recall_gain_curve,
    roc_from_pr,
)
from .slices import SlicedEvaluation, SlicedMultiEvaluation, SlicedTables, SlicedValues
from .table import OperatingPoint, ThresholdTable

__all__ = [
    "AP_METHODS",
    "APTerms",
    "Accumulator",
    "Bounded",
    "CONVENTIONS",
    "Convention",
    "DetCurve",
    "Evaluation",
    "F1Point",
    "MeanAveragePrecision",
    "Metric",
    "MultiEvaluation",
    "OperatingPoint",
    "PrecisionRecallCurve",
    "PrecisionRecallGainCurve",
    "PrecisionRecallPoints",
    "RocCurve",
    "RocPoints",
    "SlicedAccumulator",
    "SlicedEvaluation",
    "SlicedMultiEvaluation",
    "SlicedTables",
    "SlicedValues",
    "ThresholdTable",
    "UndefinedMetricWarning",
    "__version__",
    "auprg",
    "average_precision",
    "metric",
    "score",
    "set_kernel",
    "last_kernel",
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

_LAZY = ("plot", "report", "dask", "spark", "detection", "readers", "cli")


def __getattr__(name: str) -> Any:
    """``precall.plot``, ``precall.report``, ``precall.dask``, ``precall.spark``, ``precall.detection``: imported on first use."""
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


# ---------------------------------------------------------------------------
# the data objects' drawing conveniences, wired here (the package sits above every layer) so that
# no data module imports the presentation layer: each method loads precall.plot when called
def _table_plot(self: ThresholdTable, kind: str = "pr", *, ax: Any = None, label: str = "model",
                **kwargs: Any) -> Any:
    """Draw this table's PR curve (``kind="pr"``) or ROC curve (``"roc"``) with
    :mod:`precall.plot` (matplotlib, the ``plot`` extra); returns the Axes.

    ``kwargs`` go to :func:`precall.plot.draw_pr` (``method``, ``envelope``,
    ``eleven_point``, ``baseline``) or :func:`precall.plot.draw_roc`
    (``shade``, ``max_fpr``).
    """
    from . import plot

    return plot.plot_table(self, kind, ax=ax, label=label, **kwargs)


def _curve_plot(self: Any, *, ax: Any = None, label: str | None = None, **line_kw: Any) -> Any:
    """Draw the curve with :mod:`precall.plot` (a PR curve as steps, a ROC curve with the
    chance diagonal); returns the Axes."""
    from . import plot

    return plot.plot_curve(self, ax=ax, label=label, **line_kw)


ThresholdTable.plot = _table_plot  # type: ignore[attr-defined]
PrecisionRecallCurve.plot = _curve_plot  # type: ignore[attr-defined]
RocCurve.plot = _curve_plot  # type: ignore[attr-defined]
