"""The normal distribution behind every p-value, interval bound and BCa percentile
(``precall._core.normal``), checked far into the tails against 50-digit arithmetic
(``oracles.normal_sf_exact``), scipy (``norm.sf`` / ``cdf`` / ``ppf`` / ``isf``,
``log_ndtr`` where scipy's ``ndtr`` flushes subnormals to 0), and through the
public statistics: DeLong's paired test up to |z| = 40, DeLong's intervals at
levels up to 1 - 1e-15, BCa with an extreme bias correction."""

from __future__ import annotations

import math
from decimal import Decimal
from statistics import NormalDist

import numpy as np
import pytest
from scipy.special import log_ndtr
from scipy.stats import norm

from oracles import normal_cdf_exact, normal_sf_exact
from precall import stats
from precall._core import normal
from precall.stats.bootstrap import _interval

SMALLEST_NORMAL = 2.2250738585072014e-308
Z_GRID = sorted({*np.round(np.arange(-40.0, 40.01, 0.37), 6).tolist(), 0.0, 1.0, -1.0, 8.3, -8.3, 9.0, 14.3,
                 37.5, 38.0, 38.5, 38.6, 40.0, 1e-300, -1e-300, math.sqrt(2), 0.7071067811865476})
P_GRID = sorted({*(10.0 ** -np.arange(0.5, 300.1, 2.3)).tolist(), *np.linspace(0.01, 0.99, 15).tolist(),
                 1e-300, 5e-324, 1e-310, 0.5, 0.975, 1 - 1e-15, 1 - 2**-53})


def _relative(got: float, exact: Decimal) -> float:
    return float(abs(Decimal(got) - exact) / exact) if exact else abs(got)


def _scipy_two_sided(z: float) -> float:
    """scipy's two-sided p; through ``log_ndtr`` where ``ndtr`` flushes subnormals to 0."""
    p = 2 * norm.sf(abs(z))
    return p if p >= SMALLEST_NORMAL else float(np.exp(math.log(2) + log_ndtr(-abs(z))))


def _close(got: float, want: float, rel: float) -> bool:
    """Within ``rel`` relative, or (subnormal results: fewer bits) a few units of the smallest double."""
    return math.isclose(got, want, rel_tol=rel, abs_tol=8 * math.ulp(0.0)) or (
        want < SMALLEST_NORMAL and abs(got - want) <= max(want, got) * 2.0 ** -40 + 8 * math.ulp(0.0))


# ---------------------------------------------------------------- the tails, class by class
@pytest.mark.parametrize("z", Z_GRID)
def test_cdf_sf_and_two_sided_p_against_50_digits(z):
    exact_sf = normal_sf_exact(z)
    exact_cdf = normal_cdf_exact(z)
    for got, exact in ((normal.sf(z), exact_sf), (normal.cdf(z), exact_cdf), (normal.two_sided_p(z),
                                                                                2 * min(exact_sf, exact_cdf))):
        if exact >= Decimal(SMALLEST_NORMAL):
            assert _relative(got, exact) < 2e-15, (z, got, exact)
        else:  # subnormal: the double nearest to the value, give or take its resolution
            assert abs(Decimal(got) - exact) <= Decimal(math.ulp(0.0)), (z, got, exact)


@pytest.mark.parametrize("z", Z_GRID)
def test_cdf_sf_and_two_sided_p_against_scipy(z):
    assert _close(normal.cdf(z), float(norm.cdf(z)), 1e-12) or norm.cdf(z) < SMALLEST_NORMAL
    assert _close(normal.sf(z), float(norm.sf(z)), 1e-12) or norm.sf(z) < SMALLEST_NORMAL
    assert _close(normal.two_sided_p(z), _scipy_two_sided(z), 1e-12)


def test_the_standard_library_cdf_this_replaces_underflows():
    """Why: ``NormalDist().cdf`` is ``(1 + erf(x)) / 2``, which cancels in the lower tail."""
    assert NormalDist().cdf(-9) == 0.0 and normal.cdf(-9) == pytest.approx(float(norm.cdf(-9)), rel=1e-14)
    assert abs(2 * NormalDist().cdf(-8) / float(2 * norm.sf(8)) - 1) > 1e-3  # the old p-value, 2% off at z = 8


@pytest.mark.parametrize("z", [38.7, 39.0, 40.0, 1e3, math.inf])
def test_p_below_the_smallest_double_is_zero_and_printed_as_such(z):
    assert normal.two_sided_p(z) == 0.0 == normal.two_sided_p(-z) == normal.sf(z) == normal.cdf(-z)
    assert normal.p_text(normal.two_sided_p(z)) == "< 1e-323"


@pytest.mark.parametrize("p", P_GRID)
def test_ppf_and_isf_against_scipy(p):
    assert normal.ppf(p) == pytest.approx(float(norm.ppf(p)), rel=2e-15, abs=0)
    assert normal.isf(p) == pytest.approx(float(norm.isf(p)), rel=2e-15, abs=0)


@pytest.mark.parametrize("p", [1e-300, 1e-200, 1e-100, 1e-20, 1e-8, 0.025, 0.3])
def test_ppf_against_50_digits(p):
    """The implied error of the quantile: (cdf_exact(z) - p) / pdf(z), relative to z."""
    z = normal.ppf(p)
    pdf = Decimal(math.exp(-z * z / 2) / math.sqrt(2 * math.pi))
    assert abs(float((normal_cdf_exact(z) - Decimal(p)) / pdf / Decimal(z))) < 2e-15


@pytest.mark.parametrize(("p", "want"), [(0.0, -math.inf), (1.0, math.inf), (math.nan, math.nan)])
def test_ppf_at_the_ends(p, want):
    assert normal.ppf(p) == want or (math.isnan(want) and math.isnan(normal.ppf(p)))


@pytest.mark.parametrize("p", [-1e-300, 1.0000000000000002, -1.0, math.inf])
def test_ppf_outside_zero_one_is_refused(p):
    with pytest.raises(ValueError, match="must be in \\[0, 1\\]"):
        normal.ppf(p)


def test_nan_in_nan_out():
    assert all(math.isnan(f(math.nan)) for f in (normal.cdf, normal.sf, normal.two_sided_p, normal.isf))
    assert normal.p_text(math.nan) == "nan" and normal.p_text(None) == "nan"


# ---------------------------------------------------------------- through the public statistics
def _paired(n: int, noise: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(int)
    base = rng.normal(size=n) + 1.5 * y
    return y, base + 0.1 * rng.normal(size=n), base + noise * rng.normal(size=n)


# (n, noise of model B): DeLong's |z| from about 1.5 to 54 (p down to the subnormals, then 0)
PAIRED = [(200, 0.3), (300, 0.4), (400, 0.5), (1000, 1.0), (1500, 1.0), (2000, 1.5), (4000, 2.0), (5000, 2.5),
          (8000, 3.0), (9000, 3.0), (9500, 3.0), (20000, 3.0)]


@pytest.mark.parametrize(("n", "noise"), PAIRED)
def test_delong_paired_p_values_against_scipy(n, noise):
    y, a, b = _paired(n, noise)
    t = stats.roc_auc_test(y, a, b)
    assert _close(t.p_value, _scipy_two_sided(t.statistic), 1e-12), (t.statistic, t.p_value)
    swapped = stats.roc_auc_test(y, b, a)
    assert swapped.statistic == -t.statistic and swapped.p_value == t.p_value


def test_delong_paired_grid_reaches_the_far_tail():
    """The grid above covers |z| from 1 to past 40 (so it tests what it claims)."""
    zs = [abs(stats.roc_auc_test(*_paired(n, c)).statistic) for n, c in PAIRED]
    assert min(zs) < 2 and max(zs) > 40 and sum(8.3 < z < 38.6 for z in zs) >= 5


@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99, 0.999, 1 - 1e-9, 1 - 1e-12, 1 - 1e-15])
def test_delong_interval_bounds_against_scipy(level):
    y, a, b = _paired(400, 0.5)
    ci = stats.roc_auc_ci(y, b, level=level)
    z = float(norm.isf((1 - level) / 2))
    assert ci.low == pytest.approx(max(ci.estimate - z * ci.standard_error, 0.0), rel=1e-14)
    assert ci.high == pytest.approx(min(ci.estimate + z * ci.standard_error, 1.0), rel=1e-14)
    t = stats.roc_auc_test(y, a, b, level=level)
    assert (t.high - t.difference) / t.standard_error == pytest.approx(z, rel=1e-13)
    assert (t.difference - t.low) / t.standard_error == pytest.approx(z, rel=1e-13)


def _bca_reference(replicates, estimate, jackknife, level):
    """BCa as scipy.stats.bootstrap writes it (ndtri / ndtr), with the adjusted z taken to the
    end of the distribution once ``1 - a * num`` reaches 0."""
    share = (np.count_nonzero(replicates < estimate) + np.count_nonzero(replicates <= estimate)) / (2 * replicates.size)
    z0 = float(norm.ppf(share))
    d = jackknife.mean() - jackknife
    a = float(np.sum(d ** 3) / (6 * np.sum(d ** 2) ** 1.5))
    out = []
    for z in (norm.ppf((1 - level) / 2), norm.isf((1 - level) / 2)):
        num = z0 + z
        out.append(float(norm.cdf(z0 + num / (1 - a * num))) if 1 - a * num > 0 else float(num > 0))
    return np.quantile(replicates, out), z0, a


@pytest.mark.parametrize(("below", "skew", "level"), [
    (1, 0.0, 0.95), (1, 3.0, 0.95), (3, -2.0, 0.95), (1999, 0.5, 0.95), (1000, 0.0, 0.95), (1, 40.0, 0.99),
    (1999, -40.0, 0.99), (1, 40.0, 0.999), (1999, -40.0, 0.999), (1, -40.0, 0.999), (2, 40.0, 1 - 1e-9)])
def test_bca_with_an_extreme_bias_correction(below, skew, level):
    """Only ``below`` of 2000 replicates under the estimate (z0 = -3.3), or above it; a
    skewed jackknife (a = -0.15) makes ``1 - a * num`` reach 0 at level 0.999."""
    rng = np.random.default_rng(1)
    replicates = np.sort(rng.normal(size=2000))
    estimate = float((replicates[below - 1] + replicates[below]) / 2)
    jackknife = rng.normal(size=50) + skew * (np.arange(50) == 0)
    low, high, z0, a = _interval(estimate, replicates, jackknife, level, "bca")
    (want_low, want_high), want_z0, want_a = _bca_reference(replicates, estimate, jackknife, level)
    assert z0 == pytest.approx(want_z0, rel=1e-14) and a == pytest.approx(want_a, rel=1e-12)
    assert low == pytest.approx(want_low, rel=1e-12, abs=1e-15)
    assert high == pytest.approx(want_high, rel=1e-12, abs=1e-15)
    assert low <= high


def test_bca_past_the_pole_takes_the_end_of_the_replicates():
    """Past ``num = 1 / a`` the adjusted z of BCa's formula turns back (the lower bound became
    the largest replicate before); it is the end of the replicates on the side of ``num``."""
    rng = np.random.default_rng(1)
    replicates = np.sort(rng.normal(size=2000))
    jackknife = rng.normal(size=50) + 40.0 * (np.arange(50) == 0)
    estimate = float((replicates[0] + replicates[1]) / 2)
    low, high, z0, a = _interval(estimate, replicates, jackknife, 0.999, "bca")
    num = z0 + float(norm.ppf(0.0005))
    assert 1 - a * num < 0  # the case this test is about
    assert float(norm.cdf(z0 + num / (1 - a * num))) > 0.99  # what the formula alone gives: the top
    assert low == replicates.min() and low < high
