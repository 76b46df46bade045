"""One-vs-one ROC-AUC (Hand & Till), label ranking AP, mean_average_precision and
per-class tables: against scikit-learn and brute-force definitions."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from sklearn import metrics as skm

import precall


def _multiclass(rng, n, k, decimals=2):
    y = rng.integers(0, k, n)
    y[:k] = np.arange(k)
    z = rng.random((n, k)) + 0.5 * np.eye(k)[y]
    s = z / z.sum(axis=1, keepdims=True)
    return y, np.round(s, decimals)


def _pairwise_auc(pos_scores, neg_scores, pos_w, neg_w):
    """P(score_pos > score_neg) + P(equal) / 2, weighted, by brute force over all pairs."""
    num = den = 0.0
    for sp, wp in zip(pos_scores, pos_w):
        for sn, wn in zip(neg_scores, neg_w):
            num += wp * wn * (1.0 if sp > sn else 0.5 if sp == sn else 0.0)
            den += wp * wn
    return num / den


def _hand_till_brute_force(y, s, classes, w=None, weighted=False):
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    scores, shares = [], []
    for a, b in itertools.combinations(range(len(classes)), 2):
        ia, ib = y == classes[a], y == classes[b]
        auc_ab = _pairwise_auc(s[ia, a], s[ib, a], w[ia], w[ib])
        auc_ba = _pairwise_auc(s[ib, b], s[ia, b], w[ib], w[ia])
        scores.append((auc_ab + auc_ba) / 2)
        shares.append((w[ia].sum() + w[ib].sum()) / w.sum())
    return float(np.average(scores, weights=shares if weighted else None))


@pytest.mark.parametrize("average", ["macro", "weighted"])
def test_ovo_equals_sklearn(rng, average):
    for _ in range(30):
        y, s = _multiclass(rng, int(rng.integers(8, 120)), int(rng.integers(3, 6)), 1)
        s[:, -1] = 1 - s[:, :-1].sum(axis=1)  # rows sum to 1, as scikit-learn demands
        got = precall.roc_auc(y, s, multi_class="ovo", average=average)
        assert got == pytest.approx(
            skm.roc_auc_score(y, s, multi_class="ovo", average=average), abs=1e-12
        )


@pytest.mark.parametrize("weighted", [False, True])
def test_ovo_with_weights_equals_brute_force(rng, weighted):
    for _ in range(10):
        y, s = _multiclass(rng, int(rng.integers(6, 40)), int(rng.integers(3, 5)), 1)
        w = rng.random(len(y)) + 0.1
        got = precall.roc_auc(
            y, s, multi_class="ovo", sample_weight=w, average="weighted" if weighted else "macro"
        )
        assert got == pytest.approx(
            _hand_till_brute_force(y, s, np.unique(y), w, weighted), abs=1e-12
        )


def test_ovo_integer_weights_equal_repeated_rows(rng):
    for _ in range(10):
        y, s = _multiclass(rng, 30, 4, 1)
        s[:, -1] = 1 - s[:, :-1].sum(axis=1)  # rows sum to 1, as scikit-learn demands
        reps = rng.integers(1, 4, len(y))
        for average in ("macro", "weighted"):
            got = precall.roc_auc(y, s, multi_class="ovo", sample_weight=reps, average=average)
            expected = skm.roc_auc_score(
                np.repeat(y, reps), np.repeat(s, reps, axis=0), multi_class="ovo", average=average
            )
            assert got == pytest.approx(expected, abs=1e-12)


def test_ovo_errors():
    y = np.array([0, 1, 2, 0])
    s = np.full((4, 3), 1 / 3)
    with pytest.raises(ValueError, match="average"):
        precall.roc_auc(y, s, multi_class="ovo", average="micro")
    with pytest.raises(ValueError, match="multi_class"):
        precall.roc_auc(y, s, multi_class="pairs")
    with pytest.raises(ValueError, match="multi_class='ovo'"):
        precall.roc_auc(np.eye(3, dtype=int)[[0, 1, 2, 0]], s, multi_class="ovo")


def test_ovo_single_present_class_is_undefined():
    s = np.full((3, 3), 1 / 3)
    with pytest.warns(precall.UndefinedMetricWarning):
        assert np.isnan(precall.roc_auc([0, 0, 0], s, multi_class="ovo", labels=[0, 1, 2]))
    assert precall.roc_auc([0, 0, 0], s, multi_class="ovo", labels=[0, 1, 2], on_undefined=0.5) == 0.5


def _lrap_brute_force(Y, S, w=None):
    """scikit-learn's definition, sample by sample."""
    n, k = Y.shape
    w = np.ones(n) if w is None else np.asarray(w, dtype=float)
    total = 0.0
    for i in range(n):
        relevant = [j for j in range(k) if Y[i, j]]
        if len(relevant) in (0, k):
            value = 1.0
        else:
            value = 0.0
            for j in relevant:
                above = [l for l in range(k) if S[i, l] >= S[i, j]]
                value += sum(1 for l in above if Y[i, l]) / len(above)
            value /= len(relevant)
        total += w[i] * value
    return total / w.sum()


@pytest.mark.parametrize("weighted", [False, True])
def test_label_ranking_average_precision(rng, weighted):
    for _ in range(30):
        n, k = int(rng.integers(1, 40)), int(rng.integers(2, 7))
        Y = (rng.random((n, k)) < 0.4).astype(int)
        S = np.round(rng.random((n, k)), 1)
        w = rng.random(n) + 0.05 if weighted else None
        got = precall.label_ranking_average_precision(Y, S, sample_weight=w)
        assert got == pytest.approx(
            skm.label_ranking_average_precision_score(Y, S, sample_weight=w), abs=1e-12
        )
        assert got == pytest.approx(_lrap_brute_force(Y, S, w), abs=1e-12)


def test_label_ranking_average_precision_needs_indicator_matrix():
    with pytest.raises(ValueError, match="y_true"):
        precall.label_ranking_average_precision([0, 1, 1], [[0.1, 0.9]] * 3)
    with pytest.raises(ValueError, match="y_score"):
        precall.label_ranking_average_precision([[0, 1], [1, 0]], [[0.1, 0.9, 0.0]] * 2)


@pytest.mark.parametrize("method", precall.AP_METHODS)
@pytest.mark.parametrize("ties", ["group", "stable"])
def test_mean_average_precision_policies(rng, method, ties):
    Y = (rng.random((40, 5)) < 0.3).astype(int)
    Y[:, 3] = 0  # a class without positives
    S = np.round(rng.random((40, 5)), 1)
    per_class = []
    for c in range(5):
        if Y[:, c].any():
            per_class.append(precall.average_precision(Y[:, c], S[:, c], method=method, ties=ties))
        else:
            per_class.append(np.nan)
    per_class = np.array(per_class)
    zero = precall.mean_average_precision(Y, S, method=method, ties=ties)
    skip = precall.mean_average_precision(Y, S, method=method, ties=ties, absent="skip")
    np.testing.assert_array_equal(zero.undefined, [False, False, False, True, False])
    np.testing.assert_allclose(zero.per_class, per_class, rtol=0, atol=1e-15)
    assert zero.value == pytest.approx(np.nansum(per_class) / 5, abs=1e-15)
    assert skip.value == pytest.approx(np.nanmean(per_class), abs=1e-15)
    if method == "step" and ties == "group":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert zero.value == pytest.approx(skm.average_precision_score(Y, S), abs=1e-12)
    assert "undefined" in str(zero) and "mAP" in str(zero)


def test_mean_average_precision_rejects_unknown_policy():
    with pytest.raises(ValueError, match="absent"):
        precall.mean_average_precision([[1, 0], [0, 1]], [[0.9, 0.1], [0.2, 0.8]], absent="drop")


@pytest.mark.parametrize("ties", ["group", "stable"])
def test_per_class_tables_equal_binary_tables(rng, ties):
    classes = np.array(["cat", "dog", "eel"])
    y = classes[rng.integers(0, 3, 50)]
    s = np.round(rng.random((50, 3)), 1)
    tables = precall.per_class_tables(y, s, ties=ties, labels=classes)
    assert list(tables) == classes.tolist()
    for c, name in enumerate(classes):
        expected = precall.threshold_table(y, s[:, c], pos_label=name, ties=ties)
        np.testing.assert_array_equal(tables[name].thresholds, expected.thresholds)
        np.testing.assert_array_equal(tables[name].tp, expected.tp)
        np.testing.assert_array_equal(tables[name].fp, expected.fp)


@pytest.mark.parametrize("func", [precall.average_precision, precall.roc_auc])
def test_multiclass_input_errors_name_the_argument(func):
    y = [0, 1, 2]
    good = np.array([[0.1, 0.2, 0.7], [0.3, 0.6, 0.1], [0.2, 0.2, 0.6]])
    bad = good.copy()
    bad[1, 1] = np.nan
    with pytest.raises(ValueError, match=r"`y_score` must be finite.*row 1, column 1"):
        func(y, bad)
    with pytest.raises(ValueError, match=r"`y_score` must have one column per class"):
        func(y, good[:, :2], labels=[0, 1, 2])
    with pytest.raises(ValueError, match=r"`y_true` as a 2-D array must be a 0/1"):
        func([[0, 2, 0], [1, 0, 0], [0, 0, 1]], good)
    with pytest.raises(ValueError, match=r"`y_true` contains labels not in `labels`"):
        func([0, 1, 3], good, labels=[0, 1, 2])
    with pytest.raises(ValueError, match=r"same number of samples"):
        func([0, 1, 2, 0], good)
    with pytest.raises(TypeError, match=r"`y_score` must be numeric"):
        func(y, good.astype(str))


def test_macro_roc_curve_of_classes_each_of_one_kind_is_undefined_not_an_error():
    """Every row of one label: no class has both positives and negatives, so each class's ROC curve
    is undefined (NaN, with a warning, as ``precall.roc_curve`` of one class) and so is their mean,
    which now says so by the undefined policy instead of raising ``ValueError`` about `tables`."""
    from precall.multiclass import macro_pr_curve, macro_roc_curve

    tables = list(precall.per_class_tables(["a", "a", "a"], [[0.1, 0.5], [0.2, 0.4], [0.3, 0.3]],
                                           labels=["a", "b"]).values())
    with pytest.warns(precall.UndefinedMetricWarning, match="No class has both positive and negative"):
        fpr, tpr = macro_roc_curve(tables)
    assert np.isnan(fpr).all() and np.isnan(tpr).all()
    assert np.isnan(precall.roc_auc(["a"] * 3, [[0.1, 0.5], [0.2, 0.4], [0.3, 0.3]], labels=["a", "b"],
                                    on_undefined="nan"))
    recall, precision = macro_pr_curve(tables)  # class a's PR curve is defined; b counts 0
    assert -np.sum(np.diff(recall) * precision[:-1]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="at least one"):
        macro_roc_curve([])
