"""One evaluation of one problem: every convention, ROC-AUC, AUPRG and the best F1 (numpy only).

:func:`make_evaluation` is the one place an :class:`Evaluation` is assembled
(the prevalence, the minimum and the normalised AP follow from the counts), so
the in-memory route (:func:`evaluation_from_steps`), the streaming accumulator
and the score ranges of :mod:`precall.dask` give the same object.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .conventions import CONVENTIONS, ap, min_average_precision, roc_auc, unit_interval
from .steps import Steps, segment_sums
from .undefined import NO_POSITIVES, ONE_CLASS_ROC, undefined
from .validate import AP_METHODS

__all__ = ["Evaluation", "F1Point", "auprg", "auprg_values", "best_f1", "best_f1_points", "evaluation_from_steps",
           "gains", "make_evaluation", "normalized_average_precision", "unit_positives"]


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
        NaN without positives or with fractional positive weights.
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
                f"  {m.ljust(width)}  {self.average_precision[m]:8.6f}  {self.min_average_precision[m]:8.6f}  "
                f"{self.normalized_average_precision[m]:10.6f}  {CONVENTIONS[m].summary}"
            )
        lines.append(f"ROC-AUC     {self.roc_auc:.6f}")
        lines.append(f"AUPRG       {self.auprg:.6f}  area under the precision-recall-gain curve")
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


def best_f1_points(s: Steps) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per problem: the step with the highest F1 (the first among equals), its F1, precision
    and recall; index -1 and NaN without a step or without positives."""
    m, r = s.tp.shape
    found = (s.n_pos > 0) & (_lengths(s) > 0)
    if r == 0:
        nan = np.full(m, np.nan)
        return np.full(m, -1), nan, nan, nan.copy()
    tp = s.tp.astype(np.float64)
    fp = s.fp
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = 2.0 * tp / (tp + fp + s.n_pos[:, None])
        k = np.argmax(np.where(np.isnan(f1), -np.inf, f1), axis=1)  # padding repeats the last step: never first
        rows = np.arange(m)
        tk, fk = tp[rows, k], fp[rows, k]
        precision, recall = tk / (tk + fk), tk / s.n_pos
    nan = np.nan
    return (np.where(found, k, -1), np.where(found, f1[rows, k], nan), np.where(found, precision, nan),
            np.where(found, recall, nan))


def best_f1(s: Steps) -> F1Point | None:
    """The best-F1 point of one problem's steps (None without a step)."""
    k, f1, precision, recall = best_f1_points(s)
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
    defined = (p > 0) & (n > 0) & (lengths > 0)
    if r == 0 or not defined.any():
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
    return np.where(defined, area, np.nan)


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


def unit_positives(s: Steps) -> bool:
    """Whether the positives' weights can be counts (whole step sizes)."""
    d = s.dtp
    return d.dtype.kind in "iu" or bool(np.all(d == np.round(d)))


def normalized_average_precision(average_precision: float, min_ap: float) -> float:
    """``(AP - AP_min) / (1 - AP_min)``: 0 at the worst ranking, 1 at a perfect one.

    NaN when ``AP_min`` is 1 (no negatives: every ranking is perfect) or either
    value is NaN.

    Parameters
    ----------
    average_precision : float
        An AP by some convention.
    min_ap : float
        The minimum AP of the same convention and class counts (:func:`precall.min_average_precision`).

    Returns
    -------
    float

    See Also
    --------
    min_average_precision : the minimum it is normalised by.

    Examples
    --------
    >>> import precall
    >>> round(precall.normalized_average_precision(0.55, 0.1), 6)
    0.5
    """
    a, low = float(average_precision), float(min_ap)
    if math.isnan(a) or math.isnan(low) or low >= 1.0:
        return float("nan")
    return (a - low) / (1.0 - low)


def make_evaluation(
    average_precision: dict[str, float], roc_auc: float, *, n_pos: float, n_neg: float, n_samples: int | None,
    best_f1: F1Point | None, ties: str, recall_grid: str, auprg: float, unit_positives: bool,
) -> Evaluation:
    """The one constructor of :class:`Evaluation`: the prevalence, the minimum AP of these
    counts (NaN without positives or with fractional positive weights) and the
    normalised AP follow from the counts."""
    total = n_pos + n_neg
    average_precision = {m: float(unit_interval(v)) for m, v in average_precision.items()}
    roc_auc = float(unit_interval(roc_auc))
    auprg = auprg + 0.0  # no negative zero
    if n_pos > 0 and float(n_pos).is_integer() and unit_positives:
        low = {m: min_average_precision(n_pos, n_neg, method=m, ties=ties, recall_grid=recall_grid)
               for m in AP_METHODS}
    else:
        low = {m: float("nan") for m in AP_METHODS}
    return Evaluation(
        average_precision=average_precision, roc_auc=roc_auc,
        prevalence=n_pos / total if total > 0 else float("nan"), n_pos=n_pos, n_neg=n_neg, n_samples=n_samples,
        best_f1=best_f1, ties=ties, recall_grid=recall_grid, min_average_precision=low,
        normalized_average_precision={m: normalized_average_precision(average_precision[m], low[m])
                                      for m in AP_METHODS},
        auprg=auprg,
    )


def evaluation_from_steps(
    steps: Steps, grouped: Steps, *, ties: str, n_samples: int | None, recall_grid: str, policy: Any,
) -> Evaluation:
    """The :class:`Evaluation` of one problem's steps; ``grouped`` are its steps with
    grouped ties, from which ROC-AUC and AUPRG are computed whatever ``ties`` is."""
    n_pos, n_neg = float(steps.n_pos[0]), float(steps.n_neg[0])
    if n_pos == 0:
        value = undefined("average precision", NO_POSITIVES, 0.0, policy, stacklevel=5)
        values = {m: value for m in AP_METHODS}
    else:
        values = {m: float(ap(steps, m, recall_grid)[0]) for m in AP_METHODS}
    if n_pos == 0 or n_neg == 0:
        auc = undefined("ROC AUC", ONE_CLASS_ROC, float("nan"), policy, stacklevel=5)
    else:
        auc = float(roc_auc(grouped)[0])
    return make_evaluation(
        values, auc, n_pos=n_pos, n_neg=n_neg, n_samples=n_samples, best_f1=best_f1(steps), ties=ties,
        recall_grid=recall_grid, auprg=auprg(grouped),
        unit_positives=unit_positives(steps) and steps.tp.shape[1] > 0,
    )
