"""``evaluate``'s steps held as the sorted keys (``steps.key_steps``: no array of the steps' size,
issue 27's memory) against the numpy route, its oracle: the same bits.

The compiled pass writes each chunk of steps again from the sorted label-tagged keys, walked from
checkpoints a block of rows apart (``compiled.key_checkpoints`` / ``key_window``).  Here that route
is forced at every size and compared, number by number and bit by bit, with the numpy kernels and
with the compiled route that holds the steps as arrays: random scores with ties (runs longer than a
checkpoint block and than a chunk of steps), both signs, the extremes of each dtype, both recall
grids, ``overwrite_y_score``; and the rule that decides when the route is taken.
"""

from __future__ import annotations

import contextlib
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import precall
from precall._core import backend, evaluation, steps

pytest.importorskip("numba")

from test_compiled import _bits, _restore_kernel  # noqa: E402, F401  (the kernel put back after each test)
from test_numpy_windowed import long_runs, scores_with_ties  # noqa: E402

DTYPES = [np.float64, np.float32, np.float16, np.int8, np.int16, np.int32, np.uint8, np.uint32]


@contextlib.contextmanager
def _route(windowed: bool):
    """The compiled kernel with the keys' route forced on (or off), counting its runs."""
    runs = []
    real = evaluation._windowed_pass

    def spy(fast, ks, grid):
        runs.append(ks.length)
        return real(fast, ks, grid)

    previous = backend.set_kernel("numba")
    try:
        with mock.patch.object(steps, "windowed", lambda *a: windowed), \
                mock.patch.object(evaluation, "_windowed_pass", spy):
            yield runs
    finally:
        backend.set_kernel(previous)


def _numpy(func):
    previous = backend.set_kernel("numpy")
    try:
        return func()
    finally:
        backend.set_kernel(previous)


def _check(y, s, **kw):
    want = _numpy(lambda: precall.evaluate(y, s, on_undefined="nan", **kw))
    with _route(True) as runs:
        got = precall.evaluate(y, s, on_undefined="nan", **kw)
    assert runs, "the keys' route did not run"
    assert _bits(got) == _bits(want)
    with _route(False) as runs:
        arrays = precall.evaluate(y, s, on_undefined="nan", **kw)
    assert not runs
    assert _bits(arrays) == _bits(want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n, distinct, prevalence", [(3_000, 7, 0.5), (40_000, 25_000, 0.5), (60_000, 60, 0.3),
                                                     (120_000, 100_000, 0.02), (120_000, 200, 0.97)])
@pytest.mark.parametrize("recall_grid", ["reference", "exact"])
def test_the_keys_route_gives_the_same_bits(dtype, n, distinct, prevalence, recall_grid):
    rng = np.random.default_rng(n + distinct)
    s = scores_with_ties(rng, n, dtype, distinct)
    y = rng.random(n) < prevalence
    y[:2] = [True, False]
    _check(y, s, recall_grid=recall_grid)


def test_a_run_longer_than_a_chunk_and_a_block_at_every_place():
    """A score shared by thousands of rows of either class or both, at every place of the order."""
    for y, s in long_runs(30_000):
        _check(y, s)
        _check(y, s.astype(np.float32))


@pytest.mark.parametrize("n_pos, n_neg", [(6_000, 6_000), (9_000, 3_000), (4_000, 12_000)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16])
def test_a_step_exactly_at_recall_gain_zero(n_pos, n_neg, dtype):
    """AUPRG starts at TP = P^2 / (P + N); with these counts that is a whole number, the TP of a step
    (every positive is one): the first step from it on is found by ``>=``, as numpy's ``searchsorted``."""
    rng = np.random.default_rng(n_pos)
    y = rng.permutation(np.r_[np.ones(n_pos, bool), np.zeros(n_neg, bool)])
    s = (rng.permutation(n_pos + n_neg).astype(dtype) if dtype == np.int16
         else scores_with_ties(rng, y.size, dtype, 10**9))
    assert float(n_pos) * (n_pos / (n_pos + n_neg)) == int(n_pos * n_pos / (n_pos + n_neg))
    _check(y, s)


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 3_000).flatmap(lambda n: st.tuples(
    st.sampled_from(DTYPES), st.integers(1, 2 * n), st.floats(0.0, 1.0), st.integers(0, 2**32 - 1),
    st.just(n))))
def test_random_inputs(case):
    dtype, distinct, prevalence, seed, n = case
    rng = np.random.default_rng(seed)
    s = scores_with_ties(rng, n, dtype, distinct)
    y = rng.random(n) < prevalence
    if not y.any():
        y[0] = True
    want = _numpy(lambda: precall.evaluate(y, s, on_undefined="nan"))
    with _route(True) as runs:
        got = precall.evaluate(y, s, on_undefined="nan")
    assert runs
    assert _bits(got) == _bits(want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_overwrite_y_score_puts_the_scores_back(dtype):
    rng = np.random.default_rng(3)
    s = ((rng.standard_normal(50_000) * 3).round(2) + 0.0).astype(dtype)  # no -0.0
    y = rng.random(s.size) < 0.4
    want = _numpy(lambda: precall.evaluate(y, s))
    mine = s.copy()
    with _route(True) as runs:
        got = precall.evaluate(y, mine, overwrite_y_score=True)
    assert runs
    assert _bits(got) == _bits(want)
    assert np.array_equal(np.sort(mine)[::-1], np.sort(s)[::-1])  # the same scores, in some order


def test_which_inputs_take_the_keys_route(monkeypatch):
    """From WINDOWED_MIN positives, when the steps' arrays would take more than half the scores'
    bytes; never with weights, stable ties or a prevalence (those steps are arrays)."""
    assert not steps.windowed(steps.WINDOWED_MIN - 1, 2 * steps.WINDOWED_MIN, 4)
    assert steps.windowed(steps.WINDOWED_MIN, 2 * steps.WINDOWED_MIN, 4)
    n = 2 * steps.STEP_BYTES * steps.WINDOWED_MIN // 8  # float64: half the scores' bytes at WINDOWED_MIN
    assert not steps.windowed(steps.WINDOWED_MIN, n, 8)
    assert steps.windowed(steps.WINDOWED_MIN, n - 1, 8)
    rng = np.random.default_rng(0)
    s = rng.standard_normal(5_000)
    y = rng.random(s.size) < 0.5
    for kw in ({"sample_weight": np.ones(s.size)}, {"ties": "stable"}, {"prevalence": 0.1}):
        with _route(True) as runs:
            precall.evaluate(y, s, **kw)
        assert not runs, kw


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16])
def test_every_row_positive_or_one_positive(dtype):
    """No negative (ROC-AUC and AUPRG undefined, P/N infinite) and a single positive (one step)."""
    rng = np.random.default_rng(11)
    s = (rng.standard_normal(5_000) * 100).astype(dtype)
    _check(np.ones(s.size, bool), s)
    y = np.zeros(s.size, bool)
    y[17] = True
    _check(y, s)
