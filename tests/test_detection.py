"""precall.detection: the 12 COCO numbers, the precision and recall arrays against
pycocotools on its own example and on random synthetic sets (crowds, empty images,
classes without ground truth, tied scores, more detections than max_dets)."""

from __future__ import annotations

import contextlib
import copy
import io
import json

import numpy as np
import pytest

from precall import detection

pycocotools = pytest.importorskip("pycocotools")
from pycocotools.coco import COCO  # noqa: E402
from pycocotools.cocoeval import COCOeval  # noqa: E402


def _pycocotools(gt_dict, results, **params):
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = copy.deepcopy(gt_dict)
        gt.createIndex()
        dt = gt.loadRes(copy.deepcopy(results)) if results else COCO()
        ev = COCOeval(gt, dt, "bbox")
        for key, value in params.items():
            setattr(ev.params, key, value)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev


def _assert_same(ours, theirs):
    np.testing.assert_allclose(ours.stats, theirs.stats, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.precision, theirs.eval["precision"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.recall, theirs.eval["recall"], rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def coco_example(shared_data_dir):
    folder = shared_data_dir / "coco_val2014_100"
    if not folder.exists():
        pytest.skip(f"{folder} not found")
    with open(folder / "instances_val2014_100.json") as fh:
        gt = json.load(fh)
    with open(folder / "instances_val2014_fakebbox100_results.json") as fh:
        results = json.load(fh)
    return gt, results


def test_pycocotools_example_all_twelve_numbers(coco_example):
    gt, results = coco_example
    ours = detection.evaluate_coco(detection.load_coco(gt, results))
    _assert_same(ours, _pycocotools(gt, results))
    # cocoapi's published example table (results/ of the COCO API) to 3 decimals
    published = [0.505, 0.697, 0.573, 0.586, 0.519, 0.501, 0.387, 0.594, 0.595, 0.640, 0.566, 0.564]
    np.testing.assert_allclose(ours.stats.round(3), published)


def synthetic(seed, n_images=30, n_classes=6, max_gt=6, dets_per_gt=3, crowd=0.08, decimals=1):
    """A random COCO set: jittered true detections, random false ones, tied scores."""
    rng = np.random.default_rng(seed)
    images = [{"id": int(i)} for i in rng.choice(1000, n_images, replace=False)]
    categories = [{"id": int(c), "name": f"c{c}"} for c in rng.choice(90, n_classes, replace=False) + 1]
    anns, results = [], []
    for img in images:
        n_gt = int(rng.integers(0, max_gt + 1)) if rng.random() > 0.1 else 0  # some empty images
        for _ in range(n_gt):
            cat = categories[int(rng.integers(0, n_classes - 1))]["id"]  # the last class: no ground truth
            x, y = rng.uniform(0, 400, 2)
            w, h = np.exp(rng.uniform(np.log(4), np.log(250), 2))
            box = [float(x), float(y), float(w), float(h)]
            anns.append({"id": len(anns) + 1, "image_id": img["id"], "category_id": cat, "bbox": box,
                         "area": float(w * h * rng.uniform(0.6, 1.0)), "iscrowd": int(rng.random() < crowd)})
            for _ in range(int(rng.integers(0, dets_per_gt + 1))):
                jitter = rng.normal(0, 0.15, 4) * [w, h, w, h]
                results.append({"image_id": img["id"], "category_id": cat,
                                "bbox": [float(v) for v in np.array(box) + jitter],
                                "score": float(np.round(rng.random(), decimals))})
        for _ in range(int(rng.integers(0, 5))):
            x, y = rng.uniform(0, 400, 2)
            w, h = np.exp(rng.uniform(np.log(4), np.log(250), 2))
            results.append({"image_id": img["id"], "category_id": categories[int(rng.integers(0, n_classes))]["id"],
                            "bbox": [float(x), float(y), float(w), float(h)],
                            "score": float(np.round(rng.random(), decimals))})
    return {"images": images, "annotations": anns, "categories": categories}, results


@pytest.mark.parametrize("seed", range(8))
def test_random_sets_equal_pycocotools(seed):
    gt, results = synthetic(seed)
    ours = detection.evaluate_coco(detection.load_coco(gt, results))
    _assert_same(ours, _pycocotools(gt, results))


@pytest.mark.parametrize("seed", range(3))
def test_more_detections_than_max_dets(seed):
    gt, results = synthetic(100 + seed, n_images=12, max_gt=8, dets_per_gt=6)
    for max_dets in ([1, 10, 100], [1, 3, 5]):
        ours = detection.evaluate_coco(detection.load_coco(gt, results), max_dets=tuple(max_dets))
        theirs = _pycocotools(gt, results, maxDets=max_dets)
        np.testing.assert_allclose(ours.precision, theirs.eval["precision"], atol=1e-12)
        np.testing.assert_allclose(ours.recall, theirs.eval["recall"], atol=1e-12)
        # pycocotools' first number always uses maxDets=100 (cocoapi #558); ours uses max_dets[-1]
        np.testing.assert_allclose(ours.stats[1:], theirs.stats[1:], atol=1e-12)
        if max_dets[-1] == 100:
            assert ours.stats[0] == pytest.approx(theirs.stats[0], abs=1e-12)


def test_custom_iou_thresholds_and_area_ranges():
    gt, results = synthetic(7)
    thresholds = np.array([0.3, 0.5, 0.75])
    ours = detection.evaluate_coco(detection.load_coco(gt, results), iou_thresholds=thresholds)
    theirs = _pycocotools(gt, results, iouThrs=thresholds)
    np.testing.assert_allclose(ours.precision, theirs.eval["precision"], atol=1e-12)


def test_group_ties_do_not_depend_on_input_order():
    gt, results = synthetic(3, decimals=1)
    base = detection.evaluate_coco(detection.load_coco(gt, results), ties="group")
    rng = np.random.default_rng(0)
    for _ in range(3):
        shuffled = [results[i] for i in rng.permutation(len(results))]
        again = detection.evaluate_coco(detection.load_coco(gt, shuffled), ties="group")
        np.testing.assert_array_equal(again.stats, base.stats)
    stable = detection.evaluate_coco(detection.load_coco(gt, results))
    assert not np.array_equal(stable.precision, base.precision)  # ties exist, so the orders differ


def test_user_ignore_flag_is_honoured():
    gt, results = synthetic(5)
    flagged = copy.deepcopy(gt)
    target = next(a for a in flagged["annotations"] if not a["iscrowd"])
    target["ignore"] = 1
    ours = detection.evaluate_coco(detection.load_coco(flagged, results))
    as_crowdless = detection.evaluate_coco(detection.load_coco(gt, results))
    cls = sorted(c["id"] for c in gt["categories"]).index(target["category_id"])
    n_before = as_crowdless.per_class[cls]["n_gt"]
    assert ours.per_class[cls]["n_gt"] == n_before - 1
    # pycocotools overwrites `ignore` with `iscrowd`: it still counts the ground truth
    theirs = _pycocotools(flagged, results)
    np.testing.assert_allclose(theirs.stats, as_crowdless.stats, atol=1e-12)


def test_per_class_table_and_text(coco_example):
    gt, results = coco_example
    ours = detection.evaluate_coco(detection.load_coco(gt, results))
    theirs = _pycocotools(gt, results)
    p = theirs.eval["precision"][:, :, :, 0, -1]
    for k, row in enumerate(ours.per_class):
        valid = p[:, :, k][p[:, :, k] > -1]
        assert row["AP"] == pytest.approx(valid.mean() if valid.size else -1, abs=1e-12)
    assert sum(row["n_det"] for row in ours.per_class) == len(results)
    text = ours.to_text()
    assert text.count("\n") == 11 and "maxDets=100 ] = 0.505" in text


def _pycocotools_summary(gt_dict, results, **params):
    """The lines pycocotools' ``summarize`` prints."""
    out = io.StringIO()
    ev = _pycocotools(gt_dict, results, **params)
    with contextlib.redirect_stdout(out):
        ev.summarize()
    return out.getvalue().splitlines()


def test_summary_text_is_pycocotools_with_its_iou_label():
    """pycocotools' lines byte for byte, its IoU label too: the first and last thresholds evaluated."""
    gt, results = synthetic(7)
    data = detection.load_coco(gt, results)
    assert detection.evaluate_coco(data).to_text().splitlines() == _pycocotools_summary(gt, results)
    for thresholds in ([0.6, 0.7], [0.3, 0.5, 0.75], [0.75, 0.5]):
        ours = detection.evaluate_coco(data, iou_thresholds=thresholds).to_text()
        assert ours.splitlines() == _pycocotools_summary(gt, results, iouThrs=np.array(thresholds))
    assert "IoU=0.60:0.70 |" in detection.evaluate_coco(data, iou_thresholds=[0.6, 0.7]).to_text()


def test_summary_text_fits_80_columns_with_wide_max_dets():
    """A max_dets of 4 digits or more (wider than 80 columns in pycocotools' format): every line within 80,
    the same words and numbers, still aligned; width=None: pycocotools' format."""
    gt, results = synthetic(7)
    data = detection.load_coco(gt, results)
    for max_dets in ((100, 300, 1000), (1, 10, 10**9)):
        ev = detection.evaluate_coco(data, max_dets=max_dets, area_ranges={"all": (0, 1e10), "large": (1e9, 1e10)})
        theirs = _pycocotools(gt, results, maxDets=list(max_dets), areaRng=[[0, 1e10], [1e9, 1e10]],
                              areaRngLbl=["all", "large"])
        fitted = ev.to_text().splitlines()
        assert max(map(len, fitted)) <= 80 and len(fitted) == 12
        exact = ev.to_text(width=None).splitlines()
        # pycocotools' first line is always maxDets=100 (cocoapi #558); ours max_dets[-1]
        assert exact[1:] == _pycocotools_summary(gt, results, maxDets=list(max_dets),
                                                 areaRng=[[0, 1e10], [1e9, 1e10]], areaRngLbl=["all", "large"])[1:]
        assert max(map(len, exact)) > 80 and theirs.stats[5] == -1  # a -1.000 line of 4+ digits: 81 columns
        for ours, line in zip(fitted, exact):  # the same words and numbers, fewer spaces
            assert ours.split() == line.split() or ours.replace(" ", "") == line.replace(" ", "")
        assert len({line.index("]") for line in fitted}) == 1  # still aligned
    with pytest.raises(ValueError, match="`width`"):
        ev.to_text(width=20)


def test_loader_errors_name_the_record():
    gt, results = synthetic(1)
    with pytest.raises(ValueError, match="results detection 0: no 'score'"):
        detection.load_coco(gt, [{k: v for k, v in results[0].items() if k != "score"}])
    bad = dict(results[0], image_id=-5)
    with pytest.raises(ValueError, match="not an image of the ground truth"):
        detection.load_coco(gt, [bad])
    with pytest.raises(ValueError, match=r"'bbox' must be \[x, y, w, h\]"):
        detection.load_coco(gt, [dict(results[0], bbox=[1, 2, 3])])
    with pytest.raises(ValueError, match="needs 'images' and 'annotations'"):
        detection.load_coco({"annotations": []}, results)
    with pytest.raises(ValueError, match="`max_dets`"):
        detection.evaluate_coco(detection.load_coco(gt, results), max_dets=(10, 10))


def test_class_tables_give_the_precision_rows(coco_example):
    gt, results = coco_example
    ev = detection.evaluate_coco(detection.load_coco(gt, results))
    checked = 0
    for k, row in enumerate(ev.per_class):
        if row["n_gt"] == 0 or row["n_det"] == 0:
            continue
        for t, iou in enumerate(ev.iou_thresholds):
            try:
                table = ev.threshold_table(row["id"], iou_threshold=float(iou))
            except ValueError:
                continue
            assert table.average_precision(method="coco") == pytest.approx(ev.precision[t, :, k, 0, -1].mean(), abs=1e-12)
            np.testing.assert_array_equal(table.ap_terms("coco").precision, ev.precision[t, :, k, 0, -1])
            checked += 1
    assert checked > 100
    with pytest.raises(ValueError, match="`class_id`"):
        ev.threshold_table(-1)
    with pytest.raises(ValueError, match="`iou_threshold`"):
        ev.threshold_table(ev.per_class[0]["id"], iou_threshold=0.42)


def test_cli_detection_coco(shared_data_dir, capsys):
    from precall.cli import main

    folder = shared_data_dir / "coco_val2014_100"
    gt, res = folder / "instances_val2014_100.json", folder / "instances_val2014_fakebbox100_results.json"
    assert main(["detection", "coco", str(gt), str(res), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    with open(gt) as fh, open(res) as fr:
        theirs = _pycocotools(json.load(fh), json.load(fr))
    np.testing.assert_allclose(list(out["stats"].values()), theirs.stats, atol=1e-12)
    assert main(["detection", "coco", str(gt), str(res), "--per-class"]) == 0
    text = capsys.readouterr().out
    assert "maxDets=100 ] = 0.505" in text and "#detections" in text
    assert main(["detection", "coco", str(gt), str(folder / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err


# ------------------------------------------------------------------ PASCAL VOC protocol
def _voc_ap_reference(rec, prec, use_07):
    """Detectron's voc_ap, written from its definition."""
    if use_07:
        ap = 0.0
        for t in np.arange(0.0, 1.1, 0.1):
            p = 0.0 if np.sum(rec >= t) == 0 else np.max(prec[rec >= t])
            ap = ap + p / 11.0
        return ap
    mrec = np.concatenate(([0.0], rec, [1.0]))
    mpre = np.concatenate(([0.0], prec, [0.0]))
    for i in range(mpre.size - 1, 0, -1):
        mpre[i - 1] = max(mpre[i - 1], mpre[i])
    i = np.where(mrec[1:] != mrec[:-1])[0]
    return np.sum((mrec[i + 1] - mrec[i]) * mpre[i + 1])


def _voc_eval_loop(gts, dts, cls, thr=0.5, use_07=False):
    """Detectron's voc_eval rules, one detection at a time (stable order among equal scores)."""
    recs = {}
    for image, c, box, difficult in gts:
        if c == cls:
            recs.setdefault(image, []).append([box, difficult, False])
    npos = sum(1 for rs in recs.values() for r in rs if not r[1])
    mine = [d for d in dts if d[1] == cls]
    order = sorted(range(len(mine)), key=lambda i: -mine[i][3])
    tp, fp = [], []
    for i in order:
        image, _, bb, _ = mine[i]
        R = recs.get(image, [])
        ovmax, jmax = -np.inf, -1
        for j, (g, _, _) in enumerate(R):
            iw = max(min(g[2], bb[2]) - max(g[0], bb[0]) + 1.0, 0.0)
            ih = max(min(g[3], bb[3]) - max(g[1], bb[1]) + 1.0, 0.0)
            inters = iw * ih
            uni = (bb[2] - bb[0] + 1.0) * (bb[3] - bb[1] + 1.0) + (g[2] - g[0] + 1.0) * (g[3] - g[1] + 1.0) - inters
            if inters / uni > ovmax:
                ovmax, jmax = inters / uni, j
        if ovmax > thr:
            if not R[jmax][1]:
                if not R[jmax][2]:
                    tp.append(1), fp.append(0)
                    R[jmax][2] = True
                else:
                    tp.append(0), fp.append(1)
        else:
            tp.append(0), fp.append(1)
    tp, fp = np.cumsum(tp), np.cumsum(fp)
    if tp.size == 0:
        return 0.0
    rec = tp / float(npos)
    prec = tp / np.maximum(tp + fp, np.finfo(np.float64).eps)
    return _voc_ap_reference(rec, prec, use_07)


def _voc_set(seed, tmp_path):
    rng = np.random.default_rng(seed)
    gt_dir, det_dir = tmp_path / f"g{seed}", tmp_path / f"d{seed}"
    gt_dir.mkdir()
    det_dir.mkdir()
    gts, dts = [], []
    for i in range(12):
        image = f"img{i:03d}"
        g_lines, d_lines = [], []
        for _ in range(int(rng.integers(0, 5))):
            cls = ["cat", "dog", "bird"][int(rng.integers(0, 3))]
            x, y = rng.integers(0, 300, 2)
            w, h = rng.integers(5, 150, 2)
            difficult = bool(rng.random() < 0.15)
            g_lines.append(f"{cls} {x} {y} {w} {h} {int(difficult)}")
            gts.append((image, cls, [x, y, x + w, y + h], difficult))
            for _ in range(int(rng.integers(0, 4))):
                dx, dy, dw, dh = rng.integers(-12, 13, 4)
                score = round(float(rng.random()), 1)
                box = [x + dx, y + dy, max(w + dw, 1), max(h + dh, 1)]  # no impossible (negative) sizes
                d_lines.append(f"{cls} {score} {' '.join(str(v) for v in box)}")
                dts.append((image, cls, [box[0], box[1], box[0] + box[2], box[1] + box[3]], score))
        (gt_dir / f"{image}.txt").write_text("\n".join(g_lines) + "\n")
        (det_dir / f"{image}.txt").write_text("\n".join(d_lines) + "\n")
    return str(gt_dir), str(det_dir), gts, dts


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("method", ["voc2010", "voc2007"])
def test_voc_equals_detectron_rules(tmp_path, seed, method):
    gt_dir, det_dir, gts, dts = _voc_set(seed, tmp_path)
    data = detection.load_text(gt_dir, det_dir)
    for thr in (0.3, 0.5, 0.7):
        ev = detection.evaluate_voc(data, iou_threshold=thr, method=method)
        for cls in ("cat", "dog", "bird"):
            if not any(g[1] == cls and not g[3] for g in gts):
                assert cls not in ev.ap
                continue
            expected = _voc_eval_loop(gts, dts, cls, thr, use_07=method == "voc2007")
            assert ev.ap[cls] == pytest.approx(expected, abs=1e-12), (cls, thr)
        assert ev.map == pytest.approx(np.mean(list(ev.ap.values())))


ODM_PUBLISHED = {  # rafaelpadilla/review_object_detection_metrics, tests/test_case_1.py
    "voc2007": {0.1: 0.3333333333, 0.3: 0.2683982683, 0.5: 0.0303030303, 0.75: 0.0},
    "voc2010": {0.1: 0.3371980676, 0.3: 0.2456866804, 0.5: 0.0222222222, 0.75: 0.0},
}


@pytest.mark.parametrize("method", sorted(ODM_PUBLISHED))
def test_odm_test_case_1_published_values(shared_data_dir, method):
    folder = shared_data_dir / "odm_test_case_1"
    data = detection.load_text(str(folder / "gts"), str(folder / "dets"))
    for iou, expected in ODM_PUBLISHED[method].items():
        ev = detection.evaluate_voc(data, iou_threshold=iou, method=method, pixel_offset=1, inclusive=True)
        assert ev.ap["object"] == pytest.approx(expected, abs=1e-10)


def test_odm_toyexample_loads_voc_xml(shared_data_dir):
    folder = shared_data_dir / "odm_toyexample"
    data = detection.load_voc(str(folder / "gts_vocxml"), str(folder / "dets_classname_abs_xywh"), box_format="xywh")
    ev = detection.evaluate_voc(data)
    assert list(ev.ap) == ["cat"] and 0 < ev.map <= 1
    table = ev.tables["cat"]
    assert table.average_precision(method="voc2010") == ev.ap["cat"]
    assert table.n_pos == ev.n_gt["cat"] == int((~data.gt_ignore).sum())


def test_voc_group_ties_do_not_depend_on_order(tmp_path):
    gt_dir, det_dir, gts, dts = _voc_set(9, tmp_path)
    data = detection.load_text(gt_dir, det_dir)
    base = detection.evaluate_voc(data, ties="group")
    rng = np.random.default_rng(1)
    for _ in range(3):
        p = rng.permutation(len(data.dt_score))
        shuffled = detection.io._assemble(
            [(data.gt_image[i], data.gt_class[i], data._xyxy[0][i].tolist(), data.gt_ignore[i]) for i in range(len(data.gt_image))],
            [(data.dt_image[i], data.dt_class[i], data._xyxy[1][i].tolist(), data.dt_score[i]) for i in p],
            list(data.images), "xyxy")
        assert detection.evaluate_voc(shuffled, ties="group").ap == base.ap


def test_text_and_voc_loaders_name_file_and_line(tmp_path):
    g, d = tmp_path / "g", tmp_path / "d"
    g.mkdir()
    d.mkdir()
    (g / "a.txt").write_text("cat 1 2 3 4\ncat 1 2 three 4\n")
    (d / "a.txt").write_text("cat 0.5 1 2 3 4\n")
    with pytest.raises(ValueError, match=r"a.txt: line 2: the box coordinates must be numbers"):
        detection.load_text(str(g), str(d))
    (g / "a.txt").write_text("cat 1 2 3 4\n")
    (d / "a.txt").write_text("cat 0.5 1 2 3\n")
    with pytest.raises(ValueError, match=r"a.txt: line 1: expected 6 fields"):
        detection.load_text(str(g), str(d))
    (d / "a.txt").write_text("cat nan 1 2 3 4\n")
    with pytest.raises(ValueError, match=r"line 1: the score must be finite"):
        detection.load_text(str(g), str(d))
    with pytest.raises(ValueError, match="`box_format`"):
        detection.load_text(str(g), str(d), box_format="ltrb")
    x = tmp_path / "x"
    x.mkdir()
    (x / "img.xml").write_text("<annotation><object><name>cat</name>")
    with pytest.raises(ValueError, match="img.xml: line 1: malformed XML"):
        detection.load_voc(str(x), str(d))


def test_relative_cxcywh_equals_absolute_xywh(tmp_path):
    folders = {k: tmp_path / k for k in ("ga", "da", "gr", "dr")}
    for f in folders.values():
        f.mkdir()
    W, H = 200.0, 100.0
    boxes = [(10, 20, 40, 30), (100, 50, 60, 40)]
    (folders["ga"] / "im.txt").write_text("".join(f"car {x} {y} {w} {h}\n" for x, y, w, h in boxes))
    (folders["da"] / "im.txt").write_text("".join(f"car 0.{i + 5} {x + 2} {y} {w} {h}\n" for i, (x, y, w, h) in enumerate(boxes)))
    rel = lambda x, y, w, h: f"{(x + w / 2) / W} {(y + h / 2) / H} {w / W} {h / H}"  # noqa: E731
    (folders["gr"] / "im.txt").write_text("".join(f"car {rel(*b)}\n" for b in boxes))
    (folders["dr"] / "im.txt").write_text(
        "".join(f"car 0.{i + 5} {rel(x + 2, y, w, h)}\n" for i, (x, y, w, h) in enumerate(boxes)))
    absolute = detection.load_text(str(folders["ga"]), str(folders["da"]))
    relative = detection.load_text(str(folders["gr"]), str(folders["dr"]), box_format="cxcywh", relative=True,
                                   image_sizes={"im": (W, H)})
    np.testing.assert_allclose(relative.dt_box, absolute.dt_box, atol=1e-9)
    for thr in (0.5, 0.8):
        assert detection.evaluate_voc(relative, iou_threshold=thr, pixel_offset=0).ap == pytest.approx(
            detection.evaluate_voc(absolute, iou_threshold=thr, pixel_offset=0).ap)
    with pytest.raises(ValueError, match="image_sizes"):
        detection.load_text(str(folders["gr"]), str(folders["dr"]), relative=True)


def test_cli_detection_voc_and_text(shared_data_dir, capsys):
    from precall.cli import main

    folder = shared_data_dir / "odm_test_case_1"
    assert main(["detection", "text", str(folder / "gts"), str(folder / "dets"), "--iou", "0.3",
                 "--metric", "voc2007", "--inclusive", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ap"]["object"] == pytest.approx(0.2683982683, abs=1e-10)
    toy = shared_data_dir / "odm_toyexample"
    assert main(["detection", "voc", str(toy / "gts_vocxml"), str(toy / "dets_classname_abs_xywh"),
                 "--box-format", "xywh"]) == 0
    assert "mAP" in capsys.readouterr().out
    assert main(["detection", "voc", str(toy / "nope"), str(toy)]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_custom_recall_thresholds_equal_pycocotools():
    gt, results = synthetic(11)
    rec = np.linspace(0.0, 1.0, 11)
    ours = detection.evaluate_coco(detection.load_coco(gt, results), recall_thresholds=rec)
    theirs = _pycocotools(gt, results, recThrs=rec)
    np.testing.assert_allclose(ours.precision, theirs.eval["precision"], atol=1e-12)
    np.testing.assert_allclose(ours.stats, theirs.stats, atol=1e-12)
    with pytest.raises(ValueError, match="`recall_thresholds`"):
        detection.evaluate_coco(detection.load_coco(gt, results), recall_thresholds=[0.5, 0.2])
    with pytest.raises(ValueError, match="`iou_type`"):
        detection.evaluate_coco(detection.load_coco(gt, results), iou_type="pose")
    with pytest.raises(ValueError, match="no 'keypoints'"):
        detection.evaluate_coco(detection.load_coco(gt, results), iou_type="keypoints")
    with pytest.raises(ValueError, match="no 'segmentation'"):
        detection.evaluate_coco(detection.load_coco(gt, results), iou_type="segm")


def test_map_under_any_convention(coco_example):
    gt, results = coco_example
    ev = detection.evaluate_coco(detection.load_coco(gt, results))
    assert ev.mean_average_precision("coco", iou_threshold=0.5) == pytest.approx(ev.stats[1], abs=1e-12)
    assert ev.mean_average_precision("coco", iou_threshold=0.75) == pytest.approx(ev.stats[2], abs=1e-12)
    voc = ev.mean_average_precision("voc2010", iou_threshold=0.5)
    assert voc != ev.stats[1] and 0 < voc < 1


def test_cli_detection_coco_plots(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from precall.cli import main

    gt, results = synthetic(4)
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(results))
    out = tmp_path / "plots"
    assert main(["detection", "coco", str(gt_path), str(res_path), "--plot", str(out)]) == 0
    files = sorted(f.name for f in out.iterdir())
    ev = detection.evaluate_coco(detection.load_coco(gt, results))
    expected = sorted(f"{r['id']}_{r['name']}.png" for r in ev.per_class if r["n_gt"] > 0)
    assert files == expected
    assert all((out / f).read_bytes()[:4] == b"\x89PNG" and (out / f).stat().st_size > 5000 for f in files)


def test_progress_is_reported_up_to_one():
    gt, results = synthetic(2)
    seen = []
    detection.evaluate_coco(detection.load_coco(gt, results), progress=seen.append)
    assert seen[-1] == 1.0 and seen == sorted(seen) and len(seen) > 3


def test_load_coco_errors_name_the_file(tmp_path):
    gt, results = synthetic(1)
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps([dict(results[0], score="high")]))
    with pytest.raises(ValueError, match=r"res.json: results detection 0"):
        detection.load_coco(str(gt_path), str(res_path))
    res_path.write_text("[{\"image_id\": 1,\n")
    with pytest.raises(ValueError, match=r"res.json.*line 2"):
        detection.load_coco(str(gt_path), str(res_path))


# ------------------------------------------------------------------ segmentation masks
def test_pycocotools_segm_example_all_twelve_numbers(coco_example, shared_data_dir):
    gt, _ = coco_example
    with open(shared_data_dir / "coco_val2014_100" / "instances_val2014_fakesegm100_results.json") as fh:
        results = json.load(fh)
    ours = detection.evaluate_coco(detection.load_coco(gt, results), iou_type="segm")
    theirs = _pycocotools_segm(gt, results)
    _assert_same(ours, theirs)
    published = [0.320, 0.562, 0.299, 0.387, 0.310, 0.327, 0.268, 0.415, 0.417, 0.469, 0.377, 0.381]
    np.testing.assert_allclose(ours.stats.round(3), published)


def _pycocotools_segm(gt_dict, results):
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = copy.deepcopy(gt_dict)
        gt.createIndex()
        ev = COCOeval(gt, gt.loadRes(copy.deepcopy(results)), "segm")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev


def test_masks_decode_as_pycocotools(coco_example):
    from pycocotools import mask as mask_utils

    from precall.detection._rle import mask_bbox, to_mask

    gt, _ = coco_example
    sizes = {img["id"]: (img["height"], img["width"]) for img in gt["images"]}
    for ann in gt["annotations"][::3]:
        h, w = sizes[ann["image_id"]]
        rles = mask_utils.frPyObjects(ann["segmentation"], h, w)
        rle = mask_utils.merge(rles) if isinstance(rles, list) else rles
        expected = mask_utils.decode(rle).ravel(order="F").astype(bool)
        ours = to_mask(ann["segmentation"], h, w)
        np.testing.assert_array_equal(ours, expected)
        np.testing.assert_allclose(mask_bbox(ours, h, w), mask_utils.toBbox(rle))


def _polygon_set(seed):
    """Synthetic segmentation set: polygons, crowd counts lists, compressed result masks."""
    from pycocotools import mask as mask_utils

    rng = np.random.default_rng(seed)
    H, W = 120, 160
    images = [{"id": i + 1, "height": H, "width": W} for i in range(8)]
    categories = [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    anns, results = [], []

    def polygon(x, y, w, h):
        n = int(rng.integers(3, 8))
        angles = np.sort(rng.uniform(0, 2 * np.pi, n))
        px = np.clip(x + w / 2 + w / 2 * np.cos(angles), 0, W - 1)
        py = np.clip(y + h / 2 + h / 2 * np.sin(angles), 0, H - 1)
        return [float(v) for pair in zip(px, py) for v in pair]

    for img in images:
        for _ in range(int(rng.integers(0, 4))):
            cat = int(rng.integers(1, 3))
            x, y = rng.uniform(0, W - 30), rng.uniform(0, H - 30)
            w, h = rng.uniform(6, 60, 2)
            if rng.random() < 0.15:  # crowd: an uncompressed counts list
                m = np.zeros((H, W), dtype=np.uint8, order="F")
                m[int(y): int(y + h), int(x): int(x + w)] = 1
                flat = m.ravel(order="F")
                change = np.flatnonzero(np.diff(np.r_[0, flat, 1 - flat[-1]]))
                counts = np.diff(np.r_[0, change, flat.size]).tolist()
                counts = [int(c) for c in counts if c] if flat[0] == 0 else [0] + [int(c) for c in counts if c]
                seg, crowd = {"counts": counts, "size": [H, W]}, 1
            else:
                seg, crowd = [polygon(x, y, w, h)], 0
            anns.append({"id": len(anns) + 1, "image_id": img["id"], "category_id": cat, "segmentation": seg,
                         "area": float(w * h * 0.7), "bbox": [float(x), float(y), float(w), float(h)],
                         "iscrowd": crowd})
            for _ in range(int(rng.integers(0, 3))):
                jx, jy = rng.normal(0, 4, 2)
                rles = mask_utils.frPyObjects([polygon(x + jx, y + jy, w, h)], H, W)
                rle = mask_utils.merge(rles)
                rle["counts"] = rle["counts"].decode("ascii")
                results.append({"image_id": img["id"], "category_id": cat, "segmentation": rle,
                                "score": float(np.round(rng.random(), 1))})
    return {"images": images, "annotations": anns, "categories": categories}, results


@pytest.mark.parametrize("seed", range(3))
def test_random_segm_sets_equal_pycocotools(seed):
    gt, results = _polygon_set(seed)
    ours = detection.evaluate_coco(detection.load_coco(gt, results), iou_type="segm")
    _assert_same(ours, _pycocotools_segm(gt, results))


def test_loaders_do_not_modify_the_callers_records(coco_example, shared_data_dir):
    gt, _ = coco_example
    with open(shared_data_dir / "coco_val2014_100" / "instances_val2014_fakesegm100_results.json") as fh:
        results = json.load(fh)
    before = copy.deepcopy(results)
    detection.load_coco(gt, results)
    assert results == before


def test_cli_detection_coco_segm(shared_data_dir, capsys):
    from precall.cli import main

    folder = shared_data_dir / "coco_val2014_100"
    assert main(["detection", "coco", str(folder / "instances_val2014_100.json"),
                 str(folder / "instances_val2014_fakesegm100_results.json"), "--iou-type", "segm", "--json"]) == 0
    stats = list(json.loads(capsys.readouterr().out)["stats"].values())
    np.testing.assert_allclose(np.round(stats, 3), [0.320, 0.562, 0.299, 0.387, 0.310, 0.327, 0.268, 0.415,
                                                    0.417, 0.469, 0.377, 0.381])
