"""Input validation (errors name the offending argument) and the single-class /
undefined-metric behaviour (scikit-learn's by default, on_undefined otherwise)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn import metrics as skm

import oracles
import precall

METHODS = oracles.METHODS

# every public entry point that takes (y_true, y_score, ...)
ENTRY_POINTS = {
    "threshold_table": precall.threshold_table,
    "precision_recall_curve": precall.precision_recall_curve,
    "roc_curve": precall.roc_curve,
    "det_curve": precall.det_curve,
    "average_precision": precall.average_precision,
    "roc_auc": precall.roc_auc,
    "evaluate": precall.evaluate,
}
ALL = sorted(ENTRY_POINTS)

Y = [0, 1, 1, 0, 1]
S = [0.1, 0.8, 0.4, 0.35, 0.9]


def _call(name, y, s, **kw):
    return ENTRY_POINTS[name](y, s, **kw)


# --------------------------------------------------------------- shapes
@pytest.mark.parametrize("fn", ALL)
def test_different_lengths(fn):
    with pytest.raises(ValueError, match=r"`?(y_true|y_score)`?"):
        _call(fn, Y, S[:-1])
    with pytest.raises(ValueError, match=r"y_true|y_score"):
        _call(fn, Y[:-1], S)


@pytest.mark.parametrize("fn", ALL)
def test_sample_weight_wrong_length(fn):
    with pytest.raises(ValueError, match="sample_weight"):
        _call(fn, Y, S, sample_weight=[1.0, 1.0])


@pytest.mark.parametrize("fn", ALL)
def test_empty(fn):
    with pytest.raises(ValueError, match=r"y_true|y_score"):
        _call(fn, [], [])
    with pytest.raises(ValueError, match=r"y_true|y_score"):
        _call(fn, np.array([], dtype=int), np.array([], dtype=float))


@pytest.mark.parametrize("fn", ALL)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_scores(fn, bad):
    s = list(S)
    s[2] = bad
    with pytest.raises(ValueError, match="y_score"):
        _call(fn, Y, s)


@pytest.mark.parametrize("fn", ALL)
def test_two_dimensional_y_score(fn):
    s2 = np.column_stack([1 - np.asarray(S), S])  # (n, 2): probabilities of both classes
    with pytest.raises(ValueError, match="y_score"):
        _call(fn, Y, s2)
    with pytest.raises(ValueError, match="y_score"):
        _call(fn, Y, np.asarray(S).reshape(1, 1, -1))


@pytest.mark.parametrize("fn", ALL)
def test_two_dimensional_y_true(fn):
    y2 = np.column_stack([Y, Y])
    with pytest.raises(ValueError, match="y_true"):
        _call(fn, y2, S)


@pytest.mark.parametrize("fn", ALL)
def test_indicator_matrix_without_columns(fn):
    """Multi-label input of zero label columns: a ValueError saying a column is needed (the metrics returned
    NaN with numpy's "Mean of empty slice"; the bootstrap said the metric had no positive)."""
    y0, s0 = np.empty((len(Y), 0), dtype=int), np.empty((len(Y), 0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="y_true"):
            _call(fn, y0, s0)
        if fn in ("average_precision", "roc_auc"):
            with pytest.raises(ValueError, match="at least one column, one per label"):
                precall.stats.bootstrap_ci(ENTRY_POINTS[fn], y0, s0, n_resamples=20)


@pytest.mark.parametrize("fn", ALL)
def test_two_dimensional_sample_weight(fn):
    w2 = np.ones((len(Y), 2))
    with pytest.raises(ValueError, match="sample_weight"):
        _call(fn, Y, S, sample_weight=w2)


@pytest.mark.parametrize("fn", ALL)
def test_scalar_inputs(fn):
    with pytest.raises((ValueError, TypeError), match=r"y_true|y_score"):
        _call(fn, 1, 0.5)


# --------------------------------------------------------------- types
@pytest.mark.parametrize("fn", ALL)
@pytest.mark.parametrize(
    "scores",
    [
        ["a", "b", "c", "d", "e"],
        np.array(["0.1", "0.8", "0.4", "0.35", "0.9"]),  # numbers as strings are still strings
        np.array(["x", 1, 2, 3, 4], dtype=object),
    ],
)
def test_non_numeric_scores_type_error(fn, scores):
    with pytest.raises(TypeError, match="y_score"):
        _call(fn, Y, scores)


@pytest.mark.parametrize("fn", ALL)
def test_non_numeric_weights(fn):
    with pytest.raises((TypeError, ValueError), match="sample_weight"):
        _call(fn, Y, S, sample_weight=["a"] * len(Y))


# --------------------------------------------------------------- labels
NEEDS_POS_LABEL = [
    ["a", "b", "b", "a", "b"],
    [2, 3, 3, 2, 3],
    [0, 2, 2, 0, 2],
    [-1, 0, 0, -1, 0],
]


@pytest.mark.parametrize("fn", [f for f in ALL if f != "roc_auc"])
@pytest.mark.parametrize("y", NEEDS_POS_LABEL)
def test_non_binary_labels_without_pos_label(fn, y):
    with pytest.raises(ValueError, match="pos_label"):
        _call(fn, y, S)


@pytest.mark.parametrize("fn", ALL)
def test_more_than_two_classes(fn):
    y = [0, 1, 2, 0, 1]
    with pytest.raises(ValueError, match=r"y_true|pos_label"):
        _call(fn, y, S)


@pytest.mark.parametrize("fn", ALL)
def test_three_string_classes_without_pos_label(fn):
    # three labels must never be silently treated as two
    y = ["a", "b", "c", "a", "b"]
    with pytest.raises(ValueError, match=r"y_true|pos_label"):
        _call(fn, y, S)


@pytest.mark.parametrize("fn", ALL)
@pytest.mark.parametrize("y,pos_label", [([0, 1, 1, 0, 1], 2), (["a", "b", "b", "a", "b"], "c")])
def test_pos_label_not_present(fn, y, pos_label):
    with pytest.raises(ValueError, match="pos_label"):
        _call(fn, y, S, pos_label=pos_label)


def test_pos_label_not_present_matches_sklearn_error():
    with pytest.raises(ValueError):
        skm.average_precision_score([0, 1, 1, 0, 1], S, pos_label=2)


# --------------------------------------------------------------- weights
@pytest.mark.parametrize("fn", ALL)
@pytest.mark.parametrize("bad", [-1.0, -1e-300, np.nan, np.inf])
def test_bad_weights(fn, bad):
    w = [1.0] * len(Y)
    w[1] = bad
    with pytest.raises(ValueError, match="sample_weight"):
        _call(fn, Y, S, sample_weight=w)


@pytest.mark.parametrize("fn", ALL)
def test_all_zero_weights(fn):
    # as scikit-learn: "Sample weights must contain at least one non-zero number."
    with pytest.raises(ValueError, match="sample_weight"):
        _call(fn, Y, S, sample_weight=[0.0] * len(Y))


# --------------------------------------------------------------- options
@pytest.mark.parametrize("method", ["STEP", "voc", "auc", "", "voc2012", None])
def test_unknown_method(method):
    with pytest.raises((ValueError, TypeError), match="method"):
        precall.average_precision(Y, S, method=method)
    t = precall.threshold_table(Y, S)
    with pytest.raises((ValueError, TypeError), match="method"):
        t.average_precision(method=method)


@pytest.mark.parametrize("fn", ["threshold_table", "average_precision", "evaluate"])
@pytest.mark.parametrize("ties", ["first", "Group", "", "average"])
def test_unknown_ties(fn, ties):
    with pytest.raises(ValueError, match="ties"):
        _call(fn, Y, S, ties=ties)


@pytest.mark.parametrize("fn", ["average_precision", "evaluate"])
def test_unknown_recall_grid(fn):
    with pytest.raises(ValueError, match="recall_grid"):
        _call(fn, Y, S, recall_grid="float")


@pytest.mark.parametrize("fn", ["average_precision", "roc_auc", "evaluate"])
@pytest.mark.parametrize("bad", ["ignore", "warning", object()])
def test_unknown_on_undefined(fn, bad):
    with pytest.raises((ValueError, TypeError), match="on_undefined"):
        _call(fn, Y, S, on_undefined=bad)


@pytest.mark.parametrize("max_fpr", [0, 0.0, -0.1, 1.5, np.nan])
def test_bad_max_fpr(max_fpr):
    with pytest.raises(ValueError, match="max_fpr"):
        precall.roc_auc(Y, S, max_fpr=max_fpr)


def test_keyword_only_options():
    with pytest.raises(TypeError):
        precall.average_precision(Y, S, "voc2010")  # method is keyword-only
    with pytest.raises(TypeError):
        precall.roc_auc(Y, S, 0.5)


# ================================================== single class / undefined
NO_POS = ([0, 0, 0, 0], [0.1, 0.4, 0.4, 0.8])
ALL_POS = ([1, 1, 1, 1], [0.1, 0.4, 0.4, 0.8])


@pytest.mark.parametrize("method", METHODS)
def test_ap_no_positives_default_warns_and_returns_zero(method):
    y, s = NO_POS
    with pytest.warns(UserWarning):
        got = precall.average_precision(y, s, method=method)
    assert got == 0.0


def test_ap_no_positives_step_equals_sklearn():
    y, s = NO_POS
    with pytest.warns(UserWarning):
        exp = skm.average_precision_score(y, s)
    with pytest.warns(UserWarning):
        got = precall.average_precision(y, s)
    assert got == exp == 0.0


def test_ap_positive_weight_zero_equals_sklearn():
    # the only positive has weight 0: no positives left
    y, s, w = [0, 1, 0], [0.1, 0.2, 0.3], [1.0, 0.0, 1.0]
    with pytest.warns(UserWarning):
        exp = skm.average_precision_score(y, s, sample_weight=w)
    with pytest.warns(UserWarning):
        got = precall.average_precision(y, s, sample_weight=w)
    assert got == exp


def test_ap_single_class_pos_label_absent_is_no_positives():
    y, s = ["a", "a", "a"], [0.1, 0.5, 0.9]
    with pytest.warns(UserWarning):
        exp = skm.average_precision_score(y, s, pos_label="b")
    with pytest.warns(UserWarning):
        got = precall.average_precision(y, s, pos_label="b")
    assert got == exp == 0.0
    assert math.isnan(precall.average_precision(y, s, pos_label="b", on_undefined="nan"))


@pytest.mark.parametrize("method", METHODS)
def test_ap_only_positives_is_defined(method):
    y, s = ALL_POS
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = precall.average_precision(y, s, method=method)
    assert got == pytest.approx(oracles.average_precision(y, s, method), abs=1e-12)
    assert got == pytest.approx(1.0, abs=1e-12)
    if method == "step":
        assert got == skm.average_precision_score(y, s)


@pytest.mark.parametrize("y", [NO_POS[0], ALL_POS[0]])
def test_roc_auc_one_class_default(y):
    s = NO_POS[1]
    with pytest.warns(precall.UndefinedMetricWarning):
        got = precall.roc_auc(y, s)
    assert math.isnan(got)
    with pytest.warns(UserWarning):
        exp = skm.roc_auc_score(y, s)
    assert math.isnan(exp)
    assert issubclass(precall.UndefinedMetricWarning, UserWarning)


@pytest.mark.parametrize("y", [NO_POS[0], ALL_POS[0]])
def test_roc_auc_one_class_with_max_fpr(y):
    with pytest.warns(precall.UndefinedMetricWarning):
        got = precall.roc_auc(y, NO_POS[1], max_fpr=0.5)
    assert math.isnan(got)


@pytest.mark.parametrize("fn", ["average_precision", "roc_auc"])
def test_on_undefined_nan(fn):
    y, s = NO_POS
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _call(fn, y, s, on_undefined="nan")
    assert math.isnan(got)


@pytest.mark.parametrize("fn", ["average_precision", "roc_auc"])
def test_on_undefined_raise(fn):
    y, s = NO_POS
    with pytest.raises(ValueError):
        _call(fn, y, s, on_undefined="raise")


@pytest.mark.parametrize("fn", ["average_precision", "roc_auc"])
@pytest.mark.parametrize("value", [0.5, 0.0, 1, -1.0])
def test_on_undefined_value(fn, value):
    y, s = NO_POS
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _call(fn, y, s, on_undefined=value)
    assert got == value


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("policy", ["nan", "raise", 0.5])
def test_on_undefined_every_method(method, policy):
    y, s = NO_POS
    if policy == "raise":
        with pytest.raises(ValueError):
            precall.average_precision(y, s, method=method, on_undefined=policy)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = precall.average_precision(y, s, method=method, on_undefined=policy)
    if policy == "nan":
        assert math.isnan(got)
    else:
        assert got == policy


def test_on_undefined_does_not_affect_defined_results():
    for policy in ("warn", "nan", "raise", 0.5):
        assert precall.average_precision(Y, S, on_undefined=policy) == pytest.approx(
            skm.average_precision_score(Y, S), rel=1e-12
        )
        assert precall.roc_auc(Y, S, on_undefined=policy) == pytest.approx(skm.roc_auc_score(Y, S), rel=1e-12)
    # only positives: AP is defined, ROC-AUC is not
    y, s = ALL_POS
    assert precall.average_precision(y, s, on_undefined="raise") == pytest.approx(1.0)
    with pytest.raises(ValueError):
        precall.roc_auc(y, s, on_undefined="raise")


def test_evaluate_no_positives():
    y, s = NO_POS
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = precall.evaluate(y, s, on_undefined="nan")
    assert set(ev.average_precision) == set(METHODS)
    assert all(math.isnan(v) for v in ev.average_precision.values())
    assert math.isnan(ev.roc_auc)
    assert ev.n_pos == 0 and ev.n_neg == 4
    with pytest.raises(ValueError):
        precall.evaluate(y, s, on_undefined="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = precall.evaluate(y, s, on_undefined=0.25)
    assert all(v == 0.25 for v in ev.average_precision.values())
    assert ev.roc_auc == 0.25
    with pytest.warns(UserWarning):
        ev = precall.evaluate(y, s)
    assert all(v == 0.0 for v in ev.average_precision.values())
    assert math.isnan(ev.roc_auc)


def test_evaluate_only_positives():
    y, s = ALL_POS
    with pytest.warns(precall.UndefinedMetricWarning):
        ev = precall.evaluate(y, s)
    assert math.isnan(ev.roc_auc)
    for m in METHODS:
        assert ev.average_precision[m] == pytest.approx(1.0, abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = precall.evaluate(y, s, on_undefined=0.5)
    assert ev.roc_auc == 0.5


def test_table_methods_on_undefined():
    t = precall.threshold_table(*NO_POS)
    with pytest.warns(UserWarning):
        assert t.average_precision() == 0.0
    assert math.isnan(t.average_precision(on_undefined="nan"))
    with pytest.warns(precall.UndefinedMetricWarning):
        assert math.isnan(t.roc_auc())
    assert t.roc_auc(on_undefined=0.5) == 0.5
    with pytest.raises(ValueError):
        t.roc_auc(on_undefined="raise")


@pytest.mark.parametrize("fn", [precall.average_precision, precall.roc_auc, precall.evaluate])
def test_weights_whose_total_overflows_are_refused(fn):
    """Finite weights that add up past the largest float64 made every cumulative sum infinite and
    the metrics NaN; they are refused with the remedy, and one tenth of them is accepted."""
    y, s = [0, 1, 1, 0], [0.1, 0.2, 0.3, 0.4]
    with pytest.raises(ValueError, match="finite total"):
        fn(y, s, sample_weight=[1e308] * 4)
    fn(y, s, sample_weight=[1e307] * 4)


@pytest.mark.parametrize("tiny", [5e-324, 1e-312, 2.2250738585072009e-308])
def test_subnormal_weights_are_refused_naming_the_smallest_allowed(tiny):
    """A subnormal weight keeps too few digits (5e-324 gave step AP 0.0 where 0.5 is right, silently): one
    validator refuses it in every route, naming the smallest weight allowed; 0 and the smallest normal pass."""
    y, s = [1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4]
    for fn in (precall.average_precision, precall.roc_auc, precall.evaluate,
               lambda *a, **k: precall.Accumulator().update(*a, **k),
               lambda *a, **k: precall.SlicedAccumulator().update(*a, by=[0, 0, 1, 1], **k)):
        with pytest.raises(ValueError, match=r"`sample_weight` must be 0 or at least 2\.2250738585072014e-308 .*"
                                             r"the first at index 1 .*multiply every weight by one number"):
            fn(y, s, sample_weight=[1.0, tiny, 0.0, 1.0])
    smallest = 2.2250738585072014e-308
    assert precall.evaluate(y, s, sample_weight=[smallest] * 4).average_precision["step"] == 0.5
    assert precall.Accumulator().update(y, s, sample_weight=[smallest, 0.0, smallest, smallest]).evaluate(
        ).average_precision["step"] == precall.average_precision(y, s, sample_weight=[1.0, 0.0, 1.0, 1.0])


@pytest.mark.parametrize("func", [precall.average_precision, precall.roc_auc, precall.evaluate])
def test_multi_class_scores_of_a_batch_without_a_class_point_to_labels(func):
    """Three score columns and two labels in ``y_true`` (a batch without one class): the error said to pass
    one column for binary input; it names ``labels=``, which is the fix (scikit-learn takes such input as
    multi-class)."""
    s = np.random.default_rng(0).random((6, 3))
    with pytest.raises(ValueError, match=r"3 columns are multi-class scores.*pass `labels=`"):
        func([0, 1, 0, 1, 1, 0], s)
    with pytest.raises(ValueError, match=r"positive class's column, for example `y_score\[:, 1\]`$"):
        func([0, 1, 0, 1, 1, 0], s[:, :2])  # two columns: the binary advice alone
    with pytest.warns(precall.UndefinedMetricWarning):
        func([0, 1, 0, 1, 1, 0], s, labels=[0, 1, 2])
