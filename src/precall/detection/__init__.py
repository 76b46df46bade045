"""Object detection: COCO and PASCAL VOC mAP on precall's ranking core.

Detection evaluation is *matching* (which detection hits which ground-truth
box) followed by exactly the ranking precall already has: the detections of a
class, ranked by score, are true or false positives, ``n_pos`` is the number of
ground truths (more than the final TP when some are never found), and an AP
convention turns that count table into a number.

Modules: :mod:`~precall.detection.io` (loaders, :class:`DetectionSet`),
:mod:`~precall.detection.coco` (pycocotools' protocol), :mod:`~precall.detection.voc`
(Detectron's ``voc_eval``); matching and masks are internal.
"""

from __future__ import annotations

from .coco import AREA_RANGES, COCO_KEYPOINT_SIGMAS, IOU_THRESHOLDS, KEYPOINT_AREA_RANGES, CocoEvaluation, evaluate_coco
from .io import BOX_FORMATS, DetectionSet, DetectionWarning, load_coco, load_text, load_voc
from .metric import MeanAveragePrecision
from .keypoints import CROWDPOSE_SIGMAS, evaluate_crowdpose
from .voc import VocEvaluation, evaluate_voc

__all__ = [
    "AREA_RANGES", "BOX_FORMATS", "COCO_KEYPOINT_SIGMAS", "CROWDPOSE_SIGMAS", "KEYPOINT_AREA_RANGES", "MeanAveragePrecision", "IOU_THRESHOLDS", "CocoEvaluation", "DetectionSet", "DetectionWarning", "VocEvaluation",
    "evaluate_coco", "evaluate_crowdpose", "evaluate_voc", "load_coco", "load_text", "load_voc",
]
