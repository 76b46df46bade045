"""Object detection: COCO and PASCAL VOC mAP on precall's ranking core.

Detection evaluation is *matching* (which detection hits which ground-truth
box) followed by exactly the ranking precall already has: the detections of a
class, ranked by score, are true or false positives, ``n_pos`` is the number of
ground truths (more than the final TP when some are never found), and an AP
convention turns that count table into a number.

Modules: :mod:`~precall.detection.io` (loaders, :class:`DetectionSet`),
:mod:`~precall.detection.coco` (pycocotools' protocol: bbox, segm, keypoints),
:mod:`~precall.detection.voc` (Detectron's ``voc_eval``),
:mod:`~precall.detection.keypoints` (CrowdPose), :mod:`~precall.detection.metric`
(:class:`MeanAveragePrecision`, the training-loop API),
:mod:`~precall.detection.bootstrap` (intervals over images); matching
(``_match``) and run-length masks (``_rle``) are internal.
"""

from __future__ import annotations

from typing import Any

from .coco import AREA_RANGES, COCO_KEYPOINT_SIGMAS, IOU_THRESHOLDS, KEYPOINT_AREA_RANGES, CocoEvaluation, evaluate_coco
from .io import BOX_FORMATS, DetectionSet, DetectionWarning, load_coco, load_text, load_voc
from .bootstrap import CocoBootstrap, CocoComparison, bootstrap_coco, compare_coco
from .keypoints import CROWDPOSE_SIGMAS, evaluate_crowdpose
from .tide import ERROR_TYPES, ErrorBreakdown, error_breakdown
from .diagnostics import ConfusionMatrix, OperatingPoints, confusion_matrix, operating_points
from .metric import MeanAveragePrecision, MeanAveragePrecisionResult
from .voc import VocEvaluation, evaluate_voc

__all__ = [
    "AREA_RANGES", "BOX_FORMATS", "COCO_KEYPOINT_SIGMAS", "CROWDPOSE_SIGMAS", "ERROR_TYPES", "ErrorBreakdown",
    "IOU_THRESHOLDS", "error_breakdown", "ConfusionMatrix", "OperatingPoints", "confusion_matrix",
    "operating_points",
    "KEYPOINT_AREA_RANGES", "CocoBootstrap", "CocoComparison", "CocoEvaluation", "DetectionSet", "DetectionWarning",
    "MeanAveragePrecision", "MeanAveragePrecisionResult", "VocEvaluation", "bootstrap_coco", "compare_coco", "evaluate_coco", "evaluate_crowdpose",
    "evaluate_voc", "load_coco", "load_text", "load_voc",
]


def _bootstrap(self: CocoEvaluation, n_resamples: int = 1000, *, confidence_level: float = 0.95,
               method: str = "basic", random_state: Any = None, progress: Any = None) -> CocoBootstrap:
    """Bootstrap intervals over images for mAP, AP50, AP75 and per-class AP, and their bias
    (:func:`precall.detection.bootstrap.bootstrap_coco`)."""
    return bootstrap_coco(self, n_resamples, confidence_level=confidence_level, method=method,  # type: ignore[arg-type]
                          random_state=random_state, progress=progress)


# wired here, above both modules, so that coco.py does not import the bootstrap built on it
CocoEvaluation.bootstrap = _bootstrap  # type: ignore[attr-defined]
