"""Exact metrics on Dask arrays and DataFrame columns (the ``dask`` extra).

The implementation lives in :mod:`precall.scale.dask` (the score-range
algorithm of :mod:`precall.scale.ranges`); this module is its public path.
"""

from __future__ import annotations

from .scale.dask import __doc__ as _doc
from .scale.dask import accumulate, average_precision, evaluate, evaluations, roc_auc, score, threshold_table

__doc__ = _doc
__all__ = ["accumulate", "average_precision", "evaluate", "evaluations", "roc_auc", "score", "threshold_table"]
