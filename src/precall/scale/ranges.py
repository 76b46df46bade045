"""Exact metrics from score ranges: the range-partitioned algorithm behind ``precall.dask``.

The rows are cut into ranges of the score (boundaries from a sample), so equal
scores always land in the same range.  Range ``r`` (ranges numbered from the
highest scores down) sorts only its own rows and gets its steps (the rows where
TP grows, see :class:`precall._core.steps.Steps`) with local counts; adding the
*exclusive prefix* of the ranges' totals, ``(TP0, FP0)`` = the positive and
negative weight of every range above, turns them into the global steps of that
part of the table.  Every metric is then a reduction over ranges:

* step AP, trapezoid, Davis & Goadrich and ROC-AUC are sums of per-step terms
  that only involve the step and the point just above it (inside the step's
  own fields once shifted): each range returns its partial sum;
* "voc2007" and "coco" take, at each recall threshold, the best precision at
  recall >= the threshold: each range returns its best per threshold (0 where
  none of its steps reaches it) and the global value is the maximum over ranges
  (exact: a maximum does not round);
* "voc2010" weights each step's recall gain by the envelope, the best precision
  at this step or any later one.  A range needs the best precision of the
  ranges below it (lower scores, higher recall): the *suffix maximum* of the
  ranges' own best precisions is passed back, and the range sums
  ``gain * max(local envelope, suffix maximum)``;
* the best F1 is the maximum over ranges (the highest range among equals, as the
  in-memory ``argmax`` takes the first).

Nothing but a range's own rows and O(1) numbers per range (101 for the coco
grid) ever meets in one place.  The functions here are plain numpy; ``wire``
connects them with any ``delayed`` (``dask.delayed`` or, for tests, calling at
once).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from .._core import conventions as kernels
from .._core.evaluation import Evaluation, F1Point, auprg, best_f1, make_evaluation, unit_positives
from .._core.sort import sorted_scores, sorted_split
from .._core.steps import Steps, no_steps, reweighting, reweight, steps_from_sorted, steps_of
from .._core.undefined import NO_POSITIVES, ONE_CLASS_ROC, undefined
from .._core.validate import AP_METHODS, BinaryInput
from ..table import ThresholdTable, table_of, trusted_table
from .accumulator import state_from_sorted, table_of_state

__all__ = ["Part", "assemble", "boundaries", "combine", "local_steps", "local_table", "offsets", "sample", "shift",
           "split", "wire", "wire_table", "with_policy"]

_SAMPLE = 1024  # sample points per partition for the boundaries


def sample(data: BinaryInput, k: int = _SAMPLE) -> tuple[np.ndarray, float]:
    """Every ``n/k``-th score of a partition, and the number of rows each stands for."""
    n = data.scores.size
    if n == 0:
        return data.scores[:0].astype(np.float64), 0.0
    stride = max(1, n // k)
    picked = data.scores[::stride].astype(np.float64)
    return picked, n / picked.size


def boundaries(samples: list[tuple[np.ndarray, float]], n_ranges: int) -> np.ndarray:
    """At most ``n_ranges - 1`` increasing distinct cut points at the sample's quantiles.

    A row with score ``s`` goes to range ``searchsorted(cuts, s, side="right")``
    (0 = lowest scores), so equal scores share a range.
    """
    values = np.concatenate([v for v, _ in samples]) if samples else np.zeros(0)
    if values.size == 0 or n_ranges <= 1:
        return np.zeros(0)
    weights = np.concatenate([np.full(v.size, w) for v, w in samples])
    order = np.argsort(values, kind="stable")
    values, cum = values[order], np.cumsum(weights[order])
    targets = cum[-1] * np.arange(1, n_ranges) / n_ranges
    cuts = values[np.minimum(np.searchsorted(cum, targets), values.size - 1)]
    return np.unique(cuts)


Piece = Any  # unweighted: (positives' scores, negatives' scores), each sorted; weighted: a BinaryInput


def split(data: BinaryInput, cuts: np.ndarray) -> list[Piece]:
    """A partition's rows by range (lowest scores first).

    Without weights the positives' and the negatives' scores are sorted apart
    (``np.sort``) and cut with ``searchsorted`` at the cut points: the pieces
    are sorted slices.  With weights each row's range is found and the rows are
    grouped by range with a counting sort.
    """
    n_ranges = cuts.size + 1
    if data.weight is None:
        p, q = sorted_split(data)
        ep = np.concatenate(([0], np.searchsorted(p, cuts, side="left"), [p.size]))
        eq = np.concatenate(([0], np.searchsorted(q, cuts, side="left"), [q.size]))
        return [(p[ep[r]:ep[r + 1]], q[eq[r]:eq[r + 1]]) for r in range(n_ranges)]
    which = np.searchsorted(cuts, data.scores, side="right").astype(np.uint16 if n_ranges < 1 << 16 else np.int64)
    order = np.argsort(which, kind="stable")  # a radix sort for 16-bit keys
    ends = np.concatenate(([0], np.cumsum(np.bincount(which, minlength=n_ranges))))
    s, y, w = data.scores[order], data.positive[order], data.weight[order]
    return [BinaryInput(s[a:b], y[a:b], w[a:b], data.pos_label, int(b - a)) for a, b in zip(ends[:-1], ends[1:])]


def _gather(pieces: list[Piece]) -> Any:
    """A range's rows from its pieces: (sorted positives, sorted negatives) without
    weights, a ``BinaryInput`` with them, None when the range is empty."""
    if not pieces:
        return None
    if isinstance(pieces[0], tuple):  # sorted slices of the positives and the negatives
        p = sorted_scores(np.concatenate([x for x, _ in pieces]))
        q = sorted_scores(np.concatenate([x for _, x in pieces]))
        return (p, q) if p.size + q.size else None
    data = BinaryInput(
        np.concatenate([x.scores for x in pieces]), np.concatenate([x.positive for x in pieces]),
        np.concatenate([x.weight for x in pieces]), pieces[0].pos_label, sum(x.n_samples for x in pieces))
    return data if data.scores.size else None


def local_steps(pieces: list[Piece]) -> Steps | None:
    """A range's steps with its own counts (TP and FP from 0 at its top), or None if empty."""
    data = _gather(pieces)
    if data is None:
        return None
    return steps_from_sorted(*data, "group") if isinstance(data, tuple) else steps_of(data, "group")


def local_table(pieces: list[Piece]) -> ThresholdTable | None:
    """A range's grouped table with its own counts, or None if empty."""
    data = _gather(pieces)
    if data is None:
        return None
    if isinstance(data, tuple):  # already sorted: counted and merged, not sorted again
        return table_of_state(*state_from_sorted(*data))
    return table_of(data, "group")


def totals(local: Steps | ThresholdTable | None) -> tuple[float, float, bool]:
    """A range's positive and negative weight (its last cumulative counts), and whether integer."""
    if local is None:
        return 0.0, 0.0, True
    if isinstance(local, Steps):
        return float(local.n_pos[0]), float(local.n_neg[0]), local.exact
    return float(local.n_pos), float(local.n_neg), local.tp.dtype.kind in "iu"


def offsets(per_range: list[tuple[float, float, bool]]) -> tuple[list[tuple[Any, Any]], tuple[Any, Any]]:
    """Each range's exclusive prefix (TP0, FP0) from the top (ranges lowest scores first),
    and the grand totals.  Integer counts are added exactly; float weights give each prefix
    correctly rounded (``math.fsum`` of the ranges above, whose totals are compensated sums,
    :func:`precall._core.sort.compensated_cumsum`), so a shifted cumulative weight is within
    about 1.5 ulps of the exact sum whatever the number of ranges.  The totals are the lowest
    non-empty range's prefix plus its own total: the very sum that gives its last TP, so
    recall reaches exactly 1."""
    exact = all(e for _, _, e in per_range)
    kind = int if exact else float
    prefix: list[tuple[Any, Any]] = [(0, 0)] * len(per_range)
    if not per_range:
        return prefix, (kind(0), kind(0))
    if exact:
        tp, fp = 0, 0
        for r in range(len(per_range) - 1, -1, -1):
            prefix[r] = (tp, fp)
            tp, fp = tp + int(per_range[r][0]), fp + int(per_range[r][1])
        return prefix, (tp, fp)
    for r in range(len(per_range)):
        above = per_range[r + 1:]
        prefix[r] = (math.fsum(float(t[0]) for t in above), math.fsum(float(t[1]) for t in above))
    low = next((r for r, t in enumerate(per_range) if t[0] or t[1]), 0)  # the lowest range with rows
    return prefix, (prefix[low][0] + float(per_range[low][0]), prefix[low][1] + float(per_range[low][1]))


def shift(local: Steps | None, prefix: tuple[Any, Any] | None, grand: tuple[Any, Any]) -> Steps:
    """The global steps of a range: its local steps shifted by the weight of the ranges above."""
    if local is None or prefix is None:
        return _no_steps(grand)
    tp0, fp0 = prefix
    return Steps(local.tp + tp0, local.fp + fp0, local.dtp, local.fp_prev + fp0, np.array([float(grand[0])]),
                 np.array([float(grand[1])]), local.thresholds, local.exact, True)


def shift_table(local: ThresholdTable | None, prefix: tuple[Any, Any] | None) -> Any:
    """The rows of the global table in a range: (thresholds, TP, FP)."""
    if local is None or prefix is None:
        return None
    return local.thresholds, local.tp + prefix[0], local.fp + prefix[1]


def assemble(rows: list[Any]) -> ThresholdTable:
    """The grouped table from the ranges' rows (lowest scores first)."""
    present = [r for r in reversed(rows) if r is not None]  # from the highest scores
    if not present:
        raise ValueError("`y_true` and `y_score` must not be empty; got 0 samples")
    thresholds, tp, fp = (np.concatenate([r[k] for r in present]) for k in range(3))
    return trusted_table(thresholds, tp, fp, tp[-1], fp[-1], "group")


@dataclass(frozen=True)
class Part:
    """What one range contributes (internal)."""

    sums: dict[str, Any]  # step, trapezoid, interpolated (precision x TP), roc (TP x FP; int when exact)
    grids: dict[str, np.ndarray]  # voc2007 / coco: best precision per recall threshold
    best_precision: float  # over the range's steps (0 if none): the suffix maximum for voc2010
    best_f1: F1Point | None
    exact: bool
    auprg: float  # the range's part of the area under the PR-gain curve (local given the shifted steps)
    unit_positives: bool  # whole positive weights: the minimum AP is defined


def summarize(s: Steps, recall_grid: str) -> Part:
    """The contributions of a range that need nothing from the other ranges: the kernels'
    own partial sums and grid maxima (:mod:`precall._core.conventions`)."""
    has_steps = s.tp.shape[1] > 0
    sums = {
        "step": float(kernels.step_sum(s)[0]),
        "trapezoid": float(kernels.trapezoid_sum(s)[0]),
        "interpolated": float(np.sum(kernels.interpolated_areas(s))) if has_steps else 0.0,
        "roc": int(kernels.twice_fp_area(s)[0]) if s.exact else float(kernels.twice_fp_area(s)[0]),
    }
    grids = {m: kernels.grid_precisions(s, m, recall_grid)[0] if s.n_pos[0] > 0 else np.zeros(0)
             for m in ("voc2007", "coco")}
    tp = s.tp[0].astype(np.float64)
    best_precision = float((tp / (tp + s.fp[0])).max(initial=0.0))
    area = auprg(s) if has_steps and s.n_pos[0] > 0 and s.n_neg[0] > 0 else 0.0
    return Part(sums, grids, best_precision, best_f1(s), s.exact, area, unit_positives(s))


def voc2010_sum(s: Steps, below: float) -> float:
    """The range's part of Detectron's all-point AP: the kernel's sum without the end
    sentinel, the envelope raised to ``below`` (the best precision of the ranges under it)."""
    if s.tp.shape[1] == 0:
        return 0.0
    return float(kernels.voc2010_sum(s, np.array([below]), sentinel=False)[0])


def suffix_best(parts: list[Part]) -> list[float]:
    """For each range (lowest scores first), the best precision of the ranges below it."""
    out, best = [], 0.0
    for p in parts:
        out.append(best)
        best = max(best, p.best_precision)
    return out


def combine(parts: list[Part], voc2010: list[float], grand: Any, *, n_samples: int,
            recall_grid: str) -> Evaluation:
    """The :class:`Evaluation` of all ranges (lowest scores first); NaN where a result
    is undefined (see :func:`with_policy`)."""
    n_pos, n_neg = float(grand[0]), float(grand[1])
    if n_pos == 0:
        ap = {m: float("nan") for m in AP_METHODS}
    else:
        total = {k: sum(p.sums[k] for p in parts) for k in ("step", "trapezoid", "interpolated")}
        ap = {
            "step": total["step"] / n_pos,
            "voc2007": float(kernels.grid_average(np.max([p.grids["voc2007"] for p in parts], axis=0)[None, :],
                                                  "voc2007", recall_grid)[0]),
            "voc2010": float(sum(voc2010)),
            "coco": float(kernels.grid_average(np.max([p.grids["coco"] for p in parts], axis=0)[None, :], "coco",
                                               recall_grid)[0]),
            "trapezoid": total["trapezoid"] / 2.0 / n_pos,
            "interpolated": total["interpolated"] / n_pos,
        }
    if n_pos == 0 or n_neg == 0:
        auc = float("nan")
    else:
        auc = kernels.roc_auc_from_sum(sum(p.sums["roc"] for p in parts), n_pos, n_neg, all(p.exact for p in parts))
    best = None
    for p in reversed(parts):  # from the highest scores: the first maximum wins, as argmax
        if p.best_f1 is not None and (best is None or p.best_f1.f1 > best.f1):
            best = p.best_f1
    return make_evaluation(
        ap, auc, n_pos=n_pos, n_neg=n_neg, n_samples=n_samples, best_f1=best, ties="group", recall_grid=recall_grid,
        auprg=float(sum(p.auprg for p in parts)) if n_pos > 0 and n_neg > 0 else float("nan"),
        unit_positives=all(p.unit_positives for p in parts),
    )


def with_policy(ev: Evaluation, policy: Any) -> Evaluation:
    """Apply the undefined-result policy to a combined evaluation, where the caller is
    (a worker's warnings would not reach the user)."""
    if ev.n_pos > 0 and ev.n_neg > 0:
        return ev
    ap = ev.average_precision
    if ev.n_pos == 0:
        value = undefined("average precision", NO_POSITIVES, 0.0, policy, stacklevel=4)
        ap = {m: value for m in AP_METHODS}
    auc = undefined("ROC AUC", ONE_CLASS_ROC, float("nan"), policy, stacklevel=4)
    return replace(ev, average_precision=ap, roc_auc=auc)


def _layout(partitions: list[Any], delayed: Callable[..., Any], n_ranges: int) -> list[Any]:
    """Cut points from the partitions' samples and the partitions split by range: each
    range's pieces (a list per range, lowest scores first)."""
    samples = [delayed(sample)(p) for p in partitions]
    cuts = delayed(boundaries)(samples, n_ranges)
    splits = [delayed(split)(p, cuts) for p in partitions]
    n = delayed(_n_ranges)(cuts)
    return [delayed(_pieces)(r, n, [delayed(_piece)(s, r) for s in splits]) for r in range(n_ranges)]


def wire(partitions: list[Any], delayed: Callable[..., Any], *, n_ranges: int, recall_grid: str,
         prevalences: tuple[float | None, ...] = (None,)) -> list[Any]:
    """The whole evaluation as calls of ``delayed`` (``dask.delayed`` builds a graph;
    ``lambda f, **kw: f`` runs it at once).  ``partitions`` are (delayed) ``BinaryInput``s.

    One evaluation per entry of ``prevalences`` (None: as the data are; a number: the
    negatives reweighted to it, :func:`precall._core.steps.reweight`), all from the
    same range steps.
    """
    local = [delayed(local_steps)(pieces) for pieces in _layout(partitions, delayed, n_ranges)]
    offs = delayed(offsets, nout=2)([delayed(totals)(x) for x in local])
    prefix, grand = offs[0], offs[1]
    steps = [delayed(shift)(x, delayed(_item)(prefix, r), grand) for r, x in enumerate(local)]
    n_samples = delayed(sum)([delayed(_n_samples)(p) for p in partitions])
    out = []
    for pi in prevalences:
        at = steps if pi is None else [delayed(reweight)(st, pi) for st in steps]
        parts = [delayed(summarize)(st, recall_grid) for st in at]
        below = delayed(suffix_best)(parts)
        voc = [delayed(voc2010_sum)(st, delayed(_item)(below, r)) for r, st in enumerate(at)]
        out.append(delayed(combine)(parts, voc, grand if pi is None else delayed(_grand_at)(grand, pi),
                                    n_samples=n_samples, recall_grid=recall_grid))
    return out


def wire_table(partitions: list[Any], delayed: Callable[..., Any], *, n_ranges: int) -> Any:
    """The grouped table, range by range (it must fit on the client)."""
    local = [delayed(local_table)(pieces) for pieces in _layout(partitions, delayed, n_ranges)]
    prefix = delayed(offsets, nout=2)([delayed(totals)(x) for x in local])[0]
    return delayed(assemble)([delayed(shift_table)(x, delayed(_item)(prefix, r)) for r, x in enumerate(local)])


def _grand_at(grand: tuple[Any, Any], prevalence: float) -> tuple[float, float]:
    r = reweighting(float(grand[0]), float(grand[1]), prevalence)  # the totals reweight gives each range's steps
    return float(r.n_pos_at), float(r.n_neg_at)


def _n_ranges(cuts: np.ndarray) -> int:
    return int(cuts.size) + 1


def _piece(pieces: list[Piece], r: int) -> Piece | None:
    return pieces[r] if r < len(pieces) else None


def _pieces(r: int, n: int, pieces: list[Piece | None]) -> list[Piece]:
    return [p for p in pieces if p is not None] if r < n else []


def _no_steps(grand: Any) -> Steps:
    return no_steps(float(grand[0]), float(grand[1]))


def _item(values: Any, r: int) -> Any:
    return values[r] if r < len(values) else None  # a range past the cut points: empty, never read


def _n_samples(data: BinaryInput) -> int:
    return data.n_samples
