"""Keypoint evaluation helpers: CrowdPose's protocol on top of :func:`~precall.detection.evaluate_coco`.

COCO keypoints need nothing beyond ``evaluate_coco(data, iou_type="keypoints")``
(pycocotools' OKS and its 10 numbers).  CrowdPose (Li et al., CVPR 2019) evaluates
14 keypoints with its own sigmas (:data:`CROWDPOSE_SIGMAS`), an OKS scale of
``0.53 * w * h`` of the ground-truth box instead of the annotation's area, no
area ranges, and AP on three image subsets by the image's ``crowdIndex``: easy
``[0, 0.1)``, medium ``[0.1, 0.8)``, hard ``[0.8, 1]``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .coco import evaluate_coco
from .io import _load_coco_named, _load_json, _source

__all__ = ["CROWDPOSE_SIGMAS", "evaluate_crowdpose"]

#: CrowdPose's OKS sigmas of its 14 keypoints
CROWDPOSE_SIGMAS = np.array([.79, .79, .72, .72, .62, .62, 1.07, 1.07, .87, .87, .89, .89, .79, .79]) / 10.0

_CROWD_LEVELS = {"easy": (0.0, 0.1), "medium": (0.1, 0.8), "hard": (0.8, np.inf)}


def evaluate_crowdpose(gt: Any, results: Any, *, sigmas: Any = None) -> dict[str, float]:
    """CrowdPose's keypoint numbers: AP, AP50, AP75, AR, AR50, AR75 and AP easy / medium / hard.

    ``gt`` and ``results`` are CrowdPose JSON (paths or parsed); every image needs a
    ``crowdIndex``.  Each number is pycocotools' OKS evaluation (``maxDets`` 20, the
    whole area range) with the ground-truth area set to ``0.53 * w * h`` of its box;
    the easy / medium / hard APs evaluate the images of each crowd-index range (-1
    when a range has no image).

    Examples
    --------
    >>> from precall.detection import evaluate_crowdpose
    >>> gt = {"images": [{"id": 1, "crowdIndex": 0.5}], "categories": [{"id": 1, "name": "person"}],
    ...       "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 20],
    ...                        "num_keypoints": 14, "iscrowd": 0, "keypoints": [5, 5, 2] * 14}]}
    >>> res = [{"image_id": 1, "category_id": 1, "score": 0.9, "keypoints": [5, 5, 1] * 14}]
    >>> out = evaluate_crowdpose(gt, res)
    >>> round(out["AP"], 12), round(out["AP_medium"], 12), out["AP_hard"]
    (1.0, 1.0, -1.0)
    """
    g = _load_json(gt, "ground truth")
    if not isinstance(g, dict) or not isinstance(g.get("annotations"), list) or not isinstance(g.get("images"), list):
        raise ValueError("ground truth: a CrowdPose dataset needs 'images' and 'annotations' lists")
    # a copy of what changes (each annotation's area), not of the whole: the caller's JSON is left as it
    # was, and no nesting is walked (a deep copy recursed per level of any key)
    g = dict(g, annotations=[dict(a) if isinstance(a, dict) else a for a in g["annotations"]])
    for i, a in enumerate(g["annotations"]):
        box = a.get("bbox") if isinstance(a, dict) else None
        if not isinstance(box, list) or len(box) != 4:
            raise ValueError(f"ground truth annotation {i}: 'bbox' must be [x, y, w, h]")
        a["area"] = box[2] * box[3] * 0.53
    levels: dict[str, list[Any]] = {name: [] for name in _CROWD_LEVELS}
    for i, img in enumerate(g["images"]):
        ci = img.get("crowdIndex") if isinstance(img, dict) else None
        if isinstance(ci, bool) or not isinstance(ci, (int, float)):
            raise ValueError(f"ground truth image {i}: no numeric 'crowdIndex' (CrowdPose images have one)")
        for name, (lo, hi) in _CROWD_LEVELS.items():
            if lo <= ci < hi:
                levels[name].append(img.get("id"))
    # evaluated by CrowdPose's rules here; errors and warnings name the files given
    data = dataclasses.replace(_load_coco_named(g, results, _source(gt), _source(results)), crowd_index=None)
    sig = CROWDPOSE_SIGMAS if sigmas is None else sigmas
    whole = {"all": (0.0, 1e5**2)}
    ev = evaluate_coco(data, iou_type="keypoints", kpt_oks_sigmas=sig, area_ranges=whole)
    out = dict(zip(("AP", "AP50", "AP75"), ev.stats[:3].tolist()))
    out.update(dict(zip(("AR", "AR50", "AR75"), ev.stats[5:8].tolist())))
    for name, ids in levels.items():
        if not ids:
            out[f"AP_{name}"] = -1.0
            continue
        sub = evaluate_coco(data.select_images(ids), iou_type="keypoints", kpt_oks_sigmas=sig, area_ranges=whole)
        out[f"AP_{name}"] = float(sub.stats[0])
    return out
