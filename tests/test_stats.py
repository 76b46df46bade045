"""precall.stats: DeLong against a brute-force structural-components implementation
and pROC's published numbers; the bootstrap against its definition (the metric of
the rows weighted by how often each was drawn), scipy.stats.bootstrap, and
coverage on simulated data with a known AUC."""

from __future__ import annotations

import csv
import functools
import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import bootstrap as scipy_bootstrap

import precall
from precall import stats
from precall.stats import bands

AP_METHODS = precall.AP_METHODS


# ------------------------------------------------------------------ brute force
def _psi(x, y):
    return (x > y) + 0.5 * (x == y)


def delong_brute_force(y, S):
    """AUCs and DeLong covariance from every (positive, negative) pair: O(m n k)."""
    y = np.asarray(y).astype(bool)
    S = np.asarray(S, dtype=float)
    if S.ndim == 1:
        S = S[:, None]
    pos, neg = S[y], S[~y]
    m, n = len(pos), len(neg)
    kernel = _psi(pos[:, None, :], neg[None, :, :])  # (m, n, k)
    auc = kernel.mean(axis=(0, 1))
    v10 = kernel.mean(axis=1) - auc  # each positive's placement, centred
    v01 = kernel.mean(axis=0) - auc
    return auc, v10.T @ v10 / (m - 1) / m + v01.T @ v01 / (n - 1) / n


def _normal_cdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2))


def _quiet(f, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kw)


def _binary(rng, n, decimals=1, prevalence=0.4):
    y = (rng.random(n) < prevalence).astype(int)
    y[:2], y[2:4] = 1, 0
    s = np.round(rng.random(n) + 0.4 * y, decimals)
    return y, s


# ------------------------------------------------------------------ DeLong
@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 6)), min_size=4, max_size=40),
)
def test_delong_variance_equals_brute_force(rows):
    y = np.array([r[0] for r in rows] + [True, True, False, False], dtype=int)
    s = np.array([r[1] for r in rows] + [3, 5, 2, 5], dtype=float)
    auc, var = delong_brute_force(y, s)
    assert stats.roc_auc_variance(y, s) == pytest.approx(var[0, 0], rel=1e-12, abs=1e-15)
    ci = stats.roc_auc_ci(y, s)
    assert ci.estimate == pytest.approx(auc[0], abs=1e-15)
    assert ci.estimate == precall.roc_auc(y, s)


def test_variance_alone_equals_the_covariance_diagonal(rng):
    """Two code paths: per-segment sums (one column) and per-sample placements (columns)."""
    for decimals in (0, 1, 3):
        y, s = _binary(rng, 500, decimals=decimals)
        cov = stats.roc_auc_covariance(y, np.column_stack([s, -s]))
        assert stats.roc_auc_variance(y, s) == pytest.approx(cov.covariance[0, 0], rel=1e-12)
        assert cov.covariance[0, 1] == pytest.approx(-cov.covariance[0, 0], rel=1e-12)


def test_delong_variance_permutation_and_monotone_invariance(rng):
    y, s = _binary(rng, 300)
    v = stats.roc_auc_variance(y, s)
    p = rng.permutation(len(y))
    assert stats.roc_auc_variance(y[p], s[p]) == pytest.approx(v, rel=1e-13)
    assert stats.roc_auc_variance(y, np.exp(3 * s) - 7) == pytest.approx(v, rel=1e-13)


def test_delong_covariance_equals_brute_force(rng):
    for _ in range(20):
        n = int(rng.integers(6, 80))
        y, s0 = _binary(rng, n)
        S = np.column_stack([s0, np.round(s0 + rng.normal(0, 0.3, n), 1), rng.integers(0, 3, n)])
        auc, cov = delong_brute_force(y, S)
        got = stats.roc_auc_covariance(y, S)
        np.testing.assert_allclose(got.auc, auc, rtol=0, atol=1e-15)
        np.testing.assert_allclose(got.covariance, cov, rtol=1e-12, atol=1e-16)
        assert (got.n_pos, got.n_neg) == (int(y.sum()), int((1 - y).sum()))


def test_delong_paired_test_equals_brute_force(rng):
    for _ in range(20):
        n = int(rng.integers(6, 80))
        y, a = _binary(rng, n)
        b = np.round(a + rng.normal(0, 0.4, n), 1)
        auc, cov = delong_brute_force(y, np.column_stack([a, b]))
        sd = math.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1])
        t = stats.roc_auc_test(y, a, b, level=0.9)
        if sd < 1e-12:  # the same ranking: no difference to test
            assert t.difference == 0 and t.statistic == 0 and t.p_value == 1
            continue
        z = (auc[0] - auc[1]) / sd
        assert t.difference == pytest.approx(auc[0] - auc[1], abs=1e-15)
        assert t.statistic == pytest.approx(z, rel=1e-11)
        assert t.p_value == pytest.approx(2 * _normal_cdf(-abs(z)), rel=1e-11)
        half = 1.6448536269514722 * sd  # z of 0.95
        assert (t.low, t.high) == pytest.approx((t.difference - half, t.difference + half), rel=1e-11)
        swapped = stats.roc_auc_test(y, b, a)
        assert swapped.statistic == pytest.approx(-t.statistic, rel=1e-12)
        assert swapped.p_value == pytest.approx(t.p_value, rel=1e-12)


def test_delong_ci_is_the_clipped_normal_interval(rng):
    y, s = _binary(rng, 60)
    auc, var = delong_brute_force(y, s)
    sd = math.sqrt(var[0, 0])
    ci = stats.roc_auc_ci(y, s, level=0.8)
    z80 = 1.2815515655446004
    assert ci.low == pytest.approx(max(auc[0] - z80 * sd, 0.0), rel=1e-12)
    assert ci.high == pytest.approx(min(auc[0] + z80 * sd, 1.0), rel=1e-12)
    assert ci.standard_error == pytest.approx(sd, rel=1e-12)
    assert tuple(ci) == (ci.low, ci.high) and ci.method == "delong" and ci.level == 0.8
    perfect = stats.roc_auc_ci([0, 0, 0, 1, 1, 1], [1, 2, 3, 4, 5, 6])
    assert (perfect.estimate, perfect.high) == (1.0, 1.0)


def test_delong_identical_models_give_z_zero_p_one(rng):
    y, s = _binary(rng, 50)
    t = stats.roc_auc_test(y, s, s)
    assert (t.difference, t.statistic, t.p_value) == (0.0, 0.0, 1.0)


def test_delong_pos_label_and_string_labels(rng):
    y, s = _binary(rng, 70)
    labels = np.where(y == 1, "Poor", "Good")  # "Poor" > "Good": positive by default
    assert stats.roc_auc_variance(labels, s) == stats.roc_auc_variance(y, s)
    flipped = stats.roc_auc_variance(labels, -s, pos_label="Good")
    assert flipped == pytest.approx(stats.roc_auc_variance(y, s), rel=1e-12)


def test_delong_undefined_follows_the_policy():
    with pytest.warns(precall.UndefinedMetricWarning, match="at least two positives"):
        assert math.isnan(stats.roc_auc_variance([0, 0, 1], [0.1, 0.2, 0.3]))
    with pytest.warns(precall.UndefinedMetricWarning):
        ci = stats.roc_auc_ci([0, 0, 0], [0.1, 0.2, 0.3])
    assert math.isnan(ci.low) and math.isnan(ci.high)
    with pytest.raises(ValueError, match="at least two positives"):
        stats.roc_auc_variance([0, 0, 1], [0.1, 0.2, 0.3], on_undefined="raise")
    assert math.isnan(stats.roc_auc_variance([0, 1, 1], [0.1, 0.2, 0.3], on_undefined="nan"))
    with pytest.raises(ValueError, match="at least two positives"):
        stats.roc_auc_covariance([0, 0, 1], [[0.1, 1], [0.2, 2], [0.3, 3]])


@pytest.mark.parametrize("y", [[0, 1, 0, 0, 0], [1, 0, 1, 1], [0, 0, 0, 0], [1, 1, 1]])
def test_paired_delong_below_two_of_a_class_follows_on_undefined(y):
    """The paired test with fewer than two positives or negatives: the one policy of undefined results,
    as the unpaired test and ``roc_auc_ci`` (it raised ``ValueError`` whatever ``on_undefined`` said).
    The AUCs are still each column's ROC-AUC (NaN without a class)."""
    rng = np.random.default_rng(len(y))
    a, b = rng.random(len(y)), rng.random(len(y))
    both = 0 < sum(y) < len(y)
    want = (precall.roc_auc(y, a), precall.roc_auc(y, b)) if both else (math.nan, math.nan)
    with pytest.warns(precall.UndefinedMetricWarning, match="at least two positives and two negatives"):
        t = stats.roc_auc_test(y, a, b)
    np.testing.assert_equal((t.estimate_a, t.estimate_b, t.difference), (*want, want[0] - want[1]))
    assert all(math.isnan(v) for v in (t.low, t.high, t.statistic, t.p_value, t.standard_error))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = stats.roc_auc_test(y, a, b, on_undefined="nan")
        given_variance = stats.roc_auc_test(y, a, b, on_undefined=0.04)
    assert math.isnan(quiet.p_value) and quiet.estimate_a == t.estimate_a or not both
    if both:  # a number is the variance of the difference
        assert given_variance.standard_error == 0.2
        assert given_variance.statistic == pytest.approx(given_variance.difference / 0.2, rel=1e-15)
    with pytest.raises(ValueError, match="DeLong variance is undefined: .*negative\\(s\\)\\. Stopped by on_undefined='raise'"):
        stats.roc_auc_test(y, a, b, on_undefined="raise")


def test_delong_errors_name_the_argument():
    y, s = [0, 1, 0, 1], [0.1, 0.4, 0.35, 0.8]
    with pytest.raises(TypeError, match="sample_weight.*DeLong"):
        stats.roc_auc_ci(y, s, sample_weight=[1, 1, 1, 1])
    with pytest.raises(ValueError, match="`level`"):
        stats.roc_auc_ci(y, s, level=1.0)
    with pytest.raises(ValueError, match="`method`"):
        stats.roc_auc_ci(y, s, method="wald")
    with pytest.raises(ValueError, match="same length"):
        stats.roc_auc_test(y, s, s[:3])
    with pytest.raises(ValueError, match="1-D"):
        stats.roc_auc_test(y, [s, s], s)
    with pytest.raises(ValueError, match="`y_scores` must be 2-D"):
        stats.roc_auc_covariance(y, s)
    for rows in (4, 0):  # no column (it was an IndexError)
        with pytest.raises(ValueError, match="`y_scores` must have at least one column"):
            stats.roc_auc_covariance(y[:rows], np.empty((rows, 0)))
    with pytest.raises(ValueError, match="NaN"):
        stats.roc_auc_variance(y, [0.1, np.nan, 0.3, 0.2])


# pROC's own test suite and documentation (tests/testthat/test-roc.test.R and the
# ci.auc example) on the aSAH data: outcome Poor is the case class.
PROC_PAIRED_Z = {
    ("wfns", "s100b"): (2.20898359144091, 0.0271757822291882),
    ("wfns", "ndka"): (2.79777591868904, 0.00514557970691098),
    ("ndka", "s100b"): (-1.39077002573558, 0.164295175223054),
}
PROC_UNPAIRED_D = {
    ("wfns", "s100b"): 1.43490640926908,
    ("wfns", "ndka"): 3.10125096778969,
    ("ndka", "s100b"): -1.55995743389685,
}


@pytest.fixture(scope="module")
def asah(shared_data_dir):
    path = shared_data_dir / "pROC_aSAH.csv"
    if not path.exists():
        pytest.skip(f"{path} not found")
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = {"y": np.array([r["outcome"] == "Poor" for r in rows], dtype=int)}
    for col in ("wfns", "s100b", "ndka"):
        out[col] = np.array([float(r[col]) for r in rows])
    return out


@pytest.mark.parametrize("pair", sorted(PROC_PAIRED_Z))
def test_asah_paired_delong_equals_proc(asah, pair):
    a, b = pair
    z, p = PROC_PAIRED_Z[pair]
    t = stats.roc_auc_test(asah["y"], asah[a], asah[b])
    assert t.statistic == pytest.approx(z, rel=1e-12)
    assert t.p_value == pytest.approx(p, rel=1e-12)


@pytest.mark.parametrize("pair", sorted(PROC_UNPAIRED_D))
def test_asah_delong_variances_give_procs_unpaired_statistic(asah, pair):
    a, b = pair
    y = asah["y"]
    d = (precall.roc_auc(y, asah[a]) - precall.roc_auc(y, asah[b])) / math.sqrt(
        stats.roc_auc_variance(y, asah[a]) + stats.roc_auc_variance(y, asah[b])
    )
    assert d == pytest.approx(PROC_UNPAIRED_D[pair], rel=1e-12)


def test_asah_ci_equals_procs_printed_interval(asah):
    # pROC: "Area under the curve: 0.7314; 95% CI: 0.6301-0.8326 (DeLong)"
    ci = stats.roc_auc_ci(asah["y"], asah["s100b"])
    assert round(ci.estimate, 4) == 0.7314
    assert (round(ci.low, 4), round(ci.high, 4)) == (0.6301, 0.8326)
    auc, var = delong_brute_force(asah["y"], asah["s100b"])
    assert ci.standard_error == pytest.approx(math.sqrt(var[0, 0]), rel=1e-12)


# ------------------------------------------------------------------ bootstrap
def _loop(metric_kwargs, func=precall.average_precision):
    """The same metric as a plain callable: called on every resample."""

    def metric(y_true, y_score, **kw):
        return func(y_true, y_score, **metric_kwargs, **kw)

    return metric


def _draws(seed, y, n_resamples, stratified):
    """The rows bootstrap_ci draws (its documented scheme), for the definition."""
    rng = np.random.default_rng(seed)
    n = len(y)
    if not stratified:
        return rng.integers(0, n, (n_resamples, n))
    strata = [np.flatnonzero(y == c) for c in np.unique(y)]
    return np.concatenate([m[rng.integers(0, m.size, (n_resamples, m.size))] for m in strata], axis=1)


@pytest.mark.parametrize("method", AP_METHODS)
@pytest.mark.parametrize("ties", ["group", "stable"])
def test_counted_replicates_equal_the_weighted_metric(rng, method, ties):
    """A replicate is the metric of the rows weighted by their draw counts."""
    y, s = _binary(rng, 40)
    w = rng.choice([0.5, 1.0, 2.0], size=len(y))
    f = functools.partial(precall.average_precision, method=method, ties=ties)
    res = stats.bootstrap_ci(f, y, s, sample_weight=w, n_resamples=30, random_state=7, resample="rows")
    assert res.reuses_sort
    for rows, got in zip(_draws(7, y, 30, True), res.replicates):
        counts = np.bincount(rows, minlength=len(y))
        expected = precall.average_precision(y, s, method=method, ties=ties, sample_weight=counts * w)
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("method", AP_METHODS)
@pytest.mark.parametrize("weighted", [False, True])
def test_counted_ap_equals_calling_the_metric_on_each_resample(rng, method, weighted):
    y, s = _binary(rng, 50)
    w = rng.choice([0.5, 1.0, 3.0], size=len(y)) if weighted else None
    fast = stats.bootstrap_ci(functools.partial(precall.average_precision, method=method), y, s,
                              sample_weight=w, n_resamples=40, random_state=3, resample="rows")
    slow = stats.bootstrap_ci(_loop({"method": method}), y, s, sample_weight=w, n_resamples=40,
                              random_state=3, resample="rows")
    assert fast.reuses_sort and not slow.reuses_sort
    np.testing.assert_allclose(fast.replicates, slow.replicates, rtol=1e-12, atol=1e-14)
    assert fast.estimate == slow.estimate
    assert (fast.low, fast.high) == pytest.approx((slow.low, slow.high), rel=1e-12)


@pytest.mark.parametrize("max_fpr", [None, 0.3])
@pytest.mark.parametrize("stratified", [True, False])
def test_counted_roc_auc_equals_calling_the_metric(rng, max_fpr, stratified):
    y, s = _binary(rng, 45)
    w = rng.choice([1.0, 2.0], size=len(y))
    fast = stats.bootstrap_ci(functools.partial(precall.roc_auc, max_fpr=max_fpr), y, s,
                              sample_weight=w, n_resamples=60, random_state=11, stratified=stratified,
                              method="bca", resample="rows")
    slow = stats.bootstrap_ci(_loop({"max_fpr": max_fpr}, precall.roc_auc), y, s, sample_weight=w,
                              n_resamples=60, random_state=11, stratified=stratified, method="bca", resample="rows")
    np.testing.assert_allclose(fast.replicates, slow.replicates, rtol=1e-12, atol=1e-14)
    assert (fast.low, fast.high) == pytest.approx((slow.low, slow.high), rel=1e-12)
    assert fast.acceleration == pytest.approx(slow.acceleration, rel=1e-9, abs=1e-14)
    assert fast.stratified is stratified


@pytest.mark.parametrize("average", ["macro", "weighted"])
@pytest.mark.parametrize("func", [precall.average_precision, precall.roc_auc])
def test_counted_multiclass_equals_calling_the_metric(hpc_small, func, average):
    y, s, w = hpc_small
    f = functools.partial(func, average=average)
    fast = stats.bootstrap_ci(f, y, s, sample_weight=w, n_resamples=20, random_state=5, resample="rows")
    slow = stats.bootstrap_ci(_loop({"average": average}, func), y, s, sample_weight=w,
                              n_resamples=20, random_state=5, resample="rows")
    assert fast.reuses_sort
    np.testing.assert_allclose(fast.replicates, slow.replicates, rtol=1e-12)
    assert fast.estimate == pytest.approx(func(y, s, sample_weight=w, average=average), rel=1e-15)


@pytest.fixture(scope="module")
def hpc_small(shared_data_dir):
    path = shared_data_dir / "yardstick_hpc_cv.csv"
    if not path.exists():
        pytest.skip(f"{path} not found")
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))[::7]  # ~500 rows keep the per-resample loop quick
    y = np.array([r["obs"] for r in rows])
    s = np.array([[float(r[c]) for c in ("F", "L", "M", "VF")] for r in rows])
    return y, s, np.array([float(r["case_weight"]) for r in rows])


def test_other_averages_are_called_per_resample(hpc_small):
    y, s, _ = hpc_small
    res = stats.bootstrap_ci(functools.partial(precall.roc_auc, multi_class="ovo"), y, s,
                             n_resamples=10, random_state=0, resample="rows")
    assert not res.reuses_sort and res.n_degenerate == 0
    assert res.estimate == precall.roc_auc(y, s, multi_class="ovo")
    Y = (y[:, None] == np.array(["F", "L", "M", "VF"])).astype(int)
    res = stats.bootstrap_ci(functools.partial(precall.average_precision, average="micro"), Y, s,
                             n_resamples=10, random_state=0, resample="rows")
    assert not res.reuses_sort and not res.stratified  # multi-label: rows without strata


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("metric", ["average_precision", "roc_auc"])
def test_equals_scipy_bootstrap_on_the_same_resamples(rng, method, metric):
    y, s = _binary(rng, 70)
    f = getattr(precall, metric)
    ours = stats.bootstrap_ci(metric, y, s, n_resamples=999, method=method, stratified=False,
                              random_state=np.random.default_rng(2024), resample="rows")

    def statistic(i, axis=-1):
        return _quiet(f, y[i], s[i], on_undefined="nan")

    theirs = scipy_bootstrap((np.arange(len(y)),), statistic, vectorized=False, paired=True,
                             n_resamples=999, method=method, rng=np.random.default_rng(2024))
    np.testing.assert_allclose(ours.replicates, theirs.bootstrap_distribution, rtol=1e-12)
    assert ours.low == pytest.approx(theirs.confidence_interval.low, rel=1e-12)
    assert ours.high == pytest.approx(theirs.confidence_interval.high, rel=1e-12)
    assert ours.standard_error == pytest.approx(theirs.standard_error, rel=1e-12)


def test_bca_with_grouped_jackknife_equals_calling_the_metric(rng):
    y, s = _binary(rng, 2300, decimals=3, prevalence=0.2)
    fast = stats.bootstrap_ci("average_precision", y, s, n_resamples=20, method="bca", random_state=1, resample="rows")
    slow = stats.bootstrap_ci(_loop({}), y, s, n_resamples=20, method="bca", random_state=1, resample="rows")
    assert fast.jackknife == "1000 random groups of rows"
    assert fast.acceleration == pytest.approx(slow.acceleration, rel=1e-9)
    assert (fast.low, fast.high) == pytest.approx((slow.low, slow.high), rel=1e-12)


def test_reproducible_with_a_seed_or_generator(rng):
    y, s = _binary(rng, 80)
    a = stats.bootstrap_ci("roc_auc", y, s, n_resamples=50, random_state=42, resample="rows")
    b = stats.bootstrap_ci("roc_auc", y, s, n_resamples=50, random_state=np.random.default_rng(42), resample="rows")
    np.testing.assert_array_equal(a.replicates, b.replicates)
    c = stats.bootstrap_ci("roc_auc", y, s, n_resamples=50, random_state=43, resample="rows")
    assert not np.array_equal(a.replicates, c.replicates)


def test_stratified_replicates_keep_the_class_counts(rng):
    y, s = _binary(rng, 30)
    draws = _draws(9, y, 25, True)
    assert (y[draws].sum(axis=1) == y.sum()).all()
    res = stats.bootstrap_ci(_loop({}), y, s, n_resamples=25, random_state=9, resample="rows")
    for rows, got in zip(draws, res.replicates):
        rows = np.sort(rows)
        assert got == precall.average_precision(y[rows], s[rows])


def test_degenerate_replicates_are_counted_and_left_out():
    y = np.array([1, 0, 0, 0, 0, 0, 0, 1])
    s = np.array([0.9, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])
    res = stats.bootstrap_ci("roc_auc", y, s, n_resamples=400, stratified=False, random_state=3, resample="rows")
    one_class = [len(np.unique(y[rows])) < 2 for rows in _draws(3, y, 400, False)]
    assert res.n_degenerate == sum(one_class) > 0
    assert np.isnan(res.replicates[one_class]).all()
    finite = res.replicates[~np.isnan(res.replicates)]
    assert (res.low, res.high) == pytest.approx(tuple(np.quantile(finite, [0.025, 0.975])), rel=1e-12)
    assert stats.bootstrap_ci("roc_auc", y, s, n_resamples=400, random_state=3, resample="rows").n_degenerate == 0


def test_paired_bootstrap_uses_the_same_resamples(rng):
    y, a = _binary(rng, 60)
    b = np.round(a + rng.normal(0, 0.3, len(y)), 2)
    f = functools.partial(precall.average_precision, method="voc2007")
    t = stats.bootstrap_test(f, y, a, b, n_resamples=200, random_state=4, resample="rows")
    ra = stats.bootstrap_ci(f, y, a, n_resamples=200, random_state=4, resample="rows").replicates
    rb = stats.bootstrap_ci(f, y, b, n_resamples=200, random_state=4, resample="rows").replicates
    np.testing.assert_array_equal(t.replicates, ra - rb)
    assert t.difference == f(y, a) - f(y, b)
    sd = np.std(ra - rb, ddof=1)
    assert t.standard_error == pytest.approx(sd, rel=1e-12)
    assert t.statistic == pytest.approx(t.difference / sd, rel=1e-12)
    assert t.p_method == "bootstrap" and t.p_resolution == 1 / 200
    # the p-value is the level at which the percentile interval of the same replicates touches 0
    levels = np.linspace(0.001, 0.999, 999)
    excludes = [not (np.quantile(ra - rb, (1 - L) / 2) <= 0 <= np.quantile(ra - rb, (1 + L) / 2)) for L in levels]
    brute = min([1 - L for L, e in zip(levels, excludes) if e], default=1.0)  # the smallest 1 - L excluding 0
    assert brute == pytest.approx(t.p_value, abs=0.0011)
    assert (t.low, t.high) == pytest.approx(tuple(np.quantile(ra - rb, [0.025, 0.975])), rel=1e-12)
    bca = stats.bootstrap_test(f, y, a, b, n_resamples=200, random_state=4, method="bca", resample="rows")
    assert bca.method == "bca" and bca.low < bca.high


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 60), st.integers(0, 60), st.integers(0, 60), st.integers(0, 2**31))
def test_bootstrap_p_value_is_the_smallest_level_excluding_zero(n_zero, n_pos, n_neg, seed):
    """The p-value rule on replicates with ties at 0 (two models that rank alike give many exact
    zero differences): the smallest ``1 - level`` whose percentile interval (``np.quantile``)
    excludes 0, found by brute force over levels; 1 when every replicate is 0."""
    from precall.stats.bootstrap import interval_p_value

    rng = np.random.default_rng(seed)
    reps = rng.permutation(np.r_[np.zeros(n_zero), rng.random(n_pos) + 0.01, -rng.random(n_neg) - 0.01])
    p, resolution = interval_p_value(reps, None, None, "percentile")
    alphas = np.linspace(0.0, 1.0, 20001)[1:]
    low, high = np.quantile(reps, alphas / 2), np.quantile(reps, 1 - alphas / 2)
    excluding = alphas[(low > 0) | (high < 0)]
    brute = max(float(excluding.min()), resolution) if excluding.size else 1.0
    assert p == pytest.approx(brute, abs=1e-4)
    if n_pos == n_neg == 0:
        assert p == 1.0


def test_paired_bootstrap_roc_agrees_with_delong_on_large_data(rng):
    n = 4000
    y = (rng.random(n) < 0.3).astype(int)
    a = rng.normal(size=n) + 1.0 * y
    b = a + rng.normal(size=n) * 0.8
    boot = stats.bootstrap_test("roc_auc", y, a, b, n_resamples=400, random_state=0, resample="rows")
    delong = stats.roc_auc_test(y, a, b)
    assert boot.difference == pytest.approx(delong.difference, abs=1e-15)
    assert boot.standard_error == pytest.approx(delong.standard_error, rel=0.15)


def _binormal_sample(rng, n_pos, n_neg, delta):
    y = np.r_[np.ones(n_pos, dtype=int), np.zeros(n_neg, dtype=int)]
    s = np.r_[rng.normal(delta, 1, n_pos), rng.normal(0, 1, n_neg)]
    return y, s


def test_coverage_on_the_binormal_model():
    """95% intervals cover the true AUC = Phi(delta / sqrt 2) about 95% of the time."""
    rng = np.random.default_rng(123)
    delta = 1.0
    true_auc = _normal_cdf(delta / math.sqrt(2))
    hits = {"delong": 0, "percentile": 0, "bca": 0}
    repetitions = 150
    for _ in range(repetitions):
        y, s = _binormal_sample(rng, 60, 90, delta)
        intervals = {
            "delong": stats.roc_auc_ci(y, s),
            "percentile": stats.bootstrap_ci("roc_auc", y, s, n_resamples=300, random_state=rng, resample="rows"),
            "bca": stats.bootstrap_ci("roc_auc", y, s, n_resamples=300, method="bca", random_state=rng, resample="rows"),
        }
        for name, ci in intervals.items():
            hits[name] += ci.low <= true_auc <= ci.high
    for name, h in hits.items():
        assert 0.88 <= h / repetitions <= 0.99, (name, h)


def test_bootstrap_errors_name_the_argument(rng):
    y, s = _binary(rng, 20)
    with pytest.raises(ValueError, match="`n_resamples`"):
        stats.bootstrap_ci("roc_auc", y, s, n_resamples=1, resample="rows")
    with pytest.raises(ValueError, match="`method`"):
        stats.bootstrap_ci("roc_auc", y, s, method="basic", resample="rows")
    with pytest.raises(ValueError, match="`level`"):
        stats.bootstrap_ci("roc_auc", y, s, level=95, resample="rows")
    with pytest.raises(TypeError, match="`stratified`"):
        stats.bootstrap_ci("roc_auc", y, s, stratified="yes", resample="rows")
    with pytest.raises(ValueError, match="`metric`"):
        stats.bootstrap_ci("f1", y, s, resample="rows")
    with pytest.raises(TypeError, match="`metric`"):
        stats.bootstrap_ci(3, y, s, resample="rows")
    with pytest.raises(TypeError, match="by keyword"):
        stats.bootstrap_ci(functools.partial(precall.average_precision, y), y, s, resample="rows")
    Y = np.column_stack([y, 1 - y])
    S = np.column_stack([s, 1 - s])
    with pytest.raises(TypeError, match="one number"):
        stats.bootstrap_ci(functools.partial(precall.average_precision, average=None), Y, S, resample="rows")
    with pytest.raises(ValueError, match="undefined"):
        stats.bootstrap_ci(functools.partial(precall.roc_auc, on_undefined="nan"), np.zeros(5), np.arange(5), resample="rows")
    with pytest.raises(ValueError, match="same length"):
        stats.bootstrap_ci("roc_auc", y, s[:-1], resample="rows")
    with pytest.raises(ValueError, match="negative"):
        stats.bootstrap_ci("roc_auc", y, s, sample_weight=-np.ones(len(y)), resample="rows")
    for metric in (precall.average_precision, precall.roc_auc):  # AP 0 by policy: undefined all the same
        with pytest.raises(ValueError, match="undefined on the input"):
            _quiet(stats.bootstrap_ci, metric, np.zeros(5), np.arange(5.0))
    with pytest.raises(ValueError, match="undefined for class"):
        _quiet(stats.bootstrap_ci, functools.partial(precall.average_precision, labels=[0, 1, 2]),
               [0, 1, 1, 0], np.eye(4)[:, :3])


def test_bootstrap_result_text(rng):
    y, s = _binary(rng, 30)
    res = stats.bootstrap_ci(functools.partial(precall.average_precision, method="coco"), y, s,
                             n_resamples=20, random_state=0, resample="rows")
    text = str(res)
    assert "AP (coco)" in text and "20 resamples" in text and "0 degenerate" in text


@pytest.mark.parametrize("method", ["voc2007", "coco"])
@pytest.mark.parametrize("grid", ["reference", "exact"])
def test_grid_conventions_on_long_rows_equal_calling_the_metric(rng, method, grid):
    """More than 256 runs: the grid values are searched row by row (the other branch)."""
    y = (rng.random(700) < 0.5).astype(int)
    s = rng.random(700) + 0.3 * y
    f = functools.partial(precall.average_precision, method=method, recall_grid=grid)
    fast = stats.bootstrap_ci(f, y, s, n_resamples=15, random_state=2, resample="rows")
    slow = stats.bootstrap_ci(_loop({"method": method, "recall_grid": grid}), y, s, n_resamples=15, random_state=2, resample="rows")
    np.testing.assert_allclose(fast.replicates, slow.replicates, rtol=1e-12)


# ------------------------------------------------------------------ seeds, one-row classes, zero spread
def test_every_bootstrap_result_records_its_seed(rng):
    """An interval says its method, resamples and seed: the int given (a sequence of ints as a tuple),
    None for None or a generator, in the field and in the text."""
    y, s = _binary(rng, 40)
    b = np.round(s + rng.normal(0, 0.3, 40), 2)
    ci = stats.bootstrap_ci("average_precision", y, s, n_resamples=200, random_state=7)
    assert ci.seed == 7 and ", seed 7, 0 degenerate" in str(ci)
    assert stats.bootstrap_ci("roc_auc", y, s, n_resamples=20, random_state=np.int64(3)).seed == 3
    assert stats.bootstrap_ci("roc_auc", y, s, n_resamples=20, random_state=[1, 2]).seed == (1, 2)
    for state in (None, np.random.default_rng(7)):
        got = stats.bootstrap_ci("roc_auc", y, s, n_resamples=20, random_state=state)
        assert got.seed is None and ", no seed, " in str(got)
    assert [r.seed for r in stats.bootstrap_cis(["average_precision", "roc_auc"], y, s, n_resamples=20,
                                                random_state=5)] == [5, 5]
    t = stats.bootstrap_test("roc_auc", y, s, b, n_resamples=200, random_state=7)
    assert t.seed == 7 and "; 200 resamples (counts), seed 7, 0 degenerate" in str(t)
    assert [r.seed for r in stats.bootstrap_tests(["roc_auc"], y, s, b, n_resamples=20, random_state=9)] == [9]
    assert stats.roc_auc_ci(y, s, method="bca", n_resamples=20, random_state=4).seed == 4
    delong = stats.roc_auc_test(y, s, b)  # no resamples, no seed, and no resampling words in its text
    assert delong.seed is None and "resamples" not in str(delong)
    table = precall.threshold_table(y, s)
    assert bands.roc_band(table, n_resamples=20, random_state=6).seed == 6
    assert bands.pr_band(table, n_resamples=20, random_state=None).seed is None
    c = stats.compare_slices(y, s, by=np.arange(40) % 2, n_resamples=20, random_state=11)
    assert c.seed == c.random_state == 11


ONE_ROW_CLASS = "at least two rows of each class"


@pytest.mark.parametrize("metric, y, kwargs", [
    ("average_precision", [1] + [0] * 30, {}),
    ("roc_auc", [1] + [0] * 9, {"method": "bca"}),
    ("average_precision", [0] + [1] * 9, {}),  # one negative
    ("roc_auc", [1] + [0] * 9, {"stratified": False}),  # unstratified: copies of one score
    ("average_precision", [1] + [0] * 9, {"resample": "rows", "sample_weight": np.linspace(1, 2, 10)}),
    (lambda t, u: precall.roc_auc(t, u), [0] * 9 + [1], {"resample": "rows"}),  # called on each resample
    ("roc_auc", [1, 0], {"method": "bca", "n_resamples": 200}),
])
def test_a_class_of_one_row_leaves_a_bootstrap_interval_undefined(metric, y, kwargs):
    """A class of one row cannot vary in the resamples: no confident zero-width interval, but the
    policy of DeLong's variance below two of a class (NaN bounds with the warning by default)."""
    s = np.linspace(1, 0, len(y))
    with pytest.warns(precall.UndefinedMetricWarning, match=ONE_ROW_CLASS):
        ci = stats.bootstrap_ci(metric, y, s, **kwargs)
    assert math.isnan(ci.low) and math.isnan(ci.high) and math.isnan(ci.standard_error)
    assert ci.estimate == (metric(y, s) if callable(metric) else precall.score(precall.metric(metric), y, s))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = stats.bootstrap_ci(metric, y, s, on_undefined="nan", **kwargs)
    assert math.isnan(quiet.low) and math.isnan(quiet.high)
    with pytest.raises(ValueError, match=ONE_ROW_CLASS):
        stats.bootstrap_ci(metric, y, s, on_undefined="raise", **kwargs)
    given = stats.bootstrap_ci(metric, y, s, on_undefined=0.25, **kwargs)
    assert (given.low, given.high) == (0.25, 0.25)


def test_one_row_class_tests_and_several_metrics_follow_the_policy():
    y, s = [1] + [0] * 9, np.linspace(1, 0, 10)
    with pytest.warns(precall.UndefinedMetricWarning, match=ONE_ROW_CLASS) as caught:
        cis = stats.bootstrap_cis([precall.metric("average_precision", method=m) for m in precall.AP_METHODS], y, s)
    assert len([w for w in caught if ONE_ROW_CLASS in str(w.message)]) == 1  # one cause, one warning
    assert all(math.isnan(c.low) and math.isnan(c.high) for c in cis)
    with pytest.warns(precall.UndefinedMetricWarning, match=ONE_ROW_CLASS):
        t = stats.bootstrap_test("roc_auc", y, s, s[::-1])
    assert all(math.isnan(v) for v in (t.low, t.high, t.statistic, t.p_value, t.standard_error))
    assert t.difference == 1.0 and "p = nan" in str(t)
    with pytest.warns(precall.UndefinedMetricWarning, match=ONE_ROW_CLASS):
        assert math.isnan(stats.roc_auc_ci(y, s, method="percentile").low)
    # a class column of a macro average with one positive: named
    labels = np.array(["a"] * 6 + ["b"] * 6 + ["c"])
    scores = np.random.default_rng(0).random((13, 3))
    with pytest.warns(precall.UndefinedMetricWarning, match="column of class 'c'"):
        macro = stats.bootstrap_ci(functools.partial(precall.average_precision, average="macro"), labels, scores)
    assert math.isnan(macro.low)


def test_the_bootstrap_interval_is_undefined_where_delongs_is():
    for m, n in [(1, 1), (1, 2), (2, 1), (2, 2), (1, 5), (5, 1), (2, 5), (3, 3)]:
        y = [1] * m + [0] * n
        s = np.linspace(1, 0, m + n) + 0.2 * np.arange(m + n) % 3
        delong = stats.roc_auc_ci(y, s, on_undefined="nan")
        for method in ("percentile", "bca"):
            boot = stats.bootstrap_ci("roc_auc", y, s, method=method, n_resamples=100, on_undefined="nan")
            assert math.isnan(boot.low) == math.isnan(delong.low), (m, n, method)


def test_an_undefined_bca_interval_follows_the_policy():
    """Every replicate below the estimate (a statistic no resample reaches: the distinct scores of
    the data): BCa's bias correction is infinite, the interval undefined by the one policy."""
    y, s = [1] * 5 + [0] * 5, np.arange(10.0)

    def distinct(t, u):
        return float(len(np.unique(u)))

    with pytest.warns(precall.UndefinedMetricWarning, match="BCa interval is undefined"):
        ci = stats.bootstrap_ci(distinct, y, s, method="bca", n_resamples=50)
    assert math.isnan(ci.low) and math.isnan(ci.high) and ci.bias_correction == math.inf
    with pytest.raises(ValueError, match="BCa interval is undefined"):
        stats.bootstrap_ci(distinct, y, s, method="bca", n_resamples=50, on_undefined="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(stats.bootstrap_ci(distinct, y, s, method="bca", n_resamples=50, on_undefined="nan").low)


@pytest.mark.parametrize("sign", [1, -1])
def test_a_difference_without_spread_has_an_infinite_z_everywhere(sign):
    """Two models whose AUCs differ with zero variance: z = copysign(inf, difference), p = 0, as
    the unpaired test says, and identical models z = 0, p = 1."""
    y = [1] * 5 + [0] * 5
    a = list(np.linspace(1, 0, 10))
    b = a[::-1]
    if sign < 0:
        a, b = b, a
    paired = stats.roc_auc_test(y, a, b)
    unpaired = stats.roc_auc_test_unpaired(y, a, y, b)
    assert paired.statistic == unpaired.statistic == sign * math.inf
    assert paired.p_value == unpaired.p_value == 0.0
    assert f"z = {sign * math.inf}, p = < 1e-323 (normal)" in str(paired)
    boot = stats.bootstrap_test("roc_auc", y, a, b, n_resamples=200)
    assert boot.statistic == sign * math.inf and boot.difference == sign
    assert f"z = {sign * math.inf}, p = < 0.005 (bootstrap)" in str(boot)
    same = stats.roc_auc_test(y, a, a)
    assert (same.statistic, same.p_value) == (0.0, 1.0)
    assert stats.bootstrap_test("roc_auc", y, a, a, n_resamples=50).statistic == 0.0


DEGENERATE = {
    "two rows": ([1, 0], [0.3, 0.1]),
    "two rows tied": ([1, 0], [0.3, 0.3]),
    "one positive": ([1] + [0] * 9, np.linspace(1, 0, 10)),
    "one negative": ([0] + [1] * 9, np.linspace(1, 0, 10)),
    "all tied": ([1, 1, 0, 0, 1, 0], [0.5] * 6),
    "two of each, tied": ([1, 1, 0, 0], [0.5] * 4),
    "separated": ([1, 1, 0, 0], [0.9, 0.8, 0.2, 0.1]),
}


def test_no_numpy_runtime_warning_from_a_bootstrap_on_degenerate_data():
    """Every method, draw and stratification on tiny, tied and one-row-class data: undefined
    results are said by the policy (UndefinedMetricWarning) or a ValueError, never by numpy."""
    metrics = ["average_precision", "roc_auc", lambda t, u: precall.roc_auc(t, u)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", precall.UndefinedMetricWarning)
        for (y, s), metric, method, resample, stratified in itertools.product(
                DEGENERATE.values(), metrics, ("percentile", "bca"), ("rows", "counts"), (True, False)):
            if resample == "counts" and not isinstance(metric, str):
                continue
            options = {"n_resamples": 50, "method": method, "resample": resample, "stratified": stratified}
            try:
                stats.bootstrap_ci(metric, y, s, **options)
                stats.bootstrap_test(metric, y, s, np.asarray(s)[::-1], **options)
            except ValueError as exc:  # too few defined resamples (unstratified): said, not warned
                assert "resamples gave a defined value" in str(exc)


# --------------------------------------- average="samples": samples without a relevant label
def _labels_with_empty_samples(n=300, k=3, empty=5, seed=0):
    """A multi-label indicator matrix whose first ``empty`` samples have no relevant label."""
    rng = np.random.default_rng(seed)
    s = rng.random((n, k))
    Y = (rng.random((n, k)) < 0.3).astype(int)
    Y[Y.sum(axis=1) == 0, 0] = 1
    Y[:empty] = 0
    return Y, s


@pytest.mark.parametrize("policy", ["warn", 0.0, 0.25])
def test_bootstrap_of_the_samples_average_scores_samples_without_labels_as_the_estimate(policy):
    """average="samples" with 5 of 300 samples without a relevant label: the estimate gives each
    the policy's value (by default scikit-learn's AP 0, with one warning), and so does every
    replicate, which is the metric called on the resample's rows.  The replicates were NaN
    wherever a resample held such a sample: "only 1 of 200 resamples gave a defined value (a class
    missing from the others)", whatever the policy."""
    Y, s = _labels_with_empty_samples()
    fill = 0.0 if policy == "warn" else policy
    m = precall.metric("average_precision", average="samples", on_undefined=policy)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = stats.bootstrap_ci(m, Y, s, n_resamples=200, random_state=7)
    said = [str(w.message) for w in caught if issubclass(w.category, precall.UndefinedMetricWarning)]
    assert len(said) == (policy == "warn") and all("5 of 300 samples" in t for t in said), said
    assert got.estimate == _quiet(precall.average_precision, Y, s, average="samples", on_undefined=policy)
    assert got.n_degenerate == 0 and got.low < got.estimate < got.high

    def called(t, u):
        return precall.average_precision(t, u, average="samples", on_undefined=fill)

    loop = _quiet(stats.bootstrap_ci, called, Y, s, n_resamples=200, random_state=7)  # the same draws
    np.testing.assert_array_equal(got.replicates, loop.replicates)
    assert (got.low, got.high) == (loop.low, loop.high)
    if policy == "warn":  # scikit-learn's samples average of each resample (a smaller draw: it loops over rows)
        skm = pytest.importorskip("sklearn.metrics")
        small = _quiet(stats.bootstrap_ci, m, Y[:60], s[:60], n_resamples=20, random_state=7)
        sk = _quiet(stats.bootstrap_ci, lambda t, u: skm.average_precision_score(t, u, average="samples"),
                    Y[:60], s[:60], n_resamples=20, random_state=7)
        np.testing.assert_allclose(small.replicates, sk.replicates, rtol=0, atol=1e-12)
    # BCa (a jackknife of the same rule) and a paired test on the same data
    bca = _quiet(stats.bootstrap_ci, m, Y, s, n_resamples=100, method="bca")
    assert bca.n_degenerate == 0 and np.isfinite(bca.low) and np.isfinite(bca.high)
    test = _quiet(stats.bootstrap_test, m, Y, s, s[::-1], n_resamples=100)
    assert test.n_degenerate == 0 and np.isfinite(test.p_value)


@pytest.mark.parametrize("measure, policy, undefined", [("average_precision", "nan", 5),
                                                        ("roc_auc", "warn", None),
                                                        ("roc_auc", "nan", None)])
def test_bootstrap_of_an_undefined_samples_average_names_the_samples_not_a_class(measure, policy, undefined):
    """An average="samples" estimate that the policy leaves NaN (NaN for those samples) cannot be
    bootstrapped: the error says how many samples, why and which option scores them."""
    Y, s = _labels_with_empty_samples()
    positive = Y.astype(bool)
    if undefined is None:  # ROC-AUC: a sample also needs an irrelevant label
        undefined = int((~positive.any(axis=1) | positive.all(axis=1)).sum())
    m = precall.metric(measure, average="samples", on_undefined=policy)
    with pytest.raises(ValueError) as exc:
        _quiet(stats.bootstrap_ci, m, Y, s, n_resamples=50)
    message = str(exc.value)
    assert f"{undefined} of 300 samples" in message and "on_undefined=" in message, message
    assert "class" not in message, message
    filled = precall.metric(measure, average="samples", on_undefined=0.5)
    assert _quiet(stats.bootstrap_ci, filled, Y, s, n_resamples=50).n_degenerate == 0


def test_bootstrap_of_a_micro_average_without_positives_is_undefined_on_the_input(rng):
    """Micro AP of labels without a relevant one: 0 by the policy, undefined on every resample, so
    said as the binary AP's (it was "only 0 of 50 resamples gave a defined value (a class missing
    from the others)")."""
    Y = np.zeros((40, 3), dtype=int)
    for metric in (precall.metric("average_precision", average="micro"),
                   precall.metric("average_precision", average="micro", on_undefined=0.0)):
        with pytest.raises(ValueError, match="undefined on the input"):
            _quiet(stats.bootstrap_ci, metric, Y, rng.random((40, 3)), n_resamples=50)


def test_too_few_defined_replicates_are_said_with_their_cause(rng):
    """A metric defined on the data but not on the resamples: the error says the metric returned
    NaN there, not that a class was missing (the classes are all in every stratified resample)."""
    y, s = _binary(rng, 60, decimals=6)

    def distinct_rows_only(t, u):  # NaN on any resample that repeats a row
        return precall.average_precision(t, u) if np.unique(u).size == u.size else float("nan")

    with pytest.raises(ValueError) as exc:
        stats.bootstrap_ci(distinct_rows_only, y, s, n_resamples=50, random_state=0)
    message = str(exc.value)
    assert "resamples gave a defined value" in message and "returned NaN" in message, message
    assert "class missing" not in message, message
    with pytest.raises(ValueError, match="out of `labels` and their columns out of `y_score`"):
        _quiet(stats.bootstrap_ci, functools.partial(precall.average_precision, labels=[0, 1, 2]),
               [0, 1, 1, 0], np.eye(4)[:, :3])
