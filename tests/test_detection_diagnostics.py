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


def test_confusion_matrix_in_blocks_is_the_whole_matrix_at_once(monkeypatch):
    """The IoUs of an image are computed a block of detections at a time, each against the ground truths
    near it: the same matrix for any block size (as the whole (D, G) matrix at once, which ultralytics
    computes), on boxes with many equal IoUs (ties) and zero sizes; and ultralytics' on boxes without ties."""
    from precall.detection import diagnostics

    rng = np.random.default_rng(5)
    gt = {"images": [{"id": i} for i in (1, 2, 3)], "categories": [{"id": c, "name": f"c{c}"} for c in (1, 2, 3)],
          "annotations": []}
    res = []
    for image in (1, 2, 3):  # boxes on a coarse grid: equal IoUs everywhere
        for _ in range(60):
            x, y, w, h = (rng.integers(0, 30, 4) * 4).tolist()
            gt["annotations"].append({"id": len(gt["annotations"]) + 1, "image_id": image, "bbox": [x, y, w, h],
                                      "category_id": int(rng.integers(1, 4)), "area": float(w * h),
                                      "iscrowd": int(rng.random() < 0.1)})
        for _ in range(200):
            x, y, w, h = (rng.integers(0, 30, 4) * 4).tolist()
            res.append({"image_id": image, "category_id": int(rng.integers(1, 4)), "bbox": [x, y, w, h],
                        "score": float(rng.integers(0, 10)) / 10})
    with pytest.warns(UserWarning):  # boxes of zero width or height
        tied = detection.load_coco(gt, res)
    untied = scene(4, n_images=20)
    options = ((0.0, 0.0), (0.25, 0.45), (0.5, 0.7))
    monkeypatch.setattr(diagnostics, "_PAIRS_PER_BLOCK", 1 << 40)  # each image at once
    whole = [detection.confusion_matrix(tied, confidence=c, iou_threshold=i).matrix for c, i in options]
    for block in (1, 37, 1000):
        monkeypatch.setattr(diagnostics, "_PAIRS_PER_BLOCK", block)
        for (conf, iou), expected in zip(options, whole):
            np.testing.assert_array_equal(detection.confusion_matrix(tied, confidence=conf, iou_threshold=iou).matrix,
                                          expected)
            np.testing.assert_array_equal(
                detection.confusion_matrix(detection.load_coco(*untied), confidence=conf, iou_threshold=iou).matrix,
                oracles.ultralytics_confusion_matrix(*untied, conf, iou))


def test_confusion_matrix_memory_is_bounded_in_a_crowded_image():
    """One image, 3,000 detections and 2,000 ground truths all overlapping each other (nothing to skip):
    less memory than one (D, G) matrix of IoUs (was about six of them at once)."""
    import tracemalloc

    rng = np.random.default_rng(0)
    gt = {"images": [{"id": 1}], "categories": [{"id": 1, "name": "a"}],
          "annotations": [{"id": i + 1, "image_id": 1, "category_id": 1, "bbox": [x, y, 500.0, 500.0],
                           "area": 250000.0, "iscrowd": 0} for i, (x, y) in enumerate(rng.uniform(0, 50, (2000, 2)))]}
    res = [{"image_id": 1, "category_id": 1, "bbox": [x, y, 500.0, 500.0], "score": 0.5}
           for x, y in rng.uniform(0, 50, (3000, 2))]
    data = detection.load_coco(gt, res)
    tracemalloc.start()
    try:
        cm = detection.confusion_matrix(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert cm.matrix[:, 0].sum() == 2000 and cm.matrix[0].sum() == 3000 and cm.matrix[0, 0] > 1000
    assert peak < 8 * 3000 * 2000  # bytes of one float64 (D, G) matrix


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


def _files(tmp_path, seed=3, n_images=40):
    import json

    gt, res = scene(seed, n_images=n_images)
    g, r = tmp_path / "gt.json", tmp_path / "res.json"
    g.write_text(json.dumps(gt))
    r.write_text(json.dumps(res))
    return gt, res, str(g), str(r)


def test_cli_json_equals_the_library(tmp_path, capsys):
    import json

    from precall.cli import main

    gt, res, g, r = _files(tmp_path)
    assert main(["detection", "coco", g, r, "--at-confidence", "0.4", "--confusion", "--confusion-iou", "0.5",
                 "--errors", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    data = detection.load_coco(gt, res)
    ev = detection.evaluate_coco(data)
    op = detection.operating_points(ev, 0.4)
    assert out["operating_points"]["per_class"][0]["f1"] == pytest.approx(op.per_class[0]["f1"], abs=1e-15)
    assert out["operating_points"]["common"]["threshold"] == op.common["threshold"]
    cm = detection.confusion_matrix(data, iou_threshold=0.5)
    assert out["confusion_matrix"]["matrix"] == cm.matrix.tolist()
    eb = detection.error_breakdown(data)
    assert out["errors"]["delta_ap"]["localisation"] == eb.delta["localisation"].tolist()


def test_cli_text_fits_80_columns_and_draws_pictures(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from precall.cli import main

    _, _, g, r = _files(tmp_path)
    folder = tmp_path / "pics"
    assert main(["detection", "coco", g, r, "--at-confidence", "--confusion", "--errors", "--plot", str(folder)]) == 0
    text = capsys.readouterr().out
    assert "best F1" in text and "background" in text and "Miss" in text
    assert max(len(line) for line in text.splitlines()) <= 80
    for name in ("f1_confidence.png", "precision_confidence.png", "recall_confidence.png", "confusion_matrix.png",
                 "errors.png"):
        assert (folder / name).stat().st_size > 1000


@pytest.mark.parametrize("argv, match", [
    (["--at-confidence", "nan"], "--at-confidence"),
    (["--at-confidence", "x"], "--at-confidence"),
    (["--at-confidence", "0.5", "--diagnostics-iou", "0.52"], "`iou_threshold`"),
    (["--confusion", "--confusion-iou", "1.5"], "--confusion-iou"),
    (["--confusion", "--confusion-confidence", "inf"], "--confusion-confidence"),
    (["--errors", "--iou-type", "keypoints", "--kpt-oks-sigmas", "0.1"], "keypoints|--errors"),
    (["--ci", "--ci-method", "bca"], "--ci-method"),
])
def test_cli_bad_options_one_line_exit_2(tmp_path, capsys, argv, match):
    import re

    from precall.cli import main

    _, _, g, r = _files(tmp_path, n_images=5)
    try:
        code = main(["detection", "coco", g, r, *argv])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err and re.search(match, err[-1]) and "Traceback" not in "\n".join(err)


def test_pictures_draw_the_numbers():
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from precall.plot import detection as draw

    gt, res = scene(5)
    data = detection.load_coco(gt, res)
    eb = detection.error_breakdown(data)
    ax = draw.draw_error_breakdown(eb, ax=Figure().subplots(), iou_threshold=0.75)
    heights = [p.get_width() for p in ax.patches]
    assert heights == pytest.approx([100 * eb.at(0.75)[k] for k in (*detection.ERROR_TYPES, "false positives",
                                                                      "false negatives")])
    cm = detection.confusion_matrix(data)
    ax = draw.draw_confusion_matrix(cm, ax=Figure().subplots(), normalize=False)
    np.testing.assert_array_equal(ax.images[0].get_array(), cm.matrix)
    op = detection.operating_points(detection.evaluate_coco(data))
    ax = draw.draw_confidence_curves(op, "f1", ax=Figure().subplots())
    c = op.per_class[0]
    x, y = ax.lines[0].get_data()
    thr, _, _, f1 = op.curves[c["id"]]
    np.testing.assert_array_equal(x[:-1], thr)
    np.testing.assert_array_equal(y[:-1], f1)
    with pytest.raises(ValueError, match="`kind`"):
        draw.draw_confidence_curves(op, "auc")
