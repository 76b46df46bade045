"""precall's curves must be scikit-learn's curves, array for array."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

import oracles
import precall

CURVES = {
    "pr": (precall.precision_recall_curve, skm.precision_recall_curve, False),
    "roc": (precall.roc_curve, skm.roc_curve, True),
    "det": (precall.det_curve, skm.det_curve, False),
}


def _assert_curves_equal(ours, theirs, *, exact=True, check_threshold_dtype=True):
    assert len(ours) == 3
    for name, a, b in zip(("0", "1", "thresholds"), ours, theirs):
        a = np.asarray(a)
        b = np.asarray(b)
        assert a.shape == b.shape, (name, a, b)
        if exact:
            np.testing.assert_array_equal(a, b, err_msg=f"array {name}")
        else:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14, err_msg=f"array {name}")
    if check_threshold_dtype:
        assert np.asarray(ours[2]).dtype == np.asarray(theirs[2]).dtype, (
            np.asarray(ours[2]).dtype,
            np.asarray(theirs[2]).dtype,
        )


def _both(kind, y, s, **kw):
    ours_f, theirs_f, _ = CURVES[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = theirs_f(y, s, **kw)
        ours = ours_f(y, s, **kw)
    return ours, theirs


def _both_classes(rng, n):
    y = rng.integers(0, 2, n)
    if n >= 2:
        y[rng.choice(n, 2, replace=False)] = [0, 1]
    return y


# ---------------------------------------------------------------- basic shape
def test_seed3_pr_curve_values():
    sd = oracles.SEEDS[3]
    p, r, t = precall.precision_recall_curve(sd["labels"], sd["scores"])
    np.testing.assert_allclose(p, sd["pr_precision"], rtol=1e-15)
    np.testing.assert_allclose(r, sd["pr_recall"], rtol=1e-15)
    np.testing.assert_array_equal(t, [0.1, 0.2, 0.3, 0.6, 0.7, 0.8, 0.9])


def test_named_tuples():
    y = [0, 1, 1, 0, 1, 0]
    s = [0.1, 0.9, 0.4, 0.4, 0.3, 0.8]
    pr = precall.precision_recall_curve(y, s)
    precision, recall, thresholds = pr
    assert pr.precision is pr[0] and pr.recall is pr[1] and pr.thresholds is pr[2]
    np.testing.assert_array_equal(precision, pr.precision)
    assert isinstance(pr, tuple) and len(pr) == 3
    assert type(pr).__name__ == "PrecisionRecallCurve"
    roc = precall.roc_curve(y, s)
    fpr, tpr, th = roc
    np.testing.assert_array_equal(roc.fpr, fpr)
    np.testing.assert_array_equal(roc.tpr, tpr)
    np.testing.assert_array_equal(roc.thresholds, th)
    assert type(roc).__name__ == "RocCurve"
    det = precall.det_curve(y, s)
    fpr2, fnr, th2 = det
    np.testing.assert_array_equal(det.fpr, fpr2)
    np.testing.assert_array_equal(det.fnr, fnr)
    np.testing.assert_array_equal(det.thresholds, th2)
    assert type(det).__name__ == "DetCurve"
    # precall.PrecisionRecallCurve etc. are public names
    assert isinstance(pr, precall.PrecisionRecallCurve)
    assert isinstance(roc, precall.RocCurve)
    assert isinstance(det, precall.DetCurve)


def test_default_drop_intermediate_matches_sklearn_defaults(rng):
    y = _both_classes(rng, 80)
    s = np.round(rng.random(80), 1)
    for kind, (ours_f, theirs_f, _) in CURVES.items():
        _assert_curves_equal(ours_f(y, s), theirs_f(y, s))


# ------------------------------------------------------------ random inputs
@pytest.mark.parametrize("kind", list(CURVES))
@pytest.mark.parametrize("drop_intermediate", [False, True])
@pytest.mark.parametrize("decimals", [None, 2, 1])
def test_random_unweighted(rng, kind, drop_intermediate, decimals):
    for n in (2, 3, 5, 10, 50, 300):
        for _ in range(3):
            y = _both_classes(rng, n)
            s = rng.random(n)
            if decimals is not None:
                s = np.round(s, decimals)
            ours, theirs = _both(kind, y, s, drop_intermediate=drop_intermediate)
            _assert_curves_equal(ours, theirs)


@pytest.mark.parametrize("kind", list(CURVES))
@pytest.mark.parametrize("drop_intermediate", [False, True])
def test_random_dyadic_weights_exact(rng, kind, drop_intermediate):
    """Weights that are multiples of 1/4 sum exactly, so equality must be exact."""
    for n in (2, 3, 6, 25, 120):
        for _ in range(3):
            y = _both_classes(rng, n)
            s = np.round(rng.random(n), 1)
            w = rng.integers(0, 9, n) / 4.0  # includes zero weights
            if w[y == 1].sum() == 0 or w[y == 0].sum() == 0:
                w[:] = w + 0.25
            ours, theirs = _both(kind, y, s, sample_weight=w, drop_intermediate=drop_intermediate)
            _assert_curves_equal(ours, theirs)


@pytest.mark.parametrize("kind", list(CURVES))
@pytest.mark.parametrize("drop_intermediate", [False, True])
def test_random_float_weights(rng, kind, drop_intermediate):
    for n in (2, 7, 40, 250):
        for _ in range(3):
            y = _both_classes(rng, n)
            s = np.round(rng.random(n), 2)
            w = rng.exponential(size=n)
            w[rng.random(n) < 0.2] = 0.0
            if w[y == 1].sum() == 0 or w[y == 0].sum() == 0:
                w = w + 0.5
            ours, theirs = _both(kind, y, s, sample_weight=w, drop_intermediate=drop_intermediate)
            _assert_curves_equal(ours, theirs, exact=False)


@pytest.mark.parametrize("kind", list(CURVES))
@pytest.mark.parametrize("drop_intermediate", [False, True])
@pytest.mark.parametrize("n", [2, 3])
def test_tiny_inputs_every_labelling(kind, drop_intermediate, n):
    score_sets = [np.arange(n, dtype=float), np.zeros(n), np.array([0.5] * (n - 1) + [0.1])]
    for labels in itertools.product([0, 1], repeat=n):
        if len(set(labels)) < 2:
            continue
        for s in score_sets:
            for perm in itertools.permutations(range(n)):
                ss = s[list(perm)]
                ours, theirs = _both(kind, list(labels), ss, drop_intermediate=drop_intermediate)
                _assert_curves_equal(ours, theirs)


@pytest.mark.parametrize("drop_intermediate", [False, True])
def test_single_sample_pr_curve(drop_intermediate):
    ours, theirs = _both("pr", [1], [0.3], drop_intermediate=drop_intermediate)
    _assert_curves_equal(ours, theirs)


@pytest.mark.parametrize(
    "make_labels,pos_label",
    [
        (lambda y: y.astype(bool), None),
        (lambda y: y.astype(bool), True),
        (lambda y: y.astype(bool), False),
        (lambda y: y.astype(np.int32), None),
        (lambda y: y.astype(float), None),
        (lambda y: y.astype(float), 1.0),
        (lambda y: np.where(y == 1, 1, -1), None),
        (lambda y: np.where(y == 1, 1, -1), -1),
        (lambda y: np.where(y == 1, "pos", "neg"), "pos"),
        (lambda y: np.where(y == 1, "pos", "neg"), "neg"),
        (lambda y: np.where(y == 1, "pos", "neg").astype(object), "pos"),
        (lambda y: np.where(y == 1, 5, 2), 2),
        (lambda y: list(np.where(y == 1, "b", "a")), "b"),
    ],
)
@pytest.mark.parametrize("kind", list(CURVES))
def test_label_types_and_pos_label(rng, make_labels, pos_label, kind):
    y = _both_classes(rng, 60)
    s = np.round(rng.random(60), 1)
    labels = make_labels(y)
    for drop in (False, True):
        ours, theirs = _both(kind, labels, s, pos_label=pos_label, drop_intermediate=drop)
        _assert_curves_equal(ours, theirs)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.float16])
@pytest.mark.parametrize("kind", list(CURVES))
def test_score_dtypes(rng, dtype, kind):
    y = _both_classes(rng, 50)
    s = rng.integers(-4, 5, 50).astype(dtype)
    ours, theirs = _both(kind, y, s)
    _assert_curves_equal(ours, theirs)


@pytest.mark.parametrize("kind", list(CURVES))
def test_list_inputs(kind):
    y = [0, 1, 1, 0, 1, 0, 0]
    s = [0.5, 0.9, 0.5, 0.2, 0.1, 0.7, 0.5]
    ours, theirs = _both(kind, y, s)
    _assert_curves_equal(ours, theirs)


# ------------------------------------------------- degenerate (one class)
def test_pr_curve_no_positives_matches_sklearn():
    y = [0, 0, 0]
    s = [0.2, 0.5, 0.5]
    ours, theirs = _both("pr", y, s)
    _assert_curves_equal(ours, theirs)


@pytest.mark.parametrize("y", [[0, 0, 0], [1, 1, 1]])
def test_roc_curve_one_class_matches_sklearn(y):
    s = [0.2, 0.5, 0.5]
    ours, theirs = _both("roc", y, s)
    _assert_curves_equal(ours, theirs)


# ------------------------------------------------------------- hypothesis
@st.composite
def _binary_inputs(draw):
    n = draw(st.integers(2, 40))
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    if len(set(y)) < 2:
        y[0], y[-1] = 0, 1
    s = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    weighted = draw(st.booleans())
    w = None
    if weighted:
        w = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
        w = np.asarray(w, dtype=float) / 2.0
        if w[np.asarray(y) == 1].sum() == 0 or w[np.asarray(y) == 0].sum() == 0:
            w = w + 0.5
    return np.asarray(y), np.asarray(s, dtype=float) / 4.0, w


@settings(deadline=None)
@given(data=_binary_inputs(), kind=st.sampled_from(list(CURVES)), drop=st.booleans())
def test_hypothesis_matches_sklearn(data, kind, drop):
    y, s, w = data
    ours, theirs = _both(kind, y, s, sample_weight=w, drop_intermediate=drop)
    _assert_curves_equal(ours, theirs)


# ----------------------------------------------- table methods == functions
@pytest.mark.parametrize("kind", list(CURVES))
def test_table_methods_equal_functions(rng, kind):
    y = _both_classes(rng, 70)
    s = np.round(rng.random(70), 1)
    w = rng.integers(1, 5, 70).astype(float)
    table = precall.threshold_table(y, s, sample_weight=w)
    method = {"pr": "precision_recall_curve", "roc": "roc_curve", "det": "det_curve"}[kind]
    ours_f = CURVES[kind][0]
    for drop in (False, True):
        a = getattr(table, method)(drop_intermediate=drop)
        b = ours_f(y, s, sample_weight=w, drop_intermediate=drop)
        _assert_curves_equal(a, b)
    # defaults too
    _assert_curves_equal(getattr(table, method)(), ours_f(y, s, sample_weight=w))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64, np.int32, np.int64])
@pytest.mark.parametrize("kind", list(CURVES))
@pytest.mark.parametrize("weighted", [False, True])
def test_integer_scores_full_range(rng, dtype, kind, weighted):
    info = np.iinfo(dtype)
    s = rng.integers(info.min, info.max, 80, dtype=dtype, endpoint=True)
    s = np.concatenate([s, s[:30]])
    y = _both_classes(rng, s.size)
    w = rng.integers(1, 4, s.size).astype(float) if weighted else None
    for drop in (False, True):
        ours, theirs = _both(kind, y, s, sample_weight=w, drop_intermediate=drop)
        _assert_curves_equal(ours, theirs)
