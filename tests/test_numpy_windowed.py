"""``evaluate``'s steps never held as arrays on the numpy route (``steps.split_steps`` /
``evaluation._split_pass``: issue 27's memory without the compiled kernel) against the numpy kernels
on the steps' arrays, its oracle: the same bits.

The route sorts the positives' and the negatives' scores apart (in the scores' own memory with
``overwrite_y_score``) and makes the steps again a node of numpy's pairwise summation tree at a time,
so that each node's ``np.sum`` is the whole array's.  Here it is forced at every size, with small
nodes and checkpoint blocks so that every boundary is crossed, and compared number by number with
the array route.  Also here: the tree itself against ``np.sum``, the in-place split, and float16
scores (numpy's own sort of float16 misorders ties on AVX-512 machines).
"""

from __future__ import annotations

import contextlib
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import precall
from precall._core import backend, conventions, evaluation, sort, steps
from precall._core.validate import check_binary

from test_compiled import _bits

DTYPES = [np.float64, np.float32, np.float16, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32]


@pytest.fixture(autouse=True)
def _numpy_kernel():
    previous = backend.set_kernel("numpy")
    yield
    backend.set_kernel(previous)


@contextlib.contextmanager
def _route(windowed: bool, leaf: int = 128, rows: int = 7, by_leaves: bool = False):
    """The split route forced on (or off), with leaves of ``leaf`` steps and checkpoints ``rows`` apart,
    counting its runs; ``by_leaves``: the steps' arrays taken a node at a time from any length
    (``evaluation.BY_LEAVES``), else whole (the oracle)."""
    runs = []
    real = evaluation._split_pass

    def spy(ss, grid):
        runs.append(ss.length)
        return real(ss, grid)

    with mock.patch.object(steps, "windowed", lambda *a: windowed), \
            mock.patch.object(evaluation, "_split_pass", spy), \
            mock.patch.object(evaluation, "BY_LEAVES", 1 if by_leaves else 1 << 62), \
            mock.patch.object(evaluation, "LEAF_STEPS", leaf), mock.patch.object(steps, "SPLIT_ROWS", rows):
        yield runs


def scores_with_ties(rng, n, dtype, distinct):
    """Scores with runs of ties, of both signs where the dtype has them, and the dtype's extremes."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        distinct = min(distinct, n)
        pool = rng.standard_normal(max(distinct, 4)) * 4.0
        info = np.finfo(dtype)
        pool[:4] = [float(info.max), -float(info.max), float(info.tiny), 0.0]
        values = pool[:distinct][rng.integers(0, distinct, n)]
        wide = rng.random(n) < 0.3
        values[wide] = rng.standard_normal(int(wide.sum()))
        return values.astype(dtype)
    info = np.iinfo(dtype)
    values = rng.integers(max(int(info.min), -(distinct // 2)), min(int(info.max), distinct // 2) + 1, n)
    values[rng.random(n) < 0.01] = int(info.max)
    return values.astype(dtype)


def _check(y, s, leaf=128, rows=7, **kw):
    with _route(False) as runs:
        want = precall.evaluate(y, s, on_undefined="nan", **kw)
    assert not runs
    with _route(True, leaf, rows) as runs:
        got = precall.evaluate(y, s, on_undefined="nan", **kw)
        lent = s.copy()
        overwritten = precall.evaluate(y, lent, on_undefined="nan", overwrite_y_score=True, **kw)
    assert len(runs) == 2, "the split route did not run"
    assert _bits(got) == _bits(want)
    assert _bits(overwritten) == _bits(want)
    with _route(False, leaf, rows, by_leaves=True) as runs:  # the arrays a node at a time
        by_leaves = precall.evaluate(y, s, on_undefined="nan", **kw)
    assert _bits(by_leaves) == _bits(want)
    assert np.array_equal(np.sort(lent.astype(np.float64)), np.sort(s.astype(np.float64)))  # the same values


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n, distinct, prevalence", [(3_000, 7, 0.5), (40_000, 25_000, 0.5), (60_000, 60, 0.3),
                                                     (50_000, 45_000, 0.02), (50_000, 200, 0.97)])
@pytest.mark.parametrize("recall_grid", ["reference", "exact"])
def test_the_split_route_gives_the_same_bits(dtype, n, distinct, prevalence, recall_grid):
    rng = np.random.default_rng(n + distinct)
    s = scores_with_ties(rng, n, dtype, distinct)
    y = rng.random(n) < prevalence
    y[:2] = [True, False]
    _check(y, s, recall_grid=recall_grid)


@pytest.mark.parametrize("leaf, rows", [(128, 1), (136, 2), (1000, 64), (1 << 16, 1 << 16)])
def test_leaves_and_checkpoints_of_any_size(leaf, rows):
    rng = np.random.default_rng(leaf + rows)
    n = 30_000
    s = np.round(rng.standard_normal(n), 2)  # about 800 distinct scores, long runs
    y = rng.random(n) < 0.4
    _check(y, s, leaf, rows)
    _check(y, rng.standard_normal(n).astype(np.float32), leaf, rows)


def long_runs(n: int, seed: int = 7):
    """Inputs with one score shared by a third of the ``n`` rows (of either class or both) before, inside
    and after the distinct ones; the first row alone positive (TP + FP = 1: COCO's eps), the last negative."""
    rng = np.random.default_rng(seed)
    for where in (0.0, 0.5, 1.0, -0.5):
        s = rng.standard_normal(n)
        s[: n // 3] = where
        for labels in ("mixed", "positive", "negative"):
            y = rng.random(n) < 0.5
            tied = s == where
            y[tied] = {"mixed": y[tied], "positive": True, "negative": False}[labels]
            y[np.argmax(s)] = True
            y[np.argmin(s)] = False
            yield y, s


def test_a_run_longer_than_a_leaf_and_a_block_at_every_place():
    for y, s in long_runs(20_000):
        _check(y, s)


@pytest.mark.parametrize("n_pos, n_neg", [(6_000, 6_000), (9_000, 3_000), (4_000, 12_000)])
def test_a_step_exactly_at_recall_gain_zero(n_pos, n_neg):
    """AUPRG's sum starts at the first step with TP >= P^2 / (P + N), here a whole number and a step's TP."""
    rng = np.random.default_rng(n_pos)
    y = rng.permutation(np.r_[np.ones(n_pos, bool), np.zeros(n_neg, bool)])
    s = rng.permutation(n_pos + n_neg).astype(np.float64)
    assert float(n_pos) * (n_pos / (n_pos + n_neg)) == int(n_pos * n_pos / (n_pos + n_neg))
    _check(y, s)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16])
def test_every_row_positive_or_one_positive(dtype):
    rng = np.random.default_rng(3)
    n = 5_000
    s = scores_with_ties(rng, n, dtype, 300)
    _check(np.ones(n, bool), s)
    y = np.zeros(n, bool)
    y[rng.integers(n)] = True
    _check(y, s)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3_000), st.integers(1, 60), st.floats(0.01, 0.99), st.sampled_from([128, 136, 512]),
       st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_random_inputs(n, distinct, prevalence, leaf, rows, seed):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, distinct, n).astype(np.float64) / distinct
    y = rng.random(n) < prevalence
    y[0] = True
    _check(y, s, leaf, rows)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5_000), st.integers(1, 50), st.integers(1, 30), st.integers(0, 2**32 - 1))
def test_any_range_of_steps_is_the_arrays_slice(n, distinct, rows, seed):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, distinct, n).astype(np.float32)
    y = rng.random(n) < 0.5
    y[0] = True
    data = check_binary(y, s, None, None)
    whole = steps.steps_from_sorted(*sort.sorted_split(data))
    with mock.patch.object(steps, "windowed", lambda *a: True), mock.patch.object(steps, "SPLIT_ROWS", rows):
        split = steps.split_steps(check_binary(y, s.copy(), None, None), "group")
        m = split.length
        assert m == whole.tp.shape[1]
        p, q = float(whole.n_pos[0]), float(whole.n_neg[0])
        assert split.below == int(np.sum(whole.tp[0] < p * (p / (p + q))))
        for a, b in [(0, m), (0, 1), (m - 1, m), *sorted(rng.integers(0, m + 1, (5, 2)).tolist())]:
            a, b = min(a, b), max(a, b)
            part = split.steps(a, b)
            for name in ("tp", "dtp", "fp", "fp_prev", "thresholds"):
                got, want = getattr(part, name), getattr(whole, name)
                want = want[a:b] if name == "thresholds" else want[0, a:b]
                assert np.array_equal(got.ravel(), want), name


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 40_000), st.sampled_from([128, 129, 200, 1024, 4096]), st.integers(0, 2**32 - 1))
def test_the_tree_of_nodes_sums_as_numpy(n, limit, seed):
    """numpy's pairwise summation (halves cut at a multiple of 8, blocks of 128 values): the sums of the
    nodes of at most ``limit`` values, added up the tree, are ``np.sum`` bit for bit."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 10.0 ** rng.uniform(-8, 8, n)
    leaves = steps.tree_leaves(n, limit)
    assert sum(k for _, k in leaves) == n and all(k <= limit for _, k in leaves)
    assert [a for a, _ in leaves] == np.cumsum([0] + [k for _, k in leaves])[:-1].tolist()
    total = steps.tree_total(n, limit, {a: np.sum(x[a:a + k]) for a, k in leaves})
    assert total == np.sum(x)


def test_the_tree_is_not_a_sum_in_order():
    """The check above can fail: a sum of the same nodes left to right is another rounding."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(100_000) * 10.0 ** rng.uniform(-8, 8, 100_000)
    leaves = steps.tree_leaves(x.size, 128)
    in_order = 0.0
    for a, k in leaves:
        in_order += np.sum(x[a:a + k])
    assert in_order != np.sum(x)


@pytest.mark.parametrize("n_pos", [1, 200, 65_536, 65_537, 300_001])
@pytest.mark.parametrize("n_neg", [0.0, 3.0, 1e9])
def test_worst_precision_sums_by_nodes(n_pos, n_neg):
    """Boyd's worst ranking's precision sum, its terms made a node of the tree at a time beyond 2**16
    positives: ``np.sum`` of the array of all its terms, bit for bit."""
    terms = np.arange(1, n_pos + 1, dtype=np.int64).astype(np.float64)
    terms /= terms + n_neg
    got = conventions.worst_precision_sums(np.array([float(n_pos), 5.0]), np.array([n_neg, 2.0]))
    assert got[0] == np.sum(terms)
    assert got[1] == np.sum(np.arange(1, 6) / np.arange(3, 8))  # a short pair beside it: all its terms at once


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32, np.uint8])
@pytest.mark.parametrize("prevalence", [0.0, 0.01, 0.5, 1.0])
def test_the_split_in_place_is_the_copies(dtype, prevalence):
    rng = np.random.default_rng(int(prevalence * 100))
    n = 200_003
    s = scores_with_ties(rng, n, dtype, 1_000)
    y = rng.random(n) < prevalence
    want = sort.sorted_split(check_binary(y, s, None, None))
    lent = s.copy()
    got = sort.sorted_split(check_binary(y, lent, None, None), overwrite=True)
    for a, b in zip(got, want):
        assert np.array_equal(a, b) and a.dtype == b.dtype
    assert np.shares_memory(got[0], lent) or got[0].size == 0
    assert np.array_equal(np.sort(lent.astype(np.float64)), np.sort(s.astype(np.float64)))


def test_both_zeros_among_the_positives_are_not_split_in_place():
    """A run of 0.0 and -0.0 positives: its threshold is the zero ``np.sort`` puts first, which depends on
    the order the sort is given; the copies are sorted then, and the scores left as they were."""
    rng = np.random.default_rng(1)
    n = 100_000
    s = rng.standard_normal(n)
    s[:10] = 0.0
    s[10:20] = -0.0
    y = rng.random(n) < 0.5
    y[:20] = True
    lent = s.copy()
    sort.sorted_split(check_binary(y, lent, None, None), overwrite=True)
    assert np.array_equal(lent, s) and np.array_equal(np.signbit(lent), np.signbit(s))
    y[:10] = False  # one sign of zero among the positives: in place
    sort.sorted_split(check_binary(y, lent, None, None), overwrite=True)
    assert not np.array_equal(lent, s)


def test_float16_scores_are_sorted():
    """numpy 2.4's ``np.sort`` of float16 (x86-simd-sort without AVX-512 FP16) leaves runs of ties out
    of order past a few thousand values: every number came out wrong on the numpy route."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    rng = np.random.default_rng(5)
    n = 60_000
    s = rng.integers(-30, 30, n).astype(np.float16)
    y = rng.random(n) < 0.3
    assert np.all(np.diff(sort.sorted_scores(s).astype(np.float64)) >= 0)
    a = s.copy()
    sort.sort_scores(a)
    assert np.array_equal(a, sort.sorted_scores(s))
    wide = s.astype(np.float32)
    assert precall.average_precision(y, s) == average_precision_score(y, wide)
    assert precall.roc_auc(y, s) == precall.roc_auc(y, wide) == pytest.approx(roc_auc_score(y, wide), rel=1e-15)
    assert _bits(precall.evaluate(y, s)) == _bits(precall.evaluate(y, wide))
    table, wide_table = precall.threshold_table(y, s), precall.threshold_table(y, wide)
    assert np.array_equal(table.tp, wide_table.tp) and np.array_equal(table.fp, wide_table.fp)
    assert np.array_equal(table.thresholds.astype(np.float32), wide_table.thresholds)


def test_the_route_is_taken_without_the_compiled_kernel():
    """From ``steps.WINDOWED_MIN`` positives, when their arrays would pass half the scores' bytes."""
    rng = np.random.default_rng(2)
    n = 3 * steps.WINDOWED_MIN
    s = rng.random(n)
    y = rng.random(n) < 0.5
    runs = []
    real = evaluation._split_pass
    with mock.patch.object(evaluation, "_split_pass", lambda ss, g: runs.append(type(ss)) or real(ss, g)):
        got = precall.evaluate(y, s)
        assert runs == [steps.SplitSteps]
        with mock.patch.object(steps, "windowed", lambda *a: False):
            by_leaves = precall.evaluate(y, s)  # the arrays, a node at a time (more than BY_LEAVES steps)
            assert runs[1:] == [evaluation._ArraySteps]
            with mock.patch.object(evaluation, "BY_LEAVES", 1 << 62):
                want = precall.evaluate(y, s)
    assert _bits(got) == _bits(want) == _bits(by_leaves)
    runs.clear()
    with mock.patch.object(evaluation, "_split_pass", lambda ss, g: runs.append(type(ss)) or real(ss, g)):
        precall.evaluate(y, s, sample_weight=np.ones(n))
        precall.evaluate(y, s, ties="stable")
        precall.evaluate(y, s, prevalence=0.3)
    assert steps.SplitSteps not in runs  # the arrays (stable ties of distinct scores: a node at a time)


@pytest.mark.parametrize("positives", [0.5, 0.1])
def test_step_arrays_below_twice_a_leaf_take_half_leaves(positives):
    """The numpy route's step arrays of ``BY_LEAVES`` to ``2 * LEAF_STEPS`` steps: leaves of half
    ``LEAF_STEPS`` (``_leaf_steps``), the bits of the arrays whole."""
    rng = np.random.default_rng(11)
    n = 90_000
    y = rng.random(n) < positives
    s = np.round(rng.random(n), 5)  # ties too
    limits = []
    real = steps.tree_leaves
    with mock.patch.object(evaluation, "tree_leaves", lambda m, limit: limits.append((m, limit)) or real(m, limit)):
        got = precall.evaluate(y, s)
        with mock.patch.object(evaluation, "BY_LEAVES", 1 << 62):
            want = precall.evaluate(y, s)
    m = int(np.unique(s[y]).size)
    assert evaluation.BY_LEAVES <= m < 2 * evaluation.LEAF_STEPS
    assert limits[0] == (m, evaluation.LEAF_STEPS // 2) and len(real(m, evaluation.LEAF_STEPS // 2)) == (
        2 if m > evaluation.LEAF_STEPS // 2 else 1)
    assert _bits(got) == _bits(want)


def test_the_first_of_equal_best_f1s_in_two_leaves():
    """F1 = 2 TP / (TP + FP + P) is the same at (t, 0) and at (2t, P): t positives, P negatives, t
    positives, 4t negatives, t positives (P = 3t).  The first of the two is the best-F1 point, as
    ``argmax`` gives it on the arrays, though the leaves are made from the last."""
    t = 300
    y = np.r_[np.ones(t, bool), np.zeros(3 * t, bool), np.ones(t, bool), np.zeros(4 * t, bool), np.ones(t, bool)]
    s = np.arange(y.size, 0, -1).astype(np.float64)
    first = precall.evaluate(y, s).best_f1
    assert first.threshold == s[t - 1] and first.recall == pytest.approx(1 / 3)
    _check(y, s)
