"""precall.detection.MeanAveragePrecision (17.5): the per-batch API equals evaluate_coco, pycocotools
on random sets (xyxy / xywh / cxcywh boxes, crowds, masks) and torchmetrics on its documented example."""

from __future__ import annotations

import numpy as np
import pytest

from precall import detection

pytest.importorskip("pycocotools")
from test_detection import _assert_same, _pycocotools, _polygon_set, _pycocotools_segm, synthetic  # noqa: E402


def _per_image(gt, results, box_format="xyxy", dtype=np.float64):
    """COCO dicts as torchmetrics-style per-image dicts (image order: the ground truth's, sorted by id)."""
    preds, targets = [], []
    for img in sorted(gt["images"], key=lambda i: i["id"]):
        anns = [a for a in gt["annotations"] if a["image_id"] == img["id"]]
        dets = [r for r in results if r["image_id"] == img["id"]]

        def fmt(xywh):
            b = np.array(xywh, dtype=np.float64).reshape(-1, 4)
            if box_format == "xyxy":
                b = np.column_stack([b[:, 0], b[:, 1], b[:, 0] + b[:, 2], b[:, 1] + b[:, 3]])
            elif box_format == "cxcywh":
                b = np.column_stack([b[:, 0] + b[:, 2] / 2, b[:, 1] + b[:, 3] / 2, b[:, 2], b[:, 3]])
            return b.astype(dtype)

        targets.append({"boxes": fmt([a["bbox"] for a in anns]), "labels": np.array([a["category_id"] for a in anns], dtype=np.int64),
                        "iscrowd": np.array([a["iscrowd"] for a in anns]), "area": np.array([a["area"] for a in anns])})
        preds.append({"boxes": fmt([r["bbox"] for r in dets]), "labels": np.array([r["category_id"] for r in dets], dtype=np.int64),
                      "scores": np.array([r["score"] for r in dets])})
    return preds, targets


def _renumbered(gt, results):
    """The same set with image ids 0, 1, ... in sorted order (the metric's image ids)."""
    ids = {img["id"]: k for k, img in enumerate(sorted(gt["images"], key=lambda i: i["id"]))}
    gt = dict(gt, images=[dict(i, id=ids[i["id"]]) for i in gt["images"]],
              annotations=[dict(a, image_id=ids[a["image_id"]]) for a in gt["annotations"]])
    return gt, [dict(r, image_id=ids[r["image_id"]]) for r in results]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("box_format", ["xyxy", "xywh"])
def test_batches_equal_pycocotools(seed, box_format):
    gt, results = synthetic(300 + seed)
    preds, targets = _per_image(gt, results, box_format)
    metric = detection.MeanAveragePrecision(box_format=box_format)
    for lo in range(0, len(preds), 7):  # batches of 7 images
        metric.update(preds[lo:lo + 7], targets[lo:lo + 7])
    ours = metric.evaluation()
    gt0, res0 = _renumbered(gt, results)
    if box_format == "xywh":  # the same boxes, bit for bit: pycocotools' numbers
        _assert_same(ours, _pycocotools(gt0, res0))
    else:  # x2 - x1 need not give w back to the last bit: the result of evaluate_coco on those boxes
        assert np.abs(ours.stats - _pycocotools(gt0, res0).stats).max() < 1e-9


def test_merge_equals_one_metric_and_cxcywh():
    gt, results = synthetic(310)
    preds, targets = _per_image(gt, results, "cxcywh")
    whole = detection.MeanAveragePrecision(box_format="cxcywh")
    whole.update(preds, targets)
    parts = [detection.MeanAveragePrecision(box_format="cxcywh") for _ in range(3)]
    for k, part in enumerate(parts):
        part.update(preds[k::3][:0] + preds[10 * k:10 * k + 10], targets[10 * k:10 * k + 10])
    merged = parts[0].merge(parts[1], parts[2])
    assert len(merged) == len(whole) == 30
    np.testing.assert_array_equal(merged.evaluation().precision, whole.evaluation().precision)
    with pytest.raises(ValueError, match="different options"):
        parts[0].merge(detection.MeanAveragePrecision(box_format="xywh"))


def test_masks_as_boolean_arrays_equal_pycocotools():
    from pycocotools import mask as mask_utils

    gt, results = _polygon_set(1)
    gt0, res0 = _renumbered(gt, results)
    preds, targets = [], []
    for img in sorted(gt0["images"], key=lambda i: i["id"]):
        h, w = img["height"], img["width"]
        anns = [a for a in gt0["annotations"] if a["image_id"] == img["id"]]
        dets = [r for r in res0 if r["image_id"] == img["id"]]

        def dense(seg):
            rle = mask_utils.frPyObjects(seg, h, w)
            rle = mask_utils.merge(rle) if isinstance(rle, list) else rle
            return mask_utils.decode(rle).astype(bool)

        targets.append({"boxes": np.array([a["bbox"] for a in anns]).reshape(-1, 4),
                        "labels": np.array([a["category_id"] for a in anns], dtype=np.int64),
                        "iscrowd": np.array([a["iscrowd"] for a in anns]), "area": np.array([a["area"] for a in anns]),
                        "masks": np.array([dense(a["segmentation"]) for a in anns]).reshape(-1, h, w)})
        preds.append({"boxes": np.zeros((len(dets), 4)), "scores": np.array([r["score"] for r in dets]),
                      "labels": np.array([r["category_id"] for r in dets], dtype=np.int64),
                      "masks": [r["segmentation"] for r in dets]})  # RLE dicts as given
    metric = detection.MeanAveragePrecision(iou_type="segm", box_format="xywh")
    metric.update(preds, targets)
    _assert_same(metric.evaluation(), _pycocotools_segm(gt0, res0))


def test_bad_input_names_the_image():
    metric = detection.MeanAveragePrecision()
    good = {"boxes": np.array([[0.0, 0, 10, 10]]), "labels": np.array([1]), "scores": np.array([0.5])}
    with pytest.raises(ValueError, match=r"preds\[1\]\['boxes'\]\[0\] .* negative width"):
        metric.update([good, dict(good, boxes=np.array([[10.0, 0, 0, 10]]))], [good, good])
    with pytest.raises(ValueError, match=r"targets\[0\]: no 'labels'"):
        metric.update([good], [{"boxes": good["boxes"]}])
    with pytest.raises(ValueError, match=r"preds\[0\]\['labels'\]: must be N = 1 integers"):
        metric.update([dict(good, labels=np.array([0.5]))], [good])
    with pytest.raises(ValueError, match="one of each per image"):
        metric.update([good], [])
    assert len(metric) == 0  # nothing stored from a refused batch
    empty = detection.MeanAveragePrecision().evaluation()
    assert (empty.stats == -1).all()


def test_torchmetrics_documented_example_and_random_set():
    import importlib
    import os

    from oracles import torchvision_stand_in

    require = os.environ.get("PRECALL_REQUIRE_TORCH") == "1"  # CI: torch missing is a failure
    torch = importlib.import_module("torch") if require else pytest.importorskip("torch")
    tm = importlib.import_module("torchmetrics.detection.mean_ap") if require else \
        pytest.importorskip("torchmetrics.detection.mean_ap")
    restore = torchvision_stand_in()  # torchmetrics needs torchvision's box_convert for bbox
    try:
        _torchmetrics_example_and_random_set(torch, tm)
    finally:
        restore()


def _torchmetrics_example_and_random_set(torch, tm):
    preds = [{"boxes": torch.tensor([[258.0, 41.0, 606.0, 285.0]]), "scores": torch.tensor([0.536]),
              "labels": torch.tensor([0])}]
    target = [{"boxes": torch.tensor([[214.0, 41.0, 562.0, 285.0]]), "labels": torch.tensor([0])}]
    ours = detection.MeanAveragePrecision()
    ours.update(preds, target)  # torch tensors, without precall importing torch
    ev = ours.evaluation()
    theirs = tm.MeanAveragePrecision(iou_type="bbox", backend="pycocotools")
    theirs.update(preds, target)
    out = theirs.compute()
    names = ["map", "map_50", "map_75", "map_small", "map_medium", "map_large", "mar_1", "mar_10", "mar_100",
             "mar_small", "mar_medium", "mar_large"]
    np.testing.assert_allclose(ev.stats, [float(out[k]) for k in names], atol=1e-6)  # torchmetrics: float32
    np.testing.assert_allclose(ev.stats[:3], [0.6, 1.0, 1.0], atol=1e-12)  # its documentation's values
    # a random set in float32 tensors, batch by batch
    gt, results = synthetic(320)
    p, t = _per_image(gt, results, "xyxy", np.float32)
    tp = [{k: torch.from_numpy(v) for k, v in d.items()} for d in p]
    tt = [{k: torch.from_numpy(v) for k, v in d.items()} for d in t]
    # torchmetrics' thresholds are float32 (torch.linspace): the same values give its numbers
    theirs = tm.MeanAveragePrecision(iou_type="bbox", backend="pycocotools")
    f32 = {"iou_thresholds": np.asarray(theirs.iou_thresholds, dtype=np.float64),
           "recall_thresholds": np.asarray(theirs.rec_thresholds, dtype=np.float64)}
    assert 0 < np.abs(f32["recall_thresholds"] - np.linspace(0, 1, 101)).max() < 1e-7
    ours = detection.MeanAveragePrecision(**f32)
    for lo in range(0, len(tp), 8):
        ours.update(tp[lo:lo + 8], tt[lo:lo + 8])
        theirs.update(tp[lo:lo + 8], tt[lo:lo + 8])
    out = theirs.compute()
    np.testing.assert_allclose(ours.evaluation().stats, [float(out[k]) for k in names], atol=1e-6)


def test_result_masks_decoded_once(monkeypatch):
    """load_coco decodes each compressed RLE once (for its area and box); the evaluation reuses the runs."""
    from precall.detection import _rle

    gt, results = _polygon_set(2)
    seen = []
    original = _rle._decode_strings
    monkeypatch.setattr(_rle, "_decode_strings", lambda texts: seen.append(len(texts)) or original(texts))
    data = detection.load_coco(gt, results)
    n_strings = sum(isinstance(r["segmentation"], dict) and isinstance(r["segmentation"]["counts"], str)
                    for r in results)
    assert n_strings > 0 and sum(seen) == n_strings
    ev = detection.evaluate_coco(data, iou_type="segm")
    assert sum(seen) == n_strings  # nothing decoded again
    _assert_same(ev, _pycocotools_segm(gt, results))
    monkeypatch.setattr(detection.io, "KEPT_RUNS", 0)  # beyond the budget: decoded again per chunk, same numbers
    again = detection.evaluate_coco(detection.load_coco(gt, results), iou_type="segm")
    assert sum(seen) > 2 * n_strings - 1
    np.testing.assert_array_equal(again.precision, ev.precision)


def test_merging_a_metric_into_itself_is_refused():
    """``m.merge(m)`` (or one metric twice) doubled its images and changed every later number silently."""
    box = np.array([[10.0, 10, 50, 50]])
    m = detection.MeanAveragePrecision()
    m.update([dict(boxes=box, scores=np.array([0.5]), labels=np.array([1]))], [dict(boxes=box, labels=np.array([1]))])
    other = detection.MeanAveragePrecision()
    for args in ((m,), (other, other)):
        with pytest.raises(ValueError, match="itself or the same metric twice"):
            m.merge(*args)
    assert len(m._images) == 1


def test_classes_beyond_int32_are_not_wrapped():
    """``classes`` is torchmetrics' int32 where the labels fit; a label of 2**32 + 7 was shown as 7."""
    box = np.array([[10.0, 10, 50, 50]])
    m = detection.MeanAveragePrecision(class_metrics=True)
    for label in (2**32 + 7, 7):
        m.update([dict(boxes=box, scores=np.array([0.5]), labels=np.array([label]))],
                 [dict(boxes=box, labels=np.array([label]))])
    assert m.compute()["classes"].tolist() == [7, 2**32 + 7]
    small = detection.MeanAveragePrecision()
    small.update([dict(boxes=box, scores=np.array([0.5]), labels=np.array([3]))], [dict(boxes=box, labels=np.array([3]))])
    assert small.compute()["classes"].dtype == np.int32
