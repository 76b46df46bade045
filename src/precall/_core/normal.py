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
* :func:`t_two_sided_p` (Student's t, the unpaired DeLong test's Welch df):
  the regularized incomplete beta function, by its continued fraction where
  that converges away from ``x = 1`` (its front's exponent in two doubles), and
  by TOMS 708's asymptotic expansion for a large first parameter where the
  fraction would cancel (``df >= 20``, ``t**2 <= df``): within 2e-15 relative of
  40-digit arithmetic at any ``df`` (the fraction alone lost ``df * eps``).
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


def _gamma_half_series(a: float) -> float:
    """``log(Gamma(a + 1/2) / Gamma(a)) - log(a) / 2`` for ``a >= 20``: its asymptotic series, within
    2e-17 (the next term's coefficient is 0.0029 / a**11)."""
    r = 1.0 / a
    r2 = r * r
    return r * (-1.0 / 8.0 + r2 * (1.0 / 192.0 + r2 * (-1.0 / 640.0 + r2 * (17.0 / 14336.0 - r2 * 31.0 / 18432.0))))


def _log_beta(a: float, b: float) -> float:
    """``log B(a, b)``; for ``b = 1/2`` without the cancellation of ``lgamma(a) - lgamma(a + 1/2)``
    (``2e-13`` at ``a = 500``): the asymptotic series of their difference from ``a = 20`` on, the
    ratio of the gamma functions below."""
    if b == 0.5:
        if a >= 20.0:
            return 0.5 * math.log(math.pi) - 0.5 * math.log(a) - _gamma_half_series(a)
        return math.log(math.gamma(a) / math.gamma(a + 0.5)) + 0.5 * math.log(math.pi)
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


def _two_product(a: float, b: float) -> tuple[float, float]:
    """``a * b`` and its rounding error, exactly (Dekker)."""
    p = a * b
    a_high, a_low = _split(a)
    b_high, b_low = _split(b)
    return p, ((a_high * b_high - p) + a_high * b_low + a_low * b_high) + a_low * b_low


def _two_sum(a: float, b: float) -> tuple[float, float]:
    """``a + b`` and its rounding error, exactly (Knuth)."""
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


def _log_ratio(num: float, num_low: float, den: float, den_low: float) -> tuple[float, float]:
    """``2 atanh(s)``, ``s = (num + num_low) / (den + den_low)`` (``|s| <= 1/3``), in two doubles: ``s``
    to about 2**-100 (Dekker's product of its high part), ``2 s (1 + s**2 / 3 + s**4 / 5 + ...)`` with
    its first two terms in two doubles, the rest (at most 35 terms, ``s**4 / 5 <= 1/405`` of the sum)
    in one."""
    s = num / den
    p, e = _two_product(s, den)
    s_low = ((((num - p) - e) + num_low) - s * den_low) / den
    s2, s2_low = _two_product(s, s)
    third = s2 / 3.0  # the first term of the series, s**2 / 3, in two doubles: its rounding is
    p, e = _two_product(third, 3.0)  # s**2 / 3 of the whole sum (z * eps * s**2 / 3 once exponentiated)
    third_low = (((s2 - p) - e) + s2_low) / 3.0
    series, term, k = 0.0, s2, 2
    while term:
        term *= s2
        series += term / (2 * k + 1)
        if term <= 1e-18 * series:
            break
        k += 1
    p, e = _two_product(2.0 * s, third)
    high, low = _two_sum(2.0 * s, p)
    return _two_sum(high, low + (e + 2.0 * s * (third_low + series) + 2.0 * s_low * (1.0 + third)))


_LN2_HIGH, _LN2_LOW = 0.6931471805599453, 2.3190468138462996e-17  # log(2) in two doubles (60-digit arithmetic)


def _t_log(t: float, df: float) -> tuple[float, float]:
    """``-log(x) = log(1 + t**2 / df)``, ``x = df / (df + t**2)``, as an unevaluated sum ``high + low``
    accurate to about 2**-100 relative: ``t**2`` and ``w = t**2 / df`` exactly enough (Dekker's
    products), ``log(1 + w) = 2 atanh(w / (2 + w))`` for ``w <= 1``; beyond, ``1 + w = m 2**k`` with
    ``m`` in [0.7, 1.4], ``k log(2) + 2 atanh((m - 1) / (m + 1))``."""
    t_high, t_low = _split(t)
    q = t * t
    q_low = ((t_high * t_high - q) + 2.0 * t_high * t_low) + t_low * t_low
    w = q / df
    p, e = _two_product(w, df)
    w_low = (((q - p) - e) + q_low) / df
    if w <= 1.0:
        d, d_low = _two_sum(2.0, w)
        return _log_ratio(w, w_low, d, d_low + w_low)
    u, u_low = _two_sum(1.0, w)
    u_low += w_low
    fraction, k = math.frexp(u)
    if fraction < _SQRT1_2:
        k -= 1
    m, m_low = math.ldexp(u, -k), math.ldexp(u_low, -k)  # exact
    d, d_low = _two_sum(m, 1.0)
    log_m, log_m_low = _log_ratio(m - 1.0, m_low, d, d_low + m_low)  # m - 1 exact (Sterbenz)
    p, e = _two_product(float(k), _LN2_HIGH)
    high, low = _two_sum(p, log_m)
    return _two_sum(high, low + e + k * _LN2_LOW + log_m_low)


def _t_front(t: float, df: float, y: float) -> float:
    """``x**a * y**(1/2) / B(a, 1/2)``, ``a = df / 2``, the front of :func:`_betainc`'s continued
    fraction, its exponent ``a log(x)`` in two doubles (:func:`_t_log`): one rounding of ``x`` or
    ``a log(x)`` costs ``a log(x) * eps`` relative once exponentiated (5e-14 at ``df = 1000``, ``t = 37``)."""
    a = df / 2.0
    log_high, log_low = _t_log(t, df)
    p, e = _two_product(-a, log_high)
    exponent, low = _two_sum(p, (e - a * log_low) + (0.5 * math.log(y) - _log_beta(a, 0.5)))
    return math.exp(exponent) * (1.0 + low)


def _erfc_ratio(x: float) -> float:
    """``sqrt(pi) * x * exp(x**2) * erfc(x)`` for ``x >= 5`` (tends to 1), by the continued fraction
    ``erfc(x) = exp(-x**2) / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...))))``, 60 terms
    evaluated backwards: within an ulp from ``x = 5`` on."""
    f = x
    for k in range(60, 0, -1):
        f = x + (k / 2.0) / f
    return x / f


def _t_tail_large_df(t: float, df: float) -> float:
    """``I_x(df / 2, 1 / 2)``, ``x = df / (df + t**2)``, for ``df >= 20`` and ``t**2 <= df``: Didonato
    and Morris's asymptotic expansion for a large first parameter (TOMS 708's BGRAT, with ``b = 1/2``:
    its incomplete gamma function ``Q(1/2, z) = erfc(sqrt(z))``), ``z = -(a - 1/4) log(x)`` carried in
    two doubles (:func:`_t_z`) so that neither the rounding of ``t**2`` nor that of ``z`` costs the
    ``z * eps`` relative that ``exp(-z)`` would turn it into.  The continued fraction of
    :func:`_betainc` near ``x = 1`` cancels, ``df * eps`` relative (4e-5 at ``df = 1e12``); this
    is within a few ulps of 40-digit arithmetic at any ``df``."""
    a = df / 2.0
    b, bm1 = 0.5, -0.5
    nu, nu_low = _two_sum(a, -0.25)
    log_high, log_low = _t_log(t, df)
    z, e = _two_product(nu, log_high)
    z, z_low = _two_sum(z, e + nu * log_low + nu_low * log_high)
    log_x = -(z + z_low) / nu
    root = math.sqrt(z)
    p, e = _two_product(root, root)
    root_low = (((z - p) - e) + z_low) / (2.0 * root)  # sqrt(z) = root + root_low
    # j = Q(1/2, z) / r, r = exp(-z) z**(1/2) / Gamma(1/2): BGRAT's first term, its ratio taken without underflow
    if root < 5.0:
        q = math.erfc(root) - root_low * _TWO_OVER_SQRTPI * math.exp(-root * root)
        j = q / (math.exp(-z) * (1.0 - z_low) * (root + root_low) / math.sqrt(math.pi))
    else:  # j = g(root + root_low), g(s) = R(s) / s**2 (R: _erfc_ratio), to first order in root_low
        ratio = _erfc_ratio(root)
        j = ratio / z * (1.0 + root_low * (2.0 * root - 2.0 * root / ratio - 1.0 / root))
    v = 0.25 / (nu * nu)
    t2 = 0.25 * log_x * log_x
    total, power, cn, n2 = j, 1.0, 1.0, 0
    c, d = [0.0] * 31, [0.0] * 31
    for n in range(1, 31):
        bp2n = b + n2
        j = (bp2n * (bp2n + 1.0) * j + (z + bp2n + 1.0) * power) * v
        n2 += 2
        power *= t2
        cn /= n2 * (n2 + 1.0)
        c[n] = cn
        s, coef = 0.0, b - n
        for i in range(1, n):
            s += coef * c[i] * d[n - i]
            coef += b
        d[n] = bm1 * cn + s / n
        dj = d[n] * j
        total += dj
        if abs(dj) <= 1e-17 * total:
            break
    # the front r * Gamma(a + b) / (Gamma(a) nu**b), r as above
    gamma_ratio = (math.gamma(a + 0.5) / math.gamma(a) / math.sqrt(nu) if a < 20.0 else
                   math.exp(_gamma_half_series(a) - 0.5 * math.log1p(-0.25 / a)))
    front = math.sqrt(z / math.pi) * (1.0 + z_low / (2.0 * z)) * gamma_ratio * total
    if z < 700.0:
        return math.exp(-z) * (1.0 - z_low) * front
    return math.exp(math.log(front) - z) * (1.0 - z_low)  # subnormal or 0: one rounding


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
    if df > 1e250:  # the normal (within t**4 / df relative; Dekker's products of df would overflow)
        return two_sided_p(t)
    if math.isinf(t):
        return 0.0
    q = t * t
    if df >= 20.0 and 0.0 < q <= df:  # x >= 1/2 and a large first parameter: the continued fraction would cancel
        return min(1.0, _t_tail_large_df(t, df))
    a, x, y = df / 2.0, df / (df + q), q / (df + q)
    if 0.0 < x < (a + 1.0) / (a + 2.5) and y > 0.0 and q < 1e280 * df:  # the fraction of I_x(a, 1/2), its
        # front exactly enough (past t**2 = 1e280 df, where Dekker's products would overflow, the plain front)
        return min(1.0, _t_front(t, df, y) * _beta_fraction(a, 0.5, x, y) / a)
    return min(1.0, _betainc(a, 0.5, x, y))


def t_isf(q: float, df: float) -> float:
    """The ``t > 0`` with ``t_two_sided_p(t, df) = 2 q`` (``0 < q < 1/2``), by bisection."""
    if df > 1e250:
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
