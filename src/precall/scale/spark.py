"""Exact metrics on Apache Spark DataFrames, where the data already lives (the ``spark`` extra).

Every function takes a Spark ``DataFrame`` and the names of its label, score
and (optional) weight columns.  Two ways to run, chosen by ``mode``:

* ``"ranges"``: the score-range algorithm of :mod:`precall.scale.ranges` (the
  one :mod:`precall.dask` uses).  Pass 1 reads every partition once
  (``mapInArrow``): the labels and their counts, every row checked by the
  validators of :mod:`precall._core.validate`, and a sample of the scores that
  does not depend on the partitioning (the distinct scores with the smallest
  hashes, with their row counts).  The cut points are weighted quantiles of
  that sample.  Pass 2 gives each row its range in the JVM (a balanced tree of
  comparisons; equal scores always share a range), shuffles the rows by range
  (``groupBy(range).applyInPandas``) and turns each range into its steps with
  the in-memory builders; the steps stay cached on the executors.  The driver
  receives two totals per range, passes back each range's prefix, then O(1)
  numbers per range (101 for the COCO grid) come back: the kernels' partial
  sums, grid maxima and, for voc2010, one more round with the suffix maximum.
* ``"collect"``: the needed columns brought to the driver (Arrow) and
  evaluated by the in-memory functions: for tables the driver can hold.

``"auto"`` (the default) runs pass 1 and collects when the table has at most
``collect_rows`` rows (1,000,000), otherwise it uses the ranges.

``evaluate(..., by=[columns])`` gives the :class:`precall.SlicedEvaluation` of the
in-memory ``precall.evaluate(..., by=...)`` (``average_precision`` / ``roc_auc``:
its :class:`precall.SlicedValues`, ``threshold_table``: its
:class:`precall.SlicedTables`): after pass 1, every partition builds one
:class:`precall.SlicedAccumulator` (``mapInArrow``), whose payloads are merged on
the executors and then on the driver (memory bounded by the distinct (slice,
score) pairs, not by the rows); bit for bit without weights.

Exactness: the cut points depend only on the multiset of scores, and within a
range the rows are put in one canonical order (score, label, weight) before any
weight is summed, so the result is the same bits for any partitioning and any
number of executors.  Without weights every AP convention is within 1e-15 of
the in-memory :func:`precall.evaluate` and ROC-AUC is bit-identical (an exact
ratio of integers).  With float weights every route of precall, in memory
included, forms cumulative weights with one compensated cumsum
(:func:`precall._core.sort.compensated_cumsum`), within about an ulp of the
exact sums whatever the order of the rows; each range is shifted by its
correctly rounded prefix, so every cumulative weight is within about 1.5 ulps
of the exact sum and every AP convention within 1e-15 of in memory
(``docs/scaling.md``, "Exact and stable").

:func:`mllib_areas` reproduces MLlib's ``BinaryClassificationMetrics``
(``areaUnderPR``, ``areaUnderROC``, with its down-sampling to ``numBins``) from
a :class:`precall.ThresholdTable`, and :func:`compare_mllib` runs MLlib's own
evaluator beside precall on a DataFrame: how far old dashboard numbers were
from each AP convention.

Examples
--------
>>> import precall
>>> from precall.scale.spark import mllib_areas
>>> t = precall.threshold_table([0, 1, 1, 0, 1], [0.1, 0.9, 0.8, 0.8, 0.3])
>>> [round(v, 6) for v in mllib_areas(t)]   # areaUnderPR: a trapezoid from (0, p1)
[0.847222, 0.75]
"""

from __future__ import annotations

import math
import pickle
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Iterator, NamedTuple, Sequence

import numpy as np

from . import ranges as _ranges
from .._core.evaluation import Evaluation
from .._core.sort import sorted_scores
from .._core.steps import Steps, reweight
from .sliced import SlicedAccumulator
from .._core.validate import (
    BinaryInput,
    _check_scores,
    _check_weight,
    check_binary,
    check_choice,
    check_number,
    check_on_undefined,
    check_options,
    check_prevalence,
)
from ..metrics import evaluate as _evaluate_in_memory
from .._core.metric import Metric
from ..slices import SlicedEvaluation, SlicedTables, SlicedValues, _check_min_support
from ..table import ThresholdTable, threshold_table as _table_in_memory, trusted_table

__all__ = ["MODES", "MllibComparison", "Scan", "average_precision", "compare_mllib", "evaluate", "evaluations",
           "mllib_areas", "roc_auc", "scan", "threshold_table"]

MODES = ("auto", "ranges", "collect")
COLLECT_ROWS = 1_000_000  # "auto" collects tables of at most this many rows
_SAMPLE = 2048  # distinct scores kept per partition for the cut points
_ROWS_PER_RANGE = 250_000  # default n_ranges: rows / this, in [1, _MAX_RANGES]
_MAX_RANGES = 1024
_MAX_LABELS = 1 << 16  # distinct labels pass 1 counts before it refuses the column
_FAN_IN = 8  # pass 1's summaries are merged into at most this many on the executors
_RANGE = "__precall_range"
_POS = "__precall_positive"


def _spark() -> Any:
    try:
        import pyspark  # noqa: F401
        from pyspark.sql import functions
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("precall.spark needs pyspark, the 'spark' extra: pip install 'precall[spark]'") from None
    return functions


# ---------------------------------------------------------------------------
# columns
_NUMERIC = ("ByteType", "ShortType", "IntegerType", "LongType", "FloatType", "DoubleType", "DecimalType",
            "BooleanType")
_LABEL_TYPES = _NUMERIC + ("StringType", "VarcharType", "CharType", "DateType")


def _column_type(df: Any, column: Any, name: str, allowed: tuple[str, ...], takes: str) -> str:
    if not isinstance(column, str):
        raise TypeError(f"`{name}` must be a column name (str); got {column!r}")
    fields = {f.name: f for f in df.schema.fields}
    if column not in fields:
        raise ValueError(f"`{name}` must name a column of the DataFrame, one of {list(fields)}; got {column!r}")
    kind = type(fields[column].dataType).__name__
    if kind not in allowed:
        raise TypeError(f"`{name}` column {column!r} must hold {takes}; got {fields[column].dataType.simpleString()}"
                        " (cast it first)")
    return kind


def _columns(df: Any, label: str, score: str, weight: str | None) -> list[Any]:
    """The label, the score (double, or float kept 32-bit) and the weight (double) as
    Spark columns named ``y``, ``s``, ``w``; bad names or types raise here, on the driver."""
    if not hasattr(df, "schema") or not hasattr(df, "select"):
        raise TypeError(f"`df` must be a Spark DataFrame; got {type(df).__name__} "
                        "(use precall's in-memory functions for arrays and pandas)")
    F = _spark()
    _column_type(df, label, "label", _LABEL_TYPES, "labels (numbers, booleans or strings)")
    kind = _column_type(df, score, "score", _NUMERIC, "numeric scores")
    s = F.col(score) if kind in ("FloatType", "DoubleType") else F.col(score).cast("double")
    out = [F.col(label).alias("y"), s.alias("s")]
    if weight is not None:
        _column_type(df, weight, "weight", _NUMERIC, "numeric weights")
        out.append(F.col(weight).cast("double").alias("w"))
    return out


# ---------------------------------------------------------------------------
# pass 1: labels, checks, a partition-independent sample
def _hash(values: np.ndarray) -> np.ndarray:
    """splitmix64 of the float64 bits (-0.0 as 0.0): the same for equal scores everywhere."""
    bits = (values.astype(np.float64) + 0.0).view(np.uint64)
    with np.errstate(over="ignore"):
        z = bits + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _bottom(values: np.ndarray, counts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` distinct values with the smallest (hash, value) and their counts."""
    if values.size <= k:
        return values, counts
    order = np.lexsort((values, _hash(values)))[:k]
    return values[order], counts[order]


def _sample_of(scores: np.ndarray, k: int = _SAMPLE) -> tuple[np.ndarray, np.ndarray]:
    """A partition's bottom-``k`` distinct scores by hash, each with its row count."""
    s = scores.astype(np.float64) + 0.0
    if s.size == 0:
        return s, np.zeros(0, dtype=np.int64)
    h = _hash(s)
    m = min(s.size, 4 * k)
    while True:  # enough rows to hold k distinct hashes (equal scores share a hash)
        cut = np.partition(h, m - 1)[m - 1]
        if np.unique(h[h <= cut]).size >= k or m == s.size:
            break
        m = min(s.size, 4 * m)
    values, counts = np.unique(s[h <= cut], return_counts=True)
    return _bottom(values, counts, k)


def _partition_id() -> int:
    from pyspark import TaskContext

    ctx = TaskContext.get()
    return int(ctx.partitionId()) if ctx is not None else 0


Summary = tuple  # (partition, rows, {label: rows}, sample values, sample counts, first error or None)


def _merge(summaries: list[Summary]) -> Summary:
    """Summaries of disjoint rows as one: rows and label counts added, the bottom-k samples
    merged (exact counts: a value among the k smallest hashes of the union is among them
    in every part that holds it), the error of the lowest partition kept."""
    summaries = sorted(summaries, key=lambda x: (x[5] is None, x[0]))
    labels: Counter[Any] = Counter()
    for x in summaries:
        labels.update(x[2])
    error = summaries[0][5] if summaries else None
    if error is None and len(labels) > _MAX_LABELS:
        error = (f"`label` must hold at most {_MAX_LABELS} distinct labels (binary input, or one class against "
                 f"the rest with pos_label); got more. Is it the right column?")
        labels = Counter(dict(list(labels.items())[:_MAX_LABELS + 1]))
    v = np.concatenate([x[3] for x in summaries]) if summaries else np.zeros(0)
    c = np.concatenate([x[4] for x in summaries]) if summaries else np.zeros(0, dtype=np.int64)
    if v.size:
        u, inverse = np.unique(v, return_inverse=True)
        v, c = _bottom(u, np.bincount(inverse, weights=c).astype(np.int64), _SAMPLE)
    return (min((x[0] for x in summaries), default=0) if error is None else summaries[0][0],
            sum(x[1] for x in summaries), dict(labels), v, c, error)


def _scan_partition(batches: Iterator[Any], weighted: bool) -> Iterator[Any]:
    """Pass 1 on one partition (``mapInArrow``): one row holding its summary."""
    import pyarrow.compute as pc

    pid, n, parts = _partition_id(), 0, []
    for batch in batches:
        error = _check_batch(batch, weighted, n) if batch.num_rows else None
        labels: Counter[Any] = Counter()
        v, c = np.zeros(0), np.zeros(0, dtype=np.int64)
        if error is None and batch.num_rows:
            vc = pc.value_counts(batch.column(0))
            for value, count in zip(vc.field("values").to_pylist(), vc.field("counts").to_pylist()):
                labels[value] += count  # Arrow counts -0.0 apart from 0.0, one label to Python (and Spark)
            s = batch.column(1).to_numpy(zero_copy_only=False)
            if weighted:  # zero-weight rows are set aside, as in memory
                s = s[batch.column(2).to_numpy(zero_copy_only=False) > 0]
            v, c = _sample_of(s)
        parts = [_merge([*parts, (pid, batch.num_rows, labels, v, c, error)])]
        n += batch.num_rows
        if error is not None:
            break
    yield _blob_batch(_merge(parts))


def _blob_batch(summary: Summary) -> Any:
    import pyarrow as pa

    return pa.RecordBatch.from_pylist([{"blob": pickle.dumps(summary, protocol=4)}],
                                      schema=pa.schema([("blob", pa.binary())]))


def _merge_partitions(batches: Iterator[Any]) -> Iterator[Any]:
    """The tree step of pass 1 on the executors: partitions' summaries merged."""
    summaries = [pickle.loads(b) for batch in batches for b in batch.column("blob").to_pylist()]
    if summaries:
        yield _blob_batch(_merge(summaries))


def _check_batch(batch: Any, weighted: bool, start: int) -> str | None:
    """The first problem of a batch's rows, as the in-memory validators word it, or None."""
    names = ("label", "score", "weight")
    for i in range(batch.num_columns):
        column = batch.column(i)
        if column.null_count:
            first = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
            return (f"`{names[i]}` must not be null; got {column.null_count} null value(s), the first at row "
                    f"{start + first}. Drop or fill those rows before evaluating; precall never drops rows silently")
    try:
        y = batch.column(0).to_numpy(zero_copy_only=False)
        if y.dtype.kind == "f" and np.isnan(y).any():
            raise ValueError("`y_true` must not contain NaN; got NaN label(s)")
        _check_scores(batch.column(1).to_numpy(zero_copy_only=False))
        if weighted:
            w = batch.column(2).to_numpy(zero_copy_only=False)
            _check_weight(w, w.size, require_positive=False)
    except (ValueError, TypeError) as exc:
        return f"{exc} (rows counted from the partition's start; index {start} is the batch's first row)" \
            if start else str(exc)
    return None


def _named(message: str, label: str, score: str, weight: str | None) -> str:
    """A validator's message with the DataFrame's column names."""
    for kind, long, column in (("label", "y_true", label), ("score", "y_score", score),
                               ("weight", "sample_weight", weight)):
        named = f"`{kind}` column {column!r}"
        message = message.replace(f"`{kind}`", named).replace(f"`{long}`", named)
    return message


@dataclass(frozen=True)
class Scan:
    """What pass 1 learns about a DataFrame's columns (:func:`scan`).

    Attributes
    ----------
    n_rows : int
        Rows of the DataFrame (zero-weight rows included).
    label_counts : dict
        Rows per label value.
    sample : ndarray, counts : ndarray
        The distinct scores with the smallest hashes and their row counts: the
        same for any partitioning of the same rows.
    """

    n_rows: int
    label_counts: dict[Any, int]
    sample: np.ndarray
    counts: np.ndarray

    def positive(self, pos_label: Any, rule: str = "strict") -> Any:
        """The positive label, resolved from the labels as the in-memory functions do."""
        labels = list(self.label_counts)
        if not labels:
            raise ValueError("`df` must not be empty; got 0 rows")
        try:
            classes = np.array(sorted(labels))
        except TypeError:  # pragma: no cover - one Spark column has one type
            classes = np.array(labels, dtype=object)
        return check_binary(classes, np.zeros(classes.size), None, pos_label, pos_label_rule=rule).pos_label

    def cuts(self, n_ranges: int) -> np.ndarray:
        """At most ``n_ranges - 1`` increasing cut points at the sample's weighted quantiles."""
        if self.sample.size == 0 or n_ranges <= 1:
            return np.zeros(0)
        targets = self.counts.sum() * np.arange(1, n_ranges) / n_ranges
        cum = np.cumsum(self.counts)
        return np.unique(self.sample[np.minimum(np.searchsorted(cum, targets), self.sample.size - 1)])


def scan(df: Any, label: str, score: str, *, weight: str | None = None) -> Scan:
    """Pass 1: every row checked, the labels counted, the scores sampled (one pass).

    Parameters
    ----------
    df : pyspark.sql.DataFrame
    label, score : str
        The label and score columns.
    weight : str, default=None
        A column of non-negative weights.

    Returns
    -------
    Scan

    Raises
    ------
    ValueError
        A null, NaN or infinite score, a null label, a negative or non-finite
        weight, with the partition and row of the first.

    See Also
    --------
    evaluations : takes the scan as ``scanned=``.
    """
    columns = _columns(df, label, score, weight)
    weighted = weight is not None
    summaries = df.select(*columns).mapInArrow(lambda it: _scan_partition(it, weighted), "blob binary")
    # merged on the executors first: the driver gets at most _FAN_IN summaries of k scores, whatever the rows
    rows = summaries.repartition(_FAN_IN).mapInArrow(_merge_partitions, "blob binary").collect()
    pid, n, labels, values, counts, error = _merge([pickle.loads(r["blob"]) for r in rows])
    if error is not None:
        raise ValueError(f"partition {pid}: {_named(error, label, score, weight)}")
    order = np.argsort(values)
    values, counts = values[order], counts[order]
    if weighted and n and values.size == 0:
        raise ValueError(f"`weight` column {weight!r} must have at least one positive weight; got all zeros")
    return Scan(n, dict(labels), values, counts)


# ---------------------------------------------------------------------------
# pass 2: ranges
def _range_column(column: Any, cuts: np.ndarray) -> Any:
    """``searchsorted(cuts, s, side="right")`` as a balanced tree of JVM comparisons."""
    F = _spark()

    def tree(lo: int, hi: int) -> Any:  # ranges lo..hi
        if lo == hi:
            return F.lit(lo)
        mid = (lo + hi + 1) // 2  # range >= mid  <=>  s >= cuts[mid - 1]
        return F.when(column >= F.lit(float(cuts[mid - 1])), tree(mid, hi)).otherwise(tree(lo, mid - 1))

    return tree(0, int(cuts.size)).cast("int")


def _canonical(pdf: Any, weighted: bool) -> BinaryInput | tuple[np.ndarray, np.ndarray]:
    """A range's rows: without weights the two classes' sorted scores (order-free); with
    weights one canonical order (score, label, weight), so sums do not depend on arrival."""
    s = pdf["s"].to_numpy()
    positive = pdf[_POS].to_numpy(dtype=bool)
    if not weighted:
        return sorted_scores(s[positive]), sorted_scores(s[~positive])
    w = pdf["w"].to_numpy(dtype=np.float64)
    order = np.lexsort((w, positive, -s.astype(np.float64)))
    return BinaryInput(s[order], positive[order], w[order], True, int(s.size))


def _range_local(pdf: Any, weighted: bool, build: Any) -> Any:
    """Pass 2 on one range (``applyInPandas``): ``build`` (its local steps or its rows of
    the table, :mod:`precall.scale.ranges`; weights summed compensated, as in memory) and its
    totals, as one row."""
    import pandas as pd

    r = int(pdf[_RANGE].iloc[0])
    local = build([_canonical(pdf, weighted)])
    n_pos, n_neg, exact = _ranges.totals(local)
    return pd.DataFrame({"r": [r], "n_pos": [n_pos], "n_neg": [n_neg], "exact": [exact],
                         "steps": [pickle.dumps(local, protocol=4)]})


_RANGE_SCHEMA = "r int, n_pos double, n_neg double, exact boolean, steps binary"


def _by_range(df: Any, columns: list[Any], positive: Any, cuts: np.ndarray, weighted: bool, build: Any) -> Any:
    """Pass 2: each row's range in the JVM, the rows grouped by range, ``build`` on each
    (:func:`_range_local`)."""
    F = _spark()
    selected = df.select(*columns)
    if weighted:  # zero-weight rows are set aside, as in memory
        selected = selected.where(F.col("w") > 0)
    selected = selected.select(_range_column(F.col("s"), cuts).alias(_RANGE), (F.col("y") == F.lit(positive))
                               .alias(_POS), "s", *(["w"] if weighted else []))
    out = selected.groupBy(_RANGE).applyInPandas(lambda pdf: _range_local(pdf, weighted, build), _RANGE_SCHEMA)
    # one output partition per range at most: the later rounds are tasks over these few rows
    return out.coalesce(cuts.size + 1)


def _prefix(rows: list[Any], n_ranges: int) -> tuple[dict[int, tuple[Any, Any]], tuple[Any, Any]]:
    """Each range's prefix (the weight of the ranges above; float weights: correctly rounded,
    :func:`precall.scale.ranges.offsets`) and the totals."""
    totals = {int(r["r"]): (r["n_pos"], r["n_neg"], bool(r["exact"])) for r in rows}
    prefix, grand = _ranges.offsets([totals.get(i, (0.0, 0.0, True)) for i in range(n_ranges)])
    return {i: prefix[i] for i in totals}, grand


def _shifted(blob: bytes, prefix: tuple[Any, Any], grand: Any, prevalences: tuple[float | None, ...]) -> list[Steps]:
    st = _ranges.shift(pickle.loads(blob), prefix, grand)
    return [st if pi is None else reweight(st, pi) for pi in prevalences]


def _map_ranges(cached: Any, fn: Any) -> dict[int, Any]:
    """``fn(range, steps blob)`` on every cached range (executors); the results by range."""
    import pyarrow as pa

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            out = [{"r": r, "out": pickle.dumps(fn(r, b), protocol=4)}
                   for r, b in zip(batch.column("r").to_pylist(), batch.column("steps").to_pylist())]
            yield pa.RecordBatch.from_pylist(out, schema=pa.schema([("r", pa.int32()), ("out", pa.binary())]))

    return {int(row["r"]): pickle.loads(row["out"])
            for row in cached.select("r", "steps").mapInArrow(run, "r int, out binary").collect()}


def _evaluate_ranges(df: Any, columns: list[Any], info: Scan, positive: Any, weighted: bool, n_ranges: int,
                     recall_grid: str, prevalences: tuple[float | None, ...]) -> list[Evaluation]:
    from pyspark import StorageLevel

    cuts = info.cuts(n_ranges)
    n = cuts.size + 1
    cached = _by_range(df, columns, positive, cuts, weighted, _ranges.local_steps).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        prefix, grand = _prefix(cached.select("r", "n_pos", "n_neg", "exact").collect(), n)

        def parts(r: int, blob: bytes) -> list[Any]:
            return [_ranges.summarize(st, recall_grid) for st in _shifted(blob, prefix[r], grand, prevalences)]

        by_range = _map_ranges(cached, parts)
        order = sorted(by_range)  # lowest scores first
        below = [_ranges.suffix_best([by_range[r][k] for r in order]) for k in range(len(prevalences))]
        below_of = {r: [below[k][i] for k in range(len(prevalences))] for i, r in enumerate(order)}

        def voc(r: int, blob: bytes) -> list[float]:
            return [_ranges.voc2010_sum(st, b) for st, b in zip(_shifted(blob, prefix[r], grand, prevalences),
                                                                 below_of[r])]

        voc_by_range = _map_ranges(cached, voc)
    finally:
        cached.unpersist()
    out = []
    for k, pi in enumerate(prevalences):
        at = grand if pi is None else _ranges._grand_at(grand, pi)
        parts_k = [by_range[r][k] for r in order] or [_ranges.summarize(_ranges._no_steps(at), recall_grid)]
        out.append(_ranges.combine(parts_k, [voc_by_range[r][k] for r in order], at, n_samples=info.n_rows,
                                   recall_grid=recall_grid))
    return out


# ---------------------------------------------------------------------------
# collect
def _collect(df: Any, columns: list[Any], weighted: bool,
             labels: tuple[str, str, str | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The columns on the driver as numpy arrays (Arrow), rows in one canonical order with weights."""
    import pyarrow as pa

    selected = df.select(*columns)
    if hasattr(selected, "toArrow"):  # pyspark >= 4
        table = selected.toArrow()
    else:  # pragma: no cover - pyspark 3.5
        table = pa.Table.from_pandas(selected.toPandas(), preserve_index=False)
    batch = table.combine_chunks().to_batches()
    if batch:  # the rows checked as pass 1 checks them
        error = _check_batch(batch[0], weighted, 0)
        if error is not None:
            raise ValueError(_named(error, *labels))
    y = table.column("y").to_numpy()
    s = table.column("s").to_numpy()
    w = table.column("w").to_numpy() if weighted else None
    if w is not None:  # the same sums whatever the partitioning
        order = np.lexsort((w, y, -s.astype(np.float64)))
        y, s, w = y[order], s[order], w[order]
    return y, s, w


def _positive(info: Scan | None, pos_label: Any, rule: str, y: np.ndarray, s: np.ndarray,
              w: np.ndarray | None) -> Any:
    """The positive label: from the scan, or from the collected rows (checked as in memory)."""
    if info is not None:
        return info.positive(pos_label, rule)
    return check_binary(y, s, w, pos_label, pos_label_rule=rule).pos_label


# ---------------------------------------------------------------------------
# by=: one SlicedAccumulator per partition, merged
_BY_TYPES = ("ByteType", "ShortType", "IntegerType", "LongType", "FloatType", "DoubleType", "BooleanType",
             "StringType", "VarcharType", "CharType", "DateType")


def _by_names(df: Any, by: Any) -> list[str]:
    """The ``by`` column names (one name or a list of them), each checked against the schema."""
    names = [by] if isinstance(by, str) else list(by) if isinstance(by, (list, tuple)) else None
    if not names or not all(isinstance(n, str) for n in names):
        raise TypeError(f"`by` must be a column name or a non-empty list of column names (str); got {by!r:.80}. "
                        "Slice a Spark DataFrame by its own columns, e.g. by=['country', 'device']")
    if len(set(names)) != len(names):
        raise ValueError(f"`by` must name each column once; got {names!r}")
    for name in names:
        _column_type(df, name, "by", _BY_TYPES, "slice values (numbers, booleans, strings or dates)")
    return names


def _by_batch_column(column: Any) -> np.ndarray:
    """A slice column of an Arrow batch as numpy: nulls as ``None`` (NaN for floats), so a
    missing value is its own slice; integers and booleans with nulls kept as Python values."""
    import pyarrow as pa

    if column.null_count and (pa.types.is_integer(column.type) or pa.types.is_boolean(column.type)):
        return np.array(column.to_pylist() + [None], dtype=object)[:-1]
    return column.to_numpy(zero_copy_only=False)


def _sliced_partition(batches: Iterator[Any], weighted: bool, names: list[str]) -> Iterator[Any]:
    """``by=`` on one partition (``mapInArrow``): its :class:`SlicedAccumulator` payload (the
    labels are already ``label == positive``), or the first error as text."""
    import pyarrow as pa

    acc, error, k = SlicedAccumulator(pos_label=True), None, 3 if weighted else 2
    for batch in batches:
        if not batch.num_rows:
            continue
        try:
            acc.update(batch.column(0).to_numpy(zero_copy_only=False), batch.column(1).to_numpy(zero_copy_only=False),
                       sample_weight=batch.column(2).to_numpy(zero_copy_only=False) if weighted else None,
                       by={n: _by_batch_column(batch.column(k + j)) for j, n in enumerate(names)})
        except (ValueError, TypeError) as exc:
            error = str(exc)
            break
    if error is not None or acc.columns is not None:
        yield pa.RecordBatch.from_pylist([{"blob": acc.to_bytes() if error is None else None, "error": error}],
                                         schema=pa.schema([("blob", pa.binary()), ("error", pa.string())]))


def _merge_sliced(batches: Iterator[Any]) -> Iterator[Any]:
    """The tree step of ``by=`` on the executors: partitions' payloads merged into one."""
    import pyarrow as pa

    blobs, errors = [], []
    for batch in batches:
        blobs += [b for b in batch.column("blob").to_pylist() if b is not None]
        errors += [e for e in batch.column("error").to_pylist() if e is not None]
    rows = [{"blob": None, "error": e} for e in errors[:1]]
    if blobs and not errors:
        acc = SlicedAccumulator.from_bytes(blobs[0])
        for blob in blobs[1:]:
            acc = acc.merge(SlicedAccumulator.from_bytes(blob))
        rows.append({"blob": acc.to_bytes(), "error": None})
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=pa.schema([("blob", pa.binary()), ("error", pa.string())]))


def _accumulate_by(df: Any, label: str, score: str, weight: str | None, by: Any, pos_label: Any,
                   rule: str = "strict", scanned: Scan | None = None) -> SlicedAccumulator:
    """The rows of ``df`` as one :class:`SlicedAccumulator` keyed by the ``by`` columns' values:
    pass 1 (:func:`scan`: every row checked, the positive label; not run again when ``scanned``
    is given), then one accumulator per partition, merged on the executors into at most
    ``_FAN_IN`` payloads and those on the driver."""
    columns = _columns(df, label, score, weight)
    names = _by_names(df, by)
    info = scan(df, label, score, weight=weight) if scanned is None else scanned
    if info.n_rows == 0:
        raise ValueError("`df` must not be empty; got 0 rows")
    positive = info.positive(pos_label, rule)
    F = _spark()
    kinds = {f.name: type(f.dataType).__name__ for f in df.schema.fields}
    slices = [(F.col(n).cast("string") if kinds[n] == "DateType" else F.col(n)).alias(f"__precall_by{j}")
              for j, n in enumerate(names)]
    weighted = weight is not None
    selected = df.select((columns[0] == F.lit(positive)).alias("y"), *columns[1:], *slices)
    payloads = selected.mapInArrow(lambda it: _sliced_partition(it, weighted, names), "blob binary, error string")
    # merged on the executors first: the driver holds at most _FAN_IN states, each bounded by the
    # distinct (slice, score) pairs, whatever the rows
    rows = payloads.repartition(_FAN_IN).mapInArrow(_merge_sliced, "blob binary, error string").collect()
    errors = [r["error"] for r in rows if r["error"] is not None]
    if errors:
        raise ValueError(_named(min(errors), label, score, weight))
    acc = SlicedAccumulator.from_bytes(rows[0]["blob"])
    for r in rows[1:]:
        acc = acc.merge(SlicedAccumulator.from_bytes(r["blob"]))
    return acc


def _by_only(**given: Any) -> None:
    """Options that do not apply with ``by`` (the slices are accumulated, not cut by score)."""
    if all(v is None or v == "auto" for v in given.values()):
        return
    names = [f"`{k}`" for k in given]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    shown = ", ".join(f"{k}={v!r}" for k, v in given.items())
    raise ValueError(f"{listed} {'is' if len(names) == 1 else 'are'} not available with `by`; got {shown}. Drop "
                     f"{'it' if len(names) == 1 else 'them'} (slices are accumulated per partition and merged, not "
                     "cut by score)")


def _score_by(df: Any, label: str, score: str, weight: str | None, by: Any, pos_label: Any, value: Metric,
              min_support: Any, *, mode: str, n_ranges: Any, rule: str = "strict") -> SlicedValues:
    """``average_precision`` / ``roc_auc`` with ``by``: the merged accumulator's :meth:`SlicedAccumulator.score`."""
    min_support = _check_min_support(min_support)
    _by_only(mode=mode, n_ranges=n_ranges)
    return _accumulate_by(df, label, score, weight, by, pos_label, rule).score(value, min_support=min_support)


def _with_score_dtype(tables: SlicedTables, df: Any, score: str) -> SlicedTables:
    """The tables' thresholds in the score column's precision (a payload carries float64;
    float32 scores are exact in it), as in memory."""
    if type(df.schema[score].dataType).__name__ != "FloatType":
        return tables

    def narrow(t: ThresholdTable) -> ThresholdTable:
        return trusted_table(t.thresholds.astype(np.float32), t.tp, t.fp, t.n_pos, t.n_neg, t.ties)

    return replace(tables, tables={k: narrow(t) for k, t in tables.items()}, overall=narrow(tables.overall))


# ---------------------------------------------------------------------------
# public
def _plan(df: Any, mode: str, collect_rows: Any, n_ranges: Any, label: str, score: str,
          weight: str | None, scanned: Scan | None = None) -> tuple[list[Any], Scan | None, str, int]:
    check_choice(mode, "mode", MODES)
    collect_rows = check_number(collect_rows, "collect_rows", low=0, integer=True)
    if n_ranges is not None:
        n_ranges = check_number(n_ranges, "n_ranges", low=1, high=1 << 16, integer=True,
                                hint="each range is one group of rows on one executor")
    columns = _columns(df, label, score, weight)
    if mode == "collect" and scanned is None:
        return columns, None, mode, 1
    if scanned is not None and not isinstance(scanned, Scan):
        raise TypeError(f"`scanned` must be the Scan of precall.spark.scan(df, ...) or None; got {scanned!r:.80}")
    info = scan(df, label, score, weight=weight) if scanned is None else scanned
    if info.n_rows == 0:
        raise ValueError("`df` must not be empty; got 0 rows")
    if mode == "auto":
        mode = "collect" if info.n_rows <= collect_rows else "ranges"
    if n_ranges is None:
        n_ranges = min(_MAX_RANGES, max(1, math.ceil(info.n_rows / _ROWS_PER_RANGE)))
    return columns, info, mode, int(n_ranges)


def evaluations(df: Any, label: str, score: str, *, prevalences: Sequence[float | None], weight: str | None = None,
                pos_label: Any = None, recall_grid: str = "reference", on_undefined: Any = "warn",
                mode: str = "auto", n_ranges: int | None = None, collect_rows: int = COLLECT_ROWS,
                scanned: Scan | None = None, _pos_label_rule: str = "strict") -> list[Evaluation]:
    """:func:`evaluate` at several prevalences (None: the data's own) from the same passes.

    Parameters
    ----------
    df, label, score, weight, pos_label, recall_grid, on_undefined, mode, n_ranges, collect_rows
        As in :func:`evaluate`.
    prevalences : sequence of float or None
        The prevalences to evaluate at.
    scanned : Scan, default=None
        The result of :func:`scan` on the same DataFrame and columns (e.g. to
        look at the label counts first): pass 1 is not run again.

    Returns
    -------
    list of Evaluation

    See Also
    --------
    evaluate : one prevalence.
    """
    check_options(recall_grid=recall_grid)
    policy = check_on_undefined(on_undefined)
    prevalences = tuple(None if pi is None else check_prevalence(pi) for pi in prevalences)
    columns, info, mode, n_ranges = _plan(df, mode, collect_rows, n_ranges, label, score, weight, scanned)
    weighted = weight is not None
    if mode == "collect":
        y, s, w = _collect(df, columns, weighted, (label, score, weight))
        if y.size == 0:
            raise ValueError("`df` must not be empty; got 0 rows")
        positive = _positive(info, pos_label, _pos_label_rule, y, s, w)
        return [_evaluate_in_memory(y, s, sample_weight=w, pos_label=positive, recall_grid=recall_grid,
                                    on_undefined=on_undefined, prevalence=pi) for pi in prevalences]
    assert info is not None
    positive = info.positive(pos_label, _pos_label_rule)
    results = _evaluate_ranges(df, columns, info, positive, weighted, n_ranges, recall_grid, prevalences)
    return [_ranges.with_policy(ev, policy) for ev in results]


def evaluate(df: Any, label: str, score: str, *, weight: str | None = None, pos_label: Any = None,
             recall_grid: str = "reference", on_undefined: Any = "warn", prevalence: float | None = None,
             mode: str = "auto", n_ranges: int | None = None, collect_rows: int = COLLECT_ROWS, by: Any = None,
             min_support: int = 0) -> Evaluation | SlicedEvaluation:
    """:func:`precall.evaluate` (grouped ties) of a Spark DataFrame's columns: every AP
    convention, ROC-AUC, the best F1 and the prevalence; per slice with ``by``.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
    label, score : str
        The label and score columns (labels: numbers, booleans or strings;
        scores: any numeric type).
    weight : str, default=None
        A column of non-negative weights (zero-weight rows are set aside).
    pos_label : label, default=None
        As in :func:`precall.evaluate`.
    recall_grid, on_undefined, prevalence
        As in :func:`precall.evaluate`.
    mode : {"auto", "ranges", "collect"}, default="auto"
        ``"ranges"``: score ranges reduced on the executors (the driver gets
        O(1) numbers per range); ``"collect"``: the columns brought to the
        driver; ``"auto"``: collect when there are at most ``collect_rows`` rows.
    n_ranges : int, default=None
        Score ranges (default: one per 250,000 rows, at most 1024).
    collect_rows : int, default=1,000,000
        The largest table ``"auto"`` collects.
    by : str or list of str, default=None
        Slice columns of ``df`` (numbers, booleans, strings or dates): the
        :class:`precall.SlicedEvaluation` of ``precall.evaluate(..., by=...)``
        on the same rows (grouped ties), slice names and order identical, a
        null (or NaN) its own slice ``"(missing)"``.  Pass 1 checks the rows,
        then every partition builds one :class:`precall.SlicedAccumulator`,
        merged on the executors (at most 8 states reach the driver, each
        bounded by the distinct (slice, score) pairs).  Without weights
        every number equals the in-memory one bit for bit, for any
        partitioning; with weights, to rounding.  ``prevalence``,
        ``n_ranges`` and ``mode`` do not apply.
    min_support : int, default=0
        With ``by``: slices with fewer rows are reported but not ranked.

    Returns
    -------
    Evaluation, or SlicedEvaluation with ``by``

    See Also
    --------
    evaluations : several prevalences from the same passes.
    precall.evaluate : the same in memory.
    """
    if by is not None:
        check_options(recall_grid=recall_grid)
        policy = check_on_undefined(on_undefined)
        min_support = _check_min_support(min_support)
        _by_only(prevalence=prevalence, n_ranges=n_ranges, mode=mode)
        return _accumulate_by(df, label, score, weight, by, pos_label).evaluate(
            recall_grid=recall_grid, on_undefined=policy, min_support=min_support)
    return evaluations(df, label, score, prevalences=(prevalence,), weight=weight, pos_label=pos_label,
                       recall_grid=recall_grid, on_undefined=on_undefined, mode=mode, n_ranges=n_ranges,
                       collect_rows=collect_rows)[0]


def average_precision(df: Any, label: str, score: str, *, method: str = "step", weight: str | None = None,
                      pos_label: Any = None, recall_grid: str = "reference", on_undefined: Any = "warn",
                      mode: str = "auto", n_ranges: int | None = None, collect_rows: int = COLLECT_ROWS,
                      by: Any = None, min_support: int = 0) -> float | SlicedValues:
    """:func:`precall.average_precision` (grouped ties) of a Spark DataFrame's columns.

    Parameters
    ----------
    df, label, score, weight, pos_label, recall_grid, on_undefined, mode, n_ranges, collect_rows
        As in :func:`evaluate`.
    method : str, default="step"
        The AP convention (:data:`precall.AP_METHODS`).
    by, min_support
        As in :func:`evaluate`: the :class:`precall.SlicedValues` of
        ``precall.average_precision(..., by=...)`` on the same rows (one
        :class:`precall.SlicedAccumulator` per partition, merged).

    Returns
    -------
    float, or SlicedValues with ``by``

    See Also
    --------
    evaluate : every convention from the same passes.
    """
    check_options(method=method, recall_grid=recall_grid)
    if by is not None:
        value = Metric("average_precision", method=method, recall_grid=recall_grid, on_undefined=on_undefined)
        return _score_by(df, label, score, weight, by, pos_label, value, min_support, mode=mode, n_ranges=n_ranges)
    return evaluate(df, label, score, weight=weight, pos_label=pos_label, recall_grid=recall_grid,
                    on_undefined=on_undefined, mode=mode, n_ranges=n_ranges,
                    collect_rows=collect_rows).average_precision[method]


def roc_auc(df: Any, label: str, score: str, *, weight: str | None = None, pos_label: Any = None,
            max_fpr: float | None = None, on_undefined: Any = "warn", mode: str = "auto",
            n_ranges: int | None = None, collect_rows: int = COLLECT_ROWS, by: Any = None,
            min_support: int = 0) -> float | SlicedValues:
    """:func:`precall.roc_auc` of a Spark DataFrame's columns (partial AUC from the table).

    Parameters
    ----------
    df, label, score, weight, on_undefined, mode, n_ranges, collect_rows
        As in :func:`evaluate`.
    pos_label : label, default=None
        As in :func:`precall.roc_auc`: None takes the greater of two labels.
    max_fpr : float in (0, 1], default=None
        As in :func:`precall.roc_auc`.
    by, min_support
        As in :func:`evaluate`: the :class:`precall.SlicedValues` of
        ``precall.roc_auc(..., by=...)`` on the same rows.

    Returns
    -------
    float, or SlicedValues with ``by``

    See Also
    --------
    evaluate : ROC-AUC with every AP convention.
    """
    if max_fpr is not None:
        max_fpr = check_number(max_fpr, "max_fpr", low=0, high=1, low_open=True)
    if by is not None:
        value = Metric("roc_auc", max_fpr=max_fpr, on_undefined=on_undefined)
        return _score_by(df, label, score, weight, by, pos_label, value, min_support, mode=mode, n_ranges=n_ranges,
                         rule="greater")
    if max_fpr is not None and max_fpr != 1:
        table = threshold_table(df, label, score, weight=weight, pos_label=pos_label, mode=mode, n_ranges=n_ranges,
                                collect_rows=collect_rows, _pos_label_rule="greater")
        return table.roc_auc(max_fpr=max_fpr, on_undefined=on_undefined)
    return evaluations(df, label, score, prevalences=(None,), weight=weight, pos_label=pos_label,
                       on_undefined=on_undefined, mode=mode, n_ranges=n_ranges, collect_rows=collect_rows,
                       _pos_label_rule="greater")[0].roc_auc


def threshold_table(df: Any, label: str, score: str, *, weight: str | None = None, pos_label: Any = None,
                    mode: str = "auto", n_ranges: int | None = None, collect_rows: int = COLLECT_ROWS,
                    by: Any = None, min_support: int = 0, on_undefined: Any = "warn",
                    _pos_label_rule: str = "strict") -> ThresholdTable | SlicedTables:
    """:func:`precall.threshold_table` (grouped ties) of a Spark DataFrame's columns: each
    range's rows built on an executor, shifted by the ranges above on the driver (which
    must hold the table: one row per distinct score).

    Parameters
    ----------
    df, label, score, weight, pos_label, mode, n_ranges, collect_rows
        As in :func:`evaluate`.
    by, min_support, on_undefined
        As in :func:`evaluate`: the :class:`precall.SlicedTables` of
        ``precall.threshold_table(..., by=..., on_undefined=...)`` on the same rows (the
        driver holds every slice's table).

    Returns
    -------
    ThresholdTable, or SlicedTables with ``by``

    See Also
    --------
    evaluate : every number without assembling the table.
    """
    if by is not None:
        min_support = _check_min_support(min_support)
        _by_only(mode=mode, n_ranges=n_ranges)
        tables = _accumulate_by(df, label, score, weight, by, pos_label).tables(
            min_support=min_support, on_undefined=check_on_undefined(on_undefined))
        return _with_score_dtype(tables, df, score)
    columns, info, mode, n_ranges = _plan(df, mode, collect_rows, n_ranges, label, score, weight)
    weighted = weight is not None
    if mode == "collect":
        y, s, w = _collect(df, columns, weighted, (label, score, weight))
        positive = _positive(info, pos_label, _pos_label_rule, y, s, w)
        return _table_in_memory(y, s, sample_weight=w, pos_label=positive)
    assert info is not None
    positive = info.positive(pos_label, _pos_label_rule)
    cuts = info.cuts(n_ranges)
    rows = _by_range(df, columns, positive, cuts, weighted, _ranges.local_table).collect()
    prefix, _ = _prefix(rows, cuts.size + 1)
    local = {int(r["r"]): pickle.loads(r["steps"]) for r in rows}
    return _ranges.assemble([_ranges.shift_table(local[r], prefix[r]) if r in local else None
                             for r in range(cuts.size + 1)])


# ---------------------------------------------------------------------------
# MLlib
def mllib_areas(table: ThresholdTable, num_bins: int = 0) -> tuple[float, float]:
    """MLlib's ``BinaryClassificationMetrics`` ``(areaUnderPR, areaUnderROC)`` of a table.

    MLlib's curves have one point per distinct score (cumulative weights from the
    top); with ``numBins > 0`` and at least ``2 * numBins`` distinct scores,
    runs of ``distinct // numBins`` consecutive scores become one point (their
    last).  The PR curve starts at ``(0, p1)``, the precision of the first point,
    and both areas are trapezoids summed in order.  So ``areaUnderPR`` is neither
    the step AP (:func:`precall.average_precision`) nor ``auc(recall, precision)``.

    MLlib groups the runs within each partition of its sorted counts; this
    reproduces it when they are one partition (``numBins=0``: always).

    Parameters
    ----------
    table : ThresholdTable
        A grouped table (:func:`precall.threshold_table`, :func:`threshold_table`).
    num_bins : int, default=0
        MLlib's ``numBins`` (``BinaryClassificationEvaluator`` uses 1000).

    Returns
    -------
    (float, float)
        ``areaUnderPR`` and ``areaUnderROC`` as MLlib computes them.

    See Also
    --------
    compare_mllib : MLlib's own evaluator beside precall on a DataFrame.
    """
    num_bins = check_number(num_bins, "num_bins", low=0, integer=True)
    if table.ties != "group":
        raise ValueError(f"`table` must have grouped ties (MLlib has one point per distinct score); "
                         f"got ties={table.ties!r}")
    tp, fp = np.asarray(table.tp, dtype=np.float64), np.asarray(table.fp, dtype=np.float64)
    grouping = tp.size // num_bins if num_bins else 0
    if grouping >= 2:  # the last of every run of `grouping` distinct scores
        keep = np.unique(np.append(np.arange(grouping - 1, tp.size, grouping), tp.size - 1))
        tp, fp = tp[keep], fp[keep]
    n_pos, n_neg = float(table.n_pos), float(table.n_neg)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(tp + fp == 0, 1.0, tp / (tp + fp))
    recall = tp / n_pos if n_pos else np.zeros_like(tp)
    fpr = fp / n_neg if n_neg else np.zeros_like(fp)
    pr = _trapezoids(np.concatenate(([0.0], recall)), np.concatenate((precision[:1], precision)))
    roc = _trapezoids(np.concatenate(([0.0], fpr, [1.0])), np.concatenate(([0.0], recall, [1.0])))
    return pr, roc


def _trapezoids(x: np.ndarray, y: np.ndarray) -> float:
    """MLlib's ``AreaUnderCurve.of``: ``(x2 - x1) * (y2 + y1) / 2`` added left to right."""
    terms = (x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2.0
    return float(np.cumsum(terms)[-1]) if terms.size else 0.0


class MllibComparison(NamedTuple):
    """MLlib's two areas beside precall's numbers on the same rows (:func:`compare_mllib`)."""

    area_under_pr: float  # MLlib's BinaryClassificationEvaluator, as run
    area_under_roc: float
    evaluation: Evaluation  # precall, exact

    def differences(self) -> dict[str, float]:
        """MLlib's ``areaUnderPR`` minus each AP convention, and ``areaUnderROC`` minus ROC-AUC."""
        out = {f"areaUnderPR - AP ({m})": self.area_under_pr - v for m, v in self.evaluation.average_precision.items()}
        out["areaUnderROC - ROC-AUC"] = self.area_under_roc - self.evaluation.roc_auc
        return out


def compare_mllib(df: Any, label: str, score: str, *, weight: str | None = None, pos_label: Any = None,
                  num_bins: int = 1000, mode: str = "auto") -> MllibComparison:
    """Run MLlib's ``BinaryClassificationEvaluator`` (both metrics, ``numBins``) and
    :func:`evaluate` on the same rows: how far MLlib's numbers are from each convention.

    Parameters
    ----------
    df, label, score, weight, pos_label, mode
        As in :func:`evaluate` (MLlib gets the label as 1.0 for the positive
        label, else 0.0).
    num_bins : int, default=1000
        MLlib's ``numBins`` (its default; 0 disables the down-sampling).

    Returns
    -------
    MllibComparison

    See Also
    --------
    mllib_areas : MLlib's areas from a table, without Spark.
    """
    num_bins = check_number(num_bins, "num_bins", low=0, integer=True)
    F = _spark()
    from pyspark.ml.evaluation import BinaryClassificationEvaluator

    columns = _columns(df, label, score, weight)
    info = scan(df, label, score, weight=weight)
    positive = info.positive(pos_label)
    frame = df.select((F.col(label) == F.lit(positive)).cast("double").alias("label"),
                      columns[1].cast("double").alias("score"), *columns[2:])
    kw = {"rawPredictionCol": "score", "labelCol": "label", "numBins": num_bins}
    if weight is not None:
        kw["weightCol"] = "w"
    areas = [BinaryClassificationEvaluator(metricName=m, **kw).evaluate(frame) for m in ("areaUnderPR",
                                                                                           "areaUnderROC")]
    ev = evaluate(df, label, score, weight=weight, pos_label=positive, mode=mode)
    return MllibComparison(float(areas[0]), float(areas[1]), ev)
