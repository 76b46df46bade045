"""iou_type="keypoints": pycocotools' OKS and its 10 numbers, on the published COCO and CrowdPose
samples and on random sets (visibility, crowds, images without people, more detections than
max_dets, ties); CrowdPose's easy / medium / hard (17.2)."""

from __future__ import annotations

import contextlib
import copy
import io
import json

import numpy as np
import pytest

from precall import detection

pytest.importorskip("pycocotools")
from pycocotools.coco import COCO  # noqa: E402
from pycocotools.cocoeval import COCOeval  # noqa: E402

CROWDPOSE_SIGMAS = np.array([.79, .79, .72, .72, .62, .62, 1.07, 1.07, .87, .87, .89, .89, .79, .79]) / 10


def _pycocotools_kp(gt, results, sigmas=None, **params):
    with contextlib.redirect_stdout(io.StringIO()):
        g = COCO()
        g.dataset = copy.deepcopy(gt)
        g.createIndex()
        ev = COCOeval(g, g.loadRes(copy.deepcopy(results)), "keypoints")
        if sigmas is not None:
            ev.params.kpt_oks_sigmas = np.asarray(sigmas)
        for key, value in params.items():
            setattr(ev.params, key, value)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev


def _same(ours, theirs):
    np.testing.assert_allclose(ours.stats, theirs.stats, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.precision, theirs.eval["precision"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.recall, theirs.eval["recall"], rtol=0, atol=1e-12)


def _load(shared_data_dir, name):
    folder = shared_data_dir / name
    return json.loads((folder / "gt.json").read_text()), json.loads((folder / "dt.json").read_text())


def test_coco_keypoints_sample_equals_pycocotools_and_published(shared_data_dir):
    gt, dt = _load(shared_data_dir, "coco_keypoints_small")
    ours = detection.evaluate_coco(detection.load_coco(gt, dt), iou_type="keypoints")
    _same(ours, _pycocotools_kp(gt, dt))
    published = [0.5048844884488449, 0.7227722772277227, 0.6336633663366337, 0.46633663366336636,
                 0.7504950495049505, 0.5181818181818182, 0.7272727272727273, 0.6363636363636364,
                 0.4666666666666666, 0.75]  # tests/data/README.md
    np.testing.assert_allclose(ours.stats, published, atol=1e-12)
    assert ours.stat_names[3] == "AP_medium" and ours.max_dets == (20,)
    assert "maxDets= 20 ] = 0.505" in ours.to_text() and ours.to_text().count("\n") == 9


@pytest.mark.filterwarnings("ignore:the ground truth is a CrowdPose set")  # COCO rules on purpose here
def test_crowdpose_sample_with_its_sigmas_equals_pycocotools_and_published(shared_data_dir):
    gt, dt = _load(shared_data_dir, "crowdpose_small")
    with_area = copy.deepcopy(gt)
    for a in with_area["annotations"]:  # CrowdPose's OKS scale (pycocotools reads `area`)
        a["area"] = a["bbox"][2] * a["bbox"][3] * 0.53
    ours = detection.evaluate_coco(detection.load_coco(with_area, dt), iou_type="keypoints",
                                   kpt_oks_sigmas=CROWDPOSE_SIGMAS)
    _same(ours, _pycocotools_kp(with_area, dt, CROWDPOSE_SIGMAS))
    out = detection.evaluate_crowdpose(gt, dt)
    published = {"AP": 0.7877215935879303, "AP50": 0.9881188118811886, "AP75": 0.7314356435643564,
                 "AR": 0.8222222222222223, "AR75": 0.7777777777777778}
    for key, value in published.items():
        assert out[key] == pytest.approx(value, abs=1e-12), key
    assert round(out["AP_medium"], 4) == 0.9802 and round(out["AP_hard"], 4) == 0.4116  # published to 4 places
    # each crowd level is pycocotools on that level's images
    hard = [i["id"] for i in gt["images"] if i["crowdIndex"] >= 0.8]
    theirs = _pycocotools_kp(with_area, dt, CROWDPOSE_SIGMAS, imgIds=hard, areaRng=[[0, 1e10]], areaRngLbl=["all"])
    assert out["AP_hard"] == pytest.approx(theirs.stats[0], abs=1e-12)


def synthetic_keypoints(seed, n_images=12, k=17, max_people=4, crowd=0.1, decimals=1):
    rng = np.random.default_rng(seed)
    images = [{"id": i + 1, "height": 480, "width": 640} for i in range(n_images)]
    anns, results = [], []
    for img in images:
        n = int(rng.integers(0, max_people + 1)) if rng.random() > 0.15 else 0  # some images without people
        for _ in range(n):
            x, y = rng.uniform(0, 500), rng.uniform(0, 350)
            w, h = rng.uniform(10, 140), rng.uniform(20, 130)
            px, py = x + rng.uniform(0, w, k), y + rng.uniform(0, h, k)
            v = rng.choice([0, 1, 2], k, p=[0.3, 0.2, 0.5]) if rng.random() > 0.1 else np.zeros(k, int)
            kp = np.column_stack([np.where(v > 0, px, 0), np.where(v > 0, py, 0), v]).ravel()
            is_crowd = int(rng.random() < crowd)
            anns.append({"id": len(anns) + 1, "image_id": img["id"], "category_id": 1, "bbox": [x, y, w, h],
                         "area": float(w * h * rng.uniform(0.4, 0.9)), "iscrowd": is_crowd,
                         "num_keypoints": int((v > 0).sum()), "keypoints": [float(t) for t in kp]})
            for _ in range(int(rng.integers(0, 4))):
                noise = rng.normal(0, rng.uniform(1, 15), (k, 2))
                dk = np.column_stack([px + noise[:, 0], py + noise[:, 1], np.ones(k)]).ravel()
                results.append({"image_id": img["id"], "category_id": 1, "keypoints": [float(t) for t in dk],
                                "score": float(np.round(rng.random(), decimals))})
        for _ in range(int(rng.integers(0, 3))):  # false positives anywhere
            dk = np.column_stack([rng.uniform(0, 640, k), rng.uniform(0, 480, k), np.ones(k)]).ravel()
            results.append({"image_id": img["id"], "category_id": 1, "keypoints": [float(t) for t in dk],
                            "score": float(np.round(rng.random(), decimals))})
    gt = {"images": images, "annotations": anns,
          "categories": [{"id": 1, "name": "person", "keypoints": [f"k{i}" for i in range(k)]}]}
    return gt, results


@pytest.mark.parametrize("seed", range(6))
def test_random_keypoint_sets_equal_pycocotools(seed):
    gt, results = synthetic_keypoints(seed)
    ours = detection.evaluate_coco(detection.load_coco(gt, results), iou_type="keypoints")
    _same(ours, _pycocotools_kp(gt, results))


def test_more_detections_than_max_dets_and_custom_sigmas():
    gt, results = synthetic_keypoints(40, max_people=6, k=14)
    sig = np.linspace(0.3, 1.1, 14) / 10
    ours = detection.evaluate_coco(detection.load_coco(gt, results), iou_type="keypoints", kpt_oks_sigmas=sig,
                                   max_dets=(2,))
    theirs = _pycocotools_kp(gt, results, sig, maxDets=[2])
    np.testing.assert_allclose(ours.precision, theirs.eval["precision"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.recall, theirs.eval["recall"], rtol=0, atol=1e-12)
    # pycocotools' keypoint summary hard-codes maxDets=20 (-1 otherwise); precall uses max_dets[-1]
    assert (theirs.stats == -1).all() and (ours.stats > -1).all()
    _same(detection.evaluate_coco(detection.load_coco(gt, results), iou_type="keypoints", kpt_oks_sigmas=sig),
          _pycocotools_kp(gt, results, sig))


def test_keypoint_input_errors():
    gt, results = synthetic_keypoints(1)
    data = detection.load_coco(gt, results)
    with pytest.raises(ValueError, match="17 keypoints, but the sigmas are for 14"):
        detection.evaluate_coco(data, iou_type="keypoints", kpt_oks_sigmas=CROWDPOSE_SIGMAS)
    with pytest.raises(ValueError, match=r"`kpt_oks_sigmas` must be a sequence of finite numbers in \(0, inf\)"):
        detection.evaluate_coco(data, iou_type="keypoints", kpt_oks_sigmas=[0.1, -1])
    bad = copy.deepcopy(results)
    bad[2]["keypoints"] = bad[2]["keypoints"][:-1]
    with pytest.raises(ValueError, match=r"results detection 2: 'keypoints' must be .* multiple of 3"):
        detection.load_coco(gt, bad)


def test_cli_keypoints(shared_data_dir, capsys):
    from precall.cli import main

    folder = shared_data_dir / "coco_keypoints_small"
    assert main(["detection", "coco", str(folder / "gt.json"), str(folder / "dt.json"), "--iou-type", "keypoints",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["stats"]) == list(detection.CocoEvaluation.KEYPOINT_STAT_NAMES)
    assert out["stats"]["AP"] == pytest.approx(0.5048844884488449, abs=1e-12)
