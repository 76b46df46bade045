"""Every route's cumulative weights within about an ulp of the exact sums (issue 26).

Weights are summed by one compensated cumsum (``precall._core.sort.compensated_cumsum``)
on every route: the in-memory numpy route, the compiled route, the accumulator (batches
merged), the score ranges (precall.dask / precall.spark) and ``by=``.  Each is compared,
on inputs where a plain sequential cumsum drifts by hundreds or thousands of ulps, with the
exact cumulative weights rounded once (``oracles.exact_cumsum``): at every threshold of the
grouped table or at every step.
"""

from __future__ import annotations

import numpy as np
import pytest

import oracles
import precall
from precall._core import backend
from precall._core.steps import Steps, steps_of
from precall._core.validate import check_binary
from precall.scale import ranges as _ranges

N = 100_000
ULPS = 2  # the bound asked of every route (the compensated sum itself: at most 1)


def _weights(kind, n, rng):
    if kind == "tenths":  # a plain cumsum of 1e5 tenths ends 1.3e4 ulps from 10000
        return np.full(n, 0.1)
    if kind == "mixed magnitudes":  # 1e-30 .. 1e30
        return 10.0 ** rng.uniform(-30, 30, n)
    if kind == "three scales":
        return rng.uniform(0.5, 2.0, n) * rng.choice([1.0, 2.0**-30, 2.0**30], n)
    return rng.uniform(0.1, 3.0, n)  # "uniform"


def _case(kind, ties, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.random(N) < 0.3
    s = rng.random(N) + 0.3 * y
    if ties:
        s = np.round(s, 2)  # about 130 distinct scores: long runs of tied rows
        s[:50] = -0.0  # equal to +0.0, in one run
    return y.astype(int), s, _weights(kind, N, rng)


def _exact(y, s, w):
    """The grouped table's thresholds and the exact TP and FP at each, rounded once."""
    order = np.argsort(-s, kind="stable")
    s, y, w = s[order], y[order], w[order]
    ends = np.flatnonzero(np.append(s[1:] != s[:-1], True))
    tp = oracles.exact_cumsum(np.where(y == 1, w, 0.0))[ends]
    fp = oracles.exact_cumsum(np.where(y == 1, 0.0, w))[ends]
    return s[ends], tp, fp


def _ulps(got, exact):
    got, exact = np.asarray(got, dtype=np.float64), np.asarray(exact, dtype=np.float64)
    return np.abs(got - exact) / np.spacing(np.maximum(exact, np.finfo(float).tiny))


def _assert_table_close(table, y, s, w):
    thresholds, tp, fp = _exact(y, s, w)
    np.testing.assert_array_equal(table.thresholds, thresholds)
    assert _ulps(table.tp, tp).max() <= ULPS and _ulps(table.fp, fp).max() <= ULPS
    assert _ulps(table.n_pos, tp[-1]) <= ULPS and _ulps(table.n_neg, fp[-1]) <= ULPS


def _assert_steps_close(steps, y, s, w, totals=True):
    """Steps: TP and FP at each step, FP at the threshold above, the totals."""
    thresholds, tp, fp = _exact(y, s, w)
    at = np.searchsorted(-thresholds, -steps.thresholds)  # decreasing thresholds: the rows of the steps
    np.testing.assert_array_equal(thresholds[at], steps.thresholds)
    assert _ulps(steps.tp[0], tp[at]).max() <= ULPS and _ulps(steps.fp[0], fp[at]).max() <= ULPS
    above = np.where(at > 0, fp[np.maximum(at - 1, 0)], 0.0)
    assert _ulps(steps.fp_prev[0], above).max() <= ULPS
    if totals:
        assert _ulps(steps.n_pos[0], tp[-1]) <= ULPS and _ulps(steps.n_neg[0], fp[-1]) <= ULPS


KINDS = ["tenths", "mixed magnitudes", "three scales", "uniform"]


@pytest.fixture(autouse=True)
def _restore_kernel():
    previous = backend.set_kernel("auto")
    yield
    backend.set_kernel(previous)


def test_a_plain_cumsum_drifts_on_these_inputs():
    """The inputs are ones where the bound can fail: scikit-learn's sequential cumsum, in the
    same order, is hundreds to thousands of ulps from the exact sums."""
    for kind in ("tenths", "three scales", "uniform"):
        y, s, w = _case(kind, ties=False)
        order = np.argsort(-s, kind="stable")
        plain = np.cumsum(np.where(y[order] == 0, w[order], 0.0))
        assert _ulps(plain, _exact(y, s, w)[2]).max() > 20 * ULPS, kind


@pytest.mark.parametrize("kernel", ["numpy", "numba"])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_in_memory_routes(kind, ties, kernel):
    if kernel == "numba":
        pytest.importorskip("numba")
    y, s, w = _case(kind, ties)
    backend.set_kernel(kernel)
    data = check_binary(y, s, w)
    for t in ("group", "stable"):
        steps = steps_of(data, t)
        assert backend.last_kernel() == kernel
        if t == "group":
            _assert_steps_close(steps, y, s, w)
    _assert_table_close(precall.threshold_table(y, s, sample_weight=w), y, s, w)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_accumulator_of_merged_batches(kind, ties):
    _accumulator_case(kind, ties)


def _accumulator_case(kind, ties):
    """Eight accumulators of uneven batches, merged: the table and the steps (per-score sums of
    770 tied rows each with ties: ``score_sums``, then one addition per merge)."""
    y, s, w = _case(kind, ties)
    bounds = [0, 10, 1000, 5000, 20_000, 20_001, 50_000, 77_777, N]
    parts = [precall.Accumulator().update(y[a:b], s[a:b], sample_weight=w[a:b]) for a, b in zip(bounds, bounds[1:])]
    acc = parts[0]
    for other in parts[1:]:
        acc = acc.merge(other)
    _assert_table_close(acc.table(), y, s, w)
    _assert_steps_close(acc._steps(None), y, s, w)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_score_ranges(kind, ties):
    """precall.dask's reduction without dask: partitions cut anywhere, 7 score ranges."""
    y, s, w = _case(kind, ties)
    bounds = [0, 3, 30_000, 30_001, 64_000, N]
    parts = [check_binary(y[a:b], s[a:b], w[a:b], None) for a, b in zip(bounds, bounds[1:])]
    table = _ranges.wire_table(parts, lambda f, **_: f, n_ranges=7)
    _assert_table_close(table, y, s, w)


@pytest.mark.parametrize("kind", ["tenths", "three scales"])
def test_slices(kind):
    """by=: every slice's steps (each slice a segment of one order, summed on its own) and the
    per-slice tables of ``threshold_table(..., by=)``."""
    from precall.slices import sliced_steps

    y, s, w = _case(kind, ties=True)
    group = np.random.default_rng(3).integers(0, 3, N)
    got = sliced_steps(check_binary(y, s, w), group, 3, "group").grouped
    tables = precall.threshold_table(y, s, sample_weight=w, by={"g": group})
    for g in range(3):
        keep = group == g
        mine = got.slice_of == g
        steps = Steps(got.tp[mine][None], got.fp[mine][None], got.dtp[mine][None], got.fp_prev[mine][None],
                      np.array([got.tp[mine][-1]]), np.array([np.inf]), got.thresholds[mine], False, False)
        _assert_steps_close(steps, y[keep], s[keep], w[keep], totals=False)
        _assert_table_close(tables[str(g)], y[keep], s[keep], w[keep])


@pytest.mark.parametrize("kind", ["tenths", "mixed magnitudes", "tiny", "one score"])
def test_score_sums_within_half_an_ulp(kind):
    """The accumulator's per-score sums (a batch's rows grouped by score) against exact sums, where a
    weighted bincount drifts: at most half an ulp (correctly rounded but for ties of the rounding)."""
    from precall.scale.accumulator import score_sums

    rng = np.random.default_rng(8)
    n = 200_000
    inverse = np.zeros(n, dtype=np.int64) if kind == "one score" else rng.integers(0, 40, n)
    x = {"tenths": np.full(n, 0.1), "mixed magnitudes": 10.0 ** rng.uniform(-30, 30, n),
         "tiny": 10.0 ** rng.uniform(-310, -290, n), "one score": rng.uniform(0.1, 3.0, n)}[kind]
    size = int(inverse.max()) + 1
    exact = np.array([oracles.exact_cumsum(x[inverse == b])[-1] for b in range(size)])
    assert _ulps(score_sums(inverse, x, size), exact).max() <= 0.5
    if kind != "mixed magnitudes":  # the test can tell
        assert _ulps(np.bincount(inverse, weights=x, minlength=size), exact).max() > 10
