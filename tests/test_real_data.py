"""Real public data sets (see <shared data>/README.md) against scikit-learn, computed
inside the test, and the loop oracles."""

from __future__ import annotations

import csv
import warnings

import numpy as np
import pytest
from sklearn import metrics as skm

import oracles
import precall

METHODS = oracles.METHODS
TOL = {m: 1e-11 for m in METHODS}
TOL["interpolated"] = 1e-7


def _read_csv(path):
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return {k: [r[k] for r in rows] for k in rows[0]}


@pytest.fixture(scope="module")
def two_class(shared_data_dir):
    path = shared_data_dir / "yardstick_two_class_example.csv"
    if not path.exists():
        pytest.skip(f"{path} not found")
    d = _read_csv(path)
    return {
        "truth": np.asarray(d["truth"]),
        "Class1": np.asarray(d["Class1"], dtype=float),
        "Class2": np.asarray(d["Class2"], dtype=float),
        "case_weight": np.asarray(d["case_weight"], dtype=float),
    }


@pytest.fixture(scope="module")
def asah(shared_data_dir):
    path = shared_data_dir / "pROC_aSAH.csv"
    if not path.exists():
        pytest.skip(f"{path} not found")
    d = _read_csv(path)
    out = {"outcome": np.asarray(d["outcome"])}
    out["s100b"] = np.asarray(d["s100b"], dtype=float)
    out["ndka"] = np.asarray(d["ndka"], dtype=float)
    out["wfns"] = np.asarray(d["wfns"], dtype=np.int64)
    return out


def _curves_equal(ours, theirs, exact):
    for a, b in zip(ours, theirs):
        if exact:
            np.testing.assert_array_equal(np.asarray(a), b)
        else:
            np.testing.assert_allclose(np.asarray(a), b, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------ yardstick
def test_two_class_shape(two_class):
    assert len(two_class["truth"]) == 500
    assert set(two_class["truth"]) == {"Class1", "Class2"}


@pytest.mark.parametrize("weighted", [False, True])
def test_two_class_average_precision(two_class, weighted):
    y, s = two_class["truth"], two_class["Class1"]
    w = two_class["case_weight"] if weighted else None
    got = precall.average_precision(y, s, pos_label="Class1", sample_weight=w)
    exp = skm.average_precision_score(y, s, pos_label="Class1", sample_weight=w)
    assert got == pytest.approx(exp, rel=1e-12)
    p, r, _ = skm.precision_recall_curve(y, s, pos_label="Class1", sample_weight=w)
    got_t = precall.average_precision(y, s, pos_label="Class1", sample_weight=w, method="trapezoid")
    assert got_t == pytest.approx(skm.auc(r, p), rel=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ties", ["group", "stable"])
def test_two_class_every_method_vs_oracle(two_class, weighted, ties):
    y = two_class["truth"] == "Class1"
    s = two_class["Class1"]
    w = two_class["case_weight"] if weighted else None
    pts = oracles.operating_points(y.astype(int), s, w, ties=ties)
    for m in METHODS:
        got = precall.average_precision(
            two_class["truth"], s, pos_label="Class1", sample_weight=w, method=m, ties=ties
        )
        if m in ("voc2007", "coco"):
            exp = oracles._AP[m](pts, grid="reference")
        else:
            exp = oracles._AP[m](pts)
        assert got == pytest.approx(exp, abs=TOL[m]), m


@pytest.mark.parametrize("weighted", [False, True])
def test_two_class_roc_auc(two_class, weighted):
    y, s = two_class["truth"], two_class["Class1"]
    w = two_class["case_weight"] if weighted else None
    exp = skm.roc_auc_score(y == "Class1", s, sample_weight=w)
    got = precall.roc_auc(y, s, pos_label="Class1", sample_weight=w)
    assert got == pytest.approx(exp, rel=1e-12)
    assert got == pytest.approx(oracles.roc_auc_pairwise(y == "Class1", s, w), rel=1e-12)
    if not weighted:
        # yardstick's documented value: roc_auc(two_class_example, truth, Class1) = 0.939
        assert round(got, 3) == 0.939
    # pos_label=None: the greater label ("Class2") is positive, as roc_auc_score
    got2 = precall.roc_auc(y, two_class["Class2"], sample_weight=w)
    assert got2 == pytest.approx(skm.roc_auc_score(y, two_class["Class2"], sample_weight=w), rel=1e-12)
    for max_fpr in (0.1, 0.5):
        assert precall.roc_auc(y, s, pos_label="Class1", sample_weight=w, max_fpr=max_fpr) == pytest.approx(
            skm.roc_auc_score(y == "Class1", s, sample_weight=w, max_fpr=max_fpr), rel=1e-12
        )


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("drop", [False, True])
def test_two_class_curves(two_class, weighted, drop):
    y, s = two_class["truth"], two_class["Class1"]
    w = two_class["case_weight"] if weighted else None
    kw = dict(pos_label="Class1", sample_weight=w, drop_intermediate=drop)
    # unweighted curves must be identical; weighted ones agree to rounding
    _curves_equal(precall.precision_recall_curve(y, s, **kw), skm.precision_recall_curve(y, s, **kw), not weighted)
    _curves_equal(precall.roc_curve(y, s, **kw), skm.roc_curve(y, s, **kw), not weighted)
    _curves_equal(precall.det_curve(y, s, **kw), skm.det_curve(y, s, **kw), not weighted)


@pytest.mark.parametrize("weighted", [False, True])
def test_two_class_evaluate(two_class, weighted):
    y, s = two_class["truth"], two_class["Class1"]
    w = two_class["case_weight"] if weighted else None
    ev = precall.evaluate(y, s, pos_label="Class1", sample_weight=w)
    assert ev.average_precision["step"] == pytest.approx(
        skm.average_precision_score(y, s, pos_label="Class1", sample_weight=w), rel=1e-12
    )
    assert ev.roc_auc == pytest.approx(skm.roc_auc_score(y == "Class1", s, sample_weight=w), rel=1e-12)
    ww = np.ones(len(y)) if w is None else w
    assert ev.n_pos == pytest.approx(ww[y == "Class1"].sum(), rel=1e-12)
    assert ev.n_neg == pytest.approx(ww[y != "Class1"].sum(), rel=1e-12)
    assert ev.n_samples == 500
    # best F1 by brute force over every threshold
    pos = y == "Class1"
    best = 0.0
    for t in np.unique(s):
        pred = s >= t
        tp = ww[pred & pos].sum()
        fp = ww[pred & ~pos].sum()
        fn = ww[~pred & pos].sum()
        best = max(best, 2 * tp / (2 * tp + fp + fn))
    assert ev.best_f1.f1 == pytest.approx(best, rel=1e-12)


# ------------------------------------------------------------------ pROC aSAH
# pROC's documented AUCs for aSAH (roc(aSAH$outcome, aSAH$<marker>), "Poor" is the case level)
PROC_AUC = {"s100b": 0.7314, "ndka": 0.6120, "wfns": 0.8237}


@pytest.mark.parametrize("marker", ["s100b", "ndka", "wfns"])
def test_asah_roc_auc(asah, marker):
    y, s = asah["outcome"], asah[marker]
    got = precall.roc_auc(y, s, pos_label="Poor")
    assert got == pytest.approx(skm.roc_auc_score(y == "Poor", s), rel=1e-12)
    assert got == pytest.approx(oracles.roc_auc_pairwise(y == "Poor", s), rel=1e-12)
    assert round(got, 4) == PROC_AUC[marker]
    # "Poor" > "Good", so pos_label=None gives the same
    assert precall.roc_auc(y, s) == pytest.approx(got, rel=1e-15)
    for max_fpr in (0.1, 0.5, 0.9):
        assert precall.roc_auc(y, s, pos_label="Poor", max_fpr=max_fpr) == pytest.approx(
            skm.roc_auc_score(y == "Poor", s, max_fpr=max_fpr), rel=1e-12
        )


@pytest.mark.parametrize("marker", ["s100b", "ndka", "wfns"])
@pytest.mark.parametrize("ties", ["group", "stable"])
def test_asah_average_precision(asah, marker, ties):
    y, s = asah["outcome"], asah[marker]
    if ties == "group":
        got = precall.average_precision(y, s, pos_label="Poor")
        assert got == pytest.approx(skm.average_precision_score(y, s, pos_label="Poor"), rel=1e-12)
        p, r, _ = skm.precision_recall_curve(y, s, pos_label="Poor")
        assert precall.average_precision(y, s, pos_label="Poor", method="trapezoid") == pytest.approx(
            skm.auc(r, p), rel=1e-12
        )
    yb = (y == "Poor").astype(int)
    for m in METHODS:
        got = precall.average_precision(y, s, pos_label="Poor", method=m, ties=ties)
        assert got == pytest.approx(oracles.average_precision(yb, s, m, ties), abs=TOL[m]), m
        for grid in ("reference", "exact"):
            if m in ("voc2007", "coco"):
                got = precall.average_precision(y, s, pos_label="Poor", method=m, ties=ties, recall_grid=grid)
                exp = oracles.average_precision(yb, s, m, ties, recall_grid=grid)
                assert got == pytest.approx(exp, abs=1e-12), (m, grid)


@pytest.mark.parametrize("marker", ["s100b", "ndka", "wfns"])
def test_asah_read_with_pandas(shared_data_dir, marker):
    """The columns exactly as pandas.read_csv returns them (string dtype labels)."""
    pd = pytest.importorskip("pandas")
    df = pd.read_csv(shared_data_dir / "pROC_aSAH.csv")
    exp = skm.roc_auc_score(df["outcome"] == "Poor", df[marker])
    assert precall.roc_auc(df["outcome"], df[marker], pos_label="Poor") == pytest.approx(exp, rel=1e-12)
    assert precall.roc_auc(df["outcome"], df[marker]) == pytest.approx(exp, rel=1e-12)
    assert precall.average_precision(df["outcome"], df[marker], pos_label="Poor") == pytest.approx(
        skm.average_precision_score(df["outcome"], df[marker], pos_label="Poor"), rel=1e-12
    )
    # a filtered frame keeps its original (non-contiguous) index
    sub = df[df["age"] > 50]
    assert precall.roc_auc(sub["outcome"], sub[marker], pos_label="Poor") == pytest.approx(
        skm.roc_auc_score(sub["outcome"] == "Poor", sub[marker]), rel=1e-12
    )


def test_two_class_read_with_pandas(shared_data_dir):
    pd = pytest.importorskip("pandas")
    df = pd.read_csv(shared_data_dir / "yardstick_two_class_example.csv")
    y, s, w = df["truth"], df["Class1"], df["case_weight"]
    assert precall.average_precision(y, s, pos_label="Class1", sample_weight=w) == pytest.approx(
        skm.average_precision_score(y, s, pos_label="Class1", sample_weight=w), rel=1e-12
    )
    assert precall.roc_auc(y, df["Class2"], sample_weight=w) == pytest.approx(
        skm.roc_auc_score(y, df["Class2"], sample_weight=w), rel=1e-12
    )


@pytest.mark.parametrize("marker", ["s100b", "ndka", "wfns"])
@pytest.mark.parametrize("drop", [False, True])
def test_asah_curves(asah, marker, drop):
    y, s = asah["outcome"], asah[marker]
    kw = dict(pos_label="Poor", drop_intermediate=drop)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _curves_equal(precall.precision_recall_curve(y, s, **kw), skm.precision_recall_curve(y, s, **kw), True)
        _curves_equal(precall.roc_curve(y, s, **kw), skm.roc_curve(y, s, **kw), True)
        _curves_equal(precall.det_curve(y, s, **kw), skm.det_curve(y, s, **kw), True)
    # integer marker keeps its dtype in the PR thresholds, as in sklearn
    pr = precall.precision_recall_curve(y, s, pos_label="Poor")
    assert pr.thresholds.dtype == skm.precision_recall_curve(y, s, pos_label="Poor")[2].dtype


def test_asah_table(asah):
    y, s = asah["outcome"], asah["wfns"]
    t = precall.threshold_table(y, s, pos_label="Poor")
    # wfns takes 5 values -> 5 thresholds
    np.testing.assert_array_equal(t.thresholds, [5, 4, 3, 2, 1])
    pts = oracles.operating_points((y == "Poor").astype(int), s)
    np.testing.assert_array_equal(t.tp, pts.tp)
    np.testing.assert_array_equal(t.fp, pts.fp)
    assert t.n_pos == 41 and t.n_neg == 72
