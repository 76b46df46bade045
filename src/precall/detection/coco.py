"""COCO evaluation (pycocotools' ``COCOeval``) on precall's ranking core.

Detection evaluation is *matching* (which detection hits which ground-truth
box) followed by exactly the ranking precall already has: the detections of a
class, ranked by score, are true or false positives, ``n_pos`` is the number of
ground truths (more than the final TP when some are never found), and an AP
convention turns that count table into a number.  Here the matching produces
:class:`precall.ThresholdTable` s; the areas come from
:meth:`precall.ThresholdTable.ap_terms` (the ``coco`` convention), so nothing
re-implements a curve or an area.

COCO protocol (:func:`evaluate_coco`), as pycocotools' ``COCOeval`` (bbox):

* images and classes: every image and class of the ground truth (sorted ids);
  detections of other classes are not evaluated; classes without ground truth
  in an area range are skipped (-1 in the arrays, left out of the means);
* per image and class: detections by decreasing score (stable), at most
  ``max_dets[-1]``; IoU of boxes ``[x, y, w, h]``, and for crowd ground truths
  intersection over the *detection's* area;
* ground truths are *ignored* when crowd, flagged ``ignore``, or outside the area
  range (by their ``area`` field); for each IoU threshold, each detection in
  score order takes the available ground truth of highest IoU >= threshold
  (later ones win ties), non-ignored ones first; a crowd ground truth can be
  taken any number of times, others once; a detection matched to an ignored
  ground truth, or unmatched with its area (``w * h``) outside the range, is
  ignored (neither TP nor FP);
* per class, area range and ``max_dets`` value: the first ``max_dets``
  detections of each image, merged in decreasing score order (stable, images in
  id order), form the count table with ``n_pos`` = non-ignored ground truths;
  precision at the 101 recall thresholds is the ``coco`` convention's envelope;
  recall is the final recall;
* the 12 summary numbers are means over the valid entries, in pycocotools'
  order.

Deliberate differences from pycocotools (documented, cocoapi issues):

* the first summary number (AP at IoU .50:.95, all areas) uses ``max_dets[-1]``,
  not a hard-coded 100 (cocoapi #558): equal for the default ``max_dets``;
* a ground truth's own ``ignore`` flag is honoured (pycocotools overwrites it
  with ``iscrowd``);
* ``ties="group"`` ranks equal scores as one step of the merged ranking, and
  within an image matches (and truncates to ``max_dets``) equal-score
  detections in the order of their boxes (x, then y, w, h), so results do not depend
  on the input order (cocoapi #650); ``ties="stable"`` (default) is
  pycocotools' order (input order among equal scores).  With ``"group"`` the
  ground truths of an image are also taken in the order of their content (box,
  area, crowd and ignore flags; then the segmentation), so that a detection with
  equal IoU to two ground truths takes the same one whatever the order of the
  ground-truth file (with ``"stable"``, pycocotools' rule: the later one);
* AP50 and AP75 (summary and per class) pick their IoU threshold with
  ``np.isclose`` (rtol 1e-5, atol 1e-8), where pycocotools tests ``==``: for
  thresholds such as ``np.arange(0.5, 1, 0.05)`` (whose 8th value is
  0.7500000000000001) pycocotools reports AP75 = -1, precall the AP at that
  threshold;
* empty inputs give pycocotools' numbers instead of its exceptions: results
  ``[]`` (pycocotools' ``loadRes`` raises ``IndexError``) give AP and AR 0 for every
  class with ground truth; a ground truth without annotations gives -1
  (undefined) everywhere;
* annotation ids are not used: every annotation is its own object.  pycocotools
  treats a ground truth of id 0 as never matched and keeps one annotation per
  repeated id; precall warns (:class:`~precall.detection.DetectionWarning`) when
  the ids are missing, 0 or repeated.  Image and category ids must be unique
  integers (``ValueError`` otherwise); boxes of negative width or height are
  refused, boxes of zero width or height counted in a warning (IoU 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core.conventions import COCO_GRID, grid_precisions
from .._core.steps import steps_from_counts
from .._core.undefined import UndefinedMetricWarning
from .._core.validate import check_number, check_numbers
from ..table import ThresholdTable
from ._match import _match
from .io import DetectionSet, DetectionWarning

__all__ = ["AREA_RANGES", "COCO_KEYPOINT_SIGMAS", "IOU_THRESHOLDS", "KEYPOINT_AREA_RANGES", "CocoEvaluation",
           "evaluate_coco"]

AREA_RANGES: dict[str, tuple[float, float]] = {
    "all": (0.0, 1e5**2),
    "small": (0.0, 32.0**2),
    "medium": (32.0**2, 96.0**2),
    "large": (96.0**2, 1e5**2),
}
KEYPOINT_AREA_RANGES: dict[str, tuple[float, float]] = {
    "all": (0.0, 1e5**2),
    "medium": (32.0**2, 96.0**2),
    "large": (96.0**2, 1e5**2),
}
#: pycocotools' per-keypoint OKS sigmas of the 17 COCO person keypoints
COCO_KEYPOINT_SIGMAS = np.array(
    [.26, .25, .25, .35, .35, .79, .79, .72, .72, .62, .62, 1.07, 1.07, .87, .87, .89, .89]) / 10.0
CROWDPOSE_WARNING = ("the ground truth is a CrowdPose set (its images have 'crowdIndex'): these are COCO's keypoint "
                     "numbers (OKS scale = the annotation's area, COCO's area ranges), not CrowdPose's (OKS scale "
                     "0.53 w h of the box, AP easy / medium / hard): use evaluate_crowdpose (precall detection "
                     "crowdpose) for those")
IOU_THRESHOLDS = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)


@dataclass(frozen=True)
class CocoEvaluation:
    """COCO evaluation results.

    Attributes
    ----------
    stats : ndarray of shape (12,)
        pycocotools' summary, in its order: AP@[.5:.95], AP@.5, AP@.75, AP small,
        medium, large; AR@max_dets[0], AR@max_dets[1], AR@max_dets[2]; AR small,
        medium, large (-1 where undefined).
    precision : ndarray of shape (T, R, K, A, M)
        Interpolated precision at each IoU threshold, recall threshold, class,
        area range and max_dets (-1 for classes without ground truth).
    recall : ndarray of shape (T, K, A, M)
    per_class : list of dict
        Per class: id, name, AP, AP50, AP75 (the area range named ``all``, the
        largest ``max_dets``), AP of every other area range (``AP_small``, ...),
        ``AR`` (``all``, the largest ``max_dets``), ``n_gt`` the number of
        non-ignored ground truths in ``all`` (when no range is named ``all``: of
        any area, i.e. neither crowd nor flagged ``ignore``) and ``n_det`` of
        detections (AP..AR -1 when no range is named ``all``).
    iou_thresholds, recall_thresholds, max_dets, area_ranges
        The parameters used.
    """

    stats: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    per_class: list[dict[str, Any]]
    iou_thresholds: np.ndarray
    recall_thresholds: np.ndarray
    max_dets: tuple[int, ...]
    area_ranges: dict[str, tuple[float, float]]
    _ranked: dict[Any, tuple[np.ndarray, ...]] = field(repr=False, default_factory=dict)
    iou_type: str = "bbox"
    ties: str = "stable"
    _matched: Any = field(repr=False, default=None, compare=False)  # the matching, for bootstrap intervals
    n_images: int = 0
    image_ids: Any = field(repr=False, default=None, compare=False)

    def area_index(self, area: str = "all") -> int:
        """The position of the area range named ``area`` in :attr:`area_ranges` (the axis ``A`` of
        :attr:`precision` and :attr:`recall`): ranges are found by name, never by position."""
        if area not in self.area_ranges:
            raise ValueError(f"`area` must be one of the evaluated area ranges {list(self.area_ranges)}; got {area!r}"
                             + (" (pass an 'all' range in `area_ranges`)" if area == "all" else ""))
        return list(self.area_ranges).index(area)

    @property
    def stat_names(self) -> tuple[str, ...]:
        """The names of :attr:`stats` (12 for bbox and segm, 10 for keypoints)."""
        return self.KEYPOINT_STAT_NAMES if self.iou_type == "keypoints" else self.STAT_NAMES

    def mean_average_precision(self, method: str = "voc2010", *, iou_threshold: float = 0.5, area: str = "all") -> float:
        """mAP at one IoU threshold by any AP convention (:data:`precall.AP_METHODS`): the mean
        over classes with ground truth of :meth:`threshold_table` ``.average_precision(method)``
        (0 for a class whose detections are all ignored or absent); NaN without ground truth.

        ``"coco"`` is pycocotools' number, summed in its order: the mean of the interpolated
        precisions of every recall threshold and class (``COCOeval.summarize``), so that
        ``mean_average_precision("coco", iou_threshold=0.5)`` is :attr:`stats` ``[1]`` to the bit
        (the evaluation's :attr:`precision` when its recall thresholds are COCO's 101; else the
        classes' tables on COCO's 101)."""
        a = self.area_index(area)
        t = self._threshold_index(iou_threshold)
        if method == "coco" and np.array_equal(self.recall_thresholds, COCO_GRID):
            value = _mean_valid(self.precision[t, :, :, a, len(self.max_dets) - 1])
            return value if value > -1 else float("nan")
        values = []
        for cid, (_, _, _, n_gt) in self._ranked.items():
            if n_gt[a] == 0:
                continue
            try:
                table = self.threshold_table(cid, iou_threshold=iou_threshold, area=area)
            except ValueError as exc:
                if "no counted detection" not in str(exc):
                    raise
                values.append(np.zeros(COCO_GRID.size) if method == "coco" else 0.0)
                continue
            if method == "coco":  # the grid precisions, for pycocotools' order of the sum
                values.append(grid_precisions(table._steps(), "coco")[0])
            else:
                values.append(table.average_precision(method=method))
        if not values:
            return float("nan")
        if method == "coco":  # (R, K): recall threshold by recall threshold, class by class, as pycocotools
            return float(np.mean(np.column_stack(values).ravel()))
        return float(np.mean(values))

    def _threshold_index(self, iou_threshold: float) -> int:
        t = np.flatnonzero(np.isclose(self.iou_thresholds, iou_threshold))
        if t.size == 0:
            raise ValueError(f"`iou_threshold` {iou_threshold!r} is not one of {self.iou_thresholds.tolist()}")
        return int(t[0])

    def threshold_table(self, class_id: Any, *, iou_threshold: float = 0.5, area: str = "all") -> ThresholdTable:
        """The count table of one class at one IoU threshold and area range (``max_dets[-1]``
        detections per image): detections ranked by score, ``n_pos`` the non-ignored ground
        truths; equal scores one row with ``ties="group"`` (as the evaluation counts them).
        Plot it with ``.plot("pr")``; its ``average_precision(method="coco")`` is the mean of
        this class's row of :attr:`precision` (with COCO's 101 recall thresholds)."""
        if class_id not in self._ranked:
            raise ValueError(f"`class_id` {class_id!r} is not an evaluated class; the classes are "
                             f"{list(self._ranked)}")
        t = self._threshold_index(iou_threshold)
        a = self.area_index(area)
        score, tp, ignored, n_gt = self._ranked[class_id]
        counted = ~ignored[a, t]
        is_tp = tp[a, t][counted]
        if not counted.any():
            raise ValueError(f"class {class_id!r} has no counted detection at IoU {iou_threshold} ({area})")
        table = ThresholdTable(thresholds=score[counted], tp=np.cumsum(is_tp), fp=np.cumsum(~is_tp),
                               n_pos=max(int(n_gt[a]), int(is_tp.sum())), n_neg=float((~is_tp).sum()),
                               ties="stable")
        return table.grouped() if self.ties == "group" else table

    STAT_NAMES = (
        "AP", "AP50", "AP75", "AP_small", "AP_medium", "AP_large",
        "AR_max1", "AR_max10", "AR_max100", "AR_small", "AR_medium", "AR_large",
    )

    KEYPOINT_STAT_NAMES = ("AP", "AP50", "AP75", "AP_medium", "AP_large", "AR", "AR50", "AR75", "AR_medium",
                           "AR_large")

    def to_text(self, width: int | None = 80) -> str:
        """pycocotools-style summary lines (``COCOeval.summarize``), its IoU label included: the first and
        last IoU thresholds evaluated (``IoU=0.60:0.70`` for thresholds 0.6, 0.7).

        Every line within ``width`` terminal columns (at least 60; None: pycocotools' exact format): a
        line wider than that (a ``max_dets`` value of 4 digits or more) drops pycocotools' padding
        and then its spacing, one space at a time, as far as needed (the default settings' lines are
        pycocotools' byte for byte).  The numbers are never cut."""
        if width is not None:
            width = check_number(width, "width", low=60, integer=True, hint="the widest line; None: no limit")
        m = self.max_dets
        t = self.iou_thresholds
        span = f"{t[0]:0.2f}:{t[-1]:0.2f}"  # pycocotools: p.iouThrs[0] and p.iouThrs[-1]
        if self.iou_type == "keypoints":
            rows = [(ap, iou, area, m[-1]) for ap in (1, 0) for iou, area in (
                (span, "all"), ("0.50", "all"), ("0.75", "all"), (span, "medium"), (span, "large"))]
        else:
            rows = [
                (1, span, "all", m[-1]), (1, "0.50", "all", m[-1]), (1, "0.75", "all", m[-1]),
                (1, span, "small", m[-1]), (1, span, "medium", m[-1]), (1, span, "large", m[-1]),
                (0, span, "all", m[0]), (0, span, "all", m[1] if len(m) > 1 else m[0]), (0, span, "all", m[-1]),
                (0, span, "small", m[-1]), (0, span, "medium", m[-1]), (0, span, "large", m[-1]),
            ]
        return "\n".join(_summary_lines(rows, self.stats, width))


def _summary_lines(rows: list[tuple[int, str, str, int]], values: np.ndarray, width: int | None) -> list[str]:
    """pycocotools' summary lines (``ap``, IoU label, area, max_dets of each, and its value); when one is wider
    than ``width`` (a ``max_dets`` of 4 digits or more), every line drops the same spaces, as many as the
    widest needs, in this order: the title's padding to 18 characters, the leading space, the spaces inside
    ``@[ ... ]``, before each ``|`` and around ``=``; max_dets right-aligned to the widest one (the lines stay
    aligned)."""
    def lines(drop: int, md_width: int) -> list[str]:
        keep = [drop < k for k in range(1, 8)]  # the spaces kept, in the order they go
        sp = [" " if k else "" for k in keep]
        out = []
        for (ap, iou, area, md), value in zip(rows, values):
            title = "Average Precision" if ap else "Average Recall"
            kind = "(AP)" if ap else "(AR)"
            out.append(f"{sp[1]}{title:<{18 - (not keep[0])}} {kind} @[{sp[2]}IoU={iou:<9}{sp[4]}| area={area:>6s}"
                       f"{sp[5]}| maxDets={md:>{md_width}d}{sp[3]}]{sp[6]}={sp[6]}{value:0.3f}")
        return out

    exact = lines(0, 3)
    if width is None or max(len(line) for line in exact) <= width:
        return exact
    md_width = max(3, *(len(str(md)) for *_, md in rows))
    for drop in range(1, 8):
        out = lines(drop, md_width)
        if max(len(line) for line in out) <= width:
            return out
    return out


def check_coco_options(
    *,
    iou_thresholds: Any = None,
    recall_thresholds: Any = None,
    max_dets: Any = None,
    iou_type: Any = "bbox",
    area_ranges: Any = None,
    ties: Any = "stable",
    kpt_oks_sigmas: Any = None,
    use_cats: Any = True,
) -> dict[str, Any]:
    """Check the options of :func:`evaluate_coco` (also :class:`~precall.detection.MeanAveragePrecision`'s,
    when it is built) and fill in the defaults: ``iou_thresholds`` and ``recall_thresholds`` as float64
    arrays, ``max_dets`` as a tuple of int, ``area_ranges`` as a dict of name to (low, high) floats,
    ``kpt_oks_sigmas`` (keypoints only, else None).  Every number goes through
    :func:`~precall._core.validate.check_numbers`: a ``TypeError`` or ``ValueError`` names the option,
    what it takes and what it got.

    Examples
    --------
    >>> check_coco_options(max_dets=100)
    Traceback (most recent call last):
    ...
    TypeError: `max_dets` must be a sequence of whole numbers in [1, 1e+09] (detections kept per image, e.g. (1, 10, 100) or (100,)); got 100
    """
    if ties not in ("stable", "group"):
        raise ValueError(f"`ties` must be 'stable' or 'group'; got {ties!r}")
    if iou_type not in ("bbox", "segm", "keypoints"):
        raise ValueError(f"`iou_type` must be 'bbox', 'segm' or 'keypoints'; got {iou_type!r}")
    if not isinstance(use_cats, (bool, np.bool_)):
        raise TypeError(f"`use_cats` must be True or False; got {use_cats!r:.80}")
    sigmas = None
    if iou_type == "keypoints":
        sigmas = COCO_KEYPOINT_SIGMAS if kpt_oks_sigmas is None else check_numbers(
            kpt_oks_sigmas, "kpt_oks_sigmas", low=0, low_open=True, hint="one sigma per keypoint")
    thresholds = IOU_THRESHOLDS if iou_thresholds is None else check_numbers(
        iou_thresholds, "iou_thresholds", low=0, high=1, hint="e.g. [0.5, 0.75]")
    recall = COCO_GRID if recall_thresholds is None else check_numbers(
        recall_thresholds, "recall_thresholds", low=0, high=1, hint="increasing, e.g. np.linspace(0, 1, 101)")
    if (np.diff(recall) <= 0).any():
        raise ValueError(f"`recall_thresholds` must be increasing, e.g. np.linspace(0, 1, 101); got {recall.tolist()!r:.80}")
    if max_dets is None:
        max_dets = (20,) if iou_type == "keypoints" else (1, 10, 100)
    dets = check_numbers(max_dets, "max_dets", low=1, high=10**9, integer=True,
                         hint="detections kept per image, e.g. (1, 10, 100) or (100,)")
    if np.unique(dets).size != dets.size:
        raise ValueError(f"`max_dets` must be distinct (detections kept per image, e.g. (1, 10, 100)); got "
                         f"{tuple(dets.tolist())!r}")
    dets = np.sort(dets)  # evaluated in increasing order, whatever the order given
    if area_ranges is None:
        area_ranges = KEYPOINT_AREA_RANGES if iou_type == "keypoints" else AREA_RANGES
    ranges = check_area_ranges(area_ranges)
    return {"iou_thresholds": thresholds, "recall_thresholds": np.asarray(recall, dtype=np.float64),
            "max_dets": tuple(int(m) for m in dets), "area_ranges": ranges, "kpt_oks_sigmas": sigmas}


def check_area_ranges(area_ranges: Any) -> dict[str, tuple[float, float]]:
    """``area_ranges`` checked: a non-empty dict of names (strings) to ``(low, high)``, two finite
    numbers with ``low <= high`` (areas in pixels; pycocotools' "no upper bound" is ``1e5 ** 2``)."""
    rule = "a non-empty dict of name to (low, high) areas, e.g. {'all': (0, 1e10), 'small': (0, 1024)}"
    if not isinstance(area_ranges, dict):
        raise TypeError(f"`area_ranges` must be {rule}; got {area_ranges!r:.80}")
    if not area_ranges:
        raise ValueError(f"`area_ranges` must be {rule}; got {{}}")
    out: dict[str, tuple[float, float]] = {}
    for name, bounds in area_ranges.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"`area_ranges` names must be non-empty strings (e.g. 'all'); got {name!r:.80}")
        where = f"area_ranges[{name!r}]"
        values = check_numbers(bounds, where, min_len=2, hint="(low, high) areas in pixels; 1e10 for no upper bound")
        if values.size != 2:
            raise ValueError(f"`{where}` must be two numbers (low, high); got {bounds!r:.80}")
        low, high = values
        if low > high:
            raise ValueError(f"`{where}` must be (low, high) with low <= high; got {bounds!r:.80}")
        out[name] = (float(low), float(high))
    return out


def _counts(tp: np.ndarray, ignored: np.ndarray, score: np.ndarray, ties: str) -> tuple[np.ndarray, np.ndarray]:
    """(T, runs) per-run TP and FP counts of one class's ranked detections at each IoU threshold (an
    ignored detection counts neither as TP nor FP; equal scores one run with ``ties="group"``)."""
    pos = (tp & ~ignored).astype(np.float64)
    neg = (~tp & ~ignored).astype(np.float64)
    if score.size and ties == "group":  # equal scores: one run
        starts = np.flatnonzero(np.r_[True, score[1:] != score[:-1]])
        pos, neg = np.add.reduceat(pos, starts, axis=1), np.add.reduceat(neg, starts, axis=1)
    return pos, neg


_CELLS_PER_CALL = 1 << 18  # rows x runs of one call of the core's row kernels
_SHORT = 256  # cells with fewer runs are evaluated in batches (per-call overhead), longer ones one by one


def _interpolated_cells(cells: list[tuple[np.ndarray, np.ndarray, int]], rec_thresholds: np.ndarray,
                        ) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each cell ``(pos, neg, n_pos)`` (one class, area range and ``max_dets``; ``(T, runs)`` counts),
    the (T, R) interpolated precision and (T,) recall: the ``coco`` convention on all the IoU thresholds
    of many cells at once (rows padded with empty runs, which change no number)."""
    out: list[Any] = [None] * len(cells)
    order = sorted(range(len(cells)), key=lambda i: cells[i][0].shape[1])
    lo = 0
    while lo < len(order):
        T = cells[order[lo]][0].shape[0]
        hi = lo + 1
        while hi < len(order) and (hi + 1 - lo) * T * max(cells[order[hi]][0].shape[1], 1) <= _CELLS_PER_CALL:
            hi += 1
        width = max(cells[order[hi - 1]][0].shape[1], 1)
        pos = np.zeros(((hi - lo) * T, width))
        neg = np.zeros_like(pos)
        for j, i in enumerate(order[lo:hi]):
            p, q, _ = cells[i]
            pos[j * T:(j + 1) * T, :p.shape[1]] = p
            neg[j * T:(j + 1) * T, :q.shape[1]] = q
        n_pos = np.repeat(np.array([float(cells[i][2]) for i in order[lo:hi]]), T)
        steps = steps_from_counts(pos, neg, n_pos)
        precision = grid_precisions(steps, "coco", thresholds=rec_thresholds)
        recall = steps.tp[:, -1] / n_pos
        for j, i in enumerate(order[lo:hi]):
            out[i] = (precision[j * T:(j + 1) * T], recall[j * T:(j + 1) * T])
        lo = hi
    return out


def _pooled_classes(data: DetectionSet) -> DetectionSet:
    """``data`` class-agnostic, as pycocotools' ``useCats=0``: the ground truths and detections of every
    listed category pooled as one class ``-1`` ("all classes"), in pycocotools' order (the records of
    each listed category in turn, input order within one: ties follow it); records of other categories
    dropped.  The data of :func:`evaluate_coco` and :func:`~precall.detection.error_breakdown` with
    ``use_cats=False``."""
    rank = {c: i for i, c in enumerate(data.classes.tolist())}
    g_rank = np.array([rank.get(c, -1) for c in data.gt_class.tolist()], dtype=np.int64)
    d_rank = np.array([rank.get(c, -1) for c in data.dt_class.tolist()], dtype=np.int64)
    g = np.flatnonzero(g_rank >= 0)
    d = np.flatnonzero(d_rank >= 0)
    g, d = g[np.argsort(g_rank[g], kind="stable")], d[np.argsort(d_rank[d], kind="stable")]
    return data._take(g, d, classes=np.array([-1]), gt_class=np.full(g.size, -1), dt_class=np.full(d.size, -1),
                      class_names={-1: "all classes"})


def _mean_valid(values: np.ndarray) -> float:
    valid = values[values > -1]
    return float(np.mean(valid)) if valid.size else -1.0


def evaluate_coco(
    data: DetectionSet,
    *,
    iou_thresholds: Any = None,
    recall_thresholds: Any = None,
    max_dets: tuple[int, ...] | None = None,
    iou_type: str = "bbox",
    area_ranges: dict[str, tuple[float, float]] | None = None,
    ties: str = "stable",
    progress: Any = None,
    kpt_oks_sigmas: Any = None,
    use_cats: bool = True,
) -> CocoEvaluation:
    """COCO bbox evaluation (pycocotools' ``COCOeval`` semantics; see the module docstring).

    Parameters
    ----------
    data : DetectionSet
        From :func:`load_coco`.
    iou_thresholds : array-like, default=None
        Default 0.50:0.05:0.95 (pycocotools' ``np.linspace``, float for float).
    recall_thresholds : array-like, default=None
        Default pycocotools' 101 thresholds ``np.linspace(0, 1, 101)``.
    max_dets : tuple of int, default=None
        Detections per image and class kept: distinct, in any order (evaluated,
        and reported in :attr:`CocoEvaluation.max_dets`, in increasing order).
        Default ``(1, 10, 100)``, and ``(20,)`` for keypoints (pycocotools' defaults).
    iou_type : {"bbox", "segm", "keypoints"}, default="bbox"
        Box IoU; mask IoU of the COCO segmentations (polygons and run-length
        counts decoded as pycocotools does, computed on run lengths; a
        detection's area is then its mask area); or the object keypoint
        similarity (OKS) of pycocotools' ``computeOks``: per-keypoint sigmas,
        only the ground truth's labelled keypoints (``v > 0``), or the distance
        outside its box enlarged by its size on each side when it has none;
        the ground truth's ``area``; ground truths with ``num_keypoints == 0``
        ignored.  Keypoint stats are pycocotools' 10 numbers.
    area_ranges : dict of name to (low, high), default=None
        Default all / small / medium / large (pycocotools' ranges; all /
        medium / large for keypoints), in any order: every number is found by
        name.  The summary uses the names ``all``, ``small``, ``medium``,
        ``large`` (-1 for a missing one); per-class numbers, bootstrap intervals
        and :meth:`CocoEvaluation.mean_average_precision` use ``all``.
    use_cats : bool, default=True
        ``False``: class-agnostic (pycocotools' ``useCats=0``): the detections and
        ground truths of all listed categories pooled as one class ``-1`` (ties in
        pycocotools' order: category by category, then input order).  For
        keypoints too (OKS between the pooled records), where pycocotools'
        ``computeOks`` ignores ``useCats`` and finds nothing to match (AP 0).
    kpt_oks_sigmas : array-like, default=None
        One sigma per keypoint (default :data:`COCO_KEYPOINT_SIGMAS`, the 17 COCO
        person keypoints); e.g. CrowdPose's 14.
    ties : {"stable", "group"}, default="stable"
        ``"stable"``: pycocotools' order; ``"group"``: equal scores are one step.
    progress : callable, default=None
        Called with the fraction done (0 to 1) as the evaluation proceeds.

    Returns
    -------
    CocoEvaluation
    """
    opts = check_coco_options(iou_thresholds=iou_thresholds, recall_thresholds=recall_thresholds,
                              max_dets=max_dets, iou_type=iou_type, area_ranges=area_ranges, ties=ties,
                              kpt_oks_sigmas=kpt_oks_sigmas, use_cats=use_cats)
    if progress is not None and not callable(progress):
        raise TypeError(f"`progress` must be a callable (called with the fraction done) or None; got {progress!r:.80}")
    thresholds, recall_thresholds, max_dets = opts["iou_thresholds"], opts["recall_thresholds"], opts["max_dets"]
    ranges, sigmas = opts["area_ranges"], opts["kpt_oks_sigmas"]
    if iou_type == "keypoints" and data.dt_keypoints is None:
        raise ValueError("iou_type='keypoints' needs keypoints: load the data with load_coco")
    if iou_type == "keypoints" and data.crowd_index:
        import warnings

        warnings.warn(CROWDPOSE_WARNING, DetectionWarning, stacklevel=2)
    if iou_type == "segm" and ((data.gt_segm is None and data.gt_runs is None) or
                               (data.dt_segm is None and data.dt_runs is None) or data.image_hw is None):
        raise ValueError("iou_type='segm' needs segmentations: load the data with load_coco")
    if not use_cats:
        data = _pooled_classes(data)
    range_list = list(ranges.values())
    matched = _match(data, thresholds, range_list, max_dets[-1], ties, progress, iou_type, sigmas)
    T, A, M, K = thresholds.size, len(range_list), len(max_dets), data.classes.size
    R = recall_thresholds.size
    precision = -np.ones((T, R, K, A, M))
    recall = -np.ones((T, K, A, M))
    # merged order: decreasing score, stable by image then rank (pycocotools' concatenation)
    order = np.lexsort((matched.rank, matched.image, -matched.score, matched.cls))
    bounds = np.searchsorted(matched.cls[order], np.arange(K + 1))
    ranked: dict[Any, tuple[np.ndarray, ...]] = {}
    cells, where, held = [], [], 0
    for k in range(K):
        if progress is not None:
            progress(0.8 + 0.1 * k / max(K, 1))
        rows = order[bounds[k] : bounds[k + 1]]
        if matched.n_gt[:, k].any():  # max_dets[-1] is the largest: the matching kept that many
            kept = rows[matched.rank[rows] < max_dets[-1]]
            ranked[data.classes[k].item()] = (
                matched.score[kept], matched.tp[:, :, kept], matched.ignored[:, :, kept], matched.n_gt[:, k])
        for a in range(A):
            npig = int(matched.n_gt[a, k])
            if npig == 0:
                continue
            for m, md in enumerate(max_dets):
                kept = rows[matched.rank[rows] < md]
                cell = (*_counts(matched.tp[a][:, kept], matched.ignored[a][:, kept], matched.score[kept], ties),
                        npig)
                if cell[0].shape[1] >= _SHORT:  # a long row: one call is cheap beside its size
                    [(precision[:, :, k, a, m], recall[:, k, a, m])] = _interpolated_cells([cell], recall_thresholds)
                    continue
                cells.append(cell)
                where.append((k, a, m))
                held += cell[0].size
        if held >= _CELLS_PER_CALL or k == K - 1:  # a bounded number of cells waits (memory), then one batch
            for (kk, a, m), (p, r) in zip(where, _interpolated_cells(cells, recall_thresholds)):
                precision[:, :, kk, a, m], recall[:, kk, a, m] = p, r
            cells, where, held = [], [], 0
    if progress is not None:
        progress(1.0)
    names = list(ranges)

    def summarize(ap: bool, iou: float | None = None, area: str = "all", md: int = max_dets[-1]) -> float:
        if area not in ranges or md not in max_dets:
            return -1.0
        a, m = names.index(area), max_dets.index(md)
        if ap:
            s = precision[:, :, :, a, m]
            if iou is not None:
                s = s[np.flatnonzero(np.isclose(thresholds, iou))]
        else:
            s = recall[:, :, a, m]
            if iou is not None:
                s = s[np.flatnonzero(np.isclose(thresholds, iou))]
        return _mean_valid(s)

    md = max_dets
    if iou_type == "keypoints":
        stats = np.array([summarize(ap, iou, area) for ap in (True, False) for iou, area in (
            (None, "all"), (0.5, "all"), (0.75, "all"), (None, "medium"), (None, "large"))])
    else:
        stats = np.array([
            summarize(True), summarize(True, 0.5, md=md[-1]), summarize(True, 0.75, md=md[-1]),
            summarize(True, area="small", md=md[-1]), summarize(True, area="medium", md=md[-1]),
            summarize(True, area="large", md=md[-1]),
            summarize(False, md=md[0]), summarize(False, md=md[1] if len(md) > 1 else md[0]), summarize(False, md=md[-1]),
            summarize(False, area="small", md=md[-1]), summarize(False, area="medium", md=md[-1]),
            summarize(False, area="large", md=md[-1]),
        ])
    per_class = []
    counts = np.bincount(matched.cls, minlength=K)
    everything = names.index("all") if "all" in names else None  # the per-class numbers are of area "all"
    for k, cid in enumerate(data.classes.tolist()):
        row: dict[str, Any] = {"id": cid, "name": data.class_names.get(cid, str(cid))}
        if everything is None:
            row.update(AP=-1.0, AP50=-1.0, AP75=-1.0, AR=-1.0)
        else:
            p = precision[:, :, k, everything, M - 1]
            row.update(
                AP=_mean_valid(p),
                AP50=_mean_valid(p[np.isclose(thresholds, 0.5)]) if np.isclose(thresholds, 0.5).any() else -1.0,
                AP75=_mean_valid(p[np.isclose(thresholds, 0.75)]) if np.isclose(thresholds, 0.75).any() else -1.0,
                AR=_mean_valid(recall[:, k, everything, M - 1]))
        row.update({f"AP_{name}": _mean_valid(precision[:, :, k, a, M - 1]) for a, name in enumerate(names)
                    if name != "all"})
        row.update(n_gt=int(matched.n_gt[everything, k] if everything is not None else matched.n_gt_any_area[k]),
                   n_det=int(counts[k]))
        per_class.append(row)
    if not matched.n_gt.any():  # pycocotools' -1 for undefined, kept (its numbers), and said
        import warnings

        warnings.warn(NO_GROUND_TRUTH, UndefinedMetricWarning, stacklevel=2)
    return CocoEvaluation(stats, precision, recall, per_class, thresholds, recall_thresholds, max_dets, ranges, ranked,
                          iou_type, ties, matched, int(data.images.size), data.images.copy())


NO_GROUND_TRUTH = ("no ground-truth annotation counts (none of an evaluated category and area range), so every number "
                   "is undefined; reported as -1 (pycocotools' convention)")
""":func:`evaluate_coco`'s warning when every summary number is pycocotools' -1."""
