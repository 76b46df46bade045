"""Protocol options (17.4): class-agnostic evaluation, any max_dets list (proposal recall),
custom IoU thresholds and area ranges in the API and the CLI, per-class AR and per-area AP,
--per-class / --plot for VOC and text."""

from __future__ import annotations

import json

import numpy as np
import pytest

from precall import detection
from precall.cli import main

pytest.importorskip("pycocotools")
from test_detection import _pycocotools, _voc_set, synthetic  # noqa: E402


@pytest.mark.parametrize("seed", range(3))
def test_class_agnostic_equals_pycocotools_use_cats_0(seed):
    gt, results = synthetic(200 + seed)
    ours = detection.evaluate_coco(detection.load_coco(gt, results), use_cats=False)
    theirs = _pycocotools(gt, results, useCats=0)
    np.testing.assert_allclose(ours.precision, theirs.eval["precision"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.recall, theirs.eval["recall"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.stats, theirs.stats, rtol=0, atol=1e-12)
    assert ours.precision.shape[2] == 1 and ours.per_class[0]["id"] == -1


def test_proposal_recall_at_100_300_1000():
    gt, results = synthetic(9, n_images=6, max_gt=6, dets_per_gt=40)
    max_dets = [100, 300, 1000]
    ours = detection.evaluate_coco(detection.load_coco(gt, results), max_dets=tuple(max_dets), use_cats=False)
    theirs = _pycocotools(gt, results, maxDets=max_dets, useCats=0)
    np.testing.assert_allclose(ours.recall, theirs.eval["recall"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.precision, theirs.eval["precision"], rtol=0, atol=1e-12)
    # AR@100, AR@300, AR@1000: pycocotools' stats[6:9] (its first number hard-codes maxDets=100)
    np.testing.assert_allclose(ours.stats[6:9], theirs.stats[6:9], rtol=0, atol=1e-12)
    assert ours.stats[6] < ours.stats[7]
    # any number of values: one, or four
    for md in ((5,), (1, 3, 10, 100)):  # pycocotools' summary needs 3 values: compare the arrays
        ev = detection.evaluate_coco(detection.load_coco(gt, results), max_dets=md)
        theirs = _accumulated(gt, results, maxDets=list(md))
        np.testing.assert_allclose(ev.recall, theirs.eval["recall"], rtol=0, atol=1e-12)
        np.testing.assert_allclose(ev.precision, theirs.eval["precision"], rtol=0, atol=1e-12)
        assert np.isfinite(ev.stats).all()


def _accumulated(gt, results, **params):
    import contextlib
    import copy
    import io

    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        g = COCO()
        g.dataset = copy.deepcopy(gt)
        g.createIndex()
        ev = COCOeval(g, g.loadRes(copy.deepcopy(results)), "bbox")
        for key, value in params.items():
            setattr(ev.params, key, value)
        ev.evaluate()
        ev.accumulate()
    return ev


def test_custom_area_ranges_and_per_area_ap():
    gt, results = synthetic(21)
    ranges = {"all": (0.0, 1e10), "tiny": (0.0, 400.0), "huge": (400.0, 1e10)}
    ours = detection.evaluate_coco(detection.load_coco(gt, results), area_ranges=ranges)
    theirs = _pycocotools(gt, results, areaRng=[list(v) for v in ranges.values()], areaRngLbl=list(ranges))
    np.testing.assert_allclose(ours.precision, theirs.eval["precision"], rtol=0, atol=1e-12)
    assert ours.stats[3] == -1  # no "small" range: undefined, as pycocotools
    for k, row in enumerate(ours.per_class):
        for a, name in enumerate(ranges):
            if a == 0:
                continue
            p = theirs.eval["precision"][:, :, k, a, -1]
            assert row[f"AP_{name}"] == pytest.approx(p[p > -1].mean() if (p > -1).any() else -1, abs=1e-12)
        r = theirs.eval["recall"][:, k, 0, -1]
        assert row["AR"] == pytest.approx(r[r > -1].mean() if (r > -1).any() else -1, abs=1e-12)


def test_cli_protocol_options(tmp_path, capsys):
    gt, results = synthetic(22)
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(results))
    assert main(["detection", "coco", str(gt_path), str(res_path), "--json", "--iou-thresholds", "0.5,0.75",
                 "--area-ranges", "all=0:1e10,small=0:1024,medium=1024:9216,large=9216:1e10",
                 "--max-dets", "1", "10", "100", "300", "--no-cats"]) == 0
    out = json.loads(capsys.readouterr().out)
    theirs = _pycocotools(gt, results, iouThrs=np.array([0.5, 0.75]), maxDets=[1, 10, 100, 300], useCats=0)
    assert out["max_dets"] == [1, 10, 100, 300]
    assert out["stats"]["AP50"] == pytest.approx(theirs.stats[1], abs=1e-12)
    assert out["stats"]["AR_max1"] == pytest.approx(theirs.stats[6], abs=1e-12)
    assert main(["detection", "coco", str(gt_path), str(res_path), "--per-class"]) == 0
    text = capsys.readouterr().out
    assert "AP_small" in text and "AR@100" in text
    assert main(["detection", "coco", str(gt_path), str(res_path), "--area-ranges", "all=5:1"]) == 2
    assert "LOW <= HIGH" in capsys.readouterr().err
    assert main(["detection", "coco", str(gt_path), str(res_path), "--max-dets", "10", "1", "10"]) == 2
    assert "`max_dets`" in capsys.readouterr().err


def test_cli_voc_text_per_class_and_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    gt_dir, det_dir, _, _ = _voc_set(3, tmp_path)
    data = detection.load_text(gt_dir, det_dir)
    ev = detection.evaluate_voc(data)
    assert main(["detection", "text", gt_dir, det_dir, "--per-class"]) == 0
    text = capsys.readouterr().out
    for cls, ap in ev.ap.items():
        line = next(ln for ln in text.splitlines() if ln.split()[0] == cls)
        assert f"{ap:.6f}" in line and str(int((data.dt_class == cls).sum())) in line.split()[-1]
    out = tmp_path / "plots"
    assert main(["detection", "text", gt_dir, det_dir, "--plot", str(out), "--metric", "voc2007"]) == 0
    files = sorted(p.name for p in out.iterdir())
    assert len(files) == sum(1 for n in ev.n_gt.values() if n > 0)
    assert all(f.endswith(".png") and f.split("_", 1)[0].isdigit() for f in files)
    assert "wrote" in capsys.readouterr().err
