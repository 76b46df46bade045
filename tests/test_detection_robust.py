"""precall.detection on awkward input: empty results and ground truths, the order of
detections and ground truths under ties="group", impossible boxes, odd ids and names,
and the --plot file names (issues 15 and 17.3)."""

from __future__ import annotations

import copy
import json
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from precall import UndefinedMetricWarning, detection
from precall.cli import main

pytest.importorskip("pycocotools")
from test_detection import _assert_same, _pycocotools, synthetic  # noqa: E402

_SRC = Path(__file__).resolve().parent.parent / "src"


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
    with pytest.warns(UndefinedMetricWarning, match="every number is undefined"):
        ours = detection.evaluate_coco(detection.load_coco(empty, results))
    _assert_same(ours, _pycocotools(empty, results))
    assert (ours.stats == -1).all() and all(r["AP"] == -1 for r in ours.per_class)
    with pytest.warns(UndefinedMetricWarning, match="every number is undefined"):
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
    with pytest.raises(ValueError, match=r"a\.xml: line 1: object 'cat': the box reads as x1=50"):
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


# ------------------------------------------------------------------ issue 21: numeric options (one validator)
NAN, INF = float("nan"), float("inf")
BAD_OPTIONS = [  # (options, error type, the message names the option and what it got)
    ({"iou_thresholds": [NAN]}, ValueError, r"`iou_thresholds` must be .*finite numbers in \[0, 1\].*got nan"),
    ({"iou_thresholds": [0.5, INF]}, ValueError, r"`iou_thresholds` .*got inf at position 1"),
    ({"iou_thresholds": [1.5]}, ValueError, r"`iou_thresholds` .*\[0, 1\].*got 1.5"),
    ({"iou_thresholds": ["0.5"]}, TypeError, r"`iou_thresholds` .*got '0.5'"),
    ({"iou_thresholds": 0.5}, TypeError, r"`iou_thresholds` must be a sequence"),
    ({"iou_thresholds": []}, ValueError, r"`iou_thresholds` must hold at least 1"),
    ({"iou_thresholds": [[0.5, 0.75]]}, ValueError, r"`iou_thresholds` must be a flat sequence"),
    ({"recall_thresholds": [NAN]}, ValueError, r"`recall_thresholds` .*got nan"),
    ({"recall_thresholds": [0, 2]}, ValueError, r"`recall_thresholds` .*\[0, 1\].*got 2"),
    ({"recall_thresholds": [-1, 0.5]}, ValueError, r"`recall_thresholds` .*got -1"),
    ({"recall_thresholds": [0.5, 0.2]}, ValueError, r"`recall_thresholds` must be increasing"),
    ({"max_dets": 100}, TypeError, r"`max_dets` must be a sequence of whole numbers.*e\.g\. \(1, 10, 100\).*got 100"),
    ({"max_dets": [1.5]}, ValueError, r"`max_dets` .*whole numbers.*got 1.5"),
    ({"max_dets": [NAN]}, ValueError, r"`max_dets` .*got nan"),
    ({"max_dets": ["10"]}, TypeError, r"`max_dets` .*got '10'"),
    ({"max_dets": [True]}, TypeError, r"`max_dets` .*got True"),
    ({"max_dets": [0]}, ValueError, r"`max_dets` .*\[1, .*got 0"),
    ({"max_dets": [10**30]}, ValueError, r"`max_dets` .*got 10000"),
    ({"max_dets": [10, 1, 10]}, ValueError, r"`max_dets` must be distinct.*got \(10, 1, 10\)"),
    ({"max_dets": []}, ValueError, r"`max_dets` must hold at least 1"),
    ({"area_ranges": {}}, ValueError, r"`area_ranges` must be a non-empty dict.*got \{\}"),
    ({"area_ranges": [(0, 1)]}, TypeError, r"`area_ranges` must be a non-empty dict"),
    ({"area_ranges": {"all": (0,)}}, ValueError, r"`area_ranges\['all'\]` must hold at least 2"),
    ({"area_ranges": {"all": (0, 1, 2)}}, ValueError, r"`area_ranges\['all'\]` must be two numbers"),
    ({"area_ranges": {"all": ("0", "1e10")}}, TypeError, r"`area_ranges\['all'\]` .*got '0'"),
    ({"area_ranges": {"all": (NAN, 1e10)}}, ValueError, r"`area_ranges\['all'\]` .*got nan"),
    ({"area_ranges": {"all": (0, INF)}}, ValueError, r"`area_ranges\['all'\]` .*1e10 for no upper bound.*got inf"),
    ({"area_ranges": {"all": (10, 1)}}, ValueError, r"`area_ranges\['all'\]` .*low <= high.*got \(10, 1\)"),
    ({"area_ranges": {1: (0, 1e10)}}, TypeError, r"`area_ranges` names must be non-empty strings.*got 1"),
    ({"use_cats": "no"}, TypeError, r"`use_cats` must be True or False; got 'no'"),
    ({"ties": None}, ValueError, r"`ties` must be 'stable' or 'group'; got None"),
]
BAD_KEYPOINT_OPTIONS = [
    ({"kpt_oks_sigmas": [NAN] * 17}, ValueError, r"`kpt_oks_sigmas` .*got nan"),
    ({"kpt_oks_sigmas": [0.1, -1]}, ValueError, r"`kpt_oks_sigmas` .*\(0, inf\).*got -1"),
    ({"kpt_oks_sigmas": 0.5}, TypeError, r"`kpt_oks_sigmas` must be a sequence"),
]


@pytest.mark.parametrize("options, error, message", BAD_OPTIONS + [(dict(o, iou_type="keypoints"), e, m)
                                                                  for o, e, m in BAD_KEYPOINT_OPTIONS])
def test_bad_numeric_options_are_refused_naming_the_option(options, error, message):
    gt, results = synthetic(5)
    data = detection.load_coco(gt, results)
    with pytest.raises(error, match=message):
        detection.evaluate_coco(data, **options)
    if options.get("iou_type") != "keypoints":  # the training-loop API refuses them when it is built
        with pytest.raises(error, match=message):
            detection.MeanAveragePrecision(**options)


def test_nan_thresholds_no_longer_give_numbers():
    """The issue's examples: a perfect match gave AP 0 with iou_thresholds=[nan], 1.0 with
    recall_thresholds=[nan] (pycocotools: 0); now both are refused, and valid values still agree."""
    gt, results = synthetic(6)
    data = detection.load_coco(gt, results)
    for bad in ({"iou_thresholds": [NAN]}, {"recall_thresholds": [NAN]}):
        with pytest.raises(ValueError, match="nan"):
            detection.evaluate_coco(data, **bad)
    _assert_same(detection.evaluate_coco(data, iou_thresholds=[0.5], recall_thresholds=np.linspace(0, 1, 11)),
                 _pycocotools(gt, results, iouThrs=np.array([0.5]), recThrs=np.linspace(0, 1, 11)))


def test_progress_must_be_callable():
    gt, results = synthetic(5)
    with pytest.raises(TypeError, match=r"`progress` must be a callable .*got 3"):
        detection.evaluate_coco(detection.load_coco(gt, results), progress=3)


@pytest.mark.parametrize("call, error, message", [
    (lambda ev: ev.bootstrap(0), ValueError, r"`n_resamples` must be a whole number in \[2, inf\).*got 0"),
    (lambda ev: ev.bootstrap(1.5), ValueError, r"`n_resamples` .*got 1.5"),
    (lambda ev: ev.bootstrap(True), TypeError, r"`n_resamples` .*got True"),
    (lambda ev: ev.bootstrap(10**12), ValueError, r"`n_resamples` = 1000000000000 would allocate"),
    (lambda ev: ev.bootstrap(10, confidence_level=NAN), ValueError, r"`confidence_level` .*\(0, 1\).*got nan"),
    (lambda ev: ev.bootstrap(10, confidence_level=1), ValueError, r"`confidence_level` .*got 1"),
    (lambda ev: detection.compare_coco(ev, ev, 0), ValueError, r"`n_resamples` .*got 0"),
    (lambda ev: detection.compare_coco(ev, ev, 10, confidence_level="0.9"), TypeError, r"`confidence_level`"),
])
def test_bad_bootstrap_options_are_refused(call, error, message):
    gt, results = synthetic(5)
    ev = detection.evaluate_coco(detection.load_coco(gt, results))
    with pytest.raises(error, match=message):
        call(ev)


def _voc_text_set(tmp_path):
    (tmp_path / "g").mkdir()
    (tmp_path / "d").mkdir()
    (tmp_path / "g" / "a.txt").write_text("cat 0 0 10 10\n")
    (tmp_path / "d" / "a.txt").write_text("cat 0.9 0 0 10 10\n")
    return detection.load_text(str(tmp_path / "g"), str(tmp_path / "d"))


def test_voc_text_aligns_wide_names_by_their_columns_and_shortens_long_ones(tmp_path):
    """VocEvaluation.to_text padded class names with len(): a CJK name (two terminal columns a
    character) pushed its AP right of the others', a control character went to the terminal, and a
    long name made lines of any length.  Now names are shown visibly, aligned by the columns they take
    (:func:`precall._core.text.columns`), and a long one shortened within 80 columns, its full name in
    a legend, as the other text tables do; ``width=None`` keeps every name whole."""
    from precall._core.text import columns

    long = "a_very_long_detection_class_name_" * 3 + "end"
    (tmp_path / "g").mkdir()
    (tmp_path / "d").mkdir()
    names = ["cat", "\u732b\u732b\u732b", "dog\x1b[2J", long]
    (tmp_path / "g" / "a.txt").write_text("".join(f"{n} 0 0 10 10\n" for n in names), encoding="utf-8")
    (tmp_path / "d" / "a.txt").write_text("".join(f"{n} 0.9 0 0 10 10\n" for n in names), encoding="utf-8")
    ev = detection.evaluate_voc(detection.load_text(str(tmp_path / "g"), str(tmp_path / "d")))
    text = ev.to_text()
    lines = text.splitlines()
    table = lines[:lines.index("")]
    assert len(table) == 2 + len(names) and "\x1b" not in text and "dog\u241b[2J" in text, text
    starts = {columns(line[:line.index("1.000000" if i else "AP (")]) for i, line in enumerate(table)}
    assert len(starts) == 1, text  # every AP (and the title) at one terminal column
    assert max(map(columns, lines)) <= 80 and not any(long in line for line in table) and "..." in text, text
    assert lines[lines.index("") + 1] == "classes:" and "'a_very_long" in text
    whole = ev.to_text(width=None).splitlines()
    assert len(whole) == 2 + len(names) and any(line.startswith(long) for line in whole)


@pytest.mark.parametrize("options, error, message", [
    ({"iou_threshold": NAN}, ValueError, r"`iou_threshold` must be a finite number in \[0, 1\]; got nan"),
    ({"iou_threshold": 2}, ValueError, r"`iou_threshold` .*got 2"),
    ({"pixel_offset": NAN}, ValueError, r"`pixel_offset` .*got nan"),
    ({"pixel_offset": -1}, ValueError, r"`pixel_offset` .*got -1"),
    ({"inclusive": "yes"}, TypeError, r"`inclusive` must be True or False; got 'yes'"),
])
def test_bad_voc_options_are_refused(tmp_path, options, error, message):
    data = _voc_text_set(tmp_path)
    with pytest.raises(error, match=message):
        detection.evaluate_voc(data, **options)
    ev = detection.evaluate_voc(data)
    with pytest.raises(ValueError, match=r"`confidence_level` .*got nan"):
        ev.bootstrap(10, confidence_level=NAN)
    with pytest.raises(ValueError, match=r"`n_resamples` .*got 1\b"):
        ev.bootstrap(1)


@pytest.mark.parametrize("flags, message", [
    (["--iou-thresholds", "nan"], r"`iou_thresholds` .*got nan"),
    (["--iou-thresholds", "0.5,inf"], r"`iou_thresholds` .*got inf"),
    (["--area-ranges", "all=0:inf"], r"`area_ranges\['all'\]` .*got inf"),
    (["--max-dets", "1000000000000"], r"`max_dets` .*got 1000000000000"),
    (["--max-dets", "10", "1", "10"], r"`max_dets` must be distinct"),
    (["--iou-type", "keypoints", "--kpt-oks-sigmas", "nan"], r"`kpt_oks_sigmas` .*got nan"),
    (["--ci", "--n-resamples", "100000000000"], r"`n_resamples` = 100000000000 would allocate"),
    (["--ci", "--seed", "-1"], r"--seed: must be a whole number in \[0, inf\)"),
])
def test_cli_bad_options_one_line_exit_2(tmp_path, capsys, flags, message):
    gt, results = synthetic(5)
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(results))
    assert main(["detection", "coco", str(gt_path), str(res_path), *flags]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert re.search(message, err.strip().splitlines()[-1]), err
    if not flags[0].startswith("--ci") or "--n-resamples" in flags:  # argparse's own errors print the usage
        assert err.strip().count("\n") == 0, err


@pytest.mark.parametrize("flags, message", [
    (["--area-ranges", "all=0:1e10,all=0:5"], r"--area-ranges: the names must be distinct; 'all' is given twice"),
    (["--area-ranges", "all=0:1e10,small=0:1024, small=0:9"], r"--area-ranges: .*'small' is given twice"),
    (["--iou-thresholds", "0.5,,0.7"], r"--iou-thresholds: .*field 2 of '0.5,,0.7' is empty"),
    (["--iou-thresholds", "0.5,0.7,"], r"--iou-thresholds: .*field 3 of '0.5,0.7,' is empty"),
    (["--iou-type", "keypoints", "--kpt-oks-sigmas", ",0.1"], r"--kpt-oks-sigmas: .*field 1 of ',0.1' is empty"),
])
def test_cli_repeated_area_range_and_empty_number_field_are_refused(tmp_path, capsys, flags, message):
    """Neither the last of two ranges of one name silently wins nor an empty field is silently skipped."""
    gt, results = synthetic(5)
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(results))
    assert main(["detection", "coco", str(gt_path), str(res_path), *flags]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and re.search(message, err.strip().splitlines()[-1]), err
    assert main(["detection", "coco", str(gt_path), str(res_path), "--iou-thresholds", "0.5, 0.7", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stats"]["AP75"] == -1  # spaces still separate numbers


def test_cli_voc_bad_pixel_offset_one_line(tmp_path, capsys):
    _voc_text_set(tmp_path)
    assert main(["detection", "text", str(tmp_path / "g"), str(tmp_path / "d"), "--pixel-offset", "nan"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "`pixel_offset`" in err and "Traceback" not in err


# ------------------------------------------------------------------ issue 21: polygons far outside the image
def _random_far_polygon(rng, h, w, low_exp, high_exp):
    n = int(rng.integers(3, 8))
    pts = rng.uniform(-0.3 * w, 1.3 * w, 2 * n)
    pts[1::2] = rng.uniform(-0.3 * h, 1.3 * h, n)
    far = rng.choice(2 * n, size=int(rng.integers(1, 4)), replace=False)
    pts[far] = rng.choice([-1.0, 1.0], far.size) * 10.0 ** rng.uniform(low_exp, high_exp, far.size)
    if rng.random() < 0.3:
        pts = np.round(pts)
    return pts.tolist()


def _pycocotools_mask(polygons, h, w):
    from pycocotools import mask as mask_utils

    return mask_utils.decode(mask_utils.merge(mask_utils.frPyObjects(polygons, h, w))).ravel(order="F").astype(bool)


@pytest.mark.parametrize("seed", range(4))
def test_far_out_polygons_equal_pycocotools_bit_for_bit(seed):
    from precall.detection._rle import decode_runs, to_mask

    rng = np.random.default_rng(seed)
    segs, sizes = [], []
    for _ in range(60):
        h, w = int(rng.integers(1, 50)), int(rng.integers(1, 50))
        polygons = [_random_far_polygon(rng, h, w, 3, 6) for _ in range(int(rng.integers(1, 3)))]
        np.testing.assert_array_equal(to_mask(polygons, h, w), _pycocotools_mask(polygons, h, w))
        segs.append(polygons)
        sizes.append((h, w))
    from pycocotools import mask as mask_utils

    runs = decode_runs(segs, sizes)  # the batched path: areas of all at once
    np.testing.assert_array_equal(runs.areas(), [mask_utils.area(mask_utils.merge(mask_utils.frPyObjects(s, h, w)))
                                                 for s, (h, w) in zip(segs, sizes)])


def test_issue_polygon_vertex_at_1e7_equals_pycocotools():
    from precall.detection._rle import to_mask

    for polygon in ([10, 10, 1e7, 50, 10, 90], [10, 10, 60, -1e7, 90, 90], [-1e7, 20, 99.6, 30, 40, 1e7 + 0.3]):
        np.testing.assert_array_equal(to_mask([polygon], 100, 100), _pycocotools_mask([polygon], 100, 100))


@pytest.mark.parametrize("seed", range(3))
def test_huge_polygon_coordinates_equal_the_transcribed_c_rule(seed):
    """Beyond what pycocotools can walk (its C ints overflow past 2**31 / 5): its rule, transcribed
    with Python ints and floats (tests/oracles.py), validated against pycocotools above."""
    from oracles import coco_polygon_mask

    from precall.detection._rle import to_mask

    rng = np.random.default_rng(100 + seed)
    for _ in range(25):
        h, w = int(rng.integers(1, 30)), int(rng.integers(1, 30))
        polygon = _random_far_polygon(rng, h, w, 7, 12)
        np.testing.assert_array_equal(to_mask([polygon], h, w), coco_polygon_mask(polygon, h, w))


def test_the_transcribed_c_rule_equals_pycocotools():
    from oracles import coco_polygon_mask

    rng = np.random.default_rng(7)
    for _ in range(40):
        h, w = int(rng.integers(1, 30)), int(rng.integers(1, 30))
        polygon = _random_far_polygon(rng, h, w, 3, 5)  # long edges: the oracle's bisection path
        np.testing.assert_array_equal(coco_polygon_mask(polygon, h, w), _pycocotools_mask([polygon], h, w))


def test_far_out_polygon_memory_is_bounded_by_the_image():
    """The issue: a vertex at 1e7 took 9.5 GB, at 1e8 a MemoryError.  In a fresh interpreter, the peak
    of traced allocations while decoding vertices up to 1e12 stays under 16 MB (not a timing test)."""
    import subprocess
    import sys

    code = (
        "import tracemalloc, numpy as np\n"
        "from precall.detection._rle import decode_runs\n"
        "segs = [[[10, 10, c, 50, 10, 90]] for c in (1e7, 1e8, 1e10, 1e12, -1e12)]\n"
        "segs += [[[10, 10, 20, c, 30, 10]] for c in (1e9, -1e11)]\n"
        "tracemalloc.start()\n"
        "runs = decode_runs(segs, [(100, 100)] * len(segs))\n"
        "print(tracemalloc.get_traced_memory()[1], *runs.areas().tolist())\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(_SRC), os.environ.get("PYTHONPATH")) if p))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    peak, *areas = (int(v) for v in out.stdout.split())
    assert peak < 16 * 2**20
    assert areas[:4] == [areas[0]] * 4 and areas[0] > 0


@pytest.mark.parametrize("polygon, message", [
    ([10, 10, 30, 10, NAN, 30], r"polygon coordinates must be finite .*got nan at position 4"),
    ([10, 10, 30, INF, 30, 30], r"polygon coordinates must be finite .*got inf at position 3"),
    ([10, 10, 30, 10, -1e15, 30], r"within \+-1e\+14 pixels; got -1000000000000000.0 at position 4"),
    (["a", 10, 30, 10, 30, 30], r"a polygon must be a flat list of numbers"),
    ([10, 10, 30, 10, 30, [30]], r"a polygon must be a flat list of numbers"),
    ([10, 10, 30, 10], r"a polygon needs at least 3 points"),
])
def test_bad_polygons_are_refused_naming_the_record(tmp_path, capsys, polygon, message):
    gt = {"images": [{"id": 1, "height": 100, "width": 100}], "categories": [{"id": 1, "name": "a"}],
          "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "area": 400,
                           "segmentation": [[10, 10, 30, 10, 30, 30]]}]}
    results = [{"image_id": 1, "category_id": 1, "score": 0.9, "segmentation": [polygon]}]
    with pytest.raises(ValueError, match=r"results detection 0: 'segmentation': .*" + message):
        detection.load_coco(gt, results)
    bad_gt = copy.deepcopy(gt)
    bad_gt["annotations"][0]["segmentation"] = [polygon]
    good = [dict(results[0], segmentation=[[10, 10, 30, 10, 30, 30]], bbox=[10, 10, 20, 20])]
    data = detection.load_coco(bad_gt, good)
    with pytest.raises(ValueError, match=r"ground truth annotation 0: 'segmentation': .*" + message):
        detection.evaluate_coco(data, iou_type="segm")
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(bad_gt, allow_nan=True))
    res_path.write_text(json.dumps(good))
    assert main(["detection", "coco", str(gt_path), str(res_path), "--iou-type", "segm"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gt.json: ground truth annotation 0" in err and "Traceback" not in err


# ------------------------------------------------------------------ issue 21: malformed run-length masks
BAD_RLES = [
    ({"size": [60, 60], "counts": 3600}, r"'counts' must be a list of integers .* or a string .*got 3600"),
    ({"size": [60, 60], "counts": None}, r"'counts' must be .*got None"),
    ({"size": [60, 60], "counts": [1.5, 3598.5]}, r"'counts' must be a list of integers"),
    ({"size": [60, 60], "counts": [[3600]]}, r"'counts' must be a list of integers"),
    ({"size": [60, 60], "counts": ["a"]}, r"'counts' must be a list of integers"),
    ({"size": [60, 60], "counts": [100, 3000]}, r"sum to h \* w = 3600"),
    ({"size": [60, 60], "counts": [-100, 3700]}, r"non-negative"),
    ({"size": "60x60", "counts": [3600]}, r"'size' must be \[height, width\] \(two integers.*got '60x60'"),
    ({"size": [60], "counts": [3600]}, r"'size' must be \[height, width\]"),
    ({"size": [60.0, 60.0], "counts": [3600]}, r"'size' must be \[height, width\]"),
    ({"size": [60, 60], "counts": "\u00e9"}, r"ASCII"),
    ({"size": [60, 60]}, r"a list of polygons or a dict with 'counts' and 'size'"),
]


@pytest.mark.parametrize("rle, message", BAD_RLES)
def test_bad_rles_are_refused_everywhere(tmp_path, capsys, rle, message):
    gt = {"images": [{"id": 1, "height": 60, "width": 60}], "categories": [{"id": 1, "name": "a"}],
          "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100,
                           "segmentation": [[0, 0, 10, 0, 10, 10]]}]}
    results = [{"image_id": 1, "category_id": 1, "score": 0.9, "segmentation": rle}]
    with pytest.raises(ValueError, match=r"results detection 0: 'segmentation': .*" + message):
        detection.evaluate_coco(detection.load_coco(gt, results), iou_type="segm")
    metric = detection.MeanAveragePrecision(iou_type="segm")
    good = {"size": [60, 60], "counts": [3600]}
    with pytest.raises(ValueError, match=r"preds\[0\]\['masks'\]\[0\]: .*" + message):
        metric.update([{"boxes": [[0, 0, 1, 1]], "scores": [0.5], "labels": [1], "masks": [rle]}],
                      [{"boxes": [[0, 0, 1, 1]], "labels": [1], "masks": [good]}])
    assert len(metric) == 0
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(results))
    assert main(["detection", "coco", str(gt_path), str(res_path), "--iou-type", "segm"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "res.json: results detection 0" in err and "Traceback" not in err


@pytest.mark.parametrize("masks, message", [
    ([[10, 10, 30, 10, 30, 30]], r"got an array of shape \(1, 6\) .*polygons: convert them with pycocotools"),
    (np.zeros((1, 60)), r"got an array of shape \(1, 60\)"),
    ("mask", r"got an array of shape \(\) "),
])
def test_masks_that_are_not_masks_are_refused(masks, message):
    metric = detection.MeanAveragePrecision(iou_type="segm")
    with pytest.raises(ValueError, match=r"preds\[0\]\['masks'\]: must be \(N, H, W\) booleans or a list of COCO RLE.*"
                       + message):
        metric.update([{"boxes": [[0, 0, 1, 1]], "scores": [0.5], "labels": [1], "masks": masks}],
                      [{"boxes": [[0, 0, 1, 1]], "labels": [1], "masks": np.zeros((1, 4, 4), bool)}])


# ------------------------------------------------------------------ issue 21: empty images as lists
@pytest.mark.parametrize("empty_pred, empty_target", [
    ({"boxes": [], "scores": [], "labels": []}, {"boxes": [], "labels": []}),
    ({"boxes": np.zeros((0, 4)), "scores": np.zeros(0), "labels": np.zeros(0, np.int64)},
     {"boxes": np.zeros((0,)), "labels": np.zeros(0, np.float32)}),
    ({"boxes": np.zeros((0, 4), np.float32), "scores": [], "labels": np.zeros((0,), np.uint8)},
     {"boxes": [], "labels": [], "iscrowd": [], "area": []}),
])
def test_empty_images_are_accepted_in_any_form(empty_pred, empty_target):
    """An image without detections or ground truths counts as an image (pycocotools: an image
    without annotations), whatever the empty arrays' dtype or shape."""
    gt, results = synthetic(8, n_images=4)
    from test_detection_metric import _per_image, _renumbered

    preds, targets = _per_image(gt, results)
    metric = detection.MeanAveragePrecision(box_format="xyxy")
    metric.update(preds + [empty_pred], targets + [empty_target])
    gt0, res0 = _renumbered(gt, results)
    gt0["images"].append({"id": len(gt0["images"])})
    assert np.abs(metric.evaluation().stats - _pycocotools(gt0, res0).stats).max() < 1e-9


# ------------------------------------------------------------------ issue 21: record fields
@pytest.mark.parametrize("field, value, message", [
    ("iscrowd", "0", r"'iscrowd' must be 0 or 1 \(or false / true\); got '0'"),
    ("iscrowd", 2, r"'iscrowd' must be 0 or 1 .*got 2"),
    ("iscrowd", None, r"'iscrowd' must be 0 or 1 .*got None"),
    ("iscrowd", [1], r"'iscrowd' must be 0 or 1 .*got \[1\]"),
    ("ignore", "x", r"'ignore' must be 0 or 1 .*got 'x'"),
    ("area", "abc", r"'area' must be a finite number >= 0 \(pixels\); got 'abc'"),
    ("area", NAN, r"'area' must be a finite number >= 0 .*got nan"),
    ("area", -1, r"'area' .*got -1"),
    ("area", None, r"'area' .*got None"),
    ("image_id", [1], r"'image_id' must be an integer id; got \[1\]"),
    ("category_id", {"a": 1}, r"'category_id' must be an integer id"),
])
def test_bad_annotation_fields_are_refused(tmp_path, capsys, field, value, message):
    gt, results = synthetic(9)
    bad = copy.deepcopy(gt)
    bad["annotations"][3][field] = value
    with pytest.raises(ValueError, match=r"ground truth annotation 3: " + message):
        _quiet_load(bad, results)
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(bad, allow_nan=True))
    res_path.write_text(json.dumps(results))
    assert main(["detection", "coco", str(gt_path), str(res_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gt.json: ground truth annotation 3" in err and "Traceback" not in err


@pytest.mark.parametrize("value", [0, 1, True, False, 0.0, 1.0])
def test_crowd_flags_as_pycocotools_reads_them(value):
    gt, results = synthetic(10)
    for a in gt["annotations"][::3]:
        a["iscrowd"] = value
    _assert_same(_quiet_load(gt, results) and detection.evaluate_coco(_quiet_load(gt, results)),
                 _pycocotools(gt, results))


@pytest.mark.parametrize("field, value, message", [
    ("image_id", [1], r"results detection 2: 'image_id' must be an integer id"),
    ("category_id", [1], r"results detection 2: 'category_id' must be an integer id"),
    ("category_id", None, r"results detection 2: 'category_id' must be an integer id; got None"),
])
def test_bad_result_fields_are_refused(field, value, message):
    gt, results = synthetic(9)
    bad = copy.deepcopy(results)
    bad[2][field] = value
    with pytest.raises(ValueError, match=message):
        _quiet_load(gt, bad)


@pytest.mark.parametrize("key, value", [("height", "abc"), ("height", -5), ("width", 1.5), ("width", NAN),
                                        ("height", True)])
def test_bad_image_sizes_are_refused(key, value):
    gt, results = synthetic(9)
    gt["images"][1][key] = value
    with pytest.raises(ValueError, match=rf"ground truth image 1: '{key}' must be an integer >= 0 \(pixels\)"):
        _quiet_load(gt, results)


def test_image_too_large_for_coco_masks_is_refused():
    gt = {"images": [{"id": 1, "height": 10**12, "width": 100}], "categories": [{"id": 1, "name": "a"}],
          "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "area": 400,
                           "segmentation": [[10, 10, 30, 10, 30, 30]]}]}
    results = [{"image_id": 1, "category_id": 1, "score": 0.9, "segmentation": [[10, 10, 30, 10, 30, 30]]}]
    with pytest.raises(ValueError, match=r"results detection 0: 'segmentation': an image of 1000000000000 x 100 pixels"):
        detection.load_coco(gt, results)


@pytest.mark.parametrize("target, message", [
    ({"iscrowd": ["0"]}, r"targets\[0\]\['iscrowd'\]: must be N = 1 values 0 or 1 .*got '0' at position 0"),
    ({"iscrowd": [2]}, r"targets\[0\]\['iscrowd'\]: .*got 2"),
    ({"iscrowd": [0, 1]}, r"targets\[0\]\['iscrowd'\]: must be N = 1 values 0 or 1; got 2"),
    ({"area": [NAN]}, r"targets\[0\]\['area'\]: must be N = 1 finite numbers >= 0 \(pixels\); got nan"),
    ({"area": [-5]}, r"targets\[0\]\['area'\]: .*got -5.0"),
    ({"area": ["a"]}, r"targets\[0\]\['area'\]: must be N = 1 finite numbers >= 0; got <U1"),
])
def test_bad_metric_target_fields_are_refused(target, message):
    metric = detection.MeanAveragePrecision()
    with pytest.raises((ValueError, TypeError), match=message):
        metric.update([{"boxes": [[0, 0, 1, 1]], "scores": [1.0], "labels": [1]}],
                      [{"boxes": [[0, 0, 1, 1]], "labels": [1], **target}])


@pytest.mark.parametrize("crowd", [[1], [True], np.array([1.0]), np.array([1], np.uint8)])
def test_metric_crowd_flags_accepted(crowd):
    metric = detection.MeanAveragePrecision()
    metric.update([{"boxes": [[0, 0, 1, 1]], "scores": [1.0], "labels": [1]}],
                  [{"boxes": [[0, 0, 1, 1]], "labels": [1], "iscrowd": crowd}])
    assert metric.detection_set().gt_crowd.tolist() == [True]


# ------------------------------------------------------------------ issue 21: keypoints with use_cats=False
def test_keypoints_without_categories_pool_the_records():
    """pycocotools' computeOks ignores useCats (AP 0 whatever the data); precall pools the records as it
    does for boxes: with one category, use_cats=False gives the use_cats=True numbers."""
    from test_detection_keypoints import _pycocotools_kp, synthetic_keypoints

    gt, results = synthetic_keypoints(3)
    assert len(gt["categories"]) == 1
    data = detection.load_coco(gt, results)
    pooled = detection.evaluate_coco(data, iou_type="keypoints", use_cats=False)
    per_class = detection.evaluate_coco(data, iou_type="keypoints")
    np.testing.assert_array_equal(pooled.stats, per_class.stats)
    assert per_class.stats[0] > 0
    assert _pycocotools_kp(gt, results, useCats=0).stats[0] == 0


# ------------------------------------------------------------------ issue 22.3: area ranges, IoU thresholds, max_dets by name
_RANGES = [("all", (0.0, 1e5**2)), ("small", (0.0, 32.0**2)), ("medium", (32.0**2, 96.0**2)),
           ("large", (96.0**2, 1e5**2))]


def _per_class_reference(theirs, area_names, all_index, max_dets):
    """Per-class AP, AR and AP of each other range from pycocotools' arrays, picked by name and value."""
    prec, rec = theirs.eval["precision"], theirs.eval["recall"]
    m = list(theirs.params.maxDets).index(max(max_dets))
    out = []
    for k in range(prec.shape[2]):
        p = prec[:, :, k, all_index, m]
        row = {"AP": p[p > -1].mean() if (p > -1).any() else -1.0}
        r = rec[:, k, all_index, m]
        row["AR"] = r[r > -1].mean() if (r > -1).any() else -1.0
        for a, name in enumerate(area_names):
            if name != "all":
                q = prec[:, :, k, a, m]
                row[f"AP_{name}"] = q[q > -1].mean() if (q > -1).any() else -1.0
        out.append(row)
    return out


@pytest.mark.parametrize("position", range(4))
@pytest.mark.parametrize("max_dets", [(1, 10, 100), (100, 1, 10), (10, 100, 1)])
def test_all_range_in_any_position_and_max_dets_in_any_order(position, max_dets):
    gt, results = synthetic(21, n_images=40)
    ranges = [r for r in _RANGES if r[0] != "all"]
    ranges.insert(position, _RANGES[0])
    area_ranges = dict(ranges)
    data = detection.load_coco(gt, results)
    ev = detection.evaluate_coco(data, area_ranges=area_ranges, max_dets=max_dets)
    theirs = _pycocotools(gt, results, areaRng=[list(v) for v in area_ranges.values()],
                          areaRngLbl=list(area_ranges), maxDets=sorted(max_dets))
    np.testing.assert_allclose(ev.precision, theirs.eval["precision"], rtol=0, atol=1e-12)
    ref = _per_class_reference(theirs, list(area_ranges), position, max_dets)
    for row, expected in zip(ev.per_class, ref):
        for key, value in expected.items():
            assert row[key] == pytest.approx(value, abs=1e-12), key
    base = detection.evaluate_coco(data)  # the default order: the same numbers by name
    np.testing.assert_array_equal(ev.stats, base.stats)
    assert ev.per_class == base.per_class
    for method in ("coco", "voc2010"):
        assert ev.mean_average_precision(method) == base.mean_average_precision(method)
        assert ev.mean_average_precision(method, area="small") == base.mean_average_precision(method, area="small")
    a = ev.bootstrap(30, random_state=1)
    b = base.bootstrap(30, random_state=1)
    np.testing.assert_equal(a.intervals, b.intervals)
    np.testing.assert_equal(a.per_class, b.per_class)
    same = detection.compare_coco(ev, ev, 30, random_state=2)
    assert all(lo == hi == 0 for lo, hi in same.intervals.values())


def test_without_an_all_range_per_class_is_undefined_and_bootstrap_refuses():
    gt, results = synthetic(22)
    data = detection.load_coco(gt, results)
    ev = detection.evaluate_coco(data, area_ranges={"small": (0, 1024)})
    base = detection.evaluate_coco(data)  # its "all" range holds every area of these boxes
    # n_gt without an "all" range: the ground truths of any area (not crowd, not flagged ignore)
    assert [r["n_gt"] for r in ev.per_class] == [r["n_gt"] for r in base.per_class]
    assert all(r["AP"] == -1 and "AP_small" in r for r in ev.per_class)
    with pytest.raises(ValueError, match=r"`area` must be one of the evaluated area ranges \['small'\]; got 'all'"):
        ev.bootstrap(10)
    with pytest.raises(ValueError, match=r"pass an 'all' range"):
        ev.mean_average_precision()


def test_ranges_without_the_summarys_names_are_defined_and_not_warned_about(recwarn):
    """A range named neither all, small, medium nor large: the summary's numbers are -1 (it has none of its
    ranges) but ground truth counts: no warning that every number is undefined; per class its AP, n_gt."""
    gt, results = synthetic(23)
    gt["annotations"][0]["ignore"] = 1
    data = detection.load_coco(gt, results)
    recwarn.clear()
    ev = detection.evaluate_coco(data, area_ranges={"everything": (0, 1e10)})
    assert not [w for w in recwarn if issubclass(w.category, UndefinedMetricWarning)]
    base = detection.evaluate_coco(data, area_ranges={"all": (0, 1e10)})
    assert (ev.stats == -1).all()
    for row, ref in zip(ev.per_class, base.per_class):
        assert row["AP_everything"] == ref["AP"] and row["n_gt"] == ref["n_gt"] and row["n_det"] == ref["n_det"]
    assert sum(r["n_gt"] for r in ev.per_class) == sum(not a.get("iscrowd") for a in gt["annotations"]) - 1
    with pytest.warns(UndefinedMetricWarning, match="every number is undefined"):  # true there: said
        detection.evaluate_coco(detection.load_coco(dict(gt, annotations=[]), results),
                                area_ranges={"everything": (0, 1e10)})


@pytest.mark.parametrize("change, setting", [
    ({"iou_thresholds": [0.5, 0.75]}, "iou_thresholds"),
    ({"max_dets": (1, 10, 50)}, "max_dets"),
    ({"area_ranges": {"all": (0, 1e10)}}, "area_ranges"),
    ({"recall_thresholds": np.linspace(0, 1, 11)}, "recall_thresholds"),
    ({"ties": "group"}, "ties"),
])
def test_compare_coco_refuses_different_settings(change, setting):
    gt, results = synthetic(23)
    data = detection.load_coco(gt, results)
    with pytest.raises(ValueError, match=rf"the two evaluations differ in `{setting}`"):
        detection.compare_coco(detection.evaluate_coco(data), detection.evaluate_coco(data, **change), 10)


def test_cli_per_class_and_ci_with_all_listed_last(tmp_path, capsys):
    gt, results = synthetic(24, n_images=40)
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(results))
    outs = []
    for spec in ("small=0:1024,medium=1024:9216,large=9216:1e10,all=0:1e10",
                 "all=0:1e10,small=0:1024,medium=1024:9216,large=9216:1e10"):
        assert main(["detection", "coco", str(gt_path), str(res_path), "--area-ranges", spec, "--json", "--ci",
                     "--n-resamples", "20"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0]["per_class"] == [dict(r) for r in outs[1]["per_class"]]
    assert outs[0]["ci"] == outs[1]["ci"] and outs[0]["stats"] == outs[1]["stats"]


def test_cli_per_class_fits_80_columns_unless_wide(tmp_path, capsys):
    gt, results = synthetic(25)
    gt["categories"][0]["name"] = "a rather long class name"
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(results))
    assert main(["detection", "coco", str(gt_path), str(res_path), "--per-class"]) == 0
    narrow = capsys.readouterr().out
    assert max(len(line) for line in narrow.splitlines()) <= 80
    assert narrow.count("a rather long class name") == 2  # the table in two blocks, the class repeated
    assert main(["detection", "coco", str(gt_path), str(res_path), "--per-class", "--wide"]) == 0
    wide = capsys.readouterr().out
    assert wide.count("a rather long class name") == 1 and max(len(line) for line in wide.splitlines()) > 80
    for word in ("AP_small", "#detections", "AR@100"):
        assert word in narrow and word in wide


# ------------------------------------------------------------------ ids beyond 64 bits: a ValueError, not an OverflowError
_INT64 = r"from -9223372036854775808 to 9223372036854775807"


def _written(folder, gt, results, results_name):
    """``gt`` and ``results`` as JSON files in ``folder`` (gt.json and ``results_name``): their paths."""
    gt_path, res_path = folder / "gt.json", folder / results_name
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(results))
    return gt_path, res_path


@pytest.mark.parametrize("side, mutate, where", [
    ("gt", lambda g, r: g["images"][0].update(id=10**30), r"ground truth image 0: 'id' 10{30}"),
    ("gt", lambda g, r: g["categories"][0].update(id=2**63), r"ground truth category 0: 'id' 9223372036854775808"),
    ("gt", lambda g, r: g["categories"][1].update(id=-2**63 - 1), r"ground truth category 1: 'id' -9223372036854775809"),
    ("gt", lambda g, r: g["annotations"][0].update(id=2**64), r"ground truth annotation 0: 'id' 18446744073709551616"),
    ("gt", lambda g, r: g["annotations"][1].update(image_id=10**30), r"ground truth annotation 1: 'image_id'"),
    ("gt", lambda g, r: g["annotations"][2].update(category_id=2**63), r"ground truth annotation 2: 'category_id'"),
    ("results", lambda g, r: r[3].update(image_id=10**30), r"results detection 3: 'image_id'"),
    ("results", lambda g, r: r[3].update(category_id=2**63), r"results detection 3: 'category_id'"),
    ("results", lambda g, r: r[4].update(id=10**30), r"results detection 4: 'id'"),
])
def test_ids_beyond_64_bits_are_refused_naming_file_record_and_range(side, mutate, where, tmp_path, capsys):
    gt, results = synthetic(3)
    mutate(gt, results)
    gt_path, res_path = _written(tmp_path, gt, results, "res.json")
    named = gt_path if side == "gt" else res_path
    with pytest.raises(ValueError, match=re.escape(str(named)) + ": " + where + r".* out of range.*" + _INT64):
        _quiet_load(str(gt_path), str(res_path))
    assert main(["detection", "coco", str(gt_path), str(res_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"precall: error: {named}: ") and _INT64 in err, err
    assert "OverflowError" not in err and "Traceback" not in err


def test_ids_at_the_64_bit_limits_are_read_and_one_beyond_refused():
    gt, results = synthetic(3)
    old = gt["categories"][0]["id"]
    gt["categories"][0]["id"] = 2**63 - 1
    for rec in gt["annotations"] + results:
        if rec["category_id"] == old:
            rec["category_id"] = 2**63 - 1
    gt["images"].append({"id": -2**63})  # an image without records
    data = _quiet_load(gt, results)
    assert 2**63 - 1 in data.classes.tolist() and data.classes.dtype == np.int64 and -2**63 in data.images.tolist()
    _assert_same(detection.evaluate_coco(data), _pycocotools(gt, results))
    gt["images"][-1]["id"] = -2**63 - 1
    with pytest.raises(ValueError, match=rf"ground truth image {len(gt['images']) - 1}: 'id' -9223372036854775809 "
                       r"is out of range.*" + _INT64):
        _quiet_load(gt, results)


# ------------------------------------------------------------------ warnings name the file they are about
@pytest.mark.parametrize("mutate, about, match", [
    (lambda g, r: g.update(categories=[]), "gt", r"\d+ ground truth annotations name an image or category"),
    (lambda g, r: g["annotations"][0].update(id=0), "gt", r"ground truth annotation ids: .*equal to 0"),
    (lambda g, r: g["annotations"][0]["bbox"].__setitem__(2, 0.0), "gt", r"1 ground truth annotations have a box"),
    (lambda g, r: r[0]["bbox"].__setitem__(2, 0.0), "results", r"1 results detections have a box of zero width"),
])
def test_warnings_name_the_file_they_are_about(mutate, about, match, tmp_path, capsys):
    gt, results = synthetic(2)
    mutate(gt, results)
    gt_path, res_path = _written(tmp_path, gt, results, "dt.json")
    named, other = (gt_path, res_path) if about == "gt" else (res_path, gt_path)
    with warnings.catch_warnings():  # the results' unlisted categories, without categories: checked below
        warnings.filterwarnings("ignore", "results detections name a category", detection.DetectionWarning)
        with pytest.warns(detection.DetectionWarning, match="^" + re.escape(f"{named}: ") + match):
            detection.load_coco(str(gt_path), str(res_path))
        with pytest.warns(detection.DetectionWarning, match="^" + match):  # parsed JSON: no file to name
            detection.load_coco(gt, results)
    assert main(["detection", "coco", str(gt_path), str(res_path)]) == 0
    err = capsys.readouterr().err
    # without categories nothing is evaluated: more lines say every number is undefined (-1) and that the
    # results' categories are not listed (in the results file)
    err = "".join(line for line in err.splitlines(keepends=True)
                  if "every number is undefined" not in line and "results detections name a category" not in line)
    assert err.count("\n") == 1 and err.startswith(f"precall: warning: {named}: ") and str(other) not in err, err
    assert re.search(match, err)


def test_crowdpose_warnings_name_the_ground_truth(shared_data_dir, tmp_path, capsys):
    folder = shared_data_dir / "crowdpose_small"
    if not folder.exists():
        pytest.skip("no CrowdPose sample")
    gt = json.loads((folder / "gt.json").read_text())
    gt["annotations"][0]["id"] = 0
    gt_path = tmp_path / "gt.json"
    gt_path.write_text(json.dumps(gt))
    res_path = folder / "dt.json"
    with pytest.warns(detection.DetectionWarning, match=re.escape(f"{gt_path}: ground truth annotation ids")):
        detection.evaluate_crowdpose(str(gt_path), str(res_path))
    assert main(["detection", "crowdpose", str(gt_path), str(res_path)]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"precall: warning: {gt_path}: ground truth annotation ids") and err.count("\n") == 1, err


# ------------------------------------------------------------------ VOC XML: the line of the element at fault
_XML = """<annotation>
  <object><name>cat</name><difficult>{difficult}</difficult>
    <bndbox>
      <xmin>10</xmin><ymin>10</ymin>
      <xmax>{xmax}</xmax><ymax>50</ymax>
    </bndbox>
  </object>
</annotation>
"""


@pytest.mark.parametrize("xml, message", [
    (_XML.format(difficult=0, xmax="abc"), r"a\.xml: line 5: <xmax> of object 'cat' must be a finite number.*got 'abc'"),
    (_XML.format(difficult=0, xmax="inf"), r"a\.xml: line 5: <xmax> .*finite.*got 'inf'"),
    (_XML.format(difficult=0, xmax="40").replace("<ymin>10</ymin>", ""),
     r"a\.xml: line 3: the <bndbox> of object 'cat' has no <ymin>"),
    (_XML.format(difficult=0, xmax="5"), r"a\.xml: line 3: object 'cat': the box reads as x1=10 y1=10 x2=5"),
    (_XML.format(difficult=0, xmax="40").replace("<name>cat</name>", ""), r"a\.xml: line 2: an <object> without <name>"),
    (_XML.format(difficult="yes", xmax="40"), r"a\.xml: line 2: <difficult>: 'difficult' must be 0 or 1 .*got 'yes'"),
    ('<?xml version="1.0"?>\n<!DOCTYPE a [\n<!ENTITY x "10">\n]>\n' + _XML.format(difficult=0, xmax="&x;"),
     r"a\.xml: line 3: an entity declaration"),
    ('<?xml version="1.0"?>\n<!DOCTYPE a [\n<!ENTITY a "aaaaaaaaaa">\n<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\n'
     '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">\n]>\n' + _XML.format(difficult=0, xmax="&c;"),
     r"a\.xml: line 3: an entity declaration"),  # nothing is expanded
])
def test_voc_xml_errors_name_the_line(tmp_path, capsys, xml, message):
    (tmp_path / "ann").mkdir()
    (tmp_path / "det").mkdir()
    (tmp_path / "ann" / "a.xml").write_text(xml)
    with pytest.raises(ValueError, match=message):
        detection.load_voc(str(tmp_path / "ann"), str(tmp_path / "det"))
    assert main(["detection", "voc", str(tmp_path / "ann"), str(tmp_path / "det")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(message, err) and "line 0" not in err, err


def test_voc_xml_malformed_names_the_line_and_difficult_takes_the_documented_values(tmp_path):
    (tmp_path / "ann").mkdir()
    (tmp_path / "det").mkdir()
    path = tmp_path / "ann" / "a.xml"
    path.write_text(_XML.format(difficult=0, xmax="40").replace("</bndbox>", ""))
    with pytest.raises(ValueError, match=r"a\.xml: line 7: malformed XML: mismatched tag: line 7, column 4"):
        detection.load_voc(str(tmp_path / "ann"), str(tmp_path / "det"))
    for text, difficult in [("0", False), ("1", True), (" 1 ", True), ("1.0", True), ("0.0", False), ("true", True),
                            ("False", False), ("TRUE", True), ("", False)]:
        path.write_text(_XML.format(difficult=text, xmax="40"))
        data = detection.load_voc(str(tmp_path / "ann"), str(tmp_path / "det"))
        assert data.gt_ignore.tolist() == [difficult], text


# ------------------------------------------------------------------ text ground truth: the `difficult` field
def _text_set(tmp_path, gt_line):
    for name in ("g", "d"):
        (tmp_path / name).mkdir()
    (tmp_path / "g" / "a.txt").write_text("dog 60 60 20 20\n" + gt_line + "\n")
    (tmp_path / "d" / "a.txt").write_text("cat 0.9 10 10 40 40\ndog 0.8 60 60 20 20\n")
    return str(tmp_path / "g"), str(tmp_path / "d")


def test_text_difficult_accepts_the_documented_values(tmp_path, capsys):
    g, d = _text_set(tmp_path, "cat 10 10 40 40")
    for field, difficult in [("0", False), ("1", True), ("0.0", False), ("1.0", True), ("1e0", True),
                             ("false", False), ("True", True), ("FALSE", False)]:
        (tmp_path / "g" / "a.txt").write_text(f"dog 60 60 20 20\ncat 10 10 40 40 {field}\n")
        data = detection.load_text(g, d)
        assert data.gt_ignore.tolist() == [False, difficult], field
        assert main(["detection", "text", g, d, "--per-class", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["n_gt"] == {"cat": 0 if difficult else 1, "dog": 1}, field
        assert out["ap"]["cat" if not difficult else "dog"] == 1.0


@pytest.mark.parametrize("field", ["no", "yes", "2", "0.5", "-1", "nan", "difficult", "0x1"])
def test_text_difficult_refuses_anything_else_naming_file_line_and_column(tmp_path, capsys, field):
    g, d = _text_set(tmp_path, f"cat 10 10 40 40 {field}")
    message = re.escape(os.path.join(g, "a.txt")) + r": line 2, column 6: 'difficult' must be 0 or 1 \(or false / true\)"
    with pytest.raises(ValueError, match=message + ".*" + re.escape(repr(field))):
        detection.load_text(g, d)
    assert main(["detection", "text", g, d, "--per-class"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(message, err) and "Traceback" not in err, err
