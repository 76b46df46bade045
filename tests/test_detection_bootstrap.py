"""mAP intervals (17.6): a bootstrap replicate, computed from the matched detections without
re-matching, equals pycocotools on the resampled images; intervals cover the estimate; CLI --ci."""

from __future__ import annotations

import json

import numpy as np
import pytest

from precall import detection
from precall.detection.bootstrap import replicate

pytest.importorskip("pycocotools")
from test_detection import _pycocotools, synthetic  # noqa: E402


def _resampled(gt, results, counts):
    """The resampled COCO set: images in id order, each repeated counts[i] times, copies adjacent
    (new ids 1, 2, ...)."""
    images = sorted(gt["images"], key=lambda i: i["id"])
    new_images, anns, res = [], [], []
    for img, c in zip(images, counts):
        for _ in range(int(c)):
            new_id = len(new_images) + 1
            new_images.append(dict(img, id=new_id))
            anns += [dict(a, image_id=new_id, id=len(anns) + 1 + 0 * a["id"]) for a in gt["annotations"]
                     if a["image_id"] == img["id"]]
            res += [dict(r, image_id=new_id) for r in results if r["image_id"] == img["id"]]
    for k, a in enumerate(anns):
        a["id"] = k + 1
    return dict(gt, images=new_images, annotations=anns), res


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ties", ["stable", "group"])
def test_replicate_equals_pycocotools_on_the_resampled_images(seed, ties):
    gt, results = synthetic(400 + seed, decimals=1)  # many tied scores: the order of copies matters
    ev = detection.evaluate_coco(detection.load_coco(gt, results), ties=ties)
    rng = np.random.default_rng(seed)
    n = len(gt["images"])
    counts = rng.multinomial(n, np.full(n, 1 / n))
    rep = replicate(ev, counts)
    gt_r, res_r = _resampled(gt, results, counts)
    if ties == "stable":
        theirs = _pycocotools(gt_r, res_r)
        assert rep["mAP"] == pytest.approx(theirs.stats[0], abs=1e-12)
        assert rep["AP50"] == pytest.approx(theirs.stats[1], abs=1e-12)
        assert rep["AP75"] == pytest.approx(theirs.stats[2], abs=1e-12)
        p = theirs.eval["precision"][:, :, :, 0, -1]
        for k, row in enumerate(ev.per_class):
            valid = p[:, :, k][p[:, :, k] > -1]
            assert rep["per_class"][row["id"]] == pytest.approx(valid.mean() if valid.size else -1, abs=1e-12)
    else:  # group ties: precall's own evaluation of the resampled set
        again = detection.evaluate_coco(detection.load_coco(gt_r, res_r), ties="group")
        assert rep["mAP"] == pytest.approx(again.stats[0], abs=1e-12)
        assert rep["AP50"] == pytest.approx(again.stats[1], abs=1e-12)


def test_identity_replicate_is_the_estimate():
    gt, results = synthetic(410)
    ev = detection.evaluate_coco(detection.load_coco(gt, results))
    rep = replicate(ev, np.ones(len(gt["images"]), dtype=int))
    assert rep["mAP"] == pytest.approx(ev.stats[0], abs=1e-12)
    assert rep["AP75"] == pytest.approx(ev.stats[2], abs=1e-12)
    with pytest.raises(ValueError, match="`counts`"):
        replicate(ev, [1, 2])


def test_intervals_bracket_the_estimate_and_are_reproducible():
    gt, results = synthetic(411, n_images=40)
    ev = detection.evaluate_coco(detection.load_coco(gt, results))
    ci = ev.bootstrap(150, random_state=1)
    again = ev.bootstrap(150, random_state=1)
    assert ci.intervals == again.intervals
    for i, name in enumerate(("mAP", "AP50", "AP75")):
        lo, hi = ci.intervals[name]
        assert lo < ev.stats[i] < hi and hi - lo < 0.5
    assert set(ci.per_class) == {r["id"] for r in ev.per_class}
    no_gt = [r["id"] for r in ev.per_class if r["n_gt"] == 0]
    assert all(np.isnan(ci.per_class[c]).all() for c in no_gt)
    with pytest.raises(ValueError, match="`n_resamples`"):
        ev.bootstrap(0)


def test_coverage_on_a_simulation():
    """Images drawn from a fixed population of images: the 90% interval of the sample AP50
    covers the population AP50 in most of 12 samples (loose bound: the percentile bootstrap of a
    ratio statistic is approximate; a longer simulation is a benchmark's job)."""
    gt, results = synthetic(412, n_images=400, n_classes=3, max_gt=4)
    population = detection.evaluate_coco(detection.load_coco(gt, results)).stats[1]
    rng = np.random.default_rng(5)
    ids = [img["id"] for img in gt["images"]]
    covered = 0
    for _ in range(12):
        take = set(rng.choice(ids, 60, replace=False).tolist())
        g = dict(gt, images=[i for i in gt["images"] if i["id"] in take],
                 annotations=[a for a in gt["annotations"] if a["image_id"] in take])
        r = [d for d in results if d["image_id"] in take]
        ev = detection.evaluate_coco(detection.load_coco(g, r))
        lo, hi = ev.bootstrap(80, confidence_level=0.9, random_state=0).intervals["AP50"]
        covered += lo <= population <= hi
    assert covered >= 8  # nominal 10.8 of 12


def test_cli_ci(tmp_path, capsys):
    from precall.cli import main

    gt, results = synthetic(413)
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(results))
    assert main(["detection", "coco", str(gt_path), str(res_path), "--ci", "--n-resamples", "100", "--seed", "3",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ev = detection.evaluate_coco(detection.load_coco(gt, results))
    expected = ev.bootstrap(100, random_state=3)
    assert out["ci"]["mAP"] == list(expected.intervals["mAP"])
    assert main(["detection", "coco", str(gt_path), str(res_path), "--ci", "--n-resamples", "50"]) == 0
    assert "bootstrap interval over images" in capsys.readouterr().out


def test_paired_comparison_of_two_result_files():
    gt, results = synthetic(414, n_images=40)
    rng = np.random.default_rng(0)
    worse = [dict(r, bbox=[v + rng.normal(0, 6) for v in r["bbox"][:2]] + r["bbox"][2:]) for r in results]
    a = detection.evaluate_coco(detection.load_coco(gt, worse))
    b = detection.evaluate_coco(detection.load_coco(gt, results))
    cmp = detection.compare_coco(a, b, 150, random_state=2)
    assert cmp.difference["mAP"] == pytest.approx(b.stats[0] - a.stats[0], abs=1e-12)
    lo, hi = cmp.intervals["mAP"]
    assert lo <= cmp.difference["mAP"] <= hi
    # each replicate pairs the same images: the replicate difference is the difference of replicates
    same = detection.compare_coco(b, b, 20, random_state=2)
    assert same.intervals["mAP"] == (0.0, 0.0) and same.p_b_better["mAP"] == 0.0
    other = detection.evaluate_coco(detection.load_coco(*synthetic(415, n_images=40)))
    with pytest.raises(ValueError, match="same images|classes"):
        detection.compare_coco(a, other)


@pytest.mark.parametrize("method", ["basic", "percentile", "bias-corrected", "bc"])
def test_interval_designs_from_their_definitions(method):
    """Each design recomputed from the replicates with numpy (quantiles, mean), not by precall."""
    from statistics import NormalDist

    gt, results = synthetic(416, n_images=40)
    ev = detection.evaluate_coco(detection.load_coco(gt, results))
    ci = ev.bootstrap(120, random_state=4, method=method, confidence_level=0.9)
    assert ci.method == method
    for i, name in enumerate(("mAP", "AP50", "AP75")):
        est = float(ev.stats[i])
        v = ci.replicates[name][ci.replicates[name] > -1]
        assert ci.estimate[name] == pytest.approx(est, abs=1e-12)
        assert ci.bias[name] == pytest.approx(v.mean() - est, abs=1e-12)
        q_lo, q_hi = np.quantile(v, [0.05, 0.95])
        if method == "percentile":
            expected = (q_lo, q_hi)
        elif method == "basic":
            expected = (2 * est - q_hi, 2 * est - q_lo)
        elif method == "bias-corrected":
            expected = (q_lo - 2 * (v.mean() - est), q_hi - 2 * (v.mean() - est))
        else:
            share = ((v < est).sum() + (v <= est).sum()) / (2 * v.size)
            share = min(max(share, 0.5 / v.size), 1 - 0.5 / v.size)
            nd = NormalDist()
            z0, z = nd.inv_cdf(share), nd.inv_cdf(0.95)
            expected = tuple(np.quantile(v, [nd.cdf(2 * z0 - z), nd.cdf(2 * z0 + z)]))
        expected = tuple(min(max(x, 0.0), 1.0) for x in expected)
        assert ci.intervals[name] == pytest.approx(expected, abs=1e-12)
    # per class: the same design on each class's replicates
    for k, row in enumerate(ev.per_class):
        if row["n_gt"] == 0:
            assert np.isnan(ci.per_class_bias[row["id"]])
            continue
        v = ci.per_class_replicates[:, k]
        v = v[v > -1]
        assert ci.per_class_estimate[row["id"]] == pytest.approx(row["AP"], abs=1e-12)
        assert ci.per_class_bias[row["id"]] == pytest.approx(v.mean() - row["AP"], abs=1e-12)


def test_default_is_basic_and_moves_against_the_bias():
    """mAP over few images is biased upward: the replicates sit above the estimate, the percentile
    interval above the basic one (which is its reflection about the estimate)."""
    gt, results = synthetic(417, n_images=30)
    ev = detection.evaluate_coco(detection.load_coco(gt, results))
    basic = ev.bootstrap(200, random_state=0)
    pct = ev.bootstrap(200, random_state=0, method="percentile")
    assert basic.method == "basic"
    for name in ("mAP", "AP50"):
        if basic.bias[name] > 0:
            assert basic.intervals[name][0] <= pct.intervals[name][0]
        lo, hi = basic.intervals[name]
        assert 0 <= lo <= hi <= 1
    assert "bias" in basic.to_text() and "basic bootstrap" in basic.to_text()


@pytest.mark.parametrize("kwargs, error, match", [
    ({"method": "bca"}, ValueError, "`method`"),
    ({"method": None}, ValueError, "`method`"),
    ({"confidence_level": 1.0}, ValueError, "`confidence_level`"),
    ({"n_resamples": 1.5}, ValueError, "`n_resamples`"),
])
def test_bad_bootstrap_options(kwargs, error, match):
    gt, results = synthetic(418, n_images=5)
    ev = detection.evaluate_coco(detection.load_coco(gt, results))
    with pytest.raises(error, match=match):
        ev.bootstrap(**{"n_resamples": 10, **kwargs})


def test_one_resample_is_refused_as_precall_stats_refuses_it(tmp_path, capsys):
    """An interval needs at least 2 replicates: the rule (and message) of precall.stats, for the COCO and VOC
    bootstraps, compare_coco and every command's --n-resamples."""
    from precall import average_precision, stats
    from precall.cli import main

    gt, results = synthetic(418, n_images=5)
    ev = detection.evaluate_coco(detection.load_coco(gt, results))
    with pytest.raises(ValueError) as expected:
        stats.bootstrap_ci(average_precision, [0, 1, 0, 1], [0.1, 0.9, 0.3, 0.2], n_resamples=1)
    for call in (lambda: ev.bootstrap(1), lambda: detection.compare_coco(ev, ev, 1),
                 lambda: detection.bootstrap_voc(detection.evaluate_voc(detection.load_coco(gt, results)), 1)):
        with pytest.raises(ValueError) as got:
            call()
        assert str(got.value) == str(expected.value)
    assert ev.bootstrap(2).n_resamples == 2
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "res.json").write_text(json.dumps(results))
    capsys.readouterr()
    argv = ["detection", "coco", str(tmp_path / "gt.json"), str(tmp_path / "res.json"), "--ci", "--n-resamples", "1"]
    assert main(argv) == 2
    assert "--n-resamples: must be a whole number in [2, inf)" in capsys.readouterr().err


# ---------------------------------------------------------------------------- defaults and the seed
def test_every_detection_interval_defaults_to_the_packages_resamples_and_seed():
    """2000 resamples and seed 0 (precall.stats.DEFAULT_RESAMPLES, DEFAULT_SEED): the library and every command."""
    import argparse
    import inspect

    from precall.cli.main import build_parser
    from precall.stats import DEFAULT_RESAMPLES, DEFAULT_SEED

    for func in (detection.bootstrap_coco, detection.compare_coco, detection.bootstrap_voc,
                 detection.CocoEvaluation.bootstrap, detection.VocEvaluation.bootstrap):
        params = inspect.signature(func).parameters
        assert (params["n_resamples"].default, params["random_state"].default) == (DEFAULT_RESAMPLES, DEFAULT_SEED)
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    protocols = next(a for a in commands["detection"]._actions if isinstance(a, argparse._SubParsersAction)).choices
    for name in ("coco", "compare", "voc", "text"):
        options = {a.dest: a for a in protocols[name]._actions}
        assert (options["n_resamples"].default, options["seed"].default) == (DEFAULT_RESAMPLES, DEFAULT_SEED), name
        assert f"default {DEFAULT_RESAMPLES}" in options["n_resamples"].help, name
        assert f"default {DEFAULT_SEED}" in options["seed"].help, name


def test_intervals_carry_their_seed_and_say_it():
    gt, results = synthetic(411, n_images=30)
    ev = detection.evaluate_coco(detection.load_coco(gt, results))
    seeded = ev.bootstrap(20, random_state=3)
    assert seeded.seed == 3 and seeded.to_text().splitlines()[-1] == " (20 resamples, seed 3)"
    assert ev.bootstrap(20, random_state=np.int64(4)).seed == 4
    drawn = ev.bootstrap(20, random_state=np.random.default_rng(3))
    assert drawn.seed is None and "no seed" in drawn.to_text()
    assert ev.bootstrap(20, random_state=None).seed is None
    cmp = detection.compare_coco(ev, ev, 20, random_state=5)
    assert cmp.seed == 5 and "20 resamples, seed 5" in cmp.to_text() and "P(B > A)" in cmp.to_text()
    assert detection.compare_coco(ev, ev, 20, random_state=np.random.default_rng(0)).seed is None
    # a sequence of ints seeds numpy's generator repeatably: recorded as stats records it
    listed = ev.bootstrap(20, random_state=[1, 2])
    y, s = [0, 1, 0, 1, 1, 0], [0.1, 0.9, 0.3, 0.7, 0.4, 0.6]
    from precall import stats
    assert listed.seed == (1, 2) == stats.bootstrap_ci("roc_auc", y, s, n_resamples=20, random_state=[1, 2]).seed
    assert listed.to_text().splitlines()[-1] == " (20 resamples, seed (1, 2))"


def test_cli_ci_prints_the_results_seed(tmp_path, capsys, monkeypatch):
    """The command prints the interval's own seed (one source): a result seeded otherwise shows it."""
    from precall.cli import main

    gt, results = synthetic(413)
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(results))
    assert main(["detection", "coco", str(gt_path), str(res_path), "--ci", "--n-resamples", "30", "--seed", "3"]) == 0
    ev = detection.evaluate_coco(detection.load_coco(gt, results))
    assert ev.bootstrap(30, random_state=3).to_text() in capsys.readouterr().out
    real = detection.bootstrap_coco  # what CocoEvaluation.bootstrap calls
    monkeypatch.setattr(detection, "bootstrap_coco", lambda *a, **k: real(*a, **{**k, "random_state": 11}))
    for extra in ([], ["--json"]):
        assert main(["detection", "coco", str(gt_path), str(res_path), "--ci", "--n-resamples", "30", *extra]) == 0
        out = capsys.readouterr().out
        assert "seed 11" in out and "seed 0" not in out
