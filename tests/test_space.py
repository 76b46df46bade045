"""PR space, ROC space and class imbalance (precall.space, ThresholdTable.at_prevalence).

References: scikit-learn on physically replicated and on explicitly reweighted
data (prevalence), the loop oracles of ``oracles.py`` (every AP convention,
brute force over every ranking for the minimum AP, Flach & Kull's gains in
rational arithmetic, Davis & Goadrich's interpolation), and the examples
documented in the authors' ``prg`` package.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oracles
import precall

sklearn_metrics = pytest.importorskip("sklearn.metrics")

METHODS = precall.AP_METHODS


def _case(rng, n, *, n_distinct=6, weighted=False, p=0.4):
    y = (rng.random(n) < p).astype(int)
    y[0], y[1] = 1, 0  # both classes
    s = rng.integers(0, n_distinct, n) / n_distinct  # ties, also across the classes
    w = rng.uniform(0.2, 3.0, n) if weighted else None
    return y, s, w


@st.composite
def binary_data(draw, weighted=None):
    n = draw(st.integers(2, 30))
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    y[0], y[-1] = 1, 0
    s = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    use_w = draw(st.booleans()) if weighted is None else weighted
    w = draw(st.lists(st.floats(0.1, 4.0), min_size=n, max_size=n)) if use_w else None
    return np.array(y), np.array(s, dtype=float) / 6, None if w is None else np.array(w)


def _reweighted(y, w, pi):
    """The weights that make positives ``pi`` of the total, from the definition."""
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    n_pos, n_neg = w[y == 1].sum(), w[y == 0].sum()
    factor = (1 - pi) / pi * n_pos / n_neg
    return np.where(y == 1, w, w * factor)


# ---------------------------------------------------------------------------
# prevalence adjustment
@pytest.mark.parametrize("k", [2, 3, 7])
def test_prevalence_equals_replicated_negatives(rng, k):
    """Negatives repeated k times (integer factor) = the reweighted table at P / (P + k N)."""
    for _ in range(5):
        y, s, _ = _case(rng, 60)
        n_pos, n_neg = int(y.sum()), int((1 - y).sum())
        pi = n_pos / (n_pos + k * n_neg)
        neg = y == 0
        y_rep = np.concatenate([y] + [y[neg]] * (k - 1))
        s_rep = np.concatenate([s] + [s[neg]] * (k - 1))
        for m in METHODS:
            got = precall.average_precision(y, s, method=m, prevalence=pi)
            assert got == pytest.approx(precall.average_precision(y_rep, s_rep, method=m), rel=1e-12, abs=1e-14)
            assert got == pytest.approx(oracles.average_precision_exact(y_rep, s_rep, method=m), rel=1e-12)
        assert precall.average_precision(y, s, prevalence=pi) == pytest.approx(
            sklearn_metrics.average_precision_score(y_rep, s_rep), rel=1e-12)
        p, r, t = precall.precision_recall_curve(y, s, prevalence=pi)
        p_ref, r_ref, t_ref = sklearn_metrics.precision_recall_curve(y_rep, s_rep)
        np.testing.assert_allclose(p, p_ref, rtol=1e-12)
        np.testing.assert_allclose(r, r_ref, rtol=1e-12)
        np.testing.assert_array_equal(t, t_ref)
        ev, ref = precall.evaluate(y, s, prevalence=pi), precall.evaluate(y_rep, s_rep)
        assert ev.prevalence == pytest.approx(ref.prevalence, rel=1e-12)
        assert ev.n_neg == pytest.approx(ref.n_neg, rel=1e-12)
        assert ev.best_f1.f1 == pytest.approx(ref.best_f1.f1, rel=1e-12)
        assert ev.auprg == pytest.approx(ref.auprg, rel=1e-9, abs=1e-12)
        for m in METHODS:
            assert ev.average_precision[m] == pytest.approx(ref.average_precision[m], rel=1e-12)
            assert ev.min_average_precision[m] == pytest.approx(ref.min_average_precision[m], rel=1e-12)
            assert ev.normalized_average_precision[m] == pytest.approx(
                ref.normalized_average_precision[m], rel=1e-9, abs=1e-12)


@settings(deadline=None)
@given(data=binary_data(), pi=st.floats(0.001, 0.999), ties=st.sampled_from(["group", "stable"]))
def test_prevalence_equals_explicitly_reweighted_data(data, pi, ties):
    """prevalence=pi = the oracle (and scikit-learn) on data with negatives' weights scaled."""
    y, s, w = data
    w2 = _reweighted(y, w, pi)
    for m in METHODS:
        got = precall.average_precision(y, s, method=m, ties=ties, sample_weight=w, prevalence=pi)
        want = oracles.average_precision_exact(y, s, method=m, ties=ties, sample_weight=w2)
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12), m
    if ties == "group":
        assert precall.average_precision(y, s, sample_weight=w, prevalence=pi) == pytest.approx(
            sklearn_metrics.average_precision_score(y, s, sample_weight=w2), rel=1e-9, abs=1e-12)
    table = precall.threshold_table(y, s, sample_weight=w, ties=ties).at_prevalence(pi)
    assert table.n_pos / (table.n_pos + table.n_neg) == pytest.approx(pi, rel=1e-12)
    ref = precall.threshold_table(y, s, sample_weight=w2, ties=ties)
    np.testing.assert_allclose(table.fp, ref.fp, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(table.precision, ref.precision, rtol=1e-9, atol=1e-12)


@settings(deadline=None)
@given(data=binary_data(), pi=st.floats(0.001, 0.999))
def test_roc_does_not_change_with_prevalence(data, pi):
    y, s, w = data
    table = precall.threshold_table(y, s, sample_weight=w)
    moved = table.at_prevalence(pi)
    # every point (drop_intermediate's exact collinearity test sees float noise in FP * factor)
    a, b = table.roc_curve(drop_intermediate=False), moved.roc_curve(drop_intermediate=False)
    np.testing.assert_allclose(b.fpr, a.fpr, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(b.tpr, a.tpr)
    np.testing.assert_array_equal(b.thresholds, a.thresholds)
    assert moved.roc_auc() == pytest.approx(table.roc_auc(), rel=1e-12)
    assert precall.evaluate(y, s, sample_weight=w, prevalence=pi).roc_auc == pytest.approx(
        sklearn_metrics.roc_auc_score(y, s, sample_weight=w), rel=1e-12)
    np.testing.assert_array_equal(moved.recall, table.recall)


def test_at_prevalence_of_the_table_itself_changes_nothing(rng):
    y, s, _ = _case(rng, 80)
    table = precall.threshold_table(y, s)
    same = table.at_prevalence(y.mean())
    assert same.tp.dtype == same.fp.dtype == np.float64
    for m in METHODS:
        assert same.average_precision(method=m) == pytest.approx(table.average_precision(method=m), rel=1e-12)


def test_at_prevalence_uses_n_pos_beyond_the_final_tp():
    """Detection: ground truths never detected still count in n_pos."""
    table = precall.ThresholdTable(thresholds=[0.9, 0.5, 0.2], tp=[1, 1, 2], fp=[0, 1, 2], n_pos=4, n_neg=2)
    moved = table.at_prevalence(0.1)
    assert moved.n_pos == 4 and moved.n_neg == pytest.approx(36)
    np.testing.assert_allclose(moved.fp, [0, 18, 36])
    # step AP at 10%: (1/4) * 1 + (1/4) * 2 / 38
    assert moved.average_precision() == pytest.approx(0.25 + 0.25 * 2 / 38, rel=1e-12)


@pytest.mark.parametrize("bad", [0, 1, 0.0, 1.0, -0.2, 1.5, float("nan"), float("inf")])
def test_bad_prevalence_values(bad):
    with pytest.raises(ValueError, match=r"`prevalence` must be a finite number in \[1e-300, 1\)"):
        precall.average_precision([0, 1], [0.1, 0.9], prevalence=bad)
    with pytest.raises(ValueError, match="`prevalence`"):
        precall.threshold_table([0, 1], [0.1, 0.9]).at_prevalence(bad)


@pytest.mark.parametrize("bad", ["0.1", True, None.__class__])
def test_bad_prevalence_types(bad):
    with pytest.raises(TypeError, match="`prevalence` must be a finite number in \\[1e-300, 1\\)"):
        precall.evaluate([0, 1], [0.1, 0.9], prevalence=bad)


@pytest.mark.parametrize("y,missing", [([1, 1, 1], "negatives"), ([0, 0, 0], "positives")])
def test_prevalence_needs_both_classes(y, missing):
    for call in (
        lambda: precall.average_precision(y, [0.1, 0.5, 0.9], prevalence=0.1),
        lambda: precall.precision_recall_curve(y, [0.1, 0.5, 0.9], prevalence=0.1),
        lambda: precall.evaluate(y, [0.1, 0.5, 0.9], prevalence=0.1),
    ):
        with pytest.raises(ValueError, match=f"`prevalence` 0.1: the data have no {missing}"):
            call()


def test_prevalence_is_binary_only():
    y = [0, 1, 2, 1]
    s = np.eye(3)[[0, 1, 2, 0]] * 0.8 + 0.1
    with pytest.raises(ValueError, match="`prevalence` applies to binary input"):
        precall.average_precision(y, s, prevalence=0.1)


# ---------------------------------------------------------------------------
# PR <-> ROC
@settings(deadline=None)
@given(data=binary_data(), ties=st.sampled_from(["group", "stable"]))
def test_pr_and_roc_correspond_on_every_operating_point(data, ties):
    """Theorem 3.1 (Davis & Goadrich): roc_from_pr then pr_from_roc is the identity on
    every operating point with TP > 0 (recall 0 carries no FP information)."""
    y, s, w = data
    t = precall.threshold_table(y, s, sample_weight=w, ties=ties)
    found = t.tp > 0
    roc = precall.roc_from_pr(t.precision[found], t.recall[found], n_pos=t.n_pos, n_neg=t.n_neg)
    np.testing.assert_allclose(roc.fpr, t.fpr[found], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(roc.tpr, t.recall[found], rtol=0, atol=0)
    back = precall.pr_from_roc(roc.fpr, roc.tpr, n_pos=t.n_pos, n_neg=t.n_neg)
    np.testing.assert_allclose(back.precision, t.precision[found], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(back.recall, t.recall[found], rtol=1e-12, atol=0)
    # and ROC -> PR -> ROC
    pr = precall.pr_from_roc(t.fpr[found], t.tpr[found], n_pos=t.n_pos, n_neg=t.n_neg)
    np.testing.assert_allclose(pr.precision, t.precision[found], rtol=1e-9, atol=1e-12)
    again = precall.roc_from_pr(pr.precision, pr.recall, n_pos=t.n_pos, n_neg=t.n_neg)
    np.testing.assert_allclose(again.fpr, t.fpr[found], rtol=1e-9, atol=1e-12)


def test_scikit_learn_curves_convert_into_each_other(rng):
    y, s, _ = _case(rng, 200, n_distinct=40)
    p, r, _ = sklearn_metrics.precision_recall_curve(y, s)
    fpr, tpr, _ = sklearn_metrics.roc_curve(y, s, drop_intermediate=False)
    n_pos, n_neg = int(y.sum()), int((1 - y).sum())
    roc = precall.roc_from_pr(p, r, n_pos=n_pos, n_neg=n_neg)
    # scikit-learn's PR curve runs from the lowest threshold; its final point (0, 1) is the origin
    expected = np.concatenate([fpr[1:][::-1], [0.0]])
    known = ~np.isnan(roc.fpr)
    np.testing.assert_allclose(roc.fpr[known], expected[known], rtol=1e-12, atol=1e-15)
    assert np.all(r[~known] == 0) and np.all(p[~known] == 0)  # only negatives predicted positive
    back = precall.pr_from_roc(fpr, tpr, n_pos=n_pos, n_neg=n_neg)
    np.testing.assert_allclose(back.precision[1:][tpr[1:] > 0], p[:-1][::-1][tpr[1:] > 0], rtol=1e-12)
    assert back.precision[0] == 1.0 and back.recall[0] == 0.0  # the origin: scikit-learn's (0, 1)


def test_davis_goadrich_interpolation_against_the_definition(rng):
    for _ in range(20):
        y, s, _ = _case(rng, 50, n_distinct=rng.integers(2, 12))
        fpr, tpr, _ = precall.roc_curve(y, s)  # corners only: sparse points
        n_pos, n_neg = int(y.sum()), int((1 - y).sum())
        got = precall.pr_from_roc(fpr, tpr, n_pos=n_pos, n_neg=n_neg, interpolate=True)
        tp_ref, fp_ref = oracles.davis_goadrich_points(np.round(tpr * n_pos), np.round(fpr * n_neg))
        want_p = [1.0 if a + b == 0 else float(a / (a + b)) for a, b in zip(tp_ref, fp_ref)]
        np.testing.assert_allclose(got.precision, want_p, rtol=1e-12)
        np.testing.assert_allclose(got.recall, [float(a / n_pos) for a in tp_ref], rtol=1e-12)
        # the original points are kept
        plain = precall.pr_from_roc(fpr, tpr, n_pos=n_pos, n_neg=n_neg)
        assert set(zip(plain.recall.round(12), plain.precision.round(12))) <= set(
            zip(got.recall.round(12), got.precision.round(12)))


def test_davis_goadrich_example():
    """Two points, 3 positives apart, FP growing 6: x = 1, 2 get FP 2, 4 (precision 1/3)."""
    p, r = precall.pr_from_roc([0.0, 0.6], [0.0, 0.3], n_pos=10, n_neg=10, interpolate=True)
    np.testing.assert_allclose(r, [0.0, 0.1, 0.2, 0.3])
    np.testing.assert_allclose(p, [1.0, 1 / 3, 1 / 3, 1 / 3])


def test_conversion_errors():
    with pytest.raises(ValueError, match="unachievable region"):
        precall.roc_from_pr([0.05], [0.5], n_pos=10, n_neg=90)  # minimum is 5 / 95
    with pytest.raises(ValueError, match="`precision` is 0 at index 1"):
        precall.roc_from_pr([0.5, 0.0], [0.5, 0.5], n_pos=10, n_neg=90)
    with pytest.raises(ValueError, match="`fpr` and `tpr` must have the same length"):
        precall.pr_from_roc([0.0, 1.0], [1.0], n_pos=1, n_neg=1)
    with pytest.raises(ValueError, match=r"`tpr` must be rates in \[0, 1\]; got 1.5 at index 0"):
        precall.pr_from_roc([0.0], [1.5], n_pos=1, n_neg=1)
    with pytest.raises(ValueError, match=r"`n_neg` must be a finite number in \(0, inf\)"):
        precall.pr_from_roc([0.0], [1.0], n_pos=1, n_neg=0)
    with pytest.raises(TypeError, match="`n_pos` must be a finite number"):
        precall.roc_from_pr([1.0], [1.0], n_pos="3", n_neg=1)
    with pytest.raises(ValueError, match="non-decreasing with interpolate=True"):
        precall.pr_from_roc([0.5, 0.0], [1.0, 0.0], n_pos=1, n_neg=1, interpolate=True)
    fpr, tpr = precall.roc_from_pr([0.0, 1.0], [0.0, 0.0], n_pos=3, n_neg=3)
    assert math.isnan(fpr[0]) and fpr[1] == 0.0  # recall 0: unknown FP / the origin


def test_min_precision_is_reached_by_the_worst_ranking():
    y = [0] * 7 + [1] * 3
    t = precall.threshold_table(y, np.arange(10, 0, -1))
    found = t.tp > 0
    np.testing.assert_allclose(precall.min_precision(t.recall[found], n_pos=3, n_neg=7), t.precision[found])
    np.testing.assert_array_equal(precall.min_precision([[0.0, 1.0]], n_pos=3, n_neg=0), [[0.0, 1.0]])


# ---------------------------------------------------------------------------
# the minimum AP
@pytest.mark.parametrize("ties", ["group", "stable"])
@pytest.mark.parametrize("n_pos", [1, 2, 3, 4])
@pytest.mark.parametrize("n_neg", [0, 1, 2, 3, 4])
def test_min_ap_against_brute_force_over_every_ranking(n_pos, n_neg, ties):
    for m in METHODS:
        for grid in (("reference", "exact") if m in ("voc2007", "coco") else ("reference",)):
            want = oracles.min_ap_brute_force(n_pos, n_neg, m, ties, grid)
            got = precall.min_average_precision(n_pos, n_neg, method=m, ties=ties, recall_grid=grid)
            assert got == pytest.approx(want, rel=1e-12, abs=1e-15), (m, grid)


@pytest.mark.parametrize("n_pos,n_neg", [(1, 1), (10, 90), (37, 1000), (500, 3)])
def test_min_step_ap_is_boyds_formula(n_pos, n_neg):
    boyd = sum(Fraction(i, i + n_neg) for i in range(1, n_pos + 1)) / n_pos
    assert precall.min_average_precision(n_pos, n_neg) == pytest.approx(float(boyd), rel=1e-13)


def test_min_ap_of_other_conventions_in_closed_form():
    p, n = 30, 70
    assert precall.min_average_precision(p, n, method="voc2010") == pytest.approx(0.3, rel=1e-15)
    assert precall.min_average_precision(p, n, method="trapezoid") == pytest.approx(0.15, rel=1e-15)
    assert precall.min_average_precision(p, n, method="interpolated") == pytest.approx(
        1 - n / p * math.log1p(p / n), rel=1e-12)
    assert precall.min_average_precision(5, 0, method="coco") == 1.0


def test_normalized_ap_is_zero_at_the_worst_ranking_and_one_at_a_perfect_one():
    worst = precall.evaluate([0] * 4 + [1] * 3, np.arange(7, 0, -1))
    best = precall.evaluate([1] * 3 + [0] * 4, np.arange(7, 0, -1))
    for m in METHODS:
        if m != "trapezoid":  # its minimum ties every positive (see test above)
            assert worst.normalized_average_precision[m] == pytest.approx(0.0, abs=1e-12), m
        assert best.normalized_average_precision[m] == pytest.approx(1.0, abs=1e-12), m
        assert worst.normalized_average_precision[m] == pytest.approx(
            (worst.average_precision[m] - worst.min_average_precision[m]) / (1 - worst.min_average_precision[m]))
    tied = precall.evaluate([0] * 4 + [1] * 3, [2] * 4 + [1] * 3)
    assert tied.normalized_average_precision["trapezoid"] == pytest.approx(0.0, abs=1e-12)


def test_min_ap_undefined_cases(rng):
    y, s, w = _case(rng, 40, weighted=True)
    ev = precall.evaluate(y, s, sample_weight=w)
    assert all(math.isnan(v) for v in ev.min_average_precision.values())
    assert all(math.isnan(v) for v in ev.normalized_average_precision.values())
    whole = precall.evaluate(y, s, sample_weight=np.full(len(y), 2.0))  # weights as repeated rows
    assert whole.min_average_precision["step"] == pytest.approx(
        precall.min_average_precision(2 * y.sum(), 2 * (1 - y).sum()))
    only_pos = precall.evaluate([1, 1], [0.2, 0.3], on_undefined="nan")
    assert only_pos.min_average_precision["step"] == 1.0
    assert math.isnan(only_pos.normalized_average_precision["step"])
    with pytest.raises(ValueError, match="`n_pos` must be a whole number"):
        precall.min_average_precision(2.5, 3)
    with pytest.raises(ValueError, match=r"`n_pos` must be a whole number in \(0, inf\)"):
        precall.min_average_precision(0, 3)
    with pytest.raises(ValueError, match=r"`n_neg` must be a finite number in \[0, inf\)"):
        precall.min_average_precision(3, -1)
    with pytest.raises(ValueError, match="`method` must be one of"):
        precall.min_average_precision(3, 1, method="auc")



def test_min_ap_is_undefined_with_positives_never_ranked():
    """A detection table's ground truths that no detection found (n_pos above the last TP): the minimum AP
    is of a ranking of every positive, which this table is not. It was computed from (n_pos, n_neg) all the
    same: min AP 0.8 above the AP 0.4167, normalised -1.9 (COCO class table, 4 ground truths, 2 found).
    Now NaN with the documented warning (none under "nan", an error under "raise"), AP unchanged."""
    table = precall.ThresholdTable(thresholds=[0.9, 0.8, 0.7], tp=[1, 1, 2], fp=[0, 1, 1], n_pos=4, n_neg=1)
    with pytest.warns(precall.UndefinedMetricWarning, match="2 of the 4 positives are never ranked"):
        ev = table.evaluate()
    assert ev.average_precision["voc2010"] == pytest.approx(5 / 12)
    assert all(math.isnan(v) for v in ev.min_average_precision.values())
    assert all(math.isnan(v) for v in ev.normalized_average_precision.values())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = table.evaluate(on_undefined="nan")
        assert math.isnan(quiet.min_average_precision["step"]) and quiet.average_precision == ev.average_precision
        ranked = precall.ThresholdTable(thresholds=[0.9, 0.8, 0.7], tp=[1, 1, 2], fp=[0, 1, 1], n_pos=2, n_neg=1)
        assert ranked.evaluate().min_average_precision == precall.evaluate([1, 0, 1], [0.9, 0.8, 0.7]).min_average_precision
    with pytest.raises(ValueError, match="min AP is undefined: 2 of the 4 positives are never ranked"):
        table.evaluate(on_undefined="raise")
    with pytest.warns(precall.UndefinedMetricWarning, match="never ranked"):  # at a prevalence too
        assert math.isnan(table.at_prevalence(0.1).evaluate().min_average_precision["step"])
    detection = pytest.importorskip("precall.detection")
    gt = {"images": [{"id": 1, "width": 100, "height": 100}], "categories": [{"id": 1, "name": "a"}],
          "annotations": [{"id": i + 1, "image_id": 1, "category_id": 1, "bbox": [10 * i, 10 * i, 8, 8], "area": 64,
                           "iscrowd": 0} for i in range(4)]}
    dt = [{"image_id": 1, "category_id": 1, "bbox": b, "score": sc}
          for b, sc in (([0, 0, 8, 8], 0.9), ([50, 0, 8, 8], 0.8), ([10, 10, 8, 8], 0.7))]
    coco = detection.evaluate_coco(detection.load_coco(gt, dt)).threshold_table(1, iou_threshold=0.5)
    with pytest.warns(precall.UndefinedMetricWarning, match="2 of the 4 positives are never ranked"):
        assert math.isnan(coco.evaluate().min_average_precision["voc2010"])

# ---------------------------------------------------------------------------
# precision-recall gain
def test_prg_package_documented_example():
    """prg (R package) documentation: create_prg_curve and calc_auprg on its example."""
    y, s = [1, 1, 0, 0, 1, 0], [0.8, 0.8, 0.6, 0.4, 0.4, 0.2]
    pg, rg, thr = precall.precision_recall_gain_curve(y, s)
    np.testing.assert_allclose(rg, [0.0, 0.5, 0.5, 1.0, 1.0], atol=1e-15)
    np.testing.assert_allclose(pg, [1.0, 1.0, 0.5, 1 / 3, 0.0], atol=1e-15)
    assert math.isnan(thr[0]) and list(thr[1:]) == [0.8, 0.6, 0.4, 0.2]
    assert precall.auprg(y, s) == pytest.approx(0.7083333, abs=5e-8)


def test_auprg_by_hand_on_the_seed_example():
    """Seed example 1 (P 6, N 4, pi 0.6): the curve enters at TP 3.6 with FP 3, then
    (TP, FP) = (4, 3), (5, 3), (6, 3); trapezoids -3/64, -9/1600, 21/400: area 0."""
    seed = oracles.SEEDS[1]
    assert precall.auprg(seed["labels"], seed["scores"]) == pytest.approx(0.0, abs=1e-15)
    pg, rg, _ = precall.precision_recall_gain_curve(seed["labels"], seed["scores"])
    np.testing.assert_allclose(rg, [0.0, 0.25, 0.7, 1.0, 1.0], atol=1e-15)
    np.testing.assert_allclose(pg, [-0.25, -0.125, 0.1, 0.25, 0.0], atol=1e-15)


@settings(deadline=None)
@given(data=binary_data(), pi=st.one_of(st.none(), st.floats(0.01, 0.99)))
def test_prg_against_the_definition(data, pi):
    y, s, w = data
    w_def = w if pi is None else _reweighted(y, w, pi)
    pts = oracles.operating_points(y, s, sample_weight=w_def)
    rg, pg, area = oracles.prg_from_definition(pts)
    got = precall.auprg(y, s, sample_weight=w, prevalence=pi)
    assert got == pytest.approx(float(area), rel=1e-9, abs=1e-9)
    curve = precall.precision_recall_gain_curve(y, s, sample_weight=w, prevalence=pi)
    np.testing.assert_allclose(curve.recall_gain, [float(x) for x in rg], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(curve.precision_gain, [float(x) for x in pg], rtol=1e-9, atol=1e-9)
    # the area under the returned curve is AUPRG, and evaluate reports it
    r, p = curve.recall_gain, curve.precision_gain
    assert np.sum(np.diff(r) * (p[1:] + p[:-1]) / 2) == pytest.approx(got, rel=1e-9, abs=1e-12)
    assert precall.evaluate(y, s, sample_weight=w, prevalence=pi).auprg == pytest.approx(got, rel=1e-12, abs=1e-15)


def test_auprg_of_a_perfect_ranking_and_undefined_cases():
    assert precall.auprg([1, 1, 0, 0, 0], [5, 4, 3, 2, 1]) == pytest.approx(1.0)
    with pytest.warns(precall.UndefinedMetricWarning, match="AUPRG is undefined"):
        assert math.isnan(precall.auprg([1, 1], [0.3, 0.2]))
    with pytest.raises(ValueError, match="AUPRG is undefined"):
        precall.auprg([0, 0], [0.3, 0.2], on_undefined="raise")
    with pytest.raises(ValueError, match="needs both classes"):
        precall.precision_recall_gain_curve([0, 0], [0.3, 0.2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy division warning either
        assert math.isnan(precall.evaluate([1, 1], [0.3, 0.2], on_undefined="nan").auprg)


def test_auprg_is_at_most_one_on_every_route(tmp_path, capsys):
    """A perfect ranking's AUPRG is at most 1, never the float sum's 1.0000000000000002 (as an AP
    is clipped to [0, 1]; an ulp below stays): the function, evaluate, its slices, both accumulators, the score-range
    algorithm of dask and Spark, and the command's JSON."""
    import json

    from precall.cli import main
    from precall.scale import ranges
    from precall._core.validate import check_binary

    for n_pos in range(1, 6):
        for n_neg in range(1, 9):
            for weight in (None, 0.3):
                n = n_pos + n_neg
                y, s = np.r_[np.ones(n_pos, int), np.zeros(n_neg, int)], np.linspace(1.0, 0.1, n)
                w = None if weight is None else np.full(n, weight)
                one = np.zeros(n, int)
                acc = precall.Accumulator().update(y, s, sample_weight=w)
                sliced = precall.SlicedAccumulator().update(y, s, by=one, sample_weight=w)
                parts = [check_binary(y[a:b], s[a:b], None if w is None else w[a:b], None)
                         for a, b in ((0, n // 2), (n // 2, n))]
                (by_ranges,) = ranges.wire(parts, lambda f, **_: f, n_ranges=3, recall_grid="reference")
                routes = {
                    "auprg": precall.auprg(y, s, sample_weight=w),
                    "evaluate": precall.evaluate(y, s, sample_weight=w).auprg,
                    "by": precall.evaluate(y, s, sample_weight=w, by=one).auprg[0],
                    "Accumulator": acc.evaluate().auprg,
                    "SlicedAccumulator": sliced.evaluate().auprg[0],
                    "ranges": by_ranges.auprg,
                }
                for route, value in routes.items():
                    assert value <= 1.0 and value == pytest.approx(1.0, abs=1e-15), (route, n_pos, n_neg, weight, value)
    path = tmp_path / "perfect.csv"
    path.write_text("y,s\n" + "".join(f"{int(i < 3)},{1 - i / 10:.1f}\n" for i in range(10)), encoding="utf-8")
    assert main(["evaluate", str(path), "--label", "y", "--score", "s", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["auprg"] == 1.0


# ---------------------------------------------------------------------------
# the evaluation result
def test_evaluation_carries_the_context(rng):
    y, s, _ = _case(rng, 120)
    ev = precall.evaluate(y, s, ties="stable")
    d = ev.to_dict()
    for key in ("min_average_precision", "normalized_average_precision", "auprg"):
        assert key in d
    for m in METHODS:
        assert ev.min_average_precision[m] == precall.min_average_precision(
            int(y.sum()), int((1 - y).sum()), method=m, ties="stable")
    assert ev.auprg == precall.auprg(y, s)  # ties grouped, as ROC-AUC
    table = precall.threshold_table(y, s, ties="stable")
    via_table = table.at_prevalence(0.05).evaluate()
    direct = precall.evaluate(y, s, ties="stable", prevalence=0.05)
    for m in METHODS:
        assert via_table.average_precision[m] == pytest.approx(direct.average_precision[m], rel=1e-12)
        assert via_table.min_average_precision[m] == pytest.approx(direct.min_average_precision[m], rel=1e-12)
    assert "AUPRG" in str(ev) and "min AP" in str(ev)


def test_normalized_ap_of_arrays_is_the_scalar_function_element_by_element(rng):
    """The sliced results' vectorised normalisation gives the scalar function's floats, NaN cases included."""
    from precall._core.evaluation import normalized_average_precisions

    low = np.concatenate([rng.random(200) * 0.5, [0.1, np.nan, 1.0, 0.999999]])
    ap = np.concatenate([low[:200] + rng.random(200) * (1 - low[:200]), [np.nan, 0.3, 1.0, 1.0]])  # AP >= min
    got = normalized_average_precisions(ap, low)
    want = np.array([precall.normalized_average_precision(a, b) for a, b in zip(ap, low)])
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("ap,low,error,match", [
    ([0.5], 0.2, TypeError, r"`average_precision` must be a finite number in \[0, 1\] \(or NaN for an undefined AP\); "
                            r"got \[0.5\]"),
    ("a", 0.2, TypeError, "`average_precision` must be a finite number"),
    (True, 0.2, TypeError, "`average_precision` must be a finite number"),
    (0.5, None, TypeError, "`min_ap` must be a finite number"),
    (1.5, 0.2, ValueError, r"`average_precision` must be a finite number in \[0, 1\].*got 1.5"),
    (0.5, -0.1, ValueError, r"`min_ap` must be a finite number in \[0, 1\].*got -0.1"),
    (0.5, float("inf"), ValueError, "`min_ap` must be a finite number"),
    (0.5, 0.6, ValueError, r"`average_precision` 0.5 is below `min_ap` 0.6: no ranking scores below its minimum"),
    (0.5, 1.0, ValueError, "is below `min_ap` 1"),
])
def test_normalized_ap_refuses_what_no_ranking_gives(ap, low, error, match):
    """It converted with float(): a list failed naming no argument, an AP of 1.5 gave 1.625 and an AP below
    its minimum -0.25. Now each argument is an AP in [0, 1] (NaN: undefined) and an AP below its minimum is
    refused (no ranking scores below it: another convention's or other counts' minimum)."""
    with pytest.raises(error, match=match):
        precall.normalized_average_precision(ap, low)


def test_normalized_ap_takes_nan_and_the_rounding_of_a_worst_ranking():
    assert math.isnan(precall.normalized_average_precision(float("nan"), 0.2))
    assert math.isnan(precall.normalized_average_precision(0.3, np.float64("nan")))
    assert math.isnan(precall.normalized_average_precision(1.0, 1.0))  # no negatives: every ranking is perfect
    assert precall.normalized_average_precision(np.float32(0.55), 0.1) == pytest.approx(0.5)
    worst = precall.evaluate([0, 0, 1, 1], [0.9, 0.8, 0.2, 0.1])  # the worst ranking: step AP = its minimum
    for m in METHODS:
        value = precall.normalized_average_precision(worst.average_precision[m], worst.min_average_precision[m])
        assert value == worst.normalized_average_precision[m] and value > -1e-12, m
    assert worst.normalized_average_precision["step"] == pytest.approx(0.0, abs=1e-12)
    assert precall.normalized_average_precision(0.5 - 1e-12, 0.5) == pytest.approx(0.0, abs=1e-11)


def test_interpolated_pr_from_roc_refuses_an_allocation_past_the_limit():
    """``interpolate`` adds a point per positive: ``n_pos=1e12`` tried to allocate 7.3 TiB (a MemoryError);
    it is refused before anything is allocated, naming the fix."""
    with pytest.raises(ValueError, match=r"interpolate would add 1e\+12 points .* rescale n_pos and n_neg"):
        precall.pr_from_roc([0, 1], [0, 1], n_pos=1e12, n_neg=3, interpolate=True)
    assert precall.pr_from_roc([0, 1], [0, 1], n_pos=60, n_neg=40, interpolate=True).precision.size == 61


def test_no_negative_zero_in_the_evaluation_text_and_prg_starts_at_recall_gain_zero():
    """``print(evaluate(...))`` showed ``AUPRG -0.000000`` (an AUPRG of -6.9e-17, a rounding of 0), and the
    PRG curve's first point, recall gain 0 by construction, was -2.2e-16."""
    y = [0, 0, 1, 0, 1, 1, 0, 1, 1, 1]
    s = [0.65, 0.1, 0.15, 0.43, 0.97, 0.24, 0.82, 0.7, 0.32, 0.84]
    assert "-0.000000" not in str(precall.evaluate(y, s))
    curve = precall.precision_recall_gain_curve(y, s)
    assert curve.recall_gain[0] == 0.0 and curve.recall_gain.min() >= 0.0
