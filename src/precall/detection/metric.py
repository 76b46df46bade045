"""A training-loop API: :class:`MeanAveragePrecision`, fed per batch, computed once per epoch.

The shape of torchmetrics' ``MeanAveragePrecision`` (``update(preds, targets)``
with one dict of arrays per image), on precall's COCO evaluation: ``compute()``
returns the same :class:`~precall.detection.CocoEvaluation` as
:func:`~precall.detection.evaluate_coco` on the equivalent COCO files.  Inputs
are anything ``numpy.asarray`` accepts, so CPU torch tensors work without
precall importing torch (``.cpu()`` GPU tensors first).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .coco import CocoEvaluation, check_coco_options, evaluate_coco
from ._rle import decode_runs
from .io import BOX_FORMATS, DetectionSet

__all__ = ["MeanAveragePrecision"]


def _array(value: Any, what: str, dtype: Any = None) -> np.ndarray:
    try:
        out = np.asarray(value) if dtype is None else np.asarray(value, dtype=dtype)
    except (TypeError, ValueError, RuntimeError) as exc:  # RuntimeError: a torch tensor on a GPU
        raise TypeError(f"{what}: not convertible to a numpy array ({exc}); pass CPU arrays or tensors "
                        "(tensor.cpu())") from None
    return out


def _numbers(value: Any, what: str, n: int, rule: str) -> np.ndarray:
    """N real numbers (any real dtype, or an empty list) as float64."""
    arr = _array(value, what).reshape(-1)
    if arr.size and (arr.dtype.kind not in "biuf" or arr.dtype.kind == "b"):
        raise TypeError(f"{what}: must be N = {n} {rule}; got {arr.dtype} values")
    if arr.size != n:
        raise ValueError(f"{what}: must be N = {n} {rule}; got {arr.size}")
    return arr.astype(np.float64)


def _first_bad(values: np.ndarray, low: float = -np.inf) -> str:
    i = int(np.flatnonzero(~(np.isfinite(values) & (values >= low)))[0])
    return f"{float(values[i])!r} at position {i}"


def _crowd(value: Any, what: str, n: int) -> np.ndarray:
    """``iscrowd``: N values 0 or 1 (booleans or numbers); anything else (e.g. the string "0") is refused."""
    arr = _array(value, what).reshape(-1)
    if arr.size != n:
        raise ValueError(f"{what}: must be N = {n} values 0 or 1; got {arr.size}")
    if arr.size and (arr.dtype.kind not in "biuf" or not np.isin(arr, (0, 1)).all()):
        bad = 0 if arr.dtype.kind not in "biuf" else int(np.flatnonzero(~np.isin(arr, (0, 1)))[0])
        raise ValueError(f"{what}: must be N = {n} values 0 or 1 (or booleans); got {arr[bad].item()!r} at position "
                         f"{bad}")
    return arr.astype(bool)


def _to_xywh(boxes: np.ndarray, box_format: str) -> np.ndarray:
    """xywh in the boxes' own float precision (as torchmetrics' ``box_convert``), then float64."""
    b = boxes if boxes.dtype.kind == "f" else boxes.astype(np.float64)
    if box_format == "xywh":
        out = b
    elif box_format == "xyxy":
        out = np.stack([b[:, 0], b[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], axis=1)
    else:
        w, h = b[:, 2], b[:, 3]
        out = np.stack([b[:, 0] - w / 2, b[:, 1] - h / 2, w, h], axis=1)
    return out.astype(np.float64)


def _mask_counts(mask: np.ndarray) -> dict[str, Any]:
    """A boolean (H, W) mask as COCO's uncompressed counts (column-major runs, background first)."""
    h, w = mask.shape
    flat = mask.ravel(order="F").astype(bool)
    change = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    edges = np.r_[0, change, flat.size]
    counts = np.diff(edges).tolist()
    if flat.size and flat[0]:
        counts = [0] + counts
    return {"size": [int(h), int(w)], "counts": counts}


class MeanAveragePrecision:
    """COCO mAP accumulated over batches (the training-loop API).

    Parameters
    ----------
    box_format : {"xyxy", "xywh", "cxcywh"}, default="xyxy"
        How ``boxes`` are given (converted to COCO's ``[x, y, w, h]`` in their own
        float precision, as torchmetrics does).
    iou_type : {"bbox", "segm"}, default="bbox"
        ``"segm"`` needs ``masks`` in predictions and targets: boolean ``(N, H, W)``
        arrays (stored as run lengths at once) or a list of COCO RLE dicts.
    iou_thresholds, recall_thresholds, max_dets, area_ranges, ties, use_cats
        As :func:`~precall.detection.evaluate_coco` (default: pycocotools'
        thresholds).  torchmetrics passes its thresholds as float32 values
        (``torch.linspace(...).tolist()``), which moves its numbers by up to
        ~1e-3 from pycocotools'; passing those values (its ``iou_thresholds`` and
        ``rec_thresholds`` attributes) reproduces its numbers.

    Examples
    --------
    torchmetrics' documented example (its ``map`` is 0.6, ``map_50`` 1.0):

    >>> import numpy as np
    >>> from precall.detection import MeanAveragePrecision
    >>> metric = MeanAveragePrecision()
    >>> preds = [{"boxes": np.array([[258.0, 41.0, 606.0, 285.0]]), "scores": np.array([0.536]),
    ...           "labels": np.array([0])}]
    >>> targets = [{"boxes": np.array([[214.0, 41.0, 562.0, 285.0]]), "labels": np.array([0])}]
    >>> metric.update(preds, targets)
    >>> ev = metric.compute()
    >>> [round(float(v), 4) for v in ev.stats[:3]]
    [0.6, 1.0, 1.0]
    """

    def __init__(
        self,
        *,
        box_format: str = "xyxy",
        iou_type: str = "bbox",
        iou_thresholds: Any = None,
        recall_thresholds: Any = None,
        max_dets: tuple[int, ...] | None = None,
        area_ranges: dict[str, tuple[float, float]] | None = None,
        ties: str = "stable",
        use_cats: bool = True,
    ) -> None:
        if box_format not in BOX_FORMATS:
            raise ValueError(f"`box_format` must be one of {BOX_FORMATS}; got {box_format!r}")
        if iou_type not in ("bbox", "segm"):
            raise ValueError(f"`iou_type` must be 'bbox' or 'segm'; got {iou_type!r}")
        check_coco_options(iou_thresholds=iou_thresholds, recall_thresholds=recall_thresholds, max_dets=max_dets,
                           iou_type=iou_type, area_ranges=area_ranges, ties=ties, use_cats=use_cats)
        self.box_format, self.iou_type = box_format, iou_type
        self._options = {"iou_thresholds": iou_thresholds, "recall_thresholds": recall_thresholds, "max_dets": max_dets, "area_ranges": area_ranges,
                         "ties": ties, "use_cats": use_cats}
        self.reset()

    def reset(self) -> None:
        """Forget every image seen."""
        self._images: list[dict[str, Any]] = []

    def __len__(self) -> int:
        """The number of images seen."""
        return len(self._images)

    def _image(self, record: Any, i: int, kind: str) -> dict[str, Any]:
        what = f"{kind}[{i}]"
        if not isinstance(record, dict):
            raise TypeError(f"{what}: each image is a dict of arrays ('boxes', 'labels'"
                            f"{', scores' if kind == 'preds' else ''}); got {type(record).__name__}")
        for key in ("boxes", "labels") + (("scores",) if kind == "preds" else ()):
            if key not in record:
                raise ValueError(f"{what}: no {key!r}")
        boxes = _array(record["boxes"], f"{what}['boxes']")
        if boxes.size == 0:
            boxes = boxes.reshape(0, 4)
        if boxes.ndim != 2 or boxes.shape[1] != 4 or boxes.dtype.kind not in "fiu":
            raise ValueError(f"{what}['boxes']: must be numbers of shape (N, 4); got shape {boxes.shape} of {boxes.dtype}")
        n = boxes.shape[0]
        labels = _array(record["labels"], f"{what}['labels']").reshape(-1)
        if labels.size == 0:  # an empty image: [] reads as float64
            labels = labels.astype(np.int64)
        if labels.dtype.kind not in "iu" or labels.size != n:
            raise ValueError(f"{what}['labels']: must be N = {n} integers; got {labels.size} of {labels.dtype}")
        xywh = _to_xywh(boxes, self.box_format)
        if not np.isfinite(xywh).all():
            raise ValueError(f"{what}['boxes']: must be finite")
        bad = np.flatnonzero((xywh[:, 2] < 0) | (xywh[:, 3] < 0))
        if bad.size:
            raise ValueError(f"{what}['boxes'][{int(bad[0])}] = {boxes[bad[0]].tolist()} has a negative width or "
                             f"height in box_format={self.box_format!r}; is the box format right?")
        out: dict[str, Any] = {"box": xywh, "label": labels.astype(np.int64)}
        if kind == "preds":
            scores = _numbers(record["scores"], f"{what}['scores']", n, "finite numbers")
            if not np.isfinite(scores).all():
                raise ValueError(f"{what}['scores']: must be N = {n} finite numbers; got {_first_bad(scores)}")
            out["score"] = scores
        else:
            crowd = record.get("iscrowd")
            out["crowd"] = np.zeros(n, bool) if crowd is None else _crowd(crowd, f"{what}['iscrowd']", n)
            area = record.get("area")
            out["area"] = None
            if area is not None:
                out["area"] = _numbers(area, f"{what}['area']", n, "finite numbers >= 0")
                if not (np.isfinite(out["area"]) & (out["area"] >= 0)).all():
                    raise ValueError(f"{what}['area']: must be N = {n} finite numbers >= 0 (pixels); got "
                                     f"{_first_bad(out['area'], low=0)}")
        if self.iou_type == "segm":
            if "masks" not in record:
                raise ValueError(f"{what}: no 'masks' (iou_type='segm')")
            masks = record["masks"]
            if isinstance(masks, (list, tuple)) and all(isinstance(m, dict) for m in masks):  # [] too
                segs = [dict(m) for m in masks]
                for k, m in enumerate(segs):
                    size = m.get("size")
                    if not isinstance(size, (list, tuple)) or len(size) != 2 or not all(
                            isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0 for v in size):
                        raise ValueError(f"{what}['masks'][{k}]: 'size' must be [height, width] (two integers >= 0); "
                                         f"got {size!r:.80}")
                    try:
                        decode_runs([m], [tuple(int(v) for v in size)])
                    except ValueError as exc:
                        raise ValueError(f"{what}['masks'][{k}]: {str(exc).partition(': ')[2]}") from None
            else:
                try:
                    arr = np.asarray(masks)
                except (TypeError, ValueError, RuntimeError):
                    arr = np.asarray(None)
                if arr.size == 0 and arr.ndim and arr.shape[0] == 0:  # no mask: an empty image
                    arr = np.zeros((0, 0, 0), dtype=bool)
                if arr.ndim != 3 or (arr.size and arr.dtype.kind not in "bui"):
                    got = (f"an array of shape {arr.shape} ({arr.dtype})" if arr.dtype != object else
                           f"a {type(masks).__name__} of {type(masks[0]).__name__ if len(masks) else 'nothing'}"
                           if isinstance(masks, (list, tuple)) else type(masks).__name__)
                    raise ValueError(f"{what}['masks']: must be (N, H, W) booleans or a list of COCO RLE dicts "
                                     f"({{'size': [h, w], 'counts': ...}}); got {got} (polygons: convert them with "
                                     "pycocotools.mask.frPyObjects(polygons, h, w))")
                segs = [_mask_counts(m) for m in arr]
            if len(segs) != n:
                raise ValueError(f"{what}['masks']: {len(segs)} masks for {n} boxes")
            sizes = {tuple(s["size"]) for s in segs}
            if len(sizes) > 1:
                raise ValueError(f"{what}['masks']: masks of different sizes {sorted(sizes)} in one image")
            out["segm"] = segs
            out["hw"] = sizes.pop() if sizes else None
        return out

    def update(self, preds: list[dict[str, Any]], targets: list[dict[str, Any]]) -> None:
        """Add a batch: ``preds[i]`` and ``targets[i]`` describe the same image.

        ``preds[i]``: ``boxes`` (N, 4), ``scores`` (N,), ``labels`` (N,) integers,
        and ``masks`` for ``iou_type="segm"``.  ``targets[i]``: ``boxes``, ``labels``,
        optional ``iscrowd`` and ``area`` (default: the box's, or the mask's
        area), ``masks``.  Arrays, lists or CPU tensors.  The batch is checked
        whole before anything is stored.
        """
        if not isinstance(preds, (list, tuple)) or not isinstance(targets, (list, tuple)):
            raise TypeError("`preds` and `targets` must be lists of dicts, one per image")
        if len(preds) != len(targets):
            raise ValueError(f"`preds` has {len(preds)} images and `targets` {len(targets)}; one of each per image")
        batch = []
        for i, (p, t) in enumerate(zip(preds, targets)):
            dt, gt = self._image(p, i, "preds"), self._image(t, i, "targets")
            if self.iou_type == "segm":
                hws = {hw for hw in (dt["hw"], gt["hw"]) if hw is not None}
                if len(hws) > 1:
                    raise ValueError(f"image {i}: prediction masks {dt['hw']} and target masks {gt['hw']} differ in size")
            batch.append((dt, gt))
        self._images.extend({"dt": dt, "gt": gt} for dt, gt in batch)

    def merge(self, *others: MeanAveragePrecision) -> MeanAveragePrecision:
        """Add the images of other metrics (e.g. from other processes; same options), after this one's.
        Returns ``self``."""
        for other in others:
            if not isinstance(other, MeanAveragePrecision):
                raise TypeError(f"can only merge MeanAveragePrecision objects; got {type(other).__name__}")
            if (other.box_format, other.iou_type, repr(other._options)) != \
                    (self.box_format, self.iou_type, repr(self._options)):
                raise ValueError("cannot merge metrics with different options")
            self._images.extend(other._images)
        return self

    def detection_set(self) -> DetectionSet:
        """The images seen as a :class:`~precall.detection.DetectionSet` (image ids 0, 1, ...)."""
        n = len(self._images)
        gts = [im["gt"] for im in self._images]
        dts = [im["dt"] for im in self._images]
        g_count = np.array([g["box"].shape[0] for g in gts], dtype=np.int64)
        d_count = np.array([d["box"].shape[0] for d in dts], dtype=np.int64)
        gt_box = np.concatenate([g["box"] for g in gts]) if n else np.zeros((0, 4))
        dt_box = np.concatenate([d["box"] for d in dts]) if n else np.zeros((0, 4))
        gt_class = np.concatenate([g["label"] for g in gts]) if n else np.zeros(0, np.int64)
        dt_class = np.concatenate([d["label"] for d in dts]) if n else np.zeros(0, np.int64)
        classes = np.union1d(gt_class, dt_class)
        segm = self.iou_type == "segm"
        gt_segm = [s for g in gts for s in g["segm"]] if segm else None
        dt_segm = [s for d in dts for s in d["segm"]] if segm else None
        image_hw = None
        dt_area = None
        gt_area = gt_box[:, 2] * gt_box[:, 3]
        if segm:
            image_hw = {}
            for i, im in enumerate(self._images):
                hw = im["gt"]["hw"] or im["dt"]["hw"]
                image_hw[i] = tuple(int(v) for v in hw) if hw else (0, 0)
            g_img = np.repeat(np.arange(n), g_count)
            d_img = np.repeat(np.arange(n), d_count)
            gt_area = decode_runs(gt_segm, [image_hw[i] for i in g_img.tolist()]).areas().astype(np.float64)
            dt_area = decode_runs(dt_segm, [image_hw[i] for i in d_img.tolist()]).areas().astype(np.float64)
        given = [g["area"] for g in gts]
        if any(a is not None for a in given):
            parts = [a if a is not None else gt_area[lo:lo + c]
                     for a, lo, c in zip(given, np.cumsum(g_count) - g_count, g_count)]
            gt_area = np.concatenate(parts)
        return DetectionSet(
            images=np.arange(n, dtype=np.int64), classes=classes,
            gt_image=np.repeat(np.arange(n), g_count), gt_class=gt_class, gt_box=gt_box, gt_area=gt_area,
            gt_crowd=np.concatenate([g["crowd"] for g in gts]) if n else np.zeros(0, bool),
            gt_ignore=np.zeros(gt_box.shape[0], bool),
            dt_image=np.repeat(np.arange(n), d_count), dt_class=dt_class, dt_box=dt_box,
            dt_score=np.concatenate([d["score"] for d in dts]) if n else np.zeros(0),
            class_names={int(c): str(int(c)) for c in classes.tolist()}, dt_area=dt_area,
            gt_segm=gt_segm, dt_segm=dt_segm, image_hw=image_hw,
        )

    def compute(self, progress: Any = None) -> CocoEvaluation:
        """The COCO evaluation of every image seen (:func:`~precall.detection.evaluate_coco`)."""
        return evaluate_coco(self.detection_set(), iou_type=self.iou_type, progress=progress, **self._options)
