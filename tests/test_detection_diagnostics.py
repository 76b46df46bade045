"""Operating points and the confusion matrix (issue 24, item 2): equal to brute force from
pycocotools' matching and to ultralytics' confusion matrix transcribed (tests/oracles.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import oracles
from precall import detection

pytest.importorskip("pycocotools")
from test_detection import _pycocotools, synthetic  # noqa: E402
from test_detection_tide import scene  # noqa: E402


def _coco_eval(gt, res):
    return _pycocotools(gt, res)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("make", [scene, synthetic])  # synthetic: tied scores, crowds, a class without ground truth
def test_operating_points_equal_brute_force(seed, make):
    gt, res = make(seed)
    data = detection.load_coco(gt, res)
    ev = detection.evaluate_coco(data)
    theirs = _coco_eval(gt, res)
    rng = np.random.default_rng(seed)
    for iou in (0.5, 0.75):
        for conf in (0.0, 0.3, float(rng.choice([r["score"] for r in res])), 0.9, 2.0):
            op = detection.operating_points(ev, conf, iou_threshold=iou)
            for row in op.per_class:
                tp, fp, n_gt = oracles.coco_counts_at(theirs, row["id"], conf, iou)
                p, r, f1 = oracles.prf(tp, fp, n_gt)
                assert row["n_gt"] == n_gt
                assert row["precision"] == pytest.approx(p, abs=1e-12)
                assert (math.isnan(r) and math.isnan(row["recall"])) or row["recall"] == pytest.approx(r, abs=1e-12)
                assert row["f1"] == pytest.approx(f1, abs=1e-12)
        op = detection.operating_points(ev, iou_threshold=iou)
        for row in op.per_class:
            if row["n_gt"] == 0:
                assert math.isnan(row["best_f1"])
                continue
            f1, thr = oracles.best_f1_brute_force(theirs, row["id"], iou)
            assert row["best_f1"] == pytest.approx(max(f1, 0.0), abs=1e-12)
            if f1 > 0:
                assert row["best_threshold"] == thr
            # the curves are the same counts at every distinct score
            thresholds, p, r, f = op.curves[row["id"]]
            for k in rng.choice(thresholds.size, min(5, thresholds.size), replace=False).tolist():
                expected = oracles.prf(*oracles.coco_counts_at(theirs, row["id"], thresholds[k], iou))
                assert (p[k], r[k], f[k]) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_common_threshold_maximises_the_mean_f1(seed):
    gt, res = scene(20 + seed)
    ev = detection.evaluate_coco(detection.load_coco(gt, res))
    theirs = _coco_eval(gt, res)
    op = detection.operating_points(ev)
    classes = [r["id"] for r in op.per_class if r["n_gt"] > 0]
    best = -1.0
    for s in sorted({r["score"] for r in res}, reverse=True):  # brute force over every score
        mean = np.mean([oracles.prf(*oracles.coco_counts_at(theirs, c, s))[2] for c in classes])
        best = max(best, mean)
    assert op.common["f1"] == pytest.approx(best, abs=1e-12)
    at = np.mean([oracles.prf(*oracles.coco_counts_at(theirs, c, op.common["threshold"]))[2] for c in classes])
    assert at == pytest.approx(op.common["f1"], abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("conf, iou", [(0.25, 0.45), (0.0, 0.5), (0.6, 0.3), (0.5, 0.7)])
def test_confusion_matrix_equals_ultralytics(seed, conf, iou):
    gt, res = scene(seed, n_images=30)
    cm = detection.confusion_matrix(detection.load_coco(gt, res), confidence=conf, iou_threshold=iou)
    expected = oracles.ultralytics_confusion_matrix(gt, res, conf, iou)
    np.testing.assert_array_equal(cm.matrix, expected)
    # every ground truth and every kept detection counted once
    assert cm.matrix[:, :-1].sum() == len(gt["annotations"])
    assert cm.matrix[:-1, :].sum() == sum(r["score"] >= conf for r in res)


def test_confusion_matrix_with_crowds_and_empty_images():
    gt, res = synthetic(3, crowd=0.3)
    cm = detection.confusion_matrix(detection.load_coco(gt, res))
    np.testing.assert_array_equal(cm.matrix, oracles.ultralytics_confusion_matrix(gt, res))
    assert cm.labels[-1] == "background" and len(cm.labels) == len(gt["categories"]) + 1


@pytest.mark.parametrize("call, error, match", [
    (lambda ev, d: detection.operating_points(ev, float("nan")), ValueError, "`confidence`"),
    (lambda ev, d: detection.operating_points(ev, "0.5"), TypeError, "`confidence`"),
    (lambda ev, d: detection.operating_points(ev, 0.5, iou_threshold=0.52), ValueError, "`iou_threshold`"),
    (lambda ev, d: detection.operating_points(ev, 0.5, iou_threshold=2), ValueError, "`iou_threshold`"),
    (lambda ev, d: detection.operating_points(ev, 0.5, area="tiny"), ValueError, "`area`"),
    (lambda ev, d: detection.confusion_matrix(d, confidence=float("inf")), ValueError, "`confidence`"),
    (lambda ev, d: detection.confusion_matrix(d, iou_threshold=-0.1), ValueError, "`iou_threshold`"),
    (lambda ev, d: detection.confusion_matrix(d, iou_threshold=None), TypeError, "`iou_threshold`"),
    (lambda ev, d: detection.confusion_matrix(d, iou_type="keypoints"), ValueError, "`iou_type`"),
])
def test_bad_options(call, error, match):
    gt, res = scene(1, n_images=3)
    data = detection.load_coco(gt, res)
    with pytest.raises(error, match=match):
        call(detection.evaluate_coco(data), data)
