"""mAP with uncertainty: bootstrap over images, from the matched detections.

Images are the unit: a replicate draws ``n_images`` images with replacement.
Matching is per (image, class), so a replicate needs no re-matching: each drawn
copy of an image brings its detections (with their TP / FP / ignored flags at
every IoU threshold) and its ground-truth counts.  The replicate is exactly
pycocotools' evaluation of the resampled set whose images are the draws in
increasing original id (copies of an image adjacent, as new ids): detections
ranked by decreasing score, ties by image then rank.  Only the ``all`` area
range and ``max_dets[-1]`` are resampled (mAP, AP50, AP75, per-class AP).

mAP over images is biased upward at finite test-set sizes (the precision envelope
is a running maximum, and rare classes are scored on few ground truths), and a
resample adds the same bias again: the replicates sit above the estimate, and a
percentile interval sits above the population value.  The bias is estimated as
``mean(replicates) - estimate`` and reported; the default interval is the
*basic* (reflected) bootstrap interval ``[2 est - q_hi, 2 est - q_lo]``, which
moves away from the bias.  The designs were compared by simulation
(``benchmarks/sim_detection_coverage.py``; coverage table in
``docs/detection.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .._core import normal
from .._core.conventions import grid_precisions
from .._core.steps import steps_from_counts
from .._core.text import percent
from .._core.validate import check_choice, check_number
from ..stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from ..stats.results import _check_resamples, recorded_seed, seed_text
from .coco import CocoEvaluation, _mean_valid
from .voc import VocEvaluation

__all__ = ["INTERVAL_METHODS", "CocoBootstrap", "CocoComparison", "VocBootstrap", "bootstrap_coco", "bootstrap_voc",
           "compare_coco", "interval_from_replicates"]

IntervalMethod = Literal["basic", "percentile", "bias-corrected", "bc"]
#: the interval designs of :func:`bootstrap_coco` (the first is the default, chosen by simulation)
INTERVAL_METHODS: tuple[str, ...] = ("basic", "percentile", "bias-corrected", "bc")


def interval_from_replicates(estimate: float, replicates: Any, level: float, method: str) -> tuple[float, float]:
    """A bootstrap interval of a statistic in [0, 1] from its replicates (-1 or NaN: undefined, left out).

    ``"percentile"``: the quantiles ``q_lo, q_hi`` of the replicates.  ``"basic"``: reflected about the
    estimate, ``[2 est - q_hi, 2 est - q_lo]`` (corrects a bias of the estimator that resampling repeats).
    ``"bias-corrected"``: the percentile interval shifted by ``-2 bias``, bias = mean(replicates) - estimate
    (the same centre as ``"basic"``, the replicates' own skew).  ``"bc"``: Efron's bias-corrected
    percentile (BCa without acceleration): quantiles at ``Phi(2 z0 +- z)``, ``z0 = Phi^-1(share of
    replicates below the estimate, ties half)``; it collapses to the end of the replicates when they all
    lie on one side.  Bounds are clipped to [0, 1]; NaN when no replicate is defined or the estimate is not.

    Examples
    --------
    >>> interval_from_replicates(0.5, [0.5, 0.75, 1.0], 0.5, "basic")
    (0.125, 0.375)
    >>> interval_from_replicates(0.5, [0.5, 0.75, 1.0], 0.5, "percentile")
    (0.625, 0.875)
    """
    method = check_choice(method, "method", INTERVAL_METHODS)
    v = np.asarray(replicates, dtype=np.float64)
    v = v[(v > -1) & ~np.isnan(v)]
    if v.size == 0 or not estimate > -1:
        return float("nan"), float("nan")
    alpha = (1 - level) / 2
    if method == "bc":
        share = (np.count_nonzero(v < estimate) + np.count_nonzero(v <= estimate)) / (2 * v.size)
        share = min(max(share, 0.5 / v.size), 1 - 0.5 / v.size)  # all on one side: the end of the replicates
        z0 = normal.ppf(share)
        qs = [normal.cdf(2 * z0 + normal.ppf(alpha)), normal.cdf(2 * z0 + normal.isf(alpha))]
        lo, hi = np.quantile(v, qs)
    else:
        q_lo, q_hi = np.quantile(v, [alpha, 1 - alpha])
        if method == "percentile":
            lo, hi = q_lo, q_hi
        elif method == "basic":
            lo, hi = 2 * estimate - q_hi, 2 * estimate - q_lo
        else:  # bias-corrected
            shift = 2 * (v.mean() - estimate)
            lo, hi = q_lo - shift, q_hi - shift
    return float(min(max(lo, 0.0), 1.0)), float(min(max(hi, 0.0), 1.0))


def _bias(estimate: float, replicates: np.ndarray) -> float:
    v = replicates[(replicates > -1) & ~np.isnan(replicates)]
    return float(v.mean() - estimate) if v.size and estimate > -1 else float("nan")


@dataclass(frozen=True)
class CocoBootstrap:
    """Bootstrap intervals of a :class:`~precall.detection.CocoEvaluation`.

    Attributes
    ----------
    intervals : dict
        ``{"mAP": (low, high), "AP50": ..., "AP75": ...}``, intervals of ``method``
        (NaN where a statistic is undefined in every replicate).
    per_class : dict
        Class id to the (low, high) interval of its AP.
    replicates : dict of str to ndarray
        The replicate values of mAP, AP50, AP75 (-1: undefined in that replicate).
    confidence_level, n_resamples
    method : str
        The interval design (:data:`INTERVAL_METHODS`).
    estimate : dict
        mAP, AP50, AP75 on the evaluated images (:attr:`CocoEvaluation.stats`, the same bits).
    bias : dict
        The bootstrap estimate of each statistic's bias, ``mean(replicates) - estimate``: how much
        higher the statistic of ``n_images`` images tends to be than the population's (NaN: undefined).
        ``estimate - bias`` is the bias-corrected estimate.
    per_class_bias : dict
        Class id to the bias of its AP.
    per_class_replicates : ndarray of shape (n_resamples, K)
        Per-class AP of each replicate (-1: undefined), classes in :attr:`CocoEvaluation.per_class` order.
    per_class_estimate : dict
        Class id to its AP on the evaluated images (-1: no ground truth).
    seed : int, tuple of int or None
        The seed of the draws (``random_state`` when it was an integer or a sequence of them; None for a ``Generator``, a
        ``SeedSequence`` or None: not repeatable from this result).
    """

    intervals: dict[str, tuple[float, float]]
    per_class: dict[Any, tuple[float, float]]
    replicates: dict[str, np.ndarray]
    confidence_level: float
    n_resamples: int
    method: str = "percentile"
    estimate: dict[str, float] | None = None
    bias: dict[str, float] | None = None
    per_class_bias: dict[Any, float] | None = None
    per_class_replicates: np.ndarray | None = None
    per_class_estimate: dict[Any, float] | None = None
    seed: int | tuple[int, ...] | None = None

    def to_text(self) -> str:
        """One line per statistic (its interval and bias), then the resamples and the seed."""
        pct = percent(self.confidence_level)
        lines = []
        for name, (lo, hi) in self.intervals.items():
            line = f" {name:<5} {pct} {self.method} bootstrap interval over images: [{lo:.3f}, {hi:.3f}]"
            if self.bias is not None and not np.isnan(self.bias[name]):
                line += f"; bias {self.bias[name]:+.4f}"
            lines.append(line)
        lines.append(f" ({resampling_text(self.n_resamples, self.seed)})")
        return "\n".join(lines)


def resampling_text(n_resamples: int, seed: int | tuple[int, ...] | None) -> str:
    """``"2000 resamples, seed 0"``: how an interval was drawn, as every text of one says it."""
    return f"{n_resamples} resamples, {seed_text(seed)}"


def _check_resampling(n_resamples: Any, confidence_level: Any, per_replicate: int) -> tuple[int, float]:
    """``n_resamples`` (a whole number >= 2 whose replicates, ``per_replicate`` float64 each, fit in memory:
    :mod:`precall.stats`' rule, every interval's) and ``confidence_level`` in (0, 1)."""
    n = _check_resamples(n_resamples, per_replicate)
    level = check_number(confidence_level, "confidence_level", low=0, high=1, low_open=True, high_open=True)
    return n, level


_CELLS_PER_CALL = 2_000_000  # rows x ranks of one call of the core's row kernels


def _replicate_values(ev: CocoEvaluation, counts: np.ndarray, order: np.ndarray, bounds: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """(T, R, K) interpolated precision (as :attr:`CocoEvaluation.precision` at area ``all`` and
    ``max_dets[-1]``; -1 for a class without ground truth) and (K,) ground-truth counts of the
    resampled set in which image ``i`` appears ``counts[i]`` times."""
    m = ev._matched
    T, K, R = ev.iou_thresholds.size, len(ev.per_class), ev.recall_thresholds.size
    a = ev.area_index("all")
    n_gt = np.bincount(m.group_cls, weights=m.group_n_gt[a] * counts[m.group_image], minlength=K).astype(np.int64)
    out = -np.ones((T, R, K))
    tables = []  # per class with ground truth: (k, pos (T, n), neg (T, n))
    for k in np.flatnonzero(n_gt > 0).tolist():
        rows = order[bounds[k]:bounds[k + 1]]
        if rows.size:
            # blocks of equal (score, image): each repeated counts[image] times, copy after copy
            score, image = m.score[rows], m.image[rows]
            new = np.r_[True, (score[1:] != score[:-1]) | (image[1:] != image[:-1])]
            start = np.flatnonzero(new)
            length = np.diff(np.r_[start, rows.size])
            units = np.repeat(np.arange(start.size), counts[image[start]])
            unit_len = length[units]
            offset = np.arange(int(unit_len.sum())) - np.repeat(np.cumsum(unit_len) - unit_len, unit_len)
            rows = rows[np.repeat(start[units], unit_len) + offset]
        tp, ign = m.tp[a][:, rows], m.ignored[a][:, rows]
        pos, neg = (tp & ~ign).astype(np.float64), (~tp & ~ign).astype(np.float64)
        if rows.size and ev.ties == "group":  # equal scores: one run
            sc = m.score[rows]
            starts = np.flatnonzero(np.r_[True, sc[1:] != sc[:-1]])
            pos, neg = np.add.reduceat(pos, starts, axis=1), np.add.reduceat(neg, starts, axis=1)
        tables.append((k, pos, neg))
    # all classes in a few calls of the core's row kernels: rows padded with empty runs (no effect)
    tables.sort(key=lambda t: t[1].shape[1])
    lo = 0
    while lo < len(tables):
        hi = lo + 1
        while hi < len(tables) and (hi + 1 - lo) * T * max(tables[hi][1].shape[1], 1) <= _CELLS_PER_CALL:
            hi += 1
        width = max(max(t[1].shape[1] for t in tables[lo:hi]), 1)
        pos = np.zeros(((hi - lo) * T, width))
        neg = np.zeros_like(pos)
        for j, (_, p, q) in enumerate(tables[lo:hi]):
            pos[j * T:(j + 1) * T, :p.shape[1]] = p
            neg[j * T:(j + 1) * T, :q.shape[1]] = q
        ks = [t[0] for t in tables[lo:hi]]
        steps = steps_from_counts(pos, neg, np.repeat(n_gt[ks].astype(np.float64), T))
        precision = grid_precisions(steps, "coco", thresholds=ev.recall_thresholds)
        out[:, :, ks] = precision.reshape(len(ks), T, R).transpose(1, 2, 0)
        lo = hi
    return out, n_gt


def _class_order(ev: CocoEvaluation) -> tuple[np.ndarray, np.ndarray]:
    """Rows at ``max_dets[-1]`` (all of them), by class, decreasing score, image, rank; class bounds."""
    m = ev._matched
    order = np.lexsort((m.rank, m.image, -m.score, m.cls))
    return order, np.searchsorted(m.cls[order], np.arange(len(ev.per_class) + 1))


def _summary(precision: np.ndarray, thresholds: np.ndarray) -> tuple[float, float, float]:
    """mAP, AP50, AP75 of a (T, R, K) precision block, summed as pycocotools' ``summarize`` sums them
    (and :func:`~precall.detection.evaluate_coco`: the same bits as :attr:`CocoEvaluation.stats`)."""
    def at(iou: float) -> float:
        t = np.flatnonzero(np.isclose(thresholds, iou))
        return _mean_valid(precision[t]) if t.size else -1.0

    return _mean_valid(precision), at(0.5), at(0.75)


def _class_aps(precision: np.ndarray) -> np.ndarray:
    """(K,) AP of each class of a (T, R, K) precision block (-1 without ground truth): the mean of its
    (T, R) values in their order, as :attr:`CocoEvaluation.per_class` (a class with ground truth has
    no -1 value)."""
    T, R, K = precision.shape
    rows = np.ascontiguousarray(precision.transpose(2, 0, 1)).reshape(K, T * R)
    return np.where(rows[:, 0] > -1, np.add.reduce(rows, axis=1) / (T * R), -1.0)


def replicate(ev: CocoEvaluation, counts: Any) -> dict[str, Any]:
    """The statistics of one resampled set: ``counts[i]`` copies of the i-th image (in id order).

    Returns ``{"mAP", "AP50", "AP75", "per_class": {class id: AP}}``; -1 where undefined."""
    counts = np.asarray(counts, dtype=np.int64)
    if counts.shape != (ev.n_images,) or (counts < 0).any():
        raise ValueError(f"`counts` must be {ev.n_images} non-negative integers (one per image)")
    order, bounds = _class_order(ev)
    precision, _ = _replicate_values(ev, counts, order, bounds)
    mean, ap50, ap75 = _summary(precision, ev.iou_thresholds)
    per = dict(zip((row["id"] for row in ev.per_class), _class_aps(precision).tolist()))
    return {"mAP": mean, "AP50": ap50, "AP75": ap75, "per_class": per}


def bootstrap_coco(
    ev: CocoEvaluation,
    n_resamples: int = DEFAULT_RESAMPLES,
    *,
    confidence_level: float = 0.95,
    method: IntervalMethod = "basic",
    random_state: Any = DEFAULT_SEED,
    progress: Any = None,
) -> CocoBootstrap:
    """Bootstrap intervals over images for mAP, AP50, AP75 and per-class AP, with the estimator's bias.

    Parameters
    ----------
    ev : CocoEvaluation
        From :func:`~precall.detection.evaluate_coco` (any ``iou_type``).
    n_resamples : int, default=2000
        :data:`precall.stats.DEFAULT_RESAMPLES`, as every interval of precall.
    confidence_level : float, default=0.95
    method : {"basic", "percentile", "bias-corrected", "bc"}, default="basic"
        The interval design (:func:`interval_from_replicates`).  ``"basic"`` is the default: in
        simulations it covered the population mAP where the percentile interval did not (see
        ``docs/detection.md``, "Intervals").
    random_state : int, Generator or None, default=0
        :data:`precall.stats.DEFAULT_SEED`, as every interval of precall: runs repeat; None draws
        afresh.  An integer is reported as :attr:`CocoBootstrap.seed`.
    progress : callable, default=None
        Called with the fraction done.

    Returns
    -------
    CocoBootstrap

    Examples
    --------
    >>> from precall import detection
    >>> gt = {"images": [{"id": i} for i in range(1, 5)], "categories": [{"id": 1, "name": "a"}],
    ...       "annotations": [{"id": i, "image_id": i, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100}
    ...                       for i in range(1, 5)]}
    >>> res = [{"image_id": i, "category_id": 1, "bbox": [0, 0, 10, 10 if i < 3 else 4], "score": 0.9}
    ...        for i in range(1, 5)]
    >>> ev = detection.evaluate_coco(detection.load_coco(gt, res))
    >>> ci = ev.bootstrap(200, random_state=0)
    >>> lo, hi = ci.intervals["AP50"]
    >>> bool(0 <= lo <= hi <= 1), ci.method
    (True, 'basic')
    """
    if ev._matched is None or ev._matched.group_n_gt is None:
        raise ValueError("this CocoEvaluation has no matching to resample; compute it with evaluate_coco")
    n_resamples, confidence_level = _check_resampling(n_resamples, confidence_level, len(ev.per_class) + 3)
    method = check_choice(method, "method", INTERVAL_METHODS)
    ev.area_index("all")  # the intervals are of the area range "all"
    rng = np.random.default_rng(random_state)
    n, K = ev.n_images, len(ev.per_class)
    order, bounds = _class_order(ev)
    # the estimate on the evaluated images: the evaluation's own numbers (the identity replicate gives
    # the same bits, tested)
    estimate = tuple(float(v) for v in ev.stats[:3])
    class_estimate = np.array([row["AP"] for row in ev.per_class], dtype=np.float64)
    values = np.full((n_resamples, 3), -1.0)
    per_class = np.full((n_resamples, K), -1.0)
    for b in range(n_resamples):
        counts = rng.multinomial(n, np.full(n, 1.0 / n)) if n else np.zeros(0, np.int64)
        precision, _ = _replicate_values(ev, counts, order, bounds)
        values[b] = _summary(precision, ev.iou_thresholds)
        per_class[b] = _class_aps(precision)
        if progress is not None:
            progress((b + 1) / n_resamples)
    names = ("mAP", "AP50", "AP75")
    ids = [row["id"] for row in ev.per_class]
    return CocoBootstrap(
        intervals={name: interval_from_replicates(estimate[i], values[:, i], confidence_level, method)
                   for i, name in enumerate(names)},
        per_class={c: interval_from_replicates(class_estimate[k], per_class[:, k], confidence_level, method)
                   for k, c in enumerate(ids)},
        replicates={name: values[:, i].copy() for i, name in enumerate(names)},
        confidence_level=float(confidence_level), n_resamples=int(n_resamples), method=method,
        estimate=dict(zip(names, estimate)),
        bias={name: _bias(estimate[i], values[:, i]) for i, name in enumerate(names)},
        per_class_bias={c: _bias(class_estimate[k], per_class[:, k]) for k, c in enumerate(ids)},
        per_class_replicates=per_class,
        per_class_estimate={c: float(class_estimate[k]) for k, c in enumerate(ids)},
        seed=recorded_seed(random_state),
    )


@dataclass(frozen=True)
class CocoComparison:
    """Paired bootstrap of two result sets on the same images: intervals of ``b - a``.

    Attributes
    ----------
    difference : dict
        ``{"mAP": b - a, "AP50": ..., "AP75": ...}`` on the full set.
    intervals : dict
        Percentile intervals of the differences (the same image draws for both).
    p_b_better : dict
        The fraction of replicates where ``b`` is higher.
    confidence_level, n_resamples
    seed : int, tuple of int or None
        The seed of the draws (``random_state`` when it was an integer or a sequence of them; None for a ``Generator``, a
        ``SeedSequence`` or None).
    """

    difference: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    p_b_better: dict[str, float]
    confidence_level: float
    n_resamples: int
    seed: int | tuple[int, ...] | None = None

    def to_text(self) -> str:
        """One line per statistic (B - A, its interval, P(B > A)), then the design, resamples and seed."""
        pct = percent(self.confidence_level)
        lines = [f" {name:<5} B - A {self.difference[name]:+.3f}, {pct} interval [{lo:.3f}, {hi:.3f}], "
                 f"P(B > A) {self.p_b_better[name]:.3f}" for name, (lo, hi) in self.intervals.items()]
        lines.append(f" (paired percentile bootstrap over images, the same draws for both; "
                     f"{resampling_text(self.n_resamples, self.seed)})")
        return "\n".join(lines)


def compare_coco(
    a: CocoEvaluation,
    b: CocoEvaluation,
    n_resamples: int = DEFAULT_RESAMPLES,
    *,
    confidence_level: float = 0.95,
    random_state: Any = DEFAULT_SEED,
) -> CocoComparison:
    """Paired percentile bootstrap over images of two evaluations of the same ground truth
    (two models' results): each replicate draws one set of images for both.

    ``n_resamples`` (default :data:`precall.stats.DEFAULT_RESAMPLES`, 2000) and ``random_state``
    (default :data:`precall.stats.DEFAULT_SEED`, 0; None draws afresh) as every interval of precall.
    Raises ``ValueError`` when the two evaluations do not cover the same images and classes.
    """
    for ev in (a, b):
        if ev._matched is None or ev._matched.group_n_gt is None:
            raise ValueError("both evaluations must come from evaluate_coco")
    if a.n_images != b.n_images or (a.image_ids is not None and b.image_ids is not None
                                    and not np.array_equal(a.image_ids, b.image_ids)):
        raise ValueError("the two evaluations are not on the same images; a paired comparison needs the same "
                         "ground truth")
    settings = {"classes": lambda ev: [r["id"] for r in ev.per_class], "iou_type": lambda ev: ev.iou_type,
                "iou_thresholds": lambda ev: ev.iou_thresholds.tolist(),
                "recall_thresholds": lambda ev: ev.recall_thresholds.tolist(), "max_dets": lambda ev: ev.max_dets,
                "area_ranges": lambda ev: ev.area_ranges, "ties": lambda ev: ev.ties}
    for name, get in settings.items():
        if get(a) != get(b):
            raise ValueError(f"the two evaluations differ in `{name}` ({get(a)!r:.60} and {get(b)!r:.60}); a paired "
                             "comparison needs the same settings")
    n_resamples, confidence_level = _check_resampling(n_resamples, confidence_level, 6)
    a.area_index("all")
    rng = np.random.default_rng(random_state)
    n = a.n_images
    prepared = [(ev, *_class_order(ev)) for ev in (a, b)]
    diffs = np.full((n_resamples, 3), np.nan)
    for r in range(n_resamples):
        counts = rng.multinomial(n, np.full(n, 1.0 / n)) if n else np.zeros(0, np.int64)
        vals = [np.array(_summary(_replicate_values(ev, counts, o, bd)[0], ev.iou_thresholds)) for ev, o, bd in prepared]
        ok = (vals[0] > -1) & (vals[1] > -1)
        diffs[r, ok] = vals[1][ok] - vals[0][ok]
    alpha = 1 - confidence_level
    names = ("mAP", "AP50", "AP75")
    intervals, better = {}, {}
    for i, name in enumerate(names):
        v = diffs[:, i][~np.isnan(diffs[:, i])]
        intervals[name] = tuple(float(x) for x in np.quantile(v, [alpha / 2, 1 - alpha / 2])) if v.size else \
            (float("nan"), float("nan"))
        better[name] = float((v > 0).mean()) if v.size else float("nan")
    full = {name: float(b.stats[i] - a.stats[i]) if a.stats[i] > -1 and b.stats[i] > -1 else float("nan")
            for i, name in zip((0, 1, 2), names)}
    return CocoComparison(full, intervals, better, float(confidence_level), int(n_resamples), recorded_seed(random_state))


@dataclass(frozen=True)
class VocBootstrap:
    """Percentile bootstrap intervals over images of a :class:`~precall.detection.VocEvaluation`.

    Attributes
    ----------
    intervals : dict
        ``{"mAP": (low, high)}`` (NaN where undefined in every replicate).
    per_class : dict
        Class to the (low, high) interval of its AP.
    replicates : ndarray of shape (n_resamples,)
        mAP of each replicate (NaN: no ground truth drawn).
    confidence_level, n_resamples
    seed : int, tuple of int or None
        The seed of the draws (``random_state`` when it was an integer or a sequence of them; None for a ``Generator``, a
        ``SeedSequence`` or None).
    method : str
        ``"percentile"``.

    ``result["mAP"]``, ``result["per_class"]`` and ``result["replicates"]`` read as the dict this
    result was before.
    """

    intervals: dict[str, tuple[float, float]]
    per_class: dict[Any, tuple[float, float]]
    replicates: np.ndarray
    confidence_level: float
    n_resamples: int
    seed: int | tuple[int, ...] | None
    method: str = "percentile"

    def __getitem__(self, key: str) -> Any:
        if key in self.intervals:
            return self.intervals[key]
        if key in ("per_class", "replicates"):
            return getattr(self, key)
        raise KeyError(key)

    def to_text(self) -> str:
        """The mAP interval, then the resamples and the seed."""
        lo, hi = self.intervals["mAP"]
        return (f" mAP   {100 * self.confidence_level:g}% {self.method} bootstrap interval over images: "
                f"[{lo:.3f}, {hi:.3f}]\n ({resampling_text(self.n_resamples, self.seed)})")


def bootstrap_voc(ev: VocEvaluation, n_resamples: int = DEFAULT_RESAMPLES, *, confidence_level: float = 0.95,
                  random_state: Any = DEFAULT_SEED, progress: Any = None) -> VocBootstrap:
    """Percentile intervals of mAP and of each class's AP, resampling images with replacement
    (images are the unit, no strata), from the matched detections without re-matching
    (:meth:`VocEvaluation.replicate`); :meth:`VocEvaluation.bootstrap`.

    ``n_resamples`` (default :data:`precall.stats.DEFAULT_RESAMPLES`, 2000) and ``random_state``
    (default :data:`precall.stats.DEFAULT_SEED`, 0; None draws afresh) as every interval of precall;
    ``progress`` is called with the fraction done (2000 resamples of 5,000 images take about 15 s).

    Returns
    -------
    VocBootstrap
        NaN where a value is undefined in every replicate.
    """
    n_resamples, confidence_level = _check_resampling(n_resamples, confidence_level, len(ev._ranked) + 1)
    rng = np.random.default_rng(random_state)
    n = ev._n_images
    maps = np.full(int(n_resamples), np.nan)
    classes = {c: np.full(int(n_resamples), np.nan) for c in ev._ranked}
    for r in range(int(n_resamples)):
        counts = np.bincount(rng.integers(0, n, n), minlength=n)
        maps[r], per = ev.replicate(counts)
        for c, v in per.items():
            classes[c][r] = v
        if progress is not None:
            progress((r + 1) / n_resamples)
    alpha = (1 - confidence_level) / 2

    def interval(values: np.ndarray) -> tuple[float, float]:
        finite = values[~np.isnan(values)]
        if finite.size == 0:
            return float("nan"), float("nan")
        low, high = np.quantile(finite, [alpha, 1 - alpha])
        return float(low), float(high)

    return VocBootstrap({"mAP": interval(maps)}, {c: interval(v) for c, v in classes.items()}, maps,
                        float(confidence_level), int(n_resamples), recorded_seed(random_state))
