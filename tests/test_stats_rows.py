"""The row bootstrap counted from row multiplicities, and multi-class intervals over score blocks.

The same row draws as ``resample="rows"`` always had: a block of replicates is
held as each row's multiplicity, and a column's per-run counts are segment sums
of those rows (numpy, or numba's compiled loop with ``set_kernel``: the same integers).  Multi-class
``resample="auto"`` counts each class column over score blocks when its runs
exceed the budget, and shifts the replicates onto the exact estimate: on the
same draws its replicates must track the exact row bootstrap's.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import precall
from precall import stats
from precall._core import backend
from precall.stats import _resample, _segments

METRICS = ([functools.partial(precall.average_precision, method=m, average="macro") for m in precall.AP_METHODS]
           + [functools.partial(precall.roc_auc, average="macro")])


@pytest.fixture
def kernel():
    """Set the kernel choice for one test (``kernel("numba")``), restored after."""
    previous = backend.get_kernel()
    yield backend.set_kernel
    backend.set_kernel(previous)


def _multiclass(n: int, k: int, seed: int = 0, decimals: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), y] += 1.0
    scores = np.exp(logits)
    scores /= scores.sum(axis=1, keepdims=True)
    return y, scores if decimals is None else np.round(scores, decimals)


@pytest.mark.parametrize("dtype", [np.uint8, np.int64])
def test_compiled_segment_sums_equal_numpy(dtype, kernel):
    pytest.importorskip("numba")
    kernel("numba")
    assert _segments.passes(1) is not None
    rng = np.random.default_rng(0)
    for n, m, groups in [(1, 1, 1), (50, 3, 7), (3000, 64, 40), (1000, 130, 1000)]:
        counts = rng.integers(0, 4, (n, m)).astype(dtype)
        order = rng.permutation(n)
        bounds = np.unique(np.r_[0, rng.integers(1, n + 1, groups - 1), n]) if n > 1 else np.array([0, 1])
        expected = np.array([counts[order[a:b]].sum(axis=0) for a, b in zip(bounds[:-1], bounds[1:])])
        np.testing.assert_array_equal(_segments.segment_sums_numpy(counts, order, bounds), expected)
        np.testing.assert_array_equal(_segments.segment_sums(counts, order, bounds), expected)


@pytest.mark.parametrize("ties", ["group", "stable"])
@pytest.mark.parametrize("stratified", [True, False])
@pytest.mark.parametrize("loop", ["compiled", "numpy"])
def test_multiplicities_count_what_the_bincount_of_drawn_rows_counts(ties, stratified, loop, kernel):
    if loop == "compiled":
        pytest.importorskip("numba")
    kernel("numba" if loop == "compiled" else "numpy")
    y, scores = _multiclass(700, 3, decimals=2)
    strata = [np.flatnonzero(y == c) for c in range(3)] if stratified else None
    cols = [_resample.rank_column(scores[:, c], y == c, ties) for c in range(3)]
    segments = [_resample.column_segments(c, strata) for c in cols]
    rng = np.random.default_rng(1)
    held = _resample.Multiplicities(700, 37, strata)
    assert held.capacity == 37
    for draws in _resample.draw_blocks(rng, 700, 37, strata):
        for i in range(draws.m):
            held.add(draws, i)
        for col, got in zip(cols, held.all_steps(segments)):
            want = _resample.resample_steps(col, draws, None)
            np.testing.assert_array_equal(got.dtp, want.dtp)
            np.testing.assert_array_equal(got.fp, want.fp)
            np.testing.assert_array_equal(got.n_neg, want.n_neg)
        held.clear()


@pytest.mark.parametrize("loop", ["compiled", "numpy"])
def test_multiplicities_past_255_draws_of_one_row(loop, kernel):
    if loop == "compiled":
        pytest.importorskip("numba")
    kernel("numba" if loop == "compiled" else "numpy")
    col = _resample.rank_column(np.array([0.9, 0.1, 0.5]), np.array([True, False, False]), "group")
    draws = _resample.Draws([_resample._ALL], [np.zeros((1, 300), dtype=np.int64)])  # row 0, 300 times
    held = _resample.Multiplicities(3, 1, None)
    held.add(draws, 0)
    (steps,) = held.all_steps([_resample.column_segments(col, None)])
    assert int(steps.dtp.sum()) == 300 and int(steps.n_neg[0]) == 0


def test_rows_replicates_are_the_metric_on_the_drawn_rows():
    # brute force: the same generator's draws (stratum after stratum), the metric on the rows
    y, scores = _multiclass(300, 3, decimals=2)
    metric = functools.partial(precall.average_precision, method="voc2007", average="macro")
    got = stats.bootstrap_ci(metric, y, scores, n_resamples=30, random_state=5, resample="rows")
    rng = np.random.default_rng(5)
    strata = [np.flatnonzero(y == c) for c in range(3)]
    local = [rng.integers(0, s.shape[0], (30, s.shape[0])) for s in strata]
    for i in range(30):
        rows = np.sort(np.concatenate([s[loc[i]] for s, loc in zip(strata, local)]))
        assert got.replicates[i] == pytest.approx(metric(y[rows], scores[rows]), abs=1e-12)


def test_numpy_fallback_gives_the_same_intervals(kernel):
    pytest.importorskip("numba")
    y, scores = _multiclass(30000, 3)
    kernel("numba")
    compiled = stats.bootstrap_cis(METRICS, y, scores, n_resamples=300)
    kernel("numpy")
    fallback = stats.bootstrap_cis(METRICS, y, scores, n_resamples=300)
    assert compiled[0].n_blocks is not None
    for a, b in zip(compiled, fallback):
        np.testing.assert_array_equal(a.replicates, b.replicates)
        assert (a.low, a.high) == (b.low, b.high)


def test_multiclass_auto_fits_exactly_when_the_runs_fit():
    y, scores = _multiclass(600, 4, decimals=3)
    auto = stats.bootstrap_cis(METRICS, y, scores, n_resamples=200)
    rows = stats.bootstrap_cis(METRICS, y, scores, n_resamples=200, resample="rows")
    for a, r in zip(auto, rows):
        assert a.resample == "rows" and a.n_blocks is None
        np.testing.assert_array_equal(a.replicates, r.replicates)


@pytest.mark.parametrize("seed", [0, 1])
def test_multiclass_blocks_track_the_exact_row_bootstrap(seed):
    # the same draws: each blocked replicate is the exact one up to the blocking
    y, scores = _multiclass(30000, 3, seed=seed)
    exact = stats.bootstrap_cis(METRICS, y, scores, n_resamples=1000, resample="rows")
    blocked = stats.bootstrap_cis(METRICS, y, scores, n_resamples=1000, resample="auto", max_cells=256)
    for e, b in zip(exact, blocked):
        assert b.resample == "rows" and b.n_blocks is not None and b.n_blocks <= 2048
        assert b.estimate == e.estimate
        assert abs(b.standard_error / e.standard_error - 1) < 0.03, b.metric
        assert np.corrcoef(b.replicates, e.replicates)[0, 1] > 0.97, b.metric
        width = e.high - e.low
        assert abs(b.low - e.low) < 0.1 * width and abs(b.high - e.high) < 0.1 * width, b.metric
    assert "rows counted over" in str(blocked[0])


def test_multiclass_blocked_bca_and_paired():
    y, scores = _multiclass(30000, 3, seed=2)
    other = np.roll(scores, 1, axis=1) * 0.2 + scores * 0.8
    (bca,) = stats.bootstrap_cis(METRICS[:1], y, scores, n_resamples=300, method="bca", max_cells=256)
    assert bca.n_blocks is not None and bca.low < bca.estimate < bca.high
    (test,) = stats.bootstrap_tests(METRICS[-1:], y, scores, other, n_resamples=300, max_cells=256)
    exact = stats.bootstrap_test(METRICS[-1], y, scores, other, n_resamples=300, resample="rows")
    assert test.n_blocks is not None and test.difference == exact.difference
    assert abs(test.standard_error / exact.standard_error - 1) < 0.05
