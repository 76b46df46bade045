"""Exact streaming by slice: the distinct (slice, score) pairs with their weights, in flat arrays.

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

The state is columnar: every distinct (slice, score) pair with its positive and negative
count (or weight) in flat arrays sorted by slice, then score (:class:`_Pairs`: 16 bytes a pair
without weights, 24 with, plus each distinct score once), an :class:`Accumulator` of all the
rows (the ``overall`` evaluation), and the rows given per slice (``n_samples``, zero weights
included, as in memory); the slices' keys in a dict from raw key to slice number.  Memory
grows with the distinct (slice, score) pairs and the slices, not with the rows.  A batch is one
sorted run of pairs and runs are merged as :class:`Accumulator`'s are (a binary counter of
linear merges); :meth:`SlicedAccumulator.evaluate` computes every slice from one order of the
pairs (slices in the in-memory order, scores decreasing) with the in-memory route's kernels
(:func:`precall.slices._steps_of_runs` for counts; each slice's compensated sums for weights)
and one kernel call per size bucket of slices (:func:`precall.slices.sliced_evaluation_of`).
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import io
import json
from typing import Any, Callable, Sequence

import numpy as np

from .._core.sort import distinct_counts, sorted_scores
from .._core.validate import check_binary, check_number, label_array, check_on_undefined, check_options, \
    check_pos_label, is_multi, zero_weight_batch
from .._core.metric import Metric
from ..slices import SliceCodes, SlicedEvaluation, SlicedSteps, SlicedTables, SlicedValues, _changes, \
    _check_min_support, _level_list, _objects, _Ragged, _segmented_cumsum, _steps_of_runs, _type_rank, slice_codes, \
    sliced_evaluation_of, sliced_tables, sliced_values_of
from ..table import ThresholdTable
from .accumulator import _COUNT_DTYPES, _SCORE_DTYPES, Accumulator, _check_table, _merge_two, _plain, \
    _MAX_COUNT, _read_payload, _same_label, count_total, float_scores, score_sums, state_from_sorted, table_of_state

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
        # the slices by raw key: each value with the type its batch gave it (_raw_keys), so that the
        # names made at the end (_view) are those of the concatenated column, in any batch order; a
        # raw key's number (in the order first seen) is its slice in the pairs
        self._index = _Keys()
        self._rows = np.zeros(0, dtype=np.int64)  # rows given per raw key (zero weights included)
        self._pairs = _Stack()  # the distinct (slice, score) pairs: sorted runs waiting to be merged
        self._all = Accumulator(pos_label=self.pos_label)
        self._n_samples = 0
        self._types: list[set[np.dtype]] | None = None  # each column's batch types (_batch_type)
        self._view: _View | None = None  # the slices as in memory: until a new raw key or type

    # -- feeding --------------------------------------------------------------
    def update(self, y_true: Any, y_score: Any, *, by: Any, sample_weight: Any = None) -> "SlicedAccumulator":
        """Add a batch; ``by`` as in :func:`precall.evaluate` (one or more slice columns,
        a dict or a pandas DataFrame), one value per row.  Returns ``self``."""
        if is_multi(y_true, y_score):
            raise ValueError("`by` applies to binary input; got multi-class or multi-label input. Accumulate "
                             "each class column as a binary problem (y_true == c, y_score[:, c])")
        # a batch whose weights are all zero is checked and adds only its rows' count, as Accumulator
        zero = zero_weight_batch(sample_weight, np.shape(y_true)[0] if np.ndim(y_true) else 0,
                                 lambda: check_binary(y_true, y_score, None, self.pos_label, batch=True))
        nothing = zero is not None
        data = zero if nothing else check_binary(y_true, y_score, sample_weight, self.pos_label, batch=True)
        scores = float_scores(data.scores)  # as Accumulator holds them, checked before the state changes
        codes = slice_codes(by, data.n_samples, named=False)
        if self.columns is not None and codes.columns != self.columns:
            raise ValueError(f"`by` must name the same slice columns in every batch ({list(self.columns)}); got "
                             f"{list(codes.columns)}. Pass the columns in the same order, with the same names")
        kept = codes.codes
        if data.scores.shape[0] < data.n_samples:  # zero weights were set aside
            kept = kept[np.asarray(sample_weight, dtype=np.float64).ravel() > 0]
        if data.weight is None and not nothing and kept.shape[0]:  # rows counted in the overall table (the
            self._all._count(kept.shape[0])  # slices' counts add up to its), refused before the state changes
        if self.columns is None:
            self.columns = codes.columns
        if self._types is None:
            self._types = [set() for _ in codes.columns]
        for types, dtype in zip(self._types, codes.dtypes):
            if _batch_type(dtype) not in types:  # a new type: the names are made again
                types.add(_batch_type(dtype))
                self._view = None
        if data.weight is not None and not nothing:  # the rows checked once: as Accumulator.update adds them
            self._all._add(0, scores, data.positive, data.weight)
        self._n_samples += data.n_samples
        index = self._index
        known = len(index)
        at = index.of_batch(codes)  # each of the batch's slices: its number in the state
        if len(index) > known:
            self._view = None
            self._rows = np.concatenate([self._rows, np.zeros(len(index) - known, dtype=np.int64)])
        self._rows[at] += codes.rows()
        if nothing:
            return self
        if kept.shape[0]:
            pairs = _batch_pairs(at[kept], scores, data.positive, data.weight)
            self._pairs.push(pairs)
            if data.weight is None:  # all the rows' counts from the batch's pairs: no row waits to be sorted
                self._all._pending[0].push(_overall(pairs, kept.shape[0]))
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
        index = out._index = self._index.copy()
        at = index.merged(other._index)  # other's slices: their numbers in out
        out._rows = np.zeros(len(index), dtype=np.int64)
        out._rows[:self._rows.shape[0]] = self._rows
        out._rows[at] += other._rows
        mine, theirs = self._state(), other._state()
        if mine is not None:
            out._pairs.push(mine)
        if theirs is not None:
            out._pairs.push(_renumbered(theirs, at))
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
        if not len(self._index):
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
        codes = slice_codes({c: _values_array([k[j] for k in new]) for j, c in enumerate(columns)}, len(new),
                            named=False)
        del new
        out._types = [{_batch_type(d)} for d in codes.dtypes]
        first = list(dict.fromkeys(codes.codes.tolist()))  # the new slices in the order first met
        number = np.empty(codes.m, dtype=np.int64)
        number[first] = np.arange(len(first))
        out._index.of_batch(codes, first)
        target = number[codes.codes][view.raw_to_view]  # each slice of the state: its slice in out
        out._rows = np.zeros(len(first), dtype=np.int64)
        np.add.at(out._rows, target, self._rows)
        state = self._state()
        if state is not None:  # the merged slices' weights added in the order of their names (view), then raw keys
            sl, rank, pos, neg = _regroup(state, target, order=np.argsort(view.raw_to_view, kind="stable"))
            out._pairs.push(_Pairs(_compose(sl, rank, state.bits), pos, neg, state.scores, state.bits))
        return out

    # -- the slices as in memory ----------------------------------------------------
    def _view_of(self) -> "_View":
        """The slices as :func:`precall.evaluate` names them on the concatenated column (kept
        until a new raw key or batch type: :class:`_View`)."""
        if self._view is None:
            self._view = _view(self._index, self._types or [], self.columns or ())
        return self._view

    def _state(self) -> "_Pairs | None":
        """Every distinct (slice, score) pair as one sorted run (None: no pair yet)."""
        return self._pairs.collapse()

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
        at = view.index.get(key) if isinstance(key, tuple) else None
        if at is None:
            raise ValueError(f"`key` must be a slice of the accumulator; got {key!r} (the slices: "
                             f"{view.keys[:5]}{' ...' if len(view.keys) > 5 else ''})")
        state = self._state()
        if state is None:
            return table_of_state(np.zeros(0), np.zeros(0, dtype=np.uint32), np.zeros(0, dtype=np.uint32))
        # the slice's raw keys, merged one after another (as their accumulators were)
        parts = [state.segment(int(r)) for r in np.flatnonzero(view.raw_to_view == at)]
        one = functools.reduce(_merge_pairs, parts)
        return table_of_state(one.scores[one.ranks()], one.pos, one.neg)

    @property
    def keys(self) -> list[tuple[Any, ...]]:
        """The slices seen, each a tuple of one value per slice column (``None``: missing), in
        the order first seen (:meth:`evaluate` orders them as :func:`precall.evaluate` does);
        the values as :func:`precall.evaluate` gives them on all the rows."""
        return list(self._view_of().keys)

    def __len__(self) -> int:
        return self._view_of().size

    def __repr__(self) -> str:
        by = ", ".join(self.columns or ())
        return f"SlicedAccumulator({len(self)} slices by {by or '-'}, {int(self._rows.sum())} rows)"

    def evaluate(self, *, recall_grid: str = "reference", on_undefined: Any = "warn",
                 min_support: int = 0) -> SlicedEvaluation:
        """The :class:`~precall.SlicedEvaluation` of everything seen: what
        ``precall.evaluate(y, s, by=..., recall_grid=..., on_undefined=..., min_support=...)``
        gives on all the rows (grouped ties)."""
        check_options(recall_grid=recall_grid)
        policy = check_on_undefined(on_undefined)
        min_support = _check_min_support(min_support)
        codes, final = self._ordered()
        overall = dataclasses.replace(self._all.evaluate(recall_grid=recall_grid, on_undefined=policy),
                                      n_samples=self._n_samples)
        # every slice's steps from the pairs at once: the numbers of the in-memory route, a batch at a time
        st = self._sliced_steps(final, codes.m)
        return sliced_evaluation_of(st, overall, codes, self._given(final, codes.m), ties="group",
                                    recall_grid=recall_grid, policy=policy, min_support=min_support)

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
        codes, final = self._ordered()
        st = self._sliced_steps(final, codes.m)
        return sliced_values_of(metric, st, float(self._all.score(metric)), codes, self._given(final, codes.m),
                                min_support)

    def tables(self, *, min_support: int = 0, on_undefined: Any = "warn") -> SlicedTables:
        """The :class:`~precall.SlicedTables` of everything seen: what
        ``precall.threshold_table(y, s, by=..., min_support=..., on_undefined=...)`` gives on all
        the rows (grouped ties): each slice's table and the overall one."""
        min_support = _check_min_support(min_support)
        policy = check_on_undefined(on_undefined)
        codes, final = self._ordered()
        state = self._state()
        if state is None:
            sl, rank = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
            pos = neg = np.zeros(0, dtype=np.uint32)
            scores = np.zeros(0)
        else:
            sl, rank, pos, neg = _regroup(state, final)
            scores = state.scores
        bounds = np.searchsorted(sl, np.arange(codes.m + 1)).tolist()
        tables = {name: table_of_state(scores[rank[a:b]], pos[a:b], neg[a:b])
                  for name, a, b in zip(codes.names, bounds[:-1], bounds[1:])}
        return sliced_tables(codes, tables, self._all.table(), self._given(final, codes.m), min_support, policy)

    def _ordered(self) -> tuple[SliceCodes, np.ndarray]:
        """The slice codes of the keys (the in-memory order and names) and each raw key's place in
        that order."""
        if not len(self._index):
            raise ValueError("the accumulator has seen no row yet; update() it with a batch first")
        view = self._view_of()
        # the in-memory order and names: the slice codes of the keys themselves (each key once), each
        # column in its type
        codes = slice_codes(dict(zip(self.columns or (), view.arrays)), view.size)
        return codes, codes.codes.astype(np.int64)[view.raw_to_view]

    def _given(self, final: np.ndarray, m: int) -> np.ndarray:
        """The rows given to each slice in the in-memory order."""
        given = np.zeros(m, dtype=np.int64)
        np.add.at(given, final, self._rows)
        return given

    def _sliced_steps(self, final: np.ndarray, m: int) -> SlicedSteps:
        """The steps of every slice (grouped ties), the slices in the in-memory order (``final``:
        each raw key's place), from the pairs at once: without weights the in-memory route's
        counted steps (:func:`precall.slices._steps_of_runs`); with weights each slice's
        compensated sums (:func:`precall.slices._segmented_cumsum`), as :class:`Accumulator`
        makes one slice's (:func:`precall.scale.accumulator._steps`)."""
        state = self._state()
        if state is None:
            none = np.zeros(0, dtype=np.int64)
            r = _Ragged(none, none, none, none, none, np.zeros(0, dtype=np.float32))
            return SlicedSteps(r, r, np.zeros(m), np.zeros(m), True, m)
        sl, rank, pos, neg = _regroup(state, final, descending=True)

        def scores_of(ranks: np.ndarray) -> np.ndarray:
            return state.scores[ranks]

        if pos.dtype.kind in "iu" and neg.dtype.kind in "iu":
            steps, _, n_pos, n_neg = _steps_of_runs(sl, rank, pos.astype(np.int64), neg.astype(np.int64), m,
                                                    "group", scores_of)  # type: ignore[misc]
            return SlicedSteps(steps, steps, n_pos, n_neg, True, m)
        pos, neg = pos.astype(np.float64, copy=False), neg.astype(np.float64, copy=False)
        lengths = np.bincount(sl, minlength=m)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        cum_neg = _segmented_cumsum(neg, starts, lengths)
        rows = np.flatnonzero(pos)
        slice_of = sl[rows]
        fp = cum_neg[rows]
        fp_prev = np.where(rows == starts[slice_of], 0.0, cum_neg[rows - 1])
        dtp = pos[rows]
        step_lengths = np.bincount(slice_of, minlength=m)
        step_starts = np.concatenate([[0], np.cumsum(step_lengths)[:-1]]).astype(np.int64)
        tp = _segmented_cumsum(dtp, step_starts, step_lengths)
        n_pos, n_neg = np.zeros(m), np.zeros(m)
        some = step_lengths > 0
        n_pos[some] = tp[step_starts[some] + step_lengths[some] - 1]
        some = lengths > 0
        n_neg[some] = cum_neg[starts[some] + lengths[some] - 1]
        r = _Ragged(slice_of, tp, fp, dtp, fp_prev, scores_of(rank[rows]))
        return SlicedSteps(r, r, n_pos, n_neg, False, m)

    # -- shipping ---------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The state as a versioned ``.npz`` payload (no pickle): the slice keys in a JSON
        record (each value with its batch's numpy type; dates and datetimes as ISO texts, read
        back as the same values) beside each column's batch types, every slice's table one
        after another in flat arrays."""
        keys = self._index.raw()
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
        self._all._flush(0)
        a_scores, a_pos, a_neg = self._all._scores[0], self._all._pos[0], self._all._neg[0]
        state = self._state()
        if state is None:
            sizes = np.zeros(len(keys), dtype=np.int64)
            scores, pos, neg = np.zeros(0), np.zeros(0, dtype=np.uint32), np.zeros(0, dtype=np.uint32)
        else:
            sizes = np.bincount(state.slices(), minlength=len(keys)).astype(np.int64)
            scores, pos, neg = state.scores[state.ranks()], state.pos, state.neg
        dtype = np.result_type(a_pos.dtype, pos.dtype)
        arrays = {
            "meta": np.frombuffer(meta.encode("utf-8"), dtype=np.uint8),
            "sizes": np.concatenate([[a_scores.size], sizes]).astype(np.int64),
            "rows": self._rows.astype(np.int64),
            "scores": np.concatenate([a_scores.astype(np.float64), scores.astype(np.float64)]),
            "pos": np.concatenate([a_pos.astype(dtype), pos.astype(dtype)]),
            "neg": np.concatenate([a_neg.astype(dtype), neg.astype(dtype)]),
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
        index = _Keys()
        index.numbers(keys)
        if len(index) != len(keys):
            raise ValueError("corrupt SlicedAccumulator payload: a slice appears twice")
        sizes, rows = arrays["sizes"], arrays["rows"]
        if sizes.dtype.kind != "i" or rows.dtype.kind != "i" or sizes.size != len(keys) + 1 or \
                rows.size != len(keys) or (sizes < 0).any() or (rows < 0).any() or \
                int(sizes.sum()) != arrays["scores"].size:
            raise ValueError("corrupt SlicedAccumulator payload: table sizes do not match the slices and scores")
        scores, pos, neg = arrays["scores"], arrays["pos"], arrays["neg"]
        _check_tables(sizes, scores, pos, neg)
        head = int(sizes[0])
        counted = count_total(pos[:head], neg[:head])  # the overall table's rows (integer counts), at most 2**63 - 1
        if counted > _MAX_COUNT:
            raise ValueError(f"corrupt SlicedAccumulator payload: the overall table counts {counted} rows, beyond the "
                             "2**63 - 1 an int64 count holds")
        if count_total(pos[head:], neg[head:]) > counted:  # the slices' rows add up to its: a merge stays bounded
            raise ValueError("corrupt SlicedAccumulator payload: the slices count more rows than the overall table")
        out = cls(pos_label=meta["pos_label"])
        out._all._counted = [counted]
        out.columns = columns
        out._types = types
        if head:
            out._all._pending[0].push((scores[:head], pos[:head], neg[:head]))
            out._all._flush(0)
        out._index = index
        out._rows = rows.astype(np.int64)
        out._n_samples = int(rows.sum())
        if scores.size > head:
            sl = np.repeat(np.arange(len(keys), dtype=np.int64), sizes[1:])
            s = scores[head:]
            distinct = np.unique(s)
            bits = _bits(distinct.size)
            out._pairs.push(_Pairs(_compose(sl, np.searchsorted(distinct, s), bits), pos[head:], neg[head:],
                                   distinct, bits))
        return out.relabel(lambda key: key) if meta["version"] == 1 and len(out._index) else out


# ---------------------------------------------------------------------------
# the state: the distinct (slice, score) pairs in flat arrays
#
# One sorted run holds every pair of a set of slices: ``key = slice << bits | rank`` (uint64, strictly
# increasing: by slice, then by score), ``rank`` the score's place among the run's distinct scores
# (``scores``, sorted), and the positive and negative weight of each pair (uint32 counts while no count
# can reach 2**32, then int64; float64 sums with weights).  A batch becomes one run (its positives' and
# its negatives' keys sorted apart and counted, as Accumulator does; with weights each pair's sums by
# score_sums), and runs are merged like Accumulator's runs (a binary counter of linear merges: the
# union of the two runs' scores, each run's ranks moved to it, then the merge of the keys).  16 bytes a
# pair without weights (8 of key, 4 + 4 of counts), 24 with weights, plus the distinct scores once.
@dataclasses.dataclass(frozen=True)
class _Pairs:
    key: np.ndarray  # uint64: slice << bits | rank, strictly increasing
    pos: np.ndarray
    neg: np.ndarray
    scores: np.ndarray  # the distinct scores the ranks index, increasing (float32 or float64)
    bits: int

    @property
    def size(self) -> int:
        return int(self.key.shape[0])

    def slices(self) -> np.ndarray:
        return (self.key >> np.uint64(self.bits)).astype(np.int64)

    def ranks(self) -> np.ndarray:
        return (self.key & np.uint64((1 << self.bits) - 1)).astype(np.int64)

    def segment(self, s: int) -> "_Pairs":
        """The pairs of slice ``s`` (as slice 0)."""
        lo, hi = np.searchsorted(self.key, np.array([s, s + 1], dtype=np.uint64) << np.uint64(self.bits))
        return _Pairs(self.key[lo:hi] & np.uint64((1 << self.bits) - 1), self.pos[lo:hi], self.neg[lo:hi],
                      self.scores, self.bits)


def _bits(n_distinct: int) -> int:
    """The bits of a rank among ``n_distinct`` scores."""
    return max(0, int(n_distinct) - 1).bit_length()


def _compose(slices: np.ndarray, ranks: np.ndarray, bits: int) -> np.ndarray:
    """The keys ``slice << bits | rank`` (uint64)."""
    if bits and slices.shape[0] and int(slices.max()) >> (64 - bits):
        raise ValueError("too many slices and distinct scores for the accumulator's 64-bit keys")
    key = slices.astype(np.uint64)
    key <<= np.uint64(bits)
    key |= ranks.astype(np.uint64, copy=False)
    return key


def _batch_pairs(slices: np.ndarray, scores: np.ndarray, positive: np.ndarray, weight: np.ndarray | None) -> _Pairs:
    """One batch's rows (``slices``: each row's slice) as a run of pairs.  As :class:`Accumulator`:
    float32 scores stay float32, -0.0 is 0.0; without weights the positives' and the negatives' keys
    are sorted apart and counted (uint32); with weights each pair's sums are those
    :func:`~precall.scale.accumulator.score_sums` gives the slice's rows of the batch alone (the
    plain sums for every score of a slice with at most two rows at each)."""
    s = scores  # float_scores: float32 stays float32, -0.0 is 0.0
    distinct = distinct_counts(sorted_scores(s))[0]
    bits = _bits(distinct.size)
    key = _compose(slices, np.searchsorted(distinct, s), bits)
    del s
    if weight is None:
        k, p, n = state_from_sorted(np.sort(key[positive]), np.sort(key[~positive]))
        return _Pairs(k, p, n, distinct, bits)
    k, inverse = np.unique(key, return_inverse=True)
    inverse = inverse.ravel()
    rows = np.bincount(inverse, minlength=k.shape[0])
    first = _changes(k >> np.uint64(bits))  # each slice's first pair
    plain = np.repeat(np.maximum.reduceat(rows, first) <= 2, np.diff(np.append(first, k.shape[0])))
    p = score_sums(inverse, np.where(positive, weight, 0.0), k.shape[0], plain)
    n = score_sums(inverse, np.where(positive, 0.0, weight), k.shape[0], plain)
    return _Pairs(k, p, n, distinct, bits)


def _overall(p: _Pairs, rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An unweighted batch's run for the :class:`Accumulator` of all the rows: each score's counts
    summed over the slices (exact), as that accumulator counts the batch's rows (uint32 counts)."""
    rank, size = p.ranks(), p.scores.shape[0]
    dtype = np.uint32 if rows < 1 << 32 else np.int64
    return (p.scores, np.bincount(rank, weights=p.pos, minlength=size).astype(dtype),
            np.bincount(rank, weights=p.neg, minlength=size).astype(dtype))


def _union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The sorted distinct values of two sorted distinct arrays (in their common type)."""
    dtype = np.result_type(a.dtype, b.dtype)
    a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
    if a.shape[0] < b.shape[0]:
        a, b = b, a
    at = np.searchsorted(a, b)
    hit = at < a.shape[0]
    hit[hit] = a[at[hit]] == b[hit]
    if hit.all():
        return a
    new = ~hit
    return np.insert(a, at[new], b[new])


def _rekey(p: _Pairs, scores: np.ndarray, bits: int) -> np.ndarray:
    """The keys of ``p`` with its ranks among ``scores`` (which hold its scores)."""
    if bits == p.bits and scores.shape[0] == p.scores.shape[0]:
        return p.key
    return _compose(p.slices(), np.searchsorted(scores, p.scores)[p.ranks()], bits)


def _merge_pairs(a: _Pairs, b: _Pairs) -> _Pairs:
    """The pairs of both runs, the weights of equal pairs added (one addition: commutative)."""
    if not a.size:
        return b
    if not b.size:
        return a
    scores = _union(a.scores, b.scores)
    bits = _bits(scores.shape[0])
    key, pos, neg = _merge_two((_rekey(a, scores, bits), a.pos, a.neg), (_rekey(b, scores, bits), b.pos, b.neg))
    return _Pairs(key, pos, neg, scores, bits)


class _Stack:
    """Runs of pairs waiting to be merged, kept like :class:`Accumulator`'s: a run is merged with
    the one below it when that one is no larger (n pairs cost O(n log n) in linear merges)."""

    def __init__(self) -> None:
        self.runs: list[_Pairs] = []

    def push(self, run: _Pairs) -> None:
        if not run.size:
            return
        self.runs.append(run)
        while len(self.runs) > 1 and self.runs[-2].size <= self.runs[-1].size:
            top = self.runs.pop()
            self.runs[-1] = _merge_pairs(self.runs[-1], top)

    def collapse(self) -> _Pairs | None:
        while len(self.runs) > 1:
            top = self.runs.pop()
            self.runs[-1] = _merge_pairs(self.runs[-1], top)
        return self.runs[0] if self.runs else None


def _starts(lengths: np.ndarray) -> np.ndarray:
    out = np.zeros(lengths.shape[0], dtype=np.int64)
    np.cumsum(lengths[:-1], out=out[1:])
    return out


def _regroup(p: _Pairs, target: np.ndarray, *, order: np.ndarray | None = None, descending: bool = False
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pairs of ``p`` with slice ``s`` moved to slice ``target[s]``: ``(slice, rank, pos, neg)``
    sorted by the new slice, then by score (decreasing with ``descending``).  The pairs of a score
    of slices moved to one slice are summed one after another, the slices in ``order`` (default:
    by number), as the accumulators of the slices were merged.  O(pairs) (a gather by whole
    slices) unless slices are merged (then a stable sort of the new keys)."""
    n_old = target.shape[0]
    sl, rank = p.slices(), p.ranks()
    if not descending and order is None and (n_old < 2 or bool((np.diff(target) > 0).all())):
        return target[sl], rank, p.pos, p.neg  # the slices keep their order
    lengths = np.bincount(sl, minlength=n_old)
    olds = np.arange(n_old, dtype=np.int64) if order is None else order
    olds = olds[np.argsort(target[olds], kind="stable")]
    moved = lengths[olds]
    if descending:
        idx = np.repeat(_starts(lengths)[olds] + moved - 1 + _starts(moved), moved)
        idx -= np.arange(p.size, dtype=np.int64)
    else:
        idx = np.repeat(_starts(lengths)[olds] - _starts(moved), moved)
        idx += np.arange(p.size, dtype=np.int64)
    new_sl = target[sl[idx]]
    rank, pos, neg = rank[idx], p.pos[idx], p.neg[idx]
    del sl, idx
    filled = target[lengths > 0]
    if np.unique(filled).shape[0] == filled.shape[0]:  # no two slices with pairs moved to one
        return new_sl, rank, pos, neg
    key = _compose(new_sl, ((1 << p.bits) - 1) - rank if descending else rank, p.bits)
    by = np.argsort(key, kind="stable")
    key, new_sl, rank, pos, neg = key[by], new_sl[by], rank[by], pos[by], neg[by]
    first = _changes(key)
    del key, by
    size = np.diff(np.append(first, new_sl.shape[0]))
    summed_pos, summed_neg = pos[first], neg[first]
    for j in range(1, int(size.max(initial=1))):  # one addition after another, as merges add them
        longer = size > j
        more = first[longer] + j
        summed_pos[longer] += pos[more]
        summed_neg[longer] += neg[more]
    return new_sl[first], rank[first], summed_pos, summed_neg


def _renumbered(p: _Pairs, at: np.ndarray) -> _Pairs:
    """``p`` with slice ``s`` renumbered ``at[s]`` (distinct numbers)."""
    sl, rank, pos, neg = _regroup(p, at)
    return _Pairs(_compose(sl, rank, p.bits), pos, neg, p.scores, p.bits)


def _check_tables(sizes: np.ndarray, scores: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> None:
    """Every table of a payload as :func:`~precall.scale.accumulator._check_table` checks one, at
    once; the first table found wrong is checked again alone for its message."""
    if scores.shape == pos.shape == neg.shape and scores.dtype in _SCORE_DTYPES and pos.dtype in _COUNT_DTYPES \
            and pos.dtype == neg.dtype:
        with np.errstate(invalid="ignore"):
            first = np.zeros(scores.shape[0], dtype=bool)
            first[_starts(sizes)[sizes > 0]] = True
            rising = np.ones(scores.shape[0], dtype=bool)
            rising[1:] = scores[1:] > scores[:-1]
            bad = ~np.isfinite(scores) | ~(rising | first) | ~np.isfinite(pos) | ~np.isfinite(neg) | (pos < 0) | (
                neg < 0)
        if not bad.any():
            return
        tables = [int(np.searchsorted(np.cumsum(sizes), np.flatnonzero(bad)[0], side="right"))]
    else:
        tables = range(sizes.shape[0])
    bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    for i in tables:
        part = slice(bounds[i], bounds[i + 1])
        _check_table(i, scores[part], pos[part], neg[part], None)
    raise ValueError("corrupt SlicedAccumulator payload: a table's scores or counts")  # pragma: no cover


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
    """The slices as in memory: their number (``size``), the slice of each raw key
    (``raw_to_view``, by the raw keys' numbers), each column's values of the slices as the array
    :func:`slice_codes` orders and names them (``arrays``), and their keys (``keys``: each once, in
    the order first seen; made when asked for, from ``made``)."""

    size: int
    raw_to_view: np.ndarray
    arrays: list[np.ndarray]
    made: Any  # the keys, or a function that makes them

    @functools.cached_property
    def keys(self) -> list[tuple[Any, ...]]:
        return self.made() if callable(self.made) else self.made

    @functools.cached_property
    def index(self) -> dict[tuple[Any, ...], int]:
        """Each key's place in ``keys`` (made when a slice is looked up by its key)."""
        return {key: i for i, key in enumerate(self.keys)}


def _view(index: _Keys, types: list[set[np.dtype]], columns: tuple[str, ...]) -> _View:
    """The in-memory slices of the raw keys: each column's values written in the column's type
    (:func:`_common` of its batches' types, :func:`_converted`), raw keys of equal values one slice."""
    targets = [_common(t) for t in types]
    stores = [(tags, store) for tags, store in index.by_tags.items() if len(store)]
    if len(stores) == 1 and isinstance(stores[0][1], _ValueStore) and targets[0].kind != "O" and \
            _same_values(stores[0][0][0], targets[0]):  # one column of numbers of one type: its values
        store = stores[0][1]
        column = np.empty(index.n, dtype=targets[0])
        column[store.numbers] = store.values
        if store.missing >= 0:
            column[store.missing] = np.nan  # a float column's missing value

        def keys() -> list[tuple[Any, ...]]:
            out: list[Any] = [None] * index.n
            for key, number in store.items():
                out[number] = key
            return out

        return _View(index.n, np.arange(index.n, dtype=np.int64), [column], keys)
    raw_keys = index.raw()
    tags = [{t[j] for t in {raw[0] for raw in raw_keys}} - {None} for j in range(len(columns))]
    numbers: dict[tuple[Any, ...], int] = {}
    if all(all(_same_values(t, target) for t in column) and (target.kind != "O" or len(column) < 2)
           for column, target in zip(tags, targets)):  # each value its own key (one type a column)
        to_view = [numbers.setdefault(raw[1], len(numbers)) for raw in raw_keys]
        dtypes = targets
    else:
        written, dtypes = [], []
        for j, target in enumerate(targets):
            values, dtype = _converted({(t[j], v[j]) for t, v in raw_keys if t[j] is not None}, target)
            written.append(values)
            dtypes.append(dtype)
        to_view = [numbers.setdefault(tuple(None if t is None else written[j][t, v] for j, (t, v) in
                                            enumerate(zip(*raw))), len(numbers)) for raw in raw_keys]
    keys = list(numbers)
    del numbers, raw_keys
    return _View(len(keys), np.array(to_view, dtype=np.int64),
                 [_column_array([k[j] for k in keys], dtypes[j]) for j in range(len(columns))], keys)


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


class _DictStore:
    """The raw keys of one tuple of tags: a dict of their values to their numbers."""

    def __init__(self) -> None:
        self.numbers: dict[tuple[Any, ...], int] = {}

    def __len__(self) -> int:
        return len(self.numbers)

    def copy(self) -> "_DictStore":
        out = _DictStore()
        out.numbers = dict(self.numbers)
        return out

    def items(self) -> Any:
        return self.numbers.items()

    def batch(self, keys: Sequence[tuple[Any, ...]], start: int) -> np.ndarray:
        """The numbers of distinct ``keys``, new ones numbered from ``start`` in their order."""
        numbers = self.numbers
        shift = start - len(numbers)
        return np.fromiter((numbers.setdefault(key, len(numbers) + shift) for key in keys), dtype=np.int64,
                           count=len(keys))

    def find(self, keys: Sequence[tuple[Any, ...]]) -> np.ndarray:
        numbers = self.numbers
        return np.fromiter((numbers.get(key, -1) for key in keys), dtype=np.int64, count=len(keys))

    def add(self, keys: Sequence[tuple[Any, ...]], numbers: np.ndarray) -> None:
        self.numbers.update(zip(keys, numbers.tolist()))


class _ValueStore:
    """The raw keys of one slice column of numbers of one tag (booleans, integers, floats; the
    float's NaN missing): the values sorted, with their numbers, 16 bytes a key (a dict of
    Python values costs about 150).  Values are equal as numpy compares them, which is how
    Python compares these (``-0.0`` is ``0.0``; NaN is never a value, it is missing)."""

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype = dtype
        self.values = np.zeros(0, dtype=dtype)  # increasing (replaced, never written, when keys are added)
        self.numbers = np.zeros(0, dtype=np.int64)
        self.missing = -1  # the number of the key (None,), if any

    def __len__(self) -> int:
        return int(self.values.shape[0]) + (self.missing >= 0)

    def copy(self) -> "_ValueStore":
        out = _ValueStore(self.dtype)
        out.values, out.numbers, out.missing = self.values, self.numbers, self.missing
        return out

    def items(self) -> Any:
        yield from zip(((v,) for v in self.values.tolist()), self.numbers.tolist())
        if self.missing >= 0:
            yield (None,), self.missing

    def _array(self, keys: Sequence[tuple[Any, ...]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The keys' values (those not missing), where they are among the keys, where missing ones are."""
        values = [key[0] for key in keys]
        if None not in values:
            return np.array(values, dtype=self.dtype), np.arange(len(values)), np.zeros(0, dtype=np.int64)
        missing = np.array([v is None for v in values], dtype=bool)
        return (np.array([v for v in values if v is not None], dtype=self.dtype), np.flatnonzero(~missing),
                np.flatnonzero(missing))

    def find(self, keys: Sequence[tuple[Any, ...]]) -> np.ndarray:
        values, at, missing = self._array(keys)
        out = np.full(len(keys), -1, dtype=np.int64)
        out[missing] = self.missing
        out[at] = self.find_values(values)
        return out

    def find_values(self, values: np.ndarray) -> np.ndarray:
        """The numbers of ``values`` (not missing; -1: not held)."""
        out = np.full(values.shape[0], -1, dtype=np.int64)
        where = np.searchsorted(self.values, values)
        hit = where < self.values.shape[0]
        hit[hit] = self.values[where[hit]] == values[hit]
        out[hit] = self.numbers[where[hit]]
        return out

    def add(self, keys: Sequence[tuple[Any, ...]], numbers: np.ndarray) -> None:
        """Distinct keys not held yet, with their numbers."""
        values, at, missing = self._array(keys)
        if missing.shape[0]:
            self.missing = int(numbers[missing[0]])
        self.add_values(values, numbers[at])

    def add_values(self, values: np.ndarray, numbers: np.ndarray) -> None:
        """Distinct values not held yet (not missing), with their numbers."""
        order = np.argsort(values, kind="stable")
        values, numbers = values[order], numbers[order]
        where = np.searchsorted(self.values, values)
        self.values = np.insert(self.values, where, values)
        self.numbers = np.insert(self.numbers, where, numbers)

    def batch(self, keys: Sequence[tuple[Any, ...]], start: int) -> np.ndarray:
        out = self.find(keys)
        new = np.flatnonzero(out < 0)
        if new.shape[0]:
            out[new] = start + np.arange(new.shape[0])
            self.add([keys[i] for i in new.tolist()], out[new])
        return out


def _store_of(tags: tuple[str | None, ...]) -> "_DictStore | _ValueStore":
    """A store for the raw keys of ``tags``: one column of numbers, by value (:class:`_ValueStore`),
    anything else in a dict."""
    if len(tags) == 1 and tags[0] is not None and not tags[0].startswith("O"):
        dtype = np.dtype(tags[0])
        if dtype.kind in "biuf":
            return _ValueStore(dtype)
    return _DictStore()


class _Keys:
    """The raw keys of the slices, numbered in the order first seen, one store a tuple of tags (the
    keys of a typed batch share theirs): a key of one column of numbers costs 16 bytes
    (:class:`_ValueStore`), others their values and a dict entry (:class:`_DictStore`)."""

    def __init__(self) -> None:
        self.by_tags: dict[tuple[str | None, ...], _DictStore | _ValueStore] = {}
        self.n = 0

    def __len__(self) -> int:
        return self.n

    def copy(self) -> "_Keys":
        out = _Keys()
        out.by_tags = {tags: store.copy() for tags, store in self.by_tags.items()}
        out.n = self.n
        return out

    def _store(self, tags: tuple[str | None, ...]) -> "_DictStore | _ValueStore":
        store = self.by_tags.get(tags)
        if store is None:
            store = self.by_tags[tags] = _store_of(tags)
        return store

    def of_batch(self, codes: SliceCodes, order: Sequence[int] | None = None) -> np.ndarray:
        """The numbers of a batch's slices (``order``: of those codes; new ones numbered in that
        order), as :func:`_raw_keys` keys them."""
        keys = codes.keys if order is None else [codes.keys[c] for c in order]
        tags = tuple(None if d.kind == "O" else _tag(d) for d in codes.dtypes)
        if None in tags or not (all(d.kind in "fc" for d in codes.dtypes) or not any(None in key for key in keys)):
            raw = _raw_keys(codes)
            return self.numbers(raw if order is None else [raw[c] for c in order])
        out = self._store(tags).batch(keys, self.n)  # one tuple of tags: the values alone
        self.n += int(np.count_nonzero(out >= self.n))
        return out

    def merged(self, other: "_Keys") -> np.ndarray:
        """The numbers of ``other``'s keys (by their numbers there), new ones numbered in their order."""
        stores = [(tags, store) for tags, store in other.by_tags.items() if len(store)]
        if len(stores) != 1 or not isinstance(stores[0][1], _ValueStore):
            return self.numbers(other.raw())
        tags, theirs = stores[0]  # one column of numbers: at once, by value
        mine = self._store(tags)
        assert isinstance(mine, _ValueStore)
        out = np.empty(other.n, dtype=np.int64)
        found = mine.find_values(theirs.values)
        out[theirs.numbers] = found
        if theirs.missing >= 0:
            out[theirs.missing] = mine.missing
        new = np.flatnonzero(out < 0)  # in other's order
        out[new] = self.n + np.arange(new.shape[0])
        self.n += new.shape[0]
        unseen = found < 0
        mine.add_values(theirs.values[unseen], out[theirs.numbers[unseen]])
        if theirs.missing >= 0 and mine.missing < 0:
            mine.missing = int(out[theirs.missing])
        return out

    def numbers(self, raw_keys: Sequence[tuple[Any, ...]]) -> np.ndarray:
        """The numbers of raw keys (new ones numbered in their order; a key given twice, once)."""
        out = np.empty(len(raw_keys), dtype=np.int64)
        groups: dict[tuple[str | None, ...], list[int]] = {}
        for i, raw in enumerate(raw_keys):
            groups.setdefault(raw[0], []).append(i)
        for tags, at in groups.items():
            out[at] = self._store(tags).find([raw_keys[i][1] for i in at])
        new: dict[tuple[Any, ...], int] = {}
        for i in np.flatnonzero(out < 0).tolist():
            out[i] = new.setdefault(raw_keys[i], self.n + len(new))
        self.n += len(new)
        added: dict[tuple[str | None, ...], tuple[list[tuple[Any, ...]], list[int]]] = {}
        for (tags, key), number in new.items():
            keys, numbers = added.setdefault(tags, ([], []))
            keys.append(key)
            numbers.append(number)
        for tags, (keys, numbers) in added.items():
            self._store(tags).add(keys, np.array(numbers, dtype=np.int64))
        return out

    def raw(self) -> list[tuple[Any, ...]]:
        """The raw keys in the order of their numbers."""
        out: list[Any] = [None] * self.n
        for tags, store in self.by_tags.items():
            for key, number in store.items():
                out[number] = (tags, key)
        return out


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
