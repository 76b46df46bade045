"""Exact streaming: an accumulator of (score, positive weight, negative weight).

:class:`Accumulator` keeps, for every distinct score seen, the total positive
and negative weight: memory grows with the number of distinct scores, not with
rows.  ``update`` adds a batch, ``merge`` combines two accumulators (associative
and commutative: any split of the data into batches, merged in any order, gives
the same state), and ``table()`` returns the :class:`precall.ThresholdTable`
that :func:`precall.threshold_table` builds from all the rows at once, so every
curve, AP convention and plot works on it.  ``to_bytes`` / ``from_bytes`` ship
the state between processes in a versioned ``.npz`` payload (no pickle).

Counts stay integers while no batch has weights (the table is then identical to
the in-memory one, bit for bit); with weights they are float64 sums (equal to
the in-memory table to rounding, about 1e-15 relative).
"""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np

from ._counts import ThresholdTable
from ._validate import check_binary, check_multi, is_multi

__all__ = ["Accumulator"]

_FORMAT = "precall.Accumulator"
_VERSION = 1


def _merge_states(
    scores: np.ndarray, pos: np.ndarray, neg: np.ndarray, more_scores: np.ndarray, more_pos: np.ndarray,
    more_neg: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Union of two (sorted distinct scores, weights) states; equal scores summed."""
    all_scores = np.concatenate([scores, more_scores])
    distinct, inverse = np.unique(all_scores, return_inverse=True)
    dtype = np.result_type(pos.dtype, more_pos.dtype)
    p = np.zeros(distinct.size, dtype=dtype)
    n = np.zeros(distinct.size, dtype=dtype)
    np.add.at(p, inverse, np.concatenate([pos, more_pos]).astype(dtype))
    np.add.at(n, inverse, np.concatenate([neg, more_neg]).astype(dtype))
    return distinct, p, n


class Accumulator:
    """Exact PR/ROC state of a stream of labelled scores (binary or one table per class).

    Parameters
    ----------
    pos_label : label, default=None
        The positive label of binary input (as :func:`precall.threshold_table`);
        fixed for the accumulator's life.
    labels : array-like, default=None
        Multi-class or multi-label input: the class of each score column, fixed
        for the accumulator's life (required for multi-class input, since a
        batch may not hold every class).

    Examples
    --------
    >>> import precall
    >>> acc = precall.Accumulator()
    >>> acc.update([0, 1, 1], [0.1, 0.9, 0.4]).update([0, 1], [0.4, 0.2])
    Accumulator(binary, 4 distinct scores, n_pos=3, n_neg=2)
    >>> acc.table().tp
    array([1, 2, 3, 3])
    >>> round(acc.table().average_precision(), 6) == round(precall.average_precision(
    ...     [0, 1, 1, 0, 1], [0.1, 0.9, 0.4, 0.4, 0.2]), 6)
    True
    """

    def __init__(self, *, pos_label: Any = None, labels: Any = None) -> None:
        self.pos_label = pos_label
        self.labels = None if labels is None else np.asarray(labels)
        k = 1 if self.labels is None else self.labels.size
        self._scores = [np.zeros(0) for _ in range(k)]
        self._pos = [np.zeros(0, dtype=np.int64) for _ in range(k)]
        self._neg = [np.zeros(0, dtype=np.int64) for _ in range(k)]

    # -- feeding ------------------------------------------------------------
    @property
    def multi(self) -> bool:
        return self.labels is not None

    def _add(self, c: int, scores: np.ndarray, positive: np.ndarray, weight: np.ndarray | None) -> None:
        s = scores.astype(np.float64) + 0.0  # -0.0 is 0.0, as in the in-memory sort
        distinct, inverse = np.unique(s, return_inverse=True)
        if weight is None:
            p = np.bincount(inverse[positive], minlength=distinct.size)
            n = np.bincount(inverse[~positive], minlength=distinct.size)
        else:
            p = np.bincount(inverse, weights=np.where(positive, weight, 0.0), minlength=distinct.size)
            n = np.bincount(inverse, weights=np.where(positive, 0.0, weight), minlength=distinct.size)
        self._scores[c], self._pos[c], self._neg[c] = _merge_states(
            self._scores[c], self._pos[c], self._neg[c], distinct, p, n)

    def update(self, y_true: Any, y_score: Any, *, sample_weight: Any = None) -> "Accumulator":
        """Add a batch (validated as the in-memory functions validate it); returns ``self``."""
        if self.multi:
            data = check_multi(y_true, y_score, sample_weight, self.labels)
            for c in range(data.scores.shape[1]):
                self._add(c, data.scores[:, c], data.positive[:, c], data.weight)
            return self
        if is_multi(y_true, y_score):
            raise ValueError(
                "this accumulator is binary; for multi-class or multi-label input create it with "
                "`labels=` (the class of each score column)"
            )
        data = check_binary(y_true, y_score, sample_weight, self.pos_label)
        self._add(0, data.scores, data.positive, data.weight)
        return self

    def merge(self, other: "Accumulator") -> "Accumulator":
        """A new accumulator holding both states (associative and commutative)."""
        if not isinstance(other, Accumulator):
            raise TypeError(f"`other` must be an Accumulator; got {type(other).__name__}")
        same_labels = (self.labels is None and other.labels is None) or (
            self.labels is not None and other.labels is not None and np.array_equal(self.labels, other.labels))
        if not same_labels or self.pos_label != other.pos_label:
            raise ValueError("can only merge accumulators with the same `pos_label` and `labels`")
        out = Accumulator(pos_label=self.pos_label, labels=self.labels)
        for c in range(len(self._scores)):
            out._scores[c], out._pos[c], out._neg[c] = _merge_states(
                self._scores[c], self._pos[c], self._neg[c], other._scores[c], other._pos[c], other._neg[c])
        return out

    # -- results --------------------------------------------------------------
    def table(self, label: Any = None) -> ThresholdTable:
        """The grouped :class:`ThresholdTable` of everything seen (of class ``label``
        for multi-class input), as :func:`precall.threshold_table` builds it."""
        c = self._index(label)
        scores, pos, neg = self._scores[c], self._pos[c], self._neg[c]
        seen = (pos > 0) | (neg > 0)  # zero-weight rows add no threshold, as in memory
        scores, pos, neg = scores[seen][::-1], pos[seen][::-1], neg[seen][::-1]
        if scores.size == 0:
            raise ValueError("the accumulator has seen no row with positive weight yet")
        return ThresholdTable(thresholds=scores, tp=np.cumsum(pos), fp=np.cumsum(neg), n_pos=pos.sum(),
                              n_neg=neg.sum(), ties="group")

    def tables(self) -> dict[Any, ThresholdTable]:
        """Multi-class / multi-label: the table of each class, by class."""
        if not self.multi:
            return {None: self.table()}
        return {lab: self.table(lab) for lab in self.labels.tolist()}  # type: ignore[union-attr]

    def _index(self, label: Any) -> int:
        if not self.multi:
            if label is not None:
                raise ValueError("a binary accumulator has one table; call table() without a label")
            return 0
        if label is None:
            raise ValueError(f"name the class: table(label) with one of {self.labels.tolist()}")  # type: ignore[union-attr]
        hits = np.flatnonzero(self.labels == label)
        if hits.size == 0:
            raise ValueError(f"`label` {label!r} is not one of {self.labels.tolist()}")  # type: ignore[union-attr]
        return int(hits[0])

    @property
    def n_distinct(self) -> int:
        return int(sum(s.size for s in self._scores))

    def __repr__(self) -> str:
        kind = "binary" if not self.multi else f"{self.labels.size} classes"  # type: ignore[union-attr]
        text = f"Accumulator({kind}, {self.n_distinct} distinct scores"
        if not self.multi:
            text += f", n_pos={self._pos[0].sum():g}, n_neg={self._neg[0].sum():g}"
        return text + ")"

    # -- shipping ---------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The state as a versioned ``.npz`` payload (no pickle): see :meth:`from_bytes`."""
        try:
            meta = json.dumps({
                "format": _FORMAT, "version": _VERSION,
                "pos_label": _plain(self.pos_label),
                "labels": None if self.labels is None else [_plain(v) for v in self.labels.tolist()],
            })
        except TypeError:
            raise TypeError("`pos_label` and `labels` must be strings, numbers or booleans to be shipped") from None
        arrays = {"meta": np.frombuffer(meta.encode("utf-8"), dtype=np.uint8)}
        for c in range(len(self._scores)):
            arrays[f"scores_{c}"] = self._scores[c]
            arrays[f"pos_{c}"] = self._pos[c]
            arrays[f"neg_{c}"] = self._neg[c]
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, payload: bytes) -> "Accumulator":
        """Rebuild an accumulator from :meth:`to_bytes`; a foreign or corrupt payload raises ``ValueError``."""
        if not isinstance(payload, (bytes, bytearray, memoryview)):
            raise TypeError(f"`payload` must be bytes; got {type(payload).__name__}")
        try:
            with np.load(io.BytesIO(bytes(payload)), allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
            meta = json.loads(bytes(arrays.pop("meta")).decode("utf-8"))
        except Exception as exc:  # zip, npy or JSON errors: all "not ours"
            raise ValueError(f"not a precall Accumulator payload: {exc}") from None
        if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
            raise ValueError("not a precall Accumulator payload (no format marker)")
        if meta.get("version") != _VERSION:
            raise ValueError(
                f"Accumulator payload version {meta.get('version')!r} is not supported (this precall "
                f"reads version {_VERSION})"
            )
        out = cls(pos_label=meta.get("pos_label"), labels=meta.get("labels"))
        for c in range(len(out._scores)):
            try:
                s, p, n = arrays[f"scores_{c}"], arrays[f"pos_{c}"], arrays[f"neg_{c}"]
            except KeyError as exc:
                raise ValueError(f"corrupt Accumulator payload: missing {exc}") from None
            ok = (s.ndim == p.ndim == n.ndim == 1 and s.shape == p.shape == n.shape and s.dtype.kind == "f"
                  and p.dtype.kind in "if" and n.dtype.kind in "if" and np.isfinite(s).all()
                  and (np.diff(s) > 0).all() and (p >= 0).all() and (n >= 0).all())
            if not ok:
                raise ValueError(f"corrupt Accumulator payload: table {c} is not sorted distinct scores "
                                 "with non-negative counts")
            out._scores[c], out._pos[c], out._neg[c] = s, p, n
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(value)
