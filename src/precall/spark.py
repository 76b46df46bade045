"""Exact metrics on Apache Spark DataFrames (the ``spark`` extra).

The implementation lives in :mod:`precall.scale.spark` (the score-range
algorithm of :mod:`precall.scale.ranges`, as :mod:`precall.dask`); this module
is its public path.
"""

from __future__ import annotations

from .scale.spark import __doc__ as _doc
from .scale.spark import (
    MODES,
    MllibComparison,
    Scan,
    average_precision,
    compare_mllib,
    evaluate,
    evaluations,
    mllib_areas,
    roc_auc,
    scan,
    threshold_table,
)

__doc__ = _doc
__all__ = ["MODES", "MllibComparison", "Scan", "average_precision", "compare_mllib", "evaluate", "evaluations",
           "mllib_areas", "roc_auc", "scan", "threshold_table"]
