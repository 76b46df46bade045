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
Slice values are named as in memory on the concatenated column (``np.concatenate`` of the
batches), in any batch order: each key keeps its value as its batch typed it (the state is by
these raw keys), and the names are made at the end in the column's type, numpy's promotion
of every batch's type (:func:`_common`): an int batch and a float batch, ``'1.0'``; ints and
strings, ``'1'`` (text); a float batch of NaN only still makes the column float; no common
type (dates and numbers) or an object batch, the values as they are, equal ones (``1``,
``1.0``) one slice keyed by the widest type.  A pandas column counts as the numpy type of
its values (categorical and string columns: objects).

The state is each slice's (distinct scores, positive and negative counts),
plus one for all the rows (the ``overall`` evaluation) and the rows given per
slice (``n_samples``, zero weights included, as in memory).  Memory grows with
the distinct (slice, score) pairs, not with the rows.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import io
import json
from typing import Any, Callable

import numpy as np

from .._core.validate import check_binary, check_number, label_array, check_on_undefined, check_options, \
    check_pos_label, is_multi
from .._core.metric import Metric
from ..slices import SliceCodes, SlicedEvaluation, SlicedTables, SlicedValues, _check_min_support, _level_list, \
    _objects, _type_rank, ragged_steps, slice_codes, sliced_evaluation_of, sliced_tables, sliced_values_of
from ..table import ThresholdTable
from .accumulator import Accumulator, _check_table, _plain, _read_payload, _same_label, _steps

__all__ = ["SlicedAccumulator"]

_FORMAT = "precall.SlicedAccumulator"
_VERSION = 2  # 2: every key value with its batch's type, each column's types (1: values alone, still read)


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
        # the state by raw key: each value with the type its batch gave it (_raw_keys), so that the
        # names made at the end (_view) are those of the concatenated column, in any batch order
        self._slices: dict[tuple[Any, ...], Accumulator] = {}
        self._rows: dict[tuple[Any, ...], int] = {}
        self._all = Accumulator(pos_label=self.pos_label)
        self._n_samples = 0
        self._types: list[set[np.dtype]] | None = None  # each column's batch types (_batch_type)
        self._view: _View | None = None  # the slices as in memory: until a new raw key or type
        self._merged: dict[tuple[Any, ...], Accumulator] = {}  # slices of several raw keys: until a batch

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
        if self._types is None:
            self._types = [set() for _ in codes.columns]
        for types, dtype in zip(self._types, codes.dtypes):
            if _batch_type(dtype) not in types:  # a new type: the names are made again
                types.add(_batch_type(dtype))
                self._view = None
        self._all.update(y_true, y_score, sample_weight=sample_weight)
        self._n_samples += data.n_samples
        self._merged = {}
        states = []
        for key, n in zip(_raw_keys(codes), codes.rows().tolist()):
            state = self._slices.get(key)
            if state is None:
                state = self._slices[key] = Accumulator(pos_label=self.pos_label)
                self._view = None
            states.append(state)
            self._rows[key] = self._rows.get(key, 0) + n
        if nothing:
            return self
        kept = codes.codes
        if data.scores.shape[0] < data.n_samples:  # zero weights were set aside
            kept = kept[np.asarray(sample_weight, dtype=np.float64).ravel() > 0]
        order = np.argsort(kept, kind="stable")
        bounds = np.searchsorted(kept[order], np.arange(codes.m + 1))
        for c in np.flatnonzero(np.diff(bounds)).tolist():
            rows = order[bounds[c]:bounds[c + 1]]
            states[c]._add(0, data.scores[rows], data.positive[rows],
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
        if self._types is not None or other._types is not None:
            width = len(out.columns or ())
            out._types = [set().union(*(state._types[j] for state in (self, other) if state._types is not None))
                          for j in range(width)]
        for state in (self, other):
            for key, acc in state._slices.items():
                out._slices[key] = out._slices[key].merge(acc) if key in out._slices else acc.merge(
                    Accumulator(pos_label=self.pos_label))
                out._rows[key] = out._rows.get(key, 0) + state._rows[key]
        return out

    def relabel(self, mapping: Callable[[tuple[Any, ...]], tuple[Any, ...]]) -> "SlicedAccumulator":
        """A new accumulator whose slices are renamed: ``mapping(key)`` gives each slice's new
        key (a tuple of one value per slice column, ``None`` for missing); slices given the same
        key are merged.  For slice values known only at the end of a stream (codes of a
        dictionary that grows chunk by chunk, values to be normalised).  The new values of a
        column take the type a list of them takes in :func:`precall.evaluate`'s ``by=`` (``1`` beside
        ``2.5``: ``1.0``; beside a string: ``1``, an object column in which ``1`` and ``'1'`` differ).

        Examples
        --------
        >>> import precall
        >>> acc = precall.SlicedAccumulator().update([0, 1, 1], [0.1, 0.9, 0.4], by=["A", "a", "b"])
        >>> acc.relabel(lambda key: (key[0].lower(),)).evaluate().names
        ('a', 'b')
        >>> acc.relabel(lambda key: (1 if key == ("b",) else 0.5,)).keys
        [(0.5,), (1.0,)]
        """
        if not callable(mapping):
            raise TypeError(f"`mapping` must be a function of a slice key (a tuple); got {mapping!r}")
        out = SlicedAccumulator(pos_label=self.pos_label)
        out.columns = self.columns
        out._all = self._all.merge(Accumulator(pos_label=self.pos_label))
        out._n_samples = self._n_samples
        out._types = None if self._types is None else [set(t) for t in self._types]
        if not self._slices:
            return out
        columns = self.columns or ()
        view = self._view_of()
        new = []
        for key in view.keys:
            got = mapping(key)
            if not isinstance(got, tuple) or len(got) != len(columns):
                raise ValueError(f"`mapping` must return a tuple of {len(columns)} value(s), one per slice column; "
                                 f"got {got!r} for {key!r}")
            new.append(got)
        # each column of new values typed as by= types a list of them; equal new keys merged
        codes = slice_codes({c: _values_array([k[j] for k in new]) for j, c in enumerate(columns)}, len(new))
        out._types = [{_batch_type(d)} for d in codes.dtypes]
        raw = _raw_keys(codes)
        for key, code in zip(view.keys, codes.codes.tolist()):
            acc, rows = self._group(view, key)
            target = raw[code]
            out._slices[target] = out._slices[target].merge(acc) if target in out._slices else acc.merge(
                Accumulator(pos_label=self.pos_label))
            out._rows[target] = out._rows.get(target, 0) + rows
        return out

    # -- the slices as in memory ----------------------------------------------------
    def _view_of(self) -> "_View":
        """The slices as :func:`precall.evaluate` names them on the concatenated column (kept
        until a new raw key or batch type: :class:`_View`)."""
        if self._view is None:
            self._view = _view(list(self._slices), self._types or [], self.columns or ())
        return self._view

    def _group(self, view: "_View", key: tuple[Any, ...]) -> tuple[Accumulator, int]:
        """The state of one slice (``key`` of ``view``) and its rows: its raw keys' merged."""
        raw = view.groups[key]
        if len(raw) == 1:
            return self._slices[raw[0]], self._rows[raw[0]]
        if key not in self._merged:
            self._merged[key] = functools.reduce(Accumulator.merge, (self._slices[r] for r in raw))
        return self._merged[key], sum(self._rows[r] for r in raw)

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
        view = self._view_of()
        if not isinstance(key, tuple) or key not in view.groups:
            raise ValueError(f"`key` must be a slice of the accumulator; got {key!r} (the slices: "
                             f"{view.keys[:5]}{' ...' if len(view.keys) > 5 else ''})")
        return self._group(view, key)[0].table()

    @property
    def keys(self) -> list[tuple[Any, ...]]:
        """The slices seen, each a tuple of one value per slice column (``None``: missing), in
        the order first seen (:meth:`evaluate` orders them as :func:`precall.evaluate` does);
        the values as :func:`precall.evaluate` gives them on all the rows."""
        return list(self._view_of().keys)

    def __len__(self) -> int:
        return len(self._view_of().keys)

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

    def _ordered(self) -> tuple[SliceCodes, list[tuple[Any, ...]]]:
        """The slice codes of the keys (the in-memory order and names) and the keys in that order."""
        if not self._slices:
            raise ValueError("the accumulator has seen no row yet; update() it with a batch first")
        view = self._view_of()
        # the in-memory order and names: the slice codes of the keys themselves (each key once), each
        # column in its type
        codes = slice_codes(dict(zip(self.columns or (), view.arrays)), len(view.keys))
        at = np.empty(len(view.keys), dtype=np.int64)
        at[codes.codes] = np.arange(len(view.keys))
        return codes, [view.keys[i] for i in at.tolist()]

    def _slice_steps(self, key: tuple[Any, ...]) -> Any:
        acc = self._group(self._view_of(), key)[0]
        acc._flush(0)
        return _steps(acc._scores[0], acc._pos[0], acc._neg[0])

    def _given(self, ordered: list[tuple[Any, ...]]) -> np.ndarray:
        view = self._view_of()
        return np.array([self._group(view, k)[1] for k in ordered], dtype=np.int64)

    # -- shipping ---------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The state as a versioned ``.npz`` payload (no pickle): the slice keys in a JSON
        record (each value with its batch's numpy type; dates and datetimes as ISO texts, read
        back as the same values) beside each column's batch types, every slice's table one
        after another in flat arrays."""
        keys = list(self._slices)
        try:
            meta = json.dumps({
                "format": _FORMAT, "version": _VERSION, "pos_label": _plain(self.pos_label),
                "columns": None if self.columns is None else list(self.columns),
                "types": None if self._types is None else [sorted(d.str for d in t) for t in self._types],
                "keys": [[None if t is None else ["O" if t.startswith("O") else t, _shipped(v)] for t, v in zip(*k)]
                         for k in keys]})
        except TypeError:
            raise TypeError("`pos_label` must be a string, a number or a boolean, and the slice values strings, "
                            "numbers, booleans, dates, datetimes (numpy datetime64, pandas Timestamp), durations "
                            "(numpy timedelta64, Python timedelta) or missing, to be shipped; convert other slice "
                            "values to strings first") from None
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
        and distinct, its counts finite and non-negative, every key value of its type).  A
        version 1 payload (values without their types) is read as if relabelled to itself
        (:meth:`relabel`: each column in numpy's type of its values)."""
        if not isinstance(payload, (bytes, bytearray, memoryview)):
            raise TypeError(f"`payload` must be bytes; got {type(payload).__name__}")
        arrays = _read_payload(bytes(payload))
        if set(arrays) != {"meta", "sizes", "rows", "scores", "pos", "neg"}:
            raise ValueError(f"not a precall SlicedAccumulator payload: members {sorted(arrays)[:8]}")
        meta = _meta(arrays["meta"])
        columns = None if meta["columns"] is None else tuple(meta["columns"])
        if meta["version"] == 1:  # values alone: each column as objects, typed by relabel below
            types = None if columns is None else [{np.dtype(object)} for _ in columns]
            keys = [_raw_key([None if v is None else _raw(_unshipped(v), None) for v in k]) for k in meta["keys"]]
        else:
            types = _types_of(meta["types"], len(columns or ()))
            keys = [_raw_key([None if e is None else _raw(_unshipped(e[1]), e[0], types[j]) for j, e in enumerate(k)])
                    for k in meta["keys"]]
        if len(set(keys)) != len(keys):
            raise ValueError("corrupt SlicedAccumulator payload: a slice appears twice")
        sizes, rows = arrays["sizes"], arrays["rows"]
        if sizes.dtype.kind != "i" or rows.dtype.kind != "i" or sizes.size != len(keys) + 1 or \
                rows.size != len(keys) or (sizes < 0).any() or (rows < 0).any() or \
                int(sizes.sum()) != arrays["scores"].size:
            raise ValueError("corrupt SlicedAccumulator payload: table sizes do not match the slices and scores")
        out = cls(pos_label=meta["pos_label"])
        out.columns = columns
        out._types = types
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
        return out.relabel(lambda key: key) if meta["version"] == 1 and out._slices else out


# ---------------------------------------------------------------------------
# raw keys and the names of the concatenated column
#
# A raw key is ``(tags, values)``: each column's value as its batch's slice codes give it
# (:func:`precall.slices.slice_codes`; ``None`` missing) and the tag of the type it came in, so that
# it can be written in any column type later exactly as numpy's concatenation writes it (a float32
# batch's 0.1 among strings is '0.1', an int batch's 1 among floats and strings '1').  The tag is the
# batch's numpy type (integers as int64 or uint64, strings of any length as one, :func:`_tag`), for
# a value of an object batch "O:" and its type (:func:`_object_tag`: 1 and 1.0 differ), for a
# missing value None, but a float's NaN keeps its tag (numpy writes it 'nan' among strings).  The
# tags are one tuple (shared by a typed batch's keys), the values the slice key as the batch has it.
@dataclasses.dataclass(frozen=True)
class _View:
    """The slices as in memory: ``keys`` (each once, in the order first seen), the raw keys of
    each (``groups``), each column's values of the keys as the array :func:`slice_codes` orders
    and names them (``arrays``)."""

    keys: list[tuple[Any, ...]]
    groups: dict[tuple[Any, ...], list[tuple[Any, ...]]]
    arrays: list[np.ndarray]


def _view(raw_keys: list[tuple[Any, ...]], types: list[set[np.dtype]], columns: tuple[str, ...]) -> _View:
    """The in-memory slices of the raw keys: each column's values written in the column's type
    (:func:`_common` of its batches' types, :func:`_converted`), raw keys of equal values one slice."""
    targets = [_common(t) for t in types]
    tags = [{t[j] for t in {raw[0] for raw in raw_keys}} - {None} for j in range(len(columns))]
    groups: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
    if all(all(_same_values(t, target) for t in column) and (target.kind != "O" or len(column) < 2)
           for column, target in zip(tags, targets)):  # each value its own key (one type a column)
        for raw in raw_keys:
            groups.setdefault(raw[1], []).append(raw)
        dtypes = targets
    else:
        written, dtypes = [], []
        for j, target in enumerate(targets):
            values, dtype = _converted({(t[j], v[j]) for t, v in raw_keys if t[j] is not None}, target)
            written.append(values)
            dtypes.append(dtype)
        for raw in raw_keys:
            key = tuple(None if t is None else written[j][t, v] for j, (t, v) in enumerate(zip(*raw)))
            groups.setdefault(key, []).append(raw)
    keys = list(groups)
    return _View(keys, groups, [_column_array([k[j] for k in keys], dtypes[j]) for j in range(len(columns))])


def _batch_type(dtype: np.dtype) -> np.dtype:
    """A batch column's type as a stream keeps it: native byte order, strings of any length as
    one (what the concatenation's type and the values' texts do not depend on)."""
    if dtype.kind in "US":
        return np.dtype(f"{dtype.kind}1")
    return dtype.newbyteorder("=")


def _common(types: set[np.dtype]) -> np.dtype:
    """The type of ``np.concatenate`` of columns of these types (in any order): numpy's promotion,
    objects where there is none or where a type would not cast to it (dates beside numbers,
    dates beside durations)."""
    ordered = sorted(types, key=lambda d: d.str)
    try:
        common = np.result_type(*ordered)
    except TypeError:
        return np.dtype(object)
    return common if all(np.can_cast(d, common, "same_kind") for d in ordered) else np.dtype(object)


_TAGS = {"b": "|b1", "i": "<i8", "u": "<u8", "U": "<U0", "S": "|S0"}


def _tag(dtype: np.dtype) -> str:
    """The tag of a typed batch's values (:func:`_raw`): integers as 64-bit (signed or not),
    strings of any length as one; other types as they are."""
    return _TAGS.get(dtype.kind) or dtype.newbyteorder("=").str


def _object_tag(value: Any) -> str:
    """The tag of a value of an object batch: "O:" and its type (numbers by their kind)."""
    rank, name = _type_rank(type(value))
    return "O:" + (name or ("bool", "int", "float", "complex")[rank - 1])


def _raw_keys(codes: SliceCodes) -> list[tuple[tuple[str | None, ...], tuple[Any, ...]]]:
    """The raw keys of a batch's slices (one tuple of tags for the keys of typed columns)."""
    tags = tuple(None if d.kind == "O" else _tag(d) for d in codes.dtypes)
    nan = tuple(d.kind in "fc" for d in codes.dtypes)
    if None not in tags and all(nan):
        return [(tags, key) for key in codes.keys]
    return [(tags if None not in tags and None not in key else tuple(
        None if v is None and not f else t or _object_tag(v) for v, t, f in zip(key, tags, nan)), key)
        for key in codes.keys]


def _raw_key(elements: list[tuple[str, Any] | None]) -> tuple[tuple[str | None, ...], tuple[Any, ...]]:
    """A raw key from each column's ``(tag, value)`` or None (missing)."""
    return (tuple(None if e is None else e[0] for e in elements), tuple(None if e is None else e[1] for e in elements))


def _typed(tag: str) -> np.dtype:
    return np.dtype(object) if tag.startswith("O") else np.dtype(tag)


def _same_values(tag: str, target: np.dtype) -> bool:
    """Whether values of ``tag`` are the same keys in a column of ``target`` (no cast needed):
    the same tag, integers among integers, float or complex values among wider ones."""
    if tag.startswith("O") or target.kind == "O":
        return tag.startswith("O") and target.kind == "O"
    kind = tag[1]
    return tag == _tag(target) or (kind in "iu" and target.kind in "iu") or (
        kind == target.kind and kind in "fc" and target.itemsize <= (8 if kind == "f" else 16))


def _converted(elements: set[tuple[str, Any]], target: np.dtype) -> tuple[dict[tuple[str, Any], Any], np.dtype]:
    """Each raw ``(tag, value)`` of a column as its key in a column of ``target`` (numpy's cast
    from the value's own type, as ``np.concatenate`` casts it), and the type used: objects when a
    cast fails (bytes that are not ASCII among strings).  In an object column, equal values of
    other types are one key, the widest (:func:`precall.slices._widest`)."""
    by_tag: dict[str, list[Any]] = {}
    out: dict[tuple[str, Any], Any] = {}
    for tag, value in elements:
        if value is None and target.kind not in "US":  # NaN: missing, unless written as text ('nan')
            out[tag, value] = None
        else:
            by_tag.setdefault(tag, []).append(value)
    try:
        for tag, values in by_tag.items():
            if _same_values(tag, target):
                out.update(((tag, v), v) for v in values)
                continue
            cast = np.array(values, dtype=_typed(tag)).astype(np.dtype(target.kind) if target.kind in "US" else target)
            out.update(zip(((tag, v) for v in values), _level_list(cast)))
    except (TypeError, ValueError, OverflowError):
        if target.kind == "O":
            raise
        return _converted(elements, np.dtype(object))
    if target.kind == "O" and len(by_tag) > 1:
        widest: dict[Any, Any] = {}
        for value in out.values():
            held = widest.get(value, _ABSENT)
            if held is _ABSENT or _type_rank(type(value)) > _type_rank(type(held)):
                widest[value] = value
        out = {e: widest[v] for e, v in out.items()}
    return out, target


_ABSENT = object()


def _column_array(values: list[Any], dtype: np.dtype) -> np.ndarray:
    """A column of the keys' values in its type, as :func:`slice_codes` reads it (missing as the
    type's missing value: NaN, NaT, the empty string; integers and booleans with a missing value,
    as pandas' nullable columns give them, as objects)."""
    if dtype.kind == "O" or (dtype.kind in "biu" and None in values):  # pandas' nullable ints and booleans
        return _objects(values)
    blank = {"U": "", "S": b""}.get(dtype.kind)
    return np.array([blank if v is None else v for v in values], dtype=np.dtype(dtype.kind) if dtype.kind in "US"
                    else dtype)


def _values_array(values: list[Any]) -> np.ndarray:
    """A column of ``values`` as ``by=`` types a list of them (:func:`~precall._core.validate.label_array`:
    ints and floats, floats; numbers and strings, objects, ``1`` and ``"1"`` two slices; with None,
    objects), or objects where numpy makes no 1-D array."""
    try:
        arr = label_array(values, "mapping", objects=True)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.ndim != 1 or arr.shape[0] != len(values):
        return _objects(values)
    return arr


def _raw(value: Any, tag: str | None, types: set[np.dtype] | None = None) -> tuple[str, Any]:
    """A raw key value read from a payload: ``tag`` None (version 1) or "O" (an object column's
    value) tags it by its type; a typed value must be of its tag (one of its column's types) and
    written as that type writes it; a missing one (None) only a float's NaN."""
    if value is None:
        if tag not in {_tag(d) for d in types or () if d.kind in "fc"}:
            raise ValueError("corrupt SlicedAccumulator payload: a missing value tagged other than a float's NaN")
        return tag, None
    if tag is None or tag == "O":
        if tag == "O" and np.dtype(object) not in (types or ()):
            raise ValueError("corrupt SlicedAccumulator payload: an object value in a column without objects")
        return _object_tag(value), value
    if not isinstance(tag, str) or tag not in {_tag(d) for d in types or () if d.kind != "O"}:
        raise ValueError(f"corrupt SlicedAccumulator payload: slice value type {tag!r:.40} not among its column's")
    try:
        written = _level_list(np.array([value], dtype=_typed(tag)))[0]
    except (TypeError, ValueError, OverflowError):
        written = _ABSENT
    if type(written) is not type(value) or written != value or written in ("", b""):
        raise ValueError(f"corrupt SlicedAccumulator payload: slice value {value!r:.40} is not of type {tag}")
    return tag, value


def _types_of(raw: Any, width: int) -> list[set[np.dtype]] | None:
    """Each column's batch types from a payload, checked."""
    if raw is None and width == 0:
        return None
    if not isinstance(raw, list) or len(raw) != width or not all(
            isinstance(t, list) and t and all(isinstance(s, str) for s in t) for t in raw):
        raise ValueError(f"corrupt SlicedAccumulator payload: types must be lists of {width} column type lists")
    out = []
    for names in raw:
        types = set()
        for name in names:
            try:
                dtype = np.dtype(name)
            except (TypeError, ValueError):
                dtype = None
            if dtype is None or dtype.kind not in "biufcUSMmO" or dtype.str != name or _batch_type(dtype) != dtype:
                raise ValueError(f"corrupt SlicedAccumulator payload: column type {name!r:.40}")
            types.add(dtype)
        out.append(types)
    return out


def _meta(raw: np.ndarray) -> dict[str, Any]:
    """The metadata record, every field checked."""
    try:
        meta = json.loads(raw.tobytes().decode("utf-8")) if raw.dtype == np.uint8 else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        meta = None
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise ValueError("not a precall SlicedAccumulator payload (no format marker)")
    if meta.get("version") not in (1, _VERSION) or type(meta.get("version")) is not int:
        raise ValueError(f"SlicedAccumulator payload version {meta.get('version')!r} is not supported (this precall "
                         f"reads versions 1 to {_VERSION})")
    fields = {"format", "version", "pos_label", "columns", "keys"} | ({"types"} if meta["version"] > 1 else set())
    if set(meta) != fields:
        raise ValueError(f"corrupt SlicedAccumulator payload: metadata fields {sorted(meta)}")
    scalar = (str, int, float, bool, type(None))
    columns, keys = meta["columns"], meta["keys"]
    if not isinstance(meta["pos_label"], scalar) or not (
            columns is None or (isinstance(columns, list) and all(isinstance(c, str) for c in columns))):
        raise ValueError("corrupt SlicedAccumulator payload: pos_label or columns")
    width = len(columns or ())

    def value(v: Any) -> bool:
        return isinstance(v, scalar) or _is_time_record(v)

    def element(e: Any) -> bool:  # version 2: missing, or [type, value]
        return e is None or (isinstance(e, list) and len(e) == 2 and isinstance(e[0], str) and value(e[1]))

    if not isinstance(keys, list) or not all(isinstance(k, list) and len(k) == width and
                                             all(value(v) if meta["version"] == 1 else element(v) for v in k)
                                             for k in keys):
        raise ValueError(f"corrupt SlicedAccumulator payload: keys must be lists of {width} values")
    return meta


# slice values that JSON has no type for: {kind: ISO text}, read back by the kind's parser
def _pandas_timestamp(text: str) -> Any:
    import pandas as pd  # noqa: PLC0415  (only a payload of pandas Timestamps holds one)

    return pd.Timestamp(text)


def _datetime64(text: str) -> np.datetime64:
    """A numpy datetime64 from its ISO text and unit (``2020-01-02T00:00:00.000000001[ns]``)."""
    iso, bracket, unit = text.rpartition("[")
    if not bracket or not unit.endswith("]"):
        raise ValueError(text)
    try:
        return np.datetime64(iso, unit[:-1])
    except TypeError:  # not a unit
        raise ValueError(text) from None


def _timedelta64(text: str) -> np.timedelta64:
    """A numpy timedelta64 from its count and unit (``-1000000001[ns]``)."""
    count, bracket, unit = text.rpartition("[")
    if not bracket or not unit.endswith("]") or not count.lstrip("-").isdigit():
        raise ValueError(text)
    try:
        return np.timedelta64(int(count), unit[:-1])
    except (TypeError, OverflowError):  # not a unit
        raise ValueError(text) from None


def _timedelta(text: str) -> datetime.timedelta:
    """A Python timedelta from its days, seconds and microseconds (``-1,86399,999999``)."""
    parts = text.split(",")
    if len(parts) != 3 or not all(p.lstrip("-").isdigit() for p in parts):
        raise ValueError(text)
    try:
        return datetime.timedelta(days=int(parts[0]), seconds=int(parts[1]), microseconds=int(parts[2]))
    except OverflowError:
        raise ValueError(text) from None


_TIME_KINDS: dict[str, Callable[[str], Any]] = {
    "date": datetime.date.fromisoformat,
    "datetime": datetime.datetime.fromisoformat,
    "timestamp": _pandas_timestamp,  # pandas: nanoseconds and its time zones kept
    "datetime64": _datetime64,  # what Python's datetime cannot hold (nanoseconds, years past 9999), with its unit
    "timedelta": _timedelta,
    "timedelta64": _timedelta64,  # what Python's timedelta cannot hold (nanoseconds), with its unit
}


def _shipped(value: Any) -> Any:
    """A slice value as JSON: strings, numbers, booleans and None (missing) as they are; a date
    or datetime (what a numpy datetime64 or a pandas Timestamp slice column gives) as a
    ``{kind: ISO text}`` record (:data:`_TIME_KINDS`).  Anything else: TypeError."""
    if isinstance(value, np.datetime64):  # NaT is missing in the slices: None, never here
        if not isinstance(value.item(), datetime.date):  # nanoseconds, a year past 9999
            unit, count = np.datetime_data(value.dtype)
            return {"datetime64": f"{np.datetime_as_string(value)}[{'' if count == 1 else count}{unit}]"}
        value = value.item()
    if isinstance(value, np.timedelta64):
        if not isinstance(value.item(), datetime.timedelta):  # nanoseconds, years, months
            unit, count = np.datetime_data(value.dtype)
            return {"timedelta64": f"{int(value.astype(np.int64))}[{'' if count == 1 else count}{unit}]"}
        value = value.item()
    if isinstance(value, datetime.timedelta) and type(value) is datetime.timedelta:
        return {"timedelta": f"{value.days},{value.seconds},{value.microseconds}"}
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
