"""Per-slice intervals and comparisons (precall.stats.compare_slices) against the functions on each slice's rows."""

from __future__ import annotations

import functools
import itertools
import json
import math
import textwrap
import warnings

import numpy as np
import pytest

import precall
from precall import stats


def _data(n=900, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.choice(["north", "south", "east", "west"], n, p=[0.4, 0.3, 0.2, 0.1])
    y = (rng.random(n) < 0.35).astype(int)
    shift = {"north": 1.5, "south": 1.0, "east": 0.6, "west": 0.1}
    s = np.round(y * np.vectorize(shift.get)(g) + rng.standard_normal(n), 2)  # ties
    return y, s, g


@pytest.fixture(scope="module")
def compared():
    y, s, g = _data()
    return y, s, g, stats.compare_slices(y, s, by=g, method="voc2010", n_resamples=300, random_state=7)


@pytest.mark.parametrize("rest", [False, True])
def test_each_interval_is_bootstrap_ci_of_its_rows_with_the_documented_seed(compared, rest):
    y, s, g, c = compared
    metric = functools.partial(precall.average_precision, method="voc2010")
    for i, name in enumerate(c.names):
        mask = (g != name) if rest else (g == name)
        ci = stats.bootstrap_ci(metric, y[mask], s[mask], n_resamples=300,
                                random_state=np.random.SeedSequence(7, spawn_key=(i, 1) if rest else (i,)))
        if not rest:
            assert (c.ap[i], c.ap_low[i], c.ap_high[i]) == (ci.estimate, ci.low, ci.high)
            own = ci
        else:
            own = stats.bootstrap_ci(metric, y[g == name], s[g == name], n_resamples=300,
                                     random_state=stats.slice_seed(7, i))
            d = own.replicates - ci.replicates
            pair = c.vs_reference[i]
            assert pair.ap_difference == own.estimate - ci.estimate
            assert (pair.ap_difference_low, pair.ap_difference_high) == tuple(np.quantile(d, [(1 - 0.95) / 2, (1 + 0.95) / 2]))
            # the p-value by the one rule of stats.bootstrap_tests: the percentile interval at level
            # 1 - p touches 0 (brute force over levels), not resolved below 1 / replicates
            levels = np.linspace(0.0005, 0.9995, 2000)
            excludes = [not (np.quantile(d, (1 - L) / 2) <= 0 <= np.quantile(d, (1 + L) / 2)) for L in levels]
            brute = min([1 - L for L, e in zip(levels, excludes) if e], default=1.0)
            assert pair.ap_p_value == pytest.approx(max(brute, 1 / d.size), abs=6e-4)


def test_roc_auc_intervals_and_tests_equal_delong_on_the_rows(compared):
    y, s, g, c = compared
    for i, name in enumerate(c.names):
        mask = g == name
        ci = stats.roc_auc_ci(y[mask], s[mask])
        assert (c.auc[i], c.auc_low[i], c.auc_high[i]) == (ci.estimate, ci.low, ci.high)
        t = stats.roc_auc_test_unpaired(y[mask], s[mask], y[~mask], s[~mask])
        pair = c.vs_reference[i]
        assert (pair.auc_difference, pair.auc_difference_low, pair.auc_difference_high, pair.auc_p_value) == (
            t.difference, t.low, t.high, t.p_value)
    for a, b in itertools.permutations(c.names, 2):
        t = stats.roc_auc_test_unpaired(y[g == a], s[g == a], y[g == b], s[g == b])
        pair = c.compare(a, b)
        assert (pair.auc_difference, pair.auc_p_value) == (t.difference, t.p_value)
        assert pair.ap_difference == c.ap[c.index(a)] - c.ap[c.index(b)]


def test_worst_first_and_holm(compared):
    y, s, g, c = compared
    assert [c.names[i] for i in c.ranked] == sorted(c.names, key=lambda n: c.ap[c.index(n)])
    assert c.names[c.ranked[0]] == "west"  # the weakest signal
    raw = np.array([p.auc_p_value for p in c.vs_reference])
    assert c.auc_p_holm.tolist() == _holm_oracle(raw).tolist()


def _holm_oracle(p):
    """Holm (1979) from the definition: reject in order while p_(k) <= alpha / (m - k + 1); the adjusted
    p-value is the smallest alpha that rejects the hypothesis."""
    m = len(p)
    out = []
    for i in range(m):
        order = sorted(range(m), key=lambda j: p[j])
        k = order.index(i)
        out.append(min(1.0, max((m - j) * p[order[j]] for j in range(k + 1))))
    return np.array(out)


@pytest.mark.parametrize("p", [[0.01, 0.04, 0.03, 0.005], [0.5, 0.5, 0.5], [1e-12, 0.2], [0.3], [0.02, 0.02, 0.9]])
def test_holm_equals_the_definition(p):
    assert stats.holm(p).tolist() == pytest.approx(_holm_oracle(p).tolist(), rel=0, abs=0)
    assert math.isnan(stats.holm([math.nan, 0.1])[0]) and stats.holm([math.nan, 0.1])[1] == 0.1


def test_undefined_slices_reported_not_ranked_and_min_support():
    rng = np.random.default_rng(3)
    g = np.repeat([0, 1, 2, 3], [200, 40, 1, 150])
    y = (rng.random(g.size) < 0.5).astype(int)
    y[g == 1] = 0  # no positives
    y[g == 3] = 1  # no negatives
    s = rng.random(g.size)
    with warnings.catch_warnings():
        warnings.simplefilter("error", precall.UndefinedMetricWarning)  # the policy is NaN here, quietly
        c = stats.compare_slices(y, s, by=g, n_resamples=50, min_support=10)
    assert math.isnan(c.ap[1]) and math.isnan(c.auc[1]) and math.isnan(c.auc[3]) and not math.isnan(c.ap[3])
    assert 1 not in c.ranked and 2 not in c.ranked  # no positives; below min_support
    assert math.isnan(c.ap_p_holm[1]) and math.isnan(c.auc_p_holm[3])
    text = c.to_text()
    assert max(map(len, text.splitlines())) <= 80 and "not ranked" in text
    d = json.loads(json.dumps(c.to_dict()))
    assert [row["slice"] for row in d["slices"]] == list(c.names)


def test_text_is_bounded_with_many_slices():
    rng = np.random.default_rng(4)
    g = rng.integers(0, 30, 3000)
    y = (rng.random(3000) < 0.5).astype(int)
    c = stats.compare_slices(y, rng.random(3000), by=g, n_resamples=20)
    lines = c.to_text(k=3).splitlines()
    # a title wrapped over two lines, the header, 3 worst, "...", 3 best, then resamples, seeds and design
    assert "more ranked slices" in lines[3 + 3] and "resamples a slice" in lines[3 + 7]
    assert len(lines) == 3 + 7 + len(textwrap.wrap(c._footer(), 80))
    assert max(map(len, lines)) <= 80
    pd = pytest.importorskip("pandas")
    assert isinstance(c.to_frame(), pd.DataFrame) and len(c.to_frame()) == 30


@pytest.mark.parametrize("kw, exc, name", [
    ({"method": "nope"}, ValueError, "`method`"),
    ({"reference": "bogus"}, ValueError, "`reference`"),
    ({"level": 1.5}, ValueError, "`level`"),
    ({"level": float("nan")}, ValueError, "`level`"),
    ({"n_resamples": 1}, ValueError, "`n_resamples`"),
    ({"n_resamples": "100"}, TypeError, "`n_resamples`"),
    ({"min_support": -1}, ValueError, "`min_support`"),
    ({"random_state": -3}, ValueError, "`random_state`"),
    ({"by": "country"}, TypeError, "`by`"),
    ({"by": [0, 1]}, ValueError, "`by`"),
])
def test_bad_options_name_the_parameter(kw, exc, name):
    args = {"by": [0, 0, 1, 1], **kw}
    with pytest.raises(exc, match=name):
        stats.compare_slices([0, 1, 0, 1], [0.1, 0.8, 0.3, 0.6], **args)


@pytest.mark.parametrize("y_a, s_a", [([1], [0.5]), ([0], [0.5]), ([1, 1], [0.2, 0.4]), ([0, 1], [0.3, 0.6]),
                                      ([0, 0, 1], [0.1, 0.2, 0.3])])
def test_unpaired_delong_without_a_variance_is_nan_not_a_crash(y_a, s_a):
    """A sample with fewer than two positives or negatives (one row: n - 1 = 0 in Welch's df) gives NaN."""
    with pytest.warns(precall.UndefinedMetricWarning):
        t = stats.roc_auc_test_unpaired(y_a, s_a, [0, 1, 0, 1, 1], [0.1, 0.9, 0.3, 0.4, 0.7])
    assert math.isnan(t.p_value) and math.isnan(t.statistic) and math.isnan(t.low)
    t = stats.roc_auc_test_unpaired(y_a, s_a, [1, 0], [0.4, 0.5], on_undefined="nan")
    assert math.isnan(t.p_value)


def test_too_many_slices_refused_before_any_resample_with_how_to_ask_for_fewer(monkeypatch):
    """Each slice costs two bootstraps (its rows and the rest's): the number of slices is bounded."""
    from precall.stats import slices as stats_slices

    monkeypatch.setattr(stats_slices, "MAX_SLICES", 5)
    monkeypatch.setattr(stats_slices, "bootstrap_cis", lambda *a, **k: pytest.fail("resampled before the check"))
    rng = np.random.default_rng(0)
    y = (rng.random(60) < 0.5).astype(int)
    with pytest.raises(ValueError, match=r"number of slices.*\[0, 5\].*group rare values"):
        stats.compare_slices(y, rng.random(60), by=np.arange(60) % 6)


def test_progress_reports_the_fraction_of_slices_done_and_can_stop():
    y, s, g = _data(300)
    seen: list[float] = []
    c = stats.compare_slices(y, s, by=g, n_resamples=50, progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0) and len(seen) >= 2 * len(c.names)
    plain = stats.compare_slices(y, s, by=g, n_resamples=50)
    assert np.array_equal(c.ap_low, plain.ap_low) and c.vs_reference == plain.vs_rest  # the same draws

    class Stop(Exception):
        pass

    def stop(done: float) -> None:
        if done > 0.25:
            raise Stop

    with pytest.raises(Stop):
        stats.compare_slices(y, s, by=g, n_resamples=50, progress=stop)
    with pytest.raises(TypeError, match="`progress`"):
        stats.compare_slices(y, s, by=g, n_resamples=50, progress=1)
