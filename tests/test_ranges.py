"""The range-partitioned algorithm (precall._ranges), run without dask: any cut of
the rows into partitions and of the scores into ranges gives the in-memory
evaluation (heavy ties across partitions and range boundaries, weights, both
recall grids)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import oracles
import precall
from precall.scale import ranges as _ranges
from precall._core.validate import check_binary


def _now(f, **_):  # "delayed" that runs at once
    return f


def run_ranges(y, s, w, cuts, n_ranges, recall_grid="reference"):
    bounds = [0, *cuts, len(y)]
    parts = [check_binary(y[a:b], s[a:b], None if w is None else w[a:b], None)
             for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    (ev,) = _ranges.wire(parts, _now, n_ranges=n_ranges, recall_grid=recall_grid)
    return _ranges.with_policy(ev, "nan")


rows = st.lists(st.tuples(st.booleans(), st.integers(-4, 8), st.integers(1, 4)), min_size=1, max_size=80)


@given(rows, st.lists(st.integers(0, 80), max_size=4), st.integers(1, 9), st.booleans(),
       st.sampled_from(["reference", "exact"]))
def test_ranges_equal_in_memory(data, cuts, n_ranges, weighted, grid):
    y = np.array([r[0] for r in data], dtype=int)
    s = np.array([r[1] / 4 for r in data])
    w = np.array([r[2] / 3 + 0.1 for r in data]) if weighted else None  # sums that round
    cuts = sorted({c % (len(y) + 1) for c in cuts})
    got = run_ranges(y, s, w, cuts, n_ranges, grid)
    expected = precall.evaluate(y, s, sample_weight=w, recall_grid=grid, on_undefined="nan")
    for m in precall.AP_METHODS:
        assert got.average_precision[m] == pytest.approx(expected.average_precision[m], rel=1e-12, abs=1e-15,
                                                         nan_ok=True), m
    assert got.roc_auc == pytest.approx(expected.roc_auc, rel=1e-12, nan_ok=True)
    assert got.auprg == pytest.approx(expected.auprg, rel=1e-12, abs=1e-12, nan_ok=True)
    for m in precall.AP_METHODS:
        for field in ("min_average_precision", "normalized_average_precision"):
            assert getattr(got, field)[m] == pytest.approx(getattr(expected, field)[m], rel=1e-12, abs=1e-15,
                                                           nan_ok=True), (field, m)
    if not weighted:
        assert got.roc_auc == expected.roc_auc or np.isnan(expected.roc_auc)  # integer sums
    assert got.n_pos == pytest.approx(expected.n_pos) and got.n_neg == pytest.approx(expected.n_neg)
    if expected.best_f1 is None:
        assert got.best_f1 is None
    else:
        assert got.best_f1.threshold == expected.best_f1.threshold
        assert got.best_f1.f1 == pytest.approx(expected.best_f1.f1, rel=1e-12)


def test_continuous_scores_many_ranges(rng):
    n = 20_000
    y = (rng.random(n) < 0.05).astype(int)
    s = rng.normal(size=n) + y
    for cuts, n_ranges in (([], 64), (list(range(1000, n, 1000)), 16)):
        got = run_ranges(y, s, None, cuts, n_ranges)
        expected = precall.evaluate(y, s)
        for m in precall.AP_METHODS:
            assert got.average_precision[m] == pytest.approx(expected.average_precision[m], rel=1e-12)
        assert got.roc_auc == expected.roc_auc


def test_boundaries_keep_equal_scores_together():
    samples = [(np.array([0.0, 0.0, 0.0, 1.0]), 10.0), (np.array([0.0, 2.0]), 5.0)]
    cuts = _ranges.boundaries(samples, 8)
    assert np.all(np.diff(cuts) > 0)  # distinct: fewer ranges than asked when scores tie
    assert cuts.size <= 7
    for weights in (None, [1.0, 2.0, 0.5, 1.0]):
        data = check_binary([0, 1, 1, 0, 0], [0.0, 0.0, 2.0, 1.0, 2.0], None if weights is None else
                            [*weights, 3.0], None)
        pieces = _ranges.split(data, cuts)
        scores = [np.concatenate(p) if isinstance(p, tuple) else p.scores for p in pieces]
        assert sum(x.size for x in scores) == 5
        for value in (0.0, 1.0, 2.0):  # every score in exactly one range, ranges in increasing order
            assert sum(value in x for x in scores) == 1
        highs = [x.max() for x in scores if x.size]
        lows = [x.min() for x in scores if x.size]
        assert all(h < lo for h, lo in zip(highs, lows[1:]))
        local = [_ranges.totals(_ranges.local_steps([p])) for p in pieces]
        prefix, grand = _ranges.offsets(local)
        assert grand == ((2, 3) if weights is None else (2.5, 5.0))
        assert prefix[-1] == (0, 0) and prefix[0] == (grand[0] - local[0][0], grand[1] - local[0][1])


@given(rows, st.lists(st.integers(0, 80), max_size=4), st.integers(1, 9), st.booleans())
def test_range_tables_concatenate_to_the_in_memory_table(data, cuts, n_ranges, weighted):
    y = np.array([r[0] for r in data], dtype=int)
    s = np.array([r[1] / 4 for r in data])
    w = np.array([r[2] / 3 + 0.1 for r in data]) if weighted else None  # sums that round
    bounds = [0, *sorted({c % (len(y) + 1) for c in cuts}), len(y)]
    parts = [check_binary(y[a:b], s[a:b], None if w is None else w[a:b], None)
             for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    table = _ranges.wire_table(parts, _now, n_ranges=n_ranges)
    expected = precall.threshold_table(y, s, sample_weight=w)
    oracles.assert_tables_equal(table, expected, exact=not weighted)
