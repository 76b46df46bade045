"""A training-loop API: :class:`MeanAveragePrecision`, fed per batch, computed once per epoch.

A drop-in for torchmetrics' ``MeanAveragePrecision``: the same constructor
options, ``update(preds, targets)`` with one dict of arrays per image, and
``compute()`` giving a dict with torchmetrics' keys (``map``, ``map_50``, ...,
``mar_100``, ``map_per_class``, ``classes``), every number that of
:func:`~precall.detection.evaluate_coco` on the equivalent COCO files (the
:class:`~precall.detection.CocoEvaluation` s are the result's ``evaluations``).
Inputs are numpy arrays, lists, or torch tensors of any dtype and device
(detached and copied to the host; bfloat16 read as float32).  precall never
imports torch: a tensor is recognised by its methods, and ``torch.distributed``
is used only when the program has already imported it.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .coco import CocoEvaluation, _mean_valid, check_coco_options, evaluate_coco
from ._rle import Runs, decode_runs
from .io import BOX_FORMATS, DetectionSet

__all__ = ["MeanAveragePrecision", "MeanAveragePrecisionResult"]

#: torchmetrics' ``Metric`` keywords, accepted for a drop-in (see :class:`MeanAveragePrecision`)
METRIC_KEYWORDS = ("compute_on_cpu", "dist_sync_on_step", "dist_sync_fn", "distributed_available_fn",
                   "compute_with_cache")
_NUMPY_FLOATS = ("torch.float16", "torch.float32", "torch.float64")


def _host(value: Any) -> Any:
    """A torch tensor (any device, ``requires_grad``, any dtype) as a numpy array; anything else as is.
    Recognised by its methods, so that precall never imports torch; bfloat16 and other floats numpy
    lacks are widened to float32 (exactly)."""
    if not (callable(getattr(value, "detach", None)) and callable(getattr(value, "cpu", None))
            and callable(getattr(value, "numpy", None))):
        return value
    tensor = value.detach().cpu()
    if tensor.is_floating_point() and str(tensor.dtype) not in _NUMPY_FLOATS:
        tensor = tensor.float()
    return tensor.numpy()


def _array(value: Any, what: str, dtype: Any = None) -> np.ndarray:
    try:
        value = _host(value)
        if isinstance(value, (list, tuple)):
            value = [_host(v) for v in value]
        out = np.asarray(value) if dtype is None else np.asarray(value, dtype=dtype)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise TypeError(f"{what}: not convertible to a numpy array ({exc}); pass arrays, lists or tensors") from None
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
    """xywh in the boxes' own float precision, operation for operation as torchmetrics' ``box_convert``
    (torchvision: cxcywh goes through xyxy, so w is ``(cx + 0.5 w) - (cx - 0.5 w)``), then float64."""
    b = boxes if boxes.dtype.kind == "f" else boxes.astype(np.float64)
    if box_format == "cxcywh":
        half_w, half_h = 0.5 * b[:, 2], 0.5 * b[:, 3]
        b = np.stack([b[:, 0] - half_w, b[:, 1] - half_h, b[:, 0] + half_w, b[:, 1] + half_h], axis=1)
    if box_format == "xywh":
        out = b
    else:
        out = np.stack([b[:, 0], b[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], axis=1)
    return out.astype(np.float64)


def _iou_types(iou_type: Any) -> tuple[str, ...]:
    """torchmetrics' ``iou_type``: "bbox", "segm" or a tuple of them (keys prefixed when several)."""
    types = (iou_type,) if isinstance(iou_type, str) else iou_type
    if not isinstance(types, (tuple, list)) or not types or not all(t in ("bbox", "segm") for t in types):
        raise ValueError(f"`iou_type` must be 'bbox', 'segm' or a tuple of them (e.g. ('bbox', 'segm')); got "
                         f"{iou_type!r:.80}")
    return tuple(types)


def _alias(ours: Any, theirs: Any, names: str) -> Any:
    """One option under precall's name or torchmetrics' (e.g. ``recall_thresholds`` / ``rec_thresholds``)."""
    if ours is not None and theirs is not None:
        raise ValueError(f"pass one of {names}, not both")
    value = ours if ours is not None else theirs
    return tuple(value) if isinstance(value, list) and names.startswith("`max") else value


class MeanAveragePrecisionResult(dict):
    """The result of :meth:`MeanAveragePrecision.compute`: a dict with torchmetrics' keys (for
    ``log_dict``), and the :class:`~precall.detection.CocoEvaluation` of each IoU type in
    :attr:`evaluations` (per-class tables, precision arrays, bootstrap intervals)."""

    evaluations: dict[str, CocoEvaluation]


def _value(values: Any, dtype: Any = np.float64) -> Any:
    """A result value as torchmetrics gives it after its squeeze: one number as a scalar, else an array."""
    arr = np.asarray(values, dtype=dtype).reshape(-1)
    return arr[0] if arr.size == 1 else arr


class MeanAveragePrecision:
    """COCO mAP accumulated over batches: a drop-in for torchmetrics' ``MeanAveragePrecision``.

    Parameters
    ----------
    box_format : {"xyxy", "xywh", "cxcywh"}, default="xyxy"
        How ``boxes`` are given (converted to COCO's ``[x, y, w, h]`` in their own
        float precision, operation for operation as torchmetrics does; bfloat16 and
        other floats numpy lacks in float32).
    iou_type : "bbox", "segm" or a tuple of them, default="bbox"
        ``"segm"`` needs ``masks`` in predictions and targets: ``(N, H, W)`` booleans
        (stored as run lengths at once) or a list of COCO RLE dicts; ``boxes`` are then
        optional.  With several types every key is prefixed (``bbox_map``, ``segm_map``).
    iou_thresholds : list of float, default=None
        pycocotools' 0.50:0.05:0.95 (float64; torchmetrics' defaults are float32
        values, see the notes).
    rec_thresholds, recall_thresholds : list of float, default=None
        The recall thresholds (either name); pycocotools' 101.
    max_detection_thresholds, max_dets : list of int, default=None
        Detections per image (either name; any number of values); (1, 10, 100).
    class_metrics : bool, default=False
        Also ``map_per_class`` and ``mar_{max_dets[-1]}_per_class`` (in the order of
        ``classes``).
    extended_summary : bool, default=False
        Also ``precision`` (T, R, K, A, M) and ``recall`` (T, K, A, M).
    average : {"macro", "micro"}, default="macro"
        ``"micro"``: every label evaluated as one class (as torchmetrics).
    backend : {"pycocotools", "faster_coco_eval"}, default="pycocotools"
        Accepted for compatibility; precall computes the numbers itself.
    area_ranges, ties, use_cats
        As :func:`~precall.detection.evaluate_coco`.
    sync_on_compute : bool, default=True
        When ``torch.distributed`` is initialised with several processes, :meth:`compute`
        gathers every process's images first (as torchmetrics does).
    process_group : default=None
        The ``torch.distributed`` group to gather over (default: the world).
    **kwargs
        torchmetrics' other ``Metric`` keywords (``compute_on_cpu``,
        ``dist_sync_on_step``, ``dist_sync_fn``, ``distributed_available_fn``,
        ``compute_with_cache``) are accepted and have no effect: the state is on the
        host and is gathered with ``torch.distributed.all_gather_object``.

    Notes
    -----
    Where precall and torchmetrics differ, precall gives pycocotools' numbers on the
    equivalent COCO files: torchmetrics passes its default thresholds as float32 values
    (``torch.linspace(...).tolist()``), which moves its numbers by up to ~1e-3 (pass its
    ``iou_thresholds`` / ``rec_thresholds`` to reproduce them); its values are float32
    tensors, precall's float64 numpy scalars and arrays; with ``iou_type="segm"`` it
    leaves out the images without ground-truth masks (and so their false positives),
    and gives -1 when no image has a predicted mask; ``map`` uses ``max_dets[-1]``
    where pycocotools uses 100; bfloat16 boxes are converted to xywh in float32, where
    torchmetrics rounds the width to bfloat16.  Images gathered from several processes
    are in process order (torchmetrics interleaves them), which matters only for
    ties of equal scores across images.

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
    >>> result = metric.compute()
    >>> [round(float(result[k]), 4) for k in ("map", "map_50", "map_75", "mar_100")]
    [0.6, 1.0, 1.0, 0.6]
    >>> bool(result.evaluations["bbox"].stats[0] == result["map"])
    True
    """

    def __init__(
        self,
        box_format: str = "xyxy",
        iou_type: Any = "bbox",
        iou_thresholds: Any = None,
        rec_thresholds: Any = None,
        max_detection_thresholds: Any = None,
        class_metrics: bool = False,
        extended_summary: bool = False,
        average: str = "macro",
        backend: str = "pycocotools",
        *,
        recall_thresholds: Any = None,
        max_dets: Any = None,
        area_ranges: dict[str, tuple[float, float]] | None = None,
        ties: str = "stable",
        use_cats: bool = True,
        sync_on_compute: bool = True,
        process_group: Any = None,
        **kwargs: Any,
    ) -> None:
        unknown = sorted(set(kwargs) - set(METRIC_KEYWORDS))
        if unknown:
            raise TypeError(f"MeanAveragePrecision() got an unexpected keyword argument {unknown[0]!r}; it takes "
                            f"torchmetrics' options and {', '.join(METRIC_KEYWORDS)}")
        if box_format not in BOX_FORMATS:
            raise ValueError(f"`box_format` must be one of {BOX_FORMATS}; got {box_format!r}")
        types = _iou_types(iou_type)
        for name, flag in (("class_metrics", class_metrics), ("extended_summary", extended_summary),
                           ("sync_on_compute", sync_on_compute)):
            if not isinstance(flag, (bool, np.bool_)):
                raise TypeError(f"`{name}` must be True or False; got {flag!r:.80}")
        if average not in ("macro", "micro"):
            raise ValueError(f"`average` must be 'macro' or 'micro'; got {average!r:.80}")
        if backend not in ("pycocotools", "faster_coco_eval"):
            raise ValueError(f"`backend` must be 'pycocotools' or 'faster_coco_eval' (accepted for torchmetrics' "
                             f"code; precall computes the numbers itself); got {backend!r:.80}")
        recall_thresholds = _alias(recall_thresholds, rec_thresholds, "`recall_thresholds` or `rec_thresholds`")
        max_dets = _alias(max_dets, max_detection_thresholds, "`max_dets` or `max_detection_thresholds`")
        for t in dict.fromkeys(types):
            check_coco_options(iou_thresholds=iou_thresholds, recall_thresholds=recall_thresholds, max_dets=max_dets,
                               iou_type=t, area_ranges=area_ranges, ties=ties, use_cats=use_cats)
        self.box_format, self.iou_type = box_format, types
        self.class_metrics, self.extended_summary = bool(class_metrics), bool(extended_summary)
        self.average, self.backend = average, backend
        self.sync_on_compute, self.process_group = bool(sync_on_compute), process_group
        self._options = {"iou_thresholds": iou_thresholds, "recall_thresholds": recall_thresholds,
                         "max_dets": max_dets, "area_ranges": area_ranges, "ties": ties, "use_cats": use_cats}
        self.reset()

    def reset(self) -> None:
        """Forget every image seen."""
        self._images: list[dict[str, Any]] = []
        self._local: list[dict[str, Any]] | None = None  # the images before sync()

    def __len__(self) -> int:
        """The number of images seen."""
        return len(self._images)

    def to(self, *args: Any, **kwargs: Any) -> MeanAveragePrecision:
        """No-op (torchmetrics' ``Metric.to``): the state is on the host whatever the device."""
        return self

    def _masks(self, masks: Any, what: str) -> tuple[Runs, tuple[int, int] | None]:
        """``masks``: (N, H, W) booleans or integers (nonzero: foreground), or a list of COCO RLE dicts;
        decoded once, to run lengths."""
        if isinstance(masks, (list, tuple)) and all(isinstance(m, dict) for m in masks) and len(masks):
            sizes = []
            for k, m in enumerate(masks):
                size = m.get("size")
                if not isinstance(size, (list, tuple)) or len(size) != 2 or not all(
                        isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0 for v in size):
                    raise ValueError(f"{what}[{k}]: 'size' must be [height, width] (two integers >= 0); "
                                     f"got {size!r:.80}")
                sizes.append((int(size[0]), int(size[1])))
            if len(set(sizes)) > 1:
                raise ValueError(f"{what}: masks of different sizes {sorted(set(sizes))} in one image")
            try:
                runs = decode_runs([dict(m) for m in masks], sizes)
            except ValueError as exc:
                index, _, rest = str(exc).partition(": ")
                raise ValueError(f"{what}[{index.split()[-1].split('..')[0]}]: {rest}") from None
            return runs, sizes[0]
        try:
            arr = _array(masks, what)
        except TypeError:
            arr = np.asarray(None)
        if arr.size == 0 and arr.ndim and arr.shape[0] == 0:  # no mask: an empty image
            return Runs.from_masks(np.zeros((0, 0, 0), dtype=bool)), (tuple(arr.shape[1:3]) if arr.ndim == 3 and
                                                                     arr.shape[1] * arr.shape[2] else None)
        if arr.ndim != 3 or arr.dtype.kind not in "bui":
            got = (f"an array of shape {arr.shape} ({arr.dtype})" if arr.dtype != object else
                   f"a {type(masks).__name__} of {type(masks[0]).__name__ if len(masks) else 'nothing'}"
                   if isinstance(masks, (list, tuple)) else type(masks).__name__)
            raise ValueError(f"{what}: must be (N, H, W) booleans or a list of COCO RLE dicts "
                             f"({{'size': [h, w], 'counts': ...}}); got {got} (polygons: convert them with "
                             "pycocotools.mask.frPyObjects(polygons, h, w))")
        return Runs.from_masks(arr), (int(arr.shape[1]), int(arr.shape[2]))

    def _image(self, record: Any, i: int, kind: str) -> dict[str, Any]:
        what = f"{kind}[{i}]"
        if not isinstance(record, dict):
            raise TypeError(f"{what}: each image is a dict of arrays ('boxes', 'labels'"
                            f"{', scores' if kind == 'preds' else ''}); got {type(record).__name__}")
        segm = "segm" in self.iou_type
        needed = ("labels",) + (("scores",) if kind == "preds" else ()) + (("boxes",) if "bbox" in self.iou_type
                                                                         else ()) + (("masks",) if segm else ())
        for key in needed:
            if key not in record:
                raise ValueError(f"{what}: no {key!r}" + (f" (iou_type={self.iou_type})" if key == "masks" else ""))
        labels = _array(record["labels"], f"{what}['labels']").reshape(-1)
        if labels.size == 0:  # an empty image: [] reads as float64, torch.tensor([]) as float32
            labels = labels.astype(np.int64)
        n = labels.size
        out: dict[str, Any] = {}
        if segm:
            out["runs"], out["hw"] = self._masks(record["masks"], f"{what}['masks']")
            if len(out["runs"]) != n:
                raise ValueError(f"{what}['masks']: {len(out['runs'])} masks for {n} labels")
        if "boxes" in record:
            boxes = _array(record["boxes"], f"{what}['boxes']")
            if boxes.size == 0:
                boxes = boxes.reshape(0, 4)
            if boxes.ndim != 2 or boxes.shape[1] != 4 or boxes.dtype.kind not in "fiu":
                raise ValueError(f"{what}['boxes']: must be numbers of shape (N, 4); got shape {boxes.shape} of "
                                 f"{boxes.dtype}")
            xywh = _to_xywh(boxes, self.box_format)
            if not np.isfinite(xywh).all():
                raise ValueError(f"{what}['boxes']: must be finite")
            bad = np.flatnonzero((xywh[:, 2] < 0) | (xywh[:, 3] < 0))
            if bad.size:
                raise ValueError(f"{what}['boxes'][{int(bad[0])}] = {boxes[bad[0]].tolist()} has a negative width or "
                                 f"height in box_format={self.box_format!r}; is the box format right?")
        else:  # masks only: pycocotools' box of each mask (its extent)
            xywh = out["runs"].boxes(np.full(n, out["hw"][0] if out["hw"] else 0, dtype=np.int64))
        if labels.dtype.kind not in "iu" or labels.size != xywh.shape[0]:
            raise ValueError(f"{what}['labels']: must be N = {xywh.shape[0]} integers; got {labels.size} of "
                             f"{labels.dtype}")
        out.update(box=xywh, label=labels.astype(np.int64))
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
            if area is not None:  # torchmetrics: an area of 0 means "not given" (the box's or the mask's)
                out["area"] = _numbers(area, f"{what}['area']", n, "finite numbers >= 0")
                if not (np.isfinite(out["area"]) & (out["area"] >= 0)).all():
                    raise ValueError(f"{what}['area']: must be N = {n} finite numbers >= 0 (pixels); got "
                                     f"{_first_bad(out['area'], low=0)} (0: the box's or the mask's area)")
        return out

    def update(self, preds: list[dict[str, Any]], targets: list[dict[str, Any]]) -> None:
        """Add a batch: ``preds[i]`` and ``targets[i]`` describe the same image.

        ``preds[i]``: ``boxes`` (N, 4), ``scores`` (N,), ``labels`` (N,) integers,
        and ``masks`` for ``iou_type="segm"``.  ``targets[i]``: ``boxes``, ``labels``,
        optional ``iscrowd`` and ``area`` (default, or 0: the box's, or with
        ``"segm"`` the mask's area), ``masks``.  Arrays, lists or tensors (any
        dtype and device).  The batch is checked whole before anything is stored.
        """
        if not isinstance(preds, (list, tuple)) or not isinstance(targets, (list, tuple)):
            raise TypeError("`preds` and `targets` must be lists of dicts, one per image")
        if len(preds) != len(targets):
            raise ValueError(f"`preds` has {len(preds)} images and `targets` {len(targets)}; one of each per image")
        batch = []
        for i, (p, t) in enumerate(zip(preds, targets)):
            dt, gt = self._image(p, i, "preds"), self._image(t, i, "targets")
            if "segm" in self.iou_type:
                hws = {hw for hw in (dt["hw"], gt["hw"]) if hw is not None}
                if len(hws) > 1:
                    raise ValueError(f"image {i}: prediction masks {dt['hw']} and target masks {gt['hw']} differ in size")
            batch.append((dt, gt))
        self._images.extend({"dt": dt, "gt": gt} for dt, gt in batch)

    def forward(self, preds: list[dict[str, Any]], targets: list[dict[str, Any]]) -> MeanAveragePrecisionResult:
        """torchmetrics' ``forward`` (``metric(preds, targets)``): add the batch and return its own result."""
        alone = self._like()
        alone.update(preds, targets)
        self._images.extend(alone._images)
        return alone._result(alone._images)

    __call__ = forward

    def _like(self) -> MeanAveragePrecision:
        return MeanAveragePrecision(self.box_format, self.iou_type, class_metrics=self.class_metrics,
                                    extended_summary=self.extended_summary, average=self.average,
                                    backend=self.backend, sync_on_compute=False, **self._options)

    def _settings(self) -> tuple[Any, ...]:
        return (self.box_format, self.iou_type, self.average, repr(self._options))

    def merge(self, *others: MeanAveragePrecision) -> MeanAveragePrecision:
        """Add the images of other metrics (e.g. from other processes; same options), after this one's.
        Returns ``self``."""
        for other in others:
            if not isinstance(other, MeanAveragePrecision):
                raise TypeError(f"can only merge MeanAveragePrecision objects; got {type(other).__name__}")
            if other._settings() != self._settings():
                raise ValueError("cannot merge metrics with different options")
        if any(other is self for other in others) or len({id(o) for o in others}) < len(others):
            raise ValueError("cannot merge a metric into itself or the same metric twice: its images would count "
                             "twice; merge each other process's metric once")
        for other in others:
            self._images.extend(other._images)
        return self

    # ------------------------------------------------------------------ torch.distributed
    def _world(self) -> Any:
        """``torch.distributed`` when this program initialised it with several processes, else None
        (never imported here: a program that did not import torch has no process group)."""
        dist = sys.modules.get("torch.distributed")
        if dist is None or not dist.is_available() or not dist.is_initialized():
            return None
        return dist if dist.get_world_size(self.process_group) > 1 else None

    def _gathered(self) -> list[dict[str, Any]]:
        """Every process's images, in process order (``all_gather_object``; a collective call)."""
        dist = self._world()
        if dist is None:
            return self._images
        parts: list[Any] = [None] * dist.get_world_size(self.process_group)
        dist.all_gather_object(parts, self._images, group=self.process_group)
        return [image for part in parts for image in part]

    def sync(self, process_group: Any = None) -> MeanAveragePrecision:
        """Gather the images of every process of ``torch.distributed`` (every process must call it);
        :meth:`unsync` restores this process's own.  A no-op without several processes.  Returns ``self``."""
        if self._local is not None:
            raise ValueError("the metric is already synced; call unsync() first")
        if process_group is not None:
            self.process_group = process_group
        if self._world() is not None:
            self._local, self._images = self._images, self._gathered()
        return self

    def unsync(self) -> MeanAveragePrecision:
        """Restore this process's own images after :meth:`sync`.  Returns ``self``."""
        if self._local is not None:
            self._images, self._local = self._local, None
        return self

    # ------------------------------------------------------------------ evaluation
    def detection_set(self, iou_type: str | None = None) -> DetectionSet:
        """The images seen as a :class:`~precall.detection.DetectionSet` for one IoU type (default the
        first; image ids 0, 1, ...)."""
        return self._detection_set(self._images, iou_type or self.iou_type[0], self.average == "micro")

    def _detection_set(self, images: list[dict[str, Any]], iou_type: str, micro: bool) -> DetectionSet:
        n = len(images)
        gts = [im["gt"] for im in images]
        dts = [im["dt"] for im in images]
        g_count = np.array([g["box"].shape[0] for g in gts], dtype=np.int64)
        d_count = np.array([d["box"].shape[0] for d in dts], dtype=np.int64)

        def cat(parts: list[np.ndarray], empty: np.ndarray) -> np.ndarray:
            return np.concatenate(parts) if parts else empty

        gt_box, dt_box = cat([g["box"] for g in gts], np.zeros((0, 4))), cat([d["box"] for d in dts], np.zeros((0, 4)))
        gt_class = cat([g["label"] for g in gts], np.zeros(0, np.int64))
        dt_class = cat([d["label"] for d in dts], np.zeros(0, np.int64))
        if micro:  # torchmetrics' average="micro": every label is class 0
            gt_class, dt_class = np.zeros_like(gt_class), np.zeros_like(dt_class)
        classes = np.union1d(gt_class, dt_class)
        masks = "segm" in self.iou_type
        gt_runs = Runs.concat([g["runs"] for g in gts]) if masks else None
        dt_runs = Runs.concat([d["runs"] for d in dts]) if masks else None
        image_hw = None
        dt_area = None
        gt_area = gt_box[:, 2] * gt_box[:, 3]
        if masks:  # as torchmetrics: the ground truth's area is its mask's, for every IoU type
            image_hw = {i: tuple(int(v) for v in (im["gt"]["hw"] or im["dt"]["hw"] or (0, 0)))
                        for i, im in enumerate(images)}
            gt_area = gt_runs.areas().astype(np.float64)
            if iou_type == "segm":
                dt_area = dt_runs.areas().astype(np.float64)
        given = [g["area"] for g in gts]
        if any(a is not None for a in given):
            parts = [np.where(a > 0, a, gt_area[lo:lo + c]) if a is not None else gt_area[lo:lo + c]
                     for a, lo, c in zip(given, np.cumsum(g_count) - g_count, g_count)]
            gt_area = np.concatenate(parts)
        return DetectionSet(
            images=np.arange(n, dtype=np.int64), classes=classes,
            gt_image=np.repeat(np.arange(n), g_count), gt_class=gt_class, gt_box=gt_box, gt_area=gt_area,
            gt_crowd=cat([g["crowd"] for g in gts], np.zeros(0, bool)),
            gt_ignore=np.zeros(gt_box.shape[0], bool),
            dt_image=np.repeat(np.arange(n), d_count), dt_class=dt_class, dt_box=dt_box,
            dt_score=cat([d["score"] for d in dts], np.zeros(0)),
            class_names={int(c): str(int(c)) for c in classes.tolist()}, dt_area=dt_area,
            image_hw=image_hw, gt_runs=gt_runs if iou_type == "segm" else None,
            dt_runs=dt_runs if iou_type == "segm" else None,
        )

    def evaluation(self, iou_type: str | None = None, progress: Any = None) -> CocoEvaluation:
        """The :class:`~precall.detection.CocoEvaluation` of the images seen (this process's, or all of them
        after :meth:`sync`) for one IoU type (default the first)."""
        iou_type = iou_type or self.iou_type[0]
        if iou_type not in self.iou_type:
            raise ValueError(f"`iou_type` must be one of this metric's {self.iou_type}; got {iou_type!r:.80}")
        return evaluate_coco(self._detection_set(self._images, iou_type, self.average == "micro"),
                             iou_type=iou_type, progress=progress, **self._options)

    def compute(self) -> MeanAveragePrecisionResult:
        """torchmetrics' result dict (see the class notes), every process's images gathered first when
        ``torch.distributed`` runs several (``sync_on_compute``)."""
        images = self._gathered() if self.sync_on_compute and self._local is None else self._images
        return self._result(images)

    def _result(self, images: list[dict[str, Any]]) -> MeanAveragePrecisionResult:
        out = MeanAveragePrecisionResult()
        out.evaluations = {}
        micro = self.average == "micro"
        for t in self.iou_type:
            if t not in out.evaluations:
                out.evaluations[t] = evaluate_coco(self._detection_set(images, t, micro), iou_type=t, **self._options)
            ev = out.evaluations[t]
            prefix = "" if len(self.iou_type) == 1 else f"{t}_"
            stats = dict(zip(ev.STAT_NAMES, ev.stats.tolist()))
            keys = {"map": "AP", "map_50": "AP50", "map_75": "AP75", "map_small": "AP_small",
                    "map_medium": "AP_medium", "map_large": "AP_large"}
            out.update({prefix + k: np.float64(stats[v]) for k, v in keys.items()})
            a = ev.area_index("all") if "all" in ev.area_ranges else None
            for m, md in enumerate(ev.max_dets):
                out[f"{prefix}mar_{md}"] = np.float64(-1.0 if a is None else _mean_valid(ev.recall[:, :, a, m]))
            out.update({prefix + k: np.float64(stats[v]) for k, v in
                        (("mar_small", "AR_small"), ("mar_medium", "AR_medium"), ("mar_large", "AR_large"))})
            per_class = ev
            if self.class_metrics and micro:  # per class, whatever the averaging (as torchmetrics)
                per_class = evaluate_coco(self._detection_set(images, t, False), iou_type=t, **self._options)
            out[f"{prefix}map_per_class"] = _value([r["AP"] for r in per_class.per_class] if self.class_metrics else -1)
            out[f"{prefix}mar_{ev.max_dets[-1]}_per_class"] = _value(
                [r["AR"] for r in per_class.per_class] if self.class_metrics else -1)
            if self.extended_summary:
                out[f"{prefix}precision"], out[f"{prefix}recall"] = ev.precision, ev.recall
        labels = [im[k]["label"] for im in images for k in ("dt", "gt")]
        classes = np.unique(np.concatenate(labels)) if labels else np.zeros(0, dtype=np.int64)
        fits = classes.size == 0 or (int(classes.min()) >= -2**31 and int(classes.max()) < 2**31)
        out["classes"] = _value(classes, np.int32 if fits else np.int64)  # torchmetrics' int32, never wrapped
        return out
