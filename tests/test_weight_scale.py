"""Invariance under scaling every weight by a constant, and counts past 2**53 / 2**63.

Every metric is a ratio of weights, so multiplying all weights by any finite
positive constant changes nothing (scikit-learn's behaviour): precall never forms
a product of two weights (ROC-AUC is summed in units of P x N, AUPRG's crossing
in units of P, the coco ``eps`` in units of the smallest weight).
"""

from __future__ import annotations

import functools
import io
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import precall
from precall import stats

SCALES = (1e-300, 1e-150, 1e150, 1e300)


@st.composite
def weighted(draw):
    n = draw(st.integers(4, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    s = np.round(rng.normal(size=n), draw(st.sampled_from([0, 1, 3])))
    w = rng.uniform(0.05, 4.0, n)
    return y, s, w


def _close(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    both_nan = np.isnan(a) & np.isnan(b)
    return bool(np.all(both_nan | np.isclose(a, b, rtol=1e-12, atol=1e-15)))  # 1e-12 relative; rounding near 0


@given(weighted(), st.sampled_from(SCALES), st.sampled_from(["group", "stable"]))
def test_every_convention_and_roc_auc_are_invariant(data, c, ties):
    y, s, w = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = precall.evaluate(y, s, sample_weight=w, ties=ties)
        scaled = precall.evaluate(y, s, sample_weight=w * c, ties=ties)
        for m in precall.AP_METHODS:
            assert _close(scaled.average_precision[m], base.average_precision[m]), m
        assert _close(scaled.roc_auc, base.roc_auc)
        assert _close(scaled.auprg, base.auprg)
        for max_fpr in (0.3, None):
            assert _close(precall.roc_auc(y, s, sample_weight=w * c, max_fpr=max_fpr),
                          precall.roc_auc(y, s, sample_weight=w, max_fpr=max_fpr))


@st.composite
def scaled_counts(draw):
    """Rows with small integer weights (a recall often exactly k / 10 or k / 100) times a scale that is
    no power of two: each weight rounded once."""
    n = draw(st.integers(4, 30))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    s = np.round(rng.normal(size=n), draw(st.sampled_from([0, 1, 3])))
    k = rng.integers(1, 4, n) if draw(st.booleans()) else np.ones(n, dtype=np.int64)
    c = draw(st.sampled_from([0.1, 0.3, 0.7, 3.0, 1e-5 / 3, 1e-300 * 3, 1e300 / 7]))
    return y, s, k, c


@pytest.mark.parametrize("kernel", ["numpy", "numba"])
@given(scaled_counts(), st.sampled_from(["group", "stable"]), st.sampled_from(["reference", "exact"]))
def test_grid_conventions_are_invariant_where_recall_is_on_the_grid(kernel, data, ties, recall_grid):
    """voc2007 and coco read the envelope at recall >= k / 10 (k / 100). A recall from weights equal to
    such a point lands an ulp either side of it whatever the scale; it reaches the point exactly when
    the counts' recall does (``grid_bounds``). Before, voc2007 moved from 0.8935 to 0.9117 with every
    weight times 0.1."""
    from precall._core import backend

    y, s, k, c = data
    previous = backend.set_kernel(kernel)
    try:
        counted = precall.evaluate(np.repeat(y, k), np.repeat(s, k), ties=ties, recall_grid=recall_grid)
        scaled = precall.evaluate(y, s, sample_weight=k * c, ties=ties, recall_grid=recall_grid)
        for m in ("voc2007", "coco"):
            assert _close(scaled.average_precision[m], counted.average_precision[m]), m
            one = precall.average_precision(y, s, sample_weight=k * c, ties=ties, recall_grid=recall_grid, method=m)
            assert one == scaled.average_precision[m], m
    finally:
        backend.set_kernel(previous)


@given(weighted(), st.sampled_from(SCALES))
def test_accumulator_dask_free_paths_are_invariant(data, c):
    y, s, w = data
    exact = precall.Accumulator().update(y, s, sample_weight=w * c).evaluate(on_undefined="nan")
    base = precall.evaluate(y, s, sample_weight=w, on_undefined="nan")
    for m in precall.AP_METHODS:
        assert _close(exact.average_precision[m], base.average_precision[m]), m
    assert _close(exact.roc_auc, base.roc_auc)
    binned = precall.Accumulator(bins=8, score_range=(-2, 2))
    binned_scaled = precall.Accumulator(bins=8, score_range=(-2, 2))
    binned.update(y, s, sample_weight=w)
    binned_scaled.update(y, s, sample_weight=w * c)
    for m in ("step", "coco", "voc2010"):
        a, b = binned.average_precision(method=m), binned_scaled.average_precision(method=m)
        assert _close([a.value, a.low, a.high], [b.value, b.low, b.high]), m
    a, b = binned.roc_auc(), binned_scaled.roc_auc()
    assert _close([a.value, a.low, a.high], [b.value, b.low, b.high])


PREVALENCES = (1e-300, 1e-10, 0.5, 0.999)


def _at_prevalence(y, s, w, pi):
    """Every route to the numbers at prevalence ``pi``, with any warning an error (no silent NaN from
    numpy's overflow)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = precall.evaluate(y, s, sample_weight=w, prevalence=pi)
        table = precall.threshold_table(y, s, sample_weight=w).at_prevalence(pi)
        acc = precall.Accumulator().update(y, s, sample_weight=w).evaluate(prevalence=pi)
        curve = precall.precision_recall_curve(y, s, sample_weight=w, prevalence=pi)
        return {
            "evaluate": [ev.average_precision[m] for m in precall.AP_METHODS] + [ev.auprg, ev.roc_auc],
            "table": [table.average_precision(method=m) for m in precall.AP_METHODS] + [table.evaluate().auprg],
            "accumulator": [acc.average_precision[m] for m in precall.AP_METHODS] + [acc.auprg],
            "functions": [precall.average_precision(y, s, sample_weight=w, prevalence=pi, method=m)
                          for m in precall.AP_METHODS] + [precall.auprg(y, s, sample_weight=w, prevalence=pi)],
            "curve": list(curve.precision) + list(curve.recall),
            "prevalence": [ev.prevalence, table.n_pos / (table.n_pos + table.n_neg)],
        }


@pytest.mark.parametrize("pi", PREVALENCES)
@given(weighted(), st.sampled_from(SCALES))
def test_prevalence_is_invariant_to_the_weight_scale(pi, data, c):
    """Reweighting to a prevalence multiplies the negatives by (1 - pi) / pi * n_pos / n_neg: at weights of
    1e300 and pi = 1e-10 the reweighted weight is 1e310. The counts are rescaled first (a power of two on the
    positives, the negatives as a rate of their total): every route gives the scale-1 numbers, finite, with
    no warning (before: NaN from AP and AUPRG, precision 0 from the curve, OverflowError from evaluate)."""
    y, s, w = data
    base, scaled = _at_prevalence(y, s, w, pi), _at_prevalence(y, s, w * c, pi)
    for route, values in scaled.items():
        assert np.all(np.isfinite(values)), route
        assert _close(values, base[route]), route
    for route in ("table", "accumulator", "functions"):  # one answer: every AP convention and AUPRG
        assert _close(scaled[route], scaled["evaluate"][:7]), route
    assert _close(scaled["prevalence"], [pi, pi])


@pytest.mark.parametrize("pi", [1e-301, 1e-310, 1e-320, 5e-324])
def test_prevalence_below_its_range_is_one_value_error_everywhere(pi):
    """Below 1e-300 the odds (1 - pi) / pi overflow (a subnormal prevalence passed "in (0, 1)" and gave NaN,
    an OverflowError or an internal name): one ValueError naming `prevalence` and its range, from every
    entry point."""
    y, s = np.array([0, 1, 1, 0, 1]), np.array([0.1, 0.4, 0.35, 0.8, 0.6])
    table = precall.threshold_table(y, s)
    calls = [
        lambda: precall.average_precision(y, s, prevalence=pi),
        lambda: precall.evaluate(y, s, prevalence=pi),
        lambda: precall.auprg(y, s, prevalence=pi),
        lambda: precall.precision_recall_curve(y, s, prevalence=pi),
        lambda: table.at_prevalence(pi),
        lambda: precall.Accumulator().update(y, s).evaluate(prevalence=pi),
        lambda: precall.Accumulator().update(y, s).evaluations([None, pi]),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=r"`prevalences?` must be a finite number in \[1e-300, 1\)"):
            call()


@pytest.mark.parametrize("c", SCALES)
def test_bootstrap_and_multiclass_are_invariant(rng, c):
    y = rng.integers(0, 2, 80)
    s = rng.normal(size=80) + y
    w = rng.uniform(0.5, 2, 80)
    for metric in ("average_precision", "roc_auc", functools.partial(precall.average_precision, method="coco")):
        a = stats.bootstrap_ci(metric, y, s, sample_weight=w, n_resamples=30, random_state=1)
        b = stats.bootstrap_ci(metric, y, s, sample_weight=w * c, n_resamples=30, random_state=1)
        assert _close([a.estimate, a.low, a.high], [b.estimate, b.low, b.high])
    yc = rng.integers(0, 3, 80)
    sc = rng.random((80, 3))
    for average in ("macro", "weighted", "micro"):
        assert _close(precall.average_precision(yc, sc, sample_weight=w * c, average=average),
                      precall.average_precision(yc, sc, sample_weight=w, average=average))
        assert _close(precall.roc_auc(yc, sc, sample_weight=w * c, average=average),
                      precall.roc_auc(yc, sc, sample_weight=w, average=average))
    assert _close(precall.roc_auc(yc, sc, sample_weight=w * c, multi_class="ovo"),
                  precall.roc_auc(yc, sc, sample_weight=w, multi_class="ovo"))


@pytest.mark.parametrize("kernel", ["numpy", "numba"])
@pytest.mark.parametrize("c", (1e-300, 1e-150, 1.0, 1e150, 1e300))
def test_no_floating_point_warning_at_any_weight_scale(rng, kernel, c):
    """Every metric, interval and test of weighted rows at scales 1e-300..1e300 with warnings as errors:
    no numpy RuntimeWarning leaks (a bootstrap replicate's steps of zero weight overflowed in the
    interpolated AP's ``a * slope``, masked afterwards: "overflow encountered in multiply" at 1e300)."""
    from precall._core import backend

    n = 120
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    s = np.round(rng.normal(size=n) + y, 1)
    w = rng.uniform(0.05, 4.0, n) * c
    yc, sc = rng.integers(0, 3, n), np.round(rng.random((n, 3)), 2)
    g = rng.choice(["a", "b", "c"], n)
    previous = backend.set_kernel(kernel)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for ties in ("group", "stable"):
                precall.evaluate(y, s, sample_weight=w, ties=ties)
            precall.evaluate(y, s, sample_weight=w, by=g)
            precall.roc_auc(y, s, sample_weight=w, max_fpr=0.3)
            precall.Accumulator().update(y, s, sample_weight=w).evaluate()
            for m in precall.AP_METHODS:
                metric = functools.partial(precall.average_precision, method=m)
                stats.bootstrap_ci(metric, y, s, sample_weight=w, n_resamples=30)
                stats.bootstrap_test(metric, y, s, s[::-1].copy(), sample_weight=w, n_resamples=30)
            stats.bootstrap_ci(precall.roc_auc, y, s, sample_weight=w, n_resamples=30, method="bca")
            for average in ("macro", "micro"):
                stats.bootstrap_ci(functools.partial(precall.average_precision, average=average, method="interpolated"),
                                   yc, sc, sample_weight=w, n_resamples=30)
            stats.compare_slices(y, s, by=g, sample_weight=w, n_resamples=30)
    finally:
        backend.set_kernel(previous)


def test_the_issue_examples():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert precall.roc_auc([0, 1, 0, 1], [.1, .9, .4, .35], sample_weight=[1e-200] * 4) == 0.75
        assert precall.average_precision([1, 1, 0], [.5, 0, 0], sample_weight=[1, 1e-17, 1],
                                         method="interpolated") == pytest.approx(
            precall.Accumulator().update([1, 1, 0], [.5, 0, 0], sample_weight=[1, 1e-17, 1])
            .average_precision(method="interpolated").value)
        assert np.isfinite(precall.evaluate([0, 1, 0, 1], [.1, .9, .4, .35], prevalence=1e-30).roc_auc)
        coco = precall.average_precision([0, 1, 1, 0, 1], [.9, .8, .7, .6, .5], sample_weight=[1, 2, 1, 3, 1],
                                         method="coco")
        tiny = precall.average_precision([0, 1, 1, 0, 1], [.9, .8, .7, .6, .5],
                                         sample_weight=np.array([1, 2, 1, 3, 1]) * 1e-20, method="coco")
        assert tiny == pytest.approx(coco, rel=1e-12)


@pytest.mark.parametrize("scale", [1, 2**20, 2**40])
def test_integer_weights_are_repeated_rows_at_large_counts(rng, scale):
    """Integer weights up to 2**40 (float64 sums) give the table of the same rows repeated: the
    integer-count state (int64, as merged accumulators reach) built from the same counts."""
    y = rng.integers(0, 2, 60)
    s = np.round(rng.normal(size=60), 1)
    w = rng.integers(1, 5, 60).astype(float) * scale
    weighted_acc = precall.Accumulator().update(y, s, sample_weight=w)
    with np.load(io.BytesIO(weighted_acc.to_bytes())) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["pos_0"] = arrays["pos_0"].astype(np.int64)  # the same counts as integers
    arrays["neg_0"] = arrays["neg_0"].astype(np.int64)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    counted = precall.Accumulator.from_bytes(buffer.getvalue())
    a, b = weighted_acc.evaluate(), counted.evaluate()
    for m in precall.AP_METHODS:
        assert a.average_precision[m] == pytest.approx(b.average_precision[m], rel=1e-12)
    assert a.roc_auc == pytest.approx(b.roc_auc, rel=1e-12)
    assert a.min_average_precision["step"] == pytest.approx(b.min_average_precision["step"], rel=1e-12)


def test_exact_counts_past_2_63():
    """3e9 positives, then 3e9 negatives, then 3e9 positives: ROC-AUC 0.5 exactly (int64 overflowed)."""
    payload = precall.Accumulator().update([1, 0, 1], [0.9, 0.5, 0.1]).to_bytes()
    with np.load(io.BytesIO(payload)) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["pos_0"] = np.array([3_000_000_000, 0, 3_000_000_000], dtype=np.int64)
    arrays["neg_0"] = np.array([0, 3_000_000_000, 0], dtype=np.int64)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    acc = precall.Accumulator.from_bytes(buffer.getvalue())
    assert acc.roc_auc().value == 0.5
    assert acc.evaluate().roc_auc == 0.5


def test_min_average_precision_in_constant_time_for_large_counts():
    import time

    start = time.perf_counter()
    value = precall.min_average_precision(1e15, 1)
    assert 0.999 < value < 1.0
    frequency = precall.evaluate([0, 1], [.1, .9], sample_weight=[1, 1e12])
    assert 0.999 < frequency.min_average_precision["step"] <= 1.0
    assert time.perf_counter() - start < 30  # a hang guard, not a speed claim (it was minutes)


@pytest.mark.parametrize("n_neg", [0.5, 1.0, 7.0, 1000.0, 123456.7, 1e9])
def test_min_average_precision_expansion_agrees_with_the_sum(n_neg, monkeypatch):
    """The Euler-Maclaurin form used past 2**20 positives equals the exact sum where both run."""
    import math

    from precall._core import conventions

    p = (1 << 20) + 17
    i = np.arange(1, p + 1, dtype=np.float64)
    exact = math.fsum((i / (i + n_neg)).tolist())
    monkeypatch.setattr(conventions, "_EXACT_TERMS", 10)  # force the expansion
    assert conventions._worst_precision_sum(p, n_neg) == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize("c", [1e-300, 1e300])
def test_dask_score_ranges_are_invariant(rng, c):
    dask = pytest.importorskip("dask")
    import dask.array as da

    import precall.dask as pdask

    y = rng.integers(0, 2, 300)
    s = np.round(rng.normal(size=300), 2)
    w = rng.uniform(0.2, 3, 300)
    base = precall.evaluate(y, s, sample_weight=w)
    with dask.config.set(scheduler="synchronous"):
        ev = pdask.evaluate(da.from_array(y, chunks=70), da.from_array(s, chunks=70),
                            sample_weight=da.from_array(w * c, chunks=70), n_ranges=4)
    for m in precall.AP_METHODS:
        assert _close(ev.average_precision[m], base.average_precision[m]), m
    assert _close(ev.roc_auc, base.roc_auc) and _close(ev.auprg, base.auprg)
