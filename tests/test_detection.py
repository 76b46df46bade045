"""precall.detection: the 12 COCO numbers, the precision and recall arrays against
pycocotools on its own example and on random synthetic sets (crowds, empty images,
classes without ground truth, tied scores, more detections than max_dets)."""

from __future__ import annotations

import contextlib
import copy
import io
import json

import numpy as np
import pytest

from precall import detection

pycocotools = pytest.importorskip("pycocotools")
from pycocotools.coco import COCO  # noqa: E402
from pycocotools.cocoeval import COCOeval  # noqa: E402


def _pycocotools(gt_dict, results, **params):
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = copy.deepcopy(gt_dict)
        gt.createIndex()
        dt = gt.loadRes(copy.deepcopy(results)) if results else COCO()
        ev = COCOeval(gt, dt, "bbox")
        for key, value in params.items():
            setattr(ev.params, key, value)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev


def _assert_same(ours, theirs):
    np.testing.assert_allclose(ours.stats, theirs.stats, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.precision, theirs.eval["precision"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.recall, theirs.eval["recall"], rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def coco_example(shared_data_dir):
    folder = shared_data_dir / "coco_val2014_100"
    if not folder.exists():
        pytest.skip(f"{folder} not found")
    with open(folder / "instances_val2014_100.json") as fh:
        gt = json.load(fh)
    with open(folder / "instances_val2014_fakebbox100_results.json") as fh:
        results = json.load(fh)
    return gt, results


def test_pycocotools_example_all_twelve_numbers(coco_example):
    gt, results = coco_example
    ours = detection.evaluate_coco(detection.load_coco(gt, results))
    _assert_same(ours, _pycocotools(gt, results))
    # cocoapi's published example table (results/ of the COCO API) to 3 decimals
    published = [0.505, 0.697, 0.573, 0.586, 0.519, 0.501, 0.387, 0.594, 0.595, 0.640, 0.566, 0.564]
    np.testing.assert_allclose(ours.stats.round(3), published)


def synthetic(seed, n_images=30, n_classes=6, max_gt=6, dets_per_gt=3, crowd=0.08, decimals=1):
    """A random COCO set: jittered true detections, random false ones, tied scores."""
    rng = np.random.default_rng(seed)
    images = [{"id": int(i)} for i in rng.choice(1000, n_images, replace=False)]
    categories = [{"id": int(c), "name": f"c{c}"} for c in rng.choice(90, n_classes, replace=False) + 1]
    anns, results = [], []
    for img in images:
        n_gt = int(rng.integers(0, max_gt + 1)) if rng.random() > 0.1 else 0  # some empty images
        for _ in range(n_gt):
            cat = categories[int(rng.integers(0, n_classes - 1))]["id"]  # the last class: no ground truth
            x, y = rng.uniform(0, 400, 2)
            w, h = np.exp(rng.uniform(np.log(4), np.log(250), 2))
            box = [float(x), float(y), float(w), float(h)]
            anns.append({"id": len(anns) + 1, "image_id": img["id"], "category_id": cat, "bbox": box,
                         "area": float(w * h * rng.uniform(0.6, 1.0)), "iscrowd": int(rng.random() < crowd)})
            for _ in range(int(rng.integers(0, dets_per_gt + 1))):
                jitter = rng.normal(0, 0.15, 4) * [w, h, w, h]
                results.append({"image_id": img["id"], "category_id": cat,
                                "bbox": [float(v) for v in np.array(box) + jitter],
                                "score": float(np.round(rng.random(), decimals))})
        for _ in range(int(rng.integers(0, 5))):
            x, y = rng.uniform(0, 400, 2)
            w, h = np.exp(rng.uniform(np.log(4), np.log(250), 2))
            results.append({"image_id": img["id"], "category_id": categories[int(rng.integers(0, n_classes))]["id"],
                            "bbox": [float(x), float(y), float(w), float(h)],
                            "score": float(np.round(rng.random(), decimals))})
    return {"images": images, "annotations": anns, "categories": categories}, results


@pytest.mark.parametrize("seed", range(8))
def test_random_sets_equal_pycocotools(seed):
    gt, results = synthetic(seed)
    ours = detection.evaluate_coco(detection.load_coco(gt, results))
    _assert_same(ours, _pycocotools(gt, results))


@pytest.mark.parametrize("seed", range(3))
def test_more_detections_than_max_dets(seed):
    gt, results = synthetic(100 + seed, n_images=12, max_gt=8, dets_per_gt=6)
    for max_dets in ([1, 10, 100], [1, 3, 5]):
        ours = detection.evaluate_coco(detection.load_coco(gt, results), max_dets=tuple(max_dets))
        theirs = _pycocotools(gt, results, maxDets=max_dets)
        np.testing.assert_allclose(ours.precision, theirs.eval["precision"], atol=1e-12)
        np.testing.assert_allclose(ours.recall, theirs.eval["recall"], atol=1e-12)
        # pycocotools' first number always uses maxDets=100 (cocoapi #558); ours uses max_dets[-1]
        np.testing.assert_allclose(ours.stats[1:], theirs.stats[1:], atol=1e-12)
        if max_dets[-1] == 100:
            assert ours.stats[0] == pytest.approx(theirs.stats[0], abs=1e-12)


def test_custom_iou_thresholds_and_area_ranges():
    gt, results = synthetic(7)
    thresholds = np.array([0.3, 0.5, 0.75])
    ours = detection.evaluate_coco(detection.load_coco(gt, results), iou_thresholds=thresholds)
    theirs = _pycocotools(gt, results, iouThrs=thresholds)
    np.testing.assert_allclose(ours.precision, theirs.eval["precision"], atol=1e-12)


def test_group_ties_do_not_depend_on_input_order():
    gt, results = synthetic(3, decimals=1)
    base = detection.evaluate_coco(detection.load_coco(gt, results), ties="group")
    rng = np.random.default_rng(0)
    for _ in range(3):
        shuffled = [results[i] for i in rng.permutation(len(results))]
        again = detection.evaluate_coco(detection.load_coco(gt, shuffled), ties="group")
        np.testing.assert_array_equal(again.stats, base.stats)
    stable = detection.evaluate_coco(detection.load_coco(gt, results))
    assert not np.array_equal(stable.precision, base.precision)  # ties exist, so the orders differ


def test_user_ignore_flag_is_honoured():
    gt, results = synthetic(5)
    flagged = copy.deepcopy(gt)
    target = next(a for a in flagged["annotations"] if not a["iscrowd"])
    target["ignore"] = 1
    ours = detection.evaluate_coco(detection.load_coco(flagged, results))
    as_crowdless = detection.evaluate_coco(detection.load_coco(gt, results))
    cls = sorted(c["id"] for c in gt["categories"]).index(target["category_id"])
    n_before = as_crowdless.per_class[cls]["n_gt"]
    assert ours.per_class[cls]["n_gt"] == n_before - 1
    # pycocotools overwrites `ignore` with `iscrowd`: it still counts the ground truth
    theirs = _pycocotools(flagged, results)
    np.testing.assert_allclose(theirs.stats, as_crowdless.stats, atol=1e-12)


def test_per_class_table_and_text(coco_example):
    gt, results = coco_example
    ours = detection.evaluate_coco(detection.load_coco(gt, results))
    theirs = _pycocotools(gt, results)
    p = theirs.eval["precision"][:, :, :, 0, -1]
    for k, row in enumerate(ours.per_class):
        valid = p[:, :, k][p[:, :, k] > -1]
        assert row["AP"] == pytest.approx(valid.mean() if valid.size else -1, abs=1e-12)
    assert sum(row["n_det"] for row in ours.per_class) == len(results)
    text = ours.to_text()
    assert text.count("\n") == 11 and "maxDets=100 ] = 0.505" in text


def test_loader_errors_name_the_record():
    gt, results = synthetic(1)
    with pytest.raises(ValueError, match="results detection 0: no 'score'"):
        detection.load_coco(gt, [{k: v for k, v in results[0].items() if k != "score"}])
    bad = dict(results[0], image_id=-5)
    with pytest.raises(ValueError, match="not an image of the ground truth"):
        detection.load_coco(gt, [bad])
    with pytest.raises(ValueError, match=r"'bbox' must be \[x, y, w, h\]"):
        detection.load_coco(gt, [dict(results[0], bbox=[1, 2, 3])])
    with pytest.raises(ValueError, match="needs 'images' and 'annotations'"):
        detection.load_coco({"annotations": []}, results)
    with pytest.raises(ValueError, match="`max_dets`"):
        detection.evaluate_coco(detection.load_coco(gt, results), max_dets=(10, 1))


def test_class_tables_give_the_precision_rows(coco_example):
    gt, results = coco_example
    ev = detection.evaluate_coco(detection.load_coco(gt, results))
    checked = 0
    for k, row in enumerate(ev.per_class):
        if row["n_gt"] == 0 or row["n_det"] == 0:
            continue
        for t, iou in enumerate(ev.iou_thresholds):
            try:
                table = ev.threshold_table(row["id"], iou_threshold=float(iou))
            except ValueError:
                continue
            assert table.average_precision(method="coco") == pytest.approx(ev.precision[t, :, k, 0, -1].mean(), abs=1e-12)
            np.testing.assert_array_equal(table.ap_terms("coco").precision, ev.precision[t, :, k, 0, -1])
            checked += 1
    assert checked > 100
    with pytest.raises(ValueError, match="`class_id`"):
        ev.threshold_table(-1)
    with pytest.raises(ValueError, match="`iou_threshold`"):
        ev.threshold_table(ev.per_class[0]["id"], iou_threshold=0.42)


def test_cli_detection_coco(shared_data_dir, capsys):
    from precall.cli import main

    folder = shared_data_dir / "coco_val2014_100"
    gt, res = folder / "instances_val2014_100.json", folder / "instances_val2014_fakebbox100_results.json"
    assert main(["detection", "coco", str(gt), str(res), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    with open(gt) as fh, open(res) as fr:
        theirs = _pycocotools(json.load(fh), json.load(fr))
    np.testing.assert_allclose(list(out["stats"].values()), theirs.stats, atol=1e-12)
    assert main(["detection", "coco", str(gt), str(res), "--per-class"]) == 0
    text = capsys.readouterr().out
    assert "maxDets=100 ] = 0.505" in text and "#detections" in text
    assert main(["detection", "coco", str(gt), str(folder / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err
