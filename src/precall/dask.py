"""Exact metrics on Dask arrays and DataFrame columns (the ``dask`` extra).

Each partition becomes an exact :class:`precall.Accumulator` (its distinct
scores with their positive and negative weights), shipped between workers as
the accumulator's versioned payload and tree-reduced with ``merge``; the
result is the same :class:`precall.ThresholdTable` as
:func:`precall.threshold_table` on all the rows, so every number equals the
in-memory one (bit for bit without weights).  No worker holds more than its
partition and the merged state of the distinct scores, which must fit in
memory (see ``docs/scaling.md`` for the range-partitioned plan when it does
not).

Examples
--------
>>> import dask.array as da, numpy as np
>>> import precall, precall.dask
>>> y = da.from_array(np.array([0, 1, 1, 0, 1, 0]), chunks=2)
>>> s = da.from_array(np.array([0.1, 0.9, 0.4, 0.4, 0.2, 0.3]), chunks=2)
>>> precall.dask.average_precision(y, s) == precall.average_precision(y.compute(), s.compute())
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._counts import ThresholdTable
from .accumulate import Accumulator

__all__ = ["accumulate", "average_precision", "evaluate", "roc_auc", "threshold_table"]


def _dask() -> Any:
    try:
        import dask
        import dask.array  # noqa: F401
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("precall.dask needs dask, the 'dask' extra: pip install 'precall[dask]'") from None
    return dask


def _as_array(x: Any, name: str) -> Any:
    import dask.array as da

    if hasattr(x, "to_dask_array"):  # dask Series / DataFrame column
        return x.to_dask_array(lengths=True)
    if isinstance(x, da.Array):
        return x
    raise TypeError(f"`{name}` must be a dask array or a dask Series; got {type(x).__name__} "
                    "(use precall's in-memory functions for numpy arrays)")


def _partition(y: np.ndarray, s: np.ndarray, w: np.ndarray | None, pos_label: Any) -> bytes:
    acc = Accumulator(pos_label=pos_label)
    if len(y):
        acc.update(y, s, sample_weight=w)
    return acc.to_bytes()


def _merge(*payloads: bytes) -> bytes:
    out = Accumulator.from_bytes(payloads[0])
    for p in payloads[1:]:
        out = out.merge(Accumulator.from_bytes(p))
    return out.to_bytes()


def accumulate(
    y_true: Any, y_score: Any, *, sample_weight: Any = None, pos_label: Any = None, split_every: int = 8
) -> Accumulator:
    """The exact :class:`Accumulator` of dask data: one per partition, tree-reduced
    ``split_every`` at a time (on whatever scheduler is active, e.g. a
    ``distributed.Client``)."""
    dask = _dask()
    y = _as_array(y_true, "y_true")
    s = _as_array(y_score, "y_score")
    if y.ndim != 1 or s.ndim != 1:
        raise ValueError(f"`y_true` and `y_score` must be 1-D; got {y.ndim}-D and {s.ndim}-D")
    if y.shape[0] != s.shape[0]:
        raise ValueError(f"`y_true` and `y_score` must have the same length; got {y.shape[0]} and {s.shape[0]}")
    s = s.rechunk(y.chunks)
    blocks = [y.to_delayed().ravel(), s.to_delayed().ravel()]
    if sample_weight is not None:
        w = _as_array(sample_weight, "sample_weight").rechunk(y.chunks)
        blocks.append(w.to_delayed().ravel())
    parts = [dask.delayed(_partition)(b[0], b[1], b[2] if len(b) > 2 else None, pos_label)
             for b in zip(*blocks)]
    if not parts:
        raise ValueError("`y_true` and `y_score` must not be empty; got 0 samples")
    while len(parts) > 1:
        parts = [dask.delayed(_merge)(*parts[i:i + split_every]) for i in range(0, len(parts), split_every)]
    (payload,) = dask.compute(parts[0])
    return Accumulator.from_bytes(payload)


def threshold_table(y_true: Any, y_score: Any, *, sample_weight: Any = None, pos_label: Any = None) -> ThresholdTable:
    """:func:`precall.threshold_table` (grouped ties) of dask data."""
    return accumulate(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label).table()


def average_precision(y_true: Any, y_score: Any, *, method: str = "step", sample_weight: Any = None,
                      pos_label: Any = None, recall_grid: str = "reference", on_undefined: Any = "warn") -> float:
    """:func:`precall.average_precision` (grouped ties) of dask data."""
    table = threshold_table(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label)
    return table.average_precision(method=method, recall_grid=recall_grid, on_undefined=on_undefined)


def roc_auc(y_true: Any, y_score: Any, *, sample_weight: Any = None, pos_label: Any = None,
            max_fpr: float | None = None, on_undefined: Any = "warn") -> float:
    """:func:`precall.roc_auc` of dask data."""
    table = threshold_table(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label)
    return table.roc_auc(max_fpr=max_fpr, on_undefined=on_undefined)


def evaluate(y_true: Any, y_score: Any, *, sample_weight: Any = None, pos_label: Any = None,
             recall_grid: str = "reference", on_undefined: Any = "warn") -> Any:
    """:func:`precall.evaluate` (grouped ties) of dask data: every convention from one reduction."""
    table = threshold_table(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label)
    return table.evaluate(recall_grid=recall_grid, on_undefined=on_undefined)
