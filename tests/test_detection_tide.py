"""TIDE-style error breakdown (issue 24, item 3): equal to tidecv on its default settings, on
precall's matching (its AP equals the COCO evaluation's), at every COCO IoU threshold."""

from __future__ import annotations

import numpy as np
import pytest

from precall import detection

tidecv = pytest.importorskip("tidecv")


def scene(seed, n_images=40, n_classes=4):
    """Random COCO data with every error type: class confusions, poor boxes, duplicates, background
    detections, missed objects; continuous scores (no ties), every class with ground truth, no crowd."""
    rng = np.random.default_rng(seed)
    images = [{"id": int(i) + 1} for i in range(n_images)]
    cats = [{"id": c + 1, "name": f"c{c + 1}"} for c in range(n_classes)]
    anns, res = [], []
    for img in images:
        for _ in range(int(rng.integers(0, 6))):
            c = int(rng.integers(1, n_classes + 1))
            w, h = rng.uniform(10, 120, 2)
            box = np.array([*rng.uniform(0, 400, 2), w, h])
            anns.append({"id": len(anns) + 1, "image_id": img["id"], "category_id": c, "bbox": box.tolist(),
                         "area": float(w * h), "iscrowd": 0})
            for _ in range(int(rng.integers(0, 3))):
                jitter = rng.normal(0, rng.choice([0.05, 0.3]), 4) * [w, h, w, h]
                cls = c if rng.random() < 0.8 else int(rng.integers(1, n_classes + 1))
                res.append({"image_id": img["id"], "category_id": cls, "bbox": (box + jitter).tolist(),
                            "score": float(rng.random())})
        for _ in range(int(rng.integers(0, 3))):
            res.append({"image_id": img["id"], "category_id": int(rng.integers(1, n_classes + 1)),
                        "bbox": [*rng.uniform(0, 400, 2).tolist(), *rng.uniform(10, 120, 2).tolist()],
                        "score": float(rng.random())})
    return {"images": images, "annotations": anns, "categories": cats}, res


def _tidecv(gt, res, pos=0.5, bg=0.1):
    g, p = tidecv.Data("gt"), tidecv.Data("res")
    for img in gt["images"]:
        g.add_image(img["id"], str(img["id"]))
    for c in gt["categories"]:
        g.add_class(c["id"], c["name"])
    for a in gt["annotations"]:
        g.add_ground_truth(a["image_id"], a["category_id"], a["bbox"])
    for r in res:
        p.add_detection(r["image_id"], r["category_id"], r["score"], r["bbox"])
    tide = tidecv.TIDE(pos_threshold=pos, background_threshold=bg)
    run = tide.evaluate(g, p, name="res")
    main = {e.short_name: v for e, v in run.fix_main_errors().items()}
    special = {e.short_name: v for e, v in run.fix_special_errors().items()}
    counts = {e.short_name: v for e, v in run.count_errors().items()}
    return run.ap, main, special, counts


TIDE_GRID = np.array([i / 100 for i in range(101)])  # tidecv's recall thresholds (not np.linspace's)
SHORT = {"classification": "Cls", "localisation": "Loc", "both": "Both", "duplicate": "Dupe", "background": "Bkg",
         "missed": "Miss"}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("pos, bg", [(0.5, 0.1), (0.75, 0.1), (0.5, 0.3)])
def test_equal_to_tidecv(seed, pos, bg):
    gt, res = scene(seed)
    assert len({a["category_id"] for a in gt["annotations"]}) == 4  # tidecv counts classes without GT as AP 0
    ap, main, special, counts = _tidecv(gt, res, pos, bg)
    eb = detection.error_breakdown(detection.load_coco(gt, res), iou_thresholds=[pos], background_threshold=bg,
                                   recall_thresholds=TIDE_GRID)
    assert 100 * eb.ap[0] == pytest.approx(ap, abs=1e-9)
    for name, short in SHORT.items():
        assert eb.counts[name][0] == counts[short], name
        assert 100 * eb.delta[name][0] == pytest.approx(main[short], abs=1e-9), name
    assert 100 * eb.delta["false positives"][0] == pytest.approx(special["FalsePos"], abs=1e-9)
    assert 100 * eb.delta["false negatives"][0] == pytest.approx(special["FalseNeg"], abs=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_every_coco_threshold_equals_tidecv_there_and_the_evaluation(seed):
    gt, res = scene(100 + seed, n_images=25)
    data = detection.load_coco(gt, res)
    eb = detection.error_breakdown(data, recall_thresholds=TIDE_GRID)
    ev = detection.evaluate_coco(data, recall_thresholds=TIDE_GRID)
    assert eb.ap.mean() == pytest.approx(ev.stats[0], abs=1e-12)  # precall's own AP, mAP@[.5:.95]
    assert eb.at(0.5)["AP"] == pytest.approx(ev.stats[1], abs=1e-12)
    assert eb.at(0.75)["AP"] == pytest.approx(ev.stats[2], abs=1e-12)
    for t, pos in enumerate(eb.iou_thresholds.tolist()):
        ap, main, special, counts = _tidecv(gt, res, pos)
        assert 100 * eb.ap[t] == pytest.approx(ap, abs=1e-9)
        for name, short in SHORT.items():
            assert eb.counts[name][t] == counts[short]
            assert 100 * eb.delta[name][t] == pytest.approx(main[short], abs=1e-9)
        # at 0.95 some classes have no true positive: the false-negative fix leaves them no ground truth
        assert 100 * eb.delta["false positives"][t] == pytest.approx(special["FalsePos"], abs=1e-9)
        assert 100 * eb.delta["false negatives"][t] == pytest.approx(special["FalseNeg"], abs=1e-9)
    mean = eb.at()
    assert mean["AP"] == pytest.approx(eb.ap.mean()) and mean["missed"] == pytest.approx(eb.delta["missed"].mean())


def test_fp_fn_totals_are_counted_from_the_matching():
    gt, res = scene(7)
    data = detection.load_coco(gt, res)
    eb = detection.error_breakdown(data, iou_thresholds=[0.5, 0.75])
    ev = detection.evaluate_coco(data, iou_thresholds=[0.5, 0.75])
    for t, iou in enumerate((0.5, 0.75)):
        tps = sum(int(ev.threshold_table(r["id"], iou_threshold=iou).tp[-1]) for r in ev.per_class if r["n_gt"] > 0
                  and r["n_det"] > 0)
        assert eb.n_fp[t] == len(res) - tps  # no crowd, no ignored detection
        assert eb.n_fn[t] == len(gt["annotations"]) - tps
        # every false positive has exactly one error type; missed ground truths are false negatives
        fp_types = sum(int(eb.counts[k][t]) for k in ("classification", "localisation", "both", "duplicate",
                                                      "background"))
        assert fp_types == eb.n_fp[t] and eb.counts["missed"][t] <= eb.n_fn[t]


@pytest.mark.parametrize("kwargs, error, match", [
    ({"iou_type": "keypoints"}, ValueError, "`iou_type`"),
    ({"background_threshold": 1.5}, ValueError, "`background_threshold`"),
    ({"background_threshold": float("nan")}, ValueError, "`background_threshold`"),
    ({"background_threshold": "0.1"}, TypeError, "`background_threshold`"),
    ({"background_threshold": 0.6, "iou_thresholds": [0.5]}, ValueError, "below every IoU threshold"),
    ({"max_dets": 0}, ValueError, "`max_dets`"),
    ({"max_dets": 2.5}, ValueError, "`max_dets`"),
    ({"iou_thresholds": [1.5]}, ValueError, "`iou_thresholds`"),
])
def test_bad_options(kwargs, error, match):
    gt, res = scene(1, n_images=3)
    with pytest.raises(error, match=match):
        detection.error_breakdown(detection.load_coco(gt, res), **kwargs)


def test_fixes_that_leave_a_class_without_ground_truth_equal_tidecv():
    """At IoU 0.95 no class has a true positive: the false-negative fix removes every ground truth
    (tidecv: AP 0 for a class with detections, not in the mean without)."""
    gt, res = scene(3, n_images=60)
    eb = detection.error_breakdown(detection.load_coco(gt, res), iou_thresholds=[0.9, 0.95],
                                   recall_thresholds=TIDE_GRID)
    for t, pos in enumerate((0.9, 0.95)):
        ap, main, special, counts = _tidecv(gt, res, pos)
        assert 100 * eb.ap[t] == pytest.approx(ap, abs=1e-9)
        assert 100 * eb.delta["false negatives"][t] == pytest.approx(special["FalseNeg"], abs=1e-9)
        assert 100 * eb.delta["missed"][t] == pytest.approx(main["Miss"], abs=1e-9)
