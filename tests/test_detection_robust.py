"""precall.detection on awkward input: empty results and ground truths, the order of
detections and ground truths under ties="group", impossible boxes, odd ids and names,
and the --plot file names (issues 15 and 17.3)."""

from __future__ import annotations

import copy
import json
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from precall import detection
from precall.cli import main

pytest.importorskip("pycocotools")
from test_detection import _assert_same, _pycocotools, synthetic  # noqa: E402


def _quiet_load(gt, results):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", detection.DetectionWarning)
        return detection.load_coco(gt, results)


# ------------------------------------------------------------------ empty inputs
def test_empty_results_give_pycocotools_numbers():
    gt, _ = synthetic(11)
    ours = detection.evaluate_coco(detection.load_coco(gt, []))
    theirs = _pycocotools(gt, [])  # pycocotools' loadRes([]) raises: an empty result set instead
    _assert_same(ours, theirs)
    assert (ours.stats[[0, 1, 2, 6, 7, 8]] == 0).all()


def test_ground_truth_without_annotations_is_undefined_everywhere():
    gt, results = synthetic(12)
    empty = dict(gt, annotations=[])
    ours = detection.evaluate_coco(detection.load_coco(empty, results))
    _assert_same(ours, _pycocotools(empty, results))
    assert (ours.stats == -1).all() and all(r["AP"] == -1 for r in ours.per_class)
    both = detection.evaluate_coco(detection.load_coco(empty, []))
    assert (both.stats == -1).all()
    assert np.isnan(both.mean_average_precision())


def test_cli_empty_results_exit_0(tmp_path, capsys):
    gt, _ = synthetic(11)
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text("[]")
    assert main(["detection", "coco", str(gt_path), str(res_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stats"]["AP"] == 0.0


def test_voc_empty_detections(tmp_path):
    (tmp_path / "g").mkdir()
    (tmp_path / "d").mkdir()
    (tmp_path / "g" / "a.txt").write_text("cat 0 0 10 10\n")
    ev = detection.evaluate_voc(detection.load_text(str(tmp_path / "g"), str(tmp_path / "d")))
    assert ev.ap == {"cat": 0.0} and ev.map == 0.0


# ------------------------------------------------------------------ order-freedom with ties="group"
def _issue_example(gt_order):
    boxes = {"A": [0, 0, 10, 20], "B": [0, -10, 10, 20]}
    anns = [{"id": i + 1, "image_id": 1, "category_id": 1, "bbox": boxes[k], "area": 200.0, "iscrowd": 0}
            for i, k in enumerate(gt_order)]
    gt = {"images": [{"id": 1}], "categories": [{"id": 1, "name": "x"}], "annotations": anns}
    results = [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.9},
               {"image_id": 1, "category_id": 1, "bbox": [0, 5, 10, 10], "score": 0.8}]
    return gt, results


def test_issue_example_ground_truth_order():
    ab = detection.evaluate_coco(detection.load_coco(*_issue_example("AB")), ties="group")
    ba = detection.evaluate_coco(detection.load_coco(*_issue_example("BA")), ties="group")
    np.testing.assert_array_equal(ab.precision, ba.precision)
    assert ab.stats[1] == ba.stats[1]
    # "stable" is pycocotools' rule, which depends on the order
    for order in ("AB", "BA"):
        gt, results = _issue_example(order)
        _assert_same(detection.evaluate_coco(detection.load_coco(gt, results)), _pycocotools(gt, results))
    assert _pycocotools(*_issue_example("AB")).stats[1] != _pycocotools(*_issue_example("BA")).stats[1]


def _grid_set(seed):
    """Boxes on a coarse grid with few score values: many equal IoUs and equal scores."""
    rng = np.random.default_rng(seed)
    images = [{"id": i + 1} for i in range(4)]
    categories = [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    anns, results = [], []
    for img in images:
        for _ in range(int(rng.integers(0, 6))):
            x, y = (rng.integers(0, 4, 2) * 10).tolist()
            w, h = (rng.integers(1, 3, 2) * 10).tolist()
            anns.append({"id": len(anns) + 1, "image_id": img["id"], "category_id": int(rng.integers(1, 3)),
                         "bbox": [x, y, w, h], "area": float(w * h), "iscrowd": int(rng.random() < 0.1)})
        for _ in range(int(rng.integers(0, 9))):
            x, y = (rng.integers(0, 4, 2) * 10).tolist()
            w, h = (rng.integers(1, 3, 2) * 10).tolist()
            results.append({"image_id": img["id"], "category_id": int(rng.integers(1, 3)), "bbox": [x, y, w, h],
                            "score": float(rng.choice([0.3, 0.6, 0.9]))})
    return {"images": images, "categories": categories, "annotations": anns}, results


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), perm_seed=st.integers(0, 10_000))
def test_group_ties_do_not_depend_on_the_order_of_detections_or_ground_truths(seed, perm_seed):
    gt, results = _grid_set(seed)
    rng = np.random.default_rng(perm_seed)
    shuffled_gt = dict(gt, annotations=[gt["annotations"][i] for i in rng.permutation(len(gt["annotations"]))])
    shuffled_res = [results[i] for i in rng.permutation(len(results))]
    for max_dets in ((1, 10, 100), (1, 2, 3)):
        base = detection.evaluate_coco(detection.load_coco(gt, results), ties="group", max_dets=max_dets)
        again = detection.evaluate_coco(detection.load_coco(shuffled_gt, shuffled_res), ties="group",
                                         max_dets=max_dets)
        np.testing.assert_array_equal(again.precision, base.precision)
        np.testing.assert_array_equal(again.recall, base.recall)
        np.testing.assert_array_equal(again.stats, base.stats)


def _write_text_set(folder, rows):
    folder.mkdir()
    by_image: dict[str, list[str]] = {}
    for image, line in rows:
        by_image.setdefault(image, []).append(line)
    for image, lines in by_image.items():
        (folder / f"{image}.txt").write_text("\n".join(lines) + "\n")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000))
def test_voc_group_ties_free_of_ground_truth_order(tmp_path_factory, seed):
    rng = np.random.default_rng(seed)
    gts = [(f"i{int(rng.integers(0, 3))}", f"a {rng.integers(0, 3) * 10} {rng.integers(0, 3) * 10} "
            f"{rng.integers(1, 3) * 10} {rng.integers(1, 3) * 10}") for _ in range(8)]
    dts = [(f"i{int(rng.integers(0, 3))}", f"a {rng.choice([0.5, 0.7])} {rng.integers(0, 3) * 10} "
            f"{rng.integers(0, 3) * 10} {rng.integers(1, 3) * 10} {rng.integers(1, 3) * 10}") for _ in range(10)]
    results = []
    for order in (np.arange(len(gts)), rng.permutation(len(gts))):
        root = tmp_path_factory.mktemp("voc")
        _write_text_set(root / "g", [gts[i] for i in order])
        _write_text_set(root / "d", [dts[i] for i in rng.permutation(len(dts))])
        ev = detection.evaluate_voc(detection.load_text(str(root / "g"), str(root / "d")), ties="group",
                                    pixel_offset=0)
        results.append(ev.ap)
    assert results[0] == results[1]


# ------------------------------------------------------------------ impossible boxes
def test_negative_box_size_is_refused_with_the_record():
    gt, results = synthetic(1)
    bad = copy.deepcopy(results)
    bad[3]["bbox"][2] = -4.0
    with pytest.raises(ValueError, match=r"results detection 3: 'bbox' .* negative width or height"):
        detection.load_coco(gt, bad)
    bad_gt = copy.deepcopy(gt)
    bad_gt["annotations"][2]["bbox"][3] = -1.0
    with pytest.raises(ValueError, match=r"ground truth annotation 2: 'bbox' .* negative"):
        detection.load_coco(bad_gt, results)


def test_zero_size_boxes_are_counted_in_a_warning_and_match_nothing():
    gt, results = synthetic(1)
    zero = copy.deepcopy(results)
    for r in zero[:3]:
        r["bbox"][2] = 0.0
    with pytest.warns(detection.DetectionWarning, match=r"3 results detections have a box of zero width"):
        data = detection.load_coco(gt, zero)
    _assert_same(detection.evaluate_coco(data), _pycocotools(gt, zero))


def test_wrong_box_format_is_refused_naming_file_and_line(shared_data_dir):
    folder = shared_data_dir / "odm_toyexample"
    with pytest.raises(ValueError, match=r"\.txt: line \d+: the box reads as .*x2 < x1.*box_format"):
        detection.load_voc(str(folder / "gts_vocxml"), str(folder / "dets_classname_abs_xywh"), box_format="xyxy")


def test_inverted_voc_xml_box_is_refused(tmp_path):
    (tmp_path / "a.xml").write_text(
        "<annotation><object><name>cat</name><bndbox><xmin>50</xmin><ymin>5</ymin><xmax>10</xmax>"
        "<ymax>40</ymax></bndbox></object></annotation>")
    (tmp_path / "d").mkdir()
    with pytest.raises(ValueError, match=r"a\.xml: object 'cat': the box reads as x1=50"):
        detection.load_voc(str(tmp_path), str(tmp_path / "d"))


def test_cli_inverted_box_exit_2_one_line(tmp_path, capsys):
    (tmp_path / "g").mkdir()
    (tmp_path / "d").mkdir()
    (tmp_path / "g" / "a.txt").write_text("cat 50 5 10 40\n")
    (tmp_path / "d" / "a.txt").write_text("cat 0.9 50 5 10 40\n")
    assert main(["detection", "text", str(tmp_path / "g"), str(tmp_path / "d"), "--box-format", "xyxy"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a.txt: line 1" in err and "Traceback" not in err


# ------------------------------------------------------------------ ids and names
def test_annotation_ids_zero_or_repeated_warn_and_every_annotation_counts():
    gt, results = synthetic(2)
    odd = copy.deepcopy(gt)
    odd["annotations"][0]["id"] = 0
    odd["annotations"][2]["id"] = odd["annotations"][1]["id"]
    del odd["annotations"][3]["id"]
    with pytest.warns(detection.DetectionWarning, match=r"1 missing or not an integer, 1 equal to 0, 1 repeating"):
        data = detection.load_coco(odd, results)
    # every annotation is its own object: the numbers of the well-numbered file
    _assert_same(detection.evaluate_coco(data), _pycocotools(gt, results))


@pytest.mark.parametrize("what, mutate, message", [
    ("image", lambda g: g["images"][1].pop("id"), r"ground truth image 1: no 'id'"),
    ("image", lambda g: g["images"][1].update(id="12"), r"ground truth image 1: 'id' must be an integer"),
    ("image", lambda g: g["images"][1].update(id=1.5), r"ground truth image 1: 'id' must be an integer"),
    ("image", lambda g: g["images"][2].update(id=g["images"][0]["id"]), r"ground truth images 0 and 2 have the same"),
    ("category", lambda g: g["categories"][0].pop("id"), r"ground truth category 0: no 'id'"),
    ("category", lambda g: g["categories"][0].update(id="../../ESCAPED"), r"category 0: 'id' must be an integer"),
    ("category", lambda g: g["categories"][0].update(id=True), r"category 0: 'id' must be an integer"),
    ("category", lambda g: g["categories"][1].update(name="a\x00b"), r"category 1: 'name' contains a NUL"),
    ("category", lambda g: g["categories"][1].update(name="é" * 128), r"category 1: 'name' is 256 bytes long"),
])
def test_bad_ids_and_names_are_refused(what, mutate, message, tmp_path, capsys):
    gt, results = synthetic(3)
    bad = copy.deepcopy(gt)
    mutate(bad)
    with pytest.raises(ValueError, match=message):
        _quiet_load(bad, [r for r in results if r["image_id"] != bad["images"][0]["id"] or what != "image"])
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(bad))
    res_path.write_text(json.dumps(results))
    assert main(["detection", "coco", str(gt_path), str(res_path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().count("\n") == 0 and "gt.json" in err


def test_name_of_255_bytes_is_accepted():
    gt, results = synthetic(3)
    ok = copy.deepcopy(gt)
    ok["categories"][0]["name"] = "x" * 255
    assert detection.load_coco(ok, results).class_names[ok["categories"][0]["id"]] == "x" * 255


def test_cli_warnings_are_one_line_each(tmp_path, capsys):
    gt, results = synthetic(2)
    gt["annotations"][0]["id"] = 0
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(results))
    assert main(["detection", "coco", str(gt_path), str(res_path)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("precall: warning: ") and err.count("\n") == 1 and "equal to 0" in err


# ------------------------------------------------------------------ --plot file names stay in DIR
@pytest.mark.parametrize("name", ["../../ESCAPED", "/tmp/ABSOLUTE", "..", "x" * 250, "a/b\\c", "ü" * 100])
def test_plot_file_names_stay_inside_the_folder(tmp_path, capsys, name):
    pytest.importorskip("matplotlib")
    gt, results = synthetic(4, n_classes=2)
    gt["categories"][0]["name"] = name
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(results))
    out = tmp_path / "sub" / "plots"
    assert main(["detection", "coco", str(gt_path), str(res_path), "--plot", str(out)]) == 0
    files = sorted(os.listdir(out))
    assert len(files) == 1 + (gt["categories"][1]["id"] in {a["category_id"] for a in gt["annotations"]})
    for f in files:
        assert len(f) <= 125 and "/" not in f and "\\" not in f and not f.startswith(".")
        assert f.split("_", 1)[0].isdigit()
    assert sorted(os.listdir(tmp_path)) == ["gt.json", "res.json", "sub"]
    assert sorted(os.listdir(tmp_path / "sub")) == ["plots"]
    assert not os.path.exists("/tmp/ABSOLUTE.png")


# ------------------------------------------------------------------ IoU thresholds: isclose (documented)
def test_ap75_found_with_isclose_where_pycocotools_tests_equality():
    gt, results = synthetic(6)
    thresholds = np.arange(0.5, 1.0, 0.05)  # thresholds[5] is 0.7500000000000001: not == 0.75
    ours = detection.evaluate_coco(detection.load_coco(gt, results), iou_thresholds=thresholds)
    theirs = _pycocotools(gt, results, iouThrs=thresholds)
    np.testing.assert_allclose(ours.precision, theirs.eval["precision"], atol=1e-12)
    assert theirs.stats[2] == -1
    assert thresholds[5] != 0.75
    valid = theirs.eval["precision"][5, :, :, 0, -1]
    assert ours.stats[2] == pytest.approx(valid[valid > -1].mean(), abs=1e-12)


# ------------------------------------------------------------------ masks as run lengths (17.1)
def test_runs_areas_boxes_and_intersections_equal_pycocotools(shared_data_dir):
    from pycocotools import mask as mask_utils

    from precall.detection._rle import decode_runs, runs_intersections

    folder = shared_data_dir / "coco_val2014_100"
    gt = json.loads((folder / "instances_val2014_100.json").read_text())
    res = json.loads((folder / "instances_val2014_fakesegm100_results.json").read_text())
    sizes = {i["id"]: (i["height"], i["width"]) for i in gt["images"]}
    records = gt["annotations"] + res  # polygons (one or several), crowd counts lists, compressed strings
    segs = [r["segmentation"] for r in records]
    hw = [sizes[r["image_id"]] for r in records]
    runs = decode_runs(segs, hw)
    rles = []
    for seg, (h, w) in zip(segs, hw):
        if isinstance(seg, dict) and isinstance(seg["counts"], str):
            rles.append(dict(seg, counts=seg["counts"].encode()))
        else:
            r = mask_utils.frPyObjects(seg, h, w)
            rles.append(mask_utils.merge(r) if isinstance(r, list) else r)
    np.testing.assert_array_equal(runs.areas(), [mask_utils.area(r) for r in rles])
    np.testing.assert_array_equal(runs.boxes(np.array([h for h, _ in hw])), [mask_utils.toBbox(r) for r in rles])
    image = np.array([r["image_id"] for r in records])
    pairs = [(i, j) for i in range(0, len(records), 3) for j in np.flatnonzero(image == image[i])[:8]]
    d, g = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    expected = [mask_utils.area(mask_utils.merge([rles[a], rles[b]], intersect=1)) for a, b in pairs]
    got = runs_intersections(runs, d, runs, g)
    np.testing.assert_array_equal(got, expected)
    assert (got > 0).sum() > 300


def test_malformed_segmentations_name_the_record():
    gt = {"images": [{"id": 1, "height": 10, "width": 10}], "categories": [{"id": 1}],
          "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 5, 5], "area": 25,
                           "segmentation": [[0, 0, 5, 0, 5, 5]]}]}
    good = {"image_id": 1, "category_id": 1, "score": 0.5, "segmentation": {"size": [10, 10], "counts": "0;"}}
    with pytest.raises(ValueError, match=r"results detection 1: 'segmentation': .*sum to h \* w = 100"):
        detection.load_coco(gt, [dict(good, segmentation={"size": [10, 10], "counts": [0, 100]}),
                                 dict(good, segmentation={"size": [10, 10], "counts": "02"})])
    with pytest.raises(ValueError, match=r"results detection 0: 'segmentation': .*size \[5, 5\] differs"):
        detection.load_coco(gt, [dict(good, segmentation={"size": [5, 5], "counts": "0"})])
    bad_gt = copy.deepcopy(gt)
    bad_gt["annotations"][0]["segmentation"] = [[0, 0, 5]]
    data = detection.load_coco(bad_gt, [dict(good, segmentation={"size": [10, 10], "counts": [0, 100]})])
    with pytest.raises(ValueError, match=r"ground truth annotation 0: 'segmentation': a polygon needs at least 3"):
        detection.evaluate_coco(data, iou_type="segm")
