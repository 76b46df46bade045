"""Exact streaming by slice: one :class:`~precall.Accumulator` state per slice value.

:class:`SlicedAccumulator` is the streaming form of ``precall.evaluate(y, s, by=...)``:
``update(y, s, by=...)`` adds a batch whose rows carry their slice values,
``merge`` combines two states (associative and commutative), ``to_bytes`` /
``from_bytes`` ship the state as a versioned ``.npz`` payload (no pickle), and
``evaluate()`` gives the :class:`~precall.SlicedEvaluation` that the in-memory
``precall.evaluate(..., by=...)`` gives on all the rows: slice names, order and
every number equal bit for bit without weights (with weights, the sums of equal
scores are added in another order: equal to rounding, as :class:`Accumulator`).
Ties are grouped (one threshold per distinct score), as every accumulator.
Slice values are named as in memory on the concatenated column, whatever the batches'
dtypes: numbers take numpy's promotion of all the batches' numbers (an int batch and a
float batch: floats, ``'1.0'``; bools among ints: ``1``), as the merged states do.

The state is each slice's (distinct scores, positive and negative counts),
plus one for all the rows (the ``overall`` evaluation) and the rows given per
slice (``n_samples``, zero weights included, as in memory).  Memory grows with
the distinct (slice, score) pairs, not with the rows.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import json
from typing import Any, Callable

import numpy as np

from .._core.validate import check_binary, check_number, check_on_undefined, check_options, \
    check_pos_label, is_multi
from .._core.metric import Metric
from ..slices import SlicedEvaluation, SlicedTables, SlicedValues, _check_min_support, \
    ragged_steps, slice_codes, sliced_evaluation_of, sliced_tables, sliced_values_of
from ..table import ThresholdTable
from .accumulator import Accumulator, _check_table, _plain, _read_payload, _same_label, _steps

__all__ = ["SlicedAccumulator"]

_FORMAT = "precall.SlicedAccumulator"
_VERSION = 1


class SlicedAccumulator:
    """Exact PR/ROC state of a stream of labelled scores, per slice (``by``) and overall.

    Parameters
    ----------
    pos_label : label, default=None
        The positive label (as :func:`precall.evaluate`: ``None`` needs labels in
        {0, 1} or {-1, 1}); fixed for the accumulator's life.

    Examples
    --------
    >>> import precall
    >>> acc = precall.SlicedAccumulator()
    >>> acc.update([0, 1, 1], [0.1, 0.9, 0.4], by=["a", "a", "b"]).update([0, 1], [0.4, 0.2], by=["b", "b"])
    SlicedAccumulator(2 slices by slice, 5 rows)
    >>> got = acc.evaluate()
    >>> want = precall.evaluate([0, 1, 1, 0, 1], [0.1, 0.9, 0.4, 0.4, 0.2], by=["a", "a", "b", "b", "b"])
    >>> got.names == want.names and got.average_precision["step"].tolist() == want.average_precision["step"].tolist()
    True
    """

    def __init__(self, *, pos_label: Any = None) -> None:
        self.pos_label = check_pos_label(pos_label)
        self.columns: tuple[str, ...] | None = None  # the names of the by columns, fixed by the first batch
        self._slices: dict[tuple[Any, ...], Accumulator] = {}
        self._rows: dict[tuple[Any, ...], int] = {}
        self._all = Accumulator(pos_label=self.pos_label)
        self._n_samples = 0
        self._ranks: list[int] | None = None  # each slice column's number type (_number_ranks), once known

    # -- feeding --------------------------------------------------------------
    def update(self, y_true: Any, y_score: Any, *, by: Any, sample_weight: Any = None) -> "SlicedAccumulator":
        """Add a batch; ``by`` as in :func:`precall.evaluate` (one or more slice columns,
        a dict or a pandas DataFrame), one value per row.  Returns ``self``."""
        if is_multi(y_true, y_score):
            raise ValueError("`by` applies to binary input; got multi-class or multi-label input. Accumulate "
                             "each class column as a binary problem (y_true == c, y_score[:, c])")
        w = None if sample_weight is None else np.asarray(sample_weight)
        nothing = w is not None and w.size > 0 and w.dtype.kind in "iuf" and not np.any(w)
        # a batch whose weights are all zero is checked and adds only its rows' count, as Accumulator
        data = check_binary(y_true, y_score, None if nothing else sample_weight, self.pos_label, batch=True)
        if nothing and np.shape(w) != (data.n_samples,):
            raise ValueError(f"`sample_weight` must have one weight per sample ({data.n_samples}); got shape "
                             f"{np.shape(w)}")
        codes = slice_codes(by, data.n_samples)
        if self.columns is None:
            self.columns = codes.columns
        elif codes.columns != self.columns:
            raise ValueError(f"`by` must name the same slice columns in every batch ({list(self.columns)}); got "
                             f"{list(codes.columns)}. Pass the columns in the same order, with the same names")
        width = len(codes.columns)
        known = self._ranks if self._ranks is not None else _number_ranks(self._slices, width)  # not every batch
        ranks = [max(a, b) for a, b in zip(known, _number_ranks(codes.keys, width))]
        if self._ranks is None or ranks != known:
            self._promote(ranks)
        batch_keys = [_promoted(key, ranks) for key in codes.keys]
        self._all.update(y_true, y_score, sample_weight=sample_weight)
        self._n_samples += data.n_samples
        given = codes.rows()
        for key, n in zip(batch_keys, given.tolist()):
            self._rows[key] = self._rows.get(key, 0) + n
            if key not in self._slices:
                self._slices[key] = Accumulator(pos_label=self.pos_label)
        if nothing:
            return self
        kept = codes.codes
        if data.scores.shape[0] < data.n_samples:  # zero weights were set aside
            kept = kept[np.asarray(sample_weight, dtype=np.float64).ravel() > 0]
        order = np.argsort(kept, kind="stable")
        bounds = np.searchsorted(kept[order], np.arange(codes.m + 1))
        for c in np.flatnonzero(np.diff(bounds)).tolist():
            rows = order[bounds[c]:bounds[c + 1]]
            self._slices[batch_keys[c]]._add(0, data.scores[rows], data.positive[rows],
                                             None if data.weight is None else data.weight[rows])
        return self

    def merge(self, other: "SlicedAccumulator") -> "SlicedAccumulator":
        """A new accumulator holding both states (associative and commutative)."""
        if not isinstance(other, SlicedAccumulator):
            raise TypeError(f"`other` must be a SlicedAccumulator; got {type(other).__name__}")
        if not _same_label(self.pos_label, other.pos_label):
            raise ValueError(f"can only merge accumulators with the same `pos_label`; got {self.pos_label!r} and "
                             f"{other.pos_label!r}")
        if self.columns is not None and other.columns is not None and self.columns != other.columns:
            raise ValueError(f"can only merge accumulators of the same slice columns; got {list(self.columns)} and "
                             f"{list(other.columns)}")
        out = SlicedAccumulator(pos_label=self.pos_label)
        out.columns = self.columns if self.columns is not None else other.columns
        out._all = self._all.merge(other._all)
        out._n_samples = self._n_samples + other._n_samples
        for state in (self, other):
            for key, acc in state._slices.items():
                out._slices[key] = out._slices[key].merge(acc) if key in out._slices else acc.merge(
                    Accumulator(pos_label=self.pos_label))
                out._rows[key] = out._rows.get(key, 0) + state._rows[key]
        width = len(out.columns or ())
        out._promote([max(a, b) for a, b in zip(_number_ranks(self._slices, width),
                                                _number_ranks(other._slices, width))])
        return out

    def _promote(self, ranks: list[int]) -> None:
        """Slice values that are numbers written in the type of every value of their column
        (:func:`_number_ranks`), in place: an int batch then a float one names its slices
        ``'1.0'``, as ``precall.evaluate`` of the concatenated (float) column does."""
        if any(type(a) is not type(b) for key in self._slices for a, b in zip(_promoted(key, ranks), key)):
            promoted = self.relabel(lambda key: _promoted(key, ranks))
            self._slices, self._rows = promoted._slices, promoted._rows
        self._ranks = ranks

    def relabel(self, mapping: Callable[[tuple[Any, ...]], tuple[Any, ...]]) -> "SlicedAccumulator":
        """A new accumulator whose slices are renamed: ``mapping(key)`` gives each slice's new
        key (a tuple of one value per slice column, ``None`` for missing); slices given the same
        key are merged.  For slice values known only at the end of a stream (codes of a
        dictionary that grows chunk by chunk, values to be normalised).

        Examples
        --------
        >>> import precall
        >>> acc = precall.SlicedAccumulator().update([0, 1, 1], [0.1, 0.9, 0.4], by=["A", "a", "b"])
        >>> acc.relabel(lambda key: (key[0].lower(),)).evaluate().names
        ('a', 'b')
        """
        if not callable(mapping):
            raise TypeError(f"`mapping` must be a function of a slice key (a tuple); got {mapping!r}")
        width = len(self.columns or ())
        out = SlicedAccumulator(pos_label=self.pos_label)
        out.columns = self.columns
        out._all = self._all.merge(Accumulator(pos_label=self.pos_label))
        out._n_samples = self._n_samples
        for key, acc in self._slices.items():
            new = mapping(key)
            if not isinstance(new, tuple) or len(new) != width:
                raise ValueError(f"`mapping` must return a tuple of {width} value(s), one per slice column; got "
                                 f"{new!r} for {key!r}")
            out._slices[new] = out._slices[new].merge(acc) if new in out._slices else acc.merge(
                Accumulator(pos_label=self.pos_label))
            out._rows[new] = out._rows.get(new, 0) + self._rows[key]
        return out

    # -- results ----------------------------------------------------------------
    def table(self, key: tuple[Any, ...] | None = None) -> ThresholdTable:
        """The grouped :class:`~precall.ThresholdTable` of one slice (``key``: its tuple of
        values, as :attr:`~precall.SlicedEvaluation.keys` lists them) or, with ``key=None``, of
        all the rows.

        Examples
        --------
        >>> import precall
        >>> acc = precall.SlicedAccumulator().update([0, 1, 1], [0.1, 0.9, 0.4], by=["a", "a", "b"])
        >>> acc.table(("a",)).tp.tolist(), acc.table().tp.tolist()
        ([1, 1], [1, 2, 2])
        """
        if key is None:
            return self._all.table()
        if key not in self._slices:
            raise ValueError(f"`key` must be a slice of the accumulator; got {key!r} (the slices: "
                             f"{list(self._slices)[:5]}{' ...' if len(self._slices) > 5 else ''})")
        return self._slices[key].table()

    @property
    def keys(self) -> list[tuple[Any, ...]]:
        """The slices seen, each a tuple of one value per slice column (``None``: missing), in
        the order first seen (:meth:`evaluate` orders them as :func:`precall.evaluate` does)."""
        return list(self._slices)

    def __len__(self) -> int:
        return len(self._slices)

    def __repr__(self) -> str:
        by = ", ".join(self.columns or ())
        return f"SlicedAccumulator({len(self)} slices by {by or '-'}, {sum(self._rows.values())} rows)"

    def evaluate(self, *, recall_grid: str = "reference", on_undefined: Any = "warn",
                 min_support: int = 0) -> SlicedEvaluation:
        """The :class:`~precall.SlicedEvaluation` of everything seen: what
        ``precall.evaluate(y, s, by=..., recall_grid=..., on_undefined=..., min_support=...)``
        gives on all the rows (grouped ties)."""
        check_options(recall_grid=recall_grid)
        policy = check_on_undefined(on_undefined)
        min_support = _check_min_support(min_support)
        codes, ordered = self._ordered()
        overall = dataclasses.replace(self._all.evaluate(recall_grid=recall_grid, on_undefined=policy),
                                      n_samples=self._n_samples)
        # every slice's steps in ragged batches: the numbers of the in-memory route, a batch at a time
        st = ragged_steps([self._slice_steps(key) for key in ordered])
        return sliced_evaluation_of(st, overall, codes, self._given(ordered), ties="group", recall_grid=recall_grid,
                                    policy=policy, min_support=min_support)

    def score(self, metric: Metric, *, min_support: int = 0) -> SlicedValues:
        """The :class:`~precall.SlicedValues` of one :class:`precall.Metric` (grouped ties):
        what ``precall.score(metric, y, s, by=..., min_support=...)`` (and so
        ``average_precision`` / ``roc_auc`` with ``by``) gives on all the rows.

        >>> import precall
        >>> acc = precall.SlicedAccumulator().update([0, 1, 1, 0, 1], [0.1, 0.9, 0.4, 0.4, 0.2], by=list("aabbb"))
        >>> acc.score(precall.metric("roc_auc"))["b"] == precall.roc_auc([0, 1, 1, 0, 1], [0.1, 0.9, 0.4, 0.4, 0.2],
        ...                                                               by=list("aabbb"))["b"]
        True
        """
        if not isinstance(metric, Metric):
            raise TypeError(f"`metric` must be a precall.Metric (precall.metric(...)); got {metric!r:.80}")
        min_support = _check_min_support(min_support)
        codes, ordered = self._ordered()
        st = ragged_steps([self._slice_steps(key) for key in ordered])
        return sliced_values_of(metric, st, float(self._all.score(metric)), codes, self._given(ordered), min_support)

    def tables(self, *, min_support: int = 0, on_undefined: Any = "warn") -> SlicedTables:
        """The :class:`~precall.SlicedTables` of everything seen: what
        ``precall.threshold_table(y, s, by=..., min_support=..., on_undefined=...)`` gives on all
        the rows (grouped ties): each slice's table and the overall one."""
        min_support = _check_min_support(min_support)
        policy = check_on_undefined(on_undefined)
        codes, ordered = self._ordered()
        tables = {name: self.table(key) for name, key in zip(codes.names, ordered)}
        return sliced_tables(codes, tables, self._all.table(), self._given(ordered), min_support, policy)

    def _ordered(self) -> tuple[Any, list[tuple[Any, ...]]]:
        """The slice codes of the keys (the in-memory order and names) and the keys in that order."""
        if not self._slices:
            raise ValueError("the accumulator has seen no row yet; update() it with a batch first")
        keys = list(self._slices)
        columns = self.columns or ()
        # the in-memory order and names: the slice codes of the keys themselves (each key once)
        values = {c: np.array([k[j] for k in keys] + [None], dtype=object)[:-1] for j, c in enumerate(columns)}
        codes = slice_codes(values, len(keys))
        at = np.empty(len(keys), dtype=np.int64)
        at[codes.codes] = np.arange(len(keys))
        return codes, [keys[i] for i in at.tolist()]

    def _slice_steps(self, key: tuple[Any, ...]) -> Any:
        acc = self._slices[key]
        acc._flush(0)
        return _steps(acc._scores[0], acc._pos[0], acc._neg[0])

    def _given(self, ordered: list[tuple[Any, ...]]) -> np.ndarray:
        return np.array([self._rows[k] for k in ordered], dtype=np.int64)

    # -- shipping ---------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The state as a versioned ``.npz`` payload (no pickle): the slice keys in a JSON
        record (dates and datetimes as ISO texts, read back as the same values), every slice's
        table one after another in flat arrays."""
        keys = list(self._slices)
        try:
            meta = json.dumps({"format": _FORMAT, "version": _VERSION, "pos_label": _plain(self.pos_label),
                               "columns": None if self.columns is None else list(self.columns),
                               "keys": [[_shipped(v) for v in k] for k in keys]})
        except TypeError:
            raise TypeError("`pos_label` must be a string, a number or a boolean, and the slice values strings, "
                            "numbers, booleans, dates or datetimes (numpy datetime64, pandas Timestamp) or missing, "
                            "to be shipped; convert other slice values to strings first") from None
        tables = [self._all] + [self._slices[k] for k in keys]
        for acc in tables:
            acc._flush(0)
        dtype = np.result_type(*(a._pos[0].dtype for a in tables))
        arrays = {
            "meta": np.frombuffer(meta.encode("utf-8"), dtype=np.uint8),
            "sizes": np.array([a._scores[0].size for a in tables], dtype=np.int64),
            "rows": np.array([self._rows[k] for k in keys], dtype=np.int64),
            "scores": np.concatenate([a._scores[0].astype(np.float64) for a in tables]),
            "pos": np.concatenate([a._pos[0].astype(dtype) for a in tables]),
            "neg": np.concatenate([a._neg[0].astype(dtype) for a in tables]),
        }
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, payload: bytes) -> "SlicedAccumulator":
        """Rebuild an accumulator from :meth:`to_bytes`; anything else raises ``ValueError``
        (every member's size checked before it is read, every table's scores finite, sorted
        and distinct, its counts finite and non-negative)."""
        if not isinstance(payload, (bytes, bytearray, memoryview)):
            raise TypeError(f"`payload` must be bytes; got {type(payload).__name__}")
        arrays = _read_payload(bytes(payload))
        if set(arrays) != {"meta", "sizes", "rows", "scores", "pos", "neg"}:
            raise ValueError(f"not a precall SlicedAccumulator payload: members {sorted(arrays)[:8]}")
        meta = _meta(arrays["meta"])
        keys = [tuple(_unshipped(v) for v in k) for k in meta["keys"]]
        if len(set(keys)) != len(keys):
            raise ValueError("corrupt SlicedAccumulator payload: a slice appears twice")
        sizes, rows = arrays["sizes"], arrays["rows"]
        if sizes.dtype.kind != "i" or rows.dtype.kind != "i" or sizes.size != len(keys) + 1 or \
                rows.size != len(keys) or (sizes < 0).any() or (rows < 0).any() or \
                int(sizes.sum()) != arrays["scores"].size:
            raise ValueError("corrupt SlicedAccumulator payload: table sizes do not match the slices and scores")
        out = cls(pos_label=meta["pos_label"])
        out.columns = None if meta["columns"] is None else tuple(meta["columns"])
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        for i in range(len(keys) + 1):
            part = slice(int(bounds[i]), int(bounds[i + 1]))
            s, p, n = arrays["scores"][part], arrays["pos"][part], arrays["neg"][part]
            _check_table(i, s, p, n, None)
            acc = Accumulator(pos_label=out.pos_label)
            if s.size:
                acc._pending[0].push((s, p, n))
                acc._flush(0)
            if i == 0:
                out._all = acc
            else:
                out._slices[keys[i - 1]] = acc
                out._rows[keys[i - 1]] = int(rows[i - 1])
        out._n_samples = int(rows.sum())
        return out


_NUMBER_RANKS = {bool: 1, int: 2, float: 3}  # numpy's promotion: bool < int < float


def _number_ranks(keys: Any, width: int) -> list[int]:
    """For each slice column, the type numpy gives a column of all the keys' numbers: 0 (no
    number), 1 (bool), 2 (int) or 3 (float)."""
    ranks = [0] * width
    for key in keys:
        for j, v in enumerate(key):
            ranks[j] = max(ranks[j], _NUMBER_RANKS.get(type(v), 0))
    return ranks


def _promoted(key: tuple[Any, ...], ranks: list[int]) -> tuple[Any, ...]:
    """``key`` with its numbers in their column's type (:func:`_number_ranks`): ``1`` and ``True``
    as ``1.0`` in a column of floats, ``True`` as ``1`` in a column of ints."""
    return tuple(v if _NUMBER_RANKS.get(type(v), 0) in (0, r) else (float(v) if r == 3 else int(v))
                 for v, r in zip(key, ranks))


def _meta(raw: np.ndarray) -> dict[str, Any]:
    """The metadata record, every field checked."""
    try:
        meta = json.loads(raw.tobytes().decode("utf-8")) if raw.dtype == np.uint8 else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        meta = None
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise ValueError("not a precall SlicedAccumulator payload (no format marker)")
    if meta.get("version") != _VERSION or type(meta.get("version")) is not int:
        raise ValueError(f"SlicedAccumulator payload version {meta.get('version')!r} is not supported (this precall "
                         f"reads version {_VERSION})")
    if set(meta) != {"format", "version", "pos_label", "columns", "keys"}:
        raise ValueError(f"corrupt SlicedAccumulator payload: metadata fields {sorted(meta)}")
    scalar = (str, int, float, bool, type(None))
    columns, keys = meta["columns"], meta["keys"]
    if not isinstance(meta["pos_label"], scalar) or not (
            columns is None or (isinstance(columns, list) and all(isinstance(c, str) for c in columns))):
        raise ValueError("corrupt SlicedAccumulator payload: pos_label or columns")
    width = len(columns or ())
    if not isinstance(keys, list) or not all(isinstance(k, list) and len(k) == width and
                                             all(isinstance(v, scalar) or _is_time_record(v) for v in k)
                                             for k in keys):
        raise ValueError(f"corrupt SlicedAccumulator payload: keys must be lists of {width} values")
    return meta


# slice values that JSON has no type for: {kind: ISO text}, read back by the kind's parser
def _pandas_timestamp(text: str) -> Any:
    import pandas as pd  # noqa: PLC0415  (only a payload of pandas Timestamps holds one)

    return pd.Timestamp(text)


_TIME_KINDS: dict[str, Callable[[str], Any]] = {
    "date": datetime.date.fromisoformat,
    "datetime": datetime.datetime.fromisoformat,
    "timestamp": _pandas_timestamp,  # pandas: nanoseconds and its time zones kept
}


def _shipped(value: Any) -> Any:
    """A slice value as JSON: strings, numbers, booleans and None (missing) as they are; a date
    or datetime (what a numpy datetime64 or a pandas Timestamp slice column gives) as a
    ``{kind: ISO text}`` record (:data:`_TIME_KINDS`).  Anything else: TypeError."""
    if isinstance(value, np.datetime64):  # NaT is missing in the slices: None, never here
        value = value.item()
    if isinstance(value, datetime.datetime):
        kind = "timestamp" if type(value).__module__.startswith("pandas") else "datetime"
        return {kind: value.isoformat()}
    if isinstance(value, datetime.date):
        return {"date": value.isoformat()}
    return _plain(value)


def _is_time_record(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _TIME_KINDS and \
        isinstance(next(iter(value.values())), str)


def _unshipped(value: Any) -> Any:
    """A slice value from :func:`_shipped`'s JSON (records checked by :func:`_meta`)."""
    if not isinstance(value, dict):
        return value
    (kind, text), = value.items()
    try:
        return _TIME_KINDS[kind](text)
    except ValueError:
        raise ValueError(f"corrupt SlicedAccumulator payload: {kind} slice value {text[:40]!r}") from None
