"""Operating points of a detector and its confusion matrix (issue 24, item 2).

**Operating points** (:func:`operating_points`) are read from a COCO evaluation's matching
(pycocotools' rules, one IoU threshold, area ``all``, ``max_dets[-1]`` detections per image and
class): at a confidence ``c`` a class keeps its detections with ``score >= c`` (precall's threshold
convention, as every :class:`~precall.ThresholdTable`); ``TP`` are the kept detections matched to
a ground truth, ``FP`` the other kept ones that are not ignored (crowd, area), and

    precision = TP / (TP + FP)  (0 when nothing is kept),  recall = TP / n_gt,
    F1 = 2 P R / (P + R)  (0 when P + R = 0).

A class's F1-optimal confidence is the score (among its detections' scores) of the highest F1,
the highest such score on ties (fewest detections); the *common* F1-optimal confidence maximises
the mean F1 over the classes with ground truth (ultralytics picks one confidence this way, on a
grid of 1,000; here every distinct score is tried).  The curves are exact: one point per distinct
score.

**Confusion matrix** (:func:`confusion_matrix`) follows ultralytics' ``ConfusionMatrix``
(``process_batch``, from yolov5), the convention most detection users read:

* per image, detections with ``score >= confidence`` (ultralytics: ``> conf``) and ground truths
  of every class (crowd and ``ignore`` ground truths left out) are paired *class-agnostically*
  when their IoU is ``> iou_threshold``: pairs by decreasing IoU, each detection keeps its best
  pair, then each ground truth keeps its best remaining pair (ultralytics' two ``np.unique``
  passes: a ground truth whose best detection preferred another one stays unpaired);
* ``matrix[predicted, true]`` (rows: predicted class, columns: true class; ultralytics' layout),
  with a last row and column *background*: a paired detection and ground truth add 1 at
  ``[its class, the truth's class]`` (the diagonal: correct, off it: confused), an unpaired ground
  truth adds to ``[background, its class]`` (missed), an unpaired detection to
  ``[its class, background]`` (a false positive on background);
* ultralytics' defaults are ``confidence=0.25``, ``iou_threshold=0.45``; precall's are the same.

detectron2 has no detection confusion matrix (detectron2 #393 asks for one); torchmetrics neither.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core.validate import check_number
from .coco import CocoEvaluation
from .io import DetectionSet
from .tide import _image_ious

__all__ = ["ConfusionMatrix", "OperatingPoints", "confusion_matrix", "operating_points"]


def _prf(tp: np.ndarray, fp: np.ndarray, n_gt: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall and F1 of counts (0 where undefined, as defined in the module docstring)."""
    tp, fp = np.asarray(tp, dtype=np.float64), np.asarray(fp, dtype=np.float64)
    kept = tp + fp
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(kept > 0, tp / np.where(kept > 0, kept, 1), 0.0)
        r = tp / n_gt if n_gt > 0 else np.full_like(tp, np.nan)
        f1 = np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1), 0.0)
    return p, r, f1


@dataclass(frozen=True)
class OperatingPoints:
    """Per-class precision, recall and F1 at a confidence and at the F1-optimal one, and the curves.

    Attributes
    ----------
    iou_threshold : float
    confidence : float or None
        The confidence asked for (None: none).
    per_class : list of dict
        Per class: ``id``, ``name``, ``n_gt``, ``n_det``; at ``confidence`` (when given)
        ``precision``, ``recall``, ``f1``; ``best_f1`` and its ``best_threshold`` (NaN without
        detections), ``best_precision``, ``best_recall``; recall and F1 NaN without ground truth.
    common : dict
        The common confidence that maximises the mean F1 over classes with ground truth:
        ``threshold``, ``f1`` (that mean), ``precision``, ``recall`` (means over the same classes).
    curves : dict
        Class id to ``(thresholds, precision, recall, f1)``: arrays over the distinct scores of its
        counted detections, decreasing.
    """

    iou_threshold: float
    confidence: float | None
    per_class: list[dict[str, Any]]
    common: dict[str, float]
    curves: dict[Any, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = field(repr=False)

    def rows(self) -> list[list[str]]:
        """Table rows (class, #GT, P/R/F1 at the confidence, best F1 and its threshold)."""
        out = []
        for row in self.per_class:
            at = ([_fmt(row["precision"]), _fmt(row["recall"]), _fmt(row["f1"])]
                  if self.confidence is not None else [])
            out.append([str(row["name"]), str(row["n_gt"]), *at, _fmt(row["best_f1"]), _fmt(row["best_threshold"], 4),
                        _fmt(row["best_precision"]), _fmt(row["best_recall"])])
        return out

    def header(self) -> list[str]:
        at = [f"P@{self.confidence:g}", f"R@{self.confidence:g}", f"F1@{self.confidence:g}"] \
            if self.confidence is not None else []
        return ["class", "#GT", *at, "best F1", "at conf", "P there", "R there"]


def _fmt(value: float, digits: int = 3) -> str:
    return "-" if value is None or np.isnan(value) else f"{value:.{digits}f}"


def _class_curve(score: np.ndarray, is_tp: np.ndarray, n_gt: int) -> tuple[np.ndarray, ...]:
    """(thresholds, precision, recall, f1) at the distinct scores (decreasing) of one class's counted
    detections, ranked by decreasing score."""
    tp, fp = np.cumsum(is_tp), np.cumsum(~is_tp)
    last = np.flatnonzero(np.r_[score[1:] != score[:-1], True]) if score.size else np.zeros(0, np.int64)
    # (the last row of each equal-score run)
    return (score[last], *_prf(tp[last], fp[last], float(n_gt)))


def operating_points(
    ev: CocoEvaluation, confidence: float | None = None, *, iou_threshold: float = 0.5, area: str = "all",
) -> OperatingPoints:
    """Per-class precision, recall and F1 at ``confidence`` and at each class's F1-optimal confidence,
    the common F1-optimal confidence, and the F1 / precision / recall - confidence curves.

    Parameters
    ----------
    ev : CocoEvaluation
        From :func:`~precall.detection.evaluate_coco` (bbox, segm or keypoints).
    confidence : float, default=None
        Detections with ``score >= confidence`` are kept; None: only the F1-optimal points.
    iou_threshold : float, default=0.5
        One of the evaluation's IoU thresholds.
    area : str, default="all"
        One of the evaluation's area ranges.

    Returns
    -------
    OperatingPoints

    Examples
    --------
    >>> from precall import detection
    >>> gt = {"images": [{"id": 1}], "categories": [{"id": 1, "name": "a"}],
    ...       "annotations": [{"id": i, "image_id": 1, "category_id": 1, "bbox": [20 * i, 0, 10, 10], "area": 100}
    ...                       for i in range(1, 4)]}
    >>> res = [{"image_id": 1, "category_id": 1, "bbox": [20 * i, 0, 10, 10], "score": s}
    ...        for i, s in ((1, 0.9), (2, 0.6), (9, 0.7), (3, 0.2))]
    >>> op = detection.operating_points(detection.evaluate_coco(detection.load_coco(gt, res)), 0.5)
    >>> row = op.per_class[0]
    >>> row["precision"], round(row["recall"], 3), row["best_threshold"], round(row["best_f1"], 3)
    (0.6666666666666666, 0.667, 0.2, 0.857)
    """
    if confidence is not None:
        confidence = check_number(confidence, "confidence", hint="a score: detections with score >= it are kept")
    a = ev.area_index(area)
    t = np.flatnonzero(np.isclose(ev.iou_thresholds, check_number(iou_threshold, "iou_threshold", low=0, high=1)))
    if t.size == 0:
        raise ValueError(f"`iou_threshold` must be one of the evaluated IoU thresholds {ev.iou_thresholds.tolist()}; "
                         f"got {iou_threshold!r}")
    per_class, curves = [], {}
    for row in ev.per_class:
        cid = row["id"]
        entry: dict[str, Any] = {"id": cid, "name": row["name"], "n_gt": 0, "n_det": 0}
        if cid in ev._ranked:
            score, tp, ignored, n_gt = ev._ranked[cid]
            counted = ~ignored[a, t[0]]
            score, is_tp, n = score[counted], tp[a, t[0]][counted], int(n_gt[a])
        else:
            score, is_tp, n = np.zeros(0), np.zeros(0, dtype=bool), 0
        entry.update(n_gt=n, n_det=int(row["n_det"]))
        thresholds, p, r, f1 = _class_curve(score, is_tp, n)
        curves[cid] = (thresholds, p, r, f1)
        if confidence is not None:
            kept = int(np.count_nonzero(score >= confidence))
            tps = int(is_tp[:kept].sum())
            cp, cr, cf = _prf(np.array([tps]), np.array([kept - tps]), float(n))
            entry.update(precision=float(cp[0]), recall=float(cr[0]), f1=float(cf[0]))
        if thresholds.size and n > 0:
            best = int(np.argmax(f1))  # the first of equal maxima: the highest threshold
            entry.update(best_f1=float(f1[best]), best_threshold=float(thresholds[best]),
                         best_precision=float(p[best]), best_recall=float(r[best]))
        else:
            entry.update(best_f1=0.0 if n > 0 else float("nan"), best_threshold=float("nan"),
                         best_precision=float("nan"), best_recall=0.0 if n > 0 else float("nan"))
        per_class.append(entry)
    return OperatingPoints(float(ev.iou_thresholds[t[0]]), confidence, per_class,
                           _common(per_class, curves), curves)


def _common(per_class: list[dict[str, Any]], curves: dict[Any, tuple[np.ndarray, ...]]) -> dict[str, float]:
    """The confidence (one of all the classes' scores) of the highest mean F1 over classes with ground truth."""
    valid = [row["id"] for row in per_class if row["n_gt"] > 0]
    candidates = np.unique(np.concatenate([curves[c][0] for c in valid] + [np.zeros(0)]))[::-1]
    if not valid or candidates.size == 0:
        return {"threshold": float("nan"), "f1": 0.0 if valid else float("nan"), "precision": float("nan"),
                "recall": float("nan")}
    stacked = []
    for c in valid:
        thr, p, r, f1 = curves[c]
        # at candidate x a class keeps its detections with score >= x: its curve point at the lowest
        # threshold >= x (thresholds decrease), or nothing kept (P 0, R 0, F1 0)
        k = np.searchsorted(-thr, -candidates, side="right") - 1
        none = k < 0
        k = np.maximum(k, 0)
        stacked.append([np.where(none, 0.0, v[k]) if v.size else np.zeros(candidates.size) for v in (p, r, f1)])
    arr = np.array(stacked)  # (classes, 3, candidates)
    mean = arr.mean(axis=0)
    best = int(np.argmax(mean[2]))
    return {"threshold": float(candidates[best]), "f1": float(mean[2, best]), "precision": float(mean[0, best]),
            "recall": float(mean[1, best])}


@dataclass(frozen=True)
class ConfusionMatrix:
    """A detection confusion matrix (ultralytics' convention; see the module docstring).

    Attributes
    ----------
    matrix : ndarray of shape (K + 1, K + 1)
        ``matrix[predicted, true]`` counts; the last row and column are background.
    labels : list
        The class names, then ``"background"``.
    class_ids : list
        The class ids (K).
    confidence, iou_threshold : float
    """

    matrix: np.ndarray
    labels: list[str]
    class_ids: list[Any]
    confidence: float
    iou_threshold: float

    def rows(self) -> list[list[str]]:
        """Table rows: one per predicted class (and background), a column per true class."""
        return [[label, *(str(int(v)) for v in self.matrix[i])] for i, label in enumerate(self.labels)]

    def header(self) -> list[str]:
        return ["predicted \\ true", *self.labels]


_PAIRS_PER_BLOCK = 1 << 18  # detection x ground-truth IoUs of one image computed at once (bounded memory)


def _best_ground_truths(data: DetectionSet, iou_type: str, dets: np.ndarray, gts: np.ndarray,
                        iou_threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """For each detection (rows ``dets`` of one image) its best ground truth (a position in ``gts``; the
    first of equal IoUs) and their IoU, -1 when no IoU is above ``iou_threshold``.

    The (D, G) IoUs are computed in blocks of detections of at most :data:`_PAIRS_PER_BLOCK` pairs (memory
    bounded whatever the number of boxes in an image); boxes: in the order of their left edge (then top),
    each block against the ground truths whose x and y ranges meet the block's (the others have IoU 0,
    never above the threshold), so that the time follows the pairs near each other.  The same numbers as the whole matrix at
    once: each IoU is computed by the same operations, and the first of equal maxima is kept.
    """
    D, G = dets.size, gts.size
    best_g, best_iou = np.zeros(D, dtype=np.int64), np.full(D, -1.0)
    boxes = iou_type == "bbox"
    if boxes:
        box, g_box = data.dt_box[dets], data.gt_box[gts]
        left, right = box[:, 0], box[:, 0] + box[:, 2]  # as _iou's dx + dw
        top, bottom = box[:, 1], box[:, 1] + box[:, 3]
        g_left, g_right = g_box[:, 0], g_box[:, 0] + g_box[:, 2]
        g_top, g_bottom = g_box[:, 1], g_box[:, 1] + g_box[:, 3]
        order = np.lexsort((top, left))
    else:
        order = np.arange(D)
    step = max(1, _PAIRS_PER_BLOCK // G)
    for lo in range(0, D, step):
        block = order[lo:lo + step]
        near = np.arange(G)
        if boxes:  # an intersection needs g_left < right, g_right > left, and so in y (IoU 0 otherwise)
            near = np.flatnonzero((g_left < right[block].max()) & (g_right > left[block].min())
                                  & (g_top < bottom[block].max()) & (g_bottom > top[block].min()))
            if near.size == 0:
                continue
        iou = _image_ious(data, iou_type, dets[block], gts[near])
        iou = np.where(iou > iou_threshold, iou, -1.0)
        j = iou.argmax(axis=1)
        best_g[block], best_iou[block] = near[j], iou[np.arange(block.size), j]
    return best_g, best_iou


def confusion_matrix(
    data: DetectionSet, *, confidence: float = 0.25, iou_threshold: float = 0.45, iou_type: str = "bbox",
) -> ConfusionMatrix:
    """The detection confusion matrix with a background row and column (ultralytics' convention).

    Parameters
    ----------
    data : DetectionSet
        From :func:`~precall.detection.load_coco` (or ``load_voc`` / ``load_text`` for boxes).
    confidence : float, default=0.25
        Detections with ``score >= confidence`` are counted.
    iou_threshold : float, default=0.45
        A detection and a ground truth pair when their IoU is above it.
    iou_type : {"bbox", "segm"}, default="bbox"

    Returns
    -------
    ConfusionMatrix

    Notes
    -----
    The IoUs of an image are computed a block of detections at a time (memory bounded however many boxes
    an image holds), boxes only against the ground truths near them: the same pairs as the whole matrix.

    Examples
    --------
    >>> from precall import detection
    >>> gt = {"images": [{"id": 1}], "categories": [{"id": 1, "name": "cat"}, {"id": 2, "name": "dog"}],
    ...       "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100},
    ...                       {"id": 2, "image_id": 1, "category_id": 2, "bbox": [50, 50, 10, 10], "area": 100}]}
    >>> res = [{"image_id": 1, "category_id": 2, "bbox": [0, 0, 10, 10], "score": 0.9},
    ...        {"image_id": 1, "category_id": 2, "bbox": [90, 90, 10, 10], "score": 0.8}]
    >>> detection.confusion_matrix(detection.load_coco(gt, res)).matrix.astype(int).tolist()
    [[0, 0, 0], [1, 0, 1], [0, 1, 0]]
    """
    confidence = check_number(confidence, "confidence", hint="a score: detections with score >= it are counted")
    iou_threshold = check_number(iou_threshold, "iou_threshold", low=0, high=1, hint="e.g. 0.45 (ultralytics)")
    if iou_type not in ("bbox", "segm"):
        raise ValueError(f"`iou_type` must be 'bbox' or 'segm'; got {iou_type!r}")
    if iou_type == "segm" and (data.gt_segm is None or data.dt_segm is None or data.image_hw is None):
        raise ValueError("iou_type='segm' needs segmentations: load the data with load_coco")
    classes = data.classes.tolist()
    K = len(classes)
    cls_index = {c: k for k, c in enumerate(classes)}
    img_index = {c: i for i, c in enumerate(data.images.tolist())}
    g_cls = np.array([cls_index.get(c, -1) for c in data.gt_class.tolist()], dtype=np.int64)
    g_img = np.array([img_index.get(c, -1) for c in data.gt_image.tolist()], dtype=np.int64)
    d_cls = np.array([cls_index.get(c, -1) for c in data.dt_class.tolist()], dtype=np.int64)
    d_img = np.array([img_index.get(c, -1) for c in data.dt_image.tolist()], dtype=np.int64)
    g_rows = np.flatnonzero((g_cls >= 0) & (g_img >= 0) & ~data.gt_crowd & ~data.gt_ignore)
    d_rows = np.flatnonzero((d_cls >= 0) & (d_img >= 0) & (data.dt_score >= confidence))
    g_rows, d_rows = g_rows[np.argsort(g_img[g_rows], kind="stable")], d_rows[np.argsort(d_img[d_rows], kind="stable")]
    n = data.images.size
    g_bounds = np.searchsorted(g_img[g_rows], np.arange(n + 1))
    d_bounds = np.searchsorted(d_img[d_rows], np.arange(n + 1))
    matrix = np.zeros((K + 1, K + 1), dtype=np.int64)
    pair_d, pair_g = [], []
    for i in np.flatnonzero((np.diff(g_bounds) > 0) & (np.diff(d_bounds) > 0)).tolist():
        gts, dets = g_rows[g_bounds[i]:g_bounds[i + 1]], d_rows[d_bounds[i]:d_bounds[i + 1]]
        best_g, best_iou = _best_ground_truths(data, iou_type, dets, gts, iou_threshold)
        # each ground truth keeps the detection of highest IoU among those that chose it
        d_idx = np.flatnonzero(best_iou > -1)
        if d_idx.size == 0:
            continue
        order = np.lexsort((-best_iou[d_idx], best_g[d_idx]))
        chosen = d_idx[order]
        first = np.r_[True, best_g[chosen][1:] != best_g[chosen][:-1]]
        pair_d.append(dets[chosen[first]])
        pair_g.append(gts[best_g[chosen[first]]])
    pd = np.concatenate(pair_d) if pair_d else np.zeros(0, np.int64)
    pg = np.concatenate(pair_g) if pair_g else np.zeros(0, np.int64)
    np.add.at(matrix, (d_cls[pd], g_cls[pg]), 1)
    missed = np.setdiff1d(g_rows, pg)
    np.add.at(matrix, (np.full(missed.size, K), g_cls[missed]), 1)
    unpaired = np.setdiff1d(d_rows, pd)
    np.add.at(matrix, (d_cls[unpaired], np.full(unpaired.size, K)), 1)
    labels = [str(data.class_names.get(c, c)) for c in classes] + ["background"]
    return ConfusionMatrix(matrix, labels, classes, float(confidence), float(iou_threshold))
