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

from ..stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from .coco import AREA_RANGES, COCO_KEYPOINT_SIGMAS, IOU_THRESHOLDS, KEYPOINT_AREA_RANGES, CocoEvaluation, evaluate_coco
from .io import BOX_FORMATS, DetectionSet, DetectionWarning, load_coco, load_text, load_voc
from .bootstrap import CocoBootstrap, CocoComparison, VocBootstrap, bootstrap_coco, bootstrap_voc, compare_coco
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
    "MeanAveragePrecision", "MeanAveragePrecisionResult", "VocBootstrap", "VocEvaluation", "bootstrap_coco",
    "bootstrap_voc", "compare_coco", "evaluate_coco", "evaluate_crowdpose",
    "evaluate_voc", "load_coco", "load_text", "load_voc",
]


def _bootstrap(self: CocoEvaluation, n_resamples: int = DEFAULT_RESAMPLES, *, confidence_level: float = 0.95,
               method: str = "basic", random_state: Any = DEFAULT_SEED, progress: Any = None) -> CocoBootstrap:
    """Bootstrap intervals over images for mAP, AP50, AP75 and per-class AP, and their bias
    (:func:`precall.detection.bootstrap.bootstrap_coco`): 2000 resamples and seed 0 unless told
    otherwise (:data:`precall.stats.DEFAULT_RESAMPLES`, :data:`precall.stats.DEFAULT_SEED`)."""
    return bootstrap_coco(self, n_resamples, confidence_level=confidence_level, method=method,  # type: ignore[arg-type]
                          random_state=random_state, progress=progress)


def _voc_bootstrap(self: VocEvaluation, n_resamples: int = DEFAULT_RESAMPLES, *, confidence_level: float = 0.95,
                   random_state: Any = DEFAULT_SEED, progress: Any = None) -> VocBootstrap:
    """Percentile intervals over images of mAP and of each class's AP
    (:func:`precall.detection.bootstrap.bootstrap_voc`): 2000 resamples and seed 0 unless told
    otherwise (:data:`precall.stats.DEFAULT_RESAMPLES`, :data:`precall.stats.DEFAULT_SEED`)."""
    return bootstrap_voc(self, n_resamples, confidence_level=confidence_level, random_state=random_state,
                         progress=progress)


# wired here, above both modules, so that coco.py and voc.py do not import the bootstrap built on them
CocoEvaluation.bootstrap = _bootstrap  # type: ignore[attr-defined]
VocEvaluation.bootstrap = _voc_bootstrap  # type: ignore[attr-defined]
