"""The compiled twin of the kernels (``compiled.batch_numbers``) against the numpy kernels, its oracle.

``evaluation.batch_numbers`` gives every number of ``evaluate`` for a batch of steps: the six AP
conventions, the best F1, ROC-AUC and AUPRG.  Both routes must give the same bits for one problem
and for the ragged batches of ``by=``, counts and weights (tiny and huge weight scales, zero
weights), grouped and stable ties, both recall grids, problems without negatives or positives.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import precall
from precall._core import backend
from precall._core.evaluation import batch_numbers
from precall._core.steps import Steps, steps_and_grouped, steps_from_counts
from precall._core.validate import AP_METHODS, check_binary
from precall.slices import _batch, _buckets, sliced_steps

pytest.importorskip("numba")


@pytest.fixture(autouse=True)
def _restore_kernel():
    previous = backend.set_kernel("auto")
    yield
    backend.set_kernel(previous)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """The same values bit for bit (any NaN equals any NaN)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind != "f":
        return bool(np.array_equal(a, b))
    nan = np.isnan(a)
    return bool(np.array_equal(nan, np.isnan(b)) and np.array_equal(a[~nan].view(np.int64), b[~nan].view(np.int64)))


def _compare(s: Steps | None, g: Steps | None, grid: str) -> None:
    backend.set_kernel("numpy")
    want = batch_numbers(s, g, grid)
    backend.set_kernel("numba")
    calls = []
    module = backend.compiled(1)
    original = module.batch_numbers

    def spy(*args):
        calls.append(1)
        return original(*args)

    module.batch_numbers = spy
    try:
        got = batch_numbers(s, g, grid)
    finally:
        module.batch_numbers = original
    assert calls, "the compiled route did not run"
    if s is not None:
        for m in AP_METHODS:
            assert _same(want.average_precision[m], got.average_precision[m]), (m, grid)
        for a, b, name in zip(want.best_f1, got.best_f1, ("k", "f1", "precision", "recall")):
            assert _same(a, b), name
    if g is not None:
        assert _same(want.roc_auc, got.roc_auc), "roc_auc"
        assert _same(want.auprg, got.auprg), "auprg"


def _both_grids(s: Steps | None, g: Steps | None) -> None:
    for grid in ("reference", "exact"):
        _compare(s, g, grid)


def _sliced_batches(y, scores, weight, codes, m, ties):
    """The ragged batches ``evaluate(by=)`` hands to the kernels (steps and grouped steps)."""
    data = check_binary(y, scores, weight)
    sl = sliced_steps(data, codes, m, ties)
    out = []
    for which in ((sl.steps,) if sl.grouped is sl.steps else (sl.steps, sl.grouped)):
        for sel, _, batch in _buckets(which, m):
            out.append(_batch(batch, sl.n_pos[sel], sl.n_neg[sel], sl.exact))
    return out, sl.grouped is sl.steps


def _ragged(problems: list[Steps], exact: bool) -> Steps:
    """A ragged batch of one-problem steps padded as ``slices._buckets`` pads (empty rows: zeros)."""
    m = len(problems)
    lengths = np.array([p.tp.shape[1] for p in problems], dtype=np.int64)
    width = max(1, int(lengths.max()))
    dtype = np.int64 if exact else np.float64
    arrays = [np.zeros((m, width), dtype=dtype) for _ in range(4)]
    for i, p in enumerate(problems):
        n = lengths[i]
        for a, src in zip(arrays, (p.tp, p.fp, p.dtp, p.fp_prev)):
            a[i, :n] = src[0]
        if n:
            arrays[0][i, n:] = p.tp[0, -1]
            arrays[1][i, n:] = p.fp[0, -1]
            arrays[3][i, n:] = p.fp[0, -1]
    n_pos = np.array([float(p.n_pos[0]) for p in problems])
    n_neg = np.array([float(p.n_neg[0]) for p in problems])
    return Steps(*arrays, n_pos, n_neg, None, exact, False, lengths)


problems = st.integers(0, 300).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 12), min_size=n, max_size=n),  # scores with many ties
    st.lists(st.booleans(), min_size=n, max_size=n),
    st.one_of(st.none(), st.tuples(st.lists(st.sampled_from([0.0, 0.1, 0.5, 1.0, 3.0, 7.25]), min_size=n,
                                            max_size=n),
                                   st.sampled_from([1.0, 1e-300, 1e-20, 1e20, 1e300]))),
))


def _input(case):
    values, labels, weight = case
    y = np.array(labels, dtype=bool)
    scores = np.array(values, dtype=np.float64) / 7.0
    w = None if weight is None else np.array(weight[0]) * weight[1]
    if w is not None and not np.any(w > 0):
        w = None
    return y, scores, w


@pytest.mark.filterwarnings("ignore")  # extreme weights overflow some terms, in both routes alike
@settings(max_examples=150, deadline=None)
@given(problems, st.sampled_from(["group", "stable"]))
def test_one_problem(case, ties):
    y, scores, w = _input(case)
    if y.size == 0:
        return
    backend.set_kernel("numpy")
    s, g = steps_and_grouped(check_binary(y, scores, w), ties)
    _both_grids(s, g)
    if g is not s:
        _both_grids(s, None)
        _both_grids(None, g)


@pytest.mark.filterwarnings("ignore")
@settings(max_examples=80, deadline=None)
@given(problems, st.integers(1, 9), st.sampled_from(["group", "stable"]), st.integers(0, 2**31))
def test_sliced_batches(case, m, ties, seed):
    y, scores, w = _input(case)
    if y.size == 0:
        return
    codes = np.random.default_rng(seed).integers(0, m, y.size)
    backend.set_kernel("numpy")
    batches, shared = _sliced_batches(y, scores, w, codes, m, ties)
    for s in batches:
        _both_grids(s, s if shared else None)
        _both_grids(None, s)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ties", ["group", "stable"])
def test_ragged_lengths_across_the_leaves(weighted, ties):
    """Rows of 0, 1, 8, 128, 129, 300, 4000 steps (numpy's pairwise sum cuts at 8 and 128), a row
    without negatives and one without positives, continuous and tied scores."""
    rng = np.random.default_rng(5)
    backend.set_kernel("numpy")
    rows = []
    for k in (0, 1, 8, 128, 129, 300, 4000):
        n = 3 * k + 2
        y = np.zeros(n, dtype=bool)
        y[rng.choice(n, k, replace=False)] = True
        scores = rng.random(n) if k % 2 else np.round(rng.random(n), 2)
        w = rng.uniform(0.0, 2.0, n) if weighted else None
        rows.append(steps_and_grouped(check_binary(y, scores, w), "group")[0])
    rows.append(steps_and_grouped(check_binary(np.ones(50, dtype=bool), rng.random(50),
                                               rng.random(50) + 0.1 if weighted else None), "group")[0])
    rows.append(steps_and_grouped(check_binary(np.zeros(50, dtype=bool), rng.random(50),
                                               rng.random(50) + 0.1 if weighted else None), "group")[0])
    if weighted:
        rows = [r if not r.exact else Steps(*(a.astype(np.float64) for a in (r.tp, r.fp, r.dtp, r.fp_prev)),
                                            r.n_pos, r.n_neg, r.thresholds, False, True) for r in rows]
    batch = _ragged(rows, exact=not weighted)
    _both_grids(batch, batch)
    _both_grids(batch, None)
    for one in rows:  # each alone: the m == 1 routes
        _both_grids(one, one)
    big = np.arange(2000) % 2 == 0
    codes = np.random.default_rng(1).integers(0, 40, 2000)
    batches, shared = _sliced_batches(big, rng.random(2000), rng.random(2000) if weighted else None, codes, 40,
                                      ties)
    for s in batches:
        _both_grids(s, s if shared else None)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("prevalence", [0.01, 0.3, 0.5, 0.9])
def test_long_rows_walked_leaf_by_leaf(prevalence):
    """Thousands of steps: leaves with no grid point are walked in passes (the envelopes, the best F1,
    voc2010's and AUPRG's places filled by segments), chunks whose steps add no negative take the
    Davis & Goadrich area without a division.  Distinct scores (every chunk without negatives),
    tied ones (none), a mix (some), positives never found (voc2010's (1, 0) term: its leaves no
    longer those of the steps), and the same rows as a ragged batch and as full rows."""
    rng = np.random.default_rng(17)
    n = 300_000  # most leaves hold no grid point (101 of them against thousands of leaves)
    y = rng.random(n) < prevalence
    informative = rng.standard_normal(n) + 1.5 * y  # the best F1 inside the curve, not at its end
    mixed = informative.copy()
    mixed[: n // 2] = np.round(mixed[: n // 2], 2)
    rows = []
    for scores in (informative, np.round(informative, 2), mixed):
        s, _ = steps_and_grouped(check_binary(y, scores), "group")
        assert s.exact and s.tp.shape[1] > 256
        _both_grids(s, s)
        missed = Steps(s.tp, s.fp, s.dtp, s.fp_prev, s.n_pos + 7, s.n_neg, s.thresholds, True, True)
        _both_grids(missed, missed)
        rows.append(s)
    batch = _ragged(rows, exact=True)
    _both_grids(batch, batch)
    width = 3_000  # full rows with empty runs: voc2010's zero widths keep their places
    pos = (rng.random((4, width)) < prevalence).astype(np.int64) * rng.integers(0, 3, (4, width))
    full = steps_from_counts(pos, 1 - np.minimum(pos, 1))
    _both_grids(full, full)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("exact", [True, False])
def test_batches_of_full_rows(exact):
    """Batches without ``lengths`` (bootstrap-like: empty runs inside rows)."""
    rng = np.random.default_rng(3)
    pos = rng.integers(0, 3, (7, 300))
    neg = rng.integers(0, 3, (7, 300))
    if not exact:
        pos, neg = pos * rng.random((7, 300)), neg * rng.random((7, 300))
    s = steps_from_counts(pos, neg)
    _both_grids(s, s)


def test_short_and_long_rows_of_the_exact_grid():
    """``_grid_indices`` compares short rows of a batch on scaled int64 counts, long rows by search."""
    rng = np.random.default_rng(11)
    for width in (20, 255, 256):
        pos = rng.integers(0, 2, (5, width))
        s = steps_from_counts(pos, 1 - pos)
        _both_grids(s, s)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_evaluate_and_by_are_the_same_bits(dtype):
    rng = np.random.default_rng(2)
    n = 20_000
    y = rng.random(n) < 0.3
    s = rng.random(n).astype(dtype)
    g = rng.integers(0, 30, n)
    for weight in (None, rng.random(n)):
        for ties in ("group", "stable"):
            for grid in ("reference", "exact"):
                backend.set_kernel("numpy")
                a = precall.evaluate(y, s, sample_weight=weight, ties=ties, recall_grid=grid, by=g)
                backend.set_kernel("numba")
                b = precall.evaluate(y, s, sample_weight=weight, ties=ties, recall_grid=grid, by=g)
                assert repr(a.to_dict()) == repr(b.to_dict())
                assert repr(a.overall.to_dict()) == repr(b.overall.to_dict())


def test_the_pass_reads_no_unwritten_memory():
    """Integer counts keep ROC-AUC's area as an integer (``roc_int``): the float slot of the weighted
    area is the sum of no value, 0.0, not what the buffer held (it once varied from call to call)."""
    from precall._core.evaluation import _compiled_pass

    rng = np.random.default_rng(5)
    fast = backend.compiled(10**9)
    for n in (10, 5_000, 60_000):
        y = rng.random(n) < 0.4
        s, _ = steps_and_grouped(check_binary(y, rng.random(n)), "group")
        outs = [_compiled_pass(fast, s, True, True, "reference") for _ in range(3)]
        for sums, points07, points101, best, twice in outs:
            assert sums[0, 4] == 0.0 and twice is not None and twice.dtype == np.int64
            for a, b in zip((sums, points07, points101, best, twice), outs[0]):
                assert _same(a, b)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_grid_averages_of_few_rows_and_many_agree(m, seed):
    """``grid_average`` sums a few rows' VOC 2007 points as Python floats and many as numpy columns:
    the same bits (Detectron's ``sum(p) / 11`` order, its 1 + 2**-52 included), and COCO's mean is
    ``np.mean``'s."""
    from precall._core.conventions import grid_average

    rng = np.random.default_rng(seed)
    points = rng.random((m, 11))
    points[rng.random(m) < 0.3] = 1.0  # eleven precisions of 1.0: Detectron's sum is 1 + 2**-52
    rows = np.concatenate([grid_average(points[i:i + 1], "voc2007", "reference") for i in range(m)])
    wide = np.tile(points, (9, 1))  # more than eight rows: the column loop
    assert _same(grid_average(wide, "voc2007", "reference"), np.tile(rows, 9))
    coco = rng.random((m, 101))
    assert _same(grid_average(coco, "coco", "reference"), np.mean(coco, axis=1))
