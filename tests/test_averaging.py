"""Multi-class and multi-label ``average_precision`` / ``roc_auc``: every averaging mode.

Expected values come from scikit-learn (computed here) or from a loop over
precall's *binary* functions (1-D input), never from the multi-class code path
under test.  Random cases are seeded by their parameters so that a failure
names the exact input that produced it.
"""

from __future__ import annotations

import csv
import warnings

import numpy as np
import pytest
from sklearn import metrics as skm

import precall

RTOL = 1e-12
ATOL = 1e-12
TIES = ("group", "stable")
METHODS = tuple(precall.AP_METHODS)

AP_MC_AVERAGES = ("macro", "weighted", "micro", None)  # multi-class AP
AP_ML_AVERAGES = ("macro", "weighted", "micro", "samples", None)  # multi-label AP
ROC_MC_AVERAGES = ("macro", "weighted", "micro", None)  # multi-class one-vs-rest
ROC_ML_AVERAGES = ("macro", "weighted", "micro", "samples", None)  # multi-label

INT_POOL = np.array([-3, 0, 2, 5, 11, 40, 100])
STR_POOL = np.array(["zeta", "alpha", "mu", "beta", "omega", "delta", "kappa"])


# --------------------------------------------------------------------------- helpers


def _assert_result(got, expected, average, k, context=""):
    """``got`` is a float (or a (k,) array for average=None) equal to ``expected``."""
    if average is None:
        assert isinstance(got, np.ndarray), f"{context}: average=None must give an ndarray, got {type(got)}"
        assert got.shape == (k,), f"{context}: expected shape ({k},), got {got.shape}"
    else:
        assert np.ndim(got) == 0, f"{context}: average={average!r} must give a scalar, got {got!r}"
        assert isinstance(got, (float, np.floating)), f"{context}: not a float: {type(got)}"
    np.testing.assert_allclose(
        np.asarray(got, dtype=float),
        np.asarray(expected, dtype=float),
        rtol=RTOL,
        atol=ATOL,
        equal_nan=True,
        err_msg=f"{context} average={average!r}",
    )


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _indicator(y, classes):
    return (np.asarray(y)[:, None] == np.asarray(classes)[None, :]).astype(int)


def _softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def multiclass_case(seed, *, probabilities=False, n_range=(5, 201)):
    """Random multi-class input: (y, y_score, sample_weight, classes).

    seed fixes k = 2 + seed % 5 classes, the tie mode (seed // 5) % 3 (none, one
    decimal, two decimals / coarse compositions), the label kind (seed // 15) % 2
    (integers, strings) and whether there are weights ((seed // 30) % 2, else
    random).  Every class is present; column c of y_score is classes[c] (sorted).
    With ``probabilities`` the rows sum to 1 (scikit-learn's roc_auc needs that);
    ties then come from multinomial compositions count / T.
    """
    rng = np.random.default_rng(1000 + seed)
    k = 2 + seed % 5
    tie = (seed // 5) % 3
    kind = (seed // 15) % 2
    weighted = bool((seed // 30) % 2) if seed < 60 else bool(rng.random() < 0.5)
    n = int(rng.integers(max(n_range[0], k), n_range[1]))
    pool = INT_POOL if kind == 0 else STR_POOL
    names = rng.permutation(pool)[:k]
    codes = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    rng.shuffle(codes)
    y = names[codes]
    classes = np.unique(names)
    onehot = _indicator(y, classes)
    if probabilities:
        p = _softmax(rng.normal(size=(n, k)) + 1.2 * onehot)
        if tie:
            total = 10 if tie == 1 else 40
            s = np.array([rng.multinomial(total, row) for row in p]) / total
        else:
            s = p
    else:
        s = rng.random((n, k)) + 0.6 * onehot * rng.random((n, 1))
        if tie:
            s = np.round(s, tie)
    w = rng.uniform(0.1, 5.0, n) if weighted else None
    return y, s, w, classes


def multilabel_case(seed, *, n_range=(5, 121)):
    """Random multi-label indicator input: (Y, y_score, sample_weight).

    k = 2 + seed % 5 columns; special = (seed // 5) % 4: 0 nothing, 1 the first
    column has no positives, 2 the last column is all positives, 3 every row has
    at least one positive and one negative (so per-row ROC-AUC is defined);
    ties seed % 3 (none, one decimal, two decimals); weights when seed % 4 >= 2.
    """
    rng = np.random.default_rng(5000 + seed)
    k = 2 + seed % 5
    special = (seed // 5) % 4
    tie = seed % 3
    weighted = seed % 4 >= 2
    n = int(rng.integers(*n_range))
    prevalence = rng.uniform(0.05, 0.8, k)
    Y = (rng.random((n, k)) < prevalence).astype(int)
    if special == 1:
        Y[:, 0] = 0
    elif special == 2:
        Y[:, -1] = 1
    elif special == 3:
        for i in range(n):
            a, b = rng.choice(k, 2, replace=False)
            Y[i, a], Y[i, b] = 1, 0
    s = rng.random((n, k)) + 0.5 * Y * rng.random((n, 1))
    if tie:
        s = np.round(s, tie)
    w = rng.uniform(0.1, 5.0, n) if weighted else None
    return Y, s, w


# --------------------------------------------------------------------------- oracle


def _binary_ap(method, ties, recall_grid="reference"):
    def metric(y, s, w):
        return _quiet(
            precall.average_precision,
            np.asarray(y, dtype=int),
            np.asarray(s, dtype=float),
            method=method,
            ties=ties,
            sample_weight=w,
            recall_grid=recall_grid,
        )

    return metric


def _binary_roc(y, s, w):
    return _quiet(precall.roc_auc, np.asarray(y, dtype=int), np.asarray(s, dtype=float), sample_weight=w)


def oracle(metric, Y, S, w, average):
    """The averaging rules written out over a binary metric (one call per column/row)."""
    Y = np.asarray(Y, dtype=int)
    S = np.asarray(S, dtype=float)
    n, k = S.shape
    if average == "micro":
        return metric(Y.ravel(), S.ravel(), None if w is None else np.repeat(w, k))
    if average == "samples":
        per_row = np.array([metric(Y[i], S[i], None) for i in range(n)])
        return float(np.average(per_row, weights=w))
    per_class = np.array([metric(Y[:, c], S[:, c], w) for c in range(k)], dtype=float)
    if average is None:
        return per_class
    if average == "weighted":
        support = (Y * (1.0 if w is None else w[:, None])).sum(axis=0)
        if np.isclose(support.sum(), 0.0):
            return 0.0
        per_class = np.where(support == 0, 0.0, per_class)
        return float(np.average(per_class, weights=support))
    assert average == "macro"
    return float(np.mean(per_class))


# ------------------------------------------------- 1. multi-class parity with sklearn


@pytest.mark.parametrize("seed", range(60))
def test_multiclass_average_precision_matches_sklearn(seed):
    y, s, w, classes = multiclass_case(seed)
    k = classes.size
    for average in AP_MC_AVERAGES:
        if k >= 3:
            expected = _quiet(skm.average_precision_score, y, s, average=average, sample_weight=w)
            got = precall.average_precision(y, s, average=average, sample_weight=w)
        else:
            # scikit-learn reads two labels as binary; it binarises k >= 3 classes to
            # exactly this indicator matrix.  precall needs labels= to read two
            # columns with two labels as multi-class.
            expected = _quiet(
                skm.average_precision_score, _indicator(y, classes), s, average=average, sample_weight=w
            )
            got = precall.average_precision(y, s, average=average, sample_weight=w, labels=classes)
        _assert_result(got, expected, average, k, f"seed={seed} k={k}")


@pytest.mark.parametrize("seed", range(60))
def test_multiclass_roc_auc_ovr_matches_sklearn(seed):
    y, s, w, classes = multiclass_case(seed, probabilities=True)
    k = classes.size
    for average in ROC_MC_AVERAGES:
        if k >= 3:
            expected = _quiet(
                skm.roc_auc_score, y, s, multi_class="ovr", average=average, sample_weight=w
            )
            got = precall.roc_auc(y, s, multi_class="ovr", average=average, sample_weight=w)
        else:
            expected = _quiet(skm.roc_auc_score, _indicator(y, classes), s, average=average, sample_weight=w)
            got = precall.roc_auc(y, s, average=average, sample_weight=w, labels=classes)
        _assert_result(got, expected, average, k, f"seed={seed} k={k}")


@pytest.mark.parametrize("seed", range(12))
def test_multiclass_roc_auc_with_absent_labels_matches_sklearn(seed):
    """labels= naming classes absent from y_true: scikit-learn gives NaN for them."""
    rng = np.random.default_rng(300 + seed)
    k = 3 + seed % 4
    n = int(rng.integers(20, 120))
    classes = np.sort(rng.permutation(STR_POOL if seed % 2 else INT_POOL)[:k])
    absent = rng.choice(k, 1 + seed % 2, replace=False)
    present = np.setdiff1d(np.arange(k), absent)
    y = classes[rng.choice(present, n)]
    s = _softmax(rng.normal(size=(n, k)) + _indicator(y, classes))
    if seed % 3 == 0:
        s = np.array([rng.multinomial(20, row) for row in s]) / 20
    w = rng.uniform(0.1, 3.0, n) if seed % 4 >= 2 else None
    for average in ROC_MC_AVERAGES:
        expected = _quiet(
            skm.roc_auc_score, y, s, multi_class="ovr", average=average, sample_weight=w, labels=classes
        )
        got = _quiet(precall.roc_auc, y, s, average=average, sample_weight=w, labels=classes)
        _assert_result(got, expected, average, k, f"seed={seed} absent={classes[absent]}")


@pytest.mark.parametrize("seed", range(12))
def test_multiclass_average_precision_with_absent_labels(seed):
    """Absent classes (labels=) give AP 0 with a warning, counted as 0: sklearn on the indicator."""
    rng = np.random.default_rng(400 + seed)
    k = 3 + seed % 4
    n = int(rng.integers(20, 120))
    classes = np.sort(rng.permutation(STR_POOL if seed % 2 else INT_POOL)[:k])
    absent = rng.choice(k, 1 + seed % 2, replace=False)
    present = np.setdiff1d(np.arange(k), absent)
    y = classes[rng.choice(present, n)]
    s = np.round(rng.random((n, k)) + 0.5 * _indicator(y, classes), 1 + seed % 2)
    w = rng.uniform(0.1, 3.0, n) if seed % 4 >= 2 else None
    for average in AP_MC_AVERAGES:
        expected = _quiet(skm.average_precision_score, _indicator(y, classes), s, average=average, sample_weight=w)
        if average == "micro":  # pooled cells have positives: defined, no warning
            got = precall.average_precision(y, s, average=average, sample_weight=w, labels=classes)
        else:
            with pytest.warns(precall.UndefinedMetricWarning):
                got = precall.average_precision(y, s, average=average, sample_weight=w, labels=classes)
        _assert_result(got, expected, average, k, f"seed={seed} absent={classes[absent]}")
    per_class = _quiet(precall.average_precision, y, s, average=None, labels=classes)
    assert np.all(per_class[absent] == 0.0)
    assert _quiet(precall.average_precision, y, s, labels=classes) == pytest.approx(
        per_class.sum() / k, rel=1e-12
    )


# ------------------------------------------------- 2. multi-label parity with sklearn


@pytest.mark.parametrize("seed", range(40))
def test_multilabel_average_precision_matches_sklearn(seed):
    Y, s, w = multilabel_case(seed)
    k = Y.shape[1]
    for average in AP_ML_AVERAGES:
        expected = _quiet(skm.average_precision_score, Y, s, average=average, sample_weight=w)
        got = _quiet(precall.average_precision, Y, s, average=average, sample_weight=w)
        _assert_result(got, expected, average, k, f"seed={seed} k={k}")


@pytest.mark.parametrize("seed", range(40))
def test_multilabel_roc_auc_matches_sklearn(seed):
    Y, s, w = multilabel_case(seed)
    k = Y.shape[1]
    for average in ROC_ML_AVERAGES:
        expected = _quiet(skm.roc_auc_score, Y, s, average=average, sample_weight=w)
        got = _quiet(precall.roc_auc, Y, s, average=average, sample_weight=w)
        _assert_result(got, expected, average, k, f"seed={seed} k={k}")


def test_multilabel_bool_indicator_matches_int():
    Y, s, w = multilabel_case(17)
    for average in AP_ML_AVERAGES:
        a = _quiet(precall.average_precision, Y.astype(bool), s, average=average, sample_weight=w)
        b = _quiet(skm.average_precision_score, Y, s, average=average, sample_weight=w)
        _assert_result(a, b, average, Y.shape[1], "bool indicator")


def test_multilabel_column_without_positives_warns_and_counts_as_zero():
    Y = np.array([[1, 0, 1], [0, 0, 1], [1, 0, 0], [0, 0, 1], [1, 0, 0]])
    s = np.array([[0.9, 0.1, 0.3], [0.2, 0.8, 0.7], [0.6, 0.5, 0.2], [0.4, 0.3, 0.9], [0.1, 0.7, 0.4]])
    with pytest.warns(precall.UndefinedMetricWarning):
        per_class = precall.average_precision(Y, s, average=None)
    assert per_class[1] == 0.0
    expected = _quiet(skm.average_precision_score, Y, s, average=None)
    np.testing.assert_allclose(per_class, expected, rtol=RTOL, atol=ATOL)
    with pytest.warns(precall.UndefinedMetricWarning):
        macro = precall.average_precision(Y, s)
    assert macro == pytest.approx((per_class[0] + per_class[2]) / 3, rel=1e-12)


def test_multilabel_roc_samples_zero_weight_row_without_negatives():
    """sklearn forces a zero-weight sample's (NaN) score to 0 before averaging."""
    Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 1], [0, 0, 1], [1, 0, 0]])
    s = np.array([[0.9, 0.1, 0.3], [0.2, 0.8, 0.7], [0.6, 0.5, 0.2], [0.4, 0.3, 0.9], [0.1, 0.7, 0.4]])
    w = np.array([1.0, 2.0, 0.0, 0.5, 1.5])
    for average in ROC_ML_AVERAGES:
        expected = _quiet(skm.roc_auc_score, Y, s, average=average, sample_weight=w)
        got = _quiet(precall.roc_auc, Y, s, average=average, sample_weight=w)
        _assert_result(got, expected, average, 3, "zero-weight row")
    assert np.isfinite(_quiet(precall.roc_auc, Y, s, average="samples", sample_weight=w))


# ------------------------------- 3. every AP method x ties x average == a binary loop


def _loop_case(kind, weighted, seed):
    rng = np.random.default_rng(seed)
    if kind == "multiclass":
        y, s, _, classes = multiclass_case(seed % 60, n_range=(10, 80))
        Y = _indicator(y, classes)
        labels = classes if classes.size == 2 else None
    else:
        Y, s, _ = multilabel_case(seed % 40, n_range=(10, 80))
        y, labels = Y, None
    w = None
    if weighted:
        w = rng.uniform(0.1, 4.0, Y.shape[0])
        w[rng.random(Y.shape[0]) < 0.1] = 0.0  # zero-weight samples add nothing
    return y, Y, s, w, labels


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("kind", ["multiclass", "multilabel"])
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("method", METHODS)
def test_every_method_and_average_equals_binary_loop(method, ties, kind, weighted):
    metric = _binary_ap(method, ties)
    averages = AP_MC_AVERAGES if kind == "multiclass" else AP_ML_AVERAGES
    for seed in (7, 23, 41, 58):
        y, Y, s, w, labels = _loop_case(kind, weighted, seed + (100 if weighted else 0))
        for average in averages:
            expected = oracle(metric, Y, s, w, average)
            got = _quiet(
                precall.average_precision,
                y, s, method=method, ties=ties, average=average, sample_weight=w, labels=labels,
            )
            _assert_result(got, expected, average, Y.shape[1], f"{method}/{ties}/{kind} seed={seed}")


@pytest.mark.parametrize("method", ["voc2007", "coco"])
@pytest.mark.parametrize("kind", ["multiclass", "multilabel"])
def test_exact_recall_grid_equals_binary_loop(method, kind):
    metric = _binary_ap(method, "group", recall_grid="exact")
    averages = AP_MC_AVERAGES if kind == "multiclass" else AP_ML_AVERAGES
    for seed in (3, 19, 44):
        y, Y, s, w, labels = _loop_case(kind, seed % 2 == 1, seed)
        for average in averages:
            expected = oracle(metric, Y, s, w, average)
            got = _quiet(
                precall.average_precision,
                y, s, method=method, average=average, sample_weight=w, labels=labels, recall_grid="exact",
            )
            _assert_result(got, expected, average, Y.shape[1], f"{method}/exact/{kind} seed={seed}")


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("kind", ["multiclass", "multilabel"])
def test_roc_auc_every_average_equals_binary_loop(kind, weighted):
    averages = ROC_MC_AVERAGES if kind == "multiclass" else ROC_ML_AVERAGES
    for seed in (5, 29, 47, 64):
        y, Y, s, w, labels = _loop_case(kind, weighted, seed)
        for average in averages:
            expected = oracle(_binary_roc, Y, s, w, average)
            got = _quiet(precall.roc_auc, y, s, average=average, sample_weight=w, labels=labels)
            _assert_result(got, expected, average, Y.shape[1], f"roc/{kind} seed={seed}")


# ----------------------------------------------------------------- 4. labels= order


@pytest.mark.parametrize("seed", [2, 8, 17, 26, 33, 49])
def test_labels_fix_the_class_order_multiclass(seed):
    y, s, w, classes = multiclass_case(seed)
    k = classes.size
    base_ap = precall.average_precision(y, s, average=None, sample_weight=w, labels=classes)
    rev_ap = precall.average_precision(y, s[:, ::-1], average=None, sample_weight=w, labels=classes[::-1])
    np.testing.assert_allclose(rev_ap, base_ap[::-1], rtol=RTOL, atol=ATOL)
    # against scikit-learn, in an arbitrary order
    perm = np.random.default_rng(seed).permutation(k)
    while k > 1 and np.array_equal(perm, np.arange(k)):
        perm = perm[::-1]
    expected = _quiet(skm.average_precision_score, _indicator(y, classes), s, average=None, sample_weight=w)
    got = precall.average_precision(y, s[:, perm], average=None, sample_weight=w, labels=classes[perm])
    np.testing.assert_allclose(got, expected[perm], rtol=RTOL, atol=ATOL)
    for average in ("macro", "weighted", "micro"):
        a = precall.average_precision(y, s[:, perm], average=average, sample_weight=w, labels=classes[perm])
        b = _quiet(skm.average_precision_score, _indicator(y, classes), s, average=average, sample_weight=w)
        assert a == pytest.approx(b, rel=RTOL, abs=ATOL), average

    _, p, _, _ = multiclass_case(seed, probabilities=True)
    # same seed: same y and classes (the scores differ; keep the weights w from above)
    roc_base = precall.roc_auc(y, p, average=None, sample_weight=w, labels=classes)
    roc_rev = precall.roc_auc(y, p[:, ::-1], average=None, sample_weight=w, labels=classes[::-1])
    np.testing.assert_allclose(roc_rev, roc_base[::-1], rtol=RTOL, atol=ATOL)
    expected = _quiet(skm.roc_auc_score, _indicator(y, classes), p, average=None, sample_weight=w)
    got = precall.roc_auc(y, p[:, perm], average=None, sample_weight=w, labels=classes[perm])
    np.testing.assert_allclose(got, expected[perm], rtol=RTOL, atol=ATOL)


def test_labels_is_not_sorted_for_the_caller():
    """Reversed labels with the columns left in place: each column now names the other class."""
    y = np.array(["b", "a", "c", "a", "b", "c", "a", "b"])
    s = np.array(
        [[0.2, 0.7, 0.1], [0.8, 0.1, 0.1], [0.1, 0.2, 0.7], [0.5, 0.4, 0.1],
         [0.3, 0.3, 0.4], [0.2, 0.2, 0.6], [0.6, 0.3, 0.1], [0.1, 0.8, 0.1]]
    )
    default = precall.average_precision(y, s, average=None)
    np.testing.assert_allclose(default, skm.average_precision_score(y, s, average=None), rtol=RTOL)
    rev = precall.average_precision(y, s, average=None, labels=["c", "b", "a"])
    expected = skm.average_precision_score(_indicator(y, ["c", "b", "a"]), s, average=None)
    np.testing.assert_allclose(rev, expected, rtol=RTOL)
    assert not np.allclose(rev, default)


def test_labels_multilabel_reversed_columns():
    Y, s, w = multilabel_case(33)
    k = Y.shape[1]
    names = np.array([f"L{i}" for i in range(k)])
    base = _quiet(precall.average_precision, Y, s, average=None, sample_weight=w, labels=names)
    rev = _quiet(
        precall.average_precision, Y[:, ::-1], s[:, ::-1], average=None, sample_weight=w, labels=names[::-1]
    )
    np.testing.assert_allclose(rev, base[::-1], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(
        base, _quiet(skm.average_precision_score, Y, s, average=None, sample_weight=w), rtol=RTOL, atol=ATOL
    )


# --------------------------------------------------------------------- 5. real data


@pytest.fixture(scope="module")
def hpc_cv(shared_data_dir):
    path = shared_data_dir / "yardstick_hpc_cv.csv"
    if not path.exists():
        pytest.skip(f"{path} not found")
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return {
        "obs": np.array([r["obs"] for r in rows]),
        "scores": np.array([[float(r[c]) for c in ("VF", "F", "M", "L")] for r in rows]),
        "case_weight": np.array([float(r["case_weight"]) for r in rows]),
    }


HPC_LABELS = ["VF", "F", "M", "L"]
HPC_SORTED = ["F", "L", "M", "VF"]
HPC_TO_SORTED = [HPC_LABELS.index(c) for c in HPC_SORTED]  # columns of scores in sorted order
HPC_FROM_SORTED = [HPC_SORTED.index(c) for c in HPC_LABELS]  # sklearn (sorted) -> VF, F, M, L


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "case_weight"])
def test_hpc_cv_average_precision_matches_sklearn(hpc_cv, weighted):
    y, s = hpc_cv["obs"], hpc_cv["scores"]
    w = hpc_cv["case_weight"] if weighted else None
    s_sorted = s[:, HPC_TO_SORTED]
    for average in AP_MC_AVERAGES:
        expected = skm.average_precision_score(y, s_sorted, average=average, sample_weight=w)
        if average is None:
            expected = np.asarray(expected)[HPC_FROM_SORTED]
        got = precall.average_precision(y, s, labels=HPC_LABELS, average=average, sample_weight=w)
        _assert_result(got, expected, average, 4, f"hpc_cv AP weighted={weighted}")
        # default class order = sorted labels
        got_sorted = precall.average_precision(y, s_sorted, average=average, sample_weight=w)
        if average is None:
            got_sorted = got_sorted[HPC_FROM_SORTED]
        _assert_result(got_sorted, expected, average, 4, f"hpc_cv AP sorted weighted={weighted}")


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "case_weight"])
def test_hpc_cv_roc_auc_ovr_matches_sklearn(hpc_cv, weighted):
    y, s = hpc_cv["obs"], hpc_cv["scores"]
    w = hpc_cv["case_weight"] if weighted else None
    s_sorted = s[:, HPC_TO_SORTED]
    for average in ROC_MC_AVERAGES:
        expected = skm.roc_auc_score(
            y, s_sorted, multi_class="ovr", average=average, sample_weight=w, labels=HPC_SORTED
        )
        if average is None:
            expected = np.asarray(expected)[HPC_FROM_SORTED]
        got = precall.roc_auc(y, s, labels=HPC_LABELS, multi_class="ovr", average=average, sample_weight=w)
        _assert_result(got, expected, average, 4, f"hpc_cv ROC weighted={weighted}")


# ----------------------------------------------------------- 6. binary is unchanged


@pytest.mark.parametrize("average", ["macro", "weighted", "micro", "samples", None])
def test_binary_input_ignores_average(average):
    rng = np.random.default_rng(99)
    y = rng.integers(0, 2, 150)
    s = np.round(rng.random(150) + 0.3 * y, 2)
    w = rng.uniform(0.1, 3.0, 150)
    for sw in (None, w):
        ap = precall.average_precision(y, s, average=average, sample_weight=sw)
        assert np.ndim(ap) == 0
        assert ap == pytest.approx(skm.average_precision_score(y, s, sample_weight=sw), rel=RTOL, abs=ATOL)
        assert ap == precall.average_precision(y, s, sample_weight=sw)
        auc = precall.roc_auc(y, s, average=average, sample_weight=sw)
        assert np.ndim(auc) == 0
        assert auc == pytest.approx(skm.roc_auc_score(y, s, sample_weight=sw), rel=RTOL, abs=ATOL)
    labels = np.array(["neg", "pos"])[y]
    for method in METHODS:
        got = precall.average_precision(labels, s, pos_label="pos", method=method, average=average)
        assert got == precall.average_precision(y, s, method=method)
    assert precall.average_precision(labels, s, pos_label="pos", average=average) == pytest.approx(
        skm.average_precision_score(labels, s, pos_label="pos"), rel=RTOL
    )


# --------------------------------------------------------------------------- errors


def _mc_input():
    y = np.array([0, 1, 2, 2, 1, 0, 1, 2])
    s = np.random.default_rng(0).random((8, 3))
    return y, s


def _ml_input():
    Y = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 1], [1, 0, 0], [0, 1, 0]])
    s = np.random.default_rng(1).random((6, 3))
    return Y, s


FUNCS = [precall.average_precision, precall.roc_auc]
FUNC_IDS = ["average_precision", "roc_auc"]


@pytest.mark.parametrize("func", FUNCS, ids=FUNC_IDS)
def test_error_wrong_number_of_columns(func):
    y, s = _mc_input()
    rng = np.random.default_rng(2)
    with pytest.raises(ValueError, match="y_score"):
        func(y, rng.random((8, 4)))
    with pytest.raises(ValueError, match="y_score"):
        func(np.array([0, 1, 2, 3, 1, 0, 3, 2]), s)  # 4 classes, 3 columns
    with pytest.raises(ValueError, match="y_score|labels"):
        func(y, rng.random((8, 4)), labels=[0, 1, 2])
    with pytest.raises(ValueError, match="y_score|labels"):
        func(y, s, labels=[0, 1, 2, 3])
    Y, _ = _ml_input()
    with pytest.raises(ValueError, match="y_score"):
        func(Y, np.random.default_rng(3).random((6, 4)))


@pytest.mark.parametrize("average", ["mean", "MACRO", "binary", ""])
@pytest.mark.parametrize("func", FUNCS, ids=FUNC_IDS)
def test_error_unknown_average(func, average):
    y, s = _mc_input()
    with pytest.raises(ValueError, match="average"):
        func(y, s, average=average)
    Y, t = _ml_input()
    with pytest.raises(ValueError, match="average"):
        func(Y, t, average=average)


def test_error_samples_average_with_multiclass_roc_auc():
    # roc_auc_score refuses average="samples" for multi-class input; so does precall
    y, s = _mc_input()
    with pytest.raises(ValueError, match="average"):
        precall.roc_auc(y, s, average="samples")
    with pytest.raises(ValueError, match="average"):
        precall.roc_auc(y, s, average="samples", labels=[2, 1, 0])
    with pytest.raises(ValueError, match="average"):
        precall.roc_auc(np.array(["a", "b"] * 4), s[:, :2], average="samples", labels=["a", "b"])


def test_samples_average_with_multiclass_ap_equals_sklearn():
    # average_precision_score binarizes multi-class labels and accepts "samples"
    y, s = _mc_input()
    expected = skm.average_precision_score(y, s, average="samples")
    assert precall.average_precision(y, s, average="samples") == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("func", FUNCS, ids=FUNC_IDS)
def test_error_duplicate_labels(func):
    y, s = _mc_input()
    with pytest.raises(ValueError, match="labels"):
        func(y, s, labels=[0, 1, 1])
    with pytest.raises(ValueError, match="labels"):
        func(y, np.random.default_rng(4).random((8, 4)), labels=[0, 1, 2, 2])
    Y, t = _ml_input()
    with pytest.raises(ValueError, match="labels"):
        func(Y, t, labels=["x", "y", "x"])


@pytest.mark.parametrize("func", FUNCS, ids=FUNC_IDS)
def test_error_y_true_label_missing_from_labels(func):
    y, s = _mc_input()
    with pytest.raises(ValueError, match="labels"):
        func(y, s, labels=[0, 1, 5])


# ------------------------------------------- average="samples": row-wise kernels


@pytest.mark.parametrize("max_fpr", [0.2, 0.5, 0.75])
def test_samples_partial_roc_auc_equals_sklearn_and_binary_loop(max_fpr):
    for seed in (15, 16, 17, 18, 35, 36):  # special == 3: every row has both classes
        Y, s, w = multilabel_case(seed, n_range=(20, 60))
        expected = _quiet(skm.roc_auc_score, Y, s, average="samples", max_fpr=max_fpr, sample_weight=w)
        got = precall.roc_auc(Y, s, average="samples", max_fpr=max_fpr, sample_weight=w)
        assert got == pytest.approx(expected, rel=RTOL, abs=ATOL), f"seed={seed}"

        def metric(y, sc, _w):
            return precall.roc_auc(y, sc, max_fpr=max_fpr)

        assert got == pytest.approx(oracle(metric, Y, s, w, "samples"), rel=RTOL, abs=ATOL)


def test_samples_rows_without_positives_follow_the_policy():
    Y = np.array([[1, 0, 1], [0, 0, 0], [1, 1, 0], [0, 0, 0]])
    s = np.array([[0.9, 0.1, 0.3], [0.2, 0.8, 0.7], [0.6, 0.5, 0.2], [0.4, 0.3, 0.9]])
    row0 = precall.average_precision(Y[0], s[0])
    row2 = precall.average_precision(Y[2], s[2])
    with pytest.warns(precall.UndefinedMetricWarning, match="2 of 4 samples"):
        assert precall.average_precision(Y, s, average="samples") == pytest.approx((row0 + row2) / 4)
    assert np.isnan(precall.average_precision(Y, s, average="samples", on_undefined="nan"))
    got = precall.average_precision(Y, s, average="samples", on_undefined=0.5)
    assert got == pytest.approx((row0 + row2 + 1.0) / 4)
    with pytest.raises(ValueError, match="undefined"):
        precall.average_precision(Y, s, average="samples", on_undefined="raise")
    with pytest.warns(precall.UndefinedMetricWarning, match="2 of 4 samples"):
        assert np.isnan(precall.roc_auc(Y, s, average="samples"))


def test_samples_over_several_row_blocks(monkeypatch):
    """Rows are processed in blocks; the block size must not change the result."""
    from precall import multiclass as averaging

    Y, s, w = multilabel_case(2, n_range=(100, 101))
    reference = {m: precall.average_precision(Y, s, method=m, average="samples", sample_weight=w, on_undefined=0.0)
                 for m in METHODS}
    roc = _quiet(precall.roc_auc, Y, s, average="samples", sample_weight=w)
    monkeypatch.setattr(averaging, "_ROW_CELLS", 7)  # a block of one or two rows
    for m in METHODS:
        got = precall.average_precision(Y, s, method=m, average="samples", sample_weight=w, on_undefined=0.0)
        assert got == reference[m], m
    np.testing.assert_equal(_quiet(precall.roc_auc, Y, s, average="samples", sample_weight=w), roc)


def test_per_class_over_several_column_blocks(monkeypatch):
    """Columns are transposed in tiles; tile sizes must not change the per-class values."""
    from precall import multiclass as averaging

    Y, s, w = multilabel_case(4, n_range=(100, 101))
    expected = _quiet(precall.average_precision, Y, s, average=None, sample_weight=w)
    monkeypatch.setattr(averaging, "_BLOCK_COLUMNS", 2)
    monkeypatch.setattr(averaging, "_BLOCK_ROWS", 7)
    np.testing.assert_array_equal(_quiet(precall.average_precision, Y, s, average=None, sample_weight=w), expected)
    np.testing.assert_array_equal(
        _quiet(precall.average_precision, Y, s, average=None, sample_weight=w),
        [_quiet(precall.average_precision, Y[:, c], s[:, c], sample_weight=w) for c in range(Y.shape[1])],
    )
