"""PASCAL VOC evaluation (Detectron's ``voc_eval``) on precall's count tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core.text import columns, fixed, legend, name_limit, shortened, table_lines, visible
from .._core.undefined import undefined
from .._core.validate import AP_METHODS, check_number, check_on_undefined
from ..table import ThresholdTable
from .io import DetectionSet, _to_xyxy

__all__ = ["VocEvaluation", "evaluate_voc"]


@dataclass(frozen=True)
class VocEvaluation:
    """PASCAL VOC results: AP per class (classes without ground truth left out) and their mean.

    ``tables[class]`` is the class's count table (plot it, or take any other AP
    convention from it).  ``bootstrap(n_resamples=2000, *, confidence_level=0.95,
    random_state=0)`` gives percentile intervals over images
    (:func:`precall.detection.bootstrap.bootstrap_voc`, attached by :mod:`precall.detection`).
    """

    ap: dict[Any, float]
    map: float
    method: str
    iou_threshold: float
    tables: dict[Any, ThresholdTable] = field(repr=False)
    n_gt: dict[Any, int] = field(default_factory=dict)
    ties: str = "stable"
    # per class: (image index, is TP, score) of the counted detections in rank order, and the
    # non-difficult ground truths per image: what a bootstrap over images reweights
    _ranked: dict[Any, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = field(
        default_factory=dict, repr=False)
    _n_images: int = field(default=0, repr=False)

    def replicate(self, counts: Any) -> tuple[float, dict[Any, float]]:
        """mAP and per-class AP with image ``i`` taken ``counts[i]`` times (images in the order of
        the data's ``images``): the evaluation of those images resampled, each copy of a
        detection next to the others (every match is within one image, so nothing is re-matched)."""
        counts = np.asarray(counts, dtype=np.int64)
        if counts.shape != (self._n_images,) or (counts < 0).any():
            raise ValueError(f"`counts` must be {self._n_images} non-negative integers, one per image")
        per_class: dict[Any, float] = {}
        for cls, (image, is_tp, score, gt_per_image) in self._ranked.items():
            n_pos = int(np.dot(counts, gt_per_image))
            if n_pos == 0:
                continue  # no ground truth drawn: undefined, left out of the mean as evaluate_voc does
            rows = np.repeat(np.arange(image.size), counts[image])
            if rows.size == 0:
                per_class[cls] = 0.0
                continue
            tp = is_tp[rows]
            table = ThresholdTable(thresholds=score[rows], tp=np.cumsum(tp), fp=np.cumsum(~tp), n_pos=n_pos,
                                   n_neg=float((~tp).sum()), ties="stable")
            if self.ties == "group":
                table = table.grouped()
            per_class[cls] = table.average_precision(method=self.method)
        mean = float(np.mean(list(per_class.values()))) if per_class else float("nan")
        return mean, per_class

    def to_text(self, width: int | None = 80) -> str:
        """AP per class and mAP, as aligned text within ``width`` terminal columns.

        Parameters
        ----------
        width : int or None
            The widest line (at least 60).  Class names are shown visibly
            (:func:`precall._core.text.visible`) and aligned by the terminal columns they take
            (a CJK character two); a name too long to fit beside the AP is shortened to its start
            and end around ``...`` (distinct from every other name shown), its full name in a
            legend below the table, as :meth:`precall.SlicedEvaluation.to_text` shortens slice
            names.  None: every name whole.
        """
        if width is not None:
            width = check_number(width, "width", low=60, integer=True, hint="the widest line; None: no limit")
        title = f"AP ({self.method}, IoU threshold {self.iou_threshold:g})"
        names = [visible(c) for c in self.ap]
        values = [fixed(v, 6) for v in self.ap.values()]
        rest = 2 + max(map(columns, [title, *values, fixed(self.map, 6)]))
        limit = name_limit(max(map(columns, ["class", "mAP", *names])), rest, width)
        shown = shortened(names, limit, taken=["mAP"])
        lines = table_lines(["class", title], [*map(list, zip(shown, values)), ["mAP", fixed(self.map, 6)]],
                            width=width, left=2)
        renamed = [(s, repr(c)) for s, n, c in zip(shown, names, self.ap) if s != n]
        if renamed:
            lines += ["", "classes:", *legend(renamed, width=width or 80, wide=width is None)]
        return "\n".join(lines)


def _xyxy_boxes(data: DetectionSet) -> tuple[np.ndarray, np.ndarray]:
    if data._xyxy is not None:
        return data._xyxy
    return _to_xyxy(data.gt_box, "xywh"), _to_xyxy(data.dt_box, "xywh")


def evaluate_voc(
    data: DetectionSet,
    *,
    iou_threshold: float = 0.5,
    method: str = "voc2010",
    pixel_offset: float = 1.0,
    inclusive: bool = False,
    ties: str = "stable",
    on_undefined: Any = "warn",
) -> VocEvaluation:
    """PASCAL VOC detection AP per class and mAP, Detectron's ``voc_eval`` rules by default.

    Per class, detections ranked by score; each takes the ground truth of its image
    with the highest IoU (the first among equals), computed with box sides ``x2 -
    x1 + pixel_offset``; above ``iou_threshold`` (``>=`` with ``inclusive=True``) it
    is a TP the first time that ground truth is taken, a FP after; a detection
    whose best ground truth is ``difficult`` is neither, and difficult ground
    truths are not counted in ``n_pos``; below the threshold it is a FP.  Then
    ``method`` (any :data:`precall.AP_METHODS`, default VOC2010's all-point
    envelope) on the count table.  ``pixel_offset=1, inclusive=True`` reproduce
    the rafaelpadilla evaluators; ``pixel_offset=0`` continuous boxes.

    A class without ground truth (none, or only difficult ones) has no AP and is left out of the
    mean.  When no class has one, mAP is undefined: ``on_undefined`` (precall's one policy) gives
    NaN with an :class:`~precall.UndefinedMetricWarning` (``"warn"``, the default), NaN silently
    (``"nan"``), a ``ValueError`` (``"raise"``) or the number given.
    """
    if method not in AP_METHODS:
        raise ValueError(f"`method` must be one of {AP_METHODS}; got {method!r}")
    if ties not in ("stable", "group"):
        raise ValueError(f"`ties` must be 'stable' or 'group'; got {ties!r}")
    iou_threshold = check_number(iou_threshold, "iou_threshold", low=0, high=1)
    pixel_offset = check_number(pixel_offset, "pixel_offset", low=0, hint="1: VOC's inclusive pixels, 0: continuous")
    if not isinstance(inclusive, (bool, np.bool_)):
        raise TypeError(f"`inclusive` must be True or False; got {inclusive!r:.80}")
    on_undefined = check_on_undefined(on_undefined)
    gt_xyxy, dt_xyxy = _xyxy_boxes(data)
    ap: dict[Any, float] = {}
    tables: dict[Any, ThresholdTable] = {}
    n_gt: dict[Any, int] = {}
    ranked: dict[Any, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    image_index = {v: i for i, v in enumerate(data.images.tolist())}
    for cls in data.classes.tolist():
        g_rows = np.flatnonzero(data.gt_class == cls)
        if ties == "group":  # ground truths in the order of their boxes: equal IoUs resolve independently of the input
            g_rows = g_rows[np.lexsort((data.gt_ignore[g_rows], *(gt_xyxy[g_rows, i] for i in (3, 2, 1, 0))))]
        n_pos = int((~data.gt_ignore[g_rows]).sum())
        n_gt[cls] = n_pos
        if n_pos == 0:
            continue  # AP undefined without ground truth: left out of the mean
        d_rows = np.flatnonzero(data.dt_class == cls)
        keys = (np.arange(d_rows.size), -data.dt_score[d_rows]) if ties == "stable" else \
            tuple(dt_xyxy[d_rows, i] for i in (3, 2, 1, 0)) + (-data.dt_score[d_rows],)
        d_rows = d_rows[np.lexsort(keys)]
        best = np.full(d_rows.size, -1, dtype=np.int64)  # matched ground-truth row
        overlap = np.zeros(d_rows.size)
        by_image: dict[Any, np.ndarray] = {}
        for r in g_rows.tolist():
            by_image.setdefault(data.gt_image[r], []).append(r)  # type: ignore[attr-defined]
        for i, r in enumerate(d_rows.tolist()):
            cand = by_image.get(data.dt_image[r])
            if not cand:
                continue
            g = gt_xyxy[cand]
            b = dt_xyxy[r]
            iw = np.maximum(np.minimum(g[:, 2], b[2]) - np.maximum(g[:, 0], b[0]) + pixel_offset, 0.0)
            ih = np.maximum(np.minimum(g[:, 3], b[3]) - np.maximum(g[:, 1], b[1]) + pixel_offset, 0.0)
            inters = iw * ih
            uni = ((b[2] - b[0] + pixel_offset) * (b[3] - b[1] + pixel_offset)
                   + (g[:, 2] - g[:, 0] + pixel_offset) * (g[:, 3] - g[:, 1] + pixel_offset) - inters)
            ov = inters / uni
            j = int(np.argmax(ov))
            overlap[i], best[i] = ov[j], cand[j]
        hit = (overlap >= iou_threshold) if inclusive else (overlap > iou_threshold)
        hit &= best >= 0
        difficult = hit & data.gt_ignore[np.where(best >= 0, best, 0)]
        counted = ~difficult
        first = np.zeros(d_rows.size, dtype=bool)  # the first (in rank order) to take its ground truth
        taking = np.flatnonzero(hit & counted)
        _, first_of = np.unique(best[taking], return_index=True)
        first[taking[first_of]] = True
        is_tp = first[counted]
        scores = data.dt_score[d_rows][counted]
        counted_gt = g_rows[~data.gt_ignore[g_rows]]
        gt_per_image = np.bincount([image_index[m] for m in data.gt_image[counted_gt].tolist()],
                                   minlength=len(image_index)).astype(np.int64)
        ranked[cls] = (np.array([image_index[m] for m in data.dt_image[d_rows][counted].tolist()], dtype=np.int64),
                       is_tp.copy(), scores.copy(), gt_per_image)
        if scores.size == 0:
            ap[cls] = 0.0
            continue
        table = ThresholdTable(thresholds=scores, tp=np.cumsum(is_tp), fp=np.cumsum(~is_tp), n_pos=n_pos,
                               n_neg=float((~is_tp).sum()), ties="stable")
        if ties == "group":
            table = table.grouped()
        tables[cls] = table
        ap[cls] = table.average_precision(method=method)
    if ap:
        mean = float(np.mean(list(ap.values())))
    else:
        why = (f"all {int(data.gt_ignore.sum())} ground-truth boxes are difficult" if data.gt_ignore.any()
               else "there is no ground-truth box")
        why = (f"no class has a ground truth that counts ({why}; images: {len(data.images)}, detections: "
               f"{len(data.dt_score)}), so no class has an AP and mAP, their mean")
        if on_undefined == "raise":
            raise ValueError(f"mAP is undefined: {why}, has no value; give ground truth, or choose another result "
                             "than an error with on_undefined='warn', 'nan' or a number")
        mean = undefined("mAP", f"{why}, is undefined; reported as NaN. Choose another result than NaN with "
                         "on_undefined='raise' or a number", float("nan"), on_undefined, stacklevel=3)
    return VocEvaluation(ap, mean, method, float(iou_threshold), tables, n_gt, ties, ranked, len(image_index))
