"""One number, every route: a COCO summary number that pycocotools defines (mAP, AP at one IoU threshold,
a class's AP) is summed in pycocotools' order whichever way it is asked for, so every route gives the
same bits as :attr:`CocoEvaluation.stats` (itself pycocotools' to the bit).

pycocotools' ``summarize`` takes the mean of the whole precision block (IoU threshold, recall threshold,
class); a mean of per-class means differs in the last bit in about half of random sets."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from precall import detection
from precall.detection.bootstrap import replicate

pytest.importorskip("pycocotools")
from test_detection import _pycocotools, synthetic  # noqa: E402

SETS = [(seed, ties) for seed in range(8) for ties in ("stable", "group")]


def _load(gt, results):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", detection.DetectionWarning)
        return detection.load_coco(gt, results)


def _table_ap(ev, class_id, iou):
    try:
        return ev.threshold_table(class_id, iou_threshold=iou).average_precision(method="coco")
    except ValueError as exc:  # no counted detection: AP 0
        assert "no counted detection" in str(exc)
        return 0.0


@pytest.mark.parametrize("seed, ties", SETS)
def test_every_route_to_a_coco_summary_number_gives_the_same_bits(seed, ties):
    gt, results = synthetic(900 + seed, n_images=40, decimals=1 if seed % 2 else 3)
    data = _load(gt, results)
    ev = detection.evaluate_coco(data, ties=ties)
    if ties == "stable":  # pycocotools defines these numbers: the same bits
        theirs = _pycocotools(gt, results)
        assert ev.stats.tolist() == theirs.stats.tolist()
        p = theirs.eval["precision"][:, :, :, 0, -1]
        for k, row in enumerate(ev.per_class):  # a class's AP: pycocotools with catIds=[k], detectron2
            valid = p[:, :, k][p[:, :, k] > -1]
            assert row["AP"] == (float(np.mean(valid)) if valid.size else -1.0)
    mean_ap, ap50, ap75 = ev.stats[:3].tolist()
    # mean_average_precision("coco"): AP at one IoU threshold
    assert ev.mean_average_precision("coco", iou_threshold=0.5) == ap50
    assert ev.mean_average_precision("coco", iou_threshold=0.75) == ap75
    # ... from an evaluation on another recall grid: still COCO's 101-point number, from the class tables
    other = detection.evaluate_coco(data, ties=ties, recall_thresholds=np.arange(101) / 100)
    assert other.mean_average_precision("coco", iou_threshold=0.5) == ap50
    # a class's count table, its COCO AP: the per-class AP50 / AP75 (grouped ties too)
    for row in ev.per_class:
        if row["n_gt"] > 0:
            assert _table_ap(ev, row["id"], 0.5) == row["AP50"]
            assert _table_ap(ev, row["id"], 0.75) == row["AP75"]
    # the bootstrap: its estimate, and the replicate that draws every image once
    ci = ev.bootstrap(3, random_state=0)
    assert ci.estimate == {"mAP": mean_ap, "AP50": ap50, "AP75": ap75}
    assert ci.per_class_estimate == {row["id"]: row["AP"] for row in ev.per_class}
    once = replicate(ev, np.ones(ev.n_images, dtype=int))
    assert (once["mAP"], once["AP50"], once["AP75"]) == (mean_ap, ap50, ap75)
    assert once["per_class"] == {row["id"]: row["AP"] for row in ev.per_class}
    # the TIDE breakdown's AP (pycocotools' matching and order)
    if ties == "stable":
        eb = detection.error_breakdown(data)
        assert eb.at(0.5)["AP"] == ap50 and eb.at(0.75)["AP"] == ap75 and eb.at(None)["AP"] == mean_ap
        assert eb.ap[0] == ap50

