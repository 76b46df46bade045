"""DeLong's unpaired test (pROC's roc.test(paired = FALSE, method = "delong")) against brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from precall import stats
from precall._core.normal import t_isf, t_two_sided_p


def _brute(y, s):
    """AUC and DeLong's variance from the placements of DeLong et al. (1988), pairwise."""
    y, s = np.asarray(y), np.asarray(s, dtype=float)
    x, z = s[y == 1], s[y == 0]
    psi = (x[:, None] > z[None, :]) + 0.5 * (x[:, None] == z[None, :])
    auc = psi.mean()
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    return auc, np.var(v10, ddof=1) / x.size + np.var(v01, ddof=1) / z.size, y.size


def _reference(a, b, level=0.95):
    (ta, va, na), (tb, vb, nb) = a, b
    d = (ta - tb) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))
    half = sps.t.isf((1 - level) / 2, df) * math.sqrt(va + vb)
    return d, df, 2 * sps.t.sf(abs(d), df), ta - tb - half, ta - tb + half


@pytest.mark.parametrize("seed, na, nb, digits, shift", [
    (0, 30, 40, 1, 0.0), (1, 200, 50, 2, 0.5), (2, 12, 500, 0, 1.0), (3, 1000, 1000, 3, 0.2),
    (4, 5, 7, 1, -0.5), (5, 80, 90, 6, 0.0),
])
def test_unpaired_equals_the_papers_formulas(seed, na, nb, digits, shift):
    rng = np.random.default_rng(seed)

    def sample(n, mu):
        y = np.r_[0, 0, 1, 1, (rng.random(n - 4) < 0.4).astype(int)]
        return y, np.round(rng.normal(y * mu, 1.0), digits)

    ya, sa = sample(na, 1.0 + shift)
    yb, sb = sample(nb, 1.0)
    got = stats.roc_auc_test_unpaired(ya, sa, yb, sb)
    d, df, p, low, high = _reference(_brute(ya, sa), _brute(yb, sb))
    assert got.statistic == pytest.approx(d, rel=1e-12, abs=1e-14)
    assert got.df == pytest.approx(df, rel=1e-12)
    assert got.p_value == pytest.approx(p, rel=1e-9)
    assert (got.low, got.high) == pytest.approx((low, high), rel=1e-9)
    assert got.n_a == na and got.n_b == nb


def test_unpaired_is_antisymmetric_and_equal_curves_give_p_one():
    rng = np.random.default_rng(9)
    y = (rng.random(100) < 0.5).astype(int)
    s = rng.random(100)
    same = stats.roc_auc_test_unpaired(y, s, y, s)
    assert same.statistic == 0 and same.p_value == 1.0
    y2, s2 = y[::-1].copy(), rng.random(100)
    ab, ba = stats.roc_auc_test_unpaired(y, s, y2, s2), stats.roc_auc_test_unpaired(y2, s2, y, s)
    assert ab.statistic == -ba.statistic and ab.p_value == ba.p_value and ab.df == ba.df


@pytest.mark.parametrize("bad, match", [
    (dict(level=1.0), "`level`"), (dict(level="x"), "`level`"), (dict(on_undefined="maybe"), "on_undefined"),
])
def test_unpaired_bad_options(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        stats.roc_auc_test_unpaired([0, 1, 0, 1], [.1, .2, .3, .4], [0, 1, 0, 1], [.1, .2, .3, .4], **bad)


def test_unpaired_one_class_is_undefined():
    with pytest.warns(UserWarning):
        r = stats.roc_auc_test_unpaired([0, 1, 1], [.1, .2, .3], [0, 1, 0, 1], [.1, .2, .3, .4])
    assert math.isnan(r.p_value)


@pytest.mark.parametrize("df", [0.5, 1, 2.5, 10, 37.3, 1000, 1e4])
@pytest.mark.parametrize("t", [0.0, 0.01, 0.5, 1.0, 2.0, 5.0, 30.0, 300.0])
def test_student_t_two_sided_p_against_scipy(t, df):
    want = 2 * sps.t.sf(t, df)
    assert t_two_sided_p(t, df) == pytest.approx(want, rel=1e-9, abs=0)
    assert t_two_sided_p(-t, df) == t_two_sided_p(t, df)


@pytest.mark.parametrize("df", [0.5, 3.3, 12, 19.9, 20, 31.5, 100, 1e3, 1e4, 1e6, 1e8, 1e10, 1e12, 1e15, 1e18])
def test_student_t_two_sided_p_against_40_digits_at_any_df(df):
    """The continued fraction near x = 1 lost df * eps relative (2e-11 at df 1e6, 4e-5 at 1e12: the
    unpaired test's Welch df can be n - 2): within a few ulps of 40-digit arithmetic at every df."""
    import mpmath  # a test dependency: the oracle

    for t in (1e-8, 0.01, 0.5, 1.0, 1.7, 2.0, 3.0, 5.0, 10.0, 20.0, 30.0, 37.0):
        with mpmath.workdps(40):
            x = mpmath.mpf(df) / (df + mpmath.mpf(t) ** 2)
            exact = mpmath.betainc(mpmath.mpf(df) / 2, mpmath.mpf(1) / 2, 0, x, regularized=True)
        if exact < 1e-300:
            continue
        got = t_two_sided_p(t, df)
        assert abs(got - exact) / exact <= 2e-15 * max(1.0, t * t / df if df < 20 else 1.0), (t, got, exact)


@pytest.mark.parametrize("df", [1, 3.3, 40, 5e3])
@pytest.mark.parametrize("q", [0.25, 0.025, 0.0005])
def test_student_t_quantile_against_scipy(q, df):
    assert t_isf(q, df) == pytest.approx(sps.t.isf(q, df), rel=1e-10)
