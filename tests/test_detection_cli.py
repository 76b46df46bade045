"""The detection commands added by issue 24: `detection compare` (paired), `--ci` for `detection voc` /
`text`, `detection crowdpose` and the refusal of a CrowdPose ground truth under COCO's keypoint rules.
Each output is compared with the library call it prints (itself tested against re-evaluation and the
reference tools), and bad input gives one line and exit 2."""

from __future__ import annotations

import json

import numpy as np
import pytest

from precall import detection
from precall.cli import main

pytest.importorskip("pycocotools")
from test_detection import _voc_set, synthetic  # noqa: E402

CROWDPOSE_SIGMAS = "0.079,0.079,0.072,0.072,0.062,0.062,0.107,0.107,0.087,0.087,0.089,0.089,0.079,0.079"


def _two_models(tmp_path, seed=40):
    """A ground truth and two result files: B is A plus, on half the images, the ground truths themselves
    at score 1 (so B is better)."""
    gt, a = synthetic(seed, n_images=40)
    rng = np.random.default_rng(seed)
    better = {img["id"] for img in gt["images"] if rng.random() < 0.5}
    b = a + [{"image_id": g["image_id"], "category_id": g["category_id"], "bbox": g["bbox"], "score": 1.0}
             for g in gt["annotations"] if g["image_id"] in better and not g["iscrowd"]]
    paths = []
    for name, obj in (("gt.json", gt), ("a.json", a), ("b.json", b)):
        (tmp_path / name).write_text(json.dumps(obj))
        paths.append(str(tmp_path / name))
    return paths


def test_compare_prints_compare_coco(tmp_path, capsys):
    gt, a, b = _two_models(tmp_path)
    assert main(["detection", "compare", gt, a, b, "--n-resamples", "200", "--seed", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ev_a = detection.evaluate_coco(detection.load_coco(gt, a))
    ev_b = detection.evaluate_coco(detection.load_coco(gt, b))
    ref = detection.compare_coco(ev_a, ev_b, 200, random_state=5)
    for i, name in enumerate(("mAP", "AP50", "AP75")):
        assert out[name]["a"] == ev_a.stats[i] and out[name]["b"] == ev_b.stats[i]
        assert out[name]["difference"] == ref.difference[name] > 0  # B is better
        assert tuple(out[name]["ci"]) == ref.intervals[name]
        assert out[name]["p_b_better"] == ref.p_b_better[name]
    assert main(["detection", "compare", gt, a, b, "--n-resamples", "100"]) == 0
    text = capsys.readouterr().out
    assert "P(B > A)" in text and all(len(line) <= 80 for line in text.splitlines())
    row = next(line for line in text.splitlines() if line.startswith("mAP"))
    assert f"{ev_b.stats[0] - ev_a.stats[0]:.3f}" in row


@pytest.mark.parametrize("extra, match", [
    (["--n-resamples", "1"], "--n-resamples"),
    (["--level", "1.5"], "--level"),
    (["--max-dets", "0"], "--max-dets"),
])
def test_compare_bad_options_one_line(tmp_path, capsys, extra, match):
    gt, a, b = _two_models(tmp_path)
    assert main(["detection", "compare", gt, a, b, *extra]) == 2
    assert match in capsys.readouterr().err.strip().splitlines()[-1]


def test_compare_bad_files_one_line(tmp_path, capsys):
    gt, a, b = _two_models(tmp_path)
    for args, match in (([gt, a, str(tmp_path / "missing.json")], "missing.json: no such file"),
                        ([gt, a, b, "--iou-type", "segm"], "segmentation")):
        assert main(["detection", "compare", *args]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and match in err


def _voc_inputs(command, shared_data_dir, tmp_path):
    if command == "text":
        gt_dir, det_dir, _, _ = _voc_set(4, tmp_path)
        return [gt_dir, det_dir], detection.load_text(gt_dir, det_dir)
    toy = shared_data_dir / "odm_toyexample"
    args = [str(toy / "gts_vocxml"), str(toy / "dets_classname_abs_xywh")]
    return args + ["--box-format", "xywh"], detection.load_voc(*args, box_format="xywh")


@pytest.mark.parametrize("command", ["voc", "text"])
def test_voc_and_text_ci(shared_data_dir, tmp_path, capsys, command):
    inputs, data = _voc_inputs(command, shared_data_dir, tmp_path)
    args = ["detection", command, *inputs, "--ci", "--n-resamples", "150", "--seed", "2"]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ev = detection.evaluate_voc(data)
    ref = ev.bootstrap(150, random_state=2)
    assert tuple(out["ci"]) == ref["mAP"] and out["ci"][0] <= out["mAP"] <= out["ci"][1]
    assert {k: tuple(v) for k, v in out["ci_per_class"].items()} == {str(k): v for k, v in ref["per_class"].items()}
    assert main([*args, "--per-class"]) == 0
    text = capsys.readouterr().out
    assert f"mAP 95% interval [{ref['mAP'][0]:.3f}, {ref['mAP'][1]:.3f}]" in text and "95% interval" in text.splitlines()[0]
    assert ref["mAP"][0] < ref["mAP"][1]


def test_voc_ci_bad_resamples(tmp_path, capsys):
    gt_dir, det_dir, _, _ = _voc_set(4, tmp_path)
    assert main(["detection", "text", gt_dir, det_dir, "--ci", "--n-resamples", "1"]) == 2
    assert "--n-resamples" in capsys.readouterr().err


def test_crowdpose_command_and_refusal(shared_data_dir, capsys):
    folder = shared_data_dir / "crowdpose_small" if (shared_data_dir / "crowdpose_small").exists() else None
    if folder is None:
        pytest.skip("no CrowdPose sample")
    gt, dt = str(folder / "gt.json"), str(folder / "dt.json")
    assert main(["detection", "crowdpose", gt, dt, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == pytest.approx(detection.evaluate_crowdpose(gt, dt), abs=0)
    assert round(out["AP"], 4) == 0.7877  # CrowdPose's published AP on this sample (tests/data/README.md)
    assert main(["detection", "crowdpose", gt, dt]) == 0
    text = capsys.readouterr().out
    assert "AP_hard" in text and all(len(line) <= 80 for line in text.splitlines())
    # COCO's keypoint rules on a CrowdPose ground truth: refused (it printed 0.840 without a word)
    for extra in ([], ["--kpt-oks-sigmas", CROWDPOSE_SIGMAS]):
        assert main(["detection", "coco", gt, dt, "--iou-type", "keypoints", *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "CrowdPose" in err and "detection crowdpose" in err and gt in err
    with pytest.warns(detection.DetectionWarning, match="CrowdPose set"):  # the library says it too
        sig = np.array([float(v) for v in CROWDPOSE_SIGMAS.split(",")])
        detection.evaluate_coco(detection.load_coco(gt, dt), iou_type="keypoints", kpt_oks_sigmas=sig)
    assert main(["detection", "crowdpose", gt, str(folder / "nope.json")]) == 2
