"""Slices: every number per segment of the data, from one sort (``by=``).

``precall.evaluate(y, s, by=country)`` evaluates each slice (each distinct value
of ``by``, or each present combination of several ``by`` columns) and all rows
together.  The work is one sort and one batch of kernels, not a loop over slices:

1. **Slice codes**: ``np.unique(..., return_inverse=True)`` of each column;
   several columns combine into the codes of their present intersections.
   Missing values (None, NaN, NaT, pandas' NA, the empty string) form their own
   slice, named ``(missing)``: a row is never dropped.  A slice is named by its value
   in the column's numpy type (:func:`slice_names`); a stream of batches names them as
   the concatenated column (:class:`precall.SlicedAccumulator`).
2. **One order**: the rows in decreasing score (:func:`~precall._core.sort.stable_descending_sort`,
   equal scores in input order), then stably by slice code (a radix sort of
   16-bit codes up to 65,536 slices): each slice is a contiguous segment in the
   order of its own stable sort.
3. **Steps of every slice**: the per-row cumulative TP and FP restart at each
   segment (integer counts by one ``cumsum``; weights by a compensated cumsum of
   each segment, segments padded in size buckets, so the floats are those of the
   slice's own sum); the steps are taken from them as for one problem.
4. **One kernel call per size bucket**: slices with about the same number of
   steps (within a factor 2) are one ragged :class:`~precall._core.steps.Steps`
   batch (``lengths``): memory O(rows), and each row is summed over its own
   steps exactly as one problem (:func:`~precall._core.steps.segment_sums`), so
   every number of a slice equals ``precall.evaluate`` of its rows bit for bit.

Unweighted input takes a faster route to the same steps (:func:`_counted_steps`): one
``np.sort`` of the integer keys ``slice << (b + 1) | score << 1 | negative`` (32-bit score
keys: floats of at most 32 bits, float64 that are float32 values, integers in a 2**32
range; other scores by their dense rank from one stable sort), each run of equal (slice,
score) counted, no permutation; the overall evaluation from the same keys without the
slice.  With the compiled passes and two threads (float scores from ``backend.MIN_BESIDE``
rows) all rows are evaluated from their own sort in the second thread while this one counts
the rows into their slices and sorts each slice in the caches (:func:`_slice_major`): two
sorts, one a thread, neither a loop in Python.  Integer slice columns in a range O(rows) are
coded by counting, pandas columns by ``factorize``.

Also here: ``threshold_table(by=)`` (:class:`SlicedTables`: each slice's table from its
rows) and multi-class / multi-label ``evaluate(by=)`` (:class:`SlicedMultiEvaluation`: each
class through the binary path, per slice the macro and weighted averages).  Intervals and
comparisons between slices are :func:`precall.stats.compare_slices`.

Out of every sliced result (and :class:`precall.stats.SliceComparison`), each slice with its
value in each ``by`` column: ``to_frame`` indexed by the values (a ``pandas.Index``, or a
``MultiIndex`` of one level per column, as fairlearn's ``MetricFrame.by_group``; the row of all
rows in ``frame.attrs["overall"]``), ``by_values`` in ``to_dict`` / ``to_json`` and a column per
``by`` column in ``to_csv`` (headed by :func:`by_headers`).

Public API for other engines: :func:`slice_codes` (``SliceCodes``: ``codes``, ``names``,
``keys``, ``columns``, ``m``), :class:`SlicedEvaluation`, :class:`SlicedValues`,
:class:`SlicedTables`, :class:`SlicedMultiEvaluation`, :data:`MISSING`.

Undefined values (a slice without positives, or without negatives for ROC-AUC)
follow ``on_undefined`` per slice, with one warning naming how many slices; they
are reported, never ranked.  Slices below ``min_support`` rows are reported but
not ranked either.
"""

from __future__ import annotations

import csv
import datetime
import functools
import io
import json
import math
import numbers
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ._core.conventions import at_most_one, unit_interval
from ._core.evaluation import (
    Evaluation,
    F1Point,
    batch_numbers,
    evaluation_from_steps,
    min_average_precisions,
    normalized_average_precisions,
)
from ._core import backend
from ._core.metric import Metric
from ._core.sort import _descending_key, compensated_cumsum, descending_key_scores, stable_descending_sort
from ._core.steps import Steps, one_problem, positives_tied, segment_sums, steps_and_grouped, steps_of
from ._core.text import columns, legend, name_limit, shortened, table_lines, visible, wrap
from ._core.undefined import NO_POSITIVES, ONE_CLASS_ROC, UndefinedMetricWarning, raised_text
from ._core.validate import AP_METHODS, BinaryInput, check_number, label_array, object_array as _objects
from .table import table_of

__all__ = ["MISSING", "SliceCodes", "SlicedEvaluation", "SlicedMultiEvaluation", "SlicedTables", "SlicedValues", "slice_codes", "sliced_steps"]

MISSING = "(missing)"
OVERALL = "overall"
"""The name of the row of all rows beside the slices (no slice is named so: :func:`slice_names`)."""
BLOCK = 10_000
"""The slices made and written at a time by ``to_json``, ``to_csv`` and the commands' ``--json`` /
``--csv``: their memory is a block's rows, not a Python dict or list per slice of every slice."""
_BUCKET = 2.0  # slices whose step counts are within this factor share a kernel call


# ---------------------------------------------------------------------------
# slice codes
@dataclass(frozen=True)
class SliceCodes:
    """The slice of every row: ``codes`` (n,) in ``0..m-1``; ``names`` (m,) as printed,
    ``keys`` (m,) the values of each ``by`` column (``None`` for missing), ``columns``
    the names of the ``by`` columns, ``dtypes`` the numpy type of each column's values (what
    a stream promotes: :class:`precall.SlicedAccumulator`)."""

    codes: np.ndarray
    names: tuple[str, ...]
    keys: tuple[tuple[Any, ...], ...]
    columns: tuple[str, ...]
    counts: np.ndarray | None = None  # rows per slice (m,), when known
    dtypes: tuple[np.dtype, ...] = ()

    @property
    def m(self) -> int:
        return len(self.keys)

    def rows(self) -> np.ndarray:
        """The number of rows of each slice (m,)."""
        return self.counts if self.counts is not None else np.bincount(self.codes, minlength=self.m)


def _is_missing(values: np.ndarray) -> np.ndarray:
    if values.dtype.kind == "f" or values.dtype.kind == "c":
        return np.isnan(values)
    if values.dtype.kind == "M" or values.dtype.kind == "m":
        return np.isnat(values)
    if values.dtype.kind in "US":
        return values == values.dtype.type()
    if values.dtype.kind == "O":
        def missing(v: Any) -> bool:
            if v is None or (isinstance(v, str) and v == ""):
                return True
            try:
                return bool(v != v)  # NaN, NaT, pandas' NA (raises TypeError: ambiguous)
            except (TypeError, ValueError):
                return True
        return np.frompyfunc(missing, 1, 1)(values).astype(bool) if values.size else np.zeros(0, dtype=bool)
    return np.zeros(values.shape[0], dtype=bool)


def _columns_of(by: Any) -> list[tuple[str, Any]]:
    """The ``by`` columns with their names: a pandas DataFrame (each column), a dict,
    a list of arrays, or one array (a pandas Series keeps its name)."""
    if isinstance(by, str):
        raise TypeError(
            f"`by` must be the slice values of every row (an array, a pandas Series or DataFrame, a dict of "
            f"arrays, or a list of arrays); got the string {visible(by)!r:.80}. Pass the column itself, "
            "e.g. by=df['country']"
        )
    if hasattr(by, "columns") and hasattr(by, "__getitem__") and not isinstance(by, np.ndarray):
        return [(str(c), by[c]) for c in by.columns]
    if isinstance(by, dict):
        return [(str(k), v) for k, v in by.items()]
    if isinstance(by, (list, tuple)) and by and all(
            not isinstance(v, (str, bytes)) and np.ndim(v) >= 1 for v in by):
        return [(str(getattr(v, "name", None) or f"by{i}"), v) for i, v in enumerate(by)]
    return [(str(getattr(by, "name", None) or "slice"), by)]


def _as_column(values: Any, name: str, n: int) -> np.ndarray:
    if isinstance(values, np.ma.MaskedArray):  # a masked entry is missing (it was read as the data under it)
        mask = np.ma.getmaskarray(values)
        values = values.data
        if mask.any():
            values = values.astype(object)
            values[mask] = None
    if hasattr(values, "to_numpy"):
        values = values.to_numpy(dtype=object) if str(getattr(values, "dtype", "")) in ("category", "string") \
            else values.to_numpy()
    arr = label_array(values, "by", objects=True)  # a list of numbers and strings: an object column
    if arr.ndim != 1:
        raise ValueError(f"`by` column {visible(name)!r} must be 1-D (one slice value per row); got shape "
                         f"{arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"`by` column {visible(name)!r} must have one value per row ({n}); got {arr.shape[0]} "
                         "values. Pass a column of the same rows as y_true")
    return arr


def _dense(values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct values of non-negative integers below ``size`` (increasing), each row's index
    among them and each value's rows: counting (``np.bincount``) when ``size`` is O(rows), else
    ``np.unique``."""
    if size <= max(2 * values.shape[0], 1 << 16):
        fast = backend.compiled(values.shape[0])
        if fast is not None:  # one pass (np.bincount finds the range first)
            counts = np.zeros(size, dtype=np.int64)
            fast.code_counts(values, counts)
        else:
            counts = np.bincount(values, minlength=size)
        used = counts > 0
        present = np.flatnonzero(used)
        if present.shape[0] == size:  # every value present: each is its own index
            return present, values, counts
        index = np.cumsum(used, dtype=np.int64)
        index -= 1
        return present, index[values], counts[present]
    present, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    return present, inverse.ravel().astype(np.int64), counts


def _int_range(values: np.ndarray) -> tuple[Any, Any]:
    """The least and the greatest of non-empty integers or booleans (one compiled pass when the
    kernel choice takes it, else numpy's ``min`` and ``max``)."""
    fast = backend.compiled(values.shape[0])
    if fast is not None and values.dtype.kind in "iu" and values.dtype != np.uint64:
        return fast.int_range(values)
    return values.min(), values.max()


def _ordered(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)``; values numpy cannot order (numbers beside
    strings) grouped by equality as a dict groups them, then ordered by their text (type name and
    value).  In an object column equal values of other types are one slice, keyed by the widest
    (:func:`_widest`)."""
    try:
        levels, inverse = np.unique(values, return_inverse=True)
    except TypeError:
        pass
    else:
        inverse = inverse.ravel().astype(np.int64)
        return (_widest(levels, values, inverse) if values.dtype == object else levels), inverse
    rows = values.tolist()
    try:
        index: dict[Any, int] = {}
        inverse = np.fromiter((index.setdefault(v, len(index)) for v in rows), dtype=np.int64, count=len(rows))
        distinct = _widest(_objects(list(index)), values, inverse)
    except TypeError:  # values that cannot be hashed: grouped by their text alone
        text = np.array([_type_text(v) for v in rows], dtype=object)
        _, first, inverse = np.unique(text, return_index=True, return_inverse=True)
        return values[first], inverse.ravel().astype(np.int64)
    texts = [_type_text(v) for v in map(_key_value, distinct.tolist())]
    order = sorted(range(len(texts)), key=texts.__getitem__)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return distinct[order], rank[inverse]


def _type_text(v: Any) -> str:
    """The order of values numpy cannot order: by their type's name and their text."""
    return f"{type(v).__name__}:{v}"


@functools.lru_cache(maxsize=256)
def _type_rank(t: type) -> tuple[int, str]:
    """The order of types among equal values of an object column: numbers by numpy's promotion
    (bool < int < float < complex), above any other type, which go by their name."""
    for rank, kinds in enumerate(((bool, np.bool_), numbers.Integral, numbers.Real, numbers.Complex), 1):
        if issubclass(t, kinds):
            return rank, ""
    return 0, f"{t.__module__}.{t.__qualname__}"


def _widest(levels: np.ndarray, rows: np.ndarray, inverse: np.ndarray) -> np.ndarray:
    """The distinct values ``levels`` of an object column (``inverse``: each of ``rows``' level),
    each replaced by the row of the widest type equal to it (:func:`_type_rank`): ``1``, ``1.0``
    and ``True`` in one column are the one slice ``1.0``, whatever the order of the rows (numpy
    and pandas keep whichever they meet first)."""
    if all(type(v) is str for v in levels.tolist()):  # only strings equal strings
        return levels
    types = list(map(type, rows.tolist()))
    distinct = set(types)
    if len(distinct) < 2:
        return levels
    code = {t: i for i, t in enumerate(sorted(distinct, key=_type_rank))}
    codes = np.fromiter(map(code.__getitem__, types), dtype=np.int64, count=len(types))
    best = np.full(levels.shape[0], -1, dtype=np.int64)
    np.maximum.at(best, inverse, codes)
    have = np.fromiter((code[type(v)] for v in levels.tolist()), dtype=np.int64, count=levels.shape[0])
    if not (best > have).any():
        return levels
    chosen = np.flatnonzero((codes == best[inverse]) & (best > have)[inverse])
    at, first = np.unique(inverse[chosen], return_index=True)
    out = levels.copy()
    out[at] = rows[chosen[first]]
    return out


def _key_value(v: Any) -> Any:
    """A slice value as its key: numpy scalars as Python values, except a datetime64 Python's
    datetime cannot hold (nanoseconds, years past 9999), kept as it is and named as a date-time
    (:func:`_text`), and a timedelta64 Python's timedelta cannot hold (nanoseconds), named as a
    timedelta; a float zero as ``0.0`` (``-0.0`` is the same slice)."""
    if isinstance(v, np.generic):
        item = v.item()
        if isinstance(v, np.datetime64) and not isinstance(item, datetime.date):
            return v
        if isinstance(v, np.timedelta64) and not isinstance(item, datetime.timedelta):
            return v
        v = item
    if isinstance(v, float) and v == 0.0:
        return 0.0
    if isinstance(v, complex) and (v.real == 0.0 or v.imag == 0.0):
        return complex(v.real + 0.0, v.imag + 0.0)
    return v


def _level_list(values: np.ndarray) -> list[Any]:
    """The keys of a column's distinct values (:func:`_key_value`, one numpy call for a typed
    array)."""
    kind = values.dtype.kind
    if kind in "fc":
        return (values + values.dtype.type(0)).tolist()  # -0.0 + 0 is 0.0
    out = values.tolist()
    if kind == "M":
        return [v if isinstance(v, datetime.date) else values[i] for i, v in enumerate(out)]
    if kind == "m":
        return [v if isinstance(v, datetime.timedelta) else values[i] for i, v in enumerate(out)]
    return [_key_value(v) for v in out] if kind == "O" else out


def _text(v: Any) -> str:
    """A slice value as printed: a datetime64 key (:func:`_key_value`) as Python prints a
    datetime (``2020-01-02 03:04:05.000000001``: the fraction of a second in 6 digits, or 9, ...
    when finer, none when zero), a timedelta64 key as Python prints a timedelta, with the same
    fraction (``1 day, 0:00:00.000000001``); anything else by ``str``."""
    if isinstance(v, np.timedelta64):
        return _timedelta_text(v)
    if not isinstance(v, np.datetime64):
        return str(v)
    date, sep, time = str(np.datetime_as_string(v)).partition("T")
    if not sep:
        return date
    clock, _, fraction = time.partition(".")
    return f"{date} {':'.join((clock.split(':') + ['00', '00'])[:3])}" + _fraction(fraction)


def _fraction(digits: str) -> str:
    """A fraction of a second as Python prints one: none when zero, else 6 digits, or 9, 12, ...
    when finer."""
    digits = digits.rstrip("0")
    return "." + (digits + "0" * (-len(digits) % 3)).ljust(6, "0") if digits else ""


_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9, "ps": 10**12, "fs": 10**15, "as": 10**18}


def _timedelta_text(v: np.timedelta64) -> str:
    """A timedelta64 as Python's ``str`` of a timedelta prints one (``-1 day, 23:59:59.999999999``:
    whole days, possibly negative, then a non-negative time of day), its fraction to the unit's
    precision; a unit without a fixed length (years, months) or coarser than a second as numpy
    prints it."""
    unit, count = np.datetime_data(v.dtype)
    if unit not in _PER_SECOND or np.isnat(v):
        return str(v)
    per_second = _PER_SECOND[unit]
    days, rest = divmod(int(v.astype(np.int64)) * count, 86400 * per_second)
    seconds, part = divmod(rest, per_second)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    digits = f"{part:0{len(str(per_second)) - 1}d}" if per_second > 1 else ""
    clock = f"{hours}:{minutes:02d}:{seconds:02d}{_fraction(digits)}"
    return f"{days} day{'' if abs(days) == 1 else 's'}, {clock}" if days else clock


def _column_codes(raw: Any, name: str, n: int) -> tuple[np.ndarray, list[Any], int, np.ndarray | None, np.dtype]:
    """One ``by`` column: each row's code (the sorted distinct values ``0..`` and missing
    last), the values (``None`` for missing), their number, where counted each code's rows,
    and the numpy type of the values.

    Integers in a range O(rows) are counted, a pandas column is factorised by pandas (the
    distinct values then sorted), anything else goes through ``np.unique``."""
    counts = None
    factorize = getattr(raw, "factorize", None)
    if callable(factorize) and hasattr(raw, "to_numpy") and np.ndim(raw) == 1 and len(raw) == n:
        try:
            idx, uniques = factorize(sort=False)  # a Series, an Index
        except TypeError:  # a pandas ExtensionArray (Categorical, "Int64", "string", ...): no ``sort``
            idx, uniques = factorize()
        levels = np.asarray(uniques, dtype=object) if str(getattr(uniques, "dtype", "")) in (
            "category", "string") else np.asarray(uniques)
        idx = np.asarray(idx, dtype=np.int64)
        missing_level = _is_missing(levels) if levels.size else np.zeros(0, dtype=bool)
        keep = np.flatnonzero(~missing_level)
        kept = levels[keep]
        if str(getattr(raw, "dtype", "")) == "object" and not all(type(v) is str for v in kept.tolist()):
            # pandas keeps the first of equal values (1, 1.0): the widest instead, as np.unique's route
            level_of = np.full(levels.shape[0] + 1, -1, dtype=np.int64)
            level_of[keep + 1] = np.arange(keep.shape[0])
            row_level = level_of[idx + 1]
            present = row_level >= 0
            kept = _widest(kept, raw.to_numpy(dtype=object)[present], row_level[present])
        values, rank = _ordered(kept)
        remap = np.full(levels.shape[0] + 1, values.shape[0], dtype=np.int64)  # missing: the last code
        remap[keep + 1] = rank
        col = remap[idx + 1]
        has_missing = bool((col == values.shape[0]).any())
        dtype = levels.dtype
    else:
        arr = _as_column(raw, name, n)
        kind, dtype = arr.dtype.kind, arr.dtype
        low, high = _int_range(arr) if kind in "biu" and n else (0, 0)
        if kind in "biu" and n and (kind == "b" or int(high) - int(low) < max(2 * n, 1 << 16)):
            if arr.dtype == np.int64 and low == 0:  # codes already: read, never copied or written
                shifted = arr.view()
                shifted.flags.writeable = False
            else:
                shifted = arr.astype(np.int64) if kind in "bi" else (arr - low).astype(np.int64)
                if kind in "bi" and low:
                    shifted -= np.int64(low)
            present, col, counts = _dense(shifted, int(high) - int(low) + 1)
            values = arr[:0].copy() if not present.size else (
                (present + int(low)).astype(bool) if kind == "b" else low + present.astype(arr.dtype))
            has_missing = False
        else:
            missing = _is_missing(arr)
            values, inverse = _ordered(arr[~missing])
            has_missing = bool(missing.any())
            col = np.full(n, values.shape[0], dtype=np.int64)  # missing: the last code
            col[~missing] = inverse
    levels_list = _level_list(values) + [None] * int(has_missing)
    return col, levels_list, len(levels_list), counts, dtype


def slice_codes(by: Any, n: int, named: bool = True) -> SliceCodes:
    """The slice codes of ``by`` for ``n`` rows (see the module docstring).

    Parameters
    ----------
    by : array-like, pandas Series or DataFrame, dict of arrays, or list of arrays
        One slice value per row in each column (see :func:`precall.evaluate`).
    n : int
        The number of rows.
    named : bool, default=True
        False: no ``names`` (an empty tuple; a stream's batches need only the keys).

    Returns
    -------
    SliceCodes
        ``codes`` (n,) in ``0..m-1``, the slices ordered by their values (column by column),
        missing values last in each column; only combinations present in the data.
    """
    cols = _columns_of(by)
    if not cols:
        raise ValueError("`by` has no columns; give at least one column of slice values (e.g. by=df[['country']] "
                         "or by={'country': values})")
    codes = np.zeros(n, dtype=np.int64)
    keys: list[tuple[Any, ...]] = [()]
    counts = None
    dtypes = []
    for j, (name, raw) in enumerate(cols):
        col, levels, k, counts, dtype = _column_codes(raw, name, n)
        dtypes.append(dtype)
        if j == 0:  # every code of the first column is present
            codes = col
            keys = [(v,) for v in levels]
            continue
        present_codes, codes, counts = _dense(codes * k + col, len(keys) * k)
        keys = [keys[c // k] + (levels[c % k],) for c in present_codes.tolist()]
    names = slice_names(keys, [c for c, _ in cols]) if named else ()
    if counts is None:
        counts = np.bincount(codes, minlength=len(keys))
    return SliceCodes(codes, names, tuple(keys), tuple(c for c, _ in cols), counts.astype(np.int64, copy=False),
                      tuple(dtypes))


def slice_names(keys: Sequence[tuple[Any, ...]], columns: Sequence[str]) -> tuple[str, ...]:
    """The printed name of each slice: its value (``col=value, col=value`` for several columns; a
    date-time as Python prints a datetime, nanoseconds included: :func:`_text`), missing
    as :data:`MISSING`.  Names are distinct and never ``"overall"`` (the row of all rows): a slice
    whose name would be another's or ``"overall"`` (the string ``"1"`` beside the integer 1, a literal
    ``"(missing)"``) shows its text values quoted (``'1'``), then, if still not distinct, a ``#k``."""
    def name(key: tuple[Any, ...], quoted: bool) -> str:
        texts = [MISSING if v is None else repr(v) if quoted and isinstance(v, str) else _text(v) for v in key]
        return texts[0] if len(columns) == 1 else ", ".join(f"{c}={t}" for c, t in zip(columns, texts))

    names = [name(key, False) for key in keys]
    if len(set(names)) == len(names) and OVERALL not in names:
        return tuple(names)
    seen: dict[str, int] = {}
    for n in names:
        seen[n] = seen.get(n, 0) + 1
    taken = {n for n, k in seen.items() if k == 1 and n != OVERALL}
    out = []
    for key, n in zip(keys, names):
        if seen[n] > 1 or n == OVERALL:
            n = name(key, True)
            base, k = n, 1
            while n in taken or n == OVERALL:
                k += 1
                n = f"{base} #{k}"
        taken.add(n)
        out.append(n)
    return tuple(out)


# ---------------------------------------------------------------------------
# one order, the steps of every slice
def _segmented_cumsum(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The running sum of ``values`` restarting at each segment, each added in order from its
    start (the floats of each segment's own :func:`~precall._core.sort.compensated_cumsum`, as
    in memory); segments padded with zeros at their end in size buckets."""
    out = np.empty_like(values)
    order = np.argsort(lengths, kind="stable")
    lo = 0
    while lo < order.shape[0]:
        top = int(lengths[order[lo]])
        hi = lo + int(np.searchsorted(lengths[order[lo:]], max(1, top) * 2, side="left"))
        sel = order[lo:hi]
        width = int(lengths[sel].max())
        inside = np.arange(width) < lengths[sel, None]
        idx = np.where(inside, starts[sel, None] + np.arange(width), 0)
        block = np.where(inside, values[idx], 0.0)
        block = compensated_cumsum(block)
        out[idx[inside]] = block[inside]
        lo = hi
    return out


@dataclass(frozen=True)
class _Ragged:
    """Steps of every slice, one after another (internal)."""

    slice_of: np.ndarray  # (S,) the slice of each step, non-decreasing
    tp: np.ndarray
    fp: np.ndarray
    dtp: np.ndarray
    fp_prev: np.ndarray
    thresholds: np.ndarray


def _take_steps(rows: np.ndarray, above: np.ndarray, first: np.ndarray, cum_tp: np.ndarray, cum_fp: np.ndarray,
                seg: np.ndarray, scores: np.ndarray) -> _Ragged:
    """The steps at ``rows`` (the point above: ``above``, the origin where ``first``), as
    :func:`~precall._core.steps.steps_from_ranked` takes them."""
    tp = cum_tp[rows]
    zero = np.zeros(1, dtype=cum_tp.dtype)[0]
    tp_above = np.where(first, zero, cum_tp[above])
    fp_prev = np.where(first, np.zeros(1, dtype=cum_fp.dtype)[0], cum_fp[above])
    return _Ragged(seg[rows], tp, cum_fp[rows], tp - tp_above, fp_prev, scores[rows])


@dataclass(frozen=True)
class SlicedSteps:
    """The steps of every slice (for ``ties`` and grouped), each slice's totals and, when the
    sort gave them, the overall steps ``(steps, grouped)`` of all rows (internal)."""

    steps: _Ragged
    grouped: _Ragged
    n_pos: np.ndarray
    n_neg: np.ndarray
    exact: bool
    m: int
    overall: tuple[Steps, Steps] | None = None
    pending: Any = None  # a Future of (overall, then(overall)) while the second thread makes them

    def whole(self) -> tuple[tuple[Steps, Steps] | None, Any]:
        """All rows' steps (None: not from this sort) and ``then`` of them (None: not run), once the
        second thread has made them."""
        return self.pending.result() if self.pending is not None else (self.overall, None)


def sliced_steps(data: BinaryInput, codes: np.ndarray, m: int, ties: str, then: Any = None) -> SlicedSteps:
    """Sort once and take the steps of every slice (``codes`` of the kept rows).

    Unweighted input is counted (:func:`_counted_steps`: no permutation); weighted input,
    and stable ties where a positive and a negative share a score, need the rows' order
    (:func:`_permuted_steps`).  ``then``: a function of the overall steps, which the compiled
    route runs in the second thread as soon as they are made (:meth:`SlicedSteps.whole`: its
    result; None when it did not run).
    """
    if data.weight is None:
        counted = _counted_steps(data, codes, m, ties, then)
        if counted is not None:
            return counted
    return _permuted_steps(data, codes, m, ties)


# ---- counted: unweighted rows as integer keys (slice, score, class), sorted by value
def _score_key(scores: np.ndarray) -> tuple[np.ndarray, int, Any] | None:
    """Integer keys increasing as the scores decrease (equal exactly where the scores are
    equal), their bit width and the function from keys back to scores; None when the scores
    need more than 32 bits (float64 that are not float32 values, wide integer ranges)."""
    kind, size = scores.dtype.kind, scores.dtype.itemsize
    if kind in "fiu" and size <= 4:
        return _descending_key(scores)[0], 32, lambda k: descending_key_scores(k, scores.dtype)
    if kind == "f" and size == 8:
        head = scores[:1024]
        with np.errstate(over="ignore", under="ignore"):  # beyond float32's range: inf, not equal, no warning
            if not np.array_equal(head.astype(np.float32), head):  # the usual float64 answer, without a copy
                return None
            narrow = scores.astype(np.float32)
        if not np.array_equal(narrow, scores):
            return None
        return (_descending_key(narrow)[0], 32,
                lambda k: descending_key_scores(k, np.dtype(np.float32)).astype(np.float64))
    if kind in "iu" and size == 8 and scores.size:
        high = scores.max()
        if int(high) - int(scores.min()) >= 1 << 32:
            return None
        return (high - scores).astype(np.uint64), 32, lambda k: high - k.astype(scores.dtype)
    return None


def _changes(values: np.ndarray) -> np.ndarray:
    """The indices where a sorted array starts a new value (0 first)."""
    new = np.empty(values.shape[0], dtype=bool)
    new[0] = True
    np.not_equal(values[1:], values[:-1], out=new[1:])
    return np.flatnonzero(new)


def _runs(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The runs of sorted ``keys`` (uint64, the lowest bit 1 for a negative row) that share
    ``key >> 1``: that value, and the positive and negative rows of each run (int64).

    A run is at most two runs of equal keys (its positives, then its negatives): found by one
    comparison of neighbours, the rest is work on the runs (few large temporaries: each
    is a page-faulting allocation at 1e7 rows)."""
    starts = _changes(keys)
    sizes = np.empty_like(starts)
    np.subtract(starts[1:], starts[:-1], out=sizes[:-1])
    sizes[-1] = keys.shape[0] - starts[-1]
    key = keys[starts]
    del starts
    negative = (key & np.uint64(1)).view(np.int64)
    key >>= np.uint64(1)
    head = _changes(key)
    tail = np.empty_like(head)
    np.subtract(head[1:], 1, out=tail[:-1])
    tail[-1] = key.shape[0] - 1
    pos = sizes[head]
    pos *= negative[head] ^ 1  # a run's positives (if any) come first,
    neg = sizes[tail]
    neg *= negative[tail]  # its negatives (if any) last
    return key[head], pos, neg


def _steps_of_runs(run_slice: np.ndarray | None, run_score: np.ndarray, pos: np.ndarray, neg: np.ndarray, m: int,
                   ties: str, scores_of: Any) -> tuple[_Ragged, _Ragged, np.ndarray, np.ndarray] | None:
    """The steps of every slice from its runs of equal scores (in decreasing score order, the
    slices one after another; ``run_slice`` None: one slice): ``(steps, grouped, n_pos, n_neg)``; None for stable ties when a
    run holds both classes (their input order decides, :func:`_permuted_steps`)."""
    tp_all, fp_all = np.cumsum(pos), np.cumsum(neg)
    per_slice = np.array([pos.shape[0]]) if run_slice is None else np.bincount(run_slice, minlength=m)
    first = np.concatenate([[0], np.cumsum(per_slice)]).astype(np.int64)
    tp_before = np.concatenate([[0], tp_all])[first]  # the counts of the earlier slices
    fp_before = np.concatenate([[0], fp_all])[first]
    n_pos, n_neg = np.diff(tp_before).astype(np.float64), np.diff(fp_before).astype(np.float64)
    rows = np.flatnonzero(pos)
    if ties != "group" and bool(np.any(neg[rows])):
        return None
    slice_of = np.zeros(rows.shape[0], dtype=np.int64) if run_slice is None else run_slice[rows]
    tp = tp_all[rows] - tp_before[:-1][slice_of]
    fp = fp_all[rows] - fp_before[:-1][slice_of]
    dtp = pos[rows]
    thresholds = scores_of(run_score[rows])
    if ties == "group":
        group = _Ragged(slice_of, tp, fp, dtp, fp - neg[rows], thresholds)
        return group, group, n_pos, n_neg
    one = _stable_steps(_Ragged(slice_of, tp, fp, dtp, fp, thresholds))
    return one, one, n_pos, n_neg


def _stable_steps(r: _Ragged) -> _Ragged:
    """Stable ties where no run of a score holds both classes: a step per positive, its run's FP."""
    dtp = r.dtp
    within = np.arange(int(dtp.sum()), dtype=np.int64) - np.repeat(np.cumsum(dtp) - dtp, dtp)
    fp = np.repeat(r.fp, dtp)
    return _Ragged(np.repeat(r.slice_of, dtp), np.repeat(r.tp - dtp, dtp) + within + 1, fp,
                   np.ones(fp.shape[0], dtype=np.int64), fp, np.repeat(r.thresholds, dtp))


def _one(r: _Ragged, n_pos: np.ndarray, n_neg: np.ndarray) -> Steps:
    """The :class:`Steps` of a one-slice ragged set (all rows)."""
    return one_problem(r.thresholds, r.tp, r.dtp, r.fp, r.fp_prev, float(n_pos[0]), float(n_neg[0]), True)


def _counted_steps(data: BinaryInput, codes: np.ndarray, m: int, ties: str, then: Any = None) -> SlicedSteps | None:
    """Unweighted rows, no permutation.  With the compiled passes: :func:`_slice_major` in two
    threads (float scores), else :func:`_score_major` (one sort by score, slice and class, one
    pass).  The numpy route: in two threads with 32-bit score keys :func:`_slice_major_numpy`;
    else, up to 2**16 slices, :func:`_score_major_numpy` (one ``np.sort`` of the same keys, the slices' rows put together by
    a radix sort of their codes; when the scores need more than 32 bits their dense ranks from
    the one stable sort that ranks them are the score keys).  More slices: the overall steps
    from the keys ``score << 1 | negative`` and the slices' from one more sort of the keys
    ``slice << (b + 1) | score << 1 | negative``, counting each run of equal (slice, score)."""
    n = data.scores.shape[0]
    if n == 0 or (data.scores.dtype.kind == "f" and bool(np.signbit(data.scores[data.scores == 0]).any())):
        return None  # -0.0: the key merges it with +0.0, a threshold must show the row's own zero
    slice_bits = max(0, (m - 1).bit_length())
    negative = ~data.positive
    fast = backend.compiled(n)  # the compiled passes (numba), or None: the numpy route
    if fast is not None and data.scores.dtype in (np.float32, np.float64) and n < 2**31 and backend.in_two(n):
        return _slice_major(fast, data, codes, m, ties, then)
    if fast is not None and data.scores.dtype == np.float32 and slice_bits + 33 <= 63:
        keys = np.empty(n, dtype=np.int64)  # the keys in one pass from the scores' bits
        fast.float32_keys(data.scores.view(np.int32), codes.astype(np.int64, copy=False), negative, slice_bits,
                          keys)
        return _score_major(fast, keys, 32, negative, codes, m, slice_bits, ties,
                            lambda k: descending_key_scores(k, data.scores.dtype, fast), assembled=True, then=then)
    keyed = _score_key(data.scores)
    if keyed is not None:
        score_key, bits, scores_of = keyed
        if fast is not None and slice_bits + bits + 1 <= 63:
            return _score_major(fast, score_key, bits, negative, codes, m, slice_bits, ties, scores_of, then=then)
        if fast is None and 1 < m and slice_bits + bits + 1 <= 64 and backend.in_two(n):
            return _slice_major_numpy(data, score_key, bits, negative, codes, m, ties, scores_of, then)
        if 1 < m <= 1 << 16 and slice_bits + bits + 1 <= 64:
            return _score_major_numpy(score_key, negative, codes, m, slice_bits, ties, scores_of)
        score_key <<= np.uint64(1)
        score_key |= negative
        overall_keys = np.sort(score_key)
        o_score, o_pos, o_neg = _runs(overall_keys)
        del overall_keys
        codes_sorted = codes
    elif fast is not None and data.scores.dtype.itemsize == 8 and data.scores.dtype.kind in "fiu":
        dtype = data.scores.dtype
        if dtype.kind == "f":  # the keys in one pass from the scores' bits
            key64 = np.empty(n, dtype=np.int64)
            fast.float64_keys(data.scores.view(np.int64), key64)
            key64 = key64.view(np.uint64)
        else:
            key64 = _descending_key(data.scores)[0]
        return _score_major(fast, key64, 64, negative, codes, m, slice_bits, ties,
                            lambda k: descending_key_scores(k, dtype, fast), then=then)
    else:
        order, s = stable_descending_sort(data.scores)
        new = np.empty(n, dtype=bool)
        new[0] = True
        np.not_equal(s[1:], s[:-1], out=new[1:])
        distinct = s[new]
        rank = np.cumsum(new, dtype=np.int64)
        rank -= 1
        bits = max(1, (distinct.shape[0] - 1).bit_length())
        negative = negative[order]
        codes_sorted = codes[order]
        del order, s

        def scores_of(k: np.ndarray) -> np.ndarray:
            return distinct[k]
        if 1 < m <= 1 << 16 and slice_bits + bits + 1 <= 64:
            del new
            return _score_major_numpy(rank.view(np.uint64), negative, codes_sorted, m, slice_bits, ties, scores_of,
                                      in_order=True)
        starts = np.flatnonzero(new)
        del new
        o_neg = np.add.reduceat(negative, starts, dtype=np.int64)
        o_pos = np.diff(np.append(starts, n)) - o_neg
        o_score = np.arange(distinct.shape[0], dtype=np.uint64)
        del starts
        score_key = (rank.view(np.uint64) << np.uint64(1)) | negative.astype(np.uint64)
        del rank
    if slice_bits + bits + 1 > 64:
        return None
    overall = _steps_of_runs(None, o_score, o_pos, o_neg, 1, ties, scores_of)
    if m == 1:
        sliced = overall
    else:
        high = codes_sorted.astype(np.uint64)
        high <<= np.uint64(bits + 1)
        score_key |= high
        del high
        sliced = _slice_major_runs(score_key, bits, m, ties, scores_of)
    return _counted(sliced, overall, m)


def _slice_major_runs(key: np.ndarray, bits: int, m: int, ties: str, scores_of: Any
                      ) -> tuple[_Ragged, _Ragged, np.ndarray, np.ndarray] | None:
    """Every slice's steps (:func:`_steps_of_runs`) from the keys ``slice << (bits + 1) | score << 1 |
    negative`` (sorted here, in place: one ``np.sort``, which releases the GIL), each run of one
    (slice, score) counted."""
    key.sort()
    run_key, pos, neg = _runs(key)
    run_slice = (run_key >> np.uint64(bits)).astype(np.int64)
    run_key &= np.uint64((1 << bits) - 1)
    return _steps_of_runs(run_slice, run_key, pos, neg, m, ties, scores_of)


def _counted(sliced: Any, overall: Any, m: int) -> SlicedSteps | None:
    """The :class:`SlicedSteps` of the counted routes from :func:`_steps_of_runs` of the slices
    and of all rows (None: stable ties need the rows' order)."""
    if sliced is None:
        return None
    steps, grouped, n_pos, n_neg = sliced
    whole = None
    if overall is not None:
        one = _one(overall[0], overall[2], overall[3])
        whole = (one, one)
    return SlicedSteps(steps, grouped, n_pos, n_neg, True, m, whole)


def _score_major_numpy(score_key: np.ndarray, negative: np.ndarray, codes: np.ndarray, m: int, slice_bits: int,
                       ties: str, scores_of: Any, in_order: bool = False) -> SlicedSteps | None:
    """The numpy route of :func:`_counted_steps` for at most 2**16 slices: one ``np.sort`` of the
    keys ``score << (b + 1) | slice << 1 | negative`` (the compiled route's keys) gives all rows'
    runs of one score (counted by ``np.add.reduceat``), and a stable counting sort of the sorted
    rows' slice codes (numpy's radix sort of 16-bit integers) puts each slice's rows together in
    score order, for :func:`_runs`.  One sort of the 64-bit keys instead of two.  ``in_order``:
    the rows are in score order already (the score keys are dense ranks), so the keys are out
    of order only within a score, and numpy's stable sort (which finds the sorted runs) takes
    them in about one pass."""
    low_bits = np.uint64(slice_bits + 1)
    keys = score_key  # the caller's keys, no longer needed: written over
    keys <<= low_bits
    keys |= codes.astype(np.uint64) << np.uint64(1)
    keys |= negative
    keys.sort(kind="stable" if in_order else "quicksort")
    score = keys >> low_bits
    starts = _changes(score)
    o_score = score[starts]
    del score
    sizes = np.diff(np.append(starts, keys.shape[0]))
    o_neg = np.add.reduceat((keys & np.uint64(1)).view(np.int64), starts)
    overall = _steps_of_runs(None, o_score, sizes - o_neg, o_neg, 1, ties, scores_of)
    del starts, sizes, o_score, o_neg
    code = (keys >> np.uint64(1)).astype(np.uint16)  # the low 16 bits: the slice code (m <= 2**16)
    if slice_bits < 16:
        code &= np.uint16((1 << slice_bits) - 1)
    sliced_keys = keys[np.argsort(code, kind="stable")]
    del code, keys
    run_key, pos, neg = _runs(sliced_keys)
    del sliced_keys
    run_slice = (run_key & np.uint64((1 << slice_bits) - 1)).astype(np.int64)
    run_key >>= np.uint64(slice_bits)
    return _counted(_steps_of_runs(run_slice, run_key, pos, neg, m, ties, scores_of), overall, m)


def _step_buffers(cap: np.ndarray, narrow: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The compiled passes' room for their steps (a step holds a positive): each slice's
    positive rows ``cap``, all rows' steps (5, positive rows), the slices' records (positive rows, 4;
    int32 when ``narrow``: 16 bytes a step scattered over m places, against 32) and their dTP.
    numpy allocates them (huge pages: the passes write to every slice's steps at once)."""
    k = int(cap.sum())
    return (cap, np.empty((5, k), dtype=np.int64), np.empty((k, 4), dtype=np.int32 if narrow else np.int64),
            np.empty(k, dtype=np.int64))


def _overall_of(passed: tuple, ties: str, scores_of: Any, n_pos: int, n_neg: int) -> tuple[Steps, Steps] | None:
    """All rows' steps ``(steps, grouped)`` from a pass's results, ``n_pos`` and ``n_neg`` the
    totals (None: stable ties with both classes at one score, which need the rows' order)."""
    o_key, o_tp, o_fp, o_dtp, o_fp_prev, o_mixed = passed[4:10]
    if ties != "group" and o_mixed:
        return None
    o = _Ragged(np.zeros(o_key.shape[0], dtype=np.int64), o_tp, o_fp, o_dtp, o_fp_prev, scores_of(o_key.view(np.uint64)))
    grouped = _one(o, np.array([n_pos]), np.array([n_neg]))
    if ties == "group":
        return grouped, grouped
    steps = _one(_stable_steps(o), np.array([n_pos]), np.array([n_neg]))
    return steps, grouped if positives_tied(steps) else steps  # as steps_and_grouped


def _in_two(one_pass: Any, args: tuple, whole: Any, then: Any) -> tuple:
    """A compiled pass over the sorted rows (:func:`precall._core.compiled.score_major_pass` or
    ``score_runs_pass``) and all rows' steps (``whole`` of the pass's results): when the rows
    are many, all rows' steps are made in a second thread (the pass's ``part`` 1), then ``then``
    of them there, while this one makes the slices' (``part`` 2; the same steps as ``part`` 0).
    Returns the pass's results (the slices' part), and all rows' steps or, from the second
    thread, a Future of them with ``then``'s result."""
    rows = args[0].shape[0]
    if rows < backend.MIN_BESIDE:
        passed = one_pass(*args)
        return passed, whole(passed), None

    def overall() -> tuple:
        steps = whole(one_pass(*args, 1))
        return steps, (then(steps) if then is not None and steps is not None else None)

    job = backend.beside(rows, overall)
    return one_pass(*args, 2), None, job


def _all_rows_beside(data: BinaryInput, ties: str, then: Any) -> Future:
    """All rows' steps (:func:`steps_and_grouped`, as :func:`precall.evaluate` makes them) and
    ``then`` of them, in the second thread: a Future of ``(steps, then's result or None)``."""
    def all_rows() -> tuple:
        whole = steps_and_grouped(data, ties)
        return whole, (then(whole) if then is not None else None)

    return backend.beside(data.n_samples, all_rows)


def _slice_major_numpy(data: BinaryInput, score_key: np.ndarray, bits: int, negative: np.ndarray, codes: np.ndarray,
                       m: int, ties: str, scores_of: Any, then: Any) -> SlicedSteps | None:
    """The numpy route of :func:`_slice_major` (32-bit score keys, two threads): all rows evaluated
    in the second thread while this one sorts the keys ``slice << (b + 1) | score << 1 | negative``
    (one ``np.sort``, which releases the GIL) and counts each run of one (slice, score)."""
    pending = _all_rows_beside(data, ties, then)
    key = codes.astype(np.uint64)
    key <<= np.uint64(bits + 1)
    score_key <<= np.uint64(1)  # the caller's keys, no longer needed: written over
    key |= score_key
    key |= negative
    del score_key
    sliced = _slice_major_runs(key, bits, m, ties, scores_of)
    del key
    if sliced is None:  # stable ties with both classes at one score of a slice: the rows' order decides
        pending.result()
        return None
    steps, grouped, n_pos, n_neg = sliced
    return SlicedSteps(steps, grouped, n_pos, n_neg, True, m, None, pending)


def _slice_major(fast: Any, data: BinaryInput, codes: np.ndarray, m: int, ties: str, then: Any) -> SlicedSteps | None:
    """The compiled route of :func:`_counted_steps` in two threads: all rows' steps (and ``then`` of
    them) in the second thread from their own sort, as :func:`precall.evaluate` makes them
    (:func:`steps_and_grouped`), while this one puts the rows together by slice
    (``fast.slice_major_keys``: each row's score key and class), sorts each slice on its own
    (``fast.sort_each_slice``: a slice's rows fit the caches) and walks them
    (``fast.slice_major_steps``): the steps of :func:`_score_major`, bit for bit
    (``tests/test_compiled_slices.py``).  The one sort of :func:`_score_major` would make the two
    threads share its passes over every row; here the second sort is the second thread's, and
    this one's work is a counting pass and sorts in the caches."""
    pending = _all_rows_beside(data, ties, then)
    n = data.scores.shape[0]
    codes = codes.astype(np.int64, copy=False)
    negative = ~data.positive
    starts = np.zeros(m + 1, dtype=np.int64)
    fast.code_counts(codes, starts[1:])
    np.cumsum(starts, out=starts)
    total_pos = int(np.count_nonzero(data.positive))
    wide = data.scores.dtype == np.float64
    key = np.empty(n, dtype=np.int64)
    label = np.empty(n if wide else 1, dtype=np.uint8)
    top = fast.slice_major_keys(data.scores.view(np.int64 if wide else np.int32), wide, codes, negative, starts, key,
                                label)
    carry = top == 1  # float64 scores of both signs: the classes apart, in `label`
    largest = int(np.diff(starts).max(initial=0))
    spare = largest if largest > fast.IN_CACHE else 1  # a slice beyond the caches is sorted through a buffer
    fast.sort_each_slice(key, label, starts, carry, np.empty(spare, dtype=np.int64), np.empty(spare, dtype=np.uint8))
    s_records = np.empty((total_pos + 1, 4), dtype=np.int64 if wide else np.int32)  # one entry of room
    s_dtp = np.empty(total_pos + 1, dtype=np.int64)
    per_slice, s_mixed = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.bool_)
    n_pos, n_neg = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
    k = fast.slice_major_steps(key, label, carry, np.int64(0 if carry else top), starts, s_records, s_dtp, per_slice,
                               s_mixed, n_pos, n_neg)
    del key, label
    if ties != "group" and bool(s_mixed.any()):
        pending.result()  # the second thread's work is not needed: wait for it, and let it go
        return None  # stable ties with both classes at one score of a slice: the rows' order decides
    s_key, s_tp, s_fp, s_fp_prev = s_records[:k].T  # columns of the records (strided views)
    dtype = data.scores.dtype
    thresholds = descending_key_scores(s_key.view(np.uint64) if wide else s_key.view(np.uint32).astype(np.uint64),
                                       dtype, fast)
    grouped = _Ragged(np.repeat(np.arange(m, dtype=np.int64), per_slice), s_tp, s_fp, s_dtp[:k], s_fp_prev,
                      thresholds)
    steps = grouped if ties == "group" else _stable_steps(grouped)
    return SlicedSteps(steps, grouped, n_pos.astype(np.float64), n_neg.astype(np.float64), True, m, None, pending)


def _score_major(fast: Any, score_key: np.ndarray, score_bits: int, negative: np.ndarray, codes: np.ndarray,
                 m: int, slice_bits: int, ties: str, scores_of: Any, assembled: bool = False,
                 then: Any = None) -> SlicedSteps | None:
    """The compiled route of :func:`_counted_steps`: one radix sort by score serves every slice and
    all rows; the same steps as the numpy route (:func:`_score_major_numpy`, the tests' oracle).  Keys
    ``score << (b + 1) | slice << 1 | negative`` when they fit 63 bits (sorted alone, then
    ``fast.score_major_pass``), else the score keys sorted carrying each row's ``slice << 1 |
    negative`` (``fast.score_runs_pass``); ``assembled``: ``score_key`` holds the keys already.
    The slices' steps come as records of int32 when the score keys and the counts fit 32 bits.
    ``then``: see :func:`sliced_steps`."""
    low_bits = slice_bits + 1
    hi = score_key.view(np.int64)
    codes = codes.astype(np.int64, copy=False)
    narrow = score_bits <= 32 and hi.shape[0] < 2**31
    cap = np.zeros(m, dtype=np.int64)
    total_neg = int(np.count_nonzero(negative))
    total_pos = hi.shape[0] - total_neg

    def whole(passed: tuple) -> tuple[Steps, Steps] | None:
        return _overall_of(passed, ties, scores_of, total_pos, total_neg)

    counted = backend.beside(hi.shape[0], fast.slice_positives, codes, negative, cap)  # beside the keys and the sort
    if score_bits + low_bits <= 63:
        if not assembled:
            fast.assemble_keys(hi, codes, negative, slice_bits)
        fast.radix_sort(hi, np.empty_like(hi))
        counted.result()
        passed, overall, pending = _in_two(fast.score_major_pass, (hi, hi, low_bits, low_bits,
                                                                    *_step_buffers(cap, narrow)), whole, then)
    else:  # the smallest integers that hold the payload: fewer bytes moved per pass
        lo = codes.astype(np.int16 if low_bits <= 15 else np.int32 if low_bits <= 31 else np.int64)
        lo <<= 1
        lo |= negative
        fast.radix_sort_carry(hi, lo, np.empty_like(hi), np.empty_like(lo))
        counted.result()
        passed, overall, pending = _in_two(fast.score_runs_pass, (hi, lo, *_step_buffers(cap, narrow)), whole, then)
        del lo
    per_slice, s_records, s_dtp, s_mixed = passed[:4]
    n_pos, n_neg = passed[10:12]
    s_key, s_tp, s_fp, s_fp_prev = s_records.T  # columns of the records (strided views)
    del hi
    if ties != "group" and bool(s_mixed.any()):
        if pending is not None:
            pending.result()  # the second thread's work is not needed: wait for it, and let it go
        return None  # stable ties with both classes at one score of a slice: the rows' order decides
    slice_of = np.repeat(np.arange(m, dtype=np.int64), per_slice)
    thresholds = scores_of(s_key.view(np.uint32).astype(np.uint64) if narrow else s_key.view(np.uint64))
    grouped = _Ragged(slice_of, s_tp, s_fp, s_dtp, s_fp_prev, thresholds)  # _buckets widens the counts
    steps = grouped if ties == "group" else _stable_steps(grouped)
    return SlicedSteps(steps, grouped, n_pos.astype(np.float64), n_neg.astype(np.float64), True, m, overall, pending)


# ---- permuted: the rows in one stable order, each slice a segment of it
def _permuted_steps(data: BinaryInput, codes: np.ndarray, m: int, ties: str) -> SlicedSteps:
    """The rows in decreasing score (equal scores in input order), then stably by slice code."""
    n = data.scores.shape[0]
    order, scores = stable_descending_sort(data.scores)
    c = codes[order]
    by_code = np.argsort(c.astype(np.uint16), kind="stable") if m <= 1 << 16 else np.argsort(c, kind="stable")
    order = order[by_code]
    scores, seg = scores[by_code], c[by_code]
    del c, by_code
    positive = data.positive[order]
    sizes = np.bincount(seg, minlength=m)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    if data.weight is None:
        cum_tp = np.cumsum(positive, dtype=np.int64)
        before = np.concatenate([[0], cum_tp])[starts]  # positives of the earlier slices
        cum_tp -= before[seg]
        cum_fp = np.arange(n, dtype=np.int64) - starts[seg] + 1 - cum_tp
    else:
        w = data.weight[order]
        wp = np.where(positive, w, 0.0)
        cum_tp = _segmented_cumsum(wp, starts, sizes)
        cum_fp = _segmented_cumsum(w - wp, starts, sizes)
    del order
    # a slice whose rows all weigh 0 has none left (validation set them aside): totals 0, no start
    filled = sizes > 0
    last = starts[filled] + sizes[filled] - 1
    n_pos = np.zeros(m)
    n_neg = np.zeros(m)
    n_pos[filled] = cum_tp[last]
    n_neg[filled] = cum_fp[last]
    new_slice = np.zeros(n, dtype=bool)
    new_slice[starts[filled]] = True

    def grouped() -> _Ragged:
        run_start = new_slice.copy()
        run_start[1:] |= scores[1:] != scores[:-1]
        run_starts = np.flatnonzero(run_start)
        ends = np.append(run_starts[1:] - 1, n - 1)
        idx = np.flatnonzero(np.logical_or.reduceat(positive, run_starts))
        rows = ends[idx]
        first = new_slice[run_starts[idx]]
        above = np.where(first, 0, run_starts[idx] - 1)
        return _take_steps(rows, above, first, cum_tp, cum_fp, seg, scores)

    def stable() -> _Ragged:
        rows = np.flatnonzero(positive)
        first = new_slice[rows]
        return _take_steps(rows, np.where(first, 0, rows - 1), first, cum_tp, cum_fp, seg, scores)

    group = grouped()
    if ties == "group":
        return SlicedSteps(group, group, n_pos, n_neg, data.weight is None, m)
    steps = stable()  # ROC-AUC and AUPRG group ties: `group` (the stable steps where those are the same)
    return SlicedSteps(steps, group, n_pos, n_neg, data.weight is None, m)


def _bucket_plan(r: _Ragged, m: int) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """The size buckets of :func:`_buckets`: the slice indices of each bucket (slices with about
    the same number of steps, within a factor :data:`_BUCKET`), each slice's number of steps and
    the index of its first."""
    lengths = np.bincount(r.slice_of, minlength=m)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    order = np.argsort(lengths, kind="stable")
    order = order[lengths[order] > 0]
    plan, lo = [], 0
    while lo < order.shape[0]:
        top = int(lengths[order[lo]])
        hi = lo + int(np.searchsorted(lengths[order[lo:]], top * _BUCKET, side="right"))
        plan.append(order[lo:hi])
        lo = hi
    return plan, lengths, starts


def _bucket_parts(r: _Ragged, m: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The buckets of :func:`_bucket_plan` each in up to eight parts by its share of the steps
    (parts small enough to share out between two threads, :func:`precall._core.backend.share_out`):
    ``(slice indices, each slice's number of steps, the index of its first)``."""
    plan, lengths, starts = _bucket_plan(r, m)
    return [(part, lengths, starts) for sel in plan
            for part in np.array_split(sel, max(1, min(sel.shape[0], 8 * int(lengths[sel].sum()) // r.tp.shape[0])))]


def _padded(r: _Ragged, sel: np.ndarray, lengths: np.ndarray, starts: np.ndarray) -> Steps:
    """Slices ``sel`` of ragged steps as one padded batch (each slice's last step again, no
    positive gained); the compiled ``pad_steps`` fills it when the kernel choice takes it."""
    width = int(lengths[sel].max())
    fast = backend.compiled(r.slice_of.shape[0])
    if fast is not None:  # counts widened to int64 (the compiled route's records are int32)
        tp, fp, dtp, fp_prev = (np.empty((sel.shape[0], width), dtype=np.int64 if a.dtype.kind in "iu" else a.dtype)
                                for a in (r.tp, r.fp, r.dtp, r.fp_prev))
        fast.pad_steps(r.tp, r.fp, r.dtp, r.fp_prev, starts, lengths, sel, tp, fp, dtp, fp_prev)
    else:
        j = np.arange(width)
        inside = j < lengths[sel, None]
        idx = starts[sel, None] + np.minimum(j, lengths[sel, None] - 1)
        dtp = np.where(inside, r.dtp[idx], np.zeros(1, dtype=r.dtp.dtype)[0])
        fp = r.fp[idx]
        fp_prev = np.where(inside, r.fp_prev[idx], fp)
        tp = r.tp[idx]
    return Steps(tp, fp, dtp, fp_prev, None, None, None, False, False, lengths[sel])


def _buckets(r: _Ragged, m: int):
    """Ragged :class:`Steps` batches of slices with about the same number of steps (within a factor
    :data:`_BUCKET`), padded with empty runs (each slice's last step again, no positive gained);
    yields (slice indices, the index of each slice's first step, Steps)."""
    plan, lengths, starts = _bucket_plan(r, m)
    for sel in plan:
        yield sel, starts[sel], _padded(r, sel, lengths, starts)


def _batch(template: Steps, n_pos: np.ndarray, n_neg: np.ndarray, exact: bool) -> Steps:
    return Steps(template.tp, template.fp, template.dtp, template.fp_prev, n_pos, n_neg, None, exact, False,
                 template.lengths)


def _apply_policy(values: np.ndarray, undefined: np.ndarray, what: str, reason: str, default: float,
                  policy: Any, names: tuple[str, ...]) -> np.ndarray:
    """``values`` with the undefined slices set by the policy (one warning for all of them)."""
    return _apply_policies([values], undefined, what, reason, default, policy, names)[0]


def _apply_policies(arrays: list[np.ndarray], undefined: np.ndarray, what: str, reason: str, default: float,
                    policy: Any, names: tuple[str, ...]) -> list[np.ndarray]:
    """Each of ``arrays`` with the undefined slices set by the policy, one warning for all."""
    if not undefined.any():
        return arrays
    k = int(undefined.sum())
    which = ", ".join(repr(visible(names[i])) for i in np.flatnonzero(undefined)[:3]) + (", ..." if k > 3 else "")
    if policy == "warn":
        warnings.warn(f"{what} is undefined in {k} slice(s) ({which}): {reason}", UndefinedMetricWarning,
                      stacklevel=5)
        fill = default
    elif policy == "nan":
        fill = float("nan")
    elif policy == "raise":
        raise ValueError(f"{what} is undefined in {k} slice(s) ({which}): {raised_text(reason)}")
    else:
        fill = float(policy)
    out = [a.astype(np.float64, copy=True) for a in arrays]
    for a in out:
        a[undefined] = fill
    return out


# ---------------------------------------------------------------------------
# results
def _check_min_support(min_support: Any) -> int:
    return check_number(min_support, "min_support", low=0, integer=True,
                        hint="slices with fewer rows are reported but not ranked")


def _check_k(k: Any) -> int:
    return check_number(k, "k", low=1, integer=True, hint="how many worst and best slices to print")


@dataclass(frozen=True)
class _Sliced:
    """What every sliced result shares: the slices, their support and the ranking."""

    names: tuple[str, ...]
    keys: tuple[tuple[Any, ...], ...]
    columns: tuple[str, ...]
    n_samples: np.ndarray
    n_pos: np.ndarray
    n_neg: np.ndarray
    min_support: int

    @property
    def slices(self) -> tuple[str, ...]:
        """The slice names, in the order of the sorted slice values."""
        return self.names

    def __len__(self) -> int:
        return len(self.names)

    @property
    def prevalence(self) -> np.ndarray:
        return _prevalence(self.n_pos, self.n_neg)

    def _ranking_values(self) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def _defined(self) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    @functools.cached_property
    def ranked(self) -> np.ndarray:
        """Indices of the slices that are ranked (defined, at least ``min_support`` rows), worst first
        (ties in slice order); sorted once (read-only)."""
        ok = self._defined() & (self.n_samples >= self.min_support)
        idx = np.flatnonzero(ok)
        out = idx[np.argsort(self._ranking_values()[idx], kind="stable")]
        out.setflags(write=False)
        return out

    @functools.cached_property
    def _lookup(self) -> tuple[dict[str, int], dict[tuple[Any, ...], int]]:
        """Each name's and each key tuple's slice index (built once: a lookup is O(1))."""
        keys: dict[tuple[Any, ...], int] = {}
        for i, key in enumerate(self.keys):
            try:
                keys.setdefault(key, i)
            except TypeError:  # an unhashable slice value: found by its name only
                pass
        return {name: i for i, name in enumerate(self.names)}, keys  # names are distinct (slice_names)

    def index(self, name: Any) -> int:
        """The index of a slice by its name or its key tuple."""
        names, keys = self._lookup
        try:
            if name in names:
                return names[name]
            key = name if isinstance(name, tuple) else (name,)
            if key in keys:
                return keys[key]
        except TypeError:  # unhashable: no slice has it
            pass
        raise KeyError(f"no slice {visible(name)!r:.80}; the slices are {', '.join(map(repr, self.names[:5]))}"
                       + (", ..." if len(self.names) > 5 else ""))

    # ---- the table: the overall row (row 0), then one row per slice (row i + 1: slice i)
    def _table(self, start: int = 0, stop: int | None = None) -> tuple[list[str], list[list[Any]]]:
        """The header and the rows ``start`` to ``stop`` of the table (default: every row)."""
        raise NotImplementedError  # pragma: no cover - overridden

    def _span(self, start: int, stop: int | None) -> range:
        """The slices of the table's rows ``start`` to ``stop`` (row 0 is the overall row)."""
        n = len(self.names)
        return range(max(start - 1, 0), n if stop is None else min(max(stop - 1, 0), n))

    def _slice_dicts(self, start: int, stop: int) -> list[dict[str, Any]]:
        """:func:`slice_dicts` of the slices ``start`` to ``stop``."""
        header, rows = self._table(start + 1, stop + 1)
        return slice_dicts(header, rows, self.keys[start:stop], self.columns)

    def to_dict(self, lazy: bool = False) -> dict[str, Any]:
        """Every slice, JSON-ready (NaN as None).

        Parameters
        ----------
        lazy : bool
            ``slices`` and ``ranked_worst_first`` as :class:`LazyRows`, made :data:`BLOCK` at a time
            as they are iterated (what :meth:`to_json` writes: never a dict of every slice at once).

        Returns
        -------
        dict
            ``{"by", "min_support", "overall", "slices", "ranked_worst_first"}``: ``by`` the slice
            columns; ``overall`` the row of all rows; ``slices`` one row per slice (the order of
            ``names``), each ``{"slice": name, "by_values": {column: value, ...}, <numbers>}``, the
            slice's value in each ``by`` column (:func:`by_value`: strings, numbers and booleans as
            they are, dates ISO texts, None for missing; keyed by :func:`by_headers` of the columns,
            which are the columns' names unless two are equal).

        Examples
        --------
        >>> import precall
        >>> r = precall.evaluate([1, 0, 1, 0, 0, 1], [0.9, 0.8, 0.7, 0.6, 0.5, 0.4],
        ...                      by={"week": [1, 1, 2, 2, None, None]})
        >>> [(row["slice"], row["by_values"], row["n"]) for row in r.to_dict()["slices"]]
        [('1', {'week': 1}, 2), ('2', {'week': 2}, 2), ('(missing)', {'week': None}, 2)]
        """
        header, rows = self._table(0, 1)
        ranked, names = self.ranked, self.names
        slices = LazyRows(len(names), self._slice_dicts)
        order = LazyRows(len(ranked), lambda start, stop: [names[i] for i in ranked[start:stop]])
        return {"by": list(self.columns), "min_support": self.min_support,
                "overall": dict(zip(header, map(_json_value, rows[0]))),
                "slices": slices if lazy else list(slices),
                "ranked_worst_first": order if lazy else list(order)}

    def to_json(self, path: Any = None, **kwargs: Any) -> str | None:
        """:meth:`to_dict` as JSON (NaN as null), ``json.dumps(self.to_dict(), **kwargs)`` to the byte;
        written to ``path`` or returned.

        The slices are made and encoded :data:`BLOCK` at a time (:func:`json_chunks`): written to
        ``path``, the memory is a block's, not a dict per slice and the whole text.

        Examples
        --------
        >>> import json, precall
        >>> r = precall.evaluate([1, 0, 0, 1], [0.9, 0.8, 0.7, 0.6], by={"g": ["a", "a", "b", "b"]})
        >>> json.loads(r.to_json())["ranked_worst_first"]
        ['b', 'a']
        """
        chunks = json_chunks(self.to_dict(lazy=True), **kwargs)
        if path is None:
            return "".join(chunks)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.writelines(chunks)
        return None

    def csv_rows(self, extra: Sequence[str] = (), start: int = 0,
                 stop: int | None = None) -> tuple[list[str], list[list[str]]]:
        """The header and the cells (texts) of :meth:`to_csv`: the ``overall`` row, then one row per slice.

        The columns: one per ``by`` column (:func:`by_headers`: the column's name, or ``"by NAME"``
        where the name is taken by another column, e.g. a ``by`` column named ``n``), ``slice`` (the
        slice's name; ``overall`` for all rows), then the numbers.  A slice's value in a ``by``
        column is written as :func:`by_value` gives it (dates as ISO texts), a missing value and
        the ``overall`` row's ``by`` cells empty; NaN numbers empty.  ``extra``: the headers of
        columns the caller adds after these (the ``by`` headers avoid them too).  ``start``,
        ``stop``: the rows ``start`` to ``stop`` only (row 0 is the ``overall`` row, row i + 1 the
        slice i), a block of :meth:`to_csv`.
        """
        header, rows = self._table(start, stop)
        span = self._span(start, stop)
        overall = rows.pop(0) if start == 0 else None
        return _csv_table(header, rows, self.keys[span.start:span.stop], self.columns, overall=overall,
                          extra=extra)

    def to_csv(self, path: Any = None) -> str | None:
        """One CSV row per slice after the ``overall`` row (:meth:`csv_rows`); written to ``path`` or returned.

        ``pandas.read_csv(path, skiprows=[1], index_col=[...the by headers])`` reads the slices back
        as :meth:`to_frame` gives them (dates as texts unless ``parse_dates``; a column of
        integers with a missing value as floats).

        Examples
        --------
        >>> import precall
        >>> r = precall.evaluate([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.6], by={"n": ["a", "a", "b", "b"]})
        >>> print(r.to_csv().splitlines()[0][:30])
        by n,slice,n,n_pos,prevalence,
        >>> [line.split(",")[:3] for line in r.to_csv().splitlines()[1:]]
        [['', 'overall', '4'], ['a', 'a', '2'], ['b', 'b', '2']]
        """
        if path is None:
            buf = io.StringIO()
            self._write_csv(buf)
            return buf.getvalue()
        with open(path, "w", encoding="utf-8", newline="") as f:
            self._write_csv(f)
        return None

    def _write_csv(self, f: Any) -> None:
        """The CSV of :meth:`to_csv` written to the text stream ``f``, :data:`BLOCK` rows at a time."""
        writer = csv.writer(f, lineterminator="\n")
        for start in range(0, len(self.names) + 1, BLOCK):
            header, rows = self.csv_rows(start=start, stop=start + BLOCK)
            if start == 0:
                writer.writerow(header)
            writer.writerows(rows)

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per slice, indexed by the slices' values (the ``pandas`` extra).

        As fairlearn's ``MetricFrame.by_group``: the index holds each slice's value in each ``by``
        column, a ``pandas.Index`` for one column and a ``pandas.MultiIndex`` with one level per
        column for several, named after the columns (:func:`by_headers`: ``"by NAME"`` where a
        column's name is a column of the frame, e.g. ``n`` or ``slice``, or another ``by``
        column's).  The values are the original ones (integers, strings, booleans, dates: each
        level's dtype as pandas infers it from them); a missing value is NaN (NaT in a level of
        datetimes), as ``groupby(..., dropna=False)`` shows it, and a level of integers or booleans
        with a missing value holds Python objects so that its integers stay integers.  The rows
        are in the order of ``names`` (the sorted values, missing last); the ``slice`` column
        keeps each slice's name.

        The row of all rows is not a row of the frame (no value of the ``by`` columns is its
        own): it is ``frame.attrs["overall"]``, a dict of the same columns (``slice`` is
        ``"overall"``), as fairlearn keeps ``MetricFrame.overall`` apart;
        ``pandas.Series(frame.attrs["overall"])`` is that row.

        Examples
        --------
        >>> import pandas as pd, precall
        >>> by = pd.DataFrame({"country": ["FR"] * 4 + ["DE"] * 4, "week": [1, 1, 2, 2] * 2})
        >>> r = precall.evaluate([1, 0, 1, 0, 0, 1, 1, 0], [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2], by=by)
        >>> frame = r.to_frame()
        >>> list(frame.index.names), frame.index.tolist()
        (['country', 'week'], [('DE', 1), ('DE', 2), ('FR', 1), ('FR', 2)])
        >>> frame.loc[("FR", 2), "slice"], frame["n"].tolist()
        ('country=FR, week=2', [2, 2, 2, 2])
        >>> frame.attrs["overall"]["slice"], frame.attrs["overall"]["n"]
        ('overall', 8)
        """
        header, rows = self._table()
        frame = slices_frame(header, rows[1:], self.keys, self.columns)
        frame.attrs["overall"] = dict(zip(header, rows[0]))
        return frame

    def to_text(self, k: int = 5, width: int | None = 80) -> str:
        """The overall row, the ``k`` worst and ``k`` best ranked slices, and a count of the rest
        (slices not ranked are counted apart), every line within ``width`` terminal columns.

        Parameters
        ----------
        k : int
            How many worst and best ranked slices to print.
        width : int or None
            The widest line (at least 60).  A slice name too long to fit beside the numbers is
            shortened to its start and end around ``...`` (distinct from every other name shown),
            its full name in a legend below the table; a table still wider is split into blocks of
            columns (each repeating the names).  None: every name whole, the table on one block.
            The numbers are never cut: four decimals (at most six significant digits past 1).
        """
        k = _check_k(k)
        if width is not None:
            width = check_number(width, "width", low=60, integer=True, hint="the widest line; None: no limit")
        header, rows = self._table()
        shown = self._text_columns(header)
        pos = [header.index(h) for h in shown]
        ranked = self.ranked.tolist()
        picked = ranked if len(ranked) <= 2 * k else ranked[:k] + [-1] + ranked[-k:]
        numbers = [[_cell(row[p], header[p] in _COUNTS) for p in pos] for row in
                   [rows[0], *(rows[i + 1] for i in picked if i >= 0)]]
        names = [visible(self.names[i]) for i in picked if i >= 0]
        rest = sum(max(columns(h), *(columns(r[j]) for r in numbers)) + 2 for j, h in enumerate(shown))
        limit = name_limit(max(map(columns, [OVERALL, *names])), rest, width)
        short = iter(shortened(names, limit, taken=[OVERALL]))
        body: list[Any] = [[OVERALL, *numbers[0]]]
        made = iter(numbers[1:])
        renamed = []
        for i in picked:
            if i < 0:
                body.append(f"...  ({len(ranked) - 2 * k} more ranked slices)")
                continue
            name = next(short)
            body.append([name, *next(made)])
            if name != visible(self.names[i]):
                renamed.append((name, repr(self.names[i])))
        unranked = len(self.names) - len(ranked)
        title = f"{len(self.names)} slices by {', '.join(map(visible, self.columns))}; worst first"
        notes = [title]
        if unranked:
            notes.append(f"{unranked} slice(s) not ranked (undefined, or fewer than min_support="
                         f"{self.min_support} rows)")
        lines = [part for note in notes for part in (wrap(note, width=width, hang=0) if width else [note])]
        lines += table_lines(["slice", *shown], body, width=width)
        if renamed:
            lines += ["", "slices:", *legend(renamed, width=width or 80, wide=width is None)]
        return "\n".join(lines)

    def _text_columns(self, header: list[str]) -> list[str]:  # pragma: no cover - overridden
        raise NotImplementedError

    def __str__(self) -> str:
        return self.to_text()


class LazyRows:
    """``n`` rows made :data:`BLOCK` at a time as they are iterated: a list too long to hold at once
    (a dict per slice) whose length is known before it is written.

    Parameters
    ----------
    n : int
        How many rows.
    make : callable
        ``make(start, stop)``: the list of the rows ``start`` to ``stop``.
    """

    def __init__(self, n: int, make: Callable[[int, int], list[Any]]) -> None:
        self.n, self.make = n, make

    def __len__(self) -> int:
        return self.n

    def blocks(self) -> Iterator[list[Any]]:
        """The rows, a list of :data:`BLOCK` (the last one fewer) at a time."""
        for start in range(0, self.n, BLOCK):
            yield self.make(start, min(start + BLOCK, self.n))

    def __iter__(self) -> Iterator[Any]:
        for block in self.blocks():
            yield from block


def json_chunks(doc: dict[str, Any], **kwargs: Any) -> Iterator[str]:
    """``json.dumps(doc, **kwargs)`` in pieces, to the byte: each :class:`LazyRows` value of ``doc``
    a block at a time (a block one ``json.dumps`` of its rows, its lines indented to their place).

    Examples
    --------
    >>> doc = {"n": 3, "rows": LazyRows(3, lambda start, stop: list(range(start, stop)))}
    >>> "".join(json_chunks(doc, indent=1)) == json.dumps({"n": 3, "rows": [0, 1, 2]}, indent=1)
    True
    """
    cls = kwargs.pop("cls", None) or json.JSONEncoder
    encoder = cls(**kwargs)
    indent = " " * encoder.indent if isinstance(encoder.indent, int) else encoder.indent

    def newline(level: int) -> str:
        return "" if indent is None else "\n" + indent * level

    def at_level_1(text: str) -> str:  # a value encoded alone, its lines moved to a value of doc's place
        return text.replace("\n", newline(1))  # JSON strings hold no line feed: the text's are its layout

    items = sorted(doc.items()) if encoder.sort_keys else doc.items()
    for n, (key, value) in enumerate(items):
        yield ("{" if n == 0 else encoder.item_separator) + newline(1) + encoder.encode(key) + encoder.key_separator
        if not isinstance(value, LazyRows) or not len(value):
            yield at_level_1(encoder.encode([] if isinstance(value, LazyRows) else value))
            continue
        for b, block in enumerate(value.blocks()):  # "[" newline(2) row ... newline(1) "]", the brackets left out
            text = at_level_1(encoder.encode(block))
            yield ("[" if b == 0 else encoder.item_separator) + text[1:len(text) - len(newline(1)) - 1]
        yield newline(1) + "]"
    yield newline(0) + "}" if doc else "{}"


def _prevalence(n_pos: np.ndarray, n_neg: np.ndarray) -> np.ndarray:
    """The prevalence of each slice of ``n_pos`` positives and ``n_neg`` negatives; NaN for an empty one."""
    total = n_pos + n_neg
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, n_pos / np.where(total > 0, total, 1.0), np.nan)


def _json_value(v: Any) -> Any:
    if type(v) is float:  # the common case first
        return None if v != v else v
    if isinstance(v, (float, np.floating)):
        v = float(v)
        return None if math.isnan(v) else v
    if isinstance(v, np.integer):
        return int(v)
    return v


def by_value(value: Any) -> Any:
    """A slice's value in one ``by`` column as JSON and CSV give it: None for missing; strings,
    booleans, integers and floats as they are; a date, datetime or time as its ISO text
    (``isoformat``); any other value as its text (what the slice's name shows).

    Examples
    --------
    >>> import datetime
    >>> [by_value(v) for v in (3, "FR", None, True, datetime.date(2024, 2, 29))]
    [3, 'FR', None, True, '2024-02-29']
    """
    if value is None or isinstance(value, (str, int, float)):  # bool is an int
        return value
    if isinstance(value, np.datetime64):  # a key finer than Python's datetime: its name, ISO
        return _text(value).replace(" ", "T", 1)
    if isinstance(value, np.timedelta64):  # a key finer than Python's timedelta: its name
        return _text(value)
    if isinstance(value, np.generic):
        return by_value(value.item())
    if isinstance(value, (datetime.date, datetime.time)):  # datetime.datetime is a date
        return value.isoformat()
    return str(value)


def by_headers(columns: Sequence[str], taken: Sequence[str] = ()) -> tuple[str, ...]:
    """The header of each ``by`` column beside the columns ``taken`` (the numbers' headers): the
    column's name, or where that is taken or an earlier ``by`` column's, ``"by NAME"`` (then
    ``"by NAME #2"``, ...).  One rule for the CSV headers, the frame's index names and the keys
    of ``by_values``.

    Examples
    --------
    >>> by_headers(["country", "n", "slice"], ["slice", "n", "AP step"])
    ('country', 'by n', 'by slice')
    >>> by_headers(["x", "x"])
    ('x', 'by x')
    """
    used = set(taken)
    out = []
    for name in columns:
        header, k = name, 1
        while header in used:
            k += 1
            header = f"by {name}" if k == 2 else f"by {name} #{k - 1}"
        used.add(header)
        out.append(header)
    return tuple(out)


def by_values(key: tuple[Any, ...], heads: Sequence[str]) -> dict[str, Any]:
    """A slice's ``by_values``: its :func:`by_value` in each ``by`` column, keyed by ``heads``
    (:func:`by_headers` of the columns)."""
    return {h: by_value(v) for h, v in zip(heads, key)}


def slice_dicts(header: list[str], rows: list[list[Any]], keys: Sequence[tuple[Any, ...]],
                columns: Sequence[str]) -> list[dict[str, Any]]:
    """One JSON-ready dict per slice row (``header[0]`` the name): the name, ``by_values`` (the
    slice's :func:`by_value` in each column, keyed by :func:`by_headers`), then the numbers."""
    heads = by_headers(columns)
    out = []
    for row, key in zip(rows, keys):
        d = {header[0]: _json_value(row[0]), "by_values": by_values(key, heads)}
        d.update(zip(header[1:], map(_json_value, row[1:])))
        out.append(d)
    return out


def _csv_cell(v: Any) -> str:
    v = _json_value(v)
    return "" if v is None else str(v)


def _csv_table(header: list[str], rows: list[list[Any]], keys: Sequence[tuple[Any, ...]], columns: Sequence[str],
               overall: list[Any] | None = None, extra: Sequence[str] = ()) -> tuple[list[str], list[list[str]]]:
    """The CSV header and cells of slice rows (and of the ``overall`` row first, its ``by`` cells
    empty): a column per ``by`` column (:func:`by_headers` beside ``header`` and ``extra``), then
    ``header``."""
    heads = list(by_headers(columns, [*header, *extra]))
    cells = [] if overall is None else [[""] * len(heads) + [_csv_cell(v) for v in overall]]
    for row, key in zip(rows, keys):
        cells.append([_csv_cell(by_value(v)) for v in key] + [_csv_cell(v) for v in row])
    return heads + list(header), cells


def slices_csv_text(header: list[str], rows: list[list[Any]], keys: Sequence[tuple[Any, ...]],
                    columns: Sequence[str]) -> str:
    """The CSV text of slice rows (``header[0]`` the name), as :meth:`SlicedEvaluation.to_csv` writes
    its slices: a column per ``by`` column (:func:`by_headers`) with the slice's :func:`by_value`,
    then ``header``; NaN and missing values empty."""
    heads, cells = _csv_table(header, rows, keys, columns)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(heads)
    writer.writerows(cells)
    return buf.getvalue()


def slices_frame(header: list[str], rows: list[list[Any]], keys: Sequence[tuple[Any, ...]],
                 columns: Sequence[str]) -> Any:
    """The pandas DataFrame of slice rows indexed by their values (see ``_Sliced.to_frame``)."""
    try:
        import pandas as pd  # noqa: PLC0415
    except ImportError as e:  # pragma: no cover - pandas is a test dependency
        raise ImportError("to_frame() needs pandas: pip install 'precall[pandas]' (or use to_dict / "
                          "to_csv)") from e
    return pd.DataFrame(rows, columns=header, index=_by_index(pd, keys, by_headers(columns, header)))


def _by_index(pd: Any, keys: Sequence[tuple[Any, ...]], names: Sequence[str]) -> Any:
    """The slices' values as a pandas Index (one column) or MultiIndex: each level the column's
    distinct values (sorted as the slices are: their order, or by type and text), a missing value
    code -1 (NaN); a level of integers or booleans with a missing value made of Python objects."""
    levels, codes = [], []
    for j in range(len(names)):
        column = [key[j] for key in keys]
        try:
            distinct = list(dict.fromkeys(v for v in column if v is not None))
        except TypeError:  # unhashable values (lists, ...): their texts
            column = [None if v is None else str(v) for v in column]
            distinct = list(dict.fromkeys(v for v in column if v is not None))
        try:
            distinct.sort()
        except TypeError:  # values of several types: as slice_codes orders them
            distinct.sort(key=_type_text)
        at = {v: i for i, v in enumerate(distinct)}
        code = [-1 if v is None else at[v] for v in column]
        level = pd.Index(distinct, dtype=None if distinct else object)
        if level.dtype.kind in "biu" and -1 in code:
            level = level.astype(object)
        levels.append(level)
        codes.append(code)
    index = pd.MultiIndex(levels=levels, codes=codes, names=list(names))
    return index if len(names) > 1 else index.get_level_values(0)


_COUNTS = ("n", "n_pos")
"""The columns of counts: whole numbers print as integers (a weighted count keeps its decimals)."""


def _cell(v: Any, count: bool = False) -> str:
    if count and isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return "nan" if math.isnan(v) else (f"{v:.4f}" if abs(v) <= 1 else f"{v:.6g}")
    return str(v)


@dataclass(frozen=True)
class SlicedValues(_Sliced):
    """One metric per slice (``precall.average_precision(..., by=...)`` / ``roc_auc(..., by=...)``).

    Attributes
    ----------
    values : ndarray of shape (n_slices,)
        The metric of each slice, the undefined policy applied.
    defined : ndarray of bool
        Where it is defined.
    overall : float
        The metric of all rows.
    metric : Metric
        What was computed.
    """

    values: np.ndarray = field(default=None)  # type: ignore[assignment]
    defined: np.ndarray = field(default=None)  # type: ignore[assignment]
    overall: float = float("nan")
    metric: Metric = field(default=None)  # type: ignore[assignment]

    def _ranking_values(self) -> np.ndarray:
        return self.values

    def _defined(self) -> np.ndarray:
        return self.defined

    def __getitem__(self, name: Any) -> float:
        return float(self.values[self.index(name)])

    def _table(self, start: int = 0, stop: int | None = None) -> tuple[list[str], list[list[Any]]]:
        key = self.metric.key
        header = ["slice", "n", "n_pos", "prevalence", key]
        total_pos, total_neg = float(self.n_pos.sum()), float(self.n_neg.sum())
        overall = ["overall", int(self.n_samples.sum()), total_pos, total_pos / (total_pos + total_neg)
                   if total_pos + total_neg > 0 else float("nan"), float(self.overall)]
        rows = [overall] if start == 0 else []
        span = self._span(start, stop)
        prev = _prevalence(self.n_pos[span.start:span.stop], self.n_neg[span.start:span.stop])
        for i, p in zip(span, prev):
            rows.append([self.names[i], int(self.n_samples[i]), float(self.n_pos[i]), float(p), float(self.values[i])])
        return header, rows

    def _text_columns(self, header: list[str]) -> list[str]:
        return header[1:]


@dataclass(frozen=True)
class SlicedEvaluation(_Sliced):
    """Every number of :class:`~precall.Evaluation` per slice, and the overall evaluation.

    Attributes
    ----------
    overall : Evaluation
        All rows together (``precall.evaluate`` without ``by``).
    average_precision, min_average_precision, normalized_average_precision : dict of str to ndarray
        By convention, one value per slice.
    roc_auc, auprg : ndarray
    best_f1, best_f1_threshold, best_f1_precision, best_f1_recall : ndarray
        NaN for a slice without positives.
    rank_by : str
        The convention the ranking (worst first) uses.
    """

    overall: Evaluation = field(default=None)  # type: ignore[assignment]
    average_precision: dict[str, np.ndarray] = field(default_factory=dict)
    min_average_precision: dict[str, np.ndarray] = field(default_factory=dict)
    normalized_average_precision: dict[str, np.ndarray] = field(default_factory=dict)
    roc_auc: np.ndarray = field(default=None)  # type: ignore[assignment]
    auprg: np.ndarray = field(default=None)  # type: ignore[assignment]
    best_f1: np.ndarray = field(default=None)  # type: ignore[assignment]
    best_f1_threshold: np.ndarray = field(default=None)  # type: ignore[assignment]
    best_f1_precision: np.ndarray = field(default=None)  # type: ignore[assignment]
    best_f1_recall: np.ndarray = field(default=None)  # type: ignore[assignment]
    ties: str = "group"
    recall_grid: str = "reference"
    rank_by: str = "step"

    def _ranking_values(self) -> np.ndarray:
        return self.average_precision[self.rank_by]

    def _defined(self) -> np.ndarray:
        return self.n_pos > 0

    def __getitem__(self, name: Any) -> Evaluation:
        """The :class:`~precall.Evaluation` of one slice (by name or key)."""
        i = self.index(name)
        f1 = None if math.isnan(self.best_f1[i]) else F1Point(
            float(self.best_f1_threshold[i]), float(self.best_f1[i]), float(self.best_f1_precision[i]),
            float(self.best_f1_recall[i]))
        total = float(self.n_pos[i] + self.n_neg[i])
        return Evaluation(
            average_precision={m: float(v[i]) for m, v in self.average_precision.items()},
            roc_auc=float(self.roc_auc[i]), prevalence=float(self.n_pos[i]) / total if total > 0 else float("nan"),
            n_pos=float(self.n_pos[i]), n_neg=float(self.n_neg[i]), n_samples=int(self.n_samples[i]), best_f1=f1,
            ties=self.ties, recall_grid=self.recall_grid,
            min_average_precision={m: float(v[i]) for m, v in self.min_average_precision.items()},
            normalized_average_precision={m: float(v[i]) for m, v in self.normalized_average_precision.items()},
            auprg=float(self.auprg[i]),
        )

    def _table(self, start: int = 0, stop: int | None = None) -> tuple[list[str], list[list[Any]]]:
        header = (["slice", "n", "n_pos", "prevalence"] + [f"AP {m}" for m in AP_METHODS] + ["ROC-AUC", "AUPRG"]
                  + [f"min AP {m}" for m in AP_METHODS] + ["best F1", "best F1 threshold"])
        o = self.overall
        b = o.best_f1
        overall = (["overall", o.n_samples, o.n_pos, o.prevalence] + [o.average_precision[m] for m in AP_METHODS]
                   + [o.roc_auc, o.auprg] + [o.min_average_precision[m] for m in AP_METHODS]
                   + [b.f1 if b else float("nan"), b.threshold if b else float("nan")])
        rows = [overall] if start == 0 else []
        span = self._span(start, stop)
        at = slice(span.start, span.stop)
        floats = [self.n_pos[at], _prevalence(self.n_pos[at], self.n_neg[at]),
                  *(self.average_precision[m][at] for m in AP_METHODS), self.roc_auc[at], self.auprg[at],
                  *(self.min_average_precision[m][at] for m in AP_METHODS), self.best_f1[at],
                  self.best_f1_threshold[at]]
        columns = [list(self.names[at]), np.asarray(self.n_samples[at]).astype(np.int64).tolist(),
                   *(np.asarray(c, dtype=np.float64).tolist() for c in floats)]  # column by column: Python numbers
        rows.extend(map(list, zip(*columns)))
        return header, rows

    def _text_columns(self, header: list[str]) -> list[str]:
        return ["n", "prevalence", f"AP {self.rank_by}", "min AP step" if self.rank_by == "step" else
                f"min AP {self.rank_by}", "ROC-AUC", "best F1"]


@dataclass(frozen=True)
class SlicedTables(_Sliced):
    """The :class:`~precall.ThresholdTable` of every slice (``precall.threshold_table(..., by=...)``).

    ``tables[name]`` (or ``result[name]``) is the table of the slice's rows, equal to
    ``precall.threshold_table`` of those rows; ``overall`` is the table of all rows.  The
    summary (``to_text`` / ``to_dict`` / ``to_csv`` / ``to_frame``) gives each slice's rows,
    support, prevalence, step AP and ROC-AUC, the slices ranked worst first by the step AP.

    Attributes
    ----------
    tables : dict of str to ThresholdTable
        By slice name, in the order of ``slices``.
    overall : ThresholdTable
    """

    tables: dict[str, Any] = field(default_factory=dict)
    overall: Any = None
    summary: tuple[np.ndarray, np.ndarray, float, float] | None = None
    """Each slice's step AP and ROC-AUC, then the overall's, under the undefined policy (table_slices)."""

    def __getitem__(self, name: Any) -> Any:
        return self.tables[self.names[self.index(name)]]

    def items(self) -> Any:
        """``(name, table)`` pairs, in slice order."""
        return self.tables.items()

    def _values(self) -> tuple[np.ndarray, np.ndarray]:
        if self.summary is not None:
            return self.summary[0], self.summary[1]
        return _table_numbers(list(self.tables.values()))

    def _ranking_values(self) -> np.ndarray:
        return self._values()[0]

    def _defined(self) -> np.ndarray:
        return self.n_pos > 0

    def _table(self, start: int = 0, stop: int | None = None) -> tuple[list[str], list[list[Any]]]:
        header = ["slice", "n", "n_pos", "prevalence", "rows", "AP step", "ROC-AUC"]
        o = self.overall
        numbers = list(self.summary[2:]) if self.summary is not None else \
            [float(v[0]) for v in _table_numbers([o])]
        total = float(o.n_pos + o.n_neg)
        overall = ["overall", int(self.n_samples.sum()), float(o.n_pos), float(o.n_pos) / total if total else
                   float("nan"), len(o.thresholds)] + numbers
        rows = [overall] if start == 0 else []
        ap_step, auc = self._values()
        span = self._span(start, stop)
        prev = _prevalence(self.n_pos[span.start:span.stop], self.n_neg[span.start:span.stop])
        for i, p in zip(span, prev):
            name = self.names[i]
            rows.append([name, int(self.n_samples[i]), float(self.n_pos[i]), float(p),
                         len(self.tables[name].thresholds), float(ap_step[i]), float(auc[i])])
        return header, rows

    def _text_columns(self, header: list[str]) -> list[str]:
        return header[1:]


def _table_numbers(tables: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """The step AP and ROC-AUC of each count table, NaN where undefined."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        ap_step = np.array([t.average_precision(on_undefined="nan") if t.n_pos > 0 else np.nan for t in tables])
        auc = np.array([t.roc_auc(on_undefined="nan") for t in tables])
    return ap_step, auc


def table_slices(data: BinaryInput, codes: SliceCodes, kept_codes: np.ndarray, n_samples: np.ndarray, *,
                 ties: str, min_support: Any, on_undefined: Any = "warn") -> SlicedTables:
    """The count table of every slice: the rows grouped by slice (one stable sort of the codes),
    each slice's table by :func:`precall.table.table_of` on its rows (the same function as
    ``threshold_table`` of those rows, so each table is equal to it); the summary's step AP and
    ROC-AUC of each slice (and of all rows) under ``on_undefined``, as ``evaluate(by=)`` gives them."""
    min_support = _check_min_support(min_support)
    m = codes.m
    order = np.argsort(kept_codes, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(kept_codes, minlength=m))])
    tables = {}
    for i, name in enumerate(codes.names):
        rows = order[bounds[i]:bounds[i + 1]]
        part = BinaryInput(data.scores[rows], data.positive[rows], None if data.weight is None else
                           data.weight[rows], data.pos_label, int(n_samples[i]))
        tables[name] = table_of(part, ties)
    return sliced_tables(codes, tables, table_of(data, ties), n_samples, min_support, on_undefined)


def sliced_tables(codes: SliceCodes, tables: dict[str, Any], overall: Any, n_samples: np.ndarray, min_support: int,
                  on_undefined: Any) -> SlicedTables:
    """The :class:`SlicedTables` of each slice's table (in the order of ``codes``) and of all rows':
    the summary's step AP and ROC-AUC under ``on_undefined`` (one warning for all such slices and
    the overall row), whatever route counted the tables."""
    n_pos = np.array([float(t.n_pos) for t in tables.values()] + [float(overall.n_pos)])
    n_neg = np.array([float(t.n_neg) for t in tables.values()] + [float(overall.n_neg)])
    ap_step, auc = _table_numbers([*tables.values(), overall])
    names = (*codes.names, OVERALL)
    ap_step = _apply_policy(ap_step, n_pos == 0, "average precision", NO_POSITIVES, 0.0, on_undefined, names)
    auc = _apply_policy(auc, (n_pos == 0) | (n_neg == 0), "ROC AUC", ONE_CLASS_ROC, float("nan"), on_undefined,
                        names)
    return SlicedTables(names=codes.names, keys=codes.keys, columns=codes.columns, n_samples=n_samples,
                        n_pos=n_pos[:-1], n_neg=n_neg[:-1], min_support=min_support, tables=tables, overall=overall,
                        summary=(ap_step[:-1], auc[:-1], float(ap_step[-1]), float(auc[-1])))


@dataclass(frozen=True)
class SlicedMultiEvaluation(_Sliced):
    """Multi-class or multi-label input by slice (``precall.evaluate(y, S, by=...)`` of 2-D scores).

    Each class is evaluated as a binary problem through the sliced binary path (one sort per
    class for all slices); per slice the macro and weighted averages of every convention and
    of the one-vs-rest ROC-AUC, each equal bit for bit to ``precall.evaluate`` of the slice's
    rows with ``labels`` the classes of all rows.  The micro average and Hand & Till's
    one-vs-one AUC are not computed per slice (``overall`` has them).

    Attributes
    ----------
    classes : ndarray
    per_class : tuple of SlicedEvaluation
        The binary evaluation of each class (``per_class[c][name]`` is the slice's
        :class:`~precall.Evaluation` of class ``classes[c]``).
    support : ndarray of shape (n_slices, n_classes)
        Positive weight of each class in each slice.
    average_precision : dict of str to dict of str to ndarray
        ``average_precision[average][method]`` for ``"macro"`` and ``"weighted"``.
    roc_auc : dict of str to ndarray
        ``"macro"`` and ``"weighted"`` one-vs-rest ROC-AUC.
    overall : MultiEvaluation
        ``precall.evaluate`` of all rows.
    """

    classes: np.ndarray = field(default=None)  # type: ignore[assignment]
    per_class: tuple[SlicedEvaluation, ...] = ()
    support: np.ndarray = field(default=None)  # type: ignore[assignment]
    average_precision: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    roc_auc: dict[str, np.ndarray] = field(default_factory=dict)
    overall: Any = None

    def _ranking_values(self) -> np.ndarray:
        return self.average_precision["macro"]["step"]

    def _defined(self) -> np.ndarray:
        return self.support.sum(axis=1) > 0

    def __getitem__(self, name: Any) -> dict[str, Any]:
        """The slice's averages: ``{"average_precision": {average: {method: value}}, "roc_auc": {average: value}}``."""
        i = self.index(name)
        return {"average_precision": {a: {m: float(v[i]) for m, v in d.items()}
                                      for a, d in self.average_precision.items()},
                "roc_auc": {a: float(v[i]) for a, v in self.roc_auc.items()}}

    def _table(self, start: int = 0, stop: int | None = None) -> tuple[list[str], list[list[Any]]]:
        header = (["slice", "n"] + [f"{a} AP {m}" for a in ("macro", "weighted") for m in AP_METHODS]
                  + ["macro ROC-AUC", "weighted ROC-AUC"])
        o = self.overall
        overall = (["overall", int(self.n_samples.sum())]
                   + [o.average_precision[a][m] for a in ("macro", "weighted") for m in AP_METHODS]
                   + [o.roc_auc["macro"], o.roc_auc["weighted"]])
        rows = [overall] if start == 0 else []
        for i in self._span(start, stop):
            name = self.names[i]
            rows.append([name, int(self.n_samples[i])]
                        + [float(self.average_precision[a][m][i]) for a in ("macro", "weighted") for m in AP_METHODS]
                        + [float(self.roc_auc["macro"][i]), float(self.roc_auc["weighted"][i])])
        return header, rows

    def _text_columns(self, header: list[str]) -> list[str]:
        return ["n", "macro AP step", "weighted AP step", "macro ROC-AUC", "weighted ROC-AUC"]


def _class_averages(values: np.ndarray, support: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per slice (columns of ``values`` (k, m)) the mean over classes and the support-weighted
    mean, as ``float(np.mean(v))`` and ``multiclass._weighted(v, support)`` of each column
    (numpy's sums of each column by :func:`~precall._core.steps.segment_sums`)."""
    k, m = values.shape
    starts = np.arange(m, dtype=np.int64) * k
    lengths = np.full(m, k, dtype=np.int64)
    macro = segment_sums(values.T.ravel(), starts, lengths) / k
    w = support.T
    total = segment_sums(w.ravel(), starts, lengths)
    weighted = segment_sums((np.where(w == 0, 0.0, values.T) * w).ravel(), starts, lengths) / np.where(
        total > 0, total, 1.0)
    return macro, np.where(total > 0, weighted, 0.0)


def evaluate_class_slices(columns: list[BinaryInput], classes: np.ndarray, codes: SliceCodes, kept_codes: np.ndarray,
                          n_samples: np.ndarray, support: np.ndarray, *, ties: str, recall_grid: str, policy: Any,
                          overall: Any, min_support: Any) -> SlicedMultiEvaluation:
    """Each class column through :func:`evaluate_slices`, and the per-slice class averages.

    The classes' evaluations count the rows kept (``n_samples`` without zero-weight rows), as
    :class:`~precall.MultiEvaluation`'s do; ``n_samples`` of the result counts the rows given."""
    kept_rows = np.bincount(kept_codes, minlength=codes.m)
    per_class = tuple(evaluate_slices(col, codes, kept_codes, kept_rows, ties=ties, recall_grid=recall_grid,
                                      policy=policy, min_support=min_support) for col in columns)
    ap: dict[str, dict[str, np.ndarray]] = {"macro": {}, "weighted": {}}
    for meth in AP_METHODS:
        ap["macro"][meth], ap["weighted"][meth] = _class_averages(
            np.array([e.average_precision[meth] for e in per_class]), support.T)
    auc_macro, auc_weighted = _class_averages(np.array([e.roc_auc for e in per_class]), support.T)
    first = per_class[0]
    return SlicedMultiEvaluation(
        names=codes.names, keys=codes.keys, columns=codes.columns, n_samples=n_samples, n_pos=first.n_pos + first.n_neg,
        n_neg=np.zeros(codes.m), min_support=first.min_support, classes=classes, per_class=per_class,
        support=support, average_precision=ap, roc_auc={"macro": auc_macro, "weighted": auc_weighted},
        overall=overall)


# ---------------------------------------------------------------------------
# computing
def _unit_positives(r: _Ragged, m: int) -> np.ndarray:
    """Per slice: whether its positive weights can be counts (every step a whole number)."""
    if r.dtp.dtype.kind in "iu":
        return np.ones(m, dtype=bool)
    fractional = np.bincount(r.slice_of, weights=(r.dtp != np.round(r.dtp)), minlength=m)
    return fractional == 0


def evaluate_slices(data: BinaryInput, codes: SliceCodes, kept_codes: np.ndarray, n_samples: np.ndarray, *,
                    ties: str, recall_grid: str, policy: Any, min_support: Any) -> SlicedEvaluation:
    """Every number per slice from one sort (see the module docstring), and the overall
    :class:`~precall.Evaluation` (``precall.evaluate`` of all rows, from the same sort when
    the rows were counted)."""
    min_support = _check_min_support(min_support)

    def numbers_of(whole: tuple[Steps, Steps]) -> Any:
        return batch_numbers(whole[0], whole[1], recall_grid)

    # the compiled route makes all rows' numbers in the second thread as soon as their steps are made
    st = sliced_steps(data, kept_codes, codes.m, ties, then=numbers_of)
    later = None
    if st.pending is None:  # else all rows' numbers are made there now, beside the slices' (the same bits)
        whole = st.overall if st.overall is not None else steps_and_grouped(data, ties)
        later = backend.beside(data.n_samples, numbers_of, whole)
    per_slice = _slice_numbers(st, codes.m, recall_grid)
    if later is None:
        whole, numbers = st.whole()
        if whole is None:  # stable ties with both classes at one score: all rows' order decides
            whole = steps_and_grouped(data, ties)
            numbers = numbers_of(whole)
    else:
        numbers = later.result()
    overall = evaluation_from_steps(whole[0], whole[1], ties=ties, n_samples=data.n_samples,  # type: ignore[index]
                                    recall_grid=recall_grid, policy=policy, numbers=numbers)
    return sliced_evaluation_of(st, overall, codes, n_samples, ties=ties, recall_grid=recall_grid, policy=policy,
                                min_support=min_support, numbers=per_slice)


def _slice_numbers(st: SlicedSteps, m: int, recall_grid: str) -> tuple:
    """Every number of every slice's steps, a batch of slices of about the same size at once
    (before the undefined policy): ``(AP by convention, ROC-AUC, AUPRG, best F1, its threshold,
    precision and recall)``.  The batches are shared out between this thread and a second one
    (:func:`precall._core.backend.beside`), each taking the next as it is free."""
    n_pos, n_neg = st.n_pos, st.n_neg
    values = {meth: np.zeros(m) for meth in AP_METHODS}
    auc, prg = np.full(m, np.nan), np.full(m, np.nan)
    f1, thr, prec, rec = (np.full(m, np.nan) for _ in range(4))
    shared = st.grouped is st.steps  # grouped ties: one batch serves every number
    jobs = [(r, r is st.steps, part, lengths, starts)
            for r in ((st.steps,) if shared else (st.steps, st.grouped))
            for part, lengths, starts in _bucket_parts(r, m)]

    def run(job: tuple) -> None:  # each job writes its own slices' places
        r, ap_steps, sel, lengths, starts = job
        batch = _padded(r, sel, lengths, starts)
        s = _batch(batch, n_pos[sel], n_neg[sel], st.exact)
        numbers = batch_numbers(s if ap_steps else None, s if shared or not ap_steps else None, recall_grid)
        if ap_steps:
            for meth in AP_METHODS:
                values[meth][sel] = numbers.average_precision[meth]  # type: ignore[index]
            k, f, p, rc = numbers.best_f1  # type: ignore[misc]
            thr[sel] = r.thresholds[starts[sel] + np.minimum(k % batch.tp.shape[1], batch.lengths - 1)]  # pad
            f1[sel], prec[sel], rec[sel] = f, p, rc
        if shared or not ap_steps:
            auc[sel], prg[sel] = numbers.roc_auc, numbers.auprg

    # largest first, shared out between this thread and the second as each is free
    backend.share_out(jobs, run, lambda job: job[2].shape[0] * int(job[3][job[2]].max()))
    return values, auc, prg, f1, thr, prec, rec


def sliced_evaluation_of(st: SlicedSteps, overall: Any, codes: SliceCodes, n_samples: np.ndarray, *, ties: str,
                         recall_grid: str, policy: Any, min_support: int, numbers: tuple | None = None
                         ) -> SlicedEvaluation:
    """The :class:`SlicedEvaluation` of every slice's steps (the numbers of a batch of slices of
    about the same size at once; ``numbers``: :func:`_slice_numbers` of them, computed already)
    and the overall :class:`~precall.Evaluation`: in memory (:func:`evaluate_slices`) and from a
    stream (:meth:`precall.SlicedAccumulator.evaluate`: the steps of its pairs) alike."""
    m = codes.m
    n_pos, n_neg = st.n_pos, st.n_neg
    values, auc, prg, f1, thr, prec, rec = _slice_numbers(st, m, recall_grid) if numbers is None else numbers
    no_pos = n_pos == 0
    one_class = no_pos | (n_neg == 0)
    names = codes.names
    filled = _apply_policies([values[meth] for meth in AP_METHODS], no_pos, "average precision", NO_POSITIVES, 0.0,
                             policy, names)
    values = {meth: unit_interval(v) for meth, v in zip(AP_METHODS, filled)}
    auc = unit_interval(_apply_policy(auc, one_class, "ROC AUC", ONE_CLASS_ROC, float("nan"), policy, names))
    usable = (n_pos > 0) & (n_pos == np.round(n_pos)) & _unit_positives(st.steps, m)
    low = min_average_precisions(n_pos, n_neg, usable, ties, recall_grid)
    normalized = {meth: normalized_average_precisions(values[meth], low[meth]) for meth in AP_METHODS}
    return SlicedEvaluation(
        names=names, keys=codes.keys, columns=codes.columns, n_samples=n_samples, n_pos=n_pos, n_neg=n_neg,
        min_support=min_support, overall=overall, average_precision=values, min_average_precision=low,
        normalized_average_precision=normalized, roc_auc=auc, auprg=at_most_one(prg), best_f1=f1,
        best_f1_threshold=thr, best_f1_precision=prec, best_f1_recall=rec, ties=ties, recall_grid=recall_grid,
    )


def metric_slices(metric: Metric, data: BinaryInput, codes: SliceCodes, kept_codes: np.ndarray,
                  n_samples: np.ndarray, *, min_support: Any) -> SlicedValues:
    """One :class:`Metric` per slice, its kernel run once per size bucket of slices, and on all
    rows (``precall.score`` without ``by``, from the same sort when the rows were counted)."""
    min_support = _check_min_support(min_support)

    def value_of(whole: tuple[Steps, Steps]) -> float | None:  # in the second thread: no policy, no warning
        return None if bool(metric.undefined_rows(whole[0])[0]) else float(metric.kernel(whole[0])[0])

    st = sliced_steps(data, kept_codes, codes.m, metric.ties, then=value_of)
    values = _slice_values(metric, st, codes.m)  # beside the second thread's all rows, if it still runs
    whole, overall = st.whole()
    if overall is None:
        overall = metric.value(whole[0] if whole is not None else steps_of(data, metric.ties))
    return sliced_values_of(metric, st, float(overall), codes, n_samples, min_support, values=values)


def _slice_values(metric: Metric, st: SlicedSteps, m: int) -> np.ndarray:
    """``metric``'s kernel on every slice's steps (NaN where undefined), a part of a size bucket at a
    time, the parts shared out between this thread and a second one."""
    ragged = st.grouped if metric.measure == "roc_auc" else st.steps
    values = np.full(m, np.nan)

    def run(job: tuple) -> None:  # each part writes its own slices' places
        sel, lengths, starts = job
        with np.errstate(invalid="ignore", divide="ignore"):
            values[sel] = metric.kernel(_batch(_padded(ragged, sel, lengths, starts), st.n_pos[sel], st.n_neg[sel],
                                               st.exact))

    backend.share_out(_bucket_parts(ragged, m), run, lambda job: job[0].shape[0] * int(job[1][job[0]].max()))
    return values


def sliced_values_of(metric: Metric, st: SlicedSteps, overall: float, codes: SliceCodes, n_samples: np.ndarray,
                     min_support: int, values: np.ndarray | None = None) -> SlicedValues:
    """The :class:`SlicedValues` of ``metric`` on every slice's steps (its kernel run once per part of
    a size bucket of slices, :func:`_slice_values`, unless given as ``values``; the undefined policy
    applied to all at once) and its value on all rows: in memory (:func:`metric_slices`) and from a
    stream (:meth:`precall.SlicedAccumulator.evaluate`: the steps of its pairs) alike."""
    m = codes.m
    if values is None:
        values = _slice_values(metric, st, m)
    undefined = (st.n_pos == 0) | ((st.n_neg == 0) if metric.measure == "roc_auc" else False)
    if metric.measure == "roc_auc":
        what, reason, default = "ROC AUC", ONE_CLASS_ROC, float("nan")
    else:
        what, reason, default = ("average precision" if metric.measure == "average_precision" else "F1",
                                 NO_POSITIVES, 0.0)
    values = _apply_policy(values, undefined, what, reason, default, metric.on_undefined, codes.names)
    return SlicedValues(names=codes.names, keys=codes.keys, columns=codes.columns, n_samples=n_samples,
                        n_pos=st.n_pos, n_neg=st.n_neg, min_support=min_support, values=values,
                        defined=~undefined, overall=float(overall), metric=metric)
