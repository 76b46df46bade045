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


# ---------------------------------------------------------------------------
# --errors under the evaluation's options: its baseline AP is the summary's (one answer)
def _tied_files(tmp_path):
    """A ground truth and results with every TIDE error type and tied scores (one decimal)."""
    pytest.importorskip("tidecv")
    from test_detection_tide import scene

    gt, res = scene(5)
    for r in res:
        r["score"] = round(r["score"], 1)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "res.json").write_text(json.dumps(res))
    return str(tmp_path / "gt.json"), str(tmp_path / "res.json")


@pytest.mark.parametrize("extra, options", [
    ([], {}),
    (["--ties", "group"], {"ties": "group"}),
    (["--no-cats"], {"use_cats": False}),
    (["--area-ranges", "all=0:1500,small=0:1024,medium=1024:9216,large=9216:1e10"],
     {"area_ranges": {"all": (0, 1500), "small": (0, 1024), "medium": (1024, 9216), "large": (9216, 1e10)}}),
    (["--ties", "group", "--no-cats", "--area-ranges", "small=0:1024,all=0:4000", "--max-dets", "1", "5",
      "--iou-thresholds", "0.5,0.75"],
     {"ties": "group", "use_cats": False, "area_ranges": {"small": (0, 1024), "all": (0, 4000)}, "max_dets": (1, 5),
      "iou_thresholds": [0.5, 0.75]}),
])
def test_errors_baseline_ap_is_the_summary_under_every_option(tmp_path, capsys, extra, options):
    """``--errors``' AP (per threshold, their mean, at 0.5) is the summary's AP printed with it, under
    ``--ties group``, ``--no-cats`` and a custom ``all`` range too (it was the default evaluation's)."""
    gt, res = _tied_files(tmp_path)
    assert main(["detection", "coco", gt, res, "--errors", "--json", *extra]) == 0
    out = json.loads(capsys.readouterr().out)
    ev = detection.evaluate_coco(detection.load_coco(gt, res), **options)
    assert out["errors"]["ap"] == [ev.mean_average_precision("coco", iou_threshold=t) for t in ev.iou_thresholds]
    assert out["errors"]["ap"][0] == out["stats"]["AP50"] == ev.stats[1]
    assert out["stats"]["AP"] == ev.stats[0] and out["errors"]["mean"]["AP"] == ev.stats[0]
    eb = detection.error_breakdown(detection.load_coco(gt, res), **options)
    assert out["errors"]["delta_ap"] == {k: v.tolist() for k, v in eb.delta.items()}
    assert main(["detection", "coco", gt, res, "--errors", *extra]) == 0
    text = capsys.readouterr().out.splitlines()
    row = text[text.index(next(line for line in text if line.startswith("IoU "))) + 1]  # the first threshold
    assert row.split()[:2] == [f"{ev.iou_thresholds[0]:.2f}", f"{100 * ev.stats[1]:.2f}"]
    mean = [line for line in text if line.startswith(f"{ev.iou_thresholds[0]:.2f}:")][0]
    assert mean.split()[1] == f"{100 * ev.stats[0]:.2f}"


def test_errors_and_at_confidence_without_an_all_range_one_line(tmp_path, capsys):
    gt, res = _tied_files(tmp_path)
    for extra, named in ((["--errors"], "--errors needs"), (["--at-confidence", "--errors"], "--at-confidence and")):
        assert main(["detection", "coco", gt, res, "--area-ranges", "small=0:1024", *extra]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and named in err and "named 'all'" in err


# ---------------------------------------------------------------------------
# long and wide class names: every detection table within 80 columns, --wide the full names
LONG, CJK = "x" * 120, "\u732b" * 30  # 120 columns; 30 CJK characters, 60 columns


def _terminal_columns(text):  # independently of the code under test: a wide or full-width character takes 2
    import unicodedata

    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _named_coco(tmp_path):
    gt, res = synthetic(3, n_images=30, n_classes=4)
    names = [LONG, CJK, "line\nbreak\x1b[31mred\ttab", "dog"]
    for cat, name in zip(gt["categories"], names):
        cat["name"] = name
    for name, obj in (("gt.json", gt), ("res.json", res)):
        (tmp_path / name).write_text(json.dumps(obj))
    return str(tmp_path / "gt.json"), str(tmp_path / "res.json")


def _named_text(tmp_path):
    """Per-image text files with a long and a CJK class name."""
    rng = np.random.default_rng(0)
    (tmp_path / "g").mkdir()
    (tmp_path / "d").mkdir()
    for i in range(6):
        g, d = [], []
        for name in (LONG, CJK, "dog"):
            x = rng.uniform(0, 100)
            g.append(f"{name} {x} 10 20 20")
            d += [f"{name} {rng.random():.3f} {x + rng.uniform(-5, 5)} 10 20 20",
                  f"{name} {rng.random():.3f} {x + 50} 60 20 20"]
        (tmp_path / "g" / f"img{i}.txt").write_text("\n".join(g) + "\n", encoding="utf-8")
        (tmp_path / "d" / f"img{i}.txt").write_text("\n".join(d) + "\n", encoding="utf-8")
    return str(tmp_path / "g"), str(tmp_path / "d")


def _legend(lines):
    """The full names a legend below a table gives (its lines joined, the wrapping undone)."""
    out, inside = [], False
    for line in lines:
        inside = line == "classes:" or (inside and line.startswith("  "))
        out.append(line.strip() if inside else "\n")
    return "".join(out)


def _check_widths(argv, capsys, names):
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(_terminal_columns, lines)) <= 80, (argv, max(lines, key=_terminal_columns))
    for name in names:  # shortened in the table, whole (as a Python literal) in the legend
        assert name not in "\n".join(lines) and repr(name) in _legend(lines), (argv, name)
    assert main([*argv, "--wide"]) == 0
    wide = capsys.readouterr().out
    assert all(name in wide for name in names) and "classes:" not in wide.splitlines()
    return lines


@pytest.mark.parametrize("extra", [["--per-class"], ["--confusion"], ["--at-confidence", "0.3"],
                                   ["--at-confidence"], ["--per-class", "--ci", "--n-resamples", "20"]])
def test_coco_tables_fit_80_columns_with_long_and_wide_class_names(tmp_path, capsys, extra):
    """A 120-character and a 30-CJK-character class name: every line of --per-class, --confusion,
    --at-confidence (133, 242 and 129 columns before) within 80 terminal columns, the names shortened
    with a legend of the full names; --wide prints the full names in the tables."""
    gt, res = _named_coco(tmp_path)
    lines = _check_widths(["detection", "coco", gt, res, *extra], capsys, [LONG, CJK])
    assert any(line.startswith("line\u240abreak\u241b[31mred\u2409tab") for line in lines)  # short, shown


def test_coco_errors_and_compare_fit_80_columns_with_long_class_names(tmp_path, capsys):
    gt, res = _named_coco(tmp_path)
    for argv in (["detection", "coco", gt, res, "--errors", "--iou-thresholds", "0.5,0.75"],
                 ["detection", "compare", gt, res, res, "--n-resamples", "20"]):
        assert main(argv) == 0
        assert max(map(_terminal_columns, capsys.readouterr().out.splitlines())) <= 80


def test_coco_summary_with_4_digit_max_dets_fits_80_columns_and_wide_is_pycocotools(tmp_path, capsys):
    gt, res = _named_coco(tmp_path)
    # no large ground truth: its lines print -1.000, 81 columns in pycocotools' format with maxDets=1000
    argv = ["detection", "coco", gt, res, "--no-cats", "--max-dets", "100", "300", "1000", "--area-ranges",
            "all=0:1e10,large=1e9:1e10"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(_terminal_columns, lines)) <= 80 and sum("maxDets=1000 ]" in line for line in lines) == 10
    assert main([*argv, "--wide"]) == 0
    ev = detection.evaluate_coco(detection.load_coco(gt, res), max_dets=(100, 300, 1000), use_cats=False,
                                 area_ranges={"all": (0, 1e10), "large": (1e9, 1e10)})
    exact = ev.to_text(width=None)
    assert exact in capsys.readouterr().out and max(map(len, exact.splitlines())) == 81


@pytest.mark.parametrize("extra", [[], ["--per-class"], ["--per-class", "--ci", "--n-resamples", "20"],
                                   ["--ci", "--n-resamples", "20"]])
def test_text_and_voc_tables_fit_80_columns_with_long_and_wide_class_names(tmp_path, capsys, extra):
    gt_dir, det_dir = _named_text(tmp_path)
    lines = _check_widths(["detection", "text", gt_dir, det_dir, *extra], capsys, [LONG, CJK])
    assert lines[-1].strip().endswith(repr(CJK)[-3:])  # the legend last
    data = detection.load_text(gt_dir, det_dir)
    assert f"{detection.evaluate_voc(data).map:.6f}" in "\n".join(lines)
