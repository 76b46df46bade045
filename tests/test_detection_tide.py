"""TIDE-style error breakdown (issue 24, item 3): equal to tidecv on its default settings, on
precall's matching (its AP equals the COCO evaluation's), at every COCO IoU threshold."""

from __future__ import annotations

import json

import numpy as np
import pytest

from precall import detection

tidecv = pytest.importorskip("tidecv")


def scene(seed, n_images=40, n_classes=4):
    """Random COCO data with every error type: class confusions, poor boxes, duplicates, background
    detections, missed objects; continuous scores (no ties), every class with ground truth, no crowd."""
    rng = np.random.default_rng(seed)
    images = [{"id": int(i) + 1} for i in range(n_images)]
    cats = [{"id": c + 1, "name": f"c{c + 1}"} for c in range(n_classes)]
    anns, res = [], []
    for img in images:
        for _ in range(int(rng.integers(0, 6))):
            c = int(rng.integers(1, n_classes + 1))
            w, h = rng.uniform(10, 120, 2)
            box = np.array([*rng.uniform(0, 400, 2), w, h])
            anns.append({"id": len(anns) + 1, "image_id": img["id"], "category_id": c, "bbox": box.tolist(),
                         "area": float(w * h), "iscrowd": 0})
            for _ in range(int(rng.integers(0, 3))):
                jitter = rng.normal(0, rng.choice([0.05, 0.3]), 4) * [w, h, w, h]
                cls = c if rng.random() < 0.8 else int(rng.integers(1, n_classes + 1))
                res.append({"image_id": img["id"], "category_id": cls, "bbox": (box + jitter).tolist(),
                            "score": float(rng.random())})
        for _ in range(int(rng.integers(0, 3))):
            res.append({"image_id": img["id"], "category_id": int(rng.integers(1, n_classes + 1)),
                        "bbox": [*rng.uniform(0, 400, 2).tolist(), *rng.uniform(10, 120, 2).tolist()],
                        "score": float(rng.random())})
    return {"images": images, "annotations": anns, "categories": cats}, res


def _tidecv(gt, res, pos=0.5, bg=0.1):
    g, p = tidecv.Data("gt"), tidecv.Data("res")
    for img in gt["images"]:
        g.add_image(img["id"], str(img["id"]))
    for c in gt["categories"]:
        g.add_class(c["id"], c["name"])
    for a in gt["annotations"]:
        g.add_ground_truth(a["image_id"], a["category_id"], a["bbox"])
    for r in res:
        p.add_detection(r["image_id"], r["category_id"], r["score"], r["bbox"])
    tide = tidecv.TIDE(pos_threshold=pos, background_threshold=bg)
    run = tide.evaluate(g, p, name="res")
    main = {e.short_name: v for e, v in run.fix_main_errors().items()}
    special = {e.short_name: v for e, v in run.fix_special_errors().items()}
    counts = {e.short_name: v for e, v in run.count_errors().items()}
    return run.ap, main, special, counts


TIDE_GRID = np.array([i / 100 for i in range(101)])  # tidecv's recall thresholds (not np.linspace's)
SHORT = {"classification": "Cls", "localisation": "Loc", "both": "Both", "duplicate": "Dupe", "background": "Bkg",
         "missed": "Miss"}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("pos, bg", [(0.5, 0.1), (0.75, 0.1), (0.5, 0.3)])
def test_equal_to_tidecv(seed, pos, bg):
    gt, res = scene(seed)
    assert len({a["category_id"] for a in gt["annotations"]}) == 4  # tidecv counts classes without GT as AP 0
    ap, main, special, counts = _tidecv(gt, res, pos, bg)
    eb = detection.error_breakdown(detection.load_coco(gt, res), iou_thresholds=[pos], background_threshold=bg,
                                   recall_thresholds=TIDE_GRID)
    assert 100 * eb.ap[0] == pytest.approx(ap, abs=1e-9)
    for name, short in SHORT.items():
        assert eb.counts[name][0] == counts[short], name
        assert 100 * eb.delta[name][0] == pytest.approx(main[short], abs=1e-9), name
    assert 100 * eb.delta["false positives"][0] == pytest.approx(special["FalsePos"], abs=1e-9)
    assert 100 * eb.delta["false negatives"][0] == pytest.approx(special["FalseNeg"], abs=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_every_coco_threshold_equals_tidecv_there_and_the_evaluation(seed):
    gt, res = scene(100 + seed, n_images=25)
    data = detection.load_coco(gt, res)
    eb = detection.error_breakdown(data, recall_thresholds=TIDE_GRID)
    ev = detection.evaluate_coco(data, recall_thresholds=TIDE_GRID)
    assert eb.ap.mean() == pytest.approx(ev.stats[0], abs=1e-12)  # precall's own AP, mAP@[.5:.95]
    assert eb.at(0.5)["AP"] == pytest.approx(ev.stats[1], abs=1e-12)
    assert eb.at(0.75)["AP"] == pytest.approx(ev.stats[2], abs=1e-12)
    for t, pos in enumerate(eb.iou_thresholds.tolist()):
        ap, main, special, counts = _tidecv(gt, res, pos)
        assert 100 * eb.ap[t] == pytest.approx(ap, abs=1e-9)
        for name, short in SHORT.items():
            assert eb.counts[name][t] == counts[short]
            assert 100 * eb.delta[name][t] == pytest.approx(main[short], abs=1e-9)
        # at 0.95 some classes have no true positive: the false-negative fix leaves them no ground truth
        assert 100 * eb.delta["false positives"][t] == pytest.approx(special["FalsePos"], abs=1e-9)
        assert 100 * eb.delta["false negatives"][t] == pytest.approx(special["FalseNeg"], abs=1e-9)
    mean = eb.at()
    assert mean["AP"] == pytest.approx(eb.ap.mean()) and mean["missed"] == pytest.approx(eb.delta["missed"].mean())


def test_fp_fn_totals_are_counted_from_the_matching():
    gt, res = scene(7)
    data = detection.load_coco(gt, res)
    eb = detection.error_breakdown(data, iou_thresholds=[0.5, 0.75])
    ev = detection.evaluate_coco(data, iou_thresholds=[0.5, 0.75])
    for t, iou in enumerate((0.5, 0.75)):
        tps = sum(int(ev.threshold_table(r["id"], iou_threshold=iou).tp[-1]) for r in ev.per_class if r["n_gt"] > 0
                  and r["n_det"] > 0)
        assert eb.n_fp[t] == len(res) - tps  # no crowd, no ignored detection
        assert eb.n_fn[t] == len(gt["annotations"]) - tps
        # every false positive has exactly one error type; missed ground truths are false negatives
        fp_types = sum(int(eb.counts[k][t]) for k in ("classification", "localisation", "both", "duplicate",
                                                      "background"))
        assert fp_types == eb.n_fp[t] and eb.counts["missed"][t] <= eb.n_fn[t]


@pytest.mark.parametrize("kwargs, error, match", [
    ({"iou_type": "keypoints"}, ValueError, "`iou_type`"),
    ({"background_threshold": 1.5}, ValueError, "`background_threshold`"),
    ({"background_threshold": float("nan")}, ValueError, "`background_threshold`"),
    ({"background_threshold": "0.1"}, TypeError, "`background_threshold`"),
    ({"background_threshold": 0.6, "iou_thresholds": [0.5]}, ValueError, "below every IoU threshold"),
    ({"max_dets": 0}, ValueError, "`max_dets`"),
    ({"max_dets": 2.5}, ValueError, "`max_dets`"),
    ({"iou_thresholds": [1.5]}, ValueError, "`iou_thresholds`"),
])
def test_bad_options(kwargs, error, match):
    gt, res = scene(1, n_images=3)
    with pytest.raises(error, match=match):
        detection.error_breakdown(detection.load_coco(gt, res), **kwargs)


def test_fixes_that_leave_a_class_without_ground_truth_equal_tidecv():
    """At IoU 0.95 no class has a true positive: the false-negative fix removes every ground truth
    (tidecv: AP 0 for a class with detections, not in the mean without)."""
    gt, res = scene(3, n_images=60)
    eb = detection.error_breakdown(detection.load_coco(gt, res), iou_thresholds=[0.9, 0.95],
                                   recall_thresholds=TIDE_GRID)
    for t, pos in enumerate((0.9, 0.95)):
        ap, main, special, counts = _tidecv(gt, res, pos)
        assert 100 * eb.ap[t] == pytest.approx(ap, abs=1e-9)
        assert 100 * eb.delta["false negatives"][t] == pytest.approx(special["FalseNeg"], abs=1e-9)
        assert 100 * eb.delta["missed"][t] == pytest.approx(main["Miss"], abs=1e-9)


# ---------------------------------------------------------------------------
# the evaluation's options (ties, use_cats, the "all" area range, max_dets): the breakdown's AP is the
# summary's, as the CLI prints both


def _tied(seed, n_images=40):
    """:func:`scene` with scores rounded to one decimal (many ties)."""
    gt, res = scene(seed, n_images=n_images)
    for r in res:
        r["score"] = round(r["score"], 1)
    return gt, res


OPTIONS = [
    {"ties": "group"},
    {"use_cats": False},
    {"area_ranges": {"small": (0, 1024), "all": (0, 1500), "large": (9216, 1e10)}},
    {"area_ranges": {"all": (2000, 1e10)}, "max_dets": (1, 3)},
    {"ties": "group", "use_cats": False, "area_ranges": {"all": (0, 4000)}, "iou_thresholds": [0.5, 0.6, 0.75]},
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o))
@pytest.mark.parametrize("seed", range(3))
def test_the_baseline_ap_is_the_evaluations_under_every_option(seed, options):
    """``at(None)["AP"]`` is ``stats[0]``, ``at(0.5)`` / ``at(0.75)`` ``stats[1]`` / ``stats[2]``, and the AP at
    each threshold the evaluation's there, to the bit, under the options of evaluate_coco (it was the
    default evaluation's AP whatever the options)."""
    gt, res = _tied(seed)
    data = detection.load_coco(gt, res)
    ev = detection.evaluate_coco(data, **options)
    eb = detection.error_breakdown(data, **options)
    assert ev.stats[0] != detection.evaluate_coco(data).stats[0]  # the options change the numbers
    assert eb.at(None)["AP"] == ev.stats[0]
    assert eb.at(0.5)["AP"] == ev.stats[1] and eb.at(0.75)["AP"] == ev.stats[2]
    for t, iou in enumerate(ev.iou_thresholds.tolist()):
        assert eb.ap[t] == ev.mean_average_precision("coco", iou_threshold=iou)
    for t in range(ev.iou_thresholds.size):  # FP / FN counted from the same matching
        tps = sum(int(ev.threshold_table(c, iou_threshold=float(ev.iou_thresholds[t])).tp[-1])
                  for c, (_, tp, ig, _) in ev._ranked.items() if (~ig[ev.area_index(), t]).any())
        n_gt = sum(r["n_gt"] for r in ev.per_class)
        assert eb.n_fn[t] == n_gt - tps


@pytest.mark.parametrize("pos", [0.5, 0.75])
def test_class_agnostic_equals_tidecv_on_one_pooled_class(pos):
    """``use_cats=False`` is TIDE of the pooled set: equal to tidecv run on the data with every category
    relabelled as one (no classification error is left)."""
    gt, res = scene(3)
    pooled_gt = dict(gt, categories=[{"id": 1, "name": "all"}],
                     annotations=[dict(a, category_id=1) for a in gt["annotations"]])
    pooled_res = [dict(r, category_id=1) for r in res]
    ap, main, special, counts = _tidecv(pooled_gt, pooled_res, pos)
    eb = detection.error_breakdown(detection.load_coco(gt, res), use_cats=False, iou_thresholds=[pos],
                                   recall_thresholds=TIDE_GRID)
    assert 100 * eb.ap[0] == pytest.approx(ap, abs=1e-9)
    assert eb.counts["classification"][0] == 0
    for name, short in SHORT.items():
        assert eb.counts[name][0] == counts[short], name
        assert 100 * eb.delta[name][0] == pytest.approx(main[short], abs=1e-9), name
    assert 100 * eb.delta["false positives"][0] == pytest.approx(special["FalsePos"], abs=1e-9)
    assert 100 * eb.delta["false negatives"][0] == pytest.approx(special["FalseNeg"], abs=1e-9)
    with_cats = detection.error_breakdown(detection.load_coco(gt, res), iou_thresholds=[pos])
    assert with_cats.counts["classification"][0] > 0  # the option matters on this set


def _same(a, b):
    return (np.array_equal(a.ap, b.ap) and a.at(None) == b.at(None)
            and all(np.array_equal(a.delta[k], b.delta[k]) for k in a.delta)
            and all(np.array_equal(a.counts[k], b.counts[k]) for k in a.counts)
            and np.array_equal(a.n_fp, b.n_fp) and np.array_equal(a.n_fn, b.n_fn))


def test_group_ties_do_not_depend_on_the_order_of_either_file():
    """``ties="group"``: equal scores one step, matching in the order of the records' content, so the
    whole breakdown is the same whatever the order of the ground truths and results (here with equal
    IoUs too: two ground truths of different classes on one box, a detection of a third class on it);
    without tied scores it is the ``"stable"`` breakdown."""
    rng = np.random.default_rng(0)
    gt, res = _tied(8)
    for img in gt["images"][:15]:  # a classification error between two equal IoUs
        box = [*rng.uniform(0, 300, 2).tolist(), 50.0, 40.0]
        for c in (1, 2):
            gt["annotations"].append({"id": len(gt["annotations"]) + 1, "image_id": img["id"], "category_id": c,
                                      "bbox": box, "area": 2000.0, "iscrowd": 0})
        res.append({"image_id": img["id"], "category_id": 3, "bbox": [box[0] + 2, *box[1:]], "score": 0.9})
    order = np.random.default_rng(1)
    shuffled_gt = dict(gt, annotations=[gt["annotations"][i] for i in order.permutation(len(gt["annotations"]))])
    shuffled_res = [res[i] for i in order.permutation(len(res))]
    a, b = (detection.error_breakdown(detection.load_coco(g, r), ties="group")
            for g, r in ((gt, res), (shuffled_gt, shuffled_res)))
    assert _same(a, b)
    assert a.at(None)["AP"] == detection.evaluate_coco(detection.load_coco(gt, res), ties="group").stats[0]
    stable = [detection.error_breakdown(detection.load_coco(g, r)) for g, r in ((gt, res), (shuffled_gt, shuffled_res))]
    assert not _same(*stable)  # the input order matters there (pycocotools' rule)
    gt, res = scene(8)  # no tied score, no equal IoU: one answer
    data = detection.load_coco(gt, res)
    assert _same(detection.error_breakdown(data, ties="group"), detection.error_breakdown(data))


def test_the_all_area_range_and_max_dets_as_evaluate_coco_takes_them():
    gt, res = scene(4)
    data = detection.load_coco(gt, res)
    everything = detection.error_breakdown(data, area_ranges={"all": (0, 1e10)})
    assert _same(everything, detection.error_breakdown(data))
    assert _same(detection.error_breakdown(data, max_dets=(1, 10, 100)), detection.error_breakdown(data))
    assert _same(detection.error_breakdown(data, max_dets=(2, 1)), detection.error_breakdown(data, max_dets=2))
    with pytest.raises(ValueError, match="range named 'all'"):
        detection.error_breakdown(data, area_ranges={"small": (0, 1024)})
    for bad, error in (({"ties": "random"}, ValueError), ({"use_cats": "no"}, TypeError),
                       ({"area_ranges": {"all": (10, 1)}}, ValueError)):
        with pytest.raises(error, match=f"`{next(iter(bad))}"):
            detection.error_breakdown(data, **bad)


# ---------------------------------------------------------------------------
# undefined numbers: no ground truth (every number -1, as evaluate_coco), and a fix leaving no class (gain 0)
@pytest.mark.parametrize("use_cats", [True, False])
def test_no_ground_truth_gives_the_evaluations_undefined_numbers(tmp_path, capsys, use_cats):
    gt = {"images": [{"id": 1, "width": 100, "height": 100}], "categories": [{"id": 1, "name": "a"}],
          "annotations": []}
    res = [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.9}]
    data = detection.load_coco(gt, res)
    with pytest.warns(UserWarning, match="every number is undefined"):
        ev = detection.evaluate_coco(data, use_cats=use_cats)
    with pytest.warns(UserWarning, match="every number is undefined"):
        eb = detection.error_breakdown(data, use_cats=use_cats)
    assert eb.ap.tolist() == [-1.0] * 10 and eb.at(None)["AP"] == ev.stats[0] == -1
    assert eb.at(0.5) == {"AP": -1.0, **{k: -1.0 for k in eb.delta}}
    assert eb.counts["background"].tolist() == eb.n_fp.tolist() == [1] * 10
    assert all(cell == "-1" for row in eb.rows() for cell in row[1:10])
    from precall.cli import main

    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "res.json").write_text(json.dumps(res))
    argv = ["detection", "coco", str(tmp_path / "gt.json"), str(tmp_path / "res.json"), "--errors",
            *([] if use_cats else ["--no-cats"])]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err.count("every number is undefined") == 1  # said once, by the evaluation
    assert out.splitlines()[-1].split() == ["0.50:0.95", *["-1"] * 9]


def test_a_fix_that_leaves_no_class_gains_nothing_as_tidecv():
    """Class b: one ground truth, no detection; class a: a detection, no ground truth.  The false-negative
    fix leaves no class with ground truth (its mean is pycocotools' -1): gain 0, as tidecv's, not -1 - 0."""
    gt = {"images": [{"id": 1}, {"id": 2}], "categories": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}],
          "annotations": [{"id": 1, "image_id": 2, "category_id": 2, "bbox": [0, 0, 10, 10], "area": 100,
                           "iscrowd": 0}]}
    res = [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.9}]
    ap, main, special, counts = _tidecv(gt, res)
    eb = detection.error_breakdown(detection.load_coco(gt, res), iou_thresholds=[0.5], recall_thresholds=TIDE_GRID)
    assert 100 * eb.ap[0] == ap == 0
    for name, short in SHORT.items():
        assert eb.counts[name][0] == counts[short] and 100 * eb.delta[name][0] == main[short], name
    assert 100 * eb.delta["false positives"][0] == special["FalsePos"] == 0
    assert 100 * eb.delta["false negatives"][0] == special["FalseNeg"] == 0
    eb = detection.error_breakdown(detection.load_coco(gt, res))  # every threshold, and their mean
    assert eb.delta["false negatives"].tolist() == [0.0] * 10 and eb.at(None)["false negatives"] == 0
