"""One evaluation of one problem: every convention, ROC-AUC, AUPRG and the best F1 (numpy only).

:func:`make_evaluation` is the one place an :class:`Evaluation` is assembled
(the prevalence, the minimum and the normalised AP follow from the counts), so
the in-memory route (:func:`evaluation_from_steps`), the streaming accumulator
and the score ranges of :mod:`precall.dask` give the same object.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

import numpy as np

from . import backend
from .conventions import (
    COCO_GRID, CONVENTIONS, VOC07_GRID, _coco_precision, _envelope, _grid_indices, ap, at_most_one, defined_ap,
    grid_average, grid_bounds, interpolated_areas, one_step_average, one_step_averages, precision_of, roc_auc,
    roc_auc_from_sum, roc_auc_from_twice, step_sum, trapezoid_sum, twice_fp_area, unit_interval, voc2010_sum,
    worst_precision_sums,
)
from .sort import untag_scores
from .steps import (
    KeySteps, SplitSteps, Steps, key_steps, one_problem, row_sum, segment_sums, split_steps, tree_leaves, tree_total,
)
from .text import fixed
from .undefined import NO_POSITIVES, ONE_CLASS_ROC, UNRANKED_POSITIVES, undefined
from .validate import AP_METHODS, BinaryInput, check_number

__all__ = ["BatchNumbers", "Evaluation", "F1Point", "auprg", "auprg_values", "batch_numbers", "best_f1", "best_f1_points",
           "evaluation_from_keys", "evaluation_from_steps",
           "gains", "make_evaluation", "unranked_positives", "min_average_precisions", "normalized_average_precision",
           "normalized_average_precisions",
           "unit_positives"]


@dataclass(frozen=True)
class F1Point:
    """The operating point with the highest F1 (the highest threshold among equals).

    ``threshold`` is the score at which it is reached: predict positive when
    ``score >= threshold`` (with ``ties="stable"``, the point may split a run of
    equal scores, which no threshold reproduces).
    """

    threshold: float
    f1: float
    precision: float
    recall: float


@dataclass(frozen=True)
class Evaluation:
    """Every convention from one sort of the scores.

    Attributes
    ----------
    average_precision : dict of str to float
        AP by convention name (:data:`precall.AP_METHODS`).
    roc_auc : float
        Area under the ROC curve (with grouped ties whatever ``ties`` is, so it
        equals :func:`precall.roc_auc`).
    prevalence : float
        ``n_pos / (n_pos + n_neg)``: the baseline, the precision of a random
        ranking at every recall.
    n_pos, n_neg : float
        Total positive and negative weight.
    n_samples : int or None
        Samples given (None when evaluated from a table).
    best_f1 : F1Point or None
        The operating point with the highest F1 (None without positives).
    ties : str
        The tie rule used.
    recall_grid : str
        The recall grid used by "voc2007" and "coco".
    min_average_precision : dict of str to float
        The smallest AP any ranking of these class counts gets, by convention
        (:func:`precall.min_average_precision`; Boyd et al. 2012 for "step").
        NaN without positives or with fractional positive weights, and NaN with
        an :class:`~precall.UndefinedMetricWarning` (``on_undefined``: none
        under ``"nan"``, an error under ``"raise"``) when some positives are
        never ranked (a detection table's ground truths that no detection found:
        ``n_pos`` above the last TP), as no ranking of the rows reaches them.
    normalized_average_precision : dict of str to float
        ``(AP - min AP) / (1 - min AP)`` by convention: 0 for the worst
        ranking, 1 for a perfect one.
    auprg : float
        Area under the precision-recall-gain curve (Flach & Kull 2015; the
        ``prg`` package's ``calc_auprg``), ties grouped; NaN with one class.
    """

    average_precision: dict[str, float]
    roc_auc: float
    prevalence: float
    n_pos: float
    n_neg: float
    n_samples: int | None
    best_f1: F1Point | None
    ties: str
    recall_grid: str
    min_average_precision: dict[str, float]
    normalized_average_precision: dict[str, float]
    auprg: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary of the result."""
        return asdict(self)

    def __str__(self) -> str:
        width = max(len(m) for m in AP_METHODS)
        lines = [f"AP conventions (ties={self.ties!r}, recall_grid={self.recall_grid!r}):",
                 f"  {''.ljust(width)}  {'AP':>8}  {'min AP':>8}  {'normalised':>10}"]
        for m in AP_METHODS:
            lines.append(
                f"  {m.ljust(width)}  {fixed(self.average_precision[m], 6):>8}  "
                f"{fixed(self.min_average_precision[m], 6):>8}  {fixed(self.normalized_average_precision[m], 6):>10}  "
                f"{CONVENTIONS[m].summary}"
            )
        lines.append(f"ROC-AUC     {fixed(self.roc_auc, 6)}")
        lines.append(f"AUPRG       {fixed(self.auprg, 6)}  area under the precision-recall-gain curve")
        lines.append(
            f"prevalence  {self.prevalence:.6f}  random baseline (n_pos={self.n_pos:g}, n_neg={self.n_neg:g})"
        )
        if self.best_f1 is not None:
            b = self.best_f1
            lines.append(
                f"best F1     {b.f1:.6f}  at score >= {b.threshold:g} "
                f"(precision {b.precision:.6f}, recall {b.recall:.6f})"
            )
        return "\n".join(lines)


def _lengths(s: Steps) -> np.ndarray:
    """Each row's number of steps (all entries, unless the batch is ragged)."""
    return np.full(s.m, s.tp.shape[1]) if s.lengths is None else s.lengths


def best_f1_points(s: Steps, k: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per problem: the step with the highest F1 (the first among equals; ``k`` when given), its F1,
    precision and recall; index -1 and NaN without a step or without positives."""
    m, r = s.tp.shape
    found = (s.n_pos > 0) & (_lengths(s) > 0)
    if r == 0:
        nan = np.full(m, np.nan)
        return np.full(m, -1), nan, nan, nan.copy()
    with np.errstate(invalid="ignore", divide="ignore"):
        if k is None:
            tp = s.tp.astype(np.float64)
            f1 = 2.0 * tp / (tp + s.fp + s.n_pos[:, None])
            k = np.argmax(np.where(np.isnan(f1), -np.inf, f1), axis=1)  # padding repeats the last step: never first
        rows = np.arange(m)
        tk, fk = s.tp[rows, k].astype(np.float64), s.fp[rows, k]
        f1k = 2.0 * tk / (tk + fk + s.n_pos)  # the same operations as the row's: the same bits
        precision, recall = tk / (tk + fk), tk / s.n_pos
    nan = np.nan
    return (np.where(found, k, -1), np.where(found, f1k, nan), np.where(found, precision, nan),
            np.where(found, recall, nan))


def best_f1(s: Steps, points: tuple[np.ndarray, ...] | None = None) -> F1Point | None:
    """The best-F1 point of one problem's steps (None without a step); ``points``: its
    :func:`best_f1_points` when computed already."""
    k, f1, precision, recall = best_f1_points(s) if points is None else points
    if k[0] < 0:
        return None
    return F1Point(threshold=float(s.thresholds[k[0]]), f1=float(f1[0]), precision=float(precision[0]),  # type: ignore[index]
                   recall=float(recall[0]))


def gains(tp: np.ndarray, fp: np.ndarray, n_pos: float, n_neg: float) -> tuple[np.ndarray, np.ndarray]:
    """Recall gain and precision gain at counts with ``tp > 0``: Flach & Kull's
    ``(x - pi) / ((1 - pi) x)``, written ``1 - (P/N)(FN/TP)`` and ``1 - (P/N)(FP/TP)``."""
    k = n_pos / n_neg
    return 1.0 - k * (n_pos - tp) / tp, 1.0 - k * fp / tp


def auprg(s: Steps) -> float:
    """Area under the PRG curve of one problem's steps (NaN without positives or negatives)
    (:func:`auprg_values`)."""
    return float(auprg_values(s)[0])


def auprg_values(s: Steps) -> np.ndarray:
    """Area under the PRG curve of each problem (NaN without positives or negatives).

    Between the point above a step (TP_a, FP_a) and the step (TP_b, FP_b) the
    PRG curve is straight (the gains are projective in the counts), so the
    trapezoid is its area; the segment that crosses recall gain 0 starts at
    the crossing, found on the straight ROC segment at ``TP = P^2 / (P + N)``.
    Rows where only FP grows add no width.  As ``calc_auprg`` of the authors'
    ``prg`` package: parts below precision gain 0 count negatively.  Each row is
    summed over its own steps (:func:`~precall._core.steps.segment_sums`): a
    problem's value does not depend on the batch it is in.
    """
    m, r = s.tp.shape
    p, n = s.n_pos.astype(np.float64), s.n_neg.astype(np.float64)
    lengths = _lengths(s)
    defined = _prg_defined(s)
    if not defined.any():
        return np.full(m, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        t0 = (p * (p / (p + n)))[:, None]  # recall = prevalence: recall gain 0 (no product of two weights)
        # TP grows strictly from step to step, and the point above a step has the previous
        # step's TP: the steps at or past recall gain 0 are a suffix, and only its first
        # step can start below it
        real = np.arange(r) < lengths[:, None]
        k = np.sum((s.tp < t0) & real, axis=1)
        terms = np.empty((m, r))
        width = max(1, _CELLS // m)  # the terms a block of columns at a time: temporaries of that size
        for start in range(0, r, width):
            cols = slice(start, start + width)
            terms[:, cols] = _prg_terms(s, cols, start, k, t0, real[:, cols], p[:, None], n[:, None])
    if m == 1:  # what segment_sums gives for one segment (a view: the kept steps are a suffix of the real ones)
        area = np.array([np.sum(terms[0, k[0]:lengths[0]]) + 0.0]) / 2.0 + 0.0
    else:
        keep = real & (np.arange(r) >= k[:, None])
        counts = keep.sum(axis=1)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        area = segment_sums(terms[keep], starts, counts) / 2.0 + 0.0  # no -0.0
    return np.where(defined, at_most_one(area), np.nan)  # at most 1, as an AP is in [0, 1]


def _prg_defined(s: Steps) -> np.ndarray:
    """The problems whose AUPRG is defined: both classes and a step."""
    return (s.n_pos > 0) & (s.n_neg > 0) & (_lengths(s) > 0) & (s.tp.shape[1] > 0)


#: cells of the PRG terms computed at once (:func:`auprg_values`)
_CELLS = 1 << 18


def _prg_terms(s: Steps, cols: slice, start: int, k: np.ndarray, t0: np.ndarray, real: np.ndarray, p: np.ndarray,
               n: np.ndarray) -> np.ndarray:
    """Twice the trapezoid of each step of the columns ``cols`` of ``s`` in PRG space (:func:`auprg_values`)."""
    b = s.tp[:, cols].astype(np.float64)
    fb = s.fp[:, cols].astype(np.float64)
    a = b - s.dtp[:, cols]
    fa = s.fp_prev[:, cols].astype(np.float64)
    first = (np.arange(start, start + b.shape[1]) == k[:, None]) & real & (a < t0)
    fa = np.where(first, fa + (t0 - a) / (b - a) * (fb - fa), fa)  # a ratio first: no product of two weights
    a = np.where(first, t0, a)
    rg_a, pg_a = gains(a, fa, p, n)
    rg_b, pg_b = gains(b, fb, p, n)
    rg_b -= rg_a
    pg_b += pg_a
    return rg_b * pg_b


def unranked_positives(s: Steps) -> float:
    """The positive weight of one problem that is never ranked: ``n_pos`` above its last TP (a
    detection table's ground truths that no detection found), 0 when every positive is ranked.
    A difference from rounding (weights summed in another order) is not a positive: below half a
    unit, or 2**-40 of ``n_pos`` (whole weights past 2**41)."""
    n_pos = float(s.n_pos[0])
    last = float(s.tp[0, -1]) if s.tp.shape[1] else 0.0
    missing = n_pos - last
    return missing if missing >= max(0.5, n_pos * 2.0**-40) else 0.0


def unit_positives(s: Steps) -> bool:
    """Whether the positives' weights can be counts (whole step sizes)."""
    d = s.dtp
    return d.dtype.kind in "iu" or bool(np.all(d == np.round(d)))


def normalized_average_precisions(average_precision: np.ndarray, min_ap: np.ndarray) -> np.ndarray:
    """:func:`normalized_average_precision` of arrays, element by element (the same floats)."""
    a, low = np.asarray(average_precision, dtype=np.float64), np.asarray(min_ap, dtype=np.float64)
    undefined = np.isnan(a) | np.isnan(low) | (low >= 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (a - low) / (1.0 - low)
    out[undefined] = np.nan
    return out


def normalized_average_precision(average_precision: float, min_ap: float) -> float:
    """``(AP - AP_min) / (1 - AP_min)``: 0 at the worst ranking, 1 at a perfect one.

    NaN when ``AP_min`` is 1 (no negatives: every ranking is perfect) or either
    value is NaN (undefined, as :class:`precall.Evaluation` reports it).

    Parameters
    ----------
    average_precision : float in [0, 1]
        An AP by some convention.
    min_ap : float in [0, 1]
        The minimum AP of the same convention and class counts (:func:`precall.min_average_precision`).

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If either is not a real number.
    ValueError
        If either is outside [0, 1] or infinite, or ``average_precision`` is
        below ``min_ap`` (by more than :data:`MIN_AP_ROUNDING`, the rounding
        of two separately computed values): no ranking scores below its
        minimum, so the two are not of the same convention and class counts.

    See Also
    --------
    min_average_precision : the minimum it is normalised by.

    Examples
    --------
    >>> import precall
    >>> round(precall.normalized_average_precision(0.55, 0.1), 6)
    0.5
    >>> precall.normalized_average_precision(0.5, 0.6)
    Traceback (most recent call last):
    ...
    ValueError: `average_precision` 0.5 is below `min_ap` 0.6: no ranking scores below its minimum AP; give the minimum of the same convention and class counts (precall.min_average_precision)
    """
    ap, low = (_unit_or_nan(v, name) for v, name in ((average_precision, "average_precision"), (min_ap, "min_ap")))
    if ap < low - MIN_AP_ROUNDING:
        raise ValueError(
            f"`average_precision` {ap:g} is below `min_ap` {low:g}: no ranking scores below its minimum AP; give "
            "the minimum of the same convention and class counts (precall.min_average_precision)"
        )
    return _normalized(ap, low)


#: How far an AP may lie below its minimum AP in :func:`normalized_average_precision`: the two are
#: computed apart (the minimum past 2**20 positives by an expansion equal to the sum to 1e-12)
MIN_AP_ROUNDING = 1e-9


def _unit_or_nan(value: Any, name: str) -> float:
    """An AP argument: NaN (undefined) or a number in [0, 1] (:func:`~precall._core.validate.check_number`)."""
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)) and math.isnan(value):
        return float("nan")
    return check_number(value, name, low=0, high=1, hint="or NaN for an undefined AP")


def min_average_precisions(n_pos: np.ndarray, n_neg: np.ndarray, usable: np.ndarray, ties: str, recall_grid: str
                           ) -> dict[str, np.ndarray]:
    """The minimum AP of each (P, N) pair by every convention (``conventions.min_average_precision``
    of each, bit for bit; NaN where not ``usable``, 1 without negatives), once per distinct pair.

    ``step`` (and ``trapezoid`` with stable ties) is Boyd et al.'s worst ranking, a sum over the
    positives (:func:`~precall._core.conventions.worst_precision_sums`); the other conventions'
    minimum is the AP of one tied run of every positive after the negatives
    (:func:`~precall._core.conventions.one_step_averages`, all pairs at once).
    """
    if n_pos.shape[0] == 1:  # one problem (evaluate): on Python floats
        low = pair_minimums(float(n_pos[0]), float(n_neg[0]), bool(usable[0]), ties, recall_grid)
        return {m: np.array([v]) for m, v in low.items()}
    out = np.full((len(AP_METHODS), n_pos.shape[0]), np.nan)  # a row a convention, in AP_METHODS' order
    out[:, usable & (n_neg == 0)] = 1.0
    idx = np.flatnonzero(usable & (n_neg > 0))
    if not idx.size:
        return dict(zip(AP_METHODS, out))
    pairs, inverse = np.unique(np.stack([n_pos[idx], n_neg[idx]], axis=1), axis=0, return_inverse=True)
    out[:, idx] = _minimums(pairs[:, 0], pairs[:, 1], ties, recall_grid)[:, inverse.ravel()]
    return dict(zip(AP_METHODS, out))


def pair_minimums(n_pos: float, n_neg: float, usable: bool, ties: str, recall_grid: str) -> dict[str, float]:
    """:func:`min_average_precisions` of one pair, on Python floats (``evaluate``: the same bits
    without numpy's cost per call on arrays of one value)."""
    if usable and n_neg == 0:
        return dict.fromkeys(AP_METHODS, 1.0)
    if not (usable and n_neg > 0):
        return dict.fromkeys(AP_METHODS, float("nan"))
    values = one_step_average(n_pos, n_neg, recall_grid)
    worst = float(worst_precision_sums(np.array([n_pos]), np.array([n_neg]))[0])
    values["step"] = worst / n_pos
    if ties != "group":
        values["trapezoid"] = (worst - n_pos / (n_pos + n_neg) / 2.0) / n_pos
    return {m: float(unit_interval(values[m])) for m in AP_METHODS}  # defined_ap's clip


def _minimums(p: np.ndarray, n: np.ndarray, ties: str, recall_grid: str) -> np.ndarray:
    """(conventions, pairs): :func:`min_average_precisions` of pairs with ``N > 0``."""
    values = one_step_averages(p, n, recall_grid)
    worst = worst_precision_sums(p, n)
    values["step"] = worst / p
    if ties != "group":
        values["trapezoid"] = (worst - p / (p + n) / 2.0) / p
    return unit_interval(np.stack([values[m] for m in AP_METHODS]))  # defined_ap's clip


def make_evaluation(
    average_precision: dict[str, float], roc_auc: float, *, n_pos: float, n_neg: float, n_samples: int | None,
    best_f1: F1Point | None, ties: str, recall_grid: str, auprg: float, unit_positives: bool,
    all_ranked: bool = True,
) -> Evaluation:
    """The one constructor of :class:`Evaluation`: the prevalence, the minimum AP of these
    counts (NaN without positives, with fractional positive weights or, ``all_ranked`` False,
    with positives never ranked: :func:`unranked_positives`) and the normalised AP follow from
    the counts."""
    total = n_pos + n_neg
    average_precision = {m: float(unit_interval(v)) for m, v in average_precision.items()}
    roc_auc = float(unit_interval(roc_auc))
    auprg = float(at_most_one(float(auprg)))  # at most 1 (a float sum can land an ulp above), no -0.0
    usable = n_pos > 0 and float(n_pos).is_integer() and unit_positives and all_ranked
    low = pair_minimums(float(n_pos), float(n_neg), usable, ties, recall_grid)
    return Evaluation(
        average_precision=average_precision, roc_auc=roc_auc,
        prevalence=n_pos / total if total > 0 else float("nan"), n_pos=n_pos, n_neg=n_neg, n_samples=n_samples,
        best_f1=best_f1, ties=ties, recall_grid=recall_grid, min_average_precision=low,
        normalized_average_precision={m: _normalized(average_precision[m], low[m]) for m in AP_METHODS},
        auprg=auprg,
    )


def _normalized(average_precision: float, min_ap: float) -> float:
    """:func:`normalized_average_precisions` of one pair of floats (the same operations): the public
    :func:`normalized_average_precision` and ``evaluate``'s."""
    if average_precision != average_precision or min_ap != min_ap or min_ap >= 1.0:
        return float("nan")
    return (average_precision - min_ap) / (1.0 - min_ap)


class BatchNumbers(NamedTuple):
    """Every number :func:`batch_numbers` computes, one value per problem (None: not asked)."""

    average_precision: dict[str, np.ndarray] | None
    """AP by convention, as :func:`~precall._core.conventions.ap` returns it."""
    best_f1: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None
    """:func:`best_f1_points`: the step, F1, precision and recall."""
    roc_auc: np.ndarray | None
    auprg: np.ndarray | None


def batch_numbers(s: Steps | None, g: Steps | None, recall_grid: str = "reference", *, want_f1: bool = True
                  ) -> BatchNumbers:
    """Every number of :func:`evaluation_from_steps` for a batch of problems: the six AP conventions
    and the best F1 of the steps ``s``, ROC-AUC and AUPRG of their grouped-ties steps ``g`` (the same
    object when ties are grouped; either may be None: its numbers are then None); the best F1
    only ``want_f1``.

    The compiled twin (:func:`precall._core.compiled.batch_numbers`, when the kernel choice takes it
    for this many entries) computes them in two passes a row with the same bits; the numpy kernels
    below are its oracle.
    """
    entries = (0 if s is None else s.tp.size) + (0 if g is None or g is s else g.tp.size)
    fast = backend.compiled(entries)
    if fast is not None and all(x is None or _compilable(x) for x in (s, g)):
        return _compiled_numbers(fast, s, g, recall_grid, want_f1)
    if s is g and s is not None and _by_leaves(s):  # one long problem: the numpy kernels a node at a time
        passed = _split_pass(_ArraySteps.of(s), recall_grid)
        auc, prg = _pass_ranked(passed, s)
        return BatchNumbers(_pass_averages(passed, s.n_pos, recall_grid),
                            best_f1_points(s, passed[3]) if want_f1 else None, auc, prg)
    aps = best = auc = prg = None
    if s is not None:
        with np.errstate(invalid="ignore", divide="ignore"):
            precision = precision_of(s)  # one array for the conventions that read it
        aps = {m: ap(s, m, recall_grid, precision) for m in AP_METHODS}
        best = best_f1_points(s) if want_f1 else None
    if g is not None:
        auc = roc_auc(g)
        prg = auprg_values(g)
    return BatchNumbers(aps, best, auc, prg)


BY_LEAVES = 1 << 12
"""Steps of one problem (grouped ties, counts) from which the numpy route computes its numbers a node of the
summation tree at a time (:func:`_split_pass` over :class:`_ArraySteps`): each kernel's temporaries stay in
the cache (``evaluate`` of 1e6 float64 scores at 50% positives: 99 against 137-151 ms; of 1e5, 11.4 against
14.8 ms; at 10% the same time); below, the arrays whole (as fast: fewer calls of numpy)."""


def _by_leaves(s: Steps) -> bool:
    """Whether :func:`batch_numbers`' numpy route takes one problem's steps by nodes: the steps
    :class:`~precall._core.steps.SplitSteps` holds, from which :func:`_split_pass` gives the arrays' bits
    (counts, a positive gained at every step, every positive ranked: no zero width and no sentinel term
    in voc2010's sum, whose tree is then the steps'; ``2 P N < 2**62``: the ROC sum in int64)."""
    if not (s.tp.shape[0] == 1 and s.lengths is None and s.exact and s.dense and s.tp.shape[1] >= BY_LEAVES
            and s.tp.dtype == np.int64 and 2.0 * float(s.n_pos[0]) * float(s.n_neg[0]) < 2.0**62):
        return False
    return float(s.tp[0, -1]) == float(s.n_pos[0]) and bool(s.dtp[0].min() > 0)


@dataclass(frozen=True)
class _ArraySteps:
    """One problem's steps held as arrays, read as :func:`_split_pass` reads
    :class:`~precall._core.steps.SplitSteps`: any range of steps, a slice."""

    s: Steps
    length: int
    n_pos: float
    n_neg: float
    below: int

    @classmethod
    def of(cls, s: Steps) -> _ArraySteps:
        p, n = float(s.n_pos[0]), float(s.n_neg[0])
        below = int(np.count_nonzero(s.tp[0] < p * (p / (p + n))))  # auprg_values' steps below recall gain 0
        return cls(s, s.tp.shape[1], p, n, below)

    def steps(self, a: int, b: int) -> Steps:
        s = self.s
        thresholds = np.zeros(0) if s.thresholds is None else s.thresholds[a:b]  # not read by the kernels
        return one_problem(thresholds, s.tp[0, a:b], s.dtp[0, a:b], s.fp[0, a:b], s.fp_prev[0, a:b], self.n_pos,
                           self.n_neg, True)


def _compilable(s: Steps) -> bool:
    """Steps the compiled pass reads: one dtype, int64 counts exactly when ``exact``."""
    arrays = (s.tp, s.fp, s.dtp, s.fp_prev)
    dtype = np.dtype(np.int64) if s.exact else np.dtype(np.float64)
    return all(a.dtype == dtype and a.ndim == 2 for a in arrays)


def _compiled_numbers(fast: Any, s: Steps | None, g: Steps | None, recall_grid: str, want_f1: bool
                      ) -> BatchNumbers:
    """:func:`batch_numbers` by the compiled passes (a pass for ``s`` and one for ``g`` when they differ)."""
    aps = best = auc = prg = None
    both = s is g
    if s is not None:
        passed = _compiled_pass(fast, s, True, both, recall_grid)
        aps = _pass_averages(passed, s.n_pos, recall_grid)
        best = best_f1_points(s, passed[3]) if want_f1 else None
    if g is not None:
        if not both:
            passed = _compiled_pass(fast, g, False, True, recall_grid)
        auc, prg = _pass_ranked(passed, g)
    return BatchNumbers(aps, best, auc, prg)


def _pass_averages(passed: tuple, n_pos: np.ndarray, recall_grid: str) -> dict[str, np.ndarray]:
    """The six AP conventions from a compiled pass's sums and grid points."""
    sums, points07, points101 = passed[:3]
    if sums.shape[0] == 1:  # one problem (evaluate): the same operations on floats
        p = float(n_pos[0])
        if not p > 0:  # defined_ap: NaN without positives
            return {m: np.array([np.nan]) for m in AP_METHODS}
        one = {"step": sums[0, 0] / p, "voc2007": grid_average(points07, "voc2007", recall_grid)[0],
               "voc2010": sums[0, 3], "coco": grid_average(points101, "coco", recall_grid)[0],
               "trapezoid": sums[0, 1] / 2.0 / p, "interpolated": sums[0, 2] / p}
        return {m: np.array([unit_interval(np.float64(one[m]))]) for m in AP_METHODS}
    with np.errstate(invalid="ignore", divide="ignore"):
        kernels = {"step": sums[:, 0] / n_pos, "voc2007": grid_average(points07, "voc2007", recall_grid),
                   "voc2010": sums[:, 3], "coco": grid_average(points101, "coco", recall_grid),
                   "trapezoid": sums[:, 1] / 2.0 / n_pos, "interpolated": sums[:, 2] / n_pos}
    values = defined_ap(n_pos, np.stack([kernels[m] for m in AP_METHODS]))  # one call for the six
    return dict(zip(AP_METHODS, values))


def _pass_ranked(passed: tuple, g: Steps) -> tuple[np.ndarray, np.ndarray]:
    """ROC-AUC and AUPRG from a compiled pass over the grouped-ties steps ``g`` (its counts: ``g``
    may be their best step alone, :func:`evaluation_from_keys`)."""
    sums, twice = passed[0], passed[4]
    if sums.shape[0] == 1 and twice is not None:  # one problem (evaluate): the same operations on floats
        p, n = float(g.n_pos[0]), float(g.n_neg[0])
        both = p > 0 and n > 0
        length = g.tp.shape[1] if g.lengths is None else int(g.lengths[0])
        auc = roc_auc_from_sum(twice[0], p, n, g.exact) if both else np.nan
        prg = at_most_one(sums[0, 5] / 2.0) if both and length > 0 and g.tp.shape[1] > 0 else np.nan
        return np.array([auc]), np.array([prg])
    auc = roc_auc(g) if twice is None else roc_auc_from_twice(twice, g.n_pos, g.n_neg, g.exact)
    return auc, np.where(_prg_defined(g), at_most_one(sums[:, 5] / 2.0), np.nan)


def _compiled_pass(fast: Any, s: Steps, want_ap: bool, want_ranked: bool, recall_grid: str) -> tuple:
    """One call of the compiled twin on ``s``: (sums, voc2007 points, COCO points, best-F1 step,
    twice the ROC area above the curve or None when numpy is to count it)."""
    m, r = s.tp.shape
    tp, fp, dtp, fp_prev = [np.ascontiguousarray(a) for a in (s.tp, s.fp, s.dtp, s.fp_prev)]
    n_pos = np.ascontiguousarray(s.n_pos, dtype=np.float64)
    n_neg = np.ascontiguousarray(s.n_neg, dtype=np.float64)
    if s.lengths is None:
        lengths, offsets, total = np.full(m, r, dtype=np.int64), np.arange(m, dtype=np.int64) * r, m * r
    else:
        lengths = np.asarray(s.lengths, dtype=np.int64)
        ends = np.cumsum(lengths)
        offsets, total = ends - lengths, int(ends[-1]) if m else 0
    voc_mode = 0 if m == 1 else 1 if s.lengths is not None else 2  # voc2010_sum's three routes
    unit = np.ones(m)
    changed = np.zeros(m, dtype=np.int64)
    ratio = np.empty(total if want_ap else 0)  # the prepass writes every entry
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if want_ap:
            fast.numbers_prepass(tp, fp, dtp, fp_prev, n_pos, lengths, voc_mode, s.exact, offsets, ratio, unit,
                                 changed)
            np.log1p(ratio, out=ratio)  # numpy's log1p: its bits are not libm's
    # twice_fp_area's integers overflow int64 from 2 P N >= 2**62: numpy counts them in Python integers
    roc_ints = s.exact and not (2.0 * float(n_pos[0]) * float(n_neg[0]) >= 2.0**62 if m == 1 else
                                bool(np.any(2.0 * n_pos * n_neg >= 2.0**62)))
    sums = np.zeros((m, 6))
    points07, points101 = np.zeros((m, VOC07_GRID.size)), np.zeros((m, COCO_GRID.size))
    best, roc_int = np.full(m, -1, dtype=np.int64), np.zeros(m, dtype=tp.dtype)
    int_scale = s.exact and not (r >= 256 or m == 1)  # _grid_indices' short rows scale int64 counts
    grid07, grid101, reference = VOC07_GRID, COCO_GRID, recall_grid == "reference"
    if not s.exact:  # weights: the recall against the bounds of the grids' points, as _grid_indices
        grid07, grid101, reference = _WEIGHT_BOUNDS[recall_grid] + (True,)
    fast.batch_numbers(tp, fp, dtp, fp_prev, n_pos, n_neg, lengths, want_ap, s.dense, s.exact, voc_mode, int_scale,
                       reference, grid07, grid101, unit, changed, ratio, offsets,
                       want_ranked, roc_ints, sums, points07, points101, best, roc_int, False, _NO_WINDOW)
    twice = None
    if want_ranked and (roc_ints or not s.exact):
        twice = roc_int if roc_ints else sums[:, 4]
    return sums, points07, points101, best, twice


_WEIGHT_BOUNDS = {g: (grid_bounds(VOC07_GRID.size, g, VOC07_GRID), grid_bounds(COCO_GRID.size, g, COCO_GRID))
                  for g in ("reference", "exact")}
""":func:`~precall._core.conventions.grid_bounds` of both grids, by ``recall_grid``: what the compiled pass
compares a recall from weights with."""

_NO_KEYS32, _NO_KEYS64 = np.empty(0, dtype=np.uint32), np.empty(0, dtype=np.uint64)
_NO_WINDOW = (_NO_KEYS32, _NO_KEYS64, 0, np.zeros((1, 3), dtype=np.int64), 1, 0, _NO_KEYS64)  # the same types: one kernel


def _windowed_pass(fast: Any, ks: KeySteps, recall_grid: str) -> tuple:
    """:func:`_compiled_pass` of the steps held as sorted keys (:class:`~precall._core.steps.KeySteps`):
    the compiled pass writes each chunk of steps again into buffers of ``fast.WINDOW``."""
    tp, fp, dtp, fp_prev = (np.empty((1, fast.WINDOW), dtype=np.int64) for _ in range(4))
    keys32, keys64 = (ks.key, _NO_KEYS64) if ks.key.dtype == np.uint32 else (_NO_KEYS32, ks.key)
    window = (keys32, keys64, ks.k, ks.checkpoints, ks.n_checkpoints, ks.below, np.empty(fast.WINDOW, dtype=np.uint64))
    lengths = np.array([ks.length], dtype=np.int64)
    sums = np.zeros((1, 6))
    points07, points101 = np.zeros((1, VOC07_GRID.size)), np.zeros((1, COCO_GRID.size))
    best, roc_int = np.full(1, -1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        fast.batch_numbers(tp, fp, dtp, fp_prev, np.array([ks.n_pos]), np.array([ks.n_neg]), lengths, True, True, True,
                           0, False, recall_grid == "reference", VOC07_GRID, COCO_GRID, np.ones(1), lengths.copy(),
                           np.empty(fast.WINDOW), np.zeros(1, dtype=np.int64), True, True, sums, points07, points101,
                           best, roc_int, True, window)
    return sums, points07, points101, best, roc_int


LEAF_STEPS = 1 << 16
"""Steps of a leaf of :func:`_split_pass`: its temporaries are of this size (:func:`_leaf_steps`)."""


def _leaf_steps(ss: SplitSteps | _ArraySteps) -> int:
    """The largest leaf of :func:`_split_pass`: :data:`LEAF_STEPS`, or half as many for step arrays of fewer
    than twice that (two leaves of 32,768 to 65,536 steps would leave the kernels' temporaries outside the
    cache: ``evaluate`` of 2e5 float64 scores at 50% positives took 25.7 ms so, 18.4 ms in four leaves; from
    2 * LEAF_STEPS steps the halves were as fast or slower, and slower for :class:`SplitSteps`)."""
    if isinstance(ss, _ArraySteps) and ss.length < 2 * LEAF_STEPS:
        return max(LEAF_STEPS // 2, 128)  # tree_leaves' least
    return LEAF_STEPS


def _split_pass(ss: SplitSteps | _ArraySteps, recall_grid: str) -> tuple:
    """:func:`_compiled_pass` by the numpy kernels, the steps of :class:`~precall._core.steps.SplitSteps`
    made a leaf of the pairwise tree at a time (:func:`~precall._core.steps.tree_leaves`, the last first: the
    envelopes' running maxima come from the lower scores), each leaf's sums those of the whole arrays' tree."""
    m, p, n = ss.length, ss.n_pos, ss.n_neg
    limit = _leaf_steps(ss)
    grids = ((VOC07_GRID, np.zeros(VOC07_GRID.size)), (COCO_GRID, np.zeros(COCO_GRID.size)))
    leaf: dict[int, np.ndarray] = {}
    carry = np.full(2, -np.inf)  # the best precision (and pycocotools') of the steps after the leaf
    best, best_f1, twice = -1, -np.inf, 0
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for a, size in reversed(tree_leaves(m, limit)):
            s = ss.steps(a, a + size)
            precision = precision_of(s)
            envelopes = (np.maximum(_envelope(precision), carry[0]),
                         np.maximum(_envelope(_coco_precision(s)), carry[1]))
            leaf[a] = np.array([step_sum(s, precision)[0], trapezoid_sum(s, precision)[0],
                                row_sum(interpolated_areas(s), s)[0],
                                voc2010_sum(s, carry[:1], sentinel=False, precision=precision)[0]])
            for (reference, points), env in zip(grids, envelopes):
                idx = _grid_indices(s, reference.size, recall_grid, reference)[0]
                hit = idx < size  # reached in this leaf: the earlier leaves, after it, overwrite
                points[hit] = env[0, idx[hit]]
            carry = np.array([envelopes[0][0, 0], envelopes[1][0, 0]]) if size else carry
            k, f1 = best_f1_points(s)[:2]
            if size and f1[0] >= best_f1:  # the first among equals: an earlier leaf wins a tie
                best, best_f1 = a + int(k[0]), f1[0]
            twice += int(twice_fp_area(s)[0])  # integers: the same sum in any split
        sums = np.zeros((1, 6))
        sums[0, :4] = tree_total(m, limit, leaf)
        # AUPRG: numpy sums the terms from the first step at or past recall gain 0 on, a tree of its own
        t0, k0 = np.array([[p * (p / (p + n))]]), np.array([ss.below])
        prg: dict[int, np.ndarray] = {}
        for a, size in tree_leaves(m - ss.below, limit):
            s = ss.steps(ss.below + a, ss.below + a + size)
            terms = _prg_terms(s, slice(None), ss.below + a, k0, t0, np.ones((1, size), dtype=bool), np.array([[p]]),
                               np.array([[n]]))
            prg[a] = np.sum(terms)
        sums[0, 5] = tree_total(m - ss.below, limit, prg)
    return sums, grids[0][1][None, :], grids[1][1][None, :], np.array([best]), np.array([twice], dtype=np.int64)


def evaluation_from_keys(data: BinaryInput, *, ties: str, recall_grid: str, policy: Any, overwrite: bool = False
                         ) -> Evaluation | None:
    """:func:`evaluation_from_steps` of ``data`` with its steps never held as arrays (``precall
    evaluate``'s memory at many positives): the compiled pass over its sorted keys
    (:func:`~precall._core.steps.key_steps`), or without the compiled kernel the numpy kernels over its
    sorted positives and negatives a leaf of steps at a time (:func:`_split_pass`); None where they are
    to be (weights, stable ties, few positives).  The same bits."""
    fast = backend.compiled(data.scores.shape[0])
    if fast is None:
        ss = split_steps(data, ties, overwrite)  # type: ignore[arg-type]
        if ss is None:
            return None
        backend.ran("numpy")
        passed = _split_pass(ss, recall_grid)
        best = int(passed[3][0])
        step = ss.steps(best, best + 1)
    else:
        ks = key_steps(data, ties, fast, overwrite)  # type: ignore[arg-type]
        if ks is None:
            return None
        try:
            passed = _windowed_pass(fast, ks, recall_grid)
            step = ks.step(int(passed[3][0]), fast)  # the best-F1 step, its threshold read from its key
        finally:
            if np.may_share_memory(ks.key, data.scores):  # the keys were written over the scores
                untag_scores(ks.key, ks.k, fast)
        backend.ran("numba")
    auc, prg = _pass_ranked(passed, step)
    numbers = BatchNumbers(_pass_averages(passed, step.n_pos, recall_grid),
                           best_f1_points(step, np.zeros(1, dtype=np.int64)), auc, prg)
    return evaluation_from_steps(step, step, ties=ties, n_samples=data.n_samples, recall_grid=recall_grid,
                                 policy=policy, numbers=numbers, all_ranked=True)  # rows: every positive ranked


def evaluation_from_steps(
    steps: Steps, grouped: Steps, *, ties: str, n_samples: int | None, recall_grid: str, policy: Any,
    numbers: BatchNumbers | None = None, all_ranked: bool = False,
) -> Evaluation:
    """The :class:`Evaluation` of one problem's steps; ``grouped`` are its steps with
    grouped ties, from which ROC-AUC and AUPRG are computed whatever ``ties`` is (``numbers``:
    their :func:`batch_numbers`, computed already; ``all_ranked``: every positive is known to be
    ranked, as in rows of data, so ``steps`` may be one step alone; else :func:`unranked_positives`
    reads it from the last step)."""
    n_pos, n_neg = float(steps.n_pos[0]), float(steps.n_neg[0])
    if numbers is None:
        numbers = batch_numbers(steps, grouped, recall_grid)
    aps = numbers.average_precision
    if n_pos == 0:
        value = undefined("average precision", NO_POSITIVES, 0.0, policy, stacklevel=5)
        values = {m: value for m in AP_METHODS}
    else:
        values = {m: float(aps[m][0]) for m in AP_METHODS}  # type: ignore[index]
    if n_pos == 0 or n_neg == 0:
        auc = undefined("ROC AUC", ONE_CLASS_ROC, float("nan"), policy, stacklevel=5)
    else:
        auc = float(numbers.roc_auc[0])  # type: ignore[index]
    unit = unit_positives(steps)
    missing = 0.0 if all_ranked or n_pos == 0 else unranked_positives(steps)
    if missing and unit and float(n_pos).is_integer() and policy != "nan":  # else NaN for another reason
        # the minimum has no value a policy could give (as without positives): NaN, the policy only says
        # whether to warn or to stop
        undefined("min AP", UNRANKED_POSITIVES.format(missing=missing, n_pos=n_pos), float("nan"),
                  "raise" if policy == "raise" else "warn", stacklevel=5)
    return make_evaluation(
        values, auc, n_pos=n_pos, n_neg=n_neg, n_samples=n_samples, best_f1=best_f1(steps, numbers.best_f1),
        ties=ties,
        recall_grid=recall_grid, auprg=float(numbers.auprg[0]),  # type: ignore[index]
        unit_positives=unit and steps.tp.shape[1] > 0, all_ranked=not missing,
    )
