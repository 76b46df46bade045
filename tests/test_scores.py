"""Average precision (every convention), ROC-AUC and evaluate() against scikit-learn,
the loop oracles, a literal pycocotools-style computation and the seed examples."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn import metrics as skm

import oracles
import precall

TIES = ("group", "stable")
METHODS = oracles.METHODS
# the numeric (Simpson) oracle for "interpolated" is accurate to ~1e-9
TOL = {m: 1e-11 for m in METHODS}
TOL["interpolated"] = 1e-7


def _case(rng, n, *, decimals=1, weighted=False, zero_weights=False):
    y = rng.integers(0, 2, n)
    y[rng.choice(n, 2, replace=False)] = [0, 1]
    s = rng.random(n)
    if decimals is not None:
        s = np.round(s, decimals)
    w = None
    if weighted:
        w = rng.exponential(size=n)
        if zero_weights:
            w[rng.random(n) < 0.2] = 0.0
        if w[y == 1].sum() == 0 or w[y == 0].sum() == 0:
            w = w + 0.5
    return y, s, w


# -------------------------------------------------------------------- API
def test_ap_methods_constant():
    assert tuple(precall.AP_METHODS) == METHODS


# ------------------------------------------------------------------ seeds
SEED_CASES = [
    (k, m, t, v) for k, sd in oracles.SEEDS.items() for (m, t), v in sd["expected"].items()
]


@pytest.mark.parametrize("seed,method,ties,expected", SEED_CASES)
def test_seed_worked_examples(seed, method, ties, expected):
    sd = oracles.SEEDS[seed]
    got = precall.average_precision(sd["labels"], sd["scores"], method=method, ties=ties)
    assert got == pytest.approx(expected, abs=1e-6)
    # the oracle reproduces the seed too (guards the oracle)
    assert oracles.average_precision(sd["labels"], sd["scores"], method, ties) == pytest.approx(
        expected, abs=1e-6
    )


@pytest.mark.parametrize("seed", sorted(oracles.SEEDS))
def test_seed_roc_auc(seed):
    sd = oracles.SEEDS[seed]
    assert precall.roc_auc(sd["labels"], sd["scores"]) == pytest.approx(sd["roc_auc"], abs=1e-6)


@pytest.mark.parametrize("seed", sorted(oracles.SEEDS))
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("ties", TIES)
def test_seed_every_method_vs_oracle(seed, method, ties):
    sd = oracles.SEEDS[seed]
    got = precall.average_precision(sd["labels"], sd["scores"], method=method, ties=ties)
    exp = oracles.average_precision(sd["labels"], sd["scores"], method, ties)
    assert got == pytest.approx(exp, abs=TOL[method])


def test_seed2_group_and_stable_differ():
    # seed 2 has tied scores (0.03, 0.12, 0.23) so the tie modes must differ somewhere
    sd = oracles.SEEDS[2]
    g = precall.average_precision(sd["labels"], sd["scores"], method="voc2010", ties="group")
    s = precall.average_precision(sd["labels"], sd["scores"], method="voc2010", ties="stable")
    assert s == pytest.approx(0.662067, abs=1e-6)
    assert g == pytest.approx(oracles.average_precision(sd["labels"], sd["scores"], "voc2010", "group"))
    assert abs(g - s) > 1e-3


# ------------------------------------------------------------ step vs sklearn
@pytest.mark.parametrize("decimals", [None, 2, 1])
@pytest.mark.parametrize("weighted", [False, True])
def test_step_equals_sklearn(rng, decimals, weighted):
    for n in (2, 3, 4, 10, 60, 400):
        for _ in range(4):
            y, s, w = _case(rng, n, decimals=decimals, weighted=weighted, zero_weights=weighted)
            got = precall.average_precision(y, s, sample_weight=w)
            exp = skm.average_precision_score(y, s, sample_weight=w)
            assert got == pytest.approx(exp, rel=1e-12, abs=1e-15)
            assert got == pytest.approx(oracles.ap_step(oracles.operating_points(y, s, w)), rel=1e-12)


def test_step_equals_sklearn_string_labels(rng):
    y, s, _ = _case(rng, 80)
    labels = np.where(y == 1, "yes", "no")
    for pos in ("yes", "no"):
        got = precall.average_precision(labels, s, pos_label=pos)
        exp = skm.average_precision_score(labels, s, pos_label=pos)
        assert got == pytest.approx(exp, rel=1e-12)


# ------------------------------------------------------ every method vs oracle
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("decimals", [None, 1])
def test_every_method_vs_oracle_unweighted(rng, method, ties, decimals):
    for n in (2, 3, 5, 13, 50, 150):
        for _ in range(3):
            y, s, _ = _case(rng, n, decimals=decimals)
            got = precall.average_precision(y, s, method=method, ties=ties)
            exp = oracles.average_precision(y, s, method, ties)
            assert got == pytest.approx(exp, abs=TOL[method]), (n, y.tolist(), s.tolist())
            # 1 ulp above 1 is allowed: Detectron accumulates ap += p / 11. and
            # 11 * (1 / 11.) == 1.0000000000000002 for a perfect ranking.
            assert -1e-12 <= got <= 1.0 + 1e-12


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("ties", TIES)
def test_every_method_vs_oracle_weighted(rng, method, ties):
    for n in (2, 4, 17, 90):
        for _ in range(3):
            y, s, w = _case(rng, n, decimals=1, weighted=True, zero_weights=True)
            got = precall.average_precision(y, s, method=method, ties=ties, sample_weight=w)
            exp = oracles.average_precision(y, s, method, ties, sample_weight=w)
            assert got == pytest.approx(exp, abs=TOL[method]), (n, y.tolist(), s.tolist(), w.tolist())


@pytest.mark.parametrize("method", ["voc2007", "coco"])
@pytest.mark.parametrize("ties", TIES)
def test_exact_grid_vs_oracle(rng, method, ties):
    for n in (5, 10, 20, 40, 100):
        for _ in range(4):
            y, s, _ = _case(rng, n, decimals=1)
            got = precall.average_precision(y, s, method=method, ties=ties, recall_grid="exact")
            exp = oracles.average_precision(y, s, method, ties, recall_grid="exact")
            assert got == pytest.approx(exp, abs=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_methods_with_string_labels(rng, method):
    y, s, _ = _case(rng, 60)
    labels = np.where(y == 1, "Poor", "Good")
    for ties in TIES:
        got = precall.average_precision(labels, s, method=method, ties=ties, pos_label="Poor")
        exp = oracles.average_precision(y, s, method, ties)
        assert got == pytest.approx(exp, abs=TOL[method])


def test_interpolated_closed_form_and_numeric_oracles_agree(rng):
    # guards the oracle itself
    for _ in range(20):
        y, s, w = _case(rng, 30, weighted=bool(rng.integers(2)))
        pts = oracles.operating_points(y, s, w)
        assert oracles.ap_interpolated(pts) == pytest.approx(
            oracles.ap_interpolated_closed_form(pts), abs=1e-8
        )


def test_interpolated_hand_example():
    # points (TP,FP): (1,0) then (2,2) with P=2.  First segment from (0,0): precision 1 over
    # recall [0, .5] -> .25.  Second: TP=1+x, FP=2x, x in [0,1]: precision (1+x)/(1+3x);
    # integral = 1/3 + (1 - 1/3)/3 * ln 4 = 1/3 + (2/9) ln 4.  Total area in TP units
    # is 1 + 1/3 + (2/9) ln 4, divided by P.
    y = [1, 0, 0, 1]
    s = [0.9, 0.5, 0.5, 0.5]
    expected = (1.0 + (1 / 3 + (2 / 9) * math.log(4))) / 2
    got = precall.average_precision(y, s, method="interpolated")
    assert got == pytest.approx(expected, abs=1e-12)


# ---------------------------------------------------------------- trapezoid
@pytest.mark.parametrize("weighted", [False, True])
def test_trapezoid_equals_sklearn_auc(rng, weighted):
    for n in (2, 3, 9, 70, 300):
        for _ in range(3):
            y, s, w = _case(rng, n, decimals=2, weighted=weighted)
            p, r, _ = skm.precision_recall_curve(y, s, sample_weight=w)
            exp = skm.auc(r, p)
            got = precall.average_precision(y, s, method="trapezoid", sample_weight=w)
            assert got == pytest.approx(exp, rel=1e-12, abs=1e-15)


# ------------------------------------------------------ reference vs exact grid
def _ranked(labels_in_rank_order):
    n = len(labels_in_rank_order)
    return np.asarray(labels_in_rank_order), np.linspace(1.0, 0.0, n)


@pytest.mark.parametrize("ties", TIES)
def test_voc2007_reference_vs_exact_grid(ties):
    # 10 positives; the top 3 are all positive (recall exactly 0.3 at precision 1),
    # np.arange(0., 1.1, .1)[3] == 0.30000000000000004 > 0.3 so the reference grid misses it.
    y, s = _ranked([1] * 3 + [0] * 3 + [1] * 7 + [0] * 2)
    ref = precall.average_precision(y, s, method="voc2007", ties=ties, recall_grid="reference")
    exact = precall.average_precision(y, s, method="voc2007", ties=ties, recall_grid="exact")
    ref_o = oracles.average_precision(y, s, "voc2007", ties, recall_grid="reference")
    exact_o = oracles.average_precision(y, s, "voc2007", ties, recall_grid="exact")
    assert ref == pytest.approx(ref_o, abs=1e-15)
    assert exact == pytest.approx(exact_o, abs=1e-15)
    assert exact - ref == pytest.approx((1 - 10 / 13) / 11, abs=1e-12)
    # default is the reference grid
    assert precall.average_precision(y, s, method="voc2007", ties=ties) == ref


@pytest.mark.parametrize("ties", TIES)
def test_coco_reference_vs_exact_grid(ties):
    # 20 positives; the top 7 are positive: recall exactly 0.35, but
    # np.linspace(0, 1, 101)[35] == 0.35000000000000003.
    y, s = _ranked([1] * 7 + [0] * 5 + [1] * 13 + [0] * 5)
    ref = precall.average_precision(y, s, method="coco", ties=ties, recall_grid="reference")
    exact = precall.average_precision(y, s, method="coco", ties=ties, recall_grid="exact")
    assert ref == pytest.approx(oracles.average_precision(y, s, "coco", ties), abs=1e-15)
    assert exact == pytest.approx(
        oracles.average_precision(y, s, "coco", ties, recall_grid="exact"), abs=1e-15
    )
    assert exact > ref + 1e-4
    assert precall.average_precision(y, s, method="coco", ties=ties) == ref


@pytest.mark.parametrize("method", ["step", "voc2010", "trapezoid", "interpolated"])
def test_recall_grid_irrelevant_for_gridless_methods(method):
    y, s = _ranked([1] * 3 + [0] * 3 + [1] * 7 + [0] * 2)
    a = precall.average_precision(y, s, method=method, recall_grid="reference")
    b = precall.average_precision(y, s, method=method, recall_grid="exact")
    assert a == b


# ------------------------------------------------------------ pycocotools style
def _pycocotools_ap(is_tp, scores, npig):
    """The AP pycocotools' COCOeval.accumulate gives one category at one IoU
    threshold, written here from its documented rules (not its code): a
    mergesort ranking by decreasing score, float cumulative TP/FP, precision
    TP / (TP + FP + np.spacing(1)), the running maximum from the right, the
    first point with recall >= r for each of its 101 np.linspace recall
    thresholds, precision 0 past the last recall, and np.mean of the 101 values."""
    ranking = np.argsort(-np.asarray(scores, dtype=float), kind="mergesort")
    hits = np.asarray(is_tp, dtype=bool)[ranking]
    cum_tp = np.cumsum(hits).astype(float)
    cum_fp = np.cumsum(~hits).astype(float)
    recall = cum_tp / npig
    precision = cum_tp / (cum_fp + cum_tp + np.spacing(1))
    best_from_here = list(precision)
    for k in reversed(range(1, len(best_from_here))):
        best_from_here[k - 1] = max(best_from_here[k - 1], best_from_here[k])
    thresholds = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)
    first = np.searchsorted(recall, thresholds, side="left")
    sampled = [best_from_here[k] if k < len(best_from_here) else 0.0 for k in first]
    return float(np.mean(np.array(sampled)))


def test_coco_stable_equals_pycocotools(rng):
    for n in (1, 2, 5, 30, 200):
        for _ in range(5):
            y = rng.integers(0, 2, n)
            y[0] = 1
            s = np.round(rng.random(n), 1)  # many ties: order among them is input order
            got = precall.average_precision(y, s, method="coco", ties="stable")
            exp = _pycocotools_ap(y, s, y.sum())
            assert got == pytest.approx(exp, abs=1e-12), (y.tolist(), s.tolist())


def test_coco_stable_with_missed_ground_truth_equals_pycocotools(rng):
    # detection setting: some ground truths never detected -> n_pos > tp[-1]
    for _ in range(10):
        n = int(rng.integers(3, 60))
        y = rng.integers(0, 2, n)
        s = np.round(rng.random(n), 1)
        npig = int(y.sum() + rng.integers(1, 10))
        inds = np.argsort(-s, kind="mergesort")
        ys = y[inds]
        table = precall.ThresholdTable(
            thresholds=s[inds],
            tp=np.cumsum(ys),
            fp=np.cumsum(1 - ys),
            n_pos=npig,
            n_neg=int((1 - y).sum()),
            ties="stable",
        )
        got = table.average_precision(method="coco")
        assert got == pytest.approx(_pycocotools_ap(y, s, npig), abs=1e-12)


# ------------------------------------------------------------------ ROC-AUC
@pytest.mark.parametrize("max_fpr", [None, 0.1, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("decimals", [None, 1])
def test_roc_auc_equals_sklearn(rng, max_fpr, weighted, decimals):
    for n in (2, 3, 5, 20, 100, 500):
        for _ in range(3):
            y, s, w = _case(rng, n, decimals=decimals, weighted=weighted, zero_weights=weighted)
            got = precall.roc_auc(y, s, max_fpr=max_fpr, sample_weight=w)
            exp = skm.roc_auc_score(y, s, max_fpr=max_fpr, sample_weight=w)
            assert got == pytest.approx(exp, rel=1e-12, abs=1e-14), (n, max_fpr)


@pytest.mark.parametrize("weighted", [False, True])
def test_roc_auc_equals_pairwise_oracle(rng, weighted):
    for n in (2, 3, 8, 60):
        for _ in range(4):
            y, s, w = _case(rng, n, decimals=1, weighted=weighted)
            got = precall.roc_auc(y, s, sample_weight=w)
            assert got == pytest.approx(oracles.roc_auc_pairwise(y, s, w), rel=1e-12)


def test_roc_auc_pos_label_none_uses_greater_label(rng):
    y, s, _ = _case(rng, 50)
    labels = np.where(y == 1, "b", "a")  # "b" > "a": "b" is positive
    exp = skm.roc_auc_score(labels, s)
    assert precall.roc_auc(labels, s) == pytest.approx(exp, rel=1e-12)
    assert precall.roc_auc(labels, s) == pytest.approx(oracles.roc_auc_pairwise(y, s), rel=1e-12)
    # explicit pos_label flips it
    got = precall.roc_auc(labels, s, pos_label="a")
    assert got == pytest.approx(skm.roc_auc_score(labels == "a", s), rel=1e-12)
    # ints other than 0/1
    labels2 = np.where(y == 1, 7, 3)
    assert precall.roc_auc(labels2, s) == pytest.approx(skm.roc_auc_score(labels2, s), rel=1e-12)


def test_roc_auc_table_method(rng):
    y, s, w = _case(rng, 80, weighted=True)
    t = precall.threshold_table(y, s, sample_weight=w)
    for max_fpr in (None, 0.1, 0.5, 1.0):
        assert t.roc_auc(max_fpr=max_fpr) == pytest.approx(
            precall.roc_auc(y, s, sample_weight=w, max_fpr=max_fpr), rel=1e-13
        )


# ---------------------------------------------------- table methods == functions
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("weighted", [False, True])
def test_table_average_precision_equals_function(rng, ties, weighted):
    y, s, w = _case(rng, 70, weighted=weighted)
    t = precall.threshold_table(y, s, sample_weight=w, ties=ties)
    for m in METHODS:
        for grid in ("reference", "exact"):
            a = t.average_precision(method=m, recall_grid=grid)
            b = precall.average_precision(
                y, s, method=m, ties=ties, sample_weight=w, recall_grid=grid
            )
            assert a == pytest.approx(b, rel=1e-13, abs=1e-15), (m, grid)
    assert t.average_precision() == pytest.approx(
        precall.average_precision(y, s, ties=ties, sample_weight=w), rel=1e-13
    )


# ---------------------------------------------------------------- evaluate
def _check_best_f1(bf, pts):
    best, _ = oracles.best_f1(pts)
    assert bf.f1 == pytest.approx(best, rel=1e-12)
    matches = []
    for k in range(len(pts)):
        tp, fp = pts.tp[k], pts.fp[k]
        fn = pts.n_pos - tp
        f1 = 2 * tp / (2 * tp + fp + fn)
        if (
            pts.thresholds[k] == bf.threshold
            and abs(f1 - best) <= 1e-12
            and abs(pts.precision[k] - bf.precision) <= 1e-12
            and abs(pts.recall[k] - bf.recall) <= 1e-12
        ):
            matches.append(k)
    assert matches, (bf, best)
    assert bf.f1 == pytest.approx(2 * bf.precision * bf.recall / (bf.precision + bf.recall), rel=1e-12)


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("weighted", [False, True])
def test_evaluate_matches_individual_functions(rng, ties, weighted):
    for n in (3, 25, 120):
        y, s, w = _case(rng, n, decimals=1, weighted=weighted)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a well-posed input must not warn
            ev = precall.evaluate(y, s, sample_weight=w, ties=ties)
        assert isinstance(ev, precall.Evaluation)
        assert set(ev.average_precision) == set(METHODS)
        for m in METHODS:
            exp = precall.average_precision(y, s, method=m, ties=ties, sample_weight=w)
            assert ev.average_precision[m] == pytest.approx(exp, rel=1e-13, abs=1e-15), m
            assert ev.average_precision[m] == pytest.approx(
                oracles.average_precision(y, s, m, ties, sample_weight=w), abs=TOL[m]
            )
        assert ev.roc_auc == pytest.approx(precall.roc_auc(y, s, sample_weight=w), rel=1e-13)
        assert ev.roc_auc == pytest.approx(skm.roc_auc_score(y, s, sample_weight=w), rel=1e-12)
        wt = np.ones(n) if w is None else w
        n_pos, n_neg = wt[y == 1].sum(), wt[y == 0].sum()
        assert ev.n_pos == pytest.approx(n_pos, rel=1e-12)
        assert ev.n_neg == pytest.approx(n_neg, rel=1e-12)
        assert ev.prevalence == pytest.approx(n_pos / (n_pos + n_neg), rel=1e-12)
        assert ev.n_samples == n
        assert ev.ties == ties
        pts = oracles.operating_points(y, s, w, ties=ties)
        _check_best_f1(ev.best_f1, pts)


@pytest.mark.parametrize("grid", ["reference", "exact"])
def test_evaluate_recall_grid(grid):
    y, s = _ranked([1] * 3 + [0] * 3 + [1] * 7 + [0] * 2)
    ev = precall.evaluate(y, s, recall_grid=grid)
    for m in ("voc2007", "coco"):
        assert ev.average_precision[m] == pytest.approx(
            oracles.average_precision(y, s, m, "group", recall_grid=grid), abs=1e-15
        )


def test_best_f1_brute_force_with_string_labels(rng):
    y, s, _ = _case(rng, 90, decimals=2)
    labels = np.where(y == 1, "Class1", "Class2")
    ev = precall.evaluate(labels, s, pos_label="Class1")
    pts = oracles.operating_points(y, s)
    _check_best_f1(ev.best_f1, pts)
    # brute force over every candidate threshold (predict positive iff score >= t)
    best = 0.0
    for t in np.unique(s):
        pred = s >= t
        tp = np.sum(pred & (y == 1))
        fp = np.sum(pred & (y == 0))
        fn = np.sum(~pred & (y == 1))
        best = max(best, 2 * tp / (2 * tp + fp + fn))
    assert ev.best_f1.f1 == pytest.approx(best, rel=1e-12)
    assert isinstance(ev.best_f1, precall.F1Point)


def test_evaluate_seed1_values():
    sd = oracles.SEEDS[1]
    ev = precall.evaluate(sd["labels"], sd["scores"])
    for (m, t), v in sd["expected"].items():
        assert ev.average_precision[m] == pytest.approx(v, abs=1e-6)
    assert ev.roc_auc == pytest.approx(sd["roc_auc"], abs=1e-6)
    assert ev.n_pos == 6 and ev.n_neg == 4 and ev.n_samples == 10
    assert ev.prevalence == pytest.approx(0.6)
    # brute-force F1 over every threshold:
    y = np.array(sd["labels"])
    sc = np.array(sd["scores"])
    f1s = [2 * np.sum((sc >= t) & (y == 1)) / (np.sum(sc >= t) + y.sum()) for t in sc]
    assert ev.best_f1.f1 == pytest.approx(max(f1s), rel=1e-12)


def test_evaluation_to_dict_and_str():
    sd = oracles.SEEDS[2]
    ev = precall.evaluate(sd["labels"], sd["scores"], ties="stable")
    d = ev.to_dict()
    assert isinstance(d, dict)
    for key in ("average_precision", "roc_auc", "prevalence", "n_pos", "n_neg", "n_samples", "best_f1", "ties"):
        assert key in d, key
    for m in METHODS:
        assert d["average_precision"][m] == ev.average_precision[m]
    assert d["roc_auc"] == ev.roc_auc
    assert d["ties"] == "stable"
    text = str(ev)
    for m in METHODS:
        assert m in text, (m, text)
    assert "0.662067" in text or "0.6621" in text  # voc2010 (stable) rendered
    # frozen
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        ev.roc_auc = 0.0


@pytest.mark.parametrize("ties", TIES)
def test_table_evaluate_equals_function(rng, ties):
    y, s, w = _case(rng, 50, weighted=True)
    t = precall.threshold_table(y, s, sample_weight=w, ties=ties)
    a = t.evaluate()
    b = precall.evaluate(y, s, sample_weight=w, ties=ties)
    for m in METHODS:
        assert a.average_precision[m] == pytest.approx(b.average_precision[m], rel=1e-13, abs=1e-15)
    assert a.roc_auc == pytest.approx(b.roc_auc, rel=1e-13)
    assert a.best_f1.f1 == pytest.approx(b.best_f1.f1, rel=1e-13)
    assert a.prevalence == pytest.approx(b.prevalence, rel=1e-13)


@pytest.mark.parametrize("weighted", [False, True])
def test_uint32_scores_above_2_31(rng, weighted):
    s = rng.integers(0, 2**32, 200, dtype=np.uint32)
    y = rng.integers(0, 2, 200)
    w = rng.integers(1, 4, 200).astype(float) if weighted else None
    assert precall.average_precision(y, s, sample_weight=w) == pytest.approx(
        skm.average_precision_score(y, s, sample_weight=w), rel=1e-12
    )
    assert precall.roc_auc(y, s, sample_weight=w) == pytest.approx(
        skm.roc_auc_score(y, s, sample_weight=w), rel=1e-12
    )
    for m in METHODS:
        for ties in TIES:
            got = precall.average_precision(y, s, sample_weight=w, method=m, ties=ties)
            exp = oracles.average_precision(y, s, m, ties, sample_weight=w)
            assert got == pytest.approx(exp, abs=TOL[m]), (m, ties)


# ------------------------------------------ bit-for-bit against the reference codes
def _detectron_voc_ap(rec, prec, use_07_metric):
    """Detectron's voc_ap, written here from its definition (not its code), with
    the same floating-point operations so that results can be compared bit for bit.

    11-point: for t in np.arange(0., 1.1, 0.1), the maximum precision at recall
    >= t (0 if none), accumulated as ap += p / 11.  All-point: sentinels (0, 0)
    in front and (1, 0) at the end, running maximum of precision from the right,
    and the sum of (R_{i+1} - R_i) * P_{i+1} over the indices where recall changes.
    """
    if use_07_metric:
        total = 0.0
        for t in np.arange(0.0, 1.1, 0.1):
            reached = rec >= t
            total = total + (np.max(prec[reached]) if reached.any() else 0) / 11.0
        return total
    r = np.concatenate(([0.0], rec, [1.0]))
    p = np.concatenate(([0.0], prec, [0.0]))
    p = np.maximum.accumulate(p[::-1])[::-1]
    change = np.flatnonzero(r[1:] != r[:-1])
    return np.sum((r[change + 1] - r[change]) * p[change + 1])


def _detectron_rec_prec(is_tp, confidence, npos):
    """voc_eval's tail, with a stable sort so ties keep input order."""
    sorted_ind = np.argsort(-np.asarray(confidence, dtype=float), kind="stable")
    tp = np.asarray(is_tp, dtype=float)[sorted_ind]
    fp = 1.0 - tp
    fp = np.cumsum(fp)
    tp = np.cumsum(tp)
    rec = tp / float(npos)
    prec = tp / np.maximum(tp + fp, np.finfo(np.float64).eps)
    return rec, prec


def _random_detections(rng, n):
    y = rng.integers(0, 2, n)
    y[0] = 1
    s = np.round(rng.random(n), int(rng.integers(1, 4)))
    return y, s


@pytest.mark.parametrize("method", ["voc2007", "voc2010"])
def test_voc_stable_bit_for_bit_equals_detectron(rng, method):
    for n in (1, 2, 3, 7, 40, 300):
        for _ in range(5):
            y, s = _random_detections(rng, n)
            rec, prec = _detectron_rec_prec(y, s, y.sum())
            exp = float(_detectron_voc_ap(rec, prec, use_07_metric=method == "voc2007"))
            got = precall.average_precision(y, s, method=method, ties="stable")
            # bit for bit, except that an AP is kept in [0, 1]: Detectron's literal sum(p) / 11 can
            # land one ulp above 1 (documented in conventions.unit_interval)
            assert got == min(exp, 1.0), (got, exp, y.tolist(), s.tolist())
            assert 0.0 <= got <= 1.0


def test_coco_stable_bit_for_bit_equals_pycocotools(rng):
    for n in (1, 2, 3, 7, 40, 300):
        for _ in range(5):
            y, s = _random_detections(rng, n)
            got = precall.average_precision(y, s, method="coco", ties="stable")
            assert got == _pycocotools_ap(y, s, y.sum()), (y.tolist(), s.tolist())


@pytest.mark.parametrize("n_pos", [1, 2, 3, 7, 10])
def test_coco_keeps_pycocotools_epsilon(n_pos):
    # a perfect ranking: pycocotools' precision tp / (tp + np.spacing(1)) is just below 1
    # when tp == 1 (for tp >= 2 the epsilon is absorbed by rounding)
    y = np.array([1] * n_pos + [0] * 3)
    s = np.linspace(1, 0, y.size)
    exp = _pycocotools_ap(y, s, n_pos)
    if n_pos == 1:
        assert exp < 1.0
    assert precall.average_precision(y, s, method="coco", ties="stable") == exp
    assert precall.average_precision(y, s, method="coco") == exp


# ------------------------------------------------------------ label containers
def _object_labels(y):
    return np.where(y == 1, "Poor", "Good").astype(object)


def _pandas_string_labels(y):
    pd = pytest.importorskip("pandas")
    return pd.Series(np.where(y == 1, "Poor", "Good"), dtype="string")


def _pandas_category_labels(y):
    pd = pytest.importorskip("pandas")
    return pd.Series(np.where(y == 1, "Poor", "Good"), dtype="category")


@pytest.mark.parametrize(
    "make", [_object_labels, _pandas_string_labels, _pandas_category_labels],
    ids=["object-array", "pandas-string", "pandas-category"],
)
def test_roc_auc_string_containers_without_pos_label(rng, make):
    """roc_auc's pos_label=None rule (greater label positive) for strings held in
    object arrays / pandas string columns (what pandas.read_csv returns)."""
    y, s, _ = _case(rng, 40)
    labels = make(y)
    exp = skm.roc_auc_score(np.asarray(labels, dtype=object) == "Poor", s)
    assert precall.roc_auc(labels, s) == pytest.approx(exp, rel=1e-12)
    assert precall.roc_auc(labels, s, pos_label="Poor") == pytest.approx(exp, rel=1e-12)
    ev = precall.evaluate(labels, s, pos_label="Poor")
    assert ev.roc_auc == pytest.approx(exp, rel=1e-12)


@pytest.mark.parametrize(
    "make", [_object_labels, _pandas_string_labels, _pandas_category_labels],
    ids=["object-array", "pandas-string", "pandas-category"],
)
def test_roc_auc_string_containers_single_class(make):
    labels = make(np.zeros(4, dtype=int))
    with pytest.warns(precall.UndefinedMetricWarning):
        assert math.isnan(precall.roc_auc(labels, [0.1, 0.2, 0.3, 0.4]))


def test_bytes_labels_with_present_pos_label_not_silently_empty():
    """b"b" is one of the two labels: the answer is either the right AP or an error,
    never the no-positives value 0.0."""
    y = np.array([b"a", b"b", b"b", b"a"])
    s = [0.1, 0.9, 0.4, 0.5]
    exp = skm.average_precision_score([0, 1, 1, 0], s)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = precall.average_precision(y, s, pos_label=b"b")
    except (ValueError, TypeError):
        return
    assert got == pytest.approx(exp, rel=1e-12)


@pytest.mark.parametrize("method", precall.AP_METHODS)
def test_a_perfect_ranking_has_ap_one_exactly_and_no_ap_leaves_the_unit_interval(method):
    for n_pos, n_neg in ((1, 0), (3, 5), (11, 1), (33, 2), (100, 100)):
        y = np.r_[np.ones(n_pos, int), np.zeros(n_neg, int)]
        s = np.linspace(1, 0, y.size)
        for ties in ("group", "stable"):  # coco: pycocotools' TP / (TP + FP + eps) is an ulp below 1
            expected = pytest.approx(1.0, abs=1e-15) if method == "coco" else 1.0
            assert precall.average_precision(y, s, method=method, ties=ties) == expected
            assert precall.evaluate(y, s, ties=ties).average_precision[method] == expected
    rng = np.random.default_rng(5)
    for _ in range(200):
        y, s = _random_detections(rng, int(rng.integers(1, 60)))
        value = precall.average_precision(y, s, method=method, ties="stable")
        assert 0.0 <= value <= 1.0 and not (value == 0 and np.signbit(value))
