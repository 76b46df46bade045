"""Object detection: COCO mAP on precall's ranking core.

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
  pycocotools' order (input order among equal scores).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._counts import ThresholdTable
from ._masks import mask_iou
from ._rowwise import row_coco_precision, steps_from_counts

__all__ = [
    "CocoEvaluation", "DetectionSet", "VocEvaluation", "evaluate_coco", "evaluate_voc", "load_coco", "load_text",
    "load_voc",
]

AREA_RANGES: dict[str, tuple[float, float]] = {
    "all": (0.0, 1e5**2),
    "small": (0.0, 32.0**2),
    "medium": (32.0**2, 96.0**2),
    "large": (96.0**2, 1e5**2),
}
IOU_THRESHOLDS = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)


@dataclass(frozen=True)
class DetectionSet:
    """Ground truths and detections of a set of images, as flat arrays.

    Boxes are ``[x, y, w, h]`` float64.  Ground truths: ``gt_image``,
    ``gt_class``, ``gt_box``, ``gt_area`` (the area used for area ranges),
    ``gt_crowd``, ``gt_ignore``.  Detections: ``dt_image``, ``dt_class``,
    ``dt_box``, ``dt_score``.  Rows keep the order of the input files (it
    decides ties).  ``images`` and ``classes`` list the evaluated ids, sorted;
    ``class_names`` maps a class id to its name.
    """

    images: np.ndarray
    classes: np.ndarray
    gt_image: np.ndarray
    gt_class: np.ndarray
    gt_box: np.ndarray
    gt_area: np.ndarray
    gt_crowd: np.ndarray
    gt_ignore: np.ndarray
    dt_image: np.ndarray
    dt_class: np.ndarray
    dt_box: np.ndarray
    dt_score: np.ndarray
    class_names: dict[Any, str] = field(default_factory=dict)
    dt_area: np.ndarray | None = None  # area for the area ranges (default w * h)
    gt_segm: list[Any] | None = None  # COCO segmentations, for iou_type="segm"
    dt_segm: list[Any] | None = None
    image_hw: dict[Any, tuple[int, int]] | None = None
    _xyxy: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)  # boxes as read (VOC, text)


def _load_json(obj: Any, what: str) -> Any:
    if isinstance(obj, (str, os.PathLike)):
        try:
            with open(obj, encoding="utf-8") as fh:
                return json.load(fh)
        except OSError as exc:
            raise ValueError(f"{what} {os.fspath(obj)!r}: cannot read: {exc.strerror or exc}") from None
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{what} {os.fspath(obj)!r}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
            ) from None
    return obj


def _boxes(records: list[dict[str, Any]], what: str) -> np.ndarray:
    boxes = np.zeros((len(records), 4))
    for i, r in enumerate(records):
        b = r.get("bbox")
        if not isinstance(b, (list, tuple)) or len(b) != 4 or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in b):
            raise ValueError(f"{what} {i}: 'bbox' must be [x, y, w, h] (numbers); got {b!r}")
        boxes[i] = b
    if not np.isfinite(boxes).all():
        i = int(np.flatnonzero(~np.isfinite(boxes).all(axis=1))[0])
        raise ValueError(f"{what} {i}: 'bbox' must be finite; got {records[i]['bbox']!r}")
    return boxes


def load_coco(gt: Any, results: Any) -> DetectionSet:
    """Read COCO ground truth and bbox results (paths, or already-parsed JSON).

    ``results`` is the COCO results format: a list of ``{"image_id",
    "category_id", "bbox", "score"}``, or a dict with an ``"annotations"`` list.
    Every result must name an image of the ground truth (as pycocotools
    requires); results of classes the ground truth does not have are kept but
    not evaluated.  Errors name the file (when given a path) and the record.
    """
    try:
        return _load_coco(gt, results)
    except ValueError as exc:
        message = str(exc)
        for source, prefix in ((gt, "ground truth"), (results, "results")):
            if isinstance(source, (str, os.PathLike)) and message.startswith(prefix + " ") and \
                    os.fspath(source) not in message:
                message = f"{os.fspath(source)}: {message}"
        raise ValueError(message) from None


def _load_coco(gt: Any, results: Any) -> DetectionSet:
    g = _load_json(gt, "ground truth")
    r = _load_json(results, "results")
    if not isinstance(g, dict) or "annotations" not in g or "images" not in g:
        raise ValueError("ground truth: a COCO dataset needs 'images' and 'annotations' lists")
    if isinstance(r, dict):
        r = r.get("annotations", None)
    if not isinstance(r, list):
        raise ValueError("results: a COCO results file is a list of detections (or a dict with 'annotations')")
    images = np.array(sorted({img["id"] for img in g["images"]}))
    categories = g.get("categories") or []
    classes = np.array(sorted({c["id"] for c in categories}))
    names = {c["id"]: str(c.get("name", c["id"])) for c in categories}
    anns = g["annotations"]
    for i, a in enumerate(anns):
        for key in ("image_id", "category_id", "bbox"):
            if key not in a:
                raise ValueError(f"ground truth annotation {i}: no {key!r}")
    gt_box = _boxes(anns, "ground truth annotation")
    gt_area = np.array([float(a["area"]) if "area" in a else float(b[2] * b[3]) for a, b in zip(anns, gt_box)])
    gt_crowd = np.array([bool(a.get("iscrowd", 0)) for a in anns], dtype=bool)
    gt_ignore = np.array([bool(a.get("ignore", 0)) for a in anns], dtype=bool)
    image_set = set(images.tolist())
    image_hw = {img["id"]: (int(img.get("height", 0)), int(img.get("width", 0))) for img in g["images"]}
    # pycocotools' loadRes: box results if the first has a box, else segmentation results
    # (area = mask area, box = the mask's extent when absent)
    segm_results = bool(r) and not (r[0].get("bbox") not in (None, []))
    for i, d in enumerate(r):
        for key in ("image_id", "category_id", "segmentation" if segm_results else "bbox", "score"):
            if key not in d:
                raise ValueError(f"results detection {i}: no {key!r}")
        if d["image_id"] not in image_set:
            raise ValueError(
                f"results detection {i}: image_id {d['image_id']!r} is not an image of the ground truth"
            )
    dt_area = None
    if segm_results:
        from ._masks import mask_area, mask_bbox, to_mask

        r = list(r)  # boxes are added to copies: the caller's records stay as they were
        dt_area = np.zeros(len(r))
        for i, d in enumerate(r):
            h, w = image_hw[d["image_id"]]
            try:
                mask = to_mask(d["segmentation"], h, w)
            except ValueError as exc:
                raise ValueError(f"results detection {i}: 'segmentation': {exc}") from None
            dt_area[i] = mask_area(mask)
            if "bbox" not in d:
                d = r[i] = dict(d, bbox=mask_bbox(mask, h, w))
    dt_box = _boxes(r, "results detection")
    dt_score = np.zeros(len(r))
    for i, d in enumerate(r):
        if isinstance(d["score"], bool) or not isinstance(d["score"], (int, float)):
            raise ValueError(f"results detection {i}: 'score' must be a number; got {d['score']!r}")
        dt_score[i] = d["score"]
    if not np.isfinite(dt_score).all():
        i = int(np.flatnonzero(~np.isfinite(dt_score))[0])
        raise ValueError(f"results detection {i}: 'score' must be finite; got {r[i]['score']!r}")
    return DetectionSet(
        images=images, classes=classes,
        gt_image=np.array([a["image_id"] for a in anns]), gt_class=np.array([a["category_id"] for a in anns]),
        gt_box=gt_box, gt_area=gt_area, gt_crowd=gt_crowd, gt_ignore=gt_ignore,
        dt_image=np.array([d["image_id"] for d in r]), dt_class=np.array([d["category_id"] for d in r]),
        dt_box=dt_box, dt_score=dt_score, class_names=names, dt_area=dt_area,
        gt_segm=[a.get("segmentation") for a in anns],
        dt_segm=[d.get("segmentation") for d in r], image_hw=image_hw,
    )


# ---------------------------------------------------------------------------
# matching
def _iou(dt: np.ndarray, gt: np.ndarray, crowd: np.ndarray) -> np.ndarray:
    """IoU of boxes (..., D, 4) x (..., G, 4) -> (..., D, G), as pycocotools' ``bbIou``:
    for crowd ground truths the intersection over the detection's area."""
    dx, dy, dw, dh = (dt[..., :, None, i] for i in range(4))
    gx, gy, gw, gh = (gt[..., None, :, i] for i in range(4))
    w = np.minimum(dx + dw, gx + gw) - np.maximum(dx, gx)
    h = np.minimum(dy + dh, gy + gh) - np.maximum(dy, gy)
    inter = np.where((w > 0) & (h > 0), w * h, 0.0)
    da, ga = dw * dh, gw * gh
    union = np.where(crowd[..., None, :], da, da + ga - inter)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(inter > 0, inter / union, 0.0)
    return out


@dataclass
class _Groups:
    """(image, class) groups padded to D detections and G ground truths."""

    image: np.ndarray  # (B,) index into images
    cls: np.ndarray  # (B,) index into classes
    dt_rows: np.ndarray  # (B, D) detection row (-1 padding), by decreasing score (stable)
    gt_rows: np.ndarray  # (B, G) ground-truth row (-1 padding), input order


def _groups(data: DetectionSet, max_det: int, ties: str) -> list[_Groups]:
    """Group detections and ground truths by (image, class), in buckets of similar size."""
    img_index = {v: i for i, v in enumerate(data.images.tolist())}
    cls_index = {v: i for i, v in enumerate(data.classes.tolist())}
    gt_keep = np.array([c in cls_index and m in img_index for c, m in zip(data.gt_class.tolist(), data.gt_image.tolist())], dtype=bool)
    dt_keep = np.array([c in cls_index for c in data.dt_class.tolist()], dtype=bool)
    K = len(cls_index)
    gt_rows = np.flatnonzero(gt_keep)
    dt_rows = np.flatnonzero(dt_keep)
    gt_key = np.array([img_index[m] * K + cls_index[c] for m, c in zip(data.gt_image[gt_rows].tolist(), data.gt_class[gt_rows].tolist())], dtype=np.int64)
    dt_key = np.array([img_index[m] * K + cls_index[c] for m, c in zip(data.dt_image[dt_rows].tolist(), data.dt_class[dt_rows].tolist())], dtype=np.int64)
    # detections: by group, then decreasing score, stable; ground truths: by group, input order
    if ties == "stable":
        tie_break: tuple[np.ndarray, ...] = (np.arange(dt_rows.size),)
    else:  # equal scores in box order: the result does not depend on the input order
        tie_break = tuple(data.dt_box[dt_rows, i] for i in (3, 2, 1, 0))
    dt_order = np.lexsort((*tie_break, -data.dt_score[dt_rows], dt_key))
    dt_rows, dt_key = dt_rows[dt_order], dt_key[dt_order]
    gt_order = np.argsort(gt_key, kind="stable")
    gt_rows, gt_key = gt_rows[gt_order], gt_key[gt_order]
    keys = np.union1d(gt_key, dt_key)
    d_lo, d_hi = np.searchsorted(dt_key, keys, "left"), np.searchsorted(dt_key, keys, "right")
    g_lo, g_hi = np.searchsorted(gt_key, keys, "left"), np.searchsorted(gt_key, keys, "right")
    n_dt = np.minimum(d_hi - d_lo, max_det)
    n_gt = g_hi - g_lo
    out = []
    size = np.maximum(n_dt, 1) * np.maximum(n_gt, 1)
    bucket = np.ceil(np.log2(size)).astype(int)
    for b in np.unique(bucket):
        sel = np.flatnonzero(bucket == b)
        D, G = max(int(n_dt[sel].max()), 1), max(int(n_gt[sel].max()), 1)
        dr = np.full((sel.size, D), -1, dtype=np.int64)
        gr = np.full((sel.size, G), -1, dtype=np.int64)
        for j, s in enumerate(sel):
            dr[j, : n_dt[s]] = dt_rows[d_lo[s] : d_lo[s] + n_dt[s]]
            gr[j, : n_gt[s]] = gt_rows[g_lo[s] : g_hi[s]]
        out.append(_Groups(keys[sel] // K, keys[sel] % K, dr, gr))
    return out


@dataclass
class _Matched:
    """For every evaluated detection (one row each), per area range and IoU threshold."""

    image: np.ndarray  # (N,) image index
    cls: np.ndarray  # (N,) class index
    rank: np.ndarray  # (N,) rank of the detection in its (image, class) group
    score: np.ndarray  # (N,)
    tp: np.ndarray  # (A, T, N) bool: matched to a non-ignored ground truth
    ignored: np.ndarray  # (A, T, N) bool
    n_gt: np.ndarray  # (A, K) non-ignored ground truths per class


def _mask_source(data: DetectionSet) -> Any:
    """``get(kind, row)``: the decoded mask of a ground truth or detection (cached)."""
    from ._masks import to_mask

    cache: dict[tuple[str, int], np.ndarray] = {}

    def get(kind: str, row: int) -> np.ndarray:
        key = (kind, row)
        if key not in cache:
            segms, images = (data.gt_segm, data.gt_image) if kind == "gt" else (data.dt_segm, data.dt_image)
            h, w = data.image_hw[images[row]]  # type: ignore[index]
            seg = segms[row]  # type: ignore[index]
            if seg is None:
                what = "ground truth annotation" if kind == "gt" else "results detection"
                raise ValueError(f"{what} {row}: no 'segmentation' (iou_type='segm' needs one for every record)")
            try:
                cache[key] = to_mask(seg, h, w)
            except ValueError as exc:
                raise ValueError(f"{kind} {row}: 'segmentation': {exc}") from None
        return cache[key]

    return get


def _match(
    data: DetectionSet, thresholds: np.ndarray, area_ranges: list[tuple[float, float]], max_det: int, ties: str,
    progress: Any = None, iou_type: str = "bbox",
) -> _Matched:
    T, A, K = thresholds.size, len(area_ranges), data.classes.size
    thr = np.minimum(thresholds, 1 - 1e-10)
    masks = _mask_source(data) if iou_type == "segm" else None
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("image", "cls", "rank", "score", "tp", "ignored")}
    n_gt = np.zeros((A, K), dtype=np.int64)
    dt_area = data.dt_area if data.dt_area is not None else data.dt_box[:, 2] * data.dt_box[:, 3]
    groups = _groups(data, max_det, ties)
    total = sum(g.dt_rows.size for g in groups) or 1
    done = 0
    for grp in groups:
        done += grp.dt_rows.size
        if progress is not None:
            progress(0.8 * done / total)
        B, D = grp.dt_rows.shape
        G = grp.gt_rows.shape[1]
        dvalid, gvalid = grp.dt_rows >= 0, grp.gt_rows >= 0
        drow, grow = np.where(dvalid, grp.dt_rows, 0), np.where(gvalid, grp.gt_rows, 0)
        crowd = data.gt_crowd[grow] & gvalid
        if masks is None:
            ious = _iou(data.dt_box[drow], data.gt_box[grow], crowd)  # (B, D, G)
        else:
            ious = np.zeros((B, D, G))
            for b in range(B):
                d_ok, g_ok = grp.dt_rows[b][dvalid[b]], grp.gt_rows[b][gvalid[b]]
                ious[b, : d_ok.size, : g_ok.size] = mask_iou(
                    [masks("dt", r) for r in d_ok.tolist()], [masks("gt", r) for r in g_ok.tolist()],
                    data.gt_crowd[g_ok])
        ious[~(dvalid[:, :, None] & gvalid[:, None, :])] = -1.0
        tp = np.zeros((A, T, B, D), dtype=bool)
        ignored = np.zeros((A, T, B, D), dtype=bool)
        for a, (lo, hi) in enumerate(area_ranges):
            area = data.gt_area[grow]
            gt_ig = data.gt_ignore[grow] | data.gt_crowd[grow] | (area < lo) | (area > hi)
            gt_ig &= gvalid
            np.add.at(n_gt[a], grp.cls, (gvalid & ~gt_ig).sum(axis=1))
            taken = np.zeros((B, T, G), dtype=bool)
            reusable = crowd[:, None, :]
            for d in range(D):
                iou_d = ious[:, d, None, :]  # (B, 1, G)
                ok = (~taken | reusable) & (iou_d >= thr[None, :, None])  # (B, T, G)
                best = np.full((B, T), -1, dtype=np.int64)
                for group_ig in (False, True):  # non-ignored ground truths first
                    cand = ok & (gt_ig[:, None, :] == group_ig)
                    value = np.where(cand, iou_d, -np.inf)
                    last = G - 1 - np.argmax(value[..., ::-1], axis=-1)  # last index of the maximum
                    found = cand.any(axis=-1) & (best < 0)
                    best = np.where(found, last, best)
                matched = best >= 0
                b_idx, t_idx = np.nonzero(matched)
                taken[b_idx, t_idx, best[b_idx, t_idx]] = True
                m_ig = np.zeros((B, T), dtype=bool)
                m_ig[b_idx, t_idx] = gt_ig[b_idx, best[b_idx, t_idx]]
                tp[a, :, :, d] = (matched & ~m_ig).T
                outside = (dt_area[drow[:, d]] < lo) | (dt_area[drow[:, d]] > hi)
                ignored[a, :, :, d] = (m_ig | (~matched & outside[:, None])).T
        sel = dvalid.ravel()
        parts["image"].append(np.repeat(grp.image, D)[sel])
        parts["cls"].append(np.repeat(grp.cls, D)[sel])
        parts["rank"].append(np.tile(np.arange(D), B)[sel])
        parts["score"].append(data.dt_score[drow].ravel()[sel])
        parts["tp"].append(tp.reshape(A, T, B * D)[:, :, sel])
        parts["ignored"].append(ignored.reshape(A, T, B * D)[:, :, sel])
    cat = {k: np.concatenate(v, axis=-1) if v else np.zeros((A, T, 0) if k in ("tp", "ignored") else 0) for k, v in parts.items()}
    return _Matched(cat["image"], cat["cls"], cat["rank"], cat["score"], cat["tp"].astype(bool),
                    cat["ignored"].astype(bool), n_gt)


# ---------------------------------------------------------------------------
# accumulation and summary
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
        Per class: id, name, AP, AP50, AP75 (all areas, max_dets[-1]), the
        number of non-ignored ground truths and of detections.
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

    def mean_average_precision(self, method: str = "voc2010", *, iou_threshold: float = 0.5, area: str = "all") -> float:
        """mAP at one IoU threshold by any AP convention (:data:`precall.AP_METHODS`): the mean
        over classes with ground truth of :meth:`threshold_table` ``.average_precision(method)``
        (0 for a class whose detections are all ignored or absent)."""
        values = []
        for cid, (_, _, _, n_gt) in self._ranked.items():
            a = list(self.area_ranges).index(area) if area in self.area_ranges else None
            if a is None:
                raise ValueError(f"`area` must be one of {list(self.area_ranges)}; got {area!r}")
            if n_gt[a] == 0:
                continue
            try:
                table = self.threshold_table(cid, iou_threshold=iou_threshold, area=area)
            except ValueError as exc:
                if "no counted detection" not in str(exc):
                    raise
                values.append(0.0)
                continue
            values.append(table.average_precision(method=method))
        return float(np.mean(values)) if values else float("nan")

    def threshold_table(self, class_id: Any, *, iou_threshold: float = 0.5, area: str = "all") -> ThresholdTable:
        """The count table of one class at one IoU threshold and area range (``max_dets[-1]``
        detections per image): detections ranked by score, ``n_pos`` the non-ignored ground
        truths.  Plot it with ``.plot("pr")``; its ``average_precision(method="coco")`` is
        the mean of this class's row of :attr:`precision`."""
        if class_id not in self._ranked:
            raise ValueError(f"`class_id` {class_id!r} is not an evaluated class; the classes are "
                             f"{list(self._ranked)}")
        t = np.flatnonzero(np.isclose(self.iou_thresholds, iou_threshold))
        if t.size == 0:
            raise ValueError(f"`iou_threshold` {iou_threshold!r} is not one of {self.iou_thresholds.tolist()}")
        if area not in self.area_ranges:
            raise ValueError(f"`area` must be one of {list(self.area_ranges)}; got {area!r}")
        a = list(self.area_ranges).index(area)
        score, tp, ignored, n_gt = self._ranked[class_id]
        counted = ~ignored[a, t[0]]
        is_tp = tp[a, t[0]][counted]
        if not counted.any():
            raise ValueError(f"class {class_id!r} has no counted detection at IoU {iou_threshold} ({area})")
        return ThresholdTable(thresholds=score[counted], tp=np.cumsum(is_tp), fp=np.cumsum(~is_tp),
                              n_pos=max(int(n_gt[a]), int(is_tp.sum())), n_neg=float((~is_tp).sum()),
                              ties="stable")

    STAT_NAMES = (
        "AP", "AP50", "AP75", "AP_small", "AP_medium", "AP_large",
        "AR_max1", "AR_max10", "AR_max100", "AR_small", "AR_medium", "AR_large",
    )

    def to_text(self) -> str:
        """pycocotools-style summary lines."""
        m = self.max_dets
        rows = [
            (1, "0.50:0.95", "all", m[-1]), (1, "0.50", "all", m[-1]), (1, "0.75", "all", m[-1]),
            (1, "0.50:0.95", "small", m[-1]), (1, "0.50:0.95", "medium", m[-1]), (1, "0.50:0.95", "large", m[-1]),
            (0, "0.50:0.95", "all", m[0]), (0, "0.50:0.95", "all", m[1] if len(m) > 1 else m[0]),
            (0, "0.50:0.95", "all", m[-1]), (0, "0.50:0.95", "small", m[-1]),
            (0, "0.50:0.95", "medium", m[-1]), (0, "0.50:0.95", "large", m[-1]),
        ]
        lines = []
        for (ap, iou, area, md), value in zip(rows, self.stats):
            title = "Average Precision" if ap else "Average Recall"
            kind = "(AP)" if ap else "(AR)"
            lines.append(f" {title:<18} {kind} @[ IoU={iou:<9} | area={area:>6s} | maxDets={md:>3d} ] = {value:0.3f}")
        return "\n".join(lines)


def _interpolated(
    tp: np.ndarray, ignored: np.ndarray, score: np.ndarray, n_pos: int, ties: str, rec_thresholds: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(T, 101) interpolated precision and (T,) recall of one class: each IoU
    threshold is a row of per-detection counts (an ignored detection counts
    neither as TP nor FP), the coco convention on all rows at once."""
    pos = (tp & ~ignored).astype(np.float64)
    neg = (~tp & ~ignored).astype(np.float64)
    if score.size and ties == "group":  # equal scores: one run
        starts = np.flatnonzero(np.r_[True, score[1:] != score[:-1]])
        pos, neg = np.add.reduceat(pos, starts, axis=1), np.add.reduceat(neg, starts, axis=1)
    if pos.shape[1] == 0:
        return np.zeros((tp.shape[0], rec_thresholds.size)), np.zeros(tp.shape[0])
    steps = steps_from_counts(pos, neg, np.full(pos.shape[0], float(n_pos)))
    return row_coco_precision(steps, thresholds=rec_thresholds), steps.tp[:, -1] / n_pos


def _mean_valid(values: np.ndarray) -> float:
    valid = values[values > -1]
    return float(np.mean(valid)) if valid.size else -1.0


def evaluate_coco(
    data: DetectionSet,
    *,
    iou_thresholds: Any = None,
    recall_thresholds: Any = None,
    max_dets: tuple[int, ...] = (1, 10, 100),
    iou_type: str = "bbox",
    area_ranges: dict[str, tuple[float, float]] | None = None,
    ties: str = "stable",
    progress: Any = None,
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
    max_dets : tuple of int, default=(1, 10, 100)
        Detections per image and class kept; ascending.
    iou_type : {"bbox", "segm"}, default="bbox"
        Box IoU, or mask IoU of the COCO segmentations (polygons and run-length
        counts decoded as pycocotools does; a detection's area is then its mask
        area).  Keypoints are not implemented.
    area_ranges : dict of name to (low, high), default=None
        Default all / small / medium / large (pycocotools' ranges).  The
        summary needs the names ``all``, ``small``, ``medium``, ``large``.
    ties : {"stable", "group"}, default="stable"
        ``"stable"``: pycocotools' order; ``"group"``: equal scores are one step.
    progress : callable, default=None
        Called with the fraction done (0 to 1) as the evaluation proceeds.

    Returns
    -------
    CocoEvaluation
    """
    if ties not in ("stable", "group"):
        raise ValueError(f"`ties` must be 'stable' or 'group'; got {ties!r}")
    if iou_type not in ("bbox", "segm"):
        raise ValueError(f"`iou_type` must be 'bbox' or 'segm' (keypoints are not implemented); got {iou_type!r}")
    if iou_type == "segm" and (data.gt_segm is None or data.dt_segm is None or data.image_hw is None):
        raise ValueError("iou_type='segm' needs segmentations: load the data with load_coco")
    thresholds = IOU_THRESHOLDS if iou_thresholds is None else np.asarray(iou_thresholds, dtype=np.float64)
    if thresholds.ndim != 1 or thresholds.size == 0 or ((thresholds < 0) | (thresholds > 1)).any():
        raise ValueError(f"`iou_thresholds` must be a non-empty 1-D array in [0, 1]; got {iou_thresholds!r}")
    max_dets = tuple(int(m) for m in max_dets)
    if not max_dets or any(m < 1 for m in max_dets) or list(max_dets) != sorted(max_dets):
        raise ValueError(f"`max_dets` must be increasing positive integers; got {max_dets!r}")
    ranges = dict(AREA_RANGES if area_ranges is None else area_ranges)
    range_list = list(ranges.values())
    matched = _match(data, thresholds, range_list, max_dets[-1], ties, progress, iou_type)
    T, A, M, K = thresholds.size, len(range_list), len(max_dets), data.classes.size
    if recall_thresholds is None:
        recall_thresholds = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)
    recall_thresholds = np.asarray(recall_thresholds, dtype=np.float64)
    if recall_thresholds.ndim != 1 or recall_thresholds.size == 0 or (np.diff(recall_thresholds) <= 0).any():
        raise ValueError("`recall_thresholds` must be a non-empty increasing 1-D array, e.g. np.linspace(0, 1, 101)")
    R = recall_thresholds.size
    precision = -np.ones((T, R, K, A, M))
    recall = -np.ones((T, K, A, M))
    # merged order: decreasing score, stable by image then rank (pycocotools' concatenation)
    order = np.lexsort((matched.rank, matched.image, -matched.score, matched.cls))
    bounds = np.searchsorted(matched.cls[order], np.arange(K + 1))
    ranked: dict[Any, tuple[np.ndarray, ...]] = {}
    for k in range(K):
        if progress is not None:
            progress(0.8 + 0.2 * k / max(K, 1))
        rows = order[bounds[k] : bounds[k + 1]]
        for a in range(A):
            npig = int(matched.n_gt[a, k])
            if npig == 0:
                continue
            for m, md in enumerate(max_dets):
                kept = rows[matched.rank[rows] < md]
                if m == M - 1 and a == 0:
                    ranked[data.classes[k].item()] = (
                        matched.score[kept], matched.tp[:, :, kept], matched.ignored[:, :, kept], matched.n_gt[:, k])
                precision[:, :, k, a, m], recall[:, k, a, m] = _interpolated(
                    matched.tp[a][:, kept], matched.ignored[a][:, kept], matched.score[kept], npig, ties,
                    recall_thresholds,
                )
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
        return _mean_valid(s)

    md = max_dets
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
    for k, cid in enumerate(data.classes.tolist()):
        p = precision[:, :, k, 0, M - 1]
        per_class.append({
            "id": cid, "name": data.class_names.get(cid, str(cid)),
            "AP": _mean_valid(p),
            "AP50": _mean_valid(p[np.isclose(thresholds, 0.5)]) if np.isclose(thresholds, 0.5).any() else -1.0,
            "AP75": _mean_valid(p[np.isclose(thresholds, 0.75)]) if np.isclose(thresholds, 0.75).any() else -1.0,
            "n_gt": int(matched.n_gt[0, k]), "n_det": int(counts[k]),
        })
    return CocoEvaluation(stats, precision, recall, per_class, thresholds, recall_thresholds, max_dets, ranges, ranked)


# ---------------------------------------------------------------------------
# PASCAL VOC protocol and the text / VOC XML loaders
BOX_FORMATS = ("xyxy", "xywh", "cxcywh")


def _to_xyxy(boxes: np.ndarray, box_format: str) -> np.ndarray:
    if box_format == "xyxy":
        return boxes.copy()
    if box_format == "xywh":
        return np.column_stack([boxes[:, 0], boxes[:, 1], boxes[:, 0] + boxes[:, 2], boxes[:, 1] + boxes[:, 3]])
    cx, cy, w, h = boxes.T
    return np.column_stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])


def _xyxy_to_xywh(b: np.ndarray) -> np.ndarray:
    return np.column_stack([b[:, 0], b[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]])


def _parse_lines(path: str, fields: int, what: str) -> list[tuple[int, list[str]]]:
    """Non-blank lines of ``path`` split on white space, each with ``fields`` fields."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != fields:
                raise ValueError(f"{path}: line {line_no}: expected {fields} fields ({what}); got {len(parts)}")
            out.append((line_no, parts))
    return out


def _numbers(path: str, line_no: int, texts: list[str], names: str) -> list[float]:
    try:
        values = [float(t) for t in texts]
    except ValueError:
        raise ValueError(f"{path}: line {line_no}: {names} must be numbers; got {' '.join(texts)!r}") from None
    if not all(np.isfinite(values)):
        raise ValueError(f"{path}: line {line_no}: {names} must be finite; got {' '.join(texts)!r}")
    return values


def _text_files(folder: str, what: str) -> list[str]:
    if not os.path.isdir(folder):
        raise ValueError(f"{what} {folder!r}: not a directory")
    return sorted(f for f in os.listdir(folder) if f.endswith(".txt"))


def _assemble(gts: list[tuple], dts: list[tuple], images: list[str], box_format: str) -> DetectionSet:
    """DetectionSet from (image, class, xyxy box, difficult) and (image, class, xyxy box, score) rows."""
    classes = sorted({g[1] for g in gts} | {d[1] for d in dts})
    gt_box = _xyxy_to_xywh(np.array([g[2] for g in gts], dtype=np.float64).reshape(-1, 4))
    dt_box = _xyxy_to_xywh(np.array([d[2] for d in dts], dtype=np.float64).reshape(-1, 4))
    return DetectionSet(
        images=np.array(sorted(set(images)), dtype=object), classes=np.array(classes, dtype=object),
        gt_image=np.array([g[0] for g in gts], dtype=object), gt_class=np.array([g[1] for g in gts], dtype=object),
        gt_box=gt_box, gt_area=gt_box[:, 2] * gt_box[:, 3], gt_crowd=np.zeros(len(gts), dtype=bool),
        gt_ignore=np.array([g[3] for g in gts], dtype=bool),
        dt_image=np.array([d[0] for d in dts], dtype=object), dt_class=np.array([d[1] for d in dts], dtype=object),
        dt_box=dt_box, dt_score=np.array([d[3] for d in dts], dtype=np.float64),
        class_names={c: str(c) for c in classes},
        # the corners as read: x + w need not give x2 back to the last bit
        _xyxy=(np.array([g[2] for g in gts], dtype=np.float64).reshape(-1, 4),
               np.array([d[2] for d in dts], dtype=np.float64).reshape(-1, 4)),
    )


def load_text(
    gt_dir: str,
    det_dir: str,
    *,
    box_format: str = "xywh",
    relative: bool = False,
    image_sizes: dict[str, tuple[float, float]] | None = None,
) -> DetectionSet:
    """Per-image text files: ground truths ``class x y w h`` (an optional sixth field
    ``difficult``), detections ``class score x y w h``; the image is the file name
    without ``.txt``.  ``box_format`` reads the four numbers as ``xywh``, ``xyxy``
    or ``cxcywh``; ``relative=True`` scales them by ``image_sizes[image] = (width,
    height)`` (YOLO-style files).  A malformed line raises ``ValueError`` naming the
    file and the line."""
    if box_format not in BOX_FORMATS:
        raise ValueError(f"`box_format` must be one of {BOX_FORMATS}; got {box_format!r}")
    if relative and image_sizes is None:
        raise ValueError("`relative=True` needs `image_sizes`: {image: (width, height)}")
    gts: list[tuple] = []
    dts: list[tuple] = []
    images: list[str] = []

    def box(path: str, image: str, line_no: int, texts: list[str]) -> list[float]:
        b = np.array(_numbers(path, line_no, texts, "the box coordinates"))
        if relative:
            if image not in image_sizes:  # type: ignore[operator]
                raise ValueError(f"{path}: image {image!r} has no entry in `image_sizes`")
            w, h = image_sizes[image]  # type: ignore[index]
            b = b * [w, h, w, h]
        return _to_xyxy(b[None, :], box_format)[0].tolist()

    for name in _text_files(gt_dir, "gt_dir"):
        path, image = os.path.join(gt_dir, name), name[:-4]
        images.append(image)
        with open(path, encoding="utf-8") as fh:
            lines = [(i, ln.split()) for i, ln in enumerate(fh, 1) if ln.split()]
        for line_no, parts in lines:
            if len(parts) not in (5, 6):
                raise ValueError(f"{path}: line {line_no}: expected 'class x y w h [difficult]'; got {len(parts)} fields")
            difficult = len(parts) == 6 and parts[5] not in ("0", "false", "False")
            gts.append((image, parts[0], box(path, image, line_no, parts[1:5]), difficult))
    for name in _text_files(det_dir, "det_dir"):
        path, image = os.path.join(det_dir, name), name[:-4]
        images.append(image)
        for line_no, parts in _parse_lines(path, 6, "class score x y w h"):
            score = _numbers(path, line_no, parts[1:2], "the score")[0]
            dts.append((image, parts[0], box(path, image, line_no, parts[2:6]), score))
    return _assemble(gts, dts, images, box_format)


def load_voc(annotations_dir: str, detections: str, *, box_format: str = "xyxy") -> DetectionSet:
    """PASCAL VOC XML annotations (``difficult`` honoured) and detections.

    ``detections`` is either a Detectron-style per-class file pattern containing
    ``{}`` (formatted with each class name; lines ``image_id score x1 y1 x2 y2``),
    or a directory of per-image text files ``class score x y w h`` read in
    ``box_format``.  The image is the XML file name without ``.xml``.
    """
    import xml.etree.ElementTree as ET

    if not os.path.isdir(annotations_dir):
        raise ValueError(f"annotations_dir {annotations_dir!r}: not a directory")
    gts: list[tuple] = []
    images: list[str] = []
    for name in sorted(f for f in os.listdir(annotations_dir) if f.endswith(".xml")):
        path, image = os.path.join(annotations_dir, name), name[:-4]
        images.append(image)
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as exc:
            raise ValueError(f"{path}: line {exc.position[0]}: malformed XML: {exc}") from None
        for obj in root.iter("object"):
            cls = (obj.findtext("name") or "").strip()
            bb = obj.find("bndbox")
            if not cls or bb is None:
                raise ValueError(f"{path}: an <object> without <name> or <bndbox>")
            texts = [(bb.findtext(k) or "").strip() for k in ("xmin", "ymin", "xmax", "ymax")]
            coords = _numbers(path, 0, texts, "the <bndbox> coordinates")
            difficult = (obj.findtext("difficult") or "0").strip() == "1"
            gts.append((image, cls, coords, difficult))
    dts: list[tuple] = []
    if "{}" in detections:
        for cls in sorted({g[1] for g in gts}):
            path = detections.format(cls)
            if not os.path.exists(path):
                continue
            for line_no, parts in _parse_lines(path, 6, "image_id score x1 y1 x2 y2"):
                values = _numbers(path, line_no, parts[1:], "the score and box")
                dts.append((parts[0], cls, values[1:], values[0]))
    else:
        if box_format not in BOX_FORMATS:
            raise ValueError(f"`box_format` must be one of {BOX_FORMATS}; got {box_format!r}")
        for name in _text_files(detections, "detections"):
            path, image = os.path.join(detections, name), name[:-4]
            for line_no, parts in _parse_lines(path, 6, "class score x y w h"):
                values = _numbers(path, line_no, parts[1:], "the score and box")
                dts.append((image, parts[0], _to_xyxy(np.array([values[1:]]), box_format)[0].tolist(), values[0]))
    known = set(images)
    for d in dts:
        if d[0] not in known:
            raise ValueError(f"detection on image {d[0]!r}, which has no annotation file in {annotations_dir!r}")
    return _assemble(gts, dts, images, box_format)


@dataclass(frozen=True)
class VocEvaluation:
    """PASCAL VOC results: AP per class (classes without ground truth left out) and their mean.

    ``tables[class]`` is the class's count table (plot it, or take any other AP
    convention from it).
    """

    ap: dict[Any, float]
    map: float
    method: str
    iou_threshold: float
    tables: dict[Any, ThresholdTable] = field(repr=False)
    n_gt: dict[Any, int] = field(default_factory=dict)

    def to_text(self) -> str:
        width = max([len("class")] + [len(str(c)) for c in self.ap])
        lines = [f"{'class'.ljust(width)}  AP ({self.method}, IoU threshold {self.iou_threshold:g})"]
        lines += [f"{str(c).ljust(width)}  {v:.6f}" for c, v in self.ap.items()]
        lines.append(f"{'mAP'.ljust(width)}  {self.map:.6f}")
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
    """
    from .scores import AP_METHODS

    if method not in AP_METHODS:
        raise ValueError(f"`method` must be one of {AP_METHODS}; got {method!r}")
    if ties not in ("stable", "group"):
        raise ValueError(f"`ties` must be 'stable' or 'group'; got {ties!r}")
    gt_xyxy, dt_xyxy = _xyxy_boxes(data)
    ap: dict[Any, float] = {}
    tables: dict[Any, ThresholdTable] = {}
    n_gt: dict[Any, int] = {}
    for cls in data.classes.tolist():
        g_rows = np.flatnonzero(data.gt_class == cls)
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
        if scores.size == 0:
            ap[cls] = 0.0
            continue
        table = ThresholdTable(thresholds=scores, tp=np.cumsum(is_tp), fp=np.cumsum(~is_tp), n_pos=n_pos,
                               n_neg=float((~is_tp).sum()), ties="stable")
        if ties == "group":
            table = table.grouped()
        tables[cls] = table
        ap[cls] = table.average_precision(method=method)
    mean = float(np.mean(list(ap.values()))) if ap else float("nan")
    return VocEvaluation(ap, mean, method, float(iou_threshold), tables, n_gt)
