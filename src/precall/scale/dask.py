"""Exact metrics on Dask arrays and DataFrame columns (the ``dask`` extra).

Two algorithms, both exact:

* ``evaluate``, ``average_precision`` and ``roc_auc`` partition the rows by
  score range (cut points at quantiles of a sample of every partition; equal
  scores share a range), sort each range on its own worker and reduce the
  ranges' partial sums, passing each range the totals of the ranges above it
  and, for the envelope, the best precision of the ranges below it (see
  :mod:`precall._ranges`).  No worker ever holds more than its ranges' rows;
  the client receives O(1) numbers per range.  Results equal the in-memory ones
  to about 1e-15 (ROC-AUC without weights exactly).
  ``threshold_table`` cuts the same way and concatenates the ranges' rows of
  the table on the client (which must hold the table).
* ``accumulate`` builds one exact :class:`precall.Accumulator` per partition,
  shipped between workers as the accumulator's versioned payload and
  tree-reduced with ``merge``: the state can then be updated, merged or saved.

Both tables equal :func:`precall.threshold_table` on all the rows (bit for bit
without weights).

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

from typing import Any, Sequence

import numpy as np

from . import ranges as _ranges
from .._core.evaluation import Evaluation
from .._core.metric import Metric
from .._core.undefined import NO_POSITIVES, undefined
from ..slices import SlicedEvaluation, SlicedTables, SlicedValues
from .._core.validate import (
    BinaryInput, check_allocation, check_binary, check_number, zero_weight_batch, check_on_undefined, check_probability, check_options, check_prevalence, check_prevalences,
)
from ..table import ThresholdTable
from .accumulator import Accumulator
from .sliced import SlicedAccumulator

__all__ = ["accumulate", "average_precision", "evaluate", "evaluations", "roc_auc", "score", "threshold_table"]


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


def _sliced_partition(y: np.ndarray, s: np.ndarray, w: np.ndarray | None, pos_label: Any, names: list[str],
                      *by: Any) -> bytes:
    acc = SlicedAccumulator(pos_label=pos_label)
    if len(y):
        acc.update(y, s, by=dict(zip(names, by)), sample_weight=w)
    return acc.to_bytes()


def _merge(*payloads: bytes, kind: type = Accumulator) -> bytes:
    out = kind.from_bytes(payloads[0])
    for p in payloads[1:]:
        out = out.merge(kind.from_bytes(p))
    return out.to_bytes()


def _by_columns(by: Any) -> list[tuple[str, Any]]:
    """The dask slice columns of ``by``: a dask DataFrame (each column), a dict, a list, or one
    dask Series or array (named by its ``name``, else ``slice``), as :func:`precall.evaluate`."""
    if hasattr(by, "columns") and hasattr(by, "npartitions") and getattr(by, "ndim", 2) == 2:
        return [(str(c), by[c]) for c in by.columns]
    if isinstance(by, dict):
        return [(str(k), v) for k, v in by.items()]
    if isinstance(by, (list, tuple)) and by:
        return [(_series_name(v) or f"by{i}", v) for i, v in enumerate(by)]
    return [(_series_name(by) or "slice", by)]


def _series_name(column: Any) -> str | None:
    """A dask Series' name (a dask array's ``name`` is its graph key, not a column name)."""
    name = getattr(column, "name", None)
    return str(name) if name is not None and hasattr(column, "to_delayed") and not hasattr(column, "chunks") \
        else None


def _blocks(y_true: Any, y_score: Any, sample_weight: Any, extra: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Aligned (labels, scores, weights, *extra) blocks as delayed objects.

    Columns of one dask DataFrame are used partition by partition (no length
    computation); dask arrays are rechunked to the labels' chunks.
    """
    _dask()
    columns = [y_true, y_score] + ([] if sample_weight is None else [sample_weight])
    if all(hasattr(c, "to_delayed") and hasattr(c, "npartitions") for c in [*columns, *extra]) and \
            len({c.npartitions for c in [*columns, *extra]}) == 1:
        delayed_columns = [c.to_delayed() for c in columns]
        if sample_weight is None:
            delayed_columns.append([None] * len(delayed_columns[0]))
        delayed_columns += [c.to_delayed() for c in extra]
        return list(zip(*delayed_columns))
    y = _as_array(y_true, "y_true")
    s = _as_array(y_score, "y_score")
    if y.ndim != 1 or s.ndim != 1:
        raise ValueError(f"`y_true` and `y_score` must be 1-D; got {y.ndim}-D and {s.ndim}-D")
    if y.shape[0] != s.shape[0]:
        raise ValueError(f"`y_true` and `y_score` must have the same length; got {y.shape[0]} and {s.shape[0]}")
    s = s.rechunk(y.chunks)
    blocks = [y.to_delayed().ravel(), s.to_delayed().ravel()]
    if sample_weight is not None:
        blocks.append(_as_array(sample_weight, "sample_weight").rechunk(y.chunks).to_delayed().ravel())
    else:
        blocks.append([None] * len(blocks[0]))
    for i, c in enumerate(extra):
        arr = _as_array(c, "by")
        if arr.ndim != 1 or arr.shape[0] != y.shape[0]:
            raise ValueError(f"`by` column {i} must be 1-D with one value per row ({y.shape[0]}); got shape "
                             f"{arr.shape}")
        blocks.append(arr.rechunk(y.chunks).to_delayed().ravel())
    out = list(zip(*blocks))
    if not out or y.shape[0] == 0:
        raise ValueError("`y_true` and `y_score` must not be empty; got 0 samples")
    return out


def _checked(y: Any, s: Any, w: Any, pos_label: Any, index: int, rule: Any = "strict") -> BinaryInput:
    y, s = np.asarray(y), np.asarray(s)
    if y.shape != s.shape:
        raise ValueError(f"`y_true` and `y_score` partitions must have the same length; got {y.shape} and {s.shape} "
                         f"in partition {index} (use columns of one DataFrame, or arrays of equal length)")
    if y.size == 0:
        return BinaryInput(s.astype(np.float64), np.zeros(0, dtype=bool), None, pos_label, 0)
    try:
        data = zero_weight_batch(w, y.shape[0], lambda: check_binary(y, s, None, pos_label, pos_label_rule=rule))
        if data is not None:  # a partition of zero weights adds nothing, as an Accumulator's batch
            return BinaryInput(data.scores[:0], data.positive[:0], np.zeros(0), data.pos_label, 0)  # weighted
        return check_binary(y, s, None if w is None else np.asarray(w), pos_label, pos_label_rule=rule)
    except ValueError as exc:
        raise ValueError(f"partition {index} (indices below count from its start): {exc}") from None


def accumulate(
    y_true: Any, y_score: Any, *, sample_weight: Any = None, pos_label: Any = None, split_every: int = 8,
    by: Any = None,
) -> Accumulator | SlicedAccumulator:
    """The exact :class:`precall.Accumulator` of dask data: one per partition, tree-reduced
    ``split_every`` at a time (on whatever scheduler is active, e.g. a ``distributed.Client``).

    Parameters
    ----------
    y_true, y_score : dask array or dask Series
        Labels and scores (columns of one dask DataFrame are used partition by
        partition; dask arrays are rechunked to the labels' chunks).
    sample_weight : dask array or dask Series, default=None
        Non-negative weights.
    pos_label : label, default=None
        As in :func:`precall.average_precision`.
    split_every : int, default=8
        Payloads merged per task of the reduction.
    by : dask Series or array, several of them (list or dict), or a dask DataFrame, default=None
        Slice columns (as in :func:`precall.evaluate`): a :class:`precall.SlicedAccumulator`
        per partition, merged the same way.

    Returns
    -------
    Accumulator, or SlicedAccumulator with ``by``

    See Also
    --------
    evaluate : the score-range algorithm, without shipping the state.
    """
    split_every = check_number(split_every, "split_every", low=2, integer=True,
                               hint="payloads merged per task of the reduction")
    dask = _dask()
    if by is None:
        kind: type = Accumulator
        parts = [dask.delayed(_partition)(y, s, w, pos_label) for y, s, w in _blocks(y_true, y_score, sample_weight)]
    else:
        kind = SlicedAccumulator
        names, columns = zip(*_by_columns(by))
        parts = [dask.delayed(_sliced_partition)(y, s, w, pos_label, list(names), *cols)
                 for y, s, w, *cols in _blocks(y_true, y_score, sample_weight, columns)]
    while len(parts) > 1:
        parts = [dask.delayed(_merge)(*parts[i:i + split_every], kind=kind) for i in range(0, len(parts), split_every)]
    (payload,) = dask.compute(parts[0])
    return kind.from_bytes(payload)


def threshold_table(y_true: Any, y_score: Any, *, sample_weight: Any = None, pos_label: Any = None,
                    n_ranges: int | None = None, by: Any = None, min_support: int = 0,
                    on_undefined: Any = "warn") -> ThresholdTable | SlicedTables:
    """:func:`precall.threshold_table` (grouped ties) of dask data: each score range's rows
    of the table built on a worker, shifted by the ranges above, concatenated on the client
    (which must hold the table).

    Parameters
    ----------
    y_true, y_score : dask array or dask Series
        Labels and scores (columns of one dask DataFrame are used partition by
        partition; dask arrays are rechunked to the labels' chunks).
    sample_weight : dask array or dask Series, default=None
        Non-negative weights.
    pos_label : label, default=None
        As in :func:`precall.average_precision`.
    n_ranges : int, default=None
        Score ranges (default: the number of partitions, at most 64).
    by, min_support, on_undefined
        As in :func:`precall.threshold_table` with ``by``: the table of every slice, from the
        merged :class:`precall.SlicedAccumulator` (:func:`accumulate`; not by score ranges).

    Returns
    -------
    ThresholdTable, or SlicedTables with ``by``

    See Also
    --------
    evaluate : every number without assembling the table.
    """
    if by is not None:
        _by_only(n_ranges)
        acc = accumulate(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label, by=by)
        return acc.tables(min_support=min_support, on_undefined=check_on_undefined(on_undefined))
    dask = _dask()
    parts, n_ranges = _parts(y_true, y_score, sample_weight, pos_label, n_ranges)
    (table,) = dask.compute(_ranges.wire_table(parts, dask.delayed, n_ranges=n_ranges))
    return table


def _by_only(n_ranges: Any) -> None:
    if n_ranges is not None:
        raise ValueError(f"`n_ranges` is not available with `by`; got n_ranges={n_ranges!r}. Drop it (slices are "
                         "merged per partition, not cut by score)")


_TASK_BYTES = 4096
"""What one task of a dask graph costs the scheduler, roughly (for the bound on ``n_ranges``)."""


def _parts(y_true: Any, y_score: Any, sample_weight: Any, pos_label: Any, n_ranges: int | None,
           rule: str = "strict") -> tuple[list[Any], int]:
    dask = _dask()
    blocks = _blocks(y_true, y_score, sample_weight)
    if n_ranges is None:
        n_ranges = min(len(blocks), 64)
    n_ranges = check_number(n_ranges, "n_ranges", low=1, integer=True, hint="score ranges, each sorted on its own")
    # each partition is split into n_ranges pieces, each a task of the graph
    check_allocation(n_ranges, _TASK_BYTES * len(blocks), "n_ranges",
                     hint=f"choose fewer ranges ({len(blocks)} partitions x n_ranges tasks of ~{_TASK_BYTES} bytes)")
    return [dask.delayed(_checked)(y, s, w, pos_label, i, rule) for i, (y, s, w) in enumerate(blocks)], int(n_ranges)


def evaluate(y_true: Any, y_score: Any, *, sample_weight: Any = None, pos_label: Any = None,
             recall_grid: str = "reference", on_undefined: Any = "warn", prevalence: float | None = None,
             n_ranges: int | None = None, by: Any = None, min_support: int = 0) -> Evaluation | SlicedEvaluation:
    """:func:`precall.evaluate` (grouped ties) of dask data, by score ranges.

    Parameters
    ----------
    y_true, y_score : dask array or dask Series
        Labels and scores (columns of one dask DataFrame are used partition by
        partition; dask arrays are rechunked to the labels' chunks).
    sample_weight : dask array or dask Series, default=None
        Non-negative weights.
    pos_label : label, default=None
        As in :func:`precall.average_precision`.
    recall_grid, on_undefined, prevalence
        As in :func:`precall.evaluate`.
    n_ranges : int, default=None
        How many score ranges the rows are cut into (default: the number of
        partitions, at most 64); each range is sorted on one worker.
    by : dask Series or array, several of them (list or dict), or a dask DataFrame, default=None
        Slice columns: the :class:`precall.SlicedEvaluation` of
        ``precall.evaluate(..., by=...)`` (grouped ties), from one
        :class:`precall.SlicedAccumulator` per partition tree-merged as
        :func:`accumulate` (equal to the in-memory one bit for bit without weights).
    min_support : int, default=0
        With ``by``: slices with fewer rows are reported but not ranked.

    Returns
    -------
    Evaluation, or SlicedEvaluation with ``by``

    See Also
    --------
    evaluations : several prevalences from one pass.
    precall.evaluate : the same in memory.
    """
    if by is not None:
        if prevalence is not None or n_ranges is not None:
            raise ValueError(f"`prevalence` and `n_ranges` are not available with `by`; got prevalence={prevalence!r}, "
                             f"n_ranges={n_ranges!r}. Drop them (slices are merged per partition, not cut by score)")
        check_options(recall_grid=recall_grid)
        policy = check_on_undefined(on_undefined)
        acc = accumulate(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label, by=by)
        return acc.evaluate(recall_grid=recall_grid, on_undefined=policy, min_support=min_support)
    if prevalence is not None:
        prevalence = check_prevalence(prevalence)
    return evaluations(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label, recall_grid=recall_grid,
                       on_undefined=on_undefined, prevalences=(prevalence,), n_ranges=n_ranges)[0]


def evaluations(y_true: Any, y_score: Any, *, prevalences: Sequence[float | None], sample_weight: Any = None,
                pos_label: Any = None, recall_grid: str = "reference", on_undefined: Any = "warn",
                n_ranges: int | None = None, _pos_label_rule: str = "strict") -> list[Evaluation]:
    """:func:`evaluate` at several prevalences (None: the data's own) from one pass:
    the ranges are sorted once and every evaluation reduces the same steps.

    Parameters
    ----------
    y_true, y_score : dask array or dask Series
        Labels and scores (columns of one dask DataFrame are used partition by
        partition; dask arrays are rechunked to the labels' chunks).
    sample_weight : dask array or dask Series, default=None
        Non-negative weights.
    pos_label : label, default=None
        As in :func:`precall.average_precision`.
    prevalences : sequence of float or None
        The prevalences to evaluate at.
    recall_grid, on_undefined, n_ranges
        As in :func:`evaluate`.

    Returns
    -------
    list of Evaluation

    See Also
    --------
    evaluate : one prevalence.
    """
    dask = _dask()
    check_options(recall_grid=recall_grid)
    policy = check_on_undefined(on_undefined)
    prevalences = check_prevalences(prevalences)
    parts, n_ranges = _parts(y_true, y_score, sample_weight, pos_label, n_ranges, _pos_label_rule)
    graph = _ranges.wire(parts, dask.delayed, n_ranges=n_ranges, recall_grid=recall_grid,
                         prevalences=prevalences)
    results = dask.compute(*graph)
    if results[0].n_samples == 0:
        raise ValueError("`y_true` and `y_score` must not be empty; got 0 samples")
    return [_ranges.with_policy(ev, policy) for ev in results]


def average_precision(y_true: Any, y_score: Any, *, method: str = "step", sample_weight: Any = None,
                      pos_label: Any = None, recall_grid: str = "reference", on_undefined: Any = "warn",
                      by: Any = None, min_support: int = 0) -> float | SlicedValues:
    """:func:`precall.average_precision` (grouped ties) of dask data, by score ranges.

    Parameters
    ----------
    y_true, y_score : dask array or dask Series
        Labels and scores (columns of one dask DataFrame are used partition by
        partition; dask arrays are rechunked to the labels' chunks).
    sample_weight : dask array or dask Series, default=None
        Non-negative weights.
    pos_label : label, default=None
        As in :func:`precall.average_precision`.
    method, recall_grid, on_undefined
        As in :func:`precall.average_precision`.
    by, min_support
        As in :func:`precall.average_precision` with ``by`` (from the merged
        :class:`precall.SlicedAccumulator`, :func:`accumulate`).

    Returns
    -------
    float, or SlicedValues with ``by``

    See Also
    --------
    evaluate : every convention from the same pass.
    """
    check_options(method=method, recall_grid=recall_grid)
    if by is not None:
        metric = Metric("average_precision", method=method, recall_grid=recall_grid, on_undefined=on_undefined)
        acc = accumulate(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label, by=by)
        return acc.score(metric, min_support=min_support)
    ev = evaluate(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label, recall_grid=recall_grid,
                  on_undefined=on_undefined)
    return ev.average_precision[method]


def roc_auc(y_true: Any, y_score: Any, *, sample_weight: Any = None, pos_label: Any = None,
            max_fpr: float | None = None, on_undefined: Any = "warn", by: Any = None,
            min_support: int = 0) -> float | SlicedValues:
    """:func:`precall.roc_auc` of dask data (by score ranges; partial AUC from the table).

    Parameters
    ----------
    y_true, y_score : dask array or dask Series
        Labels and scores (columns of one dask DataFrame are used partition by
        partition; dask arrays are rechunked to the labels' chunks).
    sample_weight : dask array or dask Series, default=None
        Non-negative weights.
    pos_label : label, default=None
        As in :func:`precall.roc_auc`: None takes the greater of two labels.
    max_fpr, on_undefined
        As in :func:`precall.roc_auc`.
    by, min_support
        As in :func:`precall.roc_auc` with ``by`` (from the merged
        :class:`precall.SlicedAccumulator`, :func:`accumulate`).

    Returns
    -------
    float, or SlicedValues with ``by``

    See Also
    --------
    evaluate : ROC-AUC with every AP convention.
    """
    if max_fpr is not None:
        max_fpr = check_probability(max_fpr, "max_fpr")
    if by is not None:
        metric = Metric("roc_auc", max_fpr=max_fpr, on_undefined=on_undefined)
        acc = accumulate(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label, by=by)
        return acc.score(metric, min_support=min_support)
    if max_fpr is not None and max_fpr != 1:
        dask = _dask()
        parts, n_ranges = _parts(y_true, y_score, sample_weight, pos_label, None, "greater")
        (table,) = dask.compute(_ranges.wire_table(parts, dask.delayed, n_ranges=n_ranges))
        return table.roc_auc(max_fpr=max_fpr, on_undefined=on_undefined)
    # pos_label=None as precall.roc_auc (scikit-learn's roc_auc_score): the greater of two labels
    return evaluations(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label, on_undefined=on_undefined,
                       prevalences=(None,), _pos_label_rule="greater")[0].roc_auc


def score(metric: Metric, y_true: Any, y_score: Any, *, sample_weight: Any = None, pos_label: Any = None) -> float:
    """A :class:`precall.Metric` of dask data, by score ranges: the same number as
    :func:`precall.score` (binary input, grouped ties).

    Parameters
    ----------
    metric : Metric
        What to compute (:func:`precall.metric`); ``ties`` must be "group".
    y_true, y_score, sample_weight, pos_label
        As in :func:`evaluate`.

    Returns
    -------
    float

    See Also
    --------
    evaluate : every convention from one pass.
    """
    if not isinstance(metric, Metric):
        raise TypeError(f"`metric` must be a precall.Metric (precall.metric(...)); got {metric!r:.80}")
    if metric.ties != "group":
        raise ValueError(f"precall.dask ranks grouped ties; got {metric.name} with ties='stable'. Use ties='group'")
    if metric.measure == "roc_auc":
        return roc_auc(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label, max_fpr=metric.max_fpr,
                       on_undefined=metric.on_undefined)
    ev = evaluate(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label, recall_grid=metric.recall_grid,
                  on_undefined=metric.on_undefined)
    if metric.measure == "average_precision":
        return ev.average_precision[metric.method]
    if ev.best_f1 is None:  # no positives: the metric's policy, as precall.score
        return undefined("F1", NO_POSITIVES, 0.0, metric.on_undefined)
    return ev.best_f1.f1
