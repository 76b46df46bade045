"""The count table: one sort of the scores, TP and FP at every threshold.

Two objects live here.

:class:`ThresholdTable` is the public table: one row per distinct score
(``ties="group"``) or per sample (``ties="stable"``), in decreasing score order,
with the cumulative true and false positives at that row.  Every curve derives
from it.

:class:`Steps` is the private reduction every scalar metric needs: only the rows
where TP increases ("steps"), each with the FP count at that row and at the row
just above it.  Precision is highest on the first row of a run of equal TP, and
recall changes only at those rows, so every AP convention, ROC-AUC and the best
F1 are functions of the steps alone.  For unweighted input with grouped ties the
steps are computed without the table and without ``argsort``: the positives'
and the negatives' scores are sorted separately (``np.sort``) and the negatives
are counted with ``searchsorted``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ._validate import BinaryInput

if TYPE_CHECKING:  # pragma: no cover
    from .curves import DetCurve, PrecisionRecallCurve, RocCurve
    from .evaluate import Evaluation

__all__ = ["Steps", "ThresholdTable", "Ties", "build_steps", "build_steps_and_grouped", "build_table"]

Ties = Literal["group", "stable"]
TIES: tuple[str, ...] = ("group", "stable")


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


@dataclass(frozen=True)
class Steps:
    """The operating points where TP increases (internal).

    ``tp`` and ``fp`` are the cumulative counts at the step, ``dtp`` the positive
    weight the step adds, ``fp_prev`` the FP count at the operating point just
    above (0 at the top).  The point above is the origin (nothing predicted
    positive) exactly when ``tp - dtp + fp_prev == 0``.
    """

    thresholds: np.ndarray
    tp: np.ndarray
    dtp: np.ndarray
    fp: np.ndarray
    fp_prev: np.ndarray
    n_pos: float
    n_neg: float
    exact: bool  # integer counts (no weights): sums are exact


_INT64_MAX = np.int64(np.iinfo(np.int64).max)


def _flip_negative_magnitudes(v: np.ndarray, sign_bit: int) -> None:
    """In place: IEEE bit patterns (as int64) to integers in numeric order."""
    mask = v >> sign_bit  # 0 for positive, -1 for negative numbers
    mask &= (1 << sign_bit) - 1
    v ^= mask


def _descending_key(scores: np.ndarray) -> tuple[np.ndarray, int]:
    """Unsigned integers that decrease as the scores increase, and their bit width.

    Floats are read through their IEEE bits (``-0.0`` first made ``+0.0``);
    flipping the magnitude bits of negative numbers makes integer order equal
    numeric order.  Integers are used as they are.
    """
    kind, size = scores.dtype.kind, scores.dtype.itemsize
    if kind == "f" and size <= 4:
        v = (scores.astype(np.float32) + np.float32(0.0)).view(np.int32).astype(np.int64)
        _flip_negative_magnitudes(v, 31)
        width = 32
    elif kind == "f":
        v = (scores.astype(np.float64, copy=False) + 0.0).view(np.int64)
        _flip_negative_magnitudes(v, 63)
        width = 64
    elif kind == "u" and size == 8:
        v = scores.view(np.int64) ^ np.int64(np.iinfo(np.int64).min)
        width = 64
    elif size <= 4:  # 32-bit or narrower integers: shift into [0, 2**32)
        v = scores.astype(np.int64)
        if kind == "i":
            v += 1 << 31
        width = 32
    else:
        v = scores.astype(np.int64)
        width = 64
    if width == 32:
        if kind == "f":
            v += 1 << 31  # signed 32-bit order -> [0, 2**32)
        d = np.int64((1 << 32) - 1) - v
        return d.view(np.uint64), 32
    v ^= _INT64_MAX
    return v.view(np.uint64), 64


def _stable_descending_sort(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The permutation sorting ``scores`` decreasingly, equal scores in input
    order, and the sorted scores.

    One ``np.sort`` (SIMD) of the 64-bit keys ``score_key << b | index``, where
    ``b`` bits hold the index, replaces a merge-sort ``argsort`` (4x faster at
    1e7).  For 32-bit scores the key holds the whole score and the order is
    exact; for 64-bit scores only the top ``64 - b`` bits fit, so two different
    scores may share a key and be ordered by index instead: such inversions
    are found and those groups re-sorted exactly.
    """
    n = scores.shape[0]
    if n < 2:
        return np.arange(n, dtype=np.int64), scores.copy()
    if scores.dtype.itemsize > 8 or n > 2**40:
        # wider than 64 bits (longdouble): a merge sort, stable by construction
        order = n - 1 - np.argsort(scores[::-1], kind="stable")[::-1]
        return order, scores[order]
    shift = max(1, (n - 1).bit_length())
    key, width = _descending_key(scores)
    drop = max(0, width + shift - 64)
    if drop:
        key >>= np.uint64(drop)
    key <<= np.uint64(shift)
    key |= np.arange(n, dtype=np.uint64)
    key.sort()
    key &= np.uint64((1 << shift) - 1)
    order = key.view(np.int64)
    s = scores[order]
    bad = np.flatnonzero(s[1:] > s[:-1])
    if bad.size:
        # collisions of truncated keys: re-sort each affected group exactly
        group = _descending_key(s)[0] >> np.uint64(drop)
        groups = np.unique(group[bad])
        lo = np.searchsorted(group, groups, side="left")
        hi = np.searchsorted(group, groups, side="right")
        lengths = hi - lo
        pos = np.repeat(lo - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
        sub = order[pos]
        full_key, _ = _descending_key(scores[sub])
        order[pos] = sub[np.lexsort((sub, full_key))]
        s[pos] = scores[order[pos]]
    return order, s


def _group_ends(sorted_desc: np.ndarray) -> np.ndarray:
    """Index of the last element of each run of equal values."""
    n = sorted_desc.shape[0]
    ends = np.flatnonzero(sorted_desc[1:] != sorted_desc[:-1])
    return np.append(ends, n - 1)


def build_table(data: BinaryInput, ties: Ties) -> "ThresholdTable":
    """Build the :class:`ThresholdTable` of validated input."""
    scores, positive, weight = data.scores, data.positive, data.weight
    if weight is None and ties == "group":
        # Distinct values and their multiplicities from one np.sort; the
        # positives per value from a sort of the positives alone.
        a = np.sort(scores)[::-1]
        ends = _group_ends(a)
        thresholds = a[ends]
        total = ends + 1
        p = np.sort(scores[positive])[::-1]
        tp = np.zeros(thresholds.shape[0], dtype=np.int64)
        if p.size:
            p_ends = _group_ends(p)
            # thresholds are decreasing: search in the reversed (increasing) view
            asc = thresholds[::-1]
            rows = thresholds.shape[0] - 1 - np.searchsorted(asc, p[p_ends])
            tp[rows] = np.diff(p_ends, prepend=-1)
            np.cumsum(tp, out=tp)
        fp = total - tp
        n_pos, n_neg = float(p.size), float(scores.size - p.size)
    else:
        order, s = _stable_descending_sort(scores)
        y = positive[order]
        if weight is None:
            tp = np.cumsum(y, dtype=np.int64)
            fp = np.arange(1, y.size + 1, dtype=np.int64) - tp
        else:
            # float64 cumulative sums in stable order, as scikit-learn computes them
            yf = y.astype(np.float64)
            w = weight[order]
            tp = np.cumsum(yf * w)
            fp = np.cumsum((1.0 - yf) * w)
        if ties == "group":
            ends = _group_ends(s)
            s, tp, fp = s[ends], tp[ends], fp[ends]
        thresholds = s
        n_pos, n_neg = float(tp[-1]), float(fp[-1])
    return ThresholdTable(
        thresholds=thresholds, tp=tp, fp=fp, n_pos=n_pos, n_neg=n_neg, ties=ties, _checked=True
    )


def _sorted_split(data: BinaryInput) -> tuple[np.ndarray, np.ndarray]:
    """The positives' and the negatives' scores, each sorted increasingly (in place)."""
    p = data.scores[data.positive]
    p.sort()
    q = data.scores[~data.positive]
    q.sort()
    return p, q


def _steps_unweighted(data: BinaryInput, ties: Ties) -> Steps | None:
    """Steps of unweighted input from ``np.sort`` of each class, without argsort.

    Returns None for ``ties="stable"`` when a positive and a negative share a
    score: their input order matters then, and only the full order gives it.
    """
    p, q = _sorted_split(data)
    n_pos, n_neg = p.size, q.size
    if n_pos == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Steps(p, empty, empty, empty, empty, 0.0, float(n_neg), True)
    starts = np.flatnonzero(p[1:] != p[:-1]) + 1
    starts = np.insert(starts, 0, 0)
    values = p[starts]  # distinct positive scores, increasing
    counts = np.diff(np.append(starts, n_pos))
    below = np.searchsorted(q, values, side="left")  # negatives scored < value
    tied = below < n_neg
    tied[tied] = q[below[tied]] == values[tied]  # a negative has exactly this score
    below_or_equal = below
    if tied.any():
        below_or_equal = below.copy()
        below_or_equal[tied] = np.searchsorted(q, values[tied], side="right")
    del q
    if ties == "group":
        del p
        return Steps(
            values[::-1], np.cumsum(counts[::-1]), counts[::-1], (n_neg - below)[::-1],
            (n_neg - below_or_equal)[::-1], float(n_pos), float(n_neg), True,
        )
    if tied.any():
        return None
    # stable without shared scores: one step per positive, in any order within
    # a run of equal positive scores
    fp = np.repeat(n_neg - below, counts)[::-1]
    ones = np.ones(n_pos, dtype=np.int64)
    return Steps(
        p[::-1], np.arange(1, n_pos + 1, dtype=np.int64), ones, fp, fp,
        float(n_pos), float(n_neg), True,
    )


def _steps_weighted_grouped(data: BinaryInput) -> Steps:
    """Steps of weighted input with grouped ties."""
    order, s = _stable_descending_sort(data.scores)
    ends = _group_ends(s)
    thresholds = s[ends]
    del s
    y = data.positive[order]
    w = data.weight[order]  # type: ignore[index]
    del order
    has_pos = np.logical_or.reduceat(y, np.append(0, ends[:-1] + 1))
    wp = np.where(y, w, 0.0)
    del y
    w -= wp  # the negatives' weights (exactly w or 0)
    tp = np.cumsum(wp, out=wp)[ends]
    fp = np.cumsum(w, out=w)[ends]
    n_pos, n_neg = float(wp[-1]), float(w[-1])
    del wp, w
    dtp = np.diff(tp, prepend=0.0)
    idx = np.flatnonzero(has_pos)
    fp_prev = np.where(idx > 0, fp[np.maximum(idx - 1, 0)], 0.0)
    return Steps(thresholds[idx], tp[idx], dtp[idx], fp[idx], fp_prev, n_pos, n_neg, False)


def build_steps(data: BinaryInput, ties: Ties) -> Steps:
    """The steps of validated input, without building the full table when possible."""
    return build_steps_and_grouped(data, ties)[0]


def build_steps_and_grouped(data: BinaryInput, ties: Ties) -> tuple[Steps, Steps]:
    """The steps for ``ties`` and for grouped ties (ROC-AUC is always grouped).

    The two are the same object unless the stable order splits a run of equal
    scores shared by positives and negatives.
    """
    if data.weight is None:
        steps = _steps_unweighted(data, ties)
        if steps is not None:
            return steps, steps
    elif ties == "group":
        steps = _steps_weighted_grouped(data)
        return steps, steps
    table = build_table(data, ties)
    return table.steps(), table.grouped().steps()


def _complement(total: float, counts: np.ndarray) -> np.ndarray:
    """``total - counts``, staying in integers when both are whole numbers."""
    if counts.dtype.kind in "iu" and float(total).is_integer():
        return int(total) - counts
    return total - counts


def _fmt(x: Any) -> str:
    if isinstance(x, (float, np.floating)):
        return f"{x:.6g}"
    return str(x)


@dataclass(frozen=True, eq=False)
class ThresholdTable:
    """TP and FP at every threshold: the one table every curve and area comes from.

    Rows are in decreasing score order.  With ``ties="group"`` there is one row
    per distinct score (samples with equal scores are predicted positive
    together, as in scikit-learn); with ``ties="stable"`` one row per sample,
    equal scores kept in input order (the seeds' rank tables, pycocotools).

    Parameters
    ----------
    thresholds : ndarray of shape (n_rows,)
        Decreasing scores; row ``i`` predicts positive every sample scored
        ``>= thresholds[i]`` (for ``ties="stable"``: the first ``i + 1``
        samples in rank order).
    tp, fp : ndarray of shape (n_rows,)
        Cumulative true and false positives at each row (integers without
        weights, float64 with them).
    n_pos, n_neg : float
        Total positive and negative weight.  ``n_pos`` may exceed ``tp[-1]``:
        in detection, ground truths that no detection found still count.
    ties : {"group", "stable"}
        How the rows treat equal scores.

    Examples
    --------
    >>> import precall
    >>> t = precall.threshold_table([0, 1, 1, 0], [0.1, 0.9, 0.4, 0.4])
    >>> t.tp, t.fp
    (array([1, 2, 2]), array([0, 1, 2]))
    >>> t.precision
    array([1.        , 0.66666667, 0.5       ])
    >>> round(t.average_precision(method="voc2010"), 4)  # 0.5 * 1 + 0.5 * 2/3
    0.8333
    """

    thresholds: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    n_pos: float
    n_neg: float
    ties: Ties = "group"
    _checked: bool = field(default=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self._checked:
            self._validate()
        for name in ("thresholds", "tp", "fp"):
            object.__setattr__(self, name, _readonly(np.asarray(getattr(self, name))))
        object.__setattr__(self, "n_pos", float(self.n_pos))
        object.__setattr__(self, "n_neg", float(self.n_neg))

    def _validate(self) -> None:
        from ._validate import check_choice

        check_choice(self.ties, "ties", TIES)
        t = np.asarray(self.thresholds)
        tp = np.asarray(self.tp)
        fp = np.asarray(self.fp)
        for name, a in (("thresholds", t), ("tp", tp), ("fp", fp)):
            if a.ndim != 1:
                raise ValueError(f"`{name}` must be 1-D; got shape {a.shape}")
            if a.dtype.kind not in "iuf":
                raise TypeError(f"`{name}` must be numeric; got dtype {a.dtype}")
            if a.dtype.kind == "f" and not np.isfinite(a).all():
                raise ValueError(f"`{name}` must be finite")
        if not (t.shape == tp.shape == fp.shape):
            raise ValueError(
                "`thresholds`, `tp` and `fp` must have the same length; got "
                f"{t.shape[0]}, {tp.shape[0]} and {fp.shape[0]}"
            )
        if t.shape[0] == 0:
            raise ValueError("a ThresholdTable must have at least one row; got 0")
        dt = np.diff(t)
        if self.ties == "group" and (dt >= 0).any():
            raise ValueError("`thresholds` must be strictly decreasing with ties='group'")
        if self.ties == "stable" and (dt > 0).any():
            raise ValueError("`thresholds` must be non-increasing with ties='stable'")
        for name, a in (("tp", tp), ("fp", fp)):
            if (a < 0).any() or (np.diff(a) < 0).any():
                raise ValueError(f"`{name}` must be non-negative and non-decreasing")
        if not (np.isfinite(self.n_pos) and self.n_pos >= tp[-1]):
            raise ValueError(f"`n_pos` must be at least tp[-1] = {tp[-1]}; got {self.n_pos}")
        if not (np.isfinite(self.n_neg) and self.n_neg >= fp[-1]):
            raise ValueError(f"`n_neg` must be at least fp[-1] = {fp[-1]}; got {self.n_neg}")

    # -- derived columns -------------------------------------------------
    def __len__(self) -> int:
        return int(self.thresholds.shape[0])

    @property
    def fn(self) -> np.ndarray:
        """False negatives at each row: ``n_pos - tp``."""
        return _complement(self.n_pos, self.tp)

    @property
    def tn(self) -> np.ndarray:
        """True negatives at each row: ``n_neg - fp``."""
        return _complement(self.n_neg, self.fp)

    @property
    def precision(self) -> np.ndarray:
        """``tp / (tp + fp)`` at each row (0 where nothing is predicted positive)."""
        tp = self.tp.astype(np.float64)
        ps = tp + self.fp
        return np.where(ps != 0, tp / np.where(ps != 0, ps, 1.0), 0.0)

    @property
    def recall(self) -> np.ndarray:
        """``tp / n_pos`` at each row (NaN when there are no positives)."""
        if self.n_pos == 0:
            return np.full(len(self), np.nan)
        return self.tp / self.n_pos

    tpr = recall

    @property
    def fpr(self) -> np.ndarray:
        """``fp / n_neg`` at each row (NaN when there are no negatives)."""
        if self.n_neg == 0:
            return np.full(len(self), np.nan)
        return self.fp / self.n_neg

    def grouped(self) -> "ThresholdTable":
        """The same table with equal thresholds merged into one row (``ties="group"``)."""
        if self.ties == "group":
            return self
        ends = _group_ends(self.thresholds)
        return ThresholdTable(
            thresholds=self.thresholds[ends], tp=self.tp[ends], fp=self.fp[ends],
            n_pos=self.n_pos, n_neg=self.n_neg, ties="group", _checked=True,
        )

    def steps(self) -> Steps:
        """The rows where TP increases, with the FP count just above each."""
        tp = self.tp
        dtp = np.diff(tp, prepend=np.zeros(1, dtype=tp.dtype))
        idx = np.flatnonzero(dtp > 0)
        fp_prev = np.where(idx > 0, self.fp[np.maximum(idx - 1, 0)], 0)
        fp_prev = fp_prev.astype(self.fp.dtype, copy=False)
        return Steps(
            self.thresholds[idx],
            tp[idx],
            dtp[idx],
            self.fp[idx],
            fp_prev,
            self.n_pos,
            self.n_neg,
            tp.dtype.kind in "iu" and self.fp.dtype.kind in "iu",
        )

    # -- curves and metrics (conveniences over curves.py / scores.py) ----
    def precision_recall_curve(self, *, drop_intermediate: bool = False) -> "PrecisionRecallCurve":
        """Precision-recall curve; see :func:`precall.precision_recall_curve`."""
        from .curves import pr_curve_from_table

        return pr_curve_from_table(self, drop_intermediate=drop_intermediate)

    def roc_curve(self, *, drop_intermediate: bool = True) -> "RocCurve":
        """ROC curve; see :func:`precall.roc_curve`."""
        from .curves import roc_curve_from_table

        return roc_curve_from_table(self, drop_intermediate=drop_intermediate)

    def det_curve(self, *, drop_intermediate: bool = False) -> "DetCurve":
        """DET curve; see :func:`precall.det_curve`."""
        from .curves import det_curve_from_table

        return det_curve_from_table(self, drop_intermediate=drop_intermediate)

    def average_precision(
        self, *, method: str = "step", recall_grid: str = "reference", on_undefined: Any = "warn"
    ) -> float:
        """Average precision by the named convention; see :func:`precall.average_precision`."""
        from .scores import ap_from_steps

        return ap_from_steps(
            self.steps(), method=method, recall_grid=recall_grid, on_undefined=on_undefined
        )

    def roc_auc(self, *, max_fpr: float | None = None, on_undefined: Any = "warn") -> float:
        """ROC-AUC; see :func:`precall.roc_auc`."""
        from .scores import roc_auc_from_table

        return roc_auc_from_table(self, max_fpr=max_fpr, on_undefined=on_undefined)

    def evaluate(self, *, recall_grid: str = "reference", on_undefined: Any = "warn") -> "Evaluation":
        """Every convention at once; see :func:`precall.evaluate`."""
        from .evaluate import evaluation_from_steps

        return evaluation_from_steps(
            self.steps(), self.grouped().steps(), ties=self.ties, n_samples=None,
            recall_grid=recall_grid, on_undefined=on_undefined,
        )

    # -- presentation ----------------------------------------------------
    def _columns(self) -> dict[str, np.ndarray]:
        cols: dict[str, np.ndarray] = {}
        if self.ties == "stable":
            cols["rank"] = np.arange(1, len(self) + 1)
        cols["threshold"] = self.thresholds
        cols["tp"] = self.tp
        cols["fp"] = self.fp
        cols["fn"] = self.fn
        cols["tn"] = self.tn
        cols["precision"] = self.precision
        cols["recall"] = self.recall
        cols["fpr"] = self.fpr
        return cols

    def to_text(self, max_rows: int | None = 20) -> str:
        """Render the table as aligned text, like the seeds' rank tables.

        Parameters
        ----------
        max_rows : int or None, default=20
            Show at most this many rows (the first and last halves); None shows all.
        """
        cols = self._columns()
        n = len(self)
        if max_rows is None or n <= max_rows:
            rows = list(range(n))
            cut = None
        else:
            head = max(1, max_rows // 2)
            tail = max(1, max_rows - head)
            rows = list(range(head)) + list(range(n - tail, n))
            cut = head
        cells = [[_fmt(cols[c][i].item()) for c in cols] for i in rows]
        if cut is not None:
            cells.insert(cut, ["..."] * len(cols))
        header = list(cols)
        widths = [max(len(h), *(len(r[j]) for r in cells)) for j, h in enumerate(header)]
        lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths))]
        lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells]
        summary = (
            f"ThresholdTable: {n} rows (ties={self.ties!r}), "
            f"n_pos={_fmt(self.n_pos)}, n_neg={_fmt(self.n_neg)}"
        )
        return summary + "\n" + "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return (
            f"ThresholdTable(n_rows={len(self)}, n_pos={_fmt(self.n_pos)}, "
            f"n_neg={_fmt(self.n_neg)}, ties={self.ties!r})"
        )

    def to_pandas(self) -> Any:
        """The table as a :class:`pandas.DataFrame` (needs the ``pandas`` extra)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError(
                "ThresholdTable.to_pandas needs pandas; install it with "
                "`pip install 'precall[pandas]'`"
            ) from None
        return pd.DataFrame(self._columns())
