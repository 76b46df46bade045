"""Detection input files that are not what they seem: JSON nested past any use, bytes that are
not UTF-8, a BOM, integers too long to convert; VOC detection patterns with a bad field and
class names that would leave the pattern's folder; undefined mAP.  Each is refused (or read)
with one line naming the file and the record or line and how to fix it, never a traceback."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from precall import detection
from precall.cli import main

DATA = Path(__file__).resolve().parent / "data"

GT = {"images": [{"id": 1, "width": 100, "height": 100}, {"id": 2, "width": 100, "height": 100}],
      "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "area": 400, "iscrowd": 0},
                      {"id": 2, "image_id": 2, "category_id": 1, "bbox": [30, 30, 20, 20], "area": 400, "iscrowd": 0}],
      "categories": [{"id": 1, "name": "a"}]}
RESULTS = [{"image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "score": 0.9},
           {"image_id": 2, "category_id": 1, "bbox": [30, 30, 20, 21], "score": 0.8}]
DEEP = b"[" * 100_000 + b"]" * 100_000


def _one_line_error(argv, capsys, *needles):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("precall: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


@pytest.fixture
def coco(tmp_path):
    gt, res = tmp_path / "gt.json", tmp_path / "res.json"
    gt.write_text(json.dumps(GT))
    res.write_text(json.dumps(RESULTS))
    return tmp_path, str(gt), str(res)


def _deep_list(levels):
    out = inner = []
    for _ in range(levels):
        inner.append([])
        inner = inner[0]
    return out


# ------------------------------------------------------------------ 1. JSON nested too deeply
@pytest.mark.parametrize("side", ["results", "ground truth"])
def test_deeply_nested_json_is_refused_naming_the_file(coco, side):
    folder, gt, res = coco
    deep = folder / "deep.json"
    deep.write_bytes(DEEP if side == "results" else b'{"images": ' + DEEP + b"}")
    args = (gt, str(deep)) if side == "results" else (str(deep), res)
    with pytest.raises(ValueError, match=rf"{side} '.*deep\.json': not usable JSON: nested too deeply \(more than 512"):
        detection.load_coco(*args)


def test_nesting_up_to_512_levels_is_read(coco):
    folder, gt, _ = coco
    ok = folder / "ok.json"
    # 2 levels of the results list and record, 510 in an unused key: 512 in all
    ok.write_text(json.dumps([dict(RESULTS[0], extra=_deep_list(509)), RESULTS[1]]))
    assert len(detection.load_coco(gt, str(ok)).dt_score) == 2
    deeper = folder / "deeper.json"
    deeper.write_text(json.dumps([dict(RESULTS[0], extra=_deep_list(510)), RESULTS[1]]))
    with pytest.raises(ValueError, match="nested too deeply"):
        detection.load_coco(gt, str(deeper))


def test_cli_deeply_nested_json_one_line_exit_2(coco, capsys):
    folder, gt, res = coco
    deep = folder / "deep.json"
    deep.write_bytes(DEEP)
    deep_gt = folder / "deep_gt.json"
    deep_gt.write_bytes(b'{"images": ' + DEEP + b"}")
    for argv in (["detection", "coco", gt, str(deep)], ["detection", "coco", str(deep_gt), res],
                 ["detection", "compare", gt, res, str(deep)],
                 ["detection", "crowdpose", str(DATA / "crowdpose_small" / "gt.json"), str(deep)],
                 ["detection", "crowdpose", str(deep_gt), str(DATA / "crowdpose_small" / "dt.json")]):
        _one_line_error(argv, capsys, "nested too deeply", "deep")


def test_deep_python_objects_are_refused_not_recursed():
    deep = _deep_list(100_000)
    segm = [{"image_id": 1, "category_id": 1, "segmentation": deep, "score": 0.5}]
    with pytest.raises(ValueError, match=r"results detection 0: 'segmentation': a polygon must be a flat list"):
        detection.load_coco(GT, segm)
    for key in ("image_id", "bbox", "score"):
        with pytest.raises(ValueError, match=rf"results detection 0: '{key}'"):
            detection.load_coco(GT, [dict(RESULTS[0], **{key: deep})])
    # CrowdPose copies what it changes only: a deep unused key is not walked
    gt = json.loads((DATA / "crowdpose_small" / "gt.json").read_text())
    dt = json.loads((DATA / "crowdpose_small" / "dt.json").read_text())
    expected = detection.evaluate_crowdpose(gt, dt)
    assert detection.evaluate_crowdpose(dict(gt, info=deep), dt) == expected
    assert gt == json.loads((DATA / "crowdpose_small" / "gt.json").read_text())  # the caller's JSON left as given


# ------------------------------------------------------------------ 4. encodings, BOM, long integers
def test_json_with_a_bom_is_read_as_without(coco):
    folder, gt, res = coco
    bom = folder / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + Path(res).read_bytes())
    gt_bom = folder / "gt_bom.json"
    gt_bom.write_bytes(b"\xef\xbb\xbf" + Path(gt).read_bytes())
    plain = detection.evaluate_coco(detection.load_coco(gt, res)).stats
    assert np.array_equal(detection.evaluate_coco(detection.load_coco(str(gt_bom), str(bom))).stats, plain)


def test_text_and_xml_files_with_a_bom_are_read_as_without(tmp_path):
    for sub in ("g", "d", "a", "g0", "d0", "a0"):
        (tmp_path / sub).mkdir()
    gt, dt = "cat 10 10 40 40\r\ndog 0 0 5 5\r\n", "cat 0.9 10 10 40 40\ndog 0.4 0 0 5 6\n"
    xml = ("<annotation><object><name>cat</name><bndbox><xmin>10</xmin><ymin>10</ymin><xmax>50</xmax>"
           "<ymax>50</ymax></bndbox></object></annotation>")
    for bom, suffix in ((b"\xef\xbb\xbf", ""), (b"", "0")):
        (tmp_path / f"g{suffix}" / "a.txt").write_bytes(bom + gt.encode())
        (tmp_path / f"d{suffix}" / "a.txt").write_bytes(bom + dt.encode())
        (tmp_path / f"a{suffix}" / "a.xml").write_bytes(bom + xml.encode())
    with_bom = detection.evaluate_voc(detection.load_text(str(tmp_path / "g"), str(tmp_path / "d")))
    without = detection.evaluate_voc(detection.load_text(str(tmp_path / "g0"), str(tmp_path / "d0")))
    assert with_bom.ap == without.ap and with_bom.ap["cat"] == 1.0
    voc = detection.evaluate_voc(detection.load_voc(str(tmp_path / "a"), str(tmp_path / "d"), box_format="xywh"))
    assert voc.ap == {"cat": 1.0}


def test_invalid_utf8_names_file_line_and_column(tmp_path, capsys):
    (tmp_path / "g").mkdir()
    (tmp_path / "d").mkdir()
    (tmp_path / "g" / "a.txt").write_bytes(b"cat 10 10 40 40\n\xff\xfe 1 1 1 1\n")
    (tmp_path / "d" / "a.txt").write_bytes(b"cat 0.9 10 10 40 40\n")
    with pytest.raises(ValueError, match=r"g/a\.txt: line 2, column 1 \(byte offset 16\): not valid UTF-8 text "
                                         r"\(byte 0xff\); save the file as UTF-8"):
        detection.load_text(str(tmp_path / "g"), str(tmp_path / "d"))
    _one_line_error(["detection", "text", str(tmp_path / "g"), str(tmp_path / "d")], capsys,
                    "a.txt: line 2, column 1", "UTF-8")
    res = tmp_path / "res.json"
    res.write_bytes(json.dumps(RESULTS[:1]).encode()[:-1] + b',\n {"x": "\xe9"}]')
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps(GT))
    with pytest.raises(ValueError, match=r"results '.*res\.json': line 2, column 9 \(byte offset \d+\): not valid "
                                         r"UTF-8 text \(byte 0xe9\)"):
        detection.load_coco(str(gt), str(res))
    _one_line_error(["detection", "coco", str(gt), str(res)], capsys, "res.json", "line 2, column 9", "UTF-8")


def test_integers_too_long_to_convert_are_refused_as_out_of_range(coco, capsys):
    folder, gt, _ = coco
    big = folder / "big.json"
    big.write_text('[{"image_id": ' + "9" * 5000 + ', "category_id": 1, "bbox": [1, 1, 1, 1], "score": 0.5}]')
    with pytest.raises(ValueError, match=r"big\.json: results detection 0: 'image_id' <an integer of 5000 digits> "
                                         r"is out of range: ids must be integers from"):
        detection.load_coco(gt, str(big))
    _one_line_error(["detection", "coco", gt, str(big)], capsys, "big.json", "results detection 0", "out of range")
    # the same in an unused key is read (as the JSON Lines reader does)
    fine = folder / "fine.json"
    fine.write_text('[{"image_id": 1, "category_id": 1, "bbox": [1, 1, 1, 1], "score": 0.5, "x": ' + "7" * 5000 + "}]")
    assert len(detection.load_coco(gt, str(fine)).dt_score) == 1
    # as Python integers: no message fails to print them
    for key, value in (("image_id", 10**5000), ("bbox", [10**5000, 1, 1, 1]), ("score", 10**400)):
        with pytest.raises(ValueError, match=rf"results detection 0: '{key}'.*(digits|finite)"):
            detection.load_coco(GT, [dict(RESULTS[0], **{key: value})])
    with pytest.raises(ValueError, match=r"ground truth annotation 0: 'area' must be a finite number"):
        detection.load_coco(dict(GT, annotations=[dict(GT["annotations"][0], area=10**400)]), [])


# ------------------------------------------------------------------ 2, 3. VOC per-class patterns
_XML = ("<annotation><object><name>{}</name><bndbox><xmin>10</xmin><ymin>10</ymin><xmax>50</xmax><ymax>50</ymax>"
        "</bndbox></object>\n</annotation>")


@pytest.fixture
def voc(tmp_path):
    (tmp_path / "ann").mkdir()
    (tmp_path / "dets").mkdir()
    (tmp_path / "ann" / "img1.xml").write_text(_XML.format("cat"))
    (tmp_path / "dets" / "det_cat.txt").write_text("img1 0.9 10 10 50 50\n")
    return tmp_path


@pytest.mark.parametrize("pattern, shown", [
    ("det_{}_{name}.txt", "has the fields {}, {name}"),
    ("det_{}_{0}.txt", "has the fields {}, {0}"),
    ("det_{0}.txt", "has the fields {0}"),
    ("det_{:>3}.txt", "has the fields {:>3}"),
    ("det_{!r}.txt", "has the fields {!r}"),
    ("det_{}{}.txt", "has the fields {}, {}"),
    ("det_{}}.txt", "is not a valid pattern (Single '}' encountered"),
    ("det_{.txt", "is not a valid pattern (expected '}' before end of string"),
])
def test_bad_voc_patterns_are_refused_naming_the_argument(voc, capsys, pattern, shown):
    full = str(voc / "dets" / pattern)
    with pytest.raises(ValueError) as info:
        detection.load_voc(str(voc / "ann"), full)
    message = str(info.value)
    assert message.startswith(f"`detections` pattern {full!r} ") and shown in message, message
    assert "exactly one {}" in message and "{{ or }}" in message
    _one_line_error(["detection", "voc", str(voc / "ann"), full], capsys, "`detections` pattern", shown,
                    "exactly one {}")
    # what the message says works
    (voc / "dets" / "det_{x}_cat.txt").write_text("img1 0.9 10 10 50 50\n")
    ev = detection.evaluate_voc(detection.load_voc(str(voc / "ann"), str(voc / "dets" / "det_{{x}}_{}.txt")))
    assert ev.ap == {"cat": 1.0}
    assert detection.evaluate_voc(detection.load_voc(str(voc / "ann"), str(voc / "dets" / "det_{}.txt"))).ap \
        == {"cat": 1.0}


def test_a_detection_on_an_image_without_annotation_file_names_its_file_and_line(voc, capsys):
    (voc / "dets" / "det_cat.txt").write_text("img1 0.9 10 10 50 50\nnosuchimg 0.9 1 1 5 5\n")
    det = str(voc / "dets" / "det_cat.txt")
    with pytest.raises(ValueError, match=rf"^{det}: line 2, column 1: detection on image 'nosuchimg', which has no "
                                         r"annotation file in .* \(no 'nosuchimg.xml'\)"):
        detection.load_voc(str(voc / "ann"), str(voc / "dets" / "det_{}.txt"))
    _one_line_error(["detection", "voc", str(voc / "ann"), str(voc / "dets" / "det_{}.txt")], capsys,
                    f"{det}: line 2, column 1: detection on image 'nosuchimg'")
    # a directory of per-image files: the image is the file's name
    (voc / "per_image").mkdir()
    (voc / "per_image" / "img1.txt").write_text("cat 0.9 10 10 40 40\n")
    (voc / "per_image" / "zzz.txt").write_text("\ncat 0.9 1 1 5 5\n")
    _one_line_error(["detection", "voc", str(voc / "ann"), str(voc / "per_image")], capsys,
                    f"{voc / 'per_image' / 'zzz.txt'}: line 2: detection on image 'zzz'", "(no 'zzz.xml')")


@pytest.mark.parametrize("name, pattern, reason", [
    ("../evil", "{}.txt", "a path separator"),
    ("../../evil", "det_{}.txt", "a path separator"),
    ("/abs/evil", "{}.txt", "a path separator"),
    ("sub\\evil", "{}.txt", "a path separator"),
    ("..", "{}/x.txt", "the folder name '..'"),
    (".", "{}/x.txt", "the folder name '.'"),
])
def test_class_names_that_would_leave_the_pattern_folder_are_refused(voc, capsys, name, pattern, reason):
    (voc / "ann" / "img2.xml").write_text("<!-- second -->\n" + _XML.format(name))
    (voc / "evil.txt").write_text("img2 0.9 10 10 50 50\n")  # what the name points to
    (voc / "x.txt").write_text("img2 0.9 10 10 50 50\n")
    full = str(voc / "dets" / pattern)
    with pytest.raises(ValueError) as info:
        detection.load_voc(str(voc / "ann"), full)
    message = str(info.value)
    assert message.startswith(f"{voc / 'ann' / 'img2.xml'}: line 2: class {name!r} cannot name a file"), message
    assert reason in message and "rename the class" in message
    _one_line_error(["detection", "voc", str(voc / "ann"), full, "--per-class"], capsys, "img2.xml: line 2",
                    "rename the class")
    # with a directory of per-image detection files the name is a label only
    (voc / "per_image").mkdir()
    (voc / "per_image" / "img2.txt").write_text(f"{name} 0.9 10 10 40 40\n")
    ev = detection.evaluate_voc(detection.load_voc(str(voc / "ann"), str(voc / "per_image"), box_format="xywh"))
    assert ev.ap[name] == 1.0 and ev.ap["cat"] == 0.0


# ------------------------------------------------------------------ 5. undefined mAP
def _no_ground_truth(tmp_path, difficult=False):
    (tmp_path / "g").mkdir()
    (tmp_path / "d").mkdir()
    (tmp_path / "g" / "a.txt").write_text("cat 10 10 40 40 1\n" if difficult else "")
    (tmp_path / "d" / "a.txt").write_text("cat 0.9 10 10 40 40\n")
    return str(tmp_path / "g"), str(tmp_path / "d")


@pytest.mark.parametrize("difficult", [False, True])
def test_voc_map_without_ground_truth_follows_the_undefined_policy(tmp_path, difficult):
    from precall import UndefinedMetricWarning

    data = detection.load_text(*_no_ground_truth(tmp_path, difficult))
    with pytest.warns(UndefinedMetricWarning, match=r"no class has a ground truth that counts \(("
                      + ("all 1 ground-truth boxes are difficult" if difficult else "there is no ground-truth box")
                      + r"); images: 1, detections: 1\), so no class has an AP and mAP, their mean, is undefined; "
                      r"reported as NaN") as caught:
        ev = detection.evaluate_voc(data)
    assert np.isnan(ev.map) and ev.ap == {} and len(caught) == 1
    assert caught[0].filename == __file__  # points at the caller
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(detection.evaluate_voc(data, on_undefined="nan").map)
        assert detection.evaluate_voc(data, on_undefined=0).map == 0.0
    with pytest.raises(ValueError, match=r"mAP is undefined: no class has a ground truth"):
        detection.evaluate_voc(data, on_undefined="raise")
    with pytest.raises(ValueError, match="`on_undefined` must be"):
        detection.evaluate_voc(data, on_undefined="zero")


def test_cli_voc_and_text_without_ground_truth_warn_in_one_line(tmp_path, capsys):
    gt, dt = _no_ground_truth(tmp_path)
    assert main(["detection", "text", gt, dt]) == 0
    out, err = capsys.readouterr()
    assert "mAP    nan" in out
    assert err.startswith(f"precall: warning: {gt}: no class has a ground truth that counts") and err.count("\n") == 1
    assert "--on-undefined raise or zero" in err
    (tmp_path / "ann").mkdir()
    (tmp_path / "ann" / "a.xml").write_text("<annotation><filename>a.jpg</filename></annotation>")
    (tmp_path / "empty").mkdir()
    assert main(["detection", "voc", str(tmp_path / "ann"), str(tmp_path / "empty")]) == 0
    err = capsys.readouterr().err
    assert "warning:" in err and "mAP, their mean, is undefined" in err and err.count("\n") == 1
    assert main(["detection", "text", gt, dt, "--on-undefined", "zero", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["mAP"] == 0.0 and err == ""
    assert main(["detection", "text", gt, dt, "--on-undefined", "nan"]) == 0
    assert capsys.readouterr().err == ""
    _one_line_error(["detection", "text", gt, dt, "--on-undefined", "raise"], capsys, "mAP is undefined",
                    "--on-undefined warn, nan or zero")


def test_cli_coco_without_ground_truth_keeps_minus_one_and_warns(tmp_path, capsys):
    gt, res = tmp_path / "gt.json", tmp_path / "res.json"
    gt.write_text(json.dumps(dict(GT, annotations=[])))
    res.write_text("[]")
    assert main(["detection", "coco", str(gt), str(res), "--json"]) == 0
    out, err = capsys.readouterr()
    assert all(v == -1 for v in json.loads(out)["stats"].values())
    assert err == (f"precall: warning: {gt}: no ground-truth annotation counts (none of an evaluated category and "
                   "area range), so every number is undefined; reported as -1 (pycocotools' convention)\n")


def test_evaluate_coco_without_ground_truth_warns_as_every_undefined_result(tmp_path):
    """``evaluate_coco`` itself says when every number is pycocotools' -1 (only the command line did), with
    the one warning class of undefined results; a set with ground truth says nothing."""
    import precall

    gt, res = tmp_path / "gt.json", tmp_path / "res.json"
    gt.write_text(json.dumps(dict(GT, annotations=[])))
    res.write_text("[]")
    with pytest.warns(precall.UndefinedMetricWarning, match="every number is undefined; reported as -1"):
        ev = detection.evaluate_coco(detection.load_coco(gt, res))
    assert (ev.stats == -1).all()
    gt.write_text(json.dumps(GT))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = detection.evaluate_coco(detection.load_coco(gt, res))
    assert not (ev.stats == -1).all()


def test_a_float_id_among_64_bit_ids_keeps_every_detection_on_its_image():
    """One result's ``image_id`` written as a float equal to an image's id made numpy hold the whole column as
    floats, and the id 2**60 + 1 of another result became 2**60: that detection moved to the other image
    (AP 0.2525 against pycocotools' 1.0). Each id is now an int64 on its own."""
    pytest.importorskip("pycocotools")
    from test_detection import _pycocotools

    big = 2**60
    gt = {"images": [{"id": big}, {"id": big + 1}], "categories": [{"id": 1, "name": "a"}],
          "annotations": [{"id": 1, "image_id": big, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100,
                           "iscrowd": 0},
                          {"id": 2, "image_id": big + 1, "category_id": 1.0, "bbox": [50, 50, 10, 10], "area": 100,
                           "iscrowd": 0}]}
    res = [{"image_id": big + 1, "category_id": 1, "bbox": [50, 50, 10, 10], "score": 0.9},
           {"image_id": float(big), "category_id": 1.0, "bbox": [0, 0, 10, 10], "score": 0.8}]
    data = detection.load_coco(gt, res)
    assert data.dt_image.dtype == data.gt_image.dtype == np.int64 and data.dt_image.tolist() == [big + 1, big]
    ev = detection.evaluate_coco(data)
    np.testing.assert_array_equal(ev.stats, _pycocotools(gt, res).stats)
    assert ev.stats[0] > 0.99


@pytest.mark.parametrize("bad", [1.5, -0.25])
def test_a_fractional_category_or_image_id_is_refused(bad):
    gt = dict(GT)
    res = [{"image_id": 1, "category_id": bad, "bbox": [0, 0, 5, 5], "score": 0.5}]
    with pytest.raises(ValueError, match=r"results detection 0: 'category_id' must be an integer id; got"):
        detection.load_coco(gt, res)
    res = [{"image_id": 1 + bad, "category_id": 1, "bbox": [0, 0, 5, 5], "score": 0.5}]
    with pytest.raises(ValueError, match=r"results detection 0: 'image_id' must be an integer id; got"):
        detection.load_coco(gt, res)


def test_results_of_a_category_the_ground_truth_does_not_list_are_not_dropped_unsaid(tmp_path, capsys):
    """pycocotools evaluates the listed categories only; the results of others were dropped without a word
    (the ground truth's were said). Now a warning counts them, in Python and on the command line."""
    cat = GT["categories"][0]["id"]
    res = [{"image_id": 1, "category_id": cat, "bbox": [0, 0, 5, 5], "score": 0.5},
           {"image_id": 1, "category_id": 99, "bbox": [0, 0, 5, 5], "score": 0.6},
           {"image_id": 1, "category_id": 98, "bbox": [0, 0, 5, 5], "score": 0.7}]
    with pytest.warns(detection.DetectionWarning, match="2 results detections name a category the ground truth "
                                                        "does not list; not evaluated"):
        detection.load_coco(GT, res)
    with warnings.catch_warnings():
        warnings.simplefilter("error", detection.DetectionWarning)
        detection.load_coco(GT, res[:1])
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(GT))
    res_path.write_text(json.dumps(res))
    assert main(["detection", "coco", str(gt_path), str(res_path), "--json"]) == 0
    err = capsys.readouterr().err
    assert f"precall: warning: {res_path}: 2 results detections name a category" in err, err


def test_cli_compare_without_ground_truth_warns_once(tmp_path, capsys):
    gt, res = tmp_path / "gt.json", tmp_path / "res.json"
    gt.write_text(json.dumps(dict(GT, annotations=[])))
    res.write_text("[]")
    assert main(["detection", "compare", str(gt), str(res), str(res), "--n-resamples", "10"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "every number is undefined" in err, err


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_is_refused_not_waited_on(tmp_path):
    """A FIFO among the input files blocked the read forever; it is refused before it is opened
    (run in a subprocess, so that the old behaviour fails the test instead of hanging it)."""
    import os
    import subprocess
    import sys

    for sub in ("g", "a", "d"):
        (tmp_path / sub).mkdir()
    os.mkfifo(tmp_path / "g" / "a.txt")
    os.mkfifo(tmp_path / "a" / "a.xml")
    os.mkfifo(tmp_path / "res.json")
    (tmp_path / "gt.json").write_text(json.dumps(GT))
    script = f"""
from precall import detection
for call in (lambda: detection.load_text({str(tmp_path / 'g')!r}, {str(tmp_path / 'd')!r}),
             lambda: detection.load_voc({str(tmp_path / 'a')!r}, {str(tmp_path / 'd')!r}),
             lambda: detection.load_coco({str(tmp_path / 'gt.json')!r}, {str(tmp_path / 'res.json')!r})):
    try:
        call()
    except ValueError as exc:
        print(exc)
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(detection.__file__).parents[2])] + sys.path))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    lines = out.stdout.splitlines()
    assert len(lines) == 3 and all("not a regular file (a FIFO, device or folder); give a file" in x for x in lines), out
    assert "a.txt" in lines[0] and "a.xml" in lines[1] and "res.json" in lines[2]
