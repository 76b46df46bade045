"""The standard normal distribution, accurate far into both tails: the one place
every p-value, interval bound and BCa percentile of precall is computed.

* :func:`cdf` / :func:`sf`: ``erfc`` of the far side, never ``1 - erf`` (which
  cancels to 0 past z = -8.3: ``statistics.NormalDist().cdf(-9)`` is 0, the true
  value 1.13e-19), as scipy's ``ndtr``.  ``z / sqrt(2)`` is rounded, which alone
  would cost ``z**2 * eps`` relative in the tail (1e-13 at ``|z| = 37``, scipy's
  error); its rounding error ``r`` is computed exactly (Dekker's product) and
  corrected by the first-order term ``erfc(x + r) = erfc(x) - r * 2 / sqrt(pi) *
  exp(-x**2)``, so the tails are within a few units in the last place (checked
  against 50-digit arithmetic in the tests).
* :func:`two_sided_p`: ``erfc(|z| / sqrt(2))`` (``= 2 * sf(|z|)`` exactly).
  Below the smallest double it is what scipy gives: subnormal past ``|z| =
  37.5`` (fewer significant digits), and 0 past ``|z| = 38.6``; :func:`p_text`
  prints that 0 as ``< 1e-323`` (the smallest double is 4.9e-324).
* :func:`ppf` / :func:`isf`: Wichura's AS241 (``statistics.NormalDist.inv_cdf``),
  within 8e-16 relative of scipy's ``ndtri`` for p from 1e-300 to 1 - 1e-15.
  An upper tail is passed as its own small probability to :func:`isf`
  (``isf(1e-20)``), since ``1 - 1e-20`` is 1 in floating point.
"""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["cdf", "isf", "p_text", "ppf", "sf", "two_sided_p"]

_STANDARD = NormalDist()
_SQRT1_2 = math.sqrt(0.5)
_SQRT1_2_LOW = -4.833646656726457e-17  # 1/sqrt(2) - _SQRT1_2, from 60-digit arithmetic
_TWO_OVER_SQRTPI = 2.0 / math.sqrt(math.pi)
_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's split of a double into two 26-bit halves


def _split(a: float) -> tuple[float, float]:
    t = _SPLIT * a
    high = t - (t - a)
    return high, a - high


_C_HIGH, _C_LOW = _split(_SQRT1_2)


def _erfc_of_z(z: float) -> float:
    """``erfc(z / sqrt(2))`` for ``z >= 0``, with the rounding of ``z / sqrt(2)`` corrected."""
    x = z * _SQRT1_2
    if z >= 40.0:  # erfc is 0 in floating point from x = 27.3 (z = 38.6) on
        return math.erfc(x)
    z_high, z_low = _split(z)
    # z * (_SQRT1_2 + _SQRT1_2_LOW) - x, exactly enough: Dekker's error of the product, then the low part
    residual = ((z_high * _C_HIGH - x) + z_high * _C_LOW + z_low * _C_HIGH) + z_low * _C_LOW
    residual += z * _SQRT1_2_LOW
    return math.erfc(x) - residual * _TWO_OVER_SQRTPI * math.exp(-x * x)


def cdf(z: float) -> float:
    """``P(Z <= z)``, accurate in both tails (scipy's ``ndtr`` formula).

    Examples
    --------
    >>> f"{cdf(-9):.6e}", cdf(0.0)
    ('1.128588e-19', 0.5)
    """
    x = float(z) * _SQRT1_2
    if math.isnan(x):
        return math.nan
    if abs(x) < _SQRT1_2:
        return 0.5 + 0.5 * math.erf(x)
    tail = 0.5 * _erfc_of_z(abs(float(z)))
    return 1.0 - tail if x > 0 else tail


def sf(z: float) -> float:
    """``P(Z > z) = cdf(-z)``, accurate for large ``z``.

    Examples
    --------
    >>> f"{sf(14.3):.4e}"
    '1.0940e-46'
    """
    return cdf(-float(z))


def two_sided_p(z: float) -> float:
    """``P(|Z| >= |z|) = erfc(|z| / sqrt(2))``; NaN for NaN.

    Examples
    --------
    >>> f"{two_sided_p(9):.4e}", two_sided_p(0.0), f"{two_sided_p(-38):.3e}"
    ('2.2572e-19', 1.0, '5.771e-316')
    """
    z = float(z)
    if math.isnan(z):
        return math.nan
    return _erfc_of_z(abs(z))


def ppf(p: float) -> float:
    """The z with ``cdf(z) = p``: ``-inf`` at 0, ``inf`` at 1, NaN for NaN.

    Raises ``ValueError`` outside [0, 1].

    Examples
    --------
    >>> f"{ppf(0.025):.12f}", f"{ppf(1e-300):.10f}"
    ('-1.959963984540', '-37.0470962994')
    """
    p = float(p)
    if math.isnan(p):
        return math.nan
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"a probability must be in [0, 1]; got {p!r}")
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    return _STANDARD.inv_cdf(p)


def isf(q: float) -> float:
    """The z with ``sf(z) = q`` (``-ppf(q)``): an upper quantile from its small tail
    probability, so ``isf(1e-20)`` is 9.26 where ``ppf(1 - 1e-20)`` would be ``inf``.

    Examples
    --------
    >>> f"{isf(0.025):.12f}", f"{isf(1e-20):.6f}"
    ('1.959963984540', '9.262340')
    """
    return -ppf(q)


def p_text(p: float | None, digits: int = 3) -> str:
    """A p-value as text: ``digits`` significant digits, scientific below 0.001,
    ``< 1e-323`` for 0 (below the smallest double: ``|z| > 38.6``), ``nan``.

    Examples
    --------
    >>> p_text(0.04321), p_text(2.257e-19), p_text(0.0)
    ('0.0432', '2.26e-19', '< 1e-323')
    """
    if p is None or math.isnan(p):
        return "nan"
    if p <= 0:
        return "< 1e-323"
    if p < 1e-3:
        return f"{p:.{digits - 1}e}"
    return f"{p:.{digits}g}"


# ---------------------------------------------------------------------------
# Student's t (the unpaired DeLong test's Welch-Satterthwaite degrees of freedom)
def _beta_fraction(a: float, b: float, x: float, y: float) -> float:
    """The continued fraction of the regularized incomplete beta function (modified Lentz),
    ``y = 1 - x`` given apart so that it keeps its digits."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for k in range(1, 100_000):
        k2 = 2 * k
        for aa in (k * (b - k) * x / ((a - 1.0 + k2) * (a + k2)),
                   -(a + k) * (a + b + k) * x / ((a + k2) * (a + 1.0 + k2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return h


def _log_beta(a: float, b: float) -> float:
    """``log B(a, b)``; for ``b = 1/2`` and a large ``a`` without the cancellation of
    ``lgamma(a + 1/2) - lgamma(a)`` (the asymptotic series of their difference)."""
    if b == 0.5 and a > 1e3:
        r = 1.0 / a
        diff = 0.5 * math.log(a) - r / 8.0 + r**3 / 192.0 + r**5 / 640.0 - 17.0 * r**7 / 14336.0
        return math.lgamma(0.5) - diff
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _betainc(a: float, b: float, x: float, y: float) -> float:
    """``I_x(a, b)``, the regularized incomplete beta function (``y = 1 - x``)."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_x = math.log1p(-y) if y < 0.5 else math.log(x)
    log_y = math.log1p(-x) if x < 0.5 else math.log(y)
    log_front = a * log_x + b * log_y - _log_beta(a, b)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x, y) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, y, x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """``P(|T| >= |t|)`` for Student's t with ``df`` degrees of freedom (any real ``df > 0``):
    ``I_{df / (df + t^2)}(df / 2, 1 / 2)``; NaN for NaN.  R's ``2 * pt(-abs(t), df)``.

    Examples
    --------
    >>> round(t_two_sided_p(2.0, 10), 10), t_two_sided_p(0.0, 3.5)
    (0.0733880348, 1.0)
    """
    t, df = abs(float(t)), float(df)
    if math.isnan(t) or math.isnan(df) or df <= 0:
        return math.nan
    if math.isinf(df):
        return two_sided_p(t)
    if math.isinf(t):
        return 0.0
    q = t * t
    return min(1.0, _betainc(df / 2.0, 0.5, df / (df + q), q / (df + q)))


def t_isf(q: float, df: float) -> float:
    """The ``t > 0`` with ``t_two_sided_p(t, df) = 2 q`` (``0 < q < 1/2``), by bisection."""
    if math.isinf(df):
        return isf(q)
    lo, hi = 0.0, 1.0
    while t_two_sided_p(hi, df) > 2.0 * q:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_two_sided_p(mid, df) > 2.0 * q:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    return (lo + hi) / 2.0
